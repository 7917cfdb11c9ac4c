//! Integration tests of `termsprawl-external-term`, one module per area. `e2e` drives real tmux,
//! Xvfb and xterm.

mod command;
mod e2e;
mod launch;
mod open;
mod preferences;
mod search_path;
mod support;
