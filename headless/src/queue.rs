//! Per-project serialisation of operations (`spec/protocol.md` §6.4 step 5): one FIFO queue per
//! project, projects independent of each other.
//!
//! A caller records its expiry when it is queued, waits for its [`Turn`], and then checks the
//! expiry and its session itself (the checks belong to the operation handler, which knows the
//! session). Every step is published as a [`QueueEvent`], which tests use to observe the order
//! of execution without timing.

use std::collections::HashMap;
use std::future::{Future, poll_fn};
use std::pin::pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::Poll;

use tokio::sync::{OwnedMutexGuard, broadcast};

/// What happened in a project's queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueEvent {
    /// The project.
    pub project_id: String,
    /// The operation, or `hold` for `Queues::hold`.
    pub operation: String,
    /// The caller's node, empty for a hold.
    pub node_id: String,
    /// The step.
    pub phase: QueuePhase,
}

/// A step of a queued operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueuePhase {
    /// It waits for its turn.
    Queued,
    /// Its turn has come (it may still fail its checks).
    Started,
    /// Its turn is over.
    Finished,
}

/// The queues of every project.
#[derive(Debug)]
pub(crate) struct Queues {
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    events: broadcast::Sender<QueueEvent>,
}

impl Default for Queues {
    fn default() -> Queues {
        Queues { locks: Mutex::new(HashMap::new()), events: broadcast::channel(1024).0 }
    }
}

impl Queues {
    /// Waits for the turn of `operation` by `node_id` in `project_id`'s queue. tokio's mutex
    /// serves waiters first come, first served; [`QueuePhase::Queued`] is published once the
    /// place in the queue is taken.
    pub(crate) async fn enter(&self, project_id: &str, operation: &str, node_id: &str) -> Turn {
        let lock = {
            let mut locks = self.locks.lock().unwrap_or_else(PoisonError::into_inner);
            Arc::clone(locks.entry(project_id.to_owned()).or_default())
        };
        let event = |phase| QueueEvent {
            project_id: project_id.to_owned(),
            operation: operation.to_owned(),
            node_id: node_id.to_owned(),
            phase,
        };
        // Take a place in the queue first (one poll registers the waiter), then report it, so
        // that whoever sees `Queued` knows the order is settled.
        let mut acquire = pin!(lock.lock_owned());
        let ready = poll_fn(|context| match acquire.as_mut().poll(context) {
            Poll::Ready(guard) => Poll::Ready(Some(guard)),
            Poll::Pending => Poll::Ready(None),
        })
        .await;
        let _ = self.events.send(event(QueuePhase::Queued));
        let guard = match ready {
            Some(guard) => guard,
            None => acquire.await,
        };
        let _ = self.events.send(event(QueuePhase::Started));
        Turn { _guard: guard, finished: Some((self.events.clone(), event(QueuePhase::Finished))) }
    }

    /// Occupies `project_id`'s queue until the turn is dropped (a test hook: operations queued
    /// meanwhile wait, and expire if held past their expiry).
    pub(crate) async fn hold(&self, project_id: &str) -> Turn {
        self.enter(project_id, "hold", "").await
    }

    /// A receiver of every later [`QueueEvent`].
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<QueueEvent> {
        self.events.subscribe()
    }
}

/// The turn of one operation; the next one's turn comes when it is dropped.
pub struct Turn {
    _guard: OwnedMutexGuard<()>,
    finished: Option<(broadcast::Sender<QueueEvent>, QueueEvent)>,
}

impl Drop for Turn {
    fn drop(&mut self) {
        if let Some((events, event)) = self.finished.take() {
            let _ = events.send(event);
        }
    }
}

impl std::fmt::Debug for Turn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Turn").finish_non_exhaustive()
    }
}
