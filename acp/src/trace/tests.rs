//! Tests of the trace line format and the RFC 3339 clock.

use std::time::{Duration, UNIX_EPOCH};

use super::{Direction, rfc3339, trace_line};

#[test]
fn formats_times_in_utc_with_milliseconds() {
    assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
    let time = UNIX_EPOCH + Duration::from_millis(951_782_400_123); // 2000-02-29
    assert_eq!(rfc3339(time), "2000-02-29T00:00:00.123Z");
    let time = UNIX_EPOCH + Duration::from_secs(1_798_761_599); // last second of 2026
    assert_eq!(rfc3339(time), "2026-12-31T23:59:59.000Z");
}

#[test]
fn embeds_json_messages_and_quotes_other_text() {
    let line = trace_line(Direction::Out, UNIX_EPOCH, r#"{"jsonrpc":"2.0","id":1}"#);
    assert_eq!(
        line,
        "{\"dir\":\"out\",\"time\":\"1970-01-01T00:00:00.000Z\",\"msg\":{\"jsonrpc\":\"2.0\",\"id\":1}}\n"
    );
    let line = trace_line(Direction::In, UNIX_EPOCH, "not json");
    assert_eq!(
        line,
        "{\"dir\":\"in\",\"time\":\"1970-01-01T00:00:00.000Z\",\"msg\":\"not json\"}\n"
    );
}
