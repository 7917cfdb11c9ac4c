//! The server's request validation (`spec/protocol.md` §5): checks in the contract's order, the first
//! failure wins, with the contract's exact messages.
//!
//! After the checks of each member (step 5), the arguments are read once into the typed [`Call`]
//! and the rules of protocol 1.4.0 that involve one operation's members together or a key's
//! grammar run on it ([`Call::check`], which calls the `check` method of the argument type):
//! `terminal_input` needs `text` or `keys` (`Invalid text`) and every key in the grammar of
//! [`crate::keys`] (`Invalid keys`); `terminal_read` with `view: "screen"` takes no `since`
//! (`Invalid view`).
//! Protocol 1.5.0 adds: `terminal_wait`'s `anyOf` only with `until: "text"`, without `text`, with at
//! most [`MAX_WAIT_TEXTS`] non-empty items (`Invalid anyOf`), and `regex` only with `until: "text"`
//! (`Invalid regex`), and with `regex: true` `text` and every `anyOf` item in the pattern dialect of
//! [`crate::pattern`] (`Invalid text: <reason>`, `Invalid anyOf: item <index>: <reason>`);
//! `terminal_search`'s `pattern` not empty (`Invalid pattern`), with `regex: true` in the dialect
//! (`Invalid pattern: <reason>`), `since` only with
//! `nodeId` (`Invalid since`), `limit` a whole number in 1..=200 (`Invalid limit`) and `context` one
//! in 0..=5 (`Invalid context`).

use std::fmt;

use serde_json::Value;

use crate::args::{
    ReadView, TerminalInputArgs, TerminalReadArgs, TerminalSearchArgs, TerminalWaitArgs, WaitUntil,
};
use crate::keys::is_valid_key;
use crate::operations::{Call, CallError, Param, ParamKind, operation};
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
    /// The members passed every check but do not read as the operation's argument struct: never,
    /// as the struct and the checks come from one table; answered as a refusal, not a panic.
    Unreadable(CallError),
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
            ValidationError::Unreadable(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for ValidationError {}

/// A request body that passed [`validate`], read once: the request with its `args` as JSON text
/// (for the execution log and for handlers that want the raw request) and the same request typed.
#[derive(Debug, Clone)]
pub struct Validated {
    /// The operation and its `args` unchanged (re-encoded compactly, member order kept).
    pub request: ToolRequest,
    /// The operation and its arguments, read from the parsed body (not from `request`'s text).
    pub call: Call,
}

/// Validates a parsed request body against the operation table.
///
/// On success the request is returned twice over ([`Validated`]): with `args` unchanged
/// (re-encoded compactly, member order kept) and `operation` set, and as the typed [`Call`] read
/// from the same parsed `args`.
pub fn validate(body: &Value) -> Result<Validated, ValidationError> {
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
    let Some(args @ Value::Object(members)) = object.and_then(|object| object.get("args")) else {
        return Err(ValidationError::ExpectedArgsObject);
    };
    if let Some(missing) = operation
        .params()
        .iter()
        .find(|param| param.required() && !members.contains_key(param.name()))
    {
        return Err(ValidationError::MissingArgument(missing.name().to_owned()));
    }
    for (name, value) in members {
        let Some(param) = operation.param(name) else {
            return Err(ValidationError::UnknownArgument(name.clone()));
        };
        if !value_fits(param, value) {
            return Err(ValidationError::InvalidArgument(name.clone()));
        }
    }
    let call = Call::from_value(operation.name(), args).map_err(ValidationError::Unreadable)?;
    call.check()?;
    Ok(Validated { request: ToolRequest::new(operation.name(), args), call })
}

impl Call {
    /// The rules of protocols 1.4.0 and 1.5.0 that step 5's per-member checks cannot express
    /// (see the module doc), run once every member passed them: those of this call's argument
    /// type, if it has any.
    pub fn check(&self) -> Result<(), ValidationError> {
        match self {
            Call::TerminalInput(args) => args.check(),
            Call::TerminalRead(args) => args.check(),
            Call::TerminalWait(args) => args.check(),
            Call::TerminalSearch(args) => args.check(),
            _ => Ok(()),
        }
    }
}

fn invalid(name: &str) -> Result<(), ValidationError> {
    Err(ValidationError::InvalidArgument(name.to_owned()))
}

impl TerminalInputArgs {
    /// Every key in the grammar of [`crate::keys`] (`Invalid keys`), and `text` or `keys`
    /// (`Invalid text`).
    pub fn check(&self) -> Result<(), ValidationError> {
        if let Some(keys) = &self.keys
            && !keys.iter().all(|key| is_valid_key(key))
        {
            return invalid("keys");
        }
        if self.text.is_none() && self.keys.is_none() {
            return invalid("text");
        }
        Ok(())
    }
}

impl TerminalReadArgs {
    /// No `since` with `view: "screen"` (`Invalid view`).
    pub fn check(&self) -> Result<(), ValidationError> {
        if self.view == Some(ReadView::Screen) && self.since.is_some() {
            return invalid("view");
        }
        Ok(())
    }
}

impl TerminalWaitArgs {
    /// `anyOf` only with `until: "text"`, without `text`, with at most [`MAX_WAIT_TEXTS`]
    /// non-empty items (`Invalid anyOf`); `regex` only with `until: "text"` (`Invalid regex`);
    /// with `regex: true`, `text` and every `anyOf` item in the pattern dialect
    /// (`Invalid text: <reason>`, `Invalid anyOf: item <index>: <reason>`).
    pub fn check(&self) -> Result<(), ValidationError> {
        let until_text = self.until == WaitUntil::Text;
        if let Some(texts) = &self.any_of
            && (!until_text
                || self.text.is_some()
                || texts.len() > MAX_WAIT_TEXTS
                || texts.iter().any(String::is_empty))
        {
            return invalid("anyOf");
        }
        if self.regex.is_some() && !until_text {
            return invalid("regex");
        }
        if self.regex == Some(true) {
            if let Some(Err(reason)) = self.text.as_deref().map(check) {
                return Err(ValidationError::InvalidPattern("text".to_owned(), reason));
            }
            for (index, text) in self.any_of.iter().flatten().enumerate() {
                if let Err(reason) = check(text) {
                    let reason = format!("item {index}: {reason}");
                    return Err(ValidationError::InvalidPattern("anyOf".to_owned(), reason));
                }
            }
        }
        Ok(())
    }
}

impl TerminalSearchArgs {
    /// `pattern` not empty (`Invalid pattern`), with `regex: true` in the pattern dialect
    /// (`Invalid pattern: <reason>`); `since` only with `nodeId` (`Invalid since`); `limit` a
    /// whole number in 1..=[`MAX_SEARCH_LIMIT`] (`Invalid limit`) and `context` one in
    /// 0..=[`MAX_SEARCH_CONTEXT`] (`Invalid context`).
    pub fn check(&self) -> Result<(), ValidationError> {
        if self.pattern.is_empty() {
            return invalid("pattern");
        }
        if self.regex == Some(true)
            && let Err(reason) = check(&self.pattern)
        {
            return Err(ValidationError::InvalidPattern("pattern".to_owned(), reason));
        }
        if self.since.is_some() && self.node_id.is_none() {
            return invalid("since");
        }
        if !whole_in(self.limit, 1.0, MAX_SEARCH_LIMIT) {
            return invalid("limit");
        }
        if !whole_in(self.context, 0.0, MAX_SEARCH_CONTEXT) {
            return invalid("context");
        }
        Ok(())
    }
}

/// Whether an optional number member is absent or a whole number in `min..=max`.
fn whole_in(value: Option<f64>, min: f64, max: f64) -> bool {
    value.is_none_or(|number| number.fract() == 0.0 && (min..=max).contains(&number))
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
