//! Any bytes: the Voxel Play save reader returns a world or an error, never panics, and its format
//! 5/6 search stays within its budget. A small accepted world also imports without panicking.
//! The body is [`pmfedit_core::fuzzing::voxelplay_read`], which `cargo test` also runs on seed inputs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| pmfedit_core::fuzzing::voxelplay_read(data));
