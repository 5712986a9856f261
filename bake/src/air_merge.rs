//! Uniform air merged for the file (docs/spec/PMF-NOTES.md C4b, *Air cells with the same data*).
//!
//! The layout cuts air into cells of one size ([`crate::layout`]) so that lighting, visibility
//! and pathfinding have somewhere to live; the bake then gives every cell its data. Where the
//! eight cells under one parent came out carrying exactly the same data (flags, lighting,
//! visibility lists, pathfinding attributes), the parent and its cells say nothing the single
//! cell does not: every point of the parent gets that data either way. [`merge_uniform_air`] writes
//! such a parent as one empty cube carrying the data, recursively (a parent of eight merged
//! parents merges again), so a file holds one record where it held nine and the parent's eight
//! child indices. On open ground most air above the surface is lit alike and lists nothing.
//!
//! This is the last step from a bake's record to the file's ([`crate::compile`]): the bakes, the
//! editor and the rebuild engine keep the layout's cells (their far lists are rewritten per cell
//! index), and every path that writes a file goes through it, so incremental and full exports
//! write the same bytes. The cube array stays in pre-order, children in bit order (C1); indices
//! after a merged parent move down, and the visibility lists' "other visible cube" indices are
//! mapped to the new ones (they name geometry cubes, never merged). The records move in place,
//! no copy: a bake's array is in that pre-order, each subtree one run of it. A chunk that is not,
//! whose lists name a cube inside merged air, or whose lists name cubes by explicit chunk records
//! (our compiler writes none: far chunks are listed whole, V1) is left as it is, so no index can
//! go stale.

use std::collections::HashMap;
use std::sync::Arc;

use pmfedit_core::format::pmf;

/// Which parents of a chunk merge: found by [`merge_plan`], applied by [`MergePlan::apply`].
#[derive(Debug, Clone, PartialEq)]
pub struct MergePlan {
    /// Per cube: for a parent that merges, the leaf whose records stand for it.
    rep: Vec<Option<u32>>,
    /// Per cube: one past the last cube of its subtree (the array is in pre-order).
    end: Vec<u32>,
}

/// The parents of `chunk` whose leaves are all empty cubes carrying the same data, if any and if
/// the chunk can be merged (see the [module documentation](self)); `None` otherwise.
pub fn merge_plan(chunk: &pmf::Chunk) -> Option<MergePlan> {
    let common = &chunk.common.cubes;
    let n = common.len();
    if n == 0 || chunk.client.cubes.len() != n || chunk.server.cubes.len() != n || u32::try_from(n).is_err() {
        return None;
    }
    // Children before parents: backwards through the array, which must be in pre-order with
    // children in bit order: a parent's first child right after it, each next child where the
    // previous one's subtree ends, the root's subtree the whole array.
    let mut rep: Vec<Option<u32>> = vec![None; n];
    let mut end: Vec<u32> = (1..=n as u32).collect();
    let mut any = false;
    for i in (0..n).rev() {
        let pmf::CubeKind::Parent(p) = &common[i].kind else { continue };
        let mut next = i as u32 + 1;
        for k in p.present() {
            if k != next || k as usize >= n {
                return None;
            }
            next = end[k as usize];
        }
        end[i] = next;
        if !p.children.iter().all(Option::is_some) || !carries_nothing(chunk, i) {
            continue;
        }
        let leaf = |k: u32| match common[k as usize].kind {
            pmf::CubeKind::Empty => Some(k),
            _ => rep[k as usize],
        };
        let mut leaves = p.present().map(leaf);
        let Some(Some(first)) = leaves.next() else { continue };
        if leaves.all(|l| l.is_some_and(|l| same_data(chunk, first as usize, l as usize))) {
            rep[i] = Some(first);
            any = true;
        }
    }
    if !any || end[0] as usize != n {
        return None;
    }
    // Cubes inside merged air (not the merged parents themselves) go away; no list may name one.
    let mut gone = vec![false; n];
    let mut i = 0;
    while i < n {
        if rep[i].is_some() {
            gone[i + 1..end[i] as usize].fill(true);
            i = end[i] as usize;
        } else {
            i += 1;
        }
    }
    let mut checked: std::collections::HashSet<usize> = std::collections::HashSet::new();
    for v in common.iter().filter_map(|c| c.visibility.as_ref()) {
        if v.chunks.iter().any(|vc| !vc.cubes.is_empty()) {
            return None;
        }
        let key = v.cubes.as_ptr() as usize;
        if checked.contains(&key) {
            continue;
        }
        if v.cubes.iter().any(|&k| gone.get(k as usize).is_none_or(|&g| g)) {
            return None;
        }
        checked.insert(key);
    }
    Some(MergePlan { rep, end })
}

impl MergePlan {
    /// Merges `chunk`'s uniform air as planned, moving the records in place. `chunk` must be the
    /// chunk the plan was made for.
    pub fn apply(&self, chunk: &mut pmf::Chunk) {
        let n = self.rep.len();
        let (common, client, server) = (&mut chunk.common.cubes, &mut chunk.client.cubes, &mut chunk.server.cubes);
        assert!(common.len() == n && client.len() == n && server.len() == n, "a plan for another chunk");
        let mut map: Vec<u32> = vec![u32::MAX; n];
        let (mut i, mut w) = (0usize, 0usize);
        while i < n {
            // Slot `w` (≤ i) holds a record already moved or merged away.
            let from = match self.rep[i] {
                Some(r) => r as usize,
                None => i,
            };
            common.swap(w, from);
            client.swap(w, from);
            server.swap(w, from);
            map[i] = w as u32;
            i = if self.rep[i].is_some() { self.end[i] as usize } else { i + 1 };
            w += 1;
        }
        common.truncate(w);
        client.truncate(w);
        server.truncate(w);
        for c in common.iter_mut() {
            if let pmf::CubeKind::Parent(p) = &mut c.kind {
                for slot in p.children.iter_mut().flatten() {
                    *slot = pmf::ChildIndex::new(map[slot.get() as usize]).expect("a child is never the root");
                }
            }
        }
        // Lists shared by many cells are mapped once (keyed by address, the original kept alive).
        type Shared = Arc<[u32]>;
        let mut mapped: HashMap<usize, (Shared, Shared)> = HashMap::new();
        for v in common.iter_mut().filter_map(|c| c.visibility.as_mut()) {
            if v.cubes.is_empty() {
                continue;
            }
            let (_, m) = mapped.entry(v.cubes.as_ptr() as usize).or_insert_with(|| {
                let m: Shared = v.cubes.iter().map(|&k| map[k as usize]).collect();
                (v.cubes.clone(), m)
            });
            v.cubes = m.clone();
        }
    }
}

/// Whether parent `i` carries no data of its own (a merged cube would lose it).
fn carries_nothing(chunk: &pmf::Chunk, i: usize) -> bool {
    let c = &chunk.common.cubes[i];
    !c.draw_backfaces
        && c.visibility.is_none()
        && chunk.client.cubes[i].lighting.is_none()
        && chunk.server.cubes[i].pathfinding.is_none()
}

/// Whether empty cubes `a` and `b` carry the same data.
fn same_data(chunk: &pmf::Chunk, a: usize, b: usize) -> bool {
    let (ca, cb) = (&chunk.common.cubes[a], &chunk.common.cubes[b]);
    let vis = match (&ca.visibility, &cb.visibility) {
        (None, None) => true,
        (Some(x), Some(y)) => {
            (Arc::ptr_eq(&x.cubes, &y.cubes) || x.cubes == y.cubes)
                && (Arc::ptr_eq(&x.chunks, &y.chunks) || x.chunks == y.chunks)
        }
        _ => false,
    };
    vis && ca.draw_backfaces == cb.draw_backfaces
        && ca.kind == cb.kind
        && chunk.client.cubes[a] == chunk.client.cubes[b]
        && chunk.server.cubes[a] == chunk.server.cubes[b]
}

/// `chunk` with its uniform air merged ([`merge_plan`], [`MergePlan::apply`]), in place.
pub fn merge_uniform_air(chunk: &mut pmf::Chunk) {
    if let Some(plan) = merge_plan(chunk) {
        plan.apply(chunk);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A leaf of a generated chunk.
    #[derive(Debug, Clone, Copy)]
    enum Leaf {
        /// Air with light colour `0..` (0 = none) and a path attribute or not.
        Air(u8, bool),
        Solid,
    }

    /// A generated octree: a leaf, or eight children in bit order.
    #[derive(Debug, Clone)]
    enum Node {
        Leaf(Leaf),
        Parent(Box<[Node; 8]>),
    }

    fn node(depth: u32) -> BoxedStrategy<Node> {
        let leaf = prop_oneof![
            3 => (0u8..2, prop::bool::weighted(0.1)).prop_map(|(l, p)| Node::Leaf(Leaf::Air(l, p))),
            1 => Just(Node::Leaf(Leaf::Solid)),
        ];
        if depth == 0 {
            return leaf.boxed();
        }
        prop_oneof![
            1 => leaf,
            3 => prop::array::uniform8(node(depth - 1)).prop_map(|k| Node::Parent(Box::new(k))),
        ]
        .boxed()
    }

    /// The records of `tree` in pre-order; air cells carry visibility lists naming every solid
    /// cube of the chunk (one list shared by all, as the compiler shares them) when `vis`.
    fn chunk_of(tree: &Node, vis: bool) -> pmf::Chunk {
        let mut chunk = pmf::Chunk::default();
        chunk.common.cubes.clear();
        chunk.client.cubes.clear();
        chunk.server.cubes.clear();
        fn push(n: &Node, c: &mut pmf::Chunk) -> u32 {
            let at = c.common.cubes.len() as u32;
            let (kind, lighting, path) = match n {
                Node::Parent(_) => (pmf::CubeKind::Parent(pmf::ParentCube::default()), None, None),
                Node::Leaf(Leaf::Solid) => (pmf::CubeKind::Geometry(pmf::GeometryCube::default()), None, None),
                Node::Leaf(Leaf::Air(l, p)) => (
                    pmf::CubeKind::Empty,
                    (*l > 0).then(|| pmf::CubeLighting::from_base([*l * 40; 3])),
                    p.then(|| Box::from([pmf::PathAttribute { name: "walk".into(), direction: [0.0; 3] }])),
                ),
            };
            c.common.cubes.push(pmf::Cube { kind, ..Default::default() });
            c.client.cubes.push(pmf::ClientCube { lighting, ..Default::default() });
            c.server.cubes.push(pmf::ServerCube { pathfinding: path });
            if let Node::Parent(kids) = n {
                let mut idx = [None; 8];
                for (bit, k) in kids.iter().enumerate() {
                    idx[bit] = Some(push(k, c));
                }
                c.common.cubes[at as usize].kind = pmf::CubeKind::Parent(pmf::ParentCube::from_indices(idx).unwrap());
            }
            at
        }
        push(tree, &mut chunk);
        if vis {
            let solid: Arc<[u32]> = (0..chunk.common.cubes.len() as u32)
                .filter(|&i| matches!(chunk.common.cubes[i as usize].kind, pmf::CubeKind::Geometry(_)))
                .collect();
            let list = pmf::Visibility { cubes: solid, chunks: Arc::from([]) };
            for c in &mut chunk.common.cubes {
                if c.kind == pmf::CubeKind::Empty {
                    c.visibility = Some(Box::new(list.clone()));
                }
            }
        }
        chunk
    }

    /// Chunk edge 2^3 map units, cells down to 1 unit: the centre of every unit cell.
    fn points() -> impl Iterator<Item = [f64; 3]> {
        (0..512).map(|i| [(i % 8) as f64 - 3.5, ((i / 8) % 8) as f64 - 3.5, (i / 64) as f64 - 3.5])
    }

    /// A leaf's type, light, pathfinding and lists (as the boxes of the cubes they name).
    type Seen = (u8, Option<pmf::CubeLighting>, pmf::ServerCube, Option<Vec<[i64; 4]>>);

    /// What an engine finds at each point.
    fn seen(c: &pmf::Chunk) -> Vec<Seen> {
        let leaves: Vec<pmf::LeafAt> = points().map(|p| pmf::leaf_at(&c.common.cubes, 3, p).unwrap()).collect();
        // The box of each cube a point finds.
        let boxes: HashMap<u32, [i64; 4]> = leaves
            .iter()
            .map(|l| (l.index, [l.min[0] as i64, l.min[1] as i64, l.min[2] as i64, l.edge as i64]))
            .collect();
        leaves
            .iter()
            .map(|leaf| {
                let i = leaf.index as usize;
                let listed = c.common.cubes[i].visibility.as_ref().map(|v| v.cubes.iter().map(|k| boxes[k]).collect());
                (
                    c.common.cubes[i].kind.type_id(),
                    c.client.cubes[i].lighting.clone(),
                    c.server.cubes[i].clone(),
                    listed,
                )
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
        /// Every point of the chunk finds the same data before and after; no parent of eight
        /// leaves with the same data is left; merging again changes nothing; the file reads back.
        #[test]
        fn merging_keeps_what_every_point_finds(tree in node(3), vis in any::<bool>()) {
            let before = chunk_of(&tree, vis);
            let mut after = before.clone();
            merge_uniform_air(&mut after);
            prop_assert!(after.common.cubes.len() <= before.common.cubes.len());
            prop_assert_eq!(after.client.cubes.len(), after.common.cubes.len());
            prop_assert_eq!(after.server.cubes.len(), after.common.cubes.len());
            prop_assert_eq!(seen(&before), seen(&after));
            prop_assert!(merge_plan(&after).is_none(), "nothing left to merge");
            // Pre-order, children in bit order: each parent's children ascend, after it.
            for (i, c) in after.common.cubes.iter().enumerate() {
                if let pmf::CubeKind::Parent(p) = &c.kind {
                    let kids: Vec<u32> = p.present().collect();
                    prop_assert_eq!(kids.len(), 8);
                    prop_assert!(kids[0] as usize == i + 1 && kids.windows(2).all(|w| w[0] < w[1]));
                }
            }
        }
    }

    /// A parent of eight cells with the same light becomes one cell; one cell lit differently
    /// keeps its parent; a list's cube indices follow the cubes they named.
    #[test]
    fn eight_cells_alike_become_one_and_lists_follow() {
        let lit = |l| Node::Leaf(Leaf::Air(l, false));
        let alike = Node::Parent(Box::new(std::array::from_fn(|_| lit(1))));
        let odd = Node::Parent(Box::new(std::array::from_fn(|k| lit(if k == 3 { 0 } else { 1 }))));
        let mut kids: [Node; 8] = std::array::from_fn(|_| lit(1));
        kids[0] = alike;
        kids[1] = odd;
        kids[7] = Node::Leaf(Leaf::Solid);
        let before = chunk_of(&Node::Parent(Box::new(kids)), true);
        // Root, 9 + 9 for the two parents, 6 leaves.
        assert_eq!(before.common.cubes.len(), 1 + 9 + 9 + 6);
        let solid_before = before.common.cubes.iter().position(|c| c.kind.type_id() == 2).unwrap() as u32;
        assert_eq!(solid_before, 24);
        let mut after = before.clone();
        merge_uniform_air(&mut after);
        assert_eq!(after.common.cubes.len(), 1 + 1 + 9 + 6);
        assert_eq!(after.common.cubes[1].kind, pmf::CubeKind::Empty, "the alike parent is one cell");
        assert_eq!(after.client.cubes[1].lighting, before.client.cubes[2].lighting);
        assert!(matches!(after.common.cubes[2].kind, pmf::CubeKind::Parent(_)), "the odd parent stays");
        let list = &after.common.cubes[1].visibility.as_ref().unwrap().cubes;
        assert_eq!(&**list, &[16], "the solid cube's new index");
        assert_eq!(after.common.cubes[16].kind.type_id(), 2);
        // The root's eight air children with the same light do not merge with a solid sibling.
        assert!(matches!(after.common.cubes[0].kind, pmf::CubeKind::Parent(_)));
    }

    /// An array not in pre-order (another writer's; the reader accepts any order) is left alone,
    /// as is one with a child index past its end.
    #[test]
    fn arrays_out_of_pre_order_are_left_alone() {
        let alike = Node::Parent(Box::new(std::array::from_fn(|_| Node::Leaf(Leaf::Air(1, false)))));
        let chunk = chunk_of(&alike, false);
        assert!(merge_plan(&chunk).is_some());
        let mut swapped = chunk.clone();
        let pmf::CubeKind::Parent(p) = &mut swapped.common.cubes[0].kind else { unreachable!() };
        p.children.swap(0, 1);
        assert!(merge_plan(&swapped).is_none());
        let mut past = chunk.clone();
        let pmf::CubeKind::Parent(p) = &mut past.common.cubes[0].kind else { unreachable!() };
        p.children[7] = pmf::ChildIndex::new(99);
        assert!(merge_plan(&past).is_none());
        let mut short = chunk;
        short.client.cubes.pop();
        assert!(merge_plan(&short).is_none());
    }

    /// Lists naming cubes by explicit chunk records (which our compiler never writes) keep the
    /// chunk as it was.
    #[test]
    fn explicit_chunk_records_leave_the_chunk_alone() {
        let alike = Node::Parent(Box::new(std::array::from_fn(|_| Node::Leaf(Leaf::Air(1, false)))));
        let mut chunk = chunk_of(&alike, false);
        assert!(merge_plan(&chunk).is_some());
        chunk.common.cubes[1].visibility = Some(Box::new(pmf::Visibility {
            cubes: Arc::from([]),
            chunks: Arc::from([pmf::VisibleChunk { chunk: pmf::ChunkIndex { y: 0, x: 0, z: 0 }, cubes: vec![0] }]),
        }));
        assert!(merge_plan(&chunk).is_none());
    }
}
