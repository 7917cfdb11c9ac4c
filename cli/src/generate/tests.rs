//! Tests of the clap tree behind completions and the man page.

use serde_json::json;
use termsprawl_protocol::Annotations;

use super::{SHELLS, clap_command, completions, man_page};
use crate::catalog::catalog;
use crate::describe::Command;

#[test]
fn the_tree_of_the_table_is_valid() {
    clap_command(&catalog()).debug_assert();
}

#[test]
fn the_tree_of_every_flag_kind_is_valid() {
    let none =
        Annotations { read_only: false, destructive: false, idempotent: false, open_world: false };
    let schema = json!({"type": "object", "properties": {
        "h": {"type": "string"},
        "help": {"type": "boolean"},
        "version": {"type": "integer"},
        "bits": {"type": "array", "items": {"type": "boolean"}},
        "env": {"type": "object", "additionalProperties": {"type": "number"}},
        "a": {"type": "object", "properties": {"b": {"type": "string", "enum": ["x", "y"]}}}
    }});
    let commands = vec![Command::describe("odd", "Odd flags.", none, &schema)];
    clap_command(&commands).debug_assert();
}

#[test]
fn completions_name_operations_flags_and_enum_values() {
    for shell in SHELLS {
        let mut script = Vec::new();
        completions(shell, &catalog(), &mut script);
        let script = String::from_utf8(script).unwrap();
        for word in ["terminal_submit", "nodeId", "artifact_open"] {
            assert!(script.contains(word), "{shell}: {word}");
        }
    }
    let mut bash = Vec::new();
    completions("bash", &catalog(), &mut bash);
    assert!(String::from_utf8(bash).unwrap().contains("openclaude"));
}

#[test]
fn the_man_page_lists_the_commands() {
    let mut page = Vec::new();
    man_page(&catalog(), &mut page).unwrap();
    let page = String::from_utf8(page).unwrap();
    assert!(page.starts_with(".ie"), "{page}");
    assert!(page.contains(".TH termsprawlctl 1"));
    assert!(page.contains("terminal_submit") && page.contains("doctor"));
}
