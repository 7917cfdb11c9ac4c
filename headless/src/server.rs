//! [`Server`]: one running headless tool server, from start to close.

use std::future::Future;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use termsprawl_transport::server::{ServerConfig, ToolServer};
use tokio::sync::broadcast;
use tokio::task::JoinHandle;

use crate::canvas::Canvas;
use crate::config::Config;
use crate::control::{self, ControlRequest, LaunchRequest};
use crate::engine::{Engine, State};
use crate::error::{Error, ToolError};
use crate::launch;
use crate::layout::Layout;
use crate::ops::Handler;
use crate::queue::{QueueEvent, Turn};
use crate::streams::Streams;
use crate::tasks::{self, Tasks};
use crate::tmux::Tmux;

/// A running headless tool server. See the crate documentation.
pub struct Server {
    engine: Arc<Engine>,
    url: String,
    instance_id: String,
    restored: usize,
    background: Vec<JoinHandle<()>>,
}

impl Server {
    /// Starts a server for `config`, in this order: find tmux; read `D/canvas.json` (a file that
    /// does not parse stops the start and is left alone); take `D/server.lock` and listen on
    /// `127.0.0.1:0` (the transport's [`ToolServer`]); add the default project if it is new; fail
    /// the agent requests still pending from the last run; write `D/termsprawlctl` and, if
    /// missing, `<userData>/tmux.conf`; provision again, keeping their tokens, the sessions of
    /// agent nodes whose tmux session still runs; bind `D/headless.sock`; write
    /// `D/endpoint.json`, so that clients find the server only once every restored token works;
    /// start the liveness check.
    pub async fn start(config: Config) -> Result<Server, Error> {
        let layout = Layout::new(&config.user_data);
        let tmux = Tmux::locate(&layout, &config.search_path)?;
        let folder = config
            .project
            .canonicalize()
            .ok()
            .filter(|folder| folder.is_dir())
            .ok_or_else(|| Error::Project { path: config.project.clone() })?;
        let mut canvas = Canvas::load(&layout.canvas_file())?;
        Canvas::keep_last_good(&layout.canvas_file())
            .map_err(Error::io("write", Canvas::last_good_file(&layout.canvas_file())))?;
        let default_project = canvas.ensure_project(&folder).id.clone();
        let tasks_dir = layout.tasks_dir();
        let ctl = launch::find_ctl(config.ctl.as_deref(), &config.search_path);
        let state = State { canvas, tasks: Tasks::empty(&tasks_dir) };
        let streams = Arc::new(
            Streams::new(layout.terminals_dir())
                .map_err(Error::io("create", layout.terminals_dir()))?,
        );
        let engine =
            Arc::new(Engine::new(config, layout.clone(), tmux, state, default_project, streams));
        let exec_log = match &engine.config().exec_log {
            Some(path) => Some(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(Error::io("open", path))?,
            ),
            None => None,
        };
        let handler = Handler { engine: Arc::clone(&engine), exec_log };
        // endpoint.json is written last, in `prepare`: until the sessions of running agents are
        // live again, clients must not find this server (they would see their valid tokens
        // refused as revoked).
        let tool_server = ToolServer::start_with(
            layout.agent_tools(),
            Arc::new(handler),
            ServerConfig::default().with_deferred_endpoint(),
        )
        .await?;
        let url = tool_server.url().to_owned();
        let instance_id = tool_server.instance_id().to_owned();
        engine.set_tool_server(Arc::new(tool_server));
        match Server::prepare(&engine, &layout, ctl.as_deref()).await {
            Ok((restored, background)) => {
                Ok(Server { engine, url, instance_id, restored, background })
            }
            Err(error) => {
                if let Some(server) = engine.take_tool_server() {
                    close_tool_server(server).await;
                }
                Err(error)
            }
        }
    }

    async fn prepare(
        engine: &Arc<Engine>,
        layout: &Layout,
        ctl: Option<&Path>,
    ) -> Result<(usize, Vec<JoinHandle<()>>), Error> {
        {
            let mut state = engine.state();
            state
                .canvas
                .save(&layout.canvas_file())
                .map_err(Error::io("write", layout.canvas_file()))?;
            let mut tasks =
                Tasks::load(&layout.tasks_dir()).map_err(Error::io("read", layout.tasks_dir()))?;
            tasks
                .fail_pending(tasks::RESTART_REASON, tasks::now_millis(), |_| true)
                .map_err(Error::io("write", layout.tasks_dir()))?;
            state.tasks = tasks;
        }
        launch::write_launcher(layout, ctl).map_err(Error::io("write", layout.launcher()))?;
        engine
            .terminals()
            .tmux()
            .prepare(layout.user_data())
            .map_err(Error::io("write", layout.tmux_config()))?;
        let restored = engine.restore_sessions().await?;
        let watcher =
            engine.terminals().watch().map_err(Error::io("watch", layout.terminals_dir()))?;
        let listener = control::bind(&layout.control_socket())?;
        let control = tokio::spawn(control::serve(listener, Arc::clone(engine)));
        engine
            .tool_server()
            .map_err(|error| Error::Control(error.to_string()))?
            .publish_endpoint()?;
        let liveness = {
            let engine = Arc::clone(engine);
            tokio::spawn(async move {
                let mut interval = tokio::time::interval(engine.config().liveness_interval);
                interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    interval.tick().await;
                    let dead = engine.check_liveness().await;
                    engine.retire_finished_runs(&dead).await;
                }
            })
        };
        // After the sessions are restored: a notice due from before the restart may go at once.
        let notices = tokio::spawn(crate::notices::run(Arc::clone(engine)));
        Ok((restored, vec![control, liveness, watcher, notices]))
    }

    /// `http://127.0.0.1:<port>/call`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// This run's instance id.
    pub fn instance_id(&self) -> &str {
        &self.instance_id
    }

    /// The paths of the data directory.
    pub fn layout(&self) -> &Layout {
        self.engine.layout()
    }

    /// The tmux server the nodes run on.
    pub fn tmux(&self) -> &Tmux {
        self.engine.terminals().tmux()
    }

    /// The id of the default project (`--project`).
    pub fn default_project_id(&self) -> &str {
        self.engine.default_project()
    }

    /// How many running agent sessions were provisioned again at start.
    pub fn restored_sessions(&self) -> usize {
        self.restored
    }

    /// Starts an agent, as the `launch` control command does.
    pub async fn launch(&self, request: LaunchRequest) -> Result<Value, ToolError> {
        control::launch(&self.engine, request).await
    }

    /// Carries out a control request in this process.
    pub async fn control(&self, request: ControlRequest) -> Result<Value, ToolError> {
        control::execute(&self.engine, request).await
    }

    /// Occupies a project's operation queue until the returned turn is dropped (test hook).
    pub async fn hold_queue(&self, project_id: &str) -> Turn {
        self.engine.queues().hold(project_id).await
    }

    /// Every later step of every project's queue (test hook).
    pub fn queue_events(&self) -> broadcast::Receiver<QueueEvent> {
        self.engine.queues().subscribe()
    }

    /// Stops: the control socket and the liveness check end, the tool server closes (removing
    /// `server.lock`, and `endpoint.json` if still ours). tmux sessions keep running and session
    /// files stay, so that a later `serve` picks the agents up again.
    pub async fn close(mut self) {
        let background = std::mem::take(&mut self.background);
        for task in &background {
            task.abort();
        }
        for task in background {
            let _ = task.await;
        }
        let _ = std::fs::remove_file(self.engine.layout().control_socket());
        if let Some(server) = self.engine.take_tool_server() {
            close_tool_server(server).await;
        }
    }

    /// Runs until `shutdown` completes, then closes.
    pub async fn serve_until(self, shutdown: impl Future<Output = ()>) {
        shutdown.await;
        self.close().await;
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        for task in &self.background {
            task.abort();
        }
        if let Some(server) = self.engine.take_tool_server() {
            let _ = std::fs::remove_file(self.engine.layout().control_socket());
            drop(server);
        }
    }
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("url", &self.url)
            .field("instance_id", &self.instance_id)
            .finish_non_exhaustive()
    }
}

/// Closes the transport's server once no request holds it any more; if one still does, dropping
/// it cleans up the same way.
async fn close_tool_server(server: Arc<ToolServer>) {
    match Arc::try_unwrap(server) {
        Ok(server) => server.close().await,
        Err(shared) => drop(shared),
    }
}
