//! The direct form: `termsprawlctl [--session F] [--out DIR] [--progress] OP [--flag value]...
//! [JSON | -]`,
//! and the program's own commands (`spec/shell-conventions.md` §2, §6, §10).

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use termsprawl_protocol::{ExitStatus, ToolRequest};
use termsprawl_transport::discovery::session_file;
use termsprawl_transport::long_wait::{WaitOptions, WaitProgress, call_waiting_blocking};

use crate::acp_command;
use crate::catalog::catalog;
use crate::convert::convert;
use crate::describe::{Command, Scalar};
use crate::flags::{Scanner, Step, is_help, needs_argument, undefined};
use crate::generate::{SHELLS, completions, man_page};
use crate::mode_help;
use crate::operation_args::{OperationArgs, parse_operation};
use crate::output::print_result;
use crate::quote::go_quote;
use crate::session::MISSING_SESSION;
use crate::skills::write_skills;
use crate::streams::Streams;
use crate::usage::{help, section, usage};

/// The program's version, as `--version` prints it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The line after every usage error.
const HELP_POINTER: &str = "Run `termsprawlctl help` for usage.";

/// The program options written before the command word.
#[derive(Debug, Default)]
struct ProgramOptions {
    session: Option<OsString>,
    out: Option<OsString>,
    version: bool,
    /// `--progress`: show a long wait's progress on stderr even when it is not a terminal.
    progress: bool,
}

/// Why a command line did not run.
enum Stop {
    /// Exit with this status; everything was printed.
    Status(ExitStatus),
    /// A usage error of the program.
    Usage(String),
}

impl From<String> for Stop {
    fn from(message: String) -> Stop {
        Stop::Usage(message)
    }
}

/// Runs a command line of the direct form.
pub(crate) fn run(
    args: &[OsString],
    session_env: Option<&OsStr>,
    streams: &mut Streams<'_>,
) -> ExitStatus {
    if args.is_empty() {
        let _ = streams.stderr.write_all(help(&catalog()).as_bytes());
        return ExitStatus::USAGE;
    }
    match dispatch(args, session_env, streams) {
        Ok(status) | Err(Stop::Status(status)) => status,
        Err(Stop::Usage(message)) => usage_error(streams, &message),
    }
}

fn usage_error(streams: &mut Streams<'_>, message: &str) -> ExitStatus {
    streams.error_line(&format!("termsprawlctl: {message}"));
    streams.error_line(HELP_POINTER);
    ExitStatus::USAGE
}

fn dispatch(
    args: &[OsString],
    session_env: Option<&OsStr>,
    streams: &mut Streams<'_>,
) -> Result<ExitStatus, Stop> {
    let mut scanner = Scanner::new(args);
    let mut options = ProgramOptions::default();
    loop {
        let (name, inline) = match scanner.step()? {
            Step::Done => break,
            Step::Flag { name, inline } => (name, inline),
        };
        match name {
            b"session" | b"out" => {
                let value =
                    inline.or_else(|| scanner.value()).ok_or_else(|| needs_argument(name))?;
                let value = Some(OsStr::from_bytes(value).to_owned());
                if name == b"session" {
                    options.session = value;
                } else {
                    options.out = value;
                }
            }
            b"version" | b"progress" => {
                let raw = inline.unwrap_or(b"true");
                let value = convert(Scalar::Boolean, raw).map_err(|reason| {
                    let name = String::from_utf8_lossy(name);
                    format!("invalid boolean value {} for -{name}: {reason}", go_quote(raw))
                })?;
                if name == b"version" {
                    options.version = value == "true";
                } else {
                    options.progress = value == "true";
                }
            }
            name if is_help(name) => return Ok(print_help(streams)),
            name => return Err(undefined(name).into()),
        }
    }
    if options.version {
        let _ = streams.write_stdout(format!("termsprawlctl {VERSION}\n").as_bytes());
        return Ok(ExitStatus::OK);
    }
    let Some((word, rest)) = scanner.rest().split_first() else {
        let _ = streams.stderr.write_all(help(&catalog()).as_bytes());
        return Ok(ExitStatus::USAGE);
    };
    match word.as_bytes() {
        b"help" => help_command(rest, streams),
        b"schema" => schema_command(rest, streams),
        b"usage" => {
            if !rest.is_empty() {
                return Err(Stop::Usage("usage takes no arguments".to_owned()));
            }
            Ok(print_stdout(streams, &usage(&catalog())))
        }
        b"skills" => skills_command(rest, options.out, streams),
        b"completions" => match rest {
            [shell] if SHELLS.iter().any(|name| shell.as_bytes() == name.as_bytes()) => {
                let mut script = Vec::new();
                completions(&shell.to_string_lossy(), &catalog(), &mut script);
                let _ = streams.write_stdout(&script);
                Ok(ExitStatus::OK)
            }
            [shell] => Err(format!(
                "unknown shell {}; completions are made for bash, zsh, fish, elvish and powershell",
                go_quote(shell.as_bytes())
            )
            .into()),
            _ => Err(Stop::Usage(
                "completions takes one shell: bash, zsh, fish, elvish or powershell".to_owned(),
            )),
        },
        b"man" => {
            if !rest.is_empty() {
                return Err(Stop::Usage("man takes no arguments".to_owned()));
            }
            let mut page = Vec::new();
            let _ = man_page(&catalog(), &mut page);
            let _ = streams.write_stdout(&page);
            Ok(ExitStatus::OK)
        }
        b"call" | b"doctor" | b"mcp" => Err(Stop::Usage(
            "call, doctor and mcp take only --session FILE, written as two arguments".to_owned(),
        )),
        b"acp" => {
            let session = session_file(options.session.as_deref(), session_env);
            Ok(acp_command::run(rest, session, streams))
        }
        _ => match find_command(word) {
            Some(command) => operation(&command, rest, &options, session_env, streams),
            None => Err(unknown_command(word).into()),
        },
    }
}

fn print_help(streams: &mut Streams<'_>) -> ExitStatus {
    print_stdout(streams, &help(&catalog()))
}

/// Prints text that is not a call's result; a failure to print it changes nothing.
fn print_stdout(streams: &mut Streams<'_>, text: &str) -> ExitStatus {
    let _ = streams.write_stdout(text.as_bytes());
    ExitStatus::OK
}

fn unknown_command(word: &OsStr) -> String {
    format!("unknown command {}", go_quote(word.as_bytes()))
}

/// The operation named `word`; reserved words never name one.
fn find_command(word: &OsStr) -> Option<Command> {
    let operation = termsprawl_protocol::operation(word.to_str()?)?;
    Some(Command::from_operation(operation))
}

fn help_command(rest: &[OsString], streams: &mut Streams<'_>) -> Result<ExitStatus, Stop> {
    match rest {
        [] => Ok(print_help(streams)),
        [word] => {
            let mode = match word.as_bytes() {
                b"acp" => Some(acp_command::HELP),
                b"mcp" => Some(mode_help::MCP),
                b"doctor" => Some(mode_help::DOCTOR),
                b"call" => Some(mode_help::CALL),
                _ => None,
            };
            if let Some(text) = mode {
                return Ok(print_stdout(streams, text));
            }
            let command = find_command(word).ok_or_else(|| unknown_command(word))?;
            Ok(print_stdout(streams, &section(&command)))
        }
        _ => Err(Stop::Usage("help takes one command".to_owned())),
    }
}

fn schema_command(rest: &[OsString], streams: &mut Streams<'_>) -> Result<ExitStatus, Stop> {
    let [word] = rest else { return Err(Stop::Usage("schema takes one command".to_owned())) };
    let command = find_command(word).ok_or_else(|| unknown_command(word))?;
    let mut text = serde_json::to_string_pretty(command.schema()).expect("a schema serialises");
    text.push('\n');
    Ok(print_stdout(streams, &text))
}

fn skills_command(
    rest: &[OsString],
    program_out: Option<OsString>,
    streams: &mut Streams<'_>,
) -> Result<ExitStatus, Stop> {
    let skills_error = |message: String| Stop::Usage(format!("skills: {message}"));
    let mut scanner = Scanner::new(rest);
    let mut out = program_out;
    loop {
        let (name, inline) = match scanner.step().map_err(skills_error)? {
            Step::Done => break,
            Step::Flag { name, inline } => (name, inline),
        };
        match name {
            b"out" => {
                let value = inline
                    .or_else(|| scanner.value())
                    .ok_or_else(|| skills_error(needs_argument(name)))?;
                out = Some(OsStr::from_bytes(value).to_owned());
            }
            name => return Err(skills_error(undefined(name))),
        }
    }
    if !scanner.rest().is_empty() {
        return Err(skills_error("takes only --out DIR".to_owned()));
    }
    let Some(out) = out.filter(|out| !out.is_empty()) else {
        return Err(skills_error("give the directory to write to with --out DIR".to_owned()));
    };
    match write_skills(&PathBuf::from(out), &catalog()) {
        Ok(paths) => {
            let mut listing = Vec::new();
            for path in paths {
                listing.extend_from_slice(path.as_os_str().as_bytes());
                listing.push(b'\n');
            }
            let _ = streams.write_stdout(&listing);
            Ok(ExitStatus::OK)
        }
        Err(error) => {
            streams.error_line(&format!("termsprawlctl: skills: {error}"));
            Ok(ExitStatus::FAILED)
        }
    }
}

/// One operation call: flags and JSON checked first, then the session, then the call.
fn operation(
    command: &Command,
    rest: &[OsString],
    options: &ProgramOptions,
    session_env: Option<&OsStr>,
    streams: &mut Streams<'_>,
) -> Result<ExitStatus, Stop> {
    let name = command.name();
    let in_operation = |message: String| Stop::Usage(format!("{name}: {message}"));
    let args = match parse_operation(command, rest, streams.stdin).map_err(in_operation)? {
        OperationArgs::Help => return Ok(print_stdout(streams, &section(command))),
        OperationArgs::Args(args) => args,
    };
    let Some(session) = session_file(options.session.as_deref(), session_env) else {
        streams.error_line(MISSING_SESSION);
        return Err(Stop::Status(ExitStatus::USAGE));
    };
    let request = ToolRequest::with_raw_args(Some(name.to_owned()), args)
        .expect("the arguments are checked JSON");
    let result = if options.progress || streams.stderr_is_terminal {
        let mut show = |progress: &WaitProgress| streams.progress_line(progress);
        let result =
            call_waiting_blocking(&session, &request, &WaitOptions::default(), Some(&mut show));
        streams.end_progress();
        result
    } else {
        call_waiting_blocking(&session, &request, &WaitOptions::default(), None)
    };
    let out = options.out.as_ref().filter(|out| !out.is_empty()).map(PathBuf::from);
    let hint = crate::session::gone_hint(&session, &result);
    let status = print_result(result, out, streams);
    if let Some(hint) = hint {
        streams.error_line(&hint);
    }
    Ok(status)
}
