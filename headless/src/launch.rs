//! Starting agents: the launch files of `spec/protocol.md` §2.7, the environment of §3, and the
//! presets of `agent_launch` with the adapter detection of §6.8.

use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use termsprawl_external_term::SearchPath;
use termsprawl_protocol::args::AgentPreset;
use termsprawl_protocol::shell::single_quoted;
use termsprawl_protocol::{IntegrationState, IntegrationStatus, Topic, guide};
use tokio::process::Command;

use crate::error::{ToolError, messages};
use crate::layout::Layout;

/// Reason of a `needs-setup` status whose instruction delivery is unverified (§6.8).
pub(crate) const UNVERIFIED_REASON: &str = "Instruction delivery is unverified. Read the generated skills and configure this agent explicitly.";
/// Reason of an MCP adapter's status until the agent connects (§6.8).
pub(crate) const WAITING_REASON: &str = "Waiting for the agent to connect to MCP";
/// Reason of a `cli-fallback` status (§6.8).
pub(crate) const CLI_REASON: &str =
    "Instructions supplied; shell tool access is subject to agent permissions";
/// Reason of a status after `session_info` of an MCP adapter (§6.5).
pub(crate) const CONNECTED_REASON: &str = "Authenticated tool connection established";

/// How long `--help` and `--version` of an agent may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// The status of an agent started by `termsprawl-headless launch`: its instruction delivery is
/// unverified (`<name>-unverified`, `needs-setup`).
pub(crate) fn unverified_status(name: &str) -> IntegrationStatus {
    IntegrationStatus {
        state: IntegrationState::NeedsSetup,
        adapter: format!("{name}-unverified"),
        version: "unknown".to_owned(),
        reason: UNVERIFIED_REASON.to_owned(),
    }
}

/// Whether an adapter switches to `connected` on `session_info` (§6.5).
pub(crate) fn is_mcp_adapter(adapter: &str) -> bool {
    adapter == "claude-mcp" || adapter == "codex-mcp"
}

/// Writes `D/launch/<nodeId>/` (0700): `skills/termsprawl-<topic>/SKILL.md` for every topic,
/// `termsprawl-system.md` and `mcp.json`, each 0600 and written atomically.
pub(crate) fn write_launch_files(
    layout: &Layout,
    node_id: &str,
    session_file: &Path,
) -> io::Result<()> {
    let launch_dir = layout.launch_dir(node_id);
    let builder = {
        let mut builder = fs::DirBuilder::new();
        builder.recursive(true).mode(0o700);
        builder
    };
    builder.create(&launch_dir)?;
    fs::set_permissions(&launch_dir, fs::Permissions::from_mode(0o700))?;
    for topic in Topic::ALL {
        let dir = layout.skills_dir(node_id).join(format!("termsprawl-{}", topic.as_str()));
        builder.create(&dir)?;
        write(&dir.join("SKILL.md"), &skill(topic))?;
    }
    write(
        &layout.system_prompt_file(node_id),
        &format!("{}\n", guide(Topic::Overview).trim_end()),
    )?;
    write(
        &layout.mcp_config_file(node_id),
        &mcp_config(&layout.launcher(), session_file).to_string(),
    )
}

fn write(path: &Path, content: &str) -> io::Result<()> {
    termsprawl_transport::server::write_atomic(path, content.as_bytes())
}

/// A skill file: front matter, a blank line, the guide and a newline (§2.7).
pub(crate) fn skill(topic: Topic) -> String {
    let name = topic.as_str();
    format!(
        "---\nname: termsprawl-{name}\ndescription: Use termsprawl {name} tools and workflows.\n---\n\n{}\n",
        guide(topic).trim_end()
    )
}

/// `{"mcpServers":{"termsprawl":{"command":<launcher>,"args":["--session",<file>,"mcp"]}}}`.
pub(crate) fn mcp_config(launcher: &Path, session_file: &Path) -> Value {
    json!({"mcpServers": {"termsprawl": {
        "command": launcher.to_string_lossy(),
        "args": ["--session", session_file.to_string_lossy(), "mcp"],
    }}})
}

/// The `TERMSPRAWL_*` variables of an agent (§3), in the table's order.
pub(crate) fn environment(
    layout: &Layout,
    node_id: &str,
    project_id: &str,
) -> Vec<(String, String)> {
    let text = |path: PathBuf| path.to_string_lossy().into_owned();
    vec![
        ("TERMSPRAWL_SESSION_FILE".to_owned(), text(layout.session_file(node_id))),
        ("TERMSPRAWL_CTL".to_owned(), text(layout.launcher())),
        ("TERMSPRAWL_NODE_ID".to_owned(), node_id.to_owned()),
        ("TERMSPRAWL_PROJECT_ID".to_owned(), project_id.to_owned()),
        ("TERMSPRAWL_SYSTEM_PROMPT_FILE".to_owned(), text(layout.system_prompt_file(node_id))),
    ]
}

/// The installed `termsprawlctl`: `explicit` if given, else next to the running executable,
/// else on `PATH`.
pub fn find_ctl(explicit: Option<&Path>, search_path: &SearchPath) -> Option<PathBuf> {
    if let Some(path) = explicit {
        return Some(path.to_path_buf());
    }
    let beside =
        std::env::current_exe().ok().and_then(|exe| Some(exe.parent()?.join("termsprawlctl")));
    beside
        .filter(|path| termsprawl_external_term::is_executable_file(path))
        .or_else(|| search_path.find_on_path("termsprawlctl"))
}

/// Writes `D/termsprawlctl` (0700): `#!/bin/sh` and one `exec` line running `ctl` with `"$@"`,
/// or, when no `termsprawlctl` was found, a script that says so and exits 127.
pub(crate) fn write_launcher(layout: &Layout, ctl: Option<&Path>) -> io::Result<()> {
    let script = match ctl {
        Some(ctl) => format!("#!/bin/sh\nexec {} \"$@\"\n", single_quoted(&ctl.to_string_lossy())),
        None => "#!/bin/sh\necho 'termsprawl-headless: termsprawlctl was not found when the server started; install it next to termsprawl-headless or on PATH, or pass serve --ctl' >&2\nexit 127\n".to_owned(),
    };
    let path = layout.launcher();
    termsprawl_transport::server::write_atomic(&path, script.as_bytes())?;
    fs::set_permissions(&path, fs::Permissions::from_mode(0o700))
}

/// What `agent_launch` starts: the command line and the status of its session.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PresetLaunch {
    /// The agent's name (the preset's id).
    pub(crate) name: String,
    /// The command line.
    pub(crate) argv: Vec<String>,
    /// The status the session is provisioned with.
    pub(crate) status: IntegrationStatus,
}

/// The launch adapter chosen from an agent's `--help` text (§6.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Adapter {
    /// `claude-mcp`.
    ClaudeMcp,
    /// `codex-mcp`.
    CodexMcp,
    /// `<name>-cli` with `--prompt <instructions>`.
    PromptFlag,
    /// `<name>-cli` with `--prompt-interactive <instructions>`.
    PromptInteractive,
    /// `<name>-cli` with the instructions as a positional prompt.
    Positional,
    /// `custom-cli`, with the configured instruction flag.
    CustomFlag,
    /// `<name>-unverified`.
    Unverified,
}

/// Chooses the adapter of executable `name` from its help text.
pub(crate) fn adapter_for(name: &str, help: &str) -> Adapter {
    let lower = help.to_ascii_lowercase();
    let positional =
        lower.contains("[prompt") || lower.contains("<prompt") || lower.contains("[query");
    match name {
        "claude" if help.contains("--mcp-config") && help.contains("--append-system-prompt") => {
            Adapter::ClaudeMcp
        }
        "codex" if help.contains("--config") && lower.contains("mcp") => Adapter::CodexMcp,
        "opencode" if help.contains("--prompt") => Adapter::PromptFlag,
        "gemini" | "agy" | "antigravity" if help.contains("--prompt-interactive") => {
            Adapter::PromptInteractive
        }
        "gemini" | "agy" | "antigravity" | "grok" | "openclaude" if positional => {
            Adapter::Positional
        }
        _ => Adapter::Unverified,
    }
}

/// The adapter's name in a status (§6.8).
pub(crate) fn adapter_name(adapter: Adapter, name: &str) -> String {
    match adapter {
        Adapter::ClaudeMcp => "claude-mcp".to_owned(),
        Adapter::CodexMcp => "codex-mcp".to_owned(),
        Adapter::PromptFlag
        | Adapter::PromptInteractive
        | Adapter::Positional
        | Adapter::CustomFlag => {
            format!("{name}-cli")
        }
        Adapter::Unverified => format!("{name}-unverified"),
    }
}

/// The one-line instruction that CLI adapters pass as the agent's first prompt.
pub(crate) fn instruction(system_prompt_file: &Path) -> String {
    format!(
        "You run inside termsprawl. Read {} for how to use its tools, then call session_info.",
        system_prompt_file.display()
    )
}

/// The command line of an adapter (§2.7).
pub(crate) fn adapter_argv(
    adapter: Adapter,
    executable: &Path,
    layout: &Layout,
    node_id: &str,
    custom_flag: Option<&str>,
) -> Vec<String> {
    let mut argv = vec![executable.to_string_lossy().into_owned()];
    let session_file = layout.session_file(node_id).to_string_lossy().into_owned();
    let prompt = instruction(&layout.system_prompt_file(node_id));
    match adapter {
        Adapter::ClaudeMcp => argv.extend([
            "--mcp-config".to_owned(),
            layout.mcp_config_file(node_id).to_string_lossy().into_owned(),
            "--append-system-prompt".to_owned(),
            guide(Topic::Overview).trim_end().to_owned(),
        ]),
        Adapter::CodexMcp => argv.extend([
            "-c".to_owned(),
            format!(
                "mcp_servers.termsprawl.command={}",
                Value::from(layout.launcher().to_string_lossy())
            ),
            "-c".to_owned(),
            format!("mcp_servers.termsprawl.args={}", json!(["--session", session_file, "mcp"])),
        ]),
        Adapter::PromptFlag => argv.extend(["--prompt".to_owned(), prompt]),
        Adapter::PromptInteractive => argv.extend(["--prompt-interactive".to_owned(), prompt]),
        Adapter::Positional => argv.push(prompt),
        Adapter::CustomFlag => argv.extend([custom_flag.unwrap_or_default().to_owned(), prompt]),
        Adapter::Unverified => {}
    }
    argv
}

/// The executable name of a preset (custom has none of its own).
pub(crate) fn preset_name(preset: AgentPreset) -> &'static str {
    match preset {
        AgentPreset::Claude => "claude",
        AgentPreset::Codex => "codex",
        AgentPreset::Gemini => "gemini",
        AgentPreset::Grok => "grok",
        AgentPreset::Openclaude => "openclaude",
        AgentPreset::Opencode => "opencode",
        AgentPreset::Custom => "custom",
    }
}

/// Resolves and probes a preset, and plans its launch for `node_id`. A preset whose executable
/// is not found (or a custom preset that is not configured) fails with
/// `Install or configure this agent before launching it`.
pub(crate) async fn plan_preset(
    preset: AgentPreset,
    layout: &Layout,
    node_id: &str,
    search_path: &SearchPath,
) -> Result<PresetLaunch, ToolError> {
    let name = preset_name(preset);
    let (executable, custom_flag) = if preset == AgentPreset::Custom {
        let custom = read_preferences(&layout.preferences_file())?
            .get("custom")
            .cloned()
            .unwrap_or(Value::Null);
        let executable =
            custom.get("executable").and_then(Value::as_str).filter(|value| !value.is_empty());
        let executable = executable.and_then(|executable| search_path.find(executable));
        let flag = custom
            .get("instructionFlag")
            .and_then(Value::as_str)
            .filter(|flag| is_instruction_flag(flag))
            .map(str::to_owned);
        (executable, flag)
    } else {
        (find_agent(name, search_path), None)
    };
    let Some(executable) = executable else {
        return Err(messages::INSTALL_AGENT.into());
    };
    let adapter = match (&custom_flag, preset) {
        (Some(_), _) => Adapter::CustomFlag,
        (None, AgentPreset::Custom) => Adapter::Unverified,
        (None, _) => adapter_for(name, &probe(&executable, "--help").await.unwrap_or_default()),
    };
    let version = probe(&executable, "--version")
        .await
        .map_or_else(|| "unknown".to_owned(), |text| version_of(&text));
    let (state, reason) = match adapter {
        Adapter::ClaudeMcp | Adapter::CodexMcp => (IntegrationState::NeedsSetup, WAITING_REASON),
        Adapter::Unverified => (IntegrationState::NeedsSetup, UNVERIFIED_REASON),
        _ => (IntegrationState::CliFallback, CLI_REASON),
    };
    let status = IntegrationStatus {
        state,
        adapter: adapter_name(adapter, name),
        version,
        reason: reason.to_owned(),
    };
    let argv = adapter_argv(adapter, &executable, layout, node_id, custom_flag.as_deref());
    Ok(PresetLaunch { name: name.to_owned(), argv, status })
}

/// `--version` output trimmed and cut to 160 characters; `unknown` when empty.
pub(crate) fn version_of(output: &str) -> String {
    let version: String = output.trim().chars().take(160).collect();
    if version.is_empty() { "unknown".to_owned() } else { version }
}

/// Whether a custom `instructionFlag` may be used: `^--[a-z][a-z-]*$`.
pub(crate) fn is_instruction_flag(flag: &str) -> bool {
    let Some(rest) = flag.strip_prefix("--") else { return false };
    rest.starts_with(|c: char| c.is_ascii_lowercase())
        && rest.chars().all(|c| c.is_ascii_lowercase() || c == '-')
}

/// Reads `D/preferences.json`: a missing file is `{}`, one that does not parse (or is not an
/// object) is `Invalid agent-tools/preferences.json`.
pub(crate) fn read_preferences(path: &Path) -> Result<Value, ToolError> {
    match fs::read(path) {
        Ok(content) => match serde_json::from_slice::<Value>(&content) {
            Ok(value @ Value::Object(_)) => Ok(value),
            _ => Err(messages::INVALID_PREFERENCES.into()),
        },
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(json!({})),
        Err(_) => Err(messages::INVALID_PREFERENCES.into()),
    }
}

/// Finds an agent: the search path of §9.3, then the agent's own install directory.
fn find_agent(name: &str, search_path: &SearchPath) -> Option<PathBuf> {
    search_path.find(name).or_else(|| {
        let home = PathBuf::from(std::env::var_os("HOME")?);
        let extra = match name {
            "claude" => home.join(".claude/local/claude"),
            "opencode" => home.join(".opencode/bin/opencode"),
            _ => return None,
        };
        termsprawl_external_term::is_executable_file(&extra).then_some(extra)
    })
}

/// Runs `executable flag` with no input and returns its output (stdout then stderr), or `None`
/// when it cannot run, takes too long, or (for `--version`) fails.
async fn probe(executable: &Path, flag: &str) -> Option<String> {
    let child = Command::new(executable)
        .arg(flag)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env_remove("TMUX")
        .env_remove("TMUX_PANE")
        .kill_on_drop(true)
        .spawn()
        .ok()?;
    let output = tokio::time::timeout(PROBE_TIMEOUT, child.wait_with_output()).await.ok()?.ok()?;
    if flag == "--version" && !output.status.success() {
        return None;
    }
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    Some(text)
}

#[cfg(test)]
mod tests;
