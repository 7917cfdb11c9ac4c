//! The whole `terminal_external` operation for a node: check the session, read the preference,
//! build the command, launch it.

use std::path::Path;

use serde_json::{Value, json};
use termsprawl_protocol::is_valid_node_id;

use crate::command::terminal_command;
use crate::error::Error;
use crate::launch::{LaunchOptions, Launched, launch};
use crate::preferences::load_external_terminal;
use crate::search_path::SearchPath;
use crate::tmux::{TmuxLocation, ensure_socket_dir, find_tmux, has_session};

/// What [`open`] needs besides the node id and `<userData>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenOptions {
    /// Where executables are resolved (emulators, and tmux unless [`OpenOptions::tmux`] is set).
    /// [`Default`] takes this process's `PATH` and `HOME`.
    pub search_path: SearchPath,
    /// The tmux server to check and attach to; `None` (the default) means the app's managed server,
    /// [`TmuxLocation::managed`] with tmux from [`find_tmux`], after creating its socket directory.
    pub tmux: Option<TmuxLocation>,
    /// How the emulator is started and watched.
    pub launch: LaunchOptions,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            search_path: SearchPath::from_env(),
            tmux: None,
            launch: LaunchOptions::default(),
        }
    }
}

/// Opens a terminal window attached to the tmux session `ts-<nodeId>`.
///
/// Steps, each failing with the error named:
/// 1. the node id is checked ([`Error::InvalidNodeId`]);
/// 2. the tmux location is settled: [`OpenOptions::tmux`], or tmux is found
///    ([`Error::TmuxNotFound`]) and `<userData>/tmux-sockets` created ([`Error::SocketDir`]);
/// 3. `has-session -t =ts-<nodeId>` must succeed ([`Error::SessionNotRunning`], [`Error::Tmux`]);
/// 4. `<userData>/agent-tools/preferences.json` is read afresh ([`crate::load_external_terminal`]);
/// 5. the command is built ([`crate::terminal_command`]) with [`SearchPath::find`];
/// 6. the emulator is launched and watched ([`crate::launch()`]).
///
/// On success the operation's result value is [`result_value`].
pub fn open(node_id: &str, user_data: &Path, options: &OpenOptions) -> Result<Launched, Error> {
    if !is_valid_node_id(node_id) {
        return Err(Error::InvalidNodeId);
    }
    let tmux = if let Some(tmux) = &options.tmux {
        tmux.clone()
    } else {
        let program = find_tmux(&options.search_path)?;
        ensure_socket_dir(user_data)?;
        TmuxLocation::managed(program, user_data)
    };
    if !has_session(&tmux, node_id)? {
        return Err(Error::SessionNotRunning);
    }
    let config = load_external_terminal(user_data)?;
    let find = |name: &str| options.search_path.find(name);
    let command = terminal_command(&tmux, node_id, config.as_ref(), &find)?;
    launch(&command, &options.launch)
}

/// The operation's result value: `{"nodeId":<nodeId>,"attached":true}`.
pub fn result_value(node_id: &str) -> Value {
    json!({ "nodeId": node_id, "attached": true })
}

/// `<userData>` from a session file `<userData>/agent-tools/sessions/<nodeId>.json`: D (the
/// `agent-tools` directory) is the file's grandparent and `<userData>` is D's parent. Purely
/// lexical; `None` when the path has too few components.
pub fn user_data_from_session_file(session_file: &Path) -> Option<&Path> {
    let user_data = session_file.parent()?.parent()?.parent()?;
    if user_data.as_os_str().is_empty() {
        return None;
    }
    Some(user_data)
}
