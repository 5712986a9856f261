//! The ray grids of a scene's chunks, found by a table lookup per chunk a ray enters.
//!
//! Sky, sun and bounce rays cross a chunk boundary every few units; looking the chunk up in the
//! level's ordered map and the grid in a hash map at every crossing cost as much as the grid's
//! own DDA. A dense table over the box of the level's stored chunks answers in one index; a level
//! whose stored chunks lie too far apart for such a table falls back to a hash map.

use glam::IVec3;
use pmfedit_core::map::Level;
use pmfedit_core::map::coords::ChunkCoord;
use pmfedit_core::map::octree::raycast::{Hit, Ray, RayGrid};

use super::gather::KeyMap;

/// Largest dense table, in chunks (256 KiB of slots: one scene is made per chunk bake).
const MAX_DENSE: i64 = 1 << 16;

/// A slot not looked at yet.
const UNKNOWN: u32 = 0;
/// A slot whose chunk is not stored (air).
const AIR: u32 = 1;

/// The ray grids of one level's stored chunks, built at the first ray that enters each.
#[derive(Debug, Clone)]
pub(super) struct ChunkGrids<'a> {
    level: &'a Level,
    /// The box of stored chunks: lowest chunk and size in chunks (zero when none is stored).
    lo: IVec3,
    size: IVec3,
    /// Per chunk of the box (X fastest, then Y, then Z) when the box is small enough:
    /// [`UNKNOWN`], [`AIR`], or 2 + an index into `grids`.
    dense: Vec<u32>,
    /// The same slots by chunk when the box is too large for `dense`.
    sparse: KeyMap<ChunkCoord, u32>,
    grids: Vec<RayGrid<'a>>,
}

impl<'a> ChunkGrids<'a> {
    /// An empty set of grids for `level`.
    pub(super) fn new(level: &'a Level) -> Self {
        let mut bounds: Option<(IVec3, IVec3)> = None;
        for (c, _) in level.chunks() {
            let p = c.as_ivec3();
            bounds = Some(bounds.map_or((p, p), |(lo, hi)| (lo.min(p), hi.max(p))));
        }
        let (lo, size) = bounds.map_or((IVec3::ZERO, IVec3::ZERO), |(lo, hi)| (lo, hi - lo + IVec3::ONE));
        let volume = size.as_i64vec3().element_product();
        let dense = if volume <= MAX_DENSE { vec![UNKNOWN; volume as usize] } else { Vec::new() };
        Self { level, lo, size, dense, sparse: KeyMap::default(), grids: Vec::new() }
    }

    /// What [`Octree::ray_cast_prepared`] gives for the chunk-local `ray` in chunk `c`, through
    /// the chunk's grid; `None` for a chunk that is not stored.
    ///
    /// [`Octree::ray_cast_prepared`]: pmfedit_core::map::octree::Octree::ray_cast_prepared
    pub(super) fn cast(&mut self, c: ChunkCoord, ray: &Ray, max_dist: f64) -> Option<Hit> {
        let p = c.as_ivec3() - self.lo;
        if p.cmplt(IVec3::ZERO).any() || p.cmpge(self.size).any() {
            return None;
        }
        let slot = self.slot(c, p);
        if slot == AIR { None } else { self.grids[(slot - 2) as usize].cast(ray, max_dist) }
    }

    /// [`RayGrid::column_top`] of chunk `c` at chunk-local `(x, z)`: 0 for a chunk that is not
    /// stored (nothing to meet), `None` for one whose grid has no cells.
    pub(super) fn column_top(&mut self, c: ChunkCoord, x: f64, z: f64) -> Option<i32> {
        let p = c.as_ivec3() - self.lo;
        if p.cmplt(IVec3::ZERO).any() || p.cmpge(self.size).any() {
            return Some(0);
        }
        let slot = self.slot(c, p);
        if slot == AIR { Some(0) } else { self.grids[(slot - 2) as usize].column_top(x, z) }
    }

    /// The slot of chunk `c` (at `p` in the box), found in the level at its first use.
    fn slot(&mut self, c: ChunkCoord, p: IVec3) -> u32 {
        let slot = if self.dense.is_empty() {
            self.sparse.get(&c).copied().unwrap_or(UNKNOWN)
        } else {
            self.dense[(p.x + self.size.x * (p.y + self.size.y * p.z)) as usize]
        };
        if slot == UNKNOWN { self.look_up(c, p) } else { slot }
    }

    /// Finds chunk `c` (at `p` in the box) in the level, builds its grid and fills its slot.
    #[cold]
    fn look_up(&mut self, c: ChunkCoord, p: IVec3) -> u32 {
        let slot = match self.level.chunk(c) {
            Some(ch) => {
                self.grids.push(RayGrid::new(ch.octree()));
                self.grids.len() as u32 + 1
            }
            None => AIR,
        };
        if self.dense.is_empty() {
            self.sparse.insert(c, slot);
        } else {
            self.dense[(p.x + self.size.x * (p.y + self.size.y * p.z)) as usize] = slot;
        }
        slot
    }
}
