//! What a server needs to start, with the defaults of `termsprawl-headless serve`.

use std::path::PathBuf;
use std::time::Duration;

use termsprawl_external_term::SearchPath;

/// How long a queued operation may wait for its turn (`spec/protocol.md` §6.4).
pub(crate) const QUEUE_EXPIRY: Duration = Duration::from_secs(15);
/// How long an agent request may wait for its reply (`spec/protocol.md` §4.5).
pub(crate) const TASK_EXPIRY: Duration = Duration::from_mins(15);
/// How often agent sessions are checked for a tmux session that ended.
pub(crate) const LIVENESS_INTERVAL: Duration = Duration::from_secs(2);
/// How long a run notice waits at most for its caller's node to be ready (an agent program, not
/// a shell, reads its terminal) and idle: then it is typed anyway where an agent program reads,
/// and dropped otherwise (`spec/protocol.md` §4.9).
pub(crate) const NOTICE_IDLE_LIMIT: Duration = Duration::from_mins(2);

/// The configuration of a [`crate::Server`].
#[derive(Debug, Clone)]
pub struct Config {
    /// `<userData>`; the server's `D` is `<userData>/agent-tools`.
    pub user_data: PathBuf,
    /// The default project folder: created as a project if new, used by `launch` without
    /// `--project`.
    pub project: PathBuf,
    /// The `termsprawlctl` program that `D/termsprawlctl` runs; `None` looks next to the running
    /// executable, then on `PATH`.
    pub ctl: Option<PathBuf>,
    /// The program of `terminal_open` shells; `None` lets tmux start its default shell.
    pub shell: Option<Vec<String>>,
    /// How long a queued operation may wait (`QUEUE_EXPIRY`); tests shorten it.
    pub queue_expiry: Duration,
    /// How long an agent request may wait for its reply (`TASK_EXPIRY`); tests shorten it.
    pub task_expiry: Duration,
    /// How often ended agent sessions are noticed (`LIVENESS_INTERVAL`).
    pub liveness_interval: Duration,
    /// How long a run notice waits at most for its caller's node to be ready and idle
    /// (`NOTICE_IDLE_LIMIT`); tests shorten it.
    pub notice_idle_limit: Duration,
    /// Where agent presets and tmux are looked for.
    pub search_path: SearchPath,
    /// The `appVersion` of `session_info`.
    pub app_version: String,
    /// `serve --exec-log FILE`: append `{"operation":…,"args":…}` as one line to this file for
    /// every authenticated, validated request, before it is dispatched (the soak harness counts
    /// executions with it). Never a token.
    pub exec_log: Option<PathBuf>,
}

impl Config {
    /// The defaults for `<userData>` = `user_data` and the project folder `project`.
    pub fn new(user_data: impl Into<PathBuf>, project: impl Into<PathBuf>) -> Config {
        Config {
            user_data: user_data.into(),
            project: project.into(),
            ctl: None,
            shell: None,
            queue_expiry: QUEUE_EXPIRY,
            task_expiry: TASK_EXPIRY,
            liveness_interval: LIVENESS_INTERVAL,
            notice_idle_limit: NOTICE_IDLE_LIMIT,
            search_path: SearchPath::from_env(),
            app_version: format!("headless-{}", env!("CARGO_PKG_VERSION")),
            exec_log: None,
        }
    }
}
