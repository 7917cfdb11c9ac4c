//! Splitting stdin into lines without ever holding more than the line cap (`spec/mcp.md` §3.1).
//!
//! A line ends at LF; one CR right before the LF is removed; a UTF-8 byte order mark at the very
//! start of the stream is skipped. A line longer than [`MAX_LINE_BYTES`] is not stored: once it
//! passes the cap, the rest of it is counted and dropped up to the next LF, and the reader reports
//! [`Frame::Oversized`]. A last line without LF before end of input is still a line.
//!
//! [`LineReader::next_frame`] is cancel-safe (it is polled inside `select!`): its only await point
//! is one `read` into its own chunk buffer, which reads nothing when it is dropped, and all state
//! lives in the reader between polls.

#[cfg(test)]
mod tests;

use std::io;
use std::mem;

use tokio::io::{AsyncRead, AsyncReadExt};

/// The line cap: 262 144 bytes (256 KiB), terminator excluded.
pub const MAX_LINE_BYTES: usize = 256 * 1024;

/// One read of stdin. Small on purpose: tokio's stdin reads through a buffer of the same size in
/// a blocking thread, so each byte here costs two of resident memory, and a host's requests are
/// lines of a few hundred bytes (issue 26: the bridge within 4 MiB).
const CHUNK_BYTES: usize = 8 * 1024;
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One unit of input.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Frame {
    /// A line, terminator removed.
    Line(Vec<u8>),
    /// A line over the cap, skipped; its length in bytes (terminator excluded).
    Oversized(u64),
}

/// Reads [`Frame`]s from a byte stream.
pub(crate) struct LineReader<R> {
    input: R,
    chunk: Box<[u8]>,
    /// The unread part of `chunk` is `start..end`.
    start: usize,
    end: usize,
    /// The current line; never longer than the cap plus one byte (a CR that may precede the LF).
    line: Vec<u8>,
    /// The length so far of a line that went over the cap and is being skipped.
    skipped: Option<u64>,
    /// No frame has been returned yet (the BOM is only skipped on the first line).
    first: bool,
    eof: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// A reader of `input`.
    pub(crate) fn new(input: R) -> LineReader<R> {
        LineReader {
            input,
            chunk: vec![0; CHUNK_BYTES].into_boxed_slice(),
            start: 0,
            end: 0,
            line: Vec::new(),
            skipped: None,
            first: true,
            eof: false,
        }
    }

    /// The next frame, or `None` at end of input. Cancel-safe.
    pub(crate) async fn next_frame(&mut self) -> io::Result<Option<Frame>> {
        loop {
            if let Some(frame) = self.scan() {
                return Ok(Some(frame));
            }
            if self.eof {
                return Ok(self.finish());
            }
            let read = self.input.read(&mut self.chunk).await?;
            self.start = 0;
            self.end = read;
            self.eof = read == 0;
        }
    }

    /// Consumes buffered bytes up to and including the next LF, if there is one.
    fn scan(&mut self) -> Option<Frame> {
        let unread = &self.chunk[self.start..self.end];
        if let Some(offset) = unread.iter().position(|&byte| byte == b'\n') {
            let lf = self.start + offset;
            self.absorb(self.start, lf);
            self.start = lf + 1;
            return Some(self.take_frame(true));
        }
        self.absorb(self.start, self.end);
        self.start = self.end;
        None
    }

    /// Adds `chunk[from..to]` to the current line, or only counts it once the line is over the cap.
    fn absorb(&mut self, from: usize, to: usize) {
        let piece = &self.chunk[from..to];
        let length = self.line.len() + piece.len();
        match &mut self.skipped {
            Some(skipped) => *skipped += piece.len() as u64,
            None if length <= MAX_LINE_BYTES + 1 => {
                // Grow by doubling, but never past the cap, so that the allocation stays bounded too.
                if self.line.capacity() < length {
                    let target = (self.line.capacity() * 2).clamp(length, MAX_LINE_BYTES + 1);
                    self.line.reserve_exact(target - self.line.len());
                }
                self.line.extend_from_slice(piece);
            }
            None => {
                self.skipped = Some(length as u64);
                self.line.clear();
            }
        }
    }

    /// The frame for the line that just ended, at an LF (`terminated`) or at end of input.
    fn take_frame(&mut self, terminated: bool) -> Frame {
        let first = mem::replace(&mut self.first, false);
        if let Some(skipped) = self.skipped.take() {
            return Frame::Oversized(skipped);
        }
        if terminated && self.line.last() == Some(&b'\r') {
            self.line.pop();
        }
        if self.line.len() > MAX_LINE_BYTES {
            let length = self.line.len() as u64;
            self.line.clear();
            return Frame::Oversized(length);
        }
        let mut line = mem::take(&mut self.line);
        if first && line.starts_with(BOM) {
            line.drain(..BOM.len());
        }
        Frame::Line(line)
    }

    /// The last frame at end of input: an unterminated line, if any.
    fn finish(&mut self) -> Option<Frame> {
        if self.skipped.is_some() || !self.line.is_empty() {
            return Some(self.take_frame(false));
        }
        None
    }

    /// The capacity of the line buffer, for tests of the no-buffering rule.
    #[cfg(test)]
    fn line_capacity(&self) -> usize {
        self.line.capacity()
    }
}
