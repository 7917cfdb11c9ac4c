//! The key grammar of `terminal_input`'s `keys` (protocol 1.4.0): named keys and modifier chords,
//! so that an agent never puts a control character into an argument.
//!
//! A key is a named key ([`NAMED_KEYS`]) or a chord `C-<k>`, `M-<k>`, `S-<k>` (combinable, each
//! modifier at most once, `C-M-x`) where `<k>` is one printable character or a named key. A bare
//! printable character is not a key: it is text. A server sends each key as the program in the
//! terminal expects it (application cursor mode included); headless lets tmux encode it.

/// The named keys, in the contract's order.
pub const NAMED_KEYS: [&str; 28] = [
    "Enter",
    "Tab",
    "BTab",
    "Escape",
    "Space",
    "Backspace",
    "Delete",
    "Insert",
    "Home",
    "End",
    "PageUp",
    "PageDown",
    "Up",
    "Down",
    "Left",
    "Right",
    "F1",
    "F2",
    "F3",
    "F4",
    "F5",
    "F6",
    "F7",
    "F8",
    "F9",
    "F10",
    "F11",
    "F12",
];

/// Most keys in one `terminal_input` call.
pub const MAX_KEYS: usize = 256;

/// A key of the grammar, parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key<'a> {
    /// `C-`.
    pub control: bool,
    /// `M-` (Alt, Meta).
    pub meta: bool,
    /// `S-`.
    pub shift: bool,
    /// What the modifiers apply to.
    pub base: KeyBase<'a>,
}

/// The key a chord's modifiers apply to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyBase<'a> {
    /// One of [`NAMED_KEYS`].
    Named(&'a str),
    /// One printable character (only with a modifier).
    Char(char),
}

/// Parses `key` by the grammar of the module doc; `None` when it is not a key.
pub fn parse_key(key: &str) -> Option<Key<'_>> {
    let mut parsed = Key { control: false, meta: false, shift: false, base: KeyBase::Char(' ') };
    let mut rest = key;
    loop {
        // A modifier prefix counts only when something follows it (`C--` is Ctrl and `-`).
        let flag = match rest.as_bytes() {
            [b'C', b'-', _, ..] => &mut parsed.control,
            [b'M', b'-', _, ..] => &mut parsed.meta,
            [b'S', b'-', _, ..] => &mut parsed.shift,
            _ => break,
        };
        if *flag {
            return None;
        }
        *flag = true;
        rest = &rest[2..];
    }
    if let Some(named) = NAMED_KEYS.iter().find(|named| **named == rest) {
        parsed.base = KeyBase::Named(named);
        return Some(parsed);
    }
    let mut chars = rest.chars();
    let modified = parsed.control || parsed.meta || parsed.shift;
    match (chars.next(), chars.next()) {
        (Some(c), None) if modified && !c.is_control() && !c.is_whitespace() => {
            parsed.base = KeyBase::Char(c);
            Some(parsed)
        }
        _ => None,
    }
}

/// Whether `key` is a key of the grammar.
pub fn is_valid_key(key: &str) -> bool {
    parse_key(key).is_some()
}

#[cfg(test)]
mod tests;
