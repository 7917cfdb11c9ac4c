//! The pattern dialect of protocol 1.5.0 (`spec/protocol.md` §5.1): the regular expressions that
//! `terminal_search` and `terminal_wait` take with `regex: true`.
//!
//! The dialect is the common part of Rust's `regex` crate and ECMAScript's `RegExp` with the `u`
//! flag, with one meaning: a pattern means what `new RegExp(pattern, "u")` means when it is
//! tested against one line of output (the text between two line feeds, without them). It has
//! nothing that needs backtracking (no look-around, no back-references), so it runs in linear
//! time on an automaton engine, and `\d`, `\w`, `\b` are ASCII as ECMAScript has them.
//! [`check`] refuses everything outside the dialect with the reason that follows
//! `Invalid pattern: `; [`to_rust`] writes an accepted pattern for the `regex` crate so that it
//! finds, in a text of many lines, exactly the matches the pattern has in each line (nothing it
//! matches contains a line feed, and `^`/`$` are line anchors).
//!
//! The checker is hand-written because the protocol crate depends on `serde`, `serde_json` and
//! `schemars` only (no parser of the `regex` crate's family), and because its reasons are contract:
//! the TypeScript validator (`xtask/src/codegen/typescript/pattern.ts`) gives the same reason for
//! every pattern of `protocol/tests/validation-cases.json`.

use std::fmt::Write as _;

/// The largest count of a repetition (`{n}`, `{n,}`, `{n,m}`).
pub const MAX_REPEAT: u32 = 1000;
/// The largest size of a pattern: its characters, those of a repeated part counted as many times
/// as the part may repeat (its largest count, its least count plus one when it has no largest).
pub const MAX_PATTERN_SIZE: u64 = 2000;
/// The deepest nesting of groups.
pub const MAX_GROUP_DEPTH: usize = 32;
/// Where a size stops growing (2^53 − 1): sizes are exact below it in every JSON peer, so a
/// TypeScript checker reports the same size.
const SIZE_CAP: u64 = 9_007_199_254_740_991;

/// What `\s` matches, as ECMAScript has it (`WhiteSpace` and `LineTerminator`), as ranges.
pub const SPACE_RANGES: [(char, char); 10] = [
    ('\t', '\r'),
    (' ', ' '),
    ('\u{a0}', '\u{a0}'),
    ('\u{1680}', '\u{1680}'),
    ('\u{2000}', '\u{200a}'),
    ('\u{2028}', '\u{2029}'),
    ('\u{202f}', '\u{202f}'),
    ('\u{205f}', '\u{205f}'),
    ('\u{3000}', '\u{3000}'),
    ('\u{feff}', '\u{feff}'),
];

/// Checks that `pattern` is in the dialect; the error is the reason shown after
/// `Invalid pattern: ` (positions count characters from 0).
pub fn check(pattern: &str) -> Result<(), String> {
    parse(pattern).map(|_| ())
}

/// `pattern` (which passed [`check`]) in the syntax of Rust's `regex` crate, with the dialect's
/// meaning: run over a text of many lines it finds exactly the matches the pattern has in each
/// line.
///
/// # Panics
///
/// When `pattern` is not in the dialect.
pub fn to_rust(pattern: &str) -> String {
    let node = parse(pattern).unwrap_or_else(|reason| panic!("not in the dialect: {reason}"));
    let mut out = String::new();
    render(&node, &mut out);
    out
}

/// A parsed pattern.
#[derive(Debug)]
enum Node {
    Literal(char),
    /// `.`: any character but a line terminator.
    Dot,
    /// `\d`, `\w`, `\s` (negated: `\D`, `\W`, `\S`).
    Perl(Perl, bool),
    Class {
        negated: bool,
        items: Vec<Item>,
    },
    Start,
    End,
    /// `\b` (negated: `\B`).
    Boundary(bool),
    Group {
        capturing: bool,
        inner: Box<Node>,
    },
    Concat(Vec<Node>),
    Alternation(Vec<Node>),
    Repeat {
        inner: Box<Node>,
        quantifier: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Perl {
    Digit,
    Word,
    Space,
}

#[derive(Debug)]
enum Item {
    Range(char, char),
    Perl(Perl, bool),
}

/// A parsed node and its size (see [`MAX_PATTERN_SIZE`]).
type Sized = (Node, u64);

/// What an escape stands for.
enum Escape {
    Char(char),
    Perl(Perl, bool),
    Boundary(bool),
}

struct Parser {
    chars: Vec<char>,
    at: usize,
    depth: usize,
}

fn parse(pattern: &str) -> Result<Node, String> {
    let mut parser = Parser { chars: pattern.chars().collect(), at: 0, depth: 0 };
    let (node, size) = parser.alternation()?;
    if let Some(')') = parser.peek() {
        return Err(format!("unmatched ) at {}", parser.at));
    }
    if size > MAX_PATTERN_SIZE {
        return Err(format!(
            "the pattern's size is {size}, above {MAX_PATTERN_SIZE} (a repeated part counts as often as it may repeat)"
        ));
    }
    Ok(node)
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.at + offset).copied()
    }

    fn alternation(&mut self) -> Result<Sized, String> {
        let mut branches = vec![self.concat()?];
        while self.peek() == Some('|') {
            self.at += 1;
            branches.push(self.concat()?);
        }
        if branches.len() == 1 {
            return Ok(branches.remove(0));
        }
        let size =
            branches.iter().fold(branches.len() as u64 - 1, |total, (_, size)| add(total, *size));
        Ok((Node::Alternation(branches.into_iter().map(|(node, _)| node).collect()), size))
    }

    fn concat(&mut self) -> Result<Sized, String> {
        let mut nodes = Vec::new();
        let mut size: u64 = 0;
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            let (atom, atom_size) = self.atom()?;
            let quantifiable = !matches!(atom, Node::Start | Node::End | Node::Boundary(_));
            let (node, node_size) = match self.quantifier()? {
                None => (atom, atom_size),
                Some((start, _, _)) if !quantifiable => {
                    return Err(format!("nothing to repeat at {start}"));
                }
                Some((_, quantifier, factor)) => {
                    let size = add(
                        atom_size.saturating_mul(factor).min(SIZE_CAP),
                        quantifier.chars().count() as u64,
                    );
                    (Node::Repeat { inner: Box::new(atom), quantifier }, size)
                }
            };
            if let Some((start, _, _)) = self.quantifier()? {
                return Err(format!("nothing to repeat at {start}"));
            }
            nodes.push(node);
            size = add(size, node_size);
        }
        if nodes.len() == 1 {
            return Ok((nodes.remove(0), size));
        }
        Ok((Node::Concat(nodes), size))
    }

    /// A quantifier at the position, if one is there: its position, its text (with a lazy `?`)
    /// and how many times it repeats its part at most (see [`MAX_PATTERN_SIZE`]).
    fn quantifier(&mut self) -> Result<Option<(usize, String, u64)>, String> {
        let start = self.at;
        let factor = match self.peek() {
            Some('*' | '+' | '?') => {
                self.at += 1;
                1
            }
            Some('{') => match self.counts()? {
                Some(factor) => factor,
                None => return Err(format!("lone {{ at {start}: escape it as \\{{")),
            },
            _ => return Ok(None),
        };
        if self.peek() == Some('?') {
            self.at += 1;
        }
        let text = self.chars[start..self.at].iter().collect();
        Ok(Some((start, text, factor)))
    }

    /// `{n}`, `{n,}` or `{n,m}` at the position: how many times it repeats at most, or `None`
    /// (nothing consumed) when the text there is not one.
    fn counts(&mut self) -> Result<Option<u64>, String> {
        let start = self.at;
        let mut at = start + 1;
        let least = self.number(&mut at);
        let Some(least) = least else { return Ok(None) };
        let most = match self.chars.get(at) {
            Some('}') => Some(least),
            Some(',') => {
                at += 1;
                match self.chars.get(at) {
                    Some('}') => None,
                    _ => match self.number(&mut at) {
                        Some(most) if self.chars.get(at) == Some(&'}') => Some(most),
                        _ => return Ok(None),
                    },
                }
            }
            _ => return Ok(None),
        };
        self.at = at + 1;
        if least > u64::from(MAX_REPEAT) || most.is_some_and(|most| most > u64::from(MAX_REPEAT)) {
            return Err(format!("a repetition count above {MAX_REPEAT} at {start}"));
        }
        if most.is_some_and(|most| most < least) {
            return Err(format!("repetition at {start} has its least count above its largest"));
        }
        Ok(Some(most.unwrap_or(least + 1).max(1)))
    }

    /// The decimal digits at `at` (advanced past them), saturating.
    fn number(&self, at: &mut usize) -> Option<u64> {
        let start = *at;
        let mut value: u64 = 0;
        while let Some(digit) = self.chars.get(*at).and_then(|c| c.to_digit(10)) {
            value = value.saturating_mul(10).saturating_add(u64::from(digit));
            *at += 1;
        }
        (*at > start).then_some(value)
    }

    fn atom(&mut self) -> Result<Sized, String> {
        let start = self.at;
        let c = self.peek().expect("atom is called before the end");
        let node = match c {
            '*' | '+' | '?' => return Err(format!("nothing to repeat at {start}")),
            '{' => {
                if self.counts()?.is_some() {
                    return Err(format!("nothing to repeat at {start}"));
                }
                return Err(format!("lone {{ at {start}: escape it as \\{{"));
            }
            '}' | ']' => return Err(format!("lone {c} at {start}: escape it as \\{c}")),
            '(' => return self.group(),
            '[' => return self.class(),
            '.' => {
                self.at += 1;
                Node::Dot
            }
            '^' => {
                self.at += 1;
                Node::Start
            }
            '$' => {
                self.at += 1;
                Node::End
            }
            '\\' => match self.escape(false)? {
                Escape::Char(c) => Node::Literal(c),
                Escape::Perl(perl, negated) => Node::Perl(perl, negated),
                Escape::Boundary(negated) => Node::Boundary(negated),
            },
            '\n' => return Err(line_feed(start)),
            _ => {
                self.at += 1;
                Node::Literal(c)
            }
        };
        Ok((node, (self.at - start) as u64))
    }

    fn group(&mut self) -> Result<Sized, String> {
        let start = self.at;
        self.at += 1;
        let mut capturing = true;
        if self.peek() == Some('?') {
            match (self.peek_at(1), self.peek_at(2)) {
                (Some(':'), _) => {
                    capturing = false;
                    self.at += 2;
                }
                (Some('=' | '!'), _) | (Some('<'), Some('=' | '!')) => {
                    return Err(format!("look-around is not supported, at {start}"));
                }
                (Some('<' | 'P'), _) => {
                    return Err(format!(
                        "named groups are not supported, at {start}: use (…) or (?:…)"
                    ));
                }
                _ => return Err(format!("inline flags are not supported, at {start}")),
            }
        }
        self.depth += 1;
        if self.depth > MAX_GROUP_DEPTH {
            return Err(format!("groups nested deeper than {MAX_GROUP_DEPTH} at {start}"));
        }
        let (inner, inner_size) = self.alternation()?;
        if self.peek() != Some(')') {
            return Err(format!("unclosed ( at {start}"));
        }
        self.at += 1;
        self.depth -= 1;
        let syntax = if capturing { 2 } else { 4 };
        Ok((Node::Group { capturing, inner: Box::new(inner) }, add(inner_size, syntax)))
    }

    fn class(&mut self) -> Result<Sized, String> {
        let start = self.at;
        self.at += 1;
        let negated = self.peek() == Some('^');
        if negated {
            self.at += 1;
        }
        let first = self.at;
        if self.peek() == Some(']') {
            return Err(format!("empty class at {start}"));
        }
        let mut items = Vec::new();
        loop {
            let Some(c) = self.peek() else { return Err(format!("unclosed [ at {start}")) };
            if c == ']' {
                self.at += 1;
                break;
            }
            let at = self.at;
            let low = self.class_atom(first)?;
            let is_range = self.peek() == Some('-')
                && self.peek_at(1).is_some_and(|next| next != ']')
                && self.peek_at(1).is_some();
            if !is_range {
                items.push(match low {
                    Escape::Char(c) => Item::Range(c, c),
                    Escape::Perl(perl, negated) => Item::Perl(perl, negated),
                    Escape::Boundary(_) => unreachable!("class_atom refuses \\b"),
                });
                continue;
            }
            self.double_punctuation()?;
            self.at += 1;
            let high = self.class_atom(first)?;
            match (low, high) {
                (Escape::Char(low), Escape::Char(high)) if low <= high => {
                    items.push(Item::Range(low, high));
                }
                (Escape::Char(_), Escape::Char(_)) => {
                    return Err(format!("range at {at} runs backwards"));
                }
                _ => return Err(format!("range with a class escape at {at}")),
            }
        }
        Ok((Node::Class { negated, items }, (self.at - start) as u64))
    }

    /// One member of a class at the position (`first`: where the class's members begin).
    fn class_atom(&mut self, first: usize) -> Result<Escape, String> {
        let at = self.at;
        let c = self.peek().ok_or_else(|| "unclosed class".to_owned())?;
        self.double_punctuation()?;
        match c {
            '[' => Err(format!("[ inside a class at {at}: escape it as \\[")),
            '\\' => self.escape(true),
            '\n' => Err(line_feed(at)),
            '-' if at != first && self.peek_at(1) != Some(']') => {
                Err(format!("- at {at} inside a class: escape it as \\- or put it first or last"))
            }
            _ => {
                self.at += 1;
                Ok(Escape::Char(c))
            }
        }
    }

    /// Refuses `&&`, `--` and `~~` at the position (set operations of the `regex` crate).
    fn double_punctuation(&self) -> Result<(), String> {
        match (self.peek(), self.peek_at(1)) {
            (Some(c @ ('&' | '-' | '~')), Some(next)) if c == next => {
                Err(format!("{c}{c} inside a class at {}: escape one of them", self.at))
            }
            _ => Ok(()),
        }
    }

    /// The escape at the position (a backslash), consumed.
    fn escape(&mut self, in_class: bool) -> Result<Escape, String> {
        let start = self.at;
        let Some(c) = self.peek_at(1) else { return Err(format!("trailing \\ at {start}")) };
        self.at += 2;
        let escape = match c {
            'd' | 'D' => Escape::Perl(Perl::Digit, c == 'D'),
            'w' | 'W' => Escape::Perl(Perl::Word, c == 'W'),
            's' | 'S' => Escape::Perl(Perl::Space, c == 'S'),
            'b' | 'B' if in_class => {
                return Err(format!("\\{c} is not supported inside a class, at {start}"));
            }
            'b' | 'B' => Escape::Boundary(c == 'B'),
            't' => Escape::Char('\t'),
            'r' => Escape::Char('\r'),
            'f' => Escape::Char('\u{c}'),
            'v' => Escape::Char('\u{b}'),
            'n' => return Err(line_feed(start)),
            'x' => Escape::Char(self.hex_escape(start)?),
            'u' => Escape::Char(self.unicode_escape(start)?),
            '1'..='9' | 'k' => {
                return Err(format!("back-references are not supported, at {start}"));
            }
            'p' | 'P' => {
                return Err(format!("Unicode property escapes are not supported, at {start}"));
            }
            '^' | '$' | '\\' | '.' | '*' | '+' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '|'
            | '/' => Escape::Char(c),
            '-' if in_class => Escape::Char(c),
            _ => return Err(format!("unknown escape \\{c} at {start}")),
        };
        if let Escape::Char('\n') = escape {
            return Err(line_feed(start));
        }
        Ok(escape)
    }

    /// The character of `\xHH` (the `x` consumed).
    fn hex_escape(&mut self, start: usize) -> Result<char, String> {
        let digits = self.hex_digits(2);
        if digits.len() != 2 {
            return Err(format!("\\x at {start} needs two hex digits"));
        }
        self.at += 2;
        Ok(char::from_u32(u32::from_str_radix(&digits, 16).expect("hex")).expect("below 256"))
    }

    /// The character of `\uHHHH` or `\u{H…}` (the `u` consumed).
    fn unicode_escape(&mut self, start: usize) -> Result<char, String> {
        let malformed = || format!("\\u at {start} needs four hex digits or {{1 to 6 hex digits}}");
        let value = if self.peek() == Some('{') {
            self.at += 1;
            let mut digits = String::new();
            while let Some(c) = self.peek().filter(char::is_ascii_hexdigit) {
                digits.push(c);
                self.at += 1;
            }
            if digits.is_empty() || digits.len() > 6 || self.peek() != Some('}') {
                return Err(malformed());
            }
            self.at += 1;
            u32::from_str_radix(&digits, 16).expect("hex")
        } else {
            let digits = self.hex_digits(4);
            if digits.len() != 4 {
                return Err(malformed());
            }
            self.at += 4;
            u32::from_str_radix(&digits, 16).expect("hex")
        };
        if (0xd800..=0xdfff).contains(&value) {
            return Err(format!("\\u at {start} names a surrogate, which is not a character"));
        }
        char::from_u32(value).ok_or_else(|| format!("\\u at {start} is above 10FFFF"))
    }

    /// Up to `count` hex digits at the position (not consumed).
    fn hex_digits(&self, count: usize) -> String {
        self.chars[self.at..].iter().take(count).take_while(|c| c.is_ascii_hexdigit()).collect()
    }
}

/// `a + b`, at most [`SIZE_CAP`].
fn add(a: u64, b: u64) -> u64 {
    a.saturating_add(b).min(SIZE_CAP)
}

fn line_feed(at: usize) -> String {
    format!("a line feed at {at}: a pattern matches within one line")
}

/// Writes `node` for the `regex` crate (see [`to_rust`]).
fn render(node: &Node, out: &mut String) {
    match node {
        Node::Literal(c) => char_literal(*c, out),
        Node::Dot => out.push_str(r"[^\n\r\x{2028}\x{2029}]"),
        Node::Perl(perl, negated) => {
            out.push_str(if *negated { "[^" } else { "[[" });
            perl_ranges(*perl, out);
            out.push_str(if *negated { r"\n]" } else { r"]&&[^\n]]" });
        }
        Node::Class { negated, items } => {
            out.push_str(if *negated { "[^" } else { "[[" });
            for item in items {
                match item {
                    Item::Range(low, high) => {
                        char_literal(*low, out);
                        if low != high {
                            out.push('-');
                            char_literal(*high, out);
                        }
                    }
                    Item::Perl(perl, negated) => {
                        out.push_str(if *negated { "[^" } else { "[" });
                        perl_ranges(*perl, out);
                        out.push(']');
                    }
                }
            }
            out.push_str(if *negated { r"\n]" } else { r"]&&[^\n]]" });
        }
        Node::Start => out.push_str("(?m:^)"),
        Node::End => out.push_str("(?m:$)"),
        Node::Boundary(negated) => out.push_str(if *negated { r"(?-u:\B)" } else { r"(?-u:\b)" }),
        Node::Group { capturing, inner } => {
            out.push_str(if *capturing { "(" } else { "(?:" });
            render(inner, out);
            out.push(')');
        }
        Node::Concat(nodes) => nodes.iter().for_each(|node| render(node, out)),
        Node::Alternation(branches) => {
            for (index, branch) in branches.iter().enumerate() {
                if index > 0 {
                    out.push('|');
                }
                render(branch, out);
            }
        }
        Node::Repeat { inner, quantifier } => {
            render(inner, out);
            out.push_str(quantifier);
        }
    }
}

/// The ranges of a Perl class, for inside a `regex` class.
fn perl_ranges(perl: Perl, out: &mut String) {
    match perl {
        Perl::Digit => out.push_str("0-9"),
        Perl::Word => out.push_str("0-9A-Za-z_"),
        Perl::Space => {
            for (low, high) in SPACE_RANGES {
                char_literal(low, out);
                if low != high {
                    out.push('-');
                    char_literal(high, out);
                }
            }
        }
    }
}

/// `c` as the `regex` crate reads it literally, in a class or outside one.
fn char_literal(c: char, out: &mut String) {
    if c.is_ascii_alphanumeric() || c == ' ' || c == '_' {
        out.push(c);
    } else {
        let _ = write!(out, "\\x{{{:X}}}", u32::from(c));
    }
}

#[cfg(test)]
mod tests;
