//! The floor program (`floor/program.rs`): its source, bundled in xtask, and its build with
//! `rustc -O` into a folder of the target directory.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, bail};

/// The source of the floor program.
pub const SOURCE: &str = include_str!("floor/program.rs");

/// Writes the source to `dir/floor.rs` and compiles it with `rustc -O` (edition 2024) to
/// `dir/floor`; the path of the program.
pub fn build(rustc: &OsStr, dir: &Path) -> anyhow::Result<PathBuf> {
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let source = dir.join("floor.rs");
    fs::write(&source, SOURCE).with_context(|| format!("cannot write {}", source.display()))?;
    let program = dir.join("floor");
    let output = Command::new(rustc)
        .args(["-O", "--edition", "2024", "--crate-name", "floor", "-o"])
        .arg(&program)
        .arg(&source)
        .output()
        .with_context(|| format!("cannot run {}", rustc.to_string_lossy()))?;
    if !output.status.success() {
        bail!(
            "rustc -O could not compile the floor program:\n{}",
            String::from_utf8_lossy(&output.stderr).trim_end()
        );
    }
    Ok(program)
}
