//! `cargo xtask bench`: measured speed and memory of `termsprawlctl` against the physical floor of
//! its task and against curl, as ratios taken in one run (`docs/performance.md`).
//!
//! [`run`] builds the release binaries, compiles the floor program ([`floor`]) and hands over to
//! [`measure`], which starts the tool server ([`server`]) and takes the first three parts in
//! turn: one-shot calls ([`oneshot`]), the MCP bridge ([`mcp`]) and the in-process client
//! ([`client`]); part 4 ([`terminals`]) runs the real `termsprawl-headless` server over tmux for
//! `terminal_wait` and `terminal_read`. The figures go into a [`report::Report`], which renders
//! the tables and the document and decides `--check`. Nothing here asserts on time: the bench
//! reports.
//!
//! The server and the in-process client run in `bench-support`, xtask's second binary, built in
//! release with the same profile as `termsprawlctl`, so that no debug code sits in a measured path.

pub mod chain;
pub mod client;
pub mod command;
pub mod crowd;
pub mod floor;
pub mod mcp;
pub mod oneshot;
pub mod report;
pub mod rss;
pub mod server;
pub mod stats;
pub mod survey;
pub mod terminals;

use std::ffi::{OsStr, OsString};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Context as _;
use termsprawl_protocol::{ToolEndpoint, ToolSession};
use termsprawl_test_support::cargo;

use crate::base::machine::Machine;
use command::{Invocation, Template};
use report::{CURL, FLOOR, OURS, Report};
use rss::{GNU_TIME, PeakRss};
use server::{ARGUMENTS, OPERATION, ServerProcess};
use stats::Summary;

use crate::base::binaries::Binaries;

pub use mcp::IN_FLIGHT;

/// The tasks of the concurrent in-process client run.
pub const TASKS: usize = 32;

/// Where [`run`] writes the document, relative to the repository root.
pub const DOCUMENT: &str = "docs/performance.md";

/// The binaries a measurement uses.
#[derive(Debug, Clone)]
pub struct Tools {
    /// `termsprawlctl` without arguments: the release binary, or in tests a debug stand-in.
    pub ctl: Invocation,
    /// The `bench-support` binary (server and in-process client).
    pub helper: PathBuf,
    /// The floor program.
    pub floor: PathBuf,
    /// The compiler whose version the report names.
    pub rustc: OsString,
    /// `termsprawl-headless` and the `termsprawlctl` it gives its nodes, for part 4; `None`
    /// leaves the part out.
    pub headless: Option<Binaries>,
}

/// What to measure.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Measured one-shot runs per program.
    pub runs: usize,
    /// Unmeasured one-shot runs per program first.
    pub warmup: usize,
    /// Measured calls per MCP run and per in-process client run.
    pub calls: usize,
    /// Unmeasured calls before those.
    pub warmup_calls: usize,
    /// Other termsprawlctl-compatible commands, as typed and as split.
    pub vs: Vec<(String, Template)>,
    /// Part 4's counts.
    pub terminals: terminals::Settings,
    /// Part 5's rounds.
    pub crowd: crowd::Settings,
    /// Part 6's size.
    pub chain: chain::Settings,
}

/// The compiler: `RUSTC` when set, else `rustc`.
pub fn rustc() -> OsString {
    std::env::var_os("RUSTC").unwrap_or_else(|| OsString::from("rustc"))
}

/// The whole command: build, measure, print the tables, write [`DOCUMENT`] when `write`, and
/// with `check` return `Ok(false)` when the check fails.
pub fn run(
    root: &Path,
    plan: &Plan,
    command: String,
    check: bool,
    write: bool,
) -> anyhow::Result<bool> {
    eprintln!("bench: building termsprawlctl (release)");
    let ctl = release_build(root, &["-p", "termsprawl-cli"], "termsprawlctl")?;
    eprintln!("bench: building bench-support (release)");
    let helper =
        release_build(root, &["-p", "harness", "--bin", "bench-support"], "bench-support")?;
    eprintln!("bench: building termsprawl-headless (release)");
    let headless = release_build(root, &["-p", "termsprawl-headless"], "termsprawl-headless")?;
    let target =
        ctl.parent().and_then(Path::parent).context("the release binary has no target dir")?;
    let rustc = rustc();
    eprintln!("bench: compiling the floor program with rustc -O");
    let floor = floor::build(&rustc, &target.join("bench"))?;
    // The vs commands' programs too, when the template's first word names a file: an `env` or
    // `node` in front is a shared system program, read long ago like any other.
    let vs_programs = plan.vs.iter().filter_map(|(_, template)| {
        let program = PathBuf::from(&template.invocation(&[]).program);
        program.is_file().then_some(program)
    });
    for program in [&ctl, &helper, &headless, &floor].into_iter().cloned().chain(vs_programs) {
        read_back_from_disk(&program)
            .with_context(|| format!("cannot drop {} from the page cache", program.display()))?;
    }
    let headless = Some(Binaries { ctl: ctl.clone(), headless });
    let tools = Tools { ctl: Invocation::new(ctl), helper, floor, rustc, headless };

    let mut report = measure(&tools, plan, command)?;
    report.revision = revision(root);
    print!("{}", report.tables());
    if write {
        let path = root.join(DOCUMENT);
        fs::write(&path, report.document())
            .with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("bench: wrote {DOCUMENT}");
    }
    if !check {
        return Ok(true);
    }
    let failures = report.check();
    for failure in &failures {
        eprintln!("check failed: {failure}");
    }
    if failures.is_empty() {
        eprintln!("check passed");
    }
    Ok(failures.is_empty())
}

/// Writes `program` out and drops its pages from the page cache, so that its runs read it back
/// from disk, as an installed program is read after a reboot or once its pages were evicted.
///
/// A file just written (by the linker, `cp` or an unpacked archive) can sit in the page cache in
/// large folios, which Linux 6.18 maps whole at a page fault: measured on ext4, the same
/// termsprawlctl peaked at 3.6 MiB instead of 2.7 in a one-shot call, and its MCP bridge at
/// 4.2 MiB instead of 3.8 with 32 calls in flight, until its pages were read back. Without this
/// a figure of resident memory would depend on how the file last came into the cache.
fn read_back_from_disk(program: &Path) -> std::io::Result<()> {
    let file = fs::File::open(program)?;
    file.sync_all()?;
    rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::DontNeed)?;
    Ok(())
}

/// Starts the server and measures the three parts, then part 4 on its own server.
pub fn measure(tools: &Tools, plan: &Plan, command: String) -> anyhow::Result<Report> {
    let scratch = tempfile::tempdir().context("cannot create a scratch directory")?;
    let server = ServerProcess::start(&tools.helper, &scratch.path().join("agent-tools"))?;
    let session = server.session_file().to_path_buf();
    let mut notes = Vec::new();
    let rss = PeakRss::find(&scratch.path().join("peak-rss"));
    if rss.is_none() {
        notes.push(format!("GNU time (`{GNU_TIME}`) is not installed: peak RSS was not measured"));
    }
    let one_shot = one_shot_part(tools, plan, &session, scratch.path(), rss.as_ref(), &mut notes)?;
    let mcp = mcp_part(tools, plan, &session, rss.as_ref())?;
    let client = client_part(tools, plan, &session)?;
    server.stop()?;
    let terminals = terminals_part(tools, plan, &mut notes)?;
    let crowd = crowd_part(tools, plan)?;
    let chain = chain_part(tools, plan)?;
    let machine = Machine::describe(&tools.rustc);
    notes.extend(machine.busy_note());
    Ok(Report {
        command,
        revision: None,
        machine,
        settings: report::Settings {
            runs: plan.runs,
            warmup: plan.warmup,
            calls: plan.calls,
            warmup_calls: plan.warmup_calls,
        },
        one_shot,
        mcp,
        client,
        terminals,
        crowd,
        chain,
        notes,
    })
}

/// Part 1: ours, the floor, curl (when installed) and each `--vs` command, round-robin.
fn one_shot_part(
    tools: &Tools,
    plan: &Plan,
    session: &Path,
    scratch: &Path,
    rss: Option<&PeakRss>,
    notes: &mut Vec<String>,
) -> anyhow::Result<Vec<report::OneShot>> {
    let call_args: Vec<OsString> =
        vec!["--session".into(), session.into(), "call".into(), OPERATION.into(), ARGUMENTS.into()];
    let mut subjects = vec![
        oneshot::Subject { name: OURS.to_owned(), invocation: tools.ctl.clone().args(&call_args) },
        oneshot::Subject {
            name: FLOOR.to_owned(),
            invocation: Invocation::new(&tools.floor).arg(session),
        },
    ];
    match curl_invocation(session, scratch)? {
        Some(invocation) => subjects.push(oneshot::Subject { name: CURL.to_owned(), invocation }),
        None => notes.push("curl is not installed: its row is missing".to_owned()),
    }
    for (text, template) in &plan.vs {
        let invocation = template.invocation(&call_args);
        subjects.push(oneshot::Subject { name: text.clone(), invocation });
    }

    eprintln!(
        "bench: one-shot calls, {} programs x ({} warm-up + {} runs)",
        subjects.len(),
        plan.warmup,
        plan.runs
    );
    let measured = oneshot::round_robin(&subjects, rss, plan.warmup, plan.runs, &mut |done| {
        if done % 100 == 0 {
            eprintln!("bench:   {done} of {} iterations", plan.runs);
        }
    })?;
    let scratch = scratch.to_string_lossy();
    let session = session.to_string_lossy();
    let mut rows = Vec::new();
    for (subject, measured) in subjects.iter().zip(&measured) {
        let built_here = subject.name == OURS || subject.name == FLOOR;
        rows.push(report::OneShot {
            name: subject.name.clone(),
            command: shown(&subject.invocation, built_here, &session, &scratch),
            size_bytes: if subject.name == OURS {
                file_size(&subject.invocation.program)
            } else {
                None
            },
            wall: Summary::of_durations(&measured.walls).context("no runs")?,
            rss: Summary::of(&measured.peak_rss),
        });
    }
    Ok(rows)
}

/// Part 2: each bridge, ours and the `--vs` commands', one call at a time and [`IN_FLIGHT`].
fn mcp_part(
    tools: &Tools,
    plan: &Plan,
    session: &Path,
    rss: Option<&PeakRss>,
) -> anyhow::Result<Vec<report::Mcp>> {
    let mcp_args: Vec<OsString> = vec!["--session".into(), session.into(), "mcp".into()];
    let mut bridges = vec![(OURS.to_owned(), tools.ctl.clone().args(&mcp_args))];
    for (text, template) in &plan.vs {
        bridges.push((text.clone(), template.invocation(&mcp_args)));
    }
    let mut rows = Vec::new();
    for (name, invocation) in &bridges {
        for in_flight in [1, IN_FLIGHT] {
            eprintln!("bench: MCP bridge of {name}, {} calls, {in_flight} in flight", plan.calls);
            let outcome = mcp::drive(invocation, rss, plan.warmup_calls, plan.calls, in_flight)?;
            rows.push(report::Mcp {
                name: name.clone(),
                in_flight,
                calls: outcome.calls,
                elapsed: outcome.elapsed,
                latency: Summary::of(&outcome.latencies_ns).context("no calls")?,
                peak_rss: outcome.peak_rss,
            });
        }
    }
    Ok(rows)
}

/// Part 3: the in-process client from one task and from [`TASKS`].
fn client_part(tools: &Tools, plan: &Plan, session: &Path) -> anyhow::Result<Vec<report::Client>> {
    let mut rows = Vec::new();
    for tasks in [1, TASKS] {
        let plural = if tasks == 1 { "" } else { "s" };
        eprintln!("bench: in-process client, {} calls from {tasks} task{plural}", plan.calls);
        let outcome =
            client::measure(&tools.helper, session, tasks, plan.calls, plan.warmup_calls)?;
        rows.push(report::Client {
            tasks,
            calls: outcome.calls,
            elapsed: outcome.elapsed(),
            latency: Summary::of(&outcome.latencies_ns).context("no calls")?,
        });
    }
    Ok(rows)
}

/// Part 4, when there is a headless server to run and tmux for it.
fn terminals_part(
    tools: &Tools,
    plan: &Plan,
    notes: &mut Vec<String>,
) -> anyhow::Result<Option<terminals::Terminals>> {
    let Some(binaries) = &tools.headless else {
        notes.push("termsprawl-headless was not given: the terminal rows are missing".to_owned());
        return Ok(None);
    };
    if !installed("tmux", "-V") {
        notes.push("tmux is not installed: the terminal rows are missing".to_owned());
        return Ok(None);
    }
    let settings = &plan.terminals;
    eprintln!(
        "bench: termsprawl-headless, {} terminal_wait reactions and {} calls of each read",
        settings.waits, settings.reads
    );
    let outcome = terminals::measure(&tools.helper, binaries, settings)?;
    terminals::figures(&outcome).map(Some)
}

/// Part 5, on the same conditions as part 4 (which notes their absence).
fn crowd_part(tools: &Tools, plan: &Plan) -> anyhow::Result<Option<crowd::Crowd>> {
    let Some(binaries) = &tools.headless else { return Ok(None) };
    if !installed("tmux", "-V") {
        return Ok(None);
    }
    eprintln!(
        "bench: termsprawl-headless, {} agents x {} waits pending, {} rounds",
        plan.crowd.agents,
        crowd::WAITS_PER_AGENT,
        plan.crowd.rounds
    );
    crowd::measure(&tools.helper, binaries, &plan.crowd).map(Some)
}

/// Part 6, on the same conditions as part 4 (which notes their absence). It takes about 45 s
/// (the first turn of a chained wait is the server's 30 s).
fn chain_part(tools: &Tools, plan: &Plan) -> anyhow::Result<Option<chain::Chain>> {
    let Some(binaries) = &tools.headless else { return Ok(None) };
    if !installed("tmux", "-V") {
        return Ok(None);
    }
    eprintln!(
        "bench: termsprawl-headless, {} agents in chained 10-minute waits through the MCP bridge \
         (about {} s)",
        plan.chain.agents,
        chain::PAST_TURN.as_secs() + 10
    );
    chain::measure(&tools.helper, binaries, plan.chain).map(Some)
}

/// Whether `program argument` runs and exits 0.
fn installed(program: &str, argument: &str) -> bool {
    Command::new(program)
        .arg(argument)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// `curl` posting the same request, when curl is installed. The token goes into a header file
/// (mode 0600 in the scratch directory), never onto a command line.
fn curl_invocation(session: &Path, scratch: &Path) -> anyhow::Result<Option<Invocation>> {
    if !installed("curl", "--version") {
        return Ok(None);
    }
    let session_text = fs::read_to_string(session).context("cannot read the session file")?;
    let session_value: ToolSession =
        serde_json::from_str(&session_text).context("the session file is not a session")?;
    let endpoint_file = session
        .parent()
        .and_then(Path::parent)
        .context("the session file has no grandparent")?
        .join(termsprawl_transport::discovery::ENDPOINT_FILE);
    let endpoint: ToolEndpoint = serde_json::from_str(
        &fs::read_to_string(&endpoint_file).context("cannot read endpoint.json")?,
    )
    .context("endpoint.json is not an endpoint")?;

    let headers = scratch.join("curl-headers");
    let body = scratch.join("curl-body.json");
    write_private(
        &headers,
        &format!(
            "Authorization: Bearer {}\nContent-Type: application/json\n",
            session_value.token.expose()
        ),
    )?;
    write_private(&body, &format!(r#"{{"operation":"{OPERATION}","args":{ARGUMENTS}}}"#))?;
    let mut header_argument = OsString::from("@");
    header_argument.push(&headers);
    let mut body_argument = OsString::from("@");
    body_argument.push(&body);
    Ok(Some(
        Invocation::new("curl")
            .args(["-sS", "-H"])
            .arg(header_argument)
            .arg("--data-binary")
            .arg(body_argument)
            .arg(endpoint.url),
    ))
}

/// Writes a file only its owner can read.
fn write_private(path: &Path, text: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .and_then(|mut file| file.write_all(text.as_bytes()))
        .with_context(|| format!("cannot write {}", path.display()))
}

/// The command line as the report shows it: the session file as `SESSION`, the scratch
/// directory as `DIR`, the loopback port as `PORT` and, for the programs we built, the program
/// as its file name.
fn shown(invocation: &Invocation, short_program: bool, session: &str, scratch: &str) -> String {
    let mut invocation = invocation.clone();
    if short_program && let Some(name) = Path::new(&invocation.program).file_name() {
        invocation.program = name.to_owned();
    }
    let text = invocation.to_string().replace(session, "SESSION").replace(scratch, "DIR");
    match text.find("http://127.0.0.1:") {
        Some(at) => {
            let start = at + "http://127.0.0.1:".len();
            let digits = text[start..].bytes().take_while(u8::is_ascii_digit).count();
            format!("{}PORT{}", &text[..start], &text[start + digits..])
        }
        None => text,
    }
}

fn file_size(program: &OsStr) -> Option<u64> {
    fs::metadata(program).ok().filter(fs::Metadata::is_file).map(|metadata| metadata.len())
}

/// `cargo build --release --locked ARGS` ([`cargo::build`]); the path of the executable `binary`
/// it produced.
fn release_build(root: &Path, args: &[&str], binary: &str) -> anyhow::Result<PathBuf> {
    Ok(cargo::executable(&cargo::build(root, true, args)?, binary)?)
}

/// `git rev-parse --short HEAD`, marked when tracked files other than [`DOCUMENT`] changed.
fn revision(root: &Path) -> Option<String> {
    let git = |args: &[&str]| {
        let output = Command::new("git").current_dir(root).args(args).output().ok()?;
        output.status.success().then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
    };
    let head = git(&["rev-parse", "--short", "HEAD"])?;
    let excluded = format!(":!{DOCUMENT}");
    let changed = git(&["status", "--porcelain", "--untracked-files=no", "--", ".", &excluded])?;
    Some(if changed.is_empty() {
        format!("commit {head}")
    } else {
        format!("commit {head} with uncommitted changes")
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::process::Command;

    /// The pages of `path` in the page cache, as util-linux's `fincore` counts them.
    fn cached_pages(path: &Path) -> u64 {
        let output = Command::new("fincore")
            .args(["--raw", "--noheadings", "--output", "PAGES"])
            .arg(path)
            .output()
            .expect("fincore runs (util-linux-extra; `cargo xtask test` installs it)");
        assert!(output.status.success(), "fincore: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stdout).trim().parse().expect("fincore prints a count")
    }

    #[test]
    fn a_program_just_written_is_read_back_from_disk() {
        // In the target folder, as the bench's programs are: a tmpfs /tmp keeps its pages.
        let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target");
        std::fs::create_dir_all(&target).unwrap();
        let dir = tempfile::tempdir_in(&target).unwrap();
        let program = dir.path().join("program");
        std::fs::write(&program, vec![0x90_u8; 1 << 20]).unwrap();
        assert!(cached_pages(&program) > 0, "a file just written is in the page cache");

        super::read_back_from_disk(&program).unwrap();
        assert_eq!(cached_pages(&program), 0, "none of its pages is left in the cache");
        assert_eq!(std::fs::read(&program).unwrap().len(), 1 << 20, "the file is unchanged");

        let missing = super::read_back_from_disk(&dir.path().join("missing")).unwrap_err();
        assert_eq!(missing.kind(), std::io::ErrorKind::NotFound);
    }
}
