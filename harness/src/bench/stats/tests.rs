//! Percentiles by nearest rank, summaries, ratios and rates.

use std::time::Duration;

use super::{Summary, nanos, per_second, percentile, ratio};

#[test]
fn nearest_rank_answers_a_measured_sample() {
    let sorted: Vec<u64> = (1..=100).collect();
    assert_eq!(percentile(&sorted, 50), Some(50));
    assert_eq!(percentile(&sorted, 95), Some(95));
    assert_eq!(percentile(&sorted, 99), Some(99));
    assert_eq!(percentile(&sorted, 100), Some(100));
    assert_eq!(percentile(&sorted, 1), Some(1));

    // 20 samples: the 95th percentile is rank ceil(19.0) = 19, the 99th rank ceil(19.8) = 20.
    let twenty: Vec<u64> = (1..=20).map(|n| n * 10).collect();
    assert_eq!(percentile(&twenty, 95), Some(190));
    assert_eq!(percentile(&twenty, 99), Some(200));
}

#[test]
fn the_median_of_an_even_count_is_the_lower_middle() {
    assert_eq!(percentile(&[1, 2, 3, 4], 50), Some(2));
    assert_eq!(percentile(&[1, 2, 3], 50), Some(2));
    assert_eq!(percentile(&[7], 50), Some(7));
    assert_eq!(percentile(&[7], 99), Some(7));
}

#[test]
fn percentiles_of_nothing_or_out_of_range_are_none() {
    assert_eq!(percentile(&[], 50), None);
    assert_eq!(percentile(&[1, 2], 0), None);
    assert_eq!(percentile(&[1, 2], 101), None);
}

#[test]
fn a_summary_sorts_its_samples() {
    let summary = Summary::of(&[5, 1, 4, 2, 3]).unwrap();
    assert_eq!(summary, Summary { count: 5, min: 1, median: 3, p95: 5, p99: 5, max: 5 });
    assert_eq!(Summary::of(&[]), None);
}

#[test]
fn durations_are_summarised_in_nanoseconds() {
    let samples = [Duration::from_micros(3), Duration::from_micros(1), Duration::from_micros(2)];
    let summary = Summary::of_durations(&samples).unwrap();
    assert_eq!((summary.min, summary.median, summary.max), (1_000, 2_000, 3_000));
    assert_eq!(nanos(Duration::MAX), u64::MAX);
}

#[test]
fn ratios_and_rates_refuse_zero() {
    assert_eq!(ratio(3, 2), Some(1.5));
    assert_eq!(ratio(3, 0), None);
    assert_eq!(per_second(500, Duration::from_millis(250)), Some(2000.0));
    assert_eq!(per_second(500, Duration::ZERO), None);
}
