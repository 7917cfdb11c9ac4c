//! The archive's packing and verification on stand-in programs; `cargo xtask dist` in CI runs
//! the same [`verify`] and [`smoke`] on the real release.

use std::path::Path;
use std::process::Command;

use super::*;

/// The smallest 64-bit little-endian ELF header, with `phnum` copies of a program header of
/// type `kind` after it.
fn elf(kind: u32, phnum: u16) -> Vec<u8> {
    let mut bytes = vec![0_u8; 64];
    bytes[..6].copy_from_slice(b"\x7fELF\x02\x01");
    bytes[0x20..0x28].copy_from_slice(&64_u64.to_le_bytes());
    bytes[0x36..0x38].copy_from_slice(&56_u16.to_le_bytes());
    bytes[0x38..0x3a].copy_from_slice(&phnum.to_le_bytes());
    for _ in 0..phnum {
        let mut header = vec![0_u8; 56];
        header[..4].copy_from_slice(&kind.to_le_bytes());
        bytes.extend(header);
    }
    bytes
}

/// The entries of a release whose programs are stand-ins and whose termsprawlctl and
/// termsprawl-headless man pages and completions come from a clap command of each name; the rest
/// is real.
fn stand_in_entries(root: &Path) -> Vec<Entry> {
    let mut entries = Vec::new();
    for program in PROGRAMS {
        entries.push(Entry { path: format!("bin/{program}"), bytes: elf(1, 1), executable: true });
    }
    for program in [CTL, HEADLESS] {
        let command = || clap::Command::new(program).arg(clap::Arg::new("data").long("data"));
        let mut man = Vec::new();
        clap_mangen::Man::new(command()).render(&mut man).unwrap();
        entries.push(Entry { path: man_path(program), bytes: man, executable: false });
        for (shell, generator) in [
            ("bash", clap_complete::Shell::Bash),
            ("zsh", clap_complete::Shell::Zsh),
            ("fish", clap_complete::Shell::Fish),
        ] {
            let mut script = Vec::new();
            clap_complete::generate(generator, &mut command(), program, &mut script);
            let path = completion_path(program, shell);
            entries.push(Entry { path, bytes: script, executable: false });
        }
    }
    entries.extend(conformance_entries().unwrap());
    for file in ["README.md", "LICENSE"] {
        let bytes = fs::read(root.join(file)).unwrap();
        entries.push(Entry { path: doc_path(file), bytes, executable: false });
    }
    entries
}

fn release() -> Release {
    Release { version: "9.8.7".to_owned(), target: "x86_64-unknown-linux-gnu".to_owned() }
}

#[test]
fn a_packed_release_verifies_and_sha256sum_agrees_with_its_sums() {
    let root = crate::project_root();
    let dist = tempfile::tempdir().unwrap();
    let archive = pack(dist.path(), &release(), &stand_in_entries(&root)).unwrap();
    assert_eq!(
        archive.file_name().unwrap(),
        "termsprawl-agent-tools-9.8.7-x86_64-unknown-linux-gnu.tar.gz"
    );
    let unpacked = verify(&root, dist.path(), &release()).unwrap();
    let top = unpacked.path().join(release().name());
    for path in expected_paths() {
        assert!(top.join(&path).is_file(), "{path} was not unpacked");
    }
    assert_eq!(
        fs::read(top.join("share/doc/termsprawl-agent-tools/LICENSE")).unwrap(),
        fs::read(root.join("LICENSE")).unwrap()
    );
    // The sums are in the format coreutils checks, independently of our hashing.
    let checked = Command::new("sha256sum")
        .args(["--check", "--strict", SUMS])
        .current_dir(dist.path())
        .output()
        .unwrap();
    assert!(checked.status.success(), "{}", String::from_utf8_lossy(&checked.stderr));
    assert_eq!(String::from_utf8_lossy(&checked.stdout), format!("{}: OK\n", release().archive()));
    // The staging folder is gone: the dist folder holds the archive and the sums only.
    let mut names: Vec<String> = fs::read_dir(dist.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, [SUMS.to_owned(), release().archive()]);
}

#[test]
fn the_archive_lists_every_program_and_the_documented_ones_man_pages_and_completions() {
    let paths = expected_paths();
    for program in PROGRAMS {
        assert!(paths.contains(&format!("bin/{program}")), "{paths:?}");
    }
    for wanted in [
        "share/man/man1/termsprawlctl.1",
        "share/bash-completion/completions/termsprawlctl",
        "share/zsh/site-functions/_termsprawlctl",
        "share/fish/vendor_completions.d/termsprawlctl.fish",
        "share/man/man1/termsprawl-headless.1",
        "share/zsh/site-functions/_termsprawl-headless",
        "share/man/man1/termsprawl-conformance.1",
        "share/fish/vendor_completions.d/termsprawl-conformance.fish",
        "share/doc/termsprawl-agent-tools/README.md",
        "share/doc/termsprawl-agent-tools/LICENSE",
    ] {
        assert!(paths.iter().any(|path| path == wanted), "{wanted} missing from {paths:?}");
    }
    assert_eq!(paths.len(), 3 + 3 * 4 + 2);
}

#[test]
fn a_wrong_checksum_fails_verification() {
    let root = crate::project_root();
    let dist = tempfile::tempdir().unwrap();
    pack(dist.path(), &release(), &stand_in_entries(&root)).unwrap();
    let sums = dist.path().join(SUMS);
    let text = fs::read_to_string(&sums).unwrap();
    let flipped = if text.starts_with('0') { "1" } else { "0" };
    fs::write(&sums, format!("{flipped}{}", &text[1..])).unwrap();
    let error = verify(&root, dist.path(), &release()).unwrap_err().to_string();
    assert!(error.starts_with("checksum mismatch: SHA256SUMS says "), "{error}");

    fs::write(&sums, format!("{text}{text}")).unwrap();
    let error = verify(&root, dist.path(), &release()).unwrap_err().to_string();
    assert!(error.contains("names termsprawl-agent-tools-9.8.7-"), "{error}");
    assert!(error.ends_with(" 2 times"), "{error}");

    fs::write(&sums, "not a checksum line\n").unwrap();
    let error = verify(&root, dist.path(), &release()).unwrap_err().to_string();
    assert!(error.starts_with("SHA256SUMS: not `<sha256>  <file>`"), "{error}");
}

#[test]
fn a_missing_or_extra_file_fails_verification_and_is_named() {
    let root = crate::project_root();
    let dist = tempfile::tempdir().unwrap();
    let mut entries = stand_in_entries(&root);
    entries.retain(|entry| entry.path != "share/zsh/site-functions/_termsprawlctl");
    entries.push(Entry { path: "bin/stray".to_owned(), bytes: elf(1, 0), executable: true });
    pack(dist.path(), &release(), &entries).unwrap();
    let error = verify(&root, dist.path(), &release()).unwrap_err().to_string();
    assert_eq!(
        error,
        r#"the archive's files differ: missing ["share/zsh/site-functions/_termsprawlctl"], unexpected ["bin/stray"]"#
    );
}

#[test]
fn a_dynamically_linked_program_or_a_foreign_readme_fails_verification() {
    let root = crate::project_root();
    let dist = tempfile::tempdir().unwrap();
    let mut entries = stand_in_entries(&root);
    entries[0].bytes = elf(3, 2);
    pack(dist.path(), &release(), &entries).unwrap();
    let error = verify(&root, dist.path(), &release()).unwrap_err().to_string();
    assert_eq!(error, "bin/termsprawlctl is dynamically linked (PT_INTERP)");

    let mut entries = stand_in_entries(&root);
    let readme = entries.iter_mut().find(|entry| entry.path.ends_with("README.md")).unwrap();
    readme.bytes = b"# another project\n".to_vec();
    pack(dist.path(), &release(), &entries).unwrap();
    let error = verify(&root, dist.path(), &release()).unwrap_err().to_string();
    assert_eq!(
        error,
        "share/doc/termsprawl-agent-tools/README.md is not the repository's README.md"
    );
}

#[test]
fn the_interpreter_check_reads_real_programs() {
    // /bin/sh is a dynamically linked system program on every Linux this runs on.
    let shell = fs::read("/bin/sh").unwrap();
    assert!(has_interpreter(&shell).unwrap());
    assert!(!has_interpreter(&elf(1, 3)).unwrap());
    assert!(has_interpreter(&elf(3, 1)).unwrap());
    assert_eq!(
        has_interpreter(b"#!/bin/sh\n").unwrap_err().to_string(),
        "not a 64-bit little-endian ELF file"
    );
}

/// The fenced blocks of `language` in `markdown`, in order.
fn fenced_blocks(markdown: &str, language: &str) -> Vec<String> {
    let opening = format!("```{language}");
    let mut blocks = Vec::new();
    let mut lines = markdown.lines();
    while let Some(line) = lines.next() {
        if line.trim_end() == opening {
            let block: Vec<&str> = lines.by_ref().take_while(|line| *line != "```").collect();
            blocks.push(block.join("\n"));
        }
    }
    blocks
}

/// The workspace's version, from `[workspace.package]`.
fn workspace_version(root: &Path) -> String {
    let manifest = fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let package = manifest.split("[workspace.package]").nth(1).unwrap();
    let line = package.lines().find(|line| line.starts_with("version = ")).unwrap();
    line.trim_start_matches("version = ").trim_matches('"').to_owned()
}

#[test]
fn the_readmes_install_lines_install_an_archive_into_a_bare_home() {
    let root = crate::project_root();
    let readme = fs::read_to_string(root.join("README.md")).unwrap();
    let section = readme.split("\n## Install\n").nth(1).unwrap().split("\n## ").next().unwrap();
    let install = fenced_blocks(section, "sh").into_iter().next().expect("an sh block");
    // The archive it names is this workspace's, for the x86_64 Linux target.
    let release = Release {
        version: workspace_version(&root),
        target: "x86_64-unknown-linux-gnu".to_owned(),
    };
    assert!(install.contains(&release.archive()), "{install}");
    // What the section says ships is where dist puts it.
    for path in expected_paths() {
        let folder = path.rsplit_once('/').map_or("", |(folder, _)| folder);
        assert!(section.contains(&format!("`{folder}/")), "the README does not show {path}");
    }
    for program in PROGRAMS {
        assert!(section.contains(&format!("`bin/{program}`")), "{program}");
    }
    let zsh = fenced_blocks(section, "zsh").join("\n");
    let site_functions = completion_path(CTL, "zsh").rsplit_once('/').unwrap().0.to_owned();
    assert!(zsh.contains(&format!("fpath=(~/.local/{site_functions} $fpath)")), "{zsh}");
    // A packed archive of that layout (stand-in programs: `termsprawlctl` a script that prints
    // its version) and a HOME without `~/.local`, as on a bare machine.
    let dist = tempfile::tempdir().unwrap();
    let mut entries = stand_in_entries(&root);
    let script = format!("#!/bin/sh\necho 'termsprawlctl {}'\n", release.version);
    entries.retain(|entry| entry.path != format!("bin/{CTL}"));
    entries.push(Entry {
        path: format!("bin/{CTL}"),
        bytes: script.into_bytes(),
        executable: true,
    });
    pack(dist.path(), &release, &entries).unwrap();
    let home = tempfile::tempdir().unwrap();
    let run = format!(
        "set -eu\n{install}\ncommand -v termsprawlctl\nman -w termsprawlctl\nman -w termsprawl-headless\n"
    );
    let output = Command::new("bash")
        .arg("-c")
        .arg(&run)
        .current_dir(dist.path())
        .env_clear()
        .env("HOME", home.path())
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{run}\n{stderr}");
    let local = home.path().join(".local");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        format!(
            "{}: OK\ntermsprawlctl {}\n{}\n{}\n{}\n",
            release.archive(),
            release.version,
            local.join("bin/termsprawlctl").display(),
            local.join("share/man/man1/termsprawlctl.1").display(),
            local.join("share/man/man1/termsprawl-headless.1").display(),
        )
    );
    for path in expected_paths() {
        assert!(local.join(&path).is_file(), "{path} was not installed");
    }
}
