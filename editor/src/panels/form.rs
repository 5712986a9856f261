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
//! Number fields take typed text on Enter or focus loss only, and say beside the field what they
//! did with it when that is not what was typed ([`check_typed`]): a value outside the field's
//! range is clamped and says so, text that is not a number (or NaN, or infinity) is refused and
//! says so. Enter on an unchanged field keeps the exact value (the field shows it rounded), so it
//! records nothing and re-bakes nothing.
//!
//! Every input widget gets an accessible name (the label beside it), so screen readers and
//! egui_kittest find it by label.

use std::cell::RefCell;
use std::ops::RangeInclusive;

use eframe::egui::emath::Numeric;
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

/// A number as text for field notes: plain, or in exponent form when very large or small.
fn number_text(v: f64) -> String {
    if v != 0.0 && !(1e-4..1e9).contains(&v.abs()) { format!("{v:e}") } else { format!("{v}") }
}

/// What a number field does with `text` typed over `shown` (the field's text for its value
/// `old`), for a field taking `min..=max` (whole numbers only when `integral`): the value to set
/// (`None`: refused, the field keeps `old`) and what to tell the user beside the field (`None`:
/// the value is what was typed).
pub fn check_typed(
    text: &str,
    shown: &str,
    old: f64,
    range: (f64, f64),
    integral: bool,
) -> (Option<f64>, Option<String>) {
    let clean = |t: &str| -> String {
        t.chars().filter(|c| !c.is_whitespace()).map(|c| if c == '\u{2212}' { '-' } else { c }).collect()
    };
    let t = clean(text);
    // Enter on an unchanged field: the exact value, not the rounded one the field shows.
    if t == clean(shown) {
        return (Some(old), None);
    }
    let kept = number_text(old);
    let Ok(v) = t.parse::<f64>() else {
        return (None, Some(format!("“{}” is not a number: kept {kept}", text.trim())));
    };
    if v.is_nan() {
        return (None, Some(format!("NaN is not a number: kept {kept}")));
    }
    if v.is_infinite() {
        return (None, Some(format!("{} is not a finite number: kept {kept}", text.trim())));
    }
    let (min, max) = range;
    if v < min {
        return (Some(min), Some(format!("{} is below the minimum: set to {}", number_text(v), number_text(min))));
    }
    if v > max {
        return (Some(max), Some(format!("{} is above the maximum: set to {}", number_text(v), number_text(max))));
    }
    if integral && v.fract() != 0.0 {
        let r = v.round();
        return (Some(r), Some(format!("{} is not a whole number: set to {}", number_text(v), number_text(r))));
    }
    (Some(v), None)
}

/// What a number field said about the text last typed into it, and the value it set then (the
/// note shows while the field still has that value).
#[derive(Debug, Clone)]
struct FieldNote {
    text: String,
    value: f64,
}

/// The parser and formatter a number field runs with: the formatter remembers the text shown,
/// the parser checks typed text against it ([`check_typed`]) and keeps what it said.
struct TypedCheck {
    shown: RefCell<String>,
    said: RefCell<Option<Option<String>>>,
    old: f64,
    range: (f64, f64),
    integral: bool,
    /// The field's own formatter, if it has one.
    display: Option<fn(f64) -> String>,
    /// The grid typed values snap to, if any.
    snap: Option<f64>,
}

impl TypedCheck {
    fn new<N: Numeric>(value: N, range: &Option<RangeInclusive<N>>, look: Shown<'_>) -> Self {
        let range =
            range.as_ref().map_or((N::MIN.to_f64(), N::MAX.to_f64()), |r| (r.start().to_f64(), r.end().to_f64()));
        let (shown, said) = (RefCell::default(), RefCell::default());
        Self { shown, said, old: value.to_f64(), range, integral: N::INTEGRAL, display: look.format, snap: look.snap }
    }

    fn format(&self, v: f64, decimals: RangeInclusive<usize>) -> String {
        let s = match self.display {
            Some(f) => f(v),
            None => egui::emath::format_with_decimals_in_range(v, decimals),
        };
        self.shown.replace(s.clone());
        s
    }

    fn parse(&self, text: &str) -> Option<f64> {
        let (v, mut note) = check_typed(text, &self.shown.borrow(), self.old, self.range, self.integral);
        // A value in range snaps to the grid (a clamped one already says what it became).
        let v = match (v, self.snap) {
            (Some(v), Some(step)) if step > 0.0 && note.is_none() => {
                let s = (v / step).round() * step;
                if s != v {
                    note = Some(format!("{} snapped to the grid: {}", number_text(v), number_text(s)));
                }
                Some(s)
            }
            _ => v,
        };
        self.said.replace(Some(note));
        v
    }

    /// Keeps what the parser said for the field `id` (now at `value`). Fields are keyed by their
    /// name, not their widget id (an automatic id moves when the layout before it changes).
    fn remember(self, ui: &Ui, id: egui::Id, value: f64) {
        let key = id.with("field_note");
        match self.said.into_inner() {
            Some(Some(text)) => ui.data_mut(|d| {
                d.insert_temp(key, FieldNote { text, value });
            }),
            Some(None) => ui.data_mut(|d| d.remove::<FieldNote>(key)),
            None => {}
        }
    }
}

/// The note of the field `id` while it still holds the value the note is about.
fn field_note(ui: &Ui, id: egui::Id, value: f64) -> Option<String> {
    let note: FieldNote = ui.data(|d| d.get_temp(id.with("field_note")))?;
    (note.value == value || (note.value.is_nan() && value.is_nan())).then_some(note.text)
}

/// How a number field shows and takes its value: text before and after it, or its own
/// formatter (which then also is the text an unchanged Enter is compared with), and the grid a
/// typed value snaps to.
#[derive(Debug, Clone, Copy, Default)]
pub struct Shown<'a> {
    pub prefix: &'a str,
    pub suffix: &'a str,
    pub format: Option<fn(f64) -> String>,
    /// A typed value in range is rounded to a multiple of this, and the field says so.
    pub snap: Option<f64>,
}

impl<'a> Shown<'a> {
    /// The value with `suffix` after it.
    fn suffix(suffix: &'a str) -> Self {
        Self { suffix, ..Self::default() }
    }
}

/// A dragged number (typed text checked, see [`check_typed`]), its note kept under `key`; its
/// response and its note.
fn drag_value<N: Numeric>(
    ui: &mut Ui,
    key: egui::Id,
    value: &mut N,
    range: Option<RangeInclusive<N>>,
    speed: f64,
    shown: Shown<'_>,
) -> (Response, Option<String>) {
    let check = TypedCheck::new(*value, &range, shown);
    let Shown { prefix, suffix, .. } = shown;
    let mut dv = egui::DragValue::new(value)
        .speed(speed)
        .prefix(prefix)
        .suffix(suffix)
        .update_while_editing(false)
        .custom_formatter(|v, d| check.format(v, d))
        .custom_parser(|t| check.parse(t));
    if let Some(r) = range {
        dv = dv.range(r);
    }
    let r = ui.add(dv);
    let v = value.to_f64();
    check.remember(ui, key, v);
    let note = field_note(ui, key, v);
    (r, note)
}

/// A number field with its label, outside a grid: the note (clamped, refused) beside it.
pub fn number<N: Numeric>(
    ui: &mut Ui,
    name: &str,
    value: &mut N,
    range: Option<RangeInclusive<N>>,
    speed: f64,
) -> Response {
    number_shown(ui, name, value, range, speed, Shown::default())
}

/// [`number`] shown as `shown` says (a prefix, a formatter).
pub fn number_shown<N: Numeric>(
    ui: &mut Ui,
    name: &str,
    value: &mut N,
    range: Option<RangeInclusive<N>>,
    speed: f64,
    shown: Shown<'_>,
) -> Response {
    let key = ui.scope_id().with(name);
    let (r, note) = drag_value(ui, key, value, range, speed, shown);
    let r = r.accessible_name(name);
    if let Some(n) = note {
        ui.colored_label(ui.visuals().error_fg_color, n);
    }
    r
}

/// The notes of a grid row's fields, each on its own row below it.
fn notes(ui: &mut Ui, notes: impl IntoIterator<Item = String>) {
    for n in notes {
        error(ui, &n);
    }
}

/// A dragged number with a unit suffix.
pub fn num<N: Numeric>(ui: &mut Ui, text: &str, value: &mut N, speed: f64, suffix: &str) -> bool {
    num_in(ui, text, value, None, speed, suffix)
}

/// A dragged number clamped to a range.
pub fn num_range<N: Numeric>(
    ui: &mut Ui,
    text: &str,
    value: &mut N,
    range: RangeInclusive<N>,
    speed: f64,
    suffix: &str,
) -> bool {
    num_in(ui, text, value, Some(range), speed, suffix)
}

fn num_in<N: Numeric>(
    ui: &mut Ui,
    text: &str,
    value: &mut N,
    range: Option<RangeInclusive<N>>,
    speed: f64,
    suffix: &str,
) -> bool {
    let mut note = None;
    let key = ui.scope_id().with(text);
    let r = row(ui, text, |ui| {
        let (r, n) = drag_value(ui, key, value, range, speed, Shown::suffix(suffix));
        note = n;
        r
    });
    notes(ui, note);
    r.changed()
}

/// A slider with a unit suffix (typed text checked, see [`check_typed`]).
pub fn slider<N: Numeric>(ui: &mut Ui, text: &str, value: &mut N, range: RangeInclusive<N>, suffix: &str) -> bool {
    let check = TypedCheck::new(*value, &Some(range.clone()), Shown::default());
    let r = row(ui, text, |ui| {
        ui.add(
            egui::Slider::new(value, range)
                .suffix(suffix)
                .update_while_editing(false)
                .custom_formatter(|v, d| check.format(v, d))
                .custom_parser(|t| check.parse(t)),
        )
    });
    let v = value.to_f64();
    let key = ui.scope_id().with(text);
    check.remember(ui, key, v);
    notes(ui, field_note(ui, key, v));
    r.changed()
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
    let mut said = Vec::new();
    let key = ui.scope_id().with(text);
    ui.horizontal(|ui| {
        for (i, v) in values.iter_mut().enumerate() {
            let axis = AXES.get(i).copied().unwrap_or("");
            let prefix = format!("{} ", axis.to_lowercase());
            let (r, note) =
                drag_value(ui, key.with(i), v, None, speed, Shown { prefix: &prefix, suffix, ..Shown::default() });
            let r = r.accessible_name(format!("{text} {axis}"));
            said.extend(note.map(|n| format!("{axis}: {n}")));
            changed |= r.changed();
        }
    });
    ui.end_row();
    notes(ui, said);
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

#[cfg(test)]
mod tests {
    use super::check_typed;

    #[test]
    fn typed_numbers_are_clamped_refused_or_kept_with_a_reason() {
        let r = (0.0, 4096.0);
        assert_eq!(check_typed("12.5", "3", 3.0, r, false), (Some(12.5), None));
        // The field shows 0.61 for 0.613725: Enter on it keeps the exact value.
        assert_eq!(check_typed("0.61", "0.61", 0.613_725, r, false), (Some(0.613_725), None));
        let (v, note) = check_typed("\u{2212}5", "3", 3.0, r, false);
        assert_eq!((v, note.as_deref()), (Some(0.0), Some("-5 is below the minimum: set to 0")));
        let (v, note) = check_typed("1e30", "3", 3.0, r, false);
        assert_eq!((v, note.as_deref()), (Some(4096.0), Some("1e30 is above the maximum: set to 4096")));
        let (v, note) = check_typed("abc", "3", 3.0, r, false);
        assert_eq!((v, note.as_deref()), (None, Some("“abc” is not a number: kept 3")));
        let (v, note) = check_typed("NaN", "3", 3.0, r, false);
        assert_eq!((v, note.as_deref()), (None, Some("NaN is not a number: kept 3")));
        let (v, note) = check_typed("inf", "3", 3.0, (f64::MIN, f64::MAX), false);
        assert_eq!((v, note.as_deref()), (None, Some("inf is not a finite number: kept 3")));
        let (v, note) = check_typed("2.5", "3", 3.0, (0.0, 255.0), true);
        assert_eq!((v, note.as_deref()), (Some(3.0), Some("2.5 is not a whole number: set to 3")));
    }
}
