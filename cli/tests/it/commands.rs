//! The program's own commands, `spec/shell-conventions.md` §6: help, schema, usage, skills,
//! completions, the man page and `--version`, none of which needs a session.

use crate::support::Fixture;

#[test]
fn help_goes_to_stdout_and_without_arguments_to_stderr() {
    let fixture = Fixture::new();
    let help = termsprawl_cli::help_markdown();
    for flag in ["help", "-h", "--help", "-help", "--h"] {
        let output = fixture.ctl().arg(flag).output();
        assert_eq!(output.status.code(), Some(0), "{flag}");
        assert_eq!(String::from_utf8(output.stdout).unwrap(), help, "{flag}");
        assert!(output.stderr.is_empty(), "{flag}");
    }
    let output = fixture.ctl().output();
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    assert_eq!(String::from_utf8(output.stderr).unwrap(), help);
    // Program options without a command: the same.
    let output = fixture.ctl_session().output();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(String::from_utf8(output.stderr).unwrap(), help);
    // Every mode is named.
    for mode in ["doctor", "call OPERATION [JSON_ARGS]", "mcp", "usage", "schema OPERATION"] {
        assert!(help.contains(&format!("`termsprawlctl {mode}")), "{mode}");
    }
    assert!(fixture.take_received().is_empty());
}

#[test]
fn help_and_schema_of_one_operation() {
    let fixture = Fixture::new();
    let mut out = Vec::new();
    for args in [
        &["help", "terminal_read"][..],
        &["terminal_read", "--help"],
        &["terminal_read", "--nodeId", "t", "-h"],
        &["help", "guide_read"],
        &["schema", "session_info"],
        &["schema", "canvas_select"],
    ] {
        out.push(fixture.check(fixture.ctl().args(args)));
    }
    insta::assert_snapshot!(out.join("\n"));
}

#[test]
fn arity_and_unknown_commands() {
    let fixture = Fixture::new();
    let mut out = Vec::new();
    for args in [
        &["help", "a", "b"][..],
        &["schema"],
        &["schema", "a", "b"],
        &["help", "x"],
        &["schema", "x"],
        &["x"],
        &["help", "call"],
        &["help", "help"],
        &["schema", "doctor"],
        &["usage", "x"],
        &["man", "x"],
        &["completions"],
        &["completions", "tcsh"],
        &["completions", "bash", "zsh"],
        &["skills"],
        &["skills", "--out"],
        &["skills", "--bogus"],
        &["skills", "--out", "d", "extra"],
    ] {
        out.push(fixture.check(fixture.ctl().args(args)));
    }
    insta::assert_snapshot!(out.join("\n"));
}

#[test]
fn usage_prints_the_whole_markdown() {
    let fixture = Fixture::new();
    let output = fixture.ctl().arg("usage").output();
    assert_eq!(output.status.code(), Some(0));
    let usage = String::from_utf8(output.stdout).unwrap();
    assert_eq!(usage, termsprawl_cli::usage_markdown());
    assert!(usage.starts_with("## Calling `termsprawlctl`\n"));
    assert!(usage.contains("\n## Commands\n\n### `session_info`\n"));
    for operation in termsprawl_protocol::operations() {
        assert!(usage.contains(&format!("\n### `{}`\n", operation.name())), "{}", operation.name());
    }
}

#[test]
fn version() {
    let fixture = Fixture::new();
    let output = fixture.ctl().arg("--version").output();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        format!("termsprawlctl {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn skills_are_written_one_per_topic() {
    let fixture = Fixture::new();
    let out_dir = fixture.temp().join("skills");
    let transcript = fixture.check(fixture.ctl().arg("skills").arg("--out").arg(&out_dir));
    for (name, text) in termsprawl_cli::skill_documents() {
        assert_eq!(std::fs::read_to_string(out_dir.join(&name).join("SKILL.md")).unwrap(), text);
    }
    // The program option works too.
    let again = fixture.check(fixture.ctl().arg("--out").arg(&out_dir).arg("skills"));
    assert_eq!(
        again.lines().skip(1).collect::<Vec<_>>(),
        transcript.lines().skip(1).collect::<Vec<_>>()
    );
    insta::assert_snapshot!(transcript);
}

#[test]
fn completions_and_the_man_page() {
    let fixture = Fixture::new();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let output = fixture.ctl().args(["completions", shell]).output();
        assert_eq!(output.status.code(), Some(0), "{shell}");
        let script = String::from_utf8(output.stdout).unwrap();
        assert!(script.contains("terminal_submit") && script.contains("nodeId"), "{shell}");
        // Protocol 1.5.0's operations and flags.
        for word in ["terminal_list", "terminal_search", "context", "anyOf", "notify", "input"] {
            assert!(script.contains(word), "{shell}: {word}");
        }
    }
    let output = fixture.ctl().arg("man").output();
    assert_eq!(output.status.code(), Some(0));
    let page = String::from_utf8(output.stdout).unwrap();
    assert!(page.contains(".TH termsprawlctl 1"));
    assert!(page.contains("canvas_select"));
    assert!(page.contains("terminal_search") && page.contains("terminal_list"));
}
