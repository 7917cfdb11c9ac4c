//! Part 6: long waits through the MCP bridge (protocol 1.5.0, issue 38): [`AGENTS`] agents on one
//! real `termsprawl-headless` server, each with its own `termsprawlctl mcp --max-wait-ms 600000`
//! bridge and a ticker run node (`bench-support ticker FIFO`, as in part 5), each waiting in one
//! `tools/call terminal_wait` with `timeoutMs: 600000`, which the bridge chains in turns of the
//! server's 30 s (`transport::long_wait`).
//!
//! First the chained waits: their marks are printed [`PAST_TURN`] after the calls, after the
//! first turn boundary, so their reaction is the reaction at the end of a chain. Then one single
//! wait per agent (`timeoutMs` [`SINGLE_TIMEOUT_MS`], one call to the server), whose `since` is the
//! cursor the chained wait started from, its mark printed [`SETTLE`] after the call. The reaction
//! of a wait is the harness's `CLOCK_MONOTONIC` when it reads the bridge's answer minus the stamp
//! the ticker printed before the mark.
//!
//! Both rounds are measured under the same conditions, because their difference is the row's
//! subject: every wait sent, the same `/proc` sampling of the server and every bridge done
//! ([`QUIET`] before the marks, so that nothing the harness started runs while they are printed),
//! then all marks printed in one sweep, and both answers carry the same stretch of output.
//!
//! Why the last condition: a wait answers with all the output since its `since` (the contract: a
//! chained wait answers as one wait would have), and the tickers print a line every 50 ms, so a
//! chained wait's answer at 35 s carries about 6.3 kB, where a single wait sent with the latest
//! cursor carried 0.3–0.5 kB. The 64 answers of a round reach the harness one after another
//! through 64 bridges, so the p50 is about half the time the round takes to drain, which grows
//! with the answers' size: measured on 2 cores, a single wait sent with the older cursor (6.5 kB)
//! was 5.0 and 2.5 ms slower at p50 than the same single wait with the latest cursor, in two runs;
//! the earlier row compared unlike answers. The chained path itself does nothing per turn that a
//! single wait does not: without a progress token the bridge sends the next turn as the previous
//! answers and joins the outputs once, and the server's wait searches only new text. Sending the
//! single waits from the chained waits' starting cursor compares a chain with the one wait it
//! stands in for (the single answer carries slightly more: the chained round's own marks and
//! [`SETTLE`]).
//!
//! The server's and every bridge's open file descriptors and resident set are read from `/proc`
//! once every chained wait is pending ("start") and again after the turn boundary, [`QUIET`]
//! before the marks; the single round samples the same way and keeps nothing.

use std::fs::{File, OpenOptions};
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail, ensure};
use serde_json::{Value, json};
use termsprawl_protocol::ToolResult;
use termsprawl_protocol::results::{
    MAX_CLIENT_WAIT_MS, MAX_WAIT_MS, TerminalRunResult, TerminalWaitResult,
};

use super::crowd::{Usage, usage};
use super::stats::Summary;
use super::terminals::{QUIT, READY, mark, monotonic_ns, printed_at};
use crate::base::binaries::Binaries;
use crate::base::server::{self, Places};
use crate::base::{answer, wait_child};

/// Agents, each with its own bridge and ticker.
pub const AGENTS: usize = 64;
/// How long after the single waits are sent their marks are printed.
pub const SETTLE: Duration = Duration::from_secs(2);
/// How long after the calls are sent the usage is first sampled: every wait reaches the server
/// within it, the bridge's first turn is then pending.
const PENDING: Duration = Duration::from_secs(1);
/// How long before the marks nothing the harness does runs (the last sampling of `/proc` ends).
pub const QUIET: Duration = Duration::from_millis(500);
/// How long after the chained waits are sent their marks are printed: past the first of the
/// server's 30 s turns.
pub const PAST_TURN: Duration = Duration::from_millis(MAX_WAIT_MS + 5_000);
/// The `timeoutMs` of a single wait.
pub const SINGLE_TIMEOUT_MS: u64 = 20_000;
/// How long any answer that is not the awaited one may take.
const PATIENCE: Duration = Duration::from_mins(1);

/// The size of the part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// Agents ([`AGENTS`] in the bench; fewer in the harness test).
    pub agents: usize,
}

/// The figures of part 6.
#[derive(Debug, Clone, PartialEq)]
pub struct Chain {
    /// Agents, bridges and chained waits.
    pub agents: usize,
    /// How long the chained waits waited before their marks were printed.
    pub past_turn: Duration,
    /// Printed to answered, per single wait, in nanoseconds.
    pub single: Summary,
    /// Printed to answered, per chained wait (after a turn boundary), in nanoseconds.
    pub chained: Summary,
    /// The server once every chained wait is pending, and after the turn boundary.
    pub server: [Usage; 2],
    /// All bridges together, likewise.
    pub bridges: [Usage; 2],
    /// The largest bridge, likewise.
    pub largest_bridge: [Usage; 2],
}

/// The harness side: `serve` on a temporary data directory, the agents launched, the bridges
/// and tickers started, both rounds measured; everything stopped again, also after a failure.
pub fn measure(helper: &Path, binaries: &Binaries, settings: Settings) -> anyhow::Result<Chain> {
    server::on_temporary_serve(binaries, "termsprawl-chain-", &["fifos"], |places, serve| {
        run(helper, binaries, places, settings, serve.pid())
    })
}

fn run(
    helper: &Path,
    binaries: &Binaries,
    places: &Places,
    settings: Settings,
    server_pid: u32,
) -> anyhow::Result<Chain> {
    let (lines, answers) = mpsc::channel();
    let mut agents = Vec::with_capacity(settings.agents);
    let result = (|| {
        for index in 0..settings.agents {
            let launched =
                server::launch(binaries, places, &places.projects[0], &format!("chain-{index}"))?;
            let session =
                launched["sessionFile"].as_str().context("launch printed no sessionFile")?;
            agents.push(Agent::start(&binaries.ctl, session, index, lines.clone())?);
        }
        for agent in &mut agents {
            agent.initialize(&answers)?;
        }
        for agent in &mut agents {
            agent.start_ticker(helper, &places.root.join("fifos"), &answers)?;
        }
        let chain_start: Vec<u64> = agents.iter().map(|agent| agent.cursor).collect();
        let mut samples = Vec::new();
        let chained = round(&mut agents, &answers, "c", MAX_CLIENT_WAIT_MS, PAST_TURN, |agents| {
            samples.push(sample(server_pid, agents));
        })?;
        // The single waits answer the same stretch of output as the chained ones.
        for (agent, since) in agents.iter_mut().zip(chain_start) {
            agent.cursor = since;
        }
        let single = round(&mut agents, &answers, "s", SINGLE_TIMEOUT_MS, SETTLE, |agents| {
            let _ = sample(server_pid, agents);
        })?;
        let [start, after] = <[_; 2]>::try_from(samples)
            .map_err(|_| anyhow::anyhow!("the usage was not sampled twice"))?;
        let (start, after) = (start?, after?);
        Ok(Chain {
            agents: settings.agents,
            past_turn: PAST_TURN,
            single: Summary::of(&single).context("no single wait was measured")?,
            chained: Summary::of(&chained).context("no chained wait was measured")?,
            server: [start.0, after.0],
            bridges: [start.1, after.1],
            largest_bridge: [start.2, after.2],
        })
    })();
    for agent in agents {
        agent.stop();
    }
    result
}

/// The server's usage, all bridges' together and the largest bridge's.
fn sample(server_pid: u32, agents: &[Agent]) -> anyhow::Result<(Usage, Usage, Usage)> {
    let (server, _) = usage(server_pid).context("cannot read the server's /proc entries")?;
    let (mut all, mut largest) = (Usage::default(), Usage::default());
    for agent in agents {
        let (bridge, _) =
            usage(agent.bridge.id()).context("cannot read a bridge's /proc entries")?;
        all.fds += bridge.fds;
        all.rss += bridge.rss;
        largest.fds = largest.fds.max(bridge.fds);
        largest.rss = largest.rss.max(bridge.rss);
    }
    Ok((server, all, largest))
}

/// One round: a `terminal_wait` for a new mark (from each agent's cursor) sent through every
/// bridge, `then` called once all are pending and again [`QUIET`] before `delay` has passed,
/// the marks printed in one sweep at `delay`, every answer checked; the reactions in nanoseconds.
fn round(
    agents: &mut [Agent],
    answers: &mpsc::Receiver<Answer>,
    label: &str,
    timeout_ms: u64,
    delay: Duration,
    mut then: impl FnMut(&[Agent]),
) -> anyhow::Result<Vec<u64>> {
    let sent = Instant::now();
    for agent in agents.iter_mut() {
        let args = json!({
            "nodeId": agent.node_id, "until": "text", "text": mark(&format!("{label}.{}", agent.index)),
            "since": agent.cursor, "timeoutMs": timeout_ms,
        });
        agent.call("terminal_wait", &args)?;
    }
    let quiet_from = delay.saturating_sub(QUIET);
    std::thread::sleep(PENDING.min(quiet_from));
    then(agents);
    std::thread::sleep(quiet_from.saturating_sub(sent.elapsed()));
    then(agents);
    std::thread::sleep(delay.saturating_sub(sent.elapsed()));
    for agent in agents.iter_mut() {
        agent.print(&format!("{label}.{}", agent.index))?;
    }
    let mut reactions = Vec::with_capacity(agents.len());
    for _ in 0..agents.len() {
        let answer = receive(answers, Duration::from_millis(timeout_ms) + PATIENCE)?;
        let agent = &mut agents[answer.agent];
        let mark = mark(&format!("{label}.{}", agent.index));
        let waited: TerminalWaitResult = tool_answer("terminal_wait", &answer.message)?;
        ensure!(waited.reached, "terminal_wait did not see {mark}: {waited:?}");
        let printed_ns = printed_at(&waited.output, &mark)
            .with_context(|| format!("no stamp before {mark} in {:?}", waited.output))?;
        reactions.push(
            answer
                .read_ns
                .checked_sub(printed_ns)
                .with_context(|| format!("{mark} was answered before it was printed"))?,
        );
        agent.cursor = waited.cursor;
    }
    Ok(reactions)
}

/// A line of a bridge's stdout, with the time it was read.
struct Answer {
    agent: usize,
    message: Value,
    read_ns: u64,
}

fn receive(answers: &mpsc::Receiver<Answer>, patience: Duration) -> anyhow::Result<Answer> {
    answers.recv_timeout(patience).map_err(|_| anyhow::anyhow!("a bridge did not answer in time"))
}

/// The tool's answer in a `tools/call` response, read as `T`.
fn tool_answer<T: serde::de::DeserializeOwned>(
    operation: &str,
    message: &Value,
) -> anyhow::Result<T> {
    let text = message
        .pointer("/result/content/0/text")
        .and_then(Value::as_str)
        .with_context(|| format!("{operation} was answered {message}"))?;
    let result: ToolResult =
        serde_json::from_str(text).with_context(|| format!("{operation} answered {text}"))?;
    answer(operation, result)
}

/// One agent: its bridge, its ticker and where its output was read to.
struct Agent {
    index: usize,
    bridge: Child,
    input: ChildStdin,
    next_id: u64,
    node_id: String,
    fifo: Option<File>,
    cursor: u64,
}

impl Agent {
    /// Starts `ctl --session SESSION mcp --max-wait-ms 600000` with a reader thread that sends
    /// every line it prints, timed, to `lines`.
    fn start(
        ctl: &Path,
        session: &str,
        index: usize,
        lines: mpsc::Sender<Answer>,
    ) -> anyhow::Result<Agent> {
        let mut bridge = Command::new(ctl)
            .args(["--session", session, "mcp", "--max-wait-ms", &MAX_CLIENT_WAIT_MS.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("cannot start {} mcp", ctl.display()))?;
        let input = bridge.stdin.take().context("stdin is piped")?;
        let output = bridge.stdout.take().context("stdout is piped")?;
        std::thread::spawn(move || {
            for line in BufReader::new(output).lines() {
                let read_ns = monotonic_ns();
                let Ok(line) = line else { return };
                let message = serde_json::from_str(&line).unwrap_or(Value::String(line));
                if lines.send(Answer { agent: index, message, read_ns }).is_err() {
                    return;
                }
            }
        });
        Ok(Agent {
            index,
            bridge,
            input,
            next_id: 1,
            node_id: String::new(),
            fifo: None,
            cursor: 0,
        })
    }

    fn send(&mut self, message: &Value) -> anyhow::Result<()> {
        writeln!(self.input, "{message}").context("cannot write to a bridge")
    }

    /// Sends a `tools/call` of `operation` (its answer arrives through the reader).
    fn call(&mut self, operation: &str, args: &Value) -> anyhow::Result<()> {
        self.next_id += 1;
        let id = self.next_id;
        let params = json!({"name": operation, "arguments": args});
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))
    }

    fn initialize(&mut self, answers: &mpsc::Receiver<Answer>) -> anyhow::Result<()> {
        let params = json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "harness-bench-chain", "version": "0"}});
        self.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}))?;
        let answer = self.own_answer(answers)?;
        ensure!(answer.get("result").is_some(), "initialize was answered {answer}");
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    }

    /// The next answer, which must be this agent's (nothing else is pending meanwhile).
    fn own_answer(&self, answers: &mpsc::Receiver<Answer>) -> anyhow::Result<Value> {
        let answer = receive(answers, PATIENCE)?;
        if answer.agent != self.index {
            bail!("bridge {} answered while bridge {} was asked", answer.agent, self.index);
        }
        Ok(answer.message)
    }

    /// Creates the FIFO, runs the ticker in a run node and waits for [`READY`].
    fn start_ticker(
        &mut self,
        helper: &Path,
        fifos: &Path,
        answers: &mpsc::Receiver<Answer>,
    ) -> anyhow::Result<()> {
        let fifo = fifos.join(format!("ticker-{}", self.index));
        let command = super::terminals::fifo_command(helper, "ticker", &fifo)?;
        self.call(
            "terminal_run",
            &json!({"command": command, "title": "chain ticker", "timeoutMs": 0}),
        )?;
        let ran: TerminalRunResult = tool_answer("terminal_run", &self.own_answer(answers)?)?;
        self.node_id = ran.node_id;
        let args = json!({"nodeId": self.node_id, "until": "text", "text": READY, "since": 0, "timeoutMs": SINGLE_TIMEOUT_MS});
        self.call("terminal_wait", &args)?;
        let ready: TerminalWaitResult = tool_answer("terminal_wait", &self.own_answer(answers)?)?;
        ensure!(ready.reached, "a ticker did not start: {ready:?}");
        self.cursor = ready.cursor;
        let fifo = OpenOptions::new()
            .write(true)
            .open(&fifo)
            .with_context(|| format!("cannot open the FIFO {}", fifo.display()))?;
        self.fifo = Some(fifo);
        Ok(())
    }

    /// Has the ticker print `line`'s stamp and mark.
    fn print(&mut self, line: &str) -> anyhow::Result<()> {
        let fifo = self.fifo.as_mut().context("the ticker has not started")?;
        fifo.write_all(format!("{line}\n").as_bytes()).context("cannot write into a FIFO")
    }

    /// Ends the ticker, closes the bridge's input and waits for it to exit (killed after 10 s).
    fn stop(mut self) {
        let _ = self.print(QUIT);
        drop(self.input);
        let _ = wait_child(&mut self.bridge, Duration::from_secs(10));
    }
}
