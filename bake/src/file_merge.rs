//! Cubes merged for the file: uniform air (docs/spec/PMF-NOTES.md C4b, *Air cells with the same
//! data*) and buried solid (C4c, *Buried geometry*).
//!
//! The layout cuts air into cells of one size ([`crate::layout`]) so that lighting, visibility
//! and pathfinding have somewhere to live; the bake then gives every cell its data. Where the
//! eight cells under one parent came out carrying exactly the same data (flags, lighting,
//! visibility lists, pathfinding attributes), the parent and its cells say nothing the single
//! cell does not: every point of the parent gets that data either way. The file holds such a
//! parent as one empty cube carrying the data, recursively (a parent of eight merged parents
//! merges again), so it holds one record where it held nine and the parent's eight child
//! indices. On open ground most air above the surface is lit alike and lists nothing.
//!
//! Below ground most geometry is *buried*: plain geometry cubes with no visible face (the mesher
//! culled all six, G4), nothing on them but their materials. Where a parent's eight children are
//! all buried (or merged buried parents), the file holds one geometry cube in its place: the same
//! solid volume, no face, and the materials of the child whose materials are most common among
//! the eight (ties: the first in bit order). Nothing an engine draws, touches or hears changes: a
//! buried cube has no face to draw, and every cube around it is solid geometry whose faces towards
//! it were culled, so nothing reaches it; a neighbour's face stays culled against the merged cube
//! as it was against the children (a mix of materials is only ever buried when they are all
//! opaque: a clear material's face is culled by the same material only, so a buried clear cube
//! has only its own material around it). On `terrain(32,4,32)` 582 127 of the 760 967 plain
//! geometry cubes are buried.
//!
//! [`merge_plan`] finds both kinds in one backward pass and [`MergePlan::apply`] merges them.
//! This is the last step from a bake's record to the file's ([`crate::compile`]): the bakes, the
//! editor and the rebuild engine keep the layout's cubes (their far lists are rewritten per cell
//! index), and every path that writes a file goes through it, so incremental and full exports
//! write the same bytes. The cube array stays in pre-order, children in bit order (C1); indices
//! after a merged parent move down, and the visibility lists' "other visible cube" indices are
//! mapped to the new ones: a list naming a buried cube (our lists name the cubes touching a
//! cell's air through non-occluders, such as the stone under a slope) names the merged cube that
//! now fills its place. The records move in place, no copy: a bake's array is in that pre-order,
//! each subtree one run of it. A chunk that is not, whose lists name a cube inside merged air, or
//! whose lists name cubes by explicit chunk records (our compiler writes none: far chunks are
//! listed whole, V1) is left as it is, so no index can go stale.

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

/// What a cube is to the merge: the leaf whose records stand for it, and which kind it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Merged {
    /// Neither an empty leaf nor buried, nor a parent merged as one.
    No,
    /// An empty leaf, or a parent merged as the empty leaf `.0`.
    Air(u32),
    /// A buried geometry leaf, or a parent merged as the buried leaf `.0`.
    Buried(u32),
}

impl Merged {
    /// The leaf whose records stand for the cube, if it merges or is a leaf that can.
    fn leaf(self) -> Option<u32> {
        match self {
            Merged::Air(l) | Merged::Buried(l) => Some(l),
            Merged::No => None,
        }
    }
}

/// The parents of `chunk` whose leaves are all empty cubes carrying the same data, or all
/// buried geometry, if any and if the chunk can be merged (see the [module
/// documentation](self)); `None` otherwise.
pub fn merge_plan(chunk: &pmf::Chunk) -> Option<MergePlan> {
    let common = &chunk.common.cubes;
    let n = common.len();
    if n == 0 || chunk.client.cubes.len() != n || chunk.server.cubes.len() != n || u32::try_from(n).is_err() {
        return None;
    }
    // Children before parents: backwards through the array, which must be in pre-order with
    // children in bit order: a parent's first child right after it, each next child where the
    // previous one's subtree ends, the root's subtree the whole array.
    let mut what: Vec<Merged> = vec![Merged::No; n];
    let mut rep: Vec<Option<u32>> = vec![None; n];
    let mut end: Vec<u32> = (1..=n as u32).collect();
    let mut any = false;
    for i in (0..n).rev() {
        let p = match &common[i].kind {
            pmf::CubeKind::Empty => {
                what[i] = Merged::Air(i as u32);
                continue;
            }
            pmf::CubeKind::Geometry(_) => {
                if is_buried(chunk, i) {
                    what[i] = Merged::Buried(i as u32);
                }
                continue;
            }
            pmf::CubeKind::ExtGeometry(_) => continue,
            pmf::CubeKind::Parent(p) => p,
        };
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
        let kids: [Merged; 8] = std::array::from_fn(|b| p.children[b].map_or(Merged::No, |k| what[k.get() as usize]));
        let merged = match kids[0] {
            Merged::Air(first) => kids[1..]
                .iter()
                .all(|k| matches!(*k, Merged::Air(l) if same_data(chunk, first as usize, l as usize)))
                .then_some(Merged::Air(first)),
            Merged::Buried(_) => {
                let leaves: Option<Vec<u32>> =
                    kids.iter().map(|k| if let Merged::Buried(l) = *k { Some(l) } else { None }).collect();
                leaves.map(|l| Merged::Buried(most_common_materials(chunk, &l)))
            }
            Merged::No => None,
        };
        if let Some(m) = merged {
            what[i] = m;
            rep[i] = m.leaf();
            any = true;
        }
    }
    if !any || end[0] as usize != n {
        return None;
    }
    // Cubes inside merged air (not the merged parents themselves) go away; no list may name one.
    let mut gone_air = vec![false; n];
    let mut i = 0;
    while i < n {
        if rep[i].is_some() {
            if matches!(what[i], Merged::Air(_)) {
                gone_air[i + 1..end[i] as usize].fill(true);
            }
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
        if v.cubes.iter().any(|&k| gone_air.get(k as usize).is_none_or(|&g| g)) {
            return None;
        }
        checked.insert(key);
    }
    Some(MergePlan { rep, end })
}

/// Whether cube `i` is buried geometry: a plain geometry cube with no face (the mesher culled
/// all six), carrying nothing else.
fn is_buried(chunk: &pmf::Chunk, i: usize) -> bool {
    matches!(chunk.client.cubes[i].geometry, pmf::ClientGeometry::Geometry(g) if g.faces == 0)
        && carries_nothing(chunk, i)
}

/// Of the buried leaves `leaves` (a parent's eight children, in bit order), the first whose
/// materials (drawn, physics, sound) are the most common among them.
fn most_common_materials(chunk: &pmf::Chunk, leaves: &[u32]) -> u32 {
    let materials = |l: u32| match &chunk.common.cubes[l as usize].kind {
        pmf::CubeKind::Geometry(g) => (g.material, g.physics_material, g.sound_material),
        _ => unreachable!("a buried leaf is plain geometry"),
    };
    let count = |l: u32| leaves.iter().filter(|&&o| materials(o) == materials(l)).count();
    // `max_by_key` keeps the last of equals: go backwards so the first in bit order wins.
    leaves.iter().rev().copied().max_by_key(|&l| count(l)).expect("eight leaves")
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
            // Every cube of a merged subtree is now the merged cube (a list may name a buried one).
            let next = if self.rep[i].is_some() { self.end[i] as usize } else { i + 1 };
            map[i..next].fill(w as u32);
            i = next;
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
                // `map` never decreases along the array, so the mapped list stays ascending; the
                // buried cubes of one merged cube become one entry.
                let mut m: Vec<u32> = v.cubes.iter().map(|&k| map[k as usize]).collect();
                m.dedup();
                let m: Shared = m.into();
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

/// `chunk` with its uniform air and buried geometry merged ([`merge_plan`],
/// [`MergePlan::apply`]), in place.
pub fn merge_for_file(chunk: &mut pmf::Chunk) {
    if let Some(plan) = merge_plan(chunk) {
        plan.apply(chunk);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A geometry cube's drawn, physics and sound materials.
    type Materials = (u8, u8, u8);

    /// A leaf of a generated chunk.
    #[derive(Debug, Clone, Copy)]
    enum Leaf {
        /// Air with light colour `0..` (0 = none) and a path attribute or not.
        Air(u8, bool),
        /// Geometry with a face drawn.
        Solid,
        /// Geometry without a face, of material `.0` (physics and sound material alike).
        Buried(u8),
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
            2 => (0u8..3).prop_map(|m| Node::Leaf(Leaf::Buried(m))),
        ];
        if depth == 0 {
            return leaf.boxed();
        }
        // Parents of eight leaves alike, and of eight buried leaves of any materials, are
        // generated on purpose: eight random leaves are almost never all mergeable.
        let buried = prop::array::uniform8(0u8..3).prop_map(|m| m.map(|m| Node::Leaf(Leaf::Buried(m))));
        prop_oneof![
            2 => leaf.clone(),
            4 => prop::array::uniform8(node(depth - 1)).prop_map(|k| Node::Parent(Box::new(k))),
            1 => buried.prop_map(|k| Node::Parent(Box::new(k))),
            1 => leaf.prop_map(|l| Node::Parent(Box::new(std::array::from_fn(|_| l.clone())))),
        ]
        .boxed()
    }

    /// The records of `tree` in pre-order; air cells carry visibility lists naming every
    /// geometry cube of the chunk (one list shared by all, as the compiler shares them) when `vis`.
    fn chunk_of(tree: &Node, vis: bool) -> pmf::Chunk {
        let mut chunk = pmf::Chunk::default();
        chunk.common.cubes.clear();
        chunk.client.cubes.clear();
        chunk.server.cubes.clear();
        fn push(n: &Node, c: &mut pmf::Chunk) -> u32 {
            let at = c.common.cubes.len() as u32;
            let faces = |faces, m| {
                let g = pmf::GeometryCube { material: m, physics_material: m, sound_material: m };
                let client = pmf::ClientGeometryCube { lightmap: 0, first_vertex: 0, faces };
                (g, pmf::ClientGeometry::Geometry(client))
            };
            let (geometry, client) = match n {
                Node::Leaf(Leaf::Solid) => faces(0b10, 0),
                Node::Leaf(Leaf::Buried(m)) => faces(0, *m),
                _ => (pmf::GeometryCube::default(), pmf::ClientGeometry::None),
            };
            let (kind, lighting, path) = match n {
                Node::Parent(_) => (pmf::CubeKind::Parent(pmf::ParentCube::default()), None, None),
                Node::Leaf(Leaf::Solid | Leaf::Buried(_)) => (pmf::CubeKind::Geometry(geometry), None, None),
                Node::Leaf(Leaf::Air(l, p)) => (
                    pmf::CubeKind::Empty,
                    (*l > 0).then(|| pmf::CubeLighting::from_base([*l * 40; 3])),
                    p.then(|| Box::from([pmf::PathAttribute { name: "walk".into(), direction: [0.0; 3] }])),
                ),
            };
            c.common.cubes.push(pmf::Cube { kind, ..Default::default() });
            c.client.cubes.push(pmf::ClientCube { lighting, geometry: client });
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

    /// A leaf's type, light, pathfinding, records if it draws a face, and lists (as the boxes of
    /// the cubes with a face they name).
    type Seen = (
        u8,
        Option<pmf::CubeLighting>,
        pmf::ServerCube,
        Option<(pmf::CubeKind, pmf::ClientGeometry)>,
        Option<Vec<[i64; 4]>>,
    );

    /// Whether cube `i` draws a face.
    fn drawn(c: &pmf::Chunk, i: usize) -> bool {
        matches!(c.client.cubes[i].geometry, pmf::ClientGeometry::Geometry(g) if g.faces != 0)
    }

    /// The leaf each point finds, and the box of each cube found.
    fn leaves(c: &pmf::Chunk) -> (Vec<pmf::LeafAt>, HashMap<u32, [i64; 4]>) {
        let leaves: Vec<pmf::LeafAt> = points().map(|p| pmf::leaf_at(&c.common.cubes, 3, p).unwrap()).collect();
        let boxes = leaves
            .iter()
            .map(|l| (l.index, [l.min[0] as i64, l.min[1] as i64, l.min[2] as i64, l.edge as i64]))
            .collect();
        (leaves, boxes)
    }

    /// What an engine finds at each point.
    fn seen(c: &pmf::Chunk) -> Vec<Seen> {
        let (leaves, boxes) = leaves(c);
        leaves
            .iter()
            .map(|leaf| {
                let i = leaf.index as usize;
                let listed = c.common.cubes[i]
                    .visibility
                    .as_ref()
                    .map(|v| v.cubes.iter().filter(|&&k| drawn(c, k as usize)).map(|k| boxes[k]).collect());
                let records = drawn(c, i).then(|| (c.common.cubes[i].kind.clone(), c.client.cubes[i].geometry.clone()));
                (
                    c.common.cubes[i].kind.type_id(),
                    c.client.cubes[i].lighting.clone(),
                    c.server.cubes[i].clone(),
                    records,
                    listed,
                )
            })
            .collect()
    }

    /// Per point: whether it lies in a listed cube without a face (of the list all cells share).
    fn in_listed_buried(c: &pmf::Chunk) -> Vec<bool> {
        let (leaves, _) = leaves(c);
        let list = c.common.cubes.iter().find_map(|cube| cube.visibility.as_ref()).map(|v| v.cubes.clone());
        leaves
            .iter()
            .map(|l| {
                list.as_ref().is_some_and(|list| list.contains(&l.index))
                    && !drawn(c, l.index as usize)
                    && c.common.cubes[l.index as usize].kind.type_id() == 2
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
            merge_for_file(&mut after);
            prop_assert!(after.common.cubes.len() <= before.common.cubes.len());
            prop_assert_eq!(after.client.cubes.len(), after.common.cubes.len());
            prop_assert_eq!(after.server.cubes.len(), after.common.cubes.len());
            prop_assert_eq!(seen(&before), seen(&after));
            // A list naming a buried cube names the merged cube in its place; lists stay
            // ascending without repeats.
            for (b, a) in in_listed_buried(&before).into_iter().zip(in_listed_buried(&after)) {
                prop_assert!(!b || a, "a buried cube listed before is covered by a listed cube after");
            }
            for v in after.common.cubes.iter().filter_map(|c| c.visibility.as_ref()) {
                prop_assert!(v.cubes.windows(2).all(|w| w[0] < w[1]));
            }
            // A cube without a face takes the materials of one of the cubes it stands for.
            let material = |c: &pmf::Chunk, i: u32| match &c.common.cubes[i as usize].kind {
                pmf::CubeKind::Geometry(g) => Some((g.material, g.physics_material, g.sound_material)),
                _ => None,
            };
            let mut replaced: HashMap<u32, Vec<Option<Materials>>> = HashMap::new();
            for (b, a) in leaves(&before).0.iter().zip(&leaves(&after).0) {
                replaced.entry(a.index).or_default().push(material(&before, b.index));
            }
            for (a, was) in &replaced {
                if material(&after, *a).is_some() && !drawn(&after, *a as usize) {
                    prop_assert!(was.contains(&material(&after, *a)), "cube {} takes one of its leaves' materials", a);
                }
            }
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
        merge_for_file(&mut after);
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

    /// Eight buried cubes become one geometry cube with the materials most of them have (ties:
    /// the first in bit order), recursively; a list naming buried cubes names the merged cube
    /// once; a parent with one cube that draws a face stays.
    #[test]
    fn buried_cubes_become_one_with_the_most_common_materials() {
        let buried = |ms: [u8; 8]| Node::Parent(Box::new(ms.map(|m| Node::Leaf(Leaf::Buried(m)))));
        let mut kids: [Node; 8] = std::array::from_fn(|_| buried([2, 1, 1, 2, 0, 1, 2, 0]));
        kids[5] = buried([0; 8]);
        let inner = Node::Parent(Box::new(kids));
        let mut with_face: [Node; 8] = std::array::from_fn(|_| Node::Leaf(Leaf::Buried(1)));
        with_face[6] = Node::Leaf(Leaf::Solid);
        let root = Node::Parent(Box::new([
            inner,
            buried([2, 1, 0, 0, 1, 2, 2, 1]),
            Node::Parent(Box::new(with_face)),
            Node::Leaf(Leaf::Air(1, false)),
            Node::Leaf(Leaf::Air(1, false)),
            Node::Leaf(Leaf::Solid),
            Node::Leaf(Leaf::Air(0, false)),
            Node::Leaf(Leaf::Air(1, false)),
        ]));
        let before = chunk_of(&root, true);
        let mut after = before.clone();
        merge_for_file(&mut after);
        let material = |i: usize| match &after.common.cubes[i].kind {
            pmf::CubeKind::Geometry(g) => (g.material, g.physics_material, g.sound_material),
            k => panic!("cube {i} is {k:?}"),
        };
        // The inner parent: seven children whose leaves have 2 and 1 three times each (2 comes
        // first: theirs is 2) and one all 0, so 2 is the most common of the eight choices.
        assert_eq!(material(1), (2, 2, 2), "the inner parent of 73 cubes is one");
        // 1 and 2 tie at three, 0 has two: 2 comes first in bit order.
        assert_eq!(material(2), (2, 2, 2));
        assert!(matches!(after.common.cubes[3].kind, pmf::CubeKind::Parent(_)), "a cube with a face keeps its parent");
        assert_eq!(after.common.cubes.len(), 1 + 1 + 1 + 9 + 5);
        let list = &after.common.cubes.iter().find_map(|c| c.visibility.as_ref()).unwrap().cubes;
        // The two merged cubes once each, the parent's eight leaves, the root's solid leaf.
        assert_eq!(&**list, &[1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 14]);
        assert_eq!(seen(&before), seen(&after));
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
