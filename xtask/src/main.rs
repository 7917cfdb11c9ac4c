//! Project automation: `cargo xtask codegen`, `protocol-diff`, `bench` (skeleton).
fn main() {}
