//! The pure command builder: one snapshot per probe entry and per template form, and its errors.

use std::cell::RefCell;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use termsprawl_external_term::{
    Error, ExternalTerminal, PROBES, TerminalCommand, TmuxLocation, terminal_command,
};

fn tmux() -> TmuxLocation {
    TmuxLocation::managed(PathBuf::from("/usr/bin/tmux"), Path::new("/home/u/.config/termsprawl"))
}

/// A finder that resolves exactly `present` to `/usr/bin/<name>` (absolute names to themselves).
fn finder(present: &[&str]) -> impl Fn(&str) -> Option<PathBuf> + use<> {
    let present: Vec<String> = present.iter().map(|name| (*name).to_owned()).collect();
    move |name: &str| {
        present.iter().any(|known| known == name).then(|| Path::new("/usr/bin").join(name))
    }
}

fn render(command: &TerminalCommand) -> Value {
    let lossy = |arg: &OsString| arg.to_string_lossy().into_owned();
    json!({ "program": command.program.to_string_lossy(), "args": command.args.iter().map(lossy).collect::<Vec<_>>() })
}

fn template(executable: &str, args: &[&str]) -> ExternalTerminal {
    ExternalTerminal::new(executable.to_owned(), args.iter().map(|arg| (*arg).to_owned()).collect())
        .unwrap()
}

#[test]
fn each_probe_entry() {
    for probe in PROBES {
        let find = finder(&[probe.executable]);
        let command = terminal_command(&tmux(), "agent-1", None, &find).unwrap();
        insta::assert_json_snapshot!(format!("probe_{}", probe.executable), render(&command));
    }
}

#[test]
fn the_spec_example() {
    let tmux = TmuxLocation {
        program: PathBuf::from("/usr/bin/tmux"),
        base_args: vec!["-S".into(), "/run/sock".into()],
    };
    let command = terminal_command(&tmux, "n1", None, &finder(&["kitty"])).unwrap();
    assert_eq!(
        render(&command),
        json!({
            "program": "/usr/bin/kitty",
            "args": ["--", "/usr/bin/tmux", "-S", "/run/sock", "attach-session", "-t", "ts-n1"]
        })
    );
}

#[test]
fn probes_are_tried_in_order_and_the_first_found_wins() {
    let asked = RefCell::new(Vec::new());
    let find = |name: &str| {
        asked.borrow_mut().push(name.to_owned());
        None
    };
    let error = terminal_command(&tmux(), "agent-1", None, &find).unwrap_err();
    assert!(matches!(error, Error::NoEmulator), "{error:?}");
    assert_eq!(
        error.to_string(),
        "No supported Linux terminal emulator found. Install one or configure agent-tools/preferences.json. The canvas terminal is still available."
    );
    assert_eq!(
        *asked.borrow(),
        ["x-terminal-emulator", "kitty", "alacritty", "gnome-terminal", "konsole", "xterm"]
    );

    let command = terminal_command(&tmux(), "agent-1", None, &finder(&["xterm", "kitty"])).unwrap();
    assert_eq!(command.program, Path::new("/usr/bin/kitty"));
    let command =
        terminal_command(&tmux(), "agent-1", None, &finder(&PROBES.map(|probe| probe.executable)))
            .unwrap();
    assert_eq!(command.program, Path::new("/usr/bin/x-terminal-emulator"));
}

#[test]
fn each_template_form() {
    let cases: [(&str, &str, &[&str]); 5] = [
        ("template_dash_e", "xterm", &["-e", "{command}"]),
        ("template_dash_dash", "kitty", &["--", "{command}"]),
        ("template_alone", "/usr/bin/wezterm-start", &["{command}"]),
        ("template_placeholder_first", "foot", &["{command}", "--trailing"]),
        (
            "template_literal_lookalikes",
            "foot",
            &["--title", "{command}x", "-e", "{command}", "{command} ", "x{command}", "{COMMAND}"],
        ),
    ];
    for (name, executable, args) in cases {
        let config = template(executable, args);
        let command =
            terminal_command(&tmux(), "agent-1", Some(&config), &finder(&[executable])).unwrap();
        insta::assert_json_snapshot!(name, render(&command));
    }
}

#[test]
fn a_configured_executable_is_resolved_with_the_finder_and_never_falls_back() {
    let asked = RefCell::new(Vec::new());
    let find = |name: &str| {
        asked.borrow_mut().push(name.to_owned());
        (name == "xterm").then(|| PathBuf::from("/usr/bin/xterm"))
    };
    let config = template("my-term", &["-e", "{command}"]);
    let error = terminal_command(&tmux(), "agent-1", Some(&config), &find).unwrap_err();
    assert!(matches!(&error, Error::ExecutableNotFound { executable } if executable == "my-term"));
    assert_eq!(error.to_string(), "Configured external terminal executable was not found");
    assert_eq!(*asked.borrow(), ["my-term"]);
}

#[test]
fn an_invalid_node_id_is_refused_before_anything_is_resolved() {
    let find = |name: &str| panic!("nothing may be resolved, asked for {name}");
    for node_id in ["", "a:b", "a.b", "-a", "a b"] {
        let error = terminal_command(&tmux(), node_id, None, &find).unwrap_err();
        assert!(matches!(error, Error::InvalidNodeId), "{node_id:?}: {error:?}");
        assert_eq!(error.to_string(), "Invalid agent node ID");
    }
}
