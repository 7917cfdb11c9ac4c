//! The `termsprawlctl` command line (skeleton).
