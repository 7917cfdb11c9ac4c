//! Tests of the canvas backend's mapping of `terminal/*` onto the 1.3.0 operations, against the
//! shared fake app (a real loopback tool server with canned answers per operation).

use std::path::Path;

use serde_json::{Value, json};
use termsprawl_protocol::ToolResult;
use termsprawl_test_support::fake::{FakeApp, Received};

use super::{CanvasTerminals, check_operations, command_line};
use crate::connection::code;
use crate::options::TerminalBackend;
use crate::terminal::backend::ChoiceError;
use crate::terminal::{Backend, ExitStatus, Spec, ToolServer, choose, reachability};

struct Fixture {
    app: FakeApp,
    cwd: tempfile::TempDir,
    terminals: CanvasTerminals,
}

async fn fixture() -> Fixture {
    let app = FakeApp::start().await.unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let terminals = CanvasTerminals::new(app.session_file().to_path_buf(), cwd.path().to_owned());
    Fixture { app, cwd, terminals }
}

/// The answer of `terminal_run`/`terminal_read`/`terminal_wait` with these state members.
fn state(
    node_id: &str,
    output: &str,
    cursor: u64,
    running: bool,
    code: &Value,
    signal: &Value,
) -> Value {
    json!({
        "nodeId": node_id, "reached": !running, "running": running, "exitCode": code,
        "signal": signal, "output": output, "truncated": false, "cursor": cursor,
    })
}

fn args(received: &Received) -> Value {
    serde_json::from_str(&received.args).unwrap()
}

fn operations(received: &[Received]) -> Vec<&str> {
    received.iter().map(|received| received.operation.as_str()).collect()
}

impl Fixture {
    /// Creates a terminal whose `terminal_run` answers node `n1`; the requests are taken.
    async fn created(&self, spec: Spec) -> String {
        self.app.respond(ToolResult::ok(state("n1", "", 0, true, &Value::Null, &Value::Null)));
        let terminal_id = self.terminals.create(spec).await.unwrap();
        self.app.take_received();
        terminal_id
    }
}

#[tokio::test]
async fn create_runs_the_quoted_command_line_at_once_with_env_and_cwd() {
    let fixture = fixture().await;
    fixture.app.respond(ToolResult::ok(state("n7", "", 0, true, &Value::Null, &Value::Null)));
    let terminal_id = fixture
        .terminals
        .create(Spec {
            command: "printf '%s|%s\\n'".to_owned(),
            args: vec!["it's".to_owned(), "a b".to_owned()],
            env: vec![("FOO_1".to_owned(), "x=y z".to_owned())],
            cwd: Some(fixture.cwd.path().to_string_lossy().into_owned()),
            output_byte_limit: None,
        })
        .await
        .unwrap();
    let received = fixture.app.take_received();
    assert_eq!(operations(&received), ["terminal_run"]);
    let sent = args(&received[0]);
    let line = r"printf '%s|%s\n' 'it'\''s' 'a b'";
    assert_eq!(sent["command"], format!("exec </dev/null\n{line}"));
    assert_eq!(sent["title"], line);
    assert_eq!(sent["cwd"], json!(fixture.cwd.path()));
    assert_eq!(sent["env"], json!(["PAGER=", "GIT_PAGER=cat", "FOO_1=x=y z"]));
    assert_eq!(sent["timeoutMs"].as_f64(), Some(0.0));
    assert_eq!(fixture.terminals.location(&terminal_id).as_deref(), Some("the canvas node n7"));
    // Ids are our own and unique; the default cwd is the session's.
    fixture.app.respond(ToolResult::ok(state("n8", "", 0, true, &Value::Null, &Value::Null)));
    let second = fixture.terminals.create(Spec::of("true")).await.unwrap();
    assert_ne!(second, terminal_id);
    let sent = args(&fixture.app.take_received()[0]);
    assert_eq!(sent["cwd"], json!(fixture.cwd.path()));
    assert_eq!(sent["title"], "true");
}

#[test]
fn the_command_line_is_the_command_then_each_argument_quoted_only_when_it_needs_it() {
    assert_eq!(command_line("ls -l", &[]), "ls -l");
    assert_eq!(command_line("echo", &["$HOME".to_owned(), String::new()]), "echo '$HOME' ''");
    // Issue 25: the title claude-agent-acp's terminals got was `/bin/sh '-lc' '…'`.
    assert_eq!(
        command_line("/bin/sh", &["-lc".to_owned(), "echo hi".to_owned()]),
        "/bin/sh -lc 'echo hi'"
    );
    assert_eq!(command_line("ls", &["src/main.rs".to_owned()]), "ls src/main.rs");
}

#[tokio::test]
async fn create_refuses_bad_cwd_and_env_names_without_calling_and_reports_server_errors() {
    let fixture = fixture().await;
    let cases = [
        (Spec { cwd: Some("relative".to_owned()), ..Spec::of("true") }, "the cwd must be absolute"),
        (
            Spec { cwd: Some("/nonexistent/dir".to_owned()), ..Spec::of("true") },
            "the cwd is not a directory",
        ),
        (
            Spec { env: vec![("1X".to_owned(), "secret".to_owned())], ..Spec::of("true") },
            "invalid environment variable name \"1X\"",
        ),
        (
            Spec { env: vec![("A=B".to_owned(), "v".to_owned())], ..Spec::of("true") },
            "invalid environment variable name",
        ),
        (Spec { env: vec![(String::new(), "v".to_owned())], ..Spec::of("true") }, "invalid"),
    ];
    for (spec, message) in cases {
        let error = fixture.terminals.create(spec).await.unwrap_err();
        assert_eq!(error.code, code::INVALID_PARAMS, "{message}");
        assert!(error.message.contains(message), "{}", error.message);
        assert!(!error.message.contains("secret"), "{}", error.message);
    }
    assert!(fixture.app.take_received().is_empty());

    fixture.app.respond(ToolResult::failure("command must not be empty"));
    let error = fixture.terminals.create(Spec::of(" ")).await.unwrap_err();
    assert_eq!(error.code, code::INTERNAL_ERROR);
    assert_eq!(error.message, "terminal_run failed: command must not be empty");
    fixture.app.respond(ToolResult::ok(json!({"running": true})));
    let error = fixture.terminals.create(Spec::of("true")).await.unwrap_err();
    assert_eq!(error.message, "terminal_run answered no nodeId");
}

#[tokio::test]
async fn output_reads_everything_since_zero_with_the_exit_status_once_exited() {
    let fixture = fixture().await;
    let terminal_id = fixture.created(Spec::of("sh -c 'echo hi; exit 3'")).await;

    fixture.app.respond(ToolResult::ok(state("n1", "hi\n", 3, true, &Value::Null, &Value::Null)));
    let running = fixture.terminals.output(&terminal_id).await.unwrap();
    assert_eq!(running.to_json(), json!({"output": "hi\n", "truncated": false}));
    let received = fixture.app.take_received();
    assert_eq!(operations(&received), ["terminal_read"]);
    let sent = args(&received[0]);
    assert_eq!(sent["nodeId"], "n1");
    assert_eq!(sent["since"].as_f64(), Some(0.0));
    assert_eq!(sent["maxChars"].as_f64(), Some(100_000.0));

    fixture.app.respond(ToolResult::ok(state(
        "n1",
        "hi\nbye\n",
        7,
        false,
        &json!(3),
        &Value::Null,
    )));
    let exited = fixture.terminals.output(&terminal_id).await.unwrap();
    assert_eq!(
        exited.to_json(),
        json!({"output": "hi\nbye\n", "truncated": false, "exitStatus": {"exitCode": 3, "signal": null}})
    );
    fixture.app.respond(ToolResult::ok(state("n1", "", 0, false, &Value::Null, &json!("SIGKILL"))));
    let killed = fixture.terminals.output(&terminal_id).await.unwrap();
    assert_eq!(
        killed.exit_status,
        Some(ExitStatus { exit_code: None, signal: Some("SIGKILL".to_owned()) })
    );

    fixture.app.respond(ToolResult::failure("Local terminal not found in this project"));
    let error = fixture.terminals.output(&terminal_id).await.unwrap_err();
    assert_eq!(error.code, code::INTERNAL_ERROR);
    assert!(error.message.contains("terminal_read failed: Local terminal not found"));
    let error = fixture.terminals.output("term-99").await.unwrap_err();
    assert_eq!(error.code, code::INVALID_PARAMS);
}

#[tokio::test]
async fn output_keeps_the_tail_within_the_byte_limit_on_a_character_boundary() {
    let fixture = fixture().await;
    let terminal_id = fixture.created(Spec { output_byte_limit: Some(5), ..Spec::of("x") }).await;
    // The server is asked for as many UTF-16 units as bytes are allowed: never fewer bytes.
    fixture.app.respond(ToolResult::ok(state("n1", "ééé", 40, false, &json!(0), &Value::Null)));
    let output = fixture.terminals.output(&terminal_id).await.unwrap();
    assert_eq!(args(&fixture.app.take_received()[0])["maxChars"].as_f64(), Some(5.0));
    assert_eq!(output.output, "éé");
    assert!(output.truncated);

    let zero = fixture.created(Spec { output_byte_limit: Some(0), ..Spec::of("x") }).await;
    fixture.app.respond(ToolResult::ok(state("n1", "a", 3, false, &json!(0), &Value::Null)));
    let output = fixture.terminals.output(&zero).await.unwrap();
    assert_eq!(args(&fixture.app.take_received()[0])["maxChars"].as_f64(), Some(1.0));
    assert_eq!((output.output.as_str(), output.truncated), ("", true));
}

#[tokio::test]
async fn output_is_truncated_when_the_read_was_cut_and_not_when_output_raced_the_cursor() {
    let fixture = fixture().await;
    let terminal_id = fixture.created(Spec { output_byte_limit: Some(10), ..Spec::of("x") }).await;
    // At the cap with fewer characters than the cursor: the server dropped the start.
    fixture.app.respond(ToolResult::ok(state(
        "n1",
        "0123456789",
        25,
        false,
        &json!(0),
        &Value::Null,
    )));
    assert!(fixture.terminals.output(&terminal_id).await.unwrap().truncated);
    // Under the cap: output printed after the server's read, counted by its cursor.
    fixture.app.respond(ToolResult::ok(state("n1", "0123", 9, true, &Value::Null, &Value::Null)));
    let output = fixture.terminals.output(&terminal_id).await.unwrap();
    assert_eq!((output.output.as_str(), output.truncated), ("0123", false));
    // Exactly at the cap and complete.
    fixture.app.respond(ToolResult::ok(state(
        "n1",
        "0123456789",
        10,
        false,
        &json!(0),
        &Value::Null,
    )));
    assert!(!fixture.terminals.output(&terminal_id).await.unwrap().truncated);
}

#[tokio::test]
async fn wait_for_exit_waits_again_in_30_second_slices_until_the_process_ended() {
    let fixture = fixture().await;
    let terminal_id = fixture.created(Spec::of("sleep 70")).await;
    fixture.app.respond(ToolResult::ok(state("n1", "", 0, true, &Value::Null, &Value::Null)));
    fixture.app.respond(ToolResult::ok(state("n1", "", 0, true, &Value::Null, &Value::Null)));
    fixture.app.respond(ToolResult::ok(state("n1", "", 0, false, &Value::Null, &json!("SIGTERM"))));
    let status = fixture.terminals.wait_for_exit(&terminal_id, None).await.unwrap();
    assert_eq!(status.to_json(), json!({"exitCode": null, "signal": "SIGTERM"}));
    let received = fixture.app.take_received();
    assert_eq!(operations(&received), ["terminal_wait"; 3]);
    for request in &received {
        let sent = args(request);
        assert_eq!(sent["nodeId"], "n1");
        assert_eq!(sent["until"], "exit");
        assert_eq!(sent["timeoutMs"].as_f64(), Some(30_000.0));
        assert!(sent.get("since").is_none() && sent.get("text").is_none(), "{sent}");
    }
    // A closed node ends the wait with the server's error.
    fixture.app.respond(ToolResult::failure("Terminal was closed while waiting"));
    let error = fixture.terminals.wait_for_exit(&terminal_id, None).await.unwrap_err();
    assert_eq!(error.message, "terminal_wait failed: Terminal was closed while waiting");
    fixture.app.respond(ToolResult::ok(json!({"nodeId": "n1"})));
    let error = fixture.terminals.wait_for_exit(&terminal_id, None).await.unwrap_err();
    assert_eq!(error.code, code::INTERNAL_ERROR);
}

/// Issue 38 item 4: a watched wait is a chain of 1 s waits from the start of the output, each
/// reporting the last line; it ends when the command has exited, and a closed node is its error.
#[tokio::test]
async fn a_watched_wait_reports_the_last_line_of_each_turn() {
    let fixture = fixture().await;
    let terminal_id = fixture.created(Spec::of("make test")).await;
    fixture.app.respond(ToolResult::ok(state(
        "n1",
        "building\nstep 1\n",
        16,
        true,
        &Value::Null,
        &Value::Null,
    )));
    fixture.app.respond(ToolResult::ok(state(
        "n1",
        "step 2\n",
        23,
        true,
        &Value::Null,
        &Value::Null,
    )));
    fixture.app.respond(ToolResult::ok(state("n1", "done\n", 28, false, &json!(2), &Value::Null)));
    let mut seen = Vec::new();
    let mut report = |progress: &termsprawl_transport::long_wait::WaitProgress| {
        seen.push(progress.last_line.clone());
    };
    let status = fixture.terminals.wait_for_exit(&terminal_id, Some(&mut report)).await.unwrap();
    assert_eq!(status.to_json(), json!({"exitCode": 2, "signal": null}));
    let lines: Vec<String> = seen.into_iter().flatten().collect();
    assert_eq!(lines, ["step 1", "step 2", "done"]);
    let received = fixture.app.take_received();
    assert_eq!(operations(&received), ["terminal_wait"; 3]);
    let sent: Vec<(Value, Value)> = received
        .iter()
        .map(|request| {
            let sent = args(request);
            (sent["since"].clone(), sent["timeoutMs"].clone())
        })
        .collect();
    assert_eq!(sent[..2], [(json!(0), json!(1000)), (json!(16), json!(1000))], "{sent:?}");
    assert_eq!(sent[2], (json!(23), json!(1000)));
    fixture.app.respond(ToolResult::failure("Terminal was closed while waiting"));
    let mut ignore = |_: &termsprawl_transport::long_wait::WaitProgress| {};
    let error = fixture.terminals.wait_for_exit(&terminal_id, Some(&mut ignore)).await.unwrap_err();
    assert_eq!(error.message, "terminal_wait failed: Terminal was closed while waiting");
}

#[tokio::test]
async fn kill_keeps_the_terminal_and_release_kills_a_running_one_then_closes_its_node() {
    let fixture = fixture().await;
    let terminal_id = fixture.created(Spec::of("sleep 300")).await;
    fixture.app.respond(ToolResult::ok(state("n1", "", 0, false, &Value::Null, &json!("SIGKILL"))));
    fixture.terminals.kill(&terminal_id).await.unwrap();
    let received = fixture.app.take_received();
    assert_eq!(operations(&received), ["terminal_kill"]);
    assert_eq!(args(&received[0]), json!({"nodeId": "n1"}));
    assert!(fixture.terminals.location(&terminal_id).is_some(), "kill keeps the terminal");

    // Still running: read, kill, close.
    fixture.app.respond(ToolResult::ok(state("n1", "", 0, true, &Value::Null, &Value::Null)));
    fixture.terminals.release(&terminal_id).await.unwrap();
    let received = fixture.app.take_received();
    assert_eq!(operations(&received), ["terminal_read", "terminal_kill", "terminal_close"]);
    assert_eq!(args(&received[2]), json!({"nodeId": "n1"}));
    for later in [
        fixture.terminals.output(&terminal_id).await.unwrap_err(),
        fixture.terminals.wait_for_exit(&terminal_id, None).await.unwrap_err(),
        fixture.terminals.kill(&terminal_id).await.unwrap_err(),
        fixture.terminals.release(&terminal_id).await.unwrap_err(),
    ] {
        assert_eq!(later.code, code::INVALID_PARAMS, "{}", later.message);
    }
    assert!(fixture.app.take_received().is_empty());

    // Exited already: no kill.
    let exited = fixture.created(Spec::of("true")).await;
    fixture.app.respond(ToolResult::ok(state("n1", "", 0, false, &json!(0), &Value::Null)));
    fixture.terminals.release(&exited).await.unwrap();
    assert_eq!(operations(&fixture.app.take_received()), ["terminal_read", "terminal_close"]);

    // A close that fails is reported; the id is released all the same.
    let failing = fixture.created(Spec::of("true")).await;
    fixture.app.respond(ToolResult::ok(state("n1", "", 0, false, &json!(0), &Value::Null)));
    fixture.app.respond(ToolResult::failure("Local terminal not found in this project"));
    let error = fixture.terminals.release(&failing).await.unwrap_err();
    assert!(error.message.starts_with("terminal_close failed: "), "{}", error.message);
    assert_eq!(fixture.terminals.output(&failing).await.unwrap_err().code, code::INVALID_PARAMS);
}

#[tokio::test]
async fn shutdown_releases_every_terminal_still_held() {
    let fixture = fixture().await;
    let first = fixture.created(Spec::of("sleep 300")).await;
    let _second = fixture.created(Spec::of("sleep 300")).await;
    fixture.terminals.release(&first).await.unwrap();
    fixture.app.take_received();
    fixture.app.respond(ToolResult::ok(state("n1", "", 0, true, &Value::Null, &Value::Null)));
    fixture.terminals.shutdown().await;
    let received = fixture.app.take_received();
    assert_eq!(operations(&received), ["terminal_read", "terminal_kill", "terminal_close"]);
}

#[test]
fn the_server_must_list_terminal_run_and_terminal_wait() {
    let listed = |names: &[&str]| ToolResult::ok(json!({"nodeId": "a", "operations": names}));
    assert_eq!(
        check_operations(&listed(&["terminal_read", "terminal_run", "terminal_wait"])),
        Ok(())
    );
    assert_eq!(
        check_operations(&listed(&["terminal_read"])),
        Err("its session_info.operations lacks terminal_run and terminal_wait".to_owned())
    );
    assert_eq!(
        check_operations(&listed(&["terminal_run"])),
        Err("its session_info.operations lacks terminal_wait".to_owned())
    );
    assert_eq!(
        check_operations(&ToolResult::ok(json!({"nodeId": "a"}))),
        Err("its session_info lists no operations".to_owned())
    );
    assert_eq!(check_operations(&ToolResult::failure("gone")), Err("gone".to_owned()));
}

#[tokio::test]
async fn the_option_selects_the_backend() {
    let cwd = Path::new("/");
    let with_ops = FakeApp::start().await.unwrap();
    with_ops.answer(
        "session_info",
        ToolResult::ok(json!({"operations": ["terminal_run", "terminal_wait", "terminal_read"]})),
    );
    let without = FakeApp::start().await.unwrap();
    without.answer("session_info", ToolResult::ok(json!({"operations": ["terminal_read"]})));

    let chosen = choose(TerminalBackend::Auto, Some(with_ops.session_file()), cwd).await.unwrap();
    assert!(matches!(chosen.backend, Backend::Canvas(_)));
    assert_eq!(chosen.notice, None);
    let chosen = choose(TerminalBackend::Canvas, Some(with_ops.session_file()), cwd).await.unwrap();
    assert!(matches!(chosen.backend, Backend::Canvas(_)));
    // tmux never asks the server; the bridge's question is asked apart.
    with_ops.take_received();
    let chosen = choose(TerminalBackend::Tmux, Some(with_ops.session_file()), cwd).await.unwrap();
    assert!(matches!(chosen.backend, Backend::Tmux(_)));
    assert_eq!(chosen.server, ToolServer::NotAsked);
    assert!(with_ops.take_received().is_empty());
    assert_eq!(reachability(with_ops.session_file()).await, ToolServer::Reachable);

    let chosen = choose(TerminalBackend::Auto, Some(without.session_file()), cwd).await.unwrap();
    assert!(matches!(chosen.backend, Backend::Tmux(_)));
    assert_eq!(
        chosen.notice.as_deref(),
        Some(
            "agent terminals run on the local tmux server, not on the canvas: its session_info.operations lacks terminal_run and terminal_wait"
        )
    );
    let chosen = choose(TerminalBackend::Auto, None, cwd).await.unwrap();
    assert!(matches!(chosen.backend, Backend::Tmux(_)));
    assert_eq!(chosen.notice, None);

    let error =
        choose(TerminalBackend::Canvas, Some(without.session_file()), cwd).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "--terminals canvas: the tool server cannot host canvas terminals: its session_info.operations lacks terminal_run and terminal_wait (they need terminal_run and terminal_wait, protocol 1.3.0); use --terminals tmux or auto"
    );
    assert_eq!(
        choose(TerminalBackend::Canvas, None, cwd).await.unwrap_err(),
        ChoiceError::NoSession
    );
    let missing = with_ops.temp_dir().unwrap().join("nowhere/sessions/x.json");
    // Unreachable is told apart from lacking the operations (issue 25).
    let error = choose(TerminalBackend::Canvas, Some(&missing), cwd).await.unwrap_err();
    assert!(matches!(error, ChoiceError::Unreachable(_)), "{error}");
    assert!(
        error.to_string().starts_with("--terminals canvas: the tool server is unreachable: "),
        "{error}"
    );
    assert!(
        error.to_string().ends_with("; start termsprawl, or use --terminals tmux or auto"),
        "{error}"
    );
    assert!(!error.to_string().contains("protocol 1.3.0"), "{error}");
    let chosen = choose(TerminalBackend::Auto, Some(&missing), cwd).await.unwrap();
    assert!(matches!(chosen.server, ToolServer::Unreachable(_)), "{:?}", chosen.server);
    assert!(matches!(reachability(&missing).await, ToolServer::Unreachable(_)));
    assert!(chosen.notice.unwrap().starts_with(
        "agent terminals run on the local tmux server: the tool server is unreachable ("
    ));
}

#[tokio::test]
async fn auto_does_not_wait_more_than_the_probe_timeout_for_a_silent_server() {
    let app = FakeApp::start().await.unwrap();
    app.hold_all();
    let started = std::time::Instant::now();
    let chosen =
        choose(TerminalBackend::Auto, Some(app.session_file()), Path::new("/")).await.unwrap();
    let waited = started.elapsed();
    assert!(matches!(chosen.backend, Backend::Tmux(_)));
    assert!(chosen.notice.unwrap().contains("no response within 10 s"), "waited {waited:?}");
    assert!(waited < std::time::Duration::from_secs(15), "{waited:?}");
    app.release(1);
}
