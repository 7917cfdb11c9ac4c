//! Unit tests of `ops`.
