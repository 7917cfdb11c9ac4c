//! The compatibility surface, `spec/protocol.md` §8: every row of its table and every rule of
//! its list.

use serde_json::json;
use termsprawl_protocol::ToolResult;

use crate::support::{Fixture, RawServer};

#[test]
fn doctor_calls_session_info_and_prints_the_envelope_byte_for_byte() {
    let fixture = Fixture::new();
    let value = serde_json::from_str(
        r#"{"nodeId":"agent-1","empty":{},"none":[],"list":[1,"two",{"three":null}],
            "nested":{"z":true,"a":1.50,"big":123456789012345678901234567890},
            "text":"é \"quoted\" \u2019"}"#,
    )
    .unwrap();
    fixture.respond(ToolResult::ok(value));
    let output = fixture.ctl_session().arg("doctor").output();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        r#"{
  "ok": true,
  "value": {
    "nodeId": "agent-1",
    "empty": {},
    "none": [],
    "list": [
      1,
      "two",
      {
        "three": null
      }
    ],
    "nested": {
      "z": true,
      "a": 1.50,
      "big": 123456789012345678901234567890
    },
    "text": "é \"quoted\" ’"
  }
}
"#
    );
    assert!(output.stderr.is_empty());
    let received = fixture.take_received();
    assert_eq!(received.len(), 1);
    assert_eq!((received[0].operation.as_str(), received[0].args.as_str()), ("session_info", "{}"));
}

#[test]
fn session_rules() {
    let fixture = Fixture::new();
    let session = fixture.session_file().to_owned();
    let mut transcripts = Vec::new();
    let mut check = |run: &mut crate::support::Run| transcripts.push(fixture.check(run));
    // The flag before the mode, after it, after the operation.
    check(fixture.ctl_session().arg("doctor"));
    check(fixture.ctl().arg("doctor").arg("--session").arg(&session));
    check(
        fixture
            .ctl()
            .args(["call", "guide_read", r#"{"topic":"canvas"}"#, "--session"])
            .arg(&session),
    );
    check(fixture.ctl().args(["call", "--session"]).arg(&session).arg("agent_status"));
    // The environment variable, and the flag winning over it.
    check(fixture.ctl().arg("doctor").env("TERMSPRAWL_SESSION_FILE", &session));
    check(
        fixture
            .ctl_session()
            .arg("doctor")
            .env("TERMSPRAWL_SESSION_FILE", "/nonexistent/sessions/x.json"),
    );
    // A relative session path is taken from the current directory.
    check(
        fixture
            .ctl()
            .args(["--session", "sessions/agent-1.json", "doctor"])
            .current_dir(fixture.data_dir()),
    );
    // No session: the flag without a value (the variable is ignored), an empty flag value, an
    // empty variable, nothing at all; checked before the mode's arguments.
    check(fixture.ctl().args(["doctor", "--session"]).env("TERMSPRAWL_SESSION_FILE", &session));
    check(fixture.ctl().args(["--session", "", "doctor"]).env("TERMSPRAWL_SESSION_FILE", &session));
    check(fixture.ctl().arg("doctor").env("TERMSPRAWL_SESSION_FILE", ""));
    check(fixture.ctl().arg("doctor"));
    check(fixture.ctl().args(["doctor", "extra"]));
    check(fixture.ctl().args(["call", "guide_read", "{"]));
    check(fixture.ctl().arg("mcp"));
    check(fixture.ctl().args(["mcp", "--session"]));
    insta::assert_snapshot!(transcripts.join("\n"));
}

#[test]
fn usage_json_and_server_errors() {
    let fixture = Fixture::new();
    let mut transcripts = Vec::new();
    let mut check =
        |args: &[&str]| transcripts.push(fixture.check(fixture.ctl_session().args(args)));
    // A misused compatibility mode.
    check(&["doctor", "extra"]);
    check(&["doctor", "{}"]);
    // Invalid JSON_ARGS: nothing is sent.
    check(&["call", "guide_read", "{"]);
    check(&["call", "guide_read", r#"{"topic":}"#]);
    check(&["call", "guide_read", " "]);
    // Not checked locally: the server answers.
    check(&["call"]);
    check(&["call", "no_such_operation"]);
    check(&["call", "guide_read", "null"]);
    check(&["call", "guide_read", "[]"]);
    check(&["call", "guide_read", r#""s""#]);
    check(&["call", "guide_read", "1"]);
    check(&["call", "terminal_read", ""]);
    check(&["call", "terminal_read"]);
    check(&["call", "guide_read", r#"{"topic":"nope"}"#]);
    // Arguments after JSON_ARGS are ignored.
    check(&["call", "guide_read", r#"{"topic":"canvas"}"#, "ignored", "{"]);
    // An unknown mode is not a compatibility call: the direct form answers.
    check(&["frobnicate"]);
    check(&["frobnicate", "{}"]);
    insta::assert_snapshot!(transcripts.join("\n"));
}

#[test]
fn a_tool_failure_prints_its_envelope_and_exits_1() {
    let fixture = Fixture::new();
    fixture.respond(ToolResult::failure("Terminal is not attached"));
    insta::assert_snapshot!(fixture.check(fixture.ctl_session().args([
        "call",
        "terminal_read",
        r#"{"nodeId":"term-2"}"#
    ])));
}

#[test]
fn a_connection_failure_prints_its_envelope_and_exits_1() {
    let mut fixture = Fixture::new();
    let port = fixture.port().unwrap();
    fixture.stop();
    // The endpoint file is gone with the server: write one that points at the closed port.
    let endpoint = json!({"url": format!("http://127.0.0.1:{port}/call"), "instanceId": "gone"});
    std::fs::write(fixture.data_dir().join("endpoint.json"), endpoint.to_string()).unwrap();
    let output = fixture.ctl_session().arg("doctor").output();
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8(output.stdout).unwrap();
    let result: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(result["ok"], json!(false));
    let error = result["error"].as_str().unwrap();
    assert!(error.starts_with("Tool connection unavailable: "), "{error}");
    assert!(
        error.ends_with(
            ". Check that termsprawl is running. Mutations are not automatically retried."
        ),
        "{error}"
    );
    assert!(stdout.starts_with("{\n  \"ok\": false,\n  \"error\": \"Tool connection"), "{stdout}");
    assert!(output.stderr.is_empty());
    // Without an endpoint file at all.
    std::fs::remove_file(fixture.data_dir().join("endpoint.json")).unwrap();
    insta::assert_snapshot!(fixture.check(fixture.ctl_session().args(["call", "agent_status"])));
}

#[test]
fn the_request_body_is_the_compact_envelope() {
    let raw = RawServer::start(r#"{"ok":true}"#);
    let output = crate::support::Run::new_for(raw.temp())
        .arg("--session")
        .arg(raw.session())
        .arg("call")
        .output();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(String::from_utf8(output.stdout).unwrap(), "{\n  \"ok\": true\n}\n");
    assert_eq!(String::from_utf8(raw.body()).unwrap(), r#"{"args":{}}"#);

    let raw = RawServer::start(r#"{"ok":true,"value":null}"#);
    let output = crate::support::Run::new_for(raw.temp())
        .arg("--session")
        .arg(raw.session())
        .args(["call", "terminal_input", " { \"text\" : \"a\\u0041\" , \"n\": 1.50 } "])
        .output();
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        "{\n  \"ok\": true,\n  \"value\": null\n}\n"
    );
    assert_eq!(
        String::from_utf8(raw.body()).unwrap(),
        r#"{"operation":"terminal_input","args":{"text":"aA","n":1.50}}"#
    );
}
