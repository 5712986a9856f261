//! Visibility and pathfinding bakes: a brute-force ray oracle, culling of closed rooms, terrain
//! figures, and the pathfinding rules.
//!
//! The oracle density can be raised with `VIS_ORACLE_RAYS` (rays per culled cell/cube pair).

use glam::{DVec3, IVec3};
use pmfedit_bake::path::{PathAttribute, PathAttributeSets, WALK, bake_chunk_paths, is_walkable, path_deps};
use pmfedit_bake::vis::{VisSettings, VisibleCubes, bake_chunk_vis, occludes, vis_deps};
use pmfedit_core::map::coords::{ChunkCoord, CubeAddr, Face, LatticeBox};
use pmfedit_core::map::ids::{MaterialId, PathAttrs, PhysicsId, SoundId};
use pmfedit_core::map::library::{Material, PhysicsMaterial};
use pmfedit_core::map::octree::Cube;
use pmfedit_core::map::{Level, Library};

mod common;
use common::Rng;

/// Test library: material 0 "default" (opaque), 1 "glass" (transparent), 2 "water" (liquid,
/// physics "water" not solid), 3 "stone2" (opaque).
struct Ids {
    glass: MaterialId,
    water: MaterialId,
    water_phys: PhysicsId,
    stone2: MaterialId,
}

fn library() -> (Library, Ids) {
    let mut lib = Library::starter();
    let water_phys = lib.add(PhysicsMaterial { not_solid: true, ..PhysicsMaterial::new("water") }).unwrap();
    let glass = lib.add(Material { transparent: true, ..Material::new("glass", PhysicsId(0), SoundId(0)) }).unwrap();
    let water = lib.add(Material { liquid: true, ..Material::new("water", water_phys, SoundId(0)) }).unwrap();
    let stone2 = lib.add(Material::new("stone2", PhysicsId(0), SoundId(0))).unwrap();
    (lib, Ids { glass, water, water_phys, stone2 })
}

fn solid(m: MaterialId) -> Cube {
    Cube::solid(m, PhysicsId(0), SoundId(0))
}

fn lbox(min: [i32; 3], max: [i32; 3]) -> LatticeBox {
    LatticeBox::new(IVec3::from_array(min), IVec3::from_array(max))
}

/// The aligned cubes of edge `2^size_log2` in `chunk` that hold only air.
fn air_cells(level: &Level, chunk: ChunkCoord, size_log2: u8) -> Vec<CubeAddr> {
    let frame = level.frame();
    let base = frame.chunk_min_lattice(chunk);
    let n = frame.chunk_edge() >> size_log2;
    let solids: Vec<LatticeBox> = level
        .chunk(chunk)
        .map(|ch| {
            ch.octree().leaves().filter(|(_, c)| c.is_solid()).map(|(a, _)| a.translated(base).lattice_box()).collect()
        })
        .unwrap_or_default();
    let mut out = Vec::new();
    for y in 0..n {
        for x in 0..n {
            for z in 0..n {
                let a = CubeAddr::new(base + (IVec3::new(x, y, z) << i32::from(size_log2)), size_log2).unwrap();
                if !solids.iter().any(|s| s.intersects(&a.lattice_box())) {
                    out.push(a);
                }
            }
        }
    }
    out
}

/// Every solid leaf in the chunks within `radius` of `chunk`: (chunk, chunk-local addr).
fn region_solids(level: &Level, chunk: ChunkCoord, radius: i32) -> Vec<(ChunkCoord, CubeAddr)> {
    level
        .leaves()
        .filter(|(c, _, cube)| cube.is_solid() && (c.as_ivec3() - chunk.as_ivec3()).abs().max_element() <= radius)
        .map(|(c, a, _)| (c, a))
        .collect()
}

/// Whether the bake lists leaf `addr` of `chunk` for the cell.
fn listed(v: &pmfedit_bake::vis::CellVis, own: ChunkCoord, chunk: ChunkCoord, addr: CubeAddr) -> bool {
    if chunk == own {
        return v.same_chunk.contains(&addr);
    }
    v.other_chunks.iter().any(|c| {
        c.chunk == chunk
            && match &c.cubes {
                VisibleCubes::All => true,
                VisibleCubes::Listed(l) => l.contains(&addr),
            }
    })
}

/// Whether the segment p → q reaches `target` (level lattice) without entering an occluder.
fn ray_reaches(level: &Level, lib: &Library, p: DVec3, q: DVec3, target: CubeAddr) -> bool {
    let d = q - p;
    let dist = d.length();
    let dir = d / dist;
    let mut travelled = 0.0;
    loop {
        let origin = p + dir * travelled;
        let Some(h) = level.ray_cast(origin, dir, dist - travelled) else {
            return true;
        };
        if h.level_addr == target {
            return true;
        }
        if occludes(&h.cube, lib) {
            return travelled + h.distance >= dist - 1e-7;
        }
        // A non-occluder: continue from where the ray leaves it.
        let (bmin, bmax) = (h.level_addr.min.as_dvec3(), h.level_addr.max().as_dvec3());
        let mut t_exit = f64::INFINITY;
        for a in 0..3 {
            if dir[a] > 0.0 {
                t_exit = t_exit.min((bmax[a] - origin[a]) / dir[a]);
            } else if dir[a] < 0.0 {
                t_exit = t_exit.min((bmin[a] - origin[a]) / dir[a]);
            }
        }
        travelled += t_exit.max(0.0) + 1e-9;
        if travelled >= dist {
            return true;
        }
    }
}

/// Brute force: jittered points of the cell to jittered points of the target's faces.
fn oracle_sees(level: &Level, lib: &Library, cell: &LatticeBox, target: CubeAddr, rays: usize, rng: &mut Rng) -> bool {
    let (cmin, csize) = (cell.min.as_dvec3(), (cell.max - cell.min).as_dvec3());
    let (tmin, tsize) = (target.min.as_dvec3(), f64::from(target.edge()));
    for i in 0..rays {
        let j = |r: &mut Rng| 0.01 + 0.98 * r.unit();
        let p = cmin + csize * DVec3::new(j(rng), j(rng), j(rng));
        let f = Face::ALL[i % 6];
        let mut q = tmin + DVec3::new(j(rng), j(rng), j(rng)) * tsize;
        q[f.axis()] = tmin[f.axis()] + if f.is_positive() { tsize } else { 0.0 };
        if ray_reaches(level, lib, p, q, target) {
            return true;
        }
    }
    false
}

fn oracle_rays(default: usize) -> usize {
    std::env::var("VIS_ORACLE_RAYS").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// A random map over chunks x, z in 0..2, y = 0 of edge 4 units (32 lattice).
fn random_map(seed: u64, ids: &Ids) -> Level {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut level = Level::new("oracle", 2).unwrap();
    // A floor, then boxes.
    level.fill_box(lbox([0, 0, 0], [64, 4, 64]), solid(MaterialId(0))).unwrap();
    for _ in 0..rng.range(6, 12) {
        let min = IVec3::new(rng.range(0, 60), rng.range(0, 28), rng.range(0, 60));
        let size = IVec3::new(rng.range(2, 24), rng.range(2, 24), rng.range(2, 24));
        let max = (min + size).min(IVec3::new(64, 32, 64));
        let m = match rng.below(10) {
            0 => ids.glass,
            1 => ids.water,
            2 | 3 => ids.stone2,
            _ => MaterialId(0),
        };
        let cube = if rng.below(6) == 0 { Cube::EMPTY } else { solid(m) };
        level.fill_box(LatticeBox::new(min, max), cube).unwrap();
        if rng.below(3) == 0 {
            // A pushed corner somewhere.
            let p = IVec3::new(rng.range(0, 64), rng.range(0, 32), rng.range(0, 64));
            let addr = level.get(p).unwrap().1;
            if level.get(p).unwrap().0.is_solid() && addr.size_log2 <= 5 {
                level.push_corner(addr, rng.below(8) as usize, IVec3::new(-4, -6, 3)).unwrap();
            }
        }
    }
    level
}

#[test]
fn vis_is_a_superset_of_a_ray_oracle_on_random_maps() {
    let (lib, ids) = library();
    let rays = oracle_rays(48);
    let mut total = (0u64, 0u64);
    for seed in 1..=5u64 {
        let level = random_map(seed, &ids);
        let chunk = ChunkCoord::new(0, 0, 0);
        // Fine voxels with slab tests on every leaf; default voxels with the coarse "all" estimate.
        for (size, occ, slab, pct) in [(3u8, 1u8, 0u8, 100u8), (4, 3, 4, 60)] {
            let settings = VisSettings {
                radius_chunks: 1,
                occluder_cell_log2: occ,
                slab_min_log2: slab,
                all_percent: pct,
                ..VisSettings::default()
            };
            let mut cells = air_cells(&level, chunk, size);
            let mut rng = Rng(seed * 77 + u64::from(size));
            // A deterministic subset keeps the debug-build test quick.
            while cells.len() > 6 {
                cells.remove(rng.below(cells.len() as u64) as usize);
            }
            let bake = bake_chunk_vis(&level, &lib, chunk, &cells, &settings).unwrap();
            let solids = region_solids(&level, chunk, 1);
            let frame = level.frame();
            for v in &bake.cells {
                let cb = v.cell.lattice_box();
                for &(c, a) in &solids {
                    if listed(v, chunk, c, a) {
                        continue;
                    }
                    let target = a.translated(frame.chunk_min_lattice(c));
                    assert!(
                        !oracle_sees(&level, &lib, &cb, target, rays, &mut rng),
                        "seed {seed}: cell {:?} sees {:?} in {:?} but the bake culled it",
                        v.cell,
                        a,
                        c
                    );
                }
            }
            total.0 += bake.stats.pairs_visible;
            total.1 += bake.stats.pairs_total;
        }
    }
    println!(
        "random maps: {} of {} cell/cube pairs listed ({:.1}% culled)",
        total.0,
        total.1,
        100.0 * (1.0 - total.0 as f64 / total.1 as f64)
    );
    assert!(total.0 < total.1, "the random maps cull something");
}

/// Two rooms in one block: room 1 in chunk (0, 0, 0), room 2 in chunk (1, 0, 0), a 2-unit
/// shared wall at x in 48..64. With `holes`, each room has a hole in its ceiling to the sky.
fn two_rooms(holes: bool) -> (Level, Library) {
    let (lib, ids) = library();
    let mut level = Level::new("rooms", 3).unwrap();
    level.fill_box(lbox([0, 0, 0], [112, 40, 48]), solid(MaterialId(0))).unwrap();
    level.fill_box(lbox([64, 0, 0], [112, 40, 48]), solid(ids.stone2)).unwrap();
    level.clear_box(lbox([8, 8, 8], [48, 32, 40])).unwrap();
    level.clear_box(lbox([64, 8, 8], [104, 32, 40])).unwrap();
    if holes {
        level.clear_box(lbox([24, 32, 16], [32, 40, 24])).unwrap();
        level.clear_box(lbox([80, 32, 16], [88, 40, 24])).unwrap();
    }
    (level, lib)
}

#[test]
fn sealed_room_next_door_is_culled() {
    let (level, lib) = two_rooms(false);
    let chunk = ChunkCoord::new(0, 0, 0);
    let cells: Vec<CubeAddr> = air_cells(&level, chunk, 3)
        .into_iter()
        .filter(|c| lbox([8, 8, 8], [48, 32, 40]).contains_box(&c.lattice_box()))
        .collect();
    assert!(!cells.is_empty());
    let bake = bake_chunk_vis(&level, &lib, chunk, &cells, &VisSettings::default()).unwrap();
    for v in &bake.cells {
        assert!(v.other_chunks.is_empty(), "cell {:?} sees {:?}", v.cell, v.other_chunks);
        assert!(!v.same_chunk.is_empty(), "the room's own walls are visible");
        // Nothing of the block's outside is listed.
        for a in &v.same_chunk {
            let b = a.lattice_box();
            assert!(b.max.y > 8 && b.min.y < 32 || b.min.y <= 8 && b.max.y >= 8 || b.max.y >= 32, "{a:?}");
            assert!(b.min.x < 64 && b.max.z > 0 && b.min.z < 48);
        }
    }
    println!("sealed rooms: {:.1}% of pairs culled", 100.0 * bake.stats.culled_fraction());
}

#[test]
fn room_behind_a_wall_is_culled_even_when_both_open_to_the_sky() {
    let (level, lib) = two_rooms(true);
    let chunk = ChunkCoord::new(0, 0, 0);
    let cells: Vec<CubeAddr> = air_cells(&level, chunk, 3)
        .into_iter()
        .filter(|c| lbox([8, 8, 8], [48, 32, 40]).contains_box(&c.lattice_box()))
        .collect();
    let bake = bake_chunk_vis(&level, &lib, chunk, &cells, &VisSettings::default()).unwrap();
    let far = ChunkCoord::new(1, 0, 0);
    let room2: Vec<CubeAddr> = level
        .chunk(far)
        .unwrap()
        .octree()
        .leaves()
        .filter(|(a, c)| c.is_solid() && a.lattice_box().max.y <= 32)
        .map(|(a, _)| a)
        .collect();
    assert!(room2.len() > 4);
    for v in &bake.cells {
        for &a in &room2 {
            assert!(!listed(v, chunk, far, a), "cell {:?} lists room-2 cube {a:?}", v.cell);
        }
    }
    // Something is visible through the hole (the sky side of the roof is not, but the hole's
    // sides are), and the oracle agrees with what was culled.
    let (lib2, _) = library();
    let mut rng = Rng(5);
    let solids = region_solids(&level, chunk, 1);
    for v in bake.cells.iter().step_by(7) {
        for &(c, a) in &solids {
            if !listed(v, chunk, c, a) {
                let t = a.translated(level.frame().chunk_min_lattice(c));
                assert!(!oracle_sees(&level, &lib2, &v.cell.lattice_box(), t, 24, &mut rng), "{:?} -> {a:?}", v.cell);
            }
        }
    }
    println!("open rooms: {:.1}% of pairs culled", 100.0 * bake.stats.culled_fraction());
}

#[test]
fn transparent_walls_do_not_occlude() {
    let (level, lib) = {
        let (lib, ids) = library();
        let mut level = Level::new("glass", 3).unwrap();
        level.fill_box(lbox([0, 0, 0], [112, 40, 48]), solid(MaterialId(0))).unwrap();
        level.clear_box(lbox([8, 8, 8], [48, 32, 40])).unwrap();
        level.clear_box(lbox([64, 8, 8], [104, 32, 40])).unwrap();
        // The shared wall is glass.
        level.fill_box(lbox([48, 8, 8], [64, 32, 40]), solid(ids.glass)).unwrap();
        (level, lib)
    };
    let chunk = ChunkCoord::new(0, 0, 0);
    let cell = CubeAddr::new(IVec3::new(24, 16, 16), 3).unwrap();
    let bake = bake_chunk_vis(&level, &lib, chunk, &[cell], &VisSettings::default()).unwrap();
    let far_wall = level.get(IVec3::new(104, 16, 16)).unwrap().1.translated(-IVec3::new(64, 0, 0));
    assert!(listed(&bake.cells[0], chunk, ChunkCoord::new(1, 0, 0), far_wall));
}

#[test]
fn deps_and_errors() {
    let level = Level::new("d", 2).unwrap();
    let c = ChunkCoord::new(0, 1, 5);
    let d = vis_deps(&level, c, 1);
    assert_eq!(d.len(), 2 * 3 * 3);
    assert!(d.windows(2).all(|w| w[0] < w[1]) && d.contains(&c));
    assert_eq!(vis_deps(&level, c, 0), vec![c]);
    assert_eq!(path_deps(c), vec![ChunkCoord::new(0, 0, 5), c]);
    assert_eq!(path_deps(ChunkCoord::new(3, 0, 3)), vec![ChunkCoord::new(3, 0, 3)]);
    let (lib, _) = library();
    let outside = CubeAddr::new(IVec3::new(64, 0, 0), 3).unwrap();
    assert!(bake_chunk_vis(&level, &lib, ChunkCoord::new(0, 0, 0), &[outside], &VisSettings::default()).is_err());
    let sets = PathAttributeSets::default();
    assert!(bake_chunk_paths(&level, &lib, ChunkCoord::new(0, 0, 0), &[outside], &sets).is_err());
}

/// A heightfield terrain with a few walls: `cx × cy × cz` chunks of 16 units.
fn terrain(cx: i32, cy: i32, cz: i32, seed: u64) -> Level {
    let mut level = Level::new("terrain", 4).unwrap();
    let e = level.frame().chunk_edge();
    let mut rng = Rng(seed);
    let h = |x: i32, z: i32| {
        let (fx, fz) = (f64::from(x) / 40.0, f64::from(z) / 40.0);
        (60.0 + 24.0 * fx.sin() * fz.cos() + 12.0 * (fx * 2.3 + 1.0).cos()) as i32
    };
    // Columns of 8 × 8 lattice (one map unit).
    for x in (0..cx * e).step_by(8) {
        for z in (0..cz * e).step_by(8) {
            let top = (h(x, z) / 4 * 4).clamp(4, cy * e - 8);
            level.fill_box(lbox([x, 0, z], [x + 8, top, z + 8]), solid(MaterialId(0))).unwrap();
        }
    }
    for _ in 0..(cx * cz) {
        let (x, z) = (rng.range(0, cx * e - 40), rng.range(0, cz * e - 40));
        let (w, d) = if rng.below(2) == 0 { (32, 8) } else { (8, 32) };
        let y = h(x, z).clamp(4, cy * e - 48);
        level.fill_box(lbox([x, y - 8, z], [x + w, y + 40, z + d]), solid(MaterialId(0))).unwrap();
    }
    level
}

#[test]
fn terrain_culls_interiors_and_prints_figures() {
    let (lib, _) = library();
    let level = terrain(2, 1, 2, 3);
    let chunk = ChunkCoord::new(0, 0, 0);
    let cells: Vec<CubeAddr> = air_cells(&level, chunk, 4).into_iter().step_by(5).collect();
    let bake = bake_chunk_vis(&level, &lib, chunk, &cells, &VisSettings::default()).unwrap();
    let s = bake.stats;
    println!(
        "terrain 2x1x2: {} cells, {} solid leaves, {} candidates, {} of {} pairs listed ({:.1}% culled)",
        s.cells,
        s.solid_leaves,
        s.candidates,
        s.pairs_visible,
        s.pairs_total,
        100.0 * s.culled_fraction()
    );
    assert!(s.candidates < s.solid_leaves, "buried leaves are not candidates");
    assert!(s.culled_fraction() > 0.2);
    // Deterministic.
    assert_eq!(bake, bake_chunk_vis(&level, &lib, chunk, &cells, &VisSettings::default()).unwrap());
    // Per-cell results do not depend on which other cells are baked with it.
    let one = bake_chunk_vis(&level, &lib, chunk, &cells[3..4], &VisSettings::default()).unwrap();
    assert_eq!(one.cells[0], bake.cells[3]);
    // Lists are in octree pre-order.
    for v in &bake.cells {
        for cv in &v.other_chunks {
            if let VisibleCubes::Listed(l) = &cv.cubes {
                let order: Vec<CubeAddr> = level.chunk(cv.chunk).unwrap().octree().leaves().map(|(a, _)| a).collect();
                let pos: Vec<usize> = l.iter().map(|a| order.iter().position(|b| b == a).unwrap()).collect();
                assert!(pos.windows(2).all(|w| w[0] < w[1]));
            }
        }
    }
}

// ----- pathfinding ------------------------------------------------------------------------

#[test]
fn walk_on_floors_not_in_the_air_nor_on_water() {
    let (lib, ids) = library();
    let mut level = Level::new("p", 2).unwrap();
    // Floor at y 0..8 for x < 32, water for x in 32..64; a ceiling at y 24..32 over x < 32.
    level.fill_box(lbox([0, 0, 0], [32, 8, 32]), solid(MaterialId(0))).unwrap();
    level.fill_box(lbox([32, 0, 0], [64, 8, 32]), Cube::solid(ids.water, ids.water_phys, SoundId(0))).unwrap();
    level.fill_box(lbox([0, 24, 0], [32, 32, 32]), solid(MaterialId(0))).unwrap();
    let on_floor = CubeAddr::new(IVec3::new(8, 8, 8), 3).unwrap();
    let in_air = CubeAddr::new(IVec3::new(8, 16, 8), 3).unwrap();
    let over_water = CubeAddr::new(IVec3::new(40, 8, 8), 3).unwrap();
    let at_bottom = CubeAddr::new(IVec3::new(0, 0, 32), 3).unwrap();
    assert!(is_walkable(&level, &lib, &on_floor));
    assert!(!is_walkable(&level, &lib, &in_air));
    assert!(!is_walkable(&level, &lib, &over_water));
    assert!(!is_walkable(&level, &lib, &at_bottom));
    let sets = PathAttributeSets::default();
    let out = bake_chunk_paths(&level, &lib, ChunkCoord::new(0, 0, 0), &[on_floor, in_air], &sets).unwrap();
    assert_eq!(out[0].attributes, vec![PathAttribute::new(WALK, [0.0; 3])]);
    assert!(out[1].attributes.is_empty());
    let out = bake_chunk_paths(&level, &lib, ChunkCoord::new(1, 0, 0), &[over_water], &sets).unwrap();
    assert!(out[0].attributes.is_empty());
    // A floor in the chunk below counts.
    let mut level = Level::new("p", 2).unwrap();
    level.fill_box(lbox([0, 24, 0], [32, 32, 32]), solid(MaterialId(0))).unwrap();
    let up = CubeAddr::new(IVec3::new(0, 32, 0), 4).unwrap();
    let out = bake_chunk_paths(&level, &lib, ChunkCoord::new(0, 1, 0), &[up], &sets).unwrap();
    assert_eq!(out[0].attributes.len(), 1);
    // A non-solid top face of an extended cube is not a floor.
    level.paint_face(CubeAddr::new(IVec3::new(0, 16, 0), 4).unwrap(), Face::PosY, ids.glass).unwrap();
    assert!(is_walkable(&level, &lib, &up), "glass's physics is the default (solid)");
}

#[test]
fn user_attributes_pass_through_sorted_and_deduplicated() {
    let (lib, _) = library();
    let mut level = Level::new("p", 2).unwrap();
    level.fill_box(lbox([0, 0, 0], [32, 8, 32]), solid(MaterialId(0))).unwrap();
    let cell = CubeAddr::new(IVec3::new(8, 8, 8), 3).unwrap();
    let high = CubeAddr::new(IVec3::new(8, 16, 8), 3).unwrap();
    level.set_path_attrs_box(cell.lattice_box(), PathAttrs(1)).unwrap();
    level.set_path_attrs_box(high.lattice_box(), PathAttrs(2)).unwrap();
    let sets = PathAttributeSets::new(vec![
        vec![PathAttribute::new(WALK, [0.0; 3]), PathAttribute::new("cover", [1.0, 0.0, 0.0])],
        vec![PathAttribute::new("ladder", [0.0, 0.0, -1.0])],
    ]);
    let out = bake_chunk_paths(&level, &lib, ChunkCoord::new(0, 0, 0), &[cell, high], &sets).unwrap();
    assert_eq!(
        out[0].attributes,
        vec![PathAttribute::new("cover", [1.0, 0.0, 0.0]), PathAttribute::new(WALK, [0.0; 3])]
    );
    assert_eq!(out[1].attributes, vec![PathAttribute::new("ladder", [0.0, 0.0, -1.0])]);
    // A closure works as the lookup too.
    let f = |s: PathAttrs| vec![PathAttribute::new(format!("set{}", s.0), [0.0; 3])];
    let out = bake_chunk_paths(&level, &lib, ChunkCoord::new(0, 0, 0), &[high], &f).unwrap();
    assert_eq!(out[0].attributes, vec![PathAttribute::new("set2", [0.0; 3])]);
}
