//! `notifications/progress` for a `tools/call` that asked for it with `_meta.progressToken`
//! (`spec/mcp.md` §3.16): the only notifications the bridge sends.

use serde_json::{Value, json};
use termsprawl_transport::long_wait::WaitProgress;

use crate::dispatch::ProgressTarget;

/// Builds the notification lines of one call, keeping `progress` strictly growing as MCP asks.
#[derive(Debug)]
pub(crate) struct Notifier {
    target: ProgressTarget,
    /// The last `progress` sent, in milliseconds waited.
    last_ms: Option<u128>,
}

impl Notifier {
    pub(crate) fn new(target: ProgressTarget) -> Notifier {
        Notifier { target, last_ms: None }
    }

    /// The notification line for `progress`: `progress` the seconds waited (always more than the
    /// last), `total` the seconds the wait may take, and, where the revision has it, `message`.
    pub(crate) fn line(&mut self, progress: &WaitProgress) -> String {
        let waited = progress.waited.as_millis();
        let waited = match self.last_ms {
            Some(last) if waited <= last => last + 1,
            _ => waited,
        };
        self.last_ms = Some(waited);
        let mut params = json!({
            "progressToken": self.target.token,
            "progress": seconds(waited),
            "total": seconds(progress.total.as_millis()),
        });
        if self.target.message {
            params["message"] = Value::from(progress.message());
        }
        json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": params}).to_string()
    }
}

/// Milliseconds as seconds, written with at most three decimals.
#[expect(clippy::cast_precision_loss, reason = "a wait's milliseconds stay far below 2^53")]
fn seconds(ms: u128) -> f64 {
    ms as f64 / 1000.0
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn progress(waited_ms: u64) -> WaitProgress {
        WaitProgress {
            label: "make test".to_owned(),
            waited: Duration::from_millis(waited_ms),
            total: Duration::from_mins(10),
            cursor: Some(9),
            lines: 2,
            lines_cut: false,
            last_line: Some("ok".to_owned()),
            turns: 1,
        }
    }

    #[test]
    fn progress_grows_and_message_follows_the_revision() {
        let target = ProgressTarget { token: json!("t-1"), message: true };
        let mut notifier = Notifier::new(target);
        assert_eq!(
            notifier.line(&progress(5_250)),
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t-1","progress":5.25,"total":600.0,"message":"make test: 2 lines, last: \"ok\" (5 s)"}}"#
        );
        // The same instant twice still grows.
        assert!(notifier.line(&progress(5_250)).contains(r#""progress":5.251,"#));
        let mut old = Notifier::new(ProgressTarget { token: json!(7), message: false });
        assert_eq!(
            old.line(&progress(1_000)),
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1.0,"total":600.0}}"#
        );
    }
}
