//! Crash-safe project files: the editable map on disk.
//!
//! # Layout
//! ```text
//! my-map/
//!   map.ron                  manifest: metadata, library, levels, objects, chunk list (text)
//!   chunks/<hash>.bin        one chunk octree per file, named by its content hash (binary)
//!   .recovery/map.ron        autosave snapshot, only while there are unsaved edits
//! ```
//! See [`manifest`] for the manifest shape and [`chunk_file`] for the chunk file layout. The
//! manifest is pretty RON with every collection in a stable order and no timestamps, so a
//! project diffs well under version control; chunk files are content-addressed, so a save only
//! adds files for chunks whose content is new, and identical chunks share a file.
//!
//! # Saving ([`Project::save`])
//! 1. Check the map (metadata, library, levels, objects, ids of changed chunks); nothing is
//!    written if it fails.
//! 2. Hash the chunks. A chunk whose `Arc` allocation and generation are the ones seen at the last
//!    save (or load, or recovery write) reuses the remembered hash, so a save costs time in
//!    proportion to the edited chunks plus a small per-chunk bookkeeping cost.
//! 3. Write every referenced chunk file that is not in `chunks/` yet: `<hash>.bin.tmp`, fsync,
//!    rename to `<hash>.bin`, then fsync `chunks/`. An existing file is never overwritten.
//! 4. Write `map.ron.tmp`, fsync, rename over `map.ron`, fsync the project folder.
//! 5. Remove `.recovery/`, then delete chunk files (and stale `*.tmp`) that neither the new
//!    manifest nor a recovery manifest references. Failures here are reported in
//!    [`SaveReport::cleanup_warnings`], not as errors: the save is complete at step 4.
//!
//! # Why a crash loses nothing saved
//! Invariant: every chunk file named by a manifest on disk (`map.ron`, `.recovery/map.ron`)
//! exists with its complete content. Chunk files appear under their final name only after their
//! content is durable (step 3), and are never modified; the manifest switches from old to new
//! in one atomic rename (step 4), after the new chunk files' names are durable; files are
//! deleted only after that rename is durable, and only when no manifest names them (step 5).
//! So a crash or kill at any moment leaves `map.ron` as either the old or the new manifest, each
//! with all its chunk files; the worst leftovers are unreferenced chunk files and `*.tmp`
//! files, which the next save deletes. [`SaveOptions::fail_at`] stops a save after each step so
//! that tests check exactly this.
//!
//! # Autosave and recovery
//! The editor calls [`Project::write_recovery`] every few seconds while there are unsaved edits.
//! It writes the new chunk files into the same `chunks/` folder (so it costs about what a save
//! costs, and the next save finds those files already there) and `.recovery/map.ron` (atomic
//! replace), and never touches `map.ron`. On start, before [`Project::open`], the editor asks
//! [`Project::recovery_available`]; if it returns `Some` with `newer_than_manifest`, it offers
//! "recover unsaved changes": [`Project::open_recovery`] loads the snapshot (the editor should
//! then mark the map as modified), [`Project::discard_recovery`] throws it away (also on "close
//! without saving"). A normal save removes the recovery snapshot.
//!
//! # One writer at a time
//! Writing into a project takes an advisory lock on `.pmfedit.lock` in its folder, held until the
//! [`Project`] is dropped: [`create`](Project::create) takes it at once, an opened project at its
//! first save or recovery write, or when [`lock`](Project::lock) claims it right after opening
//! (what editors and importers do, so that a second one is refused before it starts working). A
//! second writer gets [`ProjectError::Locked`]: "the project is open in another process".
//! Reading ([`open`](Project::open)) takes no lock, so builds and watchers read a project an
//! editor has open. Temporary files have names unique to their writer ([`atomic`]), so even
//! writers that bypass the lock never rename each other's half-written files.
//!
//! No threads are started here: opening reads the chunk files as independent jobs that the
//! caller may run in parallel ([`Project::open_with`], [`crate::jobs`]).

pub mod atomic;
pub mod chunk_file;
mod duplicates;
pub mod limits;
pub mod manifest;

#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use self::manifest::{ChunkRef, LevelManifest, Manifest, ManifestError, RecoveryStamp};
use crate::jobs::{self, Jobs, Sequential};
use crate::map::coords::ChunkCoord;
use crate::map::ids::{MaterialId, PhysicsId, SoundId};
use crate::map::level::Chunk;
use crate::map::octree::Octree;
use crate::map::{Level, Library, Map};

/// The manifest file name.
pub const MANIFEST: &str = "map.ron";
/// The chunk folder name.
pub const CHUNKS_DIR: &str = "chunks";
/// The recovery folder name (holds its own `map.ron`).
pub const RECOVERY_DIR: &str = ".recovery";
/// Largest manifest read.
pub const MAX_MANIFEST_BYTES: u64 = 256 << 20;
/// The lock file writers hold (it holds the process id of the holder, for the message).
pub const LOCK_FILE: &str = ".pmfedit.lock";

/// Why a project operation failed. Messages start with the file concerned.
#[derive(Debug, thiserror::Error)]
pub enum ProjectError {
    /// A file system operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// A file's content was refused (`FILE[:LINE:COLUMN]: reason`).
    #[error("{}{}: {reason}", path.display(), location(position))]
    File {
        /// The file.
        path: PathBuf,
        /// Line and column (1-based) of a RON error.
        position: Option<(usize, usize)>,
        /// What is wrong.
        reason: String,
    },
    /// The map cannot be saved as it is (nothing was written).
    #[error("cannot save the map: {0}")]
    InvalidMap(#[from] manifest::CheckError),
    /// [`Project::create`] found a project.
    #[error("{}: a project already exists here", .0.display())]
    AlreadyExists(PathBuf),
    /// A save stopped by [`SaveOptions::fail_at`].
    #[error("save stopped at {0:?} (failure injection)")]
    Injected(SaveStep),
    /// Another writer holds the project's lock (see the module documentation).
    #[error("{}: the project is open in {}", dir.display(), holder_words(*holder))]
    Locked {
        /// The project folder.
        dir: PathBuf,
        /// The process id the lock file names, if it could be read.
        holder: Option<u32>,
    },
}

/// Who holds a project's lock, in words.
fn holder_words(holder: Option<u32>) -> String {
    match holder {
        Some(pid) if pid == std::process::id() => "another window of this process".to_owned(),
        Some(pid) => format!("another process (process {pid})"),
        None => "another process".to_owned(),
    }
}

fn location(position: &Option<(usize, usize)>) -> String {
    position.map(|(l, c)| format!(":{l}:{c}")).unwrap_or_default()
}

impl ProjectError {
    fn io(path: &Path) -> impl FnOnce(io::Error) -> ProjectError + '_ {
        move |source| ProjectError::Io { path: path.to_owned(), source }
    }

    fn file(path: &Path, reason: impl Into<String>) -> ProjectError {
        ProjectError::File { path: path.to_owned(), position: None, reason: reason.into() }
    }

    fn manifest(path: &Path, e: ManifestError) -> ProjectError {
        ProjectError::File { path: path.to_owned(), position: e.position, reason: e.reason }
    }
}

/// A point of a save after which [`SaveOptions::fail_at`] stops it, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SaveStep {
    /// The first new chunk file is in place (others may be missing).
    FirstChunkWritten,
    /// Every new chunk file is in place and `chunks/` synced.
    ChunksWritten,
    /// Half of `map.ron.tmp` is written (a crash while writing it).
    TempManifestPartial,
    /// `map.ron.tmp` is complete and synced; not renamed yet.
    TempManifestWritten,
    /// `map.ron` is the new manifest; recovery and old chunk files not yet removed.
    Renamed,
    /// The recovery snapshot is removed; old chunk files not yet deleted.
    RecoveryRemoved,
    /// The first unreferenced chunk file is deleted.
    FirstChunkDeleted,
}

impl SaveStep {
    /// Every step, in save order.
    pub const ALL: [SaveStep; 7] = [
        Self::FirstChunkWritten,
        Self::ChunksWritten,
        Self::TempManifestPartial,
        Self::TempManifestWritten,
        Self::Renamed,
        Self::RecoveryRemoved,
        Self::FirstChunkDeleted,
    ];

    /// Whether `map.ron` is the new manifest once a save stopped after this step.
    pub fn manifest_replaced(self) -> bool {
        self >= Self::Renamed
    }
}

/// Options of [`Project::save_with`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SaveOptions {
    /// **For tests only**: stop the save with [`ProjectError::Injected`] right after this step,
    /// leaving the files as a crash there would (simulates a kill; nothing is rolled back).
    pub fail_at: Option<SaveStep>,
}

/// What a save or recovery write did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SaveReport {
    /// Chunk files created.
    pub chunk_files_written: usize,
    /// Unreferenced chunk files deleted (and stale temporary files).
    pub chunk_files_deleted: usize,
    /// Chunks whose content hash had to be computed (changed since the last save, load or
    /// recovery write).
    pub chunks_hashed: usize,
    /// Bytes written: chunk files plus the manifest.
    pub bytes_written: u64,
    /// Wall time of the whole operation.
    pub duration: Duration,
    /// Cleanup problems after the manifest was replaced (the save itself succeeded).
    pub cleanup_warnings: Vec<String>,
}

/// A recovery snapshot found by [`Project::recovery_available`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveryInfo {
    /// When it was written.
    pub saved_at: SystemTime,
    /// Whether it holds edits newer than `map.ron`: it continues the current `map.ron`, or was
    /// written after it (or there is no `map.ron`). Offer recovery when this is true.
    pub newer_than_manifest: bool,
    /// Whether its edits started from exactly the current `map.ron` (false if `map.ron` was
    /// changed since, e.g. by a version-control update: warn before recovering).
    pub based_on_current_manifest: bool,
}

/// Remembered content hash of a chunk, valid while the chunk is the same allocation with the same
/// generation (see [`Project`]).
#[derive(Debug, Clone)]
struct ChunkMemo {
    generation: u64,
    chunk: Weak<Chunk>,
    hash: u64,
}

type LevelMemo = BTreeMap<ChunkCoord, ChunkMemo>;

/// Ids of the library at the last save or load: if none is gone, unchanged chunks cannot have
/// become invalid and only changed chunks need their ids checked.
#[derive(Debug, Clone, Default)]
struct LibraryIds {
    materials: Vec<MaterialId>,
    physics: Vec<PhysicsId>,
    sounds: Vec<SoundId>,
}

impl LibraryIds {
    fn of(lib: &Library) -> Self {
        Self {
            materials: lib.materials().ids().collect(),
            physics: lib.physics_materials().ids().collect(),
            sounds: lib.sound_materials().ids().collect(),
        }
    }

    fn all_still_in(&self, lib: &Library) -> bool {
        self.materials.iter().all(|&i| lib.materials().contains(i))
            && self.physics.iter().all(|&i| lib.physics_materials().contains(i))
            && self.sounds.iter().all(|&i| lib.sound_materials().contains(i))
    }
}

/// What [`Project`] remembers between saves. A cache only: wrong contents would cost time,
/// never correctness, as long as each hash is the hash of its chunk.
#[derive(Debug, Default)]
struct Memo {
    levels: Vec<LevelMemo>,
    /// Ids of the library of the last save or load; `None`: check every chunk.
    ids: Option<LibraryIds>,
}

/// An open project folder. See the [module documentation](self).
///
/// Remembers, per level and chunk, the content hash of the chunk it last saved, loaded or wrote
/// to the recovery, keyed by the chunk's generation and its `Arc` allocation (held as a `Weak`,
/// which keeps no chunk data alive). A chunk changed since then is either a new allocation (every
/// change goes through `Arc::make_mut`, which moves the value out of an allocation that others,
/// including weak references, point to) or has a new generation, so its hash is recomputed.
#[derive(Debug)]
pub struct Project {
    dir: PathBuf,
    memo: Mutex<Memo>,
    /// Fingerprint of the `map.ron` bytes last read or written.
    manifest_fingerprint: Option<u64>,
    /// The lock file, locked, once this project writes (see the module documentation).
    lock: Mutex<Option<File>>,
}

/// Takes the writer lock of the project in `dir` (creating the folder and the lock file).
fn take_lock(dir: &Path) -> Result<File, ProjectError> {
    fs::create_dir_all(dir).map_err(ProjectError::io(dir))?;
    let path = dir.join(LOCK_FILE);
    // Not truncated before it is ours: it names the holder.
    let mut f = File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(ProjectError::io(&path))?;
    match f.try_lock() {
        Ok(()) => {}
        Err(fs::TryLockError::WouldBlock) => {
            let mut text = String::new();
            let _ = f.read_to_string(&mut text);
            return Err(ProjectError::Locked { dir: dir.to_owned(), holder: text.trim().parse().ok() });
        }
        Err(fs::TryLockError::Error(e)) => return Err(ProjectError::io(&path)(e)),
    }
    // Best effort: the id only improves the message a second writer gets.
    let _ = f.set_len(0).and_then(|()| write!(f, "{}", std::process::id())).and_then(|()| f.flush());
    Ok(f)
}

/// The chunks of a map to save, with their hashes.
struct Plan<'m> {
    /// Per level: non-empty chunks in grid order.
    levels: Vec<Vec<(ChunkCoord, u64, &'m Arc<Chunk>)>>,
    memo: Vec<LevelMemo>,
    hashed: usize,
}

impl Project {
    /// A new, empty project in `dir` (created with its parents if needed). Refuses a folder that
    /// already holds a `map.ron`. Nothing is written until [`save`](Self::save).
    pub fn create(dir: impl AsRef<Path>) -> Result<Project, ProjectError> {
        let dir = dir.as_ref();
        let manifest = dir.join(MANIFEST);
        if manifest.exists() {
            return Err(ProjectError::AlreadyExists(dir.to_owned()));
        }
        let lock = take_lock(dir)?;
        // Another writer may have saved between the check and the lock.
        if manifest.exists() {
            return Err(ProjectError::AlreadyExists(dir.to_owned()));
        }
        Ok(Project {
            dir: dir.to_owned(),
            memo: Mutex::new(Memo::default()),
            manifest_fingerprint: None,
            lock: Mutex::new(Some(lock)),
        })
    }

    /// [`open`](Self::open), then [`lock`](Self::lock): opens the project for writing.
    pub fn open_locked(dir: impl AsRef<Path>) -> Result<(Project, Map), ProjectError> {
        Self::open_locked_with(dir, &Sequential)
    }

    /// [`open_locked`](Self::open_locked), the chunk files read as `jobs` (see
    /// [`open_with`](Self::open_with)).
    pub fn open_locked_with(dir: impl AsRef<Path>, jobs: &dyn Jobs) -> Result<(Project, Map), ProjectError> {
        let dir = dir.as_ref();
        let lock = take_lock(dir)?;
        let (p, map) = Self::open_with(dir, jobs)?;
        *p.lock.lock().unwrap_or_else(PoisonError::into_inner) = Some(lock);
        Ok((p, map))
    }

    /// Claims the project for writing now (saves and recovery writes claim it anyway): fails
    /// with [`ProjectError::Locked`] while another writer holds it. Held until the project is
    /// dropped.
    pub fn lock(&self) -> Result<(), ProjectError> {
        let mut held = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        if held.is_none() {
            *held = Some(take_lock(&self.dir)?);
        }
        Ok(())
    }

    /// Opens the project in `dir`: reads and checks `map.ron`, loads and checks every chunk file
    /// it names, and rebuilds the map. Ignores any recovery snapshot (see
    /// [`recovery_available`](Self::recovery_available)). Reads the chunk files one after the
    /// other; [`open_with`](Self::open_with) reads them in parallel.
    pub fn open(dir: impl AsRef<Path>) -> Result<(Project, Map), ProjectError> {
        Self::open_with(dir, &Sequential)
    }

    /// [`open`](Self::open), each chunk file read, decoded and checked as one of `jobs`
    /// (most of the time of opening a big map; [`Sequential`](crate::jobs::Sequential) is
    /// [`open`](Self::open)). The map, its chunk hashes and any error are the same whatever
    /// runs the jobs: the error is the first in manifest order.
    pub fn open_with(dir: impl AsRef<Path>, jobs: &dyn Jobs) -> Result<(Project, Map), ProjectError> {
        let dir = dir.as_ref();
        let path = dir.join(MANIFEST);
        let bytes = read_limited(&path, MAX_MANIFEST_BYTES)?;
        let fingerprint = manifest::fingerprint(&bytes);
        let (map, hashes) = load(dir, &path, &bytes, jobs)?;
        Ok((Project::loaded(dir, &map, &hashes, Some(fingerprint)), map))
    }

    /// The project folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A project for a map just loaded; `hashes` are the (checked) chunk hashes per level.
    fn loaded(dir: &Path, map: &Map, hashes: &[BTreeMap<ChunkCoord, u64>], fingerprint: Option<u64>) -> Project {
        let mut memo = Memo { levels: Vec::new(), ids: Some(LibraryIds::of(&map.library)) };
        for (level, hashes) in map.levels.iter().zip(hashes) {
            memo.levels
                .push(level.chunks().filter_map(|(c, ch)| Some((*c, ChunkMemo::of(ch, *hashes.get(c)?)))).collect());
        }
        Project {
            dir: dir.to_owned(),
            memo: Mutex::new(memo),
            manifest_fingerprint: fingerprint,
            lock: Mutex::new(None),
        }
    }

    /// Saves `map`; see the [module documentation](self).
    pub fn save(&mut self, map: &Map) -> Result<SaveReport, ProjectError> {
        self.save_with(map, &SaveOptions::default())
    }

    /// [`save`](Self::save) with options (failure injection for tests).
    pub fn save_with(&mut self, map: &Map, options: &SaveOptions) -> Result<SaveReport, ProjectError> {
        let start = Instant::now();
        let stop =
            |step: SaveStep| if options.fail_at == Some(step) { Err(ProjectError::Injected(step)) } else { Ok(()) };
        self.lock()?;
        let memo = self.memo.get_mut().unwrap_or_else(PoisonError::into_inner);
        let plan = plan(memo, map)?;
        let mut report = SaveReport { chunks_hashed: plan.hashed, ..SaveReport::default() };

        // New chunk files.
        let chunks_dir = self.dir.join(CHUNKS_DIR);
        fs::create_dir_all(&chunks_dir).map_err(ProjectError::io(&chunks_dir))?;
        let listing = list_chunks(&chunks_dir)?;
        let written =
            write_missing(&chunks_dir, map, &plan, &listing.files, &mut report, &|| stop(SaveStep::FirstChunkWritten))?;
        if !written.is_empty() {
            sync_dir(&chunks_dir)?;
        }
        stop(SaveStep::ChunksWritten)?;

        // The manifest.
        let text = manifest::write(&manifest_of(map, &plan, None));
        let path = self.dir.join(MANIFEST);
        let (tmp, file) = atomic::create_temp(&path).map_err(ProjectError::io(&path))?;
        if options.fail_at == Some(SaveStep::TempManifestPartial) {
            write_file(&tmp, file, &text.as_bytes()[..text.len() / 2])?;
            return Err(ProjectError::Injected(SaveStep::TempManifestPartial));
        }
        write_file(&tmp, file, text.as_bytes())?;
        report.bytes_written += text.len() as u64;
        stop(SaveStep::TempManifestWritten)?;
        fs::rename(&tmp, &path).map_err(ProjectError::io(&path))?;
        sync_dir(&self.dir)?;
        self.manifest_fingerprint = Some(manifest::fingerprint(text.as_bytes()));
        memo.levels = plan.memo;
        memo.ids = Some(LibraryIds::of(&map.library));
        stop(SaveStep::Renamed)?;

        // Cleanup: the recovery snapshot, then chunk files no manifest names.
        let recovery = self.dir.join(RECOVERY_DIR);
        if let Err(e) = remove_dir_if_exists(&recovery) {
            report.cleanup_warnings.push(format!("{}: {e}", recovery.display()));
        }
        stop(SaveStep::RecoveryRemoved)?;
        // Manifest temporaries of crashed saves (this writer holds the lock: none is live).
        remove_temps(&self.dir, MANIFEST, &mut report);
        let keep: BTreeSet<u64> = plan.levels.iter().flatten().map(|(_, h, _)| *h).collect();
        let candidates: BTreeSet<u64> = listing.files.union(&written).copied().collect();
        delete_unreferenced(&self.dir, keep, &candidates, &listing.temporary, &mut report, &|| {
            stop(SaveStep::FirstChunkDeleted)
        })?;
        report.duration = start.elapsed();
        Ok(report)
    }

    /// Writes a recovery snapshot of `map` (autosave): new chunk files into `chunks/`, the
    /// manifest into `.recovery/map.ron` (atomic replace). Leaves `map.ron` alone. Cheap: only
    /// chunks changed since the last save, load or recovery write are hashed, and only chunk
    /// files not on disk yet are written. Fails like [`save`](Self::save) on a map that cannot
    /// be saved.
    pub fn write_recovery(&self, map: &Map) -> Result<SaveReport, ProjectError> {
        let start = Instant::now();
        self.lock()?;
        let mut memo = self.memo.lock().unwrap_or_else(PoisonError::into_inner);
        let plan = plan(&memo, map)?;
        let mut report = SaveReport { chunks_hashed: plan.hashed, ..SaveReport::default() };
        let chunks_dir = self.dir.join(CHUNKS_DIR);
        fs::create_dir_all(&chunks_dir).map_err(ProjectError::io(&chunks_dir))?;
        let listing = list_chunks(&chunks_dir)?;
        let written = write_missing(&chunks_dir, map, &plan, &listing.files, &mut report, &|| Ok(()))?;
        if !written.is_empty() {
            sync_dir(&chunks_dir)?;
        }
        let stamp = RecoveryStamp {
            saved_at_ms: SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64),
            base_manifest: self.manifest_fingerprint.map(|f| format!("{f:016x}")),
        };
        let text = manifest::write(&manifest_of(map, &plan, Some(stamp)));
        let dir = self.dir.join(RECOVERY_DIR);
        fs::create_dir_all(&dir).map_err(ProjectError::io(&dir))?;
        let path = dir.join(MANIFEST);
        atomic::write_atomic(&path, text.as_bytes()).map_err(ProjectError::io(&path))?;
        report.bytes_written += text.len() as u64;
        memo.levels = plan.memo;
        report.duration = start.elapsed();
        Ok(report)
    }

    /// The recovery snapshot of the project in `dir`, if there is a readable one.
    pub fn recovery_available(dir: impl AsRef<Path>) -> Option<RecoveryInfo> {
        let dir = dir.as_ref();
        let bytes = read_limited(&dir.join(RECOVERY_DIR).join(MANIFEST), MAX_MANIFEST_BYTES).ok()?;
        let probe: manifest::Probe = manifest::parse(std::str::from_utf8(&bytes).ok()?).ok()?;
        let stamp = probe.recovery?;
        let saved_at = UNIX_EPOCH + Duration::from_millis(stamp.saved_at_ms);
        let base = stamp.base_manifest.as_deref().and_then(chunk_file::parse_hash);
        let main = dir.join(MANIFEST);
        let (newer, same_base) = match fs::read(&main) {
            Err(_) => (true, base.is_none()),
            Ok(current) => {
                let same = base == Some(manifest::fingerprint(&current));
                let written_after = fs::metadata(&main).and_then(|m| m.modified()).is_ok_and(|t| saved_at > t);
                (same || written_after, same)
            }
        };
        Some(RecoveryInfo { saved_at, newer_than_manifest: newer, based_on_current_manifest: same_base })
    }

    /// Opens the recovery snapshot of the project in `dir` (checked like [`open`](Self::open)).
    /// The snapshot stays on disk until the next save or [`discard_recovery`](Self::discard_recovery).
    pub fn open_recovery(dir: impl AsRef<Path>) -> Result<(Project, Map), ProjectError> {
        Self::open_recovery_with(dir, &Sequential)
    }

    /// [`open_recovery`](Self::open_recovery), the chunk files read as `jobs` (see
    /// [`open_with`](Self::open_with)).
    pub fn open_recovery_with(dir: impl AsRef<Path>, jobs: &dyn Jobs) -> Result<(Project, Map), ProjectError> {
        let dir = dir.as_ref();
        let path = dir.join(RECOVERY_DIR).join(MANIFEST);
        let bytes = read_limited(&path, MAX_MANIFEST_BYTES)?;
        let (map, hashes) = load(dir, &path, &bytes, jobs)?;
        let fingerprint = fs::read(dir.join(MANIFEST)).ok().map(|b| manifest::fingerprint(&b));
        Ok((Project::loaded(dir, &map, &hashes, fingerprint), map))
    }

    /// Deletes the recovery snapshot of the project in `dir`, and the chunk files only it used
    /// (when `map.ron` is readable; otherwise they stay until the next save).
    pub fn discard_recovery(dir: impl AsRef<Path>) -> Result<(), ProjectError> {
        let dir = dir.as_ref();
        // Deleting is writing: only while no writer holds the project.
        let _lock = take_lock(dir)?;
        let recovery = dir.join(RECOVERY_DIR);
        remove_dir_if_exists(&recovery).map_err(ProjectError::io(&recovery))?;
        let Ok(bytes) = read_limited(&dir.join(MANIFEST), MAX_MANIFEST_BYTES) else { return Ok(()) };
        let Some(m) = std::str::from_utf8(&bytes).ok().and_then(|t| manifest::read(t).ok()) else { return Ok(()) };
        let keep = manifest::referenced_hashes(&m);
        let chunks_dir = dir.join(CHUNKS_DIR);
        let listing = list_chunks(&chunks_dir)?;
        for h in listing.files.iter().filter(|h| !keep.contains(h)) {
            let p = chunks_dir.join(chunk_file::file_name(*h));
            fs::remove_file(&p).map_err(ProjectError::io(&p))?;
        }
        Ok(())
    }
}

impl ChunkMemo {
    fn of(chunk: &Arc<Chunk>, hash: u64) -> Self {
        ChunkMemo { generation: chunk.generation(), chunk: Arc::downgrade(chunk), hash }
    }

    /// Whether this memo still describes `chunk`.
    fn matches(&self, chunk: &Arc<Chunk>) -> bool {
        self.generation == chunk.generation() && self.chunk.upgrade().is_some_and(|a| Arc::ptr_eq(&a, chunk))
    }
}

/// Checks the map and finds every chunk's hash (remembered or computed).
fn plan<'m>(memo: &Memo, map: &'m Map) -> Result<Plan<'m>, ProjectError> {
    manifest::check_map(map).map_err(ProjectError::InvalidMap)?;
    let check_all = !memo.ids.as_ref().is_some_and(|ids| ids.all_still_in(&map.library));
    let mut plan = Plan { levels: Vec::with_capacity(map.levels.len()), memo: Vec::new(), hashed: 0 };
    for (i, level) in map.levels.iter().enumerate() {
        let old = memo.levels.get(i);
        let mut chunks = Vec::with_capacity(level.chunk_count());
        let mut new_memo = LevelMemo::new();
        for (c, ch) in level.chunks() {
            if ch.octree().is_empty() {
                continue;
            }
            let known = old.and_then(|m| m.get(c)).filter(|m| m.matches(ch)).map(|m| m.hash);
            if known.is_none() || check_all {
                chunk_file::check_octree_ids(ch.octree(), &map.library)
                    .map_err(|error| manifest::CheckError::ChunkIds { level: level.name.clone(), chunk: *c, error })?;
            }
            let hash = known.unwrap_or_else(|| {
                plan.hashed += 1;
                ch.octree().content_hash()
            });
            chunks.push((*c, hash, ch));
            new_memo.insert(*c, ChunkMemo::of(ch, hash));
        }
        plan.levels.push(chunks);
        plan.memo.push(new_memo);
    }
    Ok(plan)
}

/// Writes the chunk files of `plan` missing from `existing`; returns the hashes written.
/// `after_first` runs after the first file is in place (failure injection).
///
/// All temporary files are written first and synced afterwards, so that one journal commit can
/// carry many of them (a full save of 1 000 chunks would otherwise wait for 1 000 commits);
/// each is renamed to its final name only once synced.
fn write_missing(
    chunks_dir: &Path,
    map: &Map,
    plan: &Plan<'_>,
    existing: &BTreeSet<u64>,
    report: &mut SaveReport,
    after_first: &dyn Fn() -> Result<(), ProjectError>,
) -> Result<BTreeSet<u64>, ProjectError> {
    let mut pending = BTreeSet::new();
    let mut temps = BTreeMap::new();
    for (level, chunks) in map.levels.iter().zip(&plan.levels) {
        for &(_, hash, ch) in chunks {
            if existing.contains(&hash) || !pending.insert(hash) {
                continue;
            }
            let bytes = chunk_file::encode(ch.octree(), level.chunk_size_log2());
            let path = chunks_dir.join(chunk_file::file_name(hash));
            let (tmp, mut f) = atomic::create_temp(&path).map_err(ProjectError::io(&path))?;
            f.write_all(&bytes).map_err(ProjectError::io(&tmp))?;
            report.bytes_written += bytes.len() as u64;
            temps.insert(hash, tmp);
        }
    }
    let mut written = BTreeSet::new();
    for &hash in &pending {
        let path = chunks_dir.join(chunk_file::file_name(hash));
        let tmp = &temps[&hash];
        File::options().write(true).open(tmp).and_then(|f| f.sync_all()).map_err(ProjectError::io(tmp))?;
        fs::rename(tmp, &path).map_err(ProjectError::io(&path))?;
        written.insert(hash);
        report.chunk_files_written += 1;
        if written.len() == 1 {
            after_first()?;
        }
    }
    Ok(written)
}

/// The manifest of `map` with the planned chunk hashes.
fn manifest_of<'m>(map: &'m Map, plan: &Plan<'m>, recovery: Option<RecoveryStamp>) -> Manifest<'m> {
    Manifest {
        format_version: manifest::FORMAT_VERSION,
        recovery,
        meta: Cow::Borrowed(&map.meta),
        library: Cow::Borrowed(&map.library),
        path_sets: Cow::Borrowed(&map.path_sets),
        levels: map
            .levels
            .iter()
            .zip(&plan.levels)
            .map(|(level, chunks)| LevelManifest {
                name: Cow::Borrowed(&level.name),
                chunk_size_log2: level.chunk_size_log2(),
                center_chunk: level.center_chunk(),
                flags: level.flags,
                environments: Cow::Borrowed(&level.environments),
                air_physics_material: level.air_physics_material,
                objects: Cow::Borrowed(&level.objects),
                lighting: level.lighting,
                chunks: chunks.iter().map(|&(c, h, _)| ChunkRef::new(c, h)).collect(),
            })
            .collect(),
    }
}

/// Reads and checks the manifest at `path` (bytes given) and every chunk file it names, the
/// chunk files as independent `jobs`. Returns the map and, per level, the content hash of each
/// chunk. Whatever runs the jobs, the map, the hashes and the error (the first in manifest
/// order) are the same.
fn load(
    dir: &Path,
    path: &Path,
    bytes: &[u8],
    jobs: &dyn Jobs,
) -> Result<(Map, Vec<BTreeMap<ChunkCoord, u64>>), ProjectError> {
    let text = std::str::from_utf8(bytes).map_err(|e| ProjectError::file(path, format!("not UTF-8 text: {e}")))?;
    let m = manifest::read(text).map_err(|e| ProjectError::manifest(path, e))?;
    let chunks_dir = dir.join(CHUNKS_DIR);
    let at = |li: usize, ci: usize| {
        let (lm, c) = (&m.levels[li], &m.levels[li].chunks[ci]);
        format!("level {:?}, chunk ({}, {}, {})", lm.name, c.0, c.1, c.2)
    };

    // The chunk files to read, by (hash, chunk size), in the order of their first use
    // (identical chunks are read once), with that use and how many chunks use each.
    let mut files: Vec<ChunkFile> = Vec::new();
    let mut file_of: Vec<Vec<usize>> = Vec::with_capacity(m.levels.len());
    let mut index: BTreeMap<(u64, u8), usize> = BTreeMap::new();
    for (li, lm) in m.levels.iter().enumerate() {
        let mut level = Vec::with_capacity(lm.chunks.len());
        for (ci, c) in lm.chunks.iter().enumerate() {
            let hash = chunk_file::parse_hash(&c.3).expect("checked by manifest::read");
            let k = *index.entry((hash, lm.chunk_size_log2)).or_insert_with(|| {
                files.push(ChunkFile { hash, size: lm.chunk_size_log2, first_use: (li, ci), uses: 0 });
                files.len() - 1
            });
            files[k].uses += 1;
            level.push(k);
        }
        file_of.push(level);
    }
    // Once a file fails, the files first used after it are skipped: the walk below stops at
    // that failure (or an earlier one) before it needs them.
    let first_failure = AtomicUsize::new(usize::MAX);
    let mut decoded: Vec<Option<Result<Octree, ProjectError>>> = jobs::map(jobs, files.len(), |k| {
        if k > first_failure.load(Ordering::Relaxed) {
            return None;
        }
        let f = &files[k];
        let r = load_chunk(&chunks_dir, f.hash, f.size, &m.library, || at(f.first_use.0, f.first_use.1));
        if r.is_err() {
            first_failure.fetch_min(k, Ordering::Relaxed);
        }
        Some(r)
    });

    // The map, in manifest order: the checks in the order of a sequential load.
    let mut levels = Vec::with_capacity(m.levels.len());
    let mut hashes = Vec::with_capacity(m.levels.len());
    for (li, (lm, level_files)) in m.levels.iter().zip(&file_of).enumerate() {
        let mut level_hashes = BTreeMap::new();
        let mut level = Level::new(lm.name.as_ref(), lm.chunk_size_log2)
            .map_err(|e| ProjectError::file(path, format!("level {:?}: {e}", lm.name)))?;
        level.set_center_chunk(lm.center_chunk).map_err(|e| ProjectError::file(path, e.to_string()))?;
        for (ci, (c, &k)) in lm.chunks.iter().zip(level_files).enumerate() {
            let file = &mut files[k];
            let slot = &mut decoded[k];
            let octree = match slot.take().expect("files before the first failure are decoded") {
                Err(e) => return Err(e),
                // The last chunk that uses a file takes its octree; the others copy it (two
                // `Vec`s, not a rebuild).
                Ok(octree) => {
                    file.uses -= 1;
                    if file.uses > 0 {
                        *slot = Some(Ok(octree.clone()));
                    }
                    octree
                }
            };
            level
                .insert_chunk(c.coord(), octree)
                .map_err(|e| ProjectError::file(path, format!("{}: {e}", at(li, ci))))?;
            level_hashes.insert(c.coord(), file.hash);
        }
        levels.push(level);
        hashes.push(level_hashes);
    }
    drop(decoded);
    for (level, lm) in levels.iter_mut().zip(m.levels) {
        level.flags = lm.flags;
        level.environments = lm.environments.into_owned();
        level.air_physics_material = lm.air_physics_material;
        level.objects = lm.objects.into_owned();
        level.lighting = lm.lighting;
    }
    // Projects from before path attribute sets have none: their painted ids keep exporting as
    // `user_<id>` (PathSets::attribute) until sets are named for them, and load then save
    // gives the same bytes.
    let path_sets = m.path_sets.into_owned();
    Ok((Map { meta: m.meta.into_owned(), library: m.library.into_owned(), levels, path_sets }, hashes))
}

/// A chunk file [`load`] reads: its name, its level's chunk size, the first chunk that uses it
/// (level and index in the manifest) and how many chunks use it.
struct ChunkFile {
    hash: u64,
    size: u8,
    first_use: (usize, usize),
    uses: usize,
}

/// Reads and checks `chunks/<hash>.bin` for a level of chunk size `size`; `at` names the first
/// chunk that uses it.
fn load_chunk(
    chunks_dir: &Path,
    hash: u64,
    size: u8,
    library: &Library,
    at: impl FnOnce() -> String,
) -> Result<Octree, ProjectError> {
    let file = chunks_dir.join(chunk_file::file_name(hash));
    let data = match read_limited(&file, chunk_file::MAX_PAYLOAD) {
        Ok(d) => d,
        Err(ProjectError::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
            return Err(ProjectError::file(&file, format!("missing ({} names it in {MANIFEST})", at())));
        }
        Err(e) => return Err(e),
    };
    // The hash comes with the decoding, which reads the nodes in the order it hashes them.
    let (octree, actual) =
        chunk_file::decode_hashed(&data, size, Some(library)).map_err(|e| ProjectError::file(&file, e.to_string()))?;
    if actual != hash {
        return Err(ProjectError::file(
            &file,
            format!("content hash is {actual:016x}, not the {hash:016x} of its name"),
        ));
    }
    Ok(octree)
}

// ----- files ----------------------------------------------------------------------------------

/// Chunk files and leftover temporary files of a `chunks/` folder.
struct Listing {
    files: BTreeSet<u64>,
    temporary: Vec<PathBuf>,
}

/// Deletes the chunk files among `candidates` that neither `keep` nor a recovery manifest names,
/// and the `temporary` leftovers. Problems become warnings; an unreadable recovery manifest
/// stops the deletion (its files might be needed). `after_first` runs after the first deletion.
fn delete_unreferenced(
    dir: &Path,
    mut keep: BTreeSet<u64>,
    candidates: &BTreeSet<u64>,
    temporary: &[PathBuf],
    report: &mut SaveReport,
    after_first: &dyn Fn() -> Result<(), ProjectError>,
) -> Result<(), ProjectError> {
    match recovery_manifest_refs(dir) {
        Ok(refs) => keep.extend(refs),
        Err(e) => {
            report.cleanup_warnings.push(format!("{e} (so no chunk file was deleted)"));
            return Ok(());
        }
    }
    let chunks_dir = dir.join(CHUNKS_DIR);
    let mut first = true;
    for h in candidates.iter().filter(|h| !keep.contains(h)) {
        let p = chunks_dir.join(chunk_file::file_name(*h));
        match fs::remove_file(&p) {
            Ok(()) => report.chunk_files_deleted += 1,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => report.cleanup_warnings.push(format!("{}: {e}", p.display())),
        }
        if std::mem::take(&mut first) {
            after_first()?;
        }
    }
    for p in temporary {
        if let Err(e) = fs::remove_file(p)
            && e.kind() != io::ErrorKind::NotFound
        {
            report.cleanup_warnings.push(format!("{}: {e}", p.display()));
        }
    }
    Ok(())
}

/// Lists `chunks/`: files named like chunk files, and `*.tmp` leftovers. Other files are ignored
/// (and never deleted). A missing folder is empty.
fn list_chunks(chunks_dir: &Path) -> Result<Listing, ProjectError> {
    let mut listing = Listing { files: BTreeSet::new(), temporary: Vec::new() };
    let entries = match fs::read_dir(chunks_dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(listing),
        Err(e) => return Err(ProjectError::io(chunks_dir)(e)),
    };
    for entry in entries {
        let entry = entry.map_err(ProjectError::io(chunks_dir))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if let Some(h) = chunk_file::parse_file_name(name) {
            listing.files.insert(h);
        } else if name
            .get(..20)
            .and_then(chunk_file::parse_file_name)
            .is_some_and(|h| atomic::is_temp_of(name, &chunk_file::file_name(h)))
        {
            listing.temporary.push(entry.path());
        }
    }
    Ok(listing)
}

/// The chunk files a recovery manifest names; empty when there is none. An unreadable one is
/// an error (its files must not be deleted).
fn recovery_manifest_refs(dir: &Path) -> Result<BTreeSet<u64>, ProjectError> {
    let path = dir.join(RECOVERY_DIR).join(MANIFEST);
    let bytes = match read_limited(&path, MAX_MANIFEST_BYTES) {
        Ok(b) => b,
        Err(ProjectError::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
            return Ok(BTreeSet::new());
        }
        Err(e) => return Err(e),
    };
    let text = std::str::from_utf8(&bytes).map_err(|e| ProjectError::file(&path, e.to_string()))?;
    let m: Manifest<'_> = manifest::parse(text).map_err(|e| ProjectError::manifest(&path, e))?;
    Ok(manifest::referenced_hashes(&m))
}

/// Reads a whole file of at most `limit` bytes.
fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, ProjectError> {
    let file = File::open(path).map_err(ProjectError::io(path))?;
    let len = file.metadata().map_err(ProjectError::io(path))?.len();
    if len > limit {
        return Err(ProjectError::file(path, format!("{len} bytes is more than the {limit} accepted")));
    }
    let mut out = Vec::with_capacity(len as usize);
    file.take(limit + 1).read_to_end(&mut out).map_err(ProjectError::io(path))?;
    if out.len() as u64 > limit {
        return Err(ProjectError::file(path, format!("more than the {limit} bytes accepted")));
    }
    Ok(out)
}

/// Writes `bytes` into the new file `f` (at `path`) and syncs it to disk.
fn write_file(path: &Path, mut f: File, bytes: &[u8]) -> Result<(), ProjectError> {
    f.write_all(bytes).map_err(ProjectError::io(path))?;
    f.sync_all().map_err(ProjectError::io(path))
}

/// Makes the names in `dir` durable ([`atomic::sync_dir`]).
fn sync_dir(dir: &Path) -> Result<(), ProjectError> {
    atomic::sync_dir(dir).map_err(ProjectError::io(dir))
}

/// Removes the temporary files of `base` in `dir` that crashed writes left ([`atomic::is_temp_of`]).
fn remove_temps(dir: &Path, base: &str, report: &mut SaveReport) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if name.to_str().is_some_and(|n| atomic::is_temp_of(n, base))
            && let Err(e) = fs::remove_file(entry.path())
            && e.kind() != io::ErrorKind::NotFound
        {
            report.cleanup_warnings.push(format!("{}: {e}", entry.path().display()));
        }
    }
}

/// Removes a folder and everything in it; a missing folder is fine.
fn remove_dir_if_exists(dir: &Path) -> io::Result<()> {
    match fs::remove_dir_all(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        r => r,
    }
}
