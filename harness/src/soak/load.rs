//! The load of the soak: the world and the plans every client kind shares (what is called,
//! [`plan`]), and the client kinds, one module each: one-shot `termsprawlctl` calls ([`oneshot`]),
//! long-lived MCP bridges ([`bridge`]), agent conversations ([`converse`]) and the followers of
//! the tickers ([`follow`]).
//!
//! Every argument object that can carry one has a unique marker (sticky text, terminal text,
//! `messageId`, coordinates, sizes, `maxChars` digits), so that each call is one key of the
//! [`Ledger`](super::ledger::Ledger). The reads (`canvas_list`, `session_info`, `agent_status`,
//! `agent_task`) and `canvas_select` take no free-form member; their keys are shared and counted
//! together, which the execution check allows.

mod bridge;
mod converse;
mod follow;
mod oneshot;

pub use bridge::Bridge;
pub use converse::{converse, failed_by_restart};
pub use follow::{Followed, TICKER, follow};
pub use oneshot::{oneshot, until_answered, worker};

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::base::lock;

use super::faults::{self, Fault, FaultLog};
use super::ledger::{Ledger, Outcome, Path as CallPath};

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
pub(super) fn number(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}
