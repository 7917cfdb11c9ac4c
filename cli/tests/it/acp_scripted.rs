//! The scripted driver of spec/acp.md §4: `termsprawlctl acp --prompt … --permission … -- <peer>`,
//! one scenario per run, checked through the peer's REPORT, the transcript, the exit status and the
//! trace validated against the ACP v1 JSON Schema.

use std::time::Duration;

use serde_json::{Value, json};

use crate::acp::{Finished, Peer, Place, eventually, finish, marker, peer, processes_with, run};
use crate::support::{BIN, Fixture};

/// Runs one `--prompt` turn and validates its trace; the agent's schema failures are returned.
fn check(place: &Place, peer: &Peer, options: &[&str], prompt: &str) -> (Finished, Vec<Value>) {
    let _ = std::fs::remove_file(place.trace());
    let mut all = vec!["--prompt", prompt];
    all.extend_from_slice(options);
    let finished = run(place.command(peer, &[], &all));
    let failures = place.check_trace(peer);
    (finished, failures)
}

#[test]
fn the_agent_receives_our_capabilities_and_the_mcp_bridge() {
    let peer = peer();
    let place = Place::new();
    let app = Fixture::new();
    let session = app.session_file().to_string_lossy().into_owned();
    let finished = run(place.command(&peer, &["--session", &session], &["--prompt", "caps"]));
    let failures = place.check_trace(&peer);
    finished.assert_end_turn();
    assert_eq!(failures, Vec::<Value>::new());
    let report = finished.report();
    assert_eq!(report["protocolVersion"], 1);
    assert_eq!(
        report["clientCapabilities"],
        json!({
            "fs": {"readTextFile": true, "writeTextFile": true},
            "terminal": true,
            "session": {"configOptions": {"boolean": {}}, "notices": {}, "compaction": {}},
            "elicitation": {"form": {}, "url": {}}
        })
    );
    assert_eq!(
        report["clientInfo"],
        json!({"name": "termsprawl", "version": env!("CARGO_PKG_VERSION")})
    );
    assert_eq!(report["cwd"], json!(place.root()));
    assert_eq!(report["prompt"], json!([{"type": "text", "text": "caps"}]));
    let program = std::fs::canonicalize(BIN).unwrap();
    // The one variable names the file the bridge leaves when it starts, in a private directory
    // the front end removes when it ends.
    let mark = report["mcpServers"][0]["env"][0]["value"].as_str().unwrap().to_owned();
    assert!(mark.ends_with("/started"), "{mark}");
    assert!(!std::path::Path::new(&mark).parent().unwrap().exists(), "{mark}");
    let expected = json!([{
        "name": "termsprawl",
        "command": program,
        "args": ["--session", app.session_file(), "mcp"],
        "env": [{"name": "TERMSPRAWL_ACP_BRIDGE_MARK", "value": mark}],
    }]);
    assert_eq!(report["mcpServers"], expected);
    // The exact wire shape, member for member: no `type` member in v1.
    let new_session =
        place.traced("out").into_iter().find(|message| message["method"] == "session/new").unwrap();
    assert_eq!(
        new_session["params"].to_string(),
        json!({"cwd": place.root(), "mcpServers": expected}).to_string()
    );
}

/// Issue 25: with the tool server down, the bridge's `initialize` would fail, and fast-agent then
/// failed `session/new`; the agent starts without it, and one line says so.
#[test]
fn with_the_tool_server_down_the_agent_starts_without_the_bridge() {
    let peer = peer();
    let place = Place::new();
    let mut app = Fixture::new();
    let session = app.session_file().to_string_lossy().into_owned();
    app.stop();
    let finished = run(place.command(&peer, &["--session", &session], &["--prompt", "caps"]));
    finished.assert_end_turn();
    assert_eq!(finished.report()["mcpServers"], json!([]));
    let lines: Vec<&str> = finished
        .stderr
        .lines()
        .filter(|line| line.contains("the tool server is unreachable"))
        .collect();
    assert_eq!(lines.len(), 2, "{}", finished.stderr);
    assert!(
        lines
            .iter()
            .any(|line| line.starts_with("termsprawlctl: acp: the tool server is unreachable (")
                && line.ends_with("): the agent starts without termsprawl's tools")),
        "{}",
        finished.stderr
    );
    assert!(
        !finished.stderr.contains("termsprawl's tools were not taken up"),
        "{}",
        finished.stderr
    );
    assert!(!finished.stderr.contains(&app.token()), "the token leaked");
}

#[test]
fn the_session_file_comes_from_the_environment_and_no_mcp_or_no_session_injects_nothing() {
    let peer = peer();
    let place = Place::new();
    let app = Fixture::new();
    let session = app.session_file().to_path_buf();
    let mut command = place.command(&peer, &[], &["--prompt", "caps"]);
    command.env("TERMSPRAWL_SESSION_FILE", &session);
    let finished = run(command);
    finished.assert_end_turn();
    assert_eq!(finished.report()["mcpServers"][0]["args"], json!(["--session", session, "mcp"]));

    let mut command =
        place.command(&peer, &["--session", "s.json"], &["--prompt", "caps", "--no-mcp"]);
    command.env("TERMSPRAWL_SESSION_FILE", &session);
    let finished = run(command);
    finished.assert_end_turn();
    assert_eq!(finished.report()["mcpServers"], json!([]));

    let finished = run(place.command(&peer, &[], &["--prompt", "caps"]));
    finished.assert_end_turn();
    assert_eq!(finished.report()["mcpServers"], json!([]));
    assert!(finished.stderr.contains("no session file"), "{}", finished.stderr);
}

#[test]
fn permission_policies_pick_by_kind_and_fail_closed() {
    let peer = peer();
    let place = Place::new();
    let cases: &[(&[&str], &str, Value)] = &[
        (
            &["--permission", "allow-once"],
            "permission",
            json!({"outcome": "selected", "optionId": "a-once"}),
        ),
        (
            &["--permission", "deny"],
            "permission",
            json!({"outcome": "selected", "optionId": "r-once"}),
        ),
        (
            &["--permission", "deny"],
            "permission always-only",
            json!({"outcome": "selected", "optionId": "r-always"}),
        ),
        (
            &["--permission", "allow-once"],
            "permission always-only",
            json!({"outcome": "cancelled"}),
        ),
        (&["--permission", "allow-once"], "permission none", json!({"outcome": "cancelled"})),
        // `ask` with stdin that is not a terminal: nobody can answer.
        (&[], "permission", json!({"outcome": "cancelled"})),
        (&["--permission", "ask"], "permission", json!({"outcome": "cancelled"})),
    ];
    for (options, prompt, outcome) in cases {
        let (finished, failures) = check(&place, &peer, options, prompt);
        finished.assert_end_turn();
        assert_eq!(failures, Vec::<Value>::new());
        assert_eq!(finished.report()["outcome"], *outcome, "{options:?} {prompt}");
    }
    let (finished, _) =
        check(&place, &peer, &["--permission", "allow-once"], "permission malformed");
    finished.assert_end_turn();
    assert_eq!(finished.report()["malformed"], -32602);
}

#[test]
fn files_are_confined_to_the_session_root() {
    let peer = peer();
    let place = Place::new();
    let (finished, failures) = check(&place, &peer, &[], "fs");
    finished.assert_end_turn();
    assert_eq!(failures, Vec::<Value>::new());
    let report = finished.report();
    let content = |name: &str| report[name]["ok"]["content"].clone();
    let code = |name: &str| report[name]["error"].clone();
    assert_eq!(report["write_new"], json!({"ok": {}}));
    assert_eq!(report["created_on_disk"], "one\ntwo\nthree\nfour\n");
    assert_eq!(content("read_all"), "one\ntwo\nthree\nfour\n");
    assert_eq!(content("read_line2_limit2"), "two\nthree\n");
    assert_eq!(content("read_line4"), "four\n");
    assert_eq!(content("read_line9"), "");
    assert_eq!(content("read_limit1"), "one\n");
    assert_eq!(content("read_after_overwrite"), "replaced");
    assert_eq!(code("missing"), -32002);
    let missing = place.root().join("no-such-file.txt");
    assert_eq!(report["missing"]["message"], format!("Resource not found: {}", missing.display()));
    assert_eq!(code("relative"), -32602);
    assert_eq!(code("dotdot"), -32602);
    assert_eq!(code("symlink_read"), -32602);
    assert_eq!(code("symlink_write"), -32602);
    assert_eq!(report["planted_outside"], false);
    assert_eq!(code("file_symlink_read"), -32602);
    assert_eq!(code("not_utf8"), -32603);
    assert_eq!(code("wrong_session"), -32602);
    assert!(
        finished.stdout.contains(&format!(
            "[file] created {}",
            place.root().join("sub/dir/new.txt").display()
        ))
    );
}

#[test]
fn a_terminal_reports_exit_code_and_both_streams_in_a_visible_tmux_session() {
    let peer = peer();
    let place = Place::new();
    let (finished, failures) = check(&place, &peer, &["--terminals", "tmux"], "terminal");
    finished.assert_end_turn();
    assert_eq!(failures, Vec::<Value>::new());
    let report = finished.report();
    assert_eq!(report["wait"], json!({"ok": {"exitCode": 3}}));
    assert_eq!(
        report["output"],
        json!({"ok": {"exitStatus": {"exitCode": 3}, "output": "to-stdout\nto-stderr\n", "truncated": false}})
    );
    assert_eq!(report["release"], json!({"ok": {}}));
    assert_eq!(report["output_after_release"]["error"], -32602);
    assert_eq!(report["wait_after_release"]["error"], -32602);
    // Seen from outside the client while the front end runs: the session exists and shows it.
    let showing = report["tmux_sessions_showing_output"].as_array().unwrap();
    assert_eq!(showing.len(), 1, "{report}");
    let session = showing[0].as_str().unwrap();
    assert!(
        finished
            .stdout
            .contains(&format!("runs in tmux: tmux -L termsprawl-acp attach -t {session}")),
        "{}",
        finished.stdout
    );
    assert_eq!(
        report["args_output"]["ok"]["output"],
        json!(format!("from env|it's a b|{}\n", place.root().join("work").display()))
    );
    assert_eq!(report["relative_cwd"]["error"], -32602);
    // The front end removed its tmux sessions when it ended.
    assert!(!place.tmux_sessions().iter().any(|name| name == session));
}

#[test]
fn a_killed_command_reports_a_signal_within_seconds() {
    let peer = peer();
    let place = Place::new();
    let (finished, failures) = check(&place, &peer, &[], "kill");
    finished.assert_end_turn();
    assert_eq!(failures, Vec::<Value>::new());
    let report = finished.report();
    for case in ["plain", "ignores_term"] {
        assert_eq!(report[case]["kill"], json!({"ok": {}}), "{case}");
        let wait = &report[case]["wait"];
        assert!(wait["signal"].is_string(), "{case}: {wait}");
        assert!(report[case]["seconds"].as_f64().unwrap() < 15.0, "{case}: {report}");
        // The terminal stays valid after kill.
        assert_eq!(report[case]["output_after_kill"]["ok"]["exitStatus"]["signal"], wait["signal"]);
    }
    assert_eq!(report["plain"]["wait"]["signal"], "SIGTERM");
}

#[test]
fn big_output_keeps_the_tail_within_the_byte_limit() {
    let peer = peer();
    let place = Place::new();
    let (finished, failures) = check(&place, &peer, &[], "bigoutput");
    finished.assert_end_turn();
    assert_eq!(failures, Vec::<Value>::new());
    let report = finished.report();
    let seq = &report["seq"]["ok"];
    let output = seq["output"].as_str().unwrap();
    let full = (1..=20_000).fold(String::new(), |mut text, number| {
        text.push_str(&number.to_string());
        text.push('\n');
        text
    });
    assert_eq!(seq["truncated"], true);
    assert!(output.len() <= 1000 && output.len() > 900, "{}", output.len());
    assert!(full.ends_with(output), "not the tail: {output:?}");
    let utf8 = &report["utf8"]["ok"];
    let output = utf8["output"].as_str().unwrap();
    assert_eq!(utf8["truncated"], true);
    assert!(output.len() <= 1000 && output.len() >= 998, "{}", output.len());
    assert!(output.trim_end().chars().all(|character| character == 'é'), "{output:?}");
    assert_eq!(report["small"]["ok"]["output"], "small\n");
    assert_eq!(report["small"]["ok"]["truncated"], false);
}

#[test]
fn odd_updates_leave_the_client_working_and_every_variant_renders() {
    let peer = peer();
    let place = Place::new();
    let (finished, failures) = check(&place, &peer, &[], "updates");
    finished.assert_end_turn();
    // Only the deliberately broken or unknown updates fail the schema.
    assert_eq!(failures.len(), 3, "{failures:?}");
    assert_eq!(finished.report()["read_after_odd_updates"], json!({"ok": {"content": "probe\n"}}));
    let notes = place.root().join("notes.txt");
    for expected in [
        "thinking about updates".to_owned(),
        "[plan] 1/2 done\n  [x] Read the code (high)\n  [~] Write the fix (medium)\n".to_owned(),
        "[tool] Edit notes.txt (edit, pending)".to_owned(),
        // The agent claims notes.txt held two lines; it does not exist: a new file.
        format!("[diff] {} (new file, 2 lines)\n  @@ -0,0 +1,2 @@\n", notes.display()),
        "    1 + alpha\n    2 + beta changed\n".to_owned(),
        "[tool] Edit notes.txt (edit, completed)".to_owned(),
        "  edited 1 line".to_owned(),
        "still alive".to_owned(),
    ] {
        assert!(
            finished.stdout.contains(&expected),
            "{expected:?} missing from:\n{}",
            finished.stdout
        );
    }
    assert!(finished.stderr.contains("skipped a session/update"), "{}", finished.stderr);
}

#[test]
fn unknown_methods_bad_params_and_cancelled_requests_get_their_codes() {
    let peer = peer();
    let place = Place::new();
    let (finished, _) = check(&place, &peer, &[], "unknown-method");
    finished.assert_end_turn();
    let report = finished.report();
    // Advertised since issue 35: answered (`cancel`, as stdin is not a terminal).
    assert_eq!(report["elicitation/create"], "answered");
    assert_eq!(report["_vendor/unknown"], -32601);
    assert_eq!(report["session/load"], -32601);
    assert_eq!(report["terminal_output_without_id"], -32602);
    assert_eq!(report["unknown_terminal"]["error"], -32602);
    let (finished, failures) = check(&place, &peer, &[], "cancel-request");
    finished.assert_end_turn();
    assert_eq!(failures, Vec::<Value>::new());
    assert_eq!(finished.report()["cancelled_wait"], -32800);
}

#[test]
fn other_stop_reasons_exit_1() {
    let peer = peer();
    let place = Place::new();
    for reason in ["max_tokens", "max_turn_requests", "refusal"] {
        let (finished, _) = check(&place, &peer, &[], &format!("stop {reason}"));
        assert_eq!(finished.code(), Some(1), "{reason}");
        assert!(finished.stdout.contains(&format!("[stop reason: {reason}]")));
    }
}

#[test]
fn ctrl_c_cancels_the_turn_and_leaves_no_process_behind() {
    let peer = peer();
    let place = Place::new();
    let marker = marker();
    let (_, transcript) =
        interrupt_when_waiting(&place, &peer, "cancel", &marker, Duration::from_mins(1));
    assert!(transcript.contains("permission outcome after cancel: cancelled"), "{transcript}");
    assert!(transcript.contains("[tool] Run a long command (execute, cancelled)"), "{transcript}");
    assert!(transcript.contains("[stop reason: cancelled]"), "{transcript}");
    assert_no_process_left(&marker);
    let cancels: Vec<Value> = place
        .traced("out")
        .into_iter()
        .filter(|message| message["method"] == "session/cancel")
        .collect();
    assert_eq!(
        cancels,
        vec![
            json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "sess-1"}})
        ]
    );
    assert_eq!(place.check_trace(&peer), Vec::<Value>::new());
}

/// Starts a `--prompt "<scenario> <marker>"` turn and sends SIGINT once the agent says it waits
/// (`sleep <marker>` must then appear in some process's command line); checks that the run exits
/// 1 after cancelling the turn, and returns it with the whole transcript.
fn interrupt_when_waiting(
    place: &Place,
    peer: &Peer,
    scenario: &str,
    marker: &str,
    limit: Duration,
) -> (Finished, String) {
    let prompt = format!("{scenario} {marker}");
    let running = format!("sleep {marker}");
    let mut child = place.command(peer, &[], &["--prompt", &prompt]).spawn().unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        let read = std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
        assert!(read > 0, "the transcript ended early:\n{seen}");
        seen.push_str(&line);
        if line.contains("WAITING") {
            break;
        }
    }
    // The agent says it waits once it has started the process, which may take a moment to show.
    let shown = eventually(Duration::from_secs(10), || !processes_with(&running).is_empty());
    assert!(shown, "{running:?} is not running");
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    child.stdout = Some(stdout.into_inner());
    let finished = finish(child, limit);
    let transcript = format!("{seen}{}", finished.stdout);
    assert_eq!(finished.code(), Some(1), "{transcript}\n{}", finished.stderr);
    assert!(transcript.contains("(cancelling the turn)"), "{transcript}");
    (finished, transcript)
}

/// Waits up to 10 s for every process with `marker` in its command line to be gone.
#[track_caller]
fn assert_no_process_left(marker: &str) {
    assert!(
        eventually(Duration::from_secs(10), || processes_with(marker).is_empty()),
        "orphaned processes: {:?}",
        processes_with(marker)
    );
}

#[test]
fn an_agent_that_ignores_the_cancel_is_stopped_after_30_seconds() {
    let peer = peer();
    let place = Place::new();
    let marker = marker();
    let (finished, _) =
        interrupt_when_waiting(&place, &peer, "ignore-cancel", &marker, Duration::from_mins(2));
    assert!(
        finished.stderr.contains("the agent did not answer within 30 s of the cancel"),
        "{}",
        finished.stderr
    );
    assert_no_process_left(&marker);
}

#[test]
fn agent_failures_exit_1_and_start_failures_exit_2() {
    let peer = peer();
    let place = Place::new();
    let finished = run(place.command(&peer, &[], &["--prompt", "exit"]));
    assert_eq!(finished.code(), Some(1));
    // Issue 35: its exit status, and (its stderr being ours here) nothing more.
    assert!(
        finished.stderr.contains("termsprawlctl: acp: the agent exited with exit code 5\n"),
        "{}",
        finished.stderr
    );

    let finished = run(place.command(&peer, &[], &["--prompt", "longline"]));
    assert_eq!(finished.code(), Some(1));
    assert!(finished.stderr.contains("longer than 16 MiB"), "{}", finished.stderr);

    let mut command = place.command(&peer, &[], &["--prompt", "caps"]);
    command.env("ACP_TEST_PROTOCOL_VERSION", "2");
    let finished = run(command);
    assert_eq!(finished.code(), Some(1));
    assert!(finished.stderr.contains("protocol version 2"), "{}", finished.stderr);

    let mut command = place.command(&peer, &[], &["--prompt", "caps"]);
    command.env("ACP_TEST_REQUIRE_AUTH", "1");
    let finished = run(command);
    assert_eq!(finished.code(), Some(1));
    assert!(finished.stderr.contains("requires authentication"), "{}", finished.stderr);

    let mut command = std::process::Command::new(BIN);
    command.args(["acp", "--prompt", "x", "--", "/nonexistent/agent"]);
    let output = command.output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let mut command = std::process::Command::new(BIN);
    command.args(["acp", "--prompt", "x", &peer.python.to_string_lossy()]);
    let output = command.output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("the agent command goes after --"));
    let output = std::process::Command::new(BIN).args(["acp", "--help"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&output.stdout).contains("--permission-timeout SECONDS"));
}

/// Issue 38 item 4: a run notice that termsprawl types into the node (`spec/acp.md` §2.16) goes
/// to the agent as a prompt of its own, marked as termsprawl's, after the turn under way; what the
/// person had typed before it on the same line is not sent.
#[test]
fn a_run_notice_typed_into_the_node_is_the_next_prompt_marked_as_termsprawls() {
    use std::io::Write as _;
    let peer = peer();
    let place = Place::new();
    let mut command = place.command(&peer, &[], &[]);
    command.stdin(std::process::Stdio::piped());
    let mut child = command.spawn().unwrap();
    let notice = r#"[termsprawl] terminal-1a2b "sleep 3; exit 4" exited 4 after 3s; read it with terminal_read {"nodeId":"terminal-1a2b","since":17}"#;
    let mut stdin = child.stdin.take().unwrap();
    write!(stdin, "echo one\nhalf typed{notice}\necho two\n").unwrap();
    drop(stdin);
    let finished = finish(child, Duration::from_mins(1));
    assert_eq!(finished.code(), Some(0), "{}", finished.stderr);
    let prompts: Vec<String> = place
        .traced("out")
        .into_iter()
        .filter(|message| message["method"] == "session/prompt")
        .map(|message| message["params"]["prompt"][0]["text"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        prompts,
        [
            "echo one".to_owned(),
            format!(
                "termsprawl notice, not typed by the person: a command you started with notify \
                 has ended.\n{notice}"
            ),
            "echo two".to_owned(),
        ]
    );
    assert!(
        finished.stdout.contains(&format!("[termsprawl notice] {notice}\n")),
        "{}",
        finished.stdout
    );
    assert!(
        finished.stdout.contains(
            "[termsprawl] a notice arrived while you typed; not sent, type it again: half typed\n"
        ),
        "{}",
        finished.stdout
    );
}
