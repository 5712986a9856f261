//! Meshing speed on 32³-cell chunks (chunk edge 32 map units, 1-unit voxels).
//!
//! `cargo bench -p pmfedit-bake --bench mesh` prints, per chunk kind, µs for the layout; meshing's
//! phase 1 ([`visible_faces`], which faces are seen) with its quads per second (faces kept per
//! second of phase 1); phase 2 ([`mesh_visible_faces`], the PMF records: into fresh vectors, and
//! into a reused [`Mesh`](pmfedit_bake::mesh::Mesh)); the whole [`mesh_chunk`] and its quads per
//! second; [`mesh_chunk_reference`] (which asks the leaves for every face); and the whole geometry
//! bake (layout + mesh + PMF cube records). Each is the fastest of 300 runs (30 for the reference
//! and the bake), all in one run. With
//! `--features block-mesh-bench`, also `block-mesh`'s `visible_block_faces` on the same 1-unit
//! voxels (opaque where solid): its quads, µs and quads per second, the figure phase 1 is held to.
//! Figures are printed, never asserted.

use std::hint::black_box;
use std::time::Instant;

use glam::IVec3;
use pmfedit_bake::BakeSettings;
use pmfedit_bake::chunk::bake_geometry;
use pmfedit_bake::layout::ChunkLayout;
use pmfedit_bake::mesh::{
    Mesh, mesh_chunk, mesh_chunk_reference, mesh_visible_faces, mesh_visible_faces_into, visible_faces,
};
use pmfedit_core::map::coords::{ChunkCoord, CubeAddr, LatticeBox};
use pmfedit_core::map::library::Material;
use pmfedit_core::map::octree::{Cube, MaterialId, PhysicsId, SoundId};
use pmfedit_core::map::{Level, Map};

const C: ChunkCoord = Level::DEFAULT_CENTER;
const N: i32 = 32;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn new_map() -> (Map, [MaterialId; 3]) {
    let mut map = Map::new("bench");
    map.levels[0] = Level::new("main", 5).unwrap();
    let (p, s) = (PhysicsId(0), SoundId(0));
    let grass = map.library.add(Material::new("grass", p, s)).unwrap();
    let glass = map.library.add(Material { transparent: true, ..Material::new("glass", p, s) }).unwrap();
    (map, [MaterialId(0), grass, glass])
}

fn unit(map: &Map, chunk: ChunkCoord, p: IVec3) -> CubeAddr {
    CubeAddr::new(map.levels[0].frame().chunk_min_lattice(chunk) + p * 8, 3).unwrap()
}

/// Each 1-unit cell solid with probability `fill`, materials mixed (a tenth glass).
fn random(fill: f64, seed: u64) -> Map {
    let (mut map, mats) = new_map();
    let mut rng = Rng(seed);
    for x in 0..N {
        for y in 0..N {
            for z in 0..N {
                if (rng.next() % 1000) as f64 >= fill * 1000.0 {
                    continue;
                }
                let m = match rng.next() % 10 {
                    0 => mats[2],
                    1..=4 => mats[1],
                    _ => mats[0],
                };
                let a = unit(&map, C, IVec3::new(x, y, z));
                map.levels[0].set_cube(a, Cube::solid(m, PhysicsId(0), SoundId(0))).unwrap();
            }
        }
    }
    map
}

/// Rolling height field over the chunk and its 8 horizontal neighbours: stone below, grass top.
fn terrain() -> Map {
    let (mut map, mats) = new_map();
    let f = map.levels[0].frame();
    for cx in -1..=1 {
        for cz in -1..=1 {
            let chunk = ChunkCoord::new(C.x + cx, C.y, C.z + cz);
            let base = f.chunk_min_lattice(chunk);
            for x in 0..N {
                for z in 0..N {
                    let (wx, wz) = (f64::from(x + cx * N), f64::from(z + cz * N));
                    let h = 14.0 + 6.0 * (wx * 0.21).sin() + 5.0 * (wz * 0.17).cos() + 2.0 * ((wx + wz) * 0.5).sin();
                    let h = h.clamp(1.0, 31.0) as i32;
                    let col = |y0: i32, y1: i32| {
                        LatticeBox::new(base + IVec3::new(x, y0, z) * 8, base + IVec3::new(x + 1, y1, z + 1) * 8)
                    };
                    let lvl = &mut map.levels[0];
                    lvl.fill_box(col(0, h - 1), Cube::solid(mats[0], PhysicsId(0), SoundId(0))).unwrap();
                    lvl.fill_box(col(h - 1, h), Cube::solid(mats[1], PhysicsId(0), SoundId(0))).unwrap();
                }
            }
        }
    }
    map
}

/// The `pmfc bench` chunk (`mesh_32cubed`): a height field with holes, stone, in chunk C alone.
fn dense() -> Map {
    let (mut map, mats) = new_map();
    let solid = |x: i32, z: i32, y: i32| {
        let h = 8 + ((x * 7 + z * 13) % 11) + ((x / 4 + z / 3) % 5);
        y < h && !(x % 5 == 2 && z % 7 == 3 && y > 3)
    };
    for x in 0..N {
        for z in 0..N {
            for y in (0..N).filter(|&y| solid(x, z, y)) {
                let a = unit(&map, C, IVec3::new(x, y, z));
                map.levels[0].set_cube(a, Cube::solid(mats[0], PhysicsId(0), SoundId(0))).unwrap();
            }
        }
    }
    map
}

/// `block-mesh`'s fastest of `iters` runs over chunk C's 1-unit cells (solid = opaque, the
/// neighbours' cells air): (seconds, quads).
#[cfg(feature = "block-mesh-bench")]
fn block_mesh(map: &Map, iters: u32) -> Option<(f64, usize)> {
    let level = &map.levels[0];
    let min = level.frame().chunk_min_lattice(C);
    let chunk = pmfedit_bake::mesh::BlockMeshChunk::new(|x, y, z| {
        let p = min + IVec3::new(x as i32, y as i32, z as i32) * 8;
        level.get(p).is_ok_and(|(c, _)| c.is_solid())
    });
    let mut quads = 0;
    let t = time(iters, || {
        quads = chunk.mesh();
        quads
    });
    Some((t, quads))
}

#[cfg(not(feature = "block-mesh-bench"))]
fn block_mesh(_: &Map, _: u32) -> Option<(f64, usize)> {
    None
}

/// Fastest of `iters` runs, in seconds (the machine is shared: the minimum is the least noisy).
fn time<T>(iters: u32, mut f: impl FnMut() -> T) -> f64 {
    black_box(f());
    (0..iters)
        .map(|_| {
            let t = Instant::now();
            black_box(f());
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn bench(name: &str, map: &Map) {
    let s = BakeSettings::default();
    let level = &map.levels[0];
    let lib = &map.library;
    let octree = level.chunk(C).unwrap().octree();
    let layout = ChunkLayout::build(octree, &s);
    let faces = visible_faces(level, lib, C, &layout);
    let mesh = mesh_chunk(level, lib, C, &layout, &s);
    assert_eq!(mesh, mesh_chunk_reference(level, lib, C, &layout, &s), "{name}: mesh_chunk != reference");
    assert_eq!(mesh, mesh_visible_faces(level, C, &layout, &s, &faces), "{name}: phase 2 != mesh_chunk");
    // Fastest of `fast` runs for the kernels (block-mesh's too, timed right after phase 1), of
    // `iters` for the slow reference and bake.
    let (iters, fast) = (30, 300);
    let t_phase1 = time(fast, || visible_faces(level, lib, C, &layout));
    let block_mesh = block_mesh(map, fast);
    let t_layout = time(iters, || ChunkLayout::build(octree, &s));
    let t_phase2 = time(fast, || mesh_visible_faces(level, C, &layout, &s, &faces));
    let mut reused = Mesh::default();
    let t_phase2_reused = time(fast, || {
        mesh_visible_faces_into(level, C, &layout, &s, &faces, &mut reused);
        reused.vertices.len()
    });
    let t_mesh = time(fast, || mesh_chunk(level, lib, C, &layout, &s));
    let t_ref = time(iters, || mesh_chunk_reference(level, lib, C, &layout, &s));
    let t_bake = time(iters, || bake_geometry(map, 0, C, &s).unwrap());
    let quads = faces.face_count() as f64;
    println!(
        "{name:<22} leaves {:>6}  cubes {:>6}  solid {:>6}  quads {:>6}  layout {:>6.0} µs  bake {:>6.0} µs",
        octree.leaf_count(),
        layout.len(),
        layout.solid_cubes().len(),
        faces.face_count(),
        t_layout * 1e6,
        t_bake * 1e6,
    );
    println!(
        "{:<22} phase 1 {:>6.1} µs {:>6.1} M quads/s | phase 2 {:>6.0} µs (reused buffers {:>6.0} µs) | mesh_chunk \
         {:>6.0} µs {:>6.1} M quads/s | reference {:>6.0} µs",
        "",
        t_phase1 * 1e6,
        quads / t_phase1 / 1e6,
        t_phase2 * 1e6,
        t_phase2_reused * 1e6,
        t_mesh * 1e6,
        quads / t_mesh / 1e6,
        t_ref * 1e6,
    );
    if let Some((t, bm_quads)) = block_mesh {
        let bm = bm_quads as f64 / t / 1e6;
        println!(
            "{:<22} block-mesh on its 1-unit cells: quads {bm_quads:>6}  {:>6.1} µs {:>6.1} M quads/s | phase 1 / \
             block-mesh quads/s {:.2}, mesh_chunk / block-mesh {:.2}",
            "",
            t * 1e6,
            bm,
            quads / t_phase1 / 1e6 / bm,
            quads / t_mesh / 1e6 / bm,
        );
    }
}

fn main() {
    println!("32³ cells of 1 map unit per chunk, default settings (2-unit air cells)");
    bench("random 50 %", &random(0.5, 7));
    bench("random 10 %", &random(0.1, 9));
    bench("random 90 %", &random(0.9, 11));
    bench("terrain (3×3 chunks)", &terrain());
    bench("dense (pmfc bench)", &dense());
}
