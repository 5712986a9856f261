//! Undo and redo time of a 10 000-cell box fill (25 × 16 × 25 lattice cells) through
//! [`History`], on a detailed terrain and on a worst-case checkerboard chunk. Prints figures; the
//! goal is ≤ 1 ms for each undo and redo.
//!
//! `cargo bench -p pmfedit-core --bench edit`

use std::time::{Duration, Instant};

use glam::IVec3;
use pmfedit_core::edit::{CubeOp, Edit, History};
use pmfedit_core::map::coords::{CubeAddr, LatticeBox};
use pmfedit_core::map::ids::{MaterialId, PhysicsId, SoundId};
use pmfedit_core::map::octree::Cube;
use pmfedit_core::map::{Level, Map};

fn stone(m: u16) -> Cube {
    Cube::solid(MaterialId(m), PhysicsId(0), SoundId(0))
}

/// 2 × 1 × 2 chunks of 16 units (128 lattice cells): a heightmap of 2-cell columns, heights 32
/// to 95, three materials by height.
fn terrain() -> Map {
    let mut map = Map::new("terrain");
    map.library.add(pmfedit_core::map::library::Material::new("grass", PhysicsId(0), SoundId(0))).unwrap();
    map.library.add(pmfedit_core::map::library::Material::new("rock", PhysicsId(0), SoundId(0))).unwrap();
    map.levels[0] = Level::new("main", 4).unwrap();
    let level = &mut map.levels[0];
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut rand = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for x in (0..256).step_by(2) {
        for z in (0..256).step_by(2) {
            let smooth = ((x as f64 / 23.0).sin() + (z as f64 / 17.0).cos()) * 20.0 + 64.0;
            let h = (smooth as i32 + (rand() % 5) as i32 - 2).clamp(32, 95);
            let m = (h / 24) as u16 % 3;
            level.fill_box(LatticeBox::new(IVec3::new(x, 0, z), IVec3::new(x + 2, h, z + 2)), stone(m)).unwrap();
        }
    }
    map
}

/// One chunk of 128³ lattice cells filled with a 3D checkerboard of 2-cell cubes.
fn checkerboard() -> Map {
    let mut map = Map::new("checkerboard");
    map.levels[0] = Level::new("main", 4).unwrap();
    let level = &mut map.levels[0];
    for x in (0..128).step_by(2) {
        for y in (0..128).step_by(2) {
            for z in (0..128).step_by(2) {
                if ((x + y + z) / 2) % 2 == 0 {
                    level.set_cube(CubeAddr::new(IVec3::new(x, y, z), 1).unwrap(), stone(0)).unwrap();
                }
            }
        }
    }
    map
}

fn run(label: &str, mut map: Map, region: LatticeBox) {
    assert_eq!(region.volume(), 10_000);
    let chunks: usize = map.levels[0].chunks().map(|(_, c)| c.octree().memory_bytes()).sum();
    let mut h = History::new();
    let t = Instant::now();
    let changes = h.apply(&mut map, Edit::Cubes { level: 0, op: CubeOp::FillBox { region, cube: stone(0) } }).unwrap();
    let apply = t.elapsed();
    let (mut undo, mut redo) = (Vec::new(), Vec::new());
    for _ in 0..300 {
        let t = Instant::now();
        let u = h.undo(&mut map).unwrap();
        undo.push(t.elapsed());
        let t = Instant::now();
        let r = h.redo(&mut map).unwrap();
        redo.push(t.elapsed());
        assert_eq!(u.chunk_count(), changes.chunk_count());
        assert_eq!(r.chunk_count(), changes.chunk_count());
    }
    let (ufirst, rfirst) = (undo[0], redo[0]);
    let (u, r) = (percentiles(&mut undo), percentiles(&mut redo));
    println!(
        "{label}: {} chunk(s) touched; first apply (capture + fill) {apply:?}; backup {} B vs {chunks} B of chunks\n  \
         undo: first {ufirst:?}, then p50 {:?} p90 {:?} p99 {:?} max {:?}\n  \
         redo: first {rfirst:?}, then p50 {:?} p90 {:?} p99 {:?} max {:?}",
        changes.chunk_count(),
        h.backup_bytes(),
        u[0],
        u[1],
        u[2],
        u[3],
        r[0],
        r[1],
        r[2],
        r[3],
    );
}

/// p50, p90, p99 and max of every sample but the first.
fn percentiles(v: &mut [Duration]) -> [Duration; 4] {
    let v = &mut v[1..];
    v.sort();
    let at = |q: f64| v[((v.len() - 1) as f64 * q) as usize];
    [at(0.5), at(0.9), at(0.99), v[v.len() - 1]]
}

/// A control: the same percentiles for a fixed ~30 µs busy loop. On a shared machine its max
/// shows the scheduler's preemption (multiples of the kernel tick), not the code under test.
fn control() {
    let mut v = Vec::new();
    let mut x = 1u64;
    for _ in 0..600 {
        let t = Instant::now();
        for i in 0..30_000u64 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
        }
        v.push(t.elapsed());
    }
    let p = percentiles(&mut v);
    println!("control busy loop: p50 {:?} p90 {:?} p99 {:?} max {:?}", p[0], p[1], p[2], p[3]);
}

fn main() {
    control();
    // 25 × 16 × 25, inside one chunk, not aligned.
    let inside = LatticeBox::new(IVec3::new(37, 60, 45), IVec3::new(62, 76, 70));
    // The same size across the corner of four chunks.
    let across = LatticeBox::new(IVec3::new(115, 60, 115), IVec3::new(140, 76, 140));
    let t = Instant::now();
    let terrain = terrain();
    println!("terrain built in {:?}", t.elapsed());
    run("terrain, inside a chunk", terrain.clone(), inside);
    run("terrain, across 4 chunks", terrain, across);
    run("checkerboard chunk (worst case)", checkerboard(), inside);
}
