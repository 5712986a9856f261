//! The bake cache (`bake/src/cache.rs`): bakes saved beside a project are reused exactly when
//! their inputs still hold, the export made from them equals a fresh full compile byte for byte,
//! and a damaged or hostile entry is rebuilt, never used and never a panic.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use glam::IVec3;

use pmfedit_bake::cache::{self, CacheError};
use pmfedit_bake::compile::{CompileSettings, bake_chunk_with, compile_full, level_chunks};
use pmfedit_bake::deps::ChunkKey;
use pmfedit_bake::rebuild::{Plan, Rebuild};
use pmfedit_bake::scheduler::Scheduler;
use pmfedit_bake::vis::VisCache;
use pmfedit_core::edit::{CubeOp, Edit, History};
use pmfedit_core::format::pmf;
use pmfedit_core::map::Map;
use pmfedit_core::map::coords::CubeAddr;
use pmfedit_core::map::library::Light;
use pmfedit_core::map::lighting::{LevelLighting, Sky};
use pmfedit_core::map::octree::Cube;
use pmfedit_core::sample;

/// The default settings (visibility and pathfinding included) with a draft's lighting, which
/// keeps these debug-build bakes quick; the cache does not care what the settings are.
fn settings() -> CompileSettings {
    let mut s = CompileSettings { timestamp: 7, ..CompileSettings::default() };
    s.light.emitter_grid = 1;
    s.light.ao = None;
    s.light.gather = s.light.gather.draft();
    s
}

/// A small terrain lit by the sun alone plus one lamp over its far corner (so light reach is
/// part of the key).
fn map() -> Map {
    let mut map = sample::terrain(4, 2, 4, 5);
    let level = &mut map.levels[0];
    level.lighting =
        LevelLighting { sky: Sky { intensity: 0.0, ..Sky::default() }, bounces: 0, ..LevelLighting::default() };
    let (_, hi) = level.occupied_bounds().unwrap();
    let f = level.frame();
    let mut lamp = Light::point("lamp", (f.chunk_center_world(hi) + glam::DVec3::new(0.0, 2.0, 0.0)).as_vec3());
    lamp.range = 6.0;
    level.objects.add(lamp).unwrap();
    map
}

fn engine(map: &Map, bakes: std::collections::BTreeMap<ChunkKey, pmfedit_bake::compile::ChunkBake>) -> Rebuild {
    Rebuild::with_bakes(Scheduler::new(2, settings(), Arc::new(|| {})), Plan::FinalOnly, Arc::new(map.clone()), bakes)
}

fn bytes(f: &pmf::File) -> Vec<u8> {
    pmf::write(f).unwrap()
}

/// Bakes `map` from scratch and stores the cache into `dir`; returns the engine.
fn bake_and_store(map: &Map, dir: &Path) -> Rebuild {
    let mut e = engine(map, Default::default());
    e.wait();
    assert!(e.is_final());
    store(&e, dir);
    e
}

fn store(e: &Rebuild, dir: &Path) -> cache::Stored {
    let bakes = e.slots().keys().filter_map(|&k| e.full(k)).map(|b| &**b);
    cache::store(dir, e.map(), e.settings(), bakes).unwrap()
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(cache::dir(dir)).unwrap().map(|e| e.unwrap().path()).collect();
    v.sort();
    v
}

/// Changes one cube (to stone, or to air where it is stone already) in the corner chunk of the
/// terrain's top layer away from the lamp; returns the chunk.
fn edit(map: &mut Map) -> ChunkKey {
    let level = &map.levels[0];
    let (lo, hi) = level.occupied_bounds().unwrap();
    let c = pmfedit_core::map::coords::ChunkCoord::new(lo.x, hi.y, lo.z);
    let min = level.frame().chunk_min_lattice(c);
    let addr = CubeAddr::containing(min + IVec3::new(8, 8, 8), 3);
    let hash = |m: &Map| m.levels[0].chunk(c).map(|ch| ch.octree().content_hash());
    let before = hash(map);
    for cube in [Cube::solid(Default::default(), Default::default(), Default::default()), Cube::EMPTY] {
        History::new().apply(map, Edit::Cubes { level: 0, op: CubeOp::SetCube { addr, cube } }).unwrap();
        if hash(map) != before {
            return (0, c);
        }
    }
    panic!("no edit changed chunk {c:?}")
}

#[test]
fn a_reopened_map_bakes_nothing_and_exports_the_bytes_of_a_full_compile() {
    let dir = tempfile::tempdir().unwrap();
    let map = map();
    let cold = bake_and_store(&map, dir.path());
    let chunks = cold.slots().len();
    assert_eq!(entries(dir.path()).len(), chunks, "one entry per chunk");

    // "Reopen": a fresh map value with the same content (new allocations, new generations).
    let reopened = map.snapshot();
    let loaded = cache::load(dir.path(), &reopened, &settings());
    assert!(loaded.rejected.is_empty(), "{:?}", loaded.rejected);
    assert_eq!(loaded.bakes.len(), chunks, "every chunk from the cache");
    // Entries keep no far lists (B5): a loaded bake lists no other chunk until the engine writes
    // its far lists from the map's summaries; the fresh bakes do list some (else this proves
    // nothing).
    let far = |b: &pmfedit_bake::compile::ChunkBake| {
        b.pmf.common.cubes.iter().filter_map(|c| c.visibility.as_ref()).map(|v| v.chunks.len()).sum::<usize>()
    };
    assert!(loaded.bakes.values().all(|b| far(b) == 0), "far lists stored in an entry");
    assert!(loaded.bakes.keys().map(|&k| far(cold.full(k).unwrap())).sum::<usize>() > 0, "no far lists to store");
    for (k, b) in &loaded.bakes {
        let fresh = cold.full(*k).unwrap();
        assert_eq!((b.stats, &b.reads, &b.vis), (fresh.stats, &fresh.reads, &fresh.vis), "{k:?}");
    }
    let warm = engine(&reopened, loaded.bakes);
    assert_eq!(warm.in_flight(), 0, "nothing queued on a warm open");
    assert!(warm.is_final());
    for (k, fresh) in cold.slots().keys().map(|&k| (k, cold.full(k).unwrap())) {
        assert_eq!(
            warm.full(k).unwrap().pmf,
            fresh.pmf,
            "{k:?}: the cached record, far lists written, is the baked one"
        );
    }
    let full = bytes(&compile_full(&map, &settings()).unwrap());
    assert_eq!(bytes(&warm.compile(None).unwrap()), full, "cached export == fresh full compile");

    // Storing the same bakes again writes nothing and keeps every entry.
    let again = store(&warm, dir.path());
    assert_eq!((again.written, again.kept, again.removed), (0, chunks, 0));
    assert!(again.hashed > 0, "the store hashed no chunk of its own");
    // Given the load's chunk hashes (the same map, unchanged), the store hashes no chunk again
    // and decides exactly the same.
    assert!(loaded.hashes.len() >= chunks, "{} hashes for {chunks} chunks", loaded.hashes.len());
    let bakes = warm.slots().keys().filter_map(|&k| warm.full(k)).map(|b| &**b);
    let known = cache::store_known(dir.path(), warm.map(), warm.settings(), bakes, &loaded.hashes).unwrap();
    assert_eq!(known, cache::Stored { hashed: 0, ..again });
    assert_eq!(entries(dir.path()).len(), chunks);

    // A changed compile setting (visibility off) is another key: nothing is reused.
    let other = CompileSettings { visibility: None, ..settings() };
    assert!(cache::load(dir.path(), &reopened, &other).bakes.is_empty());
}

#[test]
fn an_edit_reuses_only_the_entries_whose_inputs_hold_and_save_prunes_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let mut map = map();
    let cold = bake_and_store(&map, dir.path());
    let chunks = cold.slots().len();
    let edited = edit(&mut map);

    let loaded = cache::load(dir.path(), &map, &settings());
    let missing: BTreeSet<ChunkKey> = cold.slots().keys().filter(|k| !loaded.bakes.contains_key(k)).copied().collect();
    assert!(missing.contains(&edited), "the edited chunk is re-baked");
    let v = edited.1.as_ivec3();
    for k in cold.slots().keys() {
        if (k.1.as_ivec3() - v).abs().max_element() <= 1 {
            assert!(missing.contains(k), "neighbour {k:?} of the edit is re-baked");
        }
    }
    assert!(loaded.bakes.len() >= chunks / 2, "most chunks reused: {} of {chunks}", loaded.bakes.len());
    assert_eq!(loaded.stale(), missing.len(), "every missing chunk had a stale entry");

    let mut warm = engine(&map, loaded.bakes);
    assert_eq!(warm.in_flight(), missing.len(), "only the stale chunks are queued");
    warm.wait();
    assert!(warm.is_final());
    let full = bytes(&compile_full(&map, &settings()).unwrap());
    assert_eq!(bytes(&warm.compile(None).unwrap()), full, "incremental from the cache == full");

    // Saving writes the re-baked chunks' entries and deletes the stale ones (and leftovers).
    std::fs::write(cache::dir(dir.path()).join("0.0.0.0.x.bake.1.2.tmp"), b"half").unwrap();
    let s = store(&warm, dir.path());
    assert_eq!(s.written, missing.len());
    assert_eq!(s.kept, chunks - missing.len());
    assert_eq!(s.removed, missing.len() + 1);
    assert_eq!(entries(dir.path()).len(), chunks);

    // Moving the lamp changes the level's inputs: nothing is reused.
    let lamp = map.levels[0].objects.lights().ids().next().unwrap();
    let mut moved = map.clone();
    let light: &Light = moved.levels[0].objects.lights().get(lamp).unwrap();
    let mut light = light.clone();
    light.position.x += 1.0;
    moved.levels[0].objects.replace(lamp, light).unwrap();
    assert!(cache::load(dir.path(), &moved, &settings()).bakes.is_empty());
}

#[test]
fn damaged_entries_are_rebaked_never_used() {
    let dir = tempfile::tempdir().unwrap();
    let map = map();
    let cold = bake_and_store(&map, dir.path());
    let chunks = cold.slots().len();
    let files = entries(dir.path());
    // The largest entry has real records (mesh, lightmaps, visibility) to damage.
    let victim = files.iter().max_by_key(|p| std::fs::metadata(p).unwrap().len()).unwrap().clone();
    let good = std::fs::read(&victim).unwrap();
    let name = victim.file_name().unwrap().to_string_lossy().into_owned();
    assert!(cache::decode_entry(&good, &name).is_ok());

    // Truncated anywhere, or one byte flipped anywhere: refused.
    let mut cuts: Vec<usize> = (0..good.len()).step_by(good.len() / 97 + 1).collect();
    cuts.extend([0, 1, 8, good.len() - 17, good.len() - 16, good.len() - 1]);
    for cut in cuts {
        assert!(cache::decode_entry(&good[..cut], &name).is_err(), "truncated at {cut}");
    }
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    for _ in 0..200 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let mut bad = good.clone();
        let at = (seed % bad.len() as u64) as usize;
        bad[at] ^= 1 << ((seed >> 32) % 8);
        assert!(cache::decode_entry(&bad, &name).is_err(), "byte {at} flipped");
    }

    // An entry of the first layout (which kept far lists in its record) is refused by its
    // format number, not misread.
    let mut old = good[..good.len() - 16].to_vec();
    old[8..10].copy_from_slice(&1u16.to_le_bytes());
    let sum = twox_hash::XxHash3_128::oneshot(&old);
    old.extend_from_slice(&sum.to_le_bytes());
    let e = cache::decode_entry(&old, &name).unwrap_err().to_string();
    assert!(e.contains("entry format 1, this build reads 2 and 3"), "{e}");

    // An entry of format 2 (no top layer) is read, its top left for the load to take from the
    // level; the same bytes with a top layer flag other than 0 or 1 are refused.
    let u32_at = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) as usize;
    let inputs = 30 + 16;
    let reads = inputs + 4 + 28 * u32_at(&good, inputs);
    let top = reads + 4 + 12 * u32_at(&good, reads);
    let body = &good[..good.len() - 16];
    let with_sum = |mut b: Vec<u8>| {
        let sum = twox_hash::XxHash3_128::oneshot(&b);
        b.extend_from_slice(&sum.to_le_bytes());
        b
    };
    let mut two = [&body[..top], &body[top + 5..]].concat();
    two[8..10].copy_from_slice(&2u16.to_le_bytes());
    let entry = cache::decode_entry(&with_sum(two), &name).unwrap();
    assert!(entry.top_from_level && entry.bake.top_layer.is_none());
    let mut flag = body.to_vec();
    flag[top] = 2;
    assert!(cache::decode_entry(&with_sum(flag), &name).unwrap_err().to_string().contains("top layer flag 2"));

    // Hostile: mutated bytes under a recomputed checksum get past the checksum; the bounded
    // reader must still refuse or decode them without panicking or allocating wildly.
    for _ in 0..300 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let mut bad = good[..good.len() - 16].to_vec();
        for k in 0..1 + seed % 4 {
            let at = ((seed >> (8 * k)) % bad.len() as u64) as usize;
            bad[at] = (seed >> (16 + k)) as u8;
        }
        let sum = twox_hash::XxHash3_128::oneshot(&bad);
        bad.extend_from_slice(&sum.to_le_bytes());
        let _ = cache::decode_entry(&bad, &name);
    }

    // On disk: the damaged entry is reported and its chunk re-baked; the others are reused and
    // the export is still the full compile's.
    let mut bad = good.clone();
    bad[good.len() / 2] ^= 0x40;
    std::fs::write(&victim, &bad).unwrap();
    // An entry copied under another chunk's name is not that chunk's bake.
    let other = files.iter().find(|p| **p != victim).unwrap();
    let key_part = |p: &Path| p.file_name().unwrap().to_string_lossy().rsplitn(3, '.').nth(2).unwrap().to_owned();
    // (Digest 0… sorts before the real entry, so it is the one tried first.)
    let forged = cache::dir(dir.path()).join(format!("{}.{}.bake", key_part(other), "0".repeat(32)));
    std::fs::write(&forged, &good).unwrap();
    std::fs::write(cache::dir(dir.path()).join(format!("{}.{}.bake", key_part(&victim), "0".repeat(32))), b"").unwrap();
    let loaded = cache::load(dir.path(), &map, &settings());
    assert_eq!(loaded.bakes.len(), chunks - 1, "only the damaged chunk is missing");
    assert!(
        loaded.rejected.iter().any(|e| matches!(e, CacheError::Format { path, .. } if *path == victim)),
        "{:?}",
        loaded.rejected
    );
    assert!(
        loaded.rejected.iter().any(|e| matches!(e, CacheError::Misnamed { path } if *path == forged)),
        "{:?}",
        loaded.rejected
    );
    // Read on one thread or several (more than there are chunks), the outcome is the same.
    for threads in [1, 3, chunks + 5] {
        let other = cache::load_on(dir.path(), &map, &settings(), threads);
        assert_eq!(other.bakes, loaded.bakes, "{threads} threads");
        assert_eq!(format!("{:?}", other.rejected), format!("{:?}", loaded.rejected), "{threads} threads");
    }
    let report = loaded.report();
    assert_eq!((report.reused, report.stale, report.unusable), (chunks - 1, 0, 3), "{report}");
    let first = loaded.rejected.iter().find(|e| !matches!(e, CacheError::Stale { .. })).unwrap().to_string();
    assert!(report.to_string().ends_with(&format!("; first: {first}")), "{report}: the first reason is shown");
    // The damaged entry's file has the name of the chunk's fresh bake: discarded, it is written
    // again; kept, `store` would keep it too and the chunk would be re-baked on every open.
    assert_eq!(loaded.discard_unusable(), 3);
    assert!(!victim.exists() && !forged.exists());
    let mut warm = engine(&map, loaded.bakes);
    assert_eq!(warm.in_flight(), 1);
    warm.wait();
    let full = bytes(&compile_full(&map, &settings()).unwrap());
    assert_eq!(bytes(&warm.compile(None).unwrap()), full);
    assert_eq!(store(&warm, dir.path()).written, 1, "only the re-baked chunk is written");
    let again = cache::load(dir.path(), &map, &settings());
    assert_eq!((again.bakes.len(), again.rejected.len()), (chunks, 0), "{}", again.report());
    // `pmfc build`'s way: the engine consumed, its records moved into the file.
    assert_eq!(bytes(&warm.into_file(None).unwrap()), full);
}

/// What the bake makes of [`pinned_map`], per [`cache::COMPILER`] version, oldest first: an
/// xxh3-128 digest of every chunk's [`cache::bake_digest`] (what a cache entry stores of a bake,
/// uncompressed). The cache trusts an entry made by the same version, so a change that alters the
/// bakes for the same inputs must bump `COMPILER`, or saved bakes of the old output would be taken
/// as current. When [`the_compiler_version_names_what_the_bake_writes`] fails, bump `COMPILER`
/// and append the new row; never edit a past one. A change after the bakes (the file merges,
/// docs/spec/PMF-NOTES.md C4b/C4c; the LZ4 parse) leaves the digest and the saved bakes as they
/// were. (Until version 5 the rows digested the compiled file's uncompressed chunk blocks, so a
/// change to the file step alone bumped the version too: 2 taken at main 4be5f02; 3, slopes side
/// by side hide the faces they share; 4, air cells with the same data merged in the file; 5,
/// buried geometry merged in the file. Those rows are gone with that measure; 5's row is the
/// bakes' digest of the same version.)
const BAKE_OUTPUT_BY_COMPILER: &[(u32, u128)] = &[(5, 0x3181cd56f31cd700c84bb3f31c356eac)];

/// A small terrain with every kind of light the bake handles (sun, sky, one bounce, the
/// terrain's static, dynamic, fast and tower lights), and the default final settings:
/// visibility, pathfinding, exact light.
fn pinned_map() -> (Map, CompileSettings) {
    (sample::terrain(3, 2, 3, 11), CompileSettings { timestamp: 1, ..CompileSettings::default() })
}

#[test]
fn the_compiler_version_names_what_the_bake_writes() {
    let (map, settings) = pinned_map();
    let cache = VisCache::new(settings.visibility.unwrap_or_default());
    let mut h = twox_hash::XxHash3_128::new();
    let mut bakes = 0;
    for (li, level) in map.levels.iter().enumerate() {
        for c in level_chunks(level) {
            let bake = bake_chunk_with(&map, li, c, &settings, &cache).unwrap();
            h.write(&cache::bake_digest(&bake, level.chunk_size_log2()).unwrap().to_le_bytes());
            bakes += 1;
        }
    }
    assert_eq!(bakes, 3 * 2 * 3, "every chunk baked");
    let digest = h.finish_128();
    let versions: BTreeSet<u32> = BAKE_OUTPUT_BY_COMPILER.iter().map(|r| r.0).collect();
    let digests: BTreeSet<u128> = BAKE_OUTPUT_BY_COMPILER.iter().map(|r| r.1).collect();
    assert_eq!(versions.len(), BAKE_OUTPUT_BY_COMPILER.len(), "one row per version");
    assert_eq!(digests.len(), BAKE_OUTPUT_BY_COMPILER.len(), "a version's output differs from every other's");
    let &(version, pinned) = BAKE_OUTPUT_BY_COMPILER.last().unwrap();
    assert_eq!(version, cache::COMPILER, "the last row names the current cache::COMPILER");
    assert_eq!(
        digest,
        pinned,
        "the bake's output for the same map changed (digest {digest:#034x}): if that is intended, bump \
         cache::COMPILER to {} and append ({}, {digest:#034x}) to BAKE_OUTPUT_BY_COMPILER",
        version + 1,
        version + 1
    );
}

/// A bake made under an older top of the level (content later rose above it, too far away to
/// reach it) keeps that top through the cache: after saving and reopening, a change in the new
/// layer that its sun rays pass must still re-bake it (the rebuild engine matches changes above
/// a bake's top by geometry, PMF-NOTES.md K5). Were the reopened bake given the level's current
/// top, the second edit below would leave it stale.
#[test]
fn a_bake_from_under_an_older_top_keeps_it_through_the_cache() {
    use pmfedit_core::map::coords::LatticeBox;
    const EDGE: i32 = 32;
    let dir = tempfile::tempdir().unwrap();
    let mut map = Map::new("risen");
    map.levels[0] = pmfedit_core::map::Level::new("main", 2).unwrap();
    let f = map.levels[0].frame();
    let o = f.chunk_min_lattice(f.center_chunk);
    map.levels[0]
        .fill_box(
            LatticeBox::new(o, o + IVec3::new(8 * EDGE, 8, 8 * EDGE)),
            Cube::solid(Default::default(), Default::default(), Default::default()),
        )
        .unwrap();
    let l = &mut map.levels[0].lighting;
    *l = LevelLighting::none();
    l.sun.intensity = 1.0;
    l.sun.azimuth = 90.0;
    l.sun.elevation = 25.0;
    l.sun.angle = 0.0;
    let stone = || Cube::solid(Default::default(), Default::default(), Default::default());
    let mut history = History::new();
    let mut e = bake_and_store(&map, dir.path());
    let corner = (0, f.chunk_from_lattice(o + IVec3::new(4, 0, 4)));
    let set =
        |at: IVec3| Edit::Cubes { level: 0, op: CubeOp::SetCube { addr: CubeAddr::containing(at, 3), cube: stone() } };

    // Rise over the far corner: the near corner is not re-baked, and the save keeps its bake.
    let changes = history.apply(&mut map, set(o + IVec3::new(7 * EDGE + 8, EDGE + 24, 7 * EDGE + 8))).unwrap();
    e.edited(Arc::new(map.clone()), &changes);
    e.wait();
    assert_eq!(e.full(corner).unwrap().top_layer, Some(corner.1.y));
    store(&e, dir.path());

    let loaded = cache::load(dir.path(), &map, &settings());
    assert_eq!(loaded.bakes.get(&corner).unwrap().top_layer, Some(corner.1.y), "the older top, not the level's");
    let mut warm = engine(&map, loaded.bakes);
    assert_eq!(warm.in_flight(), 0);
    // A cube in the new layer over chunk 3 shades the near corner's floor.
    let changes = history.apply(&mut map, set(o + IVec3::new(3 * EDGE + 12, EDGE + 24, 12))).unwrap();
    warm.edited(Arc::new(map.clone()), &changes);
    warm.wait();
    assert!(warm.is_final());
    let full = bytes(&compile_full(&map, &settings()).unwrap());
    assert_eq!(bytes(&warm.compile(None).unwrap()), full, "incremental after a reopen == full");
}
