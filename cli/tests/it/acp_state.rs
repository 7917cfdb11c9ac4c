//! Issue 35 item 4, state and causes, over the real binary: an agent that exits before it answers
//! `initialize`, or a program that is not an ACP agent, is reported within seconds with its exit
//! status and the last lines of its stderr, the log named once; an agent that crashes in a chat in
//! a tmux pane is reported, what it left running is ended, and `/restart` starts it again and
//! continues the session.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::acp::{Place, TURN_END, eventually, marker, processes_with};
use crate::acp_interactive::Node;
use crate::support::BIN;

/// `termsprawlctl acp --prompt hi -- sh -c SCRIPT` with the default temporary agent log: every
/// line of stderr with the time it came, and the exit code.
fn start_failure(script: &str) -> (Vec<(Duration, String)>, Option<i32>) {
    let place = Place::new();
    let started = Instant::now();
    let mut child = Command::new(BIN)
        .args(["acp", "--no-mcp", "--terminals", "tmux", "--prompt", "hi", "--", "sh", "-c"])
        .arg(script)
        .current_dir(place.root())
        .env("TMUX_TMPDIR", place.tmux_tmpdir())
        .env_remove("TERMSPRAWL_SESSION_FILE")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = Vec::new();
    for line in BufReader::new(child.stderr.take().unwrap()).lines() {
        lines.push((started.elapsed(), line.unwrap()));
    }
    let status = child.wait().unwrap();
    (lines, status.code())
}

/// The first line containing `text`, and when it came.
fn line_with<'a>(lines: &'a [(Duration, String)], text: &str) -> &'a (Duration, String) {
    lines
        .iter()
        .find(|(_, line)| line.contains(text))
        .unwrap_or_else(|| panic!("no line with {text:?} in {lines:#?}"))
}

/// The agent log's path, as the start names it.
fn log_path(lines: &[(Duration, String)]) -> String {
    let (_, line) = line_with(lines, "the agent's stderr goes to ");
    line.split("the agent's stderr goes to ").nth(1).unwrap().to_owned()
}

#[test]
fn an_agent_that_exits_before_initialize_is_reported_with_its_status_and_stderr() {
    let (lines, code) =
        start_failure("echo 'unknown flag --acpx' >&2; echo 'usage: agent' >&2; exit 2");
    assert_eq!(code, Some(1), "{lines:#?}");
    let log = log_path(&lines);
    let (at, report) =
        line_with(&lines, "the agent exited with exit code 2 before answering initialize");
    assert!(*at < Duration::from_secs(5), "{at:?}");
    assert!(report.ends_with(&format!("; the last lines of its stderr ({log}):")), "{lines:#?}");
    let texts: Vec<&str> = lines.iter().map(|(_, line)| line.as_str()).collect();
    let at = texts.iter().position(|line| line == report).unwrap();
    assert_eq!(
        texts[at + 1..at + 3],
        ["    unknown flag --acpx", "    usage: agent"],
        "{texts:#?}"
    );
    // The log is named once for the failure (and once at the start).
    let named = texts.iter().filter(|line| line.contains(&log)).count();
    assert_eq!(named, 2, "{texts:#?}");
}

#[test]
fn a_program_that_is_not_an_acp_agent_is_reported_within_5_s() {
    // It writes text, never JSON-RPC, and waits.
    let (lines, code) = start_failure("echo hi; exec sleep 100");
    assert_eq!(code, Some(1), "{lines:#?}");
    let (at, report) = line_with(&lines, "the agent did not answer initialize within 4 s");
    assert!(*at < Duration::from_secs(5), "{at:?}");
    assert!(report.contains("wrote \"hi\" on its stdout: it is not an ACP agent"), "{report}");
    assert!(report.ends_with("; it wrote nothing on stderr"), "{report}");
    // The empty log is not named at the failure, and removed.
    let log = log_path(&lines);
    assert_eq!(lines.iter().filter(|(_, line)| line.contains(&log)).count(), 1, "{lines:#?}");
    assert!(!std::path::Path::new(&log).exists());
    // `cat` echoes our request: an error answer it sent back from our own.
    let (lines, code) = start_failure("exec cat");
    assert_eq!(code, Some(1), "{lines:#?}");
    let (at, report) = line_with(&lines, "initialize failed: ");
    assert!(*at < Duration::from_secs(5), "{at:?}");
    assert!(report.contains("\"method\\\":\\\"initialize\\\""), "{report}");
    assert!(report.ends_with("on its stdout: it is not an ACP agent, it seems"), "{report}");
    // A silent one is reported too, and waited for.
    let place = Place::new();
    let mut child = Command::new(BIN)
        .args(["acp", "--no-mcp", "--terminals", "tmux", "--prompt", "hi", "--", "sh", "-c"])
        .arg("echo 'still loading' >&2; exec sleep 100")
        .current_dir(place.root())
        .env("TMUX_TMPDIR", place.tmux_tmpdir())
        .env_remove("TERMSPRAWL_SESSION_FILE")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    while !seen.contains("still loading\n") {
        assert!(stderr.read_line(&mut seen).unwrap() > 0, "{seen}");
    }
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    assert!(
        seen.contains("the agent has not answered initialize after 4 s; waiting up to 30 s (Ctrl-C stops); the last lines of its stderr ("),
        "{seen}"
    );
    child.kill().unwrap();
    child.wait().unwrap();
}

/// An agent that crashes in the middle of a turn: reported with its exit status and its stderr's
/// last line, the command it left running ended, and `/restart` starts it again and loads the
/// session, whose history it shows again.
#[test]
fn a_crashed_agent_is_reported_and_restart_continues_its_session() {
    let node = Node::start(&["--resume", "old-1"], &[("ACP_TEST_FEATURES", "load")]);
    node.wait_for("connected to ACP test agent 1.0 (session old-1, resumed)", 1);
    node.wait_for("[session] end of the history of old-1", 1);
    let first = agent_pids(&node);
    assert_eq!(first.len(), 1, "{first:?}");
    let marker = marker();
    node.type_line(&format!("crash {marker}"));
    let screen = node
        .wait_for("[agent] /restart starts it again and continues session old-1; /quit ends", 1);
    let log = node.place.path().join("agent.log");
    assert!(
        screen.contains(&format!(
            "termsprawlctl: acp: the agent exited with exit code 5; the last lines of its stderr ({}):\n    crashing on purpose\n",
            log.display()
        )),
        "{screen}"
    );
    assert_eq!(screen.matches(&log.display().to_string()).count(), 1, "{screen}");
    // What it left in its process group is ended at once.
    assert!(
        eventually(Duration::from_secs(2), || processes_with(&marker).is_empty()),
        "left running: {:?}",
        processes_with(&marker)
    );
    node.type_line("echo while it is down");
    node.wait_for("[agent] the agent is not running: /restart starts it again; /quit ends", 1);
    node.type_line("/restart");
    node.wait_for("connected to ACP test agent 1.0 (session old-1, resumed)", 2);
    node.wait_for("[session] end of the history of old-1", 2);
    let second = agent_pids(&node);
    assert_eq!(second.len(), 1, "{second:?}");
    assert_ne!(first, second);
    assert!(!alive(first[0]));
    node.type_line("echo after the restart");
    node.wait_for(TURN_END, 1);
    let reports = node.reports();
    assert_eq!(reports.last().unwrap()["text"], "echo after the restart", "{reports:?}");
    // Both agents loaded the session.
    let loads: Vec<Value> = node
        .place
        .traced("out")
        .into_iter()
        .filter(|message| message["method"] == "session/load")
        .map(|message| message["params"]["sessionId"].clone())
        .collect();
    assert_eq!(loads, vec![Value::from("old-1"), Value::from("old-1")]);
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);
    assert!(
        eventually(Duration::from_secs(2), || second.iter().all(|pid| !alive(*pid))),
        "the agent outlived the front end"
    );
}

/// The pids of the peer agents running under the node's front end.
fn agent_pids(node: &Node) -> Vec<u32> {
    agents_in(&node.peer.agent.to_string_lossy(), &node.place.root())
}

/// The pids of the processes running `agent` in the folder `root` (each test has its own; the
/// front end runs elsewhere).
fn agents_in(agent: &str, root: &std::path::Path) -> Vec<u32> {
    processes_with(agent)
        .iter()
        .map(|line| line.split(':').next().unwrap().parse().unwrap())
        .filter(|pid: &u32| {
            std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd == root)
        })
        .collect()
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z')))
}

/// An agent that sends its modes as a configuration option of category `mode` (opencode does):
/// the prompt shows the mode, `/mode` lists it and `/mode ID` sets it through
/// `session/set_config_option`.
#[test]
fn an_option_of_category_mode_is_the_mode() {
    let node = Node::start_raw("mode-option", &[]);
    node.wait_prompt("[build] >");
    node.type_line("/mode");
    let screen = node.wait_for("  plan (Plan)", 1);
    assert!(screen.contains("[mode] current: build\n* build (Build): edits files\n"), "{screen}");
    assert!(!screen.contains("the agent offers no modes"), "{screen}");
    node.type_line("/mode plan");
    node.wait_for("[config] mode = plan", 1);
    node.wait_prompt("[plan] >");
    node.type_line("hello");
    node.wait_for("TURN hello in plan", 1);
    let methods: Vec<Value> = node
        .place
        .traced("out")
        .into_iter()
        .filter(|message| {
            message["method"] == "session/set_config_option"
                || message["method"] == "session/set_mode"
        })
        .collect();
    assert_eq!(methods.len(), 1, "{methods:?}");
    assert_eq!(
        methods[0]["params"],
        serde_json::json!({"sessionId": "raw-1", "configId": "mode", "value": "plan"})
    );
    // `/restart` of a running agent that can neither resume nor load: a new process, a new
    // session, its own mode again.
    let first: Value = serde_json::from_str(
        &std::fs::read_to_string(node.place.path().join("agent-pid.json")).unwrap(),
    )
    .unwrap();
    node.type_line("/restart");
    node.wait_for("[agent] it can neither resume nor load session raw-1: a new session starts", 1);
    node.wait_for("connected to acp-raw-agent 1.0 (session raw-1)", 2);
    node.wait_prompt("[build] >");
    let second: Value = serde_json::from_str(
        &std::fs::read_to_string(node.place.path().join("agent-pid.json")).unwrap(),
    )
    .unwrap();
    assert_ne!(first, second);
    assert!(!alive(u32::try_from(first.as_u64().unwrap()).unwrap()));
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);
}

/// No agent process outlives the front end, even when the front end is killed with SIGKILL: the
/// agent dies of its parent-death signal, and a process it started that does not read its stdin
/// is ended by the guard of its group, within a second or two.
#[test]
fn sigkill_of_the_front_end_ends_the_agent_and_what_it_started() {
    let peer = crate::acp::peer();
    let place = Place::new();
    let number = marker();
    let marker = format!("sleep {number}");
    let mut child = place
        .command(&peer, &[], &["--terminals", "tmux", "--prompt", &format!("orphan {number}")])
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    while !seen.contains("ORPHAN ") {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "{seen}");
        seen.push_str(&line);
    }
    let agents = agents_in(&peer.agent.to_string_lossy(), &place.root());
    assert_eq!(agents.len(), 1, "{agents:?}");
    assert_eq!(processes_with(&marker).len(), 1, "{:?}", processes_with(&marker));
    child.kill().unwrap();
    child.wait().unwrap();
    let gone = eventually(Duration::from_secs(2), || {
        processes_with(&marker).is_empty() && !alive(agents[0])
    });
    assert!(gone, "left running: {:?}, agent alive: {}", processes_with(&marker), alive(agents[0]));
}
