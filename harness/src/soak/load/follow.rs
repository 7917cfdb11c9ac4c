//! The followers of the soak's load: one `terminal_wait` after another on a ticking run node,
//! each from the last answer's cursor, through every kill and restart ([`follow`]).

use std::time::Instant;

use serde_json::json;
use termsprawl_protocol::results::{TerminalReadResult, TerminalWaitResult};

use crate::base::lock;

use super::{Agent, Rng, Shared, number, until_answered};
use crate::soak::faults::Fault;
use crate::soak::ledger::Outcome;

use super::converse::record_tool_error;
use super::oneshot::{Attempts, pause_after_unavailable};

/// The program of a ticker: a run node that prints `tick-N` five times a second, forever.
pub const TICKER: &str = "i=0; while :; do i=$((i+1)); echo tick-$i; sleep 0.2; done";

/// What a [`follow`] saw: ticks in order, and answers checked.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Followed {
    /// The last tick seen on the current ticker (every one before it was seen once, in order).
    pub ticks: u64,
    /// The ticks of the earlier tickers (ended by tmux kills).
    pub earlier: u64,
    /// Tickers left for a new one after a tmux kill, each checked to keep what was followed.
    pub switches: u64,
    /// `terminal_wait` answers that held exactly the text between their `since` and `cursor`.
    pub answers: u64,
    /// Gaps after a full disk: the pane's output copy stopped on the full disk and what the
    /// ticker printed until it was followed again never reached the stream.
    pub gaps: u64,
    /// The ticks those gaps lost.
    pub lost_to_full_disk: u64,
}

impl Followed {
    /// Counts one whole line of the ticker's stream: the next tick, or, when the disk was full
    /// since the last whole tick (`disk_full`), a line that ends with a later tick (the output
    /// copy stopped mid-line, and the ticks until the pane was followed again are missing).
    /// `false` when the line is neither: a tick lost or repeated.
    pub fn take_line(&mut self, line: &str, disk_full: bool) -> bool {
        let tick = line.strip_prefix("tick-").and_then(|tick| tick.parse::<u64>().ok());
        if tick == Some(self.ticks + 1) {
            self.ticks += 1;
            return true;
        }
        let resumed = line.rfind("tick-").and_then(|at| line[at + 5..].parse::<u64>().ok());
        match resumed {
            Some(resumed) if disk_full && resumed > self.ticks => {
                self.gaps += 1;
                self.lost_to_full_disk += resumed - self.ticks - 1;
                self.ticks = resumed;
                true
            }
            _ => false,
        }
    }
}

/// Follows the ticker run node `node` of `agent`'s project through every restart:
/// `terminal_wait {until: text, text: "\n", since}` with `since` the previous answer's cursor,
/// one-shot, retried while the server is away. Each answer must hold exactly the characters
/// between its `since` and its `cursor` (never cut), cursors never go back, and the outputs join
/// into `tick-1`, `tick-2`, … with none missing or repeated, across kills and restarts.
///
/// The one gap allowed: when the disk was full at some moment since the answer that brought the
/// last whole tick, the pane's output copy stopped and what the ticker printed until the
/// liveness check followed the pane again is not in the stream (`docs/reliability.md`, "The
/// disk fills up"); the line that spans the gap must end with a later tick, from which the
/// count goes on.
///
/// After a tmux kill the ticker has ended and the load has a new one ([`Shared::tickers`]): the
/// follower reads the old node's recorded output from the start (`terminal_read {since: 0}`),
/// which must begin with exactly the text followed on it (nothing committed lost) and report it
/// not running, then follows the new node from `tick-1`. `index` is the follower's place in
/// [`Shared::tickers`] and [`FaultLog::progress`].
pub fn follow(shared: &Shared, seed: u64, index: usize) -> Followed {
    let mut rng = Rng::new(seed);
    let mut followed = Followed::default();
    let (mut since, mut partial, mut followed_text) = (0_u64, String::new(), String::new());
    let mut tick_sent = Instant::now();
    let mut node = lock(&shared.tickers)[index].1.clone();
    while !shared.stopping() {
        let (agent_index, current) = lock(&shared.tickers)[index].clone();
        let agent = shared.agent(agent_index);
        if current != node {
            if !old_ticker_kept(shared, &mut rng, &agent, &node, &followed_text) {
                return followed;
            }
            followed.switches += 1;
            followed.earlier += followed.ticks;
            followed.ticks = 0;
            node = current;
            (since, tick_sent) = (0, Instant::now());
            partial.clear();
            followed_text.clear();
        }
        // The marker in `timeoutMs` makes each call a key of its own.
        let n = shared.marker();
        let args = json!({"nodeId": node, "until": "text", "text": "\n", "since": since, "timeoutMs": number(&format!("5000.{n:09}"))});
        let sent = Instant::now();
        let Some(outcome) = until_answered(
            shared,
            &mut rng,
            &agent,
            "terminal_wait",
            &args,
            Attempts::WhileUnavailable,
        ) else {
            break;
        };
        let value = match outcome {
            Outcome::Ok(value) => value,
            Outcome::ToolError(error) => {
                let expected = shared.explains(sent, &error, agent.generation);
                record_tool_error(shared, "terminal_wait", &args, &error, expected);
                pause_after_unavailable(&mut rng);
                continue;
            }
            // Recorded as a failure by the attempt.
            _ => {
                pause_after_unavailable(&mut rng);
                continue;
            }
        };
        let Ok(waited) = serde_json::from_value::<TerminalWaitResult>(value.clone()) else {
            lock(&shared.ledger).fail("follower: not a terminal_wait answer", &value.to_string());
            break;
        };
        let (output, cursor) = (waited.output.as_str(), waited.cursor);
        let count = output.chars().count() as u64;
        let problem = if cursor < since {
            Some("follower: the cursor went back")
        } else if waited.truncated {
            Some("follower: the output was cut")
        } else if cursor - since != count {
            Some("follower: the output is not what lies between since and cursor")
        } else {
            None
        };
        if let Some(problem) = problem {
            lock(&shared.ledger).fail(problem, &format!("since {since}: {value}"));
            break;
        }
        followed.answers += 1;
        since = cursor;
        partial.push_str(output);
        followed_text.push_str(output);
        let Some(end) = partial.rfind('\n') else { continue };
        let disk_full = shared.faults.overlapped(Fault::DiskFull, tick_sent);
        for line in partial[..end].split('\n') {
            if !followed.take_line(line, disk_full) {
                lock(&shared.ledger).fail(
                    "follower: a tick is missing or repeated",
                    &format!("{line:?} after tick-{}", followed.ticks),
                );
                return followed;
            }
        }
        partial.drain(..=end);
        tick_sent = sent;
        if let Some(progress) = lock(&shared.faults.progress).get_mut(index) {
            *progress = followed.earlier + followed.ticks;
        }
    }
    followed
}

/// Whether the ended ticker `node` still holds what the follower saw on it: its recorded output
/// from the start begins with `seen`, and it reads as not running. A failure is recorded.
fn old_ticker_kept(shared: &Shared, rng: &mut Rng, agent: &Agent, node: &str, seen: &str) -> bool {
    let n = shared.marker();
    let args = json!({"nodeId": node, "since": 0, "maxChars": number(&format!("100000.{n:09}"))});
    let sent = Instant::now();
    let problem = match until_answered(
        shared,
        rng,
        agent,
        "terminal_read",
        &args,
        Attempts::WhileUnavailable,
    ) {
        None => return true,
        Some(Outcome::Ok(value)) => match serde_json::from_value::<TerminalReadResult>(value) {
            Err(error) => Some(format!("not a terminal_read answer: {error}")),
            Ok(read) if read.running => {
                Some(format!("the ended ticker reads as running: {read:?}"))
            }
            Ok(read) if !read.output.starts_with(seen) => Some(format!(
                "its output does not begin with the {} characters followed on it",
                seen.chars().count()
            )),
            Ok(_) => None,
        },
        Some(Outcome::ToolError(error)) => {
            let expected = shared.explains(sent, &error, agent.generation);
            record_tool_error(shared, "terminal_read", &args, &error, expected);
            expected.is_none().then(|| format!("refused: {error}"))
        }
        Some(_) => Some("the read failed".to_owned()),
    };
    match problem {
        None => true,
        Some(problem) => {
            lock(&shared.ledger).fail(
                "follower: a ticker ended by a tmux kill lost what was followed",
                &format!("{node}: {problem}"),
            );
            false
        }
    }
}
