//! The key grammar: every named key, chords, and what is not a key.

use crate::keys::{KeyBase, NAMED_KEYS, is_valid_key, parse_key};

#[test]
fn every_named_key_alone_and_in_chords() {
    for named in NAMED_KEYS {
        assert_eq!(parse_key(named).map(|key| key.base), Some(KeyBase::Named(named)), "{named}");
        for chord in [format!("C-{named}"), format!("M-{named}"), format!("S-C-M-{named}")] {
            assert!(is_valid_key(&chord), "{chord}");
        }
    }
}

#[test]
fn chords_of_printable_characters() {
    let key = parse_key("C-M-x").unwrap();
    assert!(key.control && key.meta && !key.shift);
    assert_eq!(key.base, KeyBase::Char('x'));
    for chord in ["C-c", "C-d", "M-b", "C--", "C-[", "M-;", "C-é", "S-a", "M-M", "C-C"] {
        assert!(is_valid_key(chord), "{chord}");
    }
    assert_eq!(parse_key("C--").unwrap().base, KeyBase::Char('-'));
    assert_eq!(parse_key("C-C").unwrap().base, KeyBase::Char('C'));
}

#[test]
fn what_is_not_a_key() {
    for bad in [
        "", "a", "x", ";", "enter", "ENTER", "Return", "Esc", "F0", "F13", "C-", "M-", "C-M-",
        "C-ab", "C-C-a", "M-M-x", "C- ", "C-\t", "C-\u{1b}", "\u{1b}", "\r", "\n", "Enter ",
        " Enter", "C-Enter-", "c-a", "Ctrl-a", "^C", "BSpace", "DC", "IC", "NPage", "PPage", "KP0",
    ] {
        assert!(!is_valid_key(bad), "{bad:?} must not be a key");
    }
}
