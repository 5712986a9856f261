//! Form building blocks shared by every panel.
//!
//! A form edits a **copy** of a record: each field helper takes `&mut` to a field of the copy and
//! returns whether the user changed it this frame. When anything changed, the panel pushes one
//! `ReplaceLibraryItem` / `ReplaceObject` / … edit with the whole copy through a [`Sink`].
//!
//! Undo granularity:
//! - Text fields are buffered while focused and commit on Enter or when focus leaves, so a typed
//!   word is one undo step (and an intermediate value such as an empty name is never sent).
//! - Drags (drag values, sliders, colour pickers) change the record every frame while the mouse is
//!   held; the [`Sink`] opens a stroke (`Command::BeginStroke`) on the first such change and
//!   [`Sink::finish_frame`] closes it (`Command::EndStroke`) when the mouse is released, so a drag
//!   is one undo step.
//!
//! Every input widget gets an accessible name (the label beside it), so screen readers and
//! egui_kittest find it by label.

use eframe::egui::{self, Response, Ui};
use glam::{Vec2, Vec3};

use pmfedit_core::edit::Edit;

use crate::command::Command;

/// Where panels send their commands; keeps track of the stroke a drag opened.
pub struct Sink<'a> {
    pub commands: &'a mut Vec<Command>,
    stroke_open: &'a mut bool,
    pointer_down: bool,
}

impl<'a> Sink<'a> {
    /// A sink for this frame.
    pub fn new(ctx: &egui::Context, commands: &'a mut Vec<Command>, stroke_open: &'a mut bool) -> Self {
        let pointer_down = ctx.input(|i| i.pointer.any_down());
        Self { commands, stroke_open, pointer_down }
    }

    /// Queues a document edit; while the mouse is held (a drag) the edits of the drag are merged
    /// into one undo step.
    pub fn edit(&mut self, edit: Edit) {
        if self.pointer_down && !*self.stroke_open {
            self.commands.push(Command::BeginStroke);
            *self.stroke_open = true;
        }
        self.commands.push(Command::Edit(edit));
    }

    /// Queues any other command.
    pub fn push(&mut self, command: Command) {
        self.commands.push(command);
    }

    /// Closes the stroke a drag opened once the mouse is released. Call once per frame, after
    /// every panel.
    pub fn finish_frame(&mut self) {
        if *self.stroke_open && !self.pointer_down {
            self.commands.push(Command::EndStroke);
            *self.stroke_open = false;
        }
    }
}

/// A two-column grid of labelled fields.
pub fn grid<R>(ui: &mut Ui, id: impl egui::AsIdSalt, add: impl FnOnce(&mut Ui) -> R) -> R {
    egui::Grid::new(id).num_columns(2).spacing([8.0, 4.0]).striped(true).show(ui, add).inner
}

/// A label in the first column; returns its id for `labelled_by`.
fn label(ui: &mut Ui, text: &str) -> egui::Id {
    ui.label(text).id
}

/// One grid row: `label | widget`, the widget named by the label. Ends the row.
pub fn row(ui: &mut Ui, text: &str, add: impl FnOnce(&mut Ui) -> Response) -> Response {
    let id = label(ui, text);
    let r = add(ui).labelled_by(id);
    ui.end_row();
    r
}

/// A text field that commits on Enter or focus loss. Returns `true` when `value` changed.
pub fn text_field(ui: &mut Ui, text: &str, value: &mut String) -> bool {
    text_field_hint(ui, text, value, "")
}

/// [`text_field`] with a placeholder.
pub fn text_field_hint(ui: &mut Ui, text: &str, value: &mut String, hint: &str) -> bool {
    let label_id = label(ui, text);
    let changed = buffered_text(ui, label_id, value, hint, 180.0);
    ui.end_row();
    changed
}

/// A buffered single-line text edit (no grid row): shows `value`, keeps the typed text in egui's
/// memory while focused and writes it back on Enter / focus loss. Named by `label_id`.
pub fn buffered_text(ui: &mut Ui, label_id: egui::Id, value: &mut String, hint: &str, width: f32) -> bool {
    buffered_text_named(ui, label_id, None, value, hint, width)
}

/// [`buffered_text`] keyed by `key`, named `name` when given (else labelled by `key`).
pub fn buffered_text_named(
    ui: &mut Ui,
    key: egui::Id,
    name: Option<&str>,
    value: &mut String,
    hint: &str,
    width: f32,
) -> bool {
    let label_id = key;
    let edit_id = ui.make_persistent_id(("buffered_text", label_id));
    let focused = ui.memory(|m| m.has_focus(edit_id));
    let mut buf: String = if focused {
        ui.data(|d| d.get_temp::<String>(edit_id)).unwrap_or_else(|| value.clone())
    } else {
        value.clone()
    };
    let r = ui.add(egui::TextEdit::singleline(&mut buf).id(edit_id).hint_text(hint).desired_width(width));
    let r = match name {
        Some(n) => r.accessible_name(n),
        None => r.labelled_by(label_id),
    };
    let mut changed = false;
    if r.lost_focus() || (r.has_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter))) {
        ui.data_mut(|d| d.remove::<String>(edit_id));
        if buf != *value {
            *value = buf;
            changed = true;
        }
    } else if r.has_focus() {
        ui.data_mut(|d| d.insert_temp(edit_id, buf));
    } else if r.changed() && buf != *value {
        // Changed without focus (an accessibility "set value", a paste by assistive tools).
        *value = buf;
        changed = true;
    }
    changed
}

/// A dragged number with a unit suffix.
pub fn num<N: egui::emath::Numeric>(ui: &mut Ui, text: &str, value: &mut N, speed: f64, suffix: &str) -> bool {
    row(ui, text, |ui| ui.add(egui::DragValue::new(value).speed(speed).suffix(suffix))).changed()
}

/// A dragged number clamped to a range.
pub fn num_range<N: egui::emath::Numeric>(
    ui: &mut Ui,
    text: &str,
    value: &mut N,
    range: std::ops::RangeInclusive<N>,
    speed: f64,
    suffix: &str,
) -> bool {
    row(ui, text, |ui| ui.add(egui::DragValue::new(value).range(range).speed(speed).suffix(suffix))).changed()
}

/// A slider with a unit suffix.
pub fn slider<N: egui::emath::Numeric>(
    ui: &mut Ui,
    text: &str,
    value: &mut N,
    range: std::ops::RangeInclusive<N>,
    suffix: &str,
) -> bool {
    row(ui, text, |ui| ui.add(egui::Slider::new(value, range).suffix(suffix))).changed()
}

/// A checkbox row (the label is the checkbox's own text).
pub fn check(ui: &mut Ui, text: &str, value: &mut bool) -> bool {
    ui.label("");
    let r = ui.checkbox(value, text);
    ui.end_row();
    r.changed()
}

/// Several dragged numbers on one row, each named `"{text} {axis}"`.
pub fn floats<const N: usize>(ui: &mut Ui, text: &str, values: &mut [f32; N], speed: f64, suffix: &str) -> bool {
    const AXES: [&str; 4] = ["X", "Y", "Z", "W"];
    label(ui, text);
    let mut changed = false;
    ui.horizontal(|ui| {
        for (i, v) in values.iter_mut().enumerate() {
            let axis = AXES.get(i).copied().unwrap_or("");
            let r = ui
                .add(egui::DragValue::new(v).speed(speed).prefix(format!("{} ", axis.to_lowercase())).suffix(suffix))
                .accessible_name(format!("{text} {axis}"));
            changed |= r.changed();
        }
    });
    ui.end_row();
    changed
}

/// A [`Vec3`] as three dragged numbers.
pub fn vec3(ui: &mut Ui, text: &str, value: &mut Vec3, speed: f64, suffix: &str) -> bool {
    let mut a = value.to_array();
    let changed = floats(ui, text, &mut a, speed, suffix);
    if changed {
        *value = Vec3::from_array(a);
    }
    changed
}

/// A [`Vec2`] as two dragged numbers.
pub fn vec2(ui: &mut Ui, text: &str, value: &mut Vec2, speed: f64, suffix: &str) -> bool {
    let mut a = value.to_array();
    let changed = floats(ui, text, &mut a, speed, suffix);
    if changed {
        *value = Vec2::from_array(a);
    }
    changed
}

/// An sRGB colour button with a picker popup, and the hex value beside it.
pub fn color(ui: &mut Ui, text: &str, value: &mut [u8; 3]) -> bool {
    let id = label(ui, text);
    let r = ui
        .horizontal(|ui| {
            let r = egui::color_picker::color_edit_button_srgb(ui, value).labelled_by(id);
            ui.weak(format!("#{:02x}{:02x}{:02x}", value[0], value[1], value[2]));
            r
        })
        .inner;
    ui.end_row();
    r.changed()
}

/// An sRGBA colour button (premultiplied-free, unmultiplied alpha).
pub fn color_alpha(ui: &mut Ui, text: &str, value: &mut [u8; 4]) -> bool {
    let id = label(ui, text);
    let mut c = egui::Color32::from_rgba_unmultiplied(value[0], value[1], value[2], value[3]);
    let r = egui::color_picker::color_edit_button_srgba(ui, &mut c, egui::color_picker::Alpha::BlendOrAdditive)
        .labelled_by(id);
    ui.end_row();
    if r.changed() {
        *value = c.to_srgba_unmultiplied();
    }
    r.changed()
}

/// A combo box row choosing one of `options` (value, name). Returns `true` on a change.
pub fn combo<T: PartialEq + Clone>(ui: &mut Ui, text: &str, value: &mut T, options: &[(T, String)]) -> bool {
    let id = label(ui, text);
    let current = options.iter().find(|(v, _)| v == value).map_or_else(|| "(missing)".to_owned(), |(_, n)| n.clone());
    let mut changed = false;
    let r = egui::ComboBox::from_id_salt(("combo", id))
        .selected_text(current)
        .show_ui(ui, |ui| {
            for (v, name) in options {
                if ui.selectable_label(v == value, name).clicked() && v != value {
                    *value = v.clone();
                    changed = true;
                }
            }
        })
        .response;
    r.labelled_by(id);
    ui.end_row();
    changed
}

/// A short refusal message shown in red beside (below) a field.
pub fn error(ui: &mut Ui, msg: &str) {
    ui.label("");
    ui.colored_label(ui.visuals().error_fg_color, msg);
    ui.end_row();
}

/// A colour swatch of `size` points.
pub fn swatch(ui: &mut Ui, rgb: [u8; 3], size: f32) -> Response {
    let (rect, r) = ui.allocate_exact_size(egui::vec2(size, size), egui::Sense::hover());
    ui.painter().rect_filled(rect, 2.0, egui::Color32::from_rgb(rgb[0], rgb[1], rgb[2]));
    ui.painter().rect_stroke(
        rect,
        2.0,
        egui::Stroke::new(1.0, ui.visuals().widgets.noninteractive.bg_stroke.color),
        egui::StrokeKind::Inside,
    );
    r
}
