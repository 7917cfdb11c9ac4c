//! Tests of resolving an agent's `diff` item against the file on disk and of drawing it.

use super::{Change, DiffStyle, OnDisk, resolve};

fn text(disk: &str) -> OnDisk {
    OnDisk::Text(disk.to_owned())
}

/// The drawing as plain text, one line each.
fn drawn(change: &Change) -> String {
    change.lines().iter().map(|line| line.text.clone() + "\n").collect()
}

#[test]
fn a_whole_file_overwrite_is_against_the_file_whatever_the_agent_claims() {
    // fast-agent: oldText absent for an existing notes.md.
    let disk = text("# Notes\nold line\n");
    let change = resolve("/p/notes.md", None, "# Notes\nnew one\nnew two\n", &disk);
    assert_eq!(change.before, "# Notes\nold line\n");
    assert!(!change.new_file);
    assert_eq!(change.summary(), "1 line removed, 2 added");
    assert_eq!(
        drawn(&change),
        "[diff] /p/notes.md (1 line removed, 2 added)\n\
         \x20 1 1   # Notes\n\
         \x20 @@ -2 +2,2 @@\n\
         \x20 2   - old line\n\
         \x20   2 + new one\n\
         \x20   3 + new two\n"
    );
    // A stale whole-file old text is not believed either.
    let stale = resolve("/p/notes.md", Some("something else\n"), "x\n", &disk);
    assert_eq!(stale.before, "# Notes\nold line\n");
    assert!(stale.note.as_deref().unwrap().contains("not in the file as it is now"));
    assert_eq!(stale.summary(), "2 lines removed, 1 added");
    // An empty old text is the whole file too; the whole old text is taken as it is.
    assert_eq!(resolve("/p/n", Some(""), "x\n", &disk).after, "x\n");
    let exact = resolve("/p/n", Some("# Notes\nold line\n"), "y\n", &disk);
    assert_eq!(
        (exact.before.as_str(), exact.after.as_str(), exact.note),
        ("# Notes\nold line\n", "y\n", None)
    );
}

#[test]
fn a_fragment_is_placed_in_the_file_with_true_line_numbers() {
    // claude-agent-acp's Edit: old_string and new_string of a change on line 3.
    let disk = text("one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\n");
    let change = resolve("/p/a.txt", Some("three"), "THREE", &disk);
    assert_eq!(change.after, "one\ntwo\nTHREE\nfour\nfive\nsix\nseven\neight\n");
    assert_eq!(
        drawn(&change),
        "[diff] /p/a.txt (1 line removed, 1 added)\n\
         \x20 1 1   one\n\
         \x20 2 2   two\n\
         \x20 @@ -3 +3 @@\n\
         \x20 3   - three\n\
         \x20   3 + THREE\n\
         \x20 4 4   four\n\
         \x20 5 5   five\n\
         \x20 6 6   six\n"
    );
    assert!(!drawn(&change).contains("No newline"));
    // Every occurrence is replaced, and the note says so.
    let twice = resolve("/p/a.txt", Some("x"), "y", &text("x\nx\n"));
    assert_eq!(twice.after, "y\ny\n");
    assert!(twice.note.as_deref().unwrap().contains("occurs 2 times"));
}

#[test]
fn a_new_file_only_when_it_does_not_exist() {
    let change = resolve("/p/new.txt", Some("the agent thought so\n"), "a\nb\n", &OnDisk::Missing);
    assert!(change.new_file);
    assert_eq!(
        drawn(&change),
        "[diff] /p/new.txt (new file, 2 lines)\n\
         \x20 @@ -0,0 +1,2 @@\n\
         \x20   1 + a\n\
         \x20   2 + b\n"
    );
    let empty = resolve("/p/e", None, "a\n", &text(""));
    assert!(!empty.new_file);
    assert_eq!(empty.summary(), "1 line added");
}

#[test]
fn a_missing_newline_is_marked_only_where_it_is_missing() {
    let change = resolve("/p/a", None, "a\nb", &text("a\nb\n"));
    assert_eq!(
        drawn(&change),
        "[diff] /p/a (1 line removed, 1 added)\n\
         \x20 1 1   a\n\
         \x20 @@ -2 +2 @@\n\
         \x20 2   - b\n\
         \x20   2 + b\n\
         \x20 \\ No newline at end of file\n"
    );
    // Both sides without it: the shared last line is marked once.
    let both = resolve("/p/a", None, "A\nb", &text("a\nb"));
    assert_eq!(drawn(&both).matches("No newline").count(), 1, "{}", drawn(&both));
    assert!(drawn(&both).ends_with("  2 2   b\n  \\ No newline at end of file\n"));
}

#[test]
fn far_apart_changes_get_a_header_each_and_a_gap() {
    let old: String = (1..=20).map(|n| n.to_string() + "\n").collect();
    let new: String = (1..=20)
        .filter(|&n| n != 18)
        .map(|n| if n == 2 { "two\n".to_owned() } else { n.to_string() + "\n" })
        .collect();
    let change = resolve("/p/n", None, &new, &text(&old));
    let lines = change.lines();
    let hunks: Vec<&str> = lines
        .iter()
        .filter(|line| line.style == DiffStyle::Hunk)
        .map(|line| line.text.as_str())
        .collect();
    assert_eq!(hunks, ["  @@ -2 +2 @@", "  @@ -18 +17,0 @@"]);
    assert_eq!(lines.iter().filter(|line| line.style == DiffStyle::Gap).count(), 1);
    let whole = drawn(&change);
    assert!(
        whole.contains("\n   1  1   1\n  @@ -2 +2 @@\n   2    - 2\n      2 + two\n"),
        "{whole}"
    );
    assert!(
        whole.contains("  17 17   17\n  @@ -18 +17,0 @@\n  18    - 18\n  19 18   19\n"),
        "{whole}"
    );
    // Close changes share their context lines and show no gap.
    let close = resolve("/p/n", None, "A\nb\nC\n", &text("a\nb\nc\n"));
    let whole = drawn(&close);
    assert_eq!(whole.matches("   b\n").count(), 1, "{whole}");
    assert!(close.lines().iter().all(|line| line.style != DiffStyle::Gap));
}

#[test]
fn an_applied_change_is_shown_as_the_step_that_made_the_file() {
    let disk = text("one\ntwo\nTHREE\n");
    let change = resolve("/p/a", Some("three"), "THREE", &disk);
    assert_eq!(
        (change.before.as_str(), change.after.as_str()),
        ("one\ntwo\nthree\n", "one\ntwo\nTHREE\n")
    );
    assert_eq!(change.note.as_deref(), Some("the file already holds this change"));
    assert!(drawn(&change).contains("  @@ -3 +3 @@\n"));
    let same = resolve("/p/a", None, "one\n", &text("one\n"));
    assert_eq!(drawn(&same), "[diff] /p/a (no changes)\n");
}

#[test]
fn an_unreadable_file_shows_the_agents_own_text_saying_why() {
    let why = OnDisk::Unreadable("the path is outside the session roots: /etc/x".to_owned());
    let change = resolve("/etc/x", Some("a\n"), "b\n", &why);
    assert_eq!((change.before.as_str(), change.after.as_str()), ("a\n", "b\n"));
    assert_eq!(
        change.note.as_deref(),
        Some(
            "the path is outside the session roots: /etc/x: shown as the agent describes it (its \
             own old and new text)"
        )
    );
    assert!(
        resolve("/p", None, "b\n", &OnDisk::Unread)
            .note
            .unwrap()
            .starts_with("the file was not read")
    );
}

#[test]
fn control_characters_cannot_reach_the_terminal_and_written_changes_know_their_old_side() {
    let change = Change::written("/p/a", Some("a\r\n"), "\x1b[31mred\tx\r\n");
    let whole = drawn(&change);
    assert!(whole.contains("  1   - a\n"), "{whole:?}");
    assert!(whole.contains("    1 + \u{FFFD}[31mred\tx\n"), "{whole:?}");
    let created = Change::written("/p/b", None, "x\n");
    assert!(created.new_file);
    assert_eq!(created.shown_above().text, "[diff] /p/b: shown above (new file, 1 line)");
}
