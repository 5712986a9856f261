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
use pmfedit_bake::scheduler::{BakeEvent, Scheduler};
use pmfedit_core::edit::{ChangeSet, History};
use pmfedit_core::format::pmf;
use pmfedit_core::map::Map;
use pmfedit_core::map::coords::CubeAddr;
use pmfedit_core::map::ids::MaterialId;
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
#[derive(Debug, Default)]
pub struct BakeStatus {
    /// The newest bake of each chunk (the viewport draws these).
    pub bakes: BTreeMap<ChunkKey, Arc<ChunkBake>>,
    /// Chunks waiting for a re-bake (drawn tinted with their previous mesh).
    pub pending: BTreeSet<ChunkKey>,
    /// Per chunk: milliseconds of its last bake.
    pub last_ms: BTreeMap<ChunkKey, f64>,
    /// Errors and panics, newest last.
    pub errors: Vec<String>,
    /// Bumped whenever `bakes` changes, so the viewport knows to upload.
    pub revision: u64,
    /// Chunks whose bake changed since the viewport last looked (it clears this).
    pub changed: BTreeSet<ChunkKey>,
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
}

impl EditorState {
    /// A document for `map`; `wake` is called from bake threads when results arrive.
    pub fn new(map: Map, project: Option<Project>, wake: Arc<dyn Fn() + Send + Sync>) -> Self {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 8);
        let compile_settings = CompileSettings::default();
        let scheduler = Scheduler::new(threads, compile_settings.clone(), wake);
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
            cube_log2: 3,
            level: 0,
            camera_request: None,
            status: None,
            pending_export: None,
            last_recovery: Instant::now(),
        };
        s.history.set_saved();
        s.rebake_all();
        s
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
        let keys: Vec<ChunkKey> = keys.into_iter().collect();
        if keys.is_empty() {
            return;
        }
        self.bake.pending.extend(keys.iter().copied());
        self.scheduler.submit(Arc::new(self.map.snapshot()), keys);
    }

    /// Re-bakes what `changes` dirtied (`before` is the map before the change).
    fn changed(&mut self, before: &Map, changes: &ChangeSet) {
        if changes.is_empty() {
            return;
        }
        if changes.level_list {
            self.bake.bakes.clear();
            self.rebake_all();
            return;
        }
        let radius = self.compile_settings.visibility.as_ref().map_or(0, |v| v.radius_chunks as i32);
        let mut dirty = dirty_chunks(before, &self.map, changes, radius);
        // Chunks that entered the exported grid.
        for (li, l) in self.map.levels.iter().enumerate() {
            for c in level_chunks(l) {
                if !self.bake.bakes.contains_key(&(li, c)) && !self.bake.pending.contains(&(li, c)) {
                    dirty.insert((li, c));
                }
            }
        }
        self.submit(dirty);
    }

    /// Where bakes go nearest-first.
    pub fn set_camera(&self, level: usize, position: DVec3) {
        self.scheduler.set_camera(level, position);
    }

    /// Takes finished bakes from the scheduler. Call once per frame.
    pub fn poll_bakes(&mut self) {
        for event in self.scheduler.drain() {
            match event {
                BakeEvent::Baked { bake, elapsed } => {
                    let key = (bake.level, bake.chunk);
                    self.bake.pending.remove(&key);
                    self.bake.last_ms.insert(key, elapsed.as_secs_f64() * 1e3);
                    self.bake.bakes.insert(key, Arc::new(*bake));
                    self.bake.changed.insert(key);
                    self.bake.revision += 1;
                }
                BakeEvent::Failed { key, error } => {
                    self.bake.pending.remove(&key);
                    self.bake.errors.push(error);
                }
                BakeEvent::Panicked { key, message } => {
                    self.bake.pending.remove(&key);
                    self.bake.errors.push(format!("level {}, chunk {:?}: bake panicked: {message}", key.0, key.1));
                }
            }
        }
        if self.bake.pending.is_empty() {
            if let Some(path) = self.pending_export.take() {
                self.export_now(&path);
            }
        }
    }

    /// Chunks baking or queued.
    pub fn baking(&self) -> usize {
        self.bake.pending.len()
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
                    Ok(changes) => self.changed(&before, &changes),
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
                    self.changed(&before, &c);
                }
            }
            Command::Redo => {
                let before = self.map.snapshot();
                if let Some(c) = self.history.redo(&mut self.map) {
                    self.changed(&before, &c);
                }
            }
            Command::GoTo(head) => {
                let before = self.map.snapshot();
                let c = self.history.go_to(&mut self.map, head);
                self.changed(&before, &c);
            }
            Command::Select(s) => self.selection = s,
            Command::SetTool(t) => self.tool = t,
            Command::SetMaterial(m) => self.material = m,
            Command::SetCubeSize(n) => self.cube_log2 = n.min(18),
            Command::Frame { target, distance } => self.camera_request = Some((target, distance)),
            Command::NewMap => self.replace_document(Map::new("untitled"), None),
            Command::Open(path) => match Project::open(&path) {
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
                if self.bake.pending.is_empty() {
                    self.export_now(&path);
                } else {
                    self.say(format!("Exporting when {} chunks finish baking…", self.bake.pending.len()));
                    self.pending_export = Some(path);
                }
            }
            Command::Status(s) => self.say(s),
            Command::SetLevel(i) => self.level = i.min(self.map.levels.len().saturating_sub(1)),
        }
        // A removed level may leave the active index past the end.
        self.level = self.level.min(self.map.levels.len().saturating_sub(1));
    }

    /// Replaces the document (after opening, recovering or creating a map): the history is
    /// cleared and the new state counts as saved.
    pub fn load_document(&mut self, map: Map, project: Option<Project>) {
        self.replace_document(map, project);
    }

    fn replace_document(&mut self, map: Map, project: Option<Project>) {
        self.map = map;
        self.project = project;
        self.history = History::new();
        self.history.set_saved();
        self.selection = Selection::None;
        self.bake.bakes.clear();
        self.bake.pending.clear();
        self.bake.changed.clear();
        self.bake.revision += 1;
        self.level = 0;
        self.rebake_all();
    }

    /// Compiles the current bakes into a file (every chunk must have a bake).
    pub fn compile(&self) -> Result<pmf::File, String> {
        let bakes: BTreeMap<ChunkKey, ChunkBake> =
            self.bake.bakes.iter().map(|(k, b)| (*k, ChunkBake::clone(b))).collect();
        let settings = CompileSettings {
            timestamp: std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()),
            ..self.compile_settings.clone()
        };
        compile(&self.map, &bakes, &settings).map_err(|e| e.to_string())
    }

    fn export_now(&mut self, path: &Path) {
        let result = self.compile().and_then(|f| pmf::write(&f).map_err(|e| e.to_string())).and_then(|bytes| {
            std::fs::write(path, &bytes).map_err(|e| e.to_string())?;
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
