//! Tests of operation flags together with the JSON argument, over synthetic schemas.

use std::ffi::OsString;
use std::io;
use std::os::unix::ffi::OsStringExt;

use serde_json::{Value, json};
use termsprawl_protocol::Annotations;

use super::{Args, build_args};
use crate::describe::Command;
use crate::flags::{Scanned, scan_operation};

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "nodeId": {"type": "string"},
            "text": {"type": "string"},
            "x": {"type": "number"},
            "count": {"type": "integer"},
            "force": {"type": "boolean"},
            "maybe": {"type": ["number", "null"]},
            "ids": {"type": "array", "items": {"type": "string"}},
            "bits": {"type": "array", "items": {"type": "boolean"}},
            "env": {"type": "object", "additionalProperties": {"type": "integer"}},
            "a": {"type": "object", "properties": {
                "b": {"type": "string"},
                "c": {"type": "object", "properties": {"d": {"type": "boolean"}}},
                "m": {"type": "object", "additionalProperties": {"type": "string"}}
            }},
            "h": {"type": "object"},
            "any": {}
        }
    })
}

fn command(schema: &Value) -> Command {
    let annotations =
        Annotations { read_only: false, destructive: false, idempotent: false, open_world: false };
    Command::describe("op", "An operation.", annotations, schema)
}

/// The args text the command line sends, `help`, or the error message.
fn run_bytes(args: &[OsString], stdin: &str) -> String {
    let command = command(&schema());
    let (flags, positionals) = match scan_operation(&command, args) {
        Err(message) => return format!("error: {message}"),
        Ok(Scanned::Help) => return "help".to_owned(),
        Ok(Scanned::Args(flags, positionals)) => (flags, positionals),
    };
    let mut stdin = io::Cursor::new(stdin.as_bytes().to_vec());
    match build_args("op", &flags, positionals, &mut stdin) {
        Err(message) => format!("error: {message}"),
        Ok(Args::Empty) => "empty".to_owned(),
        Ok(Args::Raw(text)) => format!("raw {text}"),
        Ok(Args::Merged(text)) => text,
    }
}

fn run(words: &[&str]) -> String {
    run_bytes(&words.iter().map(OsString::from).collect::<Vec<_>>(), "")
}

#[test]
fn each_flag_kind() {
    assert_eq!(run(&[]), "empty");
    assert_eq!(
        run(&["--nodeId", "n1", "--x", "40", "-count=+7", "--force", "--maybe", "-12.5"]),
        r#"{"nodeId":"n1","x":40,"count":7,"force":true,"maybe":-12.5}"#
    );
    assert_eq!(run(&["--force=false"]), r#"{"force":false}"#);
    assert_eq!(
        run(&["--ids", "a", "--nodeId", "n", "--ids", "b"]),
        r#"{"ids":["a","b"],"nodeId":"n"}"#
    );
    assert_eq!(run(&["--bits", "--bits=false", "--bits=T"]), r#"{"bits":[true,false,true]}"#);
    assert_eq!(
        run(&["--env", "A=1", "--env", "B==2"]),
        r#"error: invalid value "B==2" for flag -env: "=2" is not an integer"#
    );
    assert_eq!(run(&["--env", "A=1", "--env", "B=2"]), r#"{"env":{"A":1,"B":2}}"#);
    assert_eq!(run(&["--a.m", "k=v=w", "--a.b", "x"]), r#"{"a":{"m":{"k":"v=w"},"b":"x"}}"#);
    assert_eq!(
        run(&["--a.c.d", "--nodeId", "n", "--a.b", "x"]),
        r#"{"a":{"c":{"d":true},"b":"x"},"nodeId":"n"}"#
    );
}

#[test]
fn number_literals_keep_their_digits() {
    assert_eq!(
        run(&["--x", "123456789012345678901234567890.000000000000000000001"]),
        r#"{"x":123456789012345678901234567890.000000000000000000001}"#
    );
    assert_eq!(run(&["--x", "1.0"]), r#"{"x":1.0}"#);
    assert_eq!(run(&["--x", "+1.0"]), r#"{"x":1}"#);
}

#[test]
fn flag_errors_use_gos_messages() {
    let cases: &[(&[&str], &str)] = &[
        (&["---x"], "bad flag syntax: ---x"),
        (&["--nodeId"], "flag needs an argument: -nodeId"),
        (&["--nope", "1"], "flag provided but not defined: -nope"),
        (&["--session", "s"], "flag provided but not defined: -session"),
        (&["--x", "ten"], r#"invalid value "ten" for flag -x: "ten" is not a number"#),
        (&["--count", "1.5"], r#"invalid value "1.5" for flag -count: "1.5" is not an integer"#),
        (&["--force=yes"], r#"invalid boolean value "yes" for -force: "yes" is not true or false"#),
        (&["--nodeId", "a", "--nodeId", "b"], "flag -nodeId given more than once"),
        (&["--force", "--force"], "flag -force given more than once"),
        (&["--a.b", "a", "-a.b=b"], "flag -a.b given more than once"),
        (&["--env", "A"], r#"invalid value "A" for flag -env: "A" is not key=value"#),
        (&["--env", "=1"], r#"invalid value "=1" for flag -env: "=1" is not key=value"#),
        (&["--env", "A=1", "--env", "A=2"], r#"flag -env gives the key "A" twice"#),
        (&["--a", "x"], "flag provided but not defined: -a"),
        (&["--any", "x"], "flag provided but not defined: -any"),
    ];
    for (words, message) in cases {
        assert_eq!(run(words), format!("error: {message}"), "{words:?}");
    }
}

#[test]
fn help_wherever_no_flag_has_the_name() {
    for word in ["-h", "-help", "--h", "--help"] {
        assert_eq!(run(&["--nodeId", "n", word]), "help");
    }
    // A flag named `h` would win; `h` here is an object, which has no flag.
    assert_eq!(run(&["--help=1"]), "help");
    assert_eq!(
        run(&["{}", "--help"]),
        r#"error: one JSON argument at most, after the flags; got ["{}" "--help"]"#
    );
}

#[test]
fn a_boolean_does_not_take_the_next_word() {
    assert_eq!(run(&["--force", "false"]), "error: the JSON argument is not a JSON object");
}

#[test]
fn json_alone_is_sent_byte_for_byte() {
    assert_eq!(run(&["  {\"b\": 1,  \"a\":\"\\u0041\"}\n"]), "raw {\"b\": 1,  \"a\":\"\\u0041\"}");
    assert_eq!(run_bytes(&[OsString::from("-")], "\n{\"x\": 1e400}\n\n"), "raw {\"x\": 1e400}");
}

#[test]
fn json_checks_in_order() {
    assert_eq!(
        run_bytes(&[OsString::from_vec(b"{\"a\":\"\xff\"}".to_vec())], ""),
        "error: the JSON argument is not valid UTF-8"
    );
    for text in ["null", "[]", "\"s\"", "1", "false", "{", "{\"a\":1} x", ""] {
        assert_eq!(run(&[text]), "error: the JSON argument is not a JSON object", "{text}");
    }
    assert_eq!(
        run(&[r#"{"a":1,"b":{"c":1,"c":2},"a":2}"#]),
        r#"error: the JSON argument gives "a" twice"#
    );
    assert_eq!(run(&[r#"{"a":1,"\u0061":2}"#]), r#"error: the JSON argument gives "a" twice"#);
    assert_eq!(
        run_bytes(&[OsString::from("-")], "[1]"),
        "error: the JSON argument is not a JSON object"
    );
}

#[test]
fn two_positionals() {
    assert_eq!(
        run(&["{\"text\": \"it", "s\"}"]),
        "error: the JSON argument reached termsprawlctl as 2 words: a single quote inside the single quotes ended them; pass it on stdin with: termsprawlctl op - <<'EOF'"
    );
    assert_eq!(
        run(&["{\"a\": \"it", "s", "x\"}"]),
        "error: the JSON argument reached termsprawlctl as 3 words: a single quote inside the single quotes ended them; pass it on stdin with: termsprawlctl op - <<'EOF'"
    );
    assert_eq!(
        run(&["{}", "{}"]),
        r#"error: one JSON argument at most, after the flags; got ["{}" "{}"]"#
    );
    assert_eq!(
        run(&["a", "b \"q\"\n"]),
        r#"error: one JSON argument at most, after the flags; got ["a" "b \"q\"\n"]"#
    );
}

#[test]
fn flags_add_to_the_json() {
    assert_eq!(
        run(&["--x", "1", "--nodeId", "n", r#"{"text":"t","a":{"b":"x"}}"#]),
        r#"{"text":"t","a":{"b":"x"},"x":1,"nodeId":"n"}"#
    );
    assert_eq!(run(&["--a.c.d", r#"{"a":{"b":"x"}}"#]), r#"{"a":{"b":"x","c":{"d":true}}}"#);
    assert_eq!(run(&["--env", "B=2", r#"{"env":{"A":1}}"#]), r#"{"env":{"A":1,"B":2}}"#);
}

#[test]
fn overlaps_are_errors() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["--nodeId", "n", r#"{"nodeId":"m"}"#],
            r#"--nodeId and the JSON argument both give "nodeId""#,
        ),
        (&["--a.b", "y", r#"{"a":{"b":"x"}}"#], r#"--a.b and the JSON argument both give "a.b""#),
        (
            &["--env", "A=2", r#"{"env":{"A":1}}"#],
            r#"--env and the JSON argument both give "env.A""#,
        ),
        (
            &["--a.m", "k=2", r#"{"a":{"m":{"k":"1"}}}"#],
            r#"--a.m and the JSON argument both give "a.m.k""#,
        ),
        (&["--ids", "a", r#"{"ids":[]}"#], r#"--ids and the JSON argument both give "ids""#),
        (
            &["--a.b", "y", r#"{"a":null}"#],
            r#"the JSON argument gives "a", which is not an object"#,
        ),
        (
            &["--a.c.d", r#"{"a":{"c":[]}}"#],
            r#"the JSON argument gives "a.c", which is not an object"#,
        ),
        (
            &["--env", "A=1", r#"{"env":"x"}"#],
            r#"the JSON argument gives "env", which is not an object"#,
        ),
    ];
    for (words, message) in cases {
        assert_eq!(run(words), format!("error: {message}"), "{words:?}");
    }
}

#[test]
fn merged_json_values_keep_their_text() {
    assert_eq!(
        run(&["--x", "2", r#"{ "n" : 1E5, "s": "\u00e9", "l": [1, 2.50] }"#]),
        r#"{"n":1E5,"s":"\u00e9","l":[1, 2.50],"x":2}"#
    );
    assert_eq!(run(&["--a.b", "y", r#"{"a":{"z":1.0,"z":2.0}}"#]), r#"{"a":{"z":2.0,"b":"y"}}"#);
}
