//! Tests of the Markdown line renderer: streamed chunks, blocks and inline styles.

use super::Markdown;

#[test]
fn lines_are_styled_when_complete_and_code_blocks_stay_verbatim() {
    let mut markdown = Markdown::default();
    assert_eq!(markdown.feed("# Tit"), "");
    assert_eq!(markdown.feed("le\nSome **bold** and `co"), "\x1b[1m# Title\x1b[0m\n");
    assert_eq!(
        markdown.feed("de`, *em*.\n"),
        "Some \x1b[1mbold\x1b[0m and \x1b[36m`code`\x1b[0m, \x1b[3mem\x1b[0m.\n"
    );
    assert_eq!(
        markdown.feed("```rust\nlet x = **y**;\n```\n"),
        "\x1b[2m```rust\x1b[0m\nlet x = **y**;\n\x1b[2m```\x1b[0m\n"
    );
    assert_eq!(
        markdown.feed("- one\n  2. two\n> a *q*\n"),
        "• one\n  2. two\n> a \x1b[3mq\x1b[0m\n"
    );
    assert_eq!(markdown.feed("see [docs](https://x.y)"), "");
    assert_eq!(markdown.flush(), "see docs (https://x.y)");
    assert_eq!(markdown.flush(), "");
    assert_eq!(markdown.feed("---\n#hashtag\n"), "---\n#hashtag\n");
}
