//! The quoting rule: what stays bare, and that every quoted word reads back as itself in `sh`.

use super::{shell_word, single_quoted};

#[test]
fn single_quoted_always_quotes_and_escapes_quotes() {
    assert_eq!(single_quoted("plain"), "'plain'");
    assert_eq!(single_quoted(""), "''");
    assert_eq!(single_quoted("it's"), r"'it'\''s'");
    assert_eq!(single_quoted("$HOME `x` \\"), r"'$HOME `x` \'");
}

#[test]
fn shell_word_leaves_plain_words_bare() {
    assert_eq!(shell_word("plain-word_1.0/x:y@z%+=,"), "plain-word_1.0/x:y@z%+=,");
    assert_eq!(shell_word("[]"), "[]");
    assert_eq!(shell_word(""), "''");
    assert_eq!(shell_word(r#"{"topic":"canvas"}"#), r#"'{"topic":"canvas"}'"#);
    assert_eq!(shell_word("it's"), r"'it'\''s'");
    for special in ["a b", "a*", "a?", "~", "a;b", "a|b", "a&b", "$x", "a\nb", "é"] {
        assert_eq!(shell_word(special), single_quoted(special), "{special:?}");
    }
}
