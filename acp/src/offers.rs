//! What the agent offers for its session and a person may pick from (`spec/acp.md` §2.13; §2.12 had
//! left them out of the first version): its modes, its configuration options and its slash
//! commands, as the session's answer and the agent's updates (`current_mode_update`,
//! `config_option_update`, `available_commands_update`) left them; the lists `/mode`, `/config` and
//! `/help` print; and the local checks of a person's choice, which turn it into the params of
//! `session/set_mode` or `session/set_config_option`, or into a clear error naming what is offered,
//! so that nothing invalid is ever sent.
//!
//! Pure: the chat sends and prints.

#[cfg(test)]
mod tests;

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::messages::{AvailableCommand, Choice, ConfigOption, ConfigValue, ModeState};

/// The front end's own slash commands: name, input hint, description (`/help` lists them first).
pub(crate) const OWN_COMMANDS: [(&str, &str, &str); 11] = [
    ("help", "", "this list: the front end's commands, then the agent's"),
    ("mode", "[ID]", "list the agent's modes, or switch to one (session/set_mode)"),
    (
        "config",
        "[ID VALUE]",
        "list the configuration options, or set one (session/set_config_option)",
    ),
    ("model", "[VALUE]", "list the models, or pick one (the option of category model)"),
    ("sessions", "", "list the agent's sessions (session/list)"),
    (
        "resume",
        "[N|ID]",
        "list the agent's sessions, or continue one (session/load, else session/resume)",
    ),
    ("status", "", "the session, its mode, the MCP bridge and the terminals"),
    ("last", "", "the whole text of the last tool result that was shortened"),
    (
        "restart",
        "",
        "start the agent again and continue the session (session/resume or session/load)",
    ),
    ("quit", "", "end the session"),
    ("\"\"\"", "", "(a line of three double quotes) start or end a multi-line prompt"),
];

/// The modes, options and commands of the current session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Offers {
    pub(crate) modes: Option<ModeState>,
    pub(crate) config: Option<Vec<ConfigOption>>,
    pub(crate) commands: Vec<AvailableCommand>,
    /// The unstable `models` as a select (`messages::unstable_models`), the model option when
    /// `config` has none; set with `session/set_model`.
    pub(crate) models: Option<ConfigOption>,
    /// The ids of the agent's sessions as last listed (`/sessions`, `/resume`): `/resume N`
    /// picks the Nth, and Tab completes them after `/resume `.
    pub(crate) sessions: Vec<String>,
    /// The session's cwd, where `@PATH` mentions are completed and read (`crate::mentions`).
    pub(crate) project: Option<PathBuf>,
}

impl Offers {
    /// The current mode id, for the prompt (`[plan] > `): of the modes, else of the mode option.
    pub(crate) fn current_mode(&self) -> Option<&str> {
        match (&self.modes, self.mode_option().map(|option| &option.value)) {
            (Some(modes), _) => Some(modes.current_mode_id.as_str()),
            (None, Some(ConfigValue::Select { current, .. })) => Some(current.as_str()),
            (None, _) => None,
        }
    }

    /// The configuration option of category `mode`, which is the mode of an agent that sends no
    /// `modes` (opencode sends its modes so; `spec/acp.md` §2.13): `/mode` lists and sets it, and
    /// the prompt shows it.
    pub(crate) fn mode_option(&self) -> Option<&ConfigOption> {
        if self.modes.is_some() {
            return None;
        }
        self.config.iter().flatten().find(|option| option.category.as_deref() == Some("mode"))
    }

    /// Follows `current_mode_update`; the line to show when the mode changed.
    pub(crate) fn mode_changed(&mut self, id: &str) -> Option<String> {
        match self.modes.as_mut() {
            Some(modes) if modes.current_mode_id == id => None,
            Some(modes) => {
                id.clone_into(&mut modes.current_mode_id);
                Some(format!("[mode] now {}", self.describe_mode(id)))
            }
            // An agent that announced no modes says it is in one: keep it, with no list.
            None => {
                self.modes =
                    Some(ModeState { current_mode_id: id.to_owned(), available_modes: Vec::new() });
                Some(format!("[mode] now {id}"))
            }
        }
    }

    /// Follows `config_option_update` (or a `session/set_config_option` answer): one line per
    /// option whose value changed, or that is new.
    pub(crate) fn config_changed(&mut self, options: Vec<ConfigOption>) -> Vec<String> {
        let previous = self.config.take().unwrap_or_default();
        let lines = options
            .iter()
            .filter(|option| {
                previous
                    .iter()
                    .find(|old| old.id == option.id)
                    .is_none_or(|old| old.value != option.value)
            })
            .map(|option| format!("[config] {} = {}", option.id, value_text(&option.value)))
            .collect();
        self.config = Some(options);
        lines
    }

    fn describe_mode(&self, id: &str) -> String {
        let name = self
            .modes
            .iter()
            .flat_map(|modes| &modes.available_modes)
            .find(|mode| mode.id == id)
            .map(|mode| mode.name.as_str())
            .filter(|name| !name.is_empty() && *name != id);
        match name {
            Some(name) => format!("{id} ({name})"),
            None => id.to_owned(),
        }
    }

    /// The lines of `/mode`.
    pub(crate) fn mode_lines(&self) -> Vec<String> {
        if let Some(ConfigValue::Select { current, choices }) =
            self.mode_option().map(|option| &option.value)
        {
            let mut lines = vec![format!("[mode] current: {current}")];
            lines.extend(choices.iter().map(|choice| choice_line(choice, current)));
            return lines;
        }
        let Some(modes) = &self.modes else {
            return vec!["[mode] the agent offers no modes".to_owned()];
        };
        let mut lines =
            vec![format!("[mode] current: {}", self.describe_mode(&modes.current_mode_id))];
        for mode in &modes.available_modes {
            let mark = if mode.id == modes.current_mode_id { "*" } else { " " };
            let description =
                mode.description.as_deref().map(|text| format!(": {text}")).unwrap_or_default();
            lines.push(format!("{mark} {} ({}){description}", mode.id, mode.name));
        }
        lines
    }

    /// The params of `session/set_mode` for `id`, or why not (nothing is sent then).
    pub(crate) fn set_mode(&self, session_id: &str, id: &str) -> Result<Value, String> {
        let Some(modes) = &self.modes else {
            return Err("the agent offers no modes".to_owned());
        };
        if !modes.available_modes.iter().any(|mode| mode.id == id) {
            let ids: Vec<&str> =
                modes.available_modes.iter().map(|mode| mode.id.as_str()).collect();
            return Err(format!("unknown mode {id:?}; the agent offers: {}", ids.join(", ")));
        }
        Ok(json!({"sessionId": session_id, "modeId": id}))
    }

    /// The lines of `/config`.
    pub(crate) fn config_lines(&self) -> Vec<String> {
        let Some(options) = self.config.as_ref().filter(|options| !options.is_empty()) else {
            return vec!["[config] the agent offers no configuration options".to_owned()];
        };
        let mut lines = Vec::new();
        for option in options {
            let category = option
                .category
                .as_deref()
                .map(|category| format!(", {category}"))
                .unwrap_or_default();
            lines.push(format!(
                "[config] {} ({}{category}) = {}",
                option.id,
                option.name,
                value_text(&option.value)
            ));
            lines.extend(choice_lines(option));
        }
        lines
    }

    /// The option `/model` and `--model` set: the one whose category is `model`.
    pub(crate) fn model_option(&self) -> Option<&ConfigOption> {
        self.config
            .iter()
            .flatten()
            .find(|option| option.category.as_deref() == Some("model"))
            .or(self.models.as_ref())
    }

    /// Whether the model is set with the unstable `session/set_model` (the agent sent `models`
    /// and no `configOptions` entry of category `model`).
    pub(crate) fn model_via_set_model(&self) -> bool {
        self.models.is_some()
            && !self
                .config
                .iter()
                .flatten()
                .any(|option| option.category.as_deref() == Some("model"))
    }

    /// The params of `session/set_model` for `value`, or why not (nothing is sent then).
    pub(crate) fn set_model(&self, session_id: &str, value: &str) -> Result<Value, String> {
        let Some(ConfigValue::Select { choices, .. }) = self.models.as_ref().map(|m| &m.value)
        else {
            return Err("the agent offers no model option".to_owned());
        };
        if !choices.iter().any(|choice| choice.value == value) {
            let values: Vec<&str> = choices.iter().map(|choice| choice.value.as_str()).collect();
            return Err(format!(
                "invalid value {value:?} for model; choose one of: {}",
                values.join(", ")
            ));
        }
        Ok(json!({"sessionId": session_id, "modelId": value}))
    }

    /// After a `session/set_model` answer: the new current model, and the line to show.
    pub(crate) fn model_set(&mut self, value: &str) -> String {
        if let Some(ConfigValue::Select { current, .. }) =
            self.models.as_mut().map(|models| &mut models.value)
        {
            value.clone_into(current);
        }
        format!("[model] now {value}")
    }

    /// The lines of `/model` without a value.
    pub(crate) fn model_lines(&self) -> Vec<String> {
        match self.model_option() {
            Some(option) => {
                let mut lines =
                    vec![format!("[model] {} = {}", option.id, value_text(&option.value))];
                lines.extend(choice_lines(option));
                lines
            }
            None => vec!["[model] the agent offers no model option".to_owned()],
        }
    }

    /// The params of `session/set_config_option` for `id` and the typed `value`, or why not.
    pub(crate) fn set_config(
        &self,
        session_id: &str,
        id: &str,
        value: &str,
    ) -> Result<Value, String> {
        let options = self.config.as_deref().unwrap_or_default();
        let Some(option) = options.iter().find(|option| option.id == id) else {
            if options.is_empty() {
                return Err("the agent offers no configuration options".to_owned());
            }
            let ids: Vec<&str> = options.iter().map(|option| option.id.as_str()).collect();
            return Err(format!(
                "unknown config option {id:?}; the agent offers: {}",
                ids.join(", ")
            ));
        };
        match &option.value {
            ConfigValue::Select { choices, .. } => {
                if !choices.iter().any(|choice| choice.value == value) {
                    let values: Vec<&str> =
                        choices.iter().map(|choice| choice.value.as_str()).collect();
                    return Err(format!(
                        "invalid value {value:?} for {id}; choose one of: {}",
                        values.join(", ")
                    ));
                }
                Ok(json!({"sessionId": session_id, "configId": id, "value": value}))
            }
            ConfigValue::Boolean(_) => {
                let value = match value {
                    "true" | "on" | "yes" => true,
                    "false" | "off" | "no" => false,
                    _ => {
                        return Err(format!(
                            "invalid value {value:?} for {id}; it is true or false"
                        ));
                    }
                };
                Ok(
                    json!({"sessionId": session_id, "configId": id, "type": "boolean", "value": value}),
                )
            }
            ConfigValue::Unknown(kind) => {
                Err(format!("{id} is an option of type {kind:?}, which this client cannot set"))
            }
        }
    }

    /// Whether a typed `/NAME` goes to the agent although the front end has a `/NAME`: the agent
    /// announced a command of that name and offers nothing ours would act on (fast-agent has a
    /// `/model` command and no model option).
    pub(crate) fn defers_to_agent(&self, name: &str) -> bool {
        let nothing_of_ours = match name {
            "mode" => self.modes.is_none() && self.mode_option().is_none(),
            "model" => self.model_option().is_none(),
            "config" => self.config.as_ref().is_none_or(Vec::is_empty),
            _ => false,
        };
        nothing_of_ours && self.commands.iter().any(|command| command.name == name)
    }

    /// What Tab completes in `line`, the text before the cursor: the byte where the word being
    /// completed starts and the words that may replace it, in the order `/help` lists them. A
    /// first word starting with `/` is a command (ours, then the agent's); after `/mode ` a mode
    /// id, after `/model ` a value of the model option, after `/config ` an option id and after
    /// `/config ID ` one of that option's values.
    pub(crate) fn complete(&self, line: &str) -> (usize, Vec<String>) {
        let start = line.rfind(char::is_whitespace).map_or(0, |index| index + 1);
        let (before, word) = line.split_at(start);
        let words: Vec<&str> = before.split_whitespace().collect();
        let candidates: Vec<String> = match words.as_slice() {
            [] if word.starts_with('/') => {
                let own = OWN_COMMANDS
                    .iter()
                    .filter(|(name, ..)| !name.starts_with('"'))
                    .map(|(name, ..)| format!("/{name}"));
                let agents = self.commands.iter().map(|command| format!("/{}", command.name));
                let mut names: Vec<String> = Vec::new();
                for name in own.chain(agents) {
                    if !names.contains(&name) {
                        names.push(name);
                    }
                }
                names
            }
            ["/mode"] => match self.mode_option() {
                Some(option) => option_values(option),
                None => self
                    .modes
                    .iter()
                    .flat_map(|modes| &modes.available_modes)
                    .map(|mode| mode.id.clone())
                    .collect(),
            },
            ["/model"] => self.model_option().map(option_values).unwrap_or_default(),
            ["/config"] => self.config.iter().flatten().map(|option| option.id.clone()).collect(),
            ["/resume"] => self.sessions.clone(),
            ["/config", id] => self
                .config
                .iter()
                .flatten()
                .find(|option| option.id == *id)
                .map(option_values)
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        let matching = candidates.into_iter().filter(|name| name.starts_with(word)).collect();
        (start, matching)
    }

    /// The lines of `/help`: ours, then the agent's.
    pub(crate) fn help_lines(&self) -> Vec<String> {
        let mut lines = vec!["[help] this front end's commands:".to_owned()];
        for (name, hint, description) in OWN_COMMANDS {
            let name = if name.starts_with('"') { name.to_owned() } else { format!("/{name}") };
            lines.push(command_line(&name, hint, description));
        }
        if self.commands.is_empty() {
            lines.push("[help] the agent announced no commands".to_owned());
        } else {
            lines.push("[help] the agent's commands (sent to it as prompt text):".to_owned());
            for command in &self.commands {
                let hint = command.hint.as_deref().map(hint_text).unwrap_or_default();
                let shadowed = !self.defers_to_agent(&command.name)
                    && OWN_COMMANDS.iter().any(|(name, ..)| *name == command.name);
                let description = if shadowed {
                    format!(
                        "{} (the front end's /{name} comes first: type //{name} for the agent's)",
                        command.description,
                        name = command.name
                    )
                } else {
                    command.description.clone()
                };
                lines.push(command_line(&format!("/{}", command.name), &hint, &description));
            }
        }
        lines
    }
}

/// An input hint as `/help` shows it: in `<…>`, unless the agent bracketed it already (Claude
/// Code's `[issue description]`, `<optional custom summarization instructions>`).
fn hint_text(hint: &str) -> String {
    let bracketed = (hint.starts_with('<') && hint.ends_with('>'))
        || (hint.starts_with('[') && hint.ends_with(']'));
    if bracketed { hint.to_owned() } else { format!("<{hint}>") }
}

fn command_line(name: &str, hint: &str, description: &str) -> String {
    let usage = if hint.is_empty() { name.to_owned() } else { format!("{name} {hint}") };
    format!("  {usage:<24} {description}")
}

/// The values an option may be set to (completion): a select's choices, `true` and `false`.
fn option_values(option: &ConfigOption) -> Vec<String> {
    match &option.value {
        ConfigValue::Select { choices, .. } => {
            choices.iter().map(|choice| choice.value.clone()).collect()
        }
        ConfigValue::Boolean(_) => vec!["true".to_owned(), "false".to_owned()],
        ConfigValue::Unknown(_) => Vec::new(),
    }
}

/// How a value shows: the select's value id, `true`/`false`.
fn value_text(value: &ConfigValue) -> String {
    match value {
        ConfigValue::Select { current, .. } => current.clone(),
        ConfigValue::Boolean(current) => current.to_string(),
        ConfigValue::Unknown(kind) => format!("(a value of type {kind})"),
    }
}

/// One choice of a select: `* VALUE (NAME): DESCRIPTION`, marked when it is `current`.
fn choice_line(choice: &Choice, current: &str) -> String {
    let mark = if choice.value == current { "*" } else { " " };
    let description =
        choice.description.as_deref().map(|text| format!(": {text}")).unwrap_or_default();
    format!("{mark} {} ({}){description}", choice.value, choice.name)
}

fn choice_lines(option: &ConfigOption) -> Vec<String> {
    match &option.value {
        ConfigValue::Select { current, choices } => {
            choices.iter().map(|choice| format!("  {}", choice_line(choice, current))).collect()
        }
        ConfigValue::Boolean(_) => vec!["    true or false".to_owned()],
        ConfigValue::Unknown(_) => Vec::new(),
    }
}
