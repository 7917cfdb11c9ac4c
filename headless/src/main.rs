//! Entry point of `termsprawl-headless`: the command line lives in `cli.rs` (part of this binary,
//! not of the library).

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
