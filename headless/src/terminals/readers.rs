//! Who reads a terminal (protocol 1.5.0, `spec/protocol.md` §4.8): the process of every
//! node's pane, remembered from tmux, and the looks at `/proc` that start from it.

use std::collections::HashSet;
use std::time::SystemTime;

use termsprawl_external_term::session_name;

use super::{Terminals, lock};
use crate::foreground::{self, Foreground, Pane, Processes};

impl Terminals {
    /// Part of the liveness round: the pane's process of every running terminal node of
    /// `terminals` that is not remembered (after a restart), so that `waitingForInput` needs no
    /// tmux command.
    pub(crate) async fn know_panes(&self, terminals: &[String], running: &HashSet<String>) {
        for node_id in terminals {
            let known = lock(&self.panes).contains_key(node_id);
            if !known && running.contains(&session_name(node_id)) {
                self.know_pane(node_id).await;
            }
        }
    }

    /// Remembers `pid` as the process of `node_id`'s pane, unless it is already.
    pub(super) fn remember_pane(&self, node_id: &str, pid: i32) {
        let known = lock(&self.panes).get(node_id).is_some_and(|pane| pane.pid() == pid);
        if !known && let Some(pane) = Pane::of(pid) {
            lock(&self.panes).insert(node_id.to_owned(), pane);
        }
    }

    /// Asks tmux for the process of `node_id`'s pane (one command on the control client) unless
    /// it is remembered and still runs. A node's start learns it from its `new-session` or
    /// `respawn-pane` (no command of its own); a wait for input and the liveness round (for nodes
    /// a restart left unknown) ask here.
    pub(crate) async fn know_pane(&self, node_id: &str) {
        let known = lock(&self.panes).get(node_id).copied();
        if known.is_some_and(|pane| Pane::of(pane.pid()) == Some(pane)) {
            return;
        }
        if let Ok(Some(pid)) = self.tmux.pane_pid(node_id).await {
            self.remember_pane(node_id, pid);
        }
    }

    /// The foreground program of `node_id`'s terminal (its name, `bash`, `python3`) while it
    /// sleeps reading the terminal ([`foreground::look`]), now; `None` otherwise, and for a node
    /// whose pane's process is not known or has ended. Reads `/proc` only: no tmux command, no
    /// process; `processes` is shared by the looks of one answer.
    pub(crate) fn foreground_reader(
        &self,
        node_id: &str,
        processes: &mut Processes,
    ) -> Option<String> {
        let pane = lock(&self.panes).get(node_id).copied()?;
        let last = lock(&self.looks).remove(node_id);
        let (verdict, seen) = foreground::look_again(pane, last, processes);
        if let Some(seen) = seen {
            lock(&self.looks).insert(node_id.to_owned(), seen);
        }
        match verdict {
            Foreground::Reading(program) => Some(program),
            Foreground::NotReading => None,
            Foreground::Gone => {
                let mut panes = lock(&self.panes);
                if panes.get(node_id) == Some(&pane) {
                    panes.remove(node_id);
                }
                None
            }
        }
    }

    /// `waitingForInput` and `inputBy` of `terminal_list` and `terminal_read`'s screen view
    /// (protocol 1.5.0, `spec/protocol.md` §4.8): the foreground program while it sleeps reading
    /// the terminal ([`Terminals::foreground_reader`]) and the node, whose last output was at
    /// `last_output`, has printed nothing for [`foreground::INPUT_QUIET`]. One look, `/proc`
    /// reads only: no tmux command, no process.
    pub(crate) fn input_by(
        &self,
        node_id: &str,
        last_output: Option<SystemTime>,
        processes: &mut Processes,
    ) -> Option<String> {
        let quiet = last_output
            .and_then(|at| SystemTime::now().duration_since(at).ok())
            .is_none_or(|quiet| quiet >= foreground::INPUT_QUIET);
        if !quiet {
            return None;
        }
        self.foreground_reader(node_id, processes)
    }
}
