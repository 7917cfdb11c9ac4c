//! The context of a conformance run, shared by every rule group: the sessions it talks as
//! ([`Target`], [`Who`]), the protocol version the catalog shows ([`Version`]), the probes and
//! what they expect ([`Expect`], [`Called`]), and the verdicts recorded into the [`Report`].
//!
//! It imports no rule module: the rule modules import it, and `run` orchestrates them.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use termsprawl_protocol::{Operation, ParamKind, SessionToken, operations};

use crate::levels::{Level, level_of};
use crate::raw::{self, Header, Probe, Response};
use crate::report::{Outcome, Report, Verdict};
use crate::served::Served;
/// The wait for one ordinary probe.
const PROBE_LIMIT: Duration = Duration::from_secs(20);

/// The protocol version whose version-dependent rules are checked, as the server's catalog shows
/// it (`spec/protocol.md`, versions table; `docs/protocol-changelog.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Version {
    /// The first release: no agent messaging; method and path checked before auth (403).
    V1,
    /// 1.2: with agent messaging; auth before routing (404).
    V1_2,
    /// 1.3: 1.2 and the terminals an agent can wait on (`terminal_run`, `terminal_wait`,
    /// `terminal_kill`, cursors on `terminal_read`, `terminal_submit`, `terminal_input`).
    V1_3,
}

/// The operations 1.3 adds.
pub(crate) const TERMINAL_13: [&str; 3] = ["terminal_run", "terminal_wait", "terminal_kill"];

/// The operations 1.2 adds (agent messaging).
pub(crate) const MESSAGING: [&str; 4] = ["agent_cards", "agent_send", "agent_task", "agent_reply"];

impl Version {
    /// The version a catalog shows: `terminal_wait` listed is 1.3, any messaging operation 1.2,
    /// otherwise v1.
    pub(crate) fn of_catalog(listed: &[String]) -> Version {
        let lists = |name: &str| listed.iter().any(|listed| listed == name);
        if lists("terminal_wait") {
            Version::V1_3
        } else if MESSAGING.iter().any(|name| lists(name)) {
            Version::V1_2
        } else {
            Version::V1
        }
    }

    /// How the report names it: `v1`, `1.2` or `1.3`.
    pub fn name(self) -> &'static str {
        match self {
            Version::V1 => "v1",
            Version::V1_2 => "1.2",
            Version::V1_3 => "1.3",
        }
    }

    /// Whether the 1.3 terminal surface applies: cursors, run, wait and kill.
    pub fn has_wait(self) -> bool {
        self >= Version::V1_3
    }

    /// The operations the version lacks.
    pub(crate) fn lacks(self, operation: &str) -> bool {
        (self == Version::V1 && MESSAGING.contains(&operation))
            || (self < Version::V1_3 && TERMINAL_13.contains(&operation))
    }
}

/// A session the run talks as.
pub(crate) struct Target {
    /// The session file, absolute.
    pub(crate) session_file: PathBuf,
    /// `<grandparent>/endpoint.json`.
    pub(crate) endpoint_file: PathBuf,
    /// `D`, the endpoint file's directory.
    pub(crate) data_dir: PathBuf,
    pub(crate) token: SessionToken,
    pub(crate) port: u16,
    /// The session file's content.
    pub(crate) session: Value,
    /// `endpoint.json`'s content.
    pub(crate) endpoint: Value,
    /// How reports show its token.
    pub(crate) label: &'static str,
}

impl Target {
    pub(crate) fn node_id(&self) -> &str {
        self.session["nodeId"].as_str().unwrap_or_default()
    }

    pub(crate) fn project_id(&self) -> &str {
        self.session["projectId"].as_str().unwrap_or_default()
    }

    /// `authorization: Bearer <token>`.
    pub(crate) fn bearer(&self) -> Header {
        Header::secret(
            "authorization",
            format!("Bearer {}", self.token.expose()),
            &format!("Bearer {}", self.label),
        )
    }
}

/// Which session a probe uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Who {
    First,
    Second,
}

/// One answer seen, for the rules over every answer (content type, compact bodies).
pub(crate) struct Seen {
    pub(crate) probe: String,
    pub(crate) response: Response,
}

/// What a probe expects back.
#[derive(Debug, Clone)]
pub(crate) enum Expect {
    /// This status and exactly `{"ok":false,"error":<message>}`.
    Error(u16, String),
    /// This status and `{"ok":false,"error":<any string>}`.
    AnyError(u16),
    /// 200 and `{"ok":true,…}`.
    Success,
    /// Any answer but `{"ok":false,"error":<message>}`: the value passed the check that
    /// answers it (step 6 of §5, whose accepted values run the operation).
    NotError(String),
}

impl Expect {
    pub(crate) fn error(status: u16, message: impl Into<String>) -> Expect {
        Expect::Error(status, message.into())
    }

    /// Why `response` does not match, or `None`.
    pub(crate) fn mismatch(&self, response: &Response) -> Option<String> {
        if let Expect::NotError(message) = self {
            return response
                .json()
                .is_some_and(|value| is_failure(&value, Some(message)))
                .then(|| format!("refused with `{message}`"));
        }
        let status = match self {
            Expect::Error(status, _) | Expect::AnyError(status) => *status,
            Expect::Success | Expect::NotError(_) => 200,
        };
        if response.status != status {
            return Some(format!("expected HTTP {status}, got HTTP {}", response.status));
        }
        match self {
            Expect::Success => match response.json() {
                Some(Value::Object(object)) if object.get("ok") == Some(&Value::Bool(true)) => {
                    (object.keys().next().map(String::as_str) != Some("ok"))
                        .then(|| "`ok` is not the first member".to_owned())
                }
                _ => Some("expected {\"ok\":true,…}".to_owned()),
            },
            Expect::AnyError(_) => match response.json() {
                Some(value) if is_failure(&value, None) => None,
                _ => Some("expected {\"ok\":false,\"error\":<string>}".to_owned()),
            },
            Expect::Error(_, message) => match response.json() {
                Some(value) if is_failure(&value, Some(message)) => None,
                _ => Some(format!("expected {}", json!({"ok": false, "error": message}))),
            },
            Expect::NotError(_) => None,
        }
    }
}

/// `{"ok":false,"error":…}` with exactly these members in this order (and this message).
fn is_failure(value: &Value, message: Option<&str>) -> bool {
    let Value::Object(object) = value else { return false };
    let keys: Vec<&str> = object.keys().map(String::as_str).collect();
    keys == ["ok", "error"]
        && object["ok"] == Value::Bool(false)
        && object["error"].as_str().is_some_and(|error| message.is_none_or(|m| m == error))
}

/// The state of a run, shared by every rule group.
pub(crate) struct Ctx {
    pub(crate) first: Target,
    pub(crate) second: Option<Target>,
    pub(crate) mutating: bool,
    pub(crate) version: Version,
    /// `session_info.operations`, as the server listed them.
    pub(crate) listed: Vec<String>,
    /// The `session_info` value, once read.
    pub(crate) info: Option<Value>,
    /// The server's catalog of each probed operation, as its validator shows it
    /// ([`crate::catalog`]).
    pub(crate) catalog: BTreeMap<&'static str, Served>,
    pub(crate) report: Report,
    pub(crate) seen: Vec<Seen>,
    /// The level checked: a rule above it is skipped with the reason.
    pub(crate) level: Level,
    /// `--only` prefixes: when any, only the rules whose id starts with one are reported.
    pub(crate) only: Vec<String>,
    /// `--skip` prefixes: the rules whose id starts with one are not reported.
    pub(crate) skipped: Vec<String>,
}

impl Ctx {
    pub(crate) fn target(&self, who: Who) -> &Target {
        match (who, &self.second) {
            (Who::Second, Some(second)) => second,
            _ => &self.first,
        }
    }

    /// Sends a probe to the server of `who` and remembers the answer.
    pub(crate) async fn send(&mut self, who: Who, probe: &Probe) -> Result<Response, String> {
        let port = self.target(who).port;
        let answer = raw::exchange(port, probe, PROBE_LIMIT).await;
        if let Ok(response) = &answer {
            self.seen.push(Seen { probe: probe.describe(), response: response.clone() });
        }
        answer
    }

    /// `POST /call` with `Bearer <token>` of `who` and `body`.
    pub(crate) fn authed(&self, who: Who, body: impl Into<Vec<u8>>) -> Probe {
        Probe::post(body)
            .header(self.target(who).bearer())
            .header(Header::plain("content-type", "application/json"))
    }

    /// One tool call of `who`: `{"operation":…,"args":…}`.
    pub(crate) async fn call(&mut self, who: Who, operation: &str, args: &Value) -> Called {
        let body = json!({"operation": operation, "args": args}).to_string();
        let probe = self.authed(who, body);
        let answer = self.send(who, &probe).await;
        Called { probe, answer }
    }

    /// Whether `--only` and `--skip` keep the rule `id` in the report.
    pub(crate) fn selected(&self, id: &str) -> bool {
        (self.only.is_empty() || self.only.iter().any(|prefix| id.starts_with(prefix.as_str())))
            && !self.skipped.iter().any(|prefix| id.starts_with(prefix.as_str()))
    }

    /// Why the rule `id` is not checked at this run's level, or `None`.
    fn above_level(&self, id: &str) -> Option<String> {
        let level = level_of(id);
        (level > self.level).then(|| {
            format!(
                "a rule of level {} (spec/protocol.md §10); this run checks level {}: run with --level strict",
                level.name(),
                self.level.name()
            )
        })
    }

    /// Whether the rule `id` is to be checked now; when it is not, the skip is recorded (or, for
    /// a rule `--only`/`--skip` leave out, nothing).
    pub(crate) fn wanted(&mut self, id: &str, section: &str, rule: &str) -> bool {
        if !self.selected(id) {
            return false;
        }
        if let Some(reason) = self.above_level(id) {
            self.skip(id, section, rule, &reason);
            return false;
        }
        true
    }

    /// Sends every probe; PASS when each matches its expectation, else FAIL with the first that
    /// does not.
    pub(crate) async fn expect(
        &mut self,
        id: &str,
        section: &str,
        rule: &str,
        probes: Vec<(Who, Probe, Expect)>,
    ) {
        if !self.wanted(id, section, rule) {
            return;
        }
        for (who, probe, expect) in probes {
            let answer = self.send(who, &probe).await;
            let problem = match &answer {
                Ok(response) => expect.mismatch(response),
                Err(error) => Some(error.clone()),
            };
            if let Some(problem) = problem {
                let received = answer.map_or_else(|error| error, |response| response.describe());
                self.fail_with(id, section, rule, &problem, &probe.describe(), &received);
                return;
            }
        }
        self.pass(id, section, rule);
    }

    pub(crate) fn pass(&mut self, id: &str, section: &str, rule: &str) {
        self.record(id, section, rule, Verdict::Pass, None, None, None);
    }

    pub(crate) fn fail(&mut self, id: &str, section: &str, rule: &str, note: &str) {
        self.record(id, section, rule, Verdict::Fail, Some(note), None, None);
    }

    pub(crate) fn fail_with(
        &mut self,
        id: &str,
        section: &str,
        rule: &str,
        note: &str,
        sent: &str,
        received: &str,
    ) {
        self.record(id, section, rule, Verdict::Fail, Some(note), Some(sent), Some(received));
    }

    pub(crate) fn skip(&mut self, id: &str, section: &str, rule: &str, note: &str) {
        self.record(id, section, rule, Verdict::Skip, Some(note), None, None);
    }

    /// PASS when `problem` is `None`, else FAIL with it.
    pub(crate) fn verdict(&mut self, id: &str, section: &str, rule: &str, problem: Option<String>) {
        match problem {
            None => self.pass(id, section, rule),
            Some(problem) => self.fail(id, section, rule, &problem),
        }
    }

    #[expect(clippy::too_many_arguments, reason = "one outcome's fields")]
    fn record(
        &mut self,
        id: &str,
        section: &str,
        rule: &str,
        verdict: Verdict,
        note: Option<&str>,
        sent: Option<&str>,
        received: Option<&str>,
    ) {
        if !self.selected(id) {
            return;
        }
        let (verdict, note, sent, received) = match self.above_level(id) {
            Some(reason) => (Verdict::Skip, Some(reason), None, None),
            None => (verdict, note.map(str::to_owned), sent, received),
        };
        self.report.record(Outcome {
            id: id.to_owned(),
            section: section.to_owned(),
            verdict,
            rule: rule.to_owned(),
            note,
            sent: sent.map(str::to_owned),
            received: received.map(str::to_owned),
        });
    }

    /// The operations of the table the server lists, in table order, without those the version
    /// lacks.
    pub(crate) fn probed(&self) -> Vec<&'static Operation> {
        operations()
            .iter()
            .filter(|operation| self.listed.iter().any(|name| name == operation.name()))
            .filter(|operation| !self.version.lacks(operation.name()))
            .collect()
    }

    pub(crate) fn lists(&self, operation: &str) -> bool {
        self.listed.iter().any(|name| name == operation)
    }

    /// The server's catalog of `operation` (the table's, with every member, when it was not
    /// read: an operation not probed).
    pub(crate) fn served(&self, operation: &Operation) -> Served {
        self.catalog.get(operation.name()).cloned().unwrap_or_else(|| Served {
            required: operation
                .params()
                .iter()
                .filter(|param| param.required())
                .map(|param| param.name().to_owned())
                .collect(),
            ..Served::default()
        })
    }

    /// The enum values of `operation.param` the server's catalog accepts.
    pub(crate) fn enum_values(&self, operation: &Operation, param: &str) -> Vec<String> {
        let served = self.served(operation);
        let table = match operation.param(param).map(termsprawl_protocol::Param::kind) {
            Some(ParamKind::Enum(values)) => values.as_slice(),
            _ => &[],
        };
        served.values.get(param).map_or(table, Vec::as_slice).to_vec()
    }

    /// Whether the server lists `operation` and its catalog has `member` (with `value`, for an
    /// enum member, when given).
    pub(crate) fn has(&self, operation: &str, member: &str, value: Option<&str>) -> bool {
        self.catalog.get(operation).is_some_and(|served| match value {
            Some(value) => served.has_value(member, value),
            None => served.has(member),
        })
    }
}

/// A tool call and its answer.
pub(crate) struct Called {
    pub(crate) probe: Probe,
    pub(crate) answer: Result<Response, String>,
}

impl Called {
    /// The value of a 200 `{"ok":true,"value":…}` (`Value::Null` when absent), or why not.
    pub(crate) fn value(&self) -> Result<Value, String> {
        let response = self.answer.as_ref().map_err(Clone::clone)?;
        match response.json() {
            Some(Value::Object(mut object)) if object.get("ok") == Some(&Value::Bool(true)) => {
                if response.status == 200 {
                    Ok(object.remove("value").unwrap_or(Value::Null))
                } else {
                    Err(format!("a success with HTTP {} (expected 200)", response.status))
                }
            }
            Some(Value::Object(object)) if object.get("ok") == Some(&Value::Bool(false)) => {
                Err(format!(
                    "the operation failed: {}",
                    object.get("error").map_or_else(String::new, Value::to_string)
                ))
            }
            _ => Err("the answer is not a tool result".to_owned()),
        }
    }

    /// Whether the answer is a failure (`ok:false` with a string error) with HTTP 400.
    pub(crate) fn failed(&self) -> bool {
        self.answer
            .as_ref()
            .is_ok_and(|response| Expect::AnyError(400).mismatch(response).is_none())
    }

    pub(crate) fn sent(&self) -> String {
        self.probe.describe()
    }

    pub(crate) fn received(&self) -> String {
        self.answer.as_ref().map_or_else(Clone::clone, Response::describe)
    }
}
