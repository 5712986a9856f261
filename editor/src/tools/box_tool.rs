//! Box (key 4), Sauerbraten style: press on a face, drag a rectangle of grid cells over that
//! face's plane, turn the mouse wheel while the button is held to extrude (up) or carve (down)
//! it, release to apply one `FillBox` (extrude) or `ClearBox` (carve) edit. Without wheel
//! movement the rectangle is extruded one layer.

use glam::IVec3;

use pmfedit_core::edit::CubeOp;
use pmfedit_core::map::coords::{Face, LatticeBox};

use super::{cube_edit, face_rect, material_cube, stroke};
use crate::command::Command;
use crate::state::EditorState;

/// A box being dragged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoxDrag {
    pub level: usize,
    pub face: Face,
    /// Outside cell where the drag started (minimum corner).
    pub anchor: IVec3,
    /// Outside cell under the pointer now.
    pub current: IVec3,
    pub size_log2: u8,
    /// Layers: > 0 extrude, < 0 carve.
    pub layers: i32,
}

impl BoxDrag {
    /// The region the release would change.
    pub fn region(&self) -> LatticeBox {
        face_rect(self.face, self.anchor, self.current, self.size_log2, self.layers)
    }

    /// The release: one undo step.
    pub fn commit(&self, state: &EditorState) -> Vec<Command> {
        let region = self.region();
        let op = if self.layers >= 0 {
            CubeOp::FillBox { region, cube: material_cube(state) }
        } else {
            CubeOp::ClearBox { region }
        };
        stroke(vec![cube_edit(self.level, op)])
    }
}
