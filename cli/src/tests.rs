//! Tests of the crate's table-wide promises.

use crate::catalog::catalog;

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

#[test]
fn operation_args_parses_without_calling() {
    use std::ffi::OsString;

    use crate::{OperationArgs, operation_args};

    let words = |words: &[&str]| words.iter().map(OsString::from).collect::<Vec<_>>();
    let parse = |operation: &str, list: &[&str], stdin: &[u8]| {
        operation_args(operation, &words(list), &mut &stdin[..])
    };
    assert_eq!(
        parse("canvas_move", &["--nodeId", "n1", "--x", "40", "--y=-12.5"], b""),
        Ok(OperationArgs::Args(r#"{"nodeId":"n1","x":40,"y":-12.5}"#.to_owned()))
    );
    assert_eq!(
        parse("canvas_select", &["--nodeIds", "a", "-"], br#" {"x" : 1} "#),
        Ok(OperationArgs::Args(r#"{"x":1,"nodeIds":["a"]}"#.to_owned()))
    );
    assert_eq!(
        parse("canvas_list", &[" {\"a\" : 1}\n"], b""),
        Ok(OperationArgs::Args("{\"a\" : 1}".to_owned()))
    );
    assert_eq!(parse("canvas_list", &[], b""), Ok(OperationArgs::Args("{}".to_owned())));
    assert_eq!(parse("terminal_read", &["-h"], b""), Ok(OperationArgs::Help));
    assert_eq!(
        parse("terminal_read", &["--maxChars", "ten"], b""),
        Err(r#"invalid value "ten" for flag -maxChars: "ten" is not a number"#.to_owned())
    );
    assert_eq!(parse("nope", &[], b""), Err(r#"unknown command "nope""#.to_owned()));
}
