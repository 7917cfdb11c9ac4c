//! Which shells a `terminal_list` answer shows idle at their prompts.

use termsprawl_protocol::results::{TerminalKind, TerminalListEntry};

use super::busy_shells;

fn entry(node_id: &str, running: bool, waiting: bool) -> TerminalListEntry {
    TerminalListEntry {
        node_id: node_id.to_owned(),
        title: node_id.to_owned(),
        kind: TerminalKind::Shell,
        command: None,
        running,
        exit_code: None,
        signal: None,
        started_at: "2026-12-04T00:00:00.000Z".to_owned(),
        ended_at: None,
        cursor: 0,
        last_output_at: None,
        waiting_for_input: waiting,
        input_by: waiting.then(|| "bash".to_owned()),
        notify: false,
    }
}

#[test]
fn a_shell_is_idle_only_while_it_runs_and_waits_for_input() {
    let entries =
        [entry("idle", true, true), entry("starting", true, false), entry("ended", false, false)];
    let shells: Vec<String> =
        ["idle", "starting", "ended", "absent"].map(str::to_owned).into_iter().collect();
    assert_eq!(busy_shells(&entries, &shells), ["starting", "ended", "absent"]);
    assert!(busy_shells(&entries, &shells[..1]).is_empty());
}
