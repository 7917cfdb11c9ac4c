//! The result shapes.

use serde_json::json;

use super::{check, read_limit};

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
    assert_eq!(check("terminal_read", &args, &json!({"nodeId": "t1", "output": "abc"})), None);
    assert!(
        check("terminal_read", &args, &json!({"nodeId": "t1", "output": "abcd"}))
            .unwrap()
            .contains("more than")
    );
    assert!(
        check("terminal_read", &args, &json!({"output": "a", "nodeId": "t1"}))
            .unwrap()
            .contains("members")
    );
    assert!(
        check("terminal_read", &args, &json!({"nodeId": "t2", "output": ""}))
            .unwrap()
            .contains("not the node")
    );
    assert_eq!(
        check(
            "terminal_close",
            &json!({"nodeId": "t1"}),
            &json!({"nodeId": "t1", "cleanupPendingIds": []})
        ),
        None
    );
    assert!(
        check(
            "terminal_submit",
            &json!({"nodeId": "t1"}),
            &json!({"nodeId": "t1", "delivered": false})
        )
        .is_some()
    );
    assert_eq!(
        check(
            "context_read",
            &json!({}),
            &json!({"text": "", "reader": "claude-jsonl", "reason": "none"})
        ),
        None
    );
    assert!(check("context_read", &json!({}), &json!({"text": ""})).is_some());
    assert_eq!(check("guide_read", &json!({"topic": "overview"}), &json!("Guide.")), None);
    assert!(check("guide_read", &json!({"topic": "overview"}), &json!("")).is_some());
    assert!(
        check("no_such_operation", &json!({}), &json!({}))
            .unwrap()
            .contains("knows no result shape")
    );
}
