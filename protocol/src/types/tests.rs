//! The wire types keep the contract's member names, order and distinctions.

use serde_json::{Value, json};

use crate::{
    IntegrationState, IntegrationStatus, SessionToken, ToolEndpoint, ToolRequest, ToolResult,
    ToolSession,
};

const TOKEN: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

#[test]
fn results_keep_absent_and_null_values_apart() {
    let absent = ToolResult::from_value(json!({"ok": true})).unwrap();
    let null = ToolResult::from_value(json!({"ok": true, "value": null})).unwrap();
    assert_eq!(absent, ToolResult::Success { value: None });
    assert_eq!(null, ToolResult::Success { value: Some(Value::Null) });
    assert_eq!(serde_json::to_string(&absent).unwrap(), r#"{"ok":true}"#);
    assert_eq!(serde_json::to_string(&null).unwrap(), r#"{"ok":true,"value":null}"#);
    assert_eq!(absent.to_value().to_string(), r#"{"ok":true}"#);
}

#[test]
fn results_drop_other_members_and_refuse_other_shapes() {
    let failure = ToolResult::from_value(json!({"error": "no", "ok": false, "extra": 1})).unwrap();
    assert_eq!(serde_json::to_string(&failure).unwrap(), r#"{"ok":false,"error":"no"}"#);
    let success = ToolResult::from_value(json!({"value": {"b": 1, "a": 2}, "ok": true, "x": 1}));
    assert_eq!(
        serde_json::to_string(&success.unwrap()).unwrap(),
        r#"{"ok":true,"value":{"b":1,"a":2}}"#
    );
    for shape in [
        json!(null),
        json!([]),
        json!({}),
        json!({"ok": "true"}),
        json!({"ok": 1}),
        json!({"ok": false}),
        json!({"ok": false, "error": 5}),
    ] {
        assert_eq!(ToolResult::from_value(shape.clone()), None, "{shape}");
        assert!(serde_json::from_value::<ToolResult>(shape).is_err());
    }
}

#[test]
fn request_bodies_are_compact_and_keep_raw_args() {
    let request = ToolRequest::new("canvas_move", &json!({"nodeId": "n", "x": 1, "y": 2}));
    assert_eq!(
        request.to_body(),
        r#"{"operation":"canvas_move","args":{"nodeId":"n","x":1,"y":2}}"#
    );
    assert_eq!(serde_json::to_string(&request).unwrap(), request.to_body());
    let raw =
        ToolRequest::with_raw_args(Some("x\"y".into()), r#"{ "a" : "\u0041", "n": 1.0 }"#.into())
            .unwrap();
    assert_eq!(raw.to_body(), r#"{"operation":"x\"y","args":{ "a" : "\u0041", "n": 1.0 }}"#);
    assert_eq!(ToolRequest::without_operation(&json!(null)).to_body(), r#"{"args":null}"#);
    assert!(ToolRequest::with_raw_args(None, "{".into()).is_err());
}

#[test]
fn sessions_serialise_in_the_contract_order_and_hide_the_token() {
    let session = ToolSession {
        node_id: "agent-1".into(),
        project_id: "p1".into(),
        token: SessionToken::new(TOKEN),
        status: IntegrationStatus {
            state: IntegrationState::CliFallback,
            adapter: "gemini-cli".into(),
            version: "1.0".into(),
            reason: "r".into(),
        },
    };
    let text = serde_json::to_string(&session).unwrap();
    assert_eq!(
        text,
        format!(
            r#"{{"nodeId":"agent-1","projectId":"p1","token":"{TOKEN}","status":{{"state":"cli-fallback","adapter":"gemini-cli","version":"1.0","reason":"r"}}}}"#
        )
    );
    let debug = format!("{session:?}");
    assert!(!debug.contains(TOKEN), "{debug}");
    assert!(!format!("{}", session.token).contains(TOKEN));
    let read: ToolSession =
        serde_json::from_str(&text.replace(r#""nodeId""#, r#""extra":[1],"nodeId""#)).unwrap();
    assert_eq!(read, session);
}

#[test]
fn tokens_are_well_formed_only_as_64_lowercase_hex() {
    assert!(SessionToken::new(TOKEN).is_well_formed());
    assert!(!SessionToken::new(TOKEN.to_uppercase()).is_well_formed());
    assert!(!SessionToken::new(&TOKEN[1..]).is_well_formed());
    assert!(!SessionToken::new(format!("{}g", &TOKEN[1..])).is_well_formed());
}

#[test]
fn endpoints_use_camel_case() {
    let endpoint: ToolEndpoint =
        serde_json::from_str(r#"{"url":"http://127.0.0.1:1/call","instanceId":"i","x":1}"#)
            .unwrap();
    assert_eq!(
        serde_json::to_string(&endpoint).unwrap(),
        r#"{"url":"http://127.0.0.1:1/call","instanceId":"i"}"#
    );
}
