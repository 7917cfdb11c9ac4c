//! Unit tests of the endpoint gate and of endpoint-file location.

use std::path::{Path, PathBuf};

use super::{InvalidEndpoint, endpoint_file, validate_endpoint};

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
