//! One conformance run: discovery, then every rule group in turn, on one shared [`Ctx`]. It only
//! orchestrates: the context lives in `ctx`, the rules in their modules.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use termsprawl_transport::discovery;

use crate::ctx::{Ctx, Target, Version};
use crate::levels::Level;
use crate::report::{Outcome, Redactor, Report, Verdict};
/// What to check.
#[derive(Debug, Clone)]
pub struct Options {
    /// The session files: the first is the one every rule uses, a second one adds the isolation
    /// rules.
    pub sessions: Vec<PathBuf>,
    /// Whether mutating operations may be called (they change the person's canvas; each rule
    /// creates its own nodes and removes them).
    pub mutating: bool,
    /// How long the stalled-body probe waits for the server's 408 (`spec/protocol.md` §6.3: the
    /// reference's framework answers within 90 s of the request's start).
    pub stall_limit: Duration,
    /// The level checked (`spec/protocol.md` §10).
    pub level: Level,
    /// Only the rules whose id starts with one of these (all when empty).
    pub only: Vec<String>,
    /// Not the rules whose id starts with one of these.
    pub skip: Vec<String>,
}

impl Options {
    /// Checks the server of `session`, read-only, with the default limits.
    pub fn new(session: impl Into<PathBuf>) -> Options {
        Options {
            sessions: vec![session.into()],
            mutating: false,
            stall_limit: STALL_LIMIT,
            level: Level::Protocol,
            only: Vec::new(),
            skip: Vec::new(),
        }
    }
}

/// The default wait for the 408 of a stalled request: the 90 s bound of `spec/protocol.md` §6.3
/// (Node 20's `headersTimeout` 60 s plus its `connectionsCheckingInterval` 30 s) and 10 s of
/// margin for a loaded machine.
pub const STALL_LIMIT: Duration = Duration::from_secs(100);

/// Runs every rule against the server of `options.sessions[0]`.
pub async fn run(options: &Options) -> Report {
    let mut redactor = Redactor::default();
    let mut report = Report::new(Redactor::default());
    let Some(first_file) = options.sessions.first() else {
        report.fact("no session file given");
        return report;
    };
    let first = match discover(first_file, "<token>", &mut redactor) {
        Ok(target) => target,
        Err((id, problem)) => {
            *report.redactor_mut() = redactor;
            report.record(Outcome {
                id: id.to_owned(),
                section: "protocol.md §7.1".to_owned(),
                verdict: Verdict::Fail,
                rule: "the client finds the server from the session file".to_owned(),
                note: Some(problem),
                sent: None,
                received: None,
            });
            return report;
        }
    };
    let second = match options.sessions.get(1) {
        Some(file) => match discover(file, "<token 2>", &mut redactor) {
            Ok(target) => Some(target),
            Err((id, problem)) => {
                *report.redactor_mut() = redactor.clone();
                report.record(Outcome {
                    id: format!("{id}:second"),
                    section: "protocol.md §7.1".to_owned(),
                    verdict: Verdict::Fail,
                    rule: "the client finds the server from the second session file".to_owned(),
                    note: Some(problem),
                    sent: None,
                    received: None,
                });
                None
            }
        },
        None => None,
    };
    *report.redactor_mut() = redactor;
    report.fact(&format!(
        "server at 127.0.0.1:{} ({}), session {}",
        first.port,
        first.endpoint_file.display(),
        first.session_file.display()
    ));
    let mut ctx = Ctx {
        first,
        second,
        mutating: options.mutating,
        version: Version::V1_2,
        listed: Vec::new(),
        info: None,
        catalog: std::collections::BTreeMap::new(),
        report,
        seen: Vec::new(),
        level: options.level,
        only: options.only.clone(),
        skipped: options.skip.clone(),
    };
    ctx.pass(
        "discovery.session-file",
        "protocol.md §7.1",
        "the session file holds a token usable in a header",
    );
    ctx.pass(
        "discovery.endpoint",
        "protocol.md §7.1",
        "endpoint.json two levels up holds a valid loopback URL",
    );

    // The stalled request runs beside everything else: its answer takes 15 s (ours) to 90 s (the
    // reference's framework).
    let stall = crate::http::start_stall(&ctx, options.stall_limit);

    crate::files::check(&mut ctx);
    crate::info::check(&mut ctx).await;
    crate::http::check(&mut ctx).await;
    crate::catalog::read(&mut ctx).await;
    crate::validation::check(&mut ctx).await;
    crate::calls::check(&mut ctx).await;
    crate::isolation::check(&mut ctx).await;
    crate::http::finish_stall(&mut ctx, stall, options.stall_limit).await;
    crate::http::check_every_answer(&mut ctx);
    ctx.report.version = Some(ctx.version.name().to_owned());
    ctx.report
}

/// Discovery exactly as the client does it (`spec/protocol.md` §7.1 steps 1–3); the rule id
/// and the problem when it fails.
fn discover(
    session_file: &Path,
    label: &'static str,
    redactor: &mut Redactor,
) -> Result<Target, (&'static str, String)> {
    let session_file = discovery::absolute(session_file).map_err(|error| {
        ("discovery.session-file", format!("cannot resolve the session path: {error}"))
    })?;
    let token = discovery::read_token(&session_file)
        .map_err(|error| ("discovery.session-file", error.to_string()))?;
    redactor.add(&token);
    let endpoint_file = discovery::endpoint_file(&session_file)
        .map_err(|error| ("discovery.endpoint", error.to_string()))?;
    let port = discovery::read_endpoint(&endpoint_file)
        .map_err(|error| ("discovery.endpoint", format!("{}: {error}", endpoint_file.display())))?;
    let read = |path: &Path| -> Value {
        std::fs::read(path)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or(Value::Null)
    };
    let session = read(&session_file);
    let endpoint = read(&endpoint_file);
    let data_dir = endpoint_file.parent().map(Path::to_path_buf).unwrap_or_default();
    Ok(Target { session_file, endpoint_file, data_dir, token, port, session, endpoint, label })
}
