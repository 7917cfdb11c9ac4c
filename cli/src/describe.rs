//! Operations described as commands: the arguments of each operation read from its JSON Schema,
//! the one description that both the parser (module `flags`) and the usage renderer
//! (module `usage`) read, so that they cannot drift (`spec/shell-conventions.md` §4).
//!
//! The schema is read generically and leniently, as the Go `agenttool` `cli` package reads it:
//! only the keywords the parser needs, and anything of an unexpected shape simply has no flag and
//! arrives in the JSON argument. Today's operation table uses only strings, string enums, numbers
//! and arrays of strings, but every shape of §4 is supported so that the parser is not tied to it.

use std::collections::HashSet;

use serde_json::{Map, Value};
use termsprawl_protocol::{Annotations, Operation};

/// One operation as a command.
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    name: String,
    description: String,
    annotations: Annotations,
    params: Vec<Param>,
    schema: Value,
}

/// One argument: a top-level property of the schema, or a field of an object that is one.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    name: String,
    description: String,
    required: bool,
    enum_values: Vec<Value>,
    shape: Shape,
    flag: Option<String>,
}

/// The shape of an argument's value, as far as the command line cares.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// A string, number, integer or boolean (a nullable union reduced to its type).
    Scalar(Scalar),
    /// An array; `items` is the type of its elements when the schema names exactly one.
    Array {
        /// The element type.
        items: Option<JsonType>,
    },
    /// An object that declares properties (`fields`, in schema order), or one that declares
    /// neither properties nor typed `additionalProperties` (no fields).
    Object {
        /// The declared properties.
        fields: Vec<Param>,
    },
    /// An object without properties whose `additionalProperties` names a type: a map.
    Map {
        /// The type of the map's values.
        values: JsonType,
    },
    /// No type, or a union of two or more real types.
    Any,
}

/// A type a flag value can be converted to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scalar {
    /// `"type": "string"`, with or without `enum`.
    String,
    /// `"type": "number"`.
    Number,
    /// `"type": "integer"`.
    Integer,
    /// `"type": "boolean"`.
    Boolean,
}

/// A JSON Schema type name other than `null`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonType {
    /// A scalar type.
    Scalar(Scalar),
    /// `object`.
    Object,
    /// `array`.
    Array,
}

impl Command {
    /// Describes an operation of the table.
    pub fn from_operation(operation: &Operation) -> Command {
        Command::describe(
            operation.name(),
            operation.description(),
            operation.annotations(),
            operation.input_schema(),
        )
    }

    /// Describes a command from its parts; `schema` is the operation's `inputSchema`.
    pub fn describe(
        name: &str,
        description: &str,
        annotations: Annotations,
        schema: &Value,
    ) -> Command {
        let mut params = match schema.as_object() {
            Some(schema) => read_params(schema),
            None => Vec::new(),
        };
        assign_flags(&mut params);
        Command {
            name: name.to_owned(),
            description: description.to_owned(),
            annotations,
            params,
            schema: schema.clone(),
        }
    }

    /// The command word, the operation's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The operation's description.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The operation's annotations.
    pub fn annotations(&self) -> Annotations {
        self.annotations
    }

    /// The top-level arguments, in schema order.
    pub fn params(&self) -> &[Param] {
        &self.params
    }

    /// The `inputSchema` as the table serves it.
    pub fn schema(&self) -> &Value {
        &self.schema
    }
}

impl Param {
    /// The property name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The property's `description`, empty when it has none.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// Whether the object holding the property requires it.
    pub fn required(&self) -> bool {
        self.required
    }

    /// The `enum` values, empty when there is no `enum`.
    pub fn enum_values(&self) -> &[Value] {
        &self.enum_values
    }

    /// The value's shape.
    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// The flag name without dashes (`nodeId`, `parent.field`), or `None` when the argument can
    /// only be given in the JSON argument (or, for an object, through its fields' flags).
    pub fn flag(&self) -> Option<&str> {
        self.flag.as_deref()
    }

    /// The declared fields of an object argument; empty for anything else.
    pub fn fields(&self) -> &[Param] {
        match &self.shape {
            Shape::Object { fields } => fields,
            _ => &[],
        }
    }

    /// Whether the flag is given once per element or entry (an array or a map).
    pub fn repeated(&self) -> bool {
        self.flag.is_some() && matches!(self.shape, Shape::Array { .. } | Shape::Map { .. })
    }

    /// Whether this argument or one of its fields, at any depth, has a flag.
    pub(crate) fn has_any_flag(&self) -> bool {
        self.flag.is_some() || self.fields().iter().any(Param::has_any_flag)
    }

    /// The kind of flag this shape can have, ignoring the name.
    pub(crate) fn flag_kind(&self) -> Option<FlagKind> {
        match self.shape {
            Shape::Scalar(scalar) => Some(FlagKind::Scalar(scalar)),
            Shape::Array { items: Some(JsonType::Scalar(scalar)) } => Some(FlagKind::Array(scalar)),
            Shape::Map { values: JsonType::Scalar(scalar) } => Some(FlagKind::Map(scalar)),
            _ => None,
        }
    }

    /// The type as the usage names it: `string`, `array of string`, `map of integer`, `object`,
    /// `array`, `any JSON value`.
    pub fn type_text(&self) -> String {
        match &self.shape {
            Shape::Scalar(scalar) => scalar.as_str().to_owned(),
            Shape::Array { items: Some(items) } => format!("array of {}", items.as_str()),
            Shape::Array { items: None } => "array".to_owned(),
            Shape::Object { .. } => "object".to_owned(),
            Shape::Map { values } => format!("map of {}", values.as_str()),
            Shape::Any => "any JSON value".to_owned(),
        }
    }
}

/// What a flag holds and how often it may be given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FlagKind {
    /// Given once.
    Scalar(Scalar),
    /// Given once per element.
    Array(Scalar),
    /// Given once per entry, as `key=value`.
    Map(Scalar),
}

impl FlagKind {
    /// Whether the flag is written alone (`--x`, `--x=false`) rather than with a separate value.
    pub(crate) fn is_boolean(self) -> bool {
        matches!(self, FlagKind::Scalar(Scalar::Boolean) | FlagKind::Array(Scalar::Boolean))
    }
}

impl Scalar {
    /// The JSON Schema type name.
    pub fn as_str(self) -> &'static str {
        match self {
            Scalar::String => "string",
            Scalar::Number => "number",
            Scalar::Integer => "integer",
            Scalar::Boolean => "boolean",
        }
    }
}

impl JsonType {
    /// The JSON Schema type name.
    pub fn as_str(self) -> &'static str {
        match self {
            JsonType::Scalar(scalar) => scalar.as_str(),
            JsonType::Object => "object",
            JsonType::Array => "array",
        }
    }

    fn from_name(name: &str) -> Option<JsonType> {
        match name {
            "string" => Some(JsonType::Scalar(Scalar::String)),
            "number" => Some(JsonType::Scalar(Scalar::Number)),
            "integer" => Some(JsonType::Scalar(Scalar::Integer)),
            "boolean" => Some(JsonType::Scalar(Scalar::Boolean)),
            "object" => Some(JsonType::Object),
            "array" => Some(JsonType::Array),
            _ => None,
        }
    }
}

/// The properties of an object schema, in order, with `required` applied.
fn read_params(object: &Map<String, Value>) -> Vec<Param> {
    let Some(Value::Object(properties)) = object.get("properties") else { return Vec::new() };
    let required: Vec<&str> = match object.get("required") {
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    properties
        .iter()
        .map(|(name, schema)| read_param(name, schema, required.contains(&name.as_str())))
        .collect()
}

fn read_param(name: &str, schema: &Value, required: bool) -> Param {
    let Some(outer) = schema.as_object() else {
        return Param {
            name: name.to_owned(),
            description: String::new(),
            required,
            enum_values: Vec::new(),
            shape: Shape::Any,
            flag: None,
        };
    };
    let inner = without_null_alternative(outer);
    let description = [outer, inner]
        .iter()
        .find_map(|schema| schema.get("description").and_then(Value::as_str))
        .unwrap_or_default();
    let enum_values = [outer, inner]
        .iter()
        .find_map(|schema| schema.get("enum").and_then(Value::as_array))
        .cloned()
        .unwrap_or_default();
    Param {
        name: name.to_owned(),
        description: description.to_owned(),
        required,
        enum_values,
        shape: read_shape(inner),
        flag: None,
    }
}

fn read_shape(schema: &Map<String, Value>) -> Shape {
    match json_type(schema) {
        Some(JsonType::Scalar(scalar)) => Shape::Scalar(scalar),
        Some(JsonType::Array) => {
            let items = schema
                .get("items")
                .and_then(Value::as_object)
                .map(without_null_alternative)
                .and_then(json_type);
            Shape::Array { items }
        }
        Some(JsonType::Object) => {
            let has_properties = matches!(
                schema.get("properties"),
                Some(Value::Object(properties)) if !properties.is_empty()
            );
            if has_properties {
                return Shape::Object { fields: read_params(schema) };
            }
            let values = schema
                .get("additionalProperties")
                .and_then(Value::as_object)
                .map(without_null_alternative)
                .and_then(json_type);
            match values {
                Some(values) => Shape::Map { values },
                None => Shape::Object { fields: Vec::new() },
            }
        }
        None => Shape::Any,
    }
}

/// The one type a schema names besides `null`; `None` for no type or a union of real types.
fn json_type(schema: &Map<String, Value>) -> Option<JsonType> {
    match schema.get("type")? {
        Value::String(name) => JsonType::from_name(name),
        Value::Array(names) => {
            let mut real = names.iter().filter(|name| *name != "null");
            let only = real.next()?.as_str()?;
            if real.next().is_some() {
                return None;
            }
            JsonType::from_name(only)
        }
        _ => None,
    }
}

/// For `anyOf`/`oneOf` of exactly one schema and `{"type":"null"}`, that schema; otherwise the
/// schema itself.
fn without_null_alternative(schema: &Map<String, Value>) -> &Map<String, Value> {
    if schema.contains_key("type") {
        return schema;
    }
    for keyword in ["anyOf", "oneOf"] {
        let Some(Value::Array(alternatives)) = schema.get(keyword) else { continue };
        let is_null = |alternative: &Value| alternative.get("type") == Some(&Value::from("null"));
        let real: Vec<&Value> = alternatives.iter().filter(|a| !is_null(a)).collect();
        if alternatives.len() == 2
            && let [real] = real.as_slice()
            && let Some(real) = real.as_object()
        {
            return real;
        }
    }
    schema
}

/// Whether a flag can carry `name`: not empty, no leading `-`, no `=`.
fn flaggable_name(name: &str) -> bool {
    !name.is_empty() && !name.starts_with('-') && !name.contains('=')
}

/// Gives every argument that can have a flag its flag name (`spec/shell-conventions.md` §4).
fn assign_flags(params: &mut [Param]) {
    for param in params.iter_mut() {
        if flaggable_name(&param.name) && param.flag_kind().is_some() {
            param.flag = Some(param.name.clone());
        }
    }
    // A top-level property spelled like a field path keeps its flag; the field loses it.
    let top_level: HashSet<String> = params.iter().filter_map(|p| p.flag.clone()).collect();
    for param in params.iter_mut() {
        if flaggable_name(&param.name) && !param.name.contains('.') {
            let prefix = param.name.clone();
            assign_field_flags(&prefix, &mut param.shape, &top_level);
        }
    }
}

fn assign_field_flags(prefix: &str, shape: &mut Shape, taken: &HashSet<String>) {
    let Shape::Object { fields } = shape else { return };
    for field in fields {
        if !flaggable_name(&field.name) || field.name.contains('.') {
            continue;
        }
        let path = format!("{prefix}.{}", field.name);
        if field.flag_kind().is_some() && !taken.contains(&path) {
            field.flag = Some(path.clone());
        }
        assign_field_flags(&path, &mut field.shape, taken);
    }
}

#[cfg(test)]
mod tests;
