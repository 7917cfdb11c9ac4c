//! The real `termsprawl-headless` (`serve`, two agents from `launch`, real tmux) passes every
//! rule with `--mutating` and two sessions.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use std::sync::Arc;

use serde_json::{Value, json};

use crate::support::{Action, Seen, conformance, plant_at};

/// `termsprawl-headless` as cargo builds it next to this package's binary (`cargo test
/// --workspace` builds it; this crate may not depend on `headless`).
///
/// When it is missing, the test cannot be skipped silently: under CI (`CI` set and not empty) it
/// fails with what to build; elsewhere it is skipped with that message on stderr.
#[expect(clippy::print_stderr, reason = "a skipped test says so on stderr")]
fn built_headless() -> Option<PathBuf> {
    let path = Path::new(crate::support::CONFORMANCE).with_file_name("termsprawl-headless");
    if path.is_file() {
        return Some(path);
    }
    let message = format!(
        "termsprawl-headless is not built next to termsprawl-conformance ({}): run `cargo build -p termsprawl-headless` first",
        path.display()
    );
    let under_ci = std::env::var_os("CI").is_some_and(|value| !value.is_empty());
    assert!(!under_ci, "{message} (CI is set, so this test fails instead of skipping)");
    eprintln!("skipped: {message}");
    None
}

/// A running `serve` and its tmux server, both stopped when dropped.
struct Served {
    child: Child,
    user_data: PathBuf,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let socket = self.user_data.join("tmux-sockets").join("termsprawl");
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(socket)
            .arg("kill-server")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

fn launch(headless: &Path, user_data: &Path) -> PathBuf {
    let output = Command::new(headless)
        .arg("--data")
        .arg(user_data)
        // An agent program, not a shell: the notify rules need one (a notice is never typed
        // into a shell, `spec/protocol.md` §4.9). Python reading lines, printing nothing.
        .args([
            "launch",
            "--json",
            "--",
            "python3",
            "-c",
            "import sys\nfor line in sys.stdin: pass",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "launch failed: {}", String::from_utf8_lossy(&output.stderr));
    let value: Value = serde_json::from_slice(&output.stdout).unwrap();
    PathBuf::from(value["sessionFile"].as_str().unwrap())
}

/// `termsprawl-headless serve` on a fresh data directory with its project; the data directory.
fn serve(headless: &Path, dir: &Path) -> (Served, PathBuf) {
    let user_data = dir.join("data");
    let project = dir.join("project");
    std::fs::create_dir(&project).unwrap();
    let child = Command::new(headless)
        .arg("--data")
        .arg(&user_data)
        .args(["serve", "--ctl", "/bin/true", "--project"])
        .arg(&project)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let served = Served { child, user_data: user_data.clone() };
    let endpoint = user_data.join("agent-tools").join("endpoint.json");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !endpoint.exists() || !user_data.join("agent-tools").join("headless.sock").exists() {
        assert!(Instant::now() < deadline, "serve did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    (served, user_data)
}

fn node_of(session_file: &Path) -> String {
    let session: Value = serde_json::from_slice(&std::fs::read(session_file).unwrap()).unwrap();
    session["nodeId"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn with_a_link_the_peer_agent_is_readable_and_waitable_and_still_not_drivable() {
    let Some(headless) = built_headless() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (served, user_data) = serve(&headless, dir.path());
    let first = launch(&headless, &user_data);
    let second = launch(&headless, &user_data);
    let status = Command::new(&headless)
        .arg("--data")
        .arg(&user_data)
        .args(["link", &node_of(&first), &node_of(&second)])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let args = vec![
        "--session",
        first.to_str().unwrap(),
        "--session",
        second.to_str().unwrap(),
        "--mutating",
        "--json",
        "--level",
        "strict",
    ];
    let run = conformance(&args).await;
    drop(served);
    assert_eq!(run.code, Some(0), "failures:\n{}\nstderr: {}", run.failures(), run.stderr);
    let passed = run.ids("PASS");
    for id in
        ["links.read-linked-peer", "links.wait-linked-peer", "links.input-peer", "links.kill-peer"]
    {
        assert!(passed.contains(id), "{id} did not pass");
    }
    let skipped = run.ids("SKIP");
    for id in ["links.read-unlinked-peer", "links.wait-unlinked-peer"] {
        assert!(skipped.contains(id), "{id} did not skip");
    }
}

/// Rules `termsprawl-headless` must pass (not merely not fail) at strict with mutating operations.
const MUST_PASS: [&str; 60] = [
    "notify.one-notice",
    "notify.line-format",
    "isolation.identity",
    "isolation.agent-status",
    "isolation.joined-tokens",
    "mutate.submitted-output",
    "files.lock.owner-listens",
    "files.launcher",
    "files.launch-dir",
    "body.stalled",
    "body.stalled-prompt",
    "validate.prototype-name:terminal_read",
    "validate.item-nul:terminal_run.env",
    "validate.cursor-range:terminal_read.since",
    "result.terminal_read",
    "result.terminal_run",
    "result.terminal_wait:text",
    "result.terminal_kill",
    "wait.run-exit",
    "wait.run-node-listed",
    "wait.exit-reached",
    "wait.text-since",
    "wait.read-since",
    "wait.timeout",
    "wait.kill-sigkill",
    "wait.closed-while-waiting",
    "wait.cursor-monotonic",
    "wait.follow-joins",
    "wait.bad-run-command",
    "wait.bad-run-cwd",
    "wait.bad-run-env",
    "wait.bad-wait-text",
    "wait.bad-kill-shell",
    "links.read-unlinked-peer",
    "links.wait-unlinked-peer",
    "links.input-peer",
    "links.kill-peer",
    "links.shell-shared",
    "links.run-node-shared",
    // 1.4.0's members, and the validation rules of 1.4.0 and 1.5.0 after step 5.
    "wait.read-screen",
    "wait.until-change",
    "wait.keep-false",
    "validate.operation-rule:terminal_input.keys",
    "validate.operation-rule:terminal_input.text",
    "validate.operation-rule:terminal_read.view",
    "validate.operation-rule:terminal_wait.anyOf",
    "validate.operation-rule:terminal_wait.regex",
    "validate.operation-rule:terminal_search.pattern",
    "validate.operation-rule:terminal_search.since",
    "validate.operation-rule:terminal_search.limit",
    "validate.operation-rule:terminal_search.context",
    "validate.values:terminal_wait.until",
    "validate.missing:terminal_search.pattern",
    "survey.list",
    "survey.search",
    "survey.search-bad-pattern",
    "wait.any-of",
    "wait.regex",
    "wait.until-input",
    "wait.until-input-sleep",
];

#[tokio::test(flavor = "multi_thread")]
async fn termsprawl_headless_passes_every_rule_with_mutating_operations() {
    let Some(headless) = built_headless() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (served, user_data) = serve(&headless, dir.path());
    let first = launch(&headless, &user_data);
    let second = launch(&headless, &user_data);
    let args = vec![
        "--session",
        first.to_str().unwrap(),
        "--session",
        second.to_str().unwrap(),
        "--mutating",
        "--json",
        "--level",
        "strict",
    ];
    let run = conformance(&args).await;
    assert_eq!(run.code, Some(0), "failures:\n{}\nstderr: {}", run.failures(), run.stderr);
    let report = run.report();
    assert_eq!(report["failed"], 0);
    assert_eq!(report["version"], "1.3");
    let passed = run.ids("PASS");
    for id in MUST_PASS {
        assert!(passed.contains(id), "{id} did not pass");
    }
    // headless's catalog is this suite's table: nothing is read as missing.
    assert!(!report["facts"].to_string().contains("catalog differs"), "{}", report["facts"]);
    for file in [&first, &second] {
        let session: Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
        assert!(!run.stdout.contains(session["token"].as_str().unwrap()));
    }
    // Nothing the run opened is left on the canvas: the shell and the run nodes are closed, the
    // two agents remain (read with the real `termsprawlctl`, built beside the binary).
    let ctl = Path::new(crate::support::CONFORMANCE).with_file_name("termsprawlctl");
    let listed = Command::new(&ctl)
        .arg("canvas_list")
        .env("TERMSPRAWL_SESSION_FILE", &first)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|error| {
            panic!("{} ({error}): run `cargo build -p termsprawl-cli` first", ctl.display())
        });
    drop(served);
    assert!(listed.status.success(), "{}", String::from_utf8_lossy(&listed.stderr));
    let nodes: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let kinds: Vec<&str> =
        nodes.as_array().unwrap().iter().map(|node| node["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["agent", "agent"], "left on the canvas: {nodes}");
}

/// `terminal_kill` answered as if the command had ended by SIGTERM.
fn sigterm(mut answer: Value) -> Value {
    if answer["ok"] == true {
        answer["value"]["signal"] = json!("SIGTERM");
    }
    answer
}

#[tokio::test(flavor = "multi_thread")]
async fn a_kill_reported_as_sigterm_fails_the_kill_rule() {
    let Some(headless) = built_headless() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (served, user_data) = serve(&headless, dir.path());
    let first = launch(&headless, &user_data);
    let endpoint = user_data.join("agent-tools").join("endpoint.json");
    let url: Value = serde_json::from_slice(&std::fs::read(&endpoint).unwrap()).unwrap();
    let port: u16 = url["url"]
        .as_str()
        .unwrap()
        .split(':')
        .nth(2)
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    plant_at(
        &endpoint,
        port,
        Arc::new(|seen: &Seen<'_>| {
            let kill = seen.body.is_some_and(|body| {
                serde_json::from_slice::<Value>(body)
                    .is_ok_and(|value| value["operation"] == "terminal_kill")
            });
            if kill { Action::Rewrite(sigterm) } else { Action::Forward }
        }),
    )
    .await;
    let args =
        vec!["--session", first.to_str().unwrap(), "--mutating", "--json", "--level", "strict"];
    let run = conformance(&args).await;
    drop(served);
    let failed: Vec<String> = run.ids("FAIL").into_iter().collect();
    // The proxy runs in this process, not in the server's: the lock's owner does not listen.
    assert_eq!(failed, ["files.lock.owner-listens", "wait.kill-sigkill"], "{}", run.failures());
    assert!(run.failures().contains("SIGTERM"), "{}", run.failures());
}
