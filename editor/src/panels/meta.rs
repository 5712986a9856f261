//! Map metadata: name, description, authors and gamemodes. The PMF limits (at most 32
//! gamemodes, each 1–15 bytes, unique, no NUL anywhere) are checked in the form with
//! [`MapMeta::validate`]: an invalid value is refused — nothing is sent — and the reason is shown
//! next to the field. A valid change is one `SetMeta` edit.

use eframe::egui::{self, Ui};

use pmfedit_core::edit::Edit;
use pmfedit_core::map::{MAX_GAMEMODE_LEN, MAX_GAMEMODES, MapMeta};

use super::PanelCtx;
use super::form::{self, grid};

/// Which field a refusal belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Field {
    Name,
    Description,
    Authors,
    Gamemode(usize),
    NewGamemode,
}

/// The metadata panel's own state.
#[derive(Debug, Default)]
pub struct MetaPanel {
    /// The gamemode being typed.
    pub new_gamemode: String,
    error: Option<(Field, String)>,
}

impl MetaPanel {
    /// Sends `meta` if it is valid, else remembers why not (shown beside `field`).
    fn submit(&mut self, cx: &mut PanelCtx<'_>, field: Field, meta: MapMeta) -> bool {
        match meta.validate() {
            Ok(()) => {
                if meta != cx.state.map.meta {
                    cx.sink.edit(Edit::SetMeta(meta));
                }
                self.error = None;
                true
            }
            Err(e) => {
                self.error = Some((field, format!("Refused: {e}")));
                false
            }
        }
    }

    fn show_error(&self, ui: &mut Ui, field: &Field) {
        if let Some((f, msg)) = &self.error
            && f == field
        {
            form::error(ui, msg);
        }
    }

    /// Fills the panel.
    pub fn ui(&mut self, ui: &mut Ui, cx: &mut PanelCtx<'_>) {
        let state = cx.state;
        let meta = &state.map.meta;
        grid(ui, "meta_form", |ui| {
            let mut name = meta.name.clone();
            if form::text_field(ui, "Map name", &mut name) {
                self.submit(cx, Field::Name, MapMeta { name, ..meta.clone() });
            }
            self.show_error(ui, &Field::Name);
            let mut authors = meta.authors.clone();
            if form::text_field(ui, "Authors", &mut authors) {
                self.submit(cx, Field::Authors, MapMeta { authors, ..meta.clone() });
            }
            self.show_error(ui, &Field::Authors);
            // Multi-line description: commits when focus leaves.
            let l = ui.label("Description");
            let id = ui.make_persistent_id("meta_description");
            let focused = ui.memory(|m| m.has_focus(id));
            let mut buf = if focused {
                ui.data(|d| d.get_temp::<String>(id)).unwrap_or_else(|| meta.description.clone())
            } else {
                meta.description.clone()
            };
            let r = ui
                .add(egui::TextEdit::multiline(&mut buf).id(id).desired_rows(3).desired_width(200.0))
                .labelled_by(l.id);
            if r.lost_focus() {
                ui.data_mut(|d| d.remove::<String>(id));
                if buf != meta.description {
                    self.submit(cx, Field::Description, MapMeta { description: buf, ..meta.clone() });
                }
            } else if r.has_focus() {
                ui.data_mut(|d| d.insert_temp(id, buf));
            }
            ui.end_row();
            self.show_error(ui, &Field::Description);
        });
        ui.separator();
        ui.strong(format!("Gamemodes ({}/{MAX_GAMEMODES})", meta.gamemodes.len()));
        let mut remove = None;
        grid(ui, "gamemodes", |ui| {
            for (i, g) in meta.gamemodes.iter().enumerate() {
                let l = ui.label(format!("Gamemode {}", i + 1));
                let mut v = g.clone();
                let changed = ui
                    .horizontal(|ui| {
                        let c = form::buffered_text(ui, l.id, &mut v, "name", 120.0);
                        if ui.small_button("x").on_hover_text("Remove this gamemode").clicked() {
                            remove = Some(i);
                        }
                        c
                    })
                    .inner;
                ui.end_row();
                if changed {
                    let mut m = meta.clone();
                    m.gamemodes[i] = v;
                    self.submit(cx, Field::Gamemode(i), m);
                }
                self.show_error(ui, &Field::Gamemode(i));
            }
            let l = ui.label("New gamemode");
            let r = ui.add(
                egui::TextEdit::singleline(&mut self.new_gamemode)
                    .hint_text(format!("at most {MAX_GAMEMODE_LEN} bytes"))
                    .desired_width(120.0),
            );
            let r = r.labelled_by(l.id);
            ui.end_row();
            let bytes = self.new_gamemode.len();
            if bytes > MAX_GAMEMODE_LEN {
                form::error(ui, &format!("{bytes} bytes: a gamemode name has at most {MAX_GAMEMODE_LEN} bytes"));
            }
            self.show_error(ui, &Field::NewGamemode);
            ui.label("");
            let enter = r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            if ui.button("Add gamemode").clicked() || enter {
                let mut m = meta.clone();
                m.gamemodes.push(self.new_gamemode.clone());
                if self.submit(cx, Field::NewGamemode, m) {
                    self.new_gamemode.clear();
                }
            }
            ui.end_row();
        });
        if let Some(i) = remove {
            let mut m = meta.clone();
            m.gamemodes.remove(i);
            self.submit(cx, Field::Gamemode(i), m);
        }
    }
}
