//! Unit tests of the pure helpers of the operations.

use std::path::Path;

use super::{artifact_path, clamp_max_chars, tail, trim_blank_end};
use crate::error::messages;

#[test]
fn max_chars_is_clamped() {
    assert_eq!(clamp_max_chars(None), 16_000);
    assert_eq!(clamp_max_chars(Some(0.0)), 1);
    assert_eq!(clamp_max_chars(Some(-3.0)), 1);
    assert_eq!(clamp_max_chars(Some(0.4)), 1);
    assert_eq!(clamp_max_chars(Some(7.9)), 7);
    assert_eq!(clamp_max_chars(Some(1_000_000.0)), 100_000);
}

#[test]
fn tail_counts_utf16_units_and_never_splits_a_character() {
    assert_eq!(tail("hello", 3), "llo");
    assert_eq!(tail("hello", 10), "hello");
    assert_eq!(tail("a😀", 2), "😀");
    assert_eq!(tail("a😀", 1), "");
    assert_eq!(tail("aé", 1), "é");
}

#[test]
fn blank_lines_below_the_output_are_dropped() {
    assert_eq!(trim_blank_end("$ ls\nfile\n$ \n\n\n"), "$ ls\nfile\n$ \n");
    assert_eq!(trim_blank_end("x"), "x");
    assert_eq!(trim_blank_end("\n\n"), "");
}

#[test]
fn artifact_paths() {
    let dir = tempfile::TempDir::new().unwrap();
    let folder = dir.path().canonicalize().unwrap();
    std::fs::write(folder.join("a.txt"), "a").unwrap();
    let message = |path: &Path| artifact_path(&folder, path).unwrap_err().message().to_owned();
    assert_eq!(artifact_path(&folder, &folder.join("./x/../a.txt")).unwrap(), folder.join("a.txt"));
    assert_eq!(message(Path::new("a.txt")), messages::ARTIFACT_RELATIVE);
    assert_eq!(message(&folder.join("../a.txt")), messages::ARTIFACT_OUTSIDE);
    assert_eq!(message(Path::new("/etc/hostname")), messages::ARTIFACT_OUTSIDE);
    assert_eq!(message(&folder.join("b.txt")), messages::ARTIFACT_MISSING);
    assert_eq!(message(&folder), messages::ARTIFACT_NOT_FILE);
}
