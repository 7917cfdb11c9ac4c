//! The managed tmux server of a private `<userData>` (`<userData>/tmux-sockets/termsprawl`, where
//! the headless server runs its terminals), for checks from outside and for its end.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Kills the tmux server of a data directory when dropped.
#[derive(Debug)]
pub struct TmuxGuard {
    socket: PathBuf,
}

impl TmuxGuard {
    /// The guard of `<user_data>/tmux-sockets/termsprawl`.
    pub fn new(user_data: &Path) -> TmuxGuard {
        TmuxGuard { socket: user_data.join("tmux-sockets").join("termsprawl") }
    }

    /// `tmux -S <socket> …` with stdin closed and outside any tmux client, run to the end.
    ///
    /// # Panics
    ///
    /// When tmux cannot be run.
    pub fn tmux(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .env_remove("TMUX")
            .stdin(Stdio::null())
            .output()
            .expect("tmux runs")
    }
}

impl Drop for TmuxGuard {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}
