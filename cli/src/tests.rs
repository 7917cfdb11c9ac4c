//! Tests of the crate's table-wide promises.

use crate::catalog;

/// `spec/shell-conventions.md` §1, §11.2: no operation is named like a command of the program's
/// own or starts with `-`.
#[test]
fn no_operation_takes_a_reserved_name() {
    const RESERVED: [&str; 10] =
        ["help", "schema", "usage", "skills", "completions", "call", "doctor", "mcp", "acp", "man"];
    let commands = catalog();
    assert!(!commands.is_empty());
    for command in &commands {
        assert!(!RESERVED.contains(&command.name()), "{}", command.name());
        assert!(!command.name().starts_with('-'), "{}", command.name());
    }
}

#[test]
fn the_public_usage_is_the_rendered_table() {
    assert_eq!(crate::usage_markdown(), crate::usage::usage(&catalog()));
    assert!(crate::help_markdown().contains("\n## Commands\n\n- `session_info`: "));
}
