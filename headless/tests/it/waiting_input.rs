//! "Waiting for input" (protocol 1.5.0, `spec/protocol.md` §4.8): `terminal_wait` with
//! `until: "input"`, and `waitingForInput`/`inputBy` of `terminal_read`'s screen view, over real
//! tmux and real programs. A prompt is reached within a second of showing; a sleep, a busy loop
//! and a program that prints are never reached; a shell at its prompt is, by the shell.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Agent, Fixture, ok};

/// A bash shell node (its prompt is readline's `pselect6`), without the machine's start files.
async fn bash(agent: &Agent) -> String {
    let opened = ok(agent, "terminal_open", json!({"title": "input"})).await;
    let node_id = opened["nodeId"].as_str().unwrap().to_owned();
    let started = ok(
        agent,
        "terminal_submit",
        json!({"nodeId": node_id, "command": "PS1='ba''sh> ' exec bash --norc --noprofile"}),
    )
    .await;
    // bash's prompt has shown.
    let prompt = ok(
        agent,
        "terminal_wait",
        json!({"nodeId": node_id, "until": "text", "text": "bash> ", "since": started["cursor"], "timeoutMs": 10000}),
    )
    .await;
    assert_eq!(prompt["reached"], true, "{prompt}");
    node_id
}

/// Waits for `text` after `since`; the answer must reach it.
async fn shown(agent: &Agent, node_id: &str, text: &str, since: &Value) -> Value {
    let seen = ok(
        agent,
        "terminal_wait",
        json!({"nodeId": node_id, "until": "text", "text": text, "since": since, "timeoutMs": 10000}),
    )
    .await;
    assert_eq!(seen["reached"], true, "{text:?} never showed: {seen}");
    seen
}

/// `terminal_wait {until: "input"}` with `timeout_ms`; the answer and how long it took.
async fn wait_input(agent: &Agent, node_id: &str, timeout_ms: u64) -> (Value, Duration) {
    let started = Instant::now();
    let answer = ok(
        agent,
        "terminal_wait",
        json!({"nodeId": node_id, "until": "input", "timeoutMs": timeout_ms}),
    )
    .await;
    (answer, started.elapsed())
}

/// The screen view of `node_id`.
async fn screen(agent: &Agent, node_id: &str) -> Value {
    ok(agent, "terminal_read", json!({"nodeId": node_id, "view": "screen"})).await
}

/// Asserts that `node_id`, its program having shown `prompt`, is waiting for input by `program`
/// within a second, in the wait's answer and in the screen view.
async fn check_reached(agent: &Agent, node_id: &str, prompt: &str, since: &Value, program: &str) {
    shown(agent, node_id, prompt, since).await;
    let (answer, took) = wait_input(agent, node_id, 5000).await;
    assert_eq!(answer["reached"], true, "{prompt:?}: {answer}");
    assert_eq!(answer["inputBy"], program, "{prompt:?}: {answer}");
    assert_eq!(answer["running"], true, "{answer}");
    assert!(took < Duration::from_secs(1), "{prompt:?} was reached after {took:?}");
    let read = screen(agent, node_id).await;
    assert_eq!((&read["waitingForInput"], &read["inputBy"]), (&json!(true), &json!(program)));
    // The members follow the 1.4.0 ones.
    let names: Vec<&String> = read.as_object().unwrap().keys().collect();
    assert_eq!(names[names.len() - 3..], ["alternateScreen", "waitingForInput", "inputBy"]);
}

/// Asserts that `node_id` does not wait for input for 1.5 s, in the wait and the screen view.
async fn check_not_reached(agent: &Agent, node_id: &str, what: &str) {
    let (answer, took) = wait_input(agent, node_id, 1500).await;
    assert_eq!(answer["reached"], false, "{what}: {answer}");
    assert_eq!(answer["inputBy"], Value::Null, "{what}: {answer}");
    assert_eq!(answer["running"], true, "{what}: {answer}");
    assert!(took >= Duration::from_millis(1400), "{what}: answered after {took:?}");
    let read = screen(agent, node_id).await;
    assert_eq!((&read["waitingForInput"], &read["inputBy"]), (&json!(false), &Value::Null));
}

#[tokio::test(flavor = "multi_thread")]
async fn prompts_in_a_shell_are_waiting_for_input_by_their_program() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let node_id = bash(&agent).await;
    let cases = [
        // Each prompt is spelt so that the shell's echo of the command line does not show it.
        ("read -p 'Na''me? ' name", "Name? ", "bash"),
        ("python3 -c 'input(\"x\" + \"> \")'", "x> ", "python3"),
        (
            "python3 -c 'import getpass; getpass.getpass(\"Sec\" + \"ret: \")'",
            "Secret: ",
            "python3",
        ),
        ("cat", "", "cat"),
        ("sh -c 'printf \"Proceed? [Y/%s] \" n; read answer'", "[Y/n] ", "sh"),
    ];
    for (command, prompt, program) in cases {
        let submitted =
            ok(&agent, "terminal_submit", json!({"nodeId": node_id, "command": command})).await;
        // What echoes the command line is the shell, before the program runs: wait past it.
        let prompt = if prompt.is_empty() { "cat\n" } else { prompt };
        check_reached(&agent, &node_id, prompt, &submitted["cursor"], program).await;
        // An answer (or the end of cat's input) lets the program finish.
        let keys = if program == "cat" { json!(["C-d"]) } else { json!(["Enter"]) };
        let typed = ok(
            &agent,
            "terminal_input",
            json!({"nodeId": node_id, "text": if program == "cat" { "" } else { "yes" }, "keys": keys}),
        )
        .await;
        // Back at bash's prompt, which is bash waiting for input.
        shown(&agent, &node_id, "bash> ", &typed["cursor"]).await;
    }
    let (answer, _) = wait_input(&agent, &node_id, 5000).await;
    assert_eq!((&answer["reached"], &answer["inputBy"]), (&json!(true), &json!("bash")));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_shell_at_its_prompt_is_waiting_for_input_by_the_shell() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    // The test configuration's shell is /bin/sh: it reads its command line with `read`.
    let opened = ok(&agent, "terminal_open", json!({"title": "sh"})).await;
    let node_id = opened["nodeId"].as_str().unwrap();
    let (answer, took) = wait_input(&agent, node_id, 5000).await;
    assert_eq!((&answer["reached"], &answer["inputBy"]), (&json!(true), &json!("sh")), "{answer}");
    assert!(took < Duration::from_secs(1), "reached after {took:?}");
    // bash reads its command line through readline's `pselect6`.
    let bash_node = bash(&agent).await;
    let (answer, took) = wait_input(&agent, &bash_node, 5000).await;
    assert_eq!((&answer["reached"], &answer["inputBy"]), (&json!(true), &json!("bash")));
    assert!(took < Duration::from_secs(1), "reached after {took:?}");
    assert_eq!(screen(&agent, &bash_node).await["inputBy"], "bash");
}

#[tokio::test(flavor = "multi_thread")]
async fn run_nodes_waiting_at_a_prompt_are_reached_by_the_program_not_the_wrapper() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let cases = [
        ("read -p 'Name? ' name; echo \"hi $name\"", "Name? ", "bash"),
        (
            "python3 -c 'import getpass; print(len(getpass.getpass(\"Password: \")))'",
            "Password: ",
            "python3",
        ),
    ];
    for (command, prompt, program) in cases {
        // `read -p` is bash's: the run node's `sh` would not have it.
        let command = if program == "bash" {
            format!("bash -c {}", termsprawl_protocol::shell::single_quoted(command))
        } else {
            command.to_owned()
        };
        let run = ok(&agent, "terminal_run", json!({"command": command, "timeoutMs": 0})).await;
        let node_id = run["nodeId"].as_str().unwrap().to_owned();
        check_reached(&agent, &node_id, prompt, &json!(0), program).await;
        let typed = ok(
            &agent,
            "terminal_input",
            json!({"nodeId": node_id, "text": "abc", "keys": ["Enter"]}),
        )
        .await;
        let ended = ok(
            &agent,
            "terminal_wait",
            json!({"nodeId": node_id, "until": "exit", "since": typed["cursor"], "timeoutMs": 10000}),
        )
        .await;
        assert_eq!((&ended["reached"], &ended["exitCode"]), (&json!(true), &json!(0)), "{ended}");
        // A finished node waits for nothing, and a wait for input on it times out.
        let (answer, _) = wait_input(&agent, &node_id, 300).await;
        assert_eq!((&answer["reached"], &answer["inputBy"]), (&json!(false), &Value::Null));
        assert_eq!(answer["running"], false, "{answer}");
        assert_eq!(screen(&agent, &node_id).await["waitingForInput"], false);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sleep_a_busy_loop_and_steady_output_are_not_waiting_for_input() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let cases = [
        ("sleep 30", "a sleep"),
        ("python3 -c 'while True: pass'", "a busy loop"),
        ("while :; do echo tick; sleep 0.05; done", "a shell loop printing steadily"),
        (
            "python3 -u -c 'import time\nwhile True: print(\"x\"); time.sleep(0.1)'",
            "python printing",
        ),
        // cat reads the terminal, but a job in the background prints all the while.
        ("(while :; do echo bg; sleep 0.1; done) & cat", "cat while output arrives"),
    ];
    for (command, what) in cases {
        let node_id = bash(&agent).await;
        let submitted =
            ok(&agent, "terminal_submit", json!({"nodeId": node_id, "command": command})).await;
        // The command line's echo has arrived: the program runs.
        shown(&agent, &node_id, "\n", &submitted["cursor"]).await;
        check_not_reached(&agent, &node_id, what).await;
        // Its programs end, so that no busy loop holds the machine's other tests up.
        ok(&agent, "terminal_close", json!({"nodeId": node_id})).await;
    }
    // A run node that sleeps, and one that computes.
    for (command, what) in
        [("sleep 30", "a sleeping run node"), ("while :; do :; done", "a busy run node")]
    {
        let run = ok(&agent, "terminal_run", json!({"command": command, "timeoutMs": 0})).await;
        let node_id = run["nodeId"].as_str().unwrap();
        check_not_reached(&agent, node_id, what).await;
        ok(&agent, "terminal_kill", json!({"nodeId": node_id})).await;
    }
}

/// `terminal_list`'s entry of `node_id`.
fn entry<'a>(list: &'a Value, node_id: &str) -> &'a Value {
    list.as_array()
        .unwrap()
        .iter()
        .find(|entry| entry["nodeId"] == node_id)
        .unwrap_or_else(|| panic!("{node_id} is not listed: {list}"))
}

/// Calls `terminal_list` until `done` holds (5 s at most); the last list.
async fn list_until(agent: &Agent, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let list = ok(agent, "terminal_list", json!({})).await;
        if done(&list) || Instant::now() >= deadline {
            return list;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn terminal_list_says_which_terminals_wait_for_input_and_by_what_also_after_a_restart() {
    let mut fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let shell = ok(&agent, "terminal_open", json!({"title": "sh"})).await["nodeId"].clone();
    let asking = ok(
        &agent,
        "terminal_run",
        json!({"command": "python3 -c 'input(\"name? \")'", "timeoutMs": 0}),
    )
    .await["nodeId"]
        .clone();
    let read_p = json!({"command": "bash -c \"read -p 'Name? ' name\"", "timeoutMs": 0});
    let prompting = ok(&agent, "terminal_run", read_p).await["nodeId"].clone();
    let sleeping = ok(&agent, "terminal_run", json!({"command": "sleep 30", "timeoutMs": 0})).await
        ["nodeId"]
        .clone();
    let finished =
        ok(&agent, "terminal_run", json!({"command": "exit 3", "timeoutMs": 10000})).await;
    assert_eq!(finished["exitCode"], 3, "{finished}");
    let finished = finished["nodeId"].clone();
    let expected = [
        (&shell, json!(true), json!("sh")),
        (&asking, json!(true), json!("python3")),
        (&prompting, json!(true), json!("bash")),
        (&sleeping, json!(false), Value::Null),
        (&finished, json!(false), Value::Null),
        // The agent's own node: its /bin/sh at its prompt.
        (&json!(agent.node_id), json!(true), json!("sh")),
    ];
    let shows = |list: &Value| {
        expected.iter().all(|(node_id, waiting, by)| {
            let entry = entry(list, node_id.as_str().unwrap());
            (&entry["waitingForInput"], &entry["inputBy"]) == (waiting, by)
        })
    };
    let list = list_until(&agent, shows).await;
    assert!(shows(&list), "{list:#}");
    // After a restart the panes' processes are learnt again (the liveness round, or the first
    // wait); until then nothing reads as waiting.
    fixture.restart().await;
    let list = list_until(&agent, shows).await;
    assert!(shows(&list), "{list:#}");
}
