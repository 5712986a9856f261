//! One chunk's cubes: a canonical sparse octree over the chunk lattice.
//!
//! # Model
//! An [`Octree`] covers the aligned cube `[0, 2^size_log2)³` of chunk-local lattice positions
//! (see [`coords`](crate::map::coords): one lattice unit is 1/8 map unit, so a chunk of
//! exponent `n` has `size_log2 = n + 3`). Every lattice cell lies in exactly one **leaf**, whose
//! value is a [`Cube`]: air, plain geometry or extended geometry, plus the per-leaf
//! `draw_backfaces` flag and [`PathAttrs`]. Inner nodes are parents with eight children in PMF
//! bit order (docs/spec/PMF-NOTES.md C2).
//!
//! # Canonical form
//! After every operation the tree is canonical: no parent has eight equal leaf children
//! (unless they have pushed corners, whose shape depends on their size), and every stored cube
//! is [normalized](Cube::normalized). Two trees with the same content are therefore
//! structurally identical: `==` and [`Octree::content_hash`] compare content.
//!
//! Content is "the cube of each lattice cell", plus, for cubes with pushed corners, which leaf
//! they belong to. Splitting a leaf with pushed corners (because an edit touches only part of it)
//! resets its corners: the eight children are full cubes with the same face materials.
//!
//! # Memory
//! Nodes are 10 bytes, stored in blocks of eight siblings (`Vec<[Node; 8]>` plus a free list);
//! a parent holds one `u32` block index. The 50-byte extended geometry lives in a side table
//! referenced by index, so plain geometry and air never pay for it. Merged uniform regions are a
//! single node, so big terrain costs far less than one byte per solid lattice cell.
//!
//! # Change reports
//! Mutating operations return the lattice box (chunk-local) of the cubes whose content changed,
//! or `None` when nothing changed.

mod cube;
pub mod raycast;
pub mod subtree;
#[cfg(test)]
mod tests;

use std::fmt;
use std::hash::{Hash, Hasher};

use glam::IVec3;

pub use self::cube::{CORNER_STEPS, Cube, CubeKind, ExtGeometry, Geometry};
use crate::map::coords::MAX_CHUNK_LATTICE_LOG2;
pub use crate::map::coords::{CubeAddr, Face, LatticeBox};
pub use crate::map::ids::{MaterialId, PathAttrs, PhysicsId, SoundId};

const TAG_EMPTY: u8 = 0;
const TAG_PARENT: u8 = 1;
const TAG_GEOMETRY: u8 = 2;
const TAG_EXTENDED: u8 = 3;

/// A packed node: 10 bytes. `d` holds the geometry ids, or a `u32` index (block of children
/// for a parent, side-table slot for extended geometry) in `d[0]` (low) and `d[1]` (high).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Node {
    tag: u8,
    backfaces: bool,
    path: u16,
    d: [u16; 3],
}

impl Node {
    fn with_index(tag: u8, i: u32) -> Node {
        Node { tag, backfaces: false, path: 0, d: [i as u16, (i >> 16) as u16, 0] }
    }

    fn index(self) -> u32 {
        u32::from(self.d[0]) | (u32::from(self.d[1]) << 16)
    }

    fn is_parent(self) -> bool {
        self.tag == TAG_PARENT
    }
}

/// A build from a pre-order stopped; the error is kept aside ([`Octree::from_pre_order_into`]).
struct Halt;

/// Where a node lives: the root, or slot `i` of block `b`.
#[derive(Debug, Clone, Copy)]
enum NodeRef {
    Root,
    Child(u32, usize),
}

/// Errors of octree operations; nothing is changed when one is returned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OctreeError {
    #[error("cube {0:?} is not aligned to its edge")]
    Misaligned(CubeAddr),
    #[error("cube {addr:?} lies outside the octree of edge {edge}")]
    OutOfBounds { addr: CubeAddr, edge: i32 },
    #[error("cube {0:?} is subdivided; corners can only be pushed on a leaf")]
    NotALeaf(CubeAddr),
    #[error("corner index {0} is not in 0..8")]
    BadCorner(usize),
    #[error("cube {0:?} has the minimum edge and cannot be subdivided")]
    TooSmall(CubeAddr),
}

/// A broken structural invariant, found by [`Octree::check_invariants`] (a bug, never bad input:
/// every operation keeps the invariants).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvariantError {
    #[error("free block out of range")]
    FreeBlockOutOfRange,
    #[error("block {0} freed twice")]
    BlockFreedTwice(u32),
    #[error("free ext slot out of range")]
    FreeExtOutOfRange,
    #[error("ext slot {0} freed twice")]
    ExtFreedTwice(u32),
    #[error("child block out of range")]
    ChildBlockOutOfRange,
    #[error("block {block} used twice or free at {at:?}")]
    BlockUsedTwice { block: usize, at: CubeAddr },
    #[error("parent of edge 1 at {0:?}")]
    ParentOfEdgeOne(CubeAddr),
    #[error("mergeable parent at {0:?}")]
    MergeableParent(CubeAddr),
    #[error("ext slot out of range")]
    ExtOutOfRange,
    #[error("ext slot {slot} used twice or free at {at:?}")]
    ExtUsedTwice { slot: usize, at: CubeAddr },
    #[error("cube at {0:?} is not normalized")]
    NotNormalized(CubeAddr),
    #[error("air with data at {0:?}")]
    AirWithData(CubeAddr),
    #[error("bad tag {tag} at {at:?}")]
    BadTag { tag: u8, at: CubeAddr },
    #[error("leaked blocks or ext slots")]
    Leaked,
}

/// A leaf-mapping edit.
enum Op<'a> {
    /// Every covered leaf becomes this (normalized) cube.
    Set(Cube),
    /// Every covered leaf becomes `f(leaf)`, normalized.
    Map(&'a dyn Fn(Cube) -> Cube),
}

/// One chunk's cubes. See the [module documentation](self).
#[derive(Clone)]
pub struct Octree {
    size_log2: u8,
    root: Node,
    blocks: Vec<[Node; 8]>,
    free_blocks: Vec<u32>,
    ext: Vec<ExtGeometry>,
    free_ext: Vec<u32>,
}

impl Octree {
    /// An all-air octree of edge `2^size_log2` lattice units.
    ///
    /// # Panics
    /// If `size_log2` exceeds [`MAX_CHUNK_LATTICE_LOG2`] (18).
    pub fn new(size_log2: u8) -> Octree {
        assert!(size_log2 <= MAX_CHUNK_LATTICE_LOG2, "octree size 2^{size_log2} is too large");
        Octree {
            size_log2,
            root: Node::default(),
            blocks: Vec::new(),
            free_blocks: Vec::new(),
            ext: Vec::new(),
            free_ext: Vec::new(),
        }
    }

    /// The edge, as a power of two, in lattice units.
    pub fn size_log2(&self) -> u8 {
        self.size_log2
    }

    /// The root cube (the whole chunk).
    pub fn root_addr(&self) -> CubeAddr {
        CubeAddr { min: IVec3::ZERO, size_log2: self.size_log2 }
    }

    /// The lattice box of the whole octree.
    pub fn bounds(&self) -> LatticeBox {
        self.root_addr().lattice_box()
    }

    /// Whether the whole octree is plain air ([`Cube::EMPTY`]).
    pub fn is_empty(&self) -> bool {
        self.root == Node::default()
    }

    /// Builds an octree from its nodes in pre-order (PMF child bit order), as
    /// [`Octree::pre_order`] lists them: `next(addr)` gives the node at `addr`, `None` for a
    /// parent (its eight children follow) or `Some(cube)` for a leaf. One pass that places each
    /// node where it belongs, instead of descending from the root once per leaf
    /// ([`Octree::set_cube`]): loading a chunk costs `O(nodes)`. Cubes are normalized and a
    /// parent whose eight children are equal mergeable leaves becomes that leaf, so the result
    /// is canonical: the tree that setting each leaf in turn would give.
    ///
    /// Stops at `next`'s first error; a parent at the minimum edge (edge 1) is
    /// [`OctreeError::TooSmall`].
    pub fn from_pre_order<E, F>(size_log2: u8, mut next: F) -> Result<Octree, E>
    where
        E: From<OctreeError>,
        F: FnMut(CubeAddr) -> Result<Option<Cube>, E>,
    {
        Self::from_pre_order_into(size_log2, |addr, leaf| Ok(next(addr)?.map(|cube| *leaf = cube).is_some()))
    }

    /// [`Octree::from_pre_order`] for readers that decode into a cube in place:
    /// `next(addr, leaf)` either writes the leaf at `addr` into `leaf` and returns `true`, or
    /// returns `false` for a parent. (The cube is not moved through every `Result` on its way,
    /// which is most of what a chunk file's load used to spend here.) The number of nodes
    /// `next` gave equals [`Octree::node_count`] exactly when nothing was merged, that is when
    /// the pre-order was already canonical.
    pub fn from_pre_order_into<E, F>(size_log2: u8, mut next: F) -> Result<Octree, E>
    where
        E: From<OctreeError>,
        F: FnMut(CubeAddr, &mut Cube) -> Result<bool, E>,
    {
        let mut tree = Octree::new(size_log2);
        let mut leaf = Cube::EMPTY;
        let mut error = None;
        match tree.build(IVec3::ZERO, size_log2, &mut leaf, &mut next, &mut error) {
            Ok(root) => tree.root = root,
            Err(Halt) => return Err(error.expect("a halted build keeps its error")),
        }
        // A built tree is kept (a project's chunks): no spare capacity from the doubling growth.
        tree.blocks.shrink_to_fit();
        tree.ext.shrink_to_fit();
        Ok(tree)
    }

    /// The node of edge `2^size_log2` at `min` and everything under it, from `next`
    /// ([`Octree::from_pre_order_into`]); `leaf` is scratch space for `next`, `error` receives
    /// the error that halts the build. (Scalars in, a small result out: every call passes in
    /// registers. A `CubeAddr` argument and a `Result` as large as the caller's error went
    /// through memory and took half the time of a chunk file's load.)
    fn build<E, F>(
        &mut self,
        min: IVec3,
        size_log2: u8,
        leaf: &mut Cube,
        next: &mut F,
        error: &mut Option<E>,
    ) -> Result<Node, Halt>
    where
        E: From<OctreeError>,
        F: FnMut(CubeAddr, &mut Cube) -> Result<bool, E>,
    {
        let addr = CubeAddr { min, size_log2 };
        match next(addr, leaf) {
            Ok(true) => {
                if matches!(leaf.kind, CubeKind::Extended(_)) {
                    *leaf = leaf.normalized();
                }
                return Ok(self.encode(leaf));
            }
            Ok(false) => {}
            Err(e) => {
                *error = Some(e);
                return Err(Halt);
            }
        }
        if size_log2 == 0 {
            *error = Some(OctreeError::TooSmall(addr).into());
            return Err(Halt);
        }
        let mut kids = [Node::default(); 8];
        for (i, k) in kids.iter_mut().enumerate() {
            let child = addr.child(i);
            *k = self.build(child.min, child.size_log2, leaf, next, error)?;
        }
        // The same rule as `try_merge`.
        let first = kids[0];
        if !first.is_parent()
            && !self.is_pushed(first)
            && kids[1..].iter().all(|&k| !k.is_parent() && self.leaf_eq(first, k))
        {
            for &k in &kids[1..] {
                self.free_node(k);
            }
            return Ok(first);
        }
        Ok(Node::with_index(TAG_PARENT, self.alloc_block(kids)))
    }

    // ----- node storage -------------------------------------------------------------------

    fn node(&self, r: NodeRef) -> Node {
        match r {
            NodeRef::Root => self.root,
            NodeRef::Child(b, i) => self.blocks[b as usize][i],
        }
    }

    fn set_node(&mut self, r: NodeRef, n: Node) {
        match r {
            NodeRef::Root => self.root = n,
            NodeRef::Child(b, i) => self.blocks[b as usize][i] = n,
        }
    }

    fn children(&self, parent: Node) -> &[Node; 8] {
        &self.blocks[parent.index() as usize]
    }

    fn alloc_block(&mut self, kids: [Node; 8]) -> u32 {
        if let Some(b) = self.free_blocks.pop() {
            self.blocks[b as usize] = kids;
            b
        } else {
            self.blocks.push(kids);
            (self.blocks.len() - 1) as u32
        }
    }

    fn alloc_ext(&mut self, e: ExtGeometry) -> u32 {
        if let Some(i) = self.free_ext.pop() {
            self.ext[i as usize] = e;
            i
        } else {
            self.ext.push(e);
            (self.ext.len() - 1) as u32
        }
    }

    /// Packs a leaf cube, allocating its side-table slot if it is extended.
    fn encode(&mut self, c: &Cube) -> Node {
        encode_leaf(c, |e| self.alloc_ext(e))
    }

    /// Unpacks a leaf node.
    #[inline]
    fn decode(&self, n: Node) -> Cube {
        decode_node(n, &self.ext)
    }

    /// Releases the blocks and side-table slots under `n` (and `n`'s own slot).
    fn free_node(&mut self, n: Node) {
        match n.tag {
            TAG_PARENT => {
                let b = n.index();
                let kids = self.blocks[b as usize];
                for k in kids {
                    self.free_node(k);
                }
                self.free_blocks.push(b);
            }
            TAG_EXTENDED => self.free_ext.push(n.index()),
            _ => {}
        }
    }

    /// Whether two leaf nodes hold the same cube.
    fn leaf_eq(&self, a: Node, b: Node) -> bool {
        if a.tag == TAG_EXTENDED && b.tag == TAG_EXTENDED {
            a.backfaces == b.backfaces
                && a.path == b.path
                && self.ext[a.index() as usize] == self.ext[b.index() as usize]
        } else {
            a == b
        }
    }

    fn is_pushed(&self, n: Node) -> bool {
        n.tag == TAG_EXTENDED && self.ext[n.index() as usize].has_pushed_corners()
    }

    /// Splits the leaf at `r` into eight copies of its flattened cube. Returns whether the
    /// content changed (the leaf had pushed corners).
    fn split(&mut self, r: NodeRef) -> bool {
        let n = self.node(r);
        debug_assert!(!n.is_parent());
        let cube = self.decode(n);
        let flat = cube.flattened();
        let mut kids = [Node::default(); 8];
        for k in &mut kids {
            *k = self.encode(&flat);
        }
        self.free_node(n);
        let b = self.alloc_block(kids);
        self.set_node(r, Node::with_index(TAG_PARENT, b));
        cube != flat
    }

    /// Replaces the parent at `r` by a leaf if its eight children are equal mergeable leaves.
    fn try_merge(&mut self, r: NodeRef) {
        let n = self.node(r);
        if !n.is_parent() {
            return;
        }
        let kids = *self.children(n);
        let first = kids[0];
        if first.is_parent() || self.is_pushed(first) {
            return;
        }
        if kids[1..].iter().any(|&k| k.is_parent() || !self.leaf_eq(first, k)) {
            return;
        }
        for &k in &kids[1..] {
            self.free_node(k);
        }
        self.free_blocks.push(n.index());
        self.set_node(r, first);
    }

    // ----- validation ---------------------------------------------------------------------

    fn check_addr(&self, addr: CubeAddr) -> Result<(), OctreeError> {
        if !addr.is_aligned() || addr.size_log2 > 30 {
            return Err(OctreeError::Misaligned(addr));
        }
        if !self.root_addr().contains_addr(&addr) {
            return Err(OctreeError::OutOfBounds { addr, edge: self.root_addr().edge() });
        }
        Ok(())
    }

    // ----- reading ------------------------------------------------------------------------

    /// The leaf holding lattice position `pos` and its cube, or `None` outside the octree.
    pub fn get(&self, pos: IVec3) -> Option<(Cube, CubeAddr)> {
        let mut addr = self.root_addr();
        if !addr.contains(pos) {
            return None;
        }
        let mut n = self.root;
        while n.is_parent() {
            let i = addr.child_index_of(pos);
            n = self.children(n)[i];
            addr = addr.child(i);
        }
        Some((self.decode(n), addr))
    }

    /// The node at `addr`, or the leaf above it with that leaf's address.
    fn find(&self, addr: CubeAddr) -> (Node, CubeAddr) {
        let mut a = self.root_addr();
        let mut n = self.root;
        while a.size_log2 > addr.size_log2 && n.is_parent() {
            let i = a.child_index_of(addr.min);
            n = self.children(n)[i];
            a = a.child(i);
        }
        (n, a)
    }

    /// Every node in pre-order (PMF child bit order): `(addr, None)` for a parent, `(addr,
    /// Some(cube))` for a leaf.
    pub fn pre_order(&self) -> PreOrder<'_> {
        PreOrder { tree: self, stack: vec![(self.root, self.root_addr())] }
    }

    /// Every leaf with its address, in pre-order (PMF child bit order). Deterministic.
    pub fn leaves(&self) -> impl Iterator<Item = (CubeAddr, Cube)> + '_ {
        self.pre_order().filter_map(|(a, c)| c.map(|c| (a, c)))
    }

    /// Every solid leaf (geometry or extended) with its address, in pre-order (PMF child bit
    /// order), handed to `f`: [`Self::leaves`] without the empty ones, which this walk neither
    /// decodes nor queues (a chunk's geometry pass, such as a visibility summary, skips most of
    /// its leaves).
    pub fn for_each_solid_leaf(&self, mut f: impl FnMut(CubeAddr, &Cube)) {
        fn walk(tree: &Octree, n: Node, a: CubeAddr, f: &mut impl FnMut(CubeAddr, &Cube)) {
            match n.tag {
                TAG_EMPTY => {}
                TAG_PARENT => {
                    for (i, &kid) in tree.children(n).iter().enumerate() {
                        walk(tree, kid, a.child(i), f);
                    }
                }
                _ => f(a, &tree.decode(n)),
            }
        }
        walk(self, self.root, self.root_addr(), &mut f);
    }

    /// The leaves touching the octree's face `face` (the layer one leaf deep along it), each
    /// once, in pre-order (PMF child bit order): `f(addr, Some(cube))`. A parent of edge
    /// `2^min_log2` or less is handed over as `f(addr, None)` without descending: its leaves
    /// are finer than that (the mesher's border cells, which such leaves make "mixed"). Walks
    /// only the children on `face`'s side: the nodes along the face, not the tree.
    pub fn for_each_on_face(&self, face: Face, min_log2: u8, mut f: impl FnMut(CubeAddr, Option<Cube>)) {
        let axis = face.axis();
        let side = i32::from(face.is_positive());
        let mut kids = [0usize; 4];
        for (slot, i) in kids.iter_mut().zip((0..8).filter(|&i| crate::map::coords::octant_offset(i)[axis] == side)) {
            *slot = i;
        }
        fn walk(
            t: &Octree,
            n: Node,
            a: CubeAddr,
            kids: &[usize],
            min_log2: u8,
            f: &mut impl FnMut(CubeAddr, Option<Cube>),
        ) {
            if !n.is_parent() {
                f(a, Some(t.decode(n)));
            } else if a.size_log2 <= min_log2 {
                f(a, None);
            } else {
                let children = t.children(n);
                for &i in kids {
                    walk(t, children[i], a.child(i), kids, min_log2, f);
                }
            }
        }
        walk(self, self.root, self.root_addr(), &kids, min_log2, &mut f);
    }

    /// Every leaf whose box intersects `region` (lattice space), with its address, in pre-order
    /// (PMF child bit order). Descends only into parents that intersect `region`, so a small
    /// region (a light memo's block) costs the leaves in it, not the tree.
    pub fn leaves_in(&self, region: LatticeBox) -> impl Iterator<Item = (CubeAddr, Cube)> + '_ {
        let mut stack = vec![(self.root, self.root_addr())];
        std::iter::from_fn(move || {
            while let Some((n, a)) = stack.pop() {
                if !a.lattice_box().intersects(&region) {
                    continue;
                }
                if !n.is_parent() {
                    return Some((a, self.decode(n)));
                }
                let kids = self.children(n);
                for i in (0..8).rev() {
                    stack.push((kids[i], a.child(i)));
                }
            }
            None
        })
    }

    /// Whether any leaf satisfies `pred`; stops at the first that does. Walks the nodes without
    /// building addresses (`O(nodes)`, no allocation beyond a small stack).
    pub fn any_leaf(&self, pred: impl Fn(&Cube) -> bool) -> bool {
        let mut stack = vec![self.root];
        while let Some(n) = stack.pop() {
            if n.is_parent() {
                stack.extend_from_slice(self.children(n));
            } else if pred(&self.decode(n)) {
                return true;
            }
        }
        false
    }

    /// Whether any face of any cube is painted `material`.
    pub fn uses_material(&self, material: MaterialId) -> bool {
        self.any_leaf(|c| c.uses_material(material))
    }

    /// Whether any face of any cube has physics material `physics`.
    pub fn uses_physics(&self, physics: PhysicsId) -> bool {
        self.any_leaf(|c| c.uses_physics(physics))
    }

    /// Whether any cube has sound material `sound`.
    pub fn uses_sound(&self, sound: SoundId) -> bool {
        self.any_leaf(|c| c.uses_sound(sound))
    }

    /// Number of nodes (parents and leaves).
    pub fn node_count(&self) -> usize {
        1 + 8 * (self.blocks.len() - self.free_blocks.len())
    }

    /// Number of leaves.
    pub fn leaf_count(&self) -> usize {
        1 + 7 * (self.blocks.len() - self.free_blocks.len())
    }

    /// Bytes of RAM held by this octree (struct plus allocated capacity).
    pub fn memory_bytes(&self) -> usize {
        size_of::<Self>()
            + self.blocks.capacity() * size_of::<[Node; 8]>()
            + self.free_blocks.capacity() * size_of::<u32>()
            + self.ext.capacity() * size_of::<ExtGeometry>()
            + self.free_ext.capacity() * size_of::<u32>()
    }

    /// Size of one packed node in bytes (for memory reports).
    pub const NODE_BYTES: usize = size_of::<Node>();

    /// A 64-bit FNV-1a hash of the canonical pre-order encoding: stable across runs, platforms
    /// and allocation history; equal for equal content.
    pub fn content_hash(&self) -> u64 {
        let mut h = ContentHasher::new(self.size_log2);
        for (_, c) in self.pre_order() {
            h.node(c.as_ref());
        }
        h.finish()
    }

    /// Feeds the bytes [`Self::content_hash`] hashes (size, then the canonical pre-order
    /// tokens in a fixed layout) into any hasher, for callers that need a wider hash (the bake
    /// cache keys chunks by 128 bits, `bake/src/cache.rs`).
    /// The bytes reach `h` in writes of up to 4 KiB ([`Batched`]): a streaming hash gives the
    /// same value for any split of its input, and a token's few bytes one write at a time cost
    /// a streaming xxh3 more than the walk itself (the bake cache hashes every chunk on open).
    pub fn hash_content<H: Hasher>(&self, h: &mut H) {
        let mut b = Batched::new(h);
        b.write_u8(self.size_log2);
        for (_, c) in self.pre_order() {
            hash_token(&mut b, c.as_ref());
        }
        b.flush();
    }

    /// Checks the structural invariants (canonical form, normalized cubes, consistent arena).
    /// For tests and fuzzing.
    pub fn check_invariants(&self) -> Result<(), InvariantError> {
        let mut block_used = vec![false; self.blocks.len()];
        let mut ext_used = vec![false; self.ext.len()];
        for &b in &self.free_blocks {
            let u = block_used.get_mut(b as usize).ok_or(InvariantError::FreeBlockOutOfRange)?;
            if std::mem::replace(u, true) {
                return Err(InvariantError::BlockFreedTwice(b));
            }
        }
        for &e in &self.free_ext {
            let u = ext_used.get_mut(e as usize).ok_or(InvariantError::FreeExtOutOfRange)?;
            if std::mem::replace(u, true) {
                return Err(InvariantError::ExtFreedTwice(e));
            }
        }
        let mut stack = vec![(self.root, self.root_addr())];
        while let Some((n, a)) = stack.pop() {
            match n.tag {
                TAG_PARENT => {
                    let b = n.index() as usize;
                    let u = block_used.get_mut(b).ok_or(InvariantError::ChildBlockOutOfRange)?;
                    if std::mem::replace(u, true) {
                        return Err(InvariantError::BlockUsedTwice { block: b, at: a });
                    }
                    if a.size_log2 == 0 {
                        return Err(InvariantError::ParentOfEdgeOne(a));
                    }
                    let kids = self.blocks[b];
                    if !kids[0].is_parent()
                        && !self.is_pushed(kids[0])
                        && kids.iter().all(|&k| !k.is_parent() && self.leaf_eq(kids[0], k))
                    {
                        return Err(InvariantError::MergeableParent(a));
                    }
                    for (i, k) in kids.into_iter().enumerate() {
                        stack.push((k, a.child(i)));
                    }
                }
                TAG_EXTENDED => {
                    let e = n.index() as usize;
                    let u = ext_used.get_mut(e).ok_or(InvariantError::ExtOutOfRange)?;
                    if std::mem::replace(u, true) {
                        return Err(InvariantError::ExtUsedTwice { slot: e, at: a });
                    }
                    let c = self.decode(n);
                    if c.normalized() != c {
                        return Err(InvariantError::NotNormalized(a));
                    }
                }
                TAG_EMPTY | TAG_GEOMETRY => {
                    if n.tag == TAG_EMPTY && n.d != [0; 3] {
                        return Err(InvariantError::AirWithData(a));
                    }
                }
                t => return Err(InvariantError::BadTag { tag: t, at: a }),
            }
        }
        if block_used.iter().any(|u| !u) || ext_used.iter().any(|u| !u) {
            return Err(InvariantError::Leaked);
        }
        Ok(())
    }

    /// Rebuilds the arena in pre-order without free slots (memory and cache locality). Content
    /// and structure are unchanged. Also done automatically when over half the arena is free.
    pub fn compact(&mut self) {
        let mut out = Octree::new(self.size_log2);
        out.blocks.reserve_exact(self.blocks.len() - self.free_blocks.len());
        out.ext.reserve_exact(self.ext.len() - self.free_ext.len());
        out.root = self.copy_into(self.root, &mut out);
        *self = out;
    }

    fn copy_into(&self, n: Node, out: &mut Octree) -> Node {
        match n.tag {
            TAG_PARENT => {
                let b = out.alloc_block([Node::default(); 8]);
                for (i, &k) in self.children(n).iter().enumerate() {
                    let c = self.copy_into(k, out);
                    out.blocks[b as usize][i] = c;
                }
                Node::with_index(TAG_PARENT, b)
            }
            TAG_EXTENDED => {
                let mut m = n;
                let i = out.alloc_ext(self.ext[n.index() as usize]);
                m.d = Node::with_index(TAG_EXTENDED, i).d;
                m
            }
            _ => n,
        }
    }

    fn maybe_compact(&mut self) {
        if self.free_blocks.len() > 256 && self.free_blocks.len() * 2 > self.blocks.len() {
            self.compact();
        }
    }

    // ----- editing ------------------------------------------------------------------------

    fn edit(&mut self, r: NodeRef, addr: CubeAddr, region: &LatticeBox, op: &Op<'_>, changed: &mut LatticeBox) {
        let nb = addr.lattice_box();
        if !nb.intersects(region) {
            return;
        }
        let n = self.node(r);
        let inside = region.contains_box(&nb);
        if !n.is_parent() {
            let old = self.decode(n);
            let new = match op {
                Op::Set(c) => *c,
                Op::Map(f) => f(old).normalized(),
            };
            if inside {
                if new != old {
                    self.free_node(n);
                    let e = self.encode(&new);
                    self.set_node(r, e);
                    *changed = changed.union(&nb);
                }
                return;
            }
            if new == old && !old.has_pushed_corners() {
                return;
            }
            if self.split(r) {
                *changed = changed.union(&nb);
            }
        } else if let (true, Op::Set(c)) = (inside, op) {
            self.free_node(n);
            let e = self.encode(c);
            self.set_node(r, e);
            *changed = changed.union(&nb);
            return;
        }
        let b = self.node(r).index();
        for i in 0..8 {
            self.edit(NodeRef::Child(b, i), addr.child(i), region, op, changed);
        }
        self.try_merge(r);
    }

    fn apply(&mut self, region: LatticeBox, op: &Op<'_>) -> Option<LatticeBox> {
        let region = region.intersection(&self.bounds());
        if region.is_empty() {
            return None;
        }
        let mut changed = LatticeBox::new(IVec3::ZERO, IVec3::ZERO);
        self.edit(NodeRef::Root, self.root_addr(), &region, op, &mut changed);
        self.maybe_compact();
        (!changed.is_empty()).then_some(changed)
    }

    /// Makes `addr` one leaf holding `cube` (normalized), subdividing and merging as needed.
    /// A cube with pushed corners keeps them at exactly this size.
    pub fn set_cube(&mut self, addr: CubeAddr, cube: Cube) -> Result<Option<LatticeBox>, OctreeError> {
        self.check_addr(addr)?;
        Ok(self.apply(addr.lattice_box(), &Op::Set(cube.normalized())))
    }

    /// Makes `addr` plain air.
    pub fn clear_cube(&mut self, addr: CubeAddr) -> Result<Option<LatticeBox>, OctreeError> {
        self.set_cube(addr, Cube::EMPTY)
    }

    /// Sets every lattice cell of `region` (clipped to the octree) to `cube`. The region is cut
    /// into maximal aligned cubes; a cube with pushed corners gets them on each of those.
    pub fn fill_box(&mut self, region: LatticeBox, cube: Cube) -> Option<LatticeBox> {
        self.apply(region, &Op::Set(cube.normalized()))
    }

    /// Makes every lattice cell of `region` plain air.
    pub fn clear_box(&mut self, region: LatticeBox) -> Option<LatticeBox> {
        self.fill_box(region, Cube::EMPTY)
    }

    /// Replaces every leaf inside `region` by `f(leaf)` (normalized). Leaves partly inside are
    /// split first (which resets pushed corners of those leaves only).
    pub fn map_box(&mut self, region: LatticeBox, f: &dyn Fn(Cube) -> Cube) -> Option<LatticeBox> {
        self.apply(region, &Op::Map(f))
    }

    /// Paints `face` of every solid cube inside `addr` with `material`.
    pub fn paint_face(
        &mut self,
        addr: CubeAddr,
        face: Face,
        material: MaterialId,
    ) -> Result<Option<LatticeBox>, OctreeError> {
        self.check_addr(addr)?;
        Ok(self.paint_face_box(addr.lattice_box(), face, material))
    }

    /// Paints `face` of every solid cube in `region` with `material`.
    pub fn paint_face_box(&mut self, region: LatticeBox, face: Face, material: MaterialId) -> Option<LatticeBox> {
        self.map_box(region, &|c| c.with_face_material(face, material))
    }

    /// Paints every face of every solid cube inside `addr` with `material`.
    pub fn paint_cube(&mut self, addr: CubeAddr, material: MaterialId) -> Result<Option<LatticeBox>, OctreeError> {
        self.check_addr(addr)?;
        Ok(self.paint_box(addr.lattice_box(), material))
    }

    /// Paints every face of every solid cube in `region` with `material`.
    pub fn paint_box(&mut self, region: LatticeBox, material: MaterialId) -> Option<LatticeBox> {
        self.map_box(region, &|c| c.with_material(material))
    }

    /// Sets the pathfinding attributes of every leaf in `region`.
    pub fn set_path_attrs_box(&mut self, region: LatticeBox, attrs: PathAttrs) -> Option<LatticeBox> {
        self.map_box(region, &|c| Cube { path: attrs, ..c })
    }

    /// Sets the "draw backfaces" flag of every solid leaf in `region`.
    pub fn set_draw_backfaces_box(&mut self, region: LatticeBox, on: bool) -> Option<LatticeBox> {
        self.map_box(region, &|c| if c.is_solid() { Cube { draw_backfaces: on, ..c } } else { c })
    }

    /// Moves corner `corner` (0..8, PMF bit order) of the cube at `addr` by `delta` steps of
    /// edge/16 per axis, clamped inside the cube. A plain geometry cube becomes extended; when
    /// every corner is back at rest and the faces agree it becomes plain geometry again. If
    /// `addr` lies inside a bigger leaf, that leaf is split down to `addr` first. Air is left
    /// alone (`Ok(None)`); a subdivided `addr` is [`OctreeError::NotALeaf`].
    pub fn push_corner(
        &mut self,
        addr: CubeAddr,
        corner: usize,
        delta: IVec3,
    ) -> Result<Option<LatticeBox>, OctreeError> {
        self.check_addr(addr)?;
        if corner >= 8 {
            return Err(OctreeError::BadCorner(corner));
        }
        let (n, a) = self.find(addr);
        if n.is_parent() && a == addr {
            return Err(OctreeError::NotALeaf(addr));
        }
        let d = delta.to_array();
        Ok(self.map_box(addr.lattice_box(), &|c| c.with_corner_pushed(corner, d)))
    }

    /// Subdivides the cube at `addr` (and any bigger leaf holding it) into eight children.
    ///
    /// Because the tree is kept canonical, equal children merge straight back: for a plain cube
    /// this changes nothing, and for a cube with pushed corners (at `addr` or above it) the net
    /// effect is that those corners are reset. Editing a part of a cube subdivides implicitly;
    /// this exists for tools that want to drop a deformation explicitly.
    pub fn subdivide(&mut self, addr: CubeAddr) -> Result<Option<LatticeBox>, OctreeError> {
        self.check_addr(addr)?;
        if addr.size_log2 == 0 {
            return Err(OctreeError::TooSmall(addr));
        }
        Ok(self.map_box(addr.child(0).lattice_box(), &|c| c))
    }
}

impl Default for Octree {
    /// An empty chunk of exponent 0 (edge 8 lattice units).
    fn default() -> Self {
        Octree::new(crate::map::coords::LATTICE_PER_UNIT_LOG2)
    }
}

impl PartialEq for Octree {
    fn eq(&self, other: &Self) -> bool {
        self.size_log2 == other.size_log2 && self.pre_order().eq(other.pre_order())
    }
}

impl Eq for Octree {}

impl Hash for Octree {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.content_hash());
    }
}

impl fmt::Debug for Octree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Octree")
            .field("size_log2", &self.size_log2)
            .field("nodes", &self.node_count())
            .field("content_hash", &format_args!("{:016x}", self.content_hash()))
            .finish()
    }
}

/// Pre-order walk of an octree; see [`Octree::pre_order`].
pub struct PreOrder<'a> {
    tree: &'a Octree,
    stack: Vec<(Node, CubeAddr)>,
}

impl Iterator for PreOrder<'_> {
    type Item = (CubeAddr, Option<Cube>);

    fn next(&mut self) -> Option<Self::Item> {
        let (n, a) = self.stack.pop()?;
        if n.is_parent() {
            let kids = self.tree.children(n);
            for i in (0..8).rev() {
                self.stack.push((kids[i], a.child(i)));
            }
            Some((a, None))
        } else {
            Some((a, Some(self.tree.decode(n))))
        }
    }
}

/// Packs a leaf cube; `alloc_ext` stores extended geometry and returns its slot.
fn encode_leaf(c: &Cube, alloc_ext: impl FnOnce(ExtGeometry) -> u32) -> Node {
    let mut n = match c.kind {
        CubeKind::Empty => Node::default(),
        CubeKind::Geometry(g) => {
            Node { tag: TAG_GEOMETRY, d: [g.material.0, g.physics.0, g.sound.0], ..Node::default() }
        }
        CubeKind::Extended(e) => Node::with_index(TAG_EXTENDED, alloc_ext(e)),
    };
    n.backfaces = c.draw_backfaces;
    n.path = c.path.0;
    n
}

/// Unpacks a leaf node whose extended geometry (if any) lives in `ext`.
#[inline]
fn decode_node(n: Node, ext: &[ExtGeometry]) -> Cube {
    debug_assert!(!n.is_parent());
    let kind = match n.tag {
        TAG_GEOMETRY => CubeKind::Geometry(Geometry {
            material: MaterialId(n.d[0]),
            physics: PhysicsId(n.d[1]),
            sound: SoundId(n.d[2]),
        }),
        TAG_EXTENDED => CubeKind::Extended(ext[n.index() as usize]),
        _ => CubeKind::Empty,
    };
    Cube { kind, draw_backfaces: n.backfaces, path: PathAttrs(n.path) }
}

/// [`Octree::content_hash`] of an octree given node by node in pre-order, as a reader decodes
/// it: hashing while reading saves walking the built tree again. The nodes must be the
/// canonical pre-order (what [`Octree::pre_order`] lists) for the hash to be the tree's.
#[derive(Debug, Clone)]
pub struct ContentHasher(Fnv64);

impl ContentHasher {
    /// The hash of an octree of edge `2^size_log2`, before its first node.
    pub fn new(size_log2: u8) -> ContentHasher {
        let mut h = Fnv64::new();
        h.write_u8(size_log2);
        ContentHasher(h)
    }

    /// Adds the next node: `None` for a parent, else the leaf's cube.
    #[inline]
    pub fn node(&mut self, c: Option<&Cube>) {
        hash_token(&mut self.0, c);
    }

    /// The hash of the nodes so far.
    pub fn finish(&self) -> u64 {
        self.0.finish()
    }
}

/// A [`Hasher`] that gathers small writes into a 4 KiB buffer and passes them on to the inner
/// hasher in larger ones; [`Self::flush`] (or dropping it) passes on the rest. The inner hasher
/// sees the same bytes in the same order, so a streaming hash of them is the same.
pub struct Batched<'a, H: Hasher> {
    inner: &'a mut H,
    buf: [u8; BATCH],
    len: usize,
}

/// [`Batched`]'s buffer size.
const BATCH: usize = 4096;

impl<'a, H: Hasher> Batched<'a, H> {
    pub fn new(inner: &'a mut H) -> Self {
        Batched { inner, buf: [0; BATCH], len: 0 }
    }

    /// Passes the buffered bytes on.
    pub fn flush(&mut self) {
        if self.len > 0 {
            self.inner.write(&self.buf[..self.len]);
            self.len = 0;
        }
    }
}

impl<H: Hasher> Drop for Batched<'_, H> {
    fn drop(&mut self) {
        self.flush();
    }
}

impl<H: Hasher> Hasher for Batched<'_, H> {
    /// The inner hasher's value so far, without the bytes still buffered (passing them on
    /// needs `&mut self`): call [`Batched::flush`] first.
    fn finish(&self) -> u64 {
        self.inner.finish()
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        if self.len + bytes.len() > BATCH {
            self.flush();
            if bytes.len() > BATCH {
                self.inner.write(bytes);
                return;
            }
        }
        self.buf[self.len..self.len + bytes.len()].copy_from_slice(bytes);
        self.len += bytes.len();
    }
}

/// 64-bit FNV-1a.
#[derive(Debug, Clone)]
struct Fnv64(u64);

impl Fnv64 {
    fn new() -> Self {
        Fnv64(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv64 {
    fn finish(&self) -> u64 {
        self.0
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// Feeds one pre-order token (parent = `None`) into `h` with an explicit, stable byte layout.
#[inline]
fn hash_token<H: Hasher>(h: &mut H, c: Option<&Cube>) {
    let Some(c) = c else {
        h.write_u8(TAG_PARENT);
        return;
    };
    let u16s = |h: &mut H, v: &[u16]| v.iter().for_each(|x| h.write(&x.to_le_bytes()));
    match &c.kind {
        CubeKind::Empty => h.write_u8(TAG_EMPTY),
        CubeKind::Geometry(g) => {
            h.write_u8(TAG_GEOMETRY);
            u16s(h, &[g.material.0, g.physics.0, g.sound.0]);
        }
        CubeKind::Extended(e) => {
            h.write_u8(TAG_EXTENDED);
            u16s(h, &e.face_materials.map(|m| m.0));
            u16s(h, &e.face_physics.map(|m| m.0));
            u16s(h, &[e.sound.0]);
            for corner in e.corners {
                h.write(&corner.map(|v| v as u8));
            }
        }
    }
    h.write_u8(u8::from(c.draw_backfaces));
    u16s(h, &[c.path.0]);
}
