//! Executable resolution: `PATH`, then `~/.local/bin`, `~/.druk/bin`, `~/bin`; absolute paths must
//! be executable regular files.

use std::env;
use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use termsprawl_external_term::{SearchPath, is_executable_file};

use crate::support::script;

struct Tree {
    root: tempfile::TempDir,
}

impl Tree {
    fn new() -> Tree {
        Tree { root: tempfile::tempdir().unwrap() }
    }

    fn dir(&self, relative: &str) -> PathBuf {
        let dir = self.root.path().join(relative);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn executable(&self, relative: &str) -> PathBuf {
        let path = self.root.path().join(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        script(&path, "exit 0")
    }

    fn plain_file(&self, relative: &str) -> PathBuf {
        let path = self.root.path().join(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, "#!/bin/sh\n").unwrap();
        path
    }

    fn search_path(&self, path_dirs: &[&str]) -> SearchPath {
        let dirs = path_dirs.iter().map(|dir| self.dir(dir));
        let path_var = env::join_paths(dirs).unwrap();
        SearchPath::new(Some(&path_var), Some(&self.dir("home")))
    }
}

#[test]
fn path_directories_in_order_then_the_home_directories() {
    let tree = Tree::new();
    let search_path = tree.search_path(&["p1", "p2"]);
    assert_eq!(search_path.find("term"), None);

    let expected = [
        tree.executable("home/bin/term"),
        tree.executable("home/.druk/bin/term"),
        tree.executable("home/.local/bin/term"),
        tree.executable("p2/term"),
        tree.executable("p1/term"),
    ];
    // Each newly created file takes precedence over the ones before it; remove them in order.
    for path in expected.iter().rev() {
        assert_eq!(search_path.find("term").as_ref(), Some(path));
        fs::remove_file(path).unwrap();
    }
    assert_eq!(search_path.find("term"), None);
}

#[test]
fn only_executable_regular_files_count() {
    let tree = Tree::new();
    let search_path = tree.search_path(&["p1", "p2", "p3", "p4"]);
    tree.plain_file("p1/term");
    tree.dir("p2/term");
    symlink(tree.root.path().join("nowhere"), tree.dir("p3").join("term")).unwrap();
    let target = tree.executable("elsewhere/real-term");
    let link = tree.dir("p4").join("term");
    symlink(&target, &link).unwrap();
    assert_eq!(search_path.find("term"), Some(link));
}

#[test]
fn absolute_paths_are_used_as_given_when_executable() {
    let tree = Tree::new();
    let search_path = SearchPath::new(None, None);
    let executable = tree.executable("x/term");
    assert_eq!(search_path.find(executable.to_str().unwrap()), Some(executable.clone()));
    assert!(is_executable_file(&executable));

    let plain = tree.plain_file("x/plain");
    let dir = tree.dir("x/dir");
    let missing = tree.root.path().join("x/missing");
    for path in [&plain, &dir, &missing] {
        assert_eq!(search_path.find(path.to_str().unwrap()), None, "{}", path.display());
        assert!(!is_executable_file(path));
    }
}

#[test]
fn relative_paths_and_empty_names_never_resolve() {
    let tree = Tree::new();
    tree.executable("p1/sub/term");
    tree.executable("p1/term");
    let search_path = tree.search_path(&["p1"]);
    for name in ["", ".", "..", "sub/term", "./term", "p1/term"] {
        assert_eq!(search_path.find(name), None, "{name:?}");
        assert_eq!(search_path.find_on_path(name), None, "{name:?}");
    }
}

#[test]
fn find_on_path_skips_the_home_directories() {
    let tree = Tree::new();
    let search_path = tree.search_path(&["p1"]);
    let in_home = tree.executable("home/.local/bin/tmux");
    assert_eq!(search_path.find("tmux"), Some(in_home));
    assert_eq!(search_path.find_on_path("tmux"), None);
    let on_path = tree.executable("p1/tmux");
    assert_eq!(search_path.find_on_path("tmux"), Some(on_path));
}

#[test]
fn empty_and_relative_entries_and_a_relative_home_are_dropped() {
    let with_noise =
        SearchPath::new(Some(OsStr::new(":relative:/abs::.")), Some(Path::new("home")));
    assert_eq!(with_noise, SearchPath::new(Some(OsStr::new("/abs")), None));
}
