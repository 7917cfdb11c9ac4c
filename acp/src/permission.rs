//! `session/request_permission`, failing closed (`spec/acp.md` §2.8): only the person's explicit
//! choice among the offered options, or a policy that picks by option kind, is ever answered
//! `selected`.

#[cfg(test)]
mod tests;

use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::messages::{PermissionOption, RequestPermissionParams};
use crate::options::PermissionMode;

/// The answer to a permission ask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decision {
    /// `{"outcome":"selected","optionId"}`.
    Selected(String),
    /// `{"outcome":"cancelled"}`.
    Cancelled,
}

impl Decision {
    /// The `session/request_permission` result.
    pub(crate) fn to_json(&self) -> Value {
        match self {
            Decision::Selected(option_id) => {
                json!({"outcome": {"outcome": "selected", "optionId": option_id}})
            }
            Decision::Cancelled => json!({"outcome": {"outcome": "cancelled"}}),
        }
    }
}

/// A permission ask waiting for the person. Dropping it (or its `reply`) answers `cancelled`.
#[derive(Debug)]
pub(crate) struct Ask {
    pub(crate) request: RequestPermissionParams,
    pub(crate) timeout: Duration,
    pub(crate) reply: oneshot::Sender<String>,
}

/// The non-interactive policies: by kind only, never by position or name. `Ask` decides nothing
/// here and yields `cancelled`.
pub(crate) fn by_policy(mode: PermissionMode, options: &[PermissionOption]) -> Decision {
    let first = |kind: &str| {
        options
            .iter()
            .find(|option| option.kind == kind)
            .map(|option| Decision::Selected(option.option_id.clone()))
    };
    let decision = match mode {
        PermissionMode::Ask => None,
        PermissionMode::AllowOnce => first("allow_once"),
        PermissionMode::Deny => first("reject_once").or_else(|| first("reject_always")),
    };
    decision.unwrap_or(Decision::Cancelled)
}

/// The first line of an ask (`[permission] TITLE (KIND)`) and the tool's raw input, which is left
/// out when the ask shows file changes: they are its readable form (an edit's input repeats the
/// old and new text as escaped JSON).
pub(crate) fn ask_head(request: &RequestPermissionParams, shows_changes: bool) -> Vec<String> {
    let tool = &request.tool_call;
    let mut lines = vec![format!(
        "[permission] {} ({})",
        tool.title.as_deref().unwrap_or(&tool.tool_call_id),
        tool.kind.as_deref().unwrap_or("other")
    )];
    if let Some(input) = tool.raw_input.as_ref().filter(|_| !shows_changes) {
        lines.push(format!("  input: {input}"));
    }
    lines
}

/// The numbered options of an ask.
pub(crate) fn option_lines(request: &RequestPermissionParams) -> Vec<String> {
    request
        .options
        .iter()
        .enumerate()
        .map(|(index, option)| format!("  {}. {} ({})", index + 1, option.name, option.kind))
        .collect()
}

/// The prompt that asks for a choice.
pub(crate) fn choose_prompt(options: usize, timeout: Duration) -> String {
    format!("choose 1-{options} (cancelled after {} s): ", timeout.as_secs_f64())
}

/// The option a typed line selects: only a number among the offered options counts.
pub(crate) fn parse_choice<'a>(
    line: &str,
    options: &'a [PermissionOption],
) -> Option<&'a PermissionOption> {
    let number: usize = line.trim().parse().ok()?;
    options.get(number.checked_sub(1)?)
}
