//! A `termsprawl-headless serve` process, started and waited for until it prints its ready line:
//! the one way the headless tests, the every-operation run, the demo and the soak start a server.

use std::io::{self, BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// The line `serve` prints on stderr once `endpoint.json` is written.
pub const READY_LINE: &str = "termsprawl-headless: ready";

/// `HEADLESS --data DATA serve --project PROJECT --ctl CTL`, to which a caller adds arguments and
/// environment before [`Serve::start`].
pub fn serve_command(headless: &Path, data: &Path, project: &Path, ctl: &Path) -> Command {
    let mut command = Command::new(headless);
    command
        .arg("--data")
        .arg(data)
        .arg("serve")
        .arg("--project")
        .arg(project)
        .arg("--ctl")
        .arg(ctl);
    command
}

/// Why a server did not become ready.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The program could not be started.
    #[error("cannot start termsprawl-headless serve: {0}")]
    Spawn(#[source] io::Error),
    /// It ended, or did not print the ready line in time; what it printed (it was killed).
    #[error("termsprawl-headless serve did not become ready; it said:\n{}", .0.join("\n"))]
    NotReady(Vec<String>),
}

/// A running `serve` process. Its stderr is read on a thread of its own, so the server never
/// blocks on a full pipe. Dropping it kills the process.
#[derive(Debug)]
pub struct Serve {
    child: Option<Child>,
    lines: Vec<String>,
    rest: mpsc::Receiver<String>,
}

impl Serve {
    /// Spawns `command` with stdin and stdout closed and stderr piped, and waits up to `patience`
    /// for [`READY_LINE`]. Every stderr line, before and after it, is also given to `each_line`
    /// (on the reading thread).
    pub fn start(
        command: &mut Command,
        patience: Duration,
        mut each_line: impl FnMut(&str) + Send + 'static,
    ) -> Result<Serve, ServeError> {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(ServeError::Spawn)?;
        let stderr = child.stderr.take().expect("stderr is piped");
        let (sender, lines_rx) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                each_line(&line);
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut serve = Serve { child: Some(child), lines: Vec::new(), rest: lines_rx };
        let deadline = Instant::now() + patience;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Ok(line) = serve.rest.recv_timeout(left) else {
                serve.kill();
                return Err(ServeError::NotReady(std::mem::take(&mut serve.lines)));
            };
            let ready = line == READY_LINE;
            serve.lines.push(line);
            if ready {
                return Ok(serve);
            }
        }
    }

    /// The stderr lines up to and including the ready line.
    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// The process, to wait for it or poll it.
    pub fn child(&mut self) -> &mut Child {
        self.child.as_mut().expect("the server was not killed")
    }

    /// Sends SIGTERM and waits for the exit; the exit status and the stderr lines after the ready
    /// line.
    pub fn terminate(mut self) -> io::Result<(ExitStatus, Vec<String>)> {
        signal(self.pid(), rustix::process::Signal::TERM);
        let status = self.child().wait()?;
        let rest = self.rest.iter().collect();
        self.child = None;
        Ok((status, rest))
    }

    /// Kills the process and reaps it (nothing when it is gone already).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Sends `signal` to the process `pid` (nothing for a pid that does not fit or is gone).
pub fn signal(pid: u32, signal: rustix::process::Signal) {
    let pid = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw);
    if let Some(pid) = pid {
        let _ = rustix::process::kill_process(pid, signal);
    }
}
