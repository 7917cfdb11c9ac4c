//! Word wrap for the pane's width (`spec/acp.md` §2.17): a row of styled spans broken at spaces
//! into rows no wider than the pane, each continuation row starting with a prefix (a hanging
//! indent, a quote's bar); a word wider than a whole row is broken where the row ends. Pure: the UI
//! reads the width when it writes, so text still being drawn takes the width of that moment.

#[cfg(test)]
mod tests;

use crate::style::{Row, Span, Style, row_width, width};

/// One word or one run of spaces, in its styles.
#[derive(Debug)]
struct Token {
    space: bool,
    spans: Vec<Span>,
}

impl Token {
    fn width(&self) -> usize {
        row_width(&self.spans)
    }
}

/// `spans` wrapped to `columns`: the first row starts with `first`, the others with `rest`; spaces
/// where a row breaks are dropped.
pub(crate) fn wrap(spans: &[Span], columns: usize, first: &[Span], rest: &[Span]) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut row: Row = Vec::new();
    push(&mut row, first.to_vec());
    let mut column = row_width(&row);
    let mut has_word = false;
    let mut space: Option<Token> = None;
    for token in tokens(spans) {
        if token.space {
            if has_word {
                space = Some(token);
            } else if rows.is_empty() {
                // The line's own indent.
                column += token.width();
                push(&mut row, token.spans);
            }
            continue;
        }
        let word = token.width();
        let gap = space.as_ref().map_or(0, Token::width);
        if has_word && column + gap + word > columns {
            rows.push(std::mem::replace(&mut row, rest.to_vec()));
            column = row_width(&row);
            space = None;
        }
        if let Some(space) = space.take() {
            column += space.width();
            push(&mut row, space.spans);
        }
        if column + word <= columns {
            column += word;
            push(&mut row, token.spans);
        } else {
            // Wider than what is left of an empty row: broken where rows end.
            for span in token.spans {
                for c in span.text.chars() {
                    let c_width = width(c.encode_utf8(&mut [0; 4]));
                    if column + c_width > columns && column > row_width(rest) {
                        rows.push(std::mem::replace(&mut row, rest.to_vec()));
                        column = row_width(&row);
                    }
                    column += c_width;
                    push(&mut row, vec![Span::new(span.style, c.to_string())]);
                }
            }
        }
        has_word = true;
    }
    rows.push(row);
    rows
}

/// `spans` broken into rows of `columns` wherever a row ends, never at words (code): the first row
/// starts with `first`, the others with `rest`.
pub(crate) fn wrap_chars(
    spans: &[Span],
    columns: usize,
    first: &[Span],
    rest: &[Span],
) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut row: Row = Vec::new();
    push(&mut row, first.to_vec());
    let mut column = row_width(&row);
    let start = row_width(rest);
    for span in spans {
        for c in span.text.chars() {
            let c_width = width(c.encode_utf8(&mut [0; 4]));
            if column + c_width > columns && column > start {
                rows.push(std::mem::replace(&mut row, rest.to_vec()));
                column = start;
            }
            column += c_width;
            push(&mut row, vec![Span::new(span.style, c.to_string())]);
        }
    }
    rows.push(row);
    rows
}

/// A plain line wrapped with its hanging indent ([`hanging_indent`]).
pub(crate) fn wrap_line(style: Style, line: &str, columns: usize) -> Vec<Row> {
    let indent = hanging_indent(line, columns);
    wrap(&[Span::new(style, line)], columns, &[], &[Span::plain(" ".repeat(indent))])
}

/// Where the continuation rows of a line of the front end's own start: under the text after a
/// two-space gap in the first two thirds of the row (`/help`'s `  /name <hint>   description`), else
/// after a leading `[tag] ` (`[permission] …`, a plan's `  [x] …`), a bullet or a number, else
/// under the line's own indent.
pub(crate) fn hanging_indent(line: &str, columns: usize) -> usize {
    let lead = line.len() - line.trim_start_matches(' ').len();
    let rest = &line[lead..];
    if let Some(gap) = rest.find("  ") {
        let after = rest[gap..].len() - rest[gap..].trim_start_matches(' ').len();
        let column = lead + width(&rest[..gap]) + after;
        if gap > 0 && column <= columns * 2 / 3 {
            return column;
        }
    }
    if rest.starts_with('[')
        && let Some(end) = rest.find("] ")
        && end < 24
    {
        return lead + width(&rest[..end]) + 2;
    }
    for bullet in ["• ", "- ", "* "] {
        if rest.starts_with(bullet) {
            return lead + 2;
        }
    }
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits > 0 && rest[digits..].starts_with(". ") {
        return lead + digits + 2;
    }
    lead
}

/// Appends spans, joining a span to the last one when they share a style; empty ones are left
/// out.
fn push(row: &mut Row, spans: Vec<Span>) {
    for span in spans.into_iter().filter(|span| !span.text.is_empty()) {
        match row.last_mut() {
            Some(last) if last.style == span.style => last.text.push_str(&span.text),
            _ => row.push(span),
        }
    }
}

/// The words and runs of spaces of `spans`, each in its styles.
fn tokens(spans: &[Span]) -> Vec<Token> {
    let mut tokens: Vec<Token> = Vec::new();
    for span in spans {
        for c in span.text.chars() {
            let space = c == ' ';
            match tokens.last_mut() {
                Some(token) if token.space == space => match token.spans.last_mut() {
                    Some(last) if last.style == span.style => last.text.push(c),
                    _ => token.spans.push(Span::new(span.style, c.to_string())),
                },
                _ => {
                    tokens.push(Token { space, spans: vec![Span::new(span.style, c.to_string())] });
                }
            }
        }
    }
    tokens
}
