//! The line editor of the chat's prompt (rustyline): line editing, the history kept per project,
//! a trailing `\` or Alt-Enter for a second line, and Tab completion of the front end's commands,
//! the agent's commands and the values `/mode`, `/model` and `/config` take (`Offers::complete`),
//! the session ids after `/resume `, and the project's files after `@` (`mentions::complete`).

#[cfg(test)]
mod tests;

use std::fmt::Write as _;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rustyline::completion::Completer;
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::FileHistory;
use rustyline::validate::Validator;
use rustyline::{
    Cmd, CompletionType, ConditionalEventHandler, Config, Context, Event, EventContext,
    EventHandler, ExternalPrinter, KeyCode, KeyEvent, Modifiers, RepeatCount,
};
use sha2::{Digest, Sha256};

use super::Input;
use crate::mentions;
use crate::offers::Offers;

/// How many entries a project's history keeps (older ones are dropped when it is written).
pub(crate) const HISTORY_LIMIT: usize = 1000;

/// Writes above the editor's prompt while it is shown, and straight to the terminal otherwise.
pub(crate) type Printer = Box<dyn ExternalPrinter + Send>;

/// The editor of the reader thread, and where its history is kept.
pub(super) struct Editor {
    lines: rustyline::Editor<Completion, FileHistory>,
    history: Option<PathBuf>,
    /// Set by Ctrl-C during a read.
    interrupted: Arc<AtomicBool>,
}

impl Editor {
    /// An editor on the terminal, with the project's history loaded from `history`; `None` when
    /// the terminal cannot be edited (rustyline reads an unsupported one plainly).
    pub(super) fn new(
        history: Option<PathBuf>,
        offers: Arc<Mutex<Offers>>,
    ) -> Option<(Editor, Printer)> {
        let config = Config::builder()
            .max_history_size(HISTORY_LIMIT)
            .ok()?
            .history_ignore_dups(true)
            .ok()?
            // A line typed with a leading space is never kept (a way to keep a secret out).
            .history_ignore_space(true)
            .auto_add_history(false)
            .completion_type(CompletionType::List)
            .build();
        let mut editor = rustyline::Editor::with_config(config).ok()?;
        editor.set_helper(Some(Completion { offers }));
        editor.bind_sequence(
            KeyEvent(KeyCode::Enter, Modifiers::ALT),
            EventHandler::Simple(Cmd::Newline),
        );
        // Ctrl-C ends the read as an accepted line marked interrupted, not as rustyline's
        // `Interrupted` error, which drops the keys read ahead with it (a second Ctrl-C typed at
        // once would be lost).
        let interrupted = Arc::new(AtomicBool::new(false));
        editor.bind_sequence(
            KeyEvent::ctrl('C'),
            EventHandler::Conditional(Box::new(CtrlC(Arc::clone(&interrupted)))),
        );
        if let Some(path) = &history {
            // A project's first run has no file yet.
            let _ = editor.load_history(path);
        }
        let printer: Printer = Box::new(editor.create_external_printer().ok()?);
        Some((Editor { lines: editor, history, interrupted }, printer))
    }

    /// One line read with the editor.
    pub(super) fn read(&mut self, prompt: &str) -> Input {
        self.interrupted.store(false, Ordering::SeqCst);
        match self.lines.readline(prompt) {
            Ok(_) if self.interrupted.swap(false, Ordering::SeqCst) => Input::Interrupt,
            Ok(line) => Input::Line(line),
            Err(ReadlineError::Interrupted) => Input::Interrupt,
            Err(_) => Input::Eof,
        }
    }

    /// Keeps `entry` in the history and appends it to the project's file (capped at
    /// [`HISTORY_LIMIT`] entries; another front end in the same project appends to it too).
    pub(super) fn remember(&mut self, entry: &str) {
        if !matches!(self.lines.add_history_entry(entry), Ok(true)) {
            return;
        }
        if let Some(path) = &self.history {
            let _ = self.lines.append_history(path);
        }
    }
}

/// Where the history of the project in `cwd` is kept: one file per project (its canonical
/// directory) in `$XDG_STATE_HOME/termsprawl/acp-history/` (by default
/// `~/.local/state/termsprawl/acp-history/`), named after the directory and a hash of its path;
/// `None` when neither variable names an absolute directory or the folder cannot be made.
pub(crate) fn history_path(cwd: &Path) -> Option<PathBuf> {
    let state = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|path| path.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|path| path.is_absolute())
                .map(|home| home.join(".local/state"))
        })?;
    let folder = state.join("termsprawl/acp-history");
    // Private: the history holds what the person typed.
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&folder).ok()?;
    let project = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    Some(folder.join(history_file_name(&project)))
}

/// `NAME-HASH.history`: the directory's last component (letters, digits, `-`, `_` and `.` kept,
/// at most 40 characters) and the first 16 hex digits of the SHA-256 of its whole path.
fn history_file_name(project: &Path) -> String {
    let digest = Sha256::digest(project.as_os_str().as_encoded_bytes());
    let hash = digest[..8].iter().fold(String::new(), |mut hash, byte| {
        let _ = write!(hash, "{byte:02x}");
        hash
    });
    let name: String = project
        .file_name()
        .map(|name| name.to_string_lossy())
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .take(40)
        .collect();
    let name = name.trim_start_matches('.');
    if name.is_empty() { format!("{hash}.history") } else { format!("{name}-{hash}.history") }
}

/// Ctrl-C: the read ends, and is reported as [`Input::Interrupt`].
struct CtrlC(Arc<AtomicBool>);

impl ConditionalEventHandler for CtrlC {
    fn handle(&self, _: &Event, _: RepeatCount, _: bool, _: &EventContext<'_>) -> Option<Cmd> {
        self.0.store(true, Ordering::SeqCst);
        Some(Cmd::AcceptLine)
    }
}

/// The editor's helper: Tab completion from what the session offers.
struct Completion {
    offers: Arc<Mutex<Offers>>,
}

impl Completer for Completion {
    type Candidate = String;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        let before = line.get(..pos).unwrap_or(line);
        let Ok(offers) = self.offers.lock() else {
            return Ok((pos, Vec::new()));
        };
        // `@PATH`: a file of the project (`crate::mentions`).
        let start = before.rfind(char::is_whitespace).map_or(0, |index| index + 1);
        if let (Some(word), Some(project)) =
            (before.get(start..).filter(|word| word.starts_with('@')), offers.project.clone())
        {
            drop(offers);
            return Ok((start, mentions::complete(&project, word)));
        }
        Ok(offers.complete(before))
    }
}

impl Hinter for Completion {
    type Hint = String;
}

impl Highlighter for Completion {
    /// The prompt in the person's style (`spec/acp.md` §2.17), when colour is allowed.
    fn highlight_prompt<'b, 's: 'b, 'p: 'b>(
        &'s self,
        prompt: &'p str,
        _: bool,
    ) -> std::borrow::Cow<'b, str> {
        crate::style::paint(crate::style::color_allowed(true), crate::style::Style::User, prompt)
            .into()
    }
}

impl Validator for Completion {}

impl rustyline::Helper for Completion {}
