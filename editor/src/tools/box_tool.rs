//! Box, Sauerbraten style: press on the work plane (the grid every map shows; with Shift held, on
//! the face under the pointer instead), drag a rectangle of grid cells over that plane, turn the
//! mouse wheel while the button is held to extrude (up) or carve (down) it, one layer a notch,
//! release to apply one `FillBox` (extrude) or `ClearBox` (carve) edit. Without wheel movement
//! the rectangle is extruded one layer. Esc drops the box. [`HeldBox`] (a [`BoxDrag`] and the
//! [`Wheel`] turned while it is held) is the one rectangle drag of the Box and Select tools.
//!
//! Its panel over the view types a box instead ([`BoxForm`]): minimum corner and size in map
//! units, then Fill or Carve; a finished drag fills the form in with the box it made.

use eframe::egui::{self, Key};
use glam::{DVec3, IVec3};

use pmfedit_core::edit::CubeOp;
use pmfedit_core::map::coords::{CubeAddr, Face, LatticeBox};

use super::{
    Look, Mark, Mods, Pick, PlaneUse, Pointer, Preview, Tool, ToolInfo, cube_edit, face_rect, material_cube, ray_plane,
    stroke,
};
use crate::command::{Command, ToolId};
use crate::state::EditorState;

/// The Box tool's id.
pub const ID: ToolId = ToolId("box");

/// The Box tool.
pub const INFO: ToolInfo = ToolInfo {
    id: ID,
    label: "Box",
    tooltip: "Drag a rectangle on the work plane (Shift: on the face under the pointer); the wheel while held \
              extrudes (up) or carves (down) it a layer a notch; release applies. Its panel types a box",
    key: Key::Num4,
    keys: &[],
    gizmos: false,
    make: || Box::<BoxTool>::default(),
};

/// Wheel movement per layer step, points: one notch (see `wheel_points` in the viewport).
pub const WHEEL_STEP: f32 = 50.0;

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

    /// Adds `steps` wheel steps to the layers, skipping 0 (one layer outward and one inward are
    /// neighbours: a notch always changes the box).
    pub fn add_layers(&mut self, steps: i32) {
        if steps == 0 {
            return;
        }
        let mut l = self.layers + steps;
        if self.layers > 0 && l <= 0 {
            l -= 1;
        } else if self.layers < 0 && l >= 0 {
            l += 1;
        }
        self.layers = l;
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

/// A typed box, map units: what the Box panel shows and fills or carves.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoxForm {
    /// The minimum corner (world).
    pub min: DVec3,
    /// The size along X, Y and Z.
    pub size: DVec3,
}

impl Default for BoxForm {
    fn default() -> Self {
        Self { min: DVec3::ZERO, size: DVec3::ONE }
    }
}

impl BoxForm {
    /// The form showing `region` of `level` (its world corner and size).
    pub fn of(state: &EditorState, level: usize, region: LatticeBox) -> Self {
        let f = state.map.levels.get(level).map(|l| l.frame());
        let min = f.map_or(DVec3::ZERO, |f| f.world_from_lattice(region.min));
        Self { min, size: (region.max - region.min).as_dvec3() / 8.0 }
    }

    /// The lattice box of the active level it names (corners rounded to the lattice, at least one
    /// lattice unit thick); `None` without a level.
    pub fn region(&self, state: &EditorState) -> Option<LatticeBox> {
        let f = state.map.levels.get(state.level)?.frame();
        let min = f.lattice_from_world_f(self.min).round().as_ivec3();
        let size = (self.size * 8.0).round().as_ivec3().max(IVec3::ONE);
        Some(LatticeBox::new(min, min + size))
    }

    /// Fill (`carve` false) or clear the box: one undo step.
    pub fn apply(&self, state: &EditorState, carve: bool) -> Vec<Command> {
        let Some(region) = self.region(state) else { return Vec::new() };
        let op =
            if carve { CubeOp::ClearBox { region } } else { CubeOp::FillBox { region, cube: material_cube(state) } };
        stroke(vec![cube_edit(state.level, op)])
    }
}

/// A rectangle drag of grid cells held by a tool (the Box and Select tools): the box being
/// dragged and the wheel turned while it is held. It answers the [`Tool`] methods every such
/// tool shares: [`Tool::cancel`], [`Tool::dragging`], [`Tool::takes_wheel`] and the HUD line.
#[derive(Debug, Default)]
pub struct HeldBox {
    drag: Option<BoxDrag>,
    wheel: Wheel,
}

impl HeldBox {
    /// A press on `pick` (`None`: no drag) starts a box of cells of edge `2^size_log2`, `layers`
    /// thick.
    pub fn press(&mut self, pick: Option<&Pick>, size_log2: u8, layers: i32) {
        self.wheel = Wheel::default();
        self.drag = pick.map(|p| BoxDrag::start(p, size_log2, layers));
    }

    /// A held-button frame: the far corner follows the pointer; the open drag and the wheel
    /// steps turned this frame, if a drag is open.
    pub fn follow(&mut self, state: &EditorState, pointer: &Pointer) -> Option<(&mut BoxDrag, i32)> {
        let d = self.drag.as_mut()?;
        d.follow(state, pointer.ray);
        Some((d, self.wheel.steps(pointer.wheel)))
    }

    /// The open drag, if any.
    pub fn get(&self) -> Option<&BoxDrag> {
        self.drag.as_ref()
    }

    /// Ends the drag (the release), handing it over.
    pub fn take(&mut self) -> Option<BoxDrag> {
        self.drag.take()
    }

    /// Esc: drops the drag, saying `what` ("Box cancelled") when one was open.
    pub fn cancel(&mut self, what: &str) -> Vec<Command> {
        match self.drag.take() {
            Some(_) => vec![Command::Status(what.into())],
            None => Vec::new(),
        }
    }

    /// Whether a drag is open (the wheel is then the tool's).
    pub fn dragging(&self) -> bool {
        self.drag.is_some()
    }

    /// The open drag's heads-up line.
    pub fn hud(&self) -> Vec<String> {
        self.drag.iter().map(BoxDrag::hud).collect()
    }
}

/// The Box tool: the box being dragged and the typed box.
#[derive(Debug, Default)]
pub struct BoxTool {
    held: HeldBox,
    /// The panel's box.
    pub form: BoxForm,
}

impl Tool for BoxTool {
    fn info(&self) -> &'static ToolInfo {
        &INFO
    }

    fn press(&mut self, state: &EditorState, pointer: &Pointer) -> Vec<Command> {
        self.held.press(pointer.pick.as_ref(), state.cube_log2, 1);
        Vec::new()
    }

    fn drag(&mut self, state: &EditorState, pointer: &Pointer) -> Vec<Command> {
        if let Some((d, steps)) = self.held.follow(state, pointer) {
            d.add_layers(steps);
        }
        Vec::new()
    }

    fn release(&mut self, state: &EditorState) -> Vec<Command> {
        let Some(d) = self.held.take() else { return Vec::new() };
        self.form = BoxForm::of(state, d.level, d.region());
        d.commit(state)
    }

    fn cancel(&mut self, _state: &EditorState) -> Vec<Command> {
        self.held.cancel("Box cancelled")
    }

    fn dragging(&self) -> bool {
        self.held.dragging()
    }

    fn takes_wheel(&self) -> bool {
        self.held.dragging()
    }

    fn preview(&self, state: &EditorState, pick: Option<&Pick>) -> Preview {
        let mut marks = Vec::new();
        if let Some(d) = self.held.get() {
            marks.push(Mark::Box { region: d.region(), look: if d.layers < 0 { Look::Remove } else { Look::Add } });
        }
        if let Some(p) = pick {
            marks.push(Mark::Face { addr: p.inside(state.cube_log2), face: p.face, look: Look::Target });
        }
        Preview::with_grid(marks)
    }

    fn hud(&self) -> Vec<String> {
        self.held.hud()
    }

    fn plane_use(&self, mods: Mods) -> PlaneUse {
        if mods.shift { PlaneUse::Never } else { PlaneUse::Always }
    }

    fn has_panel(&self) -> bool {
        true
    }

    fn panel(&mut self, ui: &mut egui::Ui, state: &EditorState) -> Vec<Command> {
        let mut out = Vec::new();
        let step = f64::from(1u32 << state.cube_log2) / 8.0;
        ui.strong("Box (map units)");
        egui::Grid::new("box_form").num_columns(6).show(ui, |ui| {
            for (value, names, min) in [
                (&mut self.form.min, ["min x", "min y", "min z"], f64::MIN),
                (&mut self.form.size, ["width", "height", "depth"], 0.125),
            ] {
                for (axis, name) in names.into_iter().enumerate() {
                    let l = ui.label(name);
                    ui.add(egui::DragValue::new(&mut value[axis]).speed(step).range(min..=f64::MAX).max_decimals(3))
                        .labelled_by(l.id);
                }
                ui.end_row();
            }
        });
        ui.horizontal(|ui| {
            if ui.button("Fill box").on_hover_text("Fill the typed box with the current material").clicked() {
                out = self.form.apply(state, false);
            }
            if ui.button("Carve box").on_hover_text("Empty the typed box").clicked() {
                out = self.form.apply(state, true);
            }
        });
        out
    }
}
