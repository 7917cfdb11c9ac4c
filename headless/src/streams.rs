//! The output stream of every terminal node, with its cursor (protocol 1.3.0).
//!
//! tmux copies everything a node's pane prints into `agent-tools/terminals/<nodeId>.out`
//! (`pipe-pane`, set up in the same tmux command list that creates the session, so nothing is
//! missed; the pipe's reader touches `<nodeId>.start` when it runs); when the pane is gone the
//! pipe command touches `<nodeId>.end`, and a run node's `pane-died` hook touches
//! `<nodeId>.died`. The files outlive a restart of the server, and so do
//! the cursors, which are computed from them.
//!
//! The text of a stream is the pane's output with control sequences removed (parsed with `vte`):
//! printable characters, line feeds and tabs; carriage returns and every other control are
//! dropped. The cursor counts its characters (Unicode scalar values) since the node started and
//! only grows. The last [`RETAINED_CHARS`] characters are kept in memory.
//!
//! One inotify watch on the folder wakes the waiters of a node whenever one of its files changes,
//! so waits are event-driven, never a poll. A wake costs what was printed, not what is retained:
//! the waiters of one change read the file once between them ([`Stream::look_at`]), a waiter
//! searches only the new text ([`Stream::search`]), and a cursor finds its place in the text
//! through an index of every [`INDEX_SPACING`]-th character.
//!
//! The files stay small on disk however long a node prints: once [`COMPACT_BYTES`] have been read
//! past the last restart point, the server records a new one in `<nodeId>.mark` (the byte offset
//! of a line start before the retained text, and the cursor there) and punches the bytes before
//! it out of `<nodeId>.out` (`fallocate` with `FALLOC_FL_PUNCH_HOLE`: the file keeps its length,
//! so tmux's appending `cat` and every offset stay valid). A restarted server resumes at the mark
//! with its cursor. The watch compacts the file of a node nobody reads, too.

use std::collections::HashMap;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use rustix::fs::inotify;
use termsprawl_protocol::results::SearchMatch;
use tokio::io::unix::AsyncFd;
use tokio::sync::watch;

use crate::files::{Files, node_of, recorded_exit_of};
use crate::matcher::Matcher;
use termsprawl_transport::sync::lock;

/// How long a run wrapper waits, after its exit mark, for the server to read it (and how long the
/// server looks for it) before it ends anyway.
pub(crate) const DRAIN_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

/// How many characters of each stream are kept for `since` and `terminal_wait`.
pub(crate) const RETAINED_CHARS: usize = 1_000_000;

/// How many bytes of `<nodeId>.out` are read past the last restart point before the bytes before
/// a newer one are punched out of the file.
pub(crate) const COMPACT_BYTES: u64 = 16 << 20;

/// How many characters apart the entries of a stream's cursor index are.
const INDEX_SPACING: u64 = 1024;

/// How many bytes are read at most at once, and how far apart candidate restart points are.
const READ_CHUNK: u64 = 1 << 20;
const MARK_SPACING: u64 = 64 << 10;

/// The streams of every terminal node of the server.
#[derive(Debug)]
pub(crate) struct Streams {
    files: Files,
    nodes: Mutex<HashMap<String, Arc<Stream>>>,
}

/// One node's stream.
#[derive(Debug)]
pub(crate) struct Stream {
    out: PathBuf,
    mark: PathBuf,
    state: Mutex<StreamState>,
    /// Bumped on every change of the node's files, and when the node is closed.
    changed: watch::Sender<u64>,
}

#[derive(Debug, Default)]
struct StreamState {
    /// Bytes of `<nodeId>.out` consumed.
    offset: u64,
    parser: Parser,
    /// The retained text: the last characters of the stream, `text_start` being the cursor of
    /// its first character.
    text: String,
    text_start: u64,
    cursor: u64,
    /// Where every [`INDEX_SPACING`]-th character of the retained text starts: `(cursor, byte)`,
    /// oldest first, `byte` counted like [`StreamState::dropped_bytes`]. A cursor is found in the
    /// text by a scan of at most [`INDEX_SPACING`] characters, however much is retained.
    index: VecDeque<(u64, u64)>,
    /// Bytes of text dropped from the front of `text` so far: `text[i]` is byte
    /// `dropped_bytes + i` of the text the stream ever held.
    dropped_bytes: u64,
    /// The change signal's value the file was last read at (see [`Stream::look_at`]).
    read_at: Option<u64>,
    /// When the output last grew (the file's modification time until this server saw it grow).
    last_change: Option<SystemTime>,
    /// The file's modification time when the last characters were read from it: when the
    /// terminal last printed, however late it was read, and the same after a restart
    /// (`terminal_list`'s `lastOutputAt`).
    last_output: Option<SystemTime>,
    closed: bool,
    /// Candidate restart points, oldest first: `(offset, cursor)` just after a line feed, the
    /// first one at or before the retained text.
    marks: VecDeque<(u64, u64)>,
    /// The offset of the restart point in `<nodeId>.mark`, before which the file is punched out.
    compacted: u64,
    /// The file system cannot punch holes: keep the bytes.
    cannot_punch: bool,
    /// The run wrapper's [`EXIT_MARK`] has been read: the command's output is all in.
    exit_marked: bool,
}

/// The escape-sequence parser of a stream, kept between reads (a sequence may be split).
#[derive(Default)]
struct Parser(vte::Parser);

impl std::fmt::Debug for Parser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Parser")
    }
}

/// The exit mark a run node's wrapper prints once its command has exited, before it records the
/// exit status (`terminals::RUN_WRAPPER`): a CAN, which ends any sequence the command left
/// open, then `OSC 6973 ; termsprawl-exit BEL`. Output reaches the stream file in the order the
/// pane printed it, so once the mark is in the stream everything the command printed is too.
/// tmux ignores an OSC it does not know, so the mark is on no screen, and the text of a stream
/// never shows it.
#[cfg(test)]
pub(crate) const EXIT_MARK: &[u8] = b"\x18\x1b]6973;termsprawl-exit\x07";

/// The parameters of the [`EXIT_MARK`]'s OSC.
const EXIT_MARK_PARAMS: [&[u8]; 2] = [b"6973", b"termsprawl-exit"];

/// The printable text of a slice of terminal output.
struct Printer<'a> {
    text: &'a mut String,
    /// The cursor of the next character.
    cursor: u64,
    added: u64,
    index: &'a mut VecDeque<(u64, u64)>,
    dropped_bytes: u64,
    /// Set when the slice holds the exit mark.
    exit_marked: &'a mut bool,
}

impl Printer<'_> {
    fn push(&mut self, c: char) {
        if self.cursor.is_multiple_of(INDEX_SPACING) {
            self.index.push_back((self.cursor, self.dropped_bytes + self.text.len() as u64));
        }
        self.text.push(c);
        self.cursor += 1;
        self.added += 1;
    }
}

impl vte::Perform for Printer<'_> {
    fn print(&mut self, c: char) {
        self.push(c);
    }

    fn execute(&mut self, byte: u8) {
        if matches!(byte, b'\n' | b'\t') {
            self.push(char::from(byte));
        }
    }

    fn osc_dispatch(&mut self, params: &[&[u8]], _bell_terminated: bool) {
        if params == EXIT_MARK_PARAMS {
            *self.exit_marked = true;
        }
    }
}

impl Streams {
    /// The streams kept in `dir` (created, mode 0700, when missing).
    pub(crate) fn new(dir: PathBuf) -> io::Result<Streams> {
        std::fs::create_dir_all(&dir)?;
        std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o700))?;
        Ok(Streams { files: Files::new(dir), nodes: Mutex::new(HashMap::new()) })
    }

    /// The names of the node files.
    pub(crate) fn files(&self) -> &Files {
        &self.files
    }

    /// The node's stream, read up to the end of its file.
    pub(crate) fn get(&self, node_id: &str) -> Arc<Stream> {
        let stream = Arc::clone(lock(&self.nodes).entry(node_id.to_owned()).or_insert_with(|| {
            let (out, mark) = (self.files.out_file(node_id), self.files.mark_file(node_id));
            let state = StreamState::resumed(&out, &mark);
            Arc::new(Stream { out, mark, state: Mutex::new(state), changed: watch::Sender::new(0) })
        }));
        stream.refresh();
        stream
    }

    /// Whether [`COMPACT_BYTES`] of the node's file are unread: then the watch reads it, so that
    /// the file of a node nobody reads is compacted too.
    fn far_behind(&self, node_id: &str) -> bool {
        let Ok(length) = std::fs::metadata(self.files.out_file(node_id)).map(|m| m.len()) else {
            return false;
        };
        if length < COMPACT_BYTES {
            return false;
        }
        let known = lock(&self.nodes).get(node_id).cloned();
        let read = match &known {
            None => 0,
            // Being read right now (by a caller or an earlier catch-up): not this watch's turn,
            // and the watch must not wait for a long read to end.
            Some(stream) => match stream.state.try_lock() {
                Ok(state) => state.offset,
                Err(std::sync::TryLockError::Poisoned(state)) => state.into_inner().offset,
                Err(std::sync::TryLockError::WouldBlock) => return false,
            },
        };
        length >= read + COMPACT_BYTES
    }

    /// The node's stream, read from its file only when the file changed since the last look of
    /// this kind ([`Stream::look_at`] at the change signal now), with that signal and the look:
    /// a survey of many quiet terminals reads no file (`terminal_list`, `terminal_search`).
    pub(crate) fn current(&self, node_id: &str) -> (Arc<Stream>, u64, Look) {
        let known = lock(&self.nodes).get(node_id).cloned();
        let stream = known.unwrap_or_else(|| self.get(node_id));
        let signal = *stream.changed.borrow();
        let look = stream.look_at(signal);
        (stream, signal, look)
    }

    /// Wakes the node's waiters.
    pub(crate) fn wake(&self, node_id: &str) {
        if let Some(stream) = lock(&self.nodes).get(node_id) {
            stream.changed.send_modify(|version| *version += 1);
        }
    }

    /// Marks the node closed: its waiters end with an error.
    pub(crate) fn close(&self, node_id: &str) {
        if let Some(stream) = lock(&self.nodes).remove(node_id) {
            lock(&stream.state).closed = true;
            stream.changed.send_modify(|version| *version += 1);
        }
    }

    /// Removes the node's files, once its pane is gone.
    pub(crate) fn remove_files(&self, node_id: &str) {
        for path in self.files.stream_files(node_id) {
            let _ = std::fs::remove_file(path);
        }
    }

    /// Watches the folder and wakes the waiters of the node whose file changed, until dropped.
    pub(crate) fn watch(self: &Arc<Self>) -> io::Result<tokio::task::JoinHandle<()>> {
        let fd: OwnedFd =
            inotify::init(inotify::CreateFlags::CLOEXEC | inotify::CreateFlags::NONBLOCK)?;
        inotify::add_watch(
            &fd,
            self.files.dir(),
            inotify::WatchFlags::MODIFY
                | inotify::WatchFlags::CREATE
                | inotify::WatchFlags::MOVED_TO
                | inotify::WatchFlags::ATTRIB
                | inotify::WatchFlags::CLOSE_WRITE,
        )?;
        #[expect(
            deprecated,
            reason = "the descriptor is an OwnedFd that the AsyncFd owns, so `new` is sound; `register` needs unsafe code, which this crate denies"
        )]
        let fd = AsyncFd::new(fd)?;
        let streams = Arc::clone(self);
        Ok(tokio::spawn(async move {
            let mut buffer = [std::mem::MaybeUninit::<u8>::uninit(); 4096];
            loop {
                let Ok(mut ready) = fd.readable().await else { return };
                let mut woken: Vec<String> = Vec::new();
                let mut recorded: Vec<String> = Vec::new();
                let mut reader = inotify::Reader::new(fd.get_ref(), &mut buffer);
                loop {
                    match reader.next() {
                        Ok(event) => {
                            let name = event.file_name().and_then(|name| name.to_str().ok());
                            if let Some(node_id) = name.and_then(recorded_exit_of) {
                                recorded.push(node_id.to_owned());
                            }
                            if let Some(node_id) = name.and_then(node_of)
                                && !woken.iter().any(|seen| seen == node_id)
                            {
                                woken.push(node_id.to_owned());
                            }
                        }
                        Err(rustix::io::Errno::AGAIN) => {
                            ready.clear_ready();
                            break;
                        }
                        Err(rustix::io::Errno::INTR) => {}
                        Err(_) => return,
                    }
                }
                for node_id in recorded {
                    tokio::spawn(Arc::clone(&streams).acknowledge_exit(node_id));
                }
                for node_id in woken {
                    if streams.far_behind(&node_id) {
                        let streams = Arc::clone(&streams);
                        let node_id = node_id.clone();
                        tokio::task::spawn_blocking(move || drop(streams.get(&node_id)));
                    }
                    streams.wake(&node_id);
                }
            }
        }))
    }
}

impl Streams {
    /// Once a run wrapper has recorded its command's exit: waits (at most [`DRAIN_LIMIT`]) until
    /// its exit mark is in the stream, then lets the wrapper end (`<nodeId>.drained`).
    async fn acknowledge_exit(self: Arc<Self>, node_id: String) {
        let stream = {
            let streams = Arc::clone(&self);
            let node_id = node_id.clone();
            match tokio::task::spawn_blocking(move || streams.get(&node_id)).await {
                Ok(stream) => stream,
                Err(_) => return,
            }
        };
        if stream.wait_for_exit_mark(&self.files.end_file(&node_id), DRAIN_LIMIT).await {
            let _ = std::fs::write(self.files.drained_file(&node_id), b"");
        }
    }
}

impl Stream {
    /// Reads what the file gained since the last look, then compacts the file when it is due.
    fn refresh(&self) {
        self.read_into(&mut lock(&self.state));
    }

    /// [`Stream::refresh`] with the state locked.
    fn read_into(&self, state: &mut StreamState) {
        let Ok(mut file) = File::open(&self.out) else { return };
        let Ok(metadata) = file.metadata() else { return };
        if metadata.len() <= state.offset {
            if state.last_change.is_none() {
                state.last_change = metadata.modified().ok();
            }
            return;
        }
        if file.seek(SeekFrom::Start(state.offset)).is_err() {
            return;
        }
        // Up to the length seen now, in bounded chunks: a node that prints faster than it is read
        // cannot keep one look reading.
        let mut left = metadata.len() - state.offset;
        let mut bytes = vec![0; usize::try_from(left.min(READ_CHUNK)).unwrap_or(usize::MAX)];
        let mut added = 0;
        while left > 0 {
            let want = usize::try_from(left.min(READ_CHUNK)).unwrap_or(bytes.len());
            let read = match file.read(&mut bytes[..want]) {
                Ok(0) => break,
                Ok(read) => read,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            left = left.saturating_sub(read as u64);
            let chunk = &bytes[..read];
            match chunk.iter().rposition(|&byte| byte == b'\n') {
                Some(at) => {
                    added += state.consume(&chunk[..=at]);
                    state.mark();
                    added += state.consume(&chunk[at + 1..]);
                }
                None => added += state.consume(chunk),
            }
            state.trim();
        }
        if added > 0 {
            state.last_output = metadata.modified().ok();
            state.last_change = if state.last_change.is_none() {
                metadata.modified().ok()
            } else {
                Some(SystemTime::now())
            };
        }
        state.compact(&self.out, &self.mark);
    }

    /// A receiver that sees every change from now on.
    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// Reads the file again and returns a snapshot of the stream.
    pub(crate) fn look(&self) -> Look {
        self.refresh();
        let state = lock(&self.state);
        state.look()
    }

    /// [`Stream::look`] for a waiter woken at `signal`, the change signal's value it saw before
    /// this call: the file is read only if no look has read it since that value was sent. Every
    /// change the signal announced up to `signal` was in the file before the signal was sent, so
    /// a read started after another waiter saw `signal` holds it; the many waiters of one node
    /// read its file once per change.
    pub(crate) fn look_at(&self, signal: u64) -> Look {
        let mut state = lock(&self.state);
        if state.read_at.is_none_or(|read| read < signal) {
            self.read_into(&mut state);
            state.read_at = Some(signal);
        }
        state.look()
    }

    /// Waits (at most `limit`) until `path` exists, woken by the watch.
    pub(crate) async fn wait_for_file(
        &self,
        path: &std::path::Path,
        limit: std::time::Duration,
    ) -> bool {
        let mut changes = self.subscribe();
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            if path.exists() {
                return true;
            }
            tokio::select! {
                update = changes.changed() => if update.is_err() { return path.exists() },
                () = tokio::time::sleep_until(deadline) => return path.exists(),
            }
        }
    }

    /// Waits until the output has not grown for `quiet`, at most `limit`: after a program's exit,
    /// its last output can still be on its way from tmux through the pipe into the file.
    pub(crate) async fn settle(&self, quiet: std::time::Duration, limit: std::time::Duration) {
        let mut changes = self.subscribe();
        let deadline = tokio::time::Instant::now() + limit;
        let mut cursor = self.cursor();
        loop {
            let until = (tokio::time::Instant::now() + quiet).min(deadline);
            tokio::select! {
                update = changes.changed() => if update.is_err() { return },
                () = tokio::time::sleep_until(until) => {
                    let now = self.cursor();
                    if now == cursor || tokio::time::Instant::now() >= deadline {
                        return;
                    }
                    cursor = now;
                }
            }
            if tokio::time::Instant::now() >= deadline {
                return;
            }
        }
    }

    /// Whether the run wrapper's [`EXIT_MARK`] is in the stream (read up to the file's end).
    pub(crate) fn exit_marked(&self) -> bool {
        self.refresh();
        lock(&self.state).exit_marked
    }

    /// Waits (at most `limit`, woken by the watch) until everything a run node's command printed
    /// is in the stream: its wrapper's [`EXIT_MARK`] has been read, or the output pipe has ended
    /// (`end`, touched once the pipe's reader has written all it got). Answers whether it is.
    pub(crate) async fn wait_for_exit_mark(
        &self,
        end: &std::path::Path,
        limit: std::time::Duration,
    ) -> bool {
        let mut changes = self.subscribe();
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            if self.exit_marked() || end.exists() {
                // The end is touched after the reader's last write: read up to it.
                self.refresh();
                return true;
            }
            tokio::select! {
                update = changes.changed() => if update.is_err() { return self.exit_marked() },
                () = tokio::time::sleep_until(deadline) => return self.exit_marked() || end.exists(),
            }
        }
    }

    /// The current cursor.
    pub(crate) fn cursor(&self) -> u64 {
        self.look().cursor
    }

    /// The text after cursor `since` (all retained text when `None`), whether characters after
    /// `since` were dropped because they are no longer retained, and the cursor at the end of
    /// that text, taken in the same look: an agent that reads on from it misses nothing.
    pub(crate) fn after(&self, since: Option<u64>) -> (String, bool, u64) {
        self.refresh();
        lock(&self.state).after(since)
    }

    /// [`Stream::after`], and [`Stream::search`] for `matcher` from `from` in the same text: the
    /// answer of a text wait that has not matched. That answer reads the file again, so its text
    /// may end past what the waiter's last search saw; searching it too means an answer never
    /// holds a match it does not report (a chained wait's next turn starts near the answer's
    /// cursor, `transport::long_wait`, and would never search it).
    pub(crate) fn after_searched(
        &self,
        since: Option<u64>,
        from: Option<u64>,
        matcher: &Matcher,
    ) -> ((String, bool, u64), Option<(u32, u64)>) {
        self.refresh();
        let state = lock(&self.state);
        let from = from.unwrap_or(state.text_start);
        let found = matcher
            .find_at(&state.text, state.byte_of(from))
            .map(|(index, byte)| (index, state.cursor_at(byte)));
        (state.after(since), found)
    }

    /// Looks for `matcher`'s first match in the text after `from` as of the last read (`None`:
    /// all retained text), without reading the file: the caller has just looked. Answers the
    /// index of the text or pattern that matched and the cursor at the start of its match, and
    /// otherwise the cursor a later search may start from and miss nothing of what it can find
    /// ([`Matcher::overlap`]), so that a waiter searches only what is new.
    pub(crate) fn search(&self, from: Option<u64>, matcher: &Matcher) -> Result<(u32, u64), u64> {
        let state = lock(&self.state);
        let from = from.unwrap_or(state.text_start);
        if let Some((index, byte)) = matcher.find_at(&state.text, state.byte_of(from)) {
            return Ok((index, state.cursor_at(byte)));
        }
        // A match found later ends after the text searched now, so it starts at most the
        // overlap before its end, and a pattern's not before the line still being printed;
        // never before `from`, which may be a cursor still to come.
        let mut resume = state.cursor.saturating_sub(matcher.overlap()).max(from);
        if matcher.is_pattern()
            && let Some(line_feed) = state.text.rfind('\n')
        {
            resume = resume.max(state.cursor_at(line_feed + 1));
        }
        Err(resume)
    }

    /// `terminal_search` in this stream (protocol 1.5.0): the lines of the retained text after
    /// `from` (all of it when `None`) that hold a match of `matcher`, oldest first, at most
    /// `limit`, each with up to `context` lines before and after it (from the same text), and
    /// whether more lines matched. The text is read up to the last look, not from the file.
    pub(crate) fn matching_lines(
        &self,
        node_id: &str,
        from: Option<u64>,
        matcher: &Matcher,
        context: usize,
        limit: usize,
    ) -> (Vec<SearchMatch>, bool) {
        let state = lock(&self.state);
        let text = state.text.as_str();
        let base = state.byte_of(from.unwrap_or(state.text_start));
        let mut found = Vec::new();
        let mut at = base;
        while let Some(start) = matcher.find_start(text, at) {
            let line_start = text[base..start].rfind('\n').map_or(base, |i| base + i + 1);
            let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
            let line = &text[line_start..line_end];
            // The last line feed ends the text's last line: nothing comes after it yet.
            let last = line_start == text.len();
            if !last && matcher.is_match(line) {
                if found.len() == limit {
                    return (found, true);
                }
                found.push(SearchMatch {
                    node_id: node_id.to_owned(),
                    cursor: state.cursor_at(line_start),
                    line: line.to_owned(),
                    before: lines_before(&text[base..line_start], context),
                    after: lines_after(text.get(line_end + 1..).unwrap_or_default(), context),
                });
            }
            if line_end >= text.len() {
                break;
            }
            at = line_end + 1;
        }
        (found, false)
    }
}

/// The last `count` lines of `text` (which ends where a line starts), oldest first.
fn lines_before(text: &str, count: usize) -> Vec<String> {
    let Some(body) = text.strip_suffix('\n') else { return Vec::new() };
    let mut lines: Vec<String> = body.rsplit('\n').take(count).map(str::to_owned).collect();
    lines.reverse();
    lines
}

/// The first `count` lines of `text` (which starts where a line starts; the empty end after a
/// last line feed is no line).
fn lines_after(text: &str, count: usize) -> Vec<String> {
    if text.is_empty() {
        return Vec::new();
    }
    let body = text.strip_suffix('\n').unwrap_or(text);
    body.split('\n').take(count).map(str::to_owned).collect()
}

/// A snapshot of a stream.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Look {
    pub(crate) cursor: u64,
    pub(crate) last_change: Option<SystemTime>,
    /// When the terminal last printed, by its file ([`StreamState::last_output`]).
    pub(crate) last_output: Option<SystemTime>,
    pub(crate) closed: bool,
}

impl StreamState {
    fn look(&self) -> Look {
        Look {
            cursor: self.cursor,
            last_change: self.last_change,
            last_output: self.last_output,
            closed: self.closed,
        }
    }

    /// The state of a stream whose files are `out` and `mark`: at the restart point when the file
    /// was compacted, at its start otherwise.
    fn resumed(out: &std::path::Path, mark: &std::path::Path) -> StreamState {
        let point = std::fs::read_to_string(mark).ok().and_then(|text| {
            let (offset, cursor) = text.trim_end().split_once(' ')?;
            Some((offset.parse::<u64>().ok()?, cursor.parse::<u64>().ok()?))
        });
        match point {
            // A mark past the end of the file belongs to an older file of the same name.
            Some((offset, cursor))
                if std::fs::metadata(out).is_ok_and(|metadata| metadata.len() >= offset) =>
            {
                StreamState {
                    offset,
                    cursor,
                    text_start: cursor,
                    compacted: offset,
                    marks: VecDeque::from([(offset, cursor)]),
                    ..StreamState::default()
                }
            }
            _ => StreamState::default(),
        }
    }

    /// Parses `bytes`, the next bytes of the file, and returns how many characters they added.
    fn consume(&mut self, bytes: &[u8]) -> u64 {
        let mut printer = Printer {
            text: &mut self.text,
            cursor: self.cursor,
            added: 0,
            index: &mut self.index,
            dropped_bytes: self.dropped_bytes,
            exit_marked: &mut self.exit_marked,
        };
        self.parser.0.advance(&mut printer, bytes);
        let added = printer.added;
        self.offset += bytes.len() as u64;
        self.cursor += added;
        added
    }

    /// Records the current position, just after a line feed, as a candidate restart point.
    fn mark(&mut self) {
        if self.marks.back().is_none_or(|&(offset, _)| self.offset >= offset + MARK_SPACING) {
            self.marks.push_back((self.offset, self.cursor));
        }
    }

    /// Records a new restart point and punches the bytes before it out of the file, once
    /// [`COMPACT_BYTES`] have been read past the last one. The point is written first: a crash in
    /// between leaves bytes that are no longer needed, never a mark past punched-out text.
    fn compact(&mut self, out: &std::path::Path, mark: &std::path::Path) {
        // The newest candidate at or before the retained text: everything after it is kept.
        while self.marks.len() >= 2 && self.marks[1].1 <= self.text_start {
            self.marks.pop_front();
        }
        let Some(&(offset, cursor)) = self.marks.front() else { return };
        if self.cannot_punch || cursor > self.text_start || offset < self.compacted + COMPACT_BYTES
        {
            return;
        }
        // Through the one writer of state files: flushed before the bytes it replaces go.
        let point = format!("{offset} {cursor}\n");
        if termsprawl_transport::server::write_atomic(mark, point.as_bytes()).is_err() {
            return;
        }
        self.compacted = offset;
        let punched = std::fs::OpenOptions::new().write(true).open(out).and_then(|file| {
            rustix::fs::fallocate(
                &file,
                rustix::fs::FallocateFlags::PUNCH_HOLE | rustix::fs::FallocateFlags::KEEP_SIZE,
                0,
                offset,
            )
            .map_err(io::Error::from)
        });
        if punched.is_err() {
            self.cannot_punch = true;
        }
    }

    /// The cursor of the character that starts at byte `byte` of the retained text.
    fn cursor_at(&self, byte: usize) -> u64 {
        let absolute = self.dropped_bytes + byte as u64;
        let entry = self.index.partition_point(|&(_, at)| at <= absolute);
        let (from_cursor, from_byte) = match entry.checked_sub(1).map(|entry| self.index[entry]) {
            Some((at, from)) => (at, usize::try_from(from - self.dropped_bytes).unwrap_or(0)),
            None => (self.text_start, 0),
        };
        let from_byte = from_byte.min(byte);
        from_cursor + self.text[from_byte..byte].chars().count() as u64
    }

    /// Drops the oldest characters beyond [`RETAINED_CHARS`].
    fn trim(&mut self) {
        let kept = usize::try_from(self.cursor - self.text_start).unwrap_or(usize::MAX);
        if kept <= RETAINED_CHARS + RETAINED_CHARS / 4 {
            return;
        }
        let drop = kept - RETAINED_CHARS;
        let cut = self.byte_of(self.text_start + drop as u64);
        self.text.drain(..cut);
        self.text_start += drop as u64;
        self.dropped_bytes += cut as u64;
        while self.index.front().is_some_and(|&(cursor, _)| cursor < self.text_start) {
            self.index.pop_front();
        }
    }

    /// [`Stream::after`] of this state.
    fn after(&self, since: Option<u64>) -> (String, bool, u64) {
        let since = since.unwrap_or(self.text_start).min(self.cursor);
        if since < self.text_start {
            return (self.text.clone(), true, self.cursor);
        }
        (self.text[self.byte_of(since)..].to_owned(), false, self.cursor)
    }

    /// The byte of `text` where the character at `cursor` starts (clamped to the retained
    /// text; its length at the end).
    fn byte_of(&self, cursor: u64) -> usize {
        let cursor = cursor.clamp(self.text_start, self.cursor);
        let entry = self.index.partition_point(|&(at, _)| at <= cursor);
        let (from_cursor, from_byte) = match entry.checked_sub(1).map(|entry| self.index[entry]) {
            Some((at, byte)) => (at, usize::try_from(byte - self.dropped_bytes).unwrap_or(0)),
            None => (self.text_start, 0),
        };
        let skip = usize::try_from(cursor - from_cursor).unwrap_or(usize::MAX);
        self.text[from_byte..]
            .char_indices()
            .nth(skip)
            .map_or(self.text.len(), |(index, _)| from_byte + index)
    }
}

#[cfg(test)]
mod tests;
