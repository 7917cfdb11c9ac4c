//! The `termsprawl-headless` binary: `serve` with its files, lock and signals, `launch`, `link`,
//! `info`, `close`, and a restart that keeps running agents' tokens working.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use tempfile::TempDir;
use termsprawl_test_support::serve::serve_command;

use crate::support::{
    Agent, HEADLESS, TmuxGuard, built_termsprawlctl, fails, headless, ok, wait_for_output,
};

/// How long `serve` may take to print its ready line.
const PATIENCE: Duration = Duration::from_secs(30);

/// A `serve` process (the shared [`termsprawl_test_support::serve::Serve`]); killed when dropped.
struct Serve(termsprawl_test_support::serve::Serve);

impl Serve {
    /// Starts `serve` and waits for its `ready` line.
    fn start(user_data: &Path, project: &Path) -> Serve {
        Serve::start_with(user_data, project, &[])
    }

    /// `serve` with `--ctl /bin/true` (no test here runs an agent's termsprawlctl) and `extra`.
    fn start_with(user_data: &Path, project: &Path, extra: &[&std::ffi::OsStr]) -> Serve {
        Serve::start_ctl(user_data, project, Path::new("/bin/true"), extra)
    }

    /// Starts `serve` with `extra` arguments and waits for its `ready` line.
    fn start_ctl(
        user_data: &Path,
        project: &Path,
        ctl: &Path,
        extra: &[&std::ffi::OsStr],
    ) -> Serve {
        let mut command = serve_command(Path::new(HEADLESS), user_data, project, ctl);
        command.args(extra);
        Serve(termsprawl_test_support::serve::Serve::start(&mut command, PATIENCE, |_| {}).unwrap())
    }

    /// The stderr lines up to the ready line.
    fn lines(&self) -> &[String] {
        self.0.lines()
    }

    fn pid(&self) -> u32 {
        self.0.pid()
    }

    fn url(&self) -> String {
        let line = self.lines().iter().find(|line| line.contains("serving ")).unwrap();
        line.split_whitespace().nth(2).unwrap().to_owned()
    }

    /// Sends SIGTERM, waits for the exit status, and checks the last line.
    fn terminate(self) -> std::process::ExitStatus {
        let (status, rest) = self.0.terminate().unwrap();
        assert_eq!(rest, ["termsprawl-headless: stopped"]);
        status
    }
}

/// A data directory and a project folder. The guard comes first so that it kills the tmux
/// server before the directory (and its socket) is removed.
struct Dirs {
    guard: TmuxGuard,
    dir: TempDir,
}

impl Dirs {
    fn new() -> Dirs {
        let dir = TempDir::new().unwrap();
        std::fs::create_dir(dir.path().join("project")).unwrap();
        let guard = TmuxGuard::new(&dir.path().join("data"));
        Dirs { guard, dir }
    }

    fn user_data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn agent_tools(&self) -> PathBuf {
        self.user_data().join("agent-tools")
    }

    fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    fn read_json(&self, name: &str) -> Value {
        serde_json::from_str(&std::fs::read_to_string(self.agent_tools().join(name)).unwrap())
            .unwrap()
    }

    /// `launch -- /bin/sh` through the binary.
    fn launch(&self, name: &str) -> Agent {
        let output =
            headless(&self.user_data(), &["launch", "--agent", name, "--json", "--", "/bin/sh"]);
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let value: Value = serde_json::from_slice(&output.stdout).unwrap();
        Agent {
            node_id: value["nodeId"].as_str().unwrap().to_owned(),
            session_file: PathBuf::from(value["sessionFile"].as_str().unwrap()),
        }
    }
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn serve_writes_its_files_holds_the_lock_and_cleans_up_on_sigterm() {
    let dirs = Dirs::new();
    // A control socket left behind by a crashed server is replaced.
    std::fs::create_dir_all(dirs.agent_tools()).unwrap();
    std::fs::write(dirs.agent_tools().join("headless.sock"), "stale").unwrap();
    let serve = Serve::start(&dirs.user_data(), &dirs.project());
    let endpoint = dirs.read_json("endpoint.json");
    assert_eq!(endpoint["url"], serve.url());
    let lock = dirs.read_json("server.lock");
    assert_eq!(lock["pid"], serve.pid());
    assert_eq!(lock["instanceId"], endpoint["instanceId"]);
    assert_eq!(mode(&dirs.agent_tools()), 0o700);
    assert_eq!(mode(&dirs.agent_tools().join("headless.sock")), 0o600);
    assert_eq!(mode(&dirs.agent_tools().join("canvas.json")), 0o600);
    let conf = std::fs::read_to_string(dirs.user_data().join("tmux.conf")).unwrap();
    assert!(conf.contains("history-limit"));

    let second =
        headless(&dirs.user_data(), &["serve", "--project", dirs.project().to_str().unwrap()]);
    assert_eq!(second.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(
        stderr.contains("Another termsprawl tool service is already using this data directory"),
        "{stderr}"
    );

    let info: Value =
        serde_json::from_slice(&headless(&dirs.user_data(), &["info"]).stdout).unwrap();
    assert_eq!(info["instanceId"], endpoint["instanceId"]);
    assert_eq!(
        info["projects"][0]["folder"],
        dirs.project().canonicalize().unwrap().to_str().unwrap()
    );

    assert!(serve.terminate().success());
    for name in ["server.lock", "endpoint.json", "headless.sock"] {
        assert!(!dirs.agent_tools().join(name).exists(), "{name} left behind");
    }
    let unreachable = headless(&dirs.user_data(), &["info"]);
    assert_eq!(unreachable.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&unreachable.stderr)
            .contains("cannot reach a running termsprawl-headless serve")
    );
}

#[test]
fn an_invalid_lock_or_canvas_stops_the_start() {
    let dirs = Dirs::new();
    std::fs::create_dir_all(dirs.agent_tools()).unwrap();
    std::fs::write(dirs.agent_tools().join("server.lock"), r#"{"pid":-4}"#).unwrap();
    let output =
        headless(&dirs.user_data(), &["serve", "--project", dirs.project().to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("Invalid service lock"), "{stderr}");
    std::fs::remove_file(dirs.agent_tools().join("server.lock")).unwrap();

    std::fs::write(dirs.agent_tools().join("canvas.json"), "{broken").unwrap();
    let output =
        headless(&dirs.user_data(), &["serve", "--project", dirs.project().to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("canvas.json is not a valid canvas file"), "{stderr}");
    assert_eq!(std::fs::read_to_string(dirs.agent_tools().join("canvas.json")).unwrap(), "{broken");
    assert!(!dirs.agent_tools().join("server.lock").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn tokens_of_running_agents_survive_a_restart() {
    let dirs = Dirs::new();
    let serve = Serve::start(&dirs.user_data(), &dirs.project());
    let alpha = dirs.launch("alpha");
    let beta = dirs.launch("beta");
    let linked = headless(&dirs.user_data(), &["link", "--both", &alpha.node_id, &beta.node_id]);
    assert!(linked.status.success(), "{}", String::from_utf8_lossy(&linked.stderr));
    let first =
        ok(&alpha, "session_info", json!({})).await["instanceId"].as_str().unwrap().to_owned();
    let shell = ok(&alpha, "terminal_open", json!({})).await["nodeId"].as_str().unwrap().to_owned();
    let token = dirs.read_json(&format!("sessions/{}.json", alpha.node_id))["token"].clone();

    assert!(serve.terminate().success());
    // While no server runs, calls fail with the client's connection failure.
    let down = fails(&alpha, "session_info", json!({})).await;
    assert!(down.starts_with("Tool connection unavailable: "), "{down}");

    let serve = Serve::start(&dirs.user_data(), &dirs.project());
    assert!(
        serve.lines().iter().any(|line| line.contains("2 running agent sessions picked up again")),
        "{:?}",
        serve.lines()
    );
    let info = ok(&alpha, "session_info", json!({})).await;
    let second = info["instanceId"].as_str().unwrap();
    assert_ne!(second, first);
    assert_eq!(dirs.read_json("endpoint.json")["instanceId"], second);
    assert_eq!(dirs.read_json(&format!("sessions/{}.json", alpha.node_id))["token"], token);
    // The shell kept running, and the links are still there.
    ok(&alpha, "terminal_submit", json!({"nodeId": shell, "command": "echo still-$((10+1))"}))
        .await;
    wait_for_output(&alpha, &shell, "still-11").await;
    let cards = ok(&beta, "agent_cards", json!({})).await;
    assert_eq!(cards[1]["enabledPeerIds"], json!([alpha.node_id]));

    // close through the binary removes the node and revokes its session.
    let closed = headless(&dirs.user_data(), &["close", &beta.node_id]);
    assert!(closed.status.success());
    assert!(!beta.session_file.exists());
    let canvas = ok(&alpha, "canvas_list", json!({})).await;
    assert_eq!(canvas.as_array().unwrap().len(), 2);
    drop(serve);
}

#[test]
fn launch_reports_usage_and_control_errors() {
    let dirs = Dirs::new();
    let usage = headless(&dirs.user_data(), &["launch"]);
    assert_eq!(usage.status.code(), Some(2));
    let _serve = Serve::start(&dirs.user_data(), &dirs.project());
    let missing = headless(
        &dirs.user_data(),
        &["launch", "--project", "/nonexistent/folder", "--", "/bin/sh"],
    );
    assert_eq!(missing.status.code(), Some(1));
    let link = headless(&dirs.user_data(), &["link", "nope", "other"]);
    assert_eq!(link.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&link.stderr).contains("node nope is not on the canvas"));
    // A second project folder gets a project of its own.
    let other = dirs.dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let output = headless(
        &dirs.user_data(),
        &["launch", "--project", other.to_str().unwrap(), "--", "/bin/sh"],
    );
    assert!(output.status.success());
    let node_id = String::from_utf8(output.stdout).unwrap().trim().to_owned();
    assert!(node_id.starts_with("agent-"), "{node_id}");
    let info: Value =
        serde_json::from_slice(&headless(&dirs.user_data(), &["info"]).stdout).unwrap();
    assert_eq!(info["projects"].as_array().unwrap().len(), 2);
    assert_eq!(info["projects"][1]["nodes"][0]["nodeId"], node_id.as_str());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_runs_the_real_termsprawlctl_through_its_environment() {
    let Some(ctl) = built_termsprawlctl() else { return };
    let dirs = Dirs::new();
    let serve = Serve::start_ctl(&dirs.user_data(), &dirs.project(), &ctl, &[]);
    let agent = dirs.launch("demo");
    // Typed into the agent's own shell, as an agent would run it.
    let line =
        r#""$TERMSPRAWL_CTL" call sticky_open '{"text":"from the shell"}' && echo ctl-exit-$?"#;
    let target = format!("=ts-{}:", agent.node_id);
    let typed = dirs.guard.tmux(&["send-keys", "-l", "-t", &target, line]);
    assert!(typed.status.success());
    dirs.guard.tmux(&["send-keys", "-t", &target, "Enter"]);
    wait_for_output(&agent, &agent.node_id, "ctl-exit-0").await;
    let canvas = ok(&agent, "canvas_list", json!({})).await;
    assert!(
        canvas.as_array().unwrap().iter().any(|node| node["text"] == "from the shell"),
        "{canvas}"
    );

    // The MCP bridge of the launch files' mcp.json works against the headless server too.
    let mcp: Value = dirs.read_json(&format!("launch/{}/mcp.json", agent.node_id));
    let server = &mcp["mcpServers"]["termsprawl"];
    let args: Vec<&str> =
        server["args"].as_array().unwrap().iter().map(|arg| arg.as_str().unwrap()).collect();
    let input = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"guide_read","arguments":{"topic":"canvas"}}}"#,
        "\n"
    );
    let mut bridge = Command::new(server["command"].as_str().unwrap())
        .args(&args)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut bridge.stdin.take().unwrap(), input.as_bytes()).unwrap();
    let output = bridge.wait_with_output().unwrap();
    // The bridge answers concurrent requests in any order: find each answer by its id.
    let answers: Vec<Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let answer =
        |id: u64| answers.iter().find(|answer| answer["id"] == id).cloned().unwrap_or(Value::Null);
    let answers = [answer(1), answer(2)];
    assert_eq!(
        answers[0]["result"]["serverInfo"],
        json!({"name": "termsprawl", "title": "termsprawl", "version": format!("headless-{}", env!("CARGO_PKG_VERSION"))})
    );
    assert_eq!(answers[1]["result"]["isError"], false);
    assert!(answers[1]["result"]["content"][0]["text"].as_str().unwrap().contains("# Canvas"));
    assert!(serve.terminate().success());
}

#[tokio::test(flavor = "multi_thread")]
async fn exec_log_gets_one_line_per_valid_request_and_never_the_token() {
    let dirs = Dirs::new();
    let log = dirs.dir.path().join("exec.log");
    let serve = Serve::start_with(
        &dirs.user_data(),
        &dirs.project(),
        &["--exec-log".as_ref(), log.as_os_str()],
    );
    let agent = dirs.launch("logged");
    ok(&agent, "sticky_open", json!({"text": "logged-1"})).await;
    ok(&agent, "session_info", json!({})).await;
    // An invalid request is refused by the transport before dispatch: not logged.
    let refused = fails(&agent, "sticky_open", json!({})).await;
    assert!(refused.contains("text"), "{refused}");
    // A valid request that fails while running is logged: it reached the dispatch point.
    fails(&agent, "terminal_read", json!({"nodeId": "nope"})).await;
    assert!(serve.terminate().success());
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        text,
        concat!(
            r#"{"operation":"sticky_open","args":{"text":"logged-1"}}"#,
            "\n",
            r#"{"operation":"session_info","args":{}}"#,
            "\n",
            r#"{"operation":"terminal_read","args":{"nodeId":"nope"}}"#,
            "\n",
        )
    );
    let token = dirs.read_json(&format!("sessions/{}.json", agent.node_id))["token"].clone();
    assert!(!text.contains(token.as_str().unwrap()));
}

/// Regression (found by `cargo xtask soak`): a restarting server wrote `endpoint.json` before it
/// had made the sessions of running agents live again, so calls in that window were refused with
/// `Unknown or revoked session` although the tokens were valid. Now clients find the server only
/// once restoring is done. A `tmux` wrapper holds the restore step (its first `list-sessions`)
/// until the test has looked at `endpoint.json`.
#[tokio::test(flavor = "multi_thread")]
async fn a_restarting_server_is_found_only_once_running_agents_tokens_work() {
    use termsprawl_external_term::{SearchPath, find_tmux};

    let mut fixture = crate::support::Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    ok(&agent, "session_info", json!({})).await;
    fixture.stop().await;
    let endpoint = fixture.agent_tools().join("endpoint.json");
    assert!(!endpoint.exists());

    let gate = fixture.dir.path().join("gate");
    std::fs::create_dir(&gate).unwrap();
    for fifo in ["entered", "release"] {
        assert!(Command::new("mkfifo").arg(gate.join(fifo)).status().unwrap().success());
    }
    let real = find_tmux(&SearchPath::from_env()).unwrap();
    let script = format!(
        "#!/bin/sh\ncase \" $* \" in *\" list-sessions \"*)\n  if [ ! -e '{gate}/passed' ]; then\n    : > '{gate}/passed'\n    echo entered > '{gate}/entered'\n    read line < '{gate}/release'\n  fi;;\nesac\nexec '{real}' \"$@\"\n",
        gate = gate.display(),
        real = real.display()
    );
    let wrapper = gate.join("tmux");
    std::fs::write(&wrapper, script).unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut config = fixture.config();
    config.search_path = SearchPath::new(Some(gate.as_os_str()), None);

    let starting = tokio::spawn(termsprawl_headless::Server::start(config));
    // The start is now inside the restore step, listing the running tmux sessions.
    let entered = gate.join("entered");
    tokio::task::spawn_blocking(move || std::fs::read_to_string(entered)).await.unwrap().unwrap();
    assert!(!endpoint.exists(), "endpoint.json was written before the sessions were restored");
    let release = gate.join("release");
    tokio::task::spawn_blocking(move || std::fs::write(release, "go\n")).await.unwrap().unwrap();
    fixture.server = Some(starting.await.unwrap().unwrap());
    assert!(endpoint.exists());
    ok(&agent, "session_info", json!({})).await;
}

/// A `canvas.json` of another shape (valid JSON, not a canvas) stops the start with the file and
/// the problem named, and is never overwritten (issue 29).
#[test]
fn a_canvas_file_of_another_shape_stops_the_start_untouched() {
    let dirs = Dirs::new();
    std::fs::create_dir_all(dirs.agent_tools()).unwrap();
    let canvas = dirs.agent_tools().join("canvas.json");
    for (content, problem) in [
        (
            r#"{"schemaVersion":9,"workspaces":[]}"#,
            r#"unknown member "schemaVersion" (a canvas has only projects)"#,
        ),
        ("[[]]", "the file must be a JSON object with a projects array"),
        ("[]", "the file must be a JSON object with a projects array"),
        ("{}", "the projects member is missing"),
        (r#"{"projects":{}}"#, "projects must be an array"),
    ] {
        std::fs::write(&canvas, content).unwrap();
        let output =
            headless(&dirs.user_data(), &["serve", "--project", dirs.project().to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{content}: {stderr}");
        assert!(
            stderr.contains(&format!("{} is not a valid canvas file: {problem}", canvas.display())),
            "{content}: {stderr}"
        );
        assert_eq!(std::fs::read(&canvas).unwrap(), content.as_bytes(), "{content}");
        assert!(!dirs.agent_tools().join("server.lock").exists());
    }
}

/// `serve --recover` moves a damaged canvas aside and starts from the last good copy (saved with
/// every change of the canvas), or empty when there is none, saying which.
#[tokio::test(flavor = "multi_thread")]
async fn serve_recover_moves_a_damaged_canvas_aside_and_starts_from_the_last_good_copy() {
    let dirs = Dirs::new();
    let canvas = dirs.agent_tools().join("canvas.json");
    let last_good = dirs.agent_tools().join("canvas.json.last-good");
    let aside = |dirs: &Dirs| -> Vec<PathBuf> {
        let mut found: Vec<PathBuf> = std::fs::read_dir(dirs.agent_tools())
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.to_string_lossy().contains("canvas.json.damaged-"))
            .collect();
        found.sort();
        found
    };

    // No last good copy: the start is empty, and says so.
    std::fs::create_dir_all(dirs.agent_tools()).unwrap();
    std::fs::write(&canvas, "[[]]").unwrap();
    let recover = [std::ffi::OsStr::new("--recover")];
    let serve = Serve::start_with(&dirs.user_data(), &dirs.project(), &recover);
    let said = serve.lines().join("\n");
    assert!(said.contains("no last good copy is kept, starting with an empty canvas"), "{said}");
    let moved = aside(&dirs);
    assert_eq!(moved.len(), 1, "{moved:?}");
    assert_eq!(std::fs::read(&moved[0]).unwrap(), b"[[]]");
    // A sticky on the canvas: once it is answered, the last good copy holds it, with no restart.
    let alpha = dirs.launch("alpha");
    ok(&alpha, "sticky_open", json!({"text": "kept across the damage"})).await;
    let copy = std::fs::read_to_string(&last_good).unwrap();
    assert!(copy.contains("kept across the damage"), "{copy}");
    assert_eq!(copy.as_bytes(), std::fs::read(&canvas).unwrap());
    assert!(serve.terminate().success());

    // Damaged again: without --recover it stops; with it, the last good copy is back.
    std::fs::write(&canvas, "{broken").unwrap();
    let output =
        headless(&dirs.user_data(), &["serve", "--project", dirs.project().to_str().unwrap()]);
    assert!(!output.status.success());
    std::thread::sleep(Duration::from_millis(1100));
    let serve = Serve::start_with(&dirs.user_data(), &dirs.project(), &recover);
    let said = serve.lines().join("\n");
    assert!(said.contains("starting from the last good copy"), "{said}");
    assert_eq!(aside(&dirs).len(), 2);
    let text = std::fs::read_to_string(&canvas).unwrap();
    assert!(text.contains("kept across the damage"), "{text}");
    assert!(serve.terminate().success());
}
