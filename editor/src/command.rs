//! Commands: what panels, tools and menus ask for. Nothing in the UI mutates the document
//! directly; it pushes a [`Command`] and [`EditorState::apply`](crate::state::EditorState::apply)
//! carries them out once per frame, in order.

use std::path::PathBuf;

use glam::DVec3;

use pmfedit_core::edit::Edit;
use pmfedit_core::map::ids::{MaterialId, PathAttrs};

use crate::state::Selection;
use crate::tools::{Pick, ToolKind};

/// One request from the UI.
#[derive(Debug, Clone)]
pub enum Command {
    /// Apply an edit through the undo history.
    Edit(Edit),
    /// Start a drag: following edits merge into one undo step until [`Command::EndStroke`].
    BeginStroke,
    EndStroke,
    Undo,
    Redo,
    /// Jump to a step of the history (0 = before the first edit).
    GoTo(usize),
    Select(Selection),
    SetTool(ToolKind),
    SetMaterial(MaterialId),
    /// The path attribute set the path tool paints.
    SetPathSet(PathAttrs),
    /// Current cube edge as a power of two in lattice units (1/8 map unit).
    SetCubeSize(u8),
    /// Point the camera at a world position from a distance.
    Frame {
        target: DVec3,
        distance: f64,
    },
    NewMap,
    Open(PathBuf),
    Save,
    SaveAs(PathBuf),
    /// Compile to a `.pmf` once the background bake has caught up.
    Export(PathBuf),
    /// Show a message in the status bar.
    Status(String),
    /// Make this level the active one (panels, tools and the viewport work on it).
    SetLevel(usize),
    /// Files dropped on the viewport with the pointer over `pick`: the first texture file is
    /// copied into the project and paints the face (the whole cube with `whole_cube`); see
    /// [`crate::dnd::drop_files`].
    DropFiles {
        files: Vec<PathBuf>,
        pick: Option<Pick>,
        whole_cube: bool,
    },
}
