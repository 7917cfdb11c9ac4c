//! `cargo xtask fuzz`: the parts that do not need cargo-fuzz (the runs themselves are CI's fuzz
//! smoke step).

use super::xtask;

#[test]
fn an_unknown_target_is_refused_before_anything_is_built() {
    let run = xtask(&["fuzz", "--time", "1", "no_such_target"]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        "error: unknown fuzz target no_such_target; the targets are endpoint_url, discovery_files, \
         protocol_validate, mcp_bridge, cli_direct\n"
    );
}

#[test]
fn an_unknown_sanitizer_is_a_usage_error() {
    let run = xtask(&["fuzz", "--sanitizer", "memory"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("invalid value 'memory' for '--sanitizer <SANITIZER>'"),
        "{}",
        run.stderr
    );
}
