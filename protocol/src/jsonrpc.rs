//! The error codes of JSON-RPC 2.0, the framing both stdio frontends speak (`spec/mcp.md` §3.9,
//! `spec/acp.md` §1.12).
//!
//! Not part of the tool protocol: it lives here because this is the one crate that both `mcp` and
//! `acp` may depend on (a frontend never depends on another), and it is plain data like the rest.

/// A JSON-RPC error code. Any `i64` is one (a peer may send codes of its own); the constants are
/// the ones this workspace sends or reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ErrorCode(pub i64);

impl ErrorCode {
    /// `-32700`: the message is not JSON.
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// `-32600`: the message is not a valid request.
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// `-32601`: an unknown method, or one that was not advertised.
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// `-32602`: params that do not decode or are not acceptable.
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// `-32603`: anything else that went wrong while handling a valid request.
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// `-32800` (ACP): the request was cancelled with `$/cancel_request`.
    pub const REQUEST_CANCELLED: ErrorCode = ErrorCode(-32800);
    /// `-32000` (ACP): the agent needs authentication first.
    pub const AUTH_REQUIRED: ErrorCode = ErrorCode(-32000);
    /// `-32002` (ACP, and MCP's legacy era): a resource, such as a file or a resource URI, does
    /// not exist.
    pub const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);
    /// `-32022` (MCP 2026-07-28): a request whose protocol version the server does not speak.
    pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode(-32022);
}
