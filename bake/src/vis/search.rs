//! The level-wide search: from a source box in one chunk, every chunk a sight line can reach
//! (see the [module documentation](super) for the argument).
//!
//! Coordinates are **grid voxels**: voxel units from the minimum corner of the summary grid, as
//! `f64`. A chunk at grid position `g` spans `[g·n, (g + 1)·n)` on each axis.

use std::sync::Arc;

use glam::IVec3;
use pmfedit_core::map::coords::{ChunkCoord, Face};

use super::ChunkSet;
use super::summary::{ChunkSummary, FaceMask, face_axes};

/// Slack for rounding: window bounds are widened by this much before snapping to squares.
const EPS: f64 = 1e-6;

/// The summaries of every chunk of a level's grid, in PMF order, with an id for each (chunk,
/// face component) pair.
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
}

impl SummaryGrid {
    /// A grid from `min` (inclusive) spanning `dims` chunks, with `chunks` in PMF order.
    pub(crate) fn new(min: IVec3, dims: IVec3, nl: u8, chunks: Vec<Arc<ChunkSummary>>) -> SummaryGrid {
        let mut node_base = Vec::with_capacity(chunks.len() + 1);
        let mut n = 0u32;
        for c in &chunks {
            node_base.push(n);
            n += c.comps.len() as u32;
        }
        node_base.push(n);
        SummaryGrid { min, dims, nl, chunks, node_base }
    }

    /// The grid index of chunk `c`, if it lies in the grid.
    pub(crate) fn index(&self, c: IVec3) -> Option<usize> {
        let d = c - self.min;
        (d.cmpge(IVec3::ZERO).all() && d.cmplt(self.dims).all())
            .then(|| ((d.y * self.dims.x + d.x) * self.dims.z + d.z) as usize)
    }

    /// The grid position (relative to `min`) of index `i`.
    fn position(&self, i: usize) -> IVec3 {
        let i = i as i32;
        let z = i % self.dims.z;
        let x = (i / self.dims.z) % self.dims.x;
        let y = i / (self.dims.z * self.dims.x);
        IVec3::new(x, y, z)
    }

    /// The chunk coordinate of index `i`.
    pub(crate) fn chunk(&self, i: usize) -> ChunkCoord {
        ChunkCoord::from_ivec3(self.min + self.position(i))
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

    fn nodes(&self) -> usize {
        self.node_base[self.chunks.len()] as usize
    }
}

/// A box in grid voxels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct VBox {
    pub lo: [f64; 3],
    pub hi: [f64; 3],
}

impl VBox {
    fn union(&mut self, o: &VBox) -> bool {
        let mut grew = false;
        for a in 0..3 {
            if o.lo[a] < self.lo[a] {
                self.lo[a] = o.lo[a];
                grew = true;
            }
            if o.hi[a] > self.hi[a] {
                self.hi[a] = o.hi[a];
                grew = true;
            }
        }
        grew
    }
}

/// Bounds on axes `a` and `b` of the lines from box `x` through the window `w` (a box flat on
/// axis `k`, at `w.lo[k]`), crossing it in direction `s` (±1), over the slab from the window to
/// `e` voxels beyond it: the bounding box of the window and of the lines' section at the far
/// plane (the section's bounds are monotone in the distance, so the two ends bound the slab).
///
/// A line through `p ∈ x` and `q ∈ w` meets the far plane at `q + μ (q − p)` with
/// `μ = e / (s·(w − p_k))`, and `μ` ranges over `[e / δ_max, e / δ_min]` independently of the
/// in-plane coordinates; each bound is linear in `μ`, so an end of that range attains it. When
/// `x` touches the window's plane `μ` is unbounded (a point right behind a window sees almost a
/// half-space through it).
fn cone(x: &VBox, w: &VBox, k: usize, s: f64, e: f64) -> [[f64; 2]; 3] {
    let wk = w.lo[k];
    let (near, far) = if s > 0.0 { (x.hi[k], x.lo[k]) } else { (x.lo[k], x.hi[k]) };
    let (dmin, dmax) = (s * (wk - near), s * (wk - far));
    let mut out = [[f64::NEG_INFINITY, f64::INFINITY]; 3];
    if dmax <= 0.0 {
        // Not behind the window: no bound (never happens for a source behind its windows).
        return out;
    }
    let mu_min = e / dmax;
    let mu_max = if dmin > 0.0 { e / dmin } else { f64::INFINITY };
    let (a, b) = face_axes(k);
    for ax in [a, b] {
        let dh = w.hi[ax] - x.lo[ax];
        let hi = if dh > 0.0 {
            if mu_max.is_finite() { w.hi[ax] + mu_max * dh } else { f64::INFINITY }
        } else {
            w.hi[ax] + mu_min * dh
        };
        let dl = x.hi[ax] - w.lo[ax];
        let lo = if dl > 0.0 {
            if mu_max.is_finite() { w.lo[ax] - mu_max * dl } else { f64::NEG_INFINITY }
        } else {
            w.lo[ax] - mu_min * dl
        };
        out[ax] = [lo.min(w.lo[ax]), hi.max(w.hi[ax])];
    }
    out
}

/// The squares `0..n` (inclusive range) meeting the closed interval `[lo, hi]` (chunk-local
/// voxels), widened by [`EPS`]; `None` when it misses the chunk.
fn squares(lo: f64, hi: f64, n: i32) -> Option<(u8, u8)> {
    let s0 = ((lo - EPS).floor() as i64).max(0);
    let s1 = ((hi + EPS).ceil() as i64 - 1).min(i64::from(n) - 1);
    (s0 <= s1).then_some((s0 as u8, s1 as u8))
}

/// `mask` restricted to squares `a0..=a1` × `b0..=b1`.
fn restrict(mask: &FaceMask, r: [u8; 4]) -> FaceMask {
    let bits: u16 = ((((1u32 << (r[1] - r[0] + 1)) - 1) << r[0]) & 0xffff) as u16;
    let mut out = [0u16; 16];
    for b in r[2]..=r[3] {
        out[usize::from(b)] = mask[usize::from(b)] & bits;
    }
    out
}

/// The bounding squares `[a0, a1, b0, b1]` of a non-empty mask.
fn bounds(mask: &FaceMask) -> Option<[u8; 4]> {
    let mut any = 0u16;
    let (mut b0, mut b1) = (None, 0u8);
    for (b, &row) in mask.iter().enumerate() {
        if row != 0 {
            any |= row;
            b0.get_or_insert(b as u8);
            b1 = b as u8;
        }
    }
    let b0 = b0?;
    Some([any.trailing_zeros() as u8, 15 - any.leading_zeros() as u8, b0, b1])
}

fn and(x: &FaceMask, y: &FaceMask) -> FaceMask {
    std::array::from_fn(|i| x[i] & y[i])
}

/// What reached a component through one of its chunk's faces.
#[derive(Debug, Clone, Copy)]
struct Slot {
    /// The entry window: squares `[a0, a1, b0, b1]` of the face.
    w: [u8; 4],
    /// A box every such line passed through before the window (the previous window).
    p: VBox,
}

#[derive(Debug, Clone, Copy, Default)]
struct NodeState {
    present: u8,
    queued: u8,
    slots: [Option<Slot>; 6],
}

/// Reusable buffers of [`search`] (one per chunk bake).
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    /// Per node: index into `states`, or `u32::MAX`.
    state_of: Vec<u32>,
    states: Vec<(u32, NodeState)>,
    queue: std::collections::VecDeque<(u32, u8)>,
}

/// What one search found.
#[derive(Debug, Default)]
pub(crate) struct SearchResult {
    /// Grid indices of the chunks with geometry that a line reaches (the source's chunk
    /// excluded), ascending.
    pub visible: Vec<usize>,
    /// State visits (for the figures).
    pub visits: u64,
}

/// Every chunk a sight line from `src` (grid voxels, inside chunk `g0`, in its face component
/// `c0`) can reach. Adds every chunk whose summary it consulted to `reads`.
pub(crate) fn search(
    grid: &SummaryGrid,
    g0: usize,
    c0: usize,
    src: &VBox,
    reads: &mut ChunkSet,
    scratch: &mut Scratch,
) -> SearchResult {
    let nodes = grid.nodes();
    if scratch.state_of.len() != nodes {
        scratch.state_of = vec![u32::MAX; nodes];
    }
    let mut result = SearchResult::default();
    let mut s = Searcher { grid, src, reads, scratch, n: 1 << grid.nl };
    let n0 = grid.node_base[g0] + c0 as u32;
    s.process(n0, g0, c0, None, &mut result);
    while let Some((node, f)) = s.scratch.queue.pop_front() {
        let st = s.state(node);
        st.queued &= !(1 << f);
        // Node → chunk: the chunk whose range of node ids holds it.
        let g = grid.node_base.partition_point(|&b| b <= node) - 1;
        let c = (node - grid.node_base[g]) as usize;
        s.process(node, g, c, Some(Face::ALL[usize::from(f)]), &mut result);
    }
    let mut visible: Vec<usize> = std::mem::take(&mut result.visible);
    for &(node, st) in &s.scratch.states {
        if st.present != 0 {
            let g = grid.node_base.partition_point(|&b| b <= node) - 1;
            if g != g0 && grid.chunks[g].solid {
                visible.push(g);
            }
        }
    }
    for &(node, _) in &s.scratch.states {
        s.scratch.state_of[node as usize] = u32::MAX;
    }
    s.scratch.states.clear();
    visible.retain(|&g| g != g0);
    visible.sort_unstable();
    visible.dedup();
    result.visible = visible;
    result
}

struct Searcher<'a> {
    grid: &'a SummaryGrid,
    src: &'a VBox,
    reads: &'a mut ChunkSet,
    scratch: &'a mut Scratch,
    n: i32,
}

impl Searcher<'_> {
    fn state(&mut self, node: u32) -> &mut NodeState {
        let i = self.scratch.state_of[node as usize];
        if i == u32::MAX {
            self.scratch.state_of[node as usize] = self.scratch.states.len() as u32;
            self.scratch.states.push((node, NodeState::default()));
            &mut self.scratch.states.last_mut().expect("just pushed").1
        } else {
            &mut self.scratch.states[i as usize].1
        }
    }

    /// Merges a window into a node's slot; queues the slot when it grew.
    fn push(&mut self, node: u32, f: Face, w: [u8; 4], p: VBox) {
        let st = self.state(node);
        let fi = f.index();
        let grew = match &mut st.slots[fi] {
            None => {
                st.slots[fi] = Some(Slot { w, p });
                st.present |= 1 << fi;
                true
            }
            Some(slot) => {
                let mut grew = false;
                for i in [0, 2] {
                    if w[i] < slot.w[i] {
                        slot.w[i] = w[i];
                        grew = true;
                    }
                    if w[i + 1] > slot.w[i + 1] {
                        slot.w[i + 1] = w[i + 1];
                        grew = true;
                    }
                }
                slot.p.union(&p) || grew
            }
        };
        if grew && st.queued & (1 << fi) == 0 {
            st.queued |= 1 << fi;
            self.scratch.queue.push_back((node, fi as u8));
        }
    }

    /// Propagates the lines that entered component `c` of chunk `g` through face `entry` (the
    /// source component itself when `None`) to the neighbouring chunks' components.
    fn process(&mut self, node: u32, g: usize, c: usize, entry: Option<Face>, result: &mut SearchResult) {
        result.visits += 1;
        let grid = self.grid;
        let n = self.n;
        let nf = f64::from(n);
        let gp = grid.position(g);
        let glo = (gp * n).as_dvec3().to_array();
        let ghi = ((gp + IVec3::ONE) * n).as_dvec3().to_array();
        let summary = &grid.chunks[g];
        let comp = &summary.comps[c];
        // The region of the chunk the lines can be in, and the box they all passed before it.
        let mut region = VBox { lo: glo, hi: ghi };
        let before = match entry {
            None => *self.src,
            Some(f) => {
                let st = self.state(node);
                let slot = st.slots[f.index()].expect("a queued slot is present");
                let k = f.axis();
                let (a, b) = face_axes(k);
                // Entering through a −face moves towards +.
                let s = if f.is_positive() { -1.0 } else { 1.0 };
                let plane = if f.is_positive() { ghi[k] } else { glo[k] };
                let mut w = VBox { lo: [plane; 3], hi: [plane; 3] };
                w.lo[a] = glo[a] + f64::from(slot.w[0]);
                w.hi[a] = glo[a] + f64::from(slot.w[1]) + 1.0;
                w.lo[b] = glo[b] + f64::from(slot.w[2]);
                w.hi[b] = glo[b] + f64::from(slot.w[3]) + 1.0;
                for x in [self.src, &slot.p] {
                    let r = cone(x, &w, k, s, nf);
                    for ax in [a, b] {
                        region.lo[ax] = region.lo[ax].max(r[ax][0]);
                        region.hi[ax] = region.hi[ax].min(r[ax][1]);
                    }
                }
                if (0..3).any(|ax| region.lo[ax] > region.hi[ax] + EPS) {
                    return;
                }
                w
            }
        };
        for fo in Face::ALL {
            if Some(fo) == entry || comp.faces & (1 << fo.index()) == 0 {
                continue;
            }
            let m = fo.axis();
            let positive = fo.is_positive();
            let q = if positive { ghi[m] } else { glo[m] };
            // A line from the source crosses this plane in this direction only if the source
            // has points behind it (this is what keeps every path monotone).
            if (positive && self.src.lo[m] >= q) || (!positive && self.src.hi[m] <= q) {
                continue;
            }
            // The region must reach the face.
            if (positive && region.hi[m] < q - EPS) || (!positive && region.lo[m] > q + EPS) {
                continue;
            }
            let (a, b) = face_axes(m);
            let Some((a0, a1)) = squares(region.lo[a] - glo[a], region.hi[a] - glo[a], n) else { continue };
            let Some((b0, b1)) = squares(region.lo[b] - glo[b], region.hi[b] - glo[b], n) else { continue };
            let own = restrict(&comp.masks[fo.index()], [a0, a1, b0, b1]);
            if own.iter().all(|&r| r == 0) {
                continue;
            }
            let next = grid.min + gp + fo.normal();
            self.reads.insert(ChunkCoord::from_ivec3(next));
            let Some(g2) = grid.index(next) else { continue };
            let back = fo.opposite();
            let base = grid.node_base[g2];
            // Squares the lines can cross that no component of the neighbour owns are the faces
            // of its opaque voxels on the shared face: seen from here, so the neighbour is
            // visible even where no line enters it.
            let mut open = [0u16; 16];
            for (c2, comp2) in grid.chunks[g2].comps.iter().enumerate() {
                if comp2.faces & (1 << back.index()) == 0 {
                    continue;
                }
                let m = &comp2.masks[back.index()];
                for (o, r) in open.iter_mut().zip(m) {
                    *o |= r;
                }
                if let Some(w2) = bounds(&and(&own, m)) {
                    self.push(base + c2 as u32, back, w2, before);
                }
            }
            if grid.chunks[g2].solid && own.iter().zip(&open).any(|(o, m)| o & !m != 0) {
                result.visible.push(g2);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vbox(lo: [f64; 3], hi: [f64; 3]) -> VBox {
        VBox { lo, hi }
    }

    #[test]
    fn the_cone_bounds_every_line_through_the_window() {
        // Source [0, 2]³, window on x = 10 over y, z in [4, 6]; the far plane at x = 20.
        let x = vbox([0.0; 3], [2.0; 3]);
        let w = vbox([10.0, 4.0, 4.0], [10.0, 6.0, 6.0]);
        let r = cone(&x, &w, 0, 1.0, 10.0);
        // Brute force: lines from sample points of x through sample points of w.
        let mut lo = f64::INFINITY;
        let mut hi = f64::NEG_INFINITY;
        for i in 0..=4 {
            for j in 0..=4 {
                for t in 0..=4 {
                    let p = [f64::from(i) * 0.5, f64::from(j) * 0.5, 1.0];
                    let q = [10.0, 4.0 + f64::from(t) * 0.5, 5.0];
                    for xs in [10.0, 15.0, 20.0] {
                        let lam = (xs - p[0]) / (q[0] - p[0]);
                        let y = p[1] + lam * (q[1] - p[1]);
                        lo = lo.min(y);
                        hi = hi.max(y);
                    }
                }
            }
        }
        assert!(r[1][0] <= lo + 1e-9 && r[1][1] >= hi - 1e-9, "{r:?} vs [{lo}, {hi}]");
        // Tight: the extreme is attained (source corner (2, 0) through window corner (10, 6)).
        assert!((r[1][1] - 13.5).abs() < 1e-9, "{r:?}");
        // Going the other way (s = −1) from a source beyond x = 10.
        let x2 = vbox([18.0, 0.0, 0.0], [20.0, 2.0, 2.0]);
        let r2 = cone(&x2, &w, 0, -1.0, 10.0);
        assert!((r2[1][1] - 13.5).abs() < 1e-9, "{r2:?}");
        // A source touching the window's plane: unbounded.
        let x3 = vbox([8.0, 0.0, 0.0], [10.0, 2.0, 2.0]);
        assert_eq!(cone(&x3, &w, 0, 1.0, 10.0)[1][1], f64::INFINITY);
    }

    #[test]
    fn masks_and_squares() {
        assert_eq!(squares(0.0, 16.0, 16), Some((0, 15)));
        assert_eq!(squares(3.5, 3.5, 16), Some((3, 3)));
        assert_eq!(squares(4.0, 8.0, 16), Some((3, 8)), "closed ends reach the squares beside them");
        assert_eq!(squares(-5.0, -1.0, 16), None);
        let mut m = [0u16; 16];
        m[3] = 0b1111_0000;
        m[9] = 0b1;
        assert_eq!(bounds(&m), Some([0, 7, 3, 9]));
        assert_eq!(bounds(&restrict(&m, [4, 5, 0, 15])), Some([4, 5, 3, 3]));
        assert_eq!(bounds(&[0; 16]), None);
        assert_eq!(bounds(&restrict(&[u16::MAX; 16], [0, 15, 0, 15])), Some([0, 15, 0, 15]));
    }
}
