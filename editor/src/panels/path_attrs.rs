//! Path attribute sets: what the path tool (key 9) paints on air cells, as the PMF pathfinding
//! attribute each set exports (docs/spec/PMF-NOTES.md P1): a name and an optional direction to
//! face. Each set has a row: the set it paints is chosen with the radio button; name and facing
//! edit the map's [`PathSets`] through one `SetPathSets` edit (undoable; a facing drag is one
//! step; a typed component outside −1..1 is clamped and says so beside it). Ids painted in the level without a set (projects from before sets) are listed too and
//! export as `user_<id>` until they are named.

use eframe::egui::Ui;

use pmfedit_core::edit::Edit;
use pmfedit_core::map::ids::PathAttrs;
use pmfedit_core::map::path_sets::{PathSet, PathSets};

use super::PanelCtx;
use super::form::{self, grid};
use crate::command::Command;

/// Fills the panel.
pub fn ui(ui: &mut Ui, cx: &mut PanelCtx<'_>) {
    let state = cx.state;
    let sets = &state.map.path_sets;
    ui.strong(format!("Path attribute sets ({})", sets.0.len()));
    // Ids in use without a set: they export as user_<id>. Scanning the level's leaves costs
    // time: done once per map generation and level, kept in egui's memory.
    let key = ui.make_persistent_id("path_sets_unnamed");
    let stamp = (state.generation(), state.level);
    let cached = ui.data(|d| d.get_temp::<((u64, usize), PathSets)>(key)).filter(|(s, _)| *s == stamp);
    let unnamed = cached.map(|(_, u)| u).unwrap_or_else(|| {
        let mut u = PathSets::new();
        if let Some(level) = state.map.levels.get(state.level) {
            u.name_unnamed(level.leaves().map(|(_, _, c)| c.path).filter(|p| sets.get(*p).is_none()));
        }
        ui.data_mut(|d| d.insert_temp(key, (stamp, u.clone())));
        u
    });
    let mut new_sets: Option<PathSets> = None;
    grid(ui, "path_sets", |ui| {
        for (&id, set) in &sets.0 {
            let painting = state.path_set == PathAttrs(id);
            let l = ui.label(format!("Set {id}"));
            let mut name = set.name.clone();
            let mut remove = false;
            let changed = ui
                .horizontal(|ui| {
                    if ui.radio(painting, "").on_hover_text("Paint this set with the path tool").clicked() {
                        cx.sink.push(Command::SetPathSet(PathAttrs(id)));
                    }
                    let c = form::buffered_text(ui, l.id, &mut name, "name", 120.0);
                    remove = ui.small_button("x").on_hover_text("Remove this set").clicked();
                    c
                })
                .inner;
            ui.end_row();
            let mut facing = set.facing;
            let mut on = facing.is_some();
            let faced = ui.checkbox(&mut on, "Facing").changed();
            let mut dir = facing.unwrap_or([0.0, 0.0, -1.0]);
            let dragged = ui
                .add_enabled_ui(on, |ui| {
                    ui.horizontal(|ui| {
                        let mut c = false;
                        for (v, axis) in dir.iter_mut().zip(["X", "Y", "Z"]) {
                            let name = format!("Set {id} facing {axis}");
                            let prefix = format!("{} ", axis.to_lowercase());
                            let shown = form::Shown { prefix: &prefix, ..form::Shown::default() };
                            c |= form::number_shown(ui, &name, v, Some(-1.0..=1.0), 0.05, shown).changed();
                        }
                        c
                    })
                    .inner
                })
                .inner;
            ui.end_row();
            if faced || dragged {
                facing = on.then_some(dir);
            }
            if changed || faced || dragged || remove {
                let mut s = new_sets.take().unwrap_or_else(|| sets.clone());
                if remove {
                    s.0.remove(&id);
                } else {
                    s.0.insert(id, PathSet { name, facing });
                }
                new_sets = Some(s);
            }
        }
        for (&id, set) in &unnamed.0 {
            ui.label(format!("Set {id}"));
            ui.horizontal(|ui| {
                ui.weak(format!("painted, exports as {}", set.name));
                if ui.small_button("Name it").clicked() {
                    let mut s = new_sets.take().unwrap_or_else(|| sets.clone());
                    s.0.insert(id, set.clone());
                    new_sets = Some(s);
                }
            });
            ui.end_row();
        }
    });
    if ui.button("Add set").clicked()
        && let Some(id) = sets.next_id()
    {
        let mut s = new_sets.take().unwrap_or_else(|| sets.clone());
        s.0.insert(id.0, PathSet::new(format!("set_{}", id.0)));
        cx.sink.push(Command::SetPathSet(id));
        new_sets = Some(s);
    }
    // A refused change is not sent; why stays shown until the next accepted one.
    let error_key = ui.make_persistent_id("path_sets_error");
    if let Some(s) = new_sets {
        match s.validate() {
            Ok(()) => {
                cx.sink.edit(Edit::SetPathSets(s));
                ui.data_mut(|d| d.remove::<String>(error_key));
            }
            Err(e) => {
                ui.data_mut(|d| d.insert_temp(error_key, format!("Refused: {e}")));
            }
        }
    }
    if let Some(msg) = ui.data(|d| d.get_temp::<String>(error_key)) {
        ui.colored_label(ui.visuals().error_fg_color, msg);
    }
}
