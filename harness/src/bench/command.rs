//! Command lines of the measured programs: [`Invocation`] (a program and its arguments, spawned
//! directly, never through a shell) and [`Template`] (a `--vs` command as the user typed it, with
//! an optional `{}` placeholder).

use std::ffi::OsString;
use std::fmt;
use std::process::Command;

use termsprawl_protocol::shell::shell_word;

/// A program and its arguments, spawned directly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The program: a path, or a name looked up in `PATH`.
    pub program: OsString,
    /// The arguments.
    pub args: Vec<OsString>,
}

impl Invocation {
    /// `program` without arguments.
    pub fn new(program: impl Into<OsString>) -> Invocation {
        Invocation { program: program.into(), args: Vec::new() }
    }

    /// This invocation with `argument` appended.
    #[must_use]
    pub fn arg(mut self, argument: impl Into<OsString>) -> Invocation {
        self.args.push(argument.into());
        self
    }

    /// This invocation with `arguments` appended.
    #[must_use]
    pub fn args<I, S>(mut self, arguments: I) -> Invocation
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(arguments.into_iter().map(Into::into));
        self
    }

    /// A [`Command`] for it; standard streams are left to the caller.
    pub fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command.args(&self.args);
        command
    }
}

/// The command line quoted for a POSIX shell, to be read and pasted.
impl fmt::Display for Invocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&shell_word(&self.program.to_string_lossy()))?;
        for argument in &self.args {
            write!(f, " {}", shell_word(&argument.to_string_lossy()))?;
        }
        Ok(())
    }
}

/// The word that [`Template::invocation`] replaces with the arguments.
pub const PLACEHOLDER: &str = "{}";

/// A command given as one string, such as `--vs 'node dist/termsprawlctl.js'`.
///
/// The string is split into words the way a POSIX shell splits a simple command, without any
/// expansion: blanks separate words, `'…'` is literal, `"…"` is literal except that `\` escapes
/// `"`, `\`, `$` and `` ` ``, and outside quotes `\` escapes the next character. A word that is
/// exactly `{}` is replaced by the arguments of the measurement; without one, the arguments are
/// appended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    words: Vec<String>,
}

/// Why a [`Template`] could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplateError {
    /// No words at all.
    Empty,
    /// A quote was opened and not closed.
    UnclosedQuote(char),
    /// The text ends with a lone backslash.
    TrailingBackslash,
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TemplateError::Empty => f.write_str("the command is empty"),
            TemplateError::UnclosedQuote(quote) => write!(f, "the command has an unclosed {quote}"),
            TemplateError::TrailingBackslash => f.write_str("the command ends with a backslash"),
        }
    }
}

impl std::error::Error for TemplateError {}

impl Template {
    /// Splits `text` into words.
    pub fn parse(text: &str) -> Result<Template, TemplateError> {
        let words = split_words(text)?;
        if words.is_empty() {
            return Err(TemplateError::Empty);
        }
        Ok(Template { words })
    }

    /// The words, as split.
    pub fn words(&self) -> &[String] {
        &self.words
    }

    /// The invocation with `arguments` in place of each `{}` word, or appended when there is none.
    pub fn invocation(&self, arguments: &[OsString]) -> Invocation {
        let mut words: Vec<OsString> = Vec::new();
        let mut placed = false;
        for word in &self.words {
            if word == PLACEHOLDER {
                words.extend(arguments.iter().cloned());
                placed = true;
            } else {
                words.push(OsString::from(word));
            }
        }
        if !placed {
            words.extend(arguments.iter().cloned());
        }
        let mut words = words.into_iter();
        let program = words.next().unwrap_or_default();
        Invocation { program, args: words.collect() }
    }
}

/// Splits a command into words (see [`Template`]).
pub fn split_words(text: &str) -> Result<Vec<String>, TemplateError> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' | '\r' => {
                if let Some(done) = word.take() {
                    words.push(done);
                }
            }
            '\'' => {
                let current = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(inner) => current.push(inner),
                        None => return Err(TemplateError::UnclosedQuote('\'')),
                    }
                }
            }
            '"' => {
                let current = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(escaped @ ('"' | '\\' | '$' | '`')) => current.push(escaped),
                            Some(other) => {
                                current.push('\\');
                                current.push(other);
                            }
                            None => return Err(TemplateError::UnclosedQuote('"')),
                        },
                        Some(inner) => current.push(inner),
                        None => return Err(TemplateError::UnclosedQuote('"')),
                    }
                }
            }
            '\\' => match chars.next() {
                Some(escaped) => word.get_or_insert_with(String::new).push(escaped),
                None => return Err(TemplateError::TrailingBackslash),
            },
            other => word.get_or_insert_with(String::new).push(other),
        }
    }
    words.extend(word);
    Ok(words)
}

#[cfg(test)]
mod tests;
