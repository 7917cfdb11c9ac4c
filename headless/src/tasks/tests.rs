//! Unit tests of `tasks`.
