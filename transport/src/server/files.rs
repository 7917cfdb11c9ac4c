//! The files the server writes in `D`, exactly as the app writes them (`spec/protocol.md` §2.2–§2.4):
//! compact JSON in the contract's member order, written atomically with mode 0600.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;
use termsprawl_protocol::{IntegrationStatus, SessionToken, ToolIdentity, ToolSession};

use super::{FileError, SESSIONS_DIR, StartError};
use crate::discovery::ENDPOINT_FILE;

/// A new session token: 32 random bytes from the operating system as 64 lowercase hex digits.
pub fn mint_token() -> io::Result<SessionToken> {
    let mut bytes = [0_u8; 32];
    getrandom::fill(&mut bytes).map_err(|error| io::Error::other(error.to_string()))?;
    let mut hex = String::with_capacity(64);
    for byte in bytes {
        hex.push(char::from(HEX[usize::from(byte >> 4)]));
        hex.push(char::from(HEX[usize::from(byte & 0x0f)]));
    }
    Ok(SessionToken::new(hex))
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// `D/sessions/<nodeId>.json`.
pub(super) fn session_file(data_dir: &Path, node_id: &str) -> PathBuf {
    data_dir.join(SESSIONS_DIR).join(format!("{node_id}.json"))
}

/// `mkdir -p D` then chmod 0700; `mkdir -p D/sessions` with mode 0700 (`spec/protocol.md` §2.2).
pub(super) fn prepare_data_dir(data_dir: &Path) -> Result<(), StartError> {
    fs::create_dir_all(data_dir).map_err(FileError::on("create", data_dir))?;
    fs::set_permissions(data_dir, fs::Permissions::from_mode(0o700))
        .map_err(FileError::on("chmod", data_dir))?;
    let sessions = data_dir.join(SESSIONS_DIR);
    create_private_dir(&sessions).map_err(FileError::on("create", &sessions))?;
    Ok(())
}

fn create_private_dir(path: &Path) -> io::Result<()> {
    fs::DirBuilder::new().recursive(true).mode(0o700).create(path)
}

/// Serialises `value` compactly and writes it atomically (see [`write_atomic`]).
pub(super) fn write_json(path: &Path, value: &impl Serialize) -> io::Result<()> {
    let json = serde_json::to_vec(value).map_err(io::Error::other)?;
    write_atomic(path, &json)
}

/// Writes a session file, creating `D/sessions/` again if someone removed it.
pub(super) fn write_session(data_dir: &Path, path: &Path, session: &ToolSession) -> io::Result<()> {
    create_private_dir(&data_dir.join(SESSIONS_DIR))?;
    write_json(path, session)
}

/// Writes `<path>.<uuid>.tmp` with mode 0600, flushes it to disk (`fsync`), renames it over
/// `path`, chmods `path` to 0600 and flushes the directory, so that the rename itself survives a
/// crash (`spec/protocol.md` §2.3; `docs/reliability.md`). Readers see the old content or the
/// new, never a part; a full disk fails the write and leaves the old file as it was. The
/// temporary file is removed when a step fails.
pub fn write_atomic(path: &Path, content: &[u8]) -> io::Result<()> {
    write_atomic_all(&[(path, content)])
}

/// [`write_atomic`] of several files that must change together (a file and its copy): every
/// temporary file is written and flushed before the first rename, so a full disk, or any failed
/// write, changes none of them.
pub fn write_atomic_all(files: &[(&Path, &[u8])]) -> io::Result<()> {
    let mut temporaries = Vec::with_capacity(files.len());
    let written = (|| {
        for &(path, content) in files {
            let mut temporary = path.as_os_str().to_owned();
            temporary.push(format!(".{}.tmp", uuid::Uuid::new_v4()));
            let temporary = PathBuf::from(temporary);
            let mut file =
                fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&temporary)?;
            temporaries.push(temporary);
            file.write_all(content)?;
            file.sync_all()?;
        }
        let mut directories: Vec<&Path> = Vec::new();
        for (&(path, _), temporary) in files.iter().zip(&temporaries) {
            fs::rename(temporary, path)?;
            fs::set_permissions(path, fs::Permissions::from_mode(0o600))?;
            let directory = path.parent().filter(|parent| !parent.as_os_str().is_empty());
            let directory = directory.unwrap_or(Path::new("."));
            if !directories.contains(&directory) {
                directories.push(directory);
            }
        }
        directories.iter().try_for_each(|directory| fs::File::open(directory)?.sync_all())
    })();
    if written.is_err() {
        for temporary in &temporaries {
            let _ = fs::remove_file(temporary);
        }
    }
    written
}

/// The token and stored status of an existing session file that may be reused for `identity`:
/// its `nodeId` and `projectId` match and its token is well-formed. The status is `None` when the
/// stored one cannot be read.
pub(super) fn reusable_session(
    path: &Path,
    identity: &ToolIdentity,
) -> Option<(SessionToken, Option<IntegrationStatus>)> {
    let value: Value = serde_json::from_slice(&fs::read(path).ok()?).ok()?;
    let same_identity = value.get("nodeId").and_then(Value::as_str) == Some(&identity.node_id)
        && value.get("projectId").and_then(Value::as_str) == Some(&identity.project_id);
    if !same_identity {
        return None;
    }
    let token = SessionToken::new(value.get("token")?.as_str()?);
    if !token.is_well_formed() {
        return None;
    }
    let status = value.get("status").and_then(|status| serde_json::from_value(status.clone()).ok());
    Some((token, status))
}

/// Removes `D/endpoint.json` if its `instanceId` is `instance_id` (`spec/protocol.md` §2.5).
pub(super) fn remove_endpoint_if_ours(data_dir: &Path, instance_id: &str) {
    let path = data_dir.join(ENDPOINT_FILE);
    let Ok(content) = fs::read(&path) else { return };
    let Ok(value) = serde_json::from_slice::<Value>(&content) else { return };
    if value.get("instanceId").and_then(Value::as_str) == Some(instance_id) {
        let _ = fs::remove_file(&path);
    }
}
