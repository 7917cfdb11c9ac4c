//! Fixtures: fake emulators (scripts), a private tmux server and a guard that kills a launched
//! emulator's process group; the private X server and the lookup of system programs are the shared
//! ones of `termsprawl-test-support`.

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process_group};
use termsprawl_external_term::{SearchPath, TmuxLocation, find_tmux, socket_path};
pub(crate) use termsprawl_test_support::xvfb::{Xvfb, require};

/// How long a test waits for something that should happen in well under a second.
pub(crate) const PATIENCE: Duration = Duration::from_secs(10);

/// Writes an executable `#!/bin/sh` script.
pub(crate) fn script(path: &Path, body: &str) -> PathBuf {
    fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
    path.to_path_buf()
}

/// Writes `<userData>/agent-tools/preferences.json`.
pub(crate) fn write_preferences(user_data: &Path, content: &str) {
    let dir = user_data.join("agent-tools");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("preferences.json"), content).unwrap();
}

/// The real tmux, found as the crate finds it.
pub(crate) fn real_tmux() -> PathBuf {
    find_tmux(&SearchPath::from_env())
        .unwrap_or_else(|_| panic!("tmux is not installed: install the Debian package tmux"))
}

/// A directory to use as `PATH`, holding symbolic links to the named programs.
pub(crate) fn bin_dir(parent: &Path, programs: &[(&str, &Path)]) -> PathBuf {
    let bin = parent.join("bin");
    fs::create_dir_all(&bin).unwrap();
    for (name, target) in programs {
        symlink(target, bin.join(name)).unwrap();
    }
    bin
}

/// A search path of exactly one directory and no home.
pub(crate) fn only(bin: &Path) -> SearchPath {
    SearchPath::new(Some(bin.as_os_str()), None)
}

/// Polls `condition` until it holds or [`PATIENCE`] runs out.
pub(crate) fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !condition() {
        assert!(Instant::now() < deadline, "timed out after {PATIENCE:?} waiting until {what}");
        thread::sleep(Duration::from_millis(25));
    }
}

/// Whether a process (zombies included) exists.
pub(crate) fn process_exists(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// The process group of a live process, from `/proc/<pid>/stat`.
pub(crate) fn process_group(pid: u32) -> u32 {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // `pid (comm) state ppid pgrp …`; comm may contain spaces, so split after its `)`.
    let after_comm = &stat[stat.rfind(')').unwrap() + 1..];
    after_comm.split_whitespace().nth(2).unwrap().parse().unwrap()
}

/// A tmux server on the managed socket of a private `<userData>`, killed on drop.
pub(crate) struct TmuxServer {
    pub(crate) location: TmuxLocation,
}

impl TmuxServer {
    /// Starts a detached session `ts-<id>` for each node id, on
    /// `<userData>/tmux-sockets/termsprawl` with an empty `<userData>/tmux.conf`.
    pub(crate) fn start(user_data: &Path, node_ids: &[&str]) -> TmuxServer {
        fs::create_dir_all(socket_path(user_data).parent().unwrap()).unwrap();
        fs::write(user_data.join("tmux.conf"), "").unwrap();
        let server = TmuxServer { location: TmuxLocation::managed(real_tmux(), user_data) };
        for node_id in node_ids {
            server.run(&[
                "new-session",
                "-d",
                "-s",
                &format!("ts-{node_id}"),
                "-x",
                "80",
                "-y",
                "24",
            ]);
        }
        server
    }

    /// Runs a tmux command on this server and returns its stdout; it must succeed.
    pub(crate) fn run(&self, args: &[&str]) -> String {
        let output = self.command(args).output().unwrap();
        assert!(
            output.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.location.program);
        command
            .args(&self.location.base_args)
            .args(args)
            .env_remove("TMUX")
            .env_remove("TMUX_PANE")
            .stdin(Stdio::null());
        command
    }
}

impl Drop for TmuxServer {
    fn drop(&mut self) {
        let _ = self.command(&["kill-server"]).stdout(Stdio::null()).stderr(Stdio::null()).status();
    }
}

/// Kills a launched emulator's process group once, at the latest on drop (the group id is the
/// emulator's pid).
pub(crate) struct KillGroup(Option<u32>);

impl KillGroup {
    /// Guards the group led by `pid`.
    pub(crate) fn new(pid: u32) -> KillGroup {
        KillGroup(Some(pid))
    }

    /// Sends `SIGTERM` to the group now (only the first call does anything).
    pub(crate) fn kill(&mut self) {
        if let Some(pid) = self.0.take() {
            let pid = Pid::from_raw(i32::try_from(pid).unwrap()).unwrap();
            let _ = kill_process_group(pid, Signal::TERM);
        }
    }
}

impl Drop for KillGroup {
    fn drop(&mut self) {
        self.kill();
    }
}
