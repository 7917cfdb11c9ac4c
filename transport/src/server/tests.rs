//! Unit tests of tokens, lock-file reading and the deferred endpoint file.

use super::files::{mint_token, write_atomic_all};
use super::lock::{Holder, holder, is_alive};

#[test]
fn minted_tokens_are_64_lowercase_hex_and_differ() {
    let first = mint_token().unwrap();
    let second = mint_token().unwrap();
    assert!(first.is_well_formed());
    assert!(second.is_well_formed());
    assert_ne!(first.expose(), second.expose());
}

#[test]
fn lock_holders() {
    assert_eq!(holder(br#"{"pid":42,"instanceId":"x"}"#), Holder::Pid(42));
    assert_eq!(holder(br#"{"pid":42.0}"#), Holder::Pid(42));
    assert_eq!(holder(br#"{"instanceId":"x","pid":2147483647}"#), Holder::Pid(i32::MAX));
    for invalid in [
        &br#"{"pid":0}"#[..],
        br#"{"pid":-1}"#,
        br#"{"pid":1.5}"#,
        br#"{"pid":"42"}"#,
        br#"{"pid":null}"#,
        br#"{"pid":2147483648}"#,
        br#"{"pid":1e400}"#,
        br#"{"instanceId":"x"}"#,
        br"[]",
        br"42",
    ] {
        assert_eq!(holder(invalid), Holder::InvalidPid, "{}", String::from_utf8_lossy(invalid));
    }
    for garbage in [&b""[..], b"{", b"pid=42", b"\xff"] {
        assert_eq!(holder(garbage), Holder::Garbage, "{}", String::from_utf8_lossy(garbage));
    }
}

#[test]
fn liveness_probe() {
    assert!(is_alive(i32::try_from(std::process::id()).unwrap()));
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = i32::try_from(child.id()).unwrap();
    child.wait().unwrap();
    assert!(!is_alive(pid));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deferred_endpoint_is_written_only_when_published() {
    use termsprawl_protocol::{IntegrationState, IntegrationStatus, ToolIdentity, ToolRequest};

    let dir = tempfile::TempDir::new().unwrap();
    let data = dir.path().join("agent-tools");
    let handler = super::handler_fn(|_caller, _request| async {
        termsprawl_protocol::ToolResult::ok(serde_json::json!("hi"))
    });
    let config = super::ServerConfig::default().with_deferred_endpoint();
    let server = super::ToolServer::start_with(&data, handler, config).await.unwrap();
    let endpoint = data.join(crate::discovery::ENDPOINT_FILE);
    assert!(!endpoint.exists());
    let identity = ToolIdentity { node_id: "agent-1".to_owned(), project_id: "p".to_owned() };
    let status = IntegrationStatus {
        state: IntegrationState::Connected,
        adapter: "test".to_owned(),
        version: "unknown".to_owned(),
        reason: String::new(),
    };
    let session = server.provision_session(identity, status, false).unwrap();
    server.publish_endpoint().unwrap();
    let written: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&endpoint).unwrap()).unwrap();
    assert_eq!(written["url"], server.url());
    assert_eq!(written["instanceId"], server.instance_id());
    let result = crate::Client::default()
        .call(&session, &ToolRequest::new("session_info", &serde_json::json!({})))
        .await;
    assert_eq!(result, termsprawl_protocol::ToolResult::ok(serde_json::json!("hi")));
    server.close().await;
    assert!(!endpoint.exists());
}

/// Files written together change together: when one of them cannot be written, none changes and
/// no temporary file stays; when all can, each holds its content, mode 0600.
#[test]
fn files_written_together_change_together() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::TempDir::new().unwrap();
    let (first, second) = (dir.path().join("canvas.json"), dir.path().join("canvas.json.copy"));
    std::fs::write(&first, b"old").unwrap();
    let unwritable = dir.path().join("missing").join("copy");
    let failed = write_atomic_all(&[(&first, b"new"), (&unwritable, b"new")]);
    assert!(failed.is_err(), "a file in a missing folder cannot be written");
    assert_eq!(std::fs::read(&first).unwrap(), b"old", "the other file did not change");
    let names: Vec<_> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["canvas.json"], "no temporary file stays");
    write_atomic_all(&[(&first, b"new"), (&second, b"new too")]).unwrap();
    assert_eq!(std::fs::read(&first).unwrap(), b"new");
    assert_eq!(std::fs::read(&second).unwrap(), b"new too");
    for path in [&first, &second] {
        assert_eq!(std::fs::metadata(path).unwrap().permissions().mode() & 0o777, 0o600);
    }
}
