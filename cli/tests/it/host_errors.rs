//! Issue 24 items 3 and 4 through the real `termsprawlctl`: what a host can show when the bridge
//! cannot work (no session, a session whose node is gone), options that would widen access by a
//! typo, the names the narrowing flags drop, and `resources/templates/list` in both eras.

use std::process::Command;

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

/// `termsprawlctl ARGS` as an MCP process, without `TERMSPRAWL_SESSION_FILE`.
fn ctl(args: &[&str]) -> Mcp {
    let mut command = Command::new(BIN);
    command.args(args);
    Mcp::spawn(command, "no token")
}

#[test]
fn mcp_without_a_session_answers_every_request_with_what_to_pass_and_exits_2() {
    let refusal = |id: Value| {
        json!({"jsonrpc": "2.0", "id": id, "error": {
            "code": -32603,
            "message": MCP_MISSING_SESSION,
            "data": {
                "missing": "session",
                "flag": "--session",
                "environment": "TERMSPRAWL_SESSION_FILE",
                "usage": "termsprawlctl --session /absolute/path/to/session.json mcp",
                "guide": "docs/hosts.md"
            }
        }})
    };
    assert!(MCP_MISSING_SESSION.contains("--session /absolute/path/to/session.json"));
    assert!(MCP_MISSING_SESSION.contains("TERMSPRAWL_SESSION_FILE"));
    let mut mcp = ctl(&["mcp"]);
    for version in ["2024-11-05", "2025-06-18", "2025-11-25"] {
        assert_eq!(mcp.request(&initialize(json!(version), version)), refusal(json!(version)));
    }
    assert_eq!(mcp.request(&modern(json!("d"), "server/discover", json!({}))), refusal(json!("d")));
    assert_eq!(mcp.request(&modern(json!(2), "tools/list", json!({}))), refusal(json!(2)));
    // Notifications and lines that are not requests are not answered: the next line answers the
    // next request.
    mcp.send_json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    mcp.send_bytes(b"not json\n");
    for (id, message) in [
        (json!(3), request(json!(3), "ping", None)),
        (json!(4), request(json!(4), "tools/list", None)),
        (json!(5), call(json!(5), "canvas_list", json!({}))),
        (json!(6), request(json!(6), "no/such/method", None)),
    ] {
        assert_eq!(mcp.request(&message), refusal(id));
    }
    let closed = mcp.close_unchecked();
    assert_eq!(closed.status.code(), Some(2), "the exit status of a missing session");
    assert!(closed.rest.is_empty());
    let mut lines = closed.stderr.lines();
    assert_eq!(lines.next(), Some(MISSING_SESSION), "{}", closed.stderr);
    let logs: Vec<&str> = lines.collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    assert!(logs[0].starts_with(&format!("{LOG_PREFIX}ignored a line that is not JSON")));
    // Every way of having no session: an empty flag value, the flag without a value.
    for args in [&["--session", "", "mcp"][..], &["mcp", "--session"], &["mcp", "--read-only"]] {
        let mut mcp = ctl(args);
        assert_eq!(mcp.request(&initialize(json!(1), "2025-06-18")), refusal(json!(1)), "{args:?}");
        let closed = mcp.close_unchecked();
        assert_eq!(closed.status.code(), Some(2), "{args:?}");
        assert_eq!(closed.stderr, format!("{MISSING_SESSION}\n"), "{args:?}");
    }
}

#[test]
fn a_session_whose_node_is_gone_says_so_beside_the_contracts_text() {
    let app = App::start();
    let gone = app.session_file().with_file_name("closed-node.json");
    let gone_text = gone.display().to_string();
    let mut command = Command::new(BIN);
    command.arg("--session").arg(&gone).arg("mcp");
    let mut mcp = Mcp::spawn(command, app.token());
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

/// Each unknown option of `mcp`, as typed, the message, with and without a session.
const MCP_CASES: [(&[&str], &str); 13] = [
    (&["--readonly"], "Error: mcp: unknown option --readonly: did you mean --read-only?\n"),
    (&["--read_only"], "Error: mcp: unknown option --read_only: did you mean --read-only?\n"),
    (&["-readonly"], "Error: mcp: unknown option -readonly: did you mean --read-only?\n"),
    (&["--ReadOnly=true"], "Error: mcp: unknown option --ReadOnly: did you mean --read-only?\n"),
    (&["--tool", "terminal_read"], "Error: mcp: unknown option --tool: did you mean --tools?\n"),
    (&["--mcp-readonly"], "Error: mcp: unknown option --mcp-readonly: did you mean --read-only?\n"),
    (&["--read-only", "--zzqx"], "Error: mcp: unknown option --zzqx\n"),
    (&["--max-wait"], "Error: mcp: unknown option --max-wait: did you mean --max-wait-ms?\n"),
    (&["--max-wait-ms"], "Error: mcp --max-wait-ms needs a value: MILLISECONDS\n"),
    (
        &["--max-wait-ms", "600001"],
        "Error: mcp --max-wait-ms: \"600001\" is not a whole number of milliseconds from 0 to 600000\n",
    ),
    (
        &["--max-wait-ms=1.5"],
        "Error: mcp --max-wait-ms: \"1.5\" is not a whole number of milliseconds from 0 to 600000\n",
    ),
    (
        &["--read-only", "extra"],
        "Error: mcp: unexpected argument \"extra\": mcp takes only --read-only, --tools NAME,... and --max-wait-ms MS\n",
    ),
    (
        &["--read-only", "--", "--readonly"],
        "Error: mcp: unexpected argument \"--readonly\": mcp takes only --read-only, --tools NAME,... and --max-wait-ms MS\n",
    ),
];

#[test]
fn an_unknown_mcp_option_is_a_usage_error_that_names_it_and_writes_nothing() {
    let app = App::start();
    for (options, message) in MCP_CASES {
        let closed = app.mcp_with(options).close_unchecked();
        assert_eq!(closed.status.code(), Some(2), "{options:?}");
        assert!(closed.rest.is_empty(), "{options:?}");
        assert_eq!(closed.stderr, message, "{options:?}");
        // Without a session the option is still the error: it would widen access once one is given.
        let mut args = vec!["mcp"];
        args.extend_from_slice(options);
        let closed = ctl(&args).close_unchecked();
        assert_eq!(closed.status.code(), Some(2), "{options:?}");
        assert!(closed.rest.is_empty(), "{options:?}");
        assert_eq!(closed.stderr, message, "{options:?}");
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
