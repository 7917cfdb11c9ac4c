//! The usage Markdown (`spec/shell-conventions.md` §7): one renderer for `help`, `help OP`,
//! `usage`, the skills and the generated command reference, reading the same [`Command`]s the
//! parser reads.

use std::fmt::Write as _;

use crate::describe::{Command, FlagKind, Param, Scalar};

/// The whole usage: the Calling section, then every command's section.
pub(crate) fn usage(commands: &[Command]) -> String {
    let mut out = calling(commands);
    out.push_str("\n## Commands\n");
    for command in commands {
        out.push('\n');
        out.push_str(&section(command));
    }
    out.push_str(PROGRAM_COMMANDS);
    out
}

/// The help: the Calling section, an index of the commands, and the program's own commands.
pub(crate) fn help(commands: &[Command]) -> String {
    let mut out = calling(commands);
    out.push_str("\n## Commands\n\n");
    for command in commands {
        let first_line = command.description().trim().lines().next().unwrap_or_default();
        let _ = writeln!(out, "- `{}`: {first_line}", command.name());
    }
    out.push_str(PROGRAM_COMMANDS);
    out
}

/// The program's own commands, listed after the index so that `--help` shows every mode.
const PROGRAM_COMMANDS: &str = "
## Program commands

- `termsprawlctl help [OPERATION | acp | mcp | doctor | call]`: this help, or the usage of one operation or mode.
- `termsprawlctl schema OPERATION`: the JSON Schema of an operation's arguments.
- `termsprawlctl usage`: the usage of every operation, as Markdown.
- `termsprawlctl skills --out DIR`: write one skill file per guide topic into `DIR`.
- `termsprawlctl completions bash|zsh|fish|elvish|powershell`: a shell completion script.
- `termsprawlctl man`: the manual page, as roff.
- `termsprawlctl doctor`: check the connection to termsprawl and print the whole result.
- `termsprawlctl call OPERATION [JSON_ARGS]`: run an operation and print the whole result as JSON.
- `termsprawlctl mcp [--read-only] [--tools NAME,NAME...] [--max-wait-ms MS]`: serve the operations to an MCP host over stdin and stdout; `--read-only` keeps the read-only ones, `--tools` only those named, `--max-wait-ms` is the longest a wait runs in one tool call (50000 when omitted).
- `termsprawlctl acp [OPTIONS] -- AGENT [ARG]...`: run an ACP agent (Gemini CLI, Codex, Claude, OpenCode, fast-agent, ...) as a chat in this terminal, with termsprawl's tools.
- `termsprawlctl --version`: the program's version.
";

/// The `## Calling` section (§7.3), with the sentences about object fields, maps and booleans
/// only when some command has such a flag.
pub(crate) fn calling(commands: &[Command]) -> String {
    let field_example = find_flag(commands, |param, flag| {
        flag.contains('.') && !matches!(param.flag_kind(), Some(FlagKind::Map(_)))
    });
    let map_example =
        find_flag(commands, |param, _| matches!(param.flag_kind(), Some(FlagKind::Map(_))));
    let has_boolean = find_flag(commands, |param, _| {
        matches!(
            param.flag_kind(),
            Some(FlagKind::Scalar(Scalar::Boolean) | FlagKind::Array(Scalar::Boolean))
        )
    })
    .is_some();

    let mut out = String::from(CALLING_HEAD);
    if let Some((command, flag)) = field_example {
        let _ = writeln!(out, "termsprawlctl {command} --{flag} value");
    }
    if let Some((command, flag)) = map_example {
        let _ = writeln!(out, "termsprawlctl {command} --{flag} key=value");
    }
    out.push_str(CALLING_QUOTING);
    if has_boolean {
        out.push_str(
            "A boolean flag stands alone: `--name` means true and `--name=false` means false.\n",
        );
    }
    out.push_str(CALLING_TAIL);
    out
}

const CALLING_HEAD: &str = r#"## Calling `termsprawlctl`

Each call runs one operation. Give its arguments as flags, as one JSON object, or both; flags are the easiest to get right.

```sh
termsprawlctl terminal_submit --nodeId term-2 --command "echo 'hello'"
termsprawlctl canvas_select --nodeIds sticky-1 --nodeIds term-2
"#;

const CALLING_QUOTING: &str = r#"```

Put double quotes around a value that contains a space, a `'` or a line break, and inside them write `\"`, `\$`, `` \` `` and `\\` for those characters.
Inside double quotes `\n` stays a backslash and an n; type a real line break instead.
"#;

const CALLING_TAIL: &str = r#"
The JSON object goes after the flags and adds to them; give each argument only once.
Write it in single quotes on one line, with `\n` for line breaks inside strings:

```sh
termsprawlctl terminal_input --nodeId term-2 '{"text": "y\n"}'
```

If the JSON contains a `'`, pass it on stdin:

```sh
termsprawlctl terminal_submit - <<'EOF'
{"nodeId": "term-2", "command": "grep -n 'TODO' notes.txt"}
EOF
```

The exit status says what happened:

- 0: the operation succeeded; its result is on stdout. If stderr says the output could not be written, do not run the call again.
- 1: the operation failed; stderr says why. Correct the call before running it again. After a connection failure nothing is retried for you, so check whether the change happened before repeating it.
- 2: the command line was not understood or no session was found; nothing was sent.

Images are saved as files, and their paths are printed in place of the data.
`termsprawlctl help OPERATION` describes one operation and `termsprawlctl schema OPERATION` prints its JSON Schema.
`--session FILE`, `--out DIR` and `--progress` go before the operation name.
`terminal_wait` and `terminal_run` wait up to 600000 ms here (a server alone 30000), showing their progress on stderr when it is a terminal or with `--progress`.
`termsprawlctl doctor` checks the connection to termsprawl.
"#;

/// The first flag, in table order, that `wanted` picks: its command and flag name.
fn find_flag(
    commands: &[Command],
    wanted: impl Fn(&Param, &str) -> bool + Copy,
) -> Option<(&str, &str)> {
    fn search(params: &[Param], wanted: impl Fn(&Param, &str) -> bool + Copy) -> Option<&str> {
        params.iter().find_map(|param| match param.flag() {
            Some(flag) if wanted(param, flag) => Some(flag),
            _ => search(param.fields(), wanted),
        })
    }
    commands.iter().find_map(|command| Some((command.name(), search(command.params(), wanted)?)))
}

/// One command's section: heading, description, hints, synopsis and arguments.
pub(crate) fn section(command: &Command) -> String {
    let mut out = format!("### `{}`\n\n{}\n", command.name(), command.description().trim());
    let hints = hints(command);
    if !hints.is_empty() {
        let _ = writeln!(out, "\nHints from the tool: {}.", hints.join("; "));
    }
    let _ = write!(out, "\n```sh\n{}\n```\n", synopsis(command));
    if !command.params().is_empty() {
        out.push('\n');
        bullets(command.params(), &[], &mut out);
    }
    out
}

fn hints(command: &Command) -> Vec<&'static str> {
    let annotations = command.annotations();
    let mut hints = Vec::new();
    if annotations.read_only {
        hints.push("read-only");
    } else {
        if annotations.destructive {
            hints.push("may be destructive");
        }
        if annotations.idempotent {
            hints.push("idempotent");
        }
    }
    if annotations.open_world {
        hints.push("reaches outside systems");
    }
    hints
}

/// What the JSON argument is needed for, collected over the arguments.
#[derive(Default)]
struct JsonNeed {
    any: bool,
    required: bool,
}

fn synopsis(command: &Command) -> String {
    let mut out = format!("termsprawlctl {}", command.name());
    let mut json = JsonNeed::default();
    synopsis_flags(command.params(), true, &mut out, &mut json);
    if json.required {
        out.push_str(" (<json> | -)");
    } else if json.any {
        out.push_str(" [<json> | -]");
    }
    out
}

fn synopsis_flags(
    params: &[Param],
    ancestors_required: bool,
    out: &mut String,
    json: &mut JsonNeed,
) {
    for param in params {
        let required = ancestors_required && param.required();
        match (param.flag(), param.flag_kind()) {
            (Some(flag), Some(kind)) => {
                let body = match kind {
                    FlagKind::Scalar(Scalar::Boolean) => format!("--{flag}"),
                    FlagKind::Array(Scalar::Boolean) => format!("--{flag} ..."),
                    FlagKind::Scalar(scalar) => format!("--{flag} <{}>", scalar.as_str()),
                    FlagKind::Array(scalar) => format!("--{flag} <{}> ...", scalar.as_str()),
                    FlagKind::Map(scalar) => format!("--{flag} <key>=<{}> ...", scalar.as_str()),
                };
                if required {
                    let _ = write!(out, " {body}");
                } else {
                    let _ = write!(out, " [{body}]");
                }
            }
            _ if param.has_any_flag() => synopsis_flags(param.fields(), required, out, json),
            _ => {
                json.any = true;
                json.required |= required;
            }
        }
    }
}

fn bullets(params: &[Param], parents: &[&str], out: &mut String) {
    for param in params {
        let mut path = parents.to_vec();
        path.push(param.name());
        let name = match param.flag() {
            Some(flag) => format!("--{flag}"),
            None => path.join("."),
        };
        let mut facts = vec![param.type_text()];
        if param.repeated() {
            facts.push("repeatable".to_owned());
        }
        if param.required() {
            facts.push("required".to_owned());
        }
        if !param.has_any_flag() {
            facts.push("JSON only".to_owned());
        }
        let indent = "  ".repeat(parents.len());
        let _ = write!(out, "{indent}- `{name}` ({})", facts.join(", "));
        let description = param.description().split_whitespace().collect::<Vec<_>>().join(" ");
        let values: Vec<String> =
            param.enum_values().iter().map(|value| format!("`{value}`")).collect();
        let one_of =
            if values.is_empty() { String::new() } else { format!("One of {}", values.join(", ")) };
        let text: Vec<String> =
            [description, one_of].into_iter().filter(|part| !part.is_empty()).collect();
        if !text.is_empty() {
            let _ = write!(out, ": {}", text.join(" "));
        }
        out.push('\n');
        bullets(param.fields(), &path, out);
    }
}

#[cfg(test)]
mod tests;
