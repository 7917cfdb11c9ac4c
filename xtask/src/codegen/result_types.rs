//! JSON Schemas of the typed terminal answers of `termsprawl_protocol::results` (`spec/protocol.md`
//! §4.5 and §4.6; protocol 1.5.0), written as data like [`super::wire_types`], from which the
//! TypeScript bindings' `results.ts` is generated.
//!
//! The crate's types are serialised by serde, so a test serialises a value of each and checks it
//! against its schema here, member order included, so that the two cannot drift.

use serde_json::{Value, json};
use termsprawl_protocol::results::member::{CURSOR, EXIT_CODE, OUTPUT, RUNNING};

/// The result types, each as (type name, schema): the order of `results.ts`.
pub(super) fn schemas() -> Vec<(&'static str, Value)> {
    vec![
        ("TerminalReadResult", terminal_read()),
        ("TerminalRunResult", terminal_run()),
        ("TerminalWaitResult", terminal_wait()),
        ("TerminalKind", terminal_kind()),
        ("TerminalListEntry", terminal_list_entry()),
        ("SearchMatch", search_match()),
        ("TerminalSearchResult", terminal_search()),
    ]
}

fn nullable(kind: &str, description: &str) -> Value {
    json!({"type": [kind, "null"], "description": description})
}

fn plain(kind: &str, description: &str) -> Value {
    json!({"type": kind, "description": description})
}

/// The members every run and wait answer shares, after `nodeId`.
fn exit_members(properties: &mut serde_json::Map<String, Value>) {
    properties.insert(RUNNING.into(), plain("boolean", "Whether the command still runs."));
    properties.insert(
        EXIT_CODE.into(),
        nullable("integer", "Its exit code once it ended normally, else null."),
    );
    properties.insert(
        "signal".into(),
        nullable("string", "The name of the signal that ended it (`SIGTERM`), else null."),
    );
}

fn output_members(properties: &mut serde_json::Map<String, Value>, output: &str) {
    properties.insert(OUTPUT.into(), plain("string", output));
    properties.insert("truncated".into(), plain("boolean", "Whether `output` was cut."));
    properties.insert(CURSOR.into(), plain("integer", "The cursor at the end of `output`."));
}

fn object(
    description: &str,
    properties: &serde_json::Map<String, Value>,
    optional: &[&str],
) -> Value {
    let required: Vec<&String> =
        properties.keys().filter(|name| !optional.contains(&name.as_str())).collect();
    json!({
        "description": description,
        "type": "object",
        "properties": properties,
        "required": required,
    })
}

fn terminal_read() -> Value {
    let mut properties = serde_json::Map::new();
    properties.insert("nodeId".into(), plain("string", "The node read."));
    properties.insert(
        OUTPUT.into(),
        plain("string", "The output after `since`, its tail of at most `maxChars` UTF-16 units."),
    );
    properties.insert(CURSOR.into(), plain("integer", "The cursor at the end of `output`."));
    exit_members(&mut properties);
    object(
        "The answer of `terminal_read` in its text view, the default (1.3.0); the screen view (1.4.0) answers more.",
        &properties,
        &[],
    )
}

fn terminal_run() -> Value {
    let mut properties = serde_json::Map::new();
    properties.insert("nodeId".into(), plain("string", "The new run node."));
    exit_members(&mut properties);
    output_members(&mut properties, "The tail of the output, at most 16000 UTF-16 units.");
    object("The answer of `terminal_run` (1.3.0).", &properties, &[])
}

fn terminal_wait() -> Value {
    let mut properties = serde_json::Map::new();
    properties.insert("nodeId".into(), plain("string", "The node waited on."));
    properties.insert(
        "reached".into(),
        plain("boolean", "Whether the condition was reached (false: the timeout ran out)."),
    );
    exit_members(&mut properties);
    output_members(
        &mut properties,
        "The output after `since`, its tail of at most 16000 UTF-16 units.",
    );
    properties.insert(
        "matched".into(),
        nullable(
            "integer",
            "With `until: \"text\"` (1.5.0): the index in `anyOf` (0 for `text`) of the text that matched first; null when not reached.",
        ),
    );
    properties.insert(
        "matchCursor".into(),
        nullable(
            "integer",
            "With `until: \"text\"` (1.5.0): the cursor at the start of the match; null when not reached.",
        ),
    );
    properties.insert(
        "inputBy".into(),
        nullable(
            "string",
            "With `until: \"input\"` (1.5.0): the foreground program reading the terminal; null when not reached.",
        ),
    );
    object(
        "The answer of `terminal_wait` (1.3.0; `matched`, `matchCursor` and `inputBy` 1.5.0, present only with their `until`).",
        &properties,
        &["matched", "matchCursor", "inputBy"],
    )
}

fn terminal_kind() -> Value {
    json!({
        "description": "What kind of terminal node a `terminal_list` entry is (1.5.0): a shell, a run node of `terminal_run`, or an agent's node.",
        "type": "string",
        "enum": ["shell", "run", "agent"],
    })
}

fn terminal_list_entry() -> Value {
    let mut properties = serde_json::Map::new();
    properties.insert("nodeId".into(), plain("string", "The node."));
    properties.insert("title".into(), plain("string", "Its title on the canvas."));
    properties.insert(
        "kind".into(),
        json!({"$ref": "TerminalKind.json", "description": "Shell, run node or agent."}),
    );
    properties
        .insert("command".into(), nullable("string", "A run node's command; null for the others."));
    exit_members(&mut properties);
    properties
        .insert("startedAt".into(), plain("string", "When its program started, ISO 8601 UTC."));
    properties.insert(
        "endedAt".into(),
        nullable("string", "When its program ended, ISO 8601 UTC; null while it runs."),
    );
    properties.insert(CURSOR.into(), plain("integer", "Its output cursor now."));
    properties.insert(
        "lastOutputAt".into(),
        nullable("string", "When it last printed, ISO 8601 UTC; null before any output."),
    );
    properties.insert(
        "waitingForInput".into(),
        plain("boolean", "Whether its foreground program is blocked reading the terminal."),
    );
    properties.insert(
        "inputBy".into(),
        nullable("string", "That program's name while `waitingForInput`; null otherwise."),
    );
    properties.insert(
        "notify".into(),
        plain("boolean", "Whether its caller gets a notice when its command ends."),
    );
    object("One terminal of `terminal_list`'s answer (1.5.0).", &properties, &[])
}

fn search_match() -> Value {
    let lines = |description: &str| json!({"type": "array", "items": {"type": "string"}, "description": description});
    let mut properties = serde_json::Map::new();
    properties.insert("nodeId".into(), plain("string", "The terminal it was found in."));
    properties.insert(
        CURSOR.into(),
        plain(
            "integer",
            "The cursor at the start of the matching line: `terminal_read {since: cursor}` reads on from it.",
        ),
    );
    properties.insert("line".into(), plain("string", "The matching line, without its line feed."));
    properties.insert("before".into(), lines("Up to `context` lines before it, oldest first."));
    properties.insert("after".into(), lines("Up to `context` lines after it."));
    object("One line `terminal_search` found (1.5.0).", &properties, &[])
}

fn terminal_search() -> Value {
    let mut properties = serde_json::Map::new();
    properties.insert(
        "matches".into(),
        json!({
            "type": "array",
            "items": {"$ref": "SearchMatch.json"},
            "description": "Oldest first per terminal, terminals in `terminal_list` order.",
        }),
    );
    properties.insert("truncated".into(), plain("boolean", "Whether `limit` cut the list."));
    object("The answer of `terminal_search` (1.5.0).", &properties, &[])
}
