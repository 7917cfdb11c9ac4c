//! The turn loop (`spec/acp.md` §2.6, §2.7): one prompt in flight at a time, interactive or
//! one-shot, Ctrl-C that cancels a turn (and ends an idle session when pressed twice), and the
//! deadline of a cancel the agent ignores.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::time::{Instant, sleep_until};

use super::ask_queue::first_ask_closed;
use super::commands::Typed;
use super::forms::Form;
use super::{Chat, Fatal, TurnEnd};
use crate::client::Event;
use crate::connection::RpcError;
use crate::extras::Extras;
use crate::input::{Input, termination};
use crate::mentions;
use crate::messages::{self, PromptResult, SessionUpdate};
use crate::permission::Ask;
use crate::render::{Piece, Renderer, elapsed_text, stop_line, turn_rule};
use crate::style::Style;
use crate::terminal::Backend;
use termsprawl_protocol::ExitStatus;

/// How long the agent has to answer the prompt after a cancel.
pub(super) const CANCEL_TIMEOUT: Duration = Duration::from_secs(30);
/// How long shutdown waits for a cancelled turn's answer.
const SHUTDOWN_CANCEL_WAIT: Duration = Duration::from_secs(5);
/// The window for the second Ctrl-C that ends an idle session.
const DOUBLE_INTERRUPT: Duration = Duration::from_secs(2);
/// How often the activity line of a running turn is drawn again.
const ACTIVITY_TICK: Duration = Duration::from_millis(500);
/// The activity line's spinner.
const SPINNER: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/// The turn's own state: its renderer (the transcript's open tool calls and text, the activity it
/// follows), the asks waiting for the person (permission asks first, then elicitation forms, each
/// shown one at a time) and the usage and unknown updates shown in it. A turn's end clears the
/// asks; the renderer and the usage carry over to the next turn.
#[derive(Debug, Default)]
pub(super) struct Turn {
    pub(super) renderer: Renderer,
    /// Permission asks shown one at a time, the first one on screen.
    pub(super) asks: VecDeque<Ask>,
    /// Elicitations shown one at a time, after the permission asks.
    pub(super) forms: VecDeque<Form>,
    /// The session's usage, and the unknown updates shown in this turn.
    pub(super) extras: Extras,
}

impl Turn {
    /// What an update shows in the transcript (the updates of what the agent offers are the
    /// session's); `terminals` tells where a terminal the update embeds runs.
    pub(super) fn render(
        &mut self,
        update: &SessionUpdate,
        terminals: &Arc<Backend>,
    ) -> Vec<Piece> {
        if let SessionUpdate::Extra(extra) = update {
            return self.extras.update(extra);
        }
        let terminals = Arc::clone(terminals);
        let attach = move |id: &str| terminals.location(id);
        self.renderer.update(update, &attach)
    }
}

impl Chat {
    pub(super) async fn one_shot(&mut self, prompt: &str) -> Result<ExitStatus, Fatal> {
        Ok(match self.prompt_turn(prompt).await? {
            TurnEnd::Stopped(reason) if reason == "end_turn" => ExitStatus::OK,
            TurnEnd::Stopped(_) => ExitStatus::FAILED,
            TurnEnd::Failed(_) => {
                self.log_hint();
                ExitStatus::FAILED
            }
        })
    }

    /// The interactive chat: an agent that ends meanwhile is reported and offered `/restart`
    /// (`spec/acp.md` §2.22); the chat goes on.
    pub(super) async fn interactive(&mut self, cwd: &Path) -> Result<ExitStatus, Fatal> {
        loop {
            match self.interactive_loop(cwd).await {
                Err(Fatal::Disconnected(reason)) => self.agent_crashed(&reason).await,
                other => return other,
            }
        }
    }

    async fn interactive_loop(&mut self, cwd: &Path) -> Result<ExitStatus, Fatal> {
        let mut last_interrupt: Option<Instant> = None;
        let mut multi_line: Option<Vec<String>> = None;
        // What the UI had written just after the prompt was shown (`show_prompt`).
        let mut prompt_shown_at: Option<u64> = None;
        loop {
            if self.quit_requested {
                return Ok(ExitStatus::OK);
            }
            let prompt = self.prompt_text(multi_line.is_some());
            // A Ctrl-C signal (the plain read's terminal) leaves the cursor after the echoed `^C`.
            let mut signalled = false;
            let input = if let Some(input) = self.queued.pop_front() {
                input
            } else {
                self.show_prompt(&prompt, &mut prompt_shown_at);
                tokio::select! {
                    input = self.input.recv() => input.unwrap_or(Input::Eof),
                    event = self.events.recv(), if !self.disconnected => {
                        self.idle_event(event)?;
                        continue;
                    }
                    () = first_ask_closed(&mut self.turn.asks) => {
                        self.turn.ask_closed(&mut self.ui);
                        continue;
                    }
                    _ = self.signals.interrupt.recv() => {
                        signalled = true;
                        Input::Interrupt
                    }
                    () = termination(&mut self.signals.terminate, &mut self.signals.hangup) => return Ok(ExitStatus::OK),
                }
            };
            self.ui.set_editing(self.input.editing());
            prompt_shown_at = None;
            if self.stdin_tty && !signalled {
                self.ui.input_echoed();
            }
            let line = match input {
                Input::Eof => {
                    self.input_closed = true;
                    self.turn.asks.clear();
                    return Ok(ExitStatus::OK);
                }
                Input::Interrupt if self.turn.interrupt_forms(&mut self.ui) => continue,
                Input::Interrupt => {
                    // Ctrl-C at the prompt clears the line; a second one within 2 s quits.
                    let now = Instant::now();
                    if last_interrupt.is_some_and(|last| now - last <= DOUBLE_INTERRUPT) {
                        return Ok(ExitStatus::OK);
                    }
                    last_interrupt = Some(now);
                    multi_line = None;
                    self.ui.line("(press Ctrl-C again within 2 s, or type /quit, to leave)");
                    continue;
                }
                Input::Line(line) => line,
                Input::Notice { notice, unfinished } => {
                    self.notice_turn(&notice, &unfinished).await?;
                    continue;
                }
            };
            if !self.turn.asks.is_empty() || !self.turn.forms.is_empty() {
                self.turn.answer_waiting(&mut self.ui, &line);
                continue;
            }
            if let Some(lines) = multi_line.as_mut() {
                // Inside `"""`, every line is kept until the closing `"""`; after a trailing `\`,
                // the prompt goes on while lines end with one.
                match (lines.first().map(String::as_str), line.as_str()) {
                    (Some("\"\"\""), "\"\"\"") => {
                        let prompt = lines[1..].join("\n");
                        multi_line = None;
                        self.input.remember(&prompt);
                        self.interactive_turn(&prompt).await?;
                    }
                    (Some("\"\"\""), _) => lines.push(line),
                    (_, _) => {
                        if let Some(start) = line.strip_suffix('\\') {
                            lines.push(start.to_owned());
                        } else {
                            lines.push(line);
                            let prompt = lines.join("\n");
                            multi_line = None;
                            self.input.remember(&prompt);
                            self.interactive_turn(&prompt).await?;
                        }
                    }
                }
                continue;
            }
            match line.as_str() {
                "\"\"\"" => multi_line = Some(vec![line.clone()]),
                "/quit" => return Ok(ExitStatus::OK),
                text if text.trim().is_empty() => {}
                text if text.ends_with('\\') => {
                    multi_line = Some(vec![text[..text.len() - 1].to_owned()]);
                }
                text => {
                    self.input.remember(text);
                    self.typed_line(text, cwd).await?;
                }
            }
        }
    }

    /// The prompt: `... ` within a multi-line prompt, else `> ` after the mode if there is one.
    fn prompt_text(&self, multi_line: bool) -> String {
        match (multi_line, self.session.offers.current_mode()) {
            (true, _) => "... ".to_owned(),
            (false, Some(mode)) => format!("[{mode}] > "),
            (false, None) => "> ".to_owned(),
        }
    }

    /// Shows the prompt while no ask waits: the line editor draws it (and what is written
    /// meanwhile goes above it); on a terminal without the editor it is written again only after
    /// something else was written since it was (`shown_at`), never once per idle update.
    fn show_prompt(&mut self, prompt: &str, shown_at: &mut Option<u64>) {
        if self.turn.asks.is_empty() && self.turn.forms.is_empty() && self.input.edits() {
            self.input.offer(&self.session.offers);
            self.input.start_edit(prompt);
        } else if self.turn.asks.is_empty()
            && self.turn.forms.is_empty()
            && self.stdin_tty
            && *shown_at != Some(self.ui.writes())
        {
            self.ui.finish_line();
            self.ui.out(prompt);
            *shown_at = Some(self.ui.writes());
        }
        self.ui.set_editing(self.input.editing());
        self.ui.flush_held();
    }

    /// A typed line that is not part of a multi-line prompt: one of our commands, or a prompt.
    async fn typed_line(&mut self, text: &str, cwd: &Path) -> Result<(), Fatal> {
        if text.split_whitespace().next() == Some("/restart") {
            if text.trim() != "/restart" {
                self.ui.line("usage: /restart");
                return Ok(());
            }
            self.ui.line("[agent] starting it again");
            if let Err(error) = self.restart(cwd).await {
                self.ui.error(&error);
                self.log_hint();
                self.agent.end_group().await;
                self.ui.line("[agent] /restart tries again; /quit ends");
            }
            return Ok(());
        }
        if self.disconnected {
            let own = ["/help", "/status", "/last"];
            if own.contains(&text.trim()) {
                self.own_command(text, cwd).await;
            } else {
                self.ui
                    .line("[agent] the agent is not running: /restart starts it again; /quit ends");
            }
            return Ok(());
        }
        // `//NAME …` is the agent's `/NAME` where the front end has one of that name.
        if let Some(agents) = text.strip_prefix("//") {
            return self.interactive_turn(&format!("/{agents}")).await;
        }
        let name = text.strip_prefix('/').and_then(|rest| rest.split_whitespace().next());
        if name.is_some_and(|name| self.session.offers.defers_to_agent(name)) {
            return self.interactive_turn(text).await;
        }
        if text.starts_with('/') && self.own_command(text, cwd).await == Typed::Handled {
            return Ok(());
        }
        self.interactive_turn(text).await
    }

    /// A run notice termsprawl typed into this node (`spec/acp.md` §2.16): shown as termsprawl's,
    /// and sent to the agent as the next prompt, marked as not the person's. What the person had
    /// typed before it arrived is not sent: it is shown, to be typed again.
    async fn notice_turn(&mut self, notice: &str, unfinished: &str) -> Result<(), Fatal> {
        if !unfinished.trim().is_empty() {
            self.ui.line(&format!(
                "[termsprawl] a notice arrived while you typed; not sent, type it again: {unfinished}"
            ));
        }
        self.ui.line(&format!("[termsprawl notice] {notice}"));
        self.interactive_turn(&notice_prompt(notice)).await
    }

    /// One turn of the interactive loop, closed by a rule; a failed prompt is reported once, by
    /// the turn's own `[prompt failed: …]` line, followed by where the agent's stderr is.
    pub(super) async fn interactive_turn(&mut self, prompt: &str) -> Result<(), Fatal> {
        let started = Instant::now();
        let end = self.prompt_turn(prompt).await?;
        if let TurnEnd::Failed(_) = end {
            self.log_hint();
        }
        // The rule that sets the next turn apart, with this one's time.
        let rule = turn_rule(started.elapsed(), self.ui.columns());
        self.ui.rows(&[rule]);
        Ok(())
    }

    /// Handles an event while no turn runs. Updates are shown, never dropped (an agent may send
    /// one for the new session before the first prompt); one that shows nothing writes nothing,
    /// so that the prompt is not repeated.
    pub(super) fn idle_event(&mut self, event: Option<Event>) -> Result<(), Fatal> {
        match event {
            None => Err(Fatal::Disconnected("the connection ended".to_owned())),
            Some(Event::Update(update)) => {
                let pieces = self.render_update(&update);
                if !pieces.is_empty() {
                    self.ui.finish_line();
                    for piece in pieces {
                        self.piece(piece);
                    }
                }
                Ok(())
            }
            Some(event) => self.event(event, false),
        }
    }

    /// Runs one prompt turn to its stop reason.
    pub(super) async fn prompt_turn(&mut self, prompt: &str) -> Result<TurnEnd, Fatal> {
        let blocks = self.prompt_blocks(prompt);
        let params = json!({"sessionId": self.session.id, "prompt": blocks});
        self.turn.extras.start_turn();
        let mut response = Box::pin(self.connection.request("session/prompt", &params));
        let started = Instant::now();
        let mut tick = tokio::time::interval(ACTIVITY_TICK);
        let mut ticks: usize = 0;
        let mut cancelled = false;
        let mut deadline: Option<Instant> = None;
        let mut quit_deadline: Option<Instant> = None;
        let far = Instant::now() + Duration::from_hours(24 * 365);
        let result = loop {
            tokio::select! {
                biased;
                event = self.events.recv() => match event {
                    Some(event) => self.event(event, cancelled)?,
                    None => return Err(Fatal::Disconnected("the connection ended".to_owned())),
                },
                result = &mut response => break result,
                () = first_ask_closed(&mut self.turn.asks) => self.turn.ask_closed(&mut self.ui),
                input = self.input.recv(), if !self.input_closed => {
                    if self.stdin_tty {
                        self.ui.input_echoed();
                    }
                    match input.unwrap_or(Input::Eof) {
                        Input::Line(line) if !self.turn.asks.is_empty() => self.turn.answer_ask(&mut self.ui, &line),
                        Input::Line(line) if !self.turn.forms.is_empty() => self.turn.answer_form(&mut self.ui, &line),
                        Input::Line(line) if line == "/quit" => {
                            if cancelled {
                                return Err(Fatal::Forced);
                            }
                            self.quit_turn(&mut quit_deadline, &mut cancelled, &mut deadline);
                        }
                        Input::Line(line) => self.queued.push_back(Input::Line(line)),
                        // A run notice waits for the turn's end; it never answers an ask.
                        notice @ Input::Notice { .. } => self.queued.push_back(notice),
                        Input::Interrupt => {
                            if cancelled {
                                return Err(Fatal::Forced);
                            }
                            self.cancel_turn(&mut cancelled, &mut deadline);
                        }
                        Input::Eof => {
                            self.input_closed = true;
                            self.turn.asks.clear();
                            self.turn.forms.clear();
                            if self.stdin_tty && self.queued.is_empty() {
                                // The person left.
                                self.quit_turn(&mut quit_deadline, &mut cancelled, &mut deadline);
                            } else {
                                self.queued.push_back(Input::Eof);
                            }
                        }
                    }
                }
                _ = self.signals.interrupt.recv() => {
                    if cancelled {
                        return Err(Fatal::Forced);
                    }
                    self.cancel_turn(&mut cancelled, &mut deadline);
                }
                () = termination(&mut self.signals.terminate, &mut self.signals.hangup) => {
                    self.quit_turn(&mut quit_deadline, &mut cancelled, &mut deadline);
                }
                () = sleep_until(quit_deadline.unwrap_or(far)), if quit_deadline.is_some() => {
                    self.turn.renderer.end_turn();
                    return Ok(TurnEnd::Stopped("cancelled".to_owned()));
                }
                () = sleep_until(deadline.unwrap_or(far)), if deadline.is_some() => {
                    self.ui.clear_activity();
                    return Err(Fatal::IgnoredCancel);
                }
                _ = tick.tick() => {
                    ticks += 1;
                    self.show_activity(started, ticks, cancelled);
                }
            }
        };
        self.ui.clear_activity();
        self.close_turn(cancelled)?;
        let end = match result {
            Ok(answer) => match messages::decode::<PromptResult>(Some(&answer)) {
                Ok(answer) => TurnEnd::Stopped(answer.stop_reason),
                Err(error) => TurnEnd::Failed(RpcError::internal(format!(
                    "the prompt answer does not decode: {error}"
                ))),
            },
            Err(error) => TurnEnd::Failed(error),
        };
        self.show_end(&end);
        if let Some(usage) = self.turn.extras.after_turn() {
            self.ui.styled_line(Style::Detail, &usage);
        }
        self.check_bridge();
        Ok(end)
    }

    /// The end of a turn: its stop reason unless it is `end_turn`, or the failure.
    fn show_end(&mut self, end: &TurnEnd) {
        match end {
            TurnEnd::Stopped(reason) => {
                if let Some(line) = stop_line(reason) {
                    self.ui.styled_line(Style::Warning, &line);
                }
            }
            TurnEnd::Failed(error) => {
                self.ui.styled_line(Style::Warning, &format!("[prompt failed: {error}]"));
            }
        }
    }

    /// After the prompt's answer: the updates the reader queued before it (they belong to this
    /// turn), unfinished tool calls of a cancelled turn shown cancelled, what the text left open.
    fn close_turn(&mut self, cancelled: bool) -> Result<(), Fatal> {
        while let Ok(event) = self.events.try_recv() {
            self.event(event, cancelled)?;
        }
        self.turn.asks.clear();
        self.turn.cancel_forms(&mut self.ui);
        if cancelled {
            for piece in self.turn.renderer.cancel_unfinished() {
                self.piece(piece);
            }
        }
        self.turn.renderer.end_turn();
        self.finish_markdown();
        Ok(())
    }

    /// Draws the activity line again, unless an ask waits for an answer.
    fn show_activity(&mut self, started: Instant, ticks: usize, cancelled: bool) {
        if self.turn.asks.is_empty() {
            let line = self.activity_line(started, ticks, cancelled);
            self.ui.show_activity(&line);
        }
    }

    /// The activity line: `⠋ 12.0 s · running Read file · Ctrl-C cancels`.
    fn activity_line(&self, started: Instant, ticks: usize, cancelled: bool) -> String {
        let doing = if cancelled {
            "cancelling"
        } else {
            self.turn.renderer.doing().unwrap_or("waiting for the agent")
        };
        let hint = if cancelled { "Ctrl-C again stops waiting" } else { "Ctrl-C cancels" };
        format!(
            "{} {} · {doing} · {hint}",
            SPINNER[ticks % SPINNER.len()],
            elapsed_text(started.elapsed())
        )
    }

    /// Asks the agent to cancel the turn, once: `cancelled` is set and `deadline` is when an
    /// ignored cancel becomes fatal.
    pub(super) fn cancel_turn(&mut self, cancelled: &mut bool, deadline: &mut Option<Instant>) {
        if !*cancelled {
            *cancelled = true;
            *deadline = Some(Instant::now() + CANCEL_TIMEOUT);
            self.cancel();
        }
    }

    /// Quits during a turn (the person left, or a termination signal): cancels the turn and sets
    /// `quit_deadline`, the end of the brief wait for the turn to end.
    pub(super) fn quit_turn(
        &mut self,
        quit_deadline: &mut Option<Instant>,
        cancelled: &mut bool,
        deadline: &mut Option<Instant>,
    ) {
        self.quit_requested = true;
        *quit_deadline = Some(Instant::now() + SHUTDOWN_CANCEL_WAIT);
        self.cancel_turn(cancelled, deadline);
    }

    /// Sends `session/cancel` and answers every pending permission ask `cancelled`.
    pub(super) fn cancel(&mut self) {
        self.connection.notify("session/cancel", &json!({"sessionId": self.session.id}));
        if !self.turn.asks.is_empty() {
            self.ui.line("[permission] cancelled with the turn");
        }
        self.turn.asks.clear();
        self.turn.cancel_forms(&mut self.ui);
        self.ui.line("(cancelling the turn)");
    }
}

impl Chat {
    /// The content blocks of a prompt: its text, and each `@PATH` it mentions (`crate::mentions`),
    /// embedded or linked per the agent's `promptCapabilities`; each mention is said in a line.
    fn prompt_blocks(&mut self, prompt: &str) -> serde_json::Value {
        let Some(project) = self.session.offers.project.clone() else {
            return json!([{"type": "text", "text": prompt}]);
        };
        let (blocks, lines) =
            mentions::blocks(prompt, &project, self.session.capabilities.embedded_context);
        for line in lines {
            self.ui.line(&line);
        }
        serde_json::Value::Array(blocks)
    }
}

/// The prompt that hands a run notice to the agent: marked as termsprawl's, not the person's.
pub(crate) fn notice_prompt(notice: &str) -> String {
    format!(
        "termsprawl notice, not typed by the person: a command you started with notify has \
         ended.\n{notice}"
    )
}
