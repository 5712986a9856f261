//! Place: a click puts a cube of the current size and material on the hovered face.

use eframe::egui::Key;
use pmfedit_core::edit::CubeOp;
use pmfedit_core::map::coords::CubeAddr;

use super::{Look, Mark, Pick, Pointer, Preview, Tool, ToolInfo, cube_edit, material_cube, stroke};
use crate::command::{Command, ToolId};
use crate::state::EditorState;

/// The Place tool's id.
pub const ID: ToolId = ToolId("place");

/// The Place tool.
pub const INFO: ToolInfo = ToolInfo {
    id: ID,
    label: "Place",
    tooltip: "Click a face (or the work plane where there is none): put a cube of the current size and material on it",
    key: Key::Num1,
    keys: &[],
    gizmos: false,
    make: || Box::new(Place),
};

/// The Place tool (no state: every click is one step).
#[derive(Debug, Default)]
pub struct Place;

/// The cube placed for a click on `pick`.
pub fn target(state: &EditorState, pick: &Pick) -> CubeAddr {
    pick.outside(state.cube_log2)
}

/// A click: one undo step that fills the grid cube outside the hovered face.
pub fn click(state: &EditorState, pick: &Pick) -> Vec<Command> {
    let region = target(state, pick).lattice_box();
    stroke(vec![cube_edit(pick.level, CubeOp::FillBox { region, cube: material_cube(state) })])
}

impl Tool for Place {
    fn info(&self) -> &'static ToolInfo {
        &INFO
    }

    fn plane_use(&self, _mods: super::Mods) -> super::PlaneUse {
        super::PlaneUse::Fallback
    }

    fn press(&mut self, state: &EditorState, pointer: &Pointer) -> Vec<Command> {
        pointer.pick.map_or_else(Vec::new, |pick| click(state, &pick))
    }

    fn preview(&self, state: &EditorState, pick: Option<&Pick>) -> Preview {
        let marks = pick.map(|p| Mark::Box { region: target(state, p).lattice_box(), look: Look::Target });
        Preview::with_grid(marks.into_iter().collect())
    }
}
