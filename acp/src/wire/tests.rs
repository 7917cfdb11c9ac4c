//! Tests of `wire`.
