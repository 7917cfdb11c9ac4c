//! Who answers tool calls: the [`ToolCaller`] seam, and [`SessionCaller`], which forwards each call
//! to the app's loopback tool server through the client contract (`spec/protocol.md` §7).

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;

use termsprawl_protocol::{ToolRequest, ToolResult};
use termsprawl_transport::Client;
use termsprawl_transport::long_wait::{self, ProgressSink, WaitOptions};

/// The answer of a [`ToolCaller`], to come.
pub type CallFuture<'a> = Pin<Box<dyn Future<Output = ToolResult> + Send + 'a>>;

/// Answers one tool call. Never fails: every problem is an `ok:false` result.
///
/// The bridge calls it for `session_info` during `initialize` and for every `tools/call`, from
/// concurrent tasks; a call whose request is cancelled is dropped before it finishes.
pub trait ToolCaller: Send + Sync + 'static {
    /// Performs one call.
    fn call(&self, request: ToolRequest) -> CallFuture<'_>;

    /// Performs one `tools/call`: a `terminal_wait` or `terminal_run` longer than a server's turn
    /// is chained up to `options`' longest wait, reporting to `progress`
    /// (`termsprawl_transport::long_wait`). By default one [`ToolCaller::call`].
    fn call_waiting<'a>(
        &'a self,
        request: ToolRequest,
        _options: WaitOptions,
        _progress: Option<ProgressSink<'a>>,
    ) -> CallFuture<'a> {
        self.call(request)
    }

    /// Guidance to put beside a failed call (stderr, JSON-RPC `data`), when the caller knows
    /// more than the failure says: for [`SessionCaller`], that the session file is gone. None by
    /// default.
    fn diagnose(&self) -> Option<String> {
        None
    }
}

/// The real caller: the session file plus the transport client. The session file and
/// `endpoint.json` are read again on every call, so a running bridge survives an app restart.
#[derive(Debug, Clone)]
pub struct SessionCaller {
    session_file: PathBuf,
    client: Client,
}

impl SessionCaller {
    /// A caller for `session_file` with the default client (45 s per call).
    pub fn new(session_file: impl Into<PathBuf>) -> SessionCaller {
        SessionCaller::with_client(session_file, Client::default())
    }

    /// A caller for `session_file` with `client` (for example one with a shorter timeout).
    pub fn with_client(session_file: impl Into<PathBuf>, client: Client) -> SessionCaller {
        SessionCaller { session_file: session_file.into(), client }
    }

    /// The session file the calls use.
    pub fn session_file(&self) -> &Path {
        &self.session_file
    }
}

impl ToolCaller for SessionCaller {
    fn call(&self, request: ToolRequest) -> CallFuture<'_> {
        Box::pin(async move { self.client.call(&self.session_file, &request).await })
    }

    fn call_waiting<'a>(
        &'a self,
        request: ToolRequest,
        options: WaitOptions,
        progress: Option<ProgressSink<'a>>,
    ) -> CallFuture<'a> {
        Box::pin(async move {
            long_wait::call_waiting(&self.client, &self.session_file, &request, &options, progress)
                .await
        })
    }

    fn diagnose(&self) -> Option<String> {
        termsprawl_transport::discovery::session_gone(&self.session_file)
    }
}
