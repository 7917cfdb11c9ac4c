//! Unit tests of the stream text and cursor, on files written by the test.

use std::io::Write;

use super::{COMPACT_BYTES, EXIT_MARK, INDEX_SPACING, RETAINED_CHARS, Stream, Streams, node_of};
use crate::matcher::Matcher;

/// A waiter's search for one literal text: found, or where the next search starts.
fn find(stream: &Stream, from: Option<u64>, text: &str) -> Result<(), u64> {
    stream.search(from, &Matcher::literal(text)).map(drop)
}

fn append(streams: &Streams, node_id: &str, bytes: &[u8]) {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(streams.files().out_file(node_id))
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
    assert_eq!(stream.after(None), ("red\ntab\there\n".to_owned(), false, 13));
    assert_eq!(stream.cursor(), 13);
    // A sequence and a UTF-8 character split across writes.
    append(&streams, "n1", b"\x1b[1");
    append(&streams, "n1", b"mb\xc3");
    append(&streams, "n1", b"\xa9!");
    assert_eq!(stream.after(Some(13)), ("b\u{e9}!".to_owned(), false, 16));
    assert_eq!(stream.cursor(), 16);
    assert_eq!(stream.after(Some(99)), (String::new(), false, 16), "a cursor ahead is the end");
    assert_eq!(find(&stream, Some(8), "here"), Ok(()));
    assert_eq!(find(&stream, Some(9), "here"), Err(16 - 3), "no text before the cursor 9");
}

/// The run wrapper prints the exit mark after its command's output and before it records the
/// status; the stream reads the mark without showing it, even after a sequence the command left
/// open.
#[test]
fn the_run_wrappers_exit_mark_is_read_and_not_shown() {
    let dir = tempfile::TempDir::new().unwrap();
    let streams = Streams::new(dir.path().join("terminals")).unwrap();
    let (status, drained) = (streams.files().status_file("n1"), streams.files().drained_file("n1"));
    let child = std::process::Command::new("sh")
        .args(["-c", crate::terminals::RUN_WRAPPER, "sh", "printf 'abc\\n\\033]0;open'; exit 3"])
        .args([&status, &drained])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !status.exists() {
        assert!(std::time::Instant::now() < deadline, "no status recorded");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // The wrapper holds its terminal open until the server has read the mark.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let mut child = child;
    assert!(child.try_wait().unwrap().is_none(), "the wrapper ended before it was drained");
    std::fs::write(&drained, b"").unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(3));
    assert!(output.stdout.ends_with(EXIT_MARK), "{:?}", String::from_utf8_lossy(&output.stdout));
    assert_eq!(std::fs::read_to_string(&status).unwrap(), "3\n");
    let stream = streams.get("n1");
    append(&streams, "n1", &output.stdout[..output.stdout.len() - EXIT_MARK.len()]);
    assert!(!stream.exit_marked(), "no mark before the wrapper printed it");
    append(&streams, "n1", EXIT_MARK);
    assert!(stream.exit_marked());
    append(&streams, "n1", b"after\n");
    assert_eq!(stream.after(None).0, "abc\nafter\n");
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
    let (text, dropped, _) = stream.after(Some(0));
    assert!(dropped, "text before the retained window is reported as dropped");
    assert_eq!(text.chars().count(), RETAINED_CHARS);
    let (recent, dropped, cursor) = stream.after(Some(total - 5));
    assert_eq!((recent.as_str(), dropped, cursor), ("xxxx\n", false, total));
}

/// Every cursor of a long stream of characters of one to four bytes finds its text through the
/// cursor index, before and after old text is dropped, as a plain count of characters does.
#[test]
fn cursors_find_their_text_through_the_index_in_a_long_mixed_stream() {
    let dir = tempfile::TempDir::new().unwrap();
    let streams = Streams::new(dir.path().join("terminals")).unwrap();
    let line = "a\u{e9}\u{20ac}\u{1f600}".repeat(249) + "\tz\n"; // 999 characters, 2,494 bytes
    let probe = |written: &str, stream: &Stream, start: u64| {
        let spacing = usize::try_from(INDEX_SPACING).unwrap();
        let total = written.chars().count();
        let start = usize::try_from(start).unwrap();
        let cursors = [0, 1, spacing - 1, spacing, spacing + 1, 3 * spacing + 7, total / 2]
            .into_iter()
            .map(|offset| start + offset)
            .chain([total - 1, total]);
        for cursor in cursors {
            let expected: String = written.chars().skip(cursor).collect();
            let (text, dropped, end) = stream.after(Some(cursor as u64));
            assert_eq!((dropped, end), (false, total as u64), "at cursor {cursor}");
            assert!(text == expected, "the text after cursor {cursor} is the written text's");
        }
    };
    append(&streams, "n9", line.repeat(100).as_bytes());
    let stream = streams.get("n9");
    probe(&line.repeat(100), &stream, 0);
    // Past RETAINED_CHARS and a quarter more, the oldest text goes.
    let lines = RETAINED_CHARS * 3 / 2 / 999;
    append(&streams, "n9", line.repeat(lines - 100).as_bytes());
    let written = line.repeat(lines);
    let total = written.chars().count() as u64;
    assert_eq!(stream.cursor(), total);
    let (retained, dropped, _) = stream.after(Some(0));
    assert!(dropped, "the oldest text is gone");
    let start = total - retained.chars().count() as u64;
    assert!(retained.chars().count() >= RETAINED_CHARS, "the retained window is whole");
    probe(&written, &stream, start);
    assert_eq!(find(&stream, Some(start), "\u{1f600}\tz"), Ok(()));
}

/// A waiter's search goes on from where the last one ended, and still finds a text whose start
/// was in the part searched before.
#[test]
fn a_search_goes_on_where_the_last_one_ended() {
    let dir = tempfile::TempDir::new().unwrap();
    let streams = Streams::new(dir.path().join("terminals")).unwrap();
    append(&streams, "n8", b"one two thr");
    let stream = streams.get("n8");
    let from = find(&stream, None, "three").expect_err("not printed yet");
    assert_eq!(from, 11 - 4, "the last four characters may begin the text");
    append(&streams, "n8", b"ee\n");
    stream.look();
    assert_eq!(find(&stream, Some(from), "three"), Ok(()));
    // A cursor still to come is where searching starts once the stream reaches it.
    assert_eq!(find(&stream, Some(40), "one"), Err(40));
    append(&streams, "n8", "x".repeat(40).as_bytes());
    stream.look();
    assert_eq!(find(&stream, Some(40), "xxxx"), Ok(()));
    assert_eq!(find(&stream, Some(40), "three"), Err(54 - 4), "text before the cursor is skipped");
}

/// The answer of a text wait that has not matched reads the file again: its search covers that
/// same text, so a match printed after the waiter's last look is reported, never skipped (a
/// chained wait's next turn starts near the answer's cursor).
#[test]
fn an_answer_searches_the_text_it_holds() {
    let dir = tempfile::TempDir::new().unwrap();
    let streams = Streams::new(dir.path().join("terminals")).unwrap();
    append(&streams, "n9", b"tick 1\n");
    let stream = streams.get("n9");
    let mark = Matcher::literal("<mark>");
    let from = stream.search(None, &mark).expect_err("not printed yet");
    append(&streams, "n9", b"t=5 <mark>\ntick 2\n");
    assert!(stream.search(Some(from), &mark).is_err(), "no look since: the waiter saw nothing");
    let ((text, dropped, cursor), found) = stream.after_searched(Some(0), Some(from), &mark);
    assert_eq!((text.as_str(), dropped, cursor), ("tick 1\nt=5 <mark>\ntick 2\n", false, 25));
    assert_eq!(found, Some((0, 11)), "the answer's text holds the mark at cursor 11");
    let (after, none) = stream.after_searched(Some(cursor), Some(cursor), &mark);
    assert_eq!((after, none), ((String::new(), false, 25), None), "nothing new, nothing found");
}

/// The waiters woken by one change signal read the node's file once: a look at a signal some look
/// has read at does not read again; a newer signal does.
#[test]
fn a_change_signal_is_read_once() {
    let dir = tempfile::TempDir::new().unwrap();
    let streams = Streams::new(dir.path().join("terminals")).unwrap();
    let stream = streams.get("n7");
    append(&streams, "n7", b"first\n");
    assert_eq!(stream.look_at(1).cursor, 6, "the first look at a signal reads");
    append(&streams, "n7", b"second\n");
    assert_eq!(stream.look_at(1).cursor, 6, "the signal was read at already");
    assert_eq!(stream.look_at(2).cursor, 13, "a newer signal reads");
    append(&streams, "n7", b"third\n");
    assert_eq!(stream.look().cursor, 19, "a plain look always reads");
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
    assert!(!streams.files().out_file("n3").exists());
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
    one.look();
    assert_eq!(find(&one, None, "hello"), Ok(()));
    let mut two_changes = two_changes;
    std::fs::File::create(streams.files().end_file("w2")).unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(5), two_changes.changed())
        .await
        .expect("the end marker wakes w2")
        .unwrap();
    watcher.abort();
}

/// Whether the file system of `dir` can punch holes (tmpfs, ext4, xfs, btrfs can).
fn can_punch(dir: &std::path::Path) -> bool {
    let path = dir.join("punch-probe");
    std::fs::write(&path, vec![b'x'; 1 << 16]).unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    let flags = rustix::fs::FallocateFlags::PUNCH_HOLE | rustix::fs::FallocateFlags::KEEP_SIZE;
    rustix::fs::fallocate(&file, flags, 0, 1 << 16).is_ok()
}

/// Bytes the file occupies on disk.
fn allocated(path: &std::path::Path) -> u64 {
    std::os::unix::fs::MetadataExt::blocks(&std::fs::metadata(path).unwrap()) * 512
}

#[test]
fn a_long_stream_is_punched_out_of_its_file_and_a_restart_resumes_at_the_mark() {
    let dir = tempfile::TempDir::new().unwrap();
    let streams = Streams::new(dir.path().join("terminals")).unwrap();
    let line = "y".repeat(99) + "\r\n";
    let lines = usize::try_from(COMPACT_BYTES).unwrap() / 100 + RETAINED_CHARS / 50;
    append(&streams, "n5", line.repeat(lines).as_bytes());
    let stream = streams.get("n5");
    let total = (lines * 100) as u64;
    assert_eq!(stream.cursor(), total, "every character is counted");
    let out = streams.files().out_file("n5");
    let length = std::fs::metadata(&out).unwrap().len();
    assert_eq!(length, (lines * 101) as u64, "the file keeps its length");

    let mark = std::fs::read_to_string(streams.files().mark_file("n5")).expect("a restart point");
    let (offset, cursor) = mark.trim_end().split_once(' ').unwrap();
    let (offset, cursor): (u64, u64) = (offset.parse().unwrap(), cursor.parse().unwrap());
    assert!(offset >= COMPACT_BYTES && offset % 101 == 0, "a line start past 16 MiB: {offset}");
    assert_eq!(cursor, offset / 101 * 100, "the cursor at the mark");
    assert!(total - cursor >= RETAINED_CHARS as u64, "the retained text is after the mark");
    if can_punch(dir.path()) {
        assert!(
            allocated(&out) <= length - offset + (1 << 20),
            "{} bytes on disk",
            allocated(&out)
        );
    } else {
        eprintln!("this file system cannot punch holes: the bytes stay on disk");
    }

    // A restarted server reads from the mark on: the same cursor and the same retained tail.
    let (before, _, _) = stream.after(Some(total - 250));
    drop((stream, streams));
    let streams = Streams::new(dir.path().join("terminals")).unwrap();
    let stream = streams.get("n5");
    assert_eq!(stream.cursor(), total);
    assert_eq!(stream.after(Some(total - 250)), (before, false, total));
    let (window, dropped, _) = stream.after(Some(0));
    assert!(dropped && window.chars().count() >= RETAINED_CHARS, "the retained window survives");
    append(&streams, "n5", b"after\n");
    assert_eq!(stream.after(Some(total)), ("after\n".to_owned(), false, total + 6));

    streams.remove_files("n5");
    assert!(!streams.files().mark_file("n5").exists(), "closing removes the mark too");
}

#[test]
fn a_mark_past_the_end_of_its_file_is_ignored() {
    let dir = tempfile::TempDir::new().unwrap();
    let streams = Streams::new(dir.path().join("terminals")).unwrap();
    append(&streams, "n6", b"fresh\n");
    std::fs::write(streams.files().mark_file("n6"), "999999 123\n").unwrap();
    assert_eq!(streams.get("n6").after(None), ("fresh\n".to_owned(), false, 6));
}

/// The watch catches up with a node nobody reads once [`COMPACT_BYTES`] are unread, and the
/// file is compacted once a catch-up has read a restart point that far past the last one. How
/// many appends that takes depends on when each catch-up starts (under load, before the next
/// append lands), so the node prints until it happens: at most 8 appends of half of
/// [`COMPACT_BYTES`] (three suffice when each catch-up is late, four when each is early).
#[tokio::test(flavor = "multi_thread")]
async fn the_watch_compacts_the_file_of_a_node_nobody_reads() {
    let dir = tempfile::TempDir::new().unwrap();
    let streams = std::sync::Arc::new(Streams::new(dir.path().join("terminals")).unwrap());
    let watcher = streams.watch().unwrap();
    let line = "z".repeat(99) + "\n";
    let half = line.repeat(usize::try_from(COMPACT_BYTES).unwrap() / 200);
    let deadline = std::time::Instant::now() + std::time::Duration::from_mins(1);
    let mut appended = 0;
    while !streams.files().mark_file("n7").exists() {
        assert!(std::time::Instant::now() < deadline, "no restart point after {appended} appends");
        if appended < 8 {
            append(&streams, "n7", half.as_bytes());
            appended += 1;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    watcher.abort();
}

/// Several texts or patterns: the earliest match wins, with the index of the text that matched
/// and the cursor at its start; a pattern's match that arrives in two pieces is found.
#[test]
fn a_search_for_several_texts_or_a_pattern_answers_which_and_where() {
    let dir = tempfile::TempDir::new().unwrap();
    let streams = Streams::new(dir.path().join("terminals")).unwrap();
    append(&streams, "m1", "é tests: FAILED then PASSED\n".as_bytes());
    let stream = streams.get("m1");
    let texts = ["PASSED".to_owned(), "FAILED".to_owned()];
    let either = Matcher::new(&texts, false).unwrap();
    assert_eq!(stream.search(None, &either), Ok((1, 9)), "FAILED comes first, at cursor 9");
    assert_eq!(stream.search(Some(10), &either), Ok((0, 21)));
    // At the same start, the first of the texts that match there.
    let both = Matcher::new(&["FAIL".to_owned(), "FAILED".to_owned()], false).unwrap();
    assert_eq!(stream.search(None, &both), Ok((0, 9)));

    let port = Matcher::new(&[r"listening on port 8\d+".to_owned()], true).unwrap();
    append(&streams, "m2", b"starting\nlistening on ");
    let stream = streams.get("m2");
    let from = stream.search(None, &port).expect_err("no port yet");
    assert_eq!(from, 9, "a pattern's match starts in the line still being printed");
    append(&streams, "m2", b"port 8080\n");
    stream.look();
    assert_eq!(stream.search(Some(from), &port), Ok((0, 9)), "the match straddles the writes");
    // ^ is a line start, not where the search starts.
    let line_start = Matcher::new(&["^port".to_owned()], true).unwrap();
    assert!(stream.search(Some(22), &line_start).is_err());
}

/// `terminal_search` in one stream: matching lines with their cursors and context, oldest first,
/// at most the limit, the rest said.
#[test]
fn matching_lines_have_their_cursor_context_and_limit() {
    let dir = tempfile::TempDir::new().unwrap();
    let streams = Streams::new(dir.path().join("terminals")).unwrap();
    append(&streams, "s1", b"a\nb\nFAILED test_x\nc\nd\ne\nFAILED test_y\n$ ");
    let stream = streams.get("s1");
    let failed = Matcher::literal("FAILED");
    let (found, more) = stream.matching_lines("s1", None, &failed, 2, 20);
    assert!(!more);
    assert_eq!(found.len(), 2);
    assert_eq!((found[0].cursor, found[0].line.as_str()), (4, "FAILED test_x"));
    assert_eq!(
        (found[0].before.clone(), found[0].after.clone()),
        (vec!["a".to_owned(), "b".to_owned()], vec!["c".to_owned(), "d".to_owned()])
    );
    assert_eq!(stream.after(Some(found[0].cursor)).0.lines().next(), Some("FAILED test_x"));
    assert_eq!(
        (found[1].line.as_str(), found[1].after.clone()),
        ("FAILED test_y", vec!["$ ".to_owned()])
    );
    assert_eq!(found[1].node_id, "s1");
    // The limit cuts; since skips what came before it.
    let (first, more) = stream.matching_lines("s1", None, &failed, 0, 1);
    assert_eq!((first.len(), more), (1, true));
    let (later, _) = stream.matching_lines("s1", Some(5), &failed, 1, 20);
    assert_eq!(later.iter().map(|m| m.line.as_str()).collect::<Vec<_>>(), ["FAILED test_y"]);
    // A pattern matches within one line only.
    let across = Matcher::new(&[r"test_x\s+c".to_owned()], true).unwrap();
    assert_eq!(stream.matching_lines("s1", None, &across, 0, 20).0, []);
    let digits = Matcher::new(&[r"^[a-e]$".to_owned()], true).unwrap();
    assert_eq!(stream.matching_lines("s1", None, &digits, 0, 20).0.len(), 5);
    // The prompt without a line feed is a line; the end after a last line feed is none.
    let prompt = Matcher::new(&[r"^\$ ?$".to_owned()], true).unwrap();
    assert_eq!(stream.matching_lines("s1", None, &prompt, 1, 20).0[0].before, ["FAILED test_y"]);
    let empty = Matcher::new(&["^$".to_owned()], true).unwrap();
    append(&streams, "s2", b"x\n\ny\n");
    let (blank, _) = streams.get("s2").matching_lines("s2", None, &empty, 0, 20);
    assert_eq!(blank.iter().map(|m| m.cursor).collect::<Vec<_>>(), [2]);
}
