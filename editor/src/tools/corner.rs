//! Corner (key 6): press on a face near one of its corners and drag up/down to pull/push that
//! corner of the grid cube (current size, or the hovered leaf if it is smaller) along the face
//! normal, in steps of edge/16 (`CubeOp::PushCorner`). Dragging down pushes the corner in. The
//! whole drag is one undo step.

use glam::IVec3;

use pmfedit_core::edit::CubeOp;
use pmfedit_core::map::coords::{CubeAddr, Face, octant_offset};

use super::{Pick, cube_edit};
use crate::command::Command;
use crate::state::EditorState;

/// Pixels of vertical drag per corner step.
pub const PIXELS_PER_STEP: f32 = 6.0;

/// The cube and corner a press on `pick` grabs.
pub fn grab(state: &EditorState, pick: &Pick) -> (CubeAddr, usize) {
    let addr = if pick.addr.size_log2 <= state.cube_log2 { pick.addr } else { pick.inside(state.cube_log2) };
    (addr, nearest_corner(addr, pick.face, pick.point))
}

/// The corner of `face` of `addr` nearest to `point` (level lattice).
pub fn nearest_corner(addr: CubeAddr, face: Face, point: glam::DVec3) -> usize {
    let side = i32::from(face.is_positive());
    (0..8)
        .filter(|&i| octant_offset(i)[face.axis()] == side)
        .min_by(|&a, &b| {
            let pa = (addr.min + octant_offset(a) * addr.edge()).as_dvec3();
            let pb = (addr.min + octant_offset(b) * addr.edge()).as_dvec3();
            pa.distance_squared(point).total_cmp(&pb.distance_squared(point))
        })
        .unwrap_or(0)
}

/// Pushes the corner `steps` steps into the cube along the face normal (negative pulls out).
pub fn push(level: usize, addr: CubeAddr, face: Face, corner: usize, steps: i32) -> Vec<Command> {
    if steps == 0 {
        return Vec::new();
    }
    let delta: IVec3 = -face.normal() * steps;
    vec![cube_edit(level, CubeOp::PushCorner { addr, corner, delta })]
}
