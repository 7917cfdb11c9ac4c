//! Tests of `options`.
