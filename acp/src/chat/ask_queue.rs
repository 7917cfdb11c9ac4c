//! The permission asks waiting for the person (`spec/acp.md` §2.8): shown one at a time, answered
//! only by an explicit choice among the offered options, cancelled with the turn.

use std::collections::VecDeque;

use super::Chat;
use crate::permission::{self, Ask};
use crate::style::Style;

/// Waits until the first queued ask is answered or dropped by its task (timeout or withdrawal).
pub(super) async fn first_ask_closed(asks: &mut VecDeque<Ask>) {
    match asks.front_mut() {
        Some(ask) => ask.reply.closed().await,
        None => std::future::pending().await,
    }
}

impl Chat {
    pub(super) fn queue_ask(&mut self, ask: Ask, cancelled: bool) {
        let reason = if cancelled {
            Some("the turn is cancelled")
        } else if !self.stdin_tty {
            Some("stdin is not a terminal")
        } else if self.input_closed {
            Some("the input has ended")
        } else {
            None
        };
        if let Some(reason) = reason {
            let title = ask
                .request
                .tool_call
                .title
                .clone()
                .unwrap_or_else(|| ask.request.tool_call.tool_call_id.clone());
            self.ui.line(&format!("[permission] {title}: cancelled ({reason})"));
            return;
        }
        self.turn.asks.push_back(ask);
        if self.turn.asks.len() == 1 {
            self.show_ask();
        }
    }

    pub(super) fn show_ask(&mut self) {
        let Some(ask) = self.turn.asks.front() else {
            // The asks are answered: an elicitation waiting behind them is shown.
            self.show_form(true);
            return;
        };
        let changes = self.turn.renderer.ask_changes(&ask.request.tool_call);
        let head = permission::ask_head(&ask.request, !changes.is_empty());
        let options = permission::option_lines(&ask.request);
        let prompt = permission::choose_prompt(ask.request.options.len(), ask.timeout);
        for (index, line) in head.iter().enumerate() {
            self.ui.styled_line(if index == 0 { Style::Ask } else { Style::Detail }, line);
        }
        for piece in changes {
            self.piece(piece);
        }
        for line in options {
            self.ui.line(&line);
        }
        self.ui.finish_line();
        self.ui.out_styled(Style::Ask, &prompt);
    }

    pub(super) fn answer_ask(&mut self, line: &str) {
        let Some(ask) = self.turn.asks.front() else {
            return;
        };
        let Some(option) = permission::parse_choice(line, &ask.request.options) else {
            let prompt = permission::choose_prompt(ask.request.options.len(), ask.timeout);
            self.ui.line(&format!("answer with a number from 1 to {}", ask.request.options.len()));
            self.ui.out_styled(Style::Ask, &prompt);
            return;
        };
        let option = option.clone();
        let Some(ask) = self.turn.asks.pop_front() else {
            return;
        };
        let delivered = ask.reply.send(option.option_id.clone()).is_ok();
        if delivered {
            let line = format!("[permission] selected {:?} ({})", option.name, option.kind);
            self.ui.styled_line(Style::Ask, &line);
        } else {
            self.ui.line("[permission] too late: the ask was already cancelled");
        }
        self.show_ask();
    }

    pub(super) fn ask_closed(&mut self) {
        if self.turn.asks.pop_front().is_some() {
            self.ui.line("[permission] no answer in time (or withdrawn by the agent): cancelled");
        }
        self.show_ask();
    }
}
