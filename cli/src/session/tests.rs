//! Tests of the `--session` rule.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

use super::{SessionFlag, remove_session_flag, resolve};

fn args(words: &[&str]) -> Vec<OsString> {
    words.iter().map(OsString::from).collect()
}

#[test]
fn removes_the_first_exact_occurrence_with_its_value() {
    let removed =
        remove_session_flag(&args(&["call", "--session", "s.json", "x", "--session", "t"]));
    assert_eq!(removed.rest, args(&["call", "x", "--session", "t"]));
    assert_eq!(removed.flag, SessionFlag::Value(OsString::from("s.json")));
}

#[test]
fn a_trailing_flag_has_no_value() {
    let removed = remove_session_flag(&args(&["doctor", "--session"]));
    assert_eq!(removed.rest, args(&["doctor"]));
    assert_eq!(removed.flag, SessionFlag::WithoutValue);
}

#[test]
fn only_the_exact_word_counts() {
    let removed = remove_session_flag(&args(&["--session=a", "-session", "b", "doctor"]));
    assert_eq!(removed.rest, args(&["--session=a", "-session", "b", "doctor"]));
    assert_eq!(removed.flag, SessionFlag::Absent);
}

#[test]
fn the_flag_wins_over_the_environment_even_without_a_value() {
    let env = Some(OsStr::new("env.json"));
    let flag = |value: &str| SessionFlag::Value(OsString::from(value));
    assert_eq!(resolve(&flag("f.json"), env), Some(PathBuf::from("f.json")));
    assert_eq!(resolve(&SessionFlag::WithoutValue, env), None);
    assert_eq!(resolve(&flag(""), env), None);
    assert_eq!(resolve(&SessionFlag::Absent, env), Some(PathBuf::from("env.json")));
    assert_eq!(resolve(&SessionFlag::Absent, Some(OsStr::new(""))), None);
    assert_eq!(resolve(&SessionFlag::Absent, None), None);
}
