//! The agent process: spawned directly (no shell) in its own process group with piped stdin and
//! stdout, and stopped by closing stdin, then SIGTERM, then SIGKILL to its group (`spec/acp.md`
//! §2.2, §2.11). It dies with the front end even when the front end is killed with SIGKILL: the
//! kernel sends it SIGKILL when we die (Linux's parent-death signal, set between fork and exec),
//! and the MCP bridge it started then reads the end of its stdin and exits. What an agent that
//! exited or crashed left in its group is ended too (`spec/acp.md` §2.21), and the last lines it
//! wrote to its stderr log since it started are at hand for the report of its end.
//!
//! The parent-death signal reaches only the agent: a process it started that does not read its
//! stdin (a build, a server) would outlive a front end killed with SIGKILL. A guard ends the whole
//! group then: a small `sh` in a group of its own, whose stdin is a pipe only we write to; when we
//! end, however we end, it reads the end of its input and sends SIGTERM, then SIGKILL, to the
//! agent's group (nothing, when the group is already empty).
//!
//! The parent-death signal is sent when the *thread* that forked the agent ends: the agent is
//! always spawned from the runtime's one thread (never from a blocking-pool thread, which ends
//! when idle).

use std::ffi::OsString;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use rustix::process::{Pid, Signal, kill_process_group, test_kill_process_group};
use tokio::process::{ChildStdin, ChildStdout, Command};
use tokio::sync::watch;
use tokio::time::timeout;

/// The guard's script: `$1` is the agent's process group.
const GUARD: &str = "read _ ; kill -s TERM -- \"-$1\" 2>/dev/null && sleep 0.5 && kill -s KILL -- \"-$1\" 2>/dev/null; exit 0";

/// How long each stage of stopping waits for the agent to exit.
const STOP_GRACE: Duration = Duration::from_secs(2);
/// How long what is left of an agent's group has between SIGTERM and SIGKILL.
const GROUP_GRACE: Duration = Duration::from_millis(500);
/// How many of the last lines of the agent's stderr a report of its end shows.
pub(crate) const STDERR_TAIL_LINES: usize = 5;
/// How much of the end of the agent's stderr log is read for them.
const STDERR_TAIL_BYTES: u64 = 16 * 1024;
/// The longest stderr line a report shows, in characters.
const STDERR_LINE_CHARS: usize = 300;

/// A running agent. Its process is owned by a task that waits for its exit and publishes the
/// status, so that an agent that dies while something it started holds its stdout open (the
/// reader then sees no end) is noticed all the same.
#[derive(Debug)]
pub(crate) struct Agent {
    pid: Option<Pid>,
    group: Option<Pid>,
    exit: watch::Receiver<Option<ExitStatus>>,
    /// The guard's stdin: closed when the agent is dropped or we end, then it ends the group.
    _guard: Option<ChildStdin>,
    /// The file its stderr goes to and how long the file was when it started.
    log: Option<(PathBuf, u64)>,
}

impl Agent {
    /// Starts `argv` in `cwd` with its stderr going to `stderr`, which is appended to the file
    /// `log` when there is one (the last lines it writes there are then at hand).
    pub(crate) fn spawn(
        argv: &[OsString],
        cwd: &Path,
        stderr: Stdio,
        log: Option<&Path>,
    ) -> io::Result<(Agent, ChildStdin, ChildStdout)> {
        let Some((program, arguments)) = argv.split_first() else {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "no agent command"));
        };
        // Before the spawn: the agent may write at once.
        let log = log.map(|path| {
            let start = std::fs::metadata(path).map_or(0, |metadata| metadata.len());
            (path.to_path_buf(), start)
        });
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
        let pid = child.id().and_then(|id| i32::try_from(id).ok()).filter(|id| *id > 1);
        let pid = pid.and_then(Pid::from_raw);
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(io::Error::other("the agent's stdio was not piped"));
        };
        let (published, exit) = watch::channel(None);
        tokio::spawn(async move {
            // `kill_on_drop`: a runtime that ends first takes the agent with it.
            if let Ok(status) = child.wait().await {
                let _ = published.send(Some(status));
            }
        });
        let guard = pid.and_then(guard);
        Ok((Agent { pid, group: pid, exit, _guard: guard, log }, stdin, stdout))
    }

    /// Waits for the agent to exit on its own (after its stdin was closed), then SIGTERM, then
    /// SIGKILL; every stage waits [`STOP_GRACE`]. Whatever is left of its process group is sent
    /// SIGTERM at the end. Returns how it exited, if known.
    pub(crate) async fn stop(&mut self) -> Option<ExitStatus> {
        let mut status = self.exited_within(STOP_GRACE).await;
        for signal in [Signal::TERM, Signal::KILL] {
            if status.is_some() {
                break;
            }
            if let Some(group) = self.group {
                let _ = kill_process_group(group, signal);
            }
            status = self.exited_within(STOP_GRACE).await;
        }
        if status.is_none()
            && let Some(pid) = self.pid
        {
            let _ = rustix::process::kill_process(pid, Signal::KILL);
            status = self.exited_within(STOP_GRACE).await;
        }
        self.end_group().await;
        status
    }

    /// The exit status if the agent has already exited.
    pub(crate) fn try_status(&self) -> Option<ExitStatus> {
        *self.exit.borrow()
    }

    /// Waits at most `limit` for the agent to exit.
    pub(crate) async fn exited_within(&self, limit: Duration) -> Option<ExitStatus> {
        let mut exit = self.exit.clone();
        match timeout(limit, exit.wait_for(Option::is_some)).await {
            Ok(Ok(status)) => *status,
            _ => None,
        }
    }

    /// Resolves when the agent has exited (never, if its waiter is gone).
    pub(crate) fn exited(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut exit = self.exit.clone();
        async move {
            if exit.wait_for(Option::is_some).await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }

    /// Ends what the agent left in its process group after it exited, crashed or was stopped:
    /// SIGTERM, and SIGKILL to whatever is still there [`GROUP_GRACE`] later (the bridge and the
    /// commands a crashed agent started would otherwise outlive the front end).
    pub(crate) async fn end_group(&mut self) {
        let Some(group) = self.group else { return };
        // An error means the group is empty.
        if kill_process_group(group, Signal::TERM).is_err() {
            return;
        }
        let deadline = tokio::time::Instant::now() + GROUP_GRACE;
        while tokio::time::Instant::now() < deadline {
            if test_kill_process_group(group).is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let _ = kill_process_group(group, Signal::KILL);
    }

    /// The file the agent's stderr goes to, if a file.
    pub(crate) fn log_path(&self) -> Option<&Path> {
        self.log.as_ref().map(|(path, _)| path.as_path())
    }

    /// The last lines (at most [`STDERR_TAIL_LINES`]) the agent wrote to its stderr log since it
    /// started, blank lines left out; empty when it wrote nothing or its stderr is not a file.
    pub(crate) fn stderr_tail(&self) -> Vec<String> {
        let Some((path, start)) = &self.log else { return Vec::new() };
        tail_lines(path, *start, STDERR_TAIL_LINES).unwrap_or_default()
    }
}

/// The last `count` non-blank lines of the file at `path` after byte `start`, each cut to
/// [`STDERR_LINE_CHARS`] characters.
pub(crate) fn tail_lines(path: &Path, start: u64, count: usize) -> io::Result<Vec<String>> {
    let mut file = std::fs::File::open(path)?;
    let length = file.metadata()?.len();
    let from = start.max(length.saturating_sub(STDERR_TAIL_BYTES));
    file.seek(SeekFrom::Start(from))?;
    let mut bytes = Vec::new();
    file.take(length - from.min(length)).read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes);
    let mut lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    // A first line that starts inside the file's middle is cut: leave it out.
    if from > start && !lines.is_empty() {
        lines.remove(0);
    }
    let kept: Vec<String> = lines
        .into_iter()
        .filter(|line| !line.trim().is_empty())
        .map(|line| match line.char_indices().nth(STDERR_LINE_CHARS) {
            Some((at, _)) => format!("{}…", &line[..at]),
            None => line.to_owned(),
        })
        .collect();
    Ok(kept[kept.len().saturating_sub(count)..].to_vec())
}

/// Starts the guard of the group `group` (see the module documentation); its stdin, if it
/// started. It is reaped by a task of its own.
fn guard(group: Pid) -> Option<ChildStdin> {
    let mut command = Command::new("/bin/sh");
    command
        .args(["-c", GUARD, "sh"])
        .arg(group.as_raw_nonzero().to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // Its own group: a Ctrl-C typed into the node does not end it.
        .process_group(0)
        .kill_on_drop(false);
    let mut child = command.spawn().ok()?;
    let stdin = child.stdin.take();
    tokio::spawn(async move {
        let _ = child.wait().await;
    });
    stdin
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
