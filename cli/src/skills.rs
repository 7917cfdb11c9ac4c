//! `termsprawlctl skills --out DIR`: one `termsprawl-<topic>/SKILL.md` per guide topic
//! (`spec/protocol.md` §2.7, `spec/shell-conventions.md` §6).

use std::fs::DirBuilder;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use termsprawl_protocol::{Topic, guide};

use crate::describe::Command;
use crate::usage::section;

/// Every skill as (directory name, `SKILL.md` content), in topic order.
pub(crate) fn skill_documents(commands: &[Command]) -> Vec<(String, String)> {
    Topic::ALL
        .into_iter()
        .map(|topic| {
            let name = format!("termsprawl-{}", topic.as_str());
            let mut text = format!(
                "---\nname: {name}\ndescription: Use termsprawl {} tools and workflows.\n---\n\n{}\n",
                topic.as_str(),
                guide(topic).trim_end()
            );
            let own: Vec<&Command> =
                commands.iter().filter(|command| topic_of(command.name()) == Some(topic)).collect();
            if !own.is_empty() {
                text.push_str("\n## Commands\n");
                for command in own {
                    text.push('\n');
                    text.push_str(&section(command));
                }
            }
            (name, text)
        })
        .collect()
}

/// The guide topic whose skill lists an operation's usage; `None` for the overview's own
/// operations (`session_info`, `guide_read`).
fn topic_of(operation: &str) -> Option<Topic> {
    let prefixes = [
        ("terminal_", Topic::Terminal),
        ("canvas_", Topic::Canvas),
        ("browser_", Topic::Browser),
        ("agent_", Topic::Agents),
        ("artifact_", Topic::Artifacts),
        ("sticky_", Topic::Artifacts),
        ("context_", Topic::Context),
    ];
    prefixes.into_iter().find(|(prefix, _)| operation.starts_with(prefix)).map(|(_, topic)| topic)
}

/// Writes every skill under `out`; the paths written, `out` joined with the file's name.
pub(crate) fn write_skills(out: &Path, commands: &[Command]) -> Result<Vec<PathBuf>, String> {
    let mut written = Vec::new();
    for (name, text) in skill_documents(commands) {
        let directory = out.join(name);
        DirBuilder::new()
            .recursive(true)
            .mode(0o755)
            .create(&directory)
            .map_err(|error| format!("cannot create {}: {error}", directory.display()))?;
        let path = directory.join("SKILL.md");
        std::fs::write(&path, text)
            .map_err(|error| format!("cannot write {}: {error}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests;
