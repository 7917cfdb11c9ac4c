//! The shared state of a running server and the actions that both agents (through the operations
//! of `ops`) and the control channel (through [`crate::control`]) use: starting agents, closing nodes,
//! revoking sessions, and restoring sessions after a restart.

use std::collections::{HashMap, HashSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::SystemTime;

use serde_json::{Map, Value, json};
use termsprawl_external_term::session_name;
use termsprawl_protocol::{IntegrationStatus, ToolIdentity};
use termsprawl_transport::server::ToolServer;

use crate::canvas::{AgentInfo, Canvas, Node, NodeKind, Project};
use crate::config::Config;
use crate::error::{ToolError, messages};
use crate::foreground::{self, Foreground, Pane, Processes};
use crate::launch;
use crate::layout::Layout;
use crate::notices::Notices;
use crate::ops::{HISTORY_LINES, trim_blank_end};
use crate::queue::Queues;
use crate::streams::Streams;
use crate::tasks::{self, Tasks};
use crate::tmux::{Capture, PaneState, Screen, Sessions, Tmux, TmuxError};

/// The canvas and the tasks, behind one lock that is never held across an `await`.
#[derive(Debug)]
pub(crate) struct State {
    pub(crate) canvas: Canvas,
    pub(crate) tasks: Tasks,
}

/// Everything a request, a control command and the background checks share.
pub(crate) struct Engine {
    pub(crate) config: Config,
    pub(crate) layout: Layout,
    pub(crate) tmux: Tmux,
    pub(crate) queues: Queues,
    pub(crate) default_project: String,
    pub(crate) streams: Arc<Streams>,
    /// The notices of `terminal_run`'s `notify` (protocol 1.5.0).
    pub(crate) notices: Notices,
    state: Mutex<State>,
    tool_server: Mutex<Option<Arc<ToolServer>>>,
    /// Agent nodes being started: the liveness check leaves them alone until tmux runs them.
    launching: Mutex<HashSet<String>>,
    /// Finished run nodes whose tmux session is gone without a final record (the tmux server
    /// ended): the run-node sweep does not ask tmux about them again.
    unretirable: Mutex<HashSet<String>>,
    /// Nodes some answer has seen ended (tmux showed the pane dead or gone): no later answer
    /// takes them for running by their files ([`Engine::runs_by_its_files`]).
    seen_ended: Mutex<HashSet<String>>,
    /// The process of every terminal node's pane, as tmux last showed it: the looks of
    /// [`Engine::input_by`] start from it and read only `/proc`.
    panes: Mutex<HashMap<String, Pane>>,
    /// The last look at each node's pane, kept with what it depended on, so that looking again
    /// at an unchanged pane examines nothing ([`foreground::look_again`]).
    looks: Mutex<HashMap<String, foreground::Seen>>,
    /// [`Engine::ended`]'s last look at each node: the change signal and whether an answer had
    /// seen it ended then, and what the files showed.
    ends: Mutex<HashMap<String, EndLook>>,
}

/// An agent node that was just started.
#[derive(Debug, Clone)]
pub(crate) struct StartedAgent {
    pub(crate) node_id: String,
    pub(crate) project_id: String,
    pub(crate) session_file: PathBuf,
    pub(crate) environment: Vec<(String, String)>,
}

impl StartedAgent {
    /// The answer to a `launch` control command.
    pub(crate) fn to_value(&self, tmux: &Tmux) -> Value {
        let environment: Map<String, Value> = self
            .environment
            .iter()
            .map(|(key, value)| (key.clone(), Value::from(value.as_str())))
            .collect();
        json!({
            "nodeId": self.node_id,
            "projectId": self.project_id,
            "sessionFile": self.session_file.to_string_lossy(),
            "tmuxSession": session_name(&self.node_id),
            "tmux": {
                "program": tmux.program().to_string_lossy(),
                "socket": tmux.socket().to_string_lossy(),
                "config": tmux.config().to_string_lossy(),
            },
            "environment": environment,
        })
    }
}

/// The program of a run node: `sh -c COMMAND` under a small `sh` that, once the command has
/// exited, prints the exit mark ([`crate::streams::EXIT_MARK`]: everything the command printed
/// is in the stream once the mark is), records the command's exit status in the status file
/// (`$2`, written aside and renamed, so a reader sees no half-written number), waits until the
/// server has read the mark from the stream (`$3` appears; [`crate::streams::DRAIN_LIMIT`] at
/// most) and then ends the same way (exit status, or the same signal again), so that tmux
/// reports the end and the file backs it up. An exit status above 128 is taken for a signal, as
/// shells do.
///
/// The wait matters: tmux 3.3a ends a pane whose program exited as soon as the terminal shows
/// nothing left to read, and under load the last output can still be on its way through the
/// kernel then; it is lost (issue 29: the tail of a run's output, a few hundred bytes after a
/// multiple of 4095, missing for good). A wrapper still running holds the terminal open.
pub(crate) const RUN_WRAPPER: &str = r#"sh -c "$1"; s=$?; printf '\030\033]6973;termsprawl-exit\007'; echo "$s" > "$2-tmp" && mv -f "$2-tmp" "$2"; i=0; while [ ! -e "$3" ] && [ "$i" -lt 250 ]; do sleep 0.02; i=$((i+1)); done; if [ "$s" -gt 128 ]; then n=$(kill -l "$s" 2>/dev/null) && kill -s "$n" $$ 2>/dev/null; fi; exit "$s""#;

/// How long an answer that reports a run node's exit waits for its wrapper's exit mark in the
/// stream (the output of the command on its way from tmux through the pipe into the file). Only
/// a wedged pipe takes this long; the answer then has what the stream holds.
pub(crate) const EXIT_MARK_LIMIT: std::time::Duration = crate::streams::DRAIN_LIMIT;

/// How long a run node's start waits for its output pipe's reader.
const PIPE_START_LIMIT: std::time::Duration = std::time::Duration::from_secs(10);

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Engine {
    pub(crate) fn new(
        config: Config,
        layout: Layout,
        tmux: Tmux,
        state: State,
        default_project: String,
        streams: Arc<Streams>,
    ) -> Engine {
        let notices = Notices::load(&layout.terminals_dir());
        Engine {
            config,
            layout,
            tmux,
            queues: Queues::default(),
            default_project,
            streams,
            notices,
            state: Mutex::new(state),
            tool_server: Mutex::new(None),
            launching: Mutex::new(HashSet::new()),
            unretirable: Mutex::new(HashSet::new()),
            seen_ended: Mutex::new(HashSet::new()),
            panes: Mutex::new(HashMap::new()),
            looks: Mutex::new(HashMap::new()),
            ends: Mutex::new(HashMap::new()),
        }
    }

    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    pub(crate) fn set_tool_server(&self, server: Arc<ToolServer>) {
        *lock(&self.tool_server) = Some(server);
    }

    pub(crate) fn take_tool_server(&self) -> Option<Arc<ToolServer>> {
        lock(&self.tool_server).take()
    }

    pub(crate) fn tool_server(&self) -> Result<Arc<ToolServer>, ToolError> {
        lock(&self.tool_server)
            .clone()
            .ok_or_else(|| ToolError::new("The tool service is stopping"))
    }

    /// Changes one project and saves the canvas; on any failure nothing changes.
    pub(crate) fn mutate<R>(
        &self,
        project_id: &str,
        change: impl FnOnce(&mut Project) -> Result<R, ToolError>,
    ) -> Result<R, ToolError> {
        let mut state = self.state();
        let project = state
            .canvas
            .project_mut(project_id)
            .ok_or(ToolError::new(messages::NODE_NOT_IN_PROJECT))?;
        let before = project.clone();
        let result = change(project)?;
        if let Err(error) = state.canvas.save(&self.layout.canvas_file()) {
            if let Some(project) = state.canvas.project_mut(project_id) {
                *project = before;
            }
            return Err(ToolError::new(format!("cannot save the canvas: {error}")));
        }
        Ok(result)
    }

    /// The ids of the nodes of every project that `keep` accepts, in canvas order.
    pub(crate) fn node_ids(&self, keep: impl Fn(&Node) -> bool) -> Vec<String> {
        let state = self.state();
        let nodes = state.canvas.projects.iter().flat_map(|project| project.nodes.iter());
        nodes.filter(|node| keep(node)).map(|node| node.id.clone()).collect()
    }

    /// A copy of one project.
    pub(crate) fn project(&self, project_id: &str) -> Result<Project, ToolError> {
        self.with_project(project_id, Project::clone)
    }

    /// `look` at the project `project_id` in place, under the state lock: for a check of a few
    /// nodes, which must not copy a project of many.
    pub(crate) fn with_project<T>(
        &self,
        project_id: &str,
        look: impl FnOnce(&Project) -> T,
    ) -> Result<T, ToolError> {
        self.state()
            .canvas
            .project(project_id)
            .map(look)
            .ok_or(ToolError::new(messages::NODE_NOT_IN_PROJECT))
    }

    /// Whether an identity is still valid: its project exists and holds its node (§6.4 step 2).
    pub(crate) fn identity_is_valid(&self, identity: &ToolIdentity) -> bool {
        self.state()
            .canvas
            .project(&identity.project_id)
            .is_some_and(|project| project.node(&identity.node_id).is_some())
    }

    /// Starts an agent in a new node of `project_id`: node, session file, launch files, tmux
    /// session with the agent environment. On failure every step is undone.
    pub(crate) async fn start_agent(
        &self,
        project_id: &str,
        node_id: String,
        name: &str,
        title: &str,
        argv: &[String],
        status: IntegrationStatus,
    ) -> Result<StartedAgent, ToolError> {
        let server = self.tool_server()?;
        lock(&self.launching).insert(node_id.clone());
        let started =
            self.start_agent_steps(&server, project_id, &node_id, name, title, argv, status).await;
        if started.is_err() {
            let _ = server.revoke_session(&node_id);
            let _ = self.mutate(project_id, |project| Ok(project.remove(&node_id)));
            let _ = std::fs::remove_dir_all(self.layout.launch_dir(&node_id));
        }
        lock(&self.launching).remove(&node_id);
        started
    }

    #[expect(clippy::too_many_arguments, reason = "one private step of start_agent")]
    async fn start_agent_steps(
        &self,
        server: &ToolServer,
        project_id: &str,
        node_id: &str,
        name: &str,
        title: &str,
        argv: &[String],
        status: IntegrationStatus,
    ) -> Result<StartedAgent, ToolError> {
        let folder = self.project(project_id)?.folder;
        let mut node = Node::new(node_id.to_owned(), NodeKind::Agent, title.to_owned());
        node.agent = Some(AgentInfo { name: name.to_owned(), status: status.clone() });
        node.started_at = Some(tasks::now_millis());
        self.mutate(project_id, |project| Ok(project.add(node)))?;
        let identity =
            ToolIdentity { node_id: node_id.to_owned(), project_id: project_id.to_owned() };
        let session_file = server
            .provision_session(identity, status, false)
            .map_err(|error| ToolError::new(error.to_string()))?;
        launch::write_launch_files(&self.layout, node_id, &session_file)
            .map_err(|error| ToolError::new(format!("cannot write the launch files: {error}")))?;
        let environment = launch::environment(&self.layout, node_id, project_id);
        self.new_session(node_id, &folder, &environment, Some(argv), false).await?;
        Ok(StartedAgent {
            node_id: node_id.to_owned(),
            project_id: project_id.to_owned(),
            session_file,
            environment,
        })
    }

    /// Starts a plain shell in a new terminal node of `project_id`.
    pub(crate) async fn open_terminal(
        &self,
        project_id: &str,
        title: &str,
    ) -> Result<String, ToolError> {
        let (node_id, folder) = {
            let state = self.state();
            let project = state
                .canvas
                .project(project_id)
                .ok_or(ToolError::new(messages::NODE_NOT_IN_PROJECT))?;
            (state.canvas.fresh_node_id(NodeKind::Terminal), project.folder.clone())
        };
        self.new_session(&node_id, &folder, &[], self.config.shell.as_deref(), false).await?;
        let mut node = Node::new(node_id.clone(), NodeKind::Terminal, title.to_owned());
        node.started_at = Some(tasks::now_millis());
        if let Err(error) = self.mutate(project_id, |project| Ok(project.add(node))) {
            let _ = self.tmux.kill_session(&node_id).await;
            self.streams.remove_files(&node_id);
            return Err(error);
        }
        Ok(node_id)
    }

    /// Starts `sh -c COMMAND` as the program of a new run node of `project_id`, in `cwd` with
    /// `env` added; the pane stays after the command exits, so its status and output remain.
    pub(crate) async fn open_run(
        &self,
        project_id: &str,
        title: &str,
        command: &str,
        cwd: &Path,
        env: &[(String, String)],
    ) -> Result<String, ToolError> {
        let node_id = self.state().canvas.fresh_node_id(NodeKind::Terminal);
        let status_file = self.streams.status_file(&node_id);
        let argv = [
            "sh".to_owned(),
            "-c".to_owned(),
            RUN_WRAPPER.to_owned(),
            "sh".to_owned(),
            command.to_owned(),
            status_file.to_string_lossy().into_owned(),
            self.streams.drained_file(&node_id).to_string_lossy().into_owned(),
        ];
        let mut node = Node::new(node_id.clone(), NodeKind::Terminal, title.to_owned());
        node.command = Some(command.to_owned());
        node.started_at = Some(tasks::now_millis());
        // The node is committed to the canvas before its command starts: a failed save (a full
        // disk) fails the call with nothing run (issue 29).
        self.new_run_session(project_id, &node_id, cwd, env, &argv, || {
            self.mutate(project_id, |project| Ok(project.add(node)))
        })
        .await?;
        Ok(node_id)
    }

    /// [`Engine::new_session`] of a run node whose program starts only after `commit` succeeded,
    /// once the output pipe runs; when `commit` fails, the session (which ran only the
    /// placeholder) ends and the call fails with its error.
    async fn new_run_session<R>(
        &self,
        project_id: &str,
        node_id: &str,
        cwd: &Path,
        env: &[(String, String)],
        argv: &[String],
        commit: impl FnOnce() -> Result<R, ToolError>,
    ) -> Result<R, ToolError> {
        let (out, start, end, died) = (
            self.streams.out_file(node_id),
            self.streams.start_file(node_id),
            self.streams.end_file(node_id),
            self.streams.died_file(node_id),
        );
        let capture = Capture { out: &out, start: &start, end: &end, died: Some(died.as_path()) };
        let stream = self.streams.get(node_id);
        self.tmux.new_session(node_id, cwd, env, Some(argv), &capture).await.map_err(tmux_error)?;
        let started = if stream.wait_for_file(&start, PIPE_START_LIMIT).await {
            Ok(())
        } else {
            Err(ToolError::new("the terminal's output pipe did not start"))
        };
        let committed = started.and_then(|()| commit());
        let committed = match committed {
            Ok(committed) => committed,
            Err(error) => {
                let _ = self.tmux.kill_session(node_id).await;
                self.streams.remove_files(node_id);
                return Err(error);
            }
        };
        let respawned = self.tmux.respawn(node_id, cwd, argv).await;
        if let Ok(Some(pid)) = respawned {
            self.remember_pane(node_id, pid);
        }
        if let Err(error) = respawned {
            // Undone as far as the disk allows: a node whose removal cannot be saved stays,
            // reading as not running (`Engine::gone_state`).
            let _ = self.tmux.kill_session(node_id).await;
            if self.mutate(project_id, |project| Ok(project.remove(node_id))).is_ok() {
                self.streams.remove_files(node_id);
            }
            return Err(tmux_error(error));
        }
        Ok(committed)
    }

    /// The state of a node's pane. tmux is the source; when it has marked a run node's pane dead
    /// without knowing the status yet, the status its wrapper wrote is used. A finished run node
    /// that was retired ([`Engine::retire_run`]) answers its final record.
    pub(crate) async fn pane_state(&self, node_id: &str) -> Result<PaneState, TmuxError> {
        let state = self.pane_state_unseen(node_id).await;
        self.saw(node_id, state.as_ref().ok());
        state
    }

    /// Remembers that `node_id` ended when `state` says so ([`Engine::runs_by_its_files`]).
    /// Also remembers the pane's process while it runs ([`Engine::input_by`]).
    pub(crate) fn saw(&self, node_id: &str, state: Option<&PaneState>) {
        if state.is_some_and(|state| state.dead) {
            lock(&self.seen_ended).insert(node_id.to_owned());
        }
        if let Some(pid) = state.filter(|state| !state.dead).and_then(|state| state.pid) {
            self.remember_pane(node_id, pid);
        }
    }

    /// Remembers `pid` as the process of `node_id`'s pane, unless it is already.
    fn remember_pane(&self, node_id: &str, pid: i32) {
        let known = lock(&self.panes).get(node_id).is_some_and(|pane| pane.pid() == pid);
        if !known && let Some(pane) = Pane::of(pid) {
            lock(&self.panes).insert(node_id.to_owned(), pane);
        }
    }

    /// Asks tmux for the process of `node_id`'s pane (one command on the control client) unless
    /// it is remembered and still runs. A node's start learns it from its `new-session` or
    /// `respawn-pane` (no command of its own); a wait for input and the liveness round (for nodes
    /// a restart left unknown) ask here.
    pub(crate) async fn know_pane(&self, node_id: &str) {
        let known = lock(&self.panes).get(node_id).copied();
        if known.is_some_and(|pane| Pane::of(pane.pid()) == Some(pane)) {
            return;
        }
        if let Ok(Some(pid)) = self.tmux.pane_pid(node_id).await {
            self.remember_pane(node_id, pid);
        }
    }

    /// The foreground program of `node_id`'s terminal (its name, `bash`, `python3`) while it
    /// sleeps reading the terminal ([`foreground::look`]), now; `None` otherwise, and for a node
    /// whose pane's process is not known or has ended. Reads `/proc` only: no tmux command, no
    /// process; `processes` is shared by the looks of one answer.
    pub(crate) fn foreground_reader(
        &self,
        node_id: &str,
        processes: &mut Processes,
    ) -> Option<String> {
        let pane = lock(&self.panes).get(node_id).copied()?;
        let last = lock(&self.looks).remove(node_id);
        let (verdict, seen) = foreground::look_again(pane, last, processes);
        if let Some(seen) = seen {
            lock(&self.looks).insert(node_id.to_owned(), seen);
        }
        match verdict {
            Foreground::Reading(program) => Some(program),
            Foreground::NotReading => None,
            Foreground::Gone => {
                let mut panes = lock(&self.panes);
                if panes.get(node_id) == Some(&pane) {
                    panes.remove(node_id);
                }
                None
            }
        }
    }

    /// `waitingForInput` and `inputBy` of `terminal_list` and `terminal_read`'s screen view
    /// (protocol 1.5.0, `spec/protocol.md` §4.8): the foreground program while it sleeps reading
    /// the terminal ([`Engine::foreground_reader`]) and the node, whose last output was at
    /// `last_output`, has printed nothing for [`foreground::INPUT_QUIET`]. One look, `/proc`
    /// reads only: no tmux command, no process.
    pub(crate) fn input_by(
        &self,
        node_id: &str,
        last_output: Option<SystemTime>,
        processes: &mut Processes,
    ) -> Option<String> {
        let quiet = last_output
            .and_then(|at| SystemTime::now().duration_since(at).ok())
            .is_none_or(|quiet| quiet >= foreground::INPUT_QUIET);
        if !quiet {
            return None;
        }
        self.foreground_reader(node_id, processes)
    }

    async fn pane_state_unseen(&self, node_id: &str) -> Result<PaneState, TmuxError> {
        if let Some(record) = self.final_record(node_id) {
            return Ok(record.state());
        }
        match self.tmux.pane_state(node_id).await {
            Ok(state) => Ok(self.with_recorded_status(node_id, state)),
            // Retired while tmux was asked.
            Err(TmuxError::NotRunning(name)) => match self.final_record(node_id) {
                Some(record) => Ok(record.state()),
                // Its session is gone (a shell that exited, a killed tmux server).
                None => self.gone_state(node_id).ok_or(TmuxError::NotRunning(name)),
            },
            Err(error) => Err(error),
        }
    }

    /// Whether the node's pane runs as far as its files tell, without asking tmux: no answer
    /// has seen it ended, and none of `.end` (its pane is gone), `.status` and `.died` (a run
    /// node's program exited) and `.final` (retired) exists. A pane that ended a moment ago,
    /// unseen, may still read as running (as it did a moment earlier); a `false` says nothing
    /// (tmux is the one to ask then).
    pub(crate) fn runs_by_its_files(&self, node_id: &str) -> bool {
        !lock(&self.seen_ended).contains(node_id)
            && ![
                self.streams.end_file(node_id),
                self.streams.status_file(node_id),
                self.streams.died_file(node_id),
                self.final_file(node_id),
            ]
            .iter()
            .any(|path| path.exists())
    }

    /// How the node's program ended, as the server knows it without asking tmux (`terminal_list`,
    /// protocol 1.5.0): its final record; else the status its run wrapper recorded, or its pane
    /// seen gone or dead (`.end`, `.died`, or an answer that saw it), at the time of the earliest
    /// of those files; `None` while it runs by these. `signal` is the node's stream's change
    /// signal now: the files are looked at again only when it moved since the last look (every
    /// change of them moves it), so a list of many quiet terminals costs no file system call.
    pub(crate) fn ended(&self, node_id: &str, signal: u64) -> Option<Ended> {
        let seen = lock(&self.seen_ended).contains(node_id);
        if let Some(last) = lock(&self.ends).get(node_id)
            && last.signal == signal
            && last.seen == seen
        {
            return last.ended;
        }
        let ended = self.ended_by_files(node_id, seen);
        lock(&self.ends).insert(node_id.to_owned(), EndLook { signal, seen, ended });
        ended
    }

    fn ended_by_files(&self, node_id: &str, seen: bool) -> Option<Ended> {
        if let Some(record) = self.final_record(node_id) {
            let at = record.ended_at.map(from_millis).or_else(|| {
                std::fs::metadata(self.final_file(node_id)).and_then(|m| m.modified()).ok()
            });
            let at = at.unwrap_or_else(SystemTime::now);
            let last_output = record.last_output_at.map(from_millis);
            return Some(Ended { at, state: record.state(), last_output });
        }
        let at = match self.end_evidence(node_id) {
            Some(at) => at,
            None if seen => SystemTime::now(),
            None => return None,
        };
        let state = PaneState { dead: true, ..PaneState::default() };
        Some(Ended { at, state: self.with_recorded_status(node_id, state), last_output: None })
    }

    /// The time of the earliest file that shows the node's program ended: the status its run
    /// wrapper recorded, its `pane-died` mark, its pane's end.
    fn end_evidence(&self, node_id: &str) -> Option<SystemTime> {
        [
            self.streams.status_file(node_id),
            self.streams.died_file(node_id),
            self.streams.end_file(node_id),
        ]
        .iter()
        .filter_map(|path| std::fs::metadata(path).and_then(|m| m.modified()).ok())
        .min()
    }

    /// When the node's program started: recorded on the canvas when it was started; for a node
    /// of an older canvas, the time its output pipe started (`.start`).
    pub(crate) fn started(&self, node: &Node) -> SystemTime {
        if let Some(at) = node.started_at {
            return from_millis(at);
        }
        std::fs::metadata(self.streams.start_file(&node.id))
            .and_then(|m| m.modified())
            .unwrap_or(SystemTime::UNIX_EPOCH)
    }

    /// `<nodeId>.final`: what a finished run node showed and how it ended, once retired.
    fn final_file(&self, node_id: &str) -> PathBuf {
        self.streams.status_file(node_id).with_extension("final")
    }

    /// `<nodeId>.discard`: the node was started with `keep: false`.
    fn discard_file(&self, node_id: &str) -> PathBuf {
        self.streams.status_file(node_id).with_extension("discard")
    }

    /// The final record of a retired run node.
    pub(crate) fn final_record(&self, node_id: &str) -> Option<FinalRecord> {
        let text = std::fs::read(self.final_file(node_id)).ok()?;
        serde_json::from_slice(&text).ok()
    }

    /// Marks a run node started with `keep: false`: the first answer that reports its finish
    /// closes it ([`Engine::discards`]).
    pub(crate) fn mark_discard(&self, node_id: &str) -> std::io::Result<()> {
        termsprawl_transport::server::write_atomic(&self.discard_file(node_id), b"")
    }

    /// Whether the node was started with `keep: false`.
    pub(crate) fn discards(&self, node_id: &str) -> bool {
        self.discard_file(node_id).exists()
    }

    /// Lets a finished run node go of every process of its own (protocol 1.4.0): once tmux shows
    /// its pane dead, the screen, the scrollback and the exit are recorded in `<nodeId>.final`,
    /// and then its tmux session ends, which closes the output pipe (its `sh` and `cat` read the
    /// rest into the stream file and exit). The stream, and so every cursor, stays. Answers the
    /// record, or `None` while the command still runs.
    pub(crate) async fn retire_run(&self, node_id: &str) -> Result<Option<FinalRecord>, TmuxError> {
        if let Some(record) = self.final_record(node_id) {
            return Ok(Some(record));
        }
        let (history, state) = self.tmux.capture_with_state(node_id, HISTORY_LINES).await?;
        if !state.dead {
            return Ok(None);
        }
        // Ending the session drops what tmux has not yet handed to the pipe: not before the
        // command's output is all in the stream.
        self.output_complete(node_id).await;
        let (screen, _) = self.tmux.capture_screen(node_id).await?;
        let state = self.with_recorded_status(node_id, state);
        let ended_at = self.end_evidence(node_id).unwrap_or_else(SystemTime::now);
        let last_output = self.streams.get(node_id).look().last_output;
        let record = FinalRecord {
            exit_code: state.exit_code,
            signal: state.signal,
            ended_at: Some(millis(ended_at)),
            last_output_at: last_output.map(millis),
            history: trim_dead_notice(trim_blank_end(&history)).to_owned(),
            screen,
        };
        // Through the one writer of state files (fsync'd): the record outlives the pane.
        let written =
            serde_json::to_vec(&record).map_err(std::io::Error::other).and_then(|bytes| {
                termsprawl_transport::server::write_atomic(&self.final_file(node_id), &bytes)
            });
        if written.is_err() {
            // Without the record the pane is the only place the screen is kept: leave it.
            return Ok(Some(record));
        }
        self.tmux.kill_session(node_id).await?;
        Ok(Some(record))
    }

    /// One round of the run-node sweep: retires every finished run node nobody has looked at
    /// since it finished (its wrapper wrote the status, its `pane-died` hook fired, an answer saw
    /// it end, or the round's listing `dead` shows its pane dead: tmux 3.3a does not always run
    /// the hook, and a killed command's wrapper writes no status).
    pub(crate) async fn retire_finished_runs(&self, dead: &HashSet<String>) {
        let runs = self.node_ids(|node| node.command.is_some());
        for node_id in runs {
            let finished = self.streams.status_file(&node_id).exists()
                || self.streams.died_file(&node_id).exists()
                || lock(&self.seen_ended).contains(&node_id)
                || dead.contains(&session_name(&node_id));
            // A run whose output is still on its way is retired in a later round.
            let output_in = self.recorded_status(&node_id).is_none()
                || self.streams.get(&node_id).exit_marked()
                || self.streams.end_file(&node_id).exists();
            if finished
                && output_in
                && !self.final_file(&node_id).exists()
                && !lock(&self.unretirable).contains(&node_id)
                && let Err(TmuxError::NotRunning(_)) = self.retire_run(&node_id).await
            {
                lock(&self.unretirable).insert(node_id);
            }
        }
    }

    /// The state of a node still on the canvas whose tmux session is gone (its shell exited, or
    /// the tmux server ended): not running, with the status a run node's wrapper recorded. `None`
    /// for a node that is not on the canvas (closed).
    pub(crate) fn gone_state(&self, node_id: &str) -> Option<PaneState> {
        let on_canvas = !self.node_ids(|node| node.id == node_id).is_empty();
        on_canvas.then(|| {
            self.with_recorded_status(node_id, PaneState { dead: true, ..PaneState::default() })
        })
    }

    /// [`Tmux::capture_with_state`] with the recorded status; for a node whose session is gone
    /// ([`Engine::gone_state`]), its retained output (the stream) instead of the screen, so that
    /// a read with and without `since` and a wait agree that it does not run.
    pub(crate) async fn capture_or_gone(
        &self,
        node_id: &str,
        history: u32,
    ) -> Result<(String, PaneState), TmuxError> {
        let captured = self.capture_or_gone_unseen(node_id, history).await;
        self.saw(node_id, captured.as_ref().ok().map(|(_, state)| state));
        captured
    }

    async fn capture_or_gone_unseen(
        &self,
        node_id: &str,
        history: u32,
    ) -> Result<(String, PaneState), TmuxError> {
        match self.tmux.capture_with_state(node_id, history).await {
            Ok((text, state)) => Ok((text, self.with_recorded_status(node_id, state))),
            Err(TmuxError::NotRunning(name)) => match self.gone_state(node_id) {
                Some(state) => Ok((self.streams.get(node_id).after(None).0, state)),
                None => Err(TmuxError::NotRunning(name)),
            },
            Err(error) => Err(error),
        }
    }

    /// The screen view of a node whose session is gone ([`Engine::gone_state`]): there is no pane
    /// to look at, so its last rows are the last lines of its stream (each cut to the width),
    /// padded with empty rows to the window's size, the cursor below the last line written.
    pub(crate) fn gone_screen(&self, node_id: &str) -> Option<(Screen, PaneState)> {
        let state = self.gone_state(node_id)?;
        let (cols, rows) = crate::tmux::WINDOW_CELLS;
        let (text, _, _) = self.streams.get(node_id).after(None);
        let mut lines: Vec<&str> = text.split('\n').collect();
        // The text after the last line feed is the row the cursor is on.
        let cursor_col = lines.last().map_or(0, |last| last.chars().count());
        let skip = lines.len().saturating_sub(rows as usize);
        lines.drain(..skip);
        let cursor_row = u32::try_from(lines.len().saturating_sub(1)).unwrap_or(rows - 1);
        let mut screen = String::new();
        for row in 0..rows as usize {
            let line = lines.get(row).copied().unwrap_or_default();
            let line: String = line.chars().take(cols as usize).collect();
            screen.push_str(line.trim_end_matches(' '));
            screen.push('\n');
        }
        let screen = Screen {
            text: screen,
            rows,
            cols,
            cursor_row,
            cursor_col: u32::try_from(cursor_col).unwrap_or(cols).min(cols - 1),
            alternate: false,
        };
        Some((screen, state))
    }

    /// `state`, with the status a run node's wrapper recorded when tmux does not know it.
    pub(crate) fn with_recorded_status(&self, node_id: &str, mut state: PaneState) -> PaneState {
        if state.dead && state.exit_code.is_none() && state.signal.is_none() {
            // The wrapper ends the way the command did; a status above 128 is a signal there.
            match self.recorded_status(node_id) {
                Some(status) if status > 128 => state.signal = Some(status - 128),
                status => state.exit_code = status,
            }
        }
        state
    }

    /// Waits (at most [`EXIT_MARK_LIMIT`]) until everything a finished run node's command printed
    /// is in its stream: when its wrapper recorded the exit, until the wrapper's exit mark is
    /// read (or the pipe ended). A command killed with its wrapper printed no mark, and a retired
    /// node's stream was complete when it was retired: those do not wait.
    pub(crate) async fn output_complete(&self, node_id: &str) {
        if self.recorded_status(node_id).is_some() && !self.final_file(node_id).exists() {
            let end = self.streams.end_file(node_id);
            self.streams.get(node_id).wait_for_exit_mark(&end, EXIT_MARK_LIMIT).await;
        }
    }

    /// The exit status a run node's wrapper recorded, once its command has exited.
    pub(crate) fn recorded_status(&self, node_id: &str) -> Option<i32> {
        std::fs::read_to_string(self.streams.status_file(node_id))
            .ok()
            .and_then(|text| text.trim().parse().ok())
    }

    /// A node's tmux session, its output captured into its stream (see [`Tmux::new_session`]).
    async fn new_session(
        &self,
        node_id: &str,
        cwd: &Path,
        env: &[(String, String)],
        argv: Option<&[String]>,
        keep_after_exit: bool,
    ) -> Result<(), ToolError> {
        let (out, start, end, died) = (
            self.streams.out_file(node_id),
            self.streams.start_file(node_id),
            self.streams.end_file(node_id),
            self.streams.died_file(node_id),
        );
        let capture = Capture {
            out: &out,
            start: &start,
            end: &end,
            died: keep_after_exit.then_some(died.as_path()),
        };
        let stream = self.streams.get(node_id);
        let pid =
            self.tmux.new_session(node_id, cwd, env, argv, &capture).await.map_err(tmux_error)?;
        if let Some(pid) = pid {
            self.remember_pane(node_id, pid);
        }
        if let (true, Some(argv)) = (keep_after_exit, argv) {
            // The program starts once the pipe's reader runs (see `Tmux::new_session`).
            if !stream.wait_for_file(&start, PIPE_START_LIMIT).await {
                let _ = self.tmux.kill_session(node_id).await;
                self.streams.remove_files(node_id);
                return Err(ToolError::new("the terminal's output pipe did not start"));
            }
            match self.tmux.respawn(node_id, cwd, argv).await {
                Ok(pid) => {
                    if let Some(pid) = pid {
                        self.remember_pane(node_id, pid);
                    }
                }
                Err(error) => {
                    let _ = self.tmux.kill_session(node_id).await;
                    self.streams.remove_files(node_id);
                    return Err(tmux_error(error));
                }
            }
        }
        Ok(())
    }

    /// Submits one line into a node's prompt: `text` typed as is, then Enter. The one way the
    /// server speaks into an agent's node: `agent_send`'s requests and `terminal_run`'s notices.
    pub(crate) async fn submit_line(&self, node_id: &str, text: &str) -> Result<(), TmuxError> {
        self.tmux.send_text(node_id, text).await?;
        self.tmux.send_key(node_id, "Enter").await
    }

    /// Removes a node: ends its tmux session, revokes its session, fails its pending requests and
    /// removes its launch files.
    pub(crate) async fn close_node(
        &self,
        project_id: &str,
        node_id: &str,
    ) -> Result<(), ToolError> {
        let node = self.project(project_id)?.existing(node_id)?.clone();
        if node.kind.is_terminal() {
            // Waiters end first, so that none mistakes the pane's end for its program's exit.
            self.streams.close(node_id);
            self.tmux.kill_session(node_id).await.map_err(tmux_error)?;
        }
        self.mutate(project_id, |project| Ok(project.remove(node_id)))?;
        if node.kind.is_terminal() {
            lock(&self.panes).remove(node_id);
            lock(&self.looks).remove(node_id);
            lock(&self.ends).remove(node_id);
            self.streams.remove_files(node_id);
            let _ = std::fs::remove_file(self.final_file(node_id));
            let _ = std::fs::remove_file(self.discard_file(node_id));
            self.notices.forget(node_id);
        }
        if node.kind == NodeKind::Agent {
            self.revoke(node_id);
            let _ = std::fs::remove_dir_all(self.layout.launch_dir(node_id));
        }
        Ok(())
    }

    /// Revokes a node's session (its token stops working, its file is deleted) and fails the
    /// pending requests it sent or received.
    pub(crate) fn revoke(&self, node_id: &str) {
        if let Ok(server) = self.tool_server() {
            let _ = server.revoke_session(node_id);
        }
        let now = tasks::now_millis();
        let _ = self.state().tasks.fail_pending(tasks::REVOKED_REASON, now, |task| {
            task.from_node_id == node_id || task.to_node_id == node_id
        });
    }

    /// After a start: provisions again (reusing tokens) the session of every agent node whose
    /// tmux session still runs, and removes the stale session files of the others.
    pub(crate) async fn restore_sessions(&self) -> Result<usize, crate::Error> {
        let server =
            self.tool_server().map_err(|error| crate::Error::Control(error.to_string()))?;
        // A listing that failed (tmux dying or stuck, not "no server") is no evidence that the
        // agents ended: their sessions are restored, and the liveness check revokes those whose
        // tmux session is gone once tmux answers.
        let running = self.tmux.session_names().await.ok();
        let agents: Vec<(ToolIdentity, IntegrationStatus)> = {
            let state = self.state();
            state
                .canvas
                .projects
                .iter()
                .flat_map(|project| {
                    project.nodes.iter().filter_map(|node| {
                        let agent = node.agent.as_ref()?;
                        let identity = ToolIdentity {
                            node_id: node.id.clone(),
                            project_id: project.id.clone(),
                        };
                        Some((identity, agent.status.clone()))
                    })
                })
                .collect()
        };
        let mut restored = 0;
        for (identity, status) in agents {
            let session = session_name(&identity.node_id);
            if running.as_ref().is_none_or(|running| running.contains(&session)) {
                server.provision_session(identity, status, true)?;
                restored += 1;
            } else {
                let _ = server.revoke_session(&identity.node_id);
            }
        }
        Ok(restored)
    }

    /// Part of the liveness check: every terminal node whose output pipe ended (`<nodeId>.end`)
    /// while its session still runs is piped again, so that a shell whose output copy stopped on
    /// a full disk is followed again once space is free, without a restart (issue 29). What the
    /// pane printed while nothing followed it is not in the stream.
    async fn follow_again(&self, running: &HashSet<String>) {
        let terminals = self.node_ids(|node| node.kind.is_terminal());
        for node_id in terminals {
            let end = self.streams.end_file(&node_id);
            if end.exists()
                && running.contains(&session_name(&node_id))
                && self.tmux.has_session(&node_id).await.unwrap_or(false)
                && std::fs::remove_file(&end).is_ok()
                && self.tmux.repipe(&node_id).await.is_err()
            {
                // The session ended meanwhile: its end stays marked.
                let _ = std::fs::write(&end, b"");
            }
        }
    }

    /// One round of the liveness check: revokes the sessions of agents whose tmux session ended.
    /// Answers the sessions the round's listing shows with a dead pane (for
    /// [`Engine::retire_finished_runs`]; none when the listing failed).
    ///
    /// The candidates are taken before tmux is asked: an agent whose launch ends while
    /// `list-sessions` runs was still launching then, so a listing made before its tmux session
    /// existed never revokes it. A failed listing revokes nobody.
    pub(crate) async fn check_liveness(&self) -> HashSet<String> {
        let Ok(server) = self.tool_server() else { return HashSet::new() };
        let candidates: Vec<String> = {
            let launching = lock(&self.launching);
            server
                .sessions()
                .list()
                .into_iter()
                .map(|session| session.identity().node_id.clone())
                .filter(|node_id| !launching.contains(node_id))
                .collect()
        };
        let Ok(Sessions { running, dead }) = self.tmux.sessions().await else {
            return HashSet::new();
        };
        for node_id in candidates {
            let session = session_name(&node_id);
            if !running.contains(&session) {
                // Said on stderr (serve's log): an agent that stops working has a reason there.
                let _ = writeln!(
                    std::io::stderr(),
                    "termsprawl-headless: revoked the session of {node_id}: its tmux session {session} ended"
                );
                self.revoke(&node_id);
            }
        }
        self.follow_again(&running).await;
        self.know_panes(&running).await;
        dead
    }

    /// Part of the liveness check: the pane's process of every running terminal node that is not
    /// remembered (after a restart), so that `waitingForInput` needs no tmux command.
    async fn know_panes(&self, running: &HashSet<String>) {
        let terminals = self.node_ids(|node| node.kind.is_terminal());
        for node_id in terminals {
            let known = lock(&self.panes).contains_key(&node_id);
            if !known && running.contains(&session_name(&node_id)) {
                self.know_pane(&node_id).await;
            }
        }
    }

    /// The project of `folder` (made canonical), created if new.
    pub(crate) fn ensure_project(&self, folder: &Path) -> Result<String, ToolError> {
        let folder =
            folder.canonicalize().ok().filter(|folder| folder.is_dir()).ok_or_else(|| {
                ToolError::new(format!("project folder {} is not a directory", folder.display()))
            })?;
        let mut state = self.state();
        let known = state.canvas.projects.iter().any(|project| project.folder == folder);
        let id = state.canvas.ensure_project(&folder).id.clone();
        if !known {
            state
                .canvas
                .save(&self.layout.canvas_file())
                .map_err(|error| ToolError::new(format!("cannot save the canvas: {error}")))?;
        }
        Ok(id)
    }
}

/// How a node's program ended ([`Engine::ended`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ended {
    /// When.
    pub(crate) at: SystemTime,
    /// Dead, with the exit status or signal when known.
    pub(crate) state: PaneState,
    /// When it last printed, as recorded when it was retired.
    pub(crate) last_output: Option<SystemTime>,
}

/// One look of [`Engine::ended`] at a node's files.
#[derive(Debug, Clone, Copy)]
struct EndLook {
    /// The node's stream's change signal then.
    signal: u64,
    /// Whether an answer had seen the node ended then.
    seen: bool,
    /// What the files showed.
    ended: Option<Ended>,
}

/// `time` in milliseconds since 1970.
fn millis(time: SystemTime) -> u64 {
    let since = time.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
}

/// Milliseconds since 1970 as a time.
fn from_millis(millis: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + std::time::Duration::from_millis(millis)
}

/// What a retired run node showed when it finished, and how it ended (`<nodeId>.final`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FinalRecord {
    pub(crate) exit_code: Option<i32>,
    pub(crate) signal: Option<i32>,
    /// When the command ended, in milliseconds since 1970 (protocol 1.5.0; absent in records
    /// written before, whose file's time stands in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) ended_at: Option<u64>,
    /// When it last printed, in milliseconds since 1970, as this server saw it (1.5.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) last_output_at: Option<u64>,
    /// The screen and scrollback, as `terminal_read` without `since` shows them.
    pub(crate) history: String,
    /// The visible screen, as `terminal_read` with `view: "screen"` shows it.
    pub(crate) screen: Screen,
}

impl FinalRecord {
    /// The pane's state it records: dead, with the exit status or signal.
    pub(crate) fn state(&self) -> PaneState {
        PaneState { dead: true, exit_code: self.exit_code, signal: self.signal, pid: None }
    }
}

/// `text` without tmux's dead-pane line ("Pane is dead (status 3, …)") at its end: a run node
/// started before protocol 1.4.0 has it on its screen.
pub(crate) fn trim_dead_notice(text: &str) -> &str {
    let body = text.strip_suffix('\n').unwrap_or(text);
    match body.rsplit_once('\n') {
        Some((before, last)) if last.starts_with("Pane is dead") => trim_blank_end(before),
        None if body.starts_with("Pane is dead") => "",
        _ => text,
    }
}

/// A tmux failure as an operation error: a session that does not run is `Terminal is not attached`.
pub(crate) fn tmux_error(error: TmuxError) -> ToolError {
    match error {
        TmuxError::NotRunning(_) => messages::NOT_ATTACHED.into(),
        other => ToolError::new(other.to_string()),
    }
}
