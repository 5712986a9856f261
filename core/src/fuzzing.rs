//! The bodies of the cargo-fuzz targets in `core/fuzz/`, one function per target.
//!
//! The fuzz crate is its own workspace and needs cargo-fuzz, so CI never builds it; its targets
//! only call these functions, and `tests/tests/fuzz_replay.rs` runs them on seed inputs (the
//! golden maps, the Model 3D samples, archives and frames, with every truncation and byte flips)
//! and on random bytes. A target whose property breaks, or that no longer compiles, fails
//! `cargo test` rather than the next fuzzing campaign. Each function panics exactly when its
//! property fails, as libFuzzer expects.

use crate::format::bin::Reader;
use crate::format::paf::Archive;
use crate::format::voxelplay::{ReadOptions, read_world};
use crate::format::{lz4f, m3d, pmf};
use crate::import::voxelplay::{ImportOptions, import_world};
use crate::map::Map;

/// Any bytes: the PMF reader returns a value or an error, never panics; what it accepts, the
/// writer writes, and that reads back to the same value.
pub fn pmf_read(data: &[u8]) {
    if let Ok(file) = pmf::read(data)
        && let Ok(bytes) = pmf::write(&file)
    {
        let again = pmf::read(&bytes).expect("writer output must read back");
        assert!(again == file || format!("{again:?}") == format!("{file:?}"), "round trip changed the file");
    }
}

/// Any bytes: the PAF reader returns a tree or an error, never panics; an accepted tree writes
/// and reads back equal.
pub fn paf_read(data: &[u8]) {
    if let Ok(archive) = Archive::from_bytes(data)
        && let Ok(bytes) = archive.to_bytes()
    {
        assert_eq!(Archive::from_bytes(&bytes).expect("writer output must read back"), archive);
    }
}

/// Raw bytes as an LZ4 frame with a declared size taken from the first four bytes (below
/// 16 MiB): an error or exactly that many bytes, never a panic or an allocation past the cap.
pub fn lz4_decode(data: &[u8]) {
    if data.len() < 4 {
        return;
    }
    let declared = u32::from_le_bytes([data[0], data[1], data[2], data[3]]) % (1 << 24);
    let r = Reader::new(&data[4..], "fuzz");
    if let Ok(out) = lz4f::decompress(&r, declared.into()) {
        assert_eq!(out.len(), declared as usize);
    }
}

/// compress → decompress gives the input back, with either compression; then corrupting one
/// byte after the valid frame header gives an error or the original bytes (the content checksum
/// catches the rest).
pub fn lz4_round_trip(data: &[u8]) {
    let high = lz4f::compress_as(data, crate::format::lz4_block::Compression::High);
    let out = lz4f::decompress(&Reader::new(&high, "fuzz"), data.len() as u64).expect("round trip (high)");
    assert_eq!(out, data);
    let frame = lz4f::compress(data);
    let out = lz4f::decompress(&Reader::new(&frame, "fuzz"), data.len() as u64).expect("round trip");
    assert_eq!(out, data);
    if data.len() >= 2 && frame.len() > 16 {
        let mut bad = frame.clone();
        let at = 15 + usize::from(data[0]) % (bad.len() - 15);
        bad[at] ^= data[1] | 1;
        if let Ok(out) = lz4f::decompress(&Reader::new(&bad, "fuzz"), data.len() as u64) {
            assert_eq!(out, data, "corrupt frame decoded to different bytes without an error");
        }
    }
}

/// Any bytes: the Voxel Play save reader returns a world or an error, never panics, and its
/// format 5/6 search stays within its budget. A small accepted world also imports without
/// panicking.
pub fn voxelplay_read(data: &[u8]) {
    let Ok(save) = read_world(data, &ReadOptions::default()) else { return };
    if save.chunks.len() <= 16 {
        let mut map = Map::new("fuzz");
        let at = map.levels[0].frame().origin_lattice();
        let _ = import_world(&mut map, 0, &save, &ImportOptions::at(at, 3));
    }
}

/// Any bytes: the Model 3D readers (binary and ASCII) return a model or an error, never panic;
/// a model with voxels writes as a voxel model that reads back with the same voxels.
pub fn m3d_read(data: &[u8]) {
    let _ = m3d::read(data);
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = m3d::read_a3d(text);
    }
    if let Ok(model) = m3d::read_any(data)
        && !model.voxel_blocks.is_empty()
    {
        let Ok(bytes) = m3d::write_voxel_model(&model) else {
            assert!(model.voxel_types.len() > 65534, "a read voxel model must write");
            return;
        };
        let back = m3d::read(&bytes).expect("writer output must read back");
        assert_eq!(back.voxel_blocks, model.voxel_blocks);
    }
}
