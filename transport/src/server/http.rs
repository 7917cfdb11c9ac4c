//! The HTTP side of the server: accepting connections, the receive deadline, and the handling
//! order of `spec/protocol.md` §6.2 with the status and body matrix of §6.3.
//!
//! hyper parses and writes HTTP/1.1. Around it, each connection has a driver that knows whether a
//! request is being received (and since when), is being processed, or the connection is idle: a
//! request not fully received within the receive timeout gets a raw `408` with an empty body and
//! `Connection: close`, whether it stalled in its head or in its body; an idle kept-alive
//! connection is closed after the idle timeout.

use std::convert::Infallible;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{AUTHORIZATION, CONNECTION, CONTENT_TYPE, HeaderValue, ORIGIN};
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use termsprawl_protocol::ToolResult;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tokio::task::JoinSet;
use tokio::time::Instant;

use super::{Caller, MAX_REQUEST_BYTES, Shared};

/// The answer to a request that did not arrive in time (`spec/protocol.md` §6.3).
const REQUEST_TIMEOUT: &[u8] =
    b"HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-length: 0\r\n\r\n";

/// How much of an oversized body is read and thrown away after `Request too large`, so that the
/// answer reaches a client that is still sending instead of being lost to a connection reset.
const DRAIN_LIMIT: usize = 1024 * 1024;

/// Accepts connections until the task is aborted; dropping the task's [`JoinSet`] then aborts
/// every connection.
pub(super) async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                // Accept errors (such as running out of descriptors) are transient.
                let Ok((stream, _)) = accepted else { continue };
                connections.spawn(serve_connection(stream, Arc::clone(&shared)));
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

/// Where a connection stands.
#[derive(Debug, Clone, Copy)]
enum Phase {
    /// A request is arriving (or, on a fresh connection, expected) since the instant.
    Receiving(Instant),
    /// The request has arrived; the handler runs. No deadline.
    Processing,
    /// Between requests since the instant.
    Idle(Instant),
}

/// The phase of one connection, shared by its stream, its service and its driver.
struct Progress {
    phase: Mutex<Phase>,
    changed: Notify,
}

impl Progress {
    fn new() -> Progress {
        Progress { phase: Mutex::new(Phase::Receiving(Instant::now())), changed: Notify::new() }
    }

    fn get(&self) -> Phase {
        *self.phase.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn set(&self, phase: Phase) {
        *self.phase.lock().unwrap_or_else(PoisonError::into_inner) = phase;
        self.changed.notify_one();
    }

    /// Bytes arrived: an idle connection starts receiving a request.
    fn bytes_arrived(&self) {
        if matches!(self.get(), Phase::Idle(_)) {
            self.set(Phase::Receiving(Instant::now()));
        }
    }

    /// Bytes of a response left: an idle connection is making progress, its clock restarts.
    fn bytes_written(&self) {
        if matches!(self.get(), Phase::Idle(_)) {
            self.set(Phase::Idle(Instant::now()));
        }
    }

    /// hyper has parsed a head. A request pipelined behind the previous one may have been read
    /// while that one was processed; its clock starts now.
    fn head_parsed(&self) {
        if !matches!(self.get(), Phase::Receiving(_)) {
            self.set(Phase::Receiving(Instant::now()));
        }
    }
}

/// A TCP stream that reports arriving bytes to the connection's [`Progress`].
struct TrackedStream {
    stream: TcpStream,
    progress: Arc<Progress>,
}

impl AsyncRead for TrackedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.stream).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.progress.bytes_arrived();
        }
        polled
    }
}

impl AsyncWrite for TrackedStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.stream).poll_write(cx, buf);
        if matches!(polled, Poll::Ready(Ok(written)) if written > 0) {
            self.progress.bytes_written();
        }
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        if matches!(polled, Poll::Ready(Ok(written)) if written > 0) {
            self.progress.bytes_written();
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// Serves one connection until it closes, times out receiving a request, or idles too long.
async fn serve_connection(stream: TcpStream, shared: Arc<Shared>) {
    let _ = stream.set_nodelay(true);
    let (receive_timeout, idle_timeout) =
        (shared.config.receive_timeout, shared.config.idle_timeout);
    let progress = Arc::new(Progress::new());
    let io = TokioIo::new(TrackedStream { stream, progress: Arc::clone(&progress) });
    let service = {
        let progress = Arc::clone(&progress);
        service_fn(move |request| {
            let shared = Arc::clone(&shared);
            let progress = Arc::clone(&progress);
            async move {
                progress.head_parsed();
                let response = respond(request, &shared, &progress).await;
                progress.set(Phase::Idle(Instant::now()));
                Ok::<_, Infallible>(response)
            }
        })
    };
    // Half-close: a client that shuts down its sending side after the request still gets the answer.
    let mut connection =
        hyper::server::conn::http1::Builder::new().half_close(true).serve_connection(io, service);
    loop {
        let notified = progress.changed.notified();
        let deadline = match progress.get() {
            Phase::Receiving(since) => since + receive_timeout,
            Phase::Idle(since) => since + idle_timeout,
            Phase::Processing => far_future(),
        };
        tokio::select! {
            _ = &mut connection => return,
            () = notified => {}
            () = tokio::time::sleep_until(deadline) => {
                // The phase may have changed since the deadline was computed: decide on the
                // current one.
                let now = Instant::now();
                match progress.get() {
                    Phase::Receiving(since) if since + receive_timeout <= now => {
                        let parts = connection.into_parts();
                        answer_request_timeout(parts.io.into_inner().stream).await;
                        return;
                    }
                    Phase::Idle(since) if since + idle_timeout <= now => return,
                    _ => {}
                }
            }
        }
    }
}

fn far_future() -> Instant {
    Instant::now() + Duration::from_hours(365 * 24)
}

/// Writes the raw 408, half-closes, and reads what the client still sends for a moment, so that
/// closing does not reset the connection before the client has read the answer.
async fn answer_request_timeout(mut stream: TcpStream) {
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        stream.write_all(REQUEST_TIMEOUT).await?;
        stream.shutdown().await?;
        let mut sink = [0_u8; 4096];
        while stream.read(&mut sink).await? > 0 {}
        Ok::<(), io::Error>(())
    })
    .await;
}

/// The handling order of `spec/protocol.md` §6.2.
async fn respond(
    request: Request<Incoming>,
    shared: &Shared,
    progress: &Progress,
) -> Response<Full<Bytes>> {
    // 1. Origin: the only browser-CSRF defence.
    if request.headers().get_all(ORIGIN).iter().any(|origin| !origin.is_empty()) {
        return failure(StatusCode::FORBIDDEN, "Unsupported request");
    }
    // 2. Auth, before routing.
    let presented = request.headers().get(AUTHORIZATION).map_or(&b""[..], HeaderValue::as_bytes);
    let presented = presented.strip_prefix(b"Bearer ").unwrap_or(presented);
    let Some(session) = shared.sessions.authenticate(presented) else {
        return failure(StatusCode::UNAUTHORIZED, super::UNKNOWN_SESSION);
    };
    // 3. Routing: the request target up to the first `?` must be `/call`.
    let target = request.uri().path_and_query().map_or("", |target| target.as_str());
    let path = target.split_once('?').map_or(target, |(path, _)| path);
    if request.method() != Method::POST || request.uri().scheme().is_some() || path != "/call" {
        return failure(StatusCode::NOT_FOUND, "Unsupported request");
    }
    // 4. Body, capped while it streams.
    let body = match read_body(request.into_body()).await {
        Ok(body) => body,
        Err(BodyError::TooLarge { drained }) => {
            let mut response = failure(StatusCode::BAD_REQUEST, "Request too large");
            if !drained {
                response.headers_mut().insert(CONNECTION, HeaderValue::from_static("close"));
            }
            return response;
        }
        Err(BodyError::Broken(error)) => return failure(StatusCode::BAD_REQUEST, &error),
    };
    progress.set(Phase::Processing);
    // 5. Parse.
    let value: serde_json::Value = match serde_json::from_slice(&body) {
        Ok(value) => value,
        Err(error) => return failure(StatusCode::BAD_REQUEST, &error.to_string()),
    };
    // 6. Validate, then invoke.
    let request = match termsprawl_protocol::validate(&value) {
        Ok(request) => request,
        Err(error) => return failure(StatusCode::BAD_REQUEST, &error.to_string()),
    };
    let caller = Caller::new(
        session,
        shared.sessions.clone(),
        Arc::clone(&shared.instance_id),
        Arc::clone(&shared.data_dir),
    );
    let handler = Arc::clone(&shared.handler);
    // A task of its own: a panic is a failed operation, and a client that goes away does not
    // cancel an operation that has started.
    let outcome = tokio::spawn(async move { handler.handle(caller, request).await }).await;
    match outcome {
        Ok(result @ ToolResult::Success { .. }) => json(StatusCode::OK, &result),
        Ok(ToolResult::Failure { error }) if !error.is_empty() => {
            failure(StatusCode::BAD_REQUEST, &error)
        }
        Ok(ToolResult::Failure { .. }) | Err(_) => failure(StatusCode::BAD_REQUEST, "Tool failed"),
    }
}

enum BodyError {
    /// More than [`MAX_REQUEST_BYTES`]; `drained` when the rest of the body was read and dropped.
    TooLarge { drained: bool },
    /// The connection failed while the body arrived.
    Broken(String),
}

async fn read_body(mut body: Incoming) -> Result<Vec<u8>, BodyError> {
    let mut bytes = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|error| BodyError::Broken(error.to_string()))?;
        let Ok(data) = frame.into_data() else { continue };
        if data.len() > MAX_REQUEST_BYTES - bytes.len() {
            let mut dropped = bytes.len() + data.len() - MAX_REQUEST_BYTES;
            while dropped <= DRAIN_LIMIT {
                match body.frame().await {
                    None => return Err(BodyError::TooLarge { drained: true }),
                    Some(Ok(frame)) => {
                        dropped += frame.data_ref().map_or(0, Bytes::len);
                    }
                    Some(Err(_)) => break,
                }
            }
            return Err(BodyError::TooLarge { drained: false });
        }
        bytes.extend_from_slice(&data);
    }
    Ok(bytes)
}

fn failure(status: StatusCode, error: &str) -> Response<Full<Bytes>> {
    json(status, &ToolResult::failure(error))
}

fn json(status: StatusCode, result: &ToolResult) -> Response<Full<Bytes>> {
    let body = serde_json::to_vec(result)
        .unwrap_or_else(|_| br#"{"ok":false,"error":"Tool failed"}"#.to_vec());
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}
