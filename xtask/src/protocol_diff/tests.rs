//! Tests of `protocol-diff`: every rule of the classifier on small synthetic catalogs, the version
//! rule, the report, and the git plumbing against a scratch repository.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use termsprawl_protocol::{PROTOCOL_VERSION, catalog_json};

use super::{
    Baseline, Class, Report, Version, baseline_at_ref, classify, is_major_bump, version_from_lib_rs,
};

/// A catalog entry with string properties; `required` names some of them.
fn op(name: &str, properties: &[&str], required: &[&str]) -> Value {
    let properties: serde_json::Map<String, Value> = properties
        .iter()
        .map(|property| {
            ((*property).to_owned(), json!({"type": "string", "description": "A value."}))
        })
        .collect();
    json!({
        "name": name,
        "description": format!("Do {name}."),
        "inputSchema": {
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false
        },
        "annotations": {
            "readOnlyHint": false,
            "destructiveHint": false,
            "idempotentHint": false,
            "openWorldHint": false
        }
    })
}

fn base() -> Value {
    json!([op("alpha", &["nodeId", "text"], &["nodeId"]), op("beta", &[], &[])])
}

/// Applies `edit` to a copy of [`base`] and returns the classified changes as display lines.
fn check(edit: impl FnOnce(&mut Value)) -> Vec<String> {
    let old = base();
    let mut new = base();
    edit(&mut new);
    classify(&old, &new).unwrap().iter().map(ToString::to_string).collect()
}

fn property<'a>(catalog: &'a mut Value, operation: usize, name: &str) -> &'a mut Value {
    &mut catalog[operation]["inputSchema"]["properties"][name]
}

#[test]
fn identical_catalogs_have_no_changes() {
    assert_eq!(check(|_| {}), Vec::<String>::new());
    assert_eq!(classify(&catalog_json(), &catalog_json()).unwrap(), []);
}

#[test]
fn operation_removed_is_breaking() {
    let changes = check(|catalog| {
        catalog.as_array_mut().unwrap().remove(1);
    });
    assert_eq!(changes, ["breaking: operation `beta` removed"]);
}

#[test]
fn operation_renamed_is_a_breaking_removal_and_a_compatible_addition() {
    let changes = check(|catalog| catalog[1]["name"] = json!("gamma"));
    assert_eq!(
        changes,
        [
            "breaking: operation `beta` removed (renamed to `gamma`?)",
            "compatible: operation `gamma` added"
        ]
    );
}

#[test]
fn operation_added_is_compatible() {
    let changes =
        check(|catalog| catalog.as_array_mut().unwrap().push(op("gamma", &["x"], &["x"])));
    assert_eq!(changes, ["compatible: operation `gamma` added"]);
}

#[test]
fn operations_reordered_is_compatible() {
    let changes = check(|catalog| catalog.as_array_mut().unwrap().swap(0, 1));
    assert_eq!(changes, ["compatible: operations reordered"]);
}

#[test]
fn operation_description_changed_is_compatible() {
    let changes = check(|catalog| catalog[0]["description"] = json!("Do alpha, better."));
    assert_eq!(changes, ["compatible: `alpha`: description changed"]);
}

#[test]
fn annotations_changed_added_or_removed_are_compatible() {
    let changes = check(|catalog| {
        let annotations = catalog[0]["annotations"].as_object_mut().unwrap();
        annotations.insert("destructiveHint".to_owned(), json!(true));
        annotations.remove("openWorldHint");
        annotations.insert("title".to_owned(), json!("Alpha"));
    });
    assert_eq!(
        changes,
        [
            "compatible: `alpha`: annotation `destructiveHint` false -> true",
            "compatible: `alpha`: annotation `openWorldHint` false -> absent",
            "compatible: `alpha`: annotation `title` absent -> \"Alpha\"",
        ]
    );
}

#[test]
fn property_removed_is_breaking() {
    let changes = check(|catalog| {
        catalog[0]["inputSchema"]["properties"].as_object_mut().unwrap().shift_remove("text");
    });
    assert_eq!(changes, ["breaking: `alpha`: property `text` removed"]);
}

#[test]
fn required_property_removed_is_breaking_once() {
    let changes = check(|catalog| {
        catalog[0]["inputSchema"]["properties"].as_object_mut().unwrap().shift_remove("nodeId");
        catalog[0]["inputSchema"]["required"] = json!([]);
    });
    assert_eq!(changes, ["breaking: `alpha`: property `nodeId` removed"]);
}

#[test]
fn optional_property_added_is_compatible() {
    let changes = check(|catalog| {
        *property(catalog, 0, "title") = json!({"type": "string"});
    });
    assert_eq!(changes, ["compatible: `alpha`: optional property `title` added"]);
}

#[test]
fn required_property_added_is_breaking() {
    let changes = check(|catalog| {
        *property(catalog, 1, "taskId") = json!({"type": "string"});
        catalog[1]["inputSchema"]["required"] = json!(["taskId"]);
    });
    assert_eq!(changes, ["breaking: `beta`: required property `taskId` added"]);
}

#[test]
fn property_newly_required_is_breaking() {
    let changes =
        check(|catalog| catalog[0]["inputSchema"]["required"] = json!(["nodeId", "text"]));
    assert_eq!(changes, ["breaking: `alpha`: property `text` is now required"]);
}

#[test]
fn required_name_without_a_property_is_breaking() {
    let changes = check(|catalog| catalog[1]["inputSchema"]["required"] = json!(["ghost"]));
    assert_eq!(changes, ["breaking: `beta`: property `ghost` is now required"]);
}

#[test]
fn property_no_longer_required_is_compatible() {
    let changes = check(|catalog| catalog[0]["inputSchema"]["required"] = json!([]));
    assert_eq!(changes, ["compatible: `alpha`: property `nodeId` is no longer required"]);
}

#[test]
fn type_changed_is_breaking() {
    let changes = check(|catalog| property(catalog, 0, "text")["type"] = json!("number"));
    assert_eq!(changes, ["breaking: `alpha`: property `text` type string -> number"]);
}

#[test]
fn items_type_changed_is_breaking() {
    let old = json!([{"name": "a", "inputSchema": {"type": "object", "properties": {
        "ids": {"type": "array", "items": {"type": "string"}}}}}]);
    let mut new = old.clone();
    new[0]["inputSchema"]["properties"]["ids"]["items"]["type"] = json!("number");
    let changes: Vec<String> =
        classify(&old, &new).unwrap().iter().map(ToString::to_string).collect();
    assert_eq!(changes, ["breaking: `a`: property `ids` type array of string -> array of number"]);
}

#[test]
fn type_change_of_an_enum_reports_the_type_not_the_values() {
    let old = json!([{"name": "a", "inputSchema": {"properties": {"v": {"type": "string", "enum": ["x"]}}}}]);
    let new = json!([{"name": "a", "inputSchema": {"properties": {"v": {"type": "number"}}}}]);
    let changes: Vec<String> =
        classify(&old, &new).unwrap().iter().map(ToString::to_string).collect();
    assert_eq!(changes, ["breaking: `a`: property `v` type string -> number"]);
}

fn enum_catalog(values: &[&str]) -> Value {
    json!([{"name": "agent_launch", "inputSchema": {"type": "object", "properties": {
        "agent": {"type": "string", "enum": values}}, "required": ["agent"], "additionalProperties": false}}])
}

fn enum_changes(old: &[&str], new: &[&str]) -> Vec<String> {
    classify(&enum_catalog(old), &enum_catalog(new))
        .unwrap()
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn enum_value_removed_is_breaking() {
    assert_eq!(
        enum_changes(&["claude", "codex"], &["claude"]),
        ["breaking: `agent_launch`: property `agent` enum value `codex` removed"]
    );
}

#[test]
fn enum_value_added_is_compatible() {
    // The intermediate reference version: `opencode` joins the `agent_launch` enum.
    assert_eq!(
        enum_changes(
            &["claude", "openclaude", "custom"],
            &["claude", "openclaude", "opencode", "custom"]
        ),
        ["compatible: `agent_launch`: property `agent` enum value `opencode` added"]
    );
}

#[test]
fn enum_values_reordered_is_compatible() {
    assert_eq!(
        enum_changes(&["claude", "codex"], &["codex", "claude"]),
        ["compatible: `agent_launch`: property `agent` enum values reordered"]
    );
}

#[test]
fn enum_restriction_added_is_breaking_and_removed_is_compatible() {
    let restricted = check(|catalog| property(catalog, 0, "text")["enum"] = json!(["a"]));
    assert_eq!(restricted, ["breaking: `alpha`: property `text` is now restricted to an enum"]);
    let old = enum_catalog(&["claude"]);
    let mut new = old.clone();
    new[0]["inputSchema"]["properties"]["agent"].as_object_mut().unwrap().shift_remove("enum");
    let changes: Vec<String> =
        classify(&old, &new).unwrap().iter().map(ToString::to_string).collect();
    assert_eq!(
        changes,
        ["compatible: `agent_launch`: property `agent` is no longer restricted to an enum"]
    );
}

#[test]
fn property_description_changed_is_compatible() {
    let changes =
        check(|catalog| property(catalog, 0, "text")["description"] = json!("Another value."));
    assert_eq!(changes, ["compatible: `alpha`: property `text` description changed"]);
}

#[test]
fn properties_reordered_is_compatible() {
    let changes = check(|catalog| {
        let properties = catalog[0]["inputSchema"]["properties"].as_object_mut().unwrap();
        let node_id = properties.shift_remove("nodeId").unwrap();
        properties.insert("nodeId".to_owned(), node_id);
    });
    assert_eq!(changes, ["compatible: `alpha`: properties reordered"]);
}

#[test]
fn additional_properties_forbidden_is_breaking_and_allowed_is_compatible() {
    let schema = |additional: Option<Value>| {
        let mut schema = json!({"type": "object", "properties": {}, "required": []});
        if let Some(additional) = additional {
            schema["additionalProperties"] = additional;
        }
        json!([{"name": "a", "inputSchema": schema}])
    };
    let changes = |old: Option<Value>, new: Option<Value>| -> Vec<String> {
        classify(&schema(old), &schema(new)).unwrap().iter().map(ToString::to_string).collect()
    };
    let forbidden = ["breaking: `a`: additionalProperties changed from allowed to forbidden"];
    let allowed = ["compatible: `a`: additionalProperties changed from forbidden to allowed"];
    assert_eq!(changes(None, Some(json!(false))), forbidden);
    assert_eq!(changes(Some(json!(true)), Some(json!(false))), forbidden);
    assert_eq!(changes(Some(json!({"type": "string"})), Some(json!(false))), forbidden);
    assert_eq!(changes(Some(json!(false)), None), allowed);
    assert_eq!(changes(Some(json!(false)), Some(json!(true))), allowed);
    assert_eq!(
        changes(None, Some(json!(true))),
        ["breaking: `a`: unclassified change at `inputSchema.additionalProperties`"]
    );
}

#[test]
fn unknown_differences_are_unclassified_and_breaking() {
    let changes = check(|catalog| {
        catalog[0]["title"] = json!("Alpha");
        catalog[0]["inputSchema"]["minProperties"] = json!(1);
        property(catalog, 0, "text")["maxLength"] = json!(10);
        catalog[1]["inputSchema"]["type"] = json!("array");
        catalog[1]["annotations"] = json!(null);
    });
    assert_eq!(
        changes,
        [
            "breaking: `alpha`: unclassified change at `inputSchema.properties.text.maxLength`",
            "breaking: `alpha`: unclassified change at `inputSchema.minProperties`",
            "breaking: `alpha`: unclassified change at `title`",
            "breaking: `beta`: unclassified change at `annotations`",
            "breaking: `beta`: unclassified change at `inputSchema.type`",
        ]
    );
}

#[test]
fn malformed_properties_or_required_are_unclassified() {
    let changes = check(|catalog| catalog[1]["inputSchema"]["properties"] = json!(["x"]));
    assert_eq!(changes, ["breaking: `beta`: unclassified change at `inputSchema`"]);
    let changes = check(|catalog| catalog[0]["inputSchema"]["required"] = json!("nodeId"));
    assert_eq!(
        changes,
        [
            "breaking: `alpha`: unclassified change at `inputSchema`",
            "compatible: `alpha`: property `nodeId` is no longer required",
        ]
    );
}

#[test]
fn every_change_carries_the_class_of_its_kind() {
    let old = base();
    let mut new =
        json!([op("alpha", &["nodeId", "title"], &["nodeId", "title"]), op("gamma", &[], &[])]);
    new[0]["description"] = json!("Changed.");
    let changes = classify(&old, &new).unwrap();
    assert!(changes.len() >= 4);
    for change in &changes {
        assert_eq!(change.class, change.kind.class());
    }
    assert!(changes.iter().any(|change| change.class == Class::Compatible));
    assert!(changes.iter().any(|change| change.class == Class::Breaking));
}

#[test]
fn malformed_catalogs_are_errors() {
    let error = |old: Value, new: Value| format!("{:#}", classify(&old, &new).unwrap_err());
    assert_eq!(error(json!({}), base()), "old catalog: the catalog is not a JSON array");
    assert_eq!(error(base(), json!([1])), "new catalog: catalog entry 0 is not an object");
    assert_eq!(
        error(base(), json!([{"description": "x"}])),
        "new catalog: catalog entry 0 has no string `name`"
    );
    assert_eq!(
        error(base(), json!([{"name": "a"}, {"name": "a"}])),
        "new catalog: operation `a` appears twice"
    );
    assert_eq!(
        error(json!([{"name": "a", "inputSchema": []}]), base()),
        "old catalog: the inputSchema of `a` is not an object"
    );
}

/// The current table extends the reference v1 compatibly: v1 is the current catalog without the
/// four messaging operations, the three 1.3.0 and two 1.5.0 terminal operations,
/// `terminal_read`'s `since`, the `agents` guide topic and the `opencode` preset.
#[test]
fn the_current_catalog_is_a_compatible_extension_of_v1() {
    let mut v1 = catalog_json();
    let entries = v1.as_array_mut().unwrap();
    entries.retain(|entry| {
        ![
            "agent_cards",
            "agent_send",
            "agent_task",
            "agent_reply",
            "terminal_run",
            "terminal_list",
            "terminal_search",
            "terminal_wait",
            "terminal_kill",
        ]
        .contains(&entry["name"].as_str().unwrap())
    });
    assert_eq!(entries.len(), 28);
    for entry in entries.iter_mut().filter(|entry| entry["name"] == "terminal_read") {
        entry["inputSchema"]["properties"].as_object_mut().unwrap().shift_remove("since");
    }
    for entry in entries.iter_mut() {
        for property in entry["inputSchema"]["properties"].as_object_mut().unwrap().values_mut() {
            if let Some(Value::Array(values)) = property.get_mut("enum") {
                values.retain(|value| value != "agents" && value != "opencode");
            }
        }
    }
    let changes = classify(&v1, &catalog_json()).unwrap();
    let lines: Vec<String> = changes.iter().map(ToString::to_string).collect();
    assert_eq!(
        lines,
        [
            "compatible: `guide_read`: property `topic` enum value `agents` added",
            "compatible: `terminal_read`: optional property `since` added",
            "compatible: `agent_launch`: property `agent` enum value `opencode` added",
            "compatible: operation `terminal_run` added",
            "compatible: operation `terminal_list` added",
            "compatible: operation `terminal_search` added",
            "compatible: operation `terminal_wait` added",
            "compatible: operation `terminal_kill` added",
            "compatible: operation `agent_cards` added",
            "compatible: operation `agent_send` added",
            "compatible: operation `agent_task` added",
            "compatible: operation `agent_reply` added",
        ]
    );
}

// Versions and the verdict.

fn version(text: &str) -> Version {
    Version::parse(text).unwrap()
}

#[test]
fn versions_parse_as_semver() {
    assert_eq!(version("1.2.0"), Version { major: 1, minor: 2, patch: 0 });
    assert_eq!(version("2.0.0-rc.1+build.5"), Version { major: 2, minor: 0, patch: 0 });
    for bad in ["1.2", "1.2.x", "", "v1.2.0", "1.2.0.0"] {
        assert!(Version::parse(bad).is_err(), "{bad}");
    }
    assert_eq!(version("1.4.2").next_major().to_string(), "2.0.0");
    assert_eq!(version("0.4.1").next_major().to_string(), "0.5.0");
}

#[test]
fn major_bump_follows_semver_with_minor_as_major_below_one() {
    let cases = [
        ("1.2.0", "2.0.0", true),
        ("1.2.0", "3.1.4", true),
        ("1.2.0", "1.3.0", false),
        ("1.2.0", "1.2.1", false),
        ("1.2.0", "1.2.0", false),
        ("2.0.0", "1.9.0", false),
        ("0.3.1", "0.4.0", true),
        ("0.3.1", "1.0.0", true),
        ("0.3.1", "0.3.2", false),
    ];
    for (old, new, expected) in cases {
        assert_eq!(is_major_bump(version(old), version(new)), expected, "{old} -> {new}");
    }
}

fn report(old_catalog: Value, old_version: &str, new_catalog: &Value, new_version: &str) -> Report {
    let baseline = Baseline { catalog: old_catalog, version: old_version.to_owned() };
    Report::new(&baseline, new_catalog, new_version).unwrap()
}

#[test]
fn breaking_change_without_a_major_bump_fails() {
    let new = json!([op("alpha", &["nodeId", "text"], &["nodeId"])]);
    let report = report(base(), "1.2.0", &new, "1.3.0");
    assert!(!report.passes());
    assert_eq!(report.changes_text(), "breaking: operation `beta` removed\n");
    assert_eq!(
        report.summary_text(),
        "protocol version 1.2.0 -> 1.3.0: 1 breaking, 0 compatible change(s)\n\
         error: breaking changes need a major bump of PROTOCOL_VERSION (to 2.0.0 or later)\n\n\
         hint: bump PROTOCOL_VERSION in protocol/src/lib.rs, note the change in docs/protocol-changelog.md and run `cargo xtask codegen`\n"
    );
}

#[test]
fn breaking_change_with_a_major_bump_passes() {
    let new = json!([op("alpha", &["nodeId", "text"], &["nodeId"])]);
    assert!(report(base(), "1.2.0", &new, "2.0.0").passes());
    assert!(report(base(), "0.2.0", &new, "0.3.0").passes());
    assert!(!report(base(), "0.2.0", &new, "0.2.1").passes());
}

#[test]
fn compatible_changes_pass_without_a_bump_and_get_a_note() {
    let mut new = base();
    new.as_array_mut().unwrap().push(op("gamma", &[], &[]));
    let report = report(base(), "1.2.0", &new, "1.2.0");
    assert!(report.passes());
    assert_eq!(
        report.summary_text(),
        "protocol version 1.2.0 -> 1.2.0: 0 breaking, 1 compatible change(s)\n\
         note: PROTOCOL_VERSION was not bumped; compatible changes usually take a minor bump (to 1.3.0)\n"
    );
    let unchanged = Report { changes: Vec::new(), ..report };
    assert_eq!(
        unchanged.summary_text(),
        "protocol version 1.2.0 -> 1.2.0: 0 breaking, 0 compatible change(s)\n"
    );
}

#[test]
fn bad_versions_are_errors() {
    let baseline = Baseline { catalog: base(), version: "one".to_owned() };
    let error = Report::new(&baseline, &base(), "1.0.0").unwrap_err();
    assert_eq!(
        format!("{error:#}"),
        "baseline PROTOCOL_VERSION: version \"one\" is not major.minor.patch"
    );
}

// The git plumbing.

#[test]
fn version_is_read_from_the_const_line_of_lib_rs() {
    let lib_rs = std::fs::read_to_string(crate::project_root().join(super::LIB_RS_PATH)).unwrap();
    assert_eq!(version_from_lib_rs(&lib_rs).as_deref(), Some(PROTOCOL_VERSION));
    assert_eq!(
        version_from_lib_rs("//! x\n    pub const PROTOCOL_VERSION: &str = \"0.9.1\";  \n")
            .as_deref(),
        Some("0.9.1")
    );
    assert_eq!(version_from_lib_rs("pub const OTHER: &str = \"1.0.0\";\n"), None);
    assert_eq!(
        version_from_lib_rs("pub const PROTOCOL_VERSION: &str = \"1.0.0\" // no semicolon\n"),
        None
    );
}

fn git(dir: &Path, args: &[&str]) {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=xtask test", "-c", "user.email=xtask@example.invalid"])
        .args(["-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
}

fn commit(dir: &Path, catalog: &Value, version: &str, message: &str) {
    std::fs::create_dir_all(dir.join("docs/reference")).unwrap();
    std::fs::create_dir_all(dir.join("protocol/src")).unwrap();
    let catalog_text = format!("{}\n", serde_json::to_string_pretty(catalog).unwrap());
    std::fs::write(dir.join(super::CATALOG_PATH), catalog_text).unwrap();
    let lib_rs = format!(
        "//! The protocol.\n\n/// The version.\npub const PROTOCOL_VERSION: &str = \"{version}\";\n"
    );
    std::fs::write(dir.join(super::LIB_RS_PATH), lib_rs).unwrap();
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", message]);
}

#[test]
fn baseline_is_read_from_a_git_revision() {
    let repo = tempfile::tempdir().unwrap();
    git(repo.path(), &["init", "-q"]);
    commit(repo.path(), &base(), "1.0.0", "first");
    let mut second = base();
    second.as_array_mut().unwrap().push(op("gamma", &[], &[]));
    commit(repo.path(), &second, "1.1.0", "second");
    git(repo.path(), &["tag", "v1.1.0"]);
    // The working tree moves on: the baseline comes from the commits, not from the files.
    std::fs::write(repo.path().join(super::CATALOG_PATH), "not json").unwrap();

    let first = baseline_at_ref(repo.path(), "HEAD~1").unwrap();
    assert_eq!(first, Baseline { catalog: base(), version: "1.0.0".to_owned() });
    let tagged = baseline_at_ref(repo.path(), "v1.1.0").unwrap();
    assert_eq!(tagged.version, "1.1.0");

    // Against the first commit, the tagged catalog adds one operation and drops nothing.
    let added = Report::new(&first, &tagged.catalog, &tagged.version).unwrap();
    assert!(added.passes());
    assert_eq!(added.changes_text(), "compatible: operation `gamma` added\n");
    // The other way round, it removes one, which 1.1.0 -> 1.1.0 does not allow.
    let removed = Report::new(&tagged, &first.catalog, "1.1.0").unwrap();
    assert!(!removed.passes());
    assert_eq!(removed.changes_text(), "breaking: operation `gamma` removed\n");
}

#[test]
fn missing_revisions_and_files_are_errors() {
    let repo = tempfile::tempdir().unwrap();
    git(repo.path(), &["init", "-q"]);
    std::fs::write(repo.path().join("README.md"), "nothing yet\n").unwrap();
    git(repo.path(), &["add", "."]);
    git(repo.path(), &["commit", "-q", "-m", "no catalog"]);

    let error = format!("{:#}", baseline_at_ref(repo.path(), "HEAD").unwrap_err());
    assert!(error.starts_with("git show HEAD:docs/reference/catalog.json failed: "), "{error}");
    let error = format!("{:#}", baseline_at_ref(repo.path(), "no-such-branch").unwrap_err());
    assert!(
        error.starts_with("git show no-such-branch:docs/reference/catalog.json failed: "),
        "{error}"
    );
    let error = format!("{:#}", baseline_at_ref(repo.path(), "--output=x").unwrap_err());
    assert_eq!(error, "\"--output=x\" is not a git revision");

    commit(repo.path(), &base(), "1.0.0", "catalog");
    std::fs::write(repo.path().join(super::LIB_RS_PATH), "//! No version here.\n").unwrap();
    git(repo.path(), &["commit", "-q", "-am", "lose the version"]);
    let error = format!("{:#}", baseline_at_ref(repo.path(), "HEAD").unwrap_err());
    assert_eq!(error, "no PROTOCOL_VERSION in HEAD:protocol/src/lib.rs");
}
