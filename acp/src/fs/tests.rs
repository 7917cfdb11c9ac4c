//! Tests of file access confined to the session roots, on real temporary directories.

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use super::{MAX_READ_BYTES, Roots, normalize, select_lines};
use crate::change::OnDisk;

struct Fixture {
    _directory: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
    roots: Roots,
}

fn fixture() -> Fixture {
    let directory = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(directory.path()).unwrap();
    let root = base.join("root");
    let outside = base.join("outside");
    fs::create_dir_all(&root).unwrap();
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("secret.txt"), "secret\n").unwrap();
    let roots = Roots::new(&root).unwrap();
    Fixture { _directory: directory, root, outside, roots }
}

fn text(path: &Path) -> String {
    path.to_str().unwrap().to_owned()
}

#[test]
fn selects_whole_lines() {
    let text = "one\ntwo\r\nthree\nfour";
    assert_eq!(select_lines(text, None, None), text);
    assert_eq!(select_lines(text, Some(0), None), text);
    assert_eq!(select_lines(text, Some(1), Some(1)), "one\n");
    assert_eq!(select_lines(text, Some(2), Some(2)), "two\r\nthree\n");
    assert_eq!(select_lines(text, Some(4), Some(10)), "four");
    assert_eq!(select_lines(text, Some(5), None), "");
    assert_eq!(select_lines(text, Some(2), Some(0)), "");
    assert_eq!(select_lines("", Some(1), Some(1)), "");
    assert_eq!(select_lines("a\n\nb\n", Some(2), Some(1)), "\n");
}

#[test]
fn normalises_dots_lexically() {
    assert_eq!(normalize(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
    assert_eq!(normalize(Path::new("/../../x")), PathBuf::from("/x"));
}

#[test]
fn writes_create_files_and_directories_and_read_back() {
    let f = fixture();
    let path = text(&f.root.join("a/b/new.txt"));
    let written = f.roots.write_text_file(&path, "1\n2\n3\n").unwrap();
    assert!(written.created);
    assert_eq!(written.bytes, 6);
    assert_eq!(f.roots.read_text_file(&path, Some(2), Some(1)).unwrap(), "2\n");
    assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o644);
    fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
    let written = f.roots.write_text_file(&path, "replaced").unwrap();
    assert!(!written.created);
    assert_eq!(fs::read_to_string(&path).unwrap(), "replaced");
    assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    let leftovers: Vec<_> =
        fs::read_dir(f.root.join("a/b")).unwrap().map(|entry| entry.unwrap().file_name()).collect();
    assert_eq!(leftovers, vec![std::ffi::OsString::from("new.txt")]);
}

#[test]
fn errors_carry_the_spec_codes() {
    let f = fixture();
    let code = |result: Result<String, crate::connection::RpcError>| result.unwrap_err().code;
    assert_eq!(code(f.roots.read_text_file(&text(&f.root.join("missing")), None, None)), -32002);
    assert_eq!(
        code(f.roots.read_text_file(&text(&f.root.join("missing/deeper")), None, None)),
        -32002
    );
    assert_eq!(code(f.roots.read_text_file("relative.txt", None, None)), -32602);
    assert_eq!(
        code(f.roots.read_text_file(&text(&f.outside.join("secret.txt")), None, None)),
        -32602
    );
    let dotdot = format!("{}/../outside/secret.txt", f.root.display());
    assert_eq!(code(f.roots.read_text_file(&dotdot, None, None)), -32602);
    assert_eq!(code(f.roots.read_text_file(&text(&f.root), None, None)), -32602);
    fs::write(f.root.join("latin1.txt"), b"caf\xe9").unwrap();
    let error = f.roots.read_text_file(&text(&f.root.join("latin1.txt")), None, None).unwrap_err();
    assert_eq!((error.code, error.message.contains("UTF-8")), (-32603, true));
    let big = f.root.join("big.txt");
    fs::write(&big, vec![b'a'; usize::try_from(MAX_READ_BYTES).unwrap() + 1]).unwrap();
    let error = f.roots.read_text_file(&text(&big), None, None).unwrap_err();
    assert_eq!((error.code, error.message.contains("10 MiB")), (-32603, true));
    let error = f.roots.write_text_file(&text(&f.root), "x").unwrap_err();
    assert_eq!(error.code, -32602);
    assert_eq!(f.roots.write_text_file("rel.txt", "x").unwrap_err().code, -32602);
}

/// Gemini CLI treats an error as a missing file only when its message says `Resource not found`
/// (or `ENOENT`, `does not exist`, `No such file`).
#[test]
fn a_missing_file_is_resource_not_found_with_its_path_in_data() {
    let f = fixture();
    for missing in [f.root.join("missing.txt"), f.root.join("no/such/dir/file.txt")] {
        let path = text(&missing);
        let error = f.roots.read_text_file(&path, None, None).unwrap_err();
        assert_eq!(error.code, -32002);
        assert_eq!(error.message, format!("Resource not found: {path}"));
        assert_eq!(error.data, Some(serde_json::json!({"uri": path})));
    }
}

#[test]
fn a_diff_sees_the_file_as_read_would_and_never_opens_a_fifo() {
    let f = fixture();
    let path = f.root.join("notes.md");
    fs::write(&path, "a\nb\n").unwrap();
    assert_eq!(f.roots.on_disk(&text(&path)), OnDisk::Text("a\nb\n".to_owned()));
    assert_eq!(f.roots.on_disk(&text(&f.root.join("new/file.txt"))), OnDisk::Missing);
    let unreadable = |path: &str| match f.roots.on_disk(path) {
        OnDisk::Unreadable(why) => why,
        other => panic!("{other:?}"),
    };
    assert!(unreadable(&text(&f.outside.join("secret.txt"))).contains("outside the session roots"));
    assert!(unreadable("relative.txt").contains("absolute"));
    assert!(unreadable(&text(&f.root)).contains("not a regular file"));
    fs::write(f.root.join("latin1.txt"), b"caf\xe9").unwrap();
    assert!(unreadable(&text(&f.root.join("latin1.txt"))).contains("UTF-8"));
    let fifo = f.root.join("fifo");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    assert!(unreadable(&text(&fifo)).contains("not a regular file"));
}

#[test]
fn symlinks_out_of_the_root_are_refused_both_ways() {
    let f = fixture();
    symlink(&f.outside, f.root.join("dir-link")).unwrap();
    symlink(f.outside.join("secret.txt"), f.root.join("file-link")).unwrap();
    symlink(f.outside.join("not-yet"), f.root.join("dangling-dir")).unwrap();
    let code = |result: Result<String, crate::connection::RpcError>| result.unwrap_err().code;
    assert_eq!(
        code(f.roots.read_text_file(&text(&f.root.join("dir-link/secret.txt")), None, None)),
        -32602
    );
    assert_eq!(code(f.roots.read_text_file(&text(&f.root.join("file-link")), None, None)), -32602);
    for target in ["dir-link/planted.txt", "dir-link/new/planted.txt", "file-link"] {
        let error = f.roots.write_text_file(&text(&f.root.join(target)), "x").unwrap_err();
        assert_eq!(error.code, -32602, "{target}");
    }
    assert!(f.roots.write_text_file(&text(&f.root.join("dangling-dir/x.txt")), "x").is_err());
    assert!(!f.outside.join("planted.txt").exists());
    assert!(!f.outside.join("new").exists());
    assert!(!f.outside.join("not-yet").exists());
    assert_eq!(fs::read_to_string(f.outside.join("secret.txt")).unwrap(), "secret\n");
}

#[test]
fn symlinks_inside_the_root_and_a_root_reached_through_a_symlink_work() {
    let f = fixture();
    fs::create_dir(f.root.join("real")).unwrap();
    symlink(f.root.join("real"), f.root.join("alias")).unwrap();
    let through_alias = text(&f.root.join("alias/file.txt"));
    f.roots.write_text_file(&through_alias, "via alias\n").unwrap();
    assert_eq!(fs::read_to_string(f.root.join("real/file.txt")).unwrap(), "via alias\n");
    let link_root = f.root.parent().unwrap().join("root-link");
    symlink(&f.root, &link_root).unwrap();
    let roots = Roots::new(&link_root).unwrap();
    assert_eq!(
        roots.read_text_file(&text(&link_root.join("real/file.txt")), None, None).unwrap(),
        "via alias\n"
    );
    assert_eq!(
        roots.read_text_file(&text(&f.root.join("real/file.txt")), None, None).unwrap(),
        "via alias\n"
    );
}
