//! Fuzz target: the direct-form command line (placeholder until the target is written).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = data;
});
