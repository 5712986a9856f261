//! The undo history: every step by name, oldest first; undone steps are greyed out. A click on a
//! step jumps there (`Command::GoTo`): the clicked step becomes the last applied one. "(start)"
//! goes back before the first step.

use eframe::egui::{self, RichText, Ui};

use super::PanelCtx;
use crate::command::Command;

/// Fills the history panel.
pub fn ui(ui: &mut Ui, cx: &mut PanelCtx<'_>) {
    let history = &cx.state.history;
    ui.horizontal(|ui| {
        if ui.add_enabled(history.can_undo(), egui::Button::new("Undo")).clicked() {
            cx.sink.push(Command::Undo);
        }
        if ui.add_enabled(history.can_redo(), egui::Button::new("Redo")).clicked() {
            cx.sink.push(Command::Redo);
        }
    });
    let head = history.head();
    let kib = history.backup_bytes() as f64 / 1024.0;
    ui.weak(format!("{} steps, {head} applied · {kib:.1} KiB of backups", history.len()));
    egui::ScrollArea::vertical().id_salt("history").auto_shrink([false, true]).stick_to_bottom(true).show(ui, |ui| {
        if ui.selectable_label(head == 0, "(start)").clicked() && head != 0 {
            cx.sink.push(Command::GoTo(0));
        }
        for e in history.entries() {
            let text = if e.steps > 1 { format!("{} ({} steps)", e.name, e.steps) } else { e.name.to_owned() };
            let text = if e.applied { RichText::new(text) } else { RichText::new(text).weak().italics() };
            let current = e.index + 1 == head;
            if ui.selectable_label(current, text).clicked() && !current {
                cx.sink.push(Command::GoTo(e.index + 1));
            }
        }
    });
}
