//! Entry point of `termsprawlctl`; everything lives in the library.

fn main() -> std::process::ExitCode {
    termsprawl_cli::main()
}
