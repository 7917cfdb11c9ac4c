//! The result shapes.

use serde_json::json;

use super::{check, read_limit};
use crate::ctx::Version;

#[test]
fn the_read_limit_is_clamped_not_rejected() {
    assert_eq!(read_limit(&json!(null)), 16_000);
    assert_eq!(read_limit(&json!(0)), 1);
    assert_eq!(read_limit(&json!(-5)), 1);
    assert_eq!(read_limit(&json!(0.5)), 1);
    assert_eq!(read_limit(&json!(2.5)), 3);
    assert_eq!(read_limit(&json!(1_000_000)), 100_000);
}

#[test]
fn shapes_are_exact() {
    let args = json!({"nodeId": "t1", "maxChars": 3});
    assert_eq!(
        check(Version::V1_2, "terminal_read", &args, &json!({"nodeId": "t1", "output": "abc"})),
        None
    );
    assert!(
        check(Version::V1_2, "terminal_read", &args, &json!({"nodeId": "t1", "output": "abcd"}))
            .unwrap()
            .contains("more than")
    );
    assert!(
        check(Version::V1_2, "terminal_read", &args, &json!({"output": "a", "nodeId": "t1"}))
            .unwrap()
            .contains("members")
    );
    assert!(
        check(Version::V1_2, "terminal_read", &args, &json!({"nodeId": "t2", "output": ""}))
            .unwrap()
            .contains("not the node")
    );
    assert_eq!(
        check(
            Version::V1_2,
            "terminal_close",
            &json!({"nodeId": "t1"}),
            &json!({"nodeId": "t1", "cleanupPendingIds": []})
        ),
        None
    );
    assert!(
        check(
            Version::V1_2,
            "terminal_submit",
            &json!({"nodeId": "t1"}),
            &json!({"nodeId": "t1", "delivered": false})
        )
        .is_some()
    );
    assert_eq!(
        check(
            Version::V1_2,
            "context_read",
            &json!({}),
            &json!({"text": "", "reader": "claude-jsonl", "reason": "none"})
        ),
        None
    );
    assert!(check(Version::V1_2, "context_read", &json!({}), &json!({"text": ""})).is_some());
    assert_eq!(
        check(Version::V1_2, "guide_read", &json!({"topic": "overview"}), &json!("Guide.")),
        None
    );
    assert!(
        check(Version::V1_2, "guide_read", &json!({"topic": "overview"}), &json!("")).is_some()
    );
    assert!(
        check(Version::V1_2, "no_such_operation", &json!({}), &json!({}))
            .unwrap()
            .contains("knows no result shape")
    );
}

#[test]
fn the_terminal_shapes_follow_the_version() {
    let args = json!({"nodeId": "t1", "maxChars": 5});
    let read_13 = json!({"nodeId": "t1", "output": "ab", "cursor": 7, "running": true, "exitCode": null, "signal": null});
    assert_eq!(check(Version::V1_3, "terminal_read", &args, &read_13), None);
    // The 1.3 shape is not the 1.2 one, either way.
    assert!(check(Version::V1_2, "terminal_read", &args, &read_13).unwrap().contains("members"));
    assert!(
        check(Version::V1_3, "terminal_read", &args, &json!({"nodeId": "t1", "output": "ab"}))
            .unwrap()
            .contains("members")
    );
    for (member, bad) in [
        ("cursor", json!(-1)),
        ("cursor", json!(1.5)),
        ("running", json!("yes")),
        ("exitCode", json!("3")),
        ("signal", json!(9)),
    ] {
        let mut value = read_13.clone();
        value[member] = bad;
        let problem = check(Version::V1_3, "terminal_read", &args, &value).unwrap();
        assert!(problem.starts_with(member), "{member}: {problem}");
    }
    let submit = json!({"nodeId": "t1", "delivered": true, "cursor": 0});
    assert_eq!(check(Version::V1_3, "terminal_submit", &args, &submit), None);
    assert!(check(Version::V1_2, "terminal_submit", &args, &submit).is_some());
    assert_eq!(
        check(
            Version::V1_3,
            "terminal_interrupt",
            &args,
            &json!({"nodeId": "t1", "delivered": true})
        ),
        None
    );
    let run = json!({"nodeId": "r1", "running": false, "exitCode": 3, "signal": null, "output": "x", "truncated": false, "cursor": 2});
    assert_eq!(check(Version::V1_3, "terminal_run", &json!({"command": "x"}), &run), None);
    let long = json!({"nodeId": "r1", "running": false, "exitCode": 3, "signal": null, "output": "x".repeat(16_001), "truncated": true, "cursor": 2});
    assert!(check(Version::V1_3, "terminal_run", &json!({}), &long).unwrap().contains("16000"));
    let wait = json!({"nodeId": "t1", "reached": false, "running": true, "exitCode": null, "signal": null, "output": "", "truncated": false, "cursor": 9});
    assert_eq!(check(Version::V1_3, "terminal_wait", &args, &wait), None);
    let kill = json!({"nodeId": "t1", "cursor": 9, "running": false, "exitCode": null, "signal": "SIGKILL"});
    assert_eq!(check(Version::V1_3, "terminal_kill", &args, &kill), None);
    assert!(check(Version::V1_2, "terminal_kill", &args, &kill).unwrap().contains("knows no"));
}

#[test]
fn the_shapes_of_1_4_and_1_5_are_exact_and_typed() {
    let read = json!({"nodeId": "t1", "view": "screen"});
    let mut screen = json!({"nodeId": "t1", "output": "a\n\n", "cursor": 4, "running": true, "exitCode": null, "signal": null, "rows": 2, "cols": 80, "cursorRow": 1, "cursorCol": 0, "alternateScreen": false});
    assert_eq!(check(Version::V1_3, "terminal_read", &read, &screen), None);
    screen["waitingForInput"] = json!(false);
    assert_eq!(check(Version::V1_3, "terminal_read", &read, &screen), None, "later members after");
    screen["rows"] = json!(3);
    assert!(check(Version::V1_3, "terminal_read", &read, &screen).unwrap().contains("one per row"));

    let wait = json!({"nodeId": "t1", "until": "text", "anyOf": ["a"]});
    let mut value = json!({"nodeId": "t1", "reached": true, "running": true, "exitCode": null, "signal": null, "output": "a", "truncated": false, "cursor": 1});
    assert_eq!(check(Version::V1_3, "terminal_wait", &wait, &value), None);
    value["matched"] = json!(0);
    value["matchCursor"] = json!(0);
    assert_eq!(check(Version::V1_3, "terminal_wait", &wait, &value), None);
    value["matched"] = json!("0");
    assert!(check(Version::V1_3, "terminal_wait", &wait, &value).unwrap().contains("matched"));
    let input = json!({"nodeId": "t1", "until": "input"});
    assert!(check(Version::V1_3, "terminal_wait", &input, &value).unwrap().contains("members"));

    let entry = json!({"nodeId": "terminal-1", "title": "t", "kind": "run", "command": "make", "running": false, "exitCode": 3, "signal": null, "startedAt": "2026-12-03T17:00:00Z", "endedAt": "2026-12-03T17:00:01.250Z", "cursor": 9, "lastOutputAt": null, "waitingForInput": false, "inputBy": null, "notify": false});
    assert_eq!(check(Version::V1_3, "terminal_list", &json!({}), &json!([entry])), None);
    for (member, bad, part) in [
        ("kind", json!("pane"), "kind"),
        ("startedAt", json!("2026-12-03 17:00:00"), "startedAt"),
        ("endedAt", json!(1), "endedAt"),
        ("notify", json!(null), "notify"),
    ] {
        let mut wrong = entry.clone();
        wrong[member] = bad;
        let problem = check(Version::V1_3, "terminal_list", &json!({}), &json!([wrong])).unwrap();
        assert!(problem.contains(part), "{member}: {problem}");
    }
    let mut running = entry.clone();
    running["running"] = json!(true);
    assert!(
        check(Version::V1_3, "terminal_list", &json!({}), &json!([running]))
            .unwrap()
            .contains("while running")
    );

    let found = json!({"matches": [{"nodeId": "t1", "cursor": 0, "line": "x", "before": [], "after": ["y"]}], "truncated": false});
    assert_eq!(check(Version::V1_3, "terminal_search", &json!({}), &found), None);
    let mut bad = found.clone();
    bad["matches"][0]["after"] = json!("y");
    assert!(check(Version::V1_3, "terminal_search", &json!({}), &bad).unwrap().contains("after"));
}
