//! Tests of reading schemas into commands, with synthetic schemas of every shape.

use serde_json::{Value, json};
use termsprawl_protocol::{Annotations, operations};

use super::{Command, JsonType, Param, Scalar, Shape};

fn command(schema: &Value) -> Command {
    let annotations =
        Annotations { read_only: false, destructive: false, idempotent: false, open_world: false };
    Command::describe("op", "An operation.", annotations, schema)
}

fn summary(params: &[Param]) -> Vec<String> {
    let mut lines = Vec::new();
    for param in params {
        lines.push(format!(
            "[{}] {} flag={} required={} repeated={}",
            param.name(),
            param.type_text(),
            param.flag().unwrap_or("-"),
            param.required(),
            param.repeated()
        ));
        for line in summary(param.fields()) {
            lines.push(format!("  {line}"));
        }
    }
    lines
}

#[test]
fn every_shape_of_section_4() {
    let schema = json!({
        "type": "object",
        "properties": {
            "s": {"type": "string", "description": "A string."},
            "e": {"type": "string", "enum": ["a", "b"]},
            "n": {"type": "number"},
            "i": {"type": "integer"},
            "b": {"type": "boolean"},
            "ns": {"type": ["string", "null"]},
            "ni": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "u": {"type": ["string", "number"]},
            "x": {},
            "as": {"type": "array", "items": {"type": "string"}},
            "ab": {"type": "array", "items": {"type": "boolean"}},
            "ao": {"type": "array", "items": {"type": "object"}},
            "aa": {"type": "array"},
            "m": {"type": "object", "additionalProperties": {"type": "integer"}},
            "mo": {"type": "object", "additionalProperties": {"type": "object"}},
            "o": {"type": "object"},
            "p": {"type": "object", "properties": {
                "f": {"type": "string"},
                "g": {"type": "object", "properties": {"h": {"type": "number"}}, "required": ["h"]},
                "d.e": {"type": "string"},
                "q": {"type": "array", "items": {"type": "object"}}
            }, "required": ["f"]}
        },
        "required": ["s", "p"]
    });
    insta::assert_snapshot!(summary(command(&schema).params()).join("\n"));
}

#[test]
fn names_a_flag_cannot_carry_are_json_only() {
    let schema = json!({
        "type": "object",
        "properties": {
            "": {"type": "string"},
            "-x": {"type": "string"},
            "a=b": {"type": "string"},
            "a.b": {"type": "string"},
            "a": {"type": "object", "properties": {"b": {"type": "string"}, "c": {"type": "string"}}},
            "c.d": {"type": "object", "properties": {"e": {"type": "string"}}},
            "-o": {"type": "object", "properties": {"f": {"type": "string"}}}
        }
    });
    insta::assert_snapshot!(summary(command(&schema).params()).join("\n"));
}

#[test]
fn odd_schemas_have_no_flags_and_do_not_fail() {
    assert!(command(&json!(true)).params().is_empty());
    assert!(command(&json!({"type": "object"})).params().is_empty());
    assert!(command(&json!({"type": "object", "properties": []})).params().is_empty());
    let odd = command(&json!({"properties": {"a": 5, "b": {"type": 7}, "c": {"type": ["null"]}}}));
    assert!(
        odd.params().iter().all(|param| param.flag().is_none() && *param.shape() == Shape::Any)
    );
}

#[test]
fn the_table_reads_as_today_s_shapes() {
    for operation in operations() {
        let command = Command::from_operation(operation);
        assert_eq!(command.params().len(), operation.params().len(), "{}", operation.name());
        for param in command.params() {
            assert_eq!(param.flag(), Some(param.name()), "{}.{}", operation.name(), param.name());
            assert!(
                matches!(
                    param.shape(),
                    Shape::Scalar(Scalar::String | Scalar::Number | Scalar::Boolean)
                        | Shape::Array { items: Some(JsonType::Scalar(Scalar::String)) }
                ),
                "{}.{}",
                operation.name(),
                param.name()
            );
        }
    }
}
