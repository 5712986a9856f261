//! Portal limits on the reach: the far sets of [`super::search`], narrowed by the directions a
//! sight line can take through the openings it crosses.
//!
//! The plain reach follows every monotone path of the (chunk, component) graph, and in a building
//! of rooms joined by doors a staircase of doors reaches almost everything, though no straight line
//! passes through them all. Here each source node is walked on its own, per octant, keeping the
//! set of lines that can still pass through every opening crossed so far:
//!
//! - A line of one octant, mirrored so its direction has no negative component, projects onto each
//!   coordinate plane `(u, v)` as a 2D line of non-negative slope. Lines `v = a + b·u` with
//!   `0 ≤ b ≤ 1` and, swapping the axes, `u = a + b·v` with `0 ≤ b ≤ 1` cover every such slope; in
//!   either form, "it passes through this opening" is a pair of linear constraints on `(a, b)`.
//!   The feasible `(a, b)` of one plane and form are a convex polygon ([`Poly`]), cut by one
//!   half-plane per constraint.
//! - A 3D line through the openings projects to a 2D line through their projections in every
//!   plane, so keeping the three planes apart (and each opening as its bounding rectangle)
//!   only adds lines: conservative.
//! - Paths of one octant only step forwards, so the nodes are visited layer by layer (each step
//!   adds one to the distance along the octant's axes). Where paths meet, the node keeps the
//!   convex hull of their polygons: again only more lines.
//!
//! A walk is cut after [`super::VisSettings::portal_steps`] steps, or at a layer wider than
//! [`MAX_LAYER`] nodes or holding more than [`MAX_AIR`] nodes of chunks without geometry (open
//! ground, where the lines narrow little and a walk would visit most of the level): the nodes it
//! got to then add their plain reach along the octant (every monotone path on from them). That
//! bounds the cost of a walk and stays conservative.
//!
//! A neighbour with geometry is in sight when some kept line reaches the face it shares with the
//! node's component (its opaque voxels there face the line), as in the plain reach. Every line the
//! plain reach follows that is straight is kept, so the result is a subset of the plain far set
//! and a superset of what is visible.

use std::sync::Arc;

use glam::IVec3;
use pmfedit_core::map::coords::Face;

use super::summary::{ChunkSummary, FaceMask, face_axes};

/// Slack of every half-plane, in voxels: rounding must only ever keep lines, never drop one.
const EPS: f64 = 1e-6;

/// No place in a walk's next layer.
const NONE: u32 = u32::MAX;

/// Most nodes in one layer of a walk before it hands over to the plain reach.
const MAX_LAYER: usize = 12;

/// Most nodes in chunks without geometry in one layer of a walk before it hands over: open air
/// narrows the lines only by its chunk faces.
const MAX_AIR: usize = 4;

/// The oriented coordinate planes `(u, v)` of the polygons of a [`Lines`], in order: lines
/// `v = a + b·u` with `0 ≤ b ≤ 1`.
const PLANES: [(usize, usize); 6] = [(0, 1), (1, 0), (0, 2), (2, 0), (1, 2), (2, 1)];

/// Most vertices a [`Poly`] keeps; past it, its bounding box (more lines, never fewer).
const MAX_VERTICES: usize = 16;

/// A convex polygon of `(a, b)` points, counter-clockwise; empty when no line is left.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Poly {
    len: u8,
    v: [[f64; 2]; MAX_VERTICES],
}

impl Poly {
    const EMPTY: Poly = Poly { len: 0, v: [[0.0; 2]; MAX_VERTICES] };

    fn of(points: &[[f64; 2]]) -> Poly {
        if points.len() > MAX_VERTICES {
            let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
            for p in points {
                for k in 0..2 {
                    lo[k] = lo[k].min(p[k]);
                    hi[k] = hi[k].max(p[k]);
                }
            }
            return Poly::of(&[lo, [hi[0], lo[1]], hi, [lo[0], hi[1]]]);
        }
        let mut p = Poly::EMPTY;
        p.v[..points.len()].copy_from_slice(points);
        p.len = points.len() as u8;
        p
    }

    fn points(&self) -> &[[f64; 2]] {
        &self.v[..usize::from(self.len)]
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The points with `lo ≤ a + b·t ≤ hi` (either bound infinite to leave that side open).
    fn clip(&self, t: f64, lo: f64, hi: f64) -> Poly {
        let mut p = *self;
        if hi.is_finite() {
            p = p.clip_half(|q| hi + EPS - (q[0] + q[1] * t));
        }
        if lo.is_finite() && !p.is_empty() {
            p = p.clip_half(|q| (q[0] + q[1] * t) - (lo - EPS));
        }
        p
    }

    /// The part where `side(q) ≥ 0` (`side` affine), Sutherland–Hodgman.
    fn clip_half(&self, side: impl Fn([f64; 2]) -> f64) -> Poly {
        let p = self.points();
        let mut out = [[0.0; 2]; MAX_VERTICES + 1];
        let mut n = 0;
        for (i, &q) in p.iter().enumerate() {
            let r = p[(i + 1) % p.len()];
            let (sq, sr) = (side(q), side(r));
            if sq >= 0.0 {
                out[n] = q;
                n += 1;
            }
            if (sq >= 0.0) != (sr >= 0.0) {
                let k = sq / (sq - sr);
                out[n] = [q[0] + (r[0] - q[0]) * k, q[1] + (r[1] - q[1]) * k];
                n += 1;
            }
        }
        Poly::of(&out[..n])
    }

    /// The convex hull of both polygons' points.
    fn hull(&self, other: &Poly) -> Poly {
        if other.is_empty() {
            return *self;
        }
        if self.is_empty() {
            return *other;
        }
        let mut pts = [[0.0; 2]; 2 * MAX_VERTICES];
        let n = usize::from(self.len + other.len);
        pts[..n].iter_mut().zip(self.points().iter().chain(other.points())).for_each(|(d, s)| *d = *s);
        let pts = &mut pts[..n];
        pts.sort_unstable_by(|p, q| p[0].total_cmp(&q[0]).then(p[1].total_cmp(&q[1])));
        let cross =
            |o: [f64; 2], a: [f64; 2], b: [f64; 2]| (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
        // Andrew's monotone chain; collinear and repeated points are dropped (they add no line).
        let mut h = [[0.0; 2]; 2 * MAX_VERTICES + 1];
        let mut k = 0;
        for &p in pts.iter() {
            while k >= 2 && cross(h[k - 2], h[k - 1], p) <= 0.0 {
                k -= 1;
            }
            h[k] = p;
            k += 1;
        }
        let lower = k + 1;
        for &p in pts[..n - 1].iter().rev() {
            while k >= lower && cross(h[k - 2], h[k - 1], p) <= 0.0 {
                k -= 1;
            }
            h[k] = p;
            k += 1;
        }
        // The last point repeats the first.
        Poly::of(&h[..k.saturating_sub(1).max(1)])
    }
}

/// An opening a line crosses: the plane `x[axis] = at`, inside the rectangle `range` of the other
/// two axes (`range[axis]` unused). Mirrored coordinates, in voxels.
#[derive(Debug, Clone, Copy)]
struct Opening {
    axis: usize,
    at: f64,
    range: [[f64; 2]; 3],
}

/// The lines still possible on a path, as one polygon per [`PLANES`] entry.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Lines([Poly; 6]);

impl Lines {
    /// Every line of non-negative slopes through the box `lo..hi` (mirrored, in voxels).
    fn through_box(lo: [f64; 3], hi: [f64; 3]) -> Lines {
        Lines(PLANES.map(|(u, v)| {
            // a + b·lo_u ≤ hi_v and a + b·hi_u ≥ lo_v, with 0 ≤ b ≤ 1.
            Poly::of(&[[lo[v], 0.0], [hi[v], 0.0], [hi[v] - lo[u], 1.0], [lo[v] - hi[u], 1.0]])
        }))
    }

    /// Whether a plane has no line left in either form: no 3D line is left.
    fn is_empty(&self) -> bool {
        (0..3).any(|k| self.0[2 * k].is_empty() && self.0[2 * k + 1].is_empty())
    }

    /// The lines that also pass through `o`.
    fn through(&self, o: &Opening) -> Lines {
        let mut out = *self;
        for (poly, &(u, v)) in out.0.iter_mut().zip(&PLANES) {
            if poly.is_empty() {
                continue;
            }
            let inf = f64::INFINITY;
            *poly = if o.axis == u {
                // Crosses u = at with v in range: lo_v ≤ a + b·at ≤ hi_v.
                poly.clip(o.at, o.range[v][0], o.range[v][1])
            } else if o.axis == v {
                // Meets v = at at u = (at − a)/b, inside range_u: a + b·lo_u ≤ at ≤ a + b·hi_u.
                poly.clip(o.range[u][0], -inf, o.at).clip(o.range[u][1], o.at, inf)
            } else {
                // The opening projects to a rectangle the 2D line must pass through.
                poly.clip(o.range[u][0], -inf, o.range[v][1]).clip(o.range[u][1], o.range[v][0], inf)
            };
        }
        out
    }

    /// The lines of either.
    fn hull(&self, other: &Lines) -> Lines {
        let mut out = *self;
        for (p, q) in out.0.iter_mut().zip(&other.0) {
            *p = p.hull(q);
        }
        out
    }
}

/// The in-plane extent of the squares of `mask` on a face of axis `m`, in voxels from the chunk's
/// corner (`None`: no square).
fn mask_rect(mask: &FaceMask, m: usize) -> Option<[[i32; 2]; 3]> {
    let (a, b) = face_axes(m);
    let rows = mask.iter().enumerate().filter(|(_, r)| **r != 0);
    let (mut b0, mut b1, mut bits) = (i32::MAX, i32::MIN, 0u16);
    for (i, &r) in rows {
        b0 = b0.min(i as i32);
        b1 = b1.max(i as i32 + 1);
        bits |= r;
    }
    if bits == 0 {
        return None;
    }
    let mut out = [[0; 2]; 3];
    out[a] = [bits.trailing_zeros() as i32, 16 - bits.leading_zeros() as i32];
    out[b] = [b0, b1];
    Some(out)
}

/// The grid the portal reach walks: the parts of [`super::SummaryGrid`] it needs.
pub(crate) struct Graph<'a> {
    pub dims: IVec3,
    /// Voxels per chunk edge.
    pub n: i32,
    pub chunks: &'a [Arc<ChunkSummary>],
    /// Node id of component 0 of each chunk, one extra entry at the end.
    pub node_base: &'a [u32],
    /// `u64` words per far set.
    pub words: usize,
    /// Steps a walk takes before it hands over to the plain reach (`0`: no portal limits).
    pub steps: u32,
    /// Threads the walks are split between.
    pub threads: usize,
}

impl Graph<'_> {
    fn grid_index(&self, p: IVec3) -> usize {
        ((p.y * self.dims.x + p.x) * self.dims.z + p.z) as usize
    }

    fn pos(&self, g: usize) -> IVec3 {
        let g = g as i32;
        IVec3::new((g / self.dims.z) % self.dims.x, g / (self.dims.z * self.dims.x), g % self.dims.z)
    }

    /// Adds to `far` (every node's far set, [`Self::words`] words each) what lines of octant
    /// `octant` reach from each node. `plain` is every node's plain reach along that octant
    /// ([`super::SummaryGrid`]): a walk still going after [`Self::steps`] steps adds the plain
    /// reach of the nodes it got to, which bounds the cost of a walk across open ground.
    pub fn add_octant(&self, octant: usize, plain: &[u64], far: &mut [u64]) {
        let nodes = self.node_base[self.chunks.len()] as usize;
        // The walks are independent: split the sources between the threads, each writing its
        // own far sets (the same bits for any split).
        let per = nodes.div_ceil(self.threads.max(1)).max(1);
        if per >= nodes {
            return self.add_sources(octant, plain, 0, far);
        }
        std::thread::scope(|s| {
            for (i, part) in far.chunks_mut(per * self.words).enumerate() {
                s.spawn(move || self.add_sources(octant, plain, i * per, part));
            }
        });
    }

    /// [`Self::add_octant`] for the sources from node `first` on, whose far sets `far` holds.
    fn add_sources(&self, octant: usize, plain: &[u64], first: usize, far: &mut [u64]) {
        let nodes = self.node_base[self.chunks.len()] as usize;
        // Scratch, reused across sources: per node, its place in the next layer (4 bytes a node,
        // however large the grid).
        let mut slot: Vec<u32> = vec![NONE; nodes];
        let mut g = self.node_base.partition_point(|&b| b as usize <= first) - 1;
        for (i, far) in far.chunks_mut(self.words).enumerate() {
            let s = first + i;
            while self.node_base[g + 1] as usize <= s {
                g += 1;
            }
            let c = s - self.node_base[g] as usize;
            self.walk(octant, g, c, plain, &mut slot, far);
        }
    }

    /// Sets in `far` the bits of every chunk with geometry a line of `octant` from node `(g, c)`
    /// reaches.
    fn walk(&self, octant: usize, g: usize, c: usize, plain: &[u64], slot: &mut [u32], far: &mut [u64]) {
        let n = f64::from(self.n);
        let w = self.words;
        let p0 = self.pos(g);
        let positive = [octant & 1 != 0, octant & 2 != 0, octant & 4 != 0];
        let sign = positive.map(|p| if p { 1.0 } else { -1.0 });
        // Mirrored extent of the grid voxel interval [x0, x1] along axis k.
        let mirror = |k: usize, x0: f64, x1: f64| if positive[k] { [x0, x1] } else { [-x1, -x0] };
        let (mut lo, mut hi) = ([0.0; 3], [0.0; 3]);
        for k in 0..3 {
            [lo[k], hi[k]] = mirror(k, f64::from(p0[k]) * n, f64::from(p0[k] + 1) * n);
        }
        let mut layer: Vec<(usize, usize, Lines)> = vec![(g, c, Lines::through_box(lo, hi))];
        // The next layer: (node, chunk, lines).
        let mut coming: Vec<(usize, usize, Lines)> = Vec::new();
        let mut step = 0;
        while !layer.is_empty() {
            // Past open ground (a wide layer) the lines narrow little: hand over there too.
            let air = layer.iter().filter(|(g, _, _)| !self.chunks[*g].solid).count();
            if step == self.steps || layer.len() > MAX_LAYER || air > MAX_AIR {
                for (g, c, _) in layer.drain(..) {
                    let n = self.node_base[g] as usize + c;
                    for (f, r) in far.iter_mut().zip(&plain[n * w..(n + 1) * w]) {
                        *f |= r;
                    }
                }
                break;
            }
            step += 1;
            for (g, c, lines) in layer.drain(..) {
                let p = self.pos(g);
                let comp = &self.chunks[g].comps[c];
                for axis in 0..3 {
                    let f = Face::from_axis(axis, positive[axis]);
                    if comp.faces & (1 << f.index()) == 0 {
                        continue;
                    }
                    let q = p + f.normal();
                    if q.cmplt(IVec3::ZERO).any() || q.cmpge(self.dims).any() {
                        continue;
                    }
                    let g2 = self.grid_index(q);
                    let own = &comp.masks[f.index()];
                    let at = f64::from(p[axis] + i32::from(positive[axis])) * n * sign[axis];
                    let opening = |rect: [[i32; 2]; 3]| {
                        let mut range = [[0.0; 2]; 3];
                        for k in 0..3 {
                            if k != axis {
                                let base = f64::from(p[k]) * n;
                                range[k] = mirror(k, base + f64::from(rect[k][0]), base + f64::from(rect[k][1]));
                            }
                        }
                        Opening { axis, at, range }
                    };
                    let Some(own_rect) = mask_rect(own, axis) else { continue };
                    let out = lines.through(&opening(own_rect));
                    if out.is_empty() {
                        continue;
                    }
                    let next = &self.chunks[g2];
                    // The neighbour is in sight: a line enters it, or meets the faces of its
                    // opaque voxels on the shared face.
                    if next.solid {
                        far[g2 / 64] |= 1 << (g2 % 64);
                    }
                    let back = f.opposite().index();
                    for (c2, comp2) in next.comps.iter().enumerate() {
                        if comp2.faces & (1 << back) == 0 {
                            continue;
                        }
                        let mut both: FaceMask = [0; 16];
                        for (o, (a, b)) in both.iter_mut().zip(own.iter().zip(&comp2.masks[back])) {
                            *o = a & b;
                        }
                        let Some(rect) = mask_rect(&both, axis) else { continue };
                        // The same rectangle cuts nothing more (open air on both sides).
                        let into = if rect == own_rect { out } else { out.through(&opening(rect)) };
                        if into.is_empty() {
                            continue;
                        }
                        let n2 = self.node_base[g2] as usize + c2;
                        match slot[n2] {
                            NONE => {
                                slot[n2] = coming.len() as u32;
                                coming.push((n2, g2, into));
                            }
                            i => {
                                let l = &mut coming[i as usize].2;
                                *l = l.hull(&into);
                            }
                        }
                    }
                }
            }
            // The next layer, in node order: the hulls then do not depend on the order paths
            // arrive in, even by rounding.
            coming.sort_unstable_by_key(|e| e.0);
            for (n2, g2, lines) in coming.drain(..) {
                slot[n2] = NONE;
                layer.push((g2, n2 - self.node_base[g2] as usize, lines));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::search::SummaryGrid;
    use super::super::summary::FaceComp;
    use super::*;
    use pmfedit_core::map::coords::ChunkCoord;
    use pmfedit_core::sample::noise::Rng;

    /// A solid chunk with one component owning the squares `(a, b)` of `sq` on each listed face.
    fn chunk(faces: &[(Face, &[(usize, usize)])]) -> Arc<ChunkSummary> {
        let mut comp = FaceComp { faces: 0, masks: [[0; 16]; 6] };
        for (f, sq) in faces {
            comp.faces |= 1 << f.index();
            for &(a, b) in *sq {
                comp.masks[f.index()][b] |= 1 << a;
            }
        }
        Arc::new(ChunkSummary { nl: 4, comps: vec![comp], solid: true })
    }

    fn all() -> Vec<(usize, usize)> {
        (0..16).flat_map(|b| (0..16).map(move |a| (a, b))).collect()
    }

    #[test]
    fn doors_no_straight_line_passes_through_cut_the_reach() {
        use Face::*;
        let all = all();
        // A row along x. Chunk 0 opens at its low corner (y, z < 1), chunk 1 at its high corner,
        // chunk 2 at the low corner again: a line through the first two climbs in y and z, and
        // cannot come down to chunk 2's door.
        let low: &[(usize, usize)] = &[(0, 0)];
        let high: &[(usize, usize)] = &[(15, 15)];
        let chunks = vec![
            chunk(&[(PosX, low)]),
            chunk(&[(NegX, &all), (PosX, high)]),
            chunk(&[(NegX, &all), (PosX, low)]),
            chunk(&[(NegX, &all)]),
        ];
        let at = |x| ChunkCoord::new(x, 0, 0);
        let plain = SummaryGrid::new(IVec3::ZERO, IVec3::new(4, 1, 1), 4, chunks.clone(), 0);
        assert_eq!(plain.far_chunks(0, 0), vec![at(1), at(2), at(3)]);
        let portals = SummaryGrid::new(IVec3::ZERO, IVec3::new(4, 1, 1), 4, chunks.clone(), 64);
        // Chunk 2's wall on the shared face is in sight; nothing beyond its door.
        assert_eq!(portals.far_chunks(0, 0), vec![at(1), at(2)]);
        // A walk cut short hands over to the plain reach of where it got to.
        for (steps, want) in [(1, vec![at(1), at(2), at(3)]), (2, vec![at(1), at(2), at(3)]), (3, vec![at(1), at(2)])] {
            let grid = SummaryGrid::new(IVec3::ZERO, IVec3::new(4, 1, 1), 4, chunks.clone(), steps);
            assert_eq!(grid.far_chunks(0, 0), want, "{steps} steps");
        }
        // From chunk 1 (a line may start anywhere in it) both ways are open.
        assert_eq!(portals.far_chunks(1, 0), vec![at(0), at(2), at(3)]);
        // Settings: larger grids take the plain reach.
        let settings = super::super::VisSettings { portal_max_chunks: 4, ..Default::default() };
        assert_eq!((settings.portal_steps_for(4), settings.portal_steps_for(5)), (super::super::PORTAL_STEPS, 0));
        // Doors in a line: seen through.
        let mut straight = chunks;
        straight[1] = chunk(&[(NegX, &all), (PosX, low)]);
        let portals = SummaryGrid::new(IVec3::ZERO, IVec3::new(4, 1, 1), 4, straight, 64);
        assert_eq!(portals.far_chunks(0, 0), vec![at(1), at(2), at(3)]);
    }

    #[test]
    fn portal_far_sets_are_subsets_of_the_plain_ones() {
        // Random summaries: 1 or 2 components per chunk, random faces, random squares.
        let mut rng = Rng::new(7);
        let (mut p_total, mut q_total) = (0, 0);
        for round in 0..20 {
            let dims = IVec3::new(3 + round % 3, 1 + round % 2, 3);
            let count = (dims.x * dims.y * dims.z) as usize;
            let chunks: Vec<Arc<ChunkSummary>> = (0..count)
                .map(|_| {
                    let comps = (0..rng.range(1, 3))
                        .map(|_| {
                            let mut comp = FaceComp { faces: 0, masks: [[0; 16]; 6] };
                            for f in 0..6 {
                                if rng.range(0, 3) > 0 {
                                    comp.faces |= 1 << f;
                                    let (a0, b0) = (rng.range(0, 16), rng.range(0, 16) as usize);
                                    let (w, h) = (rng.range(1, 17 - a0), rng.range(1, 17 - b0 as i32) as usize);
                                    let bits = ((1u32 << w) - 1) << a0;
                                    comp.masks[f][b0..b0 + h].fill(bits as u16);
                                }
                            }
                            comp
                        })
                        .collect();
                    Arc::new(ChunkSummary { nl: 4, comps, solid: rng.range(0, 2) == 0 })
                })
                .collect();
            let plain = SummaryGrid::new(IVec3::ZERO, dims, 4, chunks.clone(), 0);
            let portals = SummaryGrid::new(IVec3::ZERO, dims, 4, chunks.clone(), 64);
            for (g, ch) in chunks.iter().enumerate() {
                for c in 0..ch.comps.len() {
                    let (p, q) = (plain.far_chunks(g, c), portals.far_chunks(g, c));
                    assert!(q.iter().all(|x| p.contains(x)), "round {round}, node ({g}, {c}): {q:?} ⊄ {p:?}");
                    p_total += p.len();
                    q_total += q.len();
                }
            }
        }
        // Small random doors: straight lines miss many of the plain reach's paths.
        assert!(q_total < p_total, "{q_total} of {p_total}");
    }
}
