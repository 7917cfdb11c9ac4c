//! Issue 35 item 3, the transcript a person reads at a glance (spec/acp.md §2.17): the real
//! `termsprawlctl acp` in a tmux pane 120 and 60 columns wide on the scripted agent's `showcase`
//! turn (a thought, a plan, a tool card, a long paragraph, a list, a quote, a table and a code
//! block, streamed in chunks cut mid-word), read back with `capture-pane`: word wrap at word
//! boundaries, tables and code blocks drawn, one colour scheme (escape sequences with colour
//! allowed), the activity line while a turn runs, the rule between turns and no stop reason for a
//! normal end; in a pipe and with `NO_COLOR`, plain text.

use std::time::Duration;

use crate::acp::{Place, TURN_END, eventually, peer, run};
use crate::acp_agent_orders::raw;
use crate::acp_asks::style_before;
use crate::acp_interactive::Node;

/// The paragraph the showcase turn starts with, as one line.
const PARAGRAPH: &str = "Here is what I found in the project. The notes describe a small tool that reads a \
    configuration file, checks every entry against the schema and reports each problem with its \
    line number, so that a person can fix it without reading the code.";

/// A node on the scripted agent with `scenario`, its pane `columns` wide.
fn node(scenario: &str, columns: u16, env: &[(&str, &str)]) -> Node {
    let node = Node::start_raw_with(scenario, env);
    node.resize(columns);
    node.wait_prompt(">");
    node
}

/// The screen of one showcase turn, from the prompt's line to the rule, trailing spaces cut.
fn showcase(node: &Node, prompt: &str) -> String {
    node.type_line(prompt);
    let screen = node.wait_for(TURN_END, 1);
    let start = screen.find(&format!("> {prompt}")).unwrap_or_else(|| panic!("{screen}"));
    let end = screen.find(TURN_END).unwrap();
    let end = end + screen[end..].find('\n').unwrap_or(screen.len() - end);
    screen[start..end].lines().map(str::trim_end).collect::<Vec<_>>().join("\n")
}

/// The rows of `screen` from the one that starts with `first` up to the empty row after it.
fn block<'a>(screen: &'a str, first: &str) -> Vec<&'a str> {
    let rows: Vec<&str> = screen.lines().collect();
    let start = rows.iter().position(|row| row.starts_with(first)).unwrap_or_else(|| {
        panic!("no row starts with {first:?}:\n{screen}");
    });
    rows[start..].iter().take_while(|row| !row.is_empty()).copied().collect()
}

/// Whether `rows`, joined with single spaces, give back `text`: the wrap broke at spaces only.
fn broke_at_spaces(rows: &[&str], text: &str) -> bool {
    rows.iter().map(|row| row.trim()).collect::<Vec<_>>().join(" ") == text
}

#[test]
fn a_turn_at_120_columns_is_wrapped_drawn_and_closed_by_a_rule() {
    let node = node("showcase", 120, &[]);
    let turn = showcase(&node, "show me the project");
    assert!(turn.lines().all(|row| row.chars().count() <= 120), "{turn}");
    // The tool card shows one line with its latest state, rewritten in place.
    assert_eq!(turn.matches("[tool] Read notes.md").count(), 1, "{turn}");
    assert!(turn.contains("[tool] Read notes.md (read, completed)\n  notes: 2 lines"), "{turn}");
    assert!(
        turn.contains(
            "[plan] 1/3 done\n  [x] Read the notes (high)\n  [~] Summarise the project (medium)\n  \
             [ ] Suggest next steps (low)"
        ),
        "{turn}"
    );
    let paragraph = block(&turn, "Here is what I found");
    assert_eq!(paragraph.len(), 2, "{turn}");
    assert!(broke_at_spaces(&paragraph, PARAGRAPH), "{turn}");
    assert!(turn.contains("\nSummary\n"), "{turn}");
    assert!(
        turn.contains("\n• The parser is in `src/parse.rs` and handles every documented key.\n")
    );
    let item = block(&turn, "• Errors are collected");
    assert_eq!(item[1], "  of the run.", "{turn}");
    assert!(turn.contains("\n│ Note: the schema file is generated;"), "{turn}");
    let table = [
        "┌──────────────┬───────┬────────────────────────────────────────────────────────────┐",
        "│ File         │ Lines │ Purpose                                                    │",
        "├──────────────┼───────┼────────────────────────────────────────────────────────────┤",
        "│ src/parse.rs │   412 │ reads the configuration and keeps each entry's line number │",
        "│ src/check.rs │   187 │ compares entries with the schema                           │",
        "└──────────────┴───────┴────────────────────────────────────────────────────────────┘",
    ];
    assert!(turn.contains(&table.join("\n")), "{turn}");
    let code = [
        "┌─ python",
        "│ def check(entries, schema):",
        "│     # every problem, not only the first",
        "│     return [e for e in entries if e.key not in schema]  # \"unknown\"",
        "│ print(\"checked\")",
        "└─",
        "That is all.",
    ];
    assert!(turn.contains(&code.join("\n")), "{turn}");
    // A normal end shows no stop reason; the rule spans the pane.
    assert!(!turn.contains("[stop reason"), "{turn}");
    let rule = turn.lines().last().unwrap();
    assert!(rule.starts_with("─── ") && rule.contains(" s ─"), "{turn}");
    assert_eq!(rule.chars().count(), 120, "{rule}");
    // Nothing of the activity line is left.
    assert!(!node.screen().contains("Ctrl-C cancels"), "{}", node.screen());
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);
}

#[test]
fn a_turn_at_60_columns_breaks_words_nowhere_and_narrows_the_table() {
    let node = node("showcase", 60, &[]);
    let turn = showcase(&node, "show me the project");
    assert!(turn.lines().all(|row| row.chars().count() <= 60), "{turn}");
    let paragraph = block(&turn, "Here is what I found");
    assert_eq!(paragraph.len(), 5, "{turn}");
    assert!(broke_at_spaces(&paragraph, PARAGRAPH), "{turn}");
    // The item's three rows (a nested item follows).
    let item = &block(&turn, "• Errors are collected")[..3];
    assert!(item[1..].iter().all(|row| row.starts_with("  ") && !row.starts_with("   ")));
    assert!(
        broke_at_spaces(
            item,
            "• Errors are collected, not thrown: the checker keeps going after the first problem \
             and reports all of them at the end of the run."
        ),
        "{turn}"
    );
    let quote = block(&turn, "│ Note:");
    assert!(quote.len() > 1 && quote.iter().all(|row| row.starts_with("│ ")), "{turn}");
    let table = block(&turn, "┌──");
    assert!(table.iter().all(|row| row.chars().count() == 60), "{turn}");
    assert!(table.contains(&"│ src/parse.rs │   412 │ reads the configuration and keeps │"));
    assert!(table.contains(&"│              │       │ each entry's line number          │"));
    // Code is never re-flowed: a long line is cut where the row ends, under its gutter.
    assert!(
        turn.contains("│     return [e for e in entries if e.key not in schema]  #\n│ \"unknown\"")
    );
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);
}

#[test]
fn with_colour_each_part_has_its_style() {
    let node = node("showcase", 120, &[("NO_COLOR", "")]);
    showcase(&node, "show me the project");
    let styled = node.tmux(&["capture-pane", "-p", "-e", "-S", "-", "-t", "=node:"]);
    // tmux writes each style back its own way (`[32m`, `[0;32m`, `[0m[32m`): the check is on
    // the parameters that end the sequences before the text.
    let has = |text: &str, parameters: &str| {
        let before = style_before(&styled, text);
        assert!(before.contains(parameters), "{text:?} after {before:?}, not {parameters}");
    };
    has("> ", "36m");
    has("Let me read the notes first.", "2;3m");
    has("[plan] 1/3 done", "1m");
    has("[x]", "32m");
    has("[~]", "33m");
    has("[tool]", "32m");
    has("completed", "32m");
    has("Summary", "1;4m");
    has("`src/parse.rs`", "32m");
    has("• ", "36m");
    has("│ Note", "2;3m");
    has("┌──────────────┬", "2m");
    has("def", "35m");
    has("# every problem", "2m");
    has("\"checked\"", "32m");
    has("─── ", "2m");
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);
}

#[test]
fn an_activity_line_shows_what_the_agent_does_until_the_turn_ends() {
    let node = node("showcase", 120, &[]);
    node.type_line("slow please");
    let screen = node.wait_for("running Read notes.md · Ctrl-C cancels", 1);
    let activity = screen.trim_end().lines().last().unwrap();
    assert!(activity.contains(" s · running Read notes.md · Ctrl-C cancels"), "{screen}");
    // Updated in place: one activity line, its time going on.
    assert!(
        eventually(Duration::from_secs(5), || {
            let screen = node.screen();
            screen.matches("Ctrl-C cancels").count() == 1
                && screen.trim_end().lines().last().is_some_and(|last| last != activity)
        }),
        "{}",
        node.screen()
    );
    let screen = node.wait_for(TURN_END, 1);
    assert!(!screen.contains("Ctrl-C cancels"), "{screen}");
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);
}

/// Text still to be drawn takes the pane's width of the moment it is drawn: the pane narrowed
/// while the tool runs, the turn's text comes at 60 columns. What was drawn before stays as it was.
#[test]
fn text_drawn_after_a_resize_takes_the_new_width() {
    let node = node("showcase", 120, &[]);
    node.type_line("slow please");
    node.wait_for("running Read notes.md", 1);
    node.resize(60);
    let screen = node.wait_for(TURN_END, 1);
    let paragraph = block(&screen, "Here is what I found");
    assert_eq!(paragraph.len(), 5, "{screen}");
    assert!(broke_at_spaces(&paragraph, PARAGRAPH), "{screen}");
    let rule = screen.lines().find(|line| line.contains(TURN_END)).unwrap().trim_end();
    assert_eq!(rule.chars().count(), 60, "{screen}");
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);
}

#[test]
fn a_long_command_list_is_wrapped_under_its_descriptions() {
    let node = node("many-commands", 60, &[]);
    node.type_line("/help");
    let screen = node.wait_for("number 59", 1);
    let help = block(&screen, "[help] this front end's commands:");
    assert!(help.iter().all(|row| row.chars().count() <= 60), "{screen}");
    let first = help.iter().position(|row| row.starts_with("  /command-00")).unwrap();
    let indent = help[first].find("A command").unwrap();
    assert!(indent <= 40, "{screen}");
    assert!(help[first + 1].starts_with(&" ".repeat(indent)), "{screen}");
    assert!(!help[first + 1][indent..].starts_with(' '), "{screen}");
    node.type_line("/quit");
    node.wait_for("[exit 0]", 1);
}

/// In a pipe the text is exactly what the agent sent, with no escape sequence, no activity line
/// and no stop reason; `CLICOLOR_FORCE` asks for colour there, and `NO_COLOR` wins over it.
#[test]
fn a_pipe_is_plain_unless_colour_is_forced() {
    let peer = peer();
    let place = Place::new();
    let options = ["--agent-log", "-", "--prompt", "show me the project"];
    let plain = run(raw(&place, &peer, "showcase", &[], &options));
    assert_eq!(plain.code(), Some(0), "{}\n{}", plain.stdout, plain.stderr);
    assert!(!plain.stdout.contains('\x1b'), "{:?}", plain.stdout);
    assert!(plain.stdout.contains(&format!("{PARAGRAPH}\n\n## Summary\n")), "{}", plain.stdout);
    assert!(plain.stdout.contains("| File | Lines | Purpose |\n|:-----|------:|---------|\n"));
    assert!(
        plain.stdout.ends_with("print(\"checked\")\n```\nThat is all.\n"),
        "{:?}",
        plain.stdout
    );
    assert!(!plain.stdout.contains("Ctrl-C cancels") && !plain.stdout.contains("[stop reason"));

    let mut forced = raw(&place, &peer, "showcase", &[], &options);
    forced.env("CLICOLOR_FORCE", "1");
    let forced = run(forced);
    assert_eq!(forced.code(), Some(0), "{}", forced.stderr);
    assert!(forced.stdout.contains("\x1b[35mdef\x1b[0m"), "{:?}", forced.stdout);
    assert!(forced.stdout.contains("┌──"), "{:?}", forced.stdout);
    assert!(!forced.stdout.contains("Ctrl-C cancels"), "{:?}", forced.stdout);

    let mut both = raw(&place, &peer, "showcase", &[], &options);
    both.env("CLICOLOR_FORCE", "1").env("NO_COLOR", "1");
    let both = run(both);
    assert!(!both.stdout.contains('\x1b'), "{:?}", both.stdout);
}
