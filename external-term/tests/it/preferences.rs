//! `externalTerminal` templates and `agent-tools/preferences.json`.

use std::fs;

use serde_json::json;
use termsprawl_external_term::{Error, ExternalTerminal, load_external_terminal, preferences_path};

use crate::support::write_preferences;

const TEMPLATE_MESSAGE: &str =
    "External terminal args must contain exactly one {command} placeholder";

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| (*item).to_owned()).collect()
}

#[test]
fn a_template_needs_an_executable_and_exactly_one_placeholder() {
    let ok = ExternalTerminal::new("xterm".to_owned(), strings(&["-e", "{command}"])).unwrap();
    assert_eq!(ok.executable(), "xterm");
    assert_eq!(ok.args(), strings(&["-e", "{command}"]));

    let bad: [(&str, &[&str]); 5] = [
        ("", &["-e", "{command}"]),
        ("xterm", &[]),
        ("xterm", &["-e"]),
        ("xterm", &["{command}", "{command}"]),
        ("xterm", &["{command}x", "x{command}", " {command}", "{COMMAND}"]),
    ];
    for (executable, args) in bad {
        let error = ExternalTerminal::new(executable.to_owned(), strings(args)).unwrap_err();
        assert!(matches!(error, Error::InvalidTemplate), "{executable:?} {args:?}: {error:?}");
        assert_eq!(error.to_string(), TEMPLATE_MESSAGE);
    }
}

#[test]
fn json_templates() {
    let ok = json!({"executable": "kitty", "args": ["--", "{command}"], "comment": "unknown members are fine"});
    let ok = ExternalTerminal::from_json(&ok).unwrap();
    assert_eq!((ok.executable(), ok.args()), ("kitty", &strings(&["--", "{command}"])[..]));

    let bad = [
        json!("xterm -e {command}"),
        json!(["xterm", "{command}"]),
        json!(7),
        json!({"args": ["{command}"]}),
        json!({"executable": null, "args": ["{command}"]}),
        json!({"executable": 1, "args": ["{command}"]}),
        json!({"executable": "", "args": ["{command}"]}),
        json!({"executable": "xterm"}),
        json!({"executable": "xterm", "args": "{command}"}),
        json!({"executable": "xterm", "args": {"0": "{command}"}}),
        json!({"executable": "xterm", "args": ["{command}", 1]}),
        json!({"executable": "xterm", "args": ["{command}", null]}),
        json!({"executable": "xterm", "args": ["{command}", ["-e"]]}),
        json!({"executable": "xterm", "args": []}),
        json!({"executable": "xterm", "args": ["{command}x"]}),
        json!({"executable": "xterm", "args": ["{command}", "-e", "{command}"]}),
    ];
    for value in bad {
        let error = ExternalTerminal::from_json(&value).unwrap_err();
        assert!(matches!(error, Error::InvalidTemplate), "{value}: {error:?}");
        assert_eq!(error.to_string(), TEMPLATE_MESSAGE);
    }
}

#[test]
fn no_file_or_no_member_means_no_preference() {
    let user_data = tempfile::tempdir().unwrap();
    assert_eq!(load_external_terminal(user_data.path()).unwrap(), None);

    for content in [
        "{}",
        r#"{"externalTerminal":null}"#,
        r#"{"custom":{"executable":"my-agent","instructionFlag":"--system"}}"#,
    ] {
        write_preferences(user_data.path(), content);
        assert_eq!(load_external_terminal(user_data.path()).unwrap(), None, "{content}");
    }
}

#[test]
fn the_file_is_read_afresh_on_every_use() {
    let user_data = tempfile::tempdir().unwrap();
    write_preferences(
        user_data.path(),
        r#"{"externalTerminal":{"executable":"a","args":["{command}"]}}"#,
    );
    let first = load_external_terminal(user_data.path()).unwrap().unwrap();
    assert_eq!(first.executable(), "a");

    write_preferences(
        user_data.path(),
        r#"{"externalTerminal":{"executable":"b","args":["-e","{command}"]}}"#,
    );
    let second = load_external_terminal(user_data.path()).unwrap().unwrap();
    assert_eq!((second.executable(), second.args()), ("b", &strings(&["-e", "{command}"])[..]));

    fs::remove_file(preferences_path(user_data.path())).unwrap();
    assert_eq!(load_external_terminal(user_data.path()).unwrap(), None);
}

#[test]
fn a_file_that_is_not_a_json_object_is_invalid() {
    let user_data = tempfile::tempdir().unwrap();
    for content in
        ["", "{", "not json", "{\"externalTerminal\":}", "[]", "null", "5", "\"x\"", "{} {}"]
    {
        write_preferences(user_data.path(), content);
        let error = load_external_terminal(user_data.path()).unwrap_err();
        assert!(
            matches!(&error, Error::InvalidPreferences { path } if *path == preferences_path(user_data.path())),
            "{content:?}: {error:?}"
        );
        assert_eq!(error.to_string(), "Invalid agent-tools/preferences.json");
    }
}

#[test]
fn a_bad_template_in_the_file() {
    let user_data = tempfile::tempdir().unwrap();
    write_preferences(
        user_data.path(),
        r#"{"externalTerminal":{"executable":"xterm","args":["-e"]}}"#,
    );
    let error = load_external_terminal(user_data.path()).unwrap_err();
    assert_eq!(error.to_string(), TEMPLATE_MESSAGE);
}

#[test]
fn an_unreadable_file() {
    let user_data = tempfile::tempdir().unwrap();
    let path = preferences_path(user_data.path());
    fs::create_dir_all(&path).unwrap();
    let error = load_external_terminal(user_data.path()).unwrap_err();
    assert!(matches!(error, Error::ReadPreferences { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        format!("could not read {}: Is a directory (os error 21)", path.display())
    );
}
