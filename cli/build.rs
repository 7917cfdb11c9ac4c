//! Links `termsprawlctl` with `hot-text.ld` on Linux: the functions a call runs first, in an
//! output section of their own, so that a one-shot call touches few 64 KiB windows of code (the
//! file says why and how its list was taken).

use std::path::PathBuf;

fn main() {
    let manifest_dir =
        std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let script = PathBuf::from(manifest_dir).join("hot-text.ld");
    println!("cargo::rerun-if-changed={}", script.display());
    println!("cargo::rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo::rustc-link-arg-bin=termsprawlctl=-Wl,-T,{}", script.display());
    }
}
