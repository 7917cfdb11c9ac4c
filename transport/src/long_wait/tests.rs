//! Unit tests of the chain's pure parts: which requests are chained, the progress line, and how a
//! repeated start is cut.

use std::time::Duration;

use serde_json::json;
use termsprawl_protocol::ToolRequest;
use termsprawl_protocol::results::TerminalWaitResult;

use super::{Plan, WaitProgress, cut_repeated, grouped, plan};

fn wait_request(args: &serde_json::Value) -> ToolRequest {
    ToolRequest::new("terminal_wait", args)
}

#[test]
fn only_whole_timeouts_above_a_turn_are_chained() {
    let long = wait_request(&json!({"nodeId": "t", "until": "exit", "timeoutMs": 120_000}));
    assert!(
        matches!(plan(&long, 600_000, 30_000), Plan::Wait(_, total) if total == Duration::from_mins(2))
    );
    // Clamped to the caller's longest wait.
    assert!(
        matches!(plan(&long, 50_000, 30_000), Plan::Wait(_, total) if total == Duration::from_secs(50))
    );
    for args in [
        json!({"nodeId": "t", "until": "exit", "timeoutMs": 30_000}),
        json!({"nodeId": "t", "until": "exit"}),
        json!({"nodeId": "t", "until": "exit", "timeoutMs": 45_000.5}),
        json!({"nodeId": "t", "until": "exit", "timeoutMs": -1}),
        json!({"nodeId": "t", "until": "exit", "timeoutMs": 45_000, "bogus": 1}),
        json!({"nodeId": "t", "until": "exit", "timeoutMs": "45000"}),
    ] {
        assert!(
            matches!(plan(&wait_request(&args), 600_000, 30_000), Plan::Single(None)),
            "{args}"
        );
    }
    let other = ToolRequest::new("terminal_read", &json!({"nodeId": "t", "timeoutMs": 90_000}));
    assert!(matches!(plan(&other, 600_000, 30_000), Plan::Single(None)));
}

#[test]
fn a_limit_below_a_turn_lowers_a_single_wait() {
    let run = ToolRequest::new("terminal_run", &json!({"command": "make", "timeoutMs": 20_000}));
    let Plan::Single(Some(lowered)) = plan(&run, 5_000, 30_000) else { panic!("not lowered") };
    assert_eq!(lowered.args_value(), json!({"command": "make", "timeoutMs": 5000}));
    let long_run =
        ToolRequest::new("terminal_run", &json!({"command": "make", "timeoutMs": 90_000}));
    assert!(matches!(plan(&long_run, 600_000, 30_000), Plan::Run(_, _)));
}

#[test]
fn the_progress_line_reads_naturally() {
    let mut progress = WaitProgress {
        label: "make test".to_owned(),
        waited: Duration::from_millis(42_500),
        total: Duration::from_mins(10),
        cursor: Some(10),
        lines: 1234,
        lines_cut: false,
        last_line: Some("test_parse ... ok".to_owned()),
        turns: 3,
    };
    assert_eq!(progress.message(), r#"make test: 1 234 lines, last: "test_parse ... ok" (42 s)"#);
    progress.lines_cut = true;
    assert!(progress.message().starts_with("make test: 1 234+ lines"));
    progress.last_line = None;
    assert_eq!(progress.message(), "make test: no output yet (42 s)");
    progress.turns = 0;
    assert_eq!(progress.message(), "make test: waiting (42 s)");
    assert_eq!(grouped(7), "7");
    assert_eq!(grouped(1_234_567), "1 234 567");
}

fn answer(output: &str, cursor: u64) -> TerminalWaitResult {
    TerminalWaitResult {
        node_id: "t".to_owned(),
        reached: false,
        running: true,
        exit_code: None,
        signal: None,
        output: output.to_owned(),
        truncated: false,
        cursor,
        matched: None,
        match_cursor: None,
        input_by: None,
    }
}

#[test]
fn what_an_earlier_start_repeats_is_cut_by_the_cursors() {
    // Seen up to 5; this answer holds cursors 3..8.
    let mut repeated = answer("dé😀gh", 8);
    cut_repeated(&mut repeated, 5);
    assert_eq!(repeated.output, "😀gh");
    let mut fresh = answer("xyz", 8);
    cut_repeated(&mut fresh, 5);
    assert_eq!(fresh.output, "xyz");
}
