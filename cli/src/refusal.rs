//! The startup mistakes of `termsprawlctl mcp`, each worded once as the answer a host shows
//! (issue 39, `spec/mcp.md` §3.15): an option that is no option, a `--tools` name that is no
//! operation, no session, and a session file that cannot serve (missing, unreadable, malformed,
//! or removed with its node).
//!
//! A [`Refusal`]'s message alone says what is wrong and what to do; the entry prints it on stderr
//! and `termsprawl_mcp::run_stdio_refusing` answers every request with it, serving nothing, then
//! exits 2. A tool server that is merely down is not a startup mistake: the bridge serves and
//! finds it per call.

use std::path::Path;

use serde_json::{Value, json};
use termsprawl_transport::discovery::SessionFileProblem;

use crate::session::SESSION_ENV;

/// The JSON-RPC error message of every request to `termsprawlctl mcp` without a session (issue
/// 24): hosts show it where they would show "connection closed". The missing-session line still
/// goes to stderr first, and the exit status is still 2.
pub const MCP_MISSING_SESSION: &str = "termsprawlctl mcp has no session: register it as `termsprawlctl --session /absolute/path/to/session.json mcp` (the session file of a termsprawl node), or set TERMSPRAWL_SESSION_FILE in its environment";

/// The command line the option mistakes point to.
const USAGE: &str = "termsprawlctl --session /absolute/path/to/session.json mcp [--read-only] [--tools NAME,...] [--max-wait-ms MS]";

/// Where the hosts' setup is explained.
const GUIDE: &str = "docs/hosts.md";

/// What a session file's mistakes ask for, after the problem.
const REGISTER: &str = "register the session file of an open termsprawl node (the TERMSPRAWL_SESSION_FILE its agents get, <userData>/agent-tools/sessions/<nodeId>.json) with --session or TERMSPRAWL_SESSION_FILE (docs/hosts.md)";

/// A startup mistake as the bridge answers it: the JSON-RPC error's `message` and `data`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Refusal {
    message: String,
    data: Value,
}

impl Refusal {
    /// No `--session` value and no `TERMSPRAWL_SESSION_FILE` (`spec/mcp.md` §3.13).
    pub(crate) fn no_session() -> Refusal {
        let data = json!({
            "missing": "session",
            "flag": "--session",
            "environment": SESSION_ENV,
            "usage": "termsprawlctl --session /absolute/path/to/session.json mcp",
            "guide": GUIDE,
        });
        Refusal { message: MCP_MISSING_SESSION.to_owned(), data }
    }

    /// A mistake on `mcp`'s command line: `problem` (`unknown option --readonly: did you mean
    /// --read-only?`, `--tools: "x" is no termsprawl operation`), which `kind` names in
    /// `data.problem`.
    pub(crate) fn command_line(kind: &str, problem: &str) -> Refusal {
        let separator = if problem.starts_with("--") { " " } else { ": " };
        let stop = if problem.ends_with(['?', '.', '…']) { "" } else { "." };
        let message = format!(
            "termsprawlctl mcp{separator}{problem}{stop} Fix the command the host runs for this server: {USAGE} ({GUIDE})"
        );
        let data = json!({"problem": kind, "usage": USAGE, "guide": GUIDE});
        Refusal { message, data }
    }

    /// A session file that cannot serve any call.
    pub(crate) fn session_file(path: &Path, problem: &SessionFileProblem) -> Refusal {
        let shown = path.display();
        let (kind, message) = match problem {
            SessionFileProblem::Removed { node_id } => (
                "session-removed",
                format!(
                    "termsprawlctl mcp: the session of termsprawl node {node_id} was removed ({shown} no longer exists): that node was closed, or the app restarted without it. Start the agent in an open node (or make one, e.g. `termsprawl-headless launch --json`), then register that node's session file in place of this one, with --session or TERMSPRAWL_SESSION_FILE ({GUIDE})"
                ),
            ),
            SessionFileProblem::Missing => (
                "session-missing",
                format!("termsprawlctl mcp: there is no session file {shown}: {REGISTER}"),
            ),
            SessionFileProblem::Unreadable { message } => (
                "session-unreadable",
                format!(
                    "termsprawlctl mcp cannot read its session file {shown}: {message}: let the host's user read it, or {REGISTER}"
                ),
            ),
            SessionFileProblem::NotJson => (
                "session-malformed",
                format!(
                    "termsprawlctl mcp: {shown} is not a session file (it is not JSON): {REGISTER}"
                ),
            ),
            SessionFileProblem::NoToken => (
                "session-malformed",
                format!(
                    "termsprawlctl mcp: {shown} is not a session file (it has no token): {REGISTER}"
                ),
            ),
        };
        let data = json!({
            "problem": kind,
            "sessionFile": shown.to_string(),
            "flag": "--session",
            "environment": SESSION_ENV,
            "guide": GUIDE,
        });
        Refusal { message, data }
    }

    /// The error message: what is wrong and what to do, on its own.
    pub(crate) fn message(&self) -> &str {
        &self.message
    }

    /// The error's `data`: the same, by name.
    pub(crate) fn data(&self) -> &Value {
        &self.data
    }
}
