//! The three standard streams a run reads and writes, so that tests can give their own.

use std::io::{self, Read, Write};

/// Where a run reads stdin and writes stdout and stderr.
///
/// All output of `termsprawlctl` goes through these; nothing else prints.
pub struct Streams<'a> {
    /// Standard input (the direct form's `-` argument).
    pub stdin: &'a mut dyn Read,
    /// Standard output: data only.
    pub stdout: &'a mut dyn Write,
    /// Standard error: messages.
    pub stderr: &'a mut dyn Write,
}

impl Streams<'_> {
    /// Writes one message line to stderr; a failure to write it is ignored, because there is
    /// nowhere left to report it.
    pub(crate) fn error_line(&mut self, line: &str) {
        let _ = writeln!(self.stderr, "{line}");
        let _ = self.stderr.flush();
    }

    /// Writes `text` to stdout and flushes it.
    pub(crate) fn write_stdout(&mut self, text: &[u8]) -> io::Result<()> {
        self.stdout.write_all(text)?;
        self.stdout.flush()
    }
}
