//! Reads the baseline of a comparison from a git revision with `git show`.

use std::path::Path;
use std::process::Command;

use anyhow::{Context as _, bail};

use super::Baseline;

/// Where the committed catalog lives, relative to the repository root.
pub const CATALOG_PATH: &str = "docs/reference/catalog.json";

/// Where `PROTOCOL_VERSION` is declared, relative to the repository root.
pub const LIB_RS_PATH: &str = "protocol/src/lib.rs";

/// The catalog and `PROTOCOL_VERSION` of revision `git_ref` of the repository at `root`.
pub fn baseline_at_ref(root: &Path, git_ref: &str) -> anyhow::Result<Baseline> {
    let catalog_text = git_show(root, git_ref, CATALOG_PATH)?;
    let catalog = serde_json::from_str(&catalog_text)
        .with_context(|| format!("{git_ref}:{CATALOG_PATH} is not JSON"))?;
    let lib_rs = git_show(root, git_ref, LIB_RS_PATH)?;
    let version = version_from_lib_rs(&lib_rs)
        .with_context(|| format!("no PROTOCOL_VERSION in {git_ref}:{LIB_RS_PATH}"))?;
    Ok(Baseline { catalog, version })
}

/// The value of the `pub const PROTOCOL_VERSION: &str = "…";` line of a `lib.rs`.
pub fn version_from_lib_rs(text: &str) -> Option<String> {
    const PREFIX: &str = "pub const PROTOCOL_VERSION: &str = \"";
    text.lines().find_map(|line| {
        let rest = line.trim().strip_prefix(PREFIX)?;
        let (version, tail) = rest.split_once('"')?;
        (tail.trim() == ";").then(|| version.to_owned())
    })
}

fn git_show(root: &Path, git_ref: &str, path: &str) -> anyhow::Result<String> {
    if git_ref.starts_with('-') {
        bail!("{git_ref:?} is not a git revision");
    }
    let output = Command::new("git")
        .arg("-C")
        .arg(root)
        .arg("show")
        .arg(format!("{git_ref}:{path}"))
        .output()
        .context("cannot run git")?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        bail!("git show {git_ref}:{path} failed: {}", stderr.trim());
    }
    String::from_utf8(output.stdout).with_context(|| format!("{git_ref}:{path} is not UTF-8"))
}
