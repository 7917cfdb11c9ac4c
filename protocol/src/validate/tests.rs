//! Every rule of `spec/protocol.md` §5, each failing case with its exact message, plus the
//! boundaries that must pass: the cases are data, `protocol/tests/validation-cases.json`, which
//! the generated TypeScript validator's tests run too (`tests/typescript/validate.test.ts`), so
//! the two validators agree case for case. What only the Rust validator can show (number literals
//! kept digit for digit, the `ToolRequest` it returns) is asserted here.

use serde_json::Value;

use super::{
    MAX_SEARCH_CONTEXT, MAX_SEARCH_LIMIT, MAX_WAIT_TEXTS, Validated, ValidationError, validate,
};
use crate::Call;
use crate::args::{
    ReadView, TerminalInputArgs, TerminalReadArgs, TerminalSearchArgs, TerminalWaitArgs, WaitUntil,
};

/// The shared cases: `case` (what it shows), `body` (JSON text, in which `«TEXT*N»` stands for
/// `TEXT` repeated `N` times), `error` (the exact message, or `null` when the body is accepted)
/// and, for some accepted bodies, `args` (the accepted `args`, compact).
const CASES: &str = include_str!("../../tests/validation-cases.json");

/// Parses `body` as JSON text and validates it: `Ok(args as compact JSON)` or `Err(message)`.
fn check(body: &str) -> Result<String, String> {
    let body: Value = serde_json::from_str(body).expect("test bodies are valid JSON");
    match validate(&body) {
        Ok(validated) => Ok(validated.request.args.get().to_owned()),
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
    let request = validate(&body).unwrap().request;
    assert_eq!(request.operation(), Some("terminal_read"));
    assert_eq!(request.args.get(), r#"{"maxChars":10,"nodeId":"t1"}"#);
}

#[test]
fn every_accepted_case_hands_back_the_call_its_request_names() {
    // The typed call is read from the parsed body, not from the request's text; it must be the
    // call that text parses to.
    let cases: Vec<Value> = serde_json::from_str(CASES).expect("the case file is JSON");
    let mut accepted = 0;
    for case in cases.iter().filter(|case| case["error"].is_null()) {
        let name = case["case"].as_str().expect("every case has a name");
        let body: Value =
            serde_json::from_str(&expand(case["body"].as_str().expect("every case has a body")))
                .expect("test bodies are valid JSON");
        let Validated { request, call } =
            validate(&body).unwrap_or_else(|error| panic!("{name}: {error}"));
        let operation = request.operation().expect("a validated request names its operation");
        assert_eq!(call.name(), operation, "{name}");
        let args: Value = serde_json::from_str(request.args.get()).expect("args are JSON");
        assert_eq!(Call::from_value(operation, &args), Ok(call), "{name}");
        accepted += 1;
    }
    assert!(accepted > 20, "{accepted} accepted cases");
}

#[test]
fn the_call_carries_the_arguments_sent() {
    let body = serde_json::json!({
        "operation": "terminal_search",
        "args": {"pattern": "err", "nodeId": "t1", "since": 7, "limit": 3},
    });
    let Validated { call, .. } = validate(&body).unwrap();
    let Call::TerminalSearch(args) = call else { panic!("not a search: {call:?}") };
    assert_eq!(args.pattern, "err");
    assert_eq!(args.node_id.as_deref(), Some("t1"));
    assert_eq!(args.since, Some(7.0));
    assert_eq!(args.limit, Some(3.0));
    assert_eq!((args.regex, args.context), (None, None));
}

/// `Err(Invalid <name>)`.
fn invalid(name: &str) -> Result<(), ValidationError> {
    Err(ValidationError::InvalidArgument(name.to_owned()))
}

/// `Err(Invalid <name>: <reason>)` with the pattern dialect's reason for `pattern`.
fn bad_pattern(name: &str, prefix: &str, pattern: &str) -> Result<(), ValidationError> {
    let reason = crate::pattern::check(pattern).expect_err("the pattern is outside the dialect");
    Err(ValidationError::InvalidPattern(name.to_owned(), format!("{prefix}{reason}")))
}

fn input(text: Option<&str>, keys: Option<&[&str]>) -> TerminalInputArgs {
    TerminalInputArgs {
        node_id: "t1".into(),
        text: text.map(Into::into),
        keys: keys.map(|keys| keys.iter().map(|key| (*key).to_owned()).collect()),
    }
}

#[test]
fn terminal_input_checks_its_keys_then_needs_text_or_keys() {
    assert_eq!(input(None, None).check(), invalid("text"));
    assert_eq!(input(None, Some(&["Enter", "Nope"])).check(), invalid("keys"));
    assert_eq!(input(Some("ls"), Some(&["Nope"])).check(), invalid("keys"));
    assert_eq!(input(Some("ls"), None).check(), Ok(()));
    assert_eq!(input(None, Some(&["Enter", "C-c"])).check(), Ok(()));
}

#[test]
fn terminal_read_takes_no_since_with_the_screen_view() {
    let read = |since: Option<f64>, view: Option<ReadView>| TerminalReadArgs {
        node_id: "t1".into(),
        max_chars: None,
        since,
        view,
    };
    assert_eq!(read(Some(3.0), Some(ReadView::Screen)).check(), invalid("view"));
    assert_eq!(read(Some(3.0), Some(ReadView::Stream)).check(), Ok(()));
    assert_eq!(read(Some(3.0), None).check(), Ok(()));
    assert_eq!(read(None, Some(ReadView::Screen)).check(), Ok(()));
}

fn wait(
    until: WaitUntil,
    text: Option<&str>,
    any_of: Option<&[&str]>,
    regex: Option<bool>,
) -> TerminalWaitArgs {
    TerminalWaitArgs {
        node_id: "t1".into(),
        until,
        text: text.map(Into::into),
        any_of: any_of.map(|texts| texts.iter().map(|text| (*text).to_owned()).collect()),
        regex,
        since: None,
        quiet_ms: None,
        timeout_ms: None,
    }
}

#[test]
fn terminal_wait_checks_any_of_then_regex_then_the_patterns() {
    use WaitUntil::{Exit, Text};
    assert_eq!(wait(Exit, None, Some(&["a"]), None).check(), invalid("anyOf"));
    assert_eq!(wait(Text, Some("a"), Some(&["b"]), None).check(), invalid("anyOf"));
    assert_eq!(wait(Text, None, Some(&["a", ""]), None).check(), invalid("anyOf"));
    let many = vec!["a"; MAX_WAIT_TEXTS + 1];
    assert_eq!(wait(Text, None, Some(&many), None).check(), invalid("anyOf"));
    assert_eq!(wait(Text, None, Some(&many[1..]), None).check(), Ok(()));
    // `anyOf` is checked before `regex`.
    assert_eq!(wait(Exit, None, Some(&["a"]), Some(false)).check(), invalid("anyOf"));
    assert_eq!(wait(Exit, None, None, Some(false)).check(), invalid("regex"));
    assert_eq!(wait(Text, Some("("), None, Some(true)).check(), bad_pattern("text", "", "("));
    assert_eq!(
        wait(Text, None, Some(&["ok", "("]), Some(true)).check(),
        bad_pattern("anyOf", "item 1: ", "(")
    );
    assert_eq!(wait(Text, Some("("), None, Some(false)).check(), Ok(()));
    assert_eq!(wait(Text, None, Some(&["o+k", "a|b"]), Some(true)).check(), Ok(()));
    assert_eq!(wait(Exit, None, None, None).check(), Ok(()));
}

fn search(pattern: &str, regex: Option<bool>, node_id: Option<&str>) -> TerminalSearchArgs {
    TerminalSearchArgs {
        pattern: pattern.into(),
        regex,
        node_id: node_id.map(Into::into),
        since: None,
        limit: None,
        context: None,
    }
}

#[test]
fn terminal_search_checks_pattern_since_limit_and_context_in_order() {
    assert_eq!(search("", Some(true), None).check(), invalid("pattern"));
    assert_eq!(search("(", Some(true), None).check(), bad_pattern("pattern", "", "("));
    assert_eq!(search("(", Some(false), None).check(), Ok(()));
    let since =
        TerminalSearchArgs { since: Some(4.0), limit: Some(0.0), ..search("a", None, None) };
    assert_eq!(since.check(), invalid("since"));
    assert_eq!(
        TerminalSearchArgs { node_id: Some("t1".into()), ..since }.check(),
        invalid("limit")
    );
    for (limit, context, outcome) in [
        (Some(1.5), None, invalid("limit")),
        (Some(MAX_SEARCH_LIMIT + 1.0), None, invalid("limit")),
        (Some(MAX_SEARCH_LIMIT), Some(-1.0), invalid("context")),
        (Some(1.0), Some(0.5), invalid("context")),
        (None, Some(MAX_SEARCH_CONTEXT + 1.0), invalid("context")),
        (Some(1.0), Some(MAX_SEARCH_CONTEXT), Ok(())),
        (None, Some(0.0), Ok(())),
    ] {
        let args = TerminalSearchArgs { limit, context, ..search("a", None, None) };
        assert_eq!(args.check(), outcome, "limit {limit:?}, context {context:?}");
    }
}

#[test]
fn a_call_checks_the_rules_of_its_own_arguments_only() {
    assert_eq!(Call::TerminalInput(input(None, None)).check(), invalid("text"));
    assert_eq!(Call::TerminalSearch(search("", None, None)).check(), invalid("pattern"));
    assert_eq!(
        Call::TerminalWait(wait(WaitUntil::Exit, None, None, Some(true))).check(),
        invalid("regex")
    );
    let read = TerminalReadArgs {
        node_id: "t1".into(),
        max_chars: None,
        since: Some(1.0),
        view: Some(ReadView::Screen),
    };
    assert_eq!(Call::TerminalRead(read).check(), invalid("view"));
    assert_eq!(Call::SessionInfo(crate::args::NoArgs {}).check(), Ok(()));
    assert_eq!(Call::TerminalOpen(crate::args::TerminalOpenArgs::default()).check(), Ok(()));
}
