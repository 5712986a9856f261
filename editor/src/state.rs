//! The editor's document and everything derived from it: the map, its undo history, the project
//! it is saved in, the latest bake of every chunk, the selection and the current tool settings.
//! [`EditorState::apply`] is the one place that changes the map; it returns what changed, or
//! why an edit was refused, and leaves telling the user to its caller.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use glam::DVec3;

use pmfedit_bake::cache;
use pmfedit_bake::compile::{ChunkBake, CompileSettings};
use pmfedit_bake::deps::ChunkKey;
use pmfedit_bake::export;
use pmfedit_bake::rebuild::{ChunkState, Plan, Rebuild, RebuildError, WARM_RADIUS};
use pmfedit_bake::scheduler::Scheduler;
use pmfedit_core::edit::{ChangeSet, EditError, History};
use pmfedit_core::format::pmf;
use pmfedit_core::map::Map;
use pmfedit_core::map::ids::{MaterialId, PathAttrs};
use pmfedit_core::project::{Project, ProjectError, SaveReport};

use crate::command::{Command, ToolId};
use crate::launch::StartView;
pub use crate::selection::Selection;

/// Why [`EditorState::save`] or [`EditorState::save_as`] did not save (the text is the status
/// bar's message).
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    /// The map has no project folder yet ([`EditorState::save_as`] makes one).
    #[error("Choose a folder with Save As first")]
    NoProject,
    /// The new project folder could not be made.
    #[error("{}: {source}", path.display())]
    Create {
        /// The folder asked for.
        path: PathBuf,
        source: ProjectError,
    },
    /// Writing the project failed.
    #[error("Save failed: {0}")]
    Write(#[source] ProjectError),
}

/// What an export wrote: the status line's message comes from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportSummary {
    /// The file written.
    pub path: PathBuf,
    /// Its size, bytes.
    pub bytes: usize,
    /// Archive paths embedded.
    pub embedded: Vec<String>,
    /// The warnings `pmfc build` prints for the same map (without `warning: `).
    pub warnings: Vec<String>,
    /// The map had no project folder: resources were looked up in the asset folders only.
    pub unsaved: bool,
    /// Chunks encoded and compressed for it; the others' frames were kept from the last export
    /// ([`Rebuild::keep_export_frames`]).
    pub encoded: usize,
}

impl ExportSummary {
    /// "Exported PATH (N bytes; embedded: 11 resources) — warning: …".
    fn message(&self, done: &export::Exported) -> String {
        let mut msg = format!("Exported {} ({} bytes; {}", self.path.display(), self.bytes, done.embedded_summary());
        if self.unsaved {
            msg.push_str("; the map is not saved: resources were looked up in the asset folder only");
        }
        msg.push(')');
        for w in &self.warnings {
            msg.push_str(" — warning: ");
            msg.push_str(w);
        }
        msg
    }
}

/// An export writing on its own thread ([`EditorState::export_now`]): the editor stays live while
/// it runs, and edits made meanwhile are not in the file (it writes the map as it was when the
/// export began, from the full bakes' `Arc`s).
pub struct ExportJob {
    /// The file being written.
    pub path: PathBuf,
    /// Chunks in the file.
    pub chunks: usize,
    /// Chunks written so far (encoded, or taken from the kept frames).
    progress: Arc<std::sync::atomic::AtomicUsize>,
    /// The map had no project folder when the export began.
    unsaved: bool,
    handle: std::thread::JoinHandle<Result<(export::Exported, usize), String>>,
}

impl ExportJob {
    /// Chunks written so far.
    pub fn done(&self) -> usize {
        self.progress.load(std::sync::atomic::Ordering::Relaxed).min(self.chunks)
    }

    /// "Exporting OUT.pmf… 1 234 of 4 096 chunks".
    pub fn label(&self) -> String {
        let name =
            self.path.file_name().map_or_else(|| self.path.display().to_string(), |n| n.to_string_lossy().into());
        format!("Exporting {name}… {} of {} chunks", self.done(), self.chunks)
    }
}

/// How long the steps of opening a document took (the project's files are read before, by the
/// caller).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpenTimes {
    /// Reading and checking the bake cache (the map's snapshot included).
    pub cache_read: Duration,
    /// Starting the rebuild engine on the cached bakes (far lists, the readers' index).
    pub engine: Duration,
}

/// The document and the editor settings around it.
pub struct EditorState {
    pub map: Map,
    pub history: History,
    /// Where the map is saved; `None` for a new, unsaved map.
    pub project: Option<Project>,
    /// The rebuild engine: every chunk's state, the bake drawn and the full bake exported (see
    /// [`pmfedit_bake::rebuild`]). Fed every change of [`Self::map`].
    pub bake: Rebuild,
    pub selection: Selection,
    /// The current tool.
    pub tool: ToolId,
    pub material: MaterialId,
    /// The path attribute set the path tool paints.
    pub path_set: PathAttrs,
    /// Cube edge as a power of two in lattice units (3 = one map unit).
    pub cube_log2: u8,
    /// Active level.
    pub level: usize,
    /// A world point of the work plane (on the lattice): the plane through it across the view
    /// direction's axis (horizontal in the perspective and top views) carries the ground grid
    /// and takes the tools' clicks where no face is. Its Y is the work plane's height.
    pub work_point: DVec3,
    /// A camera request for the viewport (it takes it).
    pub camera_request: Option<(DVec3, f64)>,
    /// The point under the view's centre (half a unit out of the face there), where Add light
    /// and Add entity put the new object; the viewport sets it every frame.
    pub view_point: Option<DVec3>,
    /// Where the camera starts on this document (a sample's designed view); `None`: the viewport
    /// frames the occupied chunks. Goes with the document (a new or opened one has none).
    pub start_view: Option<StartView>,
    /// Status-bar message and when it was set.
    pub status: Option<(String, Instant)>,
    /// An export waiting for the bake to catch up (or for the export under way).
    pub pending_export: Option<PathBuf>,
    /// The export being written ([`Self::export_now`]).
    export_job: Option<ExportJob>,
    /// Called from the export thread when it is done (the app asks for a frame).
    wake: Option<Arc<dyn Fn() + Send + Sync>>,
    /// The chunk (level, chunk) under the view's centre the light memos were last warmed up
    /// around ([`Rebuild::warm_around`]).
    warmed_at: Option<ChunkKey>,
    /// The chunk under the view's centre last given to the engine as the light memos' focus.
    focused_at: Option<ChunkKey>,
    /// The header creation time exports are stamped with (Unix seconds); `None`: the time of
    /// the export. Fixed, an export is byte-for-byte `pmfc build --timestamp`.
    pub export_timestamp: Option<u64>,
    /// The shared asset folders an export looks up resources in after the project folder (what
    /// `pmfc build` searches: [`pmfedit_bake::export::resource_roots`]).
    pub asset_roots: Vec<PathBuf>,
    /// What the last export wrote and warned about (`None`: none yet, or it failed).
    pub last_export: Option<ExportSummary>,
    last_recovery: Instant,
    /// The last edit of a drag that changed no cubes, while its full bakes are held back
    /// (settle-then-bake, [`Rebuild::hold`]).
    last_continuous_edit: Option<Instant>,
    /// How long a dragged value must stay unchanged to count as settled ([`SETTLE`]; tests
    /// lengthen it to watch a drag without a clock).
    pub settle_after: Duration,
    /// How the open of this document used the project's bake cache (`None`: no project).
    pub cache_report: Option<cache::Report>,
    /// How long the open of this document took, by step (`--bench-frames` prints them).
    pub open_times: OpenTimes,
    /// The open found chunks the cache could not give (stale, damaged or another version's
    /// entries): once their background bakes are done and the map is still the saved one, the
    /// fresh bakes are written to the cache ([`Self::poll_bakes`]), so the next open is at once
    /// instead of re-baking them again.
    cache_refresh: bool,
    /// Bumped whenever the map changes (edit, undo, redo, a history jump, a new document).
    generation: u64,
    /// Bumped whenever the document is replaced (new, opened, recovered).
    document: u64,
}

impl EditorState {
    /// A document for `map`; `wake` is called from bake threads when results arrive.
    pub fn new(map: Map, project: Option<Project>, wake: Arc<dyn Fn() + Send + Sync>) -> Self {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 8);
        let mut s = Self::with_scheduler(
            map,
            project,
            Scheduler::interactive(threads, CompileSettings::default(), wake.clone()),
        );
        s.wake = Some(wake);
        s
    }

    /// A document baking on `scheduler` (tests choose the thread count, or a bake function that
    /// holds stages back).
    pub fn with_scheduler(map: Map, project: Option<Project>, scheduler: Scheduler) -> Self {
        // The project's cached bakes are on screen at once; only stale chunks are queued.
        let started = Instant::now();
        let snapshot = Arc::new(map.snapshot());
        let (cached, cache_report) = cached_bakes(project.as_ref(), &snapshot, scheduler.settings());
        let cache_read = started.elapsed();
        let mut bake = Rebuild::with_bakes(scheduler, Plan::Interactive, snapshot, cached);
        // Exports after an edit encode only the chunks it re-baked.
        bake.keep_export_frames(true);
        let open_times = OpenTimes { cache_read, engine: started.elapsed() - cache_read };
        let mut s = Self {
            map,
            history: History::new(),
            project,
            bake,
            selection: Selection::None,
            tool: ToolId::default(),
            material: MaterialId(0),
            path_set: PathAttrs(1),
            cube_log2: 3,
            level: 0,
            work_point: DVec3::ZERO,
            camera_request: None,
            view_point: None,
            start_view: None,
            status: None,
            pending_export: None,
            export_job: None,
            wake: None,
            warmed_at: None,
            focused_at: None,
            export_timestamp: None,
            asset_roots: Vec::new(),
            last_export: None,
            last_recovery: Instant::now(),
            last_continuous_edit: None,
            settle_after: SETTLE,
            cache_report: None,
            open_times,
            cache_refresh: false,
            generation: 0,
            document: 0,
        };
        s.history.set_saved();
        s.opened_with(cache_report);
        s
    }

    /// A number that changes whenever the map does (an applied edit, undo, redo, a history jump,
    /// a new or opened document): background work started on a snapshot compares it to know
    /// whether the map changed meanwhile.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// A number that changes whenever the document is replaced (a new, opened or recovered map):
    /// views compare it to know when to start over (camera, GPU meshes).
    pub fn document(&self) -> u64 {
        self.document
    }

    /// Whether there are edits since the last save.
    pub fn is_dirty(&self) -> bool {
        !self.history.is_saved()
    }

    /// Tells the rebuild engine what `changes` did to the map.
    /// Undo/redo steps that failed are shown in the status line.
    fn changed(&mut self, changes: &ChangeSet) {
        if let Some(m) = changes.failure_message() {
            self.say(m);
        }
        self.bake.edited(Arc::new(self.map.snapshot()), changes);
    }

    /// Where bakes go nearest-first.
    pub fn set_camera(&self, level: usize, position: DVec3) {
        self.bake.set_camera(level, position);
    }

    /// Takes finished bakes from the engine, and runs a waiting export once nothing is on its
    /// way. Call once per frame.
    pub fn poll_bakes(&mut self) {
        // A dragged value held still for a moment has settled: bake it fully (the drag goes on
        // holding if it moves again).
        if self.last_continuous_edit.is_some_and(|t| t.elapsed() >= self.settle_after) {
            self.settle();
        }
        self.bake.poll();
        self.refresh_cache();
        self.poll_export(false);
        self.warm_up();
        // Exports compile from full bakes only (a failed chunk makes the export say so).
        if self.bake.is_settled()
            && self.export_job.is_none()
            && let Some(path) = self.pending_export.take()
        {
            self.export_now(&path);
        }
    }

    /// Makes the point under the view's centre ([`Self::view_point`]) the bakes' and the light
    /// memos' focus, and once every chunk is baked, warms up the memos around it
    /// ([`WARM_RADIUS`]), whenever it moves to another chunk: the next edit there re-traces only
    /// the luxels it reaches (the first edit after an open took 5 s of exact lighting on
    /// `terrain(32,4,32)` on 2 cores, later ones 0.75 s).
    fn warm_up(&mut self) {
        let Some(p) = self.view_point else { return };
        let Some(level) = self.map.levels.get(self.level) else { return };
        let frame = level.frame();
        let key = (self.level, frame.chunk_from_world(p));
        if self.focused_at != Some(key) {
            // The memos kept are those nearest where the next edits are likely: here, not at the
            // camera's eye, which on an overview of a terrain hangs far above what it looks at.
            // Bakes go nearest it first too, so that the memos recorded are the ones kept.
            self.bake.set_focus(self.level, p);
            self.focused_at = Some(key);
        }
        if self.warmed_at != Some(key) && self.bake.is_settled() {
            self.bake.warm_around(self.level, p, WARM_RADIUS);
            self.warmed_at = Some(key);
        }
    }

    /// Whether the light memos were warmed up around the view since the document was opened.
    pub fn warm_requested(&self) -> bool {
        self.warmed_at.is_some()
    }

    /// Notes how an open used the bake cache; an open that must re-bake chunks the cache had
    /// entries for says so and why (a whole cache of another version is one reason, and would
    /// otherwise look like a hang).
    fn opened_with(&mut self, report: Option<cache::Report>) {
        let misses = self.bake.slots().len() - report.as_ref().map_or(0, |r| r.reused);
        self.cache_refresh = report.is_some() && misses > 0;
        if let Some(r) = &report
            && r.stale + r.unusable > 0
        {
            self.say(format!("{r}; re-baking {misses} chunks in the background, nearest first"));
        }
        self.cache_report = report;
    }

    /// Writes the bake cache once the chunks an open could not take from it are baked, while
    /// the map is still the saved one (the cache holds the saved map's bakes only; after an edit
    /// the next save writes it). A failure is said, not retried.
    fn refresh_cache(&mut self) {
        if !self.cache_refresh || !self.bake.is_settled() || self.is_dirty() {
            return;
        }
        self.cache_refresh = false;
        match self.store_cache() {
            Some(Ok(stored)) => self.say(format!(
                "Bake cache refreshed: {} entries written, {} kept; the next open takes every chunk from it",
                stored.written, stored.kept
            )),
            Some(Err(e)) => self.say(format!("bake cache not written: {e}")),
            None => {}
        }
    }

    /// Writes the full bakes of the engine's map into the project's bake cache (`None`: no
    /// project). Chunks still baking are left out (they are baked again on the next open).
    fn store_cache(&self) -> Option<Result<cache::Stored, cache::CacheError>> {
        let project = self.project.as_ref()?;
        let bakes = self.bake.slots().keys().filter_map(|&k| self.bake.full(k)).map(|b| &**b);
        Some(cache::store(project.dir(), self.bake.map(), self.bake.settings(), bakes))
    }

    /// The dragged value settled (released, cancelled, or still for [`Self::settle_after`]): the chunks it
    /// dirtied get their preview and full bakes.
    fn settle(&mut self) {
        self.last_continuous_edit = None;
        self.bake.hold(false);
    }

    /// Chunks waiting for a re-baked mesh (drawn tinted with their previous one).
    pub fn baking(&self) -> usize {
        self.bake.count(ChunkState::Queued)
    }

    /// Chunks whose mesh is in (draft or preview) but whose full bake is still running.
    pub fn finishing(&self) -> usize {
        let c = self.bake.census();
        c.drafted + c.previewed
    }

    /// Sets the status-bar message.
    pub fn say(&mut self, msg: impl Into<String>) {
        self.status = Some((msg.into(), Instant::now()));
    }

    /// Carries out one command: what it changed in the map (empty for commands that change
    /// none), or why the edit was refused (nothing changed then). Telling the user is the
    /// caller's: the app shows a refusal in the status bar.
    pub fn apply(&mut self, command: Command) -> Result<ChangeSet, EditError> {
        let mut changes = ChangeSet::new();
        match command {
            Command::Edit(edit) => {
                changes = self.history.apply(&mut self.map, edit)?;
                self.generation += 1;
                // Settle-then-bake: a drag that changes no cubes (a form's slider or dragged
                // number, a dragged light) may dirty many chunks every frame; they get drafts
                // until the value settles (see `poll_bakes`).
                let continuous = self.history.current_stroke().is_some()
                    && changes.levels.values().all(|l| l.chunks.is_empty())
                    && !changes.is_empty();
                if continuous {
                    self.bake.hold(true);
                    self.last_continuous_edit = Some(Instant::now());
                }
                self.changed(&changes);
            }
            Command::BeginStroke => {
                // The stroke's id is the history's business.
                self.history.begin_stroke();
            }
            Command::BeginNamedStroke(name) => {
                self.history.begin_named_stroke(name);
            }
            Command::EndStroke => {
                self.history.end_stroke();
                self.settle();
            }
            Command::CancelStroke => {
                changes = self.history.cancel_stroke(&mut self.map);
                if !changes.is_empty() {
                    self.generation += 1;
                }
                self.changed(&changes);
                self.settle();
            }
            // The status line says what was undone (an "Imported …" message must not outlive
            // its import).
            Command::Undo => {
                let name = self.history.undo_name().map(str::to_owned);
                changes = self.step_history(History::undo);
                self.say_stepped("Undone", name, &changes);
            }
            Command::Redo => {
                let name = self.history.redo_name().map(str::to_owned);
                changes = self.step_history(History::redo);
                self.say_stepped("Redone", name, &changes);
            }
            Command::GoTo(head) => {
                let from = self.history.head();
                changes = self.history.go_to(&mut self.map, head);
                if self.history.head() != from {
                    self.generation += 1;
                }
                self.changed(&changes);
            }
            Command::Select(s) => self.selection = s,
            Command::SetTool(t) => self.tool = t,
            Command::SetMaterial(m) => self.material = m,
            Command::SetPathSet(s) => self.path_set = s,
            Command::SetCubeSize(n) => self.cube_log2 = n.min(18),
            Command::Frame { target, distance } => self.camera_request = Some((target, distance)),
            Command::Export(path) => {
                // Only full bakes of the current map are exported: wait for every chunk's.
                if self.bake.is_settled() && self.export_job.is_none() {
                    self.export_now(&path);
                } else if let Some(job) = &self.export_job {
                    self.say(format!("Exporting {} when {} is written…", path.display(), job.path.display()));
                    self.pending_export = Some(path);
                } else {
                    self.say(format!("Exporting when {} chunks finish baking…", self.bake.in_flight()));
                    self.pending_export = Some(path);
                }
            }
            Command::Status(s) => self.say(s),
            Command::SetWorkPlane(p) => {
                if p.is_finite() {
                    self.work_point = (p * 8.0).round() / 8.0;
                }
            }
            Command::SetLevel(i) => self.level = i.min(self.map.levels.len().saturating_sub(1)),
        }
        // A removed level may leave the active index past the end.
        self.level = self.level.min(self.map.levels.len().saturating_sub(1));
        Ok(changes)
    }

    /// "Undone: NAME" in the status line after a step that went through (a failed one says so
    /// itself, see [`Self::changed`]).
    fn say_stepped(&mut self, what: &str, name: Option<String>, changes: &ChangeSet) {
        if let Some(name) = name
            && changes.failures.is_empty()
        {
            self.say(format!("{what}: {name}"));
        }
    }

    /// Undo or redo (`step`): what it changed; nothing at that end of the history.
    fn step_history(&mut self, step: fn(&mut History, &mut Map) -> Option<ChangeSet>) -> ChangeSet {
        let Some(changes) = step(&mut self.history, &mut self.map) else { return ChangeSet::new() };
        self.generation += 1;
        self.changed(&changes);
        changes
    }

    /// Saves the map into its project; the history's saved marker moves here.
    pub fn save(&mut self) -> Result<SaveReport, SaveError> {
        let project = self.project.as_mut().ok_or(SaveError::NoProject)?;
        let mut report = project.save(&self.map).map_err(SaveError::Write)?;
        self.history.set_saved();
        // The full bakes of the saved map go into the project's bake cache. The engine's map is
        // the saved one: every edit reaches the engine as it is applied. Chunks still baking
        // are written once they are done, unless the map changes first.
        self.cache_refresh = !self.bake.is_settled();
        if let Some(Err(e)) = self.store_cache() {
            report.cleanup_warnings.push(format!("bake cache not written: {e}"));
        }
        Ok(report)
    }

    /// Makes `path` the map's project folder (created if needed) and saves into it.
    pub fn save_as(&mut self, path: &Path) -> Result<SaveReport, SaveError> {
        let project = Project::create(path).map_err(|source| SaveError::Create { path: path.to_owned(), source })?;
        self.project = Some(project);
        self.save()
    }

    /// Takes the writer lock of a project about to be opened (another process holding it is an
    /// error); reopening the open project hands its lock over.
    pub fn claim(&mut self, project: &Project) -> Result<(), ProjectError> {
        self.release(project.dir());
        project.lock()
    }

    /// Lets go of the open project (and its writer lock) when it is the one in `dir`; the map
    /// stays open, detached from any folder.
    pub fn release(&mut self, dir: &Path) {
        if self.project.as_ref().is_some_and(|p| p.dir() == dir) {
            self.project = None;
        }
    }

    /// Replaces the document (after opening, recovering or creating a map): the history is
    /// cleared and the new state counts as saved.
    pub fn load_document(&mut self, map: Map, project: Option<Project>) {
        self.replace_document(map, project);
    }

    fn replace_document(&mut self, map: Map, project: Option<Project>) {
        self.generation += 1;
        self.document += 1;
        self.map = map;
        self.project = project;
        self.last_continuous_edit = None;
        self.history = History::new();
        self.history.set_saved();
        self.selection = Selection::None;
        self.start_view = None;
        self.level = 0;
        let started = Instant::now();
        let snapshot = Arc::new(self.map.snapshot());
        let (cached, report) = cached_bakes(self.project.as_ref(), &snapshot, self.bake.settings());
        let cache_read = started.elapsed();
        self.bake.replace_with(snapshot, cached);
        self.warmed_at = None;
        self.focused_at = None;
        self.open_times = OpenTimes { cache_read, engine: started.elapsed() - cache_read };
        self.opened_with(report);
    }

    /// Compiles the current full bakes into a file stamped with [`Self::export_timestamp`] (else
    /// the current time). Every chunk must have the full bake of the current map; previews are
    /// never exported.
    pub fn compile(&self) -> Result<pmf::File, RebuildError> {
        self.bake.compile(Some(self.export_timestamp.unwrap_or_else(unix_now)))
    }

    /// Where an export looks up resources: the project folder (none while the map is unsaved),
    /// then [`Self::asset_roots`].
    pub fn resource_roots(&self) -> Vec<PathBuf> {
        export::resource_roots(self.project.as_ref().map(Project::dir), self.asset_roots.iter().cloned())
    }

    /// Compiles and writes `path` the way `pmfc build` does ([`export::write_assembled`]:
    /// resources embedded, atomic write), on its own thread: the editor stays live, and
    /// [`Self::poll_bakes`] tells what was written or why not ([`Self::last_export`], the status
    /// line with what was embedded and the build's warnings).
    fn export_now(&mut self, path: &Path) {
        let roots = self.resource_roots();
        // Straight from the bakes: a big map's records are never copied into a second file.
        let source = match self.bake.export_source(Some(self.export_timestamp.unwrap_or_else(unix_now))) {
            Ok(s) => s,
            Err(e) => return self.export_failed(path, &e.to_string()),
        };
        let chunks = source.chunks();
        let progress = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (out, counter, wake) = (path.to_owned(), progress.clone(), self.wake.clone());
        let spawned = std::thread::Builder::new().name("export".into()).spawn(move || {
            let result = source.assemble().map_err(|e| e.to_string()).and_then(|a| {
                let mut a = a.with_progress(&counter);
                let done = export::write_assembled(&mut a, &roots, &out, false).map_err(|e| e.to_string())?;
                Ok((done, a.encoded()))
            });
            if let Some(wake) = wake {
                wake();
            }
            result
        });
        match spawned {
            Ok(handle) => {
                let unsaved = self.project.is_none();
                self.export_job = Some(ExportJob { path: path.to_owned(), chunks, progress, unsaved, handle });
            }
            Err(e) => self.export_failed(path, &format!("could not start the export: {e}")),
        }
    }

    /// The export under way, if any.
    pub fn export_job(&self) -> Option<&ExportJob> {
        self.export_job.as_ref()
    }

    /// Whether an export is under way or waiting (for the bake, or for the one under way).
    pub fn exporting(&self) -> bool {
        self.pending_export.is_some() || self.export_job.is_some()
    }

    /// Takes the result of the export under way once it is written (with `wait`, waits for it:
    /// before the editor quits, so no export is cut short, and in scripted runs).
    pub fn poll_export(&mut self, wait: bool) {
        if !self.export_job.as_ref().is_some_and(|j| wait || j.handle.is_finished()) {
            return;
        }
        let Some(job) = self.export_job.take() else { return };
        let result = job.handle.join().unwrap_or_else(|_| Err("the export thread panicked".to_owned()));
        match result {
            Ok((done, encoded)) => {
                let summary = ExportSummary {
                    path: job.path,
                    bytes: done.bytes,
                    embedded: done.resources.embedded.clone(),
                    warnings: done.warnings(),
                    unsaved: job.unsaved,
                    encoded,
                };
                self.say(summary.message(&done));
                self.last_export = Some(summary);
            }
            Err(e) => self.export_failed(&job.path, &e),
        }
    }

    fn export_failed(&mut self, path: &Path, error: &str) {
        self.last_export = None;
        self.say(format!("Export failed: {}: {error}", path.display()));
    }

    /// Writes the recovery snapshot every few seconds while there are unsaved edits.
    pub fn autosave(&mut self) {
        if !self.is_dirty() || self.last_recovery.elapsed() < Duration::from_secs(5) {
            return;
        }
        self.last_recovery = Instant::now();
        if let Some(p) = &self.project
            && let Err(e) = p.write_recovery(&self.map)
        {
            self.bake.report(format!("autosave: {e}"));
        }
    }
}

/// How long a dragged value must stay unchanged to count as settled ([`EditorState::poll_bakes`]).
pub const SETTLE: Duration = Duration::from_millis(300);

/// The full bakes of `map` in `project`'s bake cache whose inputs still hold, and what the
/// cache held (none without a project; unusable entries are simply baked again).
fn cached_bakes(
    project: Option<&Project>,
    map: &Map,
    settings: &CompileSettings,
) -> (std::collections::BTreeMap<ChunkKey, ChunkBake>, Option<cache::Report>) {
    let Some(p) = project else { return Default::default() };
    let loaded = cache::load(p.dir(), map, settings);
    let report = loaded.report();
    loaded.discard_unusable();
    (loaded.bakes, Some(report))
}

/// Seconds since the Unix epoch (0 before it): an export's header time when none is set.
fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    //! Staged bakes in the document: drafts and previews draw at once, exports wait for the full
    //! bakes of the current map.

    use std::sync::{Condvar, Mutex};

    use pmfedit_bake::compile::{bake_chunk, compile_full};
    use pmfedit_bake::deps::ChunkKey;
    use pmfedit_bake::scheduler::{BakeFn, Stage};
    use pmfedit_core::map::coords::{ChunkCoord, CubeAddr};
    use pmfedit_core::sample;

    use super::*;

    /// Holds full bakes back until opened.
    #[derive(Default)]
    struct Gate {
        open: Mutex<bool>,
        cv: Condvar,
    }

    impl Gate {
        fn wait(&self) {
            let mut open = self.open.lock().unwrap();
            while !*open {
                let (g, t) = self.cv.wait_timeout(open, Duration::from_secs(60)).unwrap();
                assert!(!t.timed_out(), "gate never opened");
                open = g;
            }
        }

        fn open(&self) {
            *self.open.lock().unwrap() = true;
            self.cv.notify_all();
        }

        fn close(&self) {
            *self.open.lock().unwrap() = false;
        }
    }

    /// Polls until `cond` holds (bounded).
    fn poll_until(state: &mut EditorState, mut cond: impl FnMut(&EditorState) -> bool) {
        let t = Instant::now();
        loop {
            state.poll_bakes();
            if cond(state) {
                return;
            }
            assert!(t.elapsed() < Duration::from_secs(600), "timed out");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// The demo baking on `threads` workers (no previews-only worker) with `bake`.
    fn state_with(threads: usize, bake: Arc<BakeFn>) -> EditorState {
        let scheduler = Scheduler::with_bake_fn(threads, CompileSettings::default(), Arc::new(|| {}), bake);
        EditorState::with_scheduler(sample::demo(), None, scheduler)
    }

    /// A document whose full bakes wait for the gate (drafts and previews do not).
    fn gated_state(gate: &Arc<Gate>) -> EditorState {
        let g = gate.clone();
        state_with(
            2,
            Arc::new(move |m: &Map, (l, c): ChunkKey, stage: Stage, s: &CompileSettings| {
                if stage == Stage::Full {
                    g.wait();
                }
                bake_chunk(m, l, c, s)
            }),
        )
    }

    /// Adds or removes one cube in the first occupied chunk of level 0; returns that chunk.
    fn toggle_a_cube(state: &mut EditorState) -> ChunkKey {
        use pmfedit_core::map::octree::Cube;
        let level = &state.map.levels[0];
        let (lo, _) = level.occupied_bounds().unwrap();
        let min = level.frame().chunk_min_lattice(lo);
        let cube = match level.get(min) {
            Ok((c, _)) if c.is_solid() => Cube::EMPTY,
            _ => Cube::solid(Default::default(), Default::default(), Default::default()),
        };
        let edit = pmfedit_core::edit::Edit::Cubes {
            level: 0,
            op: pmfedit_core::edit::CubeOp::SetCube { addr: CubeAddr::containing(min, 3), cube },
        };
        state.apply(Command::Edit(edit)).expect("a cube edit in the grid");
        (0, lo)
    }

    fn keys_in(state: &EditorState, s: ChunkState) -> Vec<ChunkKey> {
        state.bake.keys(s).collect()
    }

    /// An open bakes each chunk once, straight to its full bake (a preview would show it no
    /// sooner and, on a big map, doubled the light work), and an export waits for those bakes.
    #[test]
    fn an_open_bakes_each_chunk_once_and_export_waits_for_the_full_bakes() {
        let gate = Arc::new(Gate::default());
        let mut state = gated_state(&gate);
        // The full bakes wait at the gate: nothing is drawn yet, and no preview is made.
        let all = state.bake.slots().len();
        assert!(all > 0);
        for _ in 0..20 {
            state.poll_bakes();
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!((state.baking(), state.finishing()), (all, 0));
        assert!(state.bake.slots().values().all(|s| s.shown.is_none() && s.times == [None; 3]));
        assert!(!state.bake.is_final());

        // An export now must wait for the full bakes.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.pmf");
        state.apply(Command::Export(path.clone())).expect("an export is never refused");
        assert_eq!(state.pending_export.as_deref(), Some(path.as_path()));
        for _ in 0..20 {
            state.poll_bakes();
        }
        assert!(!path.exists(), "exported before the full bakes");
        assert!(matches!(state.compile(), Err(RebuildError::NotFinal(n)) if n == all), "compiled without full bakes");

        gate.open();
        poll_until(&mut state, |s| !s.exporting());
        assert!(state.bake.is_final());
        // Each chunk was baked once, as a full bake, and is uploaded once.
        assert!(state.bake.slots().values().all(|s| s.times[Stage::Full.index()].is_some()
            && s.times[Stage::Preview.index()].is_none()
            && s.times[Stage::Draft.index()].is_none()));
        assert!(state.bake.slots().values().all(|s| s.shown.as_ref().is_some_and(|b| b.stage == Stage::Full)));
        assert_eq!(state.bake.take_changed().len(), all);

        // The file is the full compile (visibility and pathfinding included) with its resources
        // embedded as a build does.
        let bytes = std::fs::read(&path).unwrap();
        let file = pmf::read(&bytes).unwrap();
        let settings = CompileSettings { timestamp: file.header.creation_time, ..CompileSettings::default() };
        let mut full = compile_full(&state.map, &settings).unwrap();
        pmfedit_bake::resources::embed_resources(&mut full, &state.resource_roots(), &[]).unwrap();
        let expected = pmf::write(&full).unwrap();
        assert!(bytes == expected, "the export differs from a full compile");
        let chunks = file.levels.iter().flat_map(|l| &l.chunks);
        assert!(chunks.flat_map(|c| &c.common.cubes).any(|c| c.visibility.is_some()));
    }

    /// An export writes on its own thread: the editor goes on at once, an edit made meanwhile is
    /// not in the file (it is the map as it was when the export began, byte for byte), the
    /// progress counts every chunk, and an export asked for meanwhile waits for it.
    #[test]
    fn an_export_runs_beside_the_editor_and_writes_the_map_as_it_was() {
        let mut state =
            state_with(2, Arc::new(|m: &Map, (l, c): ChunkKey, _: Stage, s: &CompileSettings| bake_chunk(m, l, c, s)));
        poll_until(&mut state, |s| s.bake.is_final());
        state.export_timestamp = Some(1_700_000_000);
        let settings = CompileSettings { timestamp: 1_700_000_000, ..CompileSettings::default() };
        let mut before = compile_full(&state.map, &settings).unwrap();
        pmfedit_bake::resources::embed_resources(&mut before, &state.resource_roots(), &[]).unwrap();
        let chunks = state.bake.slots().len();

        let dir = tempfile::tempdir().unwrap();
        let (first, second) = (dir.path().join("first.pmf"), dir.path().join("second.pmf"));
        state.apply(Command::Export(first.clone())).unwrap();
        let job = state.export_job().expect("the export runs on its own thread");
        assert_eq!((job.path.as_path(), job.chunks), (first.as_path(), chunks));
        assert!(job.label().starts_with("Exporting first.pmf… "), "{}", job.label());
        toggle_a_cube(&mut state);
        state.apply(Command::Export(second.clone())).unwrap();
        assert_eq!(state.pending_export.as_deref(), Some(second.as_path()), "waits for the export under way");
        let (status, _) = state.status.clone().unwrap();
        assert!(status.contains("when") && status.contains("first.pmf"), "{status}");

        poll_until(&mut state, |s| s.export_job().is_some_and(|j| j.path == second) || !s.exporting());
        let bytes = std::fs::read(&first).unwrap();
        assert!(bytes == pmf::write(&before).unwrap(), "the first export is not the map as it was");
        poll_until(&mut state, |s| !s.exporting());
        assert_eq!(state.last_export.as_ref().map(|e| e.path.as_path()), Some(second.as_path()));
        let mut after = compile_full(&state.map, &settings).unwrap();
        pmfedit_bake::resources::embed_resources(&mut after, &state.resource_roots(), &[]).unwrap();
        assert!(
            std::fs::read(&second).unwrap() == pmf::write(&after).unwrap(),
            "the second export is not the edited map"
        );
        assert!(bytes != std::fs::read(&second).unwrap());
    }

    /// The progress of an export counts each chunk once, whether encoded or kept.
    #[test]
    fn an_exports_progress_reaches_every_chunk() {
        let mut state =
            state_with(2, Arc::new(|m: &Map, (l, c): ChunkKey, _: Stage, s: &CompileSettings| bake_chunk(m, l, c, s)));
        poll_until(&mut state, |s| s.bake.is_final());
        let dir = tempfile::tempdir().unwrap();
        for name in ["a.pmf", "b.pmf"] {
            state.apply(Command::Export(dir.path().join(name))).unwrap();
            let job = state.export_job.take().unwrap();
            let (chunks, progress) = (job.chunks, job.progress.clone());
            assert!(job.handle.join().unwrap().is_ok());
            assert_eq!(progress.load(std::sync::atomic::Ordering::Relaxed), chunks, "{name}");
        }
    }

    /// Once every chunk is baked, the light memos of the chunks around the point under the
    /// view's centre are warmed up (the cache's bakes come with none), and again when that point
    /// moves to another chunk; not while chunks bake.
    #[test]
    fn light_memos_are_warmed_up_around_the_view_once_everything_is_baked() {
        let mut state = EditorState::new(sample::demo(), None, Arc::new(|| {}));
        let memos = state.bake.light_cache().clone();
        let frame = state.map.levels[0].frame();
        let (lo, hi) = state.map.levels[0].occupied_bounds().unwrap();
        // A corner of the map: some of its chunks lie beyond the radius.
        state.view_point = Some(frame.chunk_center_world(lo));
        state.poll_bakes();
        assert!(!state.warm_requested(), "warmed up while chunks bake");
        state.view_point = None;
        poll_until(&mut state, |s| s.bake.is_final());
        // As bakes from the cache have none.
        memos.clear();
        state.view_point = Some(frame.chunk_center_world(lo));
        state.poll_bakes();
        assert!(state.warm_requested());
        poll_until(&mut state, |s| matches!(s.bake.warm_ups(), (_, 0, false)));
        let from = |a: ChunkCoord, c: ChunkCoord| (c.x - a.x).abs().max((c.y - a.y).abs()).max((c.z - a.z).abs());
        let lit: Vec<ChunkKey> = state
            .bake
            .slots()
            .iter()
            .filter(|(_, s)| s.full.as_ref().is_some_and(|b| !b.pmf.client.vertices.is_empty()))
            .map(|(k, _)| *k)
            .collect();
        assert!(lit.iter().any(|k| from(lo, k.1) > WARM_RADIUS), "the demo has lit chunks beyond the radius");
        for &(l, c) in &lit {
            assert_eq!(memos.get(l, c).is_some(), from(lo, c) <= WARM_RADIUS, "chunk {c:?}");
        }
        let (warmed, _, _) = state.bake.warm_ups();
        assert_eq!(warmed, lit.iter().filter(|k| from(lo, k.1) <= WARM_RADIUS).count());
        // The view moves to the other corner: the chunks around it are warmed up too.
        state.view_point = Some(frame.chunk_center_world(hi));
        state.poll_bakes();
        poll_until(&mut state, |s| matches!(s.bake.warm_ups(), (_, 0, false)));
        for &(l, c) in &lit {
            assert_eq!(
                memos.get(l, c).is_some(),
                from(lo, c) <= WARM_RADIUS || from(hi, c) <= WARM_RADIUS,
                "chunk {c:?}"
            );
        }
    }

    /// A [`gated_state`] with the gate opened until every chunk is final.
    fn final_gated_state(gate: &Arc<Gate>) -> EditorState {
        let mut state = gated_state(gate);
        gate.open();
        poll_until(&mut state, |s| s.bake.is_final());
        state
    }

    /// An edit's changed chunk is drawn from its draft while its full bake waits, then from the
    /// full bake (its exact light). No chunk gets a preview: beside the full bake it would take a
    /// core as long and arrive no sooner.
    #[test]
    fn an_edited_chunk_is_drawn_from_its_draft_while_its_full_bake_finishes() {
        let gate = Arc::new(Gate::default());
        let mut state = final_gated_state(&gate);
        state.bake.take_changed();
        gate.close();

        let edited = toggle_a_cube(&mut state);
        poll_until(&mut state, |s| s.bake.state(edited) == Some(ChunkState::Drafted));
        let slot = state.bake.slot(edited).unwrap();
        assert_eq!(slot.shown.as_ref().map(|s| s.stage), Some(Stage::Draft));
        assert!(state.bake.take_changed().contains(&edited));
        assert!(state.bake.urgent().contains(&edited), "the edited chunk is meshed first");
        assert!(!state.bake.is_final());

        gate.open();
        poll_until(&mut state, |s| s.bake.is_final());
        assert!(state.bake.take_changed().contains(&edited), "the full bake's exact light is not drawn");
        assert_eq!(state.bake.slot(edited).unwrap().shown.as_ref().map(|s| s.stage), Some(Stage::Full));
        assert!(state.bake.slots().values().all(|s| s.times[Stage::Preview.index()].is_none()), "a preview was baked");
    }

    /// An edit's changed chunk is drawn from its draft while its exact bake is held back, then the
    /// exact bake replaces the draft; dirty neighbours (no draft) stay queued meanwhile.
    #[test]
    fn an_edited_chunk_is_drawn_from_its_draft_until_its_exact_bake_arrives() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let hold = Arc::new(AtomicBool::new(false));
        let h = hold.clone();
        let bake: Arc<BakeFn> = Arc::new(move |m: &Map, (l, c): ChunkKey, stage: Stage, s: &CompileSettings| {
            // Held while `hold` (bounded, so a failing test cannot hang in the scheduler's drop).
            let t = Instant::now();
            while h.load(Ordering::SeqCst) && stage != Stage::Draft && t.elapsed() < Duration::from_secs(200) {
                std::thread::sleep(Duration::from_millis(2));
            }
            bake_chunk(m, l, c, s)
        });
        let mut state = state_with(2, bake);
        poll_until(&mut state, |s| s.bake.is_final());
        assert_eq!(state.bake.count(ChunkState::Drafted), 0, "a plain load makes no drafts");
        state.bake.take_changed();

        hold.store(true, Ordering::SeqCst);
        let edited = toggle_a_cube(&mut state);
        let dirty = keys_in(&state, ChunkState::Queued);
        assert!(dirty.contains(&edited) && dirty.len() > 1, "{dirty:?}");
        poll_until(&mut state, |s| s.bake.state(edited) != Some(ChunkState::Queued));
        assert_eq!(keys_in(&state, ChunkState::Drafted), [edited]);
        let slot = state.bake.slot(edited).unwrap();
        assert_eq!(slot.shown.as_ref().map(|s| s.stage), Some(Stage::Draft));
        assert!(slot.times[Stage::Draft.index()].is_some());
        assert!(!slot.shown.as_ref().unwrap().bake.pmf.client.lightmaps.is_empty());
        assert!(state.bake.take_changed().contains(&edited), "the draft is not queued for upload");
        // The other dirty chunks have no draft: they wait, tinted, for their full bakes.
        assert_eq!(state.baking(), dirty.len() - 1);

        hold.store(false, Ordering::SeqCst);
        poll_until(&mut state, |s| s.bake.is_final());
        assert_eq!(state.bake.count(ChunkState::Drafted), 0);
        // What is drawn now is the exact bake: the same as the full bake's mesh and lightmaps.
        let exact = bake_chunk(&state.map, 0, edited.1, &CompileSettings::default()).unwrap();
        assert!(state.bake.shown(edited).unwrap().bake.pmf.client == exact.pmf.client, "the draft is still drawn");
    }

    #[test]
    fn an_edit_while_full_bakes_run_keeps_export_waiting() {
        let gate = Arc::new(Gate::default());
        let mut state = final_gated_state(&gate);
        let before: Vec<(ChunkKey, Arc<_>)> =
            state.bake.slots().iter().map(|(k, s)| (*k, s.full.clone().unwrap())).collect();

        // Edit one cube: its chunks get re-baked (a draft first for those that draw it); until
        // their full bakes are in, the export waits.
        toggle_a_cube(&mut state);
        let dirty = keys_in(&state, ChunkState::Queued);
        assert!(!dirty.is_empty());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.pmf");
        state.apply(Command::Export(path.clone())).unwrap();
        assert!(state.pending_export.is_some());
        poll_until(&mut state, |s| !s.exporting());
        assert!(path.exists());
        assert!(state.bake.is_final());
        for (k, old) in before {
            let now = state.bake.full(k).unwrap();
            assert_eq!(!Arc::ptr_eq(&old, now), dirty.contains(&k), "{k:?}: re-baked iff dirty");
        }
    }

    /// A chunk whose re-bake fails is never exported from its old full bake: the export says
    /// which chunk failed.
    #[test]
    fn a_failed_bake_stops_the_export_with_its_chunk() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let fail = Arc::new(AtomicBool::new(false));
        let f = fail.clone();
        let bake: Arc<BakeFn> = Arc::new(move |m: &Map, (l, c): ChunkKey, stage: Stage, s: &CompileSettings| {
            if f.load(Ordering::SeqCst) && stage == Stage::Full {
                return Err(pmfedit_bake::compile::CompileError::Format("injected".into()));
            }
            bake_chunk(m, l, c, s)
        });
        let mut state = state_with(2, bake);
        poll_until(&mut state, |s| s.bake.is_final());
        fail.store(true, Ordering::SeqCst);
        let edited = toggle_a_cube(&mut state);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.pmf");
        state.apply(Command::Export(path.clone())).expect("an export is never refused");
        poll_until(&mut state, |s| !s.exporting());
        assert!(!path.exists(), "exported stale bakes");
        let (status, _) = state.status.clone().unwrap();
        assert!(status.starts_with("Export failed") && status.contains("injected"), "{status}");
        assert_eq!(state.bake.state(edited), Some(ChunkState::Failed));
        assert!(!state.bake.errors().is_empty());

        // The next edit of that chunk retries it.
        fail.store(false, Ordering::SeqCst);
        toggle_a_cube(&mut state);
        poll_until(&mut state, |s| s.bake.is_final());
        assert!(state.compile().is_ok());
    }

    /// Dragging a material's colour (a stroke of library edits, as a form's slider makes) bakes
    /// drafts only while it moves; the value that settles gets one preview and one full bake per
    /// chunk using the material; the export waits for them.
    #[test]
    fn a_dragged_material_colour_bakes_drafts_until_it_settles() {
        use pmfedit_core::edit::{Edit, LibItem, LibRef};
        use std::sync::atomic::{AtomicUsize, Ordering};
        let fulls = Arc::new(AtomicUsize::new(0));
        let f = fulls.clone();
        let bake: Arc<BakeFn> = Arc::new(move |m: &Map, (l, c): ChunkKey, stage: Stage, s: &CompileSettings| {
            if stage == Stage::Full {
                f.fetch_add(1, Ordering::SeqCst);
            }
            bake_chunk(m, l, c, s)
        });
        let mut state = state_with(2, bake);
        state.settle_after = Duration::from_secs(3600);
        poll_until(&mut state, |s| s.bake.is_final());
        let before = fulls.load(Ordering::SeqCst);

        let id = state.map.library.materials().ids().find(|&m| state.map.material_in_use(m)).unwrap();
        let colour = |state: &mut EditorState, v: u8| {
            let mut m = state.map.library.materials().get(id).unwrap().clone();
            m.color = [v, 255 - v, 128];
            let edit = Edit::ReplaceLibraryItem { id: LibRef::Material(id), item: LibItem::Material(m) };
            state.apply(Command::Edit(edit)).unwrap();
            state.poll_bakes();
        };
        state.apply(Command::BeginStroke).unwrap();
        for v in [10, 60, 120] {
            colour(&mut state, v);
        }
        assert!(state.bake.holding());
        let dirty = state.bake.in_flight();
        assert!(dirty > 0);
        // Every dirty chunk gets its draft (drawn), none a preview or a full bake.
        poll_until(&mut state, |s| s.baking() == 0);
        assert_eq!(state.bake.count(ChunkState::Drafted), dirty);
        std::thread::sleep(Duration::from_millis(200));
        state.poll_bakes();
        assert_eq!(state.bake.count(ChunkState::Drafted), dirty, "a preview or full bake ran mid-drag");
        assert_eq!(fulls.load(Ordering::SeqCst), before, "a full bake ran mid-drag");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.pmf");
        state.apply(Command::Export(path.clone())).unwrap();
        assert!(state.pending_export.is_some(), "exported drafts");

        // Release: one full bake per dirty chunk, of the last value.
        colour(&mut state, 200);
        state.apply(Command::EndStroke).unwrap();
        assert!(!state.bake.holding());
        poll_until(&mut state, |s| !s.exporting());
        assert!(state.bake.is_final() && path.exists());
        assert_eq!(fulls.load(Ordering::SeqCst) - before, dirty, "one full re-bake per dirty chunk");
        let (k, slot) = state.bake.slots().iter().next().unwrap();
        let exact = bake_chunk(&state.map, k.0, k.1, &CompileSettings::default()).unwrap();
        assert!(slot.full.as_ref().unwrap().pmf == exact.pmf, "{k:?}: the full bake is of the settled value");

        // A value held still for the settle time settles without a release.
        state.settle_after = Duration::from_millis(1);
        state.apply(Command::BeginStroke).unwrap();
        colour(&mut state, 30);
        std::thread::sleep(Duration::from_millis(5));
        state.poll_bakes();
        assert!(!state.bake.holding(), "a still value did not settle");
        poll_until(&mut state, |s| s.bake.is_final());
        state.apply(Command::EndStroke).unwrap();
    }

    /// Save As writes the bake cache into the new folder, and a document opened from it shows
    /// every chunk from the cache at once (nothing queued); `pmfc build` would reuse them too
    /// (the same default settings).
    #[test]
    fn bakes_follow_save_as_and_a_reopened_document_bakes_nothing() {
        let mut map = sample::terrain(2, 1, 2, 3);
        map.levels[0].lighting = pmfedit_core::map::lighting::LevelLighting::none();
        let mut state = EditorState::with_scheduler(
            map,
            None,
            Scheduler::interactive(2, CompileSettings::default(), Arc::new(|| {})),
        );
        poll_until(&mut state, |s| s.bake.is_final());
        state.export_timestamp = Some(1);
        let chunks = state.bake.slots().len();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("saved");
        state.save_as(&path).unwrap();
        assert_eq!(std::fs::read_dir(cache::dir(&path)).unwrap().count(), chunks, "one entry per chunk");
        let before = state.compile().unwrap();
        drop(state);

        let (project, map) = Project::open(&path).unwrap();
        let mut state = EditorState::new(map, None, Arc::new(|| {}));
        state.export_timestamp = Some(1);
        assert!(state.bake.in_flight() > 0, "without its project a map is baked");
        state.load_document(state.map.clone(), Some(project));
        assert_eq!(state.bake.in_flight(), 0, "opened with every bake from the cache");
        assert_eq!(state.bake.take_changed().len(), chunks, "all of them on screen at once");
        assert!(state.compile().unwrap() == before, "the same file");
    }

    /// An undo step the map no longer matches (changed behind the history's back) is reported
    /// in the status line instead of being skipped silently.
    #[test]
    fn a_failed_undo_step_shows_in_the_status_line() {
        use pmfedit_core::edit::{Edit, ObjItem};
        use pmfedit_core::map::library::Light;
        let mut state = EditorState::new(sample::demo(), None, Arc::new(|| {}));
        let light = Light::point("probe", glam::Vec3::ZERO);
        state.apply(Command::Edit(Edit::AddObject { level: 0, item: ObjItem::Light(light) })).unwrap();
        let objects = &mut state.map.levels[0].objects;
        let id = objects.lights().iter().find(|(_, l)| l.name == "probe").map(|(id, _)| id).unwrap();
        objects.remove(id).unwrap();
        state.apply(Command::Undo).unwrap();
        let status = state.status.as_ref().map(|(s, _)| s.as_str()).unwrap_or_default();
        assert!(status.starts_with("Incomplete: undo of \"Add light probe\" failed"), "{status}");
    }
}
