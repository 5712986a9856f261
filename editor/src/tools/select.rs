//! Select (key 5): drag a rectangle of grid cells on a face (the wheel, while held, makes it
//! thicker into the surface); release selects that box. With a box selected: Ctrl+C copy,
//! Ctrl+X cut, Ctrl+V paste onto the hovered face, Ctrl+D duplicate (next to the selection, along
//! the normal of the face it was dragged on), Delete clears it; M / Shift+M mirror the clipboard
//! along X / Z, R rotates it 90° about Y. Every change is one undo step.

use glam::IVec3;

use pmfedit_core::edit::CubeOp;
use pmfedit_core::map::coords::LatticeBox;

use super::box_tool::BoxDrag;
use super::clipboard::Clipboard;
use super::{Pick, cube_edit, stroke};
use crate::command::Command;
use crate::selection::Selection;
use crate::state::EditorState;

/// The selection a finished drag makes (`drag.layers` ≤ 0: inward layers).
pub fn finish(drag: &BoxDrag) -> Command {
    let r = drag.region();
    Command::Select(Selection::Cubes { level: drag.level, min: r.min, max: r.max })
}

/// The selected box, if the selection is one.
pub fn selected_box(state: &EditorState) -> Option<(usize, LatticeBox)> {
    match state.selection {
        Selection::Cubes { level, min, max } => Some((level, LatticeBox::new(min, max))),
        Selection::Cube { level, addr } => Some((level, addr.lattice_box())),
        _ => None,
    }
}

/// Ctrl+C.
pub fn copy(state: &EditorState) -> Option<Clipboard> {
    let (level, region) = selected_box(state)?;
    Some(Clipboard::copy(state.map.levels.get(level)?, region))
}

/// Delete: one undo step clearing the selection.
pub fn delete(state: &EditorState) -> Vec<Command> {
    match selected_box(state) {
        Some((level, region)) => stroke(vec![cube_edit(level, CubeOp::ClearBox { region })]),
        None => Vec::new(),
    }
}

/// Ctrl+X: the clipboard and the edit clearing the selection.
pub fn cut(state: &EditorState) -> Option<(Clipboard, Vec<Command>)> {
    Some((copy(state)?, delete(state)))
}

/// Where Ctrl+V puts the clipboard for the pointer over `pick`: on the face, extending outward.
pub fn paste_origin(state: &EditorState, clip: &Clipboard, pick: &Pick) -> IVec3 {
    let out = pick.outside(state.cube_log2);
    let mut dest = out.min;
    let a = pick.face.axis();
    if !pick.face.is_positive() {
        dest[a] = out.max()[a] - clip.size[a];
    }
    dest
}

/// Ctrl+V: one undo step, and the pasted box becomes the selection.
pub fn paste(state: &EditorState, clip: &Clipboard, pick: &Pick) -> Vec<Command> {
    let dest = paste_origin(state, clip, pick);
    paste_at(pick.level, clip, dest)
}

fn paste_at(level: usize, clip: &Clipboard, dest: IVec3) -> Vec<Command> {
    let mut out = stroke(clip.paste(level, dest));
    if !out.is_empty() {
        out.push(Command::Select(Selection::Cubes { level, min: dest, max: dest + clip.size }));
    }
    out
}

/// Ctrl+D: copies the selection next to itself along `normal` (a unit axis vector); one undo
/// step; the copy becomes the selection.
pub fn duplicate(state: &EditorState, normal: IVec3) -> Vec<Command> {
    let (Some((level, region)), Some(clip)) = (selected_box(state), copy(state)) else { return Vec::new() };
    let dest = region.min + normal * clip.size;
    paste_at(level, &clip, dest)
}
