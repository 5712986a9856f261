//! Tools: one module each. A tool turns pointer input into [`Command`]s (edits go through the
//! undo history; a drag is one step) and says what the viewport should outline for it.
//!
//! # The [`Tool`] trait
//! The viewport draws, picks (the face under the pointer: [`Pick`]) and moves the camera; for
//! the rest it forwards the pointer to the active tool: [`Tool::press`], [`Tool::drag`] every
//! frame the button stays down, [`Tool::release`], and [`Tool::cancel`] on Esc. Each tool keeps
//! its own drag state (the box being dragged, the paint stroke's last cube, the Select tool's
//! clipboard) and answers [`Tool::preview`] with what a press would act on ([`Preview`]: the
//! viewport only turns it into lines). The selection's gizmo, object markers and region outlines
//! are a viewport service ([`crate::viewport::gizmo`]) that takes presses first for the tools
//! whose [`ToolInfo::gizmos`] is set.
//!
//! # Adding a tool
//! Write `tools/NAME.rs` with a type implementing [`Tool`] and its `pub const INFO: ToolInfo`
//! (label, tooltip, the key that picks it, the keys it answers to, `make`), declare the module
//! below, and add `Entry::tool(&tools::NAME::INFO)` to [`crate::ui_command::COMMANDS`]: the
//! toolbar, the key handling, the F1 list and the README table follow from that entry.

pub mod box_tool;
pub mod clipboard;
pub mod corner;
pub mod erase;
pub mod eyedropper;
pub mod object;
pub mod paint;
pub mod path;
pub mod place;
pub mod select;
#[cfg(test)]
mod tests;

use eframe::egui;
use glam::{DVec3, IVec3};

use pmfedit_core::map::coords::{CubeAddr, Face, LatticeBox};
use pmfedit_core::map::octree::Cube;

use crate::command::{Command, ToolId};
use crate::state::EditorState;

pub use crate::pick::{Mods, Pick, PlaneUse};

/// What the toolbar, the key handling, the F1 list and the README know of a tool.
#[derive(Debug, Clone, Copy)]
pub struct ToolInfo {
    /// Stable name ([`Command::SetTool`]).
    pub id: ToolId,
    /// Toolbar label.
    pub label: &'static str,
    /// What it does (the toolbar button's hover text, the F1 list, the README).
    pub tooltip: &'static str,
    /// The key (no modifiers) that picks it.
    pub key: egui::Key,
    /// The keys it answers to while it is the active tool ([`Tool::key`]).
    pub keys: &'static [ToolKey],
    /// Whether the selection's gizmo, object markers and region outlines show and take presses
    /// before the tool does.
    pub gizmos: bool,
    /// A fresh tool (the app makes one of each at start).
    pub make: fn() -> Box<dyn Tool>,
}

/// A key a tool answers to while it is active.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolKey {
    /// The key with exactly these modifiers.
    pub shortcut: egui::KeyboardShortcut,
    /// What it does.
    pub label: &'static str,
}

impl ToolKey {
    /// `key` with `modifiers` doing `label`.
    pub const fn new(modifiers: egui::Modifiers, key: egui::Key, label: &'static str) -> Self {
        Self { shortcut: egui::KeyboardShortcut::new(modifiers, key), label }
    }
}

/// The pointer as the active tool sees it this frame.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Pointer {
    /// What the tool acts on: the face under the pointer, or the work plane under it as the
    /// tool asks ([`Tool::plane_use`]); `None`: the sky, or the pointer is off the view.
    pub pick: Option<Pick>,
    /// The world ray through the pointer (origin, unit direction); `None` off the view.
    pub ray: Option<(DVec3, DVec3)>,
    /// The pointer's position on screen, points.
    pub pos: Option<egui::Pos2>,
    /// Modifier keys held.
    pub mods: Mods,
    /// Mouse-wheel movement this frame, points (a notch is 50), positive away from the user.
    pub wheel: f32,
}

/// How a [`Mark`] is coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    /// What a press would act on.
    Target,
    /// Cubes a release would add.
    Add,
    /// Cubes a release would remove (or a corner it would push).
    Remove,
    /// A box being selected.
    Select,
}

/// One outline the viewport draws for a tool (level lattice of the active level).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mark {
    /// One face of a grid cube.
    Face { addr: CubeAddr, face: Face, look: Look },
    /// The twelve edges of a box.
    Box { region: LatticeBox, look: Look },
    /// A small box around a lattice point, `half` map units from it to each side.
    Point { at: IVec3, half: f64, look: Look },
}

/// What the viewport outlines for the active tool: the open drag's box and what a press on the
/// hovered face would act on.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Preview {
    pub marks: Vec<Mark>,
    /// Draw the cube grid on the hovered face's plane (hidden during any drag).
    pub grid: bool,
}

impl Preview {
    /// `marks` with the grid.
    pub fn with_grid(marks: Vec<Mark>) -> Self {
        Self { marks, grid: true }
    }
}

/// A tool: what pointer input and its own keys do in the viewport. One per `tools/*.rs` file;
/// see the module docs.
pub trait Tool {
    /// Its name, tooltip and keys.
    fn info(&self) -> &'static ToolInfo;

    /// The primary button went down over the view (and no gizmo took the press).
    fn press(&mut self, state: &EditorState, pointer: &Pointer) -> Vec<Command>;

    /// Every frame the primary button stays down after a press.
    fn drag(&mut self, _state: &EditorState, _pointer: &Pointer) -> Vec<Command> {
        Vec::new()
    }

    /// The primary button went up (or was found up while [`Tool::dragging`]).
    fn release(&mut self, _state: &EditorState) -> Vec<Command> {
        Vec::new()
    }

    /// Esc during a drag, or another tool picked: ends the drag with nothing of it applied (a
    /// box is dropped; a tool that edits live, as Paint does, sends [`Command::CancelStroke`],
    /// which undoes its stroke). The default is a release, for tools without a drag.
    fn cancel(&mut self, state: &EditorState) -> Vec<Command> {
        self.release(state)
    }

    /// Whether a drag is open.
    fn dragging(&self) -> bool {
        false
    }

    /// Whether the mouse wheel belongs to the tool now (the camera does not zoom).
    fn takes_wheel(&self) -> bool {
        false
    }

    /// Whether a press with `pointer` (that no gizmo handle, object marker or region outline
    /// took) starts a rectangle that selects the objects whose markers it holds, the viewport's
    /// box select ([`crate::viewport::marquee`]), instead of going to [`Tool::press`].
    fn selects_objects_in_rect(&self, _pointer: &Pointer) -> bool {
        false
    }

    /// What the viewport outlines with the pointer over `pick`.
    fn preview(&self, state: &EditorState, pick: Option<&Pick>) -> Preview;

    /// One of [`ToolInfo::keys`] was pressed. `ctx` takes what goes to the system clipboard.
    fn key(&mut self, _key: &ToolKey, _state: &EditorState, _pointer: &Pointer, _ctx: &egui::Context) -> Vec<Command> {
        Vec::new()
    }

    /// Lines for the viewport's heads-up text (a drag's size, the clipboard).
    fn hud(&self) -> Vec<String> {
        Vec::new()
    }

    /// Whether it acts on the work plane with these modifiers held ([`Pointer::pick`] and the
    /// `pick` of [`Tool::preview`] are then the plane's).
    fn plane_use(&self, _mods: Mods) -> PlaneUse {
        PlaneUse::Never
    }

    /// Whether it has a panel ([`Tool::panel`]).
    fn has_panel(&self) -> bool {
        false
    }

    /// Its own controls, in a small panel over the view while it is the current tool (the Box
    /// tool's typed dimensions).
    fn panel(&mut self, _ui: &mut egui::Ui, _state: &EditorState) -> Vec<Command> {
        Vec::new()
    }
}

/// The plain cube the current material paints (its default physics and sound materials).
pub fn material_cube(state: &EditorState) -> Cube {
    let (physics, sound) =
        state.map.library.materials().get(state.material).map_or_else(Default::default, |m| (m.physics, m.sound));
    Cube::solid(state.material, physics, sound)
}

/// A cube edit on `level`.
pub fn cube_edit(level: usize, op: pmfedit_core::edit::CubeOp) -> Command {
    Command::Edit(pmfedit_core::edit::Edit::Cubes { level, op })
}

/// `commands` as one undo step.
pub fn stroke(mut commands: Vec<Command>) -> Vec<Command> {
    if commands.is_empty() {
        return commands;
    }
    commands.insert(0, Command::BeginStroke);
    commands.push(Command::EndStroke);
    commands
}

/// `commands` as one undo step named `name` (what the user did: "Paste 4 cubes").
pub fn named_stroke(name: impl Into<String>, mut commands: Vec<Command>) -> Vec<Command> {
    if commands.is_empty() {
        return commands;
    }
    commands.insert(0, Command::BeginNamedStroke(name.into()));
    commands.push(Command::EndStroke);
    commands
}

/// `n` cubes: "1 cube", "4 cubes".
pub fn cubes_text(n: usize) -> String {
    if n == 1 { "1 cube".to_owned() } else { format!("{n} cubes") }
}

/// The box between two grid cells (inclusive) on the plane of `face`, `layers` cells thick along
/// its normal: outward from the face for `layers > 0`, inward for `layers < 0` (0 counts as 1
/// outward). `a` and `b` are minimum corners of outside cells of edge `2^size_log2`.
pub fn face_rect(face: Face, a: IVec3, b: IVec3, size_log2: u8, layers: i32) -> LatticeBox {
    let e = 1i32 << size_log2;
    let mut min = a.min(b);
    let mut max = a.max(b) + IVec3::splat(e);
    let ax = face.axis();
    let out_min = a[ax];
    let out_max = a[ax] + e;
    let layers = if layers == 0 { 1 } else { layers };
    let (lo, hi) = match (face.is_positive(), layers > 0) {
        (true, true) => (out_min, out_min + layers * e),
        (false, true) => (out_max - layers * e, out_max),
        (true, false) => (out_min + layers * e, out_min),
        (false, false) => (out_max, out_max - layers * e),
    };
    min[ax] = lo;
    max[ax] = hi;
    LatticeBox::new(min, max)
}

/// Where a ray (level lattice origin, unit direction) meets the plane `axis = coordinate`.
pub fn ray_plane(origin: DVec3, dir: DVec3, axis: usize, coordinate: f64) -> Option<DVec3> {
    let d = dir[axis];
    if d.abs() < 1e-9 {
        return None;
    }
    let t = (coordinate - origin[axis]) / d;
    (t > 0.0).then(|| origin + dir * t)
}
