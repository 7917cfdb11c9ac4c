//! `session_info` (`spec/protocol.md` §6.5) and what its catalog shows: the operations the server
//! lists, in table order, and the protocol version whose version-dependent rules apply.

use serde_json::Value;
use termsprawl_protocol::operations;

use crate::ctx::{Ctx, TERMINAL_13, Version, Who};
use crate::files::status_problem;

const INFO: &str = "protocol.md §6.5";
const TABLE: &str = "protocol.md §4.3";

/// The members of the value, in order.
pub(crate) const MEMBERS: &[&str] = &[
    "nodeId",
    "projectId",
    "instanceId",
    "host",
    "status",
    "appVersion",
    "preferencesFile",
    "guidesDirectory",
    "browserEnabled",
    "operations",
];

/// The reason of a status after `session_info` of an MCP adapter.
const CONNECTED_REASON: &str = "Authenticated tool connection established";

/// The operations of the reference's current table (`spec/protocol.md` §4.3), which every server
/// of that version lists (v1 lacks the messaging ones; browser ones only with browser control).
/// Operations added by later protocol versions of this workspace are not required here.
const REFERENCE: &[&str] = &[
    "session_info",
    "guide_read",
    "canvas_list",
    "canvas_select",
    "canvas_move",
    "canvas_resize",
    "canvas_group",
    "sticky_open",
    "browser_open",
    "browser_list",
    "browser_claim",
    "browser_transfer",
    "browser_navigate",
    "browser_inspect",
    "browser_click",
    "browser_type",
    "browser_screenshot",
    "terminal_open",
    "terminal_read",
    "terminal_submit",
    "terminal_input",
    "terminal_interrupt",
    "terminal_external",
    "terminal_close",
    "agent_launch",
    "agent_status",
    "agent_cards",
    "agent_send",
    "agent_task",
    "agent_reply",
    "context_read",
    "artifact_open",
];

#[expect(clippy::too_many_lines, reason = "the rules of one group, in the order they run")]
pub(crate) async fn check(ctx: &mut Ctx) {
    let called = ctx.call(Who::First, "session_info", &Value::Object(serde_json::Map::new())).await;
    let value = match called.value() {
        Ok(value) if value.is_object() => value,
        Ok(_) | Err(_) => {
            let note =
                called.value().err().unwrap_or_else(|| "the value is not an object".to_owned());
            ctx.fail_with(
                "session-info.ok",
                "protocol.md §6.4",
                "session_info answers 200 with an object value",
                &note,
                &called.sent(),
                &called.received(),
            );
            ctx.report.fact("session_info failed: the catalog is unknown, no operation is probed");
            return;
        }
    };
    ctx.pass(
        "session-info.ok",
        "protocol.md §6.4",
        "session_info answers 200 with an object value",
    );

    let keys: Vec<&str> =
        value.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
    let problem = (keys.len() < MEMBERS.len() || keys[..MEMBERS.len()] != *MEMBERS)
        .then(|| format!("members {keys:?}, expected {MEMBERS:?} first and in this order"));
    ctx.verdict(
        "session-info.members",
        INFO,
        "the value has the contract's members in order",
        problem,
    );

    let first = &ctx.first;
    let problem = (value["nodeId"] != first.session["nodeId"]
        || value["projectId"] != first.session["projectId"])
        .then(|| {
            format!(
                "nodeId {} projectId {}, the session file says {} {}",
                value["nodeId"],
                value["projectId"],
                first.session["nodeId"],
                first.session["projectId"]
            )
        });
    ctx.verdict("session-info.identity", INFO, "nodeId and projectId are the session's", problem);

    let problem = (value["instanceId"] != ctx.first.endpoint["instanceId"]).then(|| {
        format!(
            "instanceId {}, endpoint.json says {}",
            value["instanceId"], ctx.first.endpoint["instanceId"]
        )
    });
    ctx.verdict(
        "session-info.instance-id",
        INFO,
        "instanceId is the running server's (endpoint.json)",
        problem,
    );

    let problem = (value["host"] != "local").then(|| format!("host {}", value["host"]));
    ctx.verdict("session-info.host", INFO, "host is \"local\"", problem);

    let problem = status_problem(&value["status"]).or_else(|| {
        let stored = &ctx.first.session["status"];
        let mut expected = stored.clone();
        let adapter = stored["adapter"].as_str().unwrap_or_default();
        if matches!(adapter, "claude-mcp" | "codex-mcp") {
            expected["state"] = Value::from("connected");
            expected["reason"] = Value::from(CONNECTED_REASON);
        }
        (value["status"] != expected)
            .then(|| format!("status {}, expected {expected}", value["status"]))
    });
    ctx.verdict(
        "session-info.status",
        INFO,
        "status is the session's (connected, for an MCP adapter, after session_info)",
        problem,
    );

    let problem = value["appVersion"]
        .as_str()
        .is_none_or(str::is_empty)
        .then(|| format!("appVersion {}", value["appVersion"]));
    ctx.verdict("session-info.app-version", INFO, "appVersion is a non-empty string", problem);

    let data_dir = ctx.first.data_dir.clone();
    let expected = data_dir.join("preferences.json");
    let problem = (value["preferencesFile"].as_str() != expected.to_str()).then(|| {
        format!("preferencesFile {}, expected {}", value["preferencesFile"], expected.display())
    });
    ctx.verdict(
        "session-info.preferences-file",
        INFO,
        "preferencesFile is D/preferences.json, absolute",
        problem,
    );

    let expected = data_dir.join("launch").join(ctx.first.node_id()).join("skills");
    let problem = (value["guidesDirectory"].as_str() != expected.to_str()).then(|| {
        format!("guidesDirectory {}, expected {}", value["guidesDirectory"], expected.display())
    });
    ctx.verdict(
        "session-info.guides-directory",
        INFO,
        "guidesDirectory is D/launch/<nodeId>/skills, absolute",
        problem,
    );

    let browser_enabled = value["browserEnabled"].as_bool();
    let problem =
        browser_enabled.is_none().then(|| format!("browserEnabled {}", value["browserEnabled"]));
    ctx.verdict("session-info.browser-enabled", INFO, "browserEnabled is a boolean", problem);

    let listed: Option<Vec<String>> = value["operations"]
        .as_array()
        .and_then(|items| items.iter().map(|item| item.as_str().map(str::to_owned)).collect());
    let Some(listed) = listed else {
        ctx.fail(
            "session-info.operations",
            INFO,
            "operations is an array of names",
            &format!("operations {}", value["operations"]),
        );
        return;
    };
    ctx.pass("session-info.operations", INFO, "operations is an array of names");
    ctx.listed = listed;
    ctx.info = Some(value);
    catalog(ctx, browser_enabled.unwrap_or(false));
}

/// The catalog rules, and the version they show.
fn catalog(ctx: &mut Ctx, browser_enabled: bool) {
    ctx.version = Version::of_catalog(&ctx.listed);
    let table: Vec<&str> = operations().iter().map(termsprawl_protocol::Operation::name).collect();
    let unknown: Vec<String> =
        ctx.listed.iter().filter(|name| !table.contains(&name.as_str())).cloned().collect();
    let known: Vec<&str> = table.iter().copied().filter(|name| ctx.lists(name)).collect();
    let listed_known: Vec<String> =
        ctx.listed.iter().filter(|name| table.contains(&name.as_str())).cloned().collect();
    ctx.report.fact(&format!(
        "the catalog lists {} operations; it shows protocol version {} ({}), so the version-dependent rules of protocol.md §4.5 and §6.2–6.3 are checked for {}",
        ctx.listed.len(),
        ctx.version.name(),
        match ctx.version {
            Version::V1_3 => "terminal_wait listed",
            Version::V1_2 => "agent messaging operations present, no terminal_wait",
            Version::V1 => "no agent messaging operations",
        },
        ctx.version.name()
    ));

    let position = |name: &str| table.iter().position(|entry| *entry == name);
    let out_of_order =
        listed_known.windows(2).find(|pair| position(&pair[0]) >= position(&pair[1]));
    let problem = out_of_order.map(|pair| format!("{} is listed before {}", pair[0], pair[1]));
    ctx.verdict("catalog.order", INFO, "operations are in table order, each once", problem);

    let version = ctx.version;
    let missing: Vec<&str> = REFERENCE
        .iter()
        .copied()
        .chain(TERMINAL_13)
        .filter(|name| !version.lacks(name))
        .filter(|name| browser_enabled || !name.starts_with("browser_"))
        .filter(|name| !known.contains(name))
        .collect();
    let hidden_browser: Vec<&str> = known
        .iter()
        .copied()
        .filter(|name| !browser_enabled && name.starts_with("browser_"))
        .collect();
    let problem = if !missing.is_empty() {
        Some(format!("missing {missing:?}"))
    } else if !hidden_browser.is_empty() {
        Some(format!("browserEnabled is false but {hidden_browser:?} are listed"))
    } else {
        None
    };
    ctx.verdict(
        "catalog.complete",
        TABLE,
        "every operation of the version's reference table is listed, browser_* ones exactly when browserEnabled",
        problem,
    );
    if unknown.is_empty() {
        ctx.pass("catalog.known", TABLE, "every listed operation is in this suite's table");
    } else {
        ctx.skip(
            "catalog.known",
            TABLE,
            "every listed operation is in this suite's table",
            &format!(
                "not in this suite's table, not probed: {unknown:?} (a newer protocol version?)"
            ),
        );
    }
}
