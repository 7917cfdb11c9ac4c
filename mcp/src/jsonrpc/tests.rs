//! Unit tests of request ids and the response envelope.

use serde_json::{Value, json};

use super::{ErrorCode, RequestId, Response};

fn id_of(literal: &str) -> Option<RequestId> {
    let value: Value = serde_json::from_str(literal).unwrap();
    RequestId::from_value(&value)
}

#[test]
fn usable_ids_are_strings_and_integer_literals_that_fit_i64() {
    assert_eq!(id_of("0"), Some(RequestId::Number(0)));
    assert_eq!(id_of("-0"), Some(RequestId::Number(0)));
    assert_eq!(id_of("-12"), Some(RequestId::Number(-12)));
    assert_eq!(id_of("9223372036854775807"), Some(RequestId::Number(i64::MAX)));
    assert_eq!(id_of("-9223372036854775808"), Some(RequestId::Number(i64::MIN)));
    assert_eq!(id_of(r#""""#), Some(RequestId::String(String::new())));
    assert_eq!(id_of(r#""1""#), Some(RequestId::String("1".to_owned())));
    for unusable in [
        "null",
        "true",
        "1.0",
        "1.5",
        "1e3",
        "1E3",
        "-0.0",
        "9223372036854775808",
        "-9223372036854775809",
        "[]",
        "{}",
    ] {
        assert_eq!(id_of(unusable), None, "{unusable}");
    }
}

#[test]
fn ids_display_as_json() {
    assert_eq!(RequestId::Number(-3).to_string(), "-3");
    assert_eq!(RequestId::String("a\"b".to_owned()).to_string(), r#""a\"b""#);
}

#[test]
fn the_envelope_has_exactly_three_members() {
    let id = RequestId::String("x".to_owned());
    assert_eq!(
        Response::result(id.clone(), json!({})).to_line(),
        r#"{"jsonrpc":"2.0","id":"x","result":{}}"#
    );
    assert_eq!(
        Response::error(RequestId::Number(0), ErrorCode::METHOD_NOT_FOUND, "Method not found")
            .to_line(),
        r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"Method not found"}}"#
    );
    assert_eq!(
        Response::invalid_params(id.clone(), "d").to_line(),
        r#"{"jsonrpc":"2.0","id":"x","error":{"code":-32602,"message":"Invalid params: d"}}"#
    );
    assert_eq!(
        Response::internal_error(id, "d").to_line(),
        r#"{"jsonrpc":"2.0","id":"x","error":{"code":-32603,"message":"Internal error: d"}}"#
    );
}
