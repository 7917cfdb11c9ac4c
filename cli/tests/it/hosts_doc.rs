//! `docs/hosts.md` (issue 24 item 2) is tested, not only written: every JSON and TOML snippet
//! parses, names `termsprawlctl` with `mcp` and the session the way the bridge expects, and is
//! started as written (the placeholder session replaced by a real one) against a real loopback tool
//! server, where it must answer `initialize` and `tools/list`; each host's shell lines have the
//! shape that host needs; the MCP Inspector's lines are run for real with the pinned Inspector.
//!
//! Snippets are the fenced blocks whose info string names a host: ```` ```json host=cursor ````.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::mcp_support::App;
use crate::support::BIN;

/// The session path every snippet is written with.
const PLACEHOLDER: &str = "/absolute/path/to/session.json";

/// The variable that names the session inside a termsprawl node.
const SESSION_ENV: &str = "TERMSPRAWL_SESSION_FILE";

/// Every host the guide must cover.
const HOSTS: [&str; 9] = [
    "claude-code",
    "codex",
    "gemini",
    "opencode",
    "copilot",
    "vscode",
    "cursor",
    "zed",
    "inspector",
];

/// The hosts that pass their own environment to the bridge, so that an entry without `--session`
/// follows the node the host runs in (the form a committed project file uses).
const PASSES_ENVIRONMENT: [&str; 3] = ["claude-code", "gemini", "copilot"];

/// One fenced block of the guide that names a host.
#[derive(Debug)]
struct Snippet {
    language: String,
    host: String,
    text: String,
    /// The line of the opening fence, for messages.
    line: usize,
}

fn guide_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/hosts.md")
}

fn snippets() -> Vec<Snippet> {
    let text = std::fs::read_to_string(guide_path()).expect("docs/hosts.md exists");
    let mut snippets = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((index, line)) = lines.next() {
        let Some(info) = line.trim_start().strip_prefix("```") else { continue };
        let mut words = info.split_whitespace();
        let language = words.next().unwrap_or_default().to_owned();
        let host = words.find_map(|word| word.strip_prefix("host=")).map(str::to_owned);
        let mut body = String::new();
        for (_, line) in lines.by_ref() {
            if line.trim_start().starts_with("```") {
                break;
            }
            body.push_str(line);
            body.push('\n');
        }
        if let Some(host) = host {
            snippets.push(Snippet { language, host, text: body, line: index + 1 });
        }
    }
    snippets
}

/// How a host starts the bridge, as a snippet says.
#[derive(Debug)]
struct Launch {
    command: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
    /// Whether the host is told to pass `TERMSPRAWL_SESSION_FILE` on (Codex's `env_vars`).
    forwards_session_env: bool,
}

fn strings(value: &Value, what: &str) -> Vec<String> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("{what} is not an array: {value}"))
        .iter()
        .map(|item| item.as_str().unwrap_or_else(|| panic!("{what}: {item}")).to_owned())
        .collect()
}

fn env_of(value: Option<&Value>) -> Vec<(String, String)> {
    value
        .and_then(Value::as_object)
        .map(|env| {
            env.iter()
                .map(|(key, value)| (key.clone(), value.as_str().unwrap().to_owned()))
                .collect()
        })
        .unwrap_or_default()
}

/// The server entry of a JSON or TOML snippet, in its host's own schema.
fn launch_of(snippet: &Snippet) -> Launch {
    let at = format!("docs/hosts.md:{} ({})", snippet.line, snippet.host);
    let document: Value = match snippet.language.as_str() {
        "json" => serde_json::from_str(&snippet.text)
            .unwrap_or_else(|error| panic!("{at}: not JSON: {error}")),
        "toml" => {
            let table: toml::Table = toml::from_str(&snippet.text)
                .unwrap_or_else(|error| panic!("{at}: not TOML: {error}"));
            serde_json::to_value(table).unwrap()
        }
        other => panic!("{at}: a snippet in {other}"),
    };
    launch_in(&document, &snippet.host, &at)
}

/// The server entry of a parsed configuration of `host`.
fn launch_in(document: &Value, host: &str, at: &str) -> Launch {
    let entry = match host {
        "claude-code" | "gemini" | "cursor" | "inspector" => &document["mcpServers"]["termsprawl"],
        "copilot" => {
            let entry = &document["mcpServers"]["termsprawl"];
            assert_eq!(entry["type"], "local", "{at}");
            entry
        }
        "vscode" => {
            let entry = &document["servers"]["termsprawl"];
            assert_eq!(entry["type"], "stdio", "{at}");
            entry
        }
        "zed" => &document["context_servers"]["termsprawl"],
        "opencode" => {
            let entry = &document["mcp"]["termsprawl"];
            assert_eq!(entry["type"], "local", "{at}");
            assert!(entry.get("args").is_none() && entry.get("env").is_none(), "{at}");
            let mut command = strings(&entry["command"], at);
            let program = command.remove(0);
            return Launch {
                command: program,
                args: command,
                env: env_of(entry.get("environment")),
                forwards_session_env: false,
            };
        }
        "codex" => &document["mcp_servers"]["termsprawl"],
        other => panic!("{at}: unknown host {other}"),
    };
    assert!(entry.is_object(), "{at}: no termsprawl server entry");
    let without_session = !strings(&entry["args"], at).iter().any(|arg| arg == "--session");
    let forwards_session_env = entry
        .get("env_vars")
        .is_some_and(|names| strings(names, at).iter().any(|name| name == SESSION_ENV))
        || (PASSES_ENVIRONMENT.contains(&host) && without_session);
    Launch {
        command: entry["command"].as_str().unwrap_or_else(|| panic!("{at}: command")).to_owned(),
        args: strings(&entry["args"], at),
        env: env_of(entry.get("env")),
        forwards_session_env,
    }
}

/// The bridge's own rules: the program is `termsprawlctl`; the arguments are `--session FILE mcp`
/// followed by `mcp`'s options only (`--max-wait-ms` with a value in range), or just `mcp` when
/// the host passes the variable on.
#[track_caller]
fn check_shape(launch: &Launch, at: &str) {
    assert_eq!(Path::new(&launch.command).file_name().unwrap(), "termsprawlctl", "{at}");
    let mcp = launch.args.iter().position(|arg| arg == "mcp").unwrap_or_else(|| panic!("{at}"));
    let before: Vec<&str> = launch.args[..mcp].iter().map(String::as_str).collect();
    if launch.forwards_session_env {
        assert_eq!(before, Vec::<&str>::new(), "{at}");
    } else {
        assert_eq!(before, ["--session", PLACEHOLDER], "{at}: the session goes before mcp");
    }
    let mut options = launch.args[mcp + 1..].iter();
    while let Some(option) = options.next() {
        if option == "--max-wait-ms" {
            let value = options.next().unwrap_or_else(|| panic!("{at}: --max-wait-ms needs MS"));
            assert!(value.parse::<u64>().is_ok_and(|ms| ms <= 600_000), "{at}: {value}");
            continue;
        }
        assert!(
            option == "--read-only" || option.starts_with("--tools"),
            "{at}: {option} is not an option of mcp"
        );
    }
}

/// Starts the snippet's server as written, on `app`'s session: `initialize` and `tools/list` must
/// succeed.
#[track_caller]
fn start_as_written(launch: &Launch, app: &App, at: &str) {
    let session = app.session_file().to_str().unwrap();
    let mut command = Command::new(BIN);
    command.args(launch.args.iter().map(|arg| arg.replace(PLACEHOLDER, session)));
    command.env_remove(SESSION_ENV);
    for (key, value) in &launch.env {
        command.env(key, value.replace(PLACEHOLDER, session));
    }
    if launch.forwards_session_env {
        command.env(SESSION_ENV, session);
    }
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "hosts-doc", "version": "0"}}});
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    writeln!(stdin, "{initialize}\n{list}").unwrap();
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{at}: {}\n{stderr}", output.status);
    let answers: Vec<Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(answers.len(), 2, "{at}: {answers:?}\n{stderr}");
    assert_eq!(answers[0]["result"]["serverInfo"]["name"], "termsprawl", "{at}: {answers:?}");
    let tools = answers[1]["result"]["tools"].as_array().map_or(0, Vec::len);
    assert!(tools > 0, "{at}: {answers:?}");
}

#[test]
fn every_config_snippet_parses_and_starts_the_bridge_as_written() {
    let snippets = snippets();
    for host in HOSTS {
        assert!(
            snippets.iter().any(|snippet| snippet.host == host),
            "docs/hosts.md has no snippet for {host}"
        );
    }
    let app = App::start();
    let mut configs = 0;
    for snippet in snippets.iter().filter(|snippet| snippet.language != "sh") {
        let at = format!("docs/hosts.md:{} ({})", snippet.line, snippet.host);
        let launch = launch_of(snippet);
        check_shape(&launch, &at);
        start_as_written(&launch, &app, &at);
        configs += 1;
    }
    // Claude Code, Codex three times (the session, the variable, the approvals), Gemini, opencode,
    // Copilot CLI, VS Code, Cursor, Zed, the Inspector, and the long-wait entries of Claude Code,
    // Codex, Gemini and opencode.
    assert_eq!(configs, 15);
}

/// Codex refuses a destructive tool under approval policy `never` unless its entry approves it in
/// advance (measured with Codex 0.171.0): the guide's entry spells both of Codex's keys so.
#[test]
fn codexs_approval_entry_approves_the_destructive_tools() {
    let snippets = snippets();
    let approvals: Vec<toml::Table> = snippets
        .iter()
        .filter(|snippet| snippet.host == "codex" && snippet.language == "toml")
        .map(|snippet| toml::from_str(&snippet.text).unwrap())
        .filter(|table: &toml::Table| {
            table["mcp_servers"]["termsprawl"].get("default_tools_approval_mode").is_some()
        })
        .collect();
    assert_eq!(approvals.len(), 1, "{approvals:?}");
    let entry = &approvals[0]["mcp_servers"]["termsprawl"];
    assert_eq!(entry["default_tools_approval_mode"].as_str(), Some("approve"));
    assert_eq!(entry["tools"]["terminal_run"]["approval_mode"].as_str(), Some("approve"));
    assert_eq!(entry["tools"].as_table().unwrap().len(), 1, "{entry:?}");
}

/// Shell words: whitespace-separated, single quotes kept together (what the guide's lines use).
fn words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in line.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any {
                    words.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            c => {
                word.push(c);
                any = true;
            }
        }
    }
    assert!(!quoted, "unbalanced quote in {line}");
    if any {
        words.push(word);
    }
    words
}

/// The shell lines of `host` that start the bridge.
fn shell_lines(snippets: &[Snippet], host: &str) -> Vec<Vec<String>> {
    snippets
        .iter()
        .filter(|snippet| snippet.language == "sh" && snippet.host == host)
        .flat_map(|snippet| snippet.text.lines().map(words).collect::<Vec<_>>())
        .filter(|words| words.iter().any(|word| word.contains("termsprawlctl")))
        .collect()
}

/// The bridge's words of a host line (from `termsprawlctl` on), as a launch.
fn launch_from(words: &[String]) -> Launch {
    let start = words.iter().position(|word| word == "termsprawlctl").expect("termsprawlctl");
    Launch {
        command: words[start].clone(),
        args: words[start + 1..].to_vec(),
        env: Vec::new(),
        forwards_session_env: false,
    }
}

#[test]
fn each_hosts_command_line_has_the_shape_that_host_needs() {
    let snippets = snippets();
    // Claude Code: `--` before the command, or it takes `--session` for its own option.
    let claude = shell_lines(&snippets, "claude-code");
    assert_eq!(claude.len(), 1);
    for words in &claude {
        assert_eq!(words[..3], ["claude", "mcp", "add"]);
        let dashes = words.iter().position(|word| word == "--").expect("claude needs --");
        assert_eq!(words[dashes + 1], "termsprawlctl");
        assert!(words[..dashes].windows(2).any(|pair| pair == ["-s", "user"]));
        check_shape(&launch_from(words), "claude-code line");
    }
    // Gemini CLI: `-s user`, and no `--` (it passes the words through and fails on one).
    let gemini = shell_lines(&snippets, "gemini");
    assert_eq!(gemini.len(), 1);
    for words in &gemini {
        assert_eq!(words[..3], ["gemini", "mcp", "add"]);
        assert!(!words.iter().any(|word| word == "--"), "{words:?}");
        assert!(words.windows(2).any(|pair| pair == ["-s", "user"]), "{words:?}");
        check_shape(&launch_from(words), "gemini line");
    }
    // Copilot CLI: `copilot mcp add NAME -- COMMAND…`.
    let copilot = shell_lines(&snippets, "copilot");
    assert_eq!(copilot.len(), 1);
    assert_eq!(copilot[0][..5], ["copilot", "mcp", "add", "termsprawl", "--"]);
    assert_eq!(copilot[0][5], "termsprawlctl");
    check_shape(&launch_from(&copilot[0]), "copilot line");
    // Codex: `codex mcp add NAME -- COMMAND…`, and app-server's `-c` overrides, each a TOML value.
    let codex = shell_lines(&snippets, "codex");
    assert_eq!(codex.len(), 2);
    let add = &codex[0];
    assert_eq!(add[..4], ["codex", "mcp", "add", "termsprawl"]);
    assert_eq!(add[4], "--");
    check_shape(&launch_from(add), "codex mcp add line");
    let server = &codex[1];
    assert_eq!(server[..2], ["codex", "app-server"]);
    let mut entry = toml::Table::new();
    for pair in server[2..].chunks(2) {
        assert_eq!(pair[0], "-c", "{server:?}");
        let (key, value) = pair[1].split_once('=').unwrap();
        let key = key.strip_prefix("mcp_servers.termsprawl.").expect("the termsprawl entry");
        let parsed: toml::Table = toml::from_str(&format!("{key} = {value}")).unwrap();
        entry.extend(parsed);
    }
    let document = json!({"mcp_servers": {"termsprawl": serde_json::to_value(entry).unwrap()}});
    let launch = launch_in(&document, "codex", "codex app-server line");
    assert!(launch.forwards_session_env, "{launch:?}");
    check_shape(&launch, "codex app-server line");
}

#[test]
fn the_inspectors_lines_run_for_real() {
    let snippets = snippets();
    let app = App::start();
    let session = app.session_file().to_str().unwrap().to_owned();
    let dir = tempfile::TempDir::new().unwrap();
    // The configuration file the second line names, as the guide writes it.
    let config = snippets
        .iter()
        .find(|snippet| snippet.host == "inspector" && snippet.language == "json")
        .expect("the Inspector's configuration");
    let mut document: Value = serde_json::from_str(&config.text).unwrap();
    let entry = &mut document["mcpServers"]["termsprawl"];
    entry["command"] = json!(BIN);
    entry["args"] = json!(
        strings(&entry["args"], "args")
            .iter()
            .map(|arg| arg.replace(PLACEHOLDER, &session))
            .collect::<Vec<_>>()
    );
    std::fs::write(dir.path().join("inspector.json"), document.to_string()).unwrap();
    let cli = termsprawl_test_support::peers::node_modules("")
        .join("@modelcontextprotocol/inspector/cli/build/cli.js");
    let lines: Vec<Vec<String>> = snippets
        .iter()
        .filter(|snippet| snippet.language == "sh" && snippet.host == "inspector")
        .flat_map(|snippet| snippet.text.lines().map(words).collect::<Vec<_>>())
        .collect();
    // With `--session`, with the configuration file, and with the variable passed by `-e`.
    assert_eq!(lines.len(), 3, "{lines:?}");
    for words in lines {
        assert_eq!(words[..2], ["npx", "@modelcontextprotocol/inspector"]);
        let args: Vec<String> = words[2..]
            .iter()
            .map(|word| match word.as_str() {
                "termsprawlctl" => BIN.to_owned(),
                other => other.replace(PLACEHOLDER, &session),
            })
            .collect();
        let mut child = Command::new("node")
            .arg(&cli)
            .args(&args)
            .current_dir(dir.path())
            .env_remove(SESSION_ENV)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|error| panic!("node does not run ({error})"));
        let mut stdout = String::new();
        child.stdout.take().unwrap().read_to_string(&mut stdout).unwrap();
        let mut stderr = String::new();
        child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
        let status = child.wait().unwrap();
        assert!(status.success(), "{words:?}: {status}\n{stdout}\n{stderr}");
        let listed: Value = serde_json::from_str(&stdout)
            .unwrap_or_else(|error| panic!("{words:?}: not JSON ({error}): {stdout}"));
        let names: Vec<&str> = listed["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert!(names.contains(&"session_info") && names.contains(&"terminal_read"), "{names:?}");
    }
}
