//! Tests of `@` mentions: the blocks sent and the Tab completion of project files.

use std::path::Path;

use serde_json::json;

use super::{blocks, complete, file_uri};

fn project() -> tempfile::TempDir {
    let directory = tempfile::tempdir().unwrap();
    let root = directory.path();
    std::fs::create_dir_all(root.join("src/deep")).unwrap();
    std::fs::create_dir_all(root.join("target/debug")).unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join("README.md"), "hello\n").unwrap();
    std::fs::write(root.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(root.join("src/deep/mainly.rs"), "").unwrap();
    std::fs::write(root.join("target/debug/main.d"), "").unwrap();
    std::fs::write(root.join("binary.bin"), [0xff, 0xfe]).unwrap();
    directory
}

fn uri(root: &Path, relative: &str) -> String {
    file_uri(&std::fs::canonicalize(root.join(relative)).unwrap())
}

#[test]
fn mentions_are_embedded_or_linked_per_the_agents_capability() {
    let directory = project();
    let root = directory.path();
    let prompt = "look at @src/main.rs, @README.md and @binary.bin; not @nothing or a@b";
    let (sent, lines) = blocks(prompt, root, true);
    assert_eq!(
        sent,
        [
            json!({"type": "text", "text": prompt}),
            json!({"type": "resource", "resource": {"uri": uri(root, "src/main.rs"), "text": "fn main() {}\n"}}),
            json!({"type": "resource", "resource": {"uri": uri(root, "README.md"), "text": "hello\n"}}),
            json!({"type": "resource_link", "uri": uri(root, "binary.bin"), "name": "binary.bin"}),
        ]
    );
    assert_eq!(
        lines,
        [
            "[mention] @src/main.rs: its text is attached (13 bytes)",
            "[mention] @README.md: its text is attached (6 bytes)",
            "[mention] @binary.bin: attached as a link",
        ]
    );
    let (sent, _) = blocks("@README.md twice @README.md", root, false);
    assert_eq!(
        sent[1..],
        [json!({"type": "resource_link", "uri": uri(root, "README.md"), "name": "README.md"})]
    );
    let (sent, lines) = blocks("@../", root, true);
    assert_eq!(sent.len(), 1);
    assert_eq!(lines, ["[mention] @../: outside the project, not attached"]);
}

#[test]
fn tab_completes_folder_entries_then_files_found_below() {
    let directory = project();
    let root = directory.path();
    assert_eq!(complete(root, "@src/"), ["@src/deep/", "@src/main.rs"]);
    assert_eq!(complete(root, "@src/m"), ["@src/main.rs"]);
    // A bare name: the project's top entries, then files found below (never in target/ or
    // hidden folders).
    assert_eq!(complete(root, "@mai"), ["@src/deep/mainly.rs", "@src/main.rs"]);
    assert_eq!(complete(root, "@R"), ["@README.md"]);
    assert_eq!(complete(root, "@."), Vec::<String>::new());
    assert_eq!(complete(root, "@nope/x"), Vec::<String>::new());
    assert_eq!(file_uri(Path::new("/a b/ü")), "file:///a%20b/%C3%BC");
}
