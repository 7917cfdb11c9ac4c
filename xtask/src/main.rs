//! The `cargo xtask` binary: parses the command line and hands over to the library.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    xtask::run(xtask::flags::Xtask::parse())
}
