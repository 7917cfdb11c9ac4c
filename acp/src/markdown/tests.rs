//! Tests of the Markdown renderer: streamed chunks, blocks laid out for a width, inline styles.

use super::{Markdown, Streams};
use crate::render::Voice;
use crate::style::{Row, Span, Style};

fn text(rows: &[Row]) -> String {
    rows.iter()
        .map(|row| {
            row.iter().map(|span| span.text.as_str()).collect::<String>().trim_end().to_owned()
                + "\n"
        })
        .collect()
}

#[test]
fn lines_are_shown_when_complete_with_inline_styles() {
    let mut markdown = Markdown::new(Style::Plain);
    assert_eq!(markdown.feed("# Tit", 80), Vec::<Row>::new());
    assert_eq!(
        markdown.feed("le\nSome **bold** and `co", 80),
        vec![vec![Span::new(Style::Heading, "Title")]]
    );
    assert_eq!(
        markdown.feed("de`, *em*.\n", 80),
        vec![vec![
            Span::plain("Some "),
            Span::new(Style::Strong, "bold"),
            Span::plain(" and "),
            Span::new(Style::InlineCode, "`code`"),
            Span::plain(", "),
            Span::new(Style::Emphasis, "em"),
            Span::plain("."),
        ]]
    );
    assert_eq!(markdown.feed("see [docs](https://x.y)", 80), Vec::<Row>::new());
    assert_eq!(text(&markdown.flush(80)), "see docs (https://x.y)\n");
    assert_eq!(markdown.flush(80), Vec::<Row>::new());
    assert_eq!(text(&markdown.feed("#hashtag\n", 80)), "#hashtag\n");
}

#[test]
fn lists_and_quotes_wrap_under_their_markers() {
    let mut markdown = Markdown::new(Style::Plain);
    let rows = markdown.feed(
        "- one two three four five\n  2. six seven eight\n> a quoted line that wraps\n- [x] done\n\n---\n",
        20,
    );
    assert_eq!(
        text(&rows),
        "• one two three four\n  five\n  2. six seven eight\n│ a quoted line that\n│ wraps\n• ☑ done\n\n────────────────────\n"
    );
}

#[test]
fn a_table_is_drawn_when_it_ends_and_narrowed_to_fit() {
    let mut markdown = Markdown::new(Style::Plain);
    let table = "| Name | Size |\n|:--|--:|\n| a file with a long name | 12 |\n";
    assert_eq!(markdown.feed(table, 30), Vec::<Row>::new());
    let rows = markdown.feed("after\n", 30);
    assert_eq!(
        text(&rows),
        "┌─────────────────────┬──────┐\n\
         │ Name                │ Size │\n\
         ├─────────────────────┼──────┤\n\
         │ a file with a long  │   12 │\n\
         │ name                │      │\n\
         └─────────────────────┴──────┘\n\
         after\n"
    );
    assert_eq!(rows[1][1..3], [Span::plain(" "), Span::new(Style::TableHeader, "Name")]);
    // A table at the end of a message is drawn by the flush.
    assert_eq!(markdown.feed("| x |\n", 30), Vec::<Row>::new());
    assert_eq!(text(&markdown.flush(30)), "┌───┐\n│ x │\n└───┘\n");
}

#[test]
fn code_blocks_are_framed_highlighted_and_never_reflowed() {
    let mut markdown = Markdown::new(Style::Plain);
    let rows = markdown.feed("```python\nif x:  # **not bold**\n```\n", 80);
    assert_eq!(text(&rows), "┌─ python\n│ if x:  # **not bold**\n└─\n");
    assert!(rows[1].contains(&Span::new(Style::CodeKeyword, "if")));
    assert!(rows[1].contains(&Span::new(Style::CodeComment, "# **not bold**")));
    // An unknown language is framed, not highlighted; an unclosed block is closed at the end.
    let rows = markdown.feed("~~~\nplain words\n", 80);
    assert_eq!(text(&rows), "┌─\n│ plain words\n");
    assert_eq!(text(&markdown.flush(80)), "");
    assert_eq!(text(&markdown.finish(80)), "└─\n");
}

#[test]
fn voices_keep_their_own_lines_and_styles() {
    let mut streams = Streams::default();
    assert_eq!(streams.feed(Voice::Thought, "thinking about", 80), Vec::<Row>::new());
    let rows = streams.feed(Voice::Agent, "The answer\n", 80);
    assert_eq!(
        rows,
        vec![vec![Span::new(Style::Thought, "thinking about")], vec![Span::plain("The answer")]]
    );
}

#[test]
fn a_pane_too_narrow_for_boxes_gets_each_row_as_a_line() {
    let mut markdown = Markdown::new(Style::Plain);
    markdown.feed("| a | b | c |\n|---|---|---|\n| one | two | three |\n", 12);
    let rows = markdown.flush(12);
    assert_eq!(text(&rows), "a │ b │ c\none │ two │\n  three\n");
}
