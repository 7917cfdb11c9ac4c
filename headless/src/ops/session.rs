//! `session_info` and `agent_status`: answered at once, outside the project queue.

use serde_json::{Value, json};
use termsprawl_protocol::{IntegrationState, Operation, operations};
use termsprawl_transport::server::Caller;

use crate::engine::Engine;
use crate::launch;

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
    let operations: Vec<&str> = operations()
        .iter()
        .map(Operation::name)
        .filter(|name| !name.starts_with("browser_"))
        .collect();
    json!({
        "nodeId": caller.node_id(),
        "projectId": caller.project_id(),
        "instanceId": caller.instance_id(),
        "host": "local",
        "status": status,
        "appVersion": engine.config().app_version,
        "preferencesFile": engine.layout().preferences_file().to_string_lossy(),
        "guidesDirectory": engine.layout().skills_dir(caller.node_id()).to_string_lossy(),
        "browserEnabled": false,
        "operations": operations,
        "rules": super::access::RULES,
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
                json!({
                    "nodeId": session.identity().node_id,
                    "projectId": session.identity().project_id,
                    "status": session.status(),
                })
            })
            .collect(),
    )
}
