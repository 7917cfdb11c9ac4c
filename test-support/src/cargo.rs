//! The workspace's programs built with `cargo build --locked`, found through cargo's JSON messages
//! rather than guessed target paths (the targets live under `target/<host-tuple>/`): the one way
//! `cargo xtask dist`, the harness (demo, bench, soak) and its end-to-end test build them.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// `cargo build --locked [--release] ARGS` in `root` (cargo from `CARGO`, else `cargo`), with
/// compiler messages rendered on stderr; the executables it produced, by target name. An error
/// names the command when cargo cannot run or fails.
pub fn build(root: &Path, release: bool, args: &[&str]) -> io::Result<BTreeMap<String, PathBuf>> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command.current_dir(root).args([
        "build",
        "--locked",
        "--message-format=json-render-diagnostics",
    ]);
    if release {
        command.arg("--release");
    }
    command.args(args);
    let profile = if release { " --release" } else { "" };
    let typed = format!("cargo build --locked{profile} {}", args.join(" "));
    let output = command
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|error| io::Error::other(format!("cannot run {typed}: {error}")))?;
    if !output.status.success() {
        return Err(io::Error::other(format!("{typed} failed")));
    }
    let mut executables = BTreeMap::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        if message["reason"] != "compiler-artifact" {
            continue;
        }
        if let (Some(name), Some(path)) = (
            message.pointer("/target/name").and_then(serde_json::Value::as_str),
            message["executable"].as_str(),
        ) {
            executables.insert(name.to_owned(), PathBuf::from(path));
        }
    }
    Ok(executables)
}

/// The executable `name` of a [`build`], or an error saying cargo built none.
pub fn executable(executables: &BTreeMap<String, PathBuf>, name: &str) -> io::Result<PathBuf> {
    executables.get(name).cloned().ok_or_else(|| io::Error::other(format!("cargo built no {name}")))
}
