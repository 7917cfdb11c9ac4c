//! The line editor of `termsprawlctl acp`'s prompt (issue 25), through a real pseudo-terminal (the
//! tmux pane of `acp_interactive::Node`): editing keys, the history kept per project, Tab
//! completion of our commands, the agent's commands and mode ids, a second line by a trailing `\`
//! or Alt-Enter, and Ctrl-C and Ctrl-D at the prompt. Each test asserts the exact text the agent
//! received (its `REPORT` line) or the screen the person saw.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use serde_json::{Value, json};

use crate::acp::TURN_END;
use crate::acp_interactive::Node;

/// The `text` of the agent's `REPORT` lines (the `echo` scenario reports the prompt it got).
fn reported_texts(node: &Node) -> Vec<Value> {
    node.reports().iter().map(|report| report["text"].clone()).collect()
}

fn keys(node: &Node, keys: &[&str]) {
    for key in keys {
        node.key(key);
    }
}

fn literal(node: &Node, text: &str) {
    node.tmux(&["send-keys", "-t", "=node:", "-l", text]);
}

#[test]
fn the_line_is_edited_before_it_is_sent() {
    let node = Node::start(&[], &[]);
    node.wait_prompt(">");
    // `echo wrld`, three to the left, `o`: the agent gets `echo world`.
    literal(&node, "echo wrld");
    keys(&node, &["Left", "Left", "Left"]);
    literal(&node, "o");
    node.wait_for("> echo world", 1);
    node.key("Enter");
    node.wait_for(TURN_END, 1);
    // Home, a word, End, Backspace, and Ctrl-U that clears the line.
    node.wait_prompt(">");
    literal(&node, "cho again!");
    keys(&node, &["Home"]);
    literal(&node, "e");
    keys(&node, &["End", "BSpace"]);
    node.wait_for("> echo again", 1);
    node.key("Enter");
    node.wait_for(TURN_END, 2);
    node.wait_prompt(">");
    literal(&node, "thrown away");
    node.key("C-u");
    literal(&node, "echo kept");
    node.key("Enter");
    node.wait_for(TURN_END, 3);
    assert_eq!(
        reported_texts(&node),
        [json!("echo world"), json!("echo again"), json!("echo kept")]
    );
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);
}

/// The history of the project in its directory: a second run there recalls the first run's
/// prompts with Up; a run in another project does not. The login menu's answer is never kept.
#[test]
fn history_is_kept_per_project_and_recalled_with_up() {
    let state = tempfile::TempDir::new().unwrap();
    let state_home = state.path().to_string_lossy().into_owned();
    let projects = tempfile::TempDir::new().unwrap();
    let (one, other) = (projects.path().join("one"), projects.path().join("other"));
    std::fs::create_dir(&one).unwrap();
    std::fs::create_dir(&other).unwrap();
    let env = |auth: bool| {
        let mut env = vec![("XDG_STATE_HOME", state_home.as_str())];
        if auth {
            env.push(("ACP_TEST_REQUIRE_AUTH", "1"));
        }
        env
    };

    let first = Node::start_in(&one, &[], &env(true));
    first.wait_for("choose 1-1: ", 1);
    first.type_line("1");
    first.wait_prompt(">");
    first.type_line("echo first run");
    first.wait_for(TURN_END, 1);
    first.wait_prompt(">");
    first.type_line("echo second line\\");
    first.wait_prompt("...");
    first.type_line("and its end");
    first.wait_for(TURN_END, 2);
    first.type_line("/quit");
    first.wait_for("[exit 0]", 1);
    let folder = state.path().join("termsprawl/acp-history");
    let files: Vec<_> = std::fs::read_dir(&folder).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    // rustyline's file format: a version line, then one entry a line with `\n` escaped.
    assert_eq!(
        std::fs::read_to_string(&files[0]).unwrap(),
        "#V2\necho first run\necho second line\\nand its end\n"
    );
    assert!(files[0].file_name().unwrap().to_string_lossy().starts_with("one-"), "{files:?}");
    let mode =
        |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&files[0]), 0o600);
    assert_eq!(mode(&folder), 0o700);

    let second = Node::start_in(&one, &[], &env(false));
    second.wait_prompt(">");
    keys(&second, &["Up"]);
    second.wait_for("> echo second line\nand its end", 1);
    // Up moves to the first line of a two-line entry, then to the entry before.
    keys(&second, &["Up", "Up"]);
    second.wait_for("> echo first run", 1);
    second.key("Enter");
    second.wait_for(TURN_END, 1);
    second.wait_prompt(">");
    keys(&second, &["Up", "Up"]);
    second.key("Enter");
    second.wait_for(TURN_END, 2);
    assert_eq!(
        reported_texts(&second),
        [json!("echo first run"), json!("echo second line\nand its end")]
    );
    second.type_line("/quit");
    second.wait_for("[exit 0]", 1);

    let elsewhere = Node::start_in(&other, &[], &env(false));
    elsewhere.wait_prompt(">");
    keys(&elsewhere, &["Up"]);
    literal(&elsewhere, "echo fresh");
    elsewhere.key("Enter");
    elsewhere.wait_for(TURN_END, 1);
    assert_eq!(reported_texts(&elsewhere), [json!("echo fresh")]);
    elsewhere.type_line("/quit");
    elsewhere.wait_for("[exit 0]", 1);
    assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 2);

    // The history is capped at 1000 entries: the oldest go when a new one is written.
    let old = (1..=1005).map(|n| format!("echo old {n}\n")).collect::<Vec<_>>().concat();
    std::fs::write(&files[0], format!("#V2\n{old}")).unwrap();
    let capped = Node::start_in(&one, &[], &env(false));
    capped.wait_prompt(">");
    keys(&capped, &["Up"]);
    capped.wait_for("> echo old 1005", 1);
    capped.key("C-u");
    capped.type_line("echo newest");
    capped.wait_for(TURN_END, 1);
    capped.type_line("/quit");
    capped.wait_for("[exit 0]", 1);
    let kept = std::fs::read_to_string(&files[0]).unwrap();
    let entries: Vec<&str> = kept.lines().skip(1).collect();
    assert_eq!(entries.len(), 1000, "{kept}");
    assert_eq!((entries[0], entries[999]), ("echo old 7", "echo newest"));
}

#[test]
fn tab_completes_our_commands_the_agents_and_mode_ids() {
    let node = Node::start(&[], &[("ACP_TEST_FEATURES", "modes,commands")]);
    node.wait_prompt("[default] >");
    literal(&node, "/he");
    node.key("Tab");
    node.wait_for("[default] > /help", 1);
    node.key("Enter");
    node.wait_for("[help] this front end's commands:", 1);
    // The agent announces its commands just after the session starts.
    let mut asked = 1;
    let announced = crate::acp::eventually(Duration::from_secs(30), || {
        node.wait_prompt("[default] >");
        if node.screen().contains("[help] the agent's commands") {
            return true;
        }
        asked += 1;
        node.type_line("/help");
        node.wait_for("[help] this front end's commands:", asked);
        false
    });
    assert!(announced, "{}", node.screen());
    node.wait_prompt("[default] >");
    literal(&node, "/rev");
    node.key("Tab");
    literal(&node, " the parser");
    node.key("Enter");
    node.wait_for(TURN_END, 1);
    assert_eq!(node.reports()[0], json!({"command": "/review the parser", "session": "sess-1"}));
    node.wait_prompt("[default] >");
    literal(&node, "/mode p");
    node.key("Tab");
    node.wait_for("[default] > /mode plan", 1);
    node.key("Enter");
    node.wait_for("[mode] now plan (Plan)", 1);
    node.wait_prompt("[plan] >");
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);
}

/// A trailing `\` and Alt-Enter both make a prompt of two lines, sent as one text.
#[test]
fn a_backslash_or_alt_enter_continues_the_prompt_on_a_new_line() {
    let node = Node::start(&[], &[]);
    node.wait_prompt(">");
    node.type_line("echo one\\");
    node.wait_prompt("...");
    node.type_line("two");
    node.wait_for(TURN_END, 1);
    node.wait_prompt(">");
    literal(&node, "echo three");
    node.key("M-Enter");
    literal(&node, "four");
    node.key("Enter");
    node.wait_for(TURN_END, 2);
    assert_eq!(reported_texts(&node), [json!("echo one\ntwo"), json!("echo three\nfour")]);
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);
}

/// Ctrl-C at the prompt clears the line being typed and says how to leave; a second one within
/// 2 s quits. Ctrl-D at an empty prompt quits too.
#[test]
fn ctrl_c_at_the_prompt_clears_the_line_and_twice_quits_and_ctrl_d_quits() {
    let node = Node::start(&[], &[]);
    node.wait_prompt(">");
    literal(&node, "echo never sent");
    node.key("C-c");
    node.wait_for("(press Ctrl-C again within 2 s, or type /quit, to leave)", 1);
    node.wait_prompt(">");
    std::thread::sleep(Duration::from_millis(2100));
    node.type_line("echo sent");
    node.wait_for(TURN_END, 1);
    assert_eq!(reported_texts(&node), [json!("echo sent")]);
    node.wait_prompt(">");
    // Both keys in one write: the second is not lost with the first's read.
    node.tmux(&["send-keys", "-t", "=node:", "C-c", "C-c"]);
    node.wait_for("[exit 0]", 1);

    let node = Node::start(&[], &[]);
    node.wait_prompt(">");
    node.key("C-d");
    let screen = node.wait_for("[exit 0]", 1);
    assert!(screen.contains("the session was sess-1"), "{screen}");
}

/// A line typed during a turn is read plainly (the terminal echoes it), waits for the turn and is
/// then sent; it is kept in the history, and the editor has the prompt again afterwards.
#[test]
fn a_line_typed_during_a_turn_is_sent_after_it_and_kept_in_the_history() {
    let node = Node::start(&[], &[]);
    node.wait_prompt(">");
    node.type_line("slow 2");
    node.wait_for("SLOW START", 1);
    node.type_line("echo typed during the turn");
    node.wait_for(TURN_END, 2);
    assert_eq!(
        reported_texts(&node),
        [Value::Null, json!("echo typed during the turn")],
        "{}",
        node.screen()
    );
    node.wait_prompt(">");
    node.key("Up");
    node.wait_for("> echo typed during the turn", 1);
    node.key("C-u");
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);
}
