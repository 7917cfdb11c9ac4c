//! Raw HTTP/1.1 exchanges on a plain [`TcpStream`], for the probes a normal client never sends
//! (wrong methods and paths, odd `Authorization` forms, oversized, chunked, slow and stalled
//! bodies).
//!
//! The only address this module ever connects to is `127.0.0.1:<port>`, where the port comes from
//! an endpoint URL that passed [`termsprawl_transport::discovery::validate_endpoint`]. A request
//! keeps what goes on the wire apart from what a report may show: a [`Header`] carries both, and
//! the secret half is never printed, logged or shown by `Debug`.

use std::fmt::{self, Write as _};
use std::net::{Ipv4Addr, SocketAddrV4};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The most response bytes a probe reads.
const MAX_RESPONSE: usize = 1024 * 1024;

/// One header: what is sent, and how a report shows it.
#[derive(Clone)]
pub(crate) struct Header {
    name: String,
    wire: String,
    shown: String,
}

impl Header {
    /// A header whose value may be shown as it is.
    pub(crate) fn plain(name: &str, value: &str) -> Header {
        Header { name: name.to_owned(), wire: value.to_owned(), shown: value.to_owned() }
    }

    /// A header whose value holds a secret: `shown` describes it (`Bearer <token>`).
    pub(crate) fn secret(name: &str, wire: String, shown: &str) -> Header {
        Header { name: name.to_owned(), wire, shown: shown.to_owned() }
    }
}

impl fmt::Debug for Header {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.name, self.shown)
    }
}

/// How the body goes out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// `content-length` and the whole body at once.
    Whole,
    /// `transfer-encoding: chunked`, in chunks of at most this many bytes.
    Chunked(usize),
    /// `content-length`, the body in this many pieces with a pause between them.
    Slow { pieces: usize, pause: Duration },
    /// `content-length` of the whole body, but only this many bytes are sent; then nothing more
    /// until the answer comes.
    Stall { sent: usize },
    /// No `content-length`, no body.
    None,
}

/// One request as a probe sends it.
#[derive(Debug, Clone)]
pub(crate) struct Probe {
    pub(crate) method: String,
    pub(crate) target: String,
    pub(crate) headers: Vec<Header>,
    pub(crate) body: Vec<u8>,
    pub(crate) framing: Framing,
}

impl Probe {
    /// `POST /call` with a JSON body and no headers yet.
    pub(crate) fn post(body: impl Into<Vec<u8>>) -> Probe {
        Probe {
            method: "POST".to_owned(),
            target: "/call".to_owned(),
            headers: Vec::new(),
            body: body.into(),
            framing: Framing::Whole,
        }
    }

    /// This probe with another method and target.
    #[must_use]
    pub(crate) fn at(mut self, method: &str, target: &str) -> Probe {
        method.clone_into(&mut self.method);
        target.clone_into(&mut self.target);
        self
    }

    /// This probe with one more header.
    #[must_use]
    pub(crate) fn header(mut self, header: Header) -> Probe {
        self.headers.push(header);
        self
    }

    /// This probe with another framing.
    #[must_use]
    pub(crate) fn framing(mut self, framing: Framing) -> Probe {
        self.framing = framing;
        self
    }

    /// What a report shows of the request: method, target, headers as shown (secrets
    /// described, never included), the framing and the start of the body.
    pub(crate) fn describe(&self) -> String {
        let mut text = format!("{} {}", self.method, self.target);
        for header in &self.headers {
            let _ = write!(text, " [{}: {}]", header.name, header.shown);
        }
        match self.framing {
            Framing::Whole | Framing::None => {}
            Framing::Chunked(_) => text.push_str(" [chunked]"),
            Framing::Slow { pieces, pause } => {
                let _ = write!(text, " [in {pieces} pieces, {} ms apart]", pause.as_millis());
            }
            Framing::Stall { sent } => {
                let _ = write!(text, " [only {sent} bytes sent]");
            }
        }
        if self.framing != Framing::None {
            text.push(' ');
            text.push_str(&excerpt(&self.body));
        }
        text
    }

    fn head(&self, port: u16) -> Vec<u8> {
        let mut head =
            format!("{} {} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\n", self.method, self.target);
        for header in &self.headers {
            let _ = write!(head, "{}: {}\r\n", header.name, header.wire);
        }
        match self.framing {
            Framing::Chunked(_) => head.push_str("transfer-encoding: chunked\r\n"),
            Framing::None => {}
            _ => {
                let _ = write!(head, "content-length: {}\r\n", self.body.len());
            }
        }
        head.push_str("connection: close\r\n\r\n");
        head.into_bytes()
    }
}

/// A body for a report: its start, lossily decoded, and its length when cut.
pub(crate) fn excerpt(body: &[u8]) -> String {
    const SHOWN: usize = 160;
    if body.is_empty() {
        return "(empty body)".to_owned();
    }
    let cut = body.len() > SHOWN;
    let text = String::from_utf8_lossy(&body[..body.len().min(SHOWN)]).into_owned();
    let text: String = text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    if cut { format!("{text}… ({} bytes)", body.len()) } else { text }
}

/// One response.
#[derive(Debug, Clone)]
pub(crate) struct Response {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Response {
    /// The first header called `name` (case-insensitive).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(header, _)| header.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// The body as JSON.
    pub(crate) fn json(&self) -> Option<serde_json::Value> {
        serde_json::from_slice(&self.body).ok()
    }

    /// What a report shows of the response.
    pub(crate) fn describe(&self) -> String {
        format!("HTTP {} {}", self.status, excerpt(&self.body))
    }
}

/// Sends `probe` to `127.0.0.1:port` and reads the answer, within `limit`. `Err` says what went
/// wrong on the connection (never with a header value in it).
pub(crate) async fn exchange(
    port: u16,
    probe: &Probe,
    limit: Duration,
) -> Result<Response, String> {
    match tokio::time::timeout(limit, exchange_inner(port, probe)).await {
        Ok(result) => result,
        Err(_) => Err(format!("no answer within {} s", limit.as_secs())),
    }
}

async fn exchange_inner(port: u16, probe: &Probe) -> Result<Response, String> {
    let address = SocketAddrV4::new(Ipv4Addr::LOCALHOST, port);
    let stream = TcpStream::connect(address)
        .await
        .map_err(|error| format!("cannot connect to {address}: {error}"))?;
    let _ = stream.set_nodelay(true);
    let (mut reader, mut writer) = stream.into_split();
    let head = probe.head(port);
    let body = probe.body.clone();
    let framing = probe.framing;
    // The writer runs beside the reader: a server may answer (and close) before the body is
    // all sent. Its write half is handed back, not dropped, so that a stalled request does not
    // end with a FIN.
    let sending = tokio::spawn(async move {
        let outcome = send(&mut writer, &head, &body, framing).await;
        (writer, outcome)
    });
    let response = read_response(&mut reader).await;
    drop(sending);
    response
}

async fn send(
    writer: &mut tokio::net::tcp::OwnedWriteHalf,
    head: &[u8],
    body: &[u8],
    framing: Framing,
) -> std::io::Result<()> {
    writer.write_all(head).await?;
    match framing {
        Framing::Whole => writer.write_all(body).await?,
        Framing::None => {}
        Framing::Chunked(size) => {
            for chunk in body.chunks(size.max(1)) {
                writer.write_all(format!("{:x}\r\n", chunk.len()).as_bytes()).await?;
                writer.write_all(chunk).await?;
                writer.write_all(b"\r\n").await?;
            }
            writer.write_all(b"0\r\n\r\n").await?;
        }
        Framing::Slow { pieces, pause } => {
            let size = body.len().div_ceil(pieces.max(1)).max(1);
            for (index, piece) in body.chunks(size).enumerate() {
                if index > 0 {
                    tokio::time::sleep(pause).await;
                }
                writer.write_all(piece).await?;
                writer.flush().await?;
            }
        }
        Framing::Stall { sent } => {
            writer.write_all(&body[..sent.min(body.len())]).await?;
            writer.flush().await?;
            std::future::pending::<()>().await;
        }
    }
    writer.flush().await
}

async fn read_response(reader: &mut tokio::net::tcp::OwnedReadHalf) -> Result<Response, String> {
    let mut buffer = Vec::new();
    let mut chunk = vec![0_u8; 16 * 1024];
    let (status, headers, body_start) = loop {
        let read =
            reader.read(&mut chunk).await.map_err(|error| format!("reading failed: {error}"))?;
        if read == 0 {
            return Err(if buffer.is_empty() {
                "the server closed the connection without an answer".to_owned()
            } else {
                format!("the connection closed inside the answer's head: {}", excerpt(&buffer))
            });
        }
        buffer.extend_from_slice(&chunk[..read]);
        let mut parsed = [httparse::EMPTY_HEADER; 64];
        let mut response = httparse::Response::new(&mut parsed);
        match response.parse(&buffer) {
            Ok(httparse::Status::Complete(length)) => {
                let status = response.code.unwrap_or(0);
                let headers: Vec<(String, String)> = response
                    .headers
                    .iter()
                    .map(|header| {
                        (header.name.to_owned(), String::from_utf8_lossy(header.value).into_owned())
                    })
                    .collect();
                break (status, headers, length);
            }
            Ok(httparse::Status::Partial) if buffer.len() < MAX_RESPONSE => {}
            Ok(httparse::Status::Partial) => return Err("the answer's head is too long".to_owned()),
            Err(error) => {
                return Err(format!("not an HTTP answer ({error}): {}", excerpt(&buffer)));
            }
        }
    };
    let mut rest = buffer.split_off(body_start);
    let find = |name: &str| {
        headers.iter().find(|(header, _)| header.eq_ignore_ascii_case(name)).map(|(_, v)| v.clone())
    };
    let chunked = find("transfer-encoding")
        .is_some_and(|value| value.to_ascii_lowercase().contains("chunked"));
    let length = find("content-length").and_then(|value| value.trim().parse::<usize>().ok());
    let body = if chunked {
        read_chunked(reader, rest).await?
    } else if let Some(length) = length {
        while rest.len() < length.min(MAX_RESPONSE) {
            let read = reader
                .read(&mut chunk)
                .await
                .map_err(|error| format!("reading failed: {error}"))?;
            if read == 0 {
                return Err(format!("the body ended after {} of {length} bytes", rest.len()));
            }
            rest.extend_from_slice(&chunk[..read]);
        }
        rest.truncate(length);
        rest
    } else {
        // Until the server closes (or nothing for a moment, for a server that keeps it open).
        loop {
            match tokio::time::timeout(Duration::from_secs(2), reader.read(&mut chunk)).await {
                Ok(Ok(read)) if read > 0 && rest.len() < MAX_RESPONSE => {
                    rest.extend_from_slice(&chunk[..read]);
                }
                _ => break rest,
            }
        }
    };
    Ok(Response { status, headers, body })
}

async fn read_chunked(
    reader: &mut tokio::net::tcp::OwnedReadHalf,
    mut pending: Vec<u8>,
) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    let mut chunk = vec![0_u8; 16 * 1024];
    loop {
        if let Some(line_end) = pending.windows(2).position(|pair| pair == b"\r\n") {
            let size_line = String::from_utf8_lossy(&pending[..line_end]).into_owned();
            let size_text = size_line.split(';').next().unwrap_or("").trim();
            let size = usize::from_str_radix(size_text, 16)
                .map_err(|_| format!("bad chunk size {size_text:?}"))?;
            if size == 0 {
                return Ok(body);
            }
            if pending.len() >= line_end + 2 + size + 2 {
                body.extend_from_slice(&pending[line_end + 2..line_end + 2 + size]);
                pending.drain(..line_end + 2 + size + 2);
                if body.len() > MAX_RESPONSE {
                    return Err("the answer is too long".to_owned());
                }
                continue;
            }
        }
        let read =
            reader.read(&mut chunk).await.map_err(|error| format!("reading failed: {error}"))?;
        if read == 0 {
            return Err("the chunked body ended early".to_owned());
        }
        pending.extend_from_slice(&chunk[..read]);
    }
}

/// Whether something accepts TCP connections on `address:port` (no byte is sent).
pub(crate) async fn accepts(address: Ipv4Addr, port: u16) -> bool {
    let connect = TcpStream::connect(SocketAddrV4::new(address, port));
    matches!(tokio::time::timeout(Duration::from_secs(2), connect).await, Ok(Ok(_)))
}
