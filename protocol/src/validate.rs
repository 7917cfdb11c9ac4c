//! The server's request validation (`spec/protocol.md` §5): checks in the contract's order, the first
//! failure wins, with the contract's exact messages.
//!
//! After the checks of each member (step 5), the rules of protocol 1.4.0 that involve one
//! operation's members together or a key's grammar ([`operation_rules`]): `terminal_input` needs
//! `text` or `keys` (`Invalid text`) and every key in the grammar of [`crate::keys`]
//! (`Invalid keys`); `terminal_read` with `view: "screen"` takes no `since` (`Invalid view`).
//! Protocol 1.5.0 adds: `terminal_wait`'s `anyOf` only with `until: "text"`, without `text`, with at
//! most [`MAX_WAIT_TEXTS`] non-empty items (`Invalid anyOf`), and `regex` only with `until: "text"`
//! (`Invalid regex`), and with `regex: true` `text` and every `anyOf` item in the pattern dialect of
//! [`crate::pattern`] (`Invalid text: <reason>`, `Invalid anyOf: item <index>: <reason>`);
//! `terminal_search`'s `pattern` not empty (`Invalid pattern`), with `regex: true` in the dialect
//! (`Invalid pattern: <reason>`), `since` only with
//! `nodeId` (`Invalid since`), `limit` a whole number in 1..=200 (`Invalid limit`) and `context` one
//! in 0..=5 (`Invalid context`).

use std::fmt;

use serde_json::{Map, Value};

use crate::keys::is_valid_key;
use crate::operations::{Param, ParamKind, operation};
use crate::pattern::check;
use crate::types::ToolRequest;

/// Most items in a `string[]` argument (`terminal_input`'s `keys` excepted:
/// [`crate::keys::MAX_KEYS`]).
pub const MAX_ARRAY_ITEMS: usize = 100;
/// Most UTF-16 units in one item of a `string[]` argument (shorter than 256).
pub const MAX_ITEM_UTF16: usize = 255;
/// Most UTF-16 units in a string or enum argument.
pub const MAX_STRING_UTF16: usize = 64_000;
/// Largest absolute value of a number argument (inclusive), cursors excepted.
pub const MAX_NUMBER_MAGNITUDE: f64 = 1_000_000.0;
/// Largest absolute value of a cursor argument (`since`, protocol 1.3.0; inclusive): 2^53 − 1, the
/// largest integer every JSON peer reads exactly. A cursor counts every character a terminal has
/// printed, so it passes 1 000 000 within minutes of a busy build.
pub const MAX_CURSOR: f64 = 9_007_199_254_740_991.0;

/// Most texts in `terminal_wait`'s `anyOf` (protocol 1.5.0).
pub const MAX_WAIT_TEXTS: usize = 16;
/// Most matches one `terminal_search` answers (`limit`, protocol 1.5.0); [`DEFAULT_SEARCH_LIMIT`]
/// when omitted.
pub const MAX_SEARCH_LIMIT: f64 = 200.0;
/// `terminal_search`'s `limit` when omitted.
pub const DEFAULT_SEARCH_LIMIT: usize = 20;
/// Most lines of context before and after a `terminal_search` match (`context`, protocol 1.5.0).
pub const MAX_SEARCH_CONTEXT: f64 = 5.0;

/// Why a request body was refused. `Display` is the exact `error` string the server answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValidationError {
    /// The body is not a JSON object or array.
    ExpectedObject,
    /// `operation` is missing, not a string, or not in the table.
    UnknownOperation,
    /// `args` is missing, `null`, not an object, or an array.
    ExpectedArgsObject,
    /// A required argument is absent.
    MissingArgument(String),
    /// A member of `args` is not a property of the operation.
    UnknownArgument(String),
    /// A member of `args` has the wrong type or is out of range.
    InvalidArgument(String),
    /// A pattern member (`terminal_search`'s `pattern`, `terminal_wait`'s `text` or `anyOf`, with
    /// `regex: true`; protocol 1.5.0) is outside the dialect of [`crate::pattern`]: the member's
    /// name and the reason (for `anyOf`, `item <index>: ` and the reason).
    InvalidPattern(String, String),
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValidationError::ExpectedObject => f.write_str("Expected an operation and args object"),
            ValidationError::UnknownOperation => f.write_str("Unknown operation"),
            ValidationError::ExpectedArgsObject => f.write_str("Expected args object"),
            ValidationError::MissingArgument(name) => write!(f, "Missing argument: {name}"),
            ValidationError::UnknownArgument(name) => write!(f, "Unknown argument: {name}"),
            ValidationError::InvalidArgument(name) => write!(f, "Invalid {name}"),
            ValidationError::InvalidPattern(name, reason) => write!(f, "Invalid {name}: {reason}"),
        }
    }
}

impl std::error::Error for ValidationError {}

/// Validates a parsed request body against the operation table.
///
/// On success the request is returned with `args` unchanged (re-encoded compactly, member order
/// kept) and `operation` set.
pub fn validate(body: &Value) -> Result<ToolRequest, ValidationError> {
    let object = match body {
        Value::Object(object) => Some(object),
        Value::Array(_) => None,
        _ => return Err(ValidationError::ExpectedObject),
    };
    let Some(operation) = object
        .and_then(|object| object.get("operation"))
        .and_then(Value::as_str)
        .and_then(operation)
    else {
        return Err(ValidationError::UnknownOperation);
    };
    let Some(Value::Object(args)) = object.and_then(|object| object.get("args")) else {
        return Err(ValidationError::ExpectedArgsObject);
    };
    if let Some(missing) =
        operation.params().iter().find(|param| param.required() && !args.contains_key(param.name()))
    {
        return Err(ValidationError::MissingArgument(missing.name().to_owned()));
    }
    for (name, value) in args {
        let Some(param) = operation.param(name) else {
            return Err(ValidationError::UnknownArgument(name.clone()));
        };
        if !value_fits(param, value) {
            return Err(ValidationError::InvalidArgument(name.clone()));
        }
    }
    operation_rules(operation.name(), args)?;
    Ok(ToolRequest::new(operation.name(), &Value::Object(Map::clone(args))))
}

/// The rules of protocols 1.4.0 and 1.5.0 that step 5's per-member checks cannot express, run once every
/// member passed them.
fn operation_rules(operation: &str, args: &Map<String, Value>) -> Result<(), ValidationError> {
    let invalid = |name: &str| Err(ValidationError::InvalidArgument(name.to_owned()));
    match operation {
        "terminal_input" => {
            if let Some(Value::Array(keys)) = args.get("keys")
                && !keys.iter().filter_map(Value::as_str).all(is_valid_key)
            {
                return invalid("keys");
            }
            if !args.contains_key("text") && !args.contains_key("keys") {
                return invalid("text");
            }
        }
        "terminal_read"
            if args.get("view").and_then(Value::as_str) == Some("screen")
                && args.contains_key("since") =>
        {
            return invalid("view");
        }
        "terminal_wait" => {
            let until_text = args.get("until").and_then(Value::as_str) == Some("text");
            if let Some(Value::Array(texts)) = args.get("anyOf")
                && (!until_text
                    || args.contains_key("text")
                    || texts.len() > MAX_WAIT_TEXTS
                    || texts.iter().any(|text| text.as_str().is_none_or(str::is_empty)))
            {
                return invalid("anyOf");
            }
            if args.contains_key("regex") && !until_text {
                return invalid("regex");
            }
            if args.get("regex") == Some(&Value::Bool(true)) {
                if let Some(Err(reason)) = args.get("text").and_then(Value::as_str).map(check) {
                    return Err(ValidationError::InvalidPattern("text".to_owned(), reason));
                }
                let texts = args.get("anyOf").and_then(Value::as_array).into_iter().flatten();
                for (index, text) in texts.filter_map(Value::as_str).enumerate() {
                    if let Err(reason) = check(text) {
                        let reason = format!("item {index}: {reason}");
                        return Err(ValidationError::InvalidPattern("anyOf".to_owned(), reason));
                    }
                }
            }
        }
        "terminal_search" => {
            let pattern = args.get("pattern").and_then(Value::as_str).unwrap_or_default();
            if pattern.is_empty() {
                return invalid("pattern");
            }
            if args.get("regex") == Some(&Value::Bool(true))
                && let Err(reason) = check(pattern)
            {
                return Err(ValidationError::InvalidPattern("pattern".to_owned(), reason));
            }
            if args.contains_key("since") && !args.contains_key("nodeId") {
                return invalid("since");
            }
            if !whole_in(args.get("limit"), 1.0, MAX_SEARCH_LIMIT) {
                return invalid("limit");
            }
            if !whole_in(args.get("context"), 0.0, MAX_SEARCH_CONTEXT) {
                return invalid("context");
            }
        }
        _ => {}
    }
    Ok(())
}

/// Whether an optional number member is absent or a whole number in `min..=max`.
fn whole_in(value: Option<&Value>, min: f64, max: f64) -> bool {
    value
        .and_then(Value::as_f64)
        .is_none_or(|number| number.fract() == 0.0 && (min..=max).contains(&number))
}

fn value_fits(param: &Param, value: &Value) -> bool {
    let max_magnitude = param.max_magnitude();
    match (param.kind(), value) {
        (ParamKind::String, Value::String(text)) => string_fits(text),
        (ParamKind::Enum(values), Value::String(text)) => {
            string_fits(text) && values.iter().any(|allowed| allowed == text)
        }
        (ParamKind::Number, Value::Number(number)) => number
            .as_f64()
            .is_some_and(|number| number.is_finite() && number.abs() <= max_magnitude),
        (ParamKind::Boolean, Value::Bool(_)) => true,
        (ParamKind::StringArray, Value::Array(items)) => {
            (1..=param.max_items()).contains(&items.len())
                && items.iter().all(|item| {
                    item.as_str().is_some_and(|item| {
                        utf16_len(item) <= MAX_ITEM_UTF16 && !item.contains('\0')
                    })
                })
        }
        _ => false,
    }
}

fn string_fits(text: &str) -> bool {
    utf16_len(text) <= MAX_STRING_UTF16 && !text.contains('\0')
}

/// The length a JavaScript string reports.
fn utf16_len(text: &str) -> usize {
    text.encode_utf16().count()
}

#[cfg(test)]
mod tests;
