//! Integration tests of `termsprawl-conformance`: the real binary against the real
//! `termsprawl-headless` over real tmux, against the shared fake app, and against servers with
//! planted defects, each of which must fail exactly the matching rules; and a TypeScript tool
//! server built on the generated bindings (`typescript.rs`).

mod defects;
mod fake;
mod headless;
mod levels;
mod links;
mod support;
mod terminals;
mod typescript;
