//! Tests of the lenient decoding of `session/update` and of request params.

use serde_json::json;

use super::{
    Capabilities, ConfigValue, ContentBlock, CreateTerminalParams, Extra, ReadTextFileParams,
    SessionUpdate, ToolCallContent, Usage, decode, decode_update,
};
use crate::change::OnDisk;

#[test]
fn message_and_thought_chunks_decode_every_block_type() {
    let cases = [
        (
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}, "messageId": "m"}),
            SessionUpdate::AgentMessage(ContentBlock::Text("hi".to_owned())),
        ),
        (
            json!({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": ""}}),
            SessionUpdate::AgentThought(ContentBlock::Text(String::new())),
        ),
        (
            json!({"sessionUpdate": "user_message_chunk", "content": {"type": "image", "data": "AA==", "mimeType": "image/png"}}),
            SessionUpdate::UserMessage(ContentBlock::Other("[image image/png]".to_owned())),
        ),
        (
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "resource_link", "name": "n", "uri": "file:///a"}}),
            SessionUpdate::AgentMessage(ContentBlock::Other("[link n file:///a]".to_owned())),
        ),
        (
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "resource", "resource": {"uri": "file:///b", "text": "t"}}}),
            SessionUpdate::AgentMessage(ContentBlock::Other("[resource file:///b]".to_owned())),
        ),
        (
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "hologram"}}),
            SessionUpdate::AgentMessage(ContentBlock::Other("[hologram]".to_owned())),
        ),
    ];
    for (update, expected) in cases {
        assert_eq!(decode_update(&update), Ok(expected), "{update}");
    }
}

#[test]
fn tool_calls_keep_content_and_ignore_unknown_members() {
    let update = json!({
        "sessionUpdate": "tool_call",
        "toolCallId": "t1",
        "title": "Edit",
        "kind": "edit",
        "status": "pending",
        "locations": [{"path": "/a", "line": 3}],
        "rawInput": {"x": 1.5e300},
        "_meta": {"vendor": true},
        "futureMember": [1, 2, 3],
        "content": [
            {"type": "diff", "path": "/a", "oldText": null, "newText": "n"},
            {"type": "terminal", "terminalId": "term-1"},
            {"type": "content", "content": {"type": "text", "text": "done"}},
            {"type": "future_content"}
        ]
    });
    let SessionUpdate::ToolCall(call) = decode_update(&update).unwrap() else {
        panic!("not a tool call");
    };
    assert_eq!(call.tool_call_id, "t1");
    assert_eq!(call.raw_input, Some(json!({"x": 1.5e300})));
    assert_eq!(
        call.content.unwrap(),
        vec![
            ToolCallContent::Diff {
                path: "/a".to_owned(),
                old_text: None,
                new_text: "n".to_owned(),
                disk: OnDisk::Unread,
            },
            ToolCallContent::Terminal("term-1".to_owned()),
            ToolCallContent::Content(ContentBlock::Text("done".to_owned())),
            ToolCallContent::Other("future_content".to_owned()),
        ]
    );
    let patch = json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed", "title": null});
    let SessionUpdate::ToolCallUpdate(patch) = decode_update(&patch).unwrap() else {
        panic!("not an update");
    };
    assert_eq!(patch.status.as_deref(), Some("completed"));
    assert_eq!(patch.title, None);
    assert_eq!(patch.content, None);
}

#[test]
fn bookkeeping_and_unknown_variants_are_ignored_and_broken_known_ones_are_errors() {
    assert_eq!(
        decode_update(&json!({"sessionUpdate": "session_info_update", "title": "x"})),
        Ok(SessionUpdate::Ignored("session_info_update".to_owned()))
    );
    assert_eq!(
        decode_update(&json!({"sessionUpdate": "something_from_v3", "used": 1})),
        Ok(SessionUpdate::Extra(Extra::Unknown("something_from_v3".to_owned())))
    );
    assert!(decode_update(&json!({"sessionUpdate": "usage_update", "used": 1})).is_err());
    assert!(decode_update(&json!({"sessionUpdate": "notice", "severity": "info"})).is_err());
    assert!(decode_update(&json!({"sessionUpdate": "tool_call", "title": "no id"})).is_err());
    assert!(decode_update(&json!({"sessionUpdate": "current_mode_update"})).is_err());
    assert!(decode_update(&json!({"sessionUpdate": "config_option_update"})).is_err());
    assert!(
        decode_update(
            &json!({"sessionUpdate": "available_commands_update", "availableCommands": [{}]})
        )
        .is_err()
    );
    assert!(decode_update(&json!({"sessionUpdate": "agent_message_chunk"})).is_err());
    assert!(decode_update(&json!({"sessionUpdate": 3})).is_err());
    assert!(decode_update(&json!("text")).is_err());
}

#[test]
fn plans_decode_with_optional_members() {
    let update = json!({"sessionUpdate": "plan", "entries": [
        {"content": "a", "priority": "high", "status": "completed"},
        {"content": "b"}
    ]});
    let SessionUpdate::Plan(entries) = decode_update(&update).unwrap() else {
        panic!("not a plan");
    };
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[1].status, None);
}

#[test]
fn params_decode_with_numbers_and_nulls_under_arbitrary_precision() {
    let read: ReadTextFileParams =
        decode(Some(&json!({"sessionId": "s", "path": "/a", "line": 2, "limit": null}))).unwrap();
    assert_eq!((read.line, read.limit), (Some(2), None));
    let create: CreateTerminalParams = decode(Some(&json!({
        "sessionId": "s", "command": "ls", "args": null, "env": [{"name": "A", "value": "b"}],
        "outputByteLimit": 1000
    })))
    .unwrap();
    assert_eq!(create.output_byte_limit, Some(1000));
    assert_eq!(create.args, None);
    assert!(
        decode::<ReadTextFileParams>(Some(&json!({"sessionId": "s", "path": "/a", "line": -1})))
            .is_err()
    );
    assert!(decode::<ReadTextFileParams>(None).is_err());
}

#[test]
fn modes_options_and_commands_decode() {
    assert_eq!(
        decode_update(&json!({"sessionUpdate": "current_mode_update", "currentModeId": "plan"})),
        Ok(SessionUpdate::CurrentMode("plan".to_owned()))
    );
    let update = json!({"sessionUpdate": "available_commands_update", "availableCommands": [
        {"name": "review", "description": "Review", "input": {"hint": "what"}},
        {"name": "web", "description": "Search"}
    ]});
    let SessionUpdate::Commands(commands) = decode_update(&update).unwrap() else {
        panic!("not commands");
    };
    assert_eq!(commands[0].hint.as_deref(), Some("what"));
    assert_eq!(commands[1].hint, None);
    let update = json!({"sessionUpdate": "config_option_update", "configOptions": [
        {"id": "m", "name": "Model", "type": "select", "currentValue": "a",
         "options": [{"value": "a", "name": "A"}, {"group": "g", "name": "G", "options": [{"value": "b", "name": "B"}]}]},
        {"id": "t", "name": "Think", "type": "boolean", "currentValue": true},
        {"id": "x", "name": "X", "type": "slider", "currentValue": 3}
    ]});
    let SessionUpdate::ConfigOptions(options) = decode_update(&update).unwrap() else {
        panic!("not options");
    };
    let ConfigValue::Select { current, choices } = &options[0].value else {
        panic!("not a select");
    };
    assert_eq!(current, "a");
    assert_eq!(choices.iter().map(|choice| choice.value.as_str()).collect::<Vec<_>>(), ["a", "b"]);
    assert_eq!(options[1].value, ConfigValue::Boolean(true));
    assert_eq!(options[2].value, ConfigValue::Unknown("slider".to_owned()));
    assert_eq!(
        Capabilities::of(Some(
            &json!({"loadSession": true, "sessionCapabilities": {"list": {}, "close": null}})
        )),
        Capabilities {
            load: true,
            list: true,
            resume: false,
            close: false,
            embedded_context: false
        }
    );
    assert!(
        Capabilities::of(Some(&json!({"promptCapabilities": {"embeddedContext": true}})))
            .embedded_context
    );
}

#[test]
fn usage_notices_and_compactions_decode() {
    let usage = json!({"sessionUpdate": "usage_update", "used": 1200, "size": 200_000,
                       "cost": {"amount": 0.25, "currency": "USD"}});
    assert_eq!(
        decode_update(&usage),
        Ok(SessionUpdate::Extra(Extra::Usage(Usage {
            used: 1200,
            size: 200_000,
            cost: Some((0.25, "USD".to_owned()))
        })))
    );
    let notice = json!({"sessionUpdate": "notice", "severity": "warning", "title": "Rate limited"});
    assert_eq!(
        decode_update(&notice),
        Ok(SessionUpdate::Extra(Extra::Notice {
            severity: "warning".to_owned(),
            title: "Rate limited".to_owned(),
            description: None
        }))
    );
    let compaction = json!({"sessionUpdate": "compaction_update", "compactionId": "c1",
                            "status": "failed", "error": "too big"});
    assert_eq!(
        decode_update(&compaction),
        Ok(SessionUpdate::Extra(Extra::Compaction {
            id: "c1".to_owned(),
            status: "failed".to_owned(),
            error: Some("too big".to_owned())
        }))
    );
    let chunk = json!({"sessionUpdate": "compaction_summary_chunk", "compactionId": "c1",
                       "content": {"type": "text", "text": "so far"}});
    assert_eq!(
        decode_update(&chunk),
        Ok(SessionUpdate::Extra(Extra::CompactionSummary("c1".to_owned())))
    );
}
