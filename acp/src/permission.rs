//! `session/request_permission`, failing closed (`spec/acp.md` §2.8): only the person's explicit
//! choice among the offered options, or a policy that picks by option kind, is ever answered
//! `selected`.

#[cfg(test)]
mod tests;

use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::messages::{PermissionOption, RequestPermissionParams, ToolCallContent};
use crate::options::PermissionMode;
use crate::render;

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

/// The lines that show an ask: title, kind, raw input, the diff of every file edit it carries
/// (else `known_diffs`, those the tool call showed before), and the numbered options.
pub(crate) fn ask_lines(request: &RequestPermissionParams, known_diffs: &[String]) -> Vec<String> {
    let tool = &request.tool_call;
    let mut lines = vec![format!(
        "[permission] {} ({})",
        tool.title.as_deref().unwrap_or(&tool.tool_call_id),
        tool.kind.as_deref().unwrap_or("other")
    )];
    if let Some(input) = &tool.raw_input {
        lines.push(format!("  input: {input}"));
    }
    let diffs = ask_diffs(request);
    if diffs.is_empty() {
        lines.extend(known_diffs.iter().cloned());
    } else {
        lines.extend(diffs);
    }
    for (index, option) in request.options.iter().enumerate() {
        lines.push(format!("  {}. {} ({})", index + 1, option.name, option.kind));
    }
    lines
}

/// The unified diffs of the file edits an ask carries.
pub(crate) fn ask_diffs(request: &RequestPermissionParams) -> Vec<String> {
    request
        .tool_call
        .content
        .iter()
        .flatten()
        .filter_map(|item| match item {
            ToolCallContent::Diff { path, old_text, new_text } => {
                Some(render::diff(path, old_text.as_deref(), new_text))
            }
            _ => None,
        })
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
