//! Tidy checks over the source tree and `cargo metadata`, run as ordinary `#[test]`s (in
//! `tidy/tests.rs`) so that `cargo test --workspace` enforces them.
//!
//! Each check is a function returning its violations as readable lines, so that a test can show
//! all of them at once and other tests can feed the checks synthetic input. The dependency rules
//! between crates are data: [`CRATE_RULES`].

use std::collections::{BTreeMap, BTreeSet};
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
const HARNESS: &str = "harness";
const TEST_SUPPORT: &str = "termsprawl-test-support";

/// The crate graph of ARCHITECTURE.md ("Invariants"), one row per workspace package, edges
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
    // it injects, and its canvas terminals (`--terminals canvas`) through transport's client; its
    // local tmux terminals read panes as headless does (external-term's `pane`).
    CrateRule {
        package: ACP,
        workspace_deps: &[PROTOCOL, TRANSPORT, EXTERNAL_TERM],
        dev_workspace_deps: &[TEST_SUPPORT],
        external_deps: None,
        anyhow: false,
    },
    // protocol for the node-id rule only; headless and acp share its tmux knowledge.
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
    // Automation: codegen reads protocol (and runs `termsprawlctl usage` as a program), dist
    // generates conformance's man page and completions and builds through test-support's cargo,
    // test finds programs as external-term does. Never a server or frontend crate
    // ([`NEVER_UNDER_XTASK`]): bench, soak and demo are the harness's.
    CrateRule {
        package: XTASK,
        workspace_deps: &[PROTOCOL, EXTERNAL_TERM, CONFORMANCE, TEST_SUPPORT],
        dev_workspace_deps: &[],
        external_deps: None,
        anyhow: true,
    },
    // The programs run for real (bench, soak, demo, every operation end to end): the headless
    // server's messages, transport's server half and client for `bench-support`, the cli's code
    // as `bench-support termsprawlctl`, test-support's `serve` and cargo builds.
    CrateRule {
        package: HARNESS,
        workspace_deps: &[PROTOCOL, TRANSPORT, CLI, HEADLESS, TEST_SUPPORT],
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
    // the MCP driver, `serve`, Xvfb and program lookup, the peer locator, cargo builds. Only
    // tests, xtask and the harness use it.
    CrateRule {
        package: TEST_SUPPORT,
        workspace_deps: &[PROTOCOL, TRANSPORT, EXTERNAL_TERM],
        dev_workspace_deps: &[],
        external_deps: None,
        anyhow: false,
    },
];

/// The crates that xtask must never depend on, directly or through another crate: the servers
/// and frontends (`cargo xtask codegen` must not compile a server; the harness runs them).
pub const NEVER_UNDER_XTASK: &[&str] = &[HEADLESS, ACP, MCP, CLI];

/// Every workspace package that `package` depends on through `rules` (normal edges, followed
/// transitively), sorted.
pub fn dependency_closure(package: &str, rules: &[CrateRule]) -> BTreeSet<&'static str> {
    let mut closure = BTreeSet::new();
    let mut pending: Vec<&str> = vec![package];
    while let Some(next) = pending.pop() {
        let Some(rule) = rules.iter().find(|rule| rule.package == next) else { continue };
        for dependency in rule.workspace_deps {
            if closure.insert(*dependency) {
                pending.push(dependency);
            }
        }
    }
    closure
}

/// The heading line of ARCHITECTURE.md's crate table: the table is the first one after it.
pub const CRATE_TABLE_LEAD: &str =
    "The crate graph, exactly as `xtask/src/tidy.rs` (`CRATE_RULES`)";

/// The differences between the crate table of `architecture` (the text of ARCHITECTURE.md: the
/// first Markdown table after [`CRATE_TABLE_LEAD`], one row per crate folder, its second column
/// the backticked folders it depends on, anything in parentheses a note) and `rules`, one line
/// each; empty when they agree exactly.
pub fn crate_table_violations(architecture: &str, rules: &[CrateRule]) -> Vec<String> {
    let Some(lead) = architecture.find(CRATE_TABLE_LEAD) else {
        return vec![format!(
            "ARCHITECTURE.md: no line starting the crate table ({CRATE_TABLE_LEAD})"
        )];
    };
    let rows: Vec<(String, BTreeSet<String>)> = architecture[lead..]
        .lines()
        .skip_while(|line| !line.trim_start().starts_with('|'))
        .take_while(|line| line.trim_start().starts_with('|'))
        .filter_map(|line| {
            let cells: Vec<&str> =
                line.trim().trim_matches('|').split('|').map(str::trim).collect();
            let folder = cells.first()?.strip_prefix('`')?.strip_suffix('`')?.to_owned();
            let deps = without_notes(cells.get(1).copied().unwrap_or_default());
            let deps = deps.split('`').skip(1).step_by(2).map(str::to_owned).collect();
            Some((folder, deps))
        })
        .collect();
    let mut violations = Vec::new();
    let package_of = |folder: &str| {
        if [XTASK, HARNESS].contains(&folder) {
            folder.to_owned()
        } else {
            format!("termsprawl-{folder}")
        }
    };
    for (folder, deps) in &rows {
        let package = package_of(folder);
        let Some(rule) = rules.iter().find(|rule| rule.package == package) else {
            violations.push(format!("ARCHITECTURE.md: crate table row `{folder}` has no rule"));
            continue;
        };
        let listed: BTreeSet<String> = deps.iter().map(|dep| package_of(dep)).collect();
        let required: BTreeSet<String> =
            rule.workspace_deps.iter().map(|dep| (*dep).to_owned()).collect();
        for missing in required.difference(&listed) {
            violations.push(format!(
                "ARCHITECTURE.md: crate table row `{folder}` lacks {missing} (CRATE_RULES has it)"
            ));
        }
        for extra in listed.difference(&required) {
            violations.push(format!(
                "ARCHITECTURE.md: crate table row `{folder}` names {extra}, which CRATE_RULES does not"
            ));
        }
    }
    for rule in rules {
        if !rows.iter().any(|(folder, _)| package_of(folder) == rule.package) {
            violations
                .push(format!("ARCHITECTURE.md: crate table has no row for {}", rule.package));
        }
    }
    violations
}

/// `cell` without its notes: every part in parentheses, nested ones included.
fn without_notes(cell: &str) -> String {
    let mut depth = 0_usize;
    cell.chars()
        .filter(|&c| {
            match c {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                _ => return depth == 0,
            }
            false
        })
        .collect()
}

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

/// The parts every crate's doc (the `//!` lines of its `lib.rs`) has, each found by a phrase in
/// it (any case): what the crate owns, what it must never do, and where to start reading.
pub const CRATE_DOC_PARTS: &[(&str, &str)] = &[
    ("owns", "what it owns"),
    ("must never", "what it must never do"),
    ("start reading", "where to start reading"),
];

/// The parts of [`CRATE_DOC_PARTS`] that the crate doc at the start of `text` lacks, one line each.
pub fn missing_crate_doc_parts(path: &Path, text: &str) -> Vec<String> {
    let doc: String = text
        .lines()
        .take_while(|line| line.starts_with("//!"))
        .map(|line| line.trim_start_matches("//!").to_lowercase() + " ")
        .collect();
    let doc = doc.split_whitespace().collect::<Vec<_>>().join(" ");
    CRATE_DOC_PARTS
        .iter()
        .filter(|(phrase, _)| !doc.contains(phrase))
        .map(|(phrase, part)| {
            format!("{}: the crate doc does not say {part} (no \"{phrase}\")", path.display())
        })
        .collect()
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

/// Modules of a crate that some of its files may not import, as data: the files whose path
/// starts with `under` may not name `crate::<module>` for any of `modules` (in a `use`, grouped or
/// not, or in a path).
#[derive(Debug, Clone, Copy)]
pub struct ModuleRule {
    /// The files it holds for: those whose path (from the repository root) starts with this.
    pub under: &'static str,
    /// The modules of the crate they may not import.
    pub modules: &'static [&'static str],
    /// Why, for the violation's line.
    pub why: &'static str,
}

/// The import rules inside crates.
pub const MODULE_RULES: &[ModuleRule] = &[
    // headless: a terminal node has one owner, `terminals.rs`; the operations reach tmux and the
    // output streams only through it (issue 36).
    ModuleRule {
        under: "headless/src/ops/",
        modules: &["tmux", "streams"],
        why: "the operations talk to the engine and its terminals (`crate::terminals`)",
    },
];

/// The violations of `rules` in the Rust file `path` (relative to the repository root) whose
/// text is `text`, one line each.
pub fn module_import_violations(path: &Path, text: &str, rules: &[ModuleRule]) -> Vec<String> {
    let shown = path.to_string_lossy().replace('\\', "/");
    let mut violations = Vec::new();
    for rule in rules.iter().filter(|rule| shown.starts_with(rule.under)) {
        for module in rule.modules {
            if names_crate_module(text, module) {
                violations.push(format!(
                    "{shown}: imports `crate::{module}`, which files under {} may not: {}",
                    rule.under, rule.why
                ));
            }
        }
    }
    violations
}

/// Whether `text` names `crate::<module>`: as a path (`crate::tmux::Tmux`, `use crate::tmux;`)
/// or as an item of a group (`use crate::{engine, tmux::Tmux};`).
fn names_crate_module(text: &str, module: &str) -> bool {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let ends_name = |rest: &str| !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_');
    let as_path = compact.match_indices("crate::").any(|(at, found)| {
        let rest = &compact[at + found.len()..];
        rest.strip_prefix(module).is_some_and(ends_name)
    });
    let in_group = compact.match_indices("crate::{").any(|(at, found)| {
        let group = &compact[at + found.len()..];
        let mut depth = 0_usize;
        let mut item_start = true;
        for (index, c) in group.char_indices() {
            if depth == 0
                && item_start
                && group[index..].strip_prefix(module).is_some_and(ends_name)
            {
                return true;
            }
            item_start = false;
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => return false,
                '}' => depth -= 1,
                ',' if depth == 0 => item_start = true,
                _ => {}
            }
        }
        false
    });
    as_path || in_group
}

/// The import circles between the top-level modules of each crate, one line per circle:
/// `<crate>/src: a -> b -> a`. `files` are the Rust files as (path from the repository root,
/// text). A file `<crate>/src/<module>.rs` or under `<crate>/src/<module>/` belongs to `<module>`
/// (the crate root, `bin/` and tests are left out: `tests.rs`, files under a `tests` folder, and
/// a file's text from its first `#[cfg(test)]` on); it imports every other top-level module it
/// names as `crate::<module>` outside comments, in a path or a `use` group. A circle is a set of
/// modules each of which reaches every other through these imports.
pub fn module_circles(files: &[(PathBuf, String)]) -> Vec<String> {
    let mut crates: BTreeMap<String, BTreeMap<String, Vec<&str>>> = BTreeMap::new();
    for (path, text) in files {
        let parts: Vec<String> =
            path.iter().map(|part| part.to_string_lossy().into_owned()).collect();
        let Some(src) = parts.iter().position(|part| part == "src") else { continue };
        let Some(first) = parts.get(src + 1) else { continue };
        let module = first.strip_suffix(".rs").unwrap_or(first);
        let is_test = parts[src + 1..].iter().any(|part| part == "tests" || part == "tests.rs");
        if is_test || matches!(module, "lib" | "main" | "bin") {
            continue;
        }
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        let dir = parts[..=src].join("/");
        crates.entry(dir).or_default().entry(module.to_owned()).or_default().push(code);
    }
    let mut circles = Vec::new();
    for (dir, modules) in &crates {
        let edges: BTreeMap<&str, BTreeSet<&str>> = modules
            .iter()
            .map(|(module, texts)| {
                let named =
                    texts.iter().flat_map(|text| crate_names(text)).collect::<BTreeSet<_>>();
                let imports = modules
                    .keys()
                    .map(String::as_str)
                    .filter(|other| other != module && named.contains(*other))
                    .collect();
                (module.as_str(), imports)
            })
            .collect();
        let reach = |from: &str| {
            let mut seen = BTreeSet::new();
            let mut todo = vec![from];
            while let Some(module) = todo.pop() {
                for next in edges.get(module).into_iter().flatten() {
                    if seen.insert(*next) {
                        todo.push(next);
                    }
                }
            }
            seen
        };
        let reaches: BTreeMap<&str, BTreeSet<&str>> =
            edges.keys().map(|module| (*module, reach(module))).collect();
        let mut done = BTreeSet::new();
        for (module, reached) in &reaches {
            if done.contains(module) || !reached.contains(module) {
                continue;
            }
            let circle: Vec<&str> = reached
                .iter()
                .copied()
                .filter(|other| reaches.get(other).is_some_and(|back| back.contains(module)))
                .collect();
            done.extend(circle.iter().copied());
            let shown: Vec<String> = circle
                .iter()
                .map(|from| {
                    let to: Vec<&str> =
                        edges[from].iter().copied().filter(|to| circle.contains(to)).collect();
                    format!("{from} -> {}", to.join(", "))
                })
                .collect();
            circles.push(format!("{dir}: import circle between modules: {}", shown.join("; ")));
        }
    }
    circles
}

/// The names that follow `crate::` in `text` outside `//` comments: `crate::tmux::Tmux` names
/// `tmux`, `use crate::{engine::Engine, tmux};` names `engine` and `tmux`. `$crate::` (a macro's)
/// is left out.
fn crate_names(text: &str) -> BTreeSet<String> {
    let code: String =
        text.lines().map(|line| line.split("//").next().unwrap_or_default()).collect();
    let compact: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    let name_at = |rest: &str| -> String {
        rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect()
    };
    let mut names = BTreeSet::new();
    for (at, found) in compact.match_indices("crate::") {
        if compact[..at].ends_with('$') {
            continue;
        }
        let rest = &compact[at + found.len()..];
        let Some(group) = rest.strip_prefix('{') else {
            names.insert(name_at(rest));
            continue;
        };
        let mut depth = 0_usize;
        let mut item_start = true;
        for (index, c) in group.char_indices() {
            if depth == 0 && item_start {
                names.insert(name_at(&group[index..]));
            }
            item_start = false;
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => item_start = true,
                _ => {}
            }
        }
    }
    names.remove("");
    names
}

/// Where the project's specification lives: a citation `spec/protocol.md §6.2` in code or docs
/// means `docs/spec/protocol.md`, section 6.2 (`docs/spec/README.md`).
pub const SPEC_DIR: &str = "docs/spec";

/// The spec files that a citation may also name without `spec/` outside `docs/spec/`
/// (`protocol.md §6.2`): no other file of the repository has these names. The ACP contract is
/// not among them, because `docs/acp.md` (the guide to the agents) has the same name: it is
/// written `spec/acp.md` or `docs/acp.md`.
const BARE_SPEC_NAMES: &[&str] = &["protocol.md", "mcp.md", "shell-conventions.md"];

/// The name that [`BARE_SPEC_NAMES`] leaves out: alone, it is ambiguous, unless a section
/// number follows it (`acp.md §2.10`): the guide of that name has no numbered headings
/// ([`AMBIGUOUS_GUIDE`], kept so by [`spec_citations`]), so a section can only be the contract's.
const AMBIGUOUS_NAME: &str = concat!("acp", ".md");

/// The guide that shares [`AMBIGUOUS_NAME`] with the contract.
const AMBIGUOUS_GUIDE: &str = concat!("docs/", "acp", ".md");

/// The section numbers of a spec file: every Markdown heading outside code fences whose text
/// starts with a number (`## 6. Server behaviour` is `6`, `### 6.2 Handling order` is `6.2`).
pub fn heading_numbers(text: &str) -> BTreeSet<String> {
    let mut numbers = BTreeSet::new();
    let mut fence: Option<&str> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let marker = ["````", "```", "~~~"].into_iter().find(|marker| trimmed.starts_with(marker));
        match (fence, marker) {
            (None, Some(marker)) => {
                fence = Some(marker);
                continue;
            }
            (Some(open), Some(marker)) if marker == open && trimmed.trim_end() == open => {
                fence = None;
                continue;
            }
            _ => {}
        }
        if fence.is_some() {
            continue;
        }
        let Some(rest) = line.strip_prefix('#') else { continue };
        let rest = rest.trim_start_matches('#');
        let Some(rest) = rest.strip_prefix(' ') else { continue };
        let (number, after) = section_number(rest.trim_start());
        let after = after.strip_prefix('.').unwrap_or(after);
        if !number.is_empty() && (after.is_empty() || after.starts_with(' ')) {
            numbers.insert(number.to_owned());
        }
    }
    numbers
}

/// The headings of every Markdown file of [`SPEC_DIR`] below `root`, by file name.
pub fn spec_sections(root: &Path) -> anyhow::Result<BTreeMap<String, BTreeSet<String>>> {
    let dir = root.join(SPEC_DIR);
    let mut sections = BTreeMap::new();
    for entry in fs::read_dir(&dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let path = entry?.path();
        if path.extension().is_some_and(|extension| extension == "md") {
            let text = fs::read_to_string(&path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            let name = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
            sections.insert(name, heading_numbers(&text));
        }
    }
    Ok(sections)
}

/// One violation per citation of the spec in `text` (the file at `path`, relative to the
/// repository root) that does not resolve against `sections` (from [`spec_sections`]).
///
/// A citation is a file name ending `.md` whose folder is `spec/` (`spec/mcp.md`,
/// `docs/spec/mcp.md`), or a bare name of [`BARE_SPEC_NAMES`], or, inside `docs/spec/` itself,
/// also a bare [`AMBIGUOUS_NAME`] (there it names its neighbour); it may be followed (after a
/// closing backtick and spaces)
/// by sections: `§6.2`, `§2, §7.1`, `§6.1–§6.3`, `§6.2–6.3`, `§2.3 to §2.5`. The file must be in
/// `docs/spec/` and each section must be a heading there. A bare [`AMBIGUOUS_NAME`] outside
/// `docs/spec/` followed by a section is a citation of the contract; without one it is a
/// violation: it may mean the guide in `docs/` or the contract.
pub fn spec_citation_violations(
    path: &Path,
    text: &str,
    sections: &BTreeMap<String, BTreeSet<String>>,
) -> Vec<String> {
    let in_spec = path.parent().is_some_and(|parent| parent == Path::new(SPEC_DIR));
    let mut violations = Vec::new();
    let mut search = 0;
    while let Some(found) = text[search..].find(".md") {
        let end = search + found + ".md".len();
        search = end;
        if text[end..].starts_with(|c: char| is_name_char(c) || c == '.') {
            continue; // `.mdx`, `.md.tmp`, `.md-…`
        }
        let before = &text[..end - ".md".len()];
        let stem_start = before.trim_end_matches(is_name_char).len();
        let stem = &before[stem_start..];
        if stem.is_empty() {
            continue;
        }
        let name = format!("{stem}.md");
        let prefix = &before[..stem_start];
        let folder = prefix.strip_suffix('/').map(|parent| {
            let start = parent.trim_end_matches(|c: char| is_name_char(c) || c == '.').len();
            &parent[start..]
        });
        let line = text[..end].matches('\n').count() + 1;
        let at = format!("{}:{line}", path.display());
        let cited = match folder {
            Some(folder) => folder == "spec",
            None if name == AMBIGUOUS_NAME
                && !in_spec
                && cited_sections(&text[end..]).is_empty() =>
            {
                violations.push(format!(
                    "{at}: `{name}` alone may mean docs/{name} or docs/spec/{name}: write \
                     `spec/{name}` for the contract or `docs/{name}` for the guide"
                ));
                continue;
            }
            None => name == AMBIGUOUS_NAME || BARE_SPEC_NAMES.contains(&name.as_str()),
        };
        if !cited {
            continue;
        }
        let Some(headings) = sections.get(&name) else {
            violations.push(format!("{at}: spec/{name} is not a file of {SPEC_DIR}/"));
            continue;
        };
        for number in cited_sections(&text[end..]) {
            if !headings.contains(number) {
                violations.push(format!(
                    "{at}: spec/{name} §{number}: {SPEC_DIR}/{name} has no heading numbered {number}"
                ));
            }
        }
    }
    violations
}

/// Characters of a file name's stem.
fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// The section numbers cited right after a spec file name: `` ` §6.2``, `§2, §7.1`, `§6.1–§6.3`,
/// `§6.2–6.3`, `§2.3 to §2.5`; nothing when no `§` follows.
fn cited_sections(after: &str) -> Vec<&str> {
    let rest = after.strip_prefix('`').unwrap_or(after).trim_start_matches([' ', '\t']);
    let Some(mut rest) = rest.strip_prefix('§') else { return Vec::new() };
    let mut numbers = Vec::new();
    loop {
        let (number, tail) = section_number(rest.trim_start_matches(' '));
        if number.is_empty() {
            break;
        }
        numbers.push(number);
        let joined = tail.trim_start_matches(' ');
        let Some((separator, next)) = [",", "–", "-", "and ", "or ", "to "]
            .into_iter()
            .find_map(|separator| joined.strip_prefix(separator).map(|next| (separator, next)))
        else {
            break;
        };
        let next = next.trim_start_matches(' ');
        rest = match next.strip_prefix('§') {
            Some(next) => next,
            // A range may leave out the second `§` (`§6.2–6.3`); a list may not.
            None if matches!(separator, "–" | "-") => next,
            None => break,
        };
    }
    numbers
}

/// The section number at the start of `text` (`6.2` of `6.2 Handling`, `5` of `5.`; a trailing
/// dot is not part of it) and the text after it.
fn section_number(text: &str) -> (&str, &str) {
    let mut end = 0;
    let bytes = text.as_bytes();
    while end < bytes.len() && bytes[end].is_ascii_digit() {
        end += 1;
        if end < bytes.len()
            && bytes[end] == b'.'
            && bytes.get(end + 1).is_some_and(u8::is_ascii_digit)
        {
            end += 1;
        }
    }
    text.split_at(end)
}

/// The file kinds searched for citations of the spec.
pub const CITING_EXTENSIONS: &[&str] = &["rs", "md", "py", "toml", "ts", "sh"];

/// Every citation of the spec below `root` that does not resolve, and every reference to a folder
/// outside the repository ([`spec_citation_violations`], [`outside_references`]), over the files
/// with [`CITING_EXTENSIONS`] outside the [`SKIPPED_DIRS`]; and a numbered heading in
/// [`AMBIGUOUS_GUIDE`], which would make a bare [`AMBIGUOUS_NAME`] with a section ambiguous.
pub fn spec_citations(root: &Path) -> anyhow::Result<Vec<String>> {
    let sections = spec_sections(root)?;
    let mut violations = Vec::new();
    for path in files_with_extensions(root, CITING_EXTENSIONS)? {
        let full = root.join(&path);
        let text =
            fs::read_to_string(&full).with_context(|| format!("cannot read {}", full.display()))?;
        violations.extend(spec_citation_violations(&path, &text, &sections));
        violations.extend(outside_references(&path, &text));
    }
    let guide = root.join(AMBIGUOUS_GUIDE);
    let numbers = match fs::read_to_string(&guide) {
        Ok(text) => heading_numbers(&text),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => BTreeSet::new(),
        Err(error) => {
            return Err(error).with_context(|| format!("cannot read {}", guide.display()));
        }
    };
    if let Some(number) = numbers.first() {
        violations.push(format!(
            "{AMBIGUOUS_GUIDE}: its heading numbered {number} would make `{AMBIGUOUS_NAME} \
             §{number}` ambiguous (it means {SPEC_DIR}/{AMBIGUOUS_NAME}): leave the guide's \
             headings unnumbered"
        ));
    }
    Ok(violations)
}

/// The fragments that would make the repository depend on a folder outside it (the contracts
/// now live in `docs/spec/`). Spelled in pieces so this file does not match.
const OUTSIDE_FOLDERS: &[&str] = &[concat!("../", "shared"), concat!("shared", "/spec")];

/// One violation per line that points outside the repository for its contracts.
pub fn outside_references(path: &Path, text: &str) -> Vec<String> {
    let mut violations = Vec::new();
    for (index, line) in text.lines().enumerate() {
        for fragment in OUTSIDE_FOLDERS {
            if line.contains(fragment) {
                violations.push(format!(
                    "{}:{}: `{fragment}` is outside the repository; cite {SPEC_DIR}/ instead",
                    path.display(),
                    index + 1
                ));
            }
        }
    }
    violations
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
