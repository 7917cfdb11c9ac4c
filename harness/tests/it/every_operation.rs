//! Every operation of the table, end to end and only through the real `termsprawlctl` (cli, mcp,
//! headless and external-term together, so it lives here beside the demo and the soak, with the
//! two binaries built as they build them): a real `termsprawl-headless serve` process on a private data directory (real tmux on its private
//! socket, a private Xvfb with a real xterm for `terminal_external`), two agents launched with
//! `termsprawl-headless launch` and linked both ways, then each operation of
//! `termsprawl_protocol::operations()` run through the `call` compatibility form (a sample also
//! through the direct form with flags) and through one long-lived `termsprawlctl mcp` bridge per
//! agent. Each operation's success shape and at least one of its failure paths are checked both
//! ways. An operation of the table without a case here fails the test.

use std::collections::HashSet;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use harness::base::binaries::{self, Binaries};
use serde_json::{Value, json};
use tempfile::TempDir;
use termsprawl_protocol::{Operation, Topic, guide, operations};
use termsprawl_test_support::mcp::{Mcp, request};
use termsprawl_test_support::serve::{Serve, serve_command};
use termsprawl_test_support::tmux::TmuxGuard;
use termsprawl_test_support::xvfb::{Xvfb, require};

/// How long anything that should take well under a second may take.
const PATIENCE: Duration = Duration::from_secs(15);

/// How long an MCP answer may take.
const MCP_PATIENCE: Duration = Duration::from_mins(1);

const BROWSER: &str =
    "Browser nodes need the termsprawl desktop app; this headless server has no browser";
const OWN_NODE: &str =
    "Use a separate shell terminal instead of writing into or closing your own agent";
const TERMINAL_NOT_FOUND: &str = "Local terminal not found in this project";

/// An agent node: its id and session file.
#[derive(Debug, Clone)]
struct Agent {
    node_id: String,
    session_file: PathBuf,
}

impl Agent {
    /// Its session token, read back from its session file, to prove that it appears nowhere.
    fn token(&self) -> String {
        let session: Value =
            serde_json::from_slice(&std::fs::read(&self.session_file).unwrap()).unwrap();
        session["token"].as_str().unwrap().to_owned()
    }
}

/// The running server and what the cases share. Fields drop in order: the server, the tmux
/// server (which ends the xterm clients attached to it), the X server, the directory.
struct World {
    serve: Serve,
    guard: TmuxGuard,
    _xvfb: Xvfb,
    dir: TempDir,
    ctl: PathBuf,
    alpha: Agent,
    beta: Agent,
    project_id: String,
    /// A plain shell terminal opened for the cases.
    shell: String,
    xterm: PathBuf,
    fake_agent: PathBuf,
}

impl World {
    fn start(binaries: &Binaries) -> World {
        let ctl = binaries.ctl.clone();
        let xterm = require("xterm", "xterm");
        let xvfb = Xvfb::start();
        let dir = TempDir::new().unwrap();
        let project = dir.path().join("project");
        std::fs::create_dir(&project).unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir(&home).unwrap();
        let user_data = dir.path().join("data");
        let guard = TmuxGuard::new(&user_data);
        let mut command = serve_command(&binaries.headless, &user_data, &project, &ctl);
        command
            .env("DISPLAY", xvfb.display())
            .env("SHELL", "/bin/sh")
            .env("HOME", &home)
            .env_remove("TMUX")
            .env_remove("TMUX_PANE");
        let serve = Serve::start(&mut command, Duration::from_secs(30), |_| {}).unwrap();
        let project_id = serve
            .lines()
            .iter()
            .find_map(|line| line.strip_prefix("termsprawl-headless: default project "))
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap()
            .to_owned();

        // A fake agent for agent_launch's custom preset: answers --version, then is a shell.
        let fake_agent = dir.path().join("fake-agent");
        std::fs::write(
            &fake_agent,
            "#!/bin/sh\ncase \"$1\" in\n--version) echo 'fake-agent 1.0';;\n*) exec /bin/sh;;\nesac\n",
        )
        .unwrap();
        std::fs::set_permissions(&fake_agent, std::fs::Permissions::from_mode(0o755)).unwrap();

        let headless = |args: &[&str]| {
            Command::new(&binaries.headless)
                .arg("--data")
                .arg(&user_data)
                .args(args)
                .stdin(Stdio::null())
                .output()
                .unwrap()
        };
        // alpha, whose runs notify it, is an agent program (a notice is never typed into a
        // shell): Python reading lines; beta is a shell.
        let launch = |name: &str| {
            let program: &[&str] = match name {
                "alpha" => &["python3", "-c", "import sys\nfor line in sys.stdin: pass"],
                _ => &["/bin/sh"],
            };
            let output =
                headless(&[&["launch", "--agent", name, "--json", "--"][..], program].concat());
            assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
            let value: Value = serde_json::from_slice(&output.stdout).unwrap();
            Agent {
                node_id: value["nodeId"].as_str().unwrap().to_owned(),
                session_file: PathBuf::from(value["sessionFile"].as_str().unwrap()),
            }
        };
        let alpha = launch("alpha");
        let beta = launch("beta");
        let linked = headless(&["link", "--both", &alpha.node_id, &beta.node_id]);
        assert!(linked.status.success(), "{}", String::from_utf8_lossy(&linked.stderr));

        let mut world = World {
            serve,
            guard,
            _xvfb: xvfb,
            dir,
            ctl,
            alpha,
            beta,
            project_id,
            shell: String::new(),
            xterm,
            fake_agent,
        };
        world.write_preferences(None);
        world.shell = world.terminal("shell");
        world
    }

    fn user_data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn project(&self) -> PathBuf {
        self.dir.path().join("project").canonicalize().unwrap()
    }

    /// `D/preferences.json`: xterm as the external terminal, the fake agent (or `custom`) as the
    /// custom preset.
    fn write_preferences(&self, custom: Option<&Path>) {
        let preferences = json!({
            "externalTerminal": {"executable": self.xterm, "args": ["-e", "{command}"]},
            "custom": {"executable": custom.unwrap_or(&self.fake_agent)},
        });
        std::fs::write(
            self.user_data().join("agent-tools/preferences.json"),
            preferences.to_string(),
        )
        .unwrap();
    }

    /// `termsprawlctl --session <alpha> call …` (or another agent's), for setting up a case.
    fn setup(&self, agent: &Agent, operation: &str, args: &Value) -> Value {
        match compat_call(&self.ctl, agent, operation, args) {
            Ok(value) => value,
            Err(error) => panic!("setup {operation} {args} failed: {error}"),
        }
    }

    fn node_id(value: &Value) -> String {
        value["nodeId"].as_str().unwrap().to_owned()
    }

    fn terminal(&self, title: &str) -> String {
        World::node_id(&self.setup(&self.alpha, "terminal_open", &json!({"title": title})))
    }

    fn sticky(&self, text: &str) -> String {
        World::node_id(&self.setup(&self.alpha, "sticky_open", &json!({"text": text})))
    }

    /// A node of `canvas_list`, or `null`.
    fn node(&self, node_id: &str) -> Value {
        termsprawl_test_support::canvas_node(
            &self.setup(&self.alpha, "canvas_list", &json!({})),
            node_id,
        )
    }

    /// Reads `node_id` until its output contains `needle`.
    fn wait_for_output(&self, node_id: &str, needle: &str) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let read = self.setup(&self.alpha, "terminal_read", &json!({"nodeId": node_id}));
            let output = read["output"].as_str().unwrap().to_owned();
            if output.contains(needle) {
                return output;
            }
            assert!(Instant::now() < deadline, "{needle:?} never appeared in {node_id}:\n{output}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// A pending task from alpha to beta.
    fn task(&self, text: &str) -> String {
        let task = self.setup(
            &self.alpha,
            "agent_send",
            &json!({"nodeId": self.beta.node_id, "text": text, "messageId": format!("setup-{text}")}),
        );
        task["taskId"].as_str().unwrap().to_owned()
    }

    /// Beta answers `task_id` so that beta is free for the next request.
    fn finish(&self, task_id: &str) {
        let reply =
            self.setup(&self.beta, "agent_reply", &json!({"taskId": task_id, "text": "ok"}));
        assert_eq!(reply["state"], "completed");
    }

    /// Stops the server with SIGTERM and checks that it stopped cleanly.
    fn stop(self) {
        let (status, _) = self.serve.terminate().unwrap();
        assert!(status.success(), "serve ended with {status}");
    }
}

/// `termsprawlctl --session FILE call OP JSON` with an empty environment; checks the CLI
/// contract of protocol.md §8 (indented `ToolResult` on stdout, nothing on stderr, exit 0 or 1)
/// and returns the value or the error.
fn compat_call(ctl: &Path, agent: &Agent, operation: &str, args: &Value) -> Result<Value, String> {
    let output = Command::new(ctl)
        .arg("--session")
        .arg(&agent.session_file)
        .args(["call", operation, &args.to_string()])
        .env_clear()
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr, "", "call {operation}: stderr must be empty");
    let result: Value = serde_json::from_str(&stdout).unwrap_or_else(|error| {
        panic!("call {operation}: stdout is not JSON ({error}):\n{stdout}")
    });
    assert_eq!(
        stdout,
        format!("{}\n", serde_json::to_string_pretty(&result).unwrap()),
        "call {operation}: the result is indented with two spaces and ends with one newline"
    );
    tool_result(&result, output.status.code(), operation)
}

/// Checks a `ToolResult` and the exit status that goes with it.
fn tool_result(result: &Value, code: Option<i32>, operation: &str) -> Result<Value, String> {
    let keys: Vec<&str> = result.as_object().unwrap().keys().map(String::as_str).collect();
    match result["ok"].as_bool() {
        Some(true) => {
            assert!(keys == ["ok", "value"] || keys == ["ok"], "{operation}: {result}");
            assert!(code.is_none_or(|code| code == 0), "{operation}: exit {code:?} for ok:true");
            Ok(result.get("value").cloned().unwrap_or(Value::Null))
        }
        Some(false) => {
            assert_eq!(keys, ["ok", "error"], "{operation}: {result}");
            assert!(code.is_none_or(|code| code == 1), "{operation}: exit {code:?} for ok:false");
            Err(result["error"].as_str().unwrap().to_owned())
        }
        None => panic!("{operation}: not a tool result: {result}"),
    }
}

/// `termsprawlctl OP --flag value …` (the direct form) with the session in
/// `TERMSPRAWL_SESSION_FILE`.
fn direct(world: &World, agent: &Agent, args: &[&str]) -> Output {
    Command::new(&world.ctl)
        .args(args)
        .env_clear()
        .env("TERMSPRAWL_SESSION_FILE", &agent.session_file)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// The direct form succeeded and printed `expected` (a value printed as indented JSON, a string
/// as is).
#[track_caller]
fn direct_ok(output: &Output, expected: &Value) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(stderr, "");
    let stdout = String::from_utf8(output.stdout.clone()).unwrap();
    match expected {
        Value::String(text) if text.ends_with('\n') => assert_eq!(stdout, *text),
        Value::String(text) => assert_eq!(stdout, format!("{text}\n")),
        value => assert_eq!(stdout, format!("{}\n", serde_json::to_string_pretty(value).unwrap())),
    }
}

/// The direct form failed at the server: nothing on stdout, `Error: <message>` on stderr, exit 1.
#[track_caller]
fn direct_fails(output: &Output, message: &str) {
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "");
    assert_eq!(String::from_utf8_lossy(&output.stderr), format!("Error: {message}\n"));
}

/// One `termsprawlctl --session FILE mcp` process (the shared driver, which checks the envelope of
/// every line), spoken to one request at a time.
struct Bridge {
    mcp: Mcp,
    next_id: u64,
}

impl Bridge {
    fn start(ctl: &Path, agent: &Agent) -> Bridge {
        let mut command = Command::new(ctl);
        command.arg("--session").arg(&agent.session_file).arg("mcp").env_clear();
        let mcp = Mcp::spawn(command, &agent.token()).patience(MCP_PATIENCE);
        Bridge { mcp, next_id: 0 }
    }

    /// Sends one request and returns its `result`, or its `error` as `Err`.
    fn request(&mut self, method: &str, params: &Value) -> Result<Value, Value> {
        self.next_id += 1;
        let answer = self.mcp.request(&request(json!(self.next_id), method, Some(params.clone())));
        match (answer.get("result"), answer.get("error")) {
            (Some(result), None) => Ok(result.clone()),
            (None, Some(error)) => Err(error.clone()),
            _ => panic!("not a JSON-RPC response: {answer}"),
        }
    }

    /// `tools/call`: checks the content mapping of mcp.md §3.5 and returns the value or error.
    fn call(&mut self, operation: &str, args: &Value) -> Result<Value, String> {
        let result = self
            .request("tools/call", &json!({"name": operation, "arguments": args}))
            .unwrap_or_else(|error| panic!("tools/call {operation}: {error}"));
        let keys: Vec<&str> = result.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["isError", "content"], "{result}");
        let content = result["content"].as_array().unwrap();
        assert_eq!(content.len(), 1, "{result}");
        assert_eq!(content[0]["type"], "text", "{result}");
        let text = content[0]["text"].as_str().unwrap();
        let tool: Value = serde_json::from_str(text).unwrap();
        assert_eq!(text, tool.to_string(), "the text is the compact ToolResult");
        let outcome = tool_result(&tool, None, operation);
        assert_eq!(result["isError"], outcome.is_err(), "{result}");
        outcome
    }

    /// Closes stdin and checks that the bridge exits 0 without having logged anything.
    fn finish(self) {
        let closed = self.mcp.close();
        assert!(closed.status.success(), "the bridge ended with {}", closed.status);
        assert_eq!(closed.rest, Vec::<Value>::new(), "the bridge wrote unasked lines");
        assert_eq!(closed.stderr, "", "the bridge logged problems");
    }
}

/// How a case reaches the server.
enum Via {
    /// `termsprawlctl call OP JSON`.
    Call,
    /// `tools/call` on the bridges of alpha and beta.
    Mcp { alpha: Box<Bridge>, beta: Box<Bridge> },
}

struct Driver<'w> {
    world: &'w World,
    via: Via,
}

impl Driver<'_> {
    fn tag(&self) -> &'static str {
        match self.via {
            Via::Call => "call",
            Via::Mcp { .. } => "mcp",
        }
    }

    fn run(&mut self, agent: &Agent, operation: &str, args: &Value) -> Result<Value, String> {
        match &mut self.via {
            Via::Call => compat_call(&self.world.ctl, agent, operation, args),
            Via::Mcp { alpha, beta } => {
                let bridge = if agent.node_id == self.world.alpha.node_id { alpha } else { beta };
                bridge.call(operation, args)
            }
        }
    }

    /// The operation succeeds as `agent`; returns its value.
    #[track_caller]
    fn ok_as(&mut self, agent: &Agent, operation: &str, args: &Value) -> Value {
        let tag = self.tag();
        self.run(agent, operation, args)
            .unwrap_or_else(|error| panic!("{tag} {operation} {args}: failed with {error}"))
    }

    #[track_caller]
    fn ok(&mut self, operation: &str, args: &Value) -> Value {
        let alpha = self.world.alpha.clone();
        self.ok_as(&alpha, operation, args)
    }

    /// The operation fails as `agent` with exactly `message`.
    #[track_caller]
    fn fails_as(&mut self, agent: &Agent, operation: &str, args: &Value, message: &str) {
        let tag = self.tag();
        match self.run(agent, operation, args) {
            Err(error) => assert_eq!(error, message, "{tag} {operation} {args}"),
            Ok(value) => panic!("{tag} {operation} {args}: succeeded with {value}"),
        }
    }

    #[track_caller]
    fn fails(&mut self, operation: &str, args: &Value, message: &str) {
        let alpha = self.world.alpha.clone();
        self.fails_as(&alpha, operation, args, message);
    }
}

/// Sample arguments for a browser operation, from its parameters (so that a new browser
/// operation is covered without a case of its own).
fn browser_args(world: &World, operation: &Operation) -> Value {
    let mut args = serde_json::Map::new();
    for param in operation.params() {
        let value = match param.name() {
            "url" => json!("https://example.com/"),
            "nodeId" => json!("browser-1"),
            "agentNodeId" => json!(world.beta.node_id),
            "selector" => json!("#search"),
            "text" => json!("termsprawl"),
            other => panic!("{}: no sample value for the parameter {other}", operation.name()),
        };
        args.insert(param.name().to_owned(), value);
    }
    Value::Object(args)
}

/// The success and failure paths of one operation.
#[expect(clippy::too_many_lines, reason = "one arm per operation, each short")]
fn case(d: &mut Driver<'_>, operation: &Operation) {
    let w = d.world;
    let tag = d.tag();
    let unknown_argument = |name: &str| format!("Unknown argument: {name}");
    match operation.name() {
        "session_info" => {
            let info = d.ok("session_info", &json!({}));
            assert_eq!(info["nodeId"], w.alpha.node_id.as_str());
            assert_eq!(info["projectId"], w.project_id.as_str());
            let endpoint: Value = serde_json::from_str(
                &std::fs::read_to_string(w.user_data().join("agent-tools/endpoint.json")).unwrap(),
            )
            .unwrap();
            assert_eq!(info["instanceId"], endpoint["instanceId"]);
            assert_eq!(info["host"], "local");
            assert_eq!(info["status"]["adapter"], "alpha-unverified");
            assert_eq!(info["appVersion"], headless_version());
            assert_eq!(info["browserEnabled"], false);
            assert_eq!(info["operations"], json!(served_operations()));
            assert_eq!(info["rules"], json!(["agent-link-isolation"]));
            d.fails("session_info", &json!({"verbose": "yes"}), &unknown_argument("verbose"));
        }
        "guide_read" => {
            let text = d.ok("guide_read", &json!({"topic": "terminal"}));
            assert_eq!(text, guide(Topic::Terminal));
            d.fails("guide_read", &json!({"topic": "Terminal"}), "Invalid topic");
        }
        "canvas_list" => {
            let list = d.ok("canvas_list", &json!({}));
            let nodes = list.as_array().unwrap();
            let find = |id: &str| nodes.iter().find(|node| node["nodeId"] == id).unwrap();
            let alpha = find(&w.alpha.node_id);
            assert_eq!(
                (&alpha["kind"], &alpha["title"], &alpha["agent"], &alpha["attached"]),
                (&json!("agent"), &json!("alpha"), &json!("alpha"), &json!(true))
            );
            let shell = find(&w.shell);
            assert_eq!((&shell["kind"], &shell["title"]), (&json!("terminal"), &json!("shell")));
            for key in ["x", "y", "width", "height", "parentId", "selected"] {
                assert!(shell.get(key).is_some(), "{key} missing from {shell}");
            }
            d.fails("canvas_list", &json!({"nodeId": w.shell}), &unknown_argument("nodeId"));
        }
        "canvas_select" => {
            let sticky = w.sticky(&format!("select-{tag}"));
            let selected = d.ok("canvas_select", &json!({"nodeIds": [sticky, w.shell]}));
            assert_eq!(selected, json!({"nodeIds": [sticky, w.shell]}));
            assert_eq!(w.node(&sticky)["selected"], true);
            assert_eq!(w.node(&w.alpha.node_id)["selected"], false);
            d.fails(
                "canvas_select",
                &json!({"nodeIds": [sticky, "sticky-nope"]}),
                "Selection contains an unknown node",
            );
        }
        "canvas_move" => {
            let sticky = w.sticky(&format!("move-{tag}"));
            let moved = d.ok("canvas_move", &json!({"nodeId": sticky, "x": 4000, "y": -12.5}));
            assert_eq!(moved, json!({"nodeId": sticky}));
            let node = w.node(&sticky);
            assert_eq!((&node["x"], &node["y"]), (&json!(4000), &json!(-12.5)));
            d.fails(
                "canvas_move",
                &json!({"nodeId": "sticky-nope", "x": 0, "y": 0}),
                "Node not found in the visible project",
            );
        }
        "canvas_resize" => {
            let sticky = w.sticky(&format!("resize-{tag}"));
            let resized =
                d.ok("canvas_resize", &json!({"nodeId": sticky, "width": 320, "height": 180}));
            assert_eq!(resized, json!({"nodeId": sticky}));
            let node = w.node(&sticky);
            assert_eq!((&node["width"], &node["height"]), (&json!(320), &json!(180)));
            d.fails(
                "canvas_resize",
                &json!({"nodeId": sticky, "width": 239, "height": 180}),
                "Size must be between 240\u{d7}140 and 8000\u{d7}8000",
            );
        }
        "canvas_group" => {
            let first = w.sticky(&format!("group-a-{tag}"));
            let second = w.sticky(&format!("group-b-{tag}"));
            let grouped =
                d.ok("canvas_group", &json!({"nodeIds": [first, second], "title": "pair"}));
            let group = World::node_id(&grouped);
            assert_eq!(grouped, json!({"nodeId": group, "nodeIds": [first, second]}));
            let frame = w.node(&group);
            assert_eq!((&frame["kind"], &frame["title"]), (&json!("group"), &json!("pair")));
            assert_eq!(w.node(&first)["parentId"], group.as_str());
            d.fails(
                "canvas_group",
                &json!({"nodeIds": [first]}),
                "Group only top-level non-group nodes",
            );
        }
        "sticky_open" => {
            let text = format!("a note via {tag}: it's \"quoted\"");
            let opened = d.ok("sticky_open", &json!({"text": text}));
            let sticky = World::node_id(&opened);
            assert_eq!(opened, json!({"nodeId": sticky}));
            let node = w.node(&sticky);
            assert_eq!((&node["kind"], &node["text"]), (&json!("sticky"), &json!(text)));
            d.fails("sticky_open", &json!({}), "Missing argument: text");
        }
        browser if browser.starts_with("browser_") => {
            d.fails(browser, &browser_args(w, operation), BROWSER);
        }
        "terminal_open" => {
            let opened = d.ok("terminal_open", &json!({"title": format!("build-{tag}")}));
            let terminal = World::node_id(&opened);
            assert_eq!(opened, json!({"nodeId": terminal}));
            let node = w.node(&terminal);
            assert_eq!(
                (&node["kind"], &node["title"], &node["attached"]),
                (&json!("terminal"), &json!(format!("build-{tag}")), &json!(true))
            );
            assert!(
                w.guard.tmux(&["has-session", "-t", &format!("=ts-{terminal}")]).status.success()
            );
            d.fails("terminal_open", &json!({"title": 7}), "Invalid title");
        }
        "terminal_list" => {
            // A shell, a finished run (exit 3), a running run and a prompt waiting in read -p.
            let finished = d.ok(
                "terminal_run",
                &json!({"command": format!("echo list-{tag}; exit 3"), "timeoutMs": 20000}),
            );
            let finished = World::node_id(&finished);
            let running = World::node_id(
                &d.ok("terminal_run", &json!({"command": "sleep 30", "timeoutMs": 0})),
            );
            let prompt = World::node_id(
                &d.ok("terminal_run", &json!({"command": "read -p 'Name? ' name", "timeoutMs": 0})),
            );
            let asked = d.ok(
                "terminal_wait",
                &json!({"nodeId": prompt, "until": "input", "timeoutMs": 20000}),
            );
            assert_eq!(asked["reached"], true, "{asked}");
            let list = d.ok("terminal_list", &json!({}));
            let entries = list.as_array().unwrap_or_else(|| panic!("not an array: {list}"));
            let entry = |node_id: &str| {
                entries
                    .iter()
                    .find(|entry| entry["nodeId"] == node_id)
                    .unwrap_or_else(|| panic!("{node_id} is not listed: {list}"))
                    .clone()
            };
            let keys: Vec<String> = entry(&w.shell).as_object().unwrap().keys().cloned().collect();
            assert_eq!(
                keys,
                [
                    "nodeId",
                    "title",
                    "kind",
                    "command",
                    "running",
                    "exitCode",
                    "signal",
                    "startedAt",
                    "endedAt",
                    "cursor",
                    "lastOutputAt",
                    "waitingForInput",
                    "inputBy",
                    "notify"
                ]
            );
            let shell = entry(&w.shell);
            assert_eq!(
                (&shell["kind"], &shell["command"], &shell["running"]),
                (&json!("shell"), &Value::Null, &json!(true)),
                "{shell}"
            );
            let done = entry(&finished);
            assert_eq!(
                (&done["kind"], &done["command"], &done["running"], &done["exitCode"]),
                (
                    &json!("run"),
                    &json!(format!("echo list-{tag}; exit 3")),
                    &json!(false),
                    &json!(3)
                ),
                "{done}"
            );
            assert!(done["endedAt"].as_str().is_some_and(|at| at.ends_with('Z')), "{done}");
            assert!(done["startedAt"].as_str().is_some_and(|at| at.ends_with('Z')), "{done}");
            let going = entry(&running);
            assert_eq!(
                (&going["running"], &going["endedAt"], &going["waitingForInput"]),
                (&json!(true), &Value::Null, &json!(false)),
                "{going}"
            );
            let waiting = entry(&prompt);
            assert_eq!(waiting["waitingForInput"], true, "{waiting}");
            assert!(waiting["inputBy"].is_string(), "{waiting}");
            // In canvas order.
            let canvas = w.setup(&w.alpha, "canvas_list", &json!({}));
            let listed: Vec<&str> =
                entries.iter().filter_map(|entry| entry["nodeId"].as_str()).collect();
            let canvas_order: Vec<&str> = canvas
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|node| node["nodeId"].as_str())
                .filter(|id| listed.contains(id))
                .collect();
            assert_eq!(listed, canvas_order);
            for node in [finished, running, prompt] {
                w.setup(&w.alpha, "terminal_close", &json!({"nodeId": node}));
            }
            d.fails("terminal_list", &json!({"all": true}), &unknown_argument("all"));
        }
        "terminal_search" => {
            // FAILED test_x in the third of three terminals, two lines of context each side.
            let mut runs = Vec::new();
            for (index, lines) in [
                "one\ntwo".to_owned(),
                format!("alpha\nbeta-{tag}"),
                format!("a\nb\nc\nFAILED test_x-{tag}\nd\ne\nf"),
            ]
            .iter()
            .enumerate()
            {
                let ran = d.ok(
                    "terminal_run",
                    &json!({"command": format!("printf '{lines}\\n'"), "title": format!("search-{tag}-{index}"), "timeoutMs": 20000}),
                );
                runs.push(World::node_id(&ran));
            }
            let found = d.ok(
                "terminal_search",
                &json!({"pattern": format!("FAILED test_x-{tag}"), "context": 2}),
            );
            assert_eq!(found["truncated"], false, "{found}");
            let matches = found["matches"].as_array().unwrap();
            assert_eq!(matches.len(), 1, "{found}");
            let first = &matches[0];
            assert_eq!(
                (&first["nodeId"], &first["line"], &first["before"], &first["after"]),
                (
                    &json!(runs[2]),
                    &json!(format!("FAILED test_x-{tag}")),
                    &json!(["b", "c"]),
                    &json!(["d", "e"])
                ),
                "{found}"
            );
            let read_on =
                d.ok("terminal_read", &json!({"nodeId": runs[2], "since": first["cursor"]}));
            assert_eq!(
                read_on["output"],
                json!(format!("FAILED test_x-{tag}\nd\ne\nf\n")),
                "{read_on}"
            );
            // A pattern, in one terminal, from a cursor.
            let by_pattern = d.ok(
                "terminal_search",
                &json!({"pattern": format!(r"^[a-c]$|^FAILED \w+-{tag}$"), "regex": true, "nodeId": runs[2], "since": 0}),
            );
            let lines: Vec<&Value> =
                by_pattern["matches"].as_array().unwrap().iter().map(|m| &m["line"]).collect();
            assert_eq!(
                lines,
                [&json!("a"), &json!("b"), &json!("c"), &json!(format!("FAILED test_x-{tag}"))],
                "{by_pattern}"
            );
            // limit cuts the list, oldest first.
            let cut = d.ok(
                "terminal_search",
                &json!({"pattern": "^[a-c]$", "regex": true, "nodeId": runs[2], "limit": 2}),
            );
            assert_eq!(cut["truncated"], true, "{cut}");
            assert_eq!(cut["matches"].as_array().unwrap().len(), 2, "{cut}");
            for node in runs {
                w.setup(&w.alpha, "terminal_close", &json!({"nodeId": node}));
            }
            d.fails(
                "terminal_search",
                &json!({"pattern": "(?=x)", "regex": true}),
                "Invalid pattern: look-around is not supported, at 0",
            );
            d.fails("terminal_search", &json!({"pattern": "x", "since": 3}), "Invalid since");
            d.fails("terminal_search", &json!({"pattern": "x", "context": 6}), "Invalid context");
        }
        "terminal_read" => {
            w.setup(
                &w.alpha,
                "terminal_submit",
                &json!({"nodeId": w.shell, "command": format!("echo read-{tag}-$((20+1))")}),
            );
            let needle = format!("read-{tag}-21");
            let deadline = Instant::now() + PATIENCE;
            loop {
                let read = d.ok("terminal_read", &json!({"nodeId": w.shell}));
                let keys: Vec<&str> =
                    read.as_object().unwrap().keys().map(String::as_str).collect();
                assert_eq!(keys, ["nodeId", "output", "cursor", "running", "exitCode", "signal"]);
                assert_eq!(read["nodeId"], w.shell.as_str());
                if read["output"].as_str().unwrap().contains(&needle) {
                    break;
                }
                assert!(Instant::now() < deadline, "{needle} never appeared: {read}");
                std::thread::sleep(Duration::from_millis(50));
            }
            let tail = d.ok("terminal_read", &json!({"nodeId": w.shell, "maxChars": 3.9}));
            assert_eq!(tail["output"].as_str().unwrap().chars().count(), 3, "{tail}");
            // Protocol 1.4.0: the visible screen, its size and cursor.
            let screen = d.ok("terminal_read", &json!({"nodeId": w.shell, "view": "screen"}));
            assert_eq!(
                (&screen["rows"], &screen["cols"], &screen["alternateScreen"]),
                (&json!(48), &json!(160), &json!(false)),
                "{screen}"
            );
            assert_eq!(screen["output"].as_str().unwrap().lines().count(), 48, "{screen}");
            d.fails(
                "terminal_read",
                &json!({"nodeId": w.shell, "view": "screen", "since": 0}),
                "Invalid view",
            );
            d.fails("terminal_read", &json!({"nodeId": "term-nope"}), TERMINAL_NOT_FOUND);
        }
        "terminal_submit" => {
            let command = format!("echo submit-{tag}-$((30+3))");
            let submitted =
                d.ok("terminal_submit", &json!({"nodeId": w.shell, "command": command}));
            assert_eq!(
                (&submitted["nodeId"], &submitted["delivered"]),
                (&json!(w.shell), &json!(true))
            );
            assert!(submitted["cursor"].is_u64(), "{submitted}");
            w.wait_for_output(&w.shell, &format!("submit-{tag}-33"));
            d.fails(
                "terminal_submit",
                &json!({"nodeId": w.alpha.node_id, "command": "true"}),
                OWN_NODE,
            );
            // Rule agent-link-isolation: another agent's terminal is never driven by an agent,
            // linked or not; the rule's refusal comes before the submit's own.
            d.fails(
                "terminal_submit",
                &json!({"nodeId": w.beta.node_id, "command": "true"}),
                termsprawl_headless::messages::AGENT_NOT_YOURS,
            );
        }
        "terminal_input" => {
            let text = format!("echo input-{tag}-$((40+4))\n");
            let typed = d.ok("terminal_input", &json!({"nodeId": w.shell, "text": text}));
            assert_eq!((&typed["nodeId"], &typed["delivered"]), (&json!(w.shell), &json!(true)));
            assert!(typed["cursor"].is_u64(), "{typed}");
            w.wait_for_output(&w.shell, &format!("input-{tag}-44"));
            d.fails("terminal_input", &json!({"nodeId": w.alpha.node_id, "text": "x"}), OWN_NODE);
            // Protocol 1.4.0: text, then keys by name; a key outside the grammar or an empty call
            // is refused by validation.
            let keyed = d.ok(
                "terminal_input",
                &json!({"nodeId": w.shell, "text": format!("echo keys-{tag}-$((50+5))"), "keys": ["Enter"]}),
            );
            assert_eq!(keyed["delivered"], true, "{keyed}");
            w.wait_for_output(&w.shell, &format!("keys-{tag}-55"));
            d.fails(
                "terminal_input",
                &json!({"nodeId": w.shell, "keys": ["Nope"]}),
                "Invalid keys",
            );
            d.fails("terminal_input", &json!({"nodeId": w.shell}), "Invalid text");
        }
        "terminal_interrupt" => {
            let terminal = w.terminal(&format!("sleeper-{tag}"));
            w.setup(
                &w.alpha,
                "terminal_submit",
                &json!({"nodeId": terminal, "command": "echo start-$((1+1)); sleep 600"}),
            );
            w.wait_for_output(&terminal, "start-2");
            let interrupted = d.ok("terminal_interrupt", &json!({"nodeId": terminal}));
            assert_eq!(interrupted, json!({"nodeId": terminal, "delivered": true}));
            // The shell takes commands again only once the sleep was interrupted.
            w.setup(
                &w.alpha,
                "terminal_submit",
                &json!({"nodeId": terminal, "command": "echo after-$((2+3))"}),
            );
            w.wait_for_output(&terminal, "after-5");
            d.fails("terminal_interrupt", &json!({"nodeId": "term-nope"}), TERMINAL_NOT_FOUND);
        }
        "terminal_external" => {
            let terminal = w.terminal(&format!("external-{tag}"));
            let attached = d.ok("terminal_external", &json!({"nodeId": terminal}));
            assert_eq!(attached, json!({"nodeId": terminal, "attached": true}));
            let deadline = Instant::now() + PATIENCE;
            loop {
                let clients = w.guard.tmux(&[
                    "list-clients",
                    "-t",
                    &format!("=ts-{terminal}"),
                    "-F",
                    "#{client_control_mode} #{client_pid}",
                ]);
                // headless's own control client may be attached to this session too.
                if String::from_utf8_lossy(&clients.stdout)
                    .lines()
                    .any(|line| line.starts_with("0 "))
                {
                    break;
                }
                assert!(Instant::now() < deadline, "xterm never attached to {terminal}");
                std::thread::sleep(Duration::from_millis(50));
            }
            // A terminal whose tmux session ended cannot be opened outside.
            let ended = w.terminal(&format!("ended-{tag}"));
            let killed = w.guard.tmux(&["kill-session", "-t", &format!("=ts-{ended}")]);
            assert!(killed.status.success());
            d.fails(
                "terminal_external",
                &json!({"nodeId": ended}),
                "A running managed tmux session is required",
            );
            d.fails("terminal_external", &json!({"nodeId": "term-nope"}), TERMINAL_NOT_FOUND);
            // It reads as not running (its retained output stays readable); the operations that
            // would drive it say that it is no longer attached.
            assert_eq!(w.node(&ended)["attached"], false);
            let read = d.ok("terminal_read", &json!({"nodeId": ended}));
            assert_eq!(read["running"], false, "{read}");
            for (operation, args) in [
                ("terminal_submit", json!({"nodeId": ended, "command": "true"})),
                ("terminal_input", json!({"nodeId": ended, "text": "x"})),
                ("terminal_interrupt", json!({"nodeId": ended})),
            ] {
                d.fails(operation, &args, "Terminal is not attached");
            }
            // Closing it still removes the node.
            w.setup(&w.alpha, "terminal_close", &json!({"nodeId": ended}));
            assert_eq!(w.node(&ended), Value::Null);
        }
        "terminal_run" => {
            let ran = d.ok(
                "terminal_run",
                &json!({"command": format!("echo run-{tag}; exit 4"), "timeoutMs": 20000}),
            );
            let run = World::node_id(&ran);
            assert_eq!(
                (&ran["running"], &ran["exitCode"], &ran["output"]),
                (&json!(false), &json!(4), &json!(format!("run-{tag}\n"))),
                "{ran} {}",
                String::from_utf8_lossy(
                    &w.guard
                        .tmux(&["display", "-p", "-t", &format!("=ts-{}:", World::node_id(&ran)), "#{pane_dead} [#{pane_dead_status}] [#{pane_dead_signal}] #{pane_pid} #{pane_current_command}"])
                        .stdout
                )
            );
            assert_eq!(w.node(&run)["kind"], "terminal");
            // Protocol 1.4.0: keep false closes the node once the answer reports the finish.
            let gone = d.ok(
                "terminal_run",
                &json!({"command": format!("echo gone-{tag}"), "keep": false, "timeoutMs": 20000}),
            );
            assert_eq!(gone["output"], format!("gone-{tag}\n"), "{gone}");
            assert_eq!(w.node(&World::node_id(&gone)), Value::Null);
            // Protocol 1.5.0: a run still going at the answer tells its caller when it ends,
            // exactly once, in the caller's own node (beta, linked, reads alpha's).
            let since =
                w.setup(&w.beta, "terminal_read", &json!({"nodeId": w.alpha.node_id}))["cursor"]
                    .clone();
            let notifying = d.ok(
                "terminal_run",
                &json!({"command": format!("sleep 1; echo notify-{tag}; exit 4"), "notify": true, "timeoutMs": 100}),
            );
            assert_eq!(notifying["running"], true, "{notifying}");
            let notifier = World::node_id(&notifying);
            let deadline = Instant::now() + Duration::from_secs(5);
            let notice = loop {
                let read = w.setup(
                    &w.beta,
                    "terminal_read",
                    &json!({"nodeId": w.alpha.node_id, "since": since}),
                );
                let output = read["output"].as_str().unwrap().to_owned();
                if let Some(line) = output.lines().find(|line| line.contains(&notifier)) {
                    break line.to_owned();
                }
                assert!(Instant::now() < deadline, "no notice of {notifier} within 5 s:\n{output}");
                std::thread::sleep(Duration::from_millis(50));
            };
            assert!(notice.contains('4') && notice.contains("since"), "{notice}");
            std::thread::sleep(Duration::from_secs(1));
            let after = w.setup(
                &w.beta,
                "terminal_read",
                &json!({"nodeId": w.alpha.node_id, "since": since}),
            );
            // One line names the node (twice: the node and the read): alpha's program reads
            // it, nothing runs it as a command.
            let notices = after["output"]
                .as_str()
                .unwrap()
                .lines()
                .filter(|line| line.starts_with("[termsprawl] ") && line.contains(&notifier))
                .count();
            assert_eq!(notices, 1, "{after}");
            w.setup(&w.alpha, "terminal_close", &json!({"nodeId": notifier}));
            d.fails("terminal_run", &json!({"command": "true", "notify": "yes"}), "Invalid notify");
            d.fails("terminal_run", &json!({"command": "true", "keep": 0}), "Invalid keep");
            d.fails("terminal_run", &json!({"command": ""}), "command must not be empty");
            d.fails("terminal_run", &json!({}), "Missing argument: command");
        }
        "terminal_wait" => {
            let ran = d.ok(
                "terminal_run",
                &json!({"command": format!("sleep 0.2; echo waited-{tag}; sleep 30"), "timeoutMs": 0}),
            );
            let run = World::node_id(&ran);
            let waited = d.ok(
                "terminal_wait",
                &json!({"nodeId": run, "until": "text", "text": format!("waited-{tag}"), "since": 0, "timeoutMs": 20000}),
            );
            assert_eq!((&waited["reached"], &waited["running"]), (&json!(true), &json!(true)));
            let timed_out =
                d.ok("terminal_wait", &json!({"nodeId": run, "until": "exit", "timeoutMs": 100}));
            assert_eq!(timed_out["reached"], false);
            // Protocol 1.5.0: the first of several texts, and a pattern.
            let outcome = d.ok(
                "terminal_run",
                &json!({"command": format!("sleep 0.2; echo 'test_x FAILED-{tag}'; echo listening on port 8080-{tag}; sleep 30"), "timeoutMs": 0}),
            );
            let outcome = World::node_id(&outcome);
            let which = d.ok(
                "terminal_wait",
                &json!({"nodeId": outcome, "until": "text", "anyOf": [format!("PASSED-{tag}"), format!("FAILED-{tag}")], "since": 0, "timeoutMs": 20000}),
            );
            assert_eq!(
                (&which["reached"], &which["matched"]),
                (&json!(true), &json!(1)),
                "{which}"
            );
            assert_eq!(which["matchCursor"], json!(7), "{which}");
            let port = d.ok(
                "terminal_wait",
                &json!({"nodeId": outcome, "until": "text", "text": format!(r"listening on port 8\d+-{tag}$"), "regex": true, "since": 0, "timeoutMs": 20000}),
            );
            assert_eq!((&port["reached"], &port["matched"]), (&json!(true), &json!(0)), "{port}");
            w.setup(&w.alpha, "terminal_close", &json!({"nodeId": outcome}));
            // Until input: a prompt reading the terminal, not a sleep.
            let prompt = d.ok(
                "terminal_run",
                &json!({"command": "read -p 'Name? ' name; echo \"hi $name\"", "timeoutMs": 0}),
            );
            let prompt = World::node_id(&prompt);
            let asked = d.ok(
                "terminal_wait",
                &json!({"nodeId": prompt, "until": "input", "timeoutMs": 20000}),
            );
            assert_eq!(asked["reached"], true, "{asked}");
            assert!(asked["inputBy"].is_string(), "{asked}");
            let sleeping = d.ok("terminal_run", &json!({"command": "sleep 30", "timeoutMs": 0}));
            let sleeping = World::node_id(&sleeping);
            let not_asked = d.ok(
                "terminal_wait",
                &json!({"nodeId": sleeping, "until": "input", "timeoutMs": 1500}),
            );
            assert_eq!(
                (&not_asked["reached"], &not_asked["inputBy"]),
                (&json!(false), &Value::Null)
            );
            for node in [prompt, sleeping] {
                w.setup(&w.alpha, "terminal_close", &json!({"nodeId": node}));
            }
            d.fails(
                "terminal_wait",
                &json!({"nodeId": run, "until": "text", "text": "a", "anyOf": ["b"]}),
                "Invalid anyOf",
            );
            d.fails(
                "terminal_wait",
                &json!({"nodeId": run, "until": "exit", "regex": true}),
                "Invalid regex",
            );
            d.fails(
                "terminal_wait",
                &json!({"nodeId": run, "until": "text", "anyOf": ["ok", "(?=x)"], "regex": true}),
                "Invalid anyOf: item 1: look-around is not supported, at 0",
            );
            d.fails(
                "terminal_wait",
                &json!({"nodeId": run, "until": "text"}),
                "text is required and must not be empty with until text",
            );
            d.fails(
                "terminal_wait",
                &json!({"nodeId": "term-nope", "until": "exit"}),
                TERMINAL_NOT_FOUND,
            );
            w.setup(&w.alpha, "terminal_close", &json!({"nodeId": run}));
        }
        "terminal_kill" => {
            let ran =
                d.ok("terminal_run", &json!({"command": "trap '' TERM; sleep 60", "timeoutMs": 0}));
            let run = World::node_id(&ran);
            let killed = d.ok("terminal_kill", &json!({"nodeId": run}));
            assert_eq!((&killed["running"], &killed["signal"]), (&json!(false), &json!("SIGKILL")));
            d.fails(
                "terminal_kill",
                &json!({"nodeId": w.shell}),
                "Kill only a run terminal started by terminal_run; use terminal_interrupt or terminal_close for other terminals",
            );
            w.setup(&w.alpha, "terminal_close", &json!({"nodeId": run}));
        }
        "terminal_close" => {
            let terminal = w.terminal(&format!("doomed-{tag}"));
            let closed = d.ok("terminal_close", &json!({"nodeId": terminal}));
            assert_eq!(closed, json!({"nodeId": terminal, "cleanupPendingIds": []}));
            assert_eq!(w.node(&terminal), Value::Null);
            assert!(
                !w.guard.tmux(&["has-session", "-t", &format!("=ts-{terminal}")]).status.success()
            );
            d.fails("terminal_close", &json!({"nodeId": w.alpha.node_id}), OWN_NODE);
            d.fails("terminal_close", &json!({"nodeId": terminal}), TERMINAL_NOT_FOUND);
        }
        "agent_launch" => {
            let launched = d.ok("agent_launch", &json!({"agent": "custom"}));
            let agent = World::node_id(&launched);
            assert_eq!(launched, json!({"nodeId": agent}));
            let node = w.node(&agent);
            assert_eq!((&node["kind"], &node["agent"]), (&json!("agent"), &json!("custom")));
            let status = w.setup(&w.alpha, "agent_status", &json!({}));
            let entry =
                status.as_array().unwrap().iter().find(|entry| entry["nodeId"] == agent.as_str());
            let entry = entry.unwrap_or_else(|| panic!("{agent} missing from {status}"));
            assert_eq!(
                (&entry["status"]["adapter"], &entry["status"]["version"]),
                (&json!("custom-unverified"), &json!("fake-agent 1.0"))
            );
            w.write_preferences(Some(&w.dir.path().join("no-such-agent")));
            d.fails(
                "agent_launch",
                &json!({"agent": "custom"}),
                "Install or configure this agent before launching it",
            );
            w.write_preferences(None);
            d.fails("agent_launch", &json!({"agent": "Claude"}), "Invalid agent");
        }
        "agent_status" => {
            let status = d.ok("agent_status", &json!({}));
            for agent in [&w.alpha, &w.beta] {
                let entry = status
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|entry| entry["nodeId"] == agent.node_id.as_str())
                    .unwrap();
                let keys: Vec<&str> =
                    entry.as_object().unwrap().keys().map(String::as_str).collect();
                assert_eq!(keys, ["nodeId", "projectId", "status"]);
                assert_eq!(entry["projectId"], w.project_id.as_str());
                let status_keys: Vec<&str> =
                    entry["status"].as_object().unwrap().keys().map(String::as_str).collect();
                assert_eq!(status_keys, ["state", "adapter", "version", "reason"]);
            }
            d.fails("agent_status", &json!({"nodeId": "x"}), &unknown_argument("nodeId"));
        }
        "agent_cards" => {
            let cards = d.ok_as(&w.beta, "agent_cards", &json!({}));
            let card = |agent: &Agent| {
                cards
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|card| card["nodeId"] == agent.node_id.as_str())
                    .cloned()
                    .unwrap()
            };
            assert_eq!(card(&w.alpha)["enabledPeerIds"], json!([w.beta.node_id]));
            assert_eq!(card(&w.beta)["enabledPeerIds"], json!([w.alpha.node_id]));
            assert_eq!(
                (&card(&w.alpha)["title"], &card(&w.alpha)["agent"]),
                (&json!("alpha"), &json!("alpha"))
            );
            d.fails("agent_cards", &json!({"all": "yes"}), &unknown_argument("all"));
        }
        "agent_send" => {
            let message_id = format!("send-{tag}");
            let text = format!("please summarise the notes ({tag})");
            let args = json!({"nodeId": w.beta.node_id, "text": text, "messageId": message_id});
            let task = d.ok("agent_send", &args);
            let task_id = task["taskId"].as_str().unwrap().to_owned();
            assert_eq!(
                (&task["fromNodeId"], &task["toNodeId"], &task["state"], &task["messageId"]),
                (
                    &json!(w.alpha.node_id),
                    &json!(w.beta.node_id),
                    &json!("submitted"),
                    &json!(message_id)
                )
            );
            assert_eq!(task["text"], text.as_str());
            // An exact retry returns the same task; a changed payload under the id is refused.
            assert_eq!(d.ok("agent_send", &args)["taskId"], task_id.as_str());
            let changed =
                json!({"nodeId": w.beta.node_id, "text": "other", "messageId": message_id});
            d.fails(
                "agent_send",
                &changed,
                "This messageId was already used for a different request; use a new messageId",
            );
            w.wait_for_output(
                &w.beta.node_id,
                &format!("[termsprawl request from agent {} | task {task_id}]", w.alpha.node_id),
            );
            w.finish(&task_id);
            d.fails(
                "agent_send",
                &json!({"nodeId": w.alpha.node_id, "text": "hi", "messageId": format!("self-{tag}")}),
                "Send requests to another agent, not to yourself",
            );
        }
        "agent_task" => {
            let task_id = w.task(&format!("task-{tag}"));
            let task = d.ok("agent_task", &json!({"taskId": task_id}));
            assert_eq!((&task["taskId"], &task["state"]), (&json!(task_id), &json!("submitted")));
            let seen = d.ok_as(&w.beta, "agent_task", &json!({"taskId": task_id}));
            assert_eq!(seen["toNodeId"], w.beta.node_id.as_str());
            w.finish(&task_id);
            let done = d.ok("agent_task", &json!({"taskId": task_id}));
            assert_eq!((&done["state"], &done["response"]), (&json!("completed"), &json!("ok")));
            d.fails("agent_task", &json!({"taskId": "no-such-task"}), "Task not found");
        }
        "agent_reply" => {
            let task_id = w.task(&format!("reply-{tag}"));
            d.fails(
                "agent_reply",
                &json!({"taskId": task_id, "text": "done"}),
                "Only the recipient of a request can reply to it",
            );
            let args = json!({"taskId": task_id, "text": format!("failed on purpose ({tag})"), "state": "failed"});
            let reply = d.ok_as(&w.beta, "agent_reply", &args);
            assert_eq!(
                (&reply["taskId"], &reply["state"], &reply["response"]),
                (&json!(task_id), &json!("failed"), &json!(format!("failed on purpose ({tag})")))
            );
            d.fails_as(&w.beta, "agent_reply", &args, "Task is no longer pending");
        }
        "context_read" => {
            let context = d.ok("context_read", &json!({}));
            let keys: Vec<&str> = context.as_object().unwrap().keys().map(String::as_str).collect();
            assert_eq!(keys, ["text", "reader", "reason"]);
            assert_eq!(
                (&context["text"], &context["reader"]),
                (&json!(""), &json!("claude-jsonl"))
            );
            assert!(context["reason"].as_str().unwrap().starts_with("Transcript unavailable"));
            d.fails("context_read", &json!({"nodeId": "x"}), &unknown_argument("nodeId"));
        }
        "artifact_open" => {
            let file = w.project().join(format!("notes-{tag}.md"));
            std::fs::write(&file, "# notes\n").unwrap();
            let path = file.to_str().unwrap();
            let opened = d.ok("artifact_open", &json!({"path": path}));
            let artifact = World::node_id(&opened);
            assert_eq!(opened, json!({"nodeId": artifact}));
            let node = w.node(&artifact);
            assert_eq!(
                (&node["kind"], &node["path"], &node["view"]),
                (&json!("artifact"), &json!(path), &json!("editor"))
            );
            // The same preview is reused; the diff view is another node.
            assert_eq!(d.ok("artifact_open", &json!({"path": path, "view": "editor"})), opened);
            assert_ne!(d.ok("artifact_open", &json!({"path": path, "view": "diff"})), opened);
            d.fails(
                "artifact_open",
                &json!({"path": format!("notes-{tag}.md")}),
                "Use an absolute file path inside a folder project",
            );
            d.fails(
                "artifact_open",
                &json!({"path": w.user_data().join("tmux.conf")}),
                "Artifact must be inside this project",
            );
        }
        other => panic!("no case for the operation {other}: add one to every_operation.rs"),
    }
}

/// The operations the server serves: the table without the browser operations.
fn served_operations() -> Vec<&'static str> {
    operations().iter().map(Operation::name).filter(|name| !name.starts_with("browser_")).collect()
}

/// `initialize` and `tools/list` on a fresh bridge of `agent`.
fn handshake(world: &World, agent: &Agent) -> Bridge {
    let mut bridge = Bridge::start(&world.ctl, agent);
    let init = bridge
        .request(
            "initialize",
            &json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "it", "version": "0"}}),
        )
        .unwrap();
    assert_eq!(init["protocolVersion"], "2025-06-18");
    assert_eq!(
        init["serverInfo"],
        json!({"name": "termsprawl", "title": "termsprawl", "version": headless_version()})
    );
    assert_eq!(init["instructions"], termsprawl_protocol::instructions());
    let served =
        compat_call(&world.ctl, agent, "session_info", &json!({})).unwrap()["operations"].clone();
    let tools = bridge.request("tools/list", &json!({})).unwrap();
    let tools = tools["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool["name"].as_str().unwrap()).collect();
    assert_eq!(json!(names), served, "tools/list lists exactly what session_info serves");
    assert_eq!(names, served_operations());
    for tool in tools {
        let name = tool["name"].as_str().unwrap();
        let entry = operations().iter().find(|operation| operation.name() == name).unwrap();
        assert_eq!(*tool, entry.tool_json_for(termsprawl_protocol::McpRevision::of("2025-06-18")));
    }
    bridge
}

/// The direct form, for a sample of operations: flags in, the bare value (or `Error: …`) out.
fn direct_form_sample(w: &World) {
    let alpha = &w.alpha;
    direct_ok(
        &direct(w, alpha, &["guide_read", "--topic", "agents"]),
        &json!(guide(Topic::Agents)),
    );
    let sticky = w.sticky("direct");
    let other = w.sticky("direct-other");
    direct_ok(
        &direct(w, alpha, &["canvas_move", "--nodeId", &sticky, "--x", "40", "--y", "-12.5"]),
        &json!({"nodeId": sticky}),
    );
    assert_eq!((&w.node(&sticky)["x"], &w.node(&sticky)["y"]), (&json!(40), &json!(-12.5)));
    direct_ok(
        &direct(w, alpha, &["canvas_select", "--nodeIds", &sticky, "--nodeIds", &other]),
        &json!({"nodeIds": [sticky, other]}),
    );
    let submitted = direct(
        w,
        alpha,
        &["terminal_submit", "--nodeId", &w.shell, "--command", "echo 'direct' $((6+7))"],
    );
    assert_eq!(submitted.status.code(), Some(0), "{submitted:?}");
    let submitted: Value = serde_json::from_slice(&submitted.stdout).unwrap();
    assert_eq!(submitted["delivered"], true);
    w.wait_for_output(&w.shell, "direct 13");
    let read = direct(w, alpha, &["terminal_read", "--nodeId", &w.shell, "--maxChars", "5"]);
    assert_eq!(read.status.code(), Some(0));
    let value: Value = serde_json::from_slice(&read.stdout).unwrap();
    assert_eq!(value["output"].as_str().unwrap().chars().count(), 5, "{value}");
    let opened = direct(w, alpha, &["sticky_open", "--text", "it's direct"]);
    assert_eq!(opened.status.code(), Some(0));
    let node_id = World::node_id(&serde_json::from_slice(&opened.stdout).unwrap());
    assert_eq!(w.node(&node_id)["text"], "it's direct");
    // A flag and the JSON argument together.
    let sent = direct(
        w,
        alpha,
        &[
            "agent_send",
            "--nodeId",
            &w.beta.node_id,
            "--messageId",
            "direct-1",
            r#"{"text":"direct request"}"#,
        ],
    );
    assert_eq!(sent.status.code(), Some(0), "{sent:?}");
    let task: Value = serde_json::from_slice(&sent.stdout).unwrap();
    assert_eq!((&task["state"], &task["text"]), (&json!("submitted"), &json!("direct request")));
    w.finish(task["taskId"].as_str().unwrap());

    direct_fails(
        &direct(w, alpha, &["terminal_submit", "--nodeId", &alpha.node_id, "--command", "true"]),
        OWN_NODE,
    );
    direct_fails(&direct(w, alpha, &["terminal_close", "--nodeId", &alpha.node_id]), OWN_NODE);
    direct_fails(&direct(w, alpha, &["browser_open", "--url", "https://example.com/"]), BROWSER);
    direct_fails(&direct(w, alpha, &["terminal_read"]), "Missing argument: nodeId");
    direct_fails(
        &direct(
            w,
            alpha,
            &["canvas_resize", "--nodeId", &sticky, "--width", "9000", "--height", "200"],
        ),
        "Size must be between 240\u{d7}140 and 8000\u{d7}8000",
    );
}

/// The version the headless server reports (`headless-<its package version>`).
fn headless_version() -> String {
    termsprawl_headless::Config::new("/", "/").app_version
}

#[test]
fn termsprawlctl_and_its_mcp_bridge_drive_every_operation() {
    let binaries = binaries::build(&termsprawl_test_support::workspace_root(), false).unwrap();
    let world = World::start(&binaries);

    let mut covered = HashSet::new();
    let mut driver = Driver { world: &world, via: Via::Call };
    for operation in operations() {
        case(&mut driver, operation);
        covered.insert(operation.name());
    }
    direct_form_sample(&world);

    let alpha = handshake(&world, &world.alpha);
    let beta = handshake(&world, &world.beta);
    let mut driver =
        Driver { world: &world, via: Via::Mcp { alpha: Box::new(alpha), beta: Box::new(beta) } };
    for operation in operations() {
        case(&mut driver, operation);
    }
    assert_eq!(covered.len(), operations().len());
    if let Via::Mcp { alpha, beta } = driver.via {
        (*alpha).finish();
        (*beta).finish();
    }
    world.stop();
}
