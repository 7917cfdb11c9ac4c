//! The hand-written command-line scanner, following the rules and messages of Go's standard
//! `flag` package (`spec/shell-conventions.md` §3), and the operation flags read with it (§4).
//!
//! Arguments are read as bytes (`OsStr`), so that a value that is not UTF-8 reaches the check
//! that names it instead of failing somewhere earlier.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;

use crate::convert::convert;
use crate::describe::{Command, FlagKind, Param, Scalar};
use crate::quote::go_quote;

/// Reads flags from the front of an argument list, one at a time.
pub(crate) struct Scanner<'a> {
    args: &'a [OsString],
    next: usize,
    ended_at_double_dash: bool,
    /// The index of the last flag [`Scanner::step`] returned.
    last_flag: Option<usize>,
}

/// One step of the scanner.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Step<'a> {
    /// A flag: its name, and the value written after `=` if there was one.
    Flag {
        /// The name without dashes.
        name: &'a [u8],
        /// The value after the first `=`.
        inline: Option<&'a [u8]>,
    },
    /// The flags have ended; [`Scanner::rest`] holds the positional arguments.
    Done,
}

impl<'a> Scanner<'a> {
    /// A scanner at the start of `args`.
    pub(crate) fn new(args: &'a [OsString]) -> Scanner<'a> {
        Scanner { args, next: 0, ended_at_double_dash: false, last_flag: None }
    }

    /// The next flag, or the end of the flags: at the first argument that is not a flag (a lone
    /// `-` included), or after `--`, which is dropped.
    pub(crate) fn step(&mut self) -> Result<Step<'a>, String> {
        let Some(arg) = self.args.get(self.next) else { return Ok(Step::Done) };
        let bytes = arg.as_bytes();
        if bytes.len() < 2 || bytes[0] != b'-' {
            return Ok(Step::Done);
        }
        let mut dashes = 1;
        if bytes[1] == b'-' {
            dashes = 2;
            if bytes.len() == 2 {
                self.next += 1;
                self.ended_at_double_dash = true;
                return Ok(Step::Done);
            }
        }
        let name = &bytes[dashes..];
        if name.is_empty() || name[0] == b'-' || name[0] == b'=' {
            return Err(format!("bad flag syntax: {}", arg.to_string_lossy()));
        }
        self.last_flag = Some(self.next);
        self.next += 1;
        Ok(match name.iter().position(|&b| b == b'=') {
            Some(equals) => Step::Flag { name: &name[..equals], inline: Some(&name[equals + 1..]) },
            None => Step::Flag { name, inline: None },
        })
    }

    /// The argument after the flag just read, taken as its value whatever it looks like.
    pub(crate) fn value(&mut self) -> Option<&'a [u8]> {
        let value = self.args.get(self.next)?;
        self.next += 1;
        Some(value.as_bytes())
    }

    /// Whether the flags ended with `--` (rather than at an argument that is not a flag).
    pub(crate) fn ended_at_double_dash(&self) -> bool {
        self.ended_at_double_dash
    }

    /// The arguments not read yet.
    pub(crate) fn rest(&self) -> &'a [OsString] {
        &self.args[self.next..]
    }

    /// The message for the flag just read when none of `known` (names without dashes) has its
    /// name: `unknown option --readonly`, the flag as it was typed (its dashes, without a value
    /// after `=`), then `: did you mean --read-only?` when one of `known` is close (issue 24: a
    /// typo in a narrowing flag must never pass unnoticed).
    pub(crate) fn unknown_option(&self, known: &[&str]) -> String {
        let typed = self.last_flag.map_or(&b""[..], |index| self.args[index].as_bytes());
        let typed = typed.split(|&b| b == b'=').next().unwrap_or_default();
        let typed = String::from_utf8_lossy(typed);
        let name = typed.trim_start_matches('-');
        match closest(name, known) {
            Some(known) => format!("unknown option {typed}: did you mean --{known}?"),
            None => format!("unknown option {typed}"),
        }
    }
}

/// The name of `known` closest to `name`, when one is close: the same letters once case, `_` and
/// `-` are ignored (`read_only`, `readonly`, `mcp-readonly`), else one edit or swap away (`cdw`),
/// else the best Jaro similarity of at least 0.8 (`tool`), the threshold clap's suggestions use, a
/// little stricter.
pub(crate) fn closest<'k>(name: &str, known: &[&'k str]) -> Option<&'k str> {
    let letters = |text: &str| -> String {
        text.chars().filter(|c| *c != '-' && *c != '_').flat_map(char::to_lowercase).collect()
    };
    let wanted = letters(name);
    if wanted.is_empty() {
        return None;
    }
    if let Some(same) = known.iter().find(|known| letters(known) == wanted) {
        return Some(same);
    }
    if let Some(near) =
        known.iter().find(|known| strsim::osa_distance(&wanted, &letters(known)) == 1)
    {
        return Some(near);
    }
    known
        .iter()
        .map(|known| (strsim::jaro(&wanted, &letters(known)), *known))
        .filter(|(similarity, _)| *similarity >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, known)| known)
}

/// The message for a flag nobody defined.
pub(crate) fn undefined(name: &[u8]) -> String {
    format!("flag provided but not defined: -{}", String::from_utf8_lossy(name))
}

/// The message for a value flag at the end of the arguments.
pub(crate) fn needs_argument(name: &[u8]) -> String {
    format!("flag needs an argument: -{}", String::from_utf8_lossy(name))
}

/// Whether `name` asks for help (`-h`, `-help`, `--h`, `--help`) when no flag has that name.
pub(crate) fn is_help(name: &[u8]) -> bool {
    name == b"h" || name == b"help"
}

/// One flag an operation accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FlagSpec {
    /// The name without dashes: the property name, or the field path `parent.field`.
    pub(crate) name: String,
    /// Where the value goes in the arguments object.
    pub(crate) path: Vec<String>,
    /// How it is given and converted.
    pub(crate) kind: FlagKind,
}

/// Every flag of `command`, in schema order with nested fields in place.
pub(crate) fn flag_specs(command: &Command) -> Vec<FlagSpec> {
    let mut specs = Vec::new();
    collect_specs(command.params(), &[], &mut specs);
    specs
}

fn collect_specs(params: &[Param], parent: &[String], specs: &mut Vec<FlagSpec>) {
    for param in params {
        let mut path = parent.to_vec();
        path.push(param.name().to_owned());
        if let (Some(name), Some(kind)) = (param.flag(), param.flag_kind()) {
            specs.push(FlagSpec { name: name.to_owned(), path: path.clone(), kind });
        }
        collect_specs(param.fields(), &path, specs);
    }
}

/// The values one flag was given, converted to JSON text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Given {
    /// A flag given once.
    Scalar(String),
    /// The elements of an array flag, in command-line order.
    Array(Vec<String>),
    /// The entries of a map flag (key, value), in command-line order, keys distinct.
    Map(Vec<(String, String)>),
}

/// The flags of one command line, in the order each first appeared.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct GivenFlags {
    entries: Vec<(FlagSpec, Given)>,
}

impl GivenFlags {
    /// Whether no flag was given.
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The flags and their values, in the order they first appeared.
    pub(crate) fn entries(&self) -> &[(FlagSpec, Given)] {
        &self.entries
    }
}

/// What an operation's command line holds after its flags.
#[derive(Debug, PartialEq)]
pub(crate) enum Scanned<'a> {
    /// `-h` or `--help` (no flag has that name).
    Help,
    /// The flags, and the positional arguments after them.
    Args(GivenFlags, &'a [OsString]),
}

/// Reads the flags of `command` from the front of `args`.
pub(crate) fn scan_operation<'a>(
    command: &Command,
    args: &'a [OsString],
) -> Result<Scanned<'a>, String> {
    let specs = flag_specs(command);
    let mut scanner = Scanner::new(args);
    let mut given = GivenFlags::default();
    loop {
        let (name, inline) = match scanner.step()? {
            Step::Done => break,
            Step::Flag { name, inline } => (name, inline),
        };
        let Some(spec) = specs.iter().find(|spec| spec.name.as_bytes() == name) else {
            if is_help(name) {
                return Ok(Scanned::Help);
            }
            return Err(undefined(name));
        };
        if spec.kind.is_boolean() {
            let raw = inline.unwrap_or(b"true");
            let value = convert(Scalar::Boolean, raw).map_err(|reason| {
                format!("invalid boolean value {} for -{}: {reason}", go_quote(raw), spec.name)
            })?;
            record(&mut given, spec, Entry::Value(value))?;
            continue;
        }
        let raw = match inline {
            Some(raw) => raw,
            None => scanner.value().ok_or_else(|| needs_argument(name))?,
        };
        let invalid = |reason: String| {
            format!("invalid value {} for flag -{}: {reason}", go_quote(raw), spec.name)
        };
        match spec.kind {
            FlagKind::Scalar(scalar) | FlagKind::Array(scalar) => {
                let value = convert(scalar, raw).map_err(invalid)?;
                record(&mut given, spec, Entry::Value(value))?;
            }
            FlagKind::Map(scalar) => {
                let Some(equals) = raw.iter().position(|&b| b == b'=').filter(|&at| at > 0) else {
                    return Err(invalid(format!("{} is not key=value", go_quote(raw))));
                };
                let key = std::str::from_utf8(&raw[..equals]).map_err(|_| {
                    invalid(format!("{} is not valid UTF-8", go_quote(&raw[..equals])))
                })?;
                let value = convert(scalar, &raw[equals + 1..]).map_err(&invalid)?;
                record(&mut given, spec, Entry::MapEntry(key.to_owned(), value))?;
            }
        }
    }
    Ok(Scanned::Args(given, scanner.rest()))
}

/// One converted value of a flag, as JSON text.
enum Entry {
    /// A scalar or an array element.
    Value(String),
    /// A map entry.
    MapEntry(String, String),
}

/// Adds one converted value to what the flag was given before.
fn record(given: &mut GivenFlags, spec: &FlagSpec, entry: Entry) -> Result<(), String> {
    let existing = given.entries.iter_mut().find(|(s, _)| s.name == spec.name).map(|(_, g)| g);
    match (existing, entry) {
        (None, Entry::Value(value)) => {
            let first = match spec.kind {
                FlagKind::Array(_) => Given::Array(vec![value]),
                _ => Given::Scalar(value),
            };
            given.entries.push((spec.clone(), first));
        }
        (None, Entry::MapEntry(key, value)) => {
            given.entries.push((spec.clone(), Given::Map(vec![(key, value)])));
        }
        (Some(Given::Array(values)), Entry::Value(value)) => values.push(value),
        (Some(Given::Map(entries)), Entry::MapEntry(key, value)) => {
            if entries.iter().any(|(existing, _)| *existing == key) {
                let key = go_quote(key.as_bytes());
                return Err(format!("flag -{} gives the key {key} twice", spec.name));
            }
            entries.push((key, value));
        }
        (Some(_), _) => return Err(format!("flag -{} given more than once", spec.name)),
    }
    Ok(())
}

#[cfg(test)]
mod tests;
