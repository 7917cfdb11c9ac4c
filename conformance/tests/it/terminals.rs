//! The rules of the members and operations since 1.4.0 against a fake app that runs real
//! commands (`sh -c`, its own process group, its output read from a pipe): a conformant one
//! passes every rule at `strict`, and planted defects fail exactly the matching rules.
//!
//! The fake is a test double for the suite, not a server to copy: it says a run node waits for
//! input when its command holds `read ` and it still runs (a server decides from the kernel's
//! view of the terminal, `spec/protocol.md`), its screen is the last 24 lines of the stream, and
//! its patterns are the small subset the suite sends (literals, `[a-b]`, `+`).

use std::collections::BTreeMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use termsprawl_protocol::{ToolRequest, ToolResult};
use termsprawl_test_support::fake::FakeApp;
use termsprawl_transport::server::{Caller, ServerConfig, handler_fn};
use tokio::io::AsyncReadExt;
use tokio::sync::Notify;

use crate::support::{HandlerDefects, answer, check};

const NOT_FOUND: &str = "Local terminal not found in this project";
const TIME: &str = "2026-12-03T17:00:00.000Z";

/// Defects the fake can carry.
#[derive(Debug, Clone, Copy, Default)]
#[expect(clippy::struct_excessive_bools, reason = "independent switches, one per planted defect")]
struct Defects {
    /// A notice is submitted twice.
    notice_twice: bool,
    /// `matched` answers the index after the one that matched.
    matched_off_by_one: bool,
    /// `terminal_list` answers run nodes as kind `shell`.
    runs_listed_as_shells: bool,
    /// `until: "input"` is reached by any running command.
    input_by_anything: bool,
}

/// One terminal node.
#[expect(clippy::struct_excessive_bools, reason = "the node's independent facts")]
struct Term {
    project: String,
    kind: &'static str,
    title: String,
    command: Option<String>,
    output: String,
    running: bool,
    exit_code: Option<i64>,
    signal: Option<String>,
    ended: bool,
    group: Option<i32>,
    keep: bool,
    notify: bool,
    answered_running: bool,
    reported: bool,
    /// The caller that ran it: a notice goes to its node.
    caller: String,
    /// Held open so that a `read` blocks instead of reading the end of its input.
    stdin_held: Option<tokio::process::ChildStdin>,
}

impl Term {
    fn new(project: &str, kind: &'static str, title: &str) -> Term {
        Term {
            project: project.to_owned(),
            kind,
            title: title.to_owned(),
            command: None,
            output: String::new(),
            running: kind != "run",
            exit_code: None,
            signal: None,
            ended: false,
            group: None,
            keep: true,
            notify: false,
            answered_running: false,
            reported: false,
            caller: String::new(),
            stdin_held: None,
        }
    }

    fn cursor(&self) -> u64 {
        self.output.chars().count() as u64
    }

    fn after(&self, since: u64) -> String {
        self.output.chars().skip(usize::try_from(since).unwrap_or(usize::MAX)).collect()
    }
}

#[derive(Default)]
struct Fake {
    terms: Mutex<BTreeMap<String, Term>>,
    changed: Notify,
    counter: Mutex<u32>,
    defects: Defects,
}

fn tail(text: &str, limit: usize) -> (String, bool) {
    let chars: Vec<char> = text.chars().collect();
    let start = chars.len().saturating_sub(limit);
    (chars[start..].iter().collect(), start > 0)
}

/// One element of a pattern: a class `[low-high]` or a character, and whether `+` follows.
type Atom = (Option<(char, char)>, char, bool);

/// The pattern subset: literal characters, `[a-b]` classes and `+` after either.
fn compile(pattern: &str) -> Result<Vec<Atom>, String> {
    let mut atoms = Vec::new();
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        let atom = match c {
            '(' | ')' => return Err("unclosed group".to_owned()),
            '[' => {
                let (low, _, high, close) =
                    (chars.next(), chars.next(), chars.next(), chars.next());
                match (low, high, close) {
                    (Some(low), Some(high), Some(']')) => (Some((low, high)), ' ', false),
                    _ => return Err("unclosed class".to_owned()),
                }
            }
            c => (None, c, false),
        };
        let plus = chars.peek() == Some(&'+');
        if plus {
            chars.next();
        }
        atoms.push((atom.0, atom.1, plus));
    }
    Ok(atoms)
}

/// The char index of the first match of `atoms` in `text`.
fn find(atoms: &[Atom], text: &str) -> Option<usize> {
    let chars: Vec<char> = text.chars().collect();
    let fits = |atom: &Atom, c: char| match atom.0 {
        Some((low, high)) => (low..=high).contains(&c),
        None => atom.1 == c,
    };
    (0..=chars.len()).find(|start| {
        let mut at = *start;
        atoms.iter().all(|atom| {
            if !chars.get(at).is_some_and(|c| fits(atom, *c)) {
                return false;
            }
            at += 1;
            while atom.2 && chars.get(at).is_some_and(|c| fits(atom, *c)) {
                at += 1;
            }
            true
        })
    })
}

/// Where `item` first occurs in `text` (chars), literally or as a pattern.
fn position(item: &str, regex: bool, text: &str) -> Option<usize> {
    if regex {
        find(&compile(item).ok()?, text)
    } else {
        text.find(item).map(|at| text[..at].chars().count())
    }
}

fn kill_group(group: Option<i32>) {
    if let Some(group) = group {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", "--", &format!("-{group}")])
            .stderr(Stdio::null())
            .status();
    }
}

impl Fake {
    fn own(&self, caller: &Caller) {
        self.terms
            .lock()
            .unwrap()
            .entry(caller.node_id().to_owned())
            .or_insert_with(|| Term::new(caller.project_id(), "agent", caller.node_id()));
    }

    fn next_id(&self) -> String {
        let mut counter = self.counter.lock().unwrap();
        *counter += 1;
        format!("terminal-{:04}", *counter)
    }

    fn append(&self, node: &str, text: &str) {
        if let Some(term) = self.terms.lock().unwrap().get_mut(node) {
            term.output.push_str(text);
        }
        self.changed.notify_waiters();
    }

    /// The process ended: its state, and the notice when one is due.
    fn ended(&self, node: &str, status: std::process::ExitStatus) {
        use std::os::unix::process::ExitStatusExt as _;
        let notice = {
            let mut terms = self.terms.lock().unwrap();
            let Some(term) = terms.get_mut(node) else { return };
            term.running = false;
            term.ended = true;
            term.exit_code = status.code().map(i64::from);
            term.signal = status.signal().map(|signal| {
                if signal == 9 { "SIGKILL".to_owned() } else { format!("SIG{signal}") }
            });
            let due = term.notify && term.answered_running && !term.reported;
            let line = format!(
                "[termsprawl] {node} \"{}\" exited {} after 1s; read it with terminal_read {{\"nodeId\":\"{node}\",\"since\":0}}\n",
                term.command.clone().unwrap_or_default(),
                term.exit_code.unwrap_or(-1)
            );
            due.then(|| (term.caller.clone(), line))
        };
        if let Some((caller, line)) = notice {
            let times = if self.defects.notice_twice { 2 } else { 1 };
            for _ in 0..times {
                self.append(&caller, &line);
            }
        }
        self.changed.notify_waiters();
    }

    fn state(term: &Term) -> Value {
        json!({"running": term.running, "exitCode": term.exit_code, "signal": term.signal})
    }

    async fn run(self: &Arc<Self>, caller: &Caller, args: &Value) -> ToolResult {
        let command = args["command"].as_str().unwrap_or_default().to_owned();
        if command.is_empty() {
            return ToolResult::failure("command must not be empty");
        }
        if !args["cwd"].is_null() {
            return ToolResult::failure(
                "cwd must be the absolute path of an existing directory inside this project's folder",
            );
        }
        let mut env = Vec::new();
        for (index, item) in args["env"].as_array().into_iter().flatten().enumerate() {
            let item = item.as_str().unwrap_or_default();
            match item.split_once('=') {
                Some((name, value))
                    if !name.is_empty()
                        && !name.starts_with(|c: char| c.is_ascii_digit())
                        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') =>
                {
                    env.push((name.to_owned(), value.to_owned()));
                }
                _ => return ToolResult::failure(format!("env[{index}] must be NAME=value")),
            }
        }
        let mut child = match tokio::process::Command::new("sh")
            .arg("-c")
            .arg(&command)
            .envs(env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
        {
            Ok(child) => child,
            Err(error) => return ToolResult::failure(error.to_string()),
        };
        let node = self.next_id();
        let mut term =
            Term::new(caller.project_id(), "run", args["title"].as_str().unwrap_or(&command));
        term.command = Some(command);
        term.running = true;
        term.group = child.id().and_then(|id| i32::try_from(id).ok());
        term.keep = args["keep"] != false;
        term.notify = args["notify"] == true;
        term.caller = caller.node_id().to_owned();
        term.stdin_held = child.stdin.take();
        self.terms.lock().unwrap().insert(node.clone(), term);
        let mut stdout = child.stdout.take().unwrap();
        let fake = Arc::clone(self);
        let id = node.clone();
        tokio::spawn(async move {
            let mut chunk = vec![0_u8; 8192];
            while let Ok(read) = stdout.read(&mut chunk).await {
                if read == 0 {
                    break;
                }
                fake.append(&id, &String::from_utf8_lossy(&chunk[..read]));
            }
            if let Ok(status) = child.wait().await {
                fake.ended(&id, status);
            }
        });
        self.until(&node, timeout(args), |term| !term.running).await;
        let mut terms = self.terms.lock().unwrap();
        let term = terms.get_mut(&node).unwrap();
        let (output, truncated) = tail(&term.output, 16_000);
        let mut value = json!({"nodeId": node});
        merge(&mut value, Fake::state(term));
        merge(
            &mut value,
            json!({"output": output, "truncated": truncated, "cursor": term.cursor()}),
        );
        if term.running {
            term.answered_running = true;
        } else {
            term.reported = true;
            if !term.keep {
                terms.remove(&node);
            }
        }
        ToolResult::ok(value)
    }

    /// Waits until `done` holds for `node`, it is gone (false), or `limit` passes.
    async fn until(
        &self,
        node: &str,
        limit: Duration,
        done: impl Fn(&Term) -> bool,
    ) -> Option<bool> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let notified = self.changed.notified();
            match self.terms.lock().unwrap().get(node) {
                None => return None,
                Some(term) if done(term) => return Some(true),
                Some(_) => {}
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return Some(false);
            }
        }
    }

    async fn wait(&self, node: &str, args: &Value) -> ToolResult {
        let until = args["until"].as_str().unwrap_or_default();
        let Some(start) = self.terms.lock().unwrap().get(node).map(Term::cursor) else {
            return ToolResult::failure(NOT_FOUND);
        };
        let items: Vec<String> = match (&args["text"], &args["anyOf"]) {
            (Value::String(text), _) if !text.is_empty() => vec![text.clone()],
            (_, Value::Array(items)) => {
                items.iter().filter_map(|i| i.as_str().map(str::to_owned)).collect()
            }
            _ if until == "text" => {
                return ToolResult::failure(
                    "text is required and must not be empty with until text",
                );
            }
            _ => Vec::new(),
        };
        let regex = args["regex"] == true;
        let since = args["since"].as_u64().unwrap_or(if until == "change" { start } else { 0 });
        let first_match = |term: &Term| {
            let after = term.after(since);
            items
                .iter()
                .enumerate()
                .filter_map(|(index, item)| position(item, regex, &after).map(|at| (at, index)))
                .min()
        };
        let input = self.defects.input_by_anything;
        let reached = self
            .until(node, timeout(args), |term| match until {
                "exit" => !term.running,
                "text" => first_match(term).is_some(),
                "change" => term.cursor() > since,
                "input" => {
                    term.running
                        && (input || term.command.as_deref().is_some_and(|c| c.contains("read ")))
                }
                _ => true,
            })
            .await;
        let Some(reached) = reached else {
            return ToolResult::failure("Terminal was closed while waiting");
        };
        let mut terms = self.terms.lock().unwrap();
        let term = terms.get_mut(node).unwrap();
        let (output, truncated) = tail(&term.after(since), 16_000);
        let mut value = json!({"nodeId": node, "reached": reached});
        merge(&mut value, Fake::state(term));
        merge(
            &mut value,
            json!({"output": output, "truncated": truncated, "cursor": term.cursor()}),
        );
        match until {
            "text" => {
                let found = first_match(term).filter(|_| reached);
                let offset = u64::from(self.defects.matched_off_by_one);
                merge(
                    &mut value,
                    json!({
                        "matched": found.map(|(_, index)| index as u64 + offset),
                        "matchCursor": found.map(|(at, _)| since + at as u64),
                    }),
                );
            }
            "input" => merge(&mut value, json!({"inputBy": reached.then_some("sh")})),
            _ => {}
        }
        if !term.running {
            term.reported = true;
            if !term.keep {
                terms.remove(node);
            }
        }
        ToolResult::ok(value)
    }

    fn read(&self, node: &str, args: &Value) -> ToolResult {
        let terms = self.terms.lock().unwrap();
        let Some(term) = terms.get(node) else { return ToolResult::failure(NOT_FOUND) };
        let mut value = json!({"nodeId": node});
        if args["view"] == "screen" {
            let lines: Vec<&str> = term.output.lines().collect();
            let mut screen: Vec<&str> = lines[lines.len().saturating_sub(24)..].to_vec();
            screen.resize(24, "");
            let output: String = screen.iter().flat_map(|line| [line.trim_end(), "\n"]).collect();
            merge(&mut value, json!({"output": output, "cursor": term.cursor()}));
            merge(&mut value, Fake::state(term));
            merge(
                &mut value,
                json!({"rows": 24, "cols": 80, "cursorRow": 23, "cursorCol": 0, "alternateScreen": false}),
            );
            return ToolResult::ok(value);
        }
        let text = match args["since"].as_u64() {
            Some(since) => term.after(since),
            None => term.output.clone(),
        };
        let limit = termsprawl_conformance::shapes::read_limit(&args["maxChars"]);
        merge(&mut value, json!({"output": tail(&text, limit).0, "cursor": term.cursor()}));
        merge(&mut value, Fake::state(term));
        ToolResult::ok(value)
    }

    fn list(&self, caller: &Caller) -> ToolResult {
        let terms = self.terms.lock().unwrap();
        let entries: Vec<Value> = terms
            .iter()
            .filter(|(_, term)| term.project == caller.project_id())
            .map(|(node, term)| {
                let kind = if self.defects.runs_listed_as_shells && term.kind == "run" {
                    "shell"
                } else {
                    term.kind
                };
                let mut entry = json!({"nodeId": node, "title": term.title, "kind": kind, "command": term.command});
                merge(&mut entry, Fake::state(term));
                merge(
                    &mut entry,
                    json!({
                        "startedAt": TIME,
                        "endedAt": term.ended.then_some(TIME),
                        "cursor": term.cursor(),
                        "lastOutputAt": (!term.output.is_empty()).then_some(TIME),
                        "waitingForInput": false,
                        "inputBy": null,
                        "notify": term.notify,
                    }),
                );
                entry
            })
            .collect();
        ToolResult::ok(Value::Array(entries))
    }

    fn search(&self, caller: &Caller, args: &Value) -> ToolResult {
        let pattern = args["pattern"].as_str().unwrap_or_default();
        let regex = args["regex"] == true;
        if regex && let Err(reason) = compile(pattern) {
            return ToolResult::failure(format!("Invalid pattern: {reason}"));
        }
        let terms = self.terms.lock().unwrap();
        let node = args["nodeId"].as_str();
        if node.is_some_and(|node| !terms.contains_key(node)) {
            return ToolResult::failure(NOT_FOUND);
        }
        let limit = args["limit"].as_u64().and_then(|n| usize::try_from(n).ok()).unwrap_or(20);
        let context = args["context"].as_u64().and_then(|n| usize::try_from(n).ok()).unwrap_or(0);
        let mut matches = Vec::new();
        for (id, term) in terms.iter().filter(|(id, term)| {
            term.project == caller.project_id() && node.is_none_or(|node| node == id.as_str())
        }) {
            let lines: Vec<&str> = term.output.split('\n').collect();
            let mut cursor = 0_u64;
            for (index, line) in lines.iter().enumerate() {
                if position(pattern, regex, line).is_some() {
                    let before = lines[index.saturating_sub(context)..index].to_vec();
                    let after = lines[index + 1..(index + 1 + context).min(lines.len())].to_vec();
                    matches.push(json!({"nodeId": id, "cursor": cursor, "line": line, "before": before, "after": after}));
                }
                cursor += line.chars().count() as u64 + 1;
            }
        }
        let truncated = matches.len() > limit;
        matches.truncate(limit);
        ToolResult::ok(json!({"matches": matches, "truncated": truncated}))
    }

    async fn handle(self: Arc<Self>, caller: Caller, request: ToolRequest) -> ToolResult {
        self.own(&caller);
        let args = request.args_value();
        let node = args["nodeId"].as_str().unwrap_or_default().to_owned();
        let operation = request.operation().unwrap_or_default().to_owned();
        let kind = self.terms.lock().unwrap().get(&node).map(|term| term.kind);
        match operation.as_str() {
            "terminal_open" => {
                let id = self.next_id();
                let term = Term::new(
                    caller.project_id(),
                    "shell",
                    args["title"].as_str().unwrap_or("shell"),
                );
                self.terms.lock().unwrap().insert(id.clone(), term);
                ToolResult::ok(json!({"nodeId": id}))
            }
            "terminal_run" => self.run(&caller, &args).await,
            "terminal_list" => self.list(&caller),
            "terminal_search" => self.search(&caller, &args),
            "canvas_list" => {
                let terms = self.terms.lock().unwrap();
                let nodes: Vec<Value> = terms
                    .iter()
                    .filter(|(_, term)| term.project == caller.project_id())
                    .map(|(id, term)| json!({"nodeId": id, "kind": if term.kind == "agent" { "agent" } else { "terminal" }}))
                    .collect();
                ToolResult::ok(Value::Array(nodes))
            }
            "terminal_read" | "terminal_wait" | "terminal_submit" | "terminal_input"
            | "terminal_interrupt" | "terminal_kill" | "terminal_close" | "canvas_move"
            | "canvas_resize"
                if kind.is_none() =>
            {
                ToolResult::failure(NOT_FOUND)
            }
            "terminal_read" => self.read(&node, &args),
            "terminal_wait" => self.wait(&node, &args).await,
            "terminal_submit" => {
                let command = args["command"].as_str().unwrap_or_default().to_owned();
                let cursor = self.terms.lock().unwrap().get(&node).map(Term::cursor);
                let ran = tokio::process::Command::new("sh").arg("-c").arg(&command).output().await;
                let printed = ran
                    .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
                    .unwrap_or_default();
                self.append(&node, &format!("$ {command}\n{printed}"));
                ToolResult::ok(json!({"nodeId": node, "delivered": true, "cursor": cursor}))
            }
            "terminal_input" => {
                let cursor = self.terms.lock().unwrap().get(&node).map(Term::cursor);
                ToolResult::ok(json!({"nodeId": node, "delivered": true, "cursor": cursor}))
            }
            "terminal_interrupt" => ToolResult::ok(json!({"nodeId": node, "delivered": true})),
            "terminal_kill" if kind != Some("run") => ToolResult::failure(
                "Kill only a run terminal started by terminal_run; use terminal_interrupt or terminal_close for other terminals",
            ),
            "terminal_kill" => {
                let group = self.terms.lock().unwrap().get(&node).and_then(|term| term.group);
                kill_group(group);
                self.until(&node, Duration::from_secs(5), |term| !term.running).await;
                let terms = self.terms.lock().unwrap();
                let Some(term) = terms.get(&node) else { return ToolResult::failure(NOT_FOUND) };
                let mut value = json!({"nodeId": node, "cursor": term.cursor()});
                merge(&mut value, Fake::state(term));
                ToolResult::ok(value)
            }
            "terminal_close" => {
                let removed = self.terms.lock().unwrap().remove(&node);
                if let Some(term) = removed.filter(|term| term.running) {
                    kill_group(term.group);
                }
                self.changed.notify_waiters();
                ToolResult::ok(json!({"nodeId": node, "cleanupPendingIds": []}))
            }
            "canvas_move" | "canvas_resize" => ToolResult::ok(json!({"nodeId": node})),
            _ => {
                let terminals = Mutex::default();
                let counter = Mutex::new(0);
                let defects = HandlerDefects { terminal_13: true, ..HandlerDefects::default() };
                answer(&caller, &request, &terminals, &counter, defects).await
            }
        }
    }
}

/// `timeoutMs`: 10 000 when absent, clamped to 0..=30 000.
fn timeout(args: &Value) -> Duration {
    Duration::from_secs_f64(
        args["timeoutMs"].as_f64().unwrap_or(10_000.0).clamp(0.0, 30_000.0) / 1000.0,
    )
}

/// Appends `more`'s members to `value`, in order.
fn merge(value: &mut Value, more: Value) {
    if let (Value::Object(object), Value::Object(more)) = (value, more) {
        object.extend(more);
    }
}

async fn fake(defects: Defects) -> (FakeApp, Arc<Fake>) {
    let fake = Arc::new(Fake { defects, ..Fake::default() });
    let handler = Arc::clone(&fake);
    let app = FakeApp::builder()
        .handler(handler_fn(move |caller, request| Arc::clone(&handler).handle(caller, request)))
        .config(ServerConfig::default().with_receive_timeout(Duration::from_secs(2)))
        .start()
        .await
        .unwrap();
    (app, fake)
}

/// The rules of 1.4.0 and 1.5.0 this file is about.
const LATER: [&str; 14] = [
    "result.terminal_list",
    "result.terminal_search",
    "wait.read-screen",
    "wait.until-change",
    "wait.keep-false",
    "survey.list",
    "survey.search",
    "survey.search-bad-pattern",
    "wait.any-of",
    "wait.regex",
    "wait.until-input",
    "wait.until-input-sleep",
    "notify.one-notice",
    "notify.line-format",
];

/// `--mutating --level strict`, only the rules that run commands (the others are the fake's
/// shared handler's, checked in `fake.rs` and `defects.rs`).
async fn run_against(app: &FakeApp) -> crate::support::Run {
    check(
        app.session_file(),
        &[
            "--mutating",
            "--level",
            "strict",
            "--only",
            "wait.",
            "--only",
            "survey.",
            "--only",
            "notify.",
            "--only",
            "result.terminal_",
        ],
    )
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_runs_commands_passes_every_rule_of_the_later_members() {
    let (app, fake) = fake(Defects::default()).await;
    let run = run_against(&app).await;
    assert_eq!(run.code, Some(0), "failures:\n{}\nstderr: {}", run.failures(), run.stderr);
    let passed = run.ids("PASS");
    for id in LATER {
        assert!(passed.contains(id), "{id} did not pass: {}", run.stdout);
    }
    // Every run node the suite made is closed; the caller's own node remains.
    let left: Vec<String> = fake.terms.lock().unwrap().keys().cloned().collect();
    assert_eq!(left.len(), 1, "left: {left:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn planted_defects_fail_exactly_their_rules() {
    for (defects, failed) in [
        (Defects { notice_twice: true, ..Defects::default() }, vec!["notify.one-notice"]),
        (
            Defects { matched_off_by_one: true, ..Defects::default() },
            vec!["wait.any-of", "wait.regex"],
        ),
        (Defects { runs_listed_as_shells: true, ..Defects::default() }, vec!["survey.list"]),
        (Defects { input_by_anything: true, ..Defects::default() }, vec!["wait.until-input-sleep"]),
    ] {
        let (app, _fake) = fake(defects).await;
        let run = run_against(&app).await;
        let expected: std::collections::BTreeSet<String> =
            failed.iter().map(|id| (*id).to_owned()).collect();
        assert_eq!(run.ids("FAIL"), expected, "{defects:?}: {}", run.failures());
    }
}
