//! Unit tests of the soak's accounting, classification, `/proc` parsing and report.
