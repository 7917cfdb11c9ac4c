//! `D/server.lock`: one server per data directory (`spec/protocol.md` §2.5).

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use serde_json::{Value, json};

use super::{FileError, StartError};

/// Who holds an existing lock file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Holder {
    /// The file is not JSON: stale, whoever wrote it.
    Garbage,
    /// JSON whose `pid` is not a positive integer (that fits a process id).
    InvalidPid,
    /// A process id.
    Pid(i32),
}

/// Reads the holder from a lock file's content.
pub(super) fn holder(content: &[u8]) -> Holder {
    let Ok(value) = serde_json::from_slice::<Value>(content) else { return Holder::Garbage };
    let pid = value.get("pid").and_then(Value::as_f64).filter(|pid| pid.fract() == 0.0);
    match pid {
        Some(pid) if 1.0 <= pid && pid <= f64::from(i32::MAX) =>
        {
            #[expect(clippy::cast_possible_truncation, reason = "an integer within i32's range")]
            Holder::Pid(pid as i32)
        }
        _ => Holder::InvalidPid,
    }
}

/// Whether a process is alive, by a signal-0 probe: only "no such process" means dead
/// ("permission denied" means someone else's live process).
pub(super) fn is_alive(pid: i32) -> bool {
    let Some(pid) = rustix::process::Pid::from_raw(pid) else { return false };
    !matches!(rustix::process::test_kill_process(pid), Err(rustix::io::Errno::SRCH))
}

/// Takes the lock for this process and `instance_id`, removing a stale one first.
pub(super) fn acquire(path: &Path, instance_id: &str) -> Result<(), StartError> {
    match fs::read(path) {
        Ok(content) => match holder(&content) {
            Holder::InvalidPid => return Err(StartError::InvalidLock { path: path.to_path_buf() }),
            Holder::Pid(pid) if is_alive(pid) => {
                return Err(StartError::AlreadyRunning {
                    path: path.to_path_buf(),
                    pid: u32::try_from(pid).ok(),
                });
            }
            Holder::Pid(_) | Holder::Garbage => match fs::remove_file(path) {
                Err(error) if error.kind() != io::ErrorKind::NotFound => {
                    return Err(FileError::on("remove", path)(error).into());
                }
                _ => {}
            },
        },
        Err(error) if error.kind() == io::ErrorKind::NotFound => {}
        Err(error) => return Err(FileError::on("read", path)(error).into()),
    }
    let content = json!({"pid": std::process::id(), "instanceId": instance_id}).to_string();
    let created = fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path);
    let mut file = match created {
        Ok(file) => file,
        // Another server took the lock between our read and our create.
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {
            return Err(StartError::AlreadyRunning { path: path.to_path_buf(), pid: None });
        }
        Err(error) => return Err(FileError::on("create", path)(error).into()),
    };
    let written = file
        .write_all(content.as_bytes())
        .and_then(|()| fs::set_permissions(path, fs::Permissions::from_mode(0o600)));
    if let Err(error) = written {
        let _ = fs::remove_file(path);
        return Err(FileError::on("write", path)(error).into());
    }
    Ok(())
}
