//! The front end's own slash commands (`/help`, `/mode`, `/config`, `/model`, `/sessions`,
//! `/resume`, `/status`), and `--mode`, `--set` and `--model` applied before the first prompt
//! (`spec/acp.md` §2.13).
//! A line starting with a `/NAME` that is not ours goes to the agent as prompt text (ACP's
//! convention for the agent's own commands).

use std::path::Path;

use super::Chat;
use super::handshake::NEW_SESSION_TIMEOUT;
use crate::messages;

/// What the interactive loop does with a typed line.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Typed {
    /// One of ours, handled.
    Handled,
    /// Not ours: a prompt for the agent.
    Prompt,
}

impl Chat {
    /// Handles a line if it is one of our commands.
    pub(super) async fn own_command(&mut self, line: &str, cwd: &Path) -> Typed {
        let mut words = line.split_whitespace();
        let Some(command) = words.next() else {
            return Typed::Prompt;
        };
        let rest: Vec<&str> = words.collect();
        match (command, rest.as_slice()) {
            ("/help", []) => {
                for line in self.session.offers.help_lines() {
                    self.ui.line(&line);
                }
            }
            ("/mode", []) => {
                for line in self.session.offers.mode_lines() {
                    self.ui.line(&line);
                }
            }
            ("/mode", [id]) => {
                if let Err(error) = self.set_mode(id).await {
                    self.ui.line(&format!("[mode] {error}"));
                }
            }
            ("/config", []) => {
                for line in self.session.offers.config_lines() {
                    self.ui.line(&line);
                }
            }
            ("/config", [id, value]) => {
                if let Err(error) = self.set_config(Some(id), value).await {
                    self.ui.line(&format!("[config] {error}"));
                }
            }
            ("/model", []) => {
                for line in self.session.offers.model_lines() {
                    self.ui.line(&line);
                }
            }
            ("/model", [value]) => {
                if let Err(error) = self.set_config(None, value).await {
                    self.ui.line(&format!("[model] {error}"));
                }
            }
            ("/sessions", []) => {
                if let Err(error) = self.show_sessions().await {
                    self.ui.line(&format!("[sessions] {error}"));
                }
            }
            ("/resume", []) => {
                if let Err(error) = self.resume_menu().await {
                    self.ui.line(&format!("[resume] {error}"));
                }
            }
            ("/resume", [word]) => {
                let id = self.resume_target(word);
                let id = id.as_str();
                let mcp_servers = self.session.mcp_entries.clone();
                match self.open_session(id, cwd, &mcp_servers).await {
                    Ok(()) => self.ui.line(&format!("[session] now {id}")),
                    Err(error) => self.ui.line(&format!("[session] {error}")),
                }
            }
            ("/last", []) => match self.turn.renderer.last_result().map(str::to_owned) {
                Some(text) => {
                    self.ui.line("[last] the whole result:");
                    self.ui.line(&text);
                }
                None => self.ui.line("[last] no tool result was shortened"),
            },
            ("/status", []) => {
                for line in self.status_lines() {
                    self.ui.line(&line);
                }
            }
            (
                "/mode" | "/config" | "/model" | "/resume" | "/sessions" | "/help" | "/status"
                | "/last",
                _,
            ) => {
                let usage = match command {
                    "/mode" => "/mode [ID]",
                    "/config" => "/config [ID VALUE]",
                    "/model" => "/model [VALUE]",
                    "/resume" => "/resume [N|ID]",
                    _ => command,
                };
                self.ui.line(&format!("usage: {usage}"));
            }
            _ => return Typed::Prompt,
        }
        Typed::Handled
    }

    /// `session/set_mode`, after the local check; the new mode is taken from the answer. An agent
    /// whose mode is its option of category `mode` gets `session/set_config_option` instead.
    pub(super) async fn set_mode(&mut self, id: &str) -> Result<(), String> {
        if let Some(option) = self.session.offers.mode_option() {
            let option = option.id.clone();
            return self.set_config(Some(&option), id).await;
        }
        let params = self.session.offers.set_mode(&self.session.id, id)?;
        self.wait_answer("session/set_mode", params, NEW_SESSION_TIMEOUT)
            .await?
            .map_err(|error| format!("session/set_mode failed: {error}"))?;
        let line = self.session.offers.mode_changed(id);
        self.ui.line(&line.unwrap_or_else(|| format!("[mode] still {id}")));
        Ok(())
    }

    /// `session/set_config_option` for `id` (the `model` option when `None`), after the local
    /// check; the options are replaced by the answer's.
    pub(super) async fn set_config(&mut self, id: Option<&str>, value: &str) -> Result<(), String> {
        if id.is_none() && self.session.offers.model_via_set_model() {
            let params = self.session.offers.set_model(&self.session.id, value)?;
            self.wait_answer("session/set_model", params, NEW_SESSION_TIMEOUT)
                .await?
                .map_err(|error| format!("session/set_model failed: {error}"))?;
            let line = self.session.offers.model_set(value);
            self.ui.line(&line);
            return Ok(());
        }
        let id = match id {
            Some(id) => id.to_owned(),
            None => match self.session.offers.model_option() {
                Some(option) => option.id.clone(),
                None => return Err("the agent offers no model option".to_owned()),
            },
        };
        let params = self.session.offers.set_config(&self.session.id, &id, value)?;
        let answer = self
            .wait_answer("session/set_config_option", params, NEW_SESSION_TIMEOUT)
            .await?
            .map_err(|error| format!("session/set_config_option failed: {error}"))?;
        let options =
            answer.get("configOptions").map(|options| messages::config_options(Some(options)));
        match options {
            Some(Ok(Some(options))) => {
                let lines = self.session.offers.config_changed(options);
                if lines.is_empty() {
                    self.ui.line(&format!("[config] {id} unchanged"));
                }
                for line in lines {
                    self.ui.line(&line);
                }
            }
            Some(Err(error)) => {
                self.ui.error(&format!(
                    "the set_config_option answer's options do not decode: {error}"
                ));
            }
            Some(Ok(None)) | None => {
                self.ui.error("the set_config_option answer has no configOptions");
            }
        }
        Ok(())
    }

    /// `--mode`, then `--set` and `--model` in order: each checked locally, then sent; the first
    /// failure stops the front end before the first prompt.
    pub(super) async fn apply_choices(
        &mut self,
        mode: Option<&str>,
        config: &[(Option<String>, String)],
    ) -> Result<(), String> {
        if let Some(mode) = mode {
            self.set_mode(mode).await.map_err(|error| format!("--mode {mode}: {error}"))?;
        }
        for (id, value) in config {
            let flag = match id {
                Some(id) => format!("--set {id}={value}"),
                None => format!("--model {value}"),
            };
            self.set_config(id.as_deref(), value)
                .await
                .map_err(|error| format!("{flag}: {error}"))?;
        }
        Ok(())
    }

    /// The lines of `/status`.
    fn status_lines(&self) -> Vec<String> {
        let mut lines = vec![format!("[status] session {}", self.session.id)];
        if let Some(mode) = self.session.offers.current_mode() {
            lines.push(format!("[status] mode {mode}"));
        }
        if let Some(messages::ConfigValue::Select { current, .. }) =
            self.session.offers.model_option().map(|option| &option.value)
        {
            lines.push(format!("[status] model {current}"));
        }
        lines.push(self.turn.extras.status_line());
        lines.push(format!("[status] termsprawl tools: {}", self.session.bridge_status));
        lines.push(format!("[status] agent terminals: {}", self.terminals.describe()));
        lines
    }
}
