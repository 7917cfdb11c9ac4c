//! `session_info` and `agent_status`: answered at once, outside the project queue.

use serde_json::Value;
use termsprawl_protocol::results::{AgentStatusEntry, SessionInfoResult};
use termsprawl_protocol::{IntegrationState, Operation, operations};
use termsprawl_transport::server::Caller;

use crate::engine::Engine;
use crate::launch;
use crate::ops::answer;

/// `session_info` (§6.5), with the headless member `rules` last: the rules this server enforces
/// beyond the protocol (`docs/headless-rules.md`). Asking it is what tells an MCP adapter's
/// session that it is connected.
pub(super) fn session_info(engine: &Engine, caller: &Caller) -> Value {
    let mut status = caller.status();
    if launch::is_mcp_adapter(&status.adapter) {
        status.state = IntegrationState::Connected;
        launch::CONNECTED_REASON.clone_into(&mut status.reason);
        caller.set_status(status.clone());
    }
    let operations: Vec<String> = operations()
        .iter()
        .map(Operation::name)
        .filter(|name| !name.starts_with("browser_"))
        .map(str::to_owned)
        .collect();
    let layout = engine.layout();
    answer(&SessionInfoResult {
        node_id: caller.node_id().to_owned(),
        project_id: caller.project_id().to_owned(),
        instance_id: caller.instance_id().to_owned(),
        host: "local".to_owned(),
        status,
        app_version: engine.config().app_version.clone(),
        preferences_file: layout.preferences_file().to_string_lossy().into_owned(),
        guides_directory: layout.skills_dir(caller.node_id()).to_string_lossy().into_owned(),
        browser_enabled: false,
        operations,
        rules: Some(super::access::RULES.map(str::to_owned).to_vec()),
    })
}

/// `agent_status`: every valid agent session of the caller's project.
pub(super) fn agent_status(engine: &Engine, caller: &Caller) -> Value {
    let sessions = caller.sessions().list();
    Value::Array(
        sessions
            .iter()
            .filter(|session| session.identity().project_id == caller.project_id())
            .filter(|session| engine.identity_is_valid(session.identity()))
            .map(|session| {
                answer(&AgentStatusEntry {
                    node_id: session.identity().node_id.clone(),
                    project_id: session.identity().project_id.clone(),
                    status: session.status(),
                })
            })
            .collect(),
    )
}
