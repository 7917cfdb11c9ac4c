//! Request validation (`spec/protocol.md` §5): every step in order, for every operation the
//! server lists, with the contract's exact messages.
//!
//! The probes are derived from the operation table ([`termsprawl_protocol::operations`]) and the
//! messages from [`ValidationError`], so an operation or an argument added to the table is probed
//! without a change here. No probe can run an operation: every body that should pass a check is
//! followed by a member that fails a later one (`zzz_conformance`, or a known argument of the wrong
//! type), so the expected answer is always a validation failure, and a server that skips a check
//! still answers with a failure of the next one.

use termsprawl_protocol::{
    MAX_ARRAY_ITEMS, MAX_ITEM_UTF16, MAX_STRING_UTF16, Operation, Param, ParamKind, ValidationError,
};

use crate::catalog::{GUARD, object, request, with_guard};
use crate::ctx::{Ctx, Expect, Who};
use crate::served::string;

const STEPS: &str = "protocol.md §5";

fn step(number: u8) -> String {
    format!("{STEPS} step {number}")
}

fn message(error: &ValidationError) -> String {
    error.to_string()
}

fn invalid(name: &str) -> Expect {
    Expect::error(400, message(&ValidationError::InvalidArgument(name.to_owned())))
}

fn unknown(name: &str) -> Expect {
    Expect::error(400, message(&ValidationError::UnknownArgument(name.to_owned())))
}

fn missing(name: &str) -> Expect {
    Expect::error(400, message(&ValidationError::MissingArgument(name.to_owned())))
}

pub(crate) async fn check(ctx: &mut Ctx) {
    global(ctx).await;
    let probed = ctx.probed();
    if probed.is_empty() {
        ctx.skip(
            "validate.operations",
            STEPS,
            "every listed operation is validated",
            "the server listed no operation of this suite's table",
        );
        return;
    }
    for operation in probed {
        per_operation(ctx, operation).await;
    }
}

/// Steps 1 and 2, and repeated members.
#[expect(clippy::too_many_lines, reason = "one probe list per step, read top to bottom")]
async fn global(ctx: &mut Ctx) {
    let expected_object = Expect::error(400, message(&ValidationError::ExpectedObject));
    let unknown_operation = Expect::error(400, message(&ValidationError::UnknownOperation));
    let probes = |ctx: &Ctx, bodies: &[&str], expect: &Expect| -> Vec<_> {
        bodies
            .iter()
            .map(|body| (Who::First, ctx.authed(Who::First, *body), expect.clone()))
            .collect()
    };
    let list = probes(ctx, &["null", "true", "1", "\"session_info\""], &expected_object);
    ctx.expect(
        "validate.body-not-object",
        &step(1),
        "a body that is not an object or array is `Expected an operation and args object`",
        list,
    )
    .await;
    let list = probes(ctx, &["[]", r#"["session_info",{}]"#], &unknown_operation);
    ctx.expect(
        "validate.body-array",
        &step(1),
        "an array body passes step 1 and fails step 2 with `Unknown operation`",
        list,
    )
    .await;
    let list = probes(ctx, &[r#"{"args":{}}"#], &unknown_operation);
    ctx.expect(
        "validate.operation-missing",
        &step(2),
        "a body without operation is `Unknown operation`",
        list,
    )
    .await;
    let list = probes(
        ctx,
        &[
            r#"{"operation":1,"args":{}}"#,
            r#"{"operation":null,"args":{}}"#,
            r#"{"operation":["session_info"],"args":{}}"#,
        ],
        &unknown_operation,
    );
    ctx.expect(
        "validate.operation-not-string",
        &step(2),
        "an operation that is not a string is `Unknown operation`",
        list,
    )
    .await;
    let list = probes(
        ctx,
        &[
            r#"{"operation":"no_such_operation","args":{}}"#,
            r#"{"operation":"Session_info","args":{}}"#,
            r#"{"operation":"session_info ","args":{}}"#,
            r#"{"operation":"","args":{}}"#,
            r#"{"operation":"toString","args":{}}"#,
            r#"{"operation":"constructor","args":{}}"#,
        ],
        &unknown_operation,
    );
    ctx.expect(
        "validate.operation-unknown",
        &step(2),
        "a name not in the table (case-sensitive, prototype names included) is `Unknown operation`",
        list,
    )
    .await;
    let list = probes(
        ctx,
        &[
            r#"{"operation":"no_such_operation"}"#,
            r#"{"operation":"no_such_operation","args":null}"#,
        ],
        &unknown_operation,
    );
    ctx.expect(
        "validate.operation-before-args",
        &step(2),
        "the operation is checked before args",
        list,
    )
    .await;

    if ctx.lists("guide_read") {
        let guard = string(GUARD);
        let list = vec![
            (Who::First, ctx.authed(Who::First, format!(r#"{{"operation":"guide_read","args":{{"topic":1,"topic":"overview",{guard}:1}}}}"#)), unknown(GUARD)),
            (Who::First, ctx.authed(Who::First, format!(r#"{{"operation":"guide_read","args":{{"topic":"overview","topic":1,{guard}:1}}}}"#)), invalid("topic")),
            (Who::First, ctx.authed(Who::First, r#"{"operation":"no_such_operation","operation":"session_info","args":{}}"#), Expect::Success),
        ];
        ctx.expect(
            "validate.repeated-member",
            STEPS,
            "when a member repeats, the last occurrence wins",
            list,
        )
        .await;
    } else {
        ctx.skip(
            "validate.repeated-member",
            STEPS,
            "when a member repeats, the last occurrence wins",
            "guide_read is not listed",
        );
    }
}

#[expect(clippy::too_many_lines, reason = "the steps of one operation, in the contract's order")]
async fn per_operation(ctx: &mut Ctx, operation: &'static Operation) {
    let name = operation.name();
    let expected_args = Expect::error(400, message(&ValidationError::ExpectedArgsObject));
    let bodies = [
        format!(r#"{{"operation":{}}}"#, string(name)),
        request(name, "null"),
        request(name, "[]"),
        request(name, "\"\""),
        request(name, "1"),
    ];
    let list = bodies
        .iter()
        .map(|body| (Who::First, ctx.authed(Who::First, body.clone()), expected_args.clone()))
        .collect();
    ctx.expect(
        &format!("validate.args-object:{name}"),
        &step(3),
        "args missing, null, an array or not an object is `Expected args object`",
        list,
    )
    .await;

    let served = ctx.served(operation);
    if let Some(first) = served.required.first() {
        let body = request(name, &object(&[(GUARD.to_owned(), "1".to_owned())]));
        let probe = ctx.authed(Who::First, body);
        ctx.expect(
            &format!("validate.missing-before-unknown:{name}"),
            &step(4),
            "missing arguments are reported before unknown ones",
            vec![(Who::First, probe, missing(first))],
        )
        .await;
    }
    for param in &served.required {
        let body = request(name, &object(&served.members_with(operation, param, None)));
        let probe = ctx.authed(Who::First, body);
        ctx.expect(
            &format!("validate.missing:{name}.{param}"),
            &step(4),
            "each required argument that is absent is `Missing argument: <name>`, in table order",
            vec![(Who::First, probe, missing(param))],
        )
        .await;
    }
    // Step 5: unknown members, in document order, each followed by a known argument of the wrong
    // type so that a server without the check still refuses.
    let has = |param: &&Param| served.has(param.name());
    let last_param = operation
        .params()
        .iter()
        .rev()
        .find(has)
        .map(|param| (param.name().to_owned(), param.kind().clone()));
    let trailing = |leading: &[&str]| -> String {
        let mut members: Vec<(String, String)> =
            leading.iter().map(|name| ((*name).to_owned(), "1".to_owned())).collect();
        if let Some((final_param, kind)) = &last_param {
            members.extend(served.members_with(operation, final_param, Some(wrong_type(kind))));
        }
        request(name, &object(&members))
    };
    let list = vec![
        (Who::First, ctx.authed(Who::First, trailing(&[GUARD])), unknown(GUARD)),
        (Who::First, ctx.authed(Who::First, trailing(&["zzz_b", "zzz_a"])), unknown("zzz_b")),
    ];
    ctx.expect(&format!("validate.unknown:{name}"), &step(5), "a member that is not a property is `Unknown argument: <name>`, the first in document order", list).await;
    let list = ["constructor", "toString", "__proto__", "hasOwnProperty"]
        .iter()
        .map(|member| (Who::First, ctx.authed(Who::First, trailing(&[member])), unknown(member)))
        .collect();
    ctx.expect(
        &format!("validate.prototype-name:{name}"),
        &step(5),
        "prototype member names are `Unknown argument: <name>`",
        list,
    )
    .await;
    if let Some(first) = operation.params().iter().find(has) {
        let mut members =
            served.members_with(operation, first.name(), Some(wrong_type(first.kind())));
        // The wrong value leads: members come in document order.
        if let Some(index) = members.iter().position(|(member, _)| member == first.name()) {
            let bad = members.remove(index);
            members.insert(0, bad);
        }
        members.push((GUARD.to_owned(), "1".to_owned()));
        let probe = ctx.authed(Who::First, request(name, &object(&members)));
        ctx.expect(&format!("validate.document-order:{name}"), &step(5), "members are checked in document order: a bad value before an unknown member is reported first", vec![(Who::First, probe, invalid(first.name()))]).await;
    }

    for param in operation.params() {
        let absent = served.absent.get(param.name()).cloned();
        values(ctx, operation, param, param.is_cursor(), absent.as_deref()).await;
    }
    for (member, lacked) in &served.lacks_values {
        for value in lacked {
            let since = crate::catalog::LATER_VALUES
                .iter()
                .find(|(op, arg, later, _)| *op == name && arg == member && later == value)
                .map_or("", |(_, _, _, version)| version);
            ctx.skip(
                &format!("validate.values:{name}.{member}={value}"),
                &step(5),
                &format!("the value {value:?} (protocol {since}) is accepted"),
                &format!("the server's catalog has no {name}.{member} value {value:?}: it answers `Invalid {member}` to it"),
            );
        }
    }
    crate::operation_rules::check(ctx, operation, &served).await;
}

/// A value of the wrong JSON type for `kind` (`true`, or `1` for a boolean).
fn wrong_type(kind: &ParamKind) -> &'static str {
    if *kind == ParamKind::Boolean { "1" } else { "true" }
}

/// The value checks of one argument: `(value, accepted)` probes grouped into rules.
#[expect(clippy::too_many_lines, reason = "the value checks of each argument kind, as a table")]
async fn values(
    ctx: &mut Ctx,
    operation: &'static Operation,
    param: &Param,
    is_cursor: bool,
    absent: Option<&str>,
) {
    let (kind, max_items, param) = (param.kind(), param.max_items(), param.name());
    let emoji = "\u{1F600}";
    let groups: Vec<Group<'_>> = match kind {
        ParamKind::String => vec![
            (
                "type",
                "a string argument of another JSON type is `Invalid <name>`",
                typed(&["1", "null", "true", "[]", "{}"]),
            ),
            (
                "length",
                "a string of 64000 UTF-16 units is accepted, 64001 is `Invalid <name>`",
                vec![
                    (string(&"a".repeat(MAX_STRING_UTF16)), true),
                    (string(&"a".repeat(MAX_STRING_UTF16 + 1)), false),
                ],
            ),
            (
                "utf16",
                "string length is measured in UTF-16 units, not bytes or characters",
                vec![
                    (string(&"\u{e9}".repeat(MAX_STRING_UTF16)), true),
                    (string(&emoji.repeat(MAX_STRING_UTF16 / 2)), true),
                    (string(&format!("{}a", emoji.repeat(MAX_STRING_UTF16 / 2))), false),
                ],
            ),
            (
                "nul",
                "a string containing U+0000 is `Invalid <name>`",
                vec![(r#""a\u0000b""#.to_owned(), false)],
            ),
            ("empty", "the empty string is accepted", vec![(string(""), true)]),
        ],
        ParamKind::Number => {
            let range: Group<'_> = if is_cursor {
                (
                    "cursor-range",
                    "a cursor may pass 1000000, up to 9007199254740991 (2^53 - 1, protocol 1.3.0); beyond is `Invalid <name>`",
                    vec![
                        ("1000001".to_owned(), true),
                        ("9007199254740991".to_owned(), true),
                        ("0".to_owned(), true),
                        ("9007199254740993".to_owned(), false),
                        ("1e16".to_owned(), false),
                    ],
                )
            } else {
                (
                    "range",
                    "numbers up to 1000000 in magnitude are accepted (fractions and negatives too), beyond is `Invalid <name>`",
                    vec![
                        ("1000000".to_owned(), true),
                        ("-1000000".to_owned(), true),
                        ("1e6".to_owned(), true),
                        ("0".to_owned(), true),
                        ("0.5".to_owned(), true),
                        ("-0.25".to_owned(), true),
                        ("1000000.5".to_owned(), false),
                        ("-1000001".to_owned(), false),
                        ("10000000".to_owned(), false),
                    ],
                )
            };
            vec![
                (
                    "type",
                    "a number argument of another JSON type is `Invalid <name>`",
                    typed(&["\"1\"", "null", "true", "[]", "{}"]),
                ),
                range,
                (
                    "finite",
                    "a number that is not finite (1e400) is `Invalid <name>`",
                    vec![("1e400".to_owned(), false)],
                ),
            ]
        }
        ParamKind::Boolean => vec![
            (
                "type",
                "a boolean argument of another JSON type is `Invalid <name>` (protocol 1.4.0)",
                typed(&["1", "\"true\"", "null", "[]", "{}"]),
            ),
            (
                "values",
                "true and false are accepted",
                vec![("true".to_owned(), true), ("false".to_owned(), true)],
            ),
        ],
        ParamKind::StringArray => {
            let items = |count: usize| format!("[{}]", vec![string("a"); count].join(","));
            vec![
                (
                    "type",
                    "a string[] argument that is not an array is `Invalid <name>`",
                    typed(&["\"a\"", "null", "1", "true", "{}"]),
                ),
                (
                    "count",
                    if max_items == MAX_ARRAY_ITEMS {
                        "1 to 100 items are accepted; 0 or 101 is `Invalid <name>`"
                    } else {
                        "1 to 256 keys are accepted; 0 or 257 is `Invalid <name>` (protocol 1.4.0)"
                    },
                    vec![
                        (items(1), true),
                        (items(max_items), true),
                        (items(0), false),
                        (items(max_items + 1), false),
                    ],
                ),
                (
                    "item-length",
                    "items shorter than 256 UTF-16 units are accepted, longer is `Invalid <name>`",
                    vec![
                        (format!("[{}]", string(&"a".repeat(MAX_ITEM_UTF16))), true),
                        (format!("[{}]", string(&"a".repeat(MAX_ITEM_UTF16 + 1))), false),
                        (
                            format!(
                                "[{}]",
                                string(&format!("{}a", emoji.repeat(MAX_ITEM_UTF16 / 2)))
                            ),
                            true,
                        ),
                        (format!("[{}]", string(&emoji.repeat(MAX_ITEM_UTF16.div_ceil(2)))), false),
                    ],
                ),
                (
                    "item-type",
                    "an item that is not a string is `Invalid <name>`",
                    typed(&["[1]", "[null]", r#"["a",true]"#, "[[]]"]),
                ),
                (
                    "item-nul",
                    "an item containing U+0000 is `Invalid <name>`",
                    vec![(r#"["a\u0000"]"#.to_owned(), false)],
                ),
                (
                    "duplicates",
                    "duplicate items are accepted",
                    vec![(r#"["a","a"]"#.to_owned(), true)],
                ),
            ]
        }
        ParamKind::Enum(_) => {
            let allowed = ctx.enum_values(operation, param);
            let first = allowed.first().cloned().unwrap_or_default();
            let mut groups = vec![
                (
                    "values",
                    "every listed value is accepted",
                    allowed.iter().map(|value| (string(value), true)).collect(),
                ),
                (
                    "unlisted",
                    "a value not listed (or empty) is `Invalid <name>`",
                    vec![(string("zzz-not-listed"), false), (string(""), false)],
                ),
                (
                    "type",
                    "an enum argument of another JSON type is `Invalid <name>`",
                    typed(&["1", "null", "true", "[]"]),
                ),
                (
                    "nul",
                    "a listed value with U+0000 appended is `Invalid <name>`",
                    vec![(
                        format!("{}\\u0000\"", &string(&first)[..string(&first).len() - 1]),
                        false,
                    )],
                ),
            ];
            let upper = first.to_uppercase();
            if upper != first {
                groups.push((
                    "case",
                    "enum values are case-sensitive",
                    vec![(string(&upper), false)],
                ));
            }
            groups
        }
    };
    let served = ctx.served(operation);
    for (check, rule, probes) in groups {
        if let Some(reason) = absent {
            let id = format!("validate.{check}:{}.{param}", operation.name());
            if ctx.selected(&id) {
                ctx.skip(&id, &step(5), rule, reason);
            }
            continue;
        }
        let list = probes
            .into_iter()
            .map(|(value, accepted)| {
                let body = request(
                    operation.name(),
                    &with_guard(served.members_with(operation, param, Some(&value))),
                );
                let expect = if accepted { unknown(GUARD) } else { invalid(param) };
                (Who::First, ctx.authed(Who::First, body), expect)
            })
            .collect();
        ctx.expect(&format!("validate.{check}:{}.{param}", operation.name()), &step(5), rule, list)
            .await;
    }
}

/// A rule's check name, its text, and its `(value, accepted)` probes.
type Group<'a> = (&'a str, &'a str, Vec<(String, bool)>);

fn typed(values: &[&str]) -> Vec<(String, bool)> {
    values.iter().map(|value| ((*value).to_owned(), false)).collect()
}
