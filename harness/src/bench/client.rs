//! Part 3: the cost of one call through [`termsprawl_transport::Client`] inside a process that is
//! already running, from one task and from many.
//!
//! [`run`] is the measuring side (`bench-support client`, built in release); it prints one JSON
//! line, [`Outcome`]. [`measure`] is the xtask side that starts it and reads that line.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use serde::{Deserialize, Serialize};
use termsprawl_protocol::ToolRequest;
use termsprawl_transport::Client;

use super::server::{ARGUMENTS, OPERATION, check_result};
use super::stats::nanos;

/// What one client run measured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    /// Concurrent tasks.
    pub tasks: usize,
    /// Measured calls (warm-up calls excluded).
    pub calls: usize,
    /// From the first measured call's start to the last one's end, in nanoseconds.
    pub elapsed_ns: u64,
    /// The latency of each measured call, in nanoseconds, in completion order.
    pub latencies_ns: Vec<u64>,
}

impl Outcome {
    /// The elapsed time.
    pub fn elapsed(&self) -> Duration {
        Duration::from_nanos(self.elapsed_ns)
    }
}

/// Makes `warmup` calls from one task, then `calls` calls shared by `tasks` tasks, on a
/// multi-threaded runtime; every result must be the canvas guide.
pub fn run(session: &Path, tasks: usize, calls: usize, warmup: usize) -> anyhow::Result<Outcome> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the runtime")?;
    let request = ToolRequest::with_raw_args(Some(OPERATION.to_owned()), ARGUMENTS.to_owned())
        .expect("the arguments are JSON");
    let client = Client::default();
    runtime.block_on(async {
        for _ in 0..warmup {
            check_result(&client.call(session, &request).await)
                .map_err(|reason| anyhow::anyhow!("warm-up call: {reason}"))?;
        }
        let next = Arc::new(AtomicUsize::new(0));
        let started = Instant::now();
        let mut handles = Vec::with_capacity(tasks);
        for _ in 0..tasks.max(1) {
            let (client, request, next) = (client.clone(), request.clone(), Arc::clone(&next));
            let session = session.to_path_buf();
            handles.push(tokio::spawn(async move {
                let mut latencies = Vec::new();
                while next.fetch_add(1, Ordering::Relaxed) < calls {
                    let start = Instant::now();
                    let result = client.call(&session, &request).await;
                    latencies.push(nanos(start.elapsed()));
                    check_result(&result)?;
                }
                Ok::<_, String>(latencies)
            }));
        }
        let mut latencies_ns = Vec::with_capacity(calls);
        for handle in handles {
            let task = handle.await.context("a client task panicked")?;
            latencies_ns.extend(task.map_err(|reason| anyhow::anyhow!("{reason}"))?);
        }
        let elapsed_ns = nanos(started.elapsed());
        Ok(Outcome { tasks, calls, elapsed_ns, latencies_ns })
    })
}

/// Runs `helper client` for `session` and reads its [`Outcome`].
pub fn measure(
    helper: &Path,
    session: &Path,
    tasks: usize,
    calls: usize,
    warmup: usize,
) -> anyhow::Result<Outcome> {
    let output = Command::new(helper)
        .arg("client")
        .arg("--session")
        .arg(session)
        .args(["--tasks", &tasks.to_string(), "--calls", &calls.to_string()])
        .args(["--warmup", &warmup.to_string()])
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("cannot start {}", helper.display()))?;
    if !output.status.success() {
        bail!("the in-process client run failed: {}", output.status);
    }
    let outcome: Outcome = serde_json::from_slice(&output.stdout)
        .context("the in-process client run printed no outcome")?;
    if outcome.latencies_ns.len() != calls {
        bail!("the in-process client run made {} calls, not {calls}", outcome.latencies_ns.len());
    }
    Ok(outcome)
}

/// `bench-support client`: [`run`], then its [`Outcome`] as one JSON line on stdout.
pub fn run_and_print(
    session: &Path,
    tasks: usize,
    calls: usize,
    warmup: usize,
) -> anyhow::Result<()> {
    let outcome = run(session, tasks, calls, warmup)?;
    println!("{}", serde_json::to_string(&outcome).expect("an outcome always serialises"));
    Ok(())
}
