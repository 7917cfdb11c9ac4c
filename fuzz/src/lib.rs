//! Independent oracles for the fuzz targets of `fuzz/fuzz_targets/` (issue #11).
//!
//! This crate owns the fuzzers' own reading of the specs: the operation table as
//! `spec/protocol.md` §4.3 prints it ([`spec`]), the strict literal endpoint check of §7.1 step 3
//! ([`endpoint`]), and helpers the targets share. It must never borrow the logic it checks from the
//! crates under test: the point of an oracle is to be written a second time, straight from the
//! spec, so that the fuzzer can catch the two readings disagreeing.
//!
//! Start reading at the targets (`fuzz_targets/*.rs`); each says what it feeds in and what it
//! asserts.

pub mod endpoint;
pub mod spec;

/// Reads a small number from the fuzzer's input, for knobs; zero when the input has run out.
pub fn take_byte(input: &mut &[u8]) -> u8 {
    match input.split_first() {
        Some((&byte, rest)) => {
            *input = rest;
            byte
        }
        None => 0,
    }
}
