//! Project files on two generated 1 000-chunk maps (10 × 1 × 100 chunks of 16 units, a height-map
//! terrain of 1-unit columns with painted tops; "fine": heights in 1/8 units, about 22 000
//! leaves per chunk; "coarse": heights in whole units): full save, save after a one-cube edit
//! (goal ≤ 50 ms), recovery write after a one-cube edit, a full load, and the octree building
//! inside a load (one pass against leaf by leaf). Prints figures; no
//! targets are asserted. Times include every fsync, so they depend on the disk under `$TMPDIR`.
//!
//! `cargo bench -p pmfedit-core --bench project`

use std::time::{Duration, Instant};

use glam::IVec3;
use pmfedit_core::map::coords::{CubeAddr, Face, LatticeBox};
use pmfedit_core::map::ids::{MaterialId, PhysicsId, SoundId};
use pmfedit_core::map::octree::{Cube, Octree, OctreeError};
use pmfedit_core::map::{Level, Map};
use pmfedit_core::project::Project;

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
    for coarse in [true, false] {
        println!("--- {} terrain", if coarse { "coarse" } else { "fine" });
        run(coarse);
    }
}

fn run(coarse: bool) {
    let t = Instant::now();
    let mut map = generate(coarse);
    let level = &map.levels[0];
    let leaves: usize = level.chunks().map(|(_, c)| c.octree().leaf_count()).sum();
    println!("map: {} chunks, {} leaves, built in {:.0} ms", level.chunk_count(), leaves, ms(t.elapsed()));

    let dir = tempfile::tempdir().unwrap();
    let mut project = Project::create(dir.path()).unwrap();
    let r = project.save(&map).unwrap();
    let chunk_bytes: u64 =
        std::fs::read_dir(dir.path().join("chunks")).unwrap().map(|e| e.unwrap().metadata().unwrap().len()).sum();
    let manifest_bytes = std::fs::metadata(dir.path().join("map.ron")).unwrap().len();
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

    let mut loads = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        let (_, loaded) = Project::open(dir.path()).unwrap();
        loads.push(t.elapsed());
        assert_eq!(loaded.levels[0].content_hash(), map.levels[0].content_hash());
    }
    println!("full load: {}", summary(loads));

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
