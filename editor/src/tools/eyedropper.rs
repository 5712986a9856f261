//! Eyedropper (key 7): click takes the hovered face's material as the current material.

use super::Pick;
use crate::command::Command;
use crate::state::EditorState;

/// A click.
pub fn click(state: &EditorState, pick: &Pick) -> Vec<Command> {
    let Some(m) = pick.cube.face_material(pick.face) else { return Vec::new() };
    let name = state.map.library.materials().get(m).map_or_else(|| format!("#{}", m.0), |m| m.name.clone());
    vec![Command::SetMaterial(m), Command::Status(format!("Material: {name}"))]
}
