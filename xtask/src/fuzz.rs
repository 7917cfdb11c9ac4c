//! `cargo xtask fuzz`: builds the cargo-fuzz targets of `fuzz/` and runs each for a while.
//!
//! The fuzz crate is a cargo workspace of its own with its own target folder (`fuzz/target`), so
//! nothing here touches the main build. libFuzzer needs nightly-only compiler flags; the stable
//! toolchain accepts them with `RUSTC_BOOTSTRAP=1`, which is set for the child processes of this
//! command only. Targets are built without a sanitizer by default (`-s none`): the code under test
//! has no `unsafe`, the properties are checked by assertions in the targets, memory is measured by
//! the MCP target itself and bounded by `-rss_limit_mb`, and the fuzzer runs two to three times
//! faster; `--sanitizer address` is there for a run over the dependencies' `unsafe` code.
//!
//! Each target runs in-process on one core with the committed seeds (`fuzz/corpus/<target>/`,
//! read only) and a working corpus (`fuzz/target/corpus/<target>/`, where new inputs go), its
//! dictionary, `-timeout` for hangs, and its log in `fuzz/target/logs/<target>.log`. A crash stops
//! that target; its input is in `fuzz/artifacts/<target>/`. The report gives executions, time and
//! corpus size per target.

#[cfg(test)]
mod tests;

use std::ffi::OsString;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context as _, bail};

/// The fuzz targets, in the order they run, each with the dictionary file it uses (in `fuzz/dict/`).
pub const TARGETS: &[(&str, &str)] = &[
    ("endpoint_url", "endpoint.dict"),
    ("discovery_files", "json.dict"),
    ("protocol_validate", "json.dict"),
    ("mcp_bridge", "json.dict"),
    ("cli_direct", "cli.dict"),
];

/// Seconds per target when `--time` is not given.
pub const DEFAULT_SECONDS: u64 = 10;

/// A run over an input longer than this is a hang (libFuzzer's `-timeout`, in seconds).
pub const TIMEOUT_SECONDS: u64 = 10;

/// libFuzzer's `-rss_limit_mb`.
pub const RSS_LIMIT_MB: u64 = 2048;

/// The sanitizers `--sanitizer` accepts, as cargo-fuzz spells them.
pub const SANITIZERS: &[&str] = &["none", "address"];

/// What one target's run gave.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The target.
    pub target: String,
    /// Wall-clock seconds of the run.
    pub seconds: f64,
    /// Inputs executed, as libFuzzer's final statistics count them.
    pub executions: Option<u64>,
    /// Inputs in the working corpus after the run (seeds not counted).
    pub corpus: usize,
    /// The crashing input, when the run found one.
    pub crash: Option<PathBuf>,
    /// Whether the run ended successfully.
    pub passed: bool,
}

/// The settings of one `cargo xtask fuzz`.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Seconds per target.
    pub seconds: u64,
    /// The targets to run, in [`TARGETS`] order; all when empty.
    pub targets: Vec<String>,
    /// `none` or `address`.
    pub sanitizer: String,
}

/// The targets to run: `requested` checked against [`TARGETS`], or all of them.
pub fn select(requested: &[String]) -> anyhow::Result<Vec<&'static str>> {
    if let Some(unknown) =
        requested.iter().find(|name| !TARGETS.iter().any(|(target, _)| target == name))
    {
        let known: Vec<&str> = TARGETS.iter().map(|(target, _)| *target).collect();
        bail!("unknown fuzz target {unknown}; the targets are {}", known.join(", "));
    }
    Ok(TARGETS
        .iter()
        .map(|(target, _)| *target)
        .filter(|target| requested.is_empty() || requested.iter().any(|name| name == target))
        .collect())
}

/// Builds and runs the targets; `Ok(false)` when one crashed or failed.
pub fn run(root: &Path, settings: &Settings) -> anyhow::Result<bool> {
    let targets = select(&settings.targets)?;
    if !SANITIZERS.contains(&settings.sanitizer.as_str()) {
        bail!("unknown sanitizer {}; use none or address", settings.sanitizer);
    }
    check_cargo_fuzz()?;
    let fuzz_dir = root.join("fuzz");
    let started = Instant::now();
    let mut build = cargo_fuzz(root, &["build", "-s", &settings.sanitizer]);
    eprintln!("building the fuzz targets");
    let status = build.status().context("cannot run cargo fuzz build")?;
    if !status.success() {
        bail!("cargo fuzz build failed ({status})");
    }
    eprintln!("built in {:.0} s", started.elapsed().as_secs_f64());

    let mut outcomes = Vec::new();
    for target in targets {
        eprintln!("fuzzing {target} for {} s", settings.seconds);
        let outcome = run_target(root, &fuzz_dir, target, settings)?;
        if !outcome.passed {
            let log = fuzz_dir.join("target/logs").join(format!("{target}.log"));
            eprint!("{}", failure_excerpt(&fs::read_to_string(&log).unwrap_or_default()));
            eprintln!("the whole log: {}", log.display());
        }
        outcomes.push(outcome);
    }
    print!("{}", report(&outcomes));
    eprintln!("total {:.0} s", started.elapsed().as_secs_f64());
    let passed = outcomes.iter().filter(|outcome| outcome.passed).count();
    // The plain closing line that CI logs are read for.
    println!("fuzz: {passed} passed, {} failed", outcomes.len() - passed);
    Ok(outcomes.iter().all(|outcome| outcome.passed))
}

fn check_cargo_fuzz() -> anyhow::Result<()> {
    let found = Command::new(cargo())
        .args(["fuzz", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !found {
        bail!("cargo-fuzz is not installed; install it with `cargo install cargo-fuzz --locked`");
    }
    Ok(())
}

fn cargo() -> OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"))
}

/// `cargo fuzz <args>` for the fuzz workspace, with its own target folder and `RUSTC_BOOTSTRAP=1`.
fn cargo_fuzz(root: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(cargo());
    command
        .current_dir(root)
        .arg("fuzz")
        .args(args)
        .arg("--fuzz-dir")
        .arg(root.join("fuzz"))
        .arg("--target-dir")
        .arg(root.join("fuzz/target"))
        .env("RUSTC_BOOTSTRAP", "1")
        .env_remove("CARGO_TARGET_DIR");
    command
}

fn run_target(
    root: &Path,
    fuzz_dir: &Path,
    target: &str,
    settings: &Settings,
) -> anyhow::Result<Outcome> {
    let dict = TARGETS.iter().find(|(name, _)| *name == target).map(|(_, dict)| *dict);
    let work = fuzz_dir.join("target/corpus").join(target);
    let seeds = fuzz_dir.join("corpus").join(target);
    let artifacts = fuzz_dir.join("artifacts").join(target);
    let logs = fuzz_dir.join("target/logs");
    for dir in [&work, &seeds, &artifacts, &logs] {
        fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let log_path = logs.join(format!("{target}.log"));
    let log = fs::File::create(&log_path)
        .with_context(|| format!("cannot create {}", log_path.display()))?;
    let mut libfuzzer = vec![
        format!("-max_total_time={}", settings.seconds),
        format!("-timeout={TIMEOUT_SECONDS}"),
        format!("-rss_limit_mb={RSS_LIMIT_MB}"),
        format!("-artifact_prefix={}/", artifacts.display()),
        "-print_final_stats=1".to_owned(),
    ];
    if let Some(dict) = dict {
        let dict = fuzz_dir.join("dict").join(dict);
        if dict.is_file() {
            libfuzzer.push(format!("-dict={}", dict.display()));
        }
    }
    let mut command = cargo_fuzz(root, &["run", "-s", &settings.sanitizer, target]);
    command.arg(&work).arg(&seeds).arg("--").args(&libfuzzer);
    let started = Instant::now();
    let status = command
        .stdout(log.try_clone()?)
        .stderr(log)
        .status()
        .with_context(|| format!("cannot run cargo fuzz run {target}"))?;
    let seconds = started.elapsed().as_secs_f64();
    let text = fs::read_to_string(&log_path).unwrap_or_default();
    let corpus = fs::read_dir(&work).map_or(0, Iterator::count);
    Ok(Outcome {
        target: target.to_owned(),
        seconds,
        executions: executions(&text),
        corpus,
        crash: crash_artifact(&text),
        passed: status.success(),
    })
}

/// The executions libFuzzer reports at the end of a log: `stat::number_of_executed_units`, or
/// else the count of the last `Done N runs` or `#N` status line.
pub fn executions(log: &str) -> Option<u64> {
    let stat = log
        .lines()
        .rev()
        .find_map(|line| line.strip_prefix("stat::number_of_executed_units:")?.trim().parse().ok());
    stat.or_else(|| {
        log.lines().rev().find_map(|line| {
            if let Some(rest) = line.strip_prefix("Done ") {
                return rest.split_whitespace().next()?.parse().ok();
            }
            line.strip_prefix('#')?.split_whitespace().next()?.parse().ok()
        })
    })
}

/// The file libFuzzer wrote a crashing input to, from its `Test unit written to <path>` line.
pub fn crash_artifact(log: &str) -> Option<PathBuf> {
    log.lines().rev().find_map(|line| {
        let (_, path) = line.split_once("Test unit written to ")?;
        Some(PathBuf::from(path.trim()))
    })
}

/// The lines of a failed run's log worth showing: from the first panic or libFuzzer error on.
pub fn failure_excerpt(log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    let start = lines
        .iter()
        .position(|line| {
            line.contains("panicked at")
                || line.contains("ERROR: libFuzzer")
                || line.contains("==ERROR")
        })
        .unwrap_or(lines.len().saturating_sub(20));
    let mut excerpt = String::new();
    for line in lines.iter().skip(start).filter(|line| !line.starts_with("  ")).take(40) {
        excerpt.push_str(line);
        excerpt.push('\n');
    }
    excerpt
}

/// The table printed at the end.
pub fn report(outcomes: &[Outcome]) -> String {
    let mut text = String::from(
        "| target | seconds | executions | executions/s | corpus | result |\n| --- | ---: | ---: | ---: | ---: | --- |\n",
    );
    for outcome in outcomes {
        let executions =
            outcome.executions.map_or_else(|| "?".to_owned(), |count| count.to_string());
        #[expect(clippy::cast_precision_loss, reason = "a rate for people to read")]
        let rate = match outcome.executions {
            Some(count) if outcome.seconds > 0.0 => {
                format!("{:.0}", count as f64 / outcome.seconds)
            }
            _ => "?".to_owned(),
        };
        let result = match (&outcome.crash, outcome.passed) {
            (_, true) => "ok".to_owned(),
            (Some(crash), false) => format!("crash: {}", crash.display()),
            (None, false) => "failed (see log)".to_owned(),
        };
        let _ = writeln!(
            text,
            "| {} | {:.0} | {executions} | {rate} | {} | {result} |",
            outcome.target, outcome.seconds, outcome.corpus
        );
    }
    text
}
