//! Map-model figures on the sample maps: build times of `sample::demo()` and
//! `sample::terrain(64, 4, 64, seed)`, RAM per solid cube of the terrain, and random single-cube
//! sets per second. Prints figures; no targets are asserted.
//!
//! `cargo bench -p pmfedit-core --bench map_ops` (add `-- quick` for a smaller terrain).

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use glam::IVec3;
use pmfedit_core::map::coords::{ChunkCoord, CubeAddr};
use pmfedit_core::map::level::Chunk;
use pmfedit_core::map::octree::{Cube, CubeKind, Octree};
use pmfedit_core::map::{Level, Map};
use pmfedit_core::sample::{self, noise::Rng};

fn main() {
    let quick = std::env::args().any(|a| a == "quick");
    let (tx, ty, tz) = if quick { (16, 4, 16) } else { (64, 4, 64) };

    println!("== build times ==");
    let demo_times: Vec<Duration> = (0..20)
        .map(|_| {
            let t = Instant::now();
            black_box(sample::demo());
            t.elapsed()
        })
        .collect();
    println!("demo(): median {:?}, min {:?} over {} builds", median(&demo_times), min(&demo_times), demo_times.len());
    let t = Instant::now();
    let small = sample::terrain(16, 4, 16, 1);
    println!("terrain(16, 4, 16, 1): {:?}", t.elapsed());
    let t = Instant::now();
    let big = sample::terrain(tx, ty, tz, 1);
    let big_time = t.elapsed();
    println!("terrain({tx}, {ty}, {tz}, 1): {big_time:?}");

    println!();
    println!("== RAM per solid cube ==");
    memory_report(&format!("terrain({tx}, {ty}, {tz}, 1)"), &big.levels[0]);
    memory_report("terrain(16, 4, 16, 1)", &small.levels[0]);
    memory_report("demo()", &sample::demo().levels[0]);
    drop(big);

    println!();
    println!("== random single-cube sets ==");
    let empty = Map::new("empty");
    let demo = sample::demo();
    random_sets("empty level", &empty, 200_000);
    random_sets("demo()", &demo, 200_000);
    random_sets("terrain(16, 4, 16, 1)", &small, 200_000);
}

fn median(v: &[Duration]) -> Duration {
    let mut v = v.to_vec();
    v.sort();
    v[v.len() / 2]
}

fn min(v: &[Duration]) -> Duration {
    v.iter().copied().min().unwrap_or_default()
}

/// Octree bytes (`Octree::memory_bytes`: the struct plus the allocated capacity of its node
/// blocks, free lists and extended-geometry side table) of every chunk, as built and after
/// `compact()`, plus an estimate of the level's per-chunk overhead: the `Arc` header (strong and
/// weak counts), the chunk's generation, and the `BTreeMap` entry (key + `Arc` pointer) times 1.5
/// for B-tree node slack. Divided by the solid leaf volume in minimum-size cells.
fn memory_report(what: &str, level: &Level) {
    let chunks = level.chunk_count();
    let mut octree = 0usize;
    let mut compacted = 0usize;
    let (mut nodes, mut leaves, mut extended) = (0usize, 0usize, 0usize);
    let mut heaviest = 0usize;
    for (_, ch) in level.chunks() {
        let o = ch.octree();
        octree += o.memory_bytes();
        heaviest = heaviest.max(o.memory_bytes());
        let mut c = o.clone();
        c.compact();
        compacted += c.memory_bytes();
        nodes += o.node_count();
        leaves += o.leaf_count();
        extended += o.leaves().filter(|(_, c)| matches!(c.kind, CubeKind::Extended(_))).count();
    }
    let arc_header = 2 * size_of::<usize>();
    let chunk_extra = size_of::<Chunk>() - size_of::<Octree>();
    let map_entry = (size_of::<ChunkCoord>() + size_of::<Arc<Chunk>>()) * 3 / 2;
    let per_chunk_overhead = arc_header + chunk_extra + map_entry;
    let overhead = chunks * per_chunk_overhead;
    let solid = sample::solid_cells(level);
    let total = octree + overhead;
    println!("{what}:");
    println!(
        "  {chunks} chunks, {nodes} nodes ({} B each), {leaves} leaves, {extended} extended-geometry leaves",
        Octree::NODE_BYTES
    );
    println!(
        "  octrees {} (compacted {}), level overhead {} ({per_chunk_overhead} B/chunk), total {}",
        mib(octree),
        mib(compacted),
        mib(overhead),
        mib(total)
    );
    println!(
        "  per chunk: mean {:.1} KiB, heaviest {:.1} KiB",
        total as f64 / chunks.max(1) as f64 / 1024.0,
        heaviest as f64 / 1024.0
    );
    println!(
        "  {solid} solid minimum-size cells: {:.6} B per solid cube ({:.6} compacted)",
        total as f64 / solid as f64,
        (compacted + overhead) as f64 / solid as f64
    );
}

fn mib(b: usize) -> String {
    format!("{:.2} MiB", b as f64 / (1024.0 * 1024.0))
}

/// `n` `set_cube`s at random aligned positions in the 4 × 2 × 4 chunks around the center chunk
/// (the demo's ground and building), edges 1/8 to 4 map units (`size_log2` 0..=5), a random
/// material of the map's library or air (1 in 4).
fn random_sets(what: &str, map: &Map, n: usize) {
    let mut level = map.levels[0].clone();
    let frame = level.frame();
    let c = level.center_chunk();
    let lo = frame.chunk_min_lattice(ChunkCoord::new(c.x - 2, c.y - 1, c.z - 2));
    let span = IVec3::new(4, 2, 4) * frame.chunk_edge();
    let materials: Vec<_> = map.library.materials().iter().map(|(id, m)| Cube::solid(id, m.physics, m.sound)).collect();
    let mut rng = Rng::new(42);
    let ops: Vec<(CubeAddr, Cube)> = (0..n)
        .map(|_| {
            let s = rng.range(0, 6) as u8;
            let p = IVec3::new(rng.range(0, span.x), rng.range(0, span.y), rng.range(0, span.z));
            let cube = if rng.range(0, 4) == 0 {
                Cube::EMPTY
            } else {
                materials[rng.range(0, materials.len() as i32) as usize]
            };
            (CubeAddr::containing(lo + p, s), cube)
        })
        .collect();
    let before: usize = level.chunks().map(|(_, ch)| ch.octree().memory_bytes()).sum();
    let t = Instant::now();
    let mut changed = 0usize;
    for &(addr, cube) in &ops {
        changed += level.set_cube(addr, cube).expect("inside the grid").len();
    }
    let took = t.elapsed();
    let after: usize = level.chunks().map(|(_, ch)| ch.octree().memory_bytes()).sum();
    println!(
        "{what}: {n} sets in {took:?}: {:.0} sets/s ({:.3} µs/set), {changed} chunk changes, octrees {} -> {}",
        n as f64 / took.as_secs_f64(),
        took.as_secs_f64() * 1e6 / n as f64,
        mib(before),
        mib(after)
    );
}
