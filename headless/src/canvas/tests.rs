//! Unit tests of the canvas model.

use std::collections::HashSet;
use std::path::Path;

use serde_json::json;

use super::{Canvas, Node, NodeKind, number};
use crate::error::messages;

fn canvas_with_notes(count: usize) -> (Canvas, String, Vec<String>) {
    let mut canvas = Canvas::default();
    let project_id = canvas.ensure_project(Path::new("/work/my project")).id.clone();
    let mut ids = Vec::new();
    for index in 0..count {
        let id = canvas.fresh_node_id(NodeKind::Sticky);
        let project = canvas.project_mut(&project_id).unwrap();
        ids.push(project.add(Node::new(id, NodeKind::Sticky, format!("note {index}"))));
    }
    (canvas, project_id, ids)
}

#[test]
fn projects_are_found_by_folder() {
    let mut canvas = Canvas::default();
    let first = canvas.ensure_project(Path::new("/a/b c")).id.clone();
    assert!(first.starts_with("b-c-"), "{first}");
    assert_eq!(canvas.ensure_project(Path::new("/a/b c")).id, first);
    let root = canvas.ensure_project(Path::new("/")).id.clone();
    assert!(root.starts_with("project-"), "{root}");
    assert_eq!(canvas.projects.len(), 2);
}

#[test]
fn node_ids_are_valid_and_new_nodes_do_not_overlap() {
    let (canvas, project_id, ids) = canvas_with_notes(6);
    let project = canvas.project(&project_id).unwrap();
    for id in &ids {
        assert!(termsprawl_protocol::is_valid_node_id(id), "{id}");
        assert!(id.starts_with("sticky-"));
    }
    let positions: HashSet<(i64, i64)> = project
        .nodes
        .iter()
        .map(|node| {
            #[expect(clippy::cast_possible_truncation, reason = "test positions are integral")]
            let position = (node.x as i64, node.y as i64);
            position
        })
        .collect();
    assert_eq!(positions.len(), 6);
    let placed: Vec<(f64, f64)> = project.nodes.iter().map(|node| (node.x, node.y)).collect();
    assert_eq!(placed[..5], [(0.0, 0.0), (760.0, 0.0), (1520.0, 0.0), (2280.0, 0.0), (0.0, 480.0)]);
}

#[test]
fn select_keeps_each_id_once_and_refuses_unknown_ones() {
    let (mut canvas, project_id, ids) = canvas_with_notes(2);
    let project = canvas.project_mut(&project_id).unwrap();
    let selected = project.select(&[ids[1].clone(), ids[0].clone(), ids[1].clone()]).unwrap();
    assert_eq!(selected, [ids[1].clone(), ids[0].clone()]);
    let error = project.select(&[ids[0].clone(), "missing".to_owned()]).unwrap_err();
    assert_eq!(error.message(), messages::SELECTION_UNKNOWN);
    assert_eq!(project.selection, selected, "a failed selection changes nothing");
}

#[test]
fn resize_limits_depend_on_the_kind() {
    let (mut canvas, project_id, ids) = canvas_with_notes(1);
    let project = canvas.project_mut(&project_id).unwrap();
    project.nodes.push(Node::new("b1".to_owned(), NodeKind::Browser, "browser".to_owned()));
    assert!(project.resize(&ids[0], 240.0, 140.0).is_ok());
    assert!(project.resize(&ids[0], 8000.0, 8000.0).is_ok());
    assert_eq!(project.resize("b1", 300.0, 240.0).unwrap_err().message(), messages::SIZE_RANGE);
    assert!(project.resize("b1", 320.0, 240.0).is_ok());
    assert_eq!(
        project.resize("nope", 300.0, 300.0).unwrap_err().message(),
        messages::NODE_NOT_FOUND
    );
    assert_eq!(messages::SIZE_RANGE, "Size must be between 240×140 and 8000×8000");
}

#[test]
fn group_frames_its_children_and_removal_restores_them() {
    let (mut canvas, project_id, ids) = canvas_with_notes(2);
    let project = canvas.project_mut(&project_id).unwrap();
    let children = project.group("group-1", &ids, None).unwrap();
    assert_eq!(children, ids);
    let group = project.node("group-1").unwrap().clone();
    assert_eq!((group.x, group.y, group.title.as_str()), (-40.0, -80.0, "Group"));
    assert_eq!((group.width, group.height), (760.0 + 260.0 + 80.0, 200.0 + 120.0));
    let child = project.node(&ids[1]).unwrap();
    assert_eq!((child.x, child.y, child.parent_id.as_deref()), (800.0, 80.0, Some("group-1")));
    let error = project.group("group-2", &["group-1".to_owned()], None).unwrap_err();
    assert_eq!(error.message(), messages::GROUP_TOP_LEVEL);

    project.select(&["group-1".to_owned(), ids[0].clone()]).unwrap();
    project.remove("group-1").unwrap();
    let child = project.node(&ids[1]).unwrap();
    assert_eq!((child.x, child.y, child.parent_id.as_deref()), (760.0, 0.0, None));
    assert_eq!(project.selection, [ids[0].clone()]);
}

#[test]
fn links_are_directed_between_agent_nodes() {
    let mut canvas = Canvas::default();
    let project = canvas.ensure_project(Path::new("/p"));
    for id in ["a1", "a2"] {
        project.nodes.push(Node::new(id.to_owned(), NodeKind::Agent, id.to_owned()));
    }
    project.nodes.push(Node::new("t1".to_owned(), NodeKind::Terminal, "t".to_owned()));
    assert_eq!(project.link("a1", "a2"), Ok(true));
    assert_eq!(project.link("a1", "a2"), Ok(false));
    assert!(project.is_linked("a1", "a2") && !project.is_linked("a2", "a1"));
    assert!(project.link("a1", "a1").is_err());
    assert!(project.link("a1", "t1").unwrap_err().contains("not an agent node"));
    assert!(project.link("a1", "zz").unwrap_err().contains("is not in project"));
    assert_eq!(project.enabled_peers("a1"), ["a2"]);
    project.remove("a2");
    assert!(project.enabled_peers("a1").is_empty());
}

#[test]
fn the_canvas_round_trips_through_its_file() {
    let (mut canvas, project_id, ids) = canvas_with_notes(2);
    canvas.project_mut(&project_id).unwrap().move_node(&ids[0], 1.5, -2.0).unwrap();
    let dir = tempfile::TempDir::new().unwrap();
    let path = dir.path().join("canvas.json");
    assert_eq!(Canvas::load(&path).unwrap(), Canvas::default());
    canvas.save(&path).unwrap();
    assert_eq!(Canvas::load(&path).unwrap(), canvas);
    std::fs::write(&path, r#"{"projects":3}"#).unwrap();
    let error = Canvas::load(&path).unwrap_err().to_string();
    assert!(error.contains("is not a valid canvas file"), "{error}");
}

#[test]
fn numbers_read_like_the_apps() {
    assert_eq!(number(720.0), json!(720));
    assert_eq!(number(-12.5).to_string(), "-12.5");
    assert_eq!(number(0.0), json!(0));
}
