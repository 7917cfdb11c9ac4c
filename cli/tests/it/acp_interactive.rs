//! The interactive driver of spec/acp.md §4: `termsprawlctl acp --terminals tmux --trace …` runs in
//! a tmux session on a private socket, as in a termsprawl node; the test types prompts and
//! permission answers with `send-keys` and reads the screen with `capture-pane` until the
//! stop-reason line appears.

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::acp::{ACP_SERVER, Peer, Place, TURN_END, eventually, marker, peer, processes_with};
use crate::acp_agent_orders::raw_agent;
use crate::support::BIN;

/// The agent a [`Node`] runs, when not the deterministic peer.
#[derive(Clone, Copy)]
enum AgentChoice<'a> {
    /// `acp_raw_agent.py` with this scenario.
    Raw(&'a str),
    /// Any command line.
    Other(&'a [String]),
}

/// A front end running in the pane of a private tmux server.
pub(crate) struct Node {
    pub(crate) place: Place,
    pub(crate) peer: Peer,
}

impl Node {
    /// Starts `termsprawlctl acp` in a 200x50 pane; the wrapper prints `[exit N]` when it ends
    /// (and ignores SIGINT itself, so Ctrl-C reaches only the front end's handler).
    pub(crate) fn start(options: &[&str], env: &[(&str, &str)]) -> Node {
        Node::start_agent(None, None, options, env)
    }

    /// [`Node::start`] with `cwd` as the session root (`--cwd`) instead of the place's own.
    pub(crate) fn start_in(cwd: &Path, options: &[&str], env: &[(&str, &str)]) -> Node {
        Node::start_agent(None, Some(cwd), options, env)
    }

    /// [`Node::start`] with another agent: `agent` is its command line.
    pub(crate) fn start_other(agent: &[String], options: &[&str], env: &[(&str, &str)]) -> Node {
        Node::start_agent(Some(AgentChoice::Other(agent)), None, options, env)
    }

    /// Starts the front end on the scripted agent `acp_raw_agent.py` with `scenario`; the place
    /// is its state directory.
    pub(crate) fn start_raw(scenario: &str, options: &[&str]) -> Node {
        Node::start_agent(Some(AgentChoice::Raw(scenario)), None, options, &[])
    }

    /// [`Node::start_raw`] with more environment (`NO_COLOR` empty for colour).
    pub(crate) fn start_raw_with(scenario: &str, env: &[(&str, &str)]) -> Node {
        Node::start_agent(Some(AgentChoice::Raw(scenario)), None, &[], env)
    }

    /// Makes the pane `columns` wide (and 60 rows high).
    pub(crate) fn resize(&self, columns: u16) {
        self.tmux(&["resize-window", "-t", "=node:", "-x", &columns.to_string(), "-y", "60"]);
    }

    /// [`Node::start_in`] with canvas terminals of the tool server behind `session` (`cwd` in its
    /// project folder).
    pub(crate) fn start_canvas(cwd: &Path, session: &Path, options: &[&str]) -> Node {
        Node::start_canvas_other(None, cwd, session, options)
    }

    /// [`Node::start_canvas`] with another agent: `agent` is its command line.
    pub(crate) fn start_canvas_other(
        agent: Option<&[String]>,
        cwd: &Path,
        session: &Path,
        options: &[&str],
    ) -> Node {
        let mut all = vec!["--session", session.to_str().unwrap(), "--terminals", "canvas"];
        all.extend_from_slice(options);
        Node::start_agent(agent.map(AgentChoice::Other), Some(cwd), &all, &[])
    }

    fn start_agent(
        choice: Option<AgentChoice<'_>>,
        cwd: Option<&Path>,
        options: &[&str],
        env: &[(&str, &str)],
    ) -> Node {
        // `--session FILE` is the program's option, before `acp`; `--terminals` replaces tmux.
        let (program, options): (Vec<&str>, Vec<&str>) = match options {
            ["--session", file, rest @ ..] => (vec!["--session", *file], rest.to_vec()),
            _ => (Vec::new(), options.to_vec()),
        };
        let (terminals, options) = match options.as_slice() {
            ["--terminals", backend, rest @ ..] => (*backend, rest.to_vec()),
            _ => ("tmux", options),
        };
        let peer = peer();
        let place = Place::new();
        let agent: Vec<String> = match &choice {
            Some(AgentChoice::Raw(_)) => {
                vec![
                    peer.python.to_string_lossy().into_owned(),
                    raw_agent().to_string_lossy().into_owned(),
                ]
            }
            Some(AgentChoice::Other(argv)) => argv.to_vec(),
            None => vec![
                peer.python.to_string_lossy().into_owned(),
                peer.agent.to_string_lossy().into_owned(),
            ],
        };
        let mut script = vec![
            "sh".to_owned(),
            "-c".to_owned(),
            "trap '' INT; \"$@\"; echo \"[exit $?]\"; exec sleep 600".to_owned(),
            "sh".to_owned(),
            BIN.to_owned(),
        ];
        script.extend(program.iter().map(|word| (*word).to_owned()));
        script.extend([
            "acp".to_owned(),
            "--terminals".to_owned(),
            terminals.to_owned(),
            "--cwd".to_owned(),
            cwd.map_or_else(|| place.root(), Path::to_path_buf).to_string_lossy().into_owned(),
            "--trace".to_owned(),
            place.trace().to_string_lossy().into_owned(),
            "--agent-log".to_owned(),
            place.path().join("agent.log").to_string_lossy().into_owned(),
        ]);
        script.extend(options.iter().map(|option| (*option).to_owned()));
        script.push("--".to_owned());
        script.extend(agent);
        let mut command = place.tmux(&Node::server(&place));
        command
            .args([
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                "node",
                "-x",
                "200",
                "-y",
                "50",
                "-c",
            ])
            .arg(place.path())
            .arg("--")
            .args(&script)
            .env_remove("TERMSPRAWL_SESSION_FILE")
            .env("NO_COLOR", "1")
            // The prompt's history goes to the place (a test may name another state directory).
            .env("XDG_STATE_HOME", place.path().join("state"));
        for (name, value) in env {
            command.env(name, value);
        }
        if let Some(AgentChoice::Raw(scenario)) = choice {
            command.env("ACP_RAW_SCENARIO", scenario).env("ACP_RAW_STATE", place.path());
        }
        assert!(command.status().unwrap().success());
        Node { place, peer }
    }

    /// The arguments that select the node's own tmux server.
    fn server(place: &Place) -> [OsString; 2] {
        ["-S".into(), place.path().join("node.sock").into()]
    }

    pub(crate) fn tmux(&self, args: &[&str]) -> String {
        let output = self.place.tmux(&Node::server(&self.place)).args(args).output().unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    pub(crate) fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-J", "-S", "-", "-t", "=node:"])
    }

    /// Waits until the screen shows `text` at least `count` times.
    pub(crate) fn wait_for(&self, text: &str, count: usize) -> String {
        let mut screen = String::new();
        let seen = eventually(Duration::from_mins(1), || {
            screen = self.screen();
            screen.matches(text).count() >= count
        });
        assert!(
            seen,
            "{text:?} did not appear {count} time(s) on the screen:\n{screen}\n{}",
            self.evidence()
        );
        screen
    }

    /// Waits until the front end's trace holds `text` (a message the agent sent that shows
    /// nothing on the screen, such as its commands).
    pub(crate) fn wait_traced(&self, text: &str) {
        let seen = eventually(Duration::from_mins(1), || {
            std::fs::read_to_string(self.place.trace()).is_ok_and(|trace| trace.contains(text))
        });
        assert!(seen, "{text:?} is not in the trace\n{}", self.evidence());
    }

    /// What the front end traced and the agent logged, for a failure's message.
    fn evidence(&self) -> String {
        let read = |path: &Path| std::fs::read_to_string(path).unwrap_or_else(|e| format!("({e})"));
        format!(
            "trace:\n{}\nagent log:\n{}",
            read(&self.place.trace()),
            read(&self.place.path().join("agent.log"))
        )
    }

    /// Waits until the last line of the screen is the prompt `prompt` (tmux drops its trailing
    /// space), so that what is typed next reaches the line editor.
    pub(crate) fn wait_prompt(&self, prompt: &str) -> String {
        let mut screen = String::new();
        let shown = eventually(Duration::from_mins(1), || {
            screen = self.screen();
            screen.trim_end().lines().last().is_some_and(|line| line.trim_end() == prompt)
        });
        assert!(
            shown,
            "the prompt {prompt:?} is not the last line:\n{screen}\n{}",
            self.evidence()
        );
        screen
    }

    pub(crate) fn type_line(&self, text: &str) {
        self.tmux(&["send-keys", "-t", "=node:", "-l", text]);
        self.tmux(&["send-keys", "-t", "=node:", "Enter"]);
    }

    pub(crate) fn key(&self, key: &str) {
        self.tmux(&["send-keys", "-t", "=node:", key]);
    }

    /// The agent's `REPORT <json>` lines; one the pane's word wrap broke is joined again (the
    /// wrap breaks at a space, which it leaves out).
    pub(crate) fn reports(&self) -> Vec<Value> {
        let screen = self.screen();
        let mut lines = screen.lines();
        let mut reports = Vec::new();
        while let Some(line) = lines.next() {
            let Some(json) = line.strip_prefix("REPORT ") else {
                continue;
            };
            let mut json = json.to_owned();
            let report = loop {
                match serde_json::from_str(&json) {
                    Ok(report) => break report,
                    Err(error) => {
                        let next = lines.next().unwrap_or_else(|| panic!("{error}: {json}"));
                        json.push(' ');
                        json.push_str(next);
                    }
                }
            };
            reports.push(report);
        }
        reports
    }

    /// Ends the node's tmux server.
    fn close(&self) {
        self.tmux(&["kill-server"]);
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.close();
    }
}

#[test]
fn permission_asks_are_answered_by_the_persons_choice_or_cancelled_after_the_timeout() {
    let node = Node::start(&["--permission-timeout", "5"], &[]);
    node.wait_for("connected to", 1);
    node.type_line("permission");
    let screen = node.wait_for("choose 1-4 (cancelled after 5 s): ", 1);
    assert!(screen.contains("[permission] Delete the build directory (delete)"), "{screen}");
    assert!(screen.contains("  input: {\"command\":\"rm -rf build\"}"), "{screen}");
    assert!(screen.contains("  3. Allow once (allow_once)"), "{screen}");
    node.type_line("yes");
    node.wait_for("answer with a number from 1 to 4", 1);
    node.type_line("3");
    node.wait_for(TURN_END, 1);
    node.type_line("permission");
    node.wait_for("choose 1-4 (cancelled after 5 s): ", 3);
    node.type_line("4");
    node.wait_for(TURN_END, 2);
    node.type_line("permission");
    let screen = node.wait_for(TURN_END, 3);
    assert!(screen.contains("[permission] no answer in time"), "{screen}");
    let outcomes: Vec<Value> =
        node.reports().iter().map(|report| report["outcome"].clone()).collect();
    assert_eq!(
        outcomes,
        vec![
            json!({"outcome": "selected", "optionId": "a-once"}),
            json!({"outcome": "selected", "optionId": "r-once"}),
            json!({"outcome": "cancelled"}),
        ]
    );
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);
    assert_eq!(node.place.check_trace(&node.peer), Vec::<Value>::new());
}

#[test]
fn a_terminal_is_visible_in_its_tmux_session_until_the_front_end_ends() {
    let node = Node::start(&[], &[]);
    node.wait_for("connected to", 1);
    node.type_line("terminal");
    let screen = node.wait_for(TURN_END, 1);
    let attach = "runs in tmux: tmux -L termsprawl-acp attach -t ";
    let session = screen
        .lines()
        .find_map(|line| line.split_once(attach).map(|(_, session)| session.trim().to_owned()))
        .unwrap_or_else(|| panic!("no attach line:\n{screen}"));
    // Released by the agent, still there for the person while the front end runs.
    assert!(node.place.tmux_sessions().contains(&session), "{session}");
    let pane = node
        .place
        .tmux(&ACP_SERVER)
        .args(["capture-pane", "-p", "-t", &format!("={session}:")])
        .output()
        .unwrap();
    let pane = String::from_utf8_lossy(&pane.stdout);
    assert!(pane.contains("to-stdout\nto-stderr"), "{pane}");
    let report = &node.reports()[0];
    assert_eq!(report["wait"], json!({"ok": {"exitCode": 3}}));
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);
    assert!(!node.place.tmux_sessions().contains(&session));
    assert_eq!(node.place.check_trace(&node.peer), Vec::<Value>::new());
}

#[test]
fn ctrl_c_cancels_the_turn_and_its_ask_and_a_double_ctrl_c_quits() {
    let node = Node::start(&[], &[]);
    let marker = marker();
    node.wait_for("connected to", 1);
    node.type_line(&format!("cancel {marker}"));
    node.wait_for("choose 1-1", 1);
    node.wait_for("WAITING for a cancel", 1);
    node.key("C-c");
    let screen = node.wait_for("[stop reason: cancelled]", 1);
    assert!(screen.contains("[permission] cancelled with the turn"), "{screen}");
    assert!(screen.contains("permission outcome after cancel: cancelled"), "{screen}");
    assert!(screen.contains("[tool] Run a long command (execute, cancelled)"), "{screen}");
    node.key("C-c");
    node.wait_for("press Ctrl-C again within 2 s", 1);
    node.key("C-c");
    node.wait_for("[exit 0]", 1);
    assert!(
        eventually(Duration::from_secs(10), || processes_with(&marker).is_empty()),
        "orphaned processes: {:?}",
        processes_with(&marker)
    );
    assert_eq!(node.place.check_trace(&node.peer), Vec::<Value>::new());
}

#[test]
fn authentication_a_multi_line_prompt_and_end_of_input() {
    let node = Node::start(&[], &[("ACP_TEST_REQUIRE_AUTH", "1")]);
    let screen = node.wait_for("choose 1-1: ", 1);
    assert!(screen.contains("[auth] the agent requires authentication:"), "{screen}");
    assert!(screen.contains("  1. Test login (test-login): always succeeds"), "{screen}");
    node.type_line("1");
    node.wait_for("connected to", 1);
    node.type_line("\"\"\"");
    node.type_line("echo line one");
    node.type_line("line two");
    node.type_line("\"\"\"");
    node.wait_for(TURN_END, 1);
    let report = &node.reports()[0];
    assert_eq!(report["text"], "echo line one\nline two");
    assert_eq!(report["prompt"], json!([{"type": "text", "text": "echo line one\nline two"}]));
    node.key("C-d");
    node.wait_for("[exit 0]", 1);
    let methods: Vec<Value> = node
        .place
        .traced("out")
        .iter()
        .filter_map(|message| message.get("method").cloned())
        .collect();
    assert_eq!(
        methods,
        vec![
            json!("initialize"),
            json!("session/new"),
            json!("authenticate"),
            json!("session/new"),
            json!("session/prompt")
        ]
    );
    assert_eq!(node.place.check_trace(&node.peer), Vec::<Value>::new());
}

#[test]
fn end_of_input_during_a_turn_cancels_it_and_ends_the_session() {
    let node = Node::start(&[], &[]);
    let marker = marker();
    node.wait_for("connected to", 1);
    node.type_line(&format!("cancel {marker}"));
    node.wait_for("WAITING for a cancel", 1);
    // The ask is on screen; Ctrl-D at its prompt ends the input.
    node.wait_for("choose 1-1", 1);
    node.key("C-d");
    let screen = node.wait_for("[exit 0]", 1);
    assert!(screen.contains("(cancelling the turn)"), "{screen}");
    assert!(screen.contains("[stop reason: cancelled]"), "{screen}");
    assert!(
        eventually(Duration::from_secs(10), || processes_with(&marker).is_empty()),
        "orphaned processes: {:?}",
        processes_with(&marker)
    );
}

/// Issue 16 item 9: updates that arrive while idle show what they carry and never repeat the
/// prompt by themselves (three bookkeeping updates used to print three more `> `). Issue 25: the
/// line editor writes them above its prompt, which it draws again with the line being typed, so
/// the screen shows one prompt, below the note.
#[test]
fn idle_updates_are_shown_above_the_prompt_without_breaking_the_typed_line() {
    let node = Node::start_raw("idle-updates", &[]);
    node.wait_prompt(">");
    node.tmux(&["send-keys", "-t", "=node:", "-l", "hel"]);
    node.wait_for("IDLE NOTE from the agent", 1);
    node.tmux(&["send-keys", "-t", "=node:", "-l", "lo"]);
    node.wait_for("IDLE NOTE from the agent\n> hello", 1);
    std::thread::sleep(Duration::from_millis(500));
    let screen = node.screen();
    let screen = screen.trim_end();
    let prompts = screen.lines().filter(|line| line.starts_with('>')).count();
    assert_eq!(prompts, 1, "one prompt, below the note:\n{screen}");
    assert!(screen.ends_with("IDLE NOTE from the agent\n> hello"), "{screen}");
    node.key("Enter");
    node.wait_for("TURN hello", 1);
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);
}

/// Issue 16 item 9: an out-of-range choice in the login menu says why it asks again.
#[test]
fn an_out_of_range_login_choice_says_why() {
    let node = Node::start_raw("auth-menu", &[]);
    node.wait_for("choose 1-2: ", 1);
    node.type_line("7");
    node.wait_for("answer with a number from 1 to 2", 1);
    node.type_line("2");
    node.wait_for("connected to", 1);
    let authenticate: Value = serde_json::from_str(
        &std::fs::read_to_string(node.place.path().join("authenticate.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(authenticate["methodId"], "second");
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);
}

/// Issue 16 item 2: a `terminal` login runs the agent's login in the person's terminal (the
/// keyboard reaches it), then the session starts.
#[test]
fn a_terminal_login_runs_in_the_persons_terminal() {
    let node = Node::start_raw("terminal-auth", &[]);
    let screen = node.wait_for("choose 1-1: ", 1);
    assert!(
        screen.contains("  1. Log in here (tui-login): runs the agent's login in this terminal"),
        "{screen}"
    );
    let initialize: Value = serde_json::from_str(
        &std::fs::read_to_string(node.place.path().join("initialize.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(initialize["clientCapabilities"]["auth"], json!({"terminal": true}));
    node.type_line("1");
    node.wait_for("LOGIN UI: type ok", 1);
    node.type_line("ok");
    node.wait_for("LOGIN DONE", 1);
    node.wait_for("[auth] the login finished", 1);
    node.wait_for("connected to", 1);
    node.type_line("hello");
    node.wait_for("TURN hello", 1);
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);
}

/// Issue 16 item 3: Ctrl-C ends a login that is never answered, cleanly.
#[test]
fn ctrl_c_ends_a_login_wait() {
    let node = Node::start_raw("auth-menu-hang", &[]);
    node.wait_for("choose 1-2: ", 1);
    node.type_line("1");
    node.wait_for("[auth] waiting for the login to finish (Ctrl-C stops)", 1);
    node.key("C-c");
    let screen = node.wait_for("[exit 1]", 1);
    assert!(screen.contains("stopped waiting for authenticate (Ctrl-C)"), "{screen}");
}
