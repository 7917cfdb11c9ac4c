//! The agent process: spawned directly (no shell) in its own process group with piped stdin and
//! stdout, and stopped by closing stdin, then SIGTERM, then SIGKILL to its group (`spec/acp.md`
//! §2.2, §2.11). It dies with the front end even when the front end is killed with SIGKILL: the
//! kernel sends it SIGKILL when we die (Linux's parent-death signal, set between fork and exec),
//! and the MCP bridge it started then reads the end of its stdin and exits.

use std::ffi::OsString;
use std::io;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use rustix::process::{Pid, Signal, kill_process_group};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::time::timeout;

/// How long each stage of stopping waits for the agent to exit.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// A running agent.
#[derive(Debug)]
pub(crate) struct Agent {
    child: Child,
    group: Option<Pid>,
}

impl Agent {
    /// Starts `argv` in `cwd` with its stderr going to `stderr`.
    pub(crate) fn spawn(
        argv: &[OsString],
        cwd: &Path,
        stderr: Stdio,
    ) -> io::Result<(Agent, ChildStdin, ChildStdout)> {
        let Some((program, arguments)) = argv.split_first() else {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "no agent command"));
        };
        let parent = rustix::process::getpid();
        let mut command = Command::new(program);
        command
            .args(arguments)
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .process_group(0)
            .kill_on_drop(true);
        // SAFETY: the closure runs in the child between fork and exec and calls only `prctl` and
        // `getppid`, which are async-signal-safe system calls; it allocates nothing and takes no
        // lock.
        #[expect(unsafe_code, reason = "pre_exec is the only way to set the parent-death signal")]
        unsafe {
            command.pre_exec(move || die_with_parent(parent));
        }
        let mut child = command.spawn()?;
        let group = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .filter(|id| *id > 1)
            .and_then(Pid::from_raw);
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(io::Error::other("the agent's stdio was not piped"));
        };
        Ok((Agent { child, group }, stdin, stdout))
    }

    /// Waits for the agent to exit on its own (after its stdin was closed), then SIGTERM, then
    /// SIGKILL; every stage waits [`STOP_GRACE`]. Whatever is left of its process group is sent
    /// SIGTERM at the end. Returns how it exited, if known.
    pub(crate) async fn stop(&mut self) -> Option<ExitStatus> {
        let mut status = timeout(STOP_GRACE, self.child.wait()).await.ok().and_then(Result::ok);
        for signal in [Signal::TERM, Signal::KILL] {
            if status.is_some() {
                break;
            }
            if let Some(group) = self.group {
                let _ = kill_process_group(group, signal);
            }
            status = timeout(STOP_GRACE, self.child.wait()).await.ok().and_then(Result::ok);
        }
        if status.is_none() {
            let _ = self.child.start_kill();
            status = self.child.wait().await.ok();
        }
        if let Some(group) = self.group {
            // Children the agent left in its group; an error means none is left.
            let _ = kill_process_group(group, Signal::TERM);
        }
        status
    }

    /// The exit status if the agent has already exited.
    pub(crate) fn try_status(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }
}

/// In the child before exec: SIGKILL when the front end dies, and an exit at once if it already
/// died before the signal was set (then the parent is no longer `parent`).
fn die_with_parent(parent: Pid) -> io::Result<()> {
    rustix::process::set_parent_process_death_signal(Some(Signal::KILL))?;
    if rustix::process::getppid() != Some(parent) {
        return Err(io::Error::other("the front end exited before the agent started"));
    }
    Ok(())
}

/// Describes an exit status for a message: `exit code 3`, `signal 15`.
pub(crate) fn describe(status: Option<ExitStatus>) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Some(status) => match (status.code(), status.signal()) {
            (Some(code), _) => format!("exit code {code}"),
            (None, Some(signal)) => format!("signal {}", crate::terminal::signal_name(signal)),
            (None, None) => "an unknown status".to_owned(),
        },
        None => "an unknown status".to_owned(),
    }
}
