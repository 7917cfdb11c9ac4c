//! Entry point of `termsprawlctl`.
fn main() {}
