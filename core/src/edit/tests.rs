use std::sync::Arc;

use glam::{IVec3, Vec3};
use proptest::prelude::*;

use super::*;
use crate::map::coords::{ChunkCoord, CubeAddr, Face, LatticeBox};
use crate::map::ids::{MaterialId, PhysicsId, SoundId};
use crate::map::level::LevelFlags;
use crate::map::library::{
    EnvKind, EnvRef, Environment, EnvironmentRegion, Light, LightId, Material, PhysicsMaterial, SoundEnvId,
    SoundEnvironment,
};
use crate::map::octree::Cube;
use crate::map::{Level, Map, MapError, MapMeta};

fn stone(m: u16) -> Cube {
    Cube::solid(MaterialId(m), PhysicsId(0), SoundId(0))
}

fn lbox(min: [i32; 3], max: [i32; 3]) -> LatticeBox {
    LatticeBox::new(IVec3::from_array(min), IVec3::from_array(max))
}

fn cubes(level: usize, op: CubeOp) -> Edit {
    Edit::Cubes { level, op }
}

/// A map whose level 0 has chunks of 1 unit (8 lattice cells), with materials "default" (0),
/// "stone" (1) and "iron" (2), and a floor across 2 × 1 × 2 chunks.
fn small_map() -> Map {
    let mut map = Map::new("edits");
    map.levels[0] = Level::new("main", 0).unwrap();
    map.library.add(Material::new("stone", PhysicsId(0), SoundId(0))).unwrap();
    map.library.add(Material::new("iron", PhysicsId(0), SoundId(0))).unwrap();
    map.levels[0].fill_box(lbox([0, 0, 0], [16, 2, 16]), stone(1)).unwrap();
    map
}

/// Every chunk whose content differs between `before` and `after` (level 0) is reported, and
/// every light that differs.
fn assert_reported(before: &Map, after: &Map, changes: &ChangeSet) {
    if changes.level_list {
        return;
    }
    for (i, (a, b)) in before.levels.iter().zip(&after.levels).enumerate() {
        let reported = changes.levels.get(&i);
        let coords: std::collections::BTreeSet<ChunkCoord> =
            a.chunks().map(|(c, _)| *c).chain(b.chunks().map(|(c, _)| *c)).collect();
        for c in coords {
            let empty = |l: &Level| l.chunk(c).is_none_or(|ch| ch.octree().is_empty());
            let same = match (a.chunk(c), b.chunk(c)) {
                (Some(x), Some(y)) => x.octree() == y.octree(),
                _ => empty(a) && empty(b),
            };
            if !same {
                assert!(reported.is_some_and(|r| r.chunks.get(c).is_some()), "chunk {c:?} of level {i} not reported");
            }
        }
        for (id, l) in a.objects.lights().iter() {
            if b.objects.lights().get(id) != Some(l) {
                assert!(reported.is_some_and(|r| r.objects.contains(&ObjRef::Light(id))), "light {id} not reported");
            }
        }
        for (id, _) in b.objects.lights().iter() {
            if a.objects.lights().get(id).is_none() {
                assert!(reported.is_some_and(|r| r.objects.contains(&ObjRef::Light(id))), "light {id} not reported");
            }
        }
    }
}

#[test]
fn a_fifty_op_stroke_is_one_step() {
    let mut map = small_map();
    let start = map.clone();
    let mut h = History::new();
    h.apply(&mut map, cubes(0, CubeOp::FillBox { region: lbox([0, 2, 0], [4, 4, 4]), cube: stone(2) })).unwrap();
    let after_first = map.clone();

    let stroke = h.begin_stroke();
    assert_eq!(h.current_stroke(), Some(stroke));
    let mut applied = 0;
    for i in 0..50 {
        // Distinct cells above the floor: set a cube, then paint it, then push one of its
        // corners, so that every op changes something.
        let k = i / 3;
        let p = IVec3::new(k % 16, 4 + k / 16, (k * 7) % 16);
        let addr = CubeAddr::containing(p, 0);
        let op = match i % 3 {
            0 => CubeOp::SetCube { addr, cube: stone(2) },
            1 => CubeOp::PaintFace { addr, face: Face::PosY, material: MaterialId(1) },
            _ => CubeOp::PushCorner { addr, corner: 0, delta: IVec3::new(0, -3, 0) },
        };
        let before = map.clone();
        let changes = h.apply(&mut map, cubes(0, op)).unwrap();
        assert_reported(&before, &map, &changes);
        assert!(!changes.is_empty());
        applied += 1;
    }
    h.end_stroke();
    let end = map.clone();
    assert_eq!(applied, 50);
    assert_eq!(h.len(), 2);
    assert_eq!(h.entry(1).unwrap().step_count(), applied);
    assert_eq!(h.undo_name(), Some("Set cube"));

    let undone = h.undo(&mut map).unwrap();
    assert!(map.content_eq(&after_first));
    assert_reported(&end, &map, &undone);
    let redone = h.redo(&mut map).unwrap();
    assert!(map.content_eq(&end));
    assert_reported(&after_first, &map, &redone);
    assert_eq!(
        undone.levels[&0].chunks.chunks().collect::<Vec<_>>(),
        redone.levels[&0].chunks.chunks().collect::<Vec<_>>()
    );

    h.go_to(&mut map, 0);
    assert!(map.content_eq(&start));
    h.go_to(&mut map, 2);
    assert!(map.content_eq(&end));
    // A new stroke is a new step.
    h.begin_stroke();
    h.apply(&mut map, cubes(0, CubeOp::ClearBox { region: lbox([0, 0, 0], [2, 2, 2]) })).unwrap();
    h.apply(&mut map, cubes(0, CubeOp::ClearBox { region: lbox([4, 0, 0], [6, 2, 2]) })).unwrap();
    h.end_stroke();
    assert_eq!(h.len(), 3);
    assert_eq!(h.entry(2).unwrap().step_count(), 2);
}

/// A named stroke's step is named for what the user did, not after its first edit; the name
/// ends with the stroke.
#[test]
fn a_named_stroke_is_one_step_with_its_name() {
    let mut map = small_map();
    let mut h = History::new();
    h.begin_named_stroke("Paste 2 cubes");
    h.apply(&mut map, cubes(0, CubeOp::ClearBox { region: lbox([0, 0, 0], [2, 2, 2]) })).unwrap();
    h.apply(&mut map, cubes(0, CubeOp::FillBox { region: lbox([0, 4, 0], [1, 5, 1]), cube: stone(2) })).unwrap();
    h.end_stroke();
    assert_eq!((h.len(), h.undo_name()), (1, Some("Paste 2 cubes")));
    h.apply(&mut map, cubes(0, CubeOp::FillBox { region: lbox([4, 4, 4], [5, 5, 5]), cube: stone(2) })).unwrap();
    assert_eq!(h.undo_name(), Some("Fill box 0.125×0.125×0.125"), "the name ended with its stroke");
}

#[test]
fn a_save_splits_a_stroke_and_undo_ends_it() {
    let mut map = small_map();
    let mut h = History::new();
    h.begin_stroke();
    h.apply(&mut map, cubes(0, CubeOp::SetCube { addr: CubeAddr::containing(IVec3::new(1, 3, 1), 0), cube: stone(2) }))
        .unwrap();
    h.set_saved();
    assert!(h.is_saved());
    assert_eq!(h.current_stroke(), None);
    let s = h.begin_stroke();
    h.apply(&mut map, cubes(0, CubeOp::SetCube { addr: CubeAddr::containing(IVec3::new(2, 3, 1), 0), cube: stone(2) }))
        .unwrap();
    assert!(!h.is_saved());
    assert_eq!(h.len(), 2);
    // Undo mid-stroke ends the stroke: the next op is a new step.
    h.undo(&mut map).unwrap();
    assert!(h.is_saved());
    assert_ne!(h.current_stroke(), Some(s));
    h.apply(&mut map, cubes(0, CubeOp::SetCube { addr: CubeAddr::containing(IVec3::new(3, 3, 1), 0), cube: stone(2) }))
        .unwrap();
    assert_eq!(h.len(), 2);
    assert_eq!(h.entry(1).unwrap().step_count(), 1);
}

#[test]
fn refused_and_noop_edits_leave_no_entry_and_no_change() {
    let mut map = small_map();
    map.levels[0].objects.add(Light::point("lamp", Vec3::ZERO)).unwrap();
    let start = map.clone();
    let mut h = History::new();
    let top = map.levels[0].frame().grid_box().max;
    let refused = [
        cubes(0, CubeOp::FillBox { region: LatticeBox::new(top - IVec3::ONE, top + IVec3::ONE), cube: stone(1) }),
        cubes(1, CubeOp::FillBox { region: lbox([0, 0, 0], [1, 1, 1]), cube: stone(1) }),
        cubes(0, CubeOp::PaintBox { region: lbox([0, 0, 0], [4, 4, 4]), material: MaterialId(40) }),
        cubes(
            0,
            CubeOp::FillBox {
                region: lbox([0, 0, 0], [4, 4, 4]),
                cube: Cube::solid(MaterialId(1), PhysicsId(9), SoundId(0)),
            },
        ),
        cubes(0, CubeOp::PushCorner { addr: CubeAddr::new(IVec3::ZERO, 4).unwrap(), corner: 0, delta: IVec3::ONE }),
        Edit::AddLibraryItem(LibItem::Material(Material::new("stone", PhysicsId(0), SoundId(0)))),
        Edit::AddLibraryItem(LibItem::Material(Material::new("x", PhysicsId(7), SoundId(0)))),
        Edit::RenameLibraryItem { id: LibRef::Material(MaterialId(1)), name: "iron".into() },
        Edit::ReplaceLibraryItem {
            id: LibRef::Material(MaterialId(1)),
            item: LibItem::Physics(PhysicsMaterial::new("p")),
        },
        Edit::RemoveLibraryItem { id: LibRef::Material(MaterialId(1)), replacement: None },
        Edit::RemoveLibraryItem {
            id: LibRef::Material(MaterialId(1)),
            replacement: Some(LibRef::Physics(PhysicsId(0))),
        },
        Edit::RemoveObject { level: 0, id: ObjRef::Light(LightId(9)) },
        Edit::AddObject {
            level: 0,
            item: ObjItem::Region(EnvironmentRegion::from_box(EnvRef::Sound(SoundEnvId(3)), Vec3::ZERO, Vec3::ONE)),
        },
        Edit::AddObject { level: 0, item: ObjItem::Light(Light::point("nan", Vec3::NAN)) },
        Edit::SetAirPhysics { level: 0, physics: Some(PhysicsId(5)) },
        Edit::SetChunkSize { level: 0, chunk_size_log2: 2 },
        Edit::SetCenterChunk { level: 0, chunk: ChunkCoord::new(0, 300, 0) },
        Edit::RemoveLevel { level: 0 },
        Edit::AddLevel { name: "big".into(), chunk_size_log2: 16 },
        Edit::SetMeta(MapMeta { gamemodes: vec!["a".into(), "a".into()], ..MapMeta::default() }),
    ];
    for edit in refused {
        let err = h.apply(&mut map, edit.clone());
        assert!(err.is_err(), "{edit:?} was accepted");
        assert!(!err.unwrap_err().to_string().is_empty());
        assert!(h.is_empty(), "{edit:?} left an entry");
        assert!(map.content_eq(&start), "{edit:?} changed the map");
    }
    let noop = [
        cubes(0, CubeOp::FillBox { region: lbox([0, 0, 0], [4, 2, 4]), cube: stone(1) }),
        cubes(0, CubeOp::PaintBox { region: lbox([0, 0, 0], [4, 2, 4]), material: MaterialId(1) }),
        cubes(0, CubeOp::ClearBox { region: lbox([0, 8, 0], [40, 40, 40]) }),
        Edit::RenameLibraryItem { id: LibRef::Material(MaterialId(1)), name: "stone".into() },
        Edit::MoveObject { level: 0, id: ObjRef::Light(LightId(0)), position: Vec3::ZERO },
        Edit::SetAirPhysics { level: 0, physics: None },
        Edit::SetMeta(map.meta.clone()),
    ];
    for edit in noop {
        assert!(h.apply(&mut map, edit.clone()).unwrap().is_empty(), "{edit:?}");
        assert!(h.is_empty(), "{edit:?} left an entry");
    }
    assert!(map.content_eq(&start));
    assert!(map.levels[0].chunks().all(|(c, ch)| Arc::ptr_eq(ch, start.levels[0].chunk(*c).unwrap())));
}

#[test]
fn snapshot_is_unchanged_by_an_edit_and_touched_chunks_bump() {
    let mut map = small_map();
    let mut h = History::new();
    let snap = map.snapshot();
    let hashes: Vec<(ChunkCoord, u64, u64)> =
        snap.levels[0].chunks().map(|(c, ch)| (*c, ch.octree().content_hash(), ch.generation())).collect();
    assert_eq!(hashes.len(), 4);

    let changes =
        h.apply(&mut map, cubes(0, CubeOp::FillBox { region: lbox([2, 2, 2], [6, 5, 6]), cube: stone(2) })).unwrap();
    let touched: Vec<ChunkCoord> = changes.levels[&0].chunks.chunks().collect();
    assert_eq!(touched, vec![ChunkCoord::new(0, 0, 0)]);
    for (c, hash, generation) in &hashes {
        let old = snap.levels[0].chunk(*c).unwrap();
        let new = map.levels[0].chunk(*c).unwrap();
        assert_eq!(old.octree().content_hash(), *hash);
        assert_eq!(old.generation(), *generation);
        if touched.contains(c) {
            assert!(!Arc::ptr_eq(old, new));
            assert!(new.generation() > *generation);
            assert_ne!(new.octree().content_hash(), *hash);
        } else {
            assert!(Arc::ptr_eq(old, new));
            assert_eq!(new.generation(), *generation);
        }
    }
    // Undo brings the content back but is a new generation (the bake must redo it).
    let after_edit = map.levels[0].chunk(touched[0]).unwrap().generation();
    let snap2 = map.snapshot();
    h.undo(&mut map).unwrap();
    let ch = map.levels[0].chunk(touched[0]).unwrap();
    assert_eq!(ch.octree().content_hash(), hashes[0].1);
    assert!(ch.generation() > after_edit);
    assert_eq!(snap2.levels[0].chunk(touched[0]).unwrap().generation(), after_edit);
    assert!(snap.content_eq(&map));
}

#[test]
fn step_names() {
    let mut map = small_map();
    let mut h = History::new();
    let lamp = Light::point("lamp 1", Vec3::ZERO);
    let edits = [
        (cubes(0, CubeOp::FillBox { region: lbox([0, 8, 0], [32, 40, 32]), cube: stone(1) }), "Fill box 4×4×4"),
        (cubes(0, CubeOp::ClearBox { region: lbox([0, 8, 0], [4, 9, 4]) }), "Clear box 0.5×0.125×0.5"),
        (
            cubes(0, CubeOp::PaintBox { region: lbox([0, 0, 0], [8, 8, 8]), material: MaterialId(2) }),
            "Paint material iron",
        ),
        (
            cubes(
                0,
                CubeOp::PaintFace {
                    addr: CubeAddr::new(IVec3::ZERO, 0).unwrap(),
                    face: Face::PosY,
                    material: MaterialId(1),
                },
            ),
            "Paint material stone",
        ),
        (Edit::AddObject { level: 0, item: ObjItem::Light(lamp) }, "Add light lamp 1"),
        (Edit::MoveObject { level: 0, id: ObjRef::Light(LightId(0)), position: Vec3::ONE }, "Move light lamp 1"),
        (
            Edit::AddLibraryItem(LibItem::Material(Material::new("glass", PhysicsId(0), SoundId(0)))),
            "Add material glass",
        ),
        (
            Edit::RenameLibraryItem { id: LibRef::Material(MaterialId(3)), name: "ice".into() },
            "Rename material glass to ice",
        ),
        (Edit::SetMeta(MapMeta { name: "new".into(), ..map.meta.clone() }), "Rename map"),
        (Edit::AddLevel { name: "cellar".into(), chunk_size_log2: 3 }, "Add level cellar"),
        (Edit::RemoveLevel { level: 1 }, "Remove level cellar"),
    ];
    for (edit, name) in edits {
        h.apply(&mut map, edit).unwrap();
        assert_eq!(h.undo_name(), Some(name));
    }
    let names: Vec<&str> = h.entries().map(|e| e.name).collect();
    assert_eq!(names.len(), 11);
    assert_eq!(names[0], "Fill box 4×4×4");
    h.undo(&mut map);
    assert_eq!(h.redo_name(), Some("Remove level cellar"));
    assert!(!h.entries().last().unwrap().applied);
}

#[test]
fn library_edits_undo_and_redo_with_stable_ids() {
    let mut map = small_map();
    map.levels[0].air_physics_material = Some(PhysicsId(0));
    let start = map.clone();
    let mut h = History::new();
    let mut states = vec![map.clone()];
    let mut step = |h: &mut History, map: &mut Map, edit: Edit| {
        let before = map.clone();
        let c = h.apply(map, edit).unwrap();
        assert!(!c.is_empty());
        assert_reported(&before, map, &c);
        states.push(map.clone());
        c
    };
    let c = step(&mut h, &mut map, Edit::AddLibraryItem(LibItem::Physics(PhysicsMaterial::new("ice"))));
    assert_eq!(c.library.iter().copied().collect::<Vec<_>>(), vec![LibRef::Physics(PhysicsId(1))]);
    step(&mut h, &mut map, Edit::AddLibraryItem(LibItem::Material(Material::new("glass", PhysicsId(1), SoundId(0)))));
    let glass = MaterialId(3);
    step(&mut h, &mut map, cubes(0, CubeOp::PaintBox { region: lbox([0, 0, 0], [12, 2, 4]), material: glass }));
    step(&mut h, &mut map, Edit::RenameLibraryItem { id: LibRef::Material(glass), name: "frost".into() });
    let mut m = map.library.get(glass).unwrap().clone();
    m.color = [10, 20, 30];
    step(&mut h, &mut map, Edit::ReplaceLibraryItem { id: LibRef::Material(glass), item: LibItem::Material(m) });
    step(&mut h, &mut map, Edit::SetAirPhysics { level: 0, physics: Some(PhysicsId(1)) });
    // Physics "ice" is used by material "frost" and the air setting: replace it with "default".
    let c = step(
        &mut h,
        &mut map,
        Edit::RemoveLibraryItem { id: LibRef::Physics(PhysicsId(1)), replacement: Some(LibRef::Physics(PhysicsId(0))) },
    );
    assert!(c.library.contains(&LibRef::Material(glass)));
    assert!(c.levels[&0].settings);
    assert_eq!(map.levels[0].air_physics_material, Some(PhysicsId(0)));
    // Material "frost" is painted on cubes in 2 chunks: replace it with "iron".
    let c = step(
        &mut h,
        &mut map,
        Edit::RemoveLibraryItem { id: LibRef::Material(glass), replacement: Some(LibRef::Material(MaterialId(2))) },
    );
    assert_eq!(c.levels[&0].chunks.len(), 2);
    assert!(!map.material_in_use(glass));
    assert_eq!(h.entry(h.head() - 1).unwrap().name(), "Remove material frost");
    let end = map.clone();
    assert_eq!(map.validate(), vec![]);

    for i in (0..h.len()).rev() {
        let before = map.clone();
        let c = h.undo(&mut map).unwrap();
        assert_reported(&before, &map, &c);
        assert!(map.content_eq(&states[i]), "undo to {i}");
    }
    assert!(map.content_eq(&start));
    for (i, state) in states.iter().enumerate().skip(1) {
        h.redo(&mut map).unwrap();
        assert!(map.content_eq(state), "redo to {i}");
    }
    assert!(map.content_eq(&end));
    assert_eq!(map.library.get(MaterialId(2)).unwrap().name, "iron");
}

#[test]
fn environments_level_settings_and_levels() {
    let mut map = small_map();
    let start = map.clone();
    let mut h = History::new();
    let cave = SoundEnvironment { name: "cave".into(), ..Default::default() };
    h.apply(&mut map, Edit::AddLibraryItem(LibItem::Environment(Environment::Sound(cave)))).unwrap();
    h.apply(
        &mut map,
        Edit::AddLibraryItem(LibItem::Environment(Environment::Sound(SoundEnvironment {
            name: "hall".into(),
            ..Default::default()
        }))),
    )
    .unwrap();
    let (cave, hall) = (EnvRef::Sound(SoundEnvId(0)), EnvRef::Sound(SoundEnvId(1)));
    assert!(h.apply(&mut map, Edit::SetDefaultEnvironment { level: 0, kind: EnvKind::Sky, env: Some(cave) }).is_err());
    h.apply(&mut map, Edit::SetDefaultEnvironment { level: 0, kind: EnvKind::Sound, env: Some(cave) }).unwrap();
    h.apply(
        &mut map,
        Edit::AddObject { level: 0, item: ObjItem::Region(EnvironmentRegion::from_box(hall, Vec3::ZERO, Vec3::ONE)) },
    )
    .unwrap();
    h.apply(
        &mut map,
        Edit::SetLevelFlags { level: 0, flags: LevelFlags { keep_velocity: true, ..Default::default() } },
    )
    .unwrap();
    h.apply(&mut map, Edit::SetCenterChunk { level: 0, chunk: ChunkCoord::new(1, 1, 1) }).unwrap();
    h.apply(&mut map, Edit::AddLevel { name: "cellar".into(), chunk_size_log2: 2 }).unwrap();
    h.apply(&mut map, Edit::SetChunkSize { level: 1, chunk_size_log2: 3 }).unwrap();
    h.apply(&mut map, Edit::RenameLevel { level: 1, name: "crypt".into() }).unwrap();
    h.apply(&mut map, Edit::SetDefaultEnvironment { level: 1, kind: EnvKind::Sound, env: Some(hall) }).unwrap();
    // Removing "cave" (level 0's default) without a replacement is refused; with "hall" it
    // re-points the default.
    assert!(h.apply(&mut map, Edit::RemoveLibraryItem { id: LibRef::Environment(cave), replacement: None }).is_err());
    let c = h
        .apply(
            &mut map,
            Edit::RemoveLibraryItem { id: LibRef::Environment(cave), replacement: Some(LibRef::Environment(hall)) },
        )
        .unwrap();
    assert!(c.levels[&0].settings);
    assert_eq!(map.levels[0].environments.sound, Some(SoundEnvId(1)));
    // Removing "hall" re-points a region and two defaults.
    h.apply(
        &mut map,
        Edit::AddLibraryItem(LibItem::Environment(Environment::Sound(SoundEnvironment {
            name: "void".into(),
            ..Default::default()
        }))),
    )
    .unwrap();
    let c = h
        .apply(
            &mut map,
            Edit::RemoveLibraryItem {
                id: LibRef::Environment(hall),
                replacement: Some(LibRef::Environment(EnvRef::Sound(SoundEnvId(2)))),
            },
        )
        .unwrap();
    assert_eq!(c.levels[&0].objects.len(), 1);
    assert!(c.levels[&1].settings);
    assert_eq!(map.validate(), vec![]);
    h.apply(&mut map, Edit::RemoveLevel { level: 0 }).unwrap();
    assert_eq!(map.levels.len(), 1);
    assert_eq!(map.levels[0].name, "crypt");
    assert!(h.apply(&mut map, Edit::RemoveLevel { level: 0 }).is_err());
    let end = map.clone();

    h.go_to(&mut map, 0);
    assert!(map.content_eq(&start));
    let c = h.go_to(&mut map, h.len());
    assert!(c.level_list);
    assert!(map.content_eq(&end));
}

#[test]
fn level_lighting_is_a_level_setting_with_undo() {
    let mut map = small_map();
    let before = map.clone();
    let mut h = History::new();
    let mut lighting = map.levels[0].lighting;
    lighting.sun.elevation = 20.0;
    lighting.bounces = 2;
    let c = h.apply(&mut map, Edit::SetLevelLighting { level: 0, lighting }).unwrap();
    assert!(c.levels[&0].settings);
    assert_eq!(map.levels[0].lighting, lighting);
    assert!(!map.content_eq(&before), "lighting is part of the content");
    assert_eq!(h.undo_name(), Some("Set sun, sky and bounce"));
    // Out of range: refused, nothing changes; the same value: no step.
    lighting.sun.intensity = -1.0;
    let err = h.apply(&mut map, Edit::SetLevelLighting { level: 0, lighting }).unwrap_err();
    assert!(err.to_string().contains("sun intensity"), "{err}");
    let same = map.levels[0].lighting;
    assert!(h.apply(&mut map, Edit::SetLevelLighting { level: 0, lighting: same }).unwrap().is_empty());
    assert_eq!(h.len(), 1);
    h.undo(&mut map).unwrap();
    assert!(map.content_eq(&before));
}

#[test]
fn an_object_drag_is_one_step_with_one_record() {
    let mut map = small_map();
    let mut h = History::new();
    h.apply(&mut map, Edit::AddObject { level: 0, item: ObjItem::Light(Light::point("lamp", Vec3::ZERO)) }).unwrap();
    let id = ObjRef::Light(LightId(0));
    let before = map.clone();
    h.begin_stroke();
    for i in 1..=20 {
        h.apply(&mut map, Edit::MoveObject { level: 0, id, position: Vec3::new(i as f32, 0.0, 0.0) }).unwrap();
    }
    h.end_stroke();
    assert_eq!(h.len(), 2);
    assert_eq!(h.entry(1).unwrap().step_count(), 1);
    assert_eq!(h.undo_name(), Some("Move light lamp"));
    let after = map.clone();
    let c = h.undo(&mut map).unwrap();
    assert!(c.levels[&0].objects.contains(&id));
    assert!(map.content_eq(&before));
    h.redo(&mut map).unwrap();
    assert!(map.content_eq(&after));
    assert_eq!(map.levels[0].objects.lights().get(LightId(0)).unwrap().position.x, 20.0);
}

#[test]
fn a_drag_brought_back_to_its_start_leaves_no_entry() {
    let mut map = small_map();
    let mut h = History::new();
    h.apply(&mut map, Edit::AddObject { level: 0, item: ObjItem::Light(Light::point("lamp", Vec3::ZERO)) }).unwrap();
    let id = ObjRef::Light(LightId(0));
    let before = map.clone();
    h.begin_stroke();
    for x in [1.0, 2.0, 3.0] {
        h.apply(&mut map, Edit::MoveObject { level: 0, id, position: Vec3::new(x, 0.0, 0.0) }).unwrap();
    }
    // Esc: the start value is applied again in the same stroke.
    let start = ObjItem::Light(before.levels[0].objects.lights().get(LightId(0)).unwrap().clone());
    h.apply(&mut map, Edit::ReplaceObject { level: 0, id, item: start }).unwrap();
    h.end_stroke();
    assert_eq!(h.len(), 1, "only the add is left");
    assert!(!h.can_redo());
    assert!(map.content_eq(&before));
    // A stroke that changes something else too is kept.
    h.begin_stroke();
    h.apply(&mut map, Edit::MoveObject { level: 0, id, position: Vec3::X }).unwrap();
    h.apply(&mut map, Edit::RenameLevel { level: 0, name: "other".into() }).unwrap();
    h.apply(&mut map, Edit::MoveObject { level: 0, id, position: Vec3::ZERO }).unwrap();
    h.end_stroke();
    assert_eq!(h.len(), 2);
}

#[test]
fn undo_of_a_10_000_cube_fill_restores_the_start_and_keeps_a_small_backup() {
    let mut map = Map::new("detail");
    map.levels[0] = Level::new("main", 4).unwrap();
    // Checkerboard of 2-cell cubes over the whole first chunk (128³ cells, 262 144 leaves): every
    // subtree of the chunk is as detailed as it can be at that size, the worst case for a backup.
    {
        let level = &mut map.levels[0];
        let mut tile = Level::new("tile", 4).unwrap();
        for x in (0..16).step_by(2) {
            for y in (0..16).step_by(2) {
                for z in (0..16).step_by(2) {
                    if ((x + y + z) / 2) % 2 == 0 {
                        tile.set_cube(CubeAddr::new(IVec3::new(x, y, z), 1).unwrap(), stone(0)).unwrap();
                    }
                }
            }
        }
        for (_, addr, cube) in tile.leaves().collect::<Vec<_>>() {
            for x in (0..128).step_by(16) {
                for y in (0..128).step_by(16) {
                    for z in (0..128).step_by(16) {
                        if cube.is_solid() {
                            level.set_cube(addr.translated(IVec3::new(x, y, z)), cube).unwrap();
                        }
                    }
                }
            }
        }
    }
    let chunk_bytes = map.levels[0].chunk(ChunkCoord::new(0, 0, 0)).unwrap().octree().memory_bytes();
    let start = map.clone();
    let mut h = History::new();
    // 25 × 16 × 25 = 10 000 cells, not aligned to anything.
    let region = lbox([37, 41, 45], [62, 57, 70]);
    assert_eq!(region.volume(), 10_000);
    h.apply(&mut map, cubes(0, CubeOp::FillBox { region, cube: stone(0) })).unwrap();
    let end = map.clone();
    let backup = h.backup_bytes();
    println!("10 000-cell fill in a 128³ checkerboard chunk: backup {backup} B, chunk {chunk_bytes} B");
    assert!(backup * 6 < chunk_bytes, "backup {backup} B vs chunk {chunk_bytes} B");
    h.undo(&mut map).unwrap();
    assert!(map.content_eq(&start));
    h.redo(&mut map).unwrap();
    assert!(map.content_eq(&end));
}

// ----- property test --------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum POp {
    Fill(LatticeBox, u16),
    Clear(LatticeBox),
    Paint(LatticeBox, Face, u16),
    Set(IVec3, u8, u16),
    Push(IVec3, u8, usize, [i32; 3]),
    Subdivide(IVec3, u8),
    Backfaces(LatticeBox, bool),
    AddMaterial(u8),
    RenameMaterial(u16, u8),
    AddLight(u8, [i8; 3]),
    MoveLight(usize, [i8; 3]),
    RemoveLight(usize),
    BeginStroke,
    EndStroke,
    Save,
}

/// The cube region: 2 × 1 × 2 chunks of 8 lattice cells.
const SPAN: IVec3 = IVec3::new(16, 8, 16);

fn pbox() -> impl Strategy<Value = LatticeBox> {
    (0..16, 0..8, 0..16, 1..9, 1..6, 1..9).prop_map(|(x, y, z, dx, dy, dz)| {
        let min = IVec3::new(x, y, z);
        LatticeBox::new(min, (min + IVec3::new(dx, dy, dz)).min(SPAN))
    })
}

fn ppos() -> impl Strategy<Value = IVec3> {
    (0..16, 0..8, 0..16).prop_map(|(x, y, z)| IVec3::new(x, y, z))
}

fn pop() -> impl Strategy<Value = POp> {
    let face = (0usize..6).prop_map(|i| Face::from_index(i).unwrap());
    prop_oneof![
        4 => (pbox(), 0u16..5).prop_map(|(b, m)| POp::Fill(b, m)),
        2 => pbox().prop_map(POp::Clear),
        2 => (pbox(), face, 0u16..5).prop_map(|(b, f, m)| POp::Paint(b, f, m)),
        2 => (ppos(), 0u8..=3, 0u16..5).prop_map(|(p, s, m)| POp::Set(p, s, m)),
        2 => (ppos(), 0u8..=3, 0usize..8, prop::array::uniform3(-8i32..8)).prop_map(|(p, s, c, d)| POp::Push(p, s, c, d)),
        1 => (ppos(), 1u8..=3).prop_map(|(p, s)| POp::Subdivide(p, s)),
        1 => (pbox(), any::<bool>()).prop_map(|(b, on)| POp::Backfaces(b, on)),
        1 => (0u8..4).prop_map(POp::AddMaterial),
        1 => (0u16..6, 0u8..4).prop_map(|(m, n)| POp::RenameMaterial(m, n)),
        2 => (0u8..3, prop::array::uniform3(-20i8..20)).prop_map(|(n, p)| POp::AddLight(n, p)),
        2 => (0usize..4, prop::array::uniform3(-20i8..20)).prop_map(|(i, p)| POp::MoveLight(i, p)),
        1 => (0usize..4).prop_map(POp::RemoveLight),
        1 => Just(POp::BeginStroke),
        1 => Just(POp::EndStroke),
        1 => Just(POp::Save),
    ]
}

/// The edit for `op` on `map` (`None` for stroke and save markers).
fn pedit(map: &Map, op: &POp) -> Option<Edit> {
    let names = ["rock", "sand", "moss", "rock"];
    let light = |i: usize| {
        let lights = map.levels[0].objects.lights();
        let ids: Vec<_> = lights.ids().collect();
        (!ids.is_empty()).then(|| ObjRef::Light(ids[i % ids.len()]))
    };
    let v = |p: [i8; 3]| Vec3::new(f32::from(p[0]), f32::from(p[1]), f32::from(p[2]));
    Some(match *op {
        POp::Fill(region, m) => cubes(0, CubeOp::FillBox { region, cube: stone(m) }),
        POp::Clear(region) => cubes(0, CubeOp::ClearBox { region }),
        POp::Paint(region, face, m) => cubes(0, CubeOp::PaintFaceBox { region, face, material: MaterialId(m) }),
        POp::Set(p, s, m) => cubes(0, CubeOp::SetCube { addr: CubeAddr::containing(p, s), cube: stone(m) }),
        POp::Push(p, s, c, d) => {
            cubes(0, CubeOp::PushCorner { addr: CubeAddr::containing(p, s), corner: c, delta: IVec3::from_array(d) })
        }
        POp::Subdivide(p, s) => cubes(0, CubeOp::Subdivide { addr: CubeAddr::containing(p, s) }),
        POp::Backfaces(region, on) => cubes(0, CubeOp::SetDrawBackfaces { region, on }),
        POp::AddMaterial(n) => {
            Edit::AddLibraryItem(LibItem::Material(Material::new(names[n as usize], PhysicsId(0), SoundId(0))))
        }
        POp::RenameMaterial(m, n) => {
            Edit::RenameLibraryItem { id: LibRef::Material(MaterialId(m)), name: names[n as usize].to_owned() }
        }
        POp::AddLight(n, p) => {
            Edit::AddObject { level: 0, item: ObjItem::Light(Light::point(format!("lamp {n}"), v(p))) }
        }
        POp::MoveLight(i, p) => Edit::MoveObject { level: 0, id: light(i)?, position: v(p) },
        POp::RemoveLight(i) => Edit::RemoveObject { level: 0, id: light(i)? },
        POp::BeginStroke | POp::EndStroke | POp::Save => return None,
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// Random edits through a History: each state is recorded; undoing everything gives every
    /// recorded state back down to the start, redoing everything gives them back up to the end,
    /// and every apply, undo and redo reports every chunk and light it changed. Refused edits
    /// leave no entry and no change.
    #[test]
    fn undo_and_redo_walk_back_through_every_state(ops in prop::collection::vec(pop(), 1..30)) {
        let mut map = small_map();
        let mut h = History::new();
        let mut states = vec![map.clone()];
        for op in &ops {
            match op {
                POp::BeginStroke => { h.begin_stroke(); }
                POp::EndStroke => h.end_stroke(),
                POp::Save => h.set_saved(),
                _ => {}
            }
            let Some(edit) = pedit(&map, op) else { continue };
            let before = map.clone();
            let len = h.len();
            match h.apply(&mut map, edit.clone()) {
                Ok(c) => {
                    assert_reported(&before, &map, &c);
                    if c.is_empty() {
                        prop_assert_eq!(h.len(), len);
                        prop_assert!(map.content_eq(&before));
                    }
                    states.truncate(h.head());
                    states.push(map.clone());
                }
                Err(e) => {
                    prop_assert_eq!(h.len(), len, "{:?} refused ({}) but recorded", edit, e);
                    prop_assert!(map.content_eq(&before), "{:?} refused but changed the map", edit);
                }
            }
            prop_assert_eq!(states.len(), h.head() + 1);
        }
        let end = map.clone();
        prop_assert_eq!(map.validate(), vec![]);
        while h.can_undo() {
            let before = map.clone();
            let c = h.undo(&mut map).unwrap();
            assert_reported(&before, &map, &c);
            prop_assert!(map.content_eq(&states[h.head()]), "undo to {}", h.head());
        }
        prop_assert!(map.content_eq(&states[0]));
        while h.can_redo() {
            let before = map.clone();
            let c = h.redo(&mut map).unwrap();
            assert_reported(&before, &map, &c);
            prop_assert!(map.content_eq(&states[h.head()]), "redo to {}", h.head());
        }
        prop_assert!(map.content_eq(&end));
        h.go_to(&mut map, 0);
        prop_assert!(map.content_eq(&states[0]));
        h.go_to(&mut map, h.len());
        prop_assert!(map.content_eq(&end));
        for (_, ch) in map.levels[0].chunks() {
            prop_assert!(ch.octree().check_invariants().is_ok());
        }
    }
}

#[test]
fn replacing_the_whole_map_undoes_and_redoes() {
    let mut map = small_map();
    let start = map.snapshot();
    let mut imported = map.snapshot();
    imported.library.add(Material::new("imported", PhysicsId(0), SoundId(0))).unwrap();
    imported.levels[0].fill_box(lbox([0, 8, 0], [8, 16, 8]), stone(2)).unwrap();
    let expected = imported.snapshot();

    let mut h = History::new();
    let c = h
        .apply(&mut map, Edit::ReplaceMap { map: WholeMap(Box::new(imported)), name: "Import model.m3d".into() })
        .unwrap();
    assert!(c.level_list && c.meta, "a whole-map swap must ask for everything to be re-read");
    assert!(map.content_eq(&expected));
    assert_eq!(h.undo_name(), Some("Import model.m3d"));
    // Untouched chunks stay shared with the map before the import.
    let c0 = ChunkCoord::new(0, 0, 1);
    assert!(Arc::ptr_eq(map.levels[0].chunk(c0).unwrap(), start.levels[0].chunk(c0).unwrap()));

    h.undo(&mut map).unwrap();
    assert!(map.content_eq(&start));
    assert!(!map.content_eq(&expected));
    h.redo(&mut map).unwrap();
    assert!(map.content_eq(&expected));
}

#[test]
fn a_replacement_map_without_levels_is_refused() {
    let mut map = small_map();
    let start = map.snapshot();
    let mut empty = Map::new("empty");
    empty.levels.clear();
    let mut h = History::new();
    let e = h.apply(&mut map, Edit::ReplaceMap { map: WholeMap(Box::new(empty)), name: "Import".into() });
    assert!(matches!(e, Err(EditError::Map(MapError::LastLevel))), "{e:?}");
    assert!(map.content_eq(&start));
    assert_eq!(h.undo_name(), None);
}

/// An object's position read in place is the one its copy reports, for every kind of the demo's
/// objects; a missing object has none.
#[test]
fn an_object_reference_reads_the_position_its_item_reports() {
    let map = crate::sample::demo();
    let objects = &map.levels[0].objects;
    let ids: Vec<ObjRef> = objects
        .lights()
        .ids()
        .map(ObjRef::Light)
        .chain(objects.entities().ids().map(ObjRef::Entity))
        .chain(objects.regions().ids().map(ObjRef::Region))
        .chain(objects.load_regions().ids().map(ObjRef::LoadRegion))
        .collect();
    use crate::map::library::ItemKind;
    for kind in [ItemKind::Light, ItemKind::Entity, ItemKind::EnvironmentRegion, ItemKind::LoadRegion] {
        assert!(ids.iter().any(|id| id.kind() == kind), "the demo has no {kind}");
    }
    for id in ids {
        let item = id.get(objects).expect("listed objects exist");
        assert_eq!(item.kind(), id.kind());
        assert_eq!(id.position(objects), item.position(), "{id:?}");
    }
    assert_eq!(ObjRef::Light(LightId(999)).position(objects), None);
    assert_eq!(ObjRef::Light(LightId(999)).get(objects), None);
}

/// A step that cannot be undone (the map was changed behind the history's back) is skipped and
/// reported to the caller in every build; it used to panic in debug builds and vanish silently in
/// release ones. The other steps of the entry still go through.
#[test]
fn a_failed_undo_step_is_reported() {
    let mut map = small_map();
    let mut h = History::new();
    h.begin_stroke();
    h.apply(&mut map, Edit::AddObject { level: 0, item: ObjItem::Light(Light::point("lamp", Vec3::ZERO)) }).unwrap();
    h.apply(&mut map, Edit::AddObject { level: 0, item: ObjItem::Light(Light::point("lamp 2", Vec3::ONE)) }).unwrap();
    h.end_stroke();
    // Behind the history's back: the first lamp goes.
    map.levels[0].objects.remove(LightId(0)).unwrap();
    let c = h.undo(&mut map).unwrap();
    assert_eq!(c.failures.len(), 1, "{:?}", c.failures);
    let f = &c.failures[0];
    assert_eq!((f.entry.as_str(), f.action), ("Add light lamp", StepAction::Undo));
    let msg = c.failure_message().unwrap();
    assert!(msg.starts_with("Incomplete: undo of \"Add light lamp\" failed"), "{msg}");
    // The second lamp's step went through.
    assert!(map.levels[0].objects.lights().get(LightId(1)).is_none());
    assert!(c.levels[&0].objects.contains(&ObjRef::Light(LightId(1))));
    // Redo reports what cannot be redone the same way (nothing here: both lamps come back).
    let c = h.redo(&mut map).unwrap();
    assert!(c.failures.is_empty() && c.failure_message().is_none(), "{:?}", c.failures);
}

/// The path attribute sets are one undoable value: replaced, undone, redone; an invalid list is
/// refused.
#[test]
fn path_attribute_sets_edit_undo_and_redo() {
    use crate::map::path_sets::{PathSet, PathSetError, PathSets};
    let mut map = small_map();
    let mut h = History::new();
    let mut sets = PathSets::new();
    sets.0.insert(1, PathSet { name: "guard_post".into(), facing: Some([0.0, 0.0, -1.0]) });
    let c = h.apply(&mut map, Edit::SetPathSets(sets.clone())).unwrap();
    assert!(c.path_sets && !c.is_empty());
    assert_eq!(h.undo_name(), Some("Edit path attribute sets"));
    assert_eq!(map.path_sets, sets);
    assert!(h.undo(&mut map).unwrap().path_sets);
    assert!(map.path_sets.0.is_empty());
    h.redo(&mut map).unwrap();
    assert_eq!(map.path_sets, sets);
    let mut bad = sets.clone();
    bad.0.insert(2, PathSet::new(""));
    assert_eq!(h.apply(&mut map, Edit::SetPathSets(bad)), Err(EditError::PathSets(PathSetError::EmptyName(2))));
    assert_eq!(h.apply(&mut map, Edit::SetPathSets(sets)).unwrap(), ChangeSet::new(), "no change, no entry");
    assert_eq!(h.len(), 1);
}
