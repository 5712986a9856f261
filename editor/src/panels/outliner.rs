//! The outliner: lights, entities, environment regions and load regions of the active level.
//! A click selects (`Command::Select`) and frames the camera on the object (`Command::Frame`);
//! Shift or Ctrl+click adds the object to the selection or takes it out (no framing).
//! "Add …" buttons push `AddObject` edits; a new light or entity goes to the point under the
//! view's centre ([`EditorState::view_point`](crate::state::EditorState::view_point)).

use eframe::egui::{self, Ui};
use glam::Vec3;

use pmfedit_core::edit::{Edit, ObjItem};
use pmfedit_core::format::pmf::entity::EntityData;
use pmfedit_core::map::library::{Light, LoadRegion, MapEntity};

use super::PanelCtx;
use crate::command::Command;
use crate::selection::Selection;

/// Camera distance when framing an object.
const FRAME_DISTANCE: f64 = 12.0;

fn item(ui: &mut Ui, cx: &mut PanelCtx<'_>, sel: Selection, label: String, position: Option<Vec3>) {
    let Some((level, obj)) = sel.object() else { return };
    let selected = cx.state.selection.contains(level, obj);
    let r = ui.selectable_label(selected, label);
    if r.clicked() {
        let m = ui.input(|i| i.modifiers);
        if m.shift || m.command {
            cx.sink.push(Command::Select(cx.state.selection.toggled(level, obj)));
            return;
        }
        cx.sink.push(Command::Select(sel));
        if let Some(p) = position {
            cx.sink.push(Command::Frame { target: p.as_dvec3(), distance: FRAME_DISTANCE });
        }
    }
}

fn or_default(name: &str, fallback: impl FnOnce() -> String) -> String {
    if name.is_empty() { fallback() } else { name.to_owned() }
}

/// Fills the outliner.
pub fn ui(ui: &mut Ui, cx: &mut PanelCtx<'_>) {
    let state = cx.state;
    let li = state.level;
    let Some(level) = state.map.levels.get(li) else { return };
    ui.weak(format!("Level {li}: {}", level.name));
    let objects = &level.objects;
    let new_at = state.view_point.map_or(Vec3::new(0.0, 4.0, 0.0), |p| p.as_vec3());
    egui::CollapsingHeader::new(format!("Lights ({})", objects.lights().len())).default_open(true).show(ui, |ui| {
        for (id, l) in objects.lights().iter() {
            let label = or_default(&l.name, || format!("light {id}"));
            item(ui, cx, Selection::Light { level: li, id }, label, Some(l.position));
        }
        if ui.button("Add light").clicked() {
            let light = Light::point(format!("light {}", objects.lights().len() + 1), new_at);
            cx.sink.edit(Edit::AddObject { level: li, item: ObjItem::Light(light) });
        }
    });
    egui::CollapsingHeader::new(format!("Entities ({})", objects.entities().len())).default_open(true).show(ui, |ui| {
        for (id, e) in objects.entities().iter() {
            let label = format!("{} ({})", or_default(&e.entity.name, || format!("entity {id}")), e.type_name());
            item(ui, cx, Selection::Entity { level: li, id }, label, e.position());
        }
        if ui.button("Add entity").clicked() {
            let data = pmfedit_core::format::pmf::entity::Generic { position: new_at.to_array(), ..Default::default() };
            let e = MapEntity::new(format!("entity {}", objects.entities().len() + 1), EntityData::Generic(data));
            cx.sink.edit(Edit::AddObject { level: li, item: ObjItem::Entity(Box::new(e)) });
        }
    });
    egui::CollapsingHeader::new(format!("Regions ({})", objects.regions().len())).default_open(true).show(ui, |ui| {
        for (id, r) in objects.regions().iter() {
            let env = state.map.library.environment_name(r.environment).unwrap_or("?");
            let label = format!("{} -> {env}", or_default(&r.name, || format!("{} region {id}", r.kind())));
            item(ui, cx, Selection::Region { level: li, id }, label, Some(r.center()));
        }
    });
    egui::CollapsingHeader::new(format!("Load regions ({})", objects.load_regions().len())).default_open(true).show(
        ui,
        |ui| {
            for (id, r) in objects.load_regions().iter() {
                let label = or_default(&r.name, || format!("load region {id}"));
                item(ui, cx, Selection::LoadRegion { level: li, id }, label, Some(r.center()));
            }
            if ui.button("Add load region").clicked() {
                let r = LoadRegion {
                    name: format!("load region {}", objects.load_regions().len() + 1),
                    min: Vec3::splat(-4.0),
                    max: Vec3::splat(4.0),
                    other_active_chunks: Vec::new(),
                };
                cx.sink.edit(Edit::AddObject { level: li, item: ObjItem::LoadRegion(r) });
            }
        },
    );
}
