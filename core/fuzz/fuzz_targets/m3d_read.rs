//! Any bytes: the Model 3D readers (binary and ASCII) return a model or an error, never panic;
//! a model with voxels writes as a voxel model that reads back with the same voxels.
//! The body is [`pmfedit_core::fuzzing::m3d_read`], which `cargo test` also runs on seed inputs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| pmfedit_core::fuzzing::m3d_read(data));
