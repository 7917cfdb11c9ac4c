//! The client against scripted raw servers: the request it sends, how it reads answers, and every
//! failure path of `spec/protocol.md` §7.

use std::io::Write;
use std::time::Duration;

use serde_json::{Value, json};
use termsprawl_protocol::{ToolRequest, ToolResult};
use termsprawl_transport::{Client, MAX_RESPONSE_BYTES, call, call_blocking};

use crate::support::{Discovery, RawServer, TOKEN, Tripwire, check_failure, http_response};

fn session_info() -> ToolRequest {
    ToolRequest::new("session_info", &json!({}))
}

#[tokio::test]
async fn sends_one_post_with_the_contract_headers_and_body() {
    let server = RawServer::json("200 OK", r#"{"ok":true,"value":{"b":1,"a":2}}"#);
    let discovery = Discovery::new(server.port);
    let request = ToolRequest::with_raw_args(
        Some("canvas_move".to_owned()),
        r#"{"nodeId":"n1","y":2,"x":1.50}"#.to_owned(),
    )
    .unwrap();

    let result = call(&discovery.session_file(), &request).await;

    assert_eq!(result, ToolResult::ok(json!({"b": 1, "a": 2})));
    let requests = server.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 1);
    let sent = &requests[0];
    assert!(sent.head.starts_with("POST /call HTTP/1.1\r\n"), "{}", sent.head);
    let headers = sent.header_lines();
    for expected in [
        format!("host: 127.0.0.1:{}", server.port),
        format!("authorization: Bearer {TOKEN}"),
        "content-type: application/json".to_owned(),
        format!("content-length: {}", sent.body.len()),
    ] {
        assert!(headers.contains(&expected.as_str()), "missing {expected:?} in {headers:?}");
    }
    assert_eq!(
        String::from_utf8(sent.body.clone()).unwrap(),
        r#"{"operation":"canvas_move","args":{"nodeId":"n1","y":2,"x":1.50}}"#
    );
}

#[tokio::test]
async fn a_request_without_operation_has_no_operation_member() {
    let server = RawServer::json("400 Bad Request", r#"{"ok":false,"error":"Unknown operation"}"#);
    let discovery = Discovery::new(server.port);

    let result = call(&discovery.session_file(), &ToolRequest::without_operation(&json!({}))).await;

    assert_eq!(result, ToolResult::failure("Unknown operation"));
    assert_eq!(server.requests.lock().unwrap()[0].body, br#"{"args":{}}"#);
}

#[tokio::test]
async fn the_http_status_does_not_decide() {
    for (status, body, expected) in [
        (
            "401 Unauthorized",
            r#"{"ok":false,"error":"Unknown or revoked session"}"#,
            ToolResult::failure("Unknown or revoked session"),
        ),
        ("500 Internal Server Error", r#"{"ok":true,"value":1}"#, ToolResult::ok(json!(1))),
        (
            "404 Not Found",
            r#"{"error":"Unsupported request","ok":false,"extra":[1]}"#,
            ToolResult::failure("Unsupported request"),
        ),
    ] {
        let server = RawServer::json(status, body);
        let discovery = Discovery::new(server.port);
        assert_eq!(call(&discovery.session_file(), &session_info()).await, expected, "{status}");
    }
}

#[tokio::test]
async fn ok_without_value_and_ok_with_null_value_stay_distinct() {
    let server = RawServer::json("200 OK", r#"{"ok":true}"#);
    let discovery = Discovery::new(server.port);
    let result = call(&discovery.session_file(), &session_info()).await;
    assert_eq!(result, ToolResult::Success { value: None });
    assert_eq!(serde_json::to_string(&result).unwrap(), r#"{"ok":true}"#);

    let server = RawServer::json("200 OK", r#"{"ok":true,"value":null}"#);
    let discovery = Discovery::new(server.port);
    let result = call(&discovery.session_file(), &session_info()).await;
    assert_eq!(result, ToolResult::Success { value: Some(Value::Null) });
    assert_eq!(serde_json::to_string(&result).unwrap(), r#"{"ok":true,"value":null}"#);
}

#[tokio::test]
async fn member_order_and_number_literals_are_preserved() {
    let value = r#"{"z":1,"a":{"y":1.0,"b":[{"d":1.25e-7,"c":-0}]},"m":12345678901234567890123}"#;
    let server = RawServer::json("200 OK", &format!(r#"{{"ok":true,"value":{value}}}"#));
    let discovery = Discovery::new(server.port);

    let ToolResult::Success { value: Some(received) } =
        call(&discovery.session_file(), &session_info()).await
    else {
        panic!("expected a value");
    };
    assert_eq!(serde_json::to_string(&received).unwrap(), value);
}

#[tokio::test]
async fn chunked_responses_are_read_to_the_end() {
    let server = RawServer::answering(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n6\r\n{\"ok\":\r\n5\r\ntrue}\r\n0\r\n\r\n",
    );
    let discovery = Discovery::new(server.port);
    assert_eq!(call(&discovery.session_file(), &session_info()).await, ToolResult::ok_empty());
}

#[test]
fn call_blocking_works_outside_a_runtime() {
    let server = RawServer::json("200 OK", r#"{"ok":true,"value":"blocking"}"#);
    let discovery = Discovery::new(server.port);
    assert_eq!(
        call_blocking(&discovery.session_file(), &session_info()),
        ToolResult::ok(json!("blocking"))
    );

    let failure =
        Client::default().call_blocking(&discovery.data_dir().join("nope.json"), &session_info());
    check_failure(&failure);
}

// ---- failures before anything is sent ----

#[tokio::test]
async fn missing_session_file() {
    let discovery = Discovery::without_endpoint();
    let path = discovery.data_dir().join("sessions").join("missing.json");
    let reason = check_failure(&call(&path, &session_info()).await);
    assert_eq!(
        reason,
        format!("cannot read {}: No such file or directory (os error 2)", path.display())
    );
    // The guidance a frontend puts beside the contract's text: the node is gone.
    let hint = termsprawl_transport::discovery::session_gone(&path).expect("a hint");
    assert!(hint.starts_with(&format!("the session file {} does not exist: ", path.display())));
    assert!(hint.contains("node it belonged to was closed, or the app restarted without it"));
    // A session file that exists, even one that cannot be read as a file, gets none.
    assert_eq!(termsprawl_transport::discovery::session_gone(discovery.data_dir()), None);
}

#[tokio::test]
async fn unreadable_session_file() {
    let discovery = Discovery::without_endpoint();
    // A directory cannot be read as a file, even by root.
    let path = discovery.data_dir().join("sessions");
    let reason = check_failure(&call(&path, &session_info()).await);
    assert_eq!(reason, format!("cannot read {}: Is a directory (os error 21)", path.display()));
}

#[tokio::test]
async fn session_file_that_is_not_json() {
    let tripwire = Tripwire::loopback();
    let discovery = Discovery::new(tripwire.port());
    discovery.write_session(&format!("token={TOKEN}"));
    let reason = check_failure(&call(&discovery.session_file(), &session_info()).await);
    assert_eq!(reason, format!("{} is not valid JSON", discovery.session_file().display()));
    assert!(!tripwire.was_connected());
}

#[tokio::test]
async fn session_file_without_a_usable_token() {
    let tripwire = Tripwire::loopback();
    let discovery = Discovery::new(tripwire.port());
    for session in [
        json!({"nodeId": "agent-1"}),
        json!({"token": ""}),
        json!({"token": null}),
        json!({"token": 5}),
        json!({"token": ["abc"]}),
        json!({"token": "abc def"}),
        json!({"token": "abc\r\nx-injected: 1"}),
        json!({"token": "abc\u{0}"}),
        json!({"token": "tökén"}),
        json!([TOKEN]),
        json!(TOKEN),
        json!(null),
    ] {
        discovery.write_session(&session.to_string());
        let reason = check_failure(&call(&discovery.session_file(), &session_info()).await);
        assert_eq!(reason, "session file has no token", "{session}");
    }
    assert!(!tripwire.was_connected());
}

#[tokio::test]
async fn unknown_session_members_are_tolerated() {
    let server = RawServer::json("200 OK", r#"{"ok":true}"#);
    let discovery = Discovery::new(server.port);
    discovery.write_session(&json!({"extra": {"x": 1}, "token": "not-hex-but-fine"}).to_string());
    assert_eq!(call(&discovery.session_file(), &session_info()).await, ToolResult::ok_empty());
    assert!(
        server.requests.lock().unwrap()[0]
            .head
            .contains("authorization: Bearer not-hex-but-fine\r\n")
    );
}

#[tokio::test]
async fn missing_endpoint_file() {
    let discovery = Discovery::without_endpoint();
    let reason = check_failure(&call(&discovery.session_file(), &session_info()).await);
    assert_eq!(
        reason,
        format!(
            "cannot read {}: No such file or directory (os error 2)",
            discovery.endpoint_file().display()
        )
    );
}

// ---- failures of the exchange ----

#[tokio::test]
async fn server_gone_connection_refused() {
    // A port that was just free: bind, note, close.
    let port = Tripwire::loopback().port();
    let discovery = Discovery::new(port);
    let reason = check_failure(&call(&discovery.session_file(), &session_info()).await);
    assert_eq!(
        reason,
        format!("cannot connect to 127.0.0.1:{port}: Connection refused (os error 111)")
    );
}

#[tokio::test]
async fn server_dies_mid_request_and_nothing_is_retried() {
    // Reads the request, then drops the connection without a word.
    let server = RawServer::start(|_, stream| drop(stream));
    let discovery = Discovery::new(server.port);
    let mutation =
        ToolRequest::new("terminal_submit", &json!({"nodeId": "n2", "command": "rm -rf build"}));

    let reason = check_failure(&call(&discovery.session_file(), &mutation).await);

    assert!(
        reason.starts_with(&format!("request to 127.0.0.1:{} failed: ", server.port)),
        "{reason}"
    );
    assert_eq!(server.request_count(), 1);
    assert_eq!(server.connection_count(), 1);
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    let server = RawServer::silent();
    let discovery = Discovery::new(server.port);
    let client = Client::default().with_timeout(Duration::from_millis(300));

    let reason = check_failure(&client.call(&discovery.session_file(), &session_info()).await);

    assert_eq!(reason, "no response within 300 ms");
    assert_eq!(server.request_count(), 1);
    assert_eq!(server.connection_count(), 1);
}

#[tokio::test]
async fn a_body_that_stops_halfway_times_out_too() {
    let server = RawServer::start(|_, mut stream| {
        let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{\"ok\":");
        std::thread::sleep(Duration::from_secs(5));
    });
    let discovery = Discovery::new(server.port);
    let client = Client::default().with_timeout(Duration::from_secs(1));

    let reason = check_failure(&client.call(&discovery.session_file(), &session_info()).await);

    assert_eq!(reason, "no response within 1 s");
}

#[tokio::test]
async fn redirects_are_never_followed() {
    for status in [
        "301 Moved Permanently",
        "302 Found",
        "303 See Other",
        "307 Temporary Redirect",
        "308 Permanent Redirect",
    ] {
        let target = Tripwire::loopback();
        let location = format!("http://127.0.0.1:{}/call", target.port());
        let server = RawServer::answering(format!(
            "HTTP/1.1 {status}\r\nlocation: {location}\r\ncontent-type: application/json\r\ncontent-length: 11\r\n\r\n{{\"ok\":true}}"
        ));
        let discovery = Discovery::new(server.port);

        let reason = check_failure(&call(&discovery.session_file(), &session_info()).await);

        assert_eq!(reason, format!("unexpected redirect (HTTP {})", &status[..3]));
        assert!(!target.was_connected(), "{status}: the redirect target was contacted");
        assert_eq!(server.request_count(), 1);
    }
}

#[tokio::test]
async fn an_html_error_page_is_not_json() {
    let server = RawServer::answering(http_response(
        "502 Bad Gateway",
        "text/html",
        b"<html><body>Bad gateway</body></html>",
    ));
    let discovery = Discovery::new(server.port);
    let reason = check_failure(&call(&discovery.session_file(), &session_info()).await);
    assert_eq!(reason, "response is not JSON (HTTP 502)");
}

#[tokio::test]
async fn an_empty_408_is_not_json() {
    let server = RawServer::answering(
        "HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-length: 0\r\n\r\n",
    );
    let discovery = Discovery::new(server.port);
    let reason = check_failure(&call(&discovery.session_file(), &session_info()).await);
    assert_eq!(reason, "response is not JSON (HTTP 408)");
}

#[tokio::test]
async fn json_of_another_shape_is_not_a_tool_result() {
    for (status, body) in [
        ("200 OK", r#"{"value":1}"#),
        ("500 Internal Server Error", r#"{"ok":false,"message":"boom"}"#),
        ("200 OK", r#"{"ok":"true"}"#),
        ("200 OK", r#"[{"ok":true}]"#),
    ] {
        let server = RawServer::json(status, body);
        let discovery = Discovery::new(server.port);
        let reason = check_failure(&call(&discovery.session_file(), &session_info()).await);
        assert_eq!(
            reason,
            format!("response is not a tool result (HTTP {})", &status[..3]),
            "{body}"
        );
    }
}

/// `{"ok":true,"value":"aaa…"}` of exactly `length` bytes.
fn padded_result(length: usize) -> Vec<u8> {
    let frame = br#"{"ok":true,"value":""}"#;
    let mut body = Vec::with_capacity(length);
    body.extend_from_slice(&frame[..frame.len() - 2]);
    body.resize(length - 2, b'a');
    body.extend_from_slice(br#""}"#);
    body
}

#[tokio::test]
async fn a_body_of_exactly_64_mib_is_read() {
    let server = RawServer::start(|_, mut stream| {
        let _ = stream.write_all(&http_response(
            "200 OK",
            "application/json",
            &padded_result(MAX_RESPONSE_BYTES),
        ));
    });
    let discovery = Discovery::new(server.port);
    let ToolResult::Success { value: Some(Value::String(value)) } =
        call(&discovery.session_file(), &session_info()).await
    else {
        panic!("expected a string value");
    };
    assert_eq!(value.len(), MAX_RESPONSE_BYTES - br#"{"ok":true,"value":""}"#.len());
}

#[tokio::test]
async fn a_streamed_body_over_64_mib_is_refused_while_streaming() {
    // Chunked, so that no length is announced: the cap must trip on the bytes themselves.
    let server = RawServer::start(|_, mut stream| {
        let body = padded_result(MAX_RESPONSE_BYTES + 1);
        let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n");
        for chunk in body.chunks(1024 * 1024) {
            if stream.write_all(format!("{:x}\r\n", chunk.len()).as_bytes()).is_err()
                || stream.write_all(chunk).is_err()
                || stream.write_all(b"\r\n").is_err()
            {
                return;
            }
        }
        let _ = stream.write_all(b"0\r\n\r\n");
    });
    let discovery = Discovery::new(server.port);
    let reason = check_failure(&call(&discovery.session_file(), &session_info()).await);
    assert_eq!(reason, "response body exceeds 64 MiB");
}

#[tokio::test]
async fn an_announced_body_over_64_mib_is_refused_before_reading() {
    let server = RawServer::start(move |_, mut stream| {
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{{",
            MAX_RESPONSE_BYTES + 1
        );
        let _ = stream.write_all(head.as_bytes());
        std::thread::sleep(Duration::from_secs(5));
    });
    let discovery = Discovery::new(server.port);
    let client = Client::default().with_timeout(Duration::from_secs(4));
    let reason = check_failure(&client.call(&discovery.session_file(), &session_info()).await);
    assert_eq!(reason, "response body exceeds 64 MiB");
}
