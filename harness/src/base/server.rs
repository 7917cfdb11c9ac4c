//! The places of a run and the server under test ([`super::binaries`] builds it): one
//! `termsprawl-headless serve` process at a time on a run's data directory, with the faults the
//! soak injects (SIGKILL, SIGTERM, a torn `endpoint.json`). The bench starts its
//! headless server here too (parts 4 and 5), without an execution log.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::Duration;

use anyhow::{Context as _, bail, ensure};

use termsprawl_test_support::serve::{self as test_support, serve_command};

use super::binaries::Binaries;
use super::wait_child;

/// How long `serve` may take to print `ready`, and to stop after SIGTERM.
pub const START_TIMEOUT: Duration = Duration::from_secs(30);

/// Where everything of one run lives (under a temporary directory).
#[derive(Debug, Clone)]
pub struct Places {
    /// The temporary directory; every process of the run mentions it.
    pub root: PathBuf,
    /// `<userData>`.
    pub data: PathBuf,
    /// The project folders (the first is `serve --project`).
    pub projects: Vec<PathBuf>,
    /// The execution log of `serve --exec-log`; `None` runs the server without one.
    pub exec_log: Option<PathBuf>,
    /// Where the servers' and bridges' stderr go.
    pub logs: PathBuf,
}

impl Places {
    /// The places of a run without an execution log in a new temporary directory named
    /// `prefix…`: one project folder, the logs and the folders `extra` below it, all created. The
    /// directory goes when the returned guard drops.
    pub fn temporary(prefix: &str, extra: &[&str]) -> anyhow::Result<(tempfile::TempDir, Places)> {
        let temp = tempfile::Builder::new()
            .prefix(prefix)
            .tempdir()
            .context("cannot create a temporary directory")?;
        let root = temp.path().canonicalize()?;
        let places = Places {
            data: root.join("data"),
            projects: vec![root.join("project")],
            exec_log: None,
            logs: root.join("logs"),
            root: root.clone(),
        };
        let extra = extra.iter().map(|dir| root.join(dir));
        for dir in places.projects.iter().cloned().chain([places.logs.clone()]).chain(extra) {
            fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        }
        Ok((temp, places))
    }

    /// `D`.
    pub fn agent_tools(&self) -> PathBuf {
        self.data.join("agent-tools")
    }

    /// `D/endpoint.json`.
    pub fn endpoint(&self) -> PathBuf {
        self.agent_tools().join("endpoint.json")
    }

    /// The private tmux server's socket.
    pub fn tmux_socket(&self) -> PathBuf {
        self.data.join("tmux-sockets").join("termsprawl")
    }
}

/// One `serve` process.
#[derive(Debug)]
pub struct Serve {
    serve: test_support::Serve,
}

/// How a server was stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// SIGKILL: no cleanup at all.
    Kill,
    /// SIGTERM: the server closes cleanly.
    Term,
}

impl Serve {
    /// Starts `serve --project <first project> --ctl <ctl> [--exec-log <log>]` and waits for its
    /// `ready` line; its stderr is appended to `logs/serve-<incarnation>.log`.
    /// `extra` arguments follow (`--recover`).
    pub fn start(
        binaries: &Binaries,
        places: &Places,
        incarnation: u32,
        extra: &[&str],
    ) -> anyhow::Result<Serve> {
        let log_path = places.logs.join(format!("serve-{incarnation}.log"));
        let mut log = fs::File::create(&log_path)
            .with_context(|| format!("cannot create {}", log_path.display()))?;
        let mut command =
            serve_command(&binaries.headless, &places.data, &places.projects[0], &binaries.ctl);
        if let Some(exec_log) = &places.exec_log {
            command.arg("--exec-log").arg(exec_log);
        }
        command.args(extra);
        let serve = test_support::Serve::start(&mut command, START_TIMEOUT, move |line| {
            let _ = writeln!(log, "{line}");
        })?;
        Ok(Serve { serve })
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.serve.pid()
    }

    /// Stops the server and reaps it. After SIGTERM it must exit 0 within [`START_TIMEOUT`];
    /// otherwise it is killed and the error says so.
    pub fn stop(mut self, how: Stop) -> anyhow::Result<()> {
        let pid =
            rustix::process::Pid::from_raw(i32::try_from(self.serve.pid())?).context("pid 0")?;
        let signal = match how {
            Stop::Kill => rustix::process::Signal::KILL,
            Stop::Term => rustix::process::Signal::TERM,
        };
        rustix::process::kill_process(pid, signal).context("cannot signal the server")?;
        let child = self.serve.child();
        if how == Stop::Kill {
            child.wait().context("cannot reap the server")?;
            return Ok(());
        }
        match wait_child(child, START_TIMEOUT)? {
            Some(status) => {
                ensure!(status.success(), "serve exited with {status} after SIGTERM");
                Ok(())
            }
            None => bail!("serve did not stop within 30 s of SIGTERM"),
        }
    }
}

/// Runs `measure` against a `serve` on a temporary data directory (`prefix`, with the `extra`
/// folders of [`Places::temporary`]), without an execution log; then stops the server with
/// SIGTERM and kills its tmux server, also after a failure, which then carries the server's log.
/// The bench's parts 4, 5 and 6 run this way.
pub fn on_temporary_serve<T>(
    binaries: &Binaries,
    prefix: &str,
    extra: &[&str],
    measure: impl FnOnce(&Places, &Serve) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let (_temp, places) = Places::temporary(prefix, extra)?;
    let serve = Serve::start(binaries, &places, 0, &[])?;
    let measured = measure(&places, &serve);
    let stopped = serve.stop(Stop::Term);
    super::binaries::kill_tmux_server(&places.tmux_socket());
    let measured = measured.map_err(|error| {
        let log = fs::read_to_string(places.logs.join("serve-0.log")).unwrap_or_default();
        error.context(format!("the server said:\n{}", log.trim_end()))
    })?;
    stopped?;
    Ok(measured)
}

/// A `serve` that must refuse to start (a damaged canvas): its exit status and stderr; an error
/// when it does not exit within [`START_TIMEOUT`] (it is killed).
pub fn refused_start(
    binaries: &Binaries,
    places: &Places,
) -> anyhow::Result<(std::process::ExitStatus, String)> {
    let mut command =
        serve_command(&binaries.headless, &places.data, &places.projects[0], &binaries.ctl);
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot start serve")?;
    let Some(status) = wait_child(&mut child, START_TIMEOUT)? else {
        bail!("serve on a damaged canvas did not exit within 30 s");
    };
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        std::io::Read::read_to_string(&mut pipe, &mut stderr)?;
    }
    Ok((status, stderr))
}

/// `termsprawl-headless --data <data> ARGS`: its stdout, or an error with its stderr.
pub fn headless(binaries: &Binaries, places: &Places, args: &[&str]) -> anyhow::Result<String> {
    let output = Command::new(&binaries.headless)
        .arg("--data")
        .arg(&places.data)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .context("cannot run termsprawl-headless")?;
    ensure!(
        output.status.success(),
        "termsprawl-headless {} failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr).trim()
    );
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// `launch --project PROJECT --agent NAME --json -- sh -c 'cat >/dev/null'`: an agent node whose
/// program reads its input and never executes it; the launch's JSON (`nodeId`, `sessionFile`, …).
pub fn launch(
    binaries: &Binaries,
    places: &Places,
    project: &Path,
    name: &str,
) -> anyhow::Result<serde_json::Value> {
    let folder = project.to_string_lossy();
    let args = [
        "launch",
        "--project",
        &folder,
        "--agent",
        name,
        "--json",
        "--",
        "sh",
        "-c",
        "cat >/dev/null",
    ];
    let printed = headless(binaries, places, &args)?;
    serde_json::from_str(&printed).context("launch printed no JSON")
}

/// Rewrites `path` in place with its own content, non-atomically: truncate, write the first
/// part, pause `pause`, write the rest. A reader meanwhile sees an empty or partial file.
pub fn rewrite_torn(path: &Path, pause: Duration) -> anyhow::Result<()> {
    let content = fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut file = fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    let half = content.len() / 2;
    file.write_all(&content[..half])?;
    file.flush()?;
    thread::sleep(pause);
    file.write_all(&content[half..])?;
    Ok(())
}
