//! Every rule of `spec/protocol.md` §5, each failing case with its exact message, plus the
//! boundaries that must pass.

use serde_json::{Value, json};

use crate::validate;

/// Parses `body` as JSON text and validates it: `Ok(args as compact JSON)` or `Err(message)`.
fn check(body: &str) -> Result<String, String> {
    let body: Value = serde_json::from_str(body).expect("test bodies are valid JSON");
    match validate(&body) {
        Ok(request) => Ok(request.args.get().to_owned()),
        Err(error) => Err(error.to_string()),
    }
}

fn with_args(operation: &str, args: &Value) -> String {
    json!({"operation": operation, "args": args}).to_string()
}

#[test]
fn body_must_be_an_object() {
    for body in ["null", "true", "false", "1", "\"session_info\""] {
        assert_eq!(check(body), Err("Expected an operation and args object".into()), "{body}");
    }
    // An array passes the first check and fails the second.
    assert_eq!(check("[]"), Err("Unknown operation".into()));
    assert_eq!(check(r#"[{"operation":"session_info"}]"#), Err("Unknown operation".into()));
}

#[test]
fn operation_must_be_known() {
    for body in [
        r#"{"args":{}}"#,
        r#"{"operation":null,"args":{}}"#,
        r#"{"operation":1,"args":{}}"#,
        r#"{"operation":"nope","args":{}}"#,
        r#"{"operation":"Session_info","args":{}}"#,
        r#"{"operation":"toString","args":{}}"#,
        r#"{"operation":"__proto__","args":{}}"#,
    ] {
        assert_eq!(check(body), Err("Unknown operation".into()), "{body}");
    }
}

#[test]
fn args_must_be_an_object() {
    for args in ["", r#","args":null"#, r#","args":[]"#, r#","args":"s""#, r#","args":1"#] {
        let body = format!(r#"{{"operation":"session_info"{args}}}"#);
        assert_eq!(check(&body), Err("Expected args object".into()), "{body}");
    }
}

#[test]
fn missing_arguments_in_table_order_before_unknown_ones() {
    assert_eq!(
        check(&with_args("canvas_move", &json!({"bogus": 1}))),
        Err("Missing argument: nodeId".into())
    );
    assert_eq!(
        check(&with_args("canvas_move", &json!({"nodeId": "n", "y": 1}))),
        Err("Missing argument: x".into())
    );
    // A member present with null counts as present, and then fails its type.
    assert_eq!(
        check(&with_args("canvas_move", &json!({"nodeId": null, "x": 1, "y": 1}))),
        Err("Invalid nodeId".into())
    );
}

#[test]
fn unknown_arguments_in_document_order() {
    assert_eq!(
        check(&with_args("session_info", &json!({"zeta": 1, "alpha": 1}))),
        Err("Unknown argument: zeta".into())
    );
    assert_eq!(
        check(r#"{"operation":"session_info","args":{"2":1,"1":1}}"#),
        Err("Unknown argument: 2".into())
    );
    // Prototype-like names are unknown arguments here (the reference says Invalid).
    for name in ["toString", "constructor", "__proto__", "hasOwnProperty"] {
        let body = format!(r#"{{"operation":"terminal_read","args":{{"nodeId":"n","{name}":1}}}}"#);
        assert_eq!(check(&body), Err(format!("Unknown argument: {name}")));
    }
}

#[test]
fn wrong_types_are_invalid() {
    let cases = [
        ("sticky_open", json!({"text": 1}), "text"),
        ("sticky_open", json!({"text": null}), "text"),
        ("sticky_open", json!({"text": ["a"]}), "text"),
        ("sticky_open", json!({"text": true}), "text"),
        ("sticky_open", json!({"text": {}}), "text"),
        ("canvas_move", json!({"nodeId": "n", "x": "1", "y": 1}), "x"),
        ("canvas_move", json!({"nodeId": "n", "x": null, "y": 1}), "x"),
        ("canvas_move", json!({"nodeId": 5, "x": 1, "y": 1}), "nodeId"),
        ("canvas_select", json!({"nodeIds": "n"}), "nodeIds"),
        ("canvas_select", json!({"nodeIds": [1]}), "nodeIds"),
        ("canvas_select", json!({"nodeIds": [null]}), "nodeIds"),
        ("guide_read", json!({"topic": 1}), "topic"),
        ("guide_read", json!({"topic": null}), "topic"),
    ];
    for (operation, args, name) in cases {
        assert_eq!(
            check(&with_args(operation, &args)),
            Err(format!("Invalid {name}")),
            "{operation} {args}"
        );
    }
}

#[test]
fn numbers_must_be_finite_and_within_a_million() {
    let body =
        |x: &str| format!(r#"{{"operation":"canvas_move","args":{{"nodeId":"n","x":{x},"y":0}}}}"#);
    for ok in ["1000000", "-1000000", "1e6", "0.5", "-12.5", "0", "-0", "999999.999"] {
        assert!(check(&body(ok)).is_ok(), "{ok}");
    }
    for bad in ["1000000.0001", "-1000001", "1e7", "1e400", "-1e400"] {
        assert_eq!(check(&body(bad)), Err("Invalid x".into()), "{bad}");
    }
}

#[test]
fn cursors_may_pass_a_million_up_to_the_largest_exact_integer() {
    for operation in ["terminal_read", "terminal_wait"] {
        let body = |since: &str| {
            format!(
                r#"{{"operation":"{operation}","args":{{"nodeId":"n","until":"exit","since":{since}}}}}"#
            )
        };
        let body = |since: &str| {
            let body = body(since);
            if operation == "terminal_read" { body.replace(r#""until":"exit","#, "") } else { body }
        };
        for ok in ["1000001", "20000005", "9007199254740991", "0", "-5", "0.5"] {
            assert!(check(&body(ok)).is_ok(), "{operation} since {ok}");
        }
        for bad in ["9007199254740993", "1e16", "1e400", "\"5\""] {
            assert_eq!(check(&body(bad)), Err("Invalid since".into()), "{operation} since {bad}");
        }
    }
    // The other numbers of the same operations keep the limit of a million.
    let wait =
        r#"{"operation":"terminal_wait","args":{"nodeId":"n","until":"quiet","quietMs":1000001}}"#;
    assert_eq!(check(wait), Err("Invalid quietMs".into()));
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
fn string_arrays_hold_1_to_100_short_strings() {
    let items = |n: usize| Value::Array((0..n).map(|i| Value::from(format!("n{i}"))).collect());
    assert!(check(&with_args("canvas_select", &json!({"nodeIds": items(1)}))).is_ok());
    assert!(check(&with_args("canvas_select", &json!({"nodeIds": items(100)}))).is_ok());
    assert!(check(&with_args("canvas_select", &json!({"nodeIds": ["a", "a"]}))).is_ok());
    for n in [0, 101] {
        assert_eq!(
            check(&with_args("canvas_select", &json!({"nodeIds": items(n)}))),
            Err("Invalid nodeIds".into()),
            "{n} items"
        );
    }
    let long = |units: usize| json!({"nodeIds": ["x".repeat(units)]});
    assert!(check(&with_args("canvas_select", &long(255))).is_ok());
    assert_eq!(check(&with_args("canvas_select", &long(256))), Err("Invalid nodeIds".into()));
    // 127 emoji are 254 UTF-16 units; one more character makes 256.
    let emoji = "😀".repeat(127);
    assert!(check(&with_args("canvas_select", &json!({"nodeIds": [format!("{emoji}x")]}))).is_ok());
    assert_eq!(
        check(&with_args("canvas_select", &json!({"nodeIds": [format!("{emoji}😀")]}))),
        Err("Invalid nodeIds".into())
    );
    // Our server also refuses NUL inside items (the reference does not check them).
    assert_eq!(
        check(&with_args("canvas_select", &json!({"nodeIds": ["a\u{0}b"]}))),
        Err("Invalid nodeIds".into())
    );
}

#[test]
fn strings_hold_at_most_64000_utf16_units_and_no_nul() {
    let text = |s: String| with_args("sticky_open", &json!({"text": s}));
    assert!(check(&text("x".repeat(64_000))).is_ok());
    assert!(check(&text(String::new())).is_ok());
    assert_eq!(check(&text("x".repeat(64_001))), Err("Invalid text".into()));
    // 32000 emoji are 64000 units but 128000 bytes: allowed; one more unit is not.
    assert!(check(&text("😀".repeat(32_000))).is_ok());
    assert_eq!(check(&text(format!("{}x", "😀".repeat(32_000)))), Err("Invalid text".into()));
    assert_eq!(check(&text("a\u{0}".to_owned())), Err("Invalid text".into()));
    // The empty string is a valid node id.
    assert!(check(&with_args("terminal_read", &json!({"nodeId": ""}))).is_ok());
}

#[test]
fn enums_match_case_sensitively() {
    assert!(check(&with_args("guide_read", &json!({"topic": "agents"}))).is_ok());
    for bad in ["Agents", "agent", "", "overview "] {
        assert_eq!(
            check(&with_args("guide_read", &json!({"topic": bad}))),
            Err("Invalid topic".into()),
            "{bad:?}"
        );
    }
    assert_eq!(
        check(&with_args("artifact_open", &json!({"path": "/p", "view": "preview"}))),
        Err("Invalid view".into())
    );
    assert_eq!(
        check(&with_args("guide_read", &json!({"topic": "x".repeat(64_001)}))),
        Err("Invalid topic".into())
    );
}

#[test]
fn repeated_members_keep_the_last_value() {
    assert_eq!(
        check(r#"{"operation":"sticky_open","args":{"text":1,"text":"ok"}}"#),
        Ok(r#"{"text":"ok"}"#.into())
    );
    assert_eq!(
        check(r#"{"operation":"nope","operation":"session_info","args":{}}"#),
        Ok("{}".into())
    );
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

#[test]
fn booleans_are_true_or_false() {
    for keep in ["true", "false"] {
        let body =
            format!(r#"{{"operation":"terminal_run","args":{{"command":"ls","keep":{keep}}}}}"#);
        assert!(check(&body).is_ok(), "{keep}");
    }
    for bad in ["1", "0", "\"true\"", "null", "[]", "{}"] {
        let body =
            format!(r#"{{"operation":"terminal_run","args":{{"command":"ls","keep":{bad}}}}}"#);
        assert_eq!(check(&body), Err("Invalid keep".into()), "{bad}");
    }
}

#[test]
fn terminal_input_needs_text_or_keys() {
    let input = |args: Value| check(&with_args("terminal_input", &args));
    assert_eq!(input(json!({"nodeId": "n"})), Err("Invalid text".into()));
    assert!(input(json!({"nodeId": "n", "text": ""})).is_ok());
    assert!(input(json!({"nodeId": "n", "text": "ls"})).is_ok());
    assert!(input(json!({"nodeId": "n", "keys": ["Enter"]})).is_ok());
    assert!(input(json!({"nodeId": "n", "text": ":wq", "keys": ["Escape", "Enter"]})).is_ok());
    // The member checks of step 5 come first: a text of the wrong type is its own failure.
    assert_eq!(input(json!({"nodeId": "n", "text": 1})), Err("Invalid text".into()));
    assert_eq!(input(json!({"nodeId": "n", "keys": []})), Err("Invalid keys".into()));
    assert_eq!(input(json!({"nodeId": "n", "keys": "Enter"})), Err("Invalid keys".into()));
    assert_eq!(input(json!({"nodeId": "n", "keys": [1]})), Err("Invalid keys".into()));
    // An unknown member is reported before the rules of the operation.
    assert_eq!(input(json!({"nodeId": "n", "zzz": 1})), Err("Unknown argument: zzz".into()));
}

#[test]
fn keys_follow_the_grammar_and_number_at_most_256() {
    let input =
        |keys: Value| check(&with_args("terminal_input", &json!({"nodeId": "n", "keys": keys})));
    let named = [
        "Enter",
        "Tab",
        "BTab",
        "Escape",
        "Space",
        "Backspace",
        "Delete",
        "Insert",
        "Home",
        "End",
        "PageUp",
        "PageDown",
        "Up",
        "Down",
        "Left",
        "Right",
        "F1",
        "F12",
        "C-c",
        "M-x",
        "S-Tab",
        "C-M-x",
        "C-Left",
        "M-Enter",
        "C--",
    ];
    assert!(input(json!(named)).is_ok());
    for bad in ["Enterr", "a", "ls", "\u{1b}", "\r", "C-", "F13", "enter", "C-C-c", ""] {
        assert_eq!(input(json!(["Enter", bad])), Err("Invalid keys".into()), "{bad:?}");
    }
    // Text with an unknown key: nothing of the call passes.
    assert_eq!(
        check(&with_args("terminal_input", &json!({"nodeId": "n", "text": "ok", "keys": ["Foo"]}))),
        Err("Invalid keys".into())
    );
    let keys = |count: usize| Value::Array(vec![Value::from("Enter"); count]);
    assert!(input(keys(1)).is_ok());
    assert!(input(keys(101)).is_ok());
    assert!(input(keys(256)).is_ok());
    assert_eq!(input(keys(257)), Err("Invalid keys".into()));
    // Every other array keeps its limit of 100.
    let ids = Value::Array(vec![Value::from("n"); 101]);
    assert_eq!(
        check(&with_args("canvas_select", &json!({"nodeIds": ids}))),
        Err("Invalid nodeIds".into())
    );
}

#[test]
fn the_screen_view_takes_no_cursor() {
    let read = |args: Value| check(&with_args("terminal_read", &args));
    assert!(read(json!({"nodeId": "n", "view": "screen"})).is_ok());
    assert!(read(json!({"nodeId": "n", "view": "stream", "since": 5})).is_ok());
    assert!(read(json!({"nodeId": "n", "since": 5})).is_ok());
    assert_eq!(
        read(json!({"nodeId": "n", "view": "screen", "since": 5})),
        Err("Invalid view".into())
    );
    assert_eq!(
        read(json!({"nodeId": "n", "since": 0, "view": "screen"})),
        Err("Invalid view".into())
    );
    assert_eq!(read(json!({"nodeId": "n", "view": "Screen"})), Err("Invalid view".into()));
    // A since of the wrong type fails its own check first.
    assert_eq!(
        read(json!({"nodeId": "n", "view": "screen", "since": "5"})),
        Err("Invalid since".into())
    );
}

#[test]
fn wait_until_change() {
    let wait = |args: Value| check(&with_args("terminal_wait", &args));
    assert!(wait(json!({"nodeId": "n", "until": "change"})).is_ok());
    assert!(wait(json!({"nodeId": "n", "until": "change", "since": 12})).is_ok());
    assert_eq!(wait(json!({"nodeId": "n", "until": "changed"})), Err("Invalid until".into()));
}
