//! Order statistics of measured samples: nearest-rank percentiles, ratios and rates.
//!
//! Samples are plain `u64`s (nanoseconds of wall time, bytes of peak RSS), so one summary type
//! serves every table of the report.

use std::time::Duration;

/// The order statistics of one set of samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// How many samples there were.
    pub count: usize,
    /// The smallest sample.
    pub min: u64,
    /// The 50th percentile.
    pub median: u64,
    /// The 95th percentile.
    pub p95: u64,
    /// The 99th percentile.
    pub p99: u64,
    /// The largest sample.
    pub max: u64,
}

impl Summary {
    /// The summary of `samples` (in any order); `None` when there are none.
    pub fn of(samples: &[u64]) -> Option<Summary> {
        let mut sorted = samples.to_vec();
        sorted.sort_unstable();
        Some(Summary {
            count: sorted.len(),
            min: *sorted.first()?,
            median: percentile(&sorted, 50)?,
            p95: percentile(&sorted, 95)?,
            p99: percentile(&sorted, 99)?,
            max: *sorted.last()?,
        })
    }

    /// The summary of durations, in nanoseconds (saturating at `u64::MAX`).
    pub fn of_durations(samples: &[Duration]) -> Option<Summary> {
        let nanos: Vec<u64> = samples.iter().map(|sample| nanos(*sample)).collect();
        Summary::of(&nanos)
    }
}

/// The `p`th percentile (`0 < p <= 100`) of `sorted` (ascending) by the nearest-rank method: the
/// smallest sample such that at least `p`% of the samples are at or below it. `None` when
/// `sorted` is empty or `p` is out of range.
///
/// Nearest rank always answers a sample that was measured; the median of an even count is the
/// lower of the two middle samples.
pub fn percentile(sorted: &[u64], p: u32) -> Option<u64> {
    if sorted.is_empty() || p == 0 || p > 100 {
        return None;
    }
    // rank = ceil(p * n / 100), 1-based; exact in integers.
    let n = sorted.len();
    let rank = (n * p as usize).div_ceil(100);
    sorted.get(rank.max(1) - 1).copied()
}

/// `numerator / denominator`; `None` when the denominator is zero.
#[expect(clippy::cast_precision_loss, reason = "measured values are far below 2^52")]
pub fn ratio(numerator: u64, denominator: u64) -> Option<f64> {
    (denominator != 0).then(|| numerator as f64 / denominator as f64)
}

/// `count` events in `elapsed`, per second; `None` when no time elapsed.
#[expect(clippy::cast_precision_loss, reason = "counts are far below 2^52")]
pub fn per_second(count: usize, elapsed: Duration) -> Option<f64> {
    let seconds = elapsed.as_secs_f64();
    (seconds > 0.0).then(|| count as f64 / seconds)
}

/// A duration in nanoseconds, saturating.
pub fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests;
