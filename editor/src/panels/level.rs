//! Level settings of the active level: name, chunk size (editable only while the level has no
//! cube), center chunk, flags, default environments and the air physics material; plus adding,
//! switching and removing levels.
//!
//! Edits: `RenameLevel`, `SetChunkSize`, `SetCenterChunk`, `SetLevelFlags`,
//! `SetDefaultEnvironment`, `SetAirPhysics`, `AddLevel`, `RemoveLevel` — one per change.

use eframe::egui::{self, Ui};

use pmfedit_core::edit::Edit;
use pmfedit_core::map::coords::ChunkCoord;
use pmfedit_core::map::library::{EnvKind, PhysicsId};

use super::PanelCtx;
use super::form::{self, grid};
use super::options::{env_options, kind_label, optional};
use crate::command::Command;

/// Fills the level settings panel.
pub fn ui(ui: &mut Ui, cx: &mut PanelCtx<'_>) {
    let state = cx.state;
    let map = &state.map;
    let li = state.level.min(map.levels.len().saturating_sub(1));
    let Some(level) = map.levels.get(li) else { return };
    ui.horizontal(|ui| {
        let l = ui.label("Level");
        egui::ComboBox::from_id_salt("level_pick")
            .selected_text(format!("{li}: {}", level.name))
            .show_ui(ui, |ui| {
                for (i, lv) in map.levels.iter().enumerate() {
                    if ui.selectable_label(i == li, format!("{i}: {}", lv.name)).clicked() {
                        cx.sink.push(Command::SetLevel(i));
                    }
                }
            })
            .response
            .labelled_by(l.id);
        if ui.button("Add level").clicked() {
            let name = format!("level {}", map.levels.len());
            cx.sink.edit(Edit::AddLevel { name, chunk_size_log2: level.chunk_size_log2() });
            cx.sink.push(Command::SetLevel(map.levels.len()));
        }
        if ui.add_enabled(map.levels.len() > 1, egui::Button::new("Remove level")).clicked() {
            cx.sink.edit(Edit::RemoveLevel { level: li });
            cx.sink.push(Command::SetLevel(li.saturating_sub(1)));
        }
    });
    let lib = &map.library;
    grid(ui, "level_form", |ui| {
        let mut name = level.name.clone();
        if form::text_field(ui, "Level name", &mut name) {
            cx.sink.edit(Edit::RenameLevel { level: li, name });
        }
        let empty = level.chunk_count() == 0;
        let mut n = level.chunk_size_log2();
        let l = ui.label("Chunk size");
        let r = ui
            .add_enabled(
                empty,
                egui::DragValue::new(&mut n)
                    .range(0..=15)
                    .speed(0.05)
                    .custom_formatter(|v, _| format!("2^{v} = {} m", 1u32 << (v as u32).min(15))),
            )
            .labelled_by(l.id);
        let r = if empty { r } else { r.on_disabled_hover_text("Only while the level has no cube") };
        if r.changed() && n != level.chunk_size_log2() {
            cx.sink.edit(Edit::SetChunkSize { level: li, chunk_size_log2: n });
        }
        ui.end_row();
        if !empty {
            ui.label("");
            ui.weak("read-only: the level has cubes");
            ui.end_row();
        }
        let c = level.center_chunk();
        let mut a = [c.x as f32, c.y as f32, c.z as f32];
        if form::floats(ui, "Center chunk", &mut a, 0.05, "") {
            let chunk = ChunkCoord::new(a[0].round() as i32, a[1].round() as i32, a[2].round() as i32);
            if chunk != c {
                cx.sink.edit(Edit::SetCenterChunk { level: li, chunk });
            }
        }
        let mut flags = level.flags;
        let mut fc = form::check(ui, "Keep velocity", &mut flags.keep_velocity);
        fc |= form::check(ui, "Keep chunk offset", &mut flags.keep_chunk_offset);
        fc |= form::check(ui, "Keep in-chunk offset", &mut flags.keep_in_chunk_offset);
        if fc {
            cx.sink.edit(Edit::SetLevelFlags { level: li, flags });
        }
        for kind in EnvKind::ALL {
            let mut env = level.environments.get(kind);
            let opts = optional(env_options(lib, kind));
            if form::combo(ui, &format!("Default {} environment", kind_label(kind).to_lowercase()), &mut env, &opts) {
                cx.sink.edit(Edit::SetDefaultEnvironment { level: li, kind, env });
            }
        }
        let mut air: Option<PhysicsId> = level.air_physics_material;
        let opts = optional(lib.physics_materials().iter().map(|(i, p)| (i, p.name.clone())).collect());
        if form::combo(ui, "Air physics material", &mut air, &opts) {
            cx.sink.edit(Edit::SetAirPhysics { level: li, physics: air });
        }
    });
    ui.separator();
    ui.weak(format!(
        "{} chunks stored · {} lights · {} entities · {} regions · {} load regions",
        level.chunk_count(),
        level.objects.lights().len(),
        level.objects.entities().len(),
        level.objects.regions().len(),
        level.objects.load_regions().len()
    ));
}
