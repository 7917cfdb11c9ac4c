//! `cargo xtask test`, the README's test command: makes a machine with the Rust toolchain, Python
//! and npm able to run every test, then runs `cargo test --workspace --locked`.
//!
//! 1. The system packages the end-to-end tests use ([`SYSTEM_PROGRAMS`]: tmux, xterm, Xvfb,
//!    curl, GNU time, fincore, vim, less) are installed with `apt-get` when missing and running
//!    as root; otherwise the run stops and names the one command to run.
//! 2. The pinned third-party peers ([`termsprawl_test_support::peers::peers`]) are provisioned
//!    into the peers directory (`target/peers/<name>/`): one virtual environment per
//!    requirements file, and `npm ci` for each npm peer. Each is keyed by a hash of its pinned
//!    files and its runtime's version, stamped inside once it is complete ([`ensure`]), so that a
//!    second run reuses it without a download and a changed pin provisions it again; a lock file
//!    keeps two runs from provisioning at once.
//! 3. `cargo test --workspace --locked [ARGS]` runs with `TERMSPRAWL_PEERS` naming the peers
//!    directory, which the tests read through `termsprawl_test_support::peers`.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context as _, bail, ensure};
use termsprawl_external_term::SearchPath;
use termsprawl_test_support::peers::{self, Kind, PEERS_ENV, Peer, STAMP_FILE, Stamp};

use termsprawl_test_support::first_line_of;

/// The name of the lock file in the peers directory.
pub const LOCK_FILE: &str = ".lock";

/// The programs the end-to-end tests run, and the Debian package of each (`.ci/run` relies on
/// this list): tmux (terminals), xterm and Xvfb (the external terminal), curl and GNU time (the
/// bench harness test; `time` is a shell keyword, hence the path), fincore (the bench's test of
/// reading its programs back from disk), vim and less (the interactive programs headless's
/// protocol 1.4.0 tests drive).
pub const SYSTEM_PROGRAMS: &[(&str, &str)] = &[
    ("tmux", "tmux"),
    ("xterm", "xterm"),
    ("Xvfb", "xvfb"),
    ("curl", "curl"),
    ("/usr/bin/time", "time"),
    ("fincore", "util-linux-extra"),
    ("vim", "vim"),
    ("less", "less"),
];

/// Runs the whole command in the workspace at `root`; `Ok(false)` when the tests failed.
pub fn run(root: &Path, args: &[OsString]) -> anyhow::Result<bool> {
    let peer_list = peers::peers(root);
    install_system_packages(&peer_list)?;
    let peers_dir = absolute(&peers::dir())?;
    provision_all(&peers_dir, &peer_list)?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command.current_dir(root).args(cargo_test_args(args)).env(PEERS_ENV, &peers_dir);
    eprintln!(
        "xtask test: {PEERS_ENV}={} cargo {}",
        peers_dir.display(),
        shown(&cargo_test_args(args))
    );
    let status = command.status().context("cannot run cargo test")?;
    Ok(status.success())
}

/// `test --workspace --locked ARGS`; without `--workspace` when `ARGS` pick packages.
pub fn cargo_test_args(args: &[OsString]) -> Vec<OsString> {
    let picks_packages = args.iter().take_while(|arg| *arg != "--").any(|arg| {
        let arg = arg.to_string_lossy();
        arg.starts_with("-p") || arg.starts_with("--package")
    });
    let mut all: Vec<OsString> = vec!["test".into()];
    if !picks_packages {
        all.push("--workspace".into());
    }
    if !args.iter().take_while(|arg| *arg != "--").any(|arg| arg == "--locked") {
        all.push("--locked".into());
    }
    all.extend(args.iter().cloned());
    all
}

fn shown(args: &[OsString]) -> String {
    args.iter().map(|arg| arg.to_string_lossy().into_owned()).collect::<Vec<_>>().join(" ")
}

fn absolute(path: &Path) -> anyhow::Result<PathBuf> {
    if path.is_absolute() {
        return Ok(path.to_path_buf());
    }
    Ok(std::env::current_dir().context("no current directory")?.join(path))
}

/// The Debian packages whose programs `found` does not find: [`SYSTEM_PROGRAMS`], `python3` when
/// there is a Python peer and `npm` when there is an npm peer.
pub fn missing_packages(peer_list: &[Peer], found: impl Fn(&str) -> bool) -> Vec<&'static str> {
    let mut wanted: Vec<(&str, &'static str)> = SYSTEM_PROGRAMS.to_vec();
    if peer_list.iter().any(|peer| matches!(peer.kind, Kind::Python(_))) {
        wanted.push(("python3", "python3"));
    }
    if peer_list.iter().any(|peer| matches!(peer.kind, Kind::Npm(_))) {
        wanted.push(("npm", "npm"));
    }
    let mut missing: Vec<&'static str> = Vec::new();
    for (program, package) in wanted {
        if !found(program) && !missing.contains(&package) {
            missing.push(package);
        }
    }
    missing
}

/// The one command that installs `packages`, for a person to run.
pub fn install_command(packages: &[&str]) -> String {
    format!("sudo apt-get install -y {}", packages.join(" "))
}

fn install_system_packages(peer_list: &[Peer]) -> anyhow::Result<()> {
    let search = SearchPath::from_env();
    let mut missing = missing_packages(peer_list, |program| search.find(program).is_some());
    // Debian's python3 makes virtual environments only with python3-venv.
    if !missing.contains(&"python3")
        && peer_list.iter().any(|peer| matches!(peer.kind, Kind::Python(_)))
        && search.find("python3").is_some_and(|python| python == Path::new("/usr/bin/python3"))
        && !runs(Command::new("/usr/bin/python3").args(["-c", "import ensurepip, venv"]))
    {
        missing.push("python3-venv");
    }
    if missing.is_empty() {
        return Ok(());
    }
    if !rustix::process::geteuid().is_root() {
        bail!(
            "the tests need these system packages, which are not installed: {}; run `{}`, then \
             `cargo xtask test` again",
            missing.join(", "),
            install_command(&missing)
        );
    }
    eprintln!("xtask test: installing {} with apt-get", missing.join(" "));
    let updated = Command::new("apt-get").args(["update", "-qq"]).status();
    ensure!(
        updated.as_ref().is_ok_and(std::process::ExitStatus::success),
        "apt-get update failed ({updated:?}); install {} by hand",
        missing.join(" "),
    );
    let installed = Command::new("apt-get")
        .args(["install", "-y", "-qq"])
        .args(&missing)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .stdout(Stdio::null())
        .status();
    ensure!(
        installed.as_ref().is_ok_and(std::process::ExitStatus::success),
        "apt-get install {} failed ({installed:?})",
        missing.join(" "),
    );
    Ok(())
}

fn runs(command: &mut Command) -> bool {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// What [`ensure`] did with a peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Its stamp matched: nothing was done.
    Reused,
    /// It was (re)made from scratch.
    Provisioned,
}

/// The exclusive lock of a peers directory, held until dropped.
#[derive(Debug)]
pub struct Lock {
    _file: fs::File,
}

/// Takes the lock of `peers_dir` (creating the directory), waiting while another run holds it.
pub fn lock(peers_dir: &Path) -> anyhow::Result<Lock> {
    fs::create_dir_all(peers_dir)
        .with_context(|| format!("cannot create {}", peers_dir.display()))?;
    let path = peers_dir.join(LOCK_FILE);
    let file = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    if file.try_lock().is_err() {
        eprintln!("xtask test: waiting for another run that holds {}", path.display());
        file.lock().with_context(|| format!("cannot lock {}", path.display()))?;
    }
    Ok(Lock { _file: file })
}

/// Makes sure `peers_dir/<name>` holds a peer stamped `wanted`: under the lock, a directory
/// stamped `wanted` is reused; anything else is removed and `install` makes it again in the empty
/// directory, after which the stamp is written. An install that fails leaves no stamp (the next
/// run starts over) and its error.
pub fn ensure(
    peers_dir: &Path,
    name: &str,
    wanted: &Stamp,
    install: impl FnOnce(&Path) -> anyhow::Result<()>,
) -> anyhow::Result<Outcome> {
    let _lock = lock(peers_dir)?;
    let dir = peers_dir.join(name);
    if Stamp::read(&dir).as_ref() == Some(wanted) {
        return Ok(Outcome::Reused);
    }
    if dir.exists() {
        fs::remove_dir_all(&dir).with_context(|| format!("cannot remove {}", dir.display()))?;
    }
    fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    install(&dir)
        .with_context(|| format!("cannot provision the peer {name} in {}", dir.display()))?;
    let stamp = dir.join(STAMP_FILE);
    fs::write(&stamp, wanted.to_text())
        .with_context(|| format!("cannot write {}", stamp.display()))?;
    Ok(Outcome::Provisioned)
}

/// What makes a peer in its empty directory.
type Installer = Box<dyn FnOnce(&Path) -> anyhow::Result<()>>;

/// Provisions every peer of `peer_list` into `peers_dir`, saying what it did with each.
fn provision_all(peers_dir: &Path, peer_list: &[Peer]) -> anyhow::Result<()> {
    for peer in peer_list {
        let sources = peers::sources_hash(&peer.sources);
        let (runtime, install): (String, Installer) = match &peer.kind {
            Kind::Python(python_peer) => {
                let (python, version) = find_python(python_peer.min_python, &python_candidates())
                    .with_context(|| {
                    format!(
                        "the peer {} ({}) needs Python >= {}.{}, and none was found \
                         (python3, python3.N on PATH, or pyenv's versions)",
                        peer.name,
                        python_peer.requirements,
                        python_peer.min_python.0,
                        python_peer.min_python.1
                    )
                })?;
                let requirements = peer.sources[0].clone();
                (
                    format!("python {version}"),
                    Box::new(move |dir: &Path| install_python(&python, &requirements, dir)),
                )
            }
            Kind::Npm(folder) => {
                let folder = folder.clone();
                (node_runtime()?, Box::new(move |dir: &Path| install_npm(&folder, dir)))
            }
        };
        let wanted = Stamp { sources, runtime };
        let shown_sources: Vec<String> =
            peer.sources.iter().map(|source| source.display().to_string()).collect();
        eprintln!(
            "xtask test: peer {} ({}, {}): checking",
            peer.name,
            shown_sources.join(", "),
            wanted.runtime
        );
        let outcome = ensure(peers_dir, &peer.name, &wanted, install)?;
        let said = match outcome {
            Outcome::Reused => "reused, nothing downloaded",
            Outcome::Provisioned => "provisioned",
        };
        eprintln!(
            "xtask test: peer {}: {said} ({})",
            peer.name,
            peers_dir.join(&peer.name).display()
        );
    }
    Ok(())
}

/// `python -m venv DIR`, then `DIR/bin/python -m pip install -r REQUIREMENTS`.
fn install_python(python: &Path, requirements: &Path, dir: &Path) -> anyhow::Result<()> {
    let made = Command::new(python).arg("-m").arg("venv").arg(dir).status();
    ensure!(
        made.as_ref().is_ok_and(std::process::ExitStatus::success),
        "`{} -m venv {}` failed ({made:?}); on Debian, install python3-venv",
        python.display(),
        dir.display(),
    );
    let installed = Command::new(dir.join("bin/python"))
        .args(["-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-input", "-r"])
        .arg(requirements)
        .status();
    ensure!(
        installed.as_ref().is_ok_and(std::process::ExitStatus::success),
        "pip install -r {} failed ({installed:?})",
        requirements.display(),
    );
    Ok(())
}

/// Copies `package.json` and `package-lock.json` of `folder` into `dir` and runs `npm ci` there.
fn install_npm(folder: &Path, dir: &Path) -> anyhow::Result<()> {
    for name in ["package.json", "package-lock.json"] {
        fs::copy(folder.join(name), dir.join(name))
            .with_context(|| format!("cannot copy {}", folder.join(name).display()))?;
    }
    let installed = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(dir)
        .status();
    ensure!(
        installed.as_ref().is_ok_and(std::process::ExitStatus::success),
        "npm ci for {} failed ({installed:?})",
        folder.display(),
    );
    Ok(())
}

/// `node vX npm Y`, the runtime an npm peer is keyed by.
fn node_runtime() -> anyhow::Result<String> {
    let version = |program: &str| -> anyhow::Result<String> {
        let output =
            Command::new(program).arg("--version").stdin(Stdio::null()).output().with_context(
                || format!("cannot run {program} --version: install Node.js and npm"),
            )?;
        ensure!(output.status.success(), "{program} --version failed");
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
    };
    Ok(format!("node {} npm {}", version("node")?, version("npm")?))
}

/// Where a Python interpreter may be, in order of preference: `python3`, then `python3.N` on
/// `PATH` for N from 12 to 15, then every `<pyenv root>/versions/3.*/bin/python3` (the root from
/// `$PYENV_ROOT`, `pyenv root`, or `~/.pyenv`), newest first.
pub fn python_candidates() -> Vec<PathBuf> {
    let search = SearchPath::from_env();
    let mut candidates: Vec<PathBuf> = Vec::new();
    for name in ["python3", "python3.12", "python3.13", "python3.14", "python3.15"] {
        if let Some(path) = search.find_on_path(name) {
            candidates.push(path);
        }
    }
    let mut roots: Vec<PathBuf> = Vec::new();
    if let Some(root) = std::env::var_os("PYENV_ROOT").filter(|root| !root.is_empty()) {
        roots.push(PathBuf::from(root));
    }
    if let Ok(output) = Command::new("pyenv").arg("root").stderr(Stdio::null()).output()
        && output.status.success()
    {
        roots.push(PathBuf::from(String::from_utf8_lossy(&output.stdout).trim()));
    }
    if let Some(home) = std::env::var_os("HOME") {
        roots.push(Path::new(&home).join(".pyenv"));
    }
    for root in roots {
        candidates.extend(pyenv_versions(&root));
    }
    candidates.dedup();
    candidates
}

/// `<root>/versions/3.*/bin/python3` that exist, newest version first.
pub fn pyenv_versions(root: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(root.join("versions")) else { return Vec::new() };
    let mut found: Vec<((u32, u32, u32), PathBuf)> = entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let version = parse_version(&name)?;
            let python = entry.path().join("bin/python3");
            python.is_file().then_some((version, python))
        })
        .collect();
    found.sort_by_key(|(version, _)| std::cmp::Reverse(*version));
    found.into_iter().map(|(_, python)| python).collect()
}

/// `3.12.1` (or `3.12`) as numbers.
pub fn parse_version(text: &str) -> Option<(u32, u32, u32)> {
    let mut parts = text.trim().split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    let patch = parts.next().map_or(Some(0), |part| part.parse().ok())?;
    parts.next().is_none().then_some((major, minor, patch))
}

/// The first candidate that runs and reports a version of at least `min`; it and its version.
pub fn find_python(min: (u32, u32), candidates: &[PathBuf]) -> Option<(PathBuf, String)> {
    candidates.iter().find_map(|candidate| {
        let script = "import sys; print('%d.%d.%d' % sys.version_info[:3])";
        let text = first_line_of(candidate.as_os_str(), &["-c", script])?;
        let (major, minor, _) = parse_version(&text)?;
        ((major, minor) >= min).then(|| (candidate.clone(), text))
    })
}

#[cfg(test)]
mod tests;
