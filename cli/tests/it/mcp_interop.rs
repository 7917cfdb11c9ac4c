//! `termsprawlctl mcp` under an independent MCP client (`spec/mcp.md` §6): the official MCP
//! Python SDK, pinned in `tests/python/requirements.txt` and provisioned by `cargo xtask test` as
//! the `mcp-sdk` peer, runs `tests/python/mcp_interop.py` against the real binary and a fake app on a
//! real loopback tool server; the driver prints a JSON report that this test asserts.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use serde_json::{Value, json};

use crate::mcp_support::{APP_VERSION, App, PNG, all_operations};

const VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

fn repo_root() -> PathBuf {
    termsprawl_test_support::workspace_root()
}

/// The version of `mcp` that `tests/python/requirements.txt` pins.
fn pinned_sdk_version() -> String {
    let requirements =
        std::fs::read_to_string(repo_root().join("tests/python/requirements.txt")).unwrap();
    requirements
        .lines()
        .find_map(|line| line.strip_prefix("mcp=="))
        .expect("requirements.txt pins mcp")
        .trim()
        .to_owned()
}

/// Runs the driver under the `mcp-sdk` peer that `cargo xtask test` provisions (a test without it
/// fails, naming that command).
fn interop_report(app: &App) -> Value {
    let python = termsprawl_test_support::peers::python("mcp-sdk");
    let mut child = Command::new(&python)
        .arg(repo_root().join("tests/python/mcp_interop.py"))
        .arg("--binary")
        .arg(env!("CARGO_BIN_EXE_termsprawlctl"))
        .arg("--session")
        .arg(app.session_file())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the venv's python runs");
    let (done_tx, done) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    thread::spawn(move || {
        let stdout = std::io::read_to_string(stdout).unwrap();
        let stderr = std::io::read_to_string(stderr).unwrap();
        let _ = done_tx.send((stdout, stderr));
    });
    let (stdout, stderr) = done
        .recv_timeout(Duration::from_mins(5))
        .expect("the interop driver did not finish within 5 minutes");
    let status = child.wait().unwrap();
    assert!(status.success(), "the driver failed ({status}):\n{stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|error| {
        panic!("the driver's report is not JSON ({error}):\n{stdout}\nstderr:\n{stderr}")
    })
}

#[test]
fn the_official_python_sdk_speaks_to_the_bridge_in_every_protocol_version() {
    let app = App::start();
    let report = interop_report(&app);
    assert_eq!(report["sdkVersion"], pinned_sdk_version(), "the venv does not hold the pinned SDK");
    let runs = report["runs"].as_array().unwrap();
    assert_eq!(runs.len(), VERSIONS.len());
    let operations = all_operations();
    assert_eq!(operations.len(), 37);
    check_modern_run(&report["modern"], &operations);
    for (run, version) in runs.iter().zip(VERSIONS) {
        assert_eq!(run["requested"], version);
        assert!(run.get("failure").is_none(), "{version}: {}", run["failure"].as_str().unwrap());
        // The handshake parsed under the SDK's types and echoed the requested version.
        assert_eq!(run["protocolVersion"], version, "{run}");
        assert_eq!(run["negotiated"], version, "{run}");
        assert_eq!(run["serverInfo"], json!({"name": "termsprawl", "version": APP_VERSION}));
        assert_eq!(run["titles"], json!(version >= "2025-06-18"), "{version}");
        assert_eq!(run["toolsCapability"], true);
        assert_eq!(run["instructions"], true);
        assert_eq!(run["ping"], true);
        // The fake app lists every operation, so the host sees the whole table.
        assert_eq!(run["tools"], json!(operations), "{version}");
        assert_eq!(run["toolsUnique"], true);
        assert_eq!(run["schemasAreObjects"], true);
        assert_eq!(run["arraysHaveItems"], true);
        assert_eq!(run["nextCursor"], Value::Null);
        assert_eq!(
            run["success"],
            json!({
                "isError": false,
                "content": [{"sdkType": "TextContent", "text": r#"{"ok":true,"value":[{"id":"n1","kind":"terminal"}]}"#}],
                "structuredContent": null
            }),
            "{version}"
        );
        assert_eq!(
            run["isError"],
            json!({
                "isError": true,
                "content": [{"sdkType": "TextContent", "text": r#"{"ok":false,"error":"Missing argument: nodeId"}"#}],
                "structuredContent": null
            }),
            "{version}"
        );
        assert_eq!(
            run["image"],
            json!({
                "isError": false,
                "content": [{"sdkType": "ImageContent", "data": PNG, "mimeType": "image/png"}],
                "structuredContent": null
            }),
            "{version}"
        );
        assert_eq!(
            run["unknownTool"],
            json!({"error": {"code": -32602, "message": "Unknown tool: no_such_tool"}}),
            "{version}"
        );
        assert_eq!(run["pingAfterError"], true);
        // Every stdout line parsed, and the SDK's traffic caused no log line.
        assert_eq!(run["streamErrors"], json!([]), "{version}");
        assert_eq!(run["stderr"], json!([]), "{version}");
    }
}

/// The 2026-07-28 run: the SDK's dual-era probe found a modern server and stayed modern.
fn check_modern_run(run: &Value, operations: &[&str]) {
    assert!(
        run.get("failure").is_none(),
        "2026-07-28: {}",
        run["failure"].as_str().unwrap_or_default()
    );
    assert_eq!(run["negotiated"], "2026-07-28", "{run}");
    assert_eq!(run["discovered"], true);
    assert_eq!(run["initialized"], false, "the SDK fell back to initialize: {run}");
    assert_eq!(
        run["supportedVersions"],
        json!(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"])
    );
    assert_eq!(
        run["serverInfo"],
        json!({"name": "termsprawl", "title": "termsprawl", "version": APP_VERSION})
    );
    assert_eq!(run["toolsCapability"], true);
    assert_eq!(run["resourcesCapability"], true);
    assert_eq!(run["instructions"], json!(termsprawl_protocol::instructions().len()));
    assert_eq!(run["tools"], json!(operations));
    assert_eq!(run["titles"], true);
    assert_eq!(run["toolsResultType"], "complete");
    assert_eq!(run["ttlMs"], 60_000);
    assert_eq!(run["cacheScope"], "private");
    assert_eq!(run["resources"].as_array().unwrap().len(), 7);
    assert_eq!(run["resources"][0], "termsprawl://guides/overview");
    assert_eq!(run["resourceMimeType"], "text/markdown");
    assert_eq!(run["resourceText"], "# Terminals");
    assert_eq!(
        run["success"],
        json!({
            "isError": false,
            "content": [{"sdkType": "TextContent", "text": r#"{"ok":true,"value":[{"id":"n1","kind":"terminal"}]}"#}],
            "structuredContent": null
        })
    );
    assert_eq!(run["isError"]["isError"], true);
    assert_eq!(
        run["image"],
        json!({
            "isError": false,
            "content": [{"sdkType": "ImageContent", "data": PNG, "mimeType": "image/png"}],
            "structuredContent": null
        })
    );
    assert_eq!(
        run["unknownTool"],
        json!({"error": {"code": -32602, "message": "Unknown tool: no_such_tool"}})
    );
    assert_eq!(run["listAfterError"], 37);
    assert_eq!(run["streamErrors"], json!([]));
    assert_eq!(run["stderr"], json!([]));
}
