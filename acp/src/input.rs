//! What reaches the front end from the person: input lines, read on a thread of their own, and
//! the signals (Ctrl-C, SIGTERM, SIGHUP).
//!
//! On a terminal (stdin and stdout both), the line at the chat's prompt is read with a line
//! editor (`editor.rs`: rustyline, with history kept per project and Tab completion); every other
//! line (a permission answer, the login menu, a line typed during a turn) is read in the
//! terminal's own cooked mode as before, so that the agent's streamed output and Ctrl-C as a
//! signal behave as they always did. Elsewhere (a pipe, a file) every line is read plainly.

mod editor;

use std::io::{BufRead, Read, Write};
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, Sender, TryRecvError};
use std::sync::{Arc, Mutex};

use rustix::event::{PollFd, PollFlags, poll};
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::mpsc;

use crate::offers::Offers;
pub(crate) use editor::{Printer, history_path};

/// A line of the person's input, or its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Input {
    Line(String),
    /// A run notice that termsprawl typed into this node (`spec/protocol.md` §4.9), not the
    /// person's words, with what the person had typed before it arrived (`unfinished`, not sent).
    Notice {
        notice: String,
        unfinished: String,
    },
    /// Ctrl-C typed at the line editor's prompt (the editor reads it as a key, not a signal).
    Interrupt,
    Eof,
}

/// The line editor of the prompt, used when stdin and stdout are a terminal and the chat is
/// interactive.
#[derive(Debug, Clone, Default)]
pub(crate) struct LineEditor {
    /// The project's history file (`history_path`), if one can be kept.
    pub(crate) history: Option<PathBuf>,
}

/// How the pending read reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Plain,
    Edit,
}

/// What the chat asks of the reader thread.
#[derive(Debug)]
enum Request {
    /// Read one line plainly.
    Plain,
    /// Read one line with the editor, showing this prompt.
    Edit(String),
    /// Turn the plain read under way into an edited one with this prompt; ignored when that read
    /// has already ended (its line is on its way to the chat, which then receives it).
    Switch(String),
    /// Keep this entry in the project's history.
    Remember(String),
}

/// The person's input lines, read on a thread of its own (a blocking read must never hold the
/// runtime), one line per request: the thread reads only while someone waits for a line, so a
/// program run in the person's terminal (a terminal login) gets what is typed meanwhile.
pub(crate) struct InputReader {
    lines: mpsc::UnboundedReceiver<Input>,
    requests: Sender<Request>,
    /// Wakes a plain read on a terminal, so that it can turn into an edited one.
    wake: Option<std::io::PipeWriter>,
    /// The read under way (its line has not been received).
    reading: Option<Kind>,
    /// What Tab completes, shared with the editor (`None` without an editor).
    offers: Option<Arc<Mutex<Offers>>>,
    /// The terminal's settings before the editor ran, restored at the end if a read is left.
    saved: Option<rustix::termios::Termios>,
}

impl std::fmt::Debug for InputReader {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("InputReader")
            .field("reading", &self.reading)
            .field("edits", &self.offers.is_some())
            .finish_non_exhaustive()
    }
}

impl InputReader {
    /// Starts the reader thread; nothing is read before the first request. With `editor` (stdin
    /// and stdout are a terminal), the prompt's lines are edited, with the history in the file
    /// given, if any; the printer it returns writes above the prompt while one is shown.
    pub(crate) fn spawn(editor: Option<LineEditor>) -> (InputReader, Option<Printer>) {
        let (sender, lines) = mpsc::unbounded_channel();
        let (requests, requested) = std::sync::mpsc::channel::<Request>();
        let saved = editor.as_ref().and_then(|_| rustix::termios::tcgetattr(std::io::stdin()).ok());
        let wake_pipe = editor.as_ref().and_then(|_| std::io::pipe().ok());
        let (wake_reader, wake) = match wake_pipe {
            Some((reader, writer)) => (Some(reader), Some(writer)),
            None => (None, None),
        };
        let offers = Arc::new(Mutex::new(Offers::default()));
        let (started_sender, started) = std::sync::mpsc::channel();
        let shared = Arc::clone(&offers);
        std::thread::spawn(move || {
            let editor = editor.and_then(|editor| editor::Editor::new(editor.history, shared));
            let (editor, printer) = match editor {
                Some((editor, printer)) => (Some(editor), Some(printer)),
                None => (None, None),
            };
            let _ = started_sender.send(printer);
            read_loop(&requested, wake_reader.as_ref(), editor, &sender);
        });
        let printer = started.recv().ok().flatten();
        let edits = printer.is_some();
        let reader = InputReader {
            lines,
            requests,
            wake: if edits { wake } else { None },
            reading: None,
            offers: edits.then_some(offers),
            saved: if edits { saved } else { None },
        };
        (reader, printer)
    }

    /// Whether the prompt's lines are read with the line editor.
    pub(crate) fn edits(&self) -> bool {
        self.offers.is_some()
    }

    /// Starts an edited read of the prompt's line (a plain read under way becomes one); without
    /// an editor, a plain read.
    pub(crate) fn start_edit(&mut self, prompt: &str) {
        match (self.reading, self.edits()) {
            (Some(Kind::Plain), true) => self.start(Request::Switch(prompt.to_owned()), Kind::Edit),
            (None, true) => self.start(Request::Edit(prompt.to_owned()), Kind::Edit),
            (None, false) => self.start(Request::Plain, Kind::Plain),
            (Some(_), _) => {}
        }
    }

    /// Whether an edited read is under way: the editor shows its prompt, and output goes through
    /// its printer.
    pub(crate) fn editing(&self) -> bool {
        self.reading == Some(Kind::Edit)
    }

    fn start(&mut self, request: Request, kind: Kind) {
        if self.requests.send(request).is_err() {
            return;
        }
        if let Some(wake) = self.wake.as_mut() {
            let _ = wake.write_all(b"w");
        }
        self.reading = Some(kind);
    }

    /// The next line, or the end of input (`None` once the reader is gone); a plain read is
    /// started if none is under way. Cancel-safe: a read started by a dropped call is received by
    /// the next one.
    ///
    /// A line that ends with a run notice (termsprawl types one into the node when a command an
    /// agent started with `notify` ends) is [`Input::Notice`], never a line of the person's.
    pub(crate) async fn recv(&mut self) -> Option<Input> {
        if self.reading.is_none() {
            self.start(Request::Plain, Kind::Plain);
        }
        if self.reading.is_none() {
            return self.lines.recv().await.map(notice_apart);
        }
        let input = self.lines.recv().await;
        self.reading = None;
        input.map(notice_apart)
    }

    /// Keeps a prompt the person typed in the project's history (never a permission answer or a
    /// login choice: the chat calls this for its prompts and commands only).
    pub(crate) fn remember(&mut self, entry: &str) {
        if self.edits() && !entry.trim().is_empty() {
            let _ = self.requests.send(Request::Remember(entry.to_owned()));
            if let Some(wake) = self.wake.as_mut() {
                let _ = wake.write_all(b"w");
            }
        }
    }

    /// What Tab completes from now on: the session's modes, options and commands.
    pub(crate) fn offer(&self, offers: &Offers) {
        if let Some(shared) = &self.offers
            && let Ok(mut shared) = shared.lock()
            && *shared != *offers
        {
            shared.clone_from(offers);
        }
    }

    /// At the end: a terminal left in the editor's raw mode (the front end ends while its prompt
    /// is shown) gets its settings back.
    pub(crate) fn restore_terminal(&mut self) {
        if !self.editing() {
            return;
        }
        if let Some(saved) = &self.saved {
            let _ = rustix::termios::tcsetattr(
                std::io::stdin(),
                rustix::termios::OptionalActions::Now,
                saved,
            );
            // The editor turned bracketed paste on.
            let mut stdout = std::io::stdout().lock();
            let _ = stdout.write_all(b"\x1b[?2004l\r\n");
            let _ = stdout.flush();
        }
    }
}

/// The reader thread: one read per request, until the input ends or the chat is gone.
/// `input`, with a line that ends with a run notice turned into [`Input::Notice`].
fn notice_apart(input: Input) -> Input {
    match input {
        Input::Line(line) => match termsprawl_protocol::results::run_notice_at(&line) {
            Some(start) => Input::Notice {
                notice: line[start..].to_owned(),
                unfinished: line[..start].to_owned(),
            },
            None => Input::Line(line),
        },
        other => other,
    }
}

fn read_loop(
    requested: &Receiver<Request>,
    wake: Option<&std::io::PipeReader>,
    mut editor: Option<editor::Editor>,
    lines: &mpsc::UnboundedSender<Input>,
) {
    let mut next: Option<Request> = None;
    loop {
        let request = match next.take() {
            Some(request) => request,
            None => match requested.recv() {
                Ok(request) => request,
                Err(_) => return,
            },
        };
        let input = match (request, editor.as_mut()) {
            (Request::Remember(entry), Some(editor)) => {
                editor.remember(&entry);
                continue;
            }
            // The plain read it would have turned had ended: its line was sent.
            (Request::Remember(_), None) | (Request::Switch(_), _) => continue,
            (Request::Edit(prompt), Some(editor)) => editor.read(&prompt),
            (Request::Plain | Request::Edit(_), _) => match wake {
                Some(wake) => match plain_or_switch(requested, wake, editor.as_mut()) {
                    Ok(input) => input,
                    Err(switch) => {
                        next = Some(switch);
                        continue;
                    }
                },
                None => plain_line(),
            },
        };
        let end = input == Input::Eof;
        if lines.send(input).is_err() || end {
            return;
        }
    }
}

/// One line read plainly from stdin.
fn plain_line() -> Input {
    let mut buffer = Vec::new();
    match std::io::stdin().lock().read_until(b'\n', &mut buffer) {
        Ok(0) | Err(_) => Input::Eof,
        Ok(_) => {
            let mut line = String::from_utf8_lossy(&buffer).into_owned();
            while line.ends_with('\n') || line.ends_with('\r') {
                line.pop();
            }
            Input::Line(line)
        }
    }
}

/// A plain read on a terminal that gives way to an edited read when the chat asks for one
/// (`Err` with that request); entries to remember are kept meanwhile. In the terminal's cooked
/// mode stdin is readable only once a whole line (or the end of input) was typed, so giving way
/// loses nothing: what was typed so far stays in the terminal's buffer for the editor.
fn plain_or_switch(
    requested: &Receiver<Request>,
    wake: &std::io::PipeReader,
    mut editor: Option<&mut editor::Editor>,
) -> Result<Input, Request> {
    let stdin = std::io::stdin();
    loop {
        let (input_ready, woken) = {
            let mut fds = [PollFd::new(&stdin, PollFlags::IN), PollFd::new(wake, PollFlags::IN)];
            match poll(&mut fds, None) {
                Ok(_) => (!fds[0].revents().is_empty(), !fds[1].revents().is_empty()),
                Err(rustix::io::Errno::INTR) => continue,
                Err(_) => return Ok(Input::Eof),
            }
        };
        if woken {
            let mut bytes = [0_u8; 64];
            let _ = (&*wake).read(&mut bytes);
            loop {
                match requested.try_recv() {
                    Ok(Request::Remember(entry)) => {
                        if let Some(editor) = editor.as_deref_mut() {
                            editor.remember(&entry);
                        }
                    }
                    Ok(Request::Plain) => {}
                    Ok(Request::Edit(prompt) | Request::Switch(prompt)) => {
                        return Err(Request::Edit(prompt));
                    }
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => return Ok(Input::Eof),
                }
            }
        }
        if input_ready {
            return Ok(plain_line());
        }
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
