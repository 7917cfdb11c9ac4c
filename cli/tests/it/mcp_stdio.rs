//! The raw-pipe test of `termsprawlctl mcp` (`spec/mcp.md` §6): the real binary, driven byte by
//! byte over its stdin and stdout against a fake app on a real loopback tool server. Every stdout
//! line is checked against the strict envelope as it is read, and every stderr line for the log
//! prefix and the absence of the token.

use std::time::Duration;

use serde_json::{Value, json};

use crate::mcp_support::{APP_VERSION, App, LOG_PREFIX, PNG, call, request};

fn ping(id: Value) -> Value {
    request(id, "ping", None)
}

#[test]
fn ids_keep_their_type_and_ping_is_an_empty_object() {
    let app = App::start();
    let mut mcp = app.mcp();
    // Nothing is written before the first request.
    mcp.send_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}\n");
    assert_eq!(mcp.raw_line(), "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}\n");
    mcp.send_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":\"0\",\"method\":\"ping\"}\n");
    assert_eq!(mcp.raw_line(), "{\"jsonrpc\":\"2.0\",\"id\":\"0\",\"result\":{}}\n");
    for id in [json!(-5), json!(i64::MAX), json!("abc"), json!("")] {
        assert_eq!(
            mcp.request(&ping(id.clone())),
            json!({"jsonrpc": "2.0", "id": id, "result": {}})
        );
    }
    let closed = mcp.close();
    assert!(closed.status.success());
    assert!(closed.rest.is_empty());
    assert_eq!(closed.stderr, "");
}

#[test]
fn unknown_methods_are_method_not_found_and_a_discover_probe_then_initialize_works() {
    let app = App::start();
    let mut mcp = app.mcp();
    let not_found = |id: Value| json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}});
    assert_eq!(mcp.request(&request(json!(1), "prompts/list", None)), not_found(json!(1)));
    // A dual-era host probes with server/discover first, then falls back to initialize.
    let discover =
        mcp.request(&request(json!(2), "server/discover", Some(json!({"_meta": modern_meta()}))));
    assert_eq!(discover["result"]["supportedVersions"][0], "2026-07-28");
    let response = mcp.request(&request(
        json!(3),
        "initialize",
        Some(json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}})),
    ));
    assert_eq!(response["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(response["result"]["capabilities"], json!({"tools": {}, "resources": {}}));
    assert_eq!(
        response["result"]["serverInfo"],
        json!({"name": "termsprawl", "title": "termsprawl", "version": APP_VERSION})
    );
    assert_eq!(response["result"]["instructions"], termsprawl_protocol::instructions());
    assert_eq!(mcp.request(&ping(json!(4)))["result"], json!({}));
    let closed = mcp.close();
    assert!(closed.status.success());
    assert!(closed.rest.is_empty());
}

fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}
    })
}

fn modern(id: Value, method: &str, mut params: Value) -> Value {
    params["_meta"] = modern_meta();
    request(id, method, Some(params))
}

#[test]
fn a_modern_session_over_the_pipe() {
    let app = App::start();
    let mut mcp = app.mcp();
    let discover = mcp.request(&modern(json!("d"), "server/discover", json!({})));
    assert_eq!(
        discover["result"]["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "termsprawl", "title": "termsprawl", "version": APP_VERSION})
    );
    assert_eq!(discover["result"]["resultType"], "complete");
    let list = mcp.request(&modern(json!(1), "tools/list", json!({})));
    assert_eq!(list["result"]["resultType"], "complete");
    assert_eq!(list["result"]["cacheScope"], "private");
    assert_eq!(list["result"]["tools"].as_array().unwrap().len(), 37);
    assert!(
        list["result"]["tools"].as_array().unwrap().iter().all(|tool| tool["title"].is_string())
    );
    let text = mcp.request(&modern(
        json!(2),
        "tools/call",
        json!({"name": "canvas_list", "arguments": {}}),
    ));
    assert_eq!(text["result"]["resultType"], "complete");
    assert_eq!(text["result"]["isError"], false);
    let image = mcp.request(&modern(
        json!(3),
        "tools/call",
        json!({"name": "browser_screenshot", "arguments": {"nodeId": "b1"}}),
    ));
    assert_eq!(
        image["result"]["content"][0],
        json!({"type": "image", "data": PNG, "mimeType": "image/png"})
    );
    let unknown = mcp.request(&modern(json!(4), "tools/call", json!({"name": "no_such_tool"})));
    assert_eq!(unknown["error"], json!({"code": -32602, "message": "Unknown tool: no_such_tool"}));
    let old = mcp.request(&request(json!(5), "tools/list", None));
    assert_eq!(old["error"]["code"], -32602);
    let version = mcp.request(&request(json!(6), "tools/list", Some(json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "1900-01-01", "io.modelcontextprotocol/clientCapabilities": {}}}))));
    assert_eq!(version["error"]["code"], -32022);
    assert_eq!(version["error"]["data"]["requested"], "1900-01-01");
    let guide = mcp.request(&modern(
        json!(7),
        "resources/read",
        json!({"uri": "termsprawl://guides/terminal"}),
    ));
    assert_eq!(guide["result"]["contents"][0]["mimeType"], "text/markdown");
    let closed = mcp.close();
    assert!(closed.status.success());
    assert!(closed.rest.is_empty());
}

#[test]
fn read_only_and_tools_narrow_what_the_bridge_serves() {
    let app = App::start();
    let mut mcp = app.mcp_with(&[
        "--read-only",
        "--tools",
        "terminal_read,terminal_submit",
        "--tools=session_info",
    ]);
    let list = mcp.request(&request(json!(1), "tools/list", None));
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["session_info", "terminal_read"]);
    let refused =
        mcp.request(&call(json!(2), "terminal_submit", json!({"nodeId": "t", "command": "ls"})));
    assert_eq!(
        refused["error"],
        json!({"code": -32602, "message": "Unknown tool: terminal_submit"})
    );
    let closed = mcp.close();
    assert!(closed.status.success());
}

#[test]
fn notifications_are_never_answered() {
    let app = App::start();
    let mut mcp = app.mcp();
    mcp.send_json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    mcp.send_json(
        &json!({"jsonrpc": "2.0", "method": "notifications/no_such_thing", "params": {"a": 1}}),
    );
    mcp.send_json(&json!({"jsonrpc": "2.0", "method": "ping"}));
    mcp.send_json(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99, "reason": "stray"}}),
    );
    assert_eq!(mcp.settle(), Vec::<Value>::new());
    let closed = mcp.close();
    assert!(closed.status.success());
    assert!(closed.rest.is_empty());
    assert_eq!(closed.stderr, "", "notifications are not logged either");
}

#[test]
fn three_requests_in_one_chunk_and_crlf() {
    let app = App::start();
    let mut mcp = app.mcp();
    mcp.send_bytes(
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"nope\"}\n",
    );
    let ids: Vec<Value> = (0..3).map(|_| mcp.recv()["id"].clone()).collect();
    assert_eq!(ids, [json!(1), json!(2), json!(3)]);
    mcp.send_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}\r\n");
    assert_eq!(mcp.raw_line(), "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}\n");
    let closed = mcp.close();
    assert!(closed.status.success());
    assert_eq!(closed.stderr, "");
}

#[test]
fn bad_input_is_not_answered_and_service_continues() {
    let app = App::start();
    let mut mcp = app.mcp();
    let mut huge = br#"{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"sticky_open","arguments":{"text":""#.to_vec();
    huge.resize(20 * 1024 * 1024, b'x');
    huge.extend_from_slice(b"\"}}}");
    let inputs: [(&str, &[u8]); 10] = [
        ("a blank line", b"   "),
        ("malformed JSON", b"{\"jsonrpc\":\"2.0\",\"id\":1,"),
        ("an empty array", b"[]"),
        ("a bare string", b"\"ping\""),
        ("a null id", br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#),
        ("a missing jsonrpc", br#"{"id":1,"method":"ping"}"#),
        ("a fractional id", br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#),
        ("bytes that are not UTF-8", b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"\xff\xfe\"}"),
        ("a batch", br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#),
        ("a line of 20 MiB", &huge),
    ];
    for (what, input) in inputs {
        mcp.send_bytes(input);
        mcp.send_bytes(b"\n");
        assert_eq!(mcp.settle(), Vec::<Value>::new(), "{what} was answered");
    }
    // Still serving.
    let response = mcp.request(&call(json!(5), "canvas_list", json!({})));
    assert_eq!(response["result"]["isError"], false);
    let closed = mcp.close();
    assert!(closed.status.success());
    assert!(closed.rest.is_empty());
    // One log line per ignored input but the blank line; none echoes more than 200 input bytes.
    let logs: Vec<&str> = closed.stderr.lines().collect();
    assert_eq!(logs.len(), 9, "{logs:#?}");
    for line in &logs {
        assert!(line.starts_with(LOG_PREFIX), "{line}");
        assert!(line.len() < 600, "{line}");
    }
    assert!(logs[8].contains("over the 262144-byte limit"), "{}", logs[8]);
}

#[test]
fn array_params_are_invalid_params() {
    let app = App::start();
    let mut mcp = app.mcp();
    for (method, params) in [("ping", json!([])), ("tools/call", json!(["canvas_list", {}]))] {
        let response = mcp.request(&request(json!(1), method, Some(params)));
        assert_eq!(response["error"]["code"], -32602);
        let message = response["error"]["message"].as_str().unwrap();
        assert!(message.starts_with("Invalid params: "), "{message}");
    }
    assert!(mcp.close().status.success());
}

#[test]
fn a_cancelled_call_is_not_answered_while_a_ping_during_it_is() {
    let app = App::start();
    let mut mcp = app.mcp();
    mcp.send_json(&call(json!(10), "terminal_read", json!({"nodeId": "slow"})));
    app.wait_for_slow_call();
    mcp.send_json(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 10}}),
    );
    assert_eq!(mcp.request(&ping(json!(11))), json!({"jsonrpc": "2.0", "id": 11, "result": {}}));
    // The app finishes the operation anyway (cancelling undoes nothing); the answer stays unsent.
    app.release_slow_call();
    assert_eq!(mcp.request(&ping(json!(12)))["id"], 12);
    // End of input waits for answers in flight, so a forgotten answer would show up here.
    let closed = mcp.close();
    assert!(closed.status.success());
    assert_eq!(closed.rest, Vec::<Value>::new());
}

#[test]
fn tool_calls_reach_the_app() {
    let app = App::start();
    let mut mcp = app.mcp();
    let response = mcp.request(&call(json!(1), "canvas_list", json!({})));
    assert_eq!(
        response["result"],
        json!({"isError": false, "content": [{"type": "text", "text": r#"{"ok":true,"value":[{"id":"n1","kind":"terminal"}]}"#}]})
    );
    let response = mcp.request(&call(json!(2), "terminal_read", json!({})));
    assert_eq!(
        response["result"],
        json!({"isError": true, "content": [{"type": "text", "text": r#"{"ok":false,"error":"Missing argument: nodeId"}"#}]})
    );
    let response = mcp.request(&call(json!(3), "browser_screenshot", json!({"nodeId": "b1"})));
    assert_eq!(
        response["result"]["content"],
        json!([{"type": "image", "data": PNG, "mimeType": "image/png"}])
    );
    let response = mcp.request(&call(json!(4), "nope", json!({})));
    assert_eq!(response["error"], json!({"code": -32602, "message": "Unknown tool: nope"}));
    assert!(mcp.close().status.success());
}

#[test]
fn end_of_input_exits_0_within_5_seconds_even_with_a_call_in_flight() {
    let app = App::start();
    let mut mcp = app.mcp();
    mcp.send_json(&call(json!(1), "terminal_read", json!({"nodeId": "slow"})));
    app.wait_for_slow_call();
    let closed = mcp.close();
    assert!(closed.status.success(), "{:?}", closed.status);
    assert!(closed.exit_after < Duration::from_secs(5), "exited after {:?}", closed.exit_after);
    assert!(closed.rest.is_empty());
    assert!(closed.stderr.contains("still in flight"), "{}", closed.stderr);
    // Without anything in flight the exit is immediate; no timing is asserted beyond the limit.
    let mut mcp = app.mcp();
    mcp.request(&ping(json!(1)));
    let closed = mcp.close();
    assert!(closed.status.success());
    assert!(closed.exit_after < Duration::from_secs(5), "exited after {:?}", closed.exit_after);
    app.release_slow_call();
}

#[test]
fn a_host_that_is_gone_ends_the_bridge_with_status_0() {
    let app = App::start();
    let mut mcp = app.mcp().without_stdout();
    // stdin stays open: only the failed write can end the process.
    mcp.send_json(&ping(json!(1)));
    let closed = mcp.wait();
    assert!(closed.status.success(), "{:?}", closed.status);
    assert!(closed.stderr.contains("cannot write to stdout"), "{}", closed.stderr);
}

// Without a session, and with a session whose node is gone: `host_errors`.

/// Hosts from Node may hand the bridge sockets rather than pipes (above), and a person may feed it
/// a file: each is served the same.
#[test]
fn sockets_and_a_file_on_stdin_are_served_like_pipes() {
    use std::io::{BufRead as _, BufReader, Write as _};
    use std::os::unix::net::UnixStream;
    use std::process::{Command, Stdio};
    let app = App::start();
    let ctl = env!("CARGO_BIN_EXE_termsprawlctl");
    let lines = [ping(json!(1)), call(json!(2), "canvas_list", json!({}))];
    let check = |answers: &[Value]| {
        assert_eq!(answers.len(), 2, "{answers:?}");
        assert_eq!(answers[0], json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
        assert_eq!(answers[1]["id"], json!(2));
        assert_eq!(answers[1]["result"]["isError"], json!(false), "{}", answers[1]);
    };
    // Sockets on stdin and stdout.
    let (mut host_in, bridge_in) = UnixStream::pair().unwrap();
    let (host_out, bridge_out) = UnixStream::pair().unwrap();
    let mut child = Command::new(ctl)
        .arg("--session")
        .arg(app.session_file())
        .arg("mcp")
        .stdin(Stdio::from(std::os::fd::OwnedFd::from(bridge_in)))
        .stdout(Stdio::from(std::os::fd::OwnedFd::from(bridge_out)))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    host_out.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut reader = BufReader::new(host_out);
    let mut answers = Vec::new();
    for line in &lines {
        writeln!(host_in, "{line}").unwrap();
        let mut answer = String::new();
        reader.read_line(&mut answer).unwrap();
        answers.push(serde_json::from_str::<Value>(&answer).unwrap());
    }
    check(&answers);
    drop(host_in);
    assert!(child.wait().unwrap().success());
    // A file on stdin: read to its end, every line answered, then exit 0.
    let dir = tempfile::TempDir::new().unwrap();
    let input = dir.path().join("requests.jsonl");
    let requests: Vec<String> = lines.iter().map(ToString::to_string).collect();
    std::fs::write(&input, requests.join("\n") + "\n").unwrap();
    let output = Command::new(ctl)
        .arg("--session")
        .arg(app.session_file())
        .arg("mcp")
        .stdin(std::fs::File::open(&input).unwrap())
        .stderr(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "{:?}", output.status);
    let answers: Vec<Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    check(&answers);
}

/// `--max-wait-ms` is the bridge's longest wait: a longer `timeoutMs` reaches the tool server
/// lowered to it (the fake app echoes the arguments it got); without the option, 50 s.
#[test]
fn the_longest_wait_is_the_bridges_option() {
    let app = App::start();
    let wait = |id: i64, timeout: u64| {
        call(
            json!(id),
            "terminal_wait",
            json!({"nodeId": "t", "until": "exit", "timeoutMs": timeout}),
        )
    };
    let mut mcp = app.mcp_with(&["--max-wait-ms", "2000"]);
    let answer = mcp.request(&wait(1, 90_000));
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains(r#""timeoutMs":2000"#), "{text}");
    let answer = mcp.request(&wait(2, 1_500));
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains(r#""timeoutMs":1500"#), "a shorter wait is sent as it came: {text}");
    assert!(mcp.close().status.success());
    let mut mcp = app.mcp_with(&["--max-wait-ms=45000"]);
    let answer = mcp.request(&wait(3, 40_000));
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains(r#""timeoutMs":30000"#), "chained in turns of 30 s: {text}");
    assert!(mcp.close().status.success());
}
