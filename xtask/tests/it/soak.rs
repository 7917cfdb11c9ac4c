//! `cargo xtask soak` end to end, for 20 seconds: the real server and termsprawlctl as cargo
//! built them next to this crate's binary (present after `cargo test --workspace`), with faults.

use std::path::{Path, PathBuf};

use super::xtask;

/// A binary of another package of the workspace, next to the `xtask` binary.
fn sibling(name: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_BIN_EXE_xtask")).with_file_name(name);
    path.is_file().then_some(path)
}

#[test]
fn a_short_soak_passes_with_restarts_and_writes_nothing() {
    let (Some(ctl), Some(headless)) = (sibling("termsprawlctl"), sibling("termsprawl-headless"))
    else {
        let why = "termsprawlctl and termsprawl-headless are not built next to xtask (cargo test --workspace builds them)";
        // Under CI a missing binary is a broken build, not a reason to pass.
        assert!(std::env::var_os("CI").is_none_or(|value| value.is_empty()), "{why}");
        eprintln!("skipped: {why}");
        return;
    };
    let run = xtask(&[
        "soak",
        "--seconds",
        "20",
        "--no-write",
        "--seed",
        "3",
        "--ctl",
        ctl.to_str().unwrap(),
        "--headless",
        headless.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "");
    assert!(run.stderr.contains("\nsoak: passed\n"), "{}", run.stderr);
    assert!(run.stderr.contains("Failures: none."), "{}", run.stderr);
    assert!(!run.stderr.contains("wrote "), "{}", run.stderr);
    let figure = |label: &str| -> u64 {
        let line =
            run.stderr.lines().find(|line| line.starts_with(&format!("| {label} |"))).unwrap();
        line.trim_end_matches(" |").rsplit("| ").next().unwrap().trim().parse().unwrap()
    };
    let restarts =
        figure("server restarts after SIGKILL") + figure("server restarts after SIGTERM");
    assert!(restarts >= 1, "{}", run.stderr);
    assert_eq!(figure("duplicated executions"), 0);
    assert_eq!(figure("lost acknowledged calls"), 0);
    assert!(figure("executions matched to an attempt") > 100, "{}", run.stderr);
}

#[test]
fn the_duration_must_be_positive() {
    let run = xtask(&["soak", "--minutes", "0"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("must be at least 1"), "{}", run.stderr);
}
