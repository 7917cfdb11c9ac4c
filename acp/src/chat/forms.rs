//! The elicitations waiting for the person (`spec/acp.md` §2.19): shown one at a time, a form
//! one field per line, a URL with a yes-or-no; `/decline` and `/cancel` answer so at any field,
//! and a cancelled turn cancels them. Lines go to a permission ask first when one is shown.

use serde_json::Map;

use super::turn::Turn;
use crate::client::Elicit;
use crate::elicitation::{self, Mode};
use crate::ui::Ui;

/// An elicitation being answered: the field asked now and the values given so far.
#[derive(Debug)]
pub(super) struct Form {
    elicit: Elicit,
    field: usize,
    content: Map<String, serde_json::Value>,
}

impl Turn {
    /// Queues an elicitation, shown when nothing waits before it; when `refused` says why no one
    /// can answer it now, it is answered `cancel` at once.
    pub(super) fn queue_form(&mut self, ui: &mut Ui, elicit: Elicit, refused: Option<&str>) {
        if let Some(reason) = refused {
            let message = elicit.request.message.clone();
            let _ = elicit.reply.send(elicitation::action("cancel"));
            ui.line(&format!("[elicitation] {message}: cancelled ({reason})"));
            return;
        }
        self.forms.push_back(Form { elicit, field: 0, content: Map::new() });
        if self.forms.len() == 1 && self.asks.is_empty() {
            self.show_form(ui, true);
        }
    }

    /// Shows the first form (its head when `head`) and asks for its current field.
    pub(super) fn show_form(&mut self, ui: &mut Ui, head: bool) {
        let Some(form) = self.forms.front() else {
            return;
        };
        let request = &form.elicit.request;
        let mut lines = Vec::new();
        if head {
            lines.push(format!("[elicitation] {}", request.message));
        }
        let prompt = match &request.mode {
            Mode::Form(fields) => {
                if head {
                    lines.push(
                        "  (one field per line; Enter keeps the default or leaves an optional field out; /decline or /cancel answers so)"
                            .to_owned(),
                    );
                }
                match fields.get(form.field) {
                    Some(field) => field.prompt(),
                    None => String::new(),
                }
            }
            Mode::Url { url, .. } => {
                if head {
                    lines.push(format!("  open {url}"));
                }
                "  opened it? y to accept, n to decline, /cancel to cancel: ".to_owned()
            }
        };
        for line in lines {
            ui.line(&line);
        }
        ui.finish_line();
        ui.out(&prompt);
    }

    /// A line typed while a form is shown: the current field's value, or `/decline`, `/cancel`.
    pub(super) fn answer_form(&mut self, ui: &mut Ui, line: &str) {
        let Some(form) = self.forms.front_mut() else {
            return;
        };
        let answer = match (line.trim(), &form.elicit.request.mode) {
            ("/decline", _) => elicitation::action("decline"),
            ("/cancel", _) => elicitation::action("cancel"),
            (word, Mode::Url { .. }) => match word.to_ascii_lowercase().as_str() {
                "y" | "yes" => elicitation::action("accept"),
                "n" | "no" => elicitation::action("decline"),
                _ => {
                    ui.line("answer y, n or /cancel");
                    self.show_form(ui, false);
                    return;
                }
            },
            (_, Mode::Form(fields)) => {
                let Some(field) = fields.get(form.field) else {
                    return;
                };
                match field.read(line) {
                    Ok(value) => {
                        if let Some(value) = value {
                            form.content.insert(field.name.clone(), value);
                        }
                        form.field += 1;
                        if form.field < fields.len() {
                            self.show_form(ui, false);
                            return;
                        }
                        elicitation::accept(std::mem::take(&mut form.content))
                    }
                    Err(error) => {
                        ui.line(&format!("  {error}"));
                        self.show_form(ui, false);
                        return;
                    }
                }
            }
        };
        let Some(form) = self.forms.pop_front() else {
            return;
        };
        let action = answer["action"].as_str().unwrap_or_default().to_owned();
        let line = if form.elicit.reply.send(answer).is_ok() {
            match action.as_str() {
                "accept" => "[elicitation] accepted: the answer was sent".to_owned(),
                "decline" => "[elicitation] declined".to_owned(),
                _ => "[elicitation] cancelled".to_owned(),
            }
        } else {
            "[elicitation] too late: the agent stopped waiting (cancelled)".to_owned()
        };
        ui.line(&line);
        if self.asks.is_empty() {
            self.show_form(ui, true);
        }
    }

    /// A line typed while an ask or a form waits: the ask's answer when one is shown (asks come
    /// first), else the form's.
    pub(super) fn answer_waiting(&mut self, ui: &mut Ui, line: &str) {
        if self.asks.is_empty() {
            self.answer_form(ui, line);
        } else {
            self.answer_ask(ui, line);
        }
    }

    /// Ctrl-C between turns while a form is shown: the forms are cancelled (and nothing else
    /// happens); false when none is shown.
    pub(super) fn interrupt_forms(&mut self, ui: &mut Ui) -> bool {
        if self.forms.is_empty() {
            return false;
        }
        self.forms.clear();
        ui.line("[elicitation] cancelled (Ctrl-C)");
        true
    }

    /// Drops every form (a cancelled or finished turn): their agents hear `cancel`.
    pub(super) fn cancel_forms(&mut self, ui: &mut Ui) {
        if !self.forms.is_empty() {
            ui.line("[elicitation] cancelled with the turn");
        }
        self.forms.clear();
    }
}
