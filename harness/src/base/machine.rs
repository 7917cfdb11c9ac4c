//! The description of the machine a report was measured on: CPU model, cores, memory, operating
//! system, kernel, the tool versions and how busy the machine was (its load average).
//!
//! Everything is read from `/proc`, `/etc/os-release` and version outputs; what cannot be read
//! is `unknown`. The parsers are pure functions of the file text.

use std::ffi::OsStr;
use std::fs;

use termsprawl_test_support::first_line_of;

/// What a report says about the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    /// The CPU model name.
    pub cpu: String,
    /// Logical CPUs online, as `/proc/cpuinfo` lists them.
    pub cores: usize,
    /// Logical CPUs this process may run on.
    pub available_cores: usize,
    /// Total memory in bytes; 0 when unknown.
    pub memory_bytes: u64,
    /// The operating system's pretty name.
    pub os: String,
    /// Kernel name and release.
    pub kernel: String,
    /// `rustc --version`.
    pub rustc: String,
    /// The first two words of `curl --version` (`curl 7.88.1`), when curl is installed.
    pub curl: Option<String>,
    /// `tmux -V` (`tmux 3.3a`), when tmux is installed.
    pub tmux: Option<String>,
    /// The 1, 5 and 15 minute load averages of `/proc/loadavg` (`1.02 0.80 0.45`).
    pub load: Option<String>,
}

/// The name written for anything that could not be read.
pub const UNKNOWN: &str = "unknown";

impl Machine {
    /// Describes this machine; `rustc` is the compiler whose version is reported.
    pub fn describe(rustc: &OsStr) -> Machine {
        let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let meminfo = fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let os_release = fs::read_to_string("/etc/os-release").unwrap_or_default();
        let read = |path: &str| fs::read_to_string(path).map(|text| text.trim().to_owned()).ok();
        let kernel = match (read("/proc/sys/kernel/ostype"), read("/proc/sys/kernel/osrelease")) {
            (Some(name), Some(release)) => format!("{name} {release}"),
            _ => UNKNOWN.to_owned(),
        };
        Machine {
            cpu: cpu_model(&cpuinfo).unwrap_or_else(|| UNKNOWN.to_owned()),
            cores: logical_cpus(&cpuinfo),
            available_cores: std::thread::available_parallelism().map_or(0, usize::from),
            memory_bytes: memory_total(&meminfo).unwrap_or(0),
            os: os_name(&os_release).unwrap_or_else(|| UNKNOWN.to_owned()),
            kernel,
            rustc: first_line_of(rustc, &["--version"]).unwrap_or_else(|| UNKNOWN.to_owned()),
            curl: first_line_of("curl".as_ref(), &["--version"]).map(|line| first_words(&line, 2)),
            tmux: first_line_of("tmux".as_ref(), &["-V"]),
            load: fs::read_to_string("/proc/loadavg").ok().as_deref().and_then(load_average),
        }
    }
}

impl Machine {
    /// A note for the report when the machine was busy: its 1-minute load average above the
    /// logical CPUs, so that other work shared every CPU with the bench.
    pub fn busy_note(&self) -> Option<String> {
        let load = self.load.as_deref()?;
        let one_minute: f64 = load.split_whitespace().next()?.parse().ok()?;
        #[expect(clippy::cast_precision_loss, reason = "a CPU count")]
        let cores = self.cores.max(1) as f64;
        (one_minute > cores).then(|| {
            format!(
                "the machine was shared and busy (load average {load} on {} logical CPUs): \
                 other work competed with every measurement, so the times are longer and more \
                 spread than on an idle machine; the ratios of a run share that noise",
                self.cores
            )
        })
    }
}

/// The first `model name` (x86) or `Model` / `CPU part` line of `/proc/cpuinfo`.
pub fn cpu_model(cpuinfo: &str) -> Option<String> {
    let field = |wanted: &str| {
        cpuinfo.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            (key.trim() == wanted && !value.trim().is_empty()).then(|| value.trim().to_owned())
        })
    };
    field("model name").or_else(|| field("Model")).or_else(|| field("CPU part"))
}

/// The number of `processor` entries of `/proc/cpuinfo`.
pub fn logical_cpus(cpuinfo: &str) -> usize {
    cpuinfo
        .lines()
        .filter(|line| line.split_once(':').is_some_and(|(key, _)| key.trim() == "processor"))
        .count()
}

/// `MemTotal` of `/proc/meminfo`, in bytes.
pub fn memory_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|line| line.starts_with("MemTotal:"))?;
    let mut fields = line["MemTotal:".len()..].split_whitespace();
    let amount: u64 = fields.next()?.parse().ok()?;
    match fields.next() {
        Some("kB") => amount.checked_mul(1024),
        None => Some(amount),
        Some(_) => None,
    }
}

/// `PRETTY_NAME` of `/etc/os-release`, unquoted.
pub fn os_name(os_release: &str) -> Option<String> {
    let value = os_release.lines().find_map(|line| line.strip_prefix("PRETTY_NAME="))?;
    let value = value.trim();
    let unquoted = value
        .strip_prefix('"')
        .and_then(|inner| inner.strip_suffix('"'))
        .or_else(|| value.strip_prefix('\'').and_then(|inner| inner.strip_suffix('\'')))
        .unwrap_or(value);
    (!unquoted.is_empty()).then(|| unquoted.to_owned())
}

/// The three load averages of `/proc/loadavg`, space-separated; `None` unless all three are
/// numbers.
pub fn load_average(loadavg: &str) -> Option<String> {
    let fields: Vec<&str> = loadavg.split_whitespace().take(3).collect();
    let numbers = fields.len() == 3 && fields.iter().all(|field| field.parse::<f64>().is_ok());
    numbers.then(|| fields.join(" "))
}

/// The first `count` words of `line`, separated by one space.
pub fn first_words(line: &str, count: usize) -> String {
    line.split_whitespace().take(count).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests;
