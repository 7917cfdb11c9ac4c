//! Rule `agent-link-isolation` (`docs/headless-rules.md`), over real tmux and real HTTP, with a
//! real xterm on a private Xvfb for `terminal_external`: the matrix of caller × target kind ×
//! terminal operation, every cell asserted; a link is directed; refusals change nothing; a link
//! disabled during a `terminal_wait` ends it refused; `session_info` declares the rule.

use std::time::Duration;

use serde_json::{Value, json};
use termsprawl_headless::control::ControlRequest;
use termsprawl_headless::messages;
use termsprawl_protocol::ToolResult;

use crate::support::{Agent, Fixture, call, fails, ok};
use termsprawl_test_support::xvfb::{Xvfb, require};

/// The columns of the matrix, in the order they run on each target (closing last).
const OPERATIONS: [&str; 9] = [
    "terminal_read",
    "terminal_read since",
    "terminal_wait",
    "terminal_submit",
    "terminal_input",
    "terminal_interrupt",
    "terminal_external",
    "terminal_kill",
    "terminal_close",
];

/// The expected answer of one cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// `ok:true`.
    Allow,
    /// `OWN_NODE`: "Use a separate shell terminal instead of writing into or closing your own agent".
    Own,
    /// `agent_read_not_linked(caller, target)`: "Reading another agent's terminal needs an enabled
    /// agent link from your node to it; ask the user to link the two nodes: termsprawl-headless
    /// link CALLER TARGET".
    NotLinked,
    /// `AGENT_NOT_YOURS`: "Another agent's terminal is driven only by the user: …".
    NotYours,
    /// `agent_close_refused(target)`: "Closing another agent is the user's decision; ask the user
    /// to close it: termsprawl-headless close TARGET".
    CloseRefused,
    /// `KILL_RUN_ONLY` (not a rule refusal: a plain shell has no run to kill).
    RunOnly,
}

use Expect::{Allow, CloseRefused, NotLinked, NotYours, Own, RunOnly};

/// The rows: which caller acts on which target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Row {
    /// Alpha on its own agent node.
    OwnAgent,
    /// Alpha on gamma, with the link alpha → gamma enabled.
    PeerLinked,
    /// Gamma on alpha: only alpha → gamma is linked, so gamma → alpha is not.
    PeerReverse,
    /// Alpha on beta, no link either way.
    PeerUnlinked,
    /// Alpha on a shell terminal that gamma opened.
    Shell,
    /// Alpha on a run node that gamma started with `terminal_run`.
    Run,
}

/// The matrix. Columns as [`OPERATIONS`]: read, read since, wait, submit, input, interrupt,
/// external, kill, close.
#[rustfmt::skip]
const MATRIX: [(Row, [Expect; 9]); 6] = [
    //                   read       since      wait       submit     input      interrupt  external   kill       close
    (Row::OwnAgent,     [Allow,     Allow,     Allow,     Own,       Own,       Own,       Allow,     Own,       Own]),
    (Row::PeerLinked,   [Allow,     Allow,     Allow,     NotYours,  NotYours,  NotYours,  NotYours,  NotYours,  CloseRefused]),
    (Row::PeerReverse,  [NotLinked, NotLinked, NotLinked, NotYours,  NotYours,  NotYours,  NotYours,  NotYours,  CloseRefused]),
    (Row::PeerUnlinked, [NotLinked, NotLinked, NotLinked, NotYours,  NotYours,  NotYours,  NotYours,  NotYours,  CloseRefused]),
    (Row::Shell,        [Allow,     Allow,     Allow,     Allow,     Allow,     Allow,     Allow,     RunOnly,   Allow]),
    (Row::Run,          [Allow,     Allow,     Allow,     Allow,     Allow,     Allow,     Allow,     Allow,     Allow]),
];

/// What a submit or an input types: its output (`cell-42`) differs from the typed text, and
/// neither may ever show up in an agent's terminal.
const COMMAND: &str = "echo cell-$((6*7))";

async fn link(fixture: &Fixture, from: &Agent, to: &Agent) {
    let request = ControlRequest::Link { from: from.node_id.clone(), to: to.node_id.clone() };
    fixture.server().control(request).await.unwrap();
}

fn node_id(value: &Value) -> String {
    value["nodeId"].as_str().unwrap().to_owned()
}

/// The arguments of a column on `target`.
fn args(operation: &str, target: &str) -> (&'static str, Value) {
    match operation {
        "terminal_read" => ("terminal_read", json!({"nodeId": target})),
        "terminal_read since" => ("terminal_read", json!({"nodeId": target, "since": 0})),
        "terminal_wait" => {
            ("terminal_wait", json!({"nodeId": target, "until": "exit", "timeoutMs": 100}))
        }
        "terminal_submit" => ("terminal_submit", json!({"nodeId": target, "command": COMMAND})),
        "terminal_input" => {
            ("terminal_input", json!({"nodeId": target, "text": format!("{COMMAND}\n")}))
        }
        "terminal_interrupt" => ("terminal_interrupt", json!({"nodeId": target})),
        "terminal_external" => ("terminal_external", json!({"nodeId": target})),
        "terminal_kill" => ("terminal_kill", json!({"nodeId": target})),
        "terminal_close" => ("terminal_close", json!({"nodeId": target})),
        other => unreachable!("no column {other}"),
    }
}

/// The pane text of a node, read with tmux from outside the server.
fn pane(fixture: &Fixture, node: &str) -> String {
    let output = fixture.guard.tmux(&["capture-pane", "-p", "-t", &format!("ts-{node}")]);
    assert!(output.status.success(), "capture-pane {node}: {output:?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_matrix_of_callers_targets_and_operations() {
    // Declared first so that it is dropped last, after the tmux server that the xterms attach to.
    let xvfb = Xvfb::start();
    let fixture = Fixture::start().await;
    let alpha = fixture.agent("alpha").await;
    let beta = fixture.agent("beta").await;
    let gamma = fixture.agent("gamma").await;
    link(&fixture, &alpha, &gamma).await;
    // The external terminal is a real xterm on the private X server.
    let preferences = json!({"externalTerminal": {
        "executable": "/usr/bin/env",
        "args": [format!("DISPLAY={}", xvfb.display()), require("xterm", "xterm"), "-e", "{command}"],
    }});
    std::fs::write(fixture.agent_tools().join("preferences.json"), preferences.to_string())
        .unwrap();
    // Gamma's shell and run node: shared within the project, whoever started them.
    let shell = node_id(&ok(&gamma, "terminal_open", json!({"title": "shared"})).await);
    // A run that ignores SIGINT, so that the interrupt leaves it for the kill to end.
    let run = ok(
        &gamma,
        "terminal_run",
        json!({"command": "trap '' INT; exec cat", "title": "run", "timeoutMs": 0}),
    )
    .await;
    assert_eq!(run["running"], true, "{run}");
    let run = node_id(&run);

    let mut cells = 0;
    for (row, expected) in MATRIX {
        let (caller, target) = match row {
            Row::OwnAgent => (&alpha, alpha.node_id.clone()),
            Row::PeerLinked => (&alpha, gamma.node_id.clone()),
            Row::PeerReverse => (&gamma, alpha.node_id.clone()),
            Row::PeerUnlinked => (&alpha, beta.node_id.clone()),
            Row::Shell => (&alpha, shell.clone()),
            Row::Run => (&alpha, run.clone()),
        };
        for (column, expect) in OPERATIONS.into_iter().zip(expected) {
            let (operation, arguments) = args(column, &target);
            let result = call(caller, operation, arguments).await;
            let cell = format!("{row:?} × {column}");
            match (expect, result) {
                (Allow, ToolResult::Success { value }) => {
                    let value = value.unwrap_or(Value::Null);
                    assert_eq!(value["nodeId"], target.as_str(), "{cell}: {value}");
                    if column == "terminal_kill" {
                        assert_eq!(
                            (&value["running"], &value["signal"]),
                            (&json!(false), &json!("SIGKILL")),
                            "{cell}"
                        );
                    }
                }
                (Allow, ToolResult::Failure { error }) => panic!("{cell}: failed: {error}"),
                (refusal, ToolResult::Success { value }) => {
                    panic!("{cell}: expected {refusal:?}, got {value:?}")
                }
                (refusal, ToolResult::Failure { error }) => {
                    let message = match refusal {
                        Own => messages::OWN_NODE.to_owned(),
                        NotLinked => messages::agent_read_not_linked(&caller.node_id, &target),
                        NotYours => messages::AGENT_NOT_YOURS.to_owned(),
                        CloseRefused => messages::agent_close_refused(&target),
                        RunOnly => messages::KILL_RUN_ONLY.to_owned(),
                        Allow => unreachable!(),
                    };
                    assert_eq!(error, message, "{cell}");
                }
            }
            cells += 1;
        }
    }
    assert_eq!(cells, 6 * 9);

    // The allowed cells took effect: the shell and the run node were closed ...
    let list = ok(&alpha, "canvas_list", json!({})).await;
    let ids: Vec<&str> =
        list.as_array().unwrap().iter().filter_map(|n| n["nodeId"].as_str()).collect();
    assert_eq!(ids, [alpha.node_id.as_str(), beta.node_id.as_str(), gamma.node_id.as_str()]);
    // ... and the refused ones changed nothing: every agent still runs, its session is valid,
    // and nothing was typed into it.
    for agent in [&alpha, &beta, &gamma] {
        let node = list.as_array().unwrap().iter().find(|n| n["nodeId"] == agent.node_id.as_str());
        assert_eq!(node.unwrap()["attached"], true, "{}", agent.node_id);
        ok(agent, "session_info", json!({})).await;
        let text = pane(&fixture, &agent.node_id);
        assert!(!text.contains("cell-"), "something was typed into {}:\n{text}", agent.node_id);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_link_is_directed_and_can_be_taken_back() {
    let fixture = Fixture::start().await;
    let alpha = fixture.agent("alpha").await;
    let gamma = fixture.agent("gamma").await;
    let read = |target: &Agent| json!({"nodeId": target.node_id});
    let not_linked =
        |from: &Agent, to: &Agent| messages::agent_read_not_linked(&from.node_id, &to.node_id);
    assert_eq!(fails(&alpha, "terminal_read", read(&gamma)).await, not_linked(&alpha, &gamma));
    link(&fixture, &alpha, &gamma).await;
    // The person types into gamma's terminal; over the link, alpha sees it.
    let typed = fixture.guard.tmux(&[
        "send-keys",
        "-t",
        &format!("ts-{}", gamma.node_id),
        "-l",
        "echo from-the-person-$((8*8))\n",
    ]);
    assert!(typed.status.success());
    let seen = ok(
        &alpha,
        "terminal_wait",
        json!({"nodeId": gamma.node_id, "until": "text", "text": "from-the-person-64", "since": 0, "timeoutMs": 10000}),
    )
    .await;
    assert_eq!(seen["reached"], true, "{seen}");
    // Gamma may not read alpha: the link is alpha → gamma only.
    assert_eq!(fails(&gamma, "terminal_read", read(&alpha)).await, not_linked(&gamma, &alpha));
    link(&fixture, &gamma, &alpha).await;
    ok(&gamma, "terminal_read", read(&alpha)).await;

    // Unlinked again, alpha may not read gamma any more.
    let unlink = ControlRequest::Unlink { from: alpha.node_id.clone(), to: gamma.node_id.clone() };
    fixture.server().control(unlink).await.unwrap();
    assert_eq!(fails(&alpha, "terminal_read", read(&gamma)).await, not_linked(&alpha, &gamma));
    assert_eq!(
        fails(&alpha, "terminal_read", json!({"nodeId": gamma.node_id, "since": 0})).await,
        not_linked(&alpha, &gamma)
    );
    // The reverse link stays.
    ok(&gamma, "terminal_read", read(&alpha)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_link_disabled_during_a_wait_ends_it_refused() {
    let fixture = Fixture::start().await;
    let alpha = fixture.agent("alpha").await;
    let gamma = fixture.agent("gamma").await;
    link(&fixture, &alpha, &gamma).await;
    let waiter = {
        let alpha = alpha.clone();
        let gamma = gamma.node_id.clone();
        tokio::spawn(async move {
            call(
                &alpha,
                "terminal_wait",
                json!({"nodeId": gamma, "until": "text", "text": "secret-81", "timeoutMs": 20000}),
            )
            .await
        })
    };
    // Give the wait time to pass its check in its turn and begin waiting: a wait refused then
    // would have answered at once.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(!waiter.is_finished(), "the linked wait must be waiting");
    let unlink = ControlRequest::Unlink { from: alpha.node_id.clone(), to: gamma.node_id.clone() };
    fixture.server().control(unlink).await.unwrap();
    let typed = fixture.guard.tmux(&[
        "send-keys",
        "-t",
        &format!("ts-{}", gamma.node_id),
        "-l",
        "echo secret-$((9*9))\n",
    ]);
    assert!(typed.status.success());
    match tokio::time::timeout(Duration::from_secs(15), waiter).await.unwrap().unwrap() {
        ToolResult::Failure { error } => {
            assert_eq!(error, messages::agent_read_not_linked(&alpha.node_id, &gamma.node_id));
        }
        ToolResult::Success { value } => panic!("the wait answered after the unlink: {value:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn session_info_declares_the_rule() {
    let fixture = Fixture::start().await;
    let alpha = fixture.agent("alpha").await;
    let info = ok(&alpha, "session_info", json!({})).await;
    assert_eq!(info["rules"], json!(["agent-link-isolation"]));
    let last = info.as_object().unwrap().keys().next_back().map(String::as_str);
    assert_eq!(last, Some("rules"));
}
