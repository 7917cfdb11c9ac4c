//! The tmux control-mode client: terminal calls start no tmux process each, the client holds no
//! session of its own (the server still exits with its last session), it comes back after the
//! server or the client itself was killed, and a server that never answers fails a call at its
//! deadline.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use termsprawl_external_term::{SearchPath, find_tmux};
use termsprawl_headless::control::ControlRequest;
use termsprawl_protocol::ToolResult;

use crate::support::{Agent, Fixture, fails, ok, wait_for_output};

fn id(value: &Value) -> String {
    value["nodeId"].as_str().unwrap().to_owned()
}

/// A `tmux` that appends its arguments to `<dir>/calls` and runs the real one.
fn logging_tmux(dir: &Path) -> SearchPath {
    let real = find_tmux(&SearchPath::from_env()).unwrap();
    let script = format!(
        "#!/bin/sh\necho \"$*\" >> '{calls}'\nexec '{real}' \"$@\"\n",
        calls = dir.join("calls").display(),
        real = real.display()
    );
    std::fs::write(dir.join("tmux"), script).unwrap();
    std::fs::set_permissions(dir.join("tmux"), std::fs::Permissions::from_mode(0o755)).unwrap();
    SearchPath::new(Some(dir.as_os_str()), None)
}

/// The tmux processes started so far, except the liveness round's listings (one per round,
/// never per call).
fn tmux_processes(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("calls"))
        .unwrap_or_default()
        .lines()
        .filter(|line| !line.contains(" list-sessions "))
        .map(str::to_owned)
        .collect()
}

/// Submit, wait, every kind of read, and input of awkward text.
async fn drive(agent: &Agent, shell: &str, round: usize, typed: &Path) {
    let marker = format!("round-{round}");
    ok(agent, "terminal_submit", json!({"nodeId": shell, "command": format!("echo {marker}")}))
        .await;
    let waited = ok(
        agent,
        "terminal_wait",
        json!({"nodeId": shell, "until": "text", "text": marker, "since": 0, "timeoutMs": 10000}),
    )
    .await;
    assert_eq!(waited["reached"], true, "{waited}");
    let read = ok(agent, "terminal_read", json!({"nodeId": shell})).await;
    assert!(read["output"].as_str().unwrap().contains(&marker), "{read}");
    let since = ok(agent, "terminal_read", json!({"nodeId": shell, "since": 0})).await;
    assert!(since["output"].as_str().unwrap().contains(&marker), "{since}");
    let screen = ok(agent, "terminal_read", json!({"nodeId": shell, "view": "screen"})).await;
    assert_eq!((&screen["rows"], &screen["cols"]), (&json!(48), &json!(160)), "{screen}");

    // Text that tmux's parser would change if it were not quoted, across lines.
    let text = format!("a'b\"c $HOME ; #{{pane_id}} \\ ~ -x {round}\nsecond line\n");
    let command = format!("cat > '{}'", typed.display());
    ok(agent, "terminal_submit", json!({"nodeId": shell, "command": command})).await;
    ok(agent, "terminal_input", json!({"nodeId": shell, "text": text, "keys": ["C-d"]})).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::fs::read_to_string(typed).unwrap_or_default() != text {
        assert!(Instant::now() < deadline, "typed {:?}", std::fs::read_to_string(typed));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn terminal_calls_start_no_tmux_process_each_and_show_no_control_session() {
    let gate = tempfile::TempDir::new().unwrap();
    let search_path = logging_tmux(gate.path());
    let fixture = Fixture::start_with(|config| config.search_path = search_path).await;
    let agent = fixture.agent("alpha").await;
    let shell = id(&ok(&agent, "terminal_open", json!({})).await);
    let typed = fixture.project.join("typed");
    drive(&agent, &shell, 0, &typed).await;
    let control = fixture.server().tmux().control_client_pid();
    assert!(control.is_some(), "no control client runs");
    let started = tmux_processes(gate.path());
    assert!(
        started.iter().any(|line| line.contains(" -C attach-session -f no-output")),
        "{started:?}"
    );

    for round in 1..6 {
        drive(&agent, &shell, round, &typed).await;
    }
    let later = tmux_processes(gate.path());
    assert_eq!(later[started.len()..], [] as [String; 0], "tmux processes started by calls");
    assert_eq!(fixture.server().tmux().control_client_pid(), control);

    // The client holds no session: tmux lists exactly the nodes' sessions.
    let listed = fixture.guard.tmux(&["list-sessions", "-F", "#{session_name}"]);
    let mut sessions: Vec<String> =
        String::from_utf8_lossy(&listed.stdout).lines().map(str::to_owned).collect();
    sessions.sort();
    let mut expected = vec![format!("ts-{}", agent.node_id), format!("ts-{shell}")];
    expected.sort();
    assert_eq!(sessions, expected);
    let nodes = ok(&agent, "canvas_list", json!({})).await;
    assert_eq!(nodes.to_string().matches("\"nodeId\"").count(), 2, "{nodes}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_server_still_exits_with_its_last_session() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let shell = id(&ok(&agent, "terminal_open", json!({})).await);
    ok(&agent, "terminal_read", json!({"nodeId": shell})).await;
    assert!(fixture.server().tmux().control_client_pid().is_some());
    for node_id in [&shell, &agent.node_id] {
        let killed = fixture.guard.tmux(&["kill-session", "-t", &format!("=ts-{node_id}")]);
        assert!(killed.status.success());
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while fixture.guard.tmux(&["list-sessions"]).status.success() {
        assert!(Instant::now() < deadline, "the tmux server outlived its last session");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_control_client_comes_back_after_kill_server() {
    let fixture = Fixture::start().await;
    let alpha = fixture.agent("alpha").await;
    let first = id(&ok(&alpha, "terminal_open", json!({})).await);
    ok(&alpha, "terminal_read", json!({"nodeId": first})).await;
    let before = fixture.server().tmux().control_client_pid().unwrap();
    assert!(fixture.guard.tmux(&["kill-server"]).status.success());

    // The next calls start a new server and a new client.
    let beta = fixture.agent("beta").await;
    let shell = id(&ok(&beta, "terminal_open", json!({})).await);
    ok(&beta, "terminal_submit", json!({"nodeId": shell, "command": "echo back-$((1+2))"})).await;
    wait_for_output(&beta, &shell, "back-3").await;
    let since = ok(&beta, "terminal_read", json!({"nodeId": shell, "since": 0})).await;
    assert_eq!(since["running"], true, "{since}");
    let after = fixture.server().tmux().control_client_pid().unwrap();
    assert_ne!(before, after);
    // The old node reads as not running.
    let old = ok(&beta, "terminal_read", json!({"nodeId": first})).await;
    assert_eq!(old["running"], false, "{old}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_control_client_is_replaced_by_the_next_call() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let shell = id(&ok(&agent, "terminal_open", json!({})).await);
    ok(&agent, "terminal_read", json!({"nodeId": shell})).await;
    let before = fixture.server().tmux().control_client_pid().unwrap();
    kill_client(before);
    // A control client hands its standard input and output to the tmux server, which answers
    // through them until it has seen the client's socket close: only then does the pipe end.
    let deadline = Instant::now() + Duration::from_secs(10);
    while fixture.server().tmux().control_client_pid() == Some(before) {
        assert!(Instant::now() < deadline, "the killed client's pipe never ended");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Calls go on: the first finds the client gone and starts another.
    ok(&agent, "terminal_submit", json!({"nodeId": shell, "command": "echo again-$((2*3))"})).await;
    wait_for_output(&agent, &shell, "again-6").await;
    let after = fixture.server().tmux().control_client_pid().unwrap();
    assert_ne!(before, after);
}

/// Sends SIGCONT to the stopped tmux server when dropped, so a failing test never leaves it
/// stopped (the fixture's guard could not kill it).
struct Stopped(String);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill").args(["-CONT", &self.0]).status();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stopped_tmux_server_fails_a_call_at_its_deadline_and_the_next_works() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let shell = id(&ok(&agent, "terminal_open", json!({})).await);
    ok(&agent, "terminal_read", json!({"nodeId": shell})).await;
    let pid = fixture.guard.tmux(&["display-message", "-p", "#{pid}"]);
    let pid = String::from_utf8_lossy(&pid.stdout).trim().to_owned();
    assert!(std::process::Command::new("kill").args(["-STOP", &pid]).status().unwrap().success());
    let stopped = Stopped(pid);

    let asked = Instant::now();
    let refused = fails(&agent, "terminal_read", json!({"nodeId": shell})).await;
    let took = asked.elapsed();
    assert_eq!(
        refused,
        "tmux capture-pane did not answer within 5 s: the managed tmux server is stopped or stuck"
    );
    assert!(Duration::from_millis(4500) <= took && took < Duration::from_secs(9), "{took:?}");

    drop(stopped);
    ok(&agent, "terminal_submit", json!({"nodeId": shell, "command": "echo resumed"})).await;
    wait_for_output(&agent, &shell, "resumed").await;
    let since = ok(&agent, "terminal_read", json!({"nodeId": shell, "since": 0})).await;
    assert_eq!(since["running"], true, "{since}");
}

/// Kills the control client of process `pid` (SIGKILL).
fn kill_client(pid: u32) {
    let killed = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status();
    assert!(killed.unwrap().success());
}

/// The pid of the fixture's tmux server.
fn server_pid(fixture: &Fixture) -> String {
    let pid = fixture.guard.tmux(&["display-message", "-p", "#{pid}"]);
    assert!(pid.status.success(), "{pid:?}");
    String::from_utf8_lossy(&pid.stdout).trim().to_owned()
}

/// tmux 3.3a dereferences a control client's state before the client has finished introducing
/// itself: a session created or closed in that moment (tmux tells every control client) crashes
/// the whole server, and every node with it. So no session of ours starts or ends while the
/// control client starts: with the client killed again and again while agents start at once and
/// their run nodes come and go, the server that ran at the start still runs at the end.
#[tokio::test(flavor = "multi_thread")]
async fn sessions_that_start_and_end_while_the_control_client_starts_leave_tmux_running() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let shell = id(&ok(&agent, "terminal_open", json!({})).await);
    ok(&agent, "terminal_read", json!({"nodeId": shell})).await;
    let server = server_pid(&fixture);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    // The control client, killed as soon as it runs, and started again by the next read.
    let restarts = {
        let (tmux, agent, shell, stop) =
            (fixture.server().tmux().clone(), agent.clone(), shell.clone(), stop.clone());
        tokio::spawn(async move {
            let mut restarts = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                if let Some(pid) = tmux.control_client_pid() {
                    kill_client(pid);
                    restarts += 1;
                }
                ok(&agent, "terminal_read", json!({"nodeId": shell})).await;
            }
            restarts
        })
    };
    // Agents start at once (each launch runs `new-session` as a process), and each runs a node
    // that is closed when its command ends.
    for round in 0..8 {
        let agents = fixture.agents_at_once((0..16).map(|index| format!("a-{round}-{index}")));
        let runs: Vec<_> = agents
            .into_iter()
            .map(|agent| {
                tokio::spawn(async move {
                    let args = json!({"command": "true", "keep": false, "timeoutMs": 20000});
                    ok(&agent, "terminal_run", args).await
                })
            })
            .collect();
        for run in runs {
            let run = run.await.unwrap();
            assert_eq!((&run["running"], &run["exitCode"]), (&json!(false), &json!(0)), "{run}");
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let restarts = restarts.await.unwrap();
    assert!(restarts > 10, "the control client restarted only {restarts} times");
    assert_eq!(server_pid(&fixture), server, "the tmux server was replaced: it crashed");
    let read = ok(&agent, "terminal_read", json!({"nodeId": shell, "since": 0})).await;
    assert_eq!(read["running"], true, "{read}");
}

/// The control client attaches to the oldest session, so nodes that come and go after it never
/// make it start again (each start is a moment in which tmux 3.3a can crash).
#[tokio::test(flavor = "multi_thread")]
async fn the_control_client_stays_through_nodes_that_come_and_go() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let shell = id(&ok(&agent, "terminal_open", json!({})).await);
    ok(&agent, "terminal_read", json!({"nodeId": shell})).await;
    for round in 0..4 {
        // The client starts again while a new node is the session used last (the one tmux
        // would pick by itself), and stays when that node ends.
        if let Some(pid) = fixture.server().tmux().control_client_pid() {
            kill_client(pid);
        }
        let node = id(&ok(&agent, "terminal_open", json!({})).await);
        ok(&agent, "terminal_submit", json!({"nodeId": node, "command": format!("echo {round}")}))
            .await;
        ok(&agent, "terminal_read", json!({"nodeId": node})).await;
        let client = fixture.server().tmux().control_client_pid().unwrap();
        ok(&agent, "terminal_close", json!({"nodeId": node})).await;
        let args = json!({"command": "true", "keep": false, "timeoutMs": 20000});
        ok(&agent, "terminal_run", args).await;
        ok(&agent, "terminal_read", json!({"nodeId": shell})).await;
        assert_eq!(fixture.server().tmux().control_client_pid(), Some(client), "round {round}");
    }
}

/// The session our control client is attached to, from tmux's list of clients.
fn control_client_session(fixture: &Fixture) -> String {
    let tmux = fixture.server().tmux();
    let listed = std::process::Command::new(tmux.program())
        .args(tmux.base_args())
        .args(["list-clients", "-F", "#{client_control_mode} #{client_session}"])
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    listed
        .lines()
        .find_map(|line| line.strip_prefix("1 "))
        .unwrap_or_else(|| panic!("no control client: {listed}"))
        .to_owned()
}

/// Issue 36: closing the node whose session the control client is attached to, while keys are
/// typed into other nodes through that client, loses no key and fails no call: the client is
/// moved to another session before the session ends (before, it ended with the session and the
/// keys it carried failed as "may have run").
#[tokio::test(flavor = "multi_thread")]
async fn closing_the_control_clients_session_while_keys_are_typed_loses_nothing() {
    let fixture = Fixture::start().await;
    // alpha's session is the oldest: the control client attaches to it.
    let alpha = fixture.agent("alpha").await;
    let beta = fixture.agent("beta").await;
    let mut shells = Vec::new();
    for index in 0..3 {
        let shell = id(&ok(&beta, "terminal_open", json!({})).await);
        let file = fixture.dir.path().join(format!("typed-{index}"));
        let command = format!("cat > '{}'", file.display());
        ok(&beta, "terminal_submit", json!({"nodeId": shell, "command": command})).await;
        shells.push((shell, file));
    }
    let client = fixture.server().tmux().control_client_pid().unwrap();
    assert_eq!(control_client_session(&fixture), format!("ts-{}", alpha.node_id));

    // Each typist types until the close is done and 20 lines more, and says how many it typed.
    let closed = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let typists: Vec<_> = shells
        .iter()
        .map(|(shell, _)| {
            let (beta, shell, closed) = (beta.clone(), shell.clone(), closed.clone());
            tokio::spawn(async move {
                let mut after = 0;
                let mut line = 0;
                while after < 20 {
                    if closed.load(std::sync::atomic::Ordering::Acquire) {
                        after += 1;
                    }
                    let args = json!({"nodeId": shell, "text": format!("line-{line}\n")});
                    let typed = crate::support::call(&beta, "terminal_input", args).await;
                    let failed = matches!(typed, ToolResult::Failure { .. });
                    assert!(!failed, "line {line} into {shell}: {typed:?}");
                    line += 1;
                }
                line
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let closing =
        fixture.server().control(ControlRequest::Close { node_id: alpha.node_id.clone() }).await;
    closed.store(true, std::sync::atomic::Ordering::Release);
    assert!(closing.is_ok(), "{closing:?}");
    let mut counts = Vec::new();
    for typist in typists {
        counts.push(typist.await.unwrap());
    }
    // The same client, moved to another session.
    assert_eq!(fixture.server().tmux().control_client_pid(), Some(client));
    assert_ne!(control_client_session(&fixture), format!("ts-{}", alpha.node_id));

    for ((shell, file), count) in shells.iter().zip(counts) {
        let expected: Vec<String> = (0..count).map(|line| format!("line-{line}\n")).collect();
        let expected = expected.concat();
        ok(&beta, "terminal_input", json!({"nodeId": shell, "keys": ["C-d"]})).await;
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::fs::read_to_string(file).unwrap_or_default() != expected {
            let typed = std::fs::read_to_string(file).unwrap_or_default();
            assert!(Instant::now() < deadline, "{shell} got {typed:?}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}
