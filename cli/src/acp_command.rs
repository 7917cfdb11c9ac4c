//! `termsprawlctl acp`: its command line read with the Go-style scanner of `flags` (the one
//! scanner of the workspace, `spec/shell-conventions.md` §3) into `termsprawl_acp::Options`, its
//! help, and the hand-over to the `acp` crate (`spec/acp.md` §2.1).

#[cfg(test)]
mod tests;

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::time::Duration;

use termsprawl_acp::{AgentLog, Options, PermissionMode, TerminalBackend};

use crate::convert::convert;
use crate::describe::Scalar;
use crate::flags::{Scanner, Step, is_help, needs_argument};
use crate::quote::go_quote;
use crate::streams::Streams;
use termsprawl_protocol::ExitStatus;

/// The help text of `termsprawlctl acp --help` and `termsprawlctl help acp`.
pub(crate) const HELP: &str = "\
Usage: termsprawlctl [--session FILE] acp [OPTIONS] -- AGENT [ARG]...

Runs an Agent Client Protocol (ACP v1) agent as a chat in this terminal.
Type a prompt and press Enter; a line ending in \\ continues on the next one, and a line of three
double quotes (\"\"\") starts and ends a multi-line prompt. /help lists the front end's commands
(/mode, /config, /model, /sessions, /resume, /status, /last, /restart, /quit) and the agent's; a /NAME that
is not the front end's goes to the agent as prompt text (//NAME sends the agent's /NAME where the
front end has one). /quit or end of input ends the session; Ctrl-C cancels the running turn (twice:
stop waiting for the agent), twice while idle quits. On a terminal the prompt's line is edited:
Alt-Enter starts a new line, Tab completes commands, mode ids and option values, and Up recalls
the prompts typed in the same project ($XDG_STATE_HOME/termsprawl/acp-history; a line typed with
a leading space is not kept).

Options:
  --cwd DIR                     the session's working directory and the root for file access (default: current directory)
  --prompt TEXT                 send one prompt, show the turn, exit 0 on end_turn and 1 otherwise
  --permission ask|allow-once|deny
                                who answers the agent's permission asks: the person (default), or a policy by option kind
  --permission-timeout SECONDS  how long a permission ask waits for the person; then it is cancelled (default: 600)
  --terminals auto|canvas|tmux  where agent terminals run: canvas nodes, when the tool server offers terminal_run and terminal_wait (auto), always (canvas), or the local tmux server (tmux) (default: auto)
  --no-mcp                      do not hand the agent termsprawl's MCP bridge
  --mcp-read-only               hand the agent only the read-only termsprawl tools (the bridge's --read-only)
  --mcp-tools NAME,...          hand the agent only these termsprawl tools (the bridge's --tools)
  --mcp-max-wait-ms MS          the longest wait in one termsprawl tool call, 0 to 600000 (the bridge's --max-wait-ms;
                                default: the bridge's 50000); the agent's own limit on an MCP call must allow it
  --trace FILE                  append every wire message as a JSON line
  --agent-log FILE|-            where the agent's stderr goes; - copies it to stderr (default: a new temporary file,
                                removed at the end when the agent wrote nothing to it)
  --mode ID                     switch the agent to this mode (session/set_mode) before the first prompt
  --set ID=VALUE                set a configuration option (session/set_config_option) before the first prompt;
                                repeatable, once per option
  --model VALUE                 set the option whose category is model (the model picker) before the first prompt
  --resume ID                   continue this session of the agent (session/resume, else session/load) instead of a new one
  --list-sessions               print the agent's sessions (session/list, every page) and exit

--session FILE is an option of termsprawlctl itself and goes before acp.
The agent gets termsprawl's tools through `termsprawlctl --session FILE mcp` in its mcpServers.

Exit status: 0 end_turn or a session ended by the person; 1 any other stop reason or an agent failure;
2 a usage error or an agent that could not be started.
";

/// The usage line repeated by the messages about the agent's argv.
const SYNOPSIS: &str = "termsprawlctl acp [OPTIONS] -- AGENT [ARG]...";

/// What the command line after the word `acp` asks for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Parsed {
    /// Print the help.
    Help,
    /// Run the front end.
    Run(Box<Options>),
}

/// A usage error: the message, and a hint when one helps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UsageError {
    pub(crate) message: String,
    pub(crate) hint: Option<&'static str>,
}

impl From<String> for UsageError {
    fn from(message: String) -> UsageError {
        UsageError { message, hint: None }
    }
}

/// The hint after `flag provided but not defined: -session`.
const SESSION_HINT: &str = "hint: --session is an option of termsprawlctl, not of acp: write it before acp, as in termsprawlctl --session FILE acp [OPTIONS] -- AGENT [ARG]...";

/// Runs `termsprawlctl acp`; `args` follow the word `acp`, `session` is the program's `--session`.
pub(crate) fn run(
    args: &[OsString],
    session: Option<PathBuf>,
    streams: &mut Streams<'_>,
) -> ExitStatus {
    let options = match parse(args) {
        Ok(Parsed::Run(options)) => *options,
        Ok(Parsed::Help) => {
            let _ = streams.write_stdout(HELP.as_bytes());
            return ExitStatus::OK;
        }
        Err(error) => {
            streams.error_line(&format!("termsprawlctl: acp: {}", error.message));
            if let Some(hint) = error.hint {
                streams.error_line(hint);
            }
            streams.error_line("Run `termsprawlctl acp --help` for usage.");
            return ExitStatus::USAGE;
        }
    };
    termsprawl_acp::run(options, session)
}

/// In `mcp` mode: when `termsprawlctl acp` injected this bridge, it named a file to create in
/// `termsprawl_acp::BRIDGE_MARK_VARIABLE`; creating it tells the front end the agent started the
/// bridge. A failure changes nothing for the bridge.
pub(crate) fn mark_bridge_started() {
    let Some(path) = std::env::var_os(termsprawl_acp::BRIDGE_MARK_VARIABLE) else {
        return;
    };
    if !path.is_empty() {
        let _ = std::fs::OpenOptions::new().create(true).append(true).open(path);
    }
}

/// The flags of `acp`: value flags, then the booleans.
const VALUE_FLAGS: [&str; 13] = [
    "cwd",
    "prompt",
    "permission",
    "permission-timeout",
    "terminals",
    "trace",
    "agent-log",
    "mcp-tools",
    "mcp-max-wait-ms",
    "mode",
    "set",
    "model",
    "resume",
];
const BOOL_FLAGS: [&str; 3] = ["no-mcp", "mcp-read-only", "list-sessions"];

/// Parses the arguments after the word `acp`: flags, then `--`, then the agent's argv.
pub(crate) fn parse(args: &[OsString]) -> Result<Parsed, UsageError> {
    let mut scanner = Scanner::new(args);
    let mut seen: Vec<&'static str> = Vec::new();
    let mut values: Vec<(&'static str, &[u8])> = Vec::new();
    let mut no_mcp = false;
    let mut mcp_read_only = false;
    let mut list_sessions = false;
    loop {
        let (name, inline) = match scanner.step()? {
            Step::Done => break,
            Step::Flag { name, inline } => (name, inline),
        };
        if let Some(&flag) = BOOL_FLAGS.iter().find(|flag| flag.as_bytes() == name) {
            once(&mut seen, flag)?;
            let raw = inline.unwrap_or(b"true");
            let value = convert(Scalar::Boolean, raw).map_err(|reason| {
                format!("invalid boolean value {} for -{flag}: {reason}", go_quote(raw))
            })?;
            let value = value == "true";
            match flag {
                "no-mcp" => no_mcp = value,
                "list-sessions" => list_sessions = value,
                _ => mcp_read_only = value,
            }
            continue;
        }
        let Some(&flag) = VALUE_FLAGS.iter().find(|flag| flag.as_bytes() == name) else {
            if is_help(name) {
                return Ok(Parsed::Help);
            }
            let hint = (name == b"session").then_some(SESSION_HINT);
            let known: Vec<&str> = VALUE_FLAGS.iter().chain(&BOOL_FLAGS).copied().collect();
            return Err(UsageError { message: scanner.unknown_option(&known), hint });
        };
        let value = inline.or_else(|| scanner.value()).ok_or_else(|| needs_argument(name))?;
        // `--set` may be given once per option; `apply` turns it and `--model` into config pairs.
        if flag != "set" {
            once(&mut seen, flag)?;
        }
        values.push((flag, value));
    }
    if !scanner.ended_at_double_dash() {
        return Err(match scanner.rest().first() {
            None => format!("missing the agent command: {SYNOPSIS}"),
            Some(word) => format!(
                "the agent command goes after --: termsprawlctl acp [OPTIONS] -- {} ...",
                word.to_string_lossy()
            ),
        }
        .into());
    }
    let agent = scanner.rest().to_vec();
    if agent.first().is_none_or(|program| program.is_empty()) {
        return Err(format!("missing the agent command after --: {SYNOPSIS}").into());
    }
    let mut options = Options::new(agent);
    options.mcp = !no_mcp;
    options.mcp_narrowing.read_only = mcp_read_only;
    options.list_sessions = list_sessions;
    for (flag, value) in values {
        apply(&mut options, flag, value)?;
    }
    if list_sessions {
        let conflicting =
            ["prompt", "resume", "mode", "set", "model"].into_iter().find(|flag| match *flag {
                "set" => options.config.iter().any(|(id, _)| id.is_some()),
                _ => seen.contains(flag),
            });
        if let Some(flag) = conflicting {
            return Err(format!(
                "-list-sessions lists the sessions and exits; it takes no -{flag}"
            )
            .into());
        }
    }
    Ok(Parsed::Run(Box::new(options)))
}

/// A flag may be given once.
fn once(seen: &mut Vec<&'static str>, flag: &'static str) -> Result<(), String> {
    if seen.contains(&flag) {
        return Err(format!("flag -{flag} given more than once"));
    }
    seen.push(flag);
    Ok(())
}

/// Sets one value option.
fn apply(options: &mut Options, flag: &str, raw: &[u8]) -> Result<(), String> {
    let invalid = |problem: &str| {
        format!("invalid value {} for flag -{flag}: {} {problem}", go_quote(raw), go_quote(raw))
    };
    let text = || std::str::from_utf8(raw).map_err(|_| invalid("is not valid UTF-8"));
    let path = || {
        if raw.is_empty() {
            return Err(invalid("is empty"));
        }
        Ok(PathBuf::from(OsStr::from_bytes(raw)))
    };
    match flag {
        "cwd" => options.cwd = Some(path()?),
        "prompt" => options.prompt = Some(text()?.to_owned()),
        "permission" => {
            options.permission = match text()? {
                "ask" => PermissionMode::Ask,
                "allow-once" => PermissionMode::AllowOnce,
                "deny" => PermissionMode::Deny,
                _ => return Err(invalid("is not one of ask, allow-once, deny")),
            }
        }
        "permission-timeout" => {
            let Ok(seconds) = text()?.parse::<f64>() else {
                return Err(invalid("is not a number"));
            };
            if !(seconds.is_finite() && 0.0 < seconds && seconds <= 1e9) {
                return Err(invalid("is not a positive number of seconds"));
            }
            options.permission_timeout = Duration::from_secs_f64(seconds);
        }
        "terminals" => {
            options.terminals = match text()? {
                "auto" => TerminalBackend::Auto,
                "canvas" => TerminalBackend::Canvas,
                "tmux" => TerminalBackend::Tmux,
                _ => return Err(invalid("is not one of auto, canvas, tmux")),
            }
        }
        "trace" => options.trace = Some(path()?),
        "mcp-tools" => options.mcp_narrowing.tools = Some(tool_names(text()?, &invalid)?),
        "mcp-max-wait-ms" => {
            let limit = termsprawl_protocol::results::MAX_CLIENT_WAIT_MS;
            let milliseconds =
                text()?.parse::<u64>().ok().filter(|ms| *ms <= limit).ok_or_else(|| {
                    invalid(&format!("is not a whole number of milliseconds from 0 to {limit}"))
                })?;
            options.mcp_narrowing.max_wait_ms = Some(milliseconds);
        }
        "mode" | "resume" | "model" => {
            let value = text()?;
            if value.trim().is_empty() {
                return Err(invalid("is empty"));
            }
            let value = value.to_owned();
            match flag {
                "mode" => options.mode = Some(value),
                "resume" => options.resume = Some(value),
                _ => options.config.push((None, value)),
            }
        }
        "set" => {
            let Some((id, value)) = text()?.split_once('=') else {
                return Err(invalid("is not ID=VALUE"));
            };
            if id.is_empty() {
                return Err(invalid("names no option before ="));
            }
            if options.config.iter().any(|(given, _)| given.as_deref() == Some(id)) {
                return Err(format!("flag -set gives option {id} more than once"));
            }
            options.config.push((Some(id.to_owned()), value.to_owned()));
        }
        _ => {
            options.agent_log =
                if raw == b"-" { AgentLog::Inherit } else { AgentLog::File(path()?) };
        }
    }
    Ok(())
}

/// The operations named by `--mcp-tools`: each must be an operation of the table.
fn tool_names(text: &str, invalid: &dyn Fn(&str) -> String) -> Result<Vec<String>, String> {
    let names: Vec<String> = text.split(',').map(|name| name.trim().to_owned()).collect();
    if names.iter().any(String::is_empty) {
        return Err(invalid("is not a comma-separated list of tool names"));
    }
    if let Some(unknown) = names.iter().find(|name| termsprawl_protocol::operation(name).is_none())
    {
        return Err(invalid(&format!("names an unknown tool {}", go_quote(unknown.as_bytes()))));
    }
    Ok(names)
}
