//! The words after an operation's name, parsed the way the direct form does without calling
//! anything (`spec/shell-conventions.md` §3 – §5): flags scanned by `flags`, combined with the JSON
//! argument by `json_arg`.

use std::ffi::OsString;
use std::io::Read;

use crate::describe::Command;
use crate::{flags, json_arg, quote};

/// What the words after an operation's name ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OperationArgs {
    /// `-h` or `--help` (no flag has that name): print the operation's help.
    Help,
    /// The `args` JSON text the call sends: the JSON argument byte for byte when there are no
    /// flags, the merged object when there are, `{}` when there is neither.
    Args(String),
}

/// Parses the words after an operation's name the way the direct form does (flags, then at most
/// one JSON argument or `-` for `stdin`; `spec/shell-conventions.md` §3 – §5) without calling
/// anything: the `args` that `termsprawlctl OPERATION WORDS...` would send, or its usage error
/// (the message after `termsprawlctl: OPERATION: `). `stdin` is read only for `-`.
pub fn operation_args(
    operation: &str,
    words: &[OsString],
    stdin: &mut dyn Read,
) -> Result<OperationArgs, String> {
    let Some(operation) = termsprawl_protocol::operation(operation) else {
        return Err(format!("unknown command {}", quote::go_quote(operation.as_bytes())));
    };
    parse_operation(&Command::from_operation(operation), words, stdin)
}

/// [`operation_args`] for a described command; the direct form's one parsing path.
pub(crate) fn parse_operation(
    command: &Command,
    words: &[OsString],
    stdin: &mut dyn Read,
) -> Result<OperationArgs, String> {
    let (flags, positionals) = match flags::scan_operation(command, words)? {
        flags::Scanned::Help => return Ok(OperationArgs::Help),
        flags::Scanned::Args(flags, positionals) => (flags, positionals),
    };
    Ok(OperationArgs::Args(
        match json_arg::build_args(command.name(), &flags, positionals, stdin)? {
            json_arg::Args::Empty => "{}".to_owned(),
            json_arg::Args::Raw(text) | json_arg::Args::Merged(text) => text,
        },
    ))
}
