//! Quoting for a POSIX shell, the one rule behind every command line this workspace writes for
//! `sh` (a tmux session's `exec` line, an agent's launch script, an ACP terminal's command) or
//! shows to a person (a transcript, a recorded benchmark command; `spec/shell-conventions.md`).

/// `word` in single quotes, with each `'` written `'\''`: one word for `sh` whatever it holds.
pub fn single_quoted(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// `word` as a person would type it: as it is when it is not empty and holds only characters no
/// shell treats specially, otherwise [`single_quoted`].
pub fn shell_word(word: &str) -> String {
    if !word.is_empty() && word.chars().all(is_plain) {
        return word.to_owned();
    }
    single_quoted(word)
}

/// A character left bare in a word. `[` and `]` are among them, so that `[]` reads as the JSON
/// it is: a shell expands a bracket pattern only when it matches a file name.
fn is_plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_-./:@%+=,[]".contains(c)
}

#[cfg(test)]
mod tests;
