//! The eframe application: menus, toolbar, status bar, side panels and the viewport around one
//! [`EditorState`]. Each frame: take finished bakes, draw, then apply the commands the UI queued.

use std::sync::Arc;

use eframe::egui;

use pmfedit_core::map::Map;
use pmfedit_core::project::Project;

use crate::command::Command;
use crate::state::EditorState;
use crate::tools::ToolKind;
use crate::viewport::Viewport;

/// The editor application.
pub struct App {
    pub state: EditorState,
    /// Commands queued this frame.
    pub commands: Vec<Command>,
    /// The 3D view (without a GL context it draws a note instead).
    pub viewport: Viewport,
}

impl App {
    /// The app for `map` (opened from `project`, if any). `cc.gl` is `None` under egui_kittest:
    /// the 3D view is then left out.
    pub fn new(cc: &eframe::CreationContext<'_>, map: Map, project: Option<Project>) -> Self {
        let ctx = cc.egui_ctx.clone();
        let wake: Arc<dyn Fn() + Send + Sync> = Arc::new(move || ctx.request_repaint());
        let viewport = Viewport::new(cc.gl.clone());
        Self { state: EditorState::new(map, project, wake), commands: Vec::new(), viewport }
    }

    fn title(&self) -> String {
        let dirty = if self.state.is_dirty() { " •" } else { "" };
        format!(
            "{}{dirty} — pmfedit",
            if self.state.map.meta.name.is_empty() { "untitled" } else { &self.state.map.meta.name }
        )
    }

    fn shortcuts(&mut self, ctx: &egui::Context) {
        use egui::{Key, KeyboardShortcut, Modifiers};
        let cmd = |m: Modifiers, k: Key| KeyboardShortcut::new(m, k);
        let ctrl = Modifiers::COMMAND;
        let ctrl_shift = Modifiers::COMMAND | Modifiers::SHIFT;
        ctx.input_mut(|i| {
            if i.consume_shortcut(&cmd(ctrl_shift, Key::Z)) || i.consume_shortcut(&cmd(ctrl, Key::Y)) {
                self.commands.push(Command::Redo);
            }
            if i.consume_shortcut(&cmd(ctrl, Key::Z)) {
                self.commands.push(Command::Undo);
            }
            if i.consume_shortcut(&cmd(ctrl, Key::S)) {
                self.commands.push(Command::Save);
            }
        });
        if !ctx.egui_wants_keyboard_input() {
            ctx.input(|i| {
                for (k, tool) in
                    [Key::Num1, Key::Num2, Key::Num3, Key::Num4, Key::Num5, Key::Num6, Key::Num7, Key::Num8, Key::Num9]
                        .into_iter()
                        .zip(ToolKind::ALL)
                {
                    if i.key_pressed(k) && i.modifiers.is_none() {
                        self.commands.push(Command::SetTool(tool));
                    }
                }
            });
        }
    }
}

impl eframe::App for App {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        let ctx = ui.ctx().clone();
        self.state.poll_bakes();
        self.shortcuts(&ctx);
        ctx.send_viewport_cmd(egui::ViewportCommand::Title(self.title()));

        egui::Panel::top("menu").show(ui, |ui| {
            egui::MenuBar::new().ui(ui, |ui| {
                ui.menu_button("File", |ui| {
                    if ui.button("New").clicked() {
                        self.commands.push(Command::NewMap);
                    }
                    if ui.button("Save\tCtrl+S").clicked() {
                        self.commands.push(Command::Save);
                    }
                });
                ui.menu_button("Edit", |ui| {
                    if ui.add_enabled(self.state.history.can_undo(), egui::Button::new("Undo\tCtrl+Z")).clicked() {
                        self.commands.push(Command::Undo);
                    }
                    if ui.add_enabled(self.state.history.can_redo(), egui::Button::new("Redo\tCtrl+Shift+Z")).clicked()
                    {
                        self.commands.push(Command::Redo);
                    }
                });
            });
        });
        egui::Panel::top("toolbar").show(ui, |ui| {
            ui.horizontal(|ui| {
                for (i, t) in ToolKind::ALL.into_iter().enumerate() {
                    if ui.selectable_label(self.state.tool == t, format!("{} {}", i + 1, t.label())).clicked() {
                        self.commands.push(Command::SetTool(t));
                    }
                }
            });
        });
        egui::Panel::bottom("status").show(ui, |ui| {
            ui.horizontal(|ui| {
                let n = self.state.baking();
                if n > 0 {
                    let total = (self.state.bake.bakes.len() + n).max(1);
                    ui.add(egui::ProgressBar::new(1.0 - n as f32 / total as f32).desired_width(120.0));
                    ui.label(format!("baking {n} chunks"));
                } else {
                    ui.label("baked");
                }
                if let Some((msg, _)) = &self.state.status {
                    ui.separator();
                    ui.label(msg);
                }
            });
        });
        egui::CentralPanel::default().frame(egui::Frame::NONE).show(ui, |ui| {
            let commands = self.viewport.ui(ui, &mut self.state);
            self.commands.extend(commands);
        });

        let commands = std::mem::take(&mut self.commands);
        self.state.apply_all(commands);
        self.state.autosave();
    }
}
