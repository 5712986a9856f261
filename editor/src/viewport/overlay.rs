//! Overlay geometry (world space lines and translucent fills): grid, hovered face, selection,
//! tool previews, light and entity markers, environment and load regions.

use glam::{DVec3, IVec3};

use pmfedit_core::edit::ObjRef;
use pmfedit_core::map::Level;
use pmfedit_core::map::coords::{CubeAddr, Face, LatticeBox, LevelFrame};
use pmfedit_core::map::library::EnvKind;

use super::render::{Segment, Tri};

/// Lines and fills collected for one frame.
#[derive(Debug)]
pub struct Overlay {
    pub segments: Vec<Segment>,
    pub fills: Vec<Tri>,
    /// The x-ray opacity of the lines added now ([`Segment::xray`]; see [`Overlay::with_xray`]).
    pub xray: f32,
}

impl Default for Overlay {
    fn default() -> Self {
        Self { segments: Vec::new(), fills: Vec::new(), xray: XRAY_FAINT }
    }
}

/// X-ray opacity of gizmo handles and the selected object's outline: readable through walls.
pub const XRAY_SELECTED: f32 = 0.5;
/// X-ray opacity of everything else but the grid and the hovered face (object markers, regions,
/// tool previews).
pub const XRAY_FAINT: f32 = 0.3;
/// No x-ray: the grid and the hovered face outline are only drawn where visible.
pub const XRAY_NONE: f32 = 0.0;

pub const HOVER: [f32; 4] = [1.0, 0.85, 0.2, 1.0];
pub const SELECT: [f32; 4] = [0.3, 0.8, 1.0, 1.0];
pub const PREVIEW_ADD: [f32; 4] = [0.4, 1.0, 0.4, 1.0];
pub const PREVIEW_REMOVE: [f32; 4] = [1.0, 0.35, 0.3, 1.0];
pub const GRID: [f32; 4] = [1.0, 1.0, 1.0, 0.28];
/// The ground grid on the work plane.
pub const GROUND: [f32; 4] = [0.75, 0.85, 1.0, 0.3];
/// Cells of the ground grid on each side of its centre.
pub const GROUND_RADIUS: i32 = 20;
/// The visibility view's air cube.
pub const AIR_CUBE: [f32; 4] = [0.2, 1.0, 0.85, 1.0];

impl Overlay {
    pub fn line(&mut self, a: DVec3, b: DVec3, color: [f32; 4]) {
        self.segments.push(Segment { a, b, color, xray: self.xray });
    }

    /// Runs `draw` with the lines it adds at x-ray opacity `xray`.
    pub fn with_xray(&mut self, xray: f32, draw: impl FnOnce(&mut Self)) {
        let old = std::mem::replace(&mut self.xray, xray);
        draw(self);
        self.xray = old;
    }

    /// The twelve edges of a box.
    pub fn box_lines(&mut self, lo: DVec3, hi: DVec3, color: [f32; 4]) {
        let c = |i: usize| {
            DVec3::new(
                if i & 1 != 0 { hi.x } else { lo.x },
                if i & 2 != 0 { hi.y } else { lo.y },
                if i & 4 != 0 { hi.z } else { lo.z },
            )
        };
        for (a, b) in [(0, 1), (2, 3), (4, 5), (6, 7), (0, 2), (1, 3), (4, 6), (5, 7), (0, 4), (1, 5), (2, 6), (3, 7)] {
            self.line(c(a), c(b), color);
        }
    }

    /// The twelve edges of an arbitrary hexahedron given by corners in `BOX_CORNER_SIGNS` order
    /// (bit 0 −X, bit 1 −Z, bit 2 −Y, as PMF corners).
    pub fn hexa_lines(&mut self, corners: &[DVec3; 8], color: [f32; 4]) {
        for i in 0..8usize {
            for bit in [1usize, 2, 4] {
                let j = i ^ bit;
                if i < j {
                    self.line(corners[i], corners[j], color);
                }
            }
        }
    }

    /// Six translucent faces of a hexahedron (PMF corner order).
    pub fn hexa_fill(&mut self, corners: &[DVec3; 8], color: [f32; 4]) {
        // Each face: the four corners sharing one bit value.
        for bit in [1usize, 2, 4] {
            for val in [0, bit] {
                let mut q: Vec<usize> = (0..8).filter(|i| i & bit == val).collect();
                // Order the four as a loop: swap the last two of the binary order.
                q.swap(2, 3);
                self.fills.push(Tri { p: [corners[q[0]], corners[q[1]], corners[q[2]]], color });
                self.fills.push(Tri { p: [corners[q[0]], corners[q[2]], corners[q[3]]], color });
            }
        }
    }

    /// A box as translucent faces.
    pub fn box_fill(&mut self, lo: DVec3, hi: DVec3, color: [f32; 4]) {
        let c = |i: usize| {
            DVec3::new(
                if i & 1 == 0 { hi.x } else { lo.x },
                if i & 4 == 0 { hi.y } else { lo.y },
                if i & 2 == 0 { hi.z } else { lo.z },
            )
        };
        let corners = std::array::from_fn(c);
        self.hexa_fill(&corners, color);
    }

    /// A lattice box of a level as box lines.
    pub fn lattice_box(&mut self, frame: &LevelFrame, b: LatticeBox, color: [f32; 4]) {
        self.box_lines(frame.world_from_lattice(b.min), frame.world_from_lattice(b.max), color);
    }

    /// The outline of `face` of `addr`, pushed out a hair.
    pub fn face_outline(&mut self, frame: &LevelFrame, addr: CubeAddr, face: Face, color: [f32; 4]) {
        let lo = frame.world_from_lattice(addr.min);
        let hi = frame.world_from_lattice(addr.max());
        let a = face.axis();
        let (u, v) = ((a + 1) % 3, (a + 2) % 3);
        let mut plane = if face.is_positive() { hi[a] } else { lo[a] };
        plane += if face.is_positive() { 0.002 } else { -0.002 };
        let corner = |su: bool, sv: bool| {
            let mut p = DVec3::ZERO;
            p[a] = plane;
            p[u] = if su { hi[u] } else { lo[u] };
            p[v] = if sv { hi[v] } else { lo[v] };
            p
        };
        let q = [corner(false, false), corner(true, false), corner(true, true), corner(false, true)];
        for i in 0..4 {
            self.line(q[i], q[(i + 1) % 4], color);
        }
        let mut fill = color;
        fill[3] = 0.18;
        self.fills.push(Tri { p: [q[0], q[1], q[2]], color: fill });
        self.fills.push(Tri { p: [q[0], q[2], q[3]], color: fill });
    }

    /// Grid lines of cell edge `2^size_log2` on the plane of `face` through `plane` (lattice),
    /// `radius` cells around the lattice point `at`.
    pub fn grid(&mut self, frame: &LevelFrame, face: Face, plane: i32, at: DVec3, size_log2: u8, radius: i32) {
        self.grid_in(frame, face, plane, at, size_log2, radius, GRID);
    }

    /// The ground grid on the work plane: [`GROUND_RADIUS`] cells of edge `2^size_log2` around
    /// `at` (lattice) on the plane of `face` through `plane`, fading out.
    pub fn ground_grid(&mut self, frame: &LevelFrame, face: Face, plane: i32, at: DVec3, size_log2: u8) {
        self.grid_in(frame, face, plane, at, size_log2, GROUND_RADIUS, GROUND);
    }

    #[allow(clippy::too_many_arguments)]
    fn grid_in(
        &mut self,
        frame: &LevelFrame,
        face: Face,
        plane: i32,
        at: DVec3,
        size_log2: u8,
        radius: i32,
        color: [f32; 4],
    ) {
        let e = 1i32 << size_log2;
        let a = face.axis();
        let (u, v) = ((a + 1) % 3, (a + 2) % 3);
        let cu = (at[u] as i32).div_euclid(e);
        let cv = (at[v] as i32).div_euclid(e);
        let off = if face.is_positive() { 0.004 } else { -0.004 };
        let pt = |pu: i32, pv: i32| {
            let mut p = IVec3::ZERO;
            p[a] = plane;
            p[u] = pu;
            p[v] = pv;
            let mut w = frame.world_from_lattice(p);
            w[a] += off;
            w
        };
        for k in -radius..=radius + 1 {
            let fade = 1.0 - (k as f32 - 0.5).abs() / (radius as f32 + 1.0);
            let mut c = color;
            c[3] *= fade.max(0.1);
            let (u0, u1) = ((cu - radius) * e, (cu + radius + 1) * e);
            let (v0, v1) = ((cv - radius) * e, (cv + radius + 1) * e);
            self.line(pt((cu + k) * e, v0), pt((cu + k) * e, v1), c);
            self.line(pt(u0, (cv + k) * e), pt(u1, (cv + k) * e), c);
        }
    }

    /// Markers of a level's lights (a small box in the light's colour and its range as a faint
    /// cross), entities (orange boxes, a prop's own box), environment regions (translucent, by
    /// kind) and load regions (violet outlines); only those `shows` lets through (H / I hide
    /// objects), and with `objects_on` off only the selected lights and entities.
    pub fn level_objects(
        &mut self,
        level: &Level,
        selected: &[ObjRef],
        objects_on: bool,
        regions_on: bool,
        shows: &dyn Fn(ObjRef) -> bool,
    ) {
        let objects = &level.objects;
        let drawn = |obj: ObjRef| shows(obj) && (objects_on || selected.contains(&obj));
        let lights = objects.lights().iter().filter(|(id, _)| drawn(ObjRef::Light(*id)));
        for (id, l) in lights {
            let p = l.position.as_dvec3();
            let c = l.color.map(|v| f32::from(v) / 255.0);
            let sel = selected.contains(&ObjRef::Light(id));
            let h = 0.18;
            self.box_fill(p - DVec3::splat(h), p + DVec3::splat(h), [c[0], c[1], c[2], 0.85]);
            let xray = if sel { XRAY_SELECTED } else { self.xray };
            self.with_xray(xray, |o| {
                o.box_lines(p - DVec3::splat(h), p + DVec3::splat(h), if sel { SELECT } else { [1.0, 1.0, 0.6, 1.0] });
            });
        }
        let entities = objects.entities().iter().filter(|(id, _)| drawn(ObjRef::Entity(*id)));
        for (id, e) in entities {
            let Some(p) = e.position() else { continue };
            let p = p.as_dvec3();
            let (lo, hi) = match &e.entity.data {
                pmfedit_core::format::pmf::entity::EntityData::Prop(prop) => (
                    p + glam::Vec3::from_array(prop.box_neg).as_dvec3(),
                    p + glam::Vec3::from_array(prop.box_pos).as_dvec3(),
                ),
                _ => (p - DVec3::splat(0.25), p + DVec3::splat(0.25)),
            };
            let sel = selected.contains(&ObjRef::Entity(id));
            let xray = if sel { XRAY_SELECTED } else { self.xray };
            self.with_xray(xray, |o| o.box_lines(lo, hi, if sel { SELECT } else { [1.0, 0.55, 0.1, 1.0] }));
        }
        if !regions_on {
            return;
        }
        for (_, r) in objects.regions().iter().filter(|(id, _)| shows(ObjRef::Region(*id))) {
            let c = match r.kind() {
                EnvKind::Sound => [0.3, 0.9, 0.6, 0.035],
                EnvKind::Weather => [0.5, 0.7, 1.0, 0.035],
                EnvKind::Sky => [0.6, 0.85, 1.0, 0.02],
                EnvKind::Gravity => [1.0, 0.5, 0.9, 0.035],
            };
            let corners = r.corners.map(|v| v.as_dvec3());
            self.hexa_fill(&corners, c);
            self.hexa_lines(&corners, [c[0], c[1], c[2], 0.35]);
        }
        for (_, r) in objects.load_regions().iter().filter(|(id, _)| shows(ObjRef::LoadRegion(*id))) {
            self.box_lines(r.min.as_dvec3(), r.max.as_dvec3(), [0.7, 0.45, 1.0, 0.4]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use pmfedit_core::map::Map;
    use pmfedit_core::map::library::{Light, LoadRegion};

    /// Hidden objects (H / I) draw nothing; shown ones draw their markers.
    #[test]
    fn hidden_objects_draw_no_marker() {
        let mut map = Map::new("t");
        let objects = &mut map.levels[0].objects;
        let light = ObjRef::Light(objects.add(Light::point("l", glam::Vec3::ONE)).unwrap());
        let region = LoadRegion { min: glam::Vec3::ZERO, max: glam::Vec3::ONE, ..LoadRegion::default() };
        let region = ObjRef::LoadRegion(objects.add(region).unwrap());
        let drawn = |shows: &dyn Fn(ObjRef) -> bool| {
            let mut o = Overlay::default();
            o.level_objects(&map.levels[0], &[], true, true, shows);
            o.segments.len() + o.fills.len()
        };
        let all = drawn(&|_| true);
        let no_light = drawn(&|obj| obj != light);
        assert!(no_light > 0 && no_light < all, "{no_light} of {all}");
        assert_eq!(drawn(&|obj| obj != light && obj != region), 0);
    }
}
