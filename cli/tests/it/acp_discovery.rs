//! Issue 16 item 8: `acp` can be found from every place a person looks (`--help`, `usage`, the man
//! page, the completions, `help acp|mcp|doctor`), `mcp --help` needs no session, and
//! `acp --session FILE` says where `--session` goes; `acp` finds its session in the environment
//! `termsprawl_cli::run` is handed, as every other mode does.

use std::process::{Command, Output};

use termsprawl_test_support::fake::FakeApp;

use crate::support::BIN;

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).env_remove("TERMSPRAWL_SESSION_FILE").output().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn acp_is_listed_in_help_usage_man_and_completions() {
    for args in [&["--help"][..], &["help"], &["usage"]] {
        let output = run(args);
        assert_eq!(output.status.code(), Some(0), "{args:?}");
        assert!(
            stdout(&output).contains("`termsprawlctl acp [OPTIONS] -- AGENT [ARG]...`"),
            "{args:?}"
        );
    }
    let man = run(&["man"]);
    assert_eq!(man.status.code(), Some(0));
    assert!(stdout(&man).contains("acp"), "{}", stdout(&man));
    assert!(stdout(&man).contains("Run an ACP agent"), "{}", stdout(&man));
    for shell in ["bash", "zsh", "fish"] {
        let script = run(&["completions", shell]);
        assert_eq!(script.status.code(), Some(0));
        let text = stdout(&script);
        assert!(text.contains("acp"), "{shell}");
        assert!(text.contains("mcp-read-only"), "{shell}");
        assert!(text.contains("permission-timeout"), "{shell}");
    }
}

#[test]
fn help_names_the_modes() {
    for (mode, usage) in [
        ("acp", "Usage: termsprawlctl [--session FILE] acp [OPTIONS] -- AGENT [ARG]..."),
        ("mcp", "Usage: termsprawlctl [--session FILE] mcp"),
        ("doctor", "Usage: termsprawlctl [--session FILE] doctor"),
        ("call", "Usage: termsprawlctl [--session FILE] call OPERATION [JSON_ARGS]"),
    ] {
        let output = run(&["help", mode]);
        assert_eq!(output.status.code(), Some(0), "{mode}: {}", stderr(&output));
        assert!(stdout(&output).starts_with(usage), "{mode}: {}", stdout(&output));
    }
    assert_eq!(stdout(&run(&["help", "acp"])), stdout(&run(&["acp", "--help"])));
}

#[test]
fn mcp_help_needs_no_session() {
    for help in ["--help", "-h"] {
        let output = run(&["mcp", help]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert!(stdout(&output).starts_with("Usage: termsprawlctl [--session FILE] mcp"));
        assert_eq!(stderr(&output), "");
    }
    // Without help and without a session, the missing-session rule stands.
    let output = run(&["mcp"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("provide --session"), "{}", stderr(&output));
}

#[test]
fn session_after_acp_says_where_it_goes() {
    let output = run(&["acp", "--session", "s.json", "--", "agent"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr(&output),
        "termsprawlctl: acp: unknown option --session\n\
         hint: --session is an option of termsprawlctl, not of acp: write it before acp, as in \
         termsprawlctl --session FILE acp [OPTIONS] -- AGENT [ARG]...\n\
         Run `termsprawlctl acp --help` for usage.\n"
    );
    assert_eq!(stdout(&output), "");
}

/// `termsprawl_cli::run` run as a library with an environment of its own: `acp` uses the session
/// that environment names (it asks that server whether it can host canvas terminals), not the
/// process's `TERMSPRAWL_SESSION_FILE`.
#[test]
fn acp_uses_the_session_of_the_environment_run_is_handed() {
    let app = FakeApp::builder().start_blocking().unwrap();
    let args: Vec<std::ffi::OsString> =
        ["acp", "--terminals", "canvas", "--", "true"].iter().map(Into::into).collect();
    let (mut stdin, mut stdout, mut stderr) = (std::io::empty(), Vec::new(), Vec::new());
    let mut streams = termsprawl_cli::Streams {
        stdin: &mut stdin,
        stdout: &mut stdout,
        stderr: &mut stderr,
        stderr_is_terminal: false,
    };
    let _ = termsprawl_cli::run(&args, Some(app.session_file().as_os_str()), &mut streams);
    let operations: Vec<String> =
        app.take_received().into_iter().map(|received| received.operation).collect();
    assert!(operations.iter().any(|operation| operation == "session_info"), "{operations:?}");
}
