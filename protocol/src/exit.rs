//! The exit statuses of `termsprawlctl` in every mode (`spec/shell-conventions.md` §10,
//! `spec/protocol.md` §8, `spec/mcp.md`, `spec/acp.md` §2.1): one number per meaning, so that a
//! model reading a status learns the same thing whichever frontend it ran.

use std::process::ExitCode;

/// How a run of `termsprawlctl` ended, as the process exit status.
///
/// The meanings are contract: a model reads them to decide what to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExitStatus(u8);

impl ExitStatus {
    /// 0: the operation succeeded and its result is on stdout, or help was printed; also when the
    /// server answered `ok` but writing the output failed afterwards (stderr says so).
    pub const OK: ExitStatus = ExitStatus(0);
    /// 1: the operation failed (`ok:false` from the server or a connection failure); stderr says why.
    pub const FAILED: ExitStatus = ExitStatus(1);
    /// 2: nothing was sent: the command line was not understood or no session was found.
    pub const USAGE: ExitStatus = ExitStatus(2);
    /// 3: reserved for a question that went unanswered; never produced today.
    pub const NEEDS_ANSWER: ExitStatus = ExitStatus(3);

    /// The numeric status.
    pub fn code(self) -> u8 {
        self.0
    }

    /// `OK` when `ok`, else `FAILED`.
    pub fn from_ok(ok: bool) -> ExitStatus {
        if ok { ExitStatus::OK } else { ExitStatus::FAILED }
    }
}

impl From<ExitStatus> for ExitCode {
    fn from(status: ExitStatus) -> ExitCode {
        ExitCode::from(status.0)
    }
}

#[cfg(test)]
mod tests;
