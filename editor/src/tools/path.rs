//! Path attributes: click or drag sets the pathfinding attribute set of the air cell (current
//! cube size) above the hovered face; Shift clears it. A drag is one undo step.

use eframe::egui::Key;
use pmfedit_core::edit::CubeOp;
use pmfedit_core::map::coords::CubeAddr;
use pmfedit_core::map::ids::PathAttrs;

use super::{Look, Mark, Mods, Pick, Pointer, Preview, Tool, ToolInfo, cube_edit};
use crate::command::{Command, ToolId};
use crate::state::EditorState;

/// The Path attributes tool's id.
pub const ID: ToolId = ToolId("path");

/// The Path attributes tool.
pub const INFO: ToolInfo = ToolInfo {
    id: ID,
    label: "Path attributes",
    tooltip: "Click or drag over faces: mark the air cells above them for pathfinding (Shift: clear)",
    key: Key::Num9,
    keys: &[],
    gizmos: false,
    make: || Box::new(Path { stroke: None }),
};

/// The Path attributes tool: the open stroke's last cell (the set painted is the editor's
/// [`EditorState::path_set`], chosen in the path attribute sets form).
#[derive(Debug)]
pub struct Path {
    /// While a stroke is open: the last cell set.
    stroke: Option<CubeAddr>,
}

/// The edit for the pointer over `pick` with attribute set `attrs` (no stroke markers).
pub fn apply(state: &EditorState, pick: &Pick, attrs: PathAttrs, mods: Mods) -> Vec<Command> {
    let region = pick.outside(state.cube_log2).lattice_box();
    let attrs = if mods.shift { PathAttrs::NONE } else { attrs };
    vec![cube_edit(pick.level, CubeOp::SetPathAttrs { region, attrs })]
}

impl Tool for Path {
    fn info(&self) -> &'static ToolInfo {
        &INFO
    }

    fn press(&mut self, state: &EditorState, pointer: &Pointer) -> Vec<Command> {
        let Some(pick) = pointer.pick else { return Vec::new() };
        self.stroke = Some(pick.outside(state.cube_log2));
        let mut out = vec![Command::BeginStroke];
        out.extend(apply(state, &pick, state.path_set, pointer.mods));
        out
    }

    fn drag(&mut self, state: &EditorState, pointer: &Pointer) -> Vec<Command> {
        let (Some(last), Some(pick)) = (&mut self.stroke, pointer.pick) else { return Vec::new() };
        let cell = pick.outside(state.cube_log2);
        if *last == cell {
            return Vec::new();
        }
        *last = cell;
        apply(state, &pick, state.path_set, pointer.mods)
    }

    fn release(&mut self, _state: &EditorState) -> Vec<Command> {
        self.stroke.take().map(|_| Command::EndStroke).into_iter().collect()
    }

    fn cancel(&mut self, _state: &EditorState) -> Vec<Command> {
        match self.stroke.take() {
            Some(_) => vec![Command::CancelStroke, Command::Status("Path stroke cancelled".into())],
            None => Vec::new(),
        }
    }

    fn dragging(&self) -> bool {
        self.stroke.is_some()
    }

    fn preview(&self, state: &EditorState, pick: Option<&Pick>) -> Preview {
        let marks = pick.map(|p| Mark::Box { region: p.outside(state.cube_log2).lattice_box(), look: Look::Target });
        Preview::with_grid(marks.into_iter().collect())
    }
}
