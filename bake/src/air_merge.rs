//! Uniform air merged for the file (docs/spec/PMF-NOTES.md C4b, *Air cells with the same data*).
//!
//! The layout cuts air into cells of one size ([`crate::layout`]) so that lighting, visibility
//! and pathfinding have somewhere to live; the bake then gives every cell its data. Where the
//! eight cells under one parent came out carrying exactly the same data (flags, lighting,
//! visibility lists, pathfinding attributes), the parent and its cells say nothing the single
//! cell does not: every point of the parent gets that data either way. [`merged_cubes`] writes
//! such a parent as one empty cube carrying the data, recursively (a parent of eight merged
//! parents merges again), so a file holds one record where it held nine and the parent's eight
//! child indices. On open ground most air above the surface is lit alike and lists nothing.
//!
//! This is the last step from a bake's record to the file's ([`crate::compile`]): the bakes, the
//! editor and the rebuild engine keep the layout's cells (their far lists are rewritten per cell
//! index), and every path that writes a file goes through it, so incremental and full exports
//! write the same bytes. The cube array stays in pre-order, children in bit order (C1); indices
//! after a merged parent move down, and the visibility lists' "other visible cube" indices are
//! mapped to the new ones (they name geometry cubes, never merged). A chunk whose lists name
//! cubes that would move by explicit chunk records (our compiler writes none: far chunks are
//! listed whole, V1) is left as it is, so no index can go stale.

use std::collections::HashMap;
use std::sync::Arc;

use pmfedit_core::format::pmf;

/// The cube arrays (common, client, server) of `chunk` with every parent whose leaves are all
/// empty cubes carrying the same data written as one such cube; `None` when no parent merges (or
/// the chunk names its own cubes by explicit chunk records, which are left alone). See the
/// [module documentation](self).
pub fn merged_cubes(chunk: &pmf::Chunk) -> Option<(Vec<pmf::Cube>, Vec<pmf::ClientCube>, Vec<pmf::ServerCube>)> {
    let (common, client, server) = (&chunk.common.cubes, &chunk.client.cubes, &chunk.server.cubes);
    let n = common.len();
    if client.len() != n || server.len() != n {
        return None;
    }
    if common.iter().any(|c| c.visibility.as_ref().is_some_and(|v| v.chunks.iter().any(|vc| !vc.cubes.is_empty()))) {
        return None;
    }
    let rep = uniform_parents(chunk)?;
    // Pre-order, children in bit order: a stack of (old index, new parent index and bit).
    let mut out: (Vec<pmf::Cube>, Vec<pmf::ClientCube>, Vec<pmf::ServerCube>) =
        (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    let mut map: Vec<Option<u32>> = vec![None; n];
    let mut stack: Vec<(u32, Option<(usize, usize)>)> = vec![(0, None)];
    while let Some((old, parent)) = stack.pop() {
        let new = out.0.len();
        if let Some((p, bit)) = parent {
            let pmf::CubeKind::Parent(pc) = &mut out.0[p].kind else { unreachable!("a parent record was pushed") };
            pc.children[bit] = pmf::ChildIndex::new(new as u32);
        }
        let from = rep[old as usize].unwrap_or(old) as usize;
        out.0.push(common[from].clone());
        out.1.push(client[from].clone());
        out.2.push(server[from].clone());
        if rep[old as usize].is_some() {
            continue;
        }
        map[old as usize] = Some(new as u32);
        if let pmf::CubeKind::Parent(pc) = &common[old as usize].kind {
            let kids = pc.indices();
            if let pmf::CubeKind::Parent(np) = &mut out.0[new].kind {
                np.children = [None; 8];
            }
            for bit in (0..8).rev() {
                if let Some(k) = kids[bit] {
                    stack.push((k, Some((new, bit))));
                }
            }
        }
    }
    // Lists shared by many cells are mapped once (keyed by address, the original kept alive).
    type Shared = Arc<[u32]>;
    let mut mapped: HashMap<usize, (Shared, Shared)> = HashMap::new();
    for cube in &mut out.0 {
        let Some(v) = &mut cube.visibility else { continue };
        if v.cubes.is_empty() {
            continue;
        }
        let key = v.cubes.as_ptr() as usize;
        if let Some((_, m)) = mapped.get(&key) {
            v.cubes = m.clone();
            continue;
        }
        let m: Option<Arc<[u32]>> = v.cubes.iter().map(|&k| map.get(k as usize).copied().flatten()).collect();
        // A list naming a cube that merged away (only air merges; lists name geometry): keep the
        // chunk as it was rather than guess.
        let m = m?;
        mapped.insert(key, (v.cubes.clone(), m.clone()));
        v.cubes = m;
    }
    Some(out)
}

/// Per cube: for a parent that merges, the leaf whose records stand for it; `None` otherwise.
/// `None` overall when no parent merges or the array is not a tree reachable from the root.
fn uniform_parents(chunk: &pmf::Chunk) -> Option<Vec<Option<u32>>> {
    let common = &chunk.common.cubes;
    let n = common.len();
    // Post-order over the tree from the root: children are settled before their parent.
    let mut order = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    let mut stack = vec![0u32];
    while let Some(i) = stack.pop() {
        let slot = seen.get_mut(i as usize)?;
        if std::mem::replace(slot, true) {
            return None;
        }
        order.push(i);
        if let pmf::CubeKind::Parent(p) = &common[i as usize].kind {
            stack.extend(p.present());
        }
    }
    // `order` is a pre-order (parents first); walked backwards, children come first.
    let mut rep: Vec<Option<u32>> = vec![None; n];
    let mut any = false;
    for &i in order.iter().rev() {
        let i = i as usize;
        match &common[i].kind {
            pmf::CubeKind::Empty => rep[i] = Some(i as u32),
            pmf::CubeKind::Parent(p) if p.children.iter().all(Option::is_some) && carries_nothing(chunk, i) => {
                let mut leaves = p.present().map(|k| rep[k as usize]);
                let Some(Some(first)) = leaves.next() else { continue };
                if leaves.all(|l| l.is_some_and(|l| same_data(chunk, first as usize, l as usize))) {
                    rep[i] = Some(first);
                    any = true;
                }
            }
            _ => {}
        }
    }
    // Leaves stand for themselves: only merging parents keep a representative.
    for &i in &order {
        if matches!(common[i as usize].kind, pmf::CubeKind::Empty) {
            rep[i as usize] = None;
        }
    }
    any.then_some(rep)
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

/// `chunk` with its uniform air merged ([`merged_cubes`]), in place.
pub fn merge_uniform_air(chunk: &mut pmf::Chunk) {
    if let Some((common, client, server)) = merged_cubes(chunk) {
        chunk.common.cubes = common;
        chunk.client.cubes = client;
        chunk.server.cubes = server;
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
            prop_assert!(merged_cubes(&after).is_none(), "nothing left to merge");
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

    /// Lists naming cubes by explicit chunk records (which our compiler never writes) keep the
    /// chunk as it was.
    #[test]
    fn explicit_chunk_records_leave_the_chunk_alone() {
        let alike = Node::Parent(Box::new(std::array::from_fn(|_| Node::Leaf(Leaf::Air(1, false)))));
        let mut chunk = chunk_of(&alike, false);
        assert!(merged_cubes(&chunk).is_some());
        chunk.common.cubes[1].visibility = Some(Box::new(pmf::Visibility {
            cubes: Arc::from([]),
            chunks: Arc::from([pmf::VisibleChunk { chunk: pmf::ChunkIndex { y: 0, x: 0, z: 0 }, cubes: vec![0] }]),
        }));
        assert!(merged_cubes(&chunk).is_none());
    }
}
