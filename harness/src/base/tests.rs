//! Tests of the shared base's small rules, with real child processes.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::wait_child;

#[test]
fn a_child_that_exits_in_time_gives_its_status() {
    let mut child = Command::new("sh").args(["-c", "exit 3"]).stdin(Stdio::null()).spawn().unwrap();
    let status = wait_child(&mut child, Duration::from_secs(10)).unwrap().unwrap();
    assert_eq!(status.code(), Some(3));
}

#[test]
fn a_child_past_its_deadline_is_killed_and_reaped() {
    let mut child = Command::new("sleep").arg("30").stdin(Stdio::null()).spawn().unwrap();
    let started = Instant::now();
    assert_eq!(wait_child(&mut child, Duration::from_millis(100)).unwrap(), None);
    assert!(started.elapsed() < Duration::from_secs(5));
    // Reaped: there is no status left to take.
    assert!(child.try_wait().is_err() || child.try_wait().unwrap().is_some());
}
