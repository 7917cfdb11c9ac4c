//! The one-shot client kind of the soak's load: one `termsprawlctl` process per call, in the
//! `call` form or the direct form ([`oneshot`]), the workers that make them ([`worker`]), and a
//! call repeated until the server answers it ([`until_answered`]).

use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::base::lock;

use super::{Agent, CALL_TIMEOUT, Plan, Rng, Shared, plan};
use crate::soak::ledger::{Form, Outcome, Path as CallPath, classify_oneshot};

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

/// How often [`until_answered`] attempts a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attempts {
    /// Again while it ends unavailable (a call that is safe to repeat).
    WhileUnavailable,
    /// Once (a call that must not be repeated), unless the run is stopping; an unavailable
    /// outcome is followed by the same pause, then returned.
    Once,
}

/// A one-shot call recorded in the ledger, repeated while it ends unavailable (each attempt is
/// one attempt of the same key) or attempted once ([`Attempts`]); `None` when the run stopped
/// first. A tool error is returned unrecorded: the caller decides whether the spec explains it.
pub fn until_answered(
    shared: &Shared,
    rng: &mut Rng,
    agent: &Agent,
    operation: &'static str,
    args: &Value,
    attempts: Attempts,
) -> Option<Outcome> {
    if attempts == Attempts::Once && shared.stopping() {
        return None;
    }
    let generation = shared.generation();
    loop {
        let outcome = recorded_attempt(shared, rng, agent, operation, args);
        if attempts == Attempts::Once {
            if matches!(outcome, Outcome::Unavailable(_)) {
                pause_after_unavailable(rng);
            }
            return Some(outcome);
        }
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
pub(super) fn recorded_attempt(
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
pub(super) fn pause_after_unavailable(rng: &mut Rng) {
    thread::sleep(rng.between(Duration::from_millis(100), Duration::from_millis(300)));
}
