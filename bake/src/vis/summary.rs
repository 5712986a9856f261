//! One chunk's occluder voxels, its air components, and the connectivity summary the level-wide
//! search reads (see the [module documentation](super)).
//!
//! The chunk is cut into `n³` voxels (`n = 2^nl ≤ 16`). A voxel is **opaque** when occluders
//! ([`super::occludes`]) cover all of it; everything else is **open**. Open voxels are grouped
//! into **components** by face adjacency (6-connectivity). A component's **face masks** say which
//! squares of each chunk face it owns (the squares of its voxels on that face). The
//! [`ChunkSummary`] keeps only the components that touch a face, with their masks: that is all a
//! sight line crossing the chunk can depend on.

use glam::IVec3;
use pmfedit_core::map::coords::Face;
use pmfedit_core::map::octree::{Cube, CubeKind, Octree};

/// Most voxels along a chunk edge, as a power of two (face masks are 16 × 16 bits).
pub const MAX_VOXELS_LOG2: u8 = 4;

/// The squares of one chunk face: `rows[b]` bit `a`, where for a face of axis `m` the in-plane
/// axes are `a = (m + 1) % 3` and `b = (m + 2) % 3` (both sides of a face use the same layout).
pub type FaceMask = [u16; 16];

/// The in-plane axes `(a, b)` of a face of axis `m`.
pub(crate) const fn face_axes(m: usize) -> (usize, usize) {
    ((m + 1) % 3, (m + 2) % 3)
}

/// Which materials block sight: indexed by material id, `true` for an existing material that is
/// neither transparent nor liquid. The library's only input to visibility.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OpaqueMaterials(pub(crate) Vec<bool>);

impl OpaqueMaterials {
    /// The opaque materials of `library`.
    pub fn of(library: &pmfedit_core::map::Library) -> Self {
        let mut v = Vec::new();
        for (id, m) in library.materials().iter() {
            let i = usize::from(id.0);
            if v.len() <= i {
                v.resize(i + 1, false);
            }
            v[i] = !m.transparent && !m.liquid;
        }
        OpaqueMaterials(v)
    }

    fn opaque(&self, m: pmfedit_core::map::ids::MaterialId) -> bool {
        self.0.get(usize::from(m.0)).copied().unwrap_or(false)
    }

    /// Whether `cube` blocks sight (the same rule as [`super::occludes`]).
    pub fn occludes(&self, cube: &Cube) -> bool {
        match &cube.kind {
            CubeKind::Empty => false,
            CubeKind::Geometry(g) => self.opaque(g.material),
            CubeKind::Extended(e) => !e.has_pushed_corners() && e.face_materials.iter().all(|&m| self.opaque(m)),
        }
    }
}

/// Label of an opaque voxel in [`ChunkVoxels::labels`].
pub(crate) const OPAQUE: u16 = u16::MAX;

/// A chunk's voxels and their components.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ChunkVoxels {
    /// `n = 2^nl` voxels per edge.
    pub nl: u8,
    /// Voxel edge `2^vl` lattice units.
    pub vl: u8,
    /// Per voxel (index [`Self::index`]): its component, or [`OPAQUE`].
    pub labels: Vec<u16>,
    /// Number of components.
    pub components: usize,
    /// Whether the chunk has any geometry (solid leaf), occluding or not.
    pub solid: bool,
    /// Its solid leaves (the geometry cubes of its PMF chunk), occluding or not: what the chunk
    /// weighs when a cell's share of the level's geometry is counted ([`super::SummaryGrid`]).
    pub solid_leaves: u32,
}

impl ChunkVoxels {
    /// Voxelizes `octree` with at most `2^voxels_log2` voxels per edge.
    pub fn build(octree: &Octree, opaque: &OpaqueMaterials, voxels_log2: u8) -> ChunkVoxels {
        let cl = octree.size_log2();
        let nl = voxels_log2.min(MAX_VOXELS_LOG2).min(cl);
        let vl = cl - nl;
        let n = 1usize << nl;
        let full: u16 = if n == 16 { u16::MAX } else { (1u16 << n) - 1 };
        // Opaque bits: rows[(y << nl) | z] bit x.
        let mut rows = vec![0u16; n * n];
        let mut partial: Vec<u64> = Vec::new();
        let mut solid = false;
        let mut solid_leaves = 0u32;
        octree.for_each_solid_leaf(|addr, cube| {
            solid = true;
            solid_leaves += 1;
            if !opaque.occludes(cube) {
                return;
            }
            let lo = addr.min >> i32::from(vl);
            if addr.size_log2 >= vl {
                let e = 1i32 << (addr.size_log2 - vl);
                let bits = (((1u32 << e) - 1) << lo.x) as u16;
                for y in lo.y..lo.y + e {
                    for z in lo.z..lo.z + e {
                        rows[((y as usize) << nl) | z as usize] |= bits;
                    }
                }
            } else {
                if partial.is_empty() {
                    partial = vec![0; n * n * n];
                }
                partial[Self::index_of(nl, lo)] += 1u64 << (3 * u32::from(addr.size_log2));
            }
        });
        if !partial.is_empty() {
            let whole = 1u64 << (3 * u32::from(vl));
            for (i, &v) in partial.iter().enumerate() {
                if v == whole {
                    rows[i >> nl] |= 1 << (i & (n - 1));
                }
            }
        }

        // Runs of open voxels per row, joined by a union-find over runs (6-connectivity: a run
        // joins the overlapping runs of the rows at y − 1 and at z − 1).
        let mut runs: Vec<(u16, u8, u8)> = Vec::new();
        let mut row_start = vec![0u32; n * n + 1];
        for (r, &row) in rows.iter().enumerate() {
            row_start[r] = runs.len() as u32;
            let mut open = !row & full;
            while open != 0 {
                let x0 = open.trailing_zeros();
                let len = (open >> x0).trailing_ones();
                runs.push((r as u16, x0 as u8, (x0 + len - 1) as u8));
                open &= !((((1u32 << len) - 1) << x0) as u16);
            }
        }
        row_start[n * n] = runs.len() as u32;
        let mut parent: Vec<u32> = (0..runs.len() as u32).collect();
        fn find(parent: &mut [u32], mut i: u32) -> u32 {
            while parent[i as usize] != i {
                let g = parent[parent[i as usize] as usize];
                parent[i as usize] = g;
                i = g;
            }
            i
        }
        for i in 0..runs.len() {
            let (r, x0, x1) = runs[i];
            let (y, z) = (usize::from(r) >> nl, usize::from(r) & (n - 1));
            let mut join = |other_row: usize| {
                for j in row_start[other_row]..row_start[other_row + 1] {
                    let (_, a0, a1) = runs[j as usize];
                    if a0 <= x1 && x0 <= a1 {
                        let (p, q) = (find(&mut parent, i as u32), find(&mut parent, j));
                        if p != q {
                            // The smaller run index stays the root: labels follow first appearance.
                            let (lo, hi) = if p < q { (p, q) } else { (q, p) };
                            parent[hi as usize] = lo;
                        }
                    }
                }
            };
            if y > 0 {
                join(((y - 1) << nl) | z);
            }
            if z > 0 {
                join((y << nl) | (z - 1));
            }
        }
        let mut labels = vec![OPAQUE; n * n * n];
        let mut label_of_root = vec![u16::MAX; runs.len()];
        let mut components = 0usize;
        for (i, &(r, x0, x1)) in runs.iter().enumerate() {
            let root = find(&mut parent, i as u32) as usize;
            if label_of_root[root] == u16::MAX {
                label_of_root[root] = components as u16;
                components += 1;
            }
            let l = label_of_root[root];
            let base = usize::from(r) << nl;
            labels[base + usize::from(x0)..=base + usize::from(x1)].fill(l);
        }
        ChunkVoxels { nl, vl, labels, components, solid, solid_leaves }
    }

    /// The index of voxel `v` (x, y, z) in a chunk of `2^nl` voxels per edge.
    pub fn index_of(nl: u8, v: IVec3) -> usize {
        ((v.y as usize) << (2 * nl)) | ((v.z as usize) << nl) | v.x as usize
    }

    /// The label of voxel `v`.
    pub fn label(&self, v: IVec3) -> u16 {
        self.labels[Self::index_of(self.nl, v)]
    }

    /// The summary: the components that touch a face, with their face masks, in label order;
    /// and for each label its index in the summary (`None`: it touches no face).
    pub fn summary(&self) -> (ChunkSummary, Vec<Option<u16>>) {
        let n = 1usize << self.nl;
        let mut masks: Vec<[FaceMask; 6]> = vec![[[0; 16]; 6]; self.components];
        let mut touches = vec![0u8; self.components];
        // Index strides of x, y and z ([`Self::index_of`]).
        let stride = [1, n * n, n];
        for f in Face::ALL {
            let m = f.axis();
            let (a, b) = face_axes(m);
            let base = if f.is_positive() { (n - 1) * stride[m] } else { 0 };
            let fi = f.index();
            for (vb, row) in (0..n).map(|vb| (vb, base + vb * stride[b])) {
                for va in 0..n {
                    let l = self.labels[row + va * stride[a]];
                    if l != OPAQUE {
                        masks[usize::from(l)][fi][vb] |= 1 << va;
                        touches[usize::from(l)] |= 1 << fi;
                    }
                }
            }
        }
        let mut index = vec![None; self.components];
        let mut comps = Vec::new();
        for l in 0..self.components {
            if touches[l] != 0 {
                index[l] = Some(comps.len() as u16);
                comps.push(FaceComp { faces: touches[l], masks: masks[l] });
            }
        }
        (ChunkSummary { nl: self.nl, comps, solid: self.solid }, index)
    }
}

/// One component of a chunk that touches at least one face.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FaceComp {
    /// Bit `i`: it touches face `i` (PMF face order).
    pub faces: u8,
    /// Per face (PMF face order), the squares it owns.
    pub masks: [FaceMask; 6],
}

/// What the level-wide search knows of a chunk: a function of the chunk's own cubes (and the
/// library's opaque materials) only. Equal summaries mean equal search results through the
/// chunk, so an edit that keeps a chunk's summary changes no other chunk's far visibility.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkSummary {
    pub(crate) nl: u8,
    /// The components touching a face, in label order.
    pub(crate) comps: Vec<FaceComp>,
    /// Whether the chunk has geometry (a chunk without any is never listed).
    pub(crate) solid: bool,
}

impl ChunkSummary {
    /// The summary of an all-air chunk with `2^nl` voxels per edge: one component owning every
    /// square of every face.
    pub fn air(nl: u8) -> ChunkSummary {
        let n = 1usize << nl;
        let row: u16 = if n == 16 { u16::MAX } else { (1u16 << n) - 1 };
        let mut mask = [0u16; 16];
        mask[..n].fill(row);
        ChunkSummary { nl, comps: vec![FaceComp { faces: 0x3f, masks: [mask; 6] }], solid: false }
    }

    /// The summary of `octree`.
    pub fn of(octree: &Octree, opaque: &OpaqueMaterials, voxels_log2: u8) -> ChunkSummary {
        Self::weighed(octree, opaque, voxels_log2).0
    }

    /// The summary of `octree` and its solid leaves (its geometry cubes).
    pub(crate) fn weighed(octree: &Octree, opaque: &OpaqueMaterials, voxels_log2: u8) -> (ChunkSummary, u32) {
        if octree.is_empty() {
            return (ChunkSummary::air(voxels_log2.min(MAX_VOXELS_LOG2).min(octree.size_log2())), 0);
        }
        let voxels = ChunkVoxels::build(octree, opaque, voxels_log2);
        (voxels.summary().0, voxels.solid_leaves)
    }

    /// Whether the chunk has geometry.
    pub fn has_geometry(&self) -> bool {
        self.solid
    }

    /// Components that touch a face.
    pub fn face_components(&self) -> usize {
        self.comps.len()
    }
}

/// The time of making the summary of every stored chunk of `level`, in microseconds per chunk:
/// the best of `passes` passes (one pass over a map-scale level takes a fraction of a second, so a
/// shared machine's noise would otherwise be the figure). For `pmfc bench` and the vis bench.
pub fn summary_us_per_chunk(
    level: &pmfedit_core::map::Level,
    opaque: &OpaqueMaterials,
    voxels_log2: u8,
    passes: usize,
) -> f64 {
    let stored = level.chunks().count().max(1) as f64;
    (0..passes.max(1))
        .map(|_| {
            let t = std::time::Instant::now();
            for (_, ch) in level.chunks() {
                std::hint::black_box(ChunkSummary::of(ch.octree(), opaque, voxels_log2));
            }
            t.elapsed().as_secs_f64() * 1e6 / stored
        })
        .fold(f64::INFINITY, f64::min)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pmfedit_core::map::coords::CubeAddr;
    use pmfedit_core::map::ids::{MaterialId, PhysicsId, SoundId};

    fn stone() -> Cube {
        Cube::solid(MaterialId(0), PhysicsId(0), SoundId(0))
    }

    fn opaque() -> OpaqueMaterials {
        OpaqueMaterials(vec![true])
    }

    #[test]
    fn a_wall_splits_a_chunk_into_two_components() {
        // 16-unit chunk (lattice 128), a 1-unit wall at x = 7 units across the whole chunk.
        let mut o = Octree::new(7);
        for y in 0..16 {
            for z in 0..16 {
                o.set_cube(CubeAddr::new(IVec3::new(56, y * 8, z * 8), 3).unwrap(), stone()).unwrap();
            }
        }
        let v = ChunkVoxels::build(&o, &opaque(), 4);
        assert_eq!((v.nl, v.vl, v.components), (4, 3, 2));
        assert_eq!(v.label(IVec3::new(7, 3, 3)), OPAQUE);
        assert_ne!(v.label(IVec3::new(0, 3, 3)), v.label(IVec3::new(15, 3, 3)));
        let (s, index) = v.summary();
        assert_eq!(s.comps.len(), 2);
        assert!(index.iter().all(Option::is_some));
        // The −X side owns the whole −X face and none of the +X face.
        let west = &s.comps[usize::from(index[usize::from(v.label(IVec3::new(0, 0, 0)))].unwrap())];
        assert_eq!(west.masks[Face::NegX.index()], [u16::MAX; 16]);
        assert_eq!(west.faces & (1 << Face::PosX.index()), 0);
        // Its +Y face mask: rows by x (b), bits by z (a): columns x 0..7.
        let top = west.masks[Face::PosY.index()];
        assert!(top[..7].iter().all(|&r| r == u16::MAX) && top[7..].iter().all(|&r| r == 0));
        // A hole in the wall joins them.
        o.clear_cube(CubeAddr::new(IVec3::new(56, 64, 64), 3).unwrap()).unwrap();
        assert_eq!(ChunkVoxels::build(&o, &opaque(), 4).components, 1);
        // Only diagonal contact does not join (6-connectivity): two holes touching at an edge.
        let mut o = Octree::new(7);
        o.fill_box(pmfedit_core::map::coords::LatticeBox::new(IVec3::new(56, 0, 0), IVec3::new(72, 128, 128)), stone());
        o.clear_cube(CubeAddr::new(IVec3::new(56, 64, 64), 3).unwrap()).unwrap();
        o.clear_cube(CubeAddr::new(IVec3::new(64, 72, 64), 3).unwrap()).unwrap();
        assert_eq!(ChunkVoxels::build(&o, &opaque(), 4).summary().0.comps.len(), 2);
    }

    #[test]
    fn small_occluders_fill_a_voxel_only_together() {
        let mut o = Octree::new(7);
        // Seven of the eight half-unit cubes of voxel (0, 0, 0): still open.
        for i in 1..8 {
            let off = pmfedit_core::map::coords::octant_offset(i) * 4;
            o.set_cube(CubeAddr::new(off, 2).unwrap(), stone()).unwrap();
        }
        assert_ne!(ChunkVoxels::build(&o, &opaque(), 4).label(IVec3::ZERO), OPAQUE);
        o.set_cube(CubeAddr::new(pmfedit_core::map::coords::octant_offset(0) * 4, 2).unwrap(), stone()).unwrap();
        assert_eq!(ChunkVoxels::build(&o, &opaque(), 4).label(IVec3::ZERO), OPAQUE);
        // Transparent material: open.
        assert_ne!(ChunkVoxels::build(&o, &OpaqueMaterials(vec![false]), 4).label(IVec3::ZERO), OPAQUE);
    }

    #[test]
    fn air_summary_matches_an_empty_octree_and_small_chunks_use_fewer_voxels() {
        let o = Octree::new(7);
        assert_eq!(ChunkSummary::of(&o, &opaque(), 4), ChunkSummary::air(4));
        let mut some = Octree::new(7);
        some.set_cube(CubeAddr::new(IVec3::new(48, 48, 48), 3).unwrap(), stone()).unwrap();
        let s = ChunkSummary::of(&some, &opaque(), 4);
        assert!(s.solid);
        assert_eq!(ChunkSummary { solid: false, ..s }, ChunkSummary::air(4), "an interior cube changes no face");
        // A 2-lattice chunk: 4 voxels per edge.
        let v = ChunkVoxels::build(&Octree::new(2), &opaque(), 4);
        assert_eq!((v.nl, v.vl, v.labels.len()), (2, 0, 64));
    }
}
