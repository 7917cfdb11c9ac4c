//! The stamp parser and the figures of part 4 on canned samples.

use std::time::Duration;

use super::{
    GUIDE_READ, Outcome, Settings, TERMINAL_READ, TERMINAL_READ_SINCE, WaitSample, figures, mark,
    monotonic_ns, printed_at, stamp_line,
};
use crate::bench::survey;

const MS: u64 = 1_000_000;

#[test]
fn the_stamp_is_the_word_before_the_mark() {
    let output = "stamp ready\nt=1000 <mark 0>\nt=2500 <mark 1>\n";
    assert_eq!(printed_at(output, &mark("0")), Some(1000));
    assert_eq!(printed_at(output, &mark("1")), Some(2500));
    // What the printing side writes is what the parser reads.
    let line = stamp_line("7", 123_456_789_012);
    assert_eq!(line, "t=123456789012 <mark 7>\n");
    assert_eq!(printed_at(&format!("noise\n{line}"), &mark("7")), Some(123_456_789_012));
}

#[test]
fn one_mark_is_never_found_inside_another() {
    let output = "t=10 <mark 10>\nt=1 <mark 1>\n";
    assert_eq!(printed_at(output, &mark("1")), Some(1));
    assert_eq!(printed_at(output, &mark("10")), Some(10));
    assert_eq!(printed_at("t=10 <mark 10>\n", &mark("1")), None);
}

#[test]
fn a_mark_without_its_stamp_has_no_time() {
    for output in [
        "",
        "t=5 <mark 2>\n",
        "<mark 3>",
        "hello <mark 3>",
        "t= <mark 3>",
        "t=12x <mark 3>",
        "t=-4 <mark 3>",
        "t=5<mark 3>",
        "t=5  <mark 3>",
        "t=99999999999999999999999 <mark 3>",
    ] {
        assert_eq!(printed_at(output, &mark("3")), None, "{output:?}");
    }
}

/// `count` waits whose reactions are 1, 2, … `count` ms in a scrambled order, each printed
/// 0.2 ms after its trigger.
fn outcome(count: u64) -> Outcome {
    let waits = (0..count)
        .map(|index| {
            let reaction = ((index * 37) % count + 1) * MS;
            let trigger_ns = 10_000 * MS + index * 1_000 * MS;
            let printed_ns = trigger_ns + MS / 5;
            WaitSample { trigger_ns, printed_ns, answered_ns: printed_ns + reaction }
        })
        .collect();
    Outcome {
        settings: Settings { waits: 100, warmup_waits: 10, reads: 4, warmup_reads: 1 },
        waits,
        guide_read_ns: vec![400_000, 300_000, 500_000, 200_000],
        terminal_read_ns: vec![3 * MS, 2 * MS, 4 * MS, 9 * MS],
        terminal_read_since_ns: vec![MS, 2 * MS, MS, MS],
        terminal_list_ns: vec![MS, MS, 2 * MS, MS],
        terminal_search_ns: vec![9 * MS, 8 * MS, 12 * MS, 9 * MS],
        terminal_list_live_ns: vec![2 * MS, MS, 3 * MS, 2 * MS],
    }
}

#[test]
fn the_reaction_runs_from_the_print_to_the_answer() {
    let figures = figures(&outcome(100)).unwrap();
    assert_eq!(figures.waits, 100);
    assert_eq!(figures.warmup_waits, 10);
    assert_eq!(figures.settle, Duration::from_millis(100));
    let reaction = figures.reaction;
    assert_eq!(reaction.count, 100);
    assert_eq!((reaction.min, reaction.median, reaction.p95), (MS, 50 * MS, 95 * MS));
    assert_eq!(reaction.max, 100 * MS);
    // The trigger came 0.2 ms before each print.
    let trigger = figures.trigger_to_answer;
    assert_eq!(
        (trigger.min, trigger.median, trigger.p95),
        (MS + MS / 5, 50 * MS + MS / 5, 95 * MS + MS / 5)
    );
}

#[test]
fn the_reads_come_with_guide_read_first() {
    let figures = figures(&outcome(50)).unwrap();
    let rows: Vec<(&str, u64, u64)> = figures
        .read_rows
        .iter()
        .map(|row| (row.call.as_str(), row.latency.median, row.latency.max))
        .collect();
    assert_eq!(
        rows,
        [
            (GUIDE_READ, 300_000, 500_000),
            (TERMINAL_READ, 3 * MS, 9 * MS),
            (TERMINAL_READ_SINCE, MS, 2 * MS),
            (survey::TERMINAL_LIST, MS, 2 * MS),
            (survey::TERMINAL_LIST_LIVE, 2 * MS, 3 * MS),
            (survey::TERMINAL_SEARCH, 9 * MS, 12 * MS)
        ]
    );
    assert_eq!((figures.reads, figures.warmup_reads), (4, 1));
}

#[test]
fn impossible_samples_and_empty_parts_are_errors() {
    let mut early = outcome(50);
    early.waits[3].answered_ns = early.waits[3].printed_ns - 1;
    let error = figures(&early).unwrap_err().to_string();
    assert!(error.starts_with("wait 3 was answered before its mark was printed"), "{error}");

    let mut before = outcome(50);
    before.waits[5].printed_ns = before.waits[5].trigger_ns - 1;
    let error = figures(&before).unwrap_err().to_string();
    assert!(error.starts_with("mark 5 was printed before it was written into the FIFO"), "{error}");

    let mut none = outcome(50);
    none.waits.clear();
    assert_eq!(figures(&none).unwrap_err().to_string(), "no terminal_wait was measured");
    let mut no_reads = outcome(50);
    no_reads.terminal_read_since_ns.clear();
    assert_eq!(
        figures(&no_reads).unwrap_err().to_string(),
        "no terminal_read with since was measured"
    );
}

#[test]
fn the_outcome_line_round_trips() {
    let outcome = outcome(3);
    let line = serde_json::to_string(&outcome).unwrap();
    assert_eq!(serde_json::from_str::<Outcome>(&line).unwrap(), outcome);
}

#[test]
fn the_monotonic_clock_moves_with_time() {
    let before = monotonic_ns();
    std::thread::sleep(Duration::from_millis(20));
    let after = monotonic_ns();
    assert!(after - before >= 20 * MS, "{before} {after}");
    assert!(after - before < 10_000 * MS, "{before} {after}");
}
