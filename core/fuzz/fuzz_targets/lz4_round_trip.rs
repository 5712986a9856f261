//! compress → decompress gives the input back; then corrupting one byte after the valid frame
//! header gives an error or the original bytes (the content checksum catches the rest).
//! The body is [`pmfedit_core::fuzzing::lz4_round_trip`], which `cargo test` also runs on seed inputs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| pmfedit_core::fuzzing::lz4_round_trip(data));
