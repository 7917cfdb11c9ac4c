//! Where the agent's stderr goes, and what the person was told of it (`spec/acp.md` §2.1,
//! §2.21): a failure names the log once, a report that showed its last lines names it already,
//! and at the end a temporary log is removed when empty, else named unless a failure did.

use std::path::PathBuf;

use crate::options::AgentLog;
use crate::ui::Ui;

/// The agent's stderr log as the chat reports it.
#[derive(Debug)]
pub(super) struct StderrLog {
    /// The file the agent's stderr goes to, named after a failure.
    path: Option<PathBuf>,
    /// Whether `path` is the temporary file of this run (removed at the end when empty).
    temporary: bool,
    /// The report of the failure being shown named the log already (with its last lines): the
    /// hint after it does not name it again.
    named: bool,
    /// A failure named the log: the end does not name it again.
    told: bool,
}

impl StderrLog {
    pub(super) fn new(path: Option<PathBuf>, kind: &AgentLog) -> StderrLog {
        StderrLog { path, temporary: *kind == AgentLog::Temporary, named: false, told: false }
    }

    /// After a failure: where the agent's stderr went, if to a file (`spec/acp.md` §2.1), unless
    /// the failure's report named it already (once per failure, §2.21).
    pub(super) fn hint(&mut self, ui: &mut Ui) {
        if std::mem::take(&mut self.named) {
            return;
        }
        // An empty temporary log has nothing to read, and is removed at the end.
        let temporary = self.temporary;
        let worth =
            |path: &&PathBuf| !temporary || std::fs::metadata(path).is_ok_and(|m| m.len() > 0);
        if let Some(path) = self.path.as_ref().filter(worth) {
            ui.error(&format!("the agent's stderr is in {}", path.display()));
            self.told = true;
        }
    }

    /// A report named the log (`path`): with its last lines when `lines`, else saying the agent
    /// wrote nothing there. The hint after it is not given; the end names it no more when it
    /// showed lines.
    pub(super) fn named_in_report(&mut self, lines: bool) {
        self.named = true;
        self.told |= lines;
    }

    /// A report named the log while the agent may still answer: a later failure names it again.
    pub(super) fn forget_named(&mut self) {
        self.named = false;
    }

    /// At the end: the temporary log is removed when the agent wrote nothing to it, and named
    /// when it did (`spec/acp.md` §2.1).
    pub(super) fn tidy(&mut self, ui: &mut Ui) {
        let Some(path) = self.path.take().filter(|_| self.temporary) else {
            return;
        };
        match std::fs::metadata(&path) {
            Ok(metadata) if metadata.len() == 0 => {
                let _ = std::fs::remove_file(&path);
            }
            Ok(_) if self.told => {}
            Ok(_) => ui.error(&format!("the agent's stderr is kept in {}", path.display())),
            Err(_) => {}
        }
    }
}
