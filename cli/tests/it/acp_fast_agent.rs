//! A real third-party ACP agent under `termsprawlctl acp` (issue 16): fast-agent (`fast-agent-mcp`
//! on `PyPI`, pinned in `tests/python/requirements-fast-agent.txt`) runs as an ACP agent
//! (`fast-agent acp`) with its `passthrough` model, which needs no API key and turns a prompt
//! `***CALL_TOOL <server>__<tool> {json}` into a real MCP tool call. The calls go through the
//! bridge the front end injects (`termsprawlctl mcp`) to a real `termsprawl-headless serve` with
//! real tmux: `terminal_open`, `terminal_submit`, `terminal_read`.
//!
//! fast-agent's Python is `TERMSPRAWL_FAST_AGENT_PYTHON`, else `<repo>/.venv-fast-agent/bin/python`.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{ChildStdout, Command, Stdio};

use serde_json::Value;
use tempfile::TempDir;

use crate::acp::{TURN_END, eventually};
use crate::headless::Headless;
use crate::support::BIN;

/// fast-agent's Python: the `fast-agent` peer that `cargo xtask test` provisions (a test without
/// it fails, naming that command).
fn fast_agent_python() -> PathBuf {
    termsprawl_test_support::peers::python("fast-agent")
}

/// fast-agent's command line as an ACP agent (the `passthrough` model, `home` as its home), with
/// `extra` options before `--home`.
pub(crate) fn fast_agent(home: &Path, extra: &[&str]) -> Vec<String> {
    let mut argv = vec![fast_agent_python().to_string_lossy().into_owned()];
    argv.extend(
        ["-m", "fast_agent.cli", "--no-update-check", "acp", "--model", "passthrough"]
            .iter()
            .chain(extra)
            .map(|word| (*word).to_owned()),
    );
    argv.push("--home".to_owned());
    argv.push(home.to_string_lossy().into_owned());
    argv
}

/// Reads the transcript up to the end of the current turn.
fn turn(stdout: &mut BufReader<ChildStdout>) -> String {
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        let read = stdout.read_line(&mut line).unwrap();
        assert!(read > 0, "the transcript ended inside a turn:\n{seen}");
        seen.push_str(&line);
        if line.contains(TURN_END) {
            return seen;
        }
    }
}

/// A whole tool-calling session: fast-agent opens a terminal on the headless server, types a
/// command into it and reads it back, every call through the injected bridge.
#[test]
fn fast_agent_calls_termsprawl_tools_through_the_injected_bridge() {
    let dir = TempDir::new().unwrap();
    let dir_path = std::fs::canonicalize(dir.path()).unwrap();
    let (data, project, home) =
        (dir_path.join("data"), dir_path.join("project"), dir_path.join("fast-agent-home"));
    for path in [&data, &project, &home] {
        std::fs::create_dir(path).unwrap();
    }
    let server = Headless::start(&data, &project, |_| {});
    let session = server.session("fast-agent");
    let trace = dir_path.join("trace.jsonl");
    let log = dir_path.join("agent.log");
    let mut front_end = Command::new(BIN)
        .arg("--session")
        .arg(&session)
        .arg("acp")
        .arg("--cwd")
        .arg(&project)
        .args(["--permission", "allow-once"])
        .arg("--trace")
        .arg(&trace)
        .arg("--agent-log")
        .arg(&log)
        .arg("--")
        .args(fast_agent(&home, &[]))
        .current_dir(&project)
        .env("TMUX_TMPDIR", &dir_path)
        .env_remove("TERMSPRAWL_SESSION_FILE")
        .env_remove("TMUX")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = front_end.stdin.take().unwrap();
    let mut stdout = BufReader::new(front_end.stdout.take().unwrap());
    let mut prompt = |line: String| {
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        turn(&mut stdout)
    };
    let log_text = || std::fs::read_to_string(&log).unwrap_or_default();

    let opened = prompt(
        r#"***CALL_TOOL termsprawl__terminal_open {"title": "opened by fast-agent"}"#.to_owned(),
    );
    assert!(opened.contains("[tool] termsprawl/terminal_open"), "{opened}\n{}", log_text());
    assert!(opened.contains(TURN_END), "{opened}");
    let node_id = opened
        .split(r#""nodeId":""#)
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("no nodeId in:\n{opened}"))
        .to_owned();
    assert!(node_id.starts_with("terminal-"), "{node_id}");

    let submit = serde_json::json!({"nodeId": node_id, "command": "echo fast-agent-was-$((40+2))"});
    let submitted = prompt(format!("***CALL_TOOL termsprawl__terminal_submit {submit}"));
    assert!(submitted.contains(r#""ok":true"#), "{submitted}");

    let read = serde_json::json!({"nodeId": node_id});
    let mut last = String::new();
    for _ in 0..20 {
        last = prompt(format!("***CALL_TOOL termsprawl__terminal_read {read}"));
        assert!(last.contains("[tool] termsprawl/terminal_read"), "{last}");
        if last.contains("fast-agent-was-42") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
    assert!(last.contains("fast-agent-was-42"), "the read never showed the output:\n{last}");
    help_and_mode(&mut stdin, &mut stdout, &trace);
    drop(stdin);
    front_end.stdout = Some(stdout.into_inner());
    let finished = crate::acp::finish(front_end, std::time::Duration::from_mins(1));
    assert_eq!(finished.code(), Some(0), "{}\n{}", finished.stderr, log_text());
    assert!(!finished.stderr.contains("were not taken up"), "{}", finished.stderr);
    let session_id = finished
        .stderr
        .split("the session was ")
        .nth(1)
        .and_then(|rest| rest.split(';').next())
        .unwrap_or_else(|| panic!("no session id at the end:\n{}", finished.stderr))
        .to_owned();
    let resume = format!("; continue it with termsprawlctl acp --resume {session_id} -- AGENT");
    assert!(finished.stderr.contains(&resume), "{}", finished.stderr);
    // The calls went through the bridge of the session/new entry, not any other path.
    assert_eq!(
        sent(&trace, "session/new")["mcpServers"][0]["args"],
        serde_json::json!(["--session", session, "mcp"])
    );
    assert_eq!(sent(&trace, "session/set_mode")["modeId"], "agent");
    let prompts: Vec<Value> = std::fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|record| record["dir"] == "out" && record["msg"]["method"] == "session/prompt")
        .map(|record| record["msg"]["params"]["prompt"][0]["text"].clone())
        .collect();
    assert_eq!(prompts.last(), Some(&Value::from("/model")));

    list_and_resume(&project, &home, &session_id);
}

/// Issue 25: fast-agent's commands (announced after session/new) are listed by /help after ours,
/// and its one mode can be chosen.
fn help_and_mode(
    stdin: &mut std::process::ChildStdin,
    stdout: &mut BufReader<ChildStdout>,
    trace: &Path,
) {
    // fast-agent announces its commands after the session answer; /help lists what has come.
    let announced = eventually(std::time::Duration::from_mins(1), || {
        std::fs::read_to_string(trace)
            .is_ok_and(|trace| trace.contains("available_commands_update"))
    });
    assert!(announced, "fast-agent announced no commands");
    stdin.write_all(b"/help\n/mode agent\n").unwrap();
    let mut help = String::new();
    loop {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "the transcript ended:\n{help}");
        help.push_str(&line);
        if line.starts_with("[mode] ") {
            break;
        }
    }
    let (ours, agents) = help
        .split_once("[help] the agent's commands (sent to it as prompt text):\n")
        .unwrap_or_else(|| panic!("no agent commands in:\n{help}"));
    assert!(ours.contains("  /mode [ID] "), "{help}");
    for command in ["  /history ", "  /session ", "  /tools "] {
        assert!(agents.contains(command), "{command} missing:\n{help}");
    }
    assert!(help.ends_with("[mode] still agent\n"), "{help}");
    // fast-agent offers no model option but has /model: it goes to fast-agent.
    let model = help.lines().find(|line| line.starts_with("  /model <")).unwrap_or_default();
    assert!(model.ends_with("Inspect, switch, or update model settings"), "{help}");
    stdin.write_all(b"/model\n").unwrap();
    let answered = turn(stdout);
    assert!(answered.contains(TURN_END), "{answered}");
    assert!(!answered.contains("[model] the agent offers no model option"), "{answered}");
}

/// Issue 25: the session is listed by `session/list`, and continued with `session/resume`.
fn list_and_resume(project: &Path, home: &Path, session_id: &str) {
    let again = |options: &[&str]| {
        let output = Command::new(BIN)
            .arg("acp")
            .args(["--no-mcp", "--cwd"])
            .arg(project)
            .args(options)
            .arg("--")
            .args(fast_agent(home, &[]))
            .current_dir(project)
            .env("TMUX_TMPDIR", project)
            .env_remove("TERMSPRAWL_SESSION_FILE")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
        assert_eq!(output.status.code(), Some(0), "{options:?}: {}", text(&output.stderr));
        text(&output.stdout)
    };
    let listed = again(&["--list-sessions"]);
    assert!(listed.contains(&format!("\n  {session_id}  ")), "{listed}");
    assert!(listed.contains(&format!("({})\n", project.display())), "{listed}");
    let resumed = again(&["--resume", session_id, "--prompt", "after the resume"]);
    assert!(resumed.contains("after the resume\n"), "{resumed}");
    assert!(!resumed.contains("[stop reason"), "{resumed}");
}

/// The params of the first `method` request the front end sent, from its trace.
fn sent(trace: &Path, method: &str) -> Value {
    std::fs::read_to_string(trace)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .find(|record| record["dir"] == "out" && record["msg"]["method"] == method)
        .unwrap_or_else(|| panic!("no {method} in the trace"))["msg"]["params"]
        .clone()
}

/// Issue 25: at the line editor's prompt, Tab completes fast-agent's own commands (announced with
/// `available_commands_update`) and its one mode id, through a real pseudo-terminal.
#[test]
fn tab_completes_fast_agents_commands_and_mode_at_the_prompt() {
    let home = TempDir::new().unwrap();
    let agent = fast_agent(home.path(), &[]);
    let node = crate::acp_interactive::Node::start_other(&agent, &["--no-mcp"], &[]);
    node.wait_prompt("[agent] >");
    // Its commands come just after the session starts: Tab completes `/hi` once they are there.
    let completed = eventually(std::time::Duration::from_mins(1), || {
        node.tmux(&["send-keys", "-t", "=node:", "-l", "/hi"]);
        node.key("Tab");
        std::thread::sleep(std::time::Duration::from_millis(300));
        let shown = node.screen().contains("[agent] > /history");
        node.key("C-u");
        shown
    });
    assert!(completed, "{}", node.screen());
    node.tmux(&["send-keys", "-t", "=node:", "-l", "/mode a"]);
    node.key("Tab");
    node.wait_for("[agent] > /mode agent", 1);
    node.key("Enter");
    node.wait_for("[mode] still agent", 1);
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);
}

/// Issue 35: fast-agent's `write_text_file` over an existing notes.md sends its diff without the
/// old text, then asks with only the tool call's id: the ask shows, before anything is allowed,
/// the two lines the write removes (never a new file), and the change once.
#[test]
fn fast_agents_overwrite_shows_the_lines_it_removes_before_allowing() {
    let home = TempDir::new().unwrap();
    let agent = fast_agent(home.path(), &[]);
    let node = crate::acp_interactive::Node::start_other(&agent, &["--no-mcp"], &[]);
    node.wait_prompt("[agent] >");
    let notes = node.place.root().join("notes.md");
    std::fs::write(&notes, "# Notes\nfirst old line\nsecond old line\n").unwrap();
    let content = "# Notes\nnew line 1\nnew line 2\nnew line 3\n";
    let call = serde_json::json!({"path": notes, "content": content});
    node.type_line(&format!("***CALL_TOOL write_text_file {call}"));
    let before = node.wait_for("choose 1-", 1);
    let drawing = format!(
        "[diff] {} (2 lines removed, 3 added)\n  1 1   # Notes\n  @@ -2,2 +2,3 @@\n  2   - first \
         old line\n  3   - second old line\n    2 + new line 1\n    3 + new line 2\n    4 + new \
         line 3\n",
        notes.display()
    );
    assert!(before.contains(&drawing), "{before}");
    assert!(!before.contains("/dev/null") && !before.contains("new file"), "{before}");
    assert!(!before.contains("input: "), "{before}");
    assert_eq!(
        std::fs::read_to_string(&notes).unwrap(),
        "# Notes\nfirst old line\nsecond old line\n"
    );
    let allow = before
        .lines()
        .find(|line| line.ends_with(". Allow Once (allow_once)"))
        .and_then(|line| line.trim().split('.').next())
        .unwrap_or_else(|| panic!("no allow_once option:\n{before}"))
        .to_owned();
    node.type_line(&allow);
    let after = node.wait_for(TURN_END, 1);
    assert_eq!(after.matches("- first old line").count(), 1, "{after}");
    assert_eq!(after.matches("+ new line 3").count(), 1, "{after}");
    assert!(after.contains(&format!("[file] wrote {} (41 bytes)", notes.display())), "{after}");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), content);
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);
}

/// Issue 38: a real agent runs a 60 s command in one tool call. fast-agent calls `terminal_run`
/// once with `timeoutMs: 90000`; the injected bridge (`--mcp-max-wait-ms 120000`) chains its waits
/// on the server and answers once, finished, with the output; fast-agent's own MCP calls have no
/// time limit of their own.
#[test]
fn fast_agent_runs_a_60_s_command_in_one_tool_call() {
    let dir = TempDir::new().unwrap();
    let dir_path = std::fs::canonicalize(dir.path()).unwrap();
    let (data, project, home) =
        (dir_path.join("data"), dir_path.join("project"), dir_path.join("fast-agent-home"));
    for path in [&data, &project, &home] {
        std::fs::create_dir(path).unwrap();
    }
    let server = Headless::start(&data, &project, |_| {});
    let session = server.session("fast-agent");
    let trace = dir_path.join("trace.jsonl");
    let log = dir_path.join("agent.log");
    let run = serde_json::json!({"command": "sleep 60; echo done-after-60", "timeoutMs": 90000});
    let started = std::time::Instant::now();
    let output = Command::new(BIN)
        .arg("--session")
        .arg(&session)
        .arg("acp")
        .arg("--cwd")
        .arg(&project)
        .args(["--permission", "allow-once", "--mcp-max-wait-ms", "120000"])
        .arg("--trace")
        .arg(&trace)
        .arg("--agent-log")
        .arg(&log)
        .arg("--prompt")
        .arg(format!("***CALL_TOOL termsprawl__terminal_run {run}"))
        .arg("--")
        .args(fast_agent(&home, &[]))
        .current_dir(&project)
        .env("TMUX_TMPDIR", &dir_path)
        .env_remove("TERMSPRAWL_SESSION_FILE")
        .env_remove("TMUX")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let log_text = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}\n{}\n{log_text}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(elapsed >= std::time::Duration::from_mins(1), "{elapsed:?}");
    assert!(stdout.contains("[tool] termsprawl/terminal_run"), "{stdout}");
    // The one answer: the command finished, with its output.
    assert!(stdout.contains("done-after-60"), "{stdout}");
    assert!(stdout.contains(r#""running":false"#), "{stdout}");
    assert!(stdout.contains(r#""exitCode":0"#), "{stdout}");
    // One tool call: fast-agent announced one.
    let calls: Vec<Value> = std::fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|record| {
            record["dir"] == "in"
                && record["msg"]["params"]["update"]["sessionUpdate"] == "tool_call"
        })
        .collect();
    assert_eq!(calls.len(), 1, "{calls:?}");
}

/// Issue 38 item 4 with a real agent: fast-agent's shell (`--shell`) runs its `execute` tool as
/// an ACP terminal, here a canvas node of a real `termsprawl-headless`, and waits for its exit in
/// one `terminal/wait_for_exit`; meanwhile the front end in a tmux pane shows the wait's last line
/// on one line, rewritten in place.
#[test]
fn fast_agents_shell_command_shows_its_progress_in_place() {
    let dir = TempDir::new().unwrap();
    let dir_path = std::fs::canonicalize(dir.path()).unwrap();
    let (data, project, home) =
        (dir_path.join("data"), dir_path.join("project"), dir_path.join("fast-agent-home"));
    for path in [&data, &project, &home] {
        std::fs::create_dir(path).unwrap();
    }
    let server = Headless::start(&data, &project, |_| {});
    let session = server.session("fast-agent");
    let agent = fast_agent(&home, &["--shell"]);
    let node = crate::acp_interactive::Node::start_canvas_other(
        Some(&agent),
        &project,
        &session,
        &["--no-mcp", "--permission", "allow-once"],
    );
    node.wait_prompt("[agent] >");
    let call =
        serde_json::json!({"command": "for i in 1 2 3 4 5 6; do echo step-$i; sleep 2; done"});
    node.type_line(&format!("***CALL_TOOL execute {call}"));
    node.wait_for("last: \"step-2\"", 1);
    let screen = node.wait_for("last: \"step-4\"", 1);
    // fast-agent does not embed the terminal in its tool call: the terminal's own line shows it.
    let waiting: Vec<&str> =
        screen.lines().filter(|line| line.starts_with("[terminal] term-1 waiting ")).collect();
    assert_eq!(waiting.len(), 1, "one line, rewritten:\n{screen}");
    node.wait_for(TURN_END, 1);
    let screen = node.screen();
    assert!(screen.contains("step-6"), "{screen}");
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);
}
