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

/// Reads the person's input on a thread of its own (a blocking read must never hold the runtime).
pub(crate) fn spawn_input_reader() -> mpsc::UnboundedReceiver<Input> {
    let (sender, receiver) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut stdin = stdin.lock();
        let mut buffer = Vec::new();
        loop {
            buffer.clear();
            match stdin.read_until(b'\n', &mut buffer) {
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
    receiver
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
