//! Conformance levels: headless passes `strict` (in `headless.rs`); a server that behaves like the
//! desktop app passes `protocol` and fails exactly the strict rules under `strict`; `--only` and
//! `--skip` select rules by prefix; a rule about a member the server's catalog lacks is skipped
//! with the reason.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Value, json};
use termsprawl_protocol::{ParamKind, operations};

use crate::support::{Action, HandlerDefects, TERMINAL_13, check, conformance, fake_app, plant};

const PROTOTYPE: [&str; 4] = ["constructor", "toString", "__proto__", "hasOwnProperty"];

/// The app's request side: `terminal_read` has no `since` (a 1.2 catalog: the member is renamed
/// to one the server does not know, so it is reported in document order like any unknown
/// member), and array items are not checked for U+0000 (the item is sent without it).
fn app_request(body: &str) -> String {
    let mut body = body.replace(r#"["a\u0000"]"#, r#"["a"]"#);
    if body.contains(r#""operation":"terminal_read""#) {
        body = body.replace(r#""since":"#, r#""zzz_since":"#);
    }
    body
}

/// The app's answers: a prototype-named member is `Invalid <name>`, and the renamed `since` is
/// `since` again.
fn app_answer(mut value: Value) -> Value {
    if let Some(error) = value["error"].as_str() {
        let error = match error.strip_prefix("Unknown argument: ") {
            Some(name) if PROTOTYPE.contains(&name) => format!("Invalid {name}"),
            Some("zzz_since") => "Unknown argument: since".to_owned(),
            _ => error.to_owned(),
        };
        value["error"] = json!(error);
    }
    value
}

/// The operations the fake lists.
fn listed() -> impl Iterator<Item = &'static termsprawl_protocol::Operation> {
    operations()
        .iter()
        .filter(|op| !op.name().starts_with("browser_") && !TERMINAL_13.contains(&op.name()))
}

fn strict_rules() -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    for operation in listed() {
        ids.insert(format!("validate.prototype-name:{}", operation.name()));
        for param in operation.params() {
            if matches!(param.kind(), ParamKind::StringArray) {
                ids.insert(format!("validate.item-nul:{}.{}", operation.name(), param.name()));
            }
        }
    }
    ids
}

const SINCE_RULES: [&str; 3] = [
    "validate.type:terminal_read.since",
    "validate.cursor-range:terminal_read.since",
    "validate.finite:terminal_read.since",
];

fn rule<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|rule| rule["id"] == id)
        .unwrap_or_else(|| panic!("no rule {id}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn an_app_like_server_passes_protocol_and_fails_exactly_the_strict_rules_under_strict() {
    let app = fake_app(HandlerDefects::default()).await;
    plant(&app, Arc::new(|_| Action::Transform(app_request, app_answer))).await;

    let run = check(app.session_file(), &[]).await;
    assert_eq!(run.code, Some(0), "failures:\n{}\nstderr: {}", run.failures(), run.stderr);
    let report = run.report();
    let strict = strict_rules();
    assert!(strict.len() > 20, "{strict:?}");
    for id in &strict {
        let rule = rule(&report, id);
        assert_eq!(rule["verdict"], "SKIP", "{rule}");
        assert_eq!(rule["level"], "strict", "{rule}");
        assert!(rule["note"].as_str().unwrap().contains("--level strict"), "{rule}");
    }
    assert_eq!(rule(&report, "auth.missing")["level"], "protocol");
    for id in SINCE_RULES {
        let rule = rule(&report, id);
        assert_eq!(rule["verdict"], "SKIP", "{rule}");
        assert!(
            rule["note"].as_str().unwrap().contains("catalog has no terminal_read.since"),
            "{rule}"
        );
    }

    let run = check(app.session_file(), &["--level", "strict"]).await;
    assert_eq!(run.code, Some(1));
    assert_eq!(run.ids("FAIL"), strict, "{}", run.failures());
    let report = run.report();
    for id in SINCE_RULES {
        assert_eq!(rule(&report, id)["verdict"], "SKIP");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn only_and_skip_select_rules_by_prefix_and_the_fake_keeps_since() {
    let app = fake_app(HandlerDefects::default()).await;
    let run = check(
        app.session_file(),
        &[
            "--only",
            "validate.",
            "--only",
            "auth.",
            "--skip",
            "validate.type:",
            "--level",
            "strict",
        ],
    )
    .await;
    assert_eq!(run.code, Some(0), "failures:\n{}\nstderr: {}", run.failures(), run.stderr);
    let report = run.report();
    let ids: Vec<&str> =
        report["rules"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert!(ids.contains(&"auth.missing") && ids.contains(&"validate.body-not-object"), "{ids:?}");
    assert!(
        ids.iter().all(|id| (id.starts_with("validate.") || id.starts_with("auth."))
            && !id.starts_with("validate.type:")),
        "{ids:?}"
    );
    assert!(!ids.contains(&"body.stalled"), "{ids:?}");
    // The fake's catalog has `since`: its rules run and pass.
    assert_eq!(rule(&report, "validate.cursor-range:terminal_read.since")["verdict"], "PASS");
    assert_eq!(rule(&report, "validate.item-nul:canvas_select.nodeIds")["verdict"], "PASS");
}

#[tokio::test(flavor = "multi_thread")]
async fn list_shows_every_strict_prefix_and_the_default_level() {
    let run = conformance(&["--list"]).await;
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    for (prefix, _) in termsprawl_conformance::levels::STRICT {
        assert!(run.stdout.contains(&format!("strict   {prefix}*")), "{}", run.stdout);
    }
    assert!(run.stdout.contains("protocol every other rule"), "{}", run.stdout);
}

/// The request side of a 1.2.0 server (the TypeScript reference, the desktop app today):
/// `terminal_input` requires `text` and has no `keys`, `terminal_read` has neither `since` nor
/// `view` (renamed to members the fake does not know, so they are reported in document order like
/// any unknown member).
fn request_12(body: &str) -> String {
    let operation = |name: &str| body.contains(&format!(r#""operation":"{name}""#));
    if operation("terminal_input") {
        body.replace(r#""keys":"#, r#""zzz_keys":"#)
    } else if operation("terminal_read") {
        body.replace(r#""since":"#, r#""zzz_since":"#).replace(r#""view":"#, r#""zzz_view":"#)
    } else {
        body.to_owned()
    }
}

/// The answers of a 1.2.0 server: the renamed members under their own names.
fn answer_12(mut value: Value) -> Value {
    if let Some(error) = value["error"].as_str()
        && let Some(name) = error.strip_prefix("Unknown argument: zzz_")
        && ["keys", "since", "view"].contains(&name)
    {
        value["error"] = json!(format!("Unknown argument: {name}"));
    }
    value
}

/// `Missing argument: text` for a `terminal_input` with its `nodeId` and without `text` (step 4
/// of a 1.2.0 validator, before any member is looked at).
fn lacks_text(body: &[u8]) -> bool {
    let Ok(Value::Object(request)) = serde_json::from_slice::<Value>(body) else { return false };
    let Some(Value::Object(args)) = request.get("args") else { return false };
    request.get("operation") == Some(&json!("terminal_input"))
        && args.contains_key("nodeId")
        && !args.contains_key("text")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_1_2_0_server_whose_terminal_input_requires_text_passes_protocol_with_its_own_catalog() {
    let app = fake_app(HandlerDefects { catalog_12: true, ..HandlerDefects::default() }).await;
    plant(
        &app,
        Arc::new(|seen| match seen.body {
            Some(body) if lacks_text(body) => {
                Action::Answer(400, json!({"ok": false, "error": "Missing argument: text"}))
            }
            _ => Action::Transform(request_12, answer_12),
        }),
    )
    .await;

    let run = check(app.session_file(), &[]).await;
    assert_eq!(run.code, Some(0), "failures:\n{}\nstderr: {}", run.failures(), run.stderr);
    let report = run.report();
    assert_eq!(report["version"], "1.2");
    // The probes carry `text` where the server requires it: the rules of terminal_input pass.
    let passed = run.ids("PASS");
    for id in [
        "validate.unknown:terminal_input",
        "validate.document-order:terminal_input",
        "validate.type:terminal_input.nodeId",
        "validate.empty:terminal_input.nodeId",
        "validate.missing:terminal_input.nodeId",
        "validate.missing:terminal_input.text",
        "validate.type:terminal_input.text",
    ] {
        assert!(passed.contains(id), "{id} did not pass: {}", rule(&report, id));
    }
    // What the catalog lacks is skipped with the reason, and said once in the facts.
    for id in [
        "validate.type:terminal_input.keys",
        "validate.count:terminal_input.keys",
        "validate.values:terminal_read.view",
        "validate.type:terminal_read.since",
    ] {
        let rule = rule(&report, id);
        assert_eq!(rule["verdict"], "SKIP", "{rule}");
        assert!(rule["note"].as_str().unwrap().contains("the server's catalog has no"), "{rule}");
    }
    let facts = report["facts"].to_string();
    assert!(facts.contains(r#"terminal_input requires [\"nodeId\", \"text\"]"#), "{facts}");
    assert!(facts.contains("terminal_input has no keys"), "{facts}");
    // No rule of a later operation or member runs.
    let ids = run.ids("PASS");
    assert!(
        !ids.iter().any(|id| id.contains("terminal_search") || id.contains("terminal_list")),
        "{ids:?}"
    );
}
