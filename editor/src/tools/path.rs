//! Path attributes (key 9): click or drag sets the pathfinding attribute set of the air cell
//! (current cube size) above the hovered face; Shift clears it. A drag is one undo step.

use pmfedit_core::edit::CubeOp;
use pmfedit_core::map::ids::PathAttrs;

use super::{Mods, Pick, cube_edit};
use crate::command::Command;
use crate::state::EditorState;

/// The edit for the pointer over `pick` with attribute set `attrs` (no stroke markers).
pub fn apply(state: &EditorState, pick: &Pick, attrs: PathAttrs, mods: Mods) -> Vec<Command> {
    let region = pick.outside(state.cube_log2).lattice_box();
    let attrs = if mods.shift { PathAttrs::NONE } else { attrs };
    vec![cube_edit(pick.level, CubeOp::SetPathAttrs { region, attrs })]
}
