//! A termsprawl agent tool server without the desktop app.
//!
//! This crate owns the headless server: the same loopback tool server as the app (through
//! `termsprawl_transport::server`, which does the HTTP, auth, validation and discovery files), with
//! the app's operations implemented over
//! - a canvas model persisted in `D/canvas.json` ([`canvas`]): projects are folders, nodes have a
//!   kind, title, position, size and parent group;
//! - real tmux sessions `ts-<nodeId>` on the app's managed tmux server
//!   (`-S <userData>/tmux-sockets/termsprawl -f <userData>/tmux.conf`, `tmux`), so that
//!   `terminal_external` and the app's own tools attach to the same sessions;
//! - one owner of every terminal node below the canvas (`terminals`): opening shells and run
//!   nodes, the one answer to "does its program run, how did it end", retirement with the final
//!   record, and the node files' names; the operations reach tmux and the streams only through it
//!   (a tidy rule holds that);
//! - agent requests persisted in `D/tasks/` ([`tasks`]);
//! - the output stream and cursor of every terminal node in `D/terminals/` (`streams`), which
//!   `terminal_run`, `terminal_wait` and `terminal_read` with `since` read, and whose changes wake
//!   waiting calls, and which `terminal_search` searches with the texts and patterns of
//!   `matcher` (protocol 1.5.0);
//! - whether a terminal's foreground program is blocked reading it (`foreground`, from `/proc`
//!   only: protocol 1.5.0's `until: "input"`, `waitingForInput` and `inputBy`);
//! - per-project serialisation of operations with the queue expiry of `spec/protocol.md` §6.4
//!   ([`queue`]);
//! - a control channel on the Unix socket `D/headless.sock` ([`control`]) through which other
//!   processes launch agents, link them and close nodes.
//!
//! It must never serve browser operations (there is no browser: they fail with a clear message),
//! kill tmux sessions when it stops (agents outlive a restart, and their tokens keep working), log
//! or print a session token, overwrite a canvas file it cannot read, or let one agent read another
//! agent's terminal without a link or drive, attach to or close it at all (the rule
//! `agent-link-isolation` of `docs/headless-rules.md`, in `ops/access.rs`).
//!
//! Start reading at [`Server::start`], then `ops.rs` (the operations), `terminals.rs` (what they
//! ask of a terminal) and [`control`].

pub mod canvas;
mod config;
pub mod control;
mod engine;
mod error;
mod files;
mod foreground;
pub mod launch;
mod layout;
mod matcher;
mod notices;
mod ops;
pub mod queue;
mod server;
mod streams;
pub mod tasks;
mod terminals;
mod tmux;

pub use config::Config;
pub use error::{Error, messages};
pub use layout::Layout;
pub use server::Server;
