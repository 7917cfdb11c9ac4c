//! Shared fixtures of the `termsprawlctl acp` end-to-end tests (spec/acp.md §4): the deterministic
//! peer agent on the pinned Python SDK (the `acp-sdk` peer that `cargo xtask test` provisions), a
//! private directory per run (session root, trace, and `TMUX_TMPDIR`, so the `termsprawl-acp` tmux
//! server is private too), the REPORT line, and the wire-conformance check of a trace against the
//! ACP v1 JSON Schema.

use std::ffi::OsStr;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use tempfile::TempDir;

use crate::support::BIN;

/// The repository root.
pub(crate) fn repo() -> PathBuf {
    termsprawl_test_support::workspace_root()
}

/// The Python of the private ACP environment and the peer agent script.
pub(crate) struct Peer {
    pub(crate) python: PathBuf,
    pub(crate) agent: PathBuf,
}

/// The peer: the `acp-sdk` environment that `cargo xtask test` provisions (a test without it
/// fails, naming that command).
pub(crate) fn peer() -> Peer {
    let python = termsprawl_test_support::peers::python("acp-sdk");
    Peer { python, agent: repo().join("tests/python/acp_agent.py") }
}

/// What the rule that closes every interactive turn holds (`─── 2.4 s ───…`, issue 35): a normal
/// end shows no stop reason, so this marks a turn's end.
pub(crate) const TURN_END: &str = " s ───";

/// The arguments that select the front end's private tmux server (under the place's
/// `TMUX_TMPDIR`).
pub(crate) const ACP_SERVER: [&str; 2] = ["-L", "termsprawl-acp"];

/// One private directory for a front end and its agent: `root/` is the session root, `trace.jsonl`
/// the trace, `tmux/` the `TMUX_TMPDIR`.
pub(crate) struct Place {
    dir: TempDir,
}

impl Place {
    pub(crate) fn new() -> Place {
        let dir = TempDir::new().unwrap();
        std::fs::create_dir(dir.path().join("root")).unwrap();
        std::fs::create_dir(dir.path().join("tmux")).unwrap();
        Place { dir }
    }

    pub(crate) fn path(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path()).unwrap()
    }

    pub(crate) fn root(&self) -> PathBuf {
        self.path().join("root")
    }

    pub(crate) fn trace(&self) -> PathBuf {
        self.path().join("trace.jsonl")
    }

    pub(crate) fn tmux_tmpdir(&self) -> PathBuf {
        self.path().join("tmux")
    }

    /// `termsprawlctl [program] acp --cwd ROOT --trace TRACE --agent-log - [options] -- python
    /// agent`, with the place's `TMUX_TMPDIR`, no inherited session and stdin from `/dev/null`.
    pub(crate) fn command(&self, peer: &Peer, program: &[&str], options: &[&str]) -> Command {
        let options = [&["--agent-log", "-"][..], options].concat();
        self.front_end(program, &options, &[peer.python.as_os_str(), peer.agent.as_os_str()])
    }

    /// `termsprawlctl [program] acp --cwd ROOT --trace TRACE [options] -- AGENT...`, with the
    /// place's `TMUX_TMPDIR`, no inherited session, `TMUX` or `NO_COLOR`, stdin from `/dev/null`
    /// and stdout and stderr piped: every scenario's front end.
    pub(crate) fn front_end(
        &self,
        program: &[&str],
        options: &[&str],
        agent: &[&OsStr],
    ) -> Command {
        let mut command = Command::new(BIN);
        command
            .args(program)
            .arg("acp")
            .arg("--cwd")
            .arg(self.root())
            .arg("--trace")
            .arg(self.trace())
            .args(options)
            .arg("--")
            .args(agent)
            .current_dir(self.path())
            .env("TMUX_TMPDIR", self.tmux_tmpdir())
            .env_remove("TERMSPRAWL_SESSION_FILE")
            .env_remove("TMUX")
            .env_remove("NO_COLOR")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    /// `tmux SERVER...` with the place's `TMUX_TMPDIR` and no `TMUX`, the one way these tests run
    /// tmux; `server` selects the server (`ACP_SERVER`, or a socket of the test's own).
    pub(crate) fn tmux<S: AsRef<OsStr>>(&self, server: &[S]) -> Command {
        let mut command = Command::new("tmux");
        command.args(server).env("TMUX_TMPDIR", self.tmux_tmpdir()).env_remove("TMUX");
        command
    }

    /// The tmux sessions on the place's private `termsprawl-acp` server.
    pub(crate) fn tmux_sessions(&self) -> Vec<String> {
        let output = self
            .tmux(&ACP_SERVER)
            .args(["list-sessions", "-F", "#{session_name}"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).lines().map(str::to_owned).collect()
    }

    /// Validates the trace against the ACP v1 JSON Schema: every message we sent must pass; the
    /// agent's messages that fail are returned (scenarios send broken ones on purpose).
    pub(crate) fn check_trace(&self, peer: &Peer) -> Vec<Value> {
        let output = Command::new(&peer.python)
            .arg(repo().join("tests/python/acp_validate.py"))
            .arg(repo().join("acp/tests/data/acp-v1-schema.json"))
            .arg(self.trace())
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "the validator failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let summary: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert!(summary["checked"].as_u64().unwrap() > 0, "nothing was validated: {summary}");
        assert_eq!(
            summary["out_failures"],
            serde_json::json!([]),
            "messages termsprawlctl sent do not match the ACP v1 schema"
        );
        summary["in_failures"].as_array().unwrap().clone()
    }

    /// The trace's messages in one direction.
    pub(crate) fn traced(&self, direction: &str) -> Vec<Value> {
        std::fs::read_to_string(self.trace())
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).unwrap())
            .filter(|record| record["dir"] == direction)
            .map(|record| record["msg"].clone())
            .collect()
    }
}

/// A finished run.
pub(crate) struct Finished {
    pub(crate) status: ExitStatus,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Finished {
    /// The JSON of the `REPORT <json>` line the agent wrote.
    pub(crate) fn report(&self) -> Value {
        let line =
            self.stdout.lines().find_map(|line| line.strip_prefix("REPORT ")).unwrap_or_else(
                || panic!("no REPORT line in:\n{}\nstderr:\n{}", self.stdout, self.stderr),
            );
        serde_json::from_str(line).unwrap()
    }

    pub(crate) fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// Exit 0 after a turn that ended with `end_turn`, which shows no stop reason (issue 35).
    pub(crate) fn assert_end_turn(&self) {
        assert_eq!(self.code(), Some(0), "stdout:\n{}\nstderr:\n{}", self.stdout, self.stderr);
        assert!(!self.stdout.contains("[stop reason"), "{}", self.stdout);
    }
}

/// Waits for a child with a generous limit (a hung front end fails the test instead of the run).
pub(crate) fn finish(mut child: Child, limit: Duration) -> Finished {
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let err = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("termsprawlctl acp did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Finished { status, stdout: out.join().unwrap(), stderr: err.join().unwrap() }
}

/// Runs a command to its end.
pub(crate) fn run(mut command: Command) -> Finished {
    finish(command.spawn().unwrap(), Duration::from_mins(2))
}

/// Processes whose command line contains `needle`, not counting zombies.
pub(crate) fn processes_with(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let zombie = std::fs::read_to_string(entry.path().join("stat")).is_ok_and(|stat| {
            stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('Z'))
        });
        if cmdline.contains(needle) && !zombie {
            found.push(format!("{}: {cmdline}", entry.file_name().to_string_lossy()));
        }
    }
    found
}

/// Polls until `check` holds or the limit passes; whether it held.
pub(crate) fn eventually(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if check() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A marker unique to this test process and call, usable as a `sleep` duration.
pub(crate) fn marker() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let serial = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("9{:06}{serial:02}", std::process::id() % 1_000_000)
}
