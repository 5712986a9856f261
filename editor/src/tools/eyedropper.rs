//! Eyedropper: a click takes the hovered face's material as the current material.

use eframe::egui::Key;

use super::{Pick, Pointer, Preview, Tool, ToolInfo};
use crate::command::{Command, ToolId};
use crate::state::EditorState;

/// The Eyedropper's id.
pub const ID: ToolId = ToolId("eyedropper");

/// The Eyedropper.
pub const INFO: ToolInfo = ToolInfo {
    id: ID,
    label: "Eyedropper",
    tooltip: "Click a face: make its material the current one",
    key: Key::Num7,
    keys: &[],
    gizmos: false,
    make: || Box::new(Eyedropper),
};

/// The Eyedropper (no state).
#[derive(Debug, Default)]
pub struct Eyedropper;

/// A click.
pub fn click(state: &EditorState, pick: &Pick) -> Vec<Command> {
    let Some(m) = pick.cube.face_material(pick.face) else { return Vec::new() };
    let name = state.map.library.materials().get(m).map_or_else(|| format!("#{}", m.0), |m| m.name.clone());
    vec![Command::SetMaterial(m), Command::Status(format!("Material: {name}"))]
}

impl Tool for Eyedropper {
    fn info(&self) -> &'static ToolInfo {
        &INFO
    }

    fn press(&mut self, state: &EditorState, pointer: &Pointer) -> Vec<Command> {
        pointer.pick.map_or_else(Vec::new, |pick| click(state, &pick))
    }

    fn preview(&self, _state: &EditorState, _pick: Option<&Pick>) -> Preview {
        Preview::with_grid(Vec::new())
    }
}
