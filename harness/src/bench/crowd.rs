//! Part 5: many agents at once on one real `termsprawl-headless` server (issue 26, goal 5).
//!
//! [`AGENTS`] agent nodes are launched on one server; each opens a run node whose program, the
//! ticker ([`ticker`], `bench-support ticker FIFO`), prints a line every [`TICK`] and a stamped
//! mark ([`super::terminals::stamp_line`]) for every line of its FIFO. A round sends
//! [`WAITS_PER_AGENT`] `terminal_wait {until: text}` per agent (all pending at once), lets
//! [`SETTLE`] pass, then writes every FIFO in one sweep, so that the awaited lines of all agents
//! appear together. The reaction of a wait is, as in part 4, the client's `CLOCK_MONOTONIC` at
//! its answer minus the stamp printed before its mark. Meanwhile one thread makes one-shot
//! `termsprawlctl call guide_read` calls and another drives a `termsprawlctl mcp` bridge, both
//! on the same server, and every answer is checked.
//!
//! The xtask side ([`measure`]) reads the server's open file descriptors and resident set from
//! `/proc` while the measuring side ([`run`], `bench-support crowd`) runs: before the agents,
//! once every node runs (no wait pending), at the peak, and its `VmHWM`.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, ensure};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use termsprawl_protocol::ToolRequest;
use termsprawl_protocol::results::TerminalWaitResult;
use termsprawl_transport::Client;
use termsprawl_transport::long_wait::{WaitOptions, call_waiting};

use super::command::Invocation;
use super::server::{ARGUMENTS, OPERATION};
use super::stats::Summary;
use super::terminals::{QUIT, READY, mark, monotonic_ns, printed_at, stamp_line};
use crate::base::answer;
use crate::base::binaries::Binaries;
use crate::base::server::{self, Places};

/// Agent sessions on the one server.
pub const AGENTS: usize = 64;
/// Waits pending per agent in every round.
pub const WAITS_PER_AGENT: usize = 4;
/// How often each ticker prints a line of its own.
pub const TICK: Duration = Duration::from_millis(50);
/// How long after sending a round's waits the marks are printed.
pub const SETTLE: Duration = Duration::from_secs(1);
/// The `timeoutMs` of every wait: a mark that does not arrive in time is an error.
pub const WAIT_TIMEOUT_MS: u64 = 20_000;
/// The turns of the one chained wait per agent and round (`long_wait::call_waiting`, issue 38):
/// by the time its mark is printed ([`SETTLE`]) it has chained five turns, so its reaction is the
/// reaction at the end of a long chain, to compare with a single wait's.
pub const CHAIN_TURN: Duration = Duration::from_millis(200);

/// How many rounds to take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// Agent sessions ([`AGENTS`] in the bench; fewer in the harness test).
    pub agents: usize,
    /// Measured rounds ([`AGENTS`] x [`WAITS_PER_AGENT`] waits each).
    pub rounds: usize,
    /// Unmeasured rounds first.
    pub warmup_rounds: usize,
}

/// What the measuring side took.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    /// The settings it ran with.
    pub settings: Settings,
    /// Printed to answered, per measured wait, in nanoseconds.
    pub reactions_ns: Vec<u64>,
    /// Likewise for the one chained wait per agent and round.
    #[serde(default)]
    pub chained_reactions_ns: Vec<u64>,
    /// One-shot calls made meanwhile (all answered the guide).
    pub one_shot_calls: usize,
    /// MCP `tools/call`s made meanwhile (all answered the guide).
    pub mcp_calls: usize,
}

/// Part 5: many agents at once on one headless server.
#[derive(Debug, Clone, PartialEq)]
pub struct Crowd {
    /// Agent sessions, each with its own run node.
    pub agents: usize,
    /// Waits pending per agent in a round.
    pub waits_per_agent: usize,
    /// Measured rounds.
    pub rounds: usize,
    /// Unmeasured rounds first.
    pub warmup_rounds: usize,
    /// How often each node prints a line of its own.
    pub tick: Duration,
    /// Printed to answered, per wait, in nanoseconds.
    pub reaction: Summary,
    /// Likewise for the one chained wait per agent and round (turns of [`CHAIN_TURN`]).
    pub chained: Summary,
    /// One-shot calls made meanwhile.
    pub one_shot_calls: usize,
    /// MCP calls made meanwhile.
    pub mcp_calls: usize,
    /// The server before the agents.
    pub idle: Usage,
    /// The server with every agent and node, no wait pending.
    pub nodes: Usage,
    /// The most file descriptors the server held.
    pub peak_fds: usize,
    /// The server's peak resident set (`VmHWM`), in bytes.
    pub peak_rss: u64,
}

/// The open file descriptors and resident set of a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// Entries of `/proc/<pid>/fd`.
    pub fds: usize,
    /// `VmRSS`, in bytes.
    pub rss: u64,
}

/// `Usage` of `pid` now, and its `VmHWM` (peak resident set) in bytes.
pub fn usage(pid: u32) -> Option<(Usage, u64)> {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status.lines().find_map(|line| {
            let rest = line.strip_prefix(name)?.strip_prefix(':')?;
            rest.trim().strip_suffix(" kB")?.trim().parse::<u64>().ok().map(|kib| kib * 1024)
        })
    };
    Some((Usage { fds, rss: field("VmRSS")? }, field("VmHWM")?))
}

/// The xtask side: `serve` on a temporary data directory, [`AGENTS`] agents launched, then
/// `helper crowd` against them while the server's usage is sampled; the figures of the report.
pub fn measure(helper: &Path, binaries: &Binaries, settings: &Settings) -> anyhow::Result<Crowd> {
    server::on_temporary_serve(binaries, "termsprawl-crowd-", &["fifos"], |places, serve| {
        launch_and_run(helper, binaries, places, settings, serve.pid())
    })
}

fn launch_and_run(
    helper: &Path,
    binaries: &Binaries,
    places: &Places,
    settings: &Settings,
    pid: u32,
) -> anyhow::Result<Crowd> {
    let (idle, _) = usage(pid).context("cannot read the server's /proc entries")?;
    let mut sessions = String::new();
    for index in 0..settings.agents {
        let name = format!("crowd-{index}");
        let launched = server::launch(binaries, places, &places.projects[0], &name)?;
        let session = launched["sessionFile"].as_str().context("launch printed no sessionFile")?;
        sessions.push_str(session);
        sessions.push('\n');
    }
    let list = places.root.join("sessions");
    std::fs::write(&list, sessions).context("cannot write the session list")?;
    let ready = places.root.join("nodes-ready");
    let mut child = Command::new(helper)
        .arg("crowd")
        .arg("--sessions")
        .arg(&list)
        .arg("--fifos")
        .arg(places.root.join("fifos"))
        .arg("--ready")
        .arg(&ready)
        .arg("--ctl")
        .arg(&binaries.ctl)
        .args(["--rounds", &settings.rounds.to_string()])
        .args(["--warmup-rounds", &settings.warmup_rounds.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("cannot start {}", helper.display()))?;
    let mut stdout = child.stdout.take().context("stdout is piped")?;
    let printed = std::thread::spawn(move || {
        let mut text = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut text).map(|_| text)
    });
    let (mut nodes, mut peak_fds, mut peak_rss) = (None, 0, 0);
    let status = loop {
        if let Some(status) = child.try_wait().context("cannot wait for the crowd")? {
            break status;
        }
        if let Some((now, high)) = usage(pid) {
            if nodes.is_none() && ready.exists() {
                nodes = Some(now);
            }
            peak_fds = peak_fds.max(now.fds);
            peak_rss = peak_rss.max(high);
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let printed = printed.join().map_err(|_| anyhow::anyhow!("the reader panicked"))??;
    ensure!(status.success(), "the crowd measurements failed: {status}");
    let outcome: Outcome =
        serde_json::from_slice(&printed).context("the crowd measurements printed no outcome")?;
    let waits = settings.rounds * settings.agents * WAITS_PER_AGENT;
    ensure!(
        outcome.reactions_ns.len() == waits,
        "the crowd measured {} waits, not {waits}",
        outcome.reactions_ns.len()
    );
    Ok(Crowd {
        agents: settings.agents,
        waits_per_agent: WAITS_PER_AGENT,
        rounds: settings.rounds,
        warmup_rounds: settings.warmup_rounds,
        tick: TICK,
        reaction: Summary::of(&outcome.reactions_ns).context("no crowd wait was measured")?,
        chained: Summary::of(&outcome.chained_reactions_ns)
            .context("no chained crowd wait was measured")?,
        one_shot_calls: outcome.one_shot_calls,
        mcp_calls: outcome.mcp_calls,
        idle,
        nodes: nodes.context("the crowd never said its nodes run")?,
        peak_fds,
        peak_rss,
    })
}

/// `bench-support crowd`: [`run`], then its [`Outcome`] as one JSON line on stdout.
pub fn run_and_print(
    sessions: &Path,
    fifos: &Path,
    ready: &Path,
    ctl: &Path,
    settings: &Settings,
) -> anyhow::Result<()> {
    let outcome = run(sessions, fifos, ready, ctl, settings)?;
    println!("{}", serde_json::to_string(&outcome).expect("an outcome always serialises"));
    Ok(())
}

/// One agent's run node and the FIFO into its ticker.
struct Ticker {
    session: PathBuf,
    node_id: String,
    fifo: File,
    cursor: u64,
}

/// The measuring side: a ticker node per session of the file `sessions` (FIFOs in `fifos`),
/// `ready` touched once they all run, then the rounds with one-shot and MCP traffic of `ctl`.
pub fn run(
    sessions: &Path,
    fifos: &Path,
    ready: &Path,
    ctl: &Path,
    settings: &Settings,
) -> anyhow::Result<Outcome> {
    let program = std::env::current_exe().context("cannot find this program")?;
    let sessions: Vec<PathBuf> = std::fs::read_to_string(sessions)
        .context("cannot read the session list")?
        .lines()
        .map(PathBuf::from)
        .collect();
    ensure!(sessions.len() >= 2, "the crowd needs at least two sessions");
    let settings = &Settings { agents: sessions.len(), ..*settings };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the runtime")?;
    runtime.block_on(async {
        let client = Client::default();
        let mut starting = Vec::new();
        for (index, session) in sessions.iter().enumerate() {
            let fifo = fifos.join(format!("{index}.fifo"));
            let (client, session, program) = (client.clone(), session.clone(), program.clone());
            starting.push(tokio::spawn(async move {
                start_ticker(&client, session, &program, &fifo).await
            }));
        }
        let mut tickers = Vec::new();
        for started in starting {
            tickers.push(started.await.context("a starting task panicked")??);
        }
        std::fs::write(ready, b"").context("cannot touch the ready file")?;

        let stop = Arc::new(AtomicBool::new(false));
        let one_shots = Arc::new(AtomicUsize::new(0));
        let one_shot = {
            let (stop, count) = (Arc::clone(&stop), Arc::clone(&one_shots));
            let (ctl, session) = (ctl.to_path_buf(), sessions[0].clone());
            std::thread::spawn(move || one_shot_traffic(&ctl, &session, &stop, &count))
        };
        let mcp = {
            let stop = Arc::clone(&stop);
            let invocation = Invocation::new(ctl).args([
                OsString::from("--session"),
                sessions[1].clone().into_os_string(),
                OsString::from("mcp"),
            ]);
            std::thread::spawn(move || mcp_traffic(&invocation, &stop))
        };

        let mut reactions_ns = Vec::new();
        let mut chained_reactions_ns = Vec::new();
        for round in 0..settings.warmup_rounds + settings.rounds {
            let measured = one_round(&client, &mut tickers, round).await;
            let measured = match measured {
                Ok(measured) => measured,
                Err(error) => {
                    stop.store(true, Ordering::Relaxed);
                    return Err(error);
                }
            };
            if round >= settings.warmup_rounds {
                reactions_ns.extend(measured.0);
                chained_reactions_ns.extend(measured.1);
            }
        }
        stop.store(true, Ordering::Relaxed);
        one_shot.join().map_err(|_| anyhow::anyhow!("the one-shot thread panicked"))??;
        let mcp_calls = mcp.join().map_err(|_| anyhow::anyhow!("the MCP thread panicked"))??;
        for mut ticker in tickers {
            let _ = ticker.fifo.write_all(format!("{QUIT}\n").as_bytes());
        }
        Ok(Outcome {
            settings: *settings,
            reactions_ns,
            chained_reactions_ns,
            one_shot_calls: one_shots.load(Ordering::Relaxed),
            mcp_calls,
        })
    })
}

/// The value of a successful `operation`, or an error with the tool's message.
/// Creates the FIFO, runs the ticker in a run node of `session` and waits for [`READY`].
async fn start_ticker(
    client: &Client,
    session: PathBuf,
    program: &Path,
    fifo: &Path,
) -> anyhow::Result<Ticker> {
    let command = super::terminals::fifo_command(program, "ticker", fifo)?;
    let args = json!({"command": command, "title": "crowd ticker", "timeoutMs": 0});
    let started = answer::<Value>(
        "terminal_run",
        client.call(&session, &ToolRequest::new("terminal_run", &args)).await,
    )?;
    let node_id = started["nodeId"].as_str().context("terminal_run gave no nodeId")?.to_owned();
    let args = json!({"nodeId": node_id, "until": "text", "text": READY, "since": 0, "timeoutMs": WAIT_TIMEOUT_MS});
    let request = ToolRequest::new("terminal_wait", &args);
    let waited: TerminalWaitResult =
        answer("terminal_wait", client.call(&session, &request).await)?;
    ensure!(waited.reached, "a ticker did not start: {waited:?}");
    let cursor = waited.cursor;
    let fifo = OpenOptions::new()
        .write(true)
        .open(fifo)
        .with_context(|| format!("cannot open the FIFO {}", fifo.display()))?;
    Ok(Ticker { session, node_id, fifo, cursor })
}

/// One round: every wait sent, [`SETTLE`], every FIFO written in one sweep, every answer checked;
/// the reactions in nanoseconds, of the single waits and of the chained ones.
async fn one_round(
    client: &Client,
    tickers: &mut [Ticker],
    round: usize,
) -> anyhow::Result<(Vec<u64>, Vec<u64>)> {
    let mut pending = Vec::new();
    let chain = WaitOptions::new(WAIT_TIMEOUT_MS).with_turns(CHAIN_TURN, CHAIN_TURN);
    for (agent, ticker) in tickers.iter().enumerate() {
        // `WAITS_PER_AGENT` single waits, then one chained wait.
        for wait in 0..=WAITS_PER_AGENT {
            let chained = wait == WAITS_PER_AGENT;
            let label = if chained { "c".to_owned() } else { wait.to_string() };
            let mark = mark(&format!("{round}.{agent}.{label}"));
            let args = json!({
                "nodeId": ticker.node_id, "until": "text", "text": mark, "since": ticker.cursor,
                "timeoutMs": WAIT_TIMEOUT_MS,
            });
            let request = ToolRequest::new("terminal_wait", &args);
            let (client, session) = (client.clone(), ticker.session.clone());
            pending.push((
                agent,
                chained,
                mark,
                tokio::spawn(async move {
                    let result = if chained {
                        call_waiting(&client, &session, &request, &chain, None).await
                    } else {
                        client.call(&session, &request).await
                    };
                    (result, monotonic_ns())
                }),
            ));
        }
    }
    tokio::time::sleep(SETTLE).await;
    for (agent, ticker) in tickers.iter_mut().enumerate() {
        let mut lines = String::new();
        for wait in 0..WAITS_PER_AGENT {
            let _ = writeln!(lines, "{round}.{agent}.{wait}");
        }
        let _ = writeln!(lines, "{round}.{agent}.c");
        ticker.fifo.write_all(lines.as_bytes()).context("cannot write into a FIFO")?;
    }
    let mut reactions = Vec::with_capacity(pending.len());
    let mut chained_reactions = Vec::with_capacity(tickers.len());
    let mut cursors: HashMap<usize, u64> = HashMap::new();
    for (agent, chained, mark, task) in pending {
        let (result, answered_ns) = task.await.context("a waiting task panicked")?;
        let waited: TerminalWaitResult = answer("terminal_wait", result)?;
        ensure!(waited.reached, "terminal_wait did not see {mark}: {waited:?}");
        let output = waited.output.as_str();
        let printed_ns = printed_at(output, &mark)
            .with_context(|| format!("no stamp before {mark} in {output:?}"))?;
        let reaction = answered_ns
            .checked_sub(printed_ns)
            .with_context(|| format!("{mark} was answered before it was printed"))?;
        if chained {
            chained_reactions.push(reaction);
        } else {
            reactions.push(reaction);
        }
        let cursor = waited.cursor;
        let known = cursors.entry(agent).or_default();
        *known = (*known).max(cursor);
    }
    for (agent, cursor) in cursors {
        tickers[agent].cursor = cursor;
    }
    Ok((reactions, chained_reactions))
}

/// One-shot `guide_read` calls of `ctl` one after another until `stop`; each must answer.
fn one_shot_traffic(
    ctl: &Path,
    session: &Path,
    stop: &AtomicBool,
    count: &AtomicUsize,
) -> anyhow::Result<()> {
    while !stop.load(Ordering::Relaxed) {
        let output = Command::new(ctl)
            .arg("--session")
            .arg(session)
            .args(["call", OPERATION, ARGUMENTS])
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("cannot run {}", ctl.display()))?;
        ensure!(
            output.status.success() && !output.stdout.is_empty(),
            "a one-shot call failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        count.fetch_add(1, Ordering::Relaxed);
    }
    Ok(())
}

/// MCP bridges of 200 calls with 4 in flight, one after another until `stop`; the calls made.
fn mcp_traffic(invocation: &Invocation, stop: &AtomicBool) -> anyhow::Result<usize> {
    let mut calls = 0;
    while !stop.load(Ordering::Relaxed) {
        let outcome = super::mcp::drive(invocation, None, 0, 200, 4)?;
        calls += outcome.calls;
    }
    Ok(calls)
}

/// The ticker, `bench-support ticker FIFO`: opens the FIFO (read-write, so that it never sees an
/// end of file), prints [`READY`], then a `tick N` line every [`TICK`] and [`stamp_line`] for
/// every line of the FIFO as it comes, until [`QUIT`].
pub fn ticker(fifo: &Path) -> anyhow::Result<()> {
    let input = OpenOptions::new()
        .read(true)
        .write(true)
        .open(fifo)
        .with_context(|| format!("cannot open {}", fifo.display()))?;
    let (lines, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(input).lines() {
            let Ok(line) = line else { return };
            if lines.send(line).is_err() {
                return;
            }
        }
    });
    let mut out = std::io::stdout().lock();
    out.write_all(format!("{READY}\n").as_bytes()).and_then(|()| out.flush())?;
    let mut next = Instant::now() + TICK;
    let mut ticks = 0_u64;
    loop {
        match received.recv_timeout(next.saturating_duration_since(Instant::now())) {
            Ok(line) if line == QUIT => return Ok(()),
            Ok(line) => {
                let text = stamp_line(&line, monotonic_ns());
                out.write_all(text.as_bytes()).and_then(|()| out.flush())?;
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                out.write_all(format!("tick {ticks}\n").as_bytes()).and_then(|()| out.flush())?;
                ticks += 1;
                next += TICK;
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return Ok(()),
        }
    }
}
