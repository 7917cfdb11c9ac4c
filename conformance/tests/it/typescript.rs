//! The generated TypeScript bindings drop in (issue 27): `bindings/typescript/` type-checks with
//! `tsc --strict`, and so do the typed client and the tool server of `tests/typescript/`, built
//! on them; then Node's test runner runs `tests/typescript/*.test.ts` (compiled by the same
//! `tsc`, Node 20 cannot run TypeScript), which compare the generated table with
//! `docs/reference/catalog.json`, run the generated validator over the Rust validator's cases
//! (`protocol/tests/validation-cases.json`), hold the generated pattern checker to the Rust
//! checker's answers and to ECMAScript's `RegExp` (`pattern.test.ts`) and run this crate's binary, `--level protocol`,
//! against the TypeScript server.
//!
//! TypeScript and Node's types are pinned in `tests/node/package.json` and provisioned with the
//! other npm peers by `cargo xtask test`; Node itself is a system program. A missing one fails
//! the test with what to run: it is never skipped.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::support::CONFORMANCE;

/// The pinned TypeScript (`tests/node/package.json`).
const TYPESCRIPT_VERSION: &str = "5.9.3";

fn root() -> PathBuf {
    termsprawl_test_support::workspace_root()
}

/// The provisioned `node_modules` holding the pinned TypeScript and Node's types.
fn node_modules() -> PathBuf {
    let found = termsprawl_test_support::peers::node_modules("");
    let manifest = std::fs::read_to_string(found.join("typescript/package.json")).unwrap();
    let manifest: serde_json::Value = serde_json::from_str(&manifest).unwrap();
    assert_eq!(
        manifest["version"],
        TYPESCRIPT_VERSION,
        "{} holds another TypeScript: run `cargo xtask test`",
        found.display()
    );
    found
}

/// Runs `node ARGS...` in the repository root, failing with what to install when Node is missing.
fn node(args: &[&std::ffi::OsStr], envs: &[(&str, &Path)]) -> Output {
    let mut command = Command::new("node");
    command.current_dir(root()).args(args).stdin(Stdio::null());
    for (name, value) in envs {
        command.env(name, value);
    }
    command.output().unwrap_or_else(|error| {
        panic!(
            "cannot run node ({error}): install Node.js 20 or later (`apt-get install nodejs npm`)"
        )
    })
}

/// `tsc ARGS...` of the pinned TypeScript; panics with its output when it reports errors.
fn tsc(args: &[&std::ffi::OsStr]) {
    let tsc = node_modules().join("typescript/bin/tsc");
    let mut all = vec![tsc.as_os_str()];
    all.extend_from_slice(args);
    let output = node(&all, &[]);
    assert!(
        output.status.success(),
        "tsc {:?} failed:\n{}{}",
        args,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn the_package_type_checks_with_strict() {
    let project = root().join("bindings/typescript");
    tsc(&["-p".as_ref(), project.as_os_str(), "--strict".as_ref(), "--noEmit".as_ref()]);
}

#[test]
fn the_client_and_the_server_type_check_and_nodes_test_runner_passes_their_tests() {
    let scratch = tempfile::TempDir::new().unwrap();
    let out = scratch.path().join("out");
    // The tests' tsconfig, with the provisioned Node types and a scratch output folder.
    let config = scratch.path().join("tsconfig.json");
    let settings = serde_json::json!({
        "extends": root().join("tests/typescript/tsconfig.json"),
        "compilerOptions": {
            "outDir": out,
            "typeRoots": [node_modules().join("@types")],
        },
    });
    std::fs::write(&config, settings.to_string()).unwrap();
    tsc(&["-p".as_ref(), config.as_os_str(), "--strict".as_ref()]);
    // The compiled files are ES modules, as the package declares.
    std::fs::write(out.join("package.json"), r#"{"type":"module"}"#).unwrap();

    let tests: Vec<PathBuf> = ["table", "validate", "pattern", "conformance"]
        .iter()
        .map(|name| out.join(format!("tests/typescript/{name}.test.js")))
        .collect();
    let mut args: Vec<&std::ffi::OsStr> = vec!["--test".as_ref()];
    args.extend(tests.iter().map(|test| test.as_os_str()));
    let root = root();
    let output = node(
        &args,
        &[("TERMSPRAWL_ROOT", &root), ("TERMSPRAWL_CONFORMANCE", Path::new(CONFORMANCE))],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "node --test failed:\n{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // Every test of the four files ran and passed.
    assert!(stdout.contains("\n# pass 12\n") && stdout.contains("\n# fail 0\n"), "{stdout}");
}
