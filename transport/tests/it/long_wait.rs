//! Chained long waits (`long_wait::call_waiting`) against a fake server that plays a terminal:
//! its output grows on a timeline, and it answers `terminal_wait` and `terminal_run` as a server
//! does (a wait ends when its condition holds or its `timeoutMs` passes). Turns are shortened to
//! keep the tests quick; the real 30 s turns run in the headless and MCP tests.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use termsprawl_protocol::results::{TerminalRunResult, TerminalWaitResult};
use termsprawl_protocol::{ToolRequest, ToolResult};
use termsprawl_test_support::fake::{FakeApp, Received};
use termsprawl_transport::long_wait::{WaitOptions, WaitProgress, call_waiting};
use termsprawl_transport::server::handler_fn;
use termsprawl_transport::{Client, UNAVAILABLE_PREFIX};

const TURN: Duration = Duration::from_millis(200);

/// A terminal whose output is `prints` (each at its offset from the start) and whose program
/// exits at `exit_at` (never when `None`).
struct Term {
    start: Instant,
    prints: Vec<(Duration, String)>,
    exit_at: Option<Duration>,
    /// Answers this failure to the wait with this index (0-based), when set.
    fail_wait: Option<(usize, &'static str)>,
    waits: AtomicUsize,
}

impl Term {
    fn new(prints: Vec<(Duration, String)>, exit_at: Option<Duration>) -> Term {
        Term { start: Instant::now(), prints, exit_at, fail_wait: None, waits: AtomicUsize::new(0) }
    }

    fn printed(&self) -> String {
        let now = self.start.elapsed();
        self.prints.iter().filter(|(at, _)| *at <= now).map(|(_, text)| text.as_str()).collect()
    }

    fn exited(&self) -> bool {
        self.exit_at.is_some_and(|at| self.start.elapsed() >= at)
    }

    async fn answer(&self, request: ToolRequest) -> ToolResult {
        let args = request.args_value();
        let timeout = Duration::from_millis(args["timeoutMs"].as_u64().unwrap_or(10_000));
        let deadline = Instant::now() + timeout;
        if request.operation() == Some("terminal_wait") {
            let index = self.waits.fetch_add(1, Ordering::SeqCst);
            if let Some((failing, error)) = self.fail_wait
                && failing == index
            {
                return ToolResult::failure(error);
            }
        }
        let since = args["since"].as_u64().unwrap_or(0);
        loop {
            let printed = self.printed();
            let after: String = printed.chars().skip(usize::try_from(since).unwrap()).collect();
            let reached = match args["until"].as_str() {
                Some("text") => after.contains(args["text"].as_str().unwrap()),
                _ => self.exited(),
            };
            if reached || Instant::now() >= deadline {
                let exited = self.exited();
                let cursor = printed.chars().count() as u64;
                if request.operation() == Some("terminal_run") {
                    return ToolResult::ok(json!({"nodeId": "run-1", "running": !exited,
                        "exitCode": if exited { json!(0) } else { Value::Null }, "signal": null,
                        "output": printed, "truncated": false, "cursor": cursor}));
                }
                let matched = if args["until"] == "text" {
                    json!(if reached { json!(0) } else { Value::Null })
                } else {
                    Value::Null
                };
                let mut value = json!({"nodeId": args["nodeId"], "reached": reached, "running": !exited,
                    "exitCode": if exited { json!(0) } else { Value::Null }, "signal": null,
                    "output": after, "truncated": false, "cursor": cursor});
                if args["until"] == "text" {
                    value["matched"] = matched;
                }
                return ToolResult::ok(value);
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

async fn app_playing(term: Arc<Term>) -> FakeApp {
    FakeApp::builder()
        .handler(handler_fn(move |_caller, request| {
            let term = Arc::clone(&term);
            async move { term.answer(request).await }
        }))
        .start()
        .await
        .unwrap()
}

fn numbered(count: u32, every: Duration) -> Vec<(Duration, String)> {
    (0..count).map(|i| (every * i, format!("line {i}\n"))).collect()
}

/// What [`numbered`] prints in all.
fn numbered_text(count: u32) -> String {
    (0..count).fold(String::new(), |mut text, i| {
        let _ = writeln!(text, "line {i}");
        text
    })
}

fn quick() -> WaitOptions {
    WaitOptions::new(600_000).with_turns(TURN, TURN)
}

fn args_of(received: &[Received]) -> Vec<Value> {
    received.iter().map(|r| serde_json::from_str(&r.args).unwrap()).collect()
}

fn value_of(result: &ToolResult) -> Value {
    match result {
        ToolResult::Success { value: Some(value) } => value.clone(),
        other => panic!("not a value: {other:?}"),
    }
}

#[tokio::test]
async fn a_wait_within_a_turn_is_one_call_as_it_came() {
    let term = Arc::new(Term::new(numbered(3, Duration::ZERO), Some(Duration::ZERO)));
    let app = app_playing(term).await;
    let request = ToolRequest::with_raw_args(
        Some("terminal_wait".to_owned()),
        r#"{"nodeId":"run-1","until":"exit","timeoutMs":150}"#.to_owned(),
    )
    .unwrap();
    let result =
        call_waiting(&Client::default(), app.session_file(), &request, &quick(), None).await;
    assert_eq!(value_of(&result)["output"], "line 0\nline 1\nline 2\n");
    let received = app.take_received();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].args, r#"{"nodeId":"run-1","until":"exit","timeoutMs":150}"#);
}

#[tokio::test]
async fn a_long_wait_answers_once_with_every_line_once() {
    let term = Arc::new(Term::new(
        numbered(25, Duration::from_millis(50)),
        Some(Duration::from_millis(1_300)),
    ));
    let app = app_playing(term).await;
    let request = ToolRequest::new(
        "terminal_wait",
        &json!({"nodeId": "run-1", "until": "exit", "timeoutMs": 5_000}),
    );
    let started = Instant::now();
    let result =
        call_waiting(&Client::default(), app.session_file(), &request, &quick(), None).await;
    let elapsed = started.elapsed();
    let answer: TerminalWaitResult = serde_json::from_value(value_of(&result)).unwrap();
    let expected = numbered_text(25);
    assert_eq!(answer.output, expected);
    assert!(answer.reached && !answer.running && answer.exit_code == Some(0), "{answer:?}");
    assert_eq!(answer.cursor, expected.chars().count() as u64);
    assert!(!answer.truncated);
    assert!(elapsed < Duration::from_millis(1_800), "{elapsed:?}");
    let sent = args_of(&app.take_received());
    assert!(sent.len() >= 5, "{sent:?}");
    assert!(sent.iter().all(|args| args["timeoutMs"].as_f64().unwrap() <= 200.0), "{sent:?}");
    assert_eq!(sent[0].get("since"), None);
    // Each turn starts where the previous answer ended: the cursors only grow.
    let sinces: Vec<f64> = sent[1..].iter().map(|args| args["since"].as_f64().unwrap()).collect();
    assert!(sinces.windows(2).all(|pair| pair[0] <= pair[1]), "{sinces:?}");
}

#[tokio::test]
async fn a_text_printed_across_two_turns_is_found_and_shown_once() {
    let prints =
        vec![(Duration::ZERO, "xxab".to_owned()), (Duration::from_millis(300), "cdyy".to_owned())];
    let term = Arc::new(Term::new(prints, None));
    let app = app_playing(term).await;
    let request = ToolRequest::new(
        "terminal_wait",
        &json!({"nodeId": "run-1", "until": "text", "text": "abcd", "timeoutMs": 3_000}),
    );
    let result =
        call_waiting(&Client::default(), app.session_file(), &request, &quick(), None).await;
    let answer = value_of(&result);
    assert_eq!(answer["reached"], true, "{answer}");
    assert_eq!(answer["output"], "xxabcdyy");
    assert_eq!(answer["matched"], 0);
    let sent = args_of(&app.take_received());
    // After "xxab" (cursor 4) the next turn starts 3 characters back, at the longest text less one.
    assert_eq!(sent[1]["since"], 1.0);
}

#[tokio::test]
async fn the_time_running_out_answers_reached_false_once() {
    let term = Arc::new(Term::new(numbered(3, Duration::from_millis(100)), None));
    let app = app_playing(term).await;
    let request = ToolRequest::new(
        "terminal_wait",
        &json!({"nodeId": "run-1", "until": "exit", "since": 0, "timeoutMs": 700}),
    );
    let started = Instant::now();
    let result =
        call_waiting(&Client::default(), app.session_file(), &request, &quick(), None).await;
    let elapsed = started.elapsed();
    let answer = value_of(&result);
    assert_eq!(answer["reached"], false);
    assert_eq!(answer["running"], true);
    assert_eq!(answer["output"], "line 0\nline 1\nline 2\n");
    assert!(
        Duration::from_millis(690) <= elapsed && elapsed < Duration::from_secs(1),
        "{elapsed:?}"
    );
    let sent = args_of(&app.take_received());
    assert_eq!(sent.len(), 4, "{sent:?}");
    let total: f64 = sent.iter().map(|args| args["timeoutMs"].as_f64().unwrap()).sum();
    assert!(total <= 700.0, "{sent:?}");
}

#[tokio::test]
async fn a_run_is_sent_once_then_its_exit_is_waited_for() {
    let term = Arc::new(Term::new(
        numbered(10, Duration::from_millis(60)),
        Some(Duration::from_millis(700)),
    ));
    let app = app_playing(term).await;
    let request = ToolRequest::new(
        "terminal_run",
        &json!({"command": "make test", "timeoutMs": 4_000, "keep": false}),
    );
    let mut reports: Vec<WaitProgress> = Vec::new();
    let mut sink = |progress: &WaitProgress| reports.push(progress.clone());
    let result =
        call_waiting(&Client::default(), app.session_file(), &request, &quick(), Some(&mut sink))
            .await;
    let value = value_of(&result);
    let answer: TerminalRunResult = serde_json::from_value(value.clone()).unwrap();
    assert_eq!(value.get("reached"), None, "a run's answer keeps the run's members: {value}");
    assert_eq!(answer.node_id, "run-1");
    assert!(!answer.running && answer.exit_code == Some(0));
    assert_eq!(answer.output, numbered_text(10));
    let received = app.take_received();
    assert_eq!(received.iter().filter(|r| r.operation == "terminal_run").count(), 1);
    assert_eq!(received[0].operation, "terminal_run");
    let sent = args_of(&received);
    assert_eq!(sent[0]["keep"], false);
    assert!(sent[1..].iter().all(|args| args["nodeId"] == "run-1" && args["until"] == "exit"));
    // Every answered turn reported (and the waits between), the time waited growing, the last
    // line the last printed.
    assert_eq!(reports.last().unwrap().turns as usize, received.len());
    assert!(reports.len() >= received.len());
    assert!(reports.windows(2).all(|pair| pair[0].waited < pair[1].waited));
    let last = reports.last().unwrap();
    assert_eq!(last.lines, 10);
    assert_eq!(
        last.message(),
        format!("make test: 10 lines, last: \"line 9\" ({} s)", last.waited.as_secs())
    );
}

#[tokio::test]
async fn a_node_closed_mid_chain_answers_as_a_single_wait_would() {
    let mut term = Term::new(numbered(3, Duration::ZERO), None);
    term.fail_wait = Some((2, "Terminal was closed while waiting"));
    let app = app_playing(Arc::new(term)).await;
    let request = ToolRequest::new(
        "terminal_wait",
        &json!({"nodeId": "run-1", "until": "exit", "timeoutMs": 5_000}),
    );
    let result =
        call_waiting(&Client::default(), app.session_file(), &request, &quick(), None).await;
    assert_eq!(result, ToolResult::failure("Terminal was closed while waiting"));
    assert_eq!(app.take_received().len(), 3);
}

#[tokio::test]
async fn a_server_gone_mid_chain_answers_connection_unavailable() {
    let term = Arc::new(Term::new(numbered(3, Duration::ZERO), None));
    let mut app = app_playing(term).await;
    let request = ToolRequest::new(
        "terminal_wait",
        &json!({"nodeId": "run-1", "until": "exit", "timeoutMs": 5_000}),
    );
    let session = app.session_file().to_owned();
    let chain = tokio::spawn(async move {
        call_waiting(&Client::default(), &session, &request, &quick(), None).await
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    app.stop().await;
    let result = tokio::time::timeout(Duration::from_secs(5), chain).await.unwrap().unwrap();
    let ToolResult::Failure { error } = result else { panic!("{result:?}") };
    assert!(error.starts_with(UNAVAILABLE_PREFIX), "{error}");
}

#[tokio::test]
async fn a_dropped_chain_sends_no_further_turn() {
    let term = Arc::new(Term::new(numbered(3, Duration::ZERO), None));
    let app = app_playing(term).await;
    let request = ToolRequest::new(
        "terminal_wait",
        &json!({"nodeId": "run-1", "until": "exit", "timeoutMs": 5_000}),
    );
    let session = app.session_file().to_owned();
    let chain = tokio::spawn(async move {
        call_waiting(&Client::default(), &session, &request, &quick(), None).await
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    chain.abort();
    let sent = Arc::new(Mutex::new(app.take_received().len()));
    assert!(*sent.lock().unwrap() >= 2);
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(app.take_received().len(), 0, "a turn was sent after the chain was dropped");
}
