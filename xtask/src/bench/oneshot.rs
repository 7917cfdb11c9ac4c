//! Part 1: one-shot calls. Each program is started, makes one call and exits; its wall time
//! (spawn to reaped) and peak resident set size are taken per process.
//!
//! The peak RSS is `ru_maxrss` of the `rusage` that `wait4(2)` returns for exactly that child
//! (through the `wait4` crate, which wraps the system call safely). Programs are run round-robin,
//! one run of each per iteration with the starting program rotating, so that whatever else the
//! machine does hits every program alike.

use std::io::Read as _;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use wait4::Wait4 as _;

use super::command::Invocation;
use super::server::check_result_text;

/// A program under measurement.
#[derive(Debug, Clone)]
pub struct Subject {
    /// The name in the report.
    pub name: String,
    /// The command line of one call.
    pub invocation: Invocation,
}

/// One measured run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// From just before the spawn to the return of `wait4`.
    pub wall: Duration,
    /// `ru_maxrss` in bytes.
    pub peak_rss: u64,
}

/// Runs `invocation` once with stdin and stderr null, reads its whole stdout, reaps it with
/// `wait4`; it must exit 0 and print the canvas guide's tool result.
pub fn run_once(invocation: &Invocation) -> anyhow::Result<Sample> {
    let started = Instant::now();
    let mut child = invocation
        .command()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("cannot start {invocation}"))?;
    let mut stdout = Vec::with_capacity(16 * 1024);
    let read = child.stdout.take().expect("stdout is piped").read_to_end(&mut stdout);
    let usage = child.wait4().with_context(|| format!("cannot wait for {invocation}"))?;
    let wall = started.elapsed();
    read.with_context(|| format!("cannot read the output of {invocation}"))?;
    if !usage.status.success() {
        bail!("{invocation} failed: {}{}", usage.status, diagnose(invocation));
    }
    if let Err(reason) = check_result_text(&stdout) {
        bail!("{invocation}: {reason}{}", diagnose(invocation));
    }
    Ok(Sample { wall, peak_rss: usage.rusage.maxrss })
}

/// The stderr of one more run, to explain a failure.
fn diagnose(invocation: &Invocation) -> String {
    let Ok(output) = invocation.command().stdin(Stdio::null()).output() else {
        return String::new();
    };
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stderr = stderr.trim_end();
    if stderr.is_empty() { String::new() } else { format!("\nits stderr:\n{stderr}") }
}

/// `warmup` unmeasured and then `runs` measured iterations; in each, every subject runs once,
/// starting with subject `iteration % subjects.len()`. The samples of each subject, in subject
/// order. `progress` is told each finished measured iteration.
pub fn round_robin(
    subjects: &[Subject],
    warmup: usize,
    runs: usize,
    progress: &mut dyn FnMut(usize),
) -> anyhow::Result<Vec<Vec<Sample>>> {
    let mut samples = vec![Vec::with_capacity(runs); subjects.len()];
    for iteration in 0..warmup + runs {
        for offset in 0..subjects.len() {
            let index = (iteration + offset) % subjects.len();
            let sample = run_once(&subjects[index].invocation)?;
            if iteration >= warmup {
                samples[index].push(sample);
            }
        }
        if iteration >= warmup {
            progress(iteration - warmup + 1);
        }
    }
    Ok(samples)
}
