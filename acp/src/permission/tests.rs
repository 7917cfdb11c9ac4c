//! Tests of `permission`.
