//! Fixtures: discovery files in a temp dir, raw loopback listeners that script the server side
//! byte by byte, and the one `check_failure` helper every failing call goes through.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread;

use serde_json::{Value, json};
use tempfile::TempDir;
use termsprawl_protocol::{IntegrationState, IntegrationStatus, ToolIdentity, ToolResult};
use termsprawl_test_support::fake::FakeApp;
use termsprawl_transport::server::{ServerConfig, ToolHandler, handler_fn};

/// The token of every fixture session: well-formed and easy to spot in any output.
pub(crate) const TOKEN: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

const PREFIX: &str = "Tool connection unavailable: ";
const SUFFIX: &str = ". Check that termsprawl is running. Mutations are not automatically retried.";

/// Asserts that `result` is the client's failure shape, that the token is nowhere in it, and that
/// the reason is one line without a final period; returns the reason.
#[track_caller]
pub(crate) fn check_failure(result: &ToolResult) -> String {
    let text = serde_json::to_string(result).unwrap();
    assert!(!text.contains(TOKEN), "token leaked: {text}");
    assert!(!format!("{result:?}").contains(TOKEN), "token leaked in Debug: {result:?}");
    let ToolResult::Failure { error } = result else { panic!("expected a failure, got {text}") };
    let reason = error
        .strip_prefix(PREFIX)
        .and_then(|rest| rest.strip_suffix(SUFFIX))
        .unwrap_or_else(|| panic!("not the client failure shape: {error}"));
    assert!(!reason.contains(['\n', '\r']), "reason is not one line: {reason:?}");
    assert!(!reason.ends_with('.'), "reason ends with a period: {reason:?}");
    assert!(!reason.is_empty());
    reason.to_owned()
}

/// A data directory `D` with `sessions/agent-1.json` holding [`TOKEN`], and optionally an
/// `endpoint.json`.
pub(crate) struct Discovery {
    pub(crate) dir: TempDir,
}

impl Discovery {
    /// A session file and an endpoint file pointing at `port`.
    pub(crate) fn new(port: u16) -> Discovery {
        let discovery = Discovery::without_endpoint();
        discovery.write_endpoint(&format!("http://127.0.0.1:{port}/call"));
        discovery
    }

    /// A session file only.
    pub(crate) fn without_endpoint() -> Discovery {
        let dir = TempDir::new().unwrap();
        std::fs::create_dir(dir.path().join("sessions")).unwrap();
        let discovery = Discovery { dir };
        discovery.write_session(
            &json!({
                "nodeId": "agent-1",
                "projectId": "project-1",
                "token": TOKEN,
                "status": {"state": "needs-setup", "adapter": "claude", "version": "unknown", "reason": "r"}
            })
            .to_string(),
        );
        discovery
    }

    /// `D`.
    pub(crate) fn data_dir(&self) -> &Path {
        self.dir.path()
    }

    /// `D/sessions/agent-1.json`.
    pub(crate) fn session_file(&self) -> PathBuf {
        self.dir.path().join("sessions").join("agent-1.json")
    }

    /// `D/endpoint.json`.
    pub(crate) fn endpoint_file(&self) -> PathBuf {
        self.dir.path().join("endpoint.json")
    }

    /// Replaces the session file's content.
    pub(crate) fn write_session(&self, content: &str) {
        std::fs::write(self.session_file(), content).unwrap();
    }

    /// Writes `{"url":<url>,"instanceId":…}` as the endpoint file.
    pub(crate) fn write_endpoint(&self, url: &str) {
        let content = json!({"url": url, "instanceId": "00000000-0000-4000-8000-000000000000"});
        self.write_endpoint_raw(&content.to_string());
    }

    /// Replaces the endpoint file's content.
    pub(crate) fn write_endpoint_raw(&self, content: &str) {
        std::fs::write(self.endpoint_file(), content).unwrap();
    }
}

/// One request as a raw server saw it.
#[derive(Debug, Clone)]
pub(crate) struct RawRequest {
    /// The request head, up to and without the blank line.
    pub(crate) head: String,
    /// The body, as long as `content-length` said.
    pub(crate) body: Vec<u8>,
}

impl RawRequest {
    /// The request head's lines after the request line.
    pub(crate) fn header_lines(&self) -> Vec<&str> {
        self.head.split("\r\n").skip(1).collect()
    }
}

type Respond = dyn Fn(&RawRequest, TcpStream) + Send + Sync;

/// A listener on `127.0.0.1:0` that hands every complete request to a scripted responder, one
/// thread per connection, and records connections and requests.
pub(crate) struct RawServer {
    pub(crate) port: u16,
    pub(crate) connections: Arc<Mutex<usize>>,
    pub(crate) requests: Arc<Mutex<Vec<RawRequest>>>,
    /// Streams a responder chose to keep open (kept alive as long as the server value).
    pub(crate) held: Arc<Mutex<Vec<TcpStream>>>,
}

impl RawServer {
    /// Serves every request with `respond`, which owns the connection.
    pub(crate) fn start(
        respond: impl Fn(&RawRequest, TcpStream) + Send + Sync + 'static,
    ) -> RawServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let connections = Arc::new(Mutex::new(0));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let respond: Arc<Respond> = Arc::new(respond);
        {
            let connections = Arc::clone(&connections);
            let requests = Arc::clone(&requests);
            thread::spawn(move || {
                for stream in listener.incoming() {
                    let Ok(mut stream) = stream else { return };
                    *connections.lock().unwrap() += 1;
                    let requests = Arc::clone(&requests);
                    let respond = Arc::clone(&respond);
                    thread::spawn(move || {
                        let Some(request) = read_request(&mut stream) else { return };
                        requests.lock().unwrap().push(request.clone());
                        respond(&request, stream);
                    });
                }
            });
        }
        RawServer { port, connections, requests, held: Arc::new(Mutex::new(Vec::new())) }
    }

    /// Answers every request with these exact bytes, then closes the connection.
    pub(crate) fn answering(response: impl Into<Vec<u8>>) -> RawServer {
        let response = response.into();
        RawServer::start(move |_, mut stream| {
            let _ = stream.write_all(&response);
        })
    }

    /// Answers every request with `status` and a JSON `body` (`content-length` framing).
    pub(crate) fn json(status: &str, body: &str) -> RawServer {
        RawServer::answering(http_response(status, "application/json", body.as_bytes()))
    }

    /// Reads the request, then keeps the connection open without answering.
    pub(crate) fn silent() -> RawServer {
        let held: Arc<Mutex<Vec<TcpStream>>> = Arc::new(Mutex::new(Vec::new()));
        let mut server = {
            let held = Arc::clone(&held);
            RawServer::start(move |_, stream| held.lock().unwrap().push(stream))
        };
        server.held = held;
        server
    }

    /// How many requests arrived.
    pub(crate) fn request_count(&self) -> usize {
        self.requests.lock().unwrap().len()
    }

    /// How many connections were accepted.
    pub(crate) fn connection_count(&self) -> usize {
        *self.connections.lock().unwrap()
    }
}

/// A complete HTTP/1.1 response with `content-length` framing.
pub(crate) fn http_response(status: &str, content_type: &str, body: &[u8]) -> Vec<u8> {
    let mut response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    response.extend_from_slice(body);
    response
}

/// Reads one request: the head, then `content-length` bytes of body. `None` on EOF or error.
pub(crate) fn read_request(stream: &mut TcpStream) -> Option<RawRequest> {
    let mut buffer = Vec::new();
    let mut chunk = [0_u8; 8192];
    let head_end = loop {
        if let Some(end) = buffer.windows(4).position(|window| window == b"\r\n\r\n") {
            break end;
        }
        let read = stream.read(&mut chunk).ok()?;
        if read == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..read]);
    };
    let head = String::from_utf8(buffer[..head_end].to_vec()).ok()?;
    let length = head
        .split("\r\n")
        .filter_map(|line| line.split_once(':'))
        .find(|(name, _)| name.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = buffer[head_end + 4..].to_vec();
    while body.len() < length {
        let read = stream.read(&mut chunk).ok()?;
        if read == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..read]);
    }
    Some(RawRequest { head, body })
}

/// A listener that must never be connected to: after the code under test ran, [`Tripwire::check`]
/// asserts that no connection is waiting or was accepted.
pub(crate) struct Tripwire {
    listener: TcpListener,
}

impl Tripwire {
    /// Listens on `address` (port 0 picks a free one); `None` when the address is not available
    /// on this machine (an IPv6 loopback, say).
    pub(crate) fn bind(address: SocketAddr) -> Option<Tripwire> {
        let listener = TcpListener::bind(address).ok()?;
        listener.set_nonblocking(true).unwrap();
        Some(Tripwire { listener })
    }

    /// On `127.0.0.1` with a free port.
    pub(crate) fn loopback() -> Tripwire {
        Tripwire::bind("127.0.0.1:0".parse().unwrap()).unwrap()
    }

    /// The port.
    pub(crate) fn port(&self) -> u16 {
        self.listener.local_addr().unwrap().port()
    }

    /// Whether a connection arrived. A client's `connect` completes only once the kernel has
    /// queued the connection, so a connection made before this call is always seen.
    pub(crate) fn was_connected(&self) -> bool {
        match self.listener.accept() {
            Ok(_) => true,
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => false,
            Err(error) => panic!("accept failed: {error}"),
        }
    }
}

// ---- the real server half ----

/// A provisioning status for fixtures.
pub(crate) fn status(reason: &str) -> IntegrationStatus {
    IntegrationStatus {
        state: IntegrationState::NeedsSetup,
        adapter: "claude-mcp".to_owned(),
        version: "1.0.0".to_owned(),
        reason: reason.to_owned(),
    }
}

/// A fixture identity.
pub(crate) fn identity(node_id: &str, project_id: &str) -> ToolIdentity {
    ToolIdentity { node_id: node_id.to_owned(), project_id: project_id.to_owned() }
}

/// A handler scripted by operation name:
/// - `terminal_close` fails with `Node not found in the visible project`;
/// - `canvas_list` fails with an empty error;
/// - `agent_status` panics;
/// - `session_info` succeeds without a value;
/// - `guide_read` succeeds with `null`;
/// - anything else echoes `{"nodeId","projectId","instanceId","operation","args"}`.
pub(crate) fn scripted_handler() -> Arc<dyn ToolHandler> {
    handler_fn(|caller, request| async move {
        match request.operation().unwrap_or_default() {
            "terminal_close" => ToolResult::failure("Node not found in the visible project"),
            "canvas_list" => ToolResult::failure(""),
            "agent_status" => panic!("the handler panicked"),
            "session_info" => ToolResult::ok_empty(),
            "guide_read" => ToolResult::ok(Value::Null),
            operation => ToolResult::ok(json!({
                "nodeId": caller.node_id(),
                "projectId": caller.project_id(),
                "instanceId": caller.instance_id(),
                "operation": operation,
                "args": request.args_value(),
            })),
        }
    })
}

/// A started fake app on a fresh `D` (`<temp>/agent-tools`) with the scripted handler and one
/// session `agent-1` in `project-1`.
pub(crate) async fn fixture() -> FakeApp {
    fixture_with(ServerConfig::default()).await
}

/// [`fixture`] with explicit timing.
pub(crate) async fn fixture_with(config: ServerConfig) -> FakeApp {
    FakeApp::builder()
        .identity("agent-1", "project-1")
        .status(status("fixture"))
        .config(config)
        .handler(scripted_handler())
        .start()
        .await
        .unwrap()
}

/// One HTTP response as bytes came off the wire.
#[derive(Debug)]
pub(crate) struct RawResponse {
    pub(crate) status: u16,
    /// Header lines, names lowercased.
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl RawResponse {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
    }

    pub(crate) fn body_text(&self) -> &str {
        std::str::from_utf8(&self.body).unwrap()
    }
}

/// Sends `request` bytes as they are over a fresh connection to `127.0.0.1:port` and reads
/// until the server closes the connection.
pub(crate) async fn raw_exchange(port: u16, request: &[u8]) -> RawResponse {
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut stream, request).await.unwrap();
    read_response(&mut stream).await
}

/// Reads one response until EOF.
pub(crate) async fn read_response(stream: &mut tokio::net::TcpStream) -> RawResponse {
    let mut bytes = Vec::new();
    // A reset after the answer arrived still leaves the answer in `bytes`.
    let _ = tokio::io::AsyncReadExt::read_to_end(stream, &mut bytes).await;
    parse_response(&bytes)
}

/// Parses one `content-length` or empty-bodied response.
pub(crate) fn parse_response(bytes: &[u8]) -> RawResponse {
    let text = String::from_utf8_lossy(bytes);
    let (head, body) =
        text.split_once("\r\n\r\n").unwrap_or_else(|| panic!("no response head in {text:?}"));
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap();
    let status = status_line.split(' ').nth(1).unwrap().parse().unwrap();
    let headers = lines
        .map(|line| {
            let (name, value) = line.split_once(':').unwrap();
            (name.trim().to_ascii_lowercase(), value.trim().to_owned())
        })
        .collect();
    RawResponse { status, headers, body: body.as_bytes().to_vec() }
}

/// A `POST /call` with `connection: close`, the given extra header lines and body.
pub(crate) fn post(target: &str, headers: &[String], body: &[u8]) -> Vec<u8> {
    request("POST", target, headers, body)
}

/// A request with `connection: close`, a correct `content-length`, the extra header lines and body.
pub(crate) fn request(method: &str, target: &str, headers: &[String], body: &[u8]) -> Vec<u8> {
    let mut request =
        format!("{method} {target} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n");
    for header in headers {
        request.push_str(header);
        request.push_str("\r\n");
    }
    let mut request = request.into_bytes();
    request.extend_from_slice(format!("content-length: {}\r\n\r\n", body.len()).as_bytes());
    request.extend_from_slice(body);
    request
}
