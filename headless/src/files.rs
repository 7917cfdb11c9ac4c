//! The files of a terminal node in `agent-tools/terminals/`, named once: the stream the pane's
//! output is piped into and the marks that tell how its program is doing. Everything that writes,
//! watches or removes them ([`crate::streams`], [`crate::terminals`], tmux's pipe through
//! [`crate::tmux::Capture`]) names them here.

use std::path::{Path, PathBuf};

/// The extensions of the files whose changes wake a node's waiters.
const WATCHED: [&str; 5] = ["out", "start", "status", "end", "died"];

/// The folder of the node files, and every file's name.
#[derive(Debug, Clone)]
pub(crate) struct Files {
    dir: PathBuf,
}

impl Files {
    /// The files kept in `dir`.
    pub(crate) fn new(dir: PathBuf) -> Files {
        Files { dir }
    }

    /// The folder.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    fn file(&self, node_id: &str, extension: &str) -> PathBuf {
        self.dir.join(format!("{node_id}.{extension}"))
    }

    /// `<nodeId>.out`, the file the pane's output is appended to.
    pub(crate) fn out_file(&self, node_id: &str) -> PathBuf {
        self.file(node_id, "out")
    }

    /// `<nodeId>.start`, touched when the pipe's reader runs.
    pub(crate) fn start_file(&self, node_id: &str) -> PathBuf {
        self.file(node_id, "start")
    }

    /// `<nodeId>.status`, the exit status a run node's wrapper writes when its command exits
    /// (`terminals::RUN_WRAPPER`; it writes `<nodeId>.status-tmp` first and renames it).
    pub(crate) fn status_file(&self, node_id: &str) -> PathBuf {
        self.file(node_id, "status")
    }

    /// `<nodeId>.drained`, touched once the run wrapper's exit mark has been read from the
    /// stream: the wrapper may end.
    pub(crate) fn drained_file(&self, node_id: &str) -> PathBuf {
        self.file(node_id, "drained")
    }

    /// `<nodeId>.end`, touched when the pane is gone.
    pub(crate) fn end_file(&self, node_id: &str) -> PathBuf {
        self.file(node_id, "end")
    }

    /// `<nodeId>.died`, touched when a run node's process exits.
    pub(crate) fn died_file(&self, node_id: &str) -> PathBuf {
        self.file(node_id, "died")
    }

    /// `<nodeId>.mark`, the restart point of a compacted `.out` file: `offset cursor`.
    pub(crate) fn mark_file(&self, node_id: &str) -> PathBuf {
        self.file(node_id, "mark")
    }

    /// `<nodeId>.final`: what a finished run node showed and how it ended, once retired.
    pub(crate) fn final_file(&self, node_id: &str) -> PathBuf {
        self.file(node_id, "final")
    }

    /// `<nodeId>.discard`: the node was started with `keep: false`.
    pub(crate) fn discard_file(&self, node_id: &str) -> PathBuf {
        self.file(node_id, "discard")
    }

    /// The files of the stream and its marks, which go once the pane is gone (the final record
    /// and the discard marker go with the node).
    pub(crate) fn stream_files(&self, node_id: &str) -> [PathBuf; 8] {
        [
            self.out_file(node_id),
            self.start_file(node_id),
            self.status_file(node_id),
            self.file(node_id, "status-tmp"),
            self.drained_file(node_id),
            self.end_file(node_id),
            self.died_file(node_id),
            self.mark_file(node_id),
        ]
    }
}

/// The node id of a file name whose change wakes the node's waiters (`<nodeId>.out`, `.start`,
/// `.status`, `.end`, `.died`).
pub(crate) fn node_of(file_name: &str) -> Option<&str> {
    let (node_id, extension) = file_name.rsplit_once('.')?;
    WATCHED.contains(&extension).then_some(node_id)
}

/// The node whose wrapper recorded its exit, when `file_name` is a `<nodeId>.status`.
pub(crate) fn recorded_exit_of(file_name: &str) -> Option<&str> {
    file_name.strip_suffix(".status")
}
