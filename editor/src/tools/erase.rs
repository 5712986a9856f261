//! Erase (key 2): click removes the grid cube of the current size just inside the hovered face.

use pmfedit_core::edit::CubeOp;

use super::{Pick, cube_edit, stroke};
use crate::command::Command;
use crate::state::EditorState;

/// The cube a click on `pick` removes.
pub fn target(state: &EditorState, pick: &Pick) -> pmfedit_core::map::coords::CubeAddr {
    pick.inside(state.cube_log2)
}

/// A click: one undo step.
pub fn click(state: &EditorState, pick: &Pick) -> Vec<Command> {
    stroke(vec![cube_edit(pick.level, CubeOp::ClearBox { region: target(state, pick).lattice_box() })])
}
