//! The JSON argument of the direct form and how it combines with the flags
//! (`spec/shell-conventions.md` §5).
//!
//! Flags add to the JSON and neither side wins: any overlap is an error. Without flags the JSON
//! text travels byte for byte. With flags the object is re-encoded, but every value is carried as
//! the JSON text it was written as (JSON members as [`RawValue`]s, flag values as converted), so
//! that no number is respelled or rounded.

use std::collections::HashSet;
use std::ffi::OsString;
use std::fmt;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;

use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::flags::{Given, GivenFlags};
use crate::quote::{go_quote, go_quote_list};

/// The `args` of the request, as the command line gives them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Args {
    /// Neither flags nor JSON: `{}`.
    Empty,
    /// Only JSON: the trimmed text, sent unchanged.
    Raw(String),
    /// Flags, with or without JSON: the merged object, encoded compactly at the levels the flags
    /// reached.
    Merged(String),
}

/// Combines the flags with the positional arguments after them; `-` reads the JSON from `stdin`.
pub(crate) fn build_args(
    operation: &str,
    flags: &GivenFlags,
    positionals: &[OsString],
    stdin: &mut dyn Read,
) -> Result<Args, String> {
    let text = match positionals {
        [] => None,
        [only] => Some(json_text(only, stdin)?),
        [first, ..] => return Err(too_many(operation, first, positionals)),
    };
    if flags.is_empty() {
        return Ok(match text {
            Some(text) => Args::Raw(text),
            None => Args::Empty,
        });
    }
    let members = match text {
        Some(text) => members_of(&text).expect("json_text returns a JSON object"),
        None => Vec::new(),
    };
    let merged = merge(members, flags)?;
    let mut out = String::new();
    encode_object(&merged, &mut out);
    Ok(Args::Merged(out))
}

/// The checked text of the one JSON argument.
fn json_text(positional: &OsString, stdin: &mut dyn Read) -> Result<String, String> {
    let mut bytes = positional.as_bytes().to_vec();
    if bytes == b"-" {
        bytes.clear();
        stdin
            .read_to_end(&mut bytes)
            .map_err(|error| format!("cannot read the JSON argument from stdin: {error}"))?;
    }
    let text = String::from_utf8(trim(&bytes).to_vec())
        .map_err(|_| "the JSON argument is not valid UTF-8".to_owned())?;
    let not_an_object = || "the JSON argument is not a JSON object".to_owned();
    if !text.starts_with('{') || serde_json::from_str::<IgnoredAny>(&text).is_err() {
        return Err(not_an_object());
    }
    // The check above skips over string contents; the top-level names must also be readable as
    // strings, or neither the duplicate check nor the merge could compare them (a name written as
    // a lone surrogate escape, `"\ud800"`, is not a Unicode string).
    match first_duplicate(&text) {
        Err(()) => Err(not_an_object()),
        Ok(Some(key)) => Err(format!("the JSON argument gives {} twice", go_quote(key.as_bytes()))),
        Ok(None) => Ok(text),
    }
}

/// The message for two or more positional arguments.
fn too_many(operation: &str, first: &OsString, positionals: &[OsString]) -> String {
    let first = trim(first.as_bytes());
    let valid_alone = serde_json::from_slice::<IgnoredAny>(first).is_ok();
    if first.starts_with(b"{") && !valid_alone {
        return format!(
            "the JSON argument reached termsprawlctl as {} words: a single quote inside the single quotes ended them; pass it on stdin with: termsprawlctl {operation} - <<'EOF'",
            positionals.len()
        );
    }
    format!(
        "one JSON argument at most, after the flags; got {}",
        go_quote_list(positionals.iter().map(|p| p.as_bytes()))
    )
}

fn trim(bytes: &[u8]) -> &[u8] {
    let is_space = |b: &u8| b.is_ascii_whitespace() || *b == 0x0b;
    let start = bytes.iter().position(|b| !is_space(b)).unwrap_or(bytes.len());
    let end = bytes.iter().rposition(|b| !is_space(b)).map_or(start, |at| at + 1);
    &bytes[start..end]
}

/// The first top-level member name that the object `text` gives twice; `Err` when a name cannot
/// be read as a string.
///
/// JSON parsers keep the last duplicate silently, so the names are read one by one here.
fn first_duplicate(text: &str) -> Result<Option<String>, ()> {
    struct Names;

    impl<'de> Visitor<'de> for Names {
        type Value = Option<String>;

        fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
            formatter.write_str("a JSON object")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<String>, A::Error> {
            let mut seen = HashSet::new();
            let mut duplicate = None;
            while let Some(name) = map.next_key::<String>()? {
                map.next_value::<IgnoredAny>()?;
                if duplicate.is_none() && !seen.insert(name.clone()) {
                    duplicate = Some(name);
                }
            }
            Ok(duplicate)
        }
    }

    let mut deserializer = serde_json::Deserializer::from_str(text);
    deserializer.deserialize_map(Names).map_err(|_| ())
}

/// A JSON value while flags are merged into it: an object the flags reached, or a value kept as
/// the text it was written as.
#[derive(Debug)]
enum Node {
    Raw(Box<RawValue>),
    Object(Vec<(String, Node)>),
}

/// The members of the JSON object `text`, values as written; `None` when it is not an object.
///
/// A name given twice keeps its first position and its last value, as JSON parsers do.
fn members_of(text: &str) -> Option<Vec<(String, Node)>> {
    struct Members;

    impl<'de> Visitor<'de> for Members {
        type Value = Vec<(String, Node)>;

        fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
            formatter.write_str("a JSON object")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut members: Vec<(String, Node)> = Vec::new();
            while let Some(name) = map.next_key::<String>()? {
                let value = Node::Raw(map.next_value::<Box<RawValue>>()?);
                match members.iter_mut().find(|(existing, _)| *existing == name) {
                    Some(member) => member.1 = value,
                    None => members.push((name, value)),
                }
            }
            Ok(members)
        }
    }

    if !text.starts_with('{') {
        return None;
    }
    let mut deserializer = serde_json::Deserializer::from_str(text);
    deserializer.deserialize_map(Members).ok()
}

/// The JSON's members in their order, then the flags' members in the order the flags first
/// appeared; any member both give is an error.
fn merge(
    mut members: Vec<(String, Node)>,
    flags: &GivenFlags,
) -> Result<Vec<(String, Node)>, String> {
    for (spec, given) in flags.entries() {
        let (last, parents) = spec.path.split_last().expect("a flag has a path");
        let mut target = &mut members;
        for (depth, segment) in parents.iter().enumerate() {
            let node = member(target, segment, || Node::Object(Vec::new()));
            target = expand(node).ok_or_else(|| not_an_object(&spec.path[..=depth]))?;
        }
        let path = spec.path.join(".");
        let both_give = |path: &str| {
            format!("--{} and the JSON argument both give {}", spec.name, go_quote(path.as_bytes()))
        };
        let exists = target.iter().any(|(name, _)| name == last);
        match given {
            Given::Scalar(_) | Given::Array(_) if exists => return Err(both_give(&path)),
            Given::Scalar(text) => target.push((last.clone(), raw(text.clone()))),
            Given::Array(texts) => {
                target.push((last.clone(), raw(format!("[{}]", texts.join(",")))));
            }
            Given::Map(entries) => {
                let node = member(target, last, || Node::Object(Vec::new()));
                let object = expand(node).ok_or_else(|| not_an_object(&spec.path))?;
                for (key, text) in entries {
                    if object.iter().any(|(name, _)| name == key) {
                        return Err(both_give(&format!("{path}.{key}")));
                    }
                    object.push((key.clone(), raw(text.clone())));
                }
            }
        }
    }
    Ok(members)
}

/// The member `name` of `members`, appended as `new()` when missing.
fn member<'a>(
    members: &'a mut Vec<(String, Node)>,
    name: &str,
    new: impl FnOnce() -> Node,
) -> &'a mut Node {
    let index = members.iter().position(|(existing, _)| existing == name).unwrap_or_else(|| {
        members.push((name.to_owned(), new()));
        members.len() - 1
    });
    &mut members[index].1
}

/// The members of `node` when it is an object, parsing it if it is still raw text.
fn expand(node: &mut Node) -> Option<&mut Vec<(String, Node)>> {
    if let Node::Raw(text) = node {
        *node = Node::Object(members_of(text.get())?);
    }
    match node {
        Node::Object(members) => Some(members),
        Node::Raw(_) => None,
    }
}

fn raw(text: String) -> Node {
    Node::Raw(RawValue::from_string(text).expect("flag values convert to valid JSON"))
}

fn encode_object(members: &[(String, Node)], out: &mut String) {
    out.push('{');
    for (index, (name, node)) in members.iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        out.push_str(&Value::from(name.as_str()).to_string());
        out.push(':');
        match node {
            Node::Raw(text) => out.push_str(text.get()),
            Node::Object(members) => encode_object(members, out),
        }
    }
    out.push('}');
}

fn not_an_object(path: &[String]) -> String {
    format!(
        "the JSON argument gives {}, which is not an object",
        go_quote(path.join(".").as_bytes())
    )
}

#[cfg(test)]
mod tests;
