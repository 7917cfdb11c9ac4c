//! `cargo xtask soak`: the real `termsprawl-headless serve` and real `termsprawlctl` processes
//! under load and faults for a while, with every call accounted for.
//!
//! Setup: a temporary directory with a data directory and two project folders; `serve` with
//! `--exec-log`; four agent nodes (two per project) running `sh -c 'cat >/dev/null'`, so that
//! delivered text is never executed, linked in pairs with `link --both`; one `terminal_open` per
//! agent; one ticker per project, a run node (`terminal_run`) printing `tick-N` five times a
//! second.
//!
//! Load, until the time is up ([`load`]): one-shot workers spawning `termsprawlctl` (the `call`
//! form and the direct form, half each), long-lived `termsprawlctl mcp` bridges with several
//! calls in flight, and one conversation thread per agent pair (`agent_send`, `agent_reply`,
//! `agent_task`). Operations: terminal I/O, canvas mutations, messaging and reads.
//!
//! Faults, from a seeded generator: the server is killed (three times in four SIGKILL, else
//! SIGTERM), left down for 0.2–3 s and started again on the same data directory; between kills,
//! `endpoint.json` is rewritten in place, torn (truncate, half, pause, rest).
//!
//! Checks (each violation is counted by kind and fails the run, exit 1):
//! - one follower per ticker waits for each next line (`terminal_wait` with `since` the last
//!   answer's cursor) through every kill and restart: each answer holds exactly the text between
//!   its `since` and its `cursor`, cursors never go back, and the ticks arrive once each, in
//!   order ([`load::follow`]);
//! - every call ends `ok` or with the client contract's connection-unavailable error (one-shot:
//!   exit 1 with that text; MCP: an `isError` result with it); anything else (crash, hang past
//!   60 s, other error, malformed output) is a failure, except the tool errors the spec makes
//!   unavoidable, which are classified explicitly ([`load::converse`]);
//! - the server's execution log against the client-side attempts and `ok` answers per
//!   `(operation, args)`: no duplicate, nothing lost ([`ledger::Ledger::reconcile`]);
//! - after each kill, `canvas.json` and `tasks/` still hold every node and task acknowledged
//!   before it; after each restart, no such task is still pending and `canvas_list` shows every
//!   such node;
//! - before each kill and at the end, every bridge has answered `ok` to a call sent after the
//!   last restart;
//! - resources, sampled every second from `/proc`: each server incarnation stays under
//!   [`SERVER_MAX_RSS`], [`SERVER_MAX_FDS`] and [`SERVER_MAX_THREADS`]; each bridge, after its
//!   last calls and [`BRIDGE_REST`] idle, holds at most [`BRIDGE_FD_SLACK`] more fds and
//!   [`BRIDGE_THREAD_SLACK`] more threads than at its highest in the ten seconds after warm-up;
//!   SIGTERM stops the server cleanly;
//! - nothing is left running: the private tmux server is killed, the bridges exit 0 at the end of
//!   their input, and no process whose command line, environment or working directory mentions
//!   the temporary directory remains.

pub mod faults;
pub mod ledger;
pub mod load;
pub mod procs;
pub mod report;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context as _, ensure};
use serde_json::{Value, json};

use self::faults::{Damage, Fault, FaultLog, Tmpfs};
use self::ledger::{Form, Ledger, Outcome, Path as CallPath};
use self::load::{Agent, BridgeState, Rng, Shared, World};
use self::procs::Sample;
use self::report::Figures;
use crate::base::binaries::{self, Binaries};
use crate::base::lock;
use crate::base::server::{self, Places, Serve, Stop};

/// The default duration, minutes.
pub const DEFAULT_MINUTES: u64 = 10;
/// One-shot worker threads.
pub const ONESHOT_WORKERS: usize = 3;
/// MCP bridges.
pub const BRIDGES: usize = 2;
/// Agents per project; two projects.
pub const AGENTS_PER_PROJECT: usize = 2;
/// A server incarnation's resident memory bound: a debug build idles near 10 MiB; the canvas
/// of a run (a few hundred nodes) and 16 requests in flight add little.
pub const SERVER_MAX_RSS: u64 = 256 * 1024 * 1024;
/// A server's open-file bound: listeners, the lock, the log, one socket per request in flight
/// (at most [`ONESHOT_WORKERS`] + 2 + [`BRIDGES`] × [`load::BRIDGE_DEPTH`] = 13 at once) and the
/// pipes of running tmux commands; 256 leaves room for slow closes.
pub const SERVER_MAX_FDS: u64 = 256;
/// A server's thread bound: two tokio workers plus its blocking pool for file and tmux work.
pub const SERVER_MAX_THREADS: u64 = 64;
/// How many more fds a bridge may hold at rest than after warm-up.
pub const BRIDGE_FD_SLACK: u64 = 2;
/// How many more threads a bridge may run at rest than after warm-up.
pub const BRIDGE_THREAD_SLACK: u64 = 1;
/// How long the bridges rest, idle, before their levels at the end are taken: longer than the
/// 10 s after which tokio ends an idle blocking-pool thread, so that the threads that come and go
/// with the load are gone and only what stays (a leak) is counted.
pub const BRIDGE_REST: Duration = Duration::from_secs(11);
/// How long every follower has to see a new tick after a full disk was freed (the liveness
/// check follows a pane again within its 2 s round) or after a tmux kill.
pub const FAULT_RECOVERY: Duration = Duration::from_secs(30);
/// How long every bridge has to answer `ok` after a restart.
pub const BRIDGE_RECOVERY: Duration = Duration::from_mins(1);

/// What `cargo xtask soak` was asked to do.
#[derive(Debug, Clone)]
pub struct Settings {
    /// How long the load runs.
    pub duration: Duration,
    /// The seed of every random choice.
    pub seed: u64,
    /// Build and run the release binaries.
    pub release: bool,
    /// Write `docs/reliability.md`.
    pub write: bool,
    /// The command as typed, for the document.
    pub command: String,
    /// Prebuilt binaries (tests); `None` builds them.
    pub binaries: Option<Binaries>,
}

/// Builds, runs the soak, prints the summary, writes the document; `Ok(false)` when a check
/// failed.
pub fn run(root: &Path, settings: &Settings) -> anyhow::Result<bool> {
    let binaries = match &settings.binaries {
        Some(binaries) => binaries.clone(),
        None => binaries::build(root, settings.release)?,
    };
    let temp = tempfile::Builder::new()
        .prefix("termsprawl-soak-")
        .tempdir()
        .context("cannot create a temporary directory")?;
    let root_dir = temp.path().canonicalize()?;
    let places = Places {
        data: root_dir.join("data"),
        projects: vec![root_dir.join("project-a"), root_dir.join("project-b")],
        exec_log: Some(root_dir.join("exec.log")),
        logs: root_dir.join("logs"),
        root: root_dir,
    };
    for dir in places.projects.iter().chain([&places.logs]) {
        std::fs::create_dir_all(dir)?;
    }
    eprintln!(
        "soak: {} s, seed {}, data in {}",
        settings.duration.as_secs(),
        settings.seed,
        places.root.display()
    );
    let tmpfs = match Tmpfs::mount(&places.data) {
        Ok(tmpfs) => {
            eprintln!(
                "soak: the data directory is a {} tmpfs (the disk fault)",
                faults::TMPFS_SIZE
            );
            Ok(tmpfs)
        }
        Err(reason) => {
            eprintln!("soak: the disk fault is skipped: {reason}");
            Err(reason)
        }
    };
    let outcome = soak(&binaries, &places, settings, tmpfs.as_ref().ok());
    // Whatever happened: the tmux server goes, then nothing may mention the directory.
    binaries::kill_tmux_server(&places.tmux_socket());
    let leftovers = settle_leftovers(&places.root);
    let disk_skipped = tmpfs.as_ref().err().cloned();
    drop(tmpfs);
    let (mut figures, mut ledger) = match outcome {
        Ok(done) => done,
        Err(error) => {
            eprintln!("soak: the run stopped: {error:#}");
            let logs = std::fs::read_dir(&places.logs).into_iter().flatten().flatten();
            for entry in logs {
                let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
                let tail: Vec<&str> = text.lines().rev().take(10).collect();
                eprintln!("--- {} (last lines)", entry.file_name().to_string_lossy());
                for line in tail.iter().rev() {
                    eprintln!("{line}");
                }
            }
            return Ok(false);
        }
    };
    for (pid, command) in &leftovers {
        ledger.fail("process left running", &format!("pid {pid}: {command}"));
    }
    figures.command.clone_from(&settings.command);
    figures.disk_skipped = disk_skipped;
    let summary = report::summary(&figures, &ledger);
    eprintln!("\n{summary}");
    for example in &ledger.examples {
        eprintln!("  {example}");
    }
    let passed = ledger.failures.is_empty() && figures.reconciled.passes();
    if settings.write {
        let path = root.join("docs").join("reliability.md");
        let document = std::fs::read_to_string(&path).unwrap_or_else(|_| "# Reliability\n".into());
        let updated = report::replace_section(&document, &report::section(&figures, &ledger));
        std::fs::write(&path, updated)
            .with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    eprintln!("soak: {}", if passed { "passed" } else { "FAILED" });
    if !passed {
        keep_logs(&places.logs, &root.join("target").join("soak-failed-logs"));
    }
    drop(temp);
    Ok(passed)
}

/// Waits up to 10 s for every process mentioning `dir` to end; kills and returns the rest.
fn settle_leftovers(dir: &Path) -> Vec<(u32, String)> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let found = procs::mentioning(dir);
        if found.is_empty() || Instant::now() > deadline {
            for (pid, _) in &found {
                if let Some(pid) = i32::try_from(*pid).ok().and_then(rustix::process::Pid::from_raw)
                {
                    let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
                }
            }
            return found;
        }
        thread::sleep(Duration::from_millis(100));
    }
}

/// A fault the schedule injects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Injected {
    /// The server killed (or stopped) and started again, sometimes on a damaged canvas.
    Restart,
    /// The data directory's disk filled and freed.
    DiskFull,
    /// The managed tmux server killed.
    TmuxKilled,
}

/// Resource samples of the run.
#[derive(Debug, Default)]
struct Resources {
    server_peak: Sample,
    bridge_peak: Sample,
    bridge_warm: Vec<Sample>,
    /// Incarnations already reported over a bound.
    flagged: Vec<u32>,
}

/// The server side of the run, owned by the fault loop.
struct Control<'a> {
    binaries: &'a Binaries,
    places: &'a Places,
    shared: &'a Shared,
    serve: Option<Serve>,
    incarnation: u32,
    server_pid: &'a AtomicU32,
    last_ready: Instant,
    figures: Figures,
    /// The data directory's tmpfs, when the disk fault runs.
    tmpfs: Option<&'a Tmpfs>,
}

#[expect(clippy::too_many_lines, reason = "the run in order: setup, threads, end checks, figures")]
fn soak(
    binaries: &Binaries,
    places: &Places,
    settings: &Settings,
    tmpfs: Option<&Tmpfs>,
) -> anyhow::Result<(Figures, Ledger)> {
    let serve = Serve::start(binaries, places, 0, &[])?;
    let mut ledger = Ledger::default();
    let agents = start_agents(binaries, places, &mut ledger, 0)?;
    let tickers = start_tickers(binaries, &agents, &mut ledger, 0)?;
    let server_pid = AtomicU32::new(serve.pid());
    let shared = Shared {
        ctl: binaries.ctl.clone(),
        agents: Mutex::new(agents),
        tickers: Mutex::new(tickers.clone()),
        generation: AtomicU64::new(0),
        ledger: Mutex::new(ledger),
        world: Mutex::new(World {
            projects: vec![load::ProjectWorld::default(); places.projects.len()],
            tasks: Vec::new(),
        }),
        stop: AtomicBool::new(false),
        release: AtomicBool::new(false),
        marker: AtomicU64::new(1),
        bridges: Mutex::new(vec![BridgeState::default(); BRIDGES]),
        logs: places.logs.clone(),
        faults: FaultLog { progress: Mutex::new(vec![0; tickers.len()]), ..FaultLog::default() },
    };
    let warmup = (settings.duration / 4).min(Duration::from_secs(30));
    let mut control = Control {
        binaries,
        places,
        shared: &shared,
        serve: Some(serve),
        incarnation: 0,
        server_pid: &server_pid,
        last_ready: Instant::now(),
        tmpfs,
        figures: Figures {
            seed: settings.seed,
            profile: if settings.release { "release" } else { "debug" },
            shape: format!(
                "{ONESHOT_WORKERS} one-shot workers, {BRIDGES} MCP bridges with {} calls in flight each, {} agent pairs in {} projects, each agent with one terminal",
                load::BRIDGE_DEPTH,
                places.projects.len(),
                places.projects.len()
            ),
            ..Figures::default()
        },
    };
    let resources = Arc::new(Mutex::new(Resources {
        bridge_warm: vec![Sample::default(); BRIDGES],
        ..Resources::default()
    }));
    let sampling = AtomicBool::new(true);
    let started = Instant::now();
    let mut end_levels = Vec::new();
    let outcome = thread::scope(|scope| -> anyhow::Result<()> {
        let shared = &shared;
        for worker in 0..ONESHOT_WORKERS {
            let seed = settings.seed.wrapping_add(100 + worker as u64);
            scope.spawn(move || load::worker(shared, seed));
        }
        for pair in 0..places.projects.len() {
            let seed = settings.seed.wrapping_add(200 + pair as u64);
            let agents = [pair * AGENTS_PER_PROJECT, pair * AGENTS_PER_PROJECT + 1];
            scope.spawn(move || load::converse(shared, seed, agents));
        }
        for index in 0..BRIDGES {
            let bridge =
                load::Bridge { index, agent: (index * AGENTS_PER_PROJECT) % shared.agent_count() };
            let seed = settings.seed.wrapping_add(300 + index as u64);
            scope.spawn(move || bridge.run(shared, seed));
        }
        let followers: Vec<_> = (0..tickers.len())
            .map(|index| {
                let seed = settings.seed.wrapping_add(400 + index as u64);
                scope.spawn(move || load::follow(shared, seed, index))
            })
            .collect();
        {
            let resources = Arc::clone(&resources);
            let server_pid = &server_pid;
            let sampling = &sampling;
            scope.spawn(move || sample(shared, server_pid, &resources, sampling, started, warmup));
        }
        let faulted = control.faults(settings, started, warmup);
        // The end: every bridge answers again, the load stops, the bridges finish their calls
        // and rest, their levels are taken, then they may exit.
        if faulted.is_ok() {
            control.bridges_answer_since_ready("the end");
        }
        shared.stop.store(true, Ordering::Relaxed);
        let drained = Instant::now() + load::CALL_TIMEOUT + Duration::from_secs(10);
        while !lock(&shared.bridges).iter().all(|bridge| bridge.drained) && Instant::now() < drained
        {
            thread::sleep(Duration::from_millis(50));
        }
        thread::sleep(BRIDGE_REST);
        end_levels = (0..BRIDGES)
            .map(|index| {
                let pid = lock(&shared.bridges)[index].pid;
                procs::sample(pid).unwrap_or_default()
            })
            .collect();
        shared.release.store(true, Ordering::Relaxed);
        sampling.store(false, Ordering::Relaxed);
        for follower in followers {
            let followed = follower.join().unwrap_or_default();
            control.figures.ticks += followed.earlier + followed.ticks - followed.lost_to_full_disk;
            control.figures.ticker_switches += followed.switches;
            control.figures.follow_answers += followed.answers;
            control.figures.tick_gaps += followed.gaps;
            control.figures.ticks_lost_to_full_disk += followed.lost_to_full_disk;
            if followed.earlier + followed.ticks == 0 {
                lock(&shared.ledger).fail("follower: no tick seen", "");
            }
        }
        faulted
    });
    control.figures.seconds = started.elapsed().as_secs();
    outcome?;
    // The end: every acknowledged node is listed and every acknowledged task is on disk (tasks
    // may still be pending here: no restart has failed them).
    let acknowledged = lock(&shared.world).clone();
    control.check_on_disk(&acknowledged, "the end");
    control.check_listed(&acknowledged);
    if let Some(serve) = control.serve.take() {
        server_pid.store(0, Ordering::Relaxed);
        if let Err(error) = serve.stop(Stop::Term) {
            lock(&shared.ledger).fail("server did not stop cleanly", &format!("{error:#}"));
        }
    }
    let mut figures = control.figures;
    let resources = lock(&resources);
    figures.server_peak = resources.server_peak;
    figures.bridge_peak = resources.bridge_peak;
    let mut ledger = std::mem::take(&mut *lock(&shared.ledger));
    for (index, end) in end_levels.iter().enumerate() {
        let warm = resources.bridge_warm[index];
        figures.bridge_levels.push((warm, *end));
        if end.fds > warm.fds + BRIDGE_FD_SLACK || end.threads > warm.threads + BRIDGE_THREAD_SLACK
        {
            ledger.fail(
                "bridge resources grew",
                &format!(
                    "bridge {index}: fds {} → {}, threads {} → {}",
                    warm.fds, end.fds, warm.threads, end.threads
                ),
            );
        }
    }
    let world = lock(&shared.world);
    figures.nodes = world.projects.iter().map(|project| project.nodes().count()).sum();
    figures.tasks = world.tasks.len();
    let exec_log = places.exec_log.as_ref().and_then(|log| std::fs::read_to_string(log).ok());
    let exec_log = exec_log.unwrap_or_default();
    figures.reconciled = ledger.reconcile(&exec_log);
    for problem in &figures.reconciled.problems {
        ledger.fail("execution log disagrees", problem);
    }
    figures.machine = machine();
    figures.date = today();
    Ok((figures, ledger))
}

/// Launches the agents, links them in pairs and opens one terminal each.
fn start_agents(
    binaries: &Binaries,
    places: &Places,
    ledger: &mut Ledger,
    generation: u64,
) -> anyhow::Result<Vec<Agent>> {
    let mut agents = Vec::new();
    for (project_index, project) in places.projects.iter().enumerate() {
        for slot in 0..AGENTS_PER_PROJECT {
            let name = format!("soak-{project_index}-{slot}-{generation}");
            let value = server::launch(binaries, places, project, &name)?;
            agents.push(Agent {
                node_id: value["nodeId"].as_str().context("no nodeId")?.to_owned(),
                session_file: PathBuf::from(
                    value["sessionFile"].as_str().context("no sessionFile")?,
                ),
                project: project_index,
                terminal: String::new(),
                generation,
            });
        }
        let pair = &agents[agents.len() - AGENTS_PER_PROJECT..];
        server::headless(
            binaries,
            places,
            &["link", "--both", &pair[0].node_id, &pair[1].node_id],
        )?;
    }
    for (index, agent) in agents.iter_mut().enumerate() {
        let args = json!({"title": format!("soak-terminal-{index}-{generation}")});
        ledger.attempt(CallPath::OneShot, "terminal_open", &args);
        let outcome = load::oneshot(&binaries.ctl, agent, Form::Call, "terminal_open", &args);
        ledger.outcome(CallPath::OneShot, "terminal_open", &args, &outcome, None);
        let Outcome::Ok(value) = outcome else {
            anyhow::bail!("terminal_open failed at the start: {outcome:?}");
        };
        value["nodeId"]
            .as_str()
            .context("terminal_open gave no nodeId")?
            .clone_into(&mut agent.terminal);
    }
    Ok(agents)
}

/// One ticker run node per project ([`load::TICKER`]), started by the project's first agent:
/// `(agent index, node id)`.
fn start_tickers(
    binaries: &Binaries,
    agents: &[Agent],
    ledger: &mut Ledger,
    generation: u64,
) -> anyhow::Result<Vec<(usize, String)>> {
    let mut tickers = Vec::new();
    for (index, agent) in agents.iter().enumerate().step_by(AGENTS_PER_PROJECT) {
        let args = json!({"command": load::TICKER, "title": format!("soak-ticker-{}-{generation}", agent.project), "timeoutMs": 0});
        ledger.attempt(CallPath::OneShot, "terminal_run", &args);
        let outcome = load::oneshot(&binaries.ctl, agent, Form::Call, "terminal_run", &args);
        ledger.outcome(CallPath::OneShot, "terminal_run", &args, &outcome, None);
        let Outcome::Ok(value) = outcome else {
            anyhow::bail!("terminal_run of the ticker failed at the start: {outcome:?}");
        };
        let node = value["nodeId"].as_str().context("terminal_run gave no nodeId")?;
        tickers.push((index, node.to_owned()));
    }
    Ok(tickers)
}

/// Samples the server and the bridges every second until `sampling` is cleared.
fn sample(
    shared: &Shared,
    server_pid: &AtomicU32,
    resources: &Mutex<Resources>,
    sampling: &AtomicBool,
    started: Instant,
    warmup: Duration,
) {
    let mut incarnation_pid = 0;
    let mut incarnation = 0_u32;
    while sampling.load(Ordering::Relaxed) {
        let pid = server_pid.load(Ordering::Relaxed);
        if pid != 0 && pid != incarnation_pid {
            incarnation_pid = pid;
            incarnation += 1;
        }
        let server = if pid == 0 { None } else { procs::sample(pid) };
        let bridges: Vec<Option<Sample>> =
            lock(&shared.bridges).iter().map(|bridge| procs::sample(bridge.pid)).collect();
        let mut resources = lock(resources);
        if let Some(server) = server {
            resources.server_peak = resources.server_peak.max(server);
            let over = server.rss > SERVER_MAX_RSS
                || server.fds > SERVER_MAX_FDS
                || server.threads > SERVER_MAX_THREADS;
            if over && !resources.flagged.contains(&incarnation) {
                resources.flagged.push(incarnation);
                lock(&shared.ledger).fail(
                    "server over its resource bounds",
                    &format!(
                        "incarnation {incarnation}: RSS {} B, {} fds, {} threads",
                        server.rss, server.fds, server.threads
                    ),
                );
            }
        }
        // The level after warm-up: the highest sample of the ten seconds after it.
        let elapsed = started.elapsed();
        let in_warm_window = elapsed >= warmup && elapsed < warmup + Duration::from_secs(10);
        for (index, bridge) in bridges.into_iter().enumerate() {
            let Some(bridge) = bridge else { continue };
            resources.bridge_peak = resources.bridge_peak.max(bridge);
            if in_warm_window {
                resources.bridge_warm[index] = resources.bridge_warm[index].max(bridge);
            }
        }
        drop(resources);
        thread::sleep(Duration::from_secs(1));
    }
}

impl Control<'_> {
    /// Injects faults until the duration is over; prints progress every 30 s.
    fn faults(
        &mut self,
        settings: &Settings,
        started: Instant,
        warmup: Duration,
    ) -> anyhow::Result<()> {
        let mut rng = Rng::new(settings.seed);
        let deadline = started + settings.duration;
        let interval =
            (settings.duration / 15).clamp(Duration::from_secs(2), Duration::from_secs(30));
        let mut next_fault = started + warmup + rng.between(interval / 2, interval * 3 / 2);
        let mut round = Vec::new();
        let mut next_progress = started + Duration::from_secs(30);
        loop {
            let now = Instant::now();
            if now >= deadline {
                return Ok(());
            }
            thread::sleep(
                rng.between(Duration::from_millis(500), Duration::from_secs(3)).min(deadline - now),
            );
            let now = Instant::now();
            if now >= next_progress {
                self.progress(started, settings.duration);
                next_progress = now + Duration::from_secs(30);
            }
            if now >= deadline {
                return Ok(());
            }
            if now >= next_fault {
                if round.is_empty() {
                    round = self.round();
                }
                match round.pop() {
                    Some(Injected::DiskFull) => self.fill_disk(&mut rng),
                    Some(Injected::TmuxKilled) => self.kill_tmux(&mut rng)?,
                    _ => self.restart(&mut rng)?,
                }
                next_fault = Instant::now() + rng.between(interval / 2, interval * 3 / 2);
            } else {
                let pause = rng.between(Duration::from_millis(1), Duration::from_millis(20));
                match server::rewrite_torn(&self.places.endpoint(), pause) {
                    Ok(()) => self.figures.rewrites += 1,
                    Err(error) => {
                        lock(&self.shared.ledger)
                            .fail("cannot rewrite endpoint.json", &format!("{error:#}"));
                    }
                }
            }
        }
    }

    /// The next faults, in this order: a restart, the tmux kill, the full disk, another
    /// restart. So every kind runs within the first three faults (the one-minute soak runs
    /// about five), and each round's first restart follows a restart, not a tmux kill, so that
    /// the canvas can be damaged there (see [`Control::restart`]).
    fn round(&self) -> Vec<Injected> {
        let mut round = vec![Injected::Restart];
        if self.tmpfs.is_some() {
            round.push(Injected::DiskFull);
        }
        round.extend([Injected::TmuxKilled, Injected::Restart]);
        round
    }

    /// Fills the data directory's tmpfs, keeps it full for 1–3 s and frees it; then checks that
    /// `canvas.json` and `tasks/` hold everything acknowledged, and that everything works again
    /// without a restart: every follower sees new ticks (its pane followed again) and every
    /// bridge answers `ok`.
    fn fill_disk(&mut self, rng: &mut Rng) {
        let Some(tmpfs) = self.tmpfs else { return };
        let faults = &self.shared.faults;
        faults.begin(Fault::DiskFull);
        match tmpfs.fill() {
            Ok(bytes) => self.figures.filler_bytes = self.figures.filler_bytes.max(bytes),
            Err(error) => {
                lock(&self.shared.ledger).fail("cannot fill the disk", &format!("{error:#}"));
            }
        }
        thread::sleep(rng.between(Duration::from_secs(1), Duration::from_secs(3)));
        let freed = tmpfs.free();
        faults.end();
        let freed_at = Instant::now();
        if let Err(error) = freed {
            lock(&self.shared.ledger).fail("cannot free the disk", &error.to_string());
        }
        self.figures.disk_fills += 1;
        let acknowledged = lock(&self.shared.world).clone();
        self.check_on_disk(&acknowledged, "a full disk");
        if self.followers_resume("the disk was freed") {
            self.figures.followers_resumed += 1;
        }
        self.last_ready = freed_at;
        self.bridges_answer_since_ready("the fault after a full disk");
    }

    /// Every follower sees a new tick within [`FAULT_RECOVERY`]; a failure otherwise.
    fn followers_resume(&self, after: &str) -> bool {
        let progress = &self.shared.faults.progress;
        let before = lock(progress).clone();
        let deadline = Instant::now() + FAULT_RECOVERY;
        loop {
            let now = lock(progress).clone();
            if now.iter().zip(&before).all(|(now, before)| now > before) {
                return true;
            }
            if Instant::now() > deadline {
                lock(&self.shared.ledger).fail(
                    &format!("a follower saw no tick after {after}"),
                    &format!("ticks {before:?} → {now:?} in {} s", FAULT_RECOVERY.as_secs()),
                );
                return false;
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// Kills the managed tmux server, which ends the agents, their terminals and the tickers;
    /// after 0.2–1.5 s launches new agents (linked in pairs, a terminal each) and new tickers,
    /// which the load then uses (the bridges start again for the new agents, the followers
    /// check the old tickers' output and follow the new ones). Then: `canvas.json` and `tasks/`
    /// hold everything acknowledged, every follower sees new ticks, every bridge answers `ok`.
    fn kill_tmux(&mut self, rng: &mut Rng) -> anyhow::Result<()> {
        self.bridges_answer_since_ready("a tmux kill");
        let faults = &self.shared.faults;
        faults.begin(Fault::TmuxKilled);
        binaries::kill_tmux_server(&self.places.tmux_socket());
        self.figures.tmux_kills += 1;
        thread::sleep(rng.between(Duration::from_millis(200), Duration::from_millis(1500)));
        let generation = self.shared.generation() + 1;
        let (agents, tickers) = {
            let mut ledger = lock(&self.shared.ledger);
            let agents = start_agents(self.binaries, self.places, &mut ledger, generation)
                .context("new agents after a tmux kill")?;
            let tickers = start_tickers(self.binaries, &agents, &mut ledger, generation)
                .context("new tickers after a tmux kill")?;
            (agents, tickers)
        };
        *lock(&self.shared.agents) = agents;
        *lock(&self.shared.tickers) = tickers;
        self.shared.generation.store(generation, Ordering::Relaxed);
        let ready = Instant::now();
        faults.end();
        let acknowledged = lock(&self.shared.world).clone();
        self.check_on_disk(&acknowledged, "a tmux kill");
        self.followers_resume("a tmux kill");
        self.last_ready = ready;
        self.bridges_answer_since_ready("the fault after a tmux kill");
        Ok(())
    }

    fn progress(&self, started: Instant, duration: Duration) {
        let total = lock(&self.shared.ledger).total(None);
        eprintln!(
            "soak: {:>4} s of {} s: {} calls, {} ok, {} unavailable, {} failures; {} restarts, {} endpoint rewrites",
            started.elapsed().as_secs(),
            duration.as_secs(),
            total.calls,
            total.ok,
            total.unavailable,
            total.failures,
            self.figures.kills + self.figures.terms,
            self.figures.rewrites,
        );
    }

    /// Every bridge has answered `ok` to a call sent after the last restart (waits up to
    /// [`BRIDGE_RECOVERY`]); each one that has not is a failure.
    fn bridges_answer_since_ready(&self, when: &str) {
        let deadline = Instant::now() + BRIDGE_RECOVERY;
        loop {
            let silent: Vec<usize> = lock(&self.shared.bridges)
                .iter()
                .enumerate()
                .filter(|(_, bridge)| bridge.last_ok_sent.is_none_or(|sent| sent < self.last_ready))
                .map(|(index, _)| index)
                .collect();
            if silent.is_empty() {
                return;
            }
            if Instant::now() > deadline {
                for index in silent {
                    lock(&self.shared.ledger).fail(
                        "bridge gave no ok answer after a restart",
                        &format!(
                            "bridge {index}, incarnation {}, checked before {when}",
                            self.incarnation
                        ),
                    );
                }
                return;
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// Kills the server, checks what it left on disk, waits, starts it again and checks the
    /// restored state.
    fn restart(&mut self, rng: &mut Rng) -> anyhow::Result<()> {
        self.bridges_answer_since_ready("a kill");
        let how = if rng.below(4) == 0 { Stop::Term } else { Stop::Kill };
        let stopped_at = Instant::now();
        if let Some(serve) = self.serve.take() {
            self.server_pid.store(0, Ordering::Relaxed);
            if let Err(error) = serve.stop(how) {
                lock(&self.shared.ledger)
                    .fail("server did not stop cleanly", &format!("{error:#}"));
            }
        }
        match how {
            Stop::Kill => self.figures.kills += 1,
            Stop::Term => self.figures.terms += 1,
        }
        // Every answer recorded by now came from the dead server: all of it must be on disk.
        let acknowledged = lock(&self.shared.world).clone();
        self.check_on_disk(&acknowledged, &format!("{how:?}"));
        thread::sleep(rng.between(Duration::from_millis(200), Duration::from_secs(3)));
        self.incarnation += 1;
        // The first restart, and then one in two, damages the canvas first: the recovered
        // canvas is the last good copy, saved with every change, so it must hold everything
        // acknowledged, as any other restart does (docs/reliability.md).
        let damage = (self.figures.canvas_damaged == 0 || rng.below(2) == 0)
            .then(|| if rng.below(2) == 0 { Damage::Truncated } else { Damage::Garbage });
        let required = acknowledged;
        let serve = match damage {
            None => Serve::start(self.binaries, self.places, self.incarnation, &[]),
            Some(damage) => self.damaged_start(damage),
        }
        .with_context(|| format!("restart {} failed", self.incarnation))?;
        self.server_pid.store(serve.pid(), Ordering::Relaxed);
        self.serve = Some(serve);
        self.last_ready = Instant::now();
        let down = u64::try_from(stopped_at.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.figures.longest_down_ms = self.figures.longest_down_ms.max(down);
        self.check_after_restart(&required);
        self.figures.restart_checks += 1;
        Ok(())
    }

    /// Damages `canvas.json` (the server is down), checks that `serve` refuses to start on it
    /// (a failure exit, the file named, the file untouched), then starts `serve --recover` and
    /// checks that it moved the file aside as `canvas.json.damaged-<time>` and started from the
    /// last good copy.
    fn damaged_start(&mut self, how: Damage) -> anyhow::Result<Serve> {
        let canvas = self.places.agent_tools().join("canvas.json");
        let damaged = faults::damage(&canvas, how)?;
        self.figures.canvas_damaged += 1;
        let (status, stderr) = server::refused_start(self.binaries, self.places)?;
        let names = format!("{} is not a valid canvas file", canvas.display());
        let mut ledger = lock(&self.shared.ledger);
        if status.success() || !stderr.contains(&names) {
            ledger.fail(
                "a damaged canvas was not refused naming the file",
                &format!("{how:?}: {status}: {stderr}"),
            );
        } else if std::fs::read(&canvas).ok().as_ref() != Some(&damaged) {
            ledger.fail("the refused start changed the damaged canvas", &format!("{how:?}"));
        } else {
            self.figures.canvas_refused += 1;
        }
        drop(ledger);
        let serve = Serve::start(self.binaries, self.places, self.incarnation, &["--recover"])?;
        let said = std::fs::read_to_string(
            self.places.logs.join(format!("serve-{}.log", self.incarnation)),
        )
        .unwrap_or_default();
        let aside = std::fs::read_dir(self.places.agent_tools())?
            .flatten()
            .filter(|entry| entry.file_name().to_string_lossy().starts_with("canvas.json.damaged-"))
            .any(|entry| std::fs::read(entry.path()).ok().as_ref() == Some(&damaged));
        if said.contains("; starting from the last good copy ") && aside {
            self.figures.canvas_recovered += 1;
        } else {
            lock(&self.shared.ledger).fail(
                "serve --recover did not move the damaged canvas aside and start from the last good copy",
                &format!("moved aside: {aside}; said: {said}"),
            );
        }
        Ok(serve)
    }

    /// `canvas.json` holds every acknowledged node of each project, and `tasks/` every
    /// acknowledged task.
    fn check_on_disk(&self, acknowledged: &World, how: &str) {
        let mut ledger = lock(&self.shared.ledger);
        let path = self.places.agent_tools().join("canvas.json");
        let canvas: Value = match std::fs::read(&path).map(|bytes| serde_json::from_slice(&bytes)) {
            Ok(Ok(canvas)) => canvas,
            other => {
                ledger.fail("canvas.json unreadable after a stop", &format!("{how}: {other:?}"));
                return;
            }
        };
        for (index, project) in acknowledged.projects.iter().enumerate() {
            let folder = self.places.projects[index].to_string_lossy().into_owned();
            let on_disk: Vec<&str> = canvas["projects"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|entry| entry["folder"] == folder.as_str())
                .flat_map(|entry| entry["nodes"].as_array().into_iter().flatten())
                .filter_map(|node| node["id"].as_str())
                .collect();
            for node in project.nodes() {
                if !on_disk.contains(&node.as_str()) {
                    ledger.fail(
                        "acknowledged node missing from canvas.json",
                        &format!("{node} after {how}"),
                    );
                }
            }
        }
        for task in &acknowledged.tasks {
            if !self.task_file(task).exists() {
                ledger
                    .fail("acknowledged task missing from tasks/", &format!("{task} after {how}"));
            }
        }
    }

    fn task_file(&self, task: &str) -> PathBuf {
        self.places.agent_tools().join("tasks").join(format!("{task}.json"))
    }

    /// After a restart: no task acknowledged before it is still pending, and `canvas_list`
    /// shows every node acknowledged before it.
    fn check_after_restart(&self, acknowledged: &World) {
        for task in &acknowledged.tasks {
            let state = std::fs::read(self.task_file(task))
                .ok()
                .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
                .map(|value| value["state"].clone());
            if state.as_ref().is_none_or(|state| state == "submitted") {
                lock(&self.shared.ledger).fail(
                    "acknowledged task pending or unreadable after a restart",
                    &format!("{task}: {state:?}"),
                );
            }
        }
        self.check_listed(acknowledged);
    }

    /// `canvas_list` (through an agent of each project) shows every acknowledged node.
    fn check_listed(&self, acknowledged: &World) {
        let mut rng = Rng::new(u64::from(self.incarnation));
        for (index, project) in acknowledged.projects.iter().enumerate() {
            let Some(agent) =
                lock(&self.shared.agents).iter().find(|agent| agent.project == index).cloned()
            else {
                continue;
            };
            let args = json!({});
            let listed = (0..20).find_map(|_| {
                lock(&self.shared.ledger).attempt(CallPath::OneShot, "canvas_list", &args);
                let outcome =
                    load::oneshot(&self.shared.ctl, &agent, Form::Call, "canvas_list", &args);
                lock(&self.shared.ledger).outcome(
                    CallPath::OneShot,
                    "canvas_list",
                    &args,
                    &outcome,
                    None,
                );
                match outcome {
                    Outcome::Ok(list) => Some(Some(list)),
                    Outcome::Unavailable(_) => {
                        thread::sleep(
                            rng.between(Duration::from_millis(50), Duration::from_millis(200)),
                        );
                        None
                    }
                    _ => Some(None),
                }
            });
            let Some(Some(list)) = listed else {
                lock(&self.shared.ledger)
                    .fail("canvas_list unavailable after a restart", &format!("project {index}"));
                continue;
            };
            let ids: Vec<&str> = list
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|node| node["nodeId"].as_str())
                .collect();
            for node in project.nodes() {
                if !ids.contains(&node.as_str()) {
                    lock(&self.shared.ledger).fail(
                        "acknowledged node missing from canvas_list after a restart",
                        &format!("{node} (incarnation {})", self.incarnation),
                    );
                }
            }
        }
    }
}

/// CPU, cores, memory and OS, in one line.
fn machine() -> String {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let machine = crate::base::machine::Machine::describe(&rustc);
    #[expect(clippy::cast_precision_loss, reason = "a display value")]
    let memory = machine.memory_bytes as f64 / 1_073_741_824.0;
    format!(
        "{}, {} logical CPUs, {memory:.1} GiB, {}, {}",
        machine.cpu, machine.cores, machine.os, machine.rustc
    )
}

/// Today's date (UTC), `YYYY-MM-DD`, from `date`.
fn today() -> String {
    Command::new("date")
        .args(["-u", "+%Y-%m-%d"])
        .output()
        .ok()
        .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_owned())
        .filter(|date| !date.is_empty())
        .unwrap_or_else(|| "unknown date".to_owned())
}

/// Checks the settings before anything is built.
pub fn check_settings(settings: &Settings) -> anyhow::Result<()> {
    ensure!(settings.duration >= Duration::from_secs(5), "the soak needs at least 5 seconds");
    Ok(())
}

#[cfg(test)]
mod tests;

/// Copies the failed run's logs (the server's stderr of each incarnation, the bridges') to
/// `kept`, replacing an earlier failure's, and says where.
fn keep_logs(logs: &Path, kept: &Path) {
    let _ = std::fs::remove_dir_all(kept);
    if std::fs::create_dir_all(kept).is_err() {
        return;
    }
    for entry in std::fs::read_dir(logs).into_iter().flatten().flatten() {
        let _ = std::fs::copy(entry.path(), kept.join(entry.file_name()));
    }
    eprintln!("soak: the logs are kept in {}", kept.display());
}
