//! A fake termsprawl app for tests, examples and benchmarks: a real [`ToolServer`] on a loopback
//! port, its agent-tools directory `D` in a temp dir (or a given one), one provisioned session,
//! and a scriptable handler that records every request.
//!
//! [`FakeApp::start`] (or [`FakeApp::builder`] … [`FakeAppBuilder::start`]) runs the server on the
//! caller's tokio runtime, for async tests. [`FakeAppBuilder::start_blocking`] gives a
//! [`BlockingFakeApp`] whose server runs on a runtime of its own in a thread of its own, for
//! synchronous tests that drive a real binary and block while it runs.
//!
//! Every request that passed the server's checks goes through these steps, in order:
//! 1. it is recorded as a [`Received`] ([`FakeApp::take_received`]), unless recording is off
//!    ([`FakeAppBuilder::recording`]);
//! 2. if a hold rule matches it ([`FakeApp::hold_all`], [`FakeApp::hold_when`]), it is reported to
//!    [`FakeApp::next_held`] and waits until [`FakeApp::release`] lets it through;
//! 3. the oldest answer queued with [`FakeApp::respond`], if any, is returned;
//! 4. else the answer set for its operation with [`FakeApp::answer`], if any;
//! 5. else the handler given to [`FakeAppBuilder::handler`] runs; by default it echoes the
//!    arguments as the value (`{"ok":true,"value":<args>}`).
//!
//! [`FakeApp::stop`] closes the server and keeps `D`; [`FakeApp::restart`] starts it again on a new
//! port and re-provisions the session with its token kept, as the app does after a restart.
//!
//! ```no_run
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! use termsprawl_protocol::{ToolRequest, ToolResult};
//! use termsprawl_test_support::fake::FakeApp;
//!
//! let app = FakeApp::start().await?;
//! app.answer("canvas_list", ToolResult::ok(serde_json::json!([])));
//! let result = termsprawl_transport::call(
//!     app.session_file(),
//!     &ToolRequest::new("canvas_list", &serde_json::json!({})),
//! )
//! .await;
//! assert_eq!(result, ToolResult::ok(serde_json::json!([])));
//! assert_eq!(app.take_received()[0].operation, "canvas_list");
//! # Ok(()) }
//! ```

use std::collections::{HashMap, VecDeque};
use std::io;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use termsprawl_protocol::{
    IntegrationState, IntegrationStatus, ToolIdentity, ToolRequest, ToolResult, Validated,
};
use tokio::sync::{Semaphore, mpsc, oneshot};

use termsprawl_transport::server::{
    Caller, HandlerFuture, ProvisionError, ServerConfig, StartError, ToolHandler, ToolServer,
    handler_fn,
};
use termsprawl_transport::sync::lock;

/// The node id of the default session.
pub const NODE_ID: &str = "agent-1";

/// The project id of the default session.
pub const PROJECT_ID: &str = "p1";

/// The name of `D` inside the temp dir of an app started without [`FakeAppBuilder::data_dir`].
pub const DATA_DIR_NAME: &str = "agent-tools";

/// One request as the fake app's handler saw it (validated, so `args` is compact JSON).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Received {
    /// The caller's node id.
    pub node_id: String,
    /// The operation.
    pub operation: String,
    /// The arguments as JSON text, as they arrived.
    pub args: String,
}

/// Why a fake app could not start.
#[derive(Debug, thiserror::Error)]
pub enum FakeAppError {
    /// The temp dir holding `D` could not be created.
    #[error("cannot create a temporary directory: {0}")]
    TempDir(#[source] io::Error),
    /// The runtime of a [`BlockingFakeApp`] could not be built.
    #[error("cannot build the fake app's runtime: {0}")]
    Runtime(#[source] io::Error),
    /// The tool server did not start.
    #[error(transparent)]
    Start(#[from] StartError),
    /// The session could not be provisioned.
    #[error(transparent)]
    Provision(#[from] ProvisionError),
}

/// The integration status the default session is provisioned with: `needs-setup`, adapter
/// `claude-mcp`, version `unknown`, reason `Waiting for the agent to connect to MCP`.
pub fn default_status() -> IntegrationStatus {
    IntegrationStatus {
        state: IntegrationState::NeedsSetup,
        adapter: "claude-mcp".to_owned(),
        version: "unknown".to_owned(),
        reason: "Waiting for the agent to connect to MCP".to_owned(),
    }
}

/// The value of a `session_info` success as the app answers it (`spec/protocol.md` §6.5), for a
/// fake app's handler: `{"nodeId","projectId","instanceId","host":"local","status",
/// "appVersion","preferencesFile","guidesDirectory","browserEnabled","operations"}`, with the
/// caller's identity, status, instance and `D`.
pub fn session_info(
    caller: &Caller,
    app_version: &str,
    browser_enabled: bool,
    operations: &[&str],
) -> serde_json::Value {
    let data_dir = caller.data_dir();
    serde_json::json!({
        "nodeId": caller.node_id(),
        "projectId": caller.project_id(),
        "instanceId": caller.instance_id(),
        "host": "local",
        "status": caller.status(),
        "appVersion": app_version,
        "preferencesFile": data_dir.join("preferences.json"),
        "guidesDirectory": data_dir.join("launch").join(caller.node_id()).join("skills"),
        "browserEnabled": browser_enabled,
        "operations": operations,
    })
}

/// How a [`FakeApp`] starts. See [`FakeApp::builder`].
pub struct FakeAppBuilder {
    data_dir: Option<PathBuf>,
    identity: ToolIdentity,
    status: IntegrationStatus,
    config: ServerConfig,
    handler: Option<Arc<dyn ToolHandler>>,
    recording: bool,
}

impl FakeAppBuilder {
    /// Uses `D` = `data_dir` instead of `<a new temp dir>/agent-tools`; the directory is not
    /// removed when the app is dropped.
    #[must_use]
    pub fn data_dir(mut self, data_dir: impl Into<PathBuf>) -> FakeAppBuilder {
        self.data_dir = Some(data_dir.into());
        self
    }

    /// The default session's node and project (default [`NODE_ID`] in [`PROJECT_ID`]).
    #[must_use]
    pub fn identity(mut self, node_id: &str, project_id: &str) -> FakeAppBuilder {
        self.identity =
            ToolIdentity { node_id: node_id.to_owned(), project_id: project_id.to_owned() };
        self
    }

    /// The default session's status (default [`default_status`]).
    #[must_use]
    pub fn status(mut self, status: IntegrationStatus) -> FakeAppBuilder {
        self.status = status;
        self
    }

    /// The server's timing (default [`ServerConfig::default`]).
    #[must_use]
    pub fn config(mut self, config: ServerConfig) -> FakeAppBuilder {
        self.config = config;
        self
    }

    /// What answers a request that neither a queued nor an operation's answer answers (step 5 of
    /// the [module documentation](self)); by default the arguments are echoed as the value.
    #[must_use]
    pub fn handler(mut self, handler: Arc<dyn ToolHandler>) -> FakeAppBuilder {
        self.handler = Some(handler);
        self
    }

    /// Whether requests are recorded (step 1; default yes). Long runs that only measure, such as
    /// benchmarks, turn it off so that the record does not grow.
    #[must_use]
    pub fn recording(mut self, recording: bool) -> FakeAppBuilder {
        self.recording = recording;
        self
    }

    /// Starts the server on the current tokio runtime and provisions the default session.
    pub async fn start(self) -> Result<FakeApp, FakeAppError> {
        let (temp, data_dir) = if let Some(data_dir) = self.data_dir {
            (None, data_dir)
        } else {
            let temp = tempfile::TempDir::new().map_err(FakeAppError::TempDir)?;
            let data_dir = temp.path().join(DATA_DIR_NAME);
            (Some(temp), data_dir)
        };
        let fallback = self.handler.unwrap_or_else(|| {
            handler_fn(|_, request| async move { ToolResult::ok(request.args_value()) })
        });
        let (held_tx, held_rx) = mpsc::unbounded_channel();
        let script = Arc::new(Script {
            recording: self.recording,
            received: Mutex::default(),
            queue: Mutex::default(),
            answers: Mutex::default(),
            hold: Mutex::default(),
            gate: Semaphore::new(0),
            held_tx,
            held_rx: tokio::sync::Mutex::new(held_rx),
            fallback,
        });
        let server = ToolServer::start_with(
            &data_dir,
            Arc::new(ScriptHandler(Arc::clone(&script))),
            self.config.clone(),
        )
        .await?;
        let session_file =
            server.provision_session(self.identity.clone(), self.status.clone(), false)?;
        Ok(FakeApp {
            server: Some(server),
            script,
            identity: self.identity,
            status: self.status,
            config: self.config,
            data_dir,
            session_file,
            temp,
        })
    }

    /// Starts the app on a runtime of its own, driven by a thread of its own, so that the server
    /// keeps answering while the calling thread blocks. Call it (and use the result) from
    /// synchronous code only, never from inside a tokio runtime.
    pub fn start_blocking(self) -> Result<BlockingFakeApp, FakeAppError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(FakeAppError::Runtime)?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            runtime.block_on(async {
                let _ = stopped.await;
            });
        });
        let mut blocking =
            BlockingFakeApp { app: None, handle, stop: Some(stop), thread: Some(thread) };
        blocking.app = Some(blocking.handle.block_on(self.start())?);
        Ok(blocking)
    }
}

/// A fake app: a running (or stopped) [`ToolServer`], its directory and its default session. See
/// the [module documentation](self).
///
/// Dropping it closes the server the way dropping a [`ToolServer`] does, then removes the temp
/// dir, if it made one.
pub struct FakeApp {
    // Declared first: dropped (and cleaned up) before the temp dir goes.
    server: Option<ToolServer>,
    script: Arc<Script>,
    identity: ToolIdentity,
    status: IntegrationStatus,
    config: ServerConfig,
    data_dir: PathBuf,
    session_file: PathBuf,
    temp: Option<tempfile::TempDir>,
}

impl FakeApp {
    /// A builder with the defaults: `D` in a new temp dir, session [`NODE_ID`] in
    /// [`PROJECT_ID`] with [`default_status`], the default [`ServerConfig`], echoing handler.
    pub fn builder() -> FakeAppBuilder {
        FakeAppBuilder {
            data_dir: None,
            identity: ToolIdentity {
                node_id: NODE_ID.to_owned(),
                project_id: PROJECT_ID.to_owned(),
            },
            status: default_status(),
            config: ServerConfig::default(),
            handler: None,
            recording: true,
        }
    }

    /// [`FakeApp::builder`]`().start()`.
    pub async fn start() -> Result<FakeApp, FakeAppError> {
        FakeApp::builder().start().await
    }

    /// The running server (for tests of the server itself: provisioning more sessions, revoking).
    ///
    /// # Panics
    ///
    /// When the app is stopped.
    pub fn server(&self) -> &ToolServer {
        self.server.as_ref().expect("the fake app is stopped")
    }

    /// Whether the server runs.
    pub fn is_running(&self) -> bool {
        self.server.is_some()
    }

    /// The server's port; `None` while stopped.
    pub fn port(&self) -> Option<u16> {
        self.server.as_ref().map(ToolServer::port)
    }

    /// `http://127.0.0.1:<port>/call`, as in `endpoint.json`; `None` while stopped.
    pub fn url(&self) -> Option<&str> {
        self.server.as_ref().map(ToolServer::url)
    }

    /// `D`, as given or as made in the temp dir.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The temp dir holding `D` (`<temp>/agent-tools`); `None` when `D` was given.
    pub fn temp_dir(&self) -> Option<&Path> {
        self.temp.as_ref().map(tempfile::TempDir::path)
    }

    /// The default session's identity.
    pub fn identity(&self) -> &ToolIdentity {
        &self.identity
    }

    /// The default session's file, `D/sessions/<nodeId>.json`.
    pub fn session_file(&self) -> &Path {
        &self.session_file
    }

    /// The default session's token, read back from its session file, so that a test can prove
    /// that it appears nowhere.
    ///
    /// # Panics
    ///
    /// When the session file cannot be read or holds no token.
    pub fn token(&self) -> String {
        let text = std::fs::read(&self.session_file).expect("the session file is readable");
        let session: serde_json::Value =
            serde_json::from_slice(&text).expect("the session file is JSON");
        session["token"].as_str().expect("the session file has a token").to_owned()
    }

    /// Queues an answer for the next request, whatever its operation (step 3).
    pub fn respond(&self, result: ToolResult) {
        lock(&self.script.queue).push_back(result);
    }

    /// Answers every request of `operation` with `result` from now on (step 4).
    pub fn answer(&self, operation: &str, result: ToolResult) {
        lock(&self.script.answers).insert(operation.to_owned(), result);
    }

    /// Makes every request wait until released (step 2).
    pub fn hold_all(&self) {
        self.hold_when(|_| true);
    }

    /// Makes the requests for which `holds` is true wait until released (step 2), replacing an
    /// earlier rule.
    pub fn hold_when(&self, holds: impl Fn(&ToolRequest) -> bool + Send + Sync + 'static) {
        *lock(&self.script.hold) = Some(Arc::new(holds));
    }

    /// Lets `count` held requests go on, or as many of the next ones to be held.
    pub fn release(&self, count: usize) {
        self.script.gate.add_permits(count);
    }

    /// Waits until a request is held, oldest first; the request.
    pub async fn next_held(&self) -> Received {
        let mut held = self.script.held_rx.lock().await;
        held.recv().await.expect("the fake app keeps a sender")
    }

    /// The requests received since the last call, oldest first.
    pub fn take_received(&self) -> Vec<Received> {
        std::mem::take(&mut *lock(&self.script.received))
    }

    /// Closes the server ([`ToolServer::close`]): `endpoint.json` goes, the port closes, `D` and
    /// the session files stay. Nothing happens when it is stopped already.
    pub async fn stop(&mut self) {
        if let Some(server) = self.server.take() {
            server.close().await;
        }
    }

    /// Takes the running server out, leaving the app stopped and `D` in place: for tests of what
    /// closing or dropping a server does.
    pub fn take_server(&mut self) -> Option<ToolServer> {
        self.server.take()
    }

    /// Stops the server if it runs, then starts it again in the same `D` on a new port with the
    /// same handler and script, and re-provisions the default session keeping its token (the
    /// `reuse` of [`ToolServer::provision_session`]), as the app does after a restart.
    pub async fn restart(&mut self) -> Result<(), FakeAppError> {
        self.stop().await;
        let handler = Arc::new(ScriptHandler(Arc::clone(&self.script)));
        let server = ToolServer::start_with(&self.data_dir, handler, self.config.clone()).await?;
        self.session_file =
            server.provision_session(self.identity.clone(), self.status.clone(), true)?;
        self.server = Some(server);
        Ok(())
    }
}

impl std::fmt::Debug for FakeApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeApp")
            .field("server", &self.server)
            .field("identity", &self.identity)
            .field("session_file", &self.session_file)
            .finish_non_exhaustive()
    }
}

/// A [`FakeApp`] whose server runs on a runtime and thread of its own, for synchronous code; made
/// by [`FakeAppBuilder::start_blocking`]. It dereferences to the [`FakeApp`] for everything that
/// does not wait.
///
/// Dropping it closes the server, removes the temp dir and ends the thread. Never use it from
/// inside a tokio runtime: its waiting methods block on the app's runtime.
pub struct BlockingFakeApp {
    app: Option<FakeApp>,
    handle: tokio::runtime::Handle,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl BlockingFakeApp {
    fn app_mut(&mut self) -> &mut FakeApp {
        self.app.as_mut().expect("the app lives until drop")
    }

    /// [`FakeApp::stop`], blocking.
    pub fn stop(&mut self) {
        let handle = self.handle.clone();
        handle.block_on(self.app_mut().stop());
    }

    /// [`FakeApp::restart`], blocking.
    pub fn restart(&mut self) -> Result<(), FakeAppError> {
        let handle = self.handle.clone();
        handle.block_on(self.app_mut().restart())
    }

    /// [`FakeApp::next_held`], blocking for at most `patience`; `None` when nothing was held in
    /// time.
    pub fn wait_held(&self, patience: Duration) -> Option<Received> {
        self.handle.block_on(async { tokio::time::timeout(patience, self.next_held()).await.ok() })
    }
}

impl Deref for BlockingFakeApp {
    type Target = FakeApp;

    fn deref(&self) -> &FakeApp {
        self.app.as_ref().expect("the app lives until drop")
    }
}

impl Drop for BlockingFakeApp {
    fn drop(&mut self) {
        if let Some(mut app) = self.app.take() {
            self.handle.block_on(app.stop());
        }
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl std::fmt::Debug for BlockingFakeApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("BlockingFakeApp").field(&self.app).finish()
    }
}

type HoldRule = Arc<dyn Fn(&ToolRequest) -> bool + Send + Sync>;

/// What the handler does, shared between the app value and every server run.
struct Script {
    recording: bool,
    received: Mutex<Vec<Received>>,
    queue: Mutex<VecDeque<ToolResult>>,
    answers: Mutex<HashMap<String, ToolResult>>,
    hold: Mutex<Option<HoldRule>>,
    gate: Semaphore,
    held_tx: mpsc::UnboundedSender<Received>,
    held_rx: tokio::sync::Mutex<mpsc::UnboundedReceiver<Received>>,
    fallback: Arc<dyn ToolHandler>,
}

impl Script {
    async fn run(&self, caller: Caller, validated: Validated) -> ToolResult {
        let request = &validated.request;
        let received = Received {
            node_id: caller.node_id().to_owned(),
            operation: request.operation().unwrap_or_default().to_owned(),
            args: request.args.get().to_owned(),
        };
        if self.recording {
            lock(&self.received).push(received.clone());
        }
        let hold = lock(&self.hold).clone();
        if hold.is_some_and(|holds| holds(request)) {
            let _ = self.held_tx.send(received.clone());
            self.gate.acquire().await.expect("the gate is never closed").forget();
        }
        if let Some(queued) = lock(&self.queue).pop_front() {
            return queued;
        }
        let answer = lock(&self.answers).get(&received.operation).cloned();
        match answer {
            Some(answer) => answer,
            None => self.fallback.handle(caller, validated).await,
        }
    }
}

struct ScriptHandler(Arc<Script>);

impl ToolHandler for ScriptHandler {
    fn handle(&self, caller: Caller, request: Validated) -> HandlerFuture<'_> {
        Box::pin(self.0.run(caller, request))
    }
}

#[cfg(test)]
mod tests;
