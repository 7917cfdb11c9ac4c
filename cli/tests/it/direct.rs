//! The direct form, `spec/shell-conventions.md` §1–§5 and §10: flags, the JSON argument, how the
//! shell's quoting reaches the server, and every command-line error with its exit status.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use crate::support::{Fixture, RawServer, Run};

/// Runs each argument list with `--session` first and joins the transcripts.
fn transcripts(fixture: &Fixture, cases: &[&[&str]]) -> String {
    let transcripts: Vec<String> =
        cases.iter().map(|args| fixture.check(fixture.ctl_session().args(*args))).collect();
    transcripts.join("\n")
}

#[test]
fn flags_of_every_kind_in_the_table() {
    let fixture = Fixture::new();
    insta::assert_snapshot!(transcripts(
        &fixture,
        &[
            // string
            &["browser_open", "--url", "https://example.com/?a=1&b=2"],
            // array of string, repeated, in command-line order
            &["canvas_select", "--nodeIds", "sticky-1", "--nodeIds", "term-2"],
            // numbers: literals kept, other decimal floats in shortest form
            &["canvas_move", "--nodeId", "n1", "--x", "40", "--y", "-12.5"],
            &["canvas_resize", "--nodeId", "n1", "--width", "+640", "--height", "480.0"],
            &["terminal_read", "--nodeId", "t", "--maxChars", "1.5"],
            // enum strings are not checked locally
            &["guide_read", "--topic", "canvas"],
            &["guide_read", "--topic", "nope"],
            &["agent_reply", "--taskId", "t1", "--text", "done", "--state", "completed"],
            // Go's spellings: one or two dashes, `=`
            &["terminal_read", "-nodeId", "t", "--maxChars=20"],
            &["terminal_read", "-nodeId=t", "--", r#"{"maxChars": 5}"#],
            // flags and JSON together
            &["terminal_read", "--maxChars", "7", r#"{"nodeId": "t"}"#],
            // no arguments at all
            &["canvas_list"],
        ]
    ));
}

#[test]
fn command_line_errors_exit_2_and_send_nothing() {
    let fixture = Fixture::new();
    insta::assert_snapshot!(transcripts(
        &fixture,
        &[
            &["---x"],
            &["terminal_read", "---x"],
            &["terminal_read", "-=x"],
            &["terminal_read", "--nodeId"],
            &["terminal_read", "--bogus", "1"],
            &["terminal_read", "--session", "x"],
            &["terminal_read", "--nodeId", "t", "--maxChars", "ten"],
            &["terminal_read", "--nodeId", "t", "--maxChars", "NaN"],
            &["terminal_read", "--nodeId", "a", "--nodeId", "b"],
            &["terminal_read", "null"],
            &["terminal_read", "[]"],
            &["terminal_read", "{"],
            &["terminal_read", r#"{"nodeId":"a","nodeId":"b"}"#],
            &["terminal_read", "{}", "{}"],
            &["terminal_read", "--nodeId", "t", "{}", "--maxChars", "5"],
            &["terminal_read", "--nodeId", "t", r#"{"nodeId":"u"}"#],
            &["canvas_select", "--nodeIds", "a", r#"{"nodeIds":["b"]}"#],
            &["frobnicate"],
            &["--answer", "yes", "terminal_read"],
            &["--record", "f", "terminal_read"],
            &["--out"],
            &["--out", "d", "call", "session_info"],
            &["--out", "d", "doctor"],
            &["--out", "d", "mcp"],
            &["acp"],
            &["acp", "--", "/nonexistent/agent"],
        ]
    ));
}

#[test]
fn compatibility_words_after_program_options_are_usage_errors() {
    let fixture = Fixture::new();
    let session = fixture.session_file().to_string_lossy().into_owned();
    let runs = [format!("--session={session}"), format!("-session={session}")];
    let mut out = Vec::new();
    for option in runs {
        out.push(fixture.check(fixture.ctl().arg(option).arg("doctor")));
    }
    out.push(fixture.check(fixture.ctl().args(["-session"]).arg(&session).arg("call")));
    insta::assert_snapshot!(out.join("\n"));
}

#[test]
fn a_split_json_argument_is_explained() {
    let fixture = Fixture::new();
    let script = r#"$CTL terminal_submit '{"nodeId": "term-2", "command": "echo it's Bob's"}'"#;
    insta::assert_snapshot!(
        fixture.check(
            fixture.ctl().shell(script).env("TERMSPRAWL_SESSION_FILE", fixture.session_file())
        )
    );
}

#[test]
fn bytes_that_are_not_utf8() {
    let fixture = Fixture::new();
    let bad = |bytes: &[u8]| OsString::from_vec(bytes.to_vec());
    let mut out = Vec::new();
    let mut run = fixture.ctl_session();
    run.args(["terminal_submit", "--nodeId", "t", "--command"]).arg(bad(b"caf\xe9"));
    out.push(fixture.check(&mut run));
    let mut run = fixture.ctl_session();
    run.args(["terminal_read", "--maxChars"]).arg(bad(b"\xff"));
    out.push(fixture.check(&mut run));
    let mut run = fixture.ctl_session();
    run.arg("terminal_read").arg(bad(b"{\"nodeId\": \"\xff\"}"));
    out.push(fixture.check(&mut run));
    let mut run = fixture.ctl_session();
    run.arg(bad(b"\xffop"));
    out.push(fixture.check(&mut run));
    insta::assert_snapshot!(out.join("\n"));
}

#[test]
fn command_line_errors_come_before_a_missing_session() {
    let fixture = Fixture::new();
    let mut out = Vec::new();
    for args in [
        &["terminal_read", "--bogus"][..],
        &["terminal_read", "{"],
        &["terminal_read", "--nodeId", "t"],
        &["canvas_list"],
    ] {
        out.push(fixture.check(fixture.ctl().args(args)));
    }
    out.push(fixture.check(fixture.ctl().args(["--session", "", "canvas_list"])));
    out.push(fixture.check(fixture.ctl().arg("canvas_list").env("TERMSPRAWL_SESSION_FILE", "")));
    out.push(fixture.check(
        fixture.ctl().arg("canvas_list").env("TERMSPRAWL_SESSION_FILE", fixture.session_file()),
    ));
    insta::assert_snapshot!(out.join("\n"));
}

/// The issue's acceptance: a value with a single quote, a double quote and a `$` reaches the
/// server exactly as the shell meant it.
#[test]
fn the_shell_s_quoting_reaches_the_server_unchanged() {
    let fixture = Fixture::new();
    let script = r#"$CTL terminal_submit --nodeId X --command 'echo "it'"'"'s $HOME"'"#;
    let output = fixture
        .ctl()
        .shell(script)
        .env("TERMSPRAWL_SESSION_FILE", fixture.session_file())
        .env("HOME", "/home/should-not-expand")
        .output();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let received = fixture.take_received();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].operation, "terminal_submit");
    let args: serde_json::Value = serde_json::from_str(&received[0].args).unwrap();
    assert_eq!(args, serde_json::json!({"nodeId": "X", "command": "echo \"it's $HOME\""}));
}

#[test]
fn quoting_edge_cases() {
    let fixture = Fixture::new();
    let scripts = [
        // Double quotes with the four escapes.
        r#"$CTL terminal_submit --nodeId X --command "printf \"\$HOME \`date\` \\ done\"""#,
        // Backticks and dollars inside single quotes stay literal.
        r"$CTL terminal_submit --nodeId X --command 'echo `id` $(pwd) ${HOME}'",
        // A real line break inside double quotes; `\n` stays two characters.
        "$CTL terminal_input --nodeId X --text \"line one\nline two \\n\"",
        // Values with leading dashes, and values that are option names.
        "$CTL terminal_input --nodeId X --text -5",
        "$CTL terminal_input --nodeId X --text --",
        "$CTL terminal_submit --nodeId X --command --session",
        "$CTL terminal_submit --nodeId --command --command --nodeId",
        "$CTL terminal_input --nodeId X --text=--text=-",
        // JSON in single quotes with \\n inside a string.
        r#"$CTL terminal_input --nodeId term-2 '{"text": "y\n"}'"#,
        // JSON on stdin for a value with a single quote.
        "$CTL terminal_submit - <<'EOF'\n{\"nodeId\": \"term-2\", \"command\": \"grep -n 'TODO' notes.txt\"}\nEOF",
        // Flags plus JSON on stdin.
        "printf '%s' '{\"command\": \"ls -l\"}' | $CTL terminal_submit --nodeId term-3 -",
        // Empty strings are values too.
        "$CTL terminal_input --nodeId '' --text ''",
    ];
    let transcripts: Vec<String> = scripts
        .iter()
        .map(|script| {
            fixture.check(
                fixture.ctl().shell(script).env("TERMSPRAWL_SESSION_FILE", fixture.session_file()),
            )
        })
        .collect();
    insta::assert_snapshot!(transcripts.join("\n"));
}

#[test]
fn json_on_stdin() {
    let fixture = Fixture::new();
    let out = [
        fixture.check(
            fixture.ctl_session().args(["terminal_read", "-"]).stdin("\n  {\"nodeId\": \"t\"}\n\n"),
        ),
        fixture.check(
            fixture
                .ctl_session()
                .args(["terminal_read", "--nodeId", "t", "-"])
                .stdin("{\"maxChars\": 9}"),
        ),
        fixture.check(fixture.ctl_session().args(["terminal_read", "-"]).stdin("")),
        fixture.check(fixture.ctl_session().args(["terminal_read", "-"]).stdin("[1]")),
        fixture.check(fixture.ctl_session().args(["terminal_read", "-", "-"]).stdin("{}")),
    ];
    insta::assert_snapshot!(out.join("\n"));
}

/// Asserts that `args` (after `--session`) reach the wire as `body`, byte for byte.
#[track_caller]
fn check_body(args: &[&str], stdin: &str, body: &str) {
    let raw = RawServer::start(r#"{"ok":true}"#);
    let output = Run::new_for(raw.temp())
        .arg("--session")
        .arg(raw.session())
        .args(args)
        .stdin(stdin)
        .output();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(output.stdout.is_empty());
    let _ = raw.port();
    assert_eq!(String::from_utf8(raw.body()).unwrap(), body);
}

#[test]
fn json_alone_travels_byte_for_byte() {
    check_body(
        &["terminal_input", "  {\"text\":\"a\\u0041\\n\",  \"nodeId\" : \"x\", \"n\": 1E5}\n"],
        "",
        r#"{"operation":"terminal_input","args":{"text":"a\u0041\n",  "nodeId" : "x", "n": 1E5}}"#,
    );
    check_body(
        &["canvas_move", "-"],
        "\t{ \"y\": 0.10, \"x\": -0, \"nodeId\": \"é\" }\r\n",
        r#"{"operation":"canvas_move","args":{ "y": 0.10, "x": -0, "nodeId": "é" }}"#,
    );
    check_body(&["canvas_list"], "", r#"{"operation":"canvas_list","args":{}}"#);
}

#[test]
fn flag_numbers_travel_as_written() {
    check_body(
        &["canvas_move", "--nodeId", "n", "--x", "1E5", "--y", "123456789012345678901234567890.5"],
        "",
        r#"{"operation":"canvas_move","args":{"nodeId":"n","x":1E5,"y":123456789012345678901234567890.5}}"#,
    );
    check_body(
        &["canvas_move", "--y", "+.5", "--x", "0007", r#"{"nodeId": "n", "extra": [1.0, 2E1]}"#],
        "",
        r#"{"operation":"canvas_move","args":{"nodeId":"n","extra":[1.0, 2E1],"y":0.5,"x":7}}"#,
    );
}

#[test]
fn the_flags_of_protocol_1_5_0() {
    check_body(
        &["terminal_search", "--pattern", "FAIL", "--context", "2"],
        "",
        r#"{"operation":"terminal_search","args":{"pattern":"FAIL","context":2}}"#,
    );
    check_body(
        &["terminal_search", "--pattern", r"listening on port 8\d+", "--regex", "--limit=5"],
        "",
        r#"{"operation":"terminal_search","args":{"pattern":"listening on port 8\\d+","regex":true,"limit":5}}"#,
    );
    check_body(
        &["terminal_wait", "--nodeId", "t", "--until", "text", "--anyOf", "A", "--anyOf", "B"],
        "",
        r#"{"operation":"terminal_wait","args":{"nodeId":"t","until":"text","anyOf":["A","B"]}}"#,
    );
    check_body(
        &["terminal_wait", "--nodeId", "t", "--until", "input"],
        "",
        r#"{"operation":"terminal_wait","args":{"nodeId":"t","until":"input"}}"#,
    );
    check_body(
        &["terminal_run", "--command", "make test", "--notify"],
        "",
        r#"{"operation":"terminal_run","args":{"command":"make test","notify":true}}"#,
    );
    check_body(
        &["terminal_run", "--command", "make", "--notify=false"],
        "",
        r#"{"operation":"terminal_run","args":{"command":"make","notify":false}}"#,
    );
    check_body(&["terminal_list"], "", r#"{"operation":"terminal_list","args":{}}"#);
}

#[test]
fn the_flags_of_protocol_1_5_0_are_checked_before_anything_is_sent() {
    let fixture = Fixture::new();
    insta::assert_snapshot!(transcripts(
        &fixture,
        &[
            // a boolean takes no separate word
            &["terminal_search", "--pattern", "x", "--regex", "yes"],
            // a number flag needs a number
            &["terminal_search", "--pattern", "x", "--context", "two"],
            // an unknown flag, named as typed
            &["terminal_wait", "--nodeId", "t", "--until", "text", "--anyof", "A"],
        ]
    ));
}
