//! The central invariant (docs/spec/PMF-NOTES.md X1): a full bake on one thread, a full bake on several
//! threads, and an incremental bake after any sequence of edits all compile to the same bytes.

use std::sync::Arc;

use glam::{IVec3, Vec3};
use proptest::prelude::*;

use pmfedit_bake::compile::{CompileSettings, compile_full, level_chunks};
use pmfedit_bake::incremental::IncrementalBuild;
use pmfedit_bake::scheduler::Scheduler;
use pmfedit_core::edit::{CubeOp, Edit, History, ObjItem, ObjRef};
use pmfedit_core::format::pmf;
use pmfedit_core::map::coords::{CubeAddr, Face, LatticeBox};
use pmfedit_core::map::ids::{MaterialId, PhysicsId, SoundId};
use pmfedit_core::map::library::{Light, LightId, LightMode, Material};
use pmfedit_core::map::octree::Cube;
use pmfedit_core::map::{Level, Map};

/// Chunk edge: 4 map units = 32 lattice units.
const EDGE: i32 = 32;

fn settings() -> CompileSettings {
    CompileSettings { timestamp: 1_700_000_000, ..CompileSettings::default() }
}

/// The lattice minimum of the 3×1×3 chunk work area around the center chunk.
fn area_min(map: &Map) -> IVec3 {
    let frame = map.levels[0].frame();
    frame.chunk_min_lattice(frame.center_chunk) - IVec3::new(EDGE, 0, EDGE)
}

/// A small map: 4-unit chunks, a floor over 3×3 chunks, a glass material, two lights.
fn start_map() -> Map {
    let mut map = Map::new("invariant");
    map.levels[0] = Level::new("main", 2).unwrap();
    let mut glass = Material::new("glass", PhysicsId(0), SoundId(0));
    glass.transparent = true;
    map.library.add(glass).unwrap();
    let min = area_min(&map);
    let stone = Cube::solid(MaterialId(0), PhysicsId(0), SoundId(0));
    map.levels[0].fill_box(LatticeBox::new(min, min + IVec3::new(3 * EDGE, 8, 3 * EDGE)), stone).unwrap();
    let mut lamp = Light::point("lamp", Vec3::new(0.0, 1.0, 0.0));
    lamp.range = 5.0;
    map.levels[0].objects.add(lamp).unwrap();
    let mut flicker = Light::point("flicker", Vec3::new(3.0, 1.5, -2.0));
    flicker.range = 4.0;
    flicker.mode = LightMode::Dynamic { global_id: 1, enabled: true, preserve: false };
    map.levels[0].objects.add(flicker).unwrap();
    map
}

fn bytes(file: &pmf::File) -> Vec<u8> {
    pmf::write(file).unwrap_or_else(|e| panic!("{e}"))
}

#[derive(Debug, Clone)]
enum Op {
    Fill { at: IVec3, size: IVec3, material: u16 },
    Clear { at: IVec3, size: IVec3 },
    Set { at: IVec3, log2: u8, material: u16 },
    Paint { at: IVec3, log2: u8, face: usize, material: u16 },
    Push { at: IVec3, corner: usize },
    MoveLight { which: u32, to: Vec3 },
    AddLight { to: Vec3 },
    Undo,
}

fn op() -> impl Strategy<Value = Op> {
    let pos = (0..3 * EDGE, 0..EDGE, 0..3 * EDGE).prop_map(|(x, y, z)| IVec3::new(x, y, z));
    let size = (1..24, 1..16, 1..24).prop_map(|(x, y, z)| IVec3::new(x, y, z));
    let world = (-5.5f32..5.5, 0.2f32..3.5, -5.5f32..5.5).prop_map(|(x, y, z)| Vec3::new(x, y, z));
    prop_oneof![
        3 => (pos.clone(), size.clone(), 0u16..2).prop_map(|(at, size, material)| Op::Fill { at, size, material }),
        2 => (pos.clone(), size).prop_map(|(at, size)| Op::Clear { at, size }),
        2 => (pos.clone(), 1u8..5, 0u16..2).prop_map(|(at, log2, material)| Op::Set { at, log2, material }),
        1 => (pos.clone(), 1u8..5, 0usize..6, 0u16..2)
            .prop_map(|(at, log2, face, material)| Op::Paint { at, log2, face, material }),
        1 => (pos, 0usize..8).prop_map(|(at, corner)| Op::Push { at, corner }),
        2 => (0u32..2, world.clone()).prop_map(|(which, to)| Op::MoveLight { which, to }),
        1 => world.prop_map(|to| Op::AddLight { to }),
        1 => Just(Op::Undo),
    ]
}

fn edit_for(map: &Map, op: &Op) -> Option<Edit> {
    let min = area_min(map);
    let cube = |m: u16| Cube::solid(MaterialId(m), PhysicsId(0), SoundId(0));
    let addr = |at: IVec3, log2: u8| CubeAddr::containing(min + at, log2);
    Some(match *op {
        Op::Fill { at, size, material } => Edit::Cubes {
            level: 0,
            op: CubeOp::FillBox { region: LatticeBox::new(min + at, min + at + size), cube: cube(material) },
        },
        Op::Clear { at, size } => {
            Edit::Cubes { level: 0, op: CubeOp::ClearBox { region: LatticeBox::new(min + at, min + at + size) } }
        }
        Op::Set { at, log2, material } => {
            Edit::Cubes { level: 0, op: CubeOp::SetCube { addr: addr(at, log2), cube: cube(material) } }
        }
        Op::Paint { at, log2, face, material } => Edit::Cubes {
            level: 0,
            op: CubeOp::PaintFace {
                addr: addr(at, log2),
                face: Face::from_index(face)?,
                material: MaterialId(material),
            },
        },
        Op::Push { at, corner } => {
            Edit::Cubes { level: 0, op: CubeOp::PushCorner { addr: addr(at, 3), corner, delta: IVec3::new(-3, -5, 2) } }
        }
        Op::MoveLight { which, to } => {
            let id = map.levels[0].objects.lights().ids().nth(which as usize)?;
            Edit::MoveObject { level: 0, id: ObjRef::Light(id), position: to }
        }
        Op::AddLight { to } => {
            let mut l = Light::point("extra", to);
            l.range = 4.0;
            Edit::AddObject { level: 0, item: ObjItem::Light(l) }
        }
        Op::Undo => return None,
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn incremental_equals_full_after_any_edit_sequence(ops in prop::collection::vec(op(), 1..7)) {
        let mut map = start_map();
        let mut history = History::new();
        let mut inc = IncrementalBuild::new(settings());
        let first = inc.compile(&map).unwrap();
        prop_assert!(bytes(&first) == bytes(&compile_full(&map, &settings()).unwrap()));
        for op in &ops {
            let before = map.snapshot();
            let changes = match edit_for(&map, op) {
                Some(edit) => match history.apply(&mut map, edit) {
                    Ok(c) => c,
                    Err(_) => continue, // refused edits change nothing
                },
                None => match history.undo(&mut map) {
                    Some(c) => c,
                    None => continue,
                },
            };
            let dirty = inc.invalidate(&before, &map, &changes);
            inc.rebake(&map, dirty).unwrap();
            let incremental = bytes(&inc.compile(&map).unwrap());
            let full = bytes(&compile_full(&map, &settings()).unwrap());
            prop_assert!(incremental == full, "incremental != full after {:?}", op);
        }
    }
}

#[test]
fn one_thread_equals_many_threads() {
    let map = Arc::new(start_map());
    let keys: Vec<_> = level_chunks(&map.levels[0]).into_iter().map(|c| (0, c)).collect();
    let one = bytes(&compile_full(&map, &settings()).unwrap());
    for threads in [1, 3] {
        let scheduler = Scheduler::new(threads, settings(), Arc::new(|| {}));
        let mut inc = IncrementalBuild::new(settings());
        inc.rebake_parallel(&scheduler, map.clone(), keys.clone()).unwrap();
        assert!(inc.missing(&map).is_empty());
        assert!(bytes(&inc.compile(&map).unwrap()) == one, "{threads} threads");
    }
}

/// The editor's two-stage bakes: the full results compile to the same bytes as a full compile;
/// the previews (no visibility, no pathfinding) are never what gets compiled.
#[test]
fn two_stage_bakes_compile_the_same_from_their_full_results() {
    use pmfedit_bake::scheduler::{BakeEvent, Stage};
    let map = Arc::new(start_map());
    let keys: Vec<_> = level_chunks(&map.levels[0]).into_iter().map(|c| (0, c)).collect();
    let one = bytes(&compile_full(&map, &settings()).unwrap());
    let scheduler = Scheduler::new(2, settings(), Arc::new(|| {}));
    scheduler.submit(map.clone(), keys.clone());
    scheduler.wait_idle();
    let mut inc = IncrementalBuild::new(settings());
    let mut previews = IncrementalBuild::new(settings());
    for event in scheduler.drain() {
        match event {
            BakeEvent::Baked { bake, stage: Stage::Full, .. } => inc.insert(*bake),
            BakeEvent::Baked { bake, stage: Stage::Preview, .. } => previews.insert(*bake),
            other => panic!("{other:?}"),
        }
    }
    assert!(inc.missing(&map).is_empty() && previews.missing(&map).is_empty());
    assert!(bytes(&inc.compile(&map).unwrap()) == one);
    assert!(bytes(&previews.compile(&map).unwrap()) != one, "previews carry visibility/pathfinding?");
}

#[test]
fn light_ids_of_the_start_map_are_stable() {
    // The strategy addresses lights by position in id order.
    let map = start_map();
    let ids: Vec<LightId> = map.levels[0].objects.lights().ids().collect();
    assert_eq!(ids.len(), 2);
}
