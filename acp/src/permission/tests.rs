//! Tests of the fail-closed permission decisions.

use std::time::Duration;

use serde_json::json;

use super::{Decision, ask_head, by_policy, choose_prompt, option_lines, parse_choice};
use crate::messages::{PermissionOption, RequestPermissionParams, decode};
use crate::options::PermissionMode;

fn option(id: &str, kind: &str) -> PermissionOption {
    PermissionOption {
        option_id: id.to_owned(),
        name: format!("name of {id}"),
        kind: kind.to_owned(),
    }
}

#[test]
fn policies_pick_by_kind_never_by_position() {
    let all = [
        option("a-always", "allow_always"),
        option("r-always", "reject_always"),
        option("a-once", "allow_once"),
        option("r-once", "reject_once"),
    ];
    assert_eq!(by_policy(PermissionMode::AllowOnce, &all), Decision::Selected("a-once".to_owned()));
    assert_eq!(by_policy(PermissionMode::Deny, &all), Decision::Selected("r-once".to_owned()));
    let always = [option("a-always", "allow_always"), option("r-always", "reject_always")];
    assert_eq!(by_policy(PermissionMode::AllowOnce, &always), Decision::Cancelled);
    assert_eq!(by_policy(PermissionMode::Deny, &always), Decision::Selected("r-always".to_owned()));
    let odd = [option("x", "allow"), option("y", "")];
    assert_eq!(by_policy(PermissionMode::AllowOnce, &odd), Decision::Cancelled);
    assert_eq!(by_policy(PermissionMode::Deny, &odd), Decision::Cancelled);
    assert_eq!(by_policy(PermissionMode::AllowOnce, &[]), Decision::Cancelled);
    assert_eq!(by_policy(PermissionMode::Ask, &all), Decision::Cancelled);
}

#[test]
fn only_a_number_among_the_options_is_a_choice() {
    let options = [option("a", "allow_once"), option("b", "reject_once")];
    assert_eq!(parse_choice("1", &options).map(|o| o.option_id.as_str()), Some("a"));
    assert_eq!(parse_choice(" 2 ", &options).map(|o| o.option_id.as_str()), Some("b"));
    for line in ["", "0", "3", "-1", "y", "yes", "a", "allow_once", "1.0", "01x"] {
        assert_eq!(parse_choice(line, &options), None, "{line:?}");
    }
}

#[test]
fn results_have_the_wire_shape() {
    assert_eq!(
        Decision::Selected("x".to_owned()).to_json(),
        json!({"outcome": {"outcome": "selected", "optionId": "x"}})
    );
    assert_eq!(Decision::Cancelled.to_json(), json!({"outcome": {"outcome": "cancelled"}}));
}

#[test]
fn an_ask_shows_title_kind_input_and_numbered_options() {
    let request: RequestPermissionParams = decode(Some(&json!({
        "sessionId": "s",
        "toolCall": {"toolCallId": "t", "title": "Delete build", "kind": "delete", "rawInput": {"command": "rm -rf build"}},
        "options": [
            {"optionId": "a", "name": "Allow", "kind": "allow_once"},
            {"optionId": "r", "name": "Reject", "kind": "reject_once"}
        ]
    })))
    .unwrap();
    assert_eq!(
        ask_head(&request, false),
        vec!["[permission] Delete build (delete)", "  input: {\"command\":\"rm -rf build\"}"]
    );
    // With file changes shown, the raw input (their escaped JSON) is left out.
    assert_eq!(ask_head(&request, true), vec!["[permission] Delete build (delete)"]);
    assert_eq!(
        option_lines(&request),
        vec!["  1. Allow (allow_once)", "  2. Reject (reject_once)"]
    );
    assert_eq!(choose_prompt(2, Duration::from_mins(10)), "choose 1-2 (cancelled after 600 s): ");
    assert_eq!(
        choose_prompt(3, Duration::from_millis(1500)),
        "choose 1-3 (cancelled after 1.5 s): "
    );
}
