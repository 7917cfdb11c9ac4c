//! Unit tests of the texts and patterns: compile errors, the alternative that matched, overlap.

use super::{Matcher, PATTERN_REACH, engine_reason};

#[test]
fn a_pattern_outside_the_dialect_or_the_engine_is_refused_with_the_reason() {
    // The dialect's checker speaks first (spec/protocol.md §5.1) ...
    let error = Matcher::new(&["(unclosed".to_owned()], true).unwrap_err();
    assert_eq!(error.message(), "Invalid pattern: unclosed ( at 0");
    let error = Matcher::new(&["ok".to_owned(), "a{3,2}".to_owned()], true).unwrap_err();
    assert_eq!(
        error.message(),
        "Invalid pattern: repetition at 1 has its least count above its largest"
    );
    // ... and the engine's reason, should it refuse what the dialect passed, is one line.
    let unclosed = ["(", "unclosed"].concat();
    let engine = regex::Regex::new(&unclosed).unwrap_err();
    assert_eq!(engine_reason(&engine), "unclosed group");
    // The same text as a literal is fine.
    assert!(Matcher::new(&["(unclosed".to_owned()], false).is_ok());
}

#[test]
fn the_earliest_match_names_the_text_that_matched() {
    let texts = ["error:".to_owned(), "PASSED".to_owned(), "FAILED".to_owned()];
    let any = Matcher::new(&texts, false).unwrap();
    assert_eq!(any.find_at("ok PASSED, error: x", 0), Some((1, 3)));
    assert_eq!(any.find_at("ok PASSED, error: x", 4), Some((0, 11)));
    assert_eq!(any.find_at("nothing", 0), None);
    // Literal texts are literal: a dot is a dot.
    assert_eq!(Matcher::literal("a.c").find_at("abc a.c", 0), Some((0, 4)));
}

#[test]
fn the_overlap_is_a_texts_length_or_a_patterns_reach() {
    let texts = ["ab".to_owned(), "été!".to_owned()];
    assert_eq!(Matcher::new(&texts, false).unwrap().overlap(), 3);
    assert_eq!(Matcher::new(&["a+".to_owned()], true).unwrap().overlap(), PATTERN_REACH);
}

#[test]
fn a_patterns_match_lies_within_one_line_and_a_texts_may_span_lines() {
    let spaced = Matcher::new(&[r"a\s+b".to_owned()], true).unwrap();
    assert_eq!(spaced.find_at("a\nb", 0), None);
    assert_eq!(spaced.find_at("xa\nb a  b", 0), Some((0, 5)));
    // The line still being printed is a line as far as it has come.
    let port = Matcher::new(&[r"port \d+$".to_owned()], true).unwrap();
    assert_eq!(port.find_at("boot\nport 80", 0), Some((0, 5)));
    // ^ is a line start, not where the search starts.
    let start = Matcher::new(&["^b".to_owned()], true).unwrap();
    assert_eq!(start.find_at("ab\nb", 1), Some((0, 3)));
    assert_eq!(Matcher::literal("a\nb").find_at("xa\nb", 0), Some((0, 1)));
}
