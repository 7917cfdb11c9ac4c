//! Fixtures: running the conformance binary, a conformant handler for the fake app, and a
//! loopback proxy that plants HTTP-level defects in front of a server.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use termsprawl_protocol::{IntegrationState, ToolRequest, ToolResult, operations};
use termsprawl_test_support::fake::{FakeApp, session_info};
use termsprawl_transport::server::{Caller, ServerConfig, ToolHandler, handler_fn};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The binary under test.
pub(crate) const CONFORMANCE: &str = env!("CARGO_BIN_EXE_termsprawl-conformance");

/// One run of the binary.
pub(crate) struct Run {
    pub(crate) code: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Run {
    /// The `--json` report.
    pub(crate) fn report(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|error| {
            panic!("not a JSON report ({error}): {}\n{}", self.stdout, self.stderr)
        })
    }

    /// The ids of the rules with `verdict`.
    pub(crate) fn ids(&self, verdict: &str) -> BTreeSet<String> {
        self.report()["rules"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|rule| rule["verdict"] == verdict)
            .map(|rule| rule["id"].as_str().unwrap().to_owned())
            .collect()
    }

    /// The text lines of the failed rules, for assertion messages.
    pub(crate) fn failures(&self) -> String {
        self.report()["rules"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|rule| rule["verdict"] == "FAIL")
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Runs `termsprawl-conformance ARGS...` to completion (3 minutes at most).
pub(crate) async fn conformance(args: &[&str]) -> Run {
    let child = tokio::process::Command::new(CONFORMANCE)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let output = tokio::time::timeout(Duration::from_mins(3), child.wait_with_output())
        .await
        .expect("the conformance run ends within 3 minutes")
        .unwrap();
    Run {
        code: output.status.code(),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

/// `--session FILE --json [EXTRA...]` against `session`.
pub(crate) async fn check(session: &Path, extra: &[&str]) -> Run {
    let mut args = vec!["--session", session.to_str().unwrap(), "--json"];
    args.extend_from_slice(extra);
    conformance(&args).await
}

/// Defects a conformant fake handler can carry.
#[derive(Debug, Clone, Copy, Default)]
#[expect(clippy::struct_excessive_bools, reason = "independent switches, one per planted defect")]
pub(crate) struct HandlerDefects {
    /// `session_info` answers `instanceId` after `host`.
    pub(crate) session_info_order: bool,
    /// `terminal_read` ignores `maxChars` and always answers ten characters.
    pub(crate) read_ignores_max_chars: bool,
    /// The catalog of v1: no agent messaging operations.
    pub(crate) v1_catalog: bool,
    /// `session_info` declares `"rules":["agent-link-isolation"]`.
    pub(crate) declare_links: bool,
    /// Other agents' nodes can be read and typed into, link or not.
    pub(crate) peer_agents_reachable: bool,
    /// Shell terminals of one project can be reached from another.
    pub(crate) terminals_cross_projects: bool,
    /// The catalog of 1.3 (`terminal_run`, `terminal_wait`, `terminal_kill` listed) and the 1.3
    /// values of `terminal_read`, `terminal_submit` and `terminal_input` (the fake does not run
    /// the new operations: its 1.3 runs are read-only).
    pub(crate) terminal_13: bool,
    /// With `terminal_13`: `terminal_read` answers without `cursor`.
    pub(crate) read_omits_cursor: bool,
    /// With `declare_links`: peer agents are refused as `Local terminal not found in this
    /// project` instead of with the rule's messages.
    pub(crate) peer_not_found: bool,
    /// An operation the catalog leaves out.
    pub(crate) catalog_omits: Option<&'static str>,
    /// The catalog of 1.2.0 exactly: without the operations of 1.5.0 either.
    pub(crate) catalog_12: bool,
}

/// The operations 1.5.0 adds.
pub(crate) const TERMINAL_15: [&str; 2] = ["terminal_list", "terminal_search"];

/// The fake's shell terminals: node id → (project id, screen text).
type Terminals = HashMap<String, (String, String)>;

/// A handler with the app's behaviour for the operations the suite calls: `session_info` (an
/// MCP adapter becomes `connected`), guides, an empty canvas of shell terminals that run
/// submitted commands with `sh -c`, and the caller's own terminal.
pub(crate) fn conformant_handler(defects: HandlerDefects) -> Arc<dyn ToolHandler> {
    let terminals: Arc<Mutex<Terminals>> = Arc::default();
    let counter = Arc::new(Mutex::new(0_u32));
    handler_fn(move |caller: Caller, request: ToolRequest| {
        let terminals = Arc::clone(&terminals);
        let counter = Arc::clone(&counter);
        async move { answer(&caller, &request, &terminals, &counter, defects).await }
    })
}

/// The operations v1 lacks.
const MESSAGING: [&str; 4] = ["agent_cards", "agent_send", "agent_task", "agent_reply"];

/// The operations 1.3 adds; the fake lists them only with `terminal_13`.
pub(crate) const TERMINAL_13: [&str; 3] = ["terminal_run", "terminal_wait", "terminal_kill"];

/// `agent-link-isolation`'s messages (`docs/headless-rules.md`).
const AGENT_NOT_YOURS: &str = "Another agent's terminal is driven only by the user: no agent may type into, interrupt, kill or attach to it; send it a request with agent_send over an enabled link instead";

#[expect(clippy::too_many_lines, reason = "one short arm per operation")]
pub(crate) async fn answer(
    caller: &Caller,
    request: &ToolRequest,
    terminals: &Mutex<Terminals>,
    counter: &Mutex<u32>,
    defects: HandlerDefects,
) -> ToolResult {
    let args = request.args_value();
    let node = args["nodeId"].as_str().unwrap_or_default().to_owned();
    let peer = caller
        .sessions()
        .get(&node)
        .is_some_and(|session| session.identity().project_id == caller.project_id());
    let known = |node: &str| {
        node == caller.node_id()
            || terminals.lock().unwrap().get(node).is_some_and(|(project, _)| {
                project == caller.project_id() || defects.terminals_cross_projects
            })
            || (peer && defects.peer_agents_reachable)
    };
    match request.operation().unwrap_or_default() {
        "session_info" => {
            let mut status = caller.status();
            status.state = IntegrationState::Connected;
            "Authenticated tool connection established".clone_into(&mut status.reason);
            caller.set_status(status);
            let names: Vec<&str> = operations()
                .iter()
                .map(termsprawl_protocol::Operation::name)
                .filter(|name| !name.starts_with("browser_"))
                .filter(|name| !defects.v1_catalog || !MESSAGING.contains(name))
                .filter(|name| defects.terminal_13 || !TERMINAL_13.contains(name))
                .filter(|name| defects.catalog_omits != Some(*name))
                .filter(|name| !defects.catalog_12 || !TERMINAL_15.contains(name))
                .collect();
            let mut value = session_info(caller, "conformance-test", false, &names);
            if defects.declare_links {
                value["rules"] = json!([termsprawl_conformance::LINK_RULE]);
            }
            if defects.session_info_order {
                let object = value.as_object_mut().unwrap();
                let instance = object.shift_remove("instanceId").unwrap();
                let host = object.shift_remove("host").unwrap();
                let mut reordered = serde_json::Map::new();
                for (key, item) in std::mem::take(object) {
                    reordered.insert(key.clone(), item);
                    if key == "projectId" {
                        reordered.insert("host".to_owned(), host.clone());
                        reordered.insert("instanceId".to_owned(), instance.clone());
                    }
                }
                *object = reordered;
            }
            ToolResult::ok(value)
        }
        "guide_read" => ToolResult::ok(json!(format!(
            "The {} guide.",
            args["topic"].as_str().unwrap_or_default()
        ))),
        "canvas_list" => {
            let nodes: Vec<Value> = terminals
                .lock()
                .unwrap()
                .iter()
                .filter(|(_, (project, _))| project == caller.project_id())
                .map(|(id, _)| json!({"nodeId": id, "kind": "terminal"}))
                .collect();
            ToolResult::ok(Value::Array(nodes))
        }
        "agent_status" => {
            let entries: Vec<Value> = caller
                .sessions()
                .list()
                .iter()
                .filter(|session| session.identity().project_id == caller.project_id())
                .map(|session| {
                    let identity = session.identity();
                    json!({"nodeId": identity.node_id, "projectId": identity.project_id, "status": session.status()})
                })
                .collect();
            ToolResult::ok(Value::Array(entries))
        }
        "agent_cards" => ToolResult::ok(json!([])),
        "context_read" => ToolResult::ok(json!({"text": "", "reader": "claude-jsonl"})),
        "terminal_open" => {
            let mut counter = counter.lock().unwrap();
            *counter += 1;
            let id = format!("terminal-{counter}");
            terminals
                .lock()
                .unwrap()
                .insert(id.clone(), (caller.project_id().to_owned(), String::new()));
            ToolResult::ok(json!({"nodeId": id}))
        }
        "terminal_read" | "terminal_wait"
            if peer
                && defects.declare_links
                && !defects.peer_agents_reachable
                && !defects.peer_not_found =>
        {
            ToolResult::failure(format!(
                "Reading another agent's terminal needs an enabled agent link from your node to it; ask the user to link the two nodes: termsprawl-headless link {} {node}",
                caller.node_id()
            ))
        }
        "terminal_submit" | "terminal_input" | "terminal_interrupt" | "terminal_kill"
            if peer
                && defects.declare_links
                && !defects.peer_agents_reachable
                && !defects.peer_not_found =>
        {
            ToolResult::failure(AGENT_NOT_YOURS)
        }
        _ if !known(&node) => ToolResult::failure("Local terminal not found in this project"),
        "terminal_read" => {
            let output = terminals
                .lock()
                .unwrap()
                .get(&node)
                .map(|(_, screen)| screen.clone())
                .unwrap_or_default();
            let cursor = output.chars().count();
            let after: String = match args["since"].as_u64() {
                Some(since) => {
                    output.chars().skip(usize::try_from(since).unwrap_or(usize::MAX)).collect()
                }
                None => output,
            };
            let output = if defects.read_ignores_max_chars {
                "0123456789".to_owned()
            } else {
                let limit = termsprawl_conformance::shapes::read_limit(&args["maxChars"]);
                let units: Vec<char> = after.chars().collect();
                units[units.len().saturating_sub(limit)..].iter().collect()
            };
            if !defects.terminal_13 {
                return ToolResult::ok(json!({"nodeId": node, "output": output}));
            }
            let mut value = json!({"nodeId": node, "output": output, "cursor": cursor, "running": true, "exitCode": null, "signal": null});
            if defects.read_omits_cursor {
                value.as_object_mut().unwrap().shift_remove("cursor");
            }
            ToolResult::ok(value)
        }
        "terminal_submit" => {
            let command = args["command"].as_str().unwrap_or_default().to_owned();
            let output =
                tokio::process::Command::new("sh").arg("-c").arg(&command).output().await.unwrap();
            let mut terminals = terminals.lock().unwrap();
            let Some((_, screen)) = terminals.get_mut(&node) else {
                return ToolResult::failure("Terminal is not attached");
            };
            let cursor = screen.chars().count();
            screen.push_str("$ ");
            screen.push_str(&command);
            screen.push('\n');
            screen.push_str(&String::from_utf8_lossy(&output.stdout));
            if defects.terminal_13 {
                return ToolResult::ok(
                    json!({"nodeId": node, "delivered": true, "cursor": cursor}),
                );
            }
            ToolResult::ok(json!({"nodeId": node, "delivered": true}))
        }
        "terminal_wait" if defects.terminal_13 => {
            let cursor = terminals
                .lock()
                .unwrap()
                .get(&node)
                .map_or(0, |(_, screen)| screen.chars().count());
            ToolResult::ok(
                json!({"nodeId": node, "reached": false, "running": true, "exitCode": null, "signal": null, "output": "", "truncated": false, "cursor": cursor}),
            )
        }
        "terminal_input" if defects.terminal_13 => {
            let cursor = terminals
                .lock()
                .unwrap()
                .get(&node)
                .map_or(0, |(_, screen)| screen.chars().count());
            ToolResult::ok(json!({"nodeId": node, "delivered": true, "cursor": cursor}))
        }
        "terminal_input" | "terminal_interrupt" => {
            ToolResult::ok(json!({"nodeId": node, "delivered": true}))
        }
        "canvas_move" | "canvas_resize" => ToolResult::ok(json!({"nodeId": node})),
        "terminal_close" => {
            terminals.lock().unwrap().remove(&node);
            ToolResult::ok(json!({"nodeId": node, "cleanupPendingIds": []}))
        }
        _ => ToolResult::failure("Not supported by this fake"),
    }
}

/// A fake app with the conformant handler; the receive timeout is short so that the stalled-body
/// rule does not take 15 s.
pub(crate) async fn fake_app(defects: HandlerDefects) -> FakeApp {
    FakeApp::builder()
        .handler(conformant_handler(defects))
        .config(ServerConfig::default().with_receive_timeout(Duration::from_secs(2)))
        .start()
        .await
        .unwrap()
}

/// What a proxy defect sees of a request.
pub(crate) struct Seen<'a> {
    pub(crate) method: &'a str,
    pub(crate) target: &'a str,
    pub(crate) headers: &'a [(String, String)],
    /// The body, when it arrived within a moment of the head (with a `content-length`).
    pub(crate) body: Option<&'a [u8]>,
}

impl Seen<'_> {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(header, _)| header.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

/// What a proxy defect does with a request.
pub(crate) enum Action {
    /// Forward it unchanged.
    Forward,
    /// Forward it without the headers named.
    Strip(&'static [&'static str]),
    /// Answer this instead: status and JSON body.
    Answer(u16, Value),
    /// Forward it and pass the JSON body of the answer through this function.
    Rewrite(fn(Value) -> Value),
    /// Forward it with its body (as text) passed through the first function, and pass the JSON
    /// body of the answer through the second; a request without a whole body is forwarded as is.
    Transform(fn(&str) -> String, fn(Value) -> Value),
}

pub(crate) type Defect = Arc<dyn Fn(&Seen<'_>) -> Action + Send + Sync>;

/// Puts a proxy with `defect` in front of the app: `endpoint.json` is rewritten to the proxy's
/// port (same instance id), so the conformance run talks to the proxy.
pub(crate) async fn plant(app: &FakeApp, defect: Defect) {
    plant_at(&app.data_dir().join("endpoint.json"), app.port().unwrap(), defect).await;
}

/// Puts a proxy with `defect` in front of the server at `upstream` whose endpoint file is
/// `endpoint` (rewritten to the proxy's port, same instance id). The proxy runs in the test's
/// process, so `files.lock.owner-listens` fails for a server in another process.
pub(crate) async fn plant_at(endpoint: &Path, upstream: u16, defect: Defect) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let endpoint = endpoint.to_path_buf();
    let mut value: Value = serde_json::from_slice(&std::fs::read(&endpoint).unwrap()).unwrap();
    value["url"] = json!(format!("http://127.0.0.1:{port}/call"));
    termsprawl_transport::server::write_atomic(&endpoint, value.to_string().as_bytes()).unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else { continue };
            let defect = Arc::clone(&defect);
            tokio::spawn(async move {
                let _ = proxy(stream, upstream, defect).await;
            });
        }
    });
}

async fn proxy(mut client: TcpStream, upstream: u16, defect: Defect) -> std::io::Result<()> {
    let mut buffer = Vec::new();
    let mut chunk = vec![0_u8; 16 * 1024];
    let head_end = loop {
        let read = client.read(&mut chunk).await?;
        if read == 0 {
            return Ok(());
        }
        buffer.extend_from_slice(&chunk[..read]);
        if let Some(end) = buffer.windows(4).position(|window| window == b"\r\n\r\n") {
            break end + 4;
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let request_line: Vec<&str> = lines.next().unwrap_or_default().split(' ').collect();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_owned(), value.trim().to_owned()))
        .collect();
    let length = headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.parse::<usize>().ok());
    if let Some(length) = length {
        let deadline = tokio::time::Instant::now() + Duration::from_millis(500);
        while buffer.len() < head_end + length {
            match tokio::time::timeout_at(deadline, client.read(&mut chunk)).await {
                Ok(Ok(read)) if read > 0 => buffer.extend_from_slice(&chunk[..read]),
                _ => break,
            }
        }
    }
    let body = length
        .filter(|length| buffer.len() >= head_end + length)
        .map(|length| &buffer[head_end..head_end + length]);
    let seen = Seen {
        method: request_line.first().copied().unwrap_or_default(),
        target: request_line.get(1).copied().unwrap_or_default(),
        headers: &headers,
        body,
    };
    let mut forwarded = buffer.clone();
    match defect(&seen) {
        Action::Answer(status, value) => {
            let body = value.to_string();
            let response = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            client.write_all(response.as_bytes()).await?;
            client.shutdown().await?;
            return Ok(());
        }
        Action::Strip(names) => {
            let mut rebuilt: Vec<u8> = Vec::new();
            for (index, line) in head.split("\r\n").enumerate() {
                let dropped = index > 0
                    && line.split_once(':').is_some_and(|(name, _)| {
                        names.iter().any(|n| n.eq_ignore_ascii_case(name.trim()))
                    });
                if !dropped && !line.is_empty() {
                    rebuilt.extend_from_slice(line.as_bytes());
                    rebuilt.extend_from_slice(b"\r\n");
                }
            }
            rebuilt.extend_from_slice(b"\r\n");
            rebuilt.extend_from_slice(&buffer[head_end..]);
            forwarded = rebuilt;
        }
        Action::Transform(request, rewrite) => {
            if let Some(text) = body.and_then(|body| std::str::from_utf8(body).ok()) {
                let changed = request(text);
                let mut rebuilt: Vec<u8> = Vec::new();
                for line in head.split("\r\n").filter(|line| !line.is_empty()) {
                    let line = match line.split_once(':') {
                        Some((name, _)) if name.trim().eq_ignore_ascii_case("content-length") => {
                            format!("content-length: {}", changed.len())
                        }
                        _ => line.to_owned(),
                    };
                    rebuilt.extend_from_slice(line.as_bytes());
                    rebuilt.extend_from_slice(b"\r\n");
                }
                rebuilt.extend_from_slice(b"\r\n");
                rebuilt.extend_from_slice(changed.as_bytes());
                return relay(&mut client, upstream, &rebuilt, rewrite).await;
            }
        }
        Action::Rewrite(rewrite) => {
            return relay(&mut client, upstream, &forwarded, rewrite).await;
        }
        Action::Forward => {}
    }
    let mut server = TcpStream::connect(("127.0.0.1", upstream)).await?;
    server.write_all(&forwarded).await?;
    tokio::io::copy_bidirectional(&mut client, &mut server).await?;
    Ok(())
}

/// Sends `forwarded` upstream and answers the client with the answer's JSON body passed through
/// `rewrite`.
async fn relay(
    client: &mut TcpStream,
    upstream: u16,
    forwarded: &[u8],
    rewrite: fn(Value) -> Value,
) -> std::io::Result<()> {
    let mut server = TcpStream::connect(("127.0.0.1", upstream)).await?;
    server.write_all(forwarded).await?;
    let (status, body) = read_response(&mut server).await?;
    let body = serde_json::from_slice::<Value>(&body)
        .map_or(body, |value| rewrite(value).to_string().into_bytes());
    let head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    client.write_all(head.as_bytes()).await?;
    client.write_all(&body).await?;
    client.shutdown().await?;
    Ok(())
}

/// One answer with a `content-length`: its status line's rest (`200 OK`) and its body.
async fn read_response(server: &mut TcpStream) -> std::io::Result<(String, Vec<u8>)> {
    let mut buffer = Vec::new();
    let mut chunk = vec![0_u8; 16 * 1024];
    loop {
        if let Some(end) = buffer.windows(4).position(|window| window == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buffer[..end]).into_owned();
            let status = head
                .lines()
                .next()
                .unwrap_or_default()
                .split_once(' ')
                .map_or("502", |(_, rest)| rest)
                .to_owned();
            let length = head
                .lines()
                .filter_map(|line| line.split_once(':'))
                .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
                .and_then(|(_, value)| value.trim().parse::<usize>().ok())
                .unwrap_or(0);
            while buffer.len() < end + 4 + length {
                let read = server.read(&mut chunk).await?;
                if read == 0 {
                    break;
                }
                buffer.extend_from_slice(&chunk[..read]);
            }
            let body = buffer[end + 4..].iter().copied().take(length).collect();
            return Ok((status, body));
        }
        let read = server.read(&mut chunk).await?;
        if read == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buffer.extend_from_slice(&chunk[..read]);
    }
}

/// The authorization a request carries is `Bearer <token>` or the bare token.
pub(crate) fn has_token(seen: &Seen<'_>, token: &str) -> bool {
    let value = seen.header("authorization").unwrap_or_default();
    value.strip_prefix("Bearer ").unwrap_or(value) == token
}
