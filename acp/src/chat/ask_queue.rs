//! The permission asks waiting for the person (`spec/acp.md` §2.8): shown one at a time, answered
//! only by an explicit choice among the offered options, cancelled with the turn.

use std::collections::VecDeque;

use super::show_piece;
use super::turn::Turn;
use crate::permission::{self, Ask};
use crate::style::Style;
use crate::ui::Ui;

/// Waits until the first queued ask is answered or dropped by its task (timeout or withdrawal).
pub(super) async fn first_ask_closed(asks: &mut VecDeque<Ask>) {
    match asks.front_mut() {
        Some(ask) => ask.reply.closed().await,
        None => std::future::pending().await,
    }
}

impl Turn {
    /// Queues a permission ask, shown when it is the first; when `refused` says why no one can
    /// answer it now, it is cancelled at once (its task answers `cancelled`).
    pub(super) fn queue_ask(&mut self, ui: &mut Ui, ask: Ask, refused: Option<&str>) {
        if let Some(reason) = refused {
            let title = ask
                .request
                .tool_call
                .title
                .clone()
                .unwrap_or_else(|| ask.request.tool_call.tool_call_id.clone());
            ui.line(&format!("[permission] {title}: cancelled ({reason})"));
            return;
        }
        self.asks.push_back(ask);
        if self.asks.len() == 1 {
            self.show_ask(ui);
        }
    }

    pub(super) fn show_ask(&mut self, ui: &mut Ui) {
        let Some(ask) = self.asks.front() else {
            // The asks are answered: an elicitation waiting behind them is shown.
            self.show_form(ui, true);
            return;
        };
        let changes = self.renderer.ask_changes(&ask.request.tool_call);
        let head = permission::ask_head(&ask.request, !changes.is_empty());
        let options = permission::option_lines(&ask.request);
        let prompt = permission::choose_prompt(ask.request.options.len(), ask.timeout);
        for (index, line) in head.iter().enumerate() {
            ui.styled_line(if index == 0 { Style::Ask } else { Style::Detail }, line);
        }
        for piece in changes {
            show_piece(ui, piece);
        }
        for line in options {
            ui.line(&line);
        }
        ui.finish_line();
        ui.out_styled(Style::Ask, &prompt);
    }

    pub(super) fn answer_ask(&mut self, ui: &mut Ui, line: &str) {
        let Some(ask) = self.asks.front() else {
            return;
        };
        let Some(option) = permission::parse_choice(line, &ask.request.options) else {
            let prompt = permission::choose_prompt(ask.request.options.len(), ask.timeout);
            ui.line(&format!("answer with a number from 1 to {}", ask.request.options.len()));
            ui.out_styled(Style::Ask, &prompt);
            return;
        };
        let option = option.clone();
        let Some(ask) = self.asks.pop_front() else {
            return;
        };
        let delivered = ask.reply.send(option.option_id.clone()).is_ok();
        if delivered {
            let line = format!("[permission] selected {:?} ({})", option.name, option.kind);
            ui.styled_line(Style::Ask, &line);
        } else {
            ui.line("[permission] too late: the ask was already cancelled");
        }
        self.show_ask(ui);
    }

    pub(super) fn ask_closed(&mut self, ui: &mut Ui) {
        if self.asks.pop_front().is_some() {
            ui.line("[permission] no answer in time (or withdrawn by the agent): cancelled");
        }
        self.show_ask(ui);
    }
}
