//! Unit tests of the endpoint gate, of endpoint-file location and of the session file's problems.

use std::path::{Path, PathBuf};

use super::{
    InvalidEndpoint, SessionFileProblem, endpoint_file, session_file_problem, validate_endpoint,
};

#[test]
fn accepts_the_literal_form() {
    let cases = [
        ("http://127.0.0.1/call", 80),
        ("http://127.0.0.1:80/call", 80),
        ("http://127.0.0.1:1/call", 1),
        ("http://127.0.0.1:0/call", 0),
        ("http://127.0.0.1:45123/call", 45123),
        ("http://127.0.0.1:65535/call", 65535),
        ("http://127.0.0.1:08080/call", 8080),
    ];
    for (url, port) in cases {
        assert_eq!(validate_endpoint(url), Ok(port), "{url}");
    }
}

#[test]
fn refuses_everything_else() {
    let cases = [
        "",
        "https://127.0.0.1:4000/call",
        "HTTP://127.0.0.1:4000/call",
        "Http://127.0.0.1:4000/call",
        "ws://127.0.0.1:4000/call",
        "http:/127.0.0.1:4000/call",
        "http:127.0.0.1:4000/call",
        "http://localhost:4000/call",
        "http://LOCALHOST:4000/call",
        "http://127.1:4000/call",
        "http://127.0.1:4000/call",
        "http://2130706433:4000/call",
        "http://0x7f.0.0.1:4000/call",
        "http://0177.0.0.1:4000/call",
        "http://127.0.0.01:4000/call",
        "http://127.0.0.2:4000/call",
        "http://0.0.0.0:4000/call",
        "http://[::1]:4000/call",
        "http://[::ffff:127.0.0.1]:4000/call",
        "http://127.0.0.1.:4000/call",
        "http://127.0.0.1:4000/call/",
        "http://127.0.0.1:4000/CALL",
        "http://127.0.0.1:4000/Call",
        "http://127.0.0.1:4000//call",
        "http://127.0.0.1:4000/./call",
        "http://127.0.0.1:4000/x/../call",
        "http://127.0.0.1:4000/%63all",
        "http://127.0.0.1:4000/call?",
        "http://127.0.0.1:4000/call?x",
        "http://127.0.0.1:4000/call#",
        "http://127.0.0.1:4000/call#x",
        "http://127.0.0.1:4000/call?#",
        "http://user@127.0.0.1:4000/call",
        "http://user:pass@127.0.0.1:4000/call",
        "http://:@127.0.0.1:4000/call",
        "http://@127.0.0.1:4000/call",
        "http://evil.example@127.0.0.1:4000/call",
        "http://127.0.0.1:4000@evil.example/call",
        "http://127.0.0.1:/call",
        "http://127.0.0.1:65536/call",
        "http://127.0.0.1:99999/call",
        "http://127.0.0.1:-1/call",
        "http://127.0.0.1:+80/call",
        "http://127.0.0.1: 80/call",
        "http://127.0.0.1:4000 /call",
        "http://127.0.0.1:4000/call ",
        " http://127.0.0.1:4000/call",
        "\thttp://127.0.0.1:4000/call",
        "http://127.0.0.1:4000/call\n",
        "http://127.0.0.1:40\t00/call",
        "http://127.0.0.1:4000/ca\nll",
        "ht\ttp://127.0.0.1:4000/call",
        "http://127.0.0.1\\call",
        "http:\\\\127.0.0.1:4000\\call",
        "http://127.0.0.1:4000\\call",
        "http://127.0.0.1:4000/call\0",
        "http://127.0.0.1:4000",
        "http://127.0.0.1:4000/",
        "//127.0.0.1:4000/call",
        "127.0.0.1:4000/call",
        "http://127.0.0.1:0x50/call",
        "http://127.0.0.1:٨٠/call",
        "http://１２７.0.0.1:4000/call",
    ];
    for url in cases {
        assert_eq!(validate_endpoint(url), Err(InvalidEndpoint), "{url:?}");
    }
}

#[test]
fn the_error_is_the_contract_reason() {
    assert_eq!(InvalidEndpoint.to_string(), "Invalid local endpoint");
}

#[test]
fn endpoint_file_is_two_levels_above_the_session_file() {
    let cases = [
        ("/d/sessions/agent-1.json", "/d/endpoint.json"),
        ("/d/sessions/agent-1.json/", "/d/endpoint.json"),
        ("/d/x/../sessions/agent-1.json", "/d/x/../endpoint.json"),
        ("/agent-1.json", "/endpoint.json"),
    ];
    for (session, endpoint) in cases {
        assert_eq!(
            endpoint_file(Path::new(session)).unwrap(),
            PathBuf::from(endpoint),
            "{session}"
        );
    }
}

#[test]
fn relative_session_paths_are_made_absolute_first() {
    let cwd = std::env::current_dir().unwrap();
    assert_eq!(
        endpoint_file(Path::new("agent-1.json")).unwrap(),
        cwd.parent().unwrap().join("endpoint.json")
    );
    assert_eq!(
        endpoint_file(Path::new("sessions/agent-1.json")).unwrap(),
        cwd.join("endpoint.json")
    );
}

#[test]
fn a_session_files_problem_is_named_before_any_call() {
    let data = tempfile::tempdir().unwrap();
    let sessions = data.path().join("sessions");
    std::fs::create_dir(&sessions).unwrap();
    let problem = |path: &Path| session_file_problem(path);
    let good = sessions.join("agent-1.json");
    std::fs::write(&good, r#"{"nodeId":"agent-1","token":"ab12"}"#).unwrap();
    assert_eq!(problem(&good), None, "no endpoint is needed: a server may be down");
    // Gone from an existing `sessions/` folder: the node's session was removed.
    assert_eq!(
        problem(&sessions.join("closed-node.json")),
        Some(SessionFileProblem::Removed { node_id: "closed-node".to_owned() })
    );
    // Anywhere else, a path that names no session file.
    for missing in [data.path().join("agent-1.json"), data.path().join("nowhere/sessions/a.json")] {
        assert_eq!(problem(&missing), Some(SessionFileProblem::Missing), "{}", missing.display());
    }
    // A folder cannot be read as a file (root reads any file, so a mode would not do).
    let folder = sessions.join("folder.json");
    std::fs::create_dir(&folder).unwrap();
    assert!(matches!(
        problem(&folder),
        Some(SessionFileProblem::Unreadable { message }) if message.contains("Is a directory")
    ));
    let not_json = sessions.join("broken.json");
    std::fs::write(&not_json, "{\"token\":").unwrap();
    assert_eq!(problem(&not_json), Some(SessionFileProblem::NotJson));
    for content in [r#"{"nodeId":"a"}"#, r#"{"token":""}"#, r#"{"token":"a b"}"#, "[]"] {
        std::fs::write(&not_json, content).unwrap();
        assert_eq!(problem(&not_json), Some(SessionFileProblem::NoToken), "{content}");
    }
}

#[test]
fn the_session_file_is_the_flag_else_the_environment_and_empty_is_missing() {
    use std::ffi::OsStr;

    use super::session_file;

    let env = Some(OsStr::new("env.json"));
    assert_eq!(session_file(Some(OsStr::new("f.json")), env), Some(PathBuf::from("f.json")));
    assert_eq!(session_file(Some(OsStr::new("")), env), None);
    assert_eq!(session_file(None, env), Some(PathBuf::from("env.json")));
    assert_eq!(session_file(None, Some(OsStr::new(""))), None);
    assert_eq!(session_file(None, None), None);
}
