//! Part 4: terminals on the real `termsprawl-headless` server, through the in-process client of
//! part 3: how soon a pending `terminal_wait` answers once the text it waits for is printed, and
//! what a `terminal_read` costs beside a `guide_read` of the same server (the queue turn and the
//! tmux work of every terminal read).
//!
//! Three processes take part:
//! - the xtask side, [`measure`]: starts `termsprawl-headless serve` on a temporary data
//!   directory, whose tmux server runs on a private socket there ([`crate::base::server`]),
//!   launches one agent node for a session, runs the measuring side and stops everything;
//! - the measuring side, [`run`] (`bench-support terminals`, release): opens a run node whose
//!   program is the printing side; for each sample it sends `terminal_wait {until: text}` for a
//!   new mark, lets [`SETTLE`] pass so that the wait is pending in the server, and writes the
//!   mark into the printing side's FIFO; then the reads, round-robin. It prints one JSON line,
//!   [`Outcome`];
//! - the printing side, [`stamp`] (`bench-support stamp FIFO`, the run node's program): for each
//!   line read from the FIFO it reads `CLOCK_MONOTONIC` and writes `t=<ns> <mark N>` and a line
//!   feed to the terminal in one `write`.
//!
//! The reaction of one wait is the measuring side's `CLOCK_MONOTONIC` when `Client::call` returns
//! the answer, minus the stamp printed before the mark in that answer's output ([`printed_at`]).
//! Both processes read the same clock of the machine, so the delay runs from the `write` that
//! printed the text to the answer in the client; [`figures`] turns the samples into the report.

use std::fs::{File, OpenOptions};
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context as _, ensure};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use termsprawl_protocol::results::{
    TerminalListEntry, TerminalReadResult, TerminalRunResult, TerminalWaitResult,
};
use termsprawl_protocol::{ToolRequest, ToolResult};
use termsprawl_transport::Client;

use super::stats::{Summary, nanos};
use super::survey;
use crate::base::answer;
use crate::base::binaries::Binaries;
use crate::base::server::{self, Places};
use termsprawl_protocol::shell::single_quoted;

/// How long after sending a wait the mark is printed: the wait must be pending by then, so that
/// its answer is a reaction and not the end of a request that found the text already there.
pub const SETTLE: Duration = Duration::from_millis(100);

/// What the printing side prints once its FIFO is open.
pub const READY: &str = "stamp ready";

/// The FIFO line that ends the printing side.
pub const QUIT: &str = "quit";

/// The `timeoutMs` of every measured wait: a mark that does not arrive in time is an error.
pub const WAIT_TIMEOUT_MS: u64 = 10_000;

/// The call of the baseline row, as the table shows it.
pub const GUIDE_READ: &str = r#"`guide_read` `{"topic":"canvas"}`"#;
/// A `terminal_read` of the run node (its screen and scrollback through tmux `capture-pane`).
pub const TERMINAL_READ: &str = r#"`terminal_read` `{"nodeId":…}`"#;
/// A `terminal_read` with `since` (the pane's state from tmux, the text from the stream).
pub const TERMINAL_READ_SINCE: &str = r#"`terminal_read` `{"nodeId":…,"since":0}`"#;

/// How many samples to take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// Measured waits.
    pub waits: usize,
    /// Unmeasured waits first.
    pub warmup_waits: usize,
    /// Measured calls of each read.
    pub reads: usize,
    /// Unmeasured rounds of reads first.
    pub warmup_reads: usize,
}

/// One measured wait, in `CLOCK_MONOTONIC` nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitSample {
    /// When the measuring side wrote the mark into the FIFO.
    pub trigger_ns: u64,
    /// The printing side's stamp, read just before it printed the mark.
    pub printed_ns: u64,
    /// When `Client::call` returned the wait's answer.
    pub answered_ns: u64,
}

/// What one run of the measuring side took.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    /// The settings it ran with.
    pub settings: Settings,
    /// Every measured wait, in order.
    pub waits: Vec<WaitSample>,
    /// The latency of each measured `guide_read`, in nanoseconds.
    pub guide_read_ns: Vec<u64>,
    /// The latency of each measured `terminal_read` without `since`.
    pub terminal_read_ns: Vec<u64>,
    /// The latency of each measured `terminal_read` with `since: 0`.
    pub terminal_read_since_ns: Vec<u64>,
    /// The latency of each measured `terminal_list` ([`super::survey`]).
    #[serde(default)]
    pub terminal_list_ns: Vec<u64>,
    /// The latency of each measured `terminal_search` ([`super::survey`]).
    #[serde(default)]
    pub terminal_search_ns: Vec<u64>,
    /// The latency of each measured `terminal_list` while every terminal is live
    /// ([`super::survey::TERMINAL_LIST_LIVE`]).
    #[serde(default)]
    pub terminal_list_live_ns: Vec<u64>,
}

/// `CLOCK_MONOTONIC` in nanoseconds: the clock every process of the machine shares.
pub fn monotonic_ns() -> u64 {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    let seconds = u64::try_from(now.tv_sec).unwrap_or(0);
    let fraction = u64::try_from(now.tv_nsec).unwrap_or(0);
    seconds.saturating_mul(1_000_000_000).saturating_add(fraction)
}

/// The mark of wait number `index`: closed by `>`, so that no mark is part of another.
pub fn mark(index: &str) -> String {
    format!("<mark {index}>")
}

/// The line the printing side writes for the FIFO line `index` at `CLOCK_MONOTONIC` `ns`.
pub fn stamp_line(index: &str, ns: u64) -> String {
    format!("t={ns} {}\n", mark(index))
}

/// The stamp printed just before `mark` in `output`: the number of the `t=<ns>` word that ends
/// right before the mark's first occurrence; `None` when the mark or its stamp is missing.
pub fn printed_at(output: &str, mark: &str) -> Option<u64> {
    let at = output.find(mark)?;
    let before = output[..at].strip_suffix(' ')?;
    let word = before.rsplit(char::is_whitespace).next()?;
    let digits = word.strip_prefix("t=")?;
    if digits.is_empty() || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Part 4: `terminal_wait` and `terminal_read` on the real headless server.
#[derive(Debug, Clone, PartialEq)]
pub struct Terminals {
    /// Measured waits.
    pub waits: usize,
    /// Unmeasured waits first.
    pub warmup_waits: usize,
    /// How long after sending a wait its mark was printed.
    pub settle: Duration,
    /// From the `write` that printed the mark to the answer in the client, in nanoseconds.
    pub reaction: Summary,
    /// From the FIFO write that made the mark print to the answer, in nanoseconds.
    pub trigger_to_answer: Summary,
    /// Measured calls of each read.
    pub reads: usize,
    /// Unmeasured rounds of reads first.
    pub warmup_reads: usize,
    /// The baseline `guide_read` first, then the terminal reads.
    pub read_rows: Vec<Read>,
}

/// One read of part 4.
#[derive(Debug, Clone, PartialEq)]
pub struct Read {
    /// The call as shown (Markdown).
    pub call: String,
    /// Latency per call, in nanoseconds.
    pub latency: Summary,
}

/// The report's figures of `outcome`: the reaction (printed to answered) and the trigger to
/// answer delay of every wait, and the three reads with `guide_read` first. An error when a
/// sample is impossible (answered before it was printed, printed before it was triggered) or a
/// part has no samples.
pub fn figures(outcome: &Outcome) -> anyhow::Result<Terminals> {
    let mut reactions = Vec::with_capacity(outcome.waits.len());
    let mut triggered = Vec::with_capacity(outcome.waits.len());
    for (index, sample) in outcome.waits.iter().enumerate() {
        let reaction = sample.answered_ns.checked_sub(sample.printed_ns).with_context(|| {
            format!("wait {index} was answered before its mark was printed: {sample:?}")
        })?;
        ensure!(
            sample.printed_ns >= sample.trigger_ns,
            "mark {index} was printed before it was written into the FIFO: {sample:?}"
        );
        reactions.push(reaction);
        triggered.push(sample.answered_ns - sample.trigger_ns);
    }
    let summary = |samples: &[u64], what: &str| {
        Summary::of(samples).with_context(|| format!("no {what} was measured"))
    };
    let settings = outcome.settings;
    Ok(Terminals {
        waits: outcome.waits.len(),
        warmup_waits: settings.warmup_waits,
        settle: SETTLE,
        reaction: summary(&reactions, "terminal_wait")?,
        trigger_to_answer: summary(&triggered, "terminal_wait")?,
        reads: settings.reads,
        warmup_reads: settings.warmup_reads,
        read_rows: vec![
            Read {
                call: GUIDE_READ.to_owned(),
                latency: summary(&outcome.guide_read_ns, "guide_read")?,
            },
            Read {
                call: TERMINAL_READ.to_owned(),
                latency: summary(&outcome.terminal_read_ns, "terminal_read")?,
            },
            Read {
                call: TERMINAL_READ_SINCE.to_owned(),
                latency: summary(&outcome.terminal_read_since_ns, "terminal_read with since")?,
            },
            Read {
                call: survey::TERMINAL_LIST.to_owned(),
                latency: summary(&outcome.terminal_list_ns, "terminal_list")?,
            },
            Read {
                call: survey::TERMINAL_LIST_LIVE.to_owned(),
                latency: summary(&outcome.terminal_list_live_ns, "terminal_list of live shells")?,
            },
            Read {
                call: survey::TERMINAL_SEARCH.to_owned(),
                latency: summary(&outcome.terminal_search_ns, "terminal_search")?,
            },
        ],
    })
}

/// The xtask side: `serve` on a temporary data directory (no execution log), one agent node
/// launched for its session, `helper terminals` against it; then the server is stopped with
/// SIGTERM and its tmux server killed, also after a failure.
pub fn measure(helper: &Path, binaries: &Binaries, settings: &Settings) -> anyhow::Result<Outcome> {
    server::on_temporary_serve(binaries, "termsprawl-bench-", &[], |places, _| {
        launch_and_run(helper, binaries, places, settings)
    })
}

fn launch_and_run(
    helper: &Path,
    binaries: &Binaries,
    places: &Places,
    settings: &Settings,
) -> anyhow::Result<Outcome> {
    let launched = server::launch(binaries, places, &places.projects[0], "bench")?;
    let session = launched["sessionFile"].as_str().context("launch printed no sessionFile")?;
    let output = Command::new(helper)
        .arg("terminals")
        .args(["--session", session])
        .arg("--fifo")
        .arg(places.root.join("stamp.fifo"))
        .args(["--waits", &settings.waits.to_string()])
        .args(["--warmup-waits", &settings.warmup_waits.to_string()])
        .args(["--reads", &settings.reads.to_string()])
        .args(["--warmup-reads", &settings.warmup_reads.to_string()])
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("cannot start {}", helper.display()))?;
    ensure!(output.status.success(), "the terminal measurements failed: {}", output.status);
    let outcome: Outcome = serde_json::from_slice(&output.stdout)
        .context("the terminal measurements printed no outcome")?;
    ensure!(
        outcome.waits.len() == settings.waits
            && [
                &outcome.guide_read_ns,
                &outcome.terminal_read_ns,
                &outcome.terminal_read_since_ns,
                &outcome.terminal_list_ns,
                &outcome.terminal_search_ns,
                &outcome.terminal_list_live_ns,
            ]
            .iter()
            .all(|samples| samples.len() == settings.reads),
        "the terminal measurements took other counts than asked: {} waits, {} reads",
        outcome.waits.len(),
        outcome.terminal_read_ns.len()
    );
    Ok(outcome)
}

/// `bench-support terminals`: [`run`], then its [`Outcome`] as one JSON line on stdout.
pub fn run_and_print(session: &Path, fifo: &Path, settings: &Settings) -> anyhow::Result<()> {
    let outcome = run(session, fifo, settings)?;
    println!("{}", serde_json::to_string(&outcome).expect("an outcome always serialises"));
    Ok(())
}

/// Creates the FIFO `fifo` (0600) and answers the run node's command that has this program's
/// `role` (`stamp`, `ticker`) print through it.
pub(super) fn fifo_command(program: &Path, role: &str, fifo: &Path) -> anyhow::Result<String> {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .with_context(|| format!("cannot create the FIFO {}", fifo.display()))?;
    Ok(format!(
        "exec {} {role} {}",
        single_quoted(&program.to_string_lossy()),
        single_quoted(&fifo.to_string_lossy())
    ))
}

/// The measuring side: creates the FIFO `fifo`, opens a run node printing through it, measures
/// the waits and then the reads with the session file `session`.
pub fn run(session: &Path, fifo: &Path, settings: &Settings) -> anyhow::Result<Outcome> {
    let program = std::env::current_exe().context("cannot find this program")?;
    let command = fifo_command(&program, "stamp", fifo)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the runtime")?;
    runtime.block_on(async {
        let calls = Calls { client: Client::default(), session: session.to_path_buf() };
        let mut node = Node::start(&calls, &command, fifo).await?;
        let mut waits = Vec::with_capacity(settings.waits);
        for index in 0..settings.warmup_waits + settings.waits {
            let sample = node.wait(&calls, index).await?;
            if index >= settings.warmup_waits {
                waits.push(sample);
            }
        }
        let mut reads = [Vec::new(), Vec::new(), Vec::new()];
        let last_mark =
            mark(&(settings.warmup_waits + settings.waits).saturating_sub(1).to_string());
        let node_id = node.id.clone();
        let requests = [
            (ToolRequest::new("guide_read", &json!({"topic": "canvas"})), None),
            (ToolRequest::new("terminal_read", &json!({"nodeId": node_id})), Some(&last_mark)),
            (
                ToolRequest::new("terminal_read", &json!({"nodeId": node_id, "since": 0})),
                Some(&last_mark),
            ),
        ];
        for round in 0..settings.warmup_reads + settings.reads {
            for ((request, shows), latencies) in requests.iter().zip(&mut reads) {
                let started = std::time::Instant::now();
                let result = calls.client.call(&calls.session, request).await;
                let latency = nanos(started.elapsed());
                check_read(&result, *shows)?;
                if round >= settings.warmup_reads {
                    latencies.push(latency);
                }
            }
        }
        // The stamp node still runs: with the agent's node and the shells, every terminal is live.
        let terminal_list_live_ns = live_survey(&calls, settings).await?;
        node.quit();
        let [terminal_list_ns, terminal_search_ns] = survey(&calls, settings).await?;
        let [guide_read_ns, terminal_read_ns, terminal_read_since_ns] = reads;
        Ok(Outcome {
            settings: *settings,
            waits,
            guide_read_ns,
            terminal_read_ns,
            terminal_read_since_ns,
            terminal_list_ns,
            terminal_search_ns,
            terminal_list_live_ns,
        })
    })
}

/// How many shells of the live row are opened at once: the next are opened once these are idle
/// at their prompts (a shell's start files may run programs for most of a second, pyenv's say;
/// hundreds at once on a small machine would take minutes and time the opening out).
const SHELLS_AT_ONCE: usize = 32;
/// How long the shells of one such batch may take to reach their prompts.
const SHELLS_SETTLE_LIMIT: Duration = Duration::from_mins(2);
/// How often the live row asks whether its shells are idle meanwhile.
const SHELLS_POLL: Duration = Duration::from_millis(200);

/// The live row ([`survey::TERMINAL_LIST_LIVE`]): shells opened until [`survey::LIST_TERMINALS`]
/// terminals are live (the agent's node and the running stamp node are two),
/// [`SHELLS_AT_ONCE`] at a time, each batch until every shell opened so far is idle at its
/// prompt ([`survey::busy_shells`]), then `terminal_list` measured as the other survey rows
/// (one unmeasured round first); the shells are closed again, so the survey that follows finds
/// the server as before.
async fn live_survey(calls: &Calls, settings: &Settings) -> anyhow::Result<Vec<u64>> {
    let shells = survey::LIST_TERMINALS.checked_sub(2).context("too few terminals")?;
    let mut opened = Vec::with_capacity(shells);
    while opened.len() < shells {
        for index in opened.len()..shells.min(opened.len() + SHELLS_AT_ONCE) {
            let args = json!({"title": format!("idle {index}")});
            let shell: Value = calls.typed("terminal_open", &args).await?;
            opened
                .push(shell["nodeId"].as_str().context("terminal_open gave no nodeId")?.to_owned());
        }
        let deadline = tokio::time::Instant::now() + SHELLS_SETTLE_LIMIT;
        loop {
            let entries: Vec<TerminalListEntry> = calls.typed("terminal_list", &json!({})).await?;
            let busy = survey::busy_shells(&entries, &opened);
            if busy.is_empty() {
                break;
            }
            ensure!(
                tokio::time::Instant::now() < deadline,
                "{} shells of the live terminal_list row did not reach their prompts within {} s: \
                 {busy:?}",
                busy.len(),
                SHELLS_SETTLE_LIMIT.as_secs()
            );
            tokio::time::sleep(SHELLS_POLL).await;
        }
    }
    let request = ToolRequest::new("terminal_list", &json!({}));
    let mut latencies = Vec::with_capacity(settings.reads);
    for round in 0..settings.warmup_reads.max(1) + settings.reads {
        let started = std::time::Instant::now();
        let result = calls.client.call(&calls.session, &request).await;
        let latency = nanos(started.elapsed());
        survey::check_live(&answer::<Vec<TerminalListEntry>>("terminal_list", result)?)?;
        if round >= settings.warmup_reads.max(1) {
            latencies.push(latency);
        }
    }
    for node_id in opened {
        calls.call("terminal_close", &json!({"nodeId": node_id})).await?;
    }
    Ok(latencies)
}

/// The survey rows ([`super::survey`]): the server filled with terminals, then `terminal_list`
/// and `terminal_search` round-robin, one unmeasured round first (it reads every stream).
async fn survey(calls: &Calls, settings: &Settings) -> anyhow::Result<[Vec<u64>; 2]> {
    // The agent node and the run node of the waits are there already.
    let short = survey::short_nodes(2)?;
    let nodes = (0..survey::SEARCH_TERMINALS).map(|index| (true, index));
    for (bulk, index) in nodes.chain((0..short).map(|index| (false, index))) {
        let done: TerminalRunResult =
            calls.typed("terminal_run", &survey::run_args(bulk, index)).await?;
        ensure!(survey::ended(&done), "survey node {index} did not end well: {done:?}");
    }
    let requests = survey::requests();
    let mut latencies = [Vec::new(), Vec::new()];
    for round in 0..settings.warmup_reads.max(1) + settings.reads {
        for (request, samples) in requests.iter().zip(&mut latencies) {
            let started = std::time::Instant::now();
            let result = calls.client.call(&calls.session, request).await;
            let latency = nanos(started.elapsed());
            let operation = request.operation().unwrap_or_default();
            survey::check(operation, &answer::<Value>(operation, result)?)?;
            if round >= settings.warmup_reads.max(1) {
                samples.push(latency);
            }
        }
    }
    Ok(latencies)
}

/// The client and the session every call uses.
struct Calls {
    client: Client,
    session: std::path::PathBuf,
}

impl Calls {
    /// One call; its value, or an error naming the operation.
    async fn call(&self, operation: &str, args: &Value) -> anyhow::Result<Value> {
        self.typed(operation, args).await
    }

    /// One call; its value as `T` ([`answer`]), or an error naming the operation.
    async fn typed<T: serde::de::DeserializeOwned>(
        &self,
        operation: &str,
        args: &Value,
    ) -> anyhow::Result<T> {
        answer(operation, self.client.call(&self.session, &ToolRequest::new(operation, args)).await)
    }
}

/// A read must answer what it reads: the canvas guide, or terminal output showing `mark`.
fn check_read(result: &ToolResult, shows: Option<&String>) -> anyhow::Result<()> {
    let Some(mark) = shows else {
        return super::server::check_result(result)
            .map_err(|reason| anyhow::anyhow!("guide_read: {reason}"));
    };
    let read: TerminalReadResult = answer("terminal_read", result.clone())?;
    ensure!(read.output.contains(mark.as_str()), "terminal_read did not show {mark}: {read:?}");
    Ok(())
}

/// The run node of the printing side, and the FIFO into it.
struct Node {
    id: String,
    fifo: File,
    cursor: u64,
}

impl Node {
    /// `terminal_run` of `command` (without waiting), then a wait for [`READY`]; the FIFO is
    /// opened for writing once the printing side holds it open.
    async fn start(calls: &Calls, command: &str, fifo: &Path) -> anyhow::Result<Node> {
        let args = json!({"command": command, "title": "bench stamp", "timeoutMs": 0});
        let started = calls.call("terminal_run", &args).await?;
        let id = started["nodeId"].as_str().context("terminal_run gave no nodeId")?.to_owned();
        let args = json!({"nodeId": id, "until": "text", "text": READY, "since": 0, "timeoutMs": WAIT_TIMEOUT_MS});
        let ready: TerminalWaitResult = calls.typed("terminal_wait", &args).await?;
        ensure!(
            ready.reached,
            "the printing side did not start within {WAIT_TIMEOUT_MS} ms: {ready:?}"
        );
        let cursor = ready.cursor;
        let fifo = OpenOptions::new()
            .write(true)
            .open(fifo)
            .with_context(|| format!("cannot open the FIFO {}", fifo.display()))?;
        Ok(Node { id, fifo, cursor })
    }

    /// One wait: sent, [`SETTLE`], the mark written, the answer checked and timed.
    async fn wait(&mut self, calls: &Calls, index: usize) -> anyhow::Result<WaitSample> {
        let line = index.to_string();
        let mark = mark(&line);
        let args = json!({
            "nodeId": self.id, "until": "text", "text": mark, "since": self.cursor,
            "timeoutMs": WAIT_TIMEOUT_MS,
        });
        let request = ToolRequest::new("terminal_wait", &args);
        let (client, session) = (calls.client.clone(), calls.session.clone());
        let pending = tokio::spawn(async move {
            let result = client.call(&session, &request).await;
            (result, monotonic_ns())
        });
        tokio::time::sleep(SETTLE).await;
        let trigger_ns = monotonic_ns();
        self.fifo
            .write_all(format!("{line}\n").as_bytes())
            .context("cannot write into the FIFO")?;
        let (result, answered_ns) = pending.await.context("the waiting task panicked")?;
        let waited: TerminalWaitResult = answer("terminal_wait", result)?;
        ensure!(
            waited.reached,
            "terminal_wait did not see {mark} within {WAIT_TIMEOUT_MS} ms: {waited:?}"
        );
        let output = &waited.output;
        let printed_ns = printed_at(output, &mark)
            .with_context(|| format!("no stamp before {mark} in {output:?}"))?;
        self.cursor = waited.cursor;
        Ok(WaitSample { trigger_ns, printed_ns, answered_ns })
    }

    /// Ends the printing side (its node stays until the server goes).
    fn quit(mut self) {
        let _ = self.fifo.write_all(format!("{QUIT}\n").as_bytes());
    }
}

/// The printing side, `bench-support stamp FIFO`: opens the FIFO (read-write, so that it never
/// sees an end of file), prints [`READY`], then for every line until [`QUIT`] prints
/// [`stamp_line`] with the time read just before, in one `write`.
pub fn stamp(fifo: &Path) -> anyhow::Result<()> {
    let input = OpenOptions::new()
        .read(true)
        .write(true)
        .open(fifo)
        .with_context(|| format!("cannot open {}", fifo.display()))?;
    let mut out = std::io::stdout().lock();
    out.write_all(format!("{READY}\n").as_bytes()).and_then(|()| out.flush())?;
    for line in BufReader::new(input).lines() {
        let line = line.context("cannot read the FIFO")?;
        if line == QUIT {
            break;
        }
        let text = stamp_line(&line, monotonic_ns());
        out.write_all(text.as_bytes()).and_then(|()| out.flush())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
