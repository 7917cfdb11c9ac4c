//! Shell completions and the man page, from a `clap` command tree built from the operation table.
//!
//! The tree exists only for these generators: the command line itself is parsed by hand
//! ([`crate::flags`]), so clap never sees a real argument list.

use std::io::{self, Write};

use clap::builder::PossibleValuesParser;
use clap::{Arg, ArgAction, ValueHint};
use clap_complete::Shell;

use crate::describe::{Command, FlagKind, Param, Scalar};

/// The shells `termsprawlctl completions` knows, as their names.
pub(crate) const SHELLS: [&str; 5] = ["bash", "zsh", "fish", "elvish", "powershell"];

/// The whole program as a clap command: program options, every operation with its flags, and
/// the program's own commands.
pub(crate) fn clap_command(commands: &[Command]) -> clap::Command {
    let operation_names: Vec<String> = commands.iter().map(|c| c.name().to_owned()).collect();
    let mut root = clap::Command::new("termsprawlctl")
        .version(env!("CARGO_PKG_VERSION"))
        .about("Call the operations of the termsprawl agent tool protocol from a shell")
        .disable_help_subcommand(true)
        .arg(
            Arg::new("session")
                .long("session")
                .value_name("FILE")
                .value_hint(ValueHint::FilePath)
                .help("The session file; without it TERMSPRAWL_SESSION_FILE is used"),
        )
        .arg(
            Arg::new("out")
                .long("out")
                .value_name("DIR")
                .value_hint(ValueHint::DirPath)
                .help("Where images in results are saved"),
        );
    for command in commands {
        let first_line = command.description().trim().lines().next().unwrap_or_default().to_owned();
        let mut sub = clap::Command::new(command.name().to_owned())
            .about(first_line)
            .disable_help_flag(true)
            .disable_version_flag(true);
        let mut names = Vec::new();
        sub = add_flags(sub, command.params(), &mut names);
        if !names.iter().any(|name| name == "h" || name == "help") {
            sub = sub.arg(
                Arg::new("termsprawlctl-help")
                    .short('h')
                    .long("help")
                    .action(ArgAction::Help)
                    .help("Print this operation's usage"),
            );
        }
        sub = sub.arg(
            Arg::new("termsprawlctl-json")
                .value_name("JSON | -")
                .help("The arguments as one JSON object, or - to read it from stdin"),
        );
        root = root.subcommand(sub);
    }
    root.subcommand(
        clap::Command::new("help").about("Print the help, or the usage of one operation").arg(
            Arg::new("operation").value_parser(PossibleValuesParser::new(
                operation_names
                    .iter()
                    .cloned()
                    .chain(["acp", "mcp", "doctor", "call"].map(str::to_owned)),
            )),
        ),
    )
    .subcommand(
        clap::Command::new("schema")
            .about("Print the JSON Schema of an operation's arguments")
            .arg(
                Arg::new("operation")
                    .required(true)
                    .value_parser(PossibleValuesParser::new(operation_names.clone())),
            ),
    )
    .subcommand(clap::Command::new("usage").about("Print the usage of every operation as Markdown"))
    .subcommand(clap::Command::new("skills").about("Write one skill file per guide topic").arg(
        Arg::new("out").long("out").value_name("DIR").required(true).value_hint(ValueHint::DirPath),
    ))
    .subcommand(
        clap::Command::new("completions")
            .about("Print a shell completion script")
            .arg(Arg::new("shell").required(true).value_parser(PossibleValuesParser::new(SHELLS))),
    )
    .subcommand(clap::Command::new("man").about("Print the manual page as roff"))
    .subcommand(clap::Command::new("doctor").about("Check the connection to termsprawl"))
    .subcommand(
        clap::Command::new("call")
            .about("Run an operation and print the whole result as JSON")
            .arg(
                Arg::new("operation")
                    .value_parser(PossibleValuesParser::new(operation_names.clone())),
            )
            .arg(Arg::new("json_args").value_name("JSON_ARGS")),
    )
    .subcommand(mcp_command(&operation_names))
    .subcommand(acp_command())
}

/// `mcp` with its narrowing flags.
fn mcp_command(operation_names: &[String]) -> clap::Command {
    clap::Command::new("mcp")
        .about("Serve the operations to an MCP host over stdio")
        .arg(
            Arg::new("read-only")
                .long("read-only")
                .action(ArgAction::SetTrue)
                .help("Serve only the read-only operations"),
        )
        .arg(
            Arg::new("tools")
                .long("tools")
                .value_name("NAME,NAME...")
                .value_delimiter(',')
                .value_parser(PossibleValuesParser::new(operation_names.to_vec()))
                .help("Serve only the named operations"),
        )
}

/// `acp` with its options (`termsprawlctl acp --help` is the reference).
fn acp_command() -> clap::Command {
    let value = |name: &'static str, value_name: &'static str, help: &'static str| {
        Arg::new(name).long(name).value_name(value_name).help(help).action(ArgAction::Set)
    };
    clap::Command::new("acp")
        .about("Run an ACP agent as a chat in this terminal, with termsprawl's tools")
        .arg(value("cwd", "DIR", "The session's working directory").value_hint(ValueHint::DirPath))
        .arg(value("prompt", "TEXT", "Send one prompt and exit by its stop reason"))
        .arg(
            value("permission", "MODE", "Who answers permission asks")
                .value_parser(PossibleValuesParser::new(["ask", "allow-once", "deny"])),
        )
        .arg(value("permission-timeout", "SECONDS", "How long a permission ask waits"))
        .arg(
            value("terminals", "BACKEND", "Where agent terminals run")
                .value_parser(PossibleValuesParser::new(["auto", "tmux"])),
        )
        .arg(
            Arg::new("no-mcp")
                .long("no-mcp")
                .action(ArgAction::SetTrue)
                .help("Do not hand the agent termsprawl's MCP bridge"),
        )
        .arg(
            Arg::new("mcp-read-only")
                .long("mcp-read-only")
                .action(ArgAction::SetTrue)
                .help("Hand the agent only the read-only termsprawl tools"),
        )
        .arg(value("mcp-tools", "NAME,...", "Hand the agent only these termsprawl tools"))
        .arg(value("mcp-max-wait-ms", "MS", "The longest wait in one termsprawl tool call"))
        .arg(
            value("trace", "FILE", "Append every wire message as a JSON line")
                .value_hint(ValueHint::FilePath),
        )
        .arg(
            value("agent-log", "FILE", "Where the agent's stderr goes; - copies it to stderr")
                .value_hint(ValueHint::FilePath),
        )
        .arg(
            Arg::new("agent")
                .value_name("AGENT")
                .num_args(1..)
                .last(true)
                .required(true)
                .value_hint(ValueHint::CommandWithArguments)
                .help("The agent's command line, after --"),
        )
}

fn add_flags(mut sub: clap::Command, params: &[Param], names: &mut Vec<String>) -> clap::Command {
    for param in params {
        if let (Some(flag), Some(kind)) = (param.flag(), param.flag_kind()) {
            names.push(flag.to_owned());
            let description = param.description().split_whitespace().collect::<Vec<_>>().join(" ");
            let mut arg = Arg::new(flag.to_owned()).long(flag.to_owned()).help(description);
            arg = match kind {
                FlagKind::Scalar(Scalar::Boolean) => arg.action(ArgAction::SetTrue),
                FlagKind::Array(Scalar::Boolean) => arg.action(ArgAction::Count),
                FlagKind::Scalar(scalar) => arg.value_name(scalar.as_str()).action(ArgAction::Set),
                FlagKind::Array(scalar) => {
                    arg.value_name(scalar.as_str()).action(ArgAction::Append)
                }
                FlagKind::Map(scalar) => {
                    arg.value_name(format!("key={}", scalar.as_str())).action(ArgAction::Append)
                }
            };
            let values: Vec<String> =
                param.enum_values().iter().filter_map(|v| v.as_str().map(str::to_owned)).collect();
            if !values.is_empty() && matches!(kind, FlagKind::Scalar(Scalar::String)) {
                arg = arg.value_parser(PossibleValuesParser::new(values));
            }
            sub = sub.arg(arg);
        }
        sub = add_flags(sub, param.fields(), names);
    }
    sub
}

/// Writes the completion script for `shell` (one of [`SHELLS`]).
pub(crate) fn completions(shell: &str, commands: &[Command], out: &mut dyn Write) {
    let shell = match shell {
        "bash" => Shell::Bash,
        "zsh" => Shell::Zsh,
        "fish" => Shell::Fish,
        "elvish" => Shell::Elvish,
        _ => Shell::PowerShell,
    };
    let mut command = clap_command(commands);
    clap_complete::generate(shell, &mut command, "termsprawlctl", out);
}

/// Writes the man page as roff.
pub(crate) fn man_page(commands: &[Command], out: &mut dyn Write) -> io::Result<()> {
    clap_mangen::Man::new(clap_command(commands)).render(out)
}

#[cfg(test)]
mod tests;
