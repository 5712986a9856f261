//! Files: native dialogs off the UI thread, typed-path prompts, recent files, imports and the
//! default asset pack's materials.
//!
//! - **Dialogs.** `rfd` runs on a worker thread and sends the chosen path back over a channel
//!   (then `request_repaint`). Without a desktop portal `rfd` answers `None` at once, which looks
//!   exactly like "cancel", so every dialog is a small window with a **typed-path field** beside
//!   "Browse…": the path can always be typed or pasted.
//!   A dialog that answers "nothing" at once ([`NO_DIALOG_WITHIN`]) is taken for a missing
//!   dialog service: the prompt says so and puts the keyboard in the typed path.
//! - **Import options.** The import prompts ask where the model's origin goes (default: the
//!   view's focus) and the cube size of its voxels, like `pmfc import --at --cube-size`.
//! - **Recent files** are kept in eframe storage (`pmfedit.recent`, one path per line, newest
//!   first, at most [`MAX_RECENT`]).
//! - **Imports** (Model 3D, Voxel Play) run on a worker thread ([`ImportJob`]) on a snapshot of
//!   the map, so a big world save never blocks the UI; the status bar shows the file, the phase
//!   ([`ImportPhase`]) and a Cancel button (a cancelled import's result is dropped). When it
//!   finishes the copy replaces the map through one undoable edit (`Edit::ReplaceMap`, "Import
//!   NAME"): Ctrl+Z takes the whole import back. Unchanged chunks are shared between the two maps,
//!   so the undo entry costs little memory. The result is applied only if the map did not change
//!   meanwhile (the app compares [`EditorState::generation`](crate::state::EditorState::generation)
//!   at the start and the end); otherwise it is refused and the user imports again.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};

use eframe::egui;
use glam::DVec3;

use pmfedit_core::format::voxelplay::VoxelPlayError;
use pmfedit_core::import::voxelplay::VoxelPlayImportError;
use pmfedit_core::map::Map;

/// How many recent files are kept.
pub const MAX_RECENT: usize = 10;
/// Storage key of the recent files.
pub const RECENT_KEY: &str = "pmfedit.recent";

/// Recently opened or saved projects, newest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecentFiles {
    pub paths: Vec<PathBuf>,
}

impl RecentFiles {
    /// From the stored text (one path per line).
    pub fn parse(text: &str) -> Self {
        let mut r = Self::default();
        for line in text.lines().rev() {
            if !line.trim().is_empty() {
                r.push(PathBuf::from(line));
            }
        }
        r
    }

    /// The stored text.
    pub fn to_text(&self) -> String {
        self.paths.iter().map(|p| p.to_string_lossy().into_owned()).collect::<Vec<_>>().join("\n")
    }

    /// Moves `path` to the front.
    pub fn push(&mut self, path: PathBuf) {
        self.paths.retain(|p| *p != path);
        self.paths.insert(0, path);
        self.paths.truncate(MAX_RECENT);
    }

    /// Loads from eframe storage.
    pub fn load(storage: Option<&dyn eframe::Storage>) -> Self {
        storage.and_then(|s| s.get_string(RECENT_KEY)).map(|t| Self::parse(&t)).unwrap_or_default()
    }

    /// Saves to eframe storage.
    pub fn save(&self, storage: &mut dyn eframe::Storage) {
        storage.set_string(RECENT_KEY, self.to_text());
    }
}

/// What a file prompt is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileAction {
    /// Open a project folder.
    Open,
    /// Save the map as a new project folder.
    SaveAs,
    /// Export a `.pmf`.
    Export,
    /// Import a Model 3D file.
    ImportM3d,
    /// Import a Voxel Play world save.
    ImportVoxelPlay,
}

impl FileAction {
    /// Window title.
    pub fn title(self) -> &'static str {
        match self {
            FileAction::Open => "Open project",
            FileAction::SaveAs => "Save project as",
            FileAction::Export => "Export PMF",
            FileAction::ImportM3d => "Import Model 3D",
            FileAction::ImportVoxelPlay => "Import Voxel Play world",
        }
    }

    /// The confirm button.
    pub fn verb(self) -> &'static str {
        match self {
            FileAction::Open => "Open",
            FileAction::SaveAs => "Save",
            FileAction::Export => "Export",
            FileAction::ImportM3d | FileAction::ImportVoxelPlay => "Import",
        }
    }

    /// What the path names, for the hint.
    pub fn hint(self) -> &'static str {
        match self {
            FileAction::Open => "project folder (holds map.ron)",
            FileAction::SaveAs => "new project folder",
            FileAction::Export => "file.pmf",
            FileAction::ImportM3d => "model.m3d",
            FileAction::ImportVoxelPlay => "world save (.bin)",
        }
    }

    /// Runs the native dialog (blocking; call on a worker thread).
    fn run_dialog(self, start: Option<PathBuf>) -> Option<PathBuf> {
        let mut d = rfd::FileDialog::new().set_title(self.title());
        if let Some(dir) = start {
            d = d.set_directory(dir);
        }
        match self {
            FileAction::Open | FileAction::SaveAs => d.pick_folder(),
            FileAction::Export => d.add_filter("PlatinumSrc map", &["pmf"]).set_file_name("map.pmf").save_file(),
            FileAction::ImportM3d => d.add_filter("Model 3D", &["m3d", "a3d"]).pick_file(),
            FileAction::ImportVoxelPlay => d.pick_file(),
        }
    }
}

/// A dialog that answers "nothing" faster than this never showed: there is no dialog service
/// (a person cancelling takes longer).
pub const NO_DIALOG_WITHIN: std::time::Duration = std::time::Duration::from_millis(400);

/// Where an import goes and how big its voxels are (the import prompt's fields; `pmfc import
/// --at X,Y,Z --cube-size S`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ImportPlacement {
    /// Where the model's origin (its bottom centre) goes: world position, map units.
    pub at: DVec3,
    /// The voxel edge as a power of two in lattice units (3 = one map unit).
    pub cube_log2: u8,
}

/// The cube sizes the import prompt offers, as powers of two in lattice units (1/8 to 16 map
/// units).
const IMPORT_CUBE_SIZES: std::ops::RangeInclusive<u8> = 0..=7;

/// An open file prompt: typed path plus "Browse…" (and, for imports, where and how big).
#[derive(Debug, Clone, PartialEq)]
pub struct FilePrompt {
    pub action: FileAction,
    pub path: String,
    /// A native dialog is open for this prompt, since then.
    pub browsing: Option<std::time::Instant>,
    /// What to tell the user under the path (no dialog service).
    pub note: Option<String>,
    /// Put the keyboard in the path field next frame.
    focus_path: bool,
    /// For imports: where the model goes and its cube size.
    pub placement: Option<ImportPlacement>,
}

/// What the user did in a prompt this frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptResult {
    Pending,
    Cancel,
    Confirm(PathBuf),
}

/// What shows a native dialog for an action (blocking, on a worker thread): the chosen path, or
/// `None` (cancelled, or no dialog service).
pub type DialogFn = dyn Fn(FileAction, Option<PathBuf>) -> Option<PathBuf> + Send + Sync;

/// Native dialogs on worker threads.
pub struct Dialogs {
    tx: Sender<(FileAction, Option<PathBuf>)>,
    rx: Receiver<(FileAction, Option<PathBuf>)>,
    run: Arc<DialogFn>,
}

impl Default for Dialogs {
    fn default() -> Self {
        Self::with(Arc::new(|action: FileAction, start| action.run_dialog(start)))
    }
}

impl Dialogs {
    /// Dialogs shown by `run` instead of `rfd` (tests: a desktop without a dialog service).
    pub fn with(run: Arc<DialogFn>) -> Self {
        let (tx, rx) = channel();
        Self { tx, rx, run }
    }

    /// Opens the native dialog for `action` on a worker thread.
    pub fn browse(&self, ctx: &egui::Context, action: FileAction, start: Option<PathBuf>) {
        let tx = self.tx.clone();
        let ctx = ctx.clone();
        let run = self.run.clone();
        let spawned = std::thread::Builder::new().name("file dialog".into()).spawn(move || {
            let path = run(action, start);
            let _ = tx.send((action, path));
            ctx.request_repaint();
        });
        if spawned.is_err() {
            let _ = self.tx.send((action, None));
        }
    }

    /// Dialog answers that arrived (`None`: cancelled, or no dialog service).
    pub fn drain(&self) -> Vec<(FileAction, Option<PathBuf>)> {
        self.rx.try_iter().collect()
    }
}

impl FilePrompt {
    /// A prompt for `action` starting at `path`; `placement` is what an import prompt starts
    /// with (other prompts ignore it).
    pub fn new(action: FileAction, path: Option<&Path>, placement: ImportPlacement) -> Self {
        let is_import = matches!(action, FileAction::ImportM3d | FileAction::ImportVoxelPlay);
        Self {
            action,
            path: path.map(|p| p.to_string_lossy().into_owned()).unwrap_or_default(),
            browsing: None,
            note: None,
            focus_path: false,
            placement: is_import.then_some(placement),
        }
    }

    /// Shows the prompt window.
    pub fn show(&mut self, ctx: &egui::Context, dialogs: &Dialogs) -> PromptResult {
        let mut result = PromptResult::Pending;
        let mut open = true;
        egui::Window::new(self.action.title()).collapsible(false).resizable(false).open(&mut open).show(ctx, |ui| {
            ui.horizontal(|ui| {
                let l = ui.label("Path");
                let r = ui
                    .add(egui::TextEdit::singleline(&mut self.path).hint_text(self.action.hint()).desired_width(320.0))
                    .labelled_by(l.id);
                if std::mem::take(&mut self.focus_path) {
                    r.request_focus();
                }
                if r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) && !self.path.trim().is_empty() {
                    result = PromptResult::Confirm(PathBuf::from(self.path.trim()));
                }
                if ui.add_enabled(self.browsing.is_none(), egui::Button::new("Browse…")).clicked() {
                    self.browsing = Some(std::time::Instant::now());
                    self.note = None;
                    let start = Path::new(self.path.trim()).parent().filter(|p| p.is_dir()).map(Path::to_owned);
                    dialogs.browse(ctx, self.action, start);
                }
            });
            if self.browsing.is_some() {
                ui.weak("Waiting for the file dialog… (type the path if none appears)");
            }
            if let Some(note) = &self.note {
                ui.colored_label(ui.visuals().warn_fg_color, note);
            }
            if let Some(p) = &mut self.placement {
                placement_ui(ui, p);
            }
            ui.horizontal(|ui| {
                if ui.add_enabled(!self.path.trim().is_empty(), egui::Button::new(self.action.verb())).clicked() {
                    result = PromptResult::Confirm(PathBuf::from(self.path.trim()));
                }
                if ui.button("Cancel").clicked() {
                    result = PromptResult::Cancel;
                }
            });
        });
        if !open {
            result = PromptResult::Cancel;
        }
        result
    }

    /// Takes a dialog answer for this prompt. "Nothing" at once means there is no dialog
    /// service: the prompt says so and the keyboard goes to the typed path.
    pub fn answer(&mut self, action: FileAction, path: Option<PathBuf>) {
        if action != self.action {
            return;
        }
        let asked = self.browsing.take();
        match path {
            Some(p) => self.path = p.to_string_lossy().into_owned(),
            None if asked.is_some_and(|t| t.elapsed() < NO_DIALOG_WITHIN) => {
                self.note = Some("No file dialog is available here: type the path".to_owned());
                self.focus_path = true;
            }
            None => {}
        }
    }
}

/// The import prompt's fields: position (map units) and cube size.
fn placement_ui(ui: &mut egui::Ui, p: &mut ImportPlacement) {
    egui::Grid::new("import_placement").num_columns(2).show(ui, |ui| {
        let mut at = p.at.as_vec3().to_array();
        if crate::panels::form::floats(ui, "Position", &mut at, 0.25, " m") {
            p.at = glam::Vec3::from_array(at).as_dvec3();
        }
        let sizes: Vec<(u8, String)> = IMPORT_CUBE_SIZES.map(|l| (l, format!("{} m", cube_size_text(l)))).collect();
        crate::panels::form::combo(ui, "Cube size", &mut p.cube_log2, &sizes);
    });
    ui.weak("Position: where the model's origin (its bottom centre) goes");
}

/// A cube edge of `2^log2` lattice units in map units: `0.125`, `1`, `16`.
fn cube_size_text(log2: u8) -> String {
    let size = f64::from(1u32 << log2) / 8.0;
    format!("{size}")
}

/// How far a background import got, for the status bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportPhase {
    /// Reading the file.
    Reading,
    /// Decoding a Voxel Play save.
    Decoding,
    /// Placing cubes, lights and entities in the map copy.
    Placing,
}

impl ImportPhase {
    const ALL: [ImportPhase; 3] = [ImportPhase::Reading, ImportPhase::Decoding, ImportPhase::Placing];

    /// In words.
    pub fn label(self) -> &'static str {
        match self {
            ImportPhase::Reading => "reading the file",
            ImportPhase::Decoding => "decoding",
            ImportPhase::Placing => "placing cubes",
        }
    }
}

/// Shared by a running import and the UI: the phase it reports, the cancel flag it checks.
#[derive(Debug, Default)]
pub struct ImportControl {
    phase: AtomicU8,
    cancelled: AtomicBool,
}

impl ImportControl {
    /// Reports the phase the import is in.
    pub fn set_phase(&self, phase: ImportPhase) {
        self.phase.store(phase as u8, Ordering::Relaxed);
    }

    /// The last phase reported.
    pub fn phase(&self) -> ImportPhase {
        ImportPhase::ALL.get(usize::from(self.phase.load(Ordering::Relaxed))).copied().unwrap_or(ImportPhase::Reading)
    }

    /// Asks the import to stop (it stops at the next phase; its result is dropped anyway).
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }

    /// Whether [`ImportControl::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }

    /// `Err` once cancelled, to stop between phases with `?`.
    fn check(&self) -> Result<(), ImportError> {
        if self.is_cancelled() { Err(ImportError::Cancelled) } else { Ok(()) }
    }
}

/// What to import, and where.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportRequest {
    /// [`FileAction::ImportM3d`] or [`FileAction::ImportVoxelPlay`].
    pub action: FileAction,
    pub path: PathBuf,
    /// The level the import goes into.
    pub level: usize,
    /// The voxel edge, as a power of two in lattice units.
    pub cube_log2: u8,
    /// Where the model's origin goes: world position in map units (`pmfc import --at`).
    pub at: DVec3,
}

impl ImportRequest {
    /// The file's name (what the undo step and the messages show).
    pub fn file_name(&self) -> String {
        self.path.file_name().map_or_else(|| self.path.display().to_string(), |f| f.to_string_lossy().into_owned())
    }
}

/// Why an import failed (errors name the file).
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// Reading the file failed.
    #[error("{}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    /// The level to import into does not exist.
    #[error("there is no level {0}")]
    NoLevel(usize),
    /// The Model 3D file was refused.
    #[error("{file}: {source}")]
    M3d { file: String, source: Box<pmfedit_core::import::ImportError> },
    /// The Voxel Play save does not decode.
    #[error("{file}: {source}")]
    VoxelPlayRead { file: String, source: Box<VoxelPlayError> },
    /// The Voxel Play world does not fit the map.
    #[error("{file}: {source}")]
    VoxelPlay { file: String, source: Box<VoxelPlayImportError> },
    /// [`ImportControl::cancel`] was called.
    #[error("cancelled")]
    Cancelled,
    /// The request's action is not an import.
    #[error("not an import")]
    NotAnImport,
    /// The importer panicked.
    #[error("{file}: the importer panicked: {message}")]
    Panicked { file: String, message: String },
    /// The worker thread could not be started.
    #[error("could not start the import thread: {0}")]
    NoThread(std::io::Error),
    /// The worker ended without sending a result.
    #[error("{0}: the import stopped without a result")]
    Stopped(String),
}

/// An import function, run on the worker thread: imports `request` into the map snapshot it is
/// given and returns it with a summary. The app uses [`import`]; tests substitute one that waits
/// for them.
pub type ImportFn = dyn Fn(Map, &ImportRequest, &ImportControl) -> ImportResult + Send + Sync;

/// What a finished import sends back: the map with the import and a summary.
pub type ImportResult = Result<(Map, String), ImportError>;

/// An import running on a worker thread (named "import"). Dropping it cancels the import; the
/// thread is never joined, so closing the app does not wait for it.
pub struct ImportJob {
    pub request: ImportRequest,
    /// The editor's map generation when the import started.
    pub generation: u64,
    control: Arc<ImportControl>,
    rx: Receiver<ImportResult>,
}

impl ImportJob {
    /// Starts `importer` on `map` (a snapshot of the document) on a worker thread; `generation`
    /// is the document's map generation now. The thread calls `request_repaint` when done.
    pub fn start(
        ctx: &egui::Context,
        map: Map,
        request: ImportRequest,
        generation: u64,
        importer: Arc<ImportFn>,
    ) -> Self {
        let (tx, rx) = channel();
        let control = Arc::new(ImportControl::default());
        let (thread_tx, thread_control, thread_request, ctx) =
            (tx.clone(), control.clone(), request.clone(), ctx.clone());
        let spawned = std::thread::Builder::new().name("import".into()).spawn(move || {
            let run = std::panic::AssertUnwindSafe(|| importer(map, &thread_request, &thread_control));
            let result = std::panic::catch_unwind(run).unwrap_or_else(|panic| {
                let msg = panic
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                Err(ImportError::Panicked { file: thread_request.file_name(), message: msg })
            });
            let _ = thread_tx.send(result);
            ctx.request_repaint();
        });
        if let Err(e) = spawned {
            let _ = tx.send(Err(ImportError::NoThread(e)));
        }
        Self { request, generation, control, rx }
    }

    /// The phase the import reported last.
    pub fn phase(&self) -> ImportPhase {
        self.control.phase()
    }

    /// The import's result once it is done (`None` while it runs).
    pub fn poll(&self) -> Option<ImportResult> {
        match self.rx.try_recv() {
            Ok(r) => Some(r),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(Err(ImportError::Stopped(self.request.file_name()))),
        }
    }
}

impl Drop for ImportJob {
    fn drop(&mut self) {
        self.control.cancel();
    }
}

/// Imports `request` into `map` (a snapshot of the document, changed in place and returned with
/// a summary), reporting its phase to `control` and stopping between phases once cancelled.
/// Errors name the file.
pub fn import(mut map: Map, request: &ImportRequest, control: &ImportControl) -> ImportResult {
    use pmfedit_core::import;
    let path = &request.path;
    let level = request.level;
    control.set_phase(ImportPhase::Reading);
    let bytes = std::fs::read(path).map_err(|source| ImportError::Read { path: path.clone(), source })?;
    control.check()?;
    let file = request.file_name();
    // The model's origin goes where the request says (as `pmfc import --at` does).
    let origin = map.levels.get(level).ok_or(ImportError::NoLevel(level))?.frame().lattice_from_world(request.at);
    let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("import");
    let summary = match request.action {
        FileAction::ImportM3d => {
            control.set_phase(ImportPhase::Placing);
            let r = import::m3d::import_m3d(
                &mut map,
                level,
                &bytes,
                name,
                origin,
                request.cube_log2,
                import::m3d::ImportMode::Auto,
            )
            .map_err(|source| ImportError::M3d { file: file.clone(), source: Box::new(source) })?;
            format!("{}: {} voxels placed, {} materials created", r.source, r.voxels_placed, r.materials_created.len())
        }
        FileAction::ImportVoxelPlay => {
            control.set_phase(ImportPhase::Decoding);
            let save = pmfedit_core::format::voxelplay::read_world(&bytes, &Default::default())
                .map_err(|source| ImportError::VoxelPlayRead { file: file.clone(), source: Box::new(source) })?;
            control.check()?;
            control.set_phase(ImportPhase::Placing);
            let options = import::voxelplay::ImportOptions::at(origin, request.cube_log2);
            let r = import::voxelplay::import_world(&mut map, level, &save, &options)
                .map_err(|source| ImportError::VoxelPlay { file: file.clone(), source: Box::new(source) })?;
            let mut s = format!("Voxel Play: {} voxels in {} boxes, {} lights", r.voxels, r.boxes, r.lights.len());
            if let Some(d) = r.dropped.first() {
                s += &format!("; {} voxels of {} chunks not imported: {}", r.dropped_voxels, r.dropped.len(), d.reason);
            }
            s
        }
        _ => return Err(ImportError::NotAnImport),
    };
    control.check()?;
    Ok((map, summary))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recent_files_are_newest_first_unique_and_bounded() {
        let mut r = RecentFiles::default();
        for i in 0..15 {
            r.push(PathBuf::from(format!("/p/{i}")));
        }
        r.push(PathBuf::from("/p/12"));
        assert_eq!(r.paths.len(), MAX_RECENT);
        assert_eq!(r.paths[0], PathBuf::from("/p/12"));
        assert_eq!(r.paths[1], PathBuf::from("/p/14"));
        assert_eq!(RecentFiles::parse(&r.to_text()), r);
    }

    fn m3d_request() -> ImportRequest {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/testdata/m3d/voxel.m3d");
        ImportRequest { action: FileAction::ImportM3d, path, level: 0, cube_log2: 3, at: DVec3::ZERO }
    }

    #[test]
    fn a_cancelled_import_stops_after_reading() {
        let control = ImportControl::default();
        control.cancel();
        let r = import(Map::new("x"), &m3d_request(), &control);
        assert!(matches!(r, Err(ImportError::Cancelled)), "{r:?}");
        assert_eq!(control.phase(), ImportPhase::Reading);
        let control = ImportControl::default();
        let (map, _) = import(Map::new("x"), &m3d_request(), &control).unwrap();
        assert_eq!(control.phase(), ImportPhase::Placing);
        assert!(!map.library.materials().is_empty());
    }

    #[test]
    fn a_panicking_importer_reports_an_error_and_a_dropped_job_is_cancelled() {
        let ctx = egui::Context::default();
        let importer: Arc<ImportFn> = Arc::new(|_, _, _| panic!("boom"));
        let job = ImportJob::start(&ctx, Map::new("x"), m3d_request(), 0, importer);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let result = loop {
            if let Some(r) = job.poll() {
                break r;
            }
            assert!(std::time::Instant::now() < deadline, "no result");
            std::thread::sleep(std::time::Duration::from_millis(1));
        };
        assert_eq!(result.err().map(|e| e.to_string()).as_deref(), Some("voxel.m3d: the importer panicked: boom"));

        let (tx, rx) = channel();
        let importer: Arc<ImportFn> = Arc::new(move |map, _, control: &ImportControl| {
            while !control.is_cancelled() {
                std::thread::yield_now();
            }
            let _ = tx.send(());
            Ok((map, String::new()))
        });
        drop(ImportJob::start(&ctx, Map::new("x"), m3d_request(), 0, importer));
        rx.recv_timeout(std::time::Duration::from_secs(60)).expect("the dropped job's import saw the cancel");
    }

    /// The request's position moves the model: its cubes land translated by it.
    #[test]
    fn an_import_lands_at_the_requested_position() {
        let control = ImportControl::default();
        let lattice_min = |at: DVec3| {
            let request = ImportRequest { at, ..m3d_request() };
            let (map, _) = import(Map::new("x"), &request, &control).unwrap();
            let level = &map.levels[0];
            let frame = level.frame();
            level
                .leaves()
                .filter(|(_, _, c)| c.is_solid())
                .map(|(c, a, _)| frame.chunk_min_lattice(c) + a.min)
                .min_by_key(|p| (p.x, p.y, p.z))
                .unwrap()
        };
        let shift = lattice_min(DVec3::new(40.0, 8.0, -16.0)) - lattice_min(DVec3::ZERO);
        assert_eq!(shift, glam::IVec3::new(40, 8, -16) * 8);
    }
}
