//! Tidy checks over the source tree and `cargo metadata`, run as ordinary `#[test]`s (in
//! `tidy/tests.rs`) so that `cargo test --workspace` enforces them.
//!
//! Each check is a function returning its violations as readable lines, so that a test can show
//! all of them at once and other tests can feed the checks synthetic input. The dependency rules
//! between crates are data: [`CRATE_RULES`].

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, bail};
use serde_json::Value;

/// Folder names that are never searched: version control, build output, tool environments.
pub const SKIPPED_DIRS: &[&str] =
    &[".git", "target", ".venv", ".venv-acp", ".venv-fast-agent", "node_modules", "__pycache__"];

/// What one workspace package depends on inside the workspace, exactly, and what it may use
/// outside it.
#[derive(Debug, Clone, Copy)]
pub struct CrateRule {
    /// The package name.
    pub package: &'static str,
    /// The workspace packages it depends on as normal or build dependencies: exactly these, so an
    /// edge that appears or goes away without a change here fails.
    pub workspace_deps: &'static [&'static str],
    /// The workspace packages it depends on as dev-dependencies only for its tests, exactly (its
    /// own package, for features in tests, is never listed).
    pub dev_workspace_deps: &'static [&'static str],
    /// The external packages it may use as normal or build dependencies; `None` means any.
    pub external_deps: Option<&'static [&'static str]>,
    /// Whether it may depend on `anyhow` (binaries and xtask only).
    pub anyhow: bool,
}

const PROTOCOL: &str = "termsprawl-protocol";
const TRANSPORT: &str = "termsprawl-transport";
const CLI: &str = "termsprawl-cli";
const MCP: &str = "termsprawl-mcp";
const EXTERNAL_TERM: &str = "termsprawl-external-term";
const ACP: &str = "termsprawl-acp";
const HEADLESS: &str = "termsprawl-headless";
const CONFORMANCE: &str = "termsprawl-conformance";
const XTASK: &str = "xtask";
const TEST_SUPPORT: &str = "termsprawl-test-support";

/// The crate graph of `STYLE.md` §1 and ARCHITECTURE.md, one row per workspace package, edges
/// listed exactly. A package without a row, a row without a package, an edge not listed and a
/// listed edge that does not exist all fail the check: change the row with the edge.
pub const CRATE_RULES: &[CrateRule] = &[
    // No I/O, no HTTP: the wire model and the contract's small rules, and nothing else.
    CrateRule {
        package: PROTOCOL,
        workspace_deps: &[],
        dev_workspace_deps: &[],
        external_deps: Some(&["serde", "serde_json", "schemars"]),
        anyhow: false,
    },
    // The only crate that speaks HTTP.
    CrateRule {
        package: TRANSPORT,
        workspace_deps: &[PROTOCOL],
        dev_workspace_deps: &[TEST_SUPPORT],
        external_deps: None,
        anyhow: false,
    },
    // The frontends: never each other, except that the cli binary wires in mcp and acp for its
    // modes; their tests run against transport's fake app.
    CrateRule {
        package: CLI,
        workspace_deps: &[PROTOCOL, TRANSPORT, MCP, ACP],
        dev_workspace_deps: &[TEST_SUPPORT],
        external_deps: None,
        anyhow: true,
    },
    CrateRule {
        package: MCP,
        workspace_deps: &[PROTOCOL, TRANSPORT],
        dev_workspace_deps: &[TEST_SUPPORT],
        external_deps: None,
        anyhow: false,
    },
    // ACP speaks to its agent over stdio; its tools reach the tool server through the mcp bridge
    // it injects, and its canvas terminals (`--terminals canvas`) through transport's client.
    CrateRule {
        package: ACP,
        workspace_deps: &[PROTOCOL, TRANSPORT],
        dev_workspace_deps: &[TEST_SUPPORT],
        external_deps: None,
        anyhow: false,
    },
    // protocol for the node-id rule only.
    CrateRule {
        package: EXTERNAL_TERM,
        workspace_deps: &[PROTOCOL],
        dev_workspace_deps: &[TEST_SUPPORT],
        external_deps: None,
        anyhow: false,
    },
    // The reference tool server: a binary, never on a frontend.
    CrateRule {
        package: HEADLESS,
        workspace_deps: &[PROTOCOL, TRANSPORT, EXTERNAL_TERM],
        dev_workspace_deps: &[TEST_SUPPORT],
        external_deps: None,
        anyhow: true,
    },
    // Automation: codegen reads protocol and cli, bench and soak run transport's fake app, the cli
    // and the headless server, dist generates conformance's man page and completions.
    CrateRule {
        package: XTASK,
        workspace_deps: &[
            PROTOCOL,
            TRANSPORT,
            CLI,
            EXTERNAL_TERM,
            HEADLESS,
            CONFORMANCE,
            TEST_SUPPORT,
        ],
        dev_workspace_deps: &[],
        external_deps: None,
        anyhow: true,
    },
    // The outside check of a tool server: a binary that judges servers, so never a frontend
    // and never headless (its tests run headless as a program). Its raw HTTP probes go only to the
    // validated loopback endpoint.
    CrateRule {
        package: CONFORMANCE,
        workspace_deps: &[PROTOCOL, TRANSPORT],
        dev_workspace_deps: &[TEST_SUPPORT],
        external_deps: None,
        anyhow: true,
    },
    // The shared test fixtures (publish = false): the fake app on the transport's server half,
    // the MCP driver, `serve`, Xvfb and program lookup, the peer locator. Only tests and xtask
    // use it.
    CrateRule {
        package: TEST_SUPPORT,
        workspace_deps: &[PROTOCOL, TRANSPORT, EXTERNAL_TERM],
        dev_workspace_deps: &[],
        external_deps: None,
        anyhow: false,
    },
];

/// Every file below `root` whose extension is one of `extensions`, relative to `root` and
/// sorted, skipping the [`SKIPPED_DIRS`].
pub fn files_with_extensions(root: &Path, extensions: &[&str]) -> anyhow::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(relative) = pending.pop() {
        let dir = root.join(&relative);
        for entry in fs::read_dir(&dir).with_context(|| format!("cannot list {}", dir.display()))? {
            let entry = entry.with_context(|| format!("cannot list {}", dir.display()))?;
            let name = entry.file_name();
            let child = relative.join(&name);
            let file_type = entry.file_type()?;
            if file_type.is_dir() {
                if !SKIPPED_DIRS.iter().any(|skipped| name == *skipped) {
                    pending.push(child);
                }
            } else if file_type.is_file()
                && child
                    .extension()
                    .is_some_and(|extension| extensions.iter().any(|wanted| extension == *wanted))
            {
                found.push(child);
            }
        }
    }
    found.sort();
    Ok(found)
}

/// A violation when a Rust file does not start with a `//!` comment.
pub fn missing_module_doc(path: &Path, text: &str) -> Option<String> {
    (!text.starts_with("//!"))
        .then(|| format!("{}: does not start with a `//!` comment", path.display()))
}

/// The attributes that no test may carry: assert the `Err` instead of expecting a panic, and
/// fix or delete a test instead of skipping it. Spelled in pieces so this file does not match.
const FORBIDDEN_ATTRIBUTES: &[&str] = &[concat!("#[should", "_panic"), concat!("#[ig", "nore")];

/// One violation per line of a Rust file that carries a forbidden test attribute.
pub fn forbidden_attributes(path: &Path, text: &str) -> Vec<String> {
    let mut violations = Vec::new();
    for (index, line) in text.lines().enumerate() {
        for attribute in FORBIDDEN_ATTRIBUTES {
            if line.contains(attribute) {
                violations.push(format!("{}:{}: `{attribute}]`", path.display(), index + 1));
            }
        }
    }
    violations
}

/// One violation per line that ends with a space or a tab.
pub fn trailing_whitespace(path: &Path, text: &str) -> Vec<String> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| line.ends_with([' ', '\t']))
        .map(|(index, _)| format!("{}:{}: trailing whitespace", path.display(), index + 1))
        .collect()
}

/// `cargo metadata --format-version 1 --no-deps` of the workspace at `root`, run with the cargo
/// named by the `CARGO` environment variable when set.
pub fn cargo_metadata(root: &Path) -> anyhow::Result<Value> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline", "--manifest-path"])
        .arg(root.join("Cargo.toml"))
        .output()
        .context("cannot run cargo metadata")?;
    if !output.status.success() {
        bail!("cargo metadata failed: {}", String::from_utf8_lossy(&output.stderr).trim());
    }
    serde_json::from_slice(&output.stdout).context("cargo metadata printed no JSON")
}

/// Violations of `rules` by the packages of `metadata` (the output of [`cargo_metadata`]): a
/// package without a rule and a rule without a package; a workspace edge that the rule does not
/// list, and a listed one that does not exist, separately for normal and build dependencies and
/// for dev-dependencies (a package's dependency on itself, for features in tests, is fine; a
/// dev-dependency on a package it also depends on normally is that normal edge); an external
/// normal or build dependency outside the rule's list; and `anyhow` where the rule forbids it.
pub fn dependency_violations(metadata: &Value, rules: &[CrateRule]) -> Vec<String> {
    let members = member_names(metadata);
    let mut violations = Vec::new();
    for package in packages(metadata) {
        let name = package["name"].as_str().unwrap_or_default();
        let Some(rule) = rules.iter().find(|rule| rule.package == name) else {
            violations.push(format!(
                "{name}: no dependency rule; add a row to CRATE_RULES in xtask/src/tidy.rs"
            ));
            continue;
        };
        let mut normal = Vec::new();
        let mut dev = Vec::new();
        for dependency in dependencies(package) {
            let dependency_name = dependency["name"].as_str().unwrap_or_default();
            let kind = dependency_kind(dependency);
            if members.contains(&dependency_name) {
                let edges = if kind == "dev" { &mut dev } else { &mut normal };
                if dependency_name != name && !edges.contains(&(dependency_name, kind)) {
                    edges.push((dependency_name, kind));
                }
                continue;
            }
            if dependency_name == "anyhow" && !rule.anyhow {
                violations.push(format!(
                    "{name} must not depend on anyhow ({kind}): libraries use thiserror"
                ));
                continue;
            }
            if kind != "dev"
                && rule.external_deps.is_some_and(|allowed| !allowed.contains(&dependency_name))
            {
                violations.push(format!("{name} must not depend on {dependency_name} ({kind})"));
            }
        }
        dev.retain(|(dependency, _)| normal.iter().all(|(other, _)| other != dependency));
        edge_violations(name, "normal", &normal, rule.workspace_deps, &mut violations);
        edge_violations(name, "dev", &dev, rule.dev_workspace_deps, &mut violations);
    }
    for rule in rules {
        if !members.contains(&rule.package) {
            violations.push(format!(
                "{}: a dependency rule but no such package; remove its row from CRATE_RULES",
                rule.package
            ));
        }
    }
    violations
}

/// The edges that `actual` (dependency and kind) and `listed` do not share, in the order found;
/// `kind` names the list.
fn edge_violations(
    name: &str,
    kind: &str,
    actual: &[(&str, &str)],
    listed: &[&str],
    violations: &mut Vec<String>,
) {
    for (dependency, actual_kind) in actual {
        if !listed.contains(dependency) {
            violations.push(format!("{name} must not depend on {dependency} ({actual_kind})"));
        }
    }
    for dependency in listed {
        if actual.iter().all(|(other, _)| other != dependency) {
            violations.push(format!(
                "{name} does not depend on {dependency} ({kind}), but its rule lists it: \
                 remove it from CRATE_RULES"
            ));
        }
    }
}

/// Violations by normal and build dependencies on workspace packages that carry no version
/// requirement (`cargo publish` needs one besides the path), in the packages that may be
/// published (`publish = false` ones never are).
pub fn unversioned_path_dependencies(metadata: &Value) -> Vec<String> {
    let members = member_names(metadata);
    let mut violations = Vec::new();
    for package in packages(metadata) {
        if is_unpublished(package) {
            continue;
        }
        let name = package["name"].as_str().unwrap_or_default();
        for dependency in dependencies(package) {
            let dependency_name = dependency["name"].as_str().unwrap_or_default();
            let kind = dependency_kind(dependency);
            let internal = members.contains(&dependency_name) || dependency.get("path").is_some();
            if internal && kind != "dev" && dependency["req"].as_str() == Some("*") {
                violations.push(format!(
                    "{name}: path dependency {dependency_name} ({kind}) has no version"
                ));
            }
        }
    }
    violations
}

/// The workspace packages marked `publish = false`.
pub fn unpublished_packages(metadata: &Value) -> Vec<&str> {
    packages(metadata)
        .filter(|package| is_unpublished(package))
        .filter_map(|package| package["name"].as_str())
        .collect()
}

/// `publish = false`: cargo metadata's `publish` is then an empty list of registries.
fn is_unpublished(package: &Value) -> bool {
    package["publish"].as_array().is_some_and(Vec::is_empty)
}

/// Violations by `[workspace.dependencies]` entries of the root manifest that give a `path`
/// without a `version`, except for the `unpublished` packages: a dependency on one of those has
/// no version on purpose, so that `cargo publish` drops it from a published crate's
/// dev-dependencies (`termsprawl-test-support`).
pub fn unversioned_workspace_dependencies(
    root_manifest: &str,
    unpublished: &[&str],
) -> Vec<String> {
    let mut violations = Vec::new();
    let mut in_section = false;
    for (index, line) in root_manifest.lines().enumerate() {
        let line = line.trim();
        if line.starts_with('[') {
            in_section = line == "[workspace.dependencies]";
            continue;
        }
        let has_path = line.contains("path =") || line.contains("path=");
        let key = line.split('=').next().unwrap_or_default().trim();
        if in_section && has_path && !line.contains("version") && !unpublished.contains(&key) {
            violations.push(format!(
                "Cargo.toml:{}: workspace dependency with a path but no version: {line}",
                index + 1
            ));
        }
    }
    violations
}

fn packages(metadata: &Value) -> impl Iterator<Item = &Value> {
    metadata["packages"].as_array().into_iter().flatten()
}

fn dependencies(package: &Value) -> impl Iterator<Item = &Value> {
    package["dependencies"].as_array().into_iter().flatten()
}

fn member_names(metadata: &Value) -> Vec<&str> {
    packages(metadata).filter_map(|package| package["name"].as_str()).collect()
}

fn dependency_kind(dependency: &Value) -> &str {
    dependency["kind"].as_str().unwrap_or("normal")
}

#[cfg(test)]
mod tests;
