//! The tidy checks, run on the repository, and tests that each check catches what it should.

use std::fs;
use std::path::Path;

use serde_json::{Value, json};

use super::{
    CRATE_RULES, CrateRule, cargo_metadata, dependency_violations, files_with_extensions,
    forbidden_attributes, missing_module_doc, trailing_whitespace, unversioned_path_dependencies,
    unversioned_workspace_dependencies,
};
use crate::project_root;

/// Runs `check` on every file of the repository with one of `extensions` and fails listing all
/// violations.
fn check_files(extensions: &[&str], check: impl Fn(&Path, &str) -> Vec<String>) {
    let root = project_root();
    let files = files_with_extensions(&root, extensions).unwrap();
    assert!(!files.is_empty(), "no {extensions:?} files found below {}", root.display());
    let violations: Vec<String> = files
        .iter()
        .flat_map(|path| check(path, &fs::read_to_string(root.join(path)).unwrap()))
        .collect();
    assert!(violations.is_empty(), "\n{}\n", violations.join("\n"));
}

#[test]
fn every_rust_file_starts_with_a_module_doc() {
    check_files(&["rs"], |path, text| missing_module_doc(path, text).into_iter().collect());
}

#[test]
fn no_test_expects_a_panic_or_is_skipped() {
    check_files(&["rs"], forbidden_attributes);
}

#[test]
fn no_trailing_whitespace() {
    check_files(&["rs", "md", "toml"], trailing_whitespace);
}

#[test]
fn dependency_rules_hold() {
    let metadata = cargo_metadata(&project_root()).unwrap();
    let violations = dependency_violations(&metadata, CRATE_RULES);
    assert!(violations.is_empty(), "\n{}\n", violations.join("\n"));
}

#[test]
fn internal_path_dependencies_carry_a_version() {
    let metadata = cargo_metadata(&project_root()).unwrap();
    let mut violations = unversioned_path_dependencies(&metadata);
    let manifest = fs::read_to_string(project_root().join("Cargo.toml")).unwrap();
    violations.extend(unversioned_workspace_dependencies(&manifest));
    assert!(violations.is_empty(), "\n{}\n", violations.join("\n"));
}

// The checks catch what they should.

#[test]
fn files_are_found_below_the_root_except_in_skipped_folders() {
    let root = tempfile::tempdir().unwrap();
    for path in [
        "a.rs",
        "src/b.rs",
        "src/c.md",
        "target/debug/d.rs",
        ".git/e.rs",
        ".cargo/config.toml",
        "f.txt",
    ] {
        let full = root.path().join(path);
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        fs::write(full, "").unwrap();
    }
    let found = files_with_extensions(root.path(), &["rs", "toml"]).unwrap();
    let found: Vec<&str> = found.iter().map(|path| path.to_str().unwrap()).collect();
    assert_eq!(found, [".cargo/config.toml", "a.rs", "src/b.rs"]);
}

#[test]
fn module_doc_check_wants_a_leading_inner_doc_comment() {
    let path = Path::new("src/x.rs");
    assert_eq!(missing_module_doc(path, "//! Does things.\nfn f() {}\n"), None);
    for bad in [
        "",
        "/// Outer doc.\nfn f() {}\n",
        "\n//! Late.\n",
        "// Plain comment.\n",
        "#![allow(x)]\n//! Doc.\n",
    ] {
        assert_eq!(
            missing_module_doc(path, bad).as_deref(),
            Some("src/x.rs: does not start with a `//!` comment"),
            "{bad:?}"
        );
    }
}

#[test]
fn forbidden_attribute_check_finds_both_attributes_with_their_lines() {
    let should_panic = concat!("#[should", "_panic(expected = \"boom\")]");
    let ignore = concat!("#[ig", "nore = \"slow\"]");
    let text = format!(
        "//! Tests.\n\n#[test]\n{should_panic}\nfn a() {{}}\n\n#[test]\n{ignore}\nfn b() {{}}\n"
    );
    assert_eq!(
        forbidden_attributes(Path::new("t.rs"), &text),
        [concat!("t.rs:4: `#[should", "_panic]`"), concat!("t.rs:8: `#[ig", "nore]`")]
    );
    assert_eq!(
        forbidden_attributes(Path::new("t.rs"), "//! Fine.\n#[test]\nfn c() {}\n"),
        Vec::<String>::new()
    );
}

#[test]
fn trailing_whitespace_check_finds_spaces_and_tabs() {
    let text = "clean\nspace \ntab\t\n\nlast  ";
    assert_eq!(
        trailing_whitespace(Path::new("a.md"), text),
        [
            "a.md:2: trailing whitespace",
            "a.md:3: trailing whitespace",
            "a.md:5: trailing whitespace"
        ]
    );
}

fn package(name: &str, dependencies: &[(&str, Option<&str>, &str)]) -> Value {
    let dependencies: Vec<Value> = dependencies
        .iter()
        .map(|(dependency, kind, req)| {
            let mut entry = json!({"name": dependency, "kind": kind, "req": req});
            if dependency.starts_with("termsprawl-") {
                entry["path"] = json!(format!("/repo/{dependency}"));
            }
            entry
        })
        .collect();
    json!({"name": name, "dependencies": dependencies})
}

fn metadata(packages: &[Value]) -> Value {
    json!({"packages": packages})
}

#[test]
fn dependency_rules_find_forbidden_edges_anyhow_and_unknown_packages() {
    let metadata = metadata(&[
        package(
            "termsprawl-protocol",
            &[("serde", None, "^1.0"), ("tokio", None, "^1"), ("insta", Some("dev"), "^1")],
        ),
        package(
            "termsprawl-transport",
            &[("termsprawl-protocol", None, "^0.1.0"), ("termsprawl-transport", Some("dev"), "*")],
        ),
        package(
            "termsprawl-mcp",
            &[
                ("termsprawl-protocol", None, "^0.1.0"),
                ("termsprawl-cli", Some("dev"), "^0.1.0"),
                ("anyhow", None, "^1"),
            ],
        ),
        package("termsprawl-cli", &[("termsprawl-mcp", None, "^0.1.0"), ("anyhow", None, "^1")]),
        package("termsprawl-external-term", &[("termsprawl-transport", None, "^0.1.0")]),
        package("termsprawl-newcomer", &[]),
        package("termsprawl-test-support", &[("termsprawl-transport", None, "^0.1.0")]),
        package(
            "termsprawl-acp",
            &[
                ("termsprawl-test-support", Some("dev"), "^0.1.0"),
                ("termsprawl-test-support", None, "^0.1.0"),
            ],
        ),
        package(
            "xtask",
            &[
                ("termsprawl-cli", None, "^0.1.0"),
                ("termsprawl-test-support", None, "^0.1.0"),
                ("anyhow", None, "^1"),
            ],
        ),
    ]);
    assert_eq!(
        dependency_violations(&metadata, CRATE_RULES),
        [
            "termsprawl-protocol must not depend on tokio (normal)",
            "termsprawl-mcp must not depend on termsprawl-cli (dev)",
            "termsprawl-mcp must not depend on anyhow (normal): libraries use thiserror",
            "termsprawl-external-term must not depend on termsprawl-transport (normal)",
            "termsprawl-newcomer: no dependency rule; add a row to CRATE_RULES in xtask/src/tidy.rs",
            "termsprawl-acp must not depend on termsprawl-test-support (normal)",
        ]
    );
}

#[test]
fn dependency_rules_are_data() {
    let rules = [CrateRule {
        package: "termsprawl-mcp",
        workspace_deps: Some(&[]),
        external_deps: Some(&[]),
        anyhow: false,
    }];
    let metadata = metadata(&[package(
        "termsprawl-mcp",
        &[("termsprawl-protocol", None, "^0.1.0"), ("serde", Some("build"), "^1")],
    )]);
    assert_eq!(
        dependency_violations(&metadata, &rules),
        [
            "termsprawl-mcp must not depend on termsprawl-protocol (normal)",
            "termsprawl-mcp must not depend on serde (build)"
        ]
    );
}

#[test]
fn path_dependencies_without_a_version_are_found() {
    let metadata = metadata(&[
        package(
            "termsprawl-transport",
            &[("termsprawl-protocol", None, "*"), ("termsprawl-transport", Some("dev"), "*")],
        ),
        package(
            "termsprawl-cli",
            &[("termsprawl-protocol", None, "^0.1.0"), ("termsprawl-mcp", Some("build"), "*")],
        ),
    ]);
    assert_eq!(
        unversioned_path_dependencies(&metadata),
        [
            "termsprawl-transport: path dependency termsprawl-protocol (normal) has no version",
            "termsprawl-cli: path dependency termsprawl-mcp (build) has no version",
        ]
    );
    let manifest = "[workspace]\nmembers = []\n\n[workspace.dependencies]\na = { path = \"a\", version = \"0.1.0\" }\nb = { path = \"b\" }\nserde = \"1\"\n\n[patch.crates-io]\nc = { path = \"c\" }\n";
    assert_eq!(
        unversioned_workspace_dependencies(manifest),
        ["Cargo.toml:6: workspace dependency with a path but no version: b = { path = \"b\" }"]
    );
}
