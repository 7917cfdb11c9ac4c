//! Part 2: the MCP bridge (`termsprawlctl mcp`) as a host drives it: `initialize`, then many
//! `tools/call`s of `guide_read`, with one request in flight or with a window of several.
//!
//! The driver is a plain blocking loop: it writes a request line whenever a slot of the window is
//! free and reads response lines, matching them by id. The bridge runs under GNU time when there
//! is one ([`PeakRss`]), which reports its peak RSS when it exits at the end of its input.

use std::collections::HashMap;
use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{ChildStdin, ChildStdout, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use serde_json::Value;

use super::command::Invocation;
use super::rss::PeakRss;
use super::server::{ARGUMENTS, OPERATION, check_result_text};
use super::stats::nanos;

/// The window of the concurrent MCP run.
pub const IN_FLIGHT: usize = 32;

/// What one bridge run measured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The window: requests in flight at once.
    pub in_flight: usize,
    /// Measured calls (warm-up calls excluded).
    pub calls: usize,
    /// From the first measured request written to the last response read.
    pub elapsed: Duration,
    /// Request written to response read, per measured call, in nanoseconds.
    pub latencies_ns: Vec<u64>,
    /// The bridge process's peak RSS in bytes, when there is GNU time.
    pub peak_rss: Option<u64>,
}

/// Starts `invocation` (a bridge on stdin and stdout), initialises it, makes `warmup` calls one
/// at a time and then `calls` measured calls with up to `in_flight` outstanding, closes its input
/// and reaps it. Every call must answer the canvas guide without `isError`. With `rss` the bridge
/// runs under GNU time.
pub fn drive(
    invocation: &Invocation,
    rss: Option<&PeakRss>,
    warmup: usize,
    calls: usize,
    in_flight: usize,
) -> anyhow::Result<Outcome> {
    let spawned = rss.map_or_else(|| invocation.clone(), |rss| rss.wrap(invocation));
    let mut child = spawned
        .command()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("cannot start {invocation}"))?;
    let mut host = Host {
        input: child.stdin.take().expect("stdin is piped"),
        output: BufReader::with_capacity(256 * 1024, child.stdout.take().expect("stdout is piped")),
        line: String::new(),
    };
    let driven = host.session(warmup, calls, in_flight.max(1));
    drop(host);
    let status = child.wait().with_context(|| format!("cannot wait for {invocation}"))?;
    let (elapsed, latencies_ns) = driven.with_context(|| format!("driving {invocation}"))?;
    if !status.success() {
        bail!("{invocation} failed: {status}");
    }
    let peak_rss = rss.map(PeakRss::read).transpose()?;
    Ok(Outcome { in_flight, calls, elapsed, latencies_ns, peak_rss })
}

/// The host's ends of the bridge's pipes.
struct Host {
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    line: String,
}

impl Host {
    fn session(
        &mut self,
        warmup: usize,
        calls: usize,
        in_flight: usize,
    ) -> anyhow::Result<(Duration, Vec<u64>)> {
        self.send(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"cargo-xtask-bench","version":"0"}}}"#,
        )?;
        let answer = self.receive()?;
        if answer.get("id") != Some(&Value::from(0)) || answer.get("result").is_none() {
            bail!("initialize was answered {}", excerpt(&answer.to_string()));
        }
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)?;

        let mut id = 0_u64;
        for _ in 0..warmup {
            id += 1;
            self.send(&call_line(id))?;
            let answer = self.receive()?;
            check_answer(&answer, id)?;
        }

        let mut pending: HashMap<u64, Instant> = HashMap::with_capacity(in_flight);
        let mut latencies = Vec::with_capacity(calls);
        let mut sent = 0;
        let started = Instant::now();
        while latencies.len() < calls {
            while sent < calls && pending.len() < in_flight {
                id += 1;
                sent += 1;
                pending.insert(id, Instant::now());
                self.send(&call_line(id))?;
            }
            let answer = self.receive()?;
            let answered = answer.get("id").and_then(Value::as_u64);
            let Some(since) = answered.and_then(|answered| pending.remove(&answered)) else {
                bail!("an answer to no pending call: {}", excerpt(&answer.to_string()));
            };
            latencies.push(nanos(since.elapsed()));
            check_answer(&answer, answered.unwrap_or_default())?;
        }
        Ok((started.elapsed(), latencies))
    }

    fn send(&mut self, line: &str) -> anyhow::Result<()> {
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        self.input.write_all(&bytes).context("the bridge stopped reading")
    }

    fn receive(&mut self) -> anyhow::Result<Value> {
        self.line.clear();
        let read = self.output.read_line(&mut self.line).context("cannot read from the bridge")?;
        if read == 0 {
            bail!("the bridge closed its output");
        }
        serde_json::from_str(&self.line).with_context(|| {
            format!("the bridge wrote a line that is not JSON: {}", excerpt(&self.line))
        })
    }
}

/// The `tools/call` request line with `id`.
pub fn call_line(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{OPERATION}","arguments":{ARGUMENTS}}}}}"#
    )
}

/// An answer to call `id` must be a result without `isError` whose one text block is the tool
/// result of the canvas guide.
pub fn check_answer(answer: &Value, id: u64) -> anyhow::Result<()> {
    let result = answer.get("result");
    let is_error = result.and_then(|result| result.get("isError")).and_then(Value::as_bool);
    let text = result
        .and_then(|result| result.get("content"))
        .and_then(|content| content.get(0))
        .and_then(|block| block.get("text"))
        .and_then(Value::as_str);
    let checked = match (answer.get("id").and_then(Value::as_u64), is_error, text) {
        (Some(answered), Some(false), Some(text)) if answered == id => {
            check_result_text(text.as_bytes())
        }
        _ => Err("not a successful tools/call result".to_owned()),
    };
    checked
        .map_err(|reason| anyhow::anyhow!("call {id}: {reason}: {}", excerpt(&answer.to_string())))
}

/// At most 300 characters of `text`, for error messages.
fn excerpt(text: &str) -> String {
    let text = text.trim_end();
    match text.char_indices().nth(300) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests;
