//! The files and directories of `spec/protocol.md` §2: layout, modes, compact JSON in the
//! contract's member order, identifier formats and the lock.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::Value;

use crate::ctx::Ctx;

const LAYOUT: &str = "protocol.md §2.2";
const CONVENTIONS: &str = "protocol.md §2.3";
const IDS: &str = "protocol.md §2.4";
const LIFECYCLE: &str = "protocol.md §2.5";

#[expect(clippy::too_many_lines, reason = "the rules of one group, in the order they run")]
pub(crate) fn check(ctx: &mut Ctx) {
    let data_dir = ctx.first.data_dir.clone();
    let session_file = ctx.first.session_file.clone();
    let node_id = ctx.first.node_id().to_owned();

    let problem = mode_is(&data_dir, 0o700);
    ctx.verdict("files.data-dir.mode", LAYOUT, "D has mode 0700", problem);
    let sessions = data_dir.join("sessions");
    let problem = match mode(&sessions) {
        Ok(mode) if mode == 0o700 || (mode & 0o700 == 0o700 && mode.trailing_zeros() >= 6) => None,
        Ok(mode) => Some(format!(
            "{} has mode {mode:04o} (expected 0700 minus umask: no group or other bits)",
            sessions.display()
        )),
        Err(error) => Some(error),
    };
    ctx.verdict(
        "files.sessions-dir.mode",
        LAYOUT,
        "D/sessions/ has mode 0700 minus umask",
        problem,
    );

    // The session file.
    let expected = sessions.join(format!("{node_id}.json"));
    let problem = (session_file != expected).then(|| {
        format!(
            "{} is not D/sessions/<nodeId>.json ({})",
            session_file.display(),
            expected.display()
        )
    });
    ctx.verdict(
        "files.session.location",
        LAYOUT,
        "the session file is D/sessions/<nodeId>.json",
        problem,
    );
    let problem = mode_is(&session_file, 0o600);
    ctx.verdict("files.session.mode", LAYOUT, "the session file has mode 0600", problem);
    let problem = compact_with_keys(
        &session_file,
        &["nodeId", "projectId", "token", "status"],
        Some(("status", &["state", "adapter", "version", "reason"])),
    )
    .or_else(|| status_problem(&ctx.first.session["status"]));
    ctx.verdict(
        "files.session.shape",
        CONVENTIONS,
        "the session file is compact JSON {nodeId,projectId,token,status:{state,adapter,version,reason}}",
        problem,
    );
    let problem = (!ctx.first.token.is_well_formed())
        .then(|| "the token is not 64 lowercase hex digits".to_owned());
    ctx.verdict("files.session.token-format", IDS, "the token matches ^[a-f0-9]{64}$", problem);
    let problem = (!is_node_id(&node_id)).then(|| format!("node id {node_id:?}"));
    ctx.verdict(
        "files.session.node-id-format",
        IDS,
        "the node id matches ^[a-zA-Z0-9][a-zA-Z0-9_-]{0,127}$",
        problem,
    );
    let problem = every_file(&sessions, |path| {
        if path.extension().is_some_and(|extension| extension == "json") {
            mode_is(path, 0o600)
        } else {
            None
        }
    });
    ctx.verdict(
        "files.sessions.modes",
        LAYOUT,
        "every session file in D/sessions/ has mode 0600",
        problem,
    );

    // endpoint.json.
    let endpoint_file = ctx.first.endpoint_file.clone();
    let problem = mode_is(&endpoint_file, 0o600);
    ctx.verdict("files.endpoint.mode", LAYOUT, "endpoint.json has mode 0600", problem);
    let port = ctx.first.port;
    let problem = compact_with_keys(&endpoint_file, &["url", "instanceId"], None).or_else(|| {
        let url = ctx.first.endpoint["url"].as_str().unwrap_or_default();
        (url != format!("http://127.0.0.1:{port}/call"))
            .then(|| format!("url {url:?} is not http://127.0.0.1:<port>/call"))
    });
    ctx.verdict(
        "files.endpoint.shape",
        CONVENTIONS,
        "endpoint.json is compact {\"url\":\"http://127.0.0.1:<port>/call\",\"instanceId\":…}",
        problem,
    );
    let instance_id = ctx.first.endpoint["instanceId"].as_str().unwrap_or_default().to_owned();
    let problem = (!is_uuid_v4(&instance_id)).then(|| format!("instanceId {instance_id:?}"));
    ctx.verdict("files.endpoint.instance-id", IDS, "the instance id is a UUID v4", problem);

    // server.lock.
    let lock = data_dir.join("server.lock");
    let problem = mode_is(&lock, 0o600);
    ctx.verdict("files.lock.mode", LAYOUT, "server.lock exists with mode 0600", problem);
    let lock_value: Value = fs::read(&lock)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or(Value::Null);
    let pid = lock_value["pid"].as_u64().filter(|pid| *pid > 0);
    let problem = compact_with_keys(&lock, &["pid", "instanceId"], None)
        .or_else(|| pid.is_none().then(|| "pid is not a positive integer".to_owned()));
    ctx.verdict(
        "files.lock.shape",
        LAYOUT,
        "server.lock is compact {\"pid\":<integer>,\"instanceId\":…}",
        problem,
    );
    let lock_instance = lock_value["instanceId"].as_str().unwrap_or_default();
    let problem = (lock_instance != instance_id)
        .then(|| format!("server.lock says {lock_instance:?}, endpoint.json {instance_id:?}"));
    ctx.verdict(
        "files.lock.instance-id",
        LIFECYCLE,
        "server.lock and endpoint.json name the same instance",
        problem,
    );
    let problem = match pid {
        None => Some("no pid to probe".to_owned()),
        Some(pid) => (!is_alive(pid)).then(|| format!("process {pid} does not exist")),
    };
    ctx.verdict("files.lock.owner-alive", LIFECYCLE, "the lock's pid is a live process", problem);
    match pid.map(|pid| owns_listener(pid, port)) {
        Some(Some(true)) => ctx.pass(
            "files.lock.owner-listens",
            LIFECYCLE,
            "the lock's pid is the process listening on the port",
        ),
        Some(Some(false)) => ctx.fail(
            "files.lock.owner-listens",
            LIFECYCLE,
            "the lock's pid is the process listening on the port",
            &format!(
                "process {} does not hold the listening socket of port {port}",
                pid.unwrap_or_default()
            ),
        ),
        _ => ctx.skip(
            "files.lock.owner-listens",
            LIFECYCLE,
            "the lock's pid is the process listening on the port",
            "cannot read /proc for the process and its sockets",
        ),
    }

    let problem = [data_dir.clone(), sessions.clone()].iter().find_map(|dir| {
        every_file(dir, |path| {
            path.to_string_lossy()
                .ends_with(".tmp")
                .then(|| format!("{} is left over", path.display()))
        })
    });
    ctx.verdict(
        "files.no-temp-files",
        CONVENTIONS,
        "no <path>.<uuid>.tmp of an atomic write is left in D or D/sessions/",
        problem,
    );

    optional(
        ctx,
        "files.launcher",
        "D/termsprawlctl is a #!/bin/sh launcher with mode 0700",
        &data_dir.join("termsprawlctl"),
        |path| {
            mode_is(path, 0o700).or_else(|| {
                let text = fs::read(path).unwrap_or_default();
                (!text.starts_with(b"#!/bin/sh\n"))
                    .then(|| "does not start with #!/bin/sh".to_owned())
            })
        },
    );
    let launch = data_dir.join("launch").join(&node_id);
    optional(
        ctx,
        "files.launch-dir",
        "D/launch/<nodeId>/ has mode 0700 and its files 0600",
        &launch,
        |path| mode_is(path, 0o700).or_else(|| tree_modes(path)),
    );
    optional(
        ctx,
        "files.tasks",
        "D/tasks/ has mode 0700 and its files 0600",
        &data_dir.join("tasks"),
        |path| mode_is(path, 0o700).or_else(|| every_file(path, |file| mode_is(file, 0o600))),
    );
    optional(
        ctx,
        "files.browser-owners",
        "D/browser-owners.json has mode 0600",
        &data_dir.join("browser-owners.json"),
        |path| mode_is(path, 0o600),
    );
}

/// A rule about a file that a server writes only in some situations: SKIP when absent.
fn optional(
    ctx: &mut Ctx,
    id: &str,
    rule: &str,
    path: &Path,
    check: impl Fn(&Path) -> Option<String>,
) {
    if fs::symlink_metadata(path).is_err() {
        ctx.skip(id, LAYOUT, rule, &format!("{} does not exist (a server writes it only when it launches agents or has browsers or tasks)", path.display()));
        return;
    }
    let problem = check(path);
    ctx.verdict(id, LAYOUT, rule, problem);
}

fn mode(path: &Path) -> Result<u32, String> {
    fs::symlink_metadata(path)
        .map(|metadata| metadata.permissions().mode() & 0o7777)
        .map_err(|error| format!("cannot stat {}: {error}", path.display()))
}

fn mode_is(path: &Path, expected: u32) -> Option<String> {
    match mode(path) {
        Ok(mode) if mode == expected => None,
        Ok(mode) => {
            Some(format!("{} has mode {mode:04o}, expected {expected:04o}", path.display()))
        }
        Err(error) => Some(error),
    }
}

/// Directories 0700 and files 0600, all the way down.
fn tree_modes(dir: &Path) -> Option<String> {
    let entries = fs::read_dir(dir).ok()?;
    for entry in entries.flatten() {
        let path = entry.path();
        let problem = if path.is_dir() {
            mode_is(&path, 0o700).or_else(|| tree_modes(&path))
        } else {
            mode_is(&path, 0o600)
        };
        if problem.is_some() {
            return problem;
        }
    }
    None
}

/// The first problem `check` finds among the plain files of `dir`.
fn every_file(dir: &Path, check: impl Fn(&Path) -> Option<String>) -> Option<String> {
    let entries = fs::read_dir(dir).ok()?;
    let mut paths: Vec<_> =
        entries.flatten().map(|entry| entry.path()).filter(|path| path.is_file()).collect();
    paths.sort();
    paths.iter().find_map(|path| check(path))
}

/// The file is compact JSON (no whitespace outside strings, no trailing newline) whose top-level
/// members are exactly `keys` in order (and, for `nested`, that member's members too).
fn compact_with_keys(
    path: &Path,
    keys: &[&str],
    nested: Option<(&str, &[&str])>,
) -> Option<String> {
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) => return Some(format!("cannot read {}: {error}", path.display())),
    };
    let Ok(value) = serde_json::from_slice::<Value>(&bytes) else {
        return Some(format!("{} is not JSON", path.display()));
    };
    if !is_compact(&bytes) {
        return Some(format!("{} is not compact JSON", path.display()));
    }
    let order = |value: &Value| -> Vec<String> {
        value.as_object().map(|object| object.keys().cloned().collect()).unwrap_or_default()
    };
    if order(&value) != keys {
        return Some(format!("members {:?}, expected {keys:?}", order(&value)));
    }
    if let Some((member, inner)) = nested
        && order(&value[member]) != inner
    {
        return Some(format!("{member} members {:?}, expected {inner:?}", order(&value[member])));
    }
    None
}

/// No whitespace outside strings, and nothing after the value.
pub(crate) fn is_compact(bytes: &[u8]) -> bool {
    let mut in_string = false;
    let mut escaped = false;
    for &byte in bytes {
        if in_string {
            match (escaped, byte) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
        } else if byte == b'"' {
            in_string = true;
        } else if byte.is_ascii_whitespace() {
            return false;
        }
    }
    true
}

/// Problems of an `IntegrationStatus` value (`spec/protocol.md` §1).
pub(crate) fn status_problem(status: &Value) -> Option<String> {
    let Value::Object(object) = status else { return Some("status is not an object".to_owned()) };
    let state = object.get("state").and_then(Value::as_str);
    if !matches!(state, Some("connected" | "cli-fallback" | "needs-setup")) {
        return Some(format!(
            "status.state {state:?} is not connected, cli-fallback or needs-setup"
        ));
    }
    ["adapter", "version", "reason"]
        .iter()
        .find(|member| !object.get(**member).is_some_and(Value::is_string))
        .map(|member| format!("status.{member} is not a string"))
}

fn is_node_id(node_id: &str) -> bool {
    let bytes = node_id.as_bytes();
    let Some((first, rest)) = bytes.split_first() else { return false };
    bytes.len() <= 128
        && first.is_ascii_alphanumeric()
        && rest.iter().all(|byte| byte.is_ascii_alphanumeric() || *byte == b'_' || *byte == b'-')
}

/// `xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx`, lowercase hex.
pub(crate) fn is_uuid_v4(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() == 36
        && bytes.iter().enumerate().all(|(index, byte)| match index {
            8 | 13 | 18 | 23 => *byte == b'-',
            14 => *byte == b'4',
            19 => matches!(byte, b'8' | b'9' | b'a' | b'b'),
            _ => byte.is_ascii_digit() || (b'a'..=b'f').contains(byte),
        })
}

/// A signal-0 probe: only "no such process" means dead.
fn is_alive(pid: u64) -> bool {
    let Some(pid) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) else {
        return false;
    };
    !matches!(rustix::process::test_kill_process(pid), Err(rustix::io::Errno::SRCH))
}

/// Whether process `pid` holds the socket listening on `127.0.0.1:port`, from `/proc`; `None`
/// when `/proc` cannot tell.
fn owns_listener(pid: u64, port: u16) -> Option<bool> {
    let table = fs::read_to_string("/proc/net/tcp").ok()?;
    let wanted = format!("0100007F:{port:04X}");
    let inode = table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // local address, state 0A = LISTEN, inode.
        (fields.get(1) == Some(&wanted.as_str()) && fields.get(3) == Some(&"0A"))
            .then(|| fields.get(9).map(|inode| (*inode).to_owned()))
            .flatten()
    })?;
    let target = format!("socket:[{inode}]");
    let fds = fs::read_dir(format!("/proc/{pid}/fd")).ok()?;
    Some(
        fds.flatten()
            .any(|fd| fs::read_link(fd.path()).is_ok_and(|link| link.to_string_lossy() == target)),
    )
}

#[cfg(test)]
mod tests;
