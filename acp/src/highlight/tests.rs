//! Tests of the code lexer: the four classes, strings with escapes, comments across lines.

use super::{Open, language, line};
use crate::style::{Span, Style};

fn spans(info: &str, lines: &[&str]) -> Vec<Vec<Span>> {
    let language = language(info).unwrap();
    let mut open = Open::Nothing;
    lines.iter().map(|text| line(language, text, &mut open)).collect()
}

#[test]
fn keywords_strings_comments_and_numbers_are_marked() {
    let rows = spans("rust", &["let s = \"a \\\" b\"; // done 42", "fn f() -> u8 { 42 }"]);
    assert_eq!(
        rows[0],
        vec![
            Span::new(Style::CodeKeyword, "let"),
            Span::plain(" s = "),
            Span::new(Style::CodeString, "\"a \\\" b\""),
            Span::plain("; "),
            Span::new(Style::CodeComment, "// done 42"),
        ]
    );
    assert!(rows[1].contains(&Span::new(Style::CodeNumber, "42")));
    assert!(rows[1].contains(&Span::new(Style::CodeKeyword, "fn")));
    // The text is kept exactly.
    let joined: String = rows[0].iter().map(|span| span.text.as_str()).collect();
    assert_eq!(joined, "let s = \"a \\\" b\"; // done 42");
}

#[test]
fn block_comments_and_long_strings_carry_to_the_next_line() {
    let rows = spans("c", &["int x; /* start", "still */ return 0;"]);
    assert_eq!(rows[0].last(), Some(&Span::new(Style::CodeComment, "/* start")));
    assert_eq!(rows[1][0], Span::new(Style::CodeComment, "still */"));
    assert!(rows[1].contains(&Span::new(Style::CodeKeyword, "return")));
    let rows = spans("py", &["x = \"\"\"doc", "more\"\"\" if True else None"]);
    assert_eq!(rows[1][0], Span::new(Style::CodeString, "more\"\"\""));
    assert!(rows[1].contains(&Span::new(Style::CodeNumber, "True")));
}

#[test]
fn languages_are_known_by_their_common_names_only() {
    for name in [
        "rust",
        "rs",
        "Python",
        "ts",
        "tsx",
        "bash",
        "sh",
        "go",
        "cpp",
        "java",
        "json",
        "yaml",
        "sql",
        "js {.line-numbers}",
    ] {
        assert!(language(name).is_some(), "{name}");
    }
    for name in ["", "text", "brainfuck", "diff"] {
        assert!(language(name).is_none(), "{name}");
    }
}
