//! Paint: click or drag paints the hovered face of the grid cube under the pointer with the
//! current material; Shift paints every face of that cube; Ctrl+click fills ([`fill`]: the
//! connected faces of the same material on that plane). A drag is one undo step (a stroke from
//! the press to the release) and paints every cell the pointer crossed between two frames, not
//! only those it was over when a frame was drawn. A material dragged from the library onto the
//! viewport paints through [`with_material`] and outlines through [`marks`] too (see
//! [`crate::dnd`]); [`paint_selection`] paints the selected box.

use std::collections::{BTreeMap, HashSet, VecDeque};

use eframe::egui::Key;
use glam::{DVec3, IVec3};
use pmfedit_core::edit::CubeOp;
use pmfedit_core::map::Level;
use pmfedit_core::map::coords::{CubeAddr, Face, LatticeBox};
use pmfedit_core::map::ids::MaterialId;

use super::{Look, Mark, Mods, Pick, Pointer, Preview, Tool, ToolInfo, cube_edit, named_stroke};
use crate::command::{Command, ToolId};
use crate::state::EditorState;

/// The Paint tool's id.
pub const ID: ToolId = ToolId("paint");

/// The Paint tool.
pub const INFO: ToolInfo = ToolInfo {
    id: ID,
    label: "Paint",
    tooltip: "Click or drag over faces: paint them with the current material (Shift: every face of the cube; \
              Ctrl+click: fill the connected faces of the same material)",
    key: Key::Num3,
    keys: &[],
    gizmos: false,
    make: || Box::<Paint>::default(),
};

/// Most faces one fill paints (a fill of a whole terrain stops there and says so).
pub const FILL_LIMIT: usize = 65_536;

/// The Paint tool: the open stroke's last painted cell.
#[derive(Debug, Default)]
pub struct Paint {
    /// While a stroke is open: the cube, face and Shift of the last paint (a cell is painted
    /// once until the pointer leaves it).
    stroke: Option<(CubeAddr, Face, bool)>,
    /// While a stroke is open: the ray and hit point (level lattice) of the last frame the
    /// pointer was over a face; the next frame paints the cells between.
    last: Option<((DVec3, DVec3), DVec3)>,
}

/// The edit for the pointer over `pick` (no stroke markers).
pub fn apply(state: &EditorState, pick: &Pick, mods: Mods) -> Vec<Command> {
    with_material(state, pick, mods, state.material)
}

/// The edit painting `material` on the face of `pick` (Shift: every face of the grid cube).
pub fn with_material(state: &EditorState, pick: &Pick, mods: Mods, material: MaterialId) -> Vec<Command> {
    let region = pick.inside(state.cube_log2).lattice_box();
    let op = if mods.shift {
        CubeOp::PaintBox { region, material }
    } else {
        CubeOp::PaintFaceBox { region, face: pick.face, material }
    };
    vec![cube_edit(pick.level, op)]
}

/// What painting `pick` changes: its face of the grid cube, or the whole cube.
pub fn marks(state: &EditorState, pick: &Pick, whole_cube: bool) -> Vec<Mark> {
    let addr = pick.inside(state.cube_log2);
    vec![if whole_cube {
        Mark::Box { region: addr.lattice_box(), look: Look::Target }
    } else {
        Mark::Face { addr, face: pick.face, look: Look::Target }
    }]
}

impl Paint {
    /// The paint of `pick` unless it is the cell painted last.
    fn paint_once(&mut self, state: &EditorState, pick: &Pick, mods: Mods) -> Vec<Command> {
        let key = (pick.inside(state.cube_log2), pick.face, mods.shift);
        if self.stroke == Some(key) {
            return Vec::new();
        }
        self.stroke = Some(key);
        apply(state, pick, mods)
    }
}

/// The material name for step names ("#3" for an id the library lacks).
fn material_name(state: &EditorState, material: MaterialId) -> String {
    state.map.library.materials().get(material).map_or_else(|| format!("#{}", material.0), |m| m.name.clone())
}

/// The material of `face` of the grid cell at `min` (edge `edge`), when that face is open to
/// air: sampled just inside the face, at the middle of the cell; `None` for air or a face
/// covered by a solid neighbour.
fn open_face_material(level: &Level, min: IVec3, edge: i32, face: Face) -> Option<MaterialId> {
    let a = face.axis();
    let mut inside = min + IVec3::splat(edge / 2);
    inside[a] = if face.is_positive() { min[a] + edge - 1 } else { min[a] };
    let (cube, _) = level.get(inside).ok()?;
    let outside = inside + face.normal();
    if level.get(outside).is_ok_and(|(c, _)| c.is_solid()) {
        return None;
    }
    cube.face_material(face)
}

/// Ctrl+click: paints `material` on the face of `pick` and on every face connected to it across
/// cell edges on the same plane, facing the same way, open to air and of the picked face's
/// material (grid cells of the current cube size); one undo step named for it. At most
/// [`FILL_LIMIT`] faces: a bigger fill stops there and the status bar says so.
pub fn fill(state: &EditorState, pick: &Pick, material: MaterialId) -> Vec<Command> {
    let Some(level) = state.map.levels.get(pick.level) else { return Vec::new() };
    let Some(from) = pick.cube.face_material(pick.face) else { return Vec::new() };
    let edge = 1i32 << state.cube_log2;
    let face = pick.face;
    let a = face.axis();
    let (u, v) = ((a + 1) % 3, (a + 2) % 3);
    let start = pick.inside(state.cube_log2).min;
    let mut seen = HashSet::from([start]);
    let mut queue = VecDeque::from([start]);
    let mut cells = Vec::new();
    while let Some(c) = queue.pop_front() {
        if cells.len() == FILL_LIMIT {
            break;
        }
        cells.push(c);
        for (axis, step) in [(u, edge), (u, -edge), (v, edge), (v, -edge)] {
            let mut n = c;
            n[axis] += step;
            if seen.insert(n) && open_face_material(level, n, edge, face) == Some(from) {
                queue.push_back(n);
            }
        }
    }
    let limited = !queue.is_empty();
    // Runs along `u` become one box each (a floor is a few edits, not thousands).
    let mut rows: BTreeMap<(i32, i32), Vec<i32>> = BTreeMap::new();
    for c in &cells {
        rows.entry((c[a], c[v])).or_default().push(c[u]);
    }
    let mut edits = Vec::new();
    for ((ka, kv), mut us) in rows {
        us.sort_unstable();
        let mut i = 0;
        while i < us.len() {
            let mut j = i;
            while j + 1 < us.len() && us[j + 1] == us[j] + edge {
                j += 1;
            }
            let mut lo = IVec3::ZERO;
            (lo[a], lo[v], lo[u]) = (ka, kv, us[i]);
            let mut hi = lo + IVec3::splat(edge);
            hi[u] = us[j] + edge;
            edits.push(cube_edit(pick.level, CubeOp::PaintFaceBox { region: LatticeBox::new(lo, hi), face, material }));
            i = j + 1;
        }
    }
    let name = format!("Fill {} with {}", faces_text(cells.len()), material_name(state, material));
    let mut out = named_stroke(name, edits);
    if limited {
        out.push(Command::Status(format!("Fill stopped at {FILL_LIMIT} faces")));
    }
    out
}

fn faces_text(n: usize) -> String {
    if n == 1 { "1 face".to_owned() } else { format!("{n} faces") }
}

/// Paints every face of the selected box (or cube) with the current material: one undo step.
pub fn paint_selection(state: &EditorState) -> Vec<Command> {
    let Some((level, region)) = super::select::selected_box(state) else {
        return vec![Command::Status("Select a box of cubes first (Select tool)".into())];
    };
    let name = format!("Paint selection with {}", material_name(state, state.material));
    named_stroke(name, vec![cube_edit(level, CubeOp::PaintBox { region, material: state.material })])
}

impl Tool for Paint {
    fn info(&self) -> &'static ToolInfo {
        &INFO
    }

    fn press(&mut self, state: &EditorState, pointer: &Pointer) -> Vec<Command> {
        let Some(pick) = pointer.pick else { return Vec::new() };
        if pointer.mods.ctrl {
            return fill(state, &pick, state.material);
        }
        self.stroke = Some((pick.inside(state.cube_log2), pick.face, pointer.mods.shift));
        self.last = pointer.ray.map(|r| (r, pick.point));
        let mut out = vec![Command::BeginStroke];
        out.extend(apply(state, &pick, pointer.mods));
        out
    }

    fn drag(&mut self, state: &EditorState, pointer: &Pointer) -> Vec<Command> {
        let (Some(_), Some(pick)) = (&self.stroke, pointer.pick) else { return Vec::new() };
        let mut out = Vec::new();
        // A fast stroke moves the pointer over several cells between two frames: paint the
        // faces under rays between the last frame's and this one's.
        if let (Some((from, from_point)), Some(to)) = (self.last, pointer.ray)
            && let Some(level) = state.map.levels.get(pick.level)
        {
            let cell = f64::from(1u32 << state.cube_log2);
            let steps = ((pick.point - from_point).length() / (cell / 2.0)).ceil().clamp(1.0, 512.0) as usize;
            for i in 1..steps {
                let t = i as f64 / steps as f64;
                let origin = from.0.lerp(to.0, t);
                let dir = from.1.lerp(to.1, t).normalize_or_zero();
                if let Some(hit) = level.ray_cast_world(origin, dir, crate::pick::PICK_DISTANCE) {
                    out.extend(self.paint_once(state, &Pick::from_hit(pick.level, &hit), pointer.mods));
                }
            }
        }
        self.last = pointer.ray.map(|r| (r, pick.point));
        out.extend(self.paint_once(state, &pick, pointer.mods));
        out
    }

    fn release(&mut self, _state: &EditorState) -> Vec<Command> {
        self.last = None;
        self.stroke.take().map(|_| Command::EndStroke).into_iter().collect()
    }

    fn cancel(&mut self, _state: &EditorState) -> Vec<Command> {
        match self.stroke.take() {
            Some(_) => vec![Command::CancelStroke, Command::Status("Paint stroke cancelled".into())],
            None => Vec::new(),
        }
    }

    fn dragging(&self) -> bool {
        self.stroke.is_some()
    }

    fn preview(&self, state: &EditorState, pick: Option<&Pick>) -> Preview {
        Preview::with_grid(pick.map(|p| marks(state, p, false)).unwrap_or_default())
    }
}
