//! Where everything lives: `<userData>` (the `--data` directory), `D = <userData>/agent-tools`
//! with the app's layout (`spec/protocol.md` §2.2), and the few files of our own in `D`.

use std::env;
use std::path::{Path, PathBuf};

/// The paths of one data directory. Pure: nothing here touches the file system.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    user_data: PathBuf,
    agent_tools: PathBuf,
}

impl Layout {
    /// The layout of `<userData>` = `user_data` (made absolute against the current directory).
    pub fn new(user_data: &Path) -> Layout {
        let user_data = termsprawl_transport::discovery::absolute(user_data)
            .unwrap_or_else(|_| user_data.to_path_buf());
        let agent_tools = user_data.join("agent-tools");
        Layout { user_data, agent_tools }
    }

    /// The app's `<userData>` on Linux: `$XDG_CONFIG_HOME/termsprawl`, else `~/.config/termsprawl`.
    pub fn default_user_data() -> Option<PathBuf> {
        let config = env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .filter(|dir| dir.is_absolute())
            .or_else(|| env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))?;
        Some(config.join("termsprawl"))
    }

    /// `<userData>`.
    pub fn user_data(&self) -> &Path {
        &self.user_data
    }

    /// `D = <userData>/agent-tools`.
    pub fn agent_tools(&self) -> &Path {
        &self.agent_tools
    }

    /// `D/canvas.json`: the persisted canvas of every project (ours; the app keeps its canvas
    /// elsewhere).
    pub fn canvas_file(&self) -> PathBuf {
        self.agent_tools.join("canvas.json")
    }

    /// `D/tasks/`: one `<taskId>.json` per agent request.
    pub fn tasks_dir(&self) -> PathBuf {
        self.agent_tools.join("tasks")
    }

    /// `D/terminals/`: the output stream of every terminal node (see `streams`).
    pub fn terminals_dir(&self) -> PathBuf {
        self.agent_tools.join("terminals")
    }

    /// `D/headless.sock`: the control socket of a running `serve`.
    pub fn control_socket(&self) -> PathBuf {
        self.agent_tools.join("headless.sock")
    }

    /// `D/termsprawlctl`: the launcher script that `TERMSPRAWL_CTL` names.
    pub fn launcher(&self) -> PathBuf {
        self.agent_tools.join("termsprawlctl")
    }

    /// `D/preferences.json`.
    pub fn preferences_file(&self) -> PathBuf {
        self.agent_tools.join("preferences.json")
    }

    /// `D/sessions/<nodeId>.json`.
    pub fn session_file(&self, node_id: &str) -> PathBuf {
        self.agent_tools.join("sessions").join(format!("{node_id}.json"))
    }

    /// `D/launch/<nodeId>/`.
    pub fn launch_dir(&self, node_id: &str) -> PathBuf {
        self.agent_tools.join("launch").join(node_id)
    }

    /// `D/launch/<nodeId>/skills`, the `guidesDirectory` of `session_info`.
    pub fn skills_dir(&self, node_id: &str) -> PathBuf {
        self.launch_dir(node_id).join("skills")
    }

    /// `D/launch/<nodeId>/termsprawl-system.md`.
    pub fn system_prompt_file(&self, node_id: &str) -> PathBuf {
        self.launch_dir(node_id).join("termsprawl-system.md")
    }

    /// `D/launch/<nodeId>/mcp.json`.
    pub fn mcp_config_file(&self, node_id: &str) -> PathBuf {
        self.launch_dir(node_id).join("mcp.json")
    }

    /// `<userData>/tmux-sockets/termsprawl`, the managed tmux server's socket (§9.2).
    pub fn tmux_socket(&self) -> PathBuf {
        termsprawl_external_term::socket_path(&self.user_data)
    }

    /// `<userData>/tmux.conf`, the managed tmux server's configuration (§9.2).
    pub fn tmux_config(&self) -> PathBuf {
        self.user_data.join("tmux.conf")
    }
}
