//! The members and operations since 1.4.0, each run only when the server's catalog has it
//! ([`Ctx::has`]): 1.4.0's screen view, `until: "change"` and `keep: false`; 1.5.0's
//! `terminal_list`, `terminal_search`, `anyOf` with the index that matched, `regex`,
//! `until: "input"` and `notify` (`docs/protocol-changelog.md`). With `--mutating`, on the run's
//! shell and run nodes of its own, closed again by the group.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use termsprawl_protocol::results::member::{CURSOR, EXIT_CODE, OUTPUT, RUNNING};

use super::{State, shaped, skip, verdict};
use crate::ctx::{Ctx, Who};

const V14: &str = "protocol-changelog.md 1.4.0";
const V15: &str = "protocol-changelog.md 1.5.0";

/// What a rule is about: the operation, its member (empty: the operation itself) and the enum
/// value, which the server's catalog must have for the rule to run.
type About = (&'static str, &'static str, Option<&'static str>);

/// The rules of this group: id, section, rule, and what it is about.
pub(crate) const RULES: &[(&str, &str, &str, About)] = &[
    (
        "wait.read-screen",
        V14,
        "terminal_read view screen answers the visible rows with size and cursor position, one line per row",
        ("terminal_read", "view", Some("screen")),
    ),
    (
        "wait.until-change",
        V14,
        "terminal_wait until change after a cursor is reached by the next output, and answers it",
        ("terminal_wait", "until", Some("change")),
    ),
    (
        "wait.keep-false",
        V14,
        "terminal_run keep false of a command that exits in time answers its output and leaves no node behind",
        ("terminal_run", "keep", None),
    ),
    (
        "survey.list",
        V15,
        "terminal_list answers one entry per terminal with the contract's members: the run's shell (kind shell) and an exited run node (kind run, its command, exitCode 3, endedAt)",
        ("terminal_list", "", None),
    ),
    (
        "survey.search",
        V15,
        "terminal_search finds a line a run node printed, in that node and across every terminal, and terminal_read since its cursor reads on from that line",
        ("terminal_search", "pattern", None),
    ),
    (
        "survey.search-bad-pattern",
        V15,
        "terminal_search with a regex that does not compile fails with `Invalid pattern: <reason>`",
        ("terminal_search", "regex", None),
    ),
    (
        "wait.any-of",
        V15,
        "terminal_wait until text with anyOf is reached by the item printed and answers its index as matched, with matchCursor at the start of the match",
        ("terminal_wait", "anyOf", None),
    ),
    (
        "wait.regex",
        V15,
        "terminal_wait until text with regex true is reached by a line the pattern matches",
        ("terminal_wait", "regex", None),
    ),
    (
        "wait.until-input",
        V15,
        "terminal_wait until input is reached when a command waits at a read prompt, naming the program in inputBy",
        ("terminal_wait", "until", Some("input")),
    ),
    (
        "wait.until-input-sleep",
        V15,
        "terminal_wait until input is not reached while a command sleeps",
        ("terminal_wait", "until", Some("input")),
    ),
    (
        "notify.one-notice",
        V15,
        "terminal_run notify true of a command that ends after the answer puts exactly one notice naming the node into the caller's own terminal",
        ("terminal_run", "notify", None),
    ),
    (
        "notify.line-format",
        V15,
        "the notice is the line `[termsprawl] <nodeId> \"<command>\" exited <code> after <duration>; read it with terminal_read {\"nodeId\":\"<nodeId>\",\"since\":<cursor>}` (strict)",
        ("terminal_run", "notify", None),
    ),
];

/// The section and rule of `id` in this table (empty when it has none).
pub(super) fn rule(id: &str) -> (&'static str, &'static str) {
    RULES
        .iter()
        .find(|(known, ..)| *known == id)
        .map_or(("", ""), |(_, section, rule, _)| (*section, *rule))
}

/// Skips every rule of the group with `why`.
pub(crate) fn skip_all(ctx: &mut Ctx, why: &str) {
    for (id, ..) in RULES {
        skip(ctx, id, why);
    }
}

/// Whether the catalog has what rule `id` is about; when it does not, the skip is recorded.
fn about(ctx: &mut Ctx, id: &str) -> bool {
    let Some((_, _, _, (operation, member, value))) = RULES.iter().find(|(known, ..)| *known == id)
    else {
        return false;
    };
    let has =
        if member.is_empty() { ctx.lists(operation) } else { ctx.has(operation, member, *value) };
    if !has {
        let what = match (member.is_empty(), value) {
            (true, _) => format!("the server does not list {operation}"),
            (false, Some(value)) => {
                format!("the server's catalog has no {operation}.{member} value {value:?}")
            }
            (false, None) => format!("the server's catalog has no {operation}.{member}"),
        };
        skip(ctx, id, &what);
    }
    has
}

fn text(value: &Value) -> &str {
    value[OUTPUT].as_str().unwrap_or_default()
}

/// A run node printing `command`'s output, not waited for; its node id and the cursor of the
/// answer.
async fn start(
    ctx: &mut Ctx,
    state: &mut State,
    command: &str,
    title: &str,
) -> Option<(String, u64)> {
    let ran = shaped(
        ctx,
        state,
        None,
        "terminal_run",
        json!({"command": command, "title": title, "timeoutMs": 0}),
    )
    .await?;
    Some((ran["nodeId"].as_str()?.to_owned(), ran[CURSOR].as_u64()?))
}

/// The group; `shell` is the run's shell terminal, `exited` the run node that printed
/// `conformance-ran` and exited 3 (when `terminal_run` worked), with its command.
pub(crate) async fn check(
    ctx: &mut Ctx,
    state: &mut State,
    shell: &str,
    exited: Option<(&str, &str)>,
) {
    read_screen(ctx, state, shell).await;
    until_change(ctx, state).await;
    keep_false(ctx, state).await;
    list(ctx, shell, exited).await;
    search(ctx, state, exited).await;
    any_of(ctx, state).await;
    until_input(ctx, state).await;
    notify(ctx, state).await;
}

async fn read_screen(ctx: &mut Ctx, state: &mut State, shell: &str) {
    if !about(ctx, "wait.read-screen") {
        return;
    }
    let args = json!({"nodeId": shell, "view": "screen"});
    let called = ctx.call(Who::First, "terminal_read", &args).await;
    let problem = match called.value() {
        Ok(value) => {
            state.saw(shell, &value);
            crate::shapes::check(ctx.version, "terminal_read", &args, &value)
        }
        Err(problem) => Some(problem),
    };
    match problem {
        None => verdict(ctx, "wait.read-screen", None),
        Some(problem) => {
            let (section, rule) = rule("wait.read-screen");
            ctx.fail_with(
                "wait.read-screen",
                section,
                rule,
                &problem,
                &called.sent(),
                &called.received(),
            );
        }
    }
}

async fn until_change(ctx: &mut Ctx, state: &mut State) {
    if !about(ctx, "wait.until-change") {
        return;
    }
    let command = "sleep 1; printf 'conformance-%s\\n' changed; sleep 30";
    let Some((node, since)) = start(ctx, state, command, "conformance-change").await else {
        skip(ctx, "wait.until-change", "terminal_run of the command failed");
        return;
    };
    let started = Instant::now();
    let args = json!({"nodeId": node, "until": "change", "since": since, "timeoutMs": 10000});
    let waited = shaped(ctx, state, None, "terminal_wait", args).await;
    let problem = match waited {
        None => Some("terminal_wait until change failed".to_owned()),
        Some(value) if value["reached"] != true => {
            Some(format!("reached is {} within 10 s", value["reached"]))
        }
        Some(value) if text(&value).is_empty() => Some("reached with no output".to_owned()),
        Some(value) if value[CURSOR].as_u64().is_none_or(|cursor| cursor <= since) => {
            Some(format!("the cursor {} did not pass since {since}", value[CURSOR]))
        }
        Some(_) if started.elapsed() < Duration::from_millis(500) => Some(format!(
            "reached after {} ms, before the command printed (at 1 s)",
            started.elapsed().as_millis()
        )),
        Some(_) => None,
    };
    verdict(ctx, "wait.until-change", problem);
}

async fn keep_false(ctx: &mut Ctx, state: &mut State) {
    if !about(ctx, "wait.keep-false") {
        return;
    }
    let args = json!({"command": "printf 'conformance-%s\\n' discarded", "title": "conformance-keep", "keep": false, "timeoutMs": 10000});
    let Some(ran) = shaped(ctx, state, None, "terminal_run", args).await else {
        verdict(ctx, "wait.keep-false", Some("terminal_run keep false failed".to_owned()));
        return;
    };
    let node = ran["nodeId"].as_str().unwrap_or_default().to_owned();
    let mut problem = if ran[RUNNING] != false {
        Some(format!("running is {} after a command that exits at once", ran[RUNNING]))
    } else if !text(&ran).contains("conformance-discarded") {
        Some("the answer's output lacks conformance-discarded".to_owned())
    } else {
        None
    };
    if problem.is_none() {
        let listed = ctx.call(Who::First, "canvas_list", &json!({})).await;
        problem = match listed.value() {
            Ok(nodes) => nodes
                .as_array()
                .is_some_and(|nodes| {
                    nodes
                        .iter()
                        .any(|item| item["nodeId"] == node.as_str() || item["id"] == node.as_str())
                })
                .then(|| {
                    format!("{node} is still on the canvas after the answer that reported its end")
                }),
            Err(problem) => Some(problem),
        };
    }
    if problem.is_none() {
        state.made.retain(|made| *made != node);
    }
    verdict(ctx, "wait.keep-false", problem);
}

async fn list(ctx: &mut Ctx, shell: &str, exited: Option<(&str, &str)>) {
    if !about(ctx, "survey.list") {
        return;
    }
    let Some((run, command)) = exited else {
        skip(ctx, "survey.list", "terminal_run of the exiting command failed");
        return;
    };
    let called = ctx.call(Who::First, "terminal_list", &json!({})).await;
    let problem = match called.value() {
        Err(problem) => Some(problem),
        Ok(value) => crate::shapes::check(ctx.version, "terminal_list", &json!({}), &value)
            .or_else(|| {
                let entries = value.as_array()?;
                let find = |node: &str| entries.iter().find(|entry| entry["nodeId"] == node);
                match (find(shell), find(run)) {
                    (None, _) => Some(format!("the run's shell {shell} is not listed")),
                    (_, None) => Some(format!("the run node {run} is not listed")),
                    (Some(entry), _) if entry["kind"] != "shell" || !entry["command"].is_null() => {
                        Some(format!("the shell is listed as {entry}"))
                    }
                    (_, Some(entry))
                        if entry["kind"] != "run"
                            || entry["command"] != command
                            || entry[RUNNING] != false
                            || entry[EXIT_CODE] != 3
                            || entry["endedAt"].is_null() =>
                    {
                        Some(format!("the run node that exited 3 is listed as {entry}"))
                    }
                    _ => None,
                }
            }),
    };
    match problem {
        None => verdict(ctx, "survey.list", None),
        Some(problem) => {
            let (section, rule) = rule("survey.list");
            ctx.fail_with(
                "survey.list",
                section,
                rule,
                &problem,
                &called.sent(),
                &called.received(),
            );
        }
    }
}

async fn search(ctx: &mut Ctx, state: &mut State, exited: Option<(&str, &str)>) {
    if about(ctx, "survey.search") {
        match exited {
            None => skip(ctx, "survey.search", "terminal_run of the exiting command failed"),
            Some((run, _)) => {
                let problem = search_finds(ctx, state, run).await;
                verdict(ctx, "survey.search", problem);
            }
        }
    }
    if about(ctx, "survey.search-bad-pattern") {
        let called = ctx
            .call(
                Who::First,
                "terminal_search",
                &json!({"pattern": "conformance-(", "regex": true}),
            )
            .await;
        let refused = called.failed()
            && called.answer.as_ref().ok().and_then(crate::raw::Response::json).is_some_and(
                |value| {
                    value["error"]
                        .as_str()
                        .is_some_and(|error| error.starts_with("Invalid pattern: "))
                },
            );
        if refused {
            verdict(ctx, "survey.search-bad-pattern", None);
        } else {
            let (section, rule) = rule("survey.search-bad-pattern");
            ctx.fail_with(
                "survey.search-bad-pattern",
                section,
                rule,
                "expected HTTP 400 with an error starting `Invalid pattern: `",
                &called.sent(),
                &called.received(),
            );
        }
    }
}

/// `conformance-ran` found in `run` (with one line of context) and across every terminal, and
/// read on from the match's cursor.
async fn search_finds(ctx: &mut Ctx, state: &mut State, run: &str) -> Option<String> {
    let args = json!({"pattern": "conformance-ran", "nodeId": run, "context": 1});
    let called = ctx.call(Who::First, "terminal_search", &args).await;
    let value = match called.value() {
        Ok(value) => value,
        Err(problem) => return Some(format!("{problem}; sent {}", called.sent())),
    };
    if let Some(problem) = crate::shapes::check(ctx.version, "terminal_search", &args, &value) {
        return Some(format!("{problem}: {}", called.received()));
    }
    let matches = value["matches"].as_array().cloned().unwrap_or_default();
    let Some(found) = matches.iter().find(|item| {
        item["line"].as_str().is_some_and(|line| line.trim_end() == "conformance-ran")
    }) else {
        return Some(format!("no match with the line conformance-ran in {run}: {value}"));
    };
    if found["nodeId"] != run {
        return Some(format!("the match names {}, not {run}", found["nodeId"]));
    }
    let cursor = found[CURSOR].as_u64().unwrap_or_default();
    let read =
        shaped(ctx, state, None, "terminal_read", json!({"nodeId": run, "since": cursor})).await;
    if !read.as_ref().is_some_and(|read| text(read).starts_with("conformance-ran")) {
        return Some(format!(
            "terminal_read since the match's cursor {cursor} does not start with the line: {:?}",
            read.as_ref().map(text)
        ));
    }
    let everywhere = ctx
        .call(Who::First, "terminal_search", &json!({"pattern": "conformance-ran", "limit": 200}))
        .await;
    match everywhere.value() {
        Ok(value)
            if value["matches"]
                .as_array()
                .is_some_and(|items| items.iter().any(|item| item["nodeId"] == run)) =>
        {
            None
        }
        Ok(value) => {
            Some(format!("a search across every terminal does not find the line in {run}: {value}"))
        }
        Err(problem) => Some(format!("a search across every terminal failed: {problem}")),
    }
}

async fn any_of(ctx: &mut Ctx, state: &mut State) {
    let wants_any = about(ctx, "wait.any-of");
    let wants_regex = about(ctx, "wait.regex");
    if !wants_any && !wants_regex {
        return;
    }
    let command =
        "sleep 0.5; printf 'conformance-%s\\n' FAILED; printf 'listening on port %s\\n' 8080";
    let Some((node, since)) = start(ctx, state, command, "conformance-anyof").await else {
        for id in ["wait.any-of", "wait.regex"] {
            if (id == "wait.any-of" && wants_any) || (id == "wait.regex" && wants_regex) {
                skip(ctx, id, "terminal_run of the printing command failed");
            }
        }
        return;
    };
    if wants_any {
        let args = json!({"nodeId": node, "until": "text", "anyOf": ["conformance-PASSED", "conformance-FAILED"], "since": since, "timeoutMs": 10000});
        let problem = match shaped(ctx, state, None, "terminal_wait", args).await {
            None => Some("terminal_wait with anyOf failed".to_owned()),
            Some(value) if value["reached"] != true => {
                Some(format!("reached is {} within 10 s", value["reached"]))
            }
            Some(value) if value["matched"] != 1 => {
                Some(format!("matched is {}, expected 1 (conformance-FAILED)", value["matched"]))
            }
            Some(value) => match (value["matchCursor"].as_u64(), value[CURSOR].as_u64()) {
                (Some(at), Some(end)) if at >= since && at < end => None,
                _ => Some(format!(
                    "matchCursor {} is not a cursor between since {since} and the answer's cursor {}",
                    value["matchCursor"], value[CURSOR]
                )),
            },
        };
        verdict(ctx, "wait.any-of", problem);
    }
    if wants_regex {
        let args = json!({"nodeId": node, "until": "text", "text": "listening on port 8[0-9]+", "regex": true, "since": since, "timeoutMs": 10000});
        let problem = match shaped(ctx, state, None, "terminal_wait", args).await {
            None => Some("terminal_wait with regex failed".to_owned()),
            Some(value) if value["reached"] != true => {
                Some(format!("reached is {} within 10 s", value["reached"]))
            }
            Some(value) if value["matched"] != 0 => {
                Some(format!("matched is {}, expected 0 (text)", value["matched"]))
            }
            Some(_) => None,
        };
        verdict(ctx, "wait.regex", problem);
    }
}

async fn until_input(ctx: &mut Ctx, state: &mut State) {
    if !about(ctx, "wait.until-input") {
        skip(
            ctx,
            "wait.until-input-sleep",
            "the server's catalog has no terminal_wait.until value \"input\"",
        );
        return;
    }
    // `sh -c` runs it: `read -p` is bash's, so the prompt is printed first.
    let command =
        "printf 'conformance-name? '; read -r answer; printf 'conformance-%s\\n' \"$answer\"";
    match start(ctx, state, command, "conformance-input").await {
        None => skip(ctx, "wait.until-input", "terminal_run of the prompting command failed"),
        Some((node, _)) => {
            let started = Instant::now();
            let args = json!({"nodeId": node, "until": "input", "timeoutMs": 10000});
            let problem = match shaped(ctx, state, None, "terminal_wait", args).await {
                None => Some("terminal_wait until input failed".to_owned()),
                Some(value) if value["reached"] != true => Some(format!(
                    "reached is {} after {} ms",
                    value["reached"],
                    started.elapsed().as_millis()
                )),
                Some(value) if value["inputBy"].as_str().is_none_or(str::is_empty) => {
                    Some(format!("inputBy is {}, expected the program's name", value["inputBy"]))
                }
                Some(_) => None,
            };
            verdict(ctx, "wait.until-input", problem);
        }
    }
    match start(ctx, state, "sleep 30", "conformance-sleep").await {
        None => skip(ctx, "wait.until-input-sleep", "terminal_run of sleep failed"),
        Some((node, _)) => {
            // Past the start of `sleep`, so that no shell start-up read is seen.
            tokio::time::sleep(Duration::from_millis(300)).await;
            let args = json!({"nodeId": node, "until": "input", "timeoutMs": 1500});
            let problem = match shaped(ctx, state, None, "terminal_wait", args).await {
                None => Some("terminal_wait until input failed".to_owned()),
                Some(value) if value["reached"] != false => Some(format!(
                    "reached is {} while the command sleeps (inputBy {})",
                    value["reached"], value["inputBy"]
                )),
                Some(_) => None,
            };
            verdict(ctx, "wait.until-input-sleep", problem);
        }
    }
}

/// `terminal_run notify` of `sleep 1; exit 4` with a 100 ms timeout: the caller's own terminal
/// gets exactly one line naming the node within 10 s, and (strict) the line has the contract's
/// format.
async fn notify(ctx: &mut Ctx, state: &mut State) {
    if !about(ctx, "notify.one-notice") {
        skip(ctx, "notify.line-format", "the server's catalog has no terminal_run.notify");
        return;
    }
    let me = ctx.first.node_id().to_owned();
    let before = ctx.call(Who::First, "terminal_read", &json!({"nodeId": me, "maxChars": 1})).await;
    let Some(mine) = before.value().ok().and_then(|value| value[CURSOR].as_u64()) else {
        for id in ["notify.one-notice", "notify.line-format"] {
            skip(ctx, id, "terminal_read of the caller's own terminal answered no cursor");
        }
        return;
    };
    let command = "sleep 1; exit 4";
    let args = json!({"command": command, "title": "conformance-notify", "notify": true, "timeoutMs": 100});
    let Some(ran) = shaped(ctx, state, None, "terminal_run", args).await else {
        verdict(ctx, "notify.one-notice", Some("terminal_run with notify failed".to_owned()));
        skip(ctx, "notify.line-format", "terminal_run with notify failed");
        return;
    };
    let node = ran["nodeId"].as_str().unwrap_or_default().to_owned();
    if ran[RUNNING] != true {
        let why = format!(
            "terminal_run answered running {} for `sleep 1` with timeoutMs 100",
            ran[RUNNING]
        );
        verdict(ctx, "notify.one-notice", Some(why.clone()));
        skip(ctx, "notify.line-format", &why);
        return;
    }
    let marker = format!("[termsprawl] {node} ");
    let args =
        json!({"nodeId": me, "until": "text", "text": marker, "since": mine, "timeoutMs": 10000});
    let called = ctx.call(Who::First, "terminal_wait", &args).await;
    let reached = called.value().is_ok_and(|value| value["reached"] == true);
    // A second notice would follow the first at once; give it time to show.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let read = ctx
        .call(
            Who::First,
            "terminal_read",
            &json!({"nodeId": me, "since": mine, "maxChars": 100_000}),
        )
        .await;
    let output = read.value().ok().map(|value| text(&value).to_owned()).unwrap_or_default();
    let count = output.matches(&marker).count();
    let problem = if !reached {
        Some(format!(
            "no line starting {marker:?} reached the caller's terminal {me} within 10 s: {}",
            called.received()
        ))
    } else if count != 1 {
        Some(format!("{count} notices for {node} in the caller's terminal, expected exactly one"))
    } else {
        None
    };
    let failed = problem.is_some();
    verdict(ctx, "notify.one-notice", problem);
    if failed {
        skip(ctx, "notify.line-format", "no single notice to check");
        return;
    }
    let line = output
        .find(&marker)
        .map_or("", |at| output[at..].lines().next().unwrap_or_default())
        .trim_end();
    verdict(ctx, "notify.line-format", notice_problem(line, &node, command, 4));
}

/// Why `line` is not the notice of `node` running `command` that exited with `code`, or `None`:
/// `[termsprawl] <nodeId> "<command>" exited <code> after <duration>; read it with
/// terminal_read {"nodeId":"<nodeId>","since":<cursor>}`.
pub(crate) fn notice_problem(line: &str, node: &str, command: &str, code: i32) -> Option<String> {
    let head = format!("[termsprawl] {node} \"{command}\" exited {code} after ");
    let Some(rest) = line.strip_prefix(&head) else {
        return Some(format!("{line:?} does not start with {head:?}"));
    };
    let Some((duration, read)) = rest.split_once("; read it with terminal_read ") else {
        return Some(format!("{line:?} lacks \"; read it with terminal_read \""));
    };
    let duration_ok = !duration.is_empty()
        && duration.starts_with(|c: char| c.is_ascii_digit())
        && duration.chars().all(|c| c.is_ascii_digit() || "hms.".contains(c));
    if !duration_ok {
        return Some(format!("the duration {duration:?} is not like 7m02s or 1.2s"));
    }
    let since = read
        .strip_prefix(&format!("{{\"nodeId\":\"{node}\",\"since\":"))
        .and_then(|tail| tail.strip_suffix('}'));
    match since {
        Some(digits) if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => None,
        _ => Some(format!("{read:?} is not {{\"nodeId\":\"{node}\",\"since\":<cursor>}}")),
    }
}

#[cfg(test)]
mod tests {
    use super::notice_problem;

    #[test]
    fn the_notice_line_is_checked_part_by_part() {
        let good = r#"[termsprawl] terminal-1a2b "make test" exited 2 after 7m02s; read it with terminal_read {"nodeId":"terminal-1a2b","since":4711}"#;
        assert_eq!(notice_problem(good, "terminal-1a2b", "make test", 2), None);
        for (line, part) in [
            (good.replace("exited 2", "exited 3"), "does not start"),
            (good.replace("7m02s", "a while"), "duration"),
            (good.replace("; read it", ", read it"), "lacks"),
            (good.replace("4711}", "x}"), "is not"),
            (good.replace(r#""nodeId":"terminal-1a2b""#, r#""nodeId":"other""#), "is not"),
        ] {
            let problem = notice_problem(&line, "terminal-1a2b", "make test", 2).unwrap();
            assert!(problem.contains(part), "{line}: {problem}");
        }
    }
}
