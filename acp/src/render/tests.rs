//! Tests of the transcript rendering of every `session/update` variant.

use serde_json::json;

use super::{Piece, Renderer, diff, stop_line};
use crate::messages::decode_update;

fn render(renderer: &mut Renderer, update: &serde_json::Value) -> Vec<Piece> {
    let update = decode_update(update).unwrap();
    let attach = |id: &str| {
        (id == "term-1").then(|| "tmux: tmux -L termsprawl-acp attach -t acp-1-1".to_owned())
    };
    renderer.update(&update, &attach)
}

fn line(text: &str) -> Piece {
    Piece::Line(text.to_owned())
}

fn tool(id: &str, text: &str) -> Piece {
    Piece::Tool(id.to_owned(), text.to_owned())
}

#[test]
fn chunks_stream_and_thoughts_are_dim() {
    let mut renderer = Renderer::default();
    assert_eq!(
        render(
            &mut renderer,
            &json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hel"}})
        ),
        vec![Piece::Text("Hel".to_owned())]
    );
    assert_eq!(
        render(
            &mut renderer,
            &json!({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "hmm"}})
        ),
        vec![Piece::Dim("hmm".to_owned())]
    );
    assert_eq!(
        render(
            &mut renderer,
            &json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": ""}})
        ),
        vec![Piece::Text(String::new())]
    );
    for ignored in ["usage_update", "session_info_update", "from_the_future"] {
        assert_eq!(render(&mut renderer, &json!({"sessionUpdate": ignored})), vec![]);
    }
}

#[test]
fn tool_calls_are_one_line_each_and_patches_merge() {
    let mut renderer = Renderer::default();
    let pieces = render(
        &mut renderer,
        &json!({
            "sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Run tests", "kind": "execute", "status": "pending",
            "content": [{"type": "terminal", "terminalId": "term-1"}, {"type": "terminal", "terminalId": "term-9"}]
        }),
    );
    assert_eq!(
        pieces,
        vec![
            tool("t1", "[tool] Run tests (execute, pending)"),
            line("  terminal term-1 runs in tmux: tmux -L termsprawl-acp attach -t acp-1-1"),
            line("  terminal term-9"),
        ]
    );
    let pieces = render(
        &mut renderer,
        &json!({
            "sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "in_progress",
            "content": [{"type": "terminal", "terminalId": "term-1"}, {"type": "terminal", "terminalId": "term-9"}]
        }),
    );
    assert_eq!(
        pieces,
        vec![tool("t1", "[tool] Run tests (execute, in_progress)")],
        "same content is not repeated"
    );
    let pieces = render(
        &mut renderer,
        &json!({
            "sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed", "title": "Ran tests",
            "content": [{"type": "content", "content": {"type": "text", "text": "ok\n2 passed"}}]
        }),
    );
    assert_eq!(
        pieces,
        vec![tool("t1", "[tool] Ran tests (execute, completed)"), line("  ok"), line("  2 passed")]
    );
    let pieces = render(
        &mut renderer,
        &json!({"sessionUpdate": "tool_call_update", "toolCallId": "unseen"}),
    );
    assert_eq!(pieces, vec![tool("unseen", "[tool] unseen (other, pending)")]);
}

#[test]
fn unfinished_tool_calls_are_marked_cancelled() {
    let mut renderer = Renderer::default();
    render(
        &mut renderer,
        &json!({"sessionUpdate": "tool_call", "toolCallId": "a", "title": "A", "status": "completed"}),
    );
    render(
        &mut renderer,
        &json!({"sessionUpdate": "tool_call", "toolCallId": "b", "title": "B", "kind": "fetch", "status": "in_progress"}),
    );
    assert_eq!(renderer.cancel_unfinished(), vec![tool("b", "[tool] B (fetch, cancelled)")]);
    renderer.end_turn();
    assert_eq!(renderer.cancel_unfinished(), vec![]);
}

#[test]
fn plans_are_lists_and_diffs_are_unified() {
    let mut renderer = Renderer::default();
    let pieces = render(
        &mut renderer,
        &json!({"sessionUpdate": "plan", "entries": [
            {"content": "Read", "priority": "high", "status": "completed"},
            {"content": "Write", "priority": "low", "status": "pending"}
        ]}),
    );
    assert_eq!(
        pieces,
        vec![line("[plan] 1/2 done"), line("  [x] Read (high)"), line("  [ ] Write (low)")]
    );
    assert_eq!(
        diff("/w/a.txt", Some("one\ntwo\n"), "one\nzwei\n"),
        "--- a/w/a.txt\n+++ b/w/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+zwei"
    );
    assert_eq!(
        diff("/w/new.txt", None, "hi\n"),
        "--- /dev/null\n+++ b/w/new.txt\n@@ -0,0 +1 @@\n+hi"
    );
    assert_eq!(diff("/w/same", Some("x\n"), "x\n"), "  (no changes to /w/same)");
    assert_eq!(stop_line("end_turn"), "[stop reason: end_turn]");
}

#[test]
fn a_replayed_user_message_is_marked_and_the_agents_answer_starts_a_fresh_line() {
    let mut renderer = Renderer::default();
    let user =
        json!({"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "hi "}});
    let more = json!({"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "there"}});
    let agent = json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hello"}});
    assert_eq!(render(&mut renderer, &user), vec![Piece::Fresh("[you] hi ".to_owned())]);
    assert_eq!(render(&mut renderer, &more), vec![Piece::Text("there".to_owned())]);
    assert_eq!(render(&mut renderer, &agent), vec![Piece::Fresh("hello".to_owned())]);
    assert_eq!(render(&mut renderer, &agent), vec![Piece::Text("hello".to_owned())]);
}

#[test]
fn a_patch_that_changes_nothing_shown_prints_nothing() {
    let mut renderer = Renderer::default();
    let call = json!({"sessionUpdate": "tool_call", "toolCallId": "t", "title": "Terminal", "status": "pending"});
    let same = json!({"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "pending"});
    assert_eq!(render(&mut renderer, &call), vec![tool("t", "[tool] Terminal (other, pending)")]);
    assert_eq!(render(&mut renderer, &same), vec![]);
    assert_eq!(render(&mut renderer, &call), vec![]);
    let done =
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "completed"});
    assert_eq!(render(&mut renderer, &done), vec![tool("t", "[tool] Terminal (other, completed)")]);
    assert_eq!(render(&mut renderer, &done), vec![]);
}

#[test]
fn a_long_result_is_shortened_and_kept_whole_for_last() {
    let mut renderer = Renderer::default();
    let text = (1..=20).map(|n| format!("line {n}")).collect::<Vec<_>>().join("\n") + "\n";
    let update = json!({"sessionUpdate": "tool_call", "toolCallId": "t", "title": "Read", "status": "completed",
        "content": [{"type": "content", "content": {"type": "text", "text": text}}]});
    let pieces = render(&mut renderer, &update);
    assert_eq!(pieces.len(), 1 + 5 + 1, "{pieces:?}");
    assert_eq!(pieces[5], line("  line 5"));
    assert_eq!(pieces[6], line("  (… 15 more lines; /last shows the whole result)"));
    assert_eq!(renderer.last_result(), Some(text.as_str()));
    let wide = "x".repeat(500);
    let update = json!({"sessionUpdate": "tool_call", "toolCallId": "u", "title": "Fetch", "status": "completed",
        "content": [{"type": "content", "content": {"type": "text", "text": wide}}]});
    let pieces = render(&mut renderer, &update);
    assert_eq!(pieces[1], line(&format!("  {}…", "x".repeat(160))));
    assert_eq!(pieces[2], line("  (shortened; /last shows the whole result)"));
    assert_eq!(renderer.last_result(), Some(wide.as_str()));
}
