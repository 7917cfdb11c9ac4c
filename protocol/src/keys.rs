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

/// The modifier prefixes of a chord, in the order of [`Key`]'s flags: `C-` (`control`), `M-`
/// (`meta`), `S-` (`shift`).
pub const MODIFIERS: [&str; 3] = ["C-", "M-", "S-"];

/// Parses `key` by the grammar of the module doc; `None` when it is not a key.
pub fn parse_key(key: &str) -> Option<Key<'_>> {
    let mut held = [false; MODIFIERS.len()];
    let mut rest = key;
    // A modifier prefix counts only when something follows it (`C--` is Ctrl and `-`).
    while let Some(index) =
        MODIFIERS.iter().position(|prefix| rest.len() > prefix.len() && rest.starts_with(prefix))
    {
        if held[index] {
            return None;
        }
        held[index] = true;
        rest = &rest[MODIFIERS[index].len()..];
    }
    let [control, meta, shift] = held;
    if let Some(named) = NAMED_KEYS.iter().find(|named| **named == rest) {
        return Some(Key { control, meta, shift, base: KeyBase::Named(named) });
    }
    let mut chars = rest.chars();
    let modified = control || meta || shift;
    match (chars.next(), chars.next()) {
        (Some(c), None) if modified && !c.is_control() && !c.is_whitespace() => {
            Some(Key { control, meta, shift, base: KeyBase::Char(c) })
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
