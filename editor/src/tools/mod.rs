//! Tools: one module each, shortcut keys 1–9. Every tool turns pointer input into
//! [`Command`](crate::command::Command)s (edits go through the undo history; a drag is one step).

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

use pmfedit_core::map::coords::{Face, LatticeBox};
use pmfedit_core::map::octree::Cube;

use crate::command::Command;
// What the pointer is over and the tool ids are plain data below the commands (the commands
// carry them); the tools use them under their old names.
pub use crate::pick::{Mods, Pick};
use crate::state::EditorState;
pub use crate::tool_kind::ToolKind;

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
