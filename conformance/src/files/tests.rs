//! The format checks of the file rules.

use super::{is_compact, is_uuid_v4, status_problem};

#[test]
fn compact_means_no_whitespace_outside_strings() {
    assert!(is_compact(br#"{"a":"b c","d":[1,2]}"#));
    assert!(is_compact(br#"{"a":"quote \" and space"}"#));
    assert!(!is_compact(br#"{"a": 1}"#));
    assert!(!is_compact(b"{\"a\":1}\n"));
}

#[test]
fn uuid_v4_is_lowercase_with_version_and_variant() {
    assert!(is_uuid_v4("0f8fad5b-d9cb-469f-a165-70867728950e"));
    assert!(!is_uuid_v4("0F8FAD5B-D9CB-469F-A165-70867728950E"));
    assert!(!is_uuid_v4("0f8fad5b-d9cb-169f-a165-70867728950e"));
    assert!(!is_uuid_v4("0f8fad5b-d9cb-469f-c165-70867728950e"));
    assert!(!is_uuid_v4("0f8fad5bd9cb469fa16570867728950e"));
}

#[test]
fn a_status_needs_a_known_state_and_three_strings() {
    let good = serde_json::json!({"state":"needs-setup","adapter":"claude","version":"unknown","reason":"r"});
    assert_eq!(status_problem(&good), None);
    let bad_state = serde_json::json!({"state":"ready","adapter":"a","version":"v","reason":"r"});
    assert!(status_problem(&bad_state).unwrap().contains("status.state"));
    let no_reason = serde_json::json!({"state":"connected","adapter":"a","version":"v"});
    assert_eq!(status_problem(&no_reason).as_deref(), Some("status.reason is not a string"));
}
