//! Integration tests of `termsprawl-transport`, over real loopback HTTP.

mod client;
mod endpoint;
mod files;
mod long_wait;
mod restart;
mod server;
mod support;
