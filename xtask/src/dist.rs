//! `cargo xtask dist`: the release archive a user installs, and its proof.
//!
//! [`run`] builds `termsprawlctl`, `termsprawl-headless` and `termsprawl-conformance` with
//! `cargo build --release --locked` (statically linked by the workspace's `.cargo/config.toml`),
//! collects them with their man pages, shell completions, README and LICENSE ([`entries`]),
//! writes `target/dist/termsprawl-agent-tools-<version>-<target>.tar.gz` and `SHA256SUMS` beside
//! it ([`pack`]), then checks what it wrote as a user would receive it: the checksum, the exact
//! list of files and their contents ([`verify`]), and the shipped binaries themselves through real
//! calls against the shipped headless server ([`smoke`]). CI runs it, so the binaries CI ships are
//! binaries CI ran.
//!
//! The archive is a prefix tree (`bin/`, `share/man/man1/`, `share/bash-completion/…`,
//! `share/zsh/site-functions/`, `share/fish/vendor_completions.d/`,
//! `share/doc/termsprawl-agent-tools/`) under one top folder, so that
//! `mkdir -p ~/.local && tar -xzf ARCHIVE -C ~/.local --strip-components=1` installs it (README, Install). The man pages and completions
//! come from the programs' own generators: `termsprawlctl man`, `termsprawlctl completions SHELL`
//! and the hidden `termsprawl-headless man` / `completions SHELL` (the shipped binaries are run),
//! and `termsprawl-conformance`'s clap command ([`termsprawl_conformance::cli::command`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::io::{Read as _, Write as _};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context as _, bail, ensure};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};
use termsprawl_test_support::serve::{Serve, serve_command};
use termsprawl_test_support::tmux::TmuxGuard;

use termsprawl_protocol::results::TerminalRunResult;
use termsprawl_test_support::cargo;

/// The packages `dist` builds.
pub const PACKAGES: [&str; 3] = ["termsprawl-cli", "termsprawl-headless", "termsprawl-conformance"];

/// The programs of the archive, under `bin/`.
pub const PROGRAMS: [&str; 3] = [CTL, HEADLESS, CONFORMANCE];

const CTL: &str = "termsprawlctl";
const HEADLESS: &str = "termsprawl-headless";
const CONFORMANCE: &str = "termsprawl-conformance";

/// The programs with a man page and completions in the archive.
pub const DOCUMENTED: [&str; 3] = [CTL, HEADLESS, CONFORMANCE];

/// The shells the archive has completions for.
pub const SHELLS: [&str; 3] = ["bash", "zsh", "fish"];

/// The checksum file, beside the archive.
pub const SUMS: &str = "SHA256SUMS";

/// Where the archive goes, below the target directory.
pub const DIST_DIR: &str = "dist";

/// How long the shipped server may take to start, and a call to answer.
const PATIENCE: Duration = Duration::from_secs(30);

/// What the archive is named after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Release {
    /// The workspace version.
    pub version: String,
    /// The target tuple the programs were built for.
    pub target: String,
}

impl Release {
    /// `termsprawl-agent-tools-<version>-<target>`: the archive's top folder and file stem.
    pub fn name(&self) -> String {
        format!("termsprawl-agent-tools-{}-{}", self.version, self.target)
    }

    /// The archive's file name.
    pub fn archive(&self) -> String {
        format!("{}.tar.gz", self.name())
    }
}

/// One file of the archive.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Its path below the top folder.
    pub path: String,
    /// Its contents.
    pub bytes: Vec<u8>,
    /// Mode 0755 rather than 0644.
    pub executable: bool,
}

/// The archive's files, below the top folder, sorted: the contract [`verify`] holds an archive
/// to.
pub fn expected_paths() -> Vec<String> {
    let mut paths: Vec<String> = PROGRAMS.iter().map(|program| format!("bin/{program}")).collect();
    for program in DOCUMENTED {
        paths.push(man_path(program));
        for shell in SHELLS {
            paths.push(completion_path(program, shell));
        }
    }
    paths.push(doc_path("README.md"));
    paths.push(doc_path("LICENSE"));
    paths.sort();
    paths
}

fn man_path(program: &str) -> String {
    format!("share/man/man1/{program}.1")
}

/// Where each shell looks for completions below a prefix, with the file name it expects.
fn completion_path(program: &str, shell: &str) -> String {
    match shell {
        "bash" => format!("share/bash-completion/completions/{program}"),
        "zsh" => format!("share/zsh/site-functions/_{program}"),
        _ => format!("share/fish/vendor_completions.d/{program}.fish"),
    }
}

fn doc_path(file: &str) -> String {
    format!("share/doc/termsprawl-agent-tools/{file}")
}

/// The whole command: build, collect, pack, verify and run the shipped binaries. Returns the
/// archive's path.
pub fn run(root: &Path) -> anyhow::Result<PathBuf> {
    let mut args = Vec::new();
    for package in PACKAGES {
        args.extend(["-p", package]);
    }
    eprintln!("dist: cargo build --release --locked {}", args.join(" "));
    let executables = cargo::build(root, true, &args)?;
    let mut programs = BTreeMap::new();
    for program in PROGRAMS {
        programs.insert(program.to_owned(), cargo::executable(&executables, program)?);
    }
    let release = Release { version: version(&programs[CTL])?, target: target(&programs[CTL])? };
    let dist = programs[CTL]
        .ancestors()
        .find(|dir| dir.file_name().is_some_and(|name| name == "target"))
        .map_or_else(|| root.join("target"), Path::to_path_buf)
        .join(DIST_DIR);
    let entries = entries(root, &programs)?;
    let archive = pack(&dist, &release, &entries)?;
    eprintln!("dist: wrote {} and {}", archive.display(), dist.join(SUMS).display());
    let unpacked = verify(root, &dist, &release)?;
    eprintln!("dist: checksum, {} files and their contents verified", expected_paths().len());
    smoke(&unpacked.path().join(release.name()))?;
    eprintln!("dist: the shipped binaries answered real calls against the shipped server");
    Ok(archive)
}

/// `termsprawlctl --version`'s version: the workspace version the binary was built with.
fn version(ctl: &Path) -> anyhow::Result<String> {
    let text = run_program(Command::new(ctl).arg("--version"))?;
    let version = text.trim().strip_prefix("termsprawlctl ").context("unexpected --version")?;
    Ok(version.to_owned())
}

/// The target tuple: the folder cargo built into (`target/<tuple>/release/`, as
/// `build.target = "host-tuple"` makes it), else rustc's host.
fn target(ctl: &Path) -> anyhow::Result<String> {
    let profile_dir = ctl.parent().context("the binary has no folder")?;
    if let Some(tuple) = profile_dir.parent().and_then(Path::file_name).and_then(|n| n.to_str())
        && tuple.contains('-')
    {
        return Ok(tuple.to_owned());
    }
    let text = run_program(
        Command::new(std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into())).arg("-vV"),
    )?;
    text.lines()
        .find_map(|line| line.strip_prefix("host: "))
        .map(str::to_owned)
        .context("rustc -vV names no host")
}

/// The archive's entries from the built `programs` (by name) and the repository at `root`.
pub fn entries(root: &Path, programs: &BTreeMap<String, PathBuf>) -> anyhow::Result<Vec<Entry>> {
    let mut entries = Vec::new();
    for program in PROGRAMS {
        let path = programs.get(program).with_context(|| format!("{program} was not built"))?;
        let bytes = fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        entries.push(Entry { path: format!("bin/{program}"), bytes, executable: true });
    }
    // The two servers' programs print their own man page and completions.
    for program in [CTL, HEADLESS] {
        let binary = &programs[program];
        entries.push(text_entry(man_path(program), run_program(Command::new(binary).arg("man"))?));
        for shell in SHELLS {
            let script = run_program(Command::new(binary).args(["completions", shell]))?;
            entries.push(text_entry(completion_path(program, shell), script));
        }
    }
    entries.extend(conformance_entries()?);
    for file in ["README.md", "LICENSE"] {
        let path = root.join(file);
        let bytes = fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
        entries.push(Entry { path: doc_path(file), bytes, executable: false });
    }
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(entries)
}

/// `termsprawl-conformance`'s man page and completions, from its clap command.
pub fn conformance_entries() -> anyhow::Result<Vec<Entry>> {
    let mut entries = Vec::new();
    let mut man = Vec::new();
    clap_mangen::Man::new(termsprawl_conformance::cli::command())
        .render(&mut man)
        .context("cannot render the conformance man page")?;
    entries.push(Entry { path: man_path(CONFORMANCE), bytes: man, executable: false });
    for shell in SHELLS {
        let generator = match shell {
            "bash" => clap_complete::Shell::Bash,
            "zsh" => clap_complete::Shell::Zsh,
            _ => clap_complete::Shell::Fish,
        };
        let mut script = Vec::new();
        clap_complete::generate(
            generator,
            &mut termsprawl_conformance::cli::command(),
            CONFORMANCE,
            &mut script,
        );
        entries.push(Entry {
            path: completion_path(CONFORMANCE, shell),
            bytes: script,
            executable: false,
        });
    }
    Ok(entries)
}

fn text_entry(path: String, text: String) -> Entry {
    Entry { path, bytes: text.into_bytes(), executable: false }
}

/// Writes `entries` under `<release name>/` into `dist/<archive>` (GNU tar, sorted names, owner
/// 0, gzip without a timestamp) and its line into `dist/SHA256SUMS`; the archive's path.
pub fn pack(dist: &Path, release: &Release, entries: &[Entry]) -> anyhow::Result<PathBuf> {
    fs::create_dir_all(dist).with_context(|| format!("cannot create {}", dist.display()))?;
    let staging = tempfile::Builder::new()
        .prefix(".staging-")
        .tempdir_in(dist)
        .context("cannot create a staging folder")?;
    let top = staging.path().join(release.name());
    for entry in entries {
        let path = top.join(&entry.path);
        fs::create_dir_all(path.parent().context("an entry without a folder")?)?;
        fs::write(&path, &entry.bytes)
            .with_context(|| format!("cannot write {}", path.display()))?;
        let mode = if entry.executable { 0o755 } else { 0o644 };
        fs::set_permissions(&path, fs::Permissions::from_mode(mode))?;
    }
    let archive = dist.join(release.archive());
    let status = Command::new("tar")
        .arg("--sort=name")
        .args(["--owner=0", "--group=0", "--numeric-owner", "--mtime=@0"])
        .args(["--use-compress-program", "gzip -n -9"])
        .arg("-cf")
        .arg(&archive)
        .arg("-C")
        .arg(staging.path())
        .arg(release.name())
        .status()
        .context("cannot run tar")?;
    ensure!(status.success(), "tar failed with {status}");
    let digest = sha256_file(&archive)?;
    fs::write(dist.join(SUMS), format!("{digest}  {}\n", release.archive()))
        .context("cannot write SHA256SUMS")?;
    Ok(archive)
}

/// The SHA-256 of a file, as lowercase hex.
pub fn sha256_file(path: &Path) -> anyhow::Result<String> {
    let mut file =
        fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0; 1 << 16];
    loop {
        let read = file.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
    }
    let mut hex = String::with_capacity(64);
    for byte in hasher.finalize() {
        let _ = write!(hex, "{byte:02x}");
    }
    Ok(hex)
}

/// Checks `dist/<archive>` as a user receives it: `SHA256SUMS` names it once with its checksum
/// (in the format `sha256sum -c` reads), it holds exactly [`expected_paths`] under one top
/// folder, the programs are executable, README and LICENSE are the repository's, each man page is
/// roff for its program and each completion script is for its program and shell (bash's parsed
/// with `bash -n`). Returns the folder it was unpacked into.
pub fn verify(root: &Path, dist: &Path, release: &Release) -> anyhow::Result<tempfile::TempDir> {
    let archive = dist.join(release.archive());
    let sums = fs::read_to_string(dist.join(SUMS)).context("cannot read SHA256SUMS")?;
    let mut named = Vec::new();
    for line in sums.lines() {
        let Some((digest, file)) = line.split_once("  ") else {
            bail!("SHA256SUMS: not `<sha256>  <file>`: {line:?}");
        };
        ensure!(
            digest.len() == 64 && digest.bytes().all(|b| b.is_ascii_hexdigit()),
            "SHA256SUMS: not a SHA-256: {digest:?}"
        );
        if file == release.archive() {
            named.push(digest.to_ascii_lowercase());
        }
    }
    ensure!(named.len() == 1, "SHA256SUMS names {} {} times", release.archive(), named.len());
    let actual = sha256_file(&archive)?;
    ensure!(
        named[0] == actual,
        "checksum mismatch: SHA256SUMS says {}, the archive is {actual}",
        named[0]
    );

    let listing = run_program(Command::new("tar").arg("-tzf").arg(&archive))?;
    let prefix = format!("{}/", release.name());
    let mut files = Vec::new();
    for line in listing.lines() {
        let Some(inner) = line.strip_prefix(&prefix).or((line == release.name()).then_some(""))
        else {
            bail!("{line} is outside the top folder {prefix}");
        };
        if !inner.is_empty() && !inner.ends_with('/') {
            files.push(inner.to_owned());
        }
    }
    files.sort();
    let expected = expected_paths();
    let missing: Vec<&String> = expected.iter().filter(|path| !files.contains(path)).collect();
    let extra: Vec<&String> = files.iter().filter(|path| !expected.contains(path)).collect();
    ensure!(
        missing.is_empty() && extra.is_empty(),
        "the archive's files differ: missing {missing:?}, unexpected {extra:?}"
    );

    let unpacked = tempfile::tempdir().context("cannot create a folder to unpack into")?;
    let status = Command::new("tar")
        .arg("-xzf")
        .arg(&archive)
        .arg("-C")
        .arg(unpacked.path())
        .status()
        .context("cannot run tar")?;
    ensure!(status.success(), "tar -x failed with {status}");
    check_contents(root, &unpacked.path().join(release.name()), release)?;
    Ok(unpacked)
}

/// The unpacked files' contents, as [`verify`] says.
fn check_contents(root: &Path, top: &Path, release: &Release) -> anyhow::Result<()> {
    for program in PROGRAMS {
        let path = top.join("bin").join(program);
        let mode = fs::metadata(&path)?.permissions().mode();
        ensure!(mode & 0o111 == 0o111, "bin/{program} is not executable (mode {mode:o})");
        let head = fs::read(&path)?;
        ensure!(head.starts_with(b"\x7fELF"), "bin/{program} is not an ELF program");
        if release.target.ends_with("-linux-gnu") {
            ensure!(!has_interpreter(&head)?, "bin/{program} is dynamically linked (PT_INTERP)");
        }
    }
    for file in ["README.md", "LICENSE"] {
        ensure!(
            fs::read(top.join(doc_path(file)))? == fs::read(root.join(file))?,
            "{} is not the repository's {file}",
            doc_path(file)
        );
    }
    for program in DOCUMENTED {
        let man = fs::read_to_string(top.join(man_path(program)))?;
        ensure!(
            man.lines().any(|line| line.starts_with(&format!(".TH {program} 1"))),
            "{} has no `.TH {program} 1` header",
            man_path(program)
        );
        for shell in SHELLS {
            let path = top.join(completion_path(program, shell));
            let script = fs::read_to_string(&path)?;
            let fits = match shell {
                "bash" => script.lines().any(|line| {
                    line.trim_start().starts_with("complete -F ") && line.ends_with(program)
                }),
                "zsh" => script.starts_with(&format!("#compdef {program}")),
                _ => script.contains(&format!("complete -c {program}")),
            };
            ensure!(
                fits,
                "{} is not a {shell} completion of {program}",
                completion_path(program, shell)
            );
            if shell == "bash" {
                let output = Command::new("bash").arg("-n").arg(&path).output();
                let output = output.context("cannot run bash -n")?;
                ensure!(
                    output.status.success(),
                    "bash -n {}: {}",
                    completion_path(program, shell),
                    String::from_utf8_lossy(&output.stderr).trim()
                );
            }
        }
    }
    Ok(())
}

/// Whether a 64-bit little-endian ELF file names a program interpreter (`PT_INTERP`): linked
/// against a dynamic loader rather than statically, as `.cargo/config.toml` builds the release.
pub fn has_interpreter(elf: &[u8]) -> anyhow::Result<bool> {
    const PT_INTERP: u32 = 3;
    ensure!(elf.len() >= 64 && elf[4] == 2 && elf[5] == 1, "not a 64-bit little-endian ELF file");
    let number = |at: usize, width: usize| -> anyhow::Result<u64> {
        let bytes = elf.get(at..at + width).context("the ELF file is truncated")?;
        Ok(bytes.iter().rev().fold(0, |value, byte| value << 8 | u64::from(*byte)))
    };
    let offset = usize::try_from(number(0x20, 8)?)?;
    let size = usize::try_from(number(0x36, 2)?)?;
    let count = usize::try_from(number(0x38, 2)?)?;
    for index in 0..count {
        if number(offset + index * size, 4)? == u64::from(PT_INTERP) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Runs the unpacked programs of `top` for real: the shipped headless server on a temporary
/// data directory, an agent node launched on it, then the shipped `termsprawlctl` answering a
/// `call`, a direct-form `terminal_run` and an MCP `tools/call`, and the shipped
/// `termsprawl-conformance` passing against the server.
pub fn smoke(top: &Path) -> anyhow::Result<()> {
    let bin = top.join("bin");
    let (ctl, headless, conformance) = (bin.join(CTL), bin.join(HEADLESS), bin.join(CONFORMANCE));
    let temp = tempfile::tempdir().context("cannot create a temporary directory")?;
    let data = temp.path().join("data");
    let project = temp.path().join("project");
    fs::create_dir(&project)?;
    let tmux = TmuxGuard::new(&data);
    let mut command = serve_command(&headless, &data, &project, &ctl);
    let serve = Serve::start(&mut command, PATIENCE, |_| {})?;
    let outcome = smoke_calls(&ctl, &headless, &conformance, &data);
    let stopped = serve.terminate();
    drop(tmux);
    outcome?;
    let (status, lines) = stopped.context("cannot stop the server")?;
    ensure!(status.success(), "the shipped server exited with {status}: {}", lines.join("\n"));
    Ok(())
}

fn smoke_calls(ctl: &Path, headless: &Path, conformance: &Path, data: &Path) -> anyhow::Result<()> {
    let launched = run_program(
        Command::new(headless).arg("--data").arg(data).args(["launch", "--json", "--", "/bin/sh"]),
    )?;
    let launched: Value = serde_json::from_str(&launched).context("launch printed no JSON")?;
    let session = PathBuf::from(launched["sessionFile"].as_str().context("no sessionFile")?);

    let called = run_program(Command::new(ctl).arg("--session").arg(&session).args([
        "call",
        "guide_read",
        r#"{"topic":"canvas"}"#,
    ]))?;
    let called: Value = serde_json::from_str(&called).context("call printed no JSON")?;
    ensure!(
        called["ok"] == true && called["value"].as_str().is_some_and(|text| text.starts_with("# ")),
        "call guide_read: {called}"
    );

    let ran = run_program(Command::new(ctl).arg("--session").arg(&session).args([
        "terminal_run",
        "--command",
        "echo shipped-$((6*7))",
        "--timeoutMs",
        "20000",
    ]))?;
    // The direct form prints the value alone.
    let ran: TerminalRunResult =
        serde_json::from_str(&ran).with_context(|| format!("terminal_run printed {ran}"))?;
    ensure!(ran.exit_code == Some(0) && ran.output == "shipped-42\n", "terminal_run: {ran:?}");

    let mut bridge = Command::new(ctl)
        .arg("--session")
        .arg(&session)
        .arg("mcp")
        .env_remove("TERMSPRAWL_SESSION_FILE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot start termsprawlctl mcp")?;
    let mut stdin = bridge.stdin.take().context("no stdin")?;
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "xtask-dist", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "guide_read", "arguments": {"topic": "canvas"}}}),
    ] {
        writeln!(stdin, "{message}").context("cannot write to the bridge")?;
    }
    drop(stdin);
    let output = bridge.wait_with_output().context("the bridge did not finish")?;
    ensure!(output.status.success(), "termsprawlctl mcp exited with {}", output.status);
    let answers: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()
        .context("the bridge printed a line that is not JSON")?;
    // The bridge answers concurrently: answers are matched by id, not by order.
    let answer = |id: u64| answers.iter().find(|answer| answer["id"] == id);
    ensure!(
        answers.len() == 2
            && answer(1).is_some_and(|a| a["result"]["serverInfo"]["name"] == "termsprawl")
            && answer(2).is_some_and(|a| a["result"]["isError"] == false),
        "termsprawlctl mcp answered {answers:?}"
    );

    let report = Command::new(conformance).arg("--session").arg(&session).output();
    let report = report.context("cannot run termsprawl-conformance")?;
    let text = String::from_utf8_lossy(&report.stdout);
    ensure!(
        report.status.success() && text.contains(" passed, 0 failed"),
        "termsprawl-conformance against the shipped server failed ({}):\n{text}",
        report.status
    );
    Ok(())
}

/// Runs `command` to its end with nothing on stdin; its stdout, or an error with its stderr
/// when it failed.
fn run_program(command: &mut Command) -> anyhow::Result<String> {
    let shown = format!("{command:?}");
    let output =
        command.stdin(Stdio::null()).output().with_context(|| format!("cannot run {shown}"))?;
    ensure!(
        output.status.success(),
        "{shown} exited with {}: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr).trim()
    );
    String::from_utf8(output.stdout).with_context(|| format!("{shown} printed no UTF-8"))
}

#[cfg(test)]
mod tests;
