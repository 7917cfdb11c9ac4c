//! Unit tests of `cargo xtask test`'s provisioning: keying, reuse, re-provisioning, the lock, the
//! choice of Python and of system packages; all in temp dirs, with stand-in installers and
//! interpreters (no network).

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use termsprawl_test_support::peers::{self, Kind, PYTHON_PEERS, STAMP_FILE, Stamp};

use super::{
    LOCK_FILE, Outcome, cargo_test_args, ensure, find_python, install_command, lock,
    missing_packages, parse_version, pyenv_versions,
};

fn stamp(sources: &str, runtime: &str) -> Stamp {
    Stamp { sources: sources.to_owned(), runtime: runtime.to_owned() }
}

/// An installer that counts its runs and leaves a marker file.
fn counting(count: &AtomicUsize) -> impl FnOnce(&Path) -> anyhow::Result<()> + '_ {
    move |dir: &Path| {
        count.fetch_add(1, Ordering::SeqCst);
        std::fs::write(dir.join("installed"), "yes")?;
        Ok(())
    }
}

#[test]
fn a_peer_is_provisioned_once_and_then_reused_while_its_key_holds() {
    let temp = tempfile::TempDir::new().unwrap();
    let count = AtomicUsize::new(0);
    let key = stamp("abc", "python 3.11.7");
    assert_eq!(
        ensure(temp.path(), "mcp-sdk", &key, counting(&count)).unwrap(),
        Outcome::Provisioned
    );
    assert_eq!(Stamp::read(&temp.path().join("mcp-sdk")), Some(key.clone()));
    assert_eq!(ensure(temp.path(), "mcp-sdk", &key, counting(&count)).unwrap(), Outcome::Reused);
    assert_eq!(count.load(Ordering::SeqCst), 1, "the second run installed again");
    assert!(temp.path().join("mcp-sdk/installed").is_file());
}

#[test]
fn changed_pins_or_a_changed_runtime_provision_again_from_an_empty_directory() {
    let temp = tempfile::TempDir::new().unwrap();
    let count = AtomicUsize::new(0);
    let dir = temp.path().join("acp-sdk");
    ensure(temp.path(), "acp-sdk", &stamp("abc", "python 3.11.7"), counting(&count)).unwrap();
    std::fs::write(dir.join("left-over"), "old").unwrap();
    let changed_pins = stamp("def", "python 3.11.7");
    assert_eq!(
        ensure(temp.path(), "acp-sdk", &changed_pins, counting(&count)).unwrap(),
        Outcome::Provisioned
    );
    assert!(!dir.join("left-over").exists(), "a re-provisioned peer starts empty");
    let changed_runtime = stamp("def", "python 3.12.1");
    assert_eq!(
        ensure(temp.path(), "acp-sdk", &changed_runtime, counting(&count)).unwrap(),
        Outcome::Provisioned
    );
    assert_eq!(count.load(Ordering::SeqCst), 3);
    assert_eq!(Stamp::read(&dir), Some(changed_runtime));
}

#[test]
fn a_failed_install_leaves_no_stamp_and_the_next_run_starts_over() {
    let temp = tempfile::TempDir::new().unwrap();
    let key = stamp("abc", "node v20 npm 11");
    let failed = ensure(temp.path(), "node", &key, |dir| {
        std::fs::write(dir.join("half"), "")?;
        anyhow::bail!("network down")
    })
    .unwrap_err();
    let text = format!("{failed:#}");
    assert!(
        text.contains("cannot provision the peer node") && text.contains("network down"),
        "{text}"
    );
    assert!(!temp.path().join("node").join(STAMP_FILE).exists());
    let count = AtomicUsize::new(0);
    assert_eq!(ensure(temp.path(), "node", &key, counting(&count)).unwrap(), Outcome::Provisioned);
    assert!(!temp.path().join("node/half").exists());
}

#[test]
fn a_garbled_stamp_counts_as_not_provisioned() {
    let temp = tempfile::TempDir::new().unwrap();
    let dir = temp.path().join("mcp-sdk");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(STAMP_FILE), "sources abc\n").unwrap();
    let count = AtomicUsize::new(0);
    let key = stamp("abc", "python 3.11.7");
    assert_eq!(
        ensure(temp.path(), "mcp-sdk", &key, counting(&count)).unwrap(),
        Outcome::Provisioned
    );
}

#[test]
fn the_lock_is_exclusive_across_open_files() {
    let temp = tempfile::TempDir::new().unwrap();
    let held = lock(temp.path()).unwrap();
    let other = std::fs::OpenOptions::new().write(true).open(temp.path().join(LOCK_FILE)).unwrap();
    assert!(other.try_lock().is_err(), "a second holder got the lock");
    drop(held);
    // flock(2) belongs to the open file, which a process that another test thread forks holds
    // too until it execs (close-on-exec): the release can show a moment after the drop.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while other.try_lock().is_err() {
        assert!(std::time::Instant::now() < deadline, "the lock was not released on drop");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn two_runs_at_once_provision_a_peer_once() {
    let temp = Arc::new(tempfile::TempDir::new().unwrap());
    let count = Arc::new(AtomicUsize::new(0));
    let start = Arc::new(Barrier::new(2));
    let runs: Vec<_> = (0..2)
        .map(|_| {
            let (temp, count, start) = (Arc::clone(&temp), Arc::clone(&count), Arc::clone(&start));
            std::thread::spawn(move || {
                start.wait();
                ensure(temp.path(), "fast-agent", &stamp("abc", "python 3.12.1"), |dir| {
                    count.fetch_add(1, Ordering::SeqCst);
                    // Long enough for the other run to arrive while this one installs.
                    std::thread::sleep(Duration::from_millis(300));
                    std::fs::write(dir.join("installed"), "yes")?;
                    Ok(())
                })
                .unwrap()
            })
        })
        .collect();
    let mut outcomes: Vec<Outcome> = runs.into_iter().map(|run| run.join().unwrap()).collect();
    outcomes.sort_by_key(|outcome| *outcome == Outcome::Reused);
    assert_eq!(outcomes, [Outcome::Provisioned, Outcome::Reused]);
    assert_eq!(count.load(Ordering::SeqCst), 1);
}

#[test]
fn the_key_follows_the_pinned_files_content() {
    let temp = tempfile::TempDir::new().unwrap();
    let requirements = temp.path().join("requirements.txt");
    std::fs::write(&requirements, "mcp==2.3.0\n").unwrap();
    let sources = vec![requirements.clone()];
    let first = peers::sources_hash(&sources);
    assert_eq!(first.len(), 64);
    assert_eq!(peers::sources_hash(&sources), first, "the same pins give the same key");
    std::fs::write(&requirements, "mcp==2.3.1\n").unwrap();
    assert_ne!(peers::sources_hash(&sources), first, "a changed pin changes the key");
    std::fs::remove_file(&requirements).unwrap();
    assert_ne!(peers::sources_hash(&sources), first);
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn the_peers_are_the_requirements_files_and_every_locked_npm_folder() {
    let temp = tempfile::TempDir::new().unwrap();
    let root = temp.path();
    write(&root.join("tests/python/requirements.txt"), "mcp==2.3.0\n");
    write(&root.join("tests/python/requirements-acp.txt"), "agent-client-protocol==0.12.1\n");
    write(&root.join("tests/node/package.json"), "{}");
    write(&root.join("tests/node/package-lock.json"), "{}");
    write(&root.join("tests/node/inspector/package.json"), "{}");
    write(&root.join("tests/node/inspector/package-lock.json"), "{}");
    write(&root.join("tests/node/unlocked/package.json"), "{}");
    write(&root.join("tests/node/node_modules/x/package-lock.json"), "{}");
    let found = peers::peers(root);
    let names: Vec<&str> = found.iter().map(|peer| peer.name.as_str()).collect();
    // fast-agent is optional: no requirements file, no peer.
    assert_eq!(names, ["mcp-sdk", "acp-sdk", "node", "node/inspector"]);
    assert_eq!(found[0].kind, Kind::Python(PYTHON_PEERS[0]));
    assert_eq!(found[0].sources, [root.join("tests/python/requirements.txt")]);
    assert_eq!(found[3].kind, Kind::Npm(root.join("tests/node/inspector")));
    assert_eq!(
        found[3].sources,
        [
            root.join("tests/node/inspector/package.json"),
            root.join("tests/node/inspector/package-lock.json")
        ]
    );
    write(&root.join("tests/python/requirements-fast-agent.txt"), "fast-agent-mcp==1\n");
    let names: Vec<String> = peers::peers(root).into_iter().map(|peer| peer.name).collect();
    assert_eq!(names, ["mcp-sdk", "acp-sdk", "fast-agent", "node", "node/inspector"]);
}

/// A stand-in interpreter that prints `version` (or fails when it is empty).
fn fake_python(dir: &Path, name: &str, version: &str) -> PathBuf {
    let path = dir.join(name);
    let body = if version.is_empty() { "exit 127".to_owned() } else { format!("echo {version}") };
    write(&path, &format!("#!/bin/sh\n{body}\n"));
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn the_first_python_that_runs_and_is_new_enough_is_chosen() {
    let temp = tempfile::TempDir::new().unwrap();
    let old = fake_python(temp.path(), "python3", "3.11.7");
    // A pyenv shim whose version is not selected fails to run.
    let shim = fake_python(temp.path(), "python3.12", "");
    let new = fake_python(temp.path(), "py312", "3.12.1");
    let candidates = [old.clone(), shim, new.clone(), temp.path().join("missing")];
    assert_eq!(find_python((3, 10), &candidates), Some((old, "3.11.7".to_owned())));
    assert_eq!(find_python((3, 12), &candidates), Some((new, "3.12.1".to_owned())));
    assert_eq!(find_python((3, 14), &candidates), None);
}

#[test]
fn pyenv_versions_are_listed_newest_first() {
    let temp = tempfile::TempDir::new().unwrap();
    for version in ["3.9.18", "3.12.1", "3.13.0", "2.7.18", "system-ish"] {
        write(&temp.path().join(format!("versions/{version}/bin/python3")), "");
    }
    std::fs::create_dir_all(temp.path().join("versions/3.14.0/bin")).unwrap();
    let found = pyenv_versions(temp.path());
    let versions: Vec<String> = found
        .iter()
        .map(|path| {
            path.parent()
                .unwrap()
                .parent()
                .unwrap()
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert_eq!(versions, ["3.13.0", "3.12.1", "3.9.18", "2.7.18"]);
    assert_eq!(parse_version("3.12"), Some((3, 12, 0)));
    assert_eq!(parse_version("3.12.1\n"), Some((3, 12, 1)));
    assert_eq!(parse_version("3.12.1rc1"), None);
}

#[test]
fn missing_programs_become_one_install_command() {
    let temp = tempfile::TempDir::new().unwrap();
    write(&temp.path().join("tests/python/requirements.txt"), "x==1\n");
    write(&temp.path().join("tests/node/package-lock.json"), "{}");
    let peer_list = peers::peers(temp.path());
    let everything = missing_packages(&peer_list, |_| true);
    assert_eq!(everything, Vec::<&str>::new());
    let missing = missing_packages(&peer_list, |program| {
        !["xterm", "Xvfb", "/usr/bin/time", "npm"].contains(&program)
    });
    assert_eq!(missing, ["xterm", "xvfb", "time", "npm"]);
    assert_eq!(install_command(&missing), "sudo apt-get install -y xterm xvfb time npm");
    // Without peers, neither python3 nor npm is needed.
    assert_eq!(missing_packages(&[], |program| program != "python3"), Vec::<&str>::new());
}

fn args(words: &[&str]) -> Vec<OsString> {
    words.iter().map(OsString::from).collect()
}

#[test]
fn cargo_test_gets_the_workspace_unless_packages_are_picked() {
    assert_eq!(cargo_test_args(&[]), args(&["test", "--workspace", "--locked"]));
    assert_eq!(
        cargo_test_args(&args(&["--", "mcp_interop"])),
        args(&["test", "--workspace", "--locked", "--", "mcp_interop"])
    );
    assert_eq!(
        cargo_test_args(&args(&["-p", "termsprawl-cli", "--test", "it"])),
        args(&["test", "--locked", "-p", "termsprawl-cli", "--test", "it"])
    );
    assert_eq!(
        cargo_test_args(&args(&["--package=xtask", "--locked"])),
        args(&["test", "--package=xtask", "--locked"])
    );
    // After `--`, words belong to the test binary.
    assert_eq!(
        cargo_test_args(&args(&["--", "-p"])),
        args(&["test", "--workspace", "--locked", "--", "-p"])
    );
}
