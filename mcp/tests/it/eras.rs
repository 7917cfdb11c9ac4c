//! The two eras of MCP on one connection (issue 21, `docs/mcp-eras.md`): `server/discover` and the
//! 2026-07-28 `_meta` rules, era switching, titles and capabilities per revision, the guides as
//! resources, the narrowing flags and the `tools/list` held until the handshake has its
//! `session_info` answer.

use serde_json::{Value, json};
use termsprawl_mcp::{Options, ToolFilter};
use termsprawl_protocol::{McpRevision, ToolResult, Topic, guide, instructions, operations};

use crate::support::{Bridge, Fake, call, cancel, request};

const SUPPORTED: [&str; 5] = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The `_meta` of a 2026-07-28 request.
fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "it", "version": "0"}
    })
}

/// A 2026-07-28 request: `params` with the modern `_meta` added.
fn modern(id: Value, method: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = meta();
    request(id, method, Some(params))
}

fn names(result: &Value) -> Vec<&str> {
    result["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap()).collect()
}

fn initialize(id: i64, version: &str) -> Value {
    request(json!(id), "initialize", Some(json!({"protocolVersion": version, "capabilities": {}})))
}

#[tokio::test]
async fn server_discover_describes_the_bridge_in_the_modern_shape() {
    let fake = Fake::new();
    fake.session_info(json!({"appVersion": "0.40.1", "operations": ["session_info"]}));
    let mut bridge = Bridge::start(fake.clone());
    let response = bridge.request(&modern(json!("d1"), "server/discover", json!({}))).await;
    assert_eq!(
        response["result"],
        json!({
            "resultType": "complete",
            "supportedVersions": SUPPORTED,
            "capabilities": {"tools": {}, "resources": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "termsprawl", "title": "termsprawl", "version": "0.40.1"}},
            "instructions": instructions(),
            "ttlMs": 3_600_000,
            "cacheScope": "public"
        })
    );
    // session_info was called (it marks the agent connected, as initialize does).
    assert_eq!(fake.calls()[0].to_body(), r#"{"operation":"session_info","args":{}}"#);
}

#[tokio::test]
async fn server_discover_fails_with_the_error_of_session_info() {
    let fake = Fake::new();
    fake.answer("session_info", ToolResult::failure("termsprawl is not running"));
    let mut bridge = Bridge::start(fake);
    let response = bridge.request(&modern(json!(1), "server/discover", json!({}))).await;
    assert_eq!(response["error"], json!({"code": -32603, "message": "termsprawl is not running"}));
}

#[tokio::test]
async fn modern_requests_need_both_meta_keys_and_a_supported_version() {
    let mut bridge = Bridge::start(Fake::new());
    let missing = [
        json!(null),
        json!({}),
        json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"}),
        json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": []}),
        json!({"io.modelcontextprotocol/protocolVersion": 20_260_728, "io.modelcontextprotocol/clientCapabilities": {}}),
        json!({"io.modelcontextprotocol/clientCapabilities": {}}),
    ];
    for meta in missing {
        // server/discover enters the modern era whatever its _meta, so every one is checked.
        let mut message = request(json!(1), "server/discover", Some(json!({})));
        if !meta.is_null() {
            message["params"]["_meta"] = meta.clone();
        }
        let response = bridge.request(&message).await;
        assert_eq!(response["error"]["code"], -32602, "_meta {meta}");
        let text = response["error"]["message"].as_str().unwrap();
        assert!(
            text.starts_with("Invalid params: ") && text.contains("clientCapabilities"),
            "{text}"
        );
    }
    for version in ["2025-11-25", "2024-11-05", "2027-01-01", ""] {
        let mut message = modern(json!(2), "tools/list", json!({}));
        message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!(version);
        let response = bridge.request(&message).await;
        assert_eq!(
            response["error"],
            json!({"code": -32022, "message": "Unsupported protocol version", "data": {"supported": SUPPORTED, "requested": version}}),
        );
    }
}

#[tokio::test]
async fn a_modern_session_lists_calls_and_reads() {
    let fake = Fake::new();
    fake.session_info(json!({"appVersion": "1.2.3", "operations": ["session_info", "terminal_read", "browser_screenshot"]}));
    fake.answer(
        "browser_screenshot",
        ToolResult::ok(json!({"image": "iVBORw0KGgo=", "mimeType": "image/png"})),
    );
    let mut bridge = Bridge::start(fake.clone());
    bridge.request(&modern(json!(0), "server/discover", json!({}))).await;

    let response = bridge.request(&modern(json!(1), "tools/list", json!({}))).await;
    let result = &response["result"];
    let keys: Vec<&str> = result.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["resultType", "tools", "ttlMs", "cacheScope", "_meta"]);
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["ttlMs"], 60_000);
    assert_eq!(result["cacheScope"], "private");
    assert_eq!(names(result), ["session_info", "browser_screenshot", "terminal_read"]);
    let entry = &result["tools"][2];
    assert_eq!(
        *entry,
        termsprawl_protocol::operation("terminal_read")
            .unwrap()
            .tool_json_for(McpRevision::V2025_06_18)
    );
    assert_eq!(entry["title"], "Read terminal");
    // Every modern tools/list asks session_info again: the list follows the app, not the connection.
    let before = fake.calls().len();
    bridge.request(&modern(json!(11), "tools/list", json!({}))).await;
    assert_eq!(fake.calls().len(), before + 1);

    let response = bridge
        .request(&{
            let mut message = call(json!(2), "terminal_read", json!({"nodeId": "t1"}));
            message["params"]["_meta"] = meta();
            message
        })
        .await;
    let result = &response["result"];
    let keys: Vec<&str> = result.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["resultType", "isError", "content"]);
    assert_eq!(result["content"][0]["type"], "text");

    let response = bridge
        .request(&modern(
            json!(3),
            "tools/call",
            json!({"name": "browser_screenshot", "arguments": {"nodeId": "b"}}),
        ))
        .await;
    assert_eq!(
        response["result"],
        json!({"resultType": "complete", "isError": false, "content": [{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]})
    );

    let response =
        bridge.request(&modern(json!(4), "tools/call", json!({"name": "no_such_tool"}))).await;
    assert_eq!(response["error"], json!({"code": -32602, "message": "Unknown tool: no_such_tool"}));

    let response = bridge.request(&modern(json!(5), "tools/list", json!({"cursor": "x"}))).await;
    assert_eq!(response["error"]["code"], -32602);

    // No ping in the modern era, with or without _meta.
    let response = bridge.request(&modern(json!(6), "ping", json!({}))).await;
    assert_eq!(response["error"], json!({"code": -32601, "message": "Method not found"}));
    let response = bridge.request(&request(json!(7), "ping", None)).await;
    assert_eq!(response["error"]["code"], -32602);
}

#[tokio::test]
async fn a_modern_tools_list_fails_with_the_error_of_session_info() {
    let fake = Fake::new();
    fake.answer("session_info", ToolResult::failure("app is gone"));
    let mut bridge = Bridge::start(fake);
    let response = bridge.request(&modern(json!(1), "tools/list", json!({}))).await;
    assert_eq!(response["error"], json!({"code": -32603, "message": "app is gone"}));
}

#[tokio::test]
async fn the_era_follows_discover_the_modern_meta_and_initialize() {
    let mut bridge = Bridge::start(Fake::new());
    // Neither seen: legacy behaviour, requests before initialize are served.
    let response = bridge.request(&request(json!(1), "ping", None)).await;
    assert_eq!(response["result"], json!({}));
    // A request with the modern _meta enters the modern era (no discover needed).
    let response = bridge.request(&modern(json!(2), "resources/list", json!({}))).await;
    assert_eq!(response["result"]["resultType"], "complete");
    let response = bridge.request(&request(json!(3), "tools/list", None)).await;
    assert_eq!(response["error"]["code"], -32602, "{response}");
    let response = bridge.request(&call(json!(4), "session_info", json!({}))).await;
    assert_eq!(response["error"]["code"], -32602);
    // initialize switches back to the legacy era exactly as today.
    let response = bridge.request(&initialize(5, "2025-11-25")).await;
    assert_eq!(response["result"]["protocolVersion"], "2025-11-25");
    let response = bridge.request(&request(json!(6), "ping", None)).await;
    assert_eq!(response["result"], json!({}));
    let response = bridge.request(&request(json!(7), "tools/list", None)).await;
    assert!(response["result"].get("resultType").is_none());
    // server/discover (a dual-era probe) enters the modern era again; initialize still works after.
    let response = bridge.request(&modern(json!(8), "server/discover", json!({}))).await;
    assert_eq!(response["result"]["supportedVersions"][0], "2026-07-28");
    let response = bridge.request(&request(json!(9), "ping", None)).await;
    assert_eq!(response["error"]["code"], -32602);
    let response = bridge.request(&initialize(10, "2025-06-18")).await;
    assert_eq!(response["result"]["protocolVersion"], "2025-06-18");
    let response = bridge.request(&request(json!(11), "ping", None)).await;
    assert_eq!(response["result"], json!({}));
    // An initialize that carries the modern _meta is still the legacy handshake.
    let mut message = initialize(12, "2025-11-25");
    message["params"]["_meta"] = meta();
    let response = bridge.request(&message).await;
    assert_eq!(response["result"]["protocolVersion"], "2025-11-25");
}

#[tokio::test]
async fn titles_capabilities_and_server_info_follow_the_negotiated_revision() {
    let op = &operations()[19];
    for version in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let mut bridge = Bridge::start(Fake::new());
        let response = bridge.request(&initialize(1, version)).await;
        let result = &response["result"];
        let list = bridge.request(&request(json!(2), "tools/list", None)).await;
        let entry = list["result"]["tools"][19].clone();
        assert_eq!(entry, op.tool_json_for(McpRevision::of(version)), "{version}");
        match version {
            "2024-11-05" => {
                // Exactly today's (the reference's) shape.
                assert_eq!(result["capabilities"], json!({"tools": {}}));
                assert_eq!(result["serverInfo"], json!({"name": "termsprawl", "version": "9.9.9"}));
                assert_eq!(entry, op.tool_json());
            }
            "2025-03-26" => {
                assert_eq!(result["capabilities"], json!({"tools": {}, "resources": {}}));
                assert_eq!(result["serverInfo"], json!({"name": "termsprawl", "version": "9.9.9"}));
                assert!(entry.get("title").is_none());
                assert_eq!(entry["annotations"]["title"], op.title());
            }
            _ => {
                assert_eq!(result["capabilities"], json!({"tools": {}, "resources": {}}));
                assert_eq!(
                    result["serverInfo"],
                    json!({"name": "termsprawl", "title": "termsprawl", "version": "9.9.9"})
                );
                assert_eq!(entry["title"], op.title());
                assert_eq!(entry["annotations"]["title"], op.title());
            }
        }
        assert_eq!(result["instructions"], instructions());
    }
}

#[tokio::test]
async fn the_guides_are_resources_in_both_eras() {
    let mut bridge = Bridge::start(Fake::new());
    bridge.request(&initialize(1, "2025-11-25")).await;
    let response = bridge.request(&request(json!(2), "resources/list", None)).await;
    let resources = response["result"]["resources"].as_array().unwrap();
    assert_eq!(resources.len(), Topic::ALL.len());
    assert_eq!(
        resources[2],
        json!({
            "uri": "termsprawl://guides/terminal",
            "name": "guide_terminal",
            "title": "Terminals",
            "description": "The termsprawl terminal guide: the text guide_read returns for topic terminal.",
            "mimeType": "text/markdown"
        })
    );
    for topic in Topic::ALL {
        let uri = format!("termsprawl://guides/{}", topic.as_str());
        let response =
            bridge.request(&request(json!(3), "resources/read", Some(json!({"uri": uri})))).await;
        assert_eq!(
            response["result"],
            json!({"contents": [{"uri": uri, "mimeType": "text/markdown", "text": guide(topic)}]})
        );
    }
    let response = bridge
        .request(&request(
            json!(4),
            "resources/read",
            Some(json!({"uri": "termsprawl://guides/nope"})),
        ))
        .await;
    assert_eq!(
        response["error"],
        json!({"code": -32002, "message": "Resource not found", "data": {"uri": "termsprawl://guides/nope"}})
    );
    let response = bridge.request(&request(json!(5), "resources/read", Some(json!({})))).await;
    assert_eq!(response["error"]["code"], -32602);
    let response =
        bridge.request(&request(json!(6), "resources/list", Some(json!({"cursor": "c"})))).await;
    assert_eq!(response["error"]["code"], -32602);
    // 2024-11-05 keeps its capabilities, but the methods answer; entries have no title there.
    bridge.request(&initialize(7, "2024-11-05")).await;
    let response = bridge.request(&request(json!(8), "resources/list", None)).await;
    assert!(response["result"]["resources"][0].get("title").is_none());

    // Modern: resultType, caching hints, and -32602 for an unknown URI.
    let response = bridge.request(&modern(json!(9), "resources/list", json!({}))).await;
    let keys: Vec<&str> =
        response["result"].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["resultType", "resources", "ttlMs", "cacheScope"]);
    let response = bridge
        .request(&modern(
            json!(10),
            "resources/read",
            json!({"uri": "termsprawl://guides/overview"}),
        ))
        .await;
    assert_eq!(
        response["result"],
        json!({
            "resultType": "complete",
            "contents": [{"uri": "termsprawl://guides/overview", "mimeType": "text/markdown", "text": guide(Topic::Overview)}],
            "ttlMs": 3_600_000,
            "cacheScope": "public"
        })
    );
    let response = bridge
        .request(&modern(json!(11), "resources/read", json!({"uri": "file:///etc/passwd"})))
        .await;
    assert_eq!(
        response["error"],
        json!({"code": -32602, "message": "Resource not found", "data": {"uri": "file:///etc/passwd"}})
    );
}

#[tokio::test]
async fn read_only_lists_and_serves_only_read_only_tools() {
    let fake = Fake::new();
    let filter = ToolFilter::new::<&str>(true, None).unwrap();
    let mut bridge = Bridge::start_with(fake.clone(), Options::default().tools(filter));
    let response = bridge.request(&request(json!(1), "tools/list", None)).await;
    let listed = names(&response["result"]);
    let expected: Vec<&str> = operations()
        .iter()
        .filter(|op| op.annotations().read_only)
        .map(termsprawl_protocol::Operation::name)
        .collect();
    assert_eq!(listed, expected);
    assert_eq!(listed.len(), 14);
    let response = bridge
        .request(&call(json!(2), "terminal_submit", json!({"nodeId": "t", "command": "rm -rf /"})))
        .await;
    assert_eq!(
        response["error"],
        json!({"code": -32602, "message": "Unknown tool: terminal_submit"})
    );
    let response = bridge.request(&call(json!(3), "terminal_read", json!({"nodeId": "t"}))).await;
    assert_eq!(response["result"]["isError"], false);
    assert!(fake.calls().iter().all(|call| call.operation() != Some("terminal_submit")));
    // The same in the modern era.
    let response = bridge
        .request(&modern(
            json!(4),
            "tools/call",
            json!({"name": "terminal_close", "arguments": {"nodeId": "t"}}),
        ))
        .await;
    assert_eq!(
        response["error"],
        json!({"code": -32602, "message": "Unknown tool: terminal_close"})
    );
    let response = bridge.request(&modern(json!(5), "tools/list", json!({}))).await;
    assert_eq!(names(&response["result"]), expected);
}

#[tokio::test]
async fn tools_and_read_only_compose_with_each_other_and_with_the_live_filter() {
    let fake = Fake::new();
    fake.session_info(json!({"operations": ["session_info", "terminal_read", "terminal_open"]}));
    let filter =
        ToolFilter::new(false, Some(&["terminal_open", "terminal_read", "canvas_list"])).unwrap();
    let mut bridge = Bridge::start_with(fake.clone(), Options::default().tools(filter));
    let response = bridge.request(&request(json!(1), "tools/list", None)).await;
    assert_eq!(names(&response["result"]), ["canvas_list", "terminal_open", "terminal_read"]);
    bridge.request(&initialize(2, "2025-11-25")).await;
    let response = bridge.request(&request(json!(3), "tools/list", None)).await;
    assert_eq!(names(&response["result"]), ["terminal_open", "terminal_read"]);
    let response = bridge.request(&call(json!(4), "session_info", json!({}))).await;
    assert_eq!(response["error"]["message"], "Unknown tool: session_info");

    let both = ToolFilter::new(true, Some(&["terminal_open", "terminal_read"])).unwrap();
    let mut bridge = Bridge::start_with(Fake::new(), Options::default().tools(both));
    let response = bridge.request(&request(json!(1), "tools/list", None)).await;
    assert_eq!(names(&response["result"]), ["terminal_read"]);
    let response = bridge.request(&call(json!(2), "terminal_open", json!({}))).await;
    assert_eq!(response["error"]["message"], "Unknown tool: terminal_open");

    let unknown = ToolFilter::new(false, Some(&["terminal_read", "terminal_sumbit"])).unwrap_err();
    assert_eq!(unknown.to_string(), "unknown tool \"terminal_sumbit\"");
}

#[tokio::test]
async fn a_pipelined_tools_list_waits_for_the_handshake_while_ping_and_cancel_do_not() {
    let fake = Fake::new();
    fake.session_info(json!({"appVersion": "1.0", "operations": ["session_info", "canvas_list"]}));
    let gate = fake.gate("session_info");
    let mut bridge = Bridge::start(fake.clone());
    // A host that writes initialize and tools/list in one go.
    bridge
        .send(&format!(
            "{}\n{}",
            initialize(1, "2025-11-25"),
            request(json!(2), "tools/list", None)
        ))
        .await;
    assert_eq!(fake.started().await, "session_info");
    // Reading goes on: ping is answered, and a call runs, while the list waits.
    let response = bridge.request(&request(json!(3), "ping", None)).await;
    assert_eq!(response["result"], json!({}));
    let response = bridge.request(&call(json!(4), "canvas_list", json!({}))).await;
    assert_eq!(response["result"]["isError"], false);
    // A second held list, then cancelled: never answered.
    bridge.send_json(&request(json!(5), "tools/list", None)).await;
    bridge.send_json(&cancel(json!(5))).await;
    bridge.assert_silent().await;
    gate.send(ToolResult::ok(
        json!({"appVersion": "1.0", "operations": ["session_info", "canvas_list"]}),
    ))
    .unwrap();
    let first = bridge.recv().await;
    assert_eq!(first["id"], 1);
    let second = bridge.recv().await;
    assert_eq!(second["id"], 2);
    assert_eq!(names(&second["result"]), ["session_info", "canvas_list"]);
    // The same list as one sent later.
    let later = bridge.request(&request(json!(6), "tools/list", None)).await;
    assert_eq!(later["result"], second["result"]);
    bridge.assert_silent().await;
}

#[tokio::test]
async fn a_held_list_is_answered_after_a_failed_handshake_too() {
    let fake = Fake::new();
    let gate = fake.gate("session_info");
    let mut bridge = Bridge::start(fake.clone());
    bridge.send_json(&initialize(1, "2024-11-05")).await;
    assert_eq!(fake.started().await, "session_info");
    bridge.send_json(&request(json!(2), "tools/list", None)).await;
    bridge.assert_silent().await;
    gate.send(ToolResult::failure("gone")).unwrap();
    assert_eq!(bridge.recv().await["error"]["message"], "gone");
    let list = bridge.recv().await;
    assert_eq!(list["id"], 2);
    // No handshake completed: the whole table, in the newest legacy shape.
    assert_eq!(list["result"]["tools"].as_array().unwrap().len(), 37);
}

#[tokio::test]
async fn a_cancelled_modern_list_or_discover_is_never_answered() {
    let fake = Fake::new();
    let gate = fake.gate("session_info");
    let mut bridge = Bridge::start(fake.clone());
    bridge.send_json(&modern(json!("l"), "tools/list", json!({}))).await;
    assert_eq!(fake.started().await, "session_info");
    bridge.send_json(&cancel(json!("l"))).await;
    assert_eq!(fake.dropped().await, "session_info");
    drop(gate);
    let response = bridge.request(&modern(json!("r"), "resources/list", json!({}))).await;
    assert_eq!(response["result"]["resultType"], "complete");
}
