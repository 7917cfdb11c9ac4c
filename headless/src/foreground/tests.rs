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

/// Real programs in the panes of a private tmux server: both ways of looking (the `syscall` and,
/// as where Yama refuses it, the `wchan` fallback) agree on who reads the terminal.
#[test]
fn both_ways_of_looking_tell_readers_from_sleepers_busy_loops_and_socket_waits() {
    let dir = tempfile::TempDir::new().unwrap();
    let tmux = termsprawl_test_support::tmux::TmuxGuard::new(dir.path());
    fs::create_dir_all(dir.path().join("tmux-sockets")).unwrap();
    // Each command, who reads, and for those that do not, where the kernel shows them sleeping
    // once they have settled (`R`: running).
    let cases = [
        ("bash --norc --noprofile", Some("bash"), ""),
        ("cat", Some("cat"), ""),
        ("python3 -c 'import getpass; getpass.getpass()'", Some("python3"), ""),
        // Node's REPL: many threads, the main one in `epoll_wait` on the terminal.
        ("node --no-warnings -i", Some("node"), ""),
        ("sleep 30", None, "hrtimer_nanosleep"),
        ("python3 -c 'while True: pass'", None, "R"),
        // A socket's read sleeps where a terminal's does.
        (
            "python3 -c 'import socket; s = socket.create_server((\"127.0.0.1\", 0)); \
             c = socket.create_connection(s.getsockname()); c.recv(1)'",
            None,
            "wait_woken",
        ),
    ];
    for (index, (command, reader, settled)) in cases.iter().enumerate() {
        let name = format!("case{index}");
        let made = tmux.tmux(&["new-session", "-d", "-s", &name, "-x", "80", "-y", "24", command]);
        assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
        let shown = tmux.tmux(&["display-message", "-p", "-t", &name, "#{pane_pid}"]);
        let pid: i32 = String::from_utf8_lossy(&shown.stdout).trim().parse().unwrap();
        let pane = Pane::of(pid).unwrap();
        let expected =
            reader.map_or(Foreground::NotReading, |name| Foreground::Reading((*name).to_owned()));
        // The program settles (starts, prints its prompt, sleeps) within a few seconds.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let sleeps_in = || {
            let state = Stat::read(pid).map(|stat| stat.state);
            let wchan = fs::read_to_string(format!("/proc/{pid}/wchan")).unwrap_or_default();
            if state == Some('R') { "R".to_owned() } else { wchan }
        };
        while !settled.is_empty() && sleeps_in() != *settled {
            assert!(std::time::Instant::now() < deadline, "{command}: {}", sleeps_in());
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut seen;
        loop {
            seen = [Inspect::Syscall, Inspect::Wchan]
                .map(|inspect| look_by(pane, &mut Processes::default(), inspect));
            if seen.iter().all(|seen| *seen == expected) || std::time::Instant::now() > deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        assert_eq!(seen, [expected.clone(), expected], "{command}");
    }
}

/// The last fallback, for a process that refuses even `wchan` (another user's, such as sudo's):
/// a sleeping foreground process counts as reading while the terminal reads lines without echo.
#[test]
fn a_process_nothing_can_be_read_of_reads_when_the_terminal_asks_for_a_password() {
    let dir = tempfile::TempDir::new().unwrap();
    let tmux = termsprawl_test_support::tmux::TmuxGuard::new(dir.path());
    fs::create_dir_all(dir.path().join("tmux-sockets")).unwrap();
    let cases = [
        ("python3 -c 'import getpass; getpass.getpass()'", Some("python3")),
        // Reading with echo on, or sleeping: not a password prompt.
        ("cat", None),
        ("sleep 30", None),
        // A shell's line editor turns canonical input off.
        ("bash --norc --noprofile", None),
    ];
    for (index, (command, reader)) in cases.iter().enumerate() {
        let name = format!("case{index}");
        let made = tmux.tmux(&["new-session", "-d", "-s", &name, "-x", "80", "-y", "24", command]);
        assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
        let shown = tmux.tmux(&["display-message", "-p", "-t", &name, "#{pane_pid}"]);
        let pid: i32 = String::from_utf8_lossy(&shown.stdout).trim().parse().unwrap();
        let pane = Pane::of(pid).unwrap();
        let expected =
            reader.map_or(Foreground::NotReading, |name| Foreground::Reading((*name).to_owned()));
        // Settled: the full look sees the program reading, or asleep.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let full = look_by(pane, &mut Processes::default(), Inspect::Syscall);
            let asleep = fs::read_to_string(format!("/proc/{pid}/wchan"))
                .is_ok_and(|wchan| wchan.trim() == "hrtimer_nanosleep");
            if matches!(full, Foreground::Reading(_)) || asleep {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "{command} never settled");
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(look_by(pane, &mut Processes::default(), Inspect::Stat), expected, "{command}");
    }
}
