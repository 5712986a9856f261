//! The eframe application: menus, toolbar, status bar, side panels and the viewport around one
//! [`EditorState`]. Each frame: take finished bakes and asset changes, draw, then apply the
//! commands the UI queued.
//!
//! File handling lives here and in [`crate::files`]: New / Open / Quit ask before dropping
//! unsaved changes (the window's close button too: `close_requested` + `CancelClose`); opening a
//! project with a newer recovery snapshot offers "Recover / Discard"; Save without a project asks
//! for a folder; every path prompt has a typed-path field beside "Browse…".
//!
//! Imports run on a worker thread ([`ImportJob`]): one at a time (a second one is refused with a
//! message), shown in the status bar with a spinner, the phase and "Cancel import". A finished
//! import becomes one undo step, unless the map changed while it ran: then it is refused ("the
//! map changed while importing FILE; import again"), since it was made from the older map.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use eframe::egui;

use pmfedit_core::edit::{Edit, WholeMap};
use pmfedit_core::map::Map;
use pmfedit_core::project::{Project, RecoveryInfo};

use crate::command::Command;
use crate::files::{Dialogs, FileAction, FilePrompt, ImportFn, ImportJob, ImportRequest, PromptResult, RecentFiles};
use crate::panels::Panels;
use crate::state::{EditorState, Selection};
use crate::tools::ToolKind;
use crate::viewport::Viewport;
use crate::viewport::render::Shading;
use crate::watch::{Thumbnails, assets_dir};

/// Every keyboard shortcut, for menus and the Help window: (keys, what).
pub const SHORTCUTS: &[(&str, &str)] = &[
    ("Ctrl+N", "New map"),
    ("Ctrl+O", "Open project…"),
    ("Ctrl+S", "Save"),
    ("Ctrl+Shift+S", "Save as…"),
    ("Ctrl+E", "Export PMF…"),
    ("Ctrl+Z", "Undo"),
    ("Ctrl+Shift+Z / Ctrl+Y", "Redo"),
    ("1 – 9", "Pick a tool (toolbar order)"),
    ("Delete", "Delete the selected light, entity or region"),
    ("F", "Frame the selected light, entity or region"),
    ("Drag & drop", "Library material or PNG/PTF file onto a face: paint it (Shift: the cube)"),
    ("[ / ]", "Smaller / bigger cube (viewport)"),
    ("Right mouse + WASD", "Fly the camera (viewport)"),
    ("Ctrl+1 – 5", "Lit / fullbright / wireframe / lightmap / visibility view (viewport)"),
    ("Ctrl+Alt+1 – 9", "Store the camera in bookmark 1–9 (viewport)"),
    ("Alt+1 – 9", "Jump to camera bookmark 1–9 (viewport)"),
    ("F1", "This list"),
];

/// Something waiting for the user to decide about unsaved changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pending {
    New,
    Open(PathBuf),
    Quit,
}

/// The editor application.
pub struct App {
    pub state: EditorState,
    /// Commands queued this frame.
    pub commands: Vec<Command>,
    /// The 3D view (without a GL context it draws a note instead).
    pub viewport: Viewport,
    /// Side panels and their UI state.
    pub panels: Panels,
    /// Material thumbnails, refreshed by the asset watcher.
    pub thumbs: Thumbnails,
    pub recent: RecentFiles,
    /// The open file prompt, if any.
    pub prompt: Option<FilePrompt>,
    /// An action waiting on the unsaved-changes question.
    pub pending: Option<Pending>,
    /// A project whose recovery snapshot is newer than its last save.
    pub recovery: Option<(PathBuf, RecoveryInfo)>,
    pub show_shortcuts: bool,
    pub dark: bool,
    /// The `--walkthrough` session, if one runs.
    pub walkthrough: Option<crate::walkthrough::Walkthrough>,
    /// Where the 3D view was drawn last frame (points).
    pub viewport_rect: Option<egui::Rect>,
    /// The import running on a worker thread, if any.
    pub import: Option<ImportJob>,
    /// What runs an import ([`crate::files::import`]; tests put in one that waits for them).
    pub importer: Arc<ImportFn>,
    dialogs: Dialogs,
    allow_close: bool,
    close_now: bool,
    project_dir: Option<PathBuf>,
}

impl App {
    /// The app for `map` (opened from `project`, if any). `cc.gl` is `None` under egui_kittest:
    /// the 3D view is then left out.
    pub fn new(cc: &eframe::CreationContext<'_>, map: Map, project: Option<Project>) -> Self {
        let ctx = cc.egui_ctx.clone();
        let wake: Arc<dyn Fn() + Send + Sync> = Arc::new(move || ctx.request_repaint());
        let mut viewport = Viewport::new(cc.gl.clone());
        let project_dir = project.as_ref().map(|p| p.dir().to_owned());
        let thumbs = Thumbnails::new(project_dir.as_deref(), assets_dir(), wake.clone());
        let mut warnings = Vec::new();
        if let Some(text) = cc.storage.and_then(|s| s.get_string(crate::viewport::bookmarks::STORAGE_KEY)) {
            warnings.extend(viewport.bookmarks.load_unsaved(&text));
        }
        warnings.extend(viewport.bookmarks.set_project(project_dir.as_deref()));
        let recent = RecentFiles::load(cc.storage);
        let dark = cc.storage.and_then(|s| s.get_string("pmfedit.theme")).is_none_or(|t| t != "light");
        cc.egui_ctx.set_theme(if dark { egui::Theme::Dark } else { egui::Theme::Light });
        let mut panels = Panels::default();
        if let Some(s) = cc.storage.and_then(|s| s.get_string("pmfedit.panels")) {
            panels.show_left = !s.contains("-left");
            panels.show_right = !s.contains("-right");
        }
        let mut state = EditorState::new(map, project, wake);
        for w in warnings {
            state.say(w);
        }
        Self {
            state,
            commands: Vec::new(),
            viewport,
            panels,
            thumbs,
            recent,
            prompt: None,
            pending: None,
            recovery: None,
            show_shortcuts: false,
            dark,
            walkthrough: crate::walkthrough::Walkthrough::from_cli(),
            viewport_rect: None,
            import: None,
            importer: Arc::new(crate::files::import),
            dialogs: Dialogs::default(),
            allow_close: false,
            close_now: false,
            project_dir,
        }
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
        let mut open_prompt = None;
        let mut new = false;
        ctx.input_mut(|i| {
            if i.consume_shortcut(&cmd(ctrl_shift, Key::Z)) || i.consume_shortcut(&cmd(ctrl, Key::Y)) {
                self.commands.push(Command::Redo);
            }
            if i.consume_shortcut(&cmd(ctrl, Key::Z)) {
                self.commands.push(Command::Undo);
            }
            if i.consume_shortcut(&cmd(ctrl_shift, Key::S)) {
                open_prompt = Some(FileAction::SaveAs);
            }
            if i.consume_shortcut(&cmd(ctrl, Key::S)) {
                self.commands.push(Command::Save);
            }
            if i.consume_shortcut(&cmd(ctrl, Key::O)) {
                open_prompt = Some(FileAction::Open);
            }
            if i.consume_shortcut(&cmd(ctrl, Key::E)) {
                open_prompt = Some(FileAction::Export);
            }
            if i.consume_shortcut(&cmd(ctrl, Key::N)) {
                new = true;
            }
            if i.key_pressed(Key::F1) {
                self.show_shortcuts = !self.show_shortcuts;
            }
        });
        if let Some(a) = open_prompt {
            self.open_prompt(a);
        }
        if new {
            self.request(Pending::New);
        }
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
                if i.modifiers.is_none() {
                    if i.key_pressed(Key::Delete) {
                        self.delete_selected_object();
                    }
                    if i.key_pressed(Key::F) {
                        self.frame_selected_object();
                    }
                }
            });
        }
    }

    /// The selected light, entity or region, as an object reference and its position.
    fn selected_object(&self) -> Option<(usize, pmfedit_core::edit::ObjRef, Option<glam::Vec3>)> {
        use pmfedit_core::edit::ObjRef;
        let (level, id) = match self.state.selection {
            Selection::Light { level, id } => (level, ObjRef::Light(id)),
            Selection::Entity { level, id } => (level, ObjRef::Entity(id)),
            Selection::Region { level, id } => (level, ObjRef::Region(id)),
            Selection::LoadRegion { level, id } => (level, ObjRef::LoadRegion(id)),
            _ => return None,
        };
        let objects = &self.state.map.levels.get(level)?.objects;
        let pos = match id {
            ObjRef::Light(i) => objects.lights().get(i).map(|l| l.position),
            ObjRef::Entity(i) => objects.entities().get(i).and_then(|e| e.position()),
            ObjRef::Region(i) => objects.regions().get(i).map(|r| {
                let (a, b) = r.bounds();
                (a + b) * 0.5
            }),
            ObjRef::LoadRegion(i) => objects.load_regions().get(i).map(|r| (r.min + r.max) * 0.5),
        };
        Some((level, id, pos))
    }

    fn delete_selected_object(&mut self) {
        if let Some((level, id, _)) = self.selected_object() {
            self.commands.push(Command::Edit(Edit::RemoveObject { level, id }));
            self.commands.push(Command::Select(Selection::None));
        }
    }

    fn frame_selected_object(&mut self) {
        if let Some((_, _, Some(p))) = self.selected_object() {
            self.commands.push(Command::Frame { target: p.as_dvec3(), distance: 12.0 });
        }
    }

    fn open_prompt(&mut self, action: FileAction) {
        let start = match action {
            FileAction::Export => self.project_dir.as_ref().map(|d| d.join("map.pmf")),
            _ => self.project_dir.clone().or_else(|| self.recent.paths.first().cloned()),
        };
        self.prompt = Some(FilePrompt::new(action, start.as_deref()));
    }

    /// New / Open / Quit: asks first when there are unsaved changes.
    pub fn request(&mut self, action: Pending) {
        if self.state.is_dirty() {
            self.pending = Some(action);
        } else {
            self.carry_out(action);
        }
    }

    fn carry_out(&mut self, action: Pending) {
        match action {
            Pending::New => {
                self.state.load_document(crate::files::new_map_with_pack("untitled"), None);
                self.state.say("New map with the default asset pack");
            }
            Pending::Open(path) => self.open(&path),
            Pending::Quit => {
                self.allow_close = true;
                self.close_now = true;
            }
        }
    }

    /// Opens a project, offering its recovery snapshot first when it is newer.
    pub fn open(&mut self, dir: &Path) {
        if let Some(info) = Project::recovery_available(dir)
            && info.newer_than_manifest
        {
            self.recovery = Some((dir.to_owned(), info));
            return;
        }
        self.open_now(dir, false);
    }

    fn open_now(&mut self, dir: &Path, recovered: bool) {
        let opened = if recovered { Project::open_recovery(dir) } else { Project::open(dir) }
            .and_then(|(p, m)| self.state.claim(&p).map(|()| (p, m)));
        match opened {
            Ok((project, map)) => {
                self.state.load_document(map, Some(project));
                if recovered {
                    self.state.history.clear_saved();
                    self.state.say(format!("Recovered unsaved edits of {} — save to keep them", dir.display()));
                } else {
                    self.state.say(format!("Opened {}", dir.display()));
                }
                self.recent.push(dir.to_owned());
            }
            Err(e) => self.state.say(format!("Could not open {}: {e}", dir.display())),
        }
    }

    fn prompt_confirmed(&mut self, ctx: &egui::Context, action: FileAction, path: PathBuf) {
        match action {
            FileAction::Open => self.request(Pending::Open(path)),
            FileAction::SaveAs => {
                self.commands.push(Command::SaveAs(path.clone()));
                self.recent.push(path);
            }
            FileAction::Export => self.commands.push(Command::Export(path)),
            FileAction::ImportM3d | FileAction::ImportVoxelPlay => {
                let request = ImportRequest { action, path, level: self.state.level, cube_log2: self.state.cube_log2 };
                self.start_import(ctx, request);
            }
        }
    }

    /// Starts an import on a worker thread, on a snapshot of the map; refused while another
    /// one runs.
    pub fn start_import(&mut self, ctx: &egui::Context, request: ImportRequest) {
        if let Some(running) = &self.import {
            self.state.say(format!(
                "Import of {} refused: {} is still importing (cancel it or wait)",
                request.file_name(),
                running.request.file_name()
            ));
            return;
        }
        let generation = self.state.generation();
        self.import =
            Some(ImportJob::start(ctx, self.state.map.snapshot(), request, generation, self.importer.clone()));
    }

    /// Cancels the running import: its result is dropped.
    pub fn cancel_import(&mut self) {
        if let Some(job) = self.import.take() {
            self.state.say(format!("Import of {} cancelled", job.request.file_name()));
        }
    }

    /// Takes a finished import: one undo step "Import NAME" if the map is as it was when the
    /// import started, else refused. Waits while a drag's stroke is open (the import would
    /// merge into the drag's undo step).
    fn poll_import(&mut self) {
        if self.state.history.current_stroke().is_some() {
            return;
        }
        let Some(result) = self.import.as_ref().and_then(ImportJob::poll) else { return };
        let Some(job) = self.import.take() else { return };
        let file = job.request.file_name();
        match result {
            Ok(_) if self.state.generation() != job.generation => {
                self.state.say(format!("The map changed while importing {file}; import again"));
            }
            Ok((map, summary)) => {
                let replace = Edit::ReplaceMap { map: WholeMap(Box::new(map)), name: format!("Import {file}") };
                self.state.apply(Command::Edit(replace));
                // A refused edit leaves the generation (and its message) as it was.
                if self.state.generation() != job.generation {
                    self.state.say(format!("Imported {} ({summary})", job.request.path.display()));
                }
            }
            Err(e) => self.state.say(format!("Import failed: {e}")),
        }
    }

    /// The running import in the status bar: spinner, file, phase and "Cancel import".
    fn import_status(&mut self, ui: &mut egui::Ui) {
        let Some(job) = &self.import else { return };
        ui.spinner();
        ui.label(format!("Importing {}… ({})", job.request.file_name(), job.phase().label()));
        if ui.button("Cancel import").clicked() {
            self.cancel_import();
        }
        ui.separator();
    }

    fn menus(&mut self, ui: &mut egui::Ui) {
        egui::MenuBar::new().ui(ui, |ui| {
            ui.menu_button("File", |ui| {
                if ui.button("New\tCtrl+N").clicked() {
                    self.request(Pending::New);
                }
                if ui.button("Open…\tCtrl+O").clicked() {
                    self.open_prompt(FileAction::Open);
                }
                ui.menu_button("Open recent", |ui| {
                    if self.recent.paths.is_empty() {
                        ui.weak("(none)");
                    }
                    for p in self.recent.paths.clone() {
                        if ui.button(p.display().to_string()).clicked() {
                            self.request(Pending::Open(p));
                        }
                    }
                });
                ui.separator();
                if ui.button("Save\tCtrl+S").clicked() {
                    self.commands.push(Command::Save);
                }
                if ui.button("Save As…\tCtrl+Shift+S").clicked() {
                    self.open_prompt(FileAction::SaveAs);
                }
                if ui.button("Export PMF…\tCtrl+E").clicked() {
                    self.open_prompt(FileAction::Export);
                }
                ui.menu_button("Import", |ui| {
                    if ui.button("Model 3D (.m3d)…").clicked() {
                        self.open_prompt(FileAction::ImportM3d);
                    }
                    if ui.button("Voxel Play world…").clicked() {
                        self.open_prompt(FileAction::ImportVoxelPlay);
                    }
                });
                ui.separator();
                if ui.button("Quit").clicked() {
                    self.request(Pending::Quit);
                }
            });
            ui.menu_button("Edit", |ui| {
                let h = &self.state.history;
                let undo = h.undo_name().map_or_else(|| "Undo".to_owned(), |n| format!("Undo {n}"));
                let redo = h.redo_name().map_or_else(|| "Redo".to_owned(), |n| format!("Redo {n}"));
                if ui.add_enabled(h.can_undo(), egui::Button::new(undo).shortcut_text("Ctrl+Z")).clicked() {
                    self.commands.push(Command::Undo);
                }
                if ui.add_enabled(h.can_redo(), egui::Button::new(redo).shortcut_text("Ctrl+Shift+Z")).clicked() {
                    self.commands.push(Command::Redo);
                }
                ui.separator();
                let has_object = self.selected_object().is_some();
                if ui.add_enabled(has_object, egui::Button::new("Delete object").shortcut_text("Delete")).clicked() {
                    self.delete_selected_object();
                }
                if ui.add_enabled(has_object, egui::Button::new("Frame object").shortcut_text("F")).clicked() {
                    self.frame_selected_object();
                }
            });
            ui.menu_button("View", |ui| {
                if ui.radio(self.dark, "Dark theme").clicked() {
                    self.dark = true;
                    ui.ctx().set_theme(egui::Theme::Dark);
                }
                if ui.radio(!self.dark, "Light theme").clicked() {
                    self.dark = false;
                    ui.ctx().set_theme(egui::Theme::Light);
                }
                ui.separator();
                ui.checkbox(&mut self.panels.show_left, "Left panel (outliner, history, bake)");
                ui.checkbox(&mut self.panels.show_right, "Right panel (library, settings, inspector)");
                ui.separator();
                for (i, s) in Shading::ALL.into_iter().enumerate() {
                    if ui.radio(self.viewport.shading == s, format!("{}\tCtrl+{}", s.label(), i + 1)).clicked() {
                        self.viewport.shading = s;
                    }
                }
                ui.separator();
                ui.checkbox(&mut self.viewport.textured, "Textures");
                ui.checkbox(&mut self.viewport.edges, "Face edges")
                    .on_hover_text("Outline every face in the lit and fullbright views");
                ui.horizontal(|ui| {
                    ui.label("View distance");
                    ui.add(
                        egui::DragValue::new(&mut self.viewport.view_distance)
                            .range(0.0..=100_000.0)
                            .speed(8.0)
                            .suffix(" u")
                            .custom_formatter(|v, _| if v <= 0.0 { "∞".to_owned() } else { format!("{v:.0}") }),
                    )
                    .on_hover_text(
                        "Chunks farther than this from the camera are not drawn (∞: no limit). \
                         Big maps draw faster with a limit",
                    );
                });
                ui.menu_button("Bookmarks", |ui| {
                    self.viewport.bookmarks_menu(ui, &self.state, &mut self.commands);
                });
            });
            ui.menu_button("Help", |ui| {
                if ui.button("Shortcuts\tF1").clicked() {
                    self.show_shortcuts = true;
                }
            });
        });
    }

    fn windows(&mut self, ctx: &egui::Context) {
        for (action, path) in self.dialogs.drain() {
            if let Some(p) = &mut self.prompt {
                p.answer(action, path);
            }
        }
        if let Some(prompt) = &mut self.prompt {
            let action = prompt.action;
            match prompt.show(ctx, &self.dialogs) {
                PromptResult::Pending => {}
                PromptResult::Cancel => self.prompt = None,
                PromptResult::Confirm(path) => {
                    self.prompt = None;
                    self.prompt_confirmed(ctx, action, path);
                }
            }
        }
        if let Some(pending) = self.pending.clone() {
            let what = match &pending {
                Pending::New => "starting a new map".to_owned(),
                Pending::Open(p) => format!("opening {}", p.display()),
                Pending::Quit => "quitting".to_owned(),
            };
            let mut choice = None;
            egui::Modal::new(egui::Id::unique("pmfedit.unsaved")).show(ctx, |ui| {
                ui.heading("Unsaved changes");
                ui.label(format!("Save the changes to “{}” before {what}?", self.state.map.meta.name));
                ui.horizontal(|ui| {
                    if ui.button("Save").clicked() {
                        choice = Some("save");
                    }
                    if ui.button("Discard").clicked() {
                        choice = Some("discard");
                    }
                    if ui.button("Cancel").clicked() {
                        choice = Some("cancel");
                    }
                });
            });
            match choice {
                Some("save") => {
                    self.pending = None;
                    if self.state.project.is_some() {
                        self.state.apply(Command::Save);
                        if !self.state.is_dirty() {
                            self.carry_out(pending);
                        }
                    } else {
                        self.open_prompt(FileAction::SaveAs);
                    }
                }
                Some("discard") => {
                    self.pending = None;
                    self.carry_out(pending);
                }
                Some(_) => self.pending = None,
                None => {}
            }
        }
        if let Some((dir, info)) = self.recovery.clone() {
            let mut choice = None;
            egui::Modal::new(egui::Id::unique("pmfedit.recovery")).show(ctx, |ui| {
                ui.heading("Recover unsaved edits?");
                let age = info.saved_at.elapsed().map_or_else(|_| "just now".to_owned(), |d| fmt_age(d.as_secs()));
                ui.label(format!(
                    "{} has a recovery snapshot from {age} with edits that were never saved.",
                    dir.display()
                ));
                if !info.based_on_current_manifest {
                    ui.colored_label(
                        ui.visuals().warn_fg_color,
                        "map.ron changed since the snapshot was taken (e.g. a version-control update).",
                    );
                }
                ui.horizontal(|ui| {
                    if ui.button("Recover").clicked() {
                        choice = Some(true);
                    }
                    if ui.button("Discard").clicked() {
                        choice = Some(false);
                    }
                });
            });
            match choice {
                Some(true) => {
                    self.recovery = None;
                    self.open_now(&dir, true);
                }
                Some(false) => {
                    self.recovery = None;
                    if let Err(e) = Project::discard_recovery(&dir) {
                        self.state.say(format!("Could not discard the recovery snapshot: {e}"));
                    }
                    self.open_now(&dir, false);
                }
                _ => {}
            }
        }
        let mut open = self.show_shortcuts;
        egui::Window::new("Shortcuts").open(&mut open).resizable(false).show(ctx, |ui| {
            egui::Grid::new("shortcut_grid").num_columns(2).striped(true).show(ui, |ui| {
                for (keys, what) in SHORTCUTS {
                    ui.strong(*keys);
                    ui.label(*what);
                    ui.end_row();
                }
            });
        });
        self.show_shortcuts = open;
    }

    /// Takes Save without a project as Save As.
    fn route_commands(&mut self) {
        if self.state.project.is_none() && self.commands.iter().any(|c| matches!(c, Command::Save)) {
            self.commands.retain(|c| !matches!(c, Command::Save));
            self.open_prompt(FileAction::SaveAs);
        }
    }
}

/// "5 minutes ago".
fn fmt_age(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs} seconds ago"),
        60..7200 => format!("{} minutes ago", secs / 60),
        7200..172_800 => format!("{} hours ago", secs / 3600),
        _ => format!("{} days ago", secs / 86_400),
    }
}

impl eframe::App for App {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        let started = std::time::Instant::now();
        let ctx = ui.ctx().clone();
        self.state.poll_bakes();
        self.poll_import();
        let (_, asset_events) = self.thumbs.poll_events();
        self.viewport.textures.set_roots(self.thumbs.roots());
        self.viewport.textures.on_events(&asset_events);
        self.shortcuts(&ctx);
        ctx.send_viewport_cmd(egui::ViewportCommand::Title(self.title()));
        // Scripted runs (--screenshot, --bench-frames) close without asking about their edits.
        let scripted = self.viewport.script.is_some();
        if ctx.input(|i| i.viewport().close_requested()) && self.state.is_dirty() && !self.allow_close && !scripted {
            ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose);
            self.pending = Some(Pending::Quit);
        }

        egui::Panel::top("menu").show(ui, |ui| self.menus(ui));
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
                self.import_status(ui);
                let n = self.state.baking();
                let m = self.state.finishing();
                let drafts = self.state.bake.drafts.len();
                if n > 0 {
                    let total = (self.state.bake.bakes.len() + n).max(1);
                    ui.add(egui::ProgressBar::new(1.0 - n as f32 / total as f32).desired_width(120.0));
                    ui.label(format!("baking {n} chunks, finishing visibility for {m}"));
                } else if drafts > 0 {
                    ui.label(format!("refining the lighting of {drafts} edited chunks, finishing visibility for {m}"));
                } else if m > 0 {
                    ui.label(format!("finishing visibility for {m} chunks"));
                } else {
                    ui.label("baked");
                }
                if !self.state.bake.errors.is_empty() {
                    ui.separator();
                    ui.colored_label(
                        ui.visuals().error_fg_color,
                        format!("{} bake errors", self.state.bake.errors.len()),
                    );
                }
                if self.viewport.shading == Shading::Visibility {
                    ui.separator();
                    ui.label(self.viewport.vis_status());
                }
                if let Some((msg, _)) = &self.state.status {
                    ui.separator();
                    ui.label(msg);
                }
            });
        });
        self.panels.show(ui, &self.state, &mut self.commands, &mut self.thumbs);
        let central = egui::CentralPanel::default().frame(egui::Frame::NONE).show(ui, |ui| {
            let commands = self.viewport.ui(ui, &mut self.state);
            self.commands.extend(commands);
        });
        self.viewport_rect = Some(central.response.rect);
        self.windows(&ctx);
        if let Some(mut w) = self.walkthrough.take() {
            w.step(self, &ctx);
            if w.is_finished() && w.close_when_done {
                w.close_when_done = false;
                crate::walkthrough::report(&w);
                self.allow_close = true;
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            }
            self.walkthrough = Some(w);
        }

        self.route_commands();
        let commands = std::mem::take(&mut self.commands);
        self.state.apply_all(commands);
        self.state.autosave();
        let dir = self.state.project.as_ref().map(|p| p.dir().to_owned());
        if dir != self.project_dir {
            self.thumbs.set_roots(dir.as_deref(), assets_dir());
            if let Some(w) = self.viewport.bookmarks.set_project(dir.as_deref()) {
                self.state.say(w);
            }
            self.project_dir = dir;
        }
        if self.allow_close && self.pending.is_none() && self.close_now {
            self.close_now = false;
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        }
        self.viewport.last_app_seconds = started.elapsed().as_secs_f64();
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        self.recent.save(storage);
        storage.set_string("pmfedit.theme", if self.dark { "dark" } else { "light" }.to_owned());
        let mut panels = String::new();
        if !self.panels.show_left {
            panels.push_str("-left");
        }
        if !self.panels.show_right {
            panels.push_str("-right");
        }
        storage.set_string("pmfedit.panels", panels);
        storage.set_string(crate::viewport::bookmarks::STORAGE_KEY, self.viewport.bookmarks.unsaved_text());
    }
}
