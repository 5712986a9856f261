//! Environments: sound, weather, sky and gravity records (map-wide) with a form each, and the
//! environment regions of the active level.
//!
//! Edits: add -> `AddLibraryItem(Environment)`; name -> `RenameLibraryItem`; other fields -> one
//! `ReplaceLibraryItem`; delete -> `RemoveLibraryItem` (with a replacement when regions or level
//! defaults use it, through the library panel's prompt); "Add region" -> `AddObject`.

use eframe::egui::{self, Ui};
use glam::Vec3;

use pmfedit_core::edit::{Edit, LibItem, LibRef, ObjItem, ObjRef};
use pmfedit_core::map::library::{
    EnvKind, EnvRef, Environment, EnvironmentRegion, GravityEnvironment, Library, SkyEnvironment, SkySlot,
    SoundEnvironment, WeatherEnvironment,
};

use super::PanelCtx;
use super::form::{self, grid};
use super::options::{env_options, kind_label, material_options, optional, users};
use crate::command::Command;
use crate::selection::Selection;

/// The environments panel's own state.
#[derive(Debug, Default)]
pub struct EnvPanel {
    pub kind: Option<EnvKind>,
    pub selected: Option<EnvRef>,
    /// A delete waiting for a replacement.
    delete: Option<(EnvRef, String, Option<EnvRef>)>,
}

fn new_env(kind: EnvKind, name: String) -> Environment {
    match kind {
        EnvKind::Sound => Environment::Sound(SoundEnvironment { name, ..Default::default() }),
        EnvKind::Weather => Environment::Weather(WeatherEnvironment { name, ..Default::default() }),
        EnvKind::Sky => Environment::Sky(SkyEnvironment { name, ..Default::default() }),
        EnvKind::Gravity => Environment::Gravity(GravityEnvironment { name, gravity: Vec3::new(0.0, -9.81, 0.0) }),
    }
}

fn next_ref(lib: &Library, kind: EnvKind) -> EnvRef {
    use pmfedit_core::map::library::{GravityEnvId, SkyEnvId, SoundEnvId, WeatherEnvId};
    match kind {
        EnvKind::Sound => EnvRef::Sound(SoundEnvId(lib.sound_environments().next_id() as u16)),
        EnvKind::Weather => EnvRef::Weather(WeatherEnvId(lib.weather_environments().next_id() as u16)),
        EnvKind::Sky => EnvRef::Sky(SkyEnvId(lib.sky_environments().next_id() as u16)),
        EnvKind::Gravity => EnvRef::Gravity(GravityEnvId(lib.gravity_environments().next_id() as u16)),
    }
}

fn unique(lib: &Library, kind: EnvKind, base: &str) -> String {
    match kind {
        EnvKind::Sound => lib.sound_environments().unique_name(base),
        EnvKind::Weather => lib.weather_environments().unique_name(base),
        EnvKind::Sky => lib.sky_environments().unique_name(base),
        EnvKind::Gravity => lib.gravity_environments().unique_name(base),
    }
}

fn set_name(e: &mut Environment, name: String) {
    match e {
        Environment::Sound(e) => e.name = name,
        Environment::Weather(e) => e.name = name,
        Environment::Sky(e) => e.name = name,
        Environment::Gravity(e) => e.name = name,
    }
}

impl EnvPanel {
    /// Fills the panel.
    pub fn ui(&mut self, ui: &mut Ui, cx: &mut PanelCtx<'_>) {
        let state = cx.state;
        let lib = &state.map.library;
        let kind = *self.kind.get_or_insert(EnvKind::Sound);
        ui.horizontal(|ui| {
            for k in EnvKind::ALL {
                if ui.selectable_label(kind == k, kind_label(k)).clicked() {
                    self.kind = Some(k);
                    self.selected = None;
                }
            }
        });
        let kind = self.kind.unwrap_or(EnvKind::Sound);
        let list = env_options(lib, kind);
        if self.selected.is_none_or(|s| s.kind() != kind || !lib.contains_environment(s)) {
            self.selected = list.first().map(|(r, _)| *r);
        }
        ui.horizontal(|ui| {
            let what = kind.to_string();
            if ui.button(format!("Add {what} environment")).clicked() {
                let name = unique(lib, kind, &what);
                cx.sink.edit(Edit::AddLibraryItem(LibItem::Environment(new_env(kind, name))));
                self.selected = Some(next_ref(lib, kind));
            }
            if ui.add_enabled(self.selected.is_some(), egui::Button::new("Duplicate")).clicked()
                && let Some(mut e) = self.selected.and_then(|s| lib.environment(s))
            {
                let name = unique(lib, kind, e.name());
                set_name(&mut e, name);
                cx.sink.edit(Edit::AddLibraryItem(LibItem::Environment(e)));
                self.selected = Some(next_ref(lib, kind));
            }
            if ui.add_enabled(self.selected.is_some(), egui::Button::new("Delete")).clicked()
                && let Some(s) = self.selected
            {
                let u = users(&state.map, LibRef::Environment(s));
                if u.is_empty() {
                    cx.sink.edit(Edit::RemoveLibraryItem { id: LibRef::Environment(s), replacement: None });
                } else {
                    self.delete = Some((s, u, None));
                }
            }
        });
        if let Some((env, users, replacement)) = &mut self.delete {
            let mut close = false;
            let candidates = optional(env_options(lib, kind).into_iter().filter(|(r, _)| r != env).collect());
            egui::Frame::group(ui.style()).show(ui, |ui| {
                ui.label(format!("Used by {users}. Pick a replacement to delete it."));
                grid(ui, "env_delete", |ui| form::combo(ui, "Replace with", replacement, &candidates));
                ui.horizontal(|ui| {
                    if ui.add_enabled(replacement.is_some(), egui::Button::new("Delete and replace")).clicked() {
                        cx.sink.edit(Edit::RemoveLibraryItem {
                            id: LibRef::Environment(*env),
                            replacement: replacement.map(LibRef::Environment),
                        });
                        close = true;
                    }
                    if ui.button("Cancel").clicked() {
                        close = true;
                    }
                });
            });
            if close {
                self.delete = None;
            }
        }
        for (r, name) in &list {
            if ui.selectable_label(self.selected == Some(*r), name).clicked() {
                self.selected = Some(*r);
            }
        }
        ui.separator();
        if let Some(env) = self.selected
            && let Some(e) = lib.environment(env)
        {
            env_form(ui, cx, env, e);
        }
        ui.separator();
        self.regions(ui, cx);
    }

    /// The active level's environment regions.
    fn regions(&mut self, ui: &mut Ui, cx: &mut PanelCtx<'_>) {
        let state = cx.state;
        let level_i = state.level;
        let Some(level) = state.map.levels.get(level_i) else { return };
        ui.strong(format!("Regions of level “{}”", level.name));
        for (id, r) in level.objects.regions().iter() {
            let env = state.map.library.environment_name(r.environment).unwrap_or("?");
            let label = if r.name.is_empty() { format!("{} region {id} -> {env}", r.kind()) } else { r.name.clone() };
            let selected = state.selection == Selection::Region { level: level_i, id };
            if ui.selectable_label(selected, label).clicked() {
                cx.sink.push(Command::Select(Selection::Region { level: level_i, id }));
            }
        }
        if let Some(env) = self.selected
            && ui.button("Add region for this environment").clicked()
        {
            let mut region = EnvironmentRegion::from_box(env, Vec3::splat(-4.0), Vec3::splat(4.0));
            region.name = format!("{} region", state.map.library.environment_name(env).unwrap_or("new"));
            cx.sink.edit(Edit::AddObject { level: level_i, item: ObjItem::Region(region) });
        }
        if let Selection::Region { level, id } = state.selection
            && level == level_i
            && ui.button("Delete selected region").clicked()
        {
            cx.sink.edit(Edit::RemoveObject { level, id: ObjRef::Region(id) });
            cx.sink.push(Command::Select(Selection::None));
        }
    }
}

/// The form of one environment.
fn env_form(ui: &mut Ui, cx: &mut PanelCtx<'_>, env: EnvRef, mut e: Environment) {
    let state = cx.state;
    let lib = &state.map.library;
    let mut changed = false;
    let mut name = e.name().to_owned();
    let mut renamed = false;
    grid(ui, "env_form", |ui| {
        renamed = form::text_field(ui, "Name", &mut name);
        match &mut e {
            Environment::Sound(s) => {
                changed |= form::slider(ui, "Low pass", &mut s.low_pass, 0.0..=1.0, "");
                changed |= form::slider(ui, "High pass", &mut s.high_pass, 0.0..=1.0, "");
                changed |= form::num_range(ui, "Reverb delay", &mut s.reverb_delay, 0.0..=10.0, 0.005, " s");
                changed |= form::slider(ui, "Reverb feedback", &mut s.reverb_feedback, 0.0..=1.0, "");
                changed |= form::slider(ui, "Reverb mix", &mut s.reverb_mix, 0.0..=1.0, "");
                changed |= form::slider(ui, "Reverb low pass", &mut s.reverb_low_pass, 0.0..=1.0, "");
                changed |= form::slider(ui, "Reverb high pass", &mut s.reverb_high_pass, 0.0..=1.0, "");
            }
            Environment::Weather(w) => {
                changed |= form::vec3(ui, "Wind", &mut w.wind, 0.05, " m/s");
                changed |= form::num(ui, "Wind direction seed", &mut w.wind_direction_seed, 1.0, "");
                changed |= form::vec3(ui, "Wind direction randomness", &mut w.wind_direction_randomness, 0.01, "");
                changed |= form::num(ui, "Wind direction noise speed", &mut w.wind_direction_noise_speed, 0.01, "");
                changed |= form::num(ui, "Wind velocity seed", &mut w.wind_velocity_seed, 1.0, "");
                changed |= form::num(ui, "Wind velocity randomness", &mut w.wind_velocity_randomness, 0.01, "");
                changed |= form::num(ui, "Wind velocity noise speed", &mut w.wind_velocity_noise_speed, 0.01, "");
            }
            Environment::Sky(s) => {
                let mats = optional(material_options(lib));
                for slot in SkySlot::ALL {
                    let label = slot.label();
                    let mut label = label.to_owned();
                    if let Some(c) = label.get_mut(0..1) {
                        c.make_ascii_uppercase();
                    }
                    changed |= form::combo(ui, &label, s.slot_mut(slot), &mats);
                }
                changed |= form::check(ui, "3D skybox", &mut s.skybox_3d);
                let mut c = s.skybox_chunk.to_array().map(|v| v as f32);
                if form::floats(ui, "3D skybox chunk", &mut c, 0.1, "") {
                    s.skybox_chunk = glam::IVec3::from_array(c.map(|v| v.round() as i32));
                    changed = true;
                }
            }
            Environment::Gravity(g) => {
                changed |= form::vec3(ui, "Gravity", &mut g.gravity, 0.05, " m/s²");
            }
        }
    });
    if changed {
        set_name(&mut e, name);
        cx.sink.edit(Edit::ReplaceLibraryItem { id: LibRef::Environment(env), item: LibItem::Environment(e) });
    } else if renamed {
        cx.sink.edit(Edit::RenameLibraryItem { id: LibRef::Environment(env), name });
    }
}
