//! Generates an operation's `inputSchema` from its argument struct and normalises it to the exact
//! shape of the contract (`spec/protocol.md` §4.1).
//!
//! `schemars` decides the property names, order, types and the `required` list from the Rust type;
//! this module only removes what the contract does not have (`$schema`, `title`, `format`, the
//! root description) and puts the members into the contract's order. Anything outside the
//! property shapes of the contract (the four of §4.1 and, since protocol 1.4.0, `boolean`) is a bug in [`crate::args`] and panics when the table is built,
//! which a test does on every run.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// A generator for one argument type, as stored in the operation table.
pub(crate) type SchemaFn = fn() -> Value;

/// Generates and normalises the input schema of `T`.
pub(crate) fn input_schema<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.inline_subschemas = true;
            settings.meta_schema = None;
        })
        .into_generator();
    let root = generator.into_root_schema_for::<T>();
    normalise(&root.to_value(), T::schema_name().as_ref())
}

fn normalise(generated: &Value, type_name: &str) -> Value {
    let Value::Object(root) = generated else {
        panic!("schema of {type_name} is not an object: {generated}")
    };
    for key in root.keys() {
        assert!(
            matches!(
                key.as_str(),
                "type"
                    | "properties"
                    | "required"
                    | "additionalProperties"
                    | "title"
                    | "description"
            ),
            "schema of {type_name} has an unexpected keyword {key:?}: {generated}"
        );
    }
    assert_eq!(root.get("type"), Some(&Value::from("object")), "{type_name} is not an object");
    assert_eq!(
        root.get("additionalProperties"),
        Some(&Value::Bool(false)),
        "{type_name} must forbid unknown members (serde(deny_unknown_fields))"
    );
    let empty = Map::new();
    let properties = match root.get("properties") {
        Some(Value::Object(properties)) => properties,
        None => &empty,
        Some(other) => panic!("properties of {type_name} is not an object: {other}"),
    };
    let mut normalised_properties = Map::new();
    for (name, schema) in properties {
        normalised_properties.insert(name.clone(), normalise_property(type_name, name, schema));
    }
    // `required` lists names in property order.
    let required_names: Vec<&str> = match root.get("required") {
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        None => Vec::new(),
        Some(other) => panic!("required of {type_name} is not an array: {other}"),
    };
    for name in &required_names {
        assert!(properties.contains_key(*name), "{type_name} requires unknown {name:?}");
    }
    let required: Vec<Value> = properties
        .keys()
        .filter(|name| required_names.contains(&name.as_str()))
        .map(|name| Value::from(name.as_str()))
        .collect();

    let mut schema = Map::new();
    schema.insert("type".to_owned(), Value::from("object"));
    schema.insert("properties".to_owned(), Value::Object(normalised_properties));
    schema.insert("required".to_owned(), Value::Array(required));
    schema.insert("additionalProperties".to_owned(), Value::Bool(false));
    Value::Object(schema)
}

/// Rebuilds one property as `type`, then `items` or `enum`, then `description`.
fn normalise_property(type_name: &str, name: &str, generated: &Value) -> Value {
    let Value::Object(property) = generated else {
        panic!("{type_name}.{name}: property schema is not an object: {generated}")
    };
    let property = &simplify(type_name, name, property);
    for key in property.keys() {
        assert!(
            matches!(key.as_str(), "type" | "items" | "enum" | "description" | "format" | "title"),
            "{type_name}.{name}: unexpected keyword {key:?} in {generated}"
        );
    }
    let mut out = Map::new();
    match property.get("type").and_then(Value::as_str) {
        Some("string") => {
            out.insert("type".to_owned(), Value::from("string"));
            if let Some(values) = property.get("enum") {
                let Value::Array(values) = values else {
                    panic!("{type_name}.{name}: enum is not an array")
                };
                assert!(
                    !values.is_empty() && values.iter().all(Value::is_string),
                    "{type_name}.{name}: enum must list strings"
                );
                out.insert("enum".to_owned(), Value::Array(values.clone()));
            }
        }
        Some("number") => {
            assert!(property.get("enum").is_none(), "{type_name}.{name}: numeric enum");
            out.insert("type".to_owned(), Value::from("number"));
        }
        Some("boolean") => {
            assert!(property.get("enum").is_none(), "{type_name}.{name}: boolean enum");
            out.insert("type".to_owned(), Value::from("boolean"));
        }
        Some("array") => {
            let items = property.get("items");
            assert!(
                items.and_then(|items| items.get("type")) == Some(&Value::from("string"))
                    && items.and_then(Value::as_object).is_some_and(|items| items.len() == 1),
                "{type_name}.{name}: only arrays of plain strings are allowed, got {generated}"
            );
            out.insert("type".to_owned(), Value::from("array"));
            let mut items = Map::new();
            items.insert("type".to_owned(), Value::from("string"));
            out.insert("items".to_owned(), Value::Object(items));
        }
        other => {
            panic!("{type_name}.{name}: type {other:?} is not string, number, boolean or array")
        }
    }
    if let Some(Value::String(description)) = property.get("description") {
        out.insert("description".to_owned(), Value::from(description.as_str()));
    }
    Value::Object(out)
}

/// Rewrites the two spellings `schemars` uses for what the contract writes more plainly:
/// an `Option<T>` (`"type": [T, "null"]`, or `anyOf` of T and null) becomes T, and an enum whose
/// variants carry doc comments (`oneOf` of string `const`s) becomes `"type":"string","enum":[…]`.
fn simplify(type_name: &str, name: &str, property: &Map<String, Value>) -> Map<String, Value> {
    let mut property = property.clone();
    if let Some(Value::Array(types)) = property.get("type") {
        let non_null: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
        assert!(non_null.len() == 1, "{type_name}.{name}: union type {types:?}");
        let only = non_null[0].clone();
        property.insert("type".to_owned(), only);
    }
    if let Some(Value::Array(variants)) = property.remove("anyOf") {
        let non_null: Vec<&Value> =
            variants.iter().filter(|v| v.get("type") != Some(&Value::from("null"))).collect();
        assert!(non_null.len() == 1, "{type_name}.{name}: anyOf {variants:?}");
        let Value::Object(inner) = non_null[0] else { panic!("{type_name}.{name}: anyOf item") };
        for (key, value) in simplify(type_name, name, inner) {
            property.entry(key).or_insert(value);
        }
    }
    if let Some(Value::Array(variants)) = property.remove("oneOf") {
        let values: Vec<Value> = variants
            .iter()
            .map(|variant| {
                assert!(
                    variant.get("type") == Some(&Value::from("string")),
                    "{type_name}.{name}: oneOf item {variant}"
                );
                match variant.get("const").or_else(|| variant.get("enum").and_then(|e| e.get(0))) {
                    Some(Value::String(value)) => Value::from(value.as_str()),
                    _ => panic!("{type_name}.{name}: oneOf item without a string const: {variant}"),
                }
            })
            .collect();
        property.insert("type".to_owned(), Value::from("string"));
        property.insert("enum".to_owned(), Value::Array(values));
    }
    if let Some(Value::Array(values)) = property.get("enum") {
        let values: Vec<Value> = values.iter().filter(|v| !v.is_null()).cloned().collect();
        property.insert("enum".to_owned(), Value::Array(values));
    }
    property
}

/// The schema of the answer type `T` (`crate::results`) as data: a root `description` (its doc
/// comment on one line), then `type`, and for an object its `properties` in member order and the
/// `required` list (the members always serialised); for an enum of names, `enum`. A property is
/// its `type` (`[T, "null"]` when it may be null), `items` for an array, or `$ref` naming another
/// type as `Name.json`, then its `description`. Descriptions are the doc comments with their lines
/// joined and intra-doc links written as plain code (`[`X`]` becomes `` `X` ``).
pub(crate) fn result_schema<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .for_serialize()
        .with(|settings| {
            settings.inline_subschemas = false;
            settings.meta_schema = None;
        })
        .into_generator();
    let root = generator.into_root_schema_for::<T>().to_value();
    let name = T::schema_name();
    let Value::Object(root) = root else { panic!("schema of {name} is not an object: {root}") };
    let mut out = Map::new();
    let description = root.get("description").and_then(Value::as_str);
    out.insert(
        "description".to_owned(),
        Value::from(one_line(description.unwrap_or_else(|| panic!("{name} has no doc")))),
    );
    if let Some(Value::Array(variants)) = root.get("oneOf").or_else(|| root.get("enum")) {
        let values: Vec<Value> = variants
            .iter()
            .map(|variant| match variant.get("const").unwrap_or(variant) {
                Value::String(value) => Value::from(value.as_str()),
                other => panic!("{name}: a variant that is not a name: {other}"),
            })
            .collect();
        out.insert("type".to_owned(), Value::from("string"));
        out.insert("enum".to_owned(), Value::Array(values));
        return Value::Object(out);
    }
    assert_eq!(root.get("type"), Some(&Value::from("object")), "{name} is not an object");
    let mut properties = Map::new();
    for (member, property) in
        root.get("properties").and_then(Value::as_object).into_iter().flatten()
    {
        properties.insert(member.clone(), result_property(&format!("{name}.{member}"), property));
    }
    let required: Vec<&Value> =
        root.get("required").and_then(Value::as_array).into_iter().flatten().collect();
    // `required` in member order.
    let required: Vec<Value> = properties
        .keys()
        .filter(|member| required.iter().any(|name| name.as_str() == Some(member.as_str())))
        .map(|member| Value::from(member.as_str()))
        .collect();
    out.insert("type".to_owned(), Value::from("object"));
    out.insert("properties".to_owned(), Value::Object(properties));
    out.insert("required".to_owned(), Value::Array(required));
    Value::Object(out)
}

/// One property (or array item) of [`result_schema`]; `at` names it in a panic.
fn result_property(at: &str, generated: &Value) -> Value {
    let Value::Object(property) = generated else { panic!("{at}: not an object: {generated}") };
    let mut out = Map::new();
    if let Some(Value::String(reference)) = property.get("$ref") {
        // A type of this schema (`#/$defs/Name`), or a wire type of `spec/protocol.md` §1 as
        // `Name.json`, whose schema is written elsewhere.
        let file = match reference.strip_prefix("#/$defs/") {
            Some(target) => format!("{target}.json"),
            None if reference.strip_suffix(".json").is_some() => reference.clone(),
            None => panic!("{at}: a reference outside the schema: {reference}"),
        };
        out.insert("$ref".to_owned(), Value::from(file));
    } else {
        let kind = property.get("type").unwrap_or_else(|| panic!("{at}: no type: {generated}"));
        let kinds: Vec<&str> = match kind {
            Value::String(kind) => vec![kind.as_str()],
            Value::Array(kinds) => kinds.iter().filter_map(Value::as_str).collect(),
            other => panic!("{at}: type {other}"),
        };
        for kind in &kinds {
            assert!(
                matches!(*kind, "string" | "integer" | "boolean" | "array" | "null"),
                "{at}: type {kind} is not one the answers use"
            );
        }
        out.insert("type".to_owned(), kind.clone());
        if kinds.contains(&"array") {
            let items =
                property.get("items").unwrap_or_else(|| panic!("{at}: array without items"));
            out.insert("items".to_owned(), result_property(&format!("{at}[]"), items));
        }
    }
    if let Some(Value::String(description)) = property.get("description") {
        out.insert("description".to_owned(), Value::from(one_line(description)));
    }
    Value::Object(out)
}

/// A doc comment on one line: its lines joined by a space, `[`X`]` written as `` `X` ``.
fn one_line(doc: &str) -> String {
    let joined = doc
        .split('\n')
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    joined.replace("[`", "`").replace("`]", "`")
}
