//! Unit tests of adapter detection and the launch plans.

use std::path::Path;

use termsprawl_protocol::Topic;

use super::{
    Adapter, adapter_argv, adapter_for, adapter_name, is_instruction_flag, skill, version_of,
};
use crate::layout::Layout;

#[test]
fn adapters_follow_the_help_text() {
    let claude = "Options:\n  --mcp-config <configs...>\n  --append-system-prompt <prompt>";
    assert_eq!(adapter_for("claude", claude), Adapter::ClaudeMcp);
    assert_eq!(adapter_for("claude", "--mcp-config only"), Adapter::Unverified);
    assert_eq!(
        adapter_for("codex", "-c, --config <key=value>  Override MCP servers"),
        Adapter::CodexMcp
    );
    assert_eq!(adapter_for("codex", "--config"), Adapter::Unverified);
    assert_eq!(adapter_for("opencode", "  --prompt  prompt to use"), Adapter::PromptFlag);
    assert_eq!(adapter_for("gemini", "-i, --prompt-interactive"), Adapter::PromptInteractive);
    assert_eq!(adapter_for("gemini", "Usage: gemini [options] [query..]"), Adapter::Positional);
    assert_eq!(adapter_for("grok", "Usage: grok [prompt]"), Adapter::Positional);
    assert_eq!(adapter_for("grok", "Usage: grok"), Adapter::Unverified);
    assert_eq!(adapter_name(Adapter::Positional, "grok"), "grok-cli");
    assert_eq!(adapter_name(Adapter::Unverified, "grok"), "grok-unverified");
    assert_eq!(adapter_name(Adapter::CodexMcp, "codex"), "codex-mcp");
}

#[test]
fn codex_gets_the_mcp_configuration_as_json() {
    let layout = Layout::new(Path::new("/data"));
    let argv = adapter_argv(Adapter::CodexMcp, Path::new("/bin/codex"), &layout, "n1", None);
    assert_eq!(
        argv,
        [
            "/bin/codex",
            "-c",
            "mcp_servers.termsprawl.command=\"/data/agent-tools/termsprawlctl\"",
            "-c",
            "mcp_servers.termsprawl.args=[\"--session\",\"/data/agent-tools/sessions/n1.json\",\"mcp\"]",
        ]
    );
    let custom =
        adapter_argv(Adapter::CustomFlag, Path::new("/bin/x"), &layout, "n1", Some("--system"));
    assert_eq!(custom[1], "--system");
    assert!(custom[2].contains("/data/agent-tools/launch/n1/termsprawl-system.md"));
}

#[test]
fn small_rules() {
    assert_eq!(version_of("  claude 1.0\n"), "claude 1.0");
    assert_eq!(version_of(" \n"), "unknown");
    assert_eq!(version_of(&"v".repeat(200)).len(), 160);
    assert!(is_instruction_flag("--append-system-prompt"));
    for flag in ["-p", "--", "--Prompt", "--1", "prompt", "--a_b"] {
        assert!(!is_instruction_flag(flag), "{flag}");
    }
    assert!(skill(Topic::Canvas).starts_with("---\nname: termsprawl-canvas\ndescription: Use termsprawl canvas tools and workflows.\n---\n\n# Canvas\n"));
}
