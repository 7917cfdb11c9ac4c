//! The agent's sessions (`spec/acp.md` §2.14): `session/list` (every page), continuing one with
//! `session/load` when the agent offers it (its replayed history shown as a transcript and closed
//! at its end), else `session/resume` (saying that the agent replays nothing when it does not),
//! else a clear word that the agent cannot; `/resume` alone lists the sessions to pick from; `session/close` at the end when the
//! agent offers it; and the session's modes and options taken from each session answer.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use super::Chat;
use super::handshake::NEW_SESSION_TIMEOUT;
use crate::client::Event;
use crate::connection::code;
use crate::messages::{self, SessionInfo, SessionList, SessionSetup};
use termsprawl_protocol::ExitStatus;

/// How many `session/list` pages are read at most (an agent whose cursor never ends).
const MAX_LIST_PAGES: usize = 1000;
/// How long a replay may go on after the answer without a new update (`Chat::show_replay`).
const REPLAY_QUIET: Duration = Duration::from_millis(300);
/// How long a replay may go on after the answer in all.
const REPLAY_LIMIT: Duration = Duration::from_secs(10);
/// How long `session/close` may take at the end.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(2);

impl Chat {
    /// Takes the modes and configuration options of a session answer (`session/new`,
    /// `session/load`, `session/resume`). The commands are not in the answer: they come in the
    /// session's `available_commands_update`, before or after it (see [`Chat::open_session`]).
    pub(super) fn session_started(&mut self, answer: &Value) {
        let setup: SessionSetup = messages::decode(Some(answer)).unwrap_or_default();
        match messages::mode_state(setup.modes.as_ref()) {
            Ok(modes) => self.session.offers.modes = modes,
            Err(error) => {
                self.session.offers.modes = None;
                self.ui
                    .error(&format!("skipped the session's modes, which do not decode: {error}"));
            }
        }
        match messages::config_options(setup.config_options.as_ref()) {
            Ok(options) => self.session.offers.config = options,
            Err(error) => {
                self.session.offers.config = None;
                self.ui.error(&format!(
                    "skipped the session's configuration options, which do not decode: {error}"
                ));
            }
        }
        match messages::unstable_models(setup.models.as_ref()) {
            Ok(models) => self.session.offers.models = models,
            Err(error) => {
                self.session.offers.models = None;
                self.ui
                    .error(&format!("skipped the session's models, which do not decode: {error}"));
            }
        }
        self.session.open = true;
    }

    /// Continues the session `session_id`: `session/resume` when offered, else `session/load`
    /// (its replayed history is shown before this returns), else an error saying the agent cannot.
    pub(super) async fn open_session(
        &mut self,
        session_id: &str,
        cwd: &Path,
        mcp_servers: &Value,
    ) -> Result<(), String> {
        let params = json!({
            "sessionId": session_id,
            "cwd": cwd.to_string_lossy(),
            "mcpServers": mcp_servers,
        });
        // `session/load` replays the history, so the person sees the conversation they continue;
        // `session/resume` need not (`spec/acp.md` §2.14).
        let method = if self.session.capabilities.load {
            "session/load"
        } else if self.session.capabilities.resume {
            "session/resume"
        } else {
            return Err(format!(
                "cannot resume session {session_id}: the agent offers neither session/resume nor session/load"
            ));
        };
        let previous = std::mem::replace(&mut self.session.id, session_id.to_owned());
        // The replayed history of `session/load` is sent for the new id before the answer, and
        // so may the session's commands be: the earlier session's are forgotten now, not when
        // the answer comes (that would forget the new ones too), and kept if the switch fails.
        self.client.set_session(session_id);
        let previous_commands = std::mem::take(&mut self.session.offers.commands);
        let mut answer = self.wait_answer(method, params.clone(), NEW_SESSION_TIMEOUT).await?;
        // As for `session/new`: a login when the agent asks for one, then the request once more.
        if let Err(error) = answer.as_ref()
            && error.code == code::AUTH_REQUIRED
        {
            let error = error.clone();
            if let Err(failure) = self.authenticate(cwd, &error).await {
                self.client.set_session(&previous);
                self.session.id = previous;
                self.session.offers.commands = previous_commands;
                return Err(failure);
            }
            answer = self.wait_answer(method, params, NEW_SESSION_TIMEOUT).await?;
        }
        let answer = match answer {
            Ok(answer) => answer,
            Err(error) => {
                self.client.set_session(&previous);
                self.session.id = previous;
                self.session.offers.commands = previous_commands;
                return Err(format!("{method} {session_id} failed: {error}"));
            }
        };
        self.show_replay(session_id, method).await?;
        self.session_started(&answer);
        Ok(())
    }

    /// Shows the history the agent replays, framed by `[session] the history of ID:` (written
    /// before the first update that shows anything) and `[session] end of the history of ID`.
    /// A conforming agent sends every replayed update before its answer, so they are all queued
    /// now; Gemini CLI answers `session/load` first and replays after, so the replay also takes
    /// what arrives until the agent has been quiet for [`REPLAY_QUIET`] (at most
    /// [`REPLAY_LIMIT`] in all). `session/resume` need not replay (fast-agent does): when nothing
    /// was shown, one line says that the agent replays nothing.
    async fn show_replay(&mut self, session_id: &str, method: &str) -> Result<(), String> {
        let limit = tokio::time::Instant::now() + REPLAY_LIMIT;
        let mut framed = false;
        loop {
            let event = if let Ok(event) = self.events.try_recv() {
                event
            } else {
                let until = limit.min(tokio::time::Instant::now() + REPLAY_QUIET);
                match tokio::time::timeout_at(until, self.events.recv()).await {
                    Ok(Some(event)) => event,
                    Ok(None) => return Err("the connection ended".to_owned()),
                    Err(_) => break,
                }
            };
            let Event::Update(update) = event else {
                if let Err(super::Fatal::Disconnected(reason)) = self.event(event, false) {
                    return Err(reason);
                }
                continue;
            };
            let pieces = self.render_update(&update);
            if !pieces.is_empty() && !framed {
                framed = true;
                self.flush_markdown();
                self.ui.line(&format!("[session] the history of {session_id}:"));
            }
            for piece in pieces {
                self.piece(piece);
            }
        }
        self.turn.renderer.end_turn();
        self.flush_markdown();
        self.ui.finish_line();
        if framed {
            self.ui.line(&format!("[session] end of the history of {session_id}"));
        } else if method == "session/resume" {
            self.ui.line(&format!(
                "[session] this agent replays nothing on session/resume: the earlier turns of {session_id} are not shown"
            ));
        } else {
            self.ui.line(&format!("[session] {session_id} has no history to show"));
        }
        Ok(())
    }

    /// `/resume` without an id: the agent's sessions, numbered, to pick with `/resume N` or
    /// `/resume ID` (Tab completes the ids).
    pub(super) async fn resume_menu(&mut self) -> Result<(), String> {
        let sessions = self.list_sessions().await?;
        if sessions.is_empty() {
            self.ui.line("[resume] the agent has no sessions");
            return Ok(());
        }
        self.ui.line(&format!("[resume] {} sessions (id, updated, title, cwd):", sessions.len()));
        for (index, session) in sessions.iter().enumerate() {
            self.ui.line(&format!("  {}.{}", index + 1, session_line(session)));
        }
        self.ui.line("[resume] type /resume N or /resume ID (Tab completes the ids)");
        Ok(())
    }

    /// The session `/resume WORD` means: the Nth of the last list when `WORD` is a number N
    /// within it (and not itself a listed id), else `WORD` as an id.
    pub(super) fn resume_target(&self, word: &str) -> String {
        let listed = &self.session.offers.sessions;
        if listed.iter().any(|id| id == word) {
            return word.to_owned();
        }
        match word.parse::<usize>().ok().and_then(|number| listed.get(number.checked_sub(1)?)) {
            Some(id) => id.clone(),
            None => word.to_owned(),
        }
    }

    /// Every session `session/list` returns, page after page; an error names why not.
    pub(super) async fn list_sessions(&mut self) -> Result<Vec<SessionInfo>, String> {
        if !self.session.capabilities.list {
            return Err(
                "the agent does not list its sessions (it offers no session/list)".to_owned()
            );
        }
        let mut sessions = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_LIST_PAGES {
            let params = match &cursor {
                Some(cursor) => json!({"cursor": cursor}),
                None => json!({}),
            };
            let answer = self
                .wait_answer("session/list", params, NEW_SESSION_TIMEOUT)
                .await?
                .map_err(|error| format!("session/list failed: {error}"))?;
            let page: SessionList = messages::decode(Some(&answer)).map_err(|error| {
                format!("the agent's session/list answer does not decode: {error}")
            })?;
            sessions.extend(page.sessions);
            match page.next_cursor {
                Some(next) if !next.is_empty() && Some(&next) != cursor.as_ref() => {
                    cursor = Some(next);
                }
                _ => {
                    self.session.offers.sessions =
                        sessions.iter().map(|session| session.session_id.clone()).collect();
                    return Ok(sessions);
                }
            }
        }
        Err(format!("session/list did not end after {MAX_LIST_PAGES} pages"))
    }

    /// `--list-sessions` and `/sessions`: one line per session.
    pub(super) async fn show_sessions(&mut self) -> Result<(), String> {
        let sessions = self.list_sessions().await?;
        if sessions.is_empty() {
            self.ui.line("[sessions] the agent has no sessions");
            return Ok(());
        }
        self.ui.line(&format!("[sessions] {} (id, updated, title, cwd):", sessions.len()));
        for session in &sessions {
            self.ui.line(&session_line(session));
        }
        Ok(())
    }

    /// `--list-sessions`: the list, then exit.
    pub(super) async fn print_sessions(&mut self) -> ExitStatus {
        match self.show_sessions().await {
            Ok(()) => ExitStatus::OK,
            Err(error) => {
                self.ui.error(&error);
                ExitStatus::FAILED
            }
        }
    }

    /// At the end: `session/close` when offered, and the session's id, so that a person can
    /// continue it.
    pub(super) async fn close_session(&mut self) {
        if !self.session.open {
            return;
        }
        self.session.open = false;
        if self.session.capabilities.close && !self.disconnected {
            let params = json!({"sessionId": self.session.id});
            let closed = tokio::time::timeout(
                CLOSE_TIMEOUT,
                self.connection.request("session/close", &params),
            )
            .await;
            if let Ok(Err(error)) = closed {
                self.ui.error(&format!("session/close failed: {error}"));
            }
        }
        let hint = if self.session.capabilities.resume || self.session.capabilities.load {
            format!("; continue it with termsprawlctl acp --resume {} -- AGENT", self.session.id)
        } else {
            String::new()
        };
        self.ui.error(&format!("the session was {}{hint}", self.session.id));
    }
}

/// `  ID  UPDATED  TITLE  (CWD)`, with `-` for what the agent did not say.
fn session_line(session: &SessionInfo) -> String {
    format!(
        "  {}  {}  {}  ({})",
        session.session_id,
        session.updated_at.as_deref().unwrap_or("-"),
        session.title.as_deref().unwrap_or("-"),
        session.cwd.as_deref().unwrap_or("-"),
    )
}
