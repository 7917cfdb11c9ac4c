//! `termsprawl-conformance`: checks a running termsprawl tool server against the protocol, from
//! the outside, the way an agent's client reaches it (`spec/protocol.md`).
//!
//! This crate owns the conformance rules: discovery as the client does it (§7.1), the files of
//! §2, the HTTP handling order and status matrix of §6, every validation step of §5 for every
//! operation the server lists (the probes are derived from [`termsprawl_protocol::operations`],
//! so a new operation is covered without a change here, and built on the server's own catalog as
//! its validator shows it — the arguments it requires, the members it lacks, the enum values it
//! accepts — so an earlier server is probed as itself), `session_info` (§6.5), the result
//! shapes of §4.5 per protocol version ([`shapes`], the one place that knows them; the version is
//! the one the catalog shows, [`Version`]: v1, 1.2 or 1.3), the terminals an agent can wait on of
//! 1.3 (`terminal_run`, `terminal_wait`, `terminal_kill`, cursors), the members and operations of
//! 1.4.0 and 1.5.0 where the catalog has them (the screen view, `until` change and input,
//! `keep`, `terminal_list`, `terminal_search`, `anyOf`, `regex`, `notify`), isolation between two
//! sessions and the declared headless rules. Every rule has a level ([`levels`], `spec/protocol.md` §10):
//! `protocol` (every server) or `strict` (ours only). [`run`] checks everything and returns a [`Report`]: one
//! [`Outcome`] per rule, `PASS`, `FAIL` or `SKIP`, with the spec section and, on failure, what was
//! sent and what came back.
//!
//! It must never
//! - send a byte anywhere but `127.0.0.1:<port>` of an endpoint URL that passed
//!   [`termsprawl_transport::discovery::validate_endpoint`];
//! - let a session token appear in a report, a line of output or a `Debug` string (probes carry
//!   it apart from what they show, and the [`report::Redactor`] cleans every recorded string);
//! - run a mutating operation without [`Options::mutating`], or leave a node it created behind
//!   when the protocol can remove it; it never calls an operation whose node cannot be removed;
//! - depend on a frontend or on `headless`: it judges servers, it is not one.
//!
//! Raw HTTP is written here on purpose (`raw`): the probes are requests a correct client never
//! sends. Start reading at [`run`], then `validation`.

mod calls;
mod catalog;
pub mod cli;
mod ctx;
mod files;
mod http;
mod info;
pub mod isolation;
pub mod levels;
mod operation_rules;
mod raw;
pub mod report;
mod run;
mod served;
pub mod shapes;
mod validation;
mod waits;

pub use ctx::Version;
pub use isolation::LINK_RULE;
pub use levels::{Level, level_of};
pub use report::{Outcome, Report, Verdict};
pub use run::{Options, STALL_LIMIT, run};
