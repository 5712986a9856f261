//! [`VisCache`]: chunk summaries kept between bakes, so that a level's summaries are computed
//! once per map version rather than once per chunk bake, and only changed chunks are summarized
//! again after an edit.
//!
//! A cache is a memo, never an input: every answer equals what computing it afresh from the
//! snapshot would give. Entries are keyed by the identity of the chunk they were computed from
//! (chunks live behind `Arc`; an edit replaces the `Arc`), and the cache holds a `Weak` to it so
//! the address cannot be reused while the entry lives.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use glam::IVec3;
use pmfedit_core::map::coords::ChunkCoord;
use pmfedit_core::map::level::Chunk;
use pmfedit_core::map::{Level, Library};

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
    summaries: HashMap<(usize, ChunkCoord), (Weak<Chunk>, Arc<ChunkSummary>)>,
    levels: HashMap<usize, LevelEntry>,
    air: Option<Arc<ChunkSummary>>,
}

/// Chunk summaries and level summary grids, shared by the bakes of a scheduler (and by the rebuild
/// engine, which compares a changed chunk's summaries before and after an edit).
#[derive(Debug)]
pub struct VisCache {
    settings: VisSettings,
    inner: Mutex<Inner>,
}

impl VisCache {
    /// An empty cache for bakes with `settings`.
    pub fn new(settings: VisSettings) -> VisCache {
        VisCache { settings, inner: Mutex::new(Inner::default()) }
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
        Self::summary_locked(&mut inner, &self.settings, nl, li, chunk, level.chunk(chunk))
    }

    fn air(inner: &mut Inner, nl: u8) -> Arc<ChunkSummary> {
        inner.air.get_or_insert_with(|| Arc::new(ChunkSummary::air(nl))).clone()
    }

    fn summary_locked(
        inner: &mut Inner,
        settings: &VisSettings,
        nl: u8,
        li: usize,
        c: ChunkCoord,
        stored: Option<&Arc<Chunk>>,
    ) -> Arc<ChunkSummary> {
        let Some(ch) = stored else { return Self::air(inner, nl) };
        if let Some((w, s)) = inner.summaries.get(&(li, c))
            && w.as_ptr() == Arc::as_ptr(ch)
        {
            return s.clone();
        }
        let mut s = Arc::new(ChunkSummary::of(ch.octree(), &inner.opaque, settings.voxels_log2));
        if *s == ChunkSummary::air(nl) {
            s = Self::air(inner, nl);
        }
        inner.summaries.insert((li, c), (Arc::downgrade(ch), s.clone()));
        s
    }

    /// The summaries of level `li`'s grid from `min` to `max` (inclusive chunk coordinates),
    /// made from `level`: the cached grid when nothing it was made from changed, the same
    /// [`SummaryGrid`] (the same `Arc`) when every summary is unchanged.
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
        if let Some(e) = inner.levels.get(&li)
            && e.min == min
            && e.max == max
            && e.chunk_log2 == chunk_log2
            && e.chunks.len() == level.chunks().filter(|(c, _)| in_box(c)).count()
            && level
                .chunks()
                .filter(|(c, _)| in_box(c))
                .zip(&e.chunks)
                .all(|((c, ch), (ec, w))| c == ec && w.as_ptr() == Arc::as_ptr(ch))
        {
            return LevelVis { grid: e.grid.clone(), opaque, settings: self.settings };
        }
        let dims = max - min + IVec3::ONE;
        let air = Self::air(&mut inner, nl);
        let mut chunks = vec![air; (dims.x as usize) * (dims.y as usize) * (dims.z as usize)];
        let mut ids = Vec::new();
        for (c, ch) in level.chunks().filter(|(c, _)| in_box(c)) {
            let d = c.as_ivec3() - min;
            let i = ((d.y * dims.x + d.x) * dims.z + d.z) as usize;
            chunks[i] = Self::summary_locked(&mut inner, &self.settings, nl, li, *c, Some(ch));
            ids.push((*c, Arc::downgrade(ch)));
        }
        let same = inner.levels.get(&li).is_some_and(|e| {
            e.min == min
                && e.max == max
                && e.chunk_log2 == chunk_log2
                && e.grid.chunks.iter().zip(&chunks).all(|(a, b)| Arc::ptr_eq(a, b) || a == b)
        });
        let grid = match inner.levels.get(&li) {
            Some(e) if same => e.grid.clone(),
            _ => {
                let steps = self.settings.portal_steps_for(chunks.len() as u64);
                Arc::new(SummaryGrid::new(min, dims, nl, chunks, steps))
            }
        };
        inner.levels.insert(li, LevelEntry { min, max, chunk_log2, chunks: ids, grid: grid.clone() });
        LevelVis { grid, opaque, settings: self.settings }
    }
}

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
        // A cube in the middle of a chunk's air: the chunk changed, its summary did not.
        let mut edited = level.snapshot();
        edited.set_cube(CubeAddr::new(IVec3::new(64, 64, 64), 3).unwrap(), stone()).unwrap();
        let c = cache.level(&edited, &lib, 0, lo, hi);
        assert!(Arc::ptr_eq(&a.grid, &c.grid));
        // A cube on a chunk face: a new grid, which matches a fresh computation.
        edited.set_cube(CubeAddr::new(IVec3::new(120, 64, 64), 3).unwrap(), stone()).unwrap();
        let d = cache.level(&edited, &lib, 0, lo, hi);
        assert!(!Arc::ptr_eq(&a.grid, &d.grid));
        let fresh = VisCache::new(VisSettings::default()).level(&edited, &lib, 0, lo, hi);
        assert!(fresh.grid.chunks.iter().zip(&d.grid.chunks).all(|(x, y)| x == y));
        assert_eq!(
            *cache.summary(&edited, &lib, 0, ChunkCoord::new(0, 0, 0)),
            ChunkSummary::of(edited.chunk(ChunkCoord::new(0, 0, 0)).unwrap().octree(), &OpaqueMaterials::of(&lib), 4)
        );
        // Back to the first map: the old summaries again (by value).
        let e = cache.level(&level, &lib, 0, lo, hi);
        assert!(e.grid.chunks.iter().zip(&a.grid.chunks).all(|(x, y)| x == y));
    }
}
