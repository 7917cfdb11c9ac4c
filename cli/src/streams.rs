//! The three standard streams a run reads and writes, so that tests can give their own.

use std::io::{self, Read, Write};

use termsprawl_transport::long_wait::WaitProgress;

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
    /// Whether stderr is a terminal: a long wait of the direct form then shows its progress there,
    /// one line updated in place.
    pub stderr_is_terminal: bool,
}

impl Streams<'_> {
    /// Writes one message line to stderr; a failure to write it is ignored, because there is
    /// nowhere left to report it.
    pub(crate) fn error_line(&mut self, line: &str) {
        let _ = writeln!(self.stderr, "{line}");
        let _ = self.stderr.flush();
    }

    /// Shows a long wait's progress on stderr: on a terminal one line rewritten in place, else
    /// one line per report. Failures to write are ignored.
    pub(crate) fn progress_line(&mut self, progress: &WaitProgress) {
        let message = progress.message();
        let _ = if self.stderr_is_terminal {
            write!(self.stderr, "\r{message}\x1b[K")
        } else {
            writeln!(self.stderr, "{message}")
        };
        let _ = self.stderr.flush();
    }

    /// Ends the progress line in place on a terminal, so that what follows starts clean.
    pub(crate) fn end_progress(&mut self) {
        if self.stderr_is_terminal {
            let _ = write!(self.stderr, "\r\x1b[K");
            let _ = self.stderr.flush();
        }
    }

    /// Writes `text` to stdout and flushes it.
    pub(crate) fn write_stdout(&mut self, text: &[u8]) -> io::Result<()> {
        self.stdout.write_all(text)?;
        self.stdout.flush()
    }
}
