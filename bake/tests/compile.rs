//! Whole-map compile: the demo map compiles, writes, and re-reads losslessly with lit
//! lightmaps; output is deterministic.

use pmfedit_bake::compile::{CompileSettings, compile_full};
use pmfedit_core::format::pmf::{self, Compression};
use pmfedit_core::sample;

#[test]
fn demo_compiles_writes_and_rereads_losslessly() {
    let map = sample::demo();
    let settings = CompileSettings { timestamp: 1_700_000_000, ..CompileSettings::default() };
    let file = compile_full(&map, &settings).unwrap_or_else(|e| panic!("{e}"));
    let bytes = pmf::write(&file).unwrap_or_else(|e| panic!("{e}"));
    let back = pmf::read(&bytes).unwrap_or_else(|e| panic!("{e}"));
    assert!(back == file, "re-read file differs");
    assert_eq!(pmf::write(&back).unwrap(), bytes);

    let level = &file.levels[0];
    assert_eq!(level.common.materials.len(), map.library.materials().len());
    let faces: usize = level
        .chunks
        .iter()
        .flat_map(|c| &c.client.cubes)
        .map(|c| match &c.geometry {
            pmf::ClientGeometry::Geometry(g) => g.faces.count_ones() as usize,
            pmf::ClientGeometry::ExtGeometry(g) => g.triangle_counts.iter().filter(|&&n| n > 0).count(),
            pmf::ClientGeometry::None => 0,
        })
        .sum();
    assert!(faces > 1000, "only {faces} faces");
    // Lit: some luxels well above the ambient level.
    let bright =
        level.chunks.iter().flat_map(|c| &c.client.lightmaps).flat_map(|l| &l.luxels).filter(|&&v| v > 64).count();
    assert!(bright > 100, "only {bright} bright luxel channels");
    // Regions and entities made it into chunks.
    let regions: usize = level
        .chunks
        .iter()
        .map(|c| {
            c.common.weather_regions.len()
                + c.common.gravity_regions.len()
                + c.client.sound_regions.len()
                + c.client.sky_regions.len()
        })
        .sum();
    assert!(regions >= 4, "{regions} regions");
    let entities: usize =
        level.chunks.iter().map(|c| c.server.entities.len()).sum::<usize>() + level.server.entities.len();
    assert!(entities >= 6, "{entities} entities");
    // A dynamic and a fast light reach some chunk.
    assert!(level.chunks.iter().any(|c| !c.common.dynamic_lights.is_empty()));
    assert!(level.chunks.iter().any(|c| !c.common.fast_lights.is_empty()));
}

#[test]
fn compile_is_deterministic() {
    let map = sample::demo();
    let settings = CompileSettings { timestamp: 1, ..CompileSettings::default() };
    let a = pmf::write(&compile_full(&map, &settings).unwrap()).unwrap();
    let b = pmf::write(&compile_full(&map.snapshot(), &settings).unwrap()).unwrap();
    assert!(a == b);
}

/// An export encoded straight from the bakes, on any number of threads, is byte for byte the
/// file `pmf::write` makes of the compiled map; the demo's chunks name other chunks
/// (visibility), so their references are resolved on the way.
#[test]
fn parallel_export_from_the_bakes_equals_the_compiled_file() {
    use std::collections::BTreeMap;
    let map = sample::demo();
    let settings = CompileSettings { timestamp: 1_700_000_000, ..CompileSettings::default() };
    let mut bakes = BTreeMap::new();
    for (li, level) in map.levels.iter().enumerate() {
        for c in pmfedit_bake::compile::level_chunks(level) {
            bakes.insert((li, c), pmfedit_bake::compile::bake_chunk(&map, li, c, &settings).unwrap());
        }
    }
    assert!(
        bakes.values().any(|b| b
            .pmf
            .common
            .cubes
            .iter()
            .any(|c| c.visibility.as_ref().is_some_and(|v| !v.chunks.is_empty())))
    );
    let compiled = compile_full(&map, &settings).unwrap();
    // A whole file encoded on several threads is `pmf::write_as`'s bytes, in one buffer and as
    // the export writes it (the chunks' frames streamed from where they were compressed), for
    // either compression; high compression is smaller and reads back as the same records.
    let fast = pmf::write(&compiled).unwrap();
    for (compression, counts) in [(Compression::Fast, &[1, 2, 3, 5, 8][..]), (Compression::High, &[1, 3][..])] {
        let expected = pmf::write_as(&compiled, compression).unwrap();
        if compression == Compression::High {
            assert!(expected.len() < fast.len(), "high {} bytes, fast {}", expected.len(), fast.len());
            assert!(pmf::read(&expected).unwrap() == pmf::read(&fast).unwrap(), "the same records");
        }
        for &threads in counts {
            let whole = pmfedit_bake::compile::write_file(&compiled, threads, compression).unwrap();
            assert!(whole == expected, "{compression:?}, {threads} threads");
            let chunks = pmfedit_bake::compile::encode_chunks(&compiled, threads, compression).unwrap();
            let mut streamed = Vec::new();
            pmf::write_with_chunks(&compiled, &chunks, compression).unwrap().write_to(&mut streamed).unwrap();
            assert!(streamed == expected, "{compression:?}, {threads} threads, pieces");
            let mut streamed = std::io::Cursor::new(Vec::new());
            let len = pmfedit_bake::compile::write_file_to(&compiled, threads, compression, &mut streamed).unwrap();
            assert_eq!(len, expected.len() as u64);
            assert!(streamed.into_inner() == expected, "{compression:?}, {threads} threads, streamed as encoded");
        }
    }
    let expected = fast;
    // Records moved out of their bakes (`Rebuild::into_file`) make the same file; a bake held
    // elsewhere too is copied, and stays whole for its other holder.
    let skeleton = pmfedit_bake::compile::assemble(&map, |k| bakes.get(&k), &settings).unwrap().file;
    let mut owned: BTreeMap<_, std::sync::Arc<_>> =
        bakes.iter().map(|(k, b)| (*k, std::sync::Arc::new(b.clone()))).collect();
    let held = owned.values().next().unwrap().clone();
    let moved = pmfedit_bake::compile::fill_chunks(skeleton, &map, |k| owned.remove(&k)).unwrap();
    assert!(owned.is_empty(), "every bake taken");
    assert!(pmf::write(&moved).unwrap() == expected);
    assert_eq!(held.pmf, bakes[&(held.level, held.chunk)].pmf);
    let assembled = pmfedit_bake::compile::assemble(&map, |k| bakes.get(&k), &settings).unwrap();
    assert!(assembled.file.levels.iter().all(|l| l.chunks.is_empty()), "no chunk record copied");
    for threads in [1, 2, 3, 5, 8] {
        assert!(assembled.write(threads).unwrap() == expected, "{threads} threads");
    }
    let raw = assembled.raw_chunk_bytes().unwrap();
    assert!(raw.len() > expected.len(), "uncompressed chunk blocks are larger than the file");
    // Chunk by chunk, the same blocks in the same order.
    let mut each = Vec::new();
    let mut chunks = 0;
    assembled
        .each_chunk_blocks(|blocks| {
            chunks += 1;
            blocks.iter().for_each(|b| each.extend_from_slice(b));
        })
        .unwrap();
    assert_eq!(chunks, compiled.levels.iter().map(|l| l.chunks.len()).sum::<usize>());
    assert!(each == raw, "the blocks chunk by chunk are the concatenated blocks");
    // The export streamed into a digest (what `pmfc bench` compares instead of whole files) has
    // the digest of the file's bytes, on any thread count; one byte more or less does not.
    use pmfedit_bake::digest::{FileDigest, digest_of};
    let want = digest_of(&expected);
    for threads in [1, 2, 5] {
        let mut sink = FileDigest::new();
        let len = assembled.write_to(threads, &mut sink).unwrap();
        assert_eq!(len, expected.len() as u64);
        assert_eq!(sink.finish().unwrap(), want, "{threads} threads");
    }
    let mut changed = expected.clone();
    *changed.last_mut().unwrap() ^= 0x80;
    assert_ne!(digest_of(&changed), want);
    assert!(pmf::write(&assembled.into_file()).unwrap() == expected);
}

/// A full compile streamed chunk by chunk (bake, encode, write, drop: `pmfc bench`'s
/// incremental == full check) is byte for byte `pmf::write` of `compile_full`, on any number of
/// threads, and so is its digest.
#[test]
fn a_streamed_full_compile_equals_the_compiled_file() {
    use pmfedit_bake::compile::write_full_to;
    use pmfedit_bake::digest::{FileDigest, digest_of};
    let map = sample::demo();
    let settings = CompileSettings { timestamp: 1_700_000_000, ..CompileSettings::default() };
    let expected = pmf::write(&compile_full(&map, &settings).unwrap()).unwrap();
    for threads in [1, 3] {
        let mut out = std::io::Cursor::new(Vec::new());
        let len = write_full_to(&map, &settings, threads, &mut out).unwrap();
        assert_eq!(len, expected.len() as u64);
        assert!(out.into_inner() == expected, "{threads} threads");
    }
    let mut sink = FileDigest::new();
    write_full_to(&map, &settings, 2, &mut sink).unwrap();
    assert_eq!(sink.finish().unwrap(), digest_of(&expected));
    // Another map's full compile differs, and so does its digest.
    let mut other = map.snapshot();
    other.meta.name.push('!');
    let mut sink = FileDigest::new();
    write_full_to(&other, &settings, 2, &mut sink).unwrap();
    assert_ne!(sink.finish().unwrap(), digest_of(&expected));
}

/// Cubes at opposite corners of the coordinate space would make a dense grid of billions of
/// chunks: the chunk list stays small (occupied + center) and the compiler refuses with the span.
#[test]
fn a_grid_spanning_the_whole_space_is_refused_not_allocated() {
    use glam::IVec3;
    use pmfedit_bake::compile::{Grid, MAX_GRID_CHUNKS, level_chunks};
    use pmfedit_core::map::coords::LatticeBox;
    use pmfedit_core::map::ids::{MaterialId, PhysicsId, SoundId};
    use pmfedit_core::map::octree::Cube;
    use pmfedit_core::map::{Level, Map};

    let mut map = Map::new("scattered");
    map.levels[0] = Level::new("main", 0).unwrap();
    let cube = Cube::solid(MaterialId(0), PhysicsId(0), SoundId(0));
    let level = &mut map.levels[0];
    // One cube in the first chunk of the grid, one in the last (chunks of 1 unit = 8 lattice).
    let far = IVec3::new(4095, 255, 4095) * 8;
    for at in [IVec3::ZERO, far] {
        level.fill_box(LatticeBox::new(at, at + IVec3::ONE), cube).unwrap();
    }
    assert!(Grid::of(level).volume() > MAX_GRID_CHUNKS);
    let chunks = level_chunks(level);
    assert_eq!(chunks.len(), 3, "two occupied chunks and the center chunk: {chunks:?}");
    let err = compile_full(&map, &CompileSettings { visibility: None, ..CompileSettings::default() }).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("4096×256×4096") && msg.contains("closer"), "{msg}");
}

/// A preview bake (mesh + lightmaps only) must draw exactly what the full bake draws: the same
/// chunk record except the air cells' visibility and pathfinding data (and their statistics).
#[test]
fn a_preview_bake_is_the_full_bake_without_visibility_and_pathfinding() {
    use pmfedit_bake::compile::{bake_chunk, level_chunks};
    let map = sample::demo();
    let settings = CompileSettings::default();
    let preview = settings.preview();
    assert!(preview.is_preview() && !settings.is_preview());
    assert_eq!(preview.bake, settings.bake);
    assert_eq!(preview.light, settings.light);
    let (mut with_vis, mut with_paths, mut with_lightmaps) = (0, 0, 0);
    for c in level_chunks(&map.levels[0]) {
        let full = bake_chunk(&map, 0, c, &settings).unwrap_or_else(|e| panic!("{e}"));
        let quick = bake_chunk(&map, 0, c, &preview).unwrap_or_else(|e| panic!("{e}"));
        assert!(quick.pmf.common.cubes.iter().all(|cube| cube.visibility.is_none()));
        assert!(quick.pmf.server.cubes.iter().all(|cube| cube.pathfinding.is_none()));
        with_vis += full.pmf.common.cubes.iter().filter(|cube| cube.visibility.is_some()).count();
        with_paths += full.pmf.server.cubes.iter().filter(|cube| cube.pathfinding.is_some()).count();
        with_lightmaps += full.pmf.client.lightmaps.len();
        // What the viewport draws: geometry, lightmaps, lit air cells.
        assert!(quick.pmf.client == full.pmf.client, "chunk {c:?}: client data differs");
        let mut stripped = full.clone();
        for cube in &mut stripped.pmf.common.cubes {
            cube.visibility = None;
        }
        for cube in &mut stripped.pmf.server.cubes {
            cube.pathfinding = None;
        }
        stripped.stats.vis_searches = 0;
        stripped.vis = None;
        assert!(quick == stripped, "chunk {c:?}: preview differs from the full bake beyond visibility/pathfinding");
    }
    // The comparison was not vacuous.
    assert!(with_vis > 0 && with_paths > 0 && with_lightmaps > 0, "{with_vis} {with_paths} {with_lightmaps}");
}

/// Painted path attribute sets export with the map's names and facings (docs/spec/PMF-NOTES.md
/// P1), not as placeholders `user_<n>` facing nowhere; an id without a set keeps that old name.
#[test]
fn path_attribute_sets_export_by_name_and_facing() {
    use glam::IVec3;
    use pmfedit_core::map::Map;
    use pmfedit_core::map::coords::LatticeBox;
    use pmfedit_core::map::ids::{MaterialId, PathAttrs, PhysicsId, SoundId};
    use pmfedit_core::map::octree::Cube;
    use pmfedit_core::map::path_sets::PathSet;

    let mut map = Map::new("paths");
    let o = map.levels[0].frame().origin_lattice();
    let level = &mut map.levels[0];
    let floor = LatticeBox::new(o + IVec3::new(-64, -64, -64), o + IVec3::new(64, -56, 64));
    level.fill_box(floor, Cube::solid(MaterialId(0), PhysicsId(0), SoundId(0))).unwrap();
    let above = |x: i32| LatticeBox::new(o + IVec3::new(x, -56, 0), o + IVec3::new(x + 8, -48, 8));
    level.set_path_attrs_box(above(0), PathAttrs(2)).unwrap();
    level.set_path_attrs_box(above(16), PathAttrs(3)).unwrap();
    map.path_sets.0.insert(2, PathSet { name: "guard_post".into(), facing: Some([0.0, 0.0, -1.0]) });

    let settings = CompileSettings { timestamp: 1, ..CompileSettings::default() };
    let file = compile_full(&map, &settings).unwrap_or_else(|e| panic!("{e}"));
    let attrs: Vec<(String, [f32; 3])> = file.levels[0]
        .chunks
        .iter()
        .flat_map(|c| &c.server.cubes)
        .filter_map(|c| c.pathfinding.as_ref())
        .flatten()
        .filter(|a| a.name != "walk")
        .map(|a| (a.name.clone(), a.direction))
        .collect();
    assert!(attrs.contains(&("guard_post".to_owned(), [0.0, 0.0, -1.0])), "{attrs:?}");
    assert!(attrs.contains(&("user_3".to_owned(), [0.0; 3])), "{attrs:?}");
    assert!(!attrs.iter().any(|(n, _)| n == "user_2"), "{attrs:?}");
}

/// A 16×16×16 checkerboard of the smallest cubes: every face shows and every air cell sees
/// almost every cube (the shape that took a bake to 15 GB at 128×128×128).
fn checkerboard(k: i32) -> (pmfedit_core::map::Map, pmfedit_core::map::coords::ChunkCoord) {
    use glam::IVec3;
    use pmfedit_core::map::coords::CubeAddr;
    use pmfedit_core::map::ids::{MaterialId, PhysicsId, SoundId};
    use pmfedit_core::map::octree::Cube;
    let mut map = pmfedit_core::map::Map::new("dense");
    let o = map.levels[0].frame().origin_lattice() - IVec3::splat(64);
    let stone = Cube::solid(MaterialId(0), PhysicsId(0), SoundId(0));
    for y in 0..k {
        for z in 0..k {
            for x in 0..k {
                if (x + y + z) % 2 == 0 {
                    map.levels[0].set_cube(CubeAddr::new(o + IVec3::new(x, y, z), 0).unwrap(), stone).unwrap();
                }
            }
        }
    }
    let chunk = map.levels[0].frame().chunk_from_lattice(o);
    (map, chunk)
}

/// A chunk holding more cubes than a bake may take is refused before any work, with an error
/// naming it (a bake used to grow with them until memory ran out).
#[test]
fn a_chunk_over_the_cube_limit_is_refused_naming_it() {
    use pmfedit_bake::compile::bake_chunk;
    let (map, chunk) = checkerboard(16);
    let cubes = map.levels[0].chunk(chunk).unwrap().octree().node_count();
    let mut settings = CompileSettings::default();
    settings.bake.max_cubes = cubes - 1;
    let e = bake_chunk(&map, 0, chunk, &settings).unwrap_err().to_string();
    let place = format!("level 0, chunk (x {}, y {}, z {})", chunk.x, chunk.y, chunk.z);
    assert!(e.starts_with(&format!("{place}: holds {cubes} cubes, more than the {}", cubes - 1)), "{e}");
    settings.bake.max_cubes = cubes;
    assert!(bake_chunk(&map, 0, chunk, &settings).is_ok());
}

/// Visibility lists over their budget (air cells × visible cubes) first stop listing their own
/// chunk cube by cube: a cell names it whole instead (one chunk record, `0` = all its cubes),
/// longest own lists first, until the chunk fits, so every cell keeps data; only when that is
/// still too much do the cells that do not fit carry none (shortest kept). Conservative either
/// way, and never filling memory (or a block beyond the 1 GiB PMF limit).
#[test]
fn visibility_over_budget_names_the_own_chunk_whole_then_leaves_out_cells() {
    use pmfedit_bake::compile::bake_chunk;
    let (map, chunk) = checkerboard(16);
    let mut settings = CompileSettings::default();
    let full = bake_chunk(&map, 0, chunk, &settings).unwrap();
    let entries = |v: &pmf::Visibility| (v.cubes.len() + v.chunks.len()) as u64;
    let listed = |b: &pmfedit_bake::compile::ChunkBake| {
        b.pmf.common.cubes.iter().filter_map(|c| c.visibility.as_deref()).map(entries).sum::<u64>()
    };
    let with_data =
        |b: &pmfedit_bake::compile::ChunkBake| b.pmf.common.cubes.iter().filter(|c| c.visibility.is_some()).count();
    assert!(!full.stats.vis_skipped && listed(&full) > 1000, "{}", listed(&full));
    // Bakes name other chunks by absolute index (the compile maps them into the grid).
    let own = pmf::ChunkIndex { y: chunk.y as u8, x: chunk.x as u16, z: chunk.z as u16 };
    let whole_own = |f: &pmf::Visibility| {
        let mut v = f.chunks.to_vec();
        v.push(pmf::VisibleChunk { chunk: own, cubes: Vec::new() });
        v.sort_by_key(|c| c.chunk);
        pmf::Visibility { cubes: std::sync::Arc::from([]), chunks: v.into() }
    };

    // Half the entries: every cell keeps data, as baked or naming its chunk whole.
    let budget = listed(&full) / 2;
    settings.visibility.as_mut().unwrap().max_listed = budget;
    let bounded = bake_chunk(&map, 0, chunk, &settings).unwrap();
    assert!(!bounded.stats.vis_skipped, "a cell went without data though naming the chunk whole fits");
    assert!(listed(&bounded) <= budget, "{} of {budget}", listed(&bounded));
    let (mut exact, mut whole) = (0, 0);
    for (b, f) in bounded.pmf.common.cubes.iter().zip(&full.pmf.common.cubes) {
        match (&b.visibility, &f.visibility) {
            (Some(b), Some(f)) if b == f => exact += 1,
            (Some(b), Some(f)) => {
                assert_eq!(**b, whole_own(f), "a cell over the budget lists its own chunk whole, then its far chunks");
                whole += 1;
            }
            (None, None) => {}
            (b, f) => panic!("visibility data {} in the full bake, {} within the budget", f.is_some(), b.is_some()),
        }
    }
    assert!(exact > 0 && whole > 0, "{exact} cells as baked, {whole} naming their chunk whole");
    assert_eq!(with_data(&bounded), with_data(&full));

    // Fewer entries than cells: the cells that fit name their chunk whole, the others carry none.
    let cells = with_data(&full) as u64;
    settings.visibility.as_mut().unwrap().max_listed = cells / 2;
    let tight = bake_chunk(&map, 0, chunk, &settings).unwrap();
    assert!(tight.stats.vis_skipped);
    assert!(
        listed(&tight) <= cells / 2 && with_data(&tight) > 0,
        "{} entries in {} cells",
        listed(&tight),
        with_data(&tight)
    );
    let (mut longest_kept, mut shortest_dropped) = (0, u64::MAX);
    for (b, f) in tight.pmf.common.cubes.iter().zip(&full.pmf.common.cubes) {
        match (&b.visibility, &f.visibility) {
            (Some(b), Some(f)) => {
                assert!(*b == *f || **b == whole_own(f));
                longest_kept = longest_kept.max(entries(&whole_own(f)));
            }
            (None, Some(f)) => shortest_dropped = shortest_dropped.min(entries(&whole_own(f))),
            (None, None) => {}
            (Some(_), None) => panic!("a cell without lists in the full bake has some in the bounded one"),
        }
    }
    assert!(longest_kept > 0 && shortest_dropped < u64::MAX && longest_kept <= shortest_dropped);
    // Everything else is the same bake.
    assert_eq!(bounded.pmf.client, full.pmf.client);
    assert_eq!(bounded.pmf.server, full.pmf.server);
}

/// A map named `name` whose one level has 16-unit chunks (`Level::new("main", 4)`) and sun-only
/// light (no sky, no bounce: cheap to bake), with a stone cube, the lattice corner of the level's
/// centre chunk and the chunk's edge in lattice units.
fn sun_only_chunk_map(name: &str) -> (pmfedit_core::map::Map, pmfedit_core::map::octree::Cube, glam::IVec3, i32) {
    use pmfedit_core::map::ids::{MaterialId, PhysicsId, SoundId};
    use pmfedit_core::map::lighting::{LevelLighting, Sky};
    use pmfedit_core::map::octree::Cube;
    use pmfedit_core::map::{Level, Map};

    let mut map = Map::new(name);
    map.levels[0] = Level::new("main", 4).unwrap();
    map.levels[0].lighting =
        LevelLighting { sky: Sky { intensity: 0.0, ..Sky::default() }, bounces: 0, ..LevelLighting::default() };
    let frame = map.levels[0].frame();
    let min = frame.chunk_min_lattice(frame.center_chunk);
    let edge = 1 << (frame.chunk_size_log2 + 3);
    (map, Cube::solid(MaterialId(0), PhysicsId(0), SoundId(0)), min, edge)
}

/// Whole-level visibility shares one budget per level over the chunks of its grid
/// (`vis::LEVEL_LISTED`, docs/spec/PMF-NOTES.md V1), so a big level's lists cannot grow past what a
/// reader accepts. The same floor chunk keeps all its lists in a level of one chunk; when one far
/// cube stretches the grid to 64 × 1 × 64 chunks, whose share per chunk is smaller than what the
/// floor lists, its cells name their own chunk whole instead of its cubes one by one, and every
/// one of them keeps visibility data (before, only the cells that fit the share did).
#[test]
fn a_level_shares_its_visibility_budget_over_its_grid() {
    use glam::IVec3;
    use pmfedit_bake::vis::LEVEL_LISTED;
    use pmfedit_core::map::coords::LatticeBox;

    let (mut map, stone, min, edge) = sun_only_chunk_map("budget");
    // A floor one unit thick with a row of pillars: air cells that see many cubes of their chunk.
    map.levels[0].fill_box(LatticeBox::new(min, min + IVec3::new(edge, edge / 16, edge)), stone).unwrap();
    for i in (0..edge).step_by((edge / 8) as usize) {
        let at = min + IVec3::new(i, edge / 16, edge / 2);
        map.levels[0].fill_box(LatticeBox::new(at, at + IVec3::new(edge / 16, edge / 2, edge / 16)), stone).unwrap();
    }
    let settings = CompileSettings { timestamp: 1, ..CompileSettings::default() };
    let listed = |f: &pmf::File| -> (u64, usize) {
        let level = &f.levels[0];
        let mut n = 0u64;
        let mut with = 0;
        for chunk in &level.chunks {
            for v in chunk.common.cubes.iter().filter_map(|c| c.visibility.as_ref()) {
                n += (v.cubes.len() + v.chunks.len()) as u64;
                with += 1;
            }
        }
        (n, with)
    };
    let alone = compile_full(&map, &settings).unwrap();
    let (n, cells) = listed(&alone);
    let share = LEVEL_LISTED / (64 * 64);
    assert!(
        cells > 0 && n > share,
        "the floor lists {n} entries in {cells} cells: not over a 4 096-chunk share ({share})"
    );

    let far = min + IVec3::new(63 * edge, 0, 63 * edge);
    map.levels[0].fill_box(LatticeBox::new(far, far + IVec3::splat(edge / 16)), stone).unwrap();
    let wide = compile_full(&map, &settings).unwrap();
    assert_eq!(wide.levels[0].chunks.len(), 64 * 64, "the grid spans the far cube");
    let (fi, floor) = wide.levels[0].chunks.iter().enumerate().max_by_key(|(_, c)| c.common.cubes.len()).unwrap();
    let kept: u64 = floor
        .common
        .cubes
        .iter()
        .filter_map(|c| c.visibility.as_ref())
        .map(|v| (v.cubes.len() + v.chunks.len()) as u64)
        .sum();
    let kept_cells = floor.common.cubes.iter().filter(|c| c.visibility.is_some()).count();
    assert!(kept <= share, "the floor chunk lists {kept} entries past its share of the level's budget ({share})");
    assert_eq!(kept_cells, cells, "air cells of the floor chunk left without data within its share");
    // They fit by naming their own chunk whole (cube by cube it lists more than its share).
    let own = wide.levels[0].grid.index_of(fi);
    assert!(
        floor
            .common
            .cubes
            .iter()
            .filter_map(|c| c.visibility.as_ref())
            .any(|v| v.cubes.is_empty() && v.chunks.iter().any(|c| c.chunk == own && c.cubes.is_empty())),
        "no cell of the floor chunk names it whole"
    );
    // An engine culling with the file's lists culls in every cell: no air cell of the level
    // goes without data.
    let p = pmfedit_bake::vis::oracle::pair_counts(&wide.levels[0]);
    assert_eq!(p.cells, p.air, "{} of {} air cells carry visibility data", p.cells, p.air);
    // What the writer writes, the reader reads.
    let bytes = pmf::write(&wide).unwrap();
    pmf::read(&bytes).unwrap();
}

/// Rooms over their visibility budget keep most of their culling in the file: a 2 × 1 × 2 block
/// of rooms (one per chunk, pillars inside, a door between two of them) compiled with a chunk
/// budget of half what its lists hold. Every air cell keeps visibility data (its own chunk named
/// whole), and the share of (air cell, drawn geometry cube) pairs the file culls stays within 5
/// points of what the unbounded lists cull; leaving cells without data, as the budget did before,
/// lost about half of it.
#[test]
fn rooms_over_their_budget_keep_their_culling_in_the_file() {
    use glam::IVec3;
    use pmfedit_bake::vis::oracle::pair_counts;
    use pmfedit_core::map::coords::LatticeBox;

    let (mut map, stone, min, edge) = sun_only_chunk_map("rooms");
    let unit = edge / 16;
    let level = &mut map.levels[0];
    for (cx, cz) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
        let o = min + IVec3::new(cx * edge, 0, cz * edge);
        level.fill_box(LatticeBox::new(o, o + IVec3::splat(edge)), stone).unwrap();
        level.clear_box(LatticeBox::new(o + IVec3::splat(unit), o + IVec3::splat(edge - unit))).unwrap();
        for i in 1..4 {
            let at = o + IVec3::new(i * 4 * unit, unit, i * 3 * unit);
            level.fill_box(LatticeBox::new(at, at + IVec3::new(unit, 6 * unit, unit)), stone).unwrap();
        }
    }
    // A door between the rooms at x 0 and x 1 (z 0): the walls of both chunks.
    let door = min + IVec3::new(edge - unit, unit, 6 * unit);
    level.clear_box(LatticeBox::new(door, door + IVec3::new(2 * unit, 4 * unit, 2 * unit))).unwrap();

    let mut settings = CompileSettings { timestamp: 1, ..CompileSettings::default() };
    let full = compile_full(&map, &settings).unwrap();
    let per_chunk: Vec<u64> = full.levels[0]
        .chunks
        .iter()
        .map(|c| {
            c.common
                .cubes
                .iter()
                .filter_map(|c| c.visibility.as_ref())
                .map(|v| (v.cubes.len() + v.chunks.len()) as u64)
                .sum()
        })
        .collect();
    let p_full = pair_counts(&full.levels[0]);
    assert_eq!(p_full.cells, p_full.air);
    assert!(p_full.culled() > 0.5, "the rooms cull only {:.1} % of pairs", 100.0 * p_full.culled());

    settings.visibility.as_mut().unwrap().max_listed = per_chunk.iter().copied().filter(|&n| n > 0).min().unwrap() / 2;
    let bounded = compile_full(&map, &settings).unwrap();
    let p = pair_counts(&bounded.levels[0]);
    assert_eq!(p.cells, p.air, "{} of {} air cells carry visibility data", p.cells, p.air);
    assert!(
        p.culled() >= p_full.culled() - 0.05,
        "the file culls {:.1} % of pairs within the budget, {:.1} % without",
        100.0 * p.culled(),
        100.0 * p_full.culled()
    );
}

/// The file writes air cells with the same data as one cube (PMF-NOTES C4b, *Air cells with the
/// same data*) and buried geometry as one cube (C4c): on a small terrain it holds fewer empty and
/// fewer geometry cubes than the bakes, and an engine looking up any point of the level in the
/// file finds what the bake gave the cell there (type, light, lists, pathfinding; a cube that
/// draws a face, its very records), the lists naming the same cubes that draw, and a cube at
/// least as big for each buried one.
#[test]
fn the_file_merges_air_alike_and_buried_geometry_and_every_point_finds_its_bakes_data() {
    use pmfedit_bake::compile::Grid;
    use std::collections::BTreeMap;
    let map = sample::terrain(3, 2, 3, 11);
    let settings = CompileSettings { timestamp: 1, ..CompileSettings::default() };
    let mut bakes = BTreeMap::new();
    for c in pmfedit_bake::compile::level_chunks(&map.levels[0]) {
        bakes.insert((0, c), pmfedit_bake::compile::bake_chunk(&map, 0, c, &settings).unwrap());
    }
    let file = pmfedit_bake::compile::assemble(&map, |k| bakes.get(&k), &settings).unwrap().into_file();
    assert!(pmf::read(&pmf::write(&file).unwrap()).unwrap() == file, "the merged file reads back");
    let level = &file.levels[0];
    let exp = level.chunk_size_exp;
    let edge = f64::from(exp).exp2();
    let grid = Grid::of(&map.levels[0]);
    let (mut baked, mut written, mut solid_baked, mut solid_written) = (0, 0, 0, 0);
    let draws = |ch: &pmf::Chunk, k: u32| match &ch.client.cubes[k as usize].geometry {
        pmf::ClientGeometry::Geometry(g) => g.faces != 0,
        pmf::ClientGeometry::ExtGeometry(g) => g.triangle_counts.iter().any(|&t| t > 0),
        pmf::ClientGeometry::None => false,
    };
    let inside = |a: [i64; 4], b: [i64; 4]| (0..3).all(|i| a[i] >= b[i] && a[i] + a[3] <= b[i] + b[3]);
    // The box of each cube a point finds, as (min, edge) in chunk space.
    let boxes = |cubes: &[pmf::Cube], points: &[[f64; 3]]| -> BTreeMap<u32, [i64; 4]> {
        points
            .iter()
            .filter_map(|&p| pmf::leaf_at(cubes, exp, p))
            .map(|l| (l.index, [l.min[0] as i64, l.min[1] as i64, l.min[2] as i64, l.edge as i64]))
            .collect()
    };
    for (i, c) in grid.chunks().into_iter().enumerate() {
        let (bake, out) = (&bakes[&(0, c)].pmf, &level.chunks[i]);
        let count = |ch: &pmf::Chunk| ch.common.cubes.iter().filter(|c| c.kind == pmf::CubeKind::Empty).count();
        baked += count(bake);
        written += count(out);
        let solid = |ch: &pmf::Chunk| ch.common.cubes.iter().filter(|c| c.kind.type_id() == 2).count();
        solid_baked += solid(bake);
        solid_written += solid(out);
        // The centre of every unit cell (air cells are 2 units; geometry is at least 1).
        let n = edge as usize;
        let points: Vec<[f64; 3]> = (0..n * n * n)
            .map(|k| {
                [(k % n) as f64 + 0.5, ((k / n) % n) as f64 + 0.5, (k / (n * n)) as f64 + 0.5].map(|v| v - edge / 2.0)
            })
            .collect();
        let (bake_boxes, out_boxes) = (boxes(&bake.common.cubes, &points), boxes(&out.common.cubes, &points));
        for &p in &points {
            let (a, b) =
                (pmf::leaf_at(&bake.common.cubes, exp, p).unwrap(), pmf::leaf_at(&out.common.cubes, exp, p).unwrap());
            let (ai, bi) = (a.index as usize, b.index as usize);
            assert_eq!(bake.common.cubes[ai].kind.type_id(), out.common.cubes[bi].kind.type_id(), "{c:?} {p:?}");
            assert_eq!(bake.client.cubes[ai].lighting, out.client.cubes[bi].lighting, "{c:?} {p:?}");
            assert_eq!(bake.server.cubes[ai].pathfinding, out.server.cubes[bi].pathfinding, "{c:?} {p:?}");
            assert_eq!(draws(bake, a.index), draws(out, b.index), "{c:?} {p:?}");
            if draws(bake, a.index) {
                assert_eq!(bake.common.cubes[ai].kind, out.common.cubes[bi].kind, "{c:?} {p:?}");
                assert_eq!(bake.client.cubes[ai].geometry, out.client.cubes[bi].geometry, "{c:?} {p:?}");
            }
            let (va, vb) = (&bake.common.cubes[ai].visibility, &out.common.cubes[bi].visibility);
            assert_eq!(va.is_some(), vb.is_some(), "{c:?} {p:?}");
            if let (Some(va), Some(vb)) = (va, vb) {
                let own_a: Vec<_> = va.cubes.iter().filter(|&&k| draws(bake, k)).map(|k| bake_boxes[k]).collect();
                let own_b: Vec<_> = vb.cubes.iter().filter(|&&k| draws(out, k)).map(|k| out_boxes[k]).collect();
                assert_eq!(own_a, own_b, "{c:?} {p:?}: the own list names the same cubes that draw");
                for k in va.cubes.iter().filter(|&&k| !draws(bake, k)) {
                    assert!(
                        vb.cubes.iter().any(|kb| inside(bake_boxes[k], out_boxes[kb])),
                        "{c:?} {p:?}: a buried cube listed is inside a listed cube"
                    );
                }
                let far_a: Vec<_> = va
                    .chunks
                    .iter()
                    .filter_map(|r| {
                        grid.index(pmfedit_core::map::coords::ChunkCoord::new(
                            r.chunk.x.into(),
                            r.chunk.y.into(),
                            r.chunk.z.into(),
                        ))
                    })
                    .collect();
                let far_b: Vec<_> = vb.chunks.iter().map(|r| r.chunk).collect();
                assert_eq!(far_a, far_b, "{c:?} {p:?}: the same far chunks");
            }
        }
    }
    assert!(written < baked, "air cells alike merged: {written} empty cubes written for {baked} baked");
    assert!(solid_written < solid_baked, "buried geometry merged: {solid_written} written for {solid_baked} baked");
    // The culling figures count a merged cube as the cells it stands for: the bakes' records (far
    // lists resolved into the grid, as the file's are) give the same pairs.
    let mut unmerged = level.clone();
    for (i, c) in grid.chunks().into_iter().enumerate() {
        let mut chunk = bakes[&(0, c)].pmf.clone();
        for v in chunk.common.cubes.iter_mut().filter_map(|c| c.visibility.as_mut()) {
            let chunks: Vec<pmf::VisibleChunk> = v
                .chunks
                .iter()
                .filter_map(|r| {
                    let at = pmfedit_core::map::coords::ChunkCoord::new(
                        r.chunk.x.into(),
                        r.chunk.y.into(),
                        r.chunk.z.into(),
                    );
                    Some(pmf::VisibleChunk { chunk: grid.index(at)?, cubes: r.cubes.clone() })
                })
                .collect();
            v.chunks = chunks.into();
        }
        unmerged.chunks[i] = chunk;
    }
    use pmfedit_bake::vis::oracle::pair_counts;
    let (merged, cells) = (pair_counts(level), pair_counts(&unmerged));
    assert_eq!(cells.air, baked as u64);
    assert_eq!(merged, cells, "the culling figures of the merged file are the cells'");
}
