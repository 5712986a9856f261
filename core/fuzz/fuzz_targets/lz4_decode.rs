//! Raw bytes as an LZ4 frame with a declared size taken from the first four bytes: an error or
//! exactly that many bytes, never a panic or an allocation past the cap.
//! The body is [`pmfedit_core::fuzzing::lz4_decode`], which `cargo test` also runs on seed inputs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| pmfedit_core::fuzzing::lz4_decode(data));
