//! Tests of where a project's history is kept.

use std::path::Path;

use super::history_file_name;

#[test]
fn a_history_file_is_named_after_the_project_and_a_hash_of_its_path() {
    let one = history_file_name(Path::new("/home/ann/src/my project"));
    assert!(one.starts_with("myproject-"), "{one}");
    assert!(one.ends_with(".history"), "{one}");
    assert_eq!(one.len(), "myproject-".len() + 16 + ".history".len());
    assert_ne!(one, history_file_name(Path::new("/home/bob/src/my project")));
    assert_eq!(one, history_file_name(Path::new("/home/ann/src/my project")));
    let root = history_file_name(Path::new("/"));
    assert_eq!(root.len(), 16 + ".history".len(), "{root}");
}
