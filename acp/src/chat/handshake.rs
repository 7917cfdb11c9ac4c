//! The handshake (`acp.md` §2.3 to §2.5): `initialize`, `session/new` with the MCP bridge, and
//! authentication when the agent asks for it.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use super::{Chat, Input};
use crate::connection::{RpcError, code};
use crate::messages::{self, InitializeResult, NewSessionResult};
use crate::options::{McpNarrowing, Options};

/// The protocol version we speak.
const PROTOCOL_VERSION: u64 = 1;
/// How long `initialize` may take.
const INITIALIZE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long `session/new` may take (the agent connects its MCP servers meanwhile).
const NEW_SESSION_TIMEOUT: Duration = Duration::from_mins(2);

impl Chat {
    pub(super) async fn handshake(
        &mut self,
        options: &Options,
        cwd: &Path,
        session_file: Option<&Path>,
    ) -> Result<(), String> {
        let initialize = json!({
            "protocolVersion": PROTOCOL_VERSION,
            "clientCapabilities": {
                "fs": {"readTextFile": true, "writeTextFile": true},
                "terminal": true,
            },
            "clientInfo": {"name": "termsprawl", "version": env!("CARGO_PKG_VERSION")},
        });
        let answer = self
            .request("initialize", initialize, INITIALIZE_TIMEOUT)
            .await
            .map_err(|error| format!("initialize failed: {error}"))?;
        let initialized: InitializeResult = messages::decode(Some(&answer))
            .map_err(|error| format!("the agent's initialize answer does not decode: {error}"))?;
        if initialized.protocol_version.as_u64() != Some(PROTOCOL_VERSION) {
            return Err(format!(
                "the agent speaks ACP protocol version {}, this client only version 1",
                initialized.protocol_version
            ));
        }
        let mcp_servers = self.mcp_servers(options, session_file);
        let new_session = json!({
            "cwd": cwd.to_string_lossy(),
            "mcpServers": mcp_servers,
        });
        let answer =
            match self.request("session/new", new_session.clone(), NEW_SESSION_TIMEOUT).await {
                Err(error) if error.code == code::AUTH_REQUIRED => {
                    self.authenticate(&initialized, &error).await?;
                    self.request("session/new", new_session, NEW_SESSION_TIMEOUT).await.map_err(
                        |error| format!("session/new failed after authenticating: {error}"),
                    )?
                }
                Err(error) => return Err(format!("session/new failed: {error}")),
                Ok(answer) => answer,
            };
        let session: NewSessionResult = messages::decode(Some(&answer))
            .map_err(|error| format!("the agent's session/new answer does not decode: {error}"))?;
        self.session_id.clone_from(&session.session_id);
        self.client.set_session(&session.session_id);
        let agent = initialized.agent_info.as_ref();
        let name = agent
            .and_then(|info| info.title.clone().or_else(|| info.name.clone()))
            .unwrap_or_else(|| "the agent".to_owned());
        let version = agent.and_then(|info| info.version.clone()).unwrap_or_default();
        self.ui.error(&format!(
            "connected to {name} {version} (session {}); /quit or Ctrl-D ends it",
            session.session_id
        ));
        Ok(())
    }

    pub(super) fn mcp_servers(&mut self, options: &Options, session_file: Option<&Path>) -> Value {
        if !options.mcp {
            return json!([]);
        }
        let Some(session_file) = session_file else {
            self.ui.error(
                "no session file (--session or TERMSPRAWL_SESSION_FILE): the agent gets no termsprawl tools",
            );
            return json!([]);
        };
        let program = match std::env::current_exe() {
            Ok(program) => program,
            Err(error) => {
                self.ui.error(&format!(
                    "cannot find the path of termsprawlctl ({error}): the agent gets no termsprawl tools"
                ));
                return json!([]);
            }
        };
        json!([mcp_entry(&program, session_file, &options.mcp_narrowing)])
    }

    /// Lets the person pick one of the agent's authentication methods and calls `authenticate`.
    pub(super) async fn authenticate(
        &mut self,
        initialized: &InitializeResult,
        error: &RpcError,
    ) -> Result<(), String> {
        let methods: Vec<_> = initialized
            .auth_methods
            .iter()
            .flatten()
            .filter(|method| method.kind.as_deref().is_none_or(|kind| kind == "agent"))
            .collect();
        if !self.stdin_tty {
            return Err(format!(
                "the agent requires authentication ({}), and there is no terminal to choose a method",
                error.message
            ));
        }
        if methods.is_empty() {
            return Err(format!(
                "the agent requires authentication ({}) but offers no method this client supports",
                error.message
            ));
        }
        self.ui.line("[auth] the agent requires authentication:");
        for (index, method) in methods.iter().enumerate() {
            let description =
                method.description.as_deref().map(|text| format!(": {text}")).unwrap_or_default();
            self.ui.line(&format!(
                "  {}. {} ({}){description}",
                index + 1,
                method.name.as_deref().unwrap_or(&method.id),
                method.id
            ));
        }
        let method = loop {
            self.ui.finish_line();
            self.ui.out(&format!("choose 1-{}: ", methods.len()));
            let input = self.next_input().await;
            if self.stdin_tty {
                self.ui.input_echoed();
            }
            let line = match input {
                Some(Input::Line(line)) => line,
                Some(Input::Eof) | None => {
                    return Err("authentication was not chosen (end of input)".to_owned());
                }
            };
            let chosen = line
                .trim()
                .parse::<usize>()
                .ok()
                .and_then(|number| methods.get(number.checked_sub(1)?));
            if let Some(method) = chosen {
                break *method;
            }
        };
        self.request("authenticate", json!({"methodId": method.id}), Duration::from_mins(10))
            .await
            .map_err(|error| format!("authentication failed: {error}"))?;
        Ok(())
    }
}

/// The stdio MCP server entry that hands the agent termsprawl's tools (`acp.md` §2.5), narrowed
/// by `--mcp-read-only` and `--mcp-tools` (the bridge's own `--read-only` and `--tools`).
pub(crate) fn mcp_entry(program: &Path, session_file: &Path, narrowing: &McpNarrowing) -> Value {
    let mut args = vec![
        Value::from("--session"),
        Value::from(session_file.to_string_lossy()),
        Value::from("mcp"),
    ];
    if narrowing.read_only {
        args.push(Value::from("--read-only"));
    }
    if let Some(tools) = &narrowing.tools {
        args.push(Value::from("--tools"));
        args.push(Value::from(tools.join(",")));
    }
    json!({
        "name": "termsprawl",
        "command": program.to_string_lossy(),
        "args": args,
        "env": [],
    })
}
