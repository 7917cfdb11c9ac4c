//! Issue 16: `termsprawlctl acp` against the message orders, logins and stops of the registry
//! agents, reproduced by the byte-exact scripted agent `tests/python/acp_raw_agent.py` (one
//! scenario per run, chosen by `ACP_RAW_SCENARIO`; what it saw lands in `ACP_RAW_STATE`).

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::acp::{Finished, Peer, Place, eventually, finish, peer, repo, run};
use crate::support::Fixture;

/// The scripted agent.
pub(crate) fn raw_agent() -> PathBuf {
    repo().join("tests/python/acp_raw_agent.py")
}

/// `termsprawlctl [program] acp --cwd ROOT --trace TRACE [options] -- python acp_raw_agent.py`
/// with the scenario and the place as its state directory, stdin from `/dev/null`.
pub(crate) fn raw(
    place: &Place,
    peer: &Peer,
    scenario: &str,
    program: &[&str],
    options: &[&str],
) -> Command {
    let agent = raw_agent();
    let mut command =
        place.front_end(program, options, &[peer.python.as_os_str(), agent.as_os_str()]);
    command
        .env("ACP_RAW_SCENARIO", scenario)
        .env("ACP_RAW_STATE", place.path())
        .env_remove("ACP_RAW_TEST_KEY");
    command
}

/// A JSON file the agent wrote into the place.
fn state(place: &Place, name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(place.path().join(name)).unwrap()).unwrap()
}

/// Whether a process exists and is not a zombie.
fn alive(pid: u64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z')))
}

fn send_signal(pid: u32, signal: &str) {
    let status = Command::new("kill").args([signal, &pid.to_string()]).status().unwrap();
    assert!(status.success());
}

/// Reads the child's stdout until a line contains `needle`; returns what was read.
fn read_until(stdout: &mut BufReader<std::process::ChildStdout>, needle: &str) -> String {
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        let read = stdout.read_line(&mut line).unwrap();
        assert!(read > 0, "the transcript ended before {needle:?}:\n{seen}");
        seen.push_str(&line);
        if line.contains(needle) {
            return seen;
        }
    }
}

/// Item 1: Gemini CLI writes its `session/new` answer and an update for the new session in one
/// write; the update is shown, never skipped as "another session".
#[test]
fn an_update_written_with_the_session_new_answer_is_shown() {
    let peer = peer();
    let place = Place::new();
    let finished = run(raw(
        &place,
        &peer,
        "update-with-session",
        &[],
        &["--agent-log", "-", "--prompt", "hi"],
    ));
    assert_eq!(finished.code(), Some(0), "{}\n{}", finished.stdout, finished.stderr);
    assert!(finished.stdout.contains("EARLY UPDATE for the new session"), "{}", finished.stdout);
    assert!(finished.stdout.contains("TURN hi"), "{}", finished.stdout);
    assert!(!finished.stderr.contains("skipped"), "{}", finished.stderr);
}

/// Item 2: an `env_var` method whose variables are set is used without a menu (codex-acp's
/// `OPENAI_API_KEY`), also with no terminal; without them the failure names what to set.
#[test]
fn an_env_var_login_is_used_when_its_variables_are_set_and_named_when_not() {
    let peer = peer();
    let place = Place::new();
    let mut command = raw(&place, &peer, "env-auth", &[], &["--agent-log", "-", "--prompt", "hi"]);
    command.env("ACP_RAW_TEST_KEY", "sk-test");
    let finished = run(command);
    assert_eq!(finished.code(), Some(0), "{}\n{}", finished.stdout, finished.stderr);
    assert_eq!(state(&place, "authenticate.json")["methodId"], "test-key");
    assert!(
        finished.stdout.contains("[auth] logging in with Test API key (test-key)"),
        "{}",
        finished.stdout
    );
    assert!(finished.stdout.contains("TURN hi"), "{}", finished.stdout);
    // Issue 25: a login that answers at once is not waited for in words.
    assert!(!finished.stdout.contains("[auth] waiting"), "{}", finished.stdout);

    let place = Place::new();
    let mut command = raw(&place, &peer, "env-auth", &[], &["--agent-log", "-", "--prompt", "hi"]);
    command.env("ACP_RAW_TEST_KEY", "");
    let finished = run(command);
    assert_eq!(finished.code(), Some(1));
    assert!(
        finished.stderr.contains("there is no terminal to choose a method; to log in without one, set ACP_RAW_TEST_KEY (Test API key (test-key))"),
        "{}",
        finished.stderr
    );
    assert!(!place.path().join("authenticate.json").exists());
    // No terminal, so no terminal login is offered to the agent.
    assert_eq!(state(&place, "initialize.json")["clientCapabilities"].get("auth"), None);
}

/// Item 3: a login that never finishes ends at Ctrl-C, at once and cleanly: exit 1, the agent
/// stopped.
#[test]
fn a_login_wait_ends_at_ctrl_c_and_the_agent_with_it() {
    let peer = peer();
    let place = Place::new();
    let mut command = raw(&place, &peer, "auth-hang", &[], &["--agent-log", "-", "--prompt", "hi"]);
    command.env("ACP_RAW_TEST_KEY", "sk-test");
    let child = command.spawn().unwrap();
    assert!(
        eventually(Duration::from_secs(30), || place.path().join("authenticate.json").exists()),
        "the agent never got authenticate"
    );
    let agent = state(&place, "agent-pid.json").as_u64().unwrap();
    assert!(alive(agent));
    let interrupted = Instant::now();
    send_signal(child.id(), "-INT");
    let finished = finish(child, Duration::from_secs(20));
    assert!(interrupted.elapsed() < Duration::from_secs(10), "{:?}", interrupted.elapsed());
    assert_eq!(finished.code(), Some(1), "{}", finished.stderr);
    assert!(
        finished.stderr.contains("stopped waiting for authenticate (Ctrl-C)"),
        "{}",
        finished.stderr
    );
    assert!(eventually(Duration::from_secs(10), || !alive(agent)), "the agent {agent} is left");
}

/// Item 4: an error's `data` is shown (codex-acp puts the cause there), and a failure says where
/// the agent's stderr went.
#[test]
fn failures_show_the_error_data_and_where_the_agent_log_is() {
    let peer = peer();
    let place = Place::new();
    let log = place.path().join("agent.log");
    let log_option = log.to_string_lossy().into_owned();
    let finished =
        run(raw(&place, &peer, "error-data", &[], &["--agent-log", &log_option, "--prompt", "hi"]));
    assert_eq!(finished.code(), Some(1));
    assert!(
        finished.stdout.contains(
            "[prompt failed: Internal error (code -32603): stream disconnected before completion: /v1/responses]"
        ),
        "{}",
        finished.stdout
    );
    assert!(
        finished.stderr.contains(&format!("the agent's stderr is in {}", log.display())),
        "{}",
        finished.stderr
    );
}

/// Starts the `ignore-cancel` scenario (a prompt that is never answered, a cancel that is
/// ignored) and returns the child once the agent waits, with its transcript and pid.
fn ignored_cancel(
    place: &Place,
    peer: &Peer,
    options: &[&str],
    stdin: Stdio,
) -> (std::process::Child, BufReader<std::process::ChildStdout>, u64) {
    let mut command = raw(place, peer, "ignore-cancel", &[], options);
    command.stdin(stdin);
    let mut child = command.spawn().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    if let Some(stdin) = child.stdin.as_mut() {
        stdin.write_all(b"wait here\n").unwrap();
    }
    read_until(&mut stdout, "WAITING");
    let agent = state(place, "pids.json")["agent"].as_u64().unwrap();
    (child, stdout, agent)
}

/// Item 5: when the agent ignores `session/cancel`, a second Ctrl-C stops waiting at once (not
/// after 30 s) and stops the agent.
#[test]
fn a_second_ctrl_c_stops_a_turn_whose_cancel_is_ignored() {
    let peer = peer();
    let place = Place::new();
    let (mut child, mut stdout, agent) =
        ignored_cancel(&place, &peer, &["--agent-log", "-", "--prompt", "hi"], Stdio::null());
    send_signal(child.id(), "-INT");
    read_until(&mut stdout, "(cancelling the turn)");
    let forced = Instant::now();
    send_signal(child.id(), "-INT");
    child.stdout = Some(stdout.into_inner());
    let finished = finish(child, Duration::from_secs(25));
    assert!(forced.elapsed() < Duration::from_secs(10), "{:?}", forced.elapsed());
    assert_eq!(finished.code(), Some(1));
    assert!(
        finished.stderr.contains("stopped waiting for the cancelled turn; stopping the agent"),
        "{}",
        finished.stderr
    );
    assert!(eventually(Duration::from_secs(10), || !alive(agent)), "the agent {agent} is left");
}

/// Item 5: `/quit` typed during a turn cancels it and ends the session after a brief wait,
/// instead of waiting for the turn.
#[test]
fn quit_during_a_turn_ends_the_session_soon() {
    let peer = peer();
    let place = Place::new();
    let (mut child, stdout, agent) =
        ignored_cancel(&place, &peer, &["--agent-log", "-"], Stdio::piped());
    let quit = Instant::now();
    child.stdin.as_mut().unwrap().write_all(b"/quit\n").unwrap();
    child.stdout = Some(stdout.into_inner());
    let finished = finish(child, Duration::from_secs(25));
    assert!(quit.elapsed() < Duration::from_secs(15), "{:?}", quit.elapsed());
    assert_eq!(finished.code(), Some(0), "{}", finished.stderr);
    assert!(finished.stdout.contains("(cancelling the turn)"), "{}", finished.stdout);
    assert!(eventually(Duration::from_secs(10), || !alive(agent)), "the agent {agent} is left");
}

/// Item 6: after `termsprawlctl acp` is killed with SIGKILL, the agent and the MCP bridge it
/// started from our `mcpServers` entry are gone.
#[test]
fn sigkill_of_the_front_end_takes_the_agent_and_its_mcp_server_with_it() {
    let peer = peer();
    let place = Place::new();
    let app = Fixture::new();
    let session = app.session_file().to_string_lossy().into_owned();
    let mut child = raw(
        &place,
        &peer,
        "sigkill",
        &["--session", &session],
        &["--agent-log", "-", "--prompt", "hi"],
    )
    .spawn()
    .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    read_until(&mut stdout, "WAITING");
    let pids = state(&place, "pids.json");
    let (agent, mcp) = (pids["agent"].as_u64().unwrap(), pids["mcp"].as_u64().unwrap());
    assert!(alive(agent) && alive(mcp), "{pids}");
    let cmdline = std::fs::read(format!("/proc/{mcp}/cmdline")).unwrap();
    assert!(String::from_utf8_lossy(&cmdline).contains("mcp"), "not the bridge: {cmdline:?}");
    child.kill().unwrap();
    let _ = child.wait();
    // Issue 35 item 4: within a second or two.
    assert!(
        eventually(Duration::from_secs(2), || !alive(agent) && !alive(mcp)),
        "left running: agent {} mcp {}",
        alive(agent),
        alive(mcp)
    );
}

/// Item 7: an agent that never starts the injected bridge is named after the first turn (Gemini
/// CLI starts none in a folder it does not trust); one that does start it is not.
#[test]
fn an_agent_that_never_starts_the_bridge_is_named_after_the_first_turn() {
    let peer = peer();
    let notice = "termsprawl's tools were not taken up";
    let check = |scenario: &str, options: &[&str]| -> Finished {
        let place = Place::new();
        let app = Fixture::new();
        let session = app.session_file().to_string_lossy().into_owned();
        let mut all = vec!["--agent-log", "-", "--prompt", "hi"];
        all.extend_from_slice(options);
        let finished = run(raw(&place, &peer, scenario, &["--session", &session], &all));
        assert_eq!(finished.code(), Some(0), "{scenario}: {}", finished.stderr);
        finished
    };
    let skipped = check("mcp-skip", &[]);
    assert_eq!(skipped.stderr.matches(notice).count(), 1, "{}", skipped.stderr);
    assert!(skipped.stderr.contains("Gemini CLI"), "{}", skipped.stderr);
    let started = check("mcp-start", &[]);
    assert!(!started.stderr.contains(notice), "{}", started.stderr);
    let not_injected = check("mcp-skip", &["--no-mcp"]);
    assert!(!not_injected.stderr.contains(notice), "{}", not_injected.stderr);
}

/// Issue 21 through the front end: `--mcp-read-only` and `--mcp-tools` reach the injected
/// `termsprawlctl mcp` as its `--read-only` and `--tools`.
#[test]
fn the_bridge_flags_reach_the_injected_mcp_server() {
    let peer = peer();
    let place = Place::new();
    let app = Fixture::new();
    let session_arg = app.session_file().to_string_lossy().into_owned();
    let finished = run(raw(
        &place,
        &peer,
        "mcp-skip",
        &["--session", &session_arg],
        &[
            "--agent-log",
            "-",
            "--mcp-read-only",
            "--mcp-tools",
            "terminal_open,terminal_read",
            "--prompt",
            "hi",
        ],
    ));
    assert_eq!(finished.code(), Some(0), "{}", finished.stderr);
    let new_session =
        place.traced("out").into_iter().find(|message| message["method"] == "session/new").unwrap();
    let session = app.session_file();
    assert_eq!(
        new_session["params"]["mcpServers"][0]["args"],
        serde_json::json!([
            "--session",
            session,
            "mcp",
            "--read-only",
            "--tools",
            "terminal_open,terminal_read"
        ])
    );
    let finished =
        run(raw(&place, &peer, "mcp-skip", &[], &["--mcp-tools", "terminal_open,no_such_tool"]));
    assert_eq!(finished.code(), Some(2));
    assert!(
        finished.stderr.contains(r#"names an unknown tool "no_such_tool""#),
        "{}",
        finished.stderr
    );
}

/// Item 9: in interactive mode a failed prompt is reported once.
#[test]
fn a_failed_prompt_is_reported_once_in_interactive_mode() {
    let peer = peer();
    let place = Place::new();
    let mut command = raw(&place, &peer, "prompt-fails", &[], &["--agent-log", "-"]);
    command.stdin(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"hi\n").unwrap();
    drop(stdin);
    let finished = finish(child, Duration::from_mins(1));
    assert_eq!(finished.code(), Some(0), "{}", finished.stderr);
    let all = format!("{}{}", finished.stdout, finished.stderr);
    assert_eq!(all.matches("Internal error (code -32603)").count(), 1, "{all}");
    assert!(finished.stdout.contains("[prompt failed: Internal error (code -32603)]"), "{all}");
}

/// Issue 25: an agent that offers its models in the unstable `models` member of the session answer
/// (Claude Code 0.16), not as a `configOptions` entry: `/model` lists them, `/model ID` and
/// `--model ID` send `session/set_model`, an unknown id is a local error and nothing is sent.
#[test]
fn models_of_the_unstable_models_member_are_listed_and_set_with_set_model() {
    let peer = peer();
    let place = Place::new();
    let mut command = raw(&place, &peer, "models", &[], &["--agent-log", "-"]);
    command.stdin(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"/model\n/model haiku\n/model opus\n/status\nhello\n").unwrap();
    drop(stdin);
    let finished = finish(child, Duration::from_mins(1));
    assert_eq!(finished.code(), Some(0), "{}", finished.stderr);
    assert!(
        finished.stdout.starts_with(
            "[model] model = default\n  * default (Default (recommended)): Sonnet\n    opus (Opus)\n\
             [model] invalid value \"haiku\" for model; choose one of: default, opus\n\
             [model] now opus\n"
        ),
        "{}",
        finished.stdout
    );
    assert!(finished.stdout.contains("[status] model opus\n"), "{}", finished.stdout);
    assert!(finished.stdout.contains("TURN hello with opus\n"), "{}", finished.stdout);
    assert_eq!(
        state(&place, "set-model.json"),
        serde_json::json!({"sessionId": "raw-1", "modelId": "opus"})
    );

    let place = Place::new();
    let finished = run(raw(
        &place,
        &peer,
        "models",
        &[],
        &["--agent-log", "-", "--model", "opus", "--prompt", "hi"],
    ));
    assert_eq!(finished.code(), Some(0), "{}", finished.stderr);
    assert!(finished.stdout.contains("TURN hi with opus\n"), "{}", finished.stdout);
    let place = Place::new();
    let finished = run(raw(
        &place,
        &peer,
        "models",
        &[],
        &["--agent-log", "-", "--model", "haiku", "--prompt", "hi"],
    ));
    assert_eq!(finished.code(), Some(2), "{}", finished.stderr);
    assert!(
        finished.stderr.contains("--model haiku: invalid value \"haiku\" for model"),
        "{}",
        finished.stderr
    );
    assert!(!place.path().join("set-model.json").exists());
}
