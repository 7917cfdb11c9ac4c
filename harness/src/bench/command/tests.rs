//! Word splitting, the `{}` placeholder and quoting for display.

use std::ffi::OsString;

use super::{Invocation, Template, TemplateError, split_words};

fn words(text: &str) -> Vec<String> {
    split_words(text).unwrap()
}

#[test]
fn blanks_separate_words_and_quotes_group_them() {
    assert_eq!(words("node  dist/ctl.js\t--flag"), ["node", "dist/ctl.js", "--flag"]);
    assert_eq!(words(r#"a 'b c' "d e" f\ g"#), ["a", "b c", "d e", "f g"]);
    assert_eq!(words(r#"x'y'"z"w"#), ["xyzw"]);
    assert_eq!(words("'' \"\""), ["", ""]);
    assert_eq!(words("   "), Vec::<String>::new());
}

#[test]
fn nothing_is_expanded() {
    assert_eq!(words("$HOME ~ *.js"), ["$HOME", "~", "*.js"]);
    assert_eq!(words(r"'a\b' 'it'\''s'"), [r"a\b", "it's"]);
}

#[test]
fn backslash_in_double_quotes_escapes_only_four_characters() {
    assert_eq!(words(r#""a\"b" "c\\d" "e\$f" "g\nh""#), [r#"a"b"#, r"c\d", "e$f", r"g\nh"]);
}

#[test]
fn malformed_commands_are_errors() {
    assert_eq!(split_words("node 'x"), Err(TemplateError::UnclosedQuote('\'')));
    assert_eq!(split_words("node \"x"), Err(TemplateError::UnclosedQuote('"')));
    assert_eq!(split_words("node \"x\\"), Err(TemplateError::UnclosedQuote('"')));
    assert_eq!(split_words("node x\\"), Err(TemplateError::TrailingBackslash));
    assert_eq!(Template::parse("  "), Err(TemplateError::Empty));
    assert_eq!(TemplateError::UnclosedQuote('"').to_string(), "the command has an unclosed \"");
}

fn arguments() -> Vec<OsString> {
    ["--session", "/tmp/s.json", "call"].map(OsString::from).to_vec()
}

#[test]
fn arguments_are_appended_without_a_placeholder() {
    let invocation = Template::parse("node ctl.js").unwrap().invocation(&arguments());
    assert_eq!(
        invocation,
        Invocation::new("node").args(["ctl.js", "--session", "/tmp/s.json", "call"])
    );
}

#[test]
fn a_placeholder_word_is_replaced_by_the_arguments() {
    let template = Template::parse("env X=1 node ctl.js {} --trace").unwrap();
    let invocation = template.invocation(&arguments());
    assert_eq!(
        invocation,
        Invocation::new("env").args([
            "X=1",
            "node",
            "ctl.js",
            "--session",
            "/tmp/s.json",
            "call",
            "--trace"
        ])
    );
    // Only a whole word is a placeholder.
    let invocation = Template::parse("prog --x={}").unwrap().invocation(&arguments());
    assert_eq!(invocation.args[0], "--x={}");
    assert_eq!(invocation.args.len(), 4);
    // The program itself may come from the placeholder.
    let invocation = Template::parse("{}").unwrap().invocation(&arguments());
    assert_eq!(invocation, Invocation::new("--session").args(["/tmp/s.json", "call"]));
}

#[test]
fn display_quotes_for_a_posix_shell() {
    let quoted = Invocation::new("it's").args(["plain-word_1.0/x:y@z%+=,", ""]);
    assert_eq!(quoted.to_string(), r"'it'\''s' plain-word_1.0/x:y@z%+=, ''");
    let invocation = Invocation::new("termsprawlctl").args(["call", "guide_read", "{}"]);
    assert_eq!(invocation.to_string(), "termsprawlctl call guide_read '{}'");
    // What Display prints splits back into the same words.
    let round_trip = split_words(&invocation.to_string()).unwrap();
    assert_eq!(round_trip, ["termsprawlctl", "call", "guide_read", "{}"]);
}
