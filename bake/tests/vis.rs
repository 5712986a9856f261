//! Visibility and pathfinding bakes: a brute-force ray oracle, culling of closed rooms, terrain
//! figures, and the pathfinding rules.
//!
//! The oracle density can be raised with `VIS_ORACLE_RAYS` (rays per culled cell/cube pair).

use glam::IVec3;
use pmfedit_bake::path::{PathAttribute, PathAttributeSets, WALK, bake_chunk_paths, is_walkable, path_deps};
use pmfedit_bake::vis::{OpaqueMaterials, VisSettings, bake_chunk_vis, occludes, oracle};
use pmfedit_core::map::coords::{ChunkCoord, CubeAddr, Face, LatticeBox};
use pmfedit_core::map::ids::{MaterialId, PathAttrs, PhysicsId, SoundId};
use pmfedit_core::map::library::{Material, PhysicsMaterial};
use pmfedit_core::map::octree::Cube;
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
