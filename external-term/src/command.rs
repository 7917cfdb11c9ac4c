//! The pure part: which program to start with which arguments (`spec/protocol.md` §9.1).

use std::ffi::OsString;
use std::path::PathBuf;

use termsprawl_protocol::is_valid_node_id;

use crate::error::Error;
use crate::preferences::{ExternalTerminal, PLACEHOLDER};
use crate::tmux::TmuxLocation;

/// An emulator of the probe list and the argument that makes it run a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    /// The executable name, looked up with the finder.
    pub executable: &'static str,
    /// The argument placed before the attach command.
    pub pass_through: &'static str,
}

/// The emulators tried, in this order, when no `externalTerminal` is configured.
pub const PROBES: [Probe; 6] = [
    Probe { executable: "x-terminal-emulator", pass_through: "-e" },
    Probe { executable: "kitty", pass_through: "--" },
    Probe { executable: "alacritty", pass_through: "-e" },
    Probe { executable: "gnome-terminal", pass_through: "--" },
    Probe { executable: "konsole", pass_through: "-e" },
    Probe { executable: "xterm", pass_through: "-e" },
];

/// A program and its arguments, to be executed directly (never through a shell).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TerminalCommand {
    /// The emulator, as resolved by the finder.
    pub program: PathBuf,
    /// Its arguments, the attach command included as separate elements.
    pub args: Vec<OsString>,
}

/// Builds the emulator command for the tmux session of `node_id`.
///
/// With a `config`, its executable is resolved with `find` (unresolved:
/// [`Error::ExecutableNotFound`], the probe list is not consulted) and its [`PLACEHOLDER`] element
/// is replaced by the whole attach argv ([`TmuxLocation::attach_argv`]) as separate arguments.
/// Without one, the first entry of [`PROBES`] that `find` resolves wins, with its pass-through
/// argument before the attach argv; none resolves: [`Error::NoEmulator`].
///
/// `find` receives the configured executable or a probe name and returns the program to run; pass
/// `|name| search_path.find(name)` for the real resolution. The program of the result is what
/// `find` returned, so the spawn does not search `PATH` a second time. An invalid `node_id` fails
/// with [`Error::InvalidNodeId`].
pub fn terminal_command(
    tmux: &TmuxLocation,
    node_id: &str,
    config: Option<&ExternalTerminal>,
    find: &dyn Fn(&str) -> Option<PathBuf>,
) -> Result<TerminalCommand, Error> {
    if !is_valid_node_id(node_id) {
        return Err(Error::InvalidNodeId);
    }
    let attach = tmux.attach_argv(node_id);
    if let Some(config) = config {
        let Some(program) = find(config.executable()) else {
            return Err(Error::ExecutableNotFound { executable: config.executable().to_owned() });
        };
        let mut args = Vec::with_capacity(config.args().len() + attach.len());
        for arg in config.args() {
            if arg == PLACEHOLDER {
                args.extend(attach.iter().cloned());
            } else {
                args.push(OsString::from(arg));
            }
        }
        return Ok(TerminalCommand { program, args });
    }
    for probe in &PROBES {
        if let Some(program) = find(probe.executable) {
            let mut args = Vec::with_capacity(attach.len() + 1);
            args.push(OsString::from(probe.pass_through));
            args.extend(attach);
            return Ok(TerminalCommand { program, args });
        }
    }
    Err(Error::NoEmulator)
}
