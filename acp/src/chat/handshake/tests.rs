//! Tests of the handshake's pure parts: the MCP server entry and which logins a method offers.

use std::path::Path;

use serde_json::json;

use super::{Login, mcp_entry};
use crate::messages::AuthMethod;
use crate::options::McpNarrowing;

fn method(value: serde_json::Value) -> AuthMethod {
    serde_json::from_value(value).unwrap()
}

#[test]
fn the_entry_carries_the_narrowing_and_the_mark() {
    let plain =
        mcp_entry(Path::new("/bin/ctl"), Path::new("/s.json"), &McpNarrowing::default(), None);
    assert_eq!(
        plain.to_string(),
        json!({"name": "termsprawl", "command": "/bin/ctl", "args": ["--session", "/s.json", "mcp"], "env": []})
            .to_string()
    );
    let narrowing = McpNarrowing {
        read_only: true,
        tools: Some(vec!["a".to_owned(), "b".to_owned()]),
        max_wait_ms: Some(120_000),
    };
    let narrowed =
        mcp_entry(Path::new("/bin/ctl"), Path::new("/s.json"), &narrowing, Some(Path::new("/m")));
    assert_eq!(
        narrowed["args"],
        json!([
            "--session",
            "/s.json",
            "mcp",
            "--read-only",
            "--tools",
            "a,b",
            "--max-wait-ms",
            "120000"
        ])
    );
    assert_eq!(narrowed["env"], json!([{"name": "TERMSPRAWL_ACP_BRIDGE_MARK", "value": "/m"}]));
}

#[test]
fn logins_by_kind() {
    let agent = method(json!({"id": "a", "name": "A"}));
    assert!(matches!(Login::of(&agent, false), Some(Login::Agent(_))));
    let terminal = method(json!({"type": "terminal", "id": "t", "name": "T", "args": ["--login"]}));
    assert!(Login::of(&terminal, false).is_none(), "no terminal, no terminal login");
    assert!(matches!(Login::of(&terminal, true), Some(Login::Terminal(_))));
    assert!(Login::of(&method(json!({"type": "future", "id": "f"})), true).is_none());
    // PATH is set in every test run; this name never is.
    let env = method(json!({"type": "env_var", "id": "e", "vars": [
        {"name": "PATH"},
        {"name": "TERMSPRAWL_TEST_NEVER_SET_4711"},
        {"name": "TERMSPRAWL_TEST_NEVER_SET_4712", "optional": true}
    ]}));
    match Login::of(&env, false) {
        Some(Login::EnvVar { missing, .. }) => {
            assert_eq!(missing, vec!["TERMSPRAWL_TEST_NEVER_SET_4711".to_owned()]);
        }
        _ => panic!("not an env_var login"),
    }
}
