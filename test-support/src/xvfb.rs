//! A private X server for tests that open real terminal emulators, and the lookup of the system
//! programs end-to-end tests need (which `cargo xtask test` installs).

use std::ffi::OsString;
use std::io::{self, BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use termsprawl_external_term::SearchPath;

/// How long Xvfb may take to report its display.
const PATIENCE: Duration = Duration::from_secs(15);

/// A system program on `PATH`.
///
/// # Panics
///
/// When it is not installed, with the command that installs it.
pub fn require(name: &str, package: &str) -> PathBuf {
    SearchPath::from_env().find(name).unwrap_or_else(|| {
        panic!(
            "`{name}` is not installed, and this end-to-end test needs it: run `cargo xtask test`, \
             which installs the Debian package {package} (or `apt-get install -y {package}`)"
        )
    })
}

/// A private X server (`Xvfb -displayfd`), killed on drop.
#[derive(Debug)]
pub struct Xvfb {
    child: Child,
    display: String,
}

impl Xvfb {
    /// Starts Xvfb on a free display number, which it reports on the pipe given as its stdout.
    ///
    /// # Panics
    ///
    /// When Xvfb is not installed or reports no display.
    pub fn start() -> Xvfb {
        let program = require("Xvfb", "xvfb");
        let (reader, writer) = io::pipe().unwrap();
        let mut command = Command::new(program);
        command
            .args(["-displayfd", "1", "-nolisten", "tcp", "-screen", "0", "800x600x24"])
            .stdin(Stdio::null())
            .stdout(writer)
            .stderr(Stdio::null());
        let child = command.spawn().unwrap();
        // Only Xvfb holds the write end now: end of file means it died without a display.
        drop(command);
        let mut xvfb = Xvfb { child, display: String::new() };
        let (sender, receiver) = mpsc::channel();
        thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(reader).read_line(&mut line);
            let _ = sender.send(line);
        });
        let line = receiver.recv_timeout(PATIENCE).expect("Xvfb did not report a display number");
        let number = line.trim();
        assert!(!number.is_empty(), "Xvfb exited without reporting a display number");
        xvfb.display = format!(":{number}");
        xvfb
    }

    /// The display, `:N`.
    pub fn display(&self) -> &str {
        &self.display
    }

    /// `DISPLAY` for clients of this server.
    pub fn display_env(&self) -> (OsString, OsString) {
        (OsString::from("DISPLAY"), OsString::from(&self.display))
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
