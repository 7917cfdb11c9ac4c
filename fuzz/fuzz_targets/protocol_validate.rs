//! Fuzz target: `termsprawl_protocol::validate` on arbitrary JSON (`spec/protocol.md` §5).
//!
//! Input: bytes that parse as JSON are the request body as they are. Other bytes drive a generator
//! (`arbitrary::Unstructured`) that writes a body near the interesting edges: real operation names
//! and argument names, JavaScript prototype member names, strings of 255/256 and 64 000/64 001
//! UTF-16 units (astral characters count two), U+0000, number literals around ±1 000 000 in several
//! spellings, arrays of 0, 1, 100 and 101 items, repeated members.
//!
//! Oracle: [`termsprawl_fuzz::spec::validation_error`], the numbered checks of §5 written from the
//! spec against the table typed in from §4.3. The crate must give exactly the oracle's `error`
//! string, and on success a request for the same operation with `args` unchanged (same members,
//! same order, same number literals).

#![no_main]

use arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use termsprawl_fuzz::spec::{Kind, NAMED_KEYS, OPERATIONS, validation_error};
use termsprawl_protocol::validate;

fuzz_target!(|data: &[u8]| {
    let body = if let Ok(body) = serde_json::from_slice::<Value>(data) {
        body
    } else {
        let Ok(text) = generate(&mut Unstructured::new(data)) else { return };
        serde_json::from_str(&text).unwrap_or_else(|error| panic!("{error}: {text}"))
    };
    let expected = validation_error(&body);
    match validate(&body) {
        Ok(validated) => {
            let request = validated.request;
            assert_eq!(expected, None, "validate accepted a body the spec refuses: {body}");
            assert_eq!(request.operation(), body["operation"].as_str());
            assert_eq!(
                Some(validated.call.name()),
                request.operation(),
                "the call is another operation"
            );
            let sent = serde_json::to_string(&body["args"]).expect("args serialise");
            assert_eq!(request.args.get(), sent, "validate changed the arguments");
        }
        Err(error) => assert_eq!(
            Some(error.to_string()),
            expected,
            "validate and the spec's checks disagree on {body}"
        ),
    }
});

/// A request body as JSON text.
fn generate(u: &mut Unstructured<'_>) -> Result<String> {
    let (name, args) = *u.choose(OPERATIONS)?;
    let operation = match u.int_in_range(0..=15)? {
        0 => "null".to_owned(),
        1 => quoted(&format!("{name}x")),
        2 => quoted(&name.to_uppercase()),
        3 => return scalar(u),
        _ => quoted(name),
    };
    let mut members = Vec::new();
    let count = u.int_in_range(0..=6)?;
    for _ in 0..count {
        let member = match u.int_in_range(0..=9)? {
            0 => *u.choose(&["toString", "constructor", "__proto__", "hasOwnProperty", "", "0"])?,
            1 => OPERATIONS[u.choose_index(OPERATIONS.len())?].1.first().map_or("nodeId", |a| a.0),
            _ => match u.choose(args) {
                Ok(arg) => arg.0,
                Err(_) => "title",
            },
        };
        let kind = args.iter().find(|arg| arg.0 == member).map_or(Kind::String, |arg| arg.1);
        let value = if u.ratio(1, 6)? { scalar(u)? } else { value_of(kind, u)? };
        members.push(format!("{}:{value}", quoted(member)));
    }
    // Often every required argument is present, so that the per-member checks run.
    if u.ratio(2, 3)? {
        for (arg, kind, required) in args {
            if *required && !members.iter().any(|member| member.starts_with(&quoted(arg))) {
                members.push(format!("{}:{}", quoted(arg), value_of(*kind, u)?));
            }
        }
    }
    let args_text = match u.int_in_range(0..=12)? {
        0 => "null".to_owned(),
        1 => format!("[{{{}}}]", members.join(",")),
        2 => scalar(u)?,
        _ => format!("{{{}}}", members.join(",")),
    };
    Ok(match u.int_in_range(0..=7)? {
        0 => format!("{{\"args\":{args_text},\"operation\":{operation}}}"),
        1 => format!("{{\"args\":{args_text}}}"),
        2 => format!("{{\"operation\":{operation}}}"),
        3 => format!("[{{\"operation\":{operation},\"args\":{args_text}}}]"),
        4 => format!("{{\"operation\":{operation},\"args\":{args_text},\"extra\":1}}"),
        _ => format!("{{\"operation\":{operation},\"args\":{args_text}}}"),
    })
}

/// A value that fits `kind` most of the time, near its edges.
fn value_of(kind: Kind, u: &mut Unstructured<'_>) -> Result<String> {
    Ok(match kind {
        Kind::String => quoted(&text(u, 64_000)?),
        Kind::Enum(values) => {
            let value = *u.choose(values)?;
            match u.int_in_range(0..=5)? {
                0 => quoted(&value.to_uppercase()),
                1 => quoted(&format!("{value}\u{0}")),
                2 => quoted(&format!(" {value}")),
                _ => quoted(value),
            }
        }
        Kind::Number | Kind::Cursor => number(u)?,
        Kind::Boolean => match u.int_in_range(0..=4)? {
            0 => "false".to_owned(),
            1 => "1".to_owned(),
            2 => "\"true\"".to_owned(),
            _ => "true".to_owned(),
        },
        Kind::Keys => {
            let length = match u.int_in_range(0..=4)? {
                0 => 0,
                1 => 256,
                2 => 257,
                _ => u.int_in_range(1..=4)?,
            };
            let mut items = Vec::with_capacity(length);
            for _ in 0..length {
                items.push(match u.int_in_range(0..=5)? {
                    0 => quoted(&text(u, 255)?),
                    1 => quoted(&format!("C-{}", char::from(u.int_in_range(b'a'..=b'z')?))),
                    2 => quoted(&format!("M-{}", u.choose(NAMED_KEYS)?)),
                    _ => quoted(u.choose(NAMED_KEYS)?),
                });
            }
            format!("[{}]", items.join(","))
        }
        Kind::Strings | Kind::Texts => {
            let most = if kind == Kind::Texts { 16 } else { 100 };
            let length = match u.int_in_range(0..=4)? {
                0 => 0,
                1 => most,
                2 => most + 1,
                _ => u.int_in_range(1..=4)?,
            };
            let mut items = Vec::with_capacity(length);
            for _ in 0..length {
                items.push(if u.ratio(1, 20)? { scalar(u)? } else { quoted(&text(u, 255)?) });
            }
            format!("[{}]", items.join(","))
        }
    })
}

/// A string around `limit` UTF-16 units, or a short arbitrary one.
fn text(u: &mut Unstructured<'_>, limit: usize) -> Result<String> {
    let short: String = u.arbitrary()?;
    Ok(match u.int_in_range(0..=7)? {
        0 => "a".repeat(limit),
        1 => "a".repeat(limit + 1),
        // An astral character is two units: limit − 1 + 2 is one over.
        2 => format!("{}\u{1F600}", "a".repeat(limit - 1)),
        3 => format!("{}\u{1F600}", "a".repeat(limit - 2)),
        4 => format!("{}é", "a".repeat(limit - 1)),
        5 => format!("{short}\u{0}"),
        _ => short,
    })
}

/// A number literal near the ±1 000 000 bound or the cursors' ±(2^53 − 1), or an arbitrary one.
fn number(u: &mut Unstructured<'_>) -> Result<String> {
    let literals = [
        "1000000",
        "-1000000",
        "1000001",
        "1e6",
        "1E6",
        "1.0e6",
        "1000000.0000001",
        "1000000.00000000001",
        "-1000000.5",
        "-0",
        "0.5",
        "1e400",
        "-1e400",
        "1e-400",
        "123456789012345678901234567890",
        "999999.999999999999999999",
        "9007199254740991",
        "9007199254740992",
        "9007199254740993",
        "-9007199254740991",
        "9.007199254740991e15",
        "1e16",
    ];
    if u.ratio(1, 2)? {
        return Ok((*u.choose(&literals)?).to_owned());
    }
    let value: f64 = u.arbitrary()?;
    Ok(if value.is_finite() { format!("{value:?}") } else { "0".to_owned() })
}

/// A value of any JSON type but a fitting one: `null`, booleans, objects, a number, a string.
fn scalar(u: &mut Unstructured<'_>) -> Result<String> {
    Ok(match u.int_in_range(0..=6)? {
        0 => "null".to_owned(),
        1 => "true".to_owned(),
        2 => "{}".to_owned(),
        3 => "[]".to_owned(),
        4 => number(u)?,
        5 => "{\"a\":[1,{\"b\":null}]}".to_owned(),
        _ => quoted(&u.arbitrary::<String>()?),
    })
}

fn quoted(text: &str) -> String {
    Value::String(text.to_owned()).to_string()
}
