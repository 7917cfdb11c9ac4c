//! The node-id pattern, at its edges.

use super::is_valid_node_id;

#[test]
fn node_ids_follow_the_contract_pattern() {
    let longest = format!("a{}", "b".repeat(127));
    for valid in ["a", "0", "agent-1", "A_b-C", "A_b-9", "9-_", longest.as_str()] {
        assert!(is_valid_node_id(valid), "{valid}");
    }
    let too_long = format!("a{}", "b".repeat(128));
    for invalid in [
        "",
        "-a",
        "_a",
        "a.b",
        "a:b",
        "a/b",
        "..",
        "a b",
        "é",
        "ä",
        "a\n",
        "a\0",
        "ts-a=",
        too_long.as_str(),
    ] {
        assert!(!is_valid_node_id(invalid), "{invalid:?}");
    }
}
