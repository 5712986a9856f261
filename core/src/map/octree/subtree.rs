//! Owned copies of part of an octree, for undo.

use std::fmt;
use std::hash::Hasher;

use glam::IVec3;

use super::{
    Cube, CubeAddr, ExtGeometry, Fnv64, LatticeBox, Node, NodeRef, Octree, OctreeError, TAG_EXTENDED, TAG_PARENT,
    decode_node, encode_leaf, hash_token,
};

/// An owned, compact, canonical copy of the cubes under one aligned cube `addr`.
///
/// Nodes are stored in pre-order (a parent is followed by its eight children's subtrees, PMF
/// bit order) in the same 10-byte packing as the octree, plus a side table for extended
/// geometry; a single leaf costs about 10 bytes plus the struct. Get one from
/// [`Octree::read_subtree`] or [`Subtree::leaf`]; write it with [`Octree::replace_region`].
#[derive(Clone)]
pub struct Subtree {
    addr: CubeAddr,
    nodes: Vec<Node>,
    ext: Vec<ExtGeometry>,
}

impl Subtree {
    /// A single leaf `cube` (normalized) at `addr`.
    pub fn leaf(addr: CubeAddr, cube: Cube) -> Subtree {
        let mut ext = Vec::new();
        let n = encode_leaf(&cube.normalized(), |e| {
            ext.push(e);
            (ext.len() - 1) as u32
        });
        Subtree { addr, nodes: vec![n], ext }
    }

    pub(super) fn from_octree(tree: &Octree, n: Node, addr: CubeAddr) -> Subtree {
        let mut s = Subtree { addr, nodes: Vec::new(), ext: Vec::new() };
        let mut stack = vec![n];
        while let Some(n) = stack.pop() {
            match n.tag {
                TAG_PARENT => {
                    s.nodes.push(Node::with_index(TAG_PARENT, 0));
                    stack.extend(tree.children(n).iter().rev());
                }
                TAG_EXTENDED => {
                    s.ext.push(tree.ext[n.index() as usize]);
                    let mut m = n;
                    m.d = Node::with_index(TAG_EXTENDED, (s.ext.len() - 1) as u32).d;
                    s.nodes.push(m);
                }
                _ => s.nodes.push(n),
            }
        }
        s.nodes.shrink_to_fit();
        s
    }

    /// Materializes the copy inside `tree`'s arena and returns its root node.
    pub(super) fn build_into(&self, tree: &mut Octree) -> Node {
        let mut pos = 0;
        self.build(tree, &mut pos)
    }

    fn build(&self, tree: &mut Octree, pos: &mut usize) -> Node {
        let n = self.nodes[*pos];
        *pos += 1;
        match n.tag {
            TAG_PARENT => {
                let b = tree.alloc_block([Node::default(); 8]);
                for i in 0..8 {
                    let k = self.build(tree, pos);
                    tree.blocks[b as usize][i] = k;
                }
                Node::with_index(TAG_PARENT, b)
            }
            TAG_EXTENDED => {
                let mut m = n;
                m.d = Node::with_index(TAG_EXTENDED, tree.alloc_ext(self.ext[n.index() as usize])).d;
                m
            }
            _ => n,
        }
    }

    /// The aligned cube this copy covers.
    pub fn addr(&self) -> CubeAddr {
        self.addr
    }

    /// Whether the copy is one leaf.
    pub fn is_leaf(&self) -> bool {
        self.nodes.len() == 1
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Every node in pre-order: `(addr, None)` for a parent, `(addr, Some(cube))` for a leaf.
    pub fn pre_order(&self) -> impl Iterator<Item = (CubeAddr, Option<Cube>)> + '_ {
        let mut addrs = vec![self.addr];
        self.nodes.iter().map(move |&n| {
            let a = addrs.pop().expect("pre-order shape");
            if n.tag == TAG_PARENT {
                addrs.extend((0..8).rev().map(|i| a.child(i)));
                (a, None)
            } else {
                (a, Some(decode_node(n, &self.ext)))
            }
        })
    }

    /// Every leaf with its address, in pre-order.
    pub fn leaves(&self) -> impl Iterator<Item = (CubeAddr, Cube)> + '_ {
        self.pre_order().filter_map(|(a, c)| c.map(|c| (a, c)))
    }

    /// Bytes of RAM held by this copy.
    pub fn memory_bytes(&self) -> usize {
        size_of::<Self>() + self.nodes.capacity() * size_of::<Node>() + self.ext.capacity() * size_of::<ExtGeometry>()
    }

    /// Stable FNV-1a hash of the address and the canonical pre-order content.
    pub fn content_hash(&self) -> u64 {
        let mut h = Fnv64::new();
        for v in self.addr.min.to_array() {
            h.write(&v.to_le_bytes());
        }
        h.write_u8(self.addr.size_log2);
        for (_, c) in self.pre_order() {
            hash_token(&mut h, c.as_ref());
        }
        h.finish()
    }
}

impl PartialEq for Subtree {
    fn eq(&self, other: &Self) -> bool {
        self.addr == other.addr && self.pre_order().eq(other.pre_order())
    }
}

impl Eq for Subtree {}

impl fmt::Debug for Subtree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subtree").field("addr", &self.addr).field("nodes", &self.nodes.len()).finish()
    }
}

/// Subtrees of an octree: what undo keeps and writes back.
impl Octree {
    /// An owned copy of the cubes at `addr`. If `addr` lies inside a bigger leaf with pushed
    /// corners, the copy is of that whole leaf (its [`Subtree::addr`] is the leaf's), because
    /// editing inside it resets those corners; writing the copy back restores them.
    pub fn read_subtree(&self, addr: CubeAddr) -> Result<Subtree, OctreeError> {
        self.check_addr(addr)?;
        let (n, a) = self.find(addr);
        if a == addr {
            return Ok(Subtree::from_octree(self, n, addr));
        }
        let c = self.decode(n);
        Ok(Subtree::leaf(if c.has_pushed_corners() { a } else { addr }, c))
    }

    /// Writes `new` at `new.addr()`, returning what was there (as [`read_subtree`] gives it)
    /// and the changed box. Writing the returned subtree back undoes the write exactly.
    ///
    /// [`read_subtree`]: Octree::read_subtree
    pub fn replace_region(&mut self, new: &Subtree) -> Result<(Subtree, Option<LatticeBox>), OctreeError> {
        let old = self.read_subtree(new.addr())?;
        if old == *new {
            return Ok((old, None));
        }
        self.write_at(NodeRef::Root, self.root_addr(), new);
        self.maybe_compact();
        let changed = old.addr().lattice_box();
        Ok((old, Some(changed)))
    }

    fn write_at(&mut self, r: NodeRef, a: CubeAddr, new: &Subtree) {
        if a == new.addr() {
            let old = self.node(r);
            self.free_node(old);
            let n = new.build_into(self);
            self.set_node(r, n);
            return;
        }
        if !self.node(r).is_parent() {
            self.split(r);
        }
        let i = a.child_index_of(new.addr().min);
        let b = self.node(r).index();
        self.write_at(NodeRef::Child(b, i), a.child(i), new);
        self.try_merge(r);
    }

    /// Copies of everything an edit confined to `region` can change: at most eight subtrees of
    /// about the region's size (each widened to a pushed-corner leaf holding it, nested copies
    /// dropped). Writing them back with [`replace_region`](Octree::replace_region) undoes any
    /// edit of `region`.
    pub fn capture(&self, region: LatticeBox) -> Vec<Subtree> {
        let region = region.intersection(&self.bounds());
        if region.is_empty() {
            return Vec::new();
        }
        let extent = (region.max - region.min).max_element() as u32;
        let s = (extent.next_power_of_two().trailing_zeros() as u8).min(self.size_log2);
        let lo = region.min >> i32::from(s);
        let hi = (region.max - IVec3::ONE) >> i32::from(s);
        let mut out: Vec<Subtree> = Vec::new();
        for y in lo.y..=hi.y {
            for x in lo.x..=hi.x {
                for z in lo.z..=hi.z {
                    let addr = CubeAddr { min: IVec3::new(x, y, z) << i32::from(s), size_log2: s };
                    let t = self.read_subtree(addr).expect("aligned and inside");
                    if !out.iter().any(|o| o.addr().contains_addr(&t.addr())) {
                        out.retain(|o| !t.addr().contains_addr(&o.addr()));
                        out.push(t);
                    }
                }
            }
        }
        out
    }
}
