//! Go's `%q` quoting (`strconv.Quote`), which the flag and JSON messages use so that they read as
//! the Go `flag` package's do (`spec/shell-conventions.md` §3).

use std::fmt::Write as _;

/// `bytes` as a double-quoted Go string literal; bytes that are not UTF-8 are written `\xNN`.
pub(crate) fn go_quote(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    out.push('"');
    let mut rest = bytes;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(text) => {
                push_escaped(&mut out, text);
                rest = &[];
            }
            Err(error) => {
                let (valid, after) = rest.split_at(error.valid_up_to());
                push_escaped(&mut out, std::str::from_utf8(valid).unwrap_or_default());
                // Go decodes one invalid byte at a time.
                let _ = write!(out, "\\x{:02x}", after[0]);
                rest = &after[1..];
            }
        }
    }
    out.push('"');
    out
}

/// Go's `%q` of a list of strings: `["a" "b"]`.
pub(crate) fn go_quote_list<'a>(items: impl IntoIterator<Item = &'a [u8]>) -> String {
    let quoted: Vec<String> = items.into_iter().map(go_quote).collect();
    format!("[{}]", quoted.join(" "))
}

fn push_escaped(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if is_printable(c) => out.push(c),
            c if c < ' ' || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c if u32::from(c) < 0x1_0000 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => {
                let _ = write!(out, "\\U{:08x}", u32::from(c));
            }
        }
    }
}

/// An approximation of Go's `unicode.IsPrint`: graphic characters and the ASCII space.
fn is_printable(c: char) -> bool {
    if (' '..='~').contains(&c) {
        return true;
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    // Rust's debug escaping knows which characters are printable; a leading letter keeps it from
    // escaping combining marks, which Go prints.
    let probe = format!("a{c}");
    probe.escape_debug().eq(probe.chars())
}

#[cfg(test)]
mod tests;
