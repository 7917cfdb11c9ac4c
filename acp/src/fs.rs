//! `fs/read_text_file` and `fs/write_text_file`, confined to the session roots (`spec/acp.md`
//! §2.9).
//!
//! A path must be absolute and inside a root both lexically (after normalising `.` and `..`) and
//! after resolving symlinks (for a file that does not exist yet, its nearest existing ancestor).
//! Otherwise the answer is `-32602`. A missing file is `-32002` with the message `Resource not
//! found: PATH` (ACP's name for the code, which agents match: Gemini CLI creates a file only after
//! such an answer) and `{"uri": PATH}` as its `data`; a file over 10 MiB or not UTF-8 is
//! `-32603`. Writes are atomic: a temporary file in the same directory, then a rename. A symlink
//! swapped in between the check and the access is not defended against.

#[cfg(test)]
mod tests;

use std::ffi::OsString;
use std::fs::{self, File, Permissions};
use std::io::{self, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use crate::change::OnDisk;
use crate::connection::{RpcError, code};

/// The largest file `fs/read_text_file` returns.
pub(crate) const MAX_READ_BYTES: u64 = 10 * 1024 * 1024;

/// The directories the agent may touch: today only the session cwd.
#[derive(Debug, Clone)]
pub(crate) struct Roots {
    /// Each root as given (absolute, normalised) and as resolved through symlinks.
    roots: Vec<(PathBuf, PathBuf)>,
}

/// What a write did, for the notice in the node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Written {
    pub(crate) path: PathBuf,
    pub(crate) bytes: usize,
    pub(crate) created: bool,
    /// The text the file held before (a text file of at most 10 MiB), and what was written, so
    /// that the transcript shows the change as a diff; `None` when the old content is not text.
    pub(crate) change: Option<(Option<String>, String)>,
}

/// A confined path: an existing file (resolved), or a missing one below its nearest existing,
/// resolved ancestor.
#[derive(Debug)]
enum Target {
    Existing(PathBuf),
    Missing { ancestor: PathBuf, rest: Vec<OsString> },
}

impl Roots {
    /// The roots for a session whose cwd is `cwd` (absolute, existing).
    pub(crate) fn new(cwd: &Path) -> io::Result<Roots> {
        let resolved = fs::canonicalize(cwd)?;
        Ok(Roots { roots: vec![(normalize(cwd), resolved)] })
    }

    /// Reads a text file; `line` is 1-based (absent or 0: the first), `limit` a number of lines.
    pub(crate) fn read_text_file(
        &self,
        path: &str,
        line: Option<u64>,
        limit: Option<u64>,
    ) -> Result<String, RpcError> {
        let resolved = match self.confine(path)? {
            Target::Existing(resolved) => resolved,
            Target::Missing { .. } => return Err(not_found(path)),
        };
        let file = File::open(&resolved).map_err(|error| io_error(path, &error))?;
        let metadata = file.metadata().map_err(|error| io_error(path, &error))?;
        if !metadata.is_file() {
            return Err(RpcError::invalid_params(format!("not a regular file: {path}")));
        }
        let mut bytes = Vec::new();
        file.take(MAX_READ_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|error| io_error(path, &error))?;
        if bytes.len() as u64 > MAX_READ_BYTES {
            return Err(RpcError::internal(format!("the file is larger than 10 MiB: {path}")));
        }
        let Ok(text) = String::from_utf8(bytes) else {
            return Err(RpcError::internal(format!("the file is not valid UTF-8 text: {path}")));
        };
        Ok(select_lines(&text, line, limit).to_owned())
    }

    /// The file a `diff` item names, for the person's view of the change (`crate::change`): read
    /// with the confinement and limits of `fs/read_text_file`, whole, and only a regular file (a
    /// FIFO would block).
    pub(crate) fn on_disk(&self, path: &str) -> OnDisk {
        let resolved = match self.confine(path) {
            Ok(Target::Existing(resolved)) => resolved,
            Ok(Target::Missing { .. }) => return OnDisk::Missing,
            Err(error) if error.code == code::RESOURCE_NOT_FOUND => return OnDisk::Missing,
            Err(error) => return OnDisk::Unreadable(error.message),
        };
        match fs::metadata(&resolved) {
            Ok(metadata) if !metadata.is_file() => {
                return OnDisk::Unreadable(format!("not a regular file: {path}"));
            }
            Ok(_) => {}
            Err(error) if is_missing(&error) => return OnDisk::Missing,
            Err(error) => return OnDisk::Unreadable(format!("{path}: {error}")),
        }
        match self.read_text_file(path, None, None) {
            Ok(text) => OnDisk::Text(text),
            Err(error) if error.code == code::RESOURCE_NOT_FOUND => OnDisk::Missing,
            Err(error) => OnDisk::Unreadable(error.message),
        }
    }

    /// Writes a text file atomically, creating it and its missing parent directories.
    pub(crate) fn write_text_file(&self, path: &str, content: &str) -> Result<Written, RpcError> {
        let (target, created) = match self.confine(path)? {
            Target::Existing(resolved) => {
                if resolved.is_dir() {
                    return Err(RpcError::invalid_params(format!(
                        "the path is a directory: {path}"
                    )));
                }
                (resolved, false)
            }
            Target::Missing { ancestor, rest } => {
                let target: PathBuf = rest.iter().fold(ancestor, |path, part| path.join(part));
                (target, true)
            }
        };
        let Some(directory) = target.parent() else {
            return Err(RpcError::invalid_params(format!("not a file path: {path}")));
        };
        fs::create_dir_all(directory).map_err(|error| io_error(path, &error))?;
        // The directories just made are below a confined ancestor; check again after creating them.
        let resolved_directory =
            fs::canonicalize(directory).map_err(|error| io_error(path, &error))?;
        if !self.inside_resolved(&resolved_directory) {
            return Err(outside(path));
        }
        let before = if created {
            Some(None)
        } else {
            fs::metadata(&target)
                .ok()
                .filter(|metadata| metadata.len() <= MAX_READ_BYTES)
                .and_then(|_| fs::read(&target).ok())
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .map(Some)
        };
        let permissions = match fs::metadata(&target) {
            Ok(metadata) => metadata.permissions(),
            Err(_) => Permissions::from_mode(0o644),
        };
        let mut temporary = tempfile::Builder::new()
            .prefix(".termsprawl-acp-")
            .suffix(".tmp")
            .permissions(permissions)
            .tempfile_in(&resolved_directory)
            .map_err(|error| io_error(path, &error))?;
        temporary
            .write_all(content.as_bytes())
            .and_then(|()| temporary.as_file().sync_all())
            .map_err(|error| io_error(path, &error))?;
        let file_name = target.file_name().map(ToOwned::to_owned).unwrap_or_default();
        let final_path = resolved_directory.join(file_name);
        temporary.persist(&final_path).map_err(|error| io_error(path, &error.error))?;
        let change = before.map(|before| (before, content.to_owned()));
        Ok(Written { path: PathBuf::from(path), bytes: content.len(), created, change })
    }

    fn confine(&self, path: &str) -> Result<Target, RpcError> {
        let given = Path::new(path);
        if !given.is_absolute() {
            return Err(RpcError::invalid_params(format!("the path must be absolute: {path}")));
        }
        let lexical = normalize(given);
        let lexically_inside = self
            .roots
            .iter()
            .any(|(root, resolved)| lexical.starts_with(root) || lexical.starts_with(resolved));
        if !lexically_inside {
            return Err(outside(path));
        }
        match fs::canonicalize(&lexical) {
            Ok(resolved) => {
                if self.inside_resolved(&resolved) {
                    return Ok(Target::Existing(resolved));
                }
                return Err(outside(path));
            }
            Err(error) if is_missing(&error) => {}
            Err(error) => return Err(io_error(path, &error)),
        }
        let mut rest = Vec::new();
        let mut current = lexical.as_path();
        loop {
            let Some(name) = current.file_name() else {
                return Err(outside(path));
            };
            rest.push(name.to_owned());
            let Some(parent) = current.parent() else {
                return Err(outside(path));
            };
            match fs::canonicalize(parent) {
                Ok(ancestor) => {
                    if !self.inside_resolved(&ancestor) {
                        return Err(outside(path));
                    }
                    rest.reverse();
                    return Ok(Target::Missing { ancestor, rest });
                }
                Err(error) if is_missing(&error) => current = parent,
                Err(error) => return Err(io_error(path, &error)),
            }
        }
    }

    fn inside_resolved(&self, resolved: &Path) -> bool {
        self.roots.iter().any(|(_, root)| resolved.starts_with(root))
    }
}

fn is_missing(error: &io::Error) -> bool {
    matches!(error.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory)
}

/// `-32002` for a missing file: ACP's `Resource not found`, the path in the message and `data`.
fn not_found(path: &str) -> RpcError {
    RpcError {
        code: code::RESOURCE_NOT_FOUND,
        message: format!("Resource not found: {path}"),
        data: Some(serde_json::json!({"uri": path})),
    }
}

fn outside(path: &str) -> RpcError {
    RpcError::invalid_params(format!("the path is outside the session roots: {path}"))
}

fn io_error(path: &str, error: &io::Error) -> RpcError {
    if is_missing(error) {
        return not_found(path);
    }
    RpcError::internal(format!("{path}: {error}"))
}

/// Removes `.` and resolves `..` lexically (never above the root).
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(prefix) => normal.push(prefix.as_os_str()),
            Component::RootDir => normal.push(Component::RootDir.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                normal.pop();
            }
            Component::Normal(part) => normal.push(part),
        }
    }
    normal
}

/// Selects whole lines, terminators included: from 1-based `line` (absent or 0: the first), at most
/// `limit` of them (absent: to the end).
pub(crate) fn select_lines(text: &str, line: Option<u64>, limit: Option<u64>) -> &str {
    let skip = usize::try_from(line.unwrap_or(1).saturating_sub(1)).unwrap_or(usize::MAX);
    let take = limit.map_or(usize::MAX, |limit| usize::try_from(limit).unwrap_or(usize::MAX));
    let mut start = text.len();
    let mut end = text.len();
    let mut offset = 0;
    for (index, piece) in text.split_inclusive('\n').enumerate() {
        if index == skip {
            start = offset;
        }
        offset += piece.len();
        if index >= skip && index - skip + 1 >= take {
            end = offset;
            break;
        }
    }
    if take == 0 {
        end = start;
    }
    &text[start.min(end)..end]
}
