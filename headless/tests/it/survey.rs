//! Terminals an agent can survey (protocol 1.5.0): `terminal_list`, `terminal_search` and
//! `terminal_wait` on several texts or a pattern, over real tmux and real HTTP, as an agent works.

use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use termsprawl_headless::control::ControlRequest;
use termsprawl_headless::messages;

use crate::support::{Agent, Fixture, fails, ok};

fn id(value: &Value) -> String {
    value["nodeId"].as_str().unwrap().to_owned()
}

/// Starts `command` as a run node and answers at once, while it runs.
async fn start(agent: &Agent, command: &str) -> String {
    id(&ok(agent, "terminal_run", json!({"command": command, "timeoutMs": 0})).await)
}

/// Runs `command` to its end (20 s at most).
async fn run(agent: &Agent, command: &str) -> String {
    let done = ok(agent, "terminal_run", json!({"command": command, "timeoutMs": 20000})).await;
    assert_eq!(done["running"], false, "{done}");
    id(&done)
}

/// The entries of `terminal_list`.
async fn list(agent: &Agent) -> Vec<Value> {
    ok(agent, "terminal_list", json!({})).await.as_array().unwrap().clone()
}

fn entry<'a>(entries: &'a [Value], node_id: &str) -> &'a Value {
    entries
        .iter()
        .find(|entry| entry["nodeId"] == node_id)
        .unwrap_or_else(|| panic!("{node_id} is not listed: {entries:?}"))
}

/// An ISO 8601 UTC time of an answer, checked for its shape and read back in milliseconds.
fn time(value: &Value) -> u64 {
    let text = value.as_str().unwrap_or_else(|| panic!("not a time: {value}"));
    let bytes = text.as_bytes();
    assert!(
        text.len() == 24 && text.ends_with('Z') && bytes[10] == b'T' && bytes[19] == b'.',
        "not ISO 8601 UTC: {text}"
    );
    // Within a day of now, in order with the other fields: compare the times as text.
    let now = termsprawl_protocol::results::iso_utc(SystemTime::now());
    assert_eq!(text[..4], now[..4], "{text} vs {now}");
    let number: String = text.chars().filter(char::is_ascii_digit).collect();
    number[8..].parse().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_list_shows_shells_runs_and_how_they_ended() {
    let mut fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let shell = id(&ok(&agent, "terminal_open", json!({"title": "work"})).await);
    let failed = run(&agent, "echo checking; exit 3").await;
    let running = start(&agent, "echo serving; sleep 30").await;
    ok(&agent, "terminal_wait", json!({"nodeId": running, "until": "text", "text": "serving"}))
        .await;

    let entries = list(&agent).await;
    let ids: Vec<&str> = entries.iter().map(|entry| entry["nodeId"].as_str().unwrap()).collect();
    assert_eq!(ids, [agent.node_id.as_str(), &shell, &failed, &running], "canvas order");
    let keys: Vec<&str> = entries[1].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "nodeId",
            "title",
            "kind",
            "command",
            "running",
            "exitCode",
            "signal",
            "startedAt",
            "endedAt",
            "cursor",
            "lastOutputAt",
            "waitingForInput",
            "inputBy",
            "notify"
        ]
    );
    let own = entry(&entries, &agent.node_id);
    assert_eq!(
        (&own["kind"], &own["command"], &own["running"]),
        (&json!("agent"), &Value::Null, &json!(true))
    );

    let work = entry(&entries, &shell);
    assert_eq!(
        (&work["title"], &work["kind"], &work["command"], &work["running"], &work["endedAt"]),
        (&json!("work"), &json!("shell"), &Value::Null, &json!(true), &Value::Null)
    );
    time(&work["startedAt"]);

    let ended = entry(&entries, &failed);
    assert_eq!(
        (
            &ended["kind"],
            &ended["command"],
            &ended["running"],
            &ended["exitCode"],
            &ended["signal"]
        ),
        (&json!("run"), &json!("echo checking; exit 3"), &json!(false), &json!(3), &Value::Null)
    );
    assert_eq!(ended["cursor"], 9, "checking and its line feed");
    let (started_at, ended_at) = (time(&ended["startedAt"]), time(&ended["endedAt"]));
    let last_output = time(&ended["lastOutputAt"]);
    assert!(started_at <= last_output && last_output <= ended_at, "{ended}");
    assert_eq!(
        (&ended["waitingForInput"], &ended["inputBy"], &ended["notify"]),
        (&json!(false), &Value::Null, &json!(false))
    );

    let serving = entry(&entries, &running);
    assert_eq!(
        (&serving["kind"], &serving["running"], &serving["exitCode"], &serving["endedAt"]),
        (&json!("run"), &json!(true), &Value::Null, &Value::Null)
    );
    assert_eq!(serving["cursor"], 8);
    time(&serving["lastOutputAt"]);

    // Killed, it ends with its signal; a shell that exits ends without a status.
    ok(&agent, "terminal_kill", json!({"nodeId": running})).await;
    ok(&agent, "terminal_submit", json!({"nodeId": shell, "command": "exit"})).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let entries = loop {
        let entries = list(&agent).await;
        if entry(&entries, &shell)["running"] == false {
            break entries;
        }
        assert!(std::time::Instant::now() < deadline, "the shell never ended: {entries:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let killed = entry(&entries, &running);
    assert_eq!((&killed["running"], &killed["signal"]), (&json!(false), &json!("SIGKILL")));
    time(&killed["endedAt"]);
    let exited = entry(&entries, &shell);
    assert_eq!((&exited["exitCode"], &exited["signal"]), (&Value::Null, &Value::Null));
    time(&exited["endedAt"]);

    // A finished run's record, its end time included, outlives a restart.
    fixture.restart().await;
    let after = list(&agent).await;
    for node in [&failed, &running] {
        let (before, after) = (entry(&entries, node), entry(&after, node));
        assert_eq!(before, after, "{node} changed across the restart");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_search_finds_the_failed_test_in_the_third_terminal() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let mut terminals = Vec::new();
    for name in ["lint", "build", "tests"] {
        let failing = if name == "tests" { "echo 'FAILED test_x'; " } else { "" };
        let command = format!(
            "for i in 1 2 3; do echo {name} line $i; done; {failing}echo after one; echo after two; echo after three"
        );
        terminals.push(run(&agent, &command).await);
    }
    let found =
        ok(&agent, "terminal_search", json!({"pattern": "FAILED test_x", "context": 2})).await;
    assert_eq!(found["truncated"], false);
    let matches = found["matches"].as_array().unwrap();
    assert_eq!(matches.len(), 1, "{found}");
    let hit = &matches[0];
    assert_eq!(
        (&hit["nodeId"], &hit["line"], &hit["before"], &hit["after"]),
        (
            &json!(terminals[2]),
            &json!("FAILED test_x"),
            &json!(["tests line 2", "tests line 3"]),
            &json!(["after one", "after two"])
        )
    );
    // Reading on from the match's cursor starts at its line.
    let read =
        ok(&agent, "terminal_read", json!({"nodeId": terminals[2], "since": hit["cursor"]})).await;
    assert_eq!(read["output"], "FAILED test_x\nafter one\nafter two\nafter three\n");

    // Every terminal, oldest first, in list order; the limit cuts and says so.
    let lines =
        ok(&agent, "terminal_search", json!({"pattern": r"^\w+ line [13]$", "regex": true})).await;
    let seen: Vec<(&str, &str)> = lines["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["nodeId"].as_str().unwrap(), m["line"].as_str().unwrap()))
        .collect();
    let expected: Vec<(&str, String)> = terminals
        .iter()
        .zip(["lint", "build", "tests"])
        .flat_map(|(node, name)| [1, 3].map(|i| (node.as_str(), format!("{name} line {i}"))))
        .collect();
    assert_eq!(seen.len(), expected.len(), "{lines}");
    assert!(seen.iter().zip(&expected).all(|(a, b)| a.0 == b.0 && a.1 == b.1), "{lines}");
    assert_eq!(lines["truncated"], false);
    let cut = ok(&agent, "terminal_search", json!({"pattern": "line", "limit": 4})).await;
    assert_eq!((cut["matches"].as_array().unwrap().len(), &cut["truncated"]), (4, &json!(true)));
    // One terminal, after a cursor.
    let one = ok(
        &agent,
        "terminal_search",
        json!({"pattern": "line", "nodeId": terminals[1], "since": 11}),
    )
    .await;
    let lines: Vec<&Value> =
        one["matches"].as_array().unwrap().iter().map(|m| &m["line"]).collect();
    assert_eq!(lines, [&json!("build line 2"), &json!("build line 3")]);

    // Refused: a pattern that does not compile (nothing searched), a since without a terminal.
    let refused =
        fails(&agent, "terminal_search", json!({"pattern": "(FAILED", "regex": true})).await;
    assert_eq!(refused, "Invalid pattern: unclosed ( at 0");
    assert_eq!(
        fails(&agent, "terminal_search", json!({"pattern": "FAILED", "since": 3})).await,
        "Invalid since"
    );
    assert_eq!(
        fails(&agent, "terminal_search", json!({"pattern": "x", "nodeId": "terminal-404"})).await,
        messages::TERMINAL_NOT_FOUND
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wait_on_several_texts_or_a_pattern_says_which_matched_and_where() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let tests = start(&agent, "echo running; sleep 0.3; echo 'test_x FAILED'; sleep 30").await;
    let outcome = ok(
        &agent,
        "terminal_wait",
        json!({"nodeId": tests, "until": "text", "anyOf": ["PASSED", "FAILED"], "timeoutMs": 10000}),
    )
    .await;
    assert_eq!(
        (&outcome["reached"], &outcome["matched"], &outcome["matchCursor"]),
        (&json!(true), &json!(1), &json!(15)),
        "{outcome}"
    );
    let keys: Vec<&str> = outcome.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "nodeId",
            "reached",
            "running",
            "exitCode",
            "signal",
            "output",
            "truncated",
            "cursor",
            "matched",
            "matchCursor"
        ]
    );

    // A pattern whose match arrives in two pieces, seconds apart.
    let server = start(
        &agent,
        "echo booting; sleep 0.3; printf 'listening on '; sleep 0.5; echo 'port 8123'; sleep 30",
    )
    .await;
    let listening = ok(
        &agent,
        "terminal_wait",
        json!({"nodeId": server, "until": "text", "anyOf": [r"port 9\d+", r"listening on port 8\d+"], "regex": true, "timeoutMs": 10000}),
    )
    .await;
    assert_eq!(
        (&listening["reached"], &listening["matched"], &listening["matchCursor"]),
        (&json!(true), &json!(1), &json!(8)),
        "{listening}"
    );
    let single = ok(
        &agent,
        "terminal_wait",
        json!({"nodeId": server, "until": "text", "text": r"port \d{4}$", "regex": true, "since": 0}),
    )
    .await;
    assert_eq!((&single["matched"], &single["matchCursor"]), (&json!(0), &json!(21)));

    // A pattern's match lies within one line: `booting` and `listening` are two.
    let across = ok(
        &agent,
        "terminal_wait",
        json!({"nodeId": server, "until": "text", "text": r"booting\s+listening", "regex": true, "since": 0, "timeoutMs": 300}),
    )
    .await;
    assert_eq!(across["reached"], false, "{across}");

    // Not reached: matched and matchCursor are null; other conditions do not answer them.
    let missed = ok(
        &agent,
        "terminal_wait",
        json!({"nodeId": server, "until": "text", "anyOf": ["PASSED"], "timeoutMs": 100}),
    )
    .await;
    assert_eq!(
        (&missed["reached"], &missed["matched"], &missed["matchCursor"]),
        (&json!(false), &Value::Null, &Value::Null),
        "{missed}"
    );
    let quiet =
        ok(&agent, "terminal_wait", json!({"nodeId": server, "until": "quiet", "quietMs": 100}))
            .await;
    assert!(quiet.get("matched").is_none() && quiet.get("matchCursor").is_none(), "{quiet}");

    // A pattern that does not compile is refused before any waiting.
    // (Validation refuses a pattern outside the dialect of spec/protocol.md §5.1.)
    let began = std::time::Instant::now();
    let refused = fails(
        &agent,
        "terminal_wait",
        json!({"nodeId": server, "until": "text", "text": "port [8", "regex": true, "timeoutMs": 5000}),
    )
    .await;
    assert_eq!(refused, "Invalid text: unclosed [ at 5");
    assert!(began.elapsed() < Duration::from_secs(2));
    assert_eq!(
        fails(&agent, "terminal_wait", json!({"nodeId": server, "until": "text"})).await,
        messages::WAIT_TEXT_REQUIRED
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unlinked_agents_terminal_is_neither_listed_nor_searched() {
    let fixture = Fixture::start().await;
    let alpha = fixture.agent("alpha").await;
    let beta = fixture.agent("beta").await;
    // The person types into beta's terminal.
    let typed = fixture.guard.tmux(&[
        "send-keys",
        "-t",
        &format!("ts-{}", beta.node_id),
        "-l",
        "echo secret-$((6*7))\n",
    ]);
    assert!(typed.status.success());
    ok(
        &beta,
        "terminal_wait",
        json!({"nodeId": beta.node_id, "until": "text", "text": "secret-42", "since": 0}),
    )
    .await;
    let listed =
        |entries: &[Value], node: &str| entries.iter().any(|entry| entry["nodeId"] == node);
    let search = json!({"pattern": "secret-42"});

    assert!(!listed(&list(&alpha).await, &beta.node_id));
    assert_eq!(ok(&alpha, "terminal_search", search.clone()).await["matches"], json!([]));
    assert_eq!(
        fails(&alpha, "terminal_search", json!({"pattern": "secret", "nodeId": beta.node_id}))
            .await,
        messages::agent_read_not_linked(&alpha.node_id, &beta.node_id)
    );
    // Its own terminal, beta sees; over a link, alpha does too.
    assert!(listed(&list(&beta).await, &beta.node_id));
    let link = ControlRequest::Link { from: alpha.node_id.clone(), to: beta.node_id.clone() };
    fixture.server().control(link).await.unwrap();
    assert!(listed(&list(&alpha).await, &beta.node_id));
    let found = ok(&alpha, "terminal_search", search).await;
    assert_eq!(found["matches"][0]["nodeId"], json!(beta.node_id), "{found}");
}
