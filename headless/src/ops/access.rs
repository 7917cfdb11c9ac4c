//! Who may do what with a terminal node: the one place every terminal operation asks, with the
//! [`Access`] it needs, before it touches tmux (`docs/headless-rules.md`, rule
//! `agent-link-isolation`).
//!
//! - Plain shell terminals and run nodes are shared within the project: every access is allowed.
//! - The caller's own agent node may be read and attached, never driven or closed
//!   ([`messages::OWN_NODE`]).
//! - Another agent's node may be read only over an enabled link from the caller to it, as
//!   `agent_send` needs ([`messages::agent_read_not_linked`]); it is never driven or attached
//!   ([`messages::AGENT_NOT_YOURS`]) nor closed ([`messages::agent_close_refused`]): ending an
//!   agent is the person's decision.
//!
//! The rule is checked before any operation-specific check, so a refused access answers the
//! rule's message even where the operation would have failed for another reason (submitting into
//! an agent, killing a node `terminal_run` did not start).

use termsprawl_transport::server::Caller;

use crate::canvas::{Node, NodeKind, Project};
use crate::engine::Engine;
use crate::error::{ToolError, messages};

/// What a terminal operation does with its node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Access {
    /// Reads its output: `terminal_read`, `terminal_wait`.
    Read,
    /// Writes into it or signals its program: `terminal_submit`, `terminal_input`,
    /// `terminal_interrupt`, `terminal_kill`.
    Drive,
    /// Attaches an operating-system terminal window to it: `terminal_external`.
    Attach,
    /// Ends it and removes the node: `terminal_close`.
    Close,
}

/// The rule names `session_info` lists under `rules`, beyond the protocol's own.
pub(super) const RULES: [&str; 1] = ["agent-link-isolation"];

/// The terminal or agent node `node_id` of the caller's project, if the caller may have `access`
/// to it; `Local terminal not found in this project` for any other node.
pub(super) fn terminal(
    engine: &Engine,
    caller: &Caller,
    node_id: &str,
    access: Access,
) -> Result<Node, ToolError> {
    engine.with_project(caller.project_id(), |project| {
        let node = match project.node(node_id) {
            Some(node) if node.kind.is_terminal() => node,
            _ => return Err(messages::TERMINAL_NOT_FOUND.into()),
        };
        permits(project, caller.node_id(), node, access)?;
        Ok(node.clone())
    })?
}

/// Whether `caller_node` may have `access` to `node` of `project`, with the refusal if not.
pub(super) fn permits(
    project: &Project,
    caller_node: &str,
    node: &Node,
    access: Access,
) -> Result<(), ToolError> {
    if node.id == caller_node {
        return match access {
            Access::Read | Access::Attach => Ok(()),
            Access::Drive | Access::Close => Err(messages::OWN_NODE.into()),
        };
    }
    if node.kind != NodeKind::Agent {
        return Ok(());
    }
    match access {
        Access::Read if project.is_linked(caller_node, &node.id) => Ok(()),
        Access::Read => Err(ToolError::new(messages::agent_read_not_linked(caller_node, &node.id))),
        Access::Drive | Access::Attach => Err(messages::AGENT_NOT_YOURS.into()),
        Access::Close => Err(ToolError::new(messages::agent_close_refused(&node.id))),
    }
}
