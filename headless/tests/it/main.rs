//! Integration tests of the headless server: real HTTP through the transport client, real tmux on
//! a private socket under each test's data directory, and the real `termsprawl-headless` binary.

mod agent_isolation;
mod agents;
mod canvas;
mod faults;
mod flood;
mod interactive;
mod messaging;
mod notify;
mod queue;
mod serve;
mod support;
mod survey;
mod terminal;
mod terminal_run;
mod tmux_control;
mod waiting_input;
