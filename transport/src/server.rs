//! The server half of the loopback wire (cargo feature `server`): a tool server that looks to any
//! client exactly like the app's (`spec/protocol.md` §2, §6.1–§6.4).
//!
//! [`ToolServer::start`] takes the agent-tools directory `D` and a [`ToolHandler`]. It prepares
//! `D` (mode 0700) and `D/sessions/`, takes `D/server.lock`, listens on `127.0.0.1:0` and writes
//! `D/endpoint.json`. [`ToolServer::provision_session`] writes `D/sessions/<nodeId>.json` and makes
//! its token live; [`ToolServer::revoke_session`] deletes it. Every request is checked in the
//! app's order (Origin, token, route, size, JSON, [`termsprawl_protocol::validate`]) before the
//! handler sees it, together with the [`Caller`] the token belongs to. [`ToolServer::close`]
//! removes the lock, and `endpoint.json` if it is still this server's.
//!
//! The fake app that test suites, examples and the bench run against wraps this server; it lives
//! in the `termsprawl-test-support` crate, so that nothing built on this half ships it.
//!
//! What the handler returns decides the HTTP status: a success is 200, a failure 400 (an empty
//! error becomes `Tool failed`, and so does a panicking handler). The handler runs in a task of
//! its own: a client that disconnects does not cancel an operation that has started, as in the
//! app. The per-project queue and the operations themselves (§6.4 steps 2–5) are the handler's
//! business.
//!
//! ```no_run
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! use termsprawl_protocol::{IntegrationState, IntegrationStatus, ToolIdentity, ToolResult};
//! use termsprawl_transport::server::{ToolServer, handler_fn};
//!
//! let handler = handler_fn(|caller, request| async move {
//!     ToolResult::ok(serde_json::json!({"caller": caller.node_id(), "operation": request.operation()}))
//! });
//! let server = ToolServer::start("/tmp/d".as_ref(), handler).await?;
//! let status = IntegrationStatus {
//!     state: IntegrationState::NeedsSetup,
//!     adapter: "claude".to_owned(),
//!     version: "unknown".to_owned(),
//!     reason: "Agent executable was not found".to_owned(),
//! };
//! let identity = ToolIdentity { node_id: "agent-1".to_owned(), project_id: "p1".to_owned() };
//! let session_file = server.provision_session(identity, status, false)?;
//! // … termsprawl_transport::call(&session_file, &request).await …
//! server.close().await;
//! # Ok(()) }
//! ```

mod files;
mod http;
mod lock;
mod sessions;

use std::future::Future;
use std::io;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use termsprawl_protocol::{
    IntegrationStatus, ToolEndpoint, ToolIdentity, ToolRequest, ToolResult, Validated,
    is_valid_node_id,
};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

pub use files::{mint_token, write_atomic, write_atomic_all};
pub use sessions::{Caller, LiveSession, Sessions};

/// The largest request body the server reads: 131 072 bytes (128 KiB), inclusive.
pub const MAX_REQUEST_BYTES: usize = 131_072;
/// The error of a request whose token matches no live session (`401`, `spec/protocol.md` §6.2).
pub const UNKNOWN_SESSION: &str = "Unknown or revoked session";

/// The name of the lock file in `D`.
pub const LOCK_FILE: &str = "server.lock";

/// The name of the sessions directory in `D`.
pub const SESSIONS_DIR: &str = "sessions";

/// The future a [`ToolHandler`] returns.
pub type HandlerFuture<'a> = Pin<Box<dyn Future<Output = ToolResult> + Send + 'a>>;

/// What runs an authenticated, validated request.
///
/// `request` is what [`termsprawl_protocol::validate`] handed back: its operation is in the table,
/// its arguments fit the schema, and it carries both the typed [`termsprawl_protocol::Call`] and
/// the request with its `args` text. Return a success for HTTP 200, a failure for HTTP 400.
pub trait ToolHandler: Send + Sync + 'static {
    /// Runs one request of `caller`.
    fn handle(&self, caller: Caller, request: Validated) -> HandlerFuture<'_>;
}

/// A [`ToolHandler`] from a closure returning a future, for tests and small servers:
/// `handler_fn(|caller, request| async move { ToolResult::ok_empty() })`. The closure receives the
/// request with its `args` text ([`Validated::request`]).
pub fn handler_fn<F, Fut>(handler: F) -> Arc<dyn ToolHandler>
where
    F: Fn(Caller, ToolRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ToolResult> + Send + 'static,
{
    Arc::new(FnHandler(handler))
}

struct FnHandler<F>(F);

impl<F, Fut> ToolHandler for FnHandler<F>
where
    F: Fn(Caller, ToolRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ToolResult> + Send + 'static,
{
    fn handle(&self, caller: Caller, request: Validated) -> HandlerFuture<'_> {
        Box::pin((self.0)(caller, request.request))
    }
}

/// Timing of the HTTP side.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerConfig {
    /// How long a request may take to arrive in full, head and body, before the server answers
    /// 408 with an empty body and `Connection: close`. The clock starts when a connection is
    /// accepted or when the first byte of a later request on it arrives. Default 15 s.
    pub receive_timeout: Duration,
    /// How long a kept-alive connection may sit idle between requests before it is closed.
    /// Default 5 s.
    pub idle_timeout: Duration,
    /// Whether [`ToolServer::start_with`] writes `endpoint.json` (the default). When cleared, the
    /// server listens but clients cannot find it until [`ToolServer::publish_endpoint`]: a
    /// restarting server uses this to make the sessions of running agents live again first, so
    /// that no agent ever sees its valid token refused.
    pub publish_at_start: bool,
}

impl Default for ServerConfig {
    fn default() -> ServerConfig {
        ServerConfig {
            receive_timeout: Duration::from_secs(15),
            idle_timeout: Duration::from_secs(5),
            publish_at_start: true,
        }
    }
}

impl ServerConfig {
    /// This configuration with another receive timeout (tests use a fraction of a second).
    #[must_use]
    pub fn with_receive_timeout(mut self, timeout: Duration) -> ServerConfig {
        self.receive_timeout = timeout;
        self
    }

    /// This configuration with another idle timeout.
    #[must_use]
    pub fn with_idle_timeout(mut self, timeout: Duration) -> ServerConfig {
        self.idle_timeout = timeout;
        self
    }

    /// This configuration with `endpoint.json` written only by [`ToolServer::publish_endpoint`].
    #[must_use]
    pub fn with_deferred_endpoint(mut self) -> ServerConfig {
        self.publish_at_start = false;
        self
    }
}

/// A file or folder of a data directory that could not be prepared, read or written: what was
/// being done, where, and the operating system's error. The one I/O failure of the server half
/// and of the servers built on it (headless's `Error::Io`).
#[derive(Debug, thiserror::Error)]
#[error("cannot {action} {path}: {source}")]
pub struct FileError {
    /// What was being done: `create`, `read`, `write`, `remove`, `resolve`, `bind`.
    pub action: &'static str,
    /// The path.
    pub path: PathBuf,
    /// The operating system's error.
    #[source]
    pub source: io::Error,
}

impl FileError {
    /// The error of `action` on `path`, for `map_err`: `.map_err(FileError::on("read", path))`.
    pub fn on(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(io::Error) -> FileError {
        let path = path.into();
        move |source| FileError { action, path, source }
    }
}

/// Why [`ToolServer::start`] failed.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// `server.lock` holds a `pid` that is not a positive integer.
    #[error("Invalid service lock: {path}")]
    InvalidLock {
        /// The lock file.
        path: PathBuf,
    },
    /// `server.lock` names a process that is alive (or that we may not signal).
    #[error("Another termsprawl tool service is already using this data directory")]
    AlreadyRunning {
        /// The lock file.
        path: PathBuf,
        /// The owner's pid, when the lock could be read.
        pid: Option<u32>,
    },
    /// A file or directory of `D` could not be prepared.
    #[error(transparent)]
    Io(#[from] FileError),
    /// The loopback listener could not be opened.
    #[error("cannot listen on 127.0.0.1: {0}")]
    Listen(#[source] io::Error),
}

/// Why [`ToolServer::provision_session`] failed.
#[derive(Debug, thiserror::Error)]
pub enum ProvisionError {
    /// The node id does not match `^[a-zA-Z0-9][a-zA-Z0-9_-]{0,127}$`.
    #[error("Invalid agent node ID")]
    InvalidNodeId,
    /// The session file could not be written.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The session file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// No random bytes for a token.
    #[error("cannot mint a session token: {0}")]
    Random(#[source] io::Error),
}

/// What every request and every [`Caller`] of one server share.
struct Shared {
    instance_id: Arc<str>,
    data_dir: Arc<Path>,
    sessions: Sessions,
    handler: Arc<dyn ToolHandler>,
    config: ServerConfig,
}

/// A running loopback tool server. See the [module documentation](self).
///
/// Dropping it without [`ToolServer::close`] stops it and cleans up the same way, except that
/// it cannot wait for the listener task to end.
pub struct ToolServer {
    shared: Arc<Shared>,
    port: u16,
    url: String,
    accept: Option<JoinHandle<()>>,
    cleaned_up: bool,
}

impl ToolServer {
    /// Starts a server on `127.0.0.1:0` for the agent-tools directory `data_dir` (`D`) with the
    /// default [`ServerConfig`].
    ///
    /// `D` is created if needed and set to mode 0700; `D/sessions/` is created with mode 0700.
    /// `D/server.lock` is taken (`spec/protocol.md` §2.5): a lock whose `pid` is not a positive
    /// integer fails with [`StartError::InvalidLock`]; a live owner (a signal-0 probe succeeds, or
    /// fails with anything but "no such process") fails with [`StartError::AlreadyRunning`]; a
    /// dead owner's lock, and a lock file that is not JSON at all, are stale and removed. Then
    /// `{"pid","instanceId"}` is created exclusively, the listener opens, and
    /// `{"url","instanceId"}` is written to `D/endpoint.json`. A relative `data_dir` is made
    /// absolute against the current directory.
    pub async fn start(
        data_dir: &Path,
        handler: Arc<dyn ToolHandler>,
    ) -> Result<ToolServer, StartError> {
        ToolServer::start_with(data_dir, handler, ServerConfig::default()).await
    }

    /// [`ToolServer::start`] with explicit timing.
    pub async fn start_with(
        data_dir: &Path,
        handler: Arc<dyn ToolHandler>,
        config: ServerConfig,
    ) -> Result<ToolServer, StartError> {
        let data_dir =
            crate::discovery::absolute(data_dir).map_err(FileError::on("resolve", data_dir))?;
        files::prepare_data_dir(&data_dir)?;
        let instance_id = uuid::Uuid::new_v4().to_string();
        let lock_path = data_dir.join(LOCK_FILE);
        lock::acquire(&lock_path, &instance_id)?;
        match ToolServer::listen(&data_dir, &instance_id, handler, config).await {
            Ok(server) => Ok(server),
            Err(error) => {
                let _ = std::fs::remove_file(&lock_path);
                Err(error)
            }
        }
    }

    async fn listen(
        data_dir: &Path,
        instance_id: &str,
        handler: Arc<dyn ToolHandler>,
        config: ServerConfig,
    ) -> Result<ToolServer, StartError> {
        let listener = TcpListener::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0))
            .await
            .map_err(StartError::Listen)?;
        let port = listener.local_addr().map_err(StartError::Listen)?.port();
        let url = format!("http://127.0.0.1:{port}/call");
        if config.publish_at_start {
            write_endpoint(data_dir, &url, instance_id)?;
        }
        let shared = Arc::new(Shared {
            instance_id: Arc::from(instance_id),
            data_dir: Arc::from(data_dir),
            sessions: Sessions::default(),
            handler,
            config,
        });
        let accept = tokio::spawn(http::accept_loop(listener, Arc::clone(&shared)));
        Ok(ToolServer { shared, port, url, accept: Some(accept), cleaned_up: false })
    }

    /// Writes `D/endpoint.json` (atomically), which lets clients find this server; for a server
    /// started with [`ServerConfig::with_deferred_endpoint`].
    pub fn publish_endpoint(&self) -> Result<(), StartError> {
        write_endpoint(&self.shared.data_dir, &self.url, &self.shared.instance_id)
    }

    /// `http://127.0.0.1:<port>/call`, as written to `endpoint.json`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The port the server listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// This run's instance id, a UUID v4, as written to `endpoint.json` and `server.lock`.
    pub fn instance_id(&self) -> &str {
        &self.shared.instance_id
    }

    /// `D`, absolute.
    pub fn data_dir(&self) -> &Path {
        &self.shared.data_dir
    }

    /// The live sessions of this run.
    pub fn sessions(&self) -> &Sessions {
        &self.shared.sessions
    }

    /// `D/sessions/<nodeId>.json`, whether or not it exists.
    pub fn session_file(&self, node_id: &str) -> PathBuf {
        files::session_file(&self.shared.data_dir, node_id)
    }

    /// Writes `D/sessions/<nodeId>.json` (mode 0600, atomically) and makes its token live,
    /// replacing any earlier session of the node; returns the session file.
    ///
    /// A fresh token is minted, unless `reuse` is set and the existing file's `nodeId` and
    /// `projectId` match `identity` and its token is well-formed (`^[a-f0-9]{64}$`): then that
    /// token and the file's stored status are kept (`status` is used only when the stored one
    /// cannot be read), so that agents started before an app restart keep working.
    pub fn provision_session(
        &self,
        identity: ToolIdentity,
        status: IntegrationStatus,
        reuse: bool,
    ) -> Result<PathBuf, ProvisionError> {
        if !is_valid_node_id(&identity.node_id) {
            return Err(ProvisionError::InvalidNodeId);
        }
        let path = self.session_file(&identity.node_id);
        let reused = if reuse { files::reusable_session(&path, &identity) } else { None };
        let (token, status) = match reused {
            Some((token, stored)) => (token, stored.unwrap_or(status)),
            None => (mint_token().map_err(ProvisionError::Random)?, status),
        };
        let session = termsprawl_protocol::ToolSession {
            node_id: identity.node_id.clone(),
            project_id: identity.project_id.clone(),
            token,
            status,
        };
        files::write_session(&self.shared.data_dir, &path, &session)
            .map_err(|source| ProvisionError::Io { path: path.clone(), source })?;
        self.shared.sessions.insert(identity, session.token, session.status);
        Ok(path)
    }

    /// Revokes the node's session: its token stops working at once and its session file is
    /// deleted (a missing file is fine). An invalid node id is an `InvalidInput` error with the
    /// message `Invalid agent node ID`, and nothing is touched.
    pub fn revoke_session(&self, node_id: &str) -> io::Result<()> {
        if !is_valid_node_id(node_id) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "Invalid agent node ID"));
        }
        self.shared.sessions.remove(node_id);
        match std::fs::remove_file(self.session_file(node_id)) {
            Err(error) if error.kind() != io::ErrorKind::NotFound => Err(error),
            _ => Ok(()),
        }
    }

    /// Stops the server: the listener closes and open connections are dropped (handlers already
    /// running finish on their own), `server.lock` is removed, and `endpoint.json` is removed if
    /// its `instanceId` is still this server's. Session files stay: quitting does not revoke.
    pub async fn close(mut self) {
        if let Some(accept) = self.accept.take() {
            accept.abort();
            let _ = accept.await;
        }
        self.clean_up();
    }

    fn clean_up(&mut self) {
        if self.cleaned_up {
            return;
        }
        self.cleaned_up = true;
        if let Some(accept) = &self.accept {
            accept.abort();
        }
        let _ = std::fs::remove_file(self.shared.data_dir.join(LOCK_FILE));
        files::remove_endpoint_if_ours(&self.shared.data_dir, &self.shared.instance_id);
    }
}

/// `{"url","instanceId"}` to `D/endpoint.json`.
fn write_endpoint(data_dir: &Path, url: &str, instance_id: &str) -> Result<(), StartError> {
    let endpoint = ToolEndpoint { url: url.to_owned(), instance_id: instance_id.to_owned() };
    let endpoint_path = data_dir.join(crate::discovery::ENDPOINT_FILE);
    let written = files::write_json(&endpoint_path, &endpoint);
    Ok(written.map_err(FileError::on("write", endpoint_path))?)
}

impl Drop for ToolServer {
    fn drop(&mut self) {
        self.clean_up();
    }
}

impl std::fmt::Debug for ToolServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolServer")
            .field("url", &self.url)
            .field("instance_id", &self.shared.instance_id)
            .field("data_dir", &self.shared.data_dir)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests;
