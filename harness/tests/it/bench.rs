//! The bench harness end to end in a tiny configuration: a debug `bench-support` as server, as
//! in-process client and (through its `termsprawlctl` mode) as the program under test, the floor
//! program compiled for real, curl when installed; for the terminal part the debug
//! `termsprawl-headless` and `termsprawlctl` that `cargo test --workspace` builds next to the harness,
//! over real tmux. Nothing here looks at the figures' values.

use std::path::{Path, PathBuf};
use std::process::Command;

use harness::base::binaries::Binaries;
use harness::bench::command::{Invocation, Template};
use harness::bench::report::{CURL, FLOOR, OURS};
use harness::bench::survey::{TERMINAL_LIST, TERMINAL_LIST_LIVE, TERMINAL_SEARCH};
use harness::bench::terminals::{GUIDE_READ, Settings, TERMINAL_READ, TERMINAL_READ_SINCE};
use harness::bench::{IN_FLIGHT, Plan, TASKS, Tools, floor, measure, rustc};
use termsprawl_protocol::shell::shell_word;

fn helper() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_bench-support"))
}

/// A binary of another package of the workspace, next to the `harness` binary.
fn sibling(name: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_BIN_EXE_harness")).with_file_name(name);
    path.is_file().then_some(path)
}

const MISSING: &str =
    "tmux, termsprawlctl or termsprawl-headless is missing (cargo test --workspace builds the two)";

/// The headless server and termsprawlctl when they are built, and tmux is installed. Under CI
/// a missing one is a broken setup, not a reason to leave the part out.
fn headless() -> Option<Binaries> {
    let tmux = Command::new("tmux").arg("-V").output().is_ok_and(|output| output.status.success());
    let found = match (sibling("termsprawlctl"), sibling("termsprawl-headless")) {
        (Some(ctl), Some(headless)) if tmux => Some(Binaries { ctl, headless }),
        _ => None,
    };
    if found.is_none() {
        assert!(std::env::var_os("CI").is_none_or(|value| value.is_empty()), "{MISSING}");
    }
    found
}

/// The tools, with the floor program compiled into `dir`.
fn tools(dir: &Path) -> Tools {
    Tools {
        ctl: Invocation::new(helper()).arg("termsprawlctl"),
        helper: helper(),
        floor: floor::build(&rustc(), dir).unwrap(),
        rustc: rustc(),
        headless: headless(),
    }
}

fn plan(vs: &[&str]) -> Plan {
    let vs = vs.iter().map(|text| ((*text).to_owned(), Template::parse(text).unwrap())).collect();
    let terminals = Settings { waits: 4, warmup_waits: 1, reads: 5, warmup_reads: 1 };
    let crowd = harness::bench::crowd::Settings { agents: 3, rounds: 1, warmup_rounds: 1 };
    let chain = harness::bench::chain::Settings { agents: 2 };
    Plan { runs: 3, warmup: 1, calls: 40, warmup_calls: 2, vs, terminals, crowd, chain }
}

fn gnu_time_installed() -> bool {
    Command::new("time").arg("--version").output().is_ok_and(|output| {
        output.status.success()
            && String::from_utf8_lossy(&[output.stdout, output.stderr].concat()).contains("GNU")
    })
}

fn curl_installed() -> bool {
    Command::new("curl").arg("--version").output().is_ok_and(|output| output.status.success())
}

#[test]
fn every_part_is_measured_and_reported() {
    let scratch = tempfile::tempdir().unwrap();
    let tools = tools(scratch.path());
    // The stand-in again, as a --vs command with the placeholder.
    let vs = format!("{} termsprawlctl {{}}", shell_word(&helper().to_string_lossy()));
    let report = measure(&tools, &plan(&[&vs]), "cargo xtask bench --runs 3".to_owned()).unwrap();

    let names: Vec<&str> = report.one_shot.iter().map(|row| row.name.as_str()).collect();
    let mut expected = vec![OURS, FLOOR];
    if curl_installed() {
        expected.push(CURL);
    } else {
        assert!(report.notes.contains(&"curl is not installed: its row is missing".to_owned()));
    }
    let gnu_time = gnu_time_installed();
    if !gnu_time {
        let note = "GNU time (`time`) is not installed: peak RSS was not measured".to_owned();
        assert!(report.notes.contains(&note), "{:?}", report.notes);
    }
    expected.push(&vs);
    assert_eq!(names, expected);
    for row in &report.one_shot {
        assert_eq!(row.wall.count, 3, "{}", row.name);
        assert!(row.wall.min > 0, "{}", row.name);
        assert_eq!(row.rss.map(|rss| rss.count), gnu_time.then_some(3), "{}", row.name);
        assert!(row.rss.is_none_or(|rss| rss.min > 0), "{}", row.name);
        // Scratch paths and ports are replaced; the session file is `SESSION`.
        assert!(!row.command.contains("/.tmp"), "{}", row.command);
        if row.name == CURL {
            assert!(row.command.ends_with(" http://127.0.0.1:PORT/call"), "{}", row.command);
        } else {
            assert!(row.command.contains("SESSION"), "{}", row.command);
        }
    }
    assert_eq!(report.one_shot[1].command, "floor SESSION");
    assert!(report.one_shot[0].size_bytes.is_some());

    let bridges: Vec<(&str, usize)> =
        report.mcp.iter().map(|row| (row.name.as_str(), row.in_flight)).collect();
    assert_eq!(bridges, [(OURS, 1), (OURS, IN_FLIGHT), (vs.as_str(), 1), (vs.as_str(), IN_FLIGHT)]);
    for row in &report.mcp {
        assert_eq!((row.calls, row.latency.count), (40, 40));
        assert_eq!(row.peak_rss.is_some_and(|rss| rss > 0), gnu_time);
    }

    let clients: Vec<(usize, usize)> =
        report.client.iter().map(|row| (row.tasks, row.latency.count)).collect();
    assert_eq!(clients, [(1, 40), (TASKS, 40)]);

    match (&report.terminals, &tools.headless) {
        (Some(terminals), Some(_)) => {
            assert_eq!((terminals.waits, terminals.reaction.count), (4, 4));
            assert_eq!(terminals.trigger_to_answer.count, 4);
            // A reaction is real time, from a print that followed the trigger.
            assert!(terminals.reaction.min > 0);
            assert!(terminals.trigger_to_answer.min >= terminals.reaction.min);
            let reads: Vec<(&str, usize)> = terminals
                .read_rows
                .iter()
                .map(|row| (row.call.as_str(), row.latency.count))
                .collect();
            assert_eq!(
                reads,
                [
                    (GUIDE_READ, 5),
                    (TERMINAL_READ, 5),
                    (TERMINAL_READ_SINCE, 5),
                    (TERMINAL_LIST, 5),
                    (TERMINAL_LIST_LIVE, 5),
                    (TERMINAL_SEARCH, 5)
                ]
            );
            // Part 5: every wait of every agent answered its mark, with the traffic beside.
            let crowd = report.crowd.as_ref().expect("part 5 runs where part 4 does");
            assert_eq!((crowd.agents, crowd.reaction.count), (3, 3 * 4));
            // One chained wait per agent and round, answered at the end of its chain.
            assert_eq!(crowd.chained.count, 3);
            assert!(crowd.chained.min > 0, "{crowd:?}");
            assert!(crowd.reaction.min > 0 && crowd.one_shot_calls > 0 && crowd.mcp_calls > 0);
            assert!(crowd.nodes.fds > 0 && crowd.peak_fds >= crowd.nodes.fds, "{crowd:?}");
            assert!(crowd.peak_rss >= crowd.nodes.rss, "{crowd:?}");
            check_chain(report.chain.as_ref().expect("part 6 runs where part 4 does"));
        }
        (None, None) => {
            assert_eq!(report.crowd, None);
            assert_eq!(report.chain, None);
            eprintln!("the terminal part was left out: {MISSING}");
            let note = "termsprawl-headless was not given: the terminal rows are missing";
            assert!(report.notes.contains(&note.to_owned()), "{:?}", report.notes);
        }
        (terminals, binaries) => panic!("terminal part {terminals:?} with binaries {binaries:?}"),
    }

    let document = report.document();
    let mut headings =
        vec!["## Machine", "## One-shot call", "## MCP bridge", "## Client in process"];
    if tools.headless.is_some() {
        headings.push("## Terminals on termsprawl-headless");
    }
    for heading in headings {
        assert!(document.contains(heading), "{heading} missing from\n{document}");
    }
    assert!(document.contains("`cargo xtask bench --runs 3`"));
    assert!(document.contains(&format!("| termsprawlctl / {FLOOR} |")));
    assert!(document.contains(&format!("| `{vs}` / termsprawlctl |")));
    // The verdict is computed; its value depends on the machine and a debug build.
    let _ = report.check();
}

/// Part 6: each agent's single wait and chained wait (past a turn) answered its mark through its
/// own bridge, and the usage was taken twice, of the server and of every bridge.
#[allow(clippy::print_stderr, reason = "the figures of a debug run, for whoever runs the test")]
fn check_chain(chain: &harness::bench::chain::Chain) {
    assert_eq!((chain.agents, chain.single.count, chain.chained.count), (2, 2, 2));
    assert!(chain.single.min > 0 && chain.chained.min > 0, "{chain:?}");
    assert!(chain.past_turn > std::time::Duration::from_secs(30), "{chain:?}");
    for usage in chain.server.iter().chain(&chain.bridges).chain(&chain.largest_bridge) {
        assert!(usage.fds > 0 && usage.rss > 0, "{chain:?}");
    }
    // The bridges' figures: two bridges together hold more than the largest alone.
    assert!(chain.bridges[0].fds > chain.largest_bridge[0].fds, "{chain:?}");
    eprintln!("part 6 (debug build): {chain:?}");
}

#[test]
fn a_program_that_does_not_answer_the_guide_is_an_error() {
    let scratch = tempfile::tempdir().unwrap();
    let tools = tools(scratch.path());
    let silent = measure(&tools, &plan(&["true"]), String::new()).unwrap_err();
    assert!(format!("{silent:#}").contains("the output is not JSON"), "{silent:#}");

    let failing = measure(&tools, &plan(&["false"]), String::new()).unwrap_err();
    assert!(format!("{failing:#}").contains("false"), "{failing:#}");
    assert!(format!("{failing:#}").contains("exit status: 1"), "{failing:#}");
}

#[test]
fn the_floor_program_reports_a_missing_session() {
    let scratch = tempfile::tempdir().unwrap();
    let floor = floor::build(&rustc(), scratch.path()).unwrap();
    let output = Command::new(&floor).arg(scratch.path().join("nope.json")).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.starts_with("floor: cannot read the session file: "), "{stderr}");
}

#[test]
fn the_printing_side_stamps_each_mark_with_the_shared_clock() {
    use harness::bench::terminals::{READY, mark, monotonic_ns, printed_at};
    use std::io::{BufRead as _, BufReader, Write as _};

    let scratch = tempfile::tempdir().unwrap();
    let fifo = scratch.path().join("stamp.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let mut child = Command::new(helper())
        .arg("stamp")
        .arg(&fifo)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().unwrap().unwrap(), READY);
    let mut writer = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    let before = monotonic_ns();
    writer.write_all(b"3\n").unwrap();
    let line = lines.next().unwrap().unwrap();
    let after = monotonic_ns();
    let printed = printed_at(&line, &mark("3")).unwrap_or_else(|| panic!("{line:?}"));
    assert!((before..=after).contains(&printed), "{before} {printed} {after}");
    writer.write_all(b"quit\n").unwrap();
    assert!(child.wait().unwrap().success());
    assert!(lines.next().is_none());
}

#[test]
fn the_printing_side_needs_its_fifo() {
    let scratch = tempfile::tempdir().unwrap();
    let output = Command::new(helper())
        .arg("stamp")
        .arg(scratch.path().join("missing.fifo"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.starts_with("error: cannot open "), "{stderr}");
}

#[test]
fn the_terminal_part_fails_clearly_on_a_server_without_terminals() {
    // The bench's own server answers guide_read only: the run node cannot start.
    let scratch = tempfile::tempdir().unwrap();
    let server = harness::bench::server::ServerProcess::start(
        &helper(),
        &scratch.path().join("agent-tools"),
    )
    .unwrap();
    let output = Command::new(helper())
        .arg("terminals")
        .arg("--session")
        .arg(server.session_file())
        .arg("--fifo")
        .arg(scratch.path().join("stamp.fifo"))
        .args(["--waits", "2", "--reads", "2"])
        .output()
        .unwrap();
    server.stop().unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(output.stdout, b"");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(
        stderr,
        "error: terminal_run failed: terminal_run is not served by the bench server\n"
    );
    // The FIFO was made in the place given, and an existing one is refused.
    let again = Command::new(helper())
        .arg("terminals")
        .arg("--session")
        .arg(scratch.path().join("nope.json"))
        .arg("--fifo")
        .arg(scratch.path().join("stamp.fifo"))
        .args(["--waits", "2", "--reads", "2"])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(1));
    let stderr = String::from_utf8(again.stderr).unwrap();
    assert!(stderr.starts_with("error: cannot create the FIFO "), "{stderr}");
}
