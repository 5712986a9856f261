//! Coordinate spaces of a level and the addressing of cubes.
//!
//! # Spaces
//! - **Lattice** (`IVec3`): integer positions on the finest grid. One lattice unit is the edge of
//!   the smallest cube, [`MIN_CUBE_EDGE`] = 1/8 map unit. *Level lattice* positions count from the
//!   minimum corner of chunk `(0, 0, 0)` of the level grid, so every position inside the grid is
//!   non-negative; *chunk lattice* positions count from the minimum corner of one chunk.
//! - **Chunk** ([`ChunkCoord`]): which chunk of the level grid; `x`, `z` in `0..4096`, `y` in
//!   `0..256` (docs/spec/PMF-NOTES.md L3/L4). The PMF exporter crops the grid to the occupied chunks.
//! - **World** (`DVec3`): map units relative to the center of the level's center chunk, as PMF
//!   stores level-space positions (docs/spec/PMF-NOTES.md L4). `f64`, because a level can be `2^27` map units
//!   wide and `f32` cannot hold lattice precision that far out.
//!
//! # Why 1/8 map unit
//! Chunks are `2^n` map units with `n` in `0..=15` (docs/spec/PMF-NOTES.md L2). With eight lattice units per
//! map unit even the smallest chunk (1 map unit) can still be subdivided three times, the largest
//! chunk is `2^18` lattice units (an octree at most 18 levels deep), and a whole level
//! (`4096 · 2^18 = 2^30` lattice units) still fits an `i32`. Every lattice position, and every
//! pushed-corner step (1/16 of a cube edge, see `octree`), is exactly representable as an `f32`
//! offset from a chunk center, so the export is lossless.

use glam::{DVec3, IVec3};
use serde::{Deserialize, Serialize};

/// Lattice units per map unit, as a power of two.
pub const LATTICE_PER_UNIT_LOG2: u8 = 3;
/// Lattice units per map unit.
pub const LATTICE_PER_UNIT: i32 = 1 << LATTICE_PER_UNIT_LOG2;
/// Edge of the smallest cube, in map units.
pub const MIN_CUBE_EDGE: f64 = 1.0 / LATTICE_PER_UNIT as f64;
/// Largest chunk size exponent (chunk edge `2^15` map units, docs/spec/PMF-NOTES.md L2).
pub const MAX_CHUNK_SIZE_LOG2: u8 = 15;
/// Largest chunk edge in lattice units, as a power of two (the deepest octree).
pub const MAX_CHUNK_LATTICE_LOG2: u8 = MAX_CHUNK_SIZE_LOG2 + LATTICE_PER_UNIT_LOG2;
/// Chunks along Y in a level grid (8 bits of chunk index, docs/spec/PMF-NOTES.md L3).
pub const GRID_MAX_Y: i32 = 256;
/// Chunks along X and along Z in a level grid (12 bits of chunk index).
pub const GRID_MAX_XZ: i32 = 4096;

/// One of the six faces of a cube, in PMF face order (docs/spec/PMF-NOTES.md C5): +X, +Y, +Z, −X, −Y, −Z.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[repr(u8)]
pub enum Face {
    PosX = 0,
    PosY = 1,
    PosZ = 2,
    NegX = 3,
    NegY = 4,
    NegZ = 5,
}

impl Face {
    /// All faces in PMF order.
    pub const ALL: [Face; 6] = [Face::PosX, Face::PosY, Face::PosZ, Face::NegX, Face::NegY, Face::NegZ];

    /// The face's index in PMF order (also its face bit).
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The face with PMF index `i` (0..6).
    pub fn from_index(i: usize) -> Option<Face> {
        Self::ALL.get(i).copied()
    }

    /// 0 for X, 1 for Y, 2 for Z.
    pub const fn axis(self) -> usize {
        self as usize % 3
    }

    /// Whether the face looks along the positive axis.
    pub const fn is_positive(self) -> bool {
        (self as usize) < 3
    }

    /// The face on the other side of the cube.
    pub fn opposite(self) -> Face {
        Self::ALL[(self as usize + 3) % 6]
    }

    /// The face of `axis` (0..3) looking along the positive or negative direction.
    pub fn from_axis(axis: usize, positive: bool) -> Face {
        Self::ALL[axis + if positive { 0 } else { 3 }]
    }

    /// The outward unit normal.
    pub fn normal(self) -> IVec3 {
        let mut n = IVec3::ZERO;
        n[self.axis()] = if self.is_positive() { 1 } else { -1 };
        n
    }
}

/// Offset (0 or 1 in units of the child edge) of child / corner `i` in PMF bit order
/// (docs/spec/PMF-NOTES.md C2): bit 0 set means −X, bit 1 set means −Z, bit 2 set means −Y.
pub const fn octant_offset(i: usize) -> IVec3 {
    IVec3::new((i & 1 == 0) as i32, (i & 4 == 0) as i32, (i & 2 == 0) as i32)
}

/// The PMF child / corner index of the octant with per-axis offsets (0 = low half, 1 = high half).
pub const fn octant_index(offset: IVec3) -> usize {
    (offset.x == 0) as usize | ((offset.z == 0) as usize) << 1 | ((offset.y == 0) as usize) << 2
}

/// Which chunk of a level grid.
///
/// Ordered `y`, then `x`, then `z`, which is the PMF dense grid order (docs/spec/PMF-NOTES.md L3), so a
/// `BTreeMap<ChunkCoord, _>` iterates chunks in export order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ChunkCoord {
    pub y: i32,
    pub x: i32,
    pub z: i32,
}

impl ChunkCoord {
    /// Chunk `(x, y, z)`.
    pub const fn new(x: i32, y: i32, z: i32) -> Self {
        Self { y, x, z }
    }

    /// From an `IVec3` in (x, y, z) order.
    pub const fn from_ivec3(v: IVec3) -> Self {
        Self { y: v.y, x: v.x, z: v.z }
    }

    /// As an `IVec3` in (x, y, z) order.
    pub const fn as_ivec3(self) -> IVec3 {
        IVec3::new(self.x, self.y, self.z)
    }

    /// Whether the chunk lies inside the PMF grid limits (`x`, `z` in `0..4096`, `y` in `0..256`).
    pub const fn is_in_grid(self) -> bool {
        self.x >= 0 && self.x < GRID_MAX_XZ && self.z >= 0 && self.z < GRID_MAX_XZ && self.y >= 0 && self.y < GRID_MAX_Y
    }
}

/// An axis-aligned box of lattice positions, `min` inclusive, `max` exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LatticeBox {
    pub min: IVec3,
    pub max: IVec3,
}

impl LatticeBox {
    /// The box `[min, max)`.
    pub const fn new(min: IVec3, max: IVec3) -> Self {
        Self { min, max }
    }

    /// Whether the box holds no position.
    pub fn is_empty(&self) -> bool {
        self.min.cmpge(self.max).any()
    }

    /// Number of lattice positions (0 for an empty box).
    pub fn volume(&self) -> u64 {
        if self.is_empty() {
            return 0;
        }
        let d = (self.max - self.min).as_i64vec3();
        (d.x * d.y * d.z) as u64
    }

    /// Whether `p` lies inside.
    pub fn contains(&self, p: IVec3) -> bool {
        p.cmpge(self.min).all() && p.cmplt(self.max).all()
    }

    /// Whether `other` lies entirely inside (an empty `other` always does).
    pub fn contains_box(&self, other: &LatticeBox) -> bool {
        other.is_empty() || (other.min.cmpge(self.min).all() && other.max.cmple(self.max).all())
    }

    /// Whether the boxes share a position.
    pub fn intersects(&self, other: &LatticeBox) -> bool {
        !self.intersection(other).is_empty()
    }

    /// The positions in both boxes (possibly empty).
    pub fn intersection(&self, other: &LatticeBox) -> LatticeBox {
        LatticeBox { min: self.min.max(other.min), max: self.max.min(other.max) }
    }

    /// The smallest box holding both (an empty box is ignored).
    pub fn union(&self, other: &LatticeBox) -> LatticeBox {
        if self.is_empty() {
            *other
        } else if other.is_empty() {
            *self
        } else {
            LatticeBox { min: self.min.min(other.min), max: self.max.max(other.max) }
        }
    }

    /// The box moved by `d`.
    pub fn translated(&self, d: IVec3) -> LatticeBox {
        LatticeBox { min: self.min + d, max: self.max + d }
    }
}

/// An aligned cube of the octree: its lattice minimum corner and its edge `2^size_log2`.
/// `min` is a multiple of the edge on every axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CubeAddr {
    pub min: IVec3,
    pub size_log2: u8,
}

impl CubeAddr {
    /// The cube at `min` of edge `2^size_log2`, or `None` if `min` is not aligned to that edge or
    /// the size exceeds the level lattice.
    pub fn new(min: IVec3, size_log2: u8) -> Option<Self> {
        let a = Self { min, size_log2 };
        (size_log2 <= 30 && a.is_aligned()).then_some(a)
    }

    /// The aligned cube of edge `2^size_log2` that contains `p`.
    pub fn containing(p: IVec3, size_log2: u8) -> Self {
        let s = i32::from(size_log2);
        Self { min: (p >> s) << s, size_log2 }
    }

    /// The smallest aligned cube holding every position of the non-empty box `b`.
    pub fn covering(b: &LatticeBox) -> Self {
        let mut s = 0u8;
        let last = b.max - IVec3::ONE;
        while s < 31 && ((b.min >> i32::from(s)) != (last >> i32::from(s))) {
            s += 1;
        }
        Self::containing(b.min, s)
    }

    /// Whether `min` is a multiple of the edge.
    pub fn is_aligned(&self) -> bool {
        let mask = self.edge() - 1;
        (self.min & IVec3::splat(mask)) == IVec3::ZERO
    }

    /// The edge in lattice units.
    pub const fn edge(&self) -> i32 {
        1 << self.size_log2
    }

    /// The exclusive maximum corner.
    pub fn max(&self) -> IVec3 {
        self.min + IVec3::splat(self.edge())
    }

    /// The cube's lattice positions as a box.
    pub fn lattice_box(&self) -> LatticeBox {
        LatticeBox { min: self.min, max: self.max() }
    }

    /// Whether `p` lies inside the cube.
    pub fn contains(&self, p: IVec3) -> bool {
        self.lattice_box().contains(p)
    }

    /// Whether `other` lies inside this cube (or is it).
    pub fn contains_addr(&self, other: &CubeAddr) -> bool {
        other.size_log2 <= self.size_log2 && self.contains(other.min)
    }

    /// Child `i` in PMF bit order (docs/spec/PMF-NOTES.md C2). The cube must not have edge 1.
    pub fn child(&self, i: usize) -> CubeAddr {
        debug_assert!(self.size_log2 > 0);
        let s = self.size_log2 - 1;
        CubeAddr { min: self.min + octant_offset(i) * (1 << s), size_log2: s }
    }

    /// The index of the child holding `p` (which must lie inside this cube of edge > 1).
    pub fn child_index_of(&self, p: IVec3) -> usize {
        octant_index((p - self.min) >> i32::from(self.size_log2 - 1))
    }

    /// The parent cube (edge doubled).
    pub fn parent(&self) -> CubeAddr {
        Self::containing(self.min, self.size_log2 + 1)
    }

    /// The cube moved by `d` (which must keep it aligned).
    pub fn translated(&self, d: IVec3) -> CubeAddr {
        CubeAddr { min: self.min + d, size_log2: self.size_log2 }
    }
}

/// How a level's lattice maps to chunks and to world (map-unit) space: the chunk size exponent
/// and the center chunk (docs/spec/PMF-NOTES.md L2, L4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LevelFrame {
    /// Chunk edge is `2^chunk_size_log2` map units, `0..=15`.
    pub chunk_size_log2: u8,
    /// The chunk whose center is the world origin.
    pub center_chunk: ChunkCoord,
}

impl LevelFrame {
    /// Chunk edge in lattice units, as a power of two (`chunk_size_log2 + 3`).
    pub const fn chunk_lattice_log2(&self) -> u8 {
        self.chunk_size_log2 + LATTICE_PER_UNIT_LOG2
    }

    /// Chunk edge in lattice units.
    pub const fn chunk_edge(&self) -> i32 {
        1 << self.chunk_lattice_log2()
    }

    /// The level lattice box of the whole PMF grid.
    pub fn grid_box(&self) -> LatticeBox {
        let e = self.chunk_edge();
        LatticeBox::new(IVec3::ZERO, IVec3::new(GRID_MAX_XZ, GRID_MAX_Y, GRID_MAX_XZ) * e)
    }

    /// The chunk holding level lattice position `p` (it may lie outside the grid).
    pub fn chunk_from_lattice(&self, p: IVec3) -> ChunkCoord {
        ChunkCoord::from_ivec3(p >> i32::from(self.chunk_lattice_log2()))
    }

    /// The chunk-local lattice position of level lattice position `p`.
    pub fn lattice_in_chunk(&self, p: IVec3) -> IVec3 {
        p & IVec3::splat(self.chunk_edge() - 1)
    }

    /// The level lattice position of the minimum corner of `chunk`.
    pub fn chunk_min_lattice(&self, chunk: ChunkCoord) -> IVec3 {
        chunk.as_ivec3() << i32::from(self.chunk_lattice_log2())
    }

    /// The level lattice position of chunk-local position `local` in `chunk`.
    pub fn lattice_from_chunk(&self, chunk: ChunkCoord, local: IVec3) -> IVec3 {
        self.chunk_min_lattice(chunk) + local
    }

    /// The root cube of `chunk` in level lattice space.
    pub fn chunk_addr(&self, chunk: ChunkCoord) -> CubeAddr {
        CubeAddr { min: self.chunk_min_lattice(chunk), size_log2: self.chunk_lattice_log2() }
    }

    /// The level lattice position of the world origin (the center of the center chunk).
    pub fn origin_lattice(&self) -> IVec3 {
        self.chunk_min_lattice(self.center_chunk) + IVec3::splat(self.chunk_edge() / 2)
    }

    /// World position (map units from the center chunk's center) of a level lattice position.
    pub fn world_from_lattice(&self, p: IVec3) -> DVec3 {
        (p - self.origin_lattice()).as_dvec3() * MIN_CUBE_EDGE
    }

    /// World position of a fractional level lattice position.
    pub fn world_from_lattice_f(&self, p: DVec3) -> DVec3 {
        (p - self.origin_lattice().as_dvec3()) * MIN_CUBE_EDGE
    }

    /// The level lattice cell holding world position `w` (floor).
    pub fn lattice_from_world(&self, w: DVec3) -> IVec3 {
        self.lattice_from_world_f(w).floor().as_ivec3()
    }

    /// The chunk holding world point `w` (the chunk of its lattice cell).
    pub fn chunk_from_world(&self, w: DVec3) -> ChunkCoord {
        self.chunk_from_lattice(self.lattice_from_world(w))
    }

    /// Fractional level lattice position of world position `w`.
    pub fn lattice_from_world_f(&self, w: DVec3) -> DVec3 {
        w * f64::from(LATTICE_PER_UNIT) + self.origin_lattice().as_dvec3()
    }

    /// World position of the center of `chunk` (map units from the center chunk's center).
    pub fn chunk_center_world(&self, chunk: ChunkCoord) -> DVec3 {
        self.world_from_lattice(self.chunk_min_lattice(chunk) + IVec3::splat(self.chunk_edge() / 2))
    }

    /// World-space box `(min, max)` of `chunk`.
    pub fn chunk_world_box(&self, chunk: ChunkCoord) -> (DVec3, DVec3) {
        let min = self.chunk_min_lattice(chunk);
        (self.world_from_lattice(min), self.world_from_lattice(min + IVec3::splat(self.chunk_edge())))
    }

    /// World position relative to the center of `chunk` (PMF chunk space, docs/spec/PMF-NOTES.md G1/R1) of a
    /// chunk-local lattice position.
    pub fn chunk_space_from_lattice_in_chunk(&self, local: DVec3) -> DVec3 {
        (local - DVec3::splat(f64::from(self.chunk_edge() / 2))) * MIN_CUBE_EDGE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn octants_follow_pmf_bit_order() {
        // 0 (+X,+Y,+Z), 1 (−X,+Y,+Z), 2 (+X,+Y,−Z), 3 (−X,+Y,−Z), 4 (+X,−Y,+Z), ... 7 (−X,−Y,−Z)
        assert_eq!(octant_offset(0), IVec3::new(1, 1, 1));
        assert_eq!(octant_offset(1), IVec3::new(0, 1, 1));
        assert_eq!(octant_offset(2), IVec3::new(1, 1, 0));
        assert_eq!(octant_offset(4), IVec3::new(1, 0, 1));
        assert_eq!(octant_offset(7), IVec3::new(0, 0, 0));
        for i in 0..8 {
            assert_eq!(octant_index(octant_offset(i)), i);
        }
        let a = CubeAddr::new(IVec3::new(8, 0, 16), 3).unwrap();
        for i in 0..8 {
            let c = a.child(i);
            assert_eq!(a.child_index_of(c.min), i);
            assert_eq!(a.child_index_of(c.max() - IVec3::ONE), i);
            assert_eq!(c.parent(), a);
        }
    }

    #[test]
    fn faces() {
        for f in Face::ALL {
            assert_eq!(Face::from_index(f.index()), Some(f));
            assert_eq!(f.opposite().opposite(), f);
            assert_eq!(f.normal(), -f.opposite().normal());
            assert_eq!(Face::from_axis(f.axis(), f.is_positive()), f);
        }
        assert_eq!(Face::NegY.normal(), IVec3::new(0, -1, 0));
    }

    #[test]
    fn covering_and_alignment() {
        assert!(CubeAddr::new(IVec3::new(4, 0, 0), 3).is_none());
        let b = LatticeBox::new(IVec3::new(3, 3, 3), IVec3::new(5, 4, 4));
        let c = CubeAddr::covering(&b);
        assert_eq!(c, CubeAddr { min: IVec3::ZERO, size_log2: 3 });
        let b = LatticeBox::new(IVec3::new(5, 5, 5), IVec3::new(6, 6, 6));
        assert_eq!(CubeAddr::covering(&b), CubeAddr { min: IVec3::splat(5), size_log2: 0 });
    }

    #[test]
    fn frame_round_trips() {
        let f = LevelFrame { chunk_size_log2: 4, center_chunk: ChunkCoord::new(10, 2, 7) };
        assert_eq!(f.chunk_edge(), 128);
        let p = IVec3::new(10 * 128 + 5, 2 * 128 + 127, 7 * 128);
        let c = f.chunk_from_lattice(p);
        assert_eq!(c, ChunkCoord::new(10, 2, 7));
        assert_eq!(f.lattice_in_chunk(p), IVec3::new(5, 127, 0));
        assert_eq!(f.lattice_from_chunk(c, f.lattice_in_chunk(p)), p);
        // The center of the center chunk is the world origin.
        assert_eq!(f.world_from_lattice(f.origin_lattice()), DVec3::ZERO);
        assert_eq!(f.world_from_lattice(f.origin_lattice() + IVec3::new(8, -4, 1)), DVec3::new(1.0, -0.5, 0.125));
        for q in [p, IVec3::ZERO, IVec3::new(3, 77, 1000)] {
            assert_eq!(f.lattice_from_world(f.world_from_lattice(q)), q);
        }
        assert!(!f.chunk_from_lattice(IVec3::new(-1, 0, 0)).is_in_grid());
        assert!(ChunkCoord::new(4095, 255, 0).is_in_grid());
        assert!(!ChunkCoord::new(4096, 0, 0).is_in_grid());
        assert!(!ChunkCoord::new(0, 256, 0).is_in_grid());
    }
}
