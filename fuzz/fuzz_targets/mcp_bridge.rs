//! Fuzz target: the MCP bridge's input side, whole (`termsprawl_mcp::serve_with`, `spec/mcp.md`
//! §3.1 – §3.8 and both eras of `docs/mcp-eras.md`), on a current-thread runtime per input with a
//! fake tool caller.
//!
//! Input: the first byte sets the knobs (what `session_info` answers, how many bytes one read
//! returns, the call limit, whether the reader pauses before every read so that call tasks run
//! between lines); the second picks the operations `session_info` lists (low four bits) and the
//! narrowing flags (bit 4 `--read-only`, bits 5 – 7 a `--tools` list); the rest is stdin. In
//! stdin, the five bytes `00 FF hi lo b` stand for `(hi·256 + lo) · 64` copies of byte `b` (up to
//! 4 MiB, 8 MiB per input; for an LF, `(hi·256 + lo) mod 4097` empty lines), so that lines far
//! over the 256 KiB cap cost the fuzzer five bytes.
//!
//! Oracles, written from the spec and `docs/mcp-eras.md` (the protocol crate gives only data: the
//! table's catalog entries and titles, the guide texts and the short `instructions`):
//! - every output line is one compact JSON-RPC response with the strict envelope of §3.8
//!   (`jsonrpc`, `id`, then exactly one of `result` (an object) or `error` (`code`, `message`,
//!   maybe `data`), no `null`, id a string or an i64 integer), at most 8 MiB, LF-terminated;
//! - the answers are exactly the ones the documents allow: a model splits stdin into lines,
//!   classifies each one and follows the connection's era (legacy until a `server/discover` or a
//!   modern `_meta`, legacy again after an `initialize`); every answer must match one expected
//!   answer with the same id (never an answer to an unusable id, to a notification, to a line that
//!   is not answered), every expected answer must come, except answers that wait for a task
//!   (`tools/call`, `server/discover`, a modern `tools/list`, a legacy one that may have been held
//!   for a handshake) that a later `notifications/cancelled` may have cancelled (at most one per
//!   cancellation); where the scheduler decides which handshake finished first, the answer must be
//!   one of those the finished handshakes allow;
//! - memory is bounded for long lines: while a repeated run longer than the cap is read, the
//!   bridge allocates at most the cap plus slack, and never one block larger than the cap plus
//!   slack (a counting global allocator measures it);
//! - `serve_with` returns `Ok`, every log line is one line of bounded length, and nothing panics.
//!   A hang is caught by libFuzzer's `-timeout`.

#![no_main]
#![expect(unsafe_code, reason = "a counting global allocator has to implement GlobalAlloc")]

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value, json};
use termsprawl_fuzz::spec::{Kind, OPERATIONS, READ_ONLY, TOPICS, arguments};
use termsprawl_fuzz::take_byte;
use termsprawl_mcp::{
    MAX_LINE_BYTES, MAX_RESPONSE_BYTES, Options, ToolCaller, ToolFilter, serve_with,
};
use termsprawl_protocol::{ToolRequest, ToolResult, Topic, guide, instructions, operations};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

// ---------------------------------------------------------------------------------------------
// Counting allocator.

/// The system allocator, counting live bytes, the peak since [`mark`] and the largest block since
/// [`mark`].
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static LARGEST: AtomicUsize = AtomicUsize::new(0);

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn grew(size: usize) {
    let live = LIVE.fetch_add(size, Ordering::Relaxed) + size;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged; the counters
// are plain atomics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded as received.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded as received.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded as received.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        grew(new_size);
        LARGEST.fetch_max(new_size, Ordering::Relaxed);
        // SAFETY: forwarded as received.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Starts a measurement; returns the live bytes now.
fn mark() -> usize {
    let live = LIVE.load(Ordering::Relaxed);
    PEAK.store(live, Ordering::Relaxed);
    LARGEST.store(0, Ordering::Relaxed);
    live
}

/// Slack for what else happens while a long line is read: call tasks finishing and their answers
/// being written.
const SLACK: usize = 1024 * 1024;
/// The largest block the bridge may allocate while a long line is read: the line buffer (cap + 1
/// byte for a CR) plus room for an answer line.
const LARGEST_BLOCK: usize = MAX_LINE_BYTES + 1 + 64 * 1024;

// ---------------------------------------------------------------------------------------------
// Input.

/// A piece of stdin: bytes as they are, or one byte repeated.
#[derive(Debug, Clone, Copy)]
enum Segment<'a> {
    Bytes(&'a [u8]),
    Repeat(u8, usize),
}

impl Segment<'_> {
    fn len(self) -> usize {
        match self {
            Segment::Bytes(bytes) => bytes.len(),
            Segment::Repeat(_, count) => count,
        }
    }

    /// A run long enough to go over the cap on its own, and without line ends.
    fn is_long_line(self) -> bool {
        matches!(self, Segment::Repeat(byte, count) if byte != b'\n' && count > MAX_LINE_BYTES)
    }
}

const REPEAT_UNIT: usize = 64;
const REPEAT_BUDGET: usize = 8 * 1024 * 1024;

fn segments(mut stream: &[u8]) -> Vec<Segment<'_>> {
    let mut segments = Vec::new();
    let mut budget = REPEAT_BUDGET;
    let mut literal_start = stream;
    let mut literal_len = 0;
    while !stream.is_empty() {
        if let [0, 0xFF, hi, lo, byte, rest @ ..] = stream {
            let units = usize::from(*hi) << 8 | usize::from(*lo);
            // Empty lines are cheap to write and slow to serve one by one: a few thousand do.
            let count = if *byte == b'\n' { units % 4097 } else { units * REPEAT_UNIT };
            if count <= budget {
                budget -= count;
                if literal_len > 0 {
                    segments.push(Segment::Bytes(&literal_start[..literal_len]));
                }
                segments.push(Segment::Repeat(*byte, count));
                stream = rest;
                literal_start = stream;
                literal_len = 0;
                continue;
            }
        }
        stream = &stream[1..];
        literal_len += 1;
    }
    if literal_len > 0 {
        segments.push(Segment::Bytes(&literal_start[..literal_len]));
    }
    segments
}

/// Stdin: serves the segments in reads of at most `chunk` bytes (at least 16 KiB inside a repeat),
/// never mixing two segments in one read, optionally returning `Pending` once before every read,
/// and measuring the bridge's memory while a long line goes by.
struct Feed<'a> {
    segments: Vec<Segment<'a>>,
    index: usize,
    offset: usize,
    chunk: usize,
    pause: bool,
    paused: bool,
    /// The live bytes when the current long line started, while one is being read.
    base: Option<usize>,
    /// The worst (growth, largest block) seen over all long lines.
    worst: (usize, usize),
}

impl Feed<'_> {
    fn measure(&mut self) {
        if let Some(base) = self.base {
            let growth = PEAK.load(Ordering::Relaxed).saturating_sub(base);
            let largest = LARGEST.load(Ordering::Relaxed);
            self.worst = (self.worst.0.max(growth), self.worst.1.max(largest));
        }
    }
}

impl AsyncRead for Feed<'_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let feed = &mut *self;
        if feed.pause && !feed.paused {
            feed.paused = true;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        feed.paused = false;
        feed.measure();
        while feed.index < feed.segments.len() && feed.offset == feed.segments[feed.index].len() {
            feed.index += 1;
            feed.offset = 0;
            // The long line, if one was being read, is now wholly in the bridge.
            feed.base = None;
        }
        let Some(&segment) = feed.segments.get(feed.index) else {
            return Poll::Ready(Ok(()));
        };
        if feed.offset == 0 && segment.is_long_line() {
            feed.base = Some(mark());
        }
        let remaining = segment.len() - feed.offset;
        let limit = match segment {
            Segment::Bytes(_) => feed.chunk,
            Segment::Repeat(..) => feed.chunk.max(16 * 1024),
        };
        let count = remaining.min(limit).min(buf.remaining());
        match segment {
            Segment::Bytes(bytes) => buf.put_slice(&bytes[feed.offset..feed.offset + count]),
            Segment::Repeat(byte, _) => {
                let start = buf.filled().len();
                buf.initialize_unfilled_to(count).fill(byte);
                buf.set_filled(start + count);
            }
        }
        feed.offset += count;
        Poll::Ready(Ok(()))
    }
}

/// Stdout: keeps each complete line separately (no buffer that doubles as the output grows, which
/// the memory measurement would see).
#[derive(Default)]
struct Sink {
    partial: Vec<u8>,
    lines: Vec<Vec<u8>>,
}

impl AsyncWrite for Sink {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let sink = &mut *self;
        for piece in data.split_inclusive(|&byte| byte == b'\n') {
            sink.partial.extend_from_slice(piece);
            if piece.ends_with(b"\n") {
                let line = std::mem::take(&mut sink.partial);
                sink.lines.push(line);
            }
        }
        Poll::Ready(Ok(data.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

// ---------------------------------------------------------------------------------------------
// The fake tool server.

/// Answers `session_info` with the scripted result and every other call with [`fake_result`],
/// after yielding to the scheduler a number of times that the arguments choose.
struct Fake {
    session_info: Value,
}

impl ToolCaller for Fake {
    fn call(&self, request: ToolRequest) -> Pin<Box<dyn Future<Output = ToolResult> + Send + '_>> {
        Box::pin(async move {
            let args = request.args_value();
            let yields = args.get("yield").and_then(Value::as_u64).unwrap_or(0) % 16;
            for _ in 0..yields {
                tokio::task::yield_now().await;
            }
            let result = if request.operation() == Some("session_info") {
                self.session_info.clone()
            } else {
                fake_result(request.operation().unwrap_or_default(), &args)
            };
            ToolResult::from_value(result).expect("the fake writes tool results")
        })
    }
}

/// The fake's answer to a call, as the JSON of a tool result:
/// - `{"fail": x}` → `{"ok":false,"error":"failed: <x as JSON>"}`;
/// - `{"empty": …}` → `{"ok":true}`;
/// - `{"image": x, "mimeType": y}` → `{"ok":true,"value":{"image":x,"mimeType":y}}` (each member
///   only when given), so that the image mapping meets every type;
/// - anything else → `{"ok":true,"value":{"operation":…,"members":<count>}}`.
fn fake_result(operation: &str, args: &Value) -> Value {
    if let Some(fail) = args.get("fail") {
        return json!({"ok": false, "error": format!("failed: {fail}")});
    }
    if args.get("empty").is_some() {
        return json!({"ok": true});
    }
    if args.get("image").is_some() || args.get("mimeType").is_some() {
        let mut value = Map::new();
        for member in ["image", "mimeType"] {
            if let Some(given) = args.get(member) {
                value.insert(member.to_owned(), given.clone());
            }
        }
        return json!({"ok": true, "value": value});
    }
    let members = args.as_object().map_or(0, Map::len);
    json!({"ok": true, "value": {"operation": operation, "members": members}})
}

/// What `session_info` answers, from the first knob and the low four bits of the operations byte.
fn session_info(mode: u8, pick: u8) -> Value {
    let mut listed: Vec<Value> = OPERATIONS
        .iter()
        .enumerate()
        .filter(|(index, _)| (index + usize::from(pick & 0x0F)) % 3 != 0)
        .map(|(_, (name, _))| json!(name))
        .collect();
    listed.extend([json!("not_an_operation"), json!(7), json!("canvas_list")]);
    match mode % 4 {
        0 => json!({"ok": true, "value": {"appVersion": "1.2.3", "operations": listed}}),
        1 => json!({"ok": true, "value": {"appVersion": ""}}),
        2 => json!({"ok": true, "value": {"operations": "all", "appVersion": 5}}),
        _ => json!({"ok": false, "error": "Tool connection unavailable: session info failed"}),
    }
}

/// The `--tools` lists that bits 5 – 7 of the operations byte choose: 0 is no `--tools`, 7 is every
/// operation in reverse table order (the list is still in table order).
const NAME_SETS: [&[&str]; 7] = [
    &[],
    &["terminal_open", "terminal_read", "terminal_submit"],
    &["session_info"],
    &["sticky_open", "guide_read", "agent_send", "browser_screenshot", "canvas_list"],
    &["browser_screenshot"],
    &["terminal_read", "context_read", "terminal_read"],
    &["artifact_open", "agent_reply", "canvas_move"],
];

/// The narrowing flags of `termsprawlctl mcp` (`--read-only`, bit 4 of the operations byte, and
/// `--tools`), as `docs/mcp-eras.md` says they act.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Narrowing {
    read_only: bool,
    names: Option<Vec<&'static str>>,
}

impl Narrowing {
    fn from_byte(pick: u8) -> Narrowing {
        let names = match pick >> 5 {
            0 => None,
            7 => Some(OPERATIONS.iter().rev().map(|(name, _)| *name).collect()),
            set => Some(NAME_SETS[usize::from(set)].to_vec()),
        };
        Narrowing { read_only: pick & 0x10 != 0, names }
    }

    /// Whether the bridge lists and serves `name`: both flags keep it.
    fn keeps(&self, name: &str) -> bool {
        (!self.read_only || READ_ONLY.contains(&name))
            && self.names.as_ref().is_none_or(|names| names.contains(&name))
    }

    /// The same flags as the bridge takes them (its input, not the oracle).
    fn filter(&self) -> ToolFilter {
        ToolFilter::new(self.read_only, self.names.as_deref()).expect("the sets name operations")
    }
}

// ---------------------------------------------------------------------------------------------
// The model of `spec/mcp.md` §3.1 – §3.6 and `docs/mcp-eras.md`.

/// The handshake-era revisions, oldest first (`spec/mcp.md` §3.3).
const LEGACY_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
/// What `initialize` answers for a version it does not speak, and what is assumed before one.
const NEWEST_LEGACY: &str = "2025-11-25";
/// The stateless revision.
const MODERN_VERSION: &str = "2026-07-28";
/// `supportedVersions`, newest first.
const SUPPORTED: [&str; 5] = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
const CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";
const GUIDE_PREFIX: &str = "termsprawl://guides/";

/// Whether `revision` is `since` or later (the dates compare as strings).
fn from(revision: &str, since: &str) -> bool {
    revision >= since
}

/// An id as the spec compares them: same JSON type and value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Id {
    Number(i64),
    String(String),
}

/// A usable id (§3.2): a string, or a number literal without fraction or exponent within i64.
fn usable_id(value: &Value) -> Option<Id> {
    match value {
        Value::String(text) => Some(Id::String(text.clone())),
        Value::Number(number) => {
            let literal = number.to_string();
            let digits = literal.strip_prefix('-').unwrap_or(&literal);
            if digits.is_empty() || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
                return None;
            }
            literal.parse().ok().map(Id::Number)
        }
        _ => None,
    }
}

/// What one answer with a given id must be.
#[derive(Debug, Clone, PartialEq)]
enum Expect {
    /// Exactly this compact `result:…` or `error:…` part (member order is contract).
    Exact(String),
    /// One of these `{"result": …}` values, compared as JSON values (member order free): the lists,
    /// whose entries' member order no document fixes, and answers that depend on which handshake
    /// had finished.
    Json(Vec<Arc<Value>>),
    /// An `error` with code -32602 and a message starting `Invalid params: ` (the detail is not
    /// contract).
    InvalidParams,
}

impl Expect {
    /// The order answers are matched in, so that a greedy match is a match: exact ones first, then
    /// the choices (fewest first; the choice sets only grow along the input), then any error.
    fn rank(&self) -> usize {
        match self {
            Expect::Exact(_) => 0,
            Expect::Json(choices) => choices.len(),
            Expect::InvalidParams => usize::MAX,
        }
    }

    fn matches(&self, answer: &Answer) -> bool {
        match self {
            Expect::Exact(exact) => answer.part == *exact,
            Expect::Json(choices) => choices.iter().any(|choice| **choice == answer.value),
            Expect::InvalidParams => {
                let error = &answer.value["error"];
                error["code"] == json!(-32602)
                    && error["message"]
                        .as_str()
                        .is_some_and(|message| message.starts_with("Invalid params: "))
            }
        }
    }
}

/// The answers stdin calls for.
#[derive(Default)]
struct Expected {
    /// By id, in line order: each answer and whether a later cancellation may remove it.
    by_id: HashMap<Id, Vec<(Expect, bool)>>,
    /// How many answers with an id later cancellations may have removed.
    cancellable: HashMap<Id, usize>,
}

/// The model's view of one input: the session and flags it was given, and what the lines so far
/// did to the connection.
struct Model {
    session_info: Value,
    narrowing: Narrowing,
    /// In the 2026-07-28 era (a `server/discover` or a modern `_meta`, no `initialize` since).
    modern: bool,
    /// The revisions the `initialize` requests so far negotiated, without repeats.
    initialized: Vec<&'static str>,
}

impl Model {
    fn new(session_info: Value, narrowing: Narrowing) -> Model {
        Model { session_info, narrowing, modern: false, initialized: Vec::new() }
    }

    /// Splits stdin into lines as §3.1 says and classifies each one.
    fn expect(&mut self, segments: &[Segment<'_>]) -> Expected {
        let mut expected = Expected::default();
        let mut line = Vec::new();
        let mut length = 0_usize;
        let mut first = true;
        let mut end_line = |line: &mut Vec<u8>, length: &mut usize, terminated: bool| {
            let mut used = *length;
            if terminated && line.last() == Some(&b'\r') && used <= MAX_LINE_BYTES + 1 {
                line.pop();
                used -= 1;
            }
            if used <= MAX_LINE_BYTES {
                // The byte order mark counts towards the cap; it is skipped on the first line.
                let text =
                    if first && line.starts_with(b"\xEF\xBB\xBF") { &line[3..] } else { &line[..] };
                self.line(text, &mut expected);
            }
            first = false;
            line.clear();
            *length = 0;
        };
        for &segment in segments {
            match segment {
                Segment::Bytes(bytes) => {
                    for piece in bytes.split_inclusive(|&byte| byte == b'\n') {
                        let (body, terminated) = match piece.strip_suffix(b"\n") {
                            Some(body) => (body, true),
                            None => (piece, false),
                        };
                        let room = (MAX_LINE_BYTES + 2).saturating_sub(line.len());
                        line.extend_from_slice(&body[..body.len().min(room)]);
                        length += body.len();
                        if terminated {
                            end_line(&mut line, &mut length, true);
                        }
                    }
                }
                Segment::Repeat(b'\n', count) => {
                    for _ in 0..count {
                        end_line(&mut line, &mut length, true);
                    }
                }
                Segment::Repeat(byte, count) => {
                    let room = (MAX_LINE_BYTES + 2).saturating_sub(line.len());
                    line.resize(line.len() + count.min(room), byte);
                    length += count;
                }
            }
        }
        if length > 0 {
            end_line(&mut line, &mut length, false);
        }
        expected
    }

    /// §3.2: one line.
    fn line(&mut self, line: &[u8], expected: &mut Expected) {
        if line.iter().all(|byte| matches!(byte, b' ' | b'\t' | b'\r' | b'\n')) {
            return;
        }
        let Ok(text) = std::str::from_utf8(line) else { return };
        let Ok(Value::Object(message)) = serde_json::from_str::<Value>(text) else { return };
        let method = message.get("method").and_then(Value::as_str);
        let Some(raw_id) = message.get("id") else {
            if method == Some("notifications/cancelled")
                && let Some(id) = message
                    .get("params")
                    .and_then(|params| params.get("requestId"))
                    .and_then(usable_id)
            {
                // At most one cancellable request with this id that came before is not answered.
                let before = expected
                    .by_id
                    .get(&id)
                    .map_or(0, |answers| answers.iter().filter(|(_, may)| *may).count());
                let cancellable = expected.cancellable.entry(id).or_default();
                if *cancellable < before {
                    *cancellable += 1;
                }
            }
            return;
        };
        let Some(id) = usable_id(raw_id) else { return };
        if message.get("jsonrpc") != Some(&json!("2.0")) {
            return;
        }
        let Some(method) = method else { return };
        let answer = match message.get("params") {
            None => self.request(method, None),
            Some(Value::Object(params)) => self.request(method, Some(params)),
            Some(_) => (Expect::InvalidParams, false),
        };
        expected.by_id.entry(id).or_default().push(answer);
    }

    /// A request: its answer and whether a cancellation may remove it (the answers that wait for
    /// a task: calls, `server/discover`, a modern `tools/list`, a legacy one held for a handshake).
    fn request(&mut self, method: &str, params: Option<&Map<String, Value>>) -> (Expect, bool) {
        let member = |name: &str| params.and_then(|params| params.get(name));
        if method == "initialize" {
            // Whatever `_meta` it has, and from either era: the connection is legacy again.
            self.modern = false;
            return (self.initialize(member("protocolVersion")), false);
        }
        let meta = member("_meta");
        let enveloped =
            meta.and_then(Value::as_object).is_some_and(|meta| meta.contains_key(VERSION_KEY));
        if method == "server/discover" || enveloped {
            self.modern = true;
            return self.modern_request(method, params);
        }
        if self.modern {
            return (Expect::InvalidParams, false);
        }
        let immediate = |expect: Expect| (expect, false);
        match method {
            "ping" => immediate(Expect::Exact(result(&json!({})))),
            "tools/list" | "resources/list" | "resources/templates/list"
                if member("cursor").is_some() =>
            {
                immediate(Expect::InvalidParams)
            }
            "tools/list" => self.legacy_tools_list(),
            "tools/call" => self.tools_call(member("name"), member("arguments"), false),
            "resources/list" => immediate(self.legacy_resources_list()),
            "resources/read" => immediate(resources_read(member("uri"), false)),
            // No templates; the list answers because `resources` is declared (issue 24).
            "resources/templates/list" => {
                immediate(Expect::Exact(result(&json!({"resourceTemplates": []}))))
            }
            _ => immediate(error(-32601, "Method not found", None)),
        }
    }

    /// A request of the 2026-07-28 era: the `_meta` rules first, then the method.
    fn modern_request(&self, method: &str, params: Option<&Map<String, Value>>) -> (Expect, bool) {
        let member = |name: &str| params.and_then(|params| params.get(name));
        let meta = member("_meta").and_then(Value::as_object);
        let version = meta.and_then(|meta| meta.get(VERSION_KEY));
        let capabilities = meta.and_then(|meta| meta.get(CAPABILITIES_KEY));
        let (Some(Value::String(version)), Some(Value::Object(_))) = (version, capabilities) else {
            return (Expect::InvalidParams, false);
        };
        if version != MODERN_VERSION {
            let data = json!({"supported": SUPPORTED, "requested": version});
            return (error(-32022, "Unsupported protocol version", Some(data)), false);
        }
        match method {
            "server/discover" => (self.discover(), true),
            "tools/list" | "resources/list" | "resources/templates/list"
                if member("cursor").is_some() =>
            {
                (Expect::InvalidParams, false)
            }
            "tools/list" => (self.modern_tools_list(), true),
            "tools/call" => self.tools_call(member("name"), member("arguments"), true),
            "resources/list" => {
                let value = json!({
                    "resultType": "complete",
                    "resources": resources(true),
                    "ttlMs": 3_600_000,
                    "cacheScope": "public",
                });
                (Expect::Json(vec![Arc::new(json!({"result": value}))]), false)
            }
            "resources/read" => (resources_read(member("uri"), true), false),
            "resources/templates/list" => {
                let value = json!({
                    "resultType": "complete",
                    "resourceTemplates": [],
                    "ttlMs": 3_600_000,
                    "cacheScope": "public",
                });
                (Expect::Json(vec![Arc::new(json!({"result": value}))]), false)
            }
            // `ping` and `logging/setLevel` are removed in 2026-07-28.
            _ => (error(-32601, "Method not found", None), false),
        }
    }

    fn session_value(&self) -> Option<&Map<String, Value>> {
        if self.session_info["ok"] == json!(true) {
            self.session_info["value"].as_object()
        } else {
            None
        }
    }

    /// The error that a request waiting for a failed `session_info` gets.
    fn session_failure(&self) -> Option<Expect> {
        (self.session_info["ok"] != json!(true))
            .then(|| error(-32603, self.session_info["error"].as_str().unwrap_or_default(), None))
    }

    /// `session_info`'s `operations`, when it is an array: its strings.
    fn listed(&self) -> Option<Vec<String>> {
        match self.session_value()?.get("operations")? {
            Value::Array(names) => {
                Some(names.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            }
            _ => None,
        }
    }

    fn server_info(&self, titled: bool) -> Value {
        let version = match self.session_value().and_then(|value| value.get("appVersion")) {
            Some(Value::String(version)) if !version.is_empty() => version.clone(),
            _ => "unknown".to_owned(),
        };
        if titled {
            json!({"name": "termsprawl", "title": "termsprawl", "version": version})
        } else {
            json!({"name": "termsprawl", "version": version})
        }
    }

    /// §3.3 with the titles and resources of `docs/mcp-eras.md`.
    fn initialize(&mut self, requested: Option<&Value>) -> Expect {
        let version = match requested {
            Some(Value::String(requested)) => LEGACY_VERSIONS
                .into_iter()
                .find(|version| version == requested)
                .unwrap_or(NEWEST_LEGACY),
            _ => NEWEST_LEGACY,
        };
        if !self.initialized.contains(&version) {
            self.initialized.push(version);
        }
        if let Some(failure) = self.session_failure() {
            return failure;
        }
        // 2024-11-05 keeps the reference's shape: tools only, no title.
        let capabilities = if version == "2024-11-05" {
            json!({"tools": {}})
        } else {
            json!({"tools": {}, "resources": {}})
        };
        Expect::Exact(result(&json!({
            "protocolVersion": version,
            "capabilities": capabilities,
            "serverInfo": self.server_info(from(version, "2025-06-18")),
            "instructions": instructions(),
        })))
    }

    /// §3.4 and "no list that depends on timing": before any `initialize` (or when `session_info`
    /// fails, which changes nothing) the narrowed table in the newest legacy shape; after one, the
    /// list of a finished handshake, in the shape of one of the revisions negotiated so far (which
    /// one finished last is up to the scheduler). A list after an `initialize` may have been held
    /// for it, and a held list can be cancelled.
    fn legacy_tools_list(&self) -> (Expect, bool) {
        let held = !self.initialized.is_empty();
        if self.session_failure().is_some() || !held {
            return (Expect::Json(vec![self.tools_result(NEWEST_LEGACY, None)]), held);
        }
        let listed = self.listed();
        let choices =
            self.initialized.iter().map(|version| self.tools_result(version, listed.as_deref()));
        (Expect::Json(choices.collect()), true)
    }

    /// `{"result":{"tools":[…]}}` in the shape of `revision`, cached (there are only a few
    /// distinct lists, and building one costs more than running the bridge on a short input).
    fn tools_result(&self, revision: &'static str, listed: Option<&[String]>) -> Arc<Value> {
        let key = format!("legacy {revision} {listed:?} {:?}", self.narrowing);
        cached(key, || json!({"result": {"tools": self.tool_entries(revision, listed)}}))
    }

    /// The entries of the table that the flags and `listed` keep, in table order: the protocol's
    /// catalog entry (the 2024-11-05 shape), with `annotations.title` from 2025-03-26 on and
    /// `title` from 2025-06-18 on.
    fn tool_entries(&self, revision: &str, listed: Option<&[String]>) -> Vec<Value> {
        operations()
            .iter()
            .filter(|op| self.narrowing.keeps(op.name()))
            .filter(|op| listed.is_none_or(|listed| listed.iter().any(|name| name == op.name())))
            .map(|op| {
                let mut entry = op.tool_json();
                if from(revision, "2025-03-26") {
                    entry["annotations"]["title"] = json!(op.title());
                }
                if from(revision, "2025-06-18") {
                    entry["title"] = json!(op.title());
                }
                entry
            })
            .collect()
    }

    /// A legacy `resources/list`, answered at once in the shape of the revision negotiated so far:
    /// the newest before a handshake has finished, else one of those negotiated.
    fn legacy_resources_list(&self) -> Expect {
        let mut revisions = vec![NEWEST_LEGACY];
        if self.session_failure().is_none() {
            revisions.extend(&self.initialized);
        }
        let mut choices: Vec<Arc<Value>> = Vec::new();
        for titled in [true, false] {
            if revisions.iter().any(|revision| from(revision, "2025-06-18") == titled) {
                choices.push(Arc::new(json!({"result": {"resources": resources(titled)}})));
            }
        }
        Expect::Json(choices)
    }

    fn discover(&self) -> Expect {
        if let Some(failure) = self.session_failure() {
            return failure;
        }
        Expect::Exact(result(&json!({
            "resultType": "complete",
            "supportedVersions": SUPPORTED,
            "capabilities": {"tools": {}, "resources": {}},
            "_meta": {SERVER_INFO_KEY: self.server_info(true)},
            "instructions": instructions(),
            "ttlMs": 3_600_000,
            "cacheScope": "public",
        })))
    }

    /// A modern `tools/list`: its own `session_info` filters it.
    fn modern_tools_list(&self) -> Expect {
        if let Some(failure) = self.session_failure() {
            return failure;
        }
        let listed = self.listed();
        let key = format!("modern {listed:?} {:?} {}", self.narrowing, self.server_info(true));
        Expect::Json(vec![cached(key, || {
            json!({"result": {
                "resultType": "complete",
                "tools": self.tool_entries(MODERN_VERSION, listed.as_deref()),
                "ttlMs": 60_000,
                "cacheScope": "private",
                "_meta": {SERVER_INFO_KEY: self.server_info(true)},
            }})
        })])
    }

    /// §3.5 (steps 1 – 3 here, the result mapping in [`call_answer`]), narrowed by the flags.
    fn tools_call(
        &self,
        name: Option<&Value>,
        given: Option<&Value>,
        modern: bool,
    ) -> (Expect, bool) {
        let Some(Value::String(name)) = name else { return (Expect::InvalidParams, false) };
        if arguments(name).is_none() || !self.narrowing.keeps(name) {
            return (error(-32602, &format!("Unknown tool: {name}"), None), false);
        }
        let args = match given {
            None | Some(Value::Null) => json!({}),
            Some(args @ Value::Object(_)) => args.clone(),
            Some(_) => return (Expect::InvalidParams, false),
        };
        let tool_result = if name == "session_info" {
            self.session_info.clone()
        } else {
            fake_result(name, &args)
        };
        (Expect::Exact(call_answer(&tool_result, modern)), true)
    }
}

fn cached(key: String, build: impl FnOnce() -> Value) -> Arc<Value> {
    static CACHE: Mutex<Option<HashMap<String, Arc<Value>>>> = Mutex::new(None);
    let mut cache = CACHE.lock().unwrap();
    let cache = cache.get_or_insert_with(HashMap::new);
    Arc::clone(cache.entry(key).or_insert_with(|| Arc::new(build())))
}

/// The guides as resources (`docs/mcp-eras.md`), in the order of the `guide_read` enum.
fn resources(titled: bool) -> Vec<Value> {
    TOPICS
        .iter()
        .map(|topic| {
            let mut entry = json!({
                "uri": format!("{GUIDE_PREFIX}{topic}"),
                "name": format!("guide_{topic}"),
                "description": format!("The termsprawl {topic} guide: the text guide_read returns for topic {topic}."),
                "mimeType": "text/markdown",
            });
            if titled {
                let text = guide_text(topic);
                let heading = text.lines().next().unwrap_or_default();
                entry["title"] = json!(heading.strip_prefix("# ").unwrap_or(heading));
            }
            entry
        })
        .collect()
}

/// The guide text of `topic` (one of [`TOPICS`]), bundled in the protocol crate.
fn guide_text(topic: &str) -> &'static str {
    let topic = Topic::ALL.into_iter().find(|known| known.as_str() == topic);
    guide(topic.expect("the spec's topics are the protocol's"))
}

/// `resources/read`: a string `uri` naming a guide exactly; an unknown one is `-32002` in the legacy
/// era and `-32602` in the modern one.
fn resources_read(uri: Option<&Value>, modern: bool) -> Expect {
    let Some(Value::String(uri)) = uri else { return Expect::InvalidParams };
    let topic = uri
        .strip_prefix(GUIDE_PREFIX)
        .and_then(|topic| TOPICS.iter().find(|known| **known == topic));
    let Some(topic) = topic else {
        let code = if modern { -32602 } else { -32002 };
        return error(code, "Resource not found", Some(json!({"uri": uri})));
    };
    let contents = json!([{"uri": uri, "mimeType": "text/markdown", "text": guide_text(topic)}]);
    let value = if modern {
        json!({"resultType": "complete", "contents": contents, "ttlMs": 3_600_000, "cacheScope": "public"})
    } else {
        json!({"contents": contents})
    };
    Expect::Json(vec![Arc::new(json!({"result": value}))])
}

fn result(value: &Value) -> String {
    format!("result:{value}")
}

fn error(code: i64, message: &str, data: Option<Value>) -> Expect {
    let mut error = json!({"code": code, "message": message});
    if let Some(data) = data {
        error["data"] = data;
    }
    Expect::Exact(format!("error:{error}"))
}

/// §3.5 step 5: the answer to a call whose tool result is `result` (the fake's JSON); in the modern
/// era `resultType` comes first.
fn call_answer(tool_result: &Value, modern: bool) -> String {
    let ok = tool_result["ok"] == json!(true);
    let value = &tool_result["value"];
    let block = match (&value["image"], ok && value.is_object()) {
        (Value::String(image), true) if !image.is_empty() => {
            let mime_type = match &value["mimeType"] {
                Value::String(mime_type) if mime_type.starts_with("image/") => mime_type.clone(),
                _ => "image/png".to_owned(),
            };
            json!({"type": "image", "data": image, "mimeType": mime_type})
        }
        _ => json!({"type": "text", "text": tool_result.to_string()}),
    };
    if modern {
        result(&json!({"resultType": "complete", "isError": !ok, "content": [block]}))
    } else {
        result(&json!({"isError": !ok, "content": [block]}))
    }
}

// ---------------------------------------------------------------------------------------------
// Output checks.

/// One answer line: its `result:…`/`error:…` part, and the same as `{"result"|"error": …}`.
#[derive(Debug)]
struct Answer {
    part: String,
    value: Value,
}

/// §3.8: one response with the strict envelope; its id and answer.
fn envelope(line: &[u8]) -> (Id, Answer) {
    assert!(line.len() <= MAX_RESPONSE_BYTES, "a response line of {} bytes", line.len());
    let text = std::str::from_utf8(line).expect("stdout is UTF-8");
    let value: Value = serde_json::from_str(text).expect("every stdout line is JSON");
    assert_eq!(value.to_string(), text, "a stdout line is not compact JSON");
    let Value::Object(mut members) = value else {
        panic!("a stdout line is not an object: {text}")
    };
    let keys: Vec<&str> = members.keys().map(String::as_str).collect();
    assert!(
        keys == ["jsonrpc", "id", "result"] || keys == ["jsonrpc", "id", "error"],
        "envelope members {keys:?}: {text}"
    );
    assert_eq!(members["jsonrpc"], json!("2.0"));
    let id = match &members["id"] {
        id @ Value::Number(_) => {
            usable_id(id).unwrap_or_else(|| panic!("id is not an i64: {text}"))
        }
        Value::String(id) => Id::String(id.clone()),
        other => panic!("id {other} is neither a string nor an integer"),
    };
    let answer = match (members.shift_remove("result"), members.shift_remove("error")) {
        (Some(result @ Value::Object(_)), None) => {
            Answer { part: format!("result:{result}"), value: json!({"result": result}) }
        }
        (None, Some(Value::Object(error))) => {
            let keys: Vec<&str> = error.keys().map(String::as_str).collect();
            assert!(
                keys == ["code", "message"] || keys == ["code", "message", "data"],
                "error members {keys:?}: {text}"
            );
            assert!(usable_id(&error["code"]).is_some(), "error code is not an integer: {text}");
            assert!(error["message"].is_string(), "error message is not a string: {text}");
            assert!(!error.get("data").is_some_and(Value::is_null), "data is null: {text}");
            let error = Value::Object(error);
            Answer { part: format!("error:{error}"), value: json!({"error": error}) }
        }
        _ => panic!("neither a result object nor an error object: {text}"),
    };
    (id, answer)
}

/// Matches the answers against what the model expects.
fn check_answers(mut expected: Expected, answers: Vec<(Id, Answer)>) {
    let mut by_id: HashMap<Id, Vec<Answer>> = HashMap::new();
    for (id, answer) in answers {
        by_id.entry(id).or_default().push(answer);
    }
    for (id, answers) in by_id {
        let wanted = expected.by_id.remove(&id).unwrap_or_default();
        let cancellable = expected.cancellable.remove(&id).unwrap_or(0);
        if let Err(problem) = assign(wanted, &answers, cancellable) {
            panic!("id {id:?}: {problem}");
        }
    }
    for (id, wanted) in expected.by_id {
        let cancellable = expected.cancellable.get(&id).copied().unwrap_or(0);
        if let Err(problem) = assign(wanted, &[], cancellable) {
            panic!("id {id:?}: {problem}");
        }
    }
}

/// Whether the answers of one id can be assigned to its expected answers: each answer to one
/// expectation it matches, every expectation that cannot be cancelled answered, at most
/// `cancellable` of the others not.
///
/// A greedy pass (expectations that must be answered first, each group with the most specific
/// first) settles every ordinary input at once; when it fails, a maximum bipartite matching that
/// serves the must-be-answered expectations first decides (an answer shared by several
/// expectations with overlapping choices can fool the greedy pass only).
fn assign(
    mut wanted: Vec<(Expect, bool)>,
    answers: &[Answer],
    cancellable: usize,
) -> Result<(), String> {
    wanted.sort_by_key(|(expect, may_be_cancelled)| (*may_be_cancelled, expect.rank()));
    let mut free: Vec<&Answer> = answers.iter().collect();
    let mut missing = 0;
    let mut greedy = true;
    for (expect, may_be_cancelled) in &wanted {
        match free.iter().position(|answer| expect.matches(answer)) {
            Some(found) => {
                free.swap_remove(found);
            }
            None if *may_be_cancelled => missing += 1,
            None => {
                greedy = false;
                break;
            }
        }
    }
    if greedy && free.is_empty() && missing <= cancellable {
        return Ok(());
    }
    // Kuhn's augmenting paths; an expectation once matched stays matched, so the ones that must
    // be answered, tried first, keep their answers.
    let edges: Vec<Vec<usize>> = wanted
        .iter()
        .map(|(expect, _)| {
            (0..answers.len()).filter(|&answer| expect.matches(&answers[answer])).collect()
        })
        .collect();
    let mut owner: Vec<Option<usize>> = vec![None; answers.len()];
    let mut unmatched = Vec::new();
    for expectation in 0..wanted.len() {
        let mut seen = vec![false; answers.len()];
        if !augment(expectation, &edges, &mut owner, &mut seen) {
            unmatched.push(expectation);
        }
    }
    if let Some(&must) = unmatched.iter().find(|&&expectation| !wanted[expectation].1) {
        return Err(format!("no answer {:?} among {answers:?}", wanted[must].0));
    }
    if let Some(answer) = owner.iter().position(Option::is_none) {
        return Err(format!("an answer nothing asked for: {}", answers[answer].part));
    }
    if unmatched.len() > cancellable {
        let missing: Vec<&Expect> =
            unmatched.iter().map(|&expectation| &wanted[expectation].0).collect();
        return Err(format!("not answered, with {cancellable} cancellations: {missing:?}"));
    }
    Ok(())
}

/// One augmenting path from `expectation` (Kuhn's algorithm); `owner` is the expectation each
/// answer is assigned to.
fn augment(
    expectation: usize,
    edges: &[Vec<usize>],
    owner: &mut [Option<usize>],
    seen: &mut [bool],
) -> bool {
    for &answer in &edges[expectation] {
        if seen[answer] {
            continue;
        }
        seen[answer] = true;
        if owner[answer].is_none_or(|other| augment(other, edges, owner, seen)) {
            owner[answer] = Some(expectation);
            return true;
        }
    }
    false
}

// ---------------------------------------------------------------------------------------------

const CHUNKS: [usize; 8] = [1, 2, 7, 64, 1000, 65_536, 1 << 20, usize::MAX];
const CALL_LIMITS: [usize; 4] = [1, 2, 4, 64];

/// The oracle's table (typed in from the spec) and the crate's agree on the names, their order and
/// the read-only hints; a protocol change the oracle has not learned fails the first input, not a
/// lucky one.
fn check_the_oracle_knows_the_table() {
    let crate_names: Vec<&str> =
        operations().iter().map(termsprawl_protocol::Operation::name).collect();
    let oracle_names: Vec<&str> = OPERATIONS.iter().map(|(name, _)| *name).collect();
    assert_eq!(oracle_names, crate_names, "fuzz/src/spec.rs OPERATIONS is not the crate's table");
    for operation in operations() {
        assert_eq!(
            READ_ONLY.contains(&operation.name()),
            operation.annotations().read_only,
            "fuzz/src/spec.rs READ_ONLY disagrees with the crate on {}",
            operation.name()
        );
        for param in operation.params() {
            let kind = arguments(operation.name())
                .and_then(|args| args.iter().find(|arg| arg.0 == param.name()))
                .map(|arg| arg.1);
            assert_eq!(
                kind == Some(Kind::Cursor),
                param.is_cursor(),
                "fuzz/src/spec.rs disagrees with the crate on whether {}.{} is a cursor",
                operation.name(),
                param.name()
            );
        }
    }
}

static ORACLE_CHECKED: std::sync::Once = std::sync::Once::new();

fuzz_target!(|data: &[u8]| {
    ORACLE_CHECKED.call_once(check_the_oracle_knows_the_table);
    let mut input = data;
    let knobs = take_byte(&mut input);
    let pick = take_byte(&mut input);
    let session_info = session_info(knobs & 0b11, pick);
    let narrowing = Narrowing::from_byte(pick);
    let segments = segments(input);
    let expected = Model::new(session_info.clone(), narrowing.clone()).expect(&segments);

    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_time().build().expect("a runtime");
    let logs = Arc::new(Mutex::new(Vec::new()));
    let options = Options::default()
        .log_with({
            let logs = Arc::clone(&logs);
            move |line: &str| logs.lock().unwrap().push(line.to_owned())
        })
        .eof_grace(Duration::from_secs(30))
        .max_calls_in_flight(CALL_LIMITS[usize::from(knobs >> 5 & 0b11)])
        .tools(narrowing.filter());
    let mut feed = Feed {
        segments,
        index: 0,
        offset: 0,
        chunk: CHUNKS[usize::from(knobs >> 2 & 0b111)],
        pause: knobs & 0x80 != 0,
        paused: false,
        base: None,
        worst: (0, 0),
    };
    let mut sink = Sink::default();
    let caller: Arc<dyn ToolCaller> = Arc::new(Fake { session_info });
    let served = runtime.block_on(serve_with(&mut feed, &mut sink, caller, options));
    drop(runtime);
    served.expect("serve_with returns Ok at end of input");

    let (growth, largest) = feed.worst;
    assert!(growth <= MAX_LINE_BYTES + 1 + SLACK, "{growth} bytes allocated during a long line");
    assert!(largest <= LARGEST_BLOCK, "a block of {largest} bytes allocated during a long line");

    assert!(sink.partial.is_empty(), "stdout ends without LF: {:?}", sink.partial);
    let answers = sink
        .lines
        .iter()
        .map(|line| envelope(line.strip_suffix(b"\n").expect("lines end with LF")))
        .collect();
    check_answers(expected, answers);

    for line in logs.lock().unwrap().iter() {
        assert!(!line.contains('\n'), "a log line spans lines: {line:?}");
        assert!(line.len() <= 2048, "a log line of {} bytes", line.len());
    }
});
