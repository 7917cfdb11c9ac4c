//! Every rule of `spec/protocol.md` §5, each failing case with its exact message, plus the
//! boundaries that must pass: the cases are data, `protocol/tests/validation-cases.json`, which
//! the generated TypeScript validator's tests run too (`tests/typescript/validate.test.ts`), so
//! the two validators agree case for case. What only the Rust validator can show (number literals
//! kept digit for digit, the `ToolRequest` it returns) is asserted here.

use serde_json::Value;

use crate::validate;

/// The shared cases: `case` (what it shows), `body` (JSON text, in which `«TEXT*N»` stands for
/// `TEXT` repeated `N` times), `error` (the exact message, or `null` when the body is accepted)
/// and, for some accepted bodies, `args` (the accepted `args`, compact).
const CASES: &str = include_str!("../../tests/validation-cases.json");

/// Parses `body` as JSON text and validates it: `Ok(args as compact JSON)` or `Err(message)`.
fn check(body: &str) -> Result<String, String> {
    let body: Value = serde_json::from_str(body).expect("test bodies are valid JSON");
    match validate(&body) {
        Ok(request) => Ok(request.args.get().to_owned()),
        Err(error) => Err(error.to_string()),
    }
}

/// `body` with every `«TEXT*N»` replaced by `TEXT` repeated `N` times.
fn expand(body: &str) -> String {
    let mut out = String::new();
    let mut rest = body;
    while let Some(start) = rest.find('«') {
        out.push_str(&rest[..start]);
        let after = &rest[start + '«'.len_utf8()..];
        let end = after.find('»').expect("a repetition is closed");
        let (text, count) = after[..end].rsplit_once('*').expect("a repetition has a count");
        out.push_str(&text.repeat(count.parse().expect("the count is a number")));
        rest = &after[end + '»'.len_utf8()..];
    }
    out.push_str(rest);
    out
}

#[test]
fn the_repetition_of_the_case_file_expands() {
    assert_eq!(expand(r#"["«ab*3»x","«😀*2»"]"#), r#"["abababx","😀😀"]"#);
    assert_eq!(expand("plain"), "plain");
}

#[test]
fn every_shared_case_gets_its_exact_message() {
    let cases: Vec<Value> = serde_json::from_str(CASES).expect("the case file is JSON");
    assert!(cases.len() > 100, "{} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let name = case["case"].as_str().expect("every case has a name");
        let body = expand(case["body"].as_str().expect("every case has a body"));
        let got = check(&body);
        let passed = match (&case["error"], &case["args"]) {
            (Value::String(message), Value::Null) => got.as_ref().err() == Some(message),
            (Value::Null, Value::Null) => got.is_ok(),
            (Value::Null, Value::String(args)) => got.as_ref().ok() == Some(args),
            _ => panic!("{name}: `error` is a string or null, `args` a string only with no error"),
        };
        if !passed {
            failures
                .push(format!("{name}: wanted {} {}, got {got:?}", case["error"], case["args"]));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn number_literals_pass_through_unchanged() {
    // Digits are never rounded through floating point; the exponent sign is spelled out.
    let body = r#"{"operation":"canvas_move","args":{"nodeId":"n","x":1.50,"y":-0.1e2}}"#;
    assert_eq!(check(body), Ok(r#"{"nodeId":"n","x":1.50,"y":-0.1e+2}"#.into()));
    let body = r#"{"operation":"canvas_move","args":{"nodeId":"n","x":100000.00000000000000000001,"y":7}}"#;
    assert_eq!(check(body), Ok(r#"{"nodeId":"n","x":100000.00000000000000000001,"y":7}"#.into()));
}

#[test]
fn accepted_requests_keep_args_and_set_the_operation() {
    let body: Value = serde_json::from_str(
        r#"{"operation":"terminal_read","args":{"maxChars":10,"nodeId":"t1"},"extra":true}"#,
    )
    .unwrap();
    let request = validate(&body).unwrap();
    assert_eq!(request.operation(), Some("terminal_read"));
    assert_eq!(request.args.get(), r#"{"maxChars":10,"nodeId":"t1"}"#);
}
