//! Unit tests of the pure helpers of the operations.

use std::path::Path;

use super::terminal::clamp_max_chars;
use super::{artifact_path, tail, trim_blank_end};
use crate::error::messages;

#[test]
fn max_chars_is_clamped() {
    assert_eq!(clamp_max_chars(None), 16_000);
    assert_eq!(clamp_max_chars(Some(0.0)), 1);
    assert_eq!(clamp_max_chars(Some(-3.0)), 1);
    assert_eq!(clamp_max_chars(Some(0.4)), 1);
    assert_eq!(clamp_max_chars(Some(7.9)), 7);
    assert_eq!(clamp_max_chars(Some(1_000_000.0)), 100_000);
}

#[test]
fn tail_counts_utf16_units_and_never_splits_a_character() {
    assert_eq!(tail("hello", 3), "llo");
    assert_eq!(tail("hello", 10), "hello");
    assert_eq!(tail("a😀", 2), "😀");
    assert_eq!(tail("a😀", 1), "");
    assert_eq!(tail("aé", 1), "é");
}

#[test]
fn blank_lines_below_the_output_are_dropped() {
    assert_eq!(trim_blank_end("$ ls\nfile\n$ \n\n\n"), "$ ls\nfile\n$ \n");
    assert_eq!(trim_blank_end("x"), "x");
    assert_eq!(trim_blank_end("\n\n"), "");
}

#[test]
fn artifact_paths() {
    let dir = tempfile::TempDir::new().unwrap();
    let folder = dir.path().canonicalize().unwrap();
    std::fs::write(folder.join("a.txt"), "a").unwrap();
    let message = |path: &Path| artifact_path(&folder, path).unwrap_err().message().to_owned();
    assert_eq!(artifact_path(&folder, &folder.join("./x/../a.txt")).unwrap(), folder.join("a.txt"));
    assert_eq!(message(Path::new("a.txt")), messages::ARTIFACT_RELATIVE);
    assert_eq!(message(&folder.join("../a.txt")), messages::ARTIFACT_OUTSIDE);
    assert_eq!(message(Path::new("/etc/hostname")), messages::ARTIFACT_OUTSIDE);
    assert_eq!(message(&folder.join("b.txt")), messages::ARTIFACT_MISSING);
    assert_eq!(message(&folder), messages::ARTIFACT_NOT_FILE);
}

#[test]
fn access_follows_the_link_rules() {
    use super::access::{Access, permits};
    use crate::canvas::{Node, NodeKind, Project};

    let mut project = Project {
        id: "p".to_owned(),
        folder: "/p".into(),
        nodes: vec![],
        selection: vec![],
        links: vec![],
    };
    for (id, kind) in [("a", NodeKind::Agent), ("c", NodeKind::Agent), ("t", NodeKind::Terminal)] {
        project.add(Node::new(id.to_owned(), kind, id.to_owned()));
    }
    project.link("a", "c").unwrap();
    let check = |caller: &str, target: &str, access: Access| {
        let node = project.node(target).unwrap();
        permits(&project, caller, node, access).err().map(|error| error.message().to_owned())
    };
    let all = [Access::Read, Access::Drive, Access::Attach, Access::Close];
    for access in all {
        assert_eq!(check("a", "t", access), None, "shell {access:?}");
    }
    assert_eq!(check("a", "a", Access::Read), None);
    assert_eq!(check("a", "a", Access::Attach), None);
    assert_eq!(check("a", "a", Access::Drive).as_deref(), Some(messages::OWN_NODE));
    assert_eq!(check("a", "a", Access::Close).as_deref(), Some(messages::OWN_NODE));
    // a → c is linked; c → a is not: a link is directed.
    assert_eq!(check("a", "c", Access::Read), None);
    assert_eq!(check("c", "a", Access::Read), Some(messages::agent_read_not_linked("c", "a")));
    for (caller, target) in [("a", "c"), ("c", "a")] {
        assert_eq!(
            check(caller, target, Access::Drive).as_deref(),
            Some(messages::AGENT_NOT_YOURS)
        );
        assert_eq!(
            check(caller, target, Access::Attach).as_deref(),
            Some(messages::AGENT_NOT_YOURS)
        );
        assert_eq!(
            check(caller, target, Access::Close),
            Some(messages::agent_close_refused(target))
        );
    }
}

#[test]
fn the_dead_pane_line_of_an_older_run_node_is_dropped() {
    use crate::terminals::trim_dead_notice;
    let shown = "one\ntwo\n\n\n\nPane is dead (status 3, Tue Dec  1 21:00:00 2026)\n";
    assert_eq!(trim_dead_notice(shown), "one\ntwo\n");
    assert_eq!(trim_dead_notice("Pane is dead (status 0)\n"), "");
    assert_eq!(trim_dead_notice("one\ntwo\n"), "one\ntwo\n");
    assert_eq!(trim_dead_notice("the pane is dead\n"), "the pane is dead\n");
}
