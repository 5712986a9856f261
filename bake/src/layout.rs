//! Chunk layout: a chunk octree turned into the PMF cube array (docs/spec/PMF-NOTES.md C1–C4b).
//!
//! [`ChunkLayout::build`] walks the editable [`Octree`] depth-first, pre-order, children in PMF
//! bit order (C1/C2), and gives every cube of the future PMF chunk its array index. Parents of
//! the octree stay parents; leaves stay leaves, with one change: **air is subdivided** so that
//! later stages have somewhere to put per-air data (C4b):
//!
//! - Every empty leaf is an explicit `EMPTY` cube (a PMF parent's missing child has no record to
//!   carry lighting, visibility or pathfinding data), so every parent of the layout has all eight
//!   children.
//! - An empty leaf larger than the **air cell** is split, recursively, into eight explicit empty
//!   children down to the air cell edge. The air cell edge is
//!   `max(2^air_cell_log2 map units, chunk edge / 2^max_air_depth)`: by default **2 map units**,
//!   but never more than `2^5 = 32` cells along a chunk edge, so a huge chunk (up to `2^15` map
//!   units, docs/spec/PMF-NOTES.md L2) cannot explode into billions of cubes. Air leaves already smaller than
//!   the air cell are kept as they are.
//! - An all-air chunk is a single empty root cube, as docs/spec/PMF-NOTES.md L3 says, unless
//!   [`BakeSettings::subdivide_empty_chunks`] is set. This also makes a chunk that is missing from
//!   the level and a stored chunk that became empty bake identically.
//!
//! Subdivided air cubes copy the source leaf's [`Cube`] (its path attributes), so nothing the
//! editor stored is lost.
//!
//! The layout is a pure, deterministic function of the octree and the settings: any stage can
//! recompute the layout of any chunk, neighbours included, from a snapshot and get the same
//! indices.

use glam::IVec3;
use pmfedit_core::map::coords::LATTICE_PER_UNIT_LOG2;
use pmfedit_core::map::octree::{Cube, CubeAddr, CubeKind, MaterialId, Octree};

/// Settings of the geometry stages of the bake (layout and meshing). `Eq + Hash` so that a
/// scheduler can key cached results on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BakeSettings {
    /// Air cell edge is `2^air_cell_log2` map units (default 1: 2 map units). Air is subdivided
    /// down to this size, it is the resolution of lighting, visibility and pathfinding data for
    /// air. See the [module documentation](self).
    pub air_cell_log2: u8,
    /// At most `2^max_air_depth` air cells along a chunk edge (default 5: 32): in big chunks the
    /// air cell grows to `chunk edge / 2^max_air_depth`.
    pub max_air_depth: u8,
    /// Subdivide all-air chunks too (default `false`: an all-air chunk is one empty root cube,
    /// docs/spec/PMF-NOTES.md L3).
    pub subdivide_empty_chunks: bool,
    /// One texture repeat spans `2^texture_repeat_log2` map units (default 0: one repeat per map
    /// unit). Powers of two keep texture coordinates exact. The library's materials have no
    /// texture scale of their own yet; a per-material scale would multiply this.
    pub texture_repeat_log2: i8,
    /// Most octree nodes (cubes) a chunk may hold to be baked (default [`MAX_CHUNK_CUBES`]).
    /// A bake's memory grows with them (about 4 KB per node when every face shows), so a chunk
    /// over the limit is refused with an error naming it instead of exhausting memory.
    pub max_cubes: usize,
}

/// Default [`BakeSettings::max_cubes`]: 2^17 = 131 072 nodes, at most about 500 MB for the bake
/// of one chunk. A chunk of ordinary cubes holds a few thousand; a fully subdivided 16-unit
/// chunk of the smallest cubes (128³ leaves) would hold 2.4 M.
pub const MAX_CHUNK_CUBES: usize = 1 << 17;

impl Default for BakeSettings {
    fn default() -> Self {
        Self {
            air_cell_log2: 1,
            max_air_depth: 5,
            subdivide_empty_chunks: false,
            texture_repeat_log2: 0,
            max_cubes: MAX_CHUNK_CUBES,
        }
    }
}

impl BakeSettings {
    /// The air cell edge, as a power of two in lattice units, for a chunk octree of edge
    /// `2^chunk_lattice_log2` lattice units.
    pub fn air_cell_lattice_log2(&self, chunk_lattice_log2: u8) -> u8 {
        let wanted = self.air_cell_log2.saturating_add(LATTICE_PER_UNIT_LOG2);
        wanted.max(chunk_lattice_log2.saturating_sub(self.max_air_depth))
    }
}

/// One cube of the layout.
#[derive(Debug, Clone, PartialEq)]
pub struct LayoutCube {
    /// Its place, chunk-local lattice space.
    pub addr: CubeAddr,
    /// `None` for a parent; the leaf's cube otherwise (an air cube made by subdivision carries a
    /// copy of the octree leaf it was cut from).
    pub cube: Option<Cube>,
    /// Its parent's index (`None` for the root, index 0).
    pub parent: Option<u32>,
    /// A parent's eight children in PMF bit order (all present: air is explicit).
    pub children: Option<[u32; 8]>,
}

impl LayoutCube {
    /// Whether this is a parent cube.
    pub fn is_parent(&self) -> bool {
        self.cube.is_none()
    }

    /// Whether this is an empty leaf (an air cell).
    pub fn is_air(&self) -> bool {
        matches!(self.cube, Some(Cube { kind: CubeKind::Empty, .. }))
    }

    /// Whether this is a geometry or extended geometry leaf.
    pub fn is_solid(&self) -> bool {
        matches!(&self.cube, Some(c) if c.is_solid())
    }
}

/// A solid leaf in brief: what a pass over every solid cube (meshing's phase 1) reads first, 20
/// bytes in a row of their own instead of a 116-byte [`LayoutCube`] each, strided through the
/// array (on a dense 32³ chunk, loading those was a fifth of the pass).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SolidBrief {
    /// Its place, chunk-local lattice space.
    pub addr: CubeAddr,
    /// Plain geometry's material; `None` for extended geometry.
    pub plain: Option<MaterialId>,
}

/// The PMF cube array of one chunk. See the [module documentation](self).
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkLayout {
    cubes: Vec<LayoutCube>,
    air: Vec<u32>,
    solid: Vec<u32>,
    /// One per entry of `solid`, in the same order.
    briefs: Vec<SolidBrief>,
    air_cell_log2: u8,
}

impl ChunkLayout {
    /// The layout of `octree` (one chunk) under `settings`. Pure and deterministic.
    pub fn build(octree: &Octree, settings: &BakeSettings) -> ChunkLayout {
        let air_cell_log2 = settings.air_cell_lattice_log2(octree.size_log2());
        let split_air = settings.subdivide_empty_chunks || !octree.is_empty();
        let mut b = Builder {
            out: ChunkLayout {
                cubes: Vec::with_capacity(octree.node_count()),
                air: Vec::new(),
                solid: Vec::new(),
                briefs: Vec::new(),
                air_cell_log2,
            },
            stack: Vec::new(),
        };
        for (addr, cube) in octree.pre_order() {
            match cube {
                None => {
                    let i = b.push(addr, None);
                    b.stack.push((i, 0));
                }
                Some(c) if !c.is_solid() && split_air && addr.size_log2 > air_cell_log2 => b.push_air(addr, c),
                Some(c) => {
                    b.push(addr, Some(c));
                }
            }
        }
        debug_assert!(b.stack.is_empty());
        b.out
    }

    /// Number of cubes.
    pub fn len(&self) -> usize {
        self.cubes.len()
    }

    /// Never true (a layout has at least its root); for clippy's `len_without_is_empty`.
    pub fn is_empty(&self) -> bool {
        self.cubes.is_empty()
    }

    /// The cubes in PMF array order (pre-order, C1).
    pub fn cubes(&self) -> &[LayoutCube] {
        &self.cubes
    }

    /// Cube `i`.
    pub fn get(&self, i: u32) -> Option<&LayoutCube> {
        self.cubes.get(i as usize)
    }

    /// The air cell edge used, as a power of two in lattice units.
    pub fn air_cell_log2(&self) -> u8 {
        self.air_cell_log2
    }

    /// Indices of the empty leaves (air cells), ascending.
    pub fn air_cells(&self) -> &[u32] {
        &self.air
    }

    /// The air cells as level lattice addresses, for a chunk whose minimum corner is `chunk_min`
    /// (what the visibility and pathfinding bakes take), in the order of [`Self::air_cells`].
    pub fn air_cell_addrs(&self, chunk_min: IVec3) -> Vec<CubeAddr> {
        self.air.iter().map(|&k| self.cubes[k as usize].addr.translated(chunk_min)).collect()
    }

    /// Indices of the geometry and extended geometry leaves, ascending.
    pub fn solid_cubes(&self) -> &[u32] {
        &self.solid
    }

    /// The leaves of [`Self::solid_cubes`] in brief, in the same order.
    pub fn solid_briefs(&self) -> &[SolidBrief] {
        &self.briefs
    }

    /// The index of the cube at exactly `addr` (chunk-local), if the layout has one.
    pub fn index_of(&self, addr: CubeAddr) -> Option<u32> {
        let mut i = 0u32;
        loop {
            let c = &self.cubes[i as usize];
            if c.addr == addr {
                return Some(i);
            }
            if !c.addr.contains_addr(&addr) {
                return None;
            }
            let kids = c.children?;
            i = kids[c.addr.child_index_of(addr.min)];
        }
    }

    /// The index of the leaf holding chunk-local lattice position `pos`, `None` outside the chunk.
    pub fn cube_containing(&self, pos: IVec3) -> Option<u32> {
        let mut i = 0u32;
        if !self.cubes[0].addr.contains(pos) {
            return None;
        }
        while let Some(kids) = self.cubes[i as usize].children {
            i = kids[self.cubes[i as usize].addr.child_index_of(pos)];
        }
        Some(i)
    }
}

/// Builds the array from the pre-order stream.
struct Builder {
    out: ChunkLayout,
    /// Open parents: index and number of children attached so far.
    stack: Vec<(u32, u8)>,
}

impl Builder {
    /// Appends a cube, attaching it to the innermost open parent.
    fn push(&mut self, addr: CubeAddr, cube: Option<Cube>) -> u32 {
        let i = self.out.cubes.len() as u32;
        let parent = self.stack.last_mut().map(|(p, k)| {
            let p = *p;
            let kids = self.out.cubes[p as usize].children.get_or_insert([0; 8]);
            kids[usize::from(*k)] = i;
            *k += 1;
            p
        });
        if matches!(self.stack.last(), Some(&(_, 8))) {
            self.stack.pop();
        }
        match &cube {
            Some(c) if c.is_solid() => {
                self.out.solid.push(i);
                let plain = match c.kind {
                    CubeKind::Geometry(g) => Some(g.material),
                    _ => None,
                };
                self.out.briefs.push(SolidBrief { addr, plain });
            }
            Some(_) => self.out.air.push(i),
            None => {}
        }
        self.out.cubes.push(LayoutCube { addr, cube, parent, children: None });
        i
    }

    /// Appends an air leaf, subdivided down to the air cell size.
    fn push_air(&mut self, addr: CubeAddr, cube: Cube) {
        if addr.size_log2 <= self.out.air_cell_log2 {
            self.push(addr, Some(cube));
            return;
        }
        let i = self.push(addr, None);
        self.stack.push((i, 0));
        for k in 0..8 {
            self.push_air(addr.child(k), cube);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pmfedit_core::map::octree::{MaterialId, PhysicsId, SoundId};

    fn stone() -> Cube {
        Cube::solid(MaterialId(0), PhysicsId(0), SoundId(0))
    }

    /// Checks the structure: pre-order, children in bit order, parents consistent.
    fn check(l: &ChunkLayout) {
        let mut next = 1u32;
        fn walk(l: &ChunkLayout, i: u32, next: &mut u32) {
            let c = &l.cubes[i as usize];
            if let Some(kids) = c.children {
                assert!(c.is_parent());
                for (k, &ch) in kids.iter().enumerate() {
                    assert_eq!(ch, *next, "pre-order index");
                    *next += 1;
                    assert_eq!(l.cubes[ch as usize].parent, Some(i));
                    assert_eq!(l.cubes[ch as usize].addr, c.addr.child(k));
                    walk(l, ch, next);
                }
            } else {
                assert!(!c.is_parent());
            }
        }
        walk(l, 0, &mut next);
        assert_eq!(next as usize, l.len());
        // The briefs say what the solid cubes are, one each, in order.
        assert_eq!(l.solid_briefs().len(), l.solid_cubes().len());
        for (b, &i) in l.solid_briefs().iter().zip(l.solid_cubes()) {
            let c = &l.cubes[i as usize];
            assert_eq!(b.addr, c.addr);
            match c.cube.map(|c| c.kind) {
                Some(CubeKind::Geometry(g)) => assert_eq!(b.plain, Some(g.material)),
                Some(CubeKind::Extended(_)) => assert_eq!(b.plain, None),
                other => panic!("solid cube {i} is {other:?}"),
            }
        }
        for (i, c) in l.cubes.iter().enumerate() {
            assert_eq!(l.index_of(c.addr), Some(i as u32));
        }
    }

    #[test]
    fn empty_chunk_is_one_root() {
        let o = Octree::new(7);
        let l = ChunkLayout::build(&o, &BakeSettings::default());
        assert_eq!(l.len(), 1);
        assert_eq!(l.air_cells(), &[0]);
        let l = ChunkLayout::build(&o, &BakeSettings { subdivide_empty_chunks: true, ..BakeSettings::default() });
        // 16-unit chunk, 2-unit air cells: 8 cells per edge, parents 1 + 8 + 64.
        assert_eq!(l.air_cells().len(), 512);
        assert_eq!(l.len(), 512 + 73);
        check(&l);
    }

    #[test]
    fn air_is_subdivided_to_the_air_cell_in_pre_order() {
        // 16-unit chunk (lattice 128), one 1-unit cube at the origin.
        let mut o = Octree::new(7);
        o.set_cube(CubeAddr::new(IVec3::ZERO, 3).unwrap(), stone()).unwrap();
        let s = BakeSettings::default();
        let l = ChunkLayout::build(&o, &s);
        check(&l);
        assert_eq!(l.air_cell_log2(), 4);
        for &i in l.air_cells() {
            let c = &l.cubes()[i as usize];
            assert!(c.addr.size_log2 <= 4, "air cell {:?} is bigger than the air cell size", c.addr);
        }
        // Air smaller than the air cell (the 1-unit siblings of the stone cube) is kept.
        assert!(l.air_cells().iter().any(|&i| l.cubes()[i as usize].addr.size_log2 == 3));
        assert_eq!(l.solid_cubes().len(), 1);
        // Every parent has eight children, every position lies in exactly one leaf.
        let leaf = l.cube_containing(IVec3::new(100, 5, 77)).unwrap();
        assert!(l.cubes()[leaf as usize].addr.contains(IVec3::new(100, 5, 77)));
        assert!(l.cubes()[leaf as usize].is_air());
        assert_eq!(l.cube_containing(IVec3::new(128, 0, 0)), None);
        assert!(l.cubes()[l.cube_containing(IVec3::new(7, 7, 7)).unwrap() as usize].is_solid());
        let volume: u64 = l.cubes().iter().filter(|c| !c.is_parent()).map(|c| c.addr.lattice_box().volume()).sum();
        assert_eq!(volume, 128u64.pow(3));
        // Air cells: 7 of edge 1 unit, and the rest of the chunk in 2-unit cells.
        assert_eq!(l.air_cells().len(), 7 + 511);
        // Deterministic and settings-dependent.
        assert_eq!(ChunkLayout::build(&o, &s), l);
        let coarse = ChunkLayout::build(&o, &BakeSettings { air_cell_log2: 2, ..s });
        assert!(coarse.len() < l.len());
        assert!(coarse.air_cells().iter().all(|&i| coarse.cubes()[i as usize].addr.size_log2 <= 5));
    }

    #[test]
    fn solid_briefs_follow_the_solid_cubes() {
        // Plain geometry of two materials and one extended cube, in a 16-unit chunk.
        let mut o = Octree::new(7);
        let unit = |x: i32, y: i32, z: i32| CubeAddr::new(IVec3::new(x, y, z) * 8, 3).unwrap();
        o.set_cube(unit(0, 0, 0), stone()).unwrap();
        o.set_cube(unit(3, 1, 2), Cube::solid(MaterialId(4), PhysicsId(0), SoundId(0))).unwrap();
        let mut corners = pmfedit_core::map::octree::ExtGeometry::from_geometry(Default::default());
        corners.corners[0] = [0, -8, 0]; // corner +X+Y+Z pushed halfway down
        let mut ext = stone();
        ext.kind = CubeKind::Extended(corners);
        o.set_cube(unit(5, 5, 5), ext).unwrap();
        let l = ChunkLayout::build(&o, &BakeSettings::default());
        check(&l);
        // Pre-order, + halves first (C2): the extended cube, then (3,1,2), then the origin's.
        let plain: Vec<_> = l.solid_briefs().iter().map(|b| b.plain).collect();
        assert_eq!(plain, [None, Some(MaterialId(4)), Some(MaterialId(0))]);
    }

    #[test]
    fn big_chunks_cap_the_air_cell_count() {
        // A 2^12-unit chunk: 2-unit cells would be 2^33 cubes; the cap makes them 2^7 units.
        let mut o = Octree::new(15);
        o.set_cube(CubeAddr::new(IVec3::ZERO, 3).unwrap(), stone()).unwrap();
        let l = ChunkLayout::build(&o, &BakeSettings::default());
        assert_eq!(l.air_cell_log2(), 10);
        assert!(l.len() < 40_000, "{} cubes", l.len());
        check(&l);
    }
}
