//! Visibility: potentially visible sets for air cells (docs/spec/PMF-NOTES.md V1).
//!
//! # What the compiler passes in, what it gets out
//! [`bake_chunk_vis`] takes a level snapshot, the map's [`Library`] (material transparency), one
//! chunk, that chunk's **air cells** (the explicit empty leaf cubes the layout emits, docs/spec/PMF-NOTES.md
//! C4b, as level-lattice [`CubeAddr`]s) and [`VisSettings`]. It returns, per air cell in input
//! order, a [`CellVis`]: the visible solid leaves of the cell's own chunk, then per other chunk
//! (PMF grid order) either [`VisibleCubes::All`] or the listed leaves. Leaves are **chunk-local**
//! addresses of leaves of that chunk's octree ([`Octree::leaves`]), in the octree's pre-order
//! (PMF child bit order): for a layout that writes solid leaves depth-first pre-order (C1) this
//! is ascending cube index; the layout maps addresses to indices.
//!
//! # Definition
//! A solid leaf `B` is *visible* from air cell `A` if some segment from a point of `A` to a
//! point of a face of `B` that can be drawn crosses the interior of no **occluder**. Occluders
//! are geometry leaves whose every face material is opaque (neither transparent nor liquid, and
//! present in the library) and that have no pushed corners ([`occludes`]). Everything else
//! (transparent, liquid, pushed-corner cubes, unknown materials) lets sight through. Only cubes
//! within [`VisSettings::radius_chunks`] chunks (Chebyshev distance) of the cell's chunk are
//! candidates: the radius is the engine's draw distance, not an occlusion claim.
//!
//! # Algorithm (conservative: "not provably hidden ⇒ visible")
//! Per chunk bake, over the *region* (the box of chunks within the radius, clipped to the grid):
//! 1. **Occluder grid.** The region is voxelized at [`VisSettings::occluder_cell_log2`]
//!    (coarsened until it has at most [`VisSettings::max_occluder_cells`] voxels). A voxel is
//!    *opaque* only if occluders cover all of it (exact volume sum of aligned leaves); a 3D
//!    summed-area table answers "is this voxel box all opaque" in O(1).
//! 2. **Air components.** Non-opaque voxels are labelled by 26-connectivity (union-find).
//! 3. **Exposure.** A face of a solid leaf is *covered* if the one-lattice-thick layer beyond it
//!    lies in the region and is entirely occluder (exact octree query, with a voxel fast path);
//!    the mesher draws no covered face (docs/spec/PMF-NOTES.md G4), so a leaf with every face covered
//!    (terrain interiors) is never a candidate.
//! 4. Per air cell, a pre-order walk of each region chunk's octree with subtree skipping. A node
//!    or leaf is dropped if
//!    - **component:** no non-opaque voxel touching the leaf's closed box has a label of a
//!      non-opaque voxel touching the cell's closed box (sealed rooms); nodes carry a 64-bit
//!      hash mask of their leaves' labels for early rejection;
//!    - **orientation:** no exposed face of the leaf has the cell strictly on its outer side;
//!    - **single-slab occluder:** along an axis separating cell and box, some one-voxel-thick
//!      layer strictly between them is opaque over the whole cross-section of the shaft (the
//!      convex hull of cell and box) — a node hidden this way hides its whole subtree.
//!
//! Why each test never drops a truly visible leaf:
//! - *Component:* a line of sight avoids occluder interiors, so each of its points lies in a
//!   closed non-opaque voxel (a fully opaque voxel is inside the occluders); the segment is
//!   connected and stays in the (convex) region, so the closed non-opaque voxels it meets form
//!   one 26-connected set, from a voxel touching `A` to a voxel touching `B`.
//! - *Orientation:* a segment from outside `B` first meets `B` through a face whose outer open
//!   half-space contains its start point; sight reaching that face is not inside an occluder
//!   just before it, so the face is not covered. (Sight exactly along an edge or plane is a
//!   measure-zero graze and is not counted.)
//! - *Slab:* every segment from `A` to `B` crosses the layer completely, inside the layer's
//!   cross-section of the shaft. The shaft's cross-section is bounded by the rectangle spanned by
//!   the extreme blend weights `λ` of the two boxes at the layer's two planes; the voxels
//!   *touching* that closed rectangle must all be opaque, so even grazing segments pass through
//!   occluder interior.
//!
//! A test that cannot be decided cheaply answers "visible", so effort can be bounded without
//! losing conservativeness. The layer search only tries layers whose voxel on the
//! centre-to-centre line is opaque (a necessary condition), and boxes smaller than
//! [`VisSettings::slab_min_log2`] skip the slab test (their ancestors are still tested; on the
//! terrain bench this costs ~2 points of culling for a ~4× faster bake).
//!
//! # "Whole chunk" shortcut
//! Another chunk is reported as [`VisibleCubes::All`] when every *candidate* leaf of it (solid
//! with at least one drawable face) is visible: leaves with every face covered draw nothing, so
//! claiming them too is harmless and saves the list. With [`VisSettings::all_percent`] below
//! 100, a cheap coarse walk (subtrees [`VisSettings::coarse_levels`] below the chunk root, node
//! tests only) gives an upper bound of the visible candidates, and the chunk is reported whole
//! when that bound reaches the percentage: smaller files and faster bakes, less culling. Both
//! only ever claim more, so both stay conservative.
//!
//! # Determinism
//! Pure function of the region's chunks, the library and the settings: no hashing, chunks in
//! `BTreeMap` order, union-find roots are the smallest voxel index.
//!
//! [`Octree::leaves`]: pmfedit_core::map::octree::Octree::leaves

use std::fmt;

use glam::IVec3;
use pmfedit_core::map::coords::{ChunkCoord, CubeAddr, Face, GRID_MAX_XZ, GRID_MAX_Y, LatticeBox};
use pmfedit_core::map::ids::MaterialId;
use pmfedit_core::map::octree::{Cube, CubeKind};
use pmfedit_core::map::{Level, Library};

/// Settings of the visibility bake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VisSettings {
    /// Candidate cubes lie within this many chunks of the cell's chunk on every axis.
    pub radius_chunks: u32,
    /// Edge of an occluder voxel, `2^n` lattice units (3 = one map unit). Smaller finds thinner
    /// walls but costs memory; never larger than a chunk.
    pub occluder_cell_log2: u8,
    /// The occluder grid is coarsened until it has at most this many voxels.
    pub max_occluder_cells: usize,
    /// Another chunk is reported as [`VisibleCubes::All`] when at least this percentage of its
    /// candidates may be visible, judged by the coarse walk (subtrees `coarse_levels` below the
    /// chunk root). 100: only when every candidate is visible, after the full walk.
    pub all_percent: u8,
    /// How many octree levels below the chunk root the coarse walk descends.
    pub coarse_levels: u8,
    /// Octree nodes and leaves of edge below `2^n` lattice units skip the single-slab test (it is
    /// the costly one; their parents are still tested). 0 tests every leaf.
    pub slab_min_log2: u8,
    /// Most cube entries the lists of one chunk's air cells may hold together (what grows with
    /// air cells × visible cubes: a dense chunk of small cubes reached gigabytes). Past it the
    /// chunk gets no visibility data at all ([`ChunkVisBake::skipped`]): conservative, the
    /// engine then culls nothing from those cells.
    pub max_listed: u64,
}

impl Default for VisSettings {
    /// Radius 1, one-map-unit occluder voxels, at most 2^20 voxels, a chunk is "all" only when
    /// every candidate is visible, slab tests on boxes of two map units and more.
    fn default() -> Self {
        Self {
            radius_chunks: 1,
            occluder_cell_log2: 3,
            max_occluder_cells: 1 << 20,
            all_percent: 100,
            coarse_levels: 2,
            slab_min_log2: 4,
            max_listed: MAX_LISTED,
        }
    }
}

/// Default [`VisSettings::max_listed`]: 2^23 entries (about 128 MB while baking, 32 MB in the
/// file), hundreds of times what a chunk of ordinary cubes lists.
pub const MAX_LISTED: u64 = 1 << 23;

/// The visible cubes of one other chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VisibleCubes {
    /// Every cube of the chunk (PMF count 0).
    All,
    /// These leaves (chunk-local addresses, octree pre-order).
    Listed(Vec<CubeAddr>),
}

/// Visible cubes of one chunk other than the cell's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkVis {
    pub chunk: ChunkCoord,
    pub cubes: VisibleCubes,
}

/// The potentially visible set of one air cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellVis {
    /// The air cell (level lattice).
    pub cell: CubeAddr,
    /// Visible solid leaves of the cell's own chunk (chunk-local, octree pre-order).
    pub same_chunk: Vec<CubeAddr>,
    /// Other chunks with at least one visible leaf, in PMF grid order.
    pub other_chunks: Vec<ChunkVis>,
}

/// Figures of one chunk's visibility bake.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VisStats {
    /// Air cells baked.
    pub cells: u64,
    /// Solid leaves in the region.
    pub solid_leaves: u64,
    /// Solid leaves with at least one drawable (uncovered) face.
    pub candidates: u64,
    /// Σ over cells of the region's solid leaves (what listing everything would give).
    pub pairs_total: u64,
    /// Σ over cells of the leaves claimed visible (a chunk reported whole counts all its solid
    /// leaves).
    pub pairs_visible: u64,
    /// (cell, other chunk) pairs reported as [`VisibleCubes::All`].
    pub whole_chunks: u64,
    /// The occluder voxel edge actually used, `2^n` lattice units.
    pub occluder_cell_log2: u8,
    /// Occluder voxels in the region.
    pub occluder_cells: u64,
    /// Chunks that got no visibility data ([`ChunkVisBake::skipped`]).
    pub skipped_chunks: u64,
}

impl VisStats {
    /// Fraction of (cell, solid leaf) pairs that were culled.
    pub fn culled_fraction(&self) -> f64 {
        if self.pairs_total == 0 { 0.0 } else { 1.0 - self.pairs_visible as f64 / self.pairs_total as f64 }
    }

    /// Adds another bake's figures (the occluder fields keep the larger value).
    pub fn add(&mut self, o: &VisStats) {
        self.cells += o.cells;
        self.skipped_chunks += o.skipped_chunks;
        self.solid_leaves += o.solid_leaves;
        self.candidates += o.candidates;
        self.pairs_total += o.pairs_total;
        self.pairs_visible += o.pairs_visible;
        self.whole_chunks += o.whole_chunks;
        self.occluder_cell_log2 = self.occluder_cell_log2.max(o.occluder_cell_log2);
        self.occluder_cells = self.occluder_cells.max(o.occluder_cells);
    }
}

/// The result of [`bake_chunk_vis`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkVisBake {
    /// Per air cell, in input order; empty when [`skipped`](Self::skipped).
    pub cells: Vec<CellVis>,
    pub stats: VisStats,
    /// The lists would hold more than [`VisSettings::max_listed`] entries: no cell gets
    /// visibility data.
    pub skipped: bool,
}

/// Why a visibility or pathfinding bake was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BakeInputError {
    /// The chunk lies outside the PMF grid.
    ChunkOutsideGrid(ChunkCoord),
    /// An air cell does not lie inside the chunk being baked.
    CellOutsideChunk { cell: CubeAddr, chunk: ChunkCoord },
}

impl fmt::Display for BakeInputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ChunkOutsideGrid(c) => write!(f, "chunk {c:?} is outside the level grid"),
            Self::CellOutsideChunk { cell, chunk } => write!(f, "air cell {cell:?} is not inside chunk {chunk:?}"),
        }
    }
}

impl std::error::Error for BakeInputError {}

/// Whether `cube` blocks sight: geometry without pushed corners whose every face material exists
/// in `library` and is neither transparent nor liquid.
pub fn occludes(cube: &Cube, library: &Library) -> bool {
    let opaque = |m: MaterialId| library.get(m).is_some_and(|mat| !mat.transparent && !mat.liquid);
    match &cube.kind {
        CubeKind::Empty => false,
        CubeKind::Geometry(g) => opaque(g.material),
        CubeKind::Extended(e) => !e.has_pushed_corners() && e.face_materials.iter().all(|&m| opaque(m)),
    }
}

/// The inclusive chunk range within `radius` of `chunk`, clipped to the grid.
fn chunk_range(chunk: ChunkCoord, radius: u32) -> (IVec3, IVec3) {
    let r = radius.min(GRID_MAX_XZ as u32) as i32;
    let c = chunk.as_ivec3();
    let lo = (c - IVec3::splat(r)).max(IVec3::ZERO);
    let hi = (c + IVec3::splat(r)).min(IVec3::new(GRID_MAX_XZ - 1, GRID_MAX_Y - 1, GRID_MAX_XZ - 1));
    (lo, hi)
}

/// The chunks whose geometry the visibility data of `chunk` depends on: every grid chunk within
/// `radius` (Chebyshev), `chunk` included, in PMF grid order. Missing (air) chunks are listed
/// too, so that creating one dirties its neighbours. `level` gives only the grid; the library
/// (material transparency) is a dependency of every chunk.
pub fn vis_deps(level: &Level, chunk: ChunkCoord, radius: u32) -> Vec<ChunkCoord> {
    let _ = level.frame();
    if !chunk.is_in_grid() {
        return Vec::new();
    }
    let (lo, hi) = chunk_range(chunk, radius);
    let mut out = Vec::new();
    for y in lo.y..=hi.y {
        for x in lo.x..=hi.x {
            for z in lo.z..=hi.z {
                out.push(ChunkCoord::new(x, y, z));
            }
        }
    }
    out
}

/// Calls `f` on every leaf (level lattice address, cube) intersecting the level lattice box `b`,
/// stopping when `f` returns `false`; returns whether it ran to the end. Positions outside the
/// grid stop the walk (returns `false`).
pub(crate) fn for_each_leaf_in_box(level: &Level, b: &LatticeBox, mut f: impl FnMut(CubeAddr, &Cube) -> bool) -> bool {
    if b.is_empty() {
        return true;
    }
    let mut stack = vec![*b];
    while let Some(b) = stack.pop() {
        let Ok((cube, addr)) = level.get(b.min) else {
            return false;
        };
        if !f(addr, &cube) {
            return false;
        }
        let m = addr.max();
        if m.x < b.max.x {
            stack.push(LatticeBox::new(IVec3::new(m.x, b.min.y, b.min.z), b.max));
        }
        let x1 = b.max.x.min(m.x);
        if m.y < b.max.y {
            stack.push(LatticeBox::new(IVec3::new(b.min.x, m.y, b.min.z), IVec3::new(x1, b.max.y, b.max.z)));
        }
        let y1 = b.max.y.min(m.y);
        if m.z < b.max.z {
            stack.push(LatticeBox::new(IVec3::new(b.min.x, b.min.y, m.z), IVec3::new(x1, y1, b.max.z)));
        }
    }
    true
}

/// Marker for an opaque voxel in [`OccluderGrid::labels`].
const OPAQUE: u32 = u32::MAX;

/// The region voxelized: opacity prefix sums and air component labels. See the module docs.
struct OccluderGrid {
    /// Level lattice position of voxel (0, 0, 0).
    origin: IVec3,
    v_log2: u8,
    /// Boxes smaller than `2^slab_min_log2` lattice units skip the slab test.
    slab_min_log2: u8,
    dims: IVec3,
    /// Opaque-voxel prefix sums over `(dims + 1)` (wrapping arithmetic, exact results).
    sat: Vec<u32>,
    /// Per voxel: [`OPAQUE`], or the smallest voxel index of its 26-connected open component.
    labels: Vec<u32>,
}

impl OccluderGrid {
    fn build(level: &Level, library: &Library, region: &LatticeBox, settings: &VisSettings) -> Self {
        let frame = level.frame();
        let chunk_log2 = frame.chunk_lattice_log2();
        let size = region.max - region.min;
        let mut v_log2 = settings.occluder_cell_log2.min(chunk_log2);
        let count = |v: u8| {
            let d = (size >> i32::from(v)).as_i64vec3();
            (d.x * d.y * d.z) as u64
        };
        while v_log2 < chunk_log2 && count(v_log2) > settings.max_occluder_cells as u64 {
            v_log2 += 1;
        }
        let dims = size >> i32::from(v_log2);
        let n = count(v_log2) as usize;
        let idx = |p: IVec3| (p.x + dims.x * (p.y + dims.y * p.z)) as usize;
        let full = 1u64 << (3 * u32::from(v_log2));
        let mut covered = vec![0u64; n];
        let (clo, chi) = (frame.chunk_from_lattice(region.min), frame.chunk_from_lattice(region.max - IVec3::ONE));
        for (c, ch) in level.chunks() {
            let cv = c.as_ivec3();
            if cv.cmplt(clo.as_ivec3()).any() || cv.cmpgt(chi.as_ivec3()).any() {
                continue;
            }
            let base = frame.chunk_min_lattice(*c);
            for (addr, cube) in ch.octree().leaves() {
                if !occludes(&cube, library) {
                    continue;
                }
                let rel = addr.min + base - region.min;
                if addr.size_log2 >= v_log2 {
                    let lo = rel >> i32::from(v_log2);
                    let hi = lo + IVec3::splat(1 << (addr.size_log2 - v_log2));
                    for z in lo.z..hi.z {
                        for y in lo.y..hi.y {
                            for x in lo.x..hi.x {
                                covered[idx(IVec3::new(x, y, z))] = full;
                            }
                        }
                    }
                } else {
                    covered[idx(rel >> i32::from(v_log2))] += 1u64 << (3 * u32::from(addr.size_log2));
                }
            }
        }
        // Prefix sums of opacity.
        let (sx, sy) = ((dims.x + 1) as usize, (dims.y + 1) as usize);
        let sidx = |x: usize, y: usize, z: usize| x + sx * (y + sy * z);
        let mut sat = vec![0u32; sx * sy * (dims.z as usize + 1)];
        for z in 0..dims.z as usize {
            for y in 0..dims.y as usize {
                for x in 0..dims.x as usize {
                    let o = u32::from(covered[x + dims.x as usize * (y + dims.y as usize * z)] == full);
                    let v = o
                        .wrapping_add(sat[sidx(x, y + 1, z + 1)])
                        .wrapping_add(sat[sidx(x + 1, y, z + 1)])
                        .wrapping_add(sat[sidx(x + 1, y + 1, z)])
                        .wrapping_sub(sat[sidx(x, y, z + 1)])
                        .wrapping_sub(sat[sidx(x, y + 1, z)])
                        .wrapping_sub(sat[sidx(x + 1, y, z)])
                        .wrapping_add(sat[sidx(x, y, z)]);
                    sat[sidx(x + 1, y + 1, z + 1)] = v;
                }
            }
        }
        // 26-connected components of the open voxels (union-find, root = smallest index).
        let mut parent: Vec<u32> = (0..n as u32).collect();
        fn find(parent: &mut [u32], mut i: u32) -> u32 {
            while parent[i as usize] != i {
                let g = parent[parent[i as usize] as usize];
                parent[i as usize] = g;
                i = g;
            }
            i
        }
        let open = |i: usize| covered[i] != full;
        for z in 0..dims.z {
            for y in 0..dims.y {
                for x in 0..dims.x {
                    let p = IVec3::new(x, y, z);
                    let i = idx(p);
                    if !open(i) {
                        continue;
                    }
                    for dz in -1..=0 {
                        for dy in -1..=1 {
                            for dx in -1..=1 {
                                if dz == 0 && (dy > 0 || (dy == 0 && dx >= 0)) {
                                    continue;
                                }
                                let q = p + IVec3::new(dx, dy, dz);
                                if q.cmplt(IVec3::ZERO).any() || q.cmpge(dims).any() {
                                    continue;
                                }
                                let j = idx(q);
                                if !open(j) {
                                    continue;
                                }
                                let (a, b) = (find(&mut parent, i as u32), find(&mut parent, j as u32));
                                if a != b {
                                    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
                                    parent[hi as usize] = lo;
                                }
                            }
                        }
                    }
                }
            }
        }
        let labels = (0..n).map(|i| if open(i) { find(&mut parent, i as u32) } else { OPAQUE }).collect();
        OccluderGrid { origin: region.min, v_log2, slab_min_log2: settings.slab_min_log2, dims, sat, labels }
    }

    fn voxel_count(&self) -> u64 {
        self.labels.len() as u64
    }

    fn index(&self, p: IVec3) -> usize {
        (p.x + self.dims.x * (p.y + self.dims.y * p.z)) as usize
    }

    /// Whether every voxel of the inclusive range lies in the grid and is opaque.
    fn all_opaque(&self, lo: IVec3, hi: IVec3) -> bool {
        if lo.cmplt(IVec3::ZERO).any() || hi.cmpge(self.dims).any() || lo.cmpgt(hi).any() {
            return false;
        }
        let (sx, sy) = ((self.dims.x + 1) as usize, (self.dims.y + 1) as usize);
        let s = |x: i32, y: i32, z: i32| self.sat[x as usize + sx * (y as usize + sy * z as usize)];
        let (a, b) = (lo, hi + IVec3::ONE);
        let sum = s(b.x, b.y, b.z)
            .wrapping_sub(s(a.x, b.y, b.z))
            .wrapping_sub(s(b.x, a.y, b.z))
            .wrapping_sub(s(b.x, b.y, a.z))
            .wrapping_add(s(a.x, a.y, b.z))
            .wrapping_add(s(a.x, b.y, a.z))
            .wrapping_add(s(b.x, a.y, a.z))
            .wrapping_sub(s(a.x, a.y, a.z));
        let d = (b - a).as_i64vec3();
        i64::from(sum) == d.x * d.y * d.z
    }

    /// Whether the voxels holding the (level lattice, half-open) box are all opaque.
    fn covers(&self, b: &LatticeBox) -> bool {
        let v = i32::from(self.v_log2);
        self.all_opaque((b.min - self.origin) >> v, (b.max - IVec3::ONE - self.origin) >> v)
    }

    /// Sorted labels of the open voxels whose closed box meets the closed box `b`.
    fn labels_touching(&self, b: &LatticeBox) -> Vec<u32> {
        let v = i32::from(self.v_log2);
        let lo = ((b.min - self.origin - IVec3::ONE) >> v).max(IVec3::ZERO);
        let hi = ((b.max - self.origin) >> v).min(self.dims - IVec3::ONE);
        let mut out = Vec::new();
        for z in lo.z..=hi.z {
            for y in lo.y..=hi.y {
                for x in lo.x..=hi.x {
                    let l = self.labels[self.index(IVec3::new(x, y, z))];
                    if l != OPAQUE && out.last() != Some(&l) {
                        out.push(l);
                    }
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Whether a single one-voxel-thick opaque layer separates the level lattice boxes `a` and
    /// `b` (see the module docs).
    fn hidden(&self, a: &LatticeBox, b: &LatticeBox) -> bool {
        let v = 1i32 << self.v_log2;
        let vf = f64::from(v);
        const EPS: f64 = 1e-6;
        for k in 0..3 {
            let (p, q) = if a.max[k] <= b.min[k] {
                (a, b)
            } else if b.max[k] <= a.min[k] {
                (b, a)
            } else {
                continue;
            };
            let lo = p.max[k] - self.origin[k];
            let hi = q.min[k] - self.origin[k];
            // Layers i with i·v ≥ lo and (i + 1)·v ≤ hi.
            let i0 = ((lo + v - 1) >> self.v_log2).max(0);
            let i1 = (hi >> self.v_log2).min(self.dims[k]);
            if i0 >= i1 {
                continue;
            }
            let o = self.origin.as_dvec3();
            let (pmin, pmax) = (p.min.as_dvec3() - o, p.max.as_dvec3() - o);
            let (qmin, qmax) = (q.min.as_dvec3() - o, q.max.as_dvec3() - o);
            let (pc, qc) = ((pmin + pmax) * 0.5, (qmin + qmax) * 0.5);
            let (j, l) = ((k + 1) % 3, (k + 2) % 3);
            for i in i0..i1 {
                let (c0, c1) = (f64::from(i) * vf, f64::from(i + 1) * vf);
                // Necessary: the centre line's voxel in this layer is opaque.
                let t = ((c0 + c1) * 0.5 - pc[k]) / (qc[k] - pc[k]);
                let m = pc + (qc - pc) * t;
                let mut cv = IVec3::ZERO;
                cv[k] = i;
                cv[j] = (m[j] / vf).floor() as i32;
                cv[l] = (m[l] / vf).floor() as i32;
                if cv.cmplt(IVec3::ZERO).any() || cv.cmpge(self.dims).any() || self.labels[self.index(cv)] != OPAQUE {
                    continue;
                }
                // The shaft's cross-section over the layer: blend weights of `p` in [λ0, λ1].
                let l0 = ((qmin[k] - c1) / (qmin[k] - pmin[k])).clamp(0.0, 1.0);
                let l1 = ((qmax[k] - c0) / (qmax[k] - pmax[k])).clamp(0.0, 1.0);
                let lerp = |w: f64, x: f64, y: f64| w * x + (1.0 - w) * y;
                let mut vlo = IVec3::ZERO;
                let mut vhi = IVec3::ZERO;
                vlo[k] = i;
                vhi[k] = i;
                for ax in [j, l] {
                    let rlo = lerp(l0, pmin[ax], qmin[ax]).min(lerp(l1, pmin[ax], qmin[ax]));
                    let rhi = lerp(l0, pmax[ax], qmax[ax]).max(lerp(l1, pmax[ax], qmax[ax]));
                    // Voxels whose closed box touches the closed interval.
                    vlo[ax] = ((rlo - EPS) / vf).floor() as i32;
                    vhi[ax] = ((rhi + EPS) / vf).floor() as i32;
                }
                if self.all_opaque(vlo, vhi) {
                    return true;
                }
            }
        }
        false
    }
}

/// Mask bit of a component label (for quick subtree rejection).
fn label_bit(l: u32) -> u64 {
    1u64 << (l.wrapping_mul(0x9E37_79B1) >> 26)
}

fn labels_mask(labels: &[u32]) -> u64 {
    labels.iter().fold(0, |m, &l| m | label_bit(l))
}

/// Whether two sorted lists share an element.
fn sorted_intersect(a: &[u32], b: &[u32]) -> bool {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => return true,
        }
    }
    false
}

/// The one-lattice-thick layer just outside `face` of `b`.
fn face_layer(b: &LatticeBox, face: Face) -> LatticeBox {
    let a = face.axis();
    let (mut min, mut max) = (b.min, b.max);
    if face.is_positive() {
        min[a] = b.max[a];
        max[a] = b.max[a] + 1;
    } else {
        min[a] = b.min[a] - 1;
        max[a] = b.min[a];
    }
    LatticeBox::new(min, max)
}

/// Per face (PMF order), the plane a cell must lie strictly beyond for some exposed face of a
/// subtree to face it: for +faces the smallest `max` coordinate of a leaf with that face exposed,
/// for −faces the largest `min` ([`i32::MAX`] / [`i32::MIN`] when no leaf has it).
type Planes = [i32; 6];

const NO_PLANES: Planes = [i32::MAX, i32::MAX, i32::MAX, i32::MIN, i32::MIN, i32::MIN];

/// The planes of one leaf with exposed faces `faces`.
fn leaf_planes(faces: u8, b: &LatticeBox) -> Planes {
    let mut p = NO_PLANES;
    for f in Face::ALL {
        if faces & (1 << f.index()) != 0 {
            p[f.index()] = if f.is_positive() { b.max[f.axis()] } else { b.min[f.axis()] };
        }
    }
    p
}

fn merge_planes(a: &mut Planes, b: &Planes) {
    for i in 0..3 {
        a[i] = a[i].min(b[i]);
        a[i + 3] = a[i + 3].max(b[i + 3]);
    }
}

/// Whether `cell` lies strictly outside one of the planes (orientation test, module docs).
fn faces_toward(p: &Planes, cell: &LatticeBox) -> bool {
    (0..3).any(|a| cell.max[a] > p[a] || cell.min[a] < p[a + 3])
}

const NO_LEAF: u32 = u32::MAX;

/// One octree node in pre-order, with the index past its subtree.
struct TreeNode {
    /// Level lattice box.
    bx: LatticeBox,
    size_log2: u8,
    skip: u32,
    /// Chunk-local address, for a candidate leaf; the leaf's index in `cands` otherwise unused.
    leaf: u32,
    /// Candidate leaves in the subtree.
    count: u32,
    /// Union of the candidates' label masks.
    mask: u64,
    /// Union of the candidates' planes.
    planes: Planes,
}

/// A region chunk's octree prepared for the per-cell walks.
struct ChunkTree {
    chunk: ChunkCoord,
    nodes: Vec<TreeNode>,
    /// Candidate leaves (chunk-local) and their sorted component labels, in pre-order.
    cands: Vec<(CubeAddr, Vec<u32>)>,
    solid: u64,
}

impl ChunkTree {
    fn build(
        level: &Level,
        library: &Library,
        region: &LatticeBox,
        grid: &OccluderGrid,
        chunk: ChunkCoord,
    ) -> Option<ChunkTree> {
        let frame = level.frame();
        let octree = level.chunk(chunk)?.octree();
        if octree.is_empty() {
            return None;
        }
        let base = frame.chunk_min_lattice(chunk);
        let mut nodes: Vec<TreeNode> = Vec::new();
        let mut cands = Vec::new();
        let mut stack: Vec<(usize, u8)> = Vec::new();
        let mut solid = 0;
        for (addr, cube) in octree.pre_order() {
            let bx = addr.translated(base).lattice_box();
            let i = nodes.len();
            let mut node = TreeNode {
                bx,
                size_log2: addr.size_log2,
                skip: 0,
                leaf: NO_LEAF,
                count: 0,
                mask: 0,
                planes: NO_PLANES,
            };
            let Some(cube) = cube else {
                nodes.push(node);
                stack.push((i, 8));
                continue;
            };
            if cube.is_solid() {
                solid += 1;
                let faces = exposed_faces(level, library, region, grid, &bx);
                let labels = if faces == 0 { Vec::new() } else { grid.labels_touching(&bx) };
                if faces != 0 && !labels.is_empty() {
                    node.leaf = cands.len() as u32;
                    node.count = 1;
                    node.mask = labels_mask(&labels);
                    node.planes = leaf_planes(faces, &bx);
                    cands.push((addr, labels));
                }
            }
            node.skip = i as u32 + 1;
            nodes.push(node);
            while let Some(top) = stack.last_mut() {
                top.1 -= 1;
                if top.1 > 0 {
                    break;
                }
                let p = top.0;
                stack.pop();
                nodes[p].skip = nodes.len() as u32;
            }
        }
        for i in (0..nodes.len()).rev() {
            if nodes[i].skip == i as u32 + 1 {
                continue;
            }
            let (mut count, mut mask, mut planes) = (0, 0, NO_PLANES);
            let mut j = i + 1;
            while j < nodes[i].skip as usize {
                count += nodes[j].count;
                mask |= nodes[j].mask;
                merge_planes(&mut planes, &nodes[j].planes);
                j = nodes[j].skip as usize;
            }
            nodes[i].count = count;
            nodes[i].mask = mask;
            nodes[i].planes = planes;
        }
        Some(ChunkTree { chunk, nodes, cands, solid })
    }

    /// Whether the subtree of `nd` can hold nothing visible from `cell`: no candidate, no shared
    /// component (hash mask), no exposed face toward the cell, or a single-slab occluder.
    fn culled(&self, nd: &TreeNode, grid: &OccluderGrid, cell: &LatticeBox, mask: u64) -> bool {
        nd.count == 0
            || nd.mask & mask == 0
            || !faces_toward(&nd.planes, cell)
            || (nd.size_log2 >= grid.slab_min_log2 && grid.hidden(cell, &nd.bx))
    }

    /// An upper bound of the visible candidates: the candidates of the subtrees of edge
    /// `2^coarse_log2` (or leaves above that) that the node tests keep.
    fn estimate(&self, grid: &OccluderGrid, cell: &LatticeBox, mask: u64, coarse_log2: u8) -> u32 {
        let (mut est, mut i) = (0, 0);
        while i < self.nodes.len() {
            let nd = &self.nodes[i];
            if self.culled(nd, grid, cell, mask) {
                i = nd.skip as usize;
            } else if nd.size_log2 <= coarse_log2 || nd.skip as usize == i + 1 {
                est += nd.count;
                i = nd.skip as usize;
            } else {
                i += 1;
            }
        }
        est
    }

    /// Visible candidate leaves from `cell`, in pre-order.
    fn visible_from(&self, grid: &OccluderGrid, cell: &LatticeBox, labels: &[u32], mask: u64) -> Vec<CubeAddr> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < self.nodes.len() {
            let nd = &self.nodes[i];
            if self.culled(nd, grid, cell, mask) {
                i = nd.skip as usize;
                continue;
            }
            if nd.leaf != NO_LEAF {
                let (addr, leaf_labels) = &self.cands[nd.leaf as usize];
                if labels.is_empty() || sorted_intersect(labels, leaf_labels) {
                    out.push(*addr);
                }
            }
            i += 1;
        }
        out
    }
}

/// The uncovered faces of the solid leaf with level lattice box `b` (bit = PMF face index).
/// A face is covered when the layer beyond it lies in `region` and is all occluder.
fn exposed_faces(level: &Level, library: &Library, region: &LatticeBox, grid: &OccluderGrid, b: &LatticeBox) -> u8 {
    let mut mask = 0;
    for f in Face::ALL {
        let layer = face_layer(b, f);
        let covered = region.contains_box(&layer)
            && (grid.covers(&layer) || for_each_leaf_in_box(level, &layer, |_, c| occludes(c, library)));
        if !covered {
            mask |= 1 << f.index();
        }
    }
    mask
}

/// Bakes the visibility data of `chunk`'s air cells. See the [module documentation](self).
///
/// `cells` are level lattice addresses of the chunk's empty leaf cubes (each inside `chunk`);
/// the result has one [`CellVis`] per cell, in the same order.
pub fn bake_chunk_vis(
    level: &Level,
    library: &Library,
    chunk: ChunkCoord,
    cells: &[CubeAddr],
    settings: &VisSettings,
) -> Result<ChunkVisBake, BakeInputError> {
    if !chunk.is_in_grid() {
        return Err(BakeInputError::ChunkOutsideGrid(chunk));
    }
    let frame = level.frame();
    let chunk_addr = frame.chunk_addr(chunk);
    if let Some(&cell) = cells.iter().find(|c| !c.is_aligned() || !chunk_addr.contains_addr(c)) {
        return Err(BakeInputError::CellOutsideChunk { cell, chunk });
    }
    let (lo, hi) = chunk_range(chunk, settings.radius_chunks);
    let region = LatticeBox::new(
        frame.chunk_min_lattice(ChunkCoord::from_ivec3(lo)),
        frame.chunk_min_lattice(ChunkCoord::from_ivec3(hi + IVec3::ONE)),
    );
    let mut stats = VisStats { cells: cells.len() as u64, ..VisStats::default() };
    if cells.is_empty() {
        return Ok(ChunkVisBake { cells: Vec::new(), stats, skipped: false });
    }
    let grid = OccluderGrid::build(level, library, &region, settings);
    stats.occluder_cell_log2 = grid.v_log2;
    stats.occluder_cells = grid.voxel_count();
    let trees: Vec<ChunkTree> = level
        .chunks()
        .map(|(c, _)| *c)
        .filter(|c| {
            let v = c.as_ivec3();
            v.cmpge(lo).all() && v.cmple(hi).all()
        })
        .filter_map(|c| ChunkTree::build(level, library, &region, &grid, c))
        .collect();
    stats.solid_leaves = trees.iter().map(|t| t.solid).sum();
    stats.candidates = trees.iter().map(|t| t.cands.len() as u64).sum();
    let mut out = Vec::with_capacity(cells.len());
    let mut listed = 0u64;
    for &cell in cells {
        if listed > settings.max_listed {
            stats.skipped_chunks = 1;
            return Ok(ChunkVisBake { cells: Vec::new(), stats, skipped: true });
        }
        let cb = cell.lattice_box();
        let labels = grid.labels_touching(&cb);
        let mask = if labels.is_empty() { u64::MAX } else { labels_mask(&labels) };
        let mut vis = CellVis { cell, same_chunk: Vec::new(), other_chunks: Vec::new() };
        for t in &trees {
            stats.pairs_total += t.solid;
            let n = t.cands.len() as u64;
            let pct = u64::from(settings.all_percent.min(100));
            if t.chunk != chunk && pct < 100 && n > 0 {
                let coarse = t.nodes[0].size_log2.saturating_sub(settings.coarse_levels);
                let est = u64::from(t.estimate(&grid, &cb, mask, coarse));
                if est * 100 >= pct * n {
                    stats.pairs_visible += t.solid;
                    stats.whole_chunks += 1;
                    vis.other_chunks.push(ChunkVis { chunk: t.chunk, cubes: VisibleCubes::All });
                    continue;
                }
            }
            let v = t.visible_from(&grid, &cb, &labels, mask);
            listed += v.len() as u64;
            if t.chunk == chunk {
                stats.pairs_visible += v.len() as u64;
                vis.same_chunk = v;
            } else if v.len() as u64 == n && n > 0 {
                stats.pairs_visible += t.solid;
                stats.whole_chunks += 1;
                vis.other_chunks.push(ChunkVis { chunk: t.chunk, cubes: VisibleCubes::All });
            } else if !v.is_empty() {
                stats.pairs_visible += v.len() as u64;
                vis.other_chunks.push(ChunkVis { chunk: t.chunk, cubes: VisibleCubes::Listed(v) });
            }
        }
        out.push(vis);
    }
    if listed > settings.max_listed {
        stats.skipped_chunks = 1;
        return Ok(ChunkVisBake { cells: Vec::new(), stats, skipped: true });
    }
    Ok(ChunkVisBake { cells: out, stats, skipped: false })
}
