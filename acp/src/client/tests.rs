//! Tests of `client`.
