//! The level-wide reach: for every (chunk, face component) of a level's grid, every chunk a sight
//! line from that component can reach (see the [module documentation](super) for the argument).
//!
//! A generic sight line is monotone along every axis, so it moves in one of the eight octants of
//! directions; crossing chunks it only ever steps along that octant's three signed axes. For one
//! octant the (chunk, component) graph whose edges follow those steps is acyclic, so the reach of
//! every node is the union of its successors' reaches: one pass over the grid in reverse
//! step order, with the reach kept as a bitset over the grid's chunks. The union over the eight
//! octants is the node's **far set**. A level of 4 096 chunks costs eight passes of a few
//! thousand 512-byte unions, instead of one search per component over the whole level.

use std::sync::{Arc, OnceLock};

use glam::IVec3;
use pmfedit_core::format::pmf;
use pmfedit_core::map::coords::{ChunkCoord, Face};

use super::portal::Graph;
use super::summary::ChunkSummary;

/// Most bytes the reach bitsets of one grid may take (the far sets and one octant's scratch);
/// a larger grid lists every chunk with geometry as far-visible from everywhere (conservative).
pub const MAX_REACH_BYTES: usize = 256 << 20;

/// The fewest far chunks of a list [`SummaryGrid::culls_little`] leaves out.
pub const LONG_LIST_CHUNKS: u32 = 64;

/// The summaries of every chunk of a level's grid, in PMF order, with an id for each (chunk,
/// face component) pair and each pair's far set.
#[derive(Debug)]
pub struct SummaryGrid {
    /// Chunk coordinate of grid position (0, 0, 0).
    pub(crate) min: IVec3,
    /// Chunks along x, y, z.
    pub(crate) dims: IVec3,
    /// `2^nl` voxels per chunk edge.
    pub(crate) nl: u8,
    pub(crate) chunks: Vec<Arc<ChunkSummary>>,
    /// Node id of component 0 of each chunk; one extra entry at the end.
    node_base: Vec<u32>,
    /// `u64` words per far set (one bit per grid chunk).
    words: usize,
    /// Per node, its far set: the grid chunks with geometry a line from the component reaches
    /// (never its own chunk). `None` when the grid is too large for [`MAX_REACH_BYTES`]: every
    /// chunk with geometry then counts as reached. Shared by grids of the same summaries
    /// ([`Self::reweighed`]).
    far: Option<Arc<Vec<u64>>>,
    /// Per node, its far set as chunk records, made on first use ([`Self::far_list`]) and shared
    /// by every far list written from this grid (and the grids sharing its far sets).
    far_lists: Arc<Vec<OnceLock<Arc<[pmf::VisibleChunk]>>>>,
    /// Per node, its far list with the node's own chunk named whole too
    /// ([`Self::far_list_whole`]), made on first use and shared like the far lists.
    whole_lists: Arc<Vec<OnceLock<Arc<[pmf::VisibleChunk]>>>>,
    /// Per grid chunk, its geometry cubes (solid leaves; 0 for a chunk the level does not store).
    weights: Vec<u32>,
    /// The level's geometry cubes: the sum of [`Self::weights`].
    total: u64,
    /// Per node, the geometry cubes of its far set: at least what a cell of the component lists
    /// of other chunks, whatever its own chunk's list.
    seen: Vec<u64>,
    /// Per node, the chunks of its far set (shared like the far sets).
    far_len: Arc<Vec<u32>>,
    /// The fewest far chunks of a list [`Self::culls_little`] leaves out: [`LONG_LIST_CHUNKS`].
    long_list: u32,
    /// A component whose cells would cull less than this share (percent) of the level's
    /// geometry cubes writes no lists ([`Self::culls_little`]); `0`: every component does.
    min_culled: u8,
}

impl SummaryGrid {
    /// A grid from `min` (inclusive) spanning `dims` chunks, with `chunks` in PMF order; computes
    /// every node's far set, narrowed by portal limits for `portal_steps` steps
    /// ([`super::portal`]; `0`: none).
    pub(crate) fn new(
        min: IVec3,
        dims: IVec3,
        nl: u8,
        chunks: Vec<Arc<ChunkSummary>>,
        portal_steps: u32,
    ) -> SummaryGrid {
        let mut node_base = Vec::with_capacity(chunks.len() + 1);
        let mut n = 0u32;
        for c in &chunks {
            node_base.push(n);
            n += c.comps.len() as u32;
        }
        node_base.push(n);
        let words = chunks.len().div_ceil(64);
        let far_lists = Arc::new((0..n).map(|_| OnceLock::new()).collect());
        let whole_lists = Arc::new((0..n).map(|_| OnceLock::new()).collect());
        let weights = vec![0; chunks.len()];
        let mut grid = SummaryGrid {
            min,
            dims,
            nl,
            chunks,
            node_base,
            words,
            far: None,
            far_lists,
            whole_lists,
            weights,
            total: 0,
            seen: vec![0; n as usize],
            far_len: Arc::new(Vec::new()),
            long_list: LONG_LIST_CHUNKS,
            min_culled: 0,
        };
        if (n as usize).saturating_mul(words).saturating_mul(16) <= MAX_REACH_BYTES {
            grid.far = Some(Arc::new(grid.reach(portal_steps)));
        }
        let solid = grid.chunks.iter().filter(|c| c.solid).count() as u32;
        grid.far_len = Arc::new(
            (0..grid.chunks.len())
                .flat_map(|g| (0..grid.chunks[g].comps.len()).map(move |c| (g, c)))
                .map(|(g, c)| match grid.far_bits(g, c) {
                    Some(bits) => bits.iter().map(|w| w.count_ones()).sum(),
                    None => solid - u32::from(grid.chunks[g].solid),
                })
                .collect(),
        );
        grid
    }

    /// This grid with `weights` (per grid chunk, its geometry cubes) and `min_culled`
    /// ([`Self::culls_little`]). With `prev`, the grid of the same box before an edit, each
    /// node's far geometry is worked out from its counterpart's there (the same chunk and
    /// component index): its sum, plus the chunks its far set gained, minus those it lost, plus
    /// the changed counts of the chunks it kept. An edit changes few far sets and few counts, so
    /// this reads each far set's words once instead of summing every bit (on `terrain(32,4,32)`
    /// a few milliseconds per edit that changes a summary).
    pub(crate) fn weighed(mut self, weights: Vec<u32>, min_culled: u8, prev: Option<&SummaryGrid>) -> SummaryGrid {
        assert_eq!(weights.len(), self.chunks.len(), "one weight per grid chunk");
        self.total = weights.iter().map(|&w| u64::from(w)).sum();
        self.weights = weights;
        self.min_culled = min_culled;
        let w = self.words;
        let prev = prev.filter(|p| p.dims == self.dims && p.weights.len() == self.weights.len() && p.far.is_some());
        let shared = prev.is_some_and(|p| self.shares_far_sets(p));
        let changed: Vec<usize> = prev
            .map_or_else(Vec::new, |p| (0..self.weights.len()).filter(|&k| p.weights[k] != self.weights[k]).collect());
        for g in 0..self.chunks.len() {
            for c in 0..self.chunks[g].comps.len() {
                let node = self.node_base[g] as usize + c;
                let Some(f) = &self.far else {
                    self.seen[node] = self.total - u64::from(self.weights[g]);
                    continue;
                };
                let bits = &f[node * w..(node + 1) * w];
                let before = prev.and_then(|p| {
                    (p.chunks[g].comps.len() == self.chunks[g].comps.len()).then(|| {
                        let n = p.node_base[g] as usize + c;
                        (p.seen[n], &p.far.as_deref().expect("filtered")[n * w..(n + 1) * w], p)
                    })
                });
                self.seen[node] = match before {
                    Some((seen, old, p)) => {
                        let mut s = seen as i64;
                        // Shared far sets (reweighed) have no bit to compare.
                        let n = if shared { 0 } else { w };
                        for (i, (a, b)) in old[..n].iter().zip(&bits[..n]).enumerate() {
                            let mut diff = a ^ b;
                            while diff != 0 {
                                let k = i * 64 + diff.trailing_zeros() as usize;
                                diff &= diff - 1;
                                if b & (1 << (k % 64)) != 0 {
                                    s += i64::from(self.weights[k]);
                                } else {
                                    s -= i64::from(p.weights[k]);
                                }
                            }
                        }
                        for &k in &changed {
                            if old[k / 64] & bits[k / 64] & (1 << (k % 64)) != 0 {
                                s += i64::from(self.weights[k]) - i64::from(p.weights[k]);
                            }
                        }
                        s as u64
                    }
                    None => bit_indices(bits).map(|i| u64::from(self.weights[i])).sum(),
                };
            }
        }
        self
    }

    /// This grid with other `weights` (the same summaries, so the same far sets, shared): what
    /// an edit that changes a chunk's cubes but not its summary makes of the grid, weighed from
    /// this one ([`Self::weighed`]: only the changed counts move each node's far geometry).
    pub(crate) fn reweighed(&self, weights: Vec<u32>) -> SummaryGrid {
        let same = SummaryGrid {
            min: self.min,
            dims: self.dims,
            nl: self.nl,
            chunks: self.chunks.clone(),
            node_base: self.node_base.clone(),
            words: self.words,
            far: self.far.clone(),
            far_lists: self.far_lists.clone(),
            whole_lists: self.whole_lists.clone(),
            weights: Vec::new(),
            total: 0,
            seen: vec![0; self.seen.len()],
            far_len: self.far_len.clone(),
            long_list: self.long_list,
            min_culled: self.min_culled,
        };
        same.weighed(weights, self.min_culled, Some(self))
    }

    /// Whether `other` holds the very same far sets (made once, [`Self::reweighed`]).
    pub(crate) fn shares_far_sets(&self, other: &SummaryGrid) -> bool {
        matches!((&self.far, &other.far), (Some(x), Some(y)) if Arc::ptr_eq(x, y))
    }

    /// Per grid chunk, its geometry cubes.
    pub(crate) fn weights(&self) -> &[u32] {
        &self.weights
    }

    /// The geometry cubes of the far set of face component `comp` of grid chunk `g` (what a cell
    /// of it lists of other chunks), and the level's.
    pub fn geometry_seen(&self, g: usize, comp: usize) -> (u64, u64) {
        (self.seen[self.node_base[g] as usize + comp], self.total)
    }

    /// Whether the cells of face component `comp` of grid chunk `g` would cull less than
    /// [`VisSettings::min_culled`](super::VisSettings::min_culled) percent of the level's
    /// geometry cubes whatever their own chunk's lists: their far set alone holds the rest. Such
    /// a cell writes no lists (PMF-NOTES V1: a cell without data culls nothing, which is nearly
    /// what its lists would do, at none of their bytes). It depends on the grid only (far sets
    /// and geometry counts), so [`Self::same_far_as`] can tell when it changes.
    ///
    /// Only far sets of at least [`LONG_LIST_CHUNKS`] chunks count: a shorter list costs a few
    /// hundred bytes at most, and on a small level it still shows what a cell sees.
    pub fn culls_little(&self, g: usize, comp: usize) -> bool {
        let node = self.node_base[g] as usize + comp;
        let (seen, total) = (self.seen[node], self.total);
        self.far_len[node] >= self.long_list && (total - seen.min(total)) * 100 < total * u64::from(self.min_culled)
    }

    /// The grid index of chunk `c`, if it lies in the grid.
    pub(crate) fn index(&self, c: IVec3) -> Option<usize> {
        let d = c - self.min;
        (d.cmpge(IVec3::ZERO).all() && d.cmplt(self.dims).all())
            .then(|| ((d.y * self.dims.x + d.x) * self.dims.z + d.z) as usize)
    }

    /// The chunk coordinate of index `i`.
    pub(crate) fn chunk(&self, i: usize) -> ChunkCoord {
        let i = i as i32;
        let z = i % self.dims.z;
        let x = (i / self.dims.z) % self.dims.x;
        let y = i / (self.dims.z * self.dims.x);
        ChunkCoord::from_ivec3(self.min + IVec3::new(x, y, z))
    }

    /// Chunks in the grid.
    pub fn len(&self) -> usize {
        self.chunks.len()
    }

    /// Whether the grid holds no chunk.
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// The summary of chunk `c`, if it lies in the grid.
    pub fn summary(&self, c: ChunkCoord) -> Option<&Arc<ChunkSummary>> {
        self.index(c.as_ivec3()).map(|i| &self.chunks[i])
    }

    /// The far set of face component `comp` of grid chunk `g`, as bits over grid indices; `None`
    /// when every chunk with geometry counts ([`MAX_REACH_BYTES`]).
    pub(crate) fn far_bits(&self, g: usize, comp: usize) -> Option<&[u64]> {
        let node = self.node_base[g] as usize + comp;
        self.far.as_deref().map(|f| &f[node * self.words..(node + 1) * self.words])
    }

    /// The chunks of the far set of face component `comp` of grid chunk `g`, in PMF order.
    pub fn far_chunks(&self, g: usize, comp: usize) -> Vec<ChunkCoord> {
        match self.far_bits(g, comp) {
            Some(bits) => bit_indices(bits).map(|i| self.chunk(i)).collect(),
            None => (0..self.chunks.len()).filter(|&i| i != g && self.chunks[i].solid).map(|i| self.chunk(i)).collect(),
        }
    }

    /// [`Self::far_chunks`] as PMF chunk records naming each chunk whole (`0` = all its cubes),
    /// by absolute chunk coordinate (`x`, `z` < 4096, `y` < 256; chunks outside that are left
    /// out), made once per node and grid and shared by the lists written from it.
    pub fn far_list(&self, g: usize, comp: usize) -> Arc<[pmf::VisibleChunk]> {
        let node = self.node_base[g] as usize + comp;
        self.far_lists[node]
            .get_or_init(|| {
                self.far_chunks(g, comp)
                    .into_iter()
                    .filter(|c| c.is_in_grid())
                    .map(|c| pmf::VisibleChunk {
                        chunk: pmf::ChunkIndex { y: c.y as u8, x: c.x as u16, z: c.z as u16 },
                        cubes: Vec::new(),
                    })
                    .collect()
            })
            .clone()
    }

    /// [`Self::far_list`] with grid chunk `g` itself (`me`, its absolute index; `None`: outside
    /// the PMF coordinate space) named whole too, at its place in PMF order: what a cell over its
    /// chunk's share of the budget lists (`vis::CellLists::OwnWhole`). Made once per node and
    /// grid, like the far list (`me` is a function of `g`).
    pub fn far_list_whole(&self, g: usize, comp: usize, me: Option<pmf::ChunkIndex>) -> Arc<[pmf::VisibleChunk]> {
        let node = self.node_base[g] as usize + comp;
        self.whole_lists[node].get_or_init(|| with_own_chunk(&self.far_list(g, comp), me)).clone()
    }

    /// Whether `other` spans the same chunks.
    pub fn same_box(&self, other: &SummaryGrid) -> bool {
        self.min == other.min && self.dims == other.dims && self.nl == other.nl
    }

    /// Whether chunk `c` has the same summary, the same far sets and the same choice of which
    /// components write lists ([`Self::culls_little`]) in `other` (which must span the same box,
    /// [`Self::same_box`]): its far lists are then the same.
    pub fn same_far_as(&self, other: &SummaryGrid, c: ChunkCoord) -> bool {
        let Some(g) = self.index(c.as_ivec3()) else { return true };
        let (a, b) = (&self.chunks[g], &other.chunks[g]);
        let shared = self.shares_far_sets(other);
        (Arc::ptr_eq(a, b) || a == b)
            && (0..a.comps.len()).all(|i| {
                (shared || self.far_bits(g, i) == other.far_bits(g, i))
                    && self.culls_little(g, i) == other.culls_little(g, i)
            })
    }

    /// Every node's far set: the union over the eight octants of its reach along that octant's
    /// steps, narrowed by portal limits for `portal_steps` steps.
    fn reach(&self, portal_steps: u32) -> Vec<u64> {
        let nodes = self.node_base[self.chunks.len()] as usize;
        let w = self.words;
        let mut far = vec![0u64; nodes * w];
        let mut reach = vec![0u64; nodes * w];
        let mut acc = vec![0u64; w];
        let d = self.dims;
        let portals = Graph {
            dims: d,
            n: 1 << self.nl,
            chunks: &self.chunks,
            node_base: &self.node_base,
            words: w,
            steps: portal_steps,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        };
        for octant in 0..8 {
            let positive = [octant & 1 != 0, octant & 2 != 0, octant & 4 != 0];
            let steps = [0, 1, 2].map(|a| Face::from_axis(a, positive[a]));
            // Successors lie further along each step: visit them first.
            let along = |a: usize, i: i32| if positive[a] { d[a] - 1 - i } else { i };
            for iy in 0..d.y {
                for ix in 0..d.x {
                    for iz in 0..d.z {
                        let p = IVec3::new(along(0, ix), along(1, iy), along(2, iz));
                        let g = ((p.y * d.x + p.x) * d.z + p.z) as usize;
                        for (c, comp) in self.chunks[g].comps.iter().enumerate() {
                            acc.fill(0);
                            for f in steps {
                                if comp.faces & (1 << f.index()) == 0 {
                                    continue;
                                }
                                let q = p + f.normal();
                                if q.cmplt(IVec3::ZERO).any() || q.cmpge(d).any() {
                                    continue;
                                }
                                let g2 = ((q.y * d.x + q.x) * d.z + q.z) as usize;
                                let back = f.opposite().index();
                                let own = &comp.masks[f.index()];
                                let next = &self.chunks[g2];
                                // The neighbour is in sight: a line enters it, or meets the faces
                                // of its opaque voxels on the shared face.
                                if next.solid {
                                    acc[g2 / 64] |= 1 << (g2 % 64);
                                }
                                for (c2, comp2) in next.comps.iter().enumerate() {
                                    if comp2.faces & (1 << back) != 0
                                        && own.iter().zip(&comp2.masks[back]).any(|(a, b)| a & b != 0)
                                    {
                                        let n2 = self.node_base[g2] as usize + c2;
                                        for (a, r) in acc.iter_mut().zip(&reach[n2 * w..(n2 + 1) * w]) {
                                            *a |= r;
                                        }
                                    }
                                }
                            }
                            let n = self.node_base[g] as usize + c;
                            reach[n * w..(n + 1) * w].copy_from_slice(&acc);
                            if portal_steps == 0 {
                                for (f, a) in far[n * w..(n + 1) * w].iter_mut().zip(&acc) {
                                    *f |= a;
                                }
                            }
                        }
                    }
                }
            }
            if portal_steps > 0 {
                portals.add_octant(octant, &reach, &mut far);
            }
        }
        far
    }
}

/// `far` (chunk records in PMF order) with `me` named whole at its place; `far` alone when `me`
/// is `None`.
pub(crate) fn with_own_chunk(far: &[pmf::VisibleChunk], me: Option<pmf::ChunkIndex>) -> Arc<[pmf::VisibleChunk]> {
    let mut v = far.to_vec();
    if let Some(me) = me {
        let at = v.partition_point(|c| c.chunk < me);
        v.insert(at, pmf::VisibleChunk { chunk: me, cubes: Vec::new() });
    }
    v.into()
}

/// The indices of the set bits of `bits`, ascending.
pub(crate) fn bit_indices(bits: &[u64]) -> impl Iterator<Item = usize> + '_ {
    bits.iter().enumerate().flat_map(|(w, &word)| {
        let mut rest = word;
        std::iter::from_fn(move || {
            if rest == 0 {
                return None;
            }
            let b = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            Some(w * 64 + b)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::super::summary::FaceComp;
    use super::*;

    /// A solid chunk with one component owning every square of the faces in `faces`.
    fn chunk(faces: &[Face]) -> Arc<ChunkSummary> {
        let mut comp = FaceComp { faces: 0, masks: [[0; 16]; 6] };
        for f in faces {
            comp.faces |= 1 << f.index();
            comp.masks[f.index()] = [u16::MAX; 16];
        }
        Arc::new(ChunkSummary { nl: 4, comps: vec![comp], solid: true })
    }

    #[test]
    fn the_reach_follows_monotone_paths_only() {
        use Face::*;
        // 2 × 1 × 2 chunks, PMF order (x, z): (0, 0), (0, 1), (1, 0), (1, 1). A U-shaped passage
        // (0, 0) → (1, 0) → (1, 1) → (0, 1): the last step turns back along x.
        let chunks = vec![chunk(&[PosX]), chunk(&[PosX]), chunk(&[NegX, PosZ]), chunk(&[NegZ, NegX])];
        let grid = SummaryGrid::new(IVec3::ZERO, IVec3::new(2, 1, 2), 4, chunks, 0);
        let at = |x, z| ChunkCoord::new(x, 0, z);
        assert_eq!(grid.far_chunks(0, 0), vec![at(1, 0), at(1, 1)], "no line turns back to (0, 1)");
        // From (0, 1): + x, then − z; never back to (0, 0).
        assert_eq!(grid.far_chunks(1, 0), vec![at(1, 0), at(1, 1)]);
        // From the corner chunk (1, 0): both ways out, and (0, 1) beyond (1, 1).
        assert_eq!(grid.far_chunks(2, 0), vec![at(0, 0), at(0, 1), at(1, 1)]);
        // Squares that do not overlap join nothing: the neighbour's faces are in sight, nothing
        // beyond it.
        let mut a = (*chunk(&[PosX])).clone();
        a.comps[0].masks[PosX.index()] = [0x00ff; 16];
        let mut b = (*chunk(&[NegX, PosZ])).clone();
        b.comps[0].masks[NegX.index()] = [0xff00; 16];
        let chunks = vec![Arc::new(a), chunk(&[PosX]), Arc::new(b), chunk(&[NegZ, NegX])];
        let grid = SummaryGrid::new(IVec3::ZERO, IVec3::new(2, 1, 2), 4, chunks, 0);
        assert_eq!(grid.far_chunks(0, 0), vec![at(1, 0)]);
    }

    /// A component counts the geometry of its far set; it culls little when the rest (its own
    /// chunk's included) is under `min_culled` percent of the level's. New weights on the same
    /// summaries give what a fresh grid gives, sharing the far sets.
    #[test]
    fn components_that_see_most_of_the_geometry_cull_little() {
        use Face::*;
        // The U of the test above: from grid chunk 0, far set {2, 3}; from 1, {2, 3}; from 2,
        // {0, 1, 3}; from 3, {0, 1, 2} (indices in PMF order).
        let chunks = vec![chunk(&[PosX]), chunk(&[PosX]), chunk(&[NegX, PosZ]), chunk(&[NegZ, NegX])];
        let grid = |w: [u32; 4], min: u8| {
            let mut g = SummaryGrid::new(IVec3::ZERO, IVec3::new(2, 1, 2), 4, chunks.clone(), 0);
            g.long_list = 2;
            g.weighed(w.to_vec(), min, None)
        };
        let a = grid([5, 5, 30, 60], 10);
        assert_eq!([0, 1, 2, 3].map(|g| a.geometry_seen(g, 0)), [(90, 100), (90, 100), (70, 100), (40, 100)]);
        // Culling at most 10 %, 10 %, 30 %, 60 %: none under a floor of 10 %; two under 11 %.
        assert!((0..4).all(|g| !a.culls_little(g, 0)), "exactly 10 % is not under 10 %");
        let b = grid([5, 5, 30, 60], 11);
        assert_eq!((0..4).map(|g| b.culls_little(g, 0)).collect::<Vec<_>>(), [true, true, false, false]);
        assert!((0..4).all(|g| !grid([5, 5, 30, 60], 0).culls_little(g, 0)), "0: every component lists");
        assert!((0..4).all(|g| !grid([0; 4], 10).culls_little(g, 0)), "no geometry: nothing to weigh");
        // Far sets of 2 chunks are long lists here; of 3 they are not under a floor of 3.
        let mut short = SummaryGrid::new(IVec3::ZERO, IVec3::new(2, 1, 2), 4, chunks.clone(), 0);
        short.long_list = 3;
        let short = short.weighed(vec![5, 5, 30, 60], 11, None);
        assert_eq!((0..4).map(|g| short.culls_little(g, 0)).collect::<Vec<_>>(), [false; 4]);
        assert!(
            !SummaryGrid::new(IVec3::ZERO, IVec3::new(2, 1, 2), 4, chunks.clone(), 0)
                .weighed(vec![0, 0, 0, 1], 100, None)
                .culls_little(0, 0),
            "{LONG_LIST_CHUNKS} chunks at least by default"
        );
        // Chunk 1 loses 3 cubes, chunk 3 gains 3: chunk 0's far set now holds 93 of 100.
        let c = a.reweighed(vec![5, 2, 30, 63]);
        let fresh = grid([5, 2, 30, 63], 10);
        assert!(c.shares_far_sets(&a) && !fresh.shares_far_sets(&a));
        for g in 0..4 {
            assert_eq!(c.geometry_seen(g, 0), fresh.geometry_seen(g, 0), "chunk {g}");
            assert_eq!(c.culls_little(g, 0), fresh.culls_little(g, 0), "chunk {g}");
            assert!(c.same_far_as(&fresh, c.chunk(g)));
        }
        assert_eq!(c.geometry_seen(0, 0), (93, 100));
        assert!(c.culls_little(0, 0) && c.culls_little(1, 0) && !c.culls_little(2, 0));
        // Chunk 0's choice flipped: its far lists are no longer the same; chunk 2's are.
        assert!(!c.same_far_as(&a, c.chunk(0)));
        assert!(c.same_far_as(&a, c.chunk(2)));

        // Another reach (chunk 0's and 2's squares no longer meet: chunk 0's far set loses
        // chunk 3), weighed from the grid before it and back again (the far set gains it), with
        // other counts: the same as weighing from scratch.
        let mut p = (*chunk(&[PosX])).clone();
        p.comps[0].masks[PosX.index()] = [0x00ff; 16];
        let mut q = (*chunk(&[NegX, PosZ])).clone();
        q.comps[0].masks[NegX.index()] = [0xff00; 16];
        let other = vec![Arc::new(p), chunk(&[PosX]), Arc::new(q), chunk(&[NegZ, NegX])];
        let reach = |chunks: &Vec<Arc<ChunkSummary>>| {
            let mut g = SummaryGrid::new(IVec3::ZERO, IVec3::new(2, 1, 2), 4, chunks.clone(), 0);
            g.long_list = 2;
            g
        };
        assert_eq!(reach(&other).far_chunks(0, 0).len(), 1);
        for w in [[5, 5, 30, 60], [1, 2, 3, 4], [0, 9, 0, 9], [7, 0, 7, 0]] {
            let there = reach(&other).weighed(w.to_vec(), 10, Some(&a));
            let fresh = reach(&other).weighed(w.to_vec(), 10, None);
            let back = reach(&chunks).weighed(vec![2, 3, 5, 7], 10, Some(&there));
            let back_fresh = reach(&chunks).weighed(vec![2, 3, 5, 7], 10, None);
            for g in 0..4 {
                assert_eq!(there.geometry_seen(g, 0), fresh.geometry_seen(g, 0), "{w:?} chunk {g}");
                assert_eq!(back.geometry_seen(g, 0), back_fresh.geometry_seen(g, 0), "{w:?} back, chunk {g}");
            }
        }
    }
}
