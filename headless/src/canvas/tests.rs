//! Unit tests of `canvas`.
