//! The redactor and the report's renderings.

use termsprawl_protocol::SessionToken;

use super::{Outcome, Redactor, Report, Verdict};

const TOKEN: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

fn redactor() -> Redactor {
    let mut redactor = Redactor::default();
    redactor.add(&SessionToken::new(TOKEN));
    redactor
}

#[test]
fn the_redactor_removes_the_token_and_any_long_piece_of_it() {
    let redactor = redactor();
    let cleaned = redactor.clean(&format!("Bearer {TOKEN}"));
    assert!(
        cleaned.starts_with("Bearer <redacted>") && !cleaned.contains(&TOKEN[52..]),
        "{cleaned}"
    );
    assert!(!redactor.clean(TOKEN).contains("0123456789ab"));
    let piece = &TOKEN[20..40];
    assert!(!redactor.clean(&format!("screen: {piece} end")).contains(piece));
    // Short runs (fewer than 12 characters) are left alone: they are everywhere.
    assert_eq!(redactor.clean("0123456789a"), "0123456789a");
    assert!(
        format!("{redactor:?}").contains("1 secrets") && !format!("{redactor:?}").contains(TOKEN)
    );
}

#[test]
fn recorded_strings_are_redacted_and_one_line_in_both_renderings() {
    let mut report = Report::new(redactor());
    report.record(Outcome {
        id: "auth.missing".to_owned(),
        section: "protocol.md §6.2".to_owned(),
        verdict: Verdict::Fail,
        rule: "rule".to_owned(),
        note: Some(format!("saw {TOKEN}\nnext line")),
        sent: Some("POST /call".to_owned()),
        received: Some(format!("HTTP 200 {}", &TOKEN[..30])),
    });
    report.record(Outcome {
        id: "auth.empty".to_owned(),
        section: "protocol.md §6.2".to_owned(),
        verdict: Verdict::Skip,
        rule: "rule".to_owned(),
        note: Some("why".to_owned()),
        sent: None,
        received: None,
    });
    let text = report.to_text();
    assert!(!text.contains(&TOKEN[..12]) && !text.contains(&TOKEN[30..42]), "{text}");
    assert_eq!(text.lines().count(), 3, "{text}");
    assert!(
        text.lines()
            .next()
            .unwrap()
            .starts_with("FAIL auth.missing [protocol.md §6.2] rule: saw <redacted>")
    );
    assert_eq!(text.lines().last(), Some("0 passed, 1 failed, 1 skipped"));
    let json = report.to_json().to_string();
    assert!(!json.contains(&TOKEN[..12]));
    assert_eq!(report.failed_ids(), ["auth.missing"]);
    assert!(!report.ok());
}
