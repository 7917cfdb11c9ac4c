//! The shared state of a running server and the actions that both agents (through the operations
//! of `ops`) and the control channel (through [`crate::control`]) use: starting agents, closing nodes,
//! revoking sessions, and restoring sessions after a restart.

use std::collections::HashSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Map, Value, json};
use termsprawl_external_term::session_name;
use termsprawl_protocol::{IntegrationStatus, ToolIdentity};
use termsprawl_transport::server::ToolServer;

use crate::canvas::{AgentInfo, Canvas, Node, NodeKind, Project};
use crate::config::Config;
use crate::error::{ToolError, messages};
use crate::launch;
use crate::layout::Layout;
use crate::notices::{self, Notices};
use crate::queue::Queues;
use crate::streams::Streams;
use crate::tasks::{self, Tasks};
use crate::terminals::Terminals;
use crate::tmux::{Sessions, Tmux};
use termsprawl_transport::sync::lock;

/// The canvas and the tasks, behind one lock that is never held across an `await`.
#[derive(Debug)]
pub(crate) struct State {
    pub(crate) canvas: Canvas,
    pub(crate) tasks: Tasks,
}

/// Everything a request, a control command and the background checks share.
pub(crate) struct Engine {
    config: Config,
    layout: Layout,
    queues: Queues,
    default_project: String,
    /// The terminal nodes' tmux sessions and files.
    terminals: Terminals,
    /// The notices of `terminal_run`'s `notify` (protocol 1.5.0).
    notices: Notices,
    state: Mutex<State>,
    tool_server: Mutex<Option<Arc<ToolServer>>>,
    /// Agent nodes being started: the liveness check leaves them alone until tmux runs them.
    launching: Mutex<HashSet<String>>,
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

impl notices::Host for Engine {
    fn notices(&self) -> &Notices {
        &self.notices
    }

    fn terminals(&self) -> &Terminals {
        &self.terminals
    }

    fn notice_idle_limit(&self) -> std::time::Duration {
        self.config.notice_idle_limit
    }

    fn is_agent_node(&self, project_id: &str, node_id: &str) -> bool {
        self.with_project(project_id, |project| {
            project.node(node_id).is_some_and(|node| node.kind == NodeKind::Agent)
        })
        .unwrap_or(false)
    }
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
            queues: Queues::default(),
            default_project,
            terminals: Terminals::new(tmux, streams),
            notices,
            state: Mutex::new(state),
            tool_server: Mutex::new(None),
            launching: Mutex::new(HashSet::new()),
        }
    }

    /// The server's settings.
    pub(crate) fn config(&self) -> &Config {
        &self.config
    }

    /// Where the server keeps its files.
    pub(crate) fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The per-project queues of operations.
    pub(crate) fn queues(&self) -> &Queues {
        &self.queues
    }

    /// The project of callers that name none (`launch` without `--project`).
    pub(crate) fn default_project(&self) -> &str {
        &self.default_project
    }

    /// The terminal nodes' tmux sessions and files: the one owner of "is it running, how did it
    /// end".
    pub(crate) fn terminals(&self) -> &Terminals {
        &self.terminals
    }

    /// The run notices of `terminal_run`'s `notify`.
    pub(crate) fn notices(&self) -> &Notices {
        &self.notices
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
        self.terminals.open(node_id, &folder, &environment, Some(argv)).await?;
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
        self.terminals.open(&node_id, &folder, &[], self.config.shell.as_deref()).await?;
        let mut node = Node::new(node_id.clone(), NodeKind::Terminal, title.to_owned());
        node.started_at = Some(tasks::now_millis());
        if let Err(error) = self.mutate(project_id, |project| Ok(project.add(node))) {
            self.terminals.unopen(&node_id).await;
            return Err(error);
        }
        Ok(node_id)
    }

    /// Starts `sh -c COMMAND` as the program of a new run node of `project_id`, in `cwd` with
    /// `env` added ([`Terminals::open_run`]); the node is on the canvas before its command starts.
    pub(crate) async fn open_run(
        &self,
        project_id: &str,
        title: &str,
        command: &str,
        cwd: &Path,
        env: &[(String, String)],
    ) -> Result<String, ToolError> {
        let node_id = self.state().canvas.fresh_node_id(NodeKind::Terminal);
        let mut node = Node::new(node_id.clone(), NodeKind::Terminal, title.to_owned());
        node.command = Some(command.to_owned());
        node.started_at = Some(tasks::now_millis());
        // The node is committed to the canvas before its command starts: a failed save (a full
        // disk) fails the call with nothing run (issue 29).
        let commit = || self.mutate(project_id, |project| Ok(project.add(node)));
        let uncommit = || self.mutate(project_id, |project| Ok(project.remove(&node_id))).is_ok();
        self.terminals.open_run(&node_id, command, cwd, env, commit, uncommit).await?;
        Ok(node_id)
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
            self.terminals.close(node_id).await?;
        }
        self.mutate(project_id, |project| Ok(project.remove(node_id)))?;
        if node.kind.is_terminal() {
            self.terminals.forget(node_id);
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
        let running = self.terminals.session_names().await.ok();
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
        let Ok(Sessions { running, dead }) = self.terminals.sessions().await else {
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
        let terminals = self.node_ids(|node| node.kind.is_terminal());
        self.terminals.follow_again(&terminals, &running).await;
        self.terminals.know_panes(&terminals, &running).await;
        dead
    }

    /// The run-node sweep of the liveness round ([`Terminals::retire_finished_runs`]) over the
    /// run nodes on the canvas; `dead` is the round's listing of dead panes.
    pub(crate) async fn retire_finished_runs(&self, dead: &HashSet<String>) {
        let runs = self.node_ids(|node| node.command.is_some());
        self.terminals.retire_finished_runs(runs, dead).await;
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
