//! Part 1: one-shot calls. Each program is started, makes one call and exits.
//!
//! Wall time is taken on direct children of the bench, from just before the spawn to the return
//! of `wait`. Peak RSS is taken in separate runs under GNU time ([`PeakRss`], which explains
//! why). Programs run round-robin, one run of each per iteration with the starting program
//! rotating, so that whatever else the machine does hits every program alike.

use std::io::Read as _;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};

use super::command::Invocation;
use super::rss::PeakRss;
use super::server::check_result_text;

/// How many iterations also take a peak-RSS run of every program: the peak of a deterministic
/// program hardly varies, and slow programs (`--vs`) should not pay twice for all runs.
pub const RSS_RUNS: usize = 50;

/// A program under measurement.
#[derive(Debug, Clone)]
pub struct Subject {
    /// The name in the report.
    pub name: String,
    /// The command line of one call.
    pub invocation: Invocation,
}

/// What was measured of one subject.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Measured {
    /// Wall time per timed run.
    pub walls: Vec<Duration>,
    /// Peak RSS in bytes per RSS run.
    pub peak_rss: Vec<u64>,
}

/// Runs `invocation` once with stdin and stderr null and reads its whole stdout; it must exit 0
/// and print the canvas guide's tool result. The wall time from spawn to reaped.
pub fn run_once(invocation: &Invocation) -> anyhow::Result<Duration> {
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
    let status = child.wait().with_context(|| format!("cannot wait for {invocation}"))?;
    let wall = started.elapsed();
    read.with_context(|| format!("cannot read the output of {invocation}"))?;
    if !status.success() {
        bail!("{invocation} failed: {status}{}", diagnose(invocation));
    }
    if let Err(reason) = check_result_text(&stdout) {
        bail!("{invocation}: {reason}{}", diagnose(invocation));
    }
    Ok(wall)
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
/// starting with subject `iteration % subjects.len()`, and in the first [`RSS_RUNS`] measured
/// iterations every subject then runs once more under `rss` (when there is GNU time). What was
/// measured of each subject, in subject order. `progress` is told each finished iteration.
pub fn round_robin(
    subjects: &[Subject],
    rss: Option<&PeakRss>,
    warmup: usize,
    runs: usize,
    progress: &mut dyn FnMut(usize),
) -> anyhow::Result<Vec<Measured>> {
    let mut measured = vec![Measured::default(); subjects.len()];
    for iteration in 0..warmup + runs {
        let rotated = (0..subjects.len()).map(|offset| (iteration + offset) % subjects.len());
        for index in rotated.clone() {
            let wall = run_once(&subjects[index].invocation)?;
            if iteration >= warmup {
                measured[index].walls.push(wall);
            }
        }
        let Some(measured_iteration) = iteration.checked_sub(warmup) else { continue };
        if let Some(rss) = rss.filter(|_| measured_iteration < RSS_RUNS) {
            for index in rotated {
                run_once(&rss.wrap(&subjects[index].invocation))?;
                measured[index].peak_rss.push(rss.read()?);
            }
        }
        progress(measured_iteration + 1);
    }
    Ok(measured)
}
