//! Calling operations and checking their result shapes (`spec/protocol.md` §4.5, via
//! [`crate::shapes`]): the read-only ones always, the mutating ones only with `--mutating`, on a
//! shell terminal the run opens itself and closes again.

use std::time::Duration;

use serde_json::{Value, json};
use termsprawl_protocol::results::member::OUTPUT;

use crate::ctx::{Ctx, Who};
use crate::shapes;

const RESULTS: &str = "protocol.md §4.5";

/// Why an operation is never called, even with `--mutating`.
const NEVER: &[(&str, &str)] = &[
    ("sticky_open", "its node cannot be removed through the protocol"),
    ("canvas_group", "its group frame cannot be removed through the protocol"),
    ("artifact_open", "its node cannot be removed through the protocol"),
    ("agent_launch", "it starts an agent whose node only the person may close"),
    ("terminal_external", "it opens a window on the person's screen"),
    ("agent_send", "it needs a link the person enables and types into a peer agent's prompt"),
    ("agent_reply", "it needs a request addressed to this agent"),
    ("agent_task", "it needs a task id of a request"),
];

/// Calls `operation` as the first session and checks the shape; returns the value on success.
/// A failure of an operation that may legitimately fail (the project tab hidden, …) is a SKIP
/// when `may_fail`.
async fn shaped(
    ctx: &mut Ctx,
    id: &str,
    operation: &str,
    args: Value,
    may_fail: bool,
) -> Option<Value> {
    let rule = format!("{operation} answers a value of the contract's shape");
    if !ctx.lists(operation) {
        ctx.skip(id, RESULTS, &rule, &format!("{operation} is not listed"));
        return None;
    }
    let called = ctx.call(Who::First, operation, &args).await;
    match called.value() {
        Ok(value) => {
            match shapes::check(ctx.version, operation, &args, &value) {
                None => ctx.pass(id, RESULTS, &rule),
                Some(problem) => {
                    ctx.fail_with(id, RESULTS, &rule, &problem, &called.sent(), &called.received());
                }
            }
            Some(value)
        }
        Err(problem) if may_fail && called.failed() => {
            ctx.skip(id, RESULTS, &rule, &format!("the server refused it ({problem})"));
            None
        }
        Err(problem) => {
            ctx.fail_with(id, RESULTS, &rule, &problem, &called.sent(), &called.received());
            None
        }
    }
}

pub(crate) async fn check(ctx: &mut Ctx) {
    read_only(ctx).await;
    mutating(ctx).await;
    for (operation, why) in NEVER {
        if ctx.lists(operation) {
            ctx.skip(
                &format!("result.{operation}"),
                RESULTS,
                &format!("{operation} answers a value of the contract's shape"),
                &format!("never called: {why}"),
            );
        }
    }
}

async fn read_only(ctx: &mut Ctx) {
    if let Some(operation) =
        termsprawl_protocol::operation("guide_read").filter(|_| ctx.lists("guide_read"))
    {
        for topic in ctx.enum_values(operation, "topic") {
            shaped(
                ctx,
                &format!("result.guide_read:{topic}"),
                "guide_read",
                json!({"topic": topic}),
                false,
            )
            .await;
        }
    }
    shaped(ctx, "result.canvas_list", "canvas_list", json!({}), true).await;
    shaped(ctx, "result.browser_list", "browser_list", json!({}), true).await;
    shaped(ctx, "result.agent_cards", "agent_cards", json!({}), true).await;
    shaped(ctx, "result.context_read", "context_read", json!({}), true).await;
    // 1.5.0: both only read; a search for a text nobody printed.
    if ctx.lists("terminal_list") {
        shaped(ctx, "result.terminal_list", "terminal_list", json!({}), true).await;
    }
    if ctx.lists("terminal_search") {
        let args = json!({"pattern": "conformance-never-printed", "limit": 1});
        shaped(ctx, "result.terminal_search", "terminal_search", args, true).await;
    }
    if let Some(status) = shaped(ctx, "result.agent_status", "agent_status", json!({}), false).await
    {
        let me = ctx.first.node_id().to_owned();
        let project = ctx.first.project_id().to_owned();
        let entries = status.as_array().cloned().unwrap_or_default();
        let problem = if entries.iter().any(|entry| entry["nodeId"] == me.as_str()) {
            entries
                .iter()
                .find(|entry| entry["projectId"] != project.as_str())
                .map(|entry| format!("an entry of another project: {entry}"))
        } else {
            Some(format!("the caller {me} is not listed"))
        };
        ctx.verdict(
            "result.agent_status-scope",
            "protocol.md §6.4",
            "agent_status lists the caller and only sessions of its project",
            problem,
        );
    }
    // The caller's own terminal: reading it changes nothing.
    let me = ctx.first.node_id().to_owned();
    for (suffix, max_chars) in
        [("", json!(5)), (":clamp-zero", json!(0)), (":clamp-fraction", json!(0.5))]
    {
        shaped(
            ctx,
            &format!("result.terminal_read{suffix}"),
            "terminal_read",
            json!({"nodeId": me, "maxChars": max_chars}),
            true,
        )
        .await;
    }
}

#[expect(clippy::too_many_lines, reason = "the rules of one group, in the order they run")]
async fn mutating(ctx: &mut Ctx) {
    const IDS: &[&str] = &[
        "mutate.terminal_open",
        "mutate.canvas_list",
        "mutate.canvas_list-sees-it",
        "mutate.terminal_read",
        "mutate.terminal_submit",
        "mutate.submitted-output",
        "mutate.terminal_input",
        "mutate.terminal_interrupt",
        "mutate.canvas_move",
        "mutate.canvas_resize",
        "mutate.canvas_select",
        "mutate.terminal_close",
        "mutate.closed-node-gone",
    ];
    if !ctx.mutating {
        for id in IDS {
            ctx.skip(
                id,
                RESULTS,
                "a mutating operation on a terminal the run opens and closes",
                "mutating operations need --mutating",
            );
        }
        crate::waits::skip_all(ctx, "mutating operations need --mutating");
        ctx.skip(
            "isolation.cross-project-terminal",
            "protocol.md §6.1",
            "a terminal of another project is out of reach",
            "needs --mutating",
        );
        ctx.skip(
            "links.shell-shared",
            "headless rule agent-link-isolation (docs/conformance.md)",
            "plain shell terminals stay shared within the project",
            "needs --mutating",
        );
        return;
    }
    let Some(opened) = shaped(
        ctx,
        "mutate.terminal_open",
        "terminal_open",
        json!({"title": "conformance"}),
        false,
    )
    .await
    else {
        for id in &IDS[1..] {
            ctx.skip(
                id,
                RESULTS,
                "a mutating operation on a terminal the run opens and closes",
                "terminal_open did not open a terminal",
            );
        }
        crate::waits::skip_all(ctx, "terminal_open did not open a terminal");
        ctx.skip(
            "isolation.cross-project-terminal",
            "protocol.md §6.1",
            "a terminal of another project is out of reach",
            "terminal_open did not open a terminal",
        );
        ctx.skip(
            "links.shell-shared",
            "headless rule agent-link-isolation (docs/conformance.md)",
            "plain shell terminals stay shared within the project",
            "terminal_open did not open a terminal",
        );
        return;
    };
    let node = opened["nodeId"].as_str().unwrap_or_default().to_owned();
    if let Some(list) = shaped(ctx, "mutate.canvas_list", "canvas_list", json!({}), true).await {
        let found = list.as_array().is_some_and(|nodes| {
            nodes.iter().any(|item| item["nodeId"] == node.as_str() || item["id"] == node.as_str())
        });
        ctx.verdict(
            "mutate.canvas_list-sees-it",
            "protocol.md §4.3",
            "canvas_list shows the terminal terminal_open made",
            (!found).then(|| format!("{node} is not listed")),
        );
    } else {
        ctx.skip(
            "mutate.canvas_list-sees-it",
            "protocol.md §4.3",
            "canvas_list shows the terminal terminal_open made",
            "canvas_list failed",
        );
    }
    shaped(ctx, "mutate.terminal_read", "terminal_read", json!({"nodeId": node}), false).await;
    // The output line exists only once the shell ran the command.
    let marker = "conformance-submitted";
    let command = "printf 'conformance-%s\\n' submitted";
    let submitted = shaped(
        ctx,
        "mutate.terminal_submit",
        "terminal_submit",
        json!({"nodeId": node, "command": command}),
        false,
    )
    .await;
    if submitted.is_some() {
        let mut seen = false;
        for _ in 0..100 {
            let called = ctx.call(Who::First, "terminal_read", &json!({"nodeId": node})).await;
            let output = called
                .value()
                .ok()
                .and_then(|value| value[OUTPUT].as_str().map(str::to_owned))
                .unwrap_or_default();
            if output.lines().any(|line| line.trim_end() == marker) {
                seen = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        ctx.verdict(
            "mutate.submitted-output",
            "protocol.md §4.3",
            "terminal_submit runs the command: its output appears in terminal_read",
            (!seen).then(|| format!("{marker:?} did not appear within 10 s")),
        );
    } else {
        ctx.skip(
            "mutate.submitted-output",
            "protocol.md §4.3",
            "terminal_submit runs the command: its output appears in terminal_read",
            "terminal_submit failed",
        );
    }
    crate::waits::check(ctx, &node).await;
    shaped(
        ctx,
        "mutate.terminal_input",
        "terminal_input",
        json!({"nodeId": node, "text": "x"}),
        false,
    )
    .await;
    shaped(ctx, "mutate.terminal_interrupt", "terminal_interrupt", json!({"nodeId": node}), false)
        .await;
    shaped(
        ctx,
        "mutate.canvas_move",
        "canvas_move",
        json!({"nodeId": node, "x": 40, "y": 40}),
        true,
    )
    .await;
    shaped(
        ctx,
        "mutate.canvas_resize",
        "canvas_resize",
        json!({"nodeId": node, "width": 480, "height": 320}),
        true,
    )
    .await;
    shaped(ctx, "mutate.canvas_select", "canvas_select", json!({"nodeIds": [node]}), true).await;
    crate::isolation::with_terminal(ctx, &node).await;
    shaped(ctx, "mutate.terminal_close", "terminal_close", json!({"nodeId": node}), false).await;
    let called = ctx.call(Who::First, "terminal_read", &json!({"nodeId": node})).await;
    let problem = (!called.failed())
        .then(|| "terminal_read of the closed terminal did not fail with 400".to_owned());
    match problem {
        None => {
            ctx.pass("mutate.closed-node-gone", "protocol.md §4.3", "a closed terminal is gone");
        }
        Some(problem) => ctx.fail_with(
            "mutate.closed-node-gone",
            "protocol.md §4.3",
            "a closed terminal is gone",
            &problem,
            &called.sent(),
            &called.received(),
        ),
    }
}
