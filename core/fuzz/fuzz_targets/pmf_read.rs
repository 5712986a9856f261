//! Any bytes: the PMF reader returns a value or an error, never panics; what it accepts, the writer
//! writes, and that reads back to the same value.
//! The body is [`pmfedit_core::fuzzing::pmf_read`], which `cargo test` also runs on seed inputs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| pmfedit_core::fuzzing::pmf_read(data));
