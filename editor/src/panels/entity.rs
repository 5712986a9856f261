//! The entity inspector: every field of the selected entity's type data, its name, gamemodes,
//! scope, type, and its custom properties.
//!
//! Instead of 24 hand-written forms, the type data is edited generically through its serde
//! representation (`serde_json::Value`): numbers become drag values (integers stay integers),
//! strings buffered text fields, booleans checkboxes, `color`/`emission` arrays colour pickers,
//! short number arrays one row of drag values, `flags` one checkbox per named bit (core's
//! [`EntityData::flag_bits`], generated with the flag types), and known enums (intersectable
//! shapes, light kinds, counter comparisons) a variant combo. The edited value is deserialised
//! back into the typed record; a value the type refuses (e.g. 300 in a `u8` field) is not sent
//! and the reason is shown. Every accepted change is one
//! `ReplaceObject` edit (drags merge into one undo step).

use eframe::egui::{self, Ui};
use serde_json::{Number, Value};

use pmfedit_core::edit::{Edit, ObjItem, ObjRef};
use pmfedit_core::format::pmf::entity::{
    self as pe, Compare, CustomProperty, EntityData, FlagBit, IntersectableShape, LightKind, PropertyData,
    PropertyValues,
};
use pmfedit_core::map::library::{EntityId, EntityScope, MapEntity};

use super::PanelCtx;
use super::form::{self, grid};

/// Every editable (typed) type's default data, by type number.
pub fn typed_defaults() -> Vec<EntityData> {
    (0..=u8::MAX).filter_map(EntityData::typed_default).collect()
}

/// Variants a known enum field can switch between (serialised defaults).
fn enum_choices(key: &str) -> Option<Vec<(String, Value)>> {
    let vals: Vec<Value> = match key {
        "shape" => vec![
            serde_json::to_value(IntersectableShape::Aabb { bounds: Default::default() }).ok()?,
            serde_json::to_value(IntersectableShape::Sphere { radius: [1.0; 3] }).ok()?,
            serde_json::to_value(IntersectableShape::Box { bounds: Default::default() }).ok()?,
            serde_json::to_value(IntersectableShape::Other { kind: 3, bounds: Default::default() }).ok()?,
        ],
        "kind" => vec![
            serde_json::to_value(LightKind::Point).ok()?,
            serde_json::to_value(LightKind::Spot { cone_radius: 45.0 }).ok()?,
            serde_json::to_value(LightKind::Area { angles: Default::default() }).ok()?,
        ],
        "compare" => Compare::ALL.iter().filter_map(|c| serde_json::to_value(c).ok()).collect(),
        _ => return None,
    };
    Some(vals.into_iter().map(|v| (variant_name(&v).unwrap_or_default().to_owned(), v)).collect())
}

/// The variant name of an externally tagged enum value.
fn variant_name(v: &Value) -> Option<&str> {
    match v {
        Value::String(s) => Some(s),
        Value::Object(o) if o.len() == 1 => o.keys().next().map(String::as_str),
        _ => None,
    }
}

/// `follow_entity` -> `Follow entity`; `sig_activate` -> `Signal: activate`.
pub fn humanize(key: &str) -> String {
    let (prefix, rest) = match key.strip_prefix("sig_") {
        Some(r) => ("Signal: ", r),
        None => match key.strip_prefix("out_") {
            Some(r) => ("Output: ", r),
            None => ("", key),
        },
    };
    let mut s = rest.replace('_', " ");
    if prefix.is_empty()
        && let Some(c) = s.get_mut(0..1)
    {
        c.make_ascii_uppercase();
    }
    format!("{prefix}{s}")
}

/// Edits a JSON number in place; keeps integers integral.
fn number(ui: &mut Ui, name: &str, n: &mut Number) -> bool {
    let r = if n.is_f64() {
        let mut v = n.as_f64().unwrap_or_default();
        let r = form::number(ui, name, &mut v, None, 0.05);
        if r.changed()
            && let Some(new) = Number::from_f64(v)
        {
            *n = new;
        }
        r
    } else if let Some(mut v) = n.as_i64() {
        let r = form::number(ui, name, &mut v, None, 0.2);
        if r.changed() {
            *n = Number::from(v);
        }
        r
    } else {
        let mut v = n.as_u64().unwrap_or_default();
        let r = form::number(ui, name, &mut v, None, 0.2);
        if r.changed() {
            *n = Number::from(v);
        }
        r
    };
    r.changed()
}

fn as_rgb(a: &[Value]) -> Option<Vec<u8>> {
    a.iter().map(|v| v.as_u64().and_then(|n| u8::try_from(n).ok())).collect()
}

/// One field (grid row, or a collapsible group for nested values). `flags` are the named bits of
/// the type's `flags` field ([`EntityData::flag_bits`]).
fn field(ui: &mut Ui, flags: &[FlagBit], key: &str, v: &mut Value, depth: usize) -> bool {
    let label = humanize(key);
    match v {
        Value::Bool(b) => form::check(ui, &label, b),
        Value::String(s) => form::text_field(ui, &label, s),
        Value::Number(n) if key == "flags" && depth == 0 => {
            let mut raw = n.as_u64().unwrap_or_default();
            let mut changed = false;
            let l = ui.label(&label);
            ui.vertical(|ui| {
                for f in flags {
                    let mut on = raw & (1 << f.bit) != 0;
                    if ui.checkbox(&mut on, f.label).changed() {
                        raw ^= 1 << f.bit;
                        changed = true;
                    }
                }
                ui.horizontal(|ui| {
                    ui.weak("raw");
                    changed |=
                        ui.add(egui::DragValue::new(&mut raw).hexadecimal(2, false, false)).labelled_by(l.id).changed();
                });
            });
            ui.end_row();
            if changed {
                *n = Number::from(raw);
            }
            changed
        }
        Value::Number(n) => {
            ui.label(&label);
            let c = number(ui, &label, n);
            ui.end_row();
            c
        }
        Value::Array(a) if (key == "color" || key == "emission") && (a.len() == 3 || a.len() == 4) => {
            let Some(rgb) = as_rgb(a) else { return false };
            if rgb.len() == 3 {
                let mut c = [rgb[0], rgb[1], rgb[2]];
                let ch = form::color(ui, &label, &mut c);
                if ch {
                    *a = c.iter().map(|&x| Value::from(x)).collect();
                }
                ch
            } else {
                let mut c = [rgb[0], rgb[1], rgb[2], rgb[3]];
                let ch = form::color_alpha(ui, &label, &mut c);
                if ch {
                    *a = c.iter().map(|&x| Value::from(x)).collect();
                }
                ch
            }
        }
        Value::Array(a) if a.len() <= 4 && a.iter().all(Value::is_number) => {
            const AXES: [&str; 4] = ["X", "Y", "Z", "W"];
            ui.label(&label);
            let mut changed = false;
            ui.horizontal(|ui| {
                for (i, e) in a.iter_mut().enumerate() {
                    if let Value::Number(n) = e {
                        changed |= number(ui, &format!("{label} {}", AXES[i]), n);
                    }
                }
            });
            ui.end_row();
            changed
        }
        Value::Array(a) => {
            let mut changed = false;
            ui.label(&label);
            egui::CollapsingHeader::new(format!("{} items", a.len())).id_salt((key, depth)).show(ui, |ui| {
                grid(ui, (key, depth, "items"), |ui| {
                    for (i, e) in a.iter_mut().enumerate() {
                        changed |= field(ui, flags, &format!("{key} {}", i + 1), e, depth + 1);
                    }
                });
            });
            ui.end_row();
            changed
        }
        Value::Object(_) | Value::Null if enum_choices(key).is_some() => enum_field(ui, flags, key, v, depth),
        Value::Object(o) => {
            let mut changed = false;
            ui.label(&label);
            egui::CollapsingHeader::new("fields").id_salt((key, depth)).show(ui, |ui| {
                grid(ui, (key, depth, "fields"), |ui| {
                    for (k, e) in o.iter_mut() {
                        changed |= field(ui, flags, k, e, depth + 1);
                    }
                });
            });
            ui.end_row();
            changed
        }
        Value::Null => {
            ui.label(&label);
            ui.weak("(none)");
            ui.end_row();
            false
        }
    }
}

/// A known enum: variant combo, then the variant's fields.
fn enum_field(ui: &mut Ui, flags: &[FlagBit], key: &str, v: &mut Value, depth: usize) -> bool {
    let Some(choices) = enum_choices(key) else { return false };
    let label = humanize(key);
    let current = variant_name(v).unwrap_or("?").to_owned();
    let mut picked = current.clone();
    let names: Vec<(String, String)> = choices.iter().map(|(n, _)| (n.clone(), n.clone())).collect();
    let mut changed = form::combo(ui, &label, &mut picked, &names);
    if changed && let Some((_, val)) = choices.into_iter().find(|(n, _)| *n == picked) {
        *v = val;
    }
    if let Value::Object(o) = v
        && let Some(Value::Object(inner)) = o.values_mut().next()
    {
        for (k, e) in inner.iter_mut() {
            changed |= field(ui, flags, k, e, depth + 1);
        }
    }
    changed
}

/// Edits type data; returns the new data when a change was made and accepted, or the reason the
/// type refused it.
fn data_form(ui: &mut Ui, data: &EntityData) -> Option<Result<EntityData, String>> {
    if let EntityData::Opaque { type_id, payload, .. } = data {
        ui.label(format!(
            "Type {type_id} ({}) is kept as {} opaque bytes; it cannot be edited here.",
            pe::type_name_of(*type_id),
            payload.len()
        ));
        return None;
    }
    let Ok(mut value) = serde_json::to_value(data) else { return None };
    let Value::Object(outer) = &mut value else { return None }; // "Dummy": no fields
    let Some((_, Value::Object(inner))) = outer.iter_mut().next() else { return None };
    let flags = data.flag_bits();
    let mut changed = false;
    grid(ui, "entity_data", |ui| {
        for (k, v) in inner.iter_mut() {
            changed |= field(ui, flags, k, v, 0);
        }
    });
    changed.then(|| serde_json::from_value::<EntityData>(value).map_err(|e| e.to_string()))
}

/// Property types, for the custom property type combo.
fn property_types() -> Vec<(u8, String)> {
    [
        PropertyValues::None,
        PropertyValues::Bool(vec![false]),
        PropertyValues::I8(vec![0]),
        PropertyValues::I16(vec![0]),
        PropertyValues::I32(vec![0]),
        PropertyValues::I64(vec![0]),
        PropertyValues::U8(vec![0]),
        PropertyValues::U16(vec![0]),
        PropertyValues::U32(vec![0]),
        PropertyValues::U64(vec![0]),
        PropertyValues::F32(vec![0.0]),
        PropertyValues::F64(vec![0.0]),
        PropertyValues::Str(vec![String::new()]),
    ]
    .into_iter()
    .map(|v| (v.type_id(), v.type_name().to_owned()))
    .collect()
}

/// A default value of a property type number.
fn default_values(type_id: u8) -> PropertyValues {
    match type_id {
        1 => PropertyValues::Bool(vec![false]),
        2 => PropertyValues::I8(vec![0]),
        3 => PropertyValues::I16(vec![0]),
        4 => PropertyValues::I32(vec![0]),
        5 => PropertyValues::I64(vec![0]),
        6 => PropertyValues::U8(vec![0]),
        7 => PropertyValues::U16(vec![0]),
        8 => PropertyValues::U32(vec![0]),
        9 => PropertyValues::U64(vec![0]),
        10 => PropertyValues::F32(vec![0.0]),
        11 => PropertyValues::F64(vec![0.0]),
        12 => PropertyValues::Str(vec![String::new()]),
        _ => PropertyValues::None,
    }
}

/// Values as comma-separated text.
pub fn values_text(v: &PropertyValues) -> String {
    fn j<T: ToString>(v: &[T]) -> String {
        v.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
    }
    match v {
        PropertyValues::None => String::new(),
        PropertyValues::Bool(v) => j(v),
        PropertyValues::I8(v) => j(v),
        PropertyValues::I16(v) => j(v),
        PropertyValues::I32(v) => j(v),
        PropertyValues::I64(v) => j(v),
        PropertyValues::U8(v) => j(v),
        PropertyValues::U16(v) => j(v),
        PropertyValues::U32(v) => j(v),
        PropertyValues::U64(v) => j(v),
        PropertyValues::F32(v) => j(v),
        PropertyValues::F64(v) => j(v),
        PropertyValues::Str(v) => v.join(", "),
    }
}

/// Parses comma-separated values of the type of `like`.
pub fn parse_values(like: &PropertyValues, text: &str) -> Result<PropertyValues, String> {
    fn p<T: std::str::FromStr>(text: &str) -> Result<Vec<T>, String> {
        text.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| s.parse::<T>().map_err(|_| format!("“{s}” is not a valid value of this type")))
            .collect()
    }
    Ok(match like {
        PropertyValues::None => PropertyValues::None,
        PropertyValues::Bool(_) => PropertyValues::Bool(p(text)?),
        PropertyValues::I8(_) => PropertyValues::I8(p(text)?),
        PropertyValues::I16(_) => PropertyValues::I16(p(text)?),
        PropertyValues::I32(_) => PropertyValues::I32(p(text)?),
        PropertyValues::I64(_) => PropertyValues::I64(p(text)?),
        PropertyValues::U8(_) => PropertyValues::U8(p(text)?),
        PropertyValues::U16(_) => PropertyValues::U16(p(text)?),
        PropertyValues::U32(_) => PropertyValues::U32(p(text)?),
        PropertyValues::U64(_) => PropertyValues::U64(p(text)?),
        PropertyValues::F32(_) => PropertyValues::F32(p(text)?),
        PropertyValues::F64(_) => PropertyValues::F64(p(text)?),
        PropertyValues::Str(_) => PropertyValues::Str(text.split(',').map(|s| s.trim().to_owned()).collect()),
    })
}

/// The entity inspector's own state: the last refusal.
#[derive(Debug, Default)]
pub struct EntityPanel {
    error: Option<(EntityId, String)>,
}

impl EntityPanel {
    /// Fills the inspector for entity `id` of level `level`.
    pub fn ui(&mut self, ui: &mut Ui, cx: &mut PanelCtx<'_>, level: usize, id: EntityId) {
        let state = cx.state;
        let Some(original) = state.map.levels.get(level).and_then(|l| l.objects.entities().get(id)) else {
            ui.label("The selected entity no longer exists.");
            return;
        };
        let mut e: MapEntity = original.clone();
        let mut changed = false;
        ui.heading(format!("Entity: {} (type {})", e.type_name(), e.entity.data.type_id()));
        grid(ui, "entity_common", |ui| {
            changed |= form::text_field(ui, "Name", &mut e.entity.name);
            let types: Vec<(u8, String)> =
                typed_defaults().iter().map(|d| (d.type_id(), d.type_name().to_owned())).collect();
            let mut t = e.entity.data.type_id();
            if !matches!(e.entity.data, EntityData::Opaque { .. }) && form::combo(ui, "Type", &mut t, &types) {
                let position = e.position();
                if let Some(d) = typed_defaults().into_iter().find(|d| d.type_id() == t) {
                    e.entity.data = d;
                    if let Some(p) = position {
                        e.set_position(p);
                    }
                    changed = true;
                }
            }
            changed |= form::combo(
                ui,
                "Scope",
                &mut e.scope,
                &[
                    (EntityScope::Auto, "auto (chunk if it has a position)".into()),
                    (EntityScope::Level, "level-wide".into()),
                    (EntityScope::Chunk, "chunk".into()),
                ],
            );
            let l = ui.label("Gamemodes");
            ui.vertical(|ui| {
                let mut all = e.entity.gamemodes == 0;
                if ui.checkbox(&mut all, "all gamemodes").labelled_by(l.id).changed() {
                    e.entity.gamemodes = if all { 0 } else { 1 };
                    changed = true;
                }
                if !all {
                    for (i, g) in state.map.meta.gamemodes.iter().enumerate().take(32) {
                        let mut on = e.entity.gamemodes & (1 << i) != 0;
                        if ui.checkbox(&mut on, g).changed() {
                            e.entity.gamemodes ^= 1 << i;
                            changed = true;
                        }
                    }
                }
            });
            ui.end_row();
        });
        ui.separator();
        match data_form(ui, &e.entity.data) {
            Some(Ok(d)) => {
                e.entity.data = d;
                changed = true;
                self.error = None;
            }
            Some(Err(reason)) => self.error = Some((id, reason)),
            None => {}
        }
        if let Some((eid, reason)) = &self.error
            && *eid == id
        {
            ui.colored_label(ui.visuals().error_fg_color, format!("Refused: {reason}"));
        }
        ui.separator();
        changed |= custom_properties(ui, &mut e.entity.custom);
        if changed {
            cx.sink.edit(Edit::ReplaceObject { level, id: ObjRef::Entity(id), item: ObjItem::Entity(Box::new(e)) });
        }
    }
}

/// The custom property table with add/remove.
fn custom_properties(ui: &mut Ui, custom: &mut Vec<CustomProperty>) -> bool {
    ui.strong(format!("Custom properties ({})", custom.len()));
    let mut changed = false;
    let mut remove = None;
    let types = property_types();
    egui::Grid::new("custom_props").num_columns(5).striped(true).show(ui, |ui| {
        ui.weak("");
        ui.weak("name");
        ui.weak("type");
        ui.weak("value (comma-separated)");
        ui.end_row();
        for (i, p) in custom.iter_mut().enumerate() {
            let l = ui.label(format!("Property {}", i + 1)).id;
            changed |= form::buffered_text(ui, l, &mut p.name, "name", 90.0);
            let mut t = p.value.values.type_id();
            let cur = types.iter().find(|(x, _)| *x == t).map_or("?", |(_, n)| n.as_str()).to_owned();
            egui::ComboBox::from_id_salt(("prop_type", i))
                .selected_text(cur)
                .show_ui(ui, |ui| {
                    for (x, n) in &types {
                        if ui.selectable_value(&mut t, *x, n).changed() {
                            p.value = PropertyData::scalar(default_values(t));
                            changed = true;
                        }
                    }
                })
                .response
                .labelled_by(l);
            let mut text = values_text(&p.value.values);
            let tid = ui.make_persistent_id(("prop_value", i));
            let name = format!("Property {} value", i + 1);
            if form::buffered_text_named(ui, tid, Some(&name), &mut text, "value", 120.0) {
                match parse_values(&p.value.values, &text) {
                    Ok(v) => {
                        let n = v.len();
                        p.value.dims = if n == 1 && p.value.dims.is_empty() { Vec::new() } else { vec![n as u32] };
                        if matches!(v, PropertyValues::None) {
                            p.value.dims.clear();
                        }
                        p.value.values = v;
                        changed = true;
                    }
                    Err(e) => {
                        ui.colored_label(ui.visuals().error_fg_color, e);
                    }
                }
            }
            if ui.small_button("x").on_hover_text("Remove this property").clicked() {
                remove = Some(i);
            }
            ui.end_row();
        }
    });
    if let Some(i) = remove {
        custom.remove(i);
        changed = true;
    }
    if ui.button("Add property").clicked() {
        custom.push(CustomProperty {
            name: format!("property{}", custom.len() + 1),
            value: PropertyData::scalar(PropertyValues::I32(vec![0])),
        });
        changed = true;
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_round_trips_through_json() {
        for d in typed_defaults() {
            let v = serde_json::to_value(&d).unwrap();
            assert_eq!(serde_json::from_value::<EntityData>(v).unwrap(), d);
        }
    }

    #[test]
    fn property_text_round_trips_and_refuses_bad_values() {
        let v = PropertyValues::F32(vec![1.5, 2.0]);
        assert_eq!(parse_values(&v, &values_text(&v)).unwrap(), v);
        assert!(parse_values(&PropertyValues::U8(vec![]), "300").is_err());
        assert_eq!(humanize("sig_activate"), "Signal: activate");
        assert_eq!(humanize("follow_entity"), "Follow entity");
    }
}
