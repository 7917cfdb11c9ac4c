//! What the direct form prints, `spec/shell-conventions.md` §8–§9: values, errors, images, and
//! the exit-0 rule when output fails after a successful call.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde_json::json;
use termsprawl_protocol::ToolResult;

use crate::support::Fixture;

/// A tiny but real PNG signature and header.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89";

#[test]
fn values_print_as_themselves() {
    let fixture = Fixture::new();
    let mut out = Vec::new();
    let results = [
        ToolResult::ok(json!("# A guide\n\nwith a final newline\n")),
        ToolResult::ok(json!("no final newline")),
        ToolResult::ok(json!("")),
        ToolResult::ok_empty(),
        ToolResult::ok(json!(null)),
        ToolResult::ok(json!(false)),
        ToolResult::ok(json!([])),
        ToolResult::ok(json!({"nodeId": "n", "cleanupPendingIds": [], "meta": {}, "z": 1, "a": 2})),
        ToolResult::ok(json!({"image": "%%% not base64 %%%", "nodeId": "b"})),
    ];
    for result in results {
        fixture.respond(result);
        out.push(fixture.check(fixture.ctl_session().args(["guide_read", "--topic", "overview"])));
    }
    insta::assert_snapshot!(out.join("\n"));
}

#[test]
fn failures_print_error_and_exit_1() {
    let mut fixture = Fixture::new();
    let mut out = Vec::new();
    fixture.respond(ToolResult::failure("Local terminal not found in this project"));
    out.push(fixture.check(fixture.ctl_session().args(["terminal_close", "--nodeId", "t9"])));
    // The server's own validation, as the CLI checks no `required` or `enum`.
    out.push(fixture.check(fixture.ctl_session().args(["terminal_read"])));
    out.push(
        fixture.check(fixture.ctl_session().args(["terminal_read", r#"{"nodeId":"t","x":1}"#])),
    );
    out.push(fixture.check(fixture.ctl_session().args(["agent_launch", "--agent", "vim"])));
    fixture.stop();
    out.push(fixture.check(fixture.ctl_session().args(["canvas_list"])));
    insta::assert_snapshot!(out.join("\n"));
}

#[test]
fn images_are_saved_and_never_overwritten() {
    let fixture = Fixture::new();
    let out_dir = fixture.temp().join("shots");
    let mut out = Vec::new();
    for _ in 0..3 {
        fixture.respond(ToolResult::ok(json!({"image": STANDARD.encode(PNG)})));
        out.push(fixture.check(fixture.ctl_session().arg("--out").arg(&out_dir).args([
            "browser_screenshot",
            "--nodeId",
            "b1",
        ])));
    }
    for name in ["output-1.png", "output-1-2.png", "output-1-3.png"] {
        let path = out_dir.join(name);
        assert_eq!(std::fs::read(&path).unwrap(), PNG, "{name}");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644, "{name}");
    }
    let dir_mode = std::fs::metadata(&out_dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(dir_mode, 0o755);
    // Other members stay, with the path in place of the data; a data URL names its type.
    fixture.respond(ToolResult::ok(json!({
        "nodeId": "b1",
        "image": format!("data:image/jpeg;base64,{}", STANDARD.encode(b"\xff\xd8\xffjpeg")),
        "note": "viewport"
    })));
    out.push(fixture.check(fixture.ctl_session().arg("--out").arg(&out_dir).args([
        "browser_screenshot",
        "--nodeId",
        "b1",
    ])));
    assert_eq!(std::fs::read(out_dir.join("output-1.jpg")).unwrap(), b"\xff\xd8\xffjpeg");
    // URL-safe base64 without padding, of bytes no magic number names.
    fixture.respond(ToolResult::ok(json!({"image": URL_SAFE_NO_PAD.encode(b"\xfb\xff\xfe?")})));
    out.push(
        fixture.check(
            fixture
                .ctl_session()
                .arg("--out=rel/out")
                .args(["browser_screenshot", "--nodeId", "b1"])
                .current_dir(fixture.temp()),
        ),
    );
    assert_eq!(
        std::fs::read(fixture.temp().join("rel/out/output-1.bin")).unwrap(),
        b"\xfb\xff\xfe?"
    );
    insta::assert_snapshot!(out.join("\n"));
}

#[test]
fn without_out_images_go_to_a_fresh_temporary_directory() {
    let fixture = Fixture::new();
    fixture.respond(ToolResult::ok(json!({"image": STANDARD.encode(PNG)})));
    let output = fixture.ctl_session().args(["browser_screenshot", "--nodeId", "b1"]).output();
    assert_eq!(output.status.code(), Some(0));
    let path = String::from_utf8(output.stdout).unwrap();
    let path = std::path::Path::new(path.strip_suffix('\n').unwrap());
    assert_eq!(path.file_name().unwrap(), "output-1.png");
    let directory = path.parent().unwrap();
    assert_eq!(directory.parent().unwrap(), fixture.temp().join("tmp"));
    assert!(directory.file_name().unwrap().to_str().unwrap().starts_with("termsprawlctl-"));
    assert_eq!(std::fs::read(path).unwrap(), PNG);
}

#[test]
fn output_that_cannot_be_written_after_success_still_exits_0() {
    let fixture = Fixture::new();
    let mut out = Vec::new();
    // The image directory cannot be made: a file is in the way.
    let blocker = fixture.temp().join("file");
    std::fs::write(&blocker, b"").unwrap();
    fixture.respond(ToolResult::ok(json!({"image": STANDARD.encode(PNG)})));
    out.push(fixture.check(fixture.ctl_session().arg("--out").arg(blocker.join("sub")).args([
        "browser_screenshot",
        "--nodeId",
        "b1",
    ])));
    // stdout is a full device.
    fixture.respond(ToolResult::ok(json!({"nodeId": "t", "delivered": true})));
    let mut run = fixture.ctl_session();
    run.args(["terminal_submit", "--nodeId", "t", "--command", "make"])
        .stdout(Stdio::from(File::create("/dev/full").unwrap()));
    out.push(fixture.check(&mut run));
    // A failed call is still a failure when stdout is full.
    fixture.respond(ToolResult::failure("Terminal is not attached"));
    let mut run = fixture.ctl_session();
    run.args(["terminal_submit", "--nodeId", "t", "--command", "make"])
        .stdout(Stdio::from(File::create("/dev/full").unwrap()));
    out.push(fixture.check(&mut run));
    insta::assert_snapshot!(out.join("\n"));
}

#[test]
fn a_broken_pipe_after_success_still_exits_0() {
    let fixture = Fixture::new();
    fixture.hold_all();
    fixture.respond(ToolResult::ok(json!("a value nobody reads")));
    let mut run = fixture.ctl_session();
    run.args(["terminal_read", "--nodeId", "t"]);
    let mut child = run.command().spawn().unwrap();
    // Close the reading end before the server answers, then let it answer.
    drop(child.stdout.take());
    fixture.release(1);
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert_eq!(
        stderr,
        "termsprawlctl: the call succeeded, but writing its output failed, so do not run it again for that: Broken pipe (os error 32)\n"
    );
    assert_eq!(fixture.take_received().len(), 1);
}
