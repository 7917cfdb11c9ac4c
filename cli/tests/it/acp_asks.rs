//! Issue 35 item 1 end to end: a permission ask about a file edit shows the true change (the
//! agent's proposal against the file on disk when it asked), once, coloured on a terminal; and a
//! missing file is `Resource not found`. The scripted peer's `asks` scenario describes edits as
//! the real agents do (fast-agent's overwrite, claude-agent-acp's one-line `Edit`, Gemini CLI's
//! new file); the front end runs in a tmux pane (`Node`) and with `--prompt` into a pipe.

use serde_json::{Value, json};

use crate::acp::{Place, TURN_END, peer, run};
use crate::acp_interactive::Node;

const ASK: &str = "choose 1-2 (cancelled after 600 s): ";

/// The lines of `screen` that contain `text`.
fn lines_with<'a>(screen: &'a str, text: &str) -> Vec<&'a str> {
    screen.lines().filter(|line| line.contains(text)).collect()
}

/// The screen with its styles, as tmux writes them back (a style is written where it changes).
fn styled(node: &Node) -> String {
    node.tmux(&["capture-pane", "-p", "-e", "-J", "-S", "-", "-t", "=node:"])
}

/// The style sequences written right before `text` in a styled screen.
pub(crate) fn style_before<'a>(styled: &'a str, text: &str) -> &'a str {
    let at = styled.find(text).unwrap_or_else(|| panic!("{text:?} not in {styled:?}"));
    let mut start = at;
    while let Some(sequence) = styled[..start].rfind('\x1b') {
        if !styled[sequence..start].ends_with('m') || styled[sequence..start].contains('\n') {
            break;
        }
        start = sequence;
    }
    &styled[start..at]
}

/// fast-agent overwrote an existing notes.md while the ask showed a new 3-line file: the ask now
/// shows the two lines that go, before anything is allowed, and the change once.
#[test]
fn the_fast_agent_overwrite_shows_its_deleted_lines_before_allowing() {
    let node = Node::start(&[], &[]);
    node.wait_for("connected to", 1);
    node.type_line("asks overwrite");
    let before = node.wait_for(ASK, 1);
    let notes = node.place.root().join("notes.md");
    let title = format!("[diff] {} (2 lines removed, 3 added)", notes.display());
    let drawing = format!(
        "{title}\n  1 1   # Notes\n  @@ -2,2 +2,3 @@\n  2   - first old line\n  3   - second old \
         line\n    2 + new line 1\n    3 + new line 2\n    4 + new line 3\n"
    );
    assert!(before.contains(&drawing), "{before}");
    let ask = format!(
        "[permission] Edit (edit)\n[diff] {}: shown above (2 lines \
         removed, 3 added)\n  1. Allow once (allow_once)\n",
        notes.display()
    );
    assert!(before.contains(&ask), "{before}");
    assert!(!before.contains("/dev/null") && !before.contains("new file"), "{before}");
    // The raw input (the content as escaped JSON) is not shown: the diff is its readable form.
    assert!(!before.contains("input: "), "{before}");
    node.type_line("1");
    let after = node.wait_for(TURN_END, 1);
    assert_eq!(lines_with(&after, "- first old line").len(), 1, "{after}");
    assert_eq!(lines_with(&after, "+ new line 3").len(), 1, "{after}");
    assert_eq!(lines_with(&after, &title).len(), 1, "{after}");
    assert!(after.contains(&format!("[file] wrote {} (41 bytes)\n", notes.display())), "{after}");
    assert_eq!(
        std::fs::read_to_string(&notes).unwrap(),
        "# Notes\nnew line 1\nnew line 2\nnew line 3\n"
    );
    assert_eq!(node.reports()[0]["allowed"], true);
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);
}

/// Claude and Codex send a one-line edit as the changed text alone: it is placed in the file, so
/// a change on line 3 is `@@ -3 +3 @@` with its numbered context and no false end-of-file marker,
/// drawn once although the tool call, the ask and the completed update all carry it.
#[test]
fn a_one_line_change_on_line_3_is_at_line_3_once_and_coloured_on_a_terminal() {
    let node = Node::start(&[], &[("NO_COLOR", "")]);
    node.wait_for("connected to", 1);
    node.type_line("asks line3");
    let before = node.wait_for(ASK, 1);
    let poem = node.place.root().join("poem.txt");
    let drawing = format!(
        "[diff] {} (1 line removed, 1 added)\n  1 1   one\n  2 2   two\n  @@ -3 +3 @@\n  3   - \
         three\n    3 + THREE\n  4 4   four\n  5 5   five\n",
        poem.display()
    );
    assert!(before.contains(&drawing), "{before}");
    assert!(!before.contains("No newline"), "{before}");
    assert!(!before.contains("@@ -1 +1 @@"), "{before}");
    assert!(!before.contains("old_string"), "{before}");
    let colours = styled(&node);
    let title = format!("[diff] {} (1 line", poem.display());
    // Bold, however tmux writes it back (`[1m`, `[0;1m`).
    assert!(style_before(&colours, &title).contains("1m"), "{colours:?}");
    assert!(style_before(&colours, "  1 1   one").contains("2m"), "{colours:?}");
    assert!(colours.contains("  1 1   one\n  2 2   two\n"), "{colours:?}");
    assert!(style_before(&colours, "  @@ -3 +3 @@").contains("[36m"), "{colours:?}");
    assert!(style_before(&colours, "  3   - three").contains("[31m"), "{colours:?}");
    assert!(style_before(&colours, "    3 + THREE").contains("[32m"), "{colours:?}");
    assert!(style_before(&colours, "  4 4   four").contains("2m"), "{colours:?}");
    node.type_line("1");
    let after = node.wait_for(TURN_END, 1);
    assert_eq!(lines_with(&after, "@@ -3 +3 @@").len(), 1, "{after}");
    assert_eq!(lines_with(&after, "+ THREE").len(), 1, "{after}");
    assert_eq!(std::fs::read_to_string(&poem).unwrap(), "one\ntwo\nTHREE\nfour\nfive\n");
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);
}

/// With `NO_COLOR` in a terminal, and into a pipe, the same drawing has no escape sequence.
#[test]
fn a_diff_is_plain_with_no_color_and_in_a_pipe() {
    let node = Node::start(&[], &[("NO_COLOR", "1")]);
    node.wait_for("connected to", 1);
    node.type_line("asks line3");
    node.wait_for(ASK, 1);
    let colours = styled(&node);
    for text in ["[diff] ", "@@ -3 +3 @@", "- three", "+ THREE", "2 2   two"] {
        let line = colours.lines().find(|line| line.contains(text)).unwrap();
        assert!(!line.contains('\x1b'), "{line:?}");
    }
    node.type_line("2");
    node.wait_for(TURN_END, 1);
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);

    let place = Place::new();
    let peer = peer();
    let options = ["--permission", "allow-once", "--prompt", "asks line3"];
    let finished = run(place.command(&peer, &[], &options));
    finished.assert_end_turn();
    let poem = place.root().join("poem.txt");
    let allowed = format!(
        "[permission] Edit: selected \"Allow once\" by the policy\n[diff] {}: shown above (1 line \
         removed, 1 added)\n",
        poem.display()
    );
    assert!(finished.stdout.contains(&allowed), "{}", finished.stdout);
    assert_eq!(finished.stdout.matches("  @@ -3 +3 @@\n").count(), 1, "{}", finished.stdout);
    assert!(!finished.stdout.contains('\x1b'), "{:?}", finished.stdout);
}

/// Gemini CLI reads a file before creating it and takes it as missing only when the error says
/// `Resource not found` (or `ENOENT`, `does not exist`, `No such file`); the ask then says new file.
#[test]
fn a_new_file_is_said_so_and_its_missing_read_is_resource_not_found() {
    let place = Place::new();
    let peer = peer();
    let options = ["--permission", "allow-once", "--prompt", "asks new"];
    let finished = run(place.command(&peer, &[], &options));
    finished.assert_end_turn();
    let fresh = place.root().join("made/fresh.txt");
    let path = fresh.to_string_lossy().into_owned();
    assert_eq!(
        finished.report()["read"],
        json!({"code": -32002, "message": format!("Resource not found: {path}"), "data": {"uri": path}})
    );
    assert_eq!(finished.report()["allowed"], true);
    let drawing = format!(
        "[permission] Edit: selected \"Allow once\" by the policy\n[diff] {path} (new file, 2 \
         lines)\n  @@ -0,0 +1,2 @@\n    1 + fresh 1\n    2 + fresh 2\n[file] created {path} (16 \
         bytes)\n"
    );
    assert!(finished.stdout.contains(&drawing), "{}", finished.stdout);
    assert_eq!(finished.stdout.matches("+ fresh 1").count(), 1, "{}", finished.stdout);
    assert_eq!(std::fs::read_to_string(&fresh).unwrap(), "fresh 1\nfresh 2\n");
    assert_eq!(place.check_trace(&peer), Vec::<Value>::new());
}
