//! Paint (key 3): click or drag paints the hovered face of the grid cube under the pointer with
//! the current material; Shift paints every face of that cube. A drag is one undo step (the
//! viewport sends `BeginStroke` on press and `EndStroke` on release). A material dragged from
//! the library onto the viewport paints through [`with_material`] too (see [`crate::dnd`]).

use pmfedit_core::edit::CubeOp;
use pmfedit_core::map::ids::MaterialId;

use super::{Mods, Pick, cube_edit};
use crate::command::Command;
use crate::state::EditorState;

/// The edit for the pointer over `pick` (no stroke markers).
pub fn apply(state: &EditorState, pick: &Pick, mods: Mods) -> Vec<Command> {
    with_material(state, pick, mods, state.material)
}

/// The edit painting `material` on the face of `pick` (Shift: every face of the grid cube).
pub fn with_material(state: &EditorState, pick: &Pick, mods: Mods, material: MaterialId) -> Vec<Command> {
    let region = pick.inside(state.cube_log2).lattice_box();
    let op = if mods.shift {
        CubeOp::PaintBox { region, material }
    } else {
        CubeOp::PaintFaceBox { region, face: pick.face, material }
    };
    vec![cube_edit(pick.level, op)]
}
