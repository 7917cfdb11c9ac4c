//! JSON Schemas of the wire types of `spec/protocol.md` §1, written as data.
//!
//! The protocol crate's types are serialised by hand-written or serde-derived code, not by
//! `schemars`, so their schemas are written here from the contract; a test serialises a value of
//! each Rust type and checks it against its schema, member order included, so the two cannot drift.

use serde_json::{Map, Value, json};

use super::schema_header;

/// The wire types, in the order of `spec/protocol.md` §1, each as (type name, schema).
pub(super) fn schemas() -> Vec<(&'static str, Value)> {
    vec![
        ("ToolIdentity", tool_identity()),
        ("IntegrationStatus", integration_status()),
        ("ToolSession", tool_session()),
        ("ToolEndpoint", tool_endpoint()),
        ("ToolRequest", tool_request()),
        ("ToolResult", tool_result()),
    ]
}

fn tool_identity() -> Value {
    schema(
        "ToolIdentity",
        "Who is calling: the canvas node of the agent's terminal and its project.",
        &json!({
            "type": "object",
            "properties": {
                "nodeId": {
                    "type": "string",
                    "pattern": NODE_ID,
                    "description": "The canvas node id, which also keys the tmux session `ts-<nodeId>`."
                },
                "projectId": { "type": "string", "description": "The workspace project id." }
            },
            "required": ["nodeId", "projectId"]
        }),
    )
}

fn integration_status() -> Value {
    schema(
        "IntegrationStatus",
        "The integration status of an agent session, stored in its session file and reported by `session_info`.",
        &json!({
            "type": "object",
            "properties": {
                "state": {
                    "type": "string",
                    "enum": ["connected", "cli-fallback", "needs-setup"],
                    "description": "`connected` once an MCP-capable agent has called `session_info`, `cli-fallback` when only the command line is available, `needs-setup` otherwise."
                },
                "adapter": {
                    "type": "string",
                    "description": "The launch adapter, or the bare agent id when the executable was not found."
                },
                "version": {
                    "type": "string",
                    "maxLength": 160,
                    "description": "The agent's `--version` output, trimmed and cut to 160 characters, or `unknown`."
                },
                "reason": { "type": "string", "description": "Text for people." }
            },
            "required": ["state", "adapter", "version", "reason"]
        }),
    )
}

fn tool_session() -> Value {
    schema(
        "ToolSession",
        "The content of a session file, `D/sessions/<nodeId>.json`, written compact in this member order.",
        &json!({
            "type": "object",
            "properties": {
                "nodeId": { "type": "string", "pattern": NODE_ID, "description": "The node id." },
                "projectId": { "type": "string", "description": "The project id." },
                "token": {
                    "type": "string",
                    "pattern": "^[a-f0-9]{64}$",
                    "description": "The session's bearer token: secret, never printed or logged."
                },
                "status": {
                    "$ref": "IntegrationStatus.json",
                    "description": "The integration status the session was provisioned with."
                }
            },
            "required": ["nodeId", "projectId", "token", "status"]
        }),
    )
}

fn tool_endpoint() -> Value {
    schema(
        "ToolEndpoint",
        "The content of `D/endpoint.json`: where the running tool server listens.",
        &json!({
            "type": "object",
            "properties": {
                "url": {
                    "type": "string",
                    "pattern": "^http://127\\.0\\.0\\.1:[0-9]+/call$",
                    "description": "`http://127.0.0.1:<port>/call`."
                },
                "instanceId": {
                    "type": "string",
                    "format": "uuid",
                    "description": "The running server's instance id, a UUID v4 that is new on every start."
                }
            },
            "required": ["url", "instanceId"]
        }),
    )
}

fn tool_request() -> Value {
    schema(
        "ToolRequest",
        "The body of one tool call, `POST /call`.",
        &json!({
            "type": "object",
            "properties": {
                "operation": {
                    "type": "string",
                    "description": "The operation name; see `catalog.json`."
                },
                "args": {
                    "type": "object",
                    "description": "The arguments, as the operation's schema in `schemas/` describes them."
                }
            },
            "required": ["operation", "args"]
        }),
    )
}

fn tool_result() -> Value {
    schema(
        "ToolResult",
        "The answer to one tool call: the HTTP response body and the command-line output.",
        &json!({
            "type": "object",
            "oneOf": [
                {
                    "properties": {
                        "ok": { "const": true },
                        "value": {
                            "description": "Any JSON value; absent when the operation returned none, which differs from `null`."
                        }
                    },
                    "required": ["ok"]
                },
                {
                    "properties": {
                        "ok": { "const": false },
                        "error": {
                            "type": "string",
                            "description": "The error message, shown to models and people verbatim."
                        }
                    },
                    "required": ["ok", "error"]
                }
            ]
        }),
    )
}

/// The node id format of `spec/protocol.md` §2.4.
const NODE_ID: &str = "^[a-zA-Z0-9][a-zA-Z0-9_-]{0,127}$";

fn schema(title: &str, description: &str, body: &Value) -> Value {
    let mut schema: Map<String, Value> = schema_header(title, description);
    let Value::Object(body) = body else { panic!("the schema body of {title} is not an object") };
    for (key, value) in body {
        schema.insert(key.clone(), value.clone());
    }
    Value::Object(schema)
}
