//! The live sessions of one server run, and the [`Caller`] a token identifies.

use std::fmt;
use std::path::Path;
use std::sync::{Arc, Mutex};

use crate::sync::lock;
use subtle::ConstantTimeEq;
use termsprawl_protocol::{IntegrationStatus, SessionToken, ToolIdentity};

/// One live session: identity, token and the in-memory integration status.
pub struct LiveSession {
    identity: ToolIdentity,
    token: SessionToken,
    status: Mutex<IntegrationStatus>,
}

impl LiveSession {
    /// The session's identity.
    pub fn identity(&self) -> &ToolIdentity {
        &self.identity
    }

    /// The current in-memory status (starts as provisioned; see [`Caller::set_status`]).
    pub fn status(&self) -> IntegrationStatus {
        lock(&self.status).clone()
    }
}

impl fmt::Debug for LiveSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LiveSession")
            .field("identity", &self.identity)
            .field("status", &self.status())
            .finish_non_exhaustive()
    }
}

/// The live sessions of one server run, in provisioning order. Cheap to clone (shared).
#[derive(Clone, Default)]
pub struct Sessions {
    live: Arc<Mutex<Vec<Arc<LiveSession>>>>,
}

impl Sessions {
    /// Every live session, in provisioning order (a re-provisioned node keeps its place).
    pub fn list(&self) -> Vec<Arc<LiveSession>> {
        lock(&self.live).clone()
    }

    /// The live session of `node_id`.
    pub fn get(&self, node_id: &str) -> Option<Arc<LiveSession>> {
        lock(&self.live).iter().find(|session| session.identity.node_id == node_id).cloned()
    }

    /// Sets the in-memory status of `node_id`'s session (never written to the session file,
    /// `spec/protocol.md` §2.5); `false` when there is no such live session.
    pub fn set_status(&self, node_id: &str, status: IntegrationStatus) -> bool {
        match self.get(node_id) {
            Some(session) => {
                *lock(&session.status) = status;
                true
            }
            None => false,
        }
    }

    /// Makes a session live, replacing the node's earlier one (whose token stops working).
    pub(super) fn insert(
        &self,
        identity: ToolIdentity,
        token: SessionToken,
        status: IntegrationStatus,
    ) {
        let session = Arc::new(LiveSession { identity, token, status: Mutex::new(status) });
        let mut live = lock(&self.live);
        match live.iter_mut().find(|live| live.identity.node_id == session.identity.node_id) {
            Some(slot) => *slot = session,
            None => live.push(session),
        }
    }

    /// Ends the node's session; `false` when there was none.
    pub(super) fn remove(&self, node_id: &str) -> bool {
        let mut live = lock(&self.live);
        let before = live.len();
        live.retain(|session| session.identity.node_id != node_id);
        live.len() != before
    }

    /// The session whose token is `presented`: compared with every live token, a length check
    /// then a constant-time comparison (`spec/protocol.md` §6.2).
    pub(super) fn authenticate(&self, presented: &[u8]) -> Option<Arc<LiveSession>> {
        let live = lock(&self.live);
        let mut found = None;
        for session in live.iter() {
            let token = session.token.expose().as_bytes();
            if token.len() == presented.len() && bool::from(token.ct_eq(presented)) {
                found = Some(Arc::clone(session));
            }
        }
        found
    }

    /// Whether `session` is still the live session of its node (not revoked, not replaced).
    fn is_current(&self, session: &Arc<LiveSession>) -> bool {
        lock(&self.live).iter().any(|live| Arc::ptr_eq(live, session))
    }
}

impl fmt::Debug for Sessions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.list()).finish()
    }
}

/// Who sent a request: the session its token belongs to, and facts of the server run.
#[derive(Clone)]
pub struct Caller {
    session: Arc<LiveSession>,
    sessions: Sessions,
    instance_id: Arc<str>,
    data_dir: Arc<Path>,
}

impl Caller {
    pub(super) fn new(
        session: Arc<LiveSession>,
        sessions: Sessions,
        instance_id: Arc<str>,
        data_dir: Arc<Path>,
    ) -> Caller {
        Caller { session, sessions, instance_id, data_dir }
    }

    /// The caller's identity.
    pub fn identity(&self) -> &ToolIdentity {
        &self.session.identity
    }

    /// The caller's node id.
    pub fn node_id(&self) -> &str {
        &self.session.identity.node_id
    }

    /// The caller's project id.
    pub fn project_id(&self) -> &str {
        &self.session.identity.project_id
    }

    /// The caller's current in-memory integration status.
    pub fn status(&self) -> IntegrationStatus {
        self.session.status()
    }

    /// Changes the caller's in-memory status (as `session_info` does for MCP adapters,
    /// `spec/protocol.md` §6.5); the session file keeps the provisioned status.
    pub fn set_status(&self, status: IntegrationStatus) {
        *lock(&self.session.status) = status;
    }

    /// Whether the caller's token is still live: not revoked, and the node not re-provisioned
    /// with another token since the request arrived (the `Session revoked` check of §6.4).
    pub fn is_live(&self) -> bool {
        self.sessions.is_current(&self.session)
    }

    /// All live sessions of the server (for `agent_status`, say).
    pub fn sessions(&self) -> &Sessions {
        &self.sessions
    }

    /// The server run's instance id.
    pub fn instance_id(&self) -> &str {
        &self.instance_id
    }

    /// The server's data directory `D`, absolute.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }
}

impl fmt::Debug for Caller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Caller")
            .field("identity", &self.session.identity)
            .field("status", &self.session.status())
            .field("instance_id", &self.instance_id)
            .finish_non_exhaustive()
    }
}
