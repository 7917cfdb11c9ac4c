//! The server's catalog as its validator shows it: for every operation the server lists and this
//! suite's table knows, which arguments it requires (in its order), which members of the table it
//! lacks, and which enum values it accepts (`spec/protocol.md` §5, "A rule about a member binds a
//! server only if its catalog has the member"; §10).
//!
//! `session_info` lists operation names only and the `inputSchema` is not reachable over the tool
//! route, so the catalog is read with probes that can never run an operation: each ends with the
//! guard member `zzz_conformance`, which step 5 refuses.
//!
//! - **Required arguments**: `{guard}` is answered `Missing argument: <first required>` (step 4
//!   comes before step 5); adding that argument with a passing value gives the next, until the
//!   answer is the guard's `Unknown argument`. A 1.2.0 server answers `terminal_input` with
//!   `Missing argument: text`, which 1.4.0 made optional. The table's required arguments are
//!   added after them (no member of the table became required later), so a server that checks
//!   unknown members first still meets every missing-argument rule.
//! - **Members**: the required arguments, the member with a passing value and the guard:
//!   `Unknown argument: <member>` means the catalog lacks it (a 1.2.0 `terminal_read.since`).
//! - **Enum values**: each value of the table, alone with the required arguments and the guard:
//!   the guard's `Unknown argument` means the value is listed, `Invalid <member>` that it is not.
//!   Only the values a later protocol added to a member ([`LATER_VALUES`]) may be absent; every
//!   other value is still probed by `validate.values:OP.ARG`, which fails a server that refuses it.
//!
//! Every probe builds its body from what was read before it ([`Served::members_with`]), so the
//! validation rules probe exactly the server's catalog.

use termsprawl_protocol::{Operation, ParamKind, ValidationError};

use crate::ctx::{Ctx, Who};
use crate::served::{Served, string};

/// The unknown member that ends every probe.
pub(crate) const GUARD: &str = "zzz_conformance";

/// The enum values a protocol version added to a member that existed before it, with the version:
/// a server whose catalog lacks one of them is of an earlier version, not wrong.
pub(crate) const LATER_VALUES: &[(&str, &str, &str, &str)] = &[
    ("guide_read", "topic", "agents", "1.2.0"),
    ("agent_launch", "agent", "opencode", "1.2.0"),
    ("terminal_wait", "until", "change", "1.4.0"),
    ("terminal_wait", "until", "input", "1.5.0"),
];

/// `{"k":v,…}` from members whose values are JSON text, in the order given (repeats allowed).
pub(crate) fn object(members: &[(String, String)]) -> String {
    let inner: Vec<String> =
        members.iter().map(|(name, value)| format!("{}:{value}", string(name))).collect();
    format!("{{{}}}", inner.join(","))
}

/// `{"operation":…,"args":…}` with `args` as JSON text.
pub(crate) fn request(operation: &str, args: &str) -> String {
    format!(r#"{{"operation":{},"args":{args}}}"#, string(operation))
}

/// `members` and the guard, as an object.
pub(crate) fn with_guard(mut members: Vec<(String, String)>) -> String {
    members.push((GUARD.to_owned(), "1".to_owned()));
    object(&members)
}

/// The `error` of a 400 failure, or `None`.
async fn error_of(ctx: &mut Ctx, operation: &str, args: &str) -> Option<String> {
    let probe = ctx.authed(Who::First, request(operation, args));
    let response = ctx.send(Who::First, &probe).await.ok()?;
    if response.status != 400 {
        return None;
    }
    response.json()?.get("error")?.as_str().map(str::to_owned)
}

/// Reads the catalog of every operation [`Ctx::probed`] gives into [`Ctx::catalog`], with one
/// fact line naming what differs from this suite's table.
pub(crate) async fn read(ctx: &mut Ctx) {
    let mut differences = Vec::new();
    for operation in ctx.probed() {
        let served = read_one(ctx, operation).await;
        let table: Vec<&str> = operation
            .params()
            .iter()
            .filter(|param| param.required())
            .map(termsprawl_protocol::Param::name)
            .collect();
        let name = operation.name();
        if !served.read {
            differences.push(format!("{name}: its required arguments could not be read"));
        } else if served.required != table {
            differences.push(format!("{name} requires {:?}", served.required));
        }
        for member in served.absent.keys() {
            differences.push(format!("{name} has no {member}"));
        }
        for (member, values) in &served.lacks_values {
            differences.push(format!("{name}.{member} has no {values:?}"));
        }
        ctx.catalog.insert(name, served);
    }
    if !differences.is_empty() {
        ctx.report.fact(&format!(
            "the server's catalog differs from this suite's table (protocol {}), and its own is probed: {}",
            termsprawl_protocol::PROTOCOL_VERSION,
            differences.join("; ")
        ));
    }
}

async fn read_one(ctx: &mut Ctx, operation: &Operation) -> Served {
    let name = operation.name();
    let mut served = Served::default();
    let limit = operation.params().len() + 4;
    loop {
        let args = with_guard(served.members_with(operation, GUARD, None));
        let error = error_of(ctx, name, &args).await;
        let missing = error.as_deref().and_then(|error| error.strip_prefix("Missing argument: "));
        match missing {
            Some(member)
                if served.required.len() < limit
                    && !served.required.iter().any(|r| r == member) =>
            {
                served.required.push(member.to_owned());
            }
            _ => {
                served.read =
                    error == Some(ValidationError::UnknownArgument(GUARD.to_owned()).to_string());
                break;
            }
        }
    }
    // A required argument of the table stays required even when the server's answers do not show
    // it: a server that checks unknown members before missing ones answers the guard first, and
    // the missing-argument rules must still catch it.
    for param in operation.params().iter().filter(|param| param.required()) {
        if !served.required.iter().any(|required| required == param.name()) {
            served.required.push(param.name().to_owned());
        }
    }
    for param in operation.params() {
        let member = param.name();
        if served.required.iter().any(|required| required == member) {
            continue;
        }
        let value = served.filler(operation, member);
        let body = with_guard(served.members_with(operation, member, Some(&value)));
        let unknown = ValidationError::UnknownArgument(member.to_owned()).to_string();
        if error_of(ctx, name, &body).await.as_deref() == Some(unknown.as_str()) {
            served.absent.insert(
                member.to_owned(),
                format!(
                    "the server's catalog has no {name}.{member}: it answers `{unknown}` to {}",
                    request(name, &body)
                ),
            );
        }
    }
    for param in operation.params() {
        let (member, ParamKind::Enum(values)) = (param.name(), param.kind()) else { continue };
        if !served.has(member) {
            continue;
        }
        let mut accepted = Vec::new();
        let mut lacks = Vec::new();
        for value in values {
            let later = LATER_VALUES
                .iter()
                .any(|(op, arg, later, _)| *op == name && *arg == member && later == value);
            if !later {
                accepted.push(value.clone());
                continue;
            }
            let body = with_guard(served.members_with(operation, member, Some(&string(value))));
            let guard = ValidationError::UnknownArgument(GUARD.to_owned()).to_string();
            if error_of(ctx, name, &body).await.as_deref() == Some(guard.as_str()) {
                accepted.push(value.clone());
            } else {
                lacks.push(value.clone());
            }
        }
        served.values.insert(member.to_owned(), accepted);
        if !lacks.is_empty() {
            served.lacks_values.insert(member.to_owned(), lacks);
        }
    }
    served
}

#[cfg(test)]
mod tests {
    use super::*;

    fn served(required: &[&str]) -> Served {
        Served {
            required: required.iter().map(|name| (*name).to_owned()).collect(),
            read: true,
            ..Served::default()
        }
    }

    #[test]
    fn a_required_member_is_filled_where_the_server_requires_it_and_others_come_last() {
        let input = termsprawl_protocol::operation("terminal_input").unwrap();
        let old = served(&["nodeId", "text"]);
        assert_eq!(
            object(&old.members_with(input, "keys", Some("true"))),
            r#"{"nodeId":"conformance-absent-node","text":"conformance-absent-node","keys":true}"#
        );
        assert_eq!(
            object(&old.members_with(input, "text", None)),
            r#"{"nodeId":"conformance-absent-node"}"#
        );
        let new = served(&["nodeId"]);
        assert_eq!(
            object(&new.members_with(input, "text", Some("1"))),
            r#"{"nodeId":"conformance-absent-node","text":1}"#
        );
    }

    #[test]
    fn the_enum_filler_is_the_first_value_the_server_accepts() {
        let wait = termsprawl_protocol::operation("terminal_wait").unwrap();
        let mut catalog = served(&["nodeId", "until"]);
        assert_eq!(catalog.filler(wait, "until"), r#""exit""#);
        catalog.values.insert("until".to_owned(), vec!["text".to_owned()]);
        assert_eq!(catalog.filler(wait, "until"), r#""text""#);
        assert!(catalog.has_value("until", "text") && !catalog.has_value("until", "input"));
        catalog.absent.insert("until".to_owned(), String::new());
        assert!(!catalog.has_value("until", "text"));
        assert_eq!(catalog.filler(wait, "unknownMember"), r#""conformance-absent-node""#);
    }
}
