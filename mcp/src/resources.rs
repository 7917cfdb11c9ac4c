//! The guides as MCP resources, for hosts that read resources (`docs/mcp-eras.md`): each guide
//! topic is `termsprawl://guides/<topic>`, `text/markdown`, with the text `guide_read` returns.

use serde_json::{Value, json};
use termsprawl_protocol::{Topic, guide};

/// The URI prefix of the guide resources.
pub const GUIDE_URI_PREFIX: &str = "termsprawl://guides/";

/// The MIME type of every guide resource.
pub const GUIDE_MIME_TYPE: &str = "text/markdown";

/// The URI of the guide of `topic`.
pub fn guide_uri(topic: Topic) -> String {
    format!("{GUIDE_URI_PREFIX}{}", topic.as_str())
}

/// The topic whose guide `uri` names, exactly.
pub(crate) fn topic_of(uri: &str) -> Option<Topic> {
    uri.strip_prefix(GUIDE_URI_PREFIX).and_then(Topic::from_name)
}

/// The `resources/list` entries, in the order of the `guide_read` enum; `title` (the guide's
/// heading) only when `titled` (2025-06-18 and later).
pub(crate) fn resource_entries(titled: bool) -> Vec<Value> {
    Topic::ALL
        .into_iter()
        .map(|topic| {
            let mut entry =
                json!({"uri": guide_uri(topic), "name": format!("guide_{}", topic.as_str())});
            if titled {
                entry["title"] = Value::from(heading(topic));
            }
            entry["description"] = Value::from(format!(
                "The termsprawl {} guide: the text guide_read returns for topic {}.",
                topic.as_str(),
                topic.as_str()
            ));
            entry["mimeType"] = Value::from(GUIDE_MIME_TYPE);
            entry
        })
        .collect()
}

/// The `contents` of `resources/read` for `topic`.
pub(crate) fn resource_contents(topic: Topic) -> Value {
    json!([{"uri": guide_uri(topic), "mimeType": GUIDE_MIME_TYPE, "text": guide(topic)}])
}

/// The guide's first line without its `# `.
fn heading(topic: Topic) -> &'static str {
    let first = guide(topic).lines().next().unwrap_or_default();
    first.strip_prefix("# ").unwrap_or(first)
}
