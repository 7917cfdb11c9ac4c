//! The `harness` binary (`cargo xtask bench|soak|demo`): parses the command line and hands over
//! to the library.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    harness::run(harness::flags::Harness::parse())
}
