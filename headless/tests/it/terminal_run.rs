//! Terminals an agent can wait on (protocol 1.3.0): `terminal_run`, `terminal_wait`,
//! `terminal_kill` and read cursors, over real tmux and real HTTP; the direct form through the
//! real `termsprawlctl`.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Agent, Fixture, built_termsprawlctl, call, error, fails, node, ok};

/// Runs `command` and waits for it (up to 20 s).
async fn run(agent: &Agent, command: &str) -> Value {
    ok(agent, "terminal_run", json!({"command": command, "timeoutMs": 20000})).await
}

fn id(value: &Value) -> String {
    value["nodeId"].as_str().unwrap().to_owned()
}

fn cursor(value: &Value) -> u64 {
    value["cursor"].as_u64().unwrap_or_else(|| panic!("no cursor in {value}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_reports_its_exit_status_and_output() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;

    let done = run(&agent, "echo hello-$((6*7)); exit 0").await;
    let keys: Vec<&str> = done.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        ["nodeId", "running", "exitCode", "signal", "output", "truncated", "cursor"],
        "{done}"
    );
    assert_eq!(
        (&done["running"], &done["exitCode"], &done["signal"], &done["truncated"]),
        (&json!(false), &json!(0), &Value::Null, &json!(false))
    );
    assert_eq!(done["output"], "hello-42\n");
    assert_eq!(cursor(&done), 9);
    // The node stays on the canvas after its command exited, as a terminal.
    let shown = node(&agent, &id(&done)).await;
    assert_eq!(
        (shown["kind"].as_str(), shown["title"].as_str()),
        (Some("terminal"), Some("echo hello-$((6*7)); exit 0"))
    );

    let failed = run(&agent, "echo FAILED >&2; exit 3").await;
    assert_eq!(
        (&failed["running"], &failed["exitCode"], &failed["signal"]),
        (&json!(false), &json!(3), &Value::Null)
    );
    assert_eq!(failed["output"], "FAILED\n");

    let killed = run(&agent, "echo bye; kill -TERM $$; sleep 5").await;
    assert_eq!(
        (&killed["running"], &killed["exitCode"], &killed["signal"]),
        (&json!(false), &Value::Null, &json!("SIGTERM"))
    );

    // cwd and env reach the command; the title is ours.
    let sub = fixture.project.join("sub dir");
    std::fs::create_dir(&sub).unwrap();
    let placed = ok(
        &agent,
        "terminal_run",
        json!({"command": "pwd; echo \"$GREETING\"", "cwd": sub, "env": ["GREETING=hi there"], "title": "where", "timeoutMs": 20000}),
    )
    .await;
    assert_eq!(placed["output"], format!("{}\nhi there\n", sub.display()));
    assert_eq!(node(&agent, &id(&placed)).await["title"], "where");

    // A read of the exited node: the screen, its cursor and its status.
    let read = ok(&agent, "terminal_read", json!({"nodeId": id(&failed)})).await;
    assert!(read["output"].as_str().unwrap().contains("FAILED"), "{read}");
    assert_eq!(
        (&read["running"], &read["exitCode"], &read["cursor"]),
        (&json!(false), &json!(3), &json!(7))
    );
    assert_eq!(
        ok(&agent, "terminal_read", json!({"nodeId": id(&failed), "since": 0})).await["output"],
        "FAILED\n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wait_times_out_without_error_and_finds_text_printed_before_it_started() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;

    let started = Instant::now();
    let running = ok(
        &agent,
        "terminal_run",
        json!({"command": "echo early; sleep 1.5; echo late; sleep 30", "timeoutMs": 0}),
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!((&running["running"], &running["exitCode"]), (&json!(true), &Value::Null));
    let node_id = id(&running);

    // `early` was printed before this wait began: `since` 0 still sees it.
    let early = ok(&agent, "terminal_wait", json!({"nodeId": node_id, "until": "text", "text": "early", "since": 0, "timeoutMs": 10000})).await;
    let keys: Vec<&str> = early.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "nodeId",
            "reached",
            "running",
            "exitCode",
            "signal",
            "output",
            "truncated",
            "cursor",
            "matched",
            "matchCursor"
        ]
    );
    assert_eq!(
        (&early["reached"], &early["matched"], &early["matchCursor"]),
        (&json!(true), &json!(0), &json!(0))
    );
    assert!(early["output"].as_str().unwrap().starts_with("early\n"), "{early}");

    // From that cursor on, only what comes later counts, and it wakes the wait.
    let late = ok(&agent, "terminal_wait", json!({"nodeId": node_id, "until": "text", "text": "late", "since": cursor(&early), "timeoutMs": 10000})).await;
    assert_eq!((&late["reached"], &late["running"]), (&json!(true), &json!(true)));
    assert_eq!(late["output"], "late\n");
    assert!(cursor(&late) >= cursor(&early), "cursors only grow");

    // A text that never comes: ok, reached false, after about the timeout.
    let started = Instant::now();
    let timed_out = ok(&agent, "terminal_wait", json!({"nodeId": node_id, "until": "text", "text": "never", "since": cursor(&late), "timeoutMs": 600})).await;
    let waited = started.elapsed();
    assert_eq!(
        (&timed_out["reached"], &timed_out["running"], &timed_out["output"]),
        (&json!(false), &json!(true), &json!(""))
    );
    assert!(waited >= Duration::from_millis(600) && waited < Duration::from_secs(5), "{waited:?}");

    // until exit, timing out while the command runs.
    let not_yet =
        ok(&agent, "terminal_wait", json!({"nodeId": node_id, "until": "exit", "timeoutMs": 300}))
            .await;
    assert_eq!((&not_yet["reached"], &not_yet["running"]), (&json!(false), &json!(true)));
}

#[tokio::test(flavor = "multi_thread")]
async fn quiet_exit_and_the_cursor_of_typed_input() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;

    let busy = ok(&agent, "terminal_run", json!({"command": "for i in 1 2 3 4; do echo tick-$i; sleep 0.2; done; sleep 30", "timeoutMs": 0})).await;
    let started = Instant::now();
    let quiet = ok(&agent, "terminal_wait", json!({"nodeId": id(&busy), "until": "quiet", "quietMs": 500, "since": 0, "timeoutMs": 15000})).await;
    assert_eq!(quiet["reached"], true, "{quiet}");
    assert!(
        quiet["output"].as_str().unwrap().ends_with("tick-4\n"),
        "quiet only after the last tick: {quiet}"
    );
    assert!(started.elapsed() >= Duration::from_millis(500));

    let exiting =
        ok(&agent, "terminal_run", json!({"command": "sleep 0.5; exit 5", "timeoutMs": 0})).await;
    let exited = ok(
        &agent,
        "terminal_wait",
        json!({"nodeId": id(&exiting), "until": "exit", "timeoutMs": 15000}),
    )
    .await;
    assert_eq!(
        (&exited["reached"], &exited["running"], &exited["exitCode"]),
        (&json!(true), &json!(false), &json!(5))
    );

    // A shell terminal: submit answers the cursor just before the input, and a wait from it
    // sees the command's output; reads never move the cursor back.
    let shell = id(&ok(&agent, "terminal_open", json!({})).await);
    let submitted =
        ok(&agent, "terminal_submit", json!({"nodeId": shell, "command": "echo marker-$((40+2))"}))
            .await;
    let keys: Vec<&str> = submitted.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["nodeId", "delivered", "cursor"]);
    let seen = ok(&agent, "terminal_wait", json!({"nodeId": shell, "until": "text", "text": "marker-42", "since": cursor(&submitted), "timeoutMs": 10000})).await;
    assert_eq!(seen["reached"], true, "{seen}");
    let typed =
        ok(&agent, "terminal_input", json!({"nodeId": shell, "text": "echo more-$((1+1))\n"}))
            .await;
    assert!(cursor(&typed) > cursor(&submitted), "{typed} after {submitted}");
    let mut last = 0;
    for _ in 0..5 {
        let read = ok(&agent, "terminal_read", json!({"nodeId": shell})).await;
        assert!(cursor(&read) >= last, "cursor went back: {read}");
        assert_eq!(
            (&read["running"], &read["exitCode"], &read["signal"]),
            (&json!(true), &Value::Null, &Value::Null)
        );
        last = cursor(&read);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let since = ok(
        &agent,
        "terminal_read",
        json!({"nodeId": shell, "since": cursor(&typed), "maxChars": 100}),
    )
    .await;
    assert!(since["output"].as_str().unwrap().contains("more-2"), "{since}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pending_wait_holds_no_queue_and_ends_when_its_node_is_closed() {
    let fixture = Fixture::start().await;
    let alpha = fixture.agent("alpha").await;
    let beta = fixture.agent("beta").await;
    let long =
        id(&ok(&alpha, "terminal_run", json!({"command": "sleep 60", "timeoutMs": 0})).await);

    let waiting = {
        let alpha = alpha.clone();
        let long = long.clone();
        tokio::spawn(async move {
            let started = Instant::now();
            let result = call(
                &alpha,
                "terminal_wait",
                json!({"nodeId": long, "until": "exit", "timeoutMs": 25000}),
            )
            .await;
            (result, started.elapsed())
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Another agent of the same project is served meanwhile, and so is the waiting one.
    let started = Instant::now();
    ok(&beta, "canvas_list", json!({})).await;
    ok(&alpha, "sticky_open", json!({"text": "not blocked"})).await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the queue was held: {:?}",
        started.elapsed()
    );
    assert!(!waiting.is_finished());

    let closed_at = Instant::now();
    ok(&beta, "terminal_close", json!({"nodeId": long})).await;
    let (result, waited) =
        tokio::time::timeout(Duration::from_secs(10), waiting).await.unwrap().unwrap();
    assert_eq!(error(result), "Terminal was closed while waiting");
    assert!(closed_at.elapsed() < Duration::from_secs(5) && waited < Duration::from_secs(20));
}

#[tokio::test(flavor = "multi_thread")]
async fn kill_ends_a_command_that_ignores_signals() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let stubborn = ok(
        &agent,
        "terminal_run",
        json!({"command": "trap '' TERM INT HUP; echo ready; sleep 60", "timeoutMs": 0}),
    )
    .await;
    let node_id = id(&stubborn);
    ok(
        &agent,
        "terminal_wait",
        json!({"nodeId": node_id, "until": "text", "text": "ready", "since": 0}),
    )
    .await;
    ok(&agent, "terminal_interrupt", json!({"nodeId": node_id})).await;
    let still =
        ok(&agent, "terminal_wait", json!({"nodeId": node_id, "until": "exit", "timeoutMs": 300}))
            .await;
    assert_eq!(still["running"], true, "Ctrl+C is ignored by this command");
    let killed = ok(&agent, "terminal_kill", json!({"nodeId": node_id})).await;
    let keys: Vec<&str> = killed.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["nodeId", "cursor", "running", "exitCode", "signal"]);
    assert_eq!(
        (&killed["running"], &killed["exitCode"], &killed["signal"]),
        (&json!(false), &Value::Null, &json!("SIGKILL"))
    );
    // The node and its output stay.
    let read = ok(&agent, "terminal_read", json!({"nodeId": node_id, "since": 0})).await;
    assert!(read["output"].as_str().unwrap().starts_with("ready\n"), "{read}");
    assert_eq!(read["cursor"], killed["cursor"]);
    // Killing again reports the same end.
    assert_eq!(ok(&agent, "terminal_kill", json!({"nodeId": node_id})).await["signal"], "SIGKILL");
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_arguments_each_have_their_message() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let outside = fixture.dir.path().canonicalize().unwrap();
    let file = fixture.project.join("file.txt");
    std::fs::write(&file, "x").unwrap();
    let cwd_message =
        "cwd must be the absolute path of an existing directory inside this project's folder";
    let cases = [
        (json!({"command": ""}), "command must not be empty".to_owned()),
        (json!({"command": "   "}), "command must not be empty".to_owned()),
        (json!({"command": "true", "cwd": "relative"}), cwd_message.to_owned()),
        (json!({"command": "true", "cwd": outside}), cwd_message.to_owned()),
        (json!({"command": "true", "cwd": fixture.project.join("../")}), cwd_message.to_owned()),
        (json!({"command": "true", "cwd": fixture.project.join("missing")}), cwd_message.to_owned()),
        (json!({"command": "true", "cwd": file}), cwd_message.to_owned()),
        (json!({"command": "true", "env": ["OK=1", "NOEQUALS"]}), "env[1] must be NAME=value, with NAME made of letters, digits and underscores, not starting with a digit".to_owned()),
        (json!({"command": "true", "env": ["1BAD=x"]}), "env[0] must be NAME=value, with NAME made of letters, digits and underscores, not starting with a digit".to_owned()),
        (json!({"command": "true", "env": ["=x"]}), "env[0] must be NAME=value, with NAME made of letters, digits and underscores, not starting with a digit".to_owned()),
        (json!({"command": "true", "env": "A=1"}), "Invalid env".to_owned()),
        (json!({"command": "true", "timeoutMs": "5"}), "Invalid timeoutMs".to_owned()),
    ];
    let before = ok(&agent, "canvas_list", json!({})).await.as_array().unwrap().len();
    for (args, message) in cases {
        assert_eq!(fails(&agent, "terminal_run", args.clone()).await, message, "{args}");
    }
    assert_eq!(
        ok(&agent, "canvas_list", json!({})).await.as_array().unwrap().len(),
        before,
        "no node was made"
    );

    let shell = id(&ok(&agent, "terminal_open", json!({})).await);
    for (args, message) in [
        (
            json!({"nodeId": shell, "until": "text"}),
            "text is required and must not be empty with until text",
        ),
        (
            json!({"nodeId": shell, "until": "text", "text": ""}),
            "text is required and must not be empty with until text",
        ),
        (json!({"nodeId": shell, "until": "later"}), "Invalid until"),
        (
            json!({"nodeId": "term-nope", "until": "exit"}),
            "Local terminal not found in this project",
        ),
        (json!({"until": "exit"}), "Missing argument: nodeId"),
    ] {
        assert_eq!(fails(&agent, "terminal_wait", args.clone()).await, message, "{args}");
    }
    assert_eq!(
        fails(&agent, "terminal_kill", json!({"nodeId": shell})).await,
        "Kill only a run terminal started by terminal_run; use terminal_interrupt or terminal_close for other terminals"
    );
    assert_eq!(
        fails(&agent, "terminal_kill", json!({"nodeId": agent.node_id})).await,
        termsprawl_headless::messages::OWN_NODE
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_restarted_server_keeps_run_nodes_readable_and_waitable() {
    let mut fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let done = run(&agent, "echo persisted; exit 7").await;
    let running = ok(
        &agent,
        "terminal_run",
        json!({"command": "echo before; sleep 2; echo after-restart; sleep 60", "timeoutMs": 0}),
    )
    .await;
    ok(
        &agent,
        "terminal_wait",
        json!({"nodeId": id(&running), "until": "text", "text": "before", "since": 0}),
    )
    .await;

    fixture.restart().await;

    let read = ok(&agent, "terminal_read", json!({"nodeId": id(&done), "since": 0})).await;
    assert_eq!(
        (&read["output"], &read["exitCode"], &read["running"], &read["cursor"]),
        (&json!("persisted\n"), &json!(7), &json!(false), &done["cursor"])
    );
    let exited = ok(
        &agent,
        "terminal_wait",
        json!({"nodeId": id(&done), "until": "exit", "timeoutMs": 1000}),
    )
    .await;
    assert_eq!((&exited["reached"], &exited["exitCode"]), (&json!(true), &json!(7)));
    // Output printed across the restart is counted and wakes a wait of the new server.
    let later = ok(&agent, "terminal_wait", json!({"nodeId": id(&running), "until": "text", "text": "after-restart", "since": 0, "timeoutMs": 15000})).await;
    assert_eq!(later["reached"], true, "{later}");
    assert_eq!(later["output"], "before\nafter-restart\n");
}

/// A node that prints far more than is retained: its file keeps only about the retained window
/// on disk (the bytes before its restart point are punched out), and a restarted server still
/// counts every character and reads the tail.
#[tokio::test(flavor = "multi_thread")]
async fn a_long_output_stays_small_on_disk_and_keeps_its_cursor_across_a_restart() {
    let mut fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    // 200,000 lines of 99 characters and a line feed: 20 MB of text, 19.07 MiB on disk.
    let command = "yes 012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678 | head -n 200000; echo done";
    let done = ok(&agent, "terminal_run", json!({"command": command, "timeoutMs": 30000})).await;
    assert_eq!((&done["running"], &done["exitCode"]), (&json!(false), &json!(0)), "{done}");
    let node_id = id(&done);
    let total = 200_000 * 100 + 5;
    assert_eq!(cursor(&done), total, "every character is counted");

    let out = fixture.agent_tools().join("terminals").join(format!("{node_id}.out"));
    let on_disk = std::os::unix::fs::MetadataExt::blocks(&std::fs::metadata(&out).unwrap()) * 512;
    assert!(std::fs::metadata(&out).unwrap().len() > 20_000_000, "tmux wrote it all");
    assert!(on_disk < 8 << 20, "{on_disk} bytes on disk for a 1,000,000-character window");

    fixture.restart().await;
    let read = ok(&agent, "terminal_read", json!({"nodeId": node_id, "since": total - 105})).await;
    assert_eq!(
        (&read["output"], &read["cursor"], &read["exitCode"]),
        (&json!("0123456789".repeat(10)[..99].to_owned() + "\ndone\n"), &json!(total), &json!(0))
    );
}

/// Following a terminal that prints all the time, each answer's `cursor` is the end of its
/// `output`: reading on from it, the outputs join into the whole stream, nothing missed or
/// repeated.
#[tokio::test(flavor = "multi_thread")]
async fn following_a_busy_terminal_with_the_cursor_misses_nothing() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    // About 5,000 lines a second for 3 s, in bursts of 25 lines.
    let lines = 15_000;
    let command = format!(
        "i=0; while [ $i -lt {lines} ]; do i=$((i+1)); echo tick-$i; [ $((i % 25)) -eq 0 ] && sleep 0.005; done; sleep 60"
    );
    let started = ok(&agent, "terminal_run", json!({"command": command, "timeoutMs": 0})).await;
    let node_id = id(&started);
    let (mut since, mut joined, mut calls, mut checked) = (0, String::new(), 0, 0);
    let deadline = Instant::now() + Duration::from_mins(1);
    while !joined.ends_with(&format!("tick-{lines}\n")) {
        assert!(Instant::now() < deadline, "the stream did not end within 60 s");
        let (operation, args) = if calls % 2 == 0 {
            (
                "terminal_wait",
                json!({"nodeId": node_id, "until": "text", "text": "\n", "since": since}),
            )
        } else {
            ("terminal_read", json!({"nodeId": node_id, "since": since, "maxChars": 100_000}))
        };
        let answer = ok(&agent, operation, args).await;
        calls += 1;
        let output = answer["output"].as_str().unwrap();
        let next = cursor(&answer);
        assert!(next >= since, "the cursor went back: {since} to {next}");
        let counted = output.chars().count() as u64;
        if answer["truncated"] == json!(true) || counted == 100_000 {
            // Cut to its tail: what came between is not in this answer; start again after it.
            joined.clear();
        } else {
            assert_eq!(
                counted,
                next - since,
                "{operation}: the output is not what lies between since and cursor"
            );
            checked += 1;
        }
        joined.push_str(output);
        since = next;
    }
    // The last whole run of answers is the stream itself, line after line.
    let numbers: Vec<u64> = joined
        .lines()
        .skip(1)
        .map(|line| {
            line.strip_prefix("tick-")
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("not a tick: {line:?}"))
        })
        .collect();
    assert!(
        numbers.windows(2).all(|pair| pair[1] == pair[0] + 1),
        "a gap or a repeat in the stream"
    );
    assert!(checked >= 20, "only {checked} of {calls} answers could be checked");
}

/// The direct form through the real `termsprawlctl`: flags in, the value out, exit 0 for every
/// outcome of the command (the tool call succeeded), exit 1 for a refused call.
#[tokio::test(flavor = "multi_thread")]
async fn the_direct_form_runs_and_waits() {
    let Some(ctl) = built_termsprawlctl() else { return };
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let direct = |args: &[&str]| {
        Command::new(&ctl)
            .args(args)
            .env_clear()
            .env("TERMSPRAWL_SESSION_FILE", &agent.session_file)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    for (command, exit_code, signal) in [
        ("exit 0", json!(0), Value::Null),
        ("exit 3", json!(3), Value::Null),
        ("kill -KILL $$", Value::Null, json!("SIGKILL")),
    ] {
        let output = tokio::task::block_in_place(|| {
            direct(&["terminal_run", "--command", command, "--timeoutMs", "30000"])
        });
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        let answer: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(
            (&answer["running"], &answer["exitCode"], &answer["signal"]),
            (&json!(false), &exit_code, &signal),
            "{command}"
        );
    }
    let waiting = tokio::task::block_in_place(|| {
        direct(&["terminal_run", "--command", "sleep 0.3; echo direct-done", "--timeoutMs", "0"])
    });
    let node_id = id(&serde_json::from_slice(&waiting.stdout).unwrap());
    let waited = tokio::task::block_in_place(|| {
        direct(&[
            "terminal_wait",
            "--nodeId",
            &node_id,
            "--until",
            "text",
            "--text",
            "direct-done",
            "--since",
            "0",
        ])
    });
    assert_eq!(waited.status.code(), Some(0), "{waited:?}");
    assert_eq!(serde_json::from_slice::<Value>(&waited.stdout).unwrap()["reached"], true);
    let refused = tokio::task::block_in_place(|| direct(&["terminal_run", "--command", ""]));
    assert_eq!(
        (refused.status.code(), String::from_utf8_lossy(&refused.stderr).into_owned()),
        (Some(1), "Error: command must not be empty\n".to_owned())
    );
}
