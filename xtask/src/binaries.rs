//! Building the programs that `cargo xtask demo` and `cargo xtask soak` run: `termsprawlctl` and
//! `termsprawl-headless`, found through cargo's JSON messages rather than guessed target paths;
//! and ending the tmux server the headless server started for them, the one way xtask runs tmux.

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

/// `cargo build --locked [--release] -p termsprawl-headless -p termsprawl-cli`; the paths come
/// from cargo's JSON messages.
pub fn build(root: &Path, release: bool) -> anyhow::Result<Binaries> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command.current_dir(root).args(["build", "--locked", "--message-format=json"]);
    if release {
        command.arg("--release");
    }
    command.args(["-p", "termsprawl-headless", "-p", "termsprawl-cli"]);
    eprintln!(
        "building termsprawl-headless and termsprawlctl ({})",
        if release { "release" } else { "debug" }
    );
    let output = command.stderr(Stdio::inherit()).output().context("cannot run cargo build")?;
    ensure!(output.status.success(), "cargo build failed");
    let mut executables = BTreeMap::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(message) = serde_json::from_str::<Value>(line) else { continue };
        if let (Some(name), Some(path)) = (
            message.pointer("/target/name").and_then(Value::as_str),
            message["executable"].as_str(),
        ) {
            executables.insert(name.to_owned(), PathBuf::from(path));
        }
    }
    let find = |name: &str| {
        executables.get(name).cloned().with_context(|| format!("cargo built no {name}"))
    };
    Ok(Binaries { ctl: find("termsprawlctl")?, headless: find("termsprawl-headless")? })
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
