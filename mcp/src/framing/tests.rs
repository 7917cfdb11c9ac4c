//! Unit tests of the line reader: splitting, terminators, the BOM, the cap and cancel-safety.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWriteExt, ReadBuf};

use super::{Frame, LineReader, MAX_LINE_BYTES};

/// Yields the given chunks, one per read.
struct Chunks(VecDeque<Vec<u8>>);

impl AsyncRead for Chunks {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if let Some(mut chunk) = self.0.pop_front() {
            let length = chunk.len().min(buf.remaining());
            buf.put_slice(&chunk[..length]);
            if length < chunk.len() {
                self.0.push_front(chunk.split_off(length));
            }
        }
        Poll::Ready(Ok(()))
    }
}

/// `length` bytes of `x`, then `tail`, produced without holding them all.
struct Huge {
    remaining: usize,
    tail: VecDeque<u8>,
}

impl AsyncRead for Huge {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.remaining > 0 {
            let length = self.remaining.min(buf.remaining());
            buf.put_slice(&vec![b'x'; length]);
            self.remaining -= length;
        } else {
            while buf.remaining() > 0 {
                let Some(byte) = self.tail.pop_front() else { break };
                buf.put_slice(&[byte]);
            }
        }
        Poll::Ready(Ok(()))
    }
}

async fn frames(chunks: &[&[u8]]) -> Vec<Frame> {
    let mut reader = LineReader::new(Chunks(chunks.iter().map(|chunk| chunk.to_vec()).collect()));
    let mut frames = Vec::new();
    while let Some(frame) = reader.next_frame().await.unwrap() {
        frames.push(frame);
    }
    frames
}

fn line(text: &[u8]) -> Frame {
    Frame::Line(text.to_vec())
}

#[tokio::test]
async fn lines_end_at_lf_and_one_cr_before_it_is_removed() {
    assert_eq!(
        frames(&[b"a\nb\r\nc\r\r\nd\re\n\n\r\n"]).await,
        [line(b"a"), line(b"b"), line(b"c\r"), line(b"d\re"), line(b""), line(b"")]
    );
}

#[tokio::test]
async fn terminators_split_across_reads_are_found() {
    assert_eq!(
        frames(&[b"ab", b"c\r", b"\n", b"\nd", b"e\r"]).await,
        [line(b"abc"), line(b""), line(b"de\r")]
    );
}

#[tokio::test]
async fn a_last_line_without_lf_is_a_line_and_empty_input_has_none() {
    assert_eq!(frames(&[b"x\ny"]).await, [line(b"x"), line(b"y")]);
    assert_eq!(frames(&[]).await, []);
    assert_eq!(frames(&[b"\n"]).await, [line(b"")]);
}

#[tokio::test]
async fn a_bom_is_skipped_at_the_start_of_the_stream_only() {
    assert_eq!(
        frames(&[b"\xEF\xBB", b"\xBFa\n\xEF\xBB\xBFb\n"]).await,
        [line(b"a"), line(b"\xEF\xBB\xBFb")]
    );
    assert_eq!(frames(&[b"\xEF\xBBa\n"]).await, [line(b"\xEF\xBBa")]);
}

#[tokio::test]
async fn the_cap_excludes_the_terminator() {
    let at_cap = vec![b'x'; MAX_LINE_BYTES];
    let mut input = at_cap.clone();
    input.extend_from_slice(b"\r\n");
    input.extend_from_slice(&at_cap);
    input.extend_from_slice(b"\n");
    input.extend_from_slice(&at_cap);
    input.extend_from_slice(b"y\r\nz\n");
    assert_eq!(
        frames(&[&input]).await,
        [
            Frame::Line(at_cap.clone()),
            Frame::Line(at_cap),
            Frame::Oversized(MAX_LINE_BYTES as u64 + 2),
            line(b"z")
        ]
    );
}

#[tokio::test]
async fn an_oversized_last_line_is_reported_at_end_of_input() {
    let input = vec![b'x'; MAX_LINE_BYTES + 10];
    assert_eq!(frames(&[&input]).await, [Frame::Oversized(MAX_LINE_BYTES as u64 + 10)]);
}

#[tokio::test]
async fn a_huge_line_is_skipped_without_being_stored() {
    let size = 20 * 1024 * 1024;
    let mut reader =
        LineReader::new(Huge { remaining: size, tail: b"\nnext\n".iter().copied().collect() });
    assert_eq!(reader.next_frame().await.unwrap(), Some(Frame::Oversized(size as u64)));
    assert!(reader.line_capacity() <= MAX_LINE_BYTES + 1, "{}", reader.line_capacity());
    assert_eq!(reader.next_frame().await.unwrap(), Some(line(b"next")));
    assert_eq!(reader.next_frame().await.unwrap(), None);
}

#[tokio::test]
async fn the_line_buffer_never_grows_past_the_cap() {
    // Just under the cap, delivered in uneven pieces, so that the buffer grows several times.
    let mut reader = LineReader::new(Chunks(
        [vec![b'x'; 1000], vec![b'x'; 70_000], vec![b'x'; MAX_LINE_BYTES - 71_000], b"\n".to_vec()]
            .into_iter()
            .collect(),
    ));
    let mut peak = 0;
    let frame = loop {
        tokio::select! {
            biased;
            frame = reader.next_frame() => break frame.unwrap(),
            () = std::future::ready(()) => {}
        }
        peak = peak.max(reader.line_capacity());
    };
    assert_eq!(frame, Some(Frame::Line(vec![b'x'; MAX_LINE_BYTES])));
    assert!(peak <= MAX_LINE_BYTES + 1, "{peak}");
}

#[tokio::test]
async fn next_frame_is_cancel_safe() {
    let (mut writer, reader) = tokio::io::duplex(16);
    let mut reader = LineReader::new(reader);
    writer.write_all(b"{\"a\":").await.unwrap();
    // Polled and dropped while the line is incomplete: nothing may be lost.
    let attempt = tokio::time::timeout(Duration::ZERO, reader.next_frame()).await;
    assert!(attempt.is_err(), "no line yet");
    writer.write_all(b"1}\nrest").await.unwrap();
    assert_eq!(reader.next_frame().await.unwrap(), Some(line(b"{\"a\":1}")));
    let attempt = tokio::time::timeout(Duration::ZERO, reader.next_frame()).await;
    assert!(attempt.is_err(), "no line yet");
    drop(writer);
    assert_eq!(reader.next_frame().await.unwrap(), Some(line(b"rest")));
    assert_eq!(reader.next_frame().await.unwrap(), None);
}
