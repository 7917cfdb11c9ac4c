//! Tests of the agent-to-client requests: dispatch, error codes, permission asks and
//! `$/cancel_request`, answered on the connection's outgoing lines.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::{Client, Config, Event};
use crate::change::OnDisk;
use crate::connection::{Connection, Inbound};
use crate::fs::Roots;
use crate::messages::{ContentBlock, Extra, SessionUpdate, ToolCallContent};
use crate::options::PermissionMode;
use crate::terminal::{Backend, Server, Terminals};

struct Fixture {
    directory: tempfile::TempDir,
    client: Client,
    lines: mpsc::UnboundedReceiver<String>,
    events: mpsc::UnboundedReceiver<Event>,
}

fn fixture(permission: PermissionMode, timeout: Duration) -> Fixture {
    let directory = tempfile::tempdir().unwrap();
    let (connection, lines) = Connection::new(None);
    let (sender, events) = mpsc::unbounded_channel();
    let terminals = Terminals::new(
        Server::Socket(directory.path().join("tmux.sock")),
        directory.path().to_path_buf(),
    )
    .unwrap();
    let config = Config {
        progress: false,
        roots: Roots::new(directory.path()).unwrap(),
        terminals: Arc::new(Backend::Tmux(terminals)),
        permission,
        permission_timeout: timeout,
    };
    let client = Client::new(connection, config, sender);
    client.set_session("s1");
    Fixture { directory, client, lines, events }
}

impl Fixture {
    fn request(&self, id: Value, method: &str, params: Value) {
        self.client.dispatch(Inbound::Request {
            id,
            method: method.to_owned(),
            params: Some(params),
        });
    }

    async fn answer(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.lines.recv())
            .await
            .expect("no answer in time")
            .unwrap();
        serde_json::from_str(&line).unwrap()
    }

    async fn event(&mut self) -> Event {
        tokio::time::timeout(Duration::from_secs(10), self.events.recv())
            .await
            .expect("no event in time")
            .unwrap()
    }
}

fn permission_params(options: &Value) -> Value {
    json!({
        "sessionId": "s1",
        "toolCall": {"toolCallId": "t", "title": "Do it", "kind": "execute"},
        "options": options,
    })
}

fn two_options() -> Value {
    json!([
        {"optionId": "yes", "name": "Yes", "kind": "allow_once"},
        {"optionId": "no", "name": "No", "kind": "reject_once"}
    ])
}

#[tokio::test]
async fn unknown_and_unadvertised_methods_are_method_not_found() {
    let mut f = fixture(PermissionMode::Ask, Duration::from_secs(5));
    for (index, method) in ["session/load", "_vendor/x", "fs/delete"].iter().enumerate() {
        f.request(json!(index), method, json!({}));
        let answer = f.answer().await;
        assert_eq!(answer["id"], json!(index));
        assert_eq!(answer["error"]["code"], -32601, "{method}");
    }
}

#[tokio::test]
async fn an_elicitation_goes_to_the_chat_and_its_answer_back() {
    let mut f = fixture(PermissionMode::Ask, Duration::from_millis(300));
    let form = json!({"sessionId": "s1", "mode": "form", "message": "Name?", "requestedSchema":
                      {"type": "object", "properties": {"name": {"type": "string"}}}});
    f.request(json!(1), "elicitation/create", form.clone());
    let Event::Elicit(elicit) = f.event().await else { panic!("expected an elicitation") };
    assert_eq!(elicit.request.message, "Name?");
    elicit.reply.send(json!({"action": "accept", "content": {"name": "Ada"}})).unwrap();
    assert_eq!(f.answer().await["result"], json!({"action": "accept", "content": {"name": "Ada"}}));
    // Dropped by the chat (a cancelled turn, no terminal): cancel.
    f.request(json!(2), "elicitation/create", form.clone());
    let Event::Elicit(elicit) = f.event().await else { panic!("expected an elicitation") };
    drop(elicit);
    assert_eq!(f.answer().await["result"], json!({"action": "cancel"}));
    // Nobody answers within the timeout: cancel.
    f.request(json!(3), "elicitation/create", form);
    let _waiting = f.event().await;
    assert_eq!(f.answer().await["result"], json!({"action": "cancel"}));
    // A mode this client does not know: declined, and said.
    f.request(
        json!(4),
        "elicitation/create",
        json!({"sessionId": "s1", "mode": "_x", "message": "?"}),
    );
    assert!(matches!(f.event().await, Event::Line(line) if line.contains("declined")));
    assert_eq!(f.answer().await["result"], json!({"action": "decline"}));
    // Another session's: invalid params.
    f.request(
        json!(5),
        "elicitation/create",
        json!({"sessionId": "s2", "mode": "url", "message": "?"}),
    );
    assert_eq!(f.answer().await["error"]["code"], -32602);
    // Its completion is one line.
    f.client.dispatch(Inbound::Notification {
        method: "elicitation/complete".to_owned(),
        params: Some(json!({"elicitationId": "e1"})),
    });
    assert!(
        matches!(f.event().await, Event::Line(line) if line == "[elicitation] the agent says e1 is complete")
    );
}

#[tokio::test]
async fn bad_params_and_other_sessions_are_invalid_params() {
    let mut f = fixture(PermissionMode::Ask, Duration::from_secs(5));
    let path = f.directory.path().join("x.txt");
    let cases = [
        ("fs/read_text_file", json!({"sessionId": "s1"})),
        ("fs/read_text_file", json!({"sessionId": "other", "path": path})),
        ("fs/write_text_file", json!({"sessionId": "s1", "path": path})),
        ("terminal/create", json!({"sessionId": "s1"})),
        ("terminal/output", json!({"sessionId": "s1", "terminalId": "term-1"})),
        ("terminal/release", json!({"sessionId": "s2", "terminalId": "term-1"})),
        ("session/request_permission", json!({"sessionId": "s1", "toolCall": {}})),
        (
            "session/request_permission",
            json!({"sessionId": "s2", "toolCall": {"toolCallId": "t"}, "options": []}),
        ),
    ];
    for (method, params) in cases {
        f.request(json!("id"), method, params.clone());
        let answer = f.answer().await;
        assert_eq!(answer["error"]["code"], -32602, "{method} {params}");
    }
}

#[tokio::test]
async fn files_are_written_read_and_reported() {
    let mut f = fixture(PermissionMode::Ask, Duration::from_secs(5));
    let path = f.directory.path().join("dir/a.txt");
    f.request(
        json!(1),
        "fs/write_text_file",
        json!({"sessionId": "s1", "path": path, "content": "a\nb\n"}),
    );
    assert_eq!(f.answer().await, json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    let Event::Wrote(written) = f.event().await else {
        panic!("expected a write notice");
    };
    assert!(written.created);
    f.request(json!(2), "fs/read_text_file", json!({"sessionId": "s1", "path": path, "line": 2}));
    assert_eq!(f.answer().await["result"], json!({"content": "b\n"}));
}

#[tokio::test]
async fn policies_answer_without_asking_and_say_so() {
    let mut f = fixture(PermissionMode::Deny, Duration::from_secs(5));
    f.request(json!(1), "session/request_permission", permission_params(&two_options()));
    assert_eq!(
        f.answer().await["result"],
        json!({"outcome": {"outcome": "selected", "optionId": "no"}})
    );
    let Event::Decided(line, tool_call) = f.event().await else {
        panic!("expected a decision");
    };
    assert_eq!(line, "[permission] Do it: selected \"No\" by the policy");
    assert_eq!(tool_call.tool_call_id, "t");
    f.request(json!(2), "session/request_permission", permission_params(&json!([])));
    assert_eq!(f.answer().await["result"], json!({"outcome": {"outcome": "cancelled"}}));
}

#[tokio::test]
async fn an_ask_is_selected_only_with_an_offered_option() {
    let mut f = fixture(PermissionMode::Ask, Duration::from_secs(30));
    f.request(json!(1), "session/request_permission", permission_params(&two_options()));
    let Event::Ask(ask) = f.event().await else {
        panic!("expected an ask");
    };
    ask.reply.send("yes".to_owned()).unwrap();
    assert_eq!(
        f.answer().await["result"],
        json!({"outcome": {"outcome": "selected", "optionId": "yes"}})
    );
    f.request(json!(2), "session/request_permission", permission_params(&two_options()));
    let Event::Ask(ask) = f.event().await else {
        panic!("expected an ask");
    };
    ask.reply.send("not-offered".to_owned()).unwrap();
    assert_eq!(f.answer().await["result"], json!({"outcome": {"outcome": "cancelled"}}));
    f.request(json!(3), "session/request_permission", permission_params(&two_options()));
    let Event::Ask(ask) = f.event().await else {
        panic!("expected an ask");
    };
    drop(ask);
    assert_eq!(f.answer().await["result"], json!({"outcome": {"outcome": "cancelled"}}));
}

#[tokio::test]
async fn an_unanswered_ask_is_cancelled_after_the_timeout() {
    let mut f = fixture(PermissionMode::Ask, Duration::from_millis(300));
    f.request(json!(1), "session/request_permission", permission_params(&two_options()));
    let Event::Ask(ask) = f.event().await else {
        panic!("expected an ask");
    };
    assert_eq!(f.answer().await["result"], json!({"outcome": {"outcome": "cancelled"}}));
    assert!(ask.reply.is_closed());
}

#[tokio::test]
async fn cancel_request_answers_minus_32800_or_a_cancelled_ask() {
    let mut f = fixture(PermissionMode::Ask, Duration::from_mins(1));
    f.request(json!("p"), "session/request_permission", permission_params(&two_options()));
    let Event::Ask(ask) = f.event().await else {
        panic!("expected an ask");
    };
    f.client.dispatch(Inbound::Notification {
        method: "$/cancel_request".to_owned(),
        params: Some(json!({"requestId": "p"})),
    });
    assert_eq!(
        f.answer().await,
        json!({"jsonrpc": "2.0", "id": "p", "result": {"outcome": {"outcome": "cancelled"}}})
    );
    assert!(ask.reply.is_closed());
    f.request(json!(7), "terminal/create", json!({"sessionId": "s1", "command": "sleep 300"}));
    let terminal_id = f.answer().await["result"]["terminalId"].as_str().unwrap().to_owned();
    f.request(
        json!(8),
        "terminal/wait_for_exit",
        json!({"sessionId": "s1", "terminalId": terminal_id}),
    );
    f.client.dispatch(Inbound::Notification {
        method: "$/cancel_request".to_owned(),
        params: Some(json!({"requestId": 8})),
    });
    let answer = f.answer().await;
    assert_eq!((answer["id"].clone(), answer["error"]["code"].clone()), (json!(8), json!(-32800)));
    f.request(json!(9), "terminal/release", json!({"sessionId": "s1", "terminalId": terminal_id}));
    let answer = f.answer().await;
    assert_eq!(answer["result"], json!({}), "{answer}");
    f.client.inner.config.terminals.shutdown().await;
    let _ = std::process::Command::new("tmux")
        .arg("-S")
        .arg(f.directory.path().join("tmux.sock"))
        .arg("kill-server")
        .output();
}

#[tokio::test]
async fn updates_of_our_session_reach_the_chat_and_others_are_skipped() {
    let mut f = fixture(PermissionMode::Ask, Duration::from_secs(5));
    let notify = |params: Value| Inbound::Notification {
        method: "session/update".to_owned(),
        params: Some(params),
    };
    f.client.dispatch(notify(json!({"sessionId": "s1", "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}})));
    f.client.dispatch(notify(json!({"sessionId": "s2", "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}})));
    f.client.dispatch(notify(json!({"update": {}})));
    f.client.dispatch(notify(json!({"sessionId": "s1", "update": {"sessionUpdate": "tool_call"}})));
    f.client.dispatch(notify(json!({"sessionId": "s1", "update": {"sessionUpdate": "brand_new"}})));
    f.client.dispatch(Inbound::Notification { method: "_vendor/ping".to_owned(), params: None });
    assert!(matches!(f.event().await, Event::Update(SessionUpdate::AgentMessage(_))));
    for _ in 0..3 {
        assert!(matches!(f.event().await, Event::Notice(_)));
    }
    assert!(matches!(
        f.event().await,
        Event::Update(SessionUpdate::Extra(Extra::Unknown(name))) if name == "brand_new"
    ));
    assert!(f.events.try_recv().is_err());
    assert!(f.lines.try_recv().is_err(), "notifications are never answered");
}

/// Issue 16 item 1: an update that arrives before the session id is known (the agent wrote its
/// `session/new` answer and the update in one write) is delivered once the id is set, in order.
#[tokio::test]
async fn updates_before_the_session_id_is_known_wait_for_it() {
    let directory = tempfile::tempdir().unwrap();
    let (connection, _lines) = Connection::new(None);
    let (sender, mut events) = mpsc::unbounded_channel();
    let terminals =
        Terminals::new(Server::Socket(directory.path().join("t.sock")), directory.path().into())
            .unwrap();
    let config = Config {
        progress: false,
        roots: Roots::new(directory.path()).unwrap(),
        terminals: Arc::new(Backend::Tmux(terminals)),
        permission: PermissionMode::Ask,
        permission_timeout: Duration::from_secs(5),
    };
    let client = Client::new(connection, config, sender);
    let chunk = |session: &str, text: &str| Inbound::Notification {
        method: "session/update".to_owned(),
        params: Some(
            json!({"sessionId": session, "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}}),
        ),
    };
    client.dispatch(chunk("new-1", "first"));
    client.dispatch(chunk("other", "not ours"));
    client.dispatch(chunk("new-1", "second"));
    assert!(events.try_recv().is_err(), "nothing is decided before the id is known");
    client.set_session("new-1");
    client.dispatch(chunk("new-1", "third"));
    let text = |event: Event| match event {
        Event::Update(SessionUpdate::AgentMessage(ContentBlock::Text(text))) => text,
        other => panic!("not a message chunk: {other:?}"),
    };
    assert_eq!(text(events.recv().await.unwrap()), "first");
    assert!(
        matches!(events.recv().await.unwrap(), Event::Notice(notice) if notice.contains("another session: other"))
    );
    assert_eq!(text(events.recv().await.unwrap()), "second");
    assert_eq!(text(events.recv().await.unwrap()), "third");
}

/// The file a `diff` item names is read when the item arrives, before a later write changes it:
/// in an update on delivery, in a permission ask when the ask arrives.
#[tokio::test]
async fn diffs_see_the_file_as_it_was_when_they_arrived() {
    let mut f = fixture(PermissionMode::AllowOnce, Duration::from_secs(5));
    let path = f.directory.path().join("notes.md");
    std::fs::write(&path, "old\n").unwrap();
    let diff = |path: &std::path::Path| json!([{"type": "diff", "path": path, "newText": "new\n"}]);
    f.client.dispatch(Inbound::Notification {
        method: "session/update".to_owned(),
        params: Some(json!({"sessionId": "s1", "update": {
            "sessionUpdate": "tool_call", "toolCallId": "t", "title": "Write",
            "content": diff(&path)}})),
    });
    std::fs::write(&path, "changed later\n").unwrap();
    let Event::Update(SessionUpdate::ToolCall(call)) = f.event().await else {
        panic!("expected the tool call");
    };
    let disks: Vec<OnDisk> = call
        .content
        .unwrap()
        .into_iter()
        .filter_map(|item| match item {
            ToolCallContent::Diff { disk, .. } => Some(disk),
            _ => None,
        })
        .collect();
    assert_eq!(disks, [OnDisk::Text("old\n".to_owned())]);
    let missing = f.directory.path().join("new.txt");
    let mut params = permission_params(&two_options());
    params["toolCall"]["content"] = diff(&missing);
    f.request(json!(1), "session/request_permission", params);
    assert_eq!(
        f.answer().await["result"],
        json!({"outcome": {"outcome": "selected", "optionId": "yes"}})
    );
    let Event::Decided(_, tool_call) = f.event().await else {
        panic!("expected a decision");
    };
    let Some(ToolCallContent::Diff { disk, .. }) = tool_call.content.unwrap().pop() else {
        panic!("no diff");
    };
    assert_eq!(disk, OnDisk::Missing);
}
