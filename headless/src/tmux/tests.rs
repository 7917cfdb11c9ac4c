//! Unit tests of the pure parts of the tmux driver.

use super::{exec_line, is_api_key_variable, shell_quote};

#[test]
fn exec_line_quotes_every_word() {
    let argv = ["my prog".to_owned(), "it's".to_owned(), "$HOME".to_owned(), String::new()];
    assert_eq!(exec_line(&argv), r"exec 'my prog' 'it'\''s' '$HOME' ''");
    assert_eq!(shell_quote("plain"), "'plain'");
}

#[test]
fn api_key_variables_are_recognised() {
    for name in
        ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "claude_api_key"]
    {
        assert!(is_api_key_variable(name), "{name}");
    }
    for name in ["ANTHROPIC_MODEL", "PATH", "MY_ANTHROPIC_KEY", "CLAUDE_CONFIG_DIR"] {
        assert!(!is_api_key_variable(name), "{name}");
    }
}
