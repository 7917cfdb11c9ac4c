//! The programs that the demo, the soak and the bench run: [`build`] for `termsprawlctl` and
//! `termsprawl-headless` together ([`termsprawl_test_support::cargo`] builds them); and ending
//! the tmux server the headless server started for them, the one way the harness runs tmux.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use termsprawl_test_support::cargo;

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
        cargo::build(root, release, &["-p", "termsprawl-headless", "-p", "termsprawl-cli"])?;
    Ok(Binaries {
        ctl: cargo::executable(&executables, "termsprawlctl")?,
        headless: cargo::executable(&executables, "termsprawl-headless")?,
    })
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
