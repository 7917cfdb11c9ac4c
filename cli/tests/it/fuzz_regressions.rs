//! Inputs the `cli_direct` fuzz target found (`fuzz/fuzz_targets/cli_direct.rs`), each kept as a
//! plain test of the public parser and of the real binary.

use std::ffi::OsString;
use std::process::{Command, Stdio};

use termsprawl_cli::operation_args;

const NOT_AN_OBJECT: &str = "the JSON argument is not a JSON object";

fn parse(operation: &str, words: &[&str]) -> Result<termsprawl_cli::OperationArgs, String> {
    let words: Vec<OsString> = words.iter().map(OsString::from).collect();
    operation_args(operation, &words, &mut &b""[..])
}

/// Runs `termsprawlctl` with a session flag (never read: the command line fails first).
fn run(words: &[&str]) -> (Option<i32>, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_termsprawlctl"))
        .args(["--session", "/nonexistent/sessions/agent-1.json"])
        .args(words)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap();
    (output.status.code(), text(output.stdout), text(output.stderr))
}

/// Found by `cli_direct` after 2.9 million runs: a flag together with a JSON argument whose member
/// name is a lone surrogate escape panicked in the merge (`json_text returns a JSON object`),
/// because the validity check skipped string contents and the merge then could not read the name.
#[test]
fn a_member_name_with_a_lone_surrogate_is_not_a_json_object_with_flags() {
    assert_eq!(
        parse("agent_send", &["-text", "", r#"{"\udd19":""}"#]),
        Err(NOT_AN_OBJECT.to_owned())
    );
    let (code, stdout, stderr) = run(&["agent_send", "-text", "", r#"{"\udd19":""}"#]);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        format!(
            "termsprawlctl: agent_send: {NOT_AN_OBJECT}\nRun `termsprawlctl help` for usage.\n"
        )
    );
}

/// The same names without flags: the duplicate check (`spec/shell-conventions.md` §5 step 3)
/// cannot compare such names, so they are refused too instead of being sent unchecked.
#[test]
fn a_member_name_with_a_lone_surrogate_is_not_a_json_object_without_flags() {
    assert_eq!(parse("agent_send", &[r#"{"\ud800":1,"\ud800":2}"#]), Err(NOT_AN_OBJECT.to_owned()));
    assert_eq!(parse("canvas_list", &[r#"{"a\udfff":1}"#]), Err(NOT_AN_OBJECT.to_owned()));
    let (code, _, stderr) = run(&["agent_send", r#"{"\ud800":1,"\ud800":2}"#]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.starts_with(&format!("termsprawlctl: agent_send: {NOT_AN_OBJECT}\n")));
}

/// Lone surrogates inside values are still carried as written: only names need decoding.
#[test]
fn a_lone_surrogate_in_a_value_still_travels_unchanged() {
    assert_eq!(
        parse("sticky_open", &[r#"{"text":"\ud800"}"#]),
        Ok(termsprawl_cli::OperationArgs::Args(r#"{"text":"\ud800"}"#.to_owned()))
    );
    assert_eq!(
        parse("agent_send", &["--text", "t", r#"{"nodeId":"\udd19"}"#]),
        Ok(termsprawl_cli::OperationArgs::Args(r#"{"nodeId":"\udd19","text":"t"}"#.to_owned()))
    );
}
