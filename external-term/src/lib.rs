//! Opens an operating-system terminal window attached to a termsprawl node's tmux session
//! (`spec/protocol.md` §9), so that a person can watch or take over an agent next to the canvas view.
//!
//! This crate owns
//! - the choice of the emulator: the `externalTerminal` template of `agent-tools/preferences.json`
//!   ([`ExternalTerminal`], [`load_external_terminal`]) or the probe list ([`PROBES`]), turned into
//!   an argument vector by the pure function [`terminal_command`];
//! - the attach command and the managed tmux location ([`TmuxLocation`], [`find_tmux`],
//!   [`has_session`]);
//! - what tmux tells about a pane's program, read the same way by both tmux users of the
//!   workspace, headless and acp ([`pane`]): the pane-state fields and their one parse
//!   ([`pane::PaneState`]), the status an unreaped program's zombie still holds, whether a
//!   process group has a live member, and tmux's dead-pane line;
//! - executable resolution (`PATH`, then `~/.local/bin`, `~/.druk/bin`, `~/bin`: [`SearchPath`]);
//! - the spawn ([`launch()`]): detached in a new process group, no standard streams, watched for a
//!   grace period and reaped on a background thread;
//! - the whole `terminal_external` operation in one call ([`open()`], with [`result_value`]).
//!
//! It must never run a shell (every program is executed directly with an argument vector), never
//! pass `TMUX` or `TMUX_PANE` to the emulator (a nested client would act as one inside tmux), and
//! never report an emulator that died within the grace period as a success. Of the workspace it
//! depends on `protocol` only, for the node-id rule; [`pane`] runs no process at all (it parses
//! what its caller's tmux printed and reads `/proc`).
//!
//! Start reading at [`open()`], then [`terminal_command`] and [`launch()`].

mod command;
mod error;
mod launch;
mod open;
pub mod pane;
mod preferences;
mod search_path;
mod tmux;

pub use command::{PROBES, Probe, TerminalCommand, terminal_command};
pub use error::Error;
pub use launch::{DEFAULT_GRACE_PERIOD, LaunchOptions, Launched, launch};
pub use open::{OpenOptions, open, result_value, user_data_from_session_file};
pub use preferences::{ExternalTerminal, PLACEHOLDER, load_external_terminal, preferences_path};
pub use search_path::{SearchPath, is_executable_file};
pub use tmux::{
    TMUX_FALLBACKS, TmuxLocation, ensure_socket_dir, find_tmux, has_session, session_name,
    socket_path,
};
