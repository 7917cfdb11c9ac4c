//! The shared base of the demo, the bench and the soak: building the programs under test
//! ([`binaries`]), the places of a run and a `termsprawl-headless serve` started and stopped in
//! them ([`server`]), the machine table of the reports ([`machine`]), and the small rules every
//! part needs: [`wait_child`] (a child waited for until a deadline, else killed), [`lock`], and
//! [`answer`] (a tool's answer read as its type of `termsprawl_protocol::results`, so that no
//! part spells a member name).

pub mod binaries;
pub mod machine;
pub mod server;

use std::process::{Child, ExitStatus};
use std::thread;
use std::time::{Duration, Instant};

/// How often [`wait_child`] looks at its child.
const WAIT_POLL: Duration = Duration::from_millis(20);

/// Waits for `child` to exit within `timeout`: its status, or `None` when it did not (it is then
/// killed and reaped, so nothing is left running).
pub fn wait_child(child: &mut Child, timeout: Duration) -> std::io::Result<Option<ExitStatus>> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        thread::sleep(WAIT_POLL);
    }
}

/// The value of a successful `operation` read as `T` (a typed answer of
/// `termsprawl_protocol::results`, or `serde_json::Value` for an answer without one); an error
/// with the tool's message when it failed, or naming the operation when the value is not a `T`.
pub fn answer<T: serde::de::DeserializeOwned>(
    operation: &str,
    result: termsprawl_protocol::ToolResult,
) -> anyhow::Result<T> {
    match result {
        termsprawl_protocol::ToolResult::Success { value } => {
            let value = value.unwrap_or(serde_json::Value::Null);
            serde_json::from_value(value.clone()).map_err(|error| {
                anyhow::anyhow!(
                    "{operation} answered something else than its answer ({error}): {value}"
                )
            })
        }
        termsprawl_protocol::ToolResult::Failure { error } => {
            anyhow::bail!("{operation} failed: {error}")
        }
    }
}

pub use termsprawl_transport::sync::lock;

#[cfg(test)]
mod tests;
