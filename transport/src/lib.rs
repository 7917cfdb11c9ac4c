//! Discovery files and the loopback HTTP wire of the termsprawl agent tool protocol.
//!
//! This crate owns
//! - **discovery** ([`discovery`]): where a session file's `endpoint.json` is, what a session file
//!   and an endpoint file must contain, and the one check that decides whether a URL may receive
//!   the session token ([`discovery::validate_endpoint`]);
//! - **the client** ([`Client`], [`call`], [`call_blocking`]): the one function every frontend
//!   (CLI, MCP bridge) calls to reach the app, `spec/protocol.md` §7;
//! - **long waits** ([`long_wait::call_waiting`]): the one loop that chains a `terminal_wait` or
//!   `terminal_run` longer than a server's 30 s into turns and joins their answers (protocol
//!   1.5.0, `spec/protocol.md` §7.3), used by `termsprawlctl` and its MCP bridge;
//! - **the server half** (module `server`, cargo feature `server`): a loopback tool server with
//!   the app's discovery layout and HTTP behaviour (`spec/protocol.md` §2, §6), used by tests of
//!   every crate and as the base of the headless server (the fake app built on it lives in
//!   `termsprawl-test-support`).
//!
//! - **the one poison-ignoring lock** ([`sync::lock`]) every crate above it uses.
//!
//! It must never
//! - send the session token anywhere but `http://127.0.0.1:<port>/call`;
//! - retry a call (a chained wait sends `terminal_wait` again with the next cursor, never the
//!   request it chains, so a `terminal_run` is sent once), or follow a redirect;
//! - return an error from a call, or let the token appear in a result, error or `Debug` output;
//! - cache discovery: every call re-reads the session file and `endpoint.json`, so that running
//!   agents survive an app restart.
//!
//! Start reading at [`Client::call`], then [`discovery`].

mod client;
pub mod discovery;
pub mod long_wait;
#[cfg(feature = "server")]
pub mod server;
pub mod sync;

pub use client::{
    Client, DEFAULT_TIMEOUT, MAX_RESPONSE_BYTES, UNAVAILABLE_PREFIX, call, call_blocking,
    connection_unavailable,
};
