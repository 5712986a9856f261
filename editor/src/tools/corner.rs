//! Corner: press on a face near one of its corners and drag up/down to pull/push that corner
//! of the grid cube (current size, or the hovered leaf if it is smaller) along the face normal,
//! in steps of edge/16 (`CubeOp::PushCorner`). Dragging down pushes the corner in. The whole
//! drag is one undo step.

use eframe::egui::Key;
use glam::IVec3;

use pmfedit_core::edit::CubeOp;
use pmfedit_core::map::coords::{CubeAddr, Face, octant_offset};

use super::{Look, Mark, Pick, Pointer, Preview, Tool, ToolInfo, cube_edit};
use crate::command::{Command, ToolId};
use crate::state::EditorState;

/// The Corner tool's id.
pub const ID: ToolId = ToolId("corner");

/// The Corner tool.
pub const INFO: ToolInfo = ToolInfo {
    id: ID,
    label: "Corner",
    tooltip: "Press near a face's corner and drag up or down: pull or push that corner of the cube",
    key: Key::Num6,
    keys: &[],
    gizmos: false,
    make: || Box::<Corner>::default(),
};

/// Pixels of vertical drag per corner step.
pub const PIXELS_PER_STEP: f32 = 6.0;

/// The Corner tool: the corner being dragged.
#[derive(Debug, Default)]
pub struct Corner {
    drag: Option<CornerDrag>,
}

/// A corner drag: the grabbed corner, where the pointer started and the steps already sent.
#[derive(Debug, Clone, Copy)]
struct CornerDrag {
    level: usize,
    addr: CubeAddr,
    face: Face,
    corner: usize,
    start_y: f32,
    applied: i32,
}

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

/// The pointer's height on screen (0 when unknown), what the drag measures.
fn pointer_y(pointer: &Pointer) -> f32 {
    pointer.pos.map_or(0.0, |p| p.y)
}

impl Tool for Corner {
    fn info(&self) -> &'static ToolInfo {
        &INFO
    }

    fn press(&mut self, state: &EditorState, pointer: &Pointer) -> Vec<Command> {
        let Some(pick) = pointer.pick else { return Vec::new() };
        let (addr, corner) = grab(state, &pick);
        let start_y = pointer_y(pointer);
        self.drag = Some(CornerDrag { level: pick.level, addr, face: pick.face, corner, start_y, applied: 0 });
        vec![Command::BeginStroke]
    }

    fn drag(&mut self, _state: &EditorState, pointer: &Pointer) -> Vec<Command> {
        let Some(d) = &mut self.drag else { return Vec::new() };
        let steps = ((pointer_y(pointer) - d.start_y) / PIXELS_PER_STEP) as i32;
        if steps == d.applied {
            return Vec::new();
        }
        let out = push(d.level, d.addr, d.face, d.corner, steps - d.applied);
        d.applied = steps;
        out
    }

    fn release(&mut self, _state: &EditorState) -> Vec<Command> {
        self.drag.take().map(|_| Command::EndStroke).into_iter().collect()
    }

    fn cancel(&mut self, _state: &EditorState) -> Vec<Command> {
        match self.drag.take() {
            Some(_) => vec![Command::CancelStroke, Command::Status("Corner drag cancelled".into())],
            None => Vec::new(),
        }
    }

    fn dragging(&self) -> bool {
        self.drag.is_some()
    }

    fn preview(&self, state: &EditorState, pick: Option<&Pick>) -> Preview {
        let Some(p) = pick else { return Preview::with_grid(Vec::new()) };
        let (addr, corner) = grab(state, p);
        let at = addr.min + octant_offset(corner) * addr.edge();
        let half = 0.06 * f64::from(addr.edge()) / 8.0 + 0.03;
        Preview::with_grid(vec![
            Mark::Face { addr, face: p.face, look: Look::Target },
            Mark::Point { at, half, look: Look::Remove },
        ])
    }
}
