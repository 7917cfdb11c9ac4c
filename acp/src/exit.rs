//! The exit codes of `termsprawlctl acp` (`spec/acp.md` §2.1), documented in one place.

use std::process::ExitCode;

/// How `termsprawlctl acp` ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// 0: a `--prompt` turn ended with `end_turn`, or the person ended an interactive session.
    Success,
    /// 1: another stop reason, the agent exited or broke the protocol, authentication failed, or the
    /// agent ignored a cancel.
    Failure,
    /// 2: a usage error, or the agent could not be started.
    Usage,
}

impl ExitStatus {
    /// The numeric exit code.
    pub fn code(self) -> u8 {
        termsprawl_protocol::ExitStatus::from(self).code()
    }
}

impl From<ExitStatus> for termsprawl_protocol::ExitStatus {
    fn from(status: ExitStatus) -> termsprawl_protocol::ExitStatus {
        match status {
            ExitStatus::Success => termsprawl_protocol::ExitStatus::OK,
            ExitStatus::Failure => termsprawl_protocol::ExitStatus::FAILED,
            ExitStatus::Usage => termsprawl_protocol::ExitStatus::USAGE,
        }
    }
}

impl From<ExitStatus> for ExitCode {
    fn from(status: ExitStatus) -> ExitCode {
        ExitCode::from(status.code())
    }
}
