//! Fixtures: the shared fake app (a real loopback `ToolServer` in a temp dir whose handler records
//! every request), a raw loopback listener that records request bytes exactly, and the one way to
//! run the binary and turn its run into a normalised transcript.

use std::ffi::{OsStr, OsString};
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::thread::{self, JoinHandle};

use serde_json::json;
use tempfile::TempDir;
use termsprawl_protocol::shell::shell_word;
use termsprawl_test_support::fake::{BlockingFakeApp, FakeApp};

/// The binary under test.
pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_termsprawlctl");

/// A fake app ([`FakeApp`]: a real tool server on `127.0.0.1:0` with `D` in a temp dir and one
/// provisioned session, `D/sessions/agent-1.json`) that the binary's runs go to, with `tmp/` in
/// the temp dir as the binary's `TMPDIR`.
///
/// The handler records each request and answers with the next queued response
/// ([`FakeApp::respond`]), or by echoing the arguments as the value. It dereferences to the app.
pub(crate) struct Fixture {
    app: BlockingFakeApp,
    token: String,
}

impl Deref for Fixture {
    type Target = BlockingFakeApp;

    fn deref(&self) -> &BlockingFakeApp {
        &self.app
    }
}

impl DerefMut for Fixture {
    fn deref_mut(&mut self) -> &mut BlockingFakeApp {
        &mut self.app
    }
}

impl Fixture {
    pub(crate) fn new() -> Fixture {
        let app = FakeApp::builder().start_blocking().unwrap();
        std::fs::create_dir(app.temp_dir().unwrap().join("tmp")).unwrap();
        let token = app.token();
        Fixture { app, token }
    }

    /// The temp dir holding `D` and `tmp/` (the binary's `TMPDIR`).
    pub(crate) fn temp(&self) -> &Path {
        self.app.temp_dir().unwrap()
    }

    /// A command line of the binary, with `TMPDIR` inside the temp dir and no session variable.
    pub(crate) fn ctl(&self) -> Run {
        Run::new(self.temp())
    }

    /// A command line that starts `--session <session file>`.
    pub(crate) fn ctl_session(&self) -> Run {
        let mut run = self.ctl();
        run.arg("--session").arg(self.session_file().as_os_str());
        run
    }

    /// Runs `run` and returns its transcript with the requests the server received, normalised,
    /// after checking that the token appears nowhere.
    #[track_caller]
    pub(crate) fn check(&self, run: &mut Run) -> String {
        let output = run.output();
        self.transcript(run, &output)
    }

    /// The normalised transcript of a run that already happened.
    #[track_caller]
    pub(crate) fn transcript(&self, run: &Run, output: &Output) -> String {
        for stream in [&output.stdout, &output.stderr] {
            let text = String::from_utf8_lossy(stream);
            assert!(!text.contains(&self.token), "the token leaked: {text}");
        }
        let mut text = transcript_text(run, output);
        let received = self.take_received();
        if !received.is_empty() {
            text.push_str("--- received\n");
            for request in received {
                let _ = writeln!(text, "{} {}", request.operation, request.args);
            }
        }
        self.normalise(&text)
    }

    /// Replaces the paths and port of this fixture with placeholders.
    pub(crate) fn normalise(&self, text: &str) -> String {
        let session = self.session_file().to_string_lossy();
        let temp = self.temp().to_string_lossy();
        let port = self.port();
        let mut text = text.replace(session.as_ref(), "[SESSION]").replace(temp.as_ref(), "[TEMP]");
        if let Some(port) = port {
            text = text.replace(&format!("127.0.0.1:{port}"), "127.0.0.1:[PORT]");
        }
        replace_random_temp_names(&text)
    }
}

/// `termsprawlctl-` plus tempfile's six random characters becomes `termsprawlctl-[RANDOM]`.
fn replace_random_temp_names(text: &str) -> String {
    const PREFIX: &str = "/termsprawlctl-";
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(PREFIX) {
        let (head, tail) = rest.split_at(at + PREFIX.len());
        out.push_str(head);
        let random = tail.chars().take_while(char::is_ascii_alphanumeric).count();
        if random == 6 {
            out.push_str("[RANDOM]");
            rest = &tail[random..];
        } else {
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

/// One run of the binary.
pub(crate) struct Run {
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    stdin: Vec<u8>,
    stdout: Option<Stdio>,
    cwd: Option<PathBuf>,
    temp: PathBuf,
    shell: Option<String>,
}

impl Run {
    /// A run with `TMPDIR` at `temp/tmp`, for tests without a [`Fixture`].
    pub(crate) fn new_for(temp: &Path) -> Run {
        Run::new(temp)
    }

    fn new(temp: &Path) -> Run {
        Run {
            args: Vec::new(),
            env: Vec::new(),
            stdin: Vec::new(),
            stdout: None,
            cwd: None,
            temp: temp.to_path_buf(),
            shell: None,
        }
    }

    pub(crate) fn arg(&mut self, arg: impl AsRef<OsStr>) -> &mut Run {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    pub(crate) fn args<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(&mut self, args: I) -> &mut Run {
        for arg in args {
            self.arg(arg);
        }
        self
    }

    pub(crate) fn env(&mut self, key: &str, value: impl AsRef<OsStr>) -> &mut Run {
        self.env.push((key.into(), value.as_ref().to_owned()));
        self
    }

    pub(crate) fn stdin(&mut self, input: &str) -> &mut Run {
        self.stdin = input.as_bytes().to_vec();
        self
    }

    pub(crate) fn stdout(&mut self, stdout: Stdio) -> &mut Run {
        self.stdout = Some(stdout);
        self
    }

    pub(crate) fn current_dir(&mut self, dir: &Path) -> &mut Run {
        self.cwd = Some(dir.to_path_buf());
        self
    }

    /// Runs `script` with `sh -c`, with `$CTL` naming the binary, instead of the arguments.
    pub(crate) fn shell(&mut self, script: &str) -> &mut Run {
        self.shell = Some(script.to_owned());
        self
    }

    /// The process, ready to spawn, with stdin and stderr piped.
    pub(crate) fn command(&mut self) -> Command {
        let mut command = match &self.shell {
            Some(script) => {
                let mut command = Command::new("sh");
                command.arg("-c").arg(script).env("CTL", BIN);
                command
            }
            None => Command::new(BIN),
        };
        command
            .args(&self.args)
            .env_remove("TERMSPRAWL_SESSION_FILE")
            .env("TMPDIR", self.temp.join("tmp"))
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .stdout(self.stdout.take().unwrap_or_else(Stdio::piped));
        for (key, value) in &self.env {
            command.env(key, value);
        }
        if let Some(cwd) = &self.cwd {
            command.current_dir(cwd);
        }
        command
    }

    /// Runs to the end, feeding stdin.
    pub(crate) fn output(&mut self) -> Output {
        let mut child = self.command().spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let input = self.stdin.clone();
        let writer = thread::spawn(move || {
            // The program may exit without reading its input.
            let _ = stdin.write_all(&input);
        });
        let output = child.wait_with_output().unwrap();
        writer.join().unwrap();
        output
    }

    /// The command line as a shell would show it.
    pub(crate) fn display(&self) -> String {
        let mut line = String::from("$ ");
        if let Some(cwd) = &self.cwd {
            let _ = write!(line, "cd {} && ", shell_word(&cwd.to_string_lossy()));
        }
        for (key, value) in &self.env {
            let _ =
                write!(line, "{}={} ", key.to_string_lossy(), shell_word(&value.to_string_lossy()));
        }
        if let Some(script) = &self.shell {
            line.push_str("sh -c ");
            line.push_str(&shell_word(script));
            return line;
        }
        line.push_str("termsprawlctl");
        for arg in &self.args {
            line.push(' ');
            line.push_str(&shell_word(&arg.to_string_lossy()));
        }
        line
    }
}

/// Exit status, stdout and stderr of a run, under its command line.
pub(crate) fn transcript_text(run: &Run, output: &Output) -> String {
    let mut text = run.display();
    text.push('\n');
    if !run.stdin.is_empty() {
        let _ = writeln!(text, "--- stdin\n{}", String::from_utf8_lossy(&run.stdin).trim_end());
    }
    let code = output.status.code().map_or_else(|| "signal".to_owned(), |code| code.to_string());
    let _ = writeln!(text, "--- exit {code}");
    for (name, stream) in [("stdout", &output.stdout), ("stderr", &output.stderr)] {
        if !stream.is_empty() {
            let body = String::from_utf8_lossy(stream);
            let _ = write!(text, "--- {name}\n{body}");
            if !body.ends_with('\n') {
                text.push_str("⏎ (no final newline)\n");
            }
        }
    }
    text
}

/// A loopback listener that answers one HTTP request with a fixed tool result and keeps the
/// request's bytes exactly as they arrived, with discovery files pointing at it.
pub(crate) struct RawServer {
    temp: TempDir,
    port: u16,
    handle: JoinHandle<Vec<u8>>,
}

impl RawServer {
    pub(crate) fn start(response_body: &str) -> RawServer {
        let temp = TempDir::new().unwrap();
        std::fs::create_dir(temp.path().join("tmp")).unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let data_dir = temp.path().join("agent-tools");
        std::fs::create_dir_all(data_dir.join("sessions")).unwrap();
        let endpoint = json!({"url": format!("http://127.0.0.1:{port}/call"), "instanceId": "raw"});
        std::fs::write(data_dir.join("endpoint.json"), endpoint.to_string()).unwrap();
        let session = json!({
            "nodeId": "agent-1",
            "projectId": "p1",
            "token": "f".repeat(64),
            "status": {"state": "needs-setup", "adapter": "claude", "version": "unknown", "reason": "r"}
        });
        std::fs::write(data_dir.join("sessions/agent-1.json"), session.to_string()).unwrap();
        let response = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{response_body}",
            response_body.len()
        );
        let handle = thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut request = Vec::new();
            let mut buffer = [0; 4096];
            loop {
                let read = stream.read(&mut buffer).unwrap();
                request.extend_from_slice(&buffer[..read]);
                if read == 0 || complete(&request) {
                    break;
                }
            }
            stream.write_all(response.as_bytes()).unwrap();
            request
        });
        RawServer { temp, port, handle }
    }

    pub(crate) fn session(&self) -> PathBuf {
        self.temp.path().join("agent-tools/sessions/agent-1.json")
    }

    pub(crate) fn temp(&self) -> &Path {
        self.temp.path()
    }

    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// The body of the one request, once it was answered.
    pub(crate) fn body(self) -> Vec<u8> {
        let request = self.handle.join().unwrap();
        let at = request.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        request[at + 4..].to_vec()
    }
}

/// Whether `request` holds its head and the whole body its `content-length` announces.
fn complete(request: &[u8]) -> bool {
    let Some(at) = request.windows(4).position(|w| w == b"\r\n\r\n") else { return false };
    let head = String::from_utf8_lossy(&request[..at]).to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|value| value.trim().parse::<usize>().ok())
        .unwrap_or(0);
    request.len() >= at + 4 + length
}
