//! Tests of the Go-style scanner.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use super::{Scanner, Step};

fn words(words: &[&str]) -> Vec<OsString> {
    words.iter().map(OsString::from).collect()
}

/// Every step as text, with values taken for flags named `v`.
fn steps(args: &[OsString]) -> Vec<String> {
    let mut scanner = Scanner::new(args);
    let mut out = Vec::new();
    loop {
        match scanner.step() {
            Err(message) => {
                out.push(format!("error: {message}"));
                return out;
            }
            Ok(Step::Done) => break,
            Ok(Step::Flag { name, inline }) => {
                let name = String::from_utf8_lossy(name).into_owned();
                let value = match inline {
                    Some(value) => Some(value.to_vec()),
                    None if name == "v" => scanner.value().map(<[u8]>::to_vec),
                    None => None,
                };
                let value = value.map(|v| String::from_utf8_lossy(&v).into_owned());
                out.push(format!("{name}={value:?}"));
            }
        }
    }
    let rest: Vec<String> =
        scanner.rest().iter().map(|a| a.to_string_lossy().into_owned()).collect();
    out.push(format!("rest {rest:?}"));
    out
}

#[test]
fn flags_are_written_with_one_or_two_dashes() {
    assert_eq!(
        steps(&words(&["-a", "--b", "-c=1", "--d=x=y", "--e=", "pos", "--f"])),
        [
            "a=None",
            "b=None",
            "c=Some(\"1\")",
            "d=Some(\"x=y\")",
            "e=Some(\"\")",
            "rest [\"pos\", \"--f\"]"
        ]
    );
}

#[test]
fn a_value_flag_takes_the_next_argument_whatever_it_is() {
    assert_eq!(steps(&words(&["--v", "-5", "x"])), ["v=Some(\"-5\")", "rest [\"x\"]"]);
    assert_eq!(steps(&words(&["--v", "--session"])), ["v=Some(\"--session\")", "rest []"]);
    assert_eq!(steps(&words(&["--v", "--"])), ["v=Some(\"--\")", "rest []"]);
    assert_eq!(steps(&words(&["--v"])), ["v=None", "rest []"]);
}

#[test]
fn flags_end_at_a_non_flag_a_lone_dash_or_a_double_dash() {
    assert_eq!(steps(&words(&["-", "-a"])), ["rest [\"-\", \"-a\"]"]);
    assert_eq!(steps(&words(&["-a", "--", "-b"])), ["a=None", "rest [\"-b\"]"]);
    assert_eq!(steps(&words(&["{}", "-a"])), ["rest [\"{}\", \"-a\"]"]);
    assert_eq!(steps(&words(&[""])), ["rest [\"\"]"]);
}

#[test]
fn bad_syntax_is_reported_as_go_does() {
    assert_eq!(steps(&words(&["---x"])), ["error: bad flag syntax: ---x"]);
    assert_eq!(steps(&words(&["-=x"])), ["error: bad flag syntax: -=x"]);
    assert_eq!(steps(&words(&["--=x"])), ["error: bad flag syntax: --=x"]);
}

#[test]
fn names_may_hold_any_bytes() {
    let args = vec![OsString::from_vec(b"--\xff=\xfe".to_vec())];
    let mut scanner = Scanner::new(&args);
    assert_eq!(scanner.step(), Ok(Step::Flag { name: b"\xff", inline: Some(b"\xfe") }));
}

/// The message for the flag just read, as typed, with the close match among `known`.
fn unknown(arg: &str, known: &[&str]) -> String {
    let args = words(&[arg]);
    let mut scanner = Scanner::new(&args);
    assert!(matches!(scanner.step(), Ok(Step::Flag { .. })), "{arg}");
    scanner.unknown_option(known)
}

#[test]
fn an_unknown_option_is_named_as_typed_with_a_close_match() {
    let mcp = ["read-only", "tools"];
    assert_eq!(unknown("--readonly", &mcp), "unknown option --readonly: did you mean --read-only?");
    assert_eq!(
        unknown("-READ_ONLY=x", &mcp),
        "unknown option -READ_ONLY: did you mean --read-only?"
    );
    assert_eq!(unknown("--tool", &mcp), "unknown option --tool: did you mean --tools?");
    assert_eq!(unknown("--toosl", &mcp), "unknown option --toosl: did you mean --tools?");
    assert_eq!(unknown("--verbose", &mcp), "unknown option --verbose");
    assert_eq!(unknown("-x", &mcp), "unknown option -x");
    let acp = ["cwd", "prompt", "no-mcp", "mcp-read-only", "mcp-tools"];
    assert_eq!(unknown("--cdw", &acp), "unknown option --cdw: did you mean --cwd?");
    assert_eq!(
        unknown("--mcp-readonly", &acp),
        "unknown option --mcp-readonly: did you mean --mcp-read-only?"
    );
    assert_eq!(
        unknown("--mcp-tool=a", &acp),
        "unknown option --mcp-tool: did you mean --mcp-tools?"
    );
}
