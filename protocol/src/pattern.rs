//! The pattern dialect of protocol 1.5.0 (`spec/protocol.md` §5): the regular expressions that
//! `terminal_search` and `terminal_wait` take with `regex: true`.
//!
//! Placeholder: the dialect's checker and its translation land with the spec's section on it.

/// Checks that `pattern` is in the dialect; the error is the reason shown after
/// `Invalid pattern: `.
pub fn check(pattern: &str) -> Result<(), String> {
    let _ = pattern;
    Ok(())
}

/// `pattern` (which passed [`check`]) in the syntax of Rust's `regex` crate, with the dialect's
/// meaning.
pub fn to_rust(pattern: &str) -> String {
    pattern.to_owned()
}
