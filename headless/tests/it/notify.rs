//! Run notices (protocol 1.5.0, `spec/protocol.md` §4.9): `terminal_run --notify` tells its
//! caller's own agent node, with one submitted line, when a command still running at the answer
//! ends; over real tmux, real HTTP and the real `termsprawlctl`.
//!
//! The caller is an agent node whose program appends every line it receives to a file, so a test
//! sees both the pane (the line echoed on its screen and in its stream) and what was submitted.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use termsprawl_headless::control::{ControlRequest, LaunchRequest};

use crate::support::{Agent, Fixture, built_termsprawlctl, ok};

/// An agent node that files every line typed into it in `received` and prints nothing more: a
/// program that is not a shell (Python), since a notice is never typed into a shell.
async fn listener(fixture: &Fixture, name: &str) -> (Agent, PathBuf) {
    listener_printing(fixture, name, "").await
}

/// The listener's program: Python reading lines from the terminal and filing them in `received`.
fn listen_into(received: &Path) -> String {
    format!(
        "exec python3 -c 'import sys\nwith open(sys.argv[1], \"a\", buffering=1) as out:\n    for line in sys.stdin: out.write(line)' '{}'",
        received.display()
    )
}

/// [`listener`] whose node runs the shell commands `first` before it listens.
async fn listener_printing(fixture: &Fixture, name: &str, first: &str) -> (Agent, PathBuf) {
    let received = fixture.dir.path().join(format!("{name}.received"));
    let script = format!("{first} {}", listen_into(&received));
    let agent = launch(fixture, name, vec!["/bin/sh".to_owned(), "-c".to_owned(), script]).await;
    (agent, received)
}

/// Launches `argv` as the agent `name`.
async fn launch(fixture: &Fixture, name: &str, argv: Vec<String>) -> Agent {
    let value = fixture
        .server()
        .launch(LaunchRequest { project: None, agent: Some(name.to_owned()), title: None, argv })
        .await
        .unwrap();
    Agent {
        node_id: value["nodeId"].as_str().unwrap().to_owned(),
        session_file: PathBuf::from(value["sessionFile"].as_str().unwrap()),
    }
}

/// The notices among the lines `received` holds.
fn notices(received: &Path) -> Vec<String> {
    std::fs::read_to_string(received)
        .unwrap_or_default()
        .lines()
        .filter(|line| line.starts_with("[termsprawl] "))
        .map(str::to_owned)
        .collect()
}

/// Waits (at most `limit`) until `received` holds `count` notices; answers the notices then.
async fn wait_for_notices(received: &Path, count: usize, limit: Duration) -> Vec<String> {
    let deadline = Instant::now() + limit;
    loop {
        let found = notices(received);
        if found.len() >= count || Instant::now() >= deadline {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The caller's own node as its stream shows it (the pane's echo of what was typed).
async fn own_pane(agent: &Agent) -> String {
    let read = ok(agent, "terminal_read", json!({"nodeId": agent.node_id, "since": 0})).await;
    read["output"].as_str().unwrap().to_owned()
}

/// `termsprawlctl ARGS` as `agent`, in the direct form.
fn ctl(ctl: &Path, agent: &Agent, args: &[&str]) -> Value {
    let output = tokio::task::block_in_place(|| {
        Command::new(ctl)
            .args(args)
            .env_clear()
            .env("TERMSPRAWL_SESSION_FILE", &agent.session_file)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    });
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Splits a notice around its duration: what comes before ` after ` and what follows the
/// duration.
fn without_duration(notice: &str) -> (String, String) {
    let (head, tail) = notice.split_once(" after ").unwrap();
    let (_, tail) = tail.split_once(';').unwrap();
    (head.to_owned(), tail.to_owned())
}

fn node_id(value: &Value) -> String {
    value["nodeId"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_that_ends_after_its_answer_tells_its_caller_once() {
    let Some(ctl_program) = built_termsprawlctl() else { return };
    let fixture = Fixture::start().await;
    let (alpha, received) = listener(&fixture, "alpha").await;

    let started = Instant::now();
    let answer = ctl(
        &ctl_program,
        &alpha,
        &["terminal_run", "--notify", "--timeoutMs", "100", "--command", "sleep 3; exit 4"],
    );
    assert_eq!((&answer["running"], &answer["exitCode"]), (&json!(true), &Value::Null));
    let run = node_id(&answer);
    let cursor = answer["cursor"].as_u64().unwrap();

    let found = wait_for_notices(&received, 1, Duration::from_secs(5)).await;
    assert!(started.elapsed() < Duration::from_secs(5) + Duration::from_millis(500));
    assert_eq!(found.len(), 1, "{found:?}");
    let (head, tail) = without_duration(&found[0]);
    assert_eq!(head, format!("[termsprawl] {run} \"sleep 3; exit 4\" exited 4"));
    assert_eq!(
        tail,
        format!(" read it with terminal_read {{\"nodeId\":\"{run}\",\"since\":{cursor}}}")
    );
    assert!(found[0].contains(" after 3s;") || found[0].contains(" after 4s;"), "{}", found[0]);
    // The pane shows it once: typed into the caller's prompt and submitted.
    assert_eq!(own_pane(&alpha).await.matches(&found[0]).count(), 1);

    // Nothing more comes, and the node no longer notifies.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(notices(&received).len(), 1);
    let record = fixture.agent_tools().join("terminals").join(format!("{run}.notify"));
    let record: Value = serde_json::from_slice(&std::fs::read(record).unwrap()).unwrap();
    assert_eq!(record["state"], "delivered");

    // A run that ended within its answer tells nobody.
    let quick = ctl(
        &ctl_program,
        &alpha,
        &["terminal_run", "--notify", "--timeoutMs", "10000", "--command", "exit 1"],
    );
    assert_eq!(quick["running"], false);
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(notices(&received).len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_notice_survives_a_restart_and_is_never_repeated() {
    let mut fixture = Fixture::start().await;
    let (alpha, received) = listener(&fixture, "alpha").await;
    let answer = ok(
        &alpha,
        "terminal_run",
        json!({"command": "sleep 3; exit 4", "timeoutMs": 100, "notify": true}),
    )
    .await;
    assert_eq!(answer["running"], true);
    let run = node_id(&answer);

    // Restarted while the command runs: the new server delivers.
    fixture.restart().await;
    let found = wait_for_notices(&received, 1, Duration::from_secs(5)).await;
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with(&format!("[termsprawl] {run} \"sleep 3; exit 4\" exited 4 after "))
    );
    // Restarted after the delivery: nothing twice.
    fixture.restart().await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(notices(&received).len(), 1);

    // A command that ends while no server runs is told by the next one.
    let answer = ok(
        &alpha,
        "terminal_run",
        json!({"command": "sleep 1; kill -TERM $$", "timeoutMs": 100, "notify": true}),
    )
    .await;
    let run = node_id(&answer);
    fixture.stop().await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(fixture.agent_tools().join("terminals").join(format!("{run}.status")).exists());
    fixture.restart().await;
    let found = wait_for_notices(&received, 2, Duration::from_secs(5)).await;
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found[1].starts_with(&format!(
            "[termsprawl] {run} \"sleep 1; kill -TERM $$\" was killed by SIGTERM after "
        )),
        "{}",
        found[1]
    );
    fixture.restart().await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(notices(&received).len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_end_the_caller_was_answered_gets_no_notice_and_only_the_caller_is_told() {
    let fixture = Fixture::start().await;
    let (alpha, alpha_received) = listener(&fixture, "alpha").await;
    let (beta, beta_received) = listener(&fixture, "beta").await;

    // The caller's wait reported the end: no notice.
    let waited = ok(
        &alpha,
        "terminal_run",
        json!({"command": "sleep 1; exit 0", "timeoutMs": 100, "notify": true}),
    )
    .await;
    let exit = ok(
        &alpha,
        "terminal_wait",
        json!({"nodeId": node_id(&waited), "until": "exit", "timeoutMs": 10000}),
    )
    .await;
    assert_eq!((&exit["reached"], &exit["running"]), (&json!(true), &json!(false)));

    // Another agent's wait is no answer to the caller: the caller is still told, and only it.
    let shared = ok(
        &alpha,
        "terminal_run",
        json!({"command": "sleep 1; exit 5", "timeoutMs": 100, "notify": true}),
    )
    .await;
    let seen = ok(
        &beta,
        "terminal_wait",
        json!({"nodeId": node_id(&shared), "until": "exit", "timeoutMs": 10000}),
    )
    .await;
    assert_eq!(seen["exitCode"], 5);
    // A later answer to the caller while it runs moves the cursor the notice names.
    let moved = ok(
        &alpha,
        "terminal_run",
        json!({"command": "echo one; sleep 1.5; exit 6", "timeoutMs": 100, "notify": true}),
    )
    .await;
    let read = ok(
        &alpha,
        "terminal_wait",
        json!({"nodeId": node_id(&moved), "until": "text", "text": "one", "since": 0}),
    )
    .await;
    assert_eq!(read["running"], true);

    wait_for_notices(&alpha_received, 2, Duration::from_secs(5)).await;
    // Time for a third, which must not come.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let found = notices(&alpha_received);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found.iter().any(|notice| notice.starts_with(&format!(
            "[termsprawl] {} \"sleep 1; exit 5\" exited 5",
            node_id(&shared)
        ))),
        "{found:?}"
    );
    let moved_notice = format!(
        "read it with terminal_read {{\"nodeId\":\"{}\",\"since\":{}}}",
        node_id(&moved),
        read["cursor"]
    );
    assert!(found.iter().any(|notice| notice.ends_with(&moved_notice)), "{found:?}");
    assert!(!found.iter().any(|notice| notice.contains(&node_id(&waited))), "{found:?}");
    assert!(notices(&beta_received).is_empty());
    assert!(!own_pane(&beta).await.contains("[termsprawl]"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_run_names_the_signal_and_a_gone_caller_gets_nothing() {
    let fixture = Fixture::start().await;
    let (alpha, alpha_received) = listener(&fixture, "alpha").await;
    let (beta, _) = listener(&fixture, "beta").await;

    // Killed by another agent: the caller hears which signal ended it.
    let long = ok(
        &alpha,
        "terminal_run",
        json!({"command": "sleep 60", "timeoutMs": 100, "notify": true}),
    )
    .await;
    let killed = ok(&beta, "terminal_kill", json!({"nodeId": node_id(&long)})).await;
    assert_eq!(killed["signal"], "SIGKILL");
    let found = wait_for_notices(&alpha_received, 1, Duration::from_secs(5)).await;
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with(&format!(
            "[termsprawl] {} \"sleep 60\" was killed by SIGKILL after ",
            node_id(&long)
        )),
        "{}",
        found[0]
    );

    // The caller's node is closed before its run ends: nothing is typed anywhere, nothing fails.
    let orphan = ok(
        &beta,
        "terminal_run",
        json!({"command": "sleep 1.5; exit 3", "timeoutMs": 100, "notify": true}),
    )
    .await;
    fixture
        .server()
        .control(ControlRequest::Close { node_id: beta.node_id.clone() })
        .await
        .unwrap();
    let ended = ok(
        &alpha,
        "terminal_wait",
        json!({"nodeId": node_id(&orphan), "until": "exit", "timeoutMs": 10000}),
    )
    .await;
    assert_eq!(ended["exitCode"], 3);
    let record =
        fixture.agent_tools().join("terminals").join(format!("{}.notify", node_id(&orphan)));
    let deadline = Instant::now() + Duration::from_secs(5);
    let state = loop {
        let record: Value = serde_json::from_slice(&std::fs::read(&record).unwrap()).unwrap();
        if record["state"] != "due" || Instant::now() >= deadline {
            break record["state"].clone();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(state, "dropped");
    assert_eq!(notices(&alpha_received).len(), 1);
    // The server carries on.
    let after =
        ok(&alpha, "terminal_run", json!({"command": "echo fine", "timeoutMs": 10000})).await;
    assert_eq!(after["output"], "fine\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_notice_waits_until_the_callers_node_is_quiet() {
    let fixture = Fixture::start().await;
    // The caller prints for 4 s (an agent in the middle of a turn), then listens.
    let (alpha, received) = listener_printing(
        &fixture,
        "alpha",
        "i=0; while [ $i -lt 20 ]; do i=$((i+1)); echo busy-$i; sleep 0.2; done; echo busy-done;",
    )
    .await;
    let started = Instant::now();
    ok(
        &alpha,
        "terminal_run",
        json!({"command": "sleep 0.5; exit 0", "timeoutMs": 100, "notify": true}),
    )
    .await;
    let found = wait_for_notices(&received, 1, Duration::from_secs(10)).await;
    assert_eq!(found.len(), 1, "{found:?}");
    // Not before the node had been quiet for a second after its last line.
    assert!(started.elapsed() >= Duration::from_secs(4), "{:?}", started.elapsed());
    let pane = own_pane(&alpha).await;
    let (before, _) = pane.split_once(&found[0]).unwrap();
    assert!(before.contains("busy-done"), "{pane}");
}

/// A person types into the caller's node through a real tmux client (on a pseudo-terminal of
/// `script`): the notice waits until no key has come for 2 s, and goes on a line of its own.
#[tokio::test(flavor = "multi_thread")]
async fn a_notice_waits_until_a_person_stops_typing() {
    use std::io::Write as _;

    let fixture = Fixture::start().await;
    let (alpha, received) = listener(&fixture, "alpha").await;
    let tmux = fixture.server().tmux();
    let mut attach = vec![tmux.program().to_string_lossy().into_owned()];
    attach.extend(tmux.base_args().iter().map(|arg| arg.to_string_lossy().into_owned()));
    attach.extend(["attach-session".to_owned(), "-t".to_owned(), format!("=ts-{}", alpha.node_id)]);
    let attach: Vec<String> =
        attach.iter().map(|word| termsprawl_protocol::shell::single_quoted(word)).collect();
    let mut person = Command::new("script")
        .args(["-qfc", &attach.join(" "), "/dev/null"])
        .env("TERM", "xterm")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut keyboard = person.stdin.take().unwrap();
    // Attached once tmux lists a client that is not ours (control mode).
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let clients = Command::new(tmux.program())
            .args(tmux.base_args())
            .args(["list-clients", "-F", "#{client_control_mode}"])
            .output()
            .unwrap();
        if String::from_utf8_lossy(&clients.stdout).lines().any(|line| line == "0") {
            break;
        }
        assert!(Instant::now() < deadline, "the person's tmux client never attached");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    ok(
        &alpha,
        "terminal_run",
        json!({"command": "sleep 0.3; exit 0", "timeoutMs": 100, "notify": true}),
    )
    .await;
    // Typing for 4 s, a key every 0.4 s, then Enter.
    for _ in 0..10 {
        keyboard.write_all(b"x").unwrap();
        keyboard.flush().unwrap();
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert!(notices(&received).is_empty(), "a notice came while the person typed");
    }
    keyboard.write_all(b"\r").unwrap();
    keyboard.flush().unwrap();
    let last_key = Instant::now();
    let found = wait_for_notices(&received, 1, Duration::from_secs(10)).await;
    let waited = last_key.elapsed();
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(waited >= Duration::from_secs(2), "typed {waited:?} after the last key");
    let lines: Vec<String> =
        std::fs::read_to_string(&received).unwrap().lines().map(str::to_owned).collect();
    assert_eq!(lines, ["x".repeat(10), found[0].clone()]);
    let _ = person.kill();
    let _ = person.wait();
}

/// A caller's node that never goes quiet (an agent in a long turn) gets the notice anyway once
/// the idle limit has passed.
#[tokio::test(flavor = "multi_thread")]
async fn a_notice_to_a_node_that_never_goes_quiet_is_typed_after_the_limit() {
    let fixture =
        Fixture::start_with(|config| config.notice_idle_limit = Duration::from_secs(3)).await;
    let (alpha, received) =
        listener_printing(&fixture, "alpha", "(while :; do echo tick; sleep 0.2; done) &").await;
    let started = Instant::now();
    ok(&alpha, "terminal_run", json!({"command": "sleep 0.5", "timeoutMs": 0, "notify": true}))
        .await;
    let found = wait_for_notices(&received, 1, Duration::from_secs(10)).await;
    let waited = started.elapsed();
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(Duration::from_secs(3) <= waited && waited < Duration::from_secs(8), "{waited:?}");
}

/// A caller whose node shows a shell gets no notice typed (the shell would run it: with a file
/// `t` in its folder and `.` on its path, `[termsprawl]` runs `t`, and `read it with …` leaves
/// it in `read`): the notice waits, and goes once an agent program reads the terminal.
#[tokio::test(flavor = "multi_thread")]
async fn a_notice_never_goes_to_a_shell_and_goes_once_an_agent_program_reads() {
    use std::os::unix::fs::PermissionsExt as _;

    let fixture = Fixture::start().await;
    let ran = fixture.dir.path().join("ran-t");
    let trap = fixture.project.join("t");
    std::fs::write(&trap, format!("#!/bin/sh\ntouch '{}'\n", ran.display())).unwrap();
    std::fs::set_permissions(&trap, std::fs::Permissions::from_mode(0o755)).unwrap();
    let shell = format!("cd '{}' && PATH=.:$PATH exec /bin/sh -i", fixture.project.display());
    let alpha = launch(&fixture, "alpha", vec!["/bin/sh".to_owned(), "-c".to_owned(), shell]).await;
    // The hazard is real: the glob finds `t`, and `t` runs.
    let tmux = fixture.server().tmux();
    let target = format!("=ts-{}:", alpha.node_id);
    let keys = |text: &str| {
        let sent = Command::new(tmux.program())
            .args(tmux.base_args())
            .args(["send-keys", "-t", &target, "-l", text])
            .output()
            .unwrap();
        assert!(sent.status.success(), "{sent:?}");
        let sent = Command::new(tmux.program())
            .args(tmux.base_args())
            .args(["send-keys", "-t", &target, "Enter"])
            .output()
            .unwrap();
        assert!(sent.status.success(), "{sent:?}");
    };
    keys("[termsprawl]");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !ran.exists() {
        assert!(Instant::now() < deadline, "typing `[termsprawl]` did not run `t`");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    std::fs::remove_file(&ran).unwrap();

    let run = ok(
        &alpha,
        "terminal_run",
        json!({"command": "sleep 0.5; exit 0", "timeoutMs": 100, "notify": true}),
    )
    .await;
    let node = node_id(&run);
    // The shell stays idle at its prompt well past the quiet it would have needed.
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert!(!ran.exists(), "the notice ran `t` in the shell");
    let pane = own_pane(&alpha).await;
    assert!(!pane.contains(&format!("[termsprawl] {node}")), "typed into the shell: {pane}");
    let record = fixture.agent_tools().join("terminals").join(format!("{node}.notify"));
    let record: Value = serde_json::from_slice(&std::fs::read(&record).unwrap()).unwrap();
    assert_eq!(record["state"], "due", "{record}");

    // An agent program takes the terminal (the shell is not left in `read`: it runs this).
    let received = fixture.dir.path().join("alpha.received");
    keys(&listen_into(&received));
    let found = wait_for_notices(&received, 1, Duration::from_secs(10)).await;
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with(&format!("[termsprawl] {node} \"sleep 0.5; exit 0\" exited 0")));
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(notices(&received), found, "exactly one notice");
    assert!(!ran.exists(), "`t` ran");
}

/// A notice whose caller's node shows only a shell until the idle limit is dropped (recorded so,
/// so no restart types it), and is not typed.
#[tokio::test(flavor = "multi_thread")]
async fn a_notice_to_a_shell_is_dropped_at_the_limit() {
    let fixture =
        Fixture::start_with(|config| config.notice_idle_limit = Duration::from_secs(2)).await;
    let alpha = fixture.agent("alpha").await;
    let run = ok(
        &alpha,
        "terminal_run",
        json!({"command": "sleep 0.3; exit 0", "timeoutMs": 100, "notify": true}),
    )
    .await;
    let node = node_id(&run);
    let record = fixture.agent_tools().join("terminals").join(format!("{node}.notify"));
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let state: Value = serde_json::from_slice(&std::fs::read(&record).unwrap()).unwrap();
        if state["state"] == "dropped" {
            break;
        }
        assert_eq!(state["state"], "due", "{state}");
        assert!(Instant::now() < deadline, "never dropped: {state}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let pane = own_pane(&alpha).await;
    assert!(!pane.contains("[termsprawl]"), "typed into the shell: {pane}");
}
