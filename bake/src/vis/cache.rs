//! [`VisCache`]: chunk summaries kept between bakes, so that a level's summaries are computed
//! once per map version rather than once per chunk bake, and only changed chunks are summarized
//! again after an edit.
//!
//! A cache is a memo, never an input: every answer equals what computing it afresh from the
//! snapshot would give. Entries are keyed by the identity of the chunk they were computed from
//! (chunks live behind `Arc`; an edit replaces the `Arc`), and the cache holds a `Weak` to it so
//! the address cannot be reused while the entry lives.
//!
//! It also keeps each chunk's last *own lists* ([`OwnLists`]): what the cell lists of a chunk's
//! own cubes are, in its layout's cube indices, and which summary component each list's far part
//! is looked up from. They depend on the chunk's own cubes, the layout settings, the opaque
//! materials and the voxel size only (docs/spec/PMF-NOTES.md V1), so a re-bake of a chunk whose
//! cubes did not change (a neighbour re-baked for its light) takes them instead of working them
//! out again ([`VisCache::own_lists`]). Likewise each chunk's last pathfinding records, which
//! depend on its cubes, the top cubes of the chunk below and the library's solid physics
//! materials and the map's attribute sets (P1; [`VisCache::path_records`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use glam::IVec3;
use pmfedit_core::format::pmf;
use pmfedit_core::map::coords::ChunkCoord;
use pmfedit_core::map::ids::PhysicsId;
use pmfedit_core::map::level::Chunk;
use pmfedit_core::map::path_sets::PathSets;
use pmfedit_core::map::{Level, Library, Map};

use crate::layout::BakeSettings;

use super::search::SummaryGrid;
use super::summary::{ChunkSummary, MAX_VOXELS_LOG2, OpaqueMaterials};
use super::{LevelVis, VisSettings};

/// The summaries of one level's grid, with what they were made from.
#[derive(Debug)]
struct LevelEntry {
    min: IVec3,
    max: IVec3,
    chunk_log2: u8,
    /// The stored chunks of the grid the summaries were made from, in PMF order.
    chunks: Vec<(ChunkCoord, Weak<Chunk>)>,
    grid: Arc<SummaryGrid>,
}

#[derive(Debug, Default)]
struct Inner {
    /// What every summary below was computed for.
    opaque: OpaqueMaterials,
    chunk_log2: u8,
    /// Each stored chunk's summary and geometry cubes (solid leaves), with the chunk they are of.
    summaries: HashMap<(usize, ChunkCoord), SummaryEntry>,
    levels: HashMap<usize, LevelEntry>,
    air: Option<Arc<ChunkSummary>>,
    /// Each stored chunk's last own lists, with the chunk and layout settings they were made from.
    own: HashMap<(usize, ChunkCoord), OwnEntry>,
    /// The own lists of a chunk the level does not store (all air), with the layout settings they
    /// were made from: the same for every such chunk, as they depend on its cubes only.
    air_own: Option<(BakeSettings, Arc<OwnLists>)>,
    /// Each stored chunk's last pathfinding records, with what they were made from.
    paths: HashMap<(usize, ChunkCoord), PathEntry>,
}

/// A chunk's summary and geometry cubes, with the chunk they are of.
type SummaryEntry = (Weak<Chunk>, Arc<ChunkSummary>, u32);

/// A chunk's last own lists: the chunk and the layout settings they were made from.
type OwnEntry = (Weak<Chunk>, BakeSettings, Arc<OwnLists>);

/// A snapshot and its levels' summaries ([`VisCache::remember`]).
type Snapshot = (Weak<Map>, HashMap<usize, LevelVis>);

#[derive(Debug)]
struct PathEntry {
    chunk: Weak<Chunk>,
    /// The chunk below (its top cubes are the floors of the bottom cells), if stored.
    below: Option<Weak<Chunk>>,
    bake: BakeSettings,
    inputs: PathInputs,
    records: Arc<PathRecords>,
}

/// What a chunk's pathfinding data (PMF-NOTES P1) depends on besides its cubes, the cubes of the
/// chunk below and the layout settings: which physics materials are not solid, and the map's
/// attribute sets.
#[derive(Debug, Clone, PartialEq)]
pub struct PathInputs {
    pub not_solid: Vec<(PhysicsId, bool)>,
    pub sets: PathSets,
}

impl PathInputs {
    pub fn of(library: &Library, sets: &PathSets) -> PathInputs {
        PathInputs {
            not_solid: library.physics_materials().iter().map(|(id, p)| (id, p.not_solid)).collect(),
            sets: sets.clone(),
        }
    }
}

/// A chunk's pathfinding records: per air cell with attributes, its index in the chunk's cubes
/// and its attributes, in cell order.
pub type PathRecords = Vec<(u32, Box<[pmf::PathAttribute]>)>;

/// A chunk's own visibility lists (V1: the visible cubes of the cell's own chunk), in the
/// indices of its layout's cubes, and per air cell its list: a function of the chunk's cubes,
/// the layout settings, the opaque materials and the voxel size only. The far part of a cell's
/// lists is the far set of the summary component its list names, looked up in the level's
/// summary grid as it is when the lists are written.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OwnLists {
    /// Per list: the visible cubes of the chunk itself (indices into its cubes, ascending), and
    /// the face component of the chunk's summary whose far set the list names (`None`: none).
    pub lists: Vec<(Arc<[u32]>, Option<u16>)>,
    /// Per air cell: its index in the chunk's cubes and its list.
    pub cells: Vec<(u32, u32)>,
}

/// What the bakes that used a [`VisCache`] did with their air cells, since it was made
/// ([`VisCache::work`]); take the difference of two readings for the bakes between them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AirWork {
    /// Own lists taken from the chunk's earlier bake ([`VisCache::own_lists`]).
    pub own_reused: u64,
    /// Own lists worked out.
    pub own_made: u64,
    /// Pathfinding records taken from the chunk's earlier bake ([`VisCache::path_records`]).
    pub paths_reused: u64,
    /// Pathfinding records worked out.
    pub paths_made: u64,
    /// Visibility stage time of those bakes, summed (own lists, far lists written from the grid,
    /// the grid looked up or, for the first bake after a change, made), in nanoseconds.
    pub vis_ns: u64,
    /// Pathfinding stage time of those bakes, summed, in nanoseconds.
    pub path_ns: u64,
}

impl std::ops::Sub for AirWork {
    type Output = AirWork;
    fn sub(self, o: AirWork) -> AirWork {
        AirWork {
            own_reused: self.own_reused - o.own_reused,
            own_made: self.own_made - o.own_made,
            paths_reused: self.paths_reused - o.paths_reused,
            paths_made: self.paths_made - o.paths_made,
            vis_ns: self.vis_ns - o.vis_ns,
            path_ns: self.path_ns - o.path_ns,
        }
    }
}

/// Chunk summaries and level summary grids, shared by the bakes of a scheduler (and by the rebuild
/// engine, which compares a changed chunk's summaries before and after an edit).
#[derive(Debug)]
pub struct VisCache {
    settings: VisSettings,
    inner: Mutex<Inner>,
    /// The snapshot [`Self::remember`] was last given, and its levels' summaries.
    snapshot: Mutex<Option<Snapshot>>,
    /// Whether own lists and path records are kept for the next bake ([`Self::set_keep`]).
    keep: AtomicBool,
    /// [`AirWork`]'s counters.
    own_reused: AtomicU64,
    own_made: AtomicU64,
    paths_reused: AtomicU64,
    paths_made: AtomicU64,
    vis_ns: AtomicU64,
    path_ns: AtomicU64,
}

impl VisCache {
    /// An empty cache for bakes with `settings`.
    pub fn new(settings: VisSettings) -> VisCache {
        VisCache {
            settings,
            inner: Mutex::new(Inner::default()),
            snapshot: Mutex::new(None),
            keep: AtomicBool::new(true),
            own_reused: AtomicU64::new(0),
            own_made: AtomicU64::new(0),
            paths_reused: AtomicU64::new(0),
            paths_made: AtomicU64::new(0),
            vis_ns: AtomicU64::new(0),
            path_ns: AtomicU64::new(0),
        }
    }

    /// Whether bakes keep their own lists and pathfinding records here for the next bake of the
    /// same chunk (on by default: the editor's and `pmfc watch`'s engines re-bake). A one-shot
    /// build bakes every chunk once: keeping them would only hold a second copy of every
    /// chunk's lists until the end (on `terrain(32,4,32)`, ~140 MiB at `pmfc build`'s peak).
    /// Turning it off drops what is kept.
    pub fn set_keep(&self, keep: bool) {
        self.keep.store(keep, Ordering::Relaxed);
        if !keep {
            let mut inner = self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            inner.own.clear();
            inner.air_own = None;
            inner.paths.clear();
        }
    }

    /// Whether bakes keep their own lists and path records here ([`Self::set_keep`]).
    pub fn keeps(&self) -> bool {
        self.keep.load(Ordering::Relaxed)
    }

    /// The settings the cache serves.
    pub fn settings(&self) -> &VisSettings {
        &self.settings
    }

    fn lock(&self, library: &Library, chunk_log2: u8) -> MutexGuard<'_, Inner> {
        // A panicking bake cannot leave the memo half-written in a way that matters: every entry
        // is checked against its key before use.
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let opaque = OpaqueMaterials::of(library);
        if inner.opaque != opaque || inner.chunk_log2 != chunk_log2 {
            *inner = Inner { opaque, chunk_log2, ..Inner::default() };
        }
        inner
    }

    fn nl(&self, chunk_log2: u8) -> u8 {
        self.settings.voxels_log2.min(MAX_VOXELS_LOG2).min(chunk_log2)
    }

    /// The summary of chunk `chunk` of `level` (level index `li`).
    pub fn summary(&self, level: &Level, library: &Library, li: usize, chunk: ChunkCoord) -> Arc<ChunkSummary> {
        let chunk_log2 = level.frame().chunk_lattice_log2();
        let mut inner = self.lock(library, chunk_log2);
        let nl = self.nl(chunk_log2);
        Self::summary_locked(&mut inner, &self.settings, nl, li, chunk, level.chunk(chunk)).0
    }

    /// Remembers `lv`, what [`Self::level`] gave for level `li` of `map` over its whole grid,
    /// for the bakes of this very snapshot ([`Self::remembered`]); forgets any other snapshot's.
    pub fn remember(&self, map: &Arc<Map>, li: usize, lv: LevelVis) {
        let mut snap = self.snapshot.lock().unwrap_or_else(|e| e.into_inner());
        match &mut *snap {
            Some((w, levels)) if w.as_ptr() == Arc::as_ptr(map) => {
                levels.insert(li, lv);
            }
            _ => *snap = Some((Arc::downgrade(map), HashMap::from([(li, lv)]))),
        }
    }

    /// What [`Self::remember`] was given for level `li` of `map`, if `map` is that snapshot: the
    /// same allocation, which the `Weak` kept from being reused, and whose `Map` cannot have
    /// changed (an `Arc` with a `Weak` beside it is never mutated in place, and this `map` lives).
    pub fn remembered(&self, map: &Map, li: usize) -> Option<LevelVis> {
        let snap = self.snapshot.lock().unwrap_or_else(|e| e.into_inner());
        match &*snap {
            Some((w, levels)) if std::ptr::eq(w.as_ptr(), map) => levels.get(&li).cloned(),
            _ => None,
        }
    }

    /// The own lists of chunk `chunk` of level `li` (stored as `stored`; `None`: an all-air chunk
    /// the level does not store) laid out with `bake`: those kept from an earlier bake of this
    /// very chunk (the same `Arc`, so the same cubes; for a chunk not stored, those of any chunk
    /// not stored) with the same layout settings, opaque materials and voxel size, or else
    /// `make`'s, kept for the next bake. Returns whether they were kept ones. The lock is not
    /// held while `make` runs.
    pub fn own_lists<E>(
        &self,
        library: &Library,
        chunk_log2: u8,
        key: (usize, ChunkCoord),
        stored: Option<&Arc<Chunk>>,
        bake: &BakeSettings,
        make: impl FnOnce() -> Result<OwnLists, E>,
    ) -> Result<(Arc<OwnLists>, bool), E> {
        {
            let inner = self.lock(library, chunk_log2);
            let kept = match stored {
                Some(ch) => inner
                    .own
                    .get(&key)
                    .filter(|(w, b, _)| w.as_ptr() == Arc::as_ptr(ch) && b == bake)
                    .map(|(_, _, own)| own.clone()),
                // Every chunk the level does not store has the same (no) cubes.
                None => inner.air_own.as_ref().filter(|(b, _)| b == bake).map(|(_, own)| own.clone()),
            };
            if let Some(own) = kept {
                self.own_reused.fetch_add(1, Ordering::Relaxed);
                return Ok((own, true));
            }
        }
        let own = Arc::new(make()?);
        self.own_made.fetch_add(1, Ordering::Relaxed);
        if !self.keeps() {
            return Ok((own, false));
        }
        let mut inner = self.lock(library, chunk_log2);
        match stored {
            Some(ch) => {
                inner.own.insert(key, (Arc::downgrade(ch), *bake, own.clone()));
            }
            None => {
                inner.own.remove(&key);
                inner.air_own = Some((*bake, own.clone()));
            }
        }
        Ok((own, false))
    }

    /// The pathfinding records of chunk `chunk` of level `li` (stored as `stored`, the chunk below
    /// stored as `below`) laid out with `bake`, made from `inputs`: those kept from an earlier
    /// bake of this very chunk over the very same chunk below (the same `Arc`s) with the same
    /// layout settings and inputs, or else `make`'s, kept for the next bake. Returns whether they
    /// were kept ones. The lock is not held while `make` runs.
    #[allow(clippy::too_many_arguments)]
    pub fn path_records<E>(
        &self,
        library: &Library,
        chunk_log2: u8,
        key: (usize, ChunkCoord),
        stored: Option<&Arc<Chunk>>,
        below: Option<&Arc<Chunk>>,
        bake: &BakeSettings,
        inputs: PathInputs,
        make: impl FnOnce() -> Result<PathRecords, E>,
    ) -> Result<(Arc<PathRecords>, bool), E> {
        let same = |w: &Weak<Chunk>, a: &Arc<Chunk>| w.as_ptr() == Arc::as_ptr(a);
        if let Some(ch) = stored {
            let inner = self.lock(library, chunk_log2);
            if let Some(e) = inner.paths.get(&key)
                && same(&e.chunk, ch)
                && match (&e.below, below) {
                    (None, None) => true,
                    (Some(w), Some(a)) => same(w, a),
                    _ => false,
                }
                && e.bake == *bake
                && e.inputs == inputs
            {
                self.paths_reused.fetch_add(1, Ordering::Relaxed);
                return Ok((e.records.clone(), true));
            }
        }
        let records = Arc::new(make()?);
        self.paths_made.fetch_add(1, Ordering::Relaxed);
        if !self.keeps() {
            return Ok((records, false));
        }
        let mut inner = self.lock(library, chunk_log2);
        match stored {
            Some(ch) => {
                let entry = PathEntry {
                    chunk: Arc::downgrade(ch),
                    below: below.map(Arc::downgrade),
                    bake: *bake,
                    inputs,
                    records: records.clone(),
                };
                inner.paths.insert(key, entry)
            }
            None => inner.paths.remove(&key),
        };
        Ok((records, false))
    }

    /// Keeps `own` and `paths` (with what they were made from) as the last bake's of chunk
    /// `chunk` of level `li`, stored as `stored` over `below`, laid out with `bake`: for a bake
    /// made earlier of this very chunk and level ([`crate::rebuild::Rebuild::with_bakes`], from
    /// the bake cache, whose key covers everything both depend on).
    #[allow(clippy::too_many_arguments)]
    pub fn keep(
        &self,
        library: &Library,
        chunk_log2: u8,
        key: (usize, ChunkCoord),
        stored: &Arc<Chunk>,
        below: Option<&Arc<Chunk>>,
        bake: &BakeSettings,
        own: Option<Arc<OwnLists>>,
        paths: Option<(PathInputs, PathRecords)>,
    ) {
        if !self.keeps() {
            return;
        }
        let mut inner = self.lock(library, chunk_log2);
        if let Some(own) = own {
            inner.own.insert(key, (Arc::downgrade(stored), *bake, own));
        }
        if let Some((inputs, records)) = paths {
            let entry = PathEntry {
                chunk: Arc::downgrade(stored),
                below: below.map(Arc::downgrade),
                bake: *bake,
                inputs,
                records: Arc::new(records),
            };
            inner.paths.insert(key, entry);
        }
    }

    /// What the bakes that used the cache did with their air cells so far.
    pub fn work(&self) -> AirWork {
        AirWork {
            own_reused: self.own_reused.load(Ordering::Relaxed),
            own_made: self.own_made.load(Ordering::Relaxed),
            paths_reused: self.paths_reused.load(Ordering::Relaxed),
            paths_made: self.paths_made.load(Ordering::Relaxed),
            vis_ns: self.vis_ns.load(Ordering::Relaxed),
            path_ns: self.path_ns.load(Ordering::Relaxed),
        }
    }

    /// Counts a bake's visibility and pathfinding stage times in [`Self::work`].
    pub fn record(&self, vis: std::time::Duration, path: std::time::Duration) {
        self.vis_ns.fetch_add(vis.as_nanos() as u64, Ordering::Relaxed);
        self.path_ns.fetch_add(path.as_nanos() as u64, Ordering::Relaxed);
    }

    fn air(inner: &mut Inner, nl: u8) -> Arc<ChunkSummary> {
        inner.air.get_or_insert_with(|| Arc::new(ChunkSummary::air(nl))).clone()
    }

    /// The summaries and geometry cube counts of `chunks` (of level `li`), in order: each looked up
    /// once, the missing ones made on every core when there are many (a whole level's on open or
    /// on a library change; an edit's one or two on the calling thread). Each is a pure function
    /// of its chunk, so the split does not change them.
    fn summaries_of(
        inner: &mut Inner,
        settings: &VisSettings,
        nl: u8,
        li: usize,
        chunks: &[(ChunkCoord, &Arc<Chunk>)],
    ) -> Vec<(Arc<ChunkSummary>, u32)> {
        /// Fewer missing summaries than this are made on the calling thread.
        const PARALLEL_FROM: usize = 64;
        let mut out: Vec<Option<(Arc<ChunkSummary>, u32)>> = chunks
            .iter()
            .map(|(c, ch)| match inner.summaries.get(&(li, *c)) {
                Some((w, s, n)) if w.as_ptr() == Arc::as_ptr(ch) => Some((s.clone(), *n)),
                _ => None,
            })
            .collect();
        let missing: Vec<usize> = (0..chunks.len()).filter(|&i| out[i].is_none()).collect();
        let opaque = &inner.opaque;
        let make = |i: &usize| ChunkSummary::weighed(chunks[*i].1.octree(), opaque, settings.voxels_log2);
        let made: Vec<(ChunkSummary, u32)> = if missing.len() < PARALLEL_FROM {
            missing.iter().map(make).collect()
        } else {
            let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(missing.len());
            let per = missing.len().div_ceil(threads);
            std::thread::scope(|s| {
                let parts: Vec<_> = missing
                    .chunks(per)
                    .map(|part| s.spawn(move || part.iter().map(make).collect::<Vec<_>>()))
                    .collect();
                parts.into_iter().flat_map(|p| p.join().expect("a summary thread panicked")).collect()
            })
        };
        for (i, (s, n)) in missing.into_iter().zip(made) {
            let (c, ch) = chunks[i];
            out[i] = Some((Self::keep_summary(inner, nl, li, c, ch, s, n), n));
        }
        out.into_iter().map(|s| s.expect("every summary found or made")).collect()
    }

    /// Stores a freshly made summary of chunk `c` (stored as `ch`) of level `li`; an all-air one is
    /// the shared air summary. Returns what is stored.
    fn keep_summary(
        inner: &mut Inner,
        nl: u8,
        li: usize,
        c: ChunkCoord,
        ch: &Arc<Chunk>,
        s: ChunkSummary,
        n: u32,
    ) -> Arc<ChunkSummary> {
        let s = if s == ChunkSummary::air(nl) { Self::air(inner, nl) } else { Arc::new(s) };
        inner.summaries.insert((li, c), (Arc::downgrade(ch), s.clone(), n));
        s
    }

    fn summary_locked(
        inner: &mut Inner,
        settings: &VisSettings,
        nl: u8,
        li: usize,
        c: ChunkCoord,
        stored: Option<&Arc<Chunk>>,
    ) -> (Arc<ChunkSummary>, u32) {
        let Some(ch) = stored else { return (Self::air(inner, nl), 0) };
        if let Some((w, s, n)) = inner.summaries.get(&(li, c))
            && w.as_ptr() == Arc::as_ptr(ch)
        {
            return (s.clone(), *n);
        }
        let (s, n) = ChunkSummary::weighed(ch.octree(), &inner.opaque, settings.voxels_log2);
        (Self::keep_summary(inner, nl, li, c, ch, s, n), n)
    }

    /// [`Self::level`] after an edit that replaced the chunks `replaced` (index into the level
    /// entry's chunks, coordinate, the new chunk) and kept the same chunks stored: only those are
    /// summarized again, and the grid is made from `grid` as [`Self::level`] makes it from scratch
    /// (the same grid, one sharing its far sets, or new far sets).
    fn regrid(
        &self,
        inner: &mut Inner,
        li: usize,
        nl: u8,
        grid: &Arc<SummaryGrid>,
        replaced: &[(usize, ChunkCoord, Arc<Chunk>)],
    ) -> Arc<SummaryGrid> {
        let (mut chunks, mut weights) = (None, None);
        for (_, c, ch) in replaced {
            let (s, n) = Self::summary_locked(inner, &self.settings, nl, li, *c, Some(ch));
            let g = grid.index(c.as_ivec3()).expect("a chunk of the entry lies in its grid");
            let old = &grid.chunks[g];
            if !(Arc::ptr_eq(old, &s) || **old == *s) {
                chunks.get_or_insert_with(|| grid.chunks.clone())[g] = s;
            }
            if grid.weights()[g] != n {
                weights.get_or_insert_with(|| grid.weights().to_vec())[g] = n;
            }
        }
        let grid = match (chunks, weights) {
            (None, None) => grid.clone(),
            (None, Some(w)) => Arc::new(grid.reweighed(w)),
            (Some(chunks), w) => {
                let steps = self.settings.portal_steps_for(chunks.len() as u64);
                let w = w.unwrap_or_else(|| grid.weights().to_vec());
                let new = SummaryGrid::new(grid.min, grid.dims, nl, chunks, steps);
                Arc::new(new.weighed(w, self.settings.min_culled, Some(grid)))
            }
        };
        let e = inner.levels.get_mut(&li).expect("the entry regrid starts from");
        for (i, _, ch) in replaced {
            e.chunks[*i].1 = Arc::downgrade(ch);
        }
        e.grid = grid.clone();
        grid
    }

    /// The summaries of level `li`'s grid from `min` to `max` (inclusive chunk coordinates),
    /// made from `level`: the cached grid when nothing it was made from changed, the same
    /// [`SummaryGrid`] (the same `Arc`) when every summary and every chunk's geometry cube count
    /// is unchanged, and one sharing its far sets when only counts changed
    /// ([`SummaryGrid::reweighed`]).
    pub fn level(&self, level: &Level, library: &Library, li: usize, min: ChunkCoord, max: ChunkCoord) -> LevelVis {
        let chunk_log2 = level.frame().chunk_lattice_log2();
        let mut inner = self.lock(library, chunk_log2);
        let opaque = inner.opaque.clone();
        let nl = self.nl(chunk_log2);
        let (min, max) = (min.as_ivec3(), max.as_ivec3());
        let in_box = |c: &ChunkCoord| {
            let v = c.as_ivec3();
            v.cmpge(min).all() && v.cmple(max).all()
        };
        let replaced =
            inner.levels.get(&li).filter(|e| e.min == min && e.max == max && e.chunk_log2 == chunk_log2).and_then(
                |e| Some((replaced_chunks(&e.chunks, level.chunks().filter(|(c, _)| in_box(c)))?, e.grid.clone())),
            );
        if let Some((replaced, grid)) = replaced {
            let grid = if replaced.is_empty() { grid } else { self.regrid(&mut inner, li, nl, &grid, &replaced) };
            return LevelVis { grid, opaque, settings: self.settings };
        }
        let stored: Vec<(ChunkCoord, &Arc<Chunk>)> =
            level.chunks().filter(|(c, _)| in_box(c)).map(|(c, ch)| (*c, ch)).collect();
        let summaries = Self::summaries_of(&mut inner, &self.settings, nl, li, &stored);
        let dims = max - min + IVec3::ONE;
        let air = Self::air(&mut inner, nl);
        let volume = (dims.x as usize) * (dims.y as usize) * (dims.z as usize);
        let mut chunks = vec![air; volume];
        let mut weights = vec![0u32; volume];
        let mut ids = Vec::with_capacity(stored.len());
        for ((c, ch), (s, n)) in stored.into_iter().zip(summaries) {
            let d = c.as_ivec3() - min;
            let i = ((d.y * dims.x + d.x) * dims.z + d.z) as usize;
            (chunks[i], weights[i]) = (s, n);
            ids.push((c, Arc::downgrade(ch)));
        }
        let same = inner.levels.get(&li).is_some_and(|e| {
            e.min == min
                && e.max == max
                && e.chunk_log2 == chunk_log2
                && e.grid.chunks.iter().zip(&chunks).all(|(a, b)| Arc::ptr_eq(a, b) || a == b)
        });
        let grid = match inner.levels.get(&li) {
            Some(e) if same && e.grid.weights() == weights.as_slice() => e.grid.clone(),
            Some(e) if same => Arc::new(e.grid.reweighed(weights)),
            prev => {
                let steps = self.settings.portal_steps_for(chunks.len() as u64);
                let prev = prev.filter(|e| e.min == min && e.max == max && e.chunk_log2 == chunk_log2);
                let grid = SummaryGrid::new(min, dims, nl, chunks, steps);
                Arc::new(grid.weighed(weights, self.settings.min_culled, prev.map(|e| &*e.grid)))
            }
        };
        inner.levels.insert(li, LevelEntry { min, max, chunk_log2, chunks: ids, grid: grid.clone() });
        LevelVis { grid, opaque, settings: self.settings }
    }
}

/// The chunks of `now` (coordinate and chunk, in order) that replaced those of `kept` (the
/// chunks a level entry was made from): their index in `kept`, coordinate and chunk. `None` when
/// the chunks stored are not the same coordinates, or when more than [`REGRID_MAX`] were
/// replaced (a whole level's summaries are made on every core).
fn replaced_chunks<'a>(
    kept: &[(ChunkCoord, Weak<Chunk>)],
    mut now: impl Iterator<Item = (&'a ChunkCoord, &'a Arc<Chunk>)>,
) -> Option<Vec<(usize, ChunkCoord, Arc<Chunk>)>> {
    let mut out = Vec::new();
    for (i, (kc, w)) in kept.iter().enumerate() {
        let (c, ch) = now.next()?;
        if c != kc {
            return None;
        }
        if w.as_ptr() != Arc::as_ptr(ch) {
            if out.len() == REGRID_MAX {
                return None;
            }
            out.push((i, *c, ch.clone()));
        }
    }
    now.next().is_none().then_some(out)
}

/// At most this many replaced chunks are summarized again one by one ([`VisCache::regrid`]).
const REGRID_MAX: usize = 64;

#[cfg(test)]
mod tests {
    use super::*;
    use pmfedit_core::map::coords::{CubeAddr, LatticeBox};
    use pmfedit_core::map::ids::{MaterialId, PhysicsId, SoundId};
    use pmfedit_core::map::octree::Cube;

    fn stone() -> Cube {
        Cube::solid(MaterialId(0), PhysicsId(0), SoundId(0))
    }

    #[test]
    fn the_grid_is_reused_while_summaries_stay_the_same() {
        let lib = Library::starter();
        let mut level = Level::new("c", 4).unwrap();
        level.fill_box(LatticeBox::new(IVec3::ZERO, IVec3::new(256, 8, 256)), stone()).unwrap();
        let cache = VisCache::new(VisSettings::default());
        let (lo, hi) = level.occupied_bounds().unwrap();
        let a = cache.level(&level, &lib, 0, lo, hi);
        let b = cache.level(&level, &lib, 0, lo, hi);
        assert!(Arc::ptr_eq(&a.grid, &b.grid));
        // A cube in the middle of a chunk's air: the chunk changed, its summary did not. The
        // grid shares the far sets and counts one more geometry cube, as a fresh one does.
        let mut edited = level.snapshot();
        edited.set_cube(CubeAddr::new(IVec3::new(64, 64, 64), 3).unwrap(), stone()).unwrap();
        let c = cache.level(&edited, &lib, 0, lo, hi);
        assert!(!Arc::ptr_eq(&a.grid, &c.grid));
        assert!(c.grid.shares_far_sets(&a.grid));
        let fresh = VisCache::new(VisSettings::default()).level(&edited, &lib, 0, lo, hi);
        assert!(!fresh.grid.shares_far_sets(&a.grid));
        assert_eq!(c.grid.weights(), fresh.grid.weights());
        assert_eq!(c.grid.weights().iter().sum::<u32>(), a.grid.weights().iter().sum::<u32>() + 1);
        for g in 0..fresh.grid.len() {
            assert!(fresh.grid.same_far_as(&c.grid, fresh.grid.chunk(g)));
            for i in 0..fresh.grid.chunks[g].comps.len() {
                assert_eq!(c.grid.geometry_seen(g, i), fresh.grid.geometry_seen(g, i), "chunk {g} component {i}");
            }
        }
        // Nothing changed since: the same grid.
        assert!(Arc::ptr_eq(&c.grid, &cache.level(&edited, &lib, 0, lo, hi).grid));
        // A cube on a chunk face: a new grid, which matches a fresh computation.
        edited.set_cube(CubeAddr::new(IVec3::new(120, 64, 64), 3).unwrap(), stone()).unwrap();
        let d = cache.level(&edited, &lib, 0, lo, hi);
        assert!(!Arc::ptr_eq(&a.grid, &d.grid));
        let fresh = VisCache::new(VisSettings::default()).level(&edited, &lib, 0, lo, hi);
        assert!(fresh.grid.chunks.iter().zip(&d.grid.chunks).all(|(x, y)| x == y));
        // Its far geometry, worked out from the grid before, is a fresh grid's.
        assert_eq!(d.grid.weights(), fresh.grid.weights());
        for g in 0..fresh.grid.len() {
            for i in 0..fresh.grid.chunks[g].comps.len() {
                assert_eq!(d.grid.geometry_seen(g, i), fresh.grid.geometry_seen(g, i), "chunk {g} component {i}");
            }
        }
        assert_eq!(
            *cache.summary(&edited, &lib, 0, ChunkCoord::new(0, 0, 0)),
            ChunkSummary::of(edited.chunk(ChunkCoord::new(0, 0, 0)).unwrap().octree(), &OpaqueMaterials::of(&lib), 4)
        );
        // Back to the first map: the old summaries again (by value).
        let e = cache.level(&level, &lib, 0, lo, hi);
        assert!(e.grid.chunks.iter().zip(&a.grid.chunks).all(|(x, y)| x == y));
    }

    /// The grid after edits, worked out from the grid before (only replaced chunks summarized
    /// again, [`VisCache::regrid`]), is the grid a fresh cache makes: one chunk or several
    /// replaced, a summary changed or only a count, a whole chunk emptied.
    #[test]
    fn the_grid_after_edits_is_a_fresh_grid() {
        let map = pmfedit_core::sample::terrain(4, 3, 4, 2);
        let (lib, mut level) = (&map.library, map.levels[0].snapshot());
        let (lo, hi) = level.occupied_bounds().unwrap();
        let cache = VisCache::new(VisSettings::default());
        let mut last = cache.level(&level, lib, 0, lo, hi).grid;
        let frame = level.frame();
        let mut rng = pmfedit_core::sample::noise::Rng::new(7);
        let mut kinds = [0usize; 3];
        for step in 0..40 {
            // One to three single-cube edits between two looks at the grid.
            for _ in 0..1 + step % 3 {
                let span = hi.as_ivec3() - lo.as_ivec3() + IVec3::ONE;
                let c = lo.as_ivec3() + IVec3::new(rng.range(0, span.x), rng.range(0, span.y), rng.range(0, span.z));
                let c = ChunkCoord::from_ivec3(c);
                let local = IVec3::new(rng.range(0, 16), rng.range(0, 16), rng.range(0, 16)) * 8;
                let addr = CubeAddr::containing(frame.chunk_min_lattice(c) + local, 3);
                let cube = if rng.range(0, 2) == 0 { stone() } else { Cube::EMPTY };
                level.set_cube(addr, cube).unwrap();
            }
            if step == 20 {
                // A whole chunk emptied at once.
                level.fill_box(frame.chunk_addr(lo).lattice_box(), Cube::EMPTY).unwrap();
            }
            let now = cache.level(&level, lib, 0, lo, hi).grid;
            let fresh = VisCache::new(VisSettings::default()).level(&level, lib, 0, lo, hi).grid;
            kinds[usize::from(!Arc::ptr_eq(&now, &last)) + usize::from(!now.shares_far_sets(&last))] += 1;
            assert!(fresh.chunks.iter().zip(&now.chunks).all(|(x, y)| x == y), "step {step}: summaries");
            assert_eq!(now.weights(), fresh.weights(), "step {step}: weights");
            for g in 0..fresh.len() {
                assert!(fresh.same_far_as(&now, fresh.chunk(g)), "step {step}: chunk {g}");
                for i in 0..fresh.chunks[g].comps.len() {
                    assert_eq!(now.geometry_seen(g, i), fresh.geometry_seen(g, i), "step {step}: chunk {g} comp {i}");
                    assert_eq!(now.far_chunks(g, i), fresh.far_chunks(g, i), "step {step}: chunk {g} comp {i}");
                }
            }
            last = now;
        }
        // Each way of making the grid was taken: the same, reweighed, new far sets.
        assert!(kinds.iter().all(|&k| k > 0), "{kinds:?}");
    }

    /// A whole level's summaries, made on every core when many are missing, are the ones made one
    /// chunk at a time; all-air chunks share the one air summary either way.
    #[test]
    fn summaries_made_in_parallel_are_the_ones_made_one_by_one() {
        let map = pmfedit_core::sample::terrain(6, 3, 6, 3);
        let (level, lib) = (&map.levels[0], &map.library);
        let chunks: Vec<ChunkCoord> = level.chunks().map(|(c, _)| *c).collect();
        assert!(chunks.len() >= 64, "enough chunks for the parallel path: {}", chunks.len());
        let (lo, hi) = level.occupied_bounds().unwrap();
        let parallel = VisCache::new(VisSettings::default());
        let a = parallel.level(level, lib, 0, lo, hi);
        let serial = VisCache::new(VisSettings::default());
        for &c in &chunks {
            serial.summary(level, lib, 0, c);
        }
        let b = serial.level(level, lib, 0, lo, hi);
        assert_eq!(a.grid.chunks.len(), b.grid.chunks.len());
        assert!(a.grid.chunks.iter().zip(&b.grid.chunks).all(|(x, y)| x == y));
        assert_eq!(a.grid.weights(), b.grid.weights());
        fn air(g: &SummaryGrid) -> Vec<&Arc<ChunkSummary>> {
            g.chunks.iter().filter(|s| ***s == ChunkSummary::air(4)).collect()
        }
        let air_a = air(&a.grid);
        assert!(!air_a.is_empty(), "the terrain has all-air chunks above it");
        assert!(air_a.iter().all(|s| Arc::ptr_eq(s, air_a[0])), "one shared air summary");
        assert_eq!(air_a.len(), air(&b.grid).len());
        for &c in &chunks {
            assert_eq!(parallel.summary(level, lib, 0, c), serial.summary(level, lib, 0, c), "chunk {c:?}");
        }
    }

    /// A cache that keeps serves a chunk's own lists again for the same chunk; one that does not
    /// (a one-shot build) makes them every time and holds nothing.
    #[test]
    fn kept_lists_are_served_only_while_keeping() {
        let lib = Library::starter();
        let mut level = Level::new("c", 4).unwrap();
        level.fill_box(LatticeBox::new(IVec3::ZERO, IVec3::new(64, 8, 64)), stone()).unwrap();
        let key = (0, ChunkCoord::new(0, 0, 0));
        let stored = level.chunk(key.1).unwrap().clone();
        let bake = BakeSettings::default();
        let cache = VisCache::new(VisSettings::default());
        let ask = |c: &VisCache| c.own_lists(&lib, 4, key, Some(&stored), &bake, || Ok::<_, ()>(OwnLists::default()));
        assert!(!ask(&cache).unwrap().1, "made the first time");
        assert!(ask(&cache).unwrap().1, "kept for the same chunk");
        cache.set_keep(false);
        assert!(cache.inner.lock().unwrap().own.is_empty(), "dropped when keeping stops");
        assert!(!ask(&cache).unwrap().1);
        assert!(!ask(&cache).unwrap().1, "never kept");
        assert!(cache.inner.lock().unwrap().own.is_empty());
    }

    /// Chunks the level does not store have no cubes: the own lists made for one serve every
    /// other (while keeping, and for the same layout settings).
    #[test]
    fn chunks_not_stored_share_their_own_lists() {
        let lib = Library::starter();
        let cache = VisCache::new(VisSettings::default());
        let bake = BakeSettings::default();
        let made = || Ok::<_, ()>(OwnLists { lists: vec![(Arc::from(vec![]), Some(0))], cells: vec![(0, 0)] });
        let ask = |c: ChunkCoord, b: &BakeSettings| cache.own_lists(&lib, 4, (0, c), None, b, made).unwrap();
        let (a, kept) = ask(ChunkCoord::new(0, 5, 0), &bake);
        assert!(!kept, "made the first time");
        let (b, kept) = ask(ChunkCoord::new(3, 2, 1), &bake);
        assert!(kept && Arc::ptr_eq(&a, &b), "another chunk not stored takes them");
        let other = BakeSettings { air_cell_log2: bake.air_cell_log2 + 1, ..bake };
        assert!(!ask(ChunkCoord::new(3, 2, 1), &other).1, "not for other layout settings");
        cache.set_keep(false);
        assert!(cache.inner.lock().unwrap().air_own.is_none(), "dropped when keeping stops");
        assert!(!ask(ChunkCoord::new(0, 5, 0), &other).1);
    }
}
