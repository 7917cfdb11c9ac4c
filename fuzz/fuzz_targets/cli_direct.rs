//! Fuzz target: the direct-form command line of `termsprawlctl` and its flags-plus-JSON merge
//! (`termsprawl_cli::operation_args`, `spec/shell-conventions.md` §3 – §5), against the real
//! operation table.
//!
//! Input: the first byte picks the operation (its value modulo the 37 operations) and how flags
//! are written when re-rendered (its high three bits); the rest, up to the first `00 00 00`, is the words
//! after the operation's name, separated by `00` (a real argument can never hold a NUL, so every
//! other byte, invalid UTF-8 included, can be in a word); what follows `00 00 00` is stdin, read
//! for a `-` positional.
//!
//! Oracles:
//! - nothing panics, and an accepted command line gives a JSON object (`args` text that starts
//!   with `{` and parses);
//! - round trip: the accepted `args`, re-rendered as a command line (each member whose property the
//!   table of `spec/protocol.md` §4.3 has, and whose value a flag can carry, as that property's flag
//!   in one of the spellings of §3 — `--name=v`, `-name=v`, `--name v`, `-name v`, arrays as one
//!   flag per item — and the other members as one JSON argument, sometimes after `--`, sometimes on
//!   stdin) parses back to the same object (same members, same values, same number literals).

#![no_main]

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value};
use termsprawl_cli::{OperationArgs, operation_args};
use termsprawl_fuzz::spec::{Kind, OPERATIONS, arguments};

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else { return };
    let (operation, _) = OPERATIONS[usize::from(first) % OPERATIONS.len()];
    let style = first >> 5;
    let (argv, stdin) = match rest.windows(3).position(|window| window == [0, 0, 0]) {
        Some(at) => (&rest[..at], &rest[at + 3..]),
        None => (rest, &[][..]),
    };
    let words: Vec<OsString> = if argv.is_empty() {
        Vec::new()
    } else {
        argv.split(|&byte| byte == 0).map(|word| OsString::from_vec(word.to_vec())).collect()
    };
    let Ok(OperationArgs::Args(text)) = operation_args(operation, &words, &mut &stdin[..]) else {
        return;
    };
    assert!(text.starts_with('{'), "args that are not an object: {text}");
    let parsed = serde_json::from_str::<&serde_json::value::RawValue>(&text);
    assert!(parsed.is_ok(), "accepted args that are not JSON: {text}");
    // A lone surrogate escape (`"\ud800"`) is JSON text but not a Rust string: the CLI passes it
    // through untouched, as it must, and there is no `Value` to round-trip.
    let Ok(Value::Object(object)) = serde_json::from_str::<Value>(&text) else { return };

    let (words, stdin) = render(operation, &object, style);
    let again = operation_args(operation, &words, &mut &stdin[..]);
    let Ok(OperationArgs::Args(again)) = again else {
        panic!("{operation} {words:?} (stdin {stdin:?}), rendered from {text}, gives {again:?}")
    };
    let again_object: Value = serde_json::from_str(&again).expect("the second parse gives JSON");
    // `Map` equality ignores member order (flags come after the JSON argument's members) and
    // compares number literals as written (`arbitrary_precision`).
    assert_eq!(
        again_object,
        Value::Object(object),
        "{operation} {words:?} (stdin {stdin:?}) gives {again}, not {text}"
    );
});

/// A command line for `args`: flags where the table has a flag for the member and a flag can
/// carry its value, a JSON argument for the rest. Returns the words and stdin.
fn render(operation: &str, args: &Map<String, Value>, style: u8) -> (Vec<OsString>, Vec<u8>) {
    let table = arguments(operation).expect("an operation of the table");
    let dashes = if style & 1 == 0 { "--" } else { "-" };
    let separate = style & 2 != 0;
    let mut words = Vec::new();
    let mut rest = Map::new();
    let mut flag = |name: &str, value: String| {
        if separate {
            words.push(OsString::from(format!("{dashes}{name}")));
            words.push(OsString::from(value));
        } else {
            words.push(OsString::from(format!("{dashes}{name}={value}")));
        }
    };
    for (name, value) in args {
        let kind = table.iter().find(|(arg, _, _)| arg == name).map(|(_, kind, _)| *kind);
        match (kind, value) {
            (Some(Kind::String | Kind::Enum(_)), Value::String(text)) => flag(name, text.clone()),
            (Some(Kind::Number | Kind::Cursor), Value::Number(number)) => {
                flag(name, number.to_string());
            }
            // A boolean flag takes its value only after `=` (Go's rules): `--keep=false`.
            (Some(Kind::Boolean), Value::Bool(set)) if !separate => flag(name, set.to_string()),
            (Some(Kind::Strings | Kind::Keys | Kind::Texts), Value::Array(items))
                if !items.is_empty() && items.iter().all(Value::is_string) =>
            {
                for item in items {
                    flag(name, item.as_str().unwrap_or_default().to_owned());
                }
            }
            _ => {
                rest.insert(name.clone(), value.clone());
            }
        }
    }
    let mut stdin = Vec::new();
    if !rest.is_empty() {
        let json = Value::Object(rest).to_string();
        match style >> 2 {
            0 => {
                words.push(OsString::from("--"));
                words.push(OsString::from(json));
            }
            1 => {
                words.push(OsString::from("-"));
                stdin = format!("\n {json}\t\n").into_bytes();
            }
            _ => words.push(OsString::from(json)),
        }
    }
    (words, stdin)
}
