//! `cargo xtask protocol-diff --against-file`: the current catalog against scratch baselines.

use serde_json::{Value, json};
use tempfile::TempDir;

use crate::xtask;

/// Writes `catalog` to a scratch file and returns the folder (kept alive) and the path.
fn baseline_file(catalog: &Value) -> (TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("catalog.json");
    std::fs::write(&path, serde_json::to_string_pretty(catalog).unwrap()).unwrap();
    let path = path.to_str().unwrap().to_owned();
    (dir, path)
}

/// The committed catalog, which the tests use as "the current one".
fn current() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/reference/catalog.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The current catalog plus an operation that the current one lacks.
fn with_extra_operation() -> Value {
    let mut catalog = current();
    catalog.as_array_mut().unwrap().push(json!({
        "name": "gone_op",
        "description": "Removed since.",
        "inputSchema": {"type": "object", "properties": {}, "required": [], "additionalProperties": false},
        "annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}
    }));
    catalog
}

fn current_version() -> String {
    termsprawl_protocol::PROTOCOL_VERSION.to_owned()
}

#[test]
fn no_changes_pass_quietly() {
    let (_dir, path) = baseline_file(&current());
    let run = xtask(&["protocol-diff", "--against-file", &path]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "");
    let version = current_version();
    assert_eq!(
        run.stderr,
        format!("protocol version {version} -> {version}: 0 breaking, 0 compatible change(s)\n")
    );
}

#[test]
fn an_unbumped_breaking_change_fails() {
    let (_dir, path) = baseline_file(&with_extra_operation());
    let run = xtask(&["protocol-diff", "--against-file", &path]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "breaking: operation `gone_op` removed\n");
    assert!(
        run.stderr.contains("error: breaking changes need a major bump of PROTOCOL_VERSION"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_breaking_change_after_a_major_bump_passes() {
    let (_dir, path) = baseline_file(&with_extra_operation());
    let run = xtask(&["protocol-diff", "--against-file", &path, "--against-version", "0.9.0"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "breaking: operation `gone_op` removed\n");
}

#[test]
fn compatible_changes_pass() {
    let mut baseline = current();
    baseline.as_array_mut().unwrap().retain(|entry| entry["name"] != "agent_reply");
    let (_dir, path) = baseline_file(&baseline);
    let run = xtask(&["protocol-diff", "--against-file", &path]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "compatible: operation `agent_reply` added\n");
    assert!(run.stderr.contains("note: PROTOCOL_VERSION was not bumped"), "{}", run.stderr);
}

#[test]
fn a_baseline_is_required_and_errors_exit_1() {
    let run = xtask(&["protocol-diff"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    let run = xtask(&["protocol-diff", "--against-file", "/nonexistent/catalog.json"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.starts_with("error: cannot read /nonexistent/catalog.json: "),
        "{}",
        run.stderr
    );
    let (_dir, path) = baseline_file(&json!({"not": "an array"}));
    let run = xtask(&["protocol-diff", "--against-file", &path]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stderr, "error: old catalog: the catalog is not a JSON array\n");
    let (_dir, path) = baseline_file(&current());
    let run = xtask(&["protocol-diff", "--against-file", &path, "--against-version", "1.x"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "error: baseline PROTOCOL_VERSION: version \"1.x\" is not major.minor.patch\n"
    );
}
