//! Tools: one module each, shortcut keys 1–9. Every tool turns pointer input into
//! [`Command`](crate::command::Command)s (edits go through the undo history; a drag is one step).

/// The tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolKind {
    /// Place a cube on the hovered face.
    #[default]
    Place,
    Erase,
    Paint,
    Box,
    Select,
    Corner,
    Eyedropper,
    Object,
    Path,
}

impl ToolKind {
    /// Every tool, in shortcut order (keys 1–9).
    pub const ALL: [ToolKind; 9] = [
        ToolKind::Place,
        ToolKind::Erase,
        ToolKind::Paint,
        ToolKind::Box,
        ToolKind::Select,
        ToolKind::Corner,
        ToolKind::Eyedropper,
        ToolKind::Object,
        ToolKind::Path,
    ];

    /// Name shown in the toolbar.
    pub fn label(self) -> &'static str {
        match self {
            ToolKind::Place => "Place",
            ToolKind::Erase => "Erase",
            ToolKind::Paint => "Paint",
            ToolKind::Box => "Box",
            ToolKind::Select => "Select",
            ToolKind::Corner => "Corner",
            ToolKind::Eyedropper => "Eyedropper",
            ToolKind::Object => "Lights & entities",
            ToolKind::Path => "Path attributes",
        }
    }
}

pub mod box_tool;
pub mod clipboard;
pub mod corner;
pub mod erase;
pub mod eyedropper;
pub mod object;
pub mod paint;
pub mod path;
pub mod place;
pub mod select;
#[cfg(test)]
mod tests;

use glam::{DVec3, IVec3};

use pmfedit_core::map::coords::{CubeAddr, Face, LatticeBox};
use pmfedit_core::map::level::LevelHit;
use pmfedit_core::map::octree::Cube;

use crate::command::Command;
use crate::state::EditorState;

/// Modifier keys held when a tool acts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Mods {
    pub shift: bool,
    pub ctrl: bool,
    pub alt: bool,
}

impl Mods {
    /// Only Shift held.
    pub const SHIFT: Mods = Mods { shift: true, ctrl: false, alt: false };
}

/// What the pointer is over: a solid leaf of a level and the face the view ray entered through.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pick {
    pub level: usize,
    /// The leaf hit (level lattice).
    pub addr: CubeAddr,
    pub face: Face,
    /// The hit point (level lattice, fractional).
    pub point: DVec3,
    pub cube: Cube,
}

impl Pick {
    /// From a ray-cast result.
    pub fn from_hit(level: usize, hit: &LevelHit) -> Self {
        Self { level, addr: hit.level_addr, face: hit.face, point: hit.point, cube: hit.cube }
    }

    /// Outward face normal.
    pub fn normal(&self) -> IVec3 {
        self.face.normal()
    }

    /// The hit point clamped into the hit leaf (half a lattice unit inside every face).
    fn point_in_leaf(&self) -> DVec3 {
        let lo = self.addr.min.as_dvec3() + DVec3::splat(0.5);
        let hi = self.addr.max().as_dvec3() - DVec3::splat(0.5);
        self.point.clamp(lo, hi)
    }

    /// The grid cube (edge `2^size_log2`) just inside the hit face.
    pub fn inside(&self, size_log2: u8) -> CubeAddr {
        CubeAddr::containing(self.point_in_leaf().floor().as_ivec3(), size_log2)
    }

    /// The grid cube (edge `2^size_log2`) just outside the hit face, touching or beyond the face
    /// plane (a plane off the grid leaves a gap, as in Sauerbraten).
    pub fn outside(&self, size_log2: u8) -> CubeAddr {
        let e = 1i32 << size_log2;
        let mut min = CubeAddr::containing(self.point_in_leaf().floor().as_ivec3(), size_log2).min;
        let a = self.face.axis();
        if self.face.is_positive() {
            let plane = self.addr.max()[a];
            min[a] = plane.div_euclid(e) * e + if plane.rem_euclid(e) == 0 { 0 } else { e };
        } else {
            let plane = self.addr.min[a];
            min[a] = plane.div_euclid(e) * e - e;
        }
        CubeAddr { min, size_log2 }
    }
}

/// The plain cube the current material paints (its default physics and sound materials).
pub fn material_cube(state: &EditorState) -> Cube {
    let (physics, sound) =
        state.map.library.materials().get(state.material).map_or_else(Default::default, |m| (m.physics, m.sound));
    Cube::solid(state.material, physics, sound)
}

/// A cube edit on `level`.
pub fn cube_edit(level: usize, op: pmfedit_core::edit::CubeOp) -> Command {
    Command::Edit(pmfedit_core::edit::Edit::Cubes { level, op })
}

/// `commands` as one undo step.
pub fn stroke(mut commands: Vec<Command>) -> Vec<Command> {
    if commands.is_empty() {
        return commands;
    }
    commands.insert(0, Command::BeginStroke);
    commands.push(Command::EndStroke);
    commands
}

/// The box between two grid cells (inclusive) on the plane of `face`, `layers` cells thick along
/// its normal: outward from the face for `layers > 0`, inward for `layers < 0` (0 counts as 1
/// outward). `a` and `b` are minimum corners of outside cells of edge `2^size_log2`.
pub fn face_rect(face: Face, a: IVec3, b: IVec3, size_log2: u8, layers: i32) -> LatticeBox {
    let e = 1i32 << size_log2;
    let mut min = a.min(b);
    let mut max = a.max(b) + IVec3::splat(e);
    let ax = face.axis();
    let out_min = a[ax];
    let out_max = a[ax] + e;
    let layers = if layers == 0 { 1 } else { layers };
    let (lo, hi) = match (face.is_positive(), layers > 0) {
        (true, true) => (out_min, out_min + layers * e),
        (false, true) => (out_max - layers * e, out_max),
        (true, false) => (out_min + layers * e, out_min),
        (false, false) => (out_max, out_max - layers * e),
    };
    min[ax] = lo;
    max[ax] = hi;
    LatticeBox::new(min, max)
}

/// Where a ray (level lattice origin, unit direction) meets the plane `axis = coordinate`.
pub fn ray_plane(origin: DVec3, dir: DVec3, axis: usize, coordinate: f64) -> Option<DVec3> {
    let d = dir[axis];
    if d.abs() < 1e-9 {
        return None;
    }
    let t = (coordinate - origin[axis]) / d;
    (t > 0.0).then(|| origin + dir * t)
}
