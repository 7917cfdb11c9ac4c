//! `cargo xtask codegen --check` on the repository.

use crate::xtask;

#[test]
fn check_passes_on_the_committed_docs_and_prints_nothing_to_stdout() {
    let run = xtask(&["codegen", "--check"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "");
    assert!(run.stderr.ends_with(" generated files are up to date\n"), "{}", run.stderr);
}

#[test]
fn unknown_options_are_usage_errors() {
    let run = xtask(&["codegen", "--chek"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("--chek"), "{}", run.stderr);
}
