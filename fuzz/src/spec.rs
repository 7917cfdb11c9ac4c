//! The operation table of `spec/protocol.md` §4.3 with the 1.3.0 additions of
//! `docs/protocol-changelog.md` (`terminal_run`, `terminal_wait`, `terminal_kill`, `since`) and the
//! 1.4.0 ones (`terminal_input` `keys` with `text` optional, `terminal_read` `view`,
//! `terminal_wait` `until: change`, `terminal_run` `keep`, and their rules) and the 1.5.0 ones of
//! issues 37 and 38 (`terminal_list`, `terminal_search`, `terminal_wait` `anyOf`, `regex` and
//! `until: input`, `terminal_run` `notify`, and their rules), and the read-only rule of §4.2,
//! typed in again from the spec (not read from `termsprawl_protocol`), and the validation rules of
//! §5 written straight from the spec.
//!
//! One rule is not written again: whether a pattern is in the dialect of §5.1 (`regex: true`).
//! The oracle asks `termsprawl_protocol::pattern::check` for that verdict and its reason, and
//! checks everything around it (when a pattern is checked, which member is reported, the message's
//! shape, `item <index>` of `anyOf`); the dialect itself is held to the `regex` crate and to
//! ECMAScript's `RegExp` by the protocol crate's and the TypeScript bindings' tests.

use serde_json::Value;

/// The type of one argument, as the table's "arguments" column writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `string`.
    String,
    /// `number`.
    Number,
    /// A `number` that is a terminal cursor (`since`, protocol 1.3.0): the magnitude limit is
    /// 2^53 − 1 instead of 1 000 000.
    Cursor,
    /// `string[]`.
    Strings,
    /// `boolean` (protocol 1.4.0).
    Boolean,
    /// `string[]` of at most 256 keys (`terminal_input`'s `keys`, protocol 1.4.0).
    Keys,
    /// `string[]` of at most 16 texts (`terminal_wait`'s `anyOf`, protocol 1.5.0).
    Texts,
    /// `enum a|b|…`.
    Enum(&'static [&'static str]),
}

/// One argument: name, type, whether it is starred (required).
pub type Arg = (&'static str, Kind, bool);

const NODE: Arg = ("nodeId", Kind::String, true);
/// The guide topics, in the order of the `guide_read` enum.
pub const TOPICS: &[&str] =
    &["overview", "browser", "terminal", "canvas", "context", "agents", "artifacts"];
const AGENTS: &[&str] = &["claude", "codex", "gemini", "grok", "openclaude", "opencode", "custom"];

/// The 37 operations of protocol 1.5.0 in table order, each with its arguments in table order.
pub const OPERATIONS: &[(&str, &[Arg])] = &[
    ("session_info", &[]),
    ("guide_read", &[("topic", Kind::Enum(TOPICS), true)]),
    ("canvas_list", &[]),
    ("canvas_select", &[("nodeIds", Kind::Strings, true)]),
    ("canvas_move", &[NODE, ("x", Kind::Number, true), ("y", Kind::Number, true)]),
    ("canvas_resize", &[NODE, ("width", Kind::Number, true), ("height", Kind::Number, true)]),
    ("canvas_group", &[("nodeIds", Kind::Strings, true), ("title", Kind::String, false)]),
    ("sticky_open", &[("text", Kind::String, true)]),
    ("browser_open", &[("url", Kind::String, true)]),
    ("browser_list", &[]),
    ("browser_claim", &[NODE]),
    ("browser_transfer", &[NODE, ("agentNodeId", Kind::String, true)]),
    ("browser_navigate", &[NODE, ("url", Kind::String, true)]),
    ("browser_inspect", &[NODE]),
    ("browser_click", &[NODE, ("selector", Kind::String, true)]),
    ("browser_type", &[NODE, ("selector", Kind::String, true), ("text", Kind::String, true)]),
    ("browser_screenshot", &[NODE]),
    ("terminal_open", &[("title", Kind::String, false)]),
    (
        "terminal_run",
        &[
            ("command", Kind::String, true),
            ("title", Kind::String, false),
            ("cwd", Kind::String, false),
            ("env", Kind::Strings, false),
            ("timeoutMs", Kind::Number, false),
            ("keep", Kind::Boolean, false),
            ("notify", Kind::Boolean, false),
        ],
    ),
    ("terminal_list", &[]),
    (
        "terminal_read",
        &[
            NODE,
            ("maxChars", Kind::Number, false),
            ("since", Kind::Cursor, false),
            ("view", Kind::Enum(&["stream", "screen"]), false),
        ],
    ),
    (
        "terminal_search",
        &[
            ("pattern", Kind::String, true),
            ("regex", Kind::Boolean, false),
            ("nodeId", Kind::String, false),
            ("since", Kind::Cursor, false),
            ("limit", Kind::Number, false),
            ("context", Kind::Number, false),
        ],
    ),
    (
        "terminal_wait",
        &[
            NODE,
            ("until", Kind::Enum(&["exit", "text", "quiet", "change", "input"]), true),
            ("text", Kind::String, false),
            ("anyOf", Kind::Texts, false),
            ("regex", Kind::Boolean, false),
            ("since", Kind::Cursor, false),
            ("quietMs", Kind::Number, false),
            ("timeoutMs", Kind::Number, false),
        ],
    ),
    ("terminal_submit", &[NODE, ("command", Kind::String, true)]),
    ("terminal_input", &[NODE, ("text", Kind::String, false), ("keys", Kind::Keys, false)]),
    ("terminal_interrupt", &[NODE]),
    ("terminal_kill", &[NODE]),
    ("terminal_external", &[NODE]),
    ("terminal_close", &[NODE]),
    ("agent_launch", &[("agent", Kind::Enum(AGENTS), true)]),
    ("agent_status", &[]),
    ("agent_cards", &[]),
    ("agent_send", &[NODE, ("text", Kind::String, true), ("messageId", Kind::String, true)]),
    ("agent_task", &[("taskId", Kind::String, true)]),
    (
        "agent_reply",
        &[
            ("taskId", Kind::String, true),
            ("text", Kind::String, true),
            ("state", Kind::Enum(&["completed", "failed"]), false),
        ],
    ),
    ("context_read", &[]),
    (
        "artifact_open",
        &[("path", Kind::String, true), ("view", Kind::Enum(&["editor", "diff"]), false)],
    ),
];

/// The operations whose `readOnlyHint` is true (§4.2), as the spec lists them.
pub const READ_ONLY: &[&str] = &[
    "session_info",
    "guide_read",
    "canvas_list",
    "browser_list",
    "browser_inspect",
    "browser_screenshot",
    "terminal_list",
    "terminal_read",
    "terminal_search",
    "terminal_wait",
    "agent_status",
    "context_read",
    "agent_cards",
    "agent_task",
];

/// The arguments of the operation `name`, when the table has it.
pub fn arguments(name: &str) -> Option<&'static [Arg]> {
    OPERATIONS.iter().find(|(operation, _)| *operation == name).map(|(_, args)| *args)
}

/// The `error` string a §5 validation answers for `body`, or `None` when the body is accepted.
///
/// Straight from the numbered list of §5: the first failing check wins.
pub fn validation_error(body: &Value) -> Option<String> {
    // 1. Not an object or array.
    if !matches!(body, Value::Object(_) | Value::Array(_)) {
        return Some("Expected an operation and args object".to_owned());
    }
    // 2. `operation` missing, not a string, or not in the table (an array has no members).
    let Some(Value::String(name)) = body.as_object().and_then(|object| object.get("operation"))
    else {
        return Some("Unknown operation".to_owned());
    };
    let Some(table_args) = arguments(name) else {
        return Some("Unknown operation".to_owned());
    };
    // 3. `args` missing, null, not an object.
    let Some(Value::Object(args)) = body.get("args") else {
        return Some("Expected args object".to_owned());
    };
    // 4. Required arguments, in table order.
    for (arg, _, required) in table_args {
        if *required && !args.contains_key(*arg) {
            return Some(format!("Missing argument: {arg}"));
        }
    }
    // 5. Each member, in document order.
    for (member, value) in args {
        let Some((_, kind, _)) = table_args.iter().find(|(arg, _, _)| arg == member) else {
            return Some(format!("Unknown argument: {member}"));
        };
        if !fits(*kind, value) {
            return Some(format!("Invalid {member}"));
        }
    }
    // 1.4.0, once every member passed: the rules of one operation's members together.
    match name.as_str() {
        "terminal_input" => {
            let keys = args.get("keys").and_then(Value::as_array);
            if keys.is_some_and(|keys| !keys.iter().all(|key| key.as_str().is_some_and(is_key))) {
                return Some("Invalid keys".to_owned());
            }
            if !args.contains_key("text") && keys.is_none() {
                return Some("Invalid text".to_owned());
            }
        }
        "terminal_read"
            if args.get("view") == Some(&Value::from("screen")) && args.contains_key("since") =>
        {
            return Some("Invalid view".to_owned());
        }
        // 1.5.0 (issue 37 item 3, spec §5 step 6).
        "terminal_wait" => {
            let until_text = args.get("until") == Some(&Value::from("text"));
            let texts = args.get("anyOf").and_then(Value::as_array);
            if let Some(texts) = texts
                && (!until_text
                    || args.contains_key("text")
                    || texts.iter().any(|text| text.as_str() == Some("")))
            {
                return Some("Invalid anyOf".to_owned());
            }
            if args.contains_key("regex") && !until_text {
                return Some("Invalid regex".to_owned());
            }
            if args.get("regex") == Some(&Value::Bool(true)) {
                if let Some(Err(reason)) = args.get("text").and_then(Value::as_str).map(dialect) {
                    return Some(format!("Invalid text: {reason}"));
                }
                for (index, text) in texts.into_iter().flatten().enumerate() {
                    if let Some(Err(reason)) = text.as_str().map(dialect) {
                        return Some(format!("Invalid anyOf: item {index}: {reason}"));
                    }
                }
            }
        }
        // 1.5.0 (issue 37 item 2, spec §5 step 6).
        "terminal_search" => {
            let pattern = args.get("pattern").and_then(Value::as_str).unwrap_or_default();
            if pattern.is_empty() {
                return Some("Invalid pattern".to_owned());
            }
            if args.get("regex") == Some(&Value::Bool(true))
                && let Err(reason) = dialect(pattern)
            {
                return Some(format!("Invalid pattern: {reason}"));
            }
            if args.contains_key("since") && !args.contains_key("nodeId") {
                return Some("Invalid since".to_owned());
            }
            for (name, low, high) in [("limit", 1.0, 200.0), ("context", 0.0, 5.0)] {
                if let Some(number) = args.get(name).and_then(Value::as_f64)
                    && !(number.fract().abs() < f64::EPSILON && low <= number && number <= high)
                {
                    return Some(format!("Invalid {name}"));
                }
            }
        }
        _ => {}
    }
    None
}

/// The dialect's verdict on a pattern (see the module doc).
fn dialect(pattern: &str) -> Result<(), String> {
    termsprawl_protocol::pattern::check(pattern)
}

/// The named keys of protocol 1.4.0.
pub const NAMED_KEYS: &[&str] = &[
    "Enter",
    "Tab",
    "BTab",
    "Escape",
    "Space",
    "Backspace",
    "Delete",
    "Insert",
    "Home",
    "End",
    "PageUp",
    "PageDown",
    "Up",
    "Down",
    "Left",
    "Right",
    "F1",
    "F2",
    "F3",
    "F4",
    "F5",
    "F6",
    "F7",
    "F8",
    "F9",
    "F10",
    "F11",
    "F12",
];

/// A key: a named key, or `C-`, `M-`, `S-` (each at most once, in any order) before one printable
/// character or a named key.
pub fn is_key(key: &str) -> bool {
    let mut seen = String::new();
    let mut rest = key;
    while rest.len() > 2 && ["C-", "M-", "S-"].iter().any(|prefix| rest.starts_with(prefix)) {
        let modifier = &rest[..1];
        if seen.contains(modifier) {
            return false;
        }
        seen.push_str(modifier);
        rest = &rest[2..];
    }
    if NAMED_KEYS.contains(&rest) {
        return true;
    }
    let mut chars = rest.chars();
    matches!((chars.next(), chars.next()), (Some(c), None) if !seen.is_empty() && !c.is_control() && !c.is_whitespace())
}

fn fits(kind: Kind, value: &Value) -> bool {
    match kind {
        Kind::String => value.as_str().is_some_and(string_ok),
        Kind::Enum(allowed) => {
            value.as_str().is_some_and(|text| string_ok(text) && allowed.contains(&text))
        }
        Kind::Number => value.is_number() && number_ok(&value.to_string(), 1e6),
        Kind::Cursor => value.is_number() && number_ok(&value.to_string(), 9_007_199_254_740_991.0),
        Kind::Boolean => value.is_boolean(),
        Kind::Strings | Kind::Keys | Kind::Texts => match value {
            Value::Array(items)
                if !items.is_empty()
                    && items.len()
                        <= match kind {
                            Kind::Keys => 256,
                            Kind::Texts => 16,
                            _ => 100,
                        } =>
            {
                items.iter().all(|item| {
                    item.as_str().is_some_and(|item| utf16_units(item) < 256 && no_nul(item))
                })
            }
            _ => false,
        },
    }
}

/// A string or enum value: at most 64 000 UTF-16 units, no U+0000.
fn string_ok(text: &str) -> bool {
    utf16_units(text) <= 64_000 && no_nul(text)
}

fn no_nul(text: &str) -> bool {
    !text.chars().any(|c| c == '\u{0}')
}

/// UTF-16 units, counted per character: two for a character outside the Basic Multilingual Plane.
fn utf16_units(text: &str) -> usize {
    text.chars().map(|c| if u32::from(c) > 0xFFFF { 2 } else { 1 }).sum()
}

/// The JSON number literal `literal`, read as JavaScript reads it (the nearest double), is finite
/// and at most `limit` in absolute value.
fn number_ok(literal: &str, limit: f64) -> bool {
    literal.parse::<f64>().is_ok_and(|number| number.is_finite() && number.abs() <= limit)
}
