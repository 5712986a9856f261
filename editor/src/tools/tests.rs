//! Every tool driven without a GPU: pick a face of the demo map, apply the tool's commands to an
//! [`EditorState`], check the map, undo once, check it is back.

use std::sync::Arc;

use glam::{DVec3, IVec3};

use pmfedit_core::map::Map;
use pmfedit_core::map::coords::{Face, LatticeBox};
use pmfedit_core::map::ids::{MaterialId, PathAttrs};
use pmfedit_core::map::octree::CubeKind;
use pmfedit_core::sample;

use super::box_tool::BoxDrag;
use super::clipboard::Clipboard;
use super::*;
use crate::command::Command;
use crate::selection::Selection;
use crate::state::EditorState;

fn demo_state() -> EditorState {
    EditorState::new(sample::demo(), None, Arc::new(|| {}))
}

/// The ground face straight below world `(x, z)`.
fn pick_down(state: &EditorState, x: f64, z: f64) -> Pick {
    let level = &state.map.levels[0];
    let hit = level.ray_cast_world(DVec3::new(x, 20.0, z), DVec3::NEG_Y, 100.0).expect("ground below");
    Pick::from_hit(0, &hit)
}

fn solid_at(state: &EditorState, p: IVec3) -> bool {
    state.map.levels[0].get(p).expect("in grid").0.is_solid()
}

fn run(state: &mut EditorState, commands: Vec<Command>) {
    for c in commands {
        state.apply(c).expect("the tool's edit is applied");
    }
}

fn undo_restores(state: &mut EditorState, before: &Map) {
    assert!(!state.map.content_eq(before), "the tool changed nothing");
    state.apply(Command::Undo).expect("undo is never refused");
    assert!(state.map.content_eq(before), "one undo did not restore the map");
}

#[test]
fn pick_cells_inside_and_outside() {
    let s = demo_state();
    let p = pick_down(&s, -10.0, -10.0);
    assert_eq!(p.face, Face::PosY);
    let out = p.outside(3);
    let inn = p.inside(3);
    assert_eq!(out.min.y, inn.min.y + 8);
    assert!(!solid_at(&s, out.min) && solid_at(&s, inn.min));
}

#[test]
fn place_puts_a_cube_on_the_face() {
    let mut s = demo_state();
    let before = s.map.snapshot();
    let p = pick_down(&s, -10.0, -10.0);
    let target = place::target(&s, &p);
    {
        let c = place::click(&s, &p);
        run(&mut s, c);
    }
    assert!(solid_at(&s, target.min) && solid_at(&s, target.max() - IVec3::ONE));
    undo_restores(&mut s, &before);
}

#[test]
fn erase_removes_the_cube_under_the_face() {
    let mut s = demo_state();
    let before = s.map.snapshot();
    let p = pick_down(&s, -10.0, -10.0);
    let target = erase::target(&s, &p);
    {
        let c = erase::click(&s, &p);
        run(&mut s, c);
    }
    assert!(!solid_at(&s, target.min));
    undo_restores(&mut s, &before);
}

#[test]
fn paint_face_and_whole_cube() {
    let mut s = demo_state();
    let before = s.map.snapshot();
    let p = pick_down(&s, -10.0, -10.0);
    let other = s.map.library.materials().ids().find(|&m| Some(m) != p.cube.face_material(Face::PosY)).unwrap();
    s.material = other;
    let mut cmds = vec![Command::BeginStroke];
    cmds.extend(paint::apply(&s, &p, Mods::default()));
    let p2 = pick_down(&s, -9.0, -10.0);
    cmds.extend(paint::apply(&s, &p2, Mods::SHIFT));
    cmds.push(Command::EndStroke);
    {
        let c = cmds;
        run(&mut s, c);
    }
    let (c, _) = s.map.levels[0].get(p.inside(3).min).unwrap();
    assert_eq!(c.face_material(Face::PosY), Some(other));
    let (c, _) = s.map.levels[0].get(p2.inside(3).min).unwrap();
    assert_eq!(c.face_material(Face::NegX), Some(other));
    undo_restores(&mut s, &before);
}

#[test]
fn box_extrudes_and_carves() {
    let mut s = demo_state();
    let before = s.map.snapshot();
    let a = pick_down(&s, -10.0, -10.0);
    let b = pick_down(&s, -8.5, -8.5);
    let mut drag = BoxDrag {
        level: 0,
        face: a.face,
        anchor: a.outside(3).min,
        current: b.outside(3).min,
        size_log2: 3,
        layers: 2,
    };
    let r = drag.region();
    assert_eq!(r.max - r.min, IVec3::new(16, 16, 16));
    {
        let c = drag.commit(&s);
        run(&mut s, c);
    }
    assert!(solid_at(&s, r.min) && solid_at(&s, r.max - IVec3::ONE));
    undo_restores(&mut s, &before);
    drag.layers = -1;
    let r = drag.region();
    assert_eq!(r.max.y, a.outside(3).min.y);
    {
        let c = drag.commit(&s);
        run(&mut s, c);
    }
    assert!(!solid_at(&s, r.min));
    undo_restores(&mut s, &before);
}

#[test]
fn select_copy_paste_duplicate_delete() {
    let mut s = demo_state();
    let before = s.map.snapshot();
    let a = pick_down(&s, -10.0, -10.0);
    let drag = BoxDrag {
        level: 0,
        face: a.face,
        anchor: a.outside(3).min,
        current: a.outside(3).min + IVec3::new(8, 0, 0),
        size_log2: 3,
        layers: -1,
    };
    {
        let c = vec![select::finish(&drag)];
        run(&mut s, c);
    }
    let Selection::Cubes { min, max, .. } = s.selection else { panic!("no box selected") };
    assert_eq!(max - min, IVec3::new(16, 8, 8));
    let clip = select::copy(&s).unwrap();
    assert!(!clip.pieces.is_empty());
    // Paste on top of the ground, further away.
    let p = pick_down(&s, -4.0, -12.0);
    {
        let c = select::paste(&s, &clip, &p);
        run(&mut s, c);
    }
    let dest = select::paste_origin(&s, &clip, &p);
    assert_eq!(Clipboard::copy(&s.map.levels[0], LatticeBox::new(dest, dest + clip.size)), clip);
    undo_restores(&mut s, &before);
    // Duplicate upward.
    {
        let c = vec![select::finish(&drag)];
        run(&mut s, c);
    }
    {
        let c = select::duplicate(&s, IVec3::Y);
        run(&mut s, c);
    }
    assert!(solid_at(&s, min + IVec3::new(0, 8, 0)));
    undo_restores(&mut s, &before);
    // Delete.
    {
        let c = vec![select::finish(&drag)];
        run(&mut s, c);
    }
    {
        let c = select::delete(&s);
        run(&mut s, c);
    }
    assert!(!solid_at(&s, min));
    undo_restores(&mut s, &before);
    // Cut = copy + delete.
    let (c, cmds) = select::cut(&s).unwrap();
    assert_eq!(c, clip);
    {
        let c = cmds;
        run(&mut s, c);
    }
    undo_restores(&mut s, &before);
}

#[test]
fn clipboard_mirror_and_rotate() {
    let s = demo_state();
    // The ramp has pushed corners: copy it.
    let level = &s.map.levels[0];
    let f = level.frame();
    let lo = f.lattice_from_world(DVec3::new(-3.0, 0.0, -2.0));
    let hi = f.lattice_from_world(DVec3::new(1.0, 2.0, 2.0));
    let clip = Clipboard::copy(level, LatticeBox::new(lo, hi));
    assert!(clip.pieces.iter().any(|(_, c)| c.has_pushed_corners()));
    let r4 = clip.rotated().rotated().rotated().rotated();
    let sort = |c: &Clipboard| {
        let mut v: Vec<_> =
            c.pieces.iter().map(|(b, c)| (b.min.to_array(), b.max.to_array(), format!("{c:?}"))).collect();
        v.sort();
        v
    };
    assert_eq!(sort(&r4), sort(&clip));
    assert_eq!(r4.size, clip.size);
    assert_eq!(sort(&clip.mirrored(0).mirrored(0)), sort(&clip));
    let r1 = clip.rotated();
    assert_eq!(r1.size, IVec3::new(clip.size.z, clip.size.y, clip.size.x));
    assert_ne!(sort(&r1), sort(&clip));
    // A pushed corner moves to the rotated corner.
    let cube = Cube::solid(MaterialId(1), Default::default(), Default::default()).with_corner_pushed(0, [0, -8, 0]); // +X+Y+Z corner pushed down
    let r = clipboard::transform_cube(cube, |v| IVec3::new(v.z, v.y, -v.x));
    let CubeKind::Extended(e) = r.kind else { panic!() };
    // +X+Z → (z, -x) = (+X, −Z): corner 2.
    assert_eq!(e.corners[2], [0, -8, 0]);
}

#[test]
fn corner_push_is_one_step() {
    let mut s = demo_state();
    let before = s.map.snapshot();
    let p = pick_down(&s, -10.0, -10.0);
    let (addr, corner) = corner::grab(&s, &p);
    assert_eq!(addr.size_log2, 3);
    let mut cmds = vec![Command::BeginStroke];
    cmds.extend(corner::push(0, addr, p.face, corner, 3));
    cmds.extend(corner::push(0, addr, p.face, corner, 2));
    cmds.push(Command::EndStroke);
    {
        let c = cmds;
        run(&mut s, c);
    }
    let (c, _) = s.map.levels[0].get(addr.min).unwrap();
    let CubeKind::Extended(e) = c.kind else { panic!("not pushed") };
    assert_eq!(e.corners[corner][1], -5);
    undo_restores(&mut s, &before);
}

#[test]
fn eyedropper_takes_the_face_material() {
    let s = demo_state();
    let p = pick_down(&s, -10.0, -10.0);
    let cmds = eyedropper::click(&s, &p);
    assert!(matches!(cmds[0], Command::SetMaterial(m) if Some(m) == p.cube.face_material(Face::PosY)));
}

#[test]
fn object_place_and_move() {
    let mut s = demo_state();
    let before = s.map.snapshot();
    let n = s.map.levels[0].objects.lights().len();
    let p = pick_down(&s, -10.0, -10.0);
    {
        let c = object::place(&s, &p, Mods::default());
        run(&mut s, c);
    }
    assert_eq!(s.map.levels[0].objects.lights().len(), n + 1);
    let Selection::Light { id, .. } = s.selection else { panic!("new light not selected") };
    let pos = s.map.levels[0].objects.lights().get(id).unwrap().position;
    assert!((pos.y - 0.5).abs() < 1e-4);
    undo_restores(&mut s, &before);
    // Entity, then a move drag.
    {
        let c = object::place(&s, &p, Mods::SHIFT);
        run(&mut s, c);
    }
    let (level, obj) = s.selection.object().unwrap();
    let after_place = s.map.snapshot();
    let q = pick_down(&s, -5.0, -12.0);
    let to = object::drop_point(&s, &q).unwrap();
    {
        let c = vec![
            Command::BeginStroke,
            object::move_to(level, obj, to - glam::Vec3::X),
            object::move_to(level, obj, to),
            Command::EndStroke,
        ];
        run(&mut s, c);
    }
    assert!((obj.position(&s.map.levels[level].objects).unwrap() - to).length() < 1e-4);
    undo_restores(&mut s, &after_place);
}

#[test]
fn path_attributes_on_air_above() {
    let mut s = demo_state();
    let before = s.map.snapshot();
    let p = pick_down(&s, -10.0, -10.0);
    let mut cmds = vec![Command::BeginStroke];
    cmds.extend(path::apply(&s, &p, PathAttrs(3), Mods::default()));
    cmds.push(Command::EndStroke);
    {
        let c = cmds;
        run(&mut s, c);
    }
    let (c, _) = s.map.levels[0].get(p.outside(3).min).unwrap();
    assert!(!c.is_solid());
    assert_eq!(c.path, PathAttrs(3));
    undo_restores(&mut s, &before);
}
