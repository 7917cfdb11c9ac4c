//! The faults under headless that the soak injects besides the server kills (issue 29,
//! `docs/reliability.md`): the disk under the data directory filled and freed ([`Tmpfs`]) and
//! `canvas.json` damaged between a stop and a start ([`damage`]); and which tool errors each one
//! explains ([`FaultLog::explains`]): a call that overlaps a fault may fail with that fault's
//! clear error, and with nothing else.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Instant;

use serde_json::Value;

use crate::base::lock;

/// The size of the data directory's tmpfs: the filler takes whatever the run's files leave. A
/// tmpfs gives every file at least a 4 KiB page, so the task files (a ten-minute run acknowledges
/// about 1,700) alone take near 7 MiB; an 8 MiB tmpfs filled up by itself after 440 s.
pub const TMPFS_SIZE: &str = "64m";

/// A fault that lasts a while, during which calls may fail with its clear error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The data directory's filesystem is full.
    DiskFull,
    /// The managed tmux server was killed; the fault lasts until the load runs on new agents,
    /// terminals and tickers.
    TmuxKilled,
}

/// The explanation counted for a write refused on a full disk.
pub const DISK_FULL: &str =
    "the disk was full: the write was refused with No space left on device, nothing applied";
/// The explanation counted for a call that tmux's death failed.
pub const TMUX_KILLED: &str =
    "the tmux server was killed: the call's agent, terminal or ticker had ended with it";

/// The error texts a fault explains: a write that a full disk refused (`cannot save the
/// canvas: …` or `cannot save the task: …`, ending with the OS's `No space left on device`); for
/// a killed tmux, exactly: a pending wait or run told that tmux went away, a write into a
/// terminal whose session ended (`Terminal is not attached`), a key press or paste the dying
/// control client carried (`tmux send-keys was sent, but … it may have run, so it was not sent
/// again`: never sent twice, so the caller is told), and a call of an agent whose
/// session the liveness check revoked because its tmux session ended (the transport's
/// `Unknown or revoked session`, the queue's `Session revoked`).
///
/// Nothing else: a raw tmux failure (`tmux <command> failed: no server running …`) or a broken
/// pipe to a dying tmux is not a clear error, so it fails the run (headless answers the node's
/// session is not running then, and tests it).
pub fn explained_by(fault: Fault, error: &str) -> Option<&'static str> {
    use termsprawl_headless::messages::{
        MAY_HAVE_RUN, NOT_ATTACHED, SESSION_REVOKED, TMUX_GONE_WHILE_WAITING,
    };
    match fault {
        Fault::TmuxKilled => {
            let exact = [
                TMUX_GONE_WHILE_WAITING,
                NOT_ATTACHED,
                SESSION_REVOKED,
                termsprawl_transport::server::UNKNOWN_SESSION,
            ]
            .contains(&error);
            // A key press or paste the control client carried when tmux died with it: it may
            // have run, so it was not sent again (issue 36).
            let carried = error.starts_with("tmux ")
                && error.ends_with(&format!(" was sent, but {MAY_HAVE_RUN}"));
            (exact || carried).then_some(TMUX_KILLED)
        }
        Fault::DiskFull => {
            let write = ["cannot save the canvas: ", "cannot save the task: "]
                .iter()
                .any(|prefix| error.starts_with(prefix));
            (write && error.ends_with("No space left on device (os error 28)")).then_some(DISK_FULL)
        }
    }
}

/// Whether `task` (an `agent_send` answer or `agent_task` view) failed because its delivery
/// met a fault of `fault`'s kind: `state: failed` with `Delivery failed: <explained error>`.
pub fn delivery_failed_by(fault: Fault, task: &Value) -> bool {
    task["state"] == "failed"
        && task["response"]
            .as_str()
            .and_then(|response| response.strip_prefix("Delivery failed: "))
            .is_some_and(|error| explained_by(fault, error).is_some())
}

/// One fault, from its start to its end (`None` while it lasts).
#[derive(Debug, Clone, Copy)]
pub struct Span {
    /// What.
    pub fault: Fault,
    /// When it began.
    pub from: Instant,
    /// When it ended.
    pub to: Option<Instant>,
}

/// What the load threads must know of the faults.
#[derive(Debug, Default)]
pub struct FaultLog {
    /// Every fault so far.
    pub spans: Mutex<Vec<Span>>,
    /// The ticks each follower has seen so far (by follower).
    pub progress: Mutex<Vec<u64>>,
}

impl FaultLog {
    /// A fault begins now.
    pub fn begin(&self, fault: Fault) {
        lock(&self.spans).push(Span { fault, from: Instant::now(), to: None });
    }

    /// The fault that began last ends now.
    pub fn end(&self) {
        if let Some(span) = lock(&self.spans).last_mut() {
            span.to.get_or_insert_with(Instant::now);
        }
    }

    /// Whether a fault of kind `fault` lasted at some moment between `since` and now.
    pub fn overlapped(&self, fault: Fault, since: Instant) -> bool {
        lock(&self.spans)
            .iter()
            .any(|span| span.fault == fault && span.to.is_none_or(|to| to >= since))
    }

    /// The explanation of a tool error of a call sent at `since` and answered now, when a fault
    /// it overlapped explains it.
    pub fn explains(&self, since: Instant, error: &str) -> Option<&'static str> {
        lock(&self.spans)
            .iter()
            .filter(|span| span.to.is_none_or(|to| to >= since))
            .find_map(|span| explained_by(span.fault, error))
    }
}

/// A tmpfs mounted on the data directory for the run, lazily unmounted when dropped.
#[derive(Debug)]
pub struct Tmpfs {
    path: PathBuf,
}

impl Tmpfs {
    /// Mounts a [`TMPFS_SIZE`] tmpfs on `path` (created); the reason when that is not possible
    /// (not root, `mount` refused).
    pub fn mount(path: &Path) -> Result<Tmpfs, String> {
        if !rustix::process::geteuid().is_root() {
            return Err("not running as root".to_owned());
        }
        fs::create_dir_all(path)
            .map_err(|error| format!("cannot create {}: {error}", path.display()))?;
        let output = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={TMPFS_SIZE},mode=0700"), "tmpfs"])
            .arg(path)
            .output()
            .map_err(|error| format!("cannot run mount: {error}"))?;
        if !output.status.success() {
            return Err(format!(
                "mount refused: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            ));
        }
        Ok(Tmpfs { path: path.to_owned() })
    }

    /// The filler's path.
    pub fn filler(&self) -> PathBuf {
        self.path.join("soak-filler")
    }

    /// Writes the filler until the filesystem is full; answers how many bytes it holds.
    pub fn fill(&self) -> anyhow::Result<u64> {
        let mut file = fs::File::create(self.filler())?;
        for chunk in [1 << 20, 4096, 1] {
            let block = vec![0_u8; chunk];
            while file.write_all(&block).is_ok() {}
        }
        Ok(file.metadata()?.len())
    }

    /// Removes the filler.
    pub fn free(&self) -> std::io::Result<()> {
        fs::remove_file(self.filler())
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.path).status();
    }
}

/// How `canvas.json` is damaged: the first half of its bytes (a torn write), or garbage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Damage {
    /// Cut in the middle.
    Truncated,
    /// Replaced by bytes that are not JSON.
    Garbage,
}

/// Damages the file at `path`; answers the damaged content.
pub fn damage(path: &Path, how: Damage) -> anyhow::Result<Vec<u8>> {
    let content = fs::read(path)?;
    let damaged = match how {
        Damage::Truncated => content[..content.len() / 2].to_vec(),
        Damage::Garbage => b"\x00soak: not a canvas {".to_vec(),
    };
    fs::write(path, &damaged)?;
    Ok(damaged)
}
