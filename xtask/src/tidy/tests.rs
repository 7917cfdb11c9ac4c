//! The tidy checks, run on the repository, and tests that each check catches what it should.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use serde_json::{Value, json};

use super::{
    CRATE_RULES, CrateRule, NEVER_UNDER_XTASK, cargo_metadata, crate_table_violations,
    dependency_closure, dependency_violations, files_with_extensions, forbidden_attributes,
    heading_numbers, missing_crate_doc_parts, missing_module_doc, spec_citation_violations,
    spec_citations, trailing_whitespace, unpublished_packages, unversioned_path_dependencies,
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
fn the_crate_table_of_architecture_md_is_crate_rules() {
    let text = fs::read_to_string(project_root().join("ARCHITECTURE.md")).unwrap();
    let violations = crate_table_violations(&text, CRATE_RULES);
    assert!(violations.is_empty(), "\n{}\n", violations.join("\n"));
}

#[test]
fn every_crate_doc_says_what_it_owns_must_never_do_and_where_to_start() {
    let root = project_root();
    let metadata = cargo_metadata(&root).unwrap();
    let mut violations = Vec::new();
    let mut docs = 0;
    for package in metadata["packages"].as_array().unwrap() {
        let manifest = Path::new(package["manifest_path"].as_str().unwrap());
        let lib = manifest.parent().unwrap().join("src/lib.rs");
        if let Ok(text) = fs::read_to_string(&lib) {
            docs += 1;
            violations.extend(missing_crate_doc_parts(lib.strip_prefix(&root).unwrap(), &text));
        }
    }
    assert_eq!(docs, CRATE_RULES.len(), "a crate without a lib.rs");
    assert!(violations.is_empty(), "\n{}\n", violations.join("\n"));
}

#[test]
fn a_crate_doc_missing_a_part_is_found() {
    let path = Path::new("x/src/lib.rs");
    let whole = "//! What it is.\n//! This crate owns the thing.\n//!\n//! It must\n//! never lie.\n//! Start\n//! reading at [`f`].\nfn f() {}\n";
    assert!(missing_crate_doc_parts(path, whole).is_empty());
    assert_eq!(
        missing_crate_doc_parts(path, "//! This crate owns x.\n// Start reading at f.\n"),
        [
            "x/src/lib.rs: the crate doc does not say what it must never do (no \"must never\")",
            "x/src/lib.rs: the crate doc does not say where to start reading (no \"start reading\")",
        ]
    );
}

#[test]
fn a_planted_difference_in_the_crate_table_fails_the_check() {
    let text = fs::read_to_string(project_root().join("ARCHITECTURE.md")).unwrap();
    // An edge CRATE_RULES has, dropped from a row; a note in parentheses is not an edge.
    let planted = text.replacen(
        "| `mcp` | `protocol`, `transport` |",
        "| `mcp` | `protocol` (not `transport`) |",
        1,
    );
    assert_ne!(planted, text, "the fixture's row is gone from ARCHITECTURE.md");
    assert_eq!(
        crate_table_violations(&planted, CRATE_RULES),
        ["ARCHITECTURE.md: crate table row `mcp` lacks termsprawl-transport (CRATE_RULES has it)"]
    );
    // An edge CRATE_RULES does not have, and a row removed.
    let planted = text.replacen(
        "| `protocol` | nothing in the workspace |",
        "| `protocol` | `transport` |",
        1,
    );
    assert_eq!(
        crate_table_violations(&planted, CRATE_RULES),
        [
            "ARCHITECTURE.md: crate table row `protocol` names termsprawl-transport, which CRATE_RULES does not"
        ]
    );
    let planted = text.replacen("  | `transport` | `protocol` |\n", "", 1);
    assert_eq!(
        crate_table_violations(&planted, CRATE_RULES),
        ["ARCHITECTURE.md: crate table has no row for termsprawl-transport"]
    );
}

#[test]
fn internal_path_dependencies_carry_a_version() {
    let metadata = cargo_metadata(&project_root()).unwrap();
    let mut violations = unversioned_path_dependencies(&metadata);
    let manifest = fs::read_to_string(project_root().join("Cargo.toml")).unwrap();
    violations
        .extend(unversioned_workspace_dependencies(&manifest, &unpublished_packages(&metadata)));
    assert!(violations.is_empty(), "\n{}\n", violations.join("\n"));
}

#[test]
fn every_crate_has_its_package_metadata_and_each_unpublished_one_is_named_with_why() {
    let root = project_root();
    let metadata = cargo_metadata(&root).unwrap();
    let architecture = fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let publishing = architecture
        .split("### Build configuration and publishing")
        .nth(1)
        .and_then(|rest| rest.split("\n### ").next())
        .expect("ARCHITECTURE.md has a publishing section");
    let unpublished = unpublished_packages(&metadata);
    let mut violations = Vec::new();
    for package in metadata["packages"].as_array().unwrap() {
        let name = package["name"].as_str().unwrap();
        if ["xtask", "harness"].contains(&name) {
            continue; // the automation, reached through `cargo xtask`: never a package
        }
        for field in ["description", "license", "repository", "readme", "documentation"] {
            if !package[field].is_string() {
                violations.push(format!("{name}: no {field}"));
            }
        }
        let manifest = Path::new(package["manifest_path"].as_str().unwrap());
        if let Some(readme) = package["readme"].as_str()
            && !manifest.parent().unwrap().join(readme).is_file()
        {
            violations.push(format!("{name}: readme {readme} does not exist"));
        }
        if unpublished.contains(&name) && !publishing.contains(&format!("`{name}`")) {
            violations.push(format!(
                "{name} is publish = false and ARCHITECTURE.md's publishing section does not name it"
            ));
        }
    }
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

/// The real metadata with `package`'s dependency list changed by `change`.
fn real_metadata_with(package: &str, change: impl FnOnce(&mut Vec<Value>)) -> Value {
    let mut metadata = cargo_metadata(&project_root()).unwrap();
    let packages = metadata["packages"].as_array_mut().unwrap();
    let entry = packages.iter_mut().find(|entry| entry["name"] == package).unwrap();
    change(entry["dependencies"].as_array_mut().unwrap());
    metadata
}

fn edge(dependency: &str, kind: Option<&str>) -> Value {
    json!({"name": dependency, "kind": kind, "req": "^0.1.0", "path": format!("/repo/{dependency}")})
}

#[test]
fn an_edge_that_appears_without_a_rule_change_fails() {
    // A frontend on another frontend, a server on a frontend, and a new test-only edge.
    let metadata = real_metadata_with("termsprawl-mcp", |dependencies| {
        dependencies.push(edge("termsprawl-acp", None));
        dependencies.push(edge("termsprawl-cli", Some("dev")));
    });
    assert_eq!(
        dependency_violations(&metadata, CRATE_RULES),
        [
            "termsprawl-mcp must not depend on termsprawl-acp (normal)",
            "termsprawl-mcp must not depend on termsprawl-cli (dev)",
        ]
    );
    let metadata = real_metadata_with("termsprawl-headless", |dependencies| {
        dependencies.push(edge("termsprawl-cli", Some("build")));
    });
    assert_eq!(
        dependency_violations(&metadata, CRATE_RULES),
        ["termsprawl-headless must not depend on termsprawl-cli (build)"]
    );
}

#[test]
fn an_edge_that_goes_away_without_a_rule_change_fails() {
    let metadata = real_metadata_with("termsprawl-external-term", |dependencies| {
        dependencies.retain(|dependency| dependency["name"] != "termsprawl-protocol");
    });
    assert_eq!(
        dependency_violations(&metadata, CRATE_RULES),
        [
            "termsprawl-external-term does not depend on termsprawl-protocol (normal), but its rule lists it: remove it from CRATE_RULES"
        ]
    );
}

#[test]
fn a_dev_edge_is_its_own_list_unless_the_normal_edge_exists() {
    let rules = [
        CrateRule {
            package: "termsprawl-a",
            workspace_deps: &["termsprawl-b"],
            dev_workspace_deps: &["termsprawl-c"],
            external_deps: None,
            anyhow: false,
        },
        CrateRule {
            package: "termsprawl-b",
            workspace_deps: &[],
            dev_workspace_deps: &[],
            external_deps: None,
            anyhow: false,
        },
        CrateRule {
            package: "termsprawl-c",
            workspace_deps: &[],
            dev_workspace_deps: &[],
            external_deps: None,
            anyhow: false,
        },
    ];
    let fine = metadata(&[
        package(
            "termsprawl-a",
            &[
                ("termsprawl-b", None, "^0.1.0"),
                ("termsprawl-b", Some("dev"), "^0.1.0"),
                ("termsprawl-c", Some("dev"), "^0.1.0"),
                ("termsprawl-a", Some("dev"), "*"),
            ],
        ),
        package("termsprawl-b", &[]),
        package("termsprawl-c", &[]),
    ]);
    assert_eq!(dependency_violations(&fine, &rules), Vec::<String>::new());
    // The test-only edge becomes a normal one: both lists disagree.
    let promoted = metadata(&[
        package(
            "termsprawl-a",
            &[("termsprawl-b", None, "^0.1.0"), ("termsprawl-c", None, "^0.1.0")],
        ),
        package("termsprawl-b", &[]),
        package("termsprawl-c", &[]),
    ]);
    assert_eq!(
        dependency_violations(&promoted, &rules),
        [
            "termsprawl-a must not depend on termsprawl-c (normal)",
            "termsprawl-a does not depend on termsprawl-c (dev), but its rule lists it: remove it from CRATE_RULES",
        ]
    );
}

#[test]
fn dependency_rules_find_externals_anyhow_unknown_packages_and_stale_rows() {
    let rules = [
        CrateRule {
            package: "termsprawl-protocol",
            workspace_deps: &[],
            dev_workspace_deps: &[],
            external_deps: Some(&["serde"]),
            anyhow: false,
        },
        CrateRule {
            package: "termsprawl-gone",
            workspace_deps: &[],
            dev_workspace_deps: &[],
            external_deps: None,
            anyhow: false,
        },
    ];
    let metadata = metadata(&[
        package(
            "termsprawl-protocol",
            &[
                ("serde", None, "^1.0"),
                ("tokio", None, "^1"),
                ("insta", Some("dev"), "^1"),
                ("anyhow", Some("dev"), "^1"),
            ],
        ),
        package("termsprawl-newcomer", &[]),
    ]);
    assert_eq!(
        dependency_violations(&metadata, &rules),
        [
            "termsprawl-protocol must not depend on tokio (normal)",
            "termsprawl-protocol must not depend on anyhow (dev): libraries use thiserror",
            "termsprawl-newcomer: no dependency rule; add a row to CRATE_RULES in xtask/src/tidy.rs",
            "termsprawl-gone: a dependency rule but no such package; remove its row from CRATE_RULES",
        ]
    );
}

#[test]
fn dependency_rules_are_data() {
    let rules = [CrateRule {
        package: "termsprawl-mcp",
        workspace_deps: &[],
        dev_workspace_deps: &[],
        external_deps: Some(&[]),
        anyhow: false,
    }];
    let metadata = metadata(&[
        package(
            "termsprawl-mcp",
            &[("termsprawl-protocol", None, "^0.1.0"), ("serde", Some("build"), "^1")],
        ),
        package("termsprawl-protocol", &[]),
    ]);
    assert_eq!(
        dependency_violations(&metadata, &rules),
        [
            "termsprawl-mcp must not depend on serde (build)",
            "termsprawl-mcp must not depend on termsprawl-protocol (normal)",
            "termsprawl-protocol: no dependency rule; add a row to CRATE_RULES in xtask/src/tidy.rs",
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
        unversioned_workspace_dependencies(manifest, &[]),
        ["Cargo.toml:6: workspace dependency with a path but no version: b = { path = \"b\" }"]
    );
    // An unpublished package is depended on without a version, on purpose.
    assert!(unversioned_workspace_dependencies(manifest, &["b"]).is_empty());
    let mut unpublished = metadata.clone();
    unpublished["packages"][0]["publish"] = serde_json::json!([]);
    assert_eq!(unpublished_packages(&unpublished), ["termsprawl-transport"]);
    assert_eq!(
        unversioned_path_dependencies(&unpublished),
        ["termsprawl-cli: path dependency termsprawl-mcp (build) has no version"]
    );
}

#[test]
fn conformance_may_not_depend_on_headless_or_a_frontend() {
    let metadata = real_metadata_with("termsprawl-conformance", |dependencies| {
        dependencies.push(edge("termsprawl-headless", Some("dev")));
        dependencies.push(edge("termsprawl-cli", None));
    });
    assert_eq!(
        dependency_violations(&metadata, CRATE_RULES),
        [
            "termsprawl-conformance must not depend on termsprawl-cli (normal)",
            "termsprawl-conformance must not depend on termsprawl-headless (dev)",
        ]
    );
}

#[test]
fn xtask_depends_on_no_server_or_frontend_even_through_another_crate() {
    let closure = dependency_closure("xtask", CRATE_RULES);
    for crate_name in NEVER_UNDER_XTASK {
        assert!(!closure.contains(crate_name), "xtask depends on {crate_name}: {closure:?}");
    }
    // The check sees through a crate in between: a planted edge to cli brings mcp and acp.
    let mut rules = CRATE_RULES.to_vec();
    let conformance = rules.iter_mut().find(|rule| rule.package == "termsprawl-conformance");
    conformance.unwrap().workspace_deps = &["termsprawl-protocol", "termsprawl-cli"];
    let closure = dependency_closure("xtask", &rules);
    assert!(
        closure.contains("termsprawl-mcp") && closure.contains("termsprawl-acp"),
        "{closure:?}"
    );
}

#[test]
fn the_test_fixtures_are_never_a_normal_dependency_of_a_shipped_crate() {
    let metadata = real_metadata_with("termsprawl-protocol", |dependencies| {
        dependencies.push(edge("termsprawl-test-support", None));
    });
    assert_eq!(
        dependency_violations(&metadata, CRATE_RULES),
        ["termsprawl-protocol must not depend on termsprawl-test-support (normal)"]
    );
}

// Citations of the spec.

#[test]
fn every_citation_of_the_spec_resolves() {
    let violations = spec_citations(&project_root()).unwrap();
    assert!(violations.is_empty(), "\n{}\n", violations.join("\n"));
}

/// A repository in a temp dir: `docs/spec/` with two files, and `files` (path, text) beside it.
fn spec_fixture(files: &[(&str, &str)]) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let spec = [
        (
            "docs/spec/protocol.md",
            "# P\n\n## 1. Types\n\n## 6. Server\n\n### 6.2 Order\n\n```\n## 9. In a fence\n```\n",
        ),
        ("docs/spec/acp.md", "# A\n\n## 2. Features\n\n### 2.10 Terminals\n"),
    ];
    for (path, text) in spec.iter().chain(files) {
        let full = root.path().join(path);
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        fs::write(full, text).unwrap();
    }
    root
}

#[test]
fn a_planted_dangling_citation_fails_the_check() {
    // The names are put together at run time so that this file itself cites nothing.
    let (p, a) = (format!("{}.md", "protocol"), format!("{}.md", "acp"));
    let outside = concat!("..", "/shared");
    let good = format!(
        "//! See `spec/{p}` §6.2, spec/{p} §1, §6 and {p} §6.2 (`docs/{a}`, `spec/{a}` §2.10).\n\
         //! A section names the contract: `{a}` §2.10.\n"
    );
    let guide = "# The guide\n\n## Agents\n";
    let root = spec_fixture(&[("ok/src/lib.rs", good.as_str()), ("docs/acp.md", guide)]);
    assert_eq!(spec_citations(root.path()).unwrap(), Vec::<String>::new());

    let missing = format!("{}.md", "missing");
    let dangling = format!(
        "x\n/// As spec/{p} §6.3 says, and spec/{p} §9 (fenced, not a heading).\n\
         # spec/{missing} and `spec/{p}` §1–§7\n"
    );
    let root = spec_fixture(&[
        ("ok/src/lib.rs", good.as_str()),
        ("bad/src/lib.rs", dangling.as_str()),
        ("bad/run.sh", &format!("# see {a}, and {a} §2.4\n")),
        ("docs/notes.md", &format!("{outside}/spec/{p}\n")),
        ("docs/acp.md", "# The guide\n\n## 1. Agents\n"),
    ]);
    assert_eq!(
        spec_citations(root.path()).unwrap(),
        [
            format!(
                "bad/run.sh:1: `{a}` alone may mean docs/{a} or docs/spec/{a}: write `spec/{a}` for the contract or `docs/{a}` for the guide"
            ),
            format!("bad/run.sh:1: spec/{a} §2.4: docs/spec/{a} has no heading numbered 2.4"),
            format!("bad/src/lib.rs:2: spec/{p} §6.3: docs/spec/{p} has no heading numbered 6.3"),
            format!("bad/src/lib.rs:2: spec/{p} §9: docs/spec/{p} has no heading numbered 9"),
            format!("bad/src/lib.rs:3: spec/{}.md is not a file of docs/spec/", "missing"),
            format!("bad/src/lib.rs:3: spec/{p} §7: docs/spec/{p} has no heading numbered 7"),
            format!(
                "docs/notes.md:1: `{outside}` is outside the repository; cite docs/spec/ instead"
            ),
            format!(
                "docs/notes.md:1: `{}` is outside the repository; cite docs/spec/ instead",
                concat!("shared", "/spec")
            ),
            format!(
                "docs/{a}: its heading numbered 1 would make `{a} §1` ambiguous (it means docs/spec/{a}): leave the guide's headings unnumbered"
            ),
        ]
    );
}

#[test]
fn headings_give_the_section_numbers_outside_fences() {
    let text = "# Title\n\n## 1. Types\n### 2.4 Identifiers and tokens\n#### 11.5 Numbers\n\
                ## 3 Bare\n## 4.Tight\nNot ## 5. a heading\n```sh\n## 6. fenced\n```\n\
                ````markdown\n```\n## 7. nested\n```\n````\n## 8. After\n";
    let numbers: Vec<String> = heading_numbers(text).into_iter().collect();
    assert_eq!(numbers, ["1", "11.5", "2.4", "3", "8"]);
}

#[test]
fn cited_sections_follow_lists_and_ranges() {
    let p = format!("{}.md", "protocol");
    let sections = BTreeMap::from([(
        p.clone(),
        ["1", "2", "2.3", "2.5", "6.1", "6.3", "7.1"].map(str::to_owned).into_iter().collect(),
    )]);
    let check = |text: &str| spec_citation_violations(Path::new("a.rs"), text, &sections);
    for text in [
        format!("`spec/{p}` §2, §7.1"),
        format!("spec/{p} §6.1–§6.3"),
        format!("spec/{p} §6.1–6.3."),
        format!("spec/{p} §2.3 to §2.5"),
        format!("spec/{p} §1 and §2, 32 operations"),
        format!("docs/spec/{p} §7.1."),
        format!("spec/{p}"),
        format!("other/{p} §9"),
        format!("spec/{}.mdx §9", "protocol"),
    ] {
        assert_eq!(check(&text), Vec::<String>::new(), "{text}");
    }
    assert_eq!(check(&format!("spec/{p} §1, §4")).len(), 1);
    assert_eq!(check(&format!("spec/{p} §6.1–6.2")).len(), 1);
    assert_eq!(check(&format!("{p} §8.1")).len(), 1);
}

#[test]
fn no_file_imports_a_module_its_module_rules_forbid() {
    check_files(&["rs"], |path, text| {
        super::module_import_violations(path, text, super::MODULE_RULES)
    });
}

#[test]
fn a_planted_forbidden_import_fails_the_module_rules() {
    use super::{MODULE_RULES, module_import_violations};
    let ops = Path::new("headless/src/ops/terminal.rs");
    let violations = |text: &str| module_import_violations(ops, text, MODULE_RULES);
    for planted in [
        "//! Op.\nuse crate::tmux::Tmux;\n",
        "//! Op.\nuse crate::streams;\n",
        "//! Op.\nuse crate::{engine::Engine, streams::Stream};\n",
        "//! Op.\nuse crate::{\n    engine::Engine,\n    tmux::{PaneState, Screen},\n};\n",
        "//! Op.\nfn f() { let _ = crate::tmux::WINDOW_CELLS; }\n",
    ] {
        let found = violations(planted);
        assert_eq!(found.len(), 1, "{planted:?}: {found:?}");
        assert!(
            found[0].starts_with("headless/src/ops/terminal.rs: imports `crate::"),
            "{found:?}"
        );
    }
    // Through the terminals' owner, and names that only start like a module, are fine.
    for fine in [
        "//! Op.\nuse crate::terminals::{Stream, PaneState};\n",
        "//! Op.\nuse crate::{engine::Engine, terminals::{Look, Stream}};\n",
        "//! Op.\nuse crate::tmux_like::X;\nuse crate::streamsx;\n",
        "//! Op.\nuse crate::{engine::{tmux, streams}};\n",
    ] {
        assert_eq!(violations(fine), Vec::<String>::new(), "{fine:?}");
    }
    // The rule holds under its folder only.
    let engine = Path::new("headless/src/engine.rs");
    assert!(module_import_violations(engine, "use crate::tmux::Tmux;", MODULE_RULES).is_empty());
}

#[test]
fn no_crate_has_an_import_circle_between_its_modules() {
    let root = project_root();
    let files: Vec<(std::path::PathBuf, String)> = files_with_extensions(&root, &["rs"])
        .unwrap()
        .into_iter()
        .map(|path| {
            let text = fs::read_to_string(root.join(&path)).unwrap();
            (path, text)
        })
        .collect();
    let circles = super::module_circles(&files);
    assert!(circles.is_empty(), "\n{}\n", circles.join("\n"));
}

#[test]
fn a_planted_import_circle_is_found() {
    use super::module_circles;
    let file = |path: &str, text: &str| (Path::new(path).to_path_buf(), text.to_owned());
    let below = [
        file("one/src/lib.rs", "//! Root.\nmod a;\nmod b;\nmod c;\nuse crate::a::A;\n"),
        file("one/src/a.rs", "//! A.\nuse crate::{b::{B, self}, c};\n"),
        file("one/src/b.rs", "//! B.\nuse crate::c::C;\n"),
        file("one/src/c.rs", "//! C.\n// crate::a in a comment\n/// [`crate::a`]\npub struct C;\n"),
        file("one/src/c/tests.rs", "//! Tests.\nuse crate::a::A;\n"),
        file("one/src/b/inner.rs", "//! Inner.\n#[cfg(test)]\nmod t { use crate::a; }\n"),
        file("two/src/a.rs", "//! A.\nmacro_rules! m { () => { $crate::b::B } }\n"),
        file("two/src/b.rs", "//! B.\nuse crate::a;\n"),
    ];
    assert_eq!(module_circles(&below), Vec::<String>::new());
    let mut planted = below.to_vec();
    planted.push(file("one/src/c/deep.rs", "//! Deep.\nfn f() { crate::a::g(); }\n"));
    assert_eq!(
        module_circles(&planted),
        ["one/src: import circle between modules: a -> b, c; b -> c; c -> a"]
    );
    planted.push(file("two/src/a.rs", "//! A.\nuse crate::{\n    b,\n};\n"));
    assert_eq!(module_circles(&planted).len(), 2, "{:?}", module_circles(&planted));
}
