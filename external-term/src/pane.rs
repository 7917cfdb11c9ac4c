//! What tmux tells about a pane's program, as both tmux users of the workspace read it (headless's
//! managed server and acp's local terminals): the pane-state fields and their one parse, the
//! program tmux left unreaped (its zombie still holds the wait status), whether a process group
//! still has a live member, and the dead-pane line tmux draws on a kept pane.

#[cfg(test)]
mod tests;

use std::fs;

/// The format fields that tell whether a pane's program ended and how: `pane_dead`,
/// `pane_dead_status`, `pane_dead_signal`, in the order [`PaneState::from_fields`] takes them.
pub const PANE_DEAD_FIELDS: [&str; 3] =
    ["#{pane_dead}", "#{pane_dead_status}", "#{pane_dead_signal}"];

/// [`PANE_DEAD_FIELDS`] and `pane_pid`, tab-separated: the line [`PaneState::parse`] reads.
pub const PANE_STATE_FORMAT: &str =
    "#{pane_dead}\t#{pane_dead_status}\t#{pane_dead_signal}\t#{pane_pid}";

/// How tmux starts the line it draws on a pane kept after its program exited
/// (`Pane is dead (status 3, …)`), unless `remain-on-exit-format` is empty.
pub const DEAD_NOTICE: &str = "Pane is dead";

/// How a pane is doing, as tmux reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PaneState {
    /// Whether its program has exited (the pane is kept by `remain-on-exit`).
    pub dead: bool,
    /// The exit status, when it exited normally.
    pub exit_code: Option<i32>,
    /// The signal number, when a signal ended it.
    pub signal: Option<i32>,
    /// The program's process id (also its process group: tmux makes it a session leader).
    pub pid: Option<i32>,
}

impl PaneState {
    /// The state from the expanded [`PANE_DEAD_FIELDS`] and `pane_pid` (empty when not asked):
    /// an exit status only for a dead pane not ended by a signal, a signal only for a dead pane.
    /// A field that is empty or not a number is unknown; a signal 0 is none.
    pub fn from_fields(dead: &str, status: &str, signal: &str, pid: &str) -> PaneState {
        let number = |field: &str| field.trim().parse::<i32>().ok();
        let dead = number(dead) == Some(1);
        let signal = number(signal).filter(|signal| *signal > 0);
        PaneState {
            dead,
            exit_code: if dead && signal.is_none() { number(status) } else { None },
            signal: if dead { signal } else { None },
            pid: number(pid),
        }
    }

    /// The state from a line of [`PANE_STATE_FORMAT`] (missing fields are unknown).
    pub fn parse(line: &str) -> PaneState {
        let mut fields = line.split('\t');
        let mut next = || fields.next().unwrap_or_default();
        let (dead, status, signal, pid) = (next(), next(), next(), next());
        PaneState::from_fields(dead, status, signal, pid)
    }

    /// Running, or dead with its status or signal known.
    pub fn is_settled(&self) -> bool {
        !self.dead || self.exit_code.is_some() || self.signal.is_some()
    }

    /// A dead pane without a status, completed from its program's zombie: tmux 3.3 sometimes
    /// never reaps a pane's program (its `pane_dead_status` then stays empty), but the zombie's
    /// `/proc/<pid>/stat` still holds the wait status (field 52, Linux 3.5 and later).
    #[must_use]
    pub fn or_zombie(mut self) -> PaneState {
        if self.is_settled() {
            return self;
        }
        let Some(status) = self.pid.and_then(zombie_wait_status) else {
            return self;
        };
        let signal = status & 0x7f;
        if signal == 0 {
            self.exit_code = Some((status >> 8) & 0xff);
        } else {
            self.signal = Some(signal);
        }
        self
    }
}

/// Whether `line` is tmux's dead-pane line ([`DEAD_NOTICE`]).
pub fn is_dead_notice(line: &str) -> bool {
    line.starts_with(DEAD_NOTICE)
}

/// The wait status of process `pid` when it is a zombie, from `/proc/<pid>/stat`.
pub fn zombie_wait_status(pid: i32) -> Option<i32> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields = stat_fields(&stat)?;
    // Field 3 (state) is the first after the name, field 52 (exit_code) the fiftieth.
    if fields.first() != Some(&"Z") {
        return None;
    }
    fields.get(49)?.parse().ok()
}

/// Whether process group `group` still has a member that is not a zombie. tmux may leave a
/// pane's process unreaped, and a zombie still counts for `kill(-group, 0)`; `/proc` tells them
/// apart (without `/proc`, `kill(-group, 0)` answers).
pub fn process_group_alive(group: i32) -> bool {
    let Ok(entries) = fs::read_dir("/proc") else {
        return rustix::process::Pid::from_raw(group)
            .is_some_and(|group| rustix::process::test_kill_process_group(group).is_ok());
    };
    entries.flatten().any(|entry| {
        let Ok(stat) = fs::read_to_string(entry.path().join("stat")) else {
            return false;
        };
        let Some(fields) = stat_fields(&stat) else { return false };
        // Field 3 (state), field 4 (ppid), field 5 (pgrp).
        let state = fields.first().copied().unwrap_or("Z");
        let pgrp = fields.get(2).and_then(|pgrp| pgrp.parse::<i32>().ok());
        pgrp == Some(group) && state != "Z" && state != "X"
    })
}

/// The fields of a `/proc/<pid>/stat` line after `pid (comm)`, from field 3 (the state) on; the
/// name may contain spaces and parentheses.
fn stat_fields(stat: &str) -> Option<Vec<&str>> {
    let (_, rest) = stat.rsplit_once(") ")?;
    Some(rest.split_whitespace().collect())
}
