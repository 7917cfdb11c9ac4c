//! Step 6 of request validation (`spec/protocol.md` §5): the rules of one operation that involve
//! several of its members or a value's grammar, run once every member has passed step 5 — 1.4.0's
//! `Invalid keys`, `Invalid text` and `Invalid view`, 1.5.0's `Invalid anyOf` and `Invalid regex`
//! of `terminal_wait` and `Invalid pattern`, `Invalid since`, `Invalid limit` and
//! `Invalid context` of `terminal_search`.
//!
//! A rule runs only when the server's catalog has every member it is about ([`Served`]); a server
//! of an earlier protocol skips it with the reason. Unlike the probes of step 5 these cannot end
//! with the guard member (step 5 would refuse it first), so a server without the check runs the
//! operation: every probe names the node `conformance-absent-node`, except `terminal_search`
//! without `nodeId`, which only reads. A value the rule accepts is checked as any answer but the
//! rule's message.

use serde_json::{Value, json};
use termsprawl_protocol::{Operation, ValidationError};

use crate::catalog::GUARD;
use crate::ctx::{Ctx, Expect, Who};
use crate::served::{ABSENT, Served};

const SECTION: &str = "protocol.md §5 step 6";

/// One rule: its member, its text, the members (and enum values) it needs, and its probes:
/// `(args, refused)`, refused ones answered `Invalid <member>`, the others anything else.
struct Rule {
    member: &'static str,
    text: &'static str,
    needs: &'static [(&'static str, Option<&'static str>)],
    probes: Vec<(Value, bool)>,
}

#[expect(clippy::too_many_lines, reason = "the rules as a table, one row per probe")]
fn rules(operation: &str, served: &Served) -> Vec<Rule> {
    let node = ABSENT;
    match operation {
        "terminal_input" => vec![
            Rule {
                member: "keys",
                text: "a key outside the grammar of §4.7 is `Invalid keys`, after every member passed step 5 (protocol 1.4.0)",
                needs: &[("keys", None)],
                probes: vec![
                    (json!({"nodeId": node, "keys": ["NoSuchKey"]}), true),
                    (json!({"nodeId": node, "keys": ["C-"]}), true),
                    (json!({"nodeId": node, "keys": ["Enter", "C-c", "M-x", "F1"]}), false),
                ],
            },
            Rule {
                member: "text",
                text: "neither text nor keys is `Invalid text` (protocol 1.4.0)",
                needs: &[("keys", None), ("text", None)],
                probes: if served.required.iter().any(|required| required == "text") {
                    Vec::new()
                } else {
                    vec![(json!({"nodeId": node}), true)]
                },
            },
        ],
        "terminal_read" => vec![Rule {
            member: "view",
            text: "since with view screen is `Invalid view` (protocol 1.4.0)",
            needs: &[("since", None), ("view", Some("screen"))],
            probes: vec![
                (json!({"nodeId": node, "since": 0, "view": "screen"}), true),
                (json!({"nodeId": node, "view": "screen", "since": 5}), true),
                (json!({"nodeId": node, "since": 0, "view": "stream"}), false),
            ],
        }],
        "terminal_wait" => {
            let seventeen: Vec<String> = (0..17).map(|i| format!("t{i}")).collect();
            vec![
                Rule {
                    member: "anyOf",
                    text: "anyOf is only for until text, without text, with 1 to 16 non-empty items, else `Invalid anyOf` (protocol 1.5.0)",
                    needs: &[("anyOf", None), ("until", Some("text")), ("text", None)],
                    probes: vec![
                        (
                            json!({"nodeId": node, "until": "exit", "anyOf": ["a"], "timeoutMs": 0}),
                            true,
                        ),
                        (
                            json!({"nodeId": node, "until": "text", "text": "a", "anyOf": ["b"], "timeoutMs": 0}),
                            true,
                        ),
                        (
                            json!({"nodeId": node, "until": "text", "anyOf": seventeen, "timeoutMs": 0}),
                            true,
                        ),
                        (
                            json!({"nodeId": node, "until": "text", "anyOf": ["a", ""], "timeoutMs": 0}),
                            true,
                        ),
                        (
                            json!({"nodeId": node, "until": "text", "anyOf": seventeen[..16], "timeoutMs": 0}),
                            false,
                        ),
                    ],
                },
                Rule {
                    member: "regex",
                    text: "regex is only for until text, else `Invalid regex` (protocol 1.5.0)",
                    needs: &[("regex", None), ("until", Some("text"))],
                    probes: vec![
                        (
                            json!({"nodeId": node, "until": "exit", "regex": true, "timeoutMs": 0}),
                            true,
                        ),
                        (
                            json!({"nodeId": node, "until": "text", "text": "a", "regex": true, "timeoutMs": 0}),
                            false,
                        ),
                    ],
                },
            ]
        }
        "terminal_search" => vec![
            Rule {
                member: "pattern",
                text: "an empty pattern is `Invalid pattern`, before the other rules (protocol 1.5.0)",
                needs: &[("pattern", None), ("limit", None)],
                probes: vec![
                    (json!({"pattern": ""}), true),
                    (json!({"pattern": "", "nodeId": node, "limit": 0}), true),
                ],
            },
            Rule {
                member: "since",
                text: "since without nodeId is `Invalid since` (protocol 1.5.0)",
                needs: &[("pattern", None), ("since", None), ("nodeId", None)],
                probes: vec![
                    (json!({"pattern": "a", "since": 0}), true),
                    (json!({"pattern": "a", "nodeId": node, "since": 0}), false),
                ],
            },
            Rule {
                member: "limit",
                text: "limit is a whole number from 1 to 200, else `Invalid limit` (protocol 1.5.0)",
                needs: &[("pattern", None), ("limit", None), ("nodeId", None)],
                probes: vec![
                    (json!({"pattern": "a", "nodeId": node, "limit": 0}), true),
                    (json!({"pattern": "a", "nodeId": node, "limit": 201}), true),
                    (json!({"pattern": "a", "nodeId": node, "limit": 1.5}), true),
                    (json!({"pattern": "a", "nodeId": node, "limit": -1}), true),
                    (json!({"pattern": "a", "nodeId": node, "limit": 1}), false),
                    (json!({"pattern": "a", "nodeId": node, "limit": 200}), false),
                ],
            },
            Rule {
                member: "context",
                text: "context is a whole number from 0 to 5, else `Invalid context` (protocol 1.5.0)",
                needs: &[("pattern", None), ("context", None), ("nodeId", None)],
                probes: vec![
                    (json!({"pattern": "a", "nodeId": node, "context": -1}), true),
                    (json!({"pattern": "a", "nodeId": node, "context": 6}), true),
                    (json!({"pattern": "a", "nodeId": node, "context": 0.5}), true),
                    (json!({"pattern": "a", "nodeId": node, "context": 0}), false),
                    (json!({"pattern": "a", "nodeId": node, "context": 5}), false),
                ],
            },
        ],
        _ => Vec::new(),
    }
}

/// The step-6 rules of `operation`, on the server's catalog `served`.
pub(crate) async fn check(ctx: &mut Ctx, operation: &Operation, served: &Served) {
    let name = operation.name();
    for rule in rules(name, served) {
        let id = format!("validate.operation-rule:{name}.{}", rule.member);
        let lacking = rule.needs.iter().find(|(member, value)| match value {
            Some(value) => !served.has_value(member, value),
            None => !served.has(member),
        });
        if let Some((member, value)) = lacking {
            let what = value
                .map_or_else(|| (*member).to_owned(), |value| format!("{member} value {value:?}"));
            ctx.skip(
                &id,
                SECTION,
                rule.text,
                &format!("the server's catalog has no {name}.{what}"),
            );
            continue;
        }
        if rule.probes.is_empty() {
            ctx.skip(
                &id,
                SECTION,
                rule.text,
                &format!("the server's catalog requires {name}.{}", rule.member),
            );
            continue;
        }
        let message = ValidationError::InvalidArgument(rule.member.to_owned()).to_string();
        let mut probes = Vec::new();
        for (args, refused) in rule.probes {
            let body = json!({"operation": name, "args": args}).to_string();
            let expect = if refused {
                Expect::error(400, message.clone())
            } else {
                Expect::NotError(message.clone())
            };
            probes.push((Who::First, ctx.authed(Who::First, body), expect));
        }
        if rule.member == "keys" {
            // An unknown member anywhere is reported before a bad key (step 5 before step 6).
            let body = format!(
                r#"{{"operation":{},"args":{{"nodeId":{},"keys":["NoSuchKey"],"{GUARD}":1}}}}"#,
                json!(name),
                json!(ABSENT)
            );
            let unknown = ValidationError::UnknownArgument(GUARD.to_owned()).to_string();
            probes.push((Who::First, ctx.authed(Who::First, body), Expect::error(400, unknown)));
        }
        ctx.expect(&id, SECTION, rule.text, probes).await;
    }
}
