//! Unit tests of the stream text and cursor, on files written by the test.

use std::io::Write;

use super::{RETAINED_CHARS, Streams, node_of};

fn append(streams: &Streams, node_id: &str, bytes: &[u8]) {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(streams.out_file(node_id))
        .unwrap();
    file.write_all(bytes).unwrap();
}

#[test]
fn control_sequences_are_removed_and_the_cursor_counts_characters() {
    let dir = tempfile::TempDir::new().unwrap();
    let streams = Streams::new(dir.path().join("terminals")).unwrap();
    assert_eq!(streams.get("n1").cursor(), 0, "no file yet is an empty stream");
    append(&streams, "n1", b"\x1b[31mred\x1b[0m\r\n\x1b]0;title\x07tab\there\r\n");
    let stream = streams.get("n1");
    assert_eq!(stream.after(None), ("red\ntab\there\n".to_owned(), false));
    assert_eq!(stream.cursor(), 13);
    // A sequence and a UTF-8 character split across writes.
    append(&streams, "n1", b"\x1b[1");
    append(&streams, "n1", b"mb\xc3");
    append(&streams, "n1", b"\xa9!");
    assert_eq!(stream.after(Some(13)), ("b\u{e9}!".to_owned(), false));
    assert_eq!(stream.cursor(), 16);
    assert_eq!(stream.after(Some(99)), (String::new(), false), "a cursor ahead is the end");
    assert!(stream.contains_after(Some(8), "here"));
    assert!(!stream.contains_after(Some(9), "here"));
}

#[test]
fn old_text_is_dropped_but_the_cursor_keeps_counting() {
    let dir = tempfile::TempDir::new().unwrap();
    let streams = Streams::new(dir.path().join("terminals")).unwrap();
    let line = "x".repeat(999) + "\n";
    let lines = RETAINED_CHARS * 3 / 2 / 1000;
    append(&streams, "n2", line.repeat(lines).as_bytes());
    let stream = streams.get("n2");
    let total = (lines * 1000) as u64;
    assert_eq!(stream.cursor(), total);
    let (text, dropped) = stream.after(Some(0));
    assert!(dropped, "text before the retained window is reported as dropped");
    assert_eq!(text.chars().count(), RETAINED_CHARS);
    let (recent, dropped) = stream.after(Some(total - 5));
    assert_eq!((recent.as_str(), dropped), ("xxxx\n", false));
}

#[test]
fn closing_marks_waiters_and_removes_files() {
    let dir = tempfile::TempDir::new().unwrap();
    let streams = Streams::new(dir.path().join("terminals")).unwrap();
    append(&streams, "n3", b"hi\n");
    let stream = streams.get("n3");
    let changes = stream.subscribe();
    streams.close("n3");
    assert!(changes.has_changed().unwrap());
    assert!(stream.look().closed);
    streams.remove_files("n3");
    assert!(!streams.out_file("n3").exists());
    assert!(!streams.get("n3").look().closed, "a node id used again starts afresh");
}

#[test]
fn stream_file_names() {
    assert_eq!(node_of("n1.out"), Some("n1"));
    assert_eq!(node_of("term-2.end"), Some("term-2"));
    assert_eq!(node_of("a.b.died"), Some("a.b"));
    assert_eq!(node_of("n1.tmp"), None);
    assert_eq!(node_of("n1"), None);
}

#[tokio::test]
async fn a_write_wakes_the_waiters_of_its_node_only() {
    let dir = tempfile::TempDir::new().unwrap();
    let streams = std::sync::Arc::new(Streams::new(dir.path().join("terminals")).unwrap());
    let watcher = streams.watch().unwrap();
    let one = streams.get("w1");
    let two = streams.get("w2");
    let (mut one_changes, two_changes) = (one.subscribe(), two.subscribe());
    append(&streams, "w1", b"hello\n");
    tokio::time::timeout(std::time::Duration::from_secs(5), one_changes.changed())
        .await
        .expect("the write wakes w1")
        .unwrap();
    assert!(!two_changes.has_changed().unwrap(), "w2 was not written");
    assert!(one.contains_after(None, "hello"));
    let mut two_changes = two_changes;
    std::fs::File::create(streams.end_file("w2")).unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(5), two_changes.changed())
        .await
        .expect("the end marker wakes w2")
        .unwrap();
    watcher.abort();
}
