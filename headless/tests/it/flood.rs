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
