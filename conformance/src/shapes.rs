//! The result shapes of `spec/protocol.md` §4.5, for the operations the suite calls, per protocol
//! version: the one place that knows what a successful `value` looks like. A new operation's
//! shape is one more arm of [`check`]; 1.3.0 (`docs/protocol-changelog.md`) adds `cursor`,
//! `running`, `exitCode` and `signal` to `terminal_read`, `cursor` to `terminal_submit` and
//! `terminal_input`, and the shapes of `terminal_run`, `terminal_wait` and `terminal_kill`.

use serde_json::Value;

use crate::ctx::Version;

/// The members of a 1.3 `terminal_read`.
const READ_13: &[&str] = &["nodeId", "output", "cursor", "running", "exitCode", "signal"];
/// The members of a 1.3 `terminal_run`.
const RUN_13: &[&str] =
    &["nodeId", "running", "exitCode", "signal", "output", "truncated", "cursor"];
/// The members of a 1.3 `terminal_wait`.
const WAIT_13: &[&str] =
    &["nodeId", "reached", "running", "exitCode", "signal", "output", "truncated", "cursor"];
/// The members of a 1.3 `terminal_kill`.
const KILL_13: &[&str] = &["nodeId", "cursor", "running", "exitCode", "signal"];
/// The most output `terminal_run` and `terminal_wait` answer, in UTF-16 units.
const TAIL_LIMIT: usize = 16_000;

/// Why `value`, the result of `operation` called with `args` on a server of `version`, does not
/// have the contract's shape; `None` when it does. An operation without a known shape is `Some`.
pub fn check(version: Version, operation: &str, args: &Value, value: &Value) -> Option<String> {
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
        "terminal_read" => exact_members(value, &["nodeId", "output"])
            .or_else(|| same_node(args, value))
            .or_else(|| (!value["output"].is_string()).then(|| "output is not a string".to_owned()))
            .or_else(|| {
                let limit = read_limit(&args["maxChars"]);
                let length = value["output"].as_str().map_or(0, |text| text.encode_utf16().count());
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
        _ => Some(format!("this suite knows no result shape for {operation}")),
    }
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
            .or_else(|| (!value["output"].is_string()).then(|| "output is not a string".to_owned()))
            .or_else(|| {
                let limit = read_limit(&args["maxChars"]);
                let length = utf16_length(&value["output"]);
                (length > limit).then(|| format!("output has {length} UTF-16 units, more than min(max(maxChars, 1), 100000) = {limit}"))
            })
            .or_else(|| process_state(value)),
        "terminal_submit" | "terminal_input" => exact_members(value, &["nodeId", "delivered", "cursor"])
            .or_else(|| same_node(args, value))
            .or_else(|| (value["delivered"] != Value::Bool(true)).then(|| "delivered is not true".to_owned()))
            .or_else(|| cursor(value)),
        "terminal_run" => exact_members(value, RUN_13)
            .or_else(|| value["nodeId"].as_str().is_none_or(str::is_empty).then(|| "nodeId is not a non-empty string".to_owned()))
            .or_else(|| process_state(value))
            .or_else(|| tail(value)),
        "terminal_wait" => exact_members(value, WAIT_13)
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

/// `cursor` a non-negative integer, `running` a boolean, `exitCode` a number or null, `signal` a
/// string or null.
fn process_state(value: &Value) -> Option<String> {
    cursor(value)
        .or_else(|| {
            (!value["running"].is_boolean())
                .then(|| format!("running is not a boolean: {}", value["running"]))
        })
        .or_else(|| {
            (!(value["exitCode"].is_number() || value["exitCode"].is_null()))
                .then(|| format!("exitCode is not a number or null: {}", value["exitCode"]))
        })
        .or_else(|| {
            (!(value["signal"].is_string() || value["signal"].is_null()))
                .then(|| format!("signal is not a string or null: {}", value["signal"]))
        })
}

/// `cursor` a non-negative integer.
fn cursor(value: &Value) -> Option<String> {
    value["cursor"]
        .as_u64()
        .is_none()
        .then(|| format!("cursor is not a non-negative integer: {}", value["cursor"]))
}

/// `output` a string of at most 16 000 UTF-16 units, `truncated` a boolean.
fn tail(value: &Value) -> Option<String> {
    (!value["output"].is_string())
        .then(|| "output is not a string".to_owned())
        .or_else(|| {
            (!value["truncated"].is_boolean()).then(|| "truncated is not a boolean".to_owned())
        })
        .or_else(|| {
            let length = utf16_length(&value["output"]);
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
