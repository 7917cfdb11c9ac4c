//! The accounting of the soak: how each call ended ([`Outcome`], from a one-shot process or an
//! MCP answer), the client-side attempts and `ok` answers per `(operation, args)` key, and the
//! comparison with the server's execution log ([`Ledger::reconcile`]).
//!
//! The rules: a call ends `ok`, or with the client contract's connection-unavailable error
//! (`spec/protocol.md` §7.2), or it is a failure of the run. For every key, the server's
//! executions must be at most the client's attempts (else a call ran twice, or ran without being
//! sent) and at least the `ok` answers (else an acknowledged call was lost).

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use serde_json::{Value, json};

/// The client contract's failure text is `PREFIX <reason> SUFFIX` (`spec/protocol.md` §7.2); the
/// prefix is the transport's own.
pub use termsprawl_transport::UNAVAILABLE_PREFIX;
/// See [`UNAVAILABLE_PREFIX`].
pub const UNAVAILABLE_SUFFIX: &str =
    ". Check that termsprawl is running. Mutations are not automatically retried.";

/// How one call ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// `ok:true`, with the value (`Null` when there was none).
    Ok(Value),
    /// The clean connection-unavailable error; the reason is kept.
    Unavailable(String),
    /// `ok:false` with another error: the server refused or failed the operation.
    ToolError(String),
    /// Anything else: a crash, a hang, a malformed answer. The kind is a short fixed label
    /// (counted), the detail says what was seen.
    Broken {
        /// A short label, such as `killed by signal 6` or `no answer within 60 s`.
        kind: String,
        /// What was seen.
        detail: String,
    },
}

impl Outcome {
    fn broken(kind: impl Into<String>, detail: impl Into<String>) -> Outcome {
        Outcome::Broken { kind: kind.into(), detail: detail.into() }
    }

    /// `ok:false` with `error`: unavailable when `error` is exactly what the client contract
    /// makes of some reason, else a tool error.
    pub fn from_error(error: &str) -> Outcome {
        match unavailable_reason(error) {
            Some(reason) => Outcome::Unavailable(reason.to_owned()),
            None => Outcome::ToolError(error.to_owned()),
        }
    }

    /// A `ToolResult` object (`{"ok":…}`) as an outcome.
    pub fn from_result(result: &Value) -> Outcome {
        match (result.get("ok"), result.get("error")) {
            (Some(Value::Bool(true)), _) => {
                Outcome::Ok(result.get("value").cloned().unwrap_or(Value::Null))
            }
            (Some(Value::Bool(false)), Some(Value::String(error))) => Outcome::from_error(error),
            _ => Outcome::broken("not a tool result", result.to_string()),
        }
    }
}

/// The reason inside a connection-unavailable error, when `error` is exactly
/// [`termsprawl_transport::connection_unavailable`] of it.
pub fn unavailable_reason(error: &str) -> Option<&str> {
    let reason = error.strip_prefix(UNAVAILABLE_PREFIX)?.strip_suffix(UNAVAILABLE_SUFFIX)?;
    let remade = termsprawl_transport::connection_unavailable(reason);
    match remade {
        termsprawl_protocol::ToolResult::Failure { error: remade } if remade == error => {
            Some(reason)
        }
        _ => None,
    }
}

/// The two ways `termsprawlctl` is called one-shot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// `termsprawlctl --session FILE call OP JSON`: the `ToolResult` on stdout, exit 0 or 1.
    Call,
    /// `termsprawlctl --session FILE OP JSON`: the value on stdout (exit 0) or `Error: <error>`
    /// on stderr (exit 1).
    Direct,
}

/// How a one-shot `termsprawlctl` ended: `code` is `None` when a signal ended it.
pub fn classify_oneshot(
    form: Form,
    code: Option<i32>,
    signal: Option<i32>,
    stdout: &[u8],
    stderr: &[u8],
) -> Outcome {
    let out = String::from_utf8_lossy(stdout);
    let err = String::from_utf8_lossy(stderr);
    let err = without_session_hint(&err);
    let Some(code) = code else {
        return Outcome::broken(
            format!("killed by signal {}", signal.unwrap_or(0)),
            format!("stdout {out:?} stderr {err:?}"),
        );
    };
    match (form, code) {
        (Form::Call, 0 | 1) => {
            if !err.is_empty() {
                return Outcome::broken("output on stderr", format!("exit {code}: {err:?}"));
            }
            let Ok(result) = serde_json::from_str::<Value>(&out) else {
                return Outcome::broken("stdout is not JSON", format!("exit {code}: {out:?}"));
            };
            let outcome = Outcome::from_result(&result);
            let consistent = matches!(
                (&outcome, code),
                (Outcome::Ok(_), 0) | (Outcome::Unavailable(_) | Outcome::ToolError(_), 1)
            );
            if consistent || matches!(outcome, Outcome::Broken { .. }) {
                outcome
            } else {
                Outcome::broken(
                    "exit status disagrees with the result",
                    format!("exit {code}: {out}"),
                )
            }
        }
        (Form::Direct, 0) => {
            if !err.is_empty() {
                return Outcome::broken("output on stderr", format!("exit 0: {err:?}"));
            }
            if out.trim().is_empty() {
                return Outcome::Ok(Value::Null);
            }
            match serde_json::from_str::<Value>(&out) {
                Ok(value) => Outcome::Ok(value),
                // A string value is printed as it is.
                Err(_) => Outcome::Ok(Value::String(out.into_owned())),
            }
        }
        (Form::Direct, 1) => {
            if !out.is_empty() {
                return Outcome::broken("output on stdout after a failure", format!("{out:?}"));
            }
            match err.strip_prefix("Error: ").and_then(|rest| rest.strip_suffix('\n')) {
                Some(error) if !error.contains('\n') => Outcome::from_error(error),
                _ => Outcome::broken("stderr is not one Error line", format!("{err:?}")),
            }
        }
        (_, code) => {
            Outcome::broken(format!("exit status {code}"), format!("stdout {out:?} stderr {err:?}"))
        }
    }
}

/// `stderr` without the one line `termsprawlctl` adds when its session file is gone
/// (`hint: the session file <path> does not exist: …`, after the contract's output).
pub fn without_session_hint(stderr: &str) -> &str {
    let body = stderr.strip_suffix('\n').unwrap_or(stderr);
    let (before, last) = match body.rsplit_once('\n') {
        Some((before, last)) => (Some(before), last),
        None => (None, body),
    };
    let hint = last
        .strip_prefix("hint: the session file ")
        .is_some_and(|rest| rest.contains(" does not exist: "));
    match (hint, before) {
        (true, Some(before)) => &stderr[..=before.len()],
        (true, None) => "",
        (false, _) => stderr,
    }
}

/// The outcome of one MCP answer line to a `tools/call` (already matched by id).
pub fn classify_mcp(answer: &Value) -> Outcome {
    if let Some(error) = answer.get("error") {
        return Outcome::broken("JSON-RPC error", error.to_string());
    }
    let result = &answer["result"];
    let Some(is_error) = result["isError"].as_bool() else {
        return Outcome::broken("no isError", answer.to_string());
    };
    let Some(text) = result.pointer("/content/0/text").and_then(Value::as_str) else {
        return Outcome::broken("no text content", answer.to_string());
    };
    let Ok(tool_result) = serde_json::from_str::<Value>(text) else {
        return Outcome::broken("text is not a tool result", text.to_owned());
    };
    let outcome = Outcome::from_result(&tool_result);
    match (&outcome, is_error) {
        (Outcome::Ok(_), false)
        | (Outcome::Unavailable(_) | Outcome::ToolError(_), true)
        | (Outcome::Broken { .. }, _) => outcome,
        _ => Outcome::broken("isError disagrees with the result", answer.to_string()),
    }
}

/// The compact `{"operation":…,"args":…}` that identifies a call, the same on both sides.
pub fn key(operation: &str, args: &Value) -> String {
    json!({"operation": operation, "args": args}).to_string()
}

/// A line of the server's execution log as a [`key`]; `None` for a line that is not one.
pub fn exec_key(line: &str) -> Option<String> {
    let value: Value = serde_json::from_str(line).ok()?;
    let operation = value.get("operation")?.as_str()?;
    let args = value.get("args")?;
    (value.as_object()?.len() == 2).then(|| key(operation, args))
}

/// How a call was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Path {
    /// A `termsprawlctl` process per call.
    OneShot,
    /// A `tools/call` through a long-lived `termsprawlctl mcp` bridge.
    Mcp,
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Path::OneShot => "one-shot",
            Path::Mcp => "MCP",
        })
    }
}

/// The operation families of the load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    /// `terminal_*`.
    Terminal,
    /// Canvas mutations.
    Canvas,
    /// `agent_send`, `agent_task`, `agent_reply`.
    Messaging,
    /// `canvas_list`, `session_info`, `agent_status`.
    Read,
}

impl Family {
    /// Every family, in table order.
    pub const ALL: [Family; 4] =
        [Family::Terminal, Family::Canvas, Family::Messaging, Family::Read];

    /// The family of an operation name.
    pub fn of(operation: &str) -> Family {
        match operation {
            op if op.starts_with("terminal_") => Family::Terminal,
            op if op.starts_with("agent_") && op != "agent_status" => Family::Messaging,
            "canvas_list" | "session_info" | "agent_status" => Family::Read,
            _ => Family::Canvas,
        }
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Family::Terminal => "terminal",
            Family::Canvas => "canvas",
            Family::Messaging => "messaging",
            Family::Read => "read",
        })
    }
}

/// Calls, answers and failures of one path and family.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Calls made.
    pub calls: u64,
    /// `ok` answers.
    pub ok: u64,
    /// Connection-unavailable answers.
    pub unavailable: u64,
    /// Tool errors the spec makes unavoidable, classified and explained.
    pub expected_errors: u64,
    /// Everything else.
    pub failures: u64,
}

/// Attempts and `ok` answers of one key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KeyCount {
    /// Calls sent (whatever their outcome).
    pub attempts: u64,
    /// `ok` answers.
    pub ok: u64,
}

/// Everything the clients saw.
#[derive(Debug, Default)]
pub struct Ledger {
    keys: HashMap<String, KeyCount>,
    tallies: BTreeMap<(Path, Family), Tally>,
    /// Failures by kind.
    pub failures: BTreeMap<String, u64>,
    /// Classified, unavoidable tool errors by explanation.
    pub expected: BTreeMap<String, u64>,
    /// The first failures in full, for the report.
    pub examples: Vec<String>,
}

/// How many failures are kept in full.
const EXAMPLES: usize = 20;

/// The comparison of the execution log with the ledger.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reconciled {
    /// Execution-log lines.
    pub executions: u64,
    /// Executions of a key that was attempted, up to its attempts.
    pub matched: u64,
    /// Executions beyond a key's attempts (a call ran twice, or ran unsent).
    pub duplicates: u64,
    /// `ok` answers beyond a key's executions (an acknowledged call that never ran).
    pub lost: u64,
    /// Executions beyond the `ok` answers, within the attempts: calls that ran although the
    /// client saw the connection fail (allowed: `Mutations are not automatically retried`).
    pub ran_unacknowledged: u64,
    /// Lines that are not `{"operation","args"}`.
    pub malformed: u64,
    /// One line per offending key (at most 20).
    pub problems: Vec<String>,
}

impl Reconciled {
    /// No duplicate, nothing lost, no malformed line.
    pub fn passes(&self) -> bool {
        self.duplicates == 0 && self.lost == 0 && self.malformed == 0
    }
}

impl Ledger {
    /// A call of `operation` with `args` is about to be sent.
    pub fn attempt(&mut self, path: Path, operation: &str, args: &Value) {
        self.keys.entry(key(operation, args)).or_default().attempts += 1;
        self.tallies.entry((path, Family::of(operation))).or_default().calls += 1;
    }

    /// How that call ended. A tool error is a failure unless `expected` explains it.
    pub fn outcome(
        &mut self,
        path: Path,
        operation: &str,
        args: &Value,
        outcome: &Outcome,
        expected: Option<&str>,
    ) {
        let tally = self.tallies.entry((path, Family::of(operation))).or_default();
        match outcome {
            Outcome::Ok(_) => {
                tally.ok += 1;
                self.keys.entry(key(operation, args)).or_default().ok += 1;
            }
            Outcome::Unavailable(_) => tally.unavailable += 1,
            Outcome::ToolError(error) => {
                if let Some(why) = expected {
                    tally.expected_errors += 1;
                    *self.expected.entry(format!("{operation}: {why}")).or_default() += 1;
                } else {
                    tally.failures += 1;
                    self.fail(
                        &format!("tool error from {operation}"),
                        &format!("{path} {}: {error}", key(operation, args)),
                    );
                }
            }
            Outcome::Broken { kind, detail } => {
                tally.failures += 1;
                self.fail(kind, &format!("{path} {}: {detail}", key(operation, args)));
            }
        }
    }

    /// An `ok` answer whose task had failed for a reason `why` explains (counted with the
    /// expected errors).
    pub fn expect_finished_task(&mut self, why: &str) {
        *self.expected.entry(format!("agent_send (task failed): {why}")).or_default() += 1;
    }

    /// A failure of the run that is not one call's outcome (a broken check).
    pub fn fail(&mut self, kind: &str, detail: &str) {
        *self.failures.entry(kind.to_owned()).or_default() += 1;
        if self.examples.len() < EXAMPLES {
            self.examples.push(format!("{kind}: {detail}"));
        }
    }

    /// The tally of one path and family.
    pub fn tally(&self, path: Path, family: Family) -> Tally {
        self.tallies.get(&(path, family)).copied().unwrap_or_default()
    }

    /// The sum of every tally of `path` (or of every path).
    pub fn total(&self, path: Option<Path>) -> Tally {
        self.tallies.iter().filter(|((p, _), _)| path.is_none_or(|path| *p == path)).fold(
            Tally::default(),
            |sum, (_, tally)| Tally {
                calls: sum.calls + tally.calls,
                ok: sum.ok + tally.ok,
                unavailable: sum.unavailable + tally.unavailable,
                expected_errors: sum.expected_errors + tally.expected_errors,
                failures: sum.failures + tally.failures,
            },
        )
    }

    /// Attempts and `ok` answers of one key.
    pub fn key_count(&self, key: &str) -> KeyCount {
        self.keys.get(key).copied().unwrap_or_default()
    }

    /// Compares the server's execution log (its whole text) with the attempts and answers.
    pub fn reconcile(&self, exec_log: &str) -> Reconciled {
        let mut reconciled = Reconciled::default();
        let mut executions: HashMap<String, u64> = HashMap::new();
        for line in exec_log.lines() {
            reconciled.executions += 1;
            if let Some(key) = exec_key(line) {
                *executions.entry(key).or_default() += 1;
            } else {
                reconciled.malformed += 1;
                push_problem(&mut reconciled.problems, format!("malformed line {line:?}"));
            }
        }
        let mut keys: Vec<&String> = executions.keys().chain(self.keys.keys()).collect();
        keys.sort();
        keys.dedup();
        for key in keys {
            let ran = executions.get(key).copied().unwrap_or(0);
            let count = self.key_count(key);
            reconciled.matched += ran.min(count.attempts);
            reconciled.ran_unacknowledged += ran.min(count.attempts).saturating_sub(count.ok);
            if ran > count.attempts {
                reconciled.duplicates += ran - count.attempts;
                push_problem(
                    &mut reconciled.problems,
                    format!("{key}: executed {ran} times, attempted {}", count.attempts),
                );
            }
            if count.ok > ran {
                reconciled.lost += count.ok - ran;
                push_problem(
                    &mut reconciled.problems,
                    format!("{key}: answered ok {} times, executed {ran}", count.ok),
                );
            }
        }
        reconciled
    }
}

fn push_problem(problems: &mut Vec<String>, problem: String) {
    if problems.len() < EXAMPLES {
        problems.push(problem);
    }
}
