//! Per-project serialisation of operations (`spec/protocol.md` §6.4).

use std::time::Duration;

use serde_json::json;
use termsprawl_headless::control::ControlRequest;
use termsprawl_headless::queue::{QueueEvent, QueuePhase};
use tokio::sync::broadcast::Receiver;

use crate::support::{Fixture, call, error, node, ok, value};

/// Waits until `count` more operations other than holds have been queued.
async fn queued(events: &mut Receiver<QueueEvent>, count: usize) {
    let mut seen = 0;
    while seen < count {
        let event = events.recv().await.unwrap();
        if event.phase == QueuePhase::Queued && event.operation != "hold" {
            seen += 1;
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn mutations_of_two_agents_run_one_at_a_time_in_order() {
    let fixture = Fixture::start().await;
    let alpha = fixture.agent("alpha").await;
    let beta = fixture.agent("beta").await;
    let sticky = ok(&alpha, "sticky_open", json!({"text": "n"})).await["nodeId"]
        .as_str()
        .unwrap()
        .to_owned();
    let project = fixture.server().default_project_id().to_owned();
    let mut events = fixture.server().queue_events();
    let mut log = fixture.server().queue_events();

    let hold = fixture.server().hold_queue(&project).await;
    let first = tokio::spawn({
        let alpha = alpha.clone();
        let sticky = sticky.clone();
        async move { call(&alpha, "canvas_move", json!({"nodeId": sticky, "x": 1, "y": 1})).await }
    });
    queued(&mut events, 1).await;
    let second = tokio::spawn({
        let beta = beta.clone();
        let sticky = sticky.clone();
        async move { call(&beta, "canvas_move", json!({"nodeId": sticky, "x": 2, "y": 2})).await }
    });
    queued(&mut events, 1).await;
    // Outside the queue: answered while it is held.
    ok(&alpha, "session_info", json!({})).await;
    ok(&beta, "agent_status", json!({})).await;
    ok(&beta, "guide_read", json!({"topic": "canvas"})).await;
    assert!(!first.is_finished() && !second.is_finished());
    drop(hold);
    value(first.await.unwrap());
    value(second.await.unwrap());
    // The later call ran last.
    assert_eq!(node(&alpha, &sticky).await["x"], 2);

    // The log shows the two operations never overlapped, in arrival order.
    let mut running: Option<String> = None;
    let mut order = Vec::new();
    while let Ok(event) = log.try_recv() {
        match event.phase {
            QueuePhase::Started => {
                assert!(running.is_none(), "{:?} started while {running:?} ran", event.node_id);
                running = Some(event.node_id.clone());
                order.push((event.operation, event.node_id));
            }
            QueuePhase::Finished => running = None,
            QueuePhase::Queued => {}
        }
    }
    let moves: Vec<&str> = order
        .iter()
        .filter(|(operation, _)| operation == "canvas_move")
        .map(|(_, node)| node.as_str())
        .collect();
    assert_eq!(moves, [alpha.node_id.as_str(), beta.node_id.as_str()]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_queued_past_its_expiry_fails_without_change() {
    let fixture =
        Fixture::start_with(|config| config.queue_expiry = Duration::from_millis(200)).await;
    let alpha = fixture.agent("alpha").await;
    let sticky = ok(&alpha, "sticky_open", json!({"text": "n"})).await["nodeId"]
        .as_str()
        .unwrap()
        .to_owned();
    let before = node(&alpha, &sticky).await;
    let project = fixture.server().default_project_id().to_owned();
    let mut events = fixture.server().queue_events();
    let hold = fixture.server().hold_queue(&project).await;
    let waiting = tokio::spawn({
        let alpha = alpha.clone();
        let sticky = sticky.clone();
        async move { call(&alpha, "canvas_move", json!({"nodeId": sticky, "x": 999, "y": 999})).await }
    });
    queued(&mut events, 1).await;
    // The expiry is the subject here: hold the queue past it.
    tokio::time::sleep(Duration::from_millis(300)).await;
    drop(hold);
    assert_eq!(
        error(waiting.await.unwrap()),
        "Queued operation expired before execution; no change applied"
    );
    assert_eq!(node(&alpha, &sticky).await, before);
    // Without waiting, the same call runs.
    ok(&alpha, "canvas_move", json!({"nodeId": sticky, "x": 5, "y": 5})).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_revoked_while_queued_fails() {
    let fixture = Fixture::start().await;
    let alpha = fixture.agent("alpha").await;
    let beta = fixture.agent("beta").await;
    let project = fixture.server().default_project_id().to_owned();
    let mut events = fixture.server().queue_events();
    let hold = fixture.server().hold_queue(&project).await;
    let waiting = tokio::spawn({
        let beta = beta.clone();
        async move { call(&beta, "sticky_open", json!({"text": "never"})).await }
    });
    queued(&mut events, 1).await;
    fixture
        .server()
        .control(ControlRequest::Close { node_id: beta.node_id.clone() })
        .await
        .unwrap();
    drop(hold);
    assert_eq!(error(waiting.await.unwrap()), "Session revoked");
    let list = ok(&alpha, "canvas_list", json!({})).await;
    assert_eq!(list.as_array().unwrap().len(), 1, "no sticky was added: {list}");
}
