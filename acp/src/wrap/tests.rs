//! Tests of the word wrap: breaks at spaces, hanging indents, long words, styles kept.

use super::{hanging_indent, wrap, wrap_chars, wrap_line};
use crate::style::{Row, Span, Style};

fn text(rows: &[Row]) -> Vec<String> {
    rows.iter().map(|row| row.iter().map(|span| span.text.as_str()).collect()).collect()
}

#[test]
fn words_break_at_spaces_and_continuation_rows_take_the_prefix() {
    let spans = [Span::plain("the quick brown fox jumps over the lazy dog")];
    let rows = wrap(&spans, 16, &[Span::plain("• ")], &[Span::plain("  ")]);
    assert_eq!(text(&rows), ["• the quick", "  brown fox", "  jumps over the", "  lazy dog"]);
    // Never wider than the row, and no word cut.
    assert!(text(&rows).iter().all(|row| row.chars().count() <= 16));
}

#[test]
fn a_word_wider_than_a_row_is_broken_where_the_row_ends() {
    let rows = wrap(&[Span::plain("see abcdefghijklmnop end")], 8, &[], &[]);
    assert_eq!(text(&rows), ["see", "abcdefgh", "ijklmnop", "end"]);
}

#[test]
fn styles_survive_the_break_and_wide_characters_count_two_columns() {
    let spans = [Span::plain("aa "), Span::new(Style::Strong, "bold words"), Span::plain(" z")];
    let rows = wrap(&spans, 8, &[], &[]);
    assert_eq!(
        rows,
        vec![
            vec![Span::plain("aa "), Span::new(Style::Strong, "bold")],
            vec![Span::new(Style::Strong, "words"), Span::plain(" z")],
        ]
    );
    assert_eq!(text(&wrap(&[Span::plain("日本語 日本語")], 7, &[], &[])), ["日本語", "日本語"]);
}

#[test]
fn code_is_cut_by_columns_never_at_words() {
    let gutter = [Span::plain("│ ")];
    let rows = wrap_chars(&[Span::plain("let x = 1;")], 6, &gutter, &gutter);
    assert_eq!(text(&rows), ["│ let ", "│ x = ", "│ 1;"]);
}

#[test]
fn hanging_indents_follow_the_lines_own_layout() {
    let help = "  /compact <instructions>  Clear the history but keep a summary in context";
    assert_eq!(hanging_indent(help, 60), 27);
    assert_eq!(hanging_indent("[permission] Delete the build directory", 60), 13);
    assert_eq!(hanging_indent("  [x] Read the notes", 60), 6);
    assert_eq!(hanging_indent("  12. twelfth", 60), 6);
    assert_eq!(hanging_indent("plain words here", 60), 0);
    let rows = wrap_line(Style::Plain, help, 50);
    assert_eq!(
        text(&rows),
        [
            "  /compact <instructions>  Clear the history but",
            "                           keep a summary in",
            "                           context"
        ]
    );
}

#[test]
fn a_row_narrower_than_its_prefix_still_makes_progress() {
    let rows = wrap(&[Span::plain("ab cd")], 2, &[Span::plain("│ ")], &[Span::plain("│ ")]);
    assert_eq!(text(&rows), ["│ a", "│ b", "│ c", "│ d"]);
    let rows = wrap_chars(&[Span::plain("xy")], 1, &[Span::plain("> ")], &[Span::plain("> ")]);
    assert_eq!(text(&rows), ["> x", "> y"]);
}
