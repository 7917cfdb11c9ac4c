//! `bindings/typescript/`: the npm package `@termsprawl/agent-tools-protocol`, the protocol for
//! TypeScript (the desktop app), generated from the `termsprawl-protocol` crate like
//! `docs/reference/`.
//!
//! Everything in it is derived, nothing is retyped: the wire types from the same JSON Schemas as
//! `docs/reference/types/` ([`wire_types::schemas`]), the argument interfaces, value types and the
//! table as data from [`operations`] (each entry is its `catalog.json` entry with `title` after
//! `name`), the guides from [`guide`], the answer types from the schemas the crate derives from
//! its result types ([`results::schemas`]), and the validator's data (parameters, kinds, limits, the
//! key grammar, the messages of [`ValidationError`]) from the crate's table and constants. The
//! validator's algorithm is the one hand-written part, the template `typescript/validate.ts`,
//! emitted unchanged: it mirrors `protocol/src/validate.rs` step for step, and the shared cases of
//! `protocol/tests/validation-cases.json` hold the two to the same message for every case.

use std::fmt::Write as _;

use serde_json::{Value, json};
use termsprawl_protocol::keys::{MAX_KEYS, MODIFIERS, NAMED_KEYS};
use termsprawl_protocol::pattern::{MAX_GROUP_DEPTH, MAX_PATTERN_SIZE, MAX_REPEAT};
use termsprawl_protocol::results::{
    self, DEFAULT_READ_CHARS, DEFAULT_WAIT_MS, MAX_CLIENT_WAIT_MS, MAX_OUTPUT_UTF16,
    MAX_READ_CHARS, MAX_WAIT_MS,
};
use termsprawl_protocol::{
    DEFAULT_SEARCH_LIMIT, MAX_ARRAY_ITEMS, MAX_CURSOR, MAX_ITEM_UTF16, MAX_NUMBER_MAGNITUDE,
    MAX_SEARCH_CONTEXT, MAX_SEARCH_LIMIT, MAX_STRING_UTF16, MAX_WAIT_TEXTS, Operation,
    PROTOCOL_VERSION, ParamKind, Topic, ValidationError, guide, instructions, operations,
};

use super::{GeneratedFile, MARKER, markdown, wire_types};

/// The package's folder, relative to the repository root.
pub const DIR: &str = "bindings/typescript";

/// The npm package name.
pub const PACKAGE: &str = "@termsprawl/agent-tools-protocol";

/// The validator's algorithm, emitted as it is (see the module doc).
const VALIDATE_TEMPLATE: &str = include_str!("typescript/validate.ts");
/// The pattern dialect's checker (`spec/protocol.md` §5.1), emitted as it is: a hand-written
/// mirror of `protocol/src/pattern.rs`, held to it by the shared cases.
const PATTERN_TEMPLATE: &str = include_str!("typescript/pattern.ts");

/// Every file of the package.
pub(super) fn files() -> Vec<GeneratedFile> {
    vec![
        package_json(),
        tsconfig_json(),
        markdown(&format!("{DIR}/README.md"), &readme()),
        source("index.ts", &index()),
        source("version.ts", &version()),
        source("types.ts", &types()),
        source("operations.ts", &operations_ts()),
        source("guides.ts", &guides()),
        source("results.ts", &results()),
        source("validation-data.ts", &validation_data()),
        source("pattern.ts", PATTERN_TEMPLATE),
        source("validate.ts", VALIDATE_TEMPLATE),
    ]
}

/// `src/NAME`, opening with the marker line.
fn source(name: &str, body: &str) -> GeneratedFile {
    let mut contents = format!("// {MARKER}\n\n{body}");
    if !contents.ends_with('\n') {
        contents.push('\n');
    }
    (format!("{DIR}/src/{name}").into(), contents)
}

fn package_json() -> GeneratedFile {
    let package = json!({
        "//": MARKER,
        "name": PACKAGE,
        "version": PROTOCOL_VERSION,
        "description": format!("The termsprawl agent tool protocol {PROTOCOL_VERSION} for TypeScript: wire types, the operation table, guides and the request validator, generated from the termsprawl-protocol crate"),
        "license": "MIT",
        "type": "module",
        "main": "dist/index.js",
        "types": "dist/index.d.ts",
        "exports": { ".": { "types": "./dist/index.d.ts", "default": "./dist/index.js" } },
        "files": ["dist", "src"],
        "scripts": { "build": "tsc -p .", "check": "tsc -p . --noEmit" },
        "engines": { "node": ">=20" }
    });
    super::json(&format!("{DIR}/package.json"), &package)
}

fn tsconfig_json() -> GeneratedFile {
    let config = json!({
        "compilerOptions": {
            "target": "ES2022",
            "lib": ["ES2022"],
            "module": "NodeNext",
            "moduleResolution": "NodeNext",
            "strict": true,
            "declaration": true,
            "rootDir": "src",
            "outDir": "dist",
            "types": []
        },
        "include": ["src"]
    });
    let (path, contents) = super::json(&format!("{DIR}/tsconfig.json"), &config);
    // tsc reads tsconfig.json with comments.
    (path, format!("// {MARKER}\n{contents}"))
}

fn readme() -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# `{PACKAGE}`\n");
    let _ = writeln!(
        out,
        "The termsprawl agent tool protocol, version **{PROTOCOL_VERSION}** (the package's version is the protocol's), for TypeScript: what the desktop app needs to serve or call the tool route without retyping the table."
    );
    out.push_str(
        "Every file of this package is generated by `cargo xtask codegen` from the `termsprawl-protocol` crate (`xtask/src/codegen/typescript.rs`); do not edit them: change the crate and run the command. `cargo xtask codegen --check`, run by `cargo test`, fails on a stale, missing or extra file here.\n\n",
    );
    out.push_str("| module | content |\n| --- | --- |\n");
    out.push_str("| `src/version.ts` | `PROTOCOL_VERSION` |\n");
    out.push_str(
        "| `src/types.ts` | the wire types `ToolIdentity`, `IntegrationStatus`, `ToolSession`, `ToolEndpoint`, `ToolRequest`, `ToolResult` (from the schemas of `docs/reference/types/`) |\n",
    );
    out.push_str(
        "| `src/operations.ts` | one `…Args` interface per operation, the value types of enum arguments, `OperationArgs` (name → args), `OperationName`, `OperationRequest` (the requests as a union discriminated by `operation`) and `OPERATIONS`, the table as data: each entry is its `docs/reference/catalog.json` entry with `title` after `name`, in table order |\n",
    );
    out.push_str(
        "| `src/guides.ts` | `GuideTopic`, `GUIDES` (the text `guide_read` returns for each topic) and `INSTRUCTIONS` |\n",
    );
    let answers: Vec<String> =
        results::schemas().iter().map(|(name, _)| format!("`{name}`")).collect();
    let _ = writeln!(
        out,
        "| `src/results.ts` | the typed answers of the operations ({}) and their limits (`MAX_WAIT_MS`, `MAX_CLIENT_WAIT_MS`, …), from the schemas `termsprawl_protocol::results` derives from its types |",
        answers.join(", ")
    );
    out.push_str(
        "| `src/validate.ts`, `src/validation-data.ts` | `parseBody` (JSON text, members kept in document order) and `validate`: the checks of `spec/protocol.md` §5 in its order with its exact messages, the same as the Rust validator's for every case of `protocol/tests/validation-cases.json`; `isValidKey` (the key grammar of `terminal_input`'s `keys`) |\n",
    );
    out.push_str(
        "| `src/pattern.ts` | `checkPattern`: the pattern dialect of `spec/protocol.md` §5.1 (`terminal_search` and `terminal_wait` with `regex: true`), the reason of a refusal as the Rust checker gives it; an accepted pattern means what `new RegExp(pattern, \"u\")` means, tested against one line of output at a time |\n\n",
    );
    out.push_str("```ts\n");
    out.push_str(
        "import { parseBody, validate, type OperationRequest, type ToolResult } from \"@termsprawl/agent-tools-protocol\";\n\n",
    );
    out.push_str(
        "// Serving: `text` is the request body. parseBody throws the SyntaxError whose message a 400 carries (§6.3).\nfunction check(text: string): ToolResult | undefined {\n  const checked = validate(parseBody(text));\n  return checked.ok ? undefined : { ok: false, error: checked.error }; // else dispatch checked.request\n}\n\n",
    );
    out.push_str(
        "// Calling: the type checker holds a request to the table.\nconst request: OperationRequest = { operation: \"terminal_wait\", args: { nodeId: \"terminal-1\", until: \"quiet\", quietMs: 500 } };\n",
    );
    out.push_str("```\n\n");
    out.push_str(
        "Build with `npm run build` (TypeScript 5, `tsc --strict`); the sources need no Node types. The repository's tests type-check this package and a typed client (`tests/typescript/client.ts`), compare `OPERATIONS` with `catalog.json`, run the validator over the shared cases, and run `termsprawl-conformance` (`--level protocol` and `--level strict`) against a tool server built on it (`tests/typescript/server.ts`).\n",
    );
    out
}

fn index() -> String {
    let mut out = String::from("// The package's entry: everything, re-exported.\n\n");
    for module in
        ["version", "types", "operations", "guides", "validation-data", "pattern", "validate"]
    {
        let _ = writeln!(out, "export * from \"./{module}.js\";");
    }
    out
}

fn version() -> String {
    format!(
        "/** The version of the protocol this package describes, in semver. */\nexport const PROTOCOL_VERSION = {};\n",
        string(PROTOCOL_VERSION)
    )
}

/// The named value types of the wire types: (type, property, name of the property's type).
const WIRE_VALUE_TYPES: &[(&str, &str, &str)] =
    &[("IntegrationStatus", "state", "IntegrationState")];

/// The wire types, from the schemas of `docs/reference/types/`.
fn types() -> String {
    let mut out = String::from("// The wire types of spec/protocol.md §1.\n");
    for (name, schema) in wire_types::schemas() {
        out.push('\n');
        for (owner, property, value_type) in WIRE_VALUE_TYPES {
            if *owner == name {
                let text = format!("The `{property}` of an `{name}`.");
                let _ = writeln!(
                    out,
                    "{}export type {value_type} = {};\n",
                    doc(&text, ""),
                    ts_type(&schema["properties"][property], "", name)
                );
            }
        }
        out.push_str(&doc(schema["description"].as_str().unwrap_or_default(), ""));
        if let Some(Value::Array(variants)) = schema.get("oneOf") {
            let variants: Vec<String> =
                variants.iter().map(|variant| object_type(variant, "  ", name)).collect();
            let _ = writeln!(out, "export type {name} =\n  | {};", variants.join("\n  | "));
            continue;
        }
        let _ = writeln!(out, "export interface {name} {}", object_type(&schema, "", name));
    }
    out
}

fn operations_ts() -> String {
    let mut out = String::from(
        "// The operation table of spec/protocol.md §4.3, as types and as data, in table order.\n\n",
    );
    out.push_str("import type { ToolRequest } from \"./types.js\";\n");
    for operation in operations() {
        out.push('\n');
        out.push_str(&args_interface(operation));
    }
    out.push_str(
        "\n/** The arguments of every operation, by name. */\nexport interface OperationArgs {\n",
    );
    for operation in operations() {
        let _ = writeln!(out, "  {}: {};", operation.name(), args_name(operation));
    }
    out.push_str("}\n\n");
    out.push_str("/** The name of an operation of the table. */\nexport type OperationName = keyof OperationArgs;\n\n");
    out.push_str(
        "/** A request of the table, typed: a union discriminated by `operation`. */\nexport type OperationRequest<Name extends OperationName = OperationName> = {\n  [N in Name]: { operation: N; args: OperationArgs[N] };\n}[Name];\n\n",
    );
    out.push_str(
        "/** The wire form of a typed request. */\nexport function toolRequest<Name extends OperationName>(request: OperationRequest<Name>): ToolRequest {\n  return { operation: request.operation, args: { ...request.args } };\n}\n\n",
    );
    out.push_str(
        "/** The MCP tool annotations of an operation (spec/protocol.md §4.2). */\nexport interface ToolAnnotations {\n  readonly readOnlyHint: boolean;\n  readonly destructiveHint: boolean;\n  readonly idempotentHint: boolean;\n  readonly openWorldHint: boolean;\n}\n\n",
    );
    out.push_str(
        "/** A property of an operation's input schema. */\nexport interface PropertySchema {\n  readonly type: \"string\" | \"number\" | \"boolean\" | \"array\";\n  readonly enum?: readonly string[];\n  readonly items?: { readonly type: \"string\" };\n  readonly description: string;\n}\n\n",
    );
    out.push_str(
        "/** An operation's input schema, in the contract's exact shape. */\nexport interface InputSchema {\n  readonly type: \"object\";\n  readonly properties: { readonly [name: string]: PropertySchema };\n  readonly required: readonly string[];\n  readonly additionalProperties: false;\n}\n\n",
    );
    out.push_str(
        "/** One row of the table: its `catalog.json` entry, with `title` after `name`. */\nexport interface ToolEntry {\n  readonly name: OperationName;\n  readonly title: string;\n  readonly description: string;\n  readonly inputSchema: InputSchema;\n  readonly annotations: ToolAnnotations;\n}\n\n",
    );
    let entries: Vec<Value> = operations().iter().map(tool_entry).collect();
    let _ = writeln!(
        out,
        "/** The operation table, in table order. */\nexport const OPERATIONS: readonly ToolEntry[] = {};",
        pretty(&Value::Array(entries))
    );
    out
}

/// The `catalog.json` entry of `operation` with `title` after `name`.
fn tool_entry(operation: &Operation) -> Value {
    let Value::Object(entry) = operation.tool_json() else { panic!("a tool entry is an object") };
    let mut with_title = serde_json::Map::new();
    for (key, value) in entry {
        let is_name = key == "name";
        with_title.insert(key, value);
        if is_name {
            with_title.insert("title".to_owned(), Value::from(operation.title()));
        }
    }
    Value::Object(with_title)
}

fn args_name(operation: &Operation) -> String {
    format!("{}Args", pascal(operation.name()))
}

/// The value type of an enum argument: `<Operation><Argument>`.
fn enum_name(operation: &Operation, param: &str) -> String {
    format!("{}{}", pascal(operation.name()), pascal(param))
}

fn args_interface(operation: &Operation) -> String {
    let mut out = String::new();
    for param in operation.params() {
        if let ParamKind::Enum(values) = param.kind() {
            let literals: Vec<String> = values.iter().map(|value| string(value)).collect();
            out.push_str(&doc(
                &format!("The values of `{}`'s `{}`.", operation.name(), param.name()),
                "",
            ));
            let _ = writeln!(
                out,
                "export type {} = {};",
                enum_name(operation, param.name()),
                literals.join(" | ")
            );
        }
    }
    out.push_str(&doc(
        &format!("The arguments of `{}`: {}", operation.name(), operation.description()),
        "",
    ));
    if operation.params().is_empty() {
        let _ = writeln!(out, "export type {} = Record<string, never>;", args_name(operation));
        return out;
    }
    let _ = writeln!(out, "export interface {} {{", args_name(operation));
    for param in operation.params() {
        out.push_str(&doc(param.description(), "  "));
        let kind = match param.kind() {
            ParamKind::String => "string".to_owned(),
            ParamKind::Number => "number".to_owned(),
            ParamKind::Boolean => "boolean".to_owned(),
            ParamKind::StringArray => "string[]".to_owned(),
            ParamKind::Enum(_) => enum_name(operation, param.name()),
        };
        let optional = if param.required() { "" } else { "?" };
        let _ = writeln!(out, "  {}{optional}: {kind};", param.name());
    }
    out.push_str("}\n");
    out
}

fn guides() -> String {
    let mut out =
        String::from("// The guides of spec/protocol.md §4.4: what guide_read returns.\n\n");
    let topics: Vec<String> = Topic::ALL.iter().map(|topic| string(topic.as_str())).collect();
    let _ = writeln!(
        out,
        "/** A guide topic, in the table's order. */\nexport type GuideTopic = {};\n",
        topics.join(" | ")
    );
    let _ = writeln!(
        out,
        "/** Every guide topic, in order. */\nexport const GUIDE_TOPICS: readonly GuideTopic[] = [{}];\n",
        topics.join(", ")
    );
    out.push_str("/** The text `guide_read` returns, by topic. */\nexport const GUIDES: Readonly<Record<GuideTopic, string>> = {\n");
    for topic in Topic::ALL {
        let _ = writeln!(out, "  {}: {},", topic.as_str(), string(guide(topic)));
    }
    out.push_str("};\n\n");
    let _ = writeln!(
        out,
        "/** The short instructions an agent is given (the MCP `instructions`). */\nexport const INSTRUCTIONS = {};",
        string(instructions())
    );
    out
}

/// The limits of §5 and §5.1 the validator reads: (name, doc, value).
fn validation_constants() -> Vec<(&'static str, &'static str, String)> {
    vec![
        (
            "MAX_ARRAY_ITEMS",
            "Most items in a `string[]` argument (`terminal_input`'s `keys` excepted).",
            MAX_ARRAY_ITEMS.to_string(),
        ),
        (
            "MAX_ITEM_UTF16",
            "Most UTF-16 units in one item of a `string[]` argument.",
            MAX_ITEM_UTF16.to_string(),
        ),
        (
            "MAX_STRING_UTF16",
            "Most UTF-16 units in a string or enum argument.",
            MAX_STRING_UTF16.to_string(),
        ),
        (
            "MAX_NUMBER_MAGNITUDE",
            "Largest absolute value of a number argument (inclusive), cursors excepted.",
            number(MAX_NUMBER_MAGNITUDE),
        ),
        (
            "MAX_CURSOR",
            "Largest absolute value of a cursor argument (`since`; inclusive): 2^53 − 1.",
            number(MAX_CURSOR),
        ),
        ("MAX_KEYS", "Most keys in one `terminal_input` call.", MAX_KEYS.to_string()),
        ("MAX_WAIT_TEXTS", "Most texts in `terminal_wait`'s `anyOf`.", MAX_WAIT_TEXTS.to_string()),
        ("MAX_SEARCH_LIMIT", "The largest `limit` of `terminal_search`.", number(MAX_SEARCH_LIMIT)),
        (
            "MAX_SEARCH_CONTEXT",
            "The largest `context` of `terminal_search`.",
            number(MAX_SEARCH_CONTEXT),
        ),
        (
            "MAX_REPEAT",
            "The largest count of a repetition in a pattern (`{n}`, `{n,}`, `{n,m}`).",
            MAX_REPEAT.to_string(),
        ),
        (
            "MAX_PATTERN_SIZE",
            "The largest size of a pattern, a repeated part counted as often as it may repeat.",
            MAX_PATTERN_SIZE.to_string(),
        ),
        (
            "MAX_GROUP_DEPTH",
            "The deepest nesting of groups in a pattern.",
            MAX_GROUP_DEPTH.to_string(),
        ),
    ]
}

/// `results.ts`: the typed answers of `termsprawl_protocol::results` and their limits.
fn results() -> String {
    let mut out = String::from(
        "// The typed answers of the operations (spec/protocol.md §4.3, §4.5 and §4.6), from the schemas protocol::results derives from its types, with their limits.\n\n",
    );
    let schemas = results::schemas();
    // The wire types an answer names (`IntegrationStatus`) come from types.ts.
    let wire: Vec<&str> = wire_types::schemas()
        .into_iter()
        .map(|(name, _)| name)
        .filter(|name| schemas.iter().any(|(_, schema)| names_type(schema, name)))
        .collect();
    if !wire.is_empty() {
        let _ = writeln!(out, "import type {{ {} }} from \"./types.js\";\n", wire.join(", "));
    }
    let constants: [(&str, &str, String); 7] = [
        (
            "MAX_WAIT_MS",
            "The longest wait a server runs in one call (`timeoutMs` is clamped to it).",
            MAX_WAIT_MS.to_string(),
        ),
        (
            "DEFAULT_WAIT_MS",
            "`timeoutMs` of `terminal_run` and `terminal_wait` when omitted.",
            DEFAULT_WAIT_MS.to_string(),
        ),
        (
            "MAX_CLIENT_WAIT_MS",
            "The longest wait `termsprawlctl` and its MCP bridge run for one call, in turns of at most `MAX_WAIT_MS`.",
            MAX_CLIENT_WAIT_MS.to_string(),
        ),
        (
            "MAX_OUTPUT_UTF16",
            "The most UTF-16 units of `output` in a run or wait answer.",
            MAX_OUTPUT_UTF16.to_string(),
        ),
        (
            "DEFAULT_READ_CHARS",
            "`maxChars` of `terminal_read` when omitted.",
            DEFAULT_READ_CHARS.to_string(),
        ),
        (
            "MAX_READ_CHARS",
            "The largest `maxChars` of `terminal_read`.",
            MAX_READ_CHARS.to_string(),
        ),
        (
            "DEFAULT_SEARCH_LIMIT",
            "`limit` of `terminal_search` when omitted.",
            DEFAULT_SEARCH_LIMIT.to_string(),
        ),
    ];
    for (name, text, value) in constants {
        out.push_str(&doc(text, ""));
        let _ = writeln!(out, "export const {name} = {value};");
    }
    for (name, schema) in schemas {
        out.push('\n');
        out.push_str(&doc(schema["description"].as_str().unwrap_or_default(), ""));
        if schema.get("enum").is_some() {
            let _ = writeln!(out, "export type {name} = {};", ts_type(&schema, "", name));
            continue;
        }
        let _ = writeln!(out, "export interface {name} {}", object_type(&schema, "", name));
    }
    out
}

/// Whether `schema` refers to the type `name` (`"$ref": "NAME.json"`) anywhere.
fn names_type(schema: &Value, name: &str) -> bool {
    match schema {
        Value::Object(members) => members.iter().any(|(key, value)| {
            (key == "$ref" && value.as_str() == Some(&format!("{name}.json")))
                || names_type(value, name)
        }),
        Value::Array(items) => items.iter().any(|item| names_type(item, name)),
        _ => false,
    }
}

fn validation_data() -> String {
    let mut out = String::from(
        "// The data of the validator (validate.ts): spec/protocol.md §5 as the protocol crate states it.\n\n",
    );
    out.push_str("import type { OperationName } from \"./operations.js\";\n\n");
    for (name, text, value) in validation_constants() {
        out.push_str(&doc(text, ""));
        let _ = writeln!(out, "export const {name} = {value};");
    }
    let named: Vec<String> = NAMED_KEYS.iter().map(|key| string(key)).collect();
    let _ = writeln!(
        out,
        "\n/** The named keys of `terminal_input`'s `keys`, in the contract's order. */\nexport const NAMED_KEYS = [{}] as const;",
        named.join(", ")
    );
    let modifiers: Vec<String> = MODIFIERS.iter().map(|prefix| string(prefix)).collect();
    let _ = writeln!(
        out,
        "\n/** The modifier prefixes of a chord: Ctrl, Meta (Alt), Shift. */\nexport const KEY_MODIFIERS: readonly string[] = [{}];",
        modifiers.join(", ")
    );
    out.push_str("\n/** The messages of §5: the whole `error`, or the text before the argument's name. */\nexport const MESSAGES = {\n");
    let messages = [
        ("expectedObject", ValidationError::ExpectedObject.to_string()),
        ("unknownOperation", ValidationError::UnknownOperation.to_string()),
        ("expectedArgsObject", ValidationError::ExpectedArgsObject.to_string()),
        ("missingArgument", prefix(&ValidationError::MissingArgument)),
        ("unknownArgument", prefix(&ValidationError::UnknownArgument)),
        ("invalidArgument", prefix(&ValidationError::InvalidArgument)),
        ("patternReason", pattern_separator()),
    ];
    for (name, text) in messages {
        let _ = writeln!(out, "  {name}: {},", string(&text));
    }
    out.push_str("} as const;\n\n");
    out.push_str(
        "/** One argument of an operation, as the validator checks it. */\nexport type ParamRule = { readonly name: string; readonly required: boolean } & (\n  | { readonly kind: \"string\" }\n  | { readonly kind: \"number\"; readonly maxMagnitude: number }\n  | { readonly kind: \"boolean\" }\n  | { readonly kind: \"string[]\"; readonly maxItems: number }\n  | { readonly kind: \"enum\"; readonly values: readonly string[] }\n);\n\n",
    );
    out.push_str("/** The arguments of every operation, in schema order. */\nexport const PARAMS: Readonly<Record<OperationName, readonly ParamRule[]>> = {\n");
    for operation in operations() {
        let rules: Vec<String> = operation
            .params()
            .iter()
            .map(|param| {
                let head =
                    format!("name: {}, required: {}", string(param.name()), param.required());
                let kind = match param.kind() {
                    ParamKind::String => "kind: \"string\"".to_owned(),
                    ParamKind::Number => {
                        format!("kind: \"number\", maxMagnitude: {}", number(param.max_magnitude()))
                    }
                    ParamKind::Boolean => "kind: \"boolean\"".to_owned(),
                    ParamKind::StringArray => {
                        format!("kind: \"string[]\", maxItems: {}", param.max_items())
                    }
                    ParamKind::Enum(values) => {
                        let values: Vec<String> =
                            values.iter().map(|value| string(value)).collect();
                        format!("kind: \"enum\", values: [{}]", values.join(", "))
                    }
                };
                format!("    {{ {head}, {kind} }},\n")
            })
            .collect();
        if rules.is_empty() {
            let _ = writeln!(out, "  {}: [],", operation.name());
        } else {
            let _ = write!(out, "  {}: [\n{}  ],\n", operation.name(), rules.concat());
        }
    }
    out.push_str("};\n");
    out
}

/// The text an `Invalid <name>: <reason>` message puts between the name and the reason.
fn pattern_separator() -> String {
    let text = ValidationError::InvalidPattern("\u{1}".to_owned(), "\u{2}".to_owned()).to_string();
    let (_, after) = text.split_once('\u{1}').expect("the message holds the name");
    after.strip_suffix('\u{2}').expect("a message ends with the reason").to_owned()
}

/// The text a message with an argument name puts before the name.
fn prefix(message: &dyn Fn(String) -> ValidationError) -> String {
    const NAME: &str = "\u{1}";
    let text = message(NAME.to_owned()).to_string();
    text.strip_suffix(NAME).expect("a message ends with the argument's name").to_owned()
}

/// The TypeScript type of a JSON Schema of the wire types (the keywords they use), a property of
/// the type `owner`.
fn ts_type(schema: &Value, indent: &str, owner: &str) -> String {
    if let Some(Value::String(reference)) = schema.get("$ref") {
        return reference.trim_end_matches(".json").to_owned();
    }
    if let Some(constant) = schema.get("const") {
        return constant.to_string();
    }
    if let Some(Value::Array(values)) = schema.get("enum") {
        let literals: Vec<String> = values.iter().map(Value::to_string).collect();
        return literals.join(" | ");
    }
    if let Some(Value::Array(kinds)) = schema.get("type") {
        let kinds: Vec<&str> = kinds
            .iter()
            .map(|kind| match kind.as_str() {
                Some("integer" | "number") => "number",
                Some("string") => "string",
                Some("boolean") => "boolean",
                Some("null") => "null",
                other => panic!("no TypeScript type for the JSON type {other:?}"),
            })
            .collect();
        return kinds.join(" | ");
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("string") => "string".to_owned(),
        Some("number" | "integer") => "number".to_owned(),
        Some("boolean") => "boolean".to_owned(),
        Some("array") => format!("{}[]", ts_type(&schema["items"], indent, owner)),
        Some("object") if schema.get("properties").is_none() => {
            "{ [name: string]: unknown }".to_owned()
        }
        Some("object") => object_type(schema, indent, owner),
        None if schema.get("properties").is_some() => object_type(schema, indent, owner),
        None => "unknown".to_owned(),
        Some(other) => panic!("no TypeScript type for the JSON type {other}"),
    }
}

/// `{ member: T; … }` of an object schema of the type `owner`, each member with its description
/// and the named type of [`WIRE_VALUE_TYPES`] where it has one.
fn object_type(schema: &Value, indent: &str, owner: &str) -> String {
    let required: Vec<&str> =
        schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    let inner = format!("{indent}  ");
    let mut out = String::from("{\n");
    for (name, property) in schema["properties"].as_object().into_iter().flatten() {
        if let Some(description) = property["description"].as_str() {
            out.push_str(&doc(description, &inner));
        }
        let optional = if required.contains(&name.as_str()) { "" } else { "?" };
        let named = WIRE_VALUE_TYPES
            .iter()
            .find(|(type_name, member, _)| *type_name == owner && member == name)
            .map(|(_, _, value_type)| (*value_type).to_owned());
        let kind = named.unwrap_or_else(|| ts_type(property, &inner, owner));
        let _ = writeln!(out, "{inner}{name}{optional}: {kind};");
    }
    out.push_str(indent);
    out.push('}');
    out
}

/// A `/** … */` comment of `text` at `indent`.
fn doc(text: &str, indent: &str) -> String {
    let text = text.replace("*/", "*\\/");
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() == 1 {
        return format!("{indent}/** {} */\n", lines[0]);
    }
    let mut out = format!("{indent}/**\n");
    for line in lines {
        let _ = writeln!(out, "{indent} * {line}");
    }
    let _ = writeln!(out, "{indent} */");
    out
}

/// `terminal_read` → `TerminalRead`.
fn pascal(name: &str) -> String {
    name.split('_')
        .map(|word| {
            let mut chars = word.chars();
            chars
                .next()
                .map(|first| first.to_uppercase().chain(chars).collect())
                .unwrap_or_default()
        })
        .collect::<Vec<String>>()
        .concat()
}

/// A TypeScript string literal (a JSON string is one).
fn string(text: &str) -> String {
    Value::from(text).to_string()
}

/// A whole number as TypeScript writes it.
fn number(value: f64) -> String {
    format!("{value}")
}

/// JSON pretty-printed with two spaces: a TypeScript expression.
fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).expect("a Value always serialises")
}
