//! Tests of the `acp` command line: Go `flag` tokenising through the one scanner, and the
//! messages of shell-conventions.md §3.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use termsprawl_acp::{AgentLog, McpNarrowing, Options, PermissionMode, TerminalBackend};

use super::{HELP, Parsed, parse};

fn check(args: &[&str]) -> Result<Parsed, String> {
    let args: Vec<OsString> = args.iter().map(OsString::from).collect();
    parse(&args).map_err(|error| error.message)
}

fn options(args: &[&str]) -> Options {
    match check(args) {
        Ok(Parsed::Run(options)) => *options,
        other => panic!("expected options for {args:?}, got {other:?}"),
    }
}

#[test]
fn defaults_and_the_agent_argv_after_the_double_dash() {
    let parsed = options(&["--", "agent", "--flag", "-x", "--"]);
    assert_eq!(parsed.cwd, None);
    assert_eq!(parsed.prompt, None);
    assert_eq!(parsed.permission, PermissionMode::Ask);
    assert_eq!(parsed.permission_timeout, Duration::from_mins(10));
    assert_eq!(parsed.terminals, TerminalBackend::Auto);
    assert!(parsed.mcp);
    assert_eq!(parsed.mcp_narrowing, McpNarrowing::default());
    assert_eq!(parsed.trace, None);
    assert_eq!(parsed.agent_log, AgentLog::Temporary);
    let agent: Vec<OsString> = ["agent", "--flag", "-x", "--"].iter().map(OsString::from).collect();
    assert_eq!(parsed.agent, agent);
}

#[test]
fn the_terminals_option_names_each_backend() {
    for (value, backend) in [
        ("auto", TerminalBackend::Auto),
        ("canvas", TerminalBackend::Canvas),
        ("tmux", TerminalBackend::Tmux),
    ] {
        assert_eq!(options(&["--terminals", value, "--", "a"]).terminals, backend, "{value}");
    }
}

#[test]
fn every_option_in_every_spelling() {
    let parsed = options(&[
        "--cwd",
        "/tmp",
        "-prompt=hello there",
        "--permission",
        "allow-once",
        "-permission-timeout",
        "1.5",
        "--terminals=tmux",
        "-no-mcp",
        "--mcp-read-only",
        "--mcp-tools",
        "terminal_open,terminal_read",
        "--mcp-max-wait-ms",
        "120000",
        "--trace",
        "t.jsonl",
        "--agent-log",
        "-",
        "--",
        "a",
    ]);
    assert_eq!(parsed.cwd, Some(PathBuf::from("/tmp")));
    assert_eq!(parsed.prompt.as_deref(), Some("hello there"));
    assert_eq!(parsed.permission, PermissionMode::AllowOnce);
    assert_eq!(parsed.permission_timeout, Duration::from_millis(1500));
    assert_eq!(parsed.terminals, TerminalBackend::Tmux);
    assert!(!parsed.mcp);
    assert_eq!(
        parsed.mcp_narrowing,
        McpNarrowing {
            read_only: true,
            tools: Some(vec!["terminal_open".to_owned(), "terminal_read".to_owned()]),
            max_wait_ms: Some(120_000),
        }
    );
    assert_eq!(parsed.trace, Some(PathBuf::from("t.jsonl")));
    assert_eq!(parsed.agent_log, AgentLog::Inherit);
    assert_eq!(
        options(&["--agent-log", "log.txt", "--permission=deny", "--", "a"]).agent_log,
        AgentLog::File(PathBuf::from("log.txt"))
    );
    assert_eq!(options(&["--permission=deny", "--", "a"]).permission, PermissionMode::Deny);
}

#[test]
fn a_value_flag_takes_the_next_argument_even_when_it_looks_like_a_flag() {
    assert_eq!(options(&["--prompt", "--cwd", "--", "a"]).prompt.as_deref(), Some("--cwd"));
    assert_eq!(options(&["--prompt", "--", "--", "a"]).prompt.as_deref(), Some("--"));
    assert_eq!(
        check(&["--prompt", "--", "agent"]),
        Err("the agent command goes after --: termsprawlctl acp [OPTIONS] -- agent ...".to_owned())
    );
}

#[test]
fn booleans_use_the_one_set_of_go_spellings() {
    assert!(!options(&["--no-mcp=true", "--", "a"]).mcp);
    assert!(!options(&["--no-mcp=T", "--", "a"]).mcp);
    assert!(options(&["--no-mcp=false", "--", "a"]).mcp);
    assert!(options(&["--no-mcp=0", "--", "a"]).mcp);
    assert!(options(&["--mcp-read-only=1", "--", "a"]).mcp_narrowing.read_only);
    assert!(!options(&["--mcp-read-only=False", "--", "a"]).mcp_narrowing.read_only);
    assert_eq!(
        check(&["--no-mcp=yes", "--", "a"]),
        Err(r#"invalid boolean value "yes" for -no-mcp: "yes" is not true or false"#.to_owned())
    );
}

#[test]
fn help_wherever_no_flag_of_that_name_exists() {
    for help in ["-h", "--h", "-help", "--help"] {
        assert_eq!(check(&[help]), Ok(Parsed::Help));
        assert_eq!(check(&["--cwd", "/", help, "--", "a"]), Ok(Parsed::Help));
    }
}

#[test]
fn session_after_acp_gets_a_hint() {
    let args: Vec<OsString> = ["--session", "f", "--", "a"].iter().map(OsString::from).collect();
    let error = parse(&args).unwrap_err();
    assert_eq!(error.message, "unknown option --session");
    assert!(error.hint.unwrap().contains("termsprawlctl --session FILE acp"));
    let args: Vec<OsString> = ["--bogus", "--", "a"].iter().map(OsString::from).collect();
    assert_eq!(parse(&args).unwrap_err().hint, None);
}

#[test]
fn usage_errors_follow_go_wording() {
    let cases: &[(&[&str], &str)] = &[
        (&[], "missing the agent command: termsprawlctl acp [OPTIONS] -- AGENT [ARG]..."),
        (
            &["--"],
            "missing the agent command after --: termsprawlctl acp [OPTIONS] -- AGENT [ARG]...",
        ),
        (
            &["--", ""],
            "missing the agent command after --: termsprawlctl acp [OPTIONS] -- AGENT [ARG]...",
        ),
        (&["agent"], "the agent command goes after --: termsprawlctl acp [OPTIONS] -- agent ..."),
        (&["-", "x"], "the agent command goes after --: termsprawlctl acp [OPTIONS] -- - ..."),
        (&["---x", "--", "a"], "bad flag syntax: ---x"),
        (&["-=x", "--", "a"], "bad flag syntax: -=x"),
        (&["--bogus", "--", "a"], "unknown option --bogus"),
        (&["--session", "f", "--", "a"], "unknown option --session"),
        (&["--cwd"], "flag needs an argument: -cwd"),
        (&["--cwd", "a", "-cwd=b", "--", "a"], "flag -cwd given more than once"),
        (&["--no-mcp", "--no-mcp", "--", "a"], "flag -no-mcp given more than once"),
        (
            &["--permission", "yes", "--", "a"],
            r#"invalid value "yes" for flag -permission: "yes" is not one of ask, allow-once, deny"#,
        ),
        (
            &["--terminals", "local", "--", "a"],
            r#"invalid value "local" for flag -terminals: "local" is not one of auto, canvas, tmux"#,
        ),
        (
            &["--permission-timeout", "ten", "--", "a"],
            r#"invalid value "ten" for flag -permission-timeout: "ten" is not a number"#,
        ),
        (
            &["--permission-timeout", "0", "--", "a"],
            r#"invalid value "0" for flag -permission-timeout: "0" is not a positive number of seconds"#,
        ),
        (
            &["--permission-timeout", "-3", "--", "a"],
            r#"invalid value "-3" for flag -permission-timeout: "-3" is not a positive number of seconds"#,
        ),
        (
            &["--permission-timeout", "inf", "--", "a"],
            r#"invalid value "inf" for flag -permission-timeout: "inf" is not a positive number of seconds"#,
        ),
        (&["--cwd=", "--", "a"], r#"invalid value "" for flag -cwd: "" is empty"#),
        (
            &["--mcp-tools", "terminal_open,nope", "--", "a"],
            r#"invalid value "terminal_open,nope" for flag -mcp-tools: "terminal_open,nope" names an unknown tool "nope""#,
        ),
        (
            &["--mcp-tools", "terminal_open,", "--", "a"],
            r#"invalid value "terminal_open," for flag -mcp-tools: "terminal_open," is not a comma-separated list of tool names"#,
        ),
        (
            &["--mcp-max-wait-ms", "600001", "--", "a"],
            r#"invalid value "600001" for flag -mcp-max-wait-ms: "600001" is not a whole number of milliseconds from 0 to 600000"#,
        ),
        (
            &["--mcp-max-wait-ms", "1.5", "--", "a"],
            r#"invalid value "1.5" for flag -mcp-max-wait-ms: "1.5" is not a whole number of milliseconds from 0 to 600000"#,
        ),
    ];
    for (args, message) in cases {
        assert_eq!(check(args), Err((*message).to_owned()), "for {args:?}");
    }
}

#[test]
fn the_help_names_every_option() {
    for option in [
        "--cwd",
        "--prompt",
        "--permission ",
        "--permission-timeout",
        "--terminals",
        "--no-mcp",
        "--mcp-read-only",
        "--mcp-tools",
        "--mcp-max-wait-ms MS",
        "--trace",
        "--agent-log",
        "--mode ID",
        "--set ID=VALUE",
        "--model VALUE",
        "--resume ID",
        "--list-sessions",
    ] {
        assert!(HELP.contains(option), "{option}");
    }
}

#[test]
fn mode_set_model_resume_and_list_sessions() {
    let parsed = options(&[
        "--mode",
        "plan",
        "--set",
        "web=true",
        "--model=smart",
        "-set",
        "x=a=b",
        "--resume",
        "s-1",
        "--",
        "agent",
    ]);
    assert_eq!(parsed.mode.as_deref(), Some("plan"));
    assert_eq!(
        parsed.config,
        vec![
            (Some("web".to_owned()), "true".to_owned()),
            (None, "smart".to_owned()),
            (Some("x".to_owned()), "a=b".to_owned()),
        ]
    );
    assert_eq!(parsed.resume.as_deref(), Some("s-1"));
    assert!(!parsed.list_sessions);
    assert!(options(&["--list-sessions", "--", "agent"]).list_sessions);
    let invalid = |args: &[&str]| check(args).unwrap_err();
    assert_eq!(
        invalid(&["--set", "web", "--", "a"]),
        r#"invalid value "web" for flag -set: "web" is not ID=VALUE"#
    );
    assert_eq!(
        invalid(&["--set", "=1", "--", "a"]),
        r#"invalid value "=1" for flag -set: "=1" names no option before ="#
    );
    assert_eq!(
        invalid(&["--set", "a=1", "--set", "a=2", "--", "a"]),
        "flag -set gives option a more than once"
    );
    assert_eq!(
        invalid(&["--mode", "plan", "--mode", "x", "--", "a"]),
        "flag -mode given more than once"
    );
    assert_eq!(
        invalid(&["--mode", "", "--", "a"]),
        r#"invalid value "" for flag -mode: "" is empty"#
    );
    assert_eq!(
        invalid(&["--list-sessions", "--prompt", "x", "--", "a"]),
        "-list-sessions lists the sessions and exits; it takes no -prompt"
    );
    assert_eq!(
        invalid(&["--list-sessions", "--set", "a=1", "--", "a"]),
        "-list-sessions lists the sessions and exits; it takes no -set"
    );
}
