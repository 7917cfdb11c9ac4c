//! End-to-end tests of the `harness` binary and of the programs it runs: the bench and the soak in
//! tiny configurations, and every operation of the table through the real `termsprawlctl` and
//! `termsprawl-headless`.

mod bench;
mod every_operation;
mod soak;

use std::process::Command;

/// The exit code, stdout and stderr of one run.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs the `harness` binary with `args` (what `cargo xtask bench|soak|demo ARGS` runs).
fn harness(args: &[&str]) -> Run {
    let output = Command::new(env!("CARGO_BIN_EXE_harness")).args(args).output().unwrap();
    Run {
        code: output.status.code().unwrap(),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}
