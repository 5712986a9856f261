//! Paint: click or drag paints the hovered face of the grid cube under the pointer with the
//! current material; Shift paints every face of that cube. A drag is one undo step (a stroke
//! from the press to the release). A material dragged from the library onto the viewport paints
//! through [`with_material`] and outlines through [`marks`] too (see [`crate::dnd`]).

use eframe::egui::Key;
use pmfedit_core::edit::CubeOp;
use pmfedit_core::map::coords::{CubeAddr, Face};
use pmfedit_core::map::ids::MaterialId;

use super::{Look, Mark, Mods, Pick, Pointer, Preview, Tool, ToolInfo, cube_edit};
use crate::command::{Command, ToolId};
use crate::state::EditorState;

/// The Paint tool's id.
pub const ID: ToolId = ToolId("paint");

/// The Paint tool.
pub const INFO: ToolInfo = ToolInfo {
    id: ID,
    label: "Paint",
    tooltip: "Click or drag over faces: paint them with the current material (Shift: every face of the cube)",
    key: Key::Num3,
    keys: &[],
    gizmos: false,
    make: || Box::<Paint>::default(),
};

/// The Paint tool: the open stroke's last painted cell.
#[derive(Debug, Default)]
pub struct Paint {
    /// While a stroke is open: the cube, face and Shift of the last paint (a cell is painted
    /// once until the pointer leaves it).
    stroke: Option<(CubeAddr, Face, bool)>,
}

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

/// What painting `pick` changes: its face of the grid cube, or the whole cube.
pub fn marks(state: &EditorState, pick: &Pick, whole_cube: bool) -> Vec<Mark> {
    let addr = pick.inside(state.cube_log2);
    vec![if whole_cube {
        Mark::Box { region: addr.lattice_box(), look: Look::Target }
    } else {
        Mark::Face { addr, face: pick.face, look: Look::Target }
    }]
}

impl Tool for Paint {
    fn info(&self) -> &'static ToolInfo {
        &INFO
    }

    fn press(&mut self, state: &EditorState, pointer: &Pointer) -> Vec<Command> {
        let Some(pick) = pointer.pick else { return Vec::new() };
        self.stroke = Some((pick.inside(state.cube_log2), pick.face, pointer.mods.shift));
        let mut out = vec![Command::BeginStroke];
        out.extend(apply(state, &pick, pointer.mods));
        out
    }

    fn drag(&mut self, state: &EditorState, pointer: &Pointer) -> Vec<Command> {
        let (Some(last), Some(pick)) = (&mut self.stroke, pointer.pick) else { return Vec::new() };
        let key = (pick.inside(state.cube_log2), pick.face, pointer.mods.shift);
        if *last == key {
            return Vec::new();
        }
        *last = key;
        apply(state, &pick, pointer.mods)
    }

    fn release(&mut self, _state: &EditorState) -> Vec<Command> {
        self.stroke.take().map(|_| Command::EndStroke).into_iter().collect()
    }

    fn cancel(&mut self, _state: &EditorState) -> Vec<Command> {
        match self.stroke.take() {
            Some(_) => vec![Command::CancelStroke, Command::Status("Paint stroke cancelled".into())],
            None => Vec::new(),
        }
    }

    fn dragging(&self) -> bool {
        self.stroke.is_some()
    }

    fn preview(&self, state: &EditorState, pick: Option<&Pick>) -> Preview {
        Preview::with_grid(pick.map(|p| marks(state, p, false)).unwrap_or_default())
    }
}
