//! Unit tests of the attach argv and the tmux fallbacks.

use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::{TmuxLocation, find_tmux_in, session_name};
use crate::error::Error;
use crate::search_path::SearchPath;

#[test]
fn session_and_attach_argv() {
    assert_eq!(session_name("n1"), "ts-n1");
    let tmux = TmuxLocation::managed(PathBuf::from("/usr/bin/tmux"), Path::new("/ud"));
    let argv: Vec<OsString> = tmux.attach_argv("n1");
    assert_eq!(
        argv,
        [
            "/usr/bin/tmux",
            "-S",
            "/ud/tmux-sockets/termsprawl",
            "-f",
            "/ud/tmux.conf",
            "attach-session",
            "-t",
            "ts-n1"
        ]
        .map(OsString::from)
    );
}

fn executable(path: &Path) {
    fs::write(path, "#!/bin/sh\n").unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn tmux_on_path_wins_over_the_fallbacks() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    fs::create_dir(&bin).unwrap();
    executable(&bin.join("tmux"));
    let fallback = dir.path().join("fallback-tmux");
    executable(&fallback);
    let fallbacks = [fallback.to_str().unwrap()];

    let search_path = SearchPath::new(Some(bin.as_os_str()), None);
    assert_eq!(find_tmux_in(&search_path, &fallbacks).unwrap(), bin.join("tmux"));
}

#[test]
fn tmux_falls_back_to_the_first_existing_fallback() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let not_executable = dir.path().join("not-executable");
    fs::write(&not_executable, "").unwrap();
    let second = dir.path().join("second");
    executable(&second);
    let third = dir.path().join("third");
    executable(&third);
    let fallbacks = [&missing, &not_executable, &second, &third].map(|path| path.to_str().unwrap());

    let empty = SearchPath::new(None, Some(dir.path()));
    assert_eq!(find_tmux_in(&empty, &fallbacks).unwrap(), second);
}

#[test]
fn tmux_not_found() {
    let dir = tempfile::tempdir().unwrap();
    // `~/.local/bin` is not searched for tmux, only PATH and the fallbacks.
    let local_bin = dir.path().join(".local/bin");
    fs::create_dir_all(&local_bin).unwrap();
    executable(&local_bin.join("tmux"));
    let missing = dir.path().join("missing");

    let search_path = SearchPath::new(None, Some(dir.path()));
    let error = find_tmux_in(&search_path, &[missing.to_str().unwrap()]).unwrap_err();
    assert!(matches!(error, Error::TmuxNotFound), "{error:?}");
    assert_eq!(
        error.to_string(),
        "tmux was not found on PATH nor at /usr/bin/tmux, /usr/local/bin/tmux or /opt/homebrew/bin/tmux"
    );
}
