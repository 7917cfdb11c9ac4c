//! `termsprawlctl acp --terminals`: canvas terminals end to end against the real
//! `termsprawl-headless` server over real tmux (the peer agent's commands appear as canvas nodes
//! another agent sees while they run), the clear start failure of `--terminals canvas` on a server
//! without `terminal_run`/`terminal_wait`, `auto` choosing canvas on headless, and `tmux` keeping
//! the local backend.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use termsprawl_protocol::{ToolRequest, ToolResult};

use crate::acp::{Peer, Place, TURN_END, finish, peer, run};
use crate::headless::Headless;
use crate::support::Fixture;

/// A `termsprawl-headless serve` whose project folder is the place's session root, and two agent
/// nodes: `front` (the session of `termsprawlctl acp`) and `watcher` (the test's view from
/// outside).
struct Canvas {
    _server: Headless,
    front: PathBuf,
    watcher: PathBuf,
}

impl Canvas {
    fn start(place: &Place) -> Canvas {
        let server = Headless::start(&place.path().join("data"), &place.root(), |_| {});
        let front = server.session("front");
        let watcher = server.session("watcher");
        Canvas { _server: server, front, watcher }
    }

    /// One call as the watcher agent; its value.
    fn watch(&self, operation: &str, args: &Value) -> Value {
        let request = ToolRequest::new(operation, args);
        match termsprawl_transport::call_blocking(&self.watcher, &request) {
            ToolResult::Success { value } => value.unwrap_or(Value::Null),
            ToolResult::Failure { error } => panic!("{operation} failed: {error}"),
        }
    }

    /// The nodes of `canvas_list`.
    fn nodes(&self) -> Vec<Value> {
        self.watch("canvas_list", &json!({})).as_array().unwrap().clone()
    }

    /// `termsprawlctl --session FRONT acp … --prompt PROMPT -- peer`, not yet started.
    fn front_end(&self, place: &Place, peer: &Peer, terminals: &str, prompt: &str) -> Command {
        let session = self.front.to_string_lossy().into_owned();
        place.command(
            peer,
            &["--session", &session],
            &["--terminals", terminals, "--prompt", prompt],
        )
    }
}

/// The run nodes of a `canvas_list`: terminals that are not the two agents.
fn run_nodes(nodes: &[Value]) -> Vec<Value> {
    nodes.iter().filter(|node| node["kind"] == "terminal").cloned().collect()
}

#[test]
fn canvas_terminals_show_each_command_as_a_node_while_it_runs_and_release_removes_it() {
    let peer = peer();
    let place = Place::new();
    let headless = Canvas::start(&place);
    assert_eq!(run_nodes(&headless.nodes()), Vec::<Value>::new());

    let child = headless.front_end(&place, &peer, "canvas", "canvas").spawn().unwrap();
    // Watch from outside while the front end runs: the node of `echo hi; sleep 2; exit 3` and
    // its state as another agent reads it.
    let mut seen: Option<(Value, Value)> = None;
    let mut child = child;
    while child.try_wait().unwrap().is_none() {
        if seen.is_none()
            && let Some(node) = run_nodes(&headless.nodes()).into_iter().find(|node| {
                node["title"].as_str().is_some_and(|title| title.contains("echo hi; sleep 2"))
            })
        {
            let read =
                headless.watch("terminal_read", &json!({"nodeId": node["nodeId"], "since": 0}));
            seen = Some((node, read));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let finished = finish(child, Duration::from_mins(2));
    finished.assert_end_turn();
    let (node, read) = seen.expect("the command's node never appeared in canvas_list");
    // Issue 25: only the words that need quotes are quoted.
    assert_eq!(node["title"], "sh -c 'echo hi; sleep 2; exit 3'");
    assert_eq!(read["running"], true, "{read}");
    let node_id = node["nodeId"].as_str().unwrap();

    let report = finished.report();
    assert!(report["output_running"]["ok"].get("exitStatus").is_none(), "{report}");
    assert_eq!(report["wait"], json!({"ok": {"exitCode": 3}}));
    assert_eq!(
        report["output"],
        json!({"ok": {"exitStatus": {"exitCode": 3}, "output": "hi\n", "truncated": false}})
    );
    assert_eq!(report["release"], json!({"ok": {}}));
    assert_eq!(report["output_after_release"]["error"], -32602);
    // The transcript says where the command shows.
    let terminal_id = report["terminal_id"].as_str().unwrap();
    assert!(
        finished
            .stdout
            .contains(&format!("terminal {terminal_id} runs in the canvas node {node_id}")),
        "{}",
        finished.stdout
    );
    // Kill ends a command that ignores SIGTERM; the terminal stays readable.
    assert_eq!(report["kill"], json!({"ok": {}}));
    assert_eq!(report["kill_wait"], json!({"ok": {"signal": "SIGKILL"}}));
    assert_eq!(report["kill_output"]["ok"]["output"], "started\n");
    assert_eq!(report["kill_output"]["ok"]["exitStatus"], json!({"signal": "SIGKILL"}));
    // outputByteLimit keeps the tail on the canvas too.
    let limited = &report["limited"]["ok"];
    let full = (1..=2000).fold(String::new(), |mut text, number| {
        let _ = writeln!(text, "{number}");
        text
    });
    let output = limited["output"].as_str().unwrap();
    assert_eq!((output.len(), limited["truncated"].clone()), (100, json!(true)));
    assert!(full.ends_with(output), "not the tail: {output:?}");
    assert_eq!(limited["exitStatus"], json!({"exitCode": 0}));
    // Every released node is gone; no tmux session of the local backend was made.
    assert_eq!(run_nodes(&headless.nodes()), Vec::<Value>::new());
    assert_eq!(place.tmux_sessions(), Vec::<String>::new());
    let failures = place.check_trace(&peer);
    assert_eq!(failures, Vec::<Value>::new());
}

#[test]
fn auto_chooses_canvas_on_headless_and_tmux_keeps_the_local_backend() {
    let peer = peer();
    let place = Place::new();
    let headless = Canvas::start(&place);

    let finished = run(headless.front_end(&place, &peer, "auto", "canvas"));
    finished.assert_end_turn();
    let report = finished.report();
    assert_eq!(report["wait"], json!({"ok": {"exitCode": 3}}));
    assert!(finished.stdout.contains("runs in the canvas node "), "{}", finished.stdout);
    assert!(!finished.stderr.contains("local tmux server"), "{}", finished.stderr);
    assert_eq!(place.tmux_sessions(), Vec::<String>::new());

    let finished = run(headless.front_end(&place, &peer, "tmux", "terminal"));
    finished.assert_end_turn();
    let report = finished.report();
    assert_eq!(report["wait"], json!({"ok": {"exitCode": 3}}));
    assert_eq!(report["tmux_sessions_showing_output"].as_array().unwrap().len(), 1, "{report}");
    assert!(
        finished.stdout.contains("runs in tmux: tmux -L termsprawl-acp attach -t "),
        "{}",
        finished.stdout
    );
    // The canvas never saw a run node from the tmux backend.
    assert_eq!(run_nodes(&headless.nodes()), Vec::<Value>::new());
}

#[test]
fn terminals_canvas_fails_at_start_without_the_operations_or_a_session() {
    let peer = peer();
    let place = Place::new();
    let mut app = Fixture::new();
    app.answer(
        "session_info",
        ToolResult::ok(
            json!({"nodeId": "agent-1", "operations": ["terminal_open", "terminal_read"]}),
        ),
    );
    let session = app.session_file().to_string_lossy().into_owned();
    let options = ["--terminals", "canvas", "--prompt", "canvas"];
    let finished = run(place.command(&peer, &["--session", &session], &options));
    assert_eq!(finished.code(), Some(2), "{}", finished.stderr);
    assert!(
        finished.stderr.contains(
            "--terminals canvas: the tool server cannot host canvas terminals: its session_info.operations lacks terminal_run and terminal_wait"
        ),
        "{}",
        finished.stderr
    );
    assert!(finished.stderr.contains("use --terminals tmux or auto"), "{}", finished.stderr);
    // The agent never ran: nothing went over the wire, and only session_info reached the app.
    assert!(place.traced("out").is_empty() && place.traced("in").is_empty());
    assert_eq!(finished.stdout, "");
    let received: Vec<String> =
        app.take_received().into_iter().map(|received| received.operation).collect();
    assert_eq!(received, ["session_info"]);
    assert!(!finished.stderr.contains(&app.token()), "the token leaked");

    // auto on the same server: the local backend, said once.
    let finished = run(place.command(&peer, &["--session", &session], &["--prompt", "terminal"]));
    finished.assert_end_turn();
    assert!(
        finished.stderr.contains(
            "agent terminals run on the local tmux server, not on the canvas: its session_info.operations lacks terminal_run and terminal_wait"
        ),
        "{}",
        finished.stderr
    );
    assert!(finished.stdout.contains("runs in tmux: "), "{}", finished.stdout);

    // An unreachable server and a missing session file are as clear.
    app.stop();
    let finished = run(place.command(&peer, &["--session", &session], &options));
    assert_eq!(finished.code(), Some(2), "{}", finished.stderr);
    assert!(
        finished.stderr.contains("--terminals canvas: the tool server is unreachable: "),
        "{}",
        finished.stderr
    );
    // Issue 25: not "lacks protocol 1.3.0" for a server that is only down.
    assert!(!finished.stderr.contains("protocol 1.3.0"), "{}", finished.stderr);
    assert!(
        finished.stderr.contains("start termsprawl, or use --terminals tmux or auto"),
        "{}",
        finished.stderr
    );
    let finished = run(place.command(&peer, &[], &options));
    assert_eq!(finished.code(), Some(2), "{}", finished.stderr);
    assert!(
        finished.stderr.contains(
            "--terminals canvas needs the termsprawl session file (--session or TERMSPRAWL_SESSION_FILE)"
        ),
        "{}",
        finished.stderr
    );
}

/// Issue 38 item 4: while the agent waits for a canvas terminal's exit, the tool call that shows
/// it carries the time waited and the last line of output, rewritten in place (one line, however
/// long the wait), in a tmux pane; in a pipe nothing of it is written.
#[test]
fn a_waiting_tool_call_shows_the_last_line_in_place_and_nothing_in_a_pipe() {
    let place = Place::new();
    let headless = Canvas::start(&place);
    let node = crate::acp_interactive::Node::start_canvas(&place.root(), &headless.front, &[]);
    node.wait_for("connected to", 1);
    node.type_line("watch 6");
    let card = "[tool] Watch a build (execute, in_progress) · waiting ";
    // The progress moves on: a later line replaces an earlier one on the same row.
    node.wait_for("last: \"step-2\"", 1);
    let screen = node.wait_for("last: \"step-4\"", 1);
    assert_eq!(screen.matches(card).count(), 1, "{screen}");
    assert!(!screen.contains("last: \"step-2\""), "{screen}");
    // The call's end replaces its progress line in place: the completed line follows the card.
    let screen = node.wait_for(TURN_END, 1);
    assert_eq!(screen.matches(card).count(), 0, "the progress line replaced:\n{screen}");
    assert!(
        screen.contains("canvas node terminal-")
            && screen.contains(" runs in the canvas node ")
            && screen.contains("\n[tool] Watch a build (execute, completed)\n"),
        "{screen}"
    );
    assert_eq!(node.reports()[0]["wait"], json!({"ok": {"exitCode": 0}}));
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);

    let peer = peer();
    let finished = run(headless.front_end(&place, &peer, "canvas", "watch 2"));
    finished.assert_end_turn();
    assert_eq!(finished.report()["wait"], json!({"ok": {"exitCode": 0}}));
    assert!(!finished.stdout.contains("· waiting"), "{}", finished.stdout);
    assert!(!finished.stdout.contains('\x1b'), "{}", finished.stdout);
}
