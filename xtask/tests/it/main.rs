//! End-to-end tests of the `xtask` binary: exit codes and output of its commands, run as a
//! process against this repository (read-only) and scratch files.

mod codegen;
mod fuzz;
mod harness;
mod protocol_diff;

use std::process::Command;

/// The exit code, stdout and stderr of one run.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs the `xtask` binary with `args`.
fn xtask(args: &[&str]) -> Run {
    let output = Command::new(env!("CARGO_BIN_EXE_xtask")).args(args).output().unwrap();
    Run {
        code: output.status.code().unwrap(),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}
