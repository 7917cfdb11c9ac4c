//! The real `termsprawl-headless` for the cli's end-to-end tests (the ACP canvas terminals,
//! fast-agent, the MCP Inspector): one `serve` on a data directory, started and awaited with
//! test-support's `Serve` (the one way the tests start a server), agents made with its `launch`
//! command, and its tmux server ended after it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;
use termsprawl_test_support::serve::{Serve, serve_command};
use termsprawl_test_support::tmux::TmuxGuard;

use crate::support::BIN;

/// How long `serve` may take to become ready.
const PATIENCE: Duration = Duration::from_secs(30);

/// `termsprawl-headless`, built by cargo next to `termsprawlctl`; a test without it fails.
pub(crate) fn binary() -> PathBuf {
    let path = Path::new(BIN).with_file_name("termsprawl-headless");
    assert!(
        path.is_file(),
        "termsprawl-headless is not built next to termsprawlctl ({}): run `cargo xtask test` \
         (or `cargo build -p termsprawl-headless` first)",
        path.display()
    );
    path
}

/// A running server. Dropped: the server is killed, then its tmux server.
pub(crate) struct Headless {
    serve: Serve,
    program: PathBuf,
    data: PathBuf,
    _tmux: TmuxGuard,
}

impl Headless {
    /// `serve --project PROJECT --ctl termsprawlctl` on `data`, with `adjust` applied to the
    /// command (environment), once it printed its ready line.
    pub(crate) fn start(
        data: &Path,
        project: &Path,
        adjust: impl FnOnce(&mut Command),
    ) -> Headless {
        let program = binary();
        let mut command = serve_command(&program, data, project, Path::new(BIN));
        command.env_remove("TMUX").env_remove("TMUX_PANE");
        adjust(&mut command);
        let tmux = TmuxGuard::new(data);
        let serve =
            Serve::start(&mut command, PATIENCE, |_| {}).unwrap_or_else(|error| panic!("{error}"));
        Headless { serve, program, data: data.to_path_buf(), _tmux: tmux }
    }

    /// `termsprawl-headless --data D ARGS…`, to completion.
    pub(crate) fn run(&self, args: &[&str]) -> Output {
        Command::new(&self.program)
            .arg("--data")
            .arg(&self.data)
            .args(args)
            .env_remove("TMUX")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    /// `launch --agent NAME --json -- /bin/sh`: the launched agent's description (`nodeId`,
    /// `sessionFile`, …).
    pub(crate) fn launch(&self, name: &str) -> Value {
        let output = self.run(&["launch", "--agent", name, "--json", "--", "/bin/sh"]);
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        serde_json::from_slice(&output.stdout).unwrap()
    }

    /// The session file of a newly launched agent `name`.
    pub(crate) fn session(&self, name: &str) -> PathBuf {
        PathBuf::from(self.launch(name)["sessionFile"].as_str().unwrap())
    }
}

impl Headless {
    /// Kills the server (SIGKILL), leaving its tmux server and files: a server gone mid-call.
    pub(crate) fn kill_server(&mut self) {
        self.serve.kill();
    }
}
