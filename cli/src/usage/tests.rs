//! Golden tests of the usage Markdown.

use serde_json::json;
use termsprawl_protocol::Annotations;

use super::{calling, help, section, usage};
use crate::catalog::catalog;
use crate::describe::Command;

#[test]
fn the_usage_of_the_whole_table() {
    insta::assert_snapshot!("usage", usage(&catalog()));
}

#[test]
fn the_help_of_the_whole_table() {
    let commands = catalog();
    let help = help(&commands);
    assert!(help.starts_with(&calling(&commands)));
    insta::assert_snapshot!("help", help);
}

#[test]
fn an_example_section_as_the_spec_shows_it() {
    let command = catalog().into_iter().find(|c| c.name() == "guide_read").unwrap();
    assert!(section(&command).ends_with(
        "- `--topic` (string, required): The guide to return. One of `\"overview\"`, `\"browser\"`, `\"terminal\"`, `\"canvas\"`, `\"context\"`, `\"agents\"`, `\"artifacts\"`\n"
    ));
}

fn synthetic() -> Vec<Command> {
    let none =
        Annotations { read_only: false, destructive: false, idempotent: false, open_world: false };
    let kinds = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "  The   name,\n  on two lines. "},
            "mode": {"type": "string", "enum": ["fast", "slow"]},
            "level": {"type": "integer", "description": "How loud."},
            "ratio": {"type": ["number", "null"]},
            "force": {"type": "boolean", "description": "Skip checks."},
            "tags": {"type": "array", "items": {"type": "string"}},
            "bits": {"type": "array", "items": {"type": "boolean"}},
            "env": {"type": "object", "additionalProperties": {"type": "integer"}, "description": "Variables."},
            "target": {"type": "object", "properties": {
                "host": {"type": "string", "description": "Where."},
                "port": {"type": "integer"},
                "extra": {"type": "array", "items": {"type": "object"}}
            }, "required": ["host", "extra"]},
            "payload": {},
            "items": {"type": "array", "items": {"type": "object"}},
            "-odd": {"type": "string"}
        },
        "required": ["name", "target"]
    });
    let needs_json = json!({
        "type": "object",
        "properties": {"spec": {"type": "object", "description": "The whole spec."}, "id": {"type": "string"}},
        "required": ["spec"]
    });
    vec![
        Command::describe(
            "kinds",
            "Every kind of argument.\nSecond line.",
            Annotations { read_only: false, destructive: true, idempotent: true, open_world: true },
            &kinds,
        ),
        Command::describe("needs_json", "An argument only JSON can give.", none, &needs_json),
        Command::describe("plain", "Nothing at all.", none, &json!({"type": "object"})),
    ]
}

#[test]
fn every_kind_of_argument() {
    insta::assert_snapshot!("synthetic_usage", usage(&synthetic()));
}

#[test]
fn the_calling_text_grows_only_for_flags_the_table_has() {
    let commands = synthetic();
    let text = calling(&commands);
    assert!(text.contains("termsprawlctl kinds --target.host value\n"), "{text}");
    assert!(text.contains("termsprawlctl kinds --env key=value\n"), "{text}");
    assert!(text.contains("A boolean flag stands alone"), "{text}");
    // Since protocol 1.4.0 the table has a boolean (`terminal_run`'s `keep`), and no map.
    let today = calling(&catalog());
    assert!(
        !today.contains("key=value") && today.contains("A boolean flag stands alone"),
        "{today}"
    );
}
