//! The command line of `termsprawl-headless` (part of the binary, not of the library).
//!
//! ```text
//! termsprawl-headless [--data DIR] serve [--project DIR] [--ctl PATH] [--exec-log FILE] [--recover]
//! termsprawl-headless [--data DIR] launch [--project DIR] [--agent NAME] [--title TITLE] [--json] [--attach] -- CMD [ARGS...]
//! termsprawl-headless [--data DIR] link [--both] FROM TO
//! termsprawl-headless [--data DIR] unlink [--both] FROM TO
//! termsprawl-headless [--data DIR] close NODE
//! termsprawl-headless [--data DIR] info
//! ```
//!
//! Exit status: 0 success, 1 failure (one `termsprawl-headless: error: …` line on stderr), 2 usage
//! error. stdout carries data only (a node id, JSON); everything else goes to stderr.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command as Process, ExitCode};

use anyhow::Context as _;
use clap::{Args, CommandFactory as _, Parser, Subcommand};
use serde_json::Value;
use termsprawl_headless::canvas::Canvas;
use termsprawl_headless::control::{self, ControlRequest, LaunchRequest};
use termsprawl_headless::{Config, Layout, Server, launch};

/// A termsprawl agent tool server without the desktop app: terminal nodes are tmux sessions, the
/// canvas is a JSON file.
#[derive(Debug, Parser)]
#[command(name = "termsprawl-headless", version)]
struct Cli {
    /// The termsprawl data directory (`<userData>`); the tool server's files go to its
    /// `agent-tools/`. Default: `$XDG_CONFIG_HOME/termsprawl`, else `~/.config/termsprawl`.
    #[arg(long, global = true, value_name = "DIR")]
    data: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the tool protocol until SIGINT or SIGTERM.
    Serve(Serve),
    /// Start a command as an agent in a new node of a running server, with a fresh session and
    /// the TERMSPRAWL_* environment; prints the node id.
    Launch(Launch),
    /// Enable the agent link FROM → TO ("Allow agent requests"), so FROM may send requests to TO.
    Link(LinkArgs),
    /// Disable the agent link FROM → TO.
    Unlink(LinkArgs),
    /// Remove a node: end its tmux session and revoke its session.
    Close {
        /// The node id.
        node: String,
    },
    /// Print the running server's instance, URL and projects as JSON.
    Info,
    /// Print this program's man page (roff) to stdout.
    #[command(hide = true)]
    Man,
    /// Print this program's completion script for SHELL (bash, zsh or fish) to stdout.
    #[command(hide = true)]
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

#[derive(Debug, Args)]
struct Serve {
    /// The default project folder (created as a project when new).
    #[arg(long, value_name = "DIR", default_value = ".")]
    project: PathBuf,
    /// The termsprawlctl program behind `agent-tools/termsprawlctl`. Default: next to this
    /// program, else on PATH.
    #[arg(long, value_name = "PATH")]
    ctl: Option<PathBuf>,
    /// Append one JSON line `{"operation":…,"args":…}` to FILE for every authenticated, valid
    /// request, just before it is dispatched (for counting executions in tests; never a token).
    #[arg(long, value_name = "FILE")]
    exec_log: Option<PathBuf>,
    /// When `canvas.json` is damaged: move it aside as `canvas.json.damaged-<time>` and start from
    /// the last good copy (`canvas.json.last-good`, saved with every change), else with an empty
    /// canvas. Without it a damaged canvas stops the start and is left as it is.
    #[arg(long)]
    recover: bool,
}

#[derive(Debug, Args)]
struct Launch {
    /// The project folder; the server's default project when omitted.
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// The agent's name, shown in its status as `<NAME>-unverified`. Default: the command's file
    /// name.
    #[arg(long, value_name = "NAME")]
    agent: Option<String>,
    /// The node's title. Default: the agent's name.
    #[arg(long, value_name = "TITLE")]
    title: Option<String>,
    /// Print the whole launch record (node, session file, environment, tmux) as JSON.
    #[arg(long)]
    json: bool,
    /// Attach this terminal to the new node's tmux session.
    #[arg(long)]
    attach: bool,
    /// The command and its arguments.
    #[arg(last = true, required = true, value_name = "CMD")]
    command: Vec<String>,
}

#[derive(Debug, Args)]
struct LinkArgs {
    /// Also the link TO → FROM.
    #[arg(long)]
    both: bool,
    /// The sending agent node.
    from: String,
    /// The receiving agent node.
    to: String,
}

/// Parses the command line, runs it, and reports.
pub(crate) fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(error) => {
            say(&format!("error: {error:#}"));
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    // The release's documents (`cargo xtask dist`) come from the command line the binary parses.
    match cli.command {
        Command::Man => {
            let mut roff = Vec::new();
            clap_mangen::Man::new(Cli::command()).render(&mut roff)?;
            out(&String::from_utf8(roff)?);
            return Ok(ExitCode::SUCCESS);
        }
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "termsprawl-headless", &mut script);
            out(&String::from_utf8(script)?);
            return Ok(ExitCode::SUCCESS);
        }
        _ => {}
    }
    let user_data = match cli.data {
        Some(data) => data,
        None => Layout::default_user_data()
            .context("cannot find the data directory: set --data, XDG_CONFIG_HOME or HOME")?,
    };
    let layout = Layout::new(&user_data);
    let socket = layout.control_socket();
    match cli.command {
        Command::Serve(serve) => serve.exec(&user_data),
        Command::Launch(launch) => launch.exec(&socket),
        Command::Link(link) => link.exec(&socket, true),
        Command::Unlink(link) => link.exec(&socket, false),
        Command::Close { node } => {
            control::request(&socket, &ControlRequest::Close { node_id: node.clone() })?;
            say(&format!("closed {node}"));
            Ok(ExitCode::SUCCESS)
        }
        Command::Info => {
            let value = control::request(&socket, &ControlRequest::Info)?;
            out(&format!("{}\n", serde_json::to_string_pretty(&value)?));
            Ok(ExitCode::SUCCESS)
        }
        Command::Man | Command::Completions { .. } => unreachable!("answered above"),
    }
}

impl Serve {
    fn exec(self, user_data: &Path) -> anyhow::Result<ExitCode> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .context("cannot start the async runtime")?;
        runtime.block_on(async move {
            if self.recover {
                let canvas = Layout::new(user_data).canvas_file();
                if let Err(error) = Canvas::load(&canvas) {
                    say(&format!("{error}"));
                    let done = Canvas::recover(&canvas)
                        .with_context(|| format!("cannot move {} aside", canvas.display()))?;
                    say(&done);
                }
            }
            let mut config = Config::new(user_data, &self.project);
            config.ctl = self.ctl;
            config.exec_log = self.exec_log;
            if launch::find_ctl(config.ctl.as_deref(), &config.search_path).is_none() {
                say("warning: termsprawlctl was not found next to this program nor on PATH; agents' TERMSPRAWL_CTL will only print an error (pass --ctl)");
            }
            // Signal handlers first: a signal that arrives once `ready` is printed must stop the
            // server cleanly, not kill it.
            let shutdown = shutdown_signal()?;
            let server = Server::start(config).await?;
            say(&format!("serving {} (instance {})", server.url(), server.instance_id()));
            say(&format!(
                "default project {} in {}",
                server.default_project_id(),
                self.project.canonicalize().unwrap_or(self.project.clone()).display()
            ));
            say(&format!("data directory {}", server.layout().agent_tools().display()));
            say(&format!("control socket {}", server.layout().control_socket().display()));
            if server.restored_sessions() > 0 {
                say(&format!("{} running agent sessions picked up again", server.restored_sessions()));
            }
            say("ready");
            server.serve_until(shutdown).await;
            say("stopped");
            Ok(ExitCode::SUCCESS)
        })
    }
}

/// Installs the SIGINT and SIGTERM handlers; the future completes at the first of them.
fn shutdown_signal() -> anyhow::Result<impl Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt()).context("cannot handle SIGINT")?;
    let mut terminate = signal(SignalKind::terminate()).context("cannot handle SIGTERM")?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
    })
}

impl Launch {
    fn exec(self, socket: &Path) -> anyhow::Result<ExitCode> {
        let project =
            match self.project {
                Some(project) => Some(project.canonicalize().with_context(|| {
                    format!("cannot find project folder {}", project.display())
                })?),
                None => None,
            };
        let request =
            LaunchRequest { project, agent: self.agent, title: self.title, argv: self.command };
        let value = control::request(socket, &ControlRequest::Launch(request))?;
        let node_id = value["nodeId"].as_str().unwrap_or_default().to_owned();
        if self.json {
            out(&format!("{}\n", serde_json::to_string_pretty(&value)?));
        } else {
            out(&format!("{node_id}\n"));
        }
        if !self.attach {
            return Ok(ExitCode::SUCCESS);
        }
        attach(&value, &node_id)
    }
}

/// Runs `tmux -S <socket> -f <config> attach-session -t =ts-<nodeId>` on this terminal.
fn attach(value: &Value, node_id: &str) -> anyhow::Result<ExitCode> {
    let text = |pointer: &str| {
        value.pointer(pointer).and_then(Value::as_str).unwrap_or_default().to_owned()
    };
    let status = Process::new(text("/tmux/program"))
        .args(["-S", &text("/tmux/socket"), "-f", &text("/tmux/config")])
        .args(["attach-session", "-t", &format!("=ts-{node_id}")])
        .env_remove("TMUX")
        .env_remove("TMUX_PANE")
        .status()
        .context("cannot run tmux to attach")?;
    Ok(if status.success() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

impl LinkArgs {
    fn exec(self, socket: &Path, enable: bool) -> anyhow::Result<ExitCode> {
        let mut pairs = vec![(self.from.clone(), self.to.clone())];
        if self.both {
            pairs.push((self.to, self.from));
        }
        for (from, to) in pairs {
            let request = if enable {
                ControlRequest::Link { from: from.clone(), to: to.clone() }
            } else {
                ControlRequest::Unlink { from: from.clone(), to: to.clone() }
            };
            control::request(socket, &request)?;
            say(&format!("{} {from} -> {to}", if enable { "linked" } else { "unlinked" }));
        }
        Ok(ExitCode::SUCCESS)
    }
}

/// One line on stderr, prefixed with the program name. A closed stderr is not an error: `serve`
/// must still stop cleanly when whoever started it stopped reading.
fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "termsprawl-headless: {line}");
}

/// Data on stdout; a closed stdout (`| head`) is not an error either.
fn out(text: &str) {
    let mut stdout = std::io::stdout();
    let _ = stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush());
}
