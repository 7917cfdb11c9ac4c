//! Agent sessions: `session_info`, guides, status, cards, `agent_launch`, the launch files and
//! environment, and the operations the headless server does not have.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{Value, json};
use termsprawl_external_term::SearchPath;
use termsprawl_protocol::{Topic, guide, operations};

use crate::support::{Fixture, fails, node, ok, wait_for_output};

#[tokio::test(flavor = "multi_thread")]
async fn session_info_has_the_contract_shape() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let info = ok(&agent, "session_info", json!({})).await;
    let keys: Vec<&str> = info.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "nodeId",
            "projectId",
            "instanceId",
            "host",
            "status",
            "appVersion",
            "preferencesFile",
            "guidesDirectory",
            "browserEnabled",
            "operations",
            "rules"
        ]
    );
    assert_eq!(info["nodeId"], agent.node_id.as_str());
    assert_eq!(info["projectId"], fixture.server().default_project_id());
    assert_eq!(info["instanceId"], fixture.server().instance_id());
    assert_eq!(info["host"], "local");
    assert_eq!(
        info["status"],
        json!({"state": "needs-setup", "adapter": "alpha-unverified", "version": "unknown", "reason": "Instruction delivery is unverified. Read the generated skills and configure this agent explicitly."})
    );
    assert_eq!(info["appVersion"], format!("headless-{}", env!("CARGO_PKG_VERSION")));
    let agent_tools = fixture.agent_tools();
    assert_eq!(info["preferencesFile"], agent_tools.join("preferences.json").to_str().unwrap());
    let skills = agent_tools.join("launch").join(&agent.node_id).join("skills");
    assert_eq!(info["guidesDirectory"], skills.to_str().unwrap());
    assert_eq!(info["browserEnabled"], false);
    let expected: Vec<&str> = operations()
        .iter()
        .map(termsprawl_protocol::Operation::name)
        .filter(|name| !name.starts_with("browser_"))
        .collect();
    assert_eq!(info["operations"], json!(expected));
    assert_eq!(expected.len(), 28, "1.5.0 adds terminal_list and terminal_search");
    // The rules this server enforces beyond the protocol (docs/headless-rules.md).
    assert_eq!(info["rules"], json!(["agent-link-isolation"]));
}

#[tokio::test(flavor = "multi_thread")]
async fn launch_files_and_environment() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let agent_tools = fixture.agent_tools();
    let launch = agent_tools.join("launch").join(&agent.node_id);
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&launch), 0o700);
    for topic in Topic::ALL {
        let skill = launch.join(format!("skills/termsprawl-{}/SKILL.md", topic.as_str()));
        let text = std::fs::read_to_string(&skill).unwrap();
        let name = topic.as_str();
        assert_eq!(
            text,
            format!(
                "---\nname: termsprawl-{name}\ndescription: Use termsprawl {name} tools and workflows.\n---\n\n{}\n",
                guide(topic).trim_end()
            )
        );
        assert_eq!(mode(&skill), 0o600);
    }
    let system = std::fs::read_to_string(launch.join("termsprawl-system.md")).unwrap();
    assert_eq!(system, format!("{}\n", guide(Topic::Overview).trim_end()));
    let mcp: Value =
        serde_json::from_str(&std::fs::read_to_string(launch.join("mcp.json")).unwrap()).unwrap();
    let launcher = agent_tools.join("termsprawlctl");
    assert_eq!(
        mcp,
        json!({"mcpServers": {"termsprawl": {"command": launcher, "args": ["--session", agent.session_file, "mcp"]}}})
    );
    assert_eq!(
        agent.session_file,
        agent_tools.join("sessions").join(format!("{}.json", agent.node_id))
    );
    assert_eq!(mode(&agent.session_file), 0o600);
    assert_eq!(std::fs::read_to_string(&launcher).unwrap(), "#!/bin/sh\nexec '/bin/true' \"$@\"\n");
    assert_eq!(mode(&launcher), 0o700);

    // The agent's shell has the TERMSPRAWL_* environment and runs in the project folder.
    let reader = agent.clone();
    let env_line = "env | grep '^TERMSPRAWL_' | sort; pwd; echo env-$((40+2))\n";
    // Write into the agent's own prompt from outside (the agent may not write into itself).
    fixture.guard.tmux(&["send-keys", "-l", "-t", &format!("=ts-{}:", agent.node_id), env_line]);
    let output = wait_for_output(&reader, &agent.node_id, "env-42").await;
    for line in [
        format!("TERMSPRAWL_CTL={}", launcher.display()),
        format!("TERMSPRAWL_NODE_ID={}", agent.node_id),
        format!("TERMSPRAWL_PROJECT_ID={}", fixture.server().default_project_id()),
        format!("TERMSPRAWL_SESSION_FILE={}", agent.session_file.display()),
        format!("TERMSPRAWL_SYSTEM_PROMPT_FILE={}", launch.join("termsprawl-system.md").display()),
        fixture.project.display().to_string(),
    ] {
        assert!(output.contains(&line), "{line} missing from:\n{output}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn guide_status_cards_context_and_browser() {
    let fixture = Fixture::start().await;
    let alpha = fixture.agent("alpha").await;
    let beta = fixture.agent("beta").await;
    for topic in Topic::ALL {
        assert_eq!(ok(&alpha, "guide_read", json!({"topic": topic.as_str()})).await, guide(topic));
    }
    let status = ok(&alpha, "agent_status", json!({})).await;
    let unverified = |name: &str| json!({"state": "needs-setup", "adapter": format!("{name}-unverified"), "version": "unknown", "reason": "Instruction delivery is unverified. Read the generated skills and configure this agent explicitly."});
    let project = fixture.server().default_project_id();
    assert_eq!(
        status,
        json!([
            {"nodeId": alpha.node_id, "projectId": project, "status": unverified("alpha")},
            {"nodeId": beta.node_id, "projectId": project, "status": unverified("beta")},
        ])
    );

    fixture
        .server()
        .control(termsprawl_headless::control::ControlRequest::Link {
            from: alpha.node_id.clone(),
            to: beta.node_id.clone(),
        })
        .await
        .unwrap();
    let cards = ok(&beta, "agent_cards", json!({})).await;
    assert_eq!(
        cards,
        json!([
            {"nodeId": alpha.node_id, "projectId": project, "title": "alpha", "agent": "alpha", "status": unverified("alpha"), "enabledPeerIds": [beta.node_id]},
            {"nodeId": beta.node_id, "projectId": project, "title": "beta", "agent": "beta", "status": unverified("beta"), "enabledPeerIds": []},
        ])
    );

    let context = ok(&alpha, "context_read", json!({})).await;
    assert_eq!(context["text"], "");
    assert_eq!(context["reader"], "claude-jsonl");
    assert!(context["reason"].as_str().unwrap().starts_with("Transcript unavailable"));

    for (operation, args) in [
        ("browser_open", json!({"url": "https://example.com"})),
        ("browser_list", json!({})),
        ("browser_inspect", json!({"nodeId": "b"})),
    ] {
        assert_eq!(
            fails(&alpha, operation, args).await,
            "Browser nodes need the termsprawl desktop app; this headless server has no browser"
        );
    }
}

/// A fake agent executable: answers `--help` and `--version`, records its arguments otherwise
/// and then runs a shell.
fn fake_agent(bin: &Path, name: &str, help: &str) {
    let script = format!(
        "#!/bin/sh\ncase \"$1\" in\n--help) printf '%s\\n' '{help}';;\n--version) echo ' {name} 9.9.9 ';;\n*) printf '%s\\n' \"$@\" > \"$0.args\"; exec /bin/sh;;\nesac\n"
    );
    let path = bin.join(name);
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn agent_launch_of_presets() {
    let bin = tempfile::TempDir::new().unwrap();
    fake_agent(
        bin.path(),
        "claude",
        "Usage: claude [options] [prompt]\n  --mcp-config <file>\n  --append-system-prompt <text>",
    );
    fake_agent(bin.path(), "opencode", "opencode [project]\n  --prompt <text>");
    fake_agent(bin.path(), "grok", "grok [prompt]");
    let search_path = SearchPath::new(Some(bin.path().as_os_str()), None);
    let fixture = Fixture::start_with(|config| config.search_path = search_path).await;
    let alpha = fixture.agent("alpha").await;

    let claude = ok(&alpha, "agent_launch", json!({"agent": "claude"})).await["nodeId"]
        .as_str()
        .unwrap()
        .to_owned();
    let shown = node(&alpha, &claude).await;
    assert_eq!((shown["kind"].as_str(), shown["agent"].as_str()), (Some("agent"), Some("claude")));
    let status = ok(&alpha, "agent_status", json!({})).await;
    let entry = status
        .as_array()
        .unwrap()
        .iter()
        .find(|entry| entry["nodeId"] == claude.as_str())
        .unwrap()
        .clone();
    assert_eq!(
        entry["status"],
        json!({"state": "needs-setup", "adapter": "claude-mcp", "version": "claude 9.9.9", "reason": "Waiting for the agent to connect to MCP"})
    );
    // The fake agent recorded the adapter's arguments once it started.
    let record = bin.path().join("claude.args");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !record.exists() {
        assert!(std::time::Instant::now() < deadline, "claude never started");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let args = std::fs::read_to_string(&record).unwrap();
    let mcp = fixture.agent_tools().join("launch").join(&claude).join("mcp.json");
    assert!(
        args.starts_with(&format!(
            "--mcp-config\n{}\n--append-system-prompt\n# Working inside termsprawl\n",
            mcp.display()
        )),
        "{args}"
    );

    // An MCP agent becomes connected when it calls session_info.
    let claude_agent = crate::support::Agent {
        node_id: claude.clone(),
        session_file: fixture.agent_tools().join(format!("sessions/{claude}.json")),
    };
    let info = ok(&claude_agent, "session_info", json!({})).await;
    assert_eq!(info["status"]["state"], "connected");
    assert_eq!(info["status"]["reason"], "Authenticated tool connection established");
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(&claude_agent.session_file).unwrap())
            .unwrap();
    assert_eq!(file["status"]["state"], "needs-setup", "the switch is not written back");

    let opencode = ok(&alpha, "agent_launch", json!({"agent": "opencode"})).await["nodeId"]
        .as_str()
        .unwrap()
        .to_owned();
    let grok = ok(&alpha, "agent_launch", json!({"agent": "grok"})).await["nodeId"]
        .as_str()
        .unwrap()
        .to_owned();
    let status = ok(&alpha, "agent_status", json!({})).await;
    let adapter = |id: &str| {
        status.as_array().unwrap().iter().find(|entry| entry["nodeId"] == id).unwrap()["status"]
            .clone()
    };
    assert_eq!(adapter(&opencode)["adapter"], "opencode-cli");
    assert_eq!(adapter(&opencode)["state"], "cli-fallback");
    assert_eq!(adapter(&grok)["adapter"], "grok-cli");

    for preset in ["codex", "gemini", "openclaude", "custom"] {
        let error = fails(&alpha, "agent_launch", json!({"agent": preset})).await;
        assert_eq!(error, "Install or configure this agent before launching it", "{preset}");
    }
    let preferences = fixture.agent_tools().join("preferences.json");
    std::fs::write(
        &preferences,
        json!({"custom": {"executable": bin.path().join("grok"), "instructionFlag": "--prompt"}})
            .to_string(),
    )
    .unwrap();
    let custom = ok(&alpha, "agent_launch", json!({"agent": "custom"})).await["nodeId"]
        .as_str()
        .unwrap()
        .to_owned();
    let status = ok(&alpha, "agent_status", json!({})).await;
    let custom_status =
        status.as_array().unwrap().iter().find(|entry| entry["nodeId"] == custom.as_str()).unwrap()
            ["status"]
            .clone();
    assert_eq!(
        (custom_status["adapter"].as_str(), custom_status["state"].as_str()),
        (Some("custom-cli"), Some("cli-fallback"))
    );
    std::fs::write(&preferences, "[").unwrap();
    assert_eq!(
        fails(&alpha, "agent_launch", json!({"agent": "custom"})).await,
        "Invalid agent-tools/preferences.json"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_whose_process_ended_is_revoked() {
    let fixture = Fixture::start_with(|config| {
        config.liveness_interval = std::time::Duration::from_millis(50);
    })
    .await;
    let alpha = fixture.agent("alpha").await;
    let beta = fixture.agent("beta").await;
    fixture.guard.tmux(&["send-keys", "-t", &format!("=ts-{}:", beta.node_id), "exit", "Enter"]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while beta.session_file.exists() {
        assert!(std::time::Instant::now() < deadline, "beta was never revoked");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let status = ok(&alpha, "agent_status", json!({})).await;
    assert_eq!(status.as_array().unwrap().len(), 1);
    // The node stays on the canvas, detached.
    assert_eq!(node(&alpha, &beta.node_id).await["attached"], false);
    let result = crate::support::call(&beta, "session_info", json!({})).await;
    assert!(crate::support::error(result).contains("Tool connection unavailable"));
}

/// Regression (found when `.ci/run` ran beside a soak): the liveness check listed tmux's
/// sessions, then looked at which agents were launching and which sessions were live. An agent
/// whose launch finished while `list-sessions` ran was no longer launching, had a live session,
/// and was missing from the (older) listing, so it was revoked seconds after a successful launch.
/// A `tmux` wrapper here makes one listing old: it runs the real `list-sessions`, then waits
/// until the test has launched an agent, then prints what it listed.
#[tokio::test(flavor = "multi_thread")]
async fn an_agent_launched_while_tmux_lists_sessions_is_not_revoked() {
    use std::os::unix::fs::PermissionsExt as _;
    use termsprawl_external_term::{SearchPath, find_tmux};

    let gate = tempfile::TempDir::new().unwrap();
    let gate_dir = gate.path().to_owned();
    for fifo in ["entered", "release"] {
        let made = std::process::Command::new("mkfifo").arg(gate_dir.join(fifo)).status();
        assert!(made.unwrap().success());
    }
    let real = find_tmux(&SearchPath::from_env()).unwrap();
    // Every list-sessions appends to `calls`; the first one after `armed` exists is held.
    let script = format!(
        r#"#!/bin/sh
case " $* " in *" list-sessions "*)
  echo x >> '{gate}/calls'
  if [ -e '{gate}/armed' ] && [ ! -e '{gate}/passed' ]; then
    : > '{gate}/passed'
    listed=$('{real}' "$@"); status=$?
    echo entered > '{gate}/entered'
    read line < '{gate}/release'
    [ -n "$listed" ] && printf '%s\n' "$listed"
    exit $status
  fi;;
esac
exec '{real}' "$@"
"#,
        gate = gate_dir.display(),
        real = real.display()
    );
    std::fs::write(gate_dir.join("tmux"), script).unwrap();
    std::fs::set_permissions(gate_dir.join("tmux"), std::fs::Permissions::from_mode(0o755))
        .unwrap();
    let search_path = SearchPath::new(Some(gate_dir.as_os_str()), None);
    let fixture = Fixture::start_with(|config| {
        config.search_path = search_path;
        config.liveness_interval = std::time::Duration::from_millis(50);
    })
    .await;
    let calls = || std::fs::read_to_string(gate_dir.join("calls")).unwrap_or_default().len();

    std::fs::write(gate_dir.join("armed"), "").unwrap();
    let entered = gate_dir.join("entered");
    tokio::task::spawn_blocking(move || std::fs::read_to_string(entered)).await.unwrap().unwrap();
    // The held round has listed no agent; launch one while it waits.
    let alpha = fixture.agent("alpha").await;
    let before = calls();
    let release = gate_dir.join("release");
    tokio::task::spawn_blocking(move || std::fs::write(release, "go\n")).await.unwrap().unwrap();
    // A later round has started, so the held one has finished.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while calls() <= before {
        assert!(std::time::Instant::now() < deadline, "the liveness check stopped");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(alpha.session_file.exists(), "a running agent was revoked");
    ok(&alpha, "session_info", json!({})).await;
}

/// A start whose `list-sessions` fails (tmux dying or stuck: not "no server running") must not
/// take that for "no agent runs": it revoked every running agent at once, deleting their session
/// files. The sessions are restored, and the liveness check decides once tmux answers.
#[tokio::test(flavor = "multi_thread")]
async fn a_start_whose_tmux_listing_fails_keeps_the_running_agents() {
    use termsprawl_external_term::find_tmux;

    let mut fixture = Fixture::start().await;
    let alpha = fixture.agent("alpha").await;
    ok(&alpha, "session_info", json!({})).await;
    fixture.stop().await;
    let wrapper = tempfile::TempDir::new().unwrap();
    let real = find_tmux(&SearchPath::from_env()).unwrap();
    // Every list-sessions fails as a dying server answers; everything else is the real tmux.
    let script = format!(
        "#!/bin/sh\ncase \" $* \" in *\" list-sessions \"*) echo 'server exited unexpectedly' >&2; exit 1;; esac\nexec '{}' \"$@\"\n",
        real.display()
    );
    std::fs::write(wrapper.path().join("tmux"), script).unwrap();
    std::fs::set_permissions(wrapper.path().join("tmux"), std::fs::Permissions::from_mode(0o755))
        .unwrap();
    let mut config = fixture.config();
    config.search_path = SearchPath::new(Some(wrapper.path().as_os_str()), None);
    config.liveness_interval = std::time::Duration::from_millis(50);
    fixture.server = Some(termsprawl_headless::Server::start(config).await.unwrap());
    // Several failed liveness rounds later the agent still works.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(alpha.session_file.exists(), "a running agent was revoked by a failed listing");
    ok(&alpha, "session_info", json!({})).await;
}
