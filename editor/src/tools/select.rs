//! Select: drag a rectangle of grid cells on a face (the wheel, while held, makes it thicker
//! into the surface); release selects that box; Esc drops it. With a box selected: Ctrl+C copy,
//! Ctrl+X cut, Ctrl+V paste onto the hovered face, Ctrl+D duplicate (next to the selection,
//! along the normal of the face it was dragged on); M / Shift+M mirror the clipboard along X /
//! Z, R rotates it 90° about Y (Delete, for any selection, is the app's). With lights, entities
//! or regions selected (Shift/Ctrl+click adds more) the same keys copy, cut, paste (centred on
//! the hovered face) and duplicate (one cube edge along +X) the objects. Every change is one
//! undo step. The selection's gizmo and region outlines take presses first.
//!
//! Box select of objects ([`crate::viewport::marquee`]): a drag that starts over the sky or the
//! empty ground (no face under the pointer), or anywhere with Shift or Ctrl held, draws a
//! rectangle on screen instead of a box of cells; its release selects every light, entity and
//! region whose marker (a region's: its centre) lies inside: plain replaces the selection,
//! Shift adds to it, Ctrl toggles each one. A plain drag that starts on a face still selects a
//! box of cubes, so the two never compete for a press.

use eframe::egui::{self, Key, Modifiers};
use glam::IVec3;

use pmfedit_core::edit::{CubeOp, Edit, ObjItem};
use pmfedit_core::map::coords::LatticeBox;

use super::box_tool::{BoxDrag, HeldBox};
use super::clipboard::Clipboard;
use super::{Look, Mark, Pick, Pointer, Preview, Tool, ToolInfo, ToolKey, cube_edit, cubes_text, named_stroke, stroke};
use crate::command::{Command, ToolId};
use crate::state::{EditorState, Selection};

/// The Select tool's id.
pub const ID: ToolId = ToolId("select");

const COPY: ToolKey = ToolKey::new(Modifiers::COMMAND, Key::C, "Copy the selected box, or the selected objects");
const CUT: ToolKey = ToolKey::new(Modifiers::COMMAND, Key::X, "Cut the selected box, or the selected objects");
const PASTE: ToolKey = ToolKey::new(
    Modifiers::COMMAND,
    Key::V,
    "Paste onto the hovered face (a box is selected after; objects are centred on the face)",
);
const DUPLICATE: ToolKey = ToolKey::new(
    Modifiers::COMMAND,
    Key::D,
    "Duplicate the selected box next to itself (selects the copy), or the selected objects one cube along +X",
);
const MIRROR_X: ToolKey = ToolKey::new(Modifiers::NONE, Key::M, "Mirror the clipboard along X");
const MIRROR_Z: ToolKey = ToolKey::new(Modifiers::SHIFT, Key::M, "Mirror the clipboard along Z");
const ROTATE: ToolKey = ToolKey::new(Modifiers::NONE, Key::R, "Rotate the clipboard 90° about Y");

/// The Select tool.
pub const INFO: ToolInfo = ToolInfo {
    id: ID,
    label: "Select",
    tooltip: "Drag a rectangle on a face to select a box of cubes (the wheel makes it deeper); drag from the \
              sky or empty ground, or with Shift (add) / Ctrl (toggle), to box-select lights, entities and \
              regions; drag the selected object's gizmo",
    key: Key::Num5,
    keys: &[COPY, CUT, PASTE, DUPLICATE, MIRROR_X, MIRROR_Z, ROTATE],
    gizmos: true,
    make: || Box::new(Select::default()),
};

/// The Select tool: the box being dragged, the clipboard, and the normal Ctrl+D copies along.
#[derive(Debug)]
pub struct Select {
    held: HeldBox,
    /// What Ctrl+C or Ctrl+X took of a box.
    pub clipboard: Option<Clipboard>,
    /// What Ctrl+C or Ctrl+X took of selected objects (a copy of a box drops it, and back).
    pub objects: Option<Vec<ObjItem>>,
    /// The normal of the face the last box was dragged on (Ctrl+D copies along it).
    normal: IVec3,
}

impl Default for Select {
    fn default() -> Self {
        Self { held: HeldBox::default(), clipboard: None, objects: None, normal: IVec3::Y }
    }
}

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

/// Delete: one undo step clearing the selected box.
pub fn delete(state: &EditorState) -> Vec<Command> {
    match selected_box(state) {
        Some((level, region)) => stroke(vec![cube_edit(level, CubeOp::ClearBox { region })]),
        None => Vec::new(),
    }
}

/// Ctrl+X: the clipboard and the edit clearing the selection.
pub fn cut(state: &EditorState) -> Option<(Clipboard, Vec<Command>)> {
    let (level, region) = selected_box(state)?;
    let clip = copy(state)?;
    let name = format!("Cut {}", cubes_text(clip.pieces.len()));
    Some((clip, named_stroke(name, vec![cube_edit(level, CubeOp::ClearBox { region })])))
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
    paste_at(pick.level, clip, dest, "Paste")
}

/// The paste of `clip` at `dest` as one step named `verb` and the number of pieces.
fn paste_at(level: usize, clip: &Clipboard, dest: IVec3, verb: &str) -> Vec<Command> {
    let name = format!("{verb} {}", cubes_text(clip.pieces.len()));
    let mut out = named_stroke(name, clip.paste(level, dest));
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
    paste_at(level, &clip, dest, "Duplicate")
}

/// `n` objects: "1 object", "3 objects".
pub fn objects_text(n: usize) -> String {
    if n == 1 { "1 object".to_owned() } else { format!("{n} objects") }
}

/// The selected level objects, copied (their level and the copies).
pub fn copy_objects(state: &EditorState) -> Option<(usize, Vec<ObjItem>)> {
    let (level, objects) = state.selection.objects()?;
    let lv = state.map.levels.get(level)?;
    Some((level, objects.iter().filter_map(|o| o.get(&lv.objects)).collect()))
}

/// One undo step adding `items` to `level` moved by `offset` (map units), named `verb` and the
/// count.
fn add_objects(level: usize, items: &[ObjItem], offset: glam::Vec3, verb: &str) -> Vec<Command> {
    let edits = items
        .iter()
        .cloned()
        .map(|mut item| {
            if let Some(p) = item.position() {
                item.set_position(p + offset);
            }
            Command::Edit(Edit::AddObject { level, item })
        })
        .collect();
    named_stroke(format!("{verb} {}", objects_text(items.len())), edits)
}

/// Ctrl+V of copied objects: their centre lands on the hovered face (half a unit out of it).
pub fn paste_objects(state: &EditorState, items: &[ObjItem], pick: &Pick) -> Vec<Command> {
    let Some(to) = super::object::drop_point(state, pick) else { return Vec::new() };
    let points: Vec<glam::Vec3> = items.iter().filter_map(ObjItem::position).collect();
    let centre = points.iter().sum::<glam::Vec3>() / points.len().max(1) as f32;
    add_objects(pick.level, items, to - centre, "Paste")
}

/// Ctrl+D of selected objects: copies one cube edge along +X.
pub fn duplicate_objects(state: &EditorState) -> Vec<Command> {
    let Some((level, items)) = copy_objects(state) else { return Vec::new() };
    let edge = (1u32 << state.cube_log2) as f32 / 8.0;
    add_objects(level, &items, glam::Vec3::X * edge, "Duplicate")
}

/// What the system clipboard gets for a copy: a note (egui-winit turns Ctrl+V into a paste
/// event only when the system clipboard holds something).
fn note(c: &Clipboard) -> String {
    let s = c.size.as_dvec3() / 8.0;
    format!("pmfedit cubes {}×{}×{}", s.x, s.y, s.z)
}

impl Tool for Select {
    fn info(&self) -> &'static ToolInfo {
        &INFO
    }

    fn press(&mut self, state: &EditorState, pointer: &Pointer) -> Vec<Command> {
        self.held.press(pointer.pick.as_ref(), state.cube_log2, -1);
        match pointer.pick {
            Some(_) => Vec::new(),
            None => vec![Command::Select(Selection::None)],
        }
    }

    fn drag(&mut self, state: &EditorState, pointer: &Pointer) -> Vec<Command> {
        if let Some((d, steps)) = self.held.follow(state, pointer)
            && steps != 0
        {
            d.layers = (d.layers - steps).min(-1);
        }
        Vec::new()
    }

    fn release(&mut self, _state: &EditorState) -> Vec<Command> {
        let Some(d) = self.held.take() else { return Vec::new() };
        self.normal = d.face.normal();
        vec![finish(&d)]
    }

    fn cancel(&mut self, _state: &EditorState) -> Vec<Command> {
        self.held.cancel("Selection cancelled")
    }

    fn dragging(&self) -> bool {
        self.held.dragging()
    }

    fn takes_wheel(&self) -> bool {
        self.held.dragging()
    }

    fn selects_objects_in_rect(&self, pointer: &Pointer) -> bool {
        pointer.mods.shift || pointer.mods.ctrl || pointer.pick.is_none()
    }

    fn preview(&self, state: &EditorState, pick: Option<&Pick>) -> Preview {
        let mut marks = Vec::new();
        if let Some(d) = self.held.get() {
            marks.push(Mark::Box { region: d.region(), look: Look::Select });
        }
        if let Some(p) = pick {
            marks.push(Mark::Face { addr: p.inside(state.cube_log2), face: p.face, look: Look::Target });
        }
        Preview::with_grid(marks)
    }

    fn key(&mut self, key: &ToolKey, state: &EditorState, pointer: &Pointer, ctx: &egui::Context) -> Vec<Command> {
        match *key {
            COPY if state.selection.objects().is_some() => {
                let Some((_, items)) = copy_objects(state) else { return Vec::new() };
                ctx.copy_text(format!("pmfedit {}", objects_text(items.len())));
                let n = items.len();
                self.objects = Some(items);
                self.clipboard = None;
                vec![Command::Status(format!("Copied {}", objects_text(n)))]
            }
            CUT if state.selection.objects().is_some() => {
                let Some((level, items)) = copy_objects(state) else { return Vec::new() };
                let Some((_, refs)) = state.selection.objects() else { return Vec::new() };
                ctx.copy_text(format!("pmfedit {}", objects_text(items.len())));
                let name = format!("Cut {}", objects_text(items.len()));
                self.objects = Some(items);
                self.clipboard = None;
                let mut out = named_stroke(
                    name,
                    refs.into_iter().map(|id| Command::Edit(Edit::RemoveObject { level, id })).collect(),
                );
                out.push(Command::Select(Selection::None));
                out
            }
            COPY => {
                let Some(c) = copy(state) else { return Vec::new() };
                ctx.copy_text(note(&c));
                let pieces = c.pieces.len();
                self.clipboard = Some(c);
                self.objects = None;
                vec![Command::Status(format!("Copied {pieces} pieces"))]
            }
            CUT => {
                let Some((c, commands)) = cut(state) else { return Vec::new() };
                ctx.copy_text(note(&c));
                self.clipboard = Some(c);
                self.objects = None;
                commands
            }
            PASTE => match (&self.clipboard, &self.objects, pointer.pick) {
                (Some(c), _, Some(p)) => paste(state, c, &p),
                (None, Some(items), Some(p)) => paste_objects(state, items, &p),
                _ => Vec::new(),
            },
            DUPLICATE if state.selection.objects().is_some() => duplicate_objects(state),
            DUPLICATE => duplicate(state, self.normal),
            MIRROR_X | MIRROR_Z => {
                let Some(c) = &self.clipboard else { return Vec::new() };
                self.clipboard = Some(c.mirrored(if *key == MIRROR_Z { 2 } else { 0 }));
                vec![Command::Status("Clipboard mirrored".into())]
            }
            ROTATE => {
                let Some(c) = &self.clipboard else { return Vec::new() };
                self.clipboard = Some(c.rotated());
                vec![Command::Status("Clipboard rotated 90°".into())]
            }
            _ => Vec::new(),
        }
    }

    fn hud(&self) -> Vec<String> {
        let mut lines = self.held.hud();
        if let Some(c) = &self.clipboard {
            let s = c.size.as_dvec3() / 8.0;
            lines.push(format!("clipboard {}×{}×{} u", s.x, s.y, s.z));
        }
        lines
    }
}
