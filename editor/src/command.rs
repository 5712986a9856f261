//! Commands: what panels, tools and menus ask of the document. Nothing in the UI mutates the
//! document directly; it pushes a [`Command`] and
//! [`EditorState::apply`](crate::state::EditorState::apply) carries them out once per frame, in
//! order, returning what changed or why an edit was refused. File actions (new, open, save,
//! dropped files) are the app's ([`crate::app::App`]): each has one implementation there.

use std::path::PathBuf;

use glam::DVec3;

use pmfedit_core::edit::Edit;
use pmfedit_core::map::ids::{MaterialId, PathAttrs};

use crate::selection::Selection;

/// Names a tool: the stable `id` of its [`crate::tools::ToolInfo`]. Which tool is current is
/// editor state ([`Command::SetTool`]); the default names none (the app then picks the first
/// tool of its command table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ToolId(pub &'static str);

/// One request from the UI.
#[derive(Debug, Clone)]
pub enum Command {
    /// Apply an edit through the undo history.
    Edit(Edit),
    /// Start a drag: following edits merge into one undo step until [`Command::EndStroke`].
    BeginStroke,
    /// [`Command::BeginStroke`] whose undo step is named for what the user did ("Paste 4
    /// cubes", "Fill 12 faces with stone") instead of after its first edit.
    BeginNamedStroke(String),
    /// Ends the drag started by [`Command::BeginStroke`].
    EndStroke,
    /// Esc during a drag: undoes what the open stroke applied and ends it (nothing of the drag
    /// stays in the map or the undo history's applied steps).
    CancelStroke,
    Undo,
    Redo,
    /// Jump to a step of the history (0 = before the first edit).
    GoTo(usize),
    Select(Selection),
    SetTool(ToolId),
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
    /// Compile to a `.pmf` once the background bake has caught up.
    Export(PathBuf),
    /// Show a message in the status bar.
    Status(String),
    /// Move the work plane through this world point (snapped to the lattice, 1/8 unit): the
    /// plane tools draw on where no face is ([`crate::pick::PlaneUse`]).
    SetWorkPlane(DVec3),
    /// Make this level the active one (panels, tools and the viewport work on it).
    SetLevel(usize),
}
