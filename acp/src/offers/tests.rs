//! Tests of the local checks of modes and configuration options, and of the lists `/mode`,
//! `/config` and `/help` print.

use serde_json::json;

use super::Offers;
use crate::messages::{self, AvailableCommand};

fn offers() -> Offers {
    let modes = json!({"currentModeId": "default", "availableModes": [
        {"id": "default", "name": "Default", "description": "asks before edits"},
        {"id": "plan", "name": "Plan"},
    ]});
    let config = json!([
        {"id": "model", "name": "Model", "category": "model", "type": "select", "currentValue": "fast",
         "options": [{"value": "fast", "name": "Fast"},
                     {"group": "big", "name": "Big", "options": [{"value": "smart", "name": "Smart", "description": "slower"}]}]},
        {"id": "web", "name": "Web search", "type": "boolean", "currentValue": false},
    ]);
    Offers {
        modes: messages::mode_state(Some(&modes)).unwrap(),
        config: messages::config_options(Some(&config)).unwrap(),
        commands: vec![
            AvailableCommand {
                name: "status".to_owned(),
                description: "the agent's status".to_owned(),
                hint: None,
            },
            AvailableCommand {
                name: "review".to_owned(),
                description: "review the diff".to_owned(),
                hint: Some("what to look at".to_owned()),
            },
        ],
        models: None,
        sessions: vec!["old-1".to_owned(), "old-2".to_owned()],
        project: None,
    }
}

#[test]
fn a_mode_is_checked_before_it_is_sent() {
    let offers = offers();
    assert_eq!(offers.set_mode("s", "plan"), Ok(json!({"sessionId": "s", "modeId": "plan"})));
    assert_eq!(
        offers.set_mode("s", "yolo"),
        Err("unknown mode \"yolo\"; the agent offers: default, plan".to_owned())
    );
    assert_eq!(
        Offers::default().set_mode("s", "plan"),
        Err("the agent offers no modes".to_owned())
    );
    assert_eq!(
        offers.mode_lines(),
        vec![
            "[mode] current: default (Default)",
            "* default (Default): asks before edits",
            "  plan (Plan)",
        ]
    );
}

#[test]
fn mode_updates_show_only_changes() {
    let mut offers = offers();
    assert_eq!(offers.mode_changed("default"), None);
    assert_eq!(offers.mode_changed("plan"), Some("[mode] now plan (Plan)".to_owned()));
    assert_eq!(offers.current_mode(), Some("plan"));
}

#[test]
fn config_values_are_checked_by_type_and_choice() {
    let offers = offers();
    assert_eq!(
        offers.set_config("s", "model", "smart"),
        Ok(json!({"sessionId": "s", "configId": "model", "value": "smart"}))
    );
    assert_eq!(
        offers.set_config("s", "web", "on"),
        Ok(json!({"sessionId": "s", "configId": "web", "type": "boolean", "value": true}))
    );
    assert_eq!(
        offers.set_config("s", "model", "huge"),
        Err("invalid value \"huge\" for model; choose one of: fast, smart".to_owned())
    );
    assert_eq!(
        offers.set_config("s", "web", "maybe"),
        Err("invalid value \"maybe\" for web; it is true or false".to_owned())
    );
    assert_eq!(
        offers.set_config("s", "speed", "1"),
        Err("unknown config option \"speed\"; the agent offers: model, web".to_owned())
    );
    assert_eq!(offers.model_option().map(|option| option.id.as_str()), Some("model"));
    assert_eq!(
        offers.config_lines(),
        vec![
            "[config] model (Model, model) = fast",
            "  * fast (Fast)",
            "    smart (Smart): slower",
            "[config] web (Web search) = false",
            "    true or false",
        ]
    );
}

#[test]
fn config_updates_name_what_changed() {
    let mut offers = offers();
    let mut options = offers.config.clone().unwrap();
    options[1].value = messages::ConfigValue::Boolean(true);
    assert_eq!(offers.config_changed(options), vec!["[config] web = true".to_owned()]);
}

#[test]
fn help_lists_ours_then_the_agents_commands() {
    let lines = offers().help_lines();
    assert_eq!(lines[0], "[help] this front end's commands:");
    assert!(lines.iter().any(|line| line.starts_with("  /mode [ID] ")), "{lines:?}");
    assert_eq!(lines[lines.len() - 3], "[help] the agent's commands (sent to it as prompt text):");
    assert_eq!(
        lines[lines.len() - 2],
        format!(
            "  {:<24} the agent's status (the front end's /status comes first: type //status for the agent's)",
            "/status"
        )
    );
    assert_eq!(
        lines[lines.len() - 1],
        format!("  {:<24} review the diff", "/review <what to look at>")
    );
}

#[test]
fn a_command_of_ours_defers_to_the_agents_when_we_have_nothing_to_act_on() {
    let mut offers = offers();
    let model = AvailableCommand {
        name: "model".to_owned(),
        description: "switch models".to_owned(),
        hint: None,
    };
    offers.commands.push(model.clone());
    assert!(!offers.defers_to_agent("model"), "the agent offers a model option");
    assert!(!offers.defers_to_agent("status"), "ours always");
    let bare = Offers { commands: vec![model], ..Offers::default() };
    assert!(bare.defers_to_agent("model"));
    assert!(!bare.defers_to_agent("mode"), "the agent has no /mode");
    let help = bare.help_lines();
    assert_eq!(help.last().unwrap(), &format!("  {:<24} switch models", "/model"));
}

#[test]
fn tab_completes_commands_then_mode_ids_and_config_values() {
    let offers = offers();
    let complete = |line: &str| offers.complete(line);
    assert_eq!(complete("/he"), (0, vec!["/help".to_owned()]));
    assert_eq!(
        complete("/re"),
        (0, vec!["/resume".to_owned(), "/restart".to_owned(), "/review".to_owned()])
    );
    // The agent's `/status` is named once: ours has the name.
    assert_eq!(complete("/st"), (0, vec!["/status".to_owned()]));
    assert_eq!(complete("/mode p"), (6, vec!["plan".to_owned()]));
    assert_eq!(complete("/mode "), (6, vec!["default".to_owned(), "plan".to_owned()]));
    assert_eq!(complete("/model s"), (7, vec!["smart".to_owned()]));
    assert_eq!(complete("/config w"), (8, vec!["web".to_owned()]));
    assert_eq!(complete("/config web t"), (12, vec!["true".to_owned()]));
    assert_eq!(complete("/config nope "), (13, Vec::<String>::new()));
    // The session ids of the last list.
    assert_eq!(complete("/resume "), (8, vec!["old-1".to_owned(), "old-2".to_owned()]));
    assert_eq!(complete("/resume old-2"), (8, vec!["old-2".to_owned()]));
    // Prompt text and a command's later words complete nothing.
    assert_eq!(complete("he"), (0, Vec::<String>::new()));
    assert_eq!(complete("/mode plan x"), (11, Vec::<String>::new()));
    let bare = Offers::default();
    assert_eq!(bare.complete("/mode "), (6, Vec::<String>::new()));
}

#[test]
fn a_hint_the_agent_bracketed_is_not_bracketed_again() {
    let command = |name: &str, hint: &str| AvailableCommand {
        name: name.to_owned(),
        description: "d".to_owned(),
        hint: Some(hint.to_owned()),
    };
    let offers = Offers {
        commands: vec![
            command("debug", "[issue description]"),
            command("compact", "<optional instructions>"),
            command("review", "what to look at"),
        ],
        ..Offers::default()
    };
    let lines = offers.help_lines();
    assert!(lines.contains(&format!("  {:<24} d", "/debug [issue description]")), "{lines:?}");
    assert!(lines.contains(&"  /compact <optional instructions> d".to_owned()), "{lines:?}");
    assert!(lines.contains(&format!("  {:<24} d", "/review <what to look at>")), "{lines:?}");
}

#[test]
fn the_unstable_models_are_the_model_option_when_there_is_no_other() {
    let models = json!({"currentModelId": "default", "availableModels": [
        {"modelId": "default", "name": "Default"}, {"modelId": "opus", "name": "Opus"}]});
    let bare =
        Offers { models: messages::unstable_models(Some(&models)).unwrap(), ..Offers::default() };
    assert!(bare.model_via_set_model());
    assert_eq!(bare.model_lines()[0], "[model] model = default");
    assert_eq!(bare.complete("/model o"), (7, vec!["opus".to_owned()]));
    assert_eq!(bare.set_model("s", "opus").unwrap(), json!({"sessionId": "s", "modelId": "opus"}));
    assert_eq!(
        bare.set_model("s", "haiku").unwrap_err(),
        "invalid value \"haiku\" for model; choose one of: default, opus"
    );
    // A configOptions entry of category model comes first.
    let both = Offers { models: bare.models.clone(), ..offers() };
    assert!(!both.model_via_set_model());
    assert_eq!(both.model_lines()[0], "[model] model = fast");
    assert_eq!(
        messages::unstable_models(Some(&json!({"availableModels": []})))
            .map(|_| ())
            .unwrap_err()
            .split(':')
            .next(),
        Some("models")
    );
}

/// Issue 35 item 4: opencode sends its modes as a configuration option of category `mode`: it is
/// the mode of `/mode`, of Tab and of the prompt, and `/mode ID` checks the value as an option's.
#[test]
fn an_option_of_category_mode_is_the_mode() {
    let config = json!([
        {"id": "mode", "name": "Mode", "category": "mode", "type": "select", "currentValue": "build",
         "options": [{"value": "build", "name": "Build", "description": "edits files"},
                     {"value": "plan", "name": "Plan"}]},
    ]);
    let offers =
        Offers { config: messages::config_options(Some(&config)).unwrap(), ..Offers::default() };
    assert_eq!(offers.current_mode(), Some("build"));
    assert_eq!(offers.mode_option().map(|option| option.id.as_str()), Some("mode"));
    assert_eq!(
        offers.mode_lines(),
        vec!["[mode] current: build", "* build (Build): edits files", "  plan (Plan)"]
    );
    assert_eq!(offers.complete("/mode p"), (6, vec!["plan".to_owned()]));
    assert!(!offers.defers_to_agent("mode"));
    assert_eq!(
        offers.set_config("s", "mode", "plan"),
        Ok(json!({"sessionId": "s", "configId": "mode", "value": "plan"}))
    );
    // Modes the agent sends as modes come first.
    let mut both = offers.clone();
    both.modes = self::offers().modes;
    assert_eq!(both.current_mode(), Some("default"));
    assert!(both.mode_option().is_none());
}
