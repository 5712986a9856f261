//! Erase: a click removes the grid cube of the current size just inside the hovered face.

use eframe::egui::Key;
use pmfedit_core::edit::CubeOp;
use pmfedit_core::map::coords::CubeAddr;

use super::{Look, Mark, Pick, Pointer, Preview, Tool, ToolInfo, cube_edit, stroke};
use crate::command::{Command, ToolId};
use crate::state::EditorState;

/// The Erase tool's id.
pub const ID: ToolId = ToolId("erase");

/// The Erase tool.
pub const INFO: ToolInfo = ToolInfo {
    id: ID,
    label: "Erase",
    tooltip: "Click a face: remove the cube of the current size behind it",
    key: Key::Num2,
    keys: &[],
    gizmos: false,
    make: || Box::new(Erase),
};

/// The Erase tool (no state: every click is one step).
#[derive(Debug, Default)]
pub struct Erase;

/// The cube a click on `pick` removes.
pub fn target(state: &EditorState, pick: &Pick) -> CubeAddr {
    pick.inside(state.cube_log2)
}

/// A click: one undo step.
pub fn click(state: &EditorState, pick: &Pick) -> Vec<Command> {
    stroke(vec![cube_edit(pick.level, CubeOp::ClearBox { region: target(state, pick).lattice_box() })])
}

impl Tool for Erase {
    fn info(&self) -> &'static ToolInfo {
        &INFO
    }

    fn press(&mut self, state: &EditorState, pointer: &Pointer) -> Vec<Command> {
        pointer.pick.map_or_else(Vec::new, |pick| click(state, &pick))
    }

    fn preview(&self, state: &EditorState, pick: Option<&Pick>) -> Preview {
        let marks = pick.map(|p| Mark::Face { addr: target(state, p), face: p.face, look: Look::Remove });
        Preview::with_grid(marks.into_iter().collect())
    }
}
