//! Inspectors for the selected level object: lights (every field: shape point/spot/area, mode
//! static/dynamic/fast/realtime, colour, intensity, range, size), environment regions and load
//! regions. Entities have their own module ([`super::entity`]).
//!
//! Each form edits a copy of the object and pushes one `ReplaceObject` edit when a field changes
//! (drags merge into one undo step).

use eframe::egui::{self, Ui};
use glam::{IVec3, Vec3};

use pmfedit_core::edit::{Edit, ObjItem, ObjRef};
use pmfedit_core::map::library::{
    BOX_CORNER_SIGNS, EnvKind, LightId, LightMode, LightShape, LoadRegionId, RealtimeLight, RegionId,
};

use super::PanelCtx;
use super::form::{self, grid};
use super::options::{env_options, kind_label};
use crate::command::Command;
use crate::selection::Selection;

/// Buttons common to every object: frame the camera on it, delete it.
fn object_buttons(ui: &mut Ui, cx: &mut PanelCtx<'_>, level: usize, id: ObjRef) {
    let position = cx.state.map.levels.get(level).and_then(|l| id.position(&l.objects));
    ui.horizontal(|ui| {
        if let Some(p) = position
            && ui.button("Frame").on_hover_text("Point the camera at it (F)").clicked()
        {
            cx.sink.push(Command::Frame { target: p.as_dvec3(), distance: 12.0 });
        }
        if ui.button("Delete").clicked() {
            cx.sink.edit(Edit::RemoveObject { level, id });
            cx.sink.push(Command::Select(Selection::None));
        }
    });
}

/// The light inspector.
pub fn light(ui: &mut Ui, cx: &mut PanelCtx<'_>, level: usize, id: LightId) {
    let state = cx.state;
    let Some(original) = state.map.levels.get(level).and_then(|l| l.objects.lights().get(id)) else {
        ui.label("The selected light no longer exists.");
        return;
    };
    let mut l = original.clone();
    let mut changed = false;
    ui.heading("Light");
    object_buttons(ui, cx, level, ObjRef::Light(id));
    grid(ui, "light_form", |ui| {
        changed |= form::text_field(ui, "Name", &mut l.name);
        changed |= form::vec3(ui, "Position", &mut l.position, 0.05, " m");
        changed |= form::color(ui, "Colour", &mut l.color);
        changed |= form::num_range(ui, "Intensity", &mut l.intensity, 0.0..=1000.0, 0.02, "");
        changed |= form::num_range(ui, "Range", &mut l.range, 0.0..=4096.0, 0.1, " m");
        let mut size = l.size.to_array();
        if form::floats(ui, "Size", &mut size, 0.02, " m") {
            l.size = Vec3::from_array(size).max(Vec3::ZERO);
            changed = true;
        }
        // Shape.
        let mut shape = match l.shape {
            LightShape::Point => 0,
            LightShape::Spot { .. } => 1,
            LightShape::Area { .. } => 2,
        };
        if form::combo(ui, "Shape", &mut shape, &[(0, "point".into()), (1, "spot".into()), (2, "area".into())]) {
            l.shape = match shape {
                1 => LightShape::Spot { direction: Vec3::NEG_Y, cone_radius: 45.0 },
                2 => LightShape::Area { angles: [[-45.0, 45.0]; 3] },
                _ => LightShape::Point,
            };
            changed = true;
        }
        match &mut l.shape {
            LightShape::Point => {}
            LightShape::Spot { direction, cone_radius } => {
                changed |= form::vec3(ui, "Direction", direction, 0.01, "");
                changed |= form::slider(ui, "Cone radius", cone_radius, 0.1..=180.0, "°");
            }
            LightShape::Area { angles } => {
                for (axis, a) in ["X", "Y", "Z"].iter().zip(angles.iter_mut()) {
                    changed |= form::floats(ui, &format!("{axis} angles (start, end)"), a, 0.5, "°");
                }
            }
        }
        // Mode.
        let mut mode = match l.mode {
            LightMode::Static => 0,
            LightMode::Dynamic { .. } => 1,
            LightMode::Fast { .. } => 2,
            LightMode::Realtime(_) => 3,
        };
        let modes = [(0, "static".into()), (1, "dynamic".into()), (2, "fast".into()), (3, "realtime".into())];
        if form::combo(ui, "Mode", &mut mode, &modes) {
            let global_id = state.map.levels.get(level).map_or(1, |lv| lv.objects.unused_global_id());
            l.mode = match mode {
                1 => LightMode::Dynamic { global_id, enabled: true, preserve: false },
                2 => LightMode::Fast { global_id, initial_intensity: 255, enabled: true, preserve: false },
                3 => LightMode::Realtime(RealtimeLight::default()),
                _ => LightMode::Static,
            };
            changed = true;
        }
        match &mut l.mode {
            LightMode::Static => {}
            LightMode::Dynamic { global_id, enabled, preserve } => {
                changed |= form::num(ui, "Global ID", global_id, 0.2, "");
                changed |= form::check(ui, "Enabled at start", enabled);
                changed |= form::check(ui, "Preserve", preserve);
            }
            LightMode::Fast { global_id, initial_intensity, enabled, preserve } => {
                changed |= form::num(ui, "Global ID", global_id, 0.2, "");
                changed |= form::slider(ui, "Initial intensity", initial_intensity, 0..=255, "");
                changed |= form::check(ui, "Enabled at start", enabled);
                changed |= form::check(ui, "Preserve", preserve);
            }
            LightMode::Realtime(rt) => {
                changed |= form::check(ui, "Inactive", &mut rt.inactive);
                changed |= form::text_field(ui, "Follow entity", &mut rt.follow_entity);
                changed |= form::text_field(ui, "Follow bone", &mut rt.follow_bone);
                changed |= form::check(ui, "Follow bone tail", &mut rt.follow_bone_tail);
                changed |= form::text_field(ui, "Signal: activate", &mut rt.sig_activate);
                changed |= form::text_field(ui, "Signal: deactivate", &mut rt.sig_deactivate);
                changed |= form::text_field(ui, "Signal: toggle", &mut rt.sig_toggle);
                let l = ui.label("Gamemodes");
                ui.vertical(|ui| {
                    let mut all = rt.gamemodes == 0;
                    if ui.checkbox(&mut all, "all gamemodes").labelled_by(l.id).changed() {
                        rt.gamemodes = if all { 0 } else { 1 };
                        changed = true;
                    }
                    if !all {
                        for (i, g) in state.map.meta.gamemodes.iter().enumerate().take(32) {
                            let mut on = rt.gamemodes & (1 << i) != 0;
                            if ui.checkbox(&mut on, g).changed() {
                                rt.gamemodes ^= 1 << i;
                                changed = true;
                            }
                        }
                    }
                });
                ui.end_row();
            }
        }
    });
    if changed {
        cx.sink.edit(Edit::ReplaceObject { level, id: ObjRef::Light(id), item: ObjItem::Light(l) });
    }
}

/// The environment region inspector: label, environment (any kind) and the 8 corners.
pub fn region(ui: &mut Ui, cx: &mut PanelCtx<'_>, level: usize, id: RegionId) {
    let state = cx.state;
    let Some(original) = state.map.levels.get(level).and_then(|l| l.objects.regions().get(id)) else {
        ui.label("The selected region no longer exists.");
        return;
    };
    let mut r = original.clone();
    let mut changed = false;
    ui.heading("Environment region");
    object_buttons(ui, cx, level, ObjRef::Region(id));
    let envs: Vec<_> = EnvKind::ALL
        .into_iter()
        .flat_map(|k| {
            env_options(&state.map.library, k).into_iter().map(move |(e, n)| (e, format!("{}: {n}", kind_label(k))))
        })
        .collect();
    grid(ui, "region_form", |ui| {
        changed |= form::text_field(ui, "Name", &mut r.name);
        changed |= form::combo(ui, "Environment", &mut r.environment, &envs);
        let (mut min, mut max) = r.bounds();
        let box_changed =
            form::vec3(ui, "Box min", &mut min, 0.1, " m") | form::vec3(ui, "Box max", &mut max, 0.1, " m");
        if box_changed {
            let (c, h) = ((min + max) * 0.5, (max - min).abs() * 0.5);
            r.corners = BOX_CORNER_SIGNS.map(|s| c + s * h);
            changed = true;
        }
    });
    egui::CollapsingHeader::new("Corners").show(ui, |ui| {
        grid(ui, "region_corners", |ui| {
            for (i, c) in r.corners.iter_mut().enumerate() {
                let s = BOX_CORNER_SIGNS[i];
                let sign = |v: f32| if v > 0.0 { '+' } else { '-' };
                changed |= form::vec3(ui, &format!("Corner {}X{}Y{}Z", sign(s.x), sign(s.y), sign(s.z)), c, 0.1, "");
            }
        });
    });
    if changed {
        cx.sink.edit(Edit::ReplaceObject { level, id: ObjRef::Region(id), item: ObjItem::Region(r) });
    }
}

/// The load region inspector.
pub fn load_region(ui: &mut Ui, cx: &mut PanelCtx<'_>, level: usize, id: LoadRegionId) {
    let state = cx.state;
    let Some(original) = state.map.levels.get(level).and_then(|l| l.objects.load_regions().get(id)) else {
        ui.label("The selected load region no longer exists.");
        return;
    };
    let mut r = original.clone();
    let mut changed = false;
    ui.heading("Load region");
    object_buttons(ui, cx, level, ObjRef::LoadRegion(id));
    grid(ui, "load_region_form", |ui| {
        changed |= form::text_field(ui, "Name", &mut r.name);
        changed |= form::vec3(ui, "Min corner", &mut r.min, 0.1, " m");
        changed |= form::vec3(ui, "Max corner", &mut r.max, 0.1, " m");
        let mut remove = None;
        for (i, c) in r.other_active_chunks.iter_mut().enumerate() {
            let mut a = c.to_array().map(|v| v as f32);
            if form::floats(ui, &format!("Active chunk {}", i + 1), &mut a, 0.1, "") {
                *c = IVec3::from_array(a.map(|v| v.round() as i32));
                changed = true;
            }
            ui.label("");
            if ui.small_button("Remove chunk").clicked() {
                remove = Some(i);
            }
            ui.end_row();
        }
        if let Some(i) = remove {
            r.other_active_chunks.remove(i);
            changed = true;
        }
    });
    if ui.button("Add active chunk").clicked() {
        r.other_active_chunks.push(IVec3::ZERO);
        changed = true;
    }
    if changed {
        cx.sink.edit(Edit::ReplaceObject { level, id: ObjRef::LoadRegion(id), item: ObjItem::LoadRegion(r) });
    }
}
