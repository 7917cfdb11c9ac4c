//! Peak resident set size of one process, taken by running it under GNU time (`time -f %M`).
//!
//! Why not `wait4(2)` in the xtask itself: Linux carries a process's peak RSS across `exec`, and
//! a child made by `fork` or `vfork` starts from its parent's memory, so `ru_maxrss` of a child
//! of the xtask (or of any spawner) is never below the spawner's own peak (`exec_mmap` records the
//! old address space's high-water mark). A child of the xtask, whose peak is several MiB, would
//! report that for every program. GNU time is a small C program, well under 1 MiB resident,
//! which spawns the command and reports its `wait4` `ru_maxrss`: the smallest spawner at hand,
//! and one everyone can inspect.
//!
//! Wall time is never taken under GNU time: the bench times direct children of its own.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Context as _;

use super::command::Invocation;

/// The program name of GNU time, looked up in `PATH` (normally `/usr/bin/time`).
pub const GNU_TIME: &str = "time";

/// GNU time, with the file it writes the peak RSS to.
#[derive(Debug, Clone)]
pub struct PeakRss {
    program: OsString,
    output: PathBuf,
}

impl PeakRss {
    /// GNU time, when `time --version` runs and says it is GNU time; it will write to
    /// `output`.
    pub fn find(output: &Path) -> Option<PeakRss> {
        let version = Command::new(GNU_TIME)
            .arg("--version")
            .stdin(Stdio::null())
            .output()
            .ok()
            .filter(|version| version.status.success())?;
        let said = [version.stdout, version.stderr].concat();
        String::from_utf8_lossy(&said)
            .contains("GNU")
            .then(|| PeakRss { program: OsString::from(GNU_TIME), output: output.to_path_buf() })
    }

    /// `time -f %M -o OUTPUT <invocation>`: the same program, standard streams and exit status.
    pub fn wrap(&self, invocation: &Invocation) -> Invocation {
        Invocation::new(&self.program)
            .args(["-f", "%M", "-o"])
            .arg(&self.output)
            .arg(&invocation.program)
            .args(&invocation.args)
    }

    /// The peak RSS in bytes of the last wrapped run, from the output file.
    pub fn read(&self) -> anyhow::Result<u64> {
        let text = fs::read_to_string(&self.output)
            .with_context(|| format!("cannot read {}", self.output.display()))?;
        parse(&text).with_context(|| format!("GNU time wrote no peak RSS: {:?}", text.trim()))
    }
}

/// The peak RSS in bytes from what `time -f %M` wrote: the kilobytes on the last line (a line
/// about a non-zero exit status may come first).
pub fn parse(text: &str) -> Option<u64> {
    let kilobytes: u64 =
        text.lines().rev().find(|line| !line.trim().is_empty())?.trim().parse().ok()?;
    kilobytes.checked_mul(1024)
}

#[cfg(test)]
mod tests;
