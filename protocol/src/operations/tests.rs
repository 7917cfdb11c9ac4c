//! Tests of the operation table against `spec/protocol.md` §4.

use serde_json::{Value, json};

use crate::{ParamKind, catalog_json, operation, operations};

/// An argument of the spec table: (name, type, required).
type SpecArg = (&'static str, &'static str, bool);

/// Names, argument lists and hint columns of `spec/protocol.md` §4.3, in table order.
/// Argument: (name, type, required); type is "string", "number", "string[]" or "a|b|…".
#[rustfmt::skip]
const SPEC_TABLE: &[(&str, &[SpecArg], &str)] = &[
    ("session_info", &[], "R-I-"),
    ("guide_read", &[("topic", "overview|browser|terminal|canvas|context|agents|artifacts", true)], "R-I-"),
    ("canvas_list", &[], "R-I-"),
    ("canvas_select", &[("nodeIds", "string[]", true)], "--I-"),
    ("canvas_move", &[("nodeId", "string", true), ("x", "number", true), ("y", "number", true)], "--I-"),
    ("canvas_resize", &[("nodeId", "string", true), ("width", "number", true), ("height", "number", true)], "--I-"),
    ("canvas_group", &[("nodeIds", "string[]", true), ("title", "string", false)], "----"),
    ("sticky_open", &[("text", "string", true)], "----"),
    ("browser_open", &[("url", "string", true)], "---O"),
    ("browser_list", &[], "R-IO"),
    ("browser_claim", &[("nodeId", "string", true)], "---O"),
    ("browser_transfer", &[("nodeId", "string", true), ("agentNodeId", "string", true)], "---O"),
    ("browser_navigate", &[("nodeId", "string", true), ("url", "string", true)], "---O"),
    ("browser_inspect", &[("nodeId", "string", true)], "R-IO"),
    ("browser_click", &[("nodeId", "string", true), ("selector", "string", true)], "---O"),
    ("browser_type", &[("nodeId", "string", true), ("selector", "string", true), ("text", "string", true)], "---O"),
    ("browser_screenshot", &[("nodeId", "string", true)], "R-IO"),
    ("terminal_open", &[("title", "string", false)], "---O"),
    ("terminal_run", &[("command", "string", true), ("title", "string", false), ("cwd", "string", false), ("env", "string[]", false), ("timeoutMs", "number", false), ("keep", "boolean", false), ("notify", "boolean", false)], "-D-O"),
    ("terminal_list", &[], "R-IO"),
    ("terminal_read", &[("nodeId", "string", true), ("maxChars", "number", false), ("since", "number", false), ("view", "stream|screen", false)], "R-IO"),
    ("terminal_search", &[("pattern", "string", true), ("regex", "boolean", false), ("nodeId", "string", false), ("since", "number", false), ("limit", "number", false), ("context", "number", false)], "R-IO"),
    ("terminal_wait", &[("nodeId", "string", true), ("until", "exit|text|quiet|change|input", true), ("text", "string", false), ("anyOf", "string[]", false), ("regex", "boolean", false), ("since", "number", false), ("quietMs", "number", false), ("timeoutMs", "number", false)], "R-IO"),
    ("terminal_submit", &[("nodeId", "string", true), ("command", "string", true)], "-D-O"),
    ("terminal_input", &[("nodeId", "string", true), ("text", "string", false), ("keys", "string[]", false)], "-D-O"),
    ("terminal_interrupt", &[("nodeId", "string", true)], "-D-O"),
    ("terminal_kill", &[("nodeId", "string", true)], "-D-O"),
    ("terminal_external", &[("nodeId", "string", true)], "---O"),
    ("terminal_close", &[("nodeId", "string", true)], "-D-O"),
    ("agent_launch", &[("agent", "claude|codex|gemini|grok|openclaude|opencode|custom", true)], "---O"),
    ("agent_status", &[], "R-I-"),
    ("agent_cards", &[], "R-I-"),
    ("agent_send", &[("nodeId", "string", true), ("text", "string", true), ("messageId", "string", true)], "-D-O"),
    ("agent_task", &[("taskId", "string", true)], "R-I-"),
    ("agent_reply", &[("taskId", "string", true), ("text", "string", true), ("state", "completed|failed", false)], "----"),
    ("context_read", &[], "R-I-"),
    ("artifact_open", &[("path", "string", true), ("view", "editor|diff", false)], "----"),
];

#[test]
fn table_matches_the_spec() {
    let names: Vec<&str> = operations().iter().map(crate::Operation::name).collect();
    let spec_names: Vec<&str> = SPEC_TABLE.iter().map(|row| row.0).collect();
    assert_eq!(names, spec_names);
    for (operation, (name, params, hints)) in operations().iter().zip(SPEC_TABLE) {
        let actual: Vec<(String, String, bool)> = operation
            .params()
            .iter()
            .map(|param| {
                let kind = match param.kind() {
                    ParamKind::String => "string".to_owned(),
                    ParamKind::Number => "number".to_owned(),
                    ParamKind::Boolean => "boolean".to_owned(),
                    ParamKind::StringArray => "string[]".to_owned(),
                    ParamKind::Enum(values) => values.join("|"),
                };
                (param.name().to_owned(), kind, param.required())
            })
            .collect();
        let expected: Vec<(String, String, bool)> = params
            .iter()
            .map(|(name, kind, required)| ((*name).to_owned(), (*kind).to_owned(), *required))
            .collect();
        assert_eq!(actual, expected, "arguments of {name}");
        let annotations = operation.annotations();
        let flags: String = [
            (annotations.read_only, 'R'),
            (annotations.destructive, 'D'),
            (annotations.idempotent, 'I'),
            (annotations.open_world, 'O'),
        ]
        .iter()
        .map(|(set, letter)| if *set { *letter } else { '-' })
        .collect();
        assert_eq!(&flags, hints, "annotations of {name}");
    }
}

#[test]
fn names_are_valid_unique_and_not_reserved() {
    let reserved =
        ["help", "schema", "usage", "skills", "completions", "call", "doctor", "mcp", "acp"];
    let mut seen = std::collections::HashSet::new();
    for operation in operations() {
        let name = operation.name();
        assert!(seen.insert(name), "{name} twice");
        assert!(!reserved.contains(&name), "{name} is a reserved command word");
        let bytes = name.as_bytes();
        assert!(
            (1..=40).contains(&bytes.len())
                && bytes[0].is_ascii_lowercase()
                && bytes.iter().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'_'),
            "{name} does not match ^[a-z][a-z0-9_]{{0,39}}$"
        );
    }
}

/// Every schema has exactly the contract's shape: the four object keywords in order, and each
/// property one of the shapes (the four of §4.1, and `boolean` since 1.4.0) with a description
/// after it.
#[test]
fn schemas_have_exactly_the_contract_shape() {
    for operation in operations() {
        let schema = operation.input_schema();
        let keys: Vec<&str> = schema.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["type", "properties", "required", "additionalProperties"]);
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["additionalProperties"], false);
        for (name, property) in schema["properties"].as_object().unwrap() {
            let keys: Vec<&str> =
                property.as_object().unwrap().keys().map(String::as_str).collect();
            let shape = match keys.as_slice() {
                ["type", "description"] | ["type", "items" | "enum", "description"] => keys,
                other => panic!("{}.{name}: keys {other:?}", operation.name()),
            };
            assert!(!property["description"].as_str().unwrap().trim().is_empty());
            assert!(!property["description"].as_str().unwrap().contains('\n'));
            match shape[1] {
                "items" => assert_eq!(property["items"], json!({"type": "string"})),
                "enum" => {
                    assert!(property["enum"].as_array().unwrap().iter().all(Value::is_string));
                }
                _ => assert!(matches!(
                    property["type"].as_str(),
                    Some("string" | "number" | "boolean")
                )),
            }
        }
        let text = schema.to_string();
        for forbidden in [
            "$schema",
            "\"title\":{\"type\":\"string\",\"title",
            "$ref",
            "$defs",
            "definitions",
            "format",
            "null",
            "oneOf",
            // The keyword, not the property of `terminal_wait` (protocol 1.5.0).
            "\"anyOf\":[",
            "const",
        ] {
            assert!(!text.contains(forbidden), "{}: {forbidden} in {text}", operation.name());
        }
    }
}

#[test]
fn no_arguments_still_carry_properties_and_required() {
    assert_eq!(
        operation("session_info").unwrap().input_schema(),
        &json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false})
    );
}

#[test]
fn descriptions_are_one_sentence() {
    for operation in operations() {
        let description = operation.description();
        assert!(description.ends_with('.'), "{}", operation.name());
        assert!(!description.contains('\n'), "{}", operation.name());
    }
}

#[test]
fn catalog_snapshot() {
    insta::assert_json_snapshot!("catalog", catalog_json());
}

#[test]
fn schema_snapshots() {
    for operation in operations() {
        insta::assert_json_snapshot!(
            format!("schema_{}", operation.name()),
            operation.input_schema()
        );
    }
}

#[test]
fn an_operation_by_name_is_its_table_row() {
    // `operation` builds one row on its own when the table is not built yet; either way the
    // answer must be the row of the table, and an unknown name none.
    for name in ["terminal_submit", "session_info", "artifact_open"] {
        assert_eq!(operation(name).unwrap().name(), name);
    }
    for expected in operations() {
        assert_eq!(operation(expected.name()), Some(expected));
    }
    assert_eq!(operation("terminal_sumbit"), None);
    assert_eq!(operation(""), None);
}

#[test]
fn every_row_has_its_typed_call() {
    // The smallest valid arguments of each row: its required properties with a value of their
    // shape. Each parses into the call of the same name.
    for operation in operations() {
        let mut args = serde_json::Map::new();
        for param in operation.params().iter().filter(|param| param.required()) {
            let value = match param.kind() {
                ParamKind::String => json!("n1"),
                ParamKind::Number => json!(1),
                ParamKind::Boolean => json!(true),
                ParamKind::StringArray => json!(["n1"]),
                ParamKind::Enum(values) => json!(values[0]),
            };
            args.insert(param.name().to_owned(), value);
        }
        let call = crate::Call::from_value(operation.name(), &Value::Object(args))
            .unwrap_or_else(|error| panic!("{}: {error}", operation.name()));
        assert_eq!(call.name(), operation.name());
        assert_eq!(call.operation(), operation);
    }
}

#[test]
fn a_call_names_a_row_and_parses_its_arguments() {
    use crate::{Call, CallError};
    let args = json!({"nodeId": "n1", "until": "text", "text": "ok", "since": 12});
    let Ok(Call::TerminalWait(args)) = Call::from_value("terminal_wait", &args) else {
        panic!("not a wait")
    };
    assert_eq!(args.node_id, "n1");
    assert_eq!(args.until, crate::args::WaitUntil::Text);
    assert_eq!(args.since, Some(12.0));
    assert_eq!(Call::from_value("terminal_sumbit", &json!({})), Err(CallError::UnknownOperation));
    let error = Call::from_value("terminal_read", &json!({"nodeId": 3})).unwrap_err();
    assert!(error.to_string().starts_with("Invalid arguments: invalid type"), "{error}");
}

/// The human titles of the table (hosts show them instead of the names), pinned.
#[test]
fn titles_snapshot() {
    let titles: serde_json::Map<String, Value> = operations()
        .iter()
        .map(|operation| (operation.name().to_owned(), Value::from(operation.title())))
        .collect();
    insta::assert_json_snapshot!("titles", titles);
}

#[test]
fn tool_entries_carry_titles_by_revision() {
    use crate::McpRevision;
    let op = operation("terminal_submit").unwrap();
    assert_eq!(op.tool_json_for(McpRevision::V2024_11_05), op.tool_json());
    assert!(op.tool_json().get("title").is_none());
    assert!(op.tool_json()["annotations"].get("title").is_none());
    let march = op.tool_json_for(McpRevision::V2025_03_26);
    assert!(march.get("title").is_none());
    assert_eq!(march["annotations"]["title"], "Type command into shell");
    let june = op.tool_json_for(McpRevision::V2025_06_18);
    let keys: Vec<&str> = june.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["name", "title", "description", "inputSchema", "annotations"]);
    assert_eq!(june["title"], "Type command into shell");
    let hints: Vec<&str> =
        june["annotations"].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        hints,
        ["title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"]
    );
    assert_eq!(McpRevision::of("2024-11-05"), McpRevision::V2024_11_05);
    assert_eq!(McpRevision::of("2025-03-26"), McpRevision::V2025_03_26);
    assert_eq!(McpRevision::of("2025-06-18"), McpRevision::V2025_06_18);
    assert_eq!(McpRevision::of("2025-11-25"), McpRevision::V2025_06_18);
    assert_eq!(McpRevision::of("2026-07-28"), McpRevision::V2025_06_18);
}
