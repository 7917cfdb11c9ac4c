//! The agent conversations of the soak's load (one-shot calls between an agent pair):
//! `agent_send`, `agent_reply` and `agent_task` ([`converse`]), with the one tool error a restart
//! makes unavoidable ([`failed_by_restart`]).

use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::base::lock;

use super::{Agent, RESTART_REASON, Rng, Shared, until_answered};
use crate::soak::faults::{self, Fault, delivery_failed_by};
use crate::soak::ledger::{Outcome, Path as CallPath};

use super::oneshot::Attempts;

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
    let Some(answer) =
        until_answered(shared, rng, from, "agent_send", &send, Attempts::WhileUnavailable)
    else {
        return;
    };
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
        let Some(outcome) = until_answered(shared, rng, to, "agent_reply", &reply, Attempts::Once)
        else {
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

/// The task as `agent_task` shows it now (retried while unavailable).
fn task_now(
    shared: &Shared,
    rng: &mut Rng,
    agent: &Agent,
    task_id: &str,
    began: Instant,
) -> Option<Value> {
    let args = json!({"taskId": task_id});
    match until_answered(shared, rng, agent, "agent_task", &args, Attempts::WhileUnavailable)? {
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

pub(super) fn record_tool_error(
    shared: &Shared,
    operation: &str,
    args: &Value,
    error: &str,
    expected: Option<&str>,
) {
    let outcome = Outcome::ToolError(error.to_owned());
    lock(&shared.ledger).outcome(CallPath::OneShot, operation, args, &outcome, expected);
}
