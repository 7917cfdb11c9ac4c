//! What the soak reads from `/proc`: memory, threads and open files of a process, and the
//! processes that still refer to the run's temporary directory.

use std::fs;
use std::path::Path;

/// One sample of a process.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sample {
    /// `VmRSS`, bytes.
    pub rss: u64,
    /// `VmHWM` (peak RSS so far), bytes.
    pub hwm: u64,
    /// `Threads`.
    pub threads: u64,
    /// Entries of `/proc/<pid>/fd`.
    pub fds: u64,
}

impl Sample {
    /// The member-wise maximum.
    #[must_use]
    pub fn max(self, other: Sample) -> Sample {
        Sample {
            rss: self.rss.max(other.rss),
            hwm: self.hwm.max(other.hwm),
            threads: self.threads.max(other.threads),
            fds: self.fds.max(other.fds),
        }
    }
}

/// `VmRSS`, `VmHWM` and `Threads` of a `/proc/<pid>/status` text (fds left at 0); `None` when
/// one is missing (a zombie has no memory lines).
pub fn parse_status(text: &str) -> Option<Sample> {
    let field = |name: &str| -> Option<u64> {
        let line = text.lines().find(|line| line.starts_with(name))?;
        let rest = line[name.len()..].trim_start_matches(':').trim();
        let number: u64 = rest.split_whitespace().next()?.parse().ok()?;
        Some(if rest.ends_with("kB") { number * 1024 } else { number })
    };
    Some(Sample { rss: field("VmRSS")?, hwm: field("VmHWM")?, threads: field("Threads")?, fds: 0 })
}

/// A sample of `pid`, `None` once it is gone.
pub fn sample(pid: u32) -> Option<Sample> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let mut sample = parse_status(&status)?;
    sample.fds = u64::try_from(fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count()).ok()?;
    Some(sample)
}

/// Processes other than this one whose command line, environment or working directory mentions
/// `dir`: `(pid, command line)`.
pub fn mentioning(dir: &Path) -> Vec<(u32, String)> {
    let needle = dir.to_string_lossy().into_owned();
    let own = std::process::id();
    let Ok(entries) = fs::read_dir("/proc") else { return Vec::new() };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|name| name.parse::<u32>().ok()) else {
            continue;
        };
        if pid == own {
            continue;
        }
        let read = |name: &str| fs::read(entry.path().join(name)).unwrap_or_default();
        let cmdline = read("cmdline");
        let environ = read("environ");
        let cwd = fs::read_link(entry.path().join("cwd")).unwrap_or_default();
        if refers_to(&cmdline, &needle)
            || refers_to(&environ, &needle)
            || cwd.to_string_lossy().starts_with(&needle)
        {
            let shown = String::from_utf8_lossy(&cmdline).replace('\0', " ").trim().to_owned();
            found.push((pid, shown));
        }
    }
    found
}

/// Whether NUL-separated `bytes` contain `needle`.
pub fn refers_to(bytes: &[u8], needle: &str) -> bool {
    !needle.is_empty() && bytes.windows(needle.len()).any(|window| window == needle.as_bytes())
}
