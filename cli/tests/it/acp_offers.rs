//! Issue 25 end to end: modes, configuration options, the agent's commands and its sessions,
//! through the real `termsprawlctl acp` and the scripted peer agent (`ACP_TEST_FEATURES` says what
//! it offers), with `--prompt` and interactively in a tmux pane. Each test asserts the exact
//! requests the agent received (from the trace) and what the person saw.

use serde_json::{Value, json};

use crate::acp::{Finished, Place, TURN_END, peer, run};
use crate::acp_asks::style_before;
use crate::acp_interactive::Node;

/// The requests the front end sent, as `(method, params)`, in order.
fn requests(place: &Place) -> Vec<(String, Value)> {
    place
        .traced("out")
        .into_iter()
        .filter(|message| message.get("id").is_some() && message.get("method").is_some())
        .map(|message| (message["method"].as_str().unwrap().to_owned(), message["params"].clone()))
        .collect()
}

fn methods(place: &Place) -> Vec<String> {
    requests(place).into_iter().map(|(method, _)| method).collect()
}

/// `termsprawlctl acp OPTIONS -- peer` with the agent offering `features`.
fn run_with(place: &Place, features: &str, options: &[&str]) -> Finished {
    let peer = peer();
    let mut command = place.command(&peer, &[], options);
    command.env("ACP_TEST_FEATURES", features);
    run(command)
}

#[test]
fn mode_set_and_model_apply_before_the_first_prompt() {
    let place = Place::new();
    let options = ["--mode", "plan", "--set", "web=true", "--model", "smart", "--prompt", "state"];
    let finished = run_with(&place, "modes,config", &options);
    finished.assert_end_turn();
    assert_eq!(
        finished.report(),
        json!({"mode": "plan", "model": "smart", "web": true, "session": "sess-1"})
    );
    let sent = requests(&place);
    let names: Vec<&str> = sent.iter().map(|(method, _)| method.as_str()).collect();
    assert_eq!(
        names,
        [
            "initialize",
            "session/new",
            "session/set_mode",
            "session/set_config_option",
            "session/set_config_option",
            "session/prompt"
        ]
    );
    assert_eq!(sent[2].1, json!({"sessionId": "sess-1", "modeId": "plan"}));
    assert_eq!(
        sent[3].1,
        json!({"sessionId": "sess-1", "configId": "web", "type": "boolean", "value": true})
    );
    assert_eq!(sent[4].1, json!({"sessionId": "sess-1", "configId": "model", "value": "smart"}));
    let shown: Vec<&str> = finished
        .stdout
        .lines()
        .filter(|line| line.starts_with("[mode]") || line.starts_with("[config]"))
        .collect();
    assert_eq!(shown, ["[mode] now plan (Plan)", "[config] web = true", "[config] model = smart"]);
    assert_eq!(place.check_trace(&peer()), Vec::<Value>::new());
}

#[test]
fn an_unknown_mode_option_or_value_is_a_local_error_and_nothing_is_sent() {
    let cases: &[(&str, &[&str], &str)] = &[
        (
            "modes,config",
            &["--mode", "yolo"],
            "--mode yolo: unknown mode \"yolo\"; the agent offers: default, plan",
        ),
        ("config", &["--mode", "plan"], "--mode plan: the agent offers no modes"),
        (
            "modes,config",
            &["--set", "speed=1"],
            "--set speed=1: unknown config option \"speed\"; the agent offers: model, web",
        ),
        (
            "modes,config",
            &["--model", "huge"],
            "--model huge: invalid value \"huge\" for model; choose one of: fast, smart",
        ),
        (
            "modes,config",
            &["--set", "web=maybe"],
            "--set web=maybe: invalid value \"maybe\" for web; it is true or false",
        ),
        ("modes", &["--model", "fast"], "--model fast: the agent offers no model option"),
    ];
    for (features, flags, error) in cases {
        let place = Place::new();
        let mut options = flags.to_vec();
        options.extend(["--prompt", "state"]);
        let finished = run_with(&place, features, &options);
        assert_eq!(finished.code(), Some(2), "{flags:?}: {}", finished.stderr);
        assert!(
            finished.stderr.contains(&format!("termsprawlctl: acp: {error}\n")),
            "{flags:?}: {}",
            finished.stderr
        );
        assert_eq!(methods(&place), ["initialize", "session/new"], "{flags:?}");
    }
}

#[test]
fn the_agents_own_mode_and_option_changes_are_followed() {
    let place = Place::new();
    let finished = run_with(&place, "modes,config", &["--prompt", "switch"]);
    finished.assert_end_turn();
    assert!(finished.stdout.contains("[mode] now plan (Plan)\n"), "{}", finished.stdout);
    assert!(finished.stdout.contains("[config] web = true\n"), "{}", finished.stdout);
    assert!(!finished.stdout.contains("[config] model"), "{}", finished.stdout);
    assert!(!finished.stderr.contains("skipped"), "{}", finished.stderr);
}

#[test]
fn list_sessions_prints_every_page_and_exits() {
    let place = Place::new();
    let finished = run_with(&place, "list", &["--list-sessions"]);
    assert_eq!(finished.code(), Some(0), "{}", finished.stderr);
    assert_eq!(
        finished.stdout,
        "[sessions] 2 (id, updated, title, cwd):\n  old-1  2026-11-30T10:00:00Z  Fix the parser  (/)\n  old-2  -  -  (/)\n"
    );
    let sent = requests(&place);
    assert_eq!(
        sent.iter().map(|(method, _)| method.as_str()).collect::<Vec<_>>(),
        ["initialize", "session/list", "session/list"]
    );
    assert_eq!(sent[1].1, json!({}));
    assert_eq!(sent[2].1, json!({"cursor": "page-2"}));
    assert_eq!(place.check_trace(&peer()), Vec::<Value>::new());

    let place = Place::new();
    let finished = run_with(&place, "", &["--list-sessions"]);
    assert_eq!(finished.code(), Some(1));
    assert!(
        finished
            .stderr
            .contains("the agent does not list its sessions (it offers no session/list)"),
        "{}",
        finished.stderr
    );
    assert_eq!(methods(&place), ["initialize"]);
}

/// The history `session/load` replays for `old-1`, as the transcript shows it.
const OLD_1_HISTORY: &str = "[session] the history of old-1:\n[you] what is in the parser?\nThe parser reads **tokens**.\n[tool] Read parser.rs (read, completed)\n[you] and the lexer?\nThe lexer makes *tokens*.\n[session] end of the history of old-1\n";

#[test]
fn resume_prefers_session_load_with_the_history_else_resume_else_says_it_cannot() {
    let root = |place: &Place| place.root().to_string_lossy().into_owned();
    // Both offered (as Claude, Codex and opencode do): load, whose replayed history is shown as
    // a transcript before the turn, closed at its end.
    let place = Place::new();
    let finished = run_with(&place, "resume,load", &["--resume", "old-1", "--prompt", "state"]);
    finished.assert_end_turn();
    assert_eq!(methods(&place), ["initialize", "session/load", "session/prompt"]);
    let sent = requests(&place);
    assert_eq!(sent[1].1, json!({"sessionId": "old-1", "cwd": root(&place), "mcpServers": []}));
    assert!(finished.stdout.starts_with(OLD_1_HISTORY), "{}", finished.stdout);
    assert_eq!(finished.report()["session"], "old-1");
    assert!(finished.stderr.contains("(session old-1, resumed)"), "{}", finished.stderr);
    assert_eq!(place.check_trace(&peer()), Vec::<Value>::new());

    // Gemini CLI answers session/load first and replays after: the history is still closed at
    // its end, before the turn.
    let place = Place::new();
    let mut command = place.command(&peer(), &[], &["--resume", "old-1", "--prompt", "state"]);
    command.env("ACP_TEST_FEATURES", "load").env("ACP_TEST_REPLAY_LATE", "1");
    let finished = run(command);
    finished.assert_end_turn();
    assert!(finished.stdout.starts_with(OLD_1_HISTORY), "{}", finished.stdout);

    // resume only: the turn runs in the old session, and the person is told nothing is shown.
    let place = Place::new();
    let finished = run_with(&place, "resume", &["--resume", "old-1", "--prompt", "state"]);
    finished.assert_end_turn();
    assert_eq!(methods(&place), ["initialize", "session/resume", "session/prompt"]);
    assert_eq!(finished.report()["session"], "old-1");
    assert!(
        finished.stdout.starts_with("[session] this agent replays nothing on session/resume: the earlier turns of old-1 are not shown\n"),
        "{}",
        finished.stdout
    );

    // Neither: a clear error, and no session is made instead.
    let place = Place::new();
    let finished = run_with(&place, "", &["--resume", "old-1", "--prompt", "state"]);
    assert_eq!(finished.code(), Some(1));
    assert!(
        finished.stderr.contains(
            "cannot resume session old-1: the agent offers neither session/resume nor session/load"
        ),
        "{}",
        finished.stderr
    );
    assert_eq!(methods(&place), ["initialize"]);

    // An id the agent does not know: its error.
    let place = Place::new();
    let finished = run_with(&place, "resume", &["--resume", "nope", "--prompt", "state"]);
    assert_eq!(finished.code(), Some(1));
    assert!(finished.stderr.contains("session/resume nope failed: "), "{}", finished.stderr);
}

#[test]
fn the_session_is_closed_at_the_end_when_offered_and_its_id_printed() {
    let place = Place::new();
    let finished = run_with(&place, "close,resume", &["--prompt", "state"]);
    finished.assert_end_turn();
    assert_eq!(std::fs::read_to_string(place.root().join("closed.txt")).unwrap(), "sess-1\n");
    assert_eq!(methods(&place).last().map(String::as_str), Some("session/close"));
    assert!(
        finished.stderr.contains(
            "the session was sess-1; continue it with termsprawlctl acp --resume sess-1 -- AGENT"
        ),
        "{}",
        finished.stderr
    );
    let place = Place::new();
    let finished = run_with(&place, "", &["--prompt", "state"]);
    finished.assert_end_turn();
    assert!(!place.root().join("closed.txt").exists());
    assert!(!methods(&place).contains(&"session/close".to_owned()));
    assert!(finished.stderr.contains("the session was sess-1\n"), "{}", finished.stderr);
}

#[test]
fn interactively_modes_models_commands_and_sessions() {
    let node = Node::start(&[], &[("ACP_TEST_FEATURES", "all")]);
    node.wait_for("connected to", 1);
    node.wait_for("[default] > ", 1);
    node.type_line("/mode");
    let screen = node.wait_for("  plan (Plan): reads, never writes", 1);
    assert!(screen.contains("[mode] current: default (Default)"), "{screen}");
    assert!(screen.contains("* default (Default): asks before every edit"), "{screen}");
    node.type_line("/mode yolo");
    node.wait_for("[mode] unknown mode \"yolo\"; the agent offers: default, plan", 1);
    node.type_line("/mode plan");
    node.wait_for("[mode] now plan (Plan)", 1);
    node.wait_for("[plan] > ", 1);
    node.type_line("/model");
    let screen = node.wait_for("    smart (Smart): slower", 1);
    assert!(screen.contains("[model] model = fast"), "{screen}");
    node.type_line("/model smart");
    node.wait_for("[config] model = smart", 1);
    node.type_line("/config web maybe");
    node.wait_for("[config] invalid value \"maybe\" for web; it is true or false", 1);
    node.type_line("/config");
    node.wait_for("[config] web (Web search) = false", 1);
    // The agent announces its commands 0.1 s after the session answer (as fast-agent does); a
    // quick run types this far before then.
    node.wait_traced("available_commands_update");
    node.type_line("/help");
    let screen = node.wait_for("[help] the agent's commands (sent to it as prompt text):", 1);
    assert!(screen.contains(&format!("  {:<24} Review the changes", "/review <what to review>")));
    assert!(screen.contains(&format!("  {:<24} Summarize the session", "/summarize")));
    assert!(screen.contains(&format!("  {:<24} ", "/mode [ID]")), "{screen}");
    node.type_line("/review the parser");
    node.wait_for(TURN_END, 1);
    assert_eq!(node.reports()[0], json!({"command": "/review the parser", "session": "sess-1"}));
    node.type_line("state");
    node.wait_for(TURN_END, 2);
    assert_eq!(
        node.reports()[1],
        json!({"mode": "plan", "model": "smart", "web": false, "session": "sess-1"})
    );
    // `//NAME` reaches the agent's command where the front end has one of that name.
    node.type_line("//status now");
    node.wait_for(TURN_END, 3);
    assert_eq!(node.reports()[2], json!({"command": "/status now", "session": "sess-1"}));
    node.type_line("/sessions");
    node.wait_for("  old-2  -  -  (", 1);
    node.type_line("/resume old-2");
    node.wait_for("[session] now old-2", 1);
    // The continued session sent its commands before its answer: they are its, not forgotten.
    node.type_line("/help");
    let screen = node.wait_for("[help] the agent's commands (sent to it as prompt text):", 2);
    assert!(!screen.contains("[help] the agent announced no commands"), "{screen}");
    node.type_line("/status");
    let screen = node.wait_for("[status] agent terminals: the local tmux server", 1);
    assert!(screen.contains("[status] session old-2"), "{screen}");
    assert!(screen.contains("[status] termsprawl tools: not handed to the agent: no session file"));
    node.type_line("/quit");
    let screen = node.wait_for("[exit 0]", 1);
    assert!(screen.contains("the session was old-2; continue it with"), "{screen}");
    let names: Vec<String> = methods(&node.place);
    assert_eq!(
        names,
        [
            "initialize",
            "session/new",
            "session/set_mode",
            "session/set_config_option",
            "session/prompt",
            "session/prompt",
            "session/prompt",
            "session/list",
            "session/list",
            "session/load",
            "session/close"
        ]
    );
    let sent = requests(&node.place);
    assert_eq!(sent[4].1["prompt"], json!([{"type": "text", "text": "/review the parser"}]));
    assert_eq!(sent[10].1, json!({"sessionId": "old-2"}));
    assert_eq!(node.place.check_trace(&node.peer), Vec::<Value>::new());
}

/// Issue 25: every run left a 0-byte `/tmp/termsprawl-acp-agent-*.log`; an empty log is removed
/// at the end, a non-empty one is kept and named.
#[test]
fn the_temporary_agent_log_is_removed_when_empty_and_named_when_not() {
    let peer = peer();
    for (prompt, kept) in [("echo", false), ("stderr", true)] {
        let place = Place::new();
        let tmp = place.path().join("tmp");
        std::fs::create_dir(&tmp).unwrap();
        let output = std::process::Command::new(crate::support::BIN)
            .args(["acp", "--prompt", prompt, "--cwd"])
            .arg(place.root())
            .arg("--")
            .arg(&peer.python)
            .arg(&peer.agent)
            .env("TMPDIR", &tmp)
            .env("TMUX_TMPDIR", place.tmux_tmpdir())
            .env_remove("TERMSPRAWL_SESSION_FILE")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        let logs: Vec<_> = std::fs::read_dir(&tmp)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.to_string_lossy().contains("termsprawl-acp-agent-"))
            .collect();
        if kept {
            assert_eq!(logs.len(), 1, "{logs:?}");
            assert_eq!(std::fs::read_to_string(&logs[0]).unwrap(), "a note on stderr\n");
            assert!(
                stderr.contains(&format!("the agent's stderr is kept in {}\n", logs[0].display())),
                "{stderr}"
            );
        } else {
            assert_eq!(logs, Vec::<std::path::PathBuf>::new(), "{stderr}");
            assert!(!stderr.contains("is kept in"), "{stderr}");
        }
    }
}

/// Issue 25: `/status` says again that the agent got no bridge because the server was down.
#[test]
fn status_says_the_bridge_was_left_out_while_the_tool_server_was_down() {
    let mut app = crate::support::Fixture::new();
    let session = app.session_file().to_string_lossy().into_owned();
    app.stop();
    let node = Node::start(&[], &[("TERMSPRAWL_SESSION_FILE", &session)]);
    node.wait_for("connected to", 1);
    node.type_line("/status");
    let screen = node.wait_for("[status] agent terminals:", 1);
    assert!(
        screen.contains(
            "[status] termsprawl tools: not handed to the agent: the tool server was unreachable at start ("
        ),
        "{screen}"
    );
    assert_eq!(
        screen.matches("the agent starts without termsprawl's tools").count(),
        1,
        "{screen}"
    );
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);
    let new_session = requests(&node.place).into_iter().find(|(method, _)| method == "session/new");
    assert_eq!(new_session.unwrap().1["mcpServers"], json!([]));
}

/// Issue 25: the transcript of a file edit: the tool line once per change, the diff once (with
/// its tool call; the permission ask, which carries only the tool call's id, and the write say
/// nothing more of it: issue 35), a long result shortened with `/last` for the whole text, and one
/// line per terminal saying where it runs.
#[test]
fn an_edit_shows_its_diff_in_the_ask_and_the_write_and_a_long_result_is_shortened() {
    let node = Node::start(&[], &[]);
    node.wait_for("connected to", 1);
    node.type_line("edit");
    let screen = node.wait_for("choose 1-2 (cancelled after 600 s): ", 1);
    let notes = node.place.root().join("notes.txt");
    let diff = format!(
        "[diff] {path} (1 line removed, 1 added)\n  1 1   alpha\n  @@ -2 +2 @@\n  2   - beta\n    2 \
         + BETA\n",
        path = notes.display()
    );
    let ask = format!(
        "{diff}[permission] edit-1 (other)\n[diff] {}: shown above (1 line removed, 1 added)\n  1. \
         Allow once (allow_once)\n",
        notes.display()
    );
    assert!(screen.contains(&ask), "{screen}");
    node.type_line("1");
    let screen = node.wait_for(TURN_END, 1);
    assert_eq!(screen.matches("[tool] Edit notes.txt (edit, pending)").count(), 1, "{screen}");
    assert_eq!(screen.matches("[tool] Edit notes.txt (edit, completed)").count(), 1, "{screen}");
    assert_eq!(screen.matches(&diff).count(), 1, "{screen}");
    assert!(
        screen.contains(&format!(
            "[file] wrote {} (11 bytes)\n[tool] Edit notes.txt (edit, completed)",
            notes.display()
        )),
        "{screen}"
    );
    assert!(
        screen.contains("  result line 5\n  (… 15 more lines; /last shows the whole result)\n"),
        "{screen}"
    );
    assert!(!screen.contains("result line 6"), "{screen}");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "alpha\nBETA\n");
    node.type_line("/last");
    let screen = node.wait_for("result line 20", 1);
    assert!(screen.contains("[last] the whole result:\nresult line 1\n"), "{screen}");
    node.type_line("terminal");
    let screen = node.wait_for(TURN_END, 2);
    assert!(
        screen.contains("[terminal] term-1 runs in tmux: tmux -L termsprawl-acp attach -t "),
        "{screen}"
    );
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);
    assert_eq!(node.place.check_trace(&node.peer), Vec::<Value>::new());
}

/// Issue 25: on a terminal an agent message is rendered from Markdown (code blocks kept verbatim);
/// with `NO_COLOR` (or not on a terminal) it is the text as the agent sent it.
#[test]
fn agent_messages_are_rendered_from_markdown_on_a_terminal_and_plain_with_no_color() {
    let node = Node::start(&[], &[("NO_COLOR", "")]);
    node.wait_for("connected to", 1);
    node.type_line("markdown");
    let screen = node.wait_for(TURN_END, 1);
    let shown = "Title\nSome bold and `code`.\n┌─ rust\n│ let x = **y**;\n└─\n• one\nthe end\n─── ";
    assert!(screen.contains(shown), "{screen}");
    let styled = node.tmux(&["capture-pane", "-p", "-e", "-J", "-S", "-", "-t", "=node:"]);
    // tmux writes the styles back in its own way: bold starts, the code is green.
    assert!(styled.contains("Some \x1b[1mbold\x1b[0m"), "{styled:?}");
    assert!(styled.contains(" and \x1b[32m`code`"), "{styled:?}");
    // The code is kept verbatim, its keyword highlighted.
    assert!(style_before(&styled, "let").contains("35m"), "{styled:?}");
    assert!(styled.contains("let\x1b[39m x = **y**;"), "{styled:?}");
    // A trailing backslash continues the prompt on the next line.
    node.type_line("echo one\\");
    node.wait_for("... ", 1);
    node.type_line("two");
    node.wait_for(TURN_END, 2);
    assert_eq!(node.reports()[0]["text"], "echo one\ntwo");
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);

    let place = Place::new();
    let finished = run_with(&place, "", &["--prompt", "markdown"]);
    finished.assert_end_turn();
    assert_eq!(
        finished.stdout,
        "# Title\nSome **bold** and `code`.\n```rust\nlet x = **y**;\n```\n- one\nthe end\n"
    );
}

/// Issue 25: with a policy answering, the diff of the edit it allowed is still in the transcript,
/// once (issue 35).
#[test]
fn a_policy_answered_edit_ask_shows_its_diff() {
    let place = Place::new();
    let finished = run_with(&place, "", &["--permission", "allow-once", "--prompt", "edit full"]);
    finished.assert_end_turn();
    let notes = place.root().join("notes.txt");
    let diff = format!(
        "[diff] {path} (1 line removed, 1 added)\n  1 1   alpha\n  @@ -2 +2 @@\n  2   - beta\n    2 \
         + BETA\n",
        path = notes.display()
    );
    let allowed = format!(
        "{diff}[permission] edit-1: selected \"Allow once\" by the policy\n[diff] {}: shown above (1 \
         line removed, 1 added)\n",
        notes.display()
    );
    assert!(finished.stdout.contains(&allowed), "{}", finished.stdout);
    assert_eq!(finished.stdout.matches("- beta").count(), 1, "{}", finished.stdout);
    assert_eq!(finished.report()["outcome"], json!({"outcome": "selected", "optionId": "yes"}));
    assert_eq!(place.check_trace(&peer()), Vec::<Value>::new());
}

/// Issue 25: when `session/resume` or `session/load` answers -32000 (auth required), the front end
/// logs in as it does for `session/new` and sends the request once more: `--resume` through
/// `session/resume`, `/resume` through `session/load`; without a terminal the failure says why.
#[test]
fn a_resume_or_load_that_needs_a_login_logs_in_and_is_sent_again() {
    let node = Node::start(
        &["--resume", "old-2"],
        &[("ACP_TEST_FEATURES", "resume"), ("ACP_TEST_REQUIRE_AUTH", "1")],
    );
    let screen = node.wait_for("choose 1-1: ", 1);
    assert!(screen.contains("[auth] the agent requires authentication:"), "{screen}");
    node.type_line("1");
    node.wait_for("(session old-2, resumed)", 1);
    node.type_line("state");
    node.wait_for(TURN_END, 1);
    assert_eq!(node.reports()[0]["session"], "old-2");
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);
    assert_eq!(
        methods(&node.place),
        ["initialize", "session/resume", "authenticate", "session/resume", "session/prompt"]
    );

    let node =
        Node::start(&[], &[("ACP_TEST_FEATURES", "load"), ("ACP_TEST_REQUIRE_AUTH", "sessions")]);
    node.wait_for("connected to", 1);
    node.type_line("/resume old-1");
    node.wait_for("choose 1-1: ", 1);
    node.type_line("1");
    let screen = node.wait_for("[session] now old-1", 1);
    assert!(
        screen.contains("[session] the history of old-1:\n[you] what is in the parser?\n"),
        "{screen}"
    );
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);
    assert_eq!(
        methods(&node.place),
        ["initialize", "session/new", "session/load", "authenticate", "session/load"]
    );
    assert_eq!(node.place.check_trace(&node.peer), Vec::<Value>::new());

    // No terminal to choose a login with: the failure says so, and nothing else is sent.
    let place = Place::new();
    let mut command = place.command(&peer(), &[], &["--resume", "old-1", "--prompt", "state"]);
    command.env("ACP_TEST_FEATURES", "load").env("ACP_TEST_REQUIRE_AUTH", "sessions");
    let finished = run(command);
    assert_eq!(finished.code(), Some(1));
    assert!(
        finished.stderr.contains("the agent requires authentication (")
            && finished.stderr.contains("there is no terminal to choose a method"),
        "{}",
        finished.stderr
    );
    assert_eq!(methods(&place), ["initialize", "session/load"]);
}

/// Issue 25: on a terminal with colour a tool call's line is rewritten in place while it is the
/// last line shown, so the screen holds one line per call with its final status; a call whose
/// line is no longer the last gets a line per change. Plain output (a pipe) has a line per change.
#[test]
fn tool_lines_are_updated_in_place_on_a_terminal_and_once_per_change_in_a_pipe() {
    let node = Node::start(&[], &[("NO_COLOR", "")]);
    node.wait_for("connected to", 1);
    node.type_line("tools");
    let screen = node.wait_for(TURN_END, 1);
    let tools: Vec<&str> = screen.lines().filter(|line| line.starts_with("[tool] ")).collect();
    assert_eq!(
        tools,
        [
            "[tool] Read a.txt (read, completed)",
            "[tool] Run tests (execute, pending)",
            "[tool] Fetch docs (fetch, pending)",
            "[tool] Run tests (execute, failed)",
            "[tool] Fetch docs (fetch, completed)",
        ],
        "{screen}"
    );
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);

    let place = Place::new();
    let finished = run_with(&place, "", &["--prompt", "tools"]);
    finished.assert_end_turn();
    assert_eq!(
        finished.stdout,
        "[tool] Read a.txt (read, pending)\n[tool] Read a.txt (read, in_progress)\n\
         [tool] Read a.txt (read, completed)\n[tool] Run tests (execute, pending)\n\
         [tool] Fetch docs (fetch, pending)\n[tool] Run tests (execute, failed)\n\
         [tool] Fetch docs (fetch, completed)\n"
    );
}
