//! The request line and the check of answers.

use serde_json::{Value, json};
use termsprawl_protocol::{Topic, guide};

use super::{call_line, check_answer};

fn answer(id: u64, is_error: bool, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"isError": is_error, "content": [{"type": "text", "text": text}]}})
}

#[test]
fn the_call_line_is_one_compact_tools_call() {
    let line: Value = serde_json::from_str(&call_line(7)).unwrap();
    assert_eq!(
        line,
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
               "params": {"name": "guide_read", "arguments": {"topic": "canvas"}}})
    );
}

#[test]
fn only_the_canvas_guide_without_is_error_passes() {
    let good = json!({"ok": true, "value": guide(Topic::Canvas)}).to_string();
    check_answer(&answer(3, false, &good), 3).unwrap();

    let wrong_id = check_answer(&answer(4, false, &good), 3).unwrap_err();
    assert!(wrong_id.to_string().starts_with("call 3: not a successful tools/call result"));
    assert!(check_answer(&answer(3, true, &good), 3).is_err());
    let other = json!({"ok": true, "value": guide(Topic::Browser)}).to_string();
    let error = check_answer(&answer(3, false, &other), 3).unwrap_err();
    assert!(error.to_string().contains("another value"), "{error}");
    let failed = json!({"ok": false, "error": "Tool connection unavailable"}).to_string();
    let error = check_answer(&answer(3, false, &failed), 3).unwrap_err();
    assert!(error.to_string().contains("the call failed: Tool connection unavailable"), "{error}");
    let protocol_error =
        json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32602, "message": "x"}});
    assert!(check_answer(&protocol_error, 3).is_err());
}
