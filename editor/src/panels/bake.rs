//! The bake panel: chunks waiting for a re-baked mesh and for their full bake (visibility,
//! pathfinding), the last bake times of every chunk, and errors.

use eframe::egui::{self, Ui};

use super::PanelCtx;

/// Fills the bake panel.
pub fn ui(ui: &mut Ui, cx: &mut PanelCtx<'_>) {
    let bake = &cx.state.bake;
    ui.label(format!(
        "baking {} chunks, finishing visibility for {}, {} fully baked",
        bake.pending.len(),
        bake.finishing(),
        bake.full.len()
    ));
    if !bake.last_ms.is_empty() {
        let total: f64 = bake.last_ms.values().sum();
        let max = bake.last_ms.values().copied().fold(0.0, f64::max);
        ui.weak(format!("last full bakes: {total:.0} ms in all, slowest {max:.1} ms"));
    }
    if !bake.last_preview_ms.is_empty() {
        let total: f64 = bake.last_preview_ms.values().sum();
        let max = bake.last_preview_ms.values().copied().fold(0.0, f64::max);
        ui.weak(format!("last previews (mesh + light): {total:.0} ms in all, slowest {max:.1} ms"));
    }
    if !bake.last_draft_ms.is_empty() {
        let total: f64 = bake.last_draft_ms.values().sum();
        let max = bake.last_draft_ms.values().copied().fold(0.0, f64::max);
        ui.weak(format!("last drafts (edited chunks, hard shadows): {total:.0} ms in all, slowest {max:.1} ms"));
    }
    if !bake.errors.is_empty() {
        ui.colored_label(ui.visuals().error_fg_color, format!("{} errors", bake.errors.len()));
        egui::ScrollArea::vertical().id_salt("bake_errors").max_height(120.0).show(ui, |ui| {
            for e in bake.errors.iter().rev() {
                ui.colored_label(ui.visuals().error_fg_color, e);
            }
        });
    }
    ui.separator();
    egui::ScrollArea::vertical().id_salt("bake_chunks").show(ui, |ui| {
        egui::Grid::new("bake_table").num_columns(4).striped(true).show(ui, |ui| {
            ui.strong("level");
            ui.strong("chunk");
            ui.strong("preview");
            ui.strong("full bake");
            ui.end_row();
            for (key, ms) in bake.last_ms.iter().take(500) {
                let (level, c) = key;
                ui.label(level.to_string());
                ui.label(format!("{}, {}, {}", c.x, c.y, c.z));
                ui.label(bake.last_preview_ms.get(key).map_or_else(String::new, |p| format!("{p:.1} ms")));
                ui.label(if bake.pending.contains(key) {
                    format!("{ms:.1} ms (re-baking)")
                } else if bake.drafts.contains(key) {
                    format!("{ms:.1} ms (refining lighting)")
                } else if bake.finalizing.contains(key) {
                    format!("{ms:.1} ms (finishing visibility)")
                } else {
                    format!("{ms:.1} ms")
                });
                ui.end_row();
            }
        });
        if bake.last_ms.len() > 500 {
            ui.weak(format!("… and {} more", bake.last_ms.len() - 500));
        }
    });
}
