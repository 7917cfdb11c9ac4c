//! Tests of the command-line definition.

use clap::{CommandFactory as _, Parser as _};

use super::{Command, Harness};

#[test]
fn command_line_definition_is_consistent() {
    Harness::command().debug_assert();
}

fn parse(args: &[&str]) -> Result<Command, clap::Error> {
    Harness::try_parse_from(std::iter::once("harness").chain(args.iter().copied()))
        .map(|xtask| xtask.command)
}

#[test]
fn bench_has_bounded_defaults_and_repeatable_vs() {
    let Ok(Command::Bench(bench)) = parse(&["bench"]) else { panic!() };
    assert_eq!((bench.runs, bench.warmup, bench.calls), (300, 20, 5000));
    assert!(!bench.check && !bench.no_write && bench.vs.is_empty());
    let plan = bench.plan().unwrap();
    assert_eq!(plan.warmup_calls, 500);
    let terminals = plan.terminals;
    assert_eq!((terminals.waits, terminals.warmup_waits), (100, 10));
    assert_eq!((terminals.reads, terminals.warmup_reads), (1000, 100));

    let Ok(Command::Bench(bench)) = parse(&[
        "bench",
        "--runs",
        "5",
        "--calls",
        "7",
        "--check",
        "--vs",
        "node a.js",
        "--vs",
        "b {}",
        "--waits",
        "55",
        "--reads",
        "3",
    ]) else {
        panic!()
    };
    assert_eq!((bench.runs, bench.calls, bench.check), (5, 7, true));
    let plan = bench.plan().unwrap();
    assert_eq!(plan.warmup_calls, 1);
    assert_eq!(plan.vs[0].1.words(), ["node", "a.js"]);
    assert_eq!(plan.vs[1].0, "b {}");
    let terminals = plan.terminals;
    assert_eq!((terminals.waits, terminals.warmup_waits), (55, 6));
    assert_eq!((terminals.reads, terminals.warmup_reads), (3, 1));
}

#[test]
fn bench_refuses_zero_runs_and_unsplittable_commands() {
    let kind = |args: &[&str]| parse(args).unwrap_err().kind();
    assert_eq!(kind(&["bench", "--runs", "0"]), clap::error::ErrorKind::ValueValidation);
    assert_eq!(kind(&["bench", "--calls", "0"]), clap::error::ErrorKind::ValueValidation);
    assert_eq!(kind(&["bench", "--reads", "0"]), clap::error::ErrorKind::ValueValidation);
    let few = parse(&["bench", "--waits", "49"]).unwrap_err().to_string();
    assert!(few.contains("must be at least 50, so that the p95 means something"), "{few}");
    assert!(matches!(parse(&["bench", "--waits", "50"]), Ok(Command::Bench(_))));
    let Ok(Command::Bench(bench)) = parse(&["bench", "--vs", "node 'x"]) else { panic!() };
    let error = bench.plan().unwrap_err();
    assert_eq!(format!("{error:#}"), "--vs 'node '\\''x': the command has an unclosed '");
}
