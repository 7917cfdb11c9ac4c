//! Unit tests of tokens, lock-file reading and the deferred endpoint file.

use super::files::mint_token;
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
