//! Tests of `render`.
