//! The spawn (`spec/protocol.md` §9.4, with one required improvement): start the emulator detached,
//! watch it for a grace period, and report an emulator that fails within it instead of calling it a
//! success.

use std::ffi::OsString;
use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use crate::command::TerminalCommand;
use crate::error::Error;

/// How long a new emulator is watched before it counts as started.
pub const DEFAULT_GRACE_PERIOD: Duration = Duration::from_millis(500);

/// How [`launch`] starts and watches the emulator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchOptions {
    /// How long the emulator is watched; an exit with a failure status within it is an error.
    pub grace_period: Duration,
    /// Variables set for the emulator on top of the caller's environment (for example `DISPLAY`).
    /// `TMUX` and `TMUX_PANE` are removed even when listed here.
    pub env: Vec<(OsString, OsString)>,
}

impl Default for LaunchOptions {
    fn default() -> Self {
        LaunchOptions { grace_period: DEFAULT_GRACE_PERIOD, env: Vec::new() }
    }
}

/// A successful launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Launched {
    /// The emulator still ran after the grace period. It leads its own process group (so `pid` is
    /// also the group id) and a background thread reaps it when it exits.
    Running {
        /// The emulator's process id.
        pid: u32,
    },
    /// The emulator exited with status 0 within the grace period and has been reaped. Emulators
    /// with a server process (`gnome-terminal`, which `x-terminal-emulator` often is, or a kitty
    /// single instance) do this after handing the window to their server, so it counts as a
    /// success. Caveat: xterm also exits with 0 when the command it runs fails, so for such
    /// emulators this outcome cannot tell a window that closed at once from one handed off.
    HandedOff {
        /// The process id the emulator had.
        pid: u32,
    },
}

impl Launched {
    /// The emulator's process id.
    pub fn pid(self) -> u32 {
        match self {
            Launched::Running { pid } | Launched::HandedOff { pid } => pid,
        }
    }
}

/// Starts `command` and watches it for the grace period.
///
/// The program is executed directly (no shell) in a new process group (`process_group(0)`, so that
/// signals aimed at the caller's terminal do not reach it), with stdin, stdout and stderr connected
/// to `/dev/null` and the caller's environment plus [`LaunchOptions::env`] minus `TMUX` and
/// `TMUX_PANE`.
///
/// Outcomes: a spawn failure is [`Error::Spawn`]; an exit with a non-zero status or by a signal
/// within the grace period is [`Error::ExitedEarly`]; an exit with status 0 within it is
/// [`Launched::HandedOff`]; a process still running after it is [`Launched::Running`]. A thread
/// waits for the child in every case, so no zombie remains, also in a long-lived caller.
pub fn launch(command: &TerminalCommand, options: &LaunchOptions) -> Result<Launched, Error> {
    let program = || command.program.clone();
    // The reaper thread exists before the child does, so a child is never left unwatched.
    let (child_sender, child_receiver) = mpsc::channel::<Child>();
    let (status_sender, status_receiver) = mpsc::channel();
    thread::Builder::new()
        .name("external-term-reaper".to_owned())
        .spawn(move || reap(&child_receiver, &status_sender))
        .map_err(|error| Error::Watch { program: program(), error })?;

    // On a spawn error `child_sender` is dropped, which ends the reaper thread.
    let child = Command::new(&command.program)
        .args(&command.args)
        .envs(options.env.iter().map(|(name, value)| (name, value)))
        .env_remove("TMUX")
        .env_remove("TMUX_PANE")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|error| Error::Spawn { program: program(), error })?;
    let pid = child.id();
    if let Err(mpsc::SendError(mut child)) = child_sender.send(child) {
        // The reaper is gone (it cannot be, short of a panic); wait here rather than leak a zombie.
        let status = child.wait().map_err(|error| Error::Watch { program: program(), error })?;
        return judge(command, options, pid, status);
    }

    match status_receiver.recv_timeout(options.grace_period) {
        Err(mpsc::RecvTimeoutError::Timeout) => Ok(Launched::Running { pid }),
        Ok(Ok(status)) => judge(command, options, pid, status),
        Ok(Err(error)) => Err(Error::Watch { program: program(), error }),
        Err(mpsc::RecvTimeoutError::Disconnected) => Err(Error::Watch {
            program: program(),
            error: io::Error::other("the reaper thread stopped"),
        }),
    }
}

/// The verdict on an emulator that exited within the grace period.
fn judge(
    command: &TerminalCommand,
    options: &LaunchOptions,
    pid: u32,
    status: ExitStatus,
) -> Result<Launched, Error> {
    if status.success() {
        return Ok(Launched::HandedOff { pid });
    }
    Err(Error::ExitedEarly {
        program: command.program.clone(),
        status,
        grace_period: options.grace_period,
    })
}

/// Receives the child, waits for it and reports how it ended. The status receiver may be gone by
/// then (grace period over), which is fine: the point is that the child is reaped.
fn reap(child: &mpsc::Receiver<Child>, status: &mpsc::Sender<io::Result<ExitStatus>>) {
    let Ok(mut child) = child.recv() else { return };
    let _ = status.send(child.wait());
}
