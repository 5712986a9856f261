//! Full visibility and pathfinding bake of a terrain-like map of 4 × 2 × 4 chunks (16-unit chunks,
//! 2-unit air cells, radius 1): time and culled fraction.
//!
//! `cargo bench -p pmfedit-bake --bench vis` (set `VIS_BENCH_OCC` to the occluder voxel log2).

use std::time::Instant;

use glam::IVec3;
use pmfedit_bake::path::{PathAttributeSets, bake_chunk_paths};
use pmfedit_bake::vis::{VisSettings, VisStats, bake_chunk_vis};
use pmfedit_core::map::coords::{ChunkCoord, CubeAddr, LatticeBox};
use pmfedit_core::map::ids::{MaterialId, PhysicsId, SoundId};
use pmfedit_core::map::octree::Cube;
use pmfedit_core::map::{Level, Library};

fn solid() -> Cube {
    Cube::solid(MaterialId(0), PhysicsId(0), SoundId(0))
}

fn lbox(min: [i32; 3], max: [i32; 3]) -> LatticeBox {
    LatticeBox::new(IVec3::from_array(min), IVec3::from_array(max))
}

/// Heightfield of one-unit columns, plus walls and closed huts.
fn terrain(cx: i32, cy: i32, cz: i32) -> Level {
    let mut level = Level::new("terrain", 4).unwrap();
    let e = level.frame().chunk_edge();
    let h = |x: i32, z: i32| {
        let (fx, fz) = (f64::from(x) / 40.0, f64::from(z) / 40.0);
        (60.0 + 24.0 * fx.sin() * fz.cos() + 12.0 * (fx * 2.3 + 1.0).cos()) as i32
    };
    for x in (0..cx * e).step_by(8) {
        for z in (0..cz * e).step_by(8) {
            let top = (h(x, z) / 4 * 4).clamp(4, cy * e - 8);
            level.fill_box(lbox([x, 0, z], [x + 8, top, z + 8]), solid()).unwrap();
        }
    }
    let mut s = 0x1234_5678u32;
    let mut rnd = |n: i32| {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        (s % n as u32) as i32
    };
    for i in 0..(cx * cz * 2) {
        let (x, z) = (rnd(cx * e - 64), rnd(cz * e - 64));
        let y = h(x, z).clamp(8, cy * e - 64);
        if i % 2 == 0 {
            let (w, d) = if rnd(2) == 0 { (48, 8) } else { (8, 48) };
            level.fill_box(lbox([x, y - 8, z], [x + w, y + 40, z + d]), solid()).unwrap();
        } else {
            // A hut with a door.
            level.fill_box(lbox([x, y - 8, z], [x + 48, y + 40, z + 48]), solid()).unwrap();
            level.clear_box(lbox([x + 8, y, z + 8], [x + 40, y + 32, z + 40])).unwrap();
            level.clear_box(lbox([x + 20, y, z], [x + 28, y + 16, z + 8])).unwrap();
        }
    }
    level
}

/// Aligned air cubes of edge `2^size_log2` of a chunk (a stand-in for the layout's air cells).
fn air_cells(level: &Level, chunk: ChunkCoord, size_log2: u8) -> Vec<CubeAddr> {
    let frame = level.frame();
    let base = frame.chunk_min_lattice(chunk);
    let n = frame.chunk_edge() >> size_log2;
    let mut out = Vec::new();
    for y in 0..n {
        for x in 0..n {
            for z in 0..n {
                let a = CubeAddr::new(base + (IVec3::new(x, y, z) << i32::from(size_log2)), size_log2).unwrap();
                let (c, leaf) = level.get(a.min).unwrap();
                if !c.is_solid() && leaf.contains_addr(&a) {
                    out.push(a);
                } else if !c.is_solid() {
                    // Air made of several leaves: keep it if all of them are air.
                    let all_air = level
                        .leaves()
                        .filter(|(ch, l, _)| {
                            *ch == chunk && l.translated(base).lattice_box().intersects(&a.lattice_box())
                        })
                        .all(|(_, _, c)| !c.is_solid());
                    if all_air {
                        out.push(a);
                    }
                }
            }
        }
    }
    out
}

fn main() {
    let lib = Library::starter();
    let t = Instant::now();
    let level = terrain(4, 2, 4);
    let chunks: Vec<ChunkCoord> =
        (0..2).flat_map(|y| (0..4).flat_map(move |x| (0..4).map(move |z| ChunkCoord::new(x, y, z)))).collect();
    let cells: Vec<Vec<CubeAddr>> = chunks.iter().map(|&c| air_cells(&level, c, 4)).collect();
    println!(
        "map built in {:.2?}: {} leaves, {} air cells",
        t.elapsed(),
        level.leaves().count(),
        cells.iter().map(Vec::len).sum::<usize>()
    );
    let occ = std::env::var("VIS_BENCH_OCC").ok().and_then(|v| v.parse().ok()).unwrap_or(3);
    let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u8>().ok());
    let d = VisSettings::default();
    let settings = VisSettings {
        radius_chunks: 1,
        occluder_cell_log2: occ,
        all_percent: env("VIS_BENCH_PCT").unwrap_or(d.all_percent),
        coarse_levels: env("VIS_BENCH_COARSE").unwrap_or(d.coarse_levels),
        slab_min_log2: env("VIS_BENCH_SLAB").unwrap_or(d.slab_min_log2),
        ..d
    };
    println!("settings: {settings:?}");
    let t = Instant::now();
    let mut stats = VisStats::default();
    let mut worst = (0.0f64, ChunkCoord::new(0, 0, 0));
    for (&c, cs) in chunks.iter().zip(&cells) {
        let tc = Instant::now();
        let b = bake_chunk_vis(&level, &lib, c, cs, &settings).unwrap();
        let dt = tc.elapsed().as_secs_f64();
        if dt > worst.0 {
            worst = (dt, c);
        }
        stats.add(&b.stats);
    }
    let dt = t.elapsed();
    println!(
        "vis: {} chunks in {:.2?} (slowest chunk {:.0} ms at {:?}); occluder voxel 2^{} lattice",
        chunks.len(),
        dt,
        worst.0 * 1e3,
        worst.1,
        stats.occluder_cell_log2
    );
    println!(
        "vis: {} cells, {} solid leaves in regions (Σ), {} candidates (Σ), {} of {} pairs claimed visible: {:.1}% culled; {} whole chunks",
        stats.cells,
        stats.solid_leaves,
        stats.candidates,
        stats.pairs_visible,
        stats.pairs_total,
        100.0 * stats.culled_fraction(),
        stats.whole_chunks
    );
    let t = Instant::now();
    let sets = PathAttributeSets::default();
    let mut walk = 0;
    for (&c, cs) in chunks.iter().zip(&cells) {
        walk +=
            bake_chunk_paths(&level, &lib, c, cs, &sets).unwrap().iter().filter(|p| !p.attributes.is_empty()).count();
    }
    println!("paths: {} chunks in {:.2?}, {walk} walkable cells", chunks.len(), t.elapsed());
}
