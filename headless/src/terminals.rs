//! The one owner of a terminal node's life below the canvas: its tmux session and its files.
//!
//! [`Terminals`], held by the engine, opens shells, agents' terminals and run nodes (a run node's
//! program is started by `respawn-pane` once its output pipe runs, under [`RUN_WRAPPER`]), types
//! into them, kills a run node's program, and answers the one question every operation asks of a
//! terminal, "does its program run, and how did it end": [`Terminals::state`], one function with
//! one retry policy ([`STATE_TRIES`] looks [`STATE_RETRY`] apart while tmux's answer is not
//! settled) and one parse of tmux's answer per look (`termsprawl_external_term::pane`, shared with
//! acp). How hard it looks is the caller's [`Ask`]: the node's files first (many waits answering
//! at once do not queue at tmux), tmux, or tmux until it confirms the exit a run wrapper recorded.
//!
//! It retires a finished run node ([`Terminals::retire_run`], `record.rs`: the screen, scrollback
//! and exit in `FinalRecord`, then its tmux session ends), knows who reads a terminal
//! (`readers.rs`), keeps the per-node files' names ([`files`]), and
//! the small text rules of what a terminal shows ([`tail`], [`trim_blank_end`],
//! [`trim_dead_notice`]).
//!
//! It knows nothing of projects, sessions or callers: the canvas is the engine's, and the engine
//! tells it which nodes exist ([`Terminals::forget`] when one is removed). Operations reach tmux
//! and the streams only through it.

use crate::files;
mod readers;
mod record;

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use termsprawl_external_term::pane::is_dead_notice;
use termsprawl_external_term::{TmuxLocation, session_name};
use tokio::time::Instant;

use crate::error::{ToolError, messages};
use crate::foreground::{self, Pane};
use crate::streams::Streams;
use crate::tmux::{Capture, Sessions, Tmux};

pub(crate) use crate::streams::{Look, Stream};
pub(crate) use crate::tmux::{Screen, TmuxError};
use record::EndLook;
pub(crate) use termsprawl_external_term::pane::PaneState;
use termsprawl_transport::sync::lock;

/// The program of a run node: `sh -c COMMAND` under a small `sh` that, once the command has
/// exited, prints the exit mark (`streams::EXIT_MARK`: everything the command printed is in the
/// stream once the mark is), records the command's exit status in the status file (`$2`, written
/// aside and renamed, so a reader sees no half-written number), waits until the server has read
/// the mark from the stream (`$3` appears; `streams::DRAIN_LIMIT` at most) and then ends the same
/// way (exit status, or the same signal again), so that tmux reports the end and the file backs it
/// up. An exit status above 128 is taken for a signal, as shells do.
///
/// The wait matters: tmux 3.3a ends a pane whose program exited as soon as the terminal shows
/// nothing left to read, and under load the last output can still be on its way through the
/// kernel then; it is lost (issue 29: the tail of a run's output, a few hundred bytes after a
/// multiple of 4095, missing for good). A wrapper still running holds the terminal open.
pub(crate) const RUN_WRAPPER: &str = r#"sh -c "$1"; s=$?; printf '\030\033]6973;termsprawl-exit\007'; echo "$s" > "$2-tmp" && mv -f "$2-tmp" "$2"; i=0; while [ ! -e "$3" ] && [ "$i" -lt 250 ]; do sleep 0.02; i=$((i+1)); done; if [ "$s" -gt 128 ]; then n=$(kill -l "$s" 2>/dev/null) && kill -s "$n" $$ 2>/dev/null; fi; exit "$s""#;

/// How long an answer that reports a run node's exit waits for its wrapper's exit mark in the
/// stream (the output of the command on its way from tmux through the pipe into the file). Only
/// a wedged pipe takes this long; the answer then has what the stream holds.
pub(crate) const EXIT_MARK_LIMIT: Duration = crate::streams::DRAIN_LIMIT;

/// Lines of scrollback `terminal_read` includes, and a retired run node's record keeps.
pub(crate) const HISTORY_LINES: u32 = 200;

/// How often [`Terminals::state`] looks at most, and how far apart, while tmux's answer is not
/// settled: a pane marked dead a moment before tmux reaped its program and knows its status, or
/// (with [`Ask::Exited`]) a pane still shown running a moment after its wrapper recorded the exit.
pub(crate) const STATE_TRIES: u32 = 30;
/// See [`STATE_TRIES`].
pub(crate) const STATE_RETRY: Duration = Duration::from_millis(10);

/// How long a run node's start waits for its output pipe's reader.
const PIPE_START_LIMIT: Duration = Duration::from_secs(10);
/// After an exit without a wrapper's mark, the output is complete once it has not grown for this
/// long ...
const EXIT_SETTLE_QUIET: Duration = Duration::from_millis(25);
/// ... or after this long at most.
const EXIT_SETTLE_LIMIT: Duration = Duration::from_millis(500);
/// How long [`Terminals::kill`] waits for the killed process to be reaped.
const KILL_SETTLE: Duration = Duration::from_secs(2);
/// How often [`Terminals::kill`] asks tmux meanwhile.
const KILL_RETRY: Duration = Duration::from_millis(10);
/// How often, and how far apart, [`Terminals::tmux_went_away`] asks.
const TMUX_GONE_TRIES: u32 = 10;
const TMUX_GONE_RETRY: Duration = Duration::from_millis(50);

/// How hard [`Terminals::state`] looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ask {
    /// The node's files first: running while they show no end ([`Terminals::runs_by_its_files`]),
    /// tmux only when they do.
    Files,
    /// tmux, the one witness of a pane whose program ended without a `pane-died` hook.
    Tmux,
    /// The node's files, the run wrapper's recorded exit included, first: tmux only when they
    /// neither show it running nor its exit recorded (the run notices).
    Recorded,
    /// tmux, looked at again while it still shows running the program whose exit the run
    /// wrapper recorded (the pane dies a moment after the record); if it never agrees, the
    /// record is the answer.
    Exited,
}

/// Every terminal node's tmux session and files, and what the server remembers of them.
pub(crate) struct Terminals {
    tmux: Tmux,
    streams: Arc<Streams>,
    /// Nodes removed from the canvas by this server ([`Terminals::forget`]): their state is no
    /// longer answered (a wait on one ends as closed).
    forgotten: Mutex<HashSet<String>>,
    /// Finished run nodes whose tmux session is gone without a final record (the tmux server
    /// ended): the run-node sweep does not ask tmux about them again.
    unretirable: Mutex<HashSet<String>>,
    /// Nodes some answer has seen ended (tmux showed the pane dead or gone): no later answer
    /// takes them for running by their files ([`Terminals::runs_by_its_files`]).
    seen_ended: Mutex<HashSet<String>>,
    /// The process of every terminal node's pane, as tmux last showed it: the looks of
    /// [`Terminals::input_by`] start from it and read only `/proc`.
    panes: Mutex<HashMap<String, Pane>>,
    /// The last look at each node's pane, kept with what it depended on, so that looking again
    /// at an unchanged pane examines nothing ([`foreground::look_again`]).
    looks: Mutex<HashMap<String, foreground::Seen>>,
    /// [`Terminals::ended`]'s last look at each node: the change signal and whether an answer had
    /// seen it ended then, and what the files showed.
    ends: Mutex<HashMap<String, EndLook>>,
}

/// The state of a pane that is gone: dead, nothing known yet.
fn gone() -> PaneState {
    PaneState { dead: true, ..PaneState::default() }
}

impl Terminals {
    /// The terminals on the managed tmux server `tmux`, their output in `streams`.
    pub(crate) fn new(tmux: Tmux, streams: Arc<Streams>) -> Terminals {
        Terminals {
            tmux,
            streams,
            forgotten: Mutex::new(HashSet::new()),
            unretirable: Mutex::new(HashSet::new()),
            seen_ended: Mutex::new(HashSet::new()),
            panes: Mutex::new(HashMap::new()),
            looks: Mutex::new(HashMap::new()),
            ends: Mutex::new(HashMap::new()),
        }
    }

    /// The names of the node files.
    pub(crate) fn files(&self) -> &files::Files {
        self.streams.files()
    }

    /// The managed tmux server (the control channel's answers name it).
    pub(crate) fn tmux(&self) -> &Tmux {
        &self.tmux
    }

    /// The tmux program and the arguments that select the server (`terminal_external`).
    pub(crate) fn location(&self) -> &TmuxLocation {
        self.tmux.location()
    }

    /// Starts watching the node files: every change wakes the node's waiters.
    pub(crate) fn watch(&self) -> std::io::Result<tokio::task::JoinHandle<()>> {
        self.streams.watch()
    }

    // Opening.

    /// Starts a node's tmux session running `argv` (the default shell without), with `env` set,
    /// its output captured into its stream (see [`Tmux::new_session`]).
    pub(crate) async fn open(
        &self,
        node_id: &str,
        cwd: &Path,
        env: &[(String, String)],
        argv: Option<&[String]>,
    ) -> Result<(), ToolError> {
        let files = self.streams.files();
        let (out, start, end) =
            (files.out_file(node_id), files.start_file(node_id), files.end_file(node_id));
        let capture = Capture { out: &out, start: &start, end: &end, died: None };
        let pid =
            self.tmux.new_session(node_id, cwd, env, argv, &capture).await.map_err(tmux_error)?;
        if let Some(pid) = pid {
            self.remember_pane(node_id, pid);
        }
        Ok(())
    }

    /// Undoes [`Terminals::open`] of a node that did not make it onto the canvas: its session
    /// ends and its files go.
    pub(crate) async fn unopen(&self, node_id: &str) {
        let _ = self.tmux.kill_session(node_id).await;
        self.streams.remove_files(node_id);
    }

    /// Starts `sh -c COMMAND` under [`RUN_WRAPPER`] as the program of a new run node, in `cwd`
    /// with `env` added; the pane stays after the command exits, so its status and output
    /// remain. The command starts only after `commit` succeeded (the engine puts the node on the
    /// canvas), once the output pipe runs; when `commit` fails, the session (which ran only a
    /// placeholder) ends and the call fails with its error. When the command cannot be started,
    /// `uncommit` takes the node off the canvas again; only when it did (`true`) do its files go,
    /// else the node stays, reading as not running.
    pub(crate) async fn open_run<R>(
        &self,
        node_id: &str,
        command: &str,
        cwd: &Path,
        env: &[(String, String)],
        commit: impl FnOnce() -> Result<R, ToolError>,
        uncommit: impl FnOnce() -> bool,
    ) -> Result<R, ToolError> {
        let files = self.streams.files();
        let argv = [
            "sh".to_owned(),
            "-c".to_owned(),
            RUN_WRAPPER.to_owned(),
            "sh".to_owned(),
            command.to_owned(),
            files.status_file(node_id).to_string_lossy().into_owned(),
            files.drained_file(node_id).to_string_lossy().into_owned(),
        ];
        let (out, start, end, died) = (
            files.out_file(node_id),
            files.start_file(node_id),
            files.end_file(node_id),
            files.died_file(node_id),
        );
        let capture = Capture { out: &out, start: &start, end: &end, died: Some(died.as_path()) };
        let stream = self.streams.get(node_id);
        self.tmux
            .new_session(node_id, cwd, env, Some(&argv), &capture)
            .await
            .map_err(tmux_error)?;
        let started = if stream.wait_for_file(&start, PIPE_START_LIMIT).await {
            Ok(())
        } else {
            Err(ToolError::new("the terminal's output pipe did not start"))
        };
        let committed = match started.and_then(|()| commit()) {
            Ok(committed) => committed,
            Err(error) => {
                self.unopen(node_id).await;
                return Err(error);
            }
        };
        match self.tmux.respawn(node_id, cwd, &argv).await {
            Ok(pid) => {
                if let Some(pid) = pid {
                    self.remember_pane(node_id, pid);
                }
                Ok(committed)
            }
            Err(error) => {
                // Undone as far as the disk allows: a node whose removal cannot be saved stays,
                // reading as not running.
                let _ = self.tmux.kill_session(node_id).await;
                if uncommit() {
                    self.streams.remove_files(node_id);
                }
                Err(tmux_error(error))
            }
        }
    }

    /// Marks a run node started with `keep: false`: the first answer that reports its finish
    /// closes it ([`Terminals::discards`]).
    pub(crate) fn mark_discard(&self, node_id: &str) -> std::io::Result<()> {
        let file = self.streams.files().discard_file(node_id);
        termsprawl_transport::server::write_atomic(&file, b"")
    }

    /// Whether the node was started with `keep: false`.
    pub(crate) fn discards(&self, node_id: &str) -> bool {
        self.streams.files().discard_file(node_id).exists()
    }

    // Closing.

    /// Ends a node's session; its waiters end first, so that none mistakes the pane's end for its
    /// program's exit.
    pub(crate) async fn close(&self, node_id: &str) -> Result<(), ToolError> {
        self.streams.close(node_id);
        self.tmux.kill_session(node_id).await.map_err(tmux_error)
    }

    /// Forgets a node the engine removed from the canvas: its files go, and its state is no
    /// longer answered.
    pub(crate) fn forget(&self, node_id: &str) {
        lock(&self.forgotten).insert(node_id.to_owned());
        lock(&self.panes).remove(node_id);
        lock(&self.looks).remove(node_id);
        lock(&self.ends).remove(node_id);
        self.streams.remove_files(node_id);
        let files = self.streams.files();
        let _ = std::fs::remove_file(files.final_file(node_id));
        let _ = std::fs::remove_file(files.discard_file(node_id));
    }

    // Typing.

    /// Types `text` into the node's terminal exactly as given.
    pub(crate) async fn type_text(&self, node_id: &str, text: &str) -> Result<(), ToolError> {
        self.tmux.send_text(node_id, text).await.map_err(tmux_error)
    }

    /// Presses `keys` (of the protocol's key grammar, validated) in order.
    pub(crate) async fn press_keys(&self, node_id: &str, keys: &[String]) -> Result<(), ToolError> {
        self.tmux.send_keys(node_id, keys).await.map_err(tmux_error)
    }

    /// Presses Ctrl-C.
    pub(crate) async fn interrupt(&self, node_id: &str) -> Result<(), ToolError> {
        self.tmux.send_key(node_id, "C-c").await.map_err(tmux_error)
    }

    /// Submits one line into a node's prompt: `text` typed as is, then Enter. The one way the
    /// server speaks into a node: `terminal_submit`, `agent_send`'s requests and `terminal_run`'s
    /// notices.
    pub(crate) async fn submit_line(&self, node_id: &str, text: &str) -> Result<(), TmuxError> {
        self.tmux.send_text(node_id, text).await?;
        self.tmux.send_key(node_id, "Enter").await
    }

    /// When a person last pressed a key in the node's session ([`Tmux::last_key_input`]).
    pub(crate) async fn last_key_input(&self, node_id: &str) -> Result<Option<u64>, TmuxError> {
        self.tmux.last_key_input(node_id).await
    }

    /// Whether the node's session runs (no server is `false`).
    pub(crate) async fn has_session(&self, node_id: &str) -> Result<bool, TmuxError> {
        self.tmux.has_session(node_id).await
    }

    // The stream.

    /// The node's output stream, read up to the end of its file.
    pub(crate) fn stream(&self, node_id: &str) -> Arc<Stream> {
        self.streams.get(node_id)
    }

    /// The node's stream, its change signal and a look, reading the file only when it changed
    /// (`Streams::current`).
    pub(crate) fn current(&self, node_id: &str) -> (Arc<Stream>, u64, Look) {
        self.streams.current(node_id)
    }

    /// Whether the node's pane is gone, by its files (`<nodeId>.end`).
    pub(crate) fn pane_ended(&self, node_id: &str) -> bool {
        self.streams.files().end_file(node_id).exists()
    }

    /// When the node last printed, by its stream file's time (before the server read it).
    pub(crate) fn printed_at(&self, node_id: &str) -> Option<SystemTime> {
        std::fs::metadata(self.streams.files().out_file(node_id)).and_then(|m| m.modified()).ok()
    }

    /// Waits until everything a finished node's program printed is in its stream: a run node
    /// whose wrapper recorded the exit until the wrapper's exit mark is read
    /// ([`Terminals::output_complete`]); a program killed with its wrapper, or a shell, prints no
    /// mark: until its output has been quiet a moment.
    pub(crate) async fn settle_output(&self, node_id: &str, stream: &Stream) {
        if self.recorded_status(node_id).is_some() {
            self.output_complete(node_id).await;
        } else {
            stream.settle(EXIT_SETTLE_QUIET, EXIT_SETTLE_LIMIT).await;
        }
    }

    /// Waits (at most [`EXIT_MARK_LIMIT`]) until everything a finished run node's command printed
    /// is in its stream: when its wrapper recorded the exit, until the wrapper's exit mark is
    /// read (or the pipe ended). A command killed with its wrapper printed no mark, and a retired
    /// node's stream was complete when it was retired: those do not wait.
    pub(crate) async fn output_complete(&self, node_id: &str) {
        let files = self.streams.files();
        if self.recorded_status(node_id).is_some() && !files.final_file(node_id).exists() {
            let end = files.end_file(node_id);
            self.streams.get(node_id).wait_for_exit_mark(&end, EXIT_MARK_LIMIT).await;
        }
    }

    // Is it running, and how did it end.

    /// The state of a node's pane, looked at as `ask` says; the one answer to "does its program
    /// run, and how did it end". A retired run node answers its final record; tmux is the source
    /// otherwise, its answer parsed once per look and looked at again ([`STATE_TRIES`] at most)
    /// while not settled; a dead pane whose status tmux does not know takes the status the run
    /// wrapper recorded; a node still on the canvas whose session is gone (its shell exited, the
    /// tmux server ended) is not running. A node removed from the canvas is
    /// [`TmuxError::NotRunning`].
    pub(crate) async fn state(&self, node_id: &str, ask: Ask) -> Result<PaneState, TmuxError> {
        if matches!(ask, Ask::Files | Ask::Recorded) && self.runs_by_its_files(node_id) {
            return Ok(PaneState::default());
        }
        if let Some(record) = self.final_record(node_id) {
            return Ok(record.state());
        }
        if ask == Ask::Recorded && self.recorded_status(node_id).is_some() {
            return Ok(self.with_recorded_status(node_id, gone()));
        }
        let state = self.ask_tmux(node_id, ask).await;
        self.saw(node_id, state.as_ref().ok());
        state
    }

    async fn ask_tmux(&self, node_id: &str, ask: Ask) -> Result<PaneState, TmuxError> {
        let mut tries = 0;
        loop {
            let state = match self.look(node_id).await {
                Ok(state) => state,
                Err(error) => return self.when_gone(node_id, error),
            };
            tries += 1;
            let settled = state.is_settled() && (ask != Ask::Exited || state.dead);
            if settled || tries >= STATE_TRIES {
                if ask == Ask::Exited && !state.dead {
                    return Ok(self.with_recorded_status(node_id, gone()));
                }
                return Ok(self.with_recorded_status(node_id, state));
            }
            tokio::time::sleep(STATE_RETRY).await;
        }
    }

    /// One look at the pane through tmux: its state line, parsed once.
    async fn look(&self, node_id: &str) -> Result<PaneState, TmuxError> {
        let state = PaneState::parse(&self.tmux.pane_state_line(node_id).await?);
        // tmux 3.3a answers a target that does not exist with exit 0 and empty fields; a pane
        // always has a pid, so an answer without one is a session that is gone.
        if state.pid.is_none() && !self.tmux.has_session(node_id).await? {
            return Err(TmuxError::NotRunning(session_name(node_id)));
        }
        Ok(state.or_zombie())
    }

    /// The answer when tmux failed with `error`: a node retired meanwhile answers its record, a
    /// node on the canvas whose session is gone is not running.
    fn when_gone(&self, node_id: &str, error: TmuxError) -> Result<PaneState, TmuxError> {
        let TmuxError::NotRunning(name) = error else { return Err(error) };
        if let Some(record) = self.final_record(node_id) {
            return Ok(record.state());
        }
        self.gone_state(node_id).ok_or(TmuxError::NotRunning(name))
    }

    /// `parsed` from one tmux look settled: as it is when it is, else asked again.
    async fn settled(&self, node_id: &str, parsed: PaneState) -> Result<PaneState, TmuxError> {
        if parsed.is_settled() {
            return Ok(self.with_recorded_status(node_id, parsed));
        }
        self.ask_tmux(node_id, Ask::Tmux).await
    }

    /// The state of a node still on the canvas whose tmux session is gone (its shell exited, or
    /// the tmux server ended): not running, with the status a run node's wrapper recorded. `None`
    /// for a node the engine removed.
    fn gone_state(&self, node_id: &str) -> Option<PaneState> {
        let forgotten = lock(&self.forgotten).contains(node_id);
        (!forgotten).then(|| self.with_recorded_status(node_id, gone()))
    }

    /// `state`, with the status a run node's wrapper recorded when tmux does not know it.
    pub(crate) fn with_recorded_status(&self, node_id: &str, mut state: PaneState) -> PaneState {
        if state.dead && state.exit_code.is_none() && state.signal.is_none() {
            // The wrapper ends the way the command did; a status above 128 is a signal there.
            match self.recorded_status(node_id) {
                Some(status) if status > 128 => state.signal = Some(status - 128),
                status => state.exit_code = status,
            }
        }
        state
    }

    /// The exit status a run node's wrapper recorded, once its command has exited.
    pub(crate) fn recorded_status(&self, node_id: &str) -> Option<i32> {
        std::fs::read_to_string(self.streams.files().status_file(node_id))
            .ok()
            .and_then(|text| text.trim().parse().ok())
    }

    /// Whether the node's pane runs as far as its files tell, without asking tmux: no answer
    /// has seen it ended, and none of `.end` (its pane is gone), `.status` and `.died` (a run
    /// node's program exited) and `.final` (retired) exists. A pane that ended a moment ago,
    /// unseen, may still read as running (as it did a moment earlier); a `false` says nothing
    /// (tmux is the one to ask then).
    pub(crate) fn runs_by_its_files(&self, node_id: &str) -> bool {
        let files = self.streams.files();
        !lock(&self.seen_ended).contains(node_id)
            && ![
                files.end_file(node_id),
                files.status_file(node_id),
                files.died_file(node_id),
                files.final_file(node_id),
            ]
            .iter()
            .any(|path| path.exists())
    }

    /// Remembers that `node_id` ended when `state` says so ([`Terminals::runs_by_its_files`]).
    /// Also remembers the pane's process while it runs ([`Terminals::input_by`]).
    fn saw(&self, node_id: &str, state: Option<&PaneState>) {
        if state.is_some_and(|state| state.dead) {
            lock(&self.seen_ended).insert(node_id.to_owned());
        }
        if let Some(pid) = state.filter(|state| !state.dead).and_then(|state| state.pid) {
            self.remember_pane(node_id, pid);
        }
    }

    /// After the node's pane ended during a wait: whether its session is gone because the managed
    /// tmux server went away. A dying server may answer for a moment after the pipes closed, so
    /// it is asked a few times (at most half a second).
    pub(crate) async fn tmux_went_away(&self, node_id: &str) -> bool {
        for _ in 0..TMUX_GONE_TRIES {
            if self.tmux.has_session(node_id).await.unwrap_or(false) {
                return false;
            }
            if !self.tmux.server_runs().await.unwrap_or(true) {
                return true;
            }
            tokio::time::sleep(TMUX_GONE_RETRY).await;
        }
        false
    }

    /// SIGKILL to the process group of a run node's program, then its state once tmux shows it
    /// dead ([`KILL_SETTLE`] at most); a program that already ended is not signalled.
    pub(crate) async fn kill(&self, node_id: &str) -> Result<PaneState, TmuxError> {
        let stream = self.streams.get(node_id);
        let mut changes = stream.subscribe();
        let mut state = self.state(node_id, Ask::Tmux).await?;
        let Some(pid) = state.pid.filter(|_| !state.dead).and_then(rustix::process::Pid::from_raw)
        else {
            return Ok(state);
        };
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        // Other waiters on this node learn of the kill even if tmux is slow to notice the exit.
        self.streams.wake(node_id);
        let deadline = Instant::now() + KILL_SETTLE;
        loop {
            state = self.state(node_id, Ask::Tmux).await?;
            if state.dead || Instant::now() >= deadline {
                break;
            }
            // tmux 3.3a may never fire `pane-died` (it sometimes never reaps the program), so no
            // file need change: tmux is asked again after a short while too.
            tokio::select! {
                update = changes.changed() => if update.is_err() { break },
                () = tokio::time::sleep_until(deadline.min(Instant::now() + KILL_RETRY)) => {}
            }
        }
        // Waits that asked before tmux saw the end ask again.
        self.streams.wake(node_id);
        Ok(state)
    }

    // What a terminal shows.

    /// The screen and scrollback ([`HISTORY_LINES`]) without the blank rows below the last
    /// written one, and the state: a finished run node's from its final record (retiring it when
    /// that is due), so neither tmux's dead-pane line nor the empty rows below the output are
    /// shown; a node whose session is gone shows its retained output (its stream), so that a read
    /// with and without `since` and a wait agree that it does not run.
    pub(crate) async fn history(&self, node_id: &str) -> Result<(String, PaneState), TmuxError> {
        if let Some(record) = self.final_record(node_id) {
            return Ok(record.into_history());
        }
        let captured = match self.tmux.capture_with_state(node_id, HISTORY_LINES).await {
            Ok((text, line)) => match self.settled(node_id, PaneState::parse(&line)).await {
                Ok(state) => Ok((text, state)),
                Err(error) => Err(error),
            },
            Err(error) => Err(error),
        };
        let (text, state) = match captured {
            Ok(captured) => captured,
            Err(error) => {
                if let Some(record) = self.final_record(node_id) {
                    return Ok(record.into_history());
                }
                let TmuxError::NotRunning(name) = error else { return Err(error) };
                let state = self.gone_state(node_id).ok_or(TmuxError::NotRunning(name))?;
                (self.streams.get(node_id).after(None).0, state)
            }
        };
        self.saw(node_id, Some(&state));
        if state.dead
            && let Ok(Some(record)) = self.retire_run(node_id).await
        {
            return Ok(record.into_history());
        }
        Ok((trim_blank_end(&text).to_owned(), state))
    }

    /// The visible screen and the state: a retired node's from its record; a node whose session is
    /// gone has no pane to look at, so its last rows are the last lines of its stream
    /// ([`Terminals::gone_screen`]).
    pub(crate) async fn screen(&self, node_id: &str) -> Result<(Screen, PaneState), TmuxError> {
        if let Some(record) = self.final_record(node_id) {
            return Ok((record.screen.clone(), record.state()));
        }
        let error = match self.tmux.capture_screen(node_id).await {
            Ok((screen, line)) => match self.settled(node_id, PaneState::parse(&line)).await {
                Ok(state) => {
                    self.saw(node_id, Some(&state));
                    return Ok((screen, state));
                }
                Err(error) => error,
            },
            Err(error) => error,
        };
        if let Some(record) = self.final_record(node_id) {
            return Ok((record.screen.clone(), record.state()));
        }
        // Its session is gone (a shell that exited, a killed tmux server): not running, as the
        // other reads answer (issue 29).
        match (&error, self.gone_screen(node_id)) {
            (TmuxError::NotRunning(_), Some(gone)) => Ok(gone),
            _ => Err(error),
        }
    }

    /// The screen view of a node whose session is gone: its last rows are the last lines of its
    /// stream (each cut to the width), padded with empty rows to the window's size, the cursor
    /// below the last line written.
    fn gone_screen(&self, node_id: &str) -> Option<(Screen, PaneState)> {
        let state = self.gone_state(node_id)?;
        let (cols, rows) = crate::tmux::WINDOW_CELLS;
        let (text, _, _) = self.streams.get(node_id).after(None);
        let mut lines: Vec<&str> = text.split('\n').collect();
        // The text after the last line feed is the row the cursor is on.
        let cursor_col = lines.last().map_or(0, |last| last.chars().count());
        let skip = lines.len().saturating_sub(rows as usize);
        lines.drain(..skip);
        let cursor_row = u32::try_from(lines.len().saturating_sub(1)).unwrap_or(rows - 1);
        let mut screen = String::new();
        for row in 0..rows as usize {
            let line = lines.get(row).copied().unwrap_or_default();
            let line: String = line.chars().take(cols as usize).collect();
            screen.push_str(line.trim_end_matches(' '));
            screen.push('\n');
        }
        let screen = Screen {
            text: screen,
            rows,
            cols,
            cursor_row,
            cursor_col: u32::try_from(cursor_col).unwrap_or(cols).min(cols - 1),
            alternate: false,
        };
        Some((screen, state))
    }

    // The liveness round.

    /// Every running session and those whose pane is dead, from one `list-sessions`.
    pub(crate) async fn sessions(&self) -> Result<Sessions, TmuxError> {
        self.tmux.sessions().await
    }

    /// The names of every running session.
    pub(crate) async fn session_names(&self) -> Result<HashSet<String>, TmuxError> {
        self.tmux.session_names().await
    }

    /// Part of the liveness round, over the terminal nodes `terminals` of the canvas: every node
    /// whose output pipe ended (`<nodeId>.end`) while its session still runs (`running`) is
    /// piped again, so that a shell whose output copy stopped on a full disk is followed again
    /// once space is free, without a restart (issue 29). What the pane printed while nothing
    /// followed it is not in the stream.
    pub(crate) async fn follow_again(&self, terminals: &[String], running: &HashSet<String>) {
        for node_id in terminals {
            let end = self.streams.files().end_file(node_id);
            if end.exists()
                && running.contains(&session_name(node_id))
                && self.tmux.has_session(node_id).await.unwrap_or(false)
                && std::fs::remove_file(&end).is_ok()
                && self.tmux.repipe(node_id).await.is_err()
            {
                // The session ended meanwhile: its end stays marked.
                let _ = std::fs::write(&end, b"");
            }
        }
    }
}

/// A tmux failure as an operation error: a session that does not run is `Terminal is not attached`.
pub(crate) fn tmux_error(error: TmuxError) -> ToolError {
    match error {
        TmuxError::NotRunning(_) => messages::NOT_ATTACHED.into(),
        other => ToolError::new(other.to_string()),
    }
}

/// The last `limit` UTF-16 units of `text`, never splitting a character.
pub(crate) fn tail(text: &str, limit: usize) -> String {
    termsprawl_protocol::results::utf16_tail(text, limit).to_owned()
}

/// The pane text without the blank lines below the last written one.
pub(crate) fn trim_blank_end(text: &str) -> &str {
    let trimmed = text.trim_end_matches(['\n', ' ']);
    let line_end =
        text[trimmed.len()..].find('\n').map_or(text.len(), |offset| trimmed.len() + offset + 1);
    if trimmed.is_empty() { "" } else { &text[..line_end] }
}

/// `text` without tmux's dead-pane line ("Pane is dead (status 3, …)") at its end: a run node
/// started before protocol 1.4.0 has it on its screen.
pub(crate) fn trim_dead_notice(text: &str) -> &str {
    let body = text.strip_suffix('\n').unwrap_or(text);
    match body.rsplit_once('\n') {
        Some((before, last)) if is_dead_notice(last) => trim_blank_end(before),
        None if is_dead_notice(body) => "",
        _ => text,
    }
}
