//! Unit tests of `launch`.
