//! Level settings of the active level: name, chunk size (editable only while the level has no
//! cube), center chunk, flags, default environments, the air physics material, and the sun, sky
//! and bounced light the compiler bakes; plus adding, switching and removing levels.
//!
//! Edits: `RenameLevel`, `SetChunkSize`, `SetCenterChunk`, `SetLevelFlags`,
//! `SetDefaultEnvironment`, `SetAirPhysics`, `SetLevelLighting`, `AddLevel`, `RemoveLevel` — one
//! per change.

use eframe::egui::{self, Ui};

use pmfedit_core::edit::Edit;
use pmfedit_core::map::coords::ChunkCoord;
use pmfedit_core::map::library::{EnvKind, PhysicsId};
use pmfedit_core::map::lighting::{LevelLighting, MAX_BOUNCES, MAX_INTENSITY, MAX_SUN_ANGLE};

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
        ui.label("Chunk size");
        // Typed text is the power of two; out of 0..=15 it is clamped and says so beside it.
        let shown =
            form::Shown { format: Some(|v| format!("2^{v} = {} m", 1u32 << (v as u32).min(15))), ..Default::default() };
        let r = ui
            .add_enabled_ui(empty, |ui| {
                ui.horizontal(|ui| form::number_shown(ui, "Chunk size", &mut n, Some(0..=15), 0.05, shown)).inner
            })
            .inner;
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
    ui.strong("Sun, sky and bounced light");
    ui.weak("Baked into the lightmaps and the air cells (K5); exported as luxels.");
    let mut lighting = level.lighting;
    if lighting_form(ui, &mut lighting) && lighting != level.lighting {
        cx.sink.edit(Edit::SetLevelLighting { level: li, lighting });
    }
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

/// The sun, sky and bounce fields of a level; returns whether one changed. Every range is the one
/// [`LevelLighting::validate`] accepts, so a value typed here is never refused.
fn lighting_form(ui: &mut Ui, l: &mut LevelLighting) -> bool {
    grid(ui, "level_lighting_form", |ui| {
        let mut changed = form::num_range(ui, "Sun azimuth", &mut l.sun.azimuth, 0.0..=360.0, 1.0, "°");
        changed |= form::num_range(ui, "Sun elevation", &mut l.sun.elevation, -90.0..=90.0, 0.5, "°");
        changed |= form::color(ui, "Sun colour", &mut l.sun.color);
        changed |= form::num_range(ui, "Sun intensity", &mut l.sun.intensity, 0.0..=MAX_INTENSITY, 0.01, "");
        changed |= form::num_range(ui, "Sun angle", &mut l.sun.angle, 0.0..=MAX_SUN_ANGLE, 0.1, "°");
        changed |= form::color(ui, "Sky colour", &mut l.sky.color);
        changed |= form::num_range(ui, "Sky intensity", &mut l.sky.intensity, 0.0..=MAX_INTENSITY, 0.01, "");
        changed |= form::num_range(ui, "Bounces", &mut l.bounces, 0..=MAX_BOUNCES, 0.05, "");
        changed
    })
}
