//! The whole operation table described as commands, and the documents rendered from it: the usage
//! Markdown, the help, the skills and the `clap` tree of the completions and the man page.

use crate::describe::Command;
use crate::{generate, skills, usage};

/// Every operation of the table, described as a command.
pub(crate) fn catalog() -> Vec<Command> {
    termsprawl_protocol::operations().iter().map(Command::from_operation).collect()
}

/// The whole usage Markdown of `termsprawlctl usage`: the Calling section, then one section per
/// operation in table order (`spec/shell-conventions.md` §7). `cargo xtask codegen` writes it
/// into `docs/reference/`.
pub fn usage_markdown() -> String {
    usage::usage(&catalog())
}

/// The help of `termsprawlctl help`: the Calling section, an index of the operations and the
/// program's own commands.
pub fn help_markdown() -> String {
    usage::help(&catalog())
}

/// The skills of `termsprawlctl skills`, as (directory name, `SKILL.md` content) per guide topic.
pub fn skill_documents() -> Vec<(String, String)> {
    skills::skill_documents(&catalog())
}

/// The `clap` command tree that the completion scripts and the man page are generated from
/// (never used to parse).
pub fn clap_command() -> clap::Command {
    generate::clap_command(&catalog())
}
