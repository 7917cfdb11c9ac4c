//! Issue 35 items 2, 5 and 6 end to end, through the real `termsprawlctl acp` and the scripted
//! peer agent (`tests/python/acp_agent.py`): `/resume` listing the sessions and picking one by
//! number or a Tab-completed id, the history `session/load` replays shown and closed at its end;
//! elicitation forms answered, declined and cancelled, and a URL elicitation; usage, notices,
//! compactions and unknown updates; `@` mentions completed with Tab and sent as embedded text or
//! links per the agent's prompt capabilities.

use serde_json::{Value, json};

use crate::acp::{Place, peer, run};
use crate::acp_interactive::Node;

/// The params of every request the front end sent with `method`, in order.
fn sent(place: &Place, method: &str) -> Vec<Value> {
    place
        .traced("out")
        .into_iter()
        .filter(|message| message.get("id").is_some() && message["method"] == method)
        .map(|message| message["params"].clone())
        .collect()
}

/// The results the front end answered the agent's `elicitation/create` requests with.
fn elicitation_answers(place: &Place) -> Vec<Value> {
    let asked: Vec<Value> = place
        .traced("in")
        .into_iter()
        .filter(|message| message["method"] == "elicitation/create")
        .map(|message| message["id"].clone())
        .collect();
    place
        .traced("out")
        .into_iter()
        .filter(|message| message.get("method").is_none() && asked.contains(&message["id"]))
        .map(|message| message["result"].clone())
        .collect()
}

fn literal(node: &Node, text: &str) {
    node.tmux(&["send-keys", "-t", "=node:", "-l", text]);
}

#[test]
fn resume_without_an_id_lists_the_sessions_to_pick_by_number_or_tab_completed_id() {
    let node = Node::start(&[], &[("ACP_TEST_FEATURES", "list,load")]);
    node.wait_prompt(">");
    node.type_line("/resume");
    let screen = node.wait_for("[resume] type /resume N or /resume ID (Tab completes the ids)", 1);
    assert!(screen.contains("[resume] 2 sessions (id, updated, title, cwd):"), "{screen}");
    assert!(screen.contains("  1.  old-1  2026-11-30T10:00:00Z  Fix the parser  ("), "{screen}");
    assert!(screen.contains("  2.  old-2  -  -  ("), "{screen}");
    node.wait_prompt(">");
    node.type_line("/resume 2");
    let screen = node.wait_for("[session] now old-2", 1);
    // The replayed history, closed at its end, before the line that says the switch is done.
    let history = "[session] the history of old-2:\n[you] what is in the parser?\nThe parser reads tokens.\n[tool] Read parser.rs (read, completed)\n[you] and the lexer?\nThe lexer makes tokens.\n[session] end of the history of old-2\n[session] now old-2\n";
    assert!(screen.contains(history), "{screen}");
    // Tab completes the listed ids: `o` → `old-` (their common start), then `1`.
    node.wait_prompt(">");
    literal(&node, "/resume o");
    node.key("Tab");
    node.wait_for("> /resume old-", 1);
    literal(&node, "1");
    node.key("Enter");
    node.wait_for("[session] now old-1", 1);
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);
    let loads: Vec<Value> = sent(&node.place, "session/load")
        .iter()
        .map(|params| params["sessionId"].clone())
        .collect();
    assert_eq!(loads, [json!("old-2"), json!("old-1")]);
    assert_eq!(node.place.check_trace(&node.peer), Vec::<Value>::new());
}

/// Gemini CLI answers `session/load` before it replays, each answer one whole Markdown message:
/// on a terminal with colour the replayed answers are rendered (not raw Markdown), and the
/// history is closed after its last update, before the prompt.
#[test]
fn a_history_replayed_after_the_answer_is_rendered_and_closed_at_its_end() {
    let node = Node::start(
        &["--resume", "old-1"],
        &[("ACP_TEST_FEATURES", "load"), ("ACP_TEST_REPLAY_LATE", "1"), ("NO_COLOR", "")],
    );
    let screen = node.wait_prompt(">");
    let history = "[session] the history of old-1:\n[you] what is in the parser?\nThe parser reads tokens.\n[tool] Read parser.rs (read, completed)\n[you] and the lexer?\nThe lexer makes tokens.\n[session] end of the history of old-1\n";
    assert!(screen.contains(history), "{screen}");
    assert!(!screen.contains("*tokens*"), "{screen}");
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);
}

#[test]
fn resume_without_an_id_says_why_when_the_agent_lists_nothing() {
    let node = Node::start(&[], &[("ACP_TEST_FEATURES", "load")]);
    node.wait_prompt(">");
    node.type_line("/resume");
    node.wait_for("[resume] the agent does not list its sessions (it offers no session/list)", 1);
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);
}

#[test]
fn an_elicitation_form_is_answered_declined_or_cancelled() {
    let node = Node::start(&[], &[]);
    node.wait_prompt(">");
    node.type_line("elicit form");
    let screen = node.wait_for("  Your name (text; required):", 1);
    assert!(screen.contains("[elicitation] Tell me about you"), "{screen}");
    // A required field left empty, and a value of the wrong type, are asked again.
    node.type_line("");
    node.wait_for("  this field is required", 1);
    node.type_line("Ada");
    node.wait_for("  age (a whole number; optional):", 1);
    node.type_line("old");
    node.wait_for("  type a whole number", 1);
    node.type_line("36");
    node.wait_for("  colour (one of 1. r (Red), 2. g (Green); optional):", 1);
    node.type_line("2");
    node.wait_for("  news (yes or no; optional; Enter for no):", 1);
    node.type_line("");
    node.wait_for("[elicitation] accepted: the answer was sent", 1);
    node.wait_for("REPORT ", 1);
    assert_eq!(
        node.reports()[0],
        json!({"answer": {"action": "accept", "content": {"name": "Ada", "age": 36, "colour": "g", "news": false}}})
    );
    node.wait_prompt(">");
    node.type_line("elicit form");
    node.wait_for("  Your name (text; required):", 2);
    node.type_line("/decline");
    node.wait_for("[elicitation] declined", 1);
    node.wait_for("REPORT ", 2);
    assert_eq!(node.reports()[1], json!({"answer": {"action": "decline"}}));
    node.wait_prompt(">");
    node.type_line("elicit url");
    let screen = node.wait_for("  opened it? y to accept, n to decline, /cancel to cancel:", 1);
    assert!(screen.contains("  open https://example.test/consent"), "{screen}");
    node.type_line("/cancel");
    node.wait_for("[elicitation] cancelled", 1);
    node.wait_for("REPORT ", 3);
    assert_eq!(node.reports()[2], json!({"answer": {"action": "cancel"}}));
    node.wait_prompt(">");
    node.type_line("elicit url");
    node.wait_for("  opened it? y to accept, n to decline, /cancel to cancel:", 2);
    node.type_line("y");
    node.wait_for("[elicitation] the agent says e-1 is complete", 1);
    node.wait_for("REPORT ", 4);
    assert_eq!(node.reports()[3], json!({"answer": {"action": "accept"}}));
    // Ctrl-C cancels the turn, and the form with it.
    node.wait_prompt(">");
    node.type_line("elicit form");
    node.wait_for("  Your name (text; required):", 3);
    node.key("C-c");
    node.wait_for("[elicitation] cancelled with the turn", 1);
    node.wait_for("REPORT ", 5);
    assert_eq!(node.reports()[4], json!({"answer": {"action": "cancel"}}));
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);
    let answers = elicitation_answers(&node.place);
    assert_eq!(answers.len(), 5, "{answers:?}");
    assert_eq!(node.place.check_trace(&node.peer), Vec::<Value>::new());
}

/// An elicitation between turns is shown above the prompt's place and answered the same way;
/// Ctrl-C cancels it.
#[test]
fn an_elicitation_between_turns_is_answered_or_cancelled_with_ctrl_c() {
    let node = Node::start(&[], &[]);
    let answers = node.place.root().join("elicited.json");
    node.wait_prompt(">");
    node.type_line("elicit-later");
    node.wait_for("[elicitation] Between turns", 1);
    node.wait_for("  name (text; optional):", 1);
    node.type_line("Ada");
    node.wait_for("[elicitation] accepted: the answer was sent", 1);
    node.wait_prompt(">");
    node.type_line("elicit-later");
    node.wait_for("  name (text; optional):", 2);
    node.key("C-c");
    node.wait_for("[elicitation] cancelled (Ctrl-C)", 1);
    // The front end goes on: the prompt is back.
    node.wait_prompt(">");
    let read = || std::fs::read_to_string(&answers).unwrap_or_default();
    assert!(
        crate::acp::eventually(std::time::Duration::from_secs(10), || read().lines().count() == 2)
    );
    let answers: Vec<Value> =
        read().lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    assert_eq!(
        answers,
        [json!({"action": "accept", "content": {"name": "Ada"}}), json!({"action": "cancel"})]
    );
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);
}

#[test]
fn without_a_terminal_an_elicitation_is_cancelled_and_said() {
    let place = Place::new();
    let finished = run(place.command(&peer(), &[], &["--prompt", "elicit form"]));
    finished.assert_end_turn();
    assert_eq!(finished.report(), json!({"answer": {"action": "cancel"}}));
    assert!(
        finished
            .stdout
            .contains("[elicitation] Tell me about you: cancelled (stdin is not a terminal)\n"),
        "{}",
        finished.stdout
    );
}

#[test]
fn usage_notices_compactions_and_unknown_updates_are_shown() {
    let place = Place::new();
    let finished = run(place.command(&peer(), &[], &["--prompt", "extras"]));
    finished.assert_end_turn();
    let stdout = &finished.stdout;
    for expected in [
        "[notice warning] Rate limited: retrying in 2 s\n",
        "[compaction] compacting the context…\n",
        "[compaction] the context was compacted\n",
        "[update] hologram_update: a session/update this client does not know (not shown)\n",
        "[usage] 53k/200k tokens (26%) · 0.42 USD\n",
    ] {
        assert!(stdout.contains(expected), "{expected:?} missing from:\n{stdout}");
    }
    // Two unknown updates of one variant in a turn: one line.
    assert_eq!(stdout.matches("hologram_update").count(), 1, "{stdout}");
    // The usage line follows the turn's end.
    assert!(stdout.trim_end().ends_with("[usage] 53k/200k tokens (26%) · 0.42 USD"), "{stdout}");
    assert!(!finished.stderr.contains("skipped"), "{}", finished.stderr);

    let node = Node::start(&[], &[]);
    node.wait_prompt(">");
    node.type_line("/status");
    node.wait_for("[status] context: the agent has not reported its usage", 1);
    node.type_line("extras");
    node.wait_for("[usage] 53k/200k tokens (26%) · 0.42 USD", 1);
    node.wait_prompt(">");
    node.type_line("/status");
    node.wait_for("[status] context 53000 of 200000 tokens (26%), cost 0.42 USD", 1);
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);
}

#[test]
fn at_mentions_complete_with_tab_and_are_sent_per_the_prompt_capabilities() {
    let cwd = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(cwd.path()).unwrap();
    std::fs::create_dir_all(cwd.join("docs")).unwrap();
    std::fs::write(cwd.join("docs/notes.md"), "# Notes\nremember the milk\n").unwrap();
    let node = Node::start_in(&cwd, &[], &[("ACP_TEST_FEATURES", "embedded")]);
    node.wait_prompt(">");
    // A bare name finds the file below; a folder lists its entries.
    literal(&node, "echo see @not");
    node.key("Tab");
    node.wait_for("> echo see @docs/notes.md", 1);
    literal(&node, " please");
    node.key("Enter");
    node.wait_for("[mention] @docs/notes.md: its text is attached (26 bytes)", 1);
    node.wait_for("REPORT ", 1);
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);
    let uri = format!("file://{}/docs/notes.md", cwd.display());
    assert_eq!(
        sent(&node.place, "session/prompt")[0]["prompt"],
        json!([
            {"type": "text", "text": "echo see @docs/notes.md please"},
            {"type": "resource", "resource": {"uri": uri, "text": "# Notes\nremember the milk\n"}}
        ])
    );
    assert_eq!(node.place.check_trace(&node.peer), Vec::<Value>::new());

    // An agent without embeddedContext gets a link.
    let place = Place::new();
    std::fs::write(place.root().join("a.txt"), "a\n").unwrap();
    let finished = run(place.command(&peer(), &[], &["--prompt", "echo @a.txt"]));
    finished.assert_end_turn();
    assert!(
        finished.stdout.contains("[mention] @a.txt: attached as a link\n"),
        "{}",
        finished.stdout
    );
    let uri = format!("file://{}/a.txt", place.root().display());
    assert_eq!(
        sent(&place, "session/prompt")[0]["prompt"],
        json!([
            {"type": "text", "text": "echo @a.txt"},
            {"type": "resource_link", "uri": uri, "name": "a.txt"}
        ])
    );
    assert_eq!(place.check_trace(&peer()), Vec::<Value>::new());
}

/// The real fast-agent (`passthrough` model, which echoes the prompt and needs no network):
/// an `@` mention is embedded (it offers `embeddedContext`), and `--resume` uses its
/// `session/load`, whose replayed history is shown and closed before the next turn.
#[test]
fn fast_agent_gets_an_embedded_mention_and_its_loaded_history_is_shown() {
    let dir = tempfile::TempDir::new().unwrap();
    let dir = std::fs::canonicalize(dir.path()).unwrap();
    let (project, home) = (dir.join("project"), dir.join("home"));
    std::fs::create_dir(&project).unwrap();
    std::fs::create_dir(&home).unwrap();
    std::fs::write(project.join("notes.md"), "remember the milk\n").unwrap();
    let front_end = |trace: &str, options: &[&str]| {
        let mut command = std::process::Command::new(crate::support::BIN);
        command
            .arg("acp")
            .arg("--cwd")
            .arg(&project)
            .arg("--trace")
            .arg(dir.join(trace))
            .args(options)
            .arg("--")
            .args(crate::acp_fast_agent::fast_agent(&home, &[]))
            .current_dir(&project)
            .env("TMUX_TMPDIR", &dir)
            .env_remove("TERMSPRAWL_SESSION_FILE")
            .env_remove("TMUX")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        run(command)
    };
    let first = front_end("first.jsonl", &["--prompt", "hello @notes.md"]);
    first.assert_end_turn();
    assert!(
        first.stdout.contains("[mention] @notes.md: its text is attached (18 bytes)\n"),
        "{}",
        first.stdout
    );
    // The passthrough model answers with what it got: the text and the embedded file.
    assert!(first.stdout.contains("hello @notes.md\nremember the milk\n"), "{}", first.stdout);
    let session = first
        .stderr
        .split("the session was ")
        .nth(1)
        .and_then(|rest| rest.split(';').next())
        .unwrap_or_else(|| panic!("no session id in:\n{}", first.stderr))
        .to_owned();
    let second = front_end("second.jsonl", &["--resume", &session, "--prompt", "again"]);
    second.assert_end_turn();
    let history = format!(
        "[session] the history of {session}:\n[you] hello @notes.md [resource file://{}/notes.md]\nhello @notes.md\nremember the milk\n[session] end of the history of {session}\nagain\n",
        project.display()
    );
    assert!(second.stdout.starts_with(&history), "{}", second.stdout);
    let traced = std::fs::read_to_string(dir.join("second.jsonl")).unwrap();
    let methods: Vec<String> = traced
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|entry| entry["dir"] == "out" && entry["msg"].get("id").is_some())
        .filter_map(|entry| entry["msg"]["method"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(methods, ["initialize", "session/load", "session/prompt"]);
}
