//! Two sessions: one token never acts as the other (`spec/protocol.md` §6.1–§6.2, §6.4), and
//! the headless rule `agent-link-isolation` (one agent cannot read or drive another without the
//! person's link), checked only when the server declares it in `session_info.rules`.
//!
//! What needs the person is `SKIPped` with the reason: revoking a session means closing its node,
//! and probing a peer agent with input that would do harm if the server broke the rule is never
//! done.

use serde_json::{Value, json};

use crate::ctx::{Ctx, Expect, Who};
use crate::raw::Header;

const SESSIONS: &str = "protocol.md §6.1";
const AUTH: &str = "protocol.md §6.2";
const LINKS: &str = "headless rule agent-link-isolation (docs/conformance.md)";

/// The `session_info.rules` entry that turns the link group on.
pub const LINK_RULE: &str = "agent-link-isolation";

const REVOKED: &str = "a revoked token stops working at once";
const REVOKED_WHY: &str = "revoking a session means closing its node, which only the person may do; the suite never revokes";

fn same_server(ctx: &Ctx) -> bool {
    ctx.second.as_ref().is_some_and(|second| {
        second.endpoint_file == ctx.first.endpoint_file && second.port == ctx.first.port
    })
}

pub(crate) fn declares_links(ctx: &Ctx) -> bool {
    ctx.info.as_ref().is_some_and(|info| {
        info.get("rules")
            .and_then(Value::as_array)
            .is_some_and(|rules| rules.iter().any(|rule| rule == LINK_RULE))
    })
}

#[expect(clippy::too_many_lines, reason = "the rules of one group, in the order they run")]
pub(crate) async fn check(ctx: &mut Ctx) {
    ctx.skip("isolation.revoked", AUTH, REVOKED, REVOKED_WHY);
    let Some(second) = &ctx.second else {
        for id in [
            "isolation.same-server",
            "isolation.distinct-tokens",
            "isolation.identity",
            "isolation.joined-tokens",
            "isolation.agent-status",
        ] {
            ctx.skip(
                id,
                SESSIONS,
                "two sessions of one server are kept apart",
                "needs a second --session",
            );
        }
        links(ctx).await;
        return;
    };
    let (first_id, second_id) = (ctx.first.node_id().to_owned(), second.node_id().to_owned());
    if !same_server(ctx) {
        ctx.skip(
            "isolation.same-server",
            SESSIONS,
            "both sessions reach the same server",
            "the second session belongs to another server; isolation is not checked",
        );
        links(ctx).await;
        return;
    }
    ctx.pass("isolation.same-server", SESSIONS, "both sessions reach the same server");
    let distinct =
        ctx.second.as_ref().is_some_and(|second| ctx.first.token.expose() != second.token.expose())
            && first_id != second_id;
    ctx.verdict(
        "isolation.distinct-tokens",
        "protocol.md §2.5",
        "two sessions have different nodes and tokens",
        (!distinct).then(|| "the two session files share a token or a node".to_owned()),
    );

    // Each token acts as its own session.
    let mut problem = None;
    for (who, expected) in [(Who::First, &first_id), (Who::Second, &second_id)] {
        let called = ctx.call(who, "session_info", &json!({})).await;
        match called.value() {
            Ok(value) if value["nodeId"] == expected.as_str() => {}
            Ok(value) => {
                problem = Some((
                    format!("the token of {expected} acted as {}", value["nodeId"]),
                    called.sent(),
                    called.received(),
                ));
            }
            Err(error) => problem = Some((error, called.sent(), called.received())),
        }
        if problem.is_some() {
            break;
        }
    }
    match problem {
        None => {
            ctx.pass("isolation.identity", AUTH, "each token acts as its own session and no other");
        }
        Some((note, sent, received)) => ctx.fail_with(
            "isolation.identity",
            AUTH,
            "each token acts as its own session and no other",
            &note,
            &sent,
            &received,
        ),
    }

    let second =
        ctx.second.as_ref().map(|second| second.token.expose().to_owned()).unwrap_or_default();
    let joined = Header::secret(
        "authorization",
        format!("Bearer {}{second}", ctx.first.token.expose()),
        "Bearer <token><token 2>",
    );
    let probe = crate::raw::Probe::post(r#"{"operation":"session_info","args":{}}"#).header(joined);
    ctx.expect(
        "isolation.joined-tokens",
        AUTH,
        "two tokens joined are no token (length check)",
        vec![(Who::First, probe, Expect::error(401, "Unknown or revoked session"))],
    )
    .await;

    // agent_status: the same project sees each other, other projects never.
    let same_project =
        ctx.second.as_ref().is_some_and(|second| second.project_id() == ctx.first.project_id());
    let called = ctx.call(Who::First, "agent_status", &json!({})).await;
    let problem = match called.value() {
        Ok(value) => {
            let listed = value.as_array().is_some_and(|entries| {
                entries.iter().any(|entry| entry["nodeId"] == second_id.as_str())
            });
            match (same_project, listed) {
                (true, false) => Some(format!("{second_id} of the same project is missing")),
                (false, true) => Some(format!("{second_id} of another project is listed")),
                _ => None,
            }
        }
        Err(error) => Some(error),
    };
    match problem {
        None => ctx.pass(
            "isolation.agent-status",
            "protocol.md §6.4",
            "agent_status lists the other session exactly when it is in the same project",
        ),
        Some(note) => ctx.fail_with(
            "isolation.agent-status",
            "protocol.md §6.4",
            "agent_status lists the other session exactly when it is in the same project",
            &note,
            &called.sent(),
            &called.received(),
        ),
    }
    links(ctx).await;
}

/// `agent-link-isolation`'s refusal of a read (`terminal_read`, `terminal_wait`) of `to` by
/// `from` without an enabled link (`docs/headless-rules.md`).
pub fn read_not_linked(from: &str, to: &str) -> String {
    format!(
        "Reading another agent's terminal needs an enabled agent link from your node to it; ask the user to link the two nodes: termsprawl-headless link {from} {to}"
    )
}

/// `agent-link-isolation`'s refusal to drive or attach to another agent's terminal.
pub const AGENT_NOT_YOURS: &str = "Another agent's terminal is driven only by the user: no agent may type into, interrupt, kill or attach to it; send it a request with agent_send over an enabled link instead";

const READ: &str =
    "an agent cannot read an unlinked peer agent's terminal (the rule's read message)";
const LINKED: &str = "an agent can read a peer agent it has an enabled link to";
const WAIT: &str =
    "an agent cannot wait on an unlinked peer agent's terminal (the rule's read message)";
const WAIT_LINKED: &str = "an agent can wait on a peer agent it has an enabled link to";
const INPUT: &str = "an agent cannot type into a peer agent (the rule's drive message)";
const KILL: &str = "an agent cannot kill a peer agent (the rule's drive message)";
/// The rules that a server breaking them would act on the person's agent: never probed.
const HARMFUL: [(&str, &str); 3] = [
    ("links.interrupt-peer", "an agent cannot interrupt a peer agent"),
    ("links.close-peer", "an agent cannot close a peer agent"),
    ("links.external-peer", "an agent cannot attach an external terminal to a peer agent"),
];
/// The probed rules of the group.
const PROBED: [(&str, &str); 6] = [
    ("links.read-unlinked-peer", READ),
    ("links.read-linked-peer", LINKED),
    ("links.wait-unlinked-peer", WAIT),
    ("links.wait-linked-peer", WAIT_LINKED),
    ("links.input-peer", INPUT),
    ("links.kill-peer", KILL),
];

/// PASS when the call failed with 400 and exactly `message`, else FAIL.
fn refused(ctx: &mut Ctx, id: &str, rule: &str, called: &crate::ctx::Called, message: &str) {
    let problem = match &called.answer {
        Ok(response) => Expect::error(400, message).mismatch(response),
        Err(error) => Some(error.clone()),
    };
    match problem {
        None => ctx.pass(id, LINKS, rule),
        Some(problem) => {
            ctx.fail_with(id, LINKS, rule, &problem, &called.sent(), &called.received());
        }
    }
}

/// The link rules that need nothing of the run's own (`docs/headless-rules.md`).
#[expect(clippy::too_many_lines, reason = "the rules of one group, in the order they run")]
async fn links(ctx: &mut Ctx) {
    if !declares_links(ctx) {
        for (id, rule) in PROBED.into_iter().chain(HARMFUL) {
            ctx.skip(
                id,
                LINKS,
                rule,
                "the server does not declare agent-link-isolation in session_info.rules",
            );
        }
        return;
    }
    for (id, rule) in HARMFUL {
        ctx.skip(
            id,
            LINKS,
            rule,
            "never probed: a server that broke the rule would act on the person's agent",
        );
    }
    let peer = match &ctx.second {
        None => Err("needs a second --session of the same project"),
        Some(second) if !same_server(ctx) || second.project_id() != ctx.first.project_id() => {
            Err("the second session is not in the same project of the same server")
        }
        Some(second) => Ok(second.node_id().to_owned()),
    };
    let peer = match peer {
        Ok(peer) => peer,
        Err(why) => {
            for (id, rule) in PROBED {
                ctx.skip(id, LINKS, rule, why);
            }
            return;
        }
    };
    let cards =
        ctx.call(Who::First, "agent_cards", &json!({})).await.value().unwrap_or(Value::Null);
    let me = ctx.first.node_id().to_owned();
    let linked = cards.as_array().is_some_and(|cards| {
        cards.iter().any(|card| {
            card["nodeId"] == me.as_str()
                && card["enabledPeerIds"]
                    .as_array()
                    .is_some_and(|peers| peers.iter().any(|id| id == peer.as_str()))
        })
    });
    let called =
        ctx.call(Who::First, "terminal_read", &json!({"nodeId": peer, "maxChars": 1})).await;
    if linked {
        for (id, rule) in [("links.read-unlinked-peer", READ), ("links.wait-unlinked-peer", WAIT)] {
            ctx.skip(id, LINKS, rule, "the first session has an enabled link to the second");
        }
        match called.value() {
            Ok(_) => ctx.pass("links.read-linked-peer", LINKS, LINKED),
            Err(note) => ctx.fail_with(
                "links.read-linked-peer",
                LINKS,
                LINKED,
                &note,
                &called.sent(),
                &called.received(),
            ),
        }
        if ctx.lists("terminal_wait") {
            let args = json!({"nodeId": peer, "until": "quiet", "timeoutMs": 0});
            let called = ctx.call(Who::First, "terminal_wait", &args).await;
            let problem = called.value().err().or_else(|| {
                let value = called.value().unwrap_or_default();
                crate::shapes::check(ctx.version, "terminal_wait", &args, &value)
            });
            match problem {
                None => ctx.pass("links.wait-linked-peer", LINKS, WAIT_LINKED),
                Some(note) => ctx.fail_with(
                    "links.wait-linked-peer",
                    LINKS,
                    WAIT_LINKED,
                    &note,
                    &called.sent(),
                    &called.received(),
                ),
            }
        } else {
            ctx.skip("links.wait-linked-peer", LINKS, WAIT_LINKED, "terminal_wait is not listed");
        }
    } else {
        for (id, rule) in
            [("links.read-linked-peer", LINKED), ("links.wait-linked-peer", WAIT_LINKED)]
        {
            ctx.skip(id, LINKS, rule, "the first session has no enabled link to the second");
        }
        let message = read_not_linked(&me, &peer);
        refused(ctx, "links.read-unlinked-peer", READ, &called, &message);
        if ctx.lists("terminal_wait") {
            // Read-only and answered at once (timeoutMs 0) even on a server that breaks the rule.
            let called = ctx
                .call(
                    Who::First,
                    "terminal_wait",
                    &json!({"nodeId": peer, "until": "quiet", "timeoutMs": 0}),
                )
                .await;
            refused(ctx, "links.wait-unlinked-peer", WAIT, &called, &message);
        } else {
            ctx.skip("links.wait-unlinked-peer", LINKS, WAIT, "terminal_wait is not listed");
        }
    }
    drive_peer(ctx, &peer).await;
}

/// Driving a peer agent (`--mutating`): refused with `AGENT_NOT_YOURS`, link or not.
async fn drive_peer(ctx: &mut Ctx, peer: &str) {
    if !ctx.mutating {
        ctx.skip("links.input-peer", LINKS, INPUT, "needs --mutating");
        ctx.skip("links.kill-peer", LINKS, KILL, "needs --mutating");
        return;
    }
    // Empty input: harmless even on a server that breaks the rule.
    let called = ctx.call(Who::First, "terminal_input", &json!({"nodeId": peer, "text": ""})).await;
    refused(ctx, "links.input-peer", INPUT, &called, AGENT_NOT_YOURS);
    if ctx.lists("terminal_kill") {
        // An agent's node is no run node: a server that breaks the rule but keeps the protocol's
        // own check still refuses it, with the other message.
        let called = ctx.call(Who::First, "terminal_kill", &json!({"nodeId": peer})).await;
        refused(ctx, "links.kill-peer", KILL, &called, AGENT_NOT_YOURS);
    } else {
        ctx.skip("links.kill-peer", LINKS, KILL, "terminal_kill is not listed");
    }
}

/// The two-session rules on a shell terminal the first session opened (called while it exists).
pub(crate) async fn with_terminal(ctx: &mut Ctx, node: &str) {
    const SHARED: &str = "plain shell terminals stay shared within the project";
    const CROSS: &str = "a terminal of another project is out of reach";
    let Some(second) = &ctx.second else {
        ctx.skip("isolation.cross-project-terminal", SESSIONS, CROSS, "needs a second --session");
        ctx.skip("links.shell-shared", LINKS, SHARED, "needs a second --session");
        return;
    };
    let same_project = second.project_id() == ctx.first.project_id();
    if !same_server(ctx) {
        ctx.skip(
            "isolation.cross-project-terminal",
            SESSIONS,
            CROSS,
            "the sessions belong to different servers",
        );
        ctx.skip("links.shell-shared", LINKS, SHARED, "the sessions belong to different servers");
        return;
    }
    let called =
        ctx.call(Who::Second, "terminal_read", &json!({"nodeId": node, "maxChars": 1})).await;
    if same_project {
        ctx.skip(
            "isolation.cross-project-terminal",
            SESSIONS,
            CROSS,
            "both sessions are in one project",
        );
        if !declares_links(ctx) {
            ctx.skip(
                "links.shell-shared",
                LINKS,
                SHARED,
                "the server does not declare agent-link-isolation in session_info.rules",
            );
        } else if called.value().is_ok() {
            ctx.pass("links.shell-shared", LINKS, SHARED);
        } else {
            ctx.fail_with(
                "links.shell-shared",
                LINKS,
                SHARED,
                "the second agent could not read the shell terminal",
                &called.sent(),
                &called.received(),
            );
        }
    } else {
        ctx.skip("links.shell-shared", LINKS, SHARED, "the sessions are in different projects");
        if called.failed() {
            ctx.pass("isolation.cross-project-terminal", SESSIONS, CROSS);
        } else {
            ctx.fail_with(
                "isolation.cross-project-terminal",
                SESSIONS,
                CROSS,
                "the other project's terminal was readable",
                &called.sent(),
                &called.received(),
            );
        }
    }
}
