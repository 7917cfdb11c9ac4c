//! The bench harness end to end in a tiny configuration: a debug `bench-support` as server, as
//! in-process client and (through its `termsprawlctl` mode) as the program under test, the floor
//! program compiled for real, curl when installed. Nothing here looks at the figures' values.

use std::path::PathBuf;
use std::process::Command;

use termsprawl_protocol::shell::shell_word;
use xtask::bench::command::{Invocation, Template};
use xtask::bench::report::{CURL, FLOOR, OURS};
use xtask::bench::{IN_FLIGHT, Plan, TASKS, Tools, floor, measure, rustc};

fn helper() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_bench-support"))
}

/// The tools, with the floor program compiled into `dir`.
fn tools(dir: &std::path::Path) -> Tools {
    Tools {
        ctl: Invocation::new(helper()).arg("termsprawlctl"),
        helper: helper(),
        floor: floor::build(&rustc(), dir).unwrap(),
        rustc: rustc(),
    }
}

fn plan(vs: &[&str]) -> Plan {
    let vs = vs.iter().map(|text| ((*text).to_owned(), Template::parse(text).unwrap())).collect();
    Plan { runs: 3, warmup: 1, calls: 40, warmup_calls: 2, vs }
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

    let document = report.document();
    for heading in ["## Machine", "## One-shot call", "## MCP bridge", "## Client in process"] {
        assert!(document.contains(heading), "{heading} missing from\n{document}");
    }
    assert!(document.contains("`cargo xtask bench --runs 3`"));
    assert!(document.contains(&format!("| termsprawlctl / {FLOOR} |")));
    assert!(document.contains(&format!("| `{vs}` / termsprawlctl |")));
    // The verdict is computed; its value depends on the machine and a debug build.
    let _ = report.check();
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
