//! Unit tests of the failure result and of the interpretation of response bodies.

use std::time::Duration;

use hyper::StatusCode;
use serde_json::json;
use termsprawl_protocol::ToolResult;

use super::{Seconds, connection_unavailable, interpret};

#[test]
fn failure_result_has_the_contract_shape() {
    assert_eq!(
        connection_unavailable("Invalid local endpoint").to_value(),
        json!({
            "ok": false,
            "error": "Tool connection unavailable: Invalid local endpoint. Check that termsprawl is running. Mutations are not automatically retried."
        })
    );
}

#[test]
fn reasons_are_one_line_without_a_final_period() {
    let ToolResult::Failure { error } = connection_unavailable("a\nb\r\tc. .\n") else { panic!() };
    assert_eq!(
        error,
        "Tool connection unavailable: a b  c. Check that termsprawl is running. Mutations are not automatically retried."
    );
}

#[test]
fn timeouts_read_naturally() {
    assert_eq!(Seconds(Duration::from_secs(45)).to_string(), "45 s");
    assert_eq!(Seconds(Duration::from_millis(250)).to_string(), "250 ms");
}

#[test]
fn any_status_with_a_tool_result_body_is_that_result() {
    let body = br#"{"ok":false,"error":"Unknown operation","extra":1}"#;
    assert_eq!(
        interpret(StatusCode::BAD_REQUEST, body),
        Ok(ToolResult::failure("Unknown operation"))
    );
    assert_eq!(interpret(StatusCode::OK, br#"{"ok":true}"#), Ok(ToolResult::ok_empty()));
    assert_eq!(
        interpret(StatusCode::OK, br#"{"ok":true,"value":null}"#),
        Ok(ToolResult::ok(serde_json::Value::Null))
    );
}

#[test]
fn other_bodies_name_the_status() {
    assert_eq!(
        interpret(StatusCode::BAD_GATEWAY, b"<html>bad gateway</html>"),
        Err("response is not JSON (HTTP 502)".to_owned())
    );
    assert_eq!(interpret(StatusCode::OK, b""), Err("response is not JSON (HTTP 200)".to_owned()));
    for body in [
        &b"[]"[..],
        b"{}",
        b"{\"ok\":1}",
        b"{\"ok\":false}",
        b"{\"ok\":false,\"error\":7}",
        b"null",
    ] {
        assert_eq!(
            interpret(StatusCode::INTERNAL_SERVER_ERROR, body),
            Err("response is not a tool result (HTTP 500)".to_owned())
        );
    }
}
