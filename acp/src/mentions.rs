//! `@` mentions (`spec/acp.md` §2.20): a word `@PATH` of a prompt that names a file or folder of
//! the project (relative to the session's cwd) is sent with the prompt's text as its own content
//! block: the file's text embedded (`resource`) when the agent's `promptCapabilities` has
//! `embeddedContext` and the file is UTF-8 text of at most [`EMBED_LIMIT`] bytes, otherwise a
//! `resource_link`. Tab completes `@PATH` from the project's files: the entries of the folder
//! typed so far, and for a bare name the files of a bounded walk whose name starts with it.

#[cfg(test)]
mod tests;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// The largest file whose text is embedded; a larger one is sent as a link.
pub(crate) const EMBED_LIMIT: u64 = 1024 * 1024;
/// How many entries the walk of a Tab completion looks at, at most.
const WALK_ENTRIES: usize = 5000;
/// How deep the walk goes.
const WALK_DEPTH: usize = 8;
/// How many candidates a Tab completion offers, at most.
const CANDIDATES: usize = 200;
/// Folders the walk never enters (besides hidden ones): build output and dependencies.
const SKIPPED: [&str; 3] = ["target", "node_modules", "__pycache__"];

/// The content blocks of a prompt: its text as typed, then one block per distinct `@PATH` that
/// names a file or folder inside `root`; and one line per mention for the transcript.
pub(crate) fn blocks(prompt: &str, root: &Path, embedded: bool) -> (Vec<Value>, Vec<String>) {
    let mut blocks = vec![json!({"type": "text", "text": prompt})];
    let mut lines = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    let canonical_root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    for word in prompt.split_whitespace() {
        let Some(typed) = word.strip_prefix('@').filter(|rest| !rest.is_empty()) else {
            continue;
        };
        // Punctuation after a mention (`see @a.txt,`) is not part of the path.
        let candidates =
            [typed, typed.trim_end_matches([',', '.', ';', ':', '!', '?', ')', '"', '\''])];
        let Some((typed, path)) = candidates.into_iter().find_map(|typed| {
            let path = std::fs::canonicalize(root.join(typed)).ok()?;
            Some((typed, path))
        }) else {
            continue;
        };
        if seen.contains(&path) {
            continue;
        }
        seen.push(path.clone());
        if !path.starts_with(&canonical_root) {
            lines.push(format!("[mention] @{typed}: outside the project, not attached"));
            continue;
        }
        let uri = file_uri(&path);
        let text = embedded
            .then(|| std::fs::metadata(&path).ok())
            .flatten()
            .filter(|metadata| metadata.is_file() && metadata.len() <= EMBED_LIMIT)
            .and_then(|_| std::fs::read(&path).ok())
            .and_then(|bytes| String::from_utf8(bytes).ok());
        if let Some(text) = text {
            lines.push(format!("[mention] @{typed}: its text is attached ({} bytes)", text.len()));
            blocks.push(json!({"type": "resource", "resource": {"uri": uri, "text": text}}));
        } else {
            lines.push(format!("[mention] @{typed}: attached as a link"));
            blocks.push(json!({"type": "resource_link", "uri": uri, "name": typed}));
        }
    }
    (blocks, lines)
}

/// What Tab offers for `word` (starting with `@`): `@PATH` candidates, folders ending in `/`.
pub(crate) fn complete(root: &Path, word: &str) -> Vec<String> {
    let Some(typed) = word.strip_prefix('@') else {
        return Vec::new();
    };
    let (folder, prefix) = match typed.rfind('/') {
        Some(slash) => typed.split_at(slash + 1),
        None => ("", typed),
    };
    let mut candidates = Vec::new();
    if let Ok(entries) = std::fs::read_dir(root.join(folder)) {
        let mut names: Vec<(String, bool)> = entries
            .take(WALK_ENTRIES)
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let name = entry.file_name().into_string().ok()?;
                let is_dir = entry.path().is_dir();
                Some((name, is_dir))
            })
            .filter(|(name, _)| name.starts_with(prefix) && name != ".git")
            .filter(|(name, _)| prefix.starts_with('.') || !name.starts_with('.'))
            .collect();
        names.sort();
        for (name, is_dir) in names {
            let slash = if is_dir { "/" } else { "" };
            candidates.push(format!("@{folder}{name}{slash}"));
        }
    }
    if folder.is_empty() && !prefix.is_empty() {
        let mut found = Vec::new();
        walk(root, Path::new(""), prefix, 0, &mut WALK_ENTRIES.clone(), &mut found);
        found.sort();
        for path in found {
            let candidate = format!("@{path}");
            if !candidates.contains(&candidate) {
                candidates.push(candidate);
            }
        }
    }
    candidates.truncate(CANDIDATES);
    candidates
}

/// Collects the files under `root/relative` whose name starts with `prefix`, visiting at most
/// `budget` entries, skipping hidden folders and [`SKIPPED`].
fn walk(
    root: &Path,
    relative: &Path,
    prefix: &str,
    depth: usize,
    budget: &mut usize,
    found: &mut Vec<String>,
) {
    if depth > WALK_DEPTH {
        return;
    }
    let Ok(entries) = std::fs::read_dir(root.join(relative)) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        if name.starts_with('.') {
            continue;
        }
        let path = relative.join(&name);
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            if !SKIPPED.contains(&name.as_str()) {
                walk(root, &path, prefix, depth + 1, budget, found);
            }
        } else if depth > 0 && name.starts_with(prefix) {
            found.push(path.to_string_lossy().into_owned());
        }
    }
}

/// `file://` and the absolute path, with every byte but letters, digits, `-._~/` percent-encoded.
pub(crate) fn file_uri(path: &Path) -> String {
    let mut uri = "file://".to_owned();
    for byte in path.as_os_str().as_encoded_bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(byte) {
            uri.push(char::from(*byte));
        } else {
            let _ = write!(uri, "%{byte:02X}");
        }
    }
    uri
}
