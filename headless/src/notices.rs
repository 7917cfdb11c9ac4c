//! Run notices (protocol 1.5.0, `spec/protocol.md` §4.9): a `terminal_run` with `notify: true`
//! whose answer said `running: true` submits one line into its caller's own agent node when the
//! command ends, unless an answer to that caller has reported the end first.
//!
//! A notice goes through these states, [`NoticeState`]:
//! `armed` (the run's own answer is still being waited for; in memory only) →
//! `due` (that answer said running) → `delivered`, `reported` (an answer to the caller said
//! `running: false` first) or `dropped` (the caller's agent node was gone). Every state but
//! `armed` is kept in `D/terminals/<nodeId>.notify` (written atomically and fsync'd, beside the
//! run node's other files), so a due notice survives a restart and a delivered one is never
//! delivered again: the state turns `delivered` on disk before the line is typed (a crash in
//! between loses that notice rather than typing it twice).
//!
//! The one background task of [`run`] watches each due run node's files (woken by the stream
//! watch, never polling) until the command has ended, waits for the answers to the caller about
//! the node being made ([`Answering`]) and for the caller's node to be ready and idle: an agent
//! program, never a shell, reads its terminal (a shell would run the line as a command:
//! `[termsprawl]` is a glob, and `read it with` runs `read`), it printed nothing for
//! [`OUTPUT_QUIET`] and no key came for [`KEY_QUIET_SECS`] (`Config::notice_idle_limit` at most:
//! the only timed re-checks, and only while that node is not ready). Then it submits the line
//! with `Terminals::submit_line`, the way `agent_send` delivers a request; a node never ready
//! within the limit gets no notice (dropped, with a log line).

use std::collections::{HashMap, HashSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::sync::{Notify, mpsc};
use tokio::task::JoinSet;

use crate::foreground::{self, Processes};
use crate::terminals::{Ask, PaneState, Terminals};
use termsprawl_protocol::results::{RUN_NOTICE_READ, RUN_NOTICE_START, signal_name};
use termsprawl_transport::sync::lock;

/// How long the caller's node must have printed nothing before a notice is typed into it.
pub(crate) const OUTPUT_QUIET: Duration = Duration::from_secs(1);
/// How many whole seconds (tmux's `client_activity` resolution) must have passed since a
/// person's last key in the caller's node: 3 means at least 2 s of quiet.
pub(crate) const KEY_QUIET_SECS: u64 = 3;
/// How often a due notice looks again at a caller's node where no agent program reads (a shell
/// in the foreground, or a program at work): nothing else tells when that changes.
pub(crate) const NOT_READY_RECHECK: Duration = Duration::from_millis(250);
/// The longest command a notice quotes, in characters; a longer one is cut and ends in `…`.
pub(crate) const COMMAND_CHARS: usize = 80;

/// Where a run's notice stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum NoticeState {
    /// `terminal_run` has not answered yet (never on disk).
    Armed,
    /// Its answer said running: the notice goes once the command ends.
    Due,
    /// The line was submitted (or is being submitted) into the caller's node.
    Delivered,
    /// An answer to the caller reported the end first: no notice.
    Reported,
    /// The caller's agent node was gone when the notice was due: no notice.
    Dropped,
}

/// One run's notice, as `<nodeId>.notify` holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Notice {
    /// The agent node that called `terminal_run`, and the only one the notice goes to.
    pub(crate) caller: String,
    pub(crate) project_id: String,
    pub(crate) command: String,
    /// When `terminal_run` was called, in milliseconds since the epoch.
    pub(crate) started_at: u64,
    /// The cursor of the latest answer the caller got about the node: reading on from it the
    /// caller misses nothing.
    pub(crate) since: u64,
    pub(crate) state: NoticeState,
    /// Answers to the caller about the node being made now (a wait may take 30 s): the notice
    /// waits for them, since one may report the end.
    #[serde(skip)]
    answering: u32,
}

/// An answer to a notice's caller about its node, being made: the notice is not typed until it
/// is dropped ([`Notices::answering`]).
#[derive(Debug)]
pub(crate) struct Answering<'a> {
    notices: &'a Notices,
    node_id: String,
    counted: bool,
}

impl Drop for Answering<'_> {
    fn drop(&mut self) {
        if self.counted {
            if let Some(notice) = lock(&self.notices.entries).get_mut(&self.node_id) {
                notice.answering = notice.answering.saturating_sub(1);
            }
            self.notices.released.notify_waiters();
        }
    }
}

/// Every run notice of the server.
#[derive(Debug)]
pub(crate) struct Notices {
    dir: PathBuf,
    entries: Mutex<HashMap<String, Notice>>,
    /// Run nodes whose notice became due, for the task of [`run`].
    due: mpsc::UnboundedSender<String>,
    receiver: Mutex<Option<mpsc::UnboundedReceiver<String>>>,
    /// Notified whenever an [`Answering`] ends.
    released: Notify,
}

impl Notices {
    /// The notices kept in `dir` (`D/terminals/`): every `<nodeId>.notify` that reads. Those still
    /// due are handed to [`run`] once it starts.
    pub(crate) fn load(dir: &Path) -> Notices {
        let (due, receiver) = mpsc::unbounded_channel();
        let mut entries = HashMap::new();
        if let Ok(listing) = std::fs::read_dir(dir) {
            for entry in listing.flatten() {
                let name = entry.file_name();
                let Some(node_id) = name.to_str().and_then(|name| name.strip_suffix(".notify"))
                else {
                    continue;
                };
                let Ok(bytes) = std::fs::read(entry.path()) else { continue };
                let Ok(mut notice) = serde_json::from_slice::<Notice>(&bytes) else { continue };
                if notice.state == NoticeState::Armed {
                    // Never written so; its answer cannot come any more.
                    notice.state = NoticeState::Dropped;
                }
                if notice.state == NoticeState::Due {
                    let _ = due.send(node_id.to_owned());
                }
                entries.insert(node_id.to_owned(), notice);
            }
        }
        Notices {
            dir: dir.to_path_buf(),
            entries: Mutex::new(entries),
            due,
            receiver: Mutex::new(Some(receiver)),
            released: Notify::new(),
        }
    }

    fn file(&self, node_id: &str) -> PathBuf {
        self.dir.join(format!("{node_id}.notify"))
    }

    fn save(&self, node_id: &str, notice: &Notice) -> std::io::Result<()> {
        let bytes = serde_json::to_vec(notice).map_err(std::io::Error::other)?;
        termsprawl_transport::server::write_atomic(&self.file(node_id), &bytes)
    }

    /// `terminal_run` with `notify: true`, called by the agent node `caller` at `started`,
    /// started `node_id`.
    pub(crate) fn arm(
        &self,
        node_id: &str,
        caller: &str,
        project_id: &str,
        command: &str,
        started: SystemTime,
    ) {
        let notice = Notice {
            caller: caller.to_owned(),
            project_id: project_id.to_owned(),
            command: command.to_owned(),
            started_at: millis(started),
            since: 0,
            state: NoticeState::Armed,
            answering: 0,
        };
        lock(&self.entries).insert(node_id.to_owned(), notice);
    }

    /// An answer about `node_id` to `reader` begins: while it is being made, the node's notice
    /// (if `reader` is its caller) waits, and [`Notices::answered`] says what the answer said.
    pub(crate) fn answering(&self, node_id: &str, reader: &str) -> Answering<'_> {
        let mut entries = lock(&self.entries);
        let notice = entries.get_mut(node_id).filter(|notice| {
            notice.caller == reader && matches!(notice.state, NoticeState::Armed | NoticeState::Due)
        });
        let counted = notice.map(|notice| notice.answering += 1).is_some();
        Answering { notices: self, node_id: node_id.to_owned(), counted }
    }

    /// An answer about `node_id` to `reader` (a `terminal_run`, `terminal_wait`, `terminal_read`
    /// or `terminal_kill`) said `running` with `cursor`. Only answers to the notice's caller
    /// count: the run's own answer makes the notice due (running) or unnecessary (ended); a later
    /// one moves the cursor the notice names (running) or makes it unnecessary (ended).
    pub(crate) fn answered(&self, node_id: &str, reader: &str, cursor: u64, running: bool) {
        let mut entries = lock(&self.entries);
        let Some(notice) = entries.get_mut(node_id) else { return };
        if notice.caller != reader {
            return;
        }
        let before = notice.clone();
        match (notice.state, running) {
            (NoticeState::Armed, false) => {
                entries.remove(node_id);
                return;
            }
            (NoticeState::Armed, true) => notice.state = NoticeState::Due,
            (NoticeState::Due, false) => notice.state = NoticeState::Reported,
            (NoticeState::Due, true) => {}
            _ => return,
        }
        notice.since = notice.since.max(cursor);
        if *notice == before {
            return;
        }
        let notice = notice.clone();
        if let Err(error) = self.save(node_id, &notice) {
            log(&format!("cannot record the notice of {node_id}: {error}"));
        }
        if before.state == NoticeState::Armed {
            let _ = self.due.send(node_id.to_owned());
        }
    }

    /// `terminal_run` failed before it answered (the node was closed, tmux went away): no notice.
    pub(crate) fn disarm(&self, node_id: &str) {
        let mut entries = lock(&self.entries);
        if entries.get(node_id).is_some_and(|notice| notice.state == NoticeState::Armed) {
            entries.remove(node_id);
        }
    }

    /// Whether a notice is still to come for `node_id` (`terminal_list`'s `notify`): its run
    /// asked for one, and it has been neither delivered nor made unnecessary.
    #[allow(
        dead_code,
        reason = "terminal_list's `notify` reads it (another branch); remove once merged"
    )]
    pub(crate) fn notifies(&self, node_id: &str) -> bool {
        lock(&self.entries)
            .get(node_id)
            .is_some_and(|notice| matches!(notice.state, NoticeState::Armed | NoticeState::Due))
    }

    /// The node was closed: its notice goes with its files.
    pub(crate) fn forget(&self, node_id: &str) {
        lock(&self.entries).remove(node_id);
        let _ = std::fs::remove_file(self.file(node_id));
    }

    /// The notice of `node_id` while it is due.
    fn due(&self, node_id: &str) -> Option<Notice> {
        lock(&self.entries).get(node_id).filter(|notice| notice.state == NoticeState::Due).cloned()
    }

    /// Moves a due notice to `state` and records it; answers the notice as it was while due, or
    /// `None` when it was not due (any more), when an answer to its caller is being made (then it
    /// stays due: that answer may report the end) or when the record could not be written (then
    /// it stays due, and nothing may be typed: a restart would type it again).
    fn settle(&self, node_id: &str, state: NoticeState) -> Option<Notice> {
        let mut entries = lock(&self.entries);
        let notice = entries.get_mut(node_id).filter(|notice| notice.state == NoticeState::Due)?;
        if notice.answering > 0 {
            return None;
        }
        let due = notice.clone();
        notice.state = state;
        let settled = notice.clone();
        if let Err(error) = self.save(node_id, &settled) {
            log(&format!("cannot record the notice of {node_id}: {error}"));
            notice.state = NoticeState::Due;
            return None;
        }
        Some(due)
    }
}

/// What the notices need from the server, handed to [`run`] by its owner (the engine implements
/// it): the notices never import the engine.
pub(crate) trait Host: Send + Sync + 'static {
    /// The run notices.
    fn notices(&self) -> &Notices;
    /// The terminal nodes: their files, states and input.
    fn terminals(&self) -> &Terminals;
    /// How long a notice waits at most for its caller's node to be ready and idle
    /// (`Config::notice_idle_limit`).
    fn notice_idle_limit(&self) -> Duration;
    /// Whether `node_id` is an agent node of the project `project_id`.
    fn is_agent_node(&self, project_id: &str, node_id: &str) -> bool;
}

/// The background task of the notices: watches every run node whose notice is due until the
/// notice is delivered or unnecessary. Ends when the server closes (aborting it ends every
/// watch).
pub(crate) async fn run<H: Host>(host: Arc<H>) {
    let Some(mut receiver) = lock(&host.notices().receiver).take() else { return };
    let mut watches = JoinSet::new();
    let mut watching: HashSet<String> = HashSet::new();
    loop {
        tokio::select! {
            node_id = receiver.recv() => {
                let Some(node_id) = node_id else { return };
                if watching.insert(node_id.clone()) {
                    watches.spawn(watch(Arc::clone(&host), node_id));
                }
            }
            Some(done) = watches.join_next() => {
                if let Ok(node_id) = done {
                    watching.remove(&node_id);
                }
            }
        }
    }
}

/// Waits, woken by every change of its files, until the command of `node_id` has ended, then
/// delivers its notice. Answers `node_id`.
async fn watch<H: Host>(host: Arc<H>, node_id: String) -> String {
    let stream = host.terminals().stream(&node_id);
    let mut changes = stream.subscribe();
    let state = loop {
        if host.notices().due(&node_id).is_none() || stream.look().closed {
            return node_id;
        }
        if let Some(state) = ended(&*host, &node_id).await {
            break state;
        }
        if changes.changed().await.is_err() {
            return node_id;
        }
    };
    deliver(&*host, &node_id, state).await;
    node_id
}

/// How the command of `node_id` ended, once it has: its retired record, its wrapper's recorded
/// status, else tmux's dead pane. tmux is asked only once the node's files show an end.
async fn ended(host: &impl Host, node_id: &str) -> Option<PaneState> {
    match host.terminals().state(node_id, Ask::Recorded).await {
        Ok(state) if state.dead => Some(state),
        _ => None,
    }
}

/// When the command of `node_id` ended as the server knows it: when its wrapper recorded the
/// exit, else when tmux's hook saw the pane die, else now.
fn ended_at(host: &impl Host, node_id: &str) -> SystemTime {
    let files = host.terminals().files();
    [files.status_file(node_id), files.died_file(node_id)]
        .iter()
        .find_map(|path| std::fs::metadata(path).and_then(|metadata| metadata.modified()).ok())
        .unwrap_or_else(SystemTime::now)
}

/// Waits for the caller's node to be ready (an agent program, not a shell, reads its terminal)
/// and idle, at most `Config::notice_idle_limit`, then records the notice delivered and submits
/// its line. At the limit, a node where an agent program reads gets the line anyway (an agent in
/// the middle of a turn queues it); any other gets none: the notice is dropped, with a log line.
/// A caller whose agent node is gone gets nothing.
async fn deliver(host: &impl Host, node_id: &str, state: PaneState) {
    let ended_at = ended_at(host, node_id);
    let Some(notice) = host.notices().due(node_id) else { return };
    let deadline = tokio::time::Instant::now() + host.notice_idle_limit();
    loop {
        if !caller_present(host, &notice).await {
            host.notices().settle(node_id, NoticeState::Dropped);
            return;
        }
        let reader = agent_reading(host, &notice.caller).await;
        let busy = busy_for(host, &notice.caller).await;
        let now = tokio::time::Instant::now();
        if reader.is_some() && (busy.is_zero() || now >= deadline) {
            break;
        }
        if now >= deadline {
            if host.notices().settle(node_id, NoticeState::Dropped).is_some() {
                log(&format!(
                    "dropped the notice of {node_id}: no agent program read the terminal of {} within {} s (its foreground program was a shell, or busy)",
                    notice.caller,
                    host.notice_idle_limit().as_secs()
                ));
            }
            return;
        }
        let wait = if reader.is_some() { busy } else { NOT_READY_RECHECK };
        tokio::time::sleep_until((now + wait).min(deadline)).await;
    }
    // An answer to the caller being made may report the end: then no notice.
    let notice = loop {
        let released = host.notices().released.notified();
        if let Some(notice) = host.notices().settle(node_id, NoticeState::Delivered) {
            break notice;
        }
        if host.notices().due(node_id).is_none() {
            return;
        }
        released.await;
    };
    let started_at = UNIX_EPOCH + Duration::from_millis(notice.started_at);
    let took = ended_at.duration_since(started_at).unwrap_or_default();
    let line = notice_line(node_id, &notice.command, &state, took, notice.since);
    if let Err(error) = host.terminals().submit_line(&notice.caller, &line).await {
        log(&format!("cannot deliver the notice of {node_id} to {}: {error}", notice.caller));
    }
}

/// Whether the notice's caller is still an agent node of its project whose tmux session runs.
async fn caller_present(host: &impl Host, notice: &Notice) -> bool {
    host.is_agent_node(&notice.project_id, &notice.caller)
        && host.terminals().has_session(&notice.caller).await.unwrap_or(false)
}

/// The program that reads the caller's terminal now when it is not a shell
/// ([`foreground::is_shell`]): the only kind of program a notice is typed into. A shell would
/// run the line as a command.
async fn agent_reading(host: &impl Host, caller: &str) -> Option<String> {
    host.terminals().know_pane(caller).await;
    host.terminals()
        .foreground_reader(caller, &mut Processes::default())
        .filter(|program| !foreground::is_shell(program))
}

/// How much longer the caller's node stays busy at least: zero once it is idle, that is once it
/// printed nothing for [`OUTPUT_QUIET`] and no person's key reached it for [`KEY_QUIET_SECS`]
/// (tmux's `client_activity` of the clients attached to it, ours left out).
async fn busy_for(host: &impl Host, caller: &str) -> Duration {
    let now = SystemTime::now();
    // The stream file's modification time: when the pane last printed (its `cat` appends).
    let printed = host.terminals().printed_at(caller);
    let output = printed.map_or(Duration::ZERO, |at| {
        now.duration_since(at).map_or(OUTPUT_QUIET, |quiet| OUTPUT_QUIET.saturating_sub(quiet))
    });
    let keys = match host.terminals().last_key_input(caller).await {
        Ok(Some(at)) => {
            let quiet = (millis(now) / 1000).saturating_sub(at);
            Duration::from_secs(KEY_QUIET_SECS.saturating_sub(quiet))
        }
        Ok(None) | Err(_) => Duration::ZERO,
    };
    output.max(keys)
}

/// The line a notice submits (`spec/protocol.md` §4.9): `[termsprawl] NODE COMMAND ENDING after
/// DURATION; read it with terminal_read {"nodeId":"NODE","since":CURSOR}`.
pub(crate) fn notice_line(
    node_id: &str,
    command: &str,
    state: &PaneState,
    took: Duration,
    since: u64,
) -> String {
    let ending = match (state.exit_code, state.signal) {
        (Some(code), _) => format!("exited {code}"),
        (None, Some(signal)) => format!("was killed by {}", signal_name(signal)),
        (None, None) => "ended (exit status unknown)".to_owned(),
    };
    let read = json!({ "nodeId": node_id, "since": since });
    format!(
        "{RUN_NOTICE_START}{node_id} {} {ending} after {}{RUN_NOTICE_READ}{read}",
        quoted_command(command),
        duration_text(took)
    )
}

/// The command as a JSON string on one line: at most [`COMMAND_CHARS`] characters (a longer one
/// cut, ending in `…`), every control character (C0, DEL, C1) escaped as `\uXXXX` or JSON's
/// short escapes, so nothing of it acts on the terminal or ends the line.
pub(crate) fn quoted_command(command: &str) -> String {
    let mut cut: String = command.chars().take(COMMAND_CHARS).collect();
    if cut.len() < command.len() {
        cut.push('…');
    }
    let json = serde_json::to_string(&cut).unwrap_or_default();
    json.chars()
        .map(|c| match c {
            '\u{7f}'..='\u{9f}' => format!("\\u{:04x}", u32::from(c)),
            c => c.to_string(),
        })
        .collect()
}

/// `7s`, `7m02s`, `1h05m00s`: whole seconds, cut down.
pub(crate) fn duration_text(took: Duration) -> String {
    let seconds = took.as_secs();
    let (hours, minutes, seconds) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    match (hours, minutes) {
        (0, 0) => format!("{seconds}s"),
        (0, _) => format!("{minutes}m{seconds:02}s"),
        _ => format!("{hours}h{minutes:02}m{seconds:02}s"),
    }
}

fn millis(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH)
        .map_or(0, |since| u64::try_from(since.as_millis()).unwrap_or(u64::MAX))
}

/// Said on stderr (serve's log): a notice that could not be recorded or typed has a reason there.
fn log(message: &str) {
    let _ = writeln!(std::io::stderr(), "termsprawl-headless: {message}");
}

#[cfg(test)]
mod tests;
