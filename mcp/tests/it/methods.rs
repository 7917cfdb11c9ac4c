//! `initialize` (`spec/mcp.md` §3.3) and the other methods (§3.4).

use serde_json::{Value, json};
use termsprawl_protocol::{McpRevision, ToolResult, instructions, operations};

use crate::support::{Bridge, Fake, pretty, request};

fn initialize(id: i64, protocol_version: Option<Value>) -> Value {
    let mut params = json!({
        "capabilities": {"roots": {"listChanged": true}, "sampling": {}, "elicitation": {}},
        "clientInfo": {"name": "test-client", "version": "1.0"}
    });
    if let Some(version) = protocol_version {
        params["protocolVersion"] = version;
    }
    request(json!(id), "initialize", Some(params))
}

fn tool_names(response: &Value) -> Vec<&str> {
    response["result"]["tools"]
        .as_array()
        .expect("a tool array")
        .iter()
        .map(|tool| tool["name"].as_str().expect("a name"))
        .collect()
}

#[tokio::test]
async fn initialize_answers_the_handshake() {
    let fake = Fake::new();
    fake.session_info(json!({"nodeId": "n1", "appVersion": "0.31.2", "operations": ["ping"]}));
    let mut bridge = Bridge::start(fake.clone());
    let response = bridge.request(&initialize(0, Some(json!("2025-06-18")))).await;
    assert_eq!(response["result"]["instructions"], instructions());
    let mut shown = response.clone();
    shown["result"]["instructions"] = json!("[instructions]");
    insta::assert_snapshot!(pretty(&shown));
    // session_info was called first, with `{}`.
    let calls = fake.calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].to_body(), r#"{"operation":"session_info","args":{}}"#);
}

#[tokio::test]
async fn initialize_echoes_a_supported_version_and_otherwise_answers_the_newest() {
    let cases = [
        (Some(json!("2024-11-05")), "2024-11-05"),
        (Some(json!("2025-03-26")), "2025-03-26"),
        (Some(json!("2025-06-18")), "2025-06-18"),
        (Some(json!("2025-11-25")), "2025-11-25"),
        (Some(json!("2026-07-28")), "2025-11-25"),
        (Some(json!("2024-10-07")), "2025-11-25"),
        (Some(json!("")), "2025-11-25"),
        (Some(json!(20_250_618)), "2025-11-25"),
        (Some(json!(null)), "2025-11-25"),
        (Some(json!(["2025-06-18"])), "2025-11-25"),
        (None, "2025-11-25"),
    ];
    let mut bridge = Bridge::start(Fake::new());
    for (index, (requested, answered)) in cases.into_iter().enumerate() {
        let id = i64::try_from(index).unwrap();
        let response = bridge.request(&initialize(id, requested.clone())).await;
        assert_eq!(response["result"]["protocolVersion"], answered, "requested {requested:?}");
    }
    // Without any params at all.
    let response = bridge.request(&request(json!(99), "initialize", None)).await;
    assert_eq!(response["result"]["protocolVersion"], "2025-11-25");
}

#[tokio::test]
async fn initialize_reports_unknown_when_the_app_version_is_missing() {
    for value in [
        json!({}),
        json!({"appVersion": ""}),
        json!({"appVersion": 3}),
        json!({"appVersion": null}),
        json!("not an object"),
        json!(null),
    ] {
        let fake = Fake::new();
        fake.session_info(value.clone());
        let mut bridge = Bridge::start(fake);
        let response = bridge.request(&initialize(1, None)).await;
        assert_eq!(
            response["result"]["serverInfo"],
            json!({"name": "termsprawl", "title": "termsprawl", "version": "unknown"}),
            "session_info value {value}"
        );
    }
    let fake = Fake::new();
    fake.answer("session_info", ToolResult::ok_empty());
    let mut bridge = Bridge::start(fake);
    let response = bridge.request(&initialize(1, None)).await;
    assert_eq!(response["result"]["serverInfo"]["version"], "unknown");
}

#[tokio::test]
async fn initialize_fails_with_the_error_of_session_info() {
    let fake = Fake::new();
    let unavailable = termsprawl_transport::connection_unavailable("cannot connect to 127.0.0.1:9");
    fake.answer("session_info", unavailable.clone());
    let mut bridge = Bridge::start(fake.clone());
    let response = bridge.request(&initialize(3, Some(json!("2025-11-25")))).await;
    let ToolResult::Failure { error } = unavailable else { unreachable!() };
    assert_eq!(
        response,
        json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32603, "message": error}})
    );
    insta::assert_snapshot!(pretty(&response));
    // The bridge keeps serving, and a later initialize can succeed.
    fake.session_info(json!({"appVersion": "1.0.0"}));
    let response = bridge.request(&initialize(4, None)).await;
    assert_eq!(response["result"]["serverInfo"]["version"], "1.0.0");
}

#[tokio::test]
async fn initialize_may_arrive_more_than_once_and_requests_before_it_are_served() {
    let mut bridge = Bridge::start(Fake::new());
    let response = bridge.request(&request(json!(1), "tools/list", None)).await;
    assert_eq!(tool_names(&response).len(), 37);
    let response = bridge
        .request(&request(
            json!(2),
            "tools/call",
            Some(json!({"name": "canvas_list", "arguments": {}})),
        ))
        .await;
    assert_eq!(response["result"]["isError"], false);
    for id in 3..6 {
        let response = bridge.request(&initialize(id, Some(json!("2025-03-26")))).await;
        assert_eq!(response["result"]["protocolVersion"], "2025-03-26");
    }
}

#[tokio::test]
async fn ping_answers_exactly_an_empty_object() {
    let mut bridge = Bridge::start(Fake::new());
    bridge.send(r#"{"jsonrpc":"2.0","id":0,"method":"ping"}"#).await;
    assert_eq!(bridge.raw_line().await.unwrap(), "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}\n");
    bridge.send(r#"{"jsonrpc":"2.0","id":"p","method":"ping","params":{}}"#).await;
    assert_eq!(
        bridge.raw_line().await.unwrap(),
        "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"result\":{}}\n"
    );
}

#[tokio::test]
async fn tools_list_without_a_handshake_is_the_whole_table() {
    let mut bridge = Bridge::start(Fake::new());
    let response = bridge.request(&request(json!(1), "tools/list", None)).await;
    // Before any handshake the newest legacy revision is assumed: titled entries.
    let titled: Vec<Value> =
        operations().iter().map(|op| op.tool_json_for(McpRevision::V2025_06_18)).collect();
    assert_eq!(response["result"], json!({"tools": titled}));
    let names = tool_names(&response);
    let table: Vec<&str> = operations().iter().map(termsprawl_protocol::Operation::name).collect();
    assert_eq!(names, table);
    assert_eq!(names.len(), 37);
    // Annotations (the title and the four hints) on every tool, and no nextCursor.
    for tool in response["result"]["tools"].as_array().unwrap() {
        assert_eq!(tool["annotations"].as_object().unwrap().len(), 5, "{tool}");
    }
    assert_eq!(response["result"].as_object().unwrap().len(), 1);
}

#[tokio::test]
async fn tools_list_is_filtered_by_the_handshake_in_table_order() {
    let fake = Fake::new();
    // Out of table order, with a name the table does not have and a non-string entry.
    fake.session_info(json!({
        "appVersion": "1.0.0",
        "operations": ["terminal_read", "session_info", "no_such_tool", 5, "canvas_list"]
    }));
    let mut bridge = Bridge::start(fake.clone());
    bridge.request(&initialize(1, None)).await;
    let response = bridge.request(&request(json!(2), "tools/list", None)).await;
    assert_eq!(tool_names(&response), ["session_info", "canvas_list", "terminal_read"]);
    insta::assert_snapshot!(pretty(&response));
    // Browser tools switched off: the app lists every operation but the browser ones.
    let without_browser: Vec<&str> = operations()
        .iter()
        .map(termsprawl_protocol::Operation::name)
        .filter(|name| !name.starts_with("browser_"))
        .collect();
    fake.session_info(json!({"appVersion": "1.0.0", "operations": without_browser}));
    bridge.request(&initialize(3, None)).await;
    let response = bridge.request(&request(json!(4), "tools/list", None)).await;
    assert_eq!(tool_names(&response), without_browser);
    assert_eq!(without_browser.len(), 28);
    // A later handshake whose session_info has no list restores the whole table; so does a list
    // that is not an array.
    for value in [json!({"appVersion": "1.0.0"}), json!({"operations": "all"})] {
        fake.session_info(value);
        bridge.request(&initialize(5, None)).await;
        let response = bridge.request(&request(json!(6), "tools/list", None)).await;
        assert_eq!(tool_names(&response).len(), 37);
    }
    // An empty list means no tools.
    fake.session_info(json!({"operations": []}));
    bridge.request(&initialize(7, None)).await;
    let response = bridge.request(&request(json!(8), "tools/list", None)).await;
    assert_eq!(response["result"], json!({"tools": []}));
}

#[tokio::test]
async fn a_failed_handshake_keeps_the_previous_filter() {
    let fake = Fake::new();
    fake.session_info(json!({"operations": ["session_info"]}));
    let mut bridge = Bridge::start(fake.clone());
    bridge.request(&initialize(1, None)).await;
    fake.answer("session_info", ToolResult::failure("app is gone"));
    let response = bridge.request(&initialize(2, None)).await;
    assert_eq!(response["error"]["message"], "app is gone");
    let response = bridge.request(&request(json!(3), "tools/list", None)).await;
    assert_eq!(tool_names(&response), ["session_info"]);
}

#[tokio::test]
async fn tools_list_with_a_cursor_is_invalid_params() {
    let mut bridge = Bridge::start(Fake::new());
    for cursor in [json!("next"), json!(null), json!(0), json!("")] {
        let response =
            bridge.request(&request(json!(1), "tools/list", Some(json!({"cursor": cursor})))).await;
        assert_eq!(response["error"]["code"], -32602, "cursor {cursor}");
        let message = response["error"]["message"].as_str().unwrap();
        assert!(message.starts_with("Invalid params: "), "{message}");
    }
    let response =
        bridge.request(&request(json!(1), "tools/list", Some(json!({"cursor": "x"})))).await;
    insta::assert_snapshot!(pretty(&response));
}

#[tokio::test]
async fn unknown_methods_are_method_not_found() {
    let mut bridge = Bridge::start(Fake::new());
    for method in [
        "prompts/list",
        "logging/setLevel",
        "completion/complete",
        "tools/List",
        "",
        "notifications/initialized",
    ] {
        let response = bridge.request(&request(json!("m"), method, None)).await;
        assert_eq!(
            response,
            json!({"jsonrpc": "2.0", "id": "m", "error": {"code": -32601, "message": "Method not found"}}),
            "method {method:?}"
        );
    }
}

/// The terminal tools of 1.3.0 and 1.5.0 appear exactly where the server serves them: a server
/// whose `session_info` lists the 1.2.0 table (the desktop app today) gets none of them, in both
/// eras.
#[tokio::test]
async fn the_terminal_tools_of_1_3_0_follow_the_servers_list() {
    const NEW: [&str; 5] =
        ["terminal_run", "terminal_list", "terminal_search", "terminal_wait", "terminal_kill"];
    let fake = Fake::new();
    let older: Vec<&str> = operations()
        .iter()
        .map(termsprawl_protocol::Operation::name)
        .filter(|name| !NEW.contains(name))
        .collect();
    assert_eq!(older.len(), 32, "the 1.2.0 table");
    fake.session_info(json!({"appVersion": "1.0.0", "operations": older}));
    let mut bridge = Bridge::start(fake.clone());
    bridge.request(&initialize(1, None)).await;
    let response = bridge.request(&request(json!(2), "tools/list", None)).await;
    assert_eq!(tool_names(&response), older);
    // A call of a table tool that the list leaves out still goes to the server, which decides
    // (`spec/mcp.md` §3: only a name outside the table is `Unknown tool`).
    let forwarded = bridge
        .request(&crate::support::call(json!(3), "terminal_run", json!({"command": "make test"})))
        .await;
    assert_eq!(forwarded["result"]["isError"], false, "{forwarded}");
    // A server that lists them: they are listed, in table order.
    let newer: Vec<&str> = operations().iter().map(termsprawl_protocol::Operation::name).collect();
    fake.session_info(json!({"appVersion": "1.0.0", "operations": newer}));
    bridge.request(&initialize(4, None)).await;
    let response = bridge.request(&request(json!(5), "tools/list", None)).await;
    let names = tool_names(&response);
    for name in NEW {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    let (served, _, _) = bridge.close().await;
    served.unwrap();
}
