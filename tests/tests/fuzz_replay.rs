//! The fuzz targets' bodies (`pmfedit_core::fuzzing`, what `core/fuzz/` runs under libFuzzer) run
//! here on seeds and on their damaged copies, so CI checks the targets' properties on every change
//! without cargo-fuzz: the golden maps, archives, LZ4 frames and the Model 3D samples of
//! `../shared/testdata`, each one whole, cut at every length, with one byte flipped at every
//! offset and with a forged `u32::MAX` at every fourth offset; then random bytes.

use std::path::{Path, PathBuf};

use pmfedit_core::format::bin::Reader;
use pmfedit_core::format::paf::Archive;
use pmfedit_core::format::{lz4f, pmf};
use pmfedit_core::fuzzing;
use pmfedit_tests::golden::cases;
use proptest::prelude::*;

/// `seed` whole, every prefix of it, and copies damaged at every offset: one byte flipped (the
/// flip pattern varies with the offset so every bit position is hit) and, at every fourth
/// offset, four bytes forged to `u32::MAX` (a size or count field claiming the most it can).
fn damaged(seed: &[u8]) -> impl Iterator<Item = Vec<u8>> + '_ {
    let cuts = (0..seed.len()).map(|n| seed[..n].to_vec());
    let flips = (0..seed.len()).map(|i| {
        let mut v = seed.to_vec();
        v[i] ^= 1 << (i % 8);
        v
    });
    let forged = (0..seed.len().saturating_sub(3)).step_by(4).map(|i| {
        let mut v = seed.to_vec();
        v[i..i + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        v
    });
    std::iter::once(seed.to_vec()).chain(cuts).chain(flips).chain(forged)
}

/// The bytes of every golden map, as the writer makes them (the golden test proves they are the
/// committed files).
fn golden_maps() -> Vec<(&'static str, Vec<u8>)> {
    cases()
        .into_iter()
        .map(|case| (case.name, pmf::write(&case.file).unwrap_or_else(|e| panic!("{}: {e}", case.name))))
        .collect()
}

/// A small archive with nested folders, files of several sizes and a link.
fn sample_archive() -> Vec<u8> {
    let mut archive = Archive::new();
    archive.insert_file("textures/stone.png", vec![7u8; 300]).unwrap();
    archive.insert_file("textures/skies/day.ptf", b"sky".to_vec()).unwrap();
    archive.insert_file("sounds/wind.ogg", Vec::new()).unwrap();
    archive.insert_link("textures/default.png", "textures/stone.png").unwrap();
    archive.to_bytes().unwrap()
}

fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/testdata").join(name)
}

#[test]
fn pmf_read_holds_on_every_damaged_golden_map() {
    let maps = golden_maps();
    assert!(!maps.is_empty(), "no golden maps to seed from");
    for (name, bytes) in maps {
        for input in damaged(&bytes) {
            fuzzing::pmf_read(&input);
        }
        // The undamaged file is accepted (so the property's round-trip half ran on it).
        assert!(pmf::read(&bytes).is_ok(), "{name}: the golden map must read");
    }
}

#[test]
fn paf_read_holds_on_every_damaged_archive() {
    let bytes = sample_archive();
    assert!(Archive::from_bytes(&bytes).is_ok(), "the seed archive must read");
    for input in damaged(&bytes) {
        fuzzing::paf_read(&input);
    }
}

#[test]
fn lz4_targets_hold_on_frames_of_real_maps() {
    for (name, bytes) in golden_maps() {
        fuzzing::lz4_round_trip(&bytes);
        // Repetitive input (long matches) and short prefixes (literal-only frames).
        fuzzing::lz4_round_trip(&bytes.repeat(3));
        for n in [0, 1, 2, 15, 16, 17, 64] {
            fuzzing::lz4_round_trip(&bytes[..n.min(bytes.len())]);
        }
        // `lz4_decode` reads a declared size, then a frame: seed it with the real size and frame.
        let mut seed = (bytes.len() as u32).to_le_bytes().to_vec();
        seed.extend(lz4f::compress(&bytes));
        assert_eq!(
            lz4f::decompress(&Reader::new(&seed[4..], name), bytes.len() as u64).unwrap(),
            bytes,
            "{name}: the seed frame must decode"
        );
        for input in damaged(&seed) {
            fuzzing::lz4_decode(&input);
        }
    }
}

#[test]
fn m3d_read_holds_on_every_damaged_sample() {
    let mut seeds = 0;
    for entry in std::fs::read_dir(testdata("m3d")).expect("../shared/testdata/m3d") {
        let path = entry.unwrap().path();
        let Some(ext) = path.extension() else { continue };
        if ext != "m3d" && ext != "a3d" {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        // The large sample is cut and flipped at a stride: every offset of 74 kB is minutes in
        // a debug build, and its header and first chunks are where the sizes live.
        if bytes.len() > 4096 {
            for input in damaged(&bytes[..4096]) {
                fuzzing::m3d_read(&input);
            }
            fuzzing::m3d_read(&bytes);
        } else {
            for input in damaged(&bytes) {
                fuzzing::m3d_read(&input);
            }
        }
        seeds += 1;
    }
    assert!(seeds >= 8, "expected the Model 3D samples, found {seeds}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn every_target_holds_on_random_bytes(data in proptest::collection::vec(any::<u8>(), 0..2048)) {
        fuzzing::pmf_read(&data);
        fuzzing::paf_read(&data);
        fuzzing::lz4_decode(&data);
        fuzzing::lz4_round_trip(&data);
        fuzzing::voxelplay_read(&data);
        fuzzing::m3d_read(&data);
    }

    /// Random bytes behind a real magic get past the first check, where a reader's size fields
    /// are.
    #[test]
    fn every_reader_holds_behind_its_magic(tail in proptest::collection::vec(any::<u8>(), 0..2048)) {
        for (_, map) in golden_maps().into_iter().take(3) {
            let mut data = map[..map.len().min(64)].to_vec();
            data.extend(&tail);
            fuzzing::pmf_read(&data);
        }
        let archive = sample_archive();
        let mut data = archive[..archive.len().min(32)].to_vec();
        data.extend(&tail);
        fuzzing::paf_read(&data);
        let mut data = b"3DMO".to_vec();
        data.extend(&tail);
        fuzzing::m3d_read(&data);
    }
}
