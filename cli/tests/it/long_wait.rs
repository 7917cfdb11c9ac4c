//! Long waits in one call (protocol 1.5.0, issue 38; `spec/protocol.md` §7.3, `spec/mcp.md`
//! §3.16) over the real binaries: `termsprawl-headless serve` on real tmux with `--exec-log`, and
//! `termsprawlctl` in the direct form, the `call` form and as the MCP bridge under the official
//! MCP Python SDK. These tests wait for real commands of 70 to 75 s, so they are few: each proves
//! several things at once.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::headless::Headless;
use crate::support::BIN;

/// A started server with one agent's session and its execution log. Fields drop in order: the
/// server and its tmux server (killed while its socket still exists), then the directory.
struct Setup {
    headless: Headless,
    session: PathBuf,
    exec_log: PathBuf,
    _dir: tempfile::TempDir,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let exec_log = dir.path().join("exec.log");
    let log = exec_log.clone();
    let headless = Headless::start(&data, &project, |command| {
        command.arg("--exec-log").arg(&log);
    });
    let session = headless.session("waiter");
    Setup { headless, session, exec_log, _dir: dir }
}

fn ctl(session: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("--session")
        .arg(session)
        .args(args)
        .env_remove("TERMSPRAWL_SESSION_FILE")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn json_of(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "stdout is not JSON ({error}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// Starts `command` as a run node without waiting; its node id.
fn start_run(session: &Path, command: &str) -> String {
    let output = ctl(session, &["terminal_run", "--command", command, "--timeoutMs", "0"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    json_of(&output)["nodeId"].as_str().unwrap().to_owned()
}

/// The requests of the execution log.
fn logged(exec_log: &Path) -> Vec<Value> {
    std::fs::read_to_string(exec_log)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn waits_on(log: &[Value], node: &str) -> Vec<Value> {
    log.iter()
        .filter(|entry| entry["operation"] == "terminal_wait" && entry["args"]["nodeId"] == node)
        .map(|entry| entry["args"].clone())
        .collect()
}

/// Asserts that `output` holds `{word} 1` … `{word} {count}`, each line exactly once, in order.
fn every_line_once(output: &str, word: &str, count: u32) {
    let lines: Vec<&str> = output.lines().filter(|line| line.starts_with(word)).collect();
    let expected: Vec<String> = (1..=count).map(|i| format!("{word} {i}")).collect();
    assert_eq!(lines, expected, "the output:\n{output}");
}

/// A command printing `{word} 1` … `{word} {count}`, one a second: it ends after `count` seconds.
fn counting(word: &str, count: u32) -> String {
    format!("for i in $(seq 1 {count}); do echo \"{word} $i\"; sleep 1; done")
}

#[test]
fn one_wait_and_one_run_last_as_long_as_their_commands() {
    let setup = setup();
    let waited = start_run(&setup.session, &counting("line", 75));
    let session = setup.session.clone();
    let node = waited.clone();
    // The direct form's wait, without progress (stderr is a pipe): turns of 30 s.
    let wait = thread::spawn(move || {
        let started = Instant::now();
        let output = ctl(
            &session,
            &["terminal_wait", "--nodeId", &node, "--until", "exit", "--timeoutMs", "120000"],
        );
        (output, started.elapsed())
    });
    // At the same time, a run chained with --progress: turns of 5 s, a progress line each.
    let started = Instant::now();
    let run = ctl(
        &setup.session,
        &["--progress", "terminal_run", "--command", &counting("row", 72), "--timeoutMs", "120000"],
    );
    let run_elapsed = started.elapsed();
    let (wait, wait_elapsed) = wait.join().unwrap();

    assert!(wait.status.success(), "{}", String::from_utf8_lossy(&wait.stderr));
    assert_eq!(String::from_utf8_lossy(&wait.stderr), "", "no progress without a terminal");
    let answer = json_of(&wait);
    assert_eq!(answer["reached"], true, "{answer}");
    assert_eq!((answer["running"].clone(), answer["exitCode"].clone()), (false.into(), 0.into()));
    every_line_once(answer["output"].as_str().unwrap(), "line", 75);
    assert!(Duration::from_secs(70) < wait_elapsed && wait_elapsed < Duration::from_secs(95));

    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let answer = json_of(&run);
    assert_eq!(answer.get("reached"), None, "a run answers as a run: {answer}");
    assert_eq!((answer["running"].clone(), answer["exitCode"].clone()), (false.into(), 0.into()));
    every_line_once(answer["output"].as_str().unwrap(), "row", 72);
    assert!(Duration::from_secs(70) < run_elapsed && run_elapsed < Duration::from_secs(95));
    let ran = answer["nodeId"].as_str().unwrap();
    let progress = String::from_utf8_lossy(&run.stderr);
    let lines: Vec<&str> = progress.lines().collect();
    assert!(lines.len() >= 10, "progress lines:\n{progress}");
    assert!(lines.iter().all(|line| line.starts_with("for i in $(seq 1 72)")), "{progress}");
    assert!(lines.last().unwrap().contains(r#"lines, last: "row "#), "{progress}");

    let log = logged(&setup.exec_log);
    // The wait: three turns of at most 30 s (30, 30 and the rest), each from the last cursor.
    let turns = waits_on(&log, &waited);
    assert!((3..=4).contains(&turns.len()), "{turns:?}");
    assert!(turns.iter().all(|args| args["timeoutMs"].as_u64().unwrap() <= 30_000), "{turns:?}");
    assert!(turns[1..].iter().all(|args| args["since"].is_u64()), "{turns:?}");
    // The run: sent once; then waits of at most 5 s on its node.
    let runs = log.iter().filter(|entry| entry["operation"] == "terminal_run").count();
    assert_eq!(runs, 2, "the wait's node and the chained run, each sent once");
    let turns = waits_on(&log, ran);
    assert!(turns.len() >= 13, "{}", turns.len());
    assert!(turns.iter().all(|args| args["timeoutMs"].as_u64().unwrap() <= 5_000), "{turns:?}");
}

#[test]
fn a_server_gone_mid_chain_answers_as_a_single_wait_would() {
    let mut setup = setup();
    let node = start_run(&setup.session, "sleep 100");
    let session = setup.session.clone();
    let call = thread::spawn(move || {
        let args = format!(r#"{{"nodeId":"{node}","until":"exit","timeoutMs":90000}}"#);
        let started = Instant::now();
        let output = ctl(&session, &["call", "terminal_wait", &args]);
        (output, started.elapsed())
    });
    thread::sleep(Duration::from_secs(3));
    setup.headless.kill_server();
    let (output, elapsed) = call.join().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let envelope = json_of(&output);
    assert_eq!(envelope["ok"], false);
    let error = envelope["error"].as_str().unwrap();
    assert!(error.starts_with("Tool connection unavailable: "), "{error}");
    assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");
}

#[test]
fn the_python_sdk_sees_progress_then_one_answer_and_a_cancel_ends_the_chain() {
    let setup = setup();
    let node = start_run(&setup.session, &counting("step", 70));
    let cancelled = start_run(&setup.session, "sleep 90");
    let python = termsprawl_test_support::peers::python("mcp-sdk");
    let script = termsprawl_test_support::workspace_root().join("tests/python/mcp_long_wait.py");
    let output = Command::new(python)
        .arg(script)
        .args(["--binary", BIN, "--node", &node, "--cancel-node", &cancelled])
        .arg("--session")
        .arg(&setup.session)
        .arg("--exec-log")
        .arg(&setup.exec_log)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let report = json_of(&output);
    assert_eq!(report["streamErrors"], serde_json::json!([]), "{report}");

    // At least 10 notifications during the wait, growing, then one result.
    let result_at = report["resultAt"].as_f64().unwrap();
    assert!(result_at > 65.0, "{report}");
    let progress = report["progress"].as_array().unwrap();
    assert!(progress.len() >= 10, "{report}");
    assert!(progress.iter().all(|p| p["at"].as_f64().unwrap() <= result_at));
    let values: Vec<f64> = progress.iter().map(|p| p["progress"].as_f64().unwrap()).collect();
    assert!(values.windows(2).all(|pair| pair[0] < pair[1]), "{values:?}");
    assert!(progress.iter().all(|p| p["total"] == 100.0), "{report}");
    let last = progress.last().unwrap()["message"].as_str().unwrap();
    assert!(last.contains(r#"lines, last: "step "#), "{last}");
    assert_eq!(report["isError"], false);
    let text: Value = serde_json::from_str(report["text"].as_str().unwrap()).unwrap();
    assert_eq!(text["value"]["reached"], true, "{text}");
    every_line_once(text["value"]["output"].as_str().unwrap(), "step", 70);

    // The cancel stopped the chain: no wait was sent after it, no progress came after it.
    assert_eq!(report["cancelled"], true, "{report}");
    let after = report["waitsAfterCancel"].as_u64().unwrap();
    assert!((2..=3).contains(&after), "{report}");
    assert_eq!(report["waitsLater"].as_u64().unwrap(), after, "{report}");
    let cancelled_at = report["cancelledAt"].as_f64().unwrap();
    let late = report["cancelledProgress"].as_array().unwrap();
    assert!(late.iter().all(|p| p["at"].as_f64().unwrap() <= cancelled_at), "{report}");
    assert_eq!(report["pingAfter"], true);
}
