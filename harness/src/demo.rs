//! `cargo xtask demo`: a scripted, non-interactive tour of the headless server.
//!
//! Builds `termsprawlctl` and `termsprawl-headless`, starts `termsprawl-headless serve` on a
//! temporary data directory, launches a shell node with the agent environment, and runs, with
//! that environment, `"$TERMSPRAWL_CTL" doctor`, `terminal_open`, `terminal_submit`,
//! `terminal_read` and an MCP `initialize`, `tools/list` and `tools/call` through
//! `"$TERMSPRAWL_CTL" mcp`, printing a short transcript. Any failing step fails the demo. The
//! server, its tmux server and the temporary directory are removed at the end, also after a
//! failure.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context as _, ensure};
use serde_json::{Value, json};

use termsprawl_test_support::serve::{Serve, serve_command};
use termsprawl_test_support::tmux::TmuxGuard;

use crate::base::binaries::{self, Binaries};

/// How long the server may take to become ready, and an MCP answer to arrive.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Runs the demo from the repository at `root`.
pub fn run(root: &Path) -> anyhow::Result<()> {
    let binaries = binaries::build(root, false)?;
    let temp = tempfile::TempDir::new().context("cannot create a temporary directory")?;
    let data = temp.path().join("data");
    let project = temp.path().join("project");
    std::fs::create_dir(&project)?;
    let mut session = Session { serve: None, tmux: Some(TmuxGuard::new(&data)) };
    session.serve = Some(start_server(&binaries, &data, &project)?);
    let result = tour(&binaries, &data, &project);
    drop(session);
    drop(temp);
    result
}

/// Stops the server with SIGTERM and the tmux server with `kill-server` when dropped.
struct Session {
    serve: Option<Serve>,
    tmux: Option<TmuxGuard>,
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(serve) = self.serve.take() {
            // SIGTERM and a wait; dropping the server instead kills it.
            let _ = serve.terminate();
        }
        // Dropping the guard runs `tmux kill-server` on the demo's socket.
        drop(self.tmux.take());
        eprintln!("cleaned up: server stopped, tmux server killed, temporary directory removed");
    }
}

fn start_server(binaries: &Binaries, data: &Path, project: &Path) -> anyhow::Result<Serve> {
    let mut command = serve_command(&binaries.headless, data, project, &binaries.ctl);
    Ok(Serve::start(&mut command, TIMEOUT, |line| eprintln!("  [serve] {line}"))?)
}

fn tour(binaries: &Binaries, data: &Path, project: &Path) -> anyhow::Result<()> {
    let output = Command::new(&binaries.headless)
        .arg("--data")
        .arg(data)
        .args(["launch", "--agent", "demo", "--json", "--", "/bin/sh"])
        .output()
        .context("cannot run termsprawl-headless launch")?;
    ensure!(
        output.status.success(),
        "launch failed: {}",
        String::from_utf8_lossy(&output.stderr).trim()
    );
    let launched: Value =
        serde_json::from_slice(&output.stdout).context("launch printed no JSON")?;
    let environment: Vec<(String, String)> = launched["environment"]
        .as_object()
        .context("launch printed no environment")?
        .iter()
        .map(|(key, value)| (key.clone(), value.as_str().unwrap_or_default().to_owned()))
        .collect();
    println!("# launched agent node {} with:", launched["nodeId"].as_str().unwrap_or_default());
    for (key, value) in &environment {
        println!("#   {key}={value}");
    }
    let agent = Agent { environment, project: project.to_path_buf() };

    agent.sh(r#""$TERMSPRAWL_CTL" doctor"#)?;
    let opened = agent.sh(r#""$TERMSPRAWL_CTL" call terminal_open '{"title":"demo shell"}'"#)?;
    let node_id = opened
        .pointer("/value/nodeId")
        .and_then(Value::as_str)
        .context("terminal_open returned no nodeId")?
        .to_owned();
    let command = json!({"nodeId": node_id, "command": "echo \"hello from $(basename \"$PWD\")\""})
        .to_string();
    agent.sh(&format!(r#""$TERMSPRAWL_CTL" call terminal_submit '{command}'"#))?;
    let read = format!(
        r#""$TERMSPRAWL_CTL" call terminal_read '{{"nodeId":"{node_id}","maxChars":200}}'"#
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let result = agent.run(&read)?;
        let text = result.pointer("/value/output").and_then(Value::as_str).unwrap_or_default();
        if text.contains("hello from project") || Instant::now() > deadline {
            println!("$ {read}\n{}", serde_json::to_string_pretty(&result)?);
            ensure!(
                text.contains("hello from project"),
                "the submitted command never printed its greeting"
            );
            break;
        }
        thread::sleep(Duration::from_millis(100));
    }
    agent.mcp(&node_id)
}

struct Agent {
    environment: Vec<(String, String)>,
    project: PathBuf,
}

impl Agent {
    fn command(&self, line: &str) -> Command {
        let mut command = Command::new("/bin/sh");
        command
            .args(["-c", line])
            .current_dir(&self.project)
            .envs(self.environment.iter().cloned());
        command
    }

    /// Runs `line` with the agent's environment; fails unless it exits 0 with a tool result.
    fn run(&self, line: &str) -> anyhow::Result<Value> {
        let output = self.command(line).output().with_context(|| format!("cannot run {line}"))?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        ensure!(
            output.status.success(),
            "`{line}` exited with {}:\n{stdout}{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_str(&stdout).with_context(|| format!("`{line}` printed no JSON: {stdout}"))
    }

    /// [`Agent::run`], printing the transcript.
    fn sh(&self, line: &str) -> anyhow::Result<Value> {
        let result = self.run(line)?;
        println!("$ {line}\n{}", serde_json::to_string_pretty(&result)?);
        Ok(result)
    }

    /// `"$TERMSPRAWL_CTL" mcp`: `initialize`, `tools/list`, `tools/call` of `terminal_read`.
    fn mcp(&self, node_id: &str) -> anyhow::Result<()> {
        let line = r#""$TERMSPRAWL_CTL" mcp"#;
        println!("$ {line}");
        let mut child = self
            .command(line)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .context("cannot start the MCP bridge")?;
        let mut stdin = child.stdin.take().context("no stdin")?;
        let stdout = child.stdout.take().context("no stdout")?;
        let (sender, receiver) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut exchange = |request: Value| -> anyhow::Result<Value> {
            writeln!(stdin, "{request}")?;
            stdin.flush()?;
            if request.get("id").is_none() {
                return Ok(Value::Null);
            }
            let answer = receiver.recv_timeout(TIMEOUT).context("the MCP bridge did not answer")?;
            serde_json::from_str(&answer).with_context(|| format!("not JSON-RPC: {answer}"))
        };
        let initialized = exchange(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "xtask-demo", "version": "0"}}}),
        )?;
        let server = &initialized["result"]["serverInfo"];
        ensure!(server["name"] == "termsprawl", "initialize failed: {initialized}");
        println!("> initialize -> serverInfo {server}");
        exchange(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        let listed = exchange(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))?;
        let names: Vec<&str> = listed["result"]["tools"]
            .as_array()
            .context("tools/list returned no tools")?
            .iter()
            .filter_map(|tool| tool["name"].as_str())
            .collect();
        ensure!(names.contains(&"terminal_read"), "tools/list lacks terminal_read: {listed}");
        println!(
            "> tools/list -> {} tools: {} …",
            names.len(),
            names[..6.min(names.len())].join(", ")
        );
        let called =
            exchange(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "terminal_read", "arguments": {"nodeId": node_id, "maxChars": 60}}}))?;
        ensure!(called["result"]["isError"] == false, "tools/call failed: {called}");
        println!("> tools/call terminal_read -> {}", called["result"]["content"][0]["text"]);
        drop(stdin);
        let status = child.wait()?;
        ensure!(status.success(), "the MCP bridge exited with {status}");
        Ok(())
    }
}
