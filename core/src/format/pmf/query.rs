//! Queries on a compiled chunk, as an engine makes them: which leaf cube holds a point (the
//! octree walk of docs/spec/PMF-NOTES.md C1/C2) and what an air cube's visibility data says is visible from
//! it (V1). Pure functions on the [`types`](super::types) records; malformed data (a child index
//! past the array, a cycle, a list naming a cube twice) gives `None` or is tolerated, never a
//! panic.

use std::collections::BTreeMap;

use super::types::{ChunkIndex, Cube, CubeKind, Visibility};

/// The leaf cube found by [`leaf_at`], with its box.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LeafAt {
    /// Index into the chunk's cube array.
    pub index: u32,
    /// Minimum corner, map units relative to the chunk center (PMF chunk space, G1).
    pub min: [f64; 3],
    /// Edge, map units.
    pub edge: f64,
}

impl LeafAt {
    /// Maximum corner, map units relative to the chunk center.
    pub fn max(&self) -> [f64; 3] {
        self.min.map(|v| v + self.edge)
    }
}

/// The leaf cube holding `point` in a chunk whose cube array is `cubes` and whose edge is
/// `2^chunk_size_exp` map units (docs/spec/PMF-NOTES.md L2). `point` is in PMF chunk space: map units
/// relative to the chunk center (G1), so the chunk spans `[-edge/2, edge/2)` on each axis; a
/// point on a boundary between two cubes belongs to the one on its positive side (the cube
/// boxes are half-open, as the editor's lattice is).
///
/// The walk starts at cube 0 (the root, C1) and at each parent takes the child of the octant
/// holding the point (bit order of C2: bit 0 = −X, bit 1 = −Z, bit 2 = −Y). The result is the
/// leaf reached, whatever its type (empty, geometry or extended geometry).
///
/// `None` when the point lies outside the chunk or is not finite, when it lies in a parent's
/// missing child (empty space without a record), or when the array is malformed (no root, a
/// child index past the end, a walk deeper than the array is long).
pub fn leaf_at(cubes: &[Cube], chunk_size_exp: u8, point: [f64; 3]) -> Option<LeafAt> {
    if point.iter().any(|v| !v.is_finite()) || chunk_size_exp > 63 {
        return None;
    }
    let mut edge = f64::from(chunk_size_exp).exp2();
    let mut min = [-edge / 2.0; 3];
    if (0..3).any(|a| point[a] < min[a] || point[a] >= min[a] + edge) {
        return None;
    }
    let mut index = 0u32;
    // A well-formed octree never visits a cube twice, so a longer walk means a cycle.
    for _ in 0..=cubes.len() {
        let cube = cubes.get(index as usize)?;
        let CubeKind::Parent(p) = &cube.kind else {
            return Some(LeafAt { index, min, edge });
        };
        edge /= 2.0;
        let mut octant = 0;
        for (a, bit) in [(0, 1), (2, 2), (1, 4)] {
            if point[a] >= min[a] + edge {
                min[a] += edge;
            } else {
                octant |= bit;
            }
        }
        index = p.children[octant]?.get();
    }
    None
}

/// The visible geometry cubes of one chunk in a [`VisibleSet`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CubeSet {
    /// Every cube of the chunk (a PMF list of count 0).
    All,
    /// These cube indices, ascending, without repeats.
    Listed(Vec<u32>),
}

impl CubeSet {
    /// Whether cube `index` is in the set.
    pub fn contains(&self, index: u32) -> bool {
        match self {
            CubeSet::All => true,
            CubeSet::Listed(l) => l.binary_search(&index).is_ok(),
        }
    }

    /// The union of two sets.
    fn merge(self, other: CubeSet) -> CubeSet {
        match (self, other) {
            (CubeSet::Listed(mut a), CubeSet::Listed(b)) => {
                a.extend(b);
                a.sort_unstable();
                a.dedup();
                CubeSet::Listed(a)
            }
            _ => CubeSet::All,
        }
    }
}

/// What an air cube's visibility data says is visible from it, per chunk (docs/spec/PMF-NOTES.md V1).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VisibleSet {
    /// Per chunk with at least one visible cube (or [`CubeSet::All`]). The air cube's own chunk
    /// is here when its "other visible cube" list is not empty.
    pub chunks: BTreeMap<ChunkIndex, CubeSet>,
}

impl VisibleSet {
    /// Whether cube `index` of `chunk` is visible.
    pub fn contains(&self, chunk: ChunkIndex, index: u32) -> bool {
        self.chunks.get(&chunk).is_some_and(|s| s.contains(index))
    }

    /// The set of one chunk, if any of its cubes is visible.
    pub fn get(&self, chunk: ChunkIndex) -> Option<&CubeSet> {
        self.chunks.get(&chunk)
    }
}

impl Visibility {
    /// The visible set of the air cube carrying this data, in the chunk with index `own`:
    /// the "other visible cube" list goes to `own`, each visible chunk record to its chunk (an
    /// empty list meaning every cube). Lists are sorted and deduplicated; a chunk named twice (or
    /// `own` named again) gets the union.
    pub fn visible_set(&self, own: ChunkIndex) -> VisibleSet {
        let mut chunks: BTreeMap<ChunkIndex, CubeSet> = BTreeMap::new();
        let mut add = |chunk: ChunkIndex, set: CubeSet| {
            let merged = match chunks.remove(&chunk) {
                Some(old) => old.merge(set),
                // Merging with nothing sorts and deduplicates.
                None => set.merge(CubeSet::Listed(Vec::new())),
            };
            chunks.insert(chunk, merged);
        };
        if !self.cubes.is_empty() {
            add(own, CubeSet::Listed(self.cubes.to_vec()));
        }
        for c in self.chunks.iter() {
            add(c.chunk, if c.cubes.is_empty() { CubeSet::All } else { CubeSet::Listed(c.cubes.clone()) });
        }
        VisibleSet { chunks }
    }
}

/// The visible set of cube `index` of a chunk with index `own`: `Some` only for a cube that
/// carries visibility data (an empty leaf, docs/spec/PMF-NOTES.md V1).
pub fn visible_from(cubes: &[Cube], own: ChunkIndex, index: u32) -> Option<VisibleSet> {
    let cube = cubes.get(index as usize)?;
    match (&cube.kind, &cube.visibility) {
        (CubeKind::Empty, Some(v)) => Some(v.visible_set(own)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::types::{GeometryCube, ParentCube, VisibleChunk};
    use super::*;

    fn leaf(kind: CubeKind) -> Cube {
        Cube { draw_backfaces: false, visibility: None, kind }
    }

    fn parent(children: [Option<u32>; 8]) -> CubeKind {
        CubeKind::Parent(ParentCube::from_indices(children).expect("no child 0"))
    }

    fn solid() -> CubeKind {
        CubeKind::Geometry(GeometryCube::default())
    }

    /// Root (index 0) with children in bit order: bit 0 (+X+Y+Z) is a parent (index 1) of eight
    /// leaves 2..=9 (its own bit 0 solid, the rest empty), bit 7 (−X−Y−Z) missing, the other six
    /// empty leaves 10..=15. Chunk edge 4 map units.
    fn small_chunk() -> Vec<Cube> {
        let root = [Some(1), Some(10), Some(11), Some(12), Some(13), Some(14), Some(15), None];
        let mut cubes = vec![leaf(parent(root)), leaf(parent(std::array::from_fn(|i| Some(2 + i as u32))))];
        cubes.push(leaf(solid()));
        for _ in 3..16 {
            cubes.push(leaf(CubeKind::Empty));
        }
        cubes
    }

    #[test]
    fn the_walk_follows_the_bit_order() {
        let c = small_chunk();
        // +X+Y+Z quarter of the +X+Y+Z octant: cube 2, edge 1, from (1, 1, 1).
        assert_eq!(leaf_at(&c, 2, [1.5, 1.2, 1.9]), Some(LeafAt { index: 2, min: [1.0; 3], edge: 1.0 }));
        // −X of that octant: bit 1 → cube 3.
        assert_eq!(leaf_at(&c, 2, [0.5, 1.5, 1.5]).map(|l| l.index), Some(3));
        // Boundaries go to the positive side: (1, 1, 1) is cube 2, (0, 0, 0) is in octant 0.
        assert_eq!(leaf_at(&c, 2, [1.0, 1.0, 1.0]).map(|l| l.index), Some(2));
        assert_eq!(leaf_at(&c, 2, [0.0, 0.0, 0.0]).map(|l| l.index), Some(9));
        // Root octants 1..=6: −X (bit 0) → 10, −Z (bit 1) → 11, −X−Z → 12, −Y (bit 2) → 13.
        assert_eq!(leaf_at(&c, 2, [-1.0, 1.0, 1.0]).map(|l| l.index), Some(10));
        assert_eq!(leaf_at(&c, 2, [1.0, 1.0, -1.0]).map(|l| l.index), Some(11));
        assert_eq!(leaf_at(&c, 2, [-1.0, 1.0, -1.0]).map(|l| l.index), Some(12));
        let l = leaf_at(&c, 2, [1.0, -1.0, 1.0]).unwrap();
        assert_eq!((l.index, l.min, l.edge, l.max()), (13, [0.0, -2.0, 0.0], 2.0, [2.0, 0.0, 2.0]));
        // The missing −X−Y−Z child, outside the chunk, not finite.
        assert_eq!(leaf_at(&c, 2, [-1.0, -1.0, -1.0]), None);
        assert_eq!(leaf_at(&c, 2, [2.0, 0.0, 0.0]), None);
        assert_eq!(leaf_at(&c, 2, [0.0, -2.01, 0.0]), None);
        assert_eq!(leaf_at(&c, 2, [f64::NAN, 0.0, 0.0]), None);
        // A single-leaf chunk: the root.
        assert_eq!(leaf_at(&[Cube::default()], 4, [-8.0, 7.9, 0.0]).map(|l| l.index), Some(0));
    }

    #[test]
    fn malformed_octrees_give_none() {
        assert_eq!(leaf_at(&[], 2, [0.0; 3]), None);
        // A child index past the end.
        let mut c = small_chunk();
        c.truncate(5);
        assert_eq!(leaf_at(&c, 2, [0.5, 1.5, 1.5]).map(|l| l.index), Some(3));
        assert_eq!(leaf_at(&c, 2, [0.5, 0.5, 0.5]), None);
        // A cycle: cube 1 is its own child (the root cannot be: `ChildIndex` has no 0).
        let cyc = vec![leaf(parent([Some(1); 8])), leaf(parent([Some(1); 8]))];
        assert_eq!(leaf_at(&cyc, 2, [0.5, 0.5, 0.5]), None);
    }

    #[test]
    fn visibility_decodes_per_chunk() {
        let own = ChunkIndex { y: 0, x: 1, z: 1 };
        let a = ChunkIndex { y: 0, x: 2, z: 1 };
        let b = ChunkIndex { y: 1, x: 1, z: 1 };
        let v = Visibility {
            cubes: vec![9, 3, 3].into(),
            chunks: vec![
                VisibleChunk { chunk: a, cubes: vec![] },
                VisibleChunk { chunk: b, cubes: vec![4, 2] },
                // Malformed: `own` and `b` again.
                VisibleChunk { chunk: own, cubes: vec![5] },
                VisibleChunk { chunk: b, cubes: vec![7] },
            ]
            .into(),
        };
        let s = v.visible_set(own);
        assert_eq!(s.get(own), Some(&CubeSet::Listed(vec![3, 5, 9])));
        assert_eq!(s.get(a), Some(&CubeSet::All));
        assert_eq!(s.get(b), Some(&CubeSet::Listed(vec![2, 4, 7])));
        assert!(s.contains(a, 12345) && s.contains(own, 9) && !s.contains(own, 4));
        assert!(!s.contains(ChunkIndex::default(), 0));
        // No own list: the own chunk is absent.
        let empty = Visibility::default().visible_set(own);
        assert!(empty.chunks.is_empty());

        // Only empty cubes with data have a set.
        let mut c = small_chunk();
        c[3].visibility = Some(Box::new(v.clone()));
        c[2].visibility = Some(Box::new(v));
        assert!(visible_from(&c, own, 3).is_some_and(|s| s.contains(a, 0)));
        assert_eq!(visible_from(&c, own, 2), None, "a solid cube has no visible set");
        assert_eq!(visible_from(&c, own, 4), None, "no data");
        assert_eq!(visible_from(&c, own, 99), None, "no such cube");
    }
}
