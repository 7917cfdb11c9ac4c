//! Tests of the transcript rendering of every `session/update` variant.

use serde_json::json;

use super::{Piece, Renderer, Voice, stop_line, turn_rule};
use crate::change::{OnDisk, resolve};
use crate::messages::{SessionUpdate, ToolCallContent, ToolCallUpdate, decode, decode_update};
use crate::style::{Row, Span, Style};

fn render(renderer: &mut Renderer, update: &serde_json::Value) -> Vec<Piece> {
    let update = decode_update(update).unwrap();
    let attach = |id: &str| {
        (id == "term-1").then(|| "tmux: tmux -L termsprawl-acp attach -t acp-1-1".to_owned())
    };
    plain(renderer.update(&update, &attach))
}

/// The pieces with their styles left out: a styled line as a [`Piece::Line`], a tool's line as
/// one plain span.
fn plain(pieces: Vec<Piece>) -> Vec<Piece> {
    let text = |row: &Row| row.iter().map(|span| span.text.as_str()).collect::<String>();
    pieces
        .into_iter()
        .map(|piece| match piece {
            Piece::Styled(row) => Piece::Line(text(&row)),
            Piece::Tool(id, row) => Piece::Tool(id, vec![Span::plain(text(&row))]),
            piece => piece,
        })
        .collect()
}

fn line(text: &str) -> Piece {
    Piece::Line(text.to_owned())
}

fn tool(id: &str, text: &str) -> Piece {
    Piece::Tool(id.to_owned(), vec![Span::plain(text)])
}

#[test]
fn tool_lines_and_plans_carry_their_states_colours() {
    let mut renderer = Renderer::default();
    let update = decode_update(&json!({
        "sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Run", "kind": "execute", "status": "failed"
    }))
    .unwrap();
    let pieces = renderer.update(&update, &|_: &str| None);
    let Piece::Tool(_, row) = &pieces[0] else { panic!("{pieces:?}") };
    assert_eq!(row[0], Span::new(Style::ToolFailed, "[tool]"));
    assert_eq!(row[3], Span::new(Style::ToolFailed, "failed"));
    assert_eq!(renderer.doing(), None);
    let update = decode_update(&json!({
        "sessionUpdate": "plan", "entries": [
            {"content": "a", "priority": "high", "status": "completed"},
            {"content": "b", "priority": "low", "status": "in_progress"}
        ]
    }))
    .unwrap();
    let pieces = renderer.update(&update, &|_: &str| None);
    let Piece::Styled(row) = &pieces[2] else { panic!("{pieces:?}") };
    assert_eq!(row[1], Span::new(Style::PlanActive, "[~]"));
    assert_eq!(renderer.doing(), Some("planning"));
    let update = decode_update(&json!({
        "sessionUpdate": "tool_call", "toolCallId": "t2", "title": "Read a", "status": "in_progress"
    }))
    .unwrap();
    renderer.update(&update, &|_: &str| None);
    assert_eq!(renderer.doing(), Some("running Read a"));
    renderer.end_turn();
    assert_eq!(renderer.doing(), None);
}

#[test]
fn a_normal_end_has_no_stop_line_and_every_turn_ends_with_a_rule() {
    assert_eq!(stop_line("end_turn"), None);
    assert_eq!(stop_line("max_tokens").as_deref(), Some("[stop reason: max_tokens]"));
    let rule = turn_rule(std::time::Duration::from_millis(2400), 20);
    assert_eq!(rule, vec![Span::new(Style::Frame, "─── 2.4 s ──────────")]);
    let rule = turn_rule(std::time::Duration::from_secs(125), 10);
    assert_eq!(rule[0].text, "─── 2 min 05 s ───");
}

#[test]
fn chunks_stream_and_thoughts_are_dim() {
    let mut renderer = Renderer::default();
    assert_eq!(
        render(
            &mut renderer,
            &json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hel"}})
        ),
        vec![Piece::Text(Voice::Agent, "Hel".to_owned())]
    );
    assert_eq!(
        render(
            &mut renderer,
            &json!({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "hmm"}})
        ),
        vec![Piece::Text(Voice::Thought, "hmm".to_owned())]
    );
    assert_eq!(
        render(
            &mut renderer,
            &json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": ""}})
        ),
        vec![Piece::Text(Voice::Agent, String::new())]
    );
    // These show nothing here: the chat shows usage and unknown variants (`crate::extras`).
    for ignored in ["session_info_update", "from_the_future"] {
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
    assert_eq!(plain(renderer.cancel_unfinished()), vec![tool("b", "[tool] B (fetch, cancelled)")]);
    renderer.end_turn();
    assert_eq!(renderer.cancel_unfinished(), vec![]);
}

#[test]
fn plans_are_lists() {
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
}

/// An update whose `diff` items see `disk` (as the client reads it on delivery).
fn with_disk(update: &serde_json::Value, disk: &OnDisk) -> SessionUpdate {
    let mut update = decode_update(update).unwrap();
    if let SessionUpdate::ToolCall(crate::messages::ToolCall { content, .. })
    | SessionUpdate::ToolCallUpdate(ToolCallUpdate { content, .. }) = &mut update
    {
        for item in content.iter_mut().flatten() {
            if let ToolCallContent::Diff { disk: seen, .. } = item {
                seen.clone_from(disk);
            }
        }
    }
    update
}

fn titles(pieces: &[Piece]) -> Vec<String> {
    pieces
        .iter()
        .filter_map(|piece| match piece {
            Piece::Diff(lines) => Some(lines[0].text.clone()),
            _ => None,
        })
        .collect()
}

/// fast-agent: the diff with no old text, the ask with only the tool call's id, the diff again
/// with the true old text, then the write: the change is drawn once, against the file.
#[test]
fn a_change_is_drawn_once_however_often_the_agent_repeats_it() {
    let mut renderer = Renderer::default();
    let attach = |_: &str| None;
    let old = "# Notes\nfirst\nsecond\n";
    let new = "# Notes\nnew 1\nnew 2\nnew 3\n";
    let disk = OnDisk::Text(old.to_owned());
    let first = with_disk(
        &json!({"sessionUpdate": "tool_call_update", "toolCallId": "w",
            "content": [{"type": "diff", "path": "/w/notes.md", "newText": new}]}),
        &disk,
    );
    let pieces = renderer.update(&first, &attach);
    assert_eq!(titles(&pieces), ["[diff] /w/notes.md (2 lines removed, 3 added)"]);
    let Piece::Diff(lines) = &pieces[1] else { panic!("{pieces:?}") };
    assert_eq!(lines, &resolve("/w/notes.md", None, new, &disk).lines());
    assert!(lines.iter().any(|line| line.text == "  2   - first"), "{lines:?}");
    let ask: ToolCallUpdate = decode(Some(&json!({"toolCallId": "w"}))).unwrap();
    assert_eq!(
        titles(&renderer.ask_changes(&ask)),
        ["[diff] /w/notes.md: shown above (2 lines removed, 3 added)"]
    );
    let again = with_disk(
        &json!({"sessionUpdate": "tool_call_update", "toolCallId": "w",
            "content": [{"type": "diff", "path": "/w/notes.md", "oldText": old, "newText": new}]}),
        &disk,
    );
    assert_eq!(titles(&renderer.update(&again, &attach)), Vec::<String>::new());
    assert_eq!(renderer.written("/w/notes.md", Some(old), new), vec![]);
    // The same claim once the file holds it (a completed update) is not drawn again either.
    let done = with_disk(
        &json!({"sessionUpdate": "tool_call_update", "toolCallId": "w", "status": "completed",
            "content": [{"type": "diff", "path": "/w/notes.md", "newText": new}]}),
        &OnDisk::Text(new.to_owned()),
    );
    assert_eq!(titles(&renderer.update(&done, &attach)), Vec::<String>::new());
    // A write nobody announced is drawn; the next turn starts afresh.
    assert_eq!(
        titles(&renderer.written("/w/b.txt", None, "x\n")),
        ["[diff] /w/b.txt (new file, 1 line)"]
    );
    renderer.end_turn();
    assert_eq!(titles(&renderer.update(&first, &attach)).len(), 1);
}

/// An ask that carries its own diff draws it (against the file when it arrived) unless it was
/// drawn; a changed file makes it a new change.
#[test]
fn an_ask_draws_its_own_changes_and_says_when_they_are_above() {
    let mut renderer = Renderer::default();
    let attach = |_: &str| None;
    let ask = |disk: &OnDisk| {
        let SessionUpdate::ToolCallUpdate(ask) = with_disk(
            &json!({"sessionUpdate": "tool_call_update", "toolCallId": "e",
                "content": [{"type": "diff", "path": "/w/a.txt", "oldText": "three", "newText": "3"}]}),
            disk,
        ) else {
            panic!("not an update");
        };
        ask
    };
    let disk = OnDisk::Text("one\ntwo\nthree\n".to_owned());
    let pieces = renderer.ask_changes(&ask(&disk));
    assert_eq!(titles(&pieces), ["[diff] /w/a.txt (1 line removed, 1 added)"]);
    let Piece::Diff(lines) = &pieces[0] else { panic!() };
    assert!(lines.iter().any(|line| line.text == "  @@ -3 +3 @@"), "{lines:?}");
    assert_eq!(
        titles(&renderer.ask_changes(&ask(&disk)))[0],
        "[diff] /w/a.txt: shown above (1 line removed, 1 added)"
    );
    let changed = OnDisk::Text("zero\none\ntwo\nthree\n".to_owned());
    assert_eq!(
        titles(&renderer.ask_changes(&ask(&changed))),
        ["[diff] /w/a.txt (1 line removed, 1 added)"]
    );
    // A tool call drawn later with the same item says nothing more.
    let call = json!({"sessionUpdate": "tool_call", "toolCallId": "e", "title": "Edit",
        "content": [{"type": "diff", "path": "/w/a.txt", "oldText": "three", "newText": "3"}]});
    assert_eq!(titles(&renderer.update(&with_disk(&call, &disk), &attach)), Vec::<String>::new());
    // An ask without changes has none.
    let bare: ToolCallUpdate = decode(Some(&json!({"toolCallId": "other"}))).unwrap();
    assert_eq!(renderer.ask_changes(&bare), vec![]);
}

#[test]
fn a_replayed_user_message_is_marked_and_the_agents_answer_starts_a_fresh_line() {
    let mut renderer = Renderer::default();
    let user =
        json!({"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "hi "}});
    let more = json!({"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "there"}});
    let agent = json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hello"}});
    assert_eq!(
        render(&mut renderer, &user),
        vec![Piece::Fresh(Voice::User, "[you] hi ".to_owned())]
    );
    assert_eq!(render(&mut renderer, &more), vec![Piece::Text(Voice::User, "there".to_owned())]);
    // A mentioned file the person attached is set apart from their words.
    let link = json!({"sessionUpdate": "user_message_chunk",
                      "content": {"type": "resource_link", "name": "a.txt", "uri": "file:///a.txt"}});
    assert_eq!(
        render(&mut renderer, &link),
        vec![Piece::Text(Voice::User, " [link a.txt file:///a.txt]".to_owned())]
    );
    assert_eq!(render(&mut renderer, &agent), vec![Piece::Fresh(Voice::Agent, "hello".to_owned())]);
    assert_eq!(render(&mut renderer, &agent), vec![Piece::Text(Voice::Agent, "hello".to_owned())]);
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

/// A patch repeating a tool call's content after its file changed is still the same content: its
/// text result is not shown again.
#[test]
fn repeated_content_is_not_shown_again_when_only_the_file_changed() {
    let mut renderer = Renderer::default();
    let attach = |_: &str| None;
    let patch = json!({"sessionUpdate": "tool_call_update", "toolCallId": "t", "content": [
        {"type": "diff", "path": "/w/a", "oldText": "a", "newText": "b"},
        {"type": "content", "content": {"type": "text", "text": "edited"}}
    ]});
    let first =
        plain(renderer.update(&with_disk(&patch, &OnDisk::Text("a\n".to_owned())), &attach));
    assert!(first.contains(&line("  edited")), "{first:?}");
    let again = renderer.update(&with_disk(&patch, &OnDisk::Text("b\n".to_owned())), &attach);
    assert_eq!(again, vec![]);
}
