//! The figures of a soak run: the summary table on stderr and the `## Soak` section of
//! `docs/reliability.md`, written between two HTML comment markers so that the rest of the file
//! (the fuzzing section) stays as it is.

use std::fmt::Write as _;

use super::ledger::{Family, Ledger, Path, Reconciled};
use super::procs::Sample;

/// The line before the generated section.
pub const BEGIN: &str =
    "<!-- soak:begin (written by `cargo xtask soak`; edit the harness, not this section) -->";
/// The line after it.
pub const END: &str = "<!-- soak:end -->";

/// Everything a run measured.
#[derive(Debug, Default)]
pub struct Figures {
    /// The command as typed.
    pub command: String,
    /// Wall time of the load, seconds.
    pub seconds: u64,
    /// `--seed`.
    pub seed: u64,
    /// `debug` or `release`.
    pub profile: &'static str,
    /// One-shot workers, bridges (and their depth), conversation pairs, agents, projects.
    pub shape: String,
    /// Restarts after SIGKILL.
    pub kills: u64,
    /// Restarts after SIGTERM.
    pub terms: u64,
    /// Torn rewrites of `endpoint.json`.
    pub rewrites: u64,
    /// Longest time the server was down, milliseconds.
    pub longest_down_ms: u64,
    /// Restarts after which the persisted canvas and tasks were checked.
    pub restart_checks: u64,
    /// Times the managed tmux server was killed.
    pub tmux_kills: u64,
    /// Tickers ended by a tmux kill whose output was checked before following a new one.
    pub ticker_switches: u64,
    /// Why the disk fault did not run, when it did not.
    pub disk_skipped: Option<String>,
    /// Times the data directory's disk was filled and freed.
    pub disk_fills: u64,
    /// The largest filler written, bytes.
    pub filler_bytes: u64,
    /// Full disks after which every follower saw new ticks again.
    pub followers_resumed: u64,
    /// Gaps in a ticker's stream after a full disk, and the ticks they lost.
    pub tick_gaps: u64,
    /// See `tick_gaps`.
    pub ticks_lost_to_full_disk: u64,
    /// Stops after which `canvas.json` was damaged.
    pub canvas_damaged: u64,
    /// Starts that refused the damaged canvas, naming it, leaving it untouched.
    pub canvas_refused: u64,
    /// `serve --recover` starts that moved it aside and started from the last good copy.
    pub canvas_recovered: u64,
    /// Ticks the followers saw, each once and in order, and their checked answers.
    pub ticks: u64,
    /// See `ticks`.
    pub follow_answers: u64,
    /// Nodes and tasks acknowledged by the end.
    pub nodes: usize,
    /// See `nodes`.
    pub tasks: usize,
    /// The execution-log comparison.
    pub reconciled: Reconciled,
    /// Peak of every server incarnation.
    pub server_peak: Sample,
    /// Peak of every bridge.
    pub bridge_peak: Sample,
    /// Per bridge: level after warm-up and at rest at the end.
    pub bridge_levels: Vec<(Sample, Sample)>,
    /// CPU, cores, OS.
    pub machine: String,
    /// The date of the run.
    pub date: String,
}

fn mib(bytes: u64) -> String {
    #[expect(clippy::cast_precision_loss, reason = "a display value")]
    let value = bytes as f64 / 1_048_576.0;
    format!("{value:.1} MiB")
}

/// The calls table: one row per path and family, then totals.
pub fn calls_table(ledger: &Ledger) -> String {
    let mut text = String::from(
        "| path | family | calls | ok | unavailable | expected tool errors | failures |\n| --- | --- | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for path in [Path::OneShot, Path::Mcp] {
        for family in Family::ALL {
            let tally = ledger.tally(path, family);
            if tally.calls == 0 {
                continue;
            }
            let _ = writeln!(
                text,
                "| {path} | {family} | {} | {} | {} | {} | {} |",
                tally.calls, tally.ok, tally.unavailable, tally.expected_errors, tally.failures
            );
        }
    }
    let total = ledger.total(None);
    let _ = writeln!(
        text,
        "| **all** | | **{}** | **{}** | **{}** | **{}** | **{}** |",
        total.calls, total.ok, total.unavailable, total.expected_errors, total.failures
    );
    text
}

/// The summary: calls, faults, executions, resources, failures.
pub fn summary(figures: &Figures, ledger: &Ledger) -> String {
    let mut text = calls_table(ledger);
    let r = &figures.reconciled;
    let _ = write!(
        text,
        "\n| check | figure |\n| --- | ---: |\n\
         | duration | {} s |\n\
         | server restarts after SIGKILL | {} |\n\
         | server restarts after SIGTERM | {} |\n\
         | longest downtime | {} ms |\n\
         | torn rewrites of endpoint.json | {} |\n\
         | restarts whose canvas and tasks were checked | {} |\n\
         | tmux server killed (new agents, terminals and tickers after each) | {} |\n\
         | tickers ended by a tmux kill, their output checked to hold what was followed | {} |\n\
         | canvas damaged at a stop / start refused naming it, untouched / recovered from the last good copy | {} / {} / {} |\n\
         | disk filled and freed | {} |\n\
         | largest filler | {} |\n\
         | full disks after which every follower saw new ticks | {} |\n\
         | gaps in a ticker's stream after a full disk / ticks they lost | {} / {} |\n\
         | nodes / tasks acknowledged | {} / {} |\n\
         | ticks followed across the restarts (each once, in order) / answers checked | {} / {} |\n\
         | executions logged by the server | {} |\n\
         | executions matched to an attempt | {} |\n\
         | ran although the client saw the connection fail | {} |\n\
         | duplicated executions | {} |\n\
         | lost acknowledged calls | {} |\n\
         | server peak RSS / fds / threads (any incarnation) | {} / {} / {} |\n\
         | bridge peak RSS / fds / threads (any bridge) | {} / {} / {} |\n",
        figures.seconds,
        figures.kills,
        figures.terms,
        figures.longest_down_ms,
        figures.rewrites,
        figures.restart_checks,
        figures.tmux_kills,
        figures.ticker_switches,
        figures.canvas_damaged,
        figures.canvas_refused,
        figures.canvas_recovered,
        figures.disk_fills,
        mib(figures.filler_bytes),
        figures.followers_resumed,
        figures.tick_gaps,
        figures.ticks_lost_to_full_disk,
        figures.nodes,
        figures.tasks,
        figures.ticks,
        figures.follow_answers,
        r.executions,
        r.matched,
        r.ran_unacknowledged,
        r.duplicates,
        r.lost,
        mib(figures.server_peak.hwm.max(figures.server_peak.rss)),
        figures.server_peak.fds,
        figures.server_peak.threads,
        mib(figures.bridge_peak.hwm.max(figures.bridge_peak.rss)),
        figures.bridge_peak.fds,
        figures.bridge_peak.threads,
    );
    for (index, (warm, end)) in figures.bridge_levels.iter().enumerate() {
        let _ = writeln!(
            text,
            "| bridge {index} fds / threads after warm-up → at rest at the end | {} / {} → {} / {} |",
            warm.fds, warm.threads, end.fds, end.threads
        );
    }
    if let Some(reason) = &figures.disk_skipped {
        let _ = writeln!(text, "\nThe disk fault was skipped: {reason}.");
    }
    if ledger.failures.is_empty() {
        text.push_str("\nFailures: none.\n");
    } else {
        text.push_str("\nFailures by kind:\n\n");
        for (kind, count) in &ledger.failures {
            let _ = writeln!(text, "- {kind}: {count}");
        }
    }
    if !ledger.expected.is_empty() {
        text.push_str(
            "\nExpected tool errors (explained by the spec or by an injected fault):\n\n",
        );
        for (why, count) in &ledger.expected {
            let _ = writeln!(text, "- {why}: {count}");
        }
    }
    text
}

/// The `## Soak` section, markers included.
pub fn section(figures: &Figures, ledger: &Ledger) -> String {
    let mut text = format!("{BEGIN}\n## Soak\n\n");
    let _ = write!(
        text,
        "`{}` ({} build, seed {}), {}. Machine: {}.\n\n\
         Load: {}. Faults: at random moments (seeded) the harness kills the server (mostly SIGKILL, \
         sometimes SIGTERM), leaves it down for 0.2–3 s and starts `serve` again on the same data \
         directory; between kills it rewrites `agent-tools/endpoint.json` in place, truncated and \
         then written in two parts. Under headless (issue 29) it also kills the managed tmux server \
         (the agents, terminals and tickers end with it; the load goes on with new ones, and each \
         ended ticker must still hold what was followed on it and read as not running), fills \
         the data directory's disk (a 64 MiB tmpfs, root only) for 1–3 s and frees it (every \
         follower must see new ticks without a restart), and at some stops damages \
         `canvas.json` (truncated or garbage): the next start must refuse it naming the file \
         and leave it untouched, and `serve --recover` must start from the last good copy, saved with every change, \
         with every node and task acknowledged before the stop. \
         Every error such a fault causes must be one of the clear errors it explains. \
         The server logs every request it dispatches \
         (`serve --exec-log`); every call carries a unique marker where its arguments allow one, \
         and the log is compared with the client-side attempts and `ok` answers per \
         `(operation, args)`. After every kill the persisted canvas and tasks are checked, after \
         every restart `canvas_list` and the task files, and every bridge must answer `ok` again \
         before the next kill. `cargo xtask soak --help` lists the options; \
         `harness/src/soak.rs` says what each check does.\n\n",
        figures.command,
        figures.profile,
        figures.seed,
        figures.date,
        figures.machine,
        figures.shape,
    );
    text.push_str(&summary(figures, ledger));
    if !ledger.examples.is_empty() {
        text.push_str("\nFirst failures:\n\n");
        for example in &ledger.examples {
            let _ = writeln!(text, "- `{}`", example.replace('`', "'"));
        }
    }
    let _ = writeln!(text, "{END}");
    text
}

/// `document` with the text between the markers (markers included) replaced by `section`; the
/// section is appended after a blank line when the markers are missing.
pub fn replace_section(document: &str, section: &str) -> String {
    let begin = document.find("<!-- soak:begin");
    let end = document.find(END);
    match (begin, end) {
        (Some(begin), Some(end)) if begin < end => {
            let after = end + END.len();
            let after = after + usize::from(document[after..].starts_with('\n'));
            format!("{}{section}{}", &document[..begin], &document[after..])
        }
        _ => {
            let mut text = document.trim_end().to_owned();
            text.push_str("\n\n");
            text.push_str(section);
            text
        }
    }
}
