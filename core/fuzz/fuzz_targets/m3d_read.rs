//! Any bytes: the Model 3D readers (binary and ASCII) return a model or an error, never panic;
//! a model with voxels writes as a voxel model that reads back with the same voxels, and imports
//! into a map without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pmfedit_core::format::m3d;

fuzz_target!(|data: &[u8]| {
    let _ = m3d::read(data);
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = m3d::read_a3d(text);
    }
    if let Ok(model) = m3d::read_any(data) {
        if !model.voxel_blocks.is_empty() {
            let Ok(bytes) = m3d::write_voxel_model(&model) else {
                assert!(model.voxel_types.len() > 65534, "a read voxel model must write");
                return;
            };
            let back = m3d::read(&bytes).expect("writer output must read back");
            assert_eq!(back.voxel_blocks, model.voxel_blocks);
        }
    }
});
