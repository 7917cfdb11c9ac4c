//! The managed tmux server of `spec/protocol.md` §9.2:
//! `tmux -S <userData>/tmux-sockets/termsprawl -f <userData>/tmux.conf …`. Commands go through
//! one control-mode client ([`control`]) while a session runs to attach it to, and as a tmux
//! process of their own otherwise (and for `new-session` and `kill-server`); either way a command
//! that tmux does not answer within [`COMMAND_DEADLINE`] fails with [`TmuxError::Wedged`].
//!
//! Every node session is `ts-<nodeId>` and is always addressed with the exact-match target
//! `=ts-<nodeId>` (pane commands `=ts-<nodeId>:`), so that `ts-n1` never reaches `ts-n10`. Text
//! goes in through a named paste buffer (`set-buffer` on the control client's line, its pieces
//! quoted literally, or `load-buffer -` from standard input; then `paste-buffer -r -d`), so that text of any length arrives byte for byte without passing
//! through tmux's command parser or its message size limit.

mod control;

use std::collections::HashSet;
use std::ffi::OsString;
use std::fs;
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use termsprawl_external_term::pane::PANE_STATE_FORMAT;
use termsprawl_external_term::{SearchPath, TmuxLocation, find_tmux, session_name};
use termsprawl_protocol::shell::single_quoted;
use tokio::io::AsyncWriteExt;
use tokio::process::Command;
use tokio::time::Instant;

use crate::layout::Layout;

/// The tmux configuration written when `<userData>/tmux.conf` is missing.
pub(crate) const MINIMAL_CONFIG: &str = "\
# Written by termsprawl-headless because this file was missing; termsprawl's managed tmux server reads it.
set -g history-limit 10000
set -g escape-time 10
";

/// How long tmux has to answer one command: past it the command fails, and a control client
/// that did not answer is dropped (the next command starts another).
pub(crate) const COMMAND_DEADLINE: Duration = Duration::from_secs(5);

/// Width and height of a new node's window, in cells.
const WINDOW_SIZE: (&str, &str) = ("160", "48");
/// [`WINDOW_SIZE`] as numbers: columns, rows.
pub(crate) const WINDOW_CELLS: (u32, u32) = (160, 48);

/// Environment variables never passed to tmux (and so never to a node): a nested tmux client
/// would act on the outer server.
const REMOVED_VARIABLES: [&str; 2] = ["TMUX", "TMUX_PANE"];

/// Why a tmux command failed.
#[derive(Debug, thiserror::Error)]
pub enum TmuxError {
    /// The node's session does not run (or the server does not).
    #[error("tmux session {0} is not running")]
    NotRunning(String),
    /// tmux could not be run.
    #[error("cannot run {program}: {source}")]
    Spawn {
        /// The tmux program.
        program: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// tmux did not answer in time (its server is stopped or stuck).
    #[error(
        "tmux {command} did not answer within {} s: the managed tmux server is stopped or stuck",
        COMMAND_DEADLINE.as_secs()
    )]
    Wedged {
        /// The tmux command name.
        command: &'static str,
    },
    /// The command went to tmux through the control client, which ended before tmux answered;
    /// it may have run, and a mutation is not sent twice (`control`'s [`control::Repeat`]).
    #[error("tmux {command} was sent, but {}", crate::messages::MAY_HAVE_RUN)]
    MayHaveRun {
        /// The tmux command name.
        command: &'static str,
    },
    /// tmux ran and failed.
    #[error("tmux {command} failed: {stderr}")]
    Failed {
        /// The tmux command name.
        command: &'static str,
        /// What tmux printed, trimmed.
        stderr: String,
    },
}

/// The managed tmux server: program, socket and configuration, the one way this crate runs tmux
/// (`terminal_external` hands the same [`TmuxLocation`] to `external-term`).
#[derive(Debug, Clone)]
pub struct Tmux {
    location: TmuxLocation,
    socket: PathBuf,
    config: PathBuf,
    control: Arc<control::Control>,
}

impl Tmux {
    /// Finds tmux (`PATH`, then the fallbacks of §9.2) for the server of `layout`.
    pub fn locate(
        layout: &Layout,
        search_path: &SearchPath,
    ) -> Result<Tmux, termsprawl_external_term::Error> {
        let program = find_tmux(search_path)?;
        let location = TmuxLocation::managed(program, layout.user_data());
        Ok(Tmux {
            location,
            socket: layout.tmux_socket(),
            config: layout.tmux_config(),
            control: Arc::default(),
        })
    }

    /// The tmux program and the arguments that select the server.
    pub fn location(&self) -> &TmuxLocation {
        &self.location
    }

    /// The tmux program.
    pub fn program(&self) -> &Path {
        &self.location.program
    }

    /// `<userData>/tmux-sockets/termsprawl`.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// `<userData>/tmux.conf`.
    pub fn config(&self) -> &Path {
        &self.config
    }

    /// The arguments that select the server: `-S <socket> -f <config>`.
    pub fn base_args(&self) -> Vec<OsString> {
        self.location.base_args.clone()
    }

    /// Creates the socket directory (0700) and writes [`MINIMAL_CONFIG`] when the configuration
    /// file is missing; an existing one (the app's) is left alone.
    pub fn prepare(&self, user_data: &Path) -> io::Result<()> {
        termsprawl_external_term::ensure_socket_dir(user_data).map_err(io::Error::other)?;
        let created =
            fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&self.config);
        match created {
            Ok(mut file) => io::Write::write_all(&mut file, MINIMAL_CONFIG.as_bytes()),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => Ok(()),
            Err(error) => Err(error),
        }
    }

    fn command(&self) -> Command {
        let mut command = Command::new(&self.location.program);
        command.args(&self.location.base_args);
        for variable in REMOVED_VARIABLES {
            command.env_remove(variable);
        }
        for (name, _) in std::env::vars_os() {
            if name.to_str().is_some_and(is_api_key_variable) {
                command.env_remove(name);
            }
        }
        command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        command.kill_on_drop(true);
        command
    }

    /// The process id of the control client while one runs (tests).
    pub fn control_client_pid(&self) -> Option<u32> {
        self.control.client_pid()
    }

    /// Runs one tmux command (or a command list, its commands separated by `;` words): through
    /// the control client when one can run and every word fits on a line, else as a process.
    async fn run(
        &self,
        name: &'static str,
        args: &[OsString],
        stdin: Option<&[u8]>,
    ) -> Result<String, TmuxError> {
        let deadline = Instant::now() + COMMAND_DEADLINE;
        // Without a socket no server runs, and attaching would start an empty one.
        if stdin.is_none()
            && self.socket.exists()
            && let Some((line, commands, repeat)) = control_line(name, args)
        {
            match self.control.request(|| self.command(), &line, commands, repeat, deadline).await {
                Ok(Some(blocks)) => return answer(name, blocks),
                Ok(None) => {}
                Err(unanswered) => return Err(unanswered_error(name, unanswered)),
            }
        }
        self.run_process(name, args, stdin, deadline).await
    }

    async fn run_process(
        &self,
        name: &'static str,
        args: &[OsString],
        stdin: Option<&[u8]>,
        deadline: Instant,
    ) -> Result<String, TmuxError> {
        // tmux 3.3a crashes when a session starts or ends while a control client starts.
        let _quiet = if SESSION_CHANGING.contains(&name) {
            Some(self.control.hold_off_starts().await)
        } else {
            None
        };
        let mut command = self.command();
        command.arg(name).args(args);
        if stdin.is_some() {
            command.stdin(Stdio::piped());
        }
        let spawn_error =
            |source| TmuxError::Spawn { program: self.location.program.clone(), source };
        let mut child = command.spawn().map_err(spawn_error)?;
        // tmux may exit before it reads its input (no server running): that failure, with what
        // tmux printed, is the answer, not the broken pipe of the write.
        let mut written = Ok(());
        if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
            written = pipe.write_all(input).await;
            drop(pipe);
        }
        let Ok(output) = tokio::time::timeout_at(deadline, child.wait_with_output()).await else {
            return Err(TmuxError::Wedged { command: name });
        };
        let output = output.map_err(spawn_error)?;
        if output.status.success() {
            written.map_err(spawn_error)?;
            return Ok(String::from_utf8_lossy(&output.stdout).into_owned());
        }
        Err(TmuxError::Failed {
            command: name,
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        })
    }

    /// Runs a command on a node's session; a failure while the session does not run is
    /// [`TmuxError::NotRunning`].
    async fn run_on(
        &self,
        node_id: &str,
        name: &'static str,
        args: &[OsString],
        stdin: Option<&[u8]>,
    ) -> Result<String, TmuxError> {
        match self.run(name, args, stdin).await {
            Ok(output) => Ok(output),
            Err(
                error @ (TmuxError::Spawn { .. }
                | TmuxError::Wedged { .. }
                | TmuxError::MayHaveRun { .. }),
            ) => Err(error),
            Err(error) => {
                if self.has_session(node_id).await? {
                    Err(error)
                } else {
                    Err(TmuxError::NotRunning(session_name(node_id)))
                }
            }
        }
    }

    /// Starts `ts-<nodeId>` detached in `cwd`, with `env` set in the session (`-e KEY=VALUE`).
    /// `argv` runs as the session's program (through `sh -c 'exec …'` with every word quoted);
    /// without it tmux starts its default shell.
    ///
    /// In the same tmux command list, so before the program can print, the pane's output is
    /// piped into `capture.out` (`capture.start` is touched when the pipe's reader runs, and
    /// `capture.end` when the pane is gone). With `capture.died` the pane stays after its program
    /// exits (`remain-on-exit`, so that its exit status can be read) and that file is touched when
    /// it does; the program is then started by [`Tmux::respawn`] once the reader runs, so that
    /// the output of a short command is in the file when its exit is seen.
    ///
    /// Answers the pid of the pane's process (`-P -F '#{pane_pid}'`, printed by the same tmux
    /// process), when tmux printed one.
    pub async fn new_session(
        &self,
        node_id: &str,
        cwd: &Path,
        env: &[(String, String)],
        argv: Option<&[String]>,
        capture: &Capture<'_>,
    ) -> Result<Option<i32>, TmuxError> {
        let mut command_args: Vec<OsString> = vec![
            "-d".into(),
            "-P".into(),
            "-F".into(),
            "#{pane_pid}".into(),
            "-s".into(),
            session_name(node_id).into(),
            "-x".into(),
            WINDOW_SIZE.0.into(),
            "-y".into(),
            WINDOW_SIZE.1.into(),
            "-c".into(),
            cwd.as_os_str().to_owned(),
        ];
        for (key, value) in env {
            command_args.push("-e".into());
            command_args.push(format!("{key}={value}").into());
        }
        if capture.died.is_some() {
            command_args.push(PLACEHOLDER.into());
        } else if let Some(argv) = argv {
            command_args.push(exec_line(argv).into());
        }
        // The paths travel as user options and reach the shell through `#{q:…}`, so no quoting
        // of ours has to survive tmux's parser.
        let target = pane(node_id).to_string_lossy().into_owned();
        let mut then = |words: &[&str], value: Option<&Path>| {
            command_args.push(";".into());
            command_args.extend(words.iter().map(OsString::from));
            if let Some(value) = value {
                command_args.push(value.as_os_str().to_owned());
            }
        };
        then(&["set-option", "-t", &target, "@ts_out"], Some(capture.out));
        then(&["set-option", "-t", &target, "@ts_start"], Some(capture.start));
        then(&["set-option", "-t", &target, "@ts_end"], Some(capture.end));
        if let Some(died) = capture.died {
            then(&["set-option", "-t", &target, "@ts_died"], Some(died));
            then(&["set-option", "-w", "-t", &target, "remain-on-exit", "on"], None);
            // No "Pane is dead (status …)" line on the screen of a finished run node.
            then(&["set-option", "-w", "-t", &target, "remain-on-exit-format", ""], None);
            then(
                &["set-hook", "-t", &target, "pane-died", "run-shell -b 'touch #{q:@ts_died}'"],
                None,
            );
        }
        then(&["pipe-pane", "-o", "-t", &target, PIPE_COMMAND], None);
        // tmux 3.3a's `kill-server` returns before the server has exited: a `new-session` right
        // after it reaches the exiting server and fails. Tried again while that is the answer.
        let mut tries = 0;
        loop {
            match self.run_process("new-session", &command_args, None, new_deadline()).await {
                Err(TmuxError::Failed { stderr, .. })
                    if stderr == SERVER_EXITED && tries < SERVER_EXITED_TRIES =>
                {
                    tries += 1;
                    tokio::time::sleep(SERVER_EXITED_RETRY).await;
                }
                answer => {
                    self.control.sessions_may_exist();
                    return answer.map(|output| last_pid(&output));
                }
            }
        }
    }

    /// Replaces the program of the node's pane with `argv`, in `cwd` (`respawn-pane -k`), and
    /// answers the new process's pid (a `display-message` in the same command list), when tmux
    /// showed one.
    pub async fn respawn(
        &self,
        node_id: &str,
        cwd: &Path,
        argv: &[String],
    ) -> Result<Option<i32>, TmuxError> {
        let respawn_args = [
            "-k".into(),
            "-c".into(),
            cwd.as_os_str().to_owned(),
            "-t".into(),
            pane(node_id),
            exec_line(argv).into(),
            ";".into(),
            "display-message".into(),
            "-p".into(),
            "-t".into(),
            pane(node_id),
            "#{pane_pid}".into(),
        ];
        let output = self.run_on(node_id, "respawn-pane", &respawn_args, None).await?;
        Ok(last_pid(&output))
    }

    /// The node's pane state as tmux prints it: one line of [`PANE_STATE_FORMAT`], which
    /// `terminals` parses (`termsprawl_external_term::pane::PaneState`).
    pub async fn pane_state_line(&self, node_id: &str) -> Result<String, TmuxError> {
        let args = ["-p".into(), "-t".into(), pane(node_id), PANE_STATE_FORMAT.into()];
        let output = self.run_on(node_id, "display-message", &args, None).await?;
        Ok(output.lines().last().unwrap_or_default().to_owned())
    }

    /// The pid of the process the node's pane runs now (`#{pane_pid}`), without waiting for a
    /// dead pane's status; `None` when tmux shows none.
    pub async fn pane_pid(&self, node_id: &str) -> Result<Option<i32>, TmuxError> {
        let args = ["-p".into(), "-t".into(), pane(node_id), "#{pane_pid}".into()];
        let output = self.run_on(node_id, "display-message", &args, None).await?;
        Ok(last_pid(&output))
    }

    /// [`Tmux::capture`] and [`Tmux::pane_state_line`] in one tmux command list: the text and the
    /// state line.
    pub async fn capture_with_state(
        &self,
        node_id: &str,
        history: u32,
    ) -> Result<(String, String), TmuxError> {
        let capture = ["-S".into(), format!("-{history}").into()];
        self.capture_and_display(node_id, &capture, PANE_STATE_FORMAT).await
    }

    /// `capture-pane -p CAPTURE… -t PANE ; display-message -p -t PANE FORMAT`, one command list
    /// on the control client: the pane's text (every line but the last, each ending in a line
    /// feed) and the expanded `format` (the last line).
    async fn capture_and_display(
        &self,
        node_id: &str,
        capture: &[OsString],
        format: &str,
    ) -> Result<(String, String), TmuxError> {
        let mut args: Vec<OsString> = vec!["-p".into()];
        args.extend_from_slice(capture);
        args.extend(["-t".into(), pane(node_id), ";".into(), "display-message".into()]);
        args.extend(["-p".into(), "-t".into(), pane(node_id), format.into()]);
        let mut output = self.run_on(node_id, "capture-pane", &args, None).await?;
        if output.ends_with('\n') {
            output.pop();
        }
        let last = output.split_off(output.rfind('\n').map_or(0, |index| index + 1));
        Ok((output, last))
    }

    /// Whether `ts-<nodeId>` runs. No server and no such session both mean `false`.
    pub async fn has_session(&self, node_id: &str) -> Result<bool, TmuxError> {
        let target = format!("={}", session_name(node_id));
        match self.run("has-session", &["-t".into(), target.into()], None).await {
            Ok(_) => Ok(true),
            Err(TmuxError::Failed { .. }) => Ok(false),
            Err(error) => Err(error),
        }
    }

    /// The names of every running session; empty when no server runs ([`Tmux::sessions`]).
    pub async fn session_names(&self) -> Result<HashSet<String>, TmuxError> {
        self.sessions().await.map(|sessions| sessions.running)
    }

    /// Every running session, and those whose (active) pane is dead (kept by `remain-on-exit`),
    /// from one `list-sessions`; empty when no server runs. Any other failure is an error, never
    /// an empty listing: the liveness check revokes the agents that are not listed. A tmux
    /// process of its own: the start and the liveness round ask once per round, never per call.
    pub async fn sessions(&self) -> Result<Sessions, TmuxError> {
        let args = ["-F".into(), "#{pane_dead} #{session_name}".into()];
        match self.run_process("list-sessions", &args, None, new_deadline()).await {
            Ok(output) => Ok(Sessions::parse(&output)),
            Err(TmuxError::Failed { stderr, .. }) if no_server(&stderr) => Ok(Sessions::default()),
            Err(error) => Err(error),
        }
    }

    /// Pipes the node's pane into its stream again (`pipe-pane -o`, the command and files of
    /// [`Tmux::new_session`]), after the pipe's reader ended while the pane lives: `cat` exits
    /// when a write fails (a full disk), and nothing else would follow the pane again.
    ///
    /// tmux notices that the reader has gone only when it next writes to the pipe; until then
    /// `pipe-pane -o` would toggle the stale pipe off and open nothing. So the stale pipe is
    /// closed first (`pipe-pane` without a command), in the same command list.
    pub async fn repipe(&self, node_id: &str) -> Result<(), TmuxError> {
        let args = [
            "-t".into(),
            pane(node_id),
            ";".into(),
            "pipe-pane".into(),
            "-o".into(),
            "-t".into(),
            pane(node_id),
            PIPE_COMMAND.into(),
        ];
        self.run_on(node_id, "pipe-pane", &args, None).await.map(drop)
    }

    /// Whether the managed tmux server answers at all (a server without sessions does too).
    pub async fn server_runs(&self) -> Result<bool, TmuxError> {
        let args = ["-F".into(), "#{session_name}".into()];
        match self.run("list-sessions", &args, None).await {
            Ok(_) => Ok(true),
            Err(TmuxError::Failed { stderr, .. }) if no_server(&stderr) => Ok(false),
            Err(error) => Err(error),
        }
    }

    /// Ends `ts-<nodeId>`; a session that does not run is fine. Our control client is moved off
    /// the session first ([`Tmux::move_control_client_off`]).
    pub async fn kill_session(&self, node_id: &str) -> Result<(), TmuxError> {
        let session = session_name(node_id);
        let _ending = self.control.ending(&session);
        let _no_move_meanwhile = self.move_control_client_off(&session).await;
        let target = format!("={session}");
        match self.run_on(node_id, "kill-session", &["-t".into(), target.into()], None).await {
            Ok(_) | Err(TmuxError::NotRunning(_)) => Ok(()),
            Err(error) => Err(error),
        }
    }

    /// When our control client is attached to `session`, switches it to another session
    /// (`switch-client -n`) before the session is ended: a client ends with its session, and
    /// every request it carried then would be unanswered (a key press fails rather than being
    /// pressed twice, [`TmuxError::MayHaveRun`]). The client's session is known from its start
    /// (the oldest) and from the last switch; only when it is not is tmux asked
    /// (`display-message`). When no other session runs the client ends with this one, as the
    /// server does.
    ///
    /// Ends run at once; a move runs alone (no end meanwhile) and never lands on a session being
    /// ended. Answers the guard that keeps a move from starting until this end is done.
    async fn move_control_client_off(&self, session: &str) -> tokio::sync::RwLockReadGuard<'_, ()> {
        for _ in 0..2 {
            let quiet = self.control.ending_quietly().await;
            let elsewhere = match self.control.attached() {
                control::Attached::To(name) => name != session,
                control::Attached::NoClient => !self.socket.exists(),
                control::Attached::Unknown => false,
            };
            if elsewhere {
                return quiet;
            }
            drop(quiet);
            let _moving = self.control.moving().await;
            self.move_off_ending_sessions().await;
        }
        self.control.ending_quietly().await
    }

    /// Switches the control client (`switch-client -n`) until it sits on no session being ended,
    /// at most once per session of ours being ended and once more. Asks tmux where it sits when
    /// that is not known.
    async fn move_off_ending_sessions(&self) {
        let deadline = new_deadline();
        let spawn = || self.command();
        let mut sits_on = match self.control.attached() {
            control::Attached::To(name) => Some(name),
            control::Attached::NoClient | control::Attached::Unknown => {
                let line = "display-message -p '#{client_session}'";
                let asked = self.control.request(spawn, line, 1, control::Repeat::Safe, deadline);
                let name = session_of(asked.await.ok().flatten().as_deref(), 0);
                self.control.attached_to(name.clone());
                name
            }
        };
        let mut moves = 0;
        while let Some(name) = sits_on.as_deref()
            && self.control.is_ending(name)
            && moves <= self.control.ending_count()
        {
            let line = "switch-client -n ; display-message -p '#{client_session}'";
            let switched = self.control.request(spawn, line, 2, control::Repeat::Never, deadline);
            sits_on = session_of(switched.await.ok().flatten().as_deref(), 1);
            self.control.attached_to(sits_on.clone());
            moves += 1;
        }
    }

    /// The pane's text including `history` lines of scrollback (`capture-pane -p -S -<history>`).
    pub async fn capture(&self, node_id: &str, history: u32) -> Result<String, TmuxError> {
        let args =
            ["-p".into(), "-S".into(), format!("-{history}").into(), "-t".into(), pane(node_id)];
        self.run_on(node_id, "capture-pane", &args, None).await
    }

    /// Types `text` into the pane exactly as given (no key names, no line-ending translation).
    pub async fn send_text(&self, node_id: &str, text: &str) -> Result<(), TmuxError> {
        if text.is_empty() {
            return if self.has_session(node_id).await? {
                Ok(())
            } else {
                Err(TmuxError::NotRunning(session_name(node_id)))
            };
        }
        let buffer = format!("termsprawl-{}", uuid::Uuid::new_v4().simple());
        let line = paste_line(&buffer, &pane(node_id).to_string_lossy(), text);
        if let Some((line, commands)) = line.filter(|_| self.socket.exists()) {
            let deadline = new_deadline();
            let request = self.control.request(
                || self.command(),
                &line,
                commands,
                control::Repeat::Never,
                deadline,
            );
            match request.await {
                Ok(Some(blocks)) => {
                    let pasted = answer("paste-buffer", blocks);
                    return match pasted {
                        Ok(_) => Ok(()),
                        Err(error) => {
                            let _ = self
                                .run("delete-buffer", &["-b".into(), buffer.into()], None)
                                .await;
                            if self.has_session(node_id).await? {
                                Err(error)
                            } else {
                                Err(TmuxError::NotRunning(session_name(node_id)))
                            }
                        }
                    };
                }
                Ok(None) => {}
                Err(unanswered) => return Err(unanswered_error("paste-buffer", unanswered)),
            }
        }
        let load = ["-b".into(), buffer.clone().into(), "-".into()];
        self.run_on(node_id, "load-buffer", &load, Some(text.as_bytes())).await?;
        let paste = [
            "-r".into(),
            "-d".into(),
            "-b".into(),
            buffer.clone().into(),
            "-t".into(),
            pane(node_id),
        ];
        let pasted = self.run_on(node_id, "paste-buffer", &paste, None).await;
        if pasted.is_err() {
            let _ = self.run("delete-buffer", &["-b".into(), buffer.into()], None).await;
        }
        pasted.map(drop)
    }

    /// Presses one key, by tmux key name (`Enter`, `C-c`).
    pub async fn send_key(&self, node_id: &str, key: &str) -> Result<(), TmuxError> {
        let args = ["-t".into(), pane(node_id), key.into()];
        self.run_on(node_id, "send-keys", &args, None).await.map(drop)
    }

    /// Presses `keys` in order, each a key of [`termsprawl_protocol::keys`] (already validated),
    /// in one `send-keys` by tmux key name: tmux encodes each as the pane's program expects it
    /// (application cursor mode included).
    pub async fn send_keys(&self, node_id: &str, keys: &[String]) -> Result<(), TmuxError> {
        let mut args: Vec<OsString> = vec!["-t".into(), pane(node_id)];
        args.extend(keys.iter().map(|key| OsString::from(tmux_key(key))));
        self.run_on(node_id, "send-keys", &args, None).await.map(drop)
    }

    /// When a person last pressed a key in the node's session: the latest `client_activity`
    /// (whole seconds since the epoch; tmux sets it when a client attaches and at each key it
    /// reads from that client) of the clients attached to `ts-<nodeId>`, control-mode clients
    /// (ours) left out. `None` when no such client is attached.
    pub async fn last_key_input(&self, node_id: &str) -> Result<Option<u64>, TmuxError> {
        let target = format!("={}", session_name(node_id));
        let args = [
            "-t".into(),
            target.into(),
            "-F".into(),
            "#{client_control_mode} #{client_activity}".into(),
        ];
        let output = self.run_on(node_id, "list-clients", &args, None).await?;
        Ok(output
            .lines()
            .filter_map(|line| line.split_once(' '))
            .filter(|(control_mode, _)| *control_mode != "1")
            .filter_map(|(_, activity)| activity.trim().parse::<u64>().ok())
            .max())
    }

    /// The visible screen of the node's pane (`capture-pane -p` without history: one line per
    /// row, trailing spaces trimmed), with its size, cursor and alternate-screen flag and the
    /// pane's state line ([`PANE_STATE_FORMAT`]), all in one tmux command list so that they
    /// describe the same moment.
    pub async fn capture_screen(&self, node_id: &str) -> Result<(Screen, String), TmuxError> {
        let format = format!("{SCREEN_FORMAT}\t{PANE_STATE_FORMAT}");
        let (text, last) = self.capture_and_display(node_id, &[], &format).await?;
        let mut fields = last.splitn(6, '\t');
        let mut number = || fields.next().and_then(|field| field.trim().parse::<u32>().ok());
        let (col, row, alternate, rows, cols) = (number(), number(), number(), number(), number());
        let state = fields.next().unwrap_or_default().to_owned();
        let screen = Screen {
            text,
            rows: rows.unwrap_or_default(),
            cols: cols.unwrap_or_default(),
            cursor_row: row.unwrap_or_default(),
            cursor_col: col.unwrap_or_default(),
            alternate: alternate == Some(1),
        };
        Ok((screen, state))
    }

    /// Stops the whole server (tests and the demo clean up with it).
    pub async fn kill_server(&self) {
        let _ = self.run_process("kill-server", &[], None, new_deadline()).await;
        self.control.reset();
    }
}

/// The commands that create or end sessions, which tmux tells every control client about: run as
/// a process, each holds off the start of a control client ([`control::Control::hold_off_starts`]).
const SESSION_CHANGING: &[&str] = &["new-session", "kill-session", "kill-server"];

/// The deadline of a command started now.
fn new_deadline() -> Instant {
    Instant::now() + COMMAND_DEADLINE
}

/// A command and its arguments as one line of control mode, with the number of commands in it
/// (`;` words separate them); `None` for `new-session` and `kill-server` (they start and stop
/// the server the client needs) and for a word that cannot travel on one line.
fn control_line(name: &str, args: &[OsString]) -> Option<(String, usize, control::Repeat)> {
    if matches!(name, "new-session" | "kill-server") {
        return None;
    }
    let mut line = String::from(name);
    let mut commands = 1;
    let mut command_start = false;
    let mut safe = REPEATABLE.contains(&name);
    for arg in args {
        let word = arg.to_str()?;
        line.push(' ');
        if word == ";" {
            line.push(';');
            commands += 1;
            command_start = true;
        } else if command_start {
            // A command name stays bare, as tmux's parser expects it.
            line.push_str(word);
            safe &= REPEATABLE.contains(&word);
            command_start = false;
        } else {
            line.push_str(&control::quoted(word)?);
        }
    }
    let repeat = if safe { control::Repeat::Safe } else { control::Repeat::Never };
    Some((line, commands, repeat))
}

/// The tmux commands that may run twice: reads, `delete-buffer` (a buffer is gone once) and
/// `kill-session` (a session ends once; again, it is not found, which a kill takes as done).
/// Every other command of a control line is sent at most once.
const REPEATABLE: &[&str] = &[
    "capture-pane",
    "display-message",
    "list-sessions",
    "list-panes",
    "has-session",
    "show-options",
    "delete-buffer",
    "kill-session",
];

/// The session name the block `index` of `blocks` printed (a `display-message -p
/// '#{client_session}'`), when it succeeded.
fn session_of(blocks: Option<&[control::Block]>, index: usize) -> Option<String> {
    let block = blocks?.get(index).filter(|block| block.ok)?;
    let name = String::from_utf8_lossy(&block.output).trim().to_owned();
    (!name.is_empty()).then_some(name)
}

/// The error of a command that a control request left unanswered.
fn unanswered_error(command: &'static str, unanswered: control::Unanswered) -> TmuxError {
    match unanswered {
        control::Unanswered::Wedged => TmuxError::Wedged { command },
        control::Unanswered::MayHaveRun => TmuxError::MayHaveRun { command },
    }
}

/// The control line that puts `text` into the paste buffer `buffer` and pastes it into `pane`
/// (`-r -d`): its lines single-quoted (literal for tmux's parser) and its line feeds and carriage
/// returns as `"\n"` and `"\r"`, appended one `set-buffer -a` at a time. `None` for text with a
/// NUL, which no tmux command line can carry.
fn paste_line(buffer: &str, pane: &str, text: &str) -> Option<(String, usize)> {
    if text.contains('\0') {
        return None;
    }
    let mut line = String::with_capacity(text.len() + 64);
    let mut commands = 1;
    let mut append = |piece: &str| {
        commands += 1;
        line.push_str(if line.is_empty() { "set-buffer -b " } else { " ; set-buffer -a -b " });
        line.push_str(buffer);
        line.push(' ');
        line.push_str(piece);
    };
    let mut rest = text;
    while !rest.is_empty() {
        let end = rest.find(['\n', '\r']).unwrap_or(rest.len());
        if end > 0 {
            append(&format!("-- {}", control::quoted(&rest[..end])?));
        }
        match rest[end..].chars().next() {
            Some('\n') => append("\"\\n\""),
            Some('\r') => append("\"\\r\""),
            _ => {}
        }
        rest = rest.get(end + 1..).unwrap_or_default();
    }
    line.push_str(" ; paste-buffer -r -d -b ");
    line.push_str(buffer);
    line.push_str(" -t ");
    line.push_str(&control::quoted(pane)?);
    Some((line, commands))
}

/// The answer of a control request as a process would have given it: the output of every
/// command, or the failure of the first that failed.
fn answer(name: &'static str, blocks: Vec<control::Block>) -> Result<String, TmuxError> {
    let mut output = String::new();
    for block in blocks {
        let text = String::from_utf8_lossy(&block.output);
        if !block.ok {
            return Err(TmuxError::Failed { command: name, stderr: text.trim().to_owned() });
        }
        output.push_str(&text);
    }
    Ok(output)
}

/// Where [`Tmux::new_session`] sends a pane's output (see [`crate::streams`]).
#[derive(Debug, Clone, Copy)]
pub struct Capture<'a> {
    /// The output file, appended to.
    pub out: &'a Path,
    /// Touched when the pipe's reader starts.
    pub start: &'a Path,
    /// Touched when the pane is gone.
    pub end: &'a Path,
    /// For a run node: the pane stays after its program exits, and this file is touched then.
    pub died: Option<&'a Path>,
}

/// What a tmux client prints when the server it reached exits under it.
const SERVER_EXITED: &str = "server exited unexpectedly";
/// How often, and how far apart, `new-session` is tried while an exiting server is in the way.
const SERVER_EXITED_TRIES: u32 = 20;
const SERVER_EXITED_RETRY: Duration = Duration::from_millis(25);

/// The program of a run node's pane until [`Tmux::respawn`] replaces it: prints nothing.
const PLACEHOLDER: &str = "exec sleep 2147483647";

/// The pipe-pane command: announce the reader, append everything, mark the pane's end.
const PIPE_COMMAND: &str = "touch #{q:@ts_start}; cat >> #{q:@ts_out}; touch #{q:@ts_end}";

/// The visible screen of a pane, as [`Tmux::capture_screen`] reads it.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Screen {
    /// One line per row, each ending in a line feed, trailing spaces trimmed.
    pub text: String,
    /// Rows of the pane.
    pub rows: u32,
    /// Columns of the pane.
    pub cols: u32,
    /// The cursor's row, from 0.
    pub cursor_row: u32,
    /// The cursor's column, from 0.
    pub cursor_col: u32,
    /// Whether a full-screen program holds the alternate screen.
    pub alternate: bool,
}

/// `cursor_x`, `cursor_y`, `alternate_on`, `pane_height`, `pane_width`; the pane state follows.
const SCREEN_FORMAT: &str =
    "#{cursor_x}\t#{cursor_y}\t#{alternate_on}\t#{pane_height}\t#{pane_width}";

/// The tmux name of a key of the protocol's grammar: the modifiers as they are, the named keys
/// that tmux spells differently translated (`Backspace` is `BSpace`, `Delete` `DC`, `Insert`
/// `IC`, `PageUp` `PPage`, `PageDown` `NPage`).
pub(crate) fn tmux_key(key: &str) -> String {
    let Some(parsed) = termsprawl_protocol::keys::parse_key(key) else { return key.to_owned() };
    let mut name = String::new();
    for (set, prefix) in [(parsed.control, "C-"), (parsed.meta, "M-"), (parsed.shift, "S-")] {
        if set {
            name.push_str(prefix);
        }
    }
    match parsed.base {
        termsprawl_protocol::keys::KeyBase::Named(named) => name.push_str(match named {
            "Backspace" => "BSpace",
            "Delete" => "DC",
            "Insert" => "IC",
            "PageUp" => "PPage",
            "PageDown" => "NPage",
            other => other,
        }),
        termsprawl_protocol::keys::KeyBase::Char(c) => name.push(c),
    }
    name
}

/// The pid on the last line tmux printed (`#{pane_pid}`).
fn last_pid(output: &str) -> Option<i32> {
    output.lines().last().and_then(|line| line.trim().parse().ok())
}

/// What [`Tmux::sessions`] lists.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Sessions {
    /// The name of every running session.
    pub running: HashSet<String>,
    /// The sessions whose pane is dead: a finished run node's (a node session has one pane),
    /// whether or not its `pane-died` hook fired (tmux 3.3a does not always run it).
    pub dead: HashSet<String>,
}

impl Sessions {
    /// Lines of `<pane_dead> <session_name>` (a session name has no line feed).
    fn parse(listed: &str) -> Sessions {
        let mut sessions = Sessions::default();
        for line in listed.lines() {
            let Some((dead, name)) = line.split_once(' ') else { continue };
            if dead == "1" {
                sessions.dead.insert(name.to_owned());
            }
            sessions.running.insert(name.to_owned());
        }
        sessions
    }
}

/// The pane target of a node: `=ts-<nodeId>:`.
fn pane(node_id: &str) -> OsString {
    format!("={}:", session_name(node_id)).into()
}

/// `exec 'w1' 'w2' …`: a shell line that runs `argv` exactly, whatever its words contain.
pub(crate) fn exec_line(argv: &[String]) -> String {
    let mut line = String::from("exec");
    for word in argv {
        line.push(' ');
        line.push_str(&single_quoted(word));
    }
    line
}

/// Whether an inherited variable carries an Anthropic or Claude credential, which the app strips
/// from agent terminals (`spec/protocol.md` §3).
pub(crate) fn is_api_key_variable(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    (upper.starts_with("ANTHROPIC_") || upper.starts_with("CLAUDE_"))
        && (upper.contains("KEY") || upper.contains("TOKEN"))
}

#[cfg(test)]
mod tests;

/// Whether tmux's error says that no server listens on the socket (tmux 3.x: the socket is
/// missing, or nothing accepts on it), as opposed to a server that failed to answer.
pub(crate) fn no_server(stderr: &str) -> bool {
    stderr.starts_with("no server running on ")
        || (stderr.starts_with("error connecting to ")
            && (stderr.ends_with("(No such file or directory)")
                || stderr.ends_with("(Connection refused)")))
}
