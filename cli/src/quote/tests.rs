//! Tests of Go-style quoting.

use super::{go_quote, go_quote_list};

#[test]
fn quotes_as_go_does() {
    let cases: &[(&[u8], &str)] = &[
        (b"ten", r#""ten""#),
        (b"", r#""""#),
        (br#"say "hi""#, r#""say \"hi\"""#),
        (b"a\\b", r#""a\\b""#),
        (b"line\nbreak\ttab\r", r#""line\nbreak\ttab\r""#),
        (b"\x07\x08\x0b\x0c", r#""\a\b\v\f""#),
        (b"\x00\x1b\x7f", r#""\x00\x1b\x7f""#),
        (b"\xff", r#""\xff""#),
        (b"a\xe2\x82b", r#""a\xe2\x82b""#),
        ("é ü €".as_bytes(), "\"é ü €\""),
        ("\u{a0}".as_bytes(), r#""\u00a0""#),
        ("\u{200b}".as_bytes(), r#""\u200b""#),
        ("e\u{301}".as_bytes(), "\"e\u{301}\""),
        ("😀".as_bytes(), "\"😀\""),
        ("\u{e0001}".as_bytes(), r#""\U000e0001""#),
        (b"$HOME `x` 'y'", r#""$HOME `x` 'y'""#),
    ];
    for (input, expected) in cases {
        assert_eq!(go_quote(input), *expected, "{input:?}");
    }
}

#[test]
fn quotes_a_list_as_go_does() {
    assert_eq!(go_quote_list([b"a".as_slice(), b"b c".as_slice()]), r#"["a" "b c"]"#);
    assert_eq!(go_quote_list(std::iter::empty()), "[]");
}
