//! The result shapes of `spec/protocol.md` §4.5, for the operations the suite calls, per protocol
//! version: the one place that knows what a successful `value` looks like. A new operation's
//! shape is one more arm of [`check`]; 1.3.0 (`docs/protocol-changelog.md`) adds `cursor`,
//! `running`, `exitCode` and `signal` to `terminal_read`, `cursor` to `terminal_submit` and
//! `terminal_input`, and the shapes of `terminal_run`, `terminal_wait` and `terminal_kill`.

use serde_json::Value;
use termsprawl_protocol::results::member::{CURSOR, EXIT_CODE, OUTPUT, RUNNING};

use crate::ctx::Version;

/// The members of a 1.3 `terminal_read`.
const READ_13: &[&str] = &["nodeId", OUTPUT, CURSOR, RUNNING, EXIT_CODE, "signal"];
/// The members of a 1.3 `terminal_run`.
const RUN_13: &[&str] = &["nodeId", RUNNING, EXIT_CODE, "signal", OUTPUT, "truncated", CURSOR];
/// The members of a 1.3 `terminal_wait`.
const WAIT_13: &[&str] =
    &["nodeId", "reached", RUNNING, EXIT_CODE, "signal", OUTPUT, "truncated", CURSOR];
/// The members of a 1.3 `terminal_kill`.
const KILL_13: &[&str] = &["nodeId", CURSOR, RUNNING, EXIT_CODE, "signal"];
/// The members a 1.4 screen view adds after `signal`; a later version may add more after them.
const SCREEN_14: &[&str] = &["rows", "cols", "cursorRow", "cursorCol", "alternateScreen"];
/// The members of a 1.5 `terminal_list` entry.
const LIST_15: &[&str] = &[
    "nodeId",
    "title",
    "kind",
    "command",
    RUNNING,
    EXIT_CODE,
    "signal",
    "startedAt",
    "endedAt",
    CURSOR,
    "lastOutputAt",
    "waitingForInput",
    "inputBy",
    "notify",
];
/// The members of a 1.5 `terminal_search` match.
const MATCH_15: &[&str] = &["nodeId", CURSOR, "line", "before", "after"];
/// The most output `terminal_run` and `terminal_wait` answer, in UTF-16 units.
const TAIL_LIMIT: usize = 16_000;

/// Why `value`, the result of `operation` called with `args` on a server of `version`, does not
/// have the contract's shape; `None` when it does. An operation without a known shape is `Some`.
pub fn check(version: Version, operation: &str, args: &Value, value: &Value) -> Option<String> {
    if args["view"] == "screen" && operation == "terminal_read" {
        return check_screen(args, value);
    }
    if version.has_wait() && CHANGED_13.contains(&operation) {
        return check_13(operation, args, value);
    }
    match operation {
        "guide_read" => value.as_str().is_none_or(str::is_empty)
            .then(|| "the guide is not a non-empty string".to_owned()),
        "canvas_list" => array_of_objects(value, "node"),
        "browser_list" => array_of_objects(value, "browser node").or_else(|| {
            value.as_array()?.iter().find_map(|node| {
                (!matches!(node.get("owner"), Some(Value::String(_) | Value::Null)))
                    .then(|| format!("browser node without owner string or null: {node}"))
            })
        }),
        "canvas_select" => exact_members(value, &["nodeIds"]).or_else(|| {
            (value["nodeIds"] != args["nodeIds"])
                .then(|| format!("nodeIds {} is not the selection asked for", value["nodeIds"]))
        }),
        "canvas_move" | "canvas_resize" => {
            exact_members(value, &["nodeId"]).or_else(|| same_node(args, value))
        }
        "sticky_open" | "terminal_open" | "agent_launch" | "artifact_open" => exact_members(value, &["nodeId"])
            .or_else(|| value["nodeId"].as_str().is_none_or(str::is_empty).then(|| "nodeId is not a non-empty string".to_owned())),
        "terminal_read" => exact_members(value, &["nodeId", OUTPUT])
            .or_else(|| same_node(args, value))
            .or_else(|| (!value[OUTPUT].is_string()).then(|| "output is not a string".to_owned()))
            .or_else(|| {
                let limit = read_limit(&args["maxChars"]);
                let length = value[OUTPUT].as_str().map_or(0, |text| text.encode_utf16().count());
                (length > limit).then(|| format!("output has {length} UTF-16 units, more than min(max(maxChars, 1), 100000) = {limit}"))
            }),
        "terminal_submit" | "terminal_input" | "terminal_interrupt" => exact_members(value, &["nodeId", "delivered"])
            .or_else(|| same_node(args, value))
            .or_else(|| (value["delivered"] != Value::Bool(true)).then(|| "delivered is not true".to_owned())),
        "terminal_external" => exact_members(value, &["nodeId", "attached"])
            .or_else(|| same_node(args, value))
            .or_else(|| (value["attached"] != Value::Bool(true)).then(|| "attached is not true".to_owned())),
        "terminal_close" => exact_members(value, &["nodeId", "cleanupPendingIds"])
            .or_else(|| same_node(args, value))
            .or_else(|| strings(&value["cleanupPendingIds"], "cleanupPendingIds")),
        "agent_status" => array_of_objects(value, "status entry").or_else(|| {
            value.as_array()?.iter().find_map(|entry| {
                exact_members(entry, &["nodeId", "projectId", "status"])
                    .or_else(|| crate::files::status_problem(&entry["status"]))
            })
        }),
        "agent_cards" => array_of_objects(value, "agent card").or_else(|| {
            value.as_array()?.iter().find_map(|card| {
                (!card["nodeId"].is_string()).then(|| format!("card without a nodeId string: {card}")).or_else(|| strings(&card["enabledPeerIds"], "enabledPeerIds"))
            })
        }),
        "context_read" => {
            let Value::Object(object) = value else { return Some("not an object".to_owned()) };
            let keys: Vec<&str> = object.keys().map(String::as_str).collect();
            if keys != ["text", "reader"] && keys != ["text", "reader", "reason"] {
                return Some(format!("members {keys:?}, expected [\"text\", \"reader\"] and an optional \"reason\""));
            }
            if !object["text"].is_string() || !object["reader"].is_string() || object.get("reason").is_some_and(|reason| !reason.is_string()) {
                return Some("text, reader and reason must be strings".to_owned());
            }
            let length = object["text"].as_str().map_or(0, |text| text.chars().count());
            (length > 100_000).then(|| format!("text has {length} characters, more than 100000"))
        }
        "terminal_list" => array_of_objects(value, "terminal").or_else(|| {
            value.as_array()?.iter().find_map(list_entry)
        }),
        "terminal_search" => exact_members(value, &["matches", "truncated"])
            .or_else(|| (!value["truncated"].is_boolean()).then(|| "truncated is not a boolean".to_owned()))
            .or_else(|| array_of_objects(&value["matches"], "match"))
            .or_else(|| value["matches"].as_array()?.iter().find_map(search_match)),
        _ => Some(format!("this suite knows no result shape for {operation}")),
    }
}

/// A 1.4 screen view: the 1.3 members, then [`SCREEN_14`] (later members after them allowed),
/// `output` exactly `rows` lines each ending in a line feed.
fn check_screen(args: &Value, value: &Value) -> Option<String> {
    let Value::Object(object) = value else { return Some(format!("not an object: {value}")) };
    let keys: Vec<&str> = object.keys().map(String::as_str).collect();
    let expected: Vec<&str> = READ_13.iter().chain(SCREEN_14).copied().collect();
    if keys.len() < expected.len() || keys[..expected.len()] != expected[..] {
        return Some(format!(
            "members {keys:?}, expected {expected:?} (and any later ones after them)"
        ));
    }
    same_node(args, value)
        .or_else(|| process_state(value))
        .or_else(|| {
            ["rows", "cols", "cursorRow", "cursorCol"].iter().find_map(|name| {
                value[name]
                    .as_u64()
                    .is_none()
                    .then(|| format!("{name} is not a non-negative integer: {}", value[name]))
            })
        })
        .or_else(|| {
            (!value["alternateScreen"].is_boolean())
                .then(|| "alternateScreen is not a boolean".to_owned())
        })
        .or_else(|| {
            let output = value[OUTPUT].as_str()?;
            let rows = value["rows"].as_u64()?;
            let lines = output.matches('\n').count();
            (u64::try_from(lines).ok() != Some(rows)
                || !(output.is_empty() || output.ends_with('\n')))
            .then(|| format!("output has {lines} line feeds, expected one per row ({rows})"))
        })
}

/// One `terminal_list` entry of 1.5.
fn list_entry(entry: &Value) -> Option<String> {
    let iso = |name: &str, nullable: bool| {
        let ok = match &entry[name] {
            Value::String(text) => is_iso_utc(text),
            Value::Null => nullable,
            _ => false,
        };
        (!ok).then(|| {
            format!(
                "{name} is not an ISO 8601 UTC time{}: {entry}",
                if nullable { " or null" } else { "" }
            )
        })
    };
    exact_members(entry, LIST_15)
        .or_else(|| {
            entry["nodeId"]
                .as_str()
                .is_none_or(str::is_empty)
                .then(|| format!("nodeId is not a non-empty string: {entry}"))
        })
        .or_else(|| {
            (!entry["title"].is_string()).then(|| format!("title is not a string: {entry}"))
        })
        .or_else(|| {
            (!matches!(entry["kind"].as_str(), Some("shell" | "run" | "agent")))
                .then(|| format!("kind is not shell, run or agent: {entry}"))
        })
        .or_else(|| {
            (!(entry["command"].is_string() || entry["command"].is_null()))
                .then(|| format!("command is not a string or null: {entry}"))
        })
        .or_else(|| process_state(entry))
        .or_else(|| iso("startedAt", false))
        .or_else(|| iso("endedAt", true))
        .or_else(|| iso("lastOutputAt", true))
        .or_else(|| {
            (!entry["waitingForInput"].is_boolean())
                .then(|| format!("waitingForInput is not a boolean: {entry}"))
        })
        .or_else(|| {
            (!(entry["inputBy"].is_string() || entry["inputBy"].is_null()))
                .then(|| format!("inputBy is not a string or null: {entry}"))
        })
        .or_else(|| {
            (!entry["notify"].is_boolean()).then(|| format!("notify is not a boolean: {entry}"))
        })
        .or_else(|| {
            (entry[RUNNING] == true && !entry["endedAt"].is_null())
                .then(|| format!("endedAt is set while running: {entry}"))
        })
}

/// One `terminal_search` match of 1.5.
fn search_match(item: &Value) -> Option<String> {
    exact_members(item, MATCH_15)
        .or_else(|| {
            item["nodeId"]
                .as_str()
                .is_none_or(str::is_empty)
                .then(|| format!("nodeId is not a non-empty string: {item}"))
        })
        .or_else(|| cursor(item))
        .or_else(|| (!item["line"].is_string()).then(|| format!("line is not a string: {item}")))
        .or_else(|| strings_or_empty(&item["before"], "before"))
        .or_else(|| strings_or_empty(&item["after"], "after"))
}

/// `YYYY-MM-DDTHH:MM:SS[.fff]Z`.
pub(crate) fn is_iso_utc(text: &str) -> bool {
    let bytes = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        bytes.get(range).is_some_and(|part| part.iter().all(u8::is_ascii_digit))
    };
    let fraction = text.get(19..text.len().saturating_sub(1)).unwrap_or_default();
    bytes.len() >= 20
        && digits(0..4)
        && bytes[4] == b'-'
        && digits(5..7)
        && bytes[7] == b'-'
        && digits(8..10)
        && bytes[10] == b'T'
        && digits(11..13)
        && bytes[13] == b':'
        && digits(14..16)
        && bytes[16] == b':'
        && digits(17..19)
        && text.ends_with('Z')
        && (fraction.is_empty()
            || (fraction.len() > 1
                && fraction.starts_with('.')
                && fraction[1..].bytes().all(|b| b.is_ascii_digit())))
}

fn strings_or_empty(value: &Value, name: &str) -> Option<String> {
    let ok = value.as_array().is_some_and(|items| items.iter().all(Value::is_string));
    (!ok).then(|| format!("{name} is not an array of strings: {value}"))
}

/// The operations whose shape 1.3 changed or added; the others keep the one of 1.2.
const CHANGED_13: &[&str] = &[
    "terminal_read",
    "terminal_submit",
    "terminal_input",
    "terminal_run",
    "terminal_wait",
    "terminal_kill",
];

/// The 1.3 shapes of [`CHANGED_13`].
fn check_13(operation: &str, args: &Value, value: &Value) -> Option<String> {
    match operation {
        "terminal_read" => exact_members(value, READ_13)
            .or_else(|| same_node(args, value))
            .or_else(|| (!value[OUTPUT].is_string()).then(|| "output is not a string".to_owned()))
            .or_else(|| {
                let limit = read_limit(&args["maxChars"]);
                let length = utf16_length(&value[OUTPUT]);
                (length > limit).then(|| format!("output has {length} UTF-16 units, more than min(max(maxChars, 1), 100000) = {limit}"))
            })
            .or_else(|| process_state(value)),
        "terminal_submit" | "terminal_input" => exact_members(value, &["nodeId", "delivered", CURSOR])
            .or_else(|| same_node(args, value))
            .or_else(|| (value["delivered"] != Value::Bool(true)).then(|| "delivered is not true".to_owned()))
            .or_else(|| cursor(value)),
        "terminal_run" => exact_members(value, RUN_13)
            .or_else(|| value["nodeId"].as_str().is_none_or(str::is_empty).then(|| "nodeId is not a non-empty string".to_owned()))
            .or_else(|| process_state(value))
            .or_else(|| tail(value)),
        "terminal_wait" => wait_members(args, value)
            .or_else(|| same_node(args, value))
            .or_else(|| (!value["reached"].is_boolean()).then(|| "reached is not a boolean".to_owned()))
            .or_else(|| process_state(value))
            .or_else(|| tail(value)),
        "terminal_kill" => exact_members(value, KILL_13)
            .or_else(|| same_node(args, value))
            .or_else(|| process_state(value)),
        _ => Some(format!("this suite knows no 1.3 result shape for {operation}")),
    }
}

/// The 1.3 members of a wait, and after them 1.5's `matched` and `matchCursor` (until text) or
/// `inputBy` (until input) when the server sends them.
fn wait_members(args: &Value, value: &Value) -> Option<String> {
    let Value::Object(object) = value else { return Some(format!("not an object: {value}")) };
    let keys: Vec<&str> = object.keys().map(String::as_str).collect();
    let later: &[&str] = match args["until"].as_str() {
        Some("text") => &["matched", "matchCursor"],
        Some("input") => &["inputBy"],
        _ => &[],
    };
    let with_later: Vec<&str> = WAIT_13.iter().chain(later).copied().collect();
    if keys != WAIT_13 && keys != with_later {
        return Some(format!("members {keys:?}, expected {WAIT_13:?} or {with_later:?}"));
    }
    let number_or_null = |name: &str| {
        object
            .get(name)
            .is_some_and(|item| !(item.is_u64() || item.is_null()))
            .then(|| format!("{name} is not a non-negative integer or null: {}", object[name]))
    };
    number_or_null("matched").or_else(|| number_or_null("matchCursor")).or_else(|| {
        object
            .get("inputBy")
            .is_some_and(|item| !(item.is_string() || item.is_null()))
            .then(|| format!("inputBy is not a string or null: {}", object["inputBy"]))
    })
}

/// `cursor` a non-negative integer, `running` a boolean, `exitCode` a number or null, `signal` a
/// string or null.
fn process_state(value: &Value) -> Option<String> {
    cursor(value)
        .or_else(|| {
            (!value[RUNNING].is_boolean())
                .then(|| format!("running is not a boolean: {}", value[RUNNING]))
        })
        .or_else(|| {
            (!(value[EXIT_CODE].is_number() || value[EXIT_CODE].is_null()))
                .then(|| format!("exitCode is not a number or null: {}", value[EXIT_CODE]))
        })
        .or_else(|| {
            (!(value["signal"].is_string() || value["signal"].is_null()))
                .then(|| format!("signal is not a string or null: {}", value["signal"]))
        })
}

/// `cursor` a non-negative integer.
fn cursor(value: &Value) -> Option<String> {
    value[CURSOR]
        .as_u64()
        .is_none()
        .then(|| format!("cursor is not a non-negative integer: {}", value[CURSOR]))
}

/// `output` a string of at most 16 000 UTF-16 units, `truncated` a boolean.
fn tail(value: &Value) -> Option<String> {
    (!value[OUTPUT].is_string())
        .then(|| "output is not a string".to_owned())
        .or_else(|| {
            (!value["truncated"].is_boolean()).then(|| "truncated is not a boolean".to_owned())
        })
        .or_else(|| {
            let length = utf16_length(&value[OUTPUT]);
            (length > TAIL_LIMIT)
                .then(|| format!("output has {length} UTF-16 units, more than {TAIL_LIMIT}"))
        })
}

fn utf16_length(text: &Value) -> usize {
    text.as_str().map_or(0, |text| text.encode_utf16().count())
}

/// The largest `terminal_read` output for a `maxChars` argument: `min(max(maxChars, 1), 100000)`,
/// default 16 000, fractions rounded up (a server may cut at a character boundary below it).
pub fn read_limit(max_chars: &Value) -> usize {
    let requested = max_chars.as_f64().unwrap_or(16_000.0);
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "clamped to 1..=100000 first"
    )]
    let limit = requested.clamp(1.0, 100_000.0).ceil() as usize;
    limit
}

fn exact_members(value: &Value, members: &[&str]) -> Option<String> {
    let Value::Object(object) = value else { return Some(format!("not an object: {value}")) };
    let keys: Vec<&str> = object.keys().map(String::as_str).collect();
    (keys != members).then(|| format!("members {keys:?}, expected {members:?}"))
}

fn same_node(args: &Value, value: &Value) -> Option<String> {
    (value["nodeId"] != args["nodeId"]).then(|| {
        format!("nodeId {} is not the node asked for ({})", value["nodeId"], args["nodeId"])
    })
}

fn array_of_objects(value: &Value, what: &str) -> Option<String> {
    let Some(items) = value.as_array() else { return Some(format!("not an array: {value}")) };
    items
        .iter()
        .find(|item| !item.is_object())
        .map(|item| format!("a {what} that is not an object: {item}"))
}

fn strings(value: &Value, name: &str) -> Option<String> {
    let ok = value.as_array().is_some_and(|items| items.iter().all(Value::is_string));
    (!ok).then(|| format!("{name} is not an array of strings: {value}"))
}

#[cfg(test)]
mod tests;
