//! Any bytes: the PAF reader returns a tree or an error, never panics; an accepted tree writes and
//! reads back equal.
//! The body is [`pmfedit_core::fuzzing::paf_read`], which `cargo test` also runs on seed inputs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| pmfedit_core::fuzzing::paf_read(data));
