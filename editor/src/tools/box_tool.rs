//! Box, Sauerbraten style: press on a face, drag a rectangle of grid cells over that face's
//! plane, turn the mouse wheel while the button is held to extrude (up) or carve (down) it,
//! release to apply one `FillBox` (extrude) or `ClearBox` (carve) edit. Without wheel movement
//! the rectangle is extruded one layer. Esc drops the box. [`BoxDrag`] and [`Wheel`] serve the
//! Select tool's box too.

use eframe::egui::Key;
use glam::{DVec3, IVec3};

use pmfedit_core::edit::CubeOp;
use pmfedit_core::map::coords::{CubeAddr, Face, LatticeBox};

use super::{
    Look, Mark, Pick, Pointer, Preview, Tool, ToolInfo, cube_edit, face_rect, material_cube, ray_plane, stroke,
};
use crate::command::{Command, ToolId};
use crate::state::EditorState;

/// The Box tool's id.
pub const ID: ToolId = ToolId("box");

/// The Box tool.
pub const INFO: ToolInfo = ToolInfo {
    id: ID,
    label: "Box",
    tooltip: "Drag a rectangle on a face; the wheel while held extrudes (up) or carves (down) it; release applies",
    key: Key::Num4,
    keys: &[],
    gizmos: false,
    make: || Box::<BoxTool>::default(),
};

/// Wheel movement per layer step, points (a notch is 50).
pub const WHEEL_STEP: f32 = 30.0;

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
    /// A drag pressed on `pick`, cells of edge `2^size_log2`, `layers` thick.
    pub fn start(pick: &Pick, size_log2: u8, layers: i32) -> Self {
        let anchor = pick.outside(size_log2).min;
        Self { level: pick.level, face: pick.face, anchor, current: anchor, size_log2, layers }
    }

    /// Moves the far corner to the cell where the pointer ray `(origin, dir)` (world) meets
    /// the plane of the face the drag started on.
    pub fn follow(&mut self, state: &EditorState, ray: Option<(DVec3, DVec3)>) {
        let (Some((o, dir)), Some(level)) = (ray, state.map.levels.get(self.level)) else { return };
        let frame = level.frame();
        let a = self.face.axis();
        let e = 1i32 << self.size_log2;
        let plane = if self.face.is_positive() { self.anchor[a] } else { self.anchor[a] + e };
        if let Some(p) = ray_plane(frame.lattice_from_world_f(o), dir, a, f64::from(plane)) {
            let mut c = CubeAddr::containing(p.floor().as_ivec3(), self.size_log2).min;
            c[a] = self.anchor[a];
            self.current = c;
        }
    }

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

    /// The heads-up line: its size in map units and layers.
    pub fn hud(&self) -> String {
        let r = self.region();
        let s = (r.max - r.min).as_dvec3() / 8.0;
        format!("box {}×{}×{} u, {} layers (wheel)", s.x, s.y, s.z, self.layers)
    }
}

/// Wheel movement gathered into whole steps of [`WHEEL_STEP`] points.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Wheel {
    acc: f32,
}

impl Wheel {
    /// Adds `points` of movement; returns the whole steps reached (negative: towards the user).
    pub fn steps(&mut self, points: f32) -> i32 {
        self.acc += points;
        let mut steps = 0;
        while self.acc >= WHEEL_STEP {
            steps += 1;
            self.acc -= WHEEL_STEP;
        }
        while self.acc <= -WHEEL_STEP {
            steps -= 1;
            self.acc += WHEEL_STEP;
        }
        steps
    }
}

/// The Box tool: the box being dragged and the wheel turned while it is held.
#[derive(Debug, Default)]
pub struct BoxTool {
    drag: Option<BoxDrag>,
    wheel: Wheel,
}

impl Tool for BoxTool {
    fn info(&self) -> &'static ToolInfo {
        &INFO
    }

    fn press(&mut self, state: &EditorState, pointer: &Pointer) -> Vec<Command> {
        self.wheel = Wheel::default();
        self.drag = pointer.pick.map(|p| BoxDrag::start(&p, state.cube_log2, 0));
        Vec::new()
    }

    fn drag(&mut self, state: &EditorState, pointer: &Pointer) -> Vec<Command> {
        let Some(d) = &mut self.drag else { return Vec::new() };
        d.follow(state, pointer.ray);
        let steps = self.wheel.steps(pointer.wheel);
        if steps != 0 {
            d.layers += steps;
            if d.layers == 0 {
                d.layers = steps.signum();
            }
        }
        Vec::new()
    }

    fn release(&mut self, state: &EditorState) -> Vec<Command> {
        self.drag.take().map(|d| d.commit(state)).unwrap_or_default()
    }

    fn cancel(&mut self, _state: &EditorState) -> Vec<Command> {
        match self.drag.take() {
            Some(_) => vec![Command::Status("Box cancelled".into())],
            None => Vec::new(),
        }
    }

    fn dragging(&self) -> bool {
        self.drag.is_some()
    }

    fn takes_wheel(&self) -> bool {
        self.drag.is_some()
    }

    fn preview(&self, state: &EditorState, pick: Option<&Pick>) -> Preview {
        let mut marks = Vec::new();
        if let Some(d) = &self.drag {
            marks.push(Mark::Box { region: d.region(), look: if d.layers < 0 { Look::Remove } else { Look::Add } });
        }
        if let Some(p) = pick {
            marks.push(Mark::Face { addr: p.inside(state.cube_log2), face: p.face, look: Look::Target });
        }
        Preview::with_grid(marks)
    }

    fn hud(&self) -> Vec<String> {
        self.drag.iter().map(BoxDrag::hud).collect()
    }
}
