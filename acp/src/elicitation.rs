//! Elicitation (`spec/acp.md` §2.19): an agent's `elicitation/create` asks the person for
//! structured input, either as a form (a flat JSON Schema of strings, numbers, integers,
//! booleans, single and multiple choices) filled in one field per line in the terminal, or as a
//! URL the person opens. The answer is `accept` with the form's content, `decline` or `cancel`.
//!
//! Pure: what a request asks, how each typed line reads as a field's value, and the answers; the
//! chat (`chat/forms.rs`) shows the fields and reads the lines.

#[cfg(test)]
mod tests;

use serde_json::{Map, Value, json};

/// What an `elicitation/create` asks.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Request {
    pub(crate) message: String,
    pub(crate) mode: Mode,
}

/// How the person answers.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Mode {
    /// `form`: the fields in the order the schema lists them.
    Form(Vec<Field>),
    /// `url`: the person opens the URL; `elicitation/complete` names the id when it is done.
    Url { id: String, url: String },
}

/// A field of a form.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Field {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) required: bool,
    pub(crate) kind: Kind,
    pub(crate) default: Option<Value>,
}

/// The type of a field.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind {
    Text {
        min: Option<u64>,
        max: Option<u64>,
    },
    Number {
        integer: bool,
        min: Option<f64>,
        max: Option<f64>,
    },
    Boolean,
    /// One of these values (value, title).
    Choice(Vec<(String, String)>),
    /// Any number of these values (value, title).
    Choices(Vec<(String, String)>),
}

/// The answer to send: `{"action":"decline"}` and so on.
pub(crate) fn action(action: &str) -> Value {
    json!({"action": action})
}

/// The `accept` answer with the form's content.
pub(crate) fn accept(content: Map<String, Value>) -> Value {
    let mut answer = json!({"action": "accept"});
    answer["content"] = Value::Object(content);
    answer
}

/// What `params` ask, or why they cannot be shown (an unknown mode, a broken schema).
pub(crate) fn parse(params: &Value) -> Result<Request, String> {
    let text =
        |value: &Value, name: &str| value.get(name).and_then(Value::as_str).map(str::to_owned);
    let message = text(params, "message").unwrap_or_default();
    let mode = match params.get("mode").and_then(Value::as_str) {
        Some("form") => {
            let schema = params.get("requestedSchema").ok_or("a form has no requestedSchema")?;
            Mode::Form(fields(schema)?)
        }
        Some("url") => match (text(params, "elicitationId"), text(params, "url")) {
            (Some(id), Some(url)) => Mode::Url { id, url },
            _ => return Err("a url elicitation needs elicitationId and url".to_owned()),
        },
        Some(other) => return Err(format!("this client does not know the mode {other:?}")),
        None => return Err("the elicitation has no mode".to_owned()),
    };
    Ok(Request { message, mode })
}

fn fields(schema: &Value) -> Result<Vec<Field>, String> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(Vec::new());
    };
    properties
        .iter()
        .map(|(name, property)| {
            let text = |name: &str| property.get(name).and_then(Value::as_str).map(str::to_owned);
            let unsigned = |name: &str| property.get(name).and_then(Value::as_u64);
            let float = |name: &str| property.get(name).and_then(Value::as_f64);
            let kind = match property.get("type").and_then(Value::as_str) {
                Some("string") => match choices(property) {
                    Some(choices) => Kind::Choice(choices),
                    None => Kind::Text { min: unsigned("minLength"), max: unsigned("maxLength") },
                },
                Some(kind @ ("number" | "integer")) => Kind::Number {
                    integer: kind == "integer",
                    min: float("minimum"),
                    max: float("maximum"),
                },
                Some("boolean") => Kind::Boolean,
                Some("array") => match property.get("items").and_then(choices) {
                    Some(choices) => Kind::Choices(choices),
                    None => return Err(format!("field {name}: a multiple choice without values")),
                },
                other => {
                    return Err(format!("field {name}: this client cannot ask for type {other:?}"));
                }
            };
            Ok(Field {
                name: name.clone(),
                title: text("title"),
                description: text("description"),
                required: required.contains(&name.as_str()),
                kind,
                default: property.get("default").filter(|value| !value.is_null()).cloned(),
            })
        })
        .collect()
}

/// The values of `enum` (with `enumNames` as titles) or of `oneOf`/`anyOf` (`const` and
/// `title`), if any.
fn choices(schema: &Value) -> Option<Vec<(String, String)>> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let names = schema.get("enumNames").and_then(Value::as_array);
        let list = values
            .iter()
            .enumerate()
            .filter_map(|(index, value)| {
                let value = value.as_str()?.to_owned();
                let name = names
                    .and_then(|names| names.get(index))
                    .and_then(Value::as_str)
                    .map_or_else(|| value.clone(), str::to_owned);
                Some((value, name))
            })
            .collect();
        return Some(list);
    }
    let options = schema.get("oneOf").or_else(|| schema.get("anyOf"))?.as_array()?;
    Some(
        options
            .iter()
            .filter_map(|option| {
                let value = option.get("const")?.as_str()?.to_owned();
                let title = option
                    .get("title")
                    .and_then(Value::as_str)
                    .map_or_else(|| value.clone(), str::to_owned);
                Some((value, title))
            })
            .collect(),
    )
}

impl Field {
    /// The line that asks for this field: `TITLE (NAME; KIND; required; default D): `.
    pub(crate) fn prompt(&self) -> String {
        let mut facts = Vec::new();
        let kind = match &self.kind {
            Kind::Text { .. } => "text".to_owned(),
            Kind::Number { integer: true, .. } => "a whole number".to_owned(),
            Kind::Number { .. } => "a number".to_owned(),
            Kind::Boolean => "yes or no".to_owned(),
            Kind::Choice(choices) => format!("one of {}", numbered(choices)),
            Kind::Choices(choices) => {
                format!("any of {}, separated by commas", numbered(choices))
            }
        };
        facts.push(kind);
        facts.push(if self.required { "required" } else { "optional" }.to_owned());
        if let Some(default) = &self.default {
            facts.push(format!("Enter for {}", shown(default)));
        }
        let title = self.title.as_deref().unwrap_or(&self.name);
        format!("  {title} ({}): ", facts.join("; "))
    }

    /// The value a typed line gives this field: `Ok(None)` leaves an optional field out, `Err`
    /// says why the line is not a value (the field is asked again).
    pub(crate) fn read(&self, line: &str) -> Result<Option<Value>, String> {
        let line = line.trim();
        if line.is_empty() {
            return match (&self.default, self.required) {
                (Some(default), _) => Ok(Some(default.clone())),
                (None, false) => Ok(None),
                (None, true) => Err("this field is required".to_owned()),
            };
        }
        match &self.kind {
            Kind::Text { min, max } => {
                let length = line.chars().count() as u64;
                if min.is_some_and(|min| length < min) || max.is_some_and(|max| length > max) {
                    return Err(format!(
                        "the text must have {} to {} characters",
                        min.unwrap_or(0),
                        max.map_or_else(|| "any number of".to_owned(), |max| max.to_string())
                    ));
                }
                Ok(Some(Value::from(line)))
            }
            Kind::Number { integer, min, max } => {
                let value = if *integer {
                    line.parse::<i64>().ok().map(Value::from)
                } else {
                    line.parse::<f64>().ok().filter(|value| value.is_finite()).map(Value::from)
                };
                let Some(value) = value else {
                    let what = if *integer { "a whole number" } else { "a number" };
                    return Err(format!("type {what}"));
                };
                let number = value.as_f64().unwrap_or_default();
                if min.is_some_and(|min| number < min) || max.is_some_and(|max| number > max) {
                    return Err(format!(
                        "the number must lie between {} and {}",
                        min.map_or_else(|| "-∞".to_owned(), |min| min.to_string()),
                        max.map_or_else(|| "∞".to_owned(), |max| max.to_string())
                    ));
                }
                Ok(Some(value))
            }
            Kind::Boolean => match line.to_ascii_lowercase().as_str() {
                "y" | "yes" | "true" | "on" => Ok(Some(Value::Bool(true))),
                "n" | "no" | "false" | "off" => Ok(Some(Value::Bool(false))),
                _ => Err("answer yes or no".to_owned()),
            },
            Kind::Choice(choices) => pick(choices, line).map(|value| Some(Value::from(value))),
            Kind::Choices(choices) => {
                let picked: Result<Vec<Value>, String> = line
                    .split(',')
                    .map(str::trim)
                    .filter(|word| !word.is_empty())
                    .map(|word| pick(choices, word).map(Value::from))
                    .collect();
                picked.map(|values| Some(Value::Array(values)))
            }
        }
    }
}

/// A choice by its number or its value.
fn pick(choices: &[(String, String)], word: &str) -> Result<String, String> {
    if let Ok(number) = word.parse::<usize>()
        && let Some((value, _)) = number.checked_sub(1).and_then(|index| choices.get(index))
    {
        return Ok(value.clone());
    }
    match choices.iter().find(|(value, _)| value == word) {
        Some((value, _)) => Ok(value.clone()),
        None => Err(format!("choose a number from 1 to {} or a value", choices.len())),
    }
}

/// `1. a (A), 2. b`.
fn numbered(choices: &[(String, String)]) -> String {
    choices
        .iter()
        .enumerate()
        .map(|(index, (value, title))| {
            if title == value {
                format!("{}. {value}", index + 1)
            } else {
                format!("{}. {value} ({title})", index + 1)
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A default as the person would type it.
fn shown(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Bool(true) => "yes".to_owned(),
        Value::Bool(false) => "no".to_owned(),
        Value::Array(items) => items.iter().map(shown).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}
