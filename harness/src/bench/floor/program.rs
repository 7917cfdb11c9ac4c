//! The floor program of `cargo xtask bench`: the least work a tool call can be on this machine.
//!
//! `floor SESSION_FILE` reads the session file and `<grandparent>/endpoint.json`, sends one
//! HTTP/1.1 `POST /call` of `guide_read` `{"topic":"canvas"}` with the bearer token over one
//! blocking loopback TCP connection, and prints the response body and a newline. It exits 0 on
//! HTTP 200, 1 on another status and 2 when the call could not be made.
//!
//! It is compiled by the xtask with `rustc -O`, standard library only, and is not a workspace
//! member. It parses no JSON: it finds the two string members it needs in the compact files the
//! server writes, and it trusts the server's `Content-Length`. Anything less would not be a call.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddrV4, TcpStream};
use std::path::Path;
use std::process::ExitCode;

const BODY: &str = r#"{"operation":"guide_read","args":{"topic":"canvas"}}"#;

fn main() -> ExitCode {
    match call() {
        Ok(200) => ExitCode::SUCCESS,
        Ok(_) => ExitCode::from(1),
        Err(reason) => {
            eprintln!("floor: {reason}");
            ExitCode::from(2)
        }
    }
}

/// The call; the HTTP status.
fn call() -> Result<u16, String> {
    let session_file = std::env::args_os().nth(1).ok_or("usage: floor SESSION_FILE")?;
    let session_file = Path::new(&session_file);
    let session = std::fs::read_to_string(session_file)
        .map_err(|error| format!("cannot read the session file: {error}"))?;
    let token = string_member(&session, "token").ok_or("the session file has no token")?;
    let endpoint_file = session_file
        .parent()
        .and_then(Path::parent)
        .ok_or("the session file has no grandparent directory")?
        .join("endpoint.json");
    let endpoint = std::fs::read_to_string(&endpoint_file)
        .map_err(|error| format!("cannot read endpoint.json: {error}"))?;
    let port: u16 = string_member(&endpoint, "url")
        .and_then(|url| url.strip_prefix("http://127.0.0.1:"))
        .and_then(|rest| rest.strip_suffix("/call"))
        .and_then(|port| port.parse().ok())
        .ok_or("Invalid local endpoint")?;

    let mut stream = TcpStream::connect(SocketAddrV4::new(Ipv4Addr::LOCALHOST, port))
        .map_err(|error| format!("cannot connect: {error}"))?;
    let _ = stream.set_nodelay(true);
    let request = format!(
        "POST /call HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{BODY}",
        BODY.len()
    );
    stream.write_all(request.as_bytes()).map_err(|error| format!("cannot send: {error}"))?;

    let mut received = Vec::with_capacity(16 * 1024);
    let mut chunk = [0_u8; 16 * 1024];
    let head_end = loop {
        if let Some(at) = received.windows(4).position(|window| window == b"\r\n\r\n") {
            break at + 4;
        }
        let count = read(&mut stream, &mut chunk)?;
        received.extend_from_slice(&chunk[..count]);
    };
    let head = String::from_utf8_lossy(&received[..head_end]).into_owned();
    let status: u16 = head
        .split(' ')
        .nth(1)
        .and_then(|status| status.parse().ok())
        .ok_or("the response has no status")?;
    let length: usize = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-length").then(|| value.trim().parse().ok())?
        })
        .ok_or("the response has no Content-Length")?;
    while received.len() < head_end + length {
        let count = read(&mut stream, &mut chunk)?;
        received.extend_from_slice(&chunk[..count]);
    }
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(&received[head_end..head_end + length])
        .and_then(|()| stdout.write_all(b"\n"))
        .map_err(|error| format!("cannot write: {error}"))?;
    Ok(status)
}

/// Reads some bytes; the end of the stream before the response is complete is an error.
fn read(stream: &mut TcpStream, chunk: &mut [u8]) -> Result<usize, String> {
    match stream.read(chunk) {
        Ok(0) => Err("the connection closed early".to_owned()),
        Ok(count) => Ok(count),
        Err(error) => Err(format!("cannot receive: {error}")),
    }
}

/// The value of the first string member `name` of compact JSON without escapes in that value.
fn string_member<'a>(json: &'a str, name: &str) -> Option<&'a str> {
    let key = format!("\"{name}\"");
    let after = &json[json.find(&key)? + key.len()..];
    let value = after.trim_start().strip_prefix(':')?.trim_start().strip_prefix('"')?;
    value.get(..value.find('"')?)
}
