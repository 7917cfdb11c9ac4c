//! One tmux control-mode client per managed tmux server (`tmux -C attach-session -f no-output`),
//! so that reading and typing into a node's pane costs a line on a pipe, not a tmux process.
//!
//! Commands are written one line each to the client's standard input; tmux answers every command
//! of a line with a block framed by `%begin <time> <number> <flags>` and `%end …` or `%error …`
//! carrying the same three words. Blocks answer in the order the lines were written, so the
//! pending requests are a queue. Blocks whose flags do not mark them as this client's commands
//! (the attach itself) and the notifications between blocks are read and dropped; `no-output`
//! keeps the panes' `%output` away.
//!
//! A control client has to be attached to a session, so it attaches to one of the node sessions
//! (the oldest, the likeliest to outlive the others) and holds no session of its own: the server
//! still exits with its last session, and nothing a person or an agent lists shows the client.
//! Before one of our commands ends the session it is attached to, the client is switched to
//! another (`switch-client -n`, [`Control::moving`]), so the requests it carries are answered: a
//! client ends with its session, and a key press it took with it fails rather than being pressed
//! twice. (A dedicated session of the client's own would never end under it, but the server
//! would then outlive its last node, and a person listing sessions would see it.) It ends when
//! its session ends by itself (a shell's `exit`), or when it was the last; the request that
//! finds it gone starts another, and while no
//! session runs ([`Control::request`] answers `None`) the caller runs its command as a tmux
//! process instead. A request that is not answered by its deadline drops the client (its process
//! is killed) and fails; the next starts afresh.
//!
//! A command is never run twice (the contract: mutations are not retried). A request whose line
//! never reached tmux (the client had ended before it was written, or the write failed) goes
//! again, through a new client or as a process. A request whose line was written and whose
//! client then ended before answering may have run: it goes again only when its commands are
//! [`Repeat::Safe`] (reads, and ends that have one effect however often they run); any other
//! fails with [`Unanswered::MayHaveRun`], which the caller reports as a failure it can see.
//!
//! tmux 3.3a (Debian 12's) crashes, with every session in it, when a session is created or closed
//! while a control client is still introducing itself to the server: it writes the
//! `%sessions-changed` notification through the client's control state before the client has one
//! (fixed upstream in 2026, after 3.6). So a client starts only while no command of ours creates
//! or ends a session ([`Control::hold_off_starts`]), and it attaches to the oldest session, so
//! that it rarely has to start again; a session that a person or its own program ends in that
//! moment is the risk left.

use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use termsprawl_transport::sync::lock;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::oneshot;
use tokio::time::Instant;

/// What one command of a request answered: whether it succeeded, and its output (every line
/// ending in a line feed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Block {
    pub(crate) ok: bool,
    pub(crate) output: Vec<u8>,
}

/// Why a request got no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unanswered {
    /// Not answered by its deadline (the client was dropped).
    Wedged,
    /// Written to a client that ended before answering, and not [`Repeat::Safe`]: tmux may have
    /// run it, so it is not sent again.
    MayHaveRun,
}

/// Whether a request may be sent again after a client took it with it unanswered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Repeat {
    /// Reads, and commands whose effect is the same however often they run.
    Safe,
    /// Anything else (keys typed, text pasted, a pane respawned): sent at most once.
    Never,
}

/// What became of one request written to one client.
#[derive(Debug)]
enum Sent {
    Answered(Vec<Block>),
    /// The line never reached tmux.
    NotWritten,
    /// The line was written, and the client ended before answering.
    Taken,
}

/// A session one of our commands is ending ([`Control::ending`]).
#[derive(Debug)]
pub(crate) struct Ending<'a> {
    control: &'a Control,
    session: String,
}

impl Drop for Ending<'_> {
    fn drop(&mut self) {
        lock(&self.control.ending).remove(&self.session);
    }
}

/// Where the control client sits ([`Control::attached`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Attached {
    /// No client runs.
    NoClient,
    /// A client runs, attached to a session whose name is not known (it attached to any).
    Unknown,
    /// A client runs, attached to this session.
    To(String),
}

/// The control client of one managed tmux server, started when first needed.
#[derive(Debug, Default)]
pub(crate) struct Control {
    slot: Mutex<Slot>,
    /// Held while a client starts, so that concurrent requests start one.
    starting: tokio::sync::Mutex<()>,
    /// Written while a client starts; read while a command that creates or ends a session runs.
    starts: tokio::sync::RwLock<()>,
    /// Read while one of our commands ends a session the client does not sit on (ends go at
    /// once); written while the client is moved off sessions being ended ([`Control::moving`]).
    moves: tokio::sync::RwLock<()>,
    /// The sessions our commands are ending now.
    ending: Mutex<HashSet<String>>,
}

#[derive(Debug, Default)]
struct Slot {
    client: Option<Arc<Client>>,
    /// Set when attaching found no session: no client is started again until
    /// [`Control::sessions_may_exist`].
    no_session: bool,
}

#[derive(Debug)]
struct Client {
    /// Killed when the client is dropped.
    child: Child,
    /// The session it is attached to, when known ([`Control::attached`]).
    session: Mutex<Option<String>>,
    stdin: tokio::sync::Mutex<ChildStdin>,
    shared: Arc<Shared>,
}

#[derive(Debug, Default)]
struct Shared {
    pending: Mutex<VecDeque<Pending>>,
    /// Set, under the `pending` lock, when the client's output ended.
    dead: AtomicBool,
}

#[derive(Debug)]
struct Pending {
    commands: usize,
    blocks: Vec<Block>,
    answer: oneshot::Sender<Vec<Block>>,
}

impl Control {
    /// Sends `line` (`commands` tmux commands separated by ` ; `, already quoted for tmux's
    /// parser, no line feed) and answers one [`Block`] per command, fewer when one failed (tmux
    /// skips the rest of the line then). `None` when no client can run (no session) or the line
    /// could not be handed to two clients in a row: the caller runs the command as a process.
    /// A line a client took with it is sent again only when `repeat` is [`Repeat::Safe`].
    pub(crate) async fn request(
        &self,
        spawn: impl Fn() -> Command,
        line: &str,
        commands: usize,
        repeat: Repeat,
        deadline: Instant,
    ) -> Result<Option<Vec<Block>>, Unanswered> {
        // A client that ended unseen (killed, or its session closed) takes the first request
        // with it: a request that never reached tmux, or may run twice, goes once more through
        // a new client.
        for _ in 0..2 {
            let Ok(client) = tokio::time::timeout_at(deadline, self.client(&spawn)).await else {
                return Err(Unanswered::Wedged);
            };
            let Some(client) = client else { return Ok(None) };
            match tokio::time::timeout_at(deadline, client.request(line, commands)).await {
                Ok(Sent::Answered(blocks)) => return Ok(Some(blocks)),
                Ok(Sent::NotWritten) => self.drop_client(&client),
                Ok(Sent::Taken) => {
                    self.drop_client(&client);
                    if repeat == Repeat::Never {
                        return Err(Unanswered::MayHaveRun);
                    }
                }
                Err(_) => {
                    self.drop_client(&client);
                    return Err(Unanswered::Wedged);
                }
            }
        }
        Ok(None)
    }

    /// Holds off the start of a client while the guard lives: taken by every command that
    /// creates or ends a session (tmux 3.3a crashes when one does while a client starts).
    pub(crate) async fn hold_off_starts(&self) -> tokio::sync::RwLockReadGuard<'_, ()> {
        self.starts.read().await
    }

    /// Marks `session` as being ended by one of our commands until the answer is dropped: the
    /// client is never moved onto it ([`Control::moving`]).
    pub(crate) fn ending(&self, session: &str) -> Ending<'_> {
        lock(&self.ending).insert(session.to_owned());
        Ending { control: self, session: session.to_owned() }
    }

    /// Whether one of our commands is ending `session` now.
    pub(crate) fn is_ending(&self, session: &str) -> bool {
        lock(&self.ending).contains(session)
    }

    /// How many sessions our commands are ending now.
    pub(crate) fn ending_count(&self) -> usize {
        lock(&self.ending).len()
    }

    /// Held while a session is ended: ends do not wait for each other, only for a move.
    pub(crate) async fn ending_quietly(&self) -> tokio::sync::RwLockReadGuard<'_, ()> {
        self.moves.read().await
    }

    /// Held while the client is moved off the sessions being ended: no end runs meanwhile.
    pub(crate) async fn moving(&self) -> tokio::sync::RwLockWriteGuard<'_, ()> {
        self.moves.write().await
    }

    /// The session the running client is attached to, as far as it is known.
    pub(crate) fn attached(&self) -> Attached {
        match self.current() {
            Ok(Some(client)) => {
                lock(&client.session).clone().map_or(Attached::Unknown, Attached::To)
            }
            Ok(None) | Err(()) => Attached::NoClient,
        }
    }

    /// Records the session the running client is attached to (`None`: not known).
    pub(crate) fn attached_to(&self, session: Option<String>) {
        if let Ok(Some(client)) = self.current() {
            *lock(&client.session) = session;
        }
    }

    /// A session was started: a client may attach again.
    pub(crate) fn sessions_may_exist(&self) {
        lock(&self.slot).no_session = false;
    }

    /// Drops the client (the server was killed).
    pub(crate) fn reset(&self) {
        let mut slot = lock(&self.slot);
        slot.client = None;
        slot.no_session = false;
    }

    /// The process id of the running client, if one runs (tests).
    pub(crate) fn client_pid(&self) -> Option<u32> {
        let slot = lock(&self.slot);
        slot.client.as_ref().filter(|client| client.alive()).and_then(|client| client.child.id())
    }

    fn drop_client(&self, client: &Arc<Client>) {
        let mut slot = lock(&self.slot);
        if slot.client.as_ref().is_some_and(|current| Arc::ptr_eq(current, client)) {
            slot.client = None;
        }
    }

    fn current(&self) -> Result<Option<Arc<Client>>, ()> {
        let mut slot = lock(&self.slot);
        match &slot.client {
            Some(client) if client.alive() => Ok(Some(Arc::clone(client))),
            Some(_) => {
                // Its session ended: another may run.
                slot.client = None;
                Ok(None)
            }
            None if slot.no_session => Err(()),
            None => Ok(None),
        }
    }

    async fn client(&self, spawn: impl Fn() -> Command) -> Option<Arc<Client>> {
        match self.current() {
            Ok(Some(client)) => return Some(client),
            Err(()) => return None,
            Ok(None) => {}
        }
        let _starting = self.starting.lock().await;
        match self.current() {
            Ok(Some(client)) => return Some(client),
            Err(()) => return None,
            Ok(None) => {}
        }
        let started = {
            let _quiet = self.starts.write().await;
            match oldest_session(spawn()).await {
                // The oldest may end meanwhile: then any will do.
                Some(oldest) => match Client::start(spawn(), Some(&oldest)).await {
                    Some(client) => Some(client),
                    None => Client::start(spawn(), None).await,
                },
                None => Client::start(spawn(), None).await,
            }
        };
        let Some(client) = started else {
            lock(&self.slot).no_session = true;
            return None;
        };
        let client = Arc::new(client);
        lock(&self.slot).client = Some(Arc::clone(&client));
        Some(client)
    }
}

/// The name of the session that has run longest (the lowest session id), from
/// `tmux … list-sessions`; `None` when none runs or tmux fails.
async fn oldest_session(mut command: Command) -> Option<String> {
    command.args(["list-sessions", "-F", "#{session_id} #{session_name}"]);
    let output = command.output().await.ok().filter(|output| output.status.success())?;
    let listed = String::from_utf8(output.stdout).ok()?;
    oldest_in(&listed).map(str::to_owned)
}

/// The session of the lowest id in lines of `$<id> <name>`.
pub(crate) fn oldest_in(listed: &str) -> Option<&str> {
    listed
        .lines()
        .filter_map(|line| {
            let (id, name) = line.split_once(' ')?;
            Some((id.strip_prefix('$')?.parse::<u64>().ok()?, name))
        })
        .min_by_key(|&(id, _)| id)
        .map(|(_, name)| name)
}

impl Client {
    /// Starts `tmux … -C attach-session -f no-output`, to `session` if one is given, and waits
    /// for the attach's answer; `None` when it fails (no server, no such session).
    async fn start(mut command: Command, session: Option<&str>) -> Option<Client> {
        command.args(["-C", "attach-session", "-f", "no-output"]);
        if let Some(session) = session {
            command.arg("-t").arg(format!("={session}"));
        }
        command.stdin(std::process::Stdio::piped()).stderr(std::process::Stdio::null());
        let mut child = command.spawn().ok()?;
        let stdin = child.stdin.take()?;
        let mut stdout = BufReader::new(child.stdout.take()?);
        let mut reader = Reader::default();
        let mut line = Vec::new();
        let attached = loop {
            line.clear();
            match stdout.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break false,
                Ok(_) => {}
            }
            if let Some((ours, block)) = reader.feed(&line) {
                // The attach is the first block, and not one of ours.
                break !ours && block.ok;
            }
        };
        if !attached {
            return None;
        }
        let shared = Arc::new(Shared::default());
        tokio::spawn(read_answers(stdout, reader, Arc::clone(&shared)));
        let session = Mutex::new(session.map(str::to_owned));
        Some(Client { child, session, stdin: tokio::sync::Mutex::new(stdin), shared })
    }

    fn alive(&self) -> bool {
        !self.shared.dead.load(Ordering::Acquire)
    }

    /// Writes the line and waits for its answer, or says how far it got.
    async fn request(&self, line: &str, commands: usize) -> Sent {
        let (answer, answered) = oneshot::channel();
        {
            let mut stdin = self.stdin.lock().await;
            {
                let mut pending = lock(&self.shared.pending);
                if self.shared.dead.load(Ordering::Acquire) {
                    return Sent::NotWritten;
                }
                pending.push_back(Pending { commands, blocks: Vec::new(), answer });
            }
            let mut bytes = Vec::with_capacity(line.len() + 1);
            bytes.extend_from_slice(line.as_bytes());
            bytes.push(b'\n');
            // A failed write is a client whose tmux end is closed: tmux runs a line only once its
            // line feed has arrived, so nothing of it ran. Its reader sees the end and drops the
            // pending answer.
            if stdin.write_all(&bytes).await.is_err() {
                return Sent::NotWritten;
            }
        }
        answered.await.map_or(Sent::Taken, Sent::Answered)
    }
}

/// Reads the client's output until it ends, answering the pending requests in order.
async fn read_answers(mut stdout: BufReader<ChildStdout>, mut reader: Reader, shared: Arc<Shared>) {
    let mut line = Vec::new();
    loop {
        line.clear();
        match stdout.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let Some((true, block)) = reader.feed(&line) else { continue };
        let mut pending = lock(&shared.pending);
        let Some(front) = pending.front_mut() else { continue };
        let failed = !block.ok;
        front.blocks.push(block);
        if (failed || front.blocks.len() >= front.commands)
            && let Some(done) = pending.pop_front()
        {
            let _ = done.answer.send(done.blocks);
        }
    }
    let mut pending = lock(&shared.pending);
    shared.dead.store(true, Ordering::Release);
    // Dropping the senders tells every waiting request that no answer comes.
    pending.clear();
}

/// The framing of control mode: which block a line belongs to.
#[derive(Debug, Default)]
pub(crate) struct Reader {
    /// The three words of the open block's `%begin`, whether its command is ours, and its
    /// output so far.
    open: Option<(Vec<u8>, bool, Vec<u8>)>,
}

impl Reader {
    /// Takes one line (with or without its line feed); answers a block when the line closes
    /// one, with whether the block answers a command this client sent.
    pub(crate) fn feed(&mut self, line: &[u8]) -> Option<(bool, Block)> {
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        match &mut self.open {
            None => {
                let words = line.strip_prefix(b"%begin ")?;
                // Flags: 1 when the command came from this client's input.
                let ours = words.rsplit(|&b| b == b' ').next().is_some_and(|flags| {
                    std::str::from_utf8(flags)
                        .ok()
                        .and_then(|flags| flags.parse::<u32>().ok())
                        .is_some_and(|flags| flags & 1 == 1)
                });
                self.open = Some((words.to_vec(), ours, Vec::new()));
                None
            }
            Some((words, ours, output)) => {
                // Only the guard with the begin's exact words closes the block: a pane line that
                // reads like a guard stays output.
                let ok = if line.strip_prefix(b"%end ") == Some(words.as_slice()) {
                    true
                } else if line.strip_prefix(b"%error ") == Some(words.as_slice()) {
                    false
                } else {
                    output.extend_from_slice(line);
                    output.push(b'\n');
                    return None;
                };
                let ours = *ours;
                let output = std::mem::take(output);
                self.open = None;
                Some((ours, Block { ok, output }))
            }
        }
    }
}

/// `word` quoted for tmux's command parser (single quotes, `'` as `'\''`), or `None` when it
/// cannot travel on one line of control mode (a line feed, a carriage return or a NUL in it).
pub(crate) fn quoted(word: &str) -> Option<String> {
    if word.contains(['\n', '\r', '\0']) {
        return None;
    }
    let mut quoted = String::with_capacity(word.len() + 2);
    quoted.push('\'');
    for c in word.chars() {
        if c == '\'' {
            quoted.push_str("'\\''");
        } else {
            quoted.push(c);
        }
    }
    quoted.push('\'');
    Some(quoted)
}
