//! The notice line and the states of a notice, without tmux (the delivery itself is tested over
//! real tmux in `tests/it/notify.rs`).

use std::time::{Duration, SystemTime};

use super::{NoticeState, Notices, duration_text, notice_line, quoted_command};
use crate::terminals::PaneState;

fn ended(exit_code: Option<i32>, signal: Option<i32>) -> PaneState {
    PaneState { dead: true, exit_code, signal, pid: None }
}

#[test]
fn the_line_names_node_command_ending_duration_and_cursor() {
    assert_eq!(
        notice_line(
            "terminal-1a2b",
            "make test",
            &ended(Some(2), None),
            Duration::from_millis(422_900),
            4711
        ),
        r#"[termsprawl] terminal-1a2b "make test" exited 2 after 7m02s; read it with terminal_read {"nodeId":"terminal-1a2b","since":4711}"#
    );
    assert_eq!(
        notice_line("t1", "sleep 9", &ended(None, Some(9)), Duration::from_secs(3), 0),
        r#"[termsprawl] t1 "sleep 9" was killed by SIGKILL after 3s; read it with terminal_read {"nodeId":"t1","since":0}"#
    );
    assert_eq!(
        notice_line("t1", "x", &ended(None, None), Duration::ZERO, 5),
        r#"[termsprawl] t1 "x" ended (exit status unknown) after 0s; read it with terminal_read {"nodeId":"t1","since":5}"#
    );
}

#[test]
fn durations_are_whole_seconds_minutes_and_hours() {
    let text = |seconds| duration_text(Duration::from_secs(seconds));
    assert_eq!(
        [text(0), text(59), text(60), text(3599), text(3600), text(90_061)],
        ["0s", "59s", "1m00s", "59m59s", "1h00m00s", "25h01m01s"]
    );
    assert_eq!(duration_text(Duration::from_millis(1999)), "1s");
}

#[test]
fn a_command_is_one_quoted_line_without_controls_and_cut_long() {
    assert_eq!(quoted_command("echo \"hi\"\nexit 1\t"), r#""echo \"hi\"\nexit 1\t""#);
    assert_eq!(quoted_command("a\u{1b}[2Jb\u{7f}c\u{9b}d"), r#""a\u001b[2Jb\u007fc\u009bd""#);
    let long = "é".repeat(100);
    assert_eq!(quoted_command(&long), format!("\"{}…\"", "é".repeat(80)));
    assert_eq!(quoted_command(&"x".repeat(80)), format!("\"{}\"", "x".repeat(80)));
}

fn record(dir: &std::path::Path, node_id: &str) -> Option<serde_json::Value> {
    let bytes = std::fs::read(dir.join(format!("{node_id}.notify"))).ok()?;
    Some(serde_json::from_slice(&bytes).unwrap())
}

#[test]
fn only_the_callers_answers_count_and_a_due_notice_outlives_a_restart() {
    let dir = tempfile::TempDir::new().unwrap();
    let notices = Notices::load(dir.path());
    notices.arm("run1", "agent1", "p1", "make", SystemTime::now());
    assert!(notices.notifies("run1"));
    assert_eq!(record(dir.path(), "run1"), None, "armed is never on disk");

    // Another agent's answer changes nothing; the caller's running answer makes it due.
    notices.answered("run1", "agent2", 10, false);
    assert!(notices.notifies("run1"));
    notices.answered("run1", "agent1", 10, true);
    let due = record(dir.path(), "run1").unwrap();
    assert_eq!(
        (&due["state"], &due["since"], &due["caller"]),
        (&"due".into(), &10.into(), &"agent1".into())
    );
    notices.answered("run1", "agent1", 25, true);
    assert_eq!(record(dir.path(), "run1").unwrap()["since"], 25);

    // A restart keeps it due and hands it to the task.
    let restarted = Notices::load(dir.path());
    assert!(restarted.notifies("run1"));
    assert_eq!(restarted.receiver.lock().unwrap().as_mut().unwrap().try_recv().unwrap(), "run1");
    // Delivered once: recorded before anything is typed, never due again.
    let delivered = restarted.settle("run1", NoticeState::Delivered).unwrap();
    assert_eq!(delivered.since, 25);
    assert_eq!(restarted.settle("run1", NoticeState::Delivered), None);
    assert!(!restarted.notifies("run1"));
    let again = Notices::load(dir.path());
    assert!(!again.notifies("run1"));
    assert!(again.receiver.lock().unwrap().as_mut().unwrap().try_recv().is_err());
    // Closing the node takes its record.
    again.forget("run1");
    assert_eq!(record(dir.path(), "run1"), None);
}

#[test]
fn an_answer_that_reports_the_end_first_means_no_notice() {
    let dir = tempfile::TempDir::new().unwrap();
    let notices = Notices::load(dir.path());
    // The run's own answer saw the end: nothing at all.
    notices.arm("run1", "agent1", "p1", "true", SystemTime::now());
    notices.answered("run1", "agent1", 3, false);
    assert!(!notices.notifies("run1"));
    assert_eq!(record(dir.path(), "run1"), None);
    // A later answer to the caller saw it: reported, durably.
    notices.arm("run2", "agent1", "p1", "sleep 1", SystemTime::now());
    notices.answered("run2", "agent1", 0, true);
    notices.answered("run2", "agent1", 0, false);
    assert_eq!(record(dir.path(), "run2").unwrap()["state"], "reported");
    assert_eq!(notices.settle("run2", NoticeState::Delivered), None);
    // A run whose call failed before answering has none.
    notices.arm("run3", "agent1", "p1", "x", SystemTime::now());
    notices.disarm("run3");
    assert!(!notices.notifies("run3"));
}

#[test]
fn a_notice_that_cannot_be_recorded_stays_due_and_is_not_delivered() {
    let dir = tempfile::TempDir::new().unwrap();
    let notices = Notices::load(dir.path());
    notices.arm("run1", "agent1", "p1", "x", SystemTime::now());
    notices.answered("run1", "agent1", 0, true);
    // A directory in the record's place: the write fails.
    std::fs::remove_file(dir.path().join("run1.notify")).unwrap();
    std::fs::create_dir(dir.path().join("run1.notify")).unwrap();
    assert_eq!(notices.settle("run1", NoticeState::Delivered), None);
    assert!(notices.notifies("run1"));
}
