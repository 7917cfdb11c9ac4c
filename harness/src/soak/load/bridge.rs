//! The MCP client kind of the soak's load: a long-lived `termsprawlctl mcp` bridge with
//! [`BRIDGE_DEPTH`](super::BRIDGE_DEPTH) calls in flight ([`Bridge`]).

use std::collections::HashMap;
use std::fs;
use std::io::{BufRead, BufReader, Write as _};
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::base::{lock, wait_child};

use super::{Agent, BRIDGE_DEPTH, CALL_TIMEOUT, Plan, Rng, Shared, plan};
use crate::soak::ledger::{Outcome, Path as CallPath, classify_mcp};

/// A long-lived `termsprawlctl mcp` bridge with [`BRIDGE_DEPTH`] calls in flight.
#[derive(Debug)]
pub struct Bridge {
    /// Its index in [`Shared::bridges`].
    pub index: usize,
    /// The index of the agent it speaks for (of each generation: after a tmux kill, the bridge
    /// finishes its calls, exits, and a new one starts for the new agent).
    pub agent: usize,
}

/// A message from a bridge's reader thread.
enum Line {
    Answer(Value),
    Garbage(String),
    Closed,
}

impl Bridge {
    /// Runs the bridge until the run stops, then lets its calls finish, closes its stdin and
    /// checks that it exits 0; the same when the agents' generation changes, and then again
    /// with the new agent.
    pub fn run(&self, shared: &Shared, seed: u64) {
        let mut rng = Rng::new(seed);
        let mut incarnation = 0;
        loop {
            let generation = shared.generation();
            let agent = shared.agent(self.agent);
            if let Err(error) = self.drive(shared, &mut rng, &agent, generation, incarnation) {
                lock(&shared.ledger)
                    .fail("bridge broken", &format!("bridge {}: {error:#}", self.index));
                return;
            }
            if shared.stopping() {
                return;
            }
            incarnation += 1;
        }
    }

    #[expect(clippy::too_many_lines, reason = "one loop: handshake, fill, answer, hang check")]
    fn drive(
        &self,
        shared: &Shared,
        rng: &mut Rng,
        agent: &Agent,
        generation: u64,
        incarnation: u32,
    ) -> anyhow::Result<()> {
        use anyhow::Context as _;
        let log =
            fs::File::create(shared.logs.join(format!("bridge-{}-{incarnation}.log", self.index)))?;
        let mut child = Command::new(&shared.ctl)
            .arg("--session")
            .arg(&agent.session_file)
            .arg("mcp")
            .env_remove("TERMSPRAWL_SESSION_FILE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .context("cannot start termsprawlctl mcp")?;
        lock(&shared.bridges)[self.index].pid = child.id();
        let mut stdin = child.stdin.take().context("no stdin")?;
        let stdout = child.stdout.take().context("no stdout")?;
        let (lines, incoming) = mpsc::channel();
        let reader = thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let message = match serde_json::from_str::<Value>(&line) {
                    Ok(value) => Line::Answer(value),
                    Err(_) => Line::Garbage(line),
                };
                if lines.send(message).is_err() {
                    return;
                }
            }
            let _ = lines.send(Line::Closed);
        });

        // The handshake calls session_info: one attempt of that key.
        let initialize = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"soak","version":"0"}}}"#;
        lock(&shared.ledger).attempt(CallPath::Mcp, "session_info", &json!({}));
        writeln!(stdin, "{initialize}")?;
        let answer = match incoming.recv_timeout(CALL_TIMEOUT) {
            Ok(Line::Answer(answer)) => answer,
            Ok(Line::Garbage(line)) => anyhow::bail!("initialize answered {line:?}"),
            Ok(Line::Closed) | Err(_) => anyhow::bail!("no answer to initialize"),
        };
        let outcome = if answer.pointer("/result/serverInfo").is_some() {
            Outcome::Ok(Value::Null)
        } else {
            Outcome::Broken { kind: "initialize failed".to_owned(), detail: answer.to_string() }
        };
        lock(&shared.ledger).outcome(CallPath::Mcp, "session_info", &json!({}), &outcome, None);
        anyhow::ensure!(matches!(outcome, Outcome::Ok(_)), "initialize failed: {answer}");
        writeln!(stdin, r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#)?;

        let mut pending: HashMap<u64, (Plan, Instant)> = HashMap::new();
        let mut next_id = 1_u64;
        let mut pause_until = Instant::now();
        let mut closed = false;
        let mut drain_deadline = None;
        loop {
            let stopping = shared.stopping() || shared.generation() != generation;
            if stopping && drain_deadline.is_none() {
                drain_deadline = Some(Instant::now() + CALL_TIMEOUT);
            }
            while !stopping && pending.len() < BRIDGE_DEPTH && Instant::now() >= pause_until {
                let plan = plan(rng, shared, agent);
                let id = next_id;
                next_id += 1;
                let line = json!({
                    "jsonrpc": "2.0",
                    "id": id,
                    "method": "tools/call",
                    "params": {"name": plan.operation, "arguments": plan.args},
                });
                lock(&shared.ledger).attempt(CallPath::Mcp, plan.operation, &plan.args);
                writeln!(stdin, "{line}")?;
                pending.insert(id, (plan, Instant::now()));
            }
            if pending.is_empty() && stopping {
                break;
            }
            if closed {
                anyhow::bail!(
                    "the bridge closed its stdout with {} calls in flight",
                    pending.len()
                );
            }
            match incoming.recv_timeout(Duration::from_millis(100)) {
                Ok(Line::Answer(answer)) => {
                    let id = answer["id"].as_u64();
                    let Some((plan, sent)) = id.and_then(|id| pending.remove(&id)) else {
                        lock(&shared.ledger).fail("MCP answer to no call", &answer.to_string());
                        continue;
                    };
                    let outcome = classify_mcp(&answer);
                    shared.settle(CallPath::Mcp, &plan, &outcome, sent);
                    match outcome {
                        Outcome::Ok(_) => {
                            let mut bridges = lock(&shared.bridges);
                            let state = &mut bridges[self.index];
                            state.last_ok_sent =
                                Some(state.last_ok_sent.map_or(sent, |t| t.max(sent)));
                        }
                        Outcome::Unavailable(_) => {
                            pause_until = Instant::now()
                                + rng
                                    .between(Duration::from_millis(50), Duration::from_millis(250));
                        }
                        _ => {}
                    }
                }
                Ok(Line::Garbage(line)) => {
                    lock(&shared.ledger).fail("MCP line that is not JSON", &line);
                }
                Ok(Line::Closed) | Err(mpsc::RecvTimeoutError::Disconnected) => closed = true,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
            let now = Instant::now();
            let hung: Vec<u64> = pending
                .iter()
                .filter(|(_, (_, sent))| now.duration_since(*sent) > CALL_TIMEOUT)
                .map(|(id, _)| *id)
                .collect();
            for id in hung {
                if let Some((plan, sent)) = pending.remove(&id) {
                    let outcome = Outcome::Broken {
                        kind: "no answer within 60 s (MCP)".to_owned(),
                        detail: format!("bridge {} id {id}", self.index),
                    };
                    shared.settle(CallPath::Mcp, &plan, &outcome, sent);
                }
            }
            if drain_deadline.is_some_and(|deadline| now > deadline) {
                break;
            }
        }
        // At the end: rest, idle, until the end levels are taken.
        if shared.stopping() {
            lock(&shared.bridges)[self.index].drained = true;
            let rest = Instant::now() + CALL_TIMEOUT;
            while !shared.release.load(Ordering::Relaxed) && Instant::now() < rest {
                thread::sleep(Duration::from_millis(50));
            }
        }
        drop(stdin);
        let Some(status) = wait_child(&mut child, Duration::from_secs(10))? else {
            anyhow::bail!("the bridge did not exit within 10 s of the end of its input");
        };
        let _ = reader.join();
        anyhow::ensure!(status.success(), "the bridge exited with {status}");
        Ok(())
    }
}
