//! The bake panel: chunks waiting for a re-baked mesh and for their full bake (visibility,
//! pathfinding), the light memos warmed up around the view, the last bake times of every chunk,
//! and errors.

use std::time::Duration;

use eframe::egui::{self, Ui};
use pmfedit_bake::rebuild::ChunkState;
use pmfedit_bake::scheduler::Stage;

use super::PanelCtx;

/// Fills the bake panel.
pub fn ui(ui: &mut Ui, cx: &mut PanelCtx<'_>) {
    let bake = &cx.state.bake;
    let c = bake.census();
    ui.label(format!(
        "baking {} chunks, finishing visibility for {}, {} fully baked",
        c.count(ChunkState::Queued),
        c.drafted + c.previewed,
        c.count(ChunkState::Done)
    ));
    for (stage, what) in [
        (Stage::Full, "full bakes"),
        (Stage::Preview, "previews (mesh + light)"),
        (Stage::Draft, "drafts (chunks that draw the edit, hard shadows)"),
    ] {
        let times: Vec<f64> = bake.slots().values().filter_map(|s| s.times[stage.index()]).map(ms).collect();
        if !times.is_empty() {
            let total: f64 = times.iter().sum();
            let max = times.iter().copied().fold(0.0, f64::max);
            ui.weak(format!("last {what}: {total:.0} ms in all, slowest {max:.1} ms"));
        }
    }
    // Idle work: the light memos around the view (an edit there then re-traces only what it reaches).
    let (warmed, left, running) = bake.warm_ups();
    if warmed + left > 0 || running {
        ui.weak(format!(
            "light warmed up around the view: {warmed} chunks{}",
            if left > 0 || running {
                format!(", {} to go (while idle)", left + usize::from(running))
            } else {
                String::new()
            }
        ));
    }
    let errors = bake.errors();
    if !errors.is_empty() {
        ui.colored_label(ui.visuals().error_fg_color, format!("{} errors", errors.len()));
        egui::ScrollArea::vertical().id_salt("bake_errors").max_height(120.0).show(ui, |ui| {
            for e in errors.iter().rev() {
                ui.colored_label(ui.visuals().error_fg_color, e);
            }
        });
    }
    ui.separator();
    // Chunks baked in this session (those from the bake cache have no times).
    let timed: Vec<_> = bake.slots().iter().filter(|(_, s)| s.times.iter().any(Option::is_some)).collect();
    egui::ScrollArea::vertical().id_salt("bake_chunks").show(ui, |ui| {
        egui::Grid::new("bake_table").num_columns(4).striped(true).show(ui, |ui| {
            ui.strong("level");
            ui.strong("chunk");
            ui.strong("preview");
            ui.strong("full bake");
            ui.end_row();
            for ((level, c), slot) in timed.iter().take(500) {
                ui.label(level.to_string());
                ui.label(format!("{}, {}, {}", c.x, c.y, c.z));
                let time =
                    |stage: Stage| slot.times[stage.index()].map_or_else(String::new, |t| format!("{:.1} ms", ms(t)));
                ui.label(time(Stage::Preview));
                ui.label(match slot.state {
                    ChunkState::Done => time(Stage::Full),
                    state => format!("{} ({})", time(Stage::Full), state.label()),
                });
                ui.end_row();
            }
        });
        if timed.len() > 500 {
            ui.weak(format!("… and {} more", timed.len() - 500));
        } else if timed.is_empty() && !bake.slots().is_empty() {
            ui.weak("no chunk baked since the open: every bake came from the bake cache");
        }
    });
}

fn ms(t: Duration) -> f64 {
    t.as_secs_f64() * 1e3
}
