//! Project files on two generated 1 000-chunk maps (10 × 1 × 100 chunks of 16 units, a height-map
//! terrain of 1-unit columns with painted tops; "fine": heights in 1/8 units, about 22 000
//! leaves per chunk; "coarse": heights in whole units): full save, save after a one-cube edit
//! (goal ≤ 50 ms), recovery write after a one-cube edit, a full load, and the octree building
//! inside a load (one pass against leaf by leaf). Prints figures; no
//! targets are asserted. Times include every fsync, so they depend on the disk under `$TMPDIR`.
//!
//! `cargo bench -p pmfedit-core --bench project` (both terrains), `… -- fine` or `… -- coarse`
//! (one), `… -- open DIR` (only the load of the existing project in `DIR`, e.g. a
//! `terrain(32,4,32)` saved by `pmfc`). With `PMFEDIT_BENCH_KEEP=DIR` the generated projects
//! are saved in `DIR/coarse` and `DIR/fine` (which must not exist) and kept, for profiling.

use std::time::{Duration, Instant};

use glam::IVec3;
use pmfedit_core::jobs::{Jobs, Sequential};
use pmfedit_core::map::coords::{CubeAddr, Face, LatticeBox};
use pmfedit_core::map::ids::{MaterialId, PhysicsId, SoundId};
use pmfedit_core::map::octree::{Cube, Octree, OctreeError};
use pmfedit_core::map::{Level, Map};
use pmfedit_core::project::Project;

/// Runs jobs on one scoped thread per core, as the editor and `pmfc` do (their runner,
/// `pmfedit_bake::jobs::Threads`, is in a crate this one cannot use).
struct Threads(usize);

impl Threads {
    fn all() -> Threads {
        Threads(std::thread::available_parallelism().map_or(1, |n| n.get()))
    }
}

impl Jobs for Threads {
    fn run(&self, n: usize, job: &(dyn Fn(usize) + Sync)) {
        let next = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..self.0 {
                s.spawn(|| {
                    loop {
                        let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if k >= n {
                            break;
                        }
                        job(k);
                    }
                });
            }
        });
    }
}

/// Loads the project in `dir` three times with `jobs`; the loaded map and the times.
fn loads(dir: &std::path::Path, jobs: &dyn Jobs) -> (Map, Vec<Duration>) {
    let mut times = Vec::new();
    let mut map = None;
    for _ in 0..3 {
        // One map at a time (the peak resident size is then one load's).
        drop(map.take());
        let t = Instant::now();
        let (_, loaded) = Project::open_with(dir, jobs).unwrap();
        times.push(t.elapsed());
        map = Some(loaded);
    }
    (map.expect("loaded"), times)
}

const NX: i32 = 10;
const NZ: i32 = 100;
/// Chunk edge in lattice units (16 map units).
const EDGE: i32 = 128;

fn stone() -> Cube {
    Cube::solid(MaterialId(0), PhysicsId(0), SoundId(0))
}

/// Heights in lattice units of the 1-unit (8-lattice) column at column coordinates `(cx, cz)`.
fn height(cx: i32, cz: i32) -> i32 {
    let (x, z) = (f64::from(cx), f64::from(cz));
    let h = 40.0 + 14.0 * (x * 0.11).sin() + 10.0 * (z * 0.07).cos() + 6.0 * ((x + z) * 0.23).sin();
    h as i32
}

fn generate(coarse: bool) -> Map {
    let mut map = Map::new("bench");
    let mut level = Level::new("main", 4).unwrap();
    for cx in 0..NX * EDGE / 8 {
        for cz in 0..NZ * EDGE / 8 {
            let min = IVec3::new(cx * 8, 0, cz * 8);
            let h = if coarse { height(cx, cz) & !7 } else { height(cx, cz) };
            level.fill_box(LatticeBox::new(min, min + IVec3::new(8, h, 8)), stone()).unwrap();
        }
    }
    // Paint the top faces of a band (extended geometry on the surface).
    let band = LatticeBox::new(IVec3::new(0, 0, 0), IVec3::new(NX * EDGE, 80, NZ * EDGE / 4));
    level.paint_face_box(band, Face::PosY, MaterialId(0)).unwrap();
    map.levels = vec![level];
    map
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn summary(mut v: Vec<Duration>) -> String {
    v.sort();
    format!(
        "median {:.2} ms, min {:.2} ms, max {:.2} ms (n = {})",
        ms(v[v.len() / 2]),
        ms(v[0]),
        ms(v[v.len() - 1]),
        v.len()
    )
}

fn main() {
    // `cargo bench` adds `--bench`.
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    if let [open, dir] = &args[..]
        && open == "open"
    {
        return open_existing(std::path::Path::new(dir));
    }
    for coarse in [true, false] {
        let name = if coarse { "coarse" } else { "fine" };
        if args.is_empty() || args.iter().any(|a| a == name) {
            println!("--- {name} terrain");
            run(coarse);
        }
    }
}

/// Loads the project in `dir` a few times, sequentially and on every core.
fn open_existing(dir: &std::path::Path) {
    let (map, one) = loads(dir, &Sequential);
    let leaves: usize = map.levels.iter().flat_map(|l| l.chunks()).map(|(_, c)| c.octree().leaf_count()).sum();
    println!("{}: {leaves} leaves", dir.display());
    println!("full load, sequential: {}", summary(one));
    let threads = Threads::all();
    println!("full load, {} threads: {}", threads.0, summary(loads(dir, &threads).1));
}

fn run(coarse: bool) {
    let t = Instant::now();
    let mut map = generate(coarse);
    let level = &map.levels[0];
    let leaves: usize = level.chunks().map(|(_, c)| c.octree().leaf_count()).sum();
    println!("map: {} chunks, {} leaves, built in {:.0} ms", level.chunk_count(), leaves, ms(t.elapsed()));

    let temp = tempfile::tempdir().unwrap();
    let dir = match std::env::var_os("PMFEDIT_BENCH_KEEP") {
        Some(keep) => std::path::Path::new(&keep).join(if coarse { "coarse" } else { "fine" }),
        None => temp.path().to_owned(),
    };
    let dir = &dir;
    let mut project = Project::create(dir).unwrap();
    let r = project.save(&map).unwrap();
    let chunk_bytes: u64 =
        std::fs::read_dir(dir.join("chunks")).unwrap().map(|e| e.unwrap().metadata().unwrap().len()).sum();
    let manifest_bytes = std::fs::metadata(dir.join("map.ron")).unwrap().len();
    println!(
        "full save: {:.0} ms, {} chunk files ({} KiB), manifest {} KiB",
        ms(r.duration),
        r.chunk_files_written,
        chunk_bytes / 1024,
        manifest_bytes / 1024
    );

    let r = project.save(&map).unwrap();
    println!("save without changes: {:.2} ms ({} files written)", ms(r.duration), r.chunk_files_written);

    // One-cube edits in different chunks, each followed by a save.
    let mut saves = Vec::new();
    let mut recoveries = Vec::new();
    for i in 0..20 {
        let p = IVec3::new((i * 37) % (NX * EDGE), 96, (i * 611) % (NZ * EDGE)) & !IVec3::splat(3);
        map.levels[0].set_cube(CubeAddr::new(p, 2).unwrap(), stone()).unwrap();
        let r = project.write_recovery(&map).unwrap();
        assert_eq!(r.chunk_files_written, 1);
        recoveries.push(r.duration);
        let p = p + IVec3::new(0, 4, 0);
        map.levels[0].set_cube(CubeAddr::new(p, 2).unwrap(), stone()).unwrap();
        let r = project.save(&map).unwrap();
        assert_eq!((r.chunk_files_written, r.chunks_hashed), (1, 1));
        saves.push(r.duration);
    }
    println!("save after a one-cube edit: {}", summary(saves));
    println!("recovery write after a one-cube edit: {}", summary(recoveries));

    let (loaded, one) = loads(dir, &Sequential);
    assert_eq!(loaded.levels[0].content_hash(), map.levels[0].content_hash());
    println!("full load, sequential: {}", summary(one));
    let threads = Threads::all();
    let (loaded, all) = loads(dir, &threads);
    assert_eq!(loaded.levels[0].content_hash(), map.levels[0].content_hash());
    println!("full load, {} threads: {}", threads.0, summary(all));

    // What loading spends on building the octrees: in one pass from the pre-order (how chunk
    // files load now) against setting each leaf in turn (how they loaded before).
    let trees: Vec<_> = map.levels[0].chunks().map(|(_, c)| c.octree().clone()).collect();
    let t = Instant::now();
    for tree in &trees {
        let mut nodes = tree.pre_order();
        let built = Octree::from_pre_order(tree.size_log2(), |_| -> Result<_, OctreeError> {
            Ok(nodes.next().expect("a node").1)
        })
        .unwrap();
        assert_eq!(built.node_count(), tree.node_count());
    }
    let one_pass = t.elapsed();
    let t = Instant::now();
    for tree in &trees {
        let mut built = Octree::new(tree.size_log2());
        for (addr, cube) in tree.leaves() {
            built.set_cube(addr, cube).unwrap();
        }
        assert_eq!(built.node_count(), tree.node_count());
    }
    let per_leaf = t.elapsed();
    println!(
        "octree build of every chunk: one pass {:.0} ms, leaf by leaf {:.0} ms ({:.1}×)",
        ms(one_pass),
        ms(per_leaf),
        per_leaf.as_secs_f64() / one_pass.as_secs_f64().max(1e-9)
    );
}
