//! Retirement and the final record of a run node (protocol 1.4.0), and how a node's program
//! ended as the server knows it without asking tmux (`terminal_list`, protocol 1.5.0).

use std::collections::HashSet;
use std::time::{Duration, SystemTime};

use termsprawl_external_term::session_name;

use super::{
    Ask, HISTORY_LINES, PaneState, Screen, Terminals, TmuxError, gone, lock, trim_blank_end,
    trim_dead_notice,
};
use crate::canvas::Node;

/// How a node's program ended ([`Terminals::ended`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ended {
    /// When.
    pub(crate) at: SystemTime,
    /// Dead, with the exit status or signal when known.
    pub(crate) state: PaneState,
    /// When it last printed, as recorded when it was retired.
    pub(crate) last_output: Option<SystemTime>,
}

/// One look of [`Terminals::ended`] at a node's files.
#[derive(Debug, Clone, Copy)]
pub(super) struct EndLook {
    /// The node's stream's change signal then.
    signal: u64,
    /// Whether an answer had seen the node ended then.
    seen: bool,
    /// What the files showed.
    ended: Option<Ended>,
}

/// What a retired run node showed when it finished, and how it ended (`<nodeId>.final`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FinalRecord {
    pub(crate) exit_code: Option<i32>,
    pub(crate) signal: Option<i32>,
    /// When the command ended, in milliseconds since 1970 (protocol 1.5.0; absent in records
    /// written before, whose file's time stands in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) ended_at: Option<u64>,
    /// When it last printed, in milliseconds since 1970, as this server saw it (1.5.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) last_output_at: Option<u64>,
    /// The screen and scrollback, as `terminal_read` without `since` shows them.
    pub(crate) history: String,
    /// The visible screen, as `terminal_read` with `view: "screen"` shows it.
    pub(crate) screen: Screen,
}

impl FinalRecord {
    /// The screen and scrollback it records, and the state.
    pub(super) fn into_history(self) -> (String, PaneState) {
        let state = self.state();
        (self.history, state)
    }

    /// The pane's state it records: dead, with the exit status or signal.
    pub(crate) fn state(&self) -> PaneState {
        PaneState { dead: true, exit_code: self.exit_code, signal: self.signal, pid: None }
    }
}

impl Terminals {
    /// The final record of a retired run node.
    pub(crate) fn final_record(&self, node_id: &str) -> Option<FinalRecord> {
        let text = std::fs::read(self.streams.files().final_file(node_id)).ok()?;
        serde_json::from_slice(&text).ok()
    }

    /// Lets a finished run node go of every process of its own (protocol 1.4.0): once tmux shows
    /// its pane dead, the screen, the scrollback and the exit are recorded in `<nodeId>.final`,
    /// and then its tmux session ends, which closes the output pipe (its `sh` and `cat` read the
    /// rest into the stream file and exit). The stream, and so every cursor, stays. Answers the
    /// record, or `None` while the command still runs.
    pub(crate) async fn retire_run(&self, node_id: &str) -> Result<Option<FinalRecord>, TmuxError> {
        if let Some(record) = self.final_record(node_id) {
            return Ok(Some(record));
        }
        let (history, line) = self.tmux.capture_with_state(node_id, HISTORY_LINES).await?;
        let parsed = PaneState::parse(&line);
        if !parsed.dead {
            return Ok(None);
        }
        let state = if parsed.is_settled() {
            parsed
        } else {
            let asked = self.ask_tmux(node_id, Ask::Tmux).await?;
            if !asked.dead {
                return Ok(None);
            }
            asked
        };
        // Ending the session drops what tmux has not yet handed to the pipe: not before the
        // command's output is all in the stream.
        self.output_complete(node_id).await;
        let (screen, _) = self.tmux.capture_screen(node_id).await?;
        let state = self.with_recorded_status(node_id, state);
        let ended_at = self.end_evidence(node_id).unwrap_or_else(SystemTime::now);
        let last_output = self.streams.get(node_id).look().last_output;
        let record = FinalRecord {
            exit_code: state.exit_code,
            signal: state.signal,
            ended_at: Some(millis(ended_at)),
            last_output_at: last_output.map(millis),
            history: trim_dead_notice(trim_blank_end(&history)).to_owned(),
            screen,
        };
        // Through the one writer of state files (fsync'd): the record outlives the pane.
        let file = self.streams.files().final_file(node_id);
        let written = serde_json::to_vec(&record)
            .map_err(std::io::Error::other)
            .and_then(|bytes| termsprawl_transport::server::write_atomic(&file, &bytes));
        if written.is_err() {
            // Without the record the pane is the only place the screen is kept: leave it.
            return Ok(Some(record));
        }
        self.tmux.kill_session(node_id).await?;
        Ok(Some(record))
    }

    /// One round of the run-node sweep over `runs` (the run nodes on the canvas): retires every
    /// finished run node nobody has looked at since it finished (its wrapper wrote the status, its
    /// `pane-died` hook fired, an answer saw it end, or the round's listing `dead` shows its pane
    /// dead: tmux 3.3a does not always run the hook, and a killed command's wrapper writes no
    /// status).
    pub(crate) async fn retire_finished_runs(&self, runs: Vec<String>, dead: &HashSet<String>) {
        let files = self.streams.files();
        for node_id in runs {
            let finished = files.status_file(&node_id).exists()
                || files.died_file(&node_id).exists()
                || lock(&self.seen_ended).contains(&node_id)
                || dead.contains(&session_name(&node_id));
            // A run whose output is still on its way is retired in a later round.
            let output_in = self.recorded_status(&node_id).is_none()
                || self.streams.get(&node_id).exit_marked()
                || files.end_file(&node_id).exists();
            if finished
                && output_in
                && !files.final_file(&node_id).exists()
                && !lock(&self.unretirable).contains(&node_id)
                && let Err(TmuxError::NotRunning(_)) = self.retire_run(&node_id).await
            {
                lock(&self.unretirable).insert(node_id);
            }
        }
    }

    /// How the node's program ended, as the server knows it without asking tmux (`terminal_list`,
    /// protocol 1.5.0): its final record; else the status its run wrapper recorded, or its pane
    /// seen gone or dead (`.end`, `.died`, or an answer that saw it), at the time of the earliest
    /// of those files; `None` while it runs by these. `signal` is the node's stream's change
    /// signal now: the files are looked at again only when it moved since the last look (every
    /// change of them moves it), so a list of many quiet terminals costs no file system call.
    pub(crate) fn ended(&self, node_id: &str, signal: u64) -> Option<Ended> {
        let seen = lock(&self.seen_ended).contains(node_id);
        if let Some(last) = lock(&self.ends).get(node_id)
            && last.signal == signal
            && last.seen == seen
        {
            return last.ended;
        }
        let ended = self.ended_by_files(node_id, seen);
        lock(&self.ends).insert(node_id.to_owned(), EndLook { signal, seen, ended });
        ended
    }

    fn ended_by_files(&self, node_id: &str, seen: bool) -> Option<Ended> {
        if let Some(record) = self.final_record(node_id) {
            let at = record.ended_at.map(from_millis).or_else(|| {
                let file = self.streams.files().final_file(node_id);
                std::fs::metadata(file).and_then(|m| m.modified()).ok()
            });
            let at = at.unwrap_or_else(SystemTime::now);
            let last_output = record.last_output_at.map(from_millis);
            return Some(Ended { at, state: record.state(), last_output });
        }
        let at = match self.end_evidence(node_id) {
            Some(at) => at,
            None if seen => SystemTime::now(),
            None => return None,
        };
        Some(Ended { at, state: self.with_recorded_status(node_id, gone()), last_output: None })
    }

    /// The time of the earliest file that shows the node's program ended: the status its run
    /// wrapper recorded, its `pane-died` mark, its pane's end.
    fn end_evidence(&self, node_id: &str) -> Option<SystemTime> {
        let files = self.streams.files();
        [files.status_file(node_id), files.died_file(node_id), files.end_file(node_id)]
            .iter()
            .filter_map(|path| std::fs::metadata(path).and_then(|m| m.modified()).ok())
            .min()
    }

    /// When the node's program started: recorded on the canvas when it was started; for a node
    /// of an older canvas, the time its output pipe started (`.start`).
    pub(crate) fn started(&self, node: &Node) -> SystemTime {
        if let Some(at) = node.started_at {
            return from_millis(at);
        }
        std::fs::metadata(self.streams.files().start_file(&node.id))
            .and_then(|m| m.modified())
            .unwrap_or(SystemTime::UNIX_EPOCH)
    }
}

/// `time` in milliseconds since 1970.
fn millis(time: SystemTime) -> u64 {
    let since = time.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
}

/// Milliseconds since 1970 as a time.
fn from_millis(millis: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_millis(millis)
}
