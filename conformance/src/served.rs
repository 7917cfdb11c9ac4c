//! What the server's catalog holds for one operation ([`Served`]), as read by
//! [`crate::catalog`] and kept in the run's context (`Ctx::catalog`): the data both share, below
//! both.

use std::collections::BTreeMap;

use serde_json::Value;
use termsprawl_protocol::{Operation, ParamKind};

/// A node id no server has.
pub(crate) const ABSENT: &str = "conformance-absent-node";

/// What the server's catalog holds for one operation.
#[derive(Debug, Clone, Default)]
pub(crate) struct Served {
    /// The arguments it requires, in the order its validator reports them.
    pub(crate) required: Vec<String>,
    /// Whether `required` was read from the server (false: its answers did not show it, and the
    /// table's required arguments stand in).
    pub(crate) read: bool,
    /// The table's members it lacks, each with the probe that shows it.
    pub(crate) absent: BTreeMap<String, String>,
    /// Per enum member it has: the table's values it accepts, in table order.
    pub(crate) values: BTreeMap<String, Vec<String>>,
    /// Per enum member: the values of [`crate::catalog::LATER_VALUES`] it refuses.
    pub(crate) lacks_values: BTreeMap<String, Vec<String>>,
}

impl Served {
    /// Whether the catalog has the member `name`.
    pub(crate) fn has(&self, name: &str) -> bool {
        !self.absent.contains_key(name)
    }

    /// Whether the catalog has the enum member `name` with `value`.
    pub(crate) fn has_value(&self, name: &str, value: &str) -> bool {
        self.has(name)
            && self.values.get(name).is_some_and(|values| values.iter().any(|v| v == value))
    }

    /// The required arguments with passing values, `name` set to `value` (or left out when
    /// `None`, or placed where the server requires it), in the server's order; `name` comes last
    /// when the server does not require it.
    pub(crate) fn members_with(
        &self,
        operation: &Operation,
        name: &str,
        value: Option<&str>,
    ) -> Vec<(String, String)> {
        let mut members = Vec::new();
        for required in &self.required {
            if required == name {
                if let Some(value) = value {
                    members.push((name.to_owned(), value.to_owned()));
                }
            } else {
                members.push((required.clone(), self.filler(operation, required)));
            }
        }
        if !self.required.iter().any(|required| required == name)
            && let Some(value) = value
        {
            members.push((name.to_owned(), value.to_owned()));
        }
        members
    }

    /// A value of `name` that passes step 5: by the table's kind, the first enum value the
    /// server accepts, a string for a member the table does not know.
    pub(crate) fn filler(&self, operation: &Operation, name: &str) -> String {
        match operation.param(name).map(termsprawl_protocol::Param::kind) {
            Some(ParamKind::Number) => "1".to_owned(),
            Some(ParamKind::Boolean) => "true".to_owned(),
            Some(ParamKind::StringArray) => format!("[{}]", string(ABSENT)),
            Some(ParamKind::Enum(values)) => {
                let first = self
                    .values
                    .get(name)
                    .and_then(|accepted| accepted.first())
                    .or_else(|| values.first());
                string(first.map_or("", String::as_str))
            }
            Some(ParamKind::String) | None => string(ABSENT),
        }
    }
}

/// A JSON string literal.
pub(crate) fn string(text: &str) -> String {
    Value::from(text).to_string()
}
