//! Unit tests of the soak's accounting, classification, `/proc` parsing, load plan and report.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64};

use serde_json::{Value, json};

use super::faults::{self, Damage, Fault, FaultLog, Tmpfs};
use super::ledger::{
    Form, Ledger, Outcome, Path, classify_mcp, classify_oneshot, exec_key, key, unavailable_reason,
};
use super::load::{self, Agent, BridgeState, ProjectWorld, Rng, Shared, World};
use super::procs::{Sample, parse_status, refers_to};
use super::report::{BEGIN, END, replace_section};

const UNAVAILABLE: &str = "Tool connection unavailable: cannot connect to 127.0.0.1:4242: Connection refused (os error 111). Check that termsprawl is running. Mutations are not automatically retried.";

fn call_stdout(result: &Value) -> Vec<u8> {
    format!("{}\n", serde_json::to_string_pretty(result).unwrap()).into_bytes()
}

#[test]
fn only_the_exact_client_contract_text_is_unavailable() {
    assert_eq!(
        unavailable_reason(UNAVAILABLE),
        Some("cannot connect to 127.0.0.1:4242: Connection refused (os error 111)")
    );
    // The contract never ends a reason with a period, nor puts a line break in it.
    let period = UNAVAILABLE.replace("111)", "111).");
    assert_eq!(unavailable_reason(&period), None);
    assert_eq!(unavailable_reason(&UNAVAILABLE.replace("111", "1\n11")), None);
    assert_eq!(unavailable_reason(&UNAVAILABLE.replace(" Mutations", "  Mutations")), None);
    assert_eq!(unavailable_reason("Tool connection unavailable"), None);
    assert_eq!(unavailable_reason("Unknown or revoked session"), None);
}

#[test]
fn one_shot_call_form_outcomes() {
    let ok = call_stdout(&json!({"ok": true, "value": {"nodeId": "sticky-1"}}));
    assert_eq!(
        classify_oneshot(Form::Call, Some(0), None, &ok, b""),
        Outcome::Ok(json!({"nodeId": "sticky-1"}))
    );
    let down = call_stdout(&json!({"ok": false, "error": UNAVAILABLE}));
    assert!(matches!(
        classify_oneshot(Form::Call, Some(1), None, &down, b""),
        Outcome::Unavailable(_)
    ));
    let refused = call_stdout(&json!({"ok": false, "error": "Unknown or revoked session"}));
    assert_eq!(
        classify_oneshot(Form::Call, Some(1), None, &refused, b""),
        Outcome::ToolError("Unknown or revoked session".to_owned())
    );
    // Everything else is broken, by kind.
    let kind = |outcome: Outcome| match outcome {
        Outcome::Broken { kind, .. } => kind,
        other => panic!("expected a broken outcome, got {other:?}"),
    };
    assert_eq!(
        kind(classify_oneshot(Form::Call, Some(1), None, &ok, b"")),
        "exit status disagrees with the result"
    );
    assert_eq!(
        kind(classify_oneshot(Form::Call, Some(0), None, &down, b"")),
        "exit status disagrees with the result"
    );
    assert_eq!(
        kind(classify_oneshot(Form::Call, Some(101), None, b"", b"thread 'main' panicked")),
        "exit status 101"
    );
    assert_eq!(kind(classify_oneshot(Form::Call, None, Some(6), b"", b"")), "killed by signal 6");
    assert_eq!(
        kind(classify_oneshot(Form::Call, Some(0), None, b"{\"ok\":tr", b"")),
        "stdout is not JSON"
    );
    assert_eq!(
        kind(classify_oneshot(Form::Call, Some(0), None, &ok, b"warning\n")),
        "output on stderr"
    );
    assert_eq!(
        kind(classify_oneshot(Form::Call, Some(0), None, b"{\"value\":1}", b"")),
        "not a tool result"
    );
}

#[test]
fn one_shot_direct_form_outcomes() {
    assert_eq!(
        classify_oneshot(Form::Direct, Some(0), None, b"{\n  \"nodeId\": \"n\"\n}\n", b""),
        Outcome::Ok(json!({"nodeId": "n"}))
    );
    assert_eq!(classify_oneshot(Form::Direct, Some(0), None, b"", b""), Outcome::Ok(Value::Null));
    let down = format!("Error: {UNAVAILABLE}\n");
    assert!(matches!(
        classify_oneshot(Form::Direct, Some(1), None, b"", down.as_bytes()),
        Outcome::Unavailable(_)
    ));
    assert_eq!(
        classify_oneshot(Form::Direct, Some(1), None, b"", b"Error: Task is no longer pending\n"),
        Outcome::ToolError("Task is no longer pending".to_owned())
    );
    for (code, stdout, stderr) in [
        (2, &b""[..], &b"termsprawlctl: usage\n"[..]),
        (1, b"", b"Error: a\nError: b\n"),
        (1, b"partial", down.as_bytes()),
        (0, b"{}", b"termsprawlctl: the call succeeded, but writing its output failed\n"),
    ] {
        assert!(
            matches!(
                classify_oneshot(Form::Direct, Some(code), None, stdout, stderr),
                Outcome::Broken { .. }
            ),
            "{code} {stdout:?} {stderr:?}"
        );
    }
}

#[test]
fn mcp_outcomes() {
    let text = |result: Value| result.to_string();
    let answer = |is_error: bool, result: Value| json!({"jsonrpc": "2.0", "id": 3, "result": {"isError": is_error, "content": [{"type": "text", "text": text(result)}]}});
    assert_eq!(
        classify_mcp(&answer(false, json!({"ok": true, "value": {"a": 1}}))),
        Outcome::Ok(json!({"a": 1}))
    );
    assert!(matches!(
        classify_mcp(&answer(true, json!({"ok": false, "error": UNAVAILABLE}))),
        Outcome::Unavailable(_)
    ));
    assert_eq!(
        classify_mcp(&answer(true, json!({"ok": false, "error": "Queued operation expired"}))),
        Outcome::ToolError("Queued operation expired".to_owned())
    );
    for broken in [
        answer(false, json!({"ok": false, "error": UNAVAILABLE})),
        answer(true, json!({"ok": true})),
        json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32603, "message": UNAVAILABLE}}),
        json!({"jsonrpc": "2.0", "id": 3, "result": {"isError": false, "content": []}}),
        json!({"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": "{}"}]}}),
    ] {
        assert!(matches!(classify_mcp(&broken), Outcome::Broken { .. }), "{broken}");
    }
}

#[test]
fn keys_are_the_same_on_both_sides() {
    let args: Value = serde_json::from_str(r#"{"nodeId":"t","maxChars":2000.000000017}"#).unwrap();
    let line = r#"{"operation":"terminal_read","args":{"nodeId":"t","maxChars":2000.000000017}}"#;
    assert_eq!(exec_key(line), Some(key("terminal_read", &args)));
    assert_eq!(exec_key(r#"{"operation":"x","args":{},"token":"secret"}"#), None);
    assert_eq!(exec_key(r#"{"operation":"x"}"#), None);
    assert_eq!(exec_key("{\"operation\":\"x\",\"ar"), None);
}

/// A ledger with `attempts` calls of `sticky_open {"text": text}`, `ok` of them answered ok and
/// the rest unavailable.
fn ledger_with(text: &str, attempts: u64, ok: u64) -> Ledger {
    let mut ledger = Ledger::default();
    let args = json!({"text": text});
    for index in 0..attempts {
        ledger.attempt(Path::OneShot, "sticky_open", &args);
        let outcome = if index < ok {
            Outcome::Ok(json!({"nodeId": "sticky-1"}))
        } else {
            Outcome::Unavailable("down".to_owned())
        };
        ledger.outcome(Path::OneShot, "sticky_open", &args, &outcome, None);
    }
    ledger
}

fn exec_lines(text: &str, times: usize) -> String {
    format!("{{\"operation\":\"sticky_open\",\"args\":{{\"text\":\"{text}\"}}}}\n").repeat(times)
}

#[test]
fn reconcile_passes_when_every_ok_call_ran_once_and_nothing_ran_twice() {
    // Answered ok once and unavailable once; the unavailable attempt may or may not have run.
    let ledger = ledger_with("soak-1", 2, 1);
    for runs in [1, 2] {
        let reconciled = ledger.reconcile(&exec_lines("soak-1", runs));
        assert!(reconciled.passes(), "{reconciled:?}");
        assert_eq!(reconciled.matched, runs as u64);
        assert_eq!(reconciled.ran_unacknowledged, runs as u64 - 1);
    }
    // An unavailable call that never ran.
    assert!(ledger_with("soak-2", 1, 0).reconcile("").passes());
}

#[test]
fn reconcile_fails_on_a_duplicate_execution() {
    let reconciled = ledger_with("soak-1", 1, 1).reconcile(&exec_lines("soak-1", 2));
    assert!(!reconciled.passes());
    assert_eq!(reconciled.duplicates, 1);
    assert_eq!(reconciled.lost, 0);
    assert!(
        reconciled.problems[0].contains("executed 2 times, attempted 1"),
        "{:?}",
        reconciled.problems
    );
    // An execution nobody attempted counts too.
    let unsent = Ledger::default().reconcile(&exec_lines("soak-9", 1));
    assert_eq!(unsent.duplicates, 1);
}

#[test]
fn reconcile_fails_on_a_lost_ok_call() {
    let reconciled = ledger_with("soak-1", 1, 1).reconcile("");
    assert!(!reconciled.passes());
    assert_eq!(reconciled.lost, 1);
    assert!(reconciled.problems[0].contains("answered ok 1 times, executed 0"));
}

#[test]
fn reconcile_fails_on_a_malformed_log_line() {
    let reconciled =
        ledger_with("soak-1", 1, 1).reconcile(&format!("{}{{\"oper", exec_lines("soak-1", 1)));
    assert_eq!(reconciled.malformed, 1);
    assert!(!reconciled.passes());
}

#[test]
fn an_unexplained_tool_error_fails_and_an_explained_one_is_counted_apart() {
    let mut ledger = Ledger::default();
    let args = json!({"taskId": "t"});
    let error = Outcome::ToolError("Task is no longer pending".to_owned());
    ledger.attempt(Path::OneShot, "agent_reply", &args);
    ledger.outcome(Path::OneShot, "agent_reply", &args, &error, Some("a restart failed the task"));
    assert!(ledger.failures.is_empty());
    assert_eq!(ledger.expected.values().sum::<u64>(), 1);
    ledger.attempt(Path::Mcp, "agent_reply", &args);
    ledger.outcome(Path::Mcp, "agent_reply", &args, &error, None);
    assert_eq!(ledger.failures.get("tool error from agent_reply"), Some(&1));
    let total = ledger.total(None);
    assert_eq!((total.calls, total.expected_errors, total.failures), (2, 1, 1));
    // Broken outcomes count by their kind.
    let hang =
        Outcome::Broken { kind: "no answer within 60 s (MCP)".to_owned(), detail: String::new() };
    ledger.outcome(Path::Mcp, "canvas_list", &json!({}), &hang, Some("ignored for broken calls"));
    assert_eq!(ledger.failures.get("no answer within 60 s (MCP)"), Some(&1));
}

#[test]
fn proc_status_is_parsed() {
    let status = "Name:\tserve\nVmHWM:\t   12000 kB\nVmRSS:\t   11000 kB\nThreads:\t3\n";
    assert_eq!(
        parse_status(status),
        Some(Sample { rss: 11_000 * 1024, hwm: 12_000 * 1024, threads: 3, fds: 0 })
    );
    // A zombie has no memory lines.
    assert_eq!(parse_status("Name:\tx\nThreads:\t1\n"), None);
    assert!(refers_to(b"tmux\0-S\0/tmp/soak-x/data/tmux\0", "/tmp/soak-x"));
    assert!(!refers_to(b"tmux\0-S\0/tmp/other\0", "/tmp/soak-x"));
    assert!(!refers_to(b"anything", ""));
}

#[test]
fn the_section_replaces_only_what_is_between_the_markers() {
    let section = format!("{BEGIN}\n## Soak\n\nnew\n{END}\n");
    let document = format!(
        "# Reliability\n\n## Fuzzing\n\nkept\n\n{BEGIN}\n## Soak\n\nold\n{END}\n\n## After\n"
    );
    let replaced = replace_section(&document, &section);
    assert_eq!(replaced, format!("# Reliability\n\n## Fuzzing\n\nkept\n\n{section}\n## After\n"));
    assert_eq!(replace_section(&replaced, &section), replaced);
    let appended = replace_section("# Reliability\n\n## Fuzzing\n\nkept\n", &section);
    assert_eq!(appended, format!("# Reliability\n\n## Fuzzing\n\nkept\n\n{section}"));
}

fn shared() -> Shared {
    let agent = |index: usize, project: usize| Agent {
        node_id: format!("agent-{index}"),
        session_file: PathBuf::from(format!("/nonexistent/sessions/agent-{index}.json")),
        project,
        terminal: format!("terminal-{index}"),
        generation: 0,
    };
    Shared {
        ctl: PathBuf::from("/nonexistent/termsprawlctl"),
        agents: Mutex::new(vec![agent(0, 0), agent(1, 0), agent(2, 1), agent(3, 1)]),
        tickers: Mutex::new(Vec::new()),
        generation: AtomicU64::new(0),
        ledger: Mutex::new(Ledger::default()),
        world: Mutex::new(World { projects: vec![ProjectWorld::default(); 2], tasks: Vec::new() }),
        stop: AtomicBool::new(false),
        release: AtomicBool::new(false),
        marker: AtomicU64::new(1),
        bridges: Mutex::new(vec![BridgeState::default()]),
        logs: PathBuf::from("/nonexistent"),
        faults: FaultLog::default(),
    }
}

#[test]
fn the_plan_marks_every_mutation_and_never_groups_a_node_twice() {
    let shared = shared();
    let mut rng = Rng::new(5);
    let mut keys = std::collections::HashSet::new();
    let mut grouped = Vec::new();
    let mut operations = std::collections::BTreeSet::new();
    for round in 0..3000 {
        let agent = &shared.agent(round % 4);
        let plan = load::plan(&mut rng, &shared, agent);
        operations.insert(plan.operation);
        let marked = !matches!(
            plan.operation,
            "canvas_list" | "session_info" | "agent_status" | "canvas_select"
        );
        if marked {
            assert!(keys.insert(key(plan.operation, &plan.args)), "repeated {}", plan.args);
        }
        if let Some(node) =
            plan.args["nodeId"].as_str().filter(|node| node.starts_with("terminal-"))
        {
            let index: usize = node["terminal-".len()..].parse().unwrap();
            assert_eq!(shared.agent(index).project, agent.project, "a terminal of another project");
        }
        if plan.operation == "canvas_group" {
            for node in plan.args["nodeIds"].as_array().unwrap() {
                assert!(!grouped.contains(node), "{node} grouped twice");
                grouped.push(node.clone());
            }
        }
        // Every sticky_open succeeds, with a fresh id.
        let outcome = match plan.operation {
            "sticky_open" | "canvas_group" => {
                Outcome::Ok(json!({"nodeId": format!("node-{round}")}))
            }
            _ => Outcome::Ok(Value::Null),
        };
        shared.settle(Path::OneShot, &plan, &outcome, std::time::Instant::now());
    }
    let world = shared.world.lock().unwrap();
    assert!(world.projects.iter().all(|project| project.stickies.len() <= load::MAX_STICKIES));
    assert!(!grouped.is_empty());
    assert_eq!(
        operations.into_iter().collect::<Vec<_>>(),
        [
            "agent_status",
            "canvas_group",
            "canvas_list",
            "canvas_move",
            "canvas_resize",
            "canvas_select",
            "session_info",
            "sticky_open",
            "terminal_input",
            "terminal_read",
            "terminal_submit",
        ]
    );
}

#[test]
fn the_generator_follows_its_seed() {
    let draw = |seed| {
        let mut rng = Rng::new(seed);
        (0..5).map(|_| rng.below(1000)).collect::<Vec<_>>()
    };
    assert_eq!(draw(1), draw(1));
    assert_ne!(draw(1), draw(2));
}

#[test]
fn only_a_restart_failure_explains_a_finished_task() {
    let restart = json!({"state": "failed", "response": load::RESTART_REASON});
    assert!(load::failed_by_restart(&restart));
    assert!(!load::failed_by_restart(&json!({"state": "failed", "response": "other"})));
    assert!(!load::failed_by_restart(
        &json!({"state": "completed", "response": load::RESTART_REASON})
    ));
}

const DISK_FULL_CANVAS: &str = "cannot save the canvas: No space left on device (os error 28)";

#[test]
fn only_a_killed_tmuxs_clear_errors_are_explained_by_it() {
    use termsprawl_headless::messages::{NOT_ATTACHED, SESSION_REVOKED, TMUX_GONE_WHILE_WAITING};
    let carried = "tmux paste-buffer was sent, but the tmux control client ended before tmux answered: it may have run, so it was not sent again";
    for error in [
        TMUX_GONE_WHILE_WAITING,
        NOT_ATTACHED,
        SESSION_REVOKED,
        "Unknown or revoked session",
        carried,
    ] {
        assert_eq!(faults::explained_by(Fault::TmuxKilled, error), Some(faults::TMUX_KILLED));
        assert_eq!(faults::explained_by(Fault::DiskFull, error), None, "{error}");
    }
    for other in [
        DISK_FULL_CANVAS,
        "Terminal is not attached.",
        "Node not found in the visible project",
        "tmux send-keys failed: no server running on /d/tmux-sockets/termsprawl",
        "cannot run /usr/bin/tmux: Broken pipe (os error 32)",
        "tmux paste-buffer was sent, but it failed",
        "",
    ] {
        assert_eq!(faults::explained_by(Fault::TmuxKilled, other), None, "{other}");
    }
}

#[test]
fn only_a_refused_write_is_explained_by_a_full_disk() {
    assert_eq!(faults::explained_by(Fault::DiskFull, DISK_FULL_CANVAS), Some(faults::DISK_FULL));
    let task = "cannot save the task: No space left on device (os error 28)";
    assert_eq!(faults::explained_by(Fault::DiskFull, task), Some(faults::DISK_FULL));
    for other in [
        "cannot save the canvas: Permission denied (os error 13)",
        "No space left on device (os error 28)",
        "cannot read the canvas: No space left on device (os error 28)",
        "Unknown or revoked session",
        "Node not found in the visible project",
    ] {
        assert_eq!(faults::explained_by(Fault::DiskFull, other), None, "{other}");
    }
}

#[test]
fn a_fault_explains_only_the_calls_that_overlapped_it() {
    let log = FaultLog::default();
    let before = std::time::Instant::now();
    // No fault yet: nothing is explained.
    assert_eq!(log.explains(before, DISK_FULL_CANVAS), None);
    assert!(!log.overlapped(Fault::DiskFull, before));
    log.begin(Fault::DiskFull);
    assert!(log.overlapped(Fault::DiskFull, before));
    assert_eq!(log.explains(before, DISK_FULL_CANVAS), Some(faults::DISK_FULL));
    log.end();
    // Sent before the end: explained; sent after it: a failure.
    assert_eq!(log.explains(before, DISK_FULL_CANVAS), Some(faults::DISK_FULL));
    std::thread::sleep(std::time::Duration::from_millis(5));
    let after = std::time::Instant::now();
    assert_eq!(log.explains(after, DISK_FULL_CANVAS), None);
    assert!(!log.overlapped(Fault::DiskFull, after));
}

/// Regression (a CI soak): a bridge whose call had waited on the ledger lock while a tmux kill
/// launched the new agents sent it just after the kill's span ended, to a terminal the kill had
/// ended, and its `Terminal is not attached` was counted a failure. A call that involves an
/// ended generation's agents is explained by the kill that ended it, whenever it was sent; the
/// current generation's calls are not.
#[test]
fn a_call_to_an_ended_generation_is_explained_by_its_tmux_kill_whenever_sent() {
    use std::sync::atomic::Ordering;
    use termsprawl_headless::messages::NOT_ATTACHED;
    let shared = shared();
    let mut rng = Rng::new(11);
    let old = shared.agent(0);
    let submit = std::iter::repeat_with(|| load::plan(&mut rng, &shared, &old))
        .find(|plan| plan.operation == "terminal_submit")
        .unwrap();
    assert_eq!(submit.generation, 0);
    // The kill's span began and ended before the call was sent.
    shared.faults.begin(Fault::TmuxKilled);
    shared.faults.end();
    std::thread::sleep(std::time::Duration::from_millis(5));
    let sent = std::time::Instant::now();
    assert_eq!(shared.explains(sent, NOT_ATTACHED, submit.generation), None);
    {
        let mut agents = shared.agents.lock().unwrap();
        for agent in agents.iter_mut() {
            agent.generation = 1;
        }
    }
    shared.generation.store(1, Ordering::Relaxed);
    assert_eq!(shared.explains(sent, NOT_ATTACHED, submit.generation), Some(faults::TMUX_KILLED));
    // Only a killed tmux's clear errors, and never for the current generation.
    assert_eq!(shared.explains(sent, "tmux send-keys failed: lost server", 0), None);
    assert_eq!(shared.explains(sent, NOT_ATTACHED, 1), None);
    // A new agent naming an old agent's terminal: the oldest generation counts.
    let new = shared.agent(1);
    {
        let mut agents = shared.agents.lock().unwrap();
        agents[0].generation = 0;
    }
    let mixed = std::iter::repeat_with(|| load::plan(&mut rng, &shared, &new))
        .find(|plan| plan.args["nodeId"] == "terminal-0")
        .unwrap();
    assert_eq!(mixed.generation, 0);
    let own = std::iter::repeat_with(|| load::plan(&mut rng, &shared, &new))
        .find(|plan| plan.args["nodeId"] == "terminal-1")
        .unwrap();
    assert_eq!(own.generation, 1);
}

#[test]
fn a_follower_allows_a_gap_only_after_a_full_disk() {
    let mut followed = load::Followed::default();
    assert!(followed.take_line("tick-1", false));
    assert!(followed.take_line("tick-2", false));
    // Missing, repeated or garbled ticks fail without a full disk.
    assert!(!followed.clone().take_line("tick-4", false));
    assert!(!followed.clone().take_line("tick-2", false));
    assert!(!followed.clone().take_line("tick-3tick-9", false));
    // After one, the line spanning the gap ends with a later tick and the count goes on.
    assert!(followed.take_line("tick-3tick-9", true));
    assert_eq!((followed.ticks, followed.gaps, followed.lost_to_full_disk), (9, 1, 6));
    // tick-3 was cut: it counts among the lost.
    assert!(followed.take_line("tick-10", true));
    // Never backwards, even then.
    assert!(!followed.clone().take_line("tick-8", true));
    assert!(!followed.take_line("garbage", true));
}

#[test]
fn damage_cuts_or_replaces_the_canvas() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("canvas.json");
    let canvas = br#"{"projects":[{"folder":"/p","nodes":[]}]}"#;
    std::fs::write(&path, canvas).unwrap();
    let cut = faults::damage(&path, Damage::Truncated).unwrap();
    assert_eq!(cut, canvas[..canvas.len() / 2]);
    assert_eq!(std::fs::read(&path).unwrap(), cut);
    assert!(serde_json::from_slice::<Value>(&cut).is_err());
    let garbage = faults::damage(&path, Damage::Garbage).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), garbage);
    assert!(serde_json::from_slice::<Value>(&garbage).is_err());
}

#[test]
fn the_tmpfs_fills_refuses_writes_and_works_again_once_freed() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let tmpfs = match Tmpfs::mount(&data) {
        Ok(tmpfs) => tmpfs,
        Err(reason) => {
            eprintln!("skipped: {reason}");
            return;
        }
    };
    std::fs::write(data.join("before"), b"committed").unwrap();
    let filled = tmpfs.fill().unwrap();
    assert!(filled > 63 * 1024 * 1024 && filled <= 64 * 1024 * 1024, "{filled}");
    let refused = std::fs::write(data.join("during"), vec![0_u8; 8192]).unwrap_err();
    assert_eq!(refused.raw_os_error(), Some(28), "{refused}");
    assert_eq!(std::fs::read(data.join("before")).unwrap(), b"committed");
    tmpfs.free().unwrap();
    std::fs::write(data.join("after"), vec![0_u8; 8192]).unwrap();
    drop(tmpfs);
    // Unmounted: the directory is the plain one again, without the files.
    assert!(!data.join("before").exists());
}

#[test]
fn only_the_gone_session_files_hint_is_taken_off_stderr() {
    let hint = "hint: the session file /d/sessions/agent-1.json does not exist: the termsprawl node it belonged to was closed, or the app restarted without it.\n";
    let error = "Error: Session revoked\n";
    assert_eq!(super::ledger::without_session_hint(&format!("{error}{hint}")), error);
    assert_eq!(super::ledger::without_session_hint(hint), "");
    assert_eq!(super::ledger::without_session_hint(error), error);
    let other = "Error: x\nhint: something else\n";
    assert_eq!(super::ledger::without_session_hint(other), other);
    // The hinted error is classified as the error alone.
    let stderr = format!("{error}{hint}");
    assert_eq!(
        classify_oneshot(Form::Direct, Some(1), None, b"", stderr.as_bytes()),
        Outcome::ToolError("Session revoked".to_owned())
    );
    let down = call_stdout(&json!({"ok": false, "error": UNAVAILABLE}));
    assert!(matches!(
        classify_oneshot(Form::Call, Some(1), None, &down, hint.as_bytes()),
        Outcome::Unavailable(_)
    ));
}
