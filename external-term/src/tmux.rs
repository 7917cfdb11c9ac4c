//! The managed tmux server of `spec/protocol.md` §9.2: where the program is, which socket and
//! configuration it uses, the session name of a node, the attach command and the precondition check.

#[cfg(test)]
mod tests;

use std::ffi::OsString;
use std::fs::DirBuilder;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::error::Error;
use crate::search_path::{SearchPath, is_executable_file};

/// Where tmux is looked for when it is not on `PATH`, in order.
pub const TMUX_FALLBACKS: [&str; 3] =
    ["/usr/bin/tmux", "/usr/local/bin/tmux", "/opt/homebrew/bin/tmux"];

/// A tmux program and the arguments that select its server, placed before every tmux command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TmuxLocation {
    /// The tmux program.
    pub program: PathBuf,
    /// The arguments that select the server, for the app
    /// `["-S", "<userData>/tmux-sockets/termsprawl", "-f", "<userData>/tmux.conf"]`.
    pub base_args: Vec<OsString>,
}

impl TmuxLocation {
    /// The app's managed server: `-S <userData>/tmux-sockets/termsprawl -f <userData>/tmux.conf`.
    ///
    /// Pure: the socket directory is created by [`ensure_socket_dir`].
    pub fn managed(program: PathBuf, user_data: &Path) -> Self {
        let base_args = vec![
            OsString::from("-S"),
            socket_path(user_data).into_os_string(),
            OsString::from("-f"),
            user_data.join("tmux.conf").into_os_string(),
        ];
        TmuxLocation { program, base_args }
    }

    /// `[<tmux>, …baseArgs, "attach-session", "-t", "ts-<nodeId>"]`. No `-d`: clients already
    /// attached (the canvas) stay attached.
    pub fn attach_argv(&self, node_id: &str) -> Vec<OsString> {
        let mut argv = Vec::with_capacity(self.base_args.len() + 4);
        argv.push(self.program.clone().into_os_string());
        argv.extend(self.base_args.iter().cloned());
        argv.extend(["attach-session".into(), "-t".into(), session_name(node_id).into()]);
        argv
    }
}

/// The tmux session name of a node: `ts-<nodeId>`.
pub fn session_name(node_id: &str) -> String {
    format!("ts-{node_id}")
}

/// `<userData>/tmux-sockets/termsprawl`.
pub fn socket_path(user_data: &Path) -> PathBuf {
    user_data.join("tmux-sockets").join("termsprawl")
}

/// Creates `<userData>/tmux-sockets` if missing (`mkdir -p`; new directories get mode 0700).
pub fn ensure_socket_dir(user_data: &Path) -> Result<(), Error> {
    let path = user_data.join("tmux-sockets");
    DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&path)
        .map_err(|error| Error::SocketDir { path, error })
}

/// Finds tmux: `tmux` on `PATH`, else the first of [`TMUX_FALLBACKS`] that is an executable file.
pub fn find_tmux(search_path: &SearchPath) -> Result<PathBuf, Error> {
    find_tmux_in(search_path, &TMUX_FALLBACKS)
}

fn find_tmux_in(search_path: &SearchPath, fallbacks: &[&str]) -> Result<PathBuf, Error> {
    if let Some(program) = search_path.find_on_path("tmux") {
        return Ok(program);
    }
    fallbacks
        .iter()
        .map(PathBuf::from)
        .find(|candidate| is_executable_file(candidate))
        .ok_or(Error::TmuxNotFound)
}

/// Whether the session of `node_id` runs: `tmux …baseArgs has-session -t =ts-<nodeId>` exits with 0.
///
/// The `=` makes tmux match the name exactly, so `ts-n1` never matches a session `ts-n10`. No
/// server, no such session and any other failure of tmux all mean `false`; only a tmux that cannot
/// be run at all is an error. `TMUX` and `TMUX_PANE` are removed for tmux as for the emulator.
pub fn has_session(tmux: &TmuxLocation, node_id: &str) -> Result<bool, Error> {
    let target = format!("={}", session_name(node_id));
    let status = Command::new(&tmux.program)
        .args(&tmux.base_args)
        .args(["has-session", "-t", &target])
        .env_remove("TMUX")
        .env_remove("TMUX_PANE")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|error| Error::Tmux { program: tmux.program.clone(), error })?;
    Ok(status.success())
}
