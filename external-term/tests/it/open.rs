//! The whole operation against a real tmux server on a private socket, with fake emulators.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;
use termsprawl_external_term::{
    Error, LaunchOptions, Launched, OpenOptions, TmuxLocation, open, result_value,
    user_data_from_session_file,
};

use crate::support::{TmuxServer, bin_dir, only, real_tmux, script, write_preferences};

/// A fake emulator `<dir>/<name>` that writes its arguments, one per line, to `<dir>/record` and
/// exits with status 0.
fn recorder(dir: &Path, name: &str) -> PathBuf {
    let record = dir.join("record");
    script(&dir.join(name), &format!("printf '%s\\n' \"$@\" > '{}'", record.display()))
}

fn options(bin: &Path) -> OpenOptions {
    OpenOptions {
        search_path: only(bin),
        tmux: None,
        launch: LaunchOptions { grace_period: Duration::from_secs(10), env: Vec::new() },
    }
}

fn expected_attach(tmux: &Path, user_data: &Path, node_id: &str) -> Vec<String> {
    vec![
        tmux.display().to_string(),
        "-S".to_owned(),
        user_data.join("tmux-sockets/termsprawl").display().to_string(),
        "-f".to_owned(),
        user_data.join("tmux.conf").display().to_string(),
        "attach-session".to_owned(),
        "-t".to_owned(),
        format!("ts-{node_id}"),
    ]
}

fn recorded(dir: &Path) -> Vec<String> {
    fs::read_to_string(dir.join("record")).unwrap().lines().map(str::to_owned).collect()
}

#[test]
fn the_probe_list_with_the_managed_server() {
    let root = tempfile::tempdir().unwrap();
    let user_data = root.path().join("termsprawl");
    let _server = TmuxServer::start(&user_data, &["n1"]);
    let tools = root.path().join("tools");
    fs::create_dir(&tools).unwrap();
    let fake = recorder(&tools, "fake-xterm");
    let bin = bin_dir(root.path(), &[("tmux", &real_tmux()), ("xterm", &fake)]);

    let launched = open("n1", &user_data, &options(&bin)).unwrap();
    assert!(matches!(launched, Launched::HandedOff { .. }), "{launched:?}");
    let mut expected = vec!["-e".to_owned()];
    // tmux is found on the search path, so the symbolic link in `bin` is what runs.
    expected.extend(expected_attach(&bin.join("tmux"), &user_data, "n1"));
    assert_eq!(recorded(&tools), expected);
    assert_eq!(result_value("n1"), json!({"nodeId": "n1", "attached": true}));
    assert_eq!(result_value("n1").to_string(), r#"{"nodeId":"n1","attached":true}"#);
}

#[test]
fn a_preference_wins_over_the_probe_list() {
    let root = tempfile::tempdir().unwrap();
    let user_data = root.path().join("termsprawl");
    let _server = TmuxServer::start(&user_data, &["n1"]);
    let tools = root.path().join("tools");
    fs::create_dir(&tools).unwrap();
    let fake = recorder(&tools, "my-term");
    let bin = bin_dir(root.path(), &[("xterm", &fake)]);
    let preference = json!({"externalTerminal": {"executable": fake, "args": ["--hold", "{command}", "{command}x"]}});
    write_preferences(&user_data, &preference.to_string());

    open("n1", &user_data, &options(&bin)).unwrap();
    let mut expected = vec!["--hold".to_owned()];
    // No tmux on the search path: the first existing fallback runs.
    expected.extend(expected_attach(&real_tmux(), &user_data, "n1"));
    expected.push("{command}x".to_owned());
    assert_eq!(recorded(&tools), expected);
}

#[test]
fn an_explicit_tmux_location() {
    let root = tempfile::tempdir().unwrap();
    // The server lives on another user data directory's socket; `user_data` itself does not exist
    // and is only read for preferences.
    let server = TmuxServer::start(&root.path().join("elsewhere"), &["n1"]);
    let user_data = root.path().join("termsprawl");
    let tools = root.path().join("tools");
    fs::create_dir(&tools).unwrap();
    let fake = recorder(&tools, "fake-xterm");
    let bin = bin_dir(root.path(), &[("xterm", &fake)]);
    let location =
        TmuxLocation { program: real_tmux(), base_args: server.location.base_args[..2].to_vec() };
    let options = OpenOptions { tmux: Some(location.clone()), ..options(&bin) };

    open("n1", &user_data, &options).unwrap();
    let mut expected = vec!["-e".to_owned()];
    expected
        .extend(location.attach_argv("n1").iter().map(|arg| arg.to_string_lossy().into_owned()));
    assert_eq!(recorded(&tools), expected);
    assert!(!user_data.exists());
}

#[test]
fn no_session_means_no_launch() {
    let root = tempfile::tempdir().unwrap();
    let user_data = root.path().join("termsprawl");
    let tools = root.path().join("tools");
    fs::create_dir(&tools).unwrap();
    let fake = recorder(&tools, "fake-xterm");
    let bin = bin_dir(root.path(), &[("tmux", &real_tmux()), ("xterm", &fake)]);
    let check = |what: &str| {
        let error = open("n1", &user_data, &options(&bin)).unwrap_err();
        assert!(matches!(error, Error::SessionNotRunning), "{what}: {error:?}");
        assert_eq!(error.to_string(), "A running managed tmux session is required", "{what}");
        assert!(!tools.join("record").exists(), "{what}: the emulator must not start");
    };

    // No server at all; the socket directory is created anyway (mkdir -p).
    check("no server");
    assert!(user_data.join("tmux-sockets").is_dir());

    // Sessions whose names start with `ts-n1` must not match: the target is exact.
    let _server = TmuxServer::start(&user_data, &["n10", "n1x"]);
    check("only ts-n10 and ts-n1x");
}

#[test]
fn preference_errors_surface_after_the_session_check() {
    let root = tempfile::tempdir().unwrap();
    let user_data = root.path().join("termsprawl");
    let _server = TmuxServer::start(&user_data, &["n1"]);
    let bin = bin_dir(root.path(), &[("tmux", &real_tmux())]);
    let cases = [
        ("{\"externalTerminal\":", "Invalid agent-tools/preferences.json"),
        (
            r#"{"externalTerminal":{"executable":"xterm","args":["-e"]}}"#,
            "External terminal args must contain exactly one {command} placeholder",
        ),
        (
            r#"{"externalTerminal":{"executable":"no-such-term","args":["-e","{command}"]}}"#,
            "Configured external terminal executable was not found",
        ),
        (
            "{}",
            "No supported Linux terminal emulator found. Install one or configure agent-tools/preferences.json. The canvas terminal is still available.",
        ),
    ];
    for (preferences, message) in cases {
        write_preferences(&user_data, preferences);
        let error = open("n1", &user_data, &options(&bin)).unwrap_err();
        assert_eq!(error.to_string(), message, "{preferences}");
    }
}

#[test]
fn an_invalid_node_id_is_refused_first() {
    let root = tempfile::tempdir().unwrap();
    let user_data = root.path().join("termsprawl");
    let bin = bin_dir(root.path(), &[]);
    for node_id in ["", "n1:0", "n1.0", "=n1", &"x".repeat(129)] {
        let error = open(node_id, &user_data, &options(&bin)).unwrap_err();
        assert!(matches!(error, Error::InvalidNodeId), "{node_id:?}: {error:?}");
    }
    assert!(!user_data.exists(), "nothing may be created for an invalid node id");
}

#[test]
fn a_socket_directory_that_cannot_be_created() {
    let root = tempfile::tempdir().unwrap();
    let user_data = root.path().join("a-file");
    fs::write(&user_data, "").unwrap();
    let bin = bin_dir(root.path(), &[("tmux", &real_tmux())]);
    let error = open("n1", &user_data, &options(&bin)).unwrap_err();
    assert!(matches!(error, Error::SocketDir { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        format!(
            "could not create the tmux socket directory {}: Not a directory (os error 20)",
            user_data.join("tmux-sockets").display()
        )
    );
}

#[test]
fn a_tmux_that_cannot_run() {
    let root = tempfile::tempdir().unwrap();
    let user_data = root.path().join("termsprawl");
    let missing = root.path().join("missing-tmux");
    let location = TmuxLocation { program: missing.clone(), base_args: Vec::new() };
    let bin = bin_dir(root.path(), &[]);
    let options = OpenOptions { tmux: Some(location), ..options(&bin) };
    let error = open("n1", &user_data, &options).unwrap_err();
    assert!(matches!(error, Error::Tmux { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        format!("could not run {}: No such file or directory (os error 2)", missing.display())
    );
}

#[test]
fn user_data_from_a_session_file() {
    let session_file = Path::new("/home/u/.config/termsprawl/agent-tools/sessions/agent-1.json");
    assert_eq!(
        user_data_from_session_file(session_file),
        Some(Path::new("/home/u/.config/termsprawl"))
    );
    assert_eq!(
        user_data_from_session_file(Path::new("/agent-tools/sessions/a.json")),
        Some(Path::new("/"))
    );
    assert_eq!(user_data_from_session_file(Path::new("agent-tools/sessions/a.json")), None);
    assert_eq!(user_data_from_session_file(Path::new("/sessions/a.json")), None);
}
