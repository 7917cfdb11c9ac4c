//! Canvas operations: success and failure paths, and persistence across servers.

use serde_json::json;

use crate::support::{Fixture, fails, node, ok};

#[tokio::test(flavor = "multi_thread")]
async fn list_shows_the_agent_node_with_its_geometry() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let list = ok(&agent, "canvas_list", json!({})).await;
    let nodes = list.as_array().unwrap();
    assert_eq!(nodes.len(), 1);
    let node = &nodes[0];
    assert_eq!(node["nodeId"], agent.node_id.as_str());
    assert_eq!(node["kind"], "agent");
    assert_eq!(node["title"], "alpha");
    assert_eq!(node["agent"], "alpha");
    assert_eq!(node["attached"], true);
    assert_eq!(node["parentId"], serde_json::Value::Null);
    let keys: Vec<&str> = node.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "nodeId", "kind", "title", "x", "y", "width", "height", "parentId", "selected",
            "attached", "agent"
        ]
    );
    assert_eq!(
        (node["width"].to_string(), node["height"].to_string()),
        ("720".to_owned(), "440".to_owned())
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn select_move_and_resize() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let sticky = ok(&agent, "sticky_open", json!({"text": "remember"})).await["nodeId"]
        .as_str()
        .unwrap()
        .to_owned();
    let note = node(&agent, &sticky).await;
    assert_eq!((note["kind"].as_str(), note["text"].as_str()), (Some("sticky"), Some("remember")));

    let selected =
        ok(&agent, "canvas_select", json!({"nodeIds": [sticky, agent.node_id, sticky]})).await;
    assert_eq!(selected, json!({"nodeIds": [sticky, agent.node_id]}));
    assert_eq!(node(&agent, &sticky).await["selected"], true);
    let error = fails(&agent, "canvas_select", json!({"nodeIds": [sticky, "nope"]})).await;
    assert_eq!(error, "Selection contains an unknown node");

    assert_eq!(
        ok(&agent, "canvas_move", json!({"nodeId": sticky, "x": -12.5, "y": 300})).await,
        json!({"nodeId": sticky})
    );
    let moved = node(&agent, &sticky).await;
    assert_eq!(
        (moved["x"].to_string(), moved["y"].to_string()),
        ("-12.5".to_owned(), "300".to_owned())
    );
    assert_eq!(
        fails(&agent, "canvas_move", json!({"nodeId": "nope", "x": 1, "y": 1})).await,
        "Node not found in the visible project"
    );

    assert_eq!(
        ok(&agent, "canvas_resize", json!({"nodeId": sticky, "width": 240, "height": 140})).await,
        json!({"nodeId": sticky})
    );
    assert_eq!(
        ok(&agent, "canvas_resize", json!({"nodeId": sticky, "width": 8000, "height": 8000})).await,
        json!({"nodeId": sticky})
    );
    for (width, height) in [(239.9, 140.0), (240.0, 139.0), (8000.5, 200.0), (300.0, 8001.0)] {
        let error = fails(
            &agent,
            "canvas_resize",
            json!({"nodeId": sticky, "width": width, "height": height}),
        )
        .await;
        assert_eq!(
            error, "Size must be between 240\u{d7}140 and 8000\u{d7}8000",
            "{width}x{height}"
        );
    }
    let unchanged = node(&agent, &sticky).await;
    assert_eq!(
        (unchanged["width"].to_string(), unchanged["height"].to_string()),
        ("8000".to_owned(), "8000".to_owned())
    );
    assert_eq!(
        fails(&agent, "canvas_resize", json!({"nodeId": "nope", "width": 300, "height": 300}))
            .await,
        "Node not found in the visible project"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn group_wraps_top_level_nodes_only() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let first = ok(&agent, "sticky_open", json!({"text": "one"})).await["nodeId"]
        .as_str()
        .unwrap()
        .to_owned();
    let second = ok(&agent, "sticky_open", json!({"text": "two"})).await["nodeId"]
        .as_str()
        .unwrap()
        .to_owned();
    let before = node(&agent, &first).await;

    assert_eq!(
        fails(&agent, "canvas_group", json!({"nodeIds": [first, "nope"]})).await,
        "Node not found in the visible project"
    );
    let grouped =
        ok(&agent, "canvas_group", json!({"nodeIds": [first, second, first], "title": "Notes"}))
            .await;
    let group = grouped["nodeId"].as_str().unwrap().to_owned();
    assert_eq!(grouped["nodeIds"], json!([first, second]));
    let frame = node(&agent, &group).await;
    assert_eq!((frame["kind"].as_str(), frame["title"].as_str()), (Some("group"), Some("Notes")));
    let child = node(&agent, &first).await;
    assert_eq!(child["parentId"], group.as_str());
    // Positions become relative to the group; the absolute position is unchanged.
    let absolute = child["x"].as_f64().unwrap() + frame["x"].as_f64().unwrap();
    assert!((absolute - before["x"].as_f64().unwrap()).abs() < 1e-9);

    for ids in [json!([first]), json!([group]), json!([second, agent.node_id])] {
        assert_eq!(
            fails(&agent, "canvas_group", json!({"nodeIds": ids})).await,
            "Group only top-level non-group nodes"
        );
    }
    let default_title = ok(&agent, "canvas_group", json!({"nodeIds": [agent.node_id]})).await;
    assert_eq!(node(&agent, default_title["nodeId"].as_str().unwrap()).await["title"], "Group");
}

#[tokio::test(flavor = "multi_thread")]
async fn artifact_open_checks_the_path_and_reuses_previews() {
    let fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let file = fixture.project.join("notes.md");
    std::fs::write(&file, "# notes\n").unwrap();
    std::fs::create_dir(fixture.project.join("sub")).unwrap();
    let outside = fixture.dir.path().join("outside.md");
    std::fs::write(&outside, "x").unwrap();
    std::os::unix::fs::symlink(&outside, fixture.project.join("escape.md")).unwrap();

    let opened = ok(&agent, "artifact_open", json!({"path": file})).await;
    let artifact = opened["nodeId"].as_str().unwrap().to_owned();
    let shown = node(&agent, &artifact).await;
    assert_eq!(
        (shown["kind"].as_str(), shown["view"].as_str(), shown["title"].as_str()),
        (Some("artifact"), Some("editor"), Some("notes.md"))
    );
    assert_eq!(ok(&agent, "artifact_open", json!({"path": file, "view": "editor"})).await, opened);
    let diff = ok(&agent, "artifact_open", json!({"path": file, "view": "diff"})).await;
    assert_ne!(diff, opened);

    let relative = fails(&agent, "artifact_open", json!({"path": "notes.md"})).await;
    assert_eq!(relative, "Use an absolute file path inside a folder project");
    for path in
        [outside.clone(), fixture.project.join("escape.md"), fixture.project.join("../outside.md")]
    {
        assert_eq!(
            fails(&agent, "artifact_open", json!({"path": path})).await,
            "Artifact must be inside this project",
            "{}",
            path.display()
        );
    }
    assert_eq!(
        fails(&agent, "artifact_open", json!({"path": fixture.project.join("missing.md")})).await,
        "Artifact file was not found"
    );
    assert_eq!(
        fails(&agent, "artifact_open", json!({"path": fixture.project.join("sub")})).await,
        "Artifact must be a file"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_server_sees_the_same_canvas() {
    let mut fixture = Fixture::start().await;
    let agent = fixture.agent("alpha").await;
    let sticky = ok(&agent, "sticky_open", json!({"text": "kept"})).await["nodeId"]
        .as_str()
        .unwrap()
        .to_owned();
    ok(&agent, "canvas_move", json!({"nodeId": sticky, "x": 1234, "y": 56})).await;
    let before = ok(&agent, "canvas_list", json!({})).await;
    let canvas = std::fs::read_to_string(fixture.agent_tools().join("canvas.json")).unwrap();
    assert!(!canvas.contains('\n'), "compact JSON");
    fixture.restart().await;
    assert_eq!(ok(&agent, "canvas_list", json!({})).await, before);
}
