//! Tampered endpoint files: the token must never leave for anything but
//! `http://127.0.0.1:<port>/call`. A listener on the port in question proves nothing connected.

use std::net::SocketAddr;

use serde_json::json;
use termsprawl_protocol::{ToolRequest, ToolResult};
use termsprawl_transport::call;

use crate::support::{Discovery, RawServer, Tripwire, check_failure};

fn session_info() -> ToolRequest {
    ToolRequest::new("session_info", &json!({}))
}

/// The URLs that must be refused, for a listener on `port`.
fn tampered(port: u16) -> Vec<String> {
    [
        "https://127.0.0.1:{port}/call",
        "HTTP://127.0.0.1:{port}/call",
        "hTTp://127.0.0.1:{port}/call",
        "http://localhost:{port}/call",
        "http://LOCALHOST:{port}/call",
        "http://127.1:{port}/call",
        "http://2130706433:{port}/call",
        "http://0x7f000001:{port}/call",
        "http://127.0.0.2:{port}/call",
        "http://0.0.0.0:{port}/call",
        "http://0:{port}/call",
        "http://[::1]:{port}/call",
        "http://[::ffff:127.0.0.1]:{port}/call",
        "http://127.0.0.1:{port}/call/",
        "http://127.0.0.1:{port}/call?x",
        "http://127.0.0.1:{port}/call?",
        "http://127.0.0.1:{port}/call#",
        "http://127.0.0.1:{port}/call#x",
        "http://127.0.0.1:{port}/",
        "http://127.0.0.1:{port}",
        "http://127.0.0.1:{port}/other",
        "http://user@127.0.0.1:{port}/call",
        "http://user:secret@127.0.0.1:{port}/call",
        "http://:@127.0.0.1:{port}/call",
        " http://127.0.0.1:{port}/call",
        "http://127.0.0.1:{port}/call ",
        "\thttp://127.0.0.1:{port}/call",
        "http://127.0.0.1:{port}/call\n",
        "http://127.0.0.1:{port}/ca\tll",
        "http://127.0.0.1\t:{port}/call",
        "http://127.0.0.1:{port}\\call",
        "http:127.0.0.1:{port}/call",
        "http:/127.0.0.1:{port}/call",
        "//127.0.0.1:{port}/call",
        "127.0.0.1:{port}/call",
        "http://127.0.0.1:{port}/%63all",
        "http://127.0.0.1:{port}/./call",
    ]
    .iter()
    .map(|template| template.replace("{port}", &port.to_string()))
    .collect()
}

#[tokio::test]
async fn tampered_urls_are_refused_before_anything_connects() {
    let loopback = Tripwire::loopback();
    let port = loopback.port();
    // The same port on other local addresses, where the machine allows binding them.
    let others: Vec<Tripwire> = ["127.0.0.2", "[::1]"]
        .iter()
        .filter_map(|host| Tripwire::bind(format!("{host}:{port}").parse::<SocketAddr>().unwrap()))
        .collect();
    let discovery = Discovery::new(port);

    for url in tampered(port) {
        discovery.write_endpoint(&url);
        let reason = check_failure(&call(&discovery.session_file(), &session_info()).await);
        assert_eq!(reason, "Invalid local endpoint", "{url:?}");
        assert!(!loopback.was_connected(), "{url:?} reached 127.0.0.1");
        for other in &others {
            assert!(!other.was_connected(), "{url:?} reached another local address");
        }
    }

    // Control: the untampered URL does reach the listener, so the tripwire can fire.
    discovery.write_endpoint(&format!("http://127.0.0.1:{port}/call"));
    let client =
        termsprawl_transport::Client::default().with_timeout(std::time::Duration::from_millis(200));
    check_failure(&client.call(&discovery.session_file(), &session_info()).await);
    assert!(loopback.was_connected());
}

#[tokio::test]
async fn endpoint_files_without_a_string_url_are_invalid() {
    let tripwire = Tripwire::loopback();
    let discovery = Discovery::new(tripwire.port());
    for content in [
        json!({"instanceId": "x"}).to_string(),
        json!({"url": null}).to_string(),
        json!({"url": 5}).to_string(),
        json!({"url": {"href": format!("http://127.0.0.1:{}/call", tripwire.port())}}).to_string(),
        json!([format!("http://127.0.0.1:{}/call", tripwire.port())]).to_string(),
        json!(format!("http://127.0.0.1:{}/call", tripwire.port())).to_string(),
    ] {
        discovery.write_endpoint_raw(&content);
        let reason = check_failure(&call(&discovery.session_file(), &session_info()).await);
        assert_eq!(reason, "Invalid local endpoint", "{content}");
    }
    assert!(!tripwire.was_connected());
}

#[tokio::test]
async fn an_endpoint_file_that_is_not_json() {
    let tripwire = Tripwire::loopback();
    let discovery = Discovery::new(tripwire.port());
    discovery.write_endpoint_raw(&format!("http://127.0.0.1:{}/call", tripwire.port()));
    let reason = check_failure(&call(&discovery.session_file(), &session_info()).await);
    assert_eq!(reason, format!("{} is not valid JSON", discovery.endpoint_file().display()));
    assert!(!tripwire.was_connected());
}

#[tokio::test]
async fn port_80_is_the_default_and_unknown_members_are_tolerated() {
    let server = RawServer::json("200 OK", r#"{"ok":true}"#);
    let discovery = Discovery::new(server.port);
    discovery.write_endpoint_raw(
        &json!({"instanceId": "x", "url": format!("http://127.0.0.1:{}/call", server.port), "more": [1]}).to_string(),
    );
    assert_eq!(call(&discovery.session_file(), &session_info()).await, ToolResult::ok_empty());
}

#[tokio::test]
async fn relative_session_paths_resolve_against_the_current_directory() {
    let server = RawServer::json("200 OK", r#"{"ok":true,"value":"relative"}"#);
    let discovery = Discovery::new(server.port);
    let cwd = std::env::current_dir().unwrap();
    let relative = pathdiff(&discovery.session_file(), &cwd);
    assert!(relative.is_relative());
    assert_eq!(call(&relative, &session_info()).await, ToolResult::ok(json!("relative")));
}

/// `path` relative to `base` through `..` components (both absolute, no symlinks involved).
fn pathdiff(path: &std::path::Path, base: &std::path::Path) -> std::path::PathBuf {
    let mut relative = std::path::PathBuf::new();
    for _ in base.components().skip(1) {
        relative.push("..");
    }
    relative.join(path.strip_prefix("/").unwrap())
}
