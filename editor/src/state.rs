//! The editor's document and everything derived from it: the map, its undo history, the project
//! it is saved in, the latest bake of every chunk, the selection and the current tool settings.
//! [`EditorState::apply`] is the one place that changes the map.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use glam::DVec3;

use pmfedit_bake::compile::{ChunkBake, CompileSettings, compile, level_chunks};
use pmfedit_bake::deps::{ChunkKey, dirty_chunks};
use pmfedit_bake::scheduler::{BakeEvent, BakeFn, Scheduler, Stage};
use pmfedit_core::edit::{ChangeSet, History};
use pmfedit_core::format::pmf;
use pmfedit_core::map::Map;
use pmfedit_core::map::coords::CubeAddr;
use pmfedit_core::map::ids::{MaterialId, PathAttrs};
use pmfedit_core::map::library::{EntityId, LightId, LoadRegionId, RegionId};
use pmfedit_core::project::Project;

use crate::command::Command;
use crate::tools::ToolKind;

/// What is selected.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Selection {
    #[default]
    None,
    /// A box of cubes (level lattice, max exclusive).
    Cubes {
        level: usize,
        min: glam::IVec3,
        max: glam::IVec3,
    },
    Cube {
        level: usize,
        addr: CubeAddr,
    },
    Light {
        level: usize,
        id: LightId,
    },
    Entity {
        level: usize,
        id: EntityId,
    },
    Region {
        level: usize,
        id: RegionId,
    },
    LoadRegion {
        level: usize,
        id: LoadRegionId,
    },
}

/// Bake bookkeeping for the viewport and the bake panel.
///
/// Each re-bake comes in stages (see [`pmfedit_bake::scheduler`]): for the chunks an edit changed
/// a draft (the mesh with cheap lighting: hard shadows) first, then for every dirty chunk a
/// preview (mesh and lightmaps, the same as the full bake's) that the viewport draws at once, then
/// the full bake (visibility and pathfinding too) that exports compile from. A chunk is in
/// `pending` until its draft or preview arrives, in `drafts` while it is drawn from a draft, and
/// in `finalizing` until its full bake arrives (so `pending ⊆ finalizing`, `drafts ⊆ finalizing`).
#[derive(Debug, Default)]
pub struct BakeStatus {
    /// The newest bake of each chunk, preview or full (the viewport draws these).
    pub bakes: BTreeMap<ChunkKey, Arc<ChunkBake>>,
    /// The newest full bake of each chunk (exports and the visibility view use these; never a
    /// preview).
    pub full: BTreeMap<ChunkKey, Arc<ChunkBake>>,
    /// Chunks waiting for a re-baked mesh (drawn tinted with their previous mesh).
    pub pending: BTreeSet<ChunkKey>,
    /// Chunks drawn from a draft bake, waiting for their exact lightmaps (preview).
    pub drafts: BTreeSet<ChunkKey>,
    /// Chunks whose full bake (visibility, pathfinding) is not in yet; includes `pending`.
    pub finalizing: BTreeSet<ChunkKey>,
    /// Per chunk: milliseconds of its last full bake.
    pub last_ms: BTreeMap<ChunkKey, f64>,
    /// Per chunk: milliseconds of its last preview bake.
    pub last_preview_ms: BTreeMap<ChunkKey, f64>,
    /// Per chunk: milliseconds of its last draft bake.
    pub last_draft_ms: BTreeMap<ChunkKey, f64>,
    /// Errors and panics, newest last.
    pub errors: Vec<String>,
    /// Bumped whenever `bakes` changes, so the viewport knows to upload.
    pub revision: u64,
    /// Chunks whose bake changed since the viewport last looked (it clears this).
    pub changed: BTreeSet<ChunkKey>,
}

impl BakeStatus {
    /// Chunks with a re-baked mesh whose full bake (visibility, pathfinding) is still running.
    pub fn finishing(&self) -> usize {
        self.finalizing.iter().filter(|k| !self.pending.contains(k)).count()
    }

    /// Whether every chunk has its full bake (nothing pending in either stage).
    pub fn all_full(&self) -> bool {
        self.finalizing.is_empty() && self.pending.is_empty()
    }

    fn clear(&mut self) {
        self.bakes.clear();
        self.full.clear();
        self.pending.clear();
        self.drafts.clear();
        self.finalizing.clear();
        self.changed.clear();
    }

    fn done(&mut self, key: ChunkKey) {
        self.pending.remove(&key);
        self.drafts.remove(&key);
        self.finalizing.remove(&key);
    }

    /// Draws `bake` (a draft or a preview) for its chunk.
    fn draw(&mut self, bake: ChunkBake) {
        let key = (bake.level, bake.chunk);
        self.pending.remove(&key);
        self.bakes.insert(key, Arc::new(bake));
        self.changed.insert(key);
        self.revision += 1;
    }
}

/// The document and the editor settings around it.
pub struct EditorState {
    pub map: Map,
    pub history: History,
    /// Where the map is saved; `None` for a new, unsaved map.
    pub project: Option<Project>,
    pub compile_settings: CompileSettings,
    pub bake: BakeStatus,
    scheduler: Scheduler,
    pub selection: Selection,
    pub tool: ToolKind,
    pub material: MaterialId,
    /// The path attribute set the path tool paints.
    pub path_set: PathAttrs,
    /// Cube edge as a power of two in lattice units (3 = one map unit).
    pub cube_log2: u8,
    /// Active level.
    pub level: usize,
    /// A camera request for the viewport (it takes it).
    pub camera_request: Option<(DVec3, f64)>,
    /// Status-bar message and when it was set.
    pub status: Option<(String, Instant)>,
    /// An export waiting for the bake to catch up.
    pub pending_export: Option<PathBuf>,
    last_recovery: Instant,
    /// Bumped whenever the map changes (edit, undo, redo, a history jump, a new document).
    generation: u64,
}

impl EditorState {
    /// A document for `map`; `wake` is called from bake threads when results arrive.
    pub fn new(map: Map, project: Option<Project>, wake: Arc<dyn Fn() + Send + Sync>) -> Self {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 8);
        let compile_settings = CompileSettings::default();
        let scheduler = Scheduler::interactive(threads, compile_settings.clone(), wake);
        Self::with_scheduler(map, project, compile_settings, scheduler)
    }

    /// Like [`EditorState::new`] with another bake function and thread count (tests use it to
    /// hold bakes back).
    pub fn with_bake_fn(
        map: Map,
        project: Option<Project>,
        threads: usize,
        wake: Arc<dyn Fn() + Send + Sync>,
        bake: Arc<BakeFn>,
    ) -> Self {
        let compile_settings = CompileSettings::default();
        let scheduler = Scheduler::with_bake_fn(threads, compile_settings.clone(), wake, bake);
        Self::with_scheduler(map, project, compile_settings, scheduler)
    }

    fn with_scheduler(
        map: Map,
        project: Option<Project>,
        compile_settings: CompileSettings,
        scheduler: Scheduler,
    ) -> Self {
        let mut s = Self {
            map,
            history: History::new(),
            project,
            compile_settings,
            bake: BakeStatus::default(),
            scheduler,
            selection: Selection::None,
            tool: ToolKind::default(),
            material: MaterialId(0),
            path_set: PathAttrs(1),
            cube_log2: 3,
            level: 0,
            camera_request: None,
            status: None,
            pending_export: None,
            last_recovery: Instant::now(),
            generation: 0,
        };
        s.history.set_saved();
        s.rebake_all();
        s
    }

    /// A number that changes whenever the map does (an applied edit, undo, redo, a history jump,
    /// a new or opened document): background work started on a snapshot compares it to know
    /// whether the map changed meanwhile.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Whether there are edits since the last save.
    pub fn is_dirty(&self) -> bool {
        !self.history.is_saved()
    }

    /// Queues every chunk of every level.
    pub fn rebake_all(&mut self) {
        let keys: Vec<ChunkKey> = self
            .map
            .levels
            .iter()
            .enumerate()
            .flat_map(|(li, l)| level_chunks(l).into_iter().chain(l.chunks().map(|(c, _)| *c)).map(move |c| (li, c)))
            .collect();
        self.submit(keys);
    }

    fn submit(&mut self, keys: impl IntoIterator<Item = ChunkKey>) {
        self.submit_with_urgent(keys, &BTreeSet::new());
    }

    /// Queues `keys`; those also in `urgent` (the chunks an edit changed) bake first.
    fn submit_with_urgent(&mut self, keys: impl IntoIterator<Item = ChunkKey>, urgent: &BTreeSet<ChunkKey>) {
        let keys: Vec<ChunkKey> = keys.into_iter().collect();
        if keys.is_empty() {
            return;
        }
        self.bake.pending.extend(keys.iter().copied());
        self.bake.finalizing.extend(keys.iter().copied());
        let snapshot = Arc::new(self.map.snapshot());
        let (first, rest): (Vec<ChunkKey>, Vec<ChunkKey>) = keys.into_iter().partition(|k| urgent.contains(k));
        // Urgent first: an idle worker woken by the first submit takes the edited chunk's draft,
        // not a neighbour's preview.
        self.scheduler.submit_urgent(snapshot.clone(), first);
        self.scheduler.submit(snapshot, rest);
    }

    /// Re-bakes what `changes` dirtied (`before` is the map before the change).
    fn changed(&mut self, before: &Map, changes: &ChangeSet) {
        if let Some(m) = changes.failure_message() {
            self.say(m);
        }
        if changes.is_empty() {
            return;
        }
        // Path attribute sets change what every chunk's pathfinding data says.
        if changes.level_list || changes.path_sets {
            self.bake.bakes.clear();
            self.bake.full.clear();
            self.rebake_all();
            return;
        }
        let radius = self.compile_settings.visibility.as_ref().map_or(0, |v| v.radius_chunks as i32);
        let mut dirty = dirty_chunks(before, &self.map, changes, radius);
        // Chunks that entered the exported grid.
        for (li, l) in self.map.levels.iter().enumerate() {
            for c in level_chunks(l) {
                if !self.bake.full.contains_key(&(li, c)) && !self.bake.finalizing.contains(&(li, c)) {
                    dirty.insert((li, c));
                }
            }
        }
        // The chunks whose cubes changed (the edited chunk's mesh matters most) go first.
        let urgent: BTreeSet<ChunkKey> =
            changes.levels.iter().flat_map(|(&li, lc)| lc.chunks.iter().map(move |(c, _)| (li, c))).collect();
        self.submit_with_urgent(dirty, &urgent);
    }

    /// Where bakes go nearest-first.
    pub fn set_camera(&self, level: usize, position: DVec3) {
        self.scheduler.set_camera(level, position);
    }

    /// Takes finished bakes from the scheduler. Call once per frame.
    pub fn poll_bakes(&mut self) {
        for event in self.scheduler.drain() {
            match event {
                BakeEvent::Baked { bake, elapsed, stage: Stage::Draft } => {
                    // The new geometry with approximate lighting, until the preview comes.
                    let key = (bake.level, bake.chunk);
                    self.bake.last_draft_ms.insert(key, elapsed.as_secs_f64() * 1e3);
                    self.bake.drafts.insert(key);
                    self.bake.draw(*bake);
                }
                BakeEvent::Baked { bake, elapsed, stage: Stage::Preview } => {
                    // The mesh is final; the chunk stays in `finalizing` for its full bake.
                    let key = (bake.level, bake.chunk);
                    self.bake.last_preview_ms.insert(key, elapsed.as_secs_f64() * 1e3);
                    self.bake.drafts.remove(&key);
                    self.bake.draw(*bake);
                }
                BakeEvent::Baked { bake, elapsed, stage: Stage::Full } => {
                    let key = (bake.level, bake.chunk);
                    // Its preview, if it arrived, drew the same mesh and lightmaps: no upload.
                    // Without one (dropped as late), draw this bake.
                    let drawn = !self.bake.pending.contains(&key) && !self.bake.drafts.contains(&key);
                    self.bake.done(key);
                    self.bake.last_ms.insert(key, elapsed.as_secs_f64() * 1e3);
                    let bake = Arc::new(*bake);
                    self.bake.full.insert(key, bake.clone());
                    self.bake.bakes.insert(key, bake);
                    if !drawn {
                        self.bake.changed.insert(key);
                    }
                    self.bake.revision += 1;
                }
                // A failed draft or preview ends its request (the scheduler cancels the rest).
                BakeEvent::Failed { key, error, .. } => {
                    self.bake.done(key);
                    self.bake.errors.push(error);
                }
                BakeEvent::Panicked { key, message, stage } => {
                    self.bake.done(key);
                    self.bake.errors.push(format!(
                        "level {}, chunk {:?}: {} bake panicked: {message}",
                        key.0,
                        key.1,
                        stage.label()
                    ));
                }
            }
        }
        // Exports compile from full bakes only.
        if self.bake.all_full() {
            if let Some(path) = self.pending_export.take() {
                self.export_now(&path);
            }
        }
    }

    /// Chunks waiting for a re-baked mesh (preview).
    pub fn baking(&self) -> usize {
        self.bake.pending.len()
    }

    /// Chunks whose mesh is in but whose full bake (visibility, pathfinding) is still running.
    pub fn finishing(&self) -> usize {
        self.bake.finishing()
    }

    /// Sets the status-bar message.
    pub fn say(&mut self, msg: impl Into<String>) {
        self.status = Some((msg.into(), Instant::now()));
    }

    /// Carries out queued commands, in order.
    pub fn apply_all(&mut self, commands: Vec<Command>) {
        for c in commands {
            self.apply(c);
        }
    }

    /// Carries out one command.
    pub fn apply(&mut self, command: Command) {
        match command {
            Command::Edit(edit) => {
                let before = self.map.snapshot();
                match self.history.apply(&mut self.map, edit) {
                    Ok(changes) => {
                        self.generation += 1;
                        self.changed(&before, &changes);
                    }
                    Err(e) => self.say(format!("Refused: {e}")),
                }
            }
            Command::BeginStroke => {
                self.history.begin_stroke();
            }
            Command::EndStroke => self.history.end_stroke(),
            Command::Undo => {
                let before = self.map.snapshot();
                if let Some(c) = self.history.undo(&mut self.map) {
                    self.generation += 1;
                    self.changed(&before, &c);
                }
            }
            Command::Redo => {
                let before = self.map.snapshot();
                if let Some(c) = self.history.redo(&mut self.map) {
                    self.generation += 1;
                    self.changed(&before, &c);
                }
            }
            Command::GoTo(head) => {
                let before = self.map.snapshot();
                let from = self.history.head();
                let c = self.history.go_to(&mut self.map, head);
                if self.history.head() != from {
                    self.generation += 1;
                }
                self.changed(&before, &c);
            }
            Command::Select(s) => self.selection = s,
            Command::SetTool(t) => self.tool = t,
            Command::SetMaterial(m) => self.material = m,
            Command::SetPathSet(s) => self.path_set = s,
            Command::SetCubeSize(n) => self.cube_log2 = n.min(18),
            Command::Frame { target, distance } => self.camera_request = Some((target, distance)),
            Command::NewMap => self.replace_document(Map::new("untitled"), None),
            Command::Open(path) => match Project::open(&path).and_then(|(p, m)| self.claim(&p).map(|()| (p, m))) {
                Ok((project, map)) => {
                    self.replace_document(map, Some(project));
                    self.say(format!("Opened {}", path.display()));
                }
                Err(e) => self.say(format!("{}: {e}", path.display())),
            },
            Command::Save => match self.project.as_mut() {
                Some(p) => match p.save(&self.map) {
                    Ok(r) => {
                        self.history.set_saved();
                        self.say(format!("Saved ({} chunk files written)", r.chunk_files_written));
                    }
                    Err(e) => self.say(format!("Save failed: {e}")),
                },
                None => self.say("Choose a folder with Save As first"),
            },
            Command::SaveAs(path) => match Project::create(&path) {
                Ok(p) => {
                    self.project = Some(p);
                    self.apply(Command::Save);
                }
                Err(e) => self.say(format!("{}: {e}", path.display())),
            },
            Command::Export(path) => {
                // Only full bakes are exported: wait for every chunk's.
                if self.bake.all_full() {
                    self.export_now(&path);
                } else {
                    self.say(format!("Exporting when {} chunks finish baking…", self.bake.finalizing.len()));
                    self.pending_export = Some(path);
                }
            }
            Command::Status(s) => self.say(s),
            Command::SetLevel(i) => self.level = i.min(self.map.levels.len().saturating_sub(1)),
            Command::DropFiles { files, pick, whole_cube } => {
                crate::dnd::drop_files(self, &files, pick.as_ref(), whole_cube)
            }
        }
        // A removed level may leave the active index past the end.
        self.level = self.level.min(self.map.levels.len().saturating_sub(1));
    }

    /// Replaces the document (after opening, recovering or creating a map): the history is
    /// cleared and the new state counts as saved.
    /// Takes the writer lock of a project about to be opened (another process holding it is an
    /// error); reopening the open project hands its lock over.
    pub fn claim(&mut self, project: &Project) -> Result<(), pmfedit_core::project::ProjectError> {
        if self.project.as_ref().is_some_and(|p| p.dir() == project.dir()) {
            self.project = None;
        }
        project.lock()
    }

    pub fn load_document(&mut self, map: Map, project: Option<Project>) {
        self.replace_document(map, project);
    }

    fn replace_document(&mut self, map: Map, project: Option<Project>) {
        self.generation += 1;
        self.map = map;
        self.project = project;
        self.history = History::new();
        self.history.set_saved();
        self.selection = Selection::None;
        self.bake.clear();
        self.bake.revision += 1;
        self.level = 0;
        self.rebake_all();
    }

    /// Compiles the current full bakes into a file (every chunk must have one; previews are
    /// never exported).
    pub fn compile(&self) -> Result<pmf::File, String> {
        let bakes: BTreeMap<ChunkKey, ChunkBake> =
            self.bake.full.iter().map(|(k, b)| (*k, ChunkBake::clone(b))).collect();
        let settings = CompileSettings {
            timestamp: std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()),
            ..self.compile_settings.clone()
        };
        compile(&self.map, &bakes, &settings).map_err(|e| e.to_string())
    }

    fn export_now(&mut self, path: &Path) {
        let result = self.compile().and_then(|f| pmf::write(&f).map_err(|e| e.to_string())).and_then(|bytes| {
            pmfedit_core::project::atomic::write_atomic(path, &bytes).map_err(|e| e.to_string())?;
            Ok(bytes.len())
        });
        match result {
            Ok(n) => self.say(format!("Exported {} ({n} bytes)", path.display())),
            Err(e) => self.say(format!("Export failed: {}: {e}", path.display())),
        }
    }

    /// Writes the recovery snapshot every few seconds while there are unsaved edits.
    pub fn autosave(&mut self) {
        if !self.is_dirty() || self.last_recovery.elapsed() < Duration::from_secs(5) {
            return;
        }
        self.last_recovery = Instant::now();
        if let Some(p) = &self.project {
            if let Err(e) = p.write_recovery(&self.map) {
                self.bake.errors.push(format!("autosave: {e}"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! Two-stage bakes in the document: previews draw at once, exports wait for full bakes.

    use std::sync::{Condvar, Mutex};

    use pmfedit_bake::compile::{bake_chunk, compile_full};
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
    }

    /// Polls until `cond` holds (bounded).
    fn poll_until(state: &mut EditorState, mut cond: impl FnMut(&EditorState) -> bool) {
        let t = Instant::now();
        loop {
            state.poll_bakes();
            if cond(state) {
                return;
            }
            assert!(t.elapsed() < Duration::from_secs(120), "timed out");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// A document whose full bakes wait for the gate (previews do not).
    fn gated_state(gate: &Arc<Gate>) -> EditorState {
        let g = gate.clone();
        let bake: Arc<BakeFn> = Arc::new(move |m: &Map, l, c, s: &CompileSettings| {
            if !s.is_preview() {
                g.wait();
            }
            bake_chunk(m, l, c, s).map_err(|e| e.to_string())
        });
        EditorState::with_bake_fn(sample::demo(), None, 2, Arc::new(|| {}), bake)
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
        state.apply(Command::Edit(edit));
        (0, lo)
    }

    #[test]
    fn previews_draw_while_full_bakes_finish_and_export_waits_for_them() {
        let gate = Arc::new(Gate::default());
        let mut state = gated_state(&gate);
        poll_until(&mut state, |s| s.bake.pending.is_empty());
        // Every mesh is drawn (no tint), nothing is fully baked yet.
        assert!(!state.bake.bakes.is_empty());
        assert!(!state.bake.changed.is_empty());
        assert!(state.bake.full.is_empty());
        assert_eq!(state.bake.finalizing.len(), state.bake.bakes.len());
        assert_eq!((state.baking(), state.finishing()), (0, state.bake.bakes.len()));
        assert!(!state.bake.all_full());

        // An export now must wait: it would otherwise write previews (no visibility).
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.pmf");
        state.apply(Command::Export(path.clone()));
        assert_eq!(state.pending_export.as_deref(), Some(path.as_path()));
        for _ in 0..20 {
            state.poll_bakes();
        }
        assert!(!path.exists(), "exported before the full bakes");
        assert!(state.compile().is_err(), "compiled without full bakes");

        gate.open();
        state.bake.changed.clear();
        poll_until(&mut state, |s| s.pending_export.is_none());
        assert!(state.bake.all_full());
        assert_eq!(state.bake.full.len(), state.bake.bakes.len());
        // The previews already drew these meshes: the full bakes are not uploaded again.
        assert!(state.bake.changed.is_empty(), "{:?}", state.bake.changed);

        // The file is the full compile: visibility and pathfinding included.
        let bytes = std::fs::read(&path).unwrap();
        let file = pmf::read(&bytes).unwrap();
        let settings = CompileSettings { timestamp: file.header.creation_time, ..CompileSettings::default() };
        let expected = pmf::write(&compile_full(&state.map, &settings).unwrap()).unwrap();
        assert!(bytes == expected, "the export differs from a full compile");
        let chunks = file.levels.iter().flat_map(|l| &l.chunks);
        assert!(chunks.flat_map(|c| &c.common.cubes).any(|c| c.visibility.is_some()));
    }

    /// An edit's changed chunk is drawn from its draft while its preview is held back, then the
    /// preview replaces the draft; dirty neighbours (no draft) stay tinted meanwhile.
    #[test]
    fn an_edited_chunk_is_drawn_from_its_draft_until_its_preview_arrives() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let hold = Arc::new(AtomicBool::new(false));
        let h = hold.clone();
        let draft = CompileSettings::default().draft();
        let bake: Arc<BakeFn> = Arc::new(move |m: &Map, l, c, s: &CompileSettings| {
            // Held while `hold` (bounded, so a failing test cannot hang in the scheduler's drop).
            let t = Instant::now();
            while h.load(Ordering::SeqCst) && *s != draft && t.elapsed() < Duration::from_secs(200) {
                std::thread::sleep(Duration::from_millis(2));
            }
            bake_chunk(m, l, c, s).map_err(|e| e.to_string())
        });
        let mut state = EditorState::with_bake_fn(sample::demo(), None, 2, Arc::new(|| {}), bake);
        poll_until(&mut state, |s| s.bake.all_full());
        assert!(state.bake.drafts.is_empty(), "a plain load makes no drafts");

        hold.store(true, Ordering::SeqCst);
        let edited = toggle_a_cube(&mut state);
        let dirty = state.bake.pending.clone();
        assert!(dirty.contains(&edited) && dirty.len() > 1, "{dirty:?}");
        poll_until(&mut state, |s| !s.bake.pending.contains(&edited));
        assert_eq!(state.bake.drafts.iter().copied().collect::<Vec<_>>(), [edited]);
        assert!(state.bake.changed.contains(&edited), "the draft is not queued for upload");
        assert!(state.bake.last_draft_ms.contains_key(&edited));
        assert!(!state.bake.bakes[&edited].pmf.client.lightmaps.is_empty());
        // The neighbours have no draft: they wait, tinted, for their previews.
        assert_eq!(state.bake.pending.len(), dirty.len() - 1);

        hold.store(false, Ordering::SeqCst);
        poll_until(&mut state, |s| s.bake.all_full());
        assert!(state.bake.drafts.is_empty());
        // What is drawn now is the exact bake: the same as the full bake's mesh and lightmaps.
        let exact = bake_chunk(&state.map, 0, edited.1, &CompileSettings::default()).unwrap();
        assert!(state.bake.bakes[&edited].pmf.client == exact.pmf.client, "the draft is still drawn");
    }

    #[test]
    fn an_edit_while_full_bakes_run_keeps_export_waiting() {
        let gate = Arc::new(Gate::default());
        let mut state = gated_state(&gate);
        poll_until(&mut state, |s| s.bake.pending.is_empty());
        gate.open();
        poll_until(&mut state, |s| s.bake.all_full());
        let before = state.bake.full.clone();

        // Edit one cube: its chunks get previews, then full bakes; until then the export waits
        // and the old full bakes stay what would be exported.
        toggle_a_cube(&mut state);
        let dirty = state.bake.finalizing.clone();
        assert!(!dirty.is_empty());
        assert!(dirty.iter().all(|k| state.bake.pending.contains(k)));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.pmf");
        state.apply(Command::Export(path.clone()));
        poll_until(&mut state, |s| s.pending_export.is_none());
        assert!(path.exists());
        assert!(state.bake.all_full());
        for k in &dirty {
            if let Some(old) = before.get(k) {
                assert!(!Arc::ptr_eq(old, &state.bake.full[k]), "{k:?} not re-baked");
            }
            assert!(Arc::ptr_eq(&state.bake.bakes[k], &state.bake.full[k]));
        }
    }

    /// An undo step the map no longer matches (changed behind the history's back) is reported
    /// in the status line instead of being skipped silently.
    #[test]
    fn a_failed_undo_step_shows_in_the_status_line() {
        use pmfedit_core::edit::{Edit, ObjItem};
        use pmfedit_core::map::library::Light;
        let mut state = EditorState::new(sample::demo(), None, Arc::new(|| {}));
        let light = Light::point("probe", glam::Vec3::ZERO);
        state.apply(Command::Edit(Edit::AddObject { level: 0, item: ObjItem::Light(light) }));
        let objects = &mut state.map.levels[0].objects;
        let id = objects.lights().iter().find(|(_, l)| l.name == "probe").map(|(id, _)| id).unwrap();
        objects.remove(id).unwrap();
        state.apply(Command::Undo);
        let status = state.status.as_ref().map(|(s, _)| s.as_str()).unwrap_or_default();
        assert!(status.starts_with("Incomplete: undo of \"Add light probe\" failed"), "{status}");
    }
}
