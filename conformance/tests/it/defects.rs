//! Servers with planted defects fail exactly the matching rules, and the failure lines show what
//! was sent and what came back without the token.

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;

use serde_json::{Value, json};
use termsprawl_protocol::operations;

use crate::support::{
    Action, HandlerDefects, TERMINAL_13, check, conformance, fake_app, has_token, plant,
};

fn set(ids: &[&str]) -> BTreeSet<String> {
    ids.iter().map(|id| (*id).to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_endpoint_file_readable_by_others_fails_its_mode_rule_only() {
    let app = fake_app(HandlerDefects::default()).await;
    let endpoint = app.data_dir().join("endpoint.json");
    std::fs::set_permissions(&endpoint, std::fs::Permissions::from_mode(0o644)).unwrap();
    let run = check(app.session_file(), &[]).await;
    assert_eq!(run.ids("FAIL"), set(&["files.endpoint.mode"]), "{}", run.failures());
    assert_eq!(run.code, Some(1));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_group_readable_session_file_fails_the_session_mode_rules_only() {
    let app = fake_app(HandlerDefects::default()).await;
    std::fs::set_permissions(app.session_file(), std::fs::Permissions::from_mode(0o640)).unwrap();
    let run = check(app.session_file(), &[]).await;
    assert_eq!(
        run.ids("FAIL"),
        set(&["files.session.mode", "files.sessions.modes"]),
        "{}",
        run.failures()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_answers_200_to_a_bad_token_fails_the_auth_rules() {
    let app = fake_app(HandlerDefects::default()).await;
    let token = app.token();
    plant(
        &app,
        Arc::new(move |seen| {
            if seen.header("origin").is_some_and(|origin| !origin.is_empty())
                || has_token(seen, &token)
            {
                Action::Forward
            } else {
                Action::Answer(200, json!({"ok": true}))
            }
        }),
    )
    .await;
    let run = check(app.session_file(), &[]).await;
    let expected = set(&[
        "auth.missing",
        "auth.empty",
        "auth.wrong-token",
        "auth.changed-digit",
        "auth.truncated",
        "auth.extended",
        "auth.lowercase-bearer",
        "auth.double-space",
        "auth.basic-scheme",
        "order.unauthenticated-route",
    ]);
    assert_eq!(run.ids("FAIL"), expected, "{}", run.failures());
    // The failure line says what was sent (the token described) and what came back.
    let text = conformance(&["--session", app.session_file().to_str().unwrap()]).await;
    let line =
        text.stdout.lines().find(|line| line.starts_with("FAIL auth.lowercase-bearer ")).unwrap();
    assert!(
        line.contains(
            "sent: POST /call [content-type: application/json] [authorization: bearer <token>]"
        ),
        "{line}"
    );
    assert!(line.contains("got: HTTP 200 {\"ok\":true}"), "{line}");
    assert!(!text.stdout.contains(&app.token()) && !text.stdout.contains(&app.token()[..20]));
    assert!(text.stdout.ends_with(&format!(
        "{} passed, 10 failed, {} skipped\n",
        text.stdout.lines().filter(|l| l.starts_with("PASS")).count(),
        text.stdout.lines().filter(|l| l.starts_with("SKIP")).count()
    )));
    assert_eq!(text.code, Some(1));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_checks_unknown_arguments_before_missing_ones_fails_that_rule_per_operation()
{
    let app = fake_app(HandlerDefects::default()).await;
    plant(
        &app,
        Arc::new(|seen| {
            let Some(Value::Object(body)) =
                seen.body.and_then(|body| serde_json::from_slice(body).ok())
            else {
                return Action::Forward;
            };
            let Some(operation) = body
                .get("operation")
                .and_then(Value::as_str)
                .and_then(termsprawl_protocol::operation)
            else {
                return Action::Forward;
            };
            let Some(Value::Object(args)) = body.get("args") else { return Action::Forward };
            let missing = operation
                .params()
                .iter()
                .any(|param| param.required() && !args.contains_key(param.name()));
            match args.keys().find(|name| operation.param(name).is_none()) {
                Some(unknown) if missing => Action::Answer(
                    400,
                    json!({"ok": false, "error": format!("Unknown argument: {unknown}")}),
                ),
                _ => Action::Forward,
            }
        }),
    )
    .await;
    let run = check(app.session_file(), &[]).await;
    let expected: BTreeSet<String> = operations()
        .iter()
        .filter(|op| !op.name().starts_with("browser_") && !TERMINAL_13.contains(&op.name()))
        .filter(|op| op.params().iter().any(termsprawl_protocol::Param::required))
        .map(|op| format!("validate.missing-before-unknown:{}", op.name()))
        .collect();
    assert!(expected.len() > 10);
    assert_eq!(run.ids("FAIL"), expected, "{}", run.failures());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_body_cap_one_byte_short_fails_the_at_limit_rule_only() {
    let app = fake_app(HandlerDefects::default()).await;
    plant(
        &app,
        Arc::new(|seen| {
            if seen.header("content-length") == Some("131072") {
                Action::Answer(400, json!({"ok": false, "error": "Request too large"}))
            } else {
                Action::Forward
            }
        }),
    )
    .await;
    let run = check(app.session_file(), &[]).await;
    assert_eq!(run.ids("FAIL"), set(&["body.at-limit"]), "{}", run.failures());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_ignores_origin_fails_the_origin_rules() {
    let app = fake_app(HandlerDefects::default()).await;
    plant(&app, Arc::new(|_| Action::Strip(&["origin"]))).await;
    let run = check(app.session_file(), &[]).await;
    assert_eq!(
        run.ids("FAIL"),
        set(&["origin.refused", "origin.before-auth"]),
        "{}",
        run.failures()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn session_info_members_out_of_order_fail_the_members_rule_only() {
    let app =
        fake_app(HandlerDefects { session_info_order: true, ..HandlerDefects::default() }).await;
    let run = check(app.session_file(), &[]).await;
    assert_eq!(run.ids("FAIL"), set(&["session-info.members"]), "{}", run.failures());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_terminal_read_that_ignores_max_chars_fails_the_read_shape_rules() {
    let app =
        fake_app(HandlerDefects { read_ignores_max_chars: true, ..HandlerDefects::default() })
            .await;
    let run = check(app.session_file(), &[]).await;
    assert_eq!(
        run.ids("FAIL"),
        set(&[
            "result.terminal_read",
            "result.terminal_read:clamp-zero",
            "result.terminal_read:clamp-fraction"
        ]),
        "{}",
        run.failures()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn v1_routing_behind_a_current_catalog_fails_the_routing_rules() {
    let app = fake_app(HandlerDefects::default()).await;
    plant(&app, Arc::new(v1_routing)).await;
    let run = check(app.session_file(), &[]).await;
    let expected = set(&[
        "order.unauthenticated-route",
        "route.method-get",
        "route.method-put",
        "route.other-path",
        "route.trailing-slash",
        "route.path-case",
        "route.root",
        "route.absolute-form",
        "route.query",
    ]);
    assert_eq!(run.ids("FAIL"), expected, "{}", run.failures());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_v1_server_is_checked_for_v1_and_passes() {
    let app = fake_app(HandlerDefects { v1_catalog: true, ..HandlerDefects::default() }).await;
    plant(&app, Arc::new(v1_routing)).await;
    let run = check(app.session_file(), &[]).await;
    assert_eq!(run.code, Some(0), "{}", run.failures());
    let report = run.report();
    assert_eq!(report["version"], "v1");
    let skipped = run.ids("SKIP");
    assert!(skipped.contains("validate.values:guide_read.topic=agents"), "{skipped:?}");
    assert!(report["facts"].to_string().contains("protocol version v1"), "{}", report["facts"]);
    let passed = run.ids("PASS");
    assert!(passed.contains("route.query") && passed.contains("order.unauthenticated-route"));
    // The messaging operations are not probed, and `agents` is not offered as a guide topic.
    assert!(!run.stdout.contains("validate.args-object:agent_send"));
    assert!(!run.stdout.contains("result.guide_read:agents"));
}

/// v1's order: method and path first, answered 403, and the path exactly `/call`; v1's guide
/// topics, without `agents` (1.2.0).
fn v1_routing(seen: &crate::support::Seen<'_>) -> Action {
    let agents_topic = seen.body.is_some_and(|body| {
        serde_json::from_slice::<Value>(body).is_ok_and(|value| {
            value["operation"] == "guide_read" && value["args"]["topic"] == "agents"
        })
    });
    if seen.method == "POST" && seen.target == "/call" && agents_topic {
        Action::Answer(400, json!({"ok": false, "error": "Invalid topic"}))
    } else if seen.method == "POST" && seen.target == "/call" {
        Action::Forward
    } else {
        Action::Answer(403, json!({"ok": false, "error": "Unsupported request"}))
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_1_3_server_is_checked_for_1_3_and_passes() {
    let app = fake_app(HandlerDefects { terminal_13: true, ..HandlerDefects::default() }).await;
    let run = check(app.session_file(), &[]).await;
    assert_eq!(run.code, Some(0), "{}", run.failures());
    let report = run.report();
    assert_eq!(report["version"], "1.3");
    assert!(report["facts"].to_string().contains("protocol version 1.3"), "{}", report["facts"]);
    let passed = run.ids("PASS");
    for id in [
        "result.terminal_read",
        "validate.args-object:terminal_wait",
        "validate.args-object:terminal_run",
        "validate.args-object:terminal_kill",
        "catalog.complete",
    ] {
        assert!(passed.contains(id), "{id} did not pass");
    }
    // The 1.3 calls need --mutating: named, and skipped with the reason.
    let skipped = run.ids("SKIP");
    for id in ["result.terminal_run", "wait.kill-sigkill", "wait.cursor-monotonic"] {
        assert!(skipped.contains(id), "{id} did not skip");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_1_3_catalog_without_terminal_run_fails_the_catalog_rule_only() {
    let app = fake_app(HandlerDefects {
        terminal_13: true,
        catalog_omits: Some("terminal_run"),
        ..HandlerDefects::default()
    })
    .await;
    let run = check(app.session_file(), &[]).await;
    assert_eq!(run.ids("FAIL"), set(&["catalog.complete"]), "{}", run.failures());
    assert_eq!(run.report()["version"], "1.3");
    assert!(run.failures().contains("terminal_run"), "{}", run.failures());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_1_3_terminal_read_without_cursor_fails_the_read_shape_rules_only() {
    let app = fake_app(HandlerDefects {
        terminal_13: true,
        read_omits_cursor: true,
        ..HandlerDefects::default()
    })
    .await;
    let run = check(app.session_file(), &[]).await;
    assert_eq!(
        run.ids("FAIL"),
        set(&[
            "result.terminal_read",
            "result.terminal_read:clamp-zero",
            "result.terminal_read:clamp-fraction"
        ]),
        "{}",
        run.failures()
    );
    let rules = run.report()["rules"].clone();
    let read = rules.as_array().unwrap().iter().find(|rule| rule["id"] == "result.terminal_read");
    let note = read.unwrap()["note"].as_str().unwrap();
    assert!(note.contains("expected [\"nodeId\", \"output\", \"cursor\""), "{note}");
    assert_eq!(run.code, Some(1));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_1_2_shaped_read_is_right_for_a_1_2_catalog() {
    // The same handler answers 1.2 values when the catalog is 1.2: today's shapes, exactly.
    let app = fake_app(HandlerDefects::default()).await;
    let run = check(app.session_file(), &[]).await;
    assert_eq!(run.code, Some(0), "{}", run.failures());
    assert_eq!(run.report()["version"], "1.2");
    assert!(run.ids("PASS").contains("result.terminal_read"));
    assert!(!run.stdout.contains("validate.args-object:terminal_wait"));
}
