//! Rendering of the tables and the document on fixed figures, the `--check` verdict and the
//! number formats.

use std::time::Duration;

use super::{
    Client, MAX_ONE_SHOT_RSS, Mcp, OneShot, Report, Settings, mebibytes, millis, rate, times,
};
use crate::base::machine::Machine;
use crate::bench::chain::Chain;
use crate::bench::crowd::{Crowd, Usage};
use crate::bench::oneshot::RSS_RUNS;
use crate::bench::stats::Summary;
use crate::bench::survey;
use crate::bench::terminals::{Read, Terminals};

const MIB: u64 = 1024 * 1024;

fn summary(min: u64, median: u64, p95: u64, max: u64) -> Summary {
    Summary { count: 300, min, median, p95, p99: p95, max }
}

fn one_shot(name: &str, command: &str, wall_median_us: u64, rss_mib_tenths: u64) -> OneShot {
    let wall = wall_median_us * 1000;
    let rss = rss_mib_tenths * MIB / 10;
    OneShot {
        name: name.to_owned(),
        command: command.to_owned(),
        size_bytes: (name == "termsprawlctl").then_some(3 * MIB / 2),
        wall: summary(wall * 9 / 10, wall, wall * 13 / 10, wall * 2),
        rss: Some(summary(rss, rss, rss, rss + MIB / 10)),
    }
}

fn report() -> Report {
    Report {
        command: "cargo xtask bench --runs 300 --vs 'node ctl.js'".to_owned(),
        revision: Some("commit 0123abc".to_owned()),
        machine: Machine {
            cpu: "AMD EPYC 7B13".to_owned(),
            cores: 2,
            available_cores: 2,
            memory_bytes: 24 * 1024 * MIB,
            os: "Debian GNU/Linux 12 (bookworm)".to_owned(),
            kernel: "Linux 6.1.0".to_owned(),
            rustc: "rustc 1.95.0 (59807616e 2026-04-14)".to_owned(),
            curl: Some("curl 7.88.1".to_owned()),
            tmux: Some("tmux 3.3a".to_owned()),
            load: Some("3.52 2.10 1.05".to_owned()),
        },
        settings: Settings { runs: 300, warmup: 20, calls: 5000, warmup_calls: 500 },
        one_shot: vec![
            one_shot(
                "termsprawlctl",
                r#"termsprawlctl --session SESSION call guide_read '{"topic":"canvas"}'"#,
                850,
                28,
            ),
            one_shot("floor", "floor SESSION", 800, 21),
            one_shot("curl", "curl -sS -H @DIR/curl-headers", 6_000, 98),
            one_shot("node ctl.js", "node ctl.js --session SESSION call guide_read", 170_000, 800),
        ],
        mcp: vec![
            Mcp {
                name: "termsprawlctl".to_owned(),
                in_flight: 1,
                calls: 5000,
                elapsed: Duration::from_millis(1250),
                latency: summary(200_000, 240_000, 300_000, 900_000),
                peak_rss: Some(6 * MIB),
            },
            Mcp {
                name: "termsprawlctl".to_owned(),
                in_flight: 32,
                calls: 5000,
                elapsed: Duration::from_millis(500),
                latency: summary(1_000_000, 3_000_000, 6_000_000, 9_000_000),
                peak_rss: Some(39 * MIB / 10),
            },
            Mcp {
                name: "node ctl.js".to_owned(),
                in_flight: 32,
                calls: 5000,
                elapsed: Duration::from_secs(5),
                latency: summary(20_000_000, 31_000_000, 35_000_000, 52_000_000),
                peak_rss: None,
            },
        ],
        client: vec![Client {
            tasks: 32,
            calls: 5000,
            elapsed: Duration::from_millis(400),
            latency: summary(1_000_000, 2_500_000, 3_000_000, 4_000_000),
        }],
        terminals: Some(terminals()),
        crowd: Some(crowd()),
        chain: Some(chain()),
        notes: vec!["a note".to_owned()],
    }
}

fn terminals() -> Terminals {
    let read = |call: &str, median: u64| Read {
        call: call.to_owned(),
        latency: summary(median * 9 / 10, median, median * 2, median * 5),
    };
    Terminals {
        waits: 100,
        warmup_waits: 10,
        settle: Duration::from_millis(100),
        reaction: summary(700_000, 1_100_000, 2_400_000, 6_000_000),
        trigger_to_answer: summary(800_000, 1_250_000, 2_900_000, 6_500_000),
        reads: 1000,
        warmup_reads: 100,
        read_rows: vec![
            read("`guide_read` `{\"topic\":\"canvas\"}`", 250_000),
            read("`terminal_read` `{\"nodeId\":…}`", 400_000),
            read("`terminal_read` `{\"nodeId\":…,\"since\":0}`", 350_000),
            read(survey::TERMINAL_LIST, 1_800_000),
            read(survey::TERMINAL_LIST_LIVE, 2_100_000),
            read(survey::TERMINAL_SEARCH, 3_700_000),
        ],
    }
}

#[test]
fn tables() {
    insta::assert_snapshot!(report().tables());
}

#[test]
fn document() {
    insta::assert_snapshot!(report().document());
}

#[test]
fn the_check_passes_within_both_limits() {
    assert_eq!(report().check(), Vec::<String>::new());
}

#[test]
fn the_check_fails_on_time_and_on_memory() {
    let mut slow = report();
    slow.one_shot[0].wall.median = 1_700_000;
    assert_eq!(
        slow.check(),
        [
            "median one-shot time 1.70 ms is 2.12x the floor's 0.800 ms (limit 2x)",
            "goal one-shot median / floor median: 2.12x (limit ≤ 1.1x)",
        ]
    );
    // Exactly twice the floor passes the old limit, not the goal; 1.1x passes both.
    slow.one_shot[0].wall.median = 1_600_000;
    assert_eq!(slow.check(), ["goal one-shot median / floor median: 2.00x (limit ≤ 1.1x)"]);
    slow.one_shot[0].wall.median = 880_000;
    assert!(slow.check().is_empty());

    let mut big = report();
    big.one_shot[0].rss.as_mut().unwrap().max = MAX_ONE_SHOT_RSS + 1;
    assert_eq!(
        big.check(),
        [
            "peak RSS of a one-shot call reached 10.0 MiB (limit 10.0 MiB)",
            "goal one-shot peak RSS (max): 10.0 MiB (limit ≤ 3.0 MiB)",
        ]
    );
    big.one_shot[0].rss.as_mut().unwrap().max = super::GOAL_ONE_SHOT_RSS;
    assert!(big.check().is_empty());

    let mut unmeasured = report();
    unmeasured.one_shot[0].rss = None;
    assert_eq!(
        unmeasured.check(),
        [
            "peak RSS was not measured: GNU time (`time`) is not installed",
            "goal one-shot peak RSS (max): – (limit ≤ 3.0 MiB)",
        ]
    );
}

#[test]
fn the_bridge_goal_is_reported_and_checked() {
    let mut heavy = report();
    heavy.mcp[1].peak_rss = Some(super::GOAL_BRIDGE_RSS + 1);
    let bridge =
        heavy.goals().into_iter().find(|goal| goal.name.starts_with("MCP bridge")).unwrap();
    assert_eq!((bridge.measured.as_str(), bridge.met), ("4.0 MiB", Some(false)));
    assert_eq!(
        heavy.check(),
        ["goal MCP bridge peak RSS, 32 in flight: 4.0 MiB (limit ≤ 4.0 MiB)"]
    );
    assert!(heavy.tables().contains(
        "| MCP bridge peak RSS, 32 in flight | 4.0 MiB | ≤ 4.0 MiB | 5.2 MiB | no | yes |"
    ));
    // At the limit it passes; with one call in flight the bridge is not held to it.
    let mut at_limit = report();
    at_limit.mcp[1].peak_rss = Some(super::GOAL_BRIDGE_RSS);
    at_limit.mcp[0].peak_rss = Some(9 * MIB);
    assert!(at_limit.check().is_empty(), "{:?}", at_limit.check());
}

#[test]
fn the_live_list_goals_are_reported_and_checked() {
    let with_live = |median: u64, p95: u64| {
        let mut report = report();
        let terminals = report.terminals.as_mut().unwrap();
        let row = terminals.read_rows.iter_mut().find(|row| row.call == survey::TERMINAL_LIST_LIVE);
        row.unwrap().latency = summary(median / 2, median, p95, p95);
        report
    };
    // At the limits it passes.
    let at_limit = with_live(5_000_000, 10_000_000);
    assert!(at_limit.check().is_empty(), "{:?}", at_limit.check());
    // Past either, that goal fails by name.
    assert_eq!(
        with_live(5_010_000, 10_000_000).check(),
        ["goal terminal_list p50, 256 live terminals: 5.01 ms (limit ≤ 5 ms)"]
    );
    let slow = with_live(4_620_000, 122_000_000);
    assert_eq!(
        slow.check(),
        ["goal terminal_list p95, 256 live terminals: 122 ms (limit ≤ 10 ms)"]
    );
    assert!(slow.tables().contains(
        "| terminal_list p95, 256 live terminals | 122 ms | ≤ 10 ms | 122 ms | no | yes |"
    ));
    // Without the live row (an older outcome) there is no such goal.
    let mut older = report();
    let terminals = older.terminals.as_mut().unwrap();
    terminals.read_rows.retain(|row| row.call != survey::TERMINAL_LIST_LIVE);
    assert!(older.goals().iter().all(|goal| !goal.name.starts_with("terminal_list")));
}

#[test]
fn the_check_fails_without_its_two_rows() {
    let mut missing = report();
    missing.one_shot.retain(|row| row.name != "floor");
    assert_eq!(missing.check(), ["termsprawlctl and the floor program were not both measured"]);
    let mut zero = report();
    zero.one_shot[1].wall.median = 0;
    assert_eq!(
        zero.check(),
        [
            "median one-shot time 0.850 ms is – the floor's 0.000 ms (limit 2x)",
            "goal one-shot median / floor median: – (limit ≤ 1.1x)",
        ]
    );
}

#[test]
fn the_terminal_rows_give_the_reaction_and_the_reads_against_guide_read() {
    let tables = report().tables();
    assert!(
        tables.contains(
            "| mark printed (`write` to the terminal) | answer in the client | 0.700 ms | 1.10 ms | 2.40 ms | 6.00 ms |"
        ),
        "{tables}"
    );
    assert!(tables.contains("| `guide_read` `{\"topic\":\"canvas\"}` | 0.250 ms | 0.500 ms | 0.500 ms | 1.25 ms | 1.00x |"), "{tables}");
    assert!(
        tables.contains(
            "| `terminal_read` `{\"nodeId\":…}` | 0.400 ms | 0.800 ms | 0.800 ms | 2.00 ms | 1.60x |"
        ),
        "{tables}"
    );
    assert!(tables.contains("| 0.350 ms | 0.700 ms | 0.700 ms | 1.75 ms | 1.40x |"), "{tables}");
    assert!(tables.contains("100 waits after 10 warm-up waits"), "{tables}");
    assert!(tables.contains("100 ms after a wait is sent"), "{tables}");
    // Within the terminal goals, the check passes; past one, it fails by name.
    assert!(report().check().is_empty());
    let mut slow = report();
    slow.terminals.as_mut().unwrap().read_rows[2].latency.median = 500_000;
    assert_eq!(
        slow.check(),
        ["goal terminal_read since p50 / guide_read p50: 2.00x (limit ≤ 1.5x)"]
    );
}

#[test]
fn without_the_terminal_part_its_section_is_missing() {
    let mut report = report();
    report.terminals = None;
    let tables = report.tables();
    assert!(!tables.contains("## Terminals on termsprawl-headless"), "{tables}");
    assert!(tables.contains("## Client in process"), "{tables}");
}

#[test]
fn without_gnu_time_the_rss_cells_are_empty() {
    let mut report = report();
    report.one_shot[2].rss = None;
    let tables = report.tables();
    assert!(tables.contains("| curl | 5.40 ms | 6.00 ms | 7.80 ms | – | – | – |"), "{tables}");
    assert!(tables.contains("| termsprawlctl / curl | 0.14x | 0.14x | – |"), "{tables}");
}

#[test]
fn the_method_names_the_number_of_rss_runs() {
    assert!(super::METHOD.contains(&format!("the first {RSS_RUNS} iterations")));
}

#[test]
fn numbers_are_formatted_for_reading() {
    assert_eq!(millis(612_345), "0.612 ms");
    assert_eq!(millis(1_234_567), "1.23 ms");
    assert_eq!(millis(12_345_678), "12.3 ms");
    assert_eq!(millis(170_400_000), "170 ms");
    assert_eq!(mebibytes(4 * MIB + MIB / 5), "4.2 MiB");
    assert_eq!(times(Some(1.456)), "1.46x");
    assert_eq!(times(Some(14.16)), "14.2x");
    assert_eq!(times(Some(141.67)), "142x");
    assert_eq!(times(None), "–");
    assert_eq!(rate(Some(999.6)), "1,000");
    assert_eq!(rate(Some(1_234_567.0)), "1,234,567");
    assert_eq!(rate(Some(12.0)), "12");
    assert_eq!(rate(None), "–");
}

#[test]
fn each_goal_of_issue_26_is_a_row_against_its_limit() {
    let goals = report().goals();
    let rows: Vec<(&str, &str, Option<bool>)> =
        goals.iter().map(|goal| (goal.name, goal.measured.as_str(), goal.met)).collect();
    assert_eq!(
        rows,
        [
            ("one-shot median / floor median", "1.06x", Some(true)),
            ("one-shot peak RSS (max)", "2.9 MiB", Some(true)),
            ("MCP bridge peak RSS, 32 in flight", "3.9 MiB", Some(true)),
            ("terminal_read p50 / guide_read p50", "1.60x", Some(true)),
            ("terminal_read since p50 / guide_read p50", "1.40x", Some(true)),
            ("terminal_wait reaction median", "1.10 ms", Some(true)),
            ("terminal_wait reaction p95", "2.40 ms", Some(true)),
            ("terminal_list p50, 256 live terminals", "2.10 ms", Some(true)),
            ("terminal_list p95, 256 live terminals", "4.20 ms", Some(true)),
            ("many agents: reaction p50, 256 waits pending", "8.00 ms", Some(true)),
            ("many agents: reaction p99, 256 waits pending", "30.0 ms", Some(true)),
            ("long waits: chained p50 over single p50, 64 bridges", "+0.20 ms", Some(true)),
        ]
    );
    let tables = report().tables();
    assert!(tables.contains("## Goals of issue 26"), "{tables}");
    assert!(
        tables.contains("| one-shot median / floor median | 1.06x | ≤ 1.1x | 1.49x | yes | yes |"),
        "{tables}"
    );
}

#[test]
fn the_check_holds_the_run_to_every_checked_goal() {
    let names: Vec<&str> = report().goals().iter().map(|goal| goal.name).collect();
    for checked in super::CHECKED_GOALS {
        assert!(names.contains(checked), "{checked} names no goal: {names:?}");
    }
    // Far past every limit: each checked goal fails the check by name.
    let mut bad = report();
    bad.one_shot[0].wall = summary(9_000_000, 9_000_000, 9_000_000, 9_000_000);
    bad.one_shot[0].rss.as_mut().unwrap().max = 9 * MIB;
    for row in &mut bad.mcp {
        row.peak_rss = Some(9 * MIB);
    }
    let terminals = bad.terminals.as_mut().unwrap();
    for row in &mut terminals.read_rows[1..] {
        row.latency = summary(9_000_000, 9_000_000, 9_000_000, 9_000_000);
    }
    terminals.reaction = summary(9_000_000, 9_000_000, 9_000_000, 9_000_000);
    // The live survey row past its p95 limit too.
    let live = terminals.read_rows.iter_mut().find(|row| row.call == survey::TERMINAL_LIST_LIVE);
    live.unwrap().latency = summary(9_000_000, 9_000_000, 90_000_000, 90_000_000);
    bad.crowd.as_mut().unwrap().reaction =
        summary(900_000_000, 900_000_000, 900_000_000, 900_000_000);
    // A chained wait 5.01 ms slower than a single one is past the goal.
    let chain = bad.chain.as_mut().unwrap();
    let slower = chain.single.median + 5_010_000;
    chain.chained = summary(slower, slower, slower, slower);
    let failures = bad.check();
    for checked in super::CHECKED_GOALS {
        assert!(
            failures.iter().any(|failure| failure.starts_with(&format!("goal {checked}: "))),
            "{checked} did not fail: {failures:?}"
        );
    }
}

fn chain() -> Chain {
    let usage = |fds: usize, mib_tenths: u64| Usage { fds, rss: mib_tenths * MIB / 10 };
    Chain {
        agents: 64,
        past_turn: Duration::from_secs(35),
        single: summary(1_100_000, 1_400_000, 2_900_000, 4_000_000),
        chained: summary(1_200_000, 1_600_000, 3_100_000, 4_400_000),
        server: [usage(210, 142), usage(210, 146)],
        bridges: [usage(640, 2490), usage(640, 2495)],
        largest_bridge: [usage(10, 39), usage(10, 39)],
    }
}

fn crowd() -> Crowd {
    Crowd {
        agents: 64,
        waits_per_agent: 4,
        rounds: 5,
        warmup_rounds: 1,
        tick: Duration::from_millis(50),
        reaction: summary(3_000_000, 8_000_000, 30_000_000, 60_000_000),
        chained: summary(3_100_000, 8_200_000, 30_000_000, 61_000_000),
        one_shot_calls: 400,
        mcp_calls: 2000,
        idle: Usage { fds: 20, rss: 8 * MIB },
        nodes: Usage { fds: 84, rss: 12 * MIB },
        peak_fds: 340,
        peak_rss: 20 * MIB,
    }
}
