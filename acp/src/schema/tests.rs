//! Tests of `schema`.
