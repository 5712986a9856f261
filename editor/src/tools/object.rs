//! Lights & entities: click on a surface places a point light half a unit off the hovered face
//! (Shift+click: a prop entity) and selects it; press on an existing light or entity marker
//! selects it and dragging moves it over the surfaces under the pointer (`Edit::MoveObject`, one
//! undo step per drag). The markers, the selected object's gizmo (axis arrows, a light's range, a
//! box's faces) and clicks on region outlines are the viewport's gizmo service
//! ([`crate::viewport::gizmo`]), which takes presses before this tool ([`ToolInfo::gizmos`]).

use eframe::egui::Key;
use glam::Vec3;

use pmfedit_core::edit::{Edit, ObjItem, ObjRef};
use pmfedit_core::format::pmf::entity::{EntityData, Prop};
use pmfedit_core::map::library::{EntityId, Light, LightId, MapEntity, TableId};

use super::{Mods, Pick, Pointer, Preview, Tool, ToolInfo, stroke};
use crate::command::{Command, ToolId};
use crate::state::{EditorState, Selection};

/// The Lights & entities tool's id.
pub const ID: ToolId = ToolId("object");

/// The Lights & entities tool.
pub const INFO: ToolInfo = ToolInfo {
    id: ID,
    label: "Lights & entities",
    tooltip: "Click a surface: place a light (Shift: a prop entity); drag a marker or the selected object's \
              gizmo to move it",
    key: Key::Num8,
    keys: &[],
    gizmos: true,
    make: || Box::new(Object),
};

/// The Lights & entities tool (its drags are the gizmo's).
#[derive(Debug, Default)]
pub struct Object;

impl Tool for Object {
    fn info(&self) -> &'static ToolInfo {
        &INFO
    }

    fn plane_use(&self, _mods: Mods) -> super::PlaneUse {
        super::PlaneUse::Fallback
    }

    fn press(&mut self, state: &EditorState, pointer: &Pointer) -> Vec<Command> {
        pointer.pick.map_or_else(Vec::new, |pick| place(state, &pick, pointer.mods))
    }

    fn preview(&self, _state: &EditorState, _pick: Option<&Pick>) -> Preview {
        Preview::default()
    }
}

/// Where an object dropped on `pick` goes (world space): half a unit off the face.
pub fn drop_point(state: &EditorState, pick: &Pick) -> Option<Vec3> {
    let frame = state.map.levels.get(pick.level)?.frame();
    let p = frame.world_from_lattice_f(pick.point) + pick.normal().as_dvec3() * 0.5;
    Some(p.as_vec3())
}

/// A click on a surface: one undo step adding the object, then selecting it.
pub fn place(state: &EditorState, pick: &Pick, mods: Mods) -> Vec<Command> {
    let Some(level) = state.map.levels.get(pick.level) else { return Vec::new() };
    let Some(p) = drop_point(state, pick) else { return Vec::new() };
    let objects = &level.objects;
    let (item, select) = if mods.shift {
        let id = EntityId::from_raw(objects.entities().next_id());
        let prop =
            Prop { position: p.to_array(), box_pos: [0.5; 3], box_neg: [-0.5; 3], mass: 10.0, ..Prop::default() };
        let e = MapEntity::new(format!("prop_{}", id.raw()), EntityData::Prop(prop));
        (ObjItem::Entity(Box::new(e)), Selection::Entity { level: pick.level, id })
    } else {
        let id = LightId::from_raw(objects.lights().next_id());
        (ObjItem::Light(Light::point(format!("light_{}", id.raw()), p)), Selection::Light { level: pick.level, id })
    };
    let mut out = stroke(vec![Command::Edit(Edit::AddObject { level: pick.level, item })]);
    out.push(Command::Select(select));
    out
}

/// One step of a move drag (the viewport brackets the drag with stroke markers).
pub fn move_to(level: usize, id: ObjRef, position: Vec3) -> Command {
    Command::Edit(Edit::MoveObject { level, id, position })
}
