//! End to end with real programs: a private Xvfb, a private tmux server and xterm. Xvfb, xterm and
//! tmux must be installed (CI's `.ci/run` installs them); without them these tests fail and say
//! what to install.

use std::fs;
use std::path::Path;
use std::time::Duration;

use serde_json::json;
use termsprawl_external_term::{Error, LaunchOptions, Launched, OpenOptions, open};

use crate::support::{
    KillGroup, TmuxServer, Xvfb, bin_dir, only, process_exists, real_tmux, require, script,
    wait_until, write_preferences,
};

/// Opens the external terminal for `ts-e2e` and waits until tmux lists a client for it.
fn attach_and_check(user_data: &Path, options: &OpenOptions, server: &TmuxServer) {
    let launched = open("e2e", user_data, options).unwrap();
    let Launched::Running { pid } = launched else {
        panic!("xterm should keep running: {launched:?}")
    };
    let mut group = KillGroup::new(pid);

    wait_until("tmux lists a client attached to ts-e2e", || {
        !server.run(&["list-clients", "-t", "=ts-e2e", "-F", "#{client_pid}"]).trim().is_empty()
    });

    group.kill();
    wait_until("xterm is gone and reaped", || !process_exists(pid));
}

#[test]
fn xterm_from_the_probe_list_attaches_to_the_session() {
    let xterm = require("xterm", "xterm");
    let xvfb = Xvfb::start();
    let root = tempfile::tempdir().unwrap();
    let user_data = root.path().join("termsprawl");
    let server = TmuxServer::start(&user_data, &["e2e"]);
    let bin = bin_dir(root.path(), &[("tmux", &real_tmux()), ("xterm", &xterm)]);
    let options = OpenOptions {
        search_path: only(&bin),
        tmux: None,
        launch: LaunchOptions { env: vec![xvfb.display_env()], ..LaunchOptions::default() },
    };
    attach_and_check(&user_data, &options, &server);
}

#[test]
fn xterm_from_a_preference_attaches_to_the_session() {
    let xterm = require("xterm", "xterm");
    let xvfb = Xvfb::start();
    let root = tempfile::tempdir().unwrap();
    let user_data = root.path().join("termsprawl");
    let server = TmuxServer::start(&user_data, &["e2e"]);
    let preference = json!({"externalTerminal": {
        "executable": xterm,
        "args": ["-title", "termsprawl {command}x", "-geometry", "100x30", "-e", "{command}"]
    }});
    write_preferences(&user_data, &preference.to_string());
    let options = OpenOptions {
        search_path: only(&bin_dir(root.path(), &[])),
        tmux: None,
        launch: LaunchOptions { env: vec![xvfb.display_env()], ..LaunchOptions::default() },
    };
    attach_and_check(&user_data, &options, &server);
}

#[test]
fn an_emulator_that_exits_at_once_is_reported_with_its_status() {
    let root = tempfile::tempdir().unwrap();
    let user_data = root.path().join("termsprawl");
    let _server = TmuxServer::start(&user_data, &["e2e"]);
    fs::create_dir(root.path().join("tools")).unwrap();
    let broken = script(&root.path().join("tools/broken-term"), "exit 3");
    write_preferences(
        &user_data,
        &json!({"externalTerminal": {"executable": broken, "args": ["-e", "{command}"]}})
            .to_string(),
    );
    let options = OpenOptions {
        search_path: only(&bin_dir(root.path(), &[])),
        tmux: None,
        launch: LaunchOptions { grace_period: Duration::from_secs(10), env: Vec::new() },
    };
    let error = open("e2e", &user_data, &options).unwrap_err();
    assert!(
        matches!(&error, Error::ExitedEarly { status, .. } if status.code() == Some(3)),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        format!("terminal emulator {} exited within 10000 ms (exit status: 3)", broken.display())
    );
}

#[test]
fn xterm_without_a_display_is_reported_as_a_failure() {
    let xterm = require("xterm", "xterm");
    let root = tempfile::tempdir().unwrap();
    let user_data = root.path().join("termsprawl");
    let _server = TmuxServer::start(&user_data, &["e2e"]);
    let bin = bin_dir(root.path(), &[("tmux", &real_tmux()), ("xterm", &xterm)]);
    // A display that certainly has no server: a socket path in an empty temporary directory.
    let options = OpenOptions {
        search_path: only(&bin),
        tmux: None,
        launch: LaunchOptions {
            grace_period: Duration::from_secs(10),
            env: vec![("DISPLAY".into(), root.path().join("no-x-server:0").into_os_string())],
        },
    };
    let error = open("e2e", &user_data, &options).unwrap_err();
    assert!(matches!(&error, Error::ExitedEarly { status, .. } if !status.success()), "{error:?}");
}
