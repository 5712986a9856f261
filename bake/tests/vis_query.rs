//! The compiled-chunk queries of `pmf::query` on real bakes: the point → cube walk agrees with
//! the layout the compiler used, and an air cube's decoded visible set sees its own room and not
//! the sealed room next door.

use glam::{DVec3, IVec3};
use pmfedit_bake::compile::{CompileSettings, bake_chunk};
use pmfedit_bake::layout::ChunkLayout;
use pmfedit_core::format::pmf::{self, CubeSet, leaf_at, visible_from};
use pmfedit_core::map::coords::{ChunkCoord, LatticeBox};
use pmfedit_core::map::ids::{MaterialId, PhysicsId, SoundId};
use pmfedit_core::map::library::Material;
use pmfedit_core::map::octree::{Cube, Octree};
use pmfedit_core::map::{Level, Map};
use pmfedit_core::sample;

mod common;
use common::Rng;

/// PMF chunk space (map units from the chunk center) of a fractional chunk-local lattice point.
fn chunk_space(level: &Level, local: DVec3) -> [f64; 3] {
    level.frame().chunk_space_from_lattice_in_chunk(local).to_array()
}

/// The absolute PMF chunk index bakes use for chunk references (see `compile::absolute_index`).
fn index_of(c: ChunkCoord) -> pmf::ChunkIndex {
    pmf::ChunkIndex { y: c.y as u8, x: c.x as u16, z: c.z as u16 }
}

#[test]
fn leaf_at_finds_the_layout_cube_of_random_points_of_a_demo_chunk() {
    let map = sample::demo();
    let level = &map.levels[0];
    let chunk = level.frame().center_chunk;
    let settings = CompileSettings::default();
    let bake = bake_chunk(&map, 0, chunk, &settings).expect("bakes");
    let octree =
        level.chunk(chunk).map_or_else(|| Octree::new(level.frame().chunk_lattice_log2()), |c| c.octree().clone());
    let layout = ChunkLayout::build(&octree, &settings.bake);
    let cubes = &bake.pmf.common.cubes;
    assert_eq!(cubes.len(), layout.len());
    let edge = f64::from(level.frame().chunk_edge());
    let mut rng = Rng(7);
    let (mut air, mut solid) = (0, 0);
    for _ in 0..4000 {
        let local = DVec3::new(rng.unit(), rng.unit(), rng.unit()) * edge;
        let found = leaf_at(cubes, level.chunk_size_log2(), chunk_space(level, local)).expect("inside the chunk");
        let expected = layout.cube_containing(local.floor().as_ivec3()).unwrap();
        assert_eq!(found.index, expected, "at {local:?}");
        // The box reported is the layout cube's, and holds the point.
        let lc = &layout.cubes()[expected as usize];
        let lo = chunk_space(level, lc.addr.min.as_dvec3());
        assert_eq!(found.min, lo);
        assert_eq!(found.edge, f64::from(lc.addr.edge()) / 8.0);
        let p = chunk_space(level, local);
        assert!((0..3).all(|a| found.min[a] <= p[a] && p[a] < found.max()[a]));
        let cube = &cubes[found.index as usize];
        if lc.is_air() {
            air += 1;
            assert_eq!(cube.kind, pmf::CubeKind::Empty);
            assert!(cube.visibility.is_some(), "an air cell of a full bake carries visibility data");
        } else {
            solid += 1;
            assert!(matches!(cube.kind, pmf::CubeKind::Geometry(_) | pmf::CubeKind::ExtGeometry(_)));
            assert!(visible_from(cubes, index_of(chunk), found.index).is_none());
        }
    }
    assert!(air > 100 && solid > 100, "air {air}, solid {solid}: the chunk should hold both");
    // Outside the chunk.
    assert_eq!(leaf_at(cubes, level.chunk_size_log2(), chunk_space(level, DVec3::new(-0.5, 1.0, 1.0))), None);
    assert_eq!(leaf_at(cubes, level.chunk_size_log2(), chunk_space(level, DVec3::splat(edge))), None);
}

fn lbox(min: [i32; 3], max: [i32; 3]) -> LatticeBox {
    LatticeBox::new(IVec3::from_array(min), IVec3::from_array(max))
}

/// Two sealed rooms in one block of 8-unit chunks: room 1 (lattice x 8..48) in chunk (0, 0, 0),
/// room 2 (x 64..104) in chunk (1, 0, 0), an opaque wall between them (x 48..64).
fn two_rooms() -> Map {
    let mut map = Map::new("rooms");
    let stone = map.library.add(Material::new("stone2", PhysicsId(0), SoundId(0))).unwrap();
    let solid = |m| Cube::solid(m, PhysicsId(0), SoundId(0));
    let mut level = Level::new("rooms", 3).unwrap();
    level.fill_box(lbox([0, 0, 0], [112, 40, 48]), solid(MaterialId(0))).unwrap();
    level.fill_box(lbox([64, 0, 0], [112, 40, 48]), solid(stone)).unwrap();
    level.clear_box(lbox([8, 8, 8], [48, 32, 40])).unwrap();
    level.clear_box(lbox([64, 8, 8], [104, 32, 40])).unwrap();
    map.levels = vec![level];
    map
}

#[test]
fn the_visible_set_of_an_air_cube_sees_its_room_and_not_the_room_behind_the_wall() {
    let map = two_rooms();
    let level = &map.levels[0];
    let settings = CompileSettings::default();
    let (c1, c2) = (ChunkCoord::new(0, 0, 0), ChunkCoord::new(1, 0, 0));
    let bake1 = bake_chunk(&map, 0, c1, &settings).expect("bakes");
    let bake2 = bake_chunk(&map, 0, c2, &settings).expect("bakes");
    let size = level.chunk_size_log2();
    let local = |c: ChunkCoord, p: [f64; 3]| {
        let l = DVec3::from_array(p) - level.frame().chunk_min_lattice(c).as_dvec3();
        chunk_space(level, l)
    };
    // An air cube in the middle of room 1.
    let air = leaf_at(&bake1.pmf.common.cubes, size, local(c1, [24.5, 16.5, 20.5])).unwrap();
    let set = visible_from(&bake1.pmf.common.cubes, index_of(c1), air.index).expect("air with visibility data");
    // Room 1's walls: the solid cube just past each face of the room.
    for p in [[7.5, 16.5, 20.5], [48.5, 16.5, 20.5], [24.5, 7.5, 20.5], [24.5, 32.5, 20.5], [24.5, 16.5, 7.5]] {
        let wall = leaf_at(&bake1.pmf.common.cubes, size, local(c1, p)).unwrap();
        assert!(
            matches!(bake1.pmf.common.cubes[wall.index as usize].kind, pmf::CubeKind::Geometry(_)),
            "{p:?} is a wall"
        );
        assert!(set.contains(index_of(c1), wall.index), "the room-1 wall at {p:?} (cube {}) is visible", wall.index);
    }
    // Room 2's walls (far wall, floor, ceiling, side) are not.
    for p in [[104.5, 16.5, 20.5], [80.5, 7.5, 20.5], [80.5, 32.5, 20.5], [80.5, 16.5, 7.5]] {
        let wall = leaf_at(&bake2.pmf.common.cubes, size, local(c2, p)).unwrap();
        assert!(matches!(bake2.pmf.common.cubes[wall.index as usize].kind, pmf::CubeKind::Geometry(_)));
        assert!(!set.contains(index_of(c2), wall.index), "the room-2 cube at {p:?} (cube {}) is hidden", wall.index);
    }
    assert!(set.get(index_of(c2)).is_none_or(|s| matches!(s, CubeSet::Listed(_))), "room 2 is not seen whole");
    // And the other way round: from room 2, room 2's wall is visible and room 1's is not.
    let air2 = leaf_at(&bake2.pmf.common.cubes, size, local(c2, [80.5, 16.5, 20.5])).unwrap();
    let set2 = visible_from(&bake2.pmf.common.cubes, index_of(c2), air2.index).unwrap();
    let wall2 = leaf_at(&bake2.pmf.common.cubes, size, local(c2, [104.5, 16.5, 20.5])).unwrap();
    let wall1 = leaf_at(&bake1.pmf.common.cubes, size, local(c1, [7.5, 16.5, 20.5])).unwrap();
    assert!(set2.contains(index_of(c2), wall2.index));
    assert!(!set2.contains(index_of(c1), wall1.index));
}
