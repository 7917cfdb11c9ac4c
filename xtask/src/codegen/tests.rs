//! Tests of the generators and of the check: the committed files are fresh, the check finds every
//! kind of drift without changing anything, and a normal run repairs it.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use termsprawl_protocol::{
    IntegrationState, IntegrationStatus, SessionToken, ToolEndpoint, ToolIdentity, ToolRequest,
    ToolResult, ToolSession, catalog_json, operations,
};

use super::{
    Action, Drift, FIX_COMMAND, GENERATED_DIRS, GeneratedFile, MARKER, check, generate,
    render_drifts, typescript, write,
};
use crate::project_root;

/// The committed `docs/reference/` and `bindings/typescript/` are what `cargo xtask codegen`
/// writes.
#[test]
fn docs_reference_and_the_typescript_bindings_are_fresh() {
    let drifts = check(&project_root(), &generate().unwrap()).unwrap();
    assert!(drifts.is_empty(), "\n{}", render_drifts(&drifts));
}

fn generated(path: &str) -> String {
    generate()
        .unwrap()
        .into_iter()
        .find(|(generated, _)| generated == Path::new(path))
        .unwrap_or_else(|| panic!("{path} is not generated"))
        .1
}

fn generated_json(path: &str) -> Value {
    serde_json::from_str(&generated(path)).unwrap()
}

#[test]
fn catalog_json_is_the_tools_list_array_pretty_printed() {
    let text = generated("docs/reference/catalog.json");
    assert_eq!(text, format!("{}\n", serde_json::to_string_pretty(&catalog_json()).unwrap()));
    assert!(text.starts_with("[\n  {\n    \"name\": \"session_info\",\n"));
}

#[test]
fn every_generated_file_carries_the_marker_where_the_format_allows() {
    for (path, contents) in generate().unwrap() {
        let shown = path.display();
        assert!(GENERATED_DIRS.iter().any(|dir| path.starts_with(dir)), "{shown}");
        assert!(contents.ends_with('\n') && !contents.ends_with("\n\n"), "{shown}: final newline");
        let in_bindings = path.starts_with(typescript::DIR);
        match path.extension().and_then(|extension| extension.to_str()) {
            Some("ts") => assert!(contents.starts_with(&format!("// {MARKER}\n\n")), "{shown}"),
            Some("json") if path.ends_with("tsconfig.json") => {
                assert!(contents.starts_with(&format!("// {MARKER}\n{{")), "{shown}");
            }
            Some("json") if in_bindings => {
                let package: Map<String, Value> = serde_json::from_str(&contents).unwrap();
                assert_eq!(
                    package.iter().next(),
                    Some((&"//".to_owned(), &json!(MARKER))),
                    "{shown}"
                );
            }
            Some("md") => {
                assert!(contents.starts_with(&format!("<!-- {MARKER} -->\n\n")), "{shown}");
            }
            Some("json") if path.ends_with("catalog.json") => {
                assert!(contents.starts_with('['), "{shown}");
            }
            Some("json") => {
                let schema: Map<String, Value> = serde_json::from_str(&contents).unwrap();
                assert_eq!(schema.keys().next().map(String::as_str), Some("$comment"), "{shown}");
                assert_eq!(schema["$comment"], MARKER, "{shown}");
                assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
            }
            _ => panic!("{shown}: unexpected kind of generated file"),
        }
    }
}

#[test]
fn every_operation_has_a_schema_file_and_a_reference_section() {
    let reference = generated("docs/reference/operations.md");
    for operation in operations() {
        let name = operation.name();
        let mut schema = generated_json(&format!("docs/reference/schemas/{name}.json"));
        assert_eq!(schema["title"], name);
        assert_eq!(schema["description"], operation.description());
        let schema = schema.as_object_mut().unwrap();
        for header in ["$comment", "$schema", "title", "description"] {
            schema.remove(header);
        }
        assert_eq!(&Value::Object(schema.clone()), operation.input_schema(), "{name}");
        assert!(reference.contains(&format!("\n## `{name}`\n\n{}\n", operation.description())));
        for param in operation.params() {
            let required = if param.required() { "yes" } else { "no" };
            let row_start = format!("| `{}` | ", param.name());
            let row = reference[reference.find(&format!("\n## `{name}`")).unwrap()..]
                .lines()
                .find(|line| line.starts_with(&row_start))
                .unwrap_or_else(|| panic!("{name}.{}: no row", param.name()));
            assert!(row.ends_with(&format!(" | {required} | {} |", param.description())), "{row}");
        }
    }
    let files = generate().unwrap();
    let schema_files = files.iter().filter(|(path, _)| path.starts_with("docs/reference/schemas"));
    assert_eq!(schema_files.count(), operations().len());
}

#[test]
fn enum_arguments_list_their_values_in_the_reference() {
    let reference = generated("docs/reference/operations.md");
    assert!(reference.contains(
        "| `agent` | string, one of `claude`, `codex`, `gemini`, `grok`, `openclaude`, `opencode`, `custom` | yes | The agent preset to start. |"
    ));
    assert!(
        reference.contains("| 30 | [`agent_launch`](#agent_launch) | `agent`* | – | – | – | ✓ |")
    );
}

// The wire-type schemas are checked against values serialised by the protocol crate's types.

/// Checks `value` against `schema` for the keywords the wire-type schemas use; `$ref` names a
/// sibling file in `types/`. Member order must follow `properties`, and no undeclared member may
/// appear (our writers emit none).
fn conforms(schema: &Value, value: &Value) -> Result<(), String> {
    conforms_in(schema, value, &|name| generated_json(&format!("docs/reference/types/{name}.json")))
}

/// [`conforms`], with `$ref` names resolved by `resolve`.
fn conforms_in(
    schema: &Value,
    value: &Value,
    resolve: &dyn Fn(&str) -> Value,
) -> Result<(), String> {
    let conforms = |schema: &Value, value: &Value| conforms_in(schema, value, resolve);
    if let Some(Value::String(reference)) = schema.get("$ref") {
        let name = reference.strip_suffix(".json").unwrap();
        return conforms(&resolve(name), value);
    }
    let kinds: Vec<&str> = match schema.get("type") {
        Some(Value::String(kind)) => vec![kind.as_str()],
        Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if !kinds.is_empty() {
        let matches = kinds.iter().any(|kind| match *kind {
            "object" => value.is_object(),
            "string" => value.is_string(),
            "boolean" => value.is_boolean(),
            "integer" => value.is_u64() || value.is_i64(),
            "array" => value.is_array(),
            "null" => value.is_null(),
            other => panic!("type {other} is not used by the wire and result types"),
        });
        if !matches {
            return Err(format!("{value} is not of type {kinds:?}"));
        }
    }
    if let (Some(items), Value::Array(values)) = (schema.get("items"), value) {
        for item in values {
            conforms(items, item)?;
        }
    }
    if let Some(expected) = schema.get("const")
        && expected != value
    {
        return Err(format!("{value} is not {expected}"));
    }
    if let Some(Value::Array(values)) = schema.get("enum")
        && !values.contains(value)
    {
        return Err(format!("{value} is not one of {values:?}"));
    }
    if let (Some(maximum), Some(text)) = (schema.get("maxLength"), value.as_str())
        && text.chars().count() > usize::try_from(maximum.as_u64().unwrap()).unwrap()
    {
        return Err(format!("{value} is too long"));
    }
    if let Some(Value::Array(branches)) = schema.get("oneOf") {
        let matching = branches.iter().filter(|branch| conforms(branch, value).is_ok()).count();
        if matching != 1 {
            return Err(format!("{value} matches {matching} branches of oneOf"));
        }
    }
    let Value::Object(object) = value else { return Ok(()) };
    for name in schema.get("required").and_then(Value::as_array).into_iter().flatten() {
        if !object.contains_key(name.as_str().unwrap()) {
            return Err(format!("{value} lacks the required member {name}"));
        }
    }
    if let Some(Value::Object(properties)) = schema.get("properties") {
        let declared: Vec<&String> =
            properties.keys().filter(|key| object.contains_key(*key)).collect();
        let present: Vec<&String> = object.keys().collect();
        if declared != present {
            return Err(format!("members {present:?} are not in schema order {declared:?}"));
        }
        for (name, member) in object {
            conforms(&properties[name], member).map_err(|error| format!("{name}: {error}"))?;
        }
    }
    Ok(())
}

/// Checks `value` against the result type `name` of `termsprawl_protocol::results::schemas`, whose
/// references name its other types or the wire types of `docs/reference/types/`.
fn result(name: &str, value: &impl serde::Serialize) -> Result<(), String> {
    let schema = |name: &str| {
        termsprawl_protocol::results::schemas()
            .into_iter()
            .find(|(type_name, _)| *type_name == name)
            .map_or_else(|| generated_json(&format!("docs/reference/types/{name}.json")), |it| it.1)
    };
    conforms_in(&schema(name), &serde_json::to_value(value).unwrap(), &schema)
}

#[test]
fn result_type_schemas_accept_what_the_protocol_types_write() {
    use termsprawl_protocol::results::{
        SearchMatch, TerminalKind, TerminalListEntry, TerminalReadResult, TerminalRunResult,
        TerminalSearchResult, TerminalWaitResult,
    };
    let read = TerminalReadResult {
        node_id: "terminal-1".to_owned(),
        output: "x\n".to_owned(),
        cursor: 2,
        running: true,
        exit_code: None,
        signal: None,
    };
    result("TerminalReadResult", &read).unwrap();
    // Member order is the contract's: `cursor` before `running` in a read.
    let swapped = serde_json::json!({"nodeId": "n", "output": "", "running": true, "cursor": 0, "exitCode": null, "signal": null});
    assert!(result("TerminalReadResult", &swapped).is_err());
    let run = TerminalRunResult {
        node_id: "terminal-1".to_owned(),
        running: false,
        exit_code: Some(3),
        signal: None,
        output: "x\n".to_owned(),
        truncated: false,
        cursor: 2,
    };
    result("TerminalRunResult", &run).unwrap();
    let mut wait = TerminalWaitResult {
        node_id: "terminal-1".to_owned(),
        reached: true,
        running: true,
        exit_code: None,
        signal: Some("SIGTERM".to_owned()),
        output: String::new(),
        truncated: true,
        cursor: 9,
        matched: None,
        match_cursor: None,
        input_by: None,
    };
    result("TerminalWaitResult", &wait).unwrap();
    wait.matched = Some(Some(1));
    wait.match_cursor = Some(None);
    wait.input_by = Some(Some("bash".to_owned()));
    result("TerminalWaitResult", &wait).unwrap();
    for kind in [TerminalKind::Shell, TerminalKind::Run, TerminalKind::Agent] {
        let entry = TerminalListEntry {
            node_id: "terminal-1".to_owned(),
            title: "make".to_owned(),
            kind,
            command: Some("make".to_owned()),
            running: true,
            exit_code: None,
            signal: None,
            started_at: "2026-12-03T17:00:00Z".to_owned(),
            ended_at: None,
            cursor: 0,
            last_output_at: None,
            waiting_for_input: false,
            input_by: None,
            notify: true,
        };
        result("TerminalListEntry", &entry).unwrap();
    }
    let found = TerminalSearchResult {
        matches: vec![SearchMatch {
            node_id: "terminal-1".to_owned(),
            cursor: 4,
            line: "FAILED".to_owned(),
            before: vec!["a".to_owned()],
            after: Vec::new(),
        }],
        truncated: false,
    };
    result("TerminalSearchResult", &found).unwrap();
    // And what they must refuse: a member out of order, a wrong kind, a missing member.
    assert!(
        result("TerminalSearchResult", &serde_json::json!({"truncated": false, "matches": []}))
            .is_err()
    );
    assert!(result("TerminalKind", &serde_json::json!("pane")).is_err());
    assert!(result("TerminalRunResult", &serde_json::json!({"nodeId": "n"})).is_err());
}

/// `answer` as its type writes it.
fn value(answer: &impl serde::Serialize) -> Value {
    serde_json::to_value(answer).unwrap()
}

/// A value of each answer type the older test above does not cover, as its type writes it, by
/// type name (`DeliveredResult` with and without its optional `cursor`, and so on).
fn answers() -> Vec<(&'static str, Value)> {
    use termsprawl_protocol::results::{
        DeliveredResult, TerminalCloseResult, TerminalKillResult, TerminalReadResult,
        TerminalScreenResult,
    };
    let id = || "terminal-1".to_owned();
    let read = TerminalReadResult {
        node_id: id(),
        output: "$ ".to_owned(),
        cursor: 2,
        running: true,
        exit_code: None,
        signal: None,
    };
    let screen = TerminalScreenResult {
        node_id: id(),
        output: "top".to_owned(),
        cursor: 2,
        running: false,
        exit_code: Some(0),
        signal: None,
        rows: 24,
        cols: 80,
        cursor_row: 1,
        cursor_col: 2,
        alternate_screen: true,
        waiting_for_input: true,
        input_by: Some("python3".to_owned()),
    };
    let kill = TerminalKillResult {
        node_id: id(),
        cursor: 7,
        running: false,
        exit_code: None,
        signal: Some("SIGKILL".to_owned()),
    };
    let typed = DeliveredResult { node_id: id(), delivered: true, cursor: Some(3) };
    let closed = TerminalCloseResult { node_id: id(), cleanup_pending_ids: vec!["r".to_owned()] };
    let mut answers = vec![
        ("TerminalReadResult", value(&read)),
        ("TerminalScreenResult", value(&screen)),
        ("TerminalKillResult", value(&kill)),
        ("DeliveredResult", value(&typed)),
        ("DeliveredResult", value(&DeliveredResult { cursor: None, ..typed })),
        ("TerminalCloseResult", value(&closed)),
    ];
    answers.extend(canvas_and_session_answers());
    answers
}

/// [`answers`] of the canvas, session, agent and context operations.
fn canvas_and_session_answers() -> Vec<(&'static str, Value)> {
    use termsprawl_protocol::results::{
        AgentCard, AgentStatusEntry, CanvasGroupResult, CanvasSelectResult, ContextReadResult,
        NodeResult, SessionInfoResult,
    };
    let id = || "terminal-1".to_owned();
    let info = SessionInfoResult {
        node_id: id(),
        project_id: "project".to_owned(),
        instance_id: "0d4f7c8e-5d0b-4f39-9d0e-6d6f9a1b2c3d".to_owned(),
        host: "local".to_owned(),
        status: status(IntegrationState::Connected),
        app_version: "0.1.0".to_owned(),
        preferences_file: "/p.json".to_owned(),
        guides_directory: "/g".to_owned(),
        browser_enabled: false,
        operations: vec!["session_info".to_owned()],
        rules: None,
    };
    let ruled = SessionInfoResult { rules: Some(vec!["one rule".to_owned()]), ..info.clone() };
    let agent = AgentStatusEntry {
        node_id: id(),
        project_id: "project".to_owned(),
        status: status(IntegrationState::NeedsSetup),
    };
    let card = AgentCard {
        node_id: id(),
        project_id: "project".to_owned(),
        title: "claude".to_owned(),
        agent: None,
        status: status(IntegrationState::CliFallback),
        enabled_peer_ids: Vec::new(),
    };
    let context =
        ContextReadResult { text: String::new(), reader: "claude-jsonl".to_owned(), reason: None };
    let reasoned =
        ContextReadResult { reason: Some("no linked peers".to_owned()), ..context.clone() };
    vec![
        ("NodeResult", value(&NodeResult { node_id: id() })),
        ("CanvasSelectResult", value(&CanvasSelectResult { node_ids: vec![id()] })),
        (
            "CanvasGroupResult",
            value(&CanvasGroupResult { node_id: "g".to_owned(), node_ids: vec![id()] }),
        ),
        ("SessionInfoResult", value(&info)),
        ("SessionInfoResult", value(&ruled)),
        ("AgentStatusEntry", value(&agent)),
        ("AgentCard", value(&card)),
        ("ContextReadResult", value(&context)),
        ("ContextReadResult", value(&reasoned)),
    ]
}

/// Every answer type has a schema and results.ts a type, and each schema takes what its Rust type
/// writes, members in order (the schemas are derived, so this holds the derivation's reading of
/// serde's attributes: optional members, null, references).
#[test]
fn every_answer_type_reaches_results_ts_and_its_schema_takes_what_it_writes() {
    let answers = answers();
    for (name, value) in &answers {
        result(name, value).unwrap_or_else(|error| panic!("{name}: {error}"));
    }
    // The older six are checked by the test above.
    let older = [
        "TerminalRunResult",
        "TerminalWaitResult",
        "TerminalKind",
        "TerminalListEntry",
        "SearchMatch",
        "TerminalSearchResult",
    ];
    let results_ts = generated("bindings/typescript/src/results.ts");
    for (name, _) in termsprawl_protocol::results::schemas() {
        assert!(
            older.contains(&name) || answers.iter().any(|(checked, _)| *checked == name),
            "no value of {name} is checked against its schema"
        );
        assert!(
            results_ts.contains(&format!("export interface {name} {{"))
                || results_ts.contains(&format!("export type {name} = ")),
            "results.ts lacks {name}"
        );
    }
    assert!(results_ts.contains("import type { IntegrationStatus } from \"./types.js\";"));
    // And what they must refuse: null where the type has none, an absent required member, a
    // member of a wire type outside its schema.
    let null_cursor = json!({"nodeId": "n", "delivered": true, "cursor": null});
    assert!(result("DeliveredResult", &null_cursor).is_err());
    assert!(result("TerminalCloseResult", &json!({"nodeId": "n"})).is_err());
    let (_, mut agent) = answers.into_iter().find(|(name, _)| *name == "AgentStatusEntry").unwrap();
    agent["status"]["state"] = json!("asleep");
    assert!(result("AgentStatusEntry", &agent).is_err());
}

fn wire(name: &str, value: &Value) -> Result<(), String> {
    conforms(&generated_json(&format!("docs/reference/types/{name}.json")), value)
}

fn status(state: IntegrationState) -> IntegrationStatus {
    IntegrationStatus {
        state,
        adapter: "claude-mcp".to_owned(),
        version: "2.1.0 (Claude Code)".to_owned(),
        reason: "Waiting for the agent to connect to MCP".to_owned(),
    }
}

#[test]
fn wire_type_schemas_accept_what_the_protocol_types_write() {
    let identity = ToolIdentity { node_id: "node-1".to_owned(), project_id: "project".to_owned() };
    wire("ToolIdentity", &serde_json::to_value(identity).unwrap()).unwrap();
    for state in
        [IntegrationState::Connected, IntegrationState::CliFallback, IntegrationState::NeedsSetup]
    {
        wire("IntegrationStatus", &serde_json::to_value(status(state)).unwrap()).unwrap();
    }
    let session = ToolSession {
        node_id: "node-1".to_owned(),
        project_id: "project".to_owned(),
        token: SessionToken::new("0".repeat(64)),
        status: status(IntegrationState::NeedsSetup),
    };
    wire("ToolSession", &serde_json::to_value(session).unwrap()).unwrap();
    let endpoint = ToolEndpoint {
        url: "http://127.0.0.1:43123/call".to_owned(),
        instance_id: "0d4f7c8e-5d0b-4f39-9d0e-6d6f9a1b2c3d".to_owned(),
    };
    wire("ToolEndpoint", &serde_json::to_value(endpoint).unwrap()).unwrap();
    let request = ToolRequest::new("canvas_move", &json!({"nodeId": "n", "x": 1, "y": 2}));
    wire("ToolRequest", &serde_json::from_str(&request.to_body()).unwrap()).unwrap();
    for result in [
        ToolResult::ok(json!({"nodeId": "n"})),
        ToolResult::ok(Value::Null),
        ToolResult::ok_empty(),
        ToolResult::failure("Tool failed"),
    ] {
        wire("ToolResult", &result.to_value()).unwrap();
    }
}

#[test]
fn wire_type_schemas_reject_what_the_contract_forbids() {
    assert!(wire("ToolResult", &json!({"ok": false})).is_err());
    assert!(wire("ToolResult", &json!({"ok": "yes"})).is_err());
    assert!(wire("ToolRequest", &json!({"operation": "x"})).is_err());
    assert!(wire("ToolRequest", &json!({"args": {}, "operation": "x"})).is_err(), "member order");
    assert!(
        wire(
            "IntegrationStatus",
            &json!({"state": "ready", "adapter": "a", "version": "v", "reason": "r"})
        )
        .is_err()
    );
    let long = "v".repeat(161);
    assert!(
        wire(
            "IntegrationStatus",
            &json!({"state": "connected", "adapter": "a", "version": long, "reason": "r"})
        )
        .is_err()
    );
    let session = json!({"nodeId": "n", "projectId": "p", "token": "t", "status": {"state": "connected", "adapter": "a", "version": "v"}});
    assert!(wire("ToolSession", &session).unwrap_err().contains("reason"));
}

// The check and the writer, on a scratch repository.

fn scratch_files() -> Vec<GeneratedFile> {
    vec![
        (PathBuf::from("docs/reference/same.md"), "unchanged\n".to_owned()),
        (PathBuf::from("docs/reference/stale.md"), "line one\nline two, new\n".to_owned()),
        (PathBuf::from("docs/reference/nested/missing.json"), "{}\n".to_owned()),
    ]
}

fn put(root: &Path, path: &str, contents: &str) {
    let full = root.join(path);
    fs::create_dir_all(full.parent().unwrap()).unwrap();
    fs::write(full, contents).unwrap();
}

fn snapshot(root: &Path) -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let contents = fs::read_to_string(&path).unwrap();
                files.push((path.strip_prefix(root).unwrap().to_path_buf(), contents));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn check_finds_stale_missing_and_extra_files_and_changes_nothing() {
    let root = tempfile::tempdir().unwrap();
    put(root.path(), "docs/reference/same.md", "unchanged\n");
    put(root.path(), "docs/reference/stale.md", "line one\nline two, old\n");
    put(root.path(), "docs/reference/old/extra.md", "left over\n");
    put(root.path(), "docs/other.md", "not generated, not checked\n");
    let before = snapshot(root.path());

    let drifts = check(root.path(), &scratch_files()).unwrap();

    assert_eq!(snapshot(root.path()), before, "the check must not write");
    let summary: Vec<String> = drifts.iter().map(ToString::to_string).collect();
    assert_eq!(
        summary,
        [
            "docs/reference/nested/missing.json: missing",
            "docs/reference/old/extra.md: extra (no generator writes it)",
            "docs/reference/stale.md: stale",
        ]
    );
    assert!(matches!(drifts[0], Drift::Missing { .. }));
    assert_eq!(
        drifts[0].diff(),
        "--- /dev/null\n+++ b/docs/reference/nested/missing.json\n@@ -0,0 +1 @@\n+{}\n"
    );
    assert_eq!(
        drifts[1].diff(),
        "--- a/docs/reference/old/extra.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-left over\n"
    );
    assert_eq!(
        drifts[2].diff(),
        "--- a/docs/reference/stale.md\n+++ b/docs/reference/stale.md\n@@ -1,2 +1,2 @@\n line one\n-line two, old\n+line two, new\n"
    );
    let report = render_drifts(&drifts);
    assert!(report.contains(drifts[2].diff()), "{report}");
    assert!(report.ends_with(&format!(
        "error: 3 generated file(s) out of date\n\nhint: run `{FIX_COMMAND}` and commit the result\n"
    )));
}

#[test]
fn write_repairs_every_drift_and_leaves_fresh_files_alone() {
    let root = tempfile::tempdir().unwrap();
    put(root.path(), "docs/reference/same.md", "unchanged\n");
    put(root.path(), "docs/reference/stale.md", "line one\nline two, old\n");
    put(root.path(), "docs/reference/old/deeper/extra.md", "left over\n");

    let actions = write(root.path(), &scratch_files()).unwrap();

    assert_eq!(
        actions,
        [
            (PathBuf::from("docs/reference/nested/missing.json"), Action::Created),
            (PathBuf::from("docs/reference/old/deeper/extra.md"), Action::Deleted),
            (PathBuf::from("docs/reference/stale.md"), Action::Updated),
        ]
    );
    assert!(check(root.path(), &scratch_files()).unwrap().is_empty());
    assert!(!root.path().join("docs/reference/old").exists(), "emptied folders are removed");
    assert!(root.path().join("docs/reference").is_dir());
    assert_eq!(write(root.path(), &scratch_files()).unwrap(), []);
}

#[test]
fn check_of_an_empty_repository_reports_every_file_missing() {
    let root = tempfile::tempdir().unwrap();
    let files = generate().unwrap();
    let drifts = check(root.path(), &files).unwrap();
    assert_eq!(drifts.len(), files.len());
    assert!(drifts.iter().all(|drift| matches!(drift, Drift::Missing { .. })));
}

// The TypeScript bindings: what only the generator can show (the Node tests of
// `tests/typescript/` hold the rest: table, validator, a server on them).

#[test]
fn the_check_covers_every_file_of_the_typescript_package_but_its_build_output() {
    let root = tempfile::tempdir().unwrap();
    let files = generate().unwrap();
    write(root.path(), &files).unwrap();
    put(root.path(), "bindings/typescript/src/handwritten.ts", "export const x = 1;\n");
    put(root.path(), "bindings/typescript/examples/client.ts", "export {};\n");
    put(root.path(), "bindings/typescript/dist/index.js", "export {};\n");
    put(root.path(), "bindings/typescript/node_modules/typescript/package.json", "{}\n");
    let (path, _) = files.iter().find(|(path, _)| path.ends_with("src/validate.ts")).unwrap();
    put(root.path(), path.to_str().unwrap(), "// edited by hand\n");

    let summary: Vec<String> =
        check(root.path(), &files).unwrap().iter().map(ToString::to_string).collect();

    assert_eq!(
        summary,
        [
            "bindings/typescript/examples/client.ts: extra (no generator writes it)",
            "bindings/typescript/src/handwritten.ts: extra (no generator writes it)",
            "bindings/typescript/src/validate.ts: stale",
        ]
    );
}

#[test]
fn the_package_is_versioned_as_the_protocol_and_lists_every_operation() {
    let package = generated_json("bindings/typescript/package.json");
    assert_eq!(package["name"], typescript::PACKAGE);
    assert_eq!(package["version"], termsprawl_protocol::PROTOCOL_VERSION);
    let operations_ts = generated("bindings/typescript/src/operations.ts");
    let data = generated("bindings/typescript/src/validation-data.ts");
    for operation in operations() {
        let name = operation.name();
        assert!(operations_ts.contains(&format!("\n  {name}: ")), "{name} in OperationArgs");
        assert!(
            operations_ts.contains(&format!("\"name\": \"{name}\",\n")),
            "{name} in OPERATIONS"
        );
        assert!(data.contains(&format!("\n  {name}: [")), "{name} in PARAMS");
    }
    assert!(
        generated("bindings/typescript/README.md")
            .contains(&format!("version **{}**", termsprawl_protocol::PROTOCOL_VERSION))
    );
}

#[test]
fn the_validator_messages_are_the_rust_validators() {
    let data = generated("bindings/typescript/src/validation-data.ts");
    for (member, message) in [
        ("expectedObject", "Expected an operation and args object"),
        ("unknownOperation", "Unknown operation"),
        ("expectedArgsObject", "Expected args object"),
        ("missingArgument", "Missing argument: "),
        ("unknownArgument", "Unknown argument: "),
        ("invalidArgument", "Invalid "),
    ] {
        assert!(data.contains(&format!("  {member}: \"{message}\",\n")), "{member}");
    }
    assert!(data.contains(
        "{ name: \"since\", required: false, kind: \"number\", maxMagnitude: 9007199254740991 }"
    ));
    assert!(
        data.contains("{ name: \"keys\", required: false, kind: \"string[]\", maxItems: 256 }")
    );
    // The template is emitted unchanged after the marker.
    let template = generated("bindings/typescript/src/validate.ts");
    assert_eq!(
        template.strip_prefix(&format!("// {MARKER}\n\n")),
        Some(include_str!("typescript/validate.ts"))
    );
}
