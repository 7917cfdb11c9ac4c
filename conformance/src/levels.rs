//! Conformance levels (`spec/protocol.md` §10): which rules are `protocol` (every server, the
//! desktop app included) and which are `strict` (ours only: the rules marked *(strict)* in the
//! spec and the rules a server declares in `session_info.rules`). One table, [`STRICT`]; every
//! rule id not matched by it is level `protocol`.

use std::fmt::Write as _;

use serde::Serialize;

/// A conformance level; `strict` includes `protocol`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// What the protocol requires of every server (the default).
    Protocol,
    /// `protocol` and the rules only our servers must meet.
    Strict,
}

impl Level {
    /// `protocol` or `strict`.
    pub fn name(self) -> &'static str {
        match self {
            Level::Protocol => "protocol",
            Level::Strict => "strict",
        }
    }
}

/// The rule id prefixes of level `strict`, and why each is ours only.
pub const STRICT: &[(&str, &str)] = &[
    (
        "validate.prototype-name:",
        "spec/protocol.md §5 (strict): the reference answers a member named like a JavaScript prototype member `Invalid <name>`",
    ),
    (
        "validate.item-nul:",
        "spec/protocol.md §5 (strict): the reference does not check array items for U+0000",
    ),
    (
        "body.stalled-prompt",
        "spec/protocol.md §6.3 (strict): our servers answer a stalled request 408 as the 15 s receive limit passes; the reference's framework may take up to 90 s",
    ),
    (
        "notify.line-format",
        "spec/protocol.md §10: the wording of terminal_run's notice line is our servers' (the issue makes its members contract, not the words around them)",
    ),
    (
        "links.",
        "spec/protocol.md §10: the rules a server declares in session_info.rules (agent-link-isolation) are checked at level strict",
    ),
];

/// The level of the rule `id`.
pub fn level_of(id: &str) -> Level {
    if STRICT.iter().any(|(prefix, _)| id.starts_with(prefix)) {
        Level::Strict
    } else {
        Level::Protocol
    }
}

/// The `--list` text: every rule group, its level, and why the strict ones are strict.
pub fn listing() -> String {
    let mut text = String::from(
        "Every rule is level `protocol` except those whose id starts with one of these (level `strict`):\n",
    );
    for (prefix, why) in STRICT {
        let _ = writeln!(text, "strict   {prefix}*  {why}");
    }
    text.push_str(
        "protocol every other rule: discovery.*, files.*, session-info.*, catalog.*, bind.*, origin.*, auth.*, order.*, route.*, body.* (body.stalled within 90 s), parse.*, status.*, http.*, validate.*, result.*, mutate.*, isolation.*, wait.*, survey.*, notify.one-notice\n",
    );
    text.push_str("A report shows each rule's level: `\"level\"` in --json, `(strict)` after a strict rule's text.\n");
    text
}
