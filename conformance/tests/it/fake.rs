//! The shared fake app with a conformant handler passes every rule; the text and JSON outputs
//! carry the closing counts, and never the token.

use termsprawl_protocol::operations;

use crate::support::{HandlerDefects, TERMINAL_13, check, conformance, fake_app};

#[tokio::test(flavor = "multi_thread")]
async fn the_fake_app_passes_with_mutating_operations() {
    let app = fake_app(HandlerDefects::default()).await;
    let run = check(app.session_file(), &["--mutating"]).await;
    assert_eq!(run.code, Some(0), "failures:\n{}\nstderr: {}", run.failures(), run.stderr);
    let report = run.report();
    assert_eq!(report["failed"], 0);
    assert_eq!(report["version"], "1.2");
    // Every operation the fake lists was probed by the validation group.
    let passed = run.ids("PASS");
    for operation in operations()
        .iter()
        .filter(|op| !op.name().starts_with("browser_") && !TERMINAL_13.contains(&op.name()))
    {
        let id = format!("validate.args-object:{}", operation.name());
        assert!(passed.contains(&id), "{id} did not pass");
    }
    for id in [
        "mutate.terminal_open",
        "mutate.submitted-output",
        "mutate.terminal_close",
        "mutate.closed-node-gone",
        "body.stalled",
        "auth.missing",
    ] {
        assert!(passed.contains(id), "{id} did not pass");
    }
    assert!(!run.stdout.contains(&app.token()), "the token is in the JSON report");
    // Rule ids are unique: a test can name the rules a defect fails.
    let ids: Vec<&str> = report["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|rule| rule["id"].as_str().unwrap())
        .collect();
    let unique: std::collections::BTreeSet<&&str> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "repeated rule ids");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_mutating_the_mutating_rules_skip_and_nothing_is_opened() {
    let app = fake_app(HandlerDefects::default()).await;
    let run = conformance(&["--session", app.session_file().to_str().unwrap()]).await;
    assert_eq!(run.code, Some(0), "{}", run.stdout);
    let last = run.stdout.lines().last().unwrap();
    let counts: Vec<&str> = last.split(", ").collect();
    assert!(
        counts.len() == 3
            && counts[0].ends_with(" passed")
            && counts[1] == "0 failed"
            && counts[2].ends_with(" skipped"),
        "closing line: {last}"
    );
    assert!(run.stdout.lines().any(|line| line.starts_with("SKIP mutate.terminal_open ")
        && line.ends_with("mutating operations need --mutating")));
    let operations: Vec<String> =
        app.take_received().into_iter().map(|received| received.operation).collect();
    assert!(
        !operations
            .iter()
            .any(|op| op == "terminal_open" || op == "terminal_close" || op == "terminal_submit"),
        "mutating operations ran: {operations:?}"
    );
    assert!(!run.stdout.contains(&app.token()));
    // Every line but the facts and the closing line is one rule.
    for line in
        run.stdout.lines().filter(|line| !line.starts_with('#')).take_while(|line| *line != last)
    {
        assert!(line.starts_with("PASS ") || line.starts_with("SKIP "), "{line}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_session_file_fails_discovery_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("sessions").join("agent-1.json");
    let run = check(&missing, &[]).await;
    assert_eq!(run.code, Some(1));
    assert_eq!(run.ids("FAIL").into_iter().collect::<Vec<_>>(), ["discovery.session-file"]);
    assert_eq!(run.report()["passed"], 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn usage_errors_exit_2() {
    let run = conformance(&[]).await;
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    let run = conformance(&["--session", "a", "--session", "b", "--session", "c"]).await;
    assert_eq!(run.code, Some(2), "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_relative_session_path_is_resolved_as_the_client_does() {
    let app = fake_app(HandlerDefects::default()).await;
    let sessions = app.session_file().parent().unwrap().to_path_buf();
    let output = tokio::process::Command::new(crate::support::CONFORMANCE)
        .args(["--session", "agent-1.json", "--json"])
        .current_dir(&sessions)
        .output()
        .await
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["failed"], 0, "{report}");
    assert!(report["facts"][0].as_str().unwrap().contains(app.session_file().to_str().unwrap()));
}
