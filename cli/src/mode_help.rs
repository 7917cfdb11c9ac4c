//! The help of the program's modes that have no operation schema: `termsprawlctl help mcp`,
//! `help doctor`, `help call` and `mcp --help` (`acp`'s help lives with its parser in
//! `acp_command`).

/// The help of `termsprawlctl mcp`.
pub(crate) const MCP: &str = "\
Usage: termsprawlctl [--session FILE] mcp [--read-only] [--tools NAME,...] [--max-wait-ms MS]

Serves termsprawl's operations to an MCP host over stdin and stdout (JSON-RPC, one message a line).
stdout carries protocol messages only; diagnostics go to stderr.

Options:
  --read-only        list and serve only the operations that change nothing
  --tools NAME,...   list and serve only these operations
  --max-wait-ms MS   the longest terminal_wait or terminal_run, 0 to 600000 (default 50000,
                     inside the 60 s most hosts allow a tool call; raise it with the host's own
                     tool timeout: docs/hosts.md)

Register it in an MCP host as the command `termsprawlctl` with the arguments
`--session FILE mcp`; inside a termsprawl node TERMSPRAWL_SESSION_FILE names the session.
The session file belongs to one node and stops working when that node closes. A mistake found at
start (an unknown option or --tools name, no session, a session file that is missing, unreadable,
malformed or whose node is gone) serves nothing: every request gets an error that says what is
wrong and what to change, the same line goes to stderr, and the exit status is 2. Each host's
exact line: docs/hosts.md in the repository.
`termsprawlctl acp` hands it to ACP agents on its own.
";

/// The help of `termsprawlctl doctor`.
pub(crate) const DOCTOR: &str = "\
Usage: termsprawlctl [--session FILE] doctor

Checks the connection to termsprawl: calls session_info and prints the whole result as JSON.
Exit status: 0 the app answered ok; 1 it did not, or it could not be reached; 2 no session was found.
";

/// The help of `termsprawlctl call`.
pub(crate) const CALL: &str = "\
Usage: termsprawlctl [--session FILE] call OPERATION [JSON_ARGS]

Runs one operation with its arguments as one JSON value and prints the whole result as JSON.
Exit status: 0 the operation succeeded; 1 it failed; 2 the command line was not understood or no
session was found.
";
