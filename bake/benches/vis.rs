//! Whole-level visibility of a sample map: summary time per chunk, full visibility on N threads
//! (the grid's far sets, then every chunk's lists), list sizes and culling beside the oracle's:
//! as baked, and as the file has them after the rule for cells that cull little and the level's
//! budget (`vis::cell_lists`: a cell without data culls nothing), which is what an engine culls.
//!
//! `cargo bench -p pmfedit-bake --bench vis` (terrain 32 × 4 × 32 on 2 threads). Environment:
//! `VIS_BENCH_MAP` = `terrain` (default) or `indoor`, `VIS_BENCH_SIZE` = `X,Y,Z` (terrain),
//! `VIS_BENCH_THREADS`, `VIS_BENCH_RAYS` (oracle rays per sampled cell), `VIS_BENCH_PORTALS` = portal
//! steps (`VisSettings::portal_steps`; `0`: the far sets without portal limits),
//! `VIS_BENCH_PORTAL_MAX_CHUNKS` (`VisSettings::portal_max_chunks`), `VIS_BENCH_MIN_CULLED`
//! (`VisSettings::min_culled`).

use std::time::Instant;

use pmfedit_bake::compile::{CompileSettings, Grid, level_chunks};
use pmfedit_bake::layout::ChunkLayout;
use pmfedit_bake::vis::{
    CellLists, ChunkVisBake, OpaqueMaterials, SummaryGrid, VisCache, VisSettings, VisStats, bake_chunk_vis_in,
    cell_lists, oracle,
};
use pmfedit_core::map::Map;
use pmfedit_core::map::coords::{ChunkCoord, CubeAddr};
use pmfedit_core::map::octree::Octree;
use pmfedit_core::sample;
use pmfedit_core::sample::noise::Rng;

fn env<T: std::str::FromStr>(k: &str) -> Option<T> {
    std::env::var(k).ok().and_then(|v| v.parse().ok())
}

fn main() {
    let t = Instant::now();
    let map: Map = match std::env::var("VIS_BENCH_MAP").as_deref() {
        Ok("indoor") => sample::indoor(1),
        _ => {
            let size = std::env::var("VIS_BENCH_SIZE").unwrap_or_else(|_| "32,4,32".into());
            let v: Vec<u32> = size.split(',').filter_map(|s| s.trim().parse().ok()).collect();
            sample::terrain(v[0], v[1], v[2], 1)
        }
    };
    let threads: usize = env("VIS_BENCH_THREADS").unwrap_or(2);
    let portal_steps = env("VIS_BENCH_PORTALS").unwrap_or(pmfedit_bake::vis::PORTAL_STEPS);
    let portal_max_chunks = env("VIS_BENCH_PORTAL_MAX_CHUNKS").unwrap_or(pmfedit_bake::vis::PORTAL_MAX_CHUNKS);
    let min_culled = env("VIS_BENCH_MIN_CULLED").unwrap_or(pmfedit_bake::vis::MIN_CULLED);
    let settings = VisSettings { portal_steps, portal_max_chunks, min_culled, ..VisSettings::default() };
    let bake = CompileSettings::default().bake;
    let level = &map.levels[0];
    let chunks = level_chunks(level);
    println!("{}: {} chunks, built in {:.2?}; {settings:?}", map.meta.name, chunks.len(), t.elapsed());

    // Summaries alone: the best of three passes over every stored chunk.
    let opaque = OpaqueMaterials::of(&map.library);
    let stored = level.chunks().count();
    let summary_us = pmfedit_bake::vis::summary::summary_us_per_chunk(level, &opaque, settings.voxels_log2, 3);
    println!("summary: {summary_us:.1} µs per stored chunk ({stored} stored; best of 3 passes)");

    // Full visibility: summaries through the cache, then every chunk, on `threads` threads.
    let t = Instant::now();
    let cache = VisCache::new(settings);
    let grid = Grid::of(level);
    let lv = cache.level(level, &map.library, 0, grid.min, grid.max);
    let t_summaries = t.elapsed();
    let next = std::sync::atomic::AtomicUsize::new(0);
    // A chunk whose cells list more than its share of the level's budget names its own chunk
    // whole in some cells, or leaves some cells without data (PMF-NOTES V1): count those chunks.
    let share = settings.max_listed.min(pmfedit_bake::vis::LEVEL_LISTED / chunks.len().max(1) as u64);
    let (over, dropped) = (std::sync::atomic::AtomicUsize::new(0), std::sync::atomic::AtomicUsize::new(0));
    // Geometry leaves per chunk: what a chunk listed whole counts.
    let geometry: std::collections::BTreeMap<ChunkCoord, u64> =
        level.chunks().map(|(c, ch)| (*c, ch.octree().leaves().filter(|(_, x)| x.is_solid()).count() as u64)).collect();
    let total: u64 = geometry.values().sum();
    let geometry_chunks = geometry.values().filter(|&&n| n > 0).count() as u64;
    let pairs = Pairs { geometry: &geometry, total, geometry_chunks, share, grid: &lv.grid };
    let results: Vec<(VisStats, u64, u64, u64, FilePairs)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut stats = VisStats::default();
                    let (mut far_entries, mut far_lists, mut own_entries) = (0u64, 0u64, 0u64);
                    let mut file = FilePairs::default();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(&c) = chunks.get(i) else { break };
                        let cells = air_cells(&map, c, &bake);
                        let b = bake_chunk_vis_in(&lv, level, c, &cells).unwrap();
                        stats.add(&b.stats);
                        let listed: u64 = b
                            .cell_list
                            .iter()
                            .map(|&l| {
                                let l = &b.lists[l as usize];
                                (b.far[l.far as usize].len() + b.own[l.own as usize].len()) as u64
                            })
                            .sum();
                        if listed > share {
                            over.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        }
                        let f = pairs.cells(&b, c, 0..b.cell_list.len());
                        if f.with_data < f.cells {
                            dropped.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        }
                        file.add(&f);
                        for &l in &b.cell_list {
                            let l = &b.lists[l as usize];
                            far_entries += b.far[l.far as usize].len() as u64;
                            own_entries += b.own[l.own as usize].len() as u64;
                        }
                        far_lists += b.far.iter().map(|f| f.len() as u64).sum::<u64>();
                    }
                    (stats, far_entries, far_lists, own_entries, file)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let dt = t.elapsed();
    let mut stats = VisStats::default();
    let (mut far_entries, mut far_lists, mut own_entries) = (0, 0, 0);
    let mut file = FilePairs::default();
    for (s, a, b, c, f) in &results {
        stats.add(s);
        far_entries += a;
        far_lists += b;
        own_entries += c;
        file.add(f);
    }
    println!(
        "full visibility: {dt:.2?} on {threads} threads (summaries and far sets {t_summaries:.2?}); {} cells, {} far sets looked up",
        stats.cells, stats.searches
    );
    println!(
        "level budget: {} entries per chunk; {} of {} chunks list more (their longest own lists name the chunk whole), \
         {} of them leave some cells without visibility data",
        share,
        over.load(std::sync::atomic::Ordering::Relaxed),
        chunks.len(),
        dropped.load(std::sync::atomic::Ordering::Relaxed)
    );
    println!(
        "from the file (every air cell, after the budget; a cell without data culls nothing): {:.1}% of (cell, leaf) \
         pairs, {:.1}% of (cell, chunk with geometry) pairs culled; {} of {} cells carry data, {} name their own chunk whole; \
         before the budget {:.1}% / {:.1}%",
        file.culled(file.file_leaves, total),
        file.culled(file.file_chunks, geometry_chunks),
        file.with_data,
        file.cells,
        file.own_whole,
        file.culled(file.leaves, total),
        file.culled(file.chunks, geometry_chunks),
    );
    println!(
        "lists: {:.1} far chunks and {:.1} own cubes per cell on average; distinct far lists hold {far_lists} entries; \
         per-cell records ≈ {:.1} MB before compression",
        far_entries as f64 / stats.cells.max(1) as f64,
        own_entries as f64 / stats.cells.max(1) as f64,
        (far_entries * 8 + own_entries * 4 + stats.cells * 8) as f64 / 1e6
    );

    // Single-cube edits near the middle (solid, then empty again, as `pmfc bench` makes them):
    // the visibility work the rebuild engine does outside the edited chunks' own bakes — the new
    // summary grid (the edited chunk's summary and, when it changed, the far sets) and the lists
    // of every chunk whose far sets changed, baked again here (the engine only rewrites their far
    // part, so this is an upper bound).
    let edits: usize = env("VIS_BENCH_EDITS").unwrap_or(20);
    let mut edited = level.snapshot();
    let (lo, hi) = level.occupied_bounds().expect("a level with content");
    let mid = (lo.as_ivec3() + hi.as_ivec3()) / 2;
    let frame = level.frame();
    let mut prev = lv.grid.clone();
    let (mut edit_ms, mut changed_chunks) = (Vec::new(), Vec::new());
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    for i in 0..edits {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let c = mid + glam::IVec3::new((seed % 3) as i32 - 1, 0, ((seed >> 8) % 3) as i32 - 1);
        let local = glam::IVec3::new(
            ((seed >> 16) % 16) as i32 * 8,
            ((seed >> 24) % 16) as i32 * 8,
            ((seed >> 32) % 16) as i32 * 8,
        );
        let addr = CubeAddr::containing(frame.chunk_min_lattice(ChunkCoord::from_ivec3(c)) + local, 3);
        let cube = if i % 2 == 0 {
            pmfedit_core::map::octree::Cube::solid(Default::default(), Default::default(), Default::default())
        } else {
            pmfedit_core::map::octree::Cube::EMPTY
        };
        if edited.set_cube(addr, cube).is_err() {
            continue;
        }
        let t = Instant::now();
        let now = cache.level(&edited, &map.library, 0, grid.min, grid.max);
        let mut n = 0;
        if !std::sync::Arc::ptr_eq(&now.grid, &prev) {
            let own = ChunkCoord::from_ivec3(c);
            for &c in &chunks {
                if c != own && !now.grid.same_far_as(&prev, c) {
                    n += 1;
                    let cells = air_cells(&map, c, &bake);
                    std::hint::black_box(bake_chunk_vis_in(&now, &edited, c, &cells).unwrap());
                }
            }
        }
        edit_ms.push(t.elapsed().as_secs_f64() * 1e3);
        changed_chunks.push(n as f64);
        prev = now.grid;
    }
    let pct = |v: &mut Vec<f64>, p: f64| {
        v.sort_by(f64::total_cmp);
        v.get(((v.len().max(1) - 1) as f64 * p).round() as usize).copied().unwrap_or(0.0)
    };
    println!(
        "{} single-cube edits: visibility work beyond the edited chunks median {:.2} ms, p95 {:.2} ms; chunks whose far sets changed median {}, p95 {}",
        edit_ms.len(),
        pct(&mut edit_ms.clone(), 0.5),
        pct(&mut edit_ms, 0.95),
        pct(&mut changed_chunks.clone(), 0.5),
        pct(&mut changed_chunks, 0.95)
    );

    // Culling against the oracle, on a sample of cells: the share of (cell, geometry leaf) pairs
    // our lists cull, and the share the oracle's rays never reach (random rays only find what is
    // visible, so the oracle's share is an upper bound and the gap over-states our over-claim; a
    // ray reaches one leaf, so with fewer rays than leaves in sight it says little). The same per
    // (cell, chunk with geometry) pair, where the rays are more telling: a chunk is listed by us
    // when its cubes are (own chunk) or it is in the far list, reached by the oracle when a ray
    // ends on one of its leaves.
    let rays: usize = env("VIS_BENCH_RAYS").unwrap_or(2000);
    let mut seen_chunks = 0u64;
    let mut rng = Rng::new(1);
    let (mut cells, mut seen) = (0u64, 0u64);
    let mut sampled = FilePairs::default();
    let t = Instant::now();
    for &c in chunks.iter().step_by((chunks.len() / 64).max(1)) {
        let cs = air_cells(&map, c, &bake);
        if cs.is_empty() {
            continue;
        }
        let b = bake_chunk_vis_in(&lv, level, c, &cs).unwrap();
        let step = (cs.len() / 2).max(1);
        sampled.add(&pairs.cells(&b, c, (0..cs.len()).step_by(step)));
        for i in (0..cs.len()).step_by(step) {
            let hits = oracle::reached(level, &opaque, &cs[i].lattice_box(), rays, 1e6, &mut rng);
            seen += hits.len() as u64;
            seen_chunks += hits.iter().map(|h| h.0).collect::<std::collections::BTreeSet<_>>().len() as u64;
            cells += 1;
        }
    }
    let share = |n: u64, of: u64| 100.0 * (1.0 - n as f64 / (cells * of).max(1) as f64);
    println!(
        "culling on {cells} sampled air cells × {total} geometry leaves: ours {:.1}% culled (from the file {:.1}%), \
         oracle ({rays} rays per cell) {:.1}% culled ({:.2?})",
        share(sampled.leaves, total),
        share(sampled.file_leaves, total),
        share(seen, total),
        t.elapsed()
    );
    println!(
        "by chunk ({geometry_chunks} with geometry): ours {:.1}% of (cell, chunk) pairs culled (from the file {:.1}%), oracle {:.1}%",
        share(sampled.chunks, geometry_chunks),
        share(sampled.file_chunks, geometry_chunks),
        share(seen_chunks, geometry_chunks)
    );
}

/// What a level's lists are counted against: geometry leaves per chunk and the chunk budget.
struct Pairs<'a> {
    geometry: &'a std::collections::BTreeMap<ChunkCoord, u64>,
    total: u64,
    geometry_chunks: u64,
    share: u64,
    grid: &'a SummaryGrid,
}

impl Pairs<'_> {
    /// The pairs cells `cells` of chunk `c` list, as baked and as the file has them (each
    /// cell's choice made as compile makes it, `AirVis::write`).
    fn cells(&self, b: &ChunkVisBake, c: ChunkCoord, cells: impl Iterator<Item = usize>) -> FilePairs {
        let list = |i: u32| &b.lists[i as usize];
        let own: Vec<u64> = b.cell_list.iter().map(|&l| b.own[list(l).own as usize].len() as u64).collect();
        let far: Vec<u64> = b.cell_list.iter().map(|&l| b.far[list(l).far as usize].len() as u64).collect();
        let comps: Vec<Option<u16>> = b.cell_list.iter().map(|&l| list(l).comp).collect();
        let (modes, _) = cell_lists(self.grid, c, &comps, &own, &far, self.share);
        // Per far list, the geometry leaves of its chunks (lists are shared by many cells).
        let far_leaves: Vec<u64> =
            b.far.iter().map(|f| f.iter().map(|f| self.geometry.get(f).copied().unwrap_or(0)).sum()).collect();
        let own_geometry = self.geometry.get(&c).copied().unwrap_or(0);
        let mut out = FilePairs::default();
        for i in cells {
            let l = list(b.cell_list[i]);
            let (own, far) = (own[i], far[i]);
            let far_leaves = far_leaves[l.far as usize];
            let (leaves, chunks) = (own + far_leaves, far + u64::from(own > 0));
            let (file_leaves, file_chunks) = match modes[i] {
                CellLists::Exact => (leaves, chunks),
                CellLists::OwnWhole => (own_geometry + far_leaves, far + u64::from(own_geometry > 0)),
                CellLists::Nothing => (self.total, self.geometry_chunks),
            };
            out.add(&FilePairs {
                cells: 1,
                with_data: u64::from(modes[i] != CellLists::Nothing),
                own_whole: u64::from(modes[i] == CellLists::OwnWhole),
                leaves,
                chunks,
                file_leaves,
                file_chunks,
            });
        }
        out
    }
}

/// Sums of (cell, geometry leaf) and (cell, chunk with geometry) pairs listed: as baked, and as
/// written to the file (after the budget).
#[derive(Default)]
struct FilePairs {
    cells: u64,
    with_data: u64,
    own_whole: u64,
    leaves: u64,
    chunks: u64,
    file_leaves: u64,
    file_chunks: u64,
}

impl FilePairs {
    fn add(&mut self, o: &FilePairs) {
        self.cells += o.cells;
        self.with_data += o.with_data;
        self.own_whole += o.own_whole;
        self.leaves += o.leaves;
        self.chunks += o.chunks;
        self.file_leaves += o.file_leaves;
        self.file_chunks += o.file_chunks;
    }

    /// The share of `cells × of` pairs not among `listed`, in percent.
    fn culled(&self, listed: u64, of: u64) -> f64 {
        100.0 * (1.0 - listed as f64 / (self.cells * of).max(1) as f64)
    }
}

/// The air cells of a chunk's layout, as level lattice addresses.
fn air_cells(map: &Map, c: ChunkCoord, bake: &pmfedit_bake::BakeSettings) -> Vec<CubeAddr> {
    let level = &map.levels[0];
    let empty = Octree::new(level.frame().chunk_lattice_log2());
    let layout = ChunkLayout::build(level.chunk(c).map_or(&empty, |ch| ch.octree()), bake);
    layout.air_cell_addrs(level.frame().chunk_min_lattice(c))
}
