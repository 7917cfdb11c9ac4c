//! What reaches the front end from the person: input lines, read on a thread of their own, and
//! the signals (Ctrl-C, SIGTERM, SIGHUP).

use std::io::BufRead;

use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::mpsc;

/// A line of the person's input, or its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Input {
    Line(String),
    Eof,
}

/// The person's input lines, read on a thread of its own (a blocking read must never hold the
/// runtime), one line per request: the thread reads only while someone waits for a line, so a
/// program run in the person's terminal (a terminal login) gets what is typed meanwhile.
#[derive(Debug)]
pub(crate) struct InputReader {
    lines: mpsc::UnboundedReceiver<Input>,
    permits: std::sync::mpsc::Sender<()>,
    /// A read is under way (its line has not been received).
    reading: bool,
}

impl InputReader {
    /// Starts the reader thread; nothing is read before the first [`InputReader::recv`].
    pub(crate) fn spawn() -> InputReader {
        let (sender, lines) = mpsc::unbounded_channel();
        let (permits, permitted) = std::sync::mpsc::channel::<()>();
        std::thread::spawn(move || {
            let stdin = std::io::stdin();
            let mut buffer = Vec::new();
            while permitted.recv().is_ok() {
                buffer.clear();
                match stdin.lock().read_until(b'\n', &mut buffer) {
                    Ok(0) | Err(_) => {
                        let _ = sender.send(Input::Eof);
                        return;
                    }
                    Ok(_) => {
                        let mut line = String::from_utf8_lossy(&buffer).into_owned();
                        while line.ends_with('\n') || line.ends_with('\r') {
                            line.pop();
                        }
                        if sender.send(Input::Line(line)).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        InputReader { lines, permits, reading: false }
    }

    /// The next line, or the end of input (`None` once the reader is gone). Cancel-safe: a read
    /// started by a dropped call is received by the next one.
    pub(crate) async fn recv(&mut self) -> Option<Input> {
        if !self.reading {
            if self.permits.send(()).is_err() {
                return self.lines.recv().await;
            }
            self.reading = true;
        }
        let input = self.lines.recv().await;
        self.reading = false;
        input
    }
}

/// The signals that reach the front end: Ctrl-C, and the ones that end it.
pub(crate) struct Signals {
    pub(crate) interrupt: Signal,
    pub(crate) terminate: Signal,
    pub(crate) hangup: Signal,
}

impl Signals {
    pub(crate) fn new() -> std::io::Result<Signals> {
        Ok(Signals {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
            hangup: signal(SignalKind::hangup())?,
        })
    }
}

/// Waits for SIGTERM or SIGHUP.
pub(crate) async fn termination(terminate: &mut Signal, hangup: &mut Signal) {
    tokio::select! {
        _ = terminate.recv() => {}
        _ = hangup.recv() => {}
    }
}
