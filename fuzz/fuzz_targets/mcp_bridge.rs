//! Fuzz target: the MCP bridge's input side, whole (`termsprawl_mcp::serve_with`, `spec/mcp.md`
//! §3.1 – §3.8), on a current-thread runtime per input with a fake tool caller.
//!
//! Input: the first byte sets the knobs (what `session_info` answers, how many bytes one read
//! returns, the call limit, whether the reader pauses before every read so that call tasks run
//! between lines); the second picks the operations `session_info` lists; the rest is stdin. In
//! stdin, the five bytes `00 FF hi lo b` stand for `(hi·256 + lo) · 64` copies of byte `b` (up to
//! 4 MiB, 8 MiB per input; for an LF, `(hi·256 + lo) mod 4097` empty lines), so that lines far
//! over the 256 KiB cap cost the fuzzer five bytes.
//!
//! Oracles, written from the spec:
//! - every output line is one compact JSON-RPC response with the strict envelope of §3.8
//!   (`jsonrpc`, `id`, then exactly one of `result` (an object) or `error` (`code`, `message`,
//!   maybe `data`), no `null`, id a string or an i64 integer), at most 8 MiB, LF-terminated;
//! - the answers are exactly the ones the spec allows: a model of §3.1 – §3.5 splits stdin into
//!   lines and classifies each one; every answer must match one expected answer with the same id
//!   (never an answer to an unusable id, to a notification, to a line that is not answered), every
//!   expected answer must come, except `tools/call`s that a later `notifications/cancelled` may
//!   have cancelled (at most one per cancellation);
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
use termsprawl_fuzz::spec::{OPERATIONS, arguments};
use termsprawl_fuzz::take_byte;
use termsprawl_mcp::{MAX_LINE_BYTES, MAX_RESPONSE_BYTES, Options, ToolCaller, serve_with};
use termsprawl_protocol::{ToolRequest, ToolResult, Topic, guide, operations};
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

/// What `session_info` answers, from the first knob and the operations byte.
fn session_info(mode: u8, pick: u8) -> Value {
    let mut listed: Vec<Value> = OPERATIONS
        .iter()
        .enumerate()
        .filter(|(index, _)| (index + usize::from(pick)) % 3 != 0)
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

// ---------------------------------------------------------------------------------------------
// The model of §3.1 – §3.5.

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

/// What one answer with a given id must be: the compact JSON of its `result` or `error` member.
#[derive(Debug, Clone, PartialEq)]
enum Expect {
    /// Exactly this.
    Exact(String),
    /// One of these (a `tools/list` that may see a finished handshake or not).
    OneOf(Vec<String>),
    /// An `error` with code -32602 and a message starting `Invalid params: ` (the detail is not
    /// contract).
    InvalidParams,
}

/// The answers stdin calls for.
#[derive(Default)]
struct Expected {
    /// Answers that must come, by id.
    must: HashMap<Id, Vec<Expect>>,
    /// `tools/call` answers, by id, in line order; a cancellation may remove some.
    calls: HashMap<Id, Vec<String>>,
    /// How many calls with an id later cancellations may have removed.
    cancellable: HashMap<Id, usize>,
}

/// The model's view of one input: the session it was given.
struct Model {
    session_info: Value,
    full_list: Option<String>,
    filtered_list: Option<String>,
    initialize_seen: bool,
}

impl Model {
    fn new(session_info: Value) -> Model {
        Model { session_info, full_list: None, filtered_list: None, initialize_seen: false }
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
                // At most one call with this id that came before is not answered.
                let before = expected.calls.get(&id).map_or(0, Vec::len);
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
        let params = match message.get("params") {
            None => None,
            Some(Value::Object(params)) => Some(params),
            Some(_) => {
                expected.must.entry(id).or_default().push(Expect::InvalidParams);
                return;
            }
        };
        let member = |name: &str| params.and_then(|params| params.get(name));
        let answer = match method {
            "initialize" => self.initialize(member("protocolVersion")),
            "ping" => Expect::Exact(result("{}")),
            "tools/list" if member("cursor").is_some() => Expect::InvalidParams,
            "tools/list" => self.tools_list(),
            "tools/call" => {
                let Some(Value::String(name)) = member("name") else {
                    expected.must.entry(id).or_default().push(Expect::InvalidParams);
                    return;
                };
                if arguments(name).is_none() {
                    let message = format!("Unknown tool: {name}");
                    expected.must.entry(id).or_default().push(error(-32602, &message));
                    return;
                }
                let args = match member("arguments") {
                    None | Some(Value::Null) => json!({}),
                    Some(args @ Value::Object(_)) => args.clone(),
                    Some(_) => {
                        expected.must.entry(id).or_default().push(Expect::InvalidParams);
                        return;
                    }
                };
                let answer = if name == "session_info" {
                    call_answer(&self.session_info)
                } else {
                    call_answer(&fake_result(name, &args))
                };
                expected.calls.entry(id).or_default().push(answer);
                return;
            }
            _ => error(-32601, "Method not found"),
        };
        expected.must.entry(id).or_default().push(answer);
    }

    /// §3.3.
    fn initialize(&mut self, requested: Option<&Value>) -> Expect {
        self.initialize_seen = true;
        let versions = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
        let version = match requested {
            Some(Value::String(requested)) if versions.contains(&requested.as_str()) => {
                requested.as_str()
            }
            _ => "2025-11-25",
        };
        if self.session_info["ok"] == json!(false) {
            return error(-32603, self.session_info["error"].as_str().unwrap_or_default());
        }
        let app_version = match &self.session_info["value"]["appVersion"] {
            Value::String(version) if !version.is_empty() => version.clone(),
            _ => "unknown".to_owned(),
        };
        let value = json!({
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "termsprawl", "version": app_version},
            "instructions": guide(Topic::Overview),
        });
        Expect::Exact(result(&value.to_string()))
    }

    /// §3.4: the whole table before a handshake has finished, else filtered by the handshake's
    /// `operations`, when it listed them.
    fn tools_list(&mut self) -> Expect {
        let full = self.full_list.get_or_insert_with(|| tools_list_part(None)).clone();
        let listed = match &self.session_info["value"]["operations"] {
            Value::Array(names) if self.session_info["ok"] == json!(true) => names.clone(),
            _ => return Expect::Exact(full),
        };
        if !self.initialize_seen {
            return Expect::Exact(full);
        }
        let filtered =
            self.filtered_list.get_or_insert_with(|| tools_list_part(Some(&listed))).clone();
        Expect::OneOf(vec![full, filtered])
    }
}

/// The `result:` part of a `tools/list` answer: the table's entries whose names `listed` has, or
/// all of them. Cached: there are only a few distinct lists, and building one costs more than
/// running the bridge on a short input.
fn tools_list_part(listed: Option<&[Value]>) -> String {
    static CACHE: Mutex<Vec<(Option<Vec<Value>>, String)>> = Mutex::new(Vec::new());
    let mut cache = CACHE.lock().unwrap();
    if let Some((_, part)) = cache.iter().find(|(key, _)| key.as_deref() == listed) {
        return part.clone();
    }
    let tools: Vec<Value> = operations()
        .iter()
        .filter(|op| listed.is_none_or(|listed| listed.contains(&json!(op.name()))))
        .map(termsprawl_protocol::Operation::tool_json)
        .collect();
    let part = result(&json!({"tools": tools}).to_string());
    cache.push((listed.map(<[Value]>::to_vec), part.clone()));
    part
}

fn result(value: &str) -> String {
    format!("result:{value}")
}

fn error(code: i64, message: &str) -> Expect {
    Expect::Exact(format!("error:{}", json!({"code": code, "message": message})))
}

/// §3.5 step 5: the answer to a call whose tool result is `result` (the fake's JSON).
fn call_answer(tool_result: &Value) -> String {
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
    result(&json!({"isError": !ok, "content": [block]}).to_string())
}

// ---------------------------------------------------------------------------------------------
// Output checks.

/// §3.8: one response with the strict envelope; its id and `result:`/`error:` part.
fn envelope(line: &[u8]) -> (Id, String) {
    assert!(line.len() <= MAX_RESPONSE_BYTES, "a response line of {} bytes", line.len());
    let text = std::str::from_utf8(line).expect("stdout is UTF-8");
    let value: Value = serde_json::from_str(text).expect("every stdout line is JSON");
    assert_eq!(value.to_string(), text, "a stdout line is not compact JSON");
    let Value::Object(members) = value else { panic!("a stdout line is not an object: {text}") };
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
    let part = match (members.get("result"), members.get("error")) {
        (Some(result @ Value::Object(_)), None) => format!("result:{result}"),
        (None, Some(Value::Object(error))) => {
            let keys: Vec<&str> = error.keys().map(String::as_str).collect();
            assert!(
                keys == ["code", "message"] || keys == ["code", "message", "data"],
                "error members {keys:?}: {text}"
            );
            assert!(usable_id(&error["code"]).is_some(), "error code is not an integer: {text}");
            assert!(error["message"].is_string(), "error message is not a string: {text}");
            assert!(!error.get("data").is_some_and(Value::is_null), "data is null: {text}");
            format!("error:{}", Value::Object(error.clone()))
        }
        _ => panic!("neither a result object nor an error object: {text}"),
    };
    (id, part)
}

/// Matches the answers against what the model expects.
fn check_answers(mut expected: Expected, answers: Vec<(Id, String)>) {
    let mut by_id: HashMap<Id, Vec<String>> = HashMap::new();
    for (id, part) in answers {
        by_id.entry(id).or_default().push(part);
    }
    for (id, mut parts) in by_id {
        let mut must = expected.must.remove(&id).unwrap_or_default();
        let mut calls = expected.calls.remove(&id).unwrap_or_default();
        let cancellable = expected.cancellable.remove(&id).unwrap_or(0);
        // Exact answers first, then the ones with a choice, so that a greedy match is a match.
        must.sort_by_key(|expect| match expect {
            Expect::Exact(_) => 0,
            Expect::OneOf(_) => 1,
            Expect::InvalidParams => 2,
        });
        for expect in must {
            let found = parts.iter().position(|part| match &expect {
                Expect::Exact(exact) => part == exact,
                Expect::OneOf(choices) => choices.contains(part),
                Expect::InvalidParams => {
                    let error: Option<Value> = part
                        .strip_prefix("error:")
                        .and_then(|text| serde_json::from_str(text).ok());
                    error.is_some_and(|error| {
                        error["code"] == json!(-32602)
                            && error["message"]
                                .as_str()
                                .is_some_and(|message| message.starts_with("Invalid params: "))
                    })
                }
            });
            let Some(found) = found else {
                panic!("id {id:?}: no answer {expect:?} among {parts:?}");
            };
            parts.swap_remove(found);
        }
        for part in parts {
            let Some(found) = calls.iter().position(|call| *call == part) else {
                panic!("id {id:?}: an answer nothing asked for: {part}");
            };
            calls.swap_remove(found);
        }
        assert!(calls.len() <= cancellable, "id {id:?}: calls not answered: {calls:?}");
    }
    assert!(expected.must.is_empty(), "requests not answered: {:?}", expected.must);
    for (id, calls) in expected.calls {
        let cancellable = expected.cancellable.get(&id).copied().unwrap_or(0);
        assert!(calls.len() <= cancellable, "id {id:?}: calls not answered: {calls:?}");
    }
}

// ---------------------------------------------------------------------------------------------

const CHUNKS: [usize; 8] = [1, 2, 7, 64, 1000, 65_536, 1 << 20, usize::MAX];
const CALL_LIMITS: [usize; 4] = [1, 2, 4, 64];

fuzz_target!(|data: &[u8]| {
    let mut input = data;
    let knobs = take_byte(&mut input);
    let pick = take_byte(&mut input);
    let session_info = session_info(knobs & 0b11, pick);
    let segments = segments(input);
    let expected = Model::new(session_info.clone()).expect(&segments);

    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_time().build().expect("a runtime");
    let logs = Arc::new(Mutex::new(Vec::new()));
    let options = Options::default()
        .log_with({
            let logs = Arc::clone(&logs);
            move |line: &str| logs.lock().unwrap().push(line.to_owned())
        })
        .eof_grace(Duration::from_secs(30))
        .max_calls_in_flight(CALL_LIMITS[usize::from(knobs >> 5 & 0b11)]);
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
