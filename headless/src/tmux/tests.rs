//! Unit tests of the pure parts of the tmux driver, and of its error classification with a
//! stand-in tmux program.

use std::os::unix::fs::PermissionsExt as _;
use std::path::PathBuf;
use std::sync::Arc;

use termsprawl_external_term::TmuxLocation;
use termsprawl_protocol::shell::single_quoted;

use super::{Tmux, TmuxError, exec_line, is_api_key_variable, no_server};

#[test]
fn exec_line_quotes_every_word() {
    let argv = ["my prog".to_owned(), "it's".to_owned(), "$HOME".to_owned(), String::new()];
    assert_eq!(exec_line(&argv), r"exec 'my prog' 'it'\''s' '$HOME' ''");
    assert_eq!(single_quoted("plain"), "'plain'");
}

#[test]
fn api_key_variables_are_recognised() {
    for name in
        ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "claude_api_key"]
    {
        assert!(is_api_key_variable(name), "{name}");
    }
    for name in ["ANTHROPIC_MODEL", "PATH", "MY_ANTHROPIC_KEY", "CLAUDE_CONFIG_DIR"] {
        assert!(!is_api_key_variable(name), "{name}");
    }
}

#[test]
fn only_a_missing_or_refusing_socket_means_no_server() {
    for stderr in [
        "no server running on /tmp/x/tmux-sockets/termsprawl",
        "error connecting to /tmp/x/tmux-sockets/termsprawl (No such file or directory)",
        "error connecting to /tmp/x/tmux-sockets/termsprawl (Connection refused)",
    ] {
        assert!(no_server(stderr), "{stderr}");
    }
    for stderr in [
        "server exited unexpectedly",
        "error connecting to /tmp/x/tmux-sockets/termsprawl (Permission denied)",
        "lost server",
        "",
    ] {
        assert!(!no_server(stderr), "{stderr}");
    }
}

/// A stand-in tmux that prints `stderr` and fails.
fn failing_tmux(dir: &std::path::Path, stderr: &str) -> Tmux {
    let program = dir.join("tmux");
    std::fs::write(&program, format!("#!/bin/sh\necho '{stderr}' >&2\nexit 1\n")).unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (socket, config) = (PathBuf::from("/nonexistent/socket"), PathBuf::from("/dev/null"));
    let base_args = vec!["-S".into(), socket.clone().into(), "-f".into(), config.clone().into()];
    Tmux { location: TmuxLocation { program, base_args }, socket, config, control: Arc::default() }
}

#[tokio::test]
async fn a_failed_listing_is_an_error_and_no_server_an_empty_list() {
    let dir = tempfile::TempDir::new().unwrap();
    // The liveness check revokes every agent that is not listed: a server that fails to answer
    // must not look like a server without sessions.
    let broken = failing_tmux(dir.path(), "server exited unexpectedly");
    match broken.session_names().await {
        Err(TmuxError::Failed { command: "list-sessions", stderr }) => {
            assert_eq!(stderr, "server exited unexpectedly");
        }
        other => panic!("{other:?}"),
    }
    let absent = failing_tmux(dir.path(), "no server running on /nonexistent/socket");
    assert!(absent.session_names().await.unwrap().is_empty());
}
#[test]
fn keys_become_tmux_key_names() {
    use super::tmux_key;
    for (key, name) in [
        ("Enter", "Enter"),
        ("Escape", "Escape"),
        ("BTab", "BTab"),
        ("Backspace", "BSpace"),
        ("Delete", "DC"),
        ("Insert", "IC"),
        ("PageUp", "PPage"),
        ("PageDown", "NPage"),
        ("F12", "F12"),
        ("C-c", "C-c"),
        ("M-x", "M-x"),
        ("S-M-C-Left", "C-M-S-Left"),
        ("C-Backspace", "C-BSpace"),
        ("C--", "C--"),
    ] {
        assert_eq!(tmux_key(key), name, "{key}");
    }
}

#[test]
fn control_blocks_close_only_on_their_own_guard() {
    use super::control::{Block, Reader};
    let mut reader = Reader::default();
    let lines = [
        "%begin 1 10 0",
        "%end 1 10 0",
        "%session-changed $0 ts-a",
        "%begin 2 11 1",
        "%end 2 99 1",
        "text",
        "%end 2 11 1",
        "%begin 3 12 1",
        "can't find session: nope",
        "%error 3 12 1",
    ];
    let blocks: Vec<_> = lines.iter().filter_map(|line| reader.feed(line.as_bytes())).collect();
    assert_eq!(
        blocks,
        [
            (false, Block { ok: true, output: Vec::new() }),
            (true, Block { ok: true, output: b"%end 2 99 1\ntext\n".to_vec() }),
            (true, Block { ok: false, output: b"can't find session: nope\n".to_vec() }),
        ]
    );
}

#[test]
fn paste_lines_quote_the_text_and_spell_line_ends() {
    let (line, commands) = super::paste_line("b", "=ts-n1:", "it's\n$x\r").unwrap();
    assert_eq!(
        line,
        r#"set-buffer -b b -- 'it'\''s' ; set-buffer -a -b b "\n" ; set-buffer -a -b b -- '$x' ; set-buffer -a -b b "\r" ; paste-buffer -r -d -b b -t '=ts-n1:'"#
    );
    assert_eq!(commands, 5);
    assert_eq!(super::paste_line("b", "=ts-n1:", "a\0b"), None);
    assert_eq!(super::control_line("new-session", &["-d".into()]), None);
    assert_eq!(
        super::control_line("capture-pane", &["-p".into(), ";".into(), "display-message".into()]),
        Some(("capture-pane '-p' ; display-message".to_owned(), 2, super::control::Repeat::Safe))
    );
    let typed = super::control_line("capture-pane", &["-p".into(), ";".into(), "send-keys".into()]);
    assert_eq!(typed.map(|(_, _, repeat)| repeat), Some(super::control::Repeat::Never));
    let keys = super::control_line("send-keys", &["-t".into(), "=ts-n1:".into(), "Enter".into()]);
    assert_eq!(keys.map(|(_, _, repeat)| repeat), Some(super::control::Repeat::Never));
}

/// A stand-in tmux whose control client dies between the write of a line and its answer, after
/// it logged the line it read (as tmux would have run it); commands run as processes are logged
/// too.
fn dying_control_tmux(dir: &std::path::Path) -> (Tmux, PathBuf) {
    let log = dir.join("log");
    let program = dir.join("tmux");
    let script = format!(
        "#!/bin/sh\ncase \"$*\" in\n\
         *list-sessions*) echo '$0 ts-n1'; exit 0 ;;\n\
         *attach-session*)\n\
         printf '%%begin 1 1 0\\n%%end 1 1 0\\n'\n\
         IFS= read -r line\n\
         echo \"control: $line\" >> '{log}'\n\
         kill -9 $$ ;;\n\
         *) echo \"process: $*\" >> '{log}' ;;\n\
         esac\n",
        log = log.display()
    );
    std::fs::write(&program, script).unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    // A socket that exists, so that commands go to the control client.
    let (socket, config) = (dir.join("socket"), PathBuf::from("/dev/null"));
    std::fs::write(&socket, "").unwrap();
    let base_args = vec!["-S".into(), socket.clone().into(), "-f".into(), config.clone().into()];
    let tmux = Tmux {
        location: TmuxLocation { program, base_args },
        socket,
        config,
        control: Arc::default(),
    };
    (tmux, log)
}

/// Issue 36: a key press that a control client took with it when it died between the write and
/// the answer is not pressed again (not through a new client, nor as a process): the caller gets
/// a failure it can see.
#[tokio::test]
async fn a_mutation_a_dying_control_client_took_is_never_sent_twice() {
    let dir = tempfile::TempDir::new().unwrap();
    let (tmux, log) = dying_control_tmux(dir.path());
    let pressed = tmux.send_key("n1", "Enter").await;
    let Err(error @ TmuxError::MayHaveRun { command: "send-keys" }) = pressed else {
        panic!("{pressed:?}")
    };
    assert_eq!(
        error.to_string(),
        "tmux send-keys was sent, but the tmux control client ended before tmux answered: it may \
         have run, so it was not sent again"
    );
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "control: send-keys '-t' '=ts-n1:' 'Enter'\n"
    );
    let pasted = tmux.send_text("n1", "hello").await;
    assert!(matches!(pasted, Err(TmuxError::MayHaveRun { command: "paste-buffer" })), "{pasted:?}");
    let lines = std::fs::read_to_string(&log).unwrap();
    assert_eq!(lines.lines().filter(|line| line.contains("hello")).count(), 1, "{lines}");
    assert!(!lines.contains("process:"), "{lines}");
}

/// A read that a dying control client took goes again: through a new client, then as a process.
#[tokio::test]
async fn a_read_a_dying_control_client_took_is_asked_again() {
    let dir = tempfile::TempDir::new().unwrap();
    let (tmux, log) = dying_control_tmux(dir.path());
    let captured = tmux.capture("n1", 10).await;
    assert!(captured.is_ok(), "{captured:?}");
    let lines = std::fs::read_to_string(&log).unwrap();
    let (control, process): (Vec<&str>, Vec<&str>) =
        lines.lines().partition(|line| line.starts_with("control: "));
    assert_eq!(control.len(), 2, "{lines}");
    assert!(control.iter().all(|line| line.contains("capture-pane")), "{lines}");
    assert_eq!(process.len(), 1, "{lines}");
    assert!(process[0].contains("capture-pane"), "{lines}");
}

/// A stand-in tmux that never answers: a command run as a process and one through the control
/// client (whose start hangs) both fail at the deadline with the command named.
#[tokio::test]
async fn a_tmux_that_never_answers_fails_each_command_at_its_deadline() {
    let dir = tempfile::TempDir::new().unwrap();
    let program = dir.path().join("tmux");
    std::fs::write(&program, "#!/bin/sh\nexec sleep 60\n").unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    // A socket that exists, so that the capture goes to the control client.
    let (socket, config) = (dir.path().join("socket"), PathBuf::from("/dev/null"));
    std::fs::write(&socket, "").unwrap();
    let base_args = vec!["-S".into(), socket.clone().into(), "-f".into(), config.clone().into()];
    let stuck = Tmux {
        location: TmuxLocation { program, base_args },
        socket,
        config,
        control: Arc::default(),
    };
    let started = std::time::Instant::now();
    let (listed, captured) = tokio::join!(stuck.session_names(), stuck.capture("n1", 10));
    let took = started.elapsed();
    assert!(matches!(listed, Err(TmuxError::Wedged { command: "list-sessions" })), "{listed:?}");
    assert!(matches!(captured, Err(TmuxError::Wedged { command: "capture-pane" })), "{captured:?}");
    assert!(super::COMMAND_DEADLINE <= took && took < super::COMMAND_DEADLINE * 2, "{took:?}");
    assert_eq!(
        captured.unwrap_err().to_string(),
        "tmux capture-pane did not answer within 5 s: the managed tmux server is stopped or stuck"
    );
}

#[tokio::test]
async fn a_tmux_gone_before_it_reads_its_input_reads_as_not_running_not_a_broken_pipe() {
    let dir = tempfile::TempDir::new().unwrap();
    // No socket: the text goes through `load-buffer -`, whose tmux exits without reading it, so
    // a text larger than a pipe's buffer meets a broken pipe. The answer is tmux's failure (no
    // server: the node's session is not running), never the write's `Broken pipe`.
    let gone = failing_tmux(dir.path(), "no server running on /nonexistent/socket");
    let text = "x".repeat(1 << 20);
    match gone.send_text("n1", &text).await {
        Err(TmuxError::NotRunning(session)) => assert_eq!(session, "ts-n1"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_oldest_session_is_the_one_of_the_lowest_id() {
    assert_eq!(super::control::oldest_in("$12 ts-b\n$3 ts-a\n$40 ts-c\n"), Some("ts-a"));
    assert_eq!(super::control::oldest_in("$2 a name with spaces\n"), Some("a name with spaces"));
    assert_eq!(super::control::oldest_in("garbage\n\n"), None);
    assert_eq!(super::control::oldest_in(""), None);
}

#[test]
fn the_listing_names_every_session_and_those_whose_pane_is_dead() {
    let sessions = super::Sessions::parse("0 ts-agent-1\n1 ts-terminal-2\n1 odd name\n0 ts-x\n");
    let set = |names: &[&str]| names.iter().map(|name| (*name).to_owned()).collect();
    assert_eq!(sessions.running, set(&["ts-agent-1", "ts-terminal-2", "odd name", "ts-x"]));
    assert_eq!(sessions.dead, set(&["ts-terminal-2", "odd name"]));
    assert_eq!(super::Sessions::parse(""), super::Sessions::default());
}
