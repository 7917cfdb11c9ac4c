//! The server half's files in `D` (`spec/protocol.md` §2): layout, modes, exact content and
//! member order, atomic writes, provisioning and reuse, revocation, and the lock rules.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{Value, json};
use tempfile::TempDir;
use termsprawl_protocol::{IntegrationState, ToolRequest, ToolResult};
use termsprawl_transport::server::{
    Caller, FileError, ProvisionError, StartError, ToolServer, handler_fn,
};

use crate::support::{check_failure, fixture, identity, scripted_handler, status};

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap()
}

fn token_of(session_file: &Path) -> String {
    let session: Value = serde_json::from_str(&read(session_file)).unwrap();
    session["token"].as_str().unwrap().to_owned()
}

fn is_uuid_v4(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() == 36
        && bytes.iter().enumerate().all(|(index, byte)| match index {
            8 | 13 | 18 | 23 => *byte == b'-',
            _ => byte.is_ascii_digit() || (b'a'..=b'f').contains(byte),
        })
        && bytes[14] == b'4'
        && matches!(bytes[19], b'8' | b'9' | b'a' | b'b')
}

/// Every file under `dir` whose name ends in `.tmp`.
fn temporary_files(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(temporary_files(&path));
        } else if path.to_string_lossy().ends_with(".tmp") {
            found.push(path.display().to_string());
        }
    }
    found
}

#[tokio::test]
async fn start_writes_the_layout_with_exact_modes_and_content() {
    let fixture = fixture().await;
    let server = fixture.server();
    let data_dir = server.data_dir();
    assert_eq!(data_dir, fixture.temp_dir().unwrap().join("agent-tools"));
    assert!(is_uuid_v4(server.instance_id()), "{}", server.instance_id());
    assert_eq!(server.url(), format!("http://127.0.0.1:{}/call", server.port()));

    assert_eq!(mode(data_dir), 0o700);
    assert_eq!(mode(&data_dir.join("sessions")), 0o700);
    assert_eq!(mode(&data_dir.join("endpoint.json")), 0o600);
    assert_eq!(mode(&data_dir.join("server.lock")), 0o600);
    assert_eq!(
        read(&data_dir.join("endpoint.json")),
        format!(r#"{{"url":"{}","instanceId":"{}"}}"#, server.url(), server.instance_id())
    );
    assert_eq!(
        read(&data_dir.join("server.lock")),
        format!(r#"{{"pid":{},"instanceId":"{}"}}"#, std::process::id(), server.instance_id())
    );
    assert_eq!(temporary_files(data_dir), Vec::<String>::new());
}

#[tokio::test]
async fn an_existing_data_dir_is_made_private() {
    let dir = TempDir::new().unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let server = ToolServer::start(dir.path(), scripted_handler()).await.unwrap();
    assert_eq!(mode(dir.path()), 0o700);
    server.close().await;
}

#[tokio::test]
async fn session_files_have_the_exact_content_and_order() {
    let fixture = fixture().await;
    let path = fixture.session_file();
    assert_eq!(*path, fixture.server().data_dir().join("sessions").join("agent-1.json"));
    assert_eq!(mode(path), 0o600);
    let token = fixture.token();
    assert_eq!(token.len(), 64);
    assert!(token.bytes().all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte)));
    assert_eq!(
        read(path),
        format!(
            r#"{{"nodeId":"agent-1","projectId":"project-1","token":"{token}","status":{{"state":"needs-setup","adapter":"claude-mcp","version":"1.0.0","reason":"fixture"}}}}"#
        )
    );
    assert_eq!(temporary_files(fixture.server().data_dir()), Vec::<String>::new());
}

#[tokio::test]
async fn rewriting_a_file_restores_mode_0600() {
    let fixture = fixture().await;
    fs::set_permissions(fixture.session_file(), fs::Permissions::from_mode(0o644)).unwrap();
    fixture
        .server()
        .provision_session(identity("agent-1", "project-1"), status("again"), true)
        .unwrap();
    assert_eq!(mode(fixture.session_file()), 0o600);
}

#[tokio::test]
async fn writes_are_atomic_for_a_concurrent_reader() {
    let fixture = fixture().await;
    let path = fixture.session_file().to_path_buf();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let stop = std::sync::Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut reads = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let content = fs::read(&path).expect("the file is always there");
                let value: Value = serde_json::from_slice(&content).expect("never a partial file");
                assert_eq!(value["nodeId"], "agent-1");
                reads += 1;
            }
            reads
        })
    };
    for round in 0..300 {
        let long_reason = "r".repeat(round * 50);
        fixture
            .server()
            .provision_session(identity("agent-1", "project-1"), status(&long_reason), false)
            .unwrap();
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(reader.join().unwrap() > 0);
    assert_eq!(temporary_files(fixture.server().data_dir()), Vec::<String>::new());
}

#[tokio::test]
async fn a_failed_write_leaves_no_temporary_file() {
    let fixture = fixture().await;
    // A directory where the session file should be: the rename fails.
    let blocked = fixture.server().session_file("agent-2");
    fs::create_dir(&blocked).unwrap();
    fs::write(blocked.join("keep"), "x").unwrap();
    let error = fixture
        .server()
        .provision_session(identity("agent-2", "p"), status("s"), false)
        .unwrap_err();
    assert!(matches!(error, ProvisionError::Io { .. }), "{error:?}");
    assert!(
        error.to_string().starts_with(&format!("cannot write {}: ", blocked.display())),
        "{error}"
    );
    assert_eq!(temporary_files(fixture.server().data_dir()), Vec::<String>::new());
}

#[tokio::test]
async fn reuse_keeps_token_and_stored_status_only_for_the_same_identity() {
    let fixture = fixture().await;
    let server = fixture.server();
    let first = fixture.token();

    // Same identity, reuse: token and stored status kept, the new status ignored.
    server.provision_session(identity("agent-1", "project-1"), status("new"), true).unwrap();
    assert_eq!(fixture.token(), first);
    let session: Value = serde_json::from_str(&read(fixture.session_file())).unwrap();
    assert_eq!(session["status"]["reason"], "fixture");
    assert_eq!(server.sessions().get("agent-1").unwrap().status().reason, "fixture");

    // Without reuse: a new token.
    server.provision_session(identity("agent-1", "project-1"), status("fresh"), false).unwrap();
    let second = fixture.token();
    assert_ne!(second, first);

    // Another project: a new token even with reuse.
    server.provision_session(identity("agent-1", "project-2"), status("moved"), true).unwrap();
    let third = fixture.token();
    assert_ne!(third, second);
    assert_eq!(
        serde_json::from_str::<Value>(&read(fixture.session_file())).unwrap()["projectId"],
        "project-2"
    );

    // A malformed stored token: a new token.
    for bad in ["ABCDEF".repeat(10) + "abcd", "a".repeat(63), String::new()] {
        fs::write(
            fixture.session_file(),
            json!({"nodeId": "agent-1", "projectId": "project-2", "token": bad, "status": status("x")}).to_string(),
        )
        .unwrap();
        server.provision_session(identity("agent-1", "project-2"), status("y"), true).unwrap();
        assert_ne!(fixture.token(), bad);
        assert!(fixture.token().len() == 64);
    }

    // A stored status that cannot be read: the token is kept, the given status is used.
    let token = fixture.token();
    fs::write(
        fixture.session_file(),
        json!({"extra": 1, "nodeId": "agent-1", "projectId": "project-2", "token": token, "status": "broken"}).to_string(),
    )
    .unwrap();
    server.provision_session(identity("agent-1", "project-2"), status("given"), true).unwrap();
    assert_eq!(fixture.token(), token);
    let session: Value = serde_json::from_str(&read(fixture.session_file())).unwrap();
    assert_eq!(session["status"]["reason"], "given");
    assert!(session.get("extra").is_none());

    // Reuse without a file: a new session.
    let path = server.provision_session(identity("agent-9", "p"), status("s"), true).unwrap();
    assert!(path.exists());
}

#[tokio::test]
async fn invalid_node_ids_are_refused() {
    let fixture = fixture().await;
    for node_id in ["", "../escape", "a/b", "-a", "a.json", &"a".repeat(129)] {
        let error = fixture
            .server()
            .provision_session(identity(node_id, "p"), status("s"), false)
            .unwrap_err();
        assert!(matches!(error, ProvisionError::InvalidNodeId));
        assert_eq!(error.to_string(), "Invalid agent node ID");
        let error = fixture.server().revoke_session(node_id).unwrap_err();
        assert_eq!(error.to_string(), "Invalid agent node ID");
    }
    let names: Vec<_> = fs::read_dir(fixture.server().data_dir().join("sessions"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("agent-1.json")]);
}

#[tokio::test]
async fn revocation_deletes_the_file_and_kills_the_token() {
    let fixture = fixture().await;
    let request = ToolRequest::new("session_info", &json!({}));
    assert_eq!(
        termsprawl_transport::call(fixture.session_file(), &request).await,
        ToolResult::ok_empty()
    );
    let saved = read(fixture.session_file());

    fixture.server().revoke_session("agent-1").unwrap();
    assert!(!fixture.session_file().exists());
    assert!(fixture.server().sessions().get("agent-1").is_none());
    // Even with the old file put back, the token is dead.
    fs::write(fixture.session_file(), &saved).unwrap();
    assert_eq!(
        termsprawl_transport::call(fixture.session_file(), &request).await,
        ToolResult::failure("Unknown or revoked session")
    );
    // Revoking again, or a node that never existed, is fine.
    fixture.server().revoke_session("agent-1").unwrap();
    fixture.server().revoke_session("never-was").unwrap();
}

#[tokio::test]
async fn reprovisioning_without_reuse_kills_the_old_token() {
    let fixture = fixture().await;
    let old = read(fixture.session_file());
    fixture
        .server()
        .provision_session(identity("agent-1", "project-1"), status("s"), false)
        .unwrap();
    // A copy of the old session file, next to the new one so that it finds endpoint.json.
    let old_session = fixture.server().data_dir().join("sessions").join("old-copy.json");
    fs::write(&old_session, &old).unwrap();
    let request = ToolRequest::new("session_info", &json!({}));
    assert_eq!(
        termsprawl_transport::call(&old_session, &request).await,
        ToolResult::failure("Unknown or revoked session")
    );
    assert_eq!(
        termsprawl_transport::call(fixture.session_file(), &request).await,
        ToolResult::ok_empty()
    );
}

#[tokio::test]
async fn the_handler_sees_the_caller_of_the_token() {
    let fixture = fixture().await;
    let other = fixture
        .server()
        .provision_session(identity("agent-2", "project-2"), status("s"), false)
        .unwrap();
    let request = ToolRequest::new("canvas_select", &json!({"nodeIds": ["n"]}));
    for (session, node, project) in
        [(fixture.session_file(), "agent-1", "project-1"), (&other, "agent-2", "project-2")]
    {
        let ToolResult::Success { value: Some(value) } =
            termsprawl_transport::call(session, &request).await
        else {
            panic!("expected a value");
        };
        assert_eq!(
            (value["nodeId"].as_str(), value["projectId"].as_str()),
            (Some(node), Some(project))
        );
    }
}

#[tokio::test]
async fn caller_status_changes_stay_in_memory() {
    let dir = TempDir::new().unwrap();
    // An async closure, as the headless server and other crates' tests write them.
    let handler = handler_fn(async |caller: Caller, _request| {
        let mut status = caller.status();
        status.state = IntegrationState::Connected;
        status.reason = "Authenticated tool connection established".to_owned();
        caller.set_status(status);
        let live: Vec<Value> = caller
            .sessions()
            .list()
            .iter()
            .map(|session| json!({"nodeId": session.identity().node_id, "state": session.status().state}))
            .collect();
        ToolResult::ok(
            json!({"live": caller.is_live(), "sessions": live, "debug": format!("{caller:?}")}),
        )
    });
    let server = ToolServer::start(dir.path(), handler).await.unwrap();
    let file = server.provision_session(identity("agent-1", "p"), status("s"), false).unwrap();
    let other = server.provision_session(identity("agent-2", "p"), status("s"), false).unwrap();
    let stored = read(&file);

    let result =
        termsprawl_transport::call(&file, &ToolRequest::new("session_info", &json!({}))).await;

    // Nothing that describes the server or the caller shows a token.
    let ToolResult::Success { value: Some(mut value) } = result else { panic!("{result:?}") };
    let caller_debug = value.as_object_mut().unwrap().remove("debug").unwrap();
    for token in [token_of(&file), token_of(&other)] {
        for debug in
            [caller_debug.to_string(), format!("{server:?}"), format!("{:?}", server.sessions())]
        {
            assert!(!debug.contains(&token), "token in Debug: {debug}");
        }
    }
    assert!(caller_debug.to_string().contains("agent-1"), "{caller_debug}");
    assert!(format!("{:?}", server.sessions()).contains("agent-2"));
    let result = ToolResult::ok(value);

    assert_eq!(
        result,
        ToolResult::ok(json!({"live": true, "sessions": [
            {"nodeId": "agent-1", "state": "connected"},
            {"nodeId": "agent-2", "state": "needs-setup"},
        ]}))
    );
    assert_eq!(
        server.sessions().get("agent-1").unwrap().status().state,
        IntegrationState::Connected
    );
    assert_eq!(read(&file), stored);
    server.close().await;
}

// ---- the lock ----

#[tokio::test]
async fn a_live_owner_keeps_the_data_dir() {
    let fixture = fixture().await;
    let data_dir = fixture.server().data_dir();
    let lock = read(&data_dir.join("server.lock"));
    let endpoint = read(&data_dir.join("endpoint.json"));

    let error = ToolServer::start(data_dir, scripted_handler()).await.unwrap_err();

    assert!(
        matches!(error, StartError::AlreadyRunning { pid: Some(pid), .. } if pid == std::process::id()),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "Another termsprawl tool service is already using this data directory"
    );
    assert_eq!(read(&data_dir.join("server.lock")), lock);
    assert_eq!(read(&data_dir.join("endpoint.json")), endpoint);
}

#[tokio::test]
async fn a_lock_of_another_live_process_is_respected() {
    let dir = TempDir::new().unwrap();
    // pid 1 is always alive.
    fs::write(dir.path().join("server.lock"), r#"{"pid":1,"instanceId":"x"}"#).unwrap();
    let error = ToolServer::start(dir.path(), scripted_handler()).await.unwrap_err();
    assert!(matches!(error, StartError::AlreadyRunning { pid: Some(1), .. }), "{error:?}");
    assert_eq!(read(&dir.path().join("server.lock")), r#"{"pid":1,"instanceId":"x"}"#);
    assert!(!dir.path().join("endpoint.json").exists());
}

#[tokio::test]
async fn a_dead_owner_lock_is_replaced() {
    let dir = TempDir::new().unwrap();
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    fs::write(dir.path().join("server.lock"), format!(r#"{{"pid":{dead},"instanceId":"old"}}"#))
        .unwrap();

    let server = ToolServer::start(dir.path(), scripted_handler()).await.unwrap();

    assert_eq!(
        read(&dir.path().join("server.lock")),
        format!(r#"{{"pid":{},"instanceId":"{}"}}"#, std::process::id(), server.instance_id())
    );
    server.close().await;
}

#[tokio::test]
async fn a_lock_that_is_not_json_is_stale() {
    for garbage in ["", "{", "not json", "\u{fffd}"] {
        let dir = TempDir::new().unwrap();
        fs::write(dir.path().join("server.lock"), garbage).unwrap();
        let server = ToolServer::start(dir.path(), scripted_handler()).await.unwrap();
        assert!(read(&dir.path().join("server.lock")).contains(server.instance_id()));
        server.close().await;
    }
}

#[tokio::test]
async fn a_lock_with_an_invalid_pid_is_reported() {
    for content in [
        r#"{"pid":0}"#,
        r#"{"pid":-5}"#,
        r#"{"pid":"12"}"#,
        r#"{"pid":1.5}"#,
        r#"{"instanceId":"x"}"#,
        "[]",
        "7",
    ] {
        let dir = TempDir::new().unwrap();
        let lock = dir.path().join("server.lock");
        fs::write(&lock, content).unwrap();
        let error = ToolServer::start(dir.path(), scripted_handler()).await.unwrap_err();
        assert!(matches!(error, StartError::InvalidLock { .. }), "{content}: {error:?}");
        assert_eq!(error.to_string(), format!("Invalid service lock: {}", lock.display()));
        assert_eq!(read(&lock), content);
        assert!(!dir.path().join("endpoint.json").exists());
    }
}

// ---- closing ----

#[tokio::test]
async fn close_removes_lock_and_our_endpoint_but_keeps_sessions() {
    let mut fixture = fixture().await;
    let data_dir = fixture.server().data_dir().to_path_buf();
    fixture.stop().await;
    assert!(!data_dir.join("server.lock").exists());
    assert!(!data_dir.join("endpoint.json").exists());
    assert!(fixture.session_file().exists());
}

#[tokio::test]
async fn close_keeps_an_endpoint_that_is_no_longer_ours() {
    let mut fixture = fixture().await;
    let data_dir = fixture.server().data_dir().to_path_buf();
    let foreign = r#"{"url":"http://127.0.0.1:1/call","instanceId":"someone-else"}"#;
    fs::write(data_dir.join("endpoint.json"), foreign).unwrap();
    fixture.stop().await;
    assert_eq!(read(&data_dir.join("endpoint.json")), foreign);
    assert!(!data_dir.join("server.lock").exists());
}

#[tokio::test]
async fn dropping_the_server_cleans_up_too() {
    let mut fixture = fixture().await;
    let data_dir = fixture.server().data_dir().to_path_buf();
    drop(fixture.take_server());
    assert!(!data_dir.join("server.lock").exists());
    assert!(!data_dir.join("endpoint.json").exists());
}

#[tokio::test]
async fn after_close_calls_fail_without_retry() {
    let mut fixture = fixture().await;
    let port = fixture.server().port();
    let endpoint = read(&fixture.server().data_dir().join("endpoint.json"));
    let data_dir = fixture.server().data_dir().to_path_buf();
    fixture.stop().await;
    // The app is gone but an old endpoint file survived (a crash, say).
    fs::write(data_dir.join("endpoint.json"), endpoint).unwrap();
    let result = termsprawl_transport::call(
        fixture.session_file(),
        &ToolRequest::new("session_info", &json!({})),
    )
    .await;
    let reason = check_failure(&result);
    assert_eq!(
        reason,
        format!("cannot connect to 127.0.0.1:{port}: Connection refused (os error 111)")
    );
}

#[tokio::test]
async fn a_data_directory_that_cannot_be_created_names_the_action_and_the_path() {
    let dir = TempDir::new().unwrap();
    let file = dir.path().join("a-file");
    fs::write(&file, "not a folder").unwrap();
    let data_dir = file.join("data");
    let error = ToolServer::start(&data_dir, scripted_handler()).await.unwrap_err();
    let StartError::Io(FileError { action, path, .. }) = &error else {
        panic!("not an I/O failure: {error:?}");
    };
    assert_eq!((*action, path.as_path()), ("create", data_dir.as_path()));
    assert_eq!(
        error.to_string(),
        format!("cannot create {}: Not a directory (os error 20)", data_dir.display())
    );
}
