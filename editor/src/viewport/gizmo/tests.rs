//! Gizmo logic without a GPU: hit-testing from screen positions, axis projection and snapping,
//! range and face drags, Esc, region outline picking, overlay output; then the same drags
//! through the real viewport under egui_kittest.

use std::sync::Arc;

use eframe::egui;
use egui_kittest::Harness;
use glam::{DVec3, Vec3};

use pmfedit_core::edit::{Edit, ObjItem, ObjRef};
use pmfedit_core::format::pmf::entity::{EntityData, Prop};
use pmfedit_core::map::Map;
use pmfedit_core::map::coords::Face;
use pmfedit_core::map::library::{
    EntityId, EnvRef, EnvironmentRegion, Light, LightId, LightShape, LoadRegion, LoadRegionId, MapEntity, RegionId,
    SoundEnvId, TableId,
};
use pmfedit_core::sample;

use super::*;
use crate::app::App;
use crate::launch::{Document, Launch, Sample};
use crate::selection::Selection;
use crate::state::EditorState;
use crate::viewport::camera::Camera;

fn view(eye: DVec3, target: DVec3) -> View {
    let mut camera = Camera::default();
    camera.look_at(eye, target);
    View { camera, rect: egui::Rect::from_min_size(egui::pos2(0.0, 0.0), egui::vec2(1280.0, 800.0)) }
}

/// The pointer ray through the screen position of world point `p`.
fn ray_at(v: &View, p: DVec3) -> (DVec3, DVec3) {
    let pos = v.to_screen(p).expect("in front of the camera");
    v.ray(pos)
}

fn light_at(p: Vec3) -> ObjItem {
    ObjItem::Light(Light::point("lamp", p))
}

fn light_gizmo(v: &View, item: ObjItem) -> Gizmo {
    Gizmo::new(0, ObjRef::Light(LightId::from_raw(0)), item, v).expect("a light has handles")
}

fn segment_mid(g: &Gizmo, h: Handle) -> DVec3 {
    match g.shape(h) {
        Some(HandleShape::Segment(a, b)) => (a + b) * 0.5,
        Some(HandleShape::Point(p)) => p,
        None => panic!("no {h:?}"),
    }
}

fn moved_to(e: Option<Edit>) -> Vec3 {
    match e {
        Some(Edit::MoveObject { position, .. }) => position,
        other => panic!("expected a move, got {other:?}"),
    }
}

fn replaced(e: Option<Edit>) -> ObjItem {
    match e {
        Some(Edit::ReplaceObject { item, .. }) => item,
        other => panic!("expected a replace, got {other:?}"),
    }
}

#[test]
fn closest_point_on_a_line_to_a_ray() {
    // The X axis and a ray straight down through (3, 5, 0).
    let s = closest_on_line(DVec3::ZERO, DVec3::X, DVec3::new(3.0, 5.0, 0.0), DVec3::NEG_Y).unwrap();
    assert!((s - 3.0).abs() < 1e-12);
    // A skew ray: x = 2 at its closest approach.
    let s = closest_on_line(DVec3::ZERO, DVec3::X, DVec3::new(2.0, 1.0, -5.0), DVec3::Z).unwrap();
    assert!((s - 2.0).abs() < 1e-12);
    assert_eq!(closest_on_line(DVec3::ZERO, DVec3::X, DVec3::new(0.0, 1.0, 0.0), DVec3::X), None, "parallel");
    let (d, p) = ray_segment(DVec3::new(5.0, 1.0, -5.0), DVec3::Z, DVec3::ZERO, DVec3::X * 2.0);
    assert!((d - (1.0f64 + 9.0).sqrt()).abs() < 1e-12, "{d}");
    assert_eq!(p, DVec3::X * 2.0, "clamped to the segment's end");
}

#[test]
fn snapping_follows_the_cube_size_unless_ctrl() {
    assert_eq!(snap_step(3, false), Some(1.0));
    assert_eq!(snap_step(1, false), Some(0.25));
    assert_eq!(snap_step(3, true), None);
    assert_eq!(snap(3.2, Some(1.0)), 3.0);
    assert_eq!(snap(-0.6, Some(0.5)), -0.5);
    assert_eq!(snap(3.2, None), 3.2);
}

#[test]
fn ray_through_the_x_arrow_hits_x_not_y() {
    let v = view(DVec3::new(6.0, 4.0, -10.0), DVec3::ZERO);
    let g = light_gizmo(&v, light_at(Vec3::ZERO));
    for a in 0..3 {
        let (o, d) = ray_at(&v, segment_mid(&g, Handle::Axis(a)));
        assert_eq!(g.hit(&v, o, d), Some(Handle::Axis(a)), "arrow {a}");
    }
    let (o, d) = ray_at(&v, DVec3::ZERO);
    assert_eq!(g.hit(&v, o, d), Some(Handle::Center));
    // 20 px beside the X arrow's middle: nothing.
    let pos = v.to_screen(segment_mid(&g, Handle::Axis(0))).unwrap() + egui::vec2(0.0, 20.0);
    let (o, d) = v.ray(pos);
    assert_eq!(g.hit(&v, o, d), None);
    // 5 px off still counts.
    let pos = v.to_screen(segment_mid(&g, Handle::Axis(0))).unwrap() + egui::vec2(0.0, 5.0);
    let (o, d) = v.ray(pos);
    assert_eq!(g.hit(&v, o, d), Some(Handle::Axis(0)));
}

#[test]
fn the_gizmo_keeps_its_size_on_screen() {
    let near = view(DVec3::new(0.0, 0.0, -5.0), DVec3::ZERO);
    let far = view(DVec3::new(0.0, 0.0, -50.0), DVec3::ZERO);
    let px = |v: &View| {
        let g = light_gizmo(v, light_at(Vec3::ZERO));
        let Some(HandleShape::Segment(_, tip)) = g.shape(Handle::Axis(0)) else { panic!() };
        (v.to_screen(tip).unwrap() - v.to_screen(DVec3::ZERO).unwrap()).length()
    };
    assert!((px(&near) - px(&far)).abs() < 1.0, "{} vs {}", px(&near), px(&far));
    assert!(px(&near) > 40.0);
}

#[test]
fn drag_along_x_by_3_2_with_unit_snap_moves_by_3() {
    let v = view(DVec3::new(6.0, 4.0, -10.0), DVec3::new(0.5, 2.0, 0.0));
    let start = Vec3::new(0.5, 2.0, 0.0);
    let g = light_gizmo(&v, light_at(start));
    let grab = segment_mid(&g, Handle::Axis(0));
    let (o, d) = ray_at(&v, grab);
    let mut drag = GizmoDrag::begin(&g, Handle::Axis(0), o, d).unwrap();
    let (o, d) = ray_at(&v, grab + DVec3::X * 3.2);
    let p = moved_to(drag.drag(o, d, Some(1.0)));
    assert_eq!(p, Vec3::new(3.5, 2.0, 0.0), "snapped relative to the start, Y and Z untouched");
    assert_eq!(drag.drag(o, d, Some(1.0)), None, "the same value is not sent twice");
    // Ctrl: free.
    let p = moved_to(drag.drag(o, d, None));
    assert!((p.x - 3.7).abs() < 0.01 && p.y == 2.0 && p.z == 0.0, "{p}");
    // Pointer off the axis: only the projection onto the axis counts.
    let (o, d) = ray_at(&v, grab + DVec3::new(-2.0, 1.5, 0.7));
    let p = moved_to(drag.drag(o, d, Some(0.5)));
    assert_eq!((p.y, p.z), (2.0, 0.0));
    assert!(p.x < start.x, "moved the other way: {p}");
}

#[test]
fn dragging_the_y_arrow_moves_an_entity_up() {
    let v = view(DVec3::new(8.0, 3.0, -8.0), DVec3::ZERO);
    let prop = Prop { position: [0.0; 3], box_pos: [0.5; 3], box_neg: [-0.5; 3], ..Prop::default() };
    let item = ObjItem::Entity(Box::new(MapEntity::new("crate", EntityData::Prop(prop))));
    let g = Gizmo::new(0, ObjRef::Entity(EntityId::from_raw(0)), item, &v).unwrap();
    assert_eq!(g.handles.len(), 4 + 6, "centre, 3 arrows, 6 faces");
    let grab = segment_mid(&g, Handle::Axis(1));
    let (o, d) = ray_at(&v, grab);
    assert_eq!(g.hit(&v, o, d), Some(Handle::Axis(1)));
    let mut drag = GizmoDrag::begin(&g, Handle::Axis(1), o, d).unwrap();
    let (o, d) = ray_at(&v, grab + DVec3::Y * 2.4);
    assert_eq!(moved_to(drag.drag(o, d, Some(0.5))), Vec3::new(0.0, 2.5, 0.0));
}

#[test]
fn range_handle_drag_changes_a_point_lights_range() {
    let v = view(DVec3::new(10.0, 6.0, -40.0), DVec3::ZERO);
    let g = light_gizmo(&v, light_at(Vec3::ZERO));
    let Some(HandleShape::Point(h)) = g.shape(Handle::Range) else { panic!("no range handle") };
    assert!((h.length() - 16.0).abs() < 1e-9, "on the range sphere");
    let (o, d) = ray_at(&v, h);
    assert_eq!(g.hit(&v, o, d), Some(Handle::Range));
    let mut drag = GizmoDrag::begin(&g, Handle::Range, o, d).unwrap();
    let (o, d) = ray_at(&v, h + g.right * 2.4);
    let ObjItem::Light(l) = replaced(drag.drag(o, d, Some(1.0))) else { panic!() };
    assert_eq!(l.range, 18.0);
    assert_eq!(l.position, Vec3::ZERO);
    // Never below zero.
    let (o, d) = ray_at(&v, -g.right * 8.0);
    let ObjItem::Light(l) = replaced(drag.drag(o, d, Some(1.0))) else { panic!() };
    assert_eq!(l.range, 0.0);
}

#[test]
fn range_handle_of_a_spot_light_slides_along_its_axis() {
    let v = view(DVec3::new(20.0, 5.0, -30.0), DVec3::new(0.0, -4.0, 0.0));
    let light = Light {
        shape: LightShape::Spot { direction: Vec3::NEG_Y * 3.0, cone_radius: 40.0 },
        range: 10.0,
        ..Light::point("spot", Vec3::ZERO)
    };
    let g = light_gizmo(&v, ObjItem::Light(light));
    let Some(HandleShape::Point(h)) = g.shape(Handle::Range) else { panic!() };
    assert!((h - DVec3::new(0.0, -10.0, 0.0)).length() < 1e-9, "{h}");
    let (o, d) = ray_at(&v, h);
    let mut drag = GizmoDrag::begin(&g, Handle::Range, o, d).unwrap();
    let (o, d) = ray_at(&v, DVec3::new(0.0, -7.3, 0.0));
    let ObjItem::Light(l) = replaced(drag.drag(o, d, Some(1.0))) else { panic!() };
    assert_eq!(l.range, 7.0);
}

fn face_drag(item: ObjItem, obj: ObjRef, face: Handle, to: DVec3, step: Option<f64>) -> ObjItem {
    replaced(face_drag_edit(item, obj, face, to, step))
}

/// Drags `face` of `item` from its handle to the pointer aimed at `to`: the edit it makes.
fn face_drag_edit(item: ObjItem, obj: ObjRef, face: Handle, to: DVec3, step: Option<f64>) -> Option<Edit> {
    let v = view(DVec3::new(6.0, 14.0, -24.0), DVec3::new(2.0, 2.0, 2.0));
    let g = Gizmo::new(0, obj, item, &v).unwrap();
    let Some(HandleShape::Point(h)) = g.shape(face) else { panic!("no {face:?}") };
    let (o, d) = ray_at(&v, h);
    assert_eq!(g.hit(&v, o, d), Some(face));
    let mut drag = GizmoDrag::begin(&g, face, o, d).unwrap();
    // Aim straight at the target point (it may be off screen).
    let eye = v.camera.eye;
    drag.drag(eye, (to - eye).normalize(), step)
}

#[test]
fn region_face_drag_moves_one_face_and_cannot_invert_the_box() {
    let env = EnvRef::Sound(SoundEnvId::from_raw(0));
    let region = ObjItem::Region(EnvironmentRegion::from_box(env, Vec3::ZERO, Vec3::splat(4.0)));
    let obj = ObjRef::Region(RegionId::from_raw(0));
    let px = Handle::Face { axis: 0, positive: true };
    let bounds = |i: &ObjItem| match i {
        ObjItem::Region(r) => r.bounds(),
        _ => panic!(),
    };
    // +X face out by 2.3 → 2 with unit snap; nothing else moves.
    let r = face_drag(region.clone(), obj, px, DVec3::new(6.3, 2.0, 2.0), Some(1.0));
    assert_eq!(bounds(&r), (Vec3::ZERO, Vec3::new(6.0, 4.0, 4.0)));
    // Dragged far past the −X face: stops one snap step short of it.
    let r = face_drag(region.clone(), obj, px, DVec3::new(-10.0, 2.0, 2.0), Some(1.0));
    let (lo, hi) = bounds(&r);
    assert_eq!((lo.x, hi.x), (0.0, 1.0));
    // Free: stops at the minimum extent.
    let r = face_drag(region.clone(), obj, px, DVec3::new(-10.0, 2.0, 2.0), None);
    let (lo, hi) = bounds(&r);
    assert!(lo.x < hi.x && (hi.x - lo.x - MIN_EXTENT as f32).abs() < 1e-6, "{lo} {hi}");
    // The −Y face pushed up past the top.
    let r = face_drag(region, obj, Handle::Face { axis: 1, positive: false }, DVec3::new(2.0, 30.0, 2.0), Some(1.0));
    let (lo, hi) = bounds(&r);
    assert_eq!((lo.y, hi.y), (3.0, 4.0));
}

#[test]
fn load_region_and_prop_faces() {
    let load = ObjItem::LoadRegion(LoadRegion { min: Vec3::ZERO, max: Vec3::splat(4.0), ..LoadRegion::default() });
    let obj = ObjRef::LoadRegion(LoadRegionId::from_raw(0));
    let ObjItem::LoadRegion(r) =
        face_drag(load.clone(), obj, Handle::Face { axis: 2, positive: false }, DVec3::new(2.0, 2.0, -3.2), Some(1.0))
    else {
        panic!()
    };
    assert_eq!((r.min, r.max), (Vec3::new(0.0, 0.0, -3.0), Vec3::splat(4.0)));
    let ObjItem::LoadRegion(r) =
        face_drag(load, obj, Handle::Face { axis: 2, positive: false }, DVec3::new(2.0, 2.0, 40.0), Some(1.0))
    else {
        panic!()
    };
    assert!(r.min.z < r.max.z, "{} {}", r.min, r.max);
    assert_eq!(r.min.z, 3.0);

    let prop = Prop { position: [2.0, 2.0, 2.0], box_pos: [0.5; 3], box_neg: [-0.5; 3], ..Prop::default() };
    let item = ObjItem::Entity(Box::new(MapEntity::new("crate", EntityData::Prop(prop))));
    let obj = ObjRef::Entity(EntityId::from_raw(0));
    let ObjItem::Entity(e) =
        face_drag(item.clone(), obj, Handle::Face { axis: 0, positive: true }, DVec3::new(4.0, 2.0, 2.0), Some(0.5))
    else {
        panic!()
    };
    let EntityData::Prop(p) = &e.entity.data else { panic!() };
    assert_eq!((p.box_pos, p.box_neg, p.position), ([2.0, 0.5, 0.5], [-0.5; 3], [2.0; 3]));
    // One unit wide with a 1-unit snap: it cannot shrink by a whole step, so nothing changes.
    let e = face_drag_edit(
        item.clone(),
        obj,
        Handle::Face { axis: 0, positive: true },
        DVec3::new(-5.0, 2.0, 2.0),
        Some(1.0),
    );
    assert_eq!(e, None);
    // Free, it stops at the minimum extent.
    let ObjItem::Entity(e) =
        face_drag(item, obj, Handle::Face { axis: 0, positive: true }, DVec3::new(-5.0, 2.0, 2.0), None)
    else {
        panic!()
    };
    let EntityData::Prop(p) = &e.entity.data else { panic!() };
    assert_eq!(p.box_pos[0] - p.box_neg[0], MIN_EXTENT as f32, "{:?} {:?}", p.box_pos, p.box_neg);
}

fn demo_state() -> EditorState {
    EditorState::new(sample::demo(), None, Arc::new(|| {}))
}

fn lamp(state: &EditorState) -> (LightId, Vec3) {
    let (id, l) = state.map.levels[0].objects.lights().by_name("hall_lamp").expect("demo lamp");
    (id, l.position)
}

#[test]
fn esc_cancel_yields_no_edit_and_no_undo_entry() {
    let mut s = demo_state();
    let (id, start) = lamp(&s);
    s.apply(Command::Select(Selection::Light { level: 0, id })).unwrap();
    let v = view(start.as_dvec3() + DVec3::new(-6.0, 4.0, -9.0), start.as_dvec3());
    let g = Gizmo::for_selection(&s, &v).expect("a selected light has a gizmo");
    let grab = segment_mid(&g, Handle::Axis(2));
    let (o, d) = ray_at(&v, grab);
    let mut drag = GizmoDrag::begin(&g, Handle::Axis(2), o, d).unwrap();
    assert_eq!(drag.cancel(), None, "nothing applied yet: Esc has nothing to undo");
    s.apply(Command::BeginStroke).unwrap();
    for dz in [1.0, 2.0, 3.0] {
        let (o, d) = ray_at(&v, grab + DVec3::Z * dz);
        let e = drag.drag(o, d, Some(1.0)).expect("moved");
        s.apply(Command::Edit(e)).unwrap();
    }
    assert_eq!(lamp(&s).1, start + Vec3::Z * 3.0);
    for c in drag.cancel().map(Command::Edit).into_iter().chain([Command::EndStroke]) {
        s.apply(c).unwrap();
    }
    assert_eq!(lamp(&s).1, start, "back at the start");
    assert!(!s.history.can_undo() && !s.history.can_redo(), "no undo entry: {:?}", s.history.undo_name());
}

#[test]
fn a_finished_drag_is_one_undo_step() {
    let mut s = demo_state();
    let (id, start) = lamp(&s);
    s.apply(Command::Select(Selection::Light { level: 0, id })).unwrap();
    let v = view(start.as_dvec3() + DVec3::new(-6.0, 4.0, -9.0), start.as_dvec3());
    let g = Gizmo::for_selection(&s, &v).unwrap();
    let Some(HandleShape::Point(h)) = g.shape(Handle::Range) else { panic!() };
    let (o, d) = ray_at(&v, h);
    let mut drag = GizmoDrag::begin(&g, Handle::Range, o, d).unwrap();
    s.apply(Command::BeginStroke).unwrap();
    for k in 1..=5 {
        let (o, d) = ray_at(&v, h + g.right * f64::from(k));
        if let Some(e) = drag.drag(o, d, Some(1.0)) {
            s.apply(Command::Edit(e)).unwrap();
        }
    }
    s.apply(Command::EndStroke).unwrap();
    let range = |s: &EditorState| s.map.levels[0].objects.lights().get(id).unwrap().range;
    assert_eq!(range(&s), 17.0);
    assert_eq!(s.history.len(), 1);
    s.apply(Command::Undo).unwrap();
    assert_eq!(range(&s), 12.0);
}

#[test]
fn region_outline_is_picked_unless_behind_a_surface() {
    let mut map = Map::new("t");
    let id = map.levels[0]
        .objects
        .add(LoadRegion { name: "r".into(), min: Vec3::ZERO, max: Vec3::splat(4.0), ..LoadRegion::default() })
        .unwrap();
    let level = &map.levels[0];
    let v = view(DVec3::new(-6.0, 8.0, -10.0), DVec3::splat(2.0));
    let edge_mid = DVec3::new(2.0, 4.0, 0.0);
    let (o, d) = ray_at(&v, edge_mid);
    assert_eq!(pick_region_outline(level, &v, (o, d), None, |_| true), Some(ObjRef::LoadRegion(id)));
    // A hidden region (H) is not picked.
    assert_eq!(pick_region_outline(level, &v, (o, d), None, |obj| obj != ObjRef::LoadRegion(id)), None);
    // A surface in front of the edge hides it.
    let t = (edge_mid - o).length();
    assert_eq!(pick_region_outline(level, &v, (o, d), Some(t - 1.0), |_| true), None);
    // The middle of a face is not the outline.
    let (o, d) = ray_at(&v, DVec3::new(2.0, 2.0, 0.0));
    assert_eq!(pick_region_outline(level, &v, (o, d), None, |_| true), None);
}

#[test]
fn overlay_of_a_selected_light_has_coloured_arrows_and_a_range_sphere() {
    let v = view(DVec3::new(6.0, 4.0, -10.0), DVec3::ZERO);
    let g = light_gizmo(&v, light_at(Vec3::ZERO));
    let count = |o: &Overlay, c: [f32; 4]| o.segments.iter().filter(|s| s.color == c).count();
    let mut o = Overlay::default();
    g.draw(&mut o, None);
    for c in AXIS_COLORS {
        assert_eq!(count(&o, c), 9, "shaft, 4 head lines, 4 rim lines");
    }
    assert_eq!(count(&o, RANGE), 4 * 48, "three axis circles and the outline");
    assert_eq!(count(&o, ACTIVE), 0);
    let mut o = Overlay::default();
    g.draw(&mut o, Some(Handle::Axis(1)));
    assert_eq!(count(&o, AXIS_COLORS[1]), 0);
    assert_eq!(count(&o, ACTIVE), 9, "the hovered arrow is highlighted");
    // A region: outline, arrows from its centre and six face handles; no centre handle.
    let env = EnvRef::Sound(SoundEnvId::from_raw(0));
    let r = ObjItem::Region(EnvironmentRegion::from_box(env, Vec3::ZERO, Vec3::splat(4.0)));
    let g = Gizmo::new(0, ObjRef::Region(RegionId::from_raw(0)), r, &v).unwrap();
    assert_eq!(g.handles.len(), 9);
    assert!(g.shape(Handle::Center).is_none());
    let Some(HandleShape::Segment(from, _)) = g.shape(Handle::Axis(0)) else { panic!("no X arrow") };
    assert!((from - DVec3::new(2.0 + g.size * 0.25, 2.0, 2.0)).length() < 1e-9, "{from}");
    let mut o = Overlay::default();
    g.draw(&mut o, None);
    assert_eq!(count(&o, overlay::SELECT), 12);
    assert_eq!(count(&o, AXIS_COLORS[0]), 9 + 2 * 12, "the X arrow and the ±X face handles");
}

#[test]
fn a_selected_region_is_outlined_whatever_the_tool() {
    let mut s = demo_state();
    let id = s.map.levels[0].objects.regions().id_of("moon_hill").expect("demo region");
    s.apply(Command::Select(Selection::Region { level: 0, id })).unwrap();
    let count = |o: &Overlay, c: [f32; 4]| o.segments.iter().filter(|seg| seg.color == c).count();
    let mut vp = Viewport::new(None);
    s.apply(Command::SetTool(tools::place::ID)).unwrap();
    let o = vp.build_overlay(&s, &tools::Preview::default(), false);
    assert_eq!(count(&o, overlay::SELECT), 12, "outlined with the Place tool");
    s.apply(Command::SetTool(tools::select::ID)).unwrap();
    vp.gizmo = Gizmo::for_selection(&s, &view(DVec3::new(0.0, 20.0, -30.0), DVec3::ZERO));
    let o = vp.build_overlay(&s, &tools::Preview::default(), false);
    assert_eq!(count(&o, overlay::SELECT), 12, "outlined by the gizmo");
    assert_eq!(count(&o, AXIS_COLORS[0]), 9 + 2 * 12, "the X arrow and the ±X face handles");
    // Gizmo and selection lines show through walls; markers faintly; the rest not.
    let xray =
        |o: &Overlay, c: [f32; 4]| o.segments.iter().filter(|seg| seg.color == c).map(|seg| seg.xray).sum::<f32>();
    assert_eq!(xray(&o, AXIS_COLORS[0]), (9 + 2 * 12) as f32 * overlay::XRAY_SELECTED);
}

#[test]
fn the_gizmo_and_the_selected_light_show_through_walls_the_grid_does_not() {
    let mut s = demo_state();
    let (id, p) = lamp(&s);
    s.apply(Command::Select(Selection::Light { level: 0, id })).unwrap();
    s.apply(Command::SetTool(tools::object::ID)).unwrap();
    let mut vp = Viewport::new(None);
    vp.gizmo = Gizmo::for_selection(&s, &view(p.as_dvec3() + DVec3::new(-5.0, 3.0, -8.0), p.as_dvec3()));
    let o = vp.build_overlay(&s, &tools::Preview::default(), false);
    let of = |c: [f32; 4]| o.segments.iter().filter(move |seg| seg.color == c);
    assert!(of(AXIS_COLORS[0]).count() > 0);
    assert!(of(AXIS_COLORS[0]).chain(of(RANGE)).all(|seg| seg.xray == overlay::XRAY_SELECTED));
    assert_eq!(of(overlay::SELECT).count(), 12, "the selected light's marker");
    assert!(of(overlay::SELECT).all(|seg| seg.xray == overlay::XRAY_SELECTED));
    // Other lights' markers: faint x-ray.
    assert!(of([1.0, 1.0, 0.6, 1.0]).count() > 0);
    assert!(of([1.0, 1.0, 0.6, 1.0]).all(|seg| seg.xray == overlay::XRAY_FAINT));
    // The grid and the hovered face outline stay depth-tested.
    let mut o = Overlay::default();
    let frame = s.map.levels[0].frame();
    o.with_xray(overlay::XRAY_NONE, |o| o.grid(&frame, Face::PosY, 0, DVec3::ZERO, 3, 2));
    assert!(!o.segments.is_empty() && o.segments.iter().all(|seg| seg.xray == 0.0));
    assert_eq!(o.xray, overlay::XRAY_FAINT, "with_xray puts the previous opacity back");
}

#[test]
fn a_region_arrow_moves_the_whole_region_snapped_or_free() {
    let env = EnvRef::Sound(SoundEnvId::from_raw(0));
    let region = ObjItem::Region(EnvironmentRegion::from_box(env, Vec3::ZERO, Vec3::splat(4.0)));
    let load = ObjItem::LoadRegion(LoadRegion { min: Vec3::ZERO, max: Vec3::splat(4.0), ..LoadRegion::default() });
    let v = view(DVec3::new(6.0, 14.0, -24.0), DVec3::splat(2.0));
    for (item, obj) in
        [(region, ObjRef::Region(RegionId::from_raw(0))), (load, ObjRef::LoadRegion(LoadRegionId::from_raw(0)))]
    {
        let g = Gizmo::new(0, obj, item.clone(), &v).unwrap();
        // Near the tip: the +Z face handle sits on this small region's arrow, and wins there.
        let Some(HandleShape::Segment(from, tip)) = g.shape(Handle::Axis(2)) else { panic!("no Z arrow") };
        let face = Handle::Face { axis: 2, positive: true };
        let Some(HandleShape::Point(face_at)) = g.shape(face) else { panic!("no +Z face") };
        assert!(face_at.z > from.z && face_at.z < tip.z, "the face handle is on the arrow");
        let (o, d) = ray_at(&v, face_at);
        assert_eq!(g.hit(&v, o, d), Some(face), "a point handle wins over the arrow it sits on");
        let grab = from + (tip - from) * 0.9;
        let (o, d) = ray_at(&v, grab);
        assert_eq!(g.hit(&v, o, d), Some(Handle::Axis(2)));
        for (step, expect) in [(Some(1.0), 3.0f32), (None, 3.2)] {
            let mut drag = GizmoDrag::begin(&g, Handle::Axis(2), o, d).unwrap();
            let (o2, d2) = ray_at(&v, grab + DVec3::Z * 3.2);
            let to = moved_to(drag.drag(o2, d2, step));
            let mut moved = item.clone();
            assert!(moved.set_position(to));
            let (a, b) = (item_box(&item).unwrap(), item_box(&moved).unwrap());
            for (a, b) in a.iter().zip(&b) {
                let by = (*b - *a).as_vec3();
                assert!(
                    (by - Vec3::Z * expect).length() < 1e-4,
                    "{obj:?} corner moved by {by}, expected {expect} on Z"
                );
            }
        }
    }
}

// ----- through the real viewport (egui_kittest, no GL) ---------------------------------------

fn harness() -> Harness<'static, App> {
    let mut h = Harness::builder()
        .with_size(egui::vec2(1280.0, 800.0))
        .build_eframe(|cc| App::new(cc, &Launch::default(), Document::sample(Sample::Demo)));
    h.run_steps(2);
    h
}

/// Selects the demo's hall lamp with the Lights & entities tool and points the camera at it;
/// returns its id, position and the screen position of the middle of its X arrow.
fn select_lamp(h: &mut Harness<'_, App>) -> (LightId, Vec3, egui::Pos2, egui::Vec2) {
    let (id, start) = lamp(&h.state().state);
    h.state_mut().state.apply(Command::Select(Selection::Light { level: 0, id })).unwrap();
    h.state_mut().state.apply(Command::SetTool(tools::object::ID)).unwrap();
    h.state_mut().viewport.camera.look_at(start.as_dvec3() + DVec3::new(-5.0, 3.0, -8.0), start.as_dvec3());
    h.run_steps(2);
    let v = h.state().viewport.view();
    let g = Gizmo::for_selection(&h.state().state, &v).expect("gizmo");
    let mid = segment_mid(&g, Handle::Axis(0));
    let a = v.to_screen(mid).unwrap();
    let b = v.to_screen(mid + DVec3::X * 3.2).unwrap();
    (id, start, a, b - a)
}

/// Presses at `at`, moves halfway and the whole way by `by`, releases there.
fn drag_by(h: &mut Harness<'_, App>, at: egui::Pos2, by: egui::Vec2) {
    h.drag_at(at);
    h.run_steps(1);
    h.hover_at(at + by * 0.5);
    h.run_steps(1);
    h.hover_at(at + by);
    h.run_steps(1);
    h.drop_at(at + by);
    h.run_steps(2);
}

#[test]
fn viewport_drag_of_the_x_arrow_moves_the_light_along_x_in_one_step() {
    let mut h = harness();
    let (id, start, at, by) = select_lamp(&mut h);
    h.hover_at(at);
    h.run_steps(1);
    assert_eq!(h.state().viewport.gizmo_hovered(), Some(Handle::Axis(0)));
    drag_by(&mut h, at, by);
    let s = &h.state().state;
    let p = s.map.levels[0].objects.lights().get(id).unwrap().position;
    assert_eq!(p, start + Vec3::X * 3.0, "moved 3 (snapped) along X only");
    assert_eq!(s.history.len(), 1);
    assert_eq!(s.history.undo_name(), Some("Move light hall_lamp"));
    assert_eq!(s.selection, Selection::Light { level: 0, id });
}

#[test]
fn viewport_esc_during_a_drag_restores_the_light_without_an_undo_entry() {
    let mut h = harness();
    let (id, start, at, by) = select_lamp(&mut h);
    h.hover_at(at);
    h.run_steps(1);
    h.drag_at(at);
    h.run_steps(1);
    h.hover_at(at + by);
    h.run_steps(1);
    let pos = |h: &Harness<'_, App>| h.state().state.map.levels[0].objects.lights().get(id).unwrap().position;
    assert_ne!(pos(&h), start, "the drag moves it live");
    h.key_press(egui::Key::Escape);
    h.run_steps(1);
    h.hover_at(at + by * 1.5);
    h.run_steps(1);
    h.drop_at(at + by * 1.5);
    h.run_steps(2);
    assert_eq!(pos(&h), start);
    assert!(!h.state().state.history.can_undo(), "{:?}", h.state().state.history.undo_name());
}

#[test]
fn viewport_click_on_a_region_outline_selects_it_and_shows_face_handles() {
    let mut h = harness();
    h.state_mut().state.apply(Command::SetTool(tools::select::ID)).unwrap();
    let (id, r) = {
        let objects = &h.state().state.map.levels[0].objects;
        let (id, r) = objects.load_regions().by_name("building").expect("demo load region");
        (id, r.clone())
    };
    // Look at the load region's top edge from outside, above it.
    let top_edge = DVec3::new(f64::from(r.min.x + r.max.x) * 0.5, f64::from(r.max.y), f64::from(r.min.z));
    h.state_mut().viewport.camera.look_at(top_edge + DVec3::new(0.0, 6.0, -14.0), top_edge);
    h.run_steps(2);
    let at = h.state().viewport.view().to_screen(top_edge).unwrap();
    h.hover_at(at);
    h.run_steps(1);
    h.drag_at(at);
    h.run_steps(1);
    h.drop_at(at);
    h.run_steps(2);
    assert_eq!(h.state().state.selection, Selection::LoadRegion { level: 0, id });
    // Its +Y face handle lifts the top by 2 (snapped).
    let v = h.state().viewport.view();
    let g = Gizmo::for_selection(&h.state().state, &v).expect("a region gizmo");
    let face = Handle::Face { axis: 1, positive: true };
    let Some(HandleShape::Point(p)) = g.shape(face) else { panic!() };
    let a = v.to_screen(p).unwrap();
    let b = v.to_screen(p + DVec3::Y * 2.2).unwrap();
    h.hover_at(a);
    h.run_steps(1);
    assert_eq!(h.state().viewport.gizmo_hovered(), Some(face));
    h.drag_at(a);
    h.run_steps(1);
    h.hover_at(b);
    h.run_steps(1);
    h.drop_at(b);
    h.run_steps(2);
    let s = &h.state().state;
    let now = s.map.levels[0].objects.load_regions().get(id).unwrap();
    assert_eq!(now.max, r.max + Vec3::Y * 2.0);
    assert_eq!(now.min, r.min);
    assert_eq!(s.history.len(), 1);
}

#[test]
fn viewport_drag_of_a_region_arrow_moves_it_in_one_step_and_esc_leaves_no_entry() {
    let mut h = harness();
    let (id, r) = {
        let objects = &h.state().state.map.levels[0].objects;
        let (id, r) = objects.load_regions().by_name("building").expect("demo load region");
        (id, r.clone())
    };
    h.state_mut().state.apply(Command::Select(Selection::LoadRegion { level: 0, id })).unwrap();
    h.state_mut().state.apply(Command::SetTool(tools::select::ID)).unwrap();
    let center = ((r.min + r.max) * 0.5).as_dvec3();
    h.state_mut().viewport.camera.look_at(center + DVec3::new(-6.0, 8.0, -20.0), center);
    h.run_steps(2);
    let v = h.state().viewport.view();
    let g = Gizmo::for_selection(&h.state().state, &v).expect("a region gizmo");
    let mid = segment_mid(&g, Handle::Axis(0));
    let at = v.to_screen(mid).unwrap();
    let by = v.to_screen(mid + DVec3::X * 3.2).unwrap() - at;
    let region = |h: &Harness<'_, App>| h.state().state.map.levels[0].objects.load_regions().get(id).unwrap().clone();

    // Esc during the drag: back where it was, no undo entry.
    h.hover_at(at);
    h.run_steps(1);
    assert_eq!(h.state().viewport.gizmo_hovered(), Some(Handle::Axis(0)));
    h.drag_at(at);
    h.run_steps(1);
    h.hover_at(at + by);
    h.run_steps(1);
    assert_ne!(region(&h).min, r.min, "the drag moves it live");
    h.key_press(egui::Key::Escape);
    h.run_steps(1);
    h.drop_at(at + by);
    h.run_steps(2);
    assert_eq!((region(&h).min, region(&h).max), (r.min, r.max));
    assert!(!h.state().state.history.can_undo(), "{:?}", h.state().state.history.undo_name());

    // A drag: moved 3 along X (snapped to the 1-unit cube), one undo step.
    h.hover_at(at);
    h.run_steps(1);
    drag_by(&mut h, at, by);
    let now = region(&h);
    assert_eq!((now.min, now.max), (r.min + Vec3::X * 3.0, r.max + Vec3::X * 3.0));
    let s = &h.state().state;
    assert_eq!(s.history.len(), 1);
    assert_eq!(s.history.undo_name(), Some("Move load region building"));
    assert_eq!(s.selection, Selection::LoadRegion { level: 0, id });
    h.state_mut().state.apply(Command::Undo).unwrap();
    assert_eq!(region(&h).min, r.min);
}
