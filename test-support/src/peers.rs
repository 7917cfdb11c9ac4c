//! Where the pinned third-party peers are: one directory per peer under the peers directory
//! (`$TERMSPRAWL_PEERS`, else `<target dir>/peers`), each provisioned by `cargo xtask test` from
//! its pinned files and marked finished by a [`Stamp`] that keys it by a hash of those files and
//! the runtime's version.
//!
//! - Python peers ([`PYTHON_PEERS`]): a virtual environment per requirements file of
//!   `tests/python/`, its interpreter at `<dir>/bin/python` ([`python`]).
//! - npm peers: every folder under `tests/node/` with a `package-lock.json`, installed with
//!   `npm ci` into `node/<folder below tests/node>` ([`node_modules`]).
//!
//! A test that asks for a peer that is missing or provisioned from other pinned files fails with
//! a message that names `cargo xtask test`: a peer is never skipped.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The environment variable that names the peers directory (`cargo xtask test` sets it).
pub const PEERS_ENV: &str = "TERMSPRAWL_PEERS";

/// The file inside a peer's directory that marks it provisioned.
pub const STAMP_FILE: &str = "termsprawl-peer.stamp";

/// The folder under `tests/` whose sub-folders with a `package-lock.json` are npm peers.
pub const NODE_PEERS: &str = "tests/node";

/// A Python peer: a virtual environment made from one requirements file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PythonPeer {
    /// Its directory's name in the peers directory.
    pub name: &'static str,
    /// The requirements file, relative to the workspace root.
    pub requirements: &'static str,
    /// The oldest Python it runs on, `(major, minor)`.
    pub min_python: (u32, u32),
    /// Whether the requirements file must exist (an optional peer is provisioned when it does).
    pub required: bool,
}

/// The Python peers, one per requirements file.
pub const PYTHON_PEERS: &[PythonPeer] = &[
    // The official MCP Python SDK: the third-party client of spec/mcp.md §6.
    PythonPeer {
        name: "mcp-sdk",
        requirements: "tests/python/requirements.txt",
        min_python: (3, 10),
        required: true,
    },
    // The official ACP Python SDK, under the deterministic peer agent of spec/acp.md §4.
    PythonPeer {
        name: "acp-sdk",
        requirements: "tests/python/requirements-acp.txt",
        min_python: (3, 10),
        required: true,
    },
    // fast-agent, a third-party MCP host and ACP agent.
    PythonPeer {
        name: "fast-agent",
        requirements: "tests/python/requirements-fast-agent.txt",
        min_python: (3, 12),
        required: false,
    },
];

/// What kind of peer a directory holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// A virtual environment.
    Python(PythonPeer),
    /// `node_modules` installed by `npm ci`; the folder holding `package.json` and
    /// `package-lock.json`.
    Npm(PathBuf),
}

/// One peer of a workspace, as found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peer {
    /// Its directory's path relative to the peers directory (`mcp-sdk`, `node`, `node/x`).
    pub name: String,
    /// What it is.
    pub kind: Kind,
    /// The pinned files its key hashes, absolute.
    pub sources: Vec<PathBuf>,
}

/// The peers of the workspace at `root`: the Python peers whose requirements file exists (all
/// required ones, whether or not), then the npm peers, sorted by folder.
pub fn peers(root: &Path) -> Vec<Peer> {
    let mut found = Vec::new();
    for peer in PYTHON_PEERS {
        let requirements = root.join(peer.requirements);
        if peer.required || requirements.is_file() {
            found.push(Peer {
                name: peer.name.to_owned(),
                kind: Kind::Python(*peer),
                sources: vec![requirements],
            });
        }
    }
    let mut folders = Vec::new();
    collect_npm_folders(&root.join(NODE_PEERS), &mut folders);
    folders.sort();
    for folder in folders {
        let below = folder.strip_prefix(root.join(NODE_PEERS)).unwrap_or(Path::new(""));
        let name = npm_peer_name(&below.to_string_lossy());
        found.push(Peer {
            name,
            sources: vec![folder.join("package.json"), folder.join("package-lock.json")],
            kind: Kind::Npm(folder),
        });
    }
    found
}

fn collect_npm_folders(dir: &Path, found: &mut Vec<PathBuf>) {
    if dir.join("package-lock.json").is_file() {
        found.push(dir.to_path_buf());
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let skipped = path.file_name().is_some_and(|name| name == "node_modules");
        if !skipped && entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            collect_npm_folders(&path, found);
        }
    }
}

/// The hex SHA-256 of the pinned files, each preceded by its file name and length, in order; a
/// file that cannot be read counts as absent (and so differs from any content).
pub fn sources_hash(sources: &[PathBuf]) -> String {
    let mut hasher = Sha256::new();
    for source in sources {
        let name = source.file_name().map(|name| name.to_string_lossy()).unwrap_or_default();
        hasher.update(name.as_bytes());
        match std::fs::read(source) {
            Ok(bytes) => {
                hasher.update(format!(":{}\n", bytes.len()).as_bytes());
                hasher.update(&bytes);
            }
            Err(_) => hasher.update(b":absent\n"),
        }
    }
    let mut hex = String::new();
    for byte in hasher.finalize() {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

/// What a provisioned peer was made from: its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    /// [`sources_hash`] of its pinned files.
    pub sources: String,
    /// The runtime's version (`python 3.11.7`, `node v20.20.2`).
    pub runtime: String,
}

impl Stamp {
    /// The stamp's text: `sources <hash>` and `runtime <version>` lines.
    pub fn to_text(&self) -> String {
        format!("sources {}\nruntime {}\n", self.sources, self.runtime)
    }

    /// Parses [`Stamp::to_text`]; `None` for anything else.
    pub fn parse(text: &str) -> Option<Stamp> {
        let mut lines = text.lines();
        let sources = lines.next()?.strip_prefix("sources ")?.to_owned();
        let runtime = lines.next()?.strip_prefix("runtime ")?.to_owned();
        lines.next().is_none().then_some(Stamp { sources, runtime })
    }

    /// The stamp of the peer in `dir`, if it is there and readable.
    pub fn read(dir: &Path) -> Option<Stamp> {
        Stamp::parse(&std::fs::read_to_string(dir.join(STAMP_FILE)).ok()?)
    }
}

/// The peers directory that `cargo xtask test` provisions for the workspace at `root`:
/// `$CARGO_TARGET_DIR/peers` (relative to `root` when relative), else `<root>/target/peers`.
pub fn default_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(target) if !target.is_empty() => root.join(target).join("peers"),
        _ => root.join("target").join("peers"),
    }
}

/// The peers directory: `$TERMSPRAWL_PEERS`, else [`default_dir`] of this workspace.
pub fn dir() -> PathBuf {
    match std::env::var_os(PEERS_ENV) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => default_dir(&crate::workspace_root()),
    }
}

/// Why a peer cannot be used, as a sentence that names the command that fixes it.
pub fn problem(peers_dir: &Path, peer: &Peer) -> Option<String> {
    let dir = peers_dir.join(&peer.name);
    let pinned: Vec<String> = peer.sources.iter().map(|path| path.display().to_string()).collect();
    let pinned = pinned.join(", ");
    let state = match Stamp::read(&dir) {
        None => "is not provisioned",
        Some(stamp) if stamp.sources != sources_hash(&peer.sources) => {
            "was provisioned from other pinned files"
        }
        Some(_) => return None,
    };
    Some(format!(
        "the pinned peer `{}` ({pinned}) {state} in {}: run `cargo xtask test`, which provisions \
         the peers into {} (set {PEERS_ENV} to use another directory) and runs the tests",
        peer.name,
        dir.display(),
        peers_dir.display()
    ))
}

/// The directory of the provisioned peer `name` of this workspace.
///
/// # Panics
///
/// When this workspace has no such peer, or it is not provisioned from the current pinned files:
/// the message names `cargo xtask test`.
pub fn peer_dir(name: &str) -> PathBuf {
    let root = crate::workspace_root();
    let peer = peers(&root).into_iter().find(|peer| peer.name == name).unwrap_or_else(|| {
        panic!("this workspace pins no peer `{name}` (see termsprawl_test_support::peers)")
    });
    let peers_dir = dir();
    if let Some(problem) = problem(&peers_dir, &peer) {
        panic!("{problem}");
    }
    peers_dir.join(name)
}

/// The interpreter of the provisioned Python peer `name` (`mcp-sdk`, `acp-sdk`, `fast-agent`).
///
/// # Panics
///
/// As [`peer_dir`].
pub fn python(name: &str) -> PathBuf {
    peer_dir(name).join("bin").join("python")
}

/// The `node_modules` of the provisioned npm peer of `tests/node/<folder>` (`""` for
/// `tests/node` itself).
///
/// # Panics
///
/// As [`peer_dir`].
pub fn node_modules(folder: &str) -> PathBuf {
    peer_dir(&npm_peer_name(folder)).join("node_modules")
}

/// `node` for `tests/node` itself, `node/<folder>` for a folder below it.
fn npm_peer_name(folder: &str) -> String {
    if folder.is_empty() { "node".to_owned() } else { format!("node/{folder}") }
}

#[cfg(test)]
mod tests;
