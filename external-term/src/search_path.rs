//! Executable resolution (`spec/protocol.md` §9.3): an absolute path must name an executable regular
//! file; a bare name is looked up in the `PATH` directories, then in `~/.local/bin`, `~/.druk/bin`
//! and `~/bin`.

use std::env;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use rustix::fs::Access;

/// The directories searched for executables, captured once so that callers (and tests) control
/// them without touching the process environment.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SearchPath {
    path_dirs: Vec<PathBuf>,
    home: Option<PathBuf>,
}

/// The directories under `$HOME` searched after `PATH`, in order.
const HOME_DIRS: [&str; 3] = [".local/bin", ".druk/bin", "bin"];

impl SearchPath {
    /// A search path from a `PATH`-style value and a home directory.
    ///
    /// Empty and relative `PATH` entries are dropped: they would make the result depend on the
    /// caller's working directory. A relative home is ignored for the same reason.
    pub fn new(path_var: Option<&OsStr>, home: Option<&Path>) -> Self {
        let path_dirs = path_var
            .map(|value| env::split_paths(value).filter(|dir| dir.is_absolute()).collect())
            .unwrap_or_default();
        let home = home.filter(|home| home.is_absolute()).map(Path::to_path_buf);
        SearchPath { path_dirs, home }
    }

    /// The search path of this process: `$PATH` and `$HOME`.
    pub fn from_env() -> Self {
        let home = env::var_os("HOME").map(PathBuf::from);
        SearchPath::new(env::var_os("PATH").as_deref(), home.as_deref())
    }

    /// Resolves an executable as §9.3 says: an absolute path is accepted when it names an
    /// executable regular file; a bare name is looked up in `PATH`, then in the home directories.
    ///
    /// A relative path with a `/` and an empty name never resolve.
    pub fn find(&self, name: &str) -> Option<PathBuf> {
        let path = Path::new(name);
        if path.is_absolute() {
            return is_executable_file(path).then(|| path.to_path_buf());
        }
        if !is_bare_name(name) {
            return None;
        }
        let home_dirs =
            self.home.iter().flat_map(|home| HOME_DIRS.iter().map(move |dir| home.join(dir)));
        self.path_dirs
            .iter()
            .cloned()
            .chain(home_dirs)
            .map(|dir| dir.join(name))
            .find(|candidate| is_executable_file(candidate))
    }

    /// Looks a bare name up in the `PATH` directories only (how tmux is found, §9.2).
    pub fn find_on_path(&self, name: &str) -> Option<PathBuf> {
        if !is_bare_name(name) {
            return None;
        }
        self.path_dirs
            .iter()
            .map(|dir| dir.join(name))
            .find(|candidate| is_executable_file(candidate))
    }
}

/// Whether `path` (after following symbolic links) is a regular file that this process may execute.
pub fn is_executable_file(path: &Path) -> bool {
    let is_file = path.metadata().is_ok_and(|metadata| metadata.is_file());
    is_file && rustix::fs::access(path, Access::EXEC_OK).is_ok()
}

fn is_bare_name(name: &str) -> bool {
    !name.is_empty() && !name.contains('/') && name != "." && name != ".."
}
