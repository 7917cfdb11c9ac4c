//! The load of the soak: what is called ([`plan`]), one-shot `termsprawlctl` calls
//! ([`oneshot`]), long-lived MCP bridges ([`Bridge`]) and agent conversations ([`converse`]).
//!
//! Every argument object that can carry one has a unique marker (sticky text, terminal text,
//! `messageId`, coordinates, sizes, `maxChars` digits), so that each call is one key of the
//! [`Ledger`](super::ledger::Ledger). The reads (`canvas_list`, `session_info`, `agent_status`,
//! `agent_task`) and `canvas_select` take no free-form member; their keys are shared and counted
//! together, which the execution check allows.

use std::collections::HashMap;
use std::fs;
use std::io::{BufRead, BufReader, Write as _};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::base::{lock, wait_child};

use super::faults::{self, Fault, FaultLog, delivery_failed_by};
use super::ledger::{Form, Ledger, Outcome, Path as CallPath, classify_mcp, classify_oneshot};

/// How long a call may take before it counts as a hang.
pub const CALL_TIMEOUT: Duration = Duration::from_mins(1);
/// Calls a bridge keeps in flight.
pub const BRIDGE_DEPTH: usize = 4;
/// Stickies per project at most; after that `sticky_open` turns into `canvas_move`, so that the
/// canvas file (saved on every mutation) stays small enough for the queue expiry.
pub const MAX_STICKIES: usize = 300;
/// The reason a restart gives the tasks it fails (`termsprawl_headless::tasks::RESTART_REASON`).
pub const RESTART_REASON: &str = termsprawl_headless::tasks::RESTART_REASON;

/// A small seeded generator (SplitMix64): the run's choices follow `--seed`.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..bound` (`bound` > 0).
    pub fn below(&mut self, bound: u64) -> u64 {
        self.next_u64() % bound.max(1)
    }

    /// A duration in `low..high`.
    pub fn between(&mut self, low: Duration, high: Duration) -> Duration {
        let span = u64::try_from((high.saturating_sub(low)).as_millis()).unwrap_or(u64::MAX);
        low + Duration::from_millis(self.below(span.max(1)))
    }

    /// An index into a slice of `len` elements (`len` > 0).
    pub fn index(&mut self, len: usize) -> usize {
        usize::try_from(self.below(len as u64)).unwrap_or(0)
    }
}

/// An agent node of the run.
#[derive(Debug, Clone)]
pub struct Agent {
    /// Its node id.
    pub node_id: String,
    /// Its session file.
    pub session_file: PathBuf,
    /// The index of its project.
    pub project: usize,
    /// The terminal it opened at the start.
    pub terminal: String,
    /// The generation it was launched in (a tmux kill ends it with its terminal).
    pub generation: u64,
}

/// What the clients know exists: created nodes per project and acknowledged tasks.
#[derive(Debug, Default, Clone)]
pub struct World {
    /// Per project.
    pub projects: Vec<ProjectWorld>,
    /// Task ids whose `agent_send` was answered.
    pub tasks: Vec<String>,
}

/// The acknowledged nodes of one project.
#[derive(Debug, Default, Clone)]
pub struct ProjectWorld {
    /// Stickies whose `sticky_open` was answered `ok`.
    pub stickies: Vec<String>,
    /// Stickies never handed to a `canvas_group` yet (grouping needs top-level nodes).
    pub ungrouped: Vec<String>,
    /// Groups whose `canvas_group` was answered `ok`.
    pub groups: Vec<String>,
}

impl ProjectWorld {
    /// Every acknowledged node.
    pub fn nodes(&self) -> impl Iterator<Item = &String> {
        self.stickies.iter().chain(&self.groups)
    }
}

/// A bridge as the fault and resource checks see it.
#[derive(Debug, Clone, Copy, Default)]
pub struct BridgeState {
    /// The bridge process.
    pub pid: u32,
    /// When the latest call that was answered `ok` was sent.
    pub last_ok_sent: Option<Instant>,
    /// Whether it has no call in flight any more after the load stopped.
    pub drained: bool,
}

/// What every thread of the run shares.
#[derive(Debug)]
pub struct Shared {
    /// `termsprawlctl`.
    pub ctl: PathBuf,
    /// The agent nodes of the current generation (new ones after each tmux kill).
    pub agents: Mutex<Vec<Agent>>,
    /// Per follower: the index of the agent that runs its ticker, and the ticker's node (a new
    /// one after each tmux kill).
    pub tickers: Mutex<Vec<(usize, String)>>,
    /// The generation of `agents` and `tickers`.
    pub generation: AtomicU64,
    /// The accounting.
    pub ledger: Mutex<Ledger>,
    /// The acknowledged nodes and tasks.
    pub world: Mutex<World>,
    /// Set when the load must stop.
    pub stop: AtomicBool,
    /// Set when the bridges, drained and rested, may close.
    pub release: AtomicBool,
    /// The next unique marker.
    pub marker: AtomicU64,
    /// The bridges.
    pub bridges: Mutex<Vec<BridgeState>>,
    /// Where bridges write their stderr.
    pub logs: PathBuf,
    /// The faults so far, for the classification of tool errors.
    pub faults: FaultLog,
}

/// What to remember when a call is answered `ok`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Nothing.
    None,
    /// A sticky of this project was created.
    Sticky(usize),
    /// A group of this project was created.
    Group(usize),
}

/// One call to make.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The operation.
    pub operation: &'static str,
    /// Its arguments.
    pub args: Value,
    /// What its `ok` answer creates.
    pub effect: Effect,
    /// The oldest generation of the agents it involves (the caller, and the owner of the
    /// terminal it names).
    pub generation: u64,
}

impl Plan {
    fn new(operation: &'static str, args: Value) -> Plan {
        Plan { operation, args, effect: Effect::None, generation: 0 }
    }
}

impl Shared {
    /// The agent at `index` of the current generation.
    pub fn agent(&self, index: usize) -> Agent {
        lock(&self.agents)[index].clone()
    }

    /// How many agents there are (the same in every generation).
    pub fn agent_count(&self) -> usize {
        lock(&self.agents).len()
    }

    /// The current generation.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Relaxed)
    }

    /// A fresh marker.
    pub fn marker(&self) -> u64 {
        self.marker.fetch_add(1, Ordering::Relaxed)
    }

    /// Whether the load must stop.
    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// The explanation of a tool error of a call sent at `since` that involves agents of
    /// `generation` (the oldest): a fault it overlapped ([`FaultLog::explains`]), or the tmux kill
    /// that ended that generation. A call sent just after a kill's span ended can still name the
    /// agents and terminals it ended: the span ends once the new generation is in place, and a
    /// load thread may have picked its agents just before.
    pub fn explains(&self, since: Instant, error: &str, generation: u64) -> Option<&'static str> {
        self.faults.explains(since, error).or_else(|| {
            (generation < self.generation())
                .then(|| faults::explained_by(Fault::TmuxKilled, error))?
        })
    }

    /// Records the outcome of a planned call sent at `sent` (a tool error is a failure unless a
    /// fault explains it, [`Shared::explains`]) and what it created.
    pub fn settle(&self, path: CallPath, plan: &Plan, outcome: &Outcome, sent: Instant) {
        let expected = match outcome {
            Outcome::ToolError(error) => self.explains(sent, error, plan.generation),
            _ => None,
        };
        lock(&self.ledger).outcome(path, plan.operation, &plan.args, outcome, expected);
        let Outcome::Ok(value) = outcome else { return };
        let node = value["nodeId"].as_str().map(str::to_owned);
        let mut world = lock(&self.world);
        match (plan.effect, node) {
            (Effect::Sticky(project), Some(node)) => {
                let project = &mut world.projects[project];
                project.stickies.push(node.clone());
                project.ungrouped.push(node);
            }
            (Effect::Group(project), Some(node)) => world.projects[project].groups.push(node),
            (Effect::None, _) => {}
            (_, None) => {
                drop(world);
                lock(&self.ledger).fail("ok answer without nodeId", &value.to_string());
            }
        }
    }
}

/// The next call of `agent`: terminal I/O on the terminals of its project, canvas mutations on
/// the stickies of its project, or reads.
pub fn plan(rng: &mut Rng, shared: &Shared, agent: &Agent) -> Plan {
    let n = shared.marker();
    let terminals: Vec<(String, u64)> = lock(&shared.agents)
        .iter()
        .filter(|other| other.project == agent.project)
        .map(|other| (other.terminal.clone(), other.generation))
        .collect();
    let (terminal, owner) = terminals[rng.index(terminals.len())].clone();
    let mut world = lock(&shared.world);
    let project = &mut world.projects[agent.project];
    let sticky = (!project.stickies.is_empty())
        .then(|| project.stickies[rng.index(project.stickies.len())].clone());
    let roll = rng.below(100);
    let plan = match (roll, sticky) {
        (0..12, _) => Plan::new(
            "terminal_submit",
            json!({"nodeId": terminal, "command": format!("echo soak-{n}")}),
        ),
        (12..20, _) => Plan::new(
            "terminal_input",
            json!({"nodeId": terminal, "text": format!(": soak-{n}; ")}),
        ),
        (20..30, _) => Plan::new(
            "terminal_read",
            json!({"nodeId": terminal, "maxChars": number(&format!("2000.{n:09}"))}),
        ),
        (30..46, _) | (46..78, None) if project.stickies.len() < MAX_STICKIES => Plan {
            operation: "sticky_open",
            args: json!({"text": format!("soak-{n}")}),
            effect: Effect::Sticky(agent.project),
            generation: 0,
        },
        (30..64, Some(node)) => {
            #[expect(clippy::cast_precision_loss, reason = "markers stay far below 2^52")]
            let x = n as f64;
            Plan::new("canvas_move", json!({"nodeId": node, "x": x, "y": -x / 2.0}))
        }
        (64..74, Some(node)) => Plan::new(
            "canvas_resize",
            json!({"nodeId": node, "width": 240 + n % 7000, "height": 140 + n / 7000}),
        ),
        (74..76, Some(node)) => Plan::new("canvas_select", json!({"nodeIds": [node]})),
        (76..78, Some(_)) if project.ungrouped.len() >= 2 => {
            let first = project.ungrouped.swap_remove(rng.index(project.ungrouped.len()));
            let second = project.ungrouped.swap_remove(rng.index(project.ungrouped.len()));
            Plan {
                operation: "canvas_group",
                args: json!({"nodeIds": [first, second], "title": format!("soak-group-{n}")}),
                effect: Effect::Group(agent.project),
                generation: 0,
            }
        }
        (0..88, _) => Plan::new("canvas_list", json!({})),
        (88..94, _) => Plan::new("session_info", json!({})),
        _ => Plan::new("agent_status", json!({})),
    };
    drop(world);
    let generation = if plan.args.get("nodeId") == Some(&Value::from(terminal.as_str())) {
        agent.generation.min(owner)
    } else {
        agent.generation
    };
    Plan { generation, ..plan }
}

/// A JSON number written exactly as `text` (`arbitrary_precision` keeps the digits).
fn number(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// One `termsprawlctl` process for `operation` with `args` as `agent`, in `form`; a call that
/// takes longer than [`CALL_TIMEOUT`] is killed and counts as a hang.
pub fn oneshot(
    ctl: &std::path::Path,
    agent: &Agent,
    form: Form,
    operation: &str,
    args: &Value,
) -> Outcome {
    let mut command = Command::new(ctl);
    command.arg("--session").arg(&agent.session_file);
    if form == Form::Call {
        command.arg("call");
    }
    command.arg(operation).arg(args.to_string());
    let spawned = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env_remove("TERMSPRAWL_SESSION_FILE")
        .spawn();
    let child = match spawned {
        Ok(child) => child,
        Err(error) => {
            return Outcome::Broken {
                kind: "cannot spawn termsprawlctl".to_owned(),
                detail: error.to_string(),
            };
        }
    };
    let pid = child.id();
    let (done, finished) = mpsc::channel();
    thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    match finished.recv_timeout(CALL_TIMEOUT) {
        Ok(Ok(output)) => {
            use std::os::unix::process::ExitStatusExt as _;
            classify_oneshot(
                form,
                output.status.code(),
                output.status.signal(),
                &output.stdout,
                &output.stderr,
            )
        }
        Ok(Err(error)) => Outcome::Broken {
            kind: "cannot wait for termsprawlctl".to_owned(),
            detail: error.to_string(),
        },
        Err(_) => {
            if let Some(pid) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
            Outcome::Broken {
                kind: "no answer within 60 s (one-shot)".to_owned(),
                detail: format!("{operation} {args}"),
            }
        }
    }
}

/// A planned call, one-shot, recorded.
fn oneshot_planned(shared: &Shared, rng: &mut Rng, agent: &Agent, plan: &Plan) -> Outcome {
    let form = if rng.below(2) == 0 { Form::Call } else { Form::Direct };
    lock(&shared.ledger).attempt(CallPath::OneShot, plan.operation, &plan.args);
    let sent = Instant::now();
    let outcome = oneshot(&shared.ctl, agent, form, plan.operation, &plan.args);
    shared.settle(CallPath::OneShot, plan, &outcome, sent);
    outcome
}

/// A one-shot worker: random agents, random calls, until the run stops.
pub fn worker(shared: &Shared, seed: u64) {
    let mut rng = Rng::new(seed);
    while !shared.stopping() {
        let agent = shared.agent(rng.index(shared.agent_count()));
        let plan = plan(&mut rng, shared, &agent);
        if matches!(oneshot_planned(shared, &mut rng, &agent, &plan), Outcome::Unavailable(_)) {
            // The server is down or the endpoint torn: do not spin.
            thread::sleep(rng.between(Duration::from_millis(50), Duration::from_millis(250)));
        }
    }
}

/// A one-shot call recorded in the ledger, repeated while it ends unavailable (each attempt is
/// one attempt of the same key); `None` when the run stopped first. A tool error is returned
/// unrecorded: the caller decides whether the spec explains it.
pub fn until_answered(
    shared: &Shared,
    rng: &mut Rng,
    agent: &Agent,
    operation: &'static str,
    args: &Value,
) -> Option<Outcome> {
    let generation = shared.generation();
    loop {
        let outcome = recorded_attempt(shared, rng, agent, operation, args);
        // After a tmux kill the agent is gone for good: its session file may be removed
        // (unavailable), so the caller starts over with the new agent.
        if !matches!(outcome, Outcome::Unavailable(_)) || shared.generation() != generation {
            return Some(outcome);
        }
        if shared.stopping() {
            return None;
        }
        pause_after_unavailable(rng);
    }
}

/// One one-shot call in a random form, recorded in the ledger as an attempt and, unless it is
/// a tool error, with its outcome.
fn recorded_attempt(
    shared: &Shared,
    rng: &mut Rng,
    agent: &Agent,
    operation: &'static str,
    args: &Value,
) -> Outcome {
    let form = if rng.below(2) == 0 { Form::Call } else { Form::Direct };
    lock(&shared.ledger).attempt(CallPath::OneShot, operation, args);
    let outcome = oneshot(&shared.ctl, agent, form, operation, args);
    if !matches!(outcome, Outcome::ToolError(_)) {
        lock(&shared.ledger).outcome(CallPath::OneShot, operation, args, &outcome, None);
    }
    outcome
}

/// The wait before trying again while the server is away.
fn pause_after_unavailable(rng: &mut Rng) {
    thread::sleep(rng.between(Duration::from_millis(100), Duration::from_millis(300)));
}

/// Conversations between two linked agents, one at a time, alternating direction: `agent_send`
/// (retried with the same `messageId` while unavailable, which the spec makes idempotent), then
/// the recipient's `agent_reply`, with `agent_task` to find out whether an attempt that ended
/// unavailable ran.
///
/// The one tool error the spec makes unavoidable: a restart fails every pending task
/// (`spec/protocol.md` §4.5, "when the server restarts"), so a reply after a restart is refused
/// (`Task is no longer pending`). It is counted as expected only when `agent_task` then shows the
/// task failed with the restart's reason.
pub fn converse(shared: &Shared, seed: u64, pair: [usize; 2]) {
    let mut rng = Rng::new(seed);
    let mut turn = 0;
    while !shared.stopping() {
        let (from, to) = (shared.agent(pair[turn % 2]), shared.agent(pair[(turn + 1) % 2]));
        turn += 1;
        conversation(shared, &mut rng, &from, &to);
    }
}

fn conversation(shared: &Shared, rng: &mut Rng, from: &Agent, to: &Agent) {
    let began = Instant::now();
    let n = shared.marker();
    let send = json!({
        "nodeId": to.node_id,
        "text": format!("soak message {n}"),
        "messageId": format!("soak-{n}"),
    });
    let Some(answer) = until_answered(shared, rng, from, "agent_send", &send) else { return };
    let task = match answer {
        Outcome::Ok(task) => task,
        Outcome::ToolError(error) => {
            let expected = shared.explains(began, &error, from.generation.min(to.generation));
            record_tool_error(shared, "agent_send", &send, &error, expected);
            return;
        }
        _ => return,
    };
    let Some(task_id) = task["taskId"].as_str().map(str::to_owned) else {
        lock(&shared.ledger).fail("agent_send answered without taskId", &task.to_string());
        return;
    };
    lock(&shared.world).tasks.push(task_id.clone());
    if task["state"] != "submitted" {
        // A retry after an unavailable attempt that ran returns the earlier task, which a
        // restart in between failed; or the delivery into the recipient's terminal met a tmux
        // kill.
        let tmux = shared.faults.overlapped(Fault::TmuxKilled, began)
            && delivery_failed_by(Fault::TmuxKilled, &task);
        if tmux {
            lock(&shared.ledger).expect_finished_task(faults::TMUX_KILLED);
        } else if !failed_by_restart(&task) {
            lock(&shared.ledger).fail("agent_send returned a finished task", &task.to_string());
        }
        return;
    }
    // A third of the recipients take up to two seconds to answer, so that restarts also fall
    // between a request and its reply.
    if rng.below(3) == 0 {
        thread::sleep(rng.between(Duration::ZERO, Duration::from_secs(2)));
    }
    let text = format!("soak reply {n}");
    let reply = json!({"taskId": task_id, "text": text});
    loop {
        let Some(outcome) = until_answered_once(shared, rng, to, "agent_reply", &reply) else {
            return;
        };
        match outcome {
            Outcome::Ok(done) => {
                if done["state"] != "completed" || done["response"] != text.as_str() {
                    lock(&shared.ledger)
                        .fail("agent_reply answered a wrong task", &done.to_string());
                }
                return;
            }
            Outcome::Unavailable(_) => {
                // Did that attempt run? Ask.
                let Some(now) = task_now(shared, rng, to, &task_id, began) else { return };
                if now["state"] == "completed" && now["response"] == text.as_str() {
                    return;
                }
                if failed_by_restart(&now)
                    || shared.faults.overlapped(Fault::TmuxKilled, began)
                        && delivery_failed_by(Fault::TmuxKilled, &now)
                {
                    return;
                }
                if now["state"] != "submitted" {
                    lock(&shared.ledger).fail("task in an unexpected state", &now.to_string());
                    return;
                }
            }
            Outcome::ToolError(error) => {
                let now = task_now(shared, rng, to, &task_id, began);
                let expected = now
                    .as_ref()
                    .is_some_and(failed_by_restart)
                    .then_some(
                        "the task was failed by a server restart before the reply (spec/protocol.md §4.5)",
                    )
                    .or_else(|| {
                        shared.explains(began, &error, from.generation.min(to.generation))
                    });
                record_tool_error(shared, "agent_reply", &reply, &error, expected);
                return;
            }
            Outcome::Broken { .. } => return,
        }
    }
}

/// One recorded attempt (a tool error left unrecorded); `None` when the run stopped.
fn until_answered_once(
    shared: &Shared,
    rng: &mut Rng,
    agent: &Agent,
    operation: &'static str,
    args: &Value,
) -> Option<Outcome> {
    if shared.stopping() {
        return None;
    }
    let outcome = recorded_attempt(shared, rng, agent, operation, args);
    if matches!(outcome, Outcome::Unavailable(_)) {
        pause_after_unavailable(rng);
    }
    Some(outcome)
}

/// The task as `agent_task` shows it now (retried while unavailable).
fn task_now(
    shared: &Shared,
    rng: &mut Rng,
    agent: &Agent,
    task_id: &str,
    began: Instant,
) -> Option<Value> {
    let args = json!({"taskId": task_id});
    match until_answered(shared, rng, agent, "agent_task", &args)? {
        Outcome::Ok(task) => Some(task),
        Outcome::ToolError(error) => {
            let expected = shared.explains(began, &error, agent.generation);
            record_tool_error(shared, "agent_task", &args, &error, expected);
            None
        }
        _ => None,
    }
}

/// Whether a task failed because the server restarted.
pub fn failed_by_restart(task: &Value) -> bool {
    task["state"] == "failed" && task["response"] == RESTART_REASON
}

fn record_tool_error(
    shared: &Shared,
    operation: &str,
    args: &Value,
    error: &str,
    expected: Option<&str>,
) {
    let outcome = Outcome::ToolError(error.to_owned());
    lock(&shared.ledger).outcome(CallPath::OneShot, operation, args, &outcome, expected);
}

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
        let Some(outcome) = until_answered(shared, &mut rng, &agent, "terminal_wait", &args) else {
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
        let output = value["output"].as_str().unwrap_or_default();
        let Some(cursor) = value["cursor"].as_u64() else {
            lock(&shared.ledger).fail("follower: an answer without cursor", &value.to_string());
            break;
        };
        let count = output.chars().count() as u64;
        let problem = if cursor < since {
            Some("follower: the cursor went back")
        } else if value["truncated"] != false {
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
    let problem = match until_answered(shared, rng, agent, "terminal_read", &args) {
        None => return true,
        Some(Outcome::Ok(value)) => {
            let output = value["output"].as_str().unwrap_or_default();
            if value["running"] != false {
                Some(format!("the ended ticker reads as running: {value}"))
            } else if !output.starts_with(seen) {
                Some(format!(
                    "its output does not begin with the {} characters followed on it",
                    seen.chars().count()
                ))
            } else {
                None
            }
        }
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

/// A long-lived `termsprawlctl mcp` bridge with [`BRIDGE_DEPTH`] calls in flight.
#[derive(Debug)]
pub struct Bridge {
    /// Its index in [`Shared::bridges`].
    pub index: usize,
    /// The index of the agent it speaks for (of each generation: after a tmux kill, the bridge
    /// finishes its calls, exits, and a new one starts for the new agent).
    pub agent: usize,
}

/// A message from a bridge's reader thread.
enum Line {
    Answer(Value),
    Garbage(String),
    Closed,
}

impl Bridge {
    /// Runs the bridge until the run stops, then lets its calls finish, closes its stdin and
    /// checks that it exits 0; the same when the agents' generation changes, and then again
    /// with the new agent.
    pub fn run(&self, shared: &Shared, seed: u64) {
        let mut rng = Rng::new(seed);
        let mut incarnation = 0;
        loop {
            let generation = shared.generation();
            let agent = shared.agent(self.agent);
            if let Err(error) = self.drive(shared, &mut rng, &agent, generation, incarnation) {
                lock(&shared.ledger)
                    .fail("bridge broken", &format!("bridge {}: {error:#}", self.index));
                return;
            }
            if shared.stopping() {
                return;
            }
            incarnation += 1;
        }
    }

    #[expect(clippy::too_many_lines, reason = "one loop: handshake, fill, answer, hang check")]
    fn drive(
        &self,
        shared: &Shared,
        rng: &mut Rng,
        agent: &Agent,
        generation: u64,
        incarnation: u32,
    ) -> anyhow::Result<()> {
        use anyhow::Context as _;
        let log =
            fs::File::create(shared.logs.join(format!("bridge-{}-{incarnation}.log", self.index)))?;
        let mut child = Command::new(&shared.ctl)
            .arg("--session")
            .arg(&agent.session_file)
            .arg("mcp")
            .env_remove("TERMSPRAWL_SESSION_FILE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .context("cannot start termsprawlctl mcp")?;
        lock(&shared.bridges)[self.index].pid = child.id();
        let mut stdin = child.stdin.take().context("no stdin")?;
        let stdout = child.stdout.take().context("no stdout")?;
        let (lines, incoming) = mpsc::channel();
        let reader = thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let message = match serde_json::from_str::<Value>(&line) {
                    Ok(value) => Line::Answer(value),
                    Err(_) => Line::Garbage(line),
                };
                if lines.send(message).is_err() {
                    return;
                }
            }
            let _ = lines.send(Line::Closed);
        });

        // The handshake calls session_info: one attempt of that key.
        let initialize = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"soak","version":"0"}}}"#;
        lock(&shared.ledger).attempt(CallPath::Mcp, "session_info", &json!({}));
        writeln!(stdin, "{initialize}")?;
        let answer = match incoming.recv_timeout(CALL_TIMEOUT) {
            Ok(Line::Answer(answer)) => answer,
            Ok(Line::Garbage(line)) => anyhow::bail!("initialize answered {line:?}"),
            Ok(Line::Closed) | Err(_) => anyhow::bail!("no answer to initialize"),
        };
        let outcome = if answer.pointer("/result/serverInfo").is_some() {
            Outcome::Ok(Value::Null)
        } else {
            Outcome::Broken { kind: "initialize failed".to_owned(), detail: answer.to_string() }
        };
        lock(&shared.ledger).outcome(CallPath::Mcp, "session_info", &json!({}), &outcome, None);
        anyhow::ensure!(matches!(outcome, Outcome::Ok(_)), "initialize failed: {answer}");
        writeln!(stdin, r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#)?;

        let mut pending: HashMap<u64, (Plan, Instant)> = HashMap::new();
        let mut next_id = 1_u64;
        let mut pause_until = Instant::now();
        let mut closed = false;
        let mut drain_deadline = None;
        loop {
            let stopping = shared.stopping() || shared.generation() != generation;
            if stopping && drain_deadline.is_none() {
                drain_deadline = Some(Instant::now() + CALL_TIMEOUT);
            }
            while !stopping && pending.len() < BRIDGE_DEPTH && Instant::now() >= pause_until {
                let plan = plan(rng, shared, agent);
                let id = next_id;
                next_id += 1;
                let line = json!({
                    "jsonrpc": "2.0",
                    "id": id,
                    "method": "tools/call",
                    "params": {"name": plan.operation, "arguments": plan.args},
                });
                lock(&shared.ledger).attempt(CallPath::Mcp, plan.operation, &plan.args);
                writeln!(stdin, "{line}")?;
                pending.insert(id, (plan, Instant::now()));
            }
            if pending.is_empty() && stopping {
                break;
            }
            if closed {
                anyhow::bail!(
                    "the bridge closed its stdout with {} calls in flight",
                    pending.len()
                );
            }
            match incoming.recv_timeout(Duration::from_millis(100)) {
                Ok(Line::Answer(answer)) => {
                    let id = answer["id"].as_u64();
                    let Some((plan, sent)) = id.and_then(|id| pending.remove(&id)) else {
                        lock(&shared.ledger).fail("MCP answer to no call", &answer.to_string());
                        continue;
                    };
                    let outcome = classify_mcp(&answer);
                    shared.settle(CallPath::Mcp, &plan, &outcome, sent);
                    match outcome {
                        Outcome::Ok(_) => {
                            let mut bridges = lock(&shared.bridges);
                            let state = &mut bridges[self.index];
                            state.last_ok_sent =
                                Some(state.last_ok_sent.map_or(sent, |t| t.max(sent)));
                        }
                        Outcome::Unavailable(_) => {
                            pause_until = Instant::now()
                                + rng
                                    .between(Duration::from_millis(50), Duration::from_millis(250));
                        }
                        _ => {}
                    }
                }
                Ok(Line::Garbage(line)) => {
                    lock(&shared.ledger).fail("MCP line that is not JSON", &line);
                }
                Ok(Line::Closed) | Err(mpsc::RecvTimeoutError::Disconnected) => closed = true,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
            let now = Instant::now();
            let hung: Vec<u64> = pending
                .iter()
                .filter(|(_, (_, sent))| now.duration_since(*sent) > CALL_TIMEOUT)
                .map(|(id, _)| *id)
                .collect();
            for id in hung {
                if let Some((plan, sent)) = pending.remove(&id) {
                    let outcome = Outcome::Broken {
                        kind: "no answer within 60 s (MCP)".to_owned(),
                        detail: format!("bridge {} id {id}", self.index),
                    };
                    shared.settle(CallPath::Mcp, &plan, &outcome, sent);
                }
            }
            if drain_deadline.is_some_and(|deadline| now > deadline) {
                break;
            }
        }
        // At the end: rest, idle, until the end levels are taken.
        if shared.stopping() {
            lock(&shared.bridges)[self.index].drained = true;
            let rest = Instant::now() + CALL_TIMEOUT;
            while !shared.release.load(Ordering::Relaxed) && Instant::now() < rest {
                thread::sleep(Duration::from_millis(50));
            }
        }
        drop(stdin);
        let Some(status) = wait_child(&mut child, Duration::from_secs(10))? else {
            anyhow::bail!("the bridge did not exit within 10 s of the end of its input");
        };
        let _ = reader.join();
        anyhow::ensure!(status.success(), "the bridge exited with {status}");
        Ok(())
    }
}
