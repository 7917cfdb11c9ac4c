//! Tests of `fs`.
