//! Fuzz target: `termsprawl_transport::discovery::validate_endpoint` on arbitrary strings
//! (`spec/protocol.md` §7.1 step 3).
//!
//! Oracle: [`termsprawl_fuzz::endpoint::literal_port`], a strict literal check written from the
//! spec. The two must agree on every string: nothing but `http://127.0.0.1[:port]/call` is
//! accepted, and everything of that form is accepted with its port.
//!
//! The first input byte picks how the rest becomes the URL, so that the accepting region is reached
//! as often as the refusing one: the raw bytes; a well-formed URL built from a port, a number of
//! leading zeros and whether the port is written; or a well-formed URL with one byte inserted,
//! replaced or removed at a chosen place.

#![no_main]

use libfuzzer_sys::fuzz_target;
use termsprawl_fuzz::endpoint::literal_port;
use termsprawl_fuzz::take_byte;
use termsprawl_transport::discovery::validate_endpoint;

fuzz_target!(|data: &[u8]| {
    let mut input = data;
    let mode = take_byte(&mut input);
    let candidate: Vec<u8> = match mode % 4 {
        0 | 1 => input.to_vec(),
        2 => well_formed(&mut input).into_bytes(),
        _ => {
            let mut url = well_formed(&mut input).into_bytes();
            let at = usize::from(take_byte(&mut input)) % (url.len() + 1);
            let byte = take_byte(&mut input);
            match take_byte(&mut input) % 3 {
                0 => url.insert(at, byte),
                1 if at < url.len() => url[at] = byte,
                _ if at < url.len() => {
                    url.remove(at);
                }
                _ => url.push(byte),
            }
            url.extend_from_slice(input);
            url
        }
    };
    let Ok(url) = std::str::from_utf8(&candidate) else { return };
    let expected = literal_port(url);
    let actual = validate_endpoint(url).ok();
    assert_eq!(actual, expected, "validate_endpoint and the literal oracle disagree on {url:?}");
    if mode % 4 == 2 {
        assert!(actual.is_some(), "a well-formed endpoint was refused: {url:?}");
    }
});

/// `http://127.0.0.1[:0…0<port>]/call` from three knobs.
fn well_formed(input: &mut &[u8]) -> String {
    let port = u16::from_be_bytes([take_byte(input), take_byte(input)]);
    let shape = take_byte(input);
    if shape.is_multiple_of(5) {
        return "http://127.0.0.1/call".to_owned();
    }
    let zeros = "0".repeat(usize::from(shape % 8));
    format!("http://127.0.0.1:{zeros}{port}/call")
}
