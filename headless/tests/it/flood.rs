//! Many things at once (issue 29): run nodes whose output races their exit while tmux is busy,
//! over real tmux and the real server.

use std::time::Instant;

use serde_json::{Value, json};

use crate::support::{Agent, Fixture, call};

/// Runs in flight at once in each round of the race test, and rounds.
const RACE_RUNS: usize = 32;
const RACE_ROUNDS: usize = 5;
/// Runs that print as fast as tmux reads, in each round.
const NOISY: usize = 1;
/// Busy processes outside tmux during each round.
const HOGS: usize = 0;

/// The answer of one `terminal_run` of `echo <marker>`: its output must hold the marker.
async fn echo_run(agent: Agent, go: String, marker: String) -> (String, Value) {
    let command = format!("while [ ! -e {go} ]; do sleep 0.05; done; seq 1 3000; echo {marker}");
    let answer =
        call(&agent, "terminal_run", json!({"command": command, "timeoutMs": 30000})).await;
    let value = match answer {
        termsprawl_protocol::ToolResult::Success { value } => value.unwrap_or(Value::Null),
        termsprawl_protocol::ToolResult::Failure { error } => json!({"error": error}),
    };
    (marker, value)
}

/// An answer that reports a run's exit includes everything the command printed, however busy
/// tmux is: while noisy runs keep tmux reading other panes, many `echo` runs finish at once, and
/// every answer that says `running: false` holds its line. (Before the exit mark of the run
/// wrapper, the exit was reported once the stream had been quiet for 25 ms, and under this load
/// a share of the answers came back empty.)
#[tokio::test(flavor = "multi_thread")]
async fn every_exit_answer_holds_the_output_of_its_command_under_load() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let started = Instant::now();
    let mut empty = Vec::new();
    let mut answered = 0;
    for round in 0..RACE_ROUNDS {
        let before = started_pipes(&fixture);
        let go = fixture.dir.path().join(format!("go-{round}")).to_string_lossy().into_owned();
        // Noise: panes printing as fast as tmux reads them, from the moment the runs go.
        let noisy: Vec<_> = (0..NOISY)
            .map(|_| {
                let (agent, go) = (agent.clone(), go.clone());
                tokio::spawn(async move {
                    let command = format!(
                        "while [ ! -e {go} ]; do sleep 0.05; done; yes noise-noise-noise | head -c 4000000"
                    );
                    let args = json!({"command": command, "timeoutMs": 30000, "keep": false});
                    call(&agent, "terminal_run", args).await
                })
            })
            .collect();
        let runs: Vec<_> = (0..RACE_RUNS)
            .map(|index| {
                tokio::spawn(echo_run(agent.clone(), go.clone(), format!("run-{round}-{index}")))
            })
            .collect();
        // Every run is set up (the project queue takes them one by one): let them go at once.
        let deadline = Instant::now() + std::time::Duration::from_secs(20);
        while started_pipes(&fixture) < before + NOISY + RACE_RUNS {
            assert!(Instant::now() < deadline, "the runs were not set up in time");
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        // And processes that keep both cores busy, so the pipes' readers wait for a core.
        let hogs: Vec<_> = (0..HOGS)
            .map(|_| {
                std::process::Command::new("sh")
                    .args(["-c", "exec yes > /dev/null"])
                    .spawn()
                    .unwrap()
            })
            .collect();
        std::fs::write(&go, b"").unwrap();
        for run in runs {
            let (marker, value) = run.await.unwrap();
            assert!(value.get("error").is_none(), "{marker}: {value}");
            assert_eq!(value["running"], json!(false), "{marker}: {value}");
            answered += 1;
            if !value["output"].as_str().unwrap_or_default().contains(&marker) {
                // What the stream file holds, to tell a late answer from output lost on the way.
                let node = value["nodeId"].as_str().unwrap_or_default();
                let out = fixture.agent_tools().join("terminals").join(format!("{node}.out"));
                let out = std::fs::read(out).unwrap_or_default();
                empty.push(format!("{marker}: {value}; the stream file has {} bytes", out.len()));
            }
        }
        for mut hog in hogs {
            let _ = hog.kill();
            let _ = hog.wait();
        }
        for noisy in noisy {
            let _ = noisy.await;
        }
    }
    eprintln!(
        "{} of {answered} exit answers lacked their command's output ({:.1} s)",
        empty.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(empty.is_empty(), "answers without their output:\n{}", empty.join("\n"));
}

/// How many terminal nodes' output pipes have started (`<nodeId>.start` files).
fn started_pipes(fixture: &Fixture) -> usize {
    let terminals = fixture.agent_tools().join("terminals");
    let entries = std::fs::read_dir(terminals).unwrap();
    entries
        .filter(|entry| entry.as_ref().unwrap().path().extension() == Some("start".as_ref()))
        .count()
}

/// Agents of the flood, all in one project (so one queue takes every set-up call).
const FLOOD_AGENTS: usize = 64;

/// The resident size and open descriptors of this process (the server runs in it), from /proc.
fn rss_kib_and_fds() -> (u64, usize) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let rss = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    (rss, std::fs::read_dir("/proc/self/fd").unwrap().count())
}

/// One agent of the flood: opens a shell and a run node, waits on both, and answers how long its
/// slowest call took. Every answer must be its own: the run's output is exactly its line, the
/// shell shows its own marker.
async fn flood_agent(agent: Agent, index: usize) -> Result<std::time::Duration, String> {
    let mut slowest = std::time::Duration::ZERO;
    let mut timed = async |operation: &str, args: Value| {
        let started = Instant::now();
        let answer = call(&agent, operation, args).await;
        slowest = slowest.max(started.elapsed());
        match answer {
            termsprawl_protocol::ToolResult::Success { value } => Ok(value.unwrap_or(Value::Null)),
            termsprawl_protocol::ToolResult::Failure { error } => {
                Err(format!("{operation}: {error}"))
            }
        }
    };
    let shell = timed("terminal_open", json!({})).await?["nodeId"].as_str().unwrap().to_owned();
    let line = format!("flood-run-{index}");
    let run = timed("terminal_run", json!({"command": format!("echo {line}"), "timeoutMs": 30000}))
        .await?;
    if run["output"] != json!(format!("{line}\n")) || run["exitCode"] != json!(0) {
        return Err(format!("agent {index}: run answered {run}"));
    }
    let marker = format!("flood-shell-$((1000+{index}))");
    timed("terminal_submit", json!({"nodeId": shell, "command": format!("echo {marker}")})).await?;
    let expected = format!("flood-shell-{}", 1000 + index);
    let seen = timed(
        "terminal_wait",
        json!({"nodeId": shell, "until": "text", "text": expected, "since": 0, "timeoutMs": 30000}),
    )
    .await?;
    if seen["reached"] != json!(true) {
        return Err(format!("agent {index}: its shell never showed {expected}: {seen}"));
    }
    Ok(slowest)
}

/// A flood (issue 29): 64 agents launched within a second in one project, each opening a shell
/// and a run node and waiting on both, while another agent keeps making one-shot calls. Every
/// call is answered, no answer belongs to another agent, the slowest stays well inside the
/// queue's 15 s expiry, and the server's descriptors and memory stay bounded.
#[tokio::test(flavor = "multi_thread")]
async fn a_flood_of_agents_is_answered_in_time_without_mixing_sessions() {
    let fixture = Fixture::start().await;
    let (rss_before, fds_before) = rss_kib_and_fds();
    let started = Instant::now();
    let agents = fixture.agents_at_once((0..FLOOD_AGENTS).map(|index| format!("flood-{index}")));
    let launched = started.elapsed();
    // One-shot traffic beside the flood, from an agent of its own.
    let observer = fixture.agent("observer").await;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let traffic = {
        let (observer, stop) = (observer.clone(), std::sync::Arc::clone(&stop));
        tokio::spawn(async move {
            let mut answered = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                for operation in ["canvas_list", "session_info"] {
                    match call(&observer, operation, json!({})).await {
                        termsprawl_protocol::ToolResult::Success { .. } => answered += 1,
                        termsprawl_protocol::ToolResult::Failure { error } => {
                            return Err(format!("{operation}: {error}"));
                        }
                    }
                }
            }
            Ok(answered)
        })
    };
    let floods: Vec<_> = agents
        .into_iter()
        .enumerate()
        .map(|(index, agent)| tokio::spawn(flood_agent(agent, index)))
        .collect();
    let mut slowest = std::time::Duration::ZERO;
    let mut failures = Vec::new();
    for flood in floods {
        match flood.await.unwrap() {
            Ok(time) => slowest = slowest.max(time),
            Err(error) => failures.push(error),
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let one_shots = traffic.await.unwrap();
    // The figures are the whole test process's, and other tests run beside this one with servers
    // of their own: what this server holds is bounded when the count comes back under the bound
    // once the flood is over (a descriptor held per agent or node never would).
    let rest = Instant::now() + std::time::Duration::from_secs(20);
    let (rss_after, fds_after) = loop {
        let (rss, fds) = rss_kib_and_fds();
        if fds < fds_before + 64 || Instant::now() > rest {
            break (rss, fds);
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    eprintln!(
        "flood: {FLOOD_AGENTS} agents launched in {:.2} s; slowest call {:.2} s; all done in {:.1} s; \
         {one_shots:?} one-shot answers beside; RSS {rss_before} -> {rss_after} KiB, fds {fds_before} -> {fds_after}",
        launched.as_secs_f64(),
        slowest.as_secs_f64(),
        started.elapsed().as_secs_f64(),
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let one_shots = one_shots.unwrap();
    assert!(one_shots > 0, "no one-shot call was answered beside the flood");
    assert!(slowest < std::time::Duration::from_secs(10), "slowest call {slowest:?}");
    assert!(fds_after < fds_before + 64, "descriptors {fds_before} -> {fds_after}");
    assert!(rss_after < rss_before + 128 * 1024, "RSS {rss_before} -> {rss_after} KiB");
}
