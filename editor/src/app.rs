//! The eframe application: menus, toolbar, status bar, side panels and the viewport around one
//! [`EditorState`]. Each frame: take finished bakes and asset changes, draw, then apply the
//! commands the UI queued.
//!
//! Menus, toolbar, keys and the F1 list come from the command table ([`crate::ui_command`]):
//! whatever runs an entry (its menu item, its key, its toolbar button) goes through
//! [`App::run`]. The app owns one of each tool ([`crate::tools::Tool`]) and hands the current
//! one to the viewport; a tool's own keys go to it while it is current.
//!
//! Each user action on files has one implementation here: [`App::request`] (New, Open — from the
//! menu, the shortcut, the recent files or a driver — and Quit: the unsaved-changes question,
//! then the recovery offer, the load and the recent files), [`App::save`] and [`App::save_as`],
//! and the drop of texture files on the viewport (planned by [`crate::dnd`], applied here as one
//! undo step).
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
//!
//! Scripted runs (screenshots, benchmarks, the walkthrough) drive the app through a [`Driver`]
//! given to [`App::set_driver`]; the app knows nothing about any of them.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use eframe::egui;

use pmfedit_bake::jobs::Threads;
use pmfedit_core::edit::{ChangeSet, Edit, WholeMap};
use pmfedit_core::project::{Project, RecoveryInfo, SaveReport};

use crate::command::{Command, ToolId};
use crate::dnd::{self, FileDrop, TexturePaint};
use crate::files::{
    Dialogs, FileAction, FilePrompt, ImportFn, ImportJob, ImportPlacement, ImportRequest, PromptResult, RecentFiles,
};
use crate::launch::{Document, Launch};
use crate::pace::Pace;
use crate::panels::Panels;
use crate::selection::Selection;
use crate::shading::Shading;
use crate::state::{EditorState, SaveError};
use crate::tools::{self, Tool};
use crate::ui_command::{self, Action, Entry, Menu, Scope};
use crate::viewport::Viewport;
use crate::watch::Thumbnails;

/// What a [`Driver`] says after a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DriverStatus {
    /// Call it again next frame.
    Running,
    /// Done: the app drops it.
    Finished,
}

/// A scripted run: something other than a person working the app, frame by frame, through its
/// public fields and methods (the commands it queues apply with the UI's). It closes the window
/// itself when it should ([`App::close_without_asking`]).
pub trait Driver {
    /// Sees (and may change) the frame's input before the UI does; e.g. a screenshot run drops
    /// the pointer so that no hover shows.
    fn input(&mut self, _raw: &mut egui::RawInput) {}

    /// One frame: called after the panels and the viewport queued their commands, before the
    /// commands are applied.
    fn frame(&mut self, app: &mut App, ctx: &egui::Context) -> DriverStatus;
}

/// A driver shared with whoever started it, who reads its result after the run.
impl<D: Driver> Driver for Rc<RefCell<D>> {
    fn input(&mut self, raw: &mut egui::RawInput) {
        self.borrow_mut().input(raw);
    }

    fn frame(&mut self, app: &mut App, ctx: &egui::Context) -> DriverStatus {
        self.borrow_mut().frame(app, ctx)
    }
}

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
    /// Where the 3D view was drawn last frame (points).
    pub viewport_rect: Option<egui::Rect>,
    /// CPU time of the last whole UI pass (panels, viewport, commands; not egui's tessellation
    /// or the GL drawing), seconds.
    pub ui_pass_seconds: f64,
    /// How soon background repaints (bakes arriving, uploads, thumbnails) come.
    pace: Arc<Pace>,
    /// When the last input event came.
    last_input: Option<std::time::Instant>,
    /// The window title last sent.
    title_sent: String,
    /// The import running on a worker thread, if any.
    pub import: Option<ImportJob>,
    /// One of each tool of the command table, in toolbar order.
    tools: Vec<Box<dyn Tool>>,
    /// The tool that had the pointer last frame (a drag it holds is cancelled when another
    /// one becomes current).
    active_tool: ToolId,
    /// What runs an import ([`crate::files::import`]; tests put in one that waits for them).
    pub importer: Arc<ImportFn>,
    /// Native file dialogs (tests substitute [`Dialogs::with`]).
    pub dialogs: Dialogs,
    allow_close: bool,
    close_now: bool,
    project_dir: Option<PathBuf>,
    /// The shared asset folder (from the [`Launch`]).
    assets: Option<PathBuf>,
    /// The scripted run, if any.
    driver: Option<Box<dyn Driver>>,
}

impl App {
    /// The app on `document` (what `launch.source` opened), set up as `launch` asks (shading,
    /// view distance, asset folder). `cc.gl` is `None` under egui_kittest: the 3D view is then
    /// left out. A scripted run's driver is given with [`App::set_driver`].
    pub fn new(cc: &eframe::CreationContext<'_>, launch: &Launch, document: Document) -> Self {
        let ctx = cc.egui_ctx.clone();
        let pace = Pace::new();
        let paced = pace.clone();
        let wake: Arc<dyn Fn() + Send + Sync> = Arc::new(move || ctx.request_repaint_after(paced.delay()));
        let mut viewport = Viewport::with_gl(cc.gl.clone(), cc.get_proc_address.as_deref());
        viewport.shading = launch.shading.unwrap_or_default();
        if let Some(d) = launch.view_distance {
            viewport.view_distance = d;
        }
        let Document { map, project, start_view } = document;
        let project_dir = project.as_ref().map(|p| p.dir().to_owned());
        let thumbs = Thumbnails::new(project_dir.as_deref(), launch.assets.clone(), wake.clone());
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
        state.start_view = start_view;
        state.asset_roots = launch.assets.iter().cloned().collect();
        for w in warnings {
            state.say(w);
        }
        let tools: Vec<Box<dyn Tool>> = ui_command::tools().map(|t| (t.make)()).collect();
        if let Some(first) = tools.first() {
            state.tool = first.info().id;
        }
        let active_tool = state.tool;
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
            viewport_rect: None,
            ui_pass_seconds: 0.0,
            pace,
            last_input: None,
            title_sent: String::new(),
            import: None,
            tools,
            active_tool,
            importer: Arc::new(crate::files::import),
            dialogs: Dialogs::default(),
            allow_close: false,
            close_now: false,
            project_dir,
            assets: launch.assets.clone(),
            driver: None,
        }
    }

    /// Runs `driver` from the next frame on (replacing any other).
    pub fn set_driver(&mut self, driver: Box<dyn Driver>) {
        self.driver = Some(driver);
    }

    /// Closes the window without asking about unsaved changes (a driver's run is over).
    pub fn close_without_asking(&mut self, ctx: &egui::Context) {
        self.allow_close = true;
        ctx.send_viewport_cmd(egui::ViewportCommand::Close);
    }

    fn title(&self) -> String {
        let dirty = if self.state.is_dirty() { " •" } else { "" };
        format!(
            "{}{dirty} — pmfedit",
            if self.state.map.meta.name.is_empty() { "untitled" } else { &self.state.map.meta.name }
        )
    }

    /// The current tool.
    pub fn tool(&self) -> Option<&dyn Tool> {
        self.tools.iter().find(|t| t.info().id == self.state.tool).map(|t| t.as_ref())
    }

    /// Runs one entry of the command table, whatever asked (key, menu item, toolbar button);
    /// `digit` is the 1–9 of a digit-key entry.
    pub fn run(&mut self, action: Action, digit: Option<u8>) {
        match action {
            Action::New => self.request(Pending::New),
            Action::Open => self.open_prompt(FileAction::Open),
            Action::Save => {
                self.save();
            }
            Action::SaveAs => self.open_prompt(FileAction::SaveAs),
            Action::Export => self.open_prompt(FileAction::Export),
            Action::ImportM3d => self.open_prompt(FileAction::ImportM3d),
            Action::ImportVoxelPlay => self.open_prompt(FileAction::ImportVoxelPlay),
            Action::Quit => self.request(Pending::Quit),
            Action::Undo => self.commands.push(Command::Undo),
            Action::Redo => self.commands.push(Command::Redo),
            Action::Delete => self.delete_selection(),
            Action::Frame => self.viewport.frame_selection(&self.state),
            Action::Clip => self.toggle_clip(),
            Action::Hide => self.toggle_filter(false),
            Action::Isolate => self.toggle_filter(true),
            Action::PaintSelection => self.commands.extend(tools::paint::paint_selection(&self.state)),
            Action::Cancel => {
                let id = self.state.tool;
                let tool = self.tools.iter_mut().find(|t| t.info().id == id).map(|t| t.as_mut() as &mut dyn Tool);
                let out = self.viewport.cancel_drag(&self.state, tool);
                self.commands.extend(out);
            }
            Action::CubeSmaller if self.state.cube_log2 > 0 => {
                self.commands.push(Command::SetCubeSize(self.state.cube_log2 - 1));
            }
            Action::CubeBigger => {
                let max = self.state.map.levels.get(self.state.level).map_or(18, |l| l.frame().chunk_lattice_log2());
                if self.state.cube_log2 < max {
                    self.commands.push(Command::SetCubeSize(self.state.cube_log2 + 1));
                }
            }
            Action::Shading(s) => self.viewport.shading = s,
            Action::View(v) => self.viewport.set_view(v),
            Action::WorkPlaneUp | Action::WorkPlaneDown => {
                // Up is towards the camera in the front and side views (they look along +axis).
                let towards_camera = if self.viewport.camera.ortho.is_some_and(|v| v.axis() != 1) { -1 } else { 1 };
                let steps = if action == Action::WorkPlaneUp { towards_camera } else { -towards_camera };
                let c = self.viewport.move_work_plane(&self.state, steps);
                self.commands.push(c);
            }
            Action::StoreBookmark => {
                if let Some(slot) = digit {
                    let c = self.viewport.store_bookmark(slot, &self.state);
                    self.commands.push(c);
                }
            }
            Action::RecallBookmark => {
                if let Some(slot) = digit {
                    self.viewport.recall_bookmark(slot, &self.state, &mut self.commands);
                }
            }
            Action::Shortcuts => self.show_shortcuts = !self.show_shortcuts,
            Action::Tool(id) => self.commands.push(Command::SetTool(id)),
            Action::CubeSmaller | Action::OpenRecent | Action::Gesture => {}
        }
    }

    /// The keys of [`Scope::Always`] entries pressed this frame: taken out of the input before
    /// any widget sees them (a focused text field does not undo its text on Ctrl+Z), then run.
    fn always_keys(&mut self, ctx: &egui::Context) {
        let mut hits = Vec::new();
        ctx.input_mut(|i| {
            i.events.retain(|e| {
                let hit = ui_command::pressed_keys(std::slice::from_ref(e))
                    .first()
                    .and_then(|p| ui_command::find(&p.shortcut, Scope::Always));
                hits.extend(hit);
                hit.is_none()
            });
        });
        for (e, digit) in hits {
            self.run(e.action, digit);
        }
    }

    /// The keys of [`Scope::View`] entries and of the current tool pressed this frame, unless a
    /// text field has the keyboard. Runs after the viewport, so a tool key (Ctrl+V) sees the
    /// face under the pointer now; tool keys wait while the camera flies (right button down).
    fn view_keys(&mut self, ctx: &egui::Context) {
        if ctx.egui_wants_keyboard_input() {
            return;
        }
        let (pressed, flying) = ctx.input(|i| (ui_command::pressed_keys(&i.events), i.pointer.secondary_down()));
        for p in pressed {
            if let Some((e, digit)) = ui_command::find(&p.shortcut, Scope::View) {
                // A held digit repeats: store or jump once.
                if !(p.repeat && digit.is_some()) {
                    self.run(e.action, digit);
                }
                continue;
            }
            if flying {
                continue;
            }
            let id = self.state.tool;
            let Some(tool) = self.tools.iter_mut().find(|t| t.info().id == id) else { continue };
            if let Some(key) = ui_command::tool_key(tool.info(), &p.shortcut) {
                let out = tool.key(key, &self.state, self.viewport.pointer(), ctx);
                self.commands.extend(out);
            }
        }
    }

    /// Another tool became current: the previous one drops its drag (as with Esc).
    fn switch_tools(&mut self) {
        if self.state.tool == self.active_tool {
            return;
        }
        let previous = self.active_tool;
        self.active_tool = self.state.tool;
        if let Some(t) = self.tools.iter_mut().find(|t| t.info().id == previous) {
            let out = t.cancel(&self.state);
            self.commands.extend(out);
        }
    }

    /// C: the clip plane at the bottom of the hovered cube (the view's focus without one), or
    /// off again.
    fn toggle_clip(&mut self) {
        if self.viewport.clip.take().is_some() {
            self.state.say("Clip off: every cube shows");
            return;
        }
        let level = self.state.map.levels.get(self.state.level);
        let y = match (self.viewport.hovered(), level) {
            (Some(p), Some(l)) => l.frame().world_from_lattice(p.addr.min).y,
            _ => self.viewport.camera.pivot().y,
        };
        self.viewport.clip = Some(y);
        self.state.say(format!("Clipped above {y} m (C: show everything)"));
    }

    /// H / I: hides the selection (a box of cubes, or lights, entities and regions), or shows
    /// only it; either again shows everything. Isolating objects hides every other object and
    /// leaves the cubes shown (the rooms around them stay); hidden objects are deselected.
    fn toggle_filter(&mut self, isolate: bool) {
        let had_cubes = self.viewport.filter.take().is_some();
        let had_objects = self.viewport.object_filter.take().is_some();
        if had_cubes || had_objects {
            self.state.say("Showing everything");
            return;
        }
        let key = if isolate { "I" } else { "H" };
        if let Some((level, objects)) = self.state.selection.objects() {
            let n = tools::select::objects_text(objects.len());
            let what = if isolate { format!("Isolated {n}, every other object hidden") } else { format!("Hidden {n}") };
            if !isolate {
                self.commands.push(Command::Select(Selection::None));
            }
            self.viewport.object_filter = Some(crate::viewport::ObjectFilter { level, objects, isolate });
            self.state.say(format!("{what} ({key}: show everything)"));
            return;
        }
        let Some((level, region)) = tools::select::selected_box(&self.state) else {
            self.state.say("Select a box of cubes or some objects first (Select tool) to hide or isolate them");
            return;
        };
        let Some(frame) = self.state.map.levels.get(level).map(|l| l.frame()) else { return };
        let (min, max) = (frame.world_from_lattice(region.min), frame.world_from_lattice(region.max));
        self.viewport.filter = Some(crate::viewport::ShowFilter { min, max, isolate });
        let what = if isolate { "Showing only the selection" } else { "Selection hidden" };
        self.state.say(format!("{what} ({key}: show everything)"));
    }

    /// Delete: the selected light, entity or region, or the cubes of the selected box (one
    /// undo step).
    fn delete_selection(&mut self) {
        if let Some((level, id)) = self.state.selection.object() {
            self.commands.push(Command::Edit(Edit::RemoveObject { level, id }));
            self.commands.push(Command::Select(Selection::None));
        } else if let Some((level, objects)) = self.state.selection.objects() {
            let name = format!("Delete {}", tools::select::objects_text(objects.len()));
            let edits = objects.into_iter().map(|id| Command::Edit(Edit::RemoveObject { level, id })).collect();
            self.commands.extend(tools::named_stroke(name, edits));
            self.commands.push(Command::Select(Selection::None));
        } else {
            self.commands.extend(tools::select::delete(&self.state));
        }
    }

    fn open_prompt(&mut self, action: FileAction) {
        let start = match action {
            FileAction::Export => self.project_dir.as_ref().map(|d| d.join("map.pmf")),
            _ => self.project_dir.clone().or_else(|| self.recent.paths.first().cloned()),
        };
        // An import lands at the view's focus, on the grid of the current cube size.
        let edge = f64::from(1u32 << self.state.cube_log2) / 8.0;
        let at = (self.viewport.camera.pivot() / edge).round() * edge;
        let placement = ImportPlacement { at, cube_log2: self.state.cube_log2 };
        self.prompt = Some(FilePrompt::new(action, start.as_deref(), placement));
    }

    /// New / Open / Quit, from wherever they are asked for: asks first when there are unsaved
    /// changes, then carries the action out (Open: offers a newer recovery snapshot first).
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
                self.state.load_document(pmfedit_core::sample::empty("untitled"), None);
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
    fn open(&mut self, dir: &Path) {
        if let Some(info) = Project::recovery_available(dir)
            && info.newer_than_manifest
        {
            self.recovery = Some((dir.to_owned(), info));
            return;
        }
        self.open_now(dir, false);
    }

    fn open_now(&mut self, dir: &Path, recovered: bool) {
        // The chunk files are read on every core (most of the time of opening a big map).
        let threads = Threads::all();
        let opened =
            if recovered { Project::open_recovery_with(dir, &threads) } else { Project::open_with(dir, &threads) }
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

    /// Saves into the project; without one, asks for a folder (Save As). `true` when saved.
    pub fn save(&mut self) -> bool {
        if self.state.project.is_none() {
            self.open_prompt(FileAction::SaveAs);
            return false;
        }
        let saved = self.state.save();
        self.report_save(saved)
    }

    /// Saves the map as the project in `dir` (created if needed); it goes into the recent files.
    /// `true` when saved.
    pub fn save_as(&mut self, dir: &Path) -> bool {
        let saved = self.state.save_as(dir);
        let ok = self.report_save(saved);
        if ok {
            self.recent.push(dir.to_owned());
        }
        ok
    }

    /// Says how a save went; `true` when saved.
    fn report_save(&mut self, saved: Result<SaveReport, SaveError>) -> bool {
        match saved {
            Ok(r) => {
                self.state.say(format!("Saved ({} chunk files written)", r.chunk_files_written));
                true
            }
            Err(e) => {
                self.state.say(e.to_string());
                false
            }
        }
    }

    /// Applies `command`, showing a refused edit in the status bar ("Refused: …").
    fn apply_or_say(&mut self, command: Command) -> Option<ChangeSet> {
        match self.state.apply(command) {
            Ok(changes) => Some(changes),
            Err(e) => {
                self.state.say(format!("Refused: {e}"));
                None
            }
        }
    }

    /// Files dropped on the viewport: the first texture is copied into the project and paints
    /// the face under the pointer (adding its material if new) as one undo step; the status bar
    /// says what happened or why not.
    pub fn drop_files(&mut self, drop: &FileDrop) {
        let Some(file) = drop.files.first() else { return };
        let outcome = dnd::plan_texture_drop(&self.state, file, drop.pick.as_ref(), drop.whole_cube).and_then(|plan| {
            self.apply_or_say(Command::BeginStroke);
            let painted = self.paint_dropped(&plan);
            self.apply_or_say(Command::EndStroke);
            painted
        });
        let msg = outcome.unwrap_or_else(|e| e.to_string());
        self.state.say(format!("{msg}{}", drop.note()));
    }

    /// Adds the plan's material if it is new, then paints; the success message.
    fn paint_dropped(&mut self, plan: &TexturePaint) -> Result<String, dnd::DropError> {
        let added = match plan.add_material() {
            Some(add) => Some(self.state.apply(add).map_err(|e| plan.add_refused(e))?),
            None => None,
        };
        let material = plan.material_id(added.as_ref())?;
        for c in plan.paint(&self.state, material) {
            self.state.apply(c).map_err(|e| plan.paint_refused(e))?;
        }
        Ok(plan.message(&self.state, material))
    }

    fn prompt_confirmed(
        &mut self,
        ctx: &egui::Context,
        action: FileAction,
        path: PathBuf,
        placement: Option<ImportPlacement>,
    ) {
        match action {
            FileAction::Open => self.request(Pending::Open(path)),
            FileAction::SaveAs => {
                self.save_as(&path);
            }
            FileAction::Export => self.commands.push(Command::Export(path)),
            FileAction::ImportM3d | FileAction::ImportVoxelPlay => {
                let p = placement.unwrap_or(ImportPlacement { at: glam::DVec3::ZERO, cube_log2: self.state.cube_log2 });
                let request = ImportRequest { action, path, level: self.state.level, cube_log2: p.cube_log2, at: p.at };
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
                if self.apply_or_say(Command::Edit(replace)).is_some() {
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

    /// The export under way, with its progress (it runs on its own thread: the next frames come
    /// to show it move).
    fn export_status(&self, ui: &mut egui::Ui) {
        let Some(job) = self.state.export_job() else { return };
        ui.add(egui::ProgressBar::new(job.done() as f32 / job.chunks.max(1) as f32).desired_width(120.0));
        ui.label(job.label());
        ui.separator();
        ui.ctx().request_repaint_after(std::time::Duration::from_millis(100));
    }

    /// The menu bar: each menu's command items from the table (in table order, submenus and
    /// separators as the entries say), then its settings that are not commands (View: theme,
    /// panels, view options, bookmarks).
    fn menus(&mut self, ui: &mut egui::Ui) {
        egui::MenuBar::new().ui(ui, |ui| {
            for menu in Menu::ALL {
                ui.menu_button(menu.label(), |ui| {
                    self.menu_commands(ui, menu);
                    if menu == Menu::View {
                        self.view_settings(ui);
                    }
                });
            }
        });
    }

    /// The table's items of `menu`.
    fn menu_commands(&mut self, ui: &mut egui::Ui, menu: Menu) {
        let items: Vec<&Entry> =
            ui_command::COMMANDS.iter().filter(|e| e.menu.is_some_and(|m| m.menu == menu)).collect();
        let mut i = 0;
        while i < items.len() {
            let item = items[i].menu.expect("filtered on the menu");
            if item.separator {
                ui.separator();
            }
            match item.submenu {
                Some(name) => {
                    let run = items[i..].iter().take_while(|e| e.menu.is_some_and(|m| m.submenu == Some(name))).count();
                    ui.menu_button(name, |ui| {
                        for e in &items[i..i + run] {
                            self.menu_item(ui, e);
                        }
                    });
                    i += run;
                }
                None => {
                    self.menu_item(ui, items[i]);
                    i += 1;
                }
            }
        }
    }

    /// One command's menu item: its label, keys and tooltip from the table; Undo and Redo name
    /// the step, shadings are radio items.
    fn menu_item(&mut self, ui: &mut egui::Ui, e: &Entry) {
        let keys = e.keys_text();
        let h = &self.state.history;
        let (label, enabled) = match e.action {
            Action::OpenRecent => {
                ui.menu_button(e.label, |ui| {
                    if self.recent.paths.is_empty() {
                        ui.weak("(none)");
                    }
                    for p in self.recent.paths.clone() {
                        if ui.button(p.display().to_string()).clicked() {
                            self.request(Pending::Open(p));
                        }
                    }
                })
                .response
                .on_hover_text(e.tooltip);
                return;
            }
            Action::View(v) => {
                if ui
                    .radio(self.viewport.camera.ortho == v, format!("{}\t{keys}", e.label))
                    .on_hover_text(e.tooltip)
                    .clicked()
                {
                    self.run(e.action, None);
                }
                return;
            }
            Action::Shading(s) => {
                if ui
                    .radio(self.viewport.shading == s, format!("{}\t{keys}", e.label))
                    .on_hover_text(e.tooltip)
                    .clicked()
                {
                    self.run(e.action, None);
                }
                return;
            }
            Action::Undo => (h.undo_name().map_or_else(|| e.label.to_owned(), |n| format!("Undo {n}")), h.can_undo()),
            Action::Redo => (h.redo_name().map_or_else(|| e.label.to_owned(), |n| format!("Redo {n}")), h.can_redo()),
            Action::Delete => (
                e.label.to_owned(),
                self.state.selection.objects().is_some() || tools::select::selected_box(&self.state).is_some(),
            ),
            Action::Frame => (e.label.to_owned(), self.state.selection != Selection::None),
            _ => (e.label.to_owned(), true),
        };
        let mut button = egui::Button::new(label);
        if !keys.is_empty() {
            button = button.shortcut_text(keys);
        }
        if ui.add_enabled(enabled, button).on_hover_text(e.tooltip).clicked() {
            self.run(e.action, None);
        }
    }

    /// The View menu's settings: theme, panels, view options, bookmarks.
    fn view_settings(&mut self, ui: &mut egui::Ui) {
        ui.separator();
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
        ui.checkbox(&mut self.viewport.textured, "Textures");
        ui.horizontal(|ui| {
            let mut on = self.viewport.clip.is_some();
            if ui.checkbox(&mut on, "Clip above").on_hover_text("Cubes above this height are not drawn (C)").changed() {
                self.viewport.clip = on.then(|| self.viewport.camera.pivot().y.floor());
            }
            if let Some(y) = &mut self.viewport.clip {
                ui.add(egui::DragValue::new(y).speed(0.125).suffix(" m")).on_hover_text("Clip height");
            }
        });
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
    }

    /// The toolbar: one button per tool entry of the table ("2 Erase"), its tooltip on hover.
    fn toolbar(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            for e in ui_command::COMMANDS.iter().filter(|e| e.tool.is_some()) {
                let Action::Tool(id) = e.action else { continue };
                let text = format!("{} {}", e.keys_text(), e.label);
                if ui.selectable_label(self.state.tool == id, text).on_hover_text(e.tooltip).clicked() {
                    self.run(e.action, None);
                }
            }
        });
    }

    /// The F1 window: every row of the table (keys, command, what it does).
    fn shortcuts_window(&mut self, ctx: &egui::Context) {
        let mut open = self.show_shortcuts;
        egui::Window::new("Shortcuts").open(&mut open).resizable(false).vscroll(true).show(ctx, |ui| {
            egui::Grid::new("shortcut_grid").num_columns(3).striped(true).show(ui, |ui| {
                for r in ui_command::rows() {
                    let keys = r.keys_text();
                    ui.strong(if keys.is_empty() { "(menu)".to_owned() } else { keys });
                    ui.label(r.command);
                    ui.label(r.what);
                    ui.end_row();
                }
            });
        });
        self.show_shortcuts = open;
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
                    let placement = self.prompt.take().and_then(|p| p.placement);
                    self.prompt_confirmed(ctx, action, path, placement);
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
                    // Without a project this asks for a folder; the action is dropped then.
                    self.pending = None;
                    if self.save() {
                        self.carry_out(pending);
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
                    // Deleting the snapshot takes the project's writer lock: the open document
                    // lets go of it first when it is this project (it is reopened just below).
                    self.state.release(&dir);
                    if let Err(e) = Project::discard_recovery(&dir) {
                        self.state.say(format!("Could not discard the recovery snapshot: {e}"));
                    }
                    self.open_now(&dir, false);
                }
                _ => {}
            }
        }
        self.shortcuts_window(ctx);
    }

    /// Applies the commands queued this frame, in order; a refused edit shows in the status bar.
    fn apply_queued(&mut self) {
        for command in std::mem::take(&mut self.commands) {
            self.apply_or_say(command);
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
    fn ui(&mut self, ui: &mut egui::Ui, frame: &mut eframe::Frame) {
        let started = std::time::Instant::now();
        let ctx = ui.ctx().clone();
        if ctx.input(|i| i.events.iter().any(crate::pace::counts_as_input) || i.pointer.any_down()) {
            self.last_input = Some(started);
        }
        // The last frame's cost (eframe's figure: the UI pass, tessellation and GL calls, not the
        // buffer swap) sets how soon background repaints come.
        let cost = std::time::Duration::from_secs_f32(frame.info().cpu_usage.unwrap_or(0.0).max(0.0));
        self.pace.update(cost, self.last_input.map(|t| started.duration_since(t)));
        self.viewport.background_repaint = self.pace.delay();
        self.viewport.input_recent =
            self.last_input.is_some_and(|t| started.duration_since(t) < crate::pace::INPUT_GRACE);
        self.state.poll_bakes();
        self.poll_import();
        let (_, asset_events) = self.thumbs.poll_events();
        self.viewport.textures.set_roots(self.thumbs.roots());
        self.viewport.textures.on_events(&asset_events);
        self.switch_tools();
        self.always_keys(&ctx);
        let title = self.title();
        if title != self.title_sent {
            // Only when it changes: a viewport command asks for another frame at once, so
            // sending it every frame kept the editor drawing all the time, idle or not.
            ctx.send_viewport_cmd(egui::ViewportCommand::Title(title.clone()));
            self.title_sent = title;
        }
        if ctx.input(|i| i.viewport().close_requested()) && self.state.is_dirty() && !self.allow_close {
            ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose);
            self.pending = Some(Pending::Quit);
        }

        egui::Panel::top("menu").show(ui, |ui| self.menus(ui));
        egui::Panel::top("toolbar").show(ui, |ui| self.toolbar(ui));
        egui::Panel::bottom("status").show(ui, |ui| {
            ui.horizontal(|ui| {
                self.import_status(ui);
                self.export_status(ui);
                // The engine's kept state counts (no walk of the slots, which a big map has thousands of).
                let c = self.state.bake.census();
                let (n, m, drafts) = (c.queued, c.drafted + c.previewed, c.drafted);
                if n > 0 {
                    let total = self.state.bake.slots().len().max(1);
                    ui.add(egui::ProgressBar::new(1.0 - n as f32 / total as f32).desired_width(120.0));
                    ui.label(format!("baking {n} chunks, finishing visibility for {m}"));
                } else if drafts > 0 {
                    ui.label(format!("refining the lighting of {drafts} edited chunks, finishing visibility for {m}"));
                } else if m > 0 {
                    ui.label(format!("finishing visibility for {m} chunks"));
                } else {
                    ui.label("baked");
                }
                if !self.state.bake.errors().is_empty() {
                    ui.separator();
                    ui.colored_label(
                        ui.visuals().error_fg_color,
                        format!("{} bake errors", self.state.bake.errors().len()),
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
            let id = self.state.tool;
            let tool = self.tools.iter_mut().find(|t| t.info().id == id).map(|t| t.as_mut() as &mut dyn Tool);
            let commands = self.viewport.ui(ui, &mut self.state, tool);
            self.commands.extend(commands);
            let shortcut = |s| ui_command::entry(Action::Shading(s)).map(Entry::keys_text).unwrap_or_default();
            let commands = self.viewport.view_bar(ui, &self.state, shortcut);
            self.commands.extend(commands);
        });
        self.viewport_rect = Some(central.response.rect);
        self.view_keys(&ctx);
        if let Some(drop) = self.viewport.take_file_drop() {
            // After what the UI asked for before it, as when it was one of the commands.
            self.apply_queued();
            self.drop_files(&drop);
        }
        self.windows(&ctx);
        if let Some(mut driver) = self.driver.take() {
            // A driver may set another one; a finished one is dropped.
            if driver.frame(self, &ctx) == DriverStatus::Running && self.driver.is_none() {
                self.driver = Some(driver);
            }
        }

        self.apply_queued();
        self.state.autosave();
        let dir = self.state.project.as_ref().map(|p| p.dir().to_owned());
        if dir != self.project_dir {
            self.thumbs.set_roots(dir.as_deref(), self.assets.clone());
            if let Some(w) = self.viewport.bookmarks.set_project(dir.as_deref()) {
                self.state.say(w);
            }
            self.project_dir = dir;
        }
        if self.allow_close && self.pending.is_none() && self.close_now {
            self.close_now = false;
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        }
        self.ui_pass_seconds = started.elapsed().as_secs_f64();
    }

    fn raw_input_hook(&mut self, _ctx: &egui::Context, raw_input: &mut egui::RawInput) {
        if let Some(driver) = &mut self.driver {
            driver.input(raw_input);
        }
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

    /// An export under way is finished before the editor quits: it replaces its file atomically,
    /// so quitting mid-way would leave the old file and a temporary one behind.
    fn on_exit(&mut self, _gl: Option<&eframe::glow::Context>) {
        self.state.poll_export(true);
    }
}
