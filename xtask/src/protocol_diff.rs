//! `cargo xtask protocol-diff`: which changes of the operation table break callers, and whether
//! `PROTOCOL_VERSION` was bumped to match.
//!
//! [`classify`] is a pure function over two catalogs (the MCP `tools/list` arrays). Its rules, in
//! one place ([`ChangeKind::class`]): a change is **breaking** when a request that the old catalog
//! allowed can fail under the new one, or a client built against the old catalog can no longer
//! find what it called; everything else is **compatible**.
//!
//! | change | class |
//! | --- | --- |
//! | operation removed (a rename is a removal plus an addition) | breaking |
//! | operation added | compatible |
//! | operations reordered | compatible |
//! | operation description changed | compatible |
//! | annotation (hint) changed, added or removed: hints are advice to hosts, not contract | compatible |
//! | property removed | breaking |
//! | optional property added | compatible |
//! | required property added, or existing property newly required | breaking |
//! | property no longer required | compatible |
//! | type changed, including the `items` type of an array | breaking |
//! | enum value removed, or an enum restriction added to a plain string | breaking |
//! | enum value added, enum values reordered, or the enum restriction dropped | compatible |
//! | property description changed | compatible |
//! | properties reordered | compatible |
//! | `additionalProperties` from allowed (absent, `true` or a schema) to `false` | breaking |
//! | `additionalProperties` from `false` to allowed | compatible |
//! | any other difference (an unknown keyword, a changed `items` keyword, a catalog member other than `name`, `description`, `inputSchema`, `annotations`) | breaking, as "unclassified", so that a person looks at it |
//!
//! A breaking change must come with a major bump of `PROTOCOL_VERSION` (semver; below 1.0.0 a
//! minor bump counts as major), see [`is_major_bump`].

mod git;

use std::fmt;

use anyhow::{Context as _, bail};
use serde_json::{Map, Value};

pub use git::{CATALOG_PATH, LIB_RS_PATH, baseline_at_ref, version_from_lib_rs};

/// Whether a change can break existing callers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    /// A request valid before may fail now, or a called operation is gone.
    Breaking,
    /// Every request valid before is still valid, with the same meaning.
    Compatible,
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Class::Breaking => "breaking",
            Class::Compatible => "compatible",
        })
    }
}

/// One difference between two catalogs.
///
/// The fields are the same across variants: `operation` and `property` name what changed, `old`
/// and `new` are the values before and after, `value` is an enum value, `hint` an annotation
/// member and `location` a path into the catalog entry.
#[derive(Debug, Clone, PartialEq, Eq)]
#[expect(missing_docs, reason = "the fields are described once, in the enum's documentation")]
pub enum ChangeKind {
    /// The operation is gone; `renamed_to` names an added operation with the same input schema.
    OperationRemoved { operation: String, renamed_to: Option<String> },
    /// A new operation.
    OperationAdded { operation: String },
    /// The operations common to both catalogs appear in another order.
    OperationsReordered,
    /// The operation's `description` changed.
    OperationDescriptionChanged { operation: String },
    /// One member of `annotations` changed, appeared or disappeared.
    AnnotationChanged { operation: String, hint: String, old: Option<Value>, new: Option<Value> },
    /// A property is gone.
    PropertyRemoved { operation: String, property: String },
    /// A new property, required or optional.
    PropertyAdded { operation: String, property: String, required: bool },
    /// An existing property became required.
    PropertyNowRequired { operation: String, property: String },
    /// A required property became optional.
    PropertyNoLongerRequired { operation: String, property: String },
    /// The property's type changed; the types are rendered like `array of string`.
    TypeChanged { operation: String, property: String, old: String, new: String },
    /// An enum value is gone.
    EnumValueRemoved { operation: String, property: String, value: String },
    /// A new enum value.
    EnumValueAdded { operation: String, property: String, value: String },
    /// The same enum values, in another order.
    EnumReordered { operation: String, property: String },
    /// A plain property is now restricted to an enum.
    EnumRestrictionAdded { operation: String, property: String },
    /// An enum property now accepts any value of its type.
    EnumRestrictionRemoved { operation: String, property: String },
    /// The property's `description` changed.
    PropertyDescriptionChanged { operation: String, property: String },
    /// The properties common to both versions appear in another order.
    PropertiesReordered { operation: String },
    /// `additionalProperties` went from allowed to `false`.
    AdditionalPropertiesForbidden { operation: String },
    /// `additionalProperties` went from `false` to allowed.
    AdditionalPropertiesAllowed { operation: String },
    /// A difference no rule covers, at `location` (a path like `inputSchema.properties.x.format`).
    Unclassified { operation: String, location: String },
}

/// A classified change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// What changed.
    pub kind: ChangeKind,
    /// Its class, from [`ChangeKind::class`].
    pub class: Class,
}

impl ChangeKind {
    /// The classification rules (see the module documentation).
    pub fn class(&self) -> Class {
        match self {
            ChangeKind::OperationRemoved { .. }
            | ChangeKind::PropertyRemoved { .. }
            | ChangeKind::PropertyAdded { required: true, .. }
            | ChangeKind::PropertyNowRequired { .. }
            | ChangeKind::TypeChanged { .. }
            | ChangeKind::EnumValueRemoved { .. }
            | ChangeKind::EnumRestrictionAdded { .. }
            | ChangeKind::AdditionalPropertiesForbidden { .. }
            | ChangeKind::Unclassified { .. } => Class::Breaking,
            ChangeKind::OperationAdded { .. }
            | ChangeKind::OperationsReordered
            | ChangeKind::OperationDescriptionChanged { .. }
            | ChangeKind::AnnotationChanged { .. }
            | ChangeKind::PropertyAdded { required: false, .. }
            | ChangeKind::PropertyNoLongerRequired { .. }
            | ChangeKind::EnumValueAdded { .. }
            | ChangeKind::EnumReordered { .. }
            | ChangeKind::EnumRestrictionRemoved { .. }
            | ChangeKind::PropertyDescriptionChanged { .. }
            | ChangeKind::PropertiesReordered { .. }
            | ChangeKind::AdditionalPropertiesAllowed { .. } => Class::Compatible,
        }
    }
}

impl fmt::Display for ChangeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChangeKind::OperationRemoved { operation, renamed_to: None } => {
                write!(f, "operation `{operation}` removed")
            }
            ChangeKind::OperationRemoved { operation, renamed_to: Some(new_name) } => {
                write!(f, "operation `{operation}` removed (renamed to `{new_name}`?)")
            }
            ChangeKind::OperationAdded { operation } => write!(f, "operation `{operation}` added"),
            ChangeKind::OperationsReordered => f.write_str("operations reordered"),
            ChangeKind::OperationDescriptionChanged { operation } => {
                write!(f, "`{operation}`: description changed")
            }
            ChangeKind::AnnotationChanged { operation, hint, old, new } => {
                let show = |value: &Option<Value>| {
                    value.as_ref().map_or_else(|| "absent".to_owned(), Value::to_string)
                };
                write!(f, "`{operation}`: annotation `{hint}` {} -> {}", show(old), show(new))
            }
            ChangeKind::PropertyRemoved { operation, property } => {
                write!(f, "`{operation}`: property `{property}` removed")
            }
            ChangeKind::PropertyAdded { operation, property, required } => {
                let which = if *required { "required" } else { "optional" };
                write!(f, "`{operation}`: {which} property `{property}` added")
            }
            ChangeKind::PropertyNowRequired { operation, property } => {
                write!(f, "`{operation}`: property `{property}` is now required")
            }
            ChangeKind::PropertyNoLongerRequired { operation, property } => {
                write!(f, "`{operation}`: property `{property}` is no longer required")
            }
            ChangeKind::TypeChanged { operation, property, old, new } => {
                write!(f, "`{operation}`: property `{property}` type {old} -> {new}")
            }
            ChangeKind::EnumValueRemoved { operation, property, value } => {
                write!(f, "`{operation}`: property `{property}` enum value `{value}` removed")
            }
            ChangeKind::EnumValueAdded { operation, property, value } => {
                write!(f, "`{operation}`: property `{property}` enum value `{value}` added")
            }
            ChangeKind::EnumReordered { operation, property } => {
                write!(f, "`{operation}`: property `{property}` enum values reordered")
            }
            ChangeKind::EnumRestrictionAdded { operation, property } => {
                write!(f, "`{operation}`: property `{property}` is now restricted to an enum")
            }
            ChangeKind::EnumRestrictionRemoved { operation, property } => {
                write!(f, "`{operation}`: property `{property}` is no longer restricted to an enum")
            }
            ChangeKind::PropertyDescriptionChanged { operation, property } => {
                write!(f, "`{operation}`: property `{property}` description changed")
            }
            ChangeKind::PropertiesReordered { operation } => {
                write!(f, "`{operation}`: properties reordered")
            }
            ChangeKind::AdditionalPropertiesForbidden { operation } => {
                write!(f, "`{operation}`: additionalProperties changed from allowed to forbidden")
            }
            ChangeKind::AdditionalPropertiesAllowed { operation } => {
                write!(f, "`{operation}`: additionalProperties changed from forbidden to allowed")
            }
            ChangeKind::Unclassified { operation, location } => {
                write!(f, "`{operation}`: unclassified change at `{location}`")
            }
        }
    }
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.class, self.kind)
    }
}

/// Compares two catalogs (MCP `tools/list` arrays) and classifies every difference.
///
/// Changes come in the old catalog's order, then added operations in the new catalog's order,
/// then a reordering, if any. Fails only when a catalog is malformed: not an array, an entry
/// without a string `name`, a duplicate name, or an `inputSchema` that is not an object.
pub fn classify(old: &Value, new: &Value) -> anyhow::Result<Vec<Change>> {
    let old_entries = entries(old).context("old catalog")?;
    let new_entries = entries(new).context("new catalog")?;
    let mut kinds = Vec::new();
    let added: Vec<&(String, &Map<String, Value>)> = new_entries
        .iter()
        .filter(|(name, _)| !old_entries.iter().any(|(old_name, _)| old_name == name))
        .collect();
    for (name, old_entry) in &old_entries {
        if let Some((_, new_entry)) = new_entries.iter().find(|(new_name, _)| new_name == name) {
            compare_entries(name, old_entry, new_entry, &mut kinds);
        } else {
            let renamed_to = added
                .iter()
                .find(|(_, new_entry)| new_entry.get("inputSchema") == old_entry.get("inputSchema"))
                .map(|(new_name, _)| new_name.clone());
            kinds.push(ChangeKind::OperationRemoved { operation: name.clone(), renamed_to });
        }
    }
    for (name, _) in &added {
        kinds.push(ChangeKind::OperationAdded { operation: name.clone() });
    }
    if reordered(old_entries.iter().map(|e| &e.0), new_entries.iter().map(|e| &e.0)) {
        kinds.push(ChangeKind::OperationsReordered);
    }
    Ok(kinds.into_iter().map(|kind| Change { class: kind.class(), kind }).collect())
}

/// A semantic version `major.minor.patch`; a pre-release or build suffix is ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version {
    /// The major version.
    pub major: u64,
    /// The minor version.
    pub minor: u64,
    /// The patch version.
    pub patch: u64,
}

impl Version {
    /// Parses `major.minor.patch`, ignoring a `-pre-release` or `+build` suffix.
    pub fn parse(text: &str) -> anyhow::Result<Version> {
        let core = text.split(['-', '+']).next().unwrap_or_default();
        let parts: Vec<&str> = core.split('.').collect();
        let [major, minor, patch] = parts[..] else {
            bail!("version {text:?} is not major.minor.patch")
        };
        let number = |part: &str| {
            part.parse::<u64>()
                .with_context(|| format!("version {text:?} is not major.minor.patch"))
        };
        Ok(Version { major: number(major)?, minor: number(minor)?, patch: number(patch)? })
    }

    /// The smallest version that is a major bump of this one (`2.0.0` after `1.4.2`, `0.5.0`
    /// after `0.4.1`).
    #[must_use]
    pub fn next_major(self) -> Version {
        if self.major == 0 {
            Version { major: 0, minor: self.minor + 1, patch: 0 }
        } else {
            Version { major: self.major + 1, minor: 0, patch: 0 }
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// Whether `new` is a major bump of `old` in semver, where below 1.0.0 the minor version plays
/// the part of the major one.
pub fn is_major_bump(old: Version, new: Version) -> bool {
    new >= old.next_major()
}

/// The catalog and protocol version that a comparison starts from.
#[derive(Debug, Clone, PartialEq)]
pub struct Baseline {
    /// The MCP `tools/list` array.
    pub catalog: Value,
    /// `PROTOCOL_VERSION` as written.
    pub version: String,
}

/// The outcome of a comparison: the classified changes and the two versions.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The classified changes.
    pub changes: Vec<Change>,
    /// The baseline's version.
    pub old_version: Version,
    /// The current version.
    pub new_version: Version,
}

impl Report {
    /// Compares `baseline` with the current catalog and version.
    pub fn new(baseline: &Baseline, catalog: &Value, version: &str) -> anyhow::Result<Report> {
        Ok(Report {
            changes: classify(&baseline.catalog, catalog)?,
            old_version: Version::parse(&baseline.version).context("baseline PROTOCOL_VERSION")?,
            new_version: Version::parse(version).context("current PROTOCOL_VERSION")?,
        })
    }

    /// The number of breaking changes.
    pub fn breaking(&self) -> usize {
        self.changes.iter().filter(|change| change.class == Class::Breaking).count()
    }

    /// False when a breaking change is not matched by a major version bump.
    pub fn passes(&self) -> bool {
        self.breaking() == 0 || is_major_bump(self.old_version, self.new_version)
    }

    /// One line per change, `<class>: <change>`: the data, for stdout.
    pub fn changes_text(&self) -> String {
        let mut out = String::new();
        for change in &self.changes {
            out.push_str(&change.to_string());
            out.push('\n');
        }
        out
    }

    /// The verdict, for stderr.
    pub fn summary_text(&self) -> String {
        let breaking = self.breaking();
        let compatible = self.changes.len() - breaking;
        let (old, new) = (self.old_version, self.new_version);
        let mut out = format!(
            "protocol version {old} -> {new}: {breaking} breaking, {compatible} compatible change(s)\n"
        );
        if !self.passes() {
            out.push_str(&format!(
                "error: breaking changes need a major bump of PROTOCOL_VERSION (to {} or later)\n\nhint: bump PROTOCOL_VERSION in protocol/src/lib.rs, note the change in docs/protocol-changelog.md and run `cargo xtask codegen`\n",
                old.next_major()
            ));
        } else if !self.changes.is_empty() && new <= old {
            out.push_str(&format!(
                "note: PROTOCOL_VERSION was not bumped; compatible changes usually take a minor bump (to {}.{}.0)\n",
                old.major,
                old.minor + 1
            ));
        }
        out
    }
}

/// The entries of a catalog by name, in order.
fn entries(catalog: &Value) -> anyhow::Result<Vec<(String, &Map<String, Value>)>> {
    let Value::Array(items) = catalog else { bail!("the catalog is not a JSON array") };
    let mut entries: Vec<(String, &Map<String, Value>)> = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let Value::Object(entry) = item else { bail!("catalog entry {index} is not an object") };
        let Some(Value::String(name)) = entry.get("name") else {
            bail!("catalog entry {index} has no string `name`")
        };
        if entries.iter().any(|(seen, _)| seen == name) {
            bail!("operation `{name}` appears twice");
        }
        match entry.get("inputSchema") {
            None | Some(Value::Object(_)) => {}
            Some(_) => bail!("the inputSchema of `{name}` is not an object"),
        }
        entries.push((name.clone(), entry));
    }
    Ok(entries)
}

const ENTRY_KEYS: &[&str] = &["name", "description", "inputSchema", "annotations"];
const SCHEMA_KEYS: &[&str] = &["type", "properties", "required", "additionalProperties"];
const PROPERTY_KEYS: &[&str] = &["type", "items", "enum", "description"];

fn compare_entries(
    operation: &str,
    old: &Map<String, Value>,
    new: &Map<String, Value>,
    kinds: &mut Vec<ChangeKind>,
) {
    let op = || operation.to_owned();
    if old.get("description") != new.get("description") {
        kinds.push(ChangeKind::OperationDescriptionChanged { operation: op() });
    }
    compare_annotations(operation, old.get("annotations"), new.get("annotations"), kinds);
    let empty = Map::new();
    let old_schema = old.get("inputSchema").and_then(Value::as_object).unwrap_or(&empty);
    let new_schema = new.get("inputSchema").and_then(Value::as_object).unwrap_or(&empty);
    compare_schemas(operation, old_schema, new_schema, kinds);
    for key in other_keys(old, new, ENTRY_KEYS) {
        kinds.push(ChangeKind::Unclassified { operation: op(), location: key });
    }
}

fn compare_annotations(
    operation: &str,
    old: Option<&Value>,
    new: Option<&Value>,
    kinds: &mut Vec<ChangeKind>,
) {
    let is_map = |value: Option<&Value>| matches!(value, None | Some(Value::Object(_)));
    if !is_map(old) || !is_map(new) {
        if old != new {
            kinds.push(ChangeKind::Unclassified {
                operation: operation.to_owned(),
                location: "annotations".to_owned(),
            });
        }
        return;
    }
    let old_map = old.and_then(Value::as_object).cloned().unwrap_or_default();
    let new_map = new.and_then(Value::as_object).cloned().unwrap_or_default();
    for hint in union_keys(&old_map, &new_map) {
        let (old_value, new_value) = (old_map.get(&hint), new_map.get(&hint));
        if old_value != new_value {
            kinds.push(ChangeKind::AnnotationChanged {
                operation: operation.to_owned(),
                hint,
                old: old_value.cloned(),
                new: new_value.cloned(),
            });
        }
    }
}

fn compare_schemas(
    operation: &str,
    old: &Map<String, Value>,
    new: &Map<String, Value>,
    kinds: &mut Vec<ChangeKind>,
) {
    let op = || operation.to_owned();
    if old.get("type") != new.get("type") {
        kinds.push(ChangeKind::Unclassified {
            operation: op(),
            location: "inputSchema.type".to_owned(),
        });
    }
    // Malformed `properties` or `required` are read as empty; a change of them is left to people.
    let malformed = |schema: &Map<String, Value>| {
        !matches!(schema.get("properties"), None | Some(Value::Object(_)))
            || !matches!(schema.get("required"), None | Some(Value::Array(_)))
    };
    if (malformed(old) || malformed(new)) && old != new {
        kinds
            .push(ChangeKind::Unclassified { operation: op(), location: "inputSchema".to_owned() });
    }
    let empty = Map::new();
    let old_properties = old.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    let new_properties = new.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    let old_required = required_names(old);
    let new_required = required_names(new);
    for (property, old_property) in old_properties {
        let prop = || property.clone();
        let Some(new_property) = new_properties.get(property) else {
            kinds.push(ChangeKind::PropertyRemoved { operation: op(), property: prop() });
            continue;
        };
        match (old_required.contains(&property.as_str()), new_required.contains(&property.as_str()))
        {
            (false, true) => {
                kinds.push(ChangeKind::PropertyNowRequired { operation: op(), property: prop() });
            }
            (true, false) => kinds
                .push(ChangeKind::PropertyNoLongerRequired { operation: op(), property: prop() }),
            _ => {}
        }
        compare_properties(operation, property, old_property, new_property, kinds);
    }
    for property in new_properties.keys().filter(|name| !old_properties.contains_key(*name)) {
        let required = new_required.contains(&property.as_str());
        kinds.push(ChangeKind::PropertyAdded {
            operation: op(),
            property: property.clone(),
            required,
        });
    }
    // A required name without a property: any call now fails for want of it.
    for name in new_required.iter().filter(|name| !new_properties.contains_key(**name)) {
        if !old_required.contains(name) {
            kinds.push(ChangeKind::PropertyNowRequired {
                operation: op(),
                property: (*name).to_owned(),
            });
        }
    }
    if reordered(old_properties.keys(), new_properties.keys()) {
        kinds.push(ChangeKind::PropertiesReordered { operation: op() });
    }
    let forbids = |schema: &Map<String, Value>| {
        schema.get("additionalProperties") == Some(&Value::Bool(false))
    };
    match (forbids(old), forbids(new)) {
        (false, true) => kinds.push(ChangeKind::AdditionalPropertiesForbidden { operation: op() }),
        (true, false) => kinds.push(ChangeKind::AdditionalPropertiesAllowed { operation: op() }),
        (false, false) if old.get("additionalProperties") != new.get("additionalProperties") => {
            kinds.push(ChangeKind::Unclassified {
                operation: op(),
                location: "inputSchema.additionalProperties".to_owned(),
            });
        }
        _ => {}
    }
    for key in other_keys(old, new, SCHEMA_KEYS) {
        kinds.push(ChangeKind::Unclassified {
            operation: op(),
            location: format!("inputSchema.{key}"),
        });
    }
}

fn compare_properties(
    operation: &str,
    property: &str,
    old: &Value,
    new: &Value,
    kinds: &mut Vec<ChangeKind>,
) {
    let op = || operation.to_owned();
    let prop = || property.to_owned();
    let location = |key: &str| match key {
        "" => format!("inputSchema.properties.{property}"),
        key => format!("inputSchema.properties.{property}.{key}"),
    };
    let (Value::Object(old), Value::Object(new)) = (old, new) else {
        if old != new {
            kinds.push(ChangeKind::Unclassified { operation: op(), location: location("") });
        }
        return;
    };
    let old_type = type_name(old);
    let new_type = type_name(new);
    if old_type == new_type {
        if old.get("items") != new.get("items") {
            // Same item type, other item keywords.
            kinds.push(ChangeKind::Unclassified { operation: op(), location: location("items") });
        }
        compare_enums(operation, property, old.get("enum"), new.get("enum"), kinds);
    } else {
        // The type decides everything else; enum details of an unrelated type are noise.
        kinds.push(ChangeKind::TypeChanged {
            operation: op(),
            property: prop(),
            old: old_type,
            new: new_type,
        });
    }
    if old.get("description") != new.get("description") {
        kinds.push(ChangeKind::PropertyDescriptionChanged { operation: op(), property: prop() });
    }
    for key in other_keys(old, new, PROPERTY_KEYS) {
        kinds.push(ChangeKind::Unclassified { operation: op(), location: location(&key) });
    }
}

fn compare_enums(
    operation: &str,
    property: &str,
    old: Option<&Value>,
    new: Option<&Value>,
    kinds: &mut Vec<ChangeKind>,
) {
    let op = || operation.to_owned();
    let prop = || property.to_owned();
    match (old, new) {
        (None, None) => {}
        (None, Some(_)) => {
            kinds.push(ChangeKind::EnumRestrictionAdded { operation: op(), property: prop() });
        }
        (Some(_), None) => {
            kinds.push(ChangeKind::EnumRestrictionRemoved { operation: op(), property: prop() });
        }
        (Some(Value::Array(old_values)), Some(Value::Array(new_values))) => {
            for value in old_values.iter().filter(|value| !new_values.contains(value)) {
                kinds.push(ChangeKind::EnumValueRemoved {
                    operation: op(),
                    property: prop(),
                    value: enum_value(value),
                });
            }
            for value in new_values.iter().filter(|value| !old_values.contains(value)) {
                kinds.push(ChangeKind::EnumValueAdded {
                    operation: op(),
                    property: prop(),
                    value: enum_value(value),
                });
            }
            if reordered(old_values.iter(), new_values.iter()) {
                kinds.push(ChangeKind::EnumReordered { operation: op(), property: prop() });
            }
        }
        (Some(old), Some(new)) => {
            if old != new {
                kinds.push(ChangeKind::Unclassified {
                    operation: op(),
                    location: format!("inputSchema.properties.{property}.enum"),
                });
            }
        }
    }
}

/// The type of a property schema, with the item type of an array: `string`, `array of string`.
fn type_name(schema: &Map<String, Value>) -> String {
    let own = match schema.get("type") {
        Some(Value::String(name)) => name.clone(),
        Some(other) => other.to_string(),
        None => "untyped".to_owned(),
    };
    match schema.get("items") {
        Some(Value::Object(items)) => format!("{own} of {}", type_name(items)),
        Some(other) => format!("{own} of {other}"),
        None => own,
    }
}

fn enum_value(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn required_names(schema: &Map<String, Value>) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// Keys outside `known` whose values differ between the two maps, in order of first appearance.
fn other_keys(old: &Map<String, Value>, new: &Map<String, Value>, known: &[&str]) -> Vec<String> {
    union_keys(old, new)
        .into_iter()
        .filter(|key| !known.contains(&key.as_str()) && old.get(key) != new.get(key))
        .collect()
}

fn union_keys(old: &Map<String, Value>, new: &Map<String, Value>) -> Vec<String> {
    let mut keys: Vec<String> = old.keys().cloned().collect();
    keys.extend(new.keys().filter(|key| !old.contains_key(*key)).cloned());
    keys
}

/// Whether the items present in both sequences appear in a different relative order.
fn reordered<'a, T: PartialEq + 'a>(
    old: impl Iterator<Item = &'a T>,
    new: impl Iterator<Item = &'a T>,
) -> bool {
    let old: Vec<&T> = old.collect();
    let new: Vec<&T> = new.collect();
    let old_common: Vec<&T> = old.iter().copied().filter(|item| new.contains(item)).collect();
    let new_common: Vec<&T> = new.iter().copied().filter(|item| old.contains(item)).collect();
    old_common != new_common
}

#[cfg(test)]
mod tests;
