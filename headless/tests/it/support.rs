//! Fixtures: a server in this process on a private data directory (whose tmux server is killed
//! when the fixture is dropped, even when a test fails), agents launched through the control
//! API, and the one `call` helper every tool call goes through.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;
use termsprawl_headless::control::LaunchRequest;
use termsprawl_headless::{Config, Server};
use termsprawl_protocol::{ToolRequest, ToolResult};
use termsprawl_transport::Client;

pub(crate) use termsprawl_test_support::tmux::TmuxGuard;

/// A data directory with a project folder. Fields drop in order: the server, then the tmux
/// server (killed while its socket still exists), then the directory.
pub(crate) struct Fixture {
    pub(crate) server: Option<Server>,
    pub(crate) project: PathBuf,
    pub(crate) guard: TmuxGuard,
    pub(crate) dir: TempDir,
}

/// An agent node: its id and session file.
#[derive(Debug, Clone)]
pub(crate) struct Agent {
    pub(crate) node_id: String,
    pub(crate) session_file: PathBuf,
}

impl Fixture {
    /// A server with the test configuration.
    pub(crate) async fn start() -> Fixture {
        Fixture::start_with(|_| {}).await
    }

    /// A server whose configuration `adjust` changes.
    pub(crate) async fn start_with(adjust: impl FnOnce(&mut Config)) -> Fixture {
        let dir = TempDir::new().unwrap();
        let project = dir.path().join("project");
        std::fs::create_dir(&project).unwrap();
        let guard = TmuxGuard::new(&dir.path().join("data"));
        let mut fixture =
            Fixture { server: None, project: project.canonicalize().unwrap(), guard, dir };
        let config = fixture.config();
        let mut config = config;
        adjust(&mut config);
        fixture.server = Some(Server::start(config).await.unwrap());
        fixture
    }

    /// The test configuration: `<userData>` is `<temp>/data`, shells are `/bin/sh`.
    pub(crate) fn config(&self) -> Config {
        let mut config = Config::new(self.user_data(), &self.project);
        config.shell = Some(vec!["/bin/sh".to_owned()]);
        config.ctl = Some(PathBuf::from("/bin/true"));
        config
    }

    pub(crate) fn user_data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// `D`.
    pub(crate) fn agent_tools(&self) -> PathBuf {
        self.user_data().join("agent-tools")
    }

    pub(crate) fn server(&self) -> &Server {
        self.server.as_ref().expect("the server runs")
    }

    /// Stops the server (tmux sessions keep running).
    pub(crate) async fn stop(&mut self) {
        if let Some(server) = self.server.take() {
            server.close().await;
        }
    }

    /// Starts the server again on the same data directory.
    pub(crate) async fn restart(&mut self) {
        self.stop().await;
        self.server = Some(Server::start(self.config()).await.unwrap());
    }

    /// Launches `/bin/sh` as an agent named `name` through the control API.
    pub(crate) async fn agent(&self, name: &str) -> Agent {
        self.agent_named(name.to_owned()).await
    }

    /// [`Fixture::agent`] with an owned name (the future borrows only the fixture).
    /// Launches an agent per name, all at once: one thread each, driving its launch on the
    /// current runtime (of a multi-thread test).
    pub(crate) fn agents_at_once(&self, names: impl Iterator<Item = String>) -> Vec<Agent> {
        let runtime = tokio::runtime::Handle::current();
        tokio::task::block_in_place(|| {
            std::thread::scope(|scope| {
                let launches: Vec<_> = names
                    .map(|name| {
                        let runtime = runtime.clone();
                        scope.spawn(move || runtime.block_on(self.agent_named(name)))
                    })
                    .collect();
                launches.into_iter().map(|launch| launch.join().unwrap()).collect()
            })
        })
    }

    pub(crate) async fn agent_named(&self, name: String) -> Agent {
        let value = self
            .server()
            .launch(LaunchRequest {
                project: None,
                agent: Some(name),
                title: None,
                argv: vec!["/bin/sh".to_owned()],
            })
            .await
            .unwrap();
        Agent {
            node_id: value["nodeId"].as_str().unwrap().to_owned(),
            session_file: PathBuf::from(value["sessionFile"].as_str().unwrap()),
        }
    }
}

/// One tool call of `agent`, over HTTP.
pub(crate) async fn call(agent: &Agent, operation: &str, args: Value) -> ToolResult {
    Client::default()
        .with_timeout(Duration::from_secs(30))
        .call(&agent.session_file, &ToolRequest::new(operation, &args))
        .await
}

/// A call that must succeed; returns its value.
#[track_caller]
pub(crate) fn value(result: ToolResult) -> Value {
    match result {
        ToolResult::Success { value } => value.unwrap_or(Value::Null),
        ToolResult::Failure { error } => panic!("expected success, got error: {error}"),
    }
}

/// A call that must fail; returns its error.
#[track_caller]
pub(crate) fn error(result: ToolResult) -> String {
    match result {
        ToolResult::Failure { error } => error,
        ToolResult::Success { value } => panic!("expected failure, got {value:?}"),
    }
}

/// Calls `operation` and expects success.
pub(crate) async fn ok(agent: &Agent, operation: &str, args: Value) -> Value {
    let result = call(agent, operation, args).await;
    match result {
        ToolResult::Success { value } => value.unwrap_or(Value::Null),
        ToolResult::Failure { error } => panic!("{operation} failed: {error}"),
    }
}

/// Calls `operation` and expects failure.
pub(crate) async fn fails(agent: &Agent, operation: &str, args: Value) -> String {
    match call(agent, operation, args).await {
        ToolResult::Failure { error } => error,
        ToolResult::Success { value } => panic!("{operation} succeeded with {value:?}"),
    }
}

/// Reads `node_id` through `agent` until its output contains `needle` (10 s at most); returns
/// the output.
pub(crate) async fn wait_for_output(agent: &Agent, node_id: &str, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let output = ok(agent, "terminal_read", json!({"nodeId": node_id})).await["output"]
            .as_str()
            .unwrap()
            .to_owned();
        if output.contains(needle) {
            return output;
        }
        assert!(
            Instant::now() < deadline,
            "{needle:?} never appeared in {node_id}; last output:\n{output}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A node of `canvas_list`, or `null`.
pub(crate) async fn node(agent: &Agent, node_id: &str) -> Value {
    termsprawl_test_support::canvas_node(&ok(agent, "canvas_list", json!({})).await, node_id)
}

/// `termsprawlctl` as cargo builds it next to `termsprawl-headless` (the `cli` package's binary,
/// present once `cargo build -p termsprawl-cli` ran; this crate may not depend on `cli`).
///
/// When it is missing, a test that needs it cannot be skipped silently: under CI (`CI` set and
/// not empty) it fails with what to build; elsewhere it is skipped with that message on stderr.
#[expect(clippy::print_stderr, reason = "a skipped test says so on stderr")]
pub(crate) fn built_termsprawlctl() -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_BIN_EXE_termsprawl-headless")).with_file_name("termsprawlctl");
    if path.is_file() {
        return Some(path);
    }
    let message = format!(
        "termsprawlctl is not built next to termsprawl-headless ({}): run `cargo build -p termsprawl-cli` first",
        path.display()
    );
    let under_ci = std::env::var_os("CI").is_some_and(|value| !value.is_empty());
    assert!(!under_ci, "{message} (CI is set, so this test fails instead of skipping)");
    eprintln!("skipped: {message}");
    None
}

/// The `termsprawl-headless` binary of this package.
pub(crate) const HEADLESS: &str = env!("CARGO_BIN_EXE_termsprawl-headless");

/// `termsprawl-headless --data USER_DATA ARGS...`, run to completion with stdin closed.
pub(crate) fn headless(user_data: &Path, args: &[&str]) -> Output {
    Command::new(HEADLESS)
        .arg("--data")
        .arg(user_data)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}
