//! Interactive programs as an agent works them (protocol 1.4.0): named keys with
//! `terminal_input` `keys`, the visible screen with `terminal_read` `view: screen`,
//! `terminal_wait` `until: change`, and run nodes that clean up after themselves (`keep: false`,
//! no helper process once finished, no dead-pane line). Real tmux, real programs, real HTTP; the
//! direct form through the real `termsprawlctl`.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Agent, Fixture, built_termsprawlctl, fails, node, ok, wait_for_output};

fn id(value: &Value) -> String {
    value["nodeId"].as_str().unwrap().to_owned()
}

fn cursor(value: &Value) -> u64 {
    value["cursor"].as_u64().unwrap_or_else(|| panic!("no cursor in {value}"))
}

/// `terminal_read` with `view: screen`.
async fn screen(agent: &Agent, node_id: &str) -> Value {
    ok(agent, "terminal_read", json!({"nodeId": node_id, "view": "screen"})).await
}

/// The screen's rows.
fn rows(screen: &Value) -> Vec<String> {
    screen["output"].as_str().unwrap().lines().map(str::to_owned).collect()
}

/// Reads the screen until `done` holds (10 s at most).
async fn screen_until(agent: &Agent, node_id: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let shown = screen(agent, node_id).await;
        if done(&shown) {
            return shown;
        }
        assert!(Instant::now() < deadline, "the screen never got there:\n{}", shown["output"]);
        // Woken by the program's output, not by a timer: wait for any change.
        ok(
            agent,
            "terminal_wait",
            json!({"nodeId": node_id, "until": "change", "since": cursor(&shown), "timeoutMs": 2000}),
        )
        .await;
    }
}

/// Keys and text, as one `terminal_input`; its answer.
async fn input(agent: &Agent, node_id: &str, text: Option<&str>, keys: &[&str]) -> Value {
    let mut args = json!({"nodeId": node_id});
    if let Some(text) = text {
        args["text"] = Value::from(text);
    }
    if !keys.is_empty() {
        args["keys"] = json!(keys);
    }
    ok(agent, "terminal_input", args).await
}

/// A shell node with a prompt, ready for the next command.
async fn shell(agent: &Agent) -> String {
    let opened = ok(agent, "terminal_open", json!({"title": "interactive"})).await;
    id(&opened)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_edits_a_file_in_vim() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let node_id = shell(&agent).await;
    let file = fixture.project.join("notes.txt");
    ok(
        &agent,
        "terminal_submit",
        json!({"nodeId": node_id, "command": "vim -N -u NONE -i NONE notes.txt"}),
    )
    .await;
    let up = screen_until(&agent, &node_id, |s| s["alternateScreen"] == true).await;
    assert_eq!((&up["rows"], &up["cols"]), (&json!(48), &json!(160)));
    input(&agent, &node_id, Some("i"), &[]).await;
    input(&agent, &node_id, Some("written by an agent"), &["Escape"]).await;
    input(&agent, &node_id, Some(":wq"), &["Enter"]).await;
    screen_until(&agent, &node_id, |s| s["alternateScreen"] == false).await;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "written by an agent\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_python_repl_answers_after_enter() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let node_id = shell(&agent).await;
    let started =
        ok(&agent, "terminal_submit", json!({"nodeId": node_id, "command": "python3 -q"})).await;
    let prompt = ok(
        &agent,
        "terminal_wait",
        json!({"nodeId": node_id, "until": "text", "text": ">>> ", "since": cursor(&started), "timeoutMs": 20000}),
    )
    .await;
    assert_eq!(prompt["reached"], true, "{prompt}");
    let typed = input(&agent, &node_id, Some("print(6*7)"), &["Enter"]).await;
    // Wait for a change after the input, then read on from the input's cursor; a program may
    // answer in more than one piece, so an agent waits again until the answer is there.
    let mut since = cursor(&typed);
    let mut seen = String::new();
    for _ in 0..10 {
        let changed = ok(
            &agent,
            "terminal_wait",
            json!({"nodeId": node_id, "until": "change", "since": since, "timeoutMs": 10000}),
        )
        .await;
        assert_eq!(changed["reached"], true, "{changed}");
        seen.push_str(changed["output"].as_str().unwrap());
        since = cursor(&changed);
        if seen.contains("42\n") {
            break;
        }
    }
    assert!(seen.contains("print(6*7)\n42\n"), "{seen:?}");
    let read =
        ok(&agent, "terminal_read", json!({"nodeId": node_id, "since": cursor(&typed)})).await;
    assert!(read["output"].as_str().unwrap().contains("42\n"), "{read}");
    let shown = screen(&agent, &node_id).await;
    assert!(rows(&shown).iter().any(|row| row == "42"), "{}", shown["output"]);
    input(&agent, &node_id, None, &["C-d"]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn up_and_enter_recall_the_previous_command() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let node_id = shell(&agent).await;
    ok(
        &agent,
        "terminal_submit",
        json!({"nodeId": node_id, "command": "exec bash --norc --noprofile -i"}),
    )
    .await;
    let first = ok(
        &agent,
        "terminal_submit",
        json!({"nodeId": node_id, "command": "echo recalled-$((40+2))"}),
    )
    .await;
    let once = ok(
        &agent,
        "terminal_wait",
        json!({"nodeId": node_id, "until": "text", "text": "recalled-42\n", "since": cursor(&first), "timeoutMs": 10000}),
    )
    .await;
    assert_eq!(once["reached"], true, "{once}");
    let pressed = input(&agent, &node_id, None, &["Up", "Enter"]).await;
    let again = ok(
        &agent,
        "terminal_wait",
        json!({"nodeId": node_id, "until": "text", "text": "recalled-42\n", "since": cursor(&pressed), "timeoutMs": 10000}),
    )
    .await;
    assert_eq!(again["reached"], true, "{again}");
    assert!(again["output"].as_str().unwrap().contains("echo recalled-$((40+2))"), "{again}");
}

#[tokio::test(flavor = "multi_thread")]
async fn less_pages_to_the_end_on_the_alternate_screen() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let lines: Vec<String> = (1..=500).map(|n| format!("line {n}")).collect();
    let lines = lines.join("\n") + "\n";
    std::fs::write(fixture.project.join("long.txt"), lines).unwrap();
    let node_id = shell(&agent).await;
    ok(&agent, "terminal_submit", json!({"nodeId": node_id, "command": "less long.txt"})).await;
    let first = screen_until(&agent, &node_id, |s| {
        s["alternateScreen"] == true && rows(s).first().map(String::as_str) == Some("line 1")
    })
    .await;
    assert_eq!(rows(&first).len(), 48, "rows are kept");
    input(&agent, &node_id, None, &["End"]).await;
    let end = screen_until(&agent, &node_id, |s| rows(s).iter().any(|row| row == "line 500")).await;
    let shown = rows(&end);
    assert_eq!(shown.len(), 48);
    // The file's last line is the last line of text, above less's prompt on the last row.
    assert_eq!(shown[46], "line 500", "{}", end["output"]);
    assert_eq!(end["alternateScreen"], true);
    assert_eq!(end["cursorRow"], 47);
    input(&agent, &node_id, Some("q"), &[]).await;
    screen_until(&agent, &node_id, |s| s["alternateScreen"] == false).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn control_c_by_name_ends_a_sleep() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let running =
        ok(&agent, "terminal_run", json!({"command": "echo started; sleep 100", "timeoutMs": 0}))
            .await;
    assert_eq!(running["running"], true);
    // A C-c typed before the pane's shell holds its terminal reaches nobody.
    wait_for_output(&agent, &id(&running), "started").await;
    input(&agent, &id(&running), None, &["C-c"]).await;
    let ended = ok(
        &agent,
        "terminal_wait",
        json!({"nodeId": id(&running), "until": "exit", "timeoutMs": 10000}),
    )
    .await;
    assert_eq!((&ended["reached"], &ended["running"]), (&json!(true), &json!(false)));
    assert!(
        ended["signal"] == "SIGINT" || ended["exitCode"] == 130,
        "C-c is an interrupt: {ended}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_full_screen_programs_cursor_is_where_it_drew() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    // Alternate screen, cleared, the cursor to row 5 column 10 (1-based), an X, then a pause.
    let drawn = ok(
        &agent,
        "terminal_run",
        json!({"command": r"printf '\033[?1049h\033[2J\033[5;10HX\033[12;30Hmenu'; sleep 60", "timeoutMs": 0}),
    )
    .await;
    let node_id = id(&drawn);
    let shown =
        screen_until(&agent, &node_id, |s| s["output"].as_str().unwrap().contains("menu")).await;
    let keys: Vec<&str> = shown.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "nodeId",
            "output",
            "cursor",
            "running",
            "exitCode",
            "signal",
            "rows",
            "cols",
            "cursorRow",
            "cursorCol",
            "alternateScreen",
            "waitingForInput",
            "inputBy"
        ]
    );
    // A program asleep after drawing waits for nothing (protocol 1.5.0).
    assert_eq!((&shown["waitingForInput"], &shown["inputBy"]), (&json!(false), &Value::Null));
    let screen_rows = rows(&shown);
    assert_eq!(screen_rows.len(), 48);
    assert_eq!(screen_rows[4], format!("{}X", " ".repeat(9)));
    assert_eq!(screen_rows[11], format!("{}menu", " ".repeat(29)));
    // After "menu" the cursor stands just behind it: row 11, column 33 (0-based).
    assert_eq!((&shown["cursorRow"], &shown["cursorCol"]), (&json!(11), &json!(33)));
    assert_eq!(shown["alternateScreen"], true);
    // Every row is there, and none ends in a space.
    assert!(screen_rows.iter().all(|row| !row.ends_with(' ')));
    ok(&agent, "terminal_kill", json!({"nodeId": node_id})).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_key_or_an_empty_call_sends_nothing() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let node_id = shell(&agent).await;
    let ready =
        ok(&agent, "terminal_submit", json!({"nodeId": node_id, "command": "echo ready"})).await;
    ok(
        &agent,
        "terminal_wait",
        json!({"nodeId": node_id, "until": "text", "text": "ready\n", "since": cursor(&ready), "timeoutMs": 10000}),
    )
    .await;
    let quiet = ok(
        &agent,
        "terminal_wait",
        json!({"nodeId": node_id, "until": "quiet", "quietMs": 300, "timeoutMs": 10000}),
    )
    .await;
    let before = cursor(&quiet);
    for (args, message) in [
        (
            json!({"nodeId": node_id, "text": "echo leaked", "keys": ["Enter", "Foo"]}),
            "Invalid keys",
        ),
        (json!({"nodeId": node_id, "keys": ["Enter", "\u{1b}"]}), "Invalid keys"),
        (json!({"nodeId": node_id, "keys": ["a"]}), "Invalid keys"),
        (json!({"nodeId": node_id}), "Invalid text"),
    ] {
        assert_eq!(fails(&agent, "terminal_input", args.clone()).await, message, "{args}");
    }
    let nothing = ok(
        &agent,
        "terminal_wait",
        json!({"nodeId": node_id, "until": "change", "since": before, "timeoutMs": 700}),
    )
    .await;
    assert_eq!((&nothing["reached"], &nothing["output"]), (&json!(false), &json!("")), "{nothing}");
    assert!(!screen(&agent, &node_id).await["output"].as_str().unwrap().contains("leaked"));
}

#[tokio::test(flavor = "multi_thread")]
async fn keep_false_leaves_no_node() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let done = ok(
        &agent,
        "terminal_run",
        json!({"command": "echo gone", "keep": false, "timeoutMs": 20000}),
    )
    .await;
    assert_eq!(
        (&done["running"], &done["exitCode"], &done["output"]),
        (&json!(false), &json!(0), &json!("gone\n"))
    );
    assert_eq!(node(&agent, &id(&done)).await, Value::Null);
    assert!(
        !fixture.guard.tmux(&["has-session", "-t", &format!("=ts-{}", id(&done))]).status.success()
    );

    // Still running when the run answers: the first wait that sees the exit closes it.
    let running = ok(
        &agent,
        "terminal_run",
        json!({"command": "sleep 0.5; echo later; sleep 1", "keep": false, "timeoutMs": 0}),
    )
    .await;
    assert_eq!(running["running"], true);
    assert_eq!(node(&agent, &id(&running)).await["kind"], "terminal");
    let text = ok(
        &agent,
        "terminal_wait",
        json!({"nodeId": id(&running), "until": "text", "text": "later", "since": 0, "timeoutMs": 10000}),
    )
    .await;
    // This answer reports it running: the node stays.
    assert_eq!((&text["reached"], &text["running"]), (&json!(true), &json!(true)));
    assert_eq!(node(&agent, &id(&running)).await["kind"], "terminal");
    let exited = ok(
        &agent,
        "terminal_wait",
        json!({"nodeId": id(&running), "until": "exit", "since": 0, "timeoutMs": 10000}),
    )
    .await;
    assert_eq!((&exited["running"], &exited["output"]), (&json!(false), &json!("later\n")));
    assert_eq!(node(&agent, &id(&running)).await, Value::Null);

    // keep true (and the default) keeps the node.
    let kept = ok(
        &agent,
        "terminal_run",
        json!({"command": "echo kept", "keep": true, "timeoutMs": 20000}),
    )
    .await;
    assert_eq!(node(&agent, &id(&kept)).await["kind"], "terminal");
}

/// The processes that serve the output pipe of one of `nodes`: the pipe's `sh -c` (its command
/// line names the node's `.out` file) and its children (`cat`).
fn pipe_processes(nodes: &[String]) -> Vec<String> {
    let mut pipes: Vec<(String, String)> = Vec::new();
    let mut all: Vec<(String, String, String)> = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let pid = entry.file_name().to_string_lossy().into_owned();
        if !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        let parent =
            stat.rsplit_once(") ").map_or("", |(_, rest)| rest.split(' ').nth(1).unwrap_or(""));
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if nodes.iter().any(|node| cmdline.contains(&format!("/{node}.out"))) {
            pipes.push((pid.clone(), cmdline.clone()));
        }
        all.push((pid, parent.to_owned(), cmdline));
    }
    let mut found: Vec<String> = pipes.iter().map(|(pid, cmd)| format!("{pid} {cmd}")).collect();
    for (pid, ppid, cmdline) in &all {
        if pipes.iter().any(|(pipe, _)| pipe == ppid) {
            found.push(format!("{pid} {cmdline}"));
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread")]
async fn finished_run_nodes_hold_no_process_and_stay_readable() {
    let mut fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    // A long one first, to see the helpers while it runs.
    let long = ok(&agent, "terminal_run", json!({"command": "sleep 30", "timeoutMs": 0})).await;
    let running_helpers = pipe_processes(&[id(&long)]);
    assert_eq!(
        running_helpers.len(),
        2,
        "a running node has its pipe's sh and cat: {running_helpers:?}"
    );
    ok(&agent, "terminal_kill", json!({"nodeId": id(&long)})).await;

    let mut nodes = vec![id(&long)];
    for n in 0..20 {
        let done = ok(
            &agent,
            "terminal_run",
            json!({"command": format!("echo finished-{n}"), "timeoutMs": 20000}),
        )
        .await;
        assert_eq!(
            (&done["running"], &done["output"]),
            (&json!(false), &json!(format!("finished-{n}\n")))
        );
        nodes.push(id(&done));
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = pipe_processes(&nodes);
        if left.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "helpers of finished run nodes are left: {left:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Every output stays readable, through a restart of the server too.
    fixture.restart().await;
    for (n, node_id) in nodes.iter().skip(1).enumerate() {
        let read = ok(&agent, "terminal_read", json!({"nodeId": node_id})).await;
        assert_eq!(
            (&read["output"], &read["running"], &read["exitCode"]),
            (&json!(format!("finished-{n}\n")), &json!(false), &json!(0))
        );
        let since = ok(&agent, "terminal_read", json!({"nodeId": node_id, "since": 0})).await;
        assert_eq!(since["output"], format!("finished-{n}\n"));
        let exit = ok(
            &agent,
            "terminal_wait",
            json!({"nodeId": node_id, "until": "exit", "timeoutMs": 1000}),
        )
        .await;
        assert_eq!((&exit["reached"], &exit["exitCode"]), (&json!(true), &json!(0)));
    }
    let killed = ok(&agent, "terminal_read", json!({"nodeId": nodes[0]})).await;
    assert_eq!((&killed["running"], &killed["signal"]), (&json!(false), &json!("SIGKILL")));
    // Closing a retired node removes it.
    ok(&agent, "terminal_close", json!({"nodeId": nodes[1]})).await;
    assert_eq!(node(&agent, &nodes[1]).await, Value::Null);
}

/// Waits (at most 10 s) until no helper process of `node_id`'s output pipe is left.
async fn helpers_gone(node_id: &str, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = pipe_processes(&[node_id.to_owned()]);
        if left.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "{what}: helpers are left: {left:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Regression (a CI run under load): a killed run node kept its pipe's helpers until someone
/// read it, because only the periodic sweep retired it and tmux 3.3a had not run its
/// `pane-died` hook. The answer of `terminal_kill` reports the finish, so it retires the node;
/// here the sweep never runs after the start.
#[tokio::test(flavor = "multi_thread")]
async fn a_killed_run_node_lets_go_of_its_processes_at_the_kill() {
    let fixture =
        Fixture::start_with(|config| config.liveness_interval = Duration::from_hours(1)).await;
    let agent = fixture.agent("alpha").await;
    for round in 0..3 {
        // The last round's node has `keep: false`: a kill retires it but does not close it.
        let args = json!({"command": "sleep 30", "timeoutMs": 0, "keep": round != 2});
        let long = ok(&agent, "terminal_run", args).await;
        assert_eq!(pipe_processes(&[id(&long)]).len(), 2, "the running node's pipe");
        let killed = ok(&agent, "terminal_kill", json!({"nodeId": id(&long)})).await;
        assert_eq!((&killed["running"], &killed["signal"]), (&json!(false), &json!("SIGKILL")));
        assert!(fixture.agent_tools().join(format!("terminals/{}.final", id(&long))).exists());
        helpers_gone(&id(&long), &format!("round {round}")).await;
        let read = ok(&agent, "terminal_read", json!({"nodeId": id(&long), "since": 0})).await;
        assert_eq!((&read["running"], &read["signal"]), (&json!(false), &json!("SIGKILL")));
        assert_eq!(node(&agent, &id(&long)).await["kind"], "terminal", "round {round}");
    }
}

/// A run node whose program ended with no witness file (its wrapper killed with it, so no
/// status; its `pane-died` hook removed here, as tmux 3.3a sometimes does not run it) is still
/// retired by the sweep, which lists the dead panes, though nobody looks at it.
#[tokio::test(flavor = "multi_thread")]
async fn the_sweep_retires_a_dead_run_node_without_a_witness() {
    let fixture =
        Fixture::start_with(|config| config.liveness_interval = Duration::from_millis(50)).await;
    let agent = fixture.agent("alpha").await;
    let gate = fixture.dir.path().join("gate");
    let command = format!("while [ ! -e '{}' ]; do sleep 0.02; done; kill -KILL 0", gate.display());
    let run = ok(&agent, "terminal_run", json!({"command": command, "timeoutMs": 0})).await;
    let session = format!("=ts-{}:", id(&run));
    let unhooked = fixture.guard.tmux(&["set-hook", "-u", "-t", &session, "pane-died"]);
    assert!(unhooked.status.success(), "{unhooked:?}");
    std::fs::write(&gate, b"").unwrap();
    helpers_gone(&id(&run), "the sweep").await;
    let files = fixture.agent_tools().join("terminals");
    for witness in ["status", "died"] {
        assert!(!files.join(format!("{}.{witness}", id(&run))).exists(), "{witness}");
    }
    assert!(files.join(format!("{}.final", id(&run))).exists());
    let read = ok(&agent, "terminal_read", json!({"nodeId": id(&run)})).await;
    assert_eq!((&read["running"], &read["signal"]), (&json!(false), &json!("SIGKILL")));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_finished_run_node_reads_without_the_dead_pane_line() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let done = ok(
        &agent,
        "terminal_run",
        json!({"command": "printf 'one\\ntwo\\n'; exit 3", "timeoutMs": 20000}),
    )
    .await;
    assert_eq!(done["exitCode"], 3);
    let read = ok(&agent, "terminal_read", json!({"nodeId": id(&done)})).await;
    assert_eq!(
        (&read["output"], &read["running"], &read["exitCode"]),
        (&json!("one\ntwo\n"), &json!(false), &json!(3)),
        "{read}"
    );
    let shown = screen(&agent, &id(&done)).await;
    let shown_rows = rows(&shown);
    assert_eq!(shown_rows.len(), 48);
    assert_eq!(&shown_rows[..2], ["one", "two"]);
    assert!(shown_rows[2..].iter().all(String::is_empty), "{}", shown["output"]);
    assert_eq!((&shown["cursorRow"], &shown["cursorCol"]), (&json!(2), &json!(0)));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_direct_form_sends_keys_and_reads_the_screen() {
    let Some(ctl) = built_termsprawlctl() else { return };
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let direct = |args: &[&str]| {
        tokio::task::block_in_place(|| {
            Command::new(&ctl)
                .args(args)
                .env_clear()
                .env("TERMSPRAWL_SESSION_FILE", &agent.session_file)
                .stdin(Stdio::null())
                .output()
                .unwrap()
        })
    };
    let json_of = |output: &std::process::Output| -> Value {
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        serde_json::from_slice(&output.stdout).unwrap()
    };
    let node_id = shell(&agent).await;
    let typed = json_of(&direct(&[
        "terminal_input",
        "--nodeId",
        &node_id,
        "--text",
        "echo direct-$((6*7))",
        "--keys",
        "Enter",
    ]));
    let since = cursor(&typed).to_string();
    let waited = json_of(&direct(&[
        "terminal_wait",
        "--nodeId",
        &node_id,
        "--until",
        "text",
        "--text",
        "direct-42\n",
        "--since",
        &since,
        "--timeoutMs",
        "10000",
    ]));
    assert_eq!(waited["reached"], true, "{waited}");
    let shown = json_of(&direct(&["terminal_read", "--nodeId", &node_id, "--view", "screen"]));
    assert!(rows(&shown).iter().any(|row| row == "direct-42"), "{shown}");
    assert_eq!(shown["rows"], 48);
    // Keys by name, repeated flag for the array; an unknown key is refused and exits 1.
    let refused =
        direct(&["terminal_input", "--nodeId", &node_id, "--keys", "Escape", "--keys", "Nope"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("Invalid keys"), "{refused:?}");
    let empty = direct(&["terminal_input", "--nodeId", &node_id]);
    assert_eq!(empty.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&empty.stderr).contains("Invalid text"), "{empty:?}");
    let both = direct(&["terminal_read", "--nodeId", &node_id, "--view", "screen", "--since", "0"]);
    assert!(String::from_utf8_lossy(&both.stderr).contains("Invalid view"), "{both:?}");
    // keep=false through the boolean flag.
    let ran = json_of(&direct(&["terminal_run", "--command", "echo once", "--keep=false"]));
    assert_eq!(ran["output"], "once\n");
    assert_eq!(node(&agent, &id(&ran)).await, Value::Null);
}
