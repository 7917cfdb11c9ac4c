//! The pane state's parse, the zombie a pane's program may leave, and the dead-pane line.

use super::{PANE_DEAD_FIELDS, PANE_STATE_FORMAT, PaneState, is_dead_notice, process_group_alive};

#[test]
fn the_state_format_is_the_dead_fields_and_the_pid() {
    let joined = [PANE_DEAD_FIELDS.as_slice(), &["#{pane_pid}"]].concat().join("\t");
    assert_eq!(joined, PANE_STATE_FORMAT);
}

#[test]
fn pane_states_parse() {
    let running = PaneState::parse("0\t\t\t42");
    assert_eq!(running, PaneState { dead: false, exit_code: None, signal: None, pid: Some(42) });
    assert!(running.is_settled());
    let exited = PaneState::parse("1\t3\t\t42");
    assert_eq!((exited.dead, exited.exit_code, exited.signal), (true, Some(3), None));
    let signalled = PaneState::parse("1\t\t9\t42");
    assert_eq!((signalled.exit_code, signalled.signal), (None, Some(9)));
    // Dead, its status not known yet: not settled.
    let closing = PaneState::parse("1\t\t\t42");
    assert!(!closing.is_settled());
    // A target that does not exist: tmux expands every field to nothing.
    assert_eq!(PaneState::parse("\t\t\t"), PaneState::default());
    assert_eq!(PaneState::parse("garbage"), PaneState::default());
    // A running pane has neither status nor signal, whatever tmux prints for them.
    assert_eq!(PaneState::from_fields("0", "3", "9", ""), PaneState::default());
    assert_eq!(PaneState::from_fields("1", "0", "0", "").exit_code, Some(0));
}

#[test]
fn the_dead_pane_line_is_recognised() {
    assert!(is_dead_notice("Pane is dead (status 3, Tue Dec  1 21:00:00 2026)"));
    assert!(!is_dead_notice("the pane is dead"));
}

/// A child that has exited but was not reaped yet, as tmux 3.3 sometimes leaves a pane's program.
fn zombie(script: &str) -> std::process::Child {
    let child = std::process::Command::new("sh").args(["-c", script]).spawn().unwrap();
    let pid = i32::try_from(child.id()).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while super::zombie_wait_status(pid).is_none() {
        assert!(std::time::Instant::now() < deadline, "{script} never became a zombie");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child
}

#[test]
fn a_dead_pane_without_a_status_takes_it_from_its_programs_zombie() {
    for (script, exit_code, signal) in [("exit 3", Some(3), None), ("kill -9 $$", None, Some(9))] {
        let mut child = zombie(script);
        let pid = i32::try_from(child.id()).unwrap();
        let state = PaneState { dead: true, exit_code: None, signal: None, pid: Some(pid) };
        let state = state.or_zombie();
        assert_eq!((state.exit_code, state.signal), (exit_code, signal), "{script}");
        child.wait().unwrap();
        // Reaped, there is nothing to read: the state stays as tmux reported it.
        let state = PaneState { dead: true, exit_code: None, signal: None, pid: Some(pid) };
        assert_eq!(state.or_zombie().exit_code, None);
    }
    // A running program's state is tmux's.
    let running = PaneState { dead: false, exit_code: None, signal: None, pid: Some(1) };
    assert_eq!(running.or_zombie(), running);
}

#[test]
fn a_group_of_only_a_zombie_is_not_alive() {
    // `setsid` makes the shell lead a group of its own; the child is never reaped until `wait`.
    let mut child =
        std::process::Command::new("setsid").args(["sh", "-c", "sleep 1"]).spawn().unwrap();
    let group = i32::try_from(child.id()).unwrap();
    // The group exists once the child has called setsid(2), a moment after the spawn.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !process_group_alive(group) {
        assert!(std::time::Instant::now() < deadline, "the sleeping group never came alive");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    while super::zombie_wait_status(group).is_none() {
        assert!(std::time::Instant::now() < deadline, "the group's leader never became a zombie");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(!process_group_alive(group), "a zombie is not a live member");
    child.wait().unwrap();
    assert!(!process_group_alive(group));
}
