//! Tests of the skill files.

use termsprawl_protocol::{Topic, guide};

use super::{skill_documents, write_skills};
use crate::catalog::catalog;

#[test]
fn one_skill_per_topic_with_front_matter_guide_and_usage() {
    let documents = skill_documents(&catalog());
    assert_eq!(documents.len(), Topic::ALL.len());
    for ((name, text), topic) in documents.iter().zip(Topic::ALL) {
        assert_eq!(*name, format!("termsprawl-{}", topic.as_str()));
        let head = format!(
            "---\nname: termsprawl-{0}\ndescription: Use termsprawl {0} tools and workflows.\n---\n\n{1}\n",
            topic.as_str(),
            guide(topic).trim_end()
        );
        assert!(text.starts_with(&head), "{name}");
        let has_usage = text.contains("\n## Commands\n");
        assert_eq!(has_usage, topic != Topic::Overview, "{name}");
    }
    let terminal = &documents.iter().find(|(name, _)| name == "termsprawl-terminal").unwrap().1;
    for operation in ["terminal_open", "terminal_read", "terminal_submit", "terminal_close"] {
        assert!(terminal.contains(&format!("### `{operation}`")), "{operation}");
    }
    assert!(!terminal.contains("### `canvas_move`"));
    let artifacts = &documents.iter().find(|(name, _)| name == "termsprawl-artifacts").unwrap().1;
    assert!(artifacts.contains("### `artifact_open`") && artifacts.contains("### `sticky_open`"));
}

#[test]
fn every_operation_but_the_overview_s_own_lands_in_one_skill() {
    let documents = skill_documents(&catalog());
    for command in catalog() {
        let heading = format!("### `{}`", command.name());
        let count = documents.iter().filter(|(_, text)| text.contains(&heading)).count();
        let expected = usize::from(!matches!(command.name(), "session_info" | "guide_read"));
        assert_eq!(count, expected, "{}", command.name());
    }
}

#[test]
fn writes_the_files_and_reports_their_paths() {
    let temp = tempfile::tempdir().unwrap();
    let out = temp.path().join("skills");
    let paths = write_skills(&out, &catalog()).unwrap();
    assert_eq!(paths.len(), Topic::ALL.len());
    assert_eq!(paths[0], out.join("termsprawl-overview/SKILL.md"));
    let text = std::fs::read_to_string(&paths[2]).unwrap();
    assert!(text.starts_with("---\nname: termsprawl-terminal\n"));
    // Writing again replaces the files.
    assert_eq!(write_skills(&out, &catalog()).unwrap(), paths);
}

#[test]
fn the_terminal_skill() {
    let documents = skill_documents(&catalog());
    let terminal = &documents.iter().find(|(name, _)| name == "termsprawl-terminal").unwrap().1;
    insta::assert_snapshot!("terminal_skill", terminal);
}
