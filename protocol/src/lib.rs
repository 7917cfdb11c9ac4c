//! The termsprawl agent tool protocol, as data: the single source of truth for every frontend.
//!
//! This crate owns
//! - the wire types ([`ToolRequest`], [`ToolResult`], [`ToolSession`], [`ToolEndpoint`], ...) with
//!   their exact JSON member names and order (`spec/protocol.md` §1);
//! - the operation table of the current protocol version ([`operations`]), whose input schemas are
//!   generated with `schemars` from one typed argument struct per operation ([`args`]) and then
//!   normalised to the contract's exact shape, together with the annotations and descriptions;
//! - one typed answer per operation's result ([`results`]: a server builds its answers with them
//!   and a client reads them with them, so a member name is spelled once), with the contract's
//!   limits, the one table of signal names and the joining of chained waits, and their JSON
//!   Schemas derived from the types with `schemars` ([`results::schemas`], for the TypeScript
//!   bindings);
//! - the guide texts ([`Topic`], [`guide`]);
//! - the server's request validation ([`validate`]), with the contract's exact messages;
//! - the protocol version ([`PROTOCOL_VERSION`]);
//! - the small rules of the contract that several crates apply: the node-id pattern
//!   ([`is_valid_node_id`]), the key names of `terminal_input` ([`keys`]), quoting for `sh` ([`shell`]), the exit statuses of `termsprawlctl`
//!   ([`ExitStatus`]) and the JSON-RPC error codes of the stdio frontends ([`jsonrpc`]).
//!
//! It must never do I/O, start an async runtime or know about HTTP: it is plain data and pure
//! functions, so that the client, the CLI, the MCP bridge, the server half and the docs generator
//! all derive from the same description and cannot drift apart.
//!
//! Start reading at [`operations`], then [`validate`].

pub mod args;
mod exit;
mod guides;
pub mod jsonrpc;
pub mod keys;
mod node_id;
mod operations;
pub mod pattern;
pub mod results;
mod schema;
pub mod shell;
mod types;
mod validate;

pub use exit::ExitStatus;
pub use guides::{INSTRUCTIONS_RULES_CHARS, MAX_INSTRUCTIONS_CHARS, Topic, guide, instructions};
pub use node_id::{MAX_NODE_ID_LEN, is_valid_node_id};
pub use operations::{
    ANNOTATION_RULES, Annotations, Call, CallError, McpRevision, Operation, Param, ParamKind,
    catalog_json, operation, operations,
};
pub use types::{
    IntegrationState, IntegrationStatus, SessionToken, ToolEndpoint, ToolIdentity, ToolRequest,
    ToolResult, ToolSession,
};
pub use validate::{
    DEFAULT_SEARCH_LIMIT, MAX_ARRAY_ITEMS, MAX_CURSOR, MAX_ITEM_UTF16, MAX_NUMBER_MAGNITUDE,
    MAX_SEARCH_CONTEXT, MAX_SEARCH_LIMIT, MAX_STRING_UTF16, MAX_WAIT_TEXTS, Validated,
    ValidationError, validate,
};

/// The version of the protocol this crate describes, in semver.
///
/// A major bump marks a breaking change of the operation table (see `cargo xtask protocol-diff`
/// and `docs/protocol-changelog.md`).
pub const PROTOCOL_VERSION: &str = "1.5.0";
