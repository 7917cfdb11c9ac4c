//! Tests of the fuzz runner's pure parts: target selection, log reading, the report, and that the
//! target table matches `fuzz/`.

use std::path::PathBuf;

use super::{Outcome, TARGETS, crash_artifact, executions, failure_excerpt, report, select};
use crate::project_root;

#[test]
fn the_target_table_matches_the_fuzz_crate() {
    let root = project_root().join("fuzz");
    let mut files: Vec<String> = std::fs::read_dir(root.join("fuzz_targets"))
        .unwrap()
        .map(|entry| entry.unwrap().path().file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut table: Vec<String> = TARGETS.iter().map(|(name, _)| (*name).to_owned()).collect();
    table.sort();
    assert_eq!(files, table);
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    for (target, dict) in TARGETS {
        assert!(manifest.contains(&format!("name = \"{target}\"")), "{target} has no [[bin]]");
        assert!(root.join("dict").join(dict).is_file(), "{dict} is missing");
        let seeds = root.join("corpus").join(target);
        assert!(std::fs::read_dir(&seeds).unwrap().count() > 0, "{target} has no seeds");
    }
}

#[test]
fn targets_are_selected_in_table_order_and_unknown_names_are_refused() {
    assert_eq!(select(&[]).unwrap().len(), TARGETS.len());
    let picked = select(&["mcp_bridge".to_owned(), "endpoint_url".to_owned()]).unwrap();
    assert_eq!(picked, ["endpoint_url", "mcp_bridge"]);
    let error = select(&["nope".to_owned()]).unwrap_err().to_string();
    assert!(
        error.starts_with("unknown fuzz target nope; the targets are endpoint_url, "),
        "{error}"
    );
}

const LOG: &str = "\
INFO: Seed: 123
#2\tINITED cov: 10 ft: 10 corp: 1/1b exec/s: 0 rss: 30Mb
#4096\tpulse  cov: 12 ft: 14 corp: 2/3b exec/s: 2048 rss: 31Mb
#9000\tDONE   cov: 12 ft: 14 corp: 2/3b exec/s: 3000 rss: 31Mb
Done 9000 runs in 3 second(s)
stat::number_of_executed_units: 9001
stat::average_exec_per_sec:     3000
";

#[test]
fn executions_come_from_the_final_statistics_or_the_last_status_line() {
    assert_eq!(executions(LOG), Some(9001));
    assert_eq!(executions("#5\tINITED\n#77\tNEW cov: 1\n"), Some(77));
    assert_eq!(executions("Done 12 runs in 0 second(s)\n"), Some(12));
    assert_eq!(executions("nothing\n"), None);
}

const CRASH: &str = "\
#100\tNEW    cov: 1
thread '<unnamed>' (1) panicked at fuzz_targets/x.rs:3:5:
the oracle disagrees
stack backtrace:
   0: frame
==1== ERROR: libFuzzer: deadly signal
artifact_prefix='fuzz/artifacts/x/'; Test unit written to fuzz/artifacts/x/crash-abc
Base64: AAEC
";

#[test]
fn a_crash_log_names_the_artifact_and_shows_the_panic() {
    assert_eq!(crash_artifact(CRASH), Some(PathBuf::from("fuzz/artifacts/x/crash-abc")));
    assert_eq!(crash_artifact(LOG), None);
    let excerpt = failure_excerpt(CRASH);
    assert!(excerpt.starts_with("thread '<unnamed>' (1) panicked at fuzz_targets/x.rs:3:5:\n"));
    assert!(excerpt.contains("the oracle disagrees\n"));
    assert!(!excerpt.contains("0: frame"), "indented backtrace lines are left out");
}

#[test]
fn the_report_is_a_table_with_rates_and_results() {
    let outcomes = [
        Outcome {
            target: "endpoint_url".to_owned(),
            seconds: 10.2,
            executions: Some(2_040_000),
            corpus: 40,
            crash: None,
            passed: true,
        },
        Outcome {
            target: "mcp_bridge".to_owned(),
            seconds: 3.0,
            executions: None,
            corpus: 0,
            crash: Some(PathBuf::from("fuzz/artifacts/mcp_bridge/crash-1")),
            passed: false,
        },
    ];
    assert_eq!(
        report(&outcomes),
        "| target | seconds | executions | executions/s | corpus | result |\n\
         | --- | ---: | ---: | ---: | ---: | --- |\n\
         | endpoint_url | 10 | 2040000 | 200000 | 40 | ok |\n\
         | mcp_bridge | 3 | ? | ? | 0 | crash: fuzz/artifacts/mcp_bridge/crash-1 |\n"
    );
}
