//! `termsprawlctl mcp` under a real third-party MCP host (issue 21): the MCP Inspector CLI, npm
//! package `@modelcontextprotocol/inspector` 0.15.0 (the newest whose `engines` allow Node 20),
//! pinned with its whole dependency tree in `tests/node/package.json` and
//! `tests/node/package-lock.json`, drives the real bridge against a real `termsprawl-headless serve`
//! (real tmux, a real agent session from `termsprawl-headless launch`).
//!
//! The Inspector's CLI mode runs one method per process, as people run it:
//! `mcp-inspector --config FILE --server termsprawl --cli --method M …`, the config file being the
//! `mcpServers` JSON that hosts read, with `--session` in `args` (`spec/mcp.md` §1). Each run starts
//! a fresh bridge, performs the handshake of the Inspector's SDK (1.32.2, which offers 2025-11-25
//! and has no 2026-07-28 support, so only the handshake era is exercised here; the modern era is
//! covered by the official Python SDK in `mcp_interop.rs`), and prints the result as JSON, which this
//! test asserts.
//!
//! The Inspector is the `tests/node` peer that `cargo xtask test` provisions (`npm ci` of the
//! pinned lock file, into `target/peers/node`). Missing, the test fails and says how to install
//! it; it is never skipped.

use std::io::Read as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;

use crate::headless::Headless;
use crate::support::BIN;

/// The version `tests/node/package.json` pins.
const INSPECTOR_VERSION: &str = "0.15.0";

/// The `node_modules` folder that holds the pinned Inspector: the `tests/node` peer that
/// `cargo xtask test` provisions (a test without it fails, naming that command).
fn node_modules() -> PathBuf {
    let found = termsprawl_test_support::peers::node_modules("");
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(found.join("@modelcontextprotocol/inspector/package.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        manifest["version"],
        INSPECTOR_VERSION,
        "{} holds another Inspector version: run `npm ci` again with tests/node/package-lock.json",
        found.display()
    );
    found.clone()
}

/// A running `termsprawl-headless serve` on a private data directory, with one launched agent.
struct Server {
    _headless: Headless,
    dir: TempDir,
    session_file: PathBuf,
    agent_node: String,
}

impl Server {
    fn start() -> Server {
        let dir = TempDir::new().unwrap();
        let project = dir.path().join("project");
        let home = dir.path().join("home");
        std::fs::create_dir(&project).unwrap();
        std::fs::create_dir(&home).unwrap();
        let headless = Headless::start(&dir.path().join("data"), &project, |command| {
            command.env("SHELL", "/bin/sh").env("HOME", &home);
        });
        let launched = headless.launch("inspector");
        let session_file = PathBuf::from(launched["sessionFile"].as_str().unwrap());
        let agent_node = launched["nodeId"].as_str().unwrap().to_owned();
        Server { _headless: headless, dir, session_file, agent_node }
    }

    /// The `mcpServers` configuration a host reads, for the agent's session.
    fn write_config(&self, extra: &[&str]) -> PathBuf {
        let mut args = vec![json!("--session"), json!(self.session_file), json!("mcp")];
        args.extend(extra.iter().map(|arg| json!(arg)));
        let config = json!({"mcpServers": {"termsprawl": {"command": BIN, "args": args}}});
        let path = self.dir.path().join(format!("mcp-{}.json", extra.len()));
        std::fs::write(&path, serde_json::to_vec_pretty(&config).unwrap()).unwrap();
        path
    }
}

/// One Inspector CLI run: `node …/mcp-inspector --config CONFIG --server termsprawl --cli ARGS…`.
struct Inspector {
    cli: PathBuf,
    config: PathBuf,
}

impl Inspector {
    fn new(config: PathBuf) -> Inspector {
        let cli = node_modules().join("@modelcontextprotocol/inspector/cli/build/cli.js");
        Inspector { cli, config }
    }

    /// The command line, for messages.
    fn command_line(&self, args: &[&str]) -> String {
        format!(
            "node {} --config {} --server termsprawl --cli {}",
            self.cli.display(),
            self.config.display(),
            args.join(" ")
        )
    }

    /// Runs the Inspector; its stdout parsed as JSON, or its output when it failed.
    fn run(&self, args: &[&str]) -> Result<Value, String> {
        let mut child = Command::new("node")
            .arg(&self.cli)
            .arg("--config")
            .arg(&self.config)
            .args(["--server", "termsprawl", "--cli"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|error| {
                panic!("node does not run ({error}); install Node 20 or later")
            });
        let mut stdout = child.stdout.take().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let out = std::thread::spawn(move || {
            let mut text = String::new();
            stdout.read_to_string(&mut text).map(|_| text)
        });
        let err = std::thread::spawn(move || {
            let mut text = String::new();
            stderr.read_to_string(&mut text).map(|_| text)
        });
        let deadline = Instant::now() + Duration::from_mins(1);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the Inspector did not finish within 60 s: {}", self.command_line(args));
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let stdout = out.join().unwrap().unwrap();
        let stderr = err.join().unwrap().unwrap();
        if !status.success() {
            return Err(format!("{status}\nstdout:\n{stdout}\nstderr:\n{stderr}"));
        }
        serde_json::from_str(&stdout)
            .map_err(|error| format!("stdout is not JSON ({error}):\n{stdout}\nstderr:\n{stderr}"))
    }

    /// A run that must succeed.
    #[track_caller]
    fn ok(&self, args: &[&str]) -> Value {
        self.run(args).unwrap_or_else(|failure| {
            panic!("the Inspector failed: {}\n{failure}", self.command_line(args))
        })
    }

    /// `tools/call` of `tool` with `key=value` arguments (the Inspector converts each value by
    /// the listed schema's type).
    #[track_caller]
    fn call(&self, tool: &str, arguments: &[&str]) -> Value {
        let mut args = vec!["--method", "tools/call", "--tool-name", tool];
        if !arguments.is_empty() {
            args.push("--tool-arg");
            args.extend(arguments);
        }
        self.ok(&args)
    }
}

/// The `ToolResult` a successful text `tools/call` result carries.
#[track_caller]
fn tool_result(result: &Value) -> Value {
    assert_eq!(result["isError"], false, "{result}");
    let content = result["content"].as_array().unwrap();
    assert_eq!(content.len(), 1, "{result}");
    assert_eq!(content[0]["type"], "text", "{result}");
    let text: Value = serde_json::from_str(content[0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text["ok"], true, "{result}");
    text
}

#[test]
fn the_mcp_inspector_lists_titled_tools_and_drives_a_terminal_through_the_bridge() {
    let server = Server::start();
    let inspector = Inspector::new(server.write_config(&[]));

    // tools/list: the whole table (the headless server has no browser, so `session_info` leaves
    // the browser operations out), each with the human title of the negotiated 2025-11-25.
    let listed = inspector.ok(&["--method", "tools/list"]);
    let tools = listed["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool["name"].as_str().unwrap()).collect();
    let expected: Vec<&str> = termsprawl_protocol::operations()
        .iter()
        .map(termsprawl_protocol::Operation::name)
        .filter(|name| !name.starts_with("browser_"))
        .collect();
    assert_eq!(names, expected, "{listed}");
    for tool in tools {
        let operation = termsprawl_protocol::operation(tool["name"].as_str().unwrap()).unwrap();
        assert_eq!(tool["title"], operation.title(), "{tool}");
        assert_eq!(tool["annotations"]["title"], operation.title(), "{tool}");
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
    }
    let open = tools.iter().find(|tool| tool["name"] == "terminal_open").unwrap();
    assert_eq!(open["title"], "Open terminal");

    // The guides as resources.
    let resources = inspector.ok(&["--method", "resources/list"]);
    let uris: Vec<&str> = resources["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|resource| resource["uri"].as_str().unwrap())
        .collect();
    assert_eq!(uris.len(), 7, "{resources}");
    assert_eq!(uris[0], "termsprawl://guides/overview");
    let read =
        inspector.ok(&["--method", "resources/read", "--uri", "termsprawl://guides/terminal"]);
    assert_eq!(read["contents"][0]["mimeType"], "text/markdown", "{read}");
    assert_eq!(
        read["contents"][0]["text"],
        termsprawl_protocol::guide(termsprawl_protocol::Topic::Terminal),
        "{read}"
    );

    // terminal_open through the host: a new shell node.
    let opened = tool_result(&inspector.call("terminal_open", &["title=inspector shell"]));
    let node_id = opened["value"]["nodeId"].as_str().expect("terminal_open returns a nodeId");
    assert!(!node_id.is_empty());
    assert_ne!(node_id, server.agent_node);

    // terminal_submit, then terminal_read until the output is there.
    let submitted = tool_result(&inspector.call(
        "terminal_submit",
        &[&format!("nodeId={node_id}"), "command=echo hello-from-$((6*7))"],
    ));
    assert_eq!(submitted["ok"], true);
    let deadline = Instant::now() + Duration::from_secs(20);
    let output = loop {
        let read = tool_result(&inspector.call("terminal_read", &[&format!("nodeId={node_id}")]));
        let output = read["value"]["output"].as_str().expect("terminal_read returns output");
        // The shell's answer, not the echoed command line: the arithmetic is expanded.
        if output.contains("hello-from-42") {
            break output.to_owned();
        }
        assert!(Instant::now() < deadline, "hello-from-42 never appeared; last output:\n{output}");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(output.contains("echo hello-from-$((6*7))"), "{output}");

    // maxChars is a number in the schema: the Inspector converts the string, the server honours
    // it.
    let tail = tool_result(
        &inspector.call("terminal_read", &[&format!("nodeId={node_id}"), "maxChars=5"]),
    );
    let tail = tail["value"]["output"].as_str().unwrap();
    assert!(tail.chars().count() <= 5, "{tail:?}");

    // A tool error comes back as an isError result the host shows, not as a protocol failure.
    let missing = inspector.call("terminal_read", &[]);
    assert_eq!(missing["isError"], true, "{missing}");
    let text: Value =
        serde_json::from_str(missing["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, json!({"ok": false, "error": "Missing argument: nodeId"}));

    // An unknown tool is a protocol error, which the Inspector reports and exits 1 on.
    let unknown = inspector.run(&["--method", "tools/call", "--tool-name", "no_such_tool"]);
    let failure = unknown.expect_err("an unknown tool fails the Inspector run");
    assert!(failure.contains("Unknown tool: no_such_tool"), "{failure}");
}

#[test]
fn the_mcp_inspector_sees_only_what_the_narrowing_flags_keep() {
    let server = Server::start();
    let inspector = Inspector::new(server.write_config(&["--read-only"]));
    let listed = inspector.ok(&["--method", "tools/list"]);
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    let expected: Vec<&str> = termsprawl_protocol::operations()
        .iter()
        .filter(|operation| operation.annotations().read_only)
        .map(termsprawl_protocol::Operation::name)
        .filter(|name| !name.starts_with("browser_"))
        .collect();
    assert_eq!(names, expected, "{listed}");
    assert!(names.contains(&"terminal_read") && !names.contains(&"terminal_open"));
    let refused = inspector.run(&["--method", "tools/call", "--tool-name", "terminal_open"]);
    let failure = refused.expect_err("a tool the flags drop is unknown to the host");
    assert!(failure.contains("Unknown tool: terminal_open"), "{failure}");
    // What the flags keep still works: read the agent's own terminal.
    let read =
        tool_result(&inspector.call("terminal_read", &[&format!("nodeId={}", server.agent_node)]));
    assert!(read["value"]["output"].is_string(), "{read}");
}

#[test]
fn the_mcp_inspector_shows_each_startup_mistake_as_its_connection_failure() {
    // What the Inspector displays (issue 39): `Failed to connect to MCP server: MCP error -32603:`
    // and the bridge's whole message, where it showed `Connection closed` before (0.15.0).
    let dir = TempDir::new().unwrap();
    let sessions = dir.path().join("data/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let gone = sessions.join("closed-node.json");
    let cases: [(&str, Vec<Value>, String); 3] = [
        (
            "misspelt option",
            vec![json!("mcp"), json!("--readonly")],
            "termsprawlctl mcp: unknown option --readonly: did you mean --read-only? Fix the command the host runs for this server: termsprawlctl --session /absolute/path/to/session.json mcp [--read-only] [--tools NAME,...] [--max-wait-ms MS] (docs/hosts.md)".to_owned(),
        ),
        ("no session", vec![json!("mcp")], termsprawl_cli::MCP_MISSING_SESSION.to_owned()),
        (
            "closed node",
            vec![json!("--session"), json!(gone), json!("mcp")],
            format!(
                "termsprawlctl mcp: the session of termsprawl node closed-node was removed ({} no longer exists): that node was closed, or the app restarted without it. Start the agent in an open node (or make one, e.g. `termsprawl-headless launch --json`), then register that node's session file in place of this one, with --session or TERMSPRAWL_SESSION_FILE (docs/hosts.md)",
                gone.display()
            ),
        ),
    ];
    for (index, (name, args, message)) in cases.iter().enumerate() {
        let config = json!({"mcpServers": {"termsprawl": {"command": BIN, "args": args}}});
        let path = dir.path().join(format!("mistake-{index}.json"));
        std::fs::write(&path, serde_json::to_vec_pretty(&config).unwrap()).unwrap();
        let failure = Inspector::new(path)
            .run(&["--method", "tools/list"])
            .expect_err("a startup mistake is a failed connection");
        let shown = format!("Failed to connect to MCP server: MCP error -32603: {message}\n");
        assert!(failure.contains(&shown), "{name}: {failure}");
        assert!(!failure.contains("Connection closed"), "{name}: {failure}");
    }
}
