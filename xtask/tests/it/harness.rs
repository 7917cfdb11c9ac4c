//! `cargo xtask bench|soak|demo` are the harness crate's commands, handed over through
//! `cargo run -p harness --locked`: its answers and exit codes come back through xtask.

use crate::xtask;

#[test]
fn bench_is_handed_to_the_harness_with_every_word() {
    // The harness's own option check answers, and its refusal fails xtask.
    let run = xtask(&["bench", "--waits", "49"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("must be at least 50, so that the p95 means something"),
        "{}",
        run.stderr
    );
    // --help is the harness's.
    let run = xtask(&["soak", "--help"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("--minutes"), "{}", run.stdout);
}
