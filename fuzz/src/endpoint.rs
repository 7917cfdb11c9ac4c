//! The endpoint rule of `spec/protocol.md` §7.1 step 3, as a strict literal check.
//!
//! The only URLs that may receive the session token are `http://127.0.0.1/call` (port 80) and
//! `http://127.0.0.1:<port>/call`, where `<port>` is one or more ASCII digits whose value is at most
//! 65535 (leading zeros are digits too: `:080` is port 80). Nothing is normalised first: no
//! trimming, no case folding, no percent-decoding.

/// The port `url` names when it is exactly one of the two accepted forms, else `None`.
pub fn literal_port(url: &str) -> Option<u16> {
    const HEAD: &str = "http://127.0.0.1";
    const TAIL: &str = "/call";
    if url.len() < HEAD.len() + TAIL.len() || !url.starts_with(HEAD) || !url.ends_with(TAIL) {
        return None;
    }
    let middle = &url[HEAD.len()..url.len() - TAIL.len()];
    if middle.is_empty() {
        return Some(80);
    }
    let digits = middle.strip_prefix(':')?;
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let significant = digits.trim_start_matches('0');
    if significant.len() > 5 {
        return None;
    }
    let value: u32 = if significant.is_empty() { 0 } else { significant.parse().ok()? };
    u16::try_from(value).ok()
}
