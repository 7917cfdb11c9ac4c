//! Faults under what headless stands on (issue 29): tmux sessions and the tmux server going away,
//! over real tmux and the real server.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;
use termsprawl_headless::Server;
use termsprawl_headless::control::ControlRequest;
use termsprawl_protocol::ToolResult;

use crate::support::{Agent, Fixture, TmuxGuard, call, fails, node, ok};

/// What a pending wait or run answers when the tmux server goes away.
const TMUX_GONE: &str = "The tmux server went away while waiting: the terminal's session ended with it; the node and its output stay, and the next terminal_open or terminal_run starts a new tmux server";

fn id(value: &Value) -> String {
    value["nodeId"].as_str().unwrap().to_owned()
}

/// `(running, exitCode)` of an answer.
fn status(value: &Value) -> (Value, Value) {
    (value["running"].clone(), value["exitCode"].clone())
}

/// The three ways an agent asks whether a node runs: a plain read, a read with `since`, a wait
/// for its exit. They must agree. The wait comes first, so that the reads come after whatever
/// exit is coming.
async fn three_answers(agent: &Agent, node_id: &str) -> [Value; 3] {
    let wait =
        ok(agent, "terminal_wait", json!({"nodeId": node_id, "until": "exit", "timeoutMs": 5000}))
            .await;
    let plain = ok(agent, "terminal_read", json!({"nodeId": node_id})).await;
    let since = ok(agent, "terminal_read", json!({"nodeId": node_id, "since": 0})).await;
    [plain, since, wait]
}

/// The names of the temporary files (`*.tmp`) in `dir`.
fn temporary_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| Path::new(name).extension().is_some_and(|extension| extension == "tmp"))
        .collect()
}

/// `terminal_read {view: screen}` of a node whose session is gone: a whole window of rows.
async fn gone_screen(agent: &Agent, node_id: &str) -> Value {
    let screen = ok(agent, "terminal_read", json!({"nodeId": node_id, "view": "screen"})).await;
    assert_eq!((&screen["rows"], &screen["cols"]), (&json!(48), &json!(160)), "{screen}");
    assert_eq!(screen["output"].as_str().unwrap().matches('\n').count(), 48, "{screen}");
    assert_eq!(screen["alternateScreen"], json!(false), "{screen}");
    screen
}

/// tmux 3.3a answers `display-message` about a session that does not exist with exit 0 and empty
/// fields: a shell whose user typed `exit` (while other sessions live) and a run node whose
/// session tmux lost read as not running, the same way in every answer.
#[tokio::test(flavor = "multi_thread")]
async fn a_gone_session_reads_as_not_running() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;

    let shell = id(&ok(&agent, "terminal_open", json!({})).await);
    ok(&agent, "terminal_submit", json!({"nodeId": shell, "command": "echo bye-shell; exit"}))
        .await;
    let [plain, since, wait] = three_answers(&agent, &shell).await;
    assert_eq!(wait["reached"], json!(true), "{wait}");
    for answer in [&plain, &since, &wait] {
        assert_eq!(status(answer), (json!(false), Value::Null), "{answer}");
    }
    assert!(since["output"].as_str().unwrap().contains("bye-shell"), "{since}");
    assert!(plain["output"].as_str().unwrap().contains("bye-shell"), "{plain}");
    // The screen view agrees (before: `Terminal is not attached`), from the stream's last lines.
    let screen = gone_screen(&agent, &shell).await;
    assert_eq!(status(&screen), (json!(false), Value::Null), "{screen}");
    assert!(screen["output"].as_str().unwrap().contains("bye-shell"), "{screen}");

    let run = ok(
        &agent,
        "terminal_run",
        json!({"command": "echo out-seven; exit 7", "timeoutMs": 20000}),
    )
    .await;
    assert_eq!(status(&run), (json!(false), json!(7)), "{run}");
    let run = id(&run);
    // tmux loses the session (as when its server is killed and another one started).
    fixture.guard.tmux(&["kill-session", "-t", &format!("=ts-{run}")]);
    let [plain, since, wait] = three_answers(&agent, &run).await;
    assert_eq!(wait["reached"], json!(true), "{wait}");
    for answer in [&plain, &since, &wait] {
        assert_eq!(status(answer), (json!(false), json!(7)), "{answer}");
        assert!(answer["output"].as_str().unwrap().contains("out-seven"), "{answer}");
    }
    let screen = gone_screen(&agent, &run).await;
    assert_eq!(status(&screen), (json!(false), json!(7)), "{screen}");
    assert!(screen["output"].as_str().unwrap().starts_with("out-seven\n"), "{screen}");
    assert_eq!((&screen["cursorRow"], &screen["cursorCol"]), (&json!(1), &json!(0)), "{screen}");
    // canvas_list shows neither as attached.
    for node_id in [&shell, &run] {
        assert_eq!(node(&agent, node_id).await["attached"], json!(false));
    }
}

/// The managed tmux server is killed while waits and a run are pending: each answers within a
/// second with the error that says so; the nodes stay, read as not running, the finished run
/// keeps its output and exit; the next agent, shell and run start a new tmux server; the person's
/// close and an agent's close work on nodes whose sessions are gone.
#[tokio::test(flavor = "multi_thread")]
async fn tmux_dying_answers_every_pending_wait_and_loses_nothing() {
    let fixture = Fixture::start().await;
    let alpha = fixture.agent("alpha").await;
    let shell = id(&ok(&alpha, "terminal_open", json!({"title": "the shell"})).await);
    let busy = ok(&alpha, "terminal_run", json!({"command": "sleep 60", "timeoutMs": 0})).await;
    assert_eq!(busy["running"], json!(true), "{busy}");
    let busy = id(&busy);
    let done = ok(&alpha, "terminal_run", json!({"command": "echo out-seven; exit 7"})).await;
    assert_eq!(status(&done), (json!(false), json!(7)), "{done}");
    let done = id(&done);

    let pending: Vec<(&str, Value)> = vec![
        (
            "terminal_wait",
            json!({"nodeId": shell, "until": "text", "text": "never-printed", "timeoutMs": 20000}),
        ),
        ("terminal_wait", json!({"nodeId": shell, "until": "exit", "timeoutMs": 20000})),
        (
            "terminal_wait",
            json!({"nodeId": busy, "until": "quiet", "quietMs": 20000, "timeoutMs": 20000}),
        ),
        ("terminal_wait", json!({"nodeId": busy, "until": "exit", "timeoutMs": 20000})),
        ("terminal_run", json!({"command": "sleep 60", "timeoutMs": 20000})),
    ];
    let mut tasks = Vec::new();
    for (operation, args) in pending {
        let agent = alpha.clone();
        tasks.push(tokio::spawn(async move {
            let result = call(&agent, operation, args.clone()).await;
            (operation, args, result, Instant::now())
        }));
    }
    // Every call is waiting (the run's command has started).
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let killed = Instant::now();
    assert!(fixture.guard.tmux(&["kill-server"]).status.success());
    for task in tasks {
        let (operation, args, result, answered) = task.await.unwrap();
        let took = answered.saturating_duration_since(killed);
        assert!(took < Duration::from_secs(1), "{operation} {args} answered after {took:?}");
        let ToolResult::Failure { error } = result else {
            panic!("{operation} {args} succeeded: {result:?}")
        };
        assert_eq!(error, TMUX_GONE, "{operation} {args}");
    }

    // A new agent starts a new tmux server; the nodes are all there and none runs.
    let beta = fixture.agent("beta").await;
    for node_id in [&shell, &busy, &done] {
        assert_eq!(node(&beta, node_id).await["attached"], json!(false), "{node_id}");
        let read = ok(&beta, "terminal_read", json!({"nodeId": node_id, "since": 0})).await;
        assert_eq!(read["running"], json!(false), "{read}");
    }
    assert_eq!(node(&beta, &shell).await["title"], "the shell");
    let [plain, since, wait] = three_answers(&beta, &done).await;
    for answer in [&plain, &since, &wait] {
        assert_eq!(status(answer), (json!(false), json!(7)), "{answer}");
        assert!(answer["output"].as_str().unwrap().contains("out-seven"), "{answer}");
    }
    let fresh = id(&ok(&beta, "terminal_open", json!({})).await);
    ok(&beta, "terminal_submit", json!({"nodeId": fresh, "command": "echo fresh-$((1+1))"})).await;
    let seen = ok(
        &beta,
        "terminal_wait",
        json!({"nodeId": fresh, "until": "text", "text": "fresh-2", "timeoutMs": 10000}),
    )
    .await;
    assert_eq!(seen["reached"], json!(true), "{seen}");
    let again =
        ok(&beta, "terminal_run", json!({"command": "echo again", "timeoutMs": 20000})).await;
    assert_eq!((status(&again), &again["output"]), ((json!(false), json!(0)), &json!("again\n")));

    // Closing nodes whose sessions are gone: an agent's close, and the person's.
    ok(&beta, "terminal_close", json!({"nodeId": shell})).await;
    fixture.server().control(ControlRequest::Close { node_id: busy.clone() }).await.unwrap();
    let list = ok(&beta, "canvas_list", json!({})).await.to_string();
    assert!(!list.contains(&shell) && !list.contains(&busy) && list.contains(&done), "{list}");
}

/// A tmpfs of `size` mounted on `path` for the test (lazily unmounted when dropped); `None`, with
/// the reason printed, where mounting is not permitted.
struct Tmpfs(PathBuf);

impl Tmpfs {
    #[expect(clippy::print_stderr, reason = "a skipped test says so on stderr")]
    fn mount(path: &Path, size: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(path).unwrap();
        let output = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size},mode=0700"), "tmpfs"])
            .arg(path)
            .output();
        match output {
            Ok(output) if output.status.success() => Some(Tmpfs(path.to_path_buf())),
            Ok(output) => {
                eprintln!(
                    "skipped: cannot mount a tmpfs on {}: {}",
                    path.display(),
                    String::from_utf8_lossy(&output.stderr).trim()
                );
                None
            }
            Err(error) => {
                eprintln!("skipped: cannot run mount: {error}");
                None
            }
        }
    }

    /// Writes a filler file until the filesystem is full; answers its path.
    fn fill(&self) -> PathBuf {
        let filler = self.0.join("filler");
        let mut file = std::fs::File::create(&filler).unwrap();
        let chunk = vec![b'x'; 64 * 1024];
        while file.write_all(&chunk).is_ok() {}
        // Whatever a partial page left.
        while file.write_all(b"x").is_ok() {}
        filler
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// The data directory on a small filesystem that fills up: a `terminal_run` that cannot be saved
/// fails with the save's error and never runs its command; the canvas keeps everything committed
/// before, no temporary file is left; once space is free everything works again without a
/// restart.
#[tokio::test(flavor = "multi_thread")]
async fn a_full_disk_fails_calls_cleanly_and_loses_nothing() {
    let dir = TempDir::new().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir(&project).unwrap();
    let data = dir.path().join("data");
    let Some(tmpfs) = Tmpfs::mount(&data, "4m") else { return };
    let mut fixture = Fixture {
        server: None,
        project: project.canonicalize().unwrap(),
        guard: TmuxGuard::new(&data),
        dir,
    };
    fixture.server = Some(Server::start(fixture.config()).await.unwrap());
    let agent = fixture.agent("alpha").await;
    ok(&agent, "sticky_open", json!({"text": "committed before the fault"})).await;
    let before =
        ok(&agent, "terminal_run", json!({"command": "echo before", "timeoutMs": 20000})).await;
    assert_eq!(before["output"], "before\n");

    let shell = id(&ok(&agent, "terminal_open", json!({})).await);
    // A run that finishes while the disk is full.
    let go = fixture.project.join("go");
    let command = format!("while [ ! -e '{}' ]; do sleep 0.05; done; exit 4", go.display());
    let late = id(&ok(&agent, "terminal_run", json!({"command": command, "timeoutMs": 0})).await);

    let filler = tmpfs.fill();
    // The shell prints more than its stream file's last page can hold: the output copy fails.
    ok(&agent, "terminal_submit", json!({"nodeId": shell, "command": "seq 1 3000"})).await;
    let end = fixture.server().layout().terminals_dir().join(format!("{shell}.end"));
    let deadline = Instant::now() + Duration::from_secs(10);
    while !end.exists() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(end.exists(), "the shell's output copy did not stop on the full disk");
    let canvas = fixture.agent_tools().join("canvas.json");
    let saved = std::fs::read(&canvas).unwrap();
    for attempt in 0..5 {
        let marker = fixture.project.join(format!("ran-{attempt}"));
        let command = format!("touch '{}'", marker.display());
        let refused =
            fails(&agent, "terminal_run", json!({"command": command, "timeoutMs": 5000})).await;
        assert!(refused.starts_with("cannot save the canvas: "), "{refused}");
        assert!(refused.contains("No space left on device"), "{refused}");
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!marker.exists(), "attempt {attempt}: the failed run ran its command");
    }
    // The run ends: its status and final record cannot be written; tmux still has its exit,
    // and neither a half-written record nor a temporary file is left.
    std::fs::write(&go, b"").unwrap();
    let ended =
        ok(&agent, "terminal_wait", json!({"nodeId": late, "until": "exit", "timeoutMs": 20000}))
            .await;
    assert_eq!(status(&ended), (json!(false), json!(4)), "{ended}");
    let terminals = fixture.server().layout().terminals_dir();
    assert!(!terminals.join(format!("{late}.final")).exists());
    assert!(!terminals.join(format!("{late}.status")).exists());
    assert_eq!(temporary_files(&terminals), Vec::<String>::new());
    let refused = fails(&agent, "sticky_open", json!({"text": "while full"})).await;
    assert!(refused.starts_with("cannot save the canvas: "), "{refused}");
    // The canvas file is the one committed before the fault, and no temporary file is left.
    assert_eq!(std::fs::read(&canvas).unwrap(), saved);
    let text = String::from_utf8(saved).unwrap();
    assert!(text.contains("committed before the fault") && !text.contains("while full"), "{text}");
    assert_eq!(temporary_files(&fixture.agent_tools()), Vec::<String>::new());

    // Space is freed: the same calls work, without a restart.
    std::fs::remove_file(filler).unwrap();
    let after =
        ok(&agent, "terminal_run", json!({"command": "echo after", "timeoutMs": 20000})).await;
    assert_eq!((&after["exitCode"], &after["output"]), (&json!(0), &json!("after\n")));
    ok(&agent, "sticky_open", json!({"text": "after the fault"})).await;
    // The finished run is retired now that its record can be written, and keeps its exit.
    let retired = ok(&agent, "terminal_read", json!({"nodeId": late})).await;
    assert_eq!(status(&retired), (json!(false), json!(4)), "{retired}");
    assert!(terminals.join(format!("{late}.final")).exists());
    // The shell is followed again (by the liveness check's next round).
    let cursor = ok(&agent, "terminal_read", json!({"nodeId": shell, "since": 0})).await["cursor"]
        .as_u64()
        .unwrap();
    // What the shell prints before the pipe is back is not followed, so the line is printed
    // again until it shows (the check runs every 2 s; a loaded machine may take a few rounds).
    let deadline = Instant::now() + Duration::from_secs(30);
    let seen = loop {
        ok(
            &agent,
            "terminal_submit",
            json!({"nodeId": shell, "command": "echo after-free-$((2+3))"}),
        )
        .await;
        let seen = ok(
            &agent,
            "terminal_wait",
            json!({"nodeId": shell, "until": "text", "text": "after-free-5", "since": cursor, "timeoutMs": 2000}),
        )
        .await;
        if seen["reached"] == json!(true) || Instant::now() > deadline {
            break seen;
        }
    };
    assert_eq!((&seen["reached"], &seen["running"]), (&json!(true), &json!(true)), "{seen}");
    let list = ok(&agent, "canvas_list", json!({})).await.to_string();
    assert!(
        list.contains("committed before the fault") && list.contains("after the fault"),
        "{list}"
    );
    fixture.stop().await;
}
