//! Unit tests of the pure core's helpers; the classification table itself is tested through
//! `serve` in `tests/it/classification.rs`.

use serde_json::json;
use termsprawl_protocol::ToolResult;

use super::{Action, LOG_EXCERPT_BYTES, State, classify, excerpt};
use crate::jsonrpc::RequestId;

#[test]
fn excerpts_are_quoted_and_cut_at_200_bytes_on_a_character_boundary() {
    assert_eq!(excerpt(b"a\nb"), r#""a\nb""#);
    let long = "é".repeat(150);
    let shown = excerpt(long.as_bytes());
    assert_eq!(shown, format!("{:?}… (300 bytes)", "é".repeat(LOG_EXCERPT_BYTES / 2)));
    let odd = format!("x{long}");
    let shown = excerpt(odd.as_bytes());
    assert_eq!(shown, format!("\"x{}\"… (301 bytes)", "é".repeat(99)));
    assert_eq!(excerpt(&[0xff; 300]), format!("{:?}… (300 bytes)", "\u{FFFD}".repeat(200)));
}

#[test]
fn classify_never_panics_on_odd_input() {
    let mut state = State::default();
    for line in [
        &b"{"[..],
        b"\0",
        b"{\"id\":1,\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":{}}}",
        &[b'['; 10_000],
        b"{\"id\":\"\\ud800\",\"jsonrpc\":\"2.0\",\"method\":\"ping\"}",
    ] {
        let _ = classify(line, &mut state);
    }
}

#[test]
fn a_handshake_records_the_operations_and_the_version() {
    let mut state = State::default();
    assert_eq!(state.protocol_version(), "2025-11-25");
    assert_eq!(state.operations(), None);
    let response = state.complete_initialize(
        RequestId::Number(1),
        "2024-11-05",
        &ToolResult::ok(json!({"operations": ["ping", "canvas_list"]})),
    );
    assert!(response.result_value().is_some());
    assert_eq!(state.protocol_version(), "2024-11-05");
    assert_eq!(state.operations(), Some(&["ping".to_owned(), "canvas_list".to_owned()][..]));
    let Action::ToolsList { id } =
        classify(br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#, &mut state)
    else {
        panic!("tools/list is a legacy list")
    };
    let list = state.tools_list(id);
    assert_eq!(list.result_value().unwrap()["tools"].as_array().unwrap().len(), 1);
}

#[test]
fn log_lines_about_a_message_echo_at_most_200_bytes_of_it() {
    let method = "m".repeat(500);
    let id = "i".repeat(500);
    let line = format!(r#"{{"jsonrpc":"1.0","id":"{id}","method":"{method}"}}"#);
    let Action::Log(message) = classify(line.as_bytes(), &mut State::default()) else {
        panic!("a wrong jsonrpc member is logged")
    };
    assert_eq!(
        message,
        format!(
            "ignored a message whose jsonrpc is not \"2.0\" (method \"{}\"…) (id \"{}…)",
            "m".repeat(100),
            "i".repeat(99)
        )
    );
}
