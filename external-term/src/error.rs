//! The one error type of the crate. Messages that `spec/protocol.md` names are reproduced exactly
//! (they start with a capital letter because they are contract); the others are lowercase, name the
//! program or path involved and end without a period.

use std::io;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::Duration;

/// Why the external terminal could not be opened. `Display` is the text for the operation's `error`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The node id does not match `^[a-zA-Z0-9][a-zA-Z0-9_-]{0,127}$` (§2.4).
    #[error("Invalid agent node ID")]
    InvalidNodeId,
    /// No tmux program on `PATH` nor at any of [`crate::TMUX_FALLBACKS`].
    #[error(
        "tmux was not found on PATH nor at /usr/bin/tmux, /usr/local/bin/tmux or /opt/homebrew/bin/tmux"
    )]
    TmuxNotFound,
    /// The directory of the managed tmux socket could not be created.
    #[error("could not create the tmux socket directory {path}: {error}")]
    SocketDir {
        /// The directory, `<userData>/tmux-sockets`.
        path: PathBuf,
        /// The failure of `mkdir -p`.
        error: io::Error,
    },
    /// tmux could not be run to check the session.
    #[error("could not run {program}: {error}")]
    Tmux {
        /// The tmux program.
        program: PathBuf,
        /// The spawn failure.
        error: io::Error,
    },
    /// `has-session -t =ts-<nodeId>` failed: there is no server or no such session.
    #[error("A running managed tmux session is required")]
    SessionNotRunning,
    /// `agent-tools/preferences.json` exists but could not be read.
    #[error("could not read {path}: {error}")]
    ReadPreferences {
        /// The preferences file.
        path: PathBuf,
        /// The read failure.
        error: io::Error,
    },
    /// `agent-tools/preferences.json` is not a JSON object.
    #[error("Invalid agent-tools/preferences.json")]
    InvalidPreferences {
        /// The preferences file.
        path: PathBuf,
    },
    /// `externalTerminal` has an empty or non-string `executable`, non-string `args`, or not exactly
    /// one element equal to `{command}`.
    #[error("External terminal args must contain exactly one {{command}} placeholder")]
    InvalidTemplate,
    /// The configured `executable` does not resolve to an executable regular file.
    #[error("Configured external terminal executable was not found")]
    ExecutableNotFound {
        /// The `executable` as configured.
        executable: String,
    },
    /// No configuration and none of the [`crate::PROBES`] resolves.
    #[error(
        "No supported Linux terminal emulator found. Install one or configure agent-tools/preferences.json. The canvas terminal is still available."
    )]
    NoEmulator,
    /// The emulator could not be spawned.
    #[error("could not start terminal emulator {program}: {error}")]
    Spawn {
        /// The emulator program.
        program: PathBuf,
        /// The spawn failure.
        error: io::Error,
    },
    /// The emulator exited with a failure status (or was killed) within the grace period.
    #[error("terminal emulator {program} exited within {} ms ({status})", grace_period.as_millis())]
    ExitedEarly {
        /// The emulator program.
        program: PathBuf,
        /// How it ended: `exit status: 3`, `signal: 9 (SIGKILL)`.
        status: ExitStatus,
        /// The grace period it was watched for.
        grace_period: Duration,
    },
    /// The emulator was spawned but could not be watched.
    #[error("could not watch terminal emulator {program}: {error}")]
    Watch {
        /// The emulator program.
        program: PathBuf,
        /// The failure.
        error: io::Error,
    },
}
