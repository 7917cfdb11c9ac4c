//! Terminal operations over real tmux sessions.

use serde_json::{Value, json};

use crate::support::{Fixture, fails, node, ok, wait_for_output};

#[tokio::test(flavor = "multi_thread")]
async fn open_submit_read_input_interrupt_close() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let opened = ok(&agent, "terminal_open", json!({"title": "build"})).await;
    let shell = opened["nodeId"].as_str().unwrap().to_owned();
    assert_eq!(opened, json!({"nodeId": shell}));
    let shown = node(&agent, &shell).await;
    assert_eq!(
        (shown["kind"].as_str(), shown["title"].as_str(), shown["attached"].as_bool()),
        (Some("terminal"), Some("build"), Some(true))
    );
    let session = format!("=ts-{shell}");
    assert!(fixture.guard.tmux(&["has-session", "-t", &session]).status.success());

    // The shell runs in the project folder.
    let submitted = ok(
        &agent,
        "terminal_submit",
        json!({"nodeId": shell, "command": "pwd; echo 'it'\\''s' done-$((6*7))"}),
    )
    .await;
    assert_eq!(
        submitted,
        json!({"nodeId": shell, "delivered": true, "cursor": submitted["cursor"]})
    );
    assert!(submitted["cursor"].is_u64());
    let output = wait_for_output(&agent, &shell, "done-42").await;
    assert!(output.contains(fixture.project.to_str().unwrap()), "{output}");
    assert!(output.contains("it's done-42"), "{output}");

    // terminal_input sends exactly the text, without Enter.
    ok(&agent, "terminal_input", json!({"nodeId": shell, "text": "echo typed-"})).await;
    ok(&agent, "terminal_input", json!({"nodeId": shell, "text": "$((1+1))\n"})).await;
    wait_for_output(&agent, &shell, "typed-2").await;

    // Ctrl-C ends a running command.
    ok(
        &agent,
        "terminal_submit",
        json!({"nodeId": shell, "command": "echo sleeping-$((3+4)); sleep 30; echo not-$((1+1))-interrupted"}),
    )
    .await;
    // Ctrl-C only once the shell runs the command: a Ctrl-C that arrives while the shell hands
    // the terminal to `sleep` would reach the shell instead.
    wait_for_output(&agent, &shell, "sleeping-7").await;
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert_eq!(
        ok(&agent, "terminal_interrupt", json!({"nodeId": shell})).await,
        json!({"nodeId": shell, "delivered": true})
    );
    ok(&agent, "terminal_submit", json!({"nodeId": shell, "command": "echo after-$((2+3))"})).await;
    let output = wait_for_output(&agent, &shell, "after-5").await;
    assert!(!output.contains("not-2-interrupted"));

    let closed = ok(&agent, "terminal_close", json!({"nodeId": shell})).await;
    assert_eq!(closed, json!({"nodeId": shell, "cleanupPendingIds": []}));
    assert!(!fixture.guard.tmux(&["has-session", "-t", &session]).status.success());
    assert!(node(&agent, &shell).await.is_null());
    assert_eq!(
        fails(&agent, "terminal_read", json!({"nodeId": shell})).await,
        "Local terminal not found in this project"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn read_returns_the_tail_with_clamped_max_chars() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let shell = ok(&agent, "terminal_open", json!({})).await["nodeId"].as_str().unwrap().to_owned();
    assert_eq!(node(&agent, &shell).await["title"], "Terminal");
    ok(
        &agent,
        "terminal_submit",
        json!({"nodeId": shell, "command": "printf 'x%.0s' $(seq 300); echo END"}),
    )
    .await;
    let full = wait_for_output(&agent, &shell, "xEND").await;
    let read = |max: Value| {
        let agent = agent.clone();
        let shell = shell.clone();
        async move {
            let value =
                ok(&agent, "terminal_read", json!({"nodeId": shell, "maxChars": max})).await;
            assert_eq!(value["nodeId"], shell.as_str());
            value["output"].as_str().unwrap().to_owned()
        }
    };
    let tail = read(json!(5)).await;
    assert_eq!(tail.chars().count(), 5);
    assert!(full.ends_with(&tail));
    assert_eq!(read(json!(2.9)).await.chars().count(), 2);
    assert_eq!(read(json!(0)).await.chars().count(), 1);
    assert_eq!(read(json!(-50)).await.chars().count(), 1);
    assert_eq!(read(json!(0.5)).await.chars().count(), 1);
    let large = read(json!(1_000_000)).await;
    assert_eq!(large, full.clone());
    assert!(!full.ends_with("\n\n"), "blank lines below the output are dropped: {full:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn own_node_and_agent_terminals_are_protected() {
    let fixture = Fixture::start().await;
    let alpha = fixture.agent("alpha").await;
    let beta = fixture.agent("beta").await;
    let own = "Use a separate shell terminal instead of writing into or closing your own agent";
    assert_eq!(
        fails(&alpha, "terminal_submit", json!({"nodeId": alpha.node_id, "command": "ls"})).await,
        own
    );
    assert_eq!(
        fails(&alpha, "terminal_input", json!({"nodeId": alpha.node_id, "text": "ls"})).await,
        own
    );
    assert_eq!(fails(&alpha, "terminal_interrupt", json!({"nodeId": alpha.node_id})).await, own);
    assert_eq!(fails(&alpha, "terminal_close", json!({"nodeId": alpha.node_id})).await, own);
    // Reading one's own terminal is fine.
    ok(&alpha, "terminal_read", json!({"nodeId": alpha.node_id})).await;

    // Another agent's terminal is never driven by an agent (rule agent-link-isolation, tested in
    // full by agent_isolation.rs), and is read only over a link.
    let not_yours = termsprawl_headless::messages::AGENT_NOT_YOURS;
    let error =
        fails(&alpha, "terminal_submit", json!({"nodeId": beta.node_id, "command": "ls"})).await;
    assert_eq!(error, not_yours);
    let error = fails(
        &alpha,
        "terminal_input",
        json!({"nodeId": beta.node_id, "text": "echo from-alpha-$((3*3))\n"}),
    )
    .await;
    assert_eq!(error, not_yours);
    assert_eq!(
        fails(&alpha, "terminal_read", json!({"nodeId": beta.node_id})).await,
        termsprawl_headless::messages::agent_read_not_linked(&alpha.node_id, &beta.node_id)
    );

    let sticky = ok(&alpha, "sticky_open", json!({"text": "n"})).await["nodeId"]
        .as_str()
        .unwrap()
        .to_owned();
    for operation in ["terminal_read", "terminal_interrupt", "terminal_close", "terminal_external"]
    {
        for target in [sticky.as_str(), "nope"] {
            let error = fails(&alpha, operation, json!({"nodeId": target})).await;
            assert_eq!(error, "Local terminal not found in this project", "{operation} {target}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_terminal_whose_session_ended_is_not_attached() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let shell = ok(&agent, "terminal_open", json!({})).await["nodeId"].as_str().unwrap().to_owned();
    assert!(fixture.guard.tmux(&["kill-session", "-t", &format!("=ts-{shell}")]).status.success());
    assert_eq!(node(&agent, &shell).await["attached"], false);
    // Read, it is a terminal that does not run (issue 29: as with since and as a wait says).
    let read = ok(&agent, "terminal_read", json!({"nodeId": shell})).await;
    assert_eq!((&read["running"], &read["exitCode"]), (&json!(false), &Value::Null), "{read}");
    for (operation, args) in [
        ("terminal_submit", json!({"nodeId": shell, "command": "ls"})),
        ("terminal_input", json!({"nodeId": shell, "text": "ls"})),
        ("terminal_input", json!({"nodeId": shell, "text": ""})),
        ("terminal_interrupt", json!({"nodeId": shell})),
    ] {
        assert_eq!(fails(&agent, operation, args).await, "Terminal is not attached", "{operation}");
    }
    assert_eq!(
        fails(&agent, "terminal_external", json!({"nodeId": shell})).await,
        "A running managed tmux session is required"
    );
    // Closing a dead terminal still removes the node.
    ok(&agent, "terminal_close", json!({"nodeId": shell})).await;
    assert!(node(&agent, &shell).await.is_null());
}

#[tokio::test(flavor = "multi_thread")]
async fn external_uses_the_configured_terminal() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    // A stand-in emulator that records its arguments and stays up past the grace period.
    let emulator = fixture.dir.path().join("emulator");
    let record = fixture.dir.path().join("emulator.args");
    std::fs::write(
        &emulator,
        format!("#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}'\nsleep 1\n", record.display()),
    )
    .unwrap();
    std::fs::set_permissions(&emulator, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .unwrap();
    let preferences =
        json!({"externalTerminal": {"executable": emulator, "args": ["--run", "{command}"]}});
    std::fs::write(fixture.agent_tools().join("preferences.json"), preferences.to_string())
        .unwrap();

    let opened = ok(&agent, "terminal_external", json!({"nodeId": agent.node_id})).await;
    assert_eq!(opened, json!({"nodeId": agent.node_id, "attached": true}));
    let args = std::fs::read_to_string(&record).unwrap();
    let args: Vec<&str> = args.lines().collect();
    let socket = fixture.user_data().join("tmux-sockets/termsprawl");
    let config = fixture.user_data().join("tmux.conf");
    assert_eq!(args[0], "--run");
    assert_eq!(
        &args[2..],
        [
            "-S",
            socket.to_str().unwrap(),
            "-f",
            config.to_str().unwrap(),
            "attach-session",
            "-t",
            &format!("ts-{}", agent.node_id)
        ]
    );

    std::fs::write(fixture.agent_tools().join("preferences.json"), "{not json").unwrap();
    assert_eq!(
        fails(&agent, "terminal_external", json!({"nodeId": agent.node_id})).await,
        "Invalid agent-tools/preferences.json"
    );
}
