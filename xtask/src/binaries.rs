//! Building the programs that `cargo xtask demo`, `soak` and `bench` run, found through cargo's
//! JSON messages rather than guessed target paths: [`build`] for `termsprawlctl` and
//! `termsprawl-headless` together, [`cargo_build`] for any packages; and ending the tmux server
//! the headless server started for them, the one way xtask runs tmux.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context as _, ensure};
use serde_json::Value;

/// The two programs of the demo and the soak.
#[derive(Debug, Clone)]
pub struct Binaries {
    /// `termsprawlctl`.
    pub ctl: PathBuf,
    /// `termsprawl-headless`.
    pub headless: PathBuf,
}

/// `cargo build --locked [--release] -p termsprawl-headless -p termsprawl-cli`.
pub fn build(root: &Path, release: bool) -> anyhow::Result<Binaries> {
    eprintln!(
        "building termsprawl-headless and termsprawlctl ({})",
        if release { "release" } else { "debug" }
    );
    let executables =
        cargo_build(root, release, &["-p", "termsprawl-headless", "-p", "termsprawl-cli"])?;
    Ok(Binaries {
        ctl: executable(&executables, "termsprawlctl")?,
        headless: executable(&executables, "termsprawl-headless")?,
    })
}

/// `cargo build --locked [--release] ARGS` (cargo from `CARGO`, else `cargo`), with compiler
/// messages rendered on stderr; the executables it produced, by target name.
pub fn cargo_build(
    root: &Path,
    release: bool,
    args: &[&str],
) -> anyhow::Result<BTreeMap<String, PathBuf>> {
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
    let output = command
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .context("cannot run cargo build")?;
    let profile = if release { " --release" } else { "" };
    ensure!(output.status.success(), "cargo build --locked{profile} {} failed", args.join(" "));
    let mut executables = BTreeMap::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(message) = serde_json::from_str::<Value>(line) else { continue };
        if message["reason"] != "compiler-artifact" {
            continue;
        }
        if let (Some(name), Some(path)) = (
            message.pointer("/target/name").and_then(Value::as_str),
            message["executable"].as_str(),
        ) {
            executables.insert(name.to_owned(), PathBuf::from(path));
        }
    }
    Ok(executables)
}

/// The executable `name` of a [`cargo_build`], or an error saying cargo built none.
pub fn executable(executables: &BTreeMap<String, PathBuf>, name: &str) -> anyhow::Result<PathBuf> {
    executables.get(name).cloned().with_context(|| format!("cargo built no {name}"))
}

/// `tmux -S <socket> kill-server`: ends the agents' and terminals' tmux server of a run (the
/// headless server never does when it stops). A server that is already gone is fine.
pub fn kill_tmux_server(socket: &Path) {
    let _ = Command::new("tmux")
        .arg("-S")
        .arg(socket)
        .arg("kill-server")
        .env_remove("TMUX")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}
