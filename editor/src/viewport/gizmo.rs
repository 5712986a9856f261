//! Gizmos: handles drawn on the selected object that the pointer drags.
//!
//! | selection | handles |
//! | --- | --- |
//! | light | centre (drag over surfaces), X/Y/Z arrows, range handle on the range sphere (spot: at the tip of the cone) |
//! | entity with a position | centre, X/Y/Z arrows; a box (prop, generic: `box_pos`/`box_neg`; trigger: `bounds`) adds 6 face handles |
//! | environment region, load region | X/Y/Z arrows from its centre, 6 face handles (the selected region is outlined) |
//!
//! Gizmos are a viewport service: they show, and take the pointer before the tool does, with
//! the tools that ask for them ([`crate::tools::ToolInfo::gizmos`]: Select, Lights & entities).
//! The drag in progress is the viewport's, not the tool's.
//!
//! # Dragging
//! - An **arrow** moves the object along its axis only: the pointer ray is projected onto the
//!   axis line ([`closest_on_line`]) and the object moves by the change since the press,
//!   snapped to the current cube size unless Ctrl is held ([`snap`], relative: an object half a
//!   unit off the grid stays half a unit off). A region moves whole (every corner).
//! - The **centre** keeps the older move over the surfaces under the pointer.
//! - A **range** handle changes a light's `range` (the distance along the handle's line, same
//!   snapping, never below 0).
//! - A **face** handle moves that face of a box along its axis (same snapping); the box never
//!   gets thinner than [`MIN_EXTENT`] ([`clamp_face_delta`]), so min stays below max.
//!
//! Every step is applied at once (the bake follows the drag) inside one stroke, so a drag is one
//! undo step ([`Edit::MoveObject`] for arrows and the centre, [`Edit::ReplaceObject`] for range
//! and faces). **Esc** during a drag re-applies the start value in the same stroke; the history
//! then annuls the stroke, leaving no undo entry ([`GizmoDrag::cancel`]).
//!
//! # Picking
//! Handles are hit in screen space: the distance from the pointer ray to a handle point or
//! arrow segment, converted to pixels at the handle's depth, must be under [`HANDLE_PX`]; a point
//! handle in reach wins over an arrow (a small region's face handles sit on its arrows), else the
//! nearest wins. Regions are picked by their **outline**: a click within [`REGION_PICK_PX`] of
//! one of a region's twelve edges, where that edge is not behind the surface under the pointer,
//! selects it (Select and Lights & entities tools, only while regions are shown). Clicking
//! inside a region's volume keeps doing what the tool does there, so big regions (sky, weather)
//! never swallow clicks on the cubes inside them. Order on a press: gizmo handle, object marker,
//! region outline, then the tool's own action.

use eframe::egui;
use glam::{DVec3, Vec3};

use pmfedit_core::edit::{Edit, ObjItem, ObjRef};
use pmfedit_core::format::pmf::entity::EntityData;
use pmfedit_core::map::Level;
use pmfedit_core::map::library::{BOX_CORNER_SIGNS, LightShape};

use super::Viewport;
use super::camera::Camera;
use super::overlay::{self, Overlay};
use crate::command::Command;
use crate::selection::Selection;
use crate::state::EditorState;
use crate::tools::{self, Mods, Pick};

/// Hit radius of a handle, pixels.
pub const HANDLE_PX: f64 = 9.0;
/// How close to a region's edge a click must be to select it, pixels.
pub const REGION_PICK_PX: f64 = 6.0;
/// Arrow length as a fraction of the distance to the camera (constant size on screen).
pub const GIZMO_SCALE: f64 = 0.16;
/// The thinnest a box may get by dragging a face, map units (one lattice unit).
pub const MIN_EXTENT: f64 = 0.125;

/// Colours of the X, Y and Z handles.
pub const AXIS_COLORS: [[f32; 4]; 3] = [[1.0, 0.25, 0.25, 1.0], [0.3, 0.95, 0.3, 1.0], [0.35, 0.55, 1.0, 1.0]];
/// Colour of the hovered or dragged handle.
pub const ACTIVE: [f32; 4] = overlay::HOVER;
/// Colour of the centre handle.
pub const CENTER: [f32; 4] = [1.0, 1.0, 1.0, 1.0];
/// Colour of a light's range sphere or cone.
pub const RANGE: [f32; 4] = [1.0, 0.95, 0.55, 0.55];

/// One handle of a gizmo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handle {
    /// The centre: drags the object over the surfaces under the pointer.
    Center,
    /// The arrow of axis 0 (X), 1 (Y) or 2 (Z): moves along that axis only.
    Axis(usize),
    /// A light's range.
    Range,
    /// The face of a box on `axis`, on its positive or negative side.
    Face {
        /// 0 X, 1 Y, 2 Z.
        axis: usize,
        /// The +axis face (else the −axis face).
        positive: bool,
    },
}

const AXIS_NAMES: [&str; 3] = ["X", "Y", "Z"];

/// A status-bar / tooltip hint for a handle.
pub fn hint(handle: Handle) -> String {
    let snapping = "snaps to the cube size (Ctrl: free) · Esc cancels";
    match handle {
        Handle::Center => "Drag: move over the surfaces under the pointer · Esc cancels".to_owned(),
        Handle::Axis(a) => format!("Drag: move along {} · {snapping}", AXIS_NAMES[a.min(2)]),
        Handle::Range => format!("Drag: change the light's range · {snapping}"),
        Handle::Face { axis, positive } => {
            format!("Drag: move the {}{} face · {snapping}", if positive { "+" } else { "−" }, AXIS_NAMES[axis.min(2)])
        }
    }
}

/// Where a handle is, for hit-testing and drawing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HandleShape {
    /// A small box around a point.
    Point(DVec3),
    /// An arrow from the first point to the second.
    Segment(DVec3, DVec3),
}

/// The camera and the viewport rectangle: rays through pixels, pixels of world points.
#[derive(Debug, Clone, PartialEq)]
pub struct View {
    pub camera: Camera,
    /// The viewport, egui points.
    pub rect: egui::Rect,
}

impl View {
    /// The world ray (origin, unit direction) through a screen position.
    pub fn ray(&self, pos: egui::Pos2) -> (DVec3, DVec3) {
        let r = self.rect;
        let x = f64::from((pos.x - r.left()) / r.width().max(1.0)) * 2.0 - 1.0;
        let y = 1.0 - f64::from((pos.y - r.top()) / r.height().max(1.0)) * 2.0;
        self.camera.ray(x, y, self.aspect())
    }

    /// Where a world point lands on screen, `None` behind the camera.
    pub fn to_screen(&self, p: DVec3) -> Option<egui::Pos2> {
        let n = self.camera.project(p, self.aspect() as f32)?;
        let r = self.rect;
        Some(egui::pos2(r.left() + (n.x + 1.0) * 0.5 * r.width(), r.top() + (1.0 - n.y) * 0.5 * r.height()))
    }

    fn aspect(&self) -> f64 {
        f64::from(self.rect.width().max(1.0) / self.rect.height().max(1.0))
    }

    /// Map units per screen point at world point `p`.
    pub fn units_per_px(&self, p: DVec3) -> f64 {
        self.camera.units_per_px(p, f64::from(self.rect.height()))
    }

    /// The arrow length of a gizmo at `p` (a constant size on screen).
    pub fn gizmo_size(&self, p: DVec3) -> f64 {
        self.camera.apparent_distance(p).max(0.5) * GIZMO_SCALE
    }
}

/// `v` rounded to a multiple of `step` (`None`, or a step ≤ 0: unchanged).
pub fn snap(v: f64, step: Option<f64>) -> f64 {
    match step {
        Some(s) if s > 0.0 => (v / s).round() * s,
        _ => v,
    }
}

/// The snap step for a cube size (`2^cube_log2` lattice units, 8 per map unit), or `None`
/// (free) while Ctrl is held.
pub fn snap_step(cube_log2: u8, ctrl: bool) -> Option<f64> {
    (!ctrl).then(|| f64::from(1u32 << cube_log2.min(30)) / 8.0)
}

/// The parameter `s` of the point of the line `origin + s·dir` (unit `dir`) closest to the ray
/// `ray_o + t·ray_d` (unit `ray_d`); `None` when they are (nearly) parallel.
pub fn closest_on_line(origin: DVec3, dir: DVec3, ray_o: DVec3, ray_d: DVec3) -> Option<f64> {
    let r = origin - ray_o;
    let b = dir.dot(ray_d);
    let denom = 1.0 - b * b;
    if denom < 1e-6 {
        return None;
    }
    let c = dir.dot(r);
    let f = ray_d.dot(r);
    Some((b * f - c) / denom)
}

/// The closest approach of a ray (unit `d`) to the segment `a`–`b`: (distance, point on the
/// segment). Points behind the ray origin count from the origin.
pub fn ray_segment(o: DVec3, d: DVec3, a: DVec3, b: DVec3) -> (f64, DVec3) {
    let u = b - a;
    let len2 = u.length_squared();
    let s = if len2 < 1e-18 {
        0.0
    } else {
        let len = len2.sqrt();
        closest_on_line(a, u / len, o, d).map_or(0.0, |s| (s / len).clamp(0.0, 1.0))
    };
    let p = a + u * s;
    (ray_point(o, d, p), p)
}

/// Distance from the point `p` to the ray (`o`, unit `d`).
pub fn ray_point(o: DVec3, d: DVec3, p: DVec3) -> f64 {
    let t = (p - o).dot(d).max(0.0);
    (o + d * t - p).length()
}

/// The unit vector of an axis.
fn unit(axis: usize) -> DVec3 {
    let mut v = DVec3::ZERO;
    v[axis.min(2)] = 1.0;
    v
}

/// Whether corner `i` (PMF order, [`BOX_CORNER_SIGNS`]) is on the positive side of `axis`.
fn corner_positive(i: usize, axis: usize) -> bool {
    BOX_CORNER_SIGNS[i][axis] > 0.0
}

/// The point the centre handle sits on: a light's or entity's position (regions have none).
fn anchor(item: &ObjItem) -> Option<DVec3> {
    match item {
        ObjItem::Light(_) | ObjItem::Entity(_) => item.position().map(|p| p.as_dvec3()),
        ObjItem::Region(_) | ObjItem::LoadRegion(_) => None,
    }
}

/// The point the arrows start from: the object's position (a region's: the centre of its
/// bounds), `None` for an entity without one.
fn arrow_origin(item: &ObjItem) -> Option<DVec3> {
    item.position().map(|p| p.as_dvec3())
}

/// The box of an object with one, as 8 world corners in PMF order ([`BOX_CORNER_SIGNS`]):
/// prop and generic entities (position + `box_neg`/`box_pos`), triggers (position + `bounds`),
/// environment regions (their corners) and load regions (`min`/`max`).
pub fn item_box(item: &ObjItem) -> Option<[DVec3; 8]> {
    let from_offsets = |pos: [f32; 3], neg: [f32; 3], pos_off: [f32; 3]| {
        let p = Vec3::from_array(pos).as_dvec3();
        std::array::from_fn(|i| {
            let mut c = p;
            for a in 0..3 {
                c[a] += f64::from(if corner_positive(i, a) { pos_off[a] } else { neg[a] });
            }
            c
        })
    };
    match item {
        ObjItem::Light(_) => None,
        ObjItem::Entity(e) => match &e.entity.data {
            EntityData::Prop(p) => Some(from_offsets(p.position, p.box_neg, p.box_pos)),
            EntityData::Generic(g) => Some(from_offsets(g.position, g.box_neg, g.box_pos)),
            EntityData::Trigger(t) => {
                let p = Vec3::from_array(t.position);
                Some(t.bounds.map(|c| (p + Vec3::from_array(c)).as_dvec3()))
            }
            _ => None,
        },
        ObjItem::Region(r) => Some(r.corners.map(|c| c.as_dvec3())),
        ObjItem::LoadRegion(r) => {
            let (lo, hi) = (r.min.as_dvec3(), r.max.as_dvec3());
            Some(std::array::from_fn(|i| {
                DVec3::from_array(std::array::from_fn(|a| if corner_positive(i, a) { hi[a] } else { lo[a] }))
            }))
        }
    }
}

/// The centre of the face of `corners` on `axis` (positive or negative side).
pub fn face_center(corners: &[DVec3; 8], axis: usize, positive: bool) -> DVec3 {
    let on: Vec<DVec3> = (0..8).filter(|&i| corner_positive(i, axis) == positive).map(|i| corners[i]).collect();
    on.iter().copied().sum::<DVec3>() / on.len() as f64
}

/// The largest amount a face of `corners` on `axis` may shrink, as the lowest allowed growth
/// (negative: it may shrink that much): every edge along the axis keeps at least
/// [`MIN_EXTENT`].
fn face_growth_bound(corners: &[DVec3; 8], axis: usize) -> f64 {
    (0..8)
        .filter(|&i| corner_positive(i, axis))
        .map(|i| {
            // The corner across the box on `axis` (PMF bits: 1 −X, 4 −Y, 2 −Z).
            let j = i ^ [1, 4, 2][axis];
            MIN_EXTENT - (corners[i][axis] - corners[j][axis])
        })
        .fold(f64::NEG_INFINITY, f64::max)
}

/// Limits a face move `delta` (along +axis, map units) so that the box keeps at least
/// [`MIN_EXTENT`] on that axis; with a snap step the limit is the snapped amount nearest to it.
/// A box already thinner than that cannot shrink further (it is never pushed to grow).
pub fn clamp_face_delta(corners: &[DVec3; 8], axis: usize, positive: bool, delta: f64, step: Option<f64>) -> f64 {
    let bound = face_growth_bound(corners, axis);
    let growth = if positive { delta } else { -delta };
    if growth >= bound {
        return delta;
    }
    let mut g = match step {
        Some(s) if s > 0.0 => (bound / s).ceil() * s,
        _ => bound,
    };
    if g > 0.0 {
        g = 0.0;
    }
    if positive { g } else { -g }
}

/// `item` with the face on `axis` moved by `delta` (map units along +axis; not checked, see
/// [`clamp_face_delta`]); `None` for an object without a box.
pub fn move_face(item: &ObjItem, axis: usize, positive: bool, delta: f64) -> Option<ObjItem> {
    let d = delta as f32;
    let mut out = item.clone();
    let side = |i: usize| corner_positive(i, axis) == positive;
    match &mut out {
        ObjItem::Light(_) => return None,
        ObjItem::Entity(e) => match &mut e.entity.data {
            EntityData::Prop(p) => *if positive { &mut p.box_pos[axis] } else { &mut p.box_neg[axis] } += d,
            EntityData::Generic(g) => *if positive { &mut g.box_pos[axis] } else { &mut g.box_neg[axis] } += d,
            EntityData::Trigger(t) => {
                for (i, c) in t.bounds.iter_mut().enumerate() {
                    if side(i) {
                        c[axis] += d;
                    }
                }
            }
            _ => return None,
        },
        ObjItem::Region(r) => {
            for (i, c) in r.corners.iter_mut().enumerate() {
                if side(i) {
                    c[axis] += d;
                }
            }
        }
        ObjItem::LoadRegion(r) => *if positive { &mut r.max[axis] } else { &mut r.min[axis] } += d,
    }
    Some(out)
}

/// The line a light's range handle slides on (from the light, unit direction): a spot light's
/// axis, else `right` (the camera's right, so the handle sits on the sphere's outline).
fn range_line(item: &ObjItem, right: DVec3) -> Option<(DVec3, DVec3, f64)> {
    let ObjItem::Light(l) = item else { return None };
    let dir = match l.shape {
        LightShape::Spot { direction, .. } => direction.as_dvec3().try_normalize().unwrap_or(DVec3::NEG_Y),
        _ => right,
    };
    Some((l.position.as_dvec3(), dir, f64::from(l.range)))
}

/// The handles of one selected object, as seen from one camera.
#[derive(Debug, Clone, PartialEq)]
pub struct Gizmo {
    pub level: usize,
    pub obj: ObjRef,
    /// The object's current value.
    pub item: ObjItem,
    /// Arrow length, map units.
    pub size: f64,
    /// The camera's right vector (a point light's range handle lies along it).
    pub right: DVec3,
    /// The camera's up vector.
    pub up: DVec3,
    /// Every handle with where it is.
    pub handles: Vec<(Handle, HandleShape)>,
}

impl Gizmo {
    /// The gizmo of `item` (object `obj` of `level`) for `view`; `None` when it has no handle.
    pub fn new(level: usize, obj: ObjRef, item: ObjItem, view: &View) -> Option<Self> {
        let right = view.camera.right();
        let up = view.camera.up();
        let mut handles = Vec::new();
        let center = anchor(&item).or_else(|| item_box(&item).map(|c| c.iter().copied().sum::<DVec3>() / 8.0))?;
        let size = view.gizmo_size(center);
        if let Some(p) = anchor(&item) {
            handles.push((Handle::Center, HandleShape::Point(p)));
        }
        if let Some(p) = arrow_origin(&item) {
            for a in 0..3 {
                handles.push((Handle::Axis(a), HandleShape::Segment(p + unit(a) * size * 0.25, p + unit(a) * size)));
            }
        }
        if let Some((p, dir, range)) = range_line(&item, right) {
            handles.push((Handle::Range, HandleShape::Point(p + dir * range)));
        }
        if let Some(corners) = item_box(&item) {
            for axis in 0..3 {
                for positive in [true, false] {
                    let c = face_center(&corners, axis, positive);
                    handles.push((Handle::Face { axis, positive }, HandleShape::Point(c)));
                }
            }
        }
        (!handles.is_empty()).then_some(Self { level, obj, item, size, right, up, handles })
    }

    /// The gizmo of the selection (on the active level), if it has one.
    pub fn for_selection(state: &EditorState, view: &View) -> Option<Self> {
        let (level, obj) = state.selection.object()?;
        if level != state.level {
            return None;
        }
        let item = obj.get(&state.map.levels.get(level)?.objects)?;
        Self::new(level, obj, item, view)
    }

    /// Where `handle` is.
    pub fn shape(&self, handle: Handle) -> Option<HandleShape> {
        self.handles.iter().find(|(h, _)| *h == handle).map(|(_, s)| *s)
    }

    /// The handle under the pointer ray `(o, d)`, among those within [`HANDLE_PX`] on screen: a
    /// point handle before an arrow, then the nearest.
    pub fn hit(&self, view: &View, o: DVec3, d: DVec3) -> Option<Handle> {
        // (is an arrow, pixels): points sort first.
        let mut best: Option<((bool, f64), Handle)> = None;
        for (h, shape) in &self.handles {
            let (dist, at) = match *shape {
                HandleShape::Point(p) => (ray_point(o, d, p), p),
                HandleShape::Segment(a, b) => ray_segment(o, d, a, b),
            };
            if (at - o).dot(d) <= 0.0 {
                continue;
            }
            let px = dist / view.units_per_px(at);
            let key = (matches!(shape, HandleShape::Segment(..)), px);
            if px <= HANDLE_PX && best.is_none_or(|(b, _)| key < b) {
                best = Some((key, *h));
            }
        }
        best.map(|(_, h)| h)
    }

    /// Draws the gizmo: arrows in axis colours, the centre, a light's range sphere (spot: cone)
    /// with its handle, a box's outline with its face handles; `active` (hovered or dragged) in
    /// [`ACTIVE`].
    pub fn draw(&self, o: &mut Overlay, active: Option<Handle>) {
        let hs = self.size * 0.05;
        let color = |h: Handle, base: [f32; 4]| if active == Some(h) { ACTIVE } else { base };
        if let ObjItem::Light(l) = &self.item {
            let p = l.position.as_dvec3();
            let r = f64::from(l.range);
            match l.shape {
                LightShape::Spot { direction, cone_radius } => {
                    let dir = direction.as_dvec3().try_normalize().unwrap_or(DVec3::NEG_Y);
                    let half = f64::from(cone_radius).to_radians().min(std::f64::consts::PI);
                    let (u, v) = dir.any_orthonormal_pair();
                    let base = p + dir * r * half.cos();
                    let br = r * half.sin();
                    circle(o, base, u, v, br, RANGE);
                    for k in 0..8 {
                        let ang = k as f64 * std::f64::consts::TAU / 8.0;
                        o.line(p, base + (u * ang.cos() + v * ang.sin()) * br, RANGE);
                    }
                    // The cap: an arc through the tip in two planes.
                    for w in [u, v] {
                        arc(o, p, dir, w, r, -half, half, RANGE);
                    }
                }
                _ => {
                    circle(o, p, DVec3::X, DVec3::Y, r, RANGE);
                    circle(o, p, DVec3::Y, DVec3::Z, r, RANGE);
                    circle(o, p, DVec3::Z, DVec3::X, r, RANGE);
                    circle(o, p, self.right, self.up, r, RANGE);
                }
            }
        }
        if let Some(corners) = item_box(&self.item) {
            o.hexa_lines(&corners, overlay::SELECT);
            if matches!(self.item, ObjItem::Region(_) | ObjItem::LoadRegion(_)) {
                o.hexa_fill(&corners, [overlay::SELECT[0], overlay::SELECT[1], overlay::SELECT[2], 0.06]);
            }
        }
        for (h, shape) in &self.handles {
            match (*h, *shape) {
                (Handle::Axis(a), HandleShape::Segment(from, to)) => {
                    let c = color(*h, AXIS_COLORS[a]);
                    arrow(o, from, to, c);
                }
                (Handle::Center, HandleShape::Point(p)) => {
                    let c = color(*h, CENTER);
                    o.box_lines(p - DVec3::splat(hs * 1.2), p + DVec3::splat(hs * 1.2), c);
                }
                (Handle::Range, HandleShape::Point(p)) => {
                    let c = color(*h, RANGE_HANDLE);
                    o.box_lines(p - DVec3::splat(hs), p + DVec3::splat(hs), c);
                    o.box_fill(p - DVec3::splat(hs), p + DVec3::splat(hs), [c[0], c[1], c[2], 0.6]);
                }
                (Handle::Face { axis, .. }, HandleShape::Point(p)) => {
                    let c = color(*h, AXIS_COLORS[axis]);
                    o.box_lines(p - DVec3::splat(hs), p + DVec3::splat(hs), c);
                    o.box_fill(p - DVec3::splat(hs), p + DVec3::splat(hs), [c[0], c[1], c[2], 0.6]);
                }
                _ => {}
            }
        }
    }
}

/// Colour of a light's range handle.
pub const RANGE_HANDLE: [f32; 4] = [1.0, 0.85, 0.3, 1.0];

/// A circle around `c` in the plane of the unit vectors `u`, `v`.
fn circle(o: &mut Overlay, c: DVec3, u: DVec3, v: DVec3, r: f64, color: [f32; 4]) {
    arc(o, c, u, v, r, 0.0, std::f64::consts::TAU, color);
}

/// An arc of radius `r` around `c` from angle `a0` to `a1` (0 along `u`, π/2 along `v`).
#[allow(clippy::too_many_arguments)]
fn arc(o: &mut Overlay, c: DVec3, u: DVec3, v: DVec3, r: f64, a0: f64, a1: f64, color: [f32; 4]) {
    const N: usize = 48;
    let pt = |k: usize| {
        let a = a0 + (a1 - a0) * k as f64 / N as f64;
        c + (u * a.cos() + v * a.sin()) * r
    };
    for k in 0..N {
        o.line(pt(k), pt(k + 1), color);
    }
}

/// A line with a four-line arrowhead at `to`.
fn arrow(o: &mut Overlay, from: DVec3, to: DVec3, color: [f32; 4]) {
    o.line(from, to, color);
    let d = to - from;
    let len = d.length();
    let Some(dir) = d.try_normalize() else { return };
    let (u, v) = dir.any_orthonormal_pair();
    let back = to - dir * len * 0.22;
    let w = len * 0.08;
    for s in [u, -u, v, -v] {
        o.line(to, back + s * w, color);
    }
    o.line(back + u * w, back + v * w, color);
    o.line(back + v * w, back - u * w, color);
    o.line(back - u * w, back - v * w, color);
    o.line(back - v * w, back + u * w, color);
}

/// The region or load region of `level` whose outline passes within [`REGION_PICK_PX`] of the
/// pointer ray `(o, d)` and is not behind `surface` (the distance along the ray to the surface
/// under the pointer, if any); the nearest on screen wins. Only regions `shows` lets through are
/// picked (H / I hide objects).
pub fn pick_region_outline(
    level: &Level,
    view: &View,
    (o, d): (DVec3, DVec3),
    surface: Option<f64>,
    shows: impl Fn(ObjRef) -> bool,
) -> Option<ObjRef> {
    let mut best: Option<(f64, ObjRef)> = None;
    let objects = &level.objects;
    let regions = objects.regions().iter().map(|(id, r)| (ObjRef::Region(id), ObjItem::Region(r.clone())));
    let loads = objects.load_regions().iter().map(|(id, r)| (ObjRef::LoadRegion(id), ObjItem::LoadRegion(r.clone())));
    for (id, item) in regions.chain(loads).filter(|(id, _)| shows(*id)) {
        let Some(c) = item_box(&item) else { continue };
        for i in 0..8usize {
            for bit in [1usize, 2, 4] {
                let j = i ^ bit;
                if i > j {
                    continue;
                }
                let (dist, at) = ray_segment(o, d, c[i], c[j]);
                let t = (at - o).dot(d);
                if t <= 0.0 || surface.is_some_and(|s| t > s + 0.05) {
                    continue;
                }
                let px = dist / view.units_per_px(at);
                if px <= REGION_PICK_PX && best.is_none_or(|(b, _)| px < b) {
                    best = Some((px, id));
                }
            }
        }
    }
    best.map(|(_, id)| id)
}

/// A gizmo drag in progress: what it edits, the value at the press, and the last value sent.
#[derive(Debug, Clone, PartialEq)]
pub struct GizmoDrag {
    pub level: usize,
    pub obj: ObjRef,
    pub handle: Handle,
    start: ObjItem,
    current: ObjItem,
    /// The line the handle slides on (a point on it and a unit direction).
    line: (DVec3, DVec3),
    /// Where on the line the pointer grabbed it.
    grab: f64,
    applied: bool,
}

impl GizmoDrag {
    /// Starts dragging `handle` of `gizmo` with the pointer ray `(o, d)`; `None` when the
    /// handle's line is (nearly) along the ray.
    pub fn begin(gizmo: &Gizmo, handle: Handle, o: DVec3, d: DVec3) -> Option<Self> {
        let line = match handle {
            Handle::Center => return Some(Self::center(gizmo.level, gizmo.obj, gizmo.item.clone())),
            Handle::Axis(a) => (arrow_origin(&gizmo.item)?, unit(a)),
            Handle::Range => {
                let (p, dir, _) = range_line(&gizmo.item, gizmo.right)?;
                (p, dir)
            }
            Handle::Face { axis, positive } => (face_center(&item_box(&gizmo.item)?, axis, positive), unit(axis)),
        };
        let grab = closest_on_line(line.0, line.1, o, d)?;
        Some(Self {
            level: gizmo.level,
            obj: gizmo.obj,
            handle,
            start: gizmo.item.clone(),
            current: gizmo.item.clone(),
            line,
            grab,
            applied: false,
        })
    }

    /// A centre drag (over the surfaces) of `item`, object `obj` of `level`.
    pub fn center(level: usize, obj: ObjRef, item: ObjItem) -> Self {
        Self {
            level,
            obj,
            handle: Handle::Center,
            start: item.clone(),
            current: item,
            line: (DVec3::ZERO, DVec3::X),
            grab: 0.0,
            applied: false,
        }
    }

    /// The value at the press.
    pub fn start(&self) -> &ObjItem {
        &self.start
    }

    /// The last value sent.
    pub fn current(&self) -> &ObjItem {
        &self.current
    }

    /// The object's value for the pointer ray `(o, d)`, snapped to `step` map units (`None`:
    /// free); `None` when the ray runs along the handle's line or the handle is the centre.
    pub fn value(&self, o: DVec3, d: DVec3, step: Option<f64>) -> Option<ObjItem> {
        let s = closest_on_line(self.line.0, self.line.1, o, d)?;
        let delta = snap(s - self.grab, step);
        match self.handle {
            Handle::Center => None,
            Handle::Axis(a) => {
                let mut p = self.start.position()?.as_dvec3();
                p[a] += delta;
                let mut item = self.start.clone();
                item.set_position(p.as_vec3()).then_some(item)
            }
            Handle::Range => {
                let ObjItem::Light(l) = &self.start else { return None };
                let mut l = l.clone();
                l.range = (f64::from(l.range) + delta).max(0.0) as f32;
                Some(ObjItem::Light(l))
            }
            Handle::Face { axis, positive } => {
                let corners = item_box(&self.start)?;
                let delta = clamp_face_delta(&corners, axis, positive, delta, step);
                move_face(&self.start, axis, positive, delta)
            }
        }
    }

    /// The edit that takes the object to `item`, if that differs from the last value sent.
    fn send(&mut self, item: ObjItem) -> Option<Edit> {
        if item == self.current {
            return None;
        }
        self.current = item;
        self.applied = true;
        Some(match self.handle {
            Handle::Center | Handle::Axis(_) => Edit::MoveObject {
                level: self.level,
                id: self.obj,
                position: self.current.position().unwrap_or_default(),
            },
            Handle::Range | Handle::Face { .. } => {
                Edit::ReplaceObject { level: self.level, id: self.obj, item: self.current.clone() }
            }
        })
    }

    /// One drag step with the pointer ray `(o, d)`: the edit to apply, if the value changed.
    pub fn drag(&mut self, o: DVec3, d: DVec3, step: Option<f64>) -> Option<Edit> {
        let item = self.value(o, d, step)?;
        self.send(item)
    }

    /// One centre-drag step to world position `to`: the edit to apply, if it moved.
    pub fn drag_to(&mut self, to: Vec3) -> Option<Edit> {
        let cur = self.current.position()?;
        if (cur - to).length() <= 1e-4 {
            return None;
        }
        let mut item = self.current.clone();
        item.set_position(to).then_some(())?;
        self.send(item)
    }

    /// Esc: the edit that puts the start value back (applied inside the drag's stroke, which the
    /// history then annuls), or `None` when nothing was applied.
    pub fn cancel(&self) -> Option<Edit> {
        self.applied.then(|| Edit::ReplaceObject { level: self.level, id: self.obj, item: self.start.clone() })
    }
}

// ----- the viewport's use of it -------------------------------------------------------------

impl Viewport {
    /// The camera and viewport rectangle of the last frame.
    pub fn view(&self) -> View {
        View { camera: self.camera.clone(), rect: self.rect }
    }

    /// The handle under the pointer, if any.
    pub fn gizmo_hovered(&self) -> Option<Handle> {
        self.gizmo_hover
    }

    /// The hint of the hovered or dragged handle.
    pub fn gizmo_hint(&self) -> Option<String> {
        match &self.gizmo_drag {
            Some(d) => Some(hint(d.handle)),
            None => self.gizmo_hover.map(hint),
        }
    }

    /// Builds this frame's gizmo (when the tool uses `gizmos`) and, unless a drag is open,
    /// finds the handle (or region outline) under the pointer. Call after
    /// [`Viewport::update_hover`].
    pub(super) fn update_gizmo(
        &mut self,
        ui: &egui::Ui,
        state: &EditorState,
        rect: egui::Rect,
        gizmos: bool,
        dragging: bool,
    ) {
        self.rect = rect;
        let view = self.view();
        self.gizmo = gizmos.then(|| Gizmo::for_selection(state, &view)).flatten();
        self.gizmo_hover = None;
        self.region_hover = None;
        if dragging {
            return;
        }
        let Some((o, d)) = self.pointer_ray(ui, rect) else { return };
        if let Some(g) = &self.gizmo {
            self.gizmo_hover = g.hit(&view, o, d);
        }
        if self.gizmo_hover.is_none() && self.hover_object.is_none() && self.show_regions && gizmos {
            let Some(level) = state.map.levels.get(state.level) else { return };
            let surface = self.hover.map(|p| (level.frame().world_from_lattice_f(p.point) - o).length());
            let shows = |obj| self.object_shown(state.level, obj);
            self.region_hover = pick_region_outline(level, &view, (o, d), surface, shows).map(|id| (state.level, id));
        }
    }

    /// A press with a gizmo tool: starts a handle drag, selects (and starts a centre drag of) the
    /// object marker under the pointer, or selects the region whose outline is under it.
    /// `true` when the press was taken.
    pub(super) fn gizmo_press(&mut self, ui: &egui::Ui, state: &EditorState, out: &mut Vec<Command>) -> bool {
        if let (Some(g), Some(h)) = (&self.gizmo, self.gizmo_hover)
            && let Some((o, d)) = self.pointer_ray(ui, self.rect)
            && let Some(drag) = GizmoDrag::begin(g, h, o, d)
        {
            out.push(Command::BeginStroke);
            self.gizmo_drag = Some(Box::new(drag));
            return true;
        }
        // Shift or Ctrl: the object joins the selection (or leaves it); no drag.
        let adding = self.pointer.mods.shift || self.pointer.mods.ctrl;
        if let Some((level, obj)) = self.hover_object.or(self.region_hover)
            && adding
        {
            out.push(Command::Select(state.selection.toggled(level, obj)));
            return true;
        }
        if let Some((level, obj)) = self.hover_object {
            out.push(Command::Select(Selection::of_object(level, obj)));
            if let Some(item) = state.map.levels.get(level).and_then(|l| obj.get(&l.objects)) {
                out.push(Command::BeginStroke);
                self.gizmo_drag = Some(Box::new(GizmoDrag::center(level, obj, item)));
            }
            return true;
        }
        if let Some((level, obj)) = self.region_hover {
            out.push(Command::Select(Selection::of_object(level, obj)));
            return true;
        }
        false
    }

    /// The hovered handle's hint as a tooltip at the pointer.
    pub(super) fn gizmo_tooltip(&self, response: &egui::Response) {
        if let (Some(h), None) = (self.gizmo_hover, &self.gizmo_drag) {
            response.clone().on_hover_text_at_pointer(hint(h));
        }
    }

    /// Draws the gizmo (the dragged handle, else the hovered one, highlighted) and the region
    /// outline under the pointer. Without a gizmo (another tool) a selected region is still
    /// outlined.
    pub(super) fn draw_gizmo(&self, state: &EditorState, o: &mut Overlay) {
        let outline = |o: &mut Overlay, level: usize, id: ObjRef, color: [f32; 4]| {
            if let Some(c) = state.map.levels.get(level).and_then(|l| id.get(&l.objects)).and_then(|i| item_box(&i)) {
                o.hexa_lines(&c, color);
            }
        };
        if let Some((level, id)) = self.region_hover {
            outline(o, level, id, overlay::HOVER);
        }
        let Some(g) = &self.gizmo else {
            if let Some((level, id @ (ObjRef::Region(_) | ObjRef::LoadRegion(_)))) = state.selection.object()
                && level == state.level
            {
                outline(o, level, id, overlay::SELECT);
            }
            return;
        };
        let active = self.gizmo_drag.as_ref().map_or(self.gizmo_hover, |d| Some(d.handle));
        g.draw(o, active);
    }
}

/// One held-pointer step of a gizmo drag: the surface point under the pointer for the centre,
/// else the pointer ray projected on the handle's line.
pub(super) fn drag_step(
    drag: &mut GizmoDrag,
    state: &EditorState,
    hover: Option<Pick>,
    ray: Option<(DVec3, DVec3)>,
    mods: Mods,
    out: &mut Vec<Command>,
) {
    let edit = if drag.handle == Handle::Center {
        hover.and_then(|p| tools::object::drop_point(state, &p)).and_then(|to| drag.drag_to(to))
    } else {
        ray.and_then(|(o, d)| drag.drag(o, d, snap_step(state.cube_log2, mods.ctrl)))
    };
    out.extend(edit.map(Command::Edit));
}

#[cfg(test)]
mod tests;
