//! The terminals an agent can wait on (protocol 1.3.0, `docs/protocol-changelog.md`), with
//! `--mutating` and when the server lists them: `terminal_run`, `terminal_wait` (text after a
//! cursor, a timeout, the exit, a close while waiting), `terminal_kill`, cursors that never go
//! back, and the bad arguments of 1.3.0. Every node made here is closed again.
//!
//! Which error messages are contract: `Terminal was closed while waiting` (the operation's own
//! definition in the changelog names it); the others the changelog lists as the headless server's
//! are checked only as `ok:false` with HTTP 400 (see `docs/conformance.md`).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use termsprawl_protocol::results::member::{CURSOR, EXIT_CODE, OUTPUT, RUNNING};

use crate::ctx::{Ctx, Seen, Who};
use crate::shapes;

mod later;

const SHAPES: &str = "protocol.md §4.5 (1.3)";
const WAITS: &str = "protocol-changelog.md 1.3.0";
const LINKS: &str = "headless rule agent-link-isolation (docs/conformance.md)";

/// The message the changelog makes contract for a wait whose node is closed.
pub(crate) const CLOSED_WHILE_WAITING: &str = "Terminal was closed while waiting";

/// The rules of this group: id, section, rule.
pub(crate) const RULES: &[(&str, &str, &str)] = &[
    ("result.terminal_run", SHAPES, "terminal_run answers a value of the contract's shape"),
    (
        "wait.run-exit",
        WAITS,
        "terminal_run waits for the command: exitCode 3, its output, not running",
    ),
    (
        "wait.run-node-listed",
        WAITS,
        "the run node stays on the canvas as a terminal after its command exits",
    ),
    (
        "result.terminal_wait:exit",
        SHAPES,
        "terminal_wait until exit answers a value of the contract's shape",
    ),
    (
        "wait.exit-reached",
        WAITS,
        "terminal_wait until exit of an exited run node is reached at once, with its exit code",
    ),
    (
        "result.terminal_submit:cursor",
        SHAPES,
        "terminal_submit answers a value of the contract's shape",
    ),
    (
        "result.terminal_wait:text",
        SHAPES,
        "terminal_wait until text answers a value of the contract's shape",
    ),
    (
        "wait.text-since",
        WAITS,
        "terminal_wait until text with since from terminal_submit sees the command's output, and only what came after the cursor",
    ),
    (
        "result.terminal_read:since",
        SHAPES,
        "terminal_read with since answers a value of the contract's shape",
    ),
    ("wait.read-since", WAITS, "terminal_read with since answers only the output after the cursor"),
    (
        "result.terminal_wait:timeout",
        SHAPES,
        "a terminal_wait that times out answers a value of the contract's shape",
    ),
    (
        "wait.timeout",
        WAITS,
        "a terminal_wait that times out is ok with reached false, after about its timeoutMs",
    ),
    (
        "wait.kill-sigkill",
        WAITS,
        "terminal_kill ends a run node's command that ignores SIGTERM: signal SIGKILL",
    ),
    ("result.terminal_kill", SHAPES, "terminal_kill answers a value of the contract's shape"),
    (
        "wait.closed-while-waiting",
        WAITS,
        "a terminal_wait whose node is closed ends with ok:false `Terminal was closed while waiting`",
    ),
    ("wait.cursor-monotonic", WAITS, "a terminal's cursor never goes back across answers"),
    (
        "wait.follow-joins",
        WAITS,
        "following a terminal that prints all the time, each answer's cursor is the end of its output: read on from it, the outputs join into the whole stream",
    ),
    ("wait.bad-run-command", WAITS, "terminal_run with an empty command fails (ok:false, 400)"),
    (
        "wait.bad-run-cwd",
        WAITS,
        "terminal_run with a relative cwd, or one outside the project folder, fails (ok:false, 400)",
    ),
    (
        "wait.bad-run-env",
        WAITS,
        "terminal_run with an env item that is not NAME=value fails (ok:false, 400) without repeating the item",
    ),
    ("wait.bad-wait-text", WAITS, "terminal_wait until text without a text fails (ok:false, 400)"),
    (
        "wait.bad-kill-shell",
        WAITS,
        "terminal_kill of a terminal that terminal_run did not start fails (ok:false, 400)",
    ),
    ("links.run-node-shared", LINKS, "run nodes stay shared within the project"),
];

/// Skips every rule of the group with `why`.
pub(crate) fn skip_all(ctx: &mut Ctx, why: &str) {
    for (id, section, rule) in RULES {
        ctx.skip(id, section, rule, why);
    }
    later::skip_all(ctx, why);
}

/// The section and rule of `id`, from this group's table or the later members' ([`later::RULES`]).
fn rule(id: &str) -> (&'static str, &'static str) {
    RULES
        .iter()
        .find(|(known, _, _)| *known == id)
        .map_or_else(|| later::rule(id), |(_, section, rule)| (*section, *rule))
}

/// What the group has seen: cursors per node, in the order answered, and the nodes it made.
#[derive(Default)]
struct State {
    cursors: BTreeMap<String, Vec<u64>>,
    made: Vec<String>,
}

impl State {
    fn saw(&mut self, node: &str, value: &Value) {
        if let Some(cursor) = value[CURSOR].as_u64() {
            self.cursors.entry(node.to_owned()).or_default().push(cursor);
        }
    }
}

/// One call as the first session: the value when it succeeded with the contract's shape, and a
/// PASS or FAIL of `id` when given; the cursor it answered and the run node it made are recorded.
async fn shaped(
    ctx: &mut Ctx,
    state: &mut State,
    id: Option<&str>,
    operation: &str,
    args: Value,
) -> Option<Value> {
    let called = ctx.call(Who::First, operation, &args).await;
    let outcome = called.value().and_then(|value| {
        match shapes::check(ctx.version, operation, &args, &value) {
            None => Ok(value),
            Some(problem) => Err(problem),
        }
    });
    if let Ok(value) = called.value() {
        let node = value["nodeId"].as_str().unwrap_or_default().to_owned();
        if operation == "terminal_run" && !node.is_empty() && !state.made.contains(&node) {
            state.made.push(node.clone());
        }
        state.saw(&node, &value);
    }
    match outcome {
        Ok(value) => {
            if let Some(id) = id {
                let (section, rule) = rule(id);
                ctx.pass(id, section, rule);
            }
            Some(value)
        }
        Err(problem) => {
            if let Some(id) = id {
                let (section, rule) = rule(id);
                ctx.fail_with(id, section, rule, &problem, &called.sent(), &called.received());
            }
            None
        }
    }
}

/// Records the verdict of `id` (of either table).
fn verdict(ctx: &mut Ctx, id: &str, problem: Option<String>) {
    let (section, rule) = rule(id);
    ctx.verdict(id, section, rule, problem);
}

/// Records `id` (of either table) as skipped, saying why.
fn skip(ctx: &mut Ctx, id: &str, why: &str) {
    let (section, rule) = rule(id);
    ctx.skip(id, section, rule, why);
}

fn text(value: &Value) -> &str {
    value[OUTPUT].as_str().unwrap_or_default()
}

/// The group, on the run's own shell terminal `shell` (already opened, its first command seen).
pub(crate) async fn check(ctx: &mut Ctx, shell: &str) {
    if !ctx.version.has_wait() {
        let why =
            format!("the catalog shows protocol {}, without terminal_wait", ctx.version.name());
        skip_all(ctx, &why);
        return;
    }
    if !ctx.lists("terminal_run") || !ctx.lists("terminal_kill") {
        skip_all(ctx, "the server does not list terminal_run and terminal_kill");
        return;
    }
    let mut state = State::default();
    let exited = run_and_exit(ctx, &mut state).await;
    text_since(ctx, &mut state, shell).await;
    kill(ctx, &mut state).await;
    follow(ctx, &mut state).await;
    later::check(ctx, &mut state, shell, exited.as_deref().map(|node| (node, EXITS_3))).await;
    closed_while_waiting(ctx, &mut state).await;
    bad_arguments(ctx, &mut state, shell).await;
    let problem = state.cursors.iter().find_map(|(node, cursors)| {
        cursors
            .windows(2)
            .find(|pair| pair[1] < pair[0])
            .map(|pair| format!("the cursor of {node} went from {} back to {}", pair[0], pair[1]))
    });
    let problem = problem.or_else(|| {
        (state.cursors.values().map(Vec::len).sum::<usize>() < 4)
            .then(|| "fewer than four cursors were answered".to_owned())
    });
    verdict(ctx, "wait.cursor-monotonic", problem);
    for node in std::mem::take(&mut state.made) {
        let called = ctx.call(Who::First, "terminal_close", &json!({"nodeId": node})).await;
        if let Err(problem) = called.value() {
            ctx.fail_with(
                &format!("wait.close:{node}"),
                WAITS,
                "terminal_close removes a run node",
                &problem,
                &called.sent(),
                &called.received(),
            );
        }
    }
}

/// The command of `run_and_exit`.
const EXITS_3: &str = "printf 'conformance-%s\\n' ran; exit 3";

/// `terminal_run` of a command that prints a marker and exits 3; the node on the canvas; a wait
/// for its exit; the second session reads it (run nodes are shared). The node, when it ran.
async fn run_and_exit(ctx: &mut Ctx, state: &mut State) -> Option<String> {
    let command = EXITS_3;
    let Some(ran) = shaped(
        ctx,
        state,
        Some("result.terminal_run"),
        "terminal_run",
        json!({"command": command, "title": "conformance-run", "timeoutMs": 10000}),
    )
    .await
    else {
        for id in [
            "wait.run-exit",
            "wait.run-node-listed",
            "result.terminal_wait:exit",
            "wait.exit-reached",
            "links.run-node-shared",
        ] {
            skip(ctx, id, "terminal_run did not answer");
        }
        return None;
    };
    let node = ran["nodeId"].as_str().unwrap_or_default().to_owned();
    let problem = if ran[RUNNING] != false {
        Some(format!("running is {} after a command that exits at once", ran[RUNNING]))
    } else if ran[EXIT_CODE] != 3 {
        Some(format!("exitCode is {}, expected 3", ran[EXIT_CODE]))
    } else if !ran["signal"].is_null() {
        Some(format!("signal is {}, expected null", ran["signal"]))
    } else if !text(&ran).lines().any(|line| line.trim_end() == "conformance-ran") {
        Some("the output has no line conformance-ran".to_owned())
    } else {
        None
    };
    verdict(ctx, "wait.run-exit", problem);
    let listed = ctx.call(Who::First, "canvas_list", &json!({})).await;
    let problem = match listed.value() {
        Ok(nodes) => {
            let entry = nodes.as_array().and_then(|nodes| {
                nodes
                    .iter()
                    .find(|item| item["nodeId"] == node.as_str() || item["id"] == node.as_str())
            });
            match entry {
                None => Some(format!("{node} is not listed")),
                Some(entry) if entry["kind"] != "terminal" => {
                    Some(format!("{node} is listed with kind {}, expected terminal", entry["kind"]))
                }
                Some(_) => None,
            }
        }
        Err(problem) => Some(problem),
    };
    verdict(ctx, "wait.run-node-listed", problem);
    let started = Instant::now();
    let waited = shaped(
        ctx,
        state,
        Some("result.terminal_wait:exit"),
        "terminal_wait",
        json!({"nodeId": node, "until": "exit", "timeoutMs": 5000}),
    )
    .await;
    let problem = match waited {
        None => Some("terminal_wait failed".to_owned()),
        Some(value) if value["reached"] != true => Some(format!("reached is {}", value["reached"])),
        Some(value) if value[EXIT_CODE] != 3 || value[RUNNING] != false => {
            Some(format!("exitCode {}, running {}", value[EXIT_CODE], value[RUNNING]))
        }
        Some(_) if started.elapsed() > Duration::from_secs(3) => {
            Some(format!("it took {} ms", started.elapsed().as_millis()))
        }
        Some(_) => None,
    };
    verdict(ctx, "wait.exit-reached", problem);
    run_node_shared(ctx, &node).await;
    Some(node)
}

async fn run_node_shared(ctx: &mut Ctx, node: &str) {
    let Some(second) = &ctx.second else {
        skip(ctx, "links.run-node-shared", "needs a second --session");
        return;
    };
    if second.project_id() != ctx.first.project_id()
        || second.endpoint_file != ctx.first.endpoint_file
    {
        skip(
            ctx,
            "links.run-node-shared",
            "the second session is not in the same project of the same server",
        );
        return;
    }
    if !crate::isolation::declares_links(ctx) {
        skip(
            ctx,
            "links.run-node-shared",
            "the server does not declare agent-link-isolation in session_info.rules",
        );
        return;
    }
    let called =
        ctx.call(Who::Second, "terminal_read", &json!({"nodeId": node, "maxChars": 1})).await;
    match called.value() {
        Ok(_) => verdict(ctx, "links.run-node-shared", None),
        Err(problem) => {
            let (section, rule) = rule("links.run-node-shared");
            ctx.fail_with(
                "links.run-node-shared",
                section,
                rule,
                &problem,
                &called.sent(),
                &called.received(),
            );
        }
    }
}

/// On the shell: submit a command, wait for its output after the submit's cursor, read after it,
/// and a wait that times out.
async fn text_since(ctx: &mut Ctx, state: &mut State, shell: &str) {
    // The typed command line does not contain the marker; only its output does.
    let submitted = shaped(
        ctx,
        state,
        Some("result.terminal_submit:cursor"),
        "terminal_submit",
        json!({"nodeId": shell, "command": "printf 'conformance-%s\\n' waited"}),
    )
    .await;
    if let Some(since) = submitted.as_ref().and_then(|value| value[CURSOR].as_u64()) {
        let waited = shaped(
            ctx,
            state,
            Some("result.terminal_wait:text"),
            "terminal_wait",
            json!({"nodeId": shell, "until": "text", "text": "conformance-waited", "since": since, "timeoutMs": 10000}),
        )
        .await;
        let problem = match &waited {
            None => Some("terminal_wait failed".to_owned()),
            Some(value) if value["reached"] != true => {
                Some(format!("reached is {} within 10 s", value["reached"]))
            }
            Some(value) if !text(value).contains("conformance-waited") => {
                Some("the output after the cursor lacks conformance-waited".to_owned())
            }
            Some(value) if text(value).contains("conformance-submitted") => Some(
                "the output after the cursor holds conformance-submitted, printed before it"
                    .to_owned(),
            ),
            Some(value) if value[CURSOR].as_u64().is_none_or(|cursor| cursor < since) => {
                Some(format!("the cursor {} is before since {since}", value[CURSOR]))
            }
            Some(_) => None,
        };
        verdict(ctx, "wait.text-since", problem);
        let read = shaped(
            ctx,
            state,
            Some("result.terminal_read:since"),
            "terminal_read",
            json!({"nodeId": shell, "since": since}),
        )
        .await;
        let problem = match &read {
            None => Some("terminal_read failed".to_owned()),
            Some(value) if !text(value).contains("conformance-waited") => {
                Some("the output after the cursor lacks conformance-waited".to_owned())
            }
            Some(value) if text(value).contains("conformance-submitted") => Some(
                "the output after the cursor holds conformance-submitted, printed before it"
                    .to_owned(),
            ),
            Some(_) => None,
        };
        verdict(ctx, "wait.read-since", problem);
    } else {
        for id in [
            "result.terminal_wait:text",
            "wait.text-since",
            "result.terminal_read:since",
            "wait.read-since",
        ] {
            skip(ctx, id, "terminal_submit answered no cursor");
        }
    }
    let started = Instant::now();
    let waited = shaped(
        ctx,
        state,
        Some("result.terminal_wait:timeout"),
        "terminal_wait",
        json!({"nodeId": shell, "until": "text", "text": "conformance-never-printed", "timeoutMs": 1000}),
    )
    .await;
    let elapsed = started.elapsed();
    let problem = match waited {
        None => Some("the timed-out wait was not ok".to_owned()),
        Some(value) if value["reached"] != false => {
            Some(format!("reached is {}", value["reached"]))
        }
        Some(_) if elapsed < Duration::from_millis(900) || elapsed > Duration::from_secs(6) => {
            Some(format!("it answered after {} ms, timeoutMs was 1000", elapsed.as_millis()))
        }
        Some(_) => None,
    };
    verdict(ctx, "wait.timeout", problem);
}

/// `terminal_kill` of a run node whose command ignores SIGTERM.
async fn kill(ctx: &mut Ctx, state: &mut State) {
    let command = "trap '' TERM; printf 'conformance-%s\\n' trapped; sleep 30";
    let Some(ran) = shaped(
        ctx,
        state,
        None,
        "terminal_run",
        json!({"command": command, "title": "conformance-kill", "timeoutMs": 0}),
    )
    .await
    else {
        skip(ctx, "wait.kill-sigkill", "terminal_run of the command to kill failed");
        skip(ctx, "result.terminal_kill", "terminal_run of the command to kill failed");
        return;
    };
    let node = ran["nodeId"].as_str().unwrap_or_default().to_owned();
    // The trap is set once the marker is printed.
    shaped(
        ctx,
        state,
        None,
        "terminal_wait",
        json!({"nodeId": node, "until": "text", "text": "conformance-trapped", "since": 0, "timeoutMs": 10000}),
    )
    .await;
    let killed =
        shaped(ctx, state, Some("result.terminal_kill"), "terminal_kill", json!({"nodeId": node}))
            .await;
    let Some(killed) = killed else {
        skip(ctx, "wait.kill-sigkill", "terminal_kill failed");
        return;
    };
    // The kill's own answer may come before the server knows how the command ended (running
    // false, no exit code and no signal yet): then the final state is the one a wait for the exit
    // sees.
    let settled =
        killed[RUNNING] == false && !(killed[EXIT_CODE].is_null() && killed["signal"].is_null());
    let ended = if settled {
        Some(killed)
    } else {
        shaped(
            ctx,
            state,
            None,
            "terminal_wait",
            json!({"nodeId": node, "until": "exit", "timeoutMs": 5000}),
        )
        .await
    };
    let problem = match ended {
        None => Some("the wait for the killed command failed".to_owned()),
        Some(value) if value[RUNNING] != false => {
            Some("the command still runs 5 s after terminal_kill".to_owned())
        }
        Some(value) if value["signal"] != "SIGKILL" => {
            Some(format!("signal is {}, expected \"SIGKILL\"", value["signal"]))
        }
        Some(_) => None,
    };
    verdict(ctx, "wait.kill-sigkill", problem);
}

/// Follows a run node that prints numbered lines for about two seconds, alternating
/// `terminal_wait` (for the next line feed) and `terminal_read` with `since` the previous answer's
/// cursor: every answer not cut to its tail holds exactly the characters between its `since` and
/// its `cursor`, and the outputs join into every line in order.
async fn follow(ctx: &mut Ctx, state: &mut State) {
    const LINES: u32 = 8000;
    const READ_CHARS: u64 = 100_000;
    let command = format!(
        "i=0; while [ $i -lt {LINES} ]; do i=$((i+1)); echo conformance-$i; [ $((i % 20)) -eq 0 ] && sleep 0.005; done; sleep 30"
    );
    let args = json!({"command": command, "title": "conformance-follow", "timeoutMs": 0});
    let Some(ran) = shaped(ctx, state, None, "terminal_run", args).await else {
        skip(ctx, "wait.follow-joins", "terminal_run of the printing command failed");
        return;
    };
    let node = ran["nodeId"].as_str().unwrap_or_default().to_owned();
    let last = format!("conformance-{LINES}\n");
    let deadline = Instant::now() + Duration::from_secs(30);
    let (mut since, mut joined, mut answers, mut whole) = (0_u64, String::new(), 0_u32, 0_u32);
    let mut problem = None;
    while problem.is_none() && !joined.ends_with(&last) {
        if Instant::now() > deadline {
            problem = Some(format!("the last line did not come within 30 s ({answers} answers)"));
            break;
        }
        let (operation, args) = if answers % 2 == 0 {
            (
                "terminal_wait",
                json!({"nodeId": node, "until": "text", "text": "\n", "since": since}),
            )
        } else {
            ("terminal_read", json!({"nodeId": node, "since": since, "maxChars": READ_CHARS}))
        };
        let Some(value) = shaped(ctx, state, None, operation, args).await else {
            problem = Some(format!("{operation} failed while following"));
            break;
        };
        answers += 1;
        let output = text(&value);
        let cursor = value[CURSOR].as_u64().unwrap_or(since);
        let count = u64::try_from(output.chars().count()).unwrap_or(u64::MAX);
        if value["truncated"] == true || count >= READ_CHARS {
            // Cut to its tail: the join starts again after it.
            joined.clear();
        } else if cursor.checked_sub(since) != Some(count) {
            problem = Some(format!(
                "{operation} since {since} answered {count} characters and cursor {cursor}: {} characters are missed or repeated",
                i128::from(cursor) - i128::from(since) - i128::from(count)
            ));
        } else {
            whole += 1;
        }
        joined.push_str(output);
        since = cursor;
    }
    if problem.is_none() {
        let mut expected = None;
        for line in joined.lines().skip(1) {
            let number = line.strip_prefix("conformance-").and_then(|n| n.parse::<u32>().ok());
            match (number, expected) {
                (None, _) => problem = Some(format!("a line that was never printed: {line:?}")),
                (Some(n), Some(e)) if n != e => {
                    problem = Some(format!("line {n} came where line {e} was due"));
                }
                _ => {}
            }
            if problem.is_some() {
                break;
            }
            expected = number.map(|n| n + 1);
        }
    }
    if problem.is_none() && whole < 10 {
        problem = Some(format!("only {whole} of {answers} answers were whole enough to check"));
    }
    verdict(ctx, "wait.follow-joins", problem);
}

/// A wait on a run node that the run closes meanwhile.
async fn closed_while_waiting(ctx: &mut Ctx, state: &mut State) {
    let Some(ran) = shaped(
        ctx,
        state,
        None,
        "terminal_run",
        json!({"command": "sleep 30", "title": "conformance-close", "timeoutMs": 0}),
    )
    .await
    else {
        skip(ctx, "wait.closed-while-waiting", "terminal_run of the command to close failed");
        return;
    };
    let node = ran["nodeId"].as_str().unwrap_or_default().to_owned();
    let args = json!({"nodeId": node, "until": "exit", "timeoutMs": 10000});
    let probe =
        ctx.authed(Who::First, json!({"operation": "terminal_wait", "args": args}).to_string());
    let port = ctx.first.port;
    let waiting = crate::raw::exchange(port, &probe, Duration::from_secs(20));
    let closing = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        ctx.call(Who::First, "terminal_close", &json!({"nodeId": node})).await
    };
    let (answer, closed) = tokio::join!(waiting, closing);
    if closed.value().is_ok() {
        state.made.retain(|made| *made != node);
    }
    if let Ok(response) = &answer {
        ctx.seen.push(Seen { probe: probe.describe(), response: response.clone() });
    }
    let problem = match &answer {
        Ok(response) => crate::ctx::Expect::error(400, CLOSED_WHILE_WAITING).mismatch(response),
        Err(error) => Some(error.clone()),
    };
    match problem {
        None => verdict(ctx, "wait.closed-while-waiting", None),
        Some(problem) => {
            let received = answer.map_or_else(|error| error, |response| response.describe());
            let (section, rule) = rule("wait.closed-while-waiting");
            ctx.fail_with(
                "wait.closed-while-waiting",
                section,
                rule,
                &problem,
                &probe.describe(),
                &received,
            );
        }
    }
}

/// The bad arguments of 1.3.0: each must fail with 400 `ok:false`. A server that runs one anyway
/// gets its node closed.
async fn bad_arguments(ctx: &mut Ctx, state: &mut State, shell: &str) {
    const SECRET: &str = "conformance-secret-value";
    // `/` is outside every project folder but one at `/`, which a server does not offer.
    let outside = "/";
    let cases: Vec<(&str, &str, Vec<Value>)> = vec![
        ("wait.bad-run-command", "terminal_run", vec![json!({"command": ""})]),
        (
            "wait.bad-run-cwd",
            "terminal_run",
            vec![
                json!({"command": "true", "cwd": "relative/conformance"}),
                json!({"command": "true", "cwd": outside}),
            ],
        ),
        (
            "wait.bad-run-env",
            "terminal_run",
            vec![
                json!({"command": "true", "env": [format!("1BAD={SECRET}")]}),
                json!({"command": "true", "env": ["OK=1", format!("NO-EQUALS{SECRET}")]}),
            ],
        ),
        (
            "wait.bad-wait-text",
            "terminal_wait",
            vec![
                json!({"nodeId": shell, "until": "text", "timeoutMs": 0}),
                json!({"nodeId": shell, "until": "text", "text": "", "timeoutMs": 0}),
            ],
        ),
        ("wait.bad-kill-shell", "terminal_kill", vec![json!({"nodeId": shell})]),
    ];
    for (id, operation, probes) in cases {
        let mut failure = None;
        for args in probes {
            let called = ctx.call(Who::First, operation, &args).await;
            if let Ok(value) = called.value()
                && let Some(node) = value["nodeId"].as_str().filter(|_| operation == "terminal_run")
            {
                state.made.push(node.to_owned());
            }
            let problem = if !called.failed() {
                Some("it did not fail with HTTP 400 and ok:false".to_owned())
            } else if called.received().contains(SECRET) {
                Some("the error repeats the env item".to_owned())
            } else {
                None
            };
            if let Some(problem) = problem {
                failure = Some((problem, called.sent(), called.received()));
                break;
            }
        }
        match failure {
            None => verdict(ctx, id, None),
            Some((problem, sent, received)) => {
                let (section, rule) = rule(id);
                ctx.fail_with(id, section, rule, &problem, &sent, &received);
            }
        }
    }
}
