//! Converting one flag value to JSON by the type its schema names (`spec/shell-conventions.md` §4).
//!
//! A value is returned as JSON text, so that a number literal travels exactly as written (a
//! parsed `serde_json::Number` would respell its exponent). The error is the reason Go's `flag`
//! package appends after `invalid value "…" for flag -x: `.

use serde_json::Value;

use crate::describe::Scalar;
use crate::quote::go_quote;

/// `raw` converted to the JSON text of the value a flag of type `scalar` gives.
pub(crate) fn convert(scalar: Scalar, raw: &[u8]) -> Result<String, String> {
    match scalar {
        Scalar::String => match std::str::from_utf8(raw) {
            Ok(text) => Ok(Value::from(text).to_string()),
            Err(_) => Err(format!("{} is not valid UTF-8", go_quote(raw))),
        },
        Scalar::Number => std::str::from_utf8(raw)
            .ok()
            .and_then(number)
            .ok_or_else(|| format!("{} is not a number", go_quote(raw))),
        Scalar::Integer => std::str::from_utf8(raw)
            .ok()
            .and_then(integer)
            .ok_or_else(|| format!("{} is not an integer", go_quote(raw))),
        Scalar::Boolean => std::str::from_utf8(raw)
            .ok()
            .and_then(boolean)
            .map(|value| value.to_string())
            .ok_or_else(|| format!("{} is not true or false", go_quote(raw))),
    }
}

/// A number: a JSON number literal as written, else a finite decimal float in shortest form.
fn number(text: &str) -> Option<String> {
    if is_json_number(text) {
        return Some(text.to_owned());
    }
    let float: f64 = text.parse().ok()?;
    if !float.is_finite() {
        return None;
    }
    Some(shortest(float))
}

/// An integer: a 64-bit integer written canonically, else a JSON number literal without fraction
/// or negative exponent, as written.
fn integer(text: &str) -> Option<String> {
    if let Ok(signed) = text.parse::<i64>() {
        return Some(signed.to_string());
    }
    if let Ok(unsigned) = text.parse::<u64>() {
        return Some(unsigned.to_string());
    }
    let negative_exponent = text.contains("e-") || text.contains("E-");
    if is_json_number(text) && !text.contains('.') && !negative_exponent {
        return Some(text.to_owned());
    }
    None
}

/// Go's `strconv.ParseBool` spellings.
fn boolean(text: &str) -> Option<bool> {
    match text {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// The JSON number grammar: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
fn is_json_number(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut at = usize::from(bytes.first() == Some(&b'-'));
    let digits = |at: &mut usize| {
        let start = *at;
        while bytes.get(*at).is_some_and(u8::is_ascii_digit) {
            *at += 1;
        }
        *at - start
    };
    match bytes.get(at) {
        Some(b'0') => at += 1,
        Some(b'1'..=b'9') => {
            digits(&mut at);
        }
        _ => return false,
    }
    if bytes.get(at) == Some(&b'.') {
        at += 1;
        if digits(&mut at) == 0 {
            return false;
        }
    }
    if matches!(bytes.get(at), Some(b'e' | b'E')) {
        at += 1;
        if matches!(bytes.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        if digits(&mut at) == 0 {
            return false;
        }
    }
    at == bytes.len()
}

/// The shortest text that reads back as `float`, in plain notation from 1e-6 up to 1e21 and in
/// exponent notation outside (as JavaScript and Go's JSON encoder write numbers).
fn shortest(float: f64) -> String {
    let magnitude = float.abs();
    if magnitude != 0.0 && !(1e-6..1e21).contains(&magnitude) {
        format!("{float:e}")
    } else {
        format!("{float}")
    }
}

#[cfg(test)]
mod tests;
