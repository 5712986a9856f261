//! Place (key 1): click puts a cube of the current size and material on the hovered face.

use pmfedit_core::edit::CubeOp;

use super::{Pick, cube_edit, material_cube, stroke};
use crate::command::Command;
use crate::state::EditorState;

/// The cube placed for a click on `pick`.
pub fn target(state: &EditorState, pick: &Pick) -> pmfedit_core::map::coords::CubeAddr {
    pick.outside(state.cube_log2)
}

/// A click: one undo step that fills the grid cube outside the hovered face.
pub fn click(state: &EditorState, pick: &Pick) -> Vec<Command> {
    let region = target(state, pick).lattice_box();
    stroke(vec![cube_edit(pick.level, CubeOp::FillBox { region, cube: material_cube(state) })])
}
