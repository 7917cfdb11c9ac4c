//! The operations (`spec/protocol.md` §4, §6.4): the [`ToolHandler`] of the headless server.
//!
//! Order for every request, after the transport's checks: the caller's identity must still be
//! valid; `session_info`, `guide_read` and `agent_status` are answered at once; `browser_*`
//! operations are refused (there is no browser); everything else waits for its turn in the
//! project's queue, then fails if it waited past its expiry or its session was revoked meanwhile,
//! and otherwise runs.
//!
//! The request arrives typed: its [`Call`] was read by `termsprawl_protocol::validate` from the
//! body it checked, never parsed again here; [`run`] matches it exhaustively, so an
//! operation of the table that this server does not handle is a compile error. The operations
//! live by surface, one function each, as clients of the [`Engine`]: [`session`], [`canvas`],
//! [`terminal`] and [`wait`], [`survey`] (`terminal_list`, `terminal_search`), [`agents`]; [`access`] is the one rule of who may read, drive, attach or close
//! which terminal node.

mod access;
mod agents;
mod canvas;
mod session;
mod survey;
mod terminal;
mod wait;

use std::sync::Arc;

use serde_json::{Value, json};
use termsprawl_protocol::{Call, ToolRequest, ToolResult, Validated, guide};
use termsprawl_transport::server::{Caller, HandlerFuture, ToolHandler};
use tokio::time::Instant;

use crate::engine::Engine;
use crate::error::{ToolError, messages};

#[cfg(test)]
use crate::terminals::{tail, trim_blank_end};
#[cfg(test)]
use canvas::artifact_path;

/// A typed answer of `termsprawl_protocol::results` as the value the transport sends, its
/// members in the type's order. These types have string keys only, so serialising them cannot
/// fail.
fn answer(result: &impl serde::Serialize) -> Value {
    serde_json::to_value(result).unwrap_or(Value::Null)
}

/// The [`ToolHandler`] of the headless server.
pub(crate) struct Handler {
    pub(crate) engine: Arc<Engine>,
    /// `serve --exec-log`: opened for appending; one line per request before it is dispatched.
    pub(crate) exec_log: Option<std::fs::File>,
}

impl Handler {
    /// Appends `{"operation":…,"args":…}` and a newline to the execution log in one `write`
    /// (the file is opened with `O_APPEND`, so concurrent lines never interleave). The caller's
    /// session, and so its token, is never written. A failed write is ignored: the log is a
    /// testing aid and must not change the answer.
    fn log_execution(&self, request: &ToolRequest) {
        let Some(file) = &self.exec_log else { return };
        let mut line = json!({
            "operation": request.operation().unwrap_or_default(),
            "args": request.args_value(),
        })
        .to_string();
        line.push('\n');
        let _ = std::io::Write::write_all(&mut &*file, line.as_bytes());
    }
}

impl ToolHandler for Handler {
    fn handle(&self, caller: Caller, request: Validated) -> HandlerFuture<'_> {
        Box::pin(async move {
            self.log_execution(&request.request);
            match dispatch(&self.engine, &caller, request.call).await {
                Ok(value) => ToolResult::ok(value),
                Err(error) => ToolResult::failure(error.message()),
            }
        })
    }
}

/// The handling order of the module doc, for one request.
async fn dispatch(engine: &Engine, caller: &Caller, call: Call) -> Result<Value, ToolError> {
    if !engine.identity_is_valid(caller.identity()) {
        return Err(messages::NODE_NOT_IN_PROJECT.into());
    }
    match call {
        Call::SessionInfo(_) => return Ok(session::session_info(engine, caller)),
        Call::GuideRead(args) => return Ok(Value::from(guide(args.topic))),
        Call::AgentStatus(_) => return Ok(session::agent_status(engine, caller)),
        call if call.name().starts_with("browser_") => {
            return Err(messages::BROWSER_NEEDS_APP.into());
        }
        _ => {}
    }
    let expires_at = Instant::now() + engine.config().queue_expiry;
    let turn = engine.queues().enter(caller.project_id(), call.name(), caller.node_id()).await;
    if Instant::now() > expires_at {
        return Err(messages::QUEUE_EXPIRED.into());
    }
    if !caller.is_live() || !engine.identity_is_valid(caller.identity()) {
        return Err(messages::SESSION_REVOKED.into());
    }
    let step = run(engine, caller, call).await;
    drop(turn);
    match step? {
        Step::Done(value) => Ok(value),
        Step::Wait(wait) => wait.finish(engine).await,
    }
}

/// What a call's turn in the queue produced: its answer, or a wait to finish after the turn.
enum Step {
    Done(Value),
    /// Boxed: a wait's state is several times the size of an answer.
    Wait(Box<wait::Wait>),
}

/// Runs one call in the caller's turn of its project's queue.
async fn run(engine: &Engine, caller: &Caller, call: Call) -> Result<Step, ToolError> {
    let value = match call {
        Call::TerminalRun(args) => {
            return terminal::run(engine, caller, args)
                .await
                .map(|wait| Step::Wait(Box::new(wait)));
        }
        Call::TerminalWait(args) => {
            return wait::wait(engine, caller, args).await.map(|wait| Step::Wait(Box::new(wait)));
        }
        other => other,
    };
    done(engine, caller, value).await.map(Step::Done)
}

/// The calls that answer within their turn.
async fn done(engine: &Engine, caller: &Caller, call: Call) -> Result<Value, ToolError> {
    match call {
        Call::SessionInfo(_) => Ok(session::session_info(engine, caller)),
        Call::GuideRead(args) => Ok(Value::from(guide(args.topic))),
        Call::AgentStatus(_) => Ok(session::agent_status(engine, caller)),
        Call::BrowserOpen(_)
        | Call::BrowserList(_)
        | Call::BrowserClaim(_)
        | Call::BrowserTransfer(_)
        | Call::BrowserNavigate(_)
        | Call::BrowserInspect(_)
        | Call::BrowserClick(_)
        | Call::BrowserType(_)
        | Call::BrowserScreenshot(_) => Err(messages::BROWSER_NEEDS_APP.into()),
        Call::CanvasList(_) => canvas::list(engine, caller).await,
        Call::CanvasSelect(args) => canvas::select(engine, caller, &args),
        Call::CanvasMove(args) => canvas::move_node(engine, caller, &args),
        Call::CanvasResize(args) => canvas::resize(engine, caller, &args),
        Call::CanvasGroup(args) => canvas::group(engine, caller, &args),
        Call::StickyOpen(args) => canvas::sticky_open(engine, caller, args),
        Call::ArtifactOpen(args) => canvas::artifact_open(engine, caller, &args),
        Call::TerminalOpen(args) => terminal::open(engine, caller, args).await,
        Call::TerminalRead(args) => terminal::read(engine, caller, &args).await,
        Call::TerminalSubmit(args) => terminal::submit(engine, caller, &args).await,
        Call::TerminalInput(args) => terminal::input(engine, caller, &args).await,
        Call::TerminalInterrupt(args) => terminal::interrupt(engine, caller, &args).await,
        Call::TerminalExternal(args) => terminal::external(engine, caller, &args).await,
        Call::TerminalClose(args) => terminal::close(engine, caller, &args).await,
        Call::TerminalKill(args) => terminal::kill(engine, caller, &args).await,
        Call::TerminalList(_) => survey::list(engine, caller),
        Call::TerminalSearch(args) => survey::search(engine, caller, &args),
        Call::TerminalRun(_) | Call::TerminalWait(_) => unreachable!("waits are run by `run`"),
        Call::AgentLaunch(args) => agents::launch(engine, caller, args).await,
        Call::AgentCards(_) => Ok(agents::cards(engine, caller)),
        Call::AgentSend(args) => agents::send(engine, caller, args).await,
        Call::AgentTask(args) => agents::task(engine, caller, &args),
        Call::AgentReply(args) => agents::reply(engine, caller, args),
        Call::ContextRead(_) => Ok(agents::context_read()),
    }
}

#[cfg(test)]
mod tests;
