//! Unit tests of the peer locator: the stamp's text, and what a test is told about a peer that is
//! missing, stale or fine.

use std::path::Path;

use super::{Kind, PYTHON_PEERS, Peer, STAMP_FILE, Stamp, problem, sources_hash};

#[test]
fn a_stamp_reads_back_what_was_written_and_nothing_else() {
    let stamp = Stamp { sources: "ab12".to_owned(), runtime: "python 3.11.7".to_owned() };
    assert_eq!(stamp.to_text(), "sources ab12\nruntime python 3.11.7\n");
    assert_eq!(Stamp::parse(&stamp.to_text()), Some(stamp));
    assert_eq!(Stamp::parse("sources ab12\n"), None);
    assert_eq!(Stamp::parse("runtime x\nsources y\n"), None);
    assert_eq!(Stamp::parse("sources a\nruntime b\nextra\n"), None);
}

#[test]
fn a_missing_or_stale_peer_is_a_failure_that_names_cargo_xtask_test() {
    let temp = tempfile::TempDir::new().unwrap();
    let requirements = temp.path().join("requirements.txt");
    std::fs::write(&requirements, "mcp==2.3.0\n").unwrap();
    let peer = Peer {
        name: "mcp-sdk".to_owned(),
        kind: Kind::Python(PYTHON_PEERS[0]),
        sources: vec![requirements.clone()],
    };
    let peers_dir = temp.path().join("peers");
    let missing = problem(&peers_dir, &peer).unwrap();
    assert!(missing.contains("`mcp-sdk`") && missing.contains("is not provisioned"), "{missing}");
    assert!(missing.contains("run `cargo xtask test`"), "{missing}");

    let dir = peers_dir.join("mcp-sdk");
    std::fs::create_dir_all(&dir).unwrap();
    let fresh = Stamp { sources: sources_hash(&peer.sources), runtime: "python 3".to_owned() };
    std::fs::write(dir.join(STAMP_FILE), fresh.to_text()).unwrap();
    assert_eq!(problem(&peers_dir, &peer), None);

    std::fs::write(&requirements, "mcp==2.4.0\n").unwrap();
    let stale = problem(&peers_dir, &peer).unwrap();
    assert!(stale.contains("was provisioned from other pinned files"), "{stale}");
    assert!(stale.contains("run `cargo xtask test`"), "{stale}");
}

#[test]
fn the_default_peers_directory_is_under_the_target_directory() {
    // CARGO_TARGET_DIR is not set for these tests unless the caller sets it for the whole run.
    let root = Path::new("/repo");
    let expected = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(target) if !target.is_empty() => root.join(target).join("peers"),
        _ => root.join("target/peers"),
    };
    assert_eq!(super::default_dir(root), expected);
}
