//! The parsers of `/proc` texts, and looks at real processes without a terminal.

use std::time::Instant;

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
    let deadline = Instant::now() + Duration::from_secs(5);
    while Stat::read(pid).unwrap().comm != "sleep" && Instant::now() < deadline {
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
        let deadline = Instant::now() + Duration::from_secs(10);
        let sleeps_in = || {
            let state = Stat::read(pid).map(|stat| stat.state);
            let wchan = fs::read_to_string(format!("/proc/{pid}/wchan")).unwrap_or_default();
            if state == Some('R') { "R".to_owned() } else { wchan }
        };
        while !settled.is_empty() && sleeps_in() != *settled {
            assert!(Instant::now() < deadline, "{command}: {}", sleeps_in());
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut seen;
        loop {
            seen = [Inspect::Syscall, Inspect::Wchan].map(|inspect| {
                look_by(pane, &mut Processes::default(), inspect, &mut Trail::default())
            });
            if seen.iter().all(|seen| *seen == expected) || Instant::now() > deadline {
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
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let full =
                look_by(pane, &mut Processes::default(), Inspect::Syscall, &mut Trail::default());
            let asleep = fs::read_to_string(format!("/proc/{pid}/wchan"))
                .is_ok_and(|wchan| wchan.trim() == "hrtimer_nanosleep");
            if matches!(full, Foreground::Reading(_)) || asleep {
                break;
            }
            assert!(Instant::now() < deadline, "{command} never settled");
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(
            look_by(pane, &mut Processes::default(), Inspect::Stat, &mut Trail::default()),
            expected,
            "{command}"
        );
    }
}

/// A kept look answers again while nothing it depended on changed, and a program that starts
/// reading after a silent sleep or a silent busy loop is seen reading at the next look.
#[test]
fn a_kept_look_holds_until_the_program_moves_and_a_late_reader_is_seen_at_once() {
    let dir = tempfile::TempDir::new().unwrap();
    let tmux = termsprawl_test_support::tmux::TmuxGuard::new(dir.path());
    fs::create_dir_all(dir.path().join("tmux-sockets")).unwrap();
    let start = |name: &str, command: &str| {
        let made = tmux.tmux(&["new-session", "-d", "-s", name, "-x", "80", "-y", "24", command]);
        assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
        let shown = tmux.tmux(&["display-message", "-p", "-t", name, "#{pane_pid}"]);
        Pane::of(String::from_utf8_lossy(&shown.stdout).trim().parse().unwrap()).unwrap()
    };
    let reading = |name: &str| Foreground::Reading(name.to_owned());

    // A shell at its prompt: the look is kept, and holds while the shell sleeps.
    let shell = start("shell", "bash --norc --noprofile");
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut kept = None;
    let mut held = 0;
    while held < 2 {
        assert!(Instant::now() < deadline, "the shell's look never held");
        let (verdict, seen) = look_again(shell, kept.take(), &mut Processes::default());
        let seen = seen.expect("a shell at its prompt is kept");
        held = if verdict == reading("bash") && seen.holds(shell) { held + 1 } else { 0 };
        kept = Some(seen);
        std::thread::sleep(Duration::from_millis(100));
    }
    // A key wakes it: the kept look no longer holds.
    let sent = tmux.tmux(&["send-keys", "-t", "shell", "x"]);
    assert!(sent.status.success());
    let seen = kept.unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while seen.holds(shell) {
        assert!(Instant::now() < deadline, "a key did not move the shell");
        std::thread::sleep(Duration::from_millis(10));
    }

    // A program that computes in silence, then reads (the leader decides), and a shell that
    // sleeps in silence, then reads (the group is scanned): each is seen reading at the first
    // look after it blocks, the earlier looks kept and carried on.
    let cases = [
        (
            "python3 -c 'import sys, time\nend = time.time() + 1.5\nwhile time.time() < end: pass\nsys.stdin.readline()'",
            "python3",
        ),
        ("sh -c 'sleep 1.5; read x'", "sh"),
    ];
    for (index, (command, reader)) in cases.iter().enumerate() {
        let pane = start(&format!("late{index}"), command);
        let began = Instant::now();
        let mut kept = None;
        let mut verdicts = Vec::new();
        loop {
            let (verdict, seen) = look_again(pane, kept.take(), &mut Processes::default());
            kept = seen;
            if verdict == reading(reader) {
                break;
            }
            verdicts.push(verdict);
            assert!(began.elapsed() < Duration::from_secs(10), "{command}: {verdicts:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(began.elapsed() >= Duration::from_millis(1400), "{command} read early");
        assert!(verdicts.contains(&Foreground::NotReading), "{command}: {verdicts:?}");
        // The looks of the silent phase were kept (the look is not thrown away each time).
        assert!(kept.is_some(), "{command}: the reading look is kept");
    }
}

/// Looks again at `pane` every 20 ms, carrying the kept look on, until it reads `expected`
/// (10 s at most); answers the verdicts before it and whether a look was kept meanwhile.
fn look_until(pane: Pane, expected: &Foreground, command: &str) -> (Vec<Foreground>, bool) {
    let began = Instant::now();
    let mut kept = None;
    let mut verdicts = Vec::new();
    let mut any_kept = false;
    loop {
        let (verdict, seen) = look_again(pane, kept.take(), &mut Processes::default());
        if verdict == *expected {
            return (verdicts, any_kept);
        }
        any_kept = any_kept || seen.is_some();
        kept = seen;
        verdicts.push(verdict);
        assert!(began.elapsed() < Duration::from_secs(10), "{command}: {verdicts:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A scanned group that gains a member after a look is looked at again, though no member of it
/// runs: the member was put there by another process of the pane's session, which ran. Each
/// program first shows one verdict for a while (its looks kept), then the other.
#[test]
fn a_group_that_gains_a_member_after_a_kept_look_is_looked_at_again() {
    let dir = tempfile::TempDir::new().unwrap();
    let tmux = termsprawl_test_support::tmux::TmuxGuard::new(dir.path());
    fs::create_dir_all(dir.path().join("tmux-sockets")).unwrap();
    // The pane's program (python3, the session's leader) gives the terminal to a group whose one
    // member sleeps; a forked child of it waits in `select` on the terminal in its own group,
    // and is moved into the foreground group 1.5 s later (`setpgid`: no process is started,
    // and neither the child nor the sleeper runs).
    let moved = "import os, select, time\n\
                 a = os.fork()\n\
                 if a == 0:\n    os.setpgid(0, 0)\n    os.execvp('sleep', ['sleep', '30'])\n\
                 os.setpgid(a, a)\n\
                 b = os.fork()\n\
                 if b == 0:\n    os.setpgid(0, 0)\n    select.select([0], [], [])\n    os._exit(0)\n\
                 os.setpgid(b, b)\n\
                 os.tcsetpgrp(0, a)\n\
                 time.sleep(1.5)\n\
                 os.setpgid(b, a)\n\
                 time.sleep(30)\n";
    // A program reading in one thread (under a shell that waits for it: the group is scanned)
    // starts a busy loop in its group from another thread 1.5 s later.
    let busy = "import subprocess, threading, time\n\
                def later():\n    time.sleep(1.5)\n    \
                subprocess.Popen(['python3', '-c', 'while True: pass'])\n\
                threading.Thread(target=later, daemon=True).start()\n\
                input()\n";
    let script = |name: &str, text: &str| {
        let path = dir.path().join(name);
        fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let (moved, busy) = (script("moved.py", moved), script("busy.py", busy));
    let cases = [
        (format!("python3 {moved}"), Foreground::NotReading, reading("python3")),
        (format!("sh -c 'python3 {busy}; true'"), reading("python3"), Foreground::NotReading),
    ];
    for (index, (command, before, after)) in cases.iter().enumerate() {
        let pane = start_pane(&tmux, &format!("gain{index}"), command);
        let began = Instant::now();
        // The first verdict shows once the program has set up ...
        let _ = look_until(pane, before, command);
        // ... and the second only once the group gained its member.
        let (verdicts, kept) = look_until(pane, after, command);
        assert!(began.elapsed() >= Duration::from_millis(1400), "{command}: changed early");
        assert!(verdicts.contains(before), "{command}: {verdicts:?}");
        assert!(kept, "{command}: the looks before the change were kept");
    }
}

/// A pane's process alone in its session is kept on its threads alone ([`Alone::Yes`]); one
/// with another process in its session is kept on its terminal's foreground group too, which
/// that process may change while the pane's process sleeps.
#[test]
fn a_look_is_kept_without_the_group_only_while_the_pane_is_alone_in_its_session() {
    let dir = tempfile::TempDir::new().unwrap();
    let tmux = termsprawl_test_support::tmux::TmuxGuard::new(dir.path());
    fs::create_dir_all(dir.path().join("tmux-sockets")).unwrap();
    let settled = |pane: Pane, expected: &Foreground, alone: Alone| {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut kept = None;
        loop {
            let (verdict, seen) = look_again(pane, kept.take(), &mut Processes::default());
            if let Some(seen) = seen.filter(|seen| verdict == *expected && seen.alone == alone) {
                return seen;
            }
            assert!(Instant::now() < deadline, "{expected:?} never kept as {alone:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    let shell = start_pane(&tmux, "alone", "bash --norc --noprofile");
    let seen = settled(shell, &reading("bash"), Alone::Yes);
    assert!(seen.holds(shell));
    let sent = tmux.tmux(&["send-keys", "-t", "alone", "x"]);
    assert!(sent.status.success());
    let deadline = Instant::now() + Duration::from_secs(5);
    while seen.holds(shell) {
        assert!(Instant::now() < deadline, "a key did not move the lone shell");
        std::thread::sleep(Duration::from_millis(10));
    }

    // The pane's program reads the terminal; a child of it in a group of its own takes the
    // terminal's foreground 1.5 s later, while the program sleeps on in its read.
    let takes = "import os, signal, time\n\
                 child = os.fork()\n\
                 if child == 0:\n    os.setpgid(0, 0)\n    \
                 signal.signal(signal.SIGTTOU, signal.SIG_IGN)\n    time.sleep(1.5)\n    \
                 os.tcsetpgrp(0, os.getpgrp())\n    time.sleep(30)\n    os._exit(0)\n\
                 input()\n";
    let script = dir.path().join("takes.py");
    fs::write(&script, takes).unwrap();
    let command = format!("python3 {}", script.display());
    let pane = start_pane(&tmux, "company", &command);
    let began = Instant::now();
    let seen = settled(pane, &reading("python3"), Alone::No);
    let (verdicts, kept) = look_until(pane, &Foreground::NotReading, &command);
    assert!(began.elapsed() >= Duration::from_millis(1400), "the group changed early");
    assert!(!seen.holds(pane), "the look with company held after the group changed");
    assert!(verdicts.iter().all(|verdict| *verdict == reading("python3")), "{verdicts:?}");
    assert!(kept, "the looks before the change were kept");
}

/// A process started in a session since the scan is found by the ids given out since; one of
/// another session is not counted against it.
#[test]
fn a_process_started_in_the_session_since_the_scan_is_found() {
    let own = fs::read_to_string("/proc/self/stat").ok().and_then(|text| Stat::parse(&text));
    let own = own.expect("this process's stat").session;
    let mut processes = Processes::default();
    // The scan, with the last id given out before it.
    let _ = processes.session(own);
    let before = processes.forks.get().copied().flatten().expect("the last process id");
    let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
    assert_eq!(processes.none_started_in(own), None, "the child started in this session");
    // No session has this id: only more than 64 ids given out meanwhile stop the answer.
    if let Some(last) = processes.none_started_in(i32::MAX) {
        assert!(last > before && last >= u64::from(child.id()), "{before} {last}");
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

/// A scan only to tell panes alone is due at once, then once the unsure looks have owed as many
/// reads as it made, or a second after it.
#[test]
fn a_scan_to_tell_panes_alone_is_due_once_its_cost_is_owed_or_a_second_has_passed() {
    let start = Instant::now();
    let mut scans = AloneScans { last: None, cost: 0, owed: 0 };
    assert!(scans.take(start));
    scans.cost = 3;
    let taken: Vec<bool> = (0..4).map(|_| scans.take(start)).collect();
    assert_eq!(taken, [false, false, false, true]);
    assert!(!scans.take(start + Duration::from_millis(999)));
    assert!(scans.take(start + ALONE_SCANS));
    assert_eq!(scans.owed, 0);
}

/// A background job brought to the foreground with `fg`: the look after names it.
#[test]
fn a_job_brought_to_the_foreground_is_seen_reading() {
    let dir = tempfile::TempDir::new().unwrap();
    let tmux = termsprawl_test_support::tmux::TmuxGuard::new(dir.path());
    fs::create_dir_all(dir.path().join("tmux-sockets")).unwrap();
    let shell = start_pane(&tmux, "jobs", "bash --norc --noprofile");
    look_until(shell, &reading("bash"), "bash");
    // `cat` in the background stops at its first read (SIGTTIN); the shell reads its prompt.
    let sent = tmux.tmux(&["send-keys", "-t", "jobs", "cat &", "Enter"]);
    assert!(sent.status.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    let stopped = || {
        let session = scan().remove(&shell.pid()).unwrap_or_default();
        session.iter().any(|(_, stat)| stat.comm == "cat" && stat.state == 'T')
    };
    while !stopped() {
        assert!(Instant::now() < deadline, "cat never stopped");
        std::thread::sleep(Duration::from_millis(20));
    }
    look_until(shell, &reading("bash"), "cat &");
    let sent = tmux.tmux(&["send-keys", "-t", "jobs", "fg", "Enter"]);
    assert!(sent.status.success());
    look_until(shell, &reading("cat"), "fg");
}

/// Starts `command` in a new session `name` of `tmux`: its pane.
fn start_pane(tmux: &termsprawl_test_support::tmux::TmuxGuard, name: &str, command: &str) -> Pane {
    let made = tmux.tmux(&["new-session", "-d", "-s", name, "-x", "80", "-y", "24", command]);
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let shown = tmux.tmux(&["display-message", "-p", "-t", name, "#{pane_pid}"]);
    Pane::of(String::from_utf8_lossy(&shown.stdout).trim().parse().unwrap()).unwrap()
}

fn reading(name: &str) -> Foreground {
    Foreground::Reading(name.to_owned())
}

#[test]
fn a_schedstat_line_is_time_run_and_times_scheduled_and_none_without_statistics() {
    assert_eq!(Ran::parse("791562 64366 3\n"), Some(Ran { runtime: 791_562, scheduled: 3 }));
    assert_eq!(Ran::parse("0 0 0\n"), None);
    assert_eq!(Ran::parse("12 x 3"), None);
}
