//! Visibility and pathfinding bakes: a brute-force ray oracle, culling of closed rooms, terrain
//! figures, and the pathfinding rules.
//!
//! The oracle density can be raised with `VIS_ORACLE_RAYS` (rays per culled cell/cube pair).

use std::collections::BTreeMap;

use glam::{DVec3, IVec3};
use pmfedit_bake::BakeSettings;
use pmfedit_bake::layout::ChunkLayout;
use pmfedit_bake::path::{PathAttribute, PathAttributeSets, WALK, bake_chunk_paths, is_walkable, path_deps};
use pmfedit_bake::vis::{
    ChunkVisBake, LevelVis, OpaqueMaterials, VisSettings, bake_chunk_vis, bake_chunk_vis_in, occludes, oracle,
};
use pmfedit_core::map::coords::{ChunkCoord, CubeAddr, Face, LatticeBox};
use pmfedit_core::map::ids::{MaterialId, PathAttrs, PhysicsId, SoundId};
use pmfedit_core::map::library::{Material, PhysicsMaterial};
use pmfedit_core::map::octree::Cube;
use pmfedit_core::map::octree::Octree;
use pmfedit_core::map::{Level, Library};
use pmfedit_core::sample::noise::Rng as NoiseRng;

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

/// The air cells of room 1 (chunk (0, 0, 0)).
fn room1_cells(level: &Level) -> Vec<CubeAddr> {
    air_cells(level, ChunkCoord::new(0, 0, 0), 3)
        .into_iter()
        .filter(|c| lbox([8, 8, 8], [48, 32, 40]).contains_box(&c.lattice_box()))
        .collect()
}

#[test]
fn sealed_room_next_door_is_culled() {
    let (level, lib) = two_rooms(false);
    let chunk = ChunkCoord::new(0, 0, 0);
    let cells = room1_cells(&level);
    assert!(!cells.is_empty());
    let bake = bake_chunk_vis(&level, &lib, chunk, &cells, &VisSettings::default()).unwrap();
    for (i, cell) in cells.iter().enumerate() {
        let l = &bake.lists[bake.cell_list[i] as usize];
        assert!(bake.far[l.far as usize].is_empty(), "cell {cell:?} sees {:?}", bake.far[l.far as usize]);
        let own = &bake.own[l.own as usize];
        assert!(!own.is_empty(), "the room's own walls are visible");
        // Nothing of the block's outside is listed.
        for a in own.iter() {
            let b = a.lattice_box();
            assert!(b.max.x >= 8 && b.min.x <= 48 && b.max.y >= 8 && b.min.y <= 32, "{a:?}");
        }
    }
}

#[test]
fn rooms_open_to_the_sky_list_only_what_the_oracle_cannot_see() {
    let (level, lib) = two_rooms(true);
    let chunk = ChunkCoord::new(0, 0, 0);
    let cells = room1_cells(&level);
    let bake = bake_chunk_vis(&level, &lib, chunk, &cells, &VisSettings::default()).unwrap();
    // Room 2's chunk is listed whole (its roof is in sight through the hole; chunks beyond the
    // own one are listed whole).
    assert!((0..cells.len()).all(|i| bake.lists_chunk(i, ChunkCoord::new(1, 0, 0))));
    // The oracle agrees with what was culled.
    let opaque = OpaqueMaterials::of(&lib);
    let mut rng = NoiseRng::new(5);
    let solids = region_solids(&level, chunk, 1);
    for (i, cell) in cells.iter().enumerate().step_by(7) {
        for &(c, a) in &solids {
            if !bake.lists_cube(i, chunk, c, a) {
                let t = a.translated(level.frame().chunk_min_lattice(c));
                assert!(!oracle::sees(&level, &opaque, &cell.lattice_box(), t, 24, &mut rng), "{cell:?} -> {a:?}");
            }
        }
    }
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
    assert!(bake.lists_chunk(0, ChunkCoord::new(1, 0, 0)));
    assert!(occludes(&solid(MaterialId(0)), &lib));
}

#[test]
fn errors() {
    let level = Level::new("d", 2).unwrap();
    let c = ChunkCoord::new(0, 1, 5);
    assert_eq!(path_deps(c), vec![ChunkCoord::new(0, 0, 5), c]);
    assert_eq!(path_deps(ChunkCoord::new(3, 0, 3)), vec![ChunkCoord::new(3, 0, 3)]);
    let (lib, _) = library();
    let outside = CubeAddr::new(IVec3::new(64, 0, 0), 3).unwrap();
    assert!(bake_chunk_vis(&level, &lib, ChunkCoord::new(0, 0, 0), &[outside], &VisSettings::default()).is_err());
    let sets = PathAttributeSets::default();
    assert!(bake_chunk_paths(&level, &lib, ChunkCoord::new(0, 0, 0), &[outside], &sets).is_err());
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

// ----- whole levels: the far-seeing oracle ------------------------------------------------

/// Every chunk's visibility bake of a level, over the box of its stored chunks plus one layer
/// of air around it, with the compile's air cells (the layout's empty leaves).
struct LevelBakes {
    bakes: BTreeMap<ChunkCoord, (Vec<CubeAddr>, ChunkVisBake)>,
}

impl LevelBakes {
    fn new(level: &Level, lib: &Library) -> LevelBakes {
        let (lo, hi) = level.occupied_bounds().unwrap();
        let (lo, hi) = ((lo.as_ivec3() - IVec3::ONE).max(IVec3::ZERO), hi.as_ivec3() + IVec3::ONE);
        let lv =
            LevelVis::build(level, lib, VisSettings::default(), ChunkCoord::from_ivec3(lo), ChunkCoord::from_ivec3(hi));
        let settings = BakeSettings::default();
        let empty = Octree::new(level.frame().chunk_lattice_log2());
        let mut bakes = BTreeMap::new();
        for y in lo.y..=hi.y {
            for x in lo.x..=hi.x {
                for z in lo.z..=hi.z {
                    let c = ChunkCoord::new(x, y, z);
                    let layout = ChunkLayout::build(level.chunk(c).map_or(&empty, |ch| ch.octree()), &settings);
                    let cells = layout.air_cell_addrs(level.frame().chunk_min_lattice(c));
                    let bake = bake_chunk_vis_in(&lv, level, c, &cells).unwrap();
                    bakes.insert(c, (cells, bake));
                }
            }
        }
        LevelBakes { bakes }
    }

    /// Every (chunk, cell index) of the level.
    fn cells(&self) -> Vec<(ChunkCoord, usize)> {
        self.bakes.iter().flat_map(|(&c, (cells, _))| (0..cells.len()).map(move |i| (c, i))).collect()
    }

    fn cell(&self, c: ChunkCoord, i: usize) -> CubeAddr {
        self.bakes[&c].0[i]
    }

    /// Whether cell `i` of chunk `own` lists the leaf `leaf` (level lattice) of `chunk`.
    fn lists(&self, level: &Level, own: ChunkCoord, i: usize, chunk: ChunkCoord, leaf: CubeAddr) -> bool {
        let local = leaf.translated(-level.frame().chunk_min_lattice(chunk));
        self.bakes[&own].1.lists_cube(i, own, chunk, local)
    }

    /// The chunks cell `i` of `own` lists beyond its own.
    fn far(&self, own: ChunkCoord, i: usize) -> &[ChunkCoord] {
        let b = &self.bakes[&own].1;
        &b.far[b.lists[b.cell_list[i] as usize].far as usize]
    }
}

/// Lattice units of a 4-unit chunk ([`random_level`]).
const E: i32 = 32;

/// A hollow box of stone: outer `[min, max)`, walls one unit thick.
fn hollow(level: &mut Level, min: IVec3, max: IVec3) {
    level.fill_box(LatticeBox::new(min, max), solid(MaterialId(0))).unwrap();
    level.clear_box(LatticeBox::new(min + IVec3::splat(8), max - IVec3::splat(8))).unwrap();
}

/// What [`random_level`] built where, for targeted rays.
struct Features {
    /// A sealed room's outer box.
    sealed: LatticeBox,
    /// A corridor of 1 × 1 × N chunks along X: its inside.
    corridor: LatticeBox,
    /// Two rooms' insides and their windows (each an opening in the room's wall, facing the
    /// other room across several chunks of open air).
    rooms: [(LatticeBox, LatticeBox); 2],
}

/// A random whole level of 4-unit chunks, 12 × 3 × 12 chunks: an open floor over all of it
/// (12 × 12 chunks), a second storey over part of it with holes and stairs, a corridor of
/// 1 × 1 × N chunks open at both ends, two rooms seeing each other through windows several
/// chunks apart, random boxes (glass, water, pushed corners), and a sealed room built last.
fn random_level(seed: u64, ids: &Ids) -> (Level, Features) {
    let mut rng = NoiseRng::new(seed);
    let mut level = Level::new("far", 2).unwrap();
    let (w, d) = (12 * E, 12 * E);
    let stone = solid(MaterialId(0));
    level.fill_box(lbox([0, 0, 0], [w, 8, d]), stone).unwrap();
    // Second storey over x < 5 chunks, at y 1.5 chunks, with a hole and a flight of stairs.
    let y2 = 48;
    level.fill_box(lbox([0, y2, 0], [5 * E, y2 + 8, d]), stone).unwrap();
    let hz = rng.range(1, 9) * E;
    level.clear_box(lbox([E, y2, hz], [3 * E, y2 + 8, hz + 2 * E])).unwrap();
    let sz = rng.range(0, 10) * E;
    for s in 0..5 {
        level.fill_box(lbox([3 * E + s * 8, 8, sz], [3 * E + s * 8 + 8, 8 + (s + 1) * 8, sz + 16]), stone).unwrap();
    }
    // Random boxes.
    for _ in 0..rng.range(8, 16) {
        let min = IVec3::new(rng.range(0, w - 8), rng.range(8, 80), rng.range(0, d - 8));
        let size = IVec3::new(rng.range(4, 40), rng.range(4, 32), rng.range(4, 40));
        let max = (min + size).min(IVec3::new(w, 96, d));
        let m = match rng.range(0, 10) {
            0 => ids.glass,
            1 => ids.water,
            2 => ids.stone2,
            _ => MaterialId(0),
        };
        level.fill_box(LatticeBox::new(min, max), solid(m)).unwrap();
        if rng.range(0, 3) == 0 {
            let addr = level.get(min).unwrap().1;
            if addr.size_log2 <= 4 {
                level.push_corner(addr, rng.range(0, 8) as usize, IVec3::new(-3, -5, 2)).unwrap();
            }
        }
    }
    // A corridor of 1 × 1 × N chunks along X in the chunk layer y 1, open at both ends.
    let (cz, cx, n) = (rng.range(6, 11) * E, rng.range(5, 7) * E, rng.range(4, 6));
    let outer = lbox([cx, E, cz], [cx + n * E, 2 * E, cz + E]);
    level.fill_box(outer, stone).unwrap();
    let corridor = lbox([cx, E + 8, cz + 8], [cx + n * E, 2 * E - 8, cz + E - 8]);
    level.clear_box(corridor).unwrap();
    // Two rooms 2 × 1 × 2 chunks, several chunks apart along Z, with facing windows.
    let rx = rng.range(6, 9) * E;
    let (za, zb) = (0, rng.range(4, 6) * E);
    hollow(&mut level, IVec3::new(rx, 8, za), IVec3::new(rx + 2 * E, 8 + E, za + 2 * E));
    hollow(&mut level, IVec3::new(rx, 8, zb), IVec3::new(rx + 2 * E, 8 + E, zb + 2 * E));
    let wx = rx + rng.range(1, 5) * 8;
    let win_a = lbox([wx, 16, za + 2 * E - 8], [wx + 16, 32, za + 2 * E]);
    let win_b = lbox([wx + 8, 16, zb], [wx + 24, 32, zb + 8]);
    level.clear_box(win_a).unwrap();
    level.clear_box(win_b).unwrap();
    let inside = |z: i32| lbox([rx + 8, 16, z + 8], [rx + 2 * E - 8, E, z + 2 * E - 8]);
    // A sealed room, last: nothing cuts it open.
    let (sx, sz) = (rng.range(0, 3) * E, rng.range(0, 9) * E);
    let sealed = lbox([sx + 4, 8, sz + 4], [sx + 2 * E + 4, 8 + E, sz + E + 12]);
    hollow(&mut level, sealed.min, sealed.max);
    (level, Features { sealed, corridor, rooms: [(inside(za), win_a), (inside(zb), win_b)] })
}

/// A point of `b` (jittered away from its faces).
fn point_in(b: &LatticeBox, rng: &mut NoiseRng) -> DVec3 {
    let j = |r: &mut NoiseRng| 0.02 + 0.96 * r.unit();
    b.min.as_dvec3() + (b.max - b.min).as_dvec3() * DVec3::new(j(rng), j(rng), j(rng))
}

/// Checks that cell `i` of `own` lists every leaf the segment from `p` towards `q` passes before
/// it enters an occluder; returns how many leaves it checked.
fn check_segment(
    level: &Level,
    bakes: &LevelBakes,
    opaque: &OpaqueMaterials,
    own: ChunkCoord,
    i: usize,
    p: DVec3,
    q: DVec3,
) -> usize {
    let hits = oracle::leaves_along(level, opaque, p, q);
    for &(c, leaf) in &hits {
        assert!(
            bakes.lists(level, own, i, c, leaf),
            "cell {:?} (chunk {own:?}) sees leaf {leaf:?} of chunk {c:?} along {p} → {q}, but does not list it",
            bakes.cell(own, i)
        );
    }
    hits.len()
}

#[test]
fn no_cell_omits_what_a_far_seeing_oracle_sees_on_random_levels() {
    let (lib, ids) = library();
    let opaque = OpaqueMaterials::of(&lib);
    let mut checked = 0;
    for seed in 1..=3u64 {
        let (level, f) = random_level(seed, &ids);
        let bakes = LevelBakes::new(&level, &lib);
        let cells = bakes.cells();
        let mut rng = NoiseRng::new(seed * 1000 + 7);
        // Random cells, random directions, as far as the level goes.
        for _ in 0..30 {
            let (c, i) = cells[rng.range(0, cells.len() as i32) as usize];
            let cb = bakes.cell(c, i).lattice_box();
            for &(hc, leaf) in &oracle::reached(&level, &opaque, &cb, 60, 1000.0, &mut rng) {
                assert!(
                    bakes.lists(&level, c, i, hc, leaf),
                    "cell {cb:?} sees {leaf:?} of {hc:?} but does not list it"
                );
                checked += 1;
            }
        }
        // Cells in the corridor looking down it, out of either end, and cells outside looking in.
        let along = |cell: &CubeAddr| cell.lattice_box().intersects(&f.corridor);
        let in_corridor: Vec<(ChunkCoord, usize)> =
            cells.iter().copied().filter(|&(c, i)| along(&bakes.cell(c, i))).collect();
        assert!(!in_corridor.is_empty(), "seed {seed}: the corridor has air cells");
        for &(c, i) in in_corridor.iter().step_by(3) {
            let cb = bakes.cell(c, i).lattice_box();
            for _ in 0..8 {
                let p = point_in(&cb, &mut rng);
                let mut end = point_in(&f.corridor, &mut rng);
                end.x = if rng.unit() < 0.5 { f64::from(f.corridor.min.x) } else { f64::from(f.corridor.max.x) };
                checked += check_segment(&level, &bakes, &opaque, c, i, p, p + (end - p) * 40.0);
            }
        }
        // Rooms: from inside one, through both windows, into the other.
        for (a, b) in [(0, 1), (1, 0)] {
            let (room, win) = f.rooms[a];
            let far_win = f.rooms[b].1;
            let room_cells: Vec<(ChunkCoord, usize)> =
                cells.iter().copied().filter(|&(c, i)| room.contains_box(&bakes.cell(c, i).lattice_box())).collect();
            assert!(!room_cells.is_empty());
            for &(c, i) in room_cells.iter().step_by(2) {
                let cb = bakes.cell(c, i).lattice_box();
                for _ in 0..12 {
                    let p = point_in(&cb, &mut rng);
                    let through =
                        if rng.unit() < 0.5 { point_in(&win, &mut rng) } else { point_in(&far_win, &mut rng) };
                    checked += check_segment(&level, &bakes, &opaque, c, i, p, p + (through - p) * 30.0);
                }
            }
        }
        // The reverse: the sealed room's cells list no chunk outside the room's own chunks.
        let (lo, hi) = (f.sealed.min >> 5, (f.sealed.max - IVec3::ONE) >> 5);
        let inside = LatticeBox::new(f.sealed.min + IVec3::splat(8), f.sealed.max - IVec3::splat(8));
        let mut sealed_cells = 0;
        for &(c, i) in &cells {
            if inside.contains_box(&bakes.cell(c, i).lattice_box()) {
                sealed_cells += 1;
                for far in bakes.far(c, i) {
                    let v = far.as_ivec3();
                    assert!(v.cmpge(lo).all() && v.cmple(hi).all(), "seed {seed}: a sealed room's cell lists {far:?}");
                }
            }
        }
        assert!(sealed_cells > 0);
    }
    assert!(checked > 1000, "the oracle checked {checked} leaves");
}

/// Two sealed rooms, chunks apart on an open floor, never list each other (nor the floor).
#[test]
fn sealed_rooms_never_list_each_other() {
    let (lib, _) = library();
    let mut level = Level::new("sealed", 2).unwrap();
    level.fill_box(lbox([0, 0, 0], [10 * E, 8, 10 * E]), solid(MaterialId(0))).unwrap();
    let a = lbox([E + 4, 8, E + 4], [3 * E + 4, 8 + E, 3 * E + 4]);
    let b = lbox([6 * E + 4, 8, 5 * E + 4], [8 * E + 4, 8 + E, 7 * E + 4]);
    hollow(&mut level, a.min, a.max);
    hollow(&mut level, b.min, b.max);
    let bakes = LevelBakes::new(&level, &lib);
    for (room, other) in [(a, b), (b, a)] {
        let inside = LatticeBox::new(room.min + IVec3::splat(8), room.max - IVec3::splat(8));
        let (olo, ohi) = (other.min >> 5, (other.max - IVec3::ONE) >> 5);
        let mut n = 0;
        for (c, i) in bakes.cells() {
            if !inside.contains_box(&bakes.cell(c, i).lattice_box()) {
                continue;
            }
            n += 1;
            for far in bakes.far(c, i) {
                let v = far.as_ivec3();
                assert!(
                    !(v.cmpge(olo).all() && v.cmple(ohi).all()),
                    "{:?} in {room:?} lists {far:?}",
                    bakes.cell(c, i)
                );
                assert!(v.cmpge(room.min >> 5).all() && v.cmple((room.max - IVec3::ONE) >> 5).all());
            }
        }
        assert!(n > 0);
    }
}

/// The new-user case at small scale: a flat floor of 8 × 8 chunks (16-unit chunks) and
/// nothing else. Every air cell above it lists every floor chunk.
#[test]
fn on_an_open_floor_every_cell_lists_every_floor_chunk() {
    let (lib, _) = library();
    let mut level = Level::new("floor", 4).unwrap();
    level.fill_box(lbox([0, 0, 0], [8 * 128, 8, 8 * 128]), solid(MaterialId(0))).unwrap();
    let bakes = LevelBakes::new(&level, &lib);
    let floor: Vec<ChunkCoord> = level.chunks().map(|(c, _)| *c).collect();
    assert_eq!(floor.len(), 64);
    let mut n = 0;
    for (c, i) in bakes.cells() {
        let cell = bakes.cell(c, i);
        if cell.min.y < 8 || cell.min.x < 0 || cell.min.z < 0 || cell.min.x >= 8 * 128 || cell.min.z >= 8 * 128 {
            continue; // below the floor's top or beside the floor
        }
        n += 1;
        let far = bakes.far(c, i);
        for f in &floor {
            if *f != c {
                assert!(far.binary_search(f).is_ok(), "cell {cell:?} of {c:?} omits floor chunk {f:?}");
            }
        }
        if floor.contains(&c) {
            let b = &bakes.bakes[&c].1;
            assert!(!b.own[b.lists[b.cell_list[i] as usize].own as usize].is_empty(), "{cell:?} sees its own floor");
        }
    }
    assert!(n > 64, "{n} cells above the floor");
}
