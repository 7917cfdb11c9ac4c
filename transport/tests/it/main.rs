//! Integration tests of `termsprawl-transport`, over real loopback HTTP.

mod client;
mod endpoint;
mod support;
