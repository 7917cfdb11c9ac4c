//! Tests of the compatibility surface that need no server.

use serde_json::json;
use termsprawl_protocol::ToolResult;

use super::envelope_json;

#[test]
fn the_envelope_is_indented_with_two_spaces() {
    let result = ToolResult::ok(json!({"a": [], "b": {}, "c": [1, {"d": null}], "e": "x"}));
    assert_eq!(
        envelope_json(&result),
        "{\n  \"ok\": true,\n  \"value\": {\n    \"a\": [],\n    \"b\": {},\n    \"c\": [\n      1,\n      {\n        \"d\": null\n      }\n    ],\n    \"e\": \"x\"\n  }\n}"
    );
    assert_eq!(envelope_json(&ToolResult::ok_empty()), "{\n  \"ok\": true\n}");
    assert_eq!(
        envelope_json(&ToolResult::failure("no")),
        "{\n  \"ok\": false,\n  \"error\": \"no\"\n}"
    );
}

#[test]
fn number_literals_print_as_received() {
    let value: serde_json::Value =
        serde_json::from_str(r#"{"a":1.0,"b":1E5,"c":123456789012345678901234567890}"#).unwrap();
    let text = envelope_json(&ToolResult::ok(value));
    assert!(text.contains("\"a\": 1.0"), "{text}");
    // serde_json spells a parsed exponent `e+`; the digits are kept.
    assert!(text.contains("\"b\": 1e+5"), "{text}");
    assert!(text.contains("123456789012345678901234567890"), "{text}");
}
