//! Two sessions: isolation between projects, and the `agent-link-isolation` group, which runs
//! only when the server declares it and then fails a server that lets one agent read or type
//! into another without a link.

use termsprawl_protocol::ToolIdentity;
use termsprawl_test_support::fake::{FakeApp, default_status};

use crate::support::{HandlerDefects, check, fake_app};

/// A second agent in the fake app's project; its session file.
fn peer(app: &FakeApp) -> std::path::PathBuf {
    let identity = ToolIdentity {
        node_id: "agent-2".to_owned(),
        project_id: app.identity().project_id.clone(),
    };
    app.server().provision_session(identity, default_status(), false).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_undeclared_rule_group_skips() {
    let app = fake_app(HandlerDefects::default()).await;
    let second = peer(&app);
    let run = check(
        app.session_file(),
        &["--session", second.to_str().unwrap(), "--mutating", "--level", "strict"],
    )
    .await;
    assert_eq!(run.code, Some(0), "{}", run.failures());
    let skipped = run.ids("SKIP");
    for id in ["links.read-unlinked-peer", "links.input-peer", "links.shell-shared"] {
        assert!(skipped.contains(id), "{id} did not skip");
    }
    let passed = run.ids("PASS");
    for id in [
        "isolation.identity",
        "isolation.agent-status",
        "isolation.joined-tokens",
        "isolation.distinct-tokens",
    ] {
        assert!(passed.contains(id), "{id} did not pass");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_declared_rule_group_passes_a_server_that_keeps_it() {
    let app = fake_app(HandlerDefects { declare_links: true, ..HandlerDefects::default() }).await;
    let second = peer(&app);
    let run = check(
        app.session_file(),
        &["--session", second.to_str().unwrap(), "--mutating", "--level", "strict"],
    )
    .await;
    assert_eq!(run.code, Some(0), "{}", run.failures());
    let passed = run.ids("PASS");
    for id in ["links.read-unlinked-peer", "links.input-peer", "links.shell-shared"] {
        assert!(passed.contains(id), "{id} did not pass");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_declared_rule_group_fails_a_server_that_breaks_it() {
    let app = fake_app(HandlerDefects {
        declare_links: true,
        peer_agents_reachable: true,
        ..HandlerDefects::default()
    })
    .await;
    let second = peer(&app);
    let run = check(
        app.session_file(),
        &["--session", second.to_str().unwrap(), "--mutating", "--level", "strict"],
    )
    .await;
    let failed: Vec<String> = run.ids("FAIL").into_iter().collect();
    assert_eq!(failed, ["links.input-peer", "links.read-unlinked-peer"], "{}", run.failures());
}

/// An agent in another project of the fake app; its session file.
fn stranger(app: &FakeApp) -> std::path::PathBuf {
    let identity = ToolIdentity { node_id: "agent-9".to_owned(), project_id: "p9".to_owned() };
    app.server().provision_session(identity, default_status(), false).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn two_projects_are_kept_apart() {
    let app = fake_app(HandlerDefects::default()).await;
    let second = stranger(&app);
    let run = check(
        app.session_file(),
        &["--session", second.to_str().unwrap(), "--mutating", "--level", "strict"],
    )
    .await;
    assert_eq!(run.code, Some(0), "{}", run.failures());
    let passed = run.ids("PASS");
    for id in ["isolation.cross-project-terminal", "isolation.agent-status", "isolation.identity"] {
        assert!(passed.contains(id), "{id} did not pass");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_terminal_reachable_from_another_project_fails_the_cross_project_rule_only() {
    let app =
        fake_app(HandlerDefects { terminals_cross_projects: true, ..HandlerDefects::default() })
            .await;
    let second = stranger(&app);
    let run = check(
        app.session_file(),
        &["--session", second.to_str().unwrap(), "--mutating", "--level", "strict"],
    )
    .await;
    let failed: Vec<String> = run.ids("FAIL").into_iter().collect();
    assert_eq!(failed, ["isolation.cross-project-terminal"], "{}", run.failures());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_1_3_server_keeping_the_rule_passes_the_wait_rule() {
    let app = fake_app(HandlerDefects {
        declare_links: true,
        terminal_13: true,
        ..HandlerDefects::default()
    })
    .await;
    let second = peer(&app);
    let run =
        check(app.session_file(), &["--session", second.to_str().unwrap(), "--level", "strict"])
            .await;
    assert_eq!(run.code, Some(0), "{}", run.failures());
    let passed = run.ids("PASS");
    for id in ["links.read-unlinked-peer", "links.wait-unlinked-peer"] {
        assert!(passed.contains(id), "{id} did not pass");
    }
    // Driving a peer is probed only with --mutating.
    let skipped = run.ids("SKIP");
    for id in ["links.input-peer", "links.kill-peer"] {
        assert!(skipped.contains(id), "{id} did not skip");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_1_3_server_that_lets_agents_wait_on_peers_fails_the_read_and_wait_rules() {
    let app = fake_app(HandlerDefects {
        declare_links: true,
        terminal_13: true,
        peer_agents_reachable: true,
        ..HandlerDefects::default()
    })
    .await;
    let second = peer(&app);
    let run =
        check(app.session_file(), &["--session", second.to_str().unwrap(), "--level", "strict"])
            .await;
    let failed: Vec<String> = run.ids("FAIL").into_iter().collect();
    assert_eq!(
        failed,
        ["links.read-unlinked-peer", "links.wait-unlinked-peer"],
        "{}",
        run.failures()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refusal_with_another_message_fails_the_link_rule() {
    // The rule's messages are contract: a peer refused as "not found" is not the rule's refusal.
    let app = fake_app(HandlerDefects {
        declare_links: true,
        peer_not_found: true,
        ..HandlerDefects::default()
    })
    .await;
    let second = peer(&app);
    let run = check(
        app.session_file(),
        &["--session", second.to_str().unwrap(), "--mutating", "--level", "strict"],
    )
    .await;
    let failed: Vec<String> = run.ids("FAIL").into_iter().collect();
    assert_eq!(failed, ["links.input-peer", "links.read-unlinked-peer"], "{}", run.failures());
}
