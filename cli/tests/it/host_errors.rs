//! Issues 24 and 39 through the real `termsprawlctl`: every startup mistake of the bridge (a
//! mistake on its command line, no session, a session file that cannot serve) answered to the
//! host in both eras, a server that is down served as usual, a session removed while the bridge
//! runs, the names the narrowing flags drop, and `resources/templates/list` in both eras.

use std::io::Write as _;
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use termsprawl_cli::{MCP_MISSING_SESSION, MISSING_SESSION};

use crate::mcp_support::{App, LOG_PREFIX, Mcp, all_operations, call, request};
use crate::support::BIN;

fn modern(id: Value, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}
    });
    request(id, method, Some(params))
}

fn initialize(id: Value, version: &str) -> Value {
    request(
        id,
        "initialize",
        Some(
            json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}),
        ),
    )
}

/// `command` run with one line on stdin: its exit status, its one answer, its stderr.
fn one_line(command: &mut Command, message: &Value) -> (Option<i32>, Value, String) {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{message}").unwrap();
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    let answer = serde_json::from_slice(&output.stdout).expect("one JSON answer");
    (output.status.code(), answer, String::from_utf8_lossy(&output.stderr).into_owned())
}

/// `termsprawlctl ARGS` as an MCP process, without `TERMSPRAWL_SESSION_FILE`.
fn ctl(args: &[&str]) -> Mcp {
    let mut command = Command::new(BIN);
    command.args(args);
    Mcp::spawn(command, "no token")
}

/// The fix every command-line mistake of `mcp` points to.
const FIX: &str = "Fix the command the host runs for this server: termsprawlctl --session /absolute/path/to/session.json mcp [--read-only] [--tools NAME,...] [--max-wait-ms MS] (docs/hosts.md)";

/// What a session file's mistakes ask for.
const REGISTER: &str = "register the session file of an open termsprawl node (the TERMSPRAWL_SESSION_FILE its agents get, <userData>/agent-tools/sessions/<nodeId>.json) with --session or TERMSPRAWL_SESSION_FILE (docs/hosts.md)";

/// Each mistake of `mcp`'s command line, after `mcp`: the message's problem and `data.problem`.
const COMMAND_LINE_CASES: [(&[&str], &str, &str); 20] = [
    (&["--readonly"], ": unknown option --readonly: did you mean --read-only?", "unknown-option"),
    (&["--read_only"], ": unknown option --read_only: did you mean --read-only?", "unknown-option"),
    (&["-readonly"], ": unknown option -readonly: did you mean --read-only?", "unknown-option"),
    (
        &["--ReadOnly=true"],
        ": unknown option --ReadOnly: did you mean --read-only?",
        "unknown-option",
    ),
    (
        &["--tool", "terminal_read"],
        ": unknown option --tool: did you mean --tools?",
        "unknown-option",
    ),
    (
        &["--mcp-readonly"],
        ": unknown option --mcp-readonly: did you mean --read-only?",
        "unknown-option",
    ),
    (&["--read-only", "--zzqx"], ": unknown option --zzqx.", "unknown-option"),
    (&["---read-only"], ": bad flag syntax: ---read-only.", "option"),
    (
        &["--read-only", "extra"],
        ": unexpected argument \"extra\": mcp takes only --read-only, --tools NAME,... and --max-wait-ms MS.",
        "unexpected-argument",
    ),
    (
        &["--read-only", "--", "--readonly"],
        ": unexpected argument \"--readonly\": mcp takes only --read-only, --tools NAME,... and --max-wait-ms MS.",
        "unexpected-argument",
    ),
    (
        &["--read-only=maybe"],
        ": invalid boolean value \"maybe\" for --read-only: \"maybe\" is not true or false.",
        "option-value",
    ),
    (&["--tools"], " --tools needs a value (NAME,NAME…).", "option-value"),
    (&["--tools", " , "], " --tools needs at least one tool name.", "option-value"),
    (
        &["--tools", "terminal_read,terminal_raed"],
        " --tools: \"terminal_raed\" is no termsprawl operation: did you mean terminal_read?",
        "unknown-tool",
    ),
    (
        &["--tools=TerminalRun"],
        " --tools: \"TerminalRun\" is no termsprawl operation: did you mean terminal_run?",
        "unknown-tool",
    ),
    (&["--tools", "zzqx"], " --tools: \"zzqx\" is no termsprawl operation.", "unknown-tool"),
    (&["--max-wait"], ": unknown option --max-wait: did you mean --max-wait-ms?", "unknown-option"),
    (&["--max-wait-ms"], " --max-wait-ms needs a value (MILLISECONDS).", "option-value"),
    (
        &["--max-wait-ms", "600001"],
        " --max-wait-ms: \"600001\" is not a whole number of milliseconds from 0 to 600000.",
        "option-value",
    ),
    (
        &["--max-wait-ms=1.5"],
        " --max-wait-ms: \"1.5\" is not a whole number of milliseconds from 0 to 600000.",
        "option-value",
    ),
];

/// Drives a bridge that refuses through every request of both eras: each is answered with
/// `-32603`, `message` and `data`; notifications and lines that are not requests are not. Then
/// it must exit 2 at end of input, with `stderr` as given.
fn check_refusal(mut mcp: Mcp, message: &str, data: &Value, stderr: &str) {
    let what = &message[..message.len().min(80)];
    let refusal = |id: Value| {
        json!({"jsonrpc": "2.0", "id": id, "error": {
            "code": -32603, "message": message, "data": data
        }})
    };
    for version in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let answer = mcp.request(&initialize(json!(version), version));
        assert_eq!(answer, refusal(json!(version)), "{what}");
    }
    mcp.send_json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    mcp.send_bytes(b"not json\n");
    let legacy = [
        request(json!(1), "tools/list", None),
        request(json!(2), "ping", None),
        call(json!(3), "canvas_list", json!({})),
        request(json!(4), "resources/list", None),
        request(json!(5), "no/such/method", None),
    ];
    let modern = [
        modern(json!("d"), "server/discover", json!({})),
        modern(json!(6), "tools/list", json!({})),
        modern(json!(7), "tools/call", json!({"name": "canvas_list", "arguments": {}})),
        modern(json!(8), "resources/list", json!({})),
    ];
    for message in legacy.iter().chain(&modern) {
        assert_eq!(mcp.request(message), refusal(message["id"].clone()), "{what}");
    }
    let closed = mcp.close_unchecked();
    assert_eq!(closed.status.code(), Some(2), "{what}");
    assert!(closed.rest.is_empty(), "{what}");
    let not_json = format!("{LOG_PREFIX}ignored a line that is not JSON");
    let mut lines = closed.stderr.lines();
    assert_eq!(lines.next_back().map(|line| line.starts_with(&not_json)), Some(true), "{what}");
    assert_eq!(lines.collect::<Vec<_>>().join("\n"), stderr, "{what}");
}

#[test]
fn every_command_line_mistake_is_answered_in_both_eras_with_its_fix() {
    let app = App::start();
    for (options, problem, kind) in COMMAND_LINE_CASES {
        let message = format!("termsprawlctl mcp{problem} {FIX}");
        let data = json!({
            "problem": kind,
            "usage": "termsprawlctl --session /absolute/path/to/session.json mcp [--read-only] [--tools NAME,...] [--max-wait-ms MS]",
            "guide": "docs/hosts.md"
        });
        // With a working session it serves nothing: a typo must never widen access.
        check_refusal(app.mcp_with(options), &message, &data, &message);
        assert_eq!(app.calls(), 0, "{options:?}: nothing reached the app");
        // Without a session the option is still the mistake named first.
        let mut args = vec!["mcp"];
        args.extend_from_slice(options);
        check_refusal(ctl(&args), &message, &data, &message);
    }
    // The accepted spellings of the scanner serve as before.
    for options in [&["--read-only=true"][..], &["-read-only"], &["--tools=terminal_read"]] {
        let mut mcp = app.mcp_with(options);
        let list = mcp.request(&request(json!(1), "tools/list", None));
        assert!(list["result"]["tools"].as_array().is_some_and(|tools| !tools.is_empty()));
        assert!(mcp.close().status.success(), "{options:?}");
    }
    let mut mcp = app.mcp_with(&["--read-only=false"]);
    let list = mcp.request(&request(json!(1), "tools/list", None));
    assert_eq!(list["result"]["tools"].as_array().map(Vec::len), Some(all_operations().len()));
    assert!(mcp.close().status.success());
}

#[test]
fn mcp_without_a_session_answers_every_request_with_what_to_pass_and_exits_2() {
    let data = json!({
        "missing": "session",
        "flag": "--session",
        "environment": "TERMSPRAWL_SESSION_FILE",
        "usage": "termsprawlctl --session /absolute/path/to/session.json mcp",
        "guide": "docs/hosts.md"
    });
    assert!(MCP_MISSING_SESSION.contains("--session /absolute/path/to/session.json"));
    assert!(MCP_MISSING_SESSION.contains("TERMSPRAWL_SESSION_FILE"));
    // The compatibility line of a missing session, then the bridge's own message.
    let stderr = format!("{MISSING_SESSION}\n{MCP_MISSING_SESSION}");
    // Every way of having no session: none, an empty flag value, the flag without a value.
    for args in [
        &["mcp"][..],
        &["--session", "", "mcp"],
        &["mcp", "--session"],
        &["mcp", "--read-only", "--tools", "terminal_read"],
    ] {
        check_refusal(ctl(args), MCP_MISSING_SESSION, &data, &stderr);
    }
}

#[test]
fn a_session_file_that_cannot_serve_is_answered_in_both_eras_with_its_fix() {
    let app = App::start();
    let sessions = app.session_file().parent().unwrap().to_path_buf();
    let temp = tempfile::tempdir().unwrap();
    let folder = sessions.join("folder-node.json");
    std::fs::create_dir(&folder).unwrap();
    let not_json = sessions.join("broken.json");
    std::fs::write(&not_json, "{\"token\":").unwrap();
    let no_token = sessions.join("empty.json");
    std::fs::write(&no_token, "{\"nodeId\":\"empty\"}").unwrap();
    let gone = sessions.join("closed-node.json");
    let nowhere = temp.path().join("agent-1.json");
    let cases = [
        (
            &gone,
            "session-removed",
            format!(
                "termsprawlctl mcp: the session of termsprawl node closed-node was removed ({} no longer exists): that node was closed, or the app restarted without it. Start the agent in an open node (or make one, e.g. `termsprawl-headless launch --json`), then register that node's session file in place of this one, with --session or TERMSPRAWL_SESSION_FILE (docs/hosts.md)",
                gone.display()
            ),
        ),
        (
            &nowhere,
            "session-missing",
            format!(
                "termsprawlctl mcp: there is no session file {}: {REGISTER}",
                nowhere.display()
            ),
        ),
        (
            &folder,
            "session-unreadable",
            format!(
                "termsprawlctl mcp cannot read its session file {}: Is a directory (os error 21): let the host's user read it, or {REGISTER}",
                folder.display()
            ),
        ),
        (
            &not_json,
            "session-malformed",
            format!(
                "termsprawlctl mcp: {} is not a session file (it is not JSON): {REGISTER}",
                not_json.display()
            ),
        ),
        (
            &no_token,
            "session-malformed",
            format!(
                "termsprawlctl mcp: {} is not a session file (it has no token): {REGISTER}",
                no_token.display()
            ),
        ),
    ];
    for (path, kind, message) in &cases {
        assert!(!message.contains("Check that termsprawl is running"), "{message}");
        let data = json!({
            "problem": kind,
            "sessionFile": path.display().to_string(),
            "flag": "--session",
            "environment": "TERMSPRAWL_SESSION_FILE",
            "guide": "docs/hosts.md"
        });
        let mut command = Command::new(BIN);
        command.arg("--session").arg(path).arg("mcp");
        check_refusal(Mcp::spawn(command, app.token()), message, &data, message);
        // The variable is read the same way.
        let (status, stdout, stderr) = one_line(
            Command::new(BIN).arg("mcp").env("TERMSPRAWL_SESSION_FILE", path),
            &initialize(json!(1), "2025-11-25"),
        );
        assert_eq!(status, Some(2), "{message}");
        assert_eq!(stdout["error"]["message"], json!(message));
        assert_eq!(stderr, format!("{message}\n"));
    }
    assert_eq!(app.calls(), 0, "nothing reached the app");
}

#[test]
fn a_tool_server_that_is_down_is_no_startup_mistake() {
    // A valid session file whose server is not running (no endpoint.json): the bridge serves,
    // and each handshake finds the server, or not, when it comes; the app may be restarting.
    let temp = tempfile::tempdir().unwrap();
    let sessions = temp.path().join("sessions");
    std::fs::create_dir(&sessions).unwrap();
    let session = sessions.join("agent-1.json");
    std::fs::write(
        &session,
        format!("{{\"nodeId\":\"agent-1\",\"token\":\"{}\"}}", "a".repeat(64)),
    )
    .unwrap();
    let mut command = Command::new(BIN);
    command.arg("--session").arg(&session).arg("mcp");
    let mut mcp = Mcp::spawn(command, &"a".repeat(64));
    let answer = mcp.request(&initialize(json!(1), "2025-11-25"));
    let endpoint = temp.path().join("endpoint.json");
    assert_eq!(
        answer["error"]["message"],
        format!(
            "Tool connection unavailable: cannot read {}: No such file or directory (os error 2). Check that termsprawl is running. Mutations are not automatically retried.",
            endpoint.display()
        )
    );
    let closed = mcp.close();
    assert!(closed.status.success());
    assert_eq!(closed.stderr, "");
}

#[test]
fn a_session_removed_while_the_bridge_runs_says_so_beside_the_contracts_text() {
    let app = App::start();
    // A second session file of the same token, removed once the bridge serves: the node closed.
    let gone = app.session_file().with_file_name("closed-node.json");
    std::fs::copy(app.session_file(), &gone).unwrap();
    let gone_text = gone.display().to_string();
    let mut command = Command::new(BIN);
    command.arg("--session").arg(&gone).arg("mcp");
    let mut mcp = Mcp::spawn(command, app.token());
    let answer = mcp.request(&initialize(json!(0), "2025-11-25"));
    assert!(answer["result"].is_object(), "{answer}");
    std::fs::remove_file(&gone).unwrap();
    let contract = format!(
        "Tool connection unavailable: cannot read {gone_text}: No such file or directory (os error 2). Check that termsprawl is running. Mutations are not automatically retried."
    );
    let hint = format!(
        "the session file {gone_text} does not exist: the termsprawl node it belonged to was closed, or the app restarted without it. A session file works only while its node is open: start the agent again from a termsprawl node (or `termsprawl-headless launch --json`) and use its session file"
    );
    let answer = mcp.request(&initialize(json!(1), "2025-11-25"));
    assert_eq!(
        answer["error"],
        json!({"code": -32603, "message": contract, "data": {"hint": hint}})
    );
    let answer = mcp.request(&modern(json!(2), "server/discover", json!({})));
    assert_eq!(answer["error"]["data"]["hint"], hint);
    // A call's result keeps the contract's text exactly.
    let answer = mcp.request(&modern(json!(3), "tools/call", json!({"name": "canvas_list"})));
    let text = json!({"ok": false, "error": contract}).to_string();
    assert_eq!(answer["result"]["content"], json!([{"type": "text", "text": text}]));
    let closed = mcp.close();
    assert!(closed.status.success());
    assert_eq!(closed.stderr, format!("{LOG_PREFIX}{hint}\n"), "the hint is logged once");
    // `doctor` and `call`: the contract's output on stdout as it was, the hint on stderr.
    for mode in [&["doctor"][..], &["call", "canvas_list"]] {
        let output = Command::new(BIN)
            .arg("--session")
            .arg(&gone)
            .args(mode)
            .env_remove("TERMSPRAWL_SESSION_FILE")
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1), "{mode:?}");
        let expected = format!("{{\n  \"ok\": false,\n  \"error\": {}\n}}\n", json!(contract));
        assert_eq!(String::from_utf8_lossy(&output.stdout), expected, "{mode:?}");
        assert_eq!(String::from_utf8_lossy(&output.stderr), format!("hint: {hint}\n"), "{mode:?}");
    }
    // The direct form: its error line as before, then the hint.
    let output = Command::new(BIN)
        .arg("--session")
        .arg(&gone)
        .arg("canvas_list")
        .env_remove("TERMSPRAWL_SESSION_FILE")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!("Error: {contract}\nhint: {hint}\n")
    );
}

#[test]
fn an_unknown_acp_option_is_a_usage_error_that_names_it() {
    for (option, message) in [
        ("--mcp-readonly", "unknown option --mcp-readonly: did you mean --mcp-read-only?"),
        ("--mcp_read_only", "unknown option --mcp_read_only: did you mean --mcp-read-only?"),
        ("-no_mcp", "unknown option -no_mcp: did you mean --no-mcp?"),
        ("--promt=hi", "unknown option --promt: did you mean --prompt?"),
        ("--zzqx", "unknown option --zzqx"),
    ] {
        let output = Command::new(BIN)
            .args(["acp", option, "--", "/bin/true"])
            .env_remove("TERMSPRAWL_SESSION_FILE")
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{option}");
        assert!(output.stdout.is_empty(), "{option}");
        assert_eq!(
            String::from_utf8_lossy(&output.stderr),
            format!("termsprawlctl: acp: {message}\nRun `termsprawlctl acp --help` for usage.\n"),
            "{option}"
        );
    }
}

#[test]
fn names_the_narrowing_flags_drop_are_named_once_on_stderr() {
    // `--read-only` removes a name `--tools` gave: said when the bridge starts.
    let app = App::start();
    let mut mcp = app.mcp_with(&["--read-only", "--tools", "terminal_run,terminal_read"]);
    let list = mcp.request(&request(json!(1), "tools/list", None));
    assert_eq!(list["result"]["tools"][0]["name"], "terminal_read");
    assert_eq!(list["result"]["tools"].as_array().map(Vec::len), Some(1));
    let closed = mcp.close();
    assert!(closed.status.success());
    assert_eq!(
        closed.stderr,
        format!(
            "{LOG_PREFIX}--read-only removes terminal_run from --tools: not listed or served\n"
        )
    );
    // A server without a browser: the browser names `--tools` keeps are named once, at the first
    // handshake, however many follow.
    let without_browser: Vec<&str> =
        all_operations().into_iter().filter(|name| !name.starts_with("browser_")).collect();
    let app = App::listing(without_browser);
    let mut mcp = app.mcp_with(&["--tools", "browser_open,terminal_read,browser_click"]);
    for id in 1..=2 {
        let answer = mcp.request(&initialize(json!(id), "2025-11-25"));
        assert!(answer["result"].is_object(), "{answer}");
    }
    let list = mcp.request(&modern(json!(3), "tools/list", json!({})));
    assert_eq!(list["result"]["tools"].as_array().map(Vec::len), Some(1));
    let closed = mcp.close();
    assert!(closed.status.success());
    assert_eq!(
        closed.stderr,
        format!(
            "{LOG_PREFIX}--tools names browser_open, browser_click, which the server does not list (session_info operations): not listed\n"
        )
    );
    // Nothing dropped, nothing said.
    let mut mcp = app.mcp_with(&["--read-only", "--tools", "terminal_read"]);
    mcp.request(&initialize(json!(1), "2025-11-25"));
    assert_eq!(mcp.close().stderr, "");
}

#[test]
fn resources_templates_list_is_an_empty_list_in_both_eras() {
    let app = App::start();
    let mut mcp = app.mcp();
    for version in ["2024-11-05", "2025-11-25"] {
        mcp.request(&initialize(json!(0), version));
        let answer = mcp.request(&request(json!(1), "resources/templates/list", None));
        assert_eq!(answer, json!({"jsonrpc": "2.0", "id": 1, "result": {"resourceTemplates": []}}));
    }
    let answer =
        mcp.request(&request(json!(2), "resources/templates/list", Some(json!({"cursor": "x"}))));
    assert_eq!(answer["error"]["code"], -32602);
    let answer = mcp.request(&modern(json!(3), "resources/templates/list", json!({})));
    assert_eq!(
        answer["result"],
        json!({"resultType": "complete", "resourceTemplates": [], "ttlMs": 3_600_000, "cacheScope": "public"})
    );
    let closed = mcp.close();
    assert!(closed.status.success());
    assert_eq!(closed.stderr, "");
}

/// The startup mistakes a real host is tried with: a name, the arguments, and a `sessions/`
/// folder to put session files in (the removed node's, a malformed one).
fn startup_mistakes(sessions: &std::path::Path) -> Vec<(&'static str, Vec<String>)> {
    std::fs::create_dir_all(sessions).unwrap();
    let broken = sessions.join("broken.json");
    std::fs::write(&broken, "{\"token\":").unwrap();
    let session = |path: std::path::PathBuf| {
        vec!["--session".to_owned(), path.display().to_string(), "mcp".to_owned()]
    };
    let words = |words: &[&str]| words.iter().map(|word| (*word).to_owned()).collect::<Vec<_>>();
    vec![
        ("misspelt option", words(&["mcp", "--readonly"])),
        ("tools name", words(&["mcp", "--tools", "terminal_raed"])),
        ("no session", words(&["mcp"])),
        ("closed node", session(sessions.join("closed-node.json"))),
        ("missing file", session(sessions.join("../../nowhere/agent-1.json"))),
        ("unreadable file", session(sessions.to_path_buf())),
        ("malformed file", session(broken)),
    ]
}

/// The message the bridge answers an `initialize` with, read over a raw pipe.
fn refusal_message(args: &[String]) -> String {
    let (status, answer, _) = one_line(
        Command::new(BIN).args(args).env_remove("TERMSPRAWL_SESSION_FILE"),
        &initialize(json!(1), "2025-11-25"),
    );
    assert_eq!(status, Some(2), "{args:?}");
    let message = answer["error"]["message"].as_str().expect("a refusal").to_owned();
    assert!(message.starts_with("termsprawlctl mcp"), "{message}");
    message
}

#[test]
fn the_official_python_sdk_shows_each_startup_mistake_in_both_eras() {
    let temp = tempfile::tempdir().unwrap();
    let mistakes = startup_mistakes(&temp.path().join("data/sessions"));
    let python = termsprawl_test_support::peers::python("mcp-sdk");
    let mut command = Command::new(python);
    command
        .arg(termsprawl_test_support::workspace_root().join("tests/python/mcp_startup.py"))
        .arg("--binary")
        .arg(BIN);
    for (name, args) in &mistakes {
        command.arg("--case").arg(name).arg(json!(args).to_string());
    }
    let output = command.output().expect("the venv's python runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    for (name, args) in &mistakes {
        let message = refusal_message(args);
        let runs = report[name].as_array().unwrap();
        assert_eq!(runs.len(), 2, "{report}");
        for (run, era) in runs.iter().zip(["2026-07-28", "handshake"]) {
            // What the SDK raises, as a host shows it: the error's code and message.
            assert_eq!(run["era"], era);
            assert_eq!(run["code"], -32603, "{name} {era}: {run}");
            assert_eq!(run["message"], json!(message), "{name} {era}");
            let stderr: Vec<&str> =
                run["stderr"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
            assert_eq!(stderr.last(), Some(&message.as_str()), "{name} {era}: the same on stderr");
        }
    }
}
