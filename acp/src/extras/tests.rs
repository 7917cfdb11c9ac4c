//! Tests of the lines the extra updates show.

use super::{Extras, short};
use crate::messages::{Extra, Usage};
use crate::render::Piece;
use crate::style::{Span, Style};

fn detail(text: &str) -> Vec<Span> {
    vec![Span::new(Style::Detail, text)]
}

fn usage(used: u64, size: u64, cost: Option<f64>) -> Extra {
    Extra::Usage(Usage { used, size, cost: cost.map(|amount| (amount, "USD".to_owned())) })
}

#[test]
fn usage_is_kept_for_status_and_shown_once_after_the_turn_it_changed_in() {
    let mut extras = Extras::default();
    assert_eq!(extras.status_line(), "[status] context: the agent has not reported its usage");
    assert_eq!(extras.after_turn(), None);
    assert_eq!(extras.update(&usage(12_345, 200_000, Some(0.524))), vec![]);
    assert_eq!(extras.after_turn().as_deref(), Some("[usage] 12.3k/200k tokens (6%) · 0.52 USD"));
    assert_eq!(extras.after_turn(), None);
    assert_eq!(extras.status_line(), "[status] context 12345 of 200000 tokens (6%), cost 0.52 USD");
    // The same usage again is no change.
    extras.update(&usage(12_345, 200_000, Some(0.524)));
    assert_eq!(extras.after_turn(), None);
    extras.update(&usage(950, 0, None));
    assert_eq!(extras.after_turn().as_deref(), Some("[usage] 950/0 tokens (-%)"));
}

#[test]
fn counts_are_short() {
    for (count, text) in
        [(0, "0"), (999, "999"), (1000, "1k"), (1050, "1k"), (12_345, "12.3k"), (1_500_000, "1.5M")]
    {
        assert_eq!(short(count), text, "{count}");
    }
}

#[test]
fn notices_compactions_and_unknown_variants_are_one_line_each() {
    let mut extras = Extras::default();
    let notice = Extra::Notice {
        severity: "info".to_owned(),
        title: "Indexed".to_owned(),
        description: Some("42 files\nin 2 s".to_owned()),
    };
    assert_eq!(
        extras.update(&notice),
        vec![Piece::Line("[notice] Indexed: 42 files in 2 s".into())]
    );
    let warning = Extra::Notice {
        severity: "warning".to_owned(),
        title: "Slow".to_owned(),
        description: None,
    };
    assert_eq!(extras.update(&warning), vec![Piece::Line("[notice warning] Slow".into())]);
    let compaction = |status: &str, error: Option<&str>| Extra::Compaction {
        id: "c1".to_owned(),
        status: status.to_owned(),
        error: error.map(str::to_owned),
    };
    assert_eq!(
        extras.update(&compaction("in_progress", None)),
        vec![Piece::Tool("compaction c1".into(), detail("[compaction] compacting the context…"))]
    );
    assert_eq!(
        extras.update(&compaction("failed", Some("too big"))),
        vec![Piece::Tool(
            "compaction c1".into(),
            detail("[compaction] compacting the context failed: too big")
        )]
    );
    assert_eq!(extras.update(&Extra::CompactionSummary("c1".to_owned())), vec![]);
    let unknown = Extra::Unknown("from_v3".to_owned());
    let line = "[update] from_v3: a session/update this client does not know (not shown)";
    assert_eq!(extras.update(&unknown), vec![Piece::DimLine(line.into())]);
    assert_eq!(extras.update(&unknown), vec![]);
    extras.start_turn();
    assert_eq!(extras.update(&unknown), vec![Piece::DimLine(line.into())]);
}
