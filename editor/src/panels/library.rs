//! The material library: render, physics and sound materials. A searchable list (swatches, or
//! texture thumbnails when the texture file exists), add / duplicate / delete (with a replacement
//! when the record is in use) and a form for every field.
//!
//! The render material selected in the list is the one the tools paint with
//! ([`EditorState::material`](crate::state::EditorState::material)): a click, the eyedropper, an
//! added or duplicated material all make it the current one. A material's name can be dragged
//! onto a face in the viewport to paint it ([`crate::dnd`]).
//!
//! Edits: add -> `AddLibraryItem`; duplicate -> `AddLibraryItem` of a copy under a unique name;
//! name field -> `RenameLibraryItem`; any other field -> one `ReplaceLibraryItem` with the edited
//! copy; delete -> `RemoveLibraryItem { replacement }`.

use eframe::egui::{self, Ui};

use pmfedit_core::edit::{Edit, LibItem, LibRef};
use pmfedit_core::map::library::{
    Library, Material, MaterialId, PhysicsId, PhysicsMaterial, RenderMode, SoundId, SoundMaterial, TableId,
};

use super::PanelCtx;
use super::form::{self, grid};
use super::options::{env_options, optional, options, users};
use crate::command::Command;

/// Which kind of material the panel shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LibKind {
    #[default]
    Render,
    Physics,
    Sound,
}

/// A delete waiting for the user to pick a replacement.
#[derive(Debug, Clone, PartialEq)]
struct PendingDelete {
    id: LibRef,
    users: String,
    replacement: Option<LibRef>,
}

/// The library panel's own state.
#[derive(Debug, Default)]
pub struct LibraryPanel {
    pub kind: LibKind,
    pub search: String,
    pub physics: Option<PhysicsId>,
    pub sound: Option<SoundId>,
    delete: Option<PendingDelete>,
}

impl LibraryPanel {
    /// Fills the panel.
    pub fn ui(&mut self, ui: &mut Ui, cx: &mut PanelCtx<'_>) {
        ui.horizontal(|ui| {
            ui.selectable_value(&mut self.kind, LibKind::Render, "Render");
            ui.selectable_value(&mut self.kind, LibKind::Physics, "Physics");
            ui.selectable_value(&mut self.kind, LibKind::Sound, "Sound");
        });
        ui.horizontal(|ui| {
            let l = ui.label("Search");
            ui.add(egui::TextEdit::singleline(&mut self.search).hint_text("name").desired_width(140.0))
                .labelled_by(l.id);
        });
        self.delete_prompt(ui, cx);
        match self.kind {
            LibKind::Render => self.materials(ui, cx),
            LibKind::Physics => self.physics(ui, cx),
            LibKind::Sound => self.sounds(ui, cx),
        }
    }

    fn matches(&self, name: &str) -> bool {
        self.search.is_empty() || name.to_lowercase().contains(&self.search.to_lowercase())
    }

    /// Add / Duplicate / Delete buttons for the selected record.
    #[allow(clippy::too_many_arguments)]
    fn buttons<I: TableId>(
        &mut self,
        ui: &mut Ui,
        cx: &mut PanelCtx<'_>,
        what: &str,
        selected: Option<I>,
        new_item: impl FnOnce(&str) -> LibItem,
        copy: impl FnOnce(I) -> Option<LibItem>,
        lib_ref: impl Fn(I) -> LibRef,
        unique: impl Fn(&str) -> String,
    ) -> Option<I> {
        let mut select = None;
        ui.horizontal(|ui| {
            if ui.button(format!("Add {what}")).clicked() {
                cx.sink.edit(Edit::AddLibraryItem(new_item(&unique(what))));
                select = Some(());
            }
            if ui.add_enabled(selected.is_some(), egui::Button::new("Duplicate")).clicked()
                && let Some(mut item) = selected.and_then(copy)
            {
                let name = unique(item.name());
                rename(&mut item, name);
                cx.sink.edit(Edit::AddLibraryItem(item));
                select = Some(());
            }
            if ui.add_enabled(selected.is_some(), egui::Button::new("Delete")).clicked()
                && let Some(id) = selected
            {
                let id = lib_ref(id);
                let users = users(&cx.state.map, id);
                if users.is_empty() {
                    cx.sink.edit(Edit::RemoveLibraryItem { id, replacement: None });
                } else {
                    self.delete = Some(PendingDelete { id, users, replacement: None });
                }
            }
        });
        select.map(|()| I::from_raw(next_raw::<I>(&cx.state.map.library, what)))
    }

    fn delete_prompt(&mut self, ui: &mut Ui, cx: &mut PanelCtx<'_>) {
        let Some(pending) = &mut self.delete else { return };
        let state = cx.state;
        let lib = &state.map.library;
        let name = match pending.id {
            LibRef::Material(i) => lib.get(i).map(|m| m.name.clone()),
            LibRef::Physics(i) => lib.get(i).map(|m| m.name.clone()),
            LibRef::Sound(i) => lib.get(i).map(|m| m.name.clone()),
            LibRef::Environment(e) => lib.environment_name(e).map(str::to_owned),
        };
        let Some(name) = name else {
            self.delete = None;
            return;
        };
        let candidates: Vec<(Option<LibRef>, String)> = optional(match pending.id {
            LibRef::Material(i) => options::<MaterialId>(lib)
                .into_iter()
                .filter(|(o, _)| *o != i)
                .map(|(o, n)| (LibRef::Material(o), n))
                .collect(),
            LibRef::Physics(i) => options::<PhysicsId>(lib)
                .into_iter()
                .filter(|(o, _)| *o != i)
                .map(|(o, n)| (LibRef::Physics(o), n))
                .collect(),
            LibRef::Sound(i) => options::<SoundId>(lib)
                .into_iter()
                .filter(|(o, _)| *o != i)
                .map(|(o, n)| (LibRef::Sound(o), n))
                .collect(),
            LibRef::Environment(e) => env_options(lib, e.kind())
                .into_iter()
                .filter(|(o, _)| *o != e)
                .map(|(o, n)| (LibRef::Environment(o), n))
                .collect(),
        });
        let mut close = false;
        egui::Frame::group(ui.style()).show(ui, |ui| {
            ui.label(format!("“{name}” is used by {}. Pick a replacement to delete it.", pending.users));
            grid(ui, "delete_replacement", |ui| {
                form::combo(ui, "Replace with", &mut pending.replacement, &candidates);
            });
            ui.horizontal(|ui| {
                if ui.add_enabled(pending.replacement.is_some(), egui::Button::new("Delete and replace")).clicked() {
                    cx.sink.edit(Edit::RemoveLibraryItem { id: pending.id, replacement: pending.replacement });
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

    fn materials(&mut self, ui: &mut Ui, cx: &mut PanelCtx<'_>) {
        let state = cx.state;
        let lib = &state.map.library;
        // One current material: the painting one is the one selected here (a deleted one gives
        // way to the first).
        let current = if lib.materials().contains(state.material) {
            Some(state.material)
        } else {
            let first = lib.materials().ids().next();
            if let Some(first) = first {
                cx.sink.push(Command::SetMaterial(first));
            }
            first
        };
        let default_refs = (
            lib.physics_materials().ids().next().unwrap_or_default(),
            lib.sound_materials().ids().next().unwrap_or_default(),
        );
        let added = self.buttons(
            ui,
            cx,
            "material",
            current,
            |name| LibItem::Material(Material::new(name, default_refs.0, default_refs.1)),
            |id| lib.get(id).cloned().map(LibItem::Material),
            LibRef::Material,
            |n| lib.materials().unique_name(n),
        );
        // A new material is the one the designer means to paint with next.
        if let Some(id) = added {
            cx.sink.push(Command::SetMaterial(id));
        }
        let ctx = ui.ctx().clone();
        egui::ScrollArea::vertical().id_salt("material_list").max_height(220.0).show(ui, |ui| {
            for (id, m) in lib.materials().iter() {
                if !self.matches(&m.name) {
                    continue;
                }
                ui.horizontal(|ui| {
                    match cx.thumbs.get(&ctx, &m.texture) {
                        Some(t) => {
                            ui.add(
                                egui::Image::new(&t)
                                    .fit_to_exact_size(egui::vec2(20.0, 20.0))
                                    .tint(egui::Color32::from_rgb(m.color[0], m.color[1], m.color[2])),
                            );
                        }
                        None => {
                            form::swatch(ui, m.color, 20.0);
                        }
                    }
                    // A click picks the material; a drag onto the viewport paints the face it
                    // is dropped on.
                    let r = ui
                        .selectable_label(current == Some(id), &m.name)
                        .interact(egui::Sense::drag())
                        .on_hover_text("Paint with this material (drag it onto a face to paint that face)");
                    r.dnd_set_drag_payload(crate::dnd::MaterialDrag(id));
                    if r.clicked() {
                        cx.sink.push(Command::SetMaterial(id));
                    }
                });
            }
        });
        ui.separator();
        let Some(id) = current else { return };
        let Some(original) = lib.get(id) else { return };
        material_form(ui, cx, id, original);
    }

    fn physics(&mut self, ui: &mut Ui, cx: &mut PanelCtx<'_>) {
        let state = cx.state;
        let lib = &state.map.library;
        if self.physics.is_none_or(|m| !lib.physics_materials().contains(m)) {
            self.physics = lib.physics_materials().ids().next();
        }
        let added = self.buttons(
            ui,
            cx,
            "physics material",
            self.physics,
            |name| LibItem::Physics(PhysicsMaterial::new(name)),
            |id| lib.get(id).cloned().map(LibItem::Physics),
            LibRef::Physics,
            |n| lib.physics_materials().unique_name(n),
        );
        if let Some(id) = added {
            self.physics = Some(id);
        }
        egui::ScrollArea::vertical().id_salt("physics_list").max_height(200.0).show(ui, |ui| {
            for (id, m) in lib.physics_materials().iter() {
                if self.matches(&m.name) && ui.selectable_label(self.physics == Some(id), &m.name).clicked() {
                    self.physics = Some(id);
                }
            }
        });
        ui.separator();
        let Some(id) = self.physics else { return };
        let Some(original) = lib.get(id) else { return };
        let mut m = original.clone();
        let mut changed = false;
        let mut name = m.name.clone();
        let mut renamed = false;
        grid(ui, "physics_form", |ui| {
            renamed = form::text_field(ui, "Name", &mut name);
            changed |= form::check(ui, "Not solid", &mut m.not_solid);
            if m.not_solid {
                changed |= form::num_range(ui, "Max speed", &mut m.max_speed, 0.0..=1000.0, 0.05, " m/s");
            } else {
                changed |= form::slider(ui, "Friction", &mut m.friction, 0.0..=2.0, "");
                changed |= form::slider(ui, "Traction", &mut m.traction, 0.0..=2.0, "");
                changed |= form::slider(ui, "Bounce", &mut m.bounce, 0.0..=1.0, "");
            }
            changed |= form::num_range(ui, "Damage min speed", &mut m.damage_min_speed, 0.0..=1000.0, 0.1, " m/s");
            changed |= form::num_range(ui, "Base damage", &mut m.damage_base, 0.0..=10000.0, 0.1, " hp");
            changed |= form::num_range(ui, "Damage per m/s", &mut m.damage_per_mps, 0.0..=10000.0, 0.05, " hp");
        });
        if changed {
            m.name = name;
            cx.sink.edit(Edit::ReplaceLibraryItem { id: LibRef::Physics(id), item: LibItem::Physics(m) });
        } else if renamed {
            cx.sink.edit(Edit::RenameLibraryItem { id: LibRef::Physics(id), name });
        }
    }

    fn sounds(&mut self, ui: &mut Ui, cx: &mut PanelCtx<'_>) {
        let state = cx.state;
        let lib = &state.map.library;
        if self.sound.is_none_or(|m| !lib.sound_materials().contains(m)) {
            self.sound = lib.sound_materials().ids().next();
        }
        let added = self.buttons(
            ui,
            cx,
            "sound material",
            self.sound,
            |name| LibItem::Sound(SoundMaterial::new(name)),
            |id| lib.get(id).cloned().map(LibItem::Sound),
            LibRef::Sound,
            |n| lib.sound_materials().unique_name(n),
        );
        if let Some(id) = added {
            self.sound = Some(id);
        }
        egui::ScrollArea::vertical().id_salt("sound_list").max_height(200.0).show(ui, |ui| {
            for (id, m) in lib.sound_materials().iter() {
                if self.matches(&m.name) && ui.selectable_label(self.sound == Some(id), &m.name).clicked() {
                    self.sound = Some(id);
                }
            }
        });
        ui.separator();
        let Some(id) = self.sound else { return };
        let Some(original) = lib.get(id) else { return };
        let mut m = original.clone();
        let mut changed = false;
        let mut name = m.name.clone();
        let mut renamed = false;
        grid(ui, "sound_form", |ui| {
            renamed = form::text_field(ui, "Name", &mut name);
            changed |= form::slider(ui, "Volume dampening", &mut m.volume_dampening, 0.0..=1.0, "");
            changed |= form::slider(ui, "Frequency dampening", &mut m.frequency_dampening, 0.0..=1.0, "");
        });
        if changed {
            m.name = name;
            cx.sink.edit(Edit::ReplaceLibraryItem { id: LibRef::Sound(id), item: LibItem::Sound(m) });
        } else if renamed {
            cx.sink.edit(Edit::RenameLibraryItem { id: LibRef::Sound(id), name });
        }
    }
}

/// The raw id the next add of this kind gets (to select what was just added).
fn next_raw<I: TableId>(lib: &Library, what: &str) -> u32 {
    match what {
        "material" => lib.materials().next_id(),
        "physics material" => lib.physics_materials().next_id(),
        _ => lib.sound_materials().next_id(),
    }
    .min(I::MAX)
}

fn rename(item: &mut LibItem, name: String) {
    match item {
        LibItem::Material(m) => m.name = name,
        LibItem::Physics(m) => m.name = name,
        LibItem::Sound(m) => m.name = name,
        LibItem::Environment(e) => match e {
            pmfedit_core::map::library::Environment::Sound(e) => e.name = name,
            pmfedit_core::map::library::Environment::Weather(e) => e.name = name,
            pmfedit_core::map::library::Environment::Sky(e) => e.name = name,
            pmfedit_core::map::library::Environment::Gravity(e) => e.name = name,
        },
    }
}

/// Every field of a render material.
fn material_form(ui: &mut Ui, cx: &mut PanelCtx<'_>, id: MaterialId, original: &Material) {
    let state = cx.state;
    let lib = &state.map.library;
    let mut m = original.clone();
    let mut changed = false;
    let mut name = m.name.clone();
    let mut renamed = false;
    let ctx = ui.ctx().clone();
    if let Some(t) = cx.thumbs.get(&ctx, &m.texture) {
        ui.add(egui::Image::new(&t).fit_to_exact_size(egui::vec2(64.0, 64.0)));
    } else if !m.texture.is_empty() {
        ui.weak(format!("{} not found in the project or asset folders", m.texture));
    }
    grid(ui, "material_form", |ui| {
        renamed = form::text_field(ui, "Name", &mut name);
        changed |= form::text_field(ui, "User type", &mut m.user_type);
        changed |= form::text_field_hint(ui, "Texture", &mut m.texture, "textures/name.png");
        let pick_label = ui.label("From the assets");
        let roots = cx.thumbs.roots().to_vec();
        egui::ComboBox::from_id_salt(("texture_pick", id))
            .selected_text("Pick a texture…")
            .width(180.0)
            // Tall enough for the whole default asset pack without scrolling.
            .height(400.0)
            .show_ui(ui, |ui| {
                // Listed only while open: a folder scan, not a per-frame cost.
                let names = crate::watch::list_textures(&roots);
                if names.is_empty() {
                    ui.weak("no textures/ folder in the project or the asset folder");
                }
                for name in names {
                    if ui.selectable_label(m.texture == name, &name).clicked() {
                        m.texture = name;
                        changed = true;
                    }
                }
            })
            .response
            .labelled_by(pick_label.id)
            .on_hover_text("Textures in the project's and the shared assets' textures/ folders");
        ui.end_row();
        changed |= form::color(ui, "Colour", &mut m.color);
        changed |= form::check(ui, "Is transparent", &mut m.transparent);
        if m.transparent {
            changed |= form::slider(ui, "Alpha", &mut m.alpha, 0..=255, "");
        }
        changed |= form::combo(
            ui,
            "Render mode",
            &mut m.render_mode,
            &[(RenderMode::Normal, "normal".into()), (RenderMode::Add, "additive".into())],
        );
        changed |= form::color(ui, "Emission", &mut m.emission);
        changed |= form::slider(ui, "Shading", &mut m.shading, 0..=255, "");
        changed |= form::slider(ui, "Shine", &mut m.shine, 0..=255, "");
        changed |= form::text_field_hint(ui, "Matcap texture", &mut m.matcap_texture, "textures/matcap/name.png");
        changed |= form::vec2(ui, "UV scroll", &mut m.uv_scroll, 0.001, " /s");
        let mut ms = m.texture_advance_us as f64 / 1000.0;
        if form::num_range(ui, "Frame time", &mut ms, 0.0..=4_294_967.0, 1.0, " ms") {
            m.texture_advance_us = (ms * 1000.0).round() as u32;
            changed = true;
        }
        changed |= form::combo(ui, "Physics material", &mut m.physics, &options::<PhysicsId>(lib));
        changed |= form::combo(ui, "Sound material", &mut m.sound, &options::<SoundId>(lib));
        changed |= form::check(ui, "Is liquid", &mut m.liquid);
        if m.liquid {
            changed |= form::vec3(ui, "Wave velocity", &mut m.wave.velocity, 0.01, " m/s");
            changed |= form::slider(ui, "Wind influence", &mut m.wave.wind_influence, 0.0..=1.0, "");
            changed |= form::num(ui, "Wave offset", &mut m.wave.offset, 0.01, " m");
            changed |= form::num(ui, "Wave scale", &mut m.wave.scale, 0.01, " m");
        }
    });
    ui.label(format!("Animation frames ({})", m.extra_textures.len()));
    let mut remove = None;
    grid(ui, "extra_textures", |ui| {
        for (i, t) in m.extra_textures.iter_mut().enumerate() {
            let l = ui.label(format!("Frame {}", i + 1));
            if form::buffered_text(ui, l.id, t, "textures/name.png", 160.0) {
                changed = true;
            }
            if ui.small_button("x").on_hover_text("Remove this frame").clicked() {
                remove = Some(i);
            }
            ui.end_row();
        }
    });
    if let Some(i) = remove {
        m.extra_textures.remove(i);
        changed = true;
    }
    if ui.add_enabled(m.extra_textures.len() < 255, egui::Button::new("Add frame")).clicked() {
        m.extra_textures.push(String::new());
        changed = true;
    }
    if changed {
        m.name = name;
        cx.sink.edit(Edit::ReplaceLibraryItem { id: LibRef::Material(id), item: LibItem::Material(m) });
    } else if renamed {
        cx.sink.edit(Edit::RenameLibraryItem { id: LibRef::Material(id), name });
    }
}
