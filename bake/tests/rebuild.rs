//! The rebuild engine: each kind of dependency the spread must follow, checked on a map built so
//! that only that dependency links the edit to the chunk it affects (the random sequences of
//! `tests/tests/invariant.rs` find these only by luck); the per-chunk states through the
//! stages; failures, retries, chunks leaving the grid, and reloads worked out from two maps.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use glam::{IVec3, Vec3};

use pmfedit_bake::compile::{CompileError, CompileSettings, bake_chunk, bake_chunk_cached, compile_full};
use pmfedit_bake::deps::{ChunkKey, bounce_reach, draft_chunks};
use pmfedit_bake::light::LightCache;
use pmfedit_bake::rebuild::{ChunkState, Plan, Rebuild, RebuildError, WARM_RADIUS, diff};
use pmfedit_bake::scheduler::{BakeFn, Scheduler, Stage};
use pmfedit_bake::vis::VisCache;
use pmfedit_core::edit::{CubeOp, Edit, History, LibItem, LibRef, ObjRef};
use pmfedit_core::format::pmf;
use pmfedit_core::map::coords::{ChunkCoord, CubeAddr, LatticeBox};
use pmfedit_core::map::ids::{MaterialId, PhysicsId, SoundId};
use pmfedit_core::map::library::{Light, Material};
use pmfedit_core::map::lighting::LevelLighting;
use pmfedit_core::map::octree::Cube;
use pmfedit_core::map::{Level, Map};

/// Chunk edge of the test maps: 4 map units = 32 lattice units.
const EDGE: i32 = 32;

fn settings() -> CompileSettings {
    CompileSettings { timestamp: 7, ..CompileSettings::default() }
}

fn stone() -> Cube {
    Cube::solid(MaterialId(0), PhysicsId(0), SoundId(0))
}

/// A floor one unit thick over `n`×`n` chunks starting at the center chunk (lattice origin of
/// the level), and one lamp `range` units above its first chunk. No sun, sky or bounce: the
/// lamp's spread alone (daylight has its own tests below).
fn floor_map(n: i32, range: f32) -> Map {
    let mut map = Map::new("rebuild");
    map.levels[0] = Level::new("main", 2).unwrap();
    map.levels[0].lighting = LevelLighting::none();
    let min = origin(&map);
    map.levels[0].fill_box(LatticeBox::new(min, min + IVec3::new(n * EDGE, 8, n * EDGE)), stone()).unwrap();
    // 2 units into the first chunk, 6 units above the floor's bottom.
    let at = map.levels[0].frame().world_from_lattice(min + IVec3::new(16, 48, 16)).as_vec3();
    let mut lamp = Light::point("lamp", at);
    lamp.range = range;
    map.levels[0].objects.add(lamp).unwrap();
    map
}

fn origin(map: &Map) -> IVec3 {
    let f = map.levels[0].frame();
    f.chunk_min_lattice(f.center_chunk)
}

fn chunk_at(map: &Map, lattice: IVec3) -> ChunkKey {
    let f = map.levels[0].frame();
    (0, f.chunk_from_lattice(lattice))
}

fn engine(map: &Map) -> Rebuild {
    let mut e = Rebuild::new(Scheduler::new(2, settings(), Arc::new(|| {})), Plan::FinalOnly, Arc::new(map.clone()));
    e.wait();
    assert!(e.is_final());
    e
}

fn bytes(f: &pmf::File) -> Vec<u8> {
    pmf::write(f).unwrap()
}

/// Applies `edit`, tells the engine, waits; returns the chunks it queued. Panics unless the
/// engine's file equals a full compile afterwards.
fn edit_and_check(e: &mut Rebuild, map: &mut Map, history: &mut History, edit: Edit) -> BTreeSet<ChunkKey> {
    let changes = history.apply(map, edit).unwrap();
    e.edited(Arc::new(map.clone()), &changes);
    let queued: BTreeSet<ChunkKey> = e.keys(ChunkState::Queued).collect();
    e.wait();
    assert!(e.is_final());
    assert!(bytes(&e.compile(None).unwrap()) == bytes(&compile_full(map, &settings()).unwrap()), "incremental != full");
    queued
}

/// The chunk whose bake `edit` changes although the spread has no direct reason (it only
/// checks that bake before and after): proves the dependency is real.
fn bake_changes(before: &Map, after: &Map, key: ChunkKey) -> bool {
    let a = bake_chunk(before, key.0, key.1, &settings()).unwrap();
    let b = bake_chunk(after, key.0, key.1, &settings()).unwrap();
    a.pmf != b.pmf
}

#[test]
fn a_cube_at_a_chunk_border_rebakes_the_neighbour_whose_face_it_covers() {
    let mut map = floor_map(2, 4.0);
    let mut history = History::new();
    let mut e = engine(&map);
    // The floor ends at x = 2 chunks: a cube just past its end, in the next chunk, covers the
    // floor's +X side face, which the last floor chunk's mesh must drop.
    let o = origin(&map);
    let at = o + IVec3::new(2 * EDGE, 0, 4);
    let before = map.clone();
    let queued = edit_and_check(
        &mut e,
        &mut map,
        &mut history,
        Edit::Cubes { level: 0, op: CubeOp::SetCube { addr: CubeAddr::containing(at, 3), cube: stone() } },
    );
    let neighbour = chunk_at(&map, at - IVec3::new(1, 0, 0));
    assert_ne!(neighbour, chunk_at(&map, at));
    assert!(bake_changes(&before, &map, neighbour), "the test map does not exercise face culling");
    assert!(queued.contains(&neighbour));
}

#[test]
fn a_wall_near_a_lamp_rebakes_the_chunks_its_shadow_reaches_beyond_the_neighbours() {
    let mut map = floor_map(5, 18.0);
    let id = map.levels[0].objects.lights().ids().next().unwrap();
    let mut lamp = map.levels[0].objects.lights().get(id).unwrap().clone();
    lamp.intensity = 40.0;
    map.levels[0].objects.replace(id, lamp).unwrap();
    let mut history = History::new();
    let mut e = engine(&map);
    // A wall right beside the lamp (x = 2, 6 units up), almost as high, in chunk 0: its shadow
    // falls along +X across the floor to chunk 3 and beyond.
    let o = origin(&map);
    let wall = LatticeBox::new(o + IVec3::new(3 * 8, 8, 0), o + IVec3::new(3 * 8 + 4, 47, 2 * EDGE));
    let before = map.clone();
    let queued = edit_and_check(
        &mut e,
        &mut map,
        &mut history,
        Edit::Cubes { level: 0, op: CubeOp::FillBox { region: wall, cube: stone() } },
    );
    let far = chunk_at(&map, o + IVec3::new(3 * EDGE + 4, 0, 4));
    assert!(bake_changes(&before, &map, far), "the shadow does not reach the far chunk");
    assert!(queued.contains(&far), "{far:?} not re-baked; queued {queued:?}");
}

/// A wall across an open floor hides each half from the other: the far lists of chunks far
/// from the wall change, and the engine writes them again in the full bakes it has (no re-bake
/// of those chunks, no relighting), equal to a full compile.
#[test]
fn a_wall_across_a_floor_rewrites_far_lists_without_rebaking() {
    let mut map = floor_map(6, 0.5);
    let mut history = History::new();
    let mut e = engine(&map);
    let o = origin(&map);
    let wall = LatticeBox::new(o + IVec3::new(3 * EDGE + 8, 0, 0), o + IVec3::new(3 * EDGE + 16, EDGE, 6 * EDGE));
    let before = map.clone();
    let far = chunk_at(&map, o + IVec3::new(4, 0, 4));
    let queued = edit_and_check(
        &mut e,
        &mut map,
        &mut history,
        Edit::Cubes { level: 0, op: CubeOp::FillBox { region: wall, cube: stone() } },
    );
    assert!(bake_changes(&before, &map, far), "the wall does not hide anything from {far:?}");
    assert!(!queued.contains(&far), "{far:?} was baked again; queued {queued:?}");
    // Chunks x 0 and 1 on one side, 5 on the other (2 to 4 are the wall's and its neighbours').
    let (refreshed, _) = e.last_far_refresh();
    assert!(refreshed >= 18, "far lists written again in {refreshed} bakes");
    // Undone: the lists come back, again without a re-bake.
    let changes = history.undo(&mut map).unwrap();
    e.edited(Arc::new(map.clone()), &changes);
    assert!(e.last_far_refresh().0 >= 18);
    e.wait();
    assert!(bytes(&e.compile(None).unwrap()) == bytes(&compile_full(&map, &settings()).unwrap()));
}

/// The air cells of the top chunk layer of a file's first level and how many of them carry
/// visibility data.
fn cells_with_data(file: &pmf::File) -> (usize, usize) {
    let (mut cells, mut with) = (0, 0);
    let grid = file.levels[0].grid;
    for (i, chunk) in file.levels[0].chunks.iter().enumerate() {
        if u16::from(grid.index_of(i).y) + 1 != grid.y {
            continue;
        }
        for cube in chunk.common.cubes.iter().filter(|c| matches!(c.kind, pmf::CubeKind::Empty)) {
            cells += 1;
            with += usize::from(cube.visibility.is_some());
        }
    }
    (cells, with)
}

/// Air cells that would cull under `VisSettings::min_culled` (10 %) of the level's geometry
/// cubes, with long far lists, write none. The share moves with geometry no cell sees: here
/// 3 × 3 chunks under a floor of 9 × 9 chunks, checkered (64 cubes each, about 30 % of the
/// level's) and then filled plain (one cube each); the all-air chunks beside them see the
/// blocks' sides and floor's underside only, and keep their lists. That edit keeps every
/// summary, so only the counts change: the far lists of every floor chunk come and go without a re-bake, and the
/// engine's file stays the full compile's.
#[test]
fn cells_that_would_cull_little_write_no_lists_and_the_choice_follows_unseen_geometry() {
    let mut map = floor_map(9, 0.5);
    let stone2 = map.library.add(Material::new("stone2", PhysicsId(0), SoundId(0))).unwrap();
    let o = origin(&map);
    let under = LatticeBox::new(o - IVec3::new(0, EDGE, 0), o + IVec3::new(3 * EDGE, 0, 3 * EDGE));
    map.levels[0].fill_box(under, stone()).unwrap();
    for x in (0..3 * EDGE).step_by(8) {
        for y in (-EDGE..0).step_by(8) {
            for z in (0..3 * EDGE).step_by(8) {
                if (x + y + z) / 8 % 2 == 0 {
                    let addr = CubeAddr::new(o + IVec3::new(x, y, z), 3).unwrap();
                    map.levels[0].set_cube(addr, Cube::solid(stone2, PhysicsId(0), SoundId(0))).unwrap();
                }
            }
        }
    }
    let full = compile_full(&map, &settings()).unwrap();
    let (cells, with) = cells_with_data(&full);
    assert!(cells > 81 && with == cells, "above the floor {with} of {cells} air cells carry lists");
    let mut history = History::new();
    let mut e = engine(&map);
    let queued = edit_and_check(
        &mut e,
        &mut map,
        &mut history,
        Edit::Cubes { level: 0, op: CubeOp::FillBox { region: under, cube: stone() } },
    );
    let file = e.compile(None).unwrap();
    assert_eq!(cells_with_data(&file), (cells, 0), "the floor's cells see nearly everything");
    let far = chunk_at(&map, o + IVec3::new(8 * EDGE, 8, 8 * EDGE));
    assert!(!queued.contains(&far), "{far:?} was baked again; queued {queued:?}");
    assert!(e.last_far_refresh().0 >= 60, "far lists written again in {} bakes", e.last_far_refresh().0);
    // Undone: the lists come back, again without a re-bake of the far floor.
    let changes = history.undo(&mut map).unwrap();
    e.edited(Arc::new(map.clone()), &changes);
    assert!(!e.keys(ChunkState::Queued).any(|k| k == far));
    e.wait();
    let file = e.compile(None).unwrap();
    assert_eq!(cells_with_data(&file), (cells, cells));
    assert!(bytes(&file) == bytes(&compile_full(&map, &settings()).unwrap()));
}

/// [`floor_map`] with a low sun in the east (no sky, no bounce) and a lamp too small to matter.
fn sunny_floor(n: i32) -> Map {
    let mut map = floor_map(n, 0.5);
    let l = &mut map.levels[0].lighting;
    l.sun.intensity = 1.0;
    l.sun.azimuth = 90.0;
    l.sun.elevation = 20.0;
    l.sun.angle = 0.0;
    map
}

#[test]
fn a_wall_rebakes_the_chunks_whose_sun_rays_pass_it_beyond_the_neighbours() {
    let mut map = sunny_floor(5);
    let mut history = History::new();
    let mut e = engine(&map);
    // A wall 3 units high across the floor in chunk 2 (x 8..9 units), inside the floor's chunk
    // layer: the sun, 20° up in the east, throws its shadow back over chunk 1 into chunk 0.
    let o = origin(&map);
    let wall = LatticeBox::new(o + IVec3::new(2 * EDGE, 8, 0), o + IVec3::new(2 * EDGE + 8, EDGE, 5 * EDGE));
    let before = map.clone();
    let a = chunk_at(&map, o + IVec3::new(4, 0, 4));
    assert!(e.full(a).unwrap().reads.contains(&chunk_at(&map, o + IVec3::new(2 * EDGE, 0, 4)).1));
    let queued = edit_and_check(
        &mut e,
        &mut map,
        &mut history,
        Edit::Cubes { level: 0, op: CubeOp::FillBox { region: wall, cube: stone() } },
    );
    assert!(bake_changes(&before, &map, a), "the shadow does not reach chunk 0");
    assert!(queued.contains(&a), "{a:?} not re-baked; queued {queued:?}");
    // West of the wall is in its shadow; the chunk east of it, beyond its neighbours, is not
    // re-baked (its sun rays go east, away from the wall).
    assert!(!queued.contains(&chunk_at(&map, o + IVec3::new(4 * EDGE + 4, 0, 4))));
}

/// Rays stop at the top of the highest occupied chunk layer, so no bake recorded the chunks
/// above it (a ray cut there records only the chunk its end touches): a cube near the top of the
/// next layer (x 19..20, y 7..8 units, over chunk 4) shades the floor 16–19 units west of it
/// under the low eastern sun, in chunk 0, whose sun rays had left the floor's layer over chunk
/// 2. The engine finds chunk 0 by where its sun rays can go (`deps::sky_reaches`).
#[test]
fn content_rising_above_the_highest_layer_rebakes_the_chunks_it_may_shade() {
    let mut map = sunny_floor(5);
    let mut history = History::new();
    let mut e = engine(&map);
    let o = origin(&map);
    let above = o + IVec3::new(4 * EDGE + 24, EDGE + 24, 0);
    let before = map.clone();
    let shaded = chunk_at(&map, o + IVec3::new(16, 0, 4));
    assert!(!e.full(shaded).unwrap().reads.contains(&chunk_at(&map, above).1), "the ray recorded the chunk above");
    let queued = edit_and_check(
        &mut e,
        &mut map,
        &mut history,
        Edit::Cubes { level: 0, op: CubeOp::SetCube { addr: CubeAddr::containing(above, 3), cube: stone() } },
    );
    assert!(bake_changes(&before, &map, shaded), "the cube's shadow does not reach {shaded:?}");
    assert!(queued.contains(&shaded), "{shaded:?} not re-baked; queued {queued:?}");
}

/// An 8 × 8-chunk floor (32 units square) under a sun 25° up in the east, no sky, no bounce.
fn wide_sunny_floor() -> Map {
    let mut map = sunny_floor(8);
    map.levels[0].lighting.sun.elevation = 25.0;
    map
}

/// Content rising above the top re-bakes the chunks whose rays may pass it, not the level:
/// on a wide floor a cube over the far corner (chunk (7, 1, 7), 3 units above the old top)
/// leaves the bakes of the near corner alone (their sun rays climb 8 units within 18 units
/// east, their gather rays end within 14 units) — and incremental still equals full. A second
/// cube in the new layer, over chunk 3 (x 13..14, y 7..8 units), then shades the floor of chunk
/// (0, 0, 0): that bake was made under the old top, its sun rays cut there crossing chunks 1
/// and 2 only, so nothing it recorded changed, and the engine must find it by where its rays
/// can go although the top did not rise again.
#[test]
fn a_rise_rebakes_only_what_it_may_shade_and_later_changes_above_the_old_top_still_reach_older_bakes() {
    let mut map = wide_sunny_floor();
    let mut history = History::new();
    let mut e = engine(&map);
    let o = origin(&map);
    let corner = chunk_at(&map, o + IVec3::new(4, 0, 4));
    let far = o + IVec3::new(7 * EDGE + 8, EDGE + 24, 7 * EDGE + 8);
    let queued = edit_and_check(
        &mut e,
        &mut map,
        &mut history,
        Edit::Cubes { level: 0, op: CubeOp::SetCube { addr: CubeAddr::containing(far, 3), cube: stone() } },
    );
    assert!(queued.contains(&chunk_at(&map, o + IVec3::new(7 * EDGE + 8, 0, 7 * EDGE + 8))));
    assert!(
        !queued.contains(&corner),
        "the corner was re-baked: {} of {} chunks queued",
        queued.len(),
        e.slots().len()
    );
    // Its chunks are 4 units wide: a reach of 25 units spans most of this floor.
    assert!(queued.len() < e.slots().len(), "the whole level was re-baked");
    assert_eq!(e.full(corner).unwrap().top_layer, Some(corner.1.y), "the corner's bake is from under the old top");

    let near = o + IVec3::new(3 * EDGE + 12, EDGE + 24, 12);
    let n = chunk_at(&map, near).1;
    assert!((n.x - corner.1.x).abs() > 1 && !e.full(corner).unwrap().reads.contains(&n), "beyond the static spread");
    let before = map.clone();
    let queued = edit_and_check(
        &mut e,
        &mut map,
        &mut history,
        Edit::Cubes { level: 0, op: CubeOp::SetCube { addr: CubeAddr::containing(near, 3), cube: stone() } },
    );
    assert!(bake_changes(&before, &map, corner), "the second cube does not shade {corner:?}");
    assert!(queued.contains(&corner), "{corner:?} not re-baked; queued {queued:?}");
}

#[test]
fn with_bounce_a_moved_lamp_rebakes_what_its_bounced_light_reaches() {
    let mut map = floor_map(6, 2.0);
    map.levels[0].lighting.bounces = 1;
    let id = map.levels[0].objects.lights().ids().next().unwrap();
    let mut lamp = map.levels[0].objects.lights().get(id).unwrap().clone();
    lamp.intensity = 40.0;
    map.levels[0].objects.replace(id, lamp).unwrap();
    // A wall 3 units high across the floor in chunk 4 (x 16..17 units).
    let o = origin(&map);
    let wall = LatticeBox::new(o + IVec3::new(4 * EDGE, 8, 0), o + IVec3::new(4 * EDGE + 8, EDGE, 6 * EDGE));
    map.levels[0].fill_box(wall, stone()).unwrap();
    let mut history = History::new();
    let mut e = engine(&map);
    let before = map.clone();
    // The lamp moves next to the wall: its 2-unit reach lights a patch of it, which lights the
    // floor of chunk 1, 8 units away, by bounce only.
    let to = map.levels[0].frame().world_from_lattice(o + IVec3::new(4 * EDGE - 8, 16, 3 * EDGE)).as_vec3();
    let queued = edit_and_check(
        &mut e,
        &mut map,
        &mut history,
        Edit::MoveObject { level: 0, id: ObjRef::Light(id), position: to },
    );
    let receiver = chunk_at(&map, o + IVec3::new(EDGE + 4, 0, 3 * EDGE + 4));
    assert!(bake_changes(&before, &map, receiver), "no bounced light reaches {receiver:?}");
    assert!(queued.contains(&receiver), "{receiver:?} not in {queued:?}");
}

/// The bounce reach at its edge: a wall whose face lies on a chunk border and a lamp so far
/// away that the wall's chunk is just inside the lamp's reach plus one gather distance (and
/// its margins), not one chunk less. A spread that narrows the bounce reach by a chunk misses
/// it.
#[test]
fn with_bounce_a_lamp_at_the_edge_of_the_bounce_reach_rebakes_the_wall_it_reaches() {
    let range = 3.0;
    let mut map = floor_map(2, range);
    map.levels[0].lighting.bounces = 1;
    let o = origin(&map);
    let unit = |x: f32, y: f32, z: f32| o + (Vec3::new(x, y, z) * 8.0).as_ivec3();
    // The floor runs 7 chunks (28 units) along +X, 2 chunks wide.
    map.levels[0].fill_box(LatticeBox::new(o, unit(28.0, 1.0, 8.0)), stone()).unwrap();
    // The wall x 7..8, 3 units high: its +X face lies on the border of chunks 1 and 2 and
    // belongs to chunk 1.
    map.levels[0].fill_box(LatticeBox::new(unit(7.0, 1.0, 0.0), unit(8.0, 4.0, 8.0)), stone()).unwrap();
    let id = map.levels[0].objects.lights().ids().next().unwrap();
    let mut lamp = map.levels[0].objects.lights().get(id).unwrap().clone();
    lamp.intensity = 40.0;
    lamp.position = map.levels[0].frame().world_from_lattice(unit(26.0, 1.5, 4.0)).as_vec3();
    map.levels[0].objects.replace(id, lamp).unwrap();
    let mut history = History::new();
    let mut e = engine(&map);
    let before = map.clone();
    // Two units west, half a unit above the floor: it lights the floor up to x ≈ 21.8, which the
    // wall's face at x = 8 sees 13–14 units away, within the gather distance; the wall's chunk
    // is 16 units from the lamp, more than its reach (3) plus the gather distance minus a chunk.
    let to = map.levels[0].frame().world_from_lattice(unit(24.0, 1.5, 4.0)).as_vec3();
    let queued = edit_and_check(
        &mut e,
        &mut map,
        &mut history,
        Edit::MoveObject { level: 0, id: ObjRef::Light(id), position: to },
    );
    let wall = chunk_at(&map, unit(7.5, 2.0, 4.0));
    // The wall's chunk (x ≥ 8) is 16 units from the lamp (x = 24): inside the spread, not inside
    // one narrowed by a chunk.
    let spread = f64::from(range) + bounce_reach(&map.levels[0], &settings());
    assert!(16.0 < spread && 16.0 > spread - 4.0, "the map no longer tests the edge: spread {spread}");
    assert!(bake_changes(&before, &map, wall), "no bounced light reaches the wall's chunk {wall:?}");
    assert!(queued.contains(&wall), "{wall:?} not in {queued:?}");
}

#[test]
fn a_moved_lamp_rebakes_where_it_was_and_where_it_goes() {
    let mut map = floor_map(5, 6.0);
    let mut history = History::new();
    let mut e = engine(&map);
    let id = map.levels[0].objects.lights().ids().next().unwrap();
    let before = map.clone();
    let queued = edit_and_check(
        &mut e,
        &mut map,
        &mut history,
        Edit::MoveObject { level: 0, id: ObjRef::Light(id), position: Vec3::new(18.0, 5.0, 18.0) },
    );
    let o = origin(&map);
    for (at, what) in
        [(o + IVec3::new(4, 0, 4), "where it was"), (o + IVec3::new(4 * EDGE + 4, 0, 4 * EDGE + 4), "where it goes")]
    {
        let k = chunk_at(&map, at);
        assert!(bake_changes(&before, &map, k), "{what}: no light change");
        assert!(queued.contains(&k), "{what}: {k:?} not re-baked");
    }
    // Far from both: untouched.
    assert!(!queued.contains(&chunk_at(&map, o + IVec3::new(4 * EDGE + 4, 0, 4))));
}

#[test]
fn a_material_colour_rebakes_every_chunk() {
    let mut map = floor_map(3, 6.0);
    let mut history = History::new();
    let mut e = engine(&map);
    let mut m = map.library.materials().get(MaterialId(0)).unwrap().clone();
    m.color = [10, 200, 30];
    let queued = edit_and_check(
        &mut e,
        &mut map,
        &mut history,
        Edit::ReplaceLibraryItem { id: LibRef::Material(MaterialId(0)), item: LibItem::Material(m) },
    );
    assert_eq!(queued.len(), e.slots().len());
}

/// A reloaded project (`pmfc watch`) whose library changed: the changed materials are told
/// apart, so a new material no cube uses re-bakes nothing and recolouring the floor's material
/// re-bakes the floor; an environment change still re-bakes everything.
#[test]
fn a_reload_tells_library_records_apart() {
    let mut map = floor_map(3, 6.0);
    let mut e = engine(&map);
    let unused = map.library.add(Material::new("unused", PhysicsId(0), SoundId(0))).unwrap();
    let cs = diff(e.map(), &map);
    assert!(!cs.level_list);
    assert_eq!(cs.library, [LibRef::Material(unused)].into());
    assert_eq!(e.reload(Arc::new(map.clone())), 0, "a material no cube uses re-bakes nothing");
    assert!(e.is_final());
    assert!(bytes(&e.compile(None).unwrap()) == bytes(&compile_full(&map, &settings()).unwrap()));

    let mut floor = map.library.materials().get(MaterialId(0)).unwrap().clone();
    floor.color = [10, 200, 30];
    map.library.replace(MaterialId(0), floor).unwrap();
    assert_eq!(diff(e.map(), &map).library, [LibRef::Material(MaterialId(0))].into());
    assert!(e.reload(Arc::new(map.clone())) > 0);
    e.wait();
    assert!(bytes(&e.compile(None).unwrap()) == bytes(&compile_full(&map, &settings()).unwrap()));

    let storm = pmfedit_core::map::library::WeatherEnvironment { name: "storm".into(), ..Default::default() };
    map.library.add(storm).unwrap();
    assert!(diff(e.map(), &map).level_list, "environments are not told apart");
}

#[test]
fn a_chunk_that_leaves_the_grid_is_forgotten_and_reported() {
    let mut map = floor_map(2, 4.0);
    let mut history = History::new();
    let o = origin(&map);
    // A lone cube far out along +X widens the grid.
    let far = o + IVec3::new(5 * EDGE, 0, 0);
    history
        .apply(
            &mut map,
            Edit::Cubes { level: 0, op: CubeOp::SetCube { addr: CubeAddr::containing(far, 3), cube: stone() } },
        )
        .unwrap();
    let mut e = engine(&map);
    let n = e.slots().len();
    e.take_changed();
    edit_and_check(
        &mut e,
        &mut map,
        &mut history,
        Edit::Cubes { level: 0, op: CubeOp::ClearCube { addr: CubeAddr::containing(far, 3) } },
    );
    assert!(e.slots().len() < n, "the grid shrank but the engine kept its chunks");
    let changed = e.take_changed();
    // The chunks between the floor and the cleared cube left the grid.
    let between = chunk_at(&map, far - IVec3::new(EDGE, 0, 0));
    assert!(e.slot(between).is_none());
    assert!(changed.contains(&between), "the viewer is not told to drop the chunk");
}

/// In a level whose grid is too large to list (cubes at opposite corners of the coordinate
/// space), the engine keeps a slot for the stored chunks and the center chunk only: a cube in a
/// chunk far from both gets that chunk a slot, and the engine's slots stay every chunk of
/// `all_chunks` edit after edit (which the engine also checks itself in debug builds).
#[test]
fn in_a_grid_too_large_to_list_stored_chunks_enter_and_leave_the_engine() {
    use pmfedit_bake::deps::all_chunks;
    let mut map = Map::new("scattered");
    map.levels[0] = Level::new("main", 0).unwrap();
    map.levels[0].lighting = LevelLighting::none();
    let far = IVec3::new(4095, 255, 4095) * 8;
    for at in [IVec3::ZERO, far] {
        map.levels[0].fill_box(LatticeBox::new(at, at + IVec3::ONE), stone()).unwrap();
    }
    let mut e = engine(&map);
    let mut history = History::new();
    let slots = |e: &Rebuild| e.slots().keys().copied().collect::<BTreeSet<ChunkKey>>();
    let every = |m: &Map| all_chunks(&m.levels[0]).into_iter().map(|c| (0, c)).collect::<BTreeSet<ChunkKey>>();
    assert_eq!(slots(&e), every(&map));
    let at = IVec3::new(1000, 100, 2000) * 8;
    let key = chunk_at(&map, at);
    assert!(e.slot(key).is_none());
    // A cube placed, then the chunk's whole box emptied: an edit keeps the emptied chunk
    // stored (and so in the engine).
    let whole = LatticeBox::new(at, at + IVec3::splat(8));
    for op in [
        CubeOp::SetCube { addr: CubeAddr::containing(at, 0), cube: stone() },
        CubeOp::FillBox { region: whole, cube: Cube::EMPTY },
    ] {
        let changes = history.apply(&mut map, Edit::Cubes { level: 0, op }).unwrap();
        assert!(e.edited(Arc::new(map.clone()), &changes) > 0);
        assert_eq!(slots(&e), every(&map));
        assert!(map.levels[0].chunk(key.1).is_some() && e.slot(key).is_some());
        e.wait();
    }
    // Saved and read again, an empty chunk is not stored: the reload drops it from the engine,
    // though neither the grid nor the center chunk moved.
    let exp = map.levels[0].frame().chunk_lattice_log2();
    map.levels[0].insert_chunk(key.1, pmfedit_core::map::octree::Octree::new(exp)).unwrap();
    assert!(map.levels[0].chunk(key.1).is_none());
    e.reload(Arc::new(map.clone()));
    assert_eq!(slots(&e), every(&map));
    assert!(e.slot(key).is_none(), "the chunk left but the engine kept it");
    assert!(e.take_changed().contains(&key), "the viewer is not told to drop the chunk");
}

#[test]
fn a_reload_works_out_the_change_and_equals_a_full_compile() {
    let mut map = floor_map(4, 6.0);
    let mut e = engine(&map);
    // Two independent changes made "on disk": a cube and a light colour. The cube touches no
    // face of its chunk: the chunk's visibility summary stays, so no far chunk re-bakes.
    let o = origin(&map);
    map.levels[0].set_cube(CubeAddr::containing(o + IVec3::new(3 * EDGE + 12, 8, 12), 3), stone()).unwrap();
    let id = map.levels[0].objects.lights().ids().next().unwrap();
    let mut lamp = map.levels[0].objects.lights().get(id).unwrap().clone();
    lamp.color = [255, 0, 0];
    map.levels[0].objects.replace(id, lamp).unwrap();
    let cs = diff(e.map(), &map);
    assert_eq!(cs.levels[&0].objects, [ObjRef::Light(id)].into());
    assert_eq!(cs.chunk_count(), 1);
    assert!(!cs.levels[&0].settings && cs.library.is_empty() && !cs.level_list);
    let queued = e.reload(Arc::new(map.clone()));
    assert!(queued > 0 && queued < e.slots().len(), "{queued} of {}", e.slots().len());
    e.wait();
    assert!(bytes(&e.compile(None).unwrap()) == bytes(&compile_full(&map, &settings()).unwrap()));
    // Nothing changed: nothing re-baked.
    assert_eq!(e.reload(Arc::new(map.clone())), 0);
}

#[test]
fn a_failed_bake_blocks_the_compile_until_a_retry_succeeds() {
    let map = floor_map(2, 4.0);
    let fail = Arc::new(AtomicBool::new(true));
    let f = fail.clone();
    let bake: Arc<BakeFn> = Arc::new(move |m: &Map, (l, c): ChunkKey, _: Stage, s: &CompileSettings| {
        if f.load(Ordering::SeqCst) && c.x == m.levels[l].frame().center_chunk.x + 1 {
            return Err(CompileError::Format("injected".into()));
        }
        bake_chunk(m, l, c, s)
    });
    let mut e = Rebuild::new(
        Scheduler::with_bake_fn(2, settings(), Arc::new(|| {}), bake),
        Plan::FinalOnly,
        Arc::new(map.clone()),
    );
    e.wait();
    assert!(e.is_settled() && !e.is_final());
    let failed: Vec<ChunkKey> = e.keys(ChunkState::Failed).collect();
    assert!(!failed.is_empty());
    match e.compile(None) {
        Err(RebuildError::Failed { key, error }) => {
            assert!(failed.contains(&key));
            assert!(error.contains("injected"), "{error}");
        }
        other => panic!("{other:?}"),
    }
    assert!(e.errors().iter().any(|m| m.contains("injected")));
    // The next change that dirties the failed chunks retries them.
    fail.store(false, Ordering::SeqCst);
    let mut changed = map.clone();
    let o = origin(&changed);
    changed.levels[0].set_cube(CubeAddr::containing(o + IVec3::new(EDGE + 4, 8, 4), 3), stone()).unwrap();
    e.reload(Arc::new(changed.clone()));
    e.wait();
    assert!(e.is_final(), "{:?}", e.keys(ChunkState::Failed).collect::<Vec<_>>());
    assert!(bytes(&e.compile(None).unwrap()) == bytes(&compile_full(&changed, &settings()).unwrap()));
}

#[test]
fn interactive_stages_arrive_in_order_and_carry_their_stage() {
    let mut map = floor_map(3, 6.0);
    let mut history = History::new();
    let mut e =
        Rebuild::new(Scheduler::interactive(1, settings(), Arc::new(|| {})), Plan::Interactive, Arc::new(map.clone()));
    e.wait();
    assert!(e.slots().values().all(|s| s.state == ChunkState::Done && s.shown.as_ref().unwrap().stage == Stage::Full));
    // A plain load has no drafts.
    assert!(e.slots().values().all(|s| s.times[Stage::Draft.index()].is_none()));
    e.take_changed();
    let o = origin(&map);
    let at = o + IVec3::new(EDGE + 4, 8, EDGE + 4);
    let changes = history
        .apply(
            &mut map,
            Edit::Cubes { level: 0, op: CubeOp::SetCube { addr: CubeAddr::containing(at, 3), cube: stone() } },
        )
        .unwrap();
    e.edited(Arc::new(map.clone()), &changes);
    let edited = chunk_at(&map, at);
    assert_eq!(e.state(edited), Some(ChunkState::Queued));
    // One pass counts every state as one count per state does.
    let census = e.census();
    for state in [ChunkState::Queued, ChunkState::Drafted, ChunkState::Previewed, ChunkState::Done, ChunkState::Failed]
    {
        assert_eq!(census.count(state), e.count(state), "{state:?}");
    }
    let c = census;
    assert_eq!(c.queued + c.drafted + c.previewed + c.done + c.failed, e.slots().len(), "{census:?}");
    assert!(c.queued > 0, "{census:?}");
    // The stale full bake is kept for drawing but not offered for export.
    assert!(e.shown(edited).is_some() && e.full(edited).is_none());
    e.wait();
    let slot = e.slot(edited).unwrap();
    assert_eq!(slot.state, ChunkState::Done);
    // Its draft (these settings' draft lighting differs from the exact one), then its full bake;
    // no preview, which would take as long as the full bake (see `Plan::Interactive`).
    assert!(settings().draft_differs());
    assert!(slot.times[Stage::Draft.index()].is_some() && slot.times[Stage::Full.index()].is_some());
    assert!(slot.times[Stage::Preview.index()].is_none());
    // Its neighbours got no draft.
    let neighbour = chunk_at(&map, at + IVec3::new(EDGE, 0, 0));
    assert!(e.slot(neighbour).unwrap().times[Stage::Draft.index()].is_none());
    assert!(bytes(&e.compile(None).unwrap()) == bytes(&compile_full(&map, &settings()).unwrap()));
}

/// A bake function that, for chunk `a` once the lattice cell `marker` is solid, reads chunk
/// `far` (beyond its neighbours) and folds far's content into its result (as a sight line or a
/// sky ray would), holding its full bake while `hold` is set.
fn far_reader(a: ChunkKey, far: ChunkKey, marker: IVec3, hold: Arc<AtomicBool>) -> Arc<BakeFn> {
    Arc::new(move |m: &Map, (l, c): ChunkKey, stage: Stage, s: &CompileSettings| {
        let mut b = bake_chunk(m, l, c, s)?;
        if (l, c) == a && m.levels[l].get(marker).is_ok_and(|(cube, _)| cube.is_solid()) {
            let t = std::time::Instant::now();
            while stage == Stage::Full && hold.load(Ordering::SeqCst) && t.elapsed().as_secs() < 120 {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            b.reads = vec![far.1];
            b.stats.faces += (m.levels[l].chunk(far.1).map_or(0, |ch| ch.octree().content_hash()) % 1000) as usize;
        }
        Ok(b)
    })
}

/// Every chunk's full bake in `e` equals the one a fresh engine with the same bake function makes
/// of `map` (the invariant for bakes that read far chunks).
fn assert_same_as_fresh(e: &Rebuild, map: &Map, bake: Arc<BakeFn>) {
    let mut fresh = Rebuild::new(
        Scheduler::with_bake_fn(2, settings(), Arc::new(|| {}), bake),
        Plan::FinalOnly,
        Arc::new(map.clone()),
    );
    fresh.wait();
    assert_eq!(e.slots().keys().collect::<Vec<_>>(), fresh.slots().keys().collect::<Vec<_>>());
    for k in e.slots().keys() {
        assert!(e.full(*k) == fresh.full(*k), "{k:?} differs from a fresh bake");
    }
}

fn far_edit(map: &Map) -> Edit {
    let at = origin(map) + IVec3::new(4 * EDGE + 4, 8, 4 * EDGE + 4);
    Edit::Cubes { level: 0, op: CubeOp::SetCube { addr: CubeAddr::containing(at, 3), cube: stone() } }
}

#[test]
fn a_change_to_a_chunk_a_bake_read_rebakes_the_reader() {
    let mut map = floor_map(5, 4.0);
    let o = origin(&map);
    let marker = o + IVec3::new(4, 12, 4);
    map.levels[0].set_cube(CubeAddr::containing(marker, 2), stone()).unwrap();
    let (a, far) = (chunk_at(&map, o), chunk_at(&map, o + IVec3::new(4 * EDGE, 0, 4 * EDGE)));
    let bake = far_reader(a, far, marker, Arc::new(AtomicBool::new(false)));
    let scheduler = Scheduler::with_bake_fn(2, settings(), Arc::new(|| {}), bake.clone());
    let mut e = Rebuild::new(scheduler, Plan::FinalOnly, Arc::new(map.clone()));
    e.wait();
    assert_eq!(e.full(a).unwrap().reads, [far.1]);
    // A cube in the far chunk: the static spread knows nothing of `a`, the recorded read does.
    let mut history = History::new();
    let edit = far_edit(&map);
    let changes = history.apply(&mut map, edit).unwrap();
    e.edited(Arc::new(map.clone()), &changes);
    assert_eq!(e.state(a), Some(ChunkState::Queued));
    e.wait();
    assert_same_as_fresh(&e, &map, bake);
}

#[test]
fn a_result_that_read_a_chunk_changed_while_it_baked_is_baked_again() {
    let mut map = floor_map(5, 4.0);
    let o = origin(&map);
    let marker = o + IVec3::new(4, 12, 4);
    let (a, far) = (chunk_at(&map, o), chunk_at(&map, o + IVec3::new(4 * EDGE, 0, 4 * EDGE)));
    let hold = Arc::new(AtomicBool::new(false));
    let bake = far_reader(a, far, marker, hold.clone());
    let scheduler = Scheduler::with_bake_fn(2, settings(), Arc::new(|| {}), bake.clone());
    let mut e = Rebuild::new(scheduler, Plan::FinalOnly, Arc::new(map.clone()));
    e.wait();
    assert!(e.full(a).unwrap().reads.is_empty(), "no marker yet: a reads nothing far");
    let mut history = History::new();
    // 1. The marker: `a` re-bakes from this map and will read `far`; its full bake is held.
    hold.store(true, Ordering::SeqCst);
    let marker_edit =
        Edit::Cubes { level: 0, op: CubeOp::SetCube { addr: CubeAddr::containing(marker, 2), cube: stone() } };
    let changes = history.apply(&mut map, marker_edit).unwrap();
    e.edited(Arc::new(map.clone()), &changes);
    // 2. Meanwhile the far chunk changes. Nothing recorded says `a` reads it (its old bake did
    //    not), so `a` is not asked for again; its running bake reads the far chunk as it was.
    let edit = far_edit(&map);
    let changes = history.apply(&mut map, edit).unwrap();
    e.edited(Arc::new(map.clone()), &changes);
    // 3. The held result arrives: it read a chunk changed after its request, so it is not final.
    hold.store(false, Ordering::SeqCst);
    let t = std::time::Instant::now();
    while !e.is_final() {
        e.wait();
        assert!(t.elapsed().as_secs() < 300, "never final");
    }
    assert_eq!(e.full(a).unwrap().reads, [far.1]);
    assert_same_as_fresh(&e, &map, bake);
}

/// [`floor_map`] under the default daylight: sun, sky and one bounce, with a wall 3 units high
/// across the floor in chunk 2.
fn daylit_floor_with_wall(n: i32) -> Map {
    let mut map = floor_map(n, 0.5);
    map.levels[0].lighting = LevelLighting::default();
    let o = origin(&map);
    let wall = LatticeBox::new(o + IVec3::new(2 * EDGE, 8, 0), o + IVec3::new(2 * EDGE + 8, EDGE, n * EDGE));
    map.levels[0].fill_box(wall, stone()).unwrap();
    map
}

/// A bake through a light memo: the bake, and how many of its points came from the memo before.
fn memo_bake(map: &Map, key: ChunkKey, light: &LightCache) -> (pmfedit_bake::compile::ChunkBake, usize, usize) {
    let vis = VisCache::new(settings().visibility.unwrap_or_default());
    let (bake, _) = bake_chunk_cached(map, key.0, key.1, &settings(), &vis, Some(light)).unwrap();
    let memo = light.get(key.0, key.1).unwrap();
    (bake, memo.reused(), memo.points())
}

/// A chunk baked again after an edit takes the sun, sky and bounce light of the points whose rays
/// did not pass the edited chunk from its last bake's memo, traces the others, and gives the same
/// bake as without a memo (records and reads); a memo made under another sun is not used.
#[test]
fn a_light_memo_retraces_only_points_whose_rays_passed_the_edit() {
    let mut map = daylit_floor_with_wall(4);
    let light = LightCache::new(settings().light, true);
    let o = origin(&map);
    let key = chunk_at(&map, o + IVec3::new(4, 0, 4));
    let (first, reused, points) = memo_bake(&map, key, &light);
    assert_eq!(reused, 0, "no memo yet");
    assert!(points > 100, "{points} points");
    // A memo lives on, so its lists are made to measure: no spare capacity.
    let memo = light.get(key.0, key.1).unwrap();
    assert!(memo.words() > points, "{} words for {points} points", memo.words());
    assert_eq!(memo.bytes(), memo.tight_bytes(), "spare capacity in a kept memo");
    // Nothing changed: every point comes from the memo.
    let (again, reused, _) = memo_bake(&map, key, &light);
    assert_eq!(reused, points);
    assert!(again.pmf == first.pmf && again.reads == first.reads);

    // The wall's top half taken off: rays of the floor of chunk 0 that met it, or whose bounce
    // points saw it, are traced again, the others are not.
    let o2 = o + IVec3::new(2 * EDGE, EDGE / 2, 0);
    map.levels[0].fill_box(LatticeBox::new(o2, o2 + IVec3::new(8, EDGE / 2, 4 * EDGE)), Cube::EMPTY).unwrap();
    let wall = chunk_at(&map, o + IVec3::new(2 * EDGE, 8, 4));
    assert!(first.reads.contains(&wall.1), "chunk 0's rays never reached the wall");
    let (after, reused, points) = memo_bake(&map, key, &light);
    let fresh = bake_chunk(&map, key.0, key.1, &settings()).unwrap();
    assert!(after.pmf == fresh.pmf, "a memo bake differs from a fresh one");
    assert_eq!(after.reads, fresh.reads);
    assert!(after.pmf != first.pmf, "the edit does not change chunk 0's light");
    assert!(0 < reused && reused < points, "{reused} of {points} points reused");

    // Another sun: no point of the memo holds.
    map.levels[0].lighting.sun.azimuth += 10.0;
    let (sunset, reused, _) = memo_bake(&map, key, &light);
    assert_eq!(reused, 0);
    let fresh = bake_chunk(&map, key.0, key.1, &settings()).unwrap();
    assert!(sunset.pmf == fresh.pmf && sunset.reads == fresh.reads);
}

/// An edit inside the chunk being baked again re-traces only the points whose rays (or whose
/// bounce points' rays) passed the edited block of it: the others, the floor's underside among
/// them, come from the memo, and the bake is the same as one from scratch.
#[test]
fn a_light_memo_retraces_only_points_whose_rays_passed_the_edited_block() {
    let mut map = daylit_floor_with_wall(4);
    let light = LightCache::new(settings().light, true);
    let o = origin(&map);
    let key = chunk_at(&map, o + IVec3::new(4, 0, 4));
    let (first, _, _) = memo_bake(&map, key, &light);
    // A 1-unit cube on the floor in the chunk's corner.
    let edit = Edit::Cubes {
        level: 0,
        op: CubeOp::SetCube { addr: CubeAddr::new(o + IVec3::new(0, 8, 0), 3).unwrap(), cube: stone() },
    };
    History::new().apply(&mut map, edit).unwrap();
    assert_eq!(chunk_at(&map, o + IVec3::new(0, 8, 0)), key);
    let (after, reused, points) = memo_bake(&map, key, &light);
    let fresh = bake_chunk(&map, key.0, key.1, &settings()).unwrap();
    assert!(after.pmf == fresh.pmf, "a memo bake differs from a fresh one");
    assert_eq!(after.reads, fresh.reads);
    assert!(after.pmf != first.pmf, "the cube does not change the chunk's light");
    assert!(0 < reused && reused < points, "{reused} of {points} points reused");
}

/// A draft with the light memos takes the exact light of the points an edit did not reach: with
/// nothing changed its luxels are the exact bake's; after an edit in the chunk, more of its
/// luxels are the exact ones than a plain draft's, and the memo is left as it was.
#[test]
fn a_draft_takes_the_exact_light_of_the_points_the_edit_did_not_reach() {
    let mut map = daylit_floor_with_wall(4);
    let light = LightCache::new(settings().light, true);
    let vis = VisCache::new(settings().visibility.unwrap_or_default());
    let o = origin(&map);
    let key = chunk_at(&map, o + IVec3::new(4, 0, 4));
    memo_bake(&map, key, &light);
    let draft = settings().draft();
    let luxels = |b: &pmfedit_bake::compile::ChunkBake| -> Vec<u8> {
        b.pmf.client.lightmaps.iter().flat_map(|l| l.luxels.iter().copied()).collect()
    };
    let served = |map: &Map| luxels(&bake_chunk_cached(map, key.0, key.1, &draft, &vis, Some(&light)).unwrap().0);
    let plain = |map: &Map| luxels(&bake_chunk(map, key.0, key.1, &draft).unwrap());
    let exact = |map: &Map| luxels(&bake_chunk(map, key.0, key.1, &settings()).unwrap());
    assert_eq!(served(&map), exact(&map));
    assert_ne!(plain(&map), exact(&map), "a plain draft is as exact as the bake");

    let edit = Edit::Cubes {
        level: 0,
        op: CubeOp::SetCube { addr: CubeAddr::new(o + IVec3::new(0, 8, 0), 3).unwrap(), cube: stone() },
    };
    History::new().apply(&mut map, edit).unwrap();
    let (served, plain, exact) = (served(&map), plain(&map), exact(&map));
    let same = |a: &[u8]| a.iter().zip(&exact).filter(|(x, y)| x == y).count();
    assert_eq!(served.len(), exact.len());
    assert!(same(&served) > same(&plain), "{} vs {} of {} bytes exact", same(&served), same(&plain), exact.len());
    assert_ne!(served, exact, "the edit's neighbourhood is a draft's");
    assert_eq!(light.get(key.0, key.1).unwrap().reused(), 0, "a draft keeps no memo");
}

/// A light cache keeps at most its budget of points: the memos stored longest ago go first.
#[test]
fn a_light_cache_drops_its_oldest_memos_over_the_budget() {
    let map = daylit_floor_with_wall(3);
    let o = origin(&map);
    let (a, b) = (chunk_at(&map, o + IVec3::new(4, 0, 4)), chunk_at(&map, o + IVec3::new(EDGE + 4, 0, 4)));
    let roomy = LightCache::new(settings().light, true);
    let (_, _, points_a) = memo_bake(&map, a, &roomy);
    let (_, _, points_b) = memo_bake(&map, b, &roomy);
    assert!(points_a + points_b > points_a.max(points_b));
    let light = LightCache::with_budget(settings().light, true, points_a.max(points_b));
    memo_bake(&map, a, &light);
    assert_eq!(light.points(), points_a);
    memo_bake(&map, b, &light);
    assert!(light.get(a.0, a.1).is_none(), "the older memo is kept over the budget");
    assert!(light.get(b.0, b.1).is_some_and(|m| m.points() == light.points()));
    light.set_on(false);
    assert_eq!(light.points(), 0);
}

/// With a focus (the editor's camera), a light cache keeps the memos of the chunks nearest it:
/// a nearer chunk's memo drops the farthest one (not the oldest), and once the budget is full a
/// chunk farther than every kept memo bakes without recording one, to the same bake.
#[test]
fn a_focused_light_cache_keeps_the_memos_nearest_its_focus() {
    let map = daylit_floor_with_wall(3);
    let o = origin(&map);
    let [a, b, c] = [0, 1, 2].map(|k| chunk_at(&map, o + IVec3::new(k * EDGE + 4, 0, 4)));
    let roomy = LightCache::new(settings().light, true);
    let [pa, pb, pc] = [a, b, c].map(|k| memo_bake(&map, k, &roomy).2);
    // Room for a's memo and the larger of b's and c's, not for all three.
    let light = LightCache::with_budget(settings().light, true, pa + pb.max(pc));
    let vis = VisCache::new(settings().visibility.unwrap_or_default());
    let bake = |k: ChunkKey| bake_chunk_cached(&map, k.0, k.1, &settings(), &vis, Some(&light)).unwrap().0;
    let kept = |k: ChunkKey| light.get(k.0, k.1).is_some();
    let centre = |k: ChunkKey| map.levels[0].frame().chunk_center_world(k.1);

    // Without a focus every memo is recorded: a, then c, both kept.
    bake(a);
    bake(c);
    assert!(kept(a) && kept(c));
    // The camera comes to a: b is nearer than c, so b's memo is kept and c's (the farthest, not
    // a's, the oldest) dropped.
    light.set_focus(0, centre(a));
    assert!(light.keeps(b.0, b.1, centre(b)));
    bake(b);
    assert!(kept(a) && kept(b) && !kept(c), "{pa} {pb} {pc}");
    // Full, and c lies farther than every kept memo: its bake records none and is the same bake.
    assert!(!light.keeps(c.0, c.1, centre(c)), "{pa} {pb} {pc}");
    let unrecorded = bake(c);
    assert!(kept(a) && kept(b) && !kept(c));
    let plain = bake_chunk(&map, c.0, c.1, &settings()).unwrap();
    assert!(unrecorded.pmf == plain.pmf && unrecorded.reads == plain.reads);
    // A chunk that has a memo always records its next one.
    assert!(light.keeps(b.0, b.1, centre(b)));
}

/// The draft stage bakes the chunks that draw an edit: the changed chunk, and a stored face
/// neighbour only when the changed cubes touch their shared face.
#[test]
fn drafts_go_to_the_changed_chunk_and_the_stored_neighbours_whose_face_it_touches() {
    let mut map = floor_map(3, 4.0);
    let o = origin(&map);
    let drafted = |map: &mut Map, at: IVec3| {
        let edit =
            Edit::Cubes { level: 0, op: CubeOp::SetCube { addr: CubeAddr::containing(at, 3), cube: Cube::EMPTY } };
        let changes = History::new().apply(map, edit).unwrap();
        draft_chunks(map, &changes)
    };
    let middle = o + IVec3::new(EDGE + 8, 0, EDGE + 8);
    assert_eq!(drafted(&mut map, middle), BTreeSet::from([chunk_at(&map, middle)]));
    // On the floor's -X face of chunk (1, 0, 1): that chunk and the floor chunk west of it; not
    // the empty chunk below.
    let border = o + IVec3::new(EDGE, 0, EDGE + 8);
    let west = chunk_at(&map, border - IVec3::new(1, 0, 0));
    assert_eq!(drafted(&mut map, border), BTreeSet::from([chunk_at(&map, border), west]));
}

/// A wall over chunk `a`'s +X face, as high as the chunk layer, in [`floor_map`]: it changes
/// `a`'s summary, and the far sets of the chunks on its -X side (the chunks beyond it along X
/// are out of their sight). Returns `a` and its -X neighbour `b`.
fn wall_over_a_face(map: &Map) -> (Edit, ChunkKey, ChunkKey) {
    let o = origin(map);
    let wall = LatticeBox::new(o + IVec3::new(2 * EDGE - 8, 0, 0), o + IVec3::new(2 * EDGE, EDGE, EDGE));
    let a = chunk_at(map, o + IVec3::new(EDGE + 4, 0, 4));
    let b = chunk_at(map, o + IVec3::new(4, 0, 4));
    (Edit::Cubes { level: 0, op: CubeOp::FillBox { region: wall, cube: stone() } }, a, b)
}

/// A chunk baked again with the same `VisCache` after its neighbour's edit takes its own
/// visibility lists from its last bake (its cubes are the same `Arc`), writes its far lists from
/// the new summaries (which the edit changed) and equals a bake from scratch; the edited chunk
/// works its own lists out again; so does every chunk once the opaque materials change (a
/// chunk's own lists depend on them, its cubes unchanged).
#[test]
fn a_rebake_takes_the_own_lists_of_an_unchanged_chunk_and_writes_its_far_lists_anew() {
    let mut map = floor_map(4, 0.5);
    let (edit, a, b) = wall_over_a_face(&map);
    let vis = VisCache::new(settings().visibility.unwrap_or_default());
    let cached = |map: &Map, key: ChunkKey| bake_chunk_cached(map, key.0, key.1, &settings(), &vis, None).unwrap().0;
    let fresh = |map: &Map, key: ChunkKey| bake_chunk(map, key.0, key.1, &settings()).unwrap();
    let b0 = cached(&map, b);
    cached(&map, a);
    assert_eq!((vis.work().own_made, vis.work().own_reused), (2, 0));
    // Baked again unchanged: the kept lists, the same bake.
    assert!(cached(&map, b) == b0);
    assert_eq!((vis.work().own_made, vis.work().own_reused), (2, 1));

    let before = map.clone();
    History::new().apply(&mut map, edit).unwrap();
    assert!(Arc::ptr_eq(map.levels[0].chunk(b.1).unwrap(), before.levels[0].chunk(b.1).unwrap()));
    let b1 = cached(&map, b);
    assert_eq!((vis.work().own_made, vis.work().own_reused), (2, 2), "b's own lists were worked out again");
    assert!(b1 == fresh(&map, b), "b's lists differ from a bake from scratch");
    assert!(b1.pmf != b0.pmf, "the wall does not change b's far lists: the test exercises nothing");
    let a1 = cached(&map, a);
    assert_eq!((vis.work().own_made, vis.work().own_reused), (3, 2), "the edited chunk's own lists were reused");
    assert!(a1 == fresh(&map, a));
}

/// A chunk's own lists depend on the opaque materials too: once its stone turns transparent, a
/// re-bake of the chunk (its cubes the same `Arc`) works them out again, and a sealed pocket's
/// cells see the rest of the chunk.
#[test]
fn kept_own_lists_follow_the_opaque_materials() {
    let mut map = floor_map(2, 0.5);
    let o = origin(&map);
    // Chunk c filled with stone above the floor, but for a sealed pocket of 2 units.
    map.levels[0].fill_box(LatticeBox::new(o + IVec3::new(0, 8, 0), o + IVec3::splat(EDGE)), stone()).unwrap();
    map.levels[0].fill_box(LatticeBox::new(o + IVec3::splat(8), o + IVec3::splat(24)), Cube::EMPTY).unwrap();
    let c = chunk_at(&map, o + IVec3::splat(4));
    let vis = VisCache::new(settings().visibility.unwrap_or_default());
    let cached = |map: &Map| bake_chunk_cached(map, c.0, c.1, &settings(), &vis, None).unwrap().0;
    let c0 = cached(&map);
    assert!(cached(&map) == c0);
    assert_eq!((vis.work().own_made, vis.work().own_reused), (1, 1));
    let before = map.clone();
    map.library.modify(MaterialId(0), |m| m.transparent = true).unwrap();
    assert!(Arc::ptr_eq(map.levels[0].chunk(c.1).unwrap(), before.levels[0].chunk(c.1).unwrap()));
    let c1 = cached(&map);
    assert_eq!(vis.work().own_made, 2, "own lists kept across a change of the opaque materials");
    assert!(c1 == bake_chunk(&map, c.0, c.1, &settings()).unwrap());
    assert!(c1.vis != c0.vis, "transparent stone does not change the own lists: the test exercises nothing");
}

/// The engine re-bakes the -X neighbour of an edited chunk (for its light) and takes that
/// neighbour's own lists from its last full bake; every re-baked chunk equals a bake from
/// scratch (the neighbour's far lists changed with the edited chunk's summary), and the file
/// equals a full compile, also after the undo.
#[test]
fn the_engine_rebakes_a_neighbour_with_its_kept_own_lists_and_new_far_lists() {
    let mut map = floor_map(4, 0.5);
    let (edit, a, b) = wall_over_a_face(&map);
    let mut history = History::new();
    let mut e = engine(&map);
    let before = map.clone();
    let work = e.vis_cache().work();
    let queued = edit_and_check(&mut e, &mut map, &mut history, edit);
    let work = e.vis_cache().work() - work;
    assert!(queued.contains(&a) && queued.contains(&b), "queued {queued:?}");
    assert!(bake_changes(&before, &map, b), "the wall does not change b's lists");
    // Every re-baked chunk but the edited one kept its cubes, hence its own lists.
    assert_eq!(work.own_made, 1, "{work:?}");
    assert_eq!(work.own_reused, queued.len() as u64 - 1, "{work:?}");
    for &k in &queued {
        let fresh = bake_chunk(&map, k.0, k.1, &settings()).unwrap();
        assert!(**e.full(k).unwrap() == fresh, "{k:?} differs from a bake from scratch");
    }
    // Their pathfinding records too: none stands on the edited chunk.
    assert_eq!(work.paths_made, 1, "{work:?}");
    assert_eq!(work.paths_reused, queued.len() as u64 - 1, "{work:?}");
    let changes = history.undo(&mut map).unwrap();
    e.edited(Arc::new(map.clone()), &changes);
    e.wait();
    assert!(bytes(&e.compile(None).unwrap()) == bytes(&compile_full(&map, &settings()).unwrap()));
    assert!(**e.full(b).unwrap() == bake_chunk(&map, b.0, b.1, &settings()).unwrap());
}

/// A chunk's pathfinding data reads the top of the chunk below (the floor of its bottom cells):
/// a re-bake after the floor below changed works the records out again although the chunk's own
/// cubes are the same `Arc`, and so does one after a physics material stopped being solid.
#[test]
fn kept_pathfinding_records_follow_the_floor_in_the_chunk_below() {
    let mut map = Map::new("paths");
    map.levels[0] = Level::new("main", 2).unwrap();
    map.levels[0].lighting = LevelLighting::none();
    let o = origin(&map);
    // A floor at the top of the lower chunk layer, and a post in the upper layer so that its
    // chunk is stored.
    map.levels[0]
        .fill_box(LatticeBox::new(o + IVec3::new(0, EDGE - 8, 0), o + IVec3::new(EDGE, EDGE, EDGE)), stone())
        .unwrap();
    map.levels[0]
        .fill_box(LatticeBox::new(o + IVec3::new(0, EDGE, 0), o + IVec3::new(8, 2 * EDGE, 8)), stone())
        .unwrap();
    let above = chunk_at(&map, o + IVec3::new(4, EDGE + 4, 4));
    let vis = VisCache::new(settings().visibility.unwrap_or_default());
    let cached = |map: &Map| bake_chunk_cached(map, above.0, above.1, &settings(), &vis, None).unwrap().0;
    let fresh = |map: &Map| bake_chunk(map, above.0, above.1, &settings()).unwrap();
    let walkable = |b: &pmfedit_bake::compile::ChunkBake| {
        b.pmf.server.cubes.iter().filter(|c| c.pathfinding.as_ref().is_some_and(|p| !p.is_empty())).count()
    };
    let b0 = cached(&map);
    assert!(walkable(&b0) > 0, "no cell stands on the floor");
    assert!(cached(&map) == b0);
    assert_eq!((vis.work().paths_made, vis.work().paths_reused), (1, 1));
    // Half the floor goes: the cells over that half no longer stand on anything.
    let before = map.clone();
    map.levels[0]
        .fill_box(LatticeBox::new(o + IVec3::new(0, EDGE - 8, 0), o + IVec3::new(EDGE / 2, EDGE, EDGE)), Cube::EMPTY)
        .unwrap();
    assert!(Arc::ptr_eq(map.levels[0].chunk(above.1).unwrap(), before.levels[0].chunk(above.1).unwrap()));
    let b1 = cached(&map);
    assert_eq!(vis.work().paths_made, 2, "records kept over a changed chunk below");
    assert!(b1 == fresh(&map));
    assert!(walkable(&b1) < walkable(&b0));
    // The floor's physics material is no longer solid: nothing stands on it.
    map.library.modify(PhysicsId(0), |p| p.not_solid = true).unwrap();
    let b2 = cached(&map);
    assert_eq!(vis.work().paths_made, 3, "records kept over a changed physics material");
    assert!(b2 == fresh(&map));
    assert_eq!(walkable(&b2), 0);
}

/// An engine opened from the bake cache keeps the loaded bakes' own lists and pathfinding
/// records for their chunks' next bakes: after an edit, only the edited chunk works them out,
/// and every re-baked chunk equals a bake from scratch.
#[test]
fn bakes_loaded_from_the_cache_serve_their_own_lists_and_paths_to_the_next_bake() {
    let mut map = floor_map(4, 0.5);
    let (edit, a, b) = wall_over_a_face(&map);
    let project = tempfile::tempdir().unwrap();
    {
        let e = engine(&map);
        let bakes = e.slots().keys().filter_map(|&k| e.full(k)).map(|b| &**b);
        pmfedit_bake::cache::store(project.path(), &map, &settings(), bakes).unwrap();
    }
    let loaded = pmfedit_bake::cache::load(project.path(), &map, &settings());
    assert_eq!(loaded.bakes.len(), 16);
    let scheduler = Scheduler::new(2, settings(), Arc::new(|| {}));
    let mut e = Rebuild::with_bakes(scheduler, Plan::FinalOnly, Arc::new(map.clone()), loaded.bakes);
    assert!(e.is_final());
    let queued = edit_and_check(&mut e, &mut map, &mut History::new(), edit);
    assert!(queued.contains(&a) && queued.contains(&b));
    let work = e.vis_cache().work();
    assert_eq!((work.own_made, work.paths_made), (1, 1), "{work:?}");
    assert_eq!(work.own_reused, queued.len() as u64 - 1, "{work:?}");
    assert_eq!(work.paths_reused, queued.len() as u64 - 1, "{work:?}");
    for &k in &queued {
        assert!(**e.full(k).unwrap() == bake_chunk(&map, k.0, k.1, &settings()).unwrap(), "{k:?}");
    }
}

/// With its frames kept, an engine's export after an edit encodes only the chunks re-baked since
/// the last export, and writes a full compile's bytes; a grid that grew encodes every chunk (its
/// chunk references change).
#[test]
fn a_kept_export_encodes_only_the_rebaked_chunks_and_writes_a_full_compiles_bytes() {
    let mut map = floor_map(5, 4.0);
    let mut history = History::new();
    let mut e = engine(&map);
    e.keep_export_frames(true);
    let export = |e: &Rebuild| {
        let a = e.assemble(None).unwrap();
        let bytes = a.write(2).unwrap();
        (bytes, a.encoded())
    };
    let all = e.slots().len();
    let (first, n) = export(&e);
    assert_eq!(n, all, "the first export encodes every chunk");
    assert!(first == bytes(&compile_full(&map, &settings()).unwrap()));
    assert_eq!(e.export_frames().unwrap().len(), all);
    let (again, n) = export(&e);
    assert_eq!(n, 0, "nothing changed, nothing is encoded");
    assert!(again == first);

    let before: Vec<(ChunkKey, Arc<pmfedit_bake::compile::ChunkBake>)> =
        e.slots().iter().map(|(k, s)| (*k, s.full.clone().unwrap())).collect();
    let at = origin(&map) + IVec3::new(3 * EDGE + 4, 8, 3 * EDGE + 4);
    let set =
        |at: IVec3| Edit::Cubes { level: 0, op: CubeOp::SetCube { addr: CubeAddr::containing(at, 3), cube: stone() } };
    edit_and_check(&mut e, &mut map, &mut history, set(at));
    let rebaked = before.iter().filter(|(k, b)| !Arc::ptr_eq(b, e.full(*k).unwrap())).count();
    assert!(rebaked > 0 && rebaked < all, "{rebaked} of {all}");
    let (after, n) = export(&e);
    assert_eq!(n, rebaked, "only the re-baked chunks are encoded");
    assert!(after == bytes(&compile_full(&map, &settings()).unwrap()), "kept frames != full");

    // A cube beyond the grid: every chunk's references move.
    let beyond = origin(&map) + IVec3::new(7 * EDGE, 8, 0);
    edit_and_check(&mut e, &mut map, &mut history, set(beyond));
    let grown = e.slots().len();
    assert!(grown > all);
    let (after, n) = export(&e);
    assert_eq!(n, grown, "a grown grid encodes every chunk");
    assert!(after == bytes(&compile_full(&map, &settings()).unwrap()));
}

/// An engine without a view (`pmfc watch`): after an edit, the centre of the chunks that draw it
/// becomes the focus, and the light memos of the lit chunks within [`WARM_RADIUS`] of it are
/// warmed up (bakes from the cache carry none); the chunks beyond have one only where the edit
/// re-baked them.
#[test]
fn after_an_edit_the_memos_around_it_are_warmed_up() {
    let mut map = pmfedit_core::sample::demo();
    let mut e = Rebuild::new(Scheduler::new(2, settings(), Arc::new(|| {})), Plan::FinalOnly, Arc::new(map.clone()));
    e.wait();
    assert_eq!(e.focus_on_last_edit(), None, "no edit yet");
    let light = e.light_cache().clone();
    // As after an open from the bake cache.
    light.clear();
    let frame = map.levels[0].frame();
    let (lo, _) = map.levels[0].occupied_bounds().unwrap();
    // A stone cube high in a corner chunk.
    let at = frame.chunk_min_lattice(lo) + IVec3::new(4, (1 << frame.chunk_lattice_log2()) - 4, 4);
    let edit = Edit::Cubes { level: 0, op: CubeOp::SetCube { addr: CubeAddr::containing(at, 2), cube: stone() } };
    let changes = History::new().apply(&mut map, edit).unwrap();
    e.edited(Arc::new(map.clone()), &changes);
    let rebaked: BTreeSet<ChunkKey> = e.keys(ChunkState::Queued).collect();
    e.wait();
    assert!(e.urgent().contains(&(0, lo)), "{:?}", e.urgent());
    let (level, centre) = e.focus_on_last_edit().unwrap();
    assert_eq!(light.focus(), Some((level, centre)));
    let mid = frame.chunk_from_world(centre);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !matches!(e.warm_ups(), (_, 0, false)) {
        assert!(std::time::Instant::now() < deadline, "warm-ups never finished");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let from = |c: ChunkCoord| (c.x - mid.x).abs().max((c.y - mid.y).abs()).max((c.z - mid.z).abs());
    let lit: Vec<ChunkKey> = e
        .slots()
        .iter()
        .filter(|(_, s)| s.full.as_ref().is_some_and(|b| !b.pmf.client.vertices.is_empty()))
        .map(|(k, _)| *k)
        .collect();
    assert!(lit.iter().any(|k| from(k.1) > WARM_RADIUS && !rebaked.contains(k)), "nothing lit beyond the radius");
    for &(l, c) in &lit {
        let expected = from(c) <= WARM_RADIUS || rebaked.contains(&(l, c));
        assert_eq!(light.get(l, c).is_some(), expected, "chunk {c:?}, {} from the edit", from(c));
    }
    let (warmed, _, _) = e.warm_ups();
    assert!(warmed > 0, "the edit re-baked every lit chunk around it");
    assert_eq!(warmed, lit.iter().filter(|k| from(k.1) <= WARM_RADIUS && !rebaked.contains(k)).count());
}
