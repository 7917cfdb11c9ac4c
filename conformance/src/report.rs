//! The report: one [`Outcome`] per rule, rendered as text lines or as JSON, with every secret
//! taken out.
//!
//! Probes describe what they sent without the token (see `raw::Header`), and every string that
//! goes into a report passes through the [`Redactor`] once more when it is recorded: a response
//! may quote a terminal screen on which somebody printed a session file.

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::{Value, json};
use termsprawl_protocol::SessionToken;

use crate::levels::{Level, level_of};

/// What became of one rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Verdict {
    /// The server keeps the rule.
    Pass,
    /// The server breaks the rule.
    Fail,
    /// The rule was not checked; the note says why.
    Skip,
}

impl Verdict {
    fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::Skip => "SKIP",
        }
    }
}

/// One rule's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// The rule id, stable across runs: `group.check[:subject]`.
    pub id: String,
    /// The section of the spec the rule comes from (`protocol.md §6.3`).
    pub section: String,
    /// The verdict.
    pub verdict: Verdict,
    /// What the rule says.
    pub rule: String,
    /// Why it failed or was skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// On failure: what was sent (the token described, never included).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sent: Option<String>,
    /// On failure: what came back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub received: Option<String>,
}

/// Replaces every run of 12 or more characters of a secret by `<redacted>`.
#[derive(Clone, Default)]
pub struct Redactor {
    secrets: Vec<String>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} secrets)", self.secrets.len())
    }
}

/// The shortest piece of a secret that is taken out wherever it appears.
const WINDOW: usize = 12;

impl Redactor {
    /// Adds a token.
    pub fn add(&mut self, token: &SessionToken) {
        let secret = token.expose();
        if secret.len() >= WINDOW && !self.secrets.iter().any(|known| known == secret) {
            self.secrets.push(secret.to_owned());
        }
    }

    /// `text` without any piece of a secret.
    pub fn clean(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for secret in &self.secrets {
            let bytes = secret.as_bytes();
            let mut start = 0;
            while start + WINDOW <= bytes.len() {
                let piece = &secret[start..start + WINDOW];
                if text.contains(piece) {
                    text = text.replace(piece, "<redacted>");
                }
                start += 1;
            }
        }
        text
    }
}

/// Every rule's outcome, and what the run found out about the server.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// The outcomes, in the order the rules ran.
    pub outcomes: Vec<Outcome>,
    /// Lines about the server (endpoint, version shown by its catalog), printed before the rules.
    pub facts: Vec<String>,
    /// The protocol version whose version-dependent rules were checked: `v1`, `1.2` or `1.3`.
    pub version: Option<String>,
    redactor: Redactor,
}

impl Report {
    pub(crate) fn new(redactor: Redactor) -> Report {
        Report { redactor, ..Report::default() }
    }

    pub(crate) fn redactor_mut(&mut self) -> &mut Redactor {
        &mut self.redactor
    }

    pub(crate) fn fact(&mut self, fact: &str) {
        let fact = self.redactor.clean(fact);
        self.facts.push(fact);
    }

    pub(crate) fn record(&mut self, mut outcome: Outcome) {
        let clean = |redactor: &Redactor, text: Option<String>| {
            text.map(|text| one_line(&redactor.clean(&text)))
        };
        outcome.note = clean(&self.redactor, outcome.note);
        outcome.sent = clean(&self.redactor, outcome.sent);
        outcome.received = clean(&self.redactor, outcome.received);
        self.outcomes.push(outcome);
    }

    /// How many rules have `verdict`.
    pub fn count(&self, verdict: Verdict) -> usize {
        self.outcomes.iter().filter(|outcome| outcome.verdict == verdict).count()
    }

    /// Whether no rule failed.
    pub fn ok(&self) -> bool {
        self.count(Verdict::Fail) == 0
    }

    /// The ids of the failed rules, in order.
    pub fn failed_ids(&self) -> Vec<&str> {
        self.outcomes
            .iter()
            .filter(|outcome| outcome.verdict == Verdict::Fail)
            .map(|outcome| outcome.id.as_str())
            .collect()
    }

    /// `N passed, N failed, N skipped`.
    pub fn summary(&self) -> String {
        format!(
            "{} passed, {} failed, {} skipped",
            self.count(Verdict::Pass),
            self.count(Verdict::Fail),
            self.count(Verdict::Skip)
        )
    }

    /// The text report: the facts, one line per rule, the summary line.
    pub fn to_text(&self) -> String {
        let mut text = String::new();
        for fact in &self.facts {
            let _ = writeln!(text, "# {fact}");
        }
        for outcome in &self.outcomes {
            let _ = write!(
                text,
                "{} {} [{}] {}",
                outcome.verdict.word(),
                outcome.id,
                outcome.section,
                outcome.rule
            );
            if level_of(&outcome.id) == Level::Strict {
                text.push_str(" (strict)");
            }
            if let Some(note) = &outcome.note {
                let _ = write!(text, ": {note}");
            }
            if let Some(sent) = &outcome.sent {
                let _ = write!(text, "; sent: {sent}");
            }
            if let Some(received) = &outcome.received {
                let _ = write!(text, "; got: {received}");
            }
            text.push('\n');
        }
        let _ = writeln!(text, "{}", self.summary());
        self.redactor.clean(&text)
    }

    /// The JSON report: `{"version","facts","rules":[…],"passed","failed","skipped"}`; each rule
    /// `{"id","section","verdict","rule","note"?,"sent"?,"received"?,"level"}`.
    pub fn to_json(&self) -> Value {
        let rules: Vec<Value> = self
            .outcomes
            .iter()
            .map(|outcome| {
                let mut rule = json!(outcome);
                if let Value::Object(members) = &mut rule {
                    members.insert("level".to_owned(), json!(level_of(&outcome.id)));
                }
                rule
            })
            .collect();
        let value = json!({
            "version": self.version,
            "facts": self.facts,
            "rules": rules,
            "passed": self.count(Verdict::Pass),
            "failed": self.count(Verdict::Fail),
            "skipped": self.count(Verdict::Skip),
        });
        // Once more through the redactor, as text, so nothing can slip through a member.
        let text = self.redactor.clean(&value.to_string());
        serde_json::from_str(&text)
            .unwrap_or_else(|_| json!({"error": "the report could not be redacted"}))
    }
}

/// One line of at most [`SHOWN`] characters.
fn one_line(text: &str) -> String {
    let mut line: String =
        text.chars().take(SHOWN).map(|c| if c.is_control() { ' ' } else { c }).collect();
    if text.chars().count() > SHOWN {
        line.push('…');
    }
    line
}

/// The most characters of a note, a request or an answer a report shows.
const SHOWN: usize = 400;

#[cfg(test)]
mod tests;
