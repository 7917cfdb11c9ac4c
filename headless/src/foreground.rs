//! Whether a terminal's foreground program is blocked reading the terminal, from the kernel's
//! view in `/proc` (protocol 1.5.0: `terminal_wait`'s `until: "input"`, `waitingForInput` and
//! `inputBy`; `spec/protocol.md` §4.8).
//!
//! Everything here reads files of `/proc`: no process is spawned and tmux is not asked, so one
//! look costs a few file reads. A look is kept with what it depended on ([`Seen`],
//! [`look_again`]): looking again at an unchanged pane reads two files held open (its `stat` and
//! its reader's `schedstat`), or one for a shell alone in its session ([`Alone`]), so a
//! `terminal_list` of many quiet terminals examines nothing.
//!
//! A look starts from the pane's own process (its pid is known from tmux at the node's start,
//! [`Pane`]): its `/proc/<pid>/stat` names the pane's terminal (`tty_nr`) and the terminal's
//! foreground process group (`tpgid`). The group's leader is looked at first; when it is not
//! reading (a run node's wrapper waits for its command, a shell for its pipeline) every process
//! of that group in the pane's session is, from one scan of `/proc` shared by the looks of one
//! answer ([`Processes`]). A process reads the terminal when one of its threads sleeps in a
//! system call (`/proc/<pid>/task/<tid>/syscall`) that waits for input on a descriptor that is
//! the pane's terminal (`/proc/<pid>/fd/<fd>` is that character device, or `/dev/tty` of a
//! process whose controlling terminal it is):
//!
//! - `read`, `readv`, `pread64`, `preadv`, `preadv2` on it (a canonical-mode `read`, Python's
//!   `input` and `getpass`, `cat`, the shell's `read` builtin);
//! - `select`/`pselect6` with it in the read set, `poll`/`ppoll` with it asking `POLLIN`, the
//!   sets read from `/proc/<pid>/mem` at the addresses the call was given (bash's readline at its
//!   prompt is a `pselect6`);
//! - `epoll_wait`/`epoll_pwait`/`epoll_pwait2` on an epoll instance whose `fdinfo` lists it with
//!   `EPOLLIN` (event loops such as Node's).
//!
//! A group in which any thread runs (`running` in `syscall`) is busy, not waiting. The system call
//! numbers are those of `x86_64` and `aarch64`; elsewhere no program is ever seen reading.
//!
//! Reading `syscall` and `mem` needs ptrace access to the process (`PTRACE_MODE_ATTACH`), which
//! Yama's `ptrace_scope` of 1 or more refuses for a process the server is not an ancestor of (the
//! tmux server is a daemon). Where it is refused, the thread's `wchan` and its process's
//! descriptors, which need only `PTRACE_MODE_READ`, decide instead ([`sleeps_reading`]). A
//! process of another user (sudo's own password prompt) refuses both: it counts as reading while
//! it sleeps and the terminal reads lines without echo, as for a password
//! ([`asks_for_a_password`]).

#[cfg(test)]
mod tests;

use std::cell::OnceCell;
use std::collections::HashMap;
use std::fs::{self, File};
use std::io;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use rustix::fs::{Mode, OFlags};
use rustix::termios::LocalModes;
use termsprawl_transport::sync::lock;

/// How long a terminal must have printed nothing before its reading program counts as waiting
/// for input: a program that prints steadily never does.
pub(crate) const INPUT_QUIET: Duration = Duration::from_millis(250);
/// How often `terminal_wait {until: "input"}` looks again while the terminal is quiet, and how
/// long a reading program must go on reading, unchanged and silent, before the wait is reached.
pub(crate) const INPUT_RECHECK: Duration = Duration::from_millis(100);

/// The most threads of one process, and processes of one group, a look examines.
const MAX_EXAMINED: usize = 256;
/// The most descriptors of one `select` or `poll` a look reads.
const MAX_WAITED_FDS: u64 = 1024;
/// `/dev/tty`: the controlling terminal of whoever opens it (major 5, minor 0).
const DEV_TTY: u64 = 5 << 8;
/// `/dev/null` (major 1, minor 3).
const DEV_NULL: u64 = (1 << 8) | 3;
/// `POLLIN | POLLPRI | POLLRDNORM`: a `poll` that waits for input.
const POLL_INPUT: i16 = 0x1 | 0x2 | 0x40;
/// `EPOLLIN | EPOLLPRI | EPOLLRDNORM`.
const EPOLL_INPUT: u32 = 0x1 | 0x2 | 0x40;

/// The programs that are shells, by their `comm`: a line typed into one is run as a command.
const SHELLS: [&str; 22] = [
    "sh", "bash", "rbash", "dash", "ash", "busybox", "zsh", "fish", "ksh", "ksh93", "mksh", "oksh",
    "pdksh", "yash", "tcsh", "csh", "nu", "elvish", "xonsh", "pwsh", "osh", "ysh",
];

/// Whether the program named `comm` (an `inputBy`) is a shell.
pub(crate) fn is_shell(comm: &str) -> bool {
    SHELLS.contains(&comm)
}

/// The process a terminal node's pane runs (a shell, or a run node's wrapper): its pid and its
/// start time, so a pid the kernel has since given to another process is not mistaken for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pane {
    pid: i32,
    start_time: u64,
}

impl Pane {
    /// The pane whose process is `pid` now; `None` when no such process runs.
    pub(crate) fn of(pid: i32) -> Option<Pane> {
        let stat = Stat::read(pid)?;
        (!stat.ended()).then_some(Pane { pid, start_time: stat.start_time })
    }

    pub(crate) fn pid(self) -> i32 {
        self.pid
    }
}

/// What one look saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Foreground {
    /// The foreground program (its `comm`, `bash`, `python3`) sleeps reading the terminal.
    Reading(String),
    /// Nothing in the foreground reads the terminal now.
    NotReading,
    /// The pane's process has ended (or its pid now belongs to another process).
    Gone,
}

/// The processes of the machine, scanned from `/proc` once when a look first needs them and
/// shared by the looks of one answer.
#[derive(Debug, Default)]
pub(crate) struct Processes {
    /// Process session → its processes, each with its `stat`.
    sessions: Option<HashMap<i32, Vec<(i32, Stat)>>>,
    /// The last process id the kernel gave out ([`last_pid`]), read before the scan: a look that
    /// reads it moved afterwards (a process started since the scan) is not kept.
    forks: OnceCell<Option<u64>>,
}

impl Processes {
    /// The live processes of `session` as the scan saw them.
    fn session(&mut self, session: i32) -> Vec<(i32, Stat)> {
        // Read before the scan: a process started after it moves it.
        self.forks.get_or_init(last_pid);
        let sessions = self.sessions.get_or_insert_with(scan);
        let members = sessions.get(&session).map_or(&[][..], Vec::as_slice);
        members.iter().filter(|(_, stat)| !stat.ended()).cloned().collect()
    }

    /// How many processes the scan read (0 before it).
    fn count(&self) -> usize {
        self.sessions.as_ref().map_or(0, |sessions| sessions.values().map(Vec::len).sum())
    }

    /// Whether this answer has scanned `/proc` already.
    fn scanned(&self) -> bool {
        self.sessions.is_some()
    }

    /// Whether no process has been started since the scan.
    fn none_started(&self) -> bool {
        self.forks.get().copied().flatten().is_some_and(|before| last_pid() == Some(before))
    }

    /// Whether no process started since the scan is in `session`: the kernel gives process ids
    /// out in turn, so each id between the last before the scan and the last now is read, and
    /// one that still runs (or is a zombie) must be of another session. Answers the last id
    /// given out then; `None` when one is of `session`, or when it cannot be told (more than
    /// [`MAX_STARTED`] were given out, or the ids wrapped around).
    fn none_started_in(&self, session: i32) -> Option<u64> {
        let before = self.forks.get().copied().flatten()?;
        let now = last_pid()?;
        if now < before || now - before > MAX_STARTED {
            return None;
        }
        for pid in before + 1..=now {
            let pid = i32::try_from(pid).ok()?;
            if Stat::read(pid).is_some_and(|stat| stat.session == session) {
                return None;
            }
        }
        Some(now)
    }
}

/// What one look at a pane depended on, and what it saw: a later look whose dependencies read
/// the same answers the same without examining anything ([`look_again`]).
///
/// A look's verdict depends on the pane's terminal's foreground group (`tpgid`), on what each
/// thread it examined sleeps in (and its descriptors, and the memory its call points at), and,
/// when the group's members were scanned, on which processes the group holds. A thread changes
/// none of its own only by running, and running moves its `schedstat` (the nanoseconds it ran
/// and the times it was scheduled, [`Ran`]). A process joins the group only by a `fork` of a
/// member or by a `setpgid` from a process of the same session (`setpgid` refuses a process or
/// a group of another session), and leaves it only by running (`exit`, `setpgid`, `setsid`) or by
/// its parent's `setpgid`, from the same session; each needs a thread of the session to run, and
/// nothing from outside enters a session (a `fork` stays in its parent's, `setsid` makes a new
/// one). So a scanned look also depends on every thread of every process of the pane's session
/// ([`Trail::session`]). A verdict is kept with the `tpgid` and the `schedstat` of every thread
/// examined and, for a scanned group, of every thread of the session, each read before what it
/// guards; what the scan saw is read again after those (each process's group and thread count),
/// and no process may have been started since the scan (the machine's last process id,
/// [`last_pid`], reads the same). The pane's `stat` and the threads' `schedstat` stay open
/// ([`Held`]): reading them again is one `pread` each, and a file held reads its own process
/// only (once that process is gone it reads nothing, whoever gets its pid).
///
/// A pane's process found alone in its session ([`Alone`]) spares even the `stat`: the
/// terminal's foreground group is set only by a process of the session that has the terminal
/// (`tcsetpgrp`), and a session that holds the pane's process alone gains another only by that
/// process's `fork`. Either moves the `schedstat` of its threads, all of which are held then.
/// (What is left: a privileged process stealing the terminal with `TIOCSCTTY`, which no shell
/// or program of a pane does.)
#[derive(Debug)]
pub(crate) struct Seen {
    pane: Pane,
    stat: Held,
    tpgid: i32,
    /// The pane's process session, and how many of its threads `threads` holds.
    session: i32,
    pane_threads: u64,
    threads: Vec<(Held, Ran)>,
    verdict: Foreground,
    alone: Alone,
}

/// Whether the pane's process was alone in its session when the look was kept ([`Seen`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Alone {
    /// Alone, with every thread of it held, and no process of its session started since the
    /// scan that saw it.
    Yes,
    /// Its session held other processes.
    No,
    /// Not told yet: told by the next answer that scans `/proc` anyway, or by one that may scan
    /// only for this ([`AloneScans`]).
    Unsure,
}

/// When an answer may scan `/proc` only to tell whether panes' processes are alone
/// ([`Seen::tell_alone`]). A scan costs a read of every process's `stat` (some 15 ms for 800
/// processes on a small machine) and, on a machine that starts processes all the time, may leave
/// them unsure; a look left unsure costs a read of its pane's `stat` at every answer. So a scan is
/// due once the unsure looks have cost as many reads as the last scan did (then at most about
/// as much goes to scans as to unsure looks), or a second after the last.
#[derive(Debug)]
struct AloneScans {
    /// When the last one was made.
    last: Option<Instant>,
    /// The `stat`s it read.
    cost: usize,
    /// The `stat`s unsure looks read since.
    owed: usize,
}

/// The longest time between two scans only to tell whether panes are alone, while any is unsure.
const ALONE_SCANS: Duration = Duration::from_secs(1);
/// The most processes started during such a scan that are read to tell that none of them is in
/// the pane's session ([`Processes::none_started_in`]); with more, the scan is made again later.
const MAX_STARTED: u64 = 64;
static ALONE_SCANNED: Mutex<AloneScans> = Mutex::new(AloneScans { last: None, cost: 0, owed: 0 });

impl AloneScans {
    /// Whether an unsure look may scan now; if not, its `stat` read is owed.
    fn due() -> bool {
        lock(&ALONE_SCANNED).take(Instant::now())
    }

    /// Whether a scan is due at `now` (then it counts as made); if not, one read is owed.
    fn take(&mut self, now: Instant) -> bool {
        let due = self.owed >= self.cost
            || self.last.is_none_or(|last| now.duration_since(last) >= ALONE_SCANS);
        if due {
            *self = AloneScans { last: Some(now), cost: self.cost, owed: 0 };
        } else {
            self.owed += 1;
        }
        due
    }

    /// The scan just made read `cost` `stat`s.
    fn cost(cost: usize) {
        lock(&ALONE_SCANNED).cost = cost;
    }
}

impl Seen {
    /// Whether nothing the verdict depended on has changed.
    fn holds(&self, pane: Pane) -> bool {
        let mut buffer = [0; 1024];
        (self.alone == Alone::Yes || self.group_holds(pane, &mut buffer))
            && self.pane == pane
            && self
                .threads
                .iter()
                .all(|(held, ran)| held.read(&mut buffer).and_then(Ran::parse) == Some(*ran))
    }

    /// Whether the pane's process still runs with its terminal's foreground group as seen.
    fn group_holds(&self, pane: Pane, buffer: &mut [u8]) -> bool {
        self.stat.read(buffer).and_then(Stat::parse).is_some_and(|stat| {
            !stat.ended() && stat.start_time == pane.start_time && stat.tpgid == self.tpgid
        })
    }

    /// Tells whether the pane's process is alone in its session ([`Alone`]) when that is not
    /// known yet and the answer scans anyway or the retry is due. The scan must show it alone
    /// with all its threads held; no process started since the scan may be in its session
    /// ([`Processes::none_started_in`]); its `stat`, read after those, the same foreground
    /// group; and no process may have been started after that read. A process of the session
    /// the scan missed ended during it, and any it started since was read (or ended too); any
    /// change one of them made to the foreground group before it ended is seen by the `stat`
    /// read after. A process the pane's own started since moved its `schedstat`, so the look no
    /// longer holds anyway.
    fn tell_alone(&mut self, processes: &mut Processes) {
        if self.alone != Alone::Unsure {
            return;
        }
        let scanning = !processes.scanned();
        if scanning && !AloneScans::due() {
            return;
        }
        let members = processes.session(self.session);
        if scanning {
            AloneScans::cost(processes.count());
        }
        let only = match members.as_slice() {
            [(pid, stat)] => {
                *pid == self.pane.pid
                    && stat.start_time == self.pane.start_time
                    && stat.threads == self.pane_threads
            }
            _ => false,
        };
        if !only {
            self.alone = Alone::No;
            return;
        }
        let mut buffer = [0; 1024];
        self.alone = match processes.none_started_in(self.session) {
            Some(last) if self.group_holds(self.pane, &mut buffer) && last_pid() == Some(last) => {
                Alone::Yes
            }
            _ => Alone::Unsure,
        };
    }
}

/// A thread's `/proc/<pid>/task/<tid>/schedstat`: the nanoseconds it ran and the times it was
/// put on a processor. Both only grow, and only while it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ran {
    runtime: u64,
    scheduled: u64,
}

impl Ran {
    /// `None` when unreadable, or `0 0 0` (a kernel that keeps no scheduler statistics): then a
    /// verdict is not kept.
    fn parse(text: &str) -> Option<Ran> {
        let mut words = text.split_whitespace();
        let runtime = words.next()?.parse().ok()?;
        let _waited: u64 = words.next()?.parse().ok()?;
        let scheduled = words.next()?.parse().ok()?;
        (scheduled > 0).then_some(Ran { runtime, scheduled })
    }
}

/// The most `/proc` files the kept looks hold open, all together: half the process's limit of
/// descriptors, at most this. A look that would hold more is not kept.
const MAX_HELD: usize = 4096;
/// The most threads one kept look depends on.
const MAX_KEPT_THREADS: usize = 16;
/// `/proc` files held open now, by every [`Held`].
static HELD: AtomicUsize = AtomicUsize::new(0);

/// A `/proc` file held open ([`Seen`]), counted against [`MAX_HELD`].
#[derive(Debug)]
struct Held(File);

impl Held {
    fn open(path: &str) -> Option<Held> {
        static BUDGET: OnceLock<usize> = OnceLock::new();
        let budget = *BUDGET.get_or_init(|| {
            let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile).current;
            limit
                .map_or(MAX_HELD, |limit| usize::try_from(limit / 2).unwrap_or(MAX_HELD))
                .min(MAX_HELD)
        });
        if HELD.fetch_add(1, Ordering::Relaxed) >= budget {
            HELD.fetch_sub(1, Ordering::Relaxed);
            return None;
        }
        if let Ok(file) = File::open(path) {
            return Some(Held(file));
        }
        HELD.fetch_sub(1, Ordering::Relaxed);
        None
    }

    /// The file's text now (one `pread` from its start: `/proc` makes it anew).
    fn read<'a>(&self, buffer: &'a mut [u8]) -> Option<&'a str> {
        let len = self.0.read_at(buffer, 0).ok()?;
        // A text that fills the buffer may be cut: not read.
        (len < buffer.len()).then(|| std::str::from_utf8(&buffer[..len]).ok()).flatten()
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        HELD.fetch_sub(1, Ordering::Relaxed);
    }
}

/// What a look depended on, gathered while it looks ([`Seen`]).
#[derive(Debug, Default)]
struct Trail {
    /// Whether the look is to be kept: only then are the threads' files held.
    keeping: bool,
    threads: Vec<(Held, Ran)>,
    /// How many threads of each process `threads` holds.
    counts: HashMap<i32, u64>,
    /// Something it depended on cannot be told again (an unreadable `schedstat`, the terminal's
    /// modes, too many threads, a session that changed while it was looked at): the verdict is
    /// not kept.
    unkept: bool,
}

impl Trail {
    fn keeping() -> Trail {
        Trail { keeping: true, ..Trail::default() }
    }

    /// Whether what the trail holds is still wanted.
    fn wanted(&self) -> bool {
        self.keeping && !self.unkept
    }

    /// Thread `tid` of `pid` is about to be examined: its `schedstat`, read first.
    fn thread(&mut self, pid: i32, tid: i32) {
        if !self.wanted() {
            return;
        }
        if self.threads.len() >= MAX_KEPT_THREADS {
            self.unkept = true;
            return;
        }
        let mut buffer = [0; 128];
        let held = Held::open(&format!("/proc/{pid}/task/{tid}/schedstat"));
        match held.as_ref().and_then(|held| held.read(&mut buffer)).and_then(Ran::parse) {
            Some(ran) => {
                self.threads.extend(held.map(|held| (held, ran)));
                *self.counts.entry(pid).or_default() += 1;
            }
            None => self.unkept = true,
        }
    }

    /// After a look that scanned the group's members: the `schedstat` of every thread of the
    /// pane's session (`session`, as the scan saw it) not held already, then every process of it
    /// read again, which must still be alive in the same group with the threads held, and no
    /// process started since the scan ([`Seen`]).
    fn session(&mut self, session: &[(i32, Stat)], processes: &Processes) {
        for (pid, stat) in session {
            if !self.wanted() {
                return;
            }
            if self.counts.contains_key(pid) {
                continue;
            }
            for tid in tasks(*pid, stat, self) {
                self.thread(*pid, tid);
            }
        }
        let unchanged = |(pid, seen): &(i32, Stat)| {
            Stat::read(*pid).is_some_and(|now| {
                !now.ended()
                    && (now.pgrp, now.session, now.start_time)
                        == (seen.pgrp, seen.session, seen.start_time)
                    && self.counts.get(pid) == Some(&now.threads)
            })
        };
        if self.wanted() && !(session.iter().all(unchanged) && processes.none_started()) {
            self.unkept = true;
        }
    }
}

/// The thread ids of process `pid` (whose `stat` is `stat`): its own alone when it has one
/// thread, else its `task` folder (at most [`MAX_EXAMINED`]; unreadable: none, and the look is
/// not kept).
fn tasks(pid: i32, stat: &Stat, trail: &mut Trail) -> Vec<i32> {
    if stat.threads <= 1 {
        return vec![pid];
    }
    let Ok(entries) = fs::read_dir(format!("/proc/{pid}/task")) else {
        trail.unkept = true;
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
        .take(MAX_EXAMINED)
        .collect()
}

/// The last process id the kernel gave out, from `/proc/loadavg` (`0.50 0.20 0.10 1/234 5678`):
/// it moves whenever any process starts.
fn last_pid() -> Option<u64> {
    fs::read_to_string("/proc/loadavg").ok()?.split_whitespace().nth(4)?.parse().ok()
}

/// Whether the foreground program of `pane`'s terminal sleeps reading it.
#[cfg_attr(not(test), expect(dead_code, reason = "the server looks again, with `look_again`"))]
pub(crate) fn look(pane: Pane, processes: &mut Processes) -> Foreground {
    look_by(pane, processes, Inspect::Syscall, &mut Trail::default())
}

/// [`look`], answered from `last` (the previous look at the same pane) when nothing it depended
/// on has changed since ([`Seen`]): then only the pane's `stat` and the examined threads'
/// `schedstat` are read again, from files held open (one `pread` for a shell alone at its
/// prompt, [`Alone`]).
/// Answers the verdict and what to keep for the next look (`None` when it cannot be kept).
pub(crate) fn look_again(
    pane: Pane,
    last: Option<Seen>,
    processes: &mut Processes,
) -> (Foreground, Option<Seen>) {
    if let Some(mut last) = last.filter(|last| last.holds(pane)) {
        last.tell_alone(processes);
        return (last.verdict.clone(), Some(last));
    }
    let mut trail = Trail::keeping();
    // Read before the look: a change of the foreground group after it is seen next time.
    let mut buffer = [0; 1024];
    let stat = Held::open(&format!("/proc/{}/stat", pane.pid));
    let first = stat.as_ref().and_then(|stat| stat.read(&mut buffer)).and_then(Stat::parse);
    let verdict = look_by(pane, processes, Inspect::Syscall, &mut trail);
    let (Some(stat), Some(first)) = (stat, first) else {
        return (verdict, None);
    };
    if trail.unkept || verdict == Foreground::Gone {
        return (verdict, None);
    }
    let mut seen = Seen {
        pane,
        stat,
        tpgid: first.tpgid,
        session: first.session,
        pane_threads: trail.counts.get(&pane.pid).copied().unwrap_or_default(),
        threads: trail.threads,
        verdict: verdict.clone(),
        alone: Alone::Unsure,
    };
    seen.tell_alone(processes);
    (verdict, Some(seen))
}

fn look_by(
    pane: Pane,
    processes: &mut Processes,
    inspect: Inspect,
    trail: &mut Trail,
) -> Foreground {
    let Some(stat) = Stat::read(pane.pid) else { return Foreground::Gone };
    if stat.ended() || stat.start_time != pane.start_time {
        return Foreground::Gone;
    }
    let terminal = Terminal { device: stat.tty, session: stat.session, inspect };
    if stat.tty == 0 || stat.tpgid <= 0 {
        return Foreground::NotReading;
    }
    // The leader alone answers most looks: a shell at its prompt, a program a shell started.
    let leader = if stat.tpgid == pane.pid { Some(stat.clone()) } else { Stat::read(stat.tpgid) };
    if let Some(leader) = leader.filter(|leader| terminal.holds(leader, stat.tpgid)) {
        match examine(stat.tpgid, &leader, terminal, trail) {
            Examined::Reading => return Foreground::Reading(leader.comm),
            Examined::Busy => return Foreground::NotReading,
            Examined::Other => {}
        }
    }
    let session = processes.session(stat.session);
    let members = session.iter().filter(|(_, member)| member.pgrp == stat.tpgid);
    let mut reader = None;
    for (pid, member) in members.take(MAX_EXAMINED) {
        if *pid == stat.tpgid || !terminal.holds(member, stat.tpgid) {
            continue;
        }
        match examine(*pid, member, terminal, trail) {
            // Its running moves what it was kept with.
            Examined::Busy => return Foreground::NotReading,
            Examined::Reading if reader.is_none() => reader = Some(member.comm.clone()),
            Examined::Reading | Examined::Other => {}
        }
    }
    // Who else could change the group's members.
    trail.session(&session, processes);
    reader.map_or(Foreground::NotReading, Foreground::Reading)
}

/// The pane's terminal device and session, and how its readers are told.
#[derive(Debug, Clone, Copy)]
struct Terminal {
    device: u64,
    session: i32,
    inspect: Inspect,
}

/// How a look tells what a thread sleeps in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Inspect {
    /// Its `syscall` (and `mem`), falling back to [`Inspect::Wchan`] where that is refused.
    Syscall,
    /// Its `wchan` and the descriptors of its process only (the fallback, chosen by tests).
    #[cfg_attr(not(test), expect(dead_code, reason = "the fallback alone is chosen by tests"))]
    Wchan,
    /// Its state and the terminal's modes only (the last fallback, chosen by tests).
    #[cfg_attr(not(test), expect(dead_code, reason = "the fallback alone is chosen by tests"))]
    Stat,
}

impl Terminal {
    /// Whether `stat` is a live process of group `pgrp` in this terminal's session.
    fn holds(self, stat: &Stat, pgrp: i32) -> bool {
        !stat.ended() && stat.pgrp == pgrp && stat.session == self.session
    }
}

/// What one process of the foreground group is doing.
enum Examined {
    /// A thread of it sleeps waiting for input from the terminal.
    Reading,
    /// A thread of it runs.
    Busy,
    /// Anything else: sleeping otherwise, stopped, or not ours to look at.
    Other,
}

fn examine(pid: i32, stat: &Stat, terminal: Terminal, trail: &mut Trail) -> Examined {
    let mut reading = false;
    for tid in tasks(pid, stat, trail) {
        // Read before what it guards: a change after it moves it.
        trail.thread(pid, tid);
        let syscall = match terminal.inspect {
            Inspect::Syscall => fs::read_to_string(format!("/proc/{pid}/task/{tid}/syscall")),
            Inspect::Wchan | Inspect::Stat => Err(io::ErrorKind::PermissionDenied.into()),
        };
        match syscall.as_deref().map(Syscall::parse) {
            Ok(Some(Syscall::Running)) => return Examined::Busy,
            Ok(Some(Syscall::Blocked(call))) => {
                reading = reading || waits_for_terminal(pid, stat, &call, terminal);
            }
            // Refused (another user's process, Yama): the kernel function it sleeps in.
            Err(error) if error.kind() == io::ErrorKind::PermissionDenied => {
                match sleeps_reading(pid, tid, stat, terminal, trail) {
                    Examined::Busy => return Examined::Busy,
                    Examined::Reading => reading = true,
                    Examined::Other => {}
                }
            }
            // Blocked outside a system call, or gone meanwhile.
            Ok(None) | Err(_) => {}
        }
    }
    if reading { Examined::Reading } else { Examined::Other }
}

/// The fallback when a thread's `syscall` is refused but its `wchan` (which needs less access,
/// `PTRACE_MODE_READ`) is not: a thread sleeping in the terminal's read (`wait_woken`, which
/// `n_tty_read` sleeps in) reads the terminal when the process holds no other descriptor such a
/// sleep could be for (a socket, an inotify or other special file); one sleeping in `select` or
/// `poll` when every descriptor it could wait on is the terminal (a shell at its prompt); one in
/// `epoll_wait` when an epoll instance of the process watches the terminal for input.
///
/// A process that refuses even `wchan` (it reads `0`: another user's, such as sudo's) counts as
/// reading when it sleeps while the terminal is set up for a password: canonical input with echo
/// off ([`asks_for_a_password`]).
fn sleeps_reading(
    pid: i32,
    tid: i32,
    stat: &Stat,
    terminal: Terminal,
    trail: &mut Trail,
) -> Examined {
    let wchan = match terminal.inspect {
        Inspect::Stat => String::new(),
        _ => fs::read_to_string(format!("/proc/{pid}/task/{tid}/wchan")).unwrap_or_default(),
    };
    let task_running = Stat::read_path(&format!("/proc/{pid}/task/{tid}/stat"))
        .is_none_or(|task| task.state == 'R');
    if task_running {
        return Examined::Busy;
    }
    let wchan = wchan.trim();
    let reading = match wchan {
        // Refused (or a kernel without symbols): a sleeping thread is all that can be seen. The
        // terminal's modes change with no thread of the group running: not kept.
        "" | "0" => {
            trail.unkept = true;
            asks_for_a_password(terminal)
        }
        "wait_woken" | "n_tty_read" => only_the_terminal(pid, stat, terminal, true),
        "do_select" | "core_sys_select" | "do_sys_poll" | "do_poll" => {
            only_the_terminal(pid, stat, terminal, false)
        }
        "ep_poll" | "do_epoll_wait" => epoll_watches_terminal(pid, stat, terminal),
        sleep => {
            sleep.starts_with("poll_schedule_timeout")
                && only_the_terminal(pid, stat, terminal, false)
        }
    };
    if reading { Examined::Reading } else { Examined::Other }
}

/// Whether process `pid` holds the terminal and nothing else a read or poll could sleep on:
/// only the terminal, `/dev/null`, regular files and folders, and pipes when `pipes`.
fn only_the_terminal(pid: i32, stat: &Stat, terminal: Terminal, pipes: bool) -> bool {
    let Ok(entries) = fs::read_dir(format!("/proc/{pid}/fd")) else { return false };
    let mut holds_terminal = false;
    for entry in entries.flatten().take(MAX_EXAMINED) {
        let Ok(metadata) = fs::metadata(entry.path()) else { return false };
        let kind = metadata.file_type();
        if kind.is_char_device() {
            let device = metadata.rdev();
            if device == terminal.device || (device == DEV_TTY && stat.tty == terminal.device) {
                holds_terminal = true;
            } else if device != DEV_NULL {
                return false;
            }
        } else if !(kind.is_file() || kind.is_dir() || (pipes && kind.is_fifo())) {
            return false;
        }
    }
    holds_terminal
}

/// Whether the terminal reads a line without echoing it (`ICANON` on, `ECHO` off): how
/// `getpass`, `sudo`, `ssh` and `passwd` set it while they ask for a password. The modes are read
/// from the terminal's own device (`/dev/pts/<n>`, opened without becoming anyone's controlling
/// terminal, and closed at once).
fn asks_for_a_password(terminal: Terminal) -> bool {
    // Unix 98 pseudo-terminals are majors 136 to 143; the kernel's encoding of `tty_nr`.
    let major = (terminal.device >> 8) & 0xfff;
    let minor = (terminal.device & 0xff) | ((terminal.device >> 12) & 0x000f_ff00);
    if !(136..=143).contains(&major) {
        return false;
    }
    let path = format!("/dev/pts/{}", (major - 136) * 256 + minor);
    let flags = OFlags::RDONLY | OFlags::NOCTTY | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let Ok(fd) = rustix::fs::open(path, flags, Mode::empty()) else { return false };
    rustix::termios::tcgetattr(&fd).is_ok_and(|modes| {
        modes.local_modes.contains(LocalModes::ICANON)
            && !modes.local_modes.contains(LocalModes::ECHO)
    })
}

/// Whether an epoll instance of process `pid` watches the terminal for input.
fn epoll_watches_terminal(pid: i32, stat: &Stat, terminal: Terminal) -> bool {
    let Ok(entries) = fs::read_dir(format!("/proc/{pid}/fd")) else { return false };
    entries.flatten().take(MAX_EXAMINED).any(|entry| {
        let is_epoll = fs::read_link(entry.path())
            .is_ok_and(|target| target.as_os_str() == "anon_inode:[eventpoll]");
        let fd = entry.file_name();
        is_epoll
            && fs::read_to_string(format!("/proc/{pid}/fdinfo/{}", fd.to_string_lossy())).is_ok_and(
                |info| {
                    epoll_targets(&info).any(|(fd, events)| {
                        events & EPOLL_INPUT != 0 && is_terminal_fd(pid, stat, fd, terminal)
                    })
                },
            )
    })
}

/// Whether the blocked system call `call` of process `pid` waits for input from the terminal.
fn waits_for_terminal(pid: i32, stat: &Stat, call: &[u64], terminal: Terminal) -> bool {
    let is_terminal = |fd: u64| is_terminal_fd(pid, stat, fd, terminal);
    let arg = |index: usize| call.get(index + 1).copied().unwrap_or_default();
    match numbers::kind(call[0]) {
        Some(Wait::Read) => is_terminal(arg(0)),
        Some(Wait::Select) => {
            let nfds = arg(0).min(MAX_WAITED_FDS);
            read_memory(pid, arg(1), usize::try_from(nfds.div_ceil(8)).unwrap_or_default())
                .is_some_and(|set| {
                    (0..nfds).any(|fd| {
                        let byte = set[usize::try_from(fd / 8).unwrap_or_default()];
                        byte & (1 << (fd % 8)) != 0 && is_terminal(fd)
                    })
                })
        }
        Some(Wait::Poll) => {
            let count = arg(1).min(MAX_WAITED_FDS);
            read_memory(pid, arg(0), usize::try_from(count * 8).unwrap_or_default()).is_some_and(
                |fds| {
                    fds.chunks_exact(8).any(|pollfd| {
                        let fd = i32::from_ne_bytes([pollfd[0], pollfd[1], pollfd[2], pollfd[3]]);
                        let events = i16::from_ne_bytes([pollfd[4], pollfd[5]]);
                        events & POLL_INPUT != 0 && u64::try_from(fd).is_ok_and(&is_terminal)
                    })
                },
            )
        }
        Some(Wait::Epoll) => {
            let Ok(info) = fs::read_to_string(format!("/proc/{pid}/fdinfo/{}", arg(0))) else {
                return false;
            };
            epoll_targets(&info).any(|(fd, events)| events & EPOLL_INPUT != 0 && is_terminal(fd))
        }
        None => false,
    }
}

/// The `(tfd, events)` of every watch an epoll instance's `fdinfo` lists
/// (`tfd:        0 events:       19 data: …`).
fn epoll_targets(info: &str) -> impl Iterator<Item = (u64, u32)> + '_ {
    info.lines().filter_map(|line| {
        let mut words = line.split_whitespace();
        if words.next()? != "tfd:" {
            return None;
        }
        let fd = words.next()?.parse().ok()?;
        if words.next()? != "events:" {
            return None;
        }
        let events = u32::from_str_radix(words.next()?, 16).ok()?;
        Some((fd, events))
    })
}

/// Whether descriptor `fd` of process `pid` is the terminal: its character device, or
/// `/dev/tty` in a process whose controlling terminal it is.
fn is_terminal_fd(pid: i32, stat: &Stat, fd: u64, terminal: Terminal) -> bool {
    let Ok(metadata) = fs::metadata(format!("/proc/{pid}/fd/{fd}")) else { return false };
    if !metadata.file_type().is_char_device() {
        return false;
    }
    let device = metadata.rdev();
    device == terminal.device || (device == DEV_TTY && stat.tty == terminal.device)
}

/// `len` bytes of process `pid`'s memory at `address` (`None` when refused or unmapped).
fn read_memory(pid: i32, address: u64, len: usize) -> Option<Vec<u8>> {
    if address == 0 || len == 0 {
        return None;
    }
    let file = File::open(format!("/proc/{pid}/mem")).ok()?;
    let mut bytes = vec![0; len];
    file.read_exact_at(&mut bytes, address).ok()?;
    Some(bytes)
}

/// Every process's `stat`, by session.
fn scan() -> HashMap<i32, Vec<(i32, Stat)>> {
    let mut sessions: HashMap<i32, Vec<(i32, Stat)>> = HashMap::new();
    let Ok(entries) = fs::read_dir("/proc") else { return sessions };
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|name| name.parse::<i32>().ok()) else {
            continue;
        };
        if let Some(stat) = Stat::read(pid) {
            sessions.entry(stat.session).or_default().push((pid, stat));
        }
    }
    sessions
}

/// The members of `/proc/<pid>/stat` a look needs.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stat {
    comm: String,
    state: char,
    pgrp: i32,
    session: i32,
    /// The controlling terminal's device number (0: none).
    tty: u64,
    /// The foreground process group of that terminal.
    tpgid: i32,
    threads: u64,
    start_time: u64,
}

impl Stat {
    fn read(pid: i32) -> Option<Stat> {
        Stat::read_path(&format!("/proc/{pid}/stat"))
    }

    fn read_path(path: &str) -> Option<Stat> {
        Stat::parse(&fs::read_to_string(path).ok()?)
    }

    /// `pid (comm) state ppid pgrp session tty_nr tpgid …`; comm may hold spaces and
    /// parentheses, so the fields after it are counted from its last `)`.
    fn parse(text: &str) -> Option<Stat> {
        let open = text.find('(')?;
        let close = text.rfind(')')?;
        let comm = text.get(open + 1..close)?.to_owned();
        let fields: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
        // Field n of proc(5) is fields[n - 3].
        let field = |n: usize| fields.get(n - 3).copied();
        Some(Stat {
            comm,
            state: field(3)?.chars().next()?,
            pgrp: field(5)?.parse().ok()?,
            session: field(6)?.parse().ok()?,
            tty: field(7)?.parse::<i64>().ok()?.try_into().ok()?,
            tpgid: field(8)?.parse().ok()?,
            threads: field(20)?.parse().ok()?,
            start_time: field(22)?.parse().ok()?,
        })
    }

    /// A zombie or a dead process.
    fn ended(&self) -> bool {
        matches!(self.state, 'Z' | 'X' | 'x')
    }
}

/// A thread's `/proc/<pid>/task/<tid>/syscall`.
#[derive(Debug, PartialEq, Eq)]
enum Syscall {
    /// `running`.
    Running,
    /// Blocked in a system call: its number, then its six arguments.
    Blocked(Vec<u64>),
}

impl Syscall {
    /// `None` for a thread blocked outside a system call (`-1 sp pc`) or an unreadable text.
    fn parse(text: &str) -> Option<Syscall> {
        let text = text.trim();
        if text == "running" {
            return Some(Syscall::Running);
        }
        let mut words = text.split_whitespace();
        let number = words.next()?.parse::<u64>().ok()?;
        let mut call = vec![number];
        for word in words.take(6) {
            call.push(u64::from_str_radix(word.strip_prefix("0x")?, 16).ok()?);
        }
        (call.len() == 7).then_some(Syscall::Blocked(call))
    }
}

/// The kinds of system call that wait for input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wait {
    /// The first argument is the descriptor read.
    Read,
    /// `nfds`, then the read set.
    Select,
    /// The `pollfd` array, then its length.
    Poll,
    /// The epoll instance.
    Epoll,
}

/// The system call numbers of this architecture.
mod numbers {
    use super::Wait;

    #[cfg(target_arch = "x86_64")]
    pub(super) fn kind(number: u64) -> Option<Wait> {
        match number {
            0 | 17 | 19 | 295 | 327 => Some(Wait::Read),
            23 | 270 => Some(Wait::Select),
            7 | 271 => Some(Wait::Poll),
            232 | 281 | 441 => Some(Wait::Epoll),
            _ => None,
        }
    }

    #[cfg(target_arch = "aarch64")]
    pub(super) fn kind(number: u64) -> Option<Wait> {
        match number {
            63 | 65 | 67 | 69 | 286 => Some(Wait::Read),
            72 => Some(Wait::Select),
            73 => Some(Wait::Poll),
            22 | 441 => Some(Wait::Epoll),
            _ => None,
        }
    }

    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    pub(super) fn kind(_number: u64) -> Option<Wait> {
        None
    }
}
