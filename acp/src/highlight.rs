//! Code block highlighting for common languages (`spec/acp.md` §2.17): a small hand-written lexer
//! that marks keywords, strings, comments and numbers, line by line, carrying a block comment or
//! a multi-line string from one line to the next. Written by hand rather than with `syntect`
//! (ARCHITECTURE.md, "acp"): `termsprawlctl` is also the one-shot tool caller whose size and start
//! are measured, and a code block in a chat needs the four classes, not a grammar.

#[cfg(test)]
mod tests;

use crate::style::{Span, Style};

/// The lexical rules of one language.
#[derive(Debug)]
pub(crate) struct Language {
    line_comments: &'static [&'static str],
    block_comment: Option<(&'static str, &'static str)>,
    /// Quote characters of one-line strings.
    quotes: &'static [char],
    /// Delimiters of strings that may span lines (`"""`, a backtick).
    long_strings: &'static [&'static str],
    /// Keywords in groups, so that kindred languages share the words they have in common.
    keywords: &'static [&'static [&'static str]],
    /// Words shown as literals (`true`, `None`).
    literals: &'static [&'static str],
}

/// The keywords JavaScript and the C family share.
const C_LIKE_KEYWORDS: &[&str] = &[
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "default",
    "delete",
    "do",
    "else",
    "enum",
    "extends",
    "for",
    "if",
    "implements",
    "import",
    "interface",
    "new",
    "private",
    "public",
    "return",
    "static",
    "switch",
    "this",
    "throw",
    "try",
    "void",
    "while",
];

const C_LIKE_LITERALS: &[&str] = &["true", "false", "null", "nullptr", "NULL", "nil", "undefined"];

/// The rules most languages share with C (`//` and `/* */` comments, both quotes, no multi-line
/// strings): a language is written as what it does differently.
const C_LIKE: Language = Language {
    line_comments: &["//"],
    block_comment: Some(("/*", "*/")),
    quotes: &['"', '\''],
    long_strings: &[],
    keywords: &[],
    literals: C_LIKE_LITERALS,
};

/// The rules scripts and data files share (`#` comments, both quotes, no block comments).
const HASH_LIKE: Language = Language {
    line_comments: &["#"],
    block_comment: None,
    quotes: &['"', '\''],
    long_strings: &[],
    keywords: &[],
    literals: &[],
};

const RUST: Language = Language {
    quotes: &['"'],
    keywords: &[&[
        "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum",
        "extern", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
        "pub", "ref", "return", "self", "Self", "static", "struct", "super", "trait", "type",
        "unsafe", "use", "where", "while",
    ]],
    literals: &["true", "false", "None", "Some", "Ok", "Err"],
    ..C_LIKE
};

const PYTHON: Language = Language {
    long_strings: &["\"\"\"", "'''"],
    keywords: &[&[
        "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
        "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is",
        "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with",
        "yield",
    ]],
    literals: &["True", "False", "None", "self"],
    ..HASH_LIKE
};

const JAVASCRIPT: Language = Language {
    long_strings: &["`"],
    keywords: &[
        C_LIKE_KEYWORDS,
        &[
            "async",
            "await",
            "export",
            "finally",
            "from",
            "function",
            "in",
            "instanceof",
            "let",
            "of",
            "readonly",
            "type",
            "typeof",
            "var",
            "yield",
        ],
    ],
    ..C_LIKE
};

const SHELL: Language = Language {
    keywords: &[&[
        "case", "do", "done", "elif", "else", "esac", "export", "fi", "for", "function", "if",
        "in", "local", "return", "then", "until", "while",
    ]],
    literals: &["true", "false"],
    ..HASH_LIKE
};

const GO: Language = Language {
    long_strings: &["`"],
    keywords: &[&[
        "break",
        "case",
        "chan",
        "const",
        "continue",
        "default",
        "defer",
        "else",
        "fallthrough",
        "for",
        "func",
        "go",
        "goto",
        "if",
        "import",
        "interface",
        "map",
        "package",
        "range",
        "return",
        "select",
        "struct",
        "switch",
        "type",
        "var",
    ]],
    ..C_LIKE
};

const C_FAMILY: Language = Language {
    keywords: &[
        C_LIKE_KEYWORDS,
        &[
            "abstract",
            "auto",
            "char",
            "double",
            "extern",
            "final",
            "float",
            "goto",
            "include",
            "int",
            "long",
            "namespace",
            "package",
            "protected",
            "short",
            "signed",
            "sizeof",
            "struct",
            "template",
            "throws",
            "typedef",
            "union",
            "unsigned",
            "using",
            "volatile",
        ],
    ],
    ..C_LIKE
};

const DATA: Language =
    Language { literals: &["true", "false", "null", "yes", "no", "on", "off"], ..HASH_LIKE };

const SQL: Language = Language {
    line_comments: &["--"],
    quotes: &['\''],
    keywords: &[&[
        "SELECT", "FROM", "WHERE", "INSERT", "INTO", "VALUES", "UPDATE", "SET", "DELETE", "CREATE",
        "TABLE", "DROP", "ALTER", "JOIN", "LEFT", "RIGHT", "INNER", "OUTER", "ON", "AND", "OR",
        "NOT", "NULL", "AS", "ORDER", "BY", "GROUP", "HAVING", "LIMIT", "PRIMARY", "KEY", "select",
        "from", "where", "insert", "into", "values", "update", "set", "delete", "create", "table",
        "join", "on", "and", "or", "not", "as", "order", "by", "group", "limit",
    ]],
    literals: &["NULL", "TRUE", "FALSE", "null", "true", "false"],
    ..C_LIKE
};

/// The language of a code block's info string (`rust`, `py`, `ts`…), if it is one we know.
pub(crate) fn language(info: &str) -> Option<&'static Language> {
    let name = info.split([' ', ',', '{']).next().unwrap_or_default().to_ascii_lowercase();
    Some(match name.as_str() {
        "rust" | "rs" => &RUST,
        "python" | "py" | "python3" => &PYTHON,
        "javascript" | "js" | "jsx" | "mjs" | "typescript" | "ts" | "tsx" => &JAVASCRIPT,
        "sh" | "bash" | "shell" | "zsh" | "console" | "shellsession" => &SHELL,
        "go" | "golang" => &GO,
        "c" | "h" | "cpp" | "c++" | "cc" | "hpp" | "java" | "kotlin" | "kt" | "csharp" | "cs"
        | "swift" => &C_FAMILY,
        "json" | "jsonc" | "toml" | "yaml" | "yml" | "ini" => &DATA,
        "sql" => &SQL,
        _ => return None,
    })
}

/// What is still open at the end of a line.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) enum Open {
    #[default]
    Nothing,
    /// A block comment.
    Comment,
    /// A string that spans lines, closed by this delimiter.
    String(&'static str),
}

/// One line of a code block in its styles; `open` is what the previous line left open, and is
/// updated for the next line.
pub(crate) fn line(language: &Language, text: &str, open: &mut Open) -> Vec<Span> {
    let mut spans: Vec<Span> = Vec::new();
    let mut add = |style: Style, piece: &str| {
        if piece.is_empty() {
            return;
        }
        match spans.last_mut() {
            Some(last) if last.style == style => last.text.push_str(piece),
            _ => spans.push(Span::new(style, piece)),
        }
    };
    let mut rest = text;
    loop {
        match open.clone() {
            Open::Comment => {
                let (_, end) = language.block_comment.unwrap_or(("", "*/"));
                let Some(at) = rest.find(end) else {
                    add(Style::CodeComment, rest);
                    return spans;
                };
                add(Style::CodeComment, &rest[..at + end.len()]);
                rest = &rest[at + end.len()..];
                *open = Open::Nothing;
            }
            Open::String(end) => {
                let Some(at) = rest.find(end) else {
                    add(Style::CodeString, rest);
                    return spans;
                };
                add(Style::CodeString, &rest[..at + end.len()]);
                rest = &rest[at + end.len()..];
                *open = Open::Nothing;
            }
            Open::Nothing => {}
        }
        let Some(c) = rest.chars().next() else {
            return spans;
        };
        if language.line_comments.iter().any(|start| rest.starts_with(start)) {
            add(Style::CodeComment, rest);
            return spans;
        }
        if let Some((start, _)) = language.block_comment
            && rest.starts_with(start)
        {
            add(Style::CodeComment, start);
            rest = &rest[start.len()..];
            *open = Open::Comment;
            continue;
        }
        if let Some(delimiter) =
            language.long_strings.iter().find(|start| rest.starts_with(**start))
        {
            add(Style::CodeString, delimiter);
            rest = &rest[delimiter.len()..];
            *open = Open::String(delimiter);
            continue;
        }
        if language.quotes.contains(&c) {
            let end = string_end(rest, c);
            add(Style::CodeString, &rest[..end]);
            rest = &rest[end..];
            continue;
        }
        if c.is_alphanumeric() || c == '_' {
            let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
            let word = &rest[..end];
            let style = if c.is_ascii_digit() || language.literals.contains(&word) {
                Style::CodeNumber
            } else if language.keywords.iter().any(|group| group.contains(&word)) {
                Style::CodeKeyword
            } else {
                Style::Plain
            };
            add(style, word);
            rest = &rest[end..];
            continue;
        }
        add(Style::Plain, &rest[..c.len_utf8()]);
        rest = &rest[c.len_utf8()..];
    }
}

/// The end of the one-line string that starts `text` with `quote` (after its closing quote, or the
/// end of the line), escapes skipped.
fn string_end(text: &str, quote: char) -> usize {
    let mut escaped = false;
    for (index, c) in text.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            c if c == quote => return index + c.len_utf8(),
            _ => {}
        }
    }
    text.len()
}
