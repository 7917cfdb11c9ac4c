//! The options of `termsprawlctl acp` (`acp.md` §2.1), tokenised by the rules of Go's `flag`
//! package (shell-conventions.md §3). `--` before the agent's argv is required.

#[cfg(test)]
mod tests;

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::time::Duration;

/// The help text of `termsprawlctl acp --help`.
pub(crate) const HELP: &str = "\
Usage: termsprawlctl [--session FILE] acp [OPTIONS] -- AGENT [ARG]...

Runs an Agent Client Protocol (ACP v1) agent as a chat in this terminal.
Type a prompt and press Enter; a line of three double quotes (\"\"\") starts and ends a multi-line prompt.
/quit or end of input ends the session; Ctrl-C cancels the running turn, twice while idle quits.

Options:
  --cwd DIR                     the session's working directory and the root for file access (default: current directory)
  --prompt TEXT                 send one prompt, show the turn, exit 0 on end_turn and 1 otherwise
  --permission ask|allow-once|deny
                                who answers the agent's permission asks: the person (default), or a policy by option kind
  --permission-timeout SECONDS  how long a permission ask waits for the person; then it is cancelled (default: 600)
  --terminals auto|canvas|tmux  where agent terminals run: canvas nodes, when the tool server offers terminal_run and terminal_wait (auto), always (canvas), or the local tmux server (tmux) (default: auto)
  --no-mcp                      do not hand the agent termsprawl's MCP bridge
  --trace FILE                  append every wire message as a JSON line
  --agent-log FILE|-            where the agent's stderr goes; - copies it to stderr (default: a new temporary file)

Exit status: 0 end_turn or a session ended by the person; 1 any other stop reason or an agent failure;
2 a usage error or an agent that could not be started.
";

/// The default of `--permission-timeout`.
const DEFAULT_PERMISSION_TIMEOUT: Duration = Duration::from_mins(10);

/// Who answers `session/request_permission` (`acp.md` §2.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PermissionMode {
    /// The person decides.
    Ask,
    /// Select the first option of kind `allow_once`, else cancel.
    AllowOnce,
    /// Select the first `reject_once`, else the first `reject_always`, else cancel.
    Deny,
}

/// Where agent terminals run (`acp.md` §2.10).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TerminalBackend {
    /// Canvas terminals when the app can provide them, else the local tmux server.
    Auto,
    /// Canvas terminals, or a failure at start.
    Canvas,
    /// Always the local tmux server.
    Tmux,
}

/// Where the agent's stderr goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AgentLog {
    /// A new temporary file whose path is printed at start.
    Temporary,
    /// Copied to our stderr.
    Inherit,
    /// Appended to this file.
    File(PathBuf),
}

/// The parsed options.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Options {
    pub(crate) cwd: Option<PathBuf>,
    pub(crate) prompt: Option<String>,
    pub(crate) permission: PermissionMode,
    pub(crate) permission_timeout: Duration,
    pub(crate) terminals: TerminalBackend,
    pub(crate) mcp: bool,
    pub(crate) trace: Option<PathBuf>,
    pub(crate) agent_log: AgentLog,
    pub(crate) agent: Vec<OsString>,
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Parsed {
    /// Print the help.
    Help,
    /// Run the front end.
    Run(Options),
}

/// A usage error; its message follows Go's `flag` wording.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct UsageError(String);

/// The value flags, and the one boolean flag `no-mcp`.
const VALUE_FLAGS: [&str; 7] =
    ["cwd", "prompt", "permission", "permission-timeout", "terminals", "trace", "agent-log"];
const BOOL_FLAG: &str = "no-mcp";

/// Parses the arguments after the word `acp`.
pub(crate) fn parse(args: Vec<OsString>) -> Result<Parsed, UsageError> {
    let mut values: Vec<(&'static str, OsString)> = Vec::new();
    let mut no_mcp: Option<bool> = None;
    let mut args = args.into_iter();
    let agent: Vec<OsString> = loop {
        let Some(arg) = args.next() else {
            return Err(UsageError(
                "missing the agent command: termsprawlctl acp [OPTIONS] -- AGENT [ARG]..."
                    .to_owned(),
            ));
        };
        let bytes = arg.as_bytes();
        if bytes == b"--" {
            break args.collect();
        }
        if bytes.len() < 2 || bytes[0] != b'-' {
            return Err(UsageError(format!(
                "the agent command goes after --: termsprawlctl acp [OPTIONS] -- {} ...",
                arg.to_string_lossy()
            )));
        }
        let dashes = if bytes[1] == b'-' { 2 } else { 1 };
        let rest = &bytes[dashes..];
        if rest.is_empty() || rest[0] == b'-' || rest[0] == b'=' {
            return Err(UsageError(format!("bad flag syntax: {}", arg.to_string_lossy())));
        }
        let (name, inline_value) = match rest.iter().position(|&byte| byte == b'=') {
            Some(at) => (&rest[..at], Some(OsStr::from_bytes(&rest[at + 1..]).to_owned())),
            None => (rest, None),
        };
        let name = String::from_utf8_lossy(name).into_owned();
        if name == BOOL_FLAG {
            if no_mcp.is_some() {
                return Err(UsageError(format!("flag -{name} given more than once")));
            }
            no_mcp = Some(match inline_value {
                None => true,
                Some(value) => parse_bool(&name, &value)?,
            });
            continue;
        }
        let Some(&flag) = VALUE_FLAGS.iter().find(|flag| **flag == name) else {
            if name == "h" || name == "help" {
                return Ok(Parsed::Help);
            }
            return Err(UsageError(format!("flag provided but not defined: -{name}")));
        };
        let value = match inline_value {
            Some(value) => value,
            None => match args.next() {
                Some(value) => value,
                None => return Err(UsageError(format!("flag needs an argument: -{name}"))),
            },
        };
        if values.iter().any(|(given, _)| *given == flag) {
            return Err(UsageError(format!("flag -{name} given more than once")));
        }
        values.push((flag, value));
    };
    if agent.first().is_none_or(|program| program.is_empty()) {
        return Err(UsageError(
            "missing the agent command after --: termsprawlctl acp [OPTIONS] -- AGENT [ARG]..."
                .to_owned(),
        ));
    }
    let mut options = Options {
        cwd: None,
        prompt: None,
        permission: PermissionMode::Ask,
        permission_timeout: DEFAULT_PERMISSION_TIMEOUT,
        terminals: TerminalBackend::Auto,
        mcp: !no_mcp.unwrap_or(false),
        trace: None,
        agent_log: AgentLog::Temporary,
        agent,
    };
    for (flag, value) in values {
        apply(&mut options, flag, value)?;
    }
    Ok(Parsed::Run(options))
}

/// Sets one value option.
fn apply(options: &mut Options, flag: &str, value: OsString) -> Result<(), UsageError> {
    match flag {
        "cwd" => options.cwd = Some(PathBuf::from(non_empty(flag, value)?)),
        "prompt" => options.prompt = Some(utf8(flag, &value)?.to_owned()),
        "permission" => {
            options.permission = match utf8(flag, &value)? {
                "ask" => PermissionMode::Ask,
                "allow-once" => PermissionMode::AllowOnce,
                "deny" => PermissionMode::Deny,
                other => {
                    return Err(invalid(flag, other, "is not one of ask, allow-once, deny"));
                }
            }
        }
        "permission-timeout" => {
            options.permission_timeout = parse_seconds(flag, utf8(flag, &value)?)?;
        }
        "terminals" => {
            options.terminals = match utf8(flag, &value)? {
                "auto" => TerminalBackend::Auto,
                "canvas" => TerminalBackend::Canvas,
                "tmux" => TerminalBackend::Tmux,
                other => return Err(invalid(flag, other, "is not one of auto, canvas, tmux")),
            }
        }
        "trace" => options.trace = Some(PathBuf::from(non_empty(flag, value)?)),
        _ => {
            let value = non_empty(flag, value)?;
            options.agent_log =
                if value == "-" { AgentLog::Inherit } else { AgentLog::File(PathBuf::from(value)) };
        }
    }
    Ok(())
}

fn invalid(flag: &str, value: &str, problem: &str) -> UsageError {
    UsageError(format!("invalid value {value:?} for flag -{flag}: {value:?} {problem}"))
}

fn utf8<'a>(flag: &str, value: &'a OsStr) -> Result<&'a str, UsageError> {
    value.to_str().ok_or_else(|| {
        let lossy = value.to_string_lossy();
        invalid(flag, &lossy, "is not valid UTF-8")
    })
}

fn non_empty(flag: &str, value: OsString) -> Result<OsString, UsageError> {
    if value.is_empty() {
        return Err(invalid(flag, "", "is empty"));
    }
    Ok(value)
}

/// Go's boolean spellings.
fn parse_bool(flag: &str, value: &OsStr) -> Result<bool, UsageError> {
    match value.as_bytes() {
        b"1" | b"t" | b"T" | b"TRUE" | b"true" | b"True" => Ok(true),
        b"0" | b"f" | b"F" | b"FALSE" | b"false" | b"False" => Ok(false),
        _ => Err(invalid(flag, &value.to_string_lossy(), "is not true or false")),
    }
}

/// A positive, finite number of seconds, fractions allowed.
fn parse_seconds(flag: &str, value: &str) -> Result<Duration, UsageError> {
    let Ok(seconds) = value.parse::<f64>() else {
        return Err(invalid(flag, value, "is not a number"));
    };
    if !(seconds.is_finite() && seconds > 0.0 && seconds <= 1e9) {
        return Err(invalid(flag, value, "is not a positive number of seconds"));
    }
    Ok(Duration::from_secs_f64(seconds))
}
