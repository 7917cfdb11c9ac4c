//! The parsers of `/proc` texts, and looks at real processes without a terminal.

use super::*;

#[test]
fn a_stat_line_is_read_after_the_last_parenthesis_of_its_command_name() {
    let text = "4242 (odd) name (x)) S 1 4242 4242 34816 4300 4194560 0 0 0 0 0 0 0 0 20 0 3 0 \
                987654 0 0 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";
    let stat = Stat::parse(text).unwrap();
    assert_eq!(stat.comm, "odd) name (x)");
    assert_eq!(
        (stat.state, stat.pgrp, stat.session, stat.tty, stat.tpgid, stat.threads, stat.start_time),
        ('S', 4242, 4242, 34816, 4300, 3, 987_654)
    );
    assert_eq!(Stat::parse("4242 (cut"), None);
    assert_eq!(Stat::parse("4242 (short) S 1 2"), None);
}

#[test]
fn a_syscall_line_is_running_blocked_with_its_arguments_or_nothing() {
    assert_eq!(Syscall::parse("running\n"), Some(Syscall::Running));
    assert_eq!(
        Syscall::parse("0 0x3 0x55b9006d3700 0x2000 0x0 0x0 0x0 0x7ffcf3f8d038 0x7f03ca7162ad\n"),
        Some(Syscall::Blocked(vec![0, 3, 0x55b9_006d_3700, 0x2000, 0, 0, 0]))
    );
    // Blocked outside a system call: only the stack and program counters.
    assert_eq!(Syscall::parse("-1 0x7ffcf3f8d038 0x7f03ca7162ad\n"), None);
    assert_eq!(Syscall::parse("0 0x3"), None);
    assert_eq!(Syscall::parse(""), None);
}

#[test]
fn an_epoll_instance_lists_its_watched_descriptors_and_events() {
    let info = "pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t1057\n\
                tfd:        0 events:       19 data:                0  pos:0 ino:3 sdev:18\n\
                tfd:        7 events:        4 data:                7  pos:0 ino:9 sdev:8\n";
    assert_eq!(epoll_targets(info).collect::<Vec<_>>(), vec![(0, 0x19), (7, 0x4)]);
}

#[test]
fn a_process_without_a_terminal_reads_none_and_an_ended_one_is_gone() {
    // `setsid` execs `sleep` in a new session: no controlling terminal.
    let mut child = std::process::Command::new("setsid")
        .args(["sleep", "30"])
        .stdin(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = i32::try_from(child.id()).unwrap();
    let pane = Pane::of(pid).unwrap();
    assert_eq!(pane.pid(), pid);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while Stat::read(pid).unwrap().comm != "sleep" && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(Stat::read(pid).unwrap().tty, 0);
    let seen = look(pane, &mut Processes::default());
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(seen, Foreground::NotReading);
    assert_eq!(look(pane, &mut Processes::default()), Foreground::Gone);
    assert_eq!(Pane::of(pid), None);
}
