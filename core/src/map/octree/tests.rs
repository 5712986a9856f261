//! Octree tests: a dense model, canonical form, undo, ray casting, memory.

use glam::DVec3;
use proptest::prelude::*;

use super::raycast::{Ray, RayGrid};
use super::*;

const LOG2: u8 = 4;

fn all_cells(log2: u8) -> impl Iterator<Item = IVec3> {
    let e = 1 << log2;
    (0..e).flat_map(move |y| (0..e).flat_map(move |x| (0..e).map(move |z| IVec3::new(x, y, z))))
}

fn cells_of(b: LatticeBox) -> impl Iterator<Item = IVec3> {
    (b.min.y..b.max.y)
        .flat_map(move |y| (b.min.x..b.max.x).flat_map(move |x| (b.min.z..b.max.z).map(move |z| IVec3::new(x, y, z))))
}

/// One cell of the dense model: its cube and, for a cube with pushed corners, the leaf it
/// belongs to.
type Cell = (Cube, Option<CubeAddr>);

/// The dense reference model.
#[derive(Clone, PartialEq)]
struct Dense {
    log2: u8,
    cells: Vec<Cell>,
}

impl Dense {
    fn new(log2: u8) -> Self {
        Dense { log2, cells: vec![(Cube::EMPTY, None); 1 << (3 * log2)] }
    }

    fn idx(&self, p: IVec3) -> usize {
        (((p.y << self.log2) + p.x) << self.log2) as usize + p.z as usize
    }

    fn at(&self, p: IVec3) -> Cell {
        self.cells[self.idx(p)]
    }

    fn put(&mut self, p: IVec3, c: Cell) {
        let i = self.idx(p);
        self.cells[i] = c;
    }

    fn bounds(&self) -> LatticeBox {
        LatticeBox::new(IVec3::ZERO, IVec3::splat(1 << self.log2))
    }

    /// Splitting a pushed leaf partly inside `region` resets its corners.
    fn flatten_partial(&mut self, region: LatticeBox) {
        let mut owners = Vec::new();
        for p in cells_of(region) {
            if let (_, Some(o)) = self.at(p)
                && !region.contains_box(&o.lattice_box())
                && !owners.contains(&o)
            {
                owners.push(o);
            }
        }
        for o in owners {
            for p in cells_of(o.lattice_box()) {
                let (c, _) = self.at(p);
                self.put(p, (c.flattened(), None));
            }
        }
    }

    fn set(&mut self, region: LatticeBox, cube: Cube, owner: Option<CubeAddr>) {
        let region = region.intersection(&self.bounds());
        self.flatten_partial(region);
        let cube = cube.normalized();
        let owner = if cube.has_pushed_corners() { owner } else { None };
        for p in cells_of(region) {
            self.put(p, (cube, owner));
        }
    }

    fn map(&mut self, region: LatticeBox, f: &dyn Fn(Cube) -> Cube, new_owner: Option<CubeAddr>) {
        let region = region.intersection(&self.bounds());
        self.flatten_partial(region);
        for p in cells_of(region) {
            let (c, o) = self.at(p);
            let n = f(c).normalized();
            self.put(p, (n, if n.has_pushed_corners() { o.or(new_owner) } else { None }));
        }
    }

    /// Builds a tree from the model cell by cell, in reverse order (a different edit sequence
    /// from the one that produced the model).
    fn build(&self) -> Octree {
        let mut t = Octree::new(self.log2);
        let cells: Vec<IVec3> = all_cells(self.log2).collect();
        for &p in cells.iter().rev() {
            let (c, o) = self.at(p);
            let addr = o.unwrap_or(CubeAddr { min: p, size_log2: 0 });
            t.set_cube(addr, c).unwrap();
        }
        t
    }
}

fn assert_matches(t: &Octree, m: &Dense) -> Result<(), TestCaseError> {
    if let Err(e) = t.check_invariants() {
        return Err(TestCaseError::fail(format!("invariants: {e}")));
    }
    for p in all_cells(m.log2) {
        let (c, a) = t.get(p).unwrap();
        let (mc, mo) = m.at(p);
        prop_assert_eq!(c, mc, "cell {:?}", p);
        prop_assert!(a.contains(p));
        match mo {
            Some(o) => prop_assert_eq!(a, o, "owner of {:?}", p),
            None => prop_assert!(!c.has_pushed_corners()),
        }
    }
    Ok(())
}

#[derive(Debug, Clone)]
enum TOp {
    Set(CubeAddr, Cube),
    Clear(CubeAddr),
    Fill(LatticeBox, Cube),
    ClearBox(LatticeBox),
    PaintFace(CubeAddr, Face, MaterialId),
    PaintCube(CubeAddr, MaterialId),
    Push(CubeAddr, usize, IVec3),
    Subdivide(CubeAddr),
    Path(LatticeBox, PathAttrs),
    Backfaces(LatticeBox, bool),
}

impl TOp {
    fn region(&self) -> LatticeBox {
        match self {
            TOp::Set(a, _)
            | TOp::Clear(a)
            | TOp::PaintFace(a, ..)
            | TOp::PaintCube(a, _)
            | TOp::Push(a, ..)
            | TOp::Subdivide(a) => a.lattice_box(),
            TOp::Fill(b, _) | TOp::ClearBox(b) | TOp::Path(b, _) | TOp::Backfaces(b, _) => *b,
        }
    }

    /// Applies to the tree and (if the tree accepted it) to the model.
    fn apply(&self, t: &mut Octree, m: &mut Dense) -> Option<LatticeBox> {
        let r = self.region();
        match *self {
            TOp::Set(a, c) => {
                m.set(r, c, Some(a));
                t.set_cube(a, c).unwrap()
            }
            TOp::Clear(a) => {
                m.set(r, Cube::EMPTY, None);
                t.clear_cube(a).unwrap()
            }
            TOp::Fill(b, c) => {
                m.set(b, c, None);
                t.fill_box(b, c)
            }
            TOp::ClearBox(b) => {
                m.set(b, Cube::EMPTY, None);
                t.clear_box(b)
            }
            TOp::PaintFace(a, f, mat) => {
                m.map(r, &|c| c.with_face_material(f, mat), None);
                t.paint_face(a, f, mat).unwrap()
            }
            TOp::PaintCube(a, mat) => {
                m.map(r, &|c| c.with_material(mat), None);
                t.paint_cube(a, mat).unwrap()
            }
            TOp::Push(a, corner, d) => match t.push_corner(a, corner, d) {
                Ok(changed) => {
                    m.map(r, &|c| c.with_corner_pushed(corner, d.to_array()), Some(a));
                    changed
                }
                Err(OctreeError::NotALeaf(_)) => None,
                Err(e) => panic!("{e}"),
            },
            TOp::Subdivide(a) => match t.subdivide(a) {
                Ok(changed) => {
                    m.map(a.child(0).lattice_box(), &|c| c, None);
                    changed
                }
                Err(OctreeError::TooSmall(_)) => None,
                Err(e) => panic!("{e}"),
            },
            TOp::Path(b, p) => {
                m.map(b, &|c| Cube { path: p, ..c }, None);
                t.set_path_attrs_box(b, p)
            }
            TOp::Backfaces(b, on) => {
                m.map(b, &|c| if c.is_solid() { Cube { draw_backfaces: on, ..c } } else { c }, None);
                t.set_draw_backfaces_box(b, on)
            }
        }
    }
}

fn addr_strategy(log2: u8) -> impl Strategy<Value = CubeAddr> {
    let e = 1 << log2;
    (0..=log2, 0..e, 0..e, 0..e).prop_map(|(s, x, y, z)| CubeAddr::containing(IVec3::new(x, y, z), s))
}

fn box_strategy(log2: u8) -> impl Strategy<Value = LatticeBox> {
    let e = 1 << log2;
    (0..e, 0..e, 0..e, 1..=e, 1..=e, 1..=e).prop_map(move |(x, y, z, dx, dy, dz)| {
        let min = IVec3::new(x, y, z);
        LatticeBox::new(min, (min + IVec3::new(dx, dy, dz)).min(IVec3::splat(e)))
    })
}

fn cube_strategy() -> impl Strategy<Value = Cube> {
    let geometry =
        (0u16..3, 0u16..2, 0u16..2).prop_map(|(m, p, s)| Cube::solid(MaterialId(m), PhysicsId(p), SoundId(s)));
    let extended = (
        prop::array::uniform6(0u16..3),
        prop::array::uniform6(0u16..2),
        0u16..2,
        prop::collection::vec((0usize..8, 0usize..3, -16i8..=16), 0..3),
    )
        .prop_map(|(m, p, s, pushes)| {
            let mut corners = [[0i8; 3]; 8];
            for (c, a, v) in pushes {
                corners[c][a] = v;
            }
            Cube {
                kind: CubeKind::Extended(ExtGeometry {
                    face_materials: m.map(MaterialId),
                    face_physics: p.map(PhysicsId),
                    sound: SoundId(s),
                    corners,
                }),
                ..Cube::EMPTY
            }
            .normalized()
        });
    let kind = prop_oneof![3 => Just(Cube::EMPTY), 4 => geometry, 2 => extended];
    (kind, prop::bool::weighted(0.1), prop_oneof![6 => Just(0u16), 1 => 1u16..3])
        .prop_map(|(c, b, p)| Cube { draw_backfaces: b, path: PathAttrs(p), ..c }.normalized())
}

fn op_strategy(log2: u8) -> impl Strategy<Value = TOp> {
    let face = (0usize..6).prop_map(|i| Face::from_index(i).unwrap());
    prop_oneof![
        3 => (addr_strategy(log2), cube_strategy()).prop_map(|(a, c)| TOp::Set(a, c)),
        1 => addr_strategy(log2).prop_map(TOp::Clear),
        3 => (box_strategy(log2), cube_strategy()).prop_map(|(b, c)| TOp::Fill(b, c.flattened())),
        1 => box_strategy(log2).prop_map(TOp::ClearBox),
        2 => (addr_strategy(log2), face, 0u16..3).prop_map(|(a, f, m)| TOp::PaintFace(a, f, MaterialId(m))),
        1 => (addr_strategy(log2), 0u16..3).prop_map(|(a, m)| TOp::PaintCube(a, MaterialId(m))),
        3 => (addr_strategy(log2), 0usize..8, prop::array::uniform3(-6i32..=6))
            .prop_map(|(a, c, d)| TOp::Push(a, c, IVec3::from_array(d))),
        1 => addr_strategy(log2).prop_map(TOp::Subdivide),
        1 => (box_strategy(log2), 0u16..3).prop_map(|(b, p)| TOp::Path(b, PathAttrs(p))),
        1 => (box_strategy(log2), any::<bool>()).prop_map(|(b, on)| TOp::Backfaces(b, on)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Every step matches the dense model cell by cell, the tree stays canonical, the change
    /// report covers every changed cell, and rebuilding the content another way gives the same
    /// tree and hash.
    #[test]
    fn matches_dense_model(ops in prop::collection::vec(op_strategy(LOG2), 1..40)) {
        let mut t = Octree::new(LOG2);
        let mut m = Dense::new(LOG2);
        for op in &ops {
            let before = m.clone();
            let changed = op.apply(&mut t, &mut m);
            for p in all_cells(LOG2) {
                if before.at(p) != m.at(p) {
                    prop_assert!(changed.is_some_and(|b| b.contains(p)), "{:?}: change at {:?} not reported ({:?})", op, p, changed);
                }
            }
            if before == m {
                prop_assert!(changed.is_none(), "{:?} reported a change of nothing: {:?}", op, changed);
            }
            assert_matches(&t, &m)?;
        }
        let rebuilt = m.build();
        prop_assert_eq!(&rebuilt, &t);
        // Built in one pass from its own pre-order (how chunk files load), the tree is the same
        // canonical tree, structure included.
        let mut nodes = t.pre_order();
        let loaded = Octree::from_pre_order(LOG2, |addr| -> Result<Option<Cube>, OctreeError> {
            let (at, node) = nodes.next().expect("as many nodes as the pre-order lists");
            assert_eq!(at, addr);
            Ok(node)
        })
        .unwrap();
        prop_assert!(nodes.next().is_none());
        prop_assert!(loaded.check_invariants().is_ok());
        prop_assert_eq!(&loaded, &t);
        prop_assert_eq!(loaded.node_count(), t.node_count());
        prop_assert_eq!(rebuilt.content_hash(), t.content_hash());
        prop_assert_eq!(rebuilt.node_count(), t.node_count());
        let mut compacted = t.clone();
        compacted.compact();
        prop_assert!(compacted.check_invariants().is_ok());
        prop_assert_eq!(&compacted, &t);
        prop_assert!(compacted.memory_bytes() <= t.memory_bytes());
    }

    /// `for_each_solid_leaf` visits exactly the solid leaves of `leaves`, in the same order.
    #[test]
    fn solid_leaves_are_the_filtered_pre_order(ops in prop::collection::vec(op_strategy(LOG2), 1..30)) {
        let mut t = Octree::new(LOG2);
        let mut m = Dense::new(LOG2);
        for op in &ops {
            op.apply(&mut t, &mut m);
        }
        let expected: Vec<(CubeAddr, Cube)> = t.leaves().filter(|(_, c)| c.is_solid()).collect();
        let mut got = Vec::new();
        t.for_each_solid_leaf(|a, c| got.push((a, *c)));
        prop_assert_eq!(got, expected);
    }

    /// `leaves_in` lists exactly the leaves of `leaves` whose boxes meet the region, in the same
    /// order.
    #[test]
    fn leaves_in_is_the_filtered_pre_order(ops in prop::collection::vec(op_strategy(LOG2), 1..30), region in box_strategy(LOG2)) {
        let mut t = Octree::new(LOG2);
        let mut m = Dense::new(LOG2);
        for op in &ops {
            op.apply(&mut t, &mut m);
        }
        let want: Vec<_> = t.leaves().filter(|(a, _)| a.lattice_box().intersects(&region)).collect();
        prop_assert!(!want.is_empty());
        prop_assert_eq!(t.leaves_in(region).collect::<Vec<_>>(), want);
    }

    /// `for_each_on_face` hands over the leaves touching the face, in pre-order, with every
    /// subtree of edge `2^min_log2` that is not one leaf in their place (once, as `None`).
    #[test]
    fn on_face_is_the_face_layer_of_the_pre_order(
        ops in prop::collection::vec(op_strategy(LOG2), 1..30),
        face in 0..6usize,
        min_log2 in 0..=LOG2,
    ) {
        let mut t = Octree::new(LOG2);
        let mut m = Dense::new(LOG2);
        for op in &ops {
            op.apply(&mut t, &mut m);
        }
        let face = Face::ALL[face];
        let root = t.bounds();
        let touches = |a: &CubeAddr| {
            let b = a.lattice_box();
            let axis = face.axis();
            if face.is_positive() { b.max[axis] == root.max[axis] } else { b.min[axis] == root.min[axis] }
        };
        // What it should give, from the pre-order: leaves on the face no finer than the cut,
        // and for finer ones the cut-size cube holding them, once.
        let mut want: Vec<(CubeAddr, Option<Cube>)> = Vec::new();
        for (a, c) in t.leaves().filter(|(a, _)| touches(a)) {
            let item = if a.size_log2 < min_log2 {
                (CubeAddr::containing(a.min, min_log2), None)
            } else {
                (a, Some(c))
            };
            if want.last() != Some(&item) {
                want.push(item);
            }
        }
        let mut got = Vec::new();
        t.for_each_on_face(face, min_log2, |a, c| got.push((a, c)));
        prop_assert_eq!(got, want);
    }

    /// Capturing an op's region before it and writing the capture back undoes it exactly;
    /// writing the returned subtrees again redoes it.
    #[test]
    fn capture_and_replace_region_undo(ops in prop::collection::vec(op_strategy(LOG2), 1..30)) {
        let mut t = Octree::new(LOG2);
        let mut m = Dense::new(LOG2);
        for op in &ops {
            let before = t.clone();
            let backup = t.capture(op.region());
            op.apply(&mut t, &mut m);
            let after = t.clone();
            let mut undone = t.clone();
            let mut redo = Vec::new();
            for s in &backup {
                let (old, _) = undone.replace_region(s).unwrap();
                redo.push(old);
            }
            prop_assert!(undone.check_invariants().is_ok());
            prop_assert_eq!(undone.content_hash(), before.content_hash());
            prop_assert_eq!(&undone, &before, "undo of {:?}", op);
            for s in redo.iter().rev() {
                undone.replace_region(s).unwrap();
            }
            prop_assert_eq!(&undone, &after, "redo of {:?}", op);
            // Captures are small: at most eight subtrees.
            prop_assert!(backup.len() <= 8);
        }
    }

    /// The octree ray cast agrees with a brute-force test of every solid cell.
    #[test]
    fn ray_cast_matches_brute_force(
        ops in prop::collection::vec(op_strategy(LOG2), 1..12),
        origin in prop::array::uniform3(-6.0f64..22.0),
        dir in prop::array::uniform3(-1.0f64..1.0),
        max_dist in 0.0f64..60.0,
    ) {
        let mut t = Octree::new(LOG2);
        let mut m = Dense::new(LOG2);
        for op in &ops {
            op.apply(&mut t, &mut m);
        }
        let origin = DVec3::from_array(origin);
        let dir = DVec3::from_array(dir);
        let hit = t.ray_cast(origin, dir, max_dist);
        let Some(ray) = Ray::new(origin, dir) else {
            prop_assert!(hit.is_none());
            return Ok(());
        };
        let mut candidates: Vec<(f64, Face, IVec3)> = Vec::new();
        for p in all_cells(LOG2) {
            if !m.at(p).0.is_solid() {
                continue;
            }
            if let Some((d, f)) = ray.enter(&CubeAddr { min: p, size_log2: 0 }, max_dist) {
                candidates.push((d, f, p));
            }
        }
        let best = candidates.iter().map(|c| c.0).fold(f64::INFINITY, f64::min);
        match hit {
            None => prop_assert!(candidates.is_empty(), "missed {:?}", candidates),
            Some(h) => {
                prop_assert!((h.distance - best).abs() < 1e-9, "distance {} vs {}", h.distance, best);
                prop_assert!(
                    candidates.iter().any(|&(d, f, p)| (d - best).abs() < 1e-9 && h.addr.contains(p) && f == h.face),
                    "hit {:?} not among nearest {:?}", h, candidates
                );
                prop_assert_eq!(h.cube, m.at(h.addr.min).0);
            }
        }
    }

    /// A ray grid gives the octree descent's hit bit for bit, whatever its cell size, for rays
    /// from anywhere (inside, outside, on cell boundaries) in any direction, axis-aligned ones
    /// included.
    #[test]
    fn ray_grid_matches_descent(
        ops in prop::collection::vec(op_strategy(LOG2), 1..16),
        origin in prop::array::uniform3(prop_oneof![-6.0f64..22.0, (-1i32..18).prop_map(f64::from)]),
        dir in prop::array::uniform3(prop_oneof![3 => -1.0f64..1.0, 1 => Just(0.0)]),
        max_dist in prop_oneof![0.0f64..60.0, Just(f64::INFINITY)],
    ) {
        let mut t = Octree::new(LOG2);
        let mut m = Dense::new(LOG2);
        for op in &ops {
            op.apply(&mut t, &mut m);
        }
        let Some(ray) = Ray::new(DVec3::from_array(origin), DVec3::from_array(dir)) else {
            return Ok(());
        };
        let want = t.ray_cast_prepared(&ray, max_dist);
        for cell_log2 in 0..=LOG2 {
            let grid = RayGrid::with_cell_log2(&t, cell_log2);
            prop_assert_eq!(grid.cast(&ray, max_dist), want, "cells of 2^{}", cell_log2);
        }
    }
}

/// Rising rays over uneven ground (the light bake's sky and sun rays): the grid's cut-off above
/// the highest solid cell (per column for vertical rays) gives the descent's hit, from below,
/// inside, on and above the ground and from below the octree, with the tallest column at the
/// octree's top and a ray starting exactly on a column's top.
#[test]
fn ray_grid_rising_rays_match_descent() {
    let mut t = Octree::new(5);
    let stone = Cube::solid(MaterialId(1), PhysicsId(0), SoundId(0));
    for z in 0..4 {
        for x in 0..4 {
            let h = [3, 9, 17, 32][((x * 3 + z * 5) % 4) as usize];
            let lo = IVec3::new(x * 8, 0, z * 8);
            t.fill_box(LatticeBox::new(lo, lo + IVec3::new(8, h, 8)), stone);
        }
    }
    // A small overhang the vertical rays of its column must still hit.
    t.fill_box(LatticeBox::new(IVec3::new(1, 20, 1), IVec3::new(3, 21, 3)), stone);
    let dirs = [DVec3::Y, DVec3::new(0.3, 1.0, -0.2), DVec3::new(-1.0, 0.5, 0.0), DVec3::X, DVec3::new(0.0, 0.0, -1.0)];
    let mut hits = 0;
    for x in [0.5, 1.5, 7.99, 8.0, 12.25, 20.0, 31.5] {
        for z in [0.5, 2.0, 9.5, 16.0, 27.75] {
            for y in [-7.0, 0.0, 2.5, 3.0, 8.75, 9.0, 17.0, 19.5, 21.0, 31.9] {
                for dir in dirs {
                    let ray = Ray::new(DVec3::new(x, y, z), dir).unwrap();
                    for max in [4.0, f64::INFINITY] {
                        let want = t.ray_cast_prepared(&ray, max);
                        hits += usize::from(want.is_some());
                        for cell_log2 in [0, 2, 3] {
                            let grid = RayGrid::with_cell_log2(&t, cell_log2);
                            assert_eq!(grid.cast(&ray, max), want, "{x} {y} {z} {dir} {max} 2^{cell_log2}");
                        }
                    }
                }
            }
        }
    }
    // Both outcomes occur.
    assert!(hits > 100, "{hits}");
}

#[test]
fn uniform_fill_is_one_node() {
    let mut t = Octree::new(6);
    let stone = Cube::solid(MaterialId(1), PhysicsId(0), SoundId(0));
    assert!(t.fill_box(LatticeBox::new(IVec3::ZERO, IVec3::new(64, 32, 64)), stone).is_some());
    assert_eq!(t.node_count(), 9);
    assert!(t.fill_box(LatticeBox::new(IVec3::new(0, 32, 0), IVec3::splat(64)), stone).is_some());
    assert_eq!(t.node_count(), 1);
    assert_eq!(t.get(IVec3::new(5, 60, 7)).unwrap(), (stone, t.root_addr()));
    // Filling what is already there changes nothing.
    assert_eq!(t.fill_box(LatticeBox::new(IVec3::ONE, IVec3::splat(9)), stone), None);
    t.clear_cube(CubeAddr::new(IVec3::new(1, 2, 3), 0).unwrap()).unwrap();
    assert_eq!(t.node_count(), 1 + 6 * 8);
    t.set_cube(CubeAddr::new(IVec3::new(1, 2, 3), 0).unwrap(), stone).unwrap();
    assert_eq!(t.node_count(), 1);
    assert!(t.check_invariants().is_ok());
}

#[test]
fn push_then_pull_back_restores_plain_geometry_and_merges() {
    let mut t = Octree::new(5);
    let stone = Cube::solid(MaterialId(2), PhysicsId(1), SoundId(0));
    t.fill_box(t.bounds(), stone);
    let before = t.clone();
    let a = CubeAddr::new(IVec3::new(8, 8, 16), 3).unwrap();
    let changed = t.push_corner(a, 0, IVec3::new(0, -4, 0)).unwrap();
    assert_eq!(changed, Some(a.lattice_box()));
    let (c, at) = t.get(IVec3::new(9, 9, 17)).unwrap();
    assert_eq!(at, a);
    let CubeKind::Extended(e) = c.kind else { panic!("not extended: {c:?}") };
    assert_eq!(e.corners[0], [0, -4, 0]);
    assert_eq!(e.corner_position(0, 1.0), glam::Vec3::new(0.5, 0.25, 0.5));
    assert!(t.node_count() > 1);
    // A pushed cube is not merged with equal pushed siblings.
    for i in 0..8 {
        if a.parent().child(i) != a {
            t.push_corner(a.parent().child(i), 0, IVec3::new(0, -4, 0)).unwrap();
        }
    }
    assert!(t.check_invariants().is_ok());
    assert!(t.get(a.min).unwrap().1 == a);
    // Pushing a subdivided cube is refused.
    assert_eq!(t.push_corner(a.parent(), 0, IVec3::ONE), Err(OctreeError::NotALeaf(a.parent())));
    for i in 0..8 {
        t.push_corner(a.parent().child(i), 0, IVec3::new(0, 4, 0)).unwrap();
    }
    assert_eq!(t, before);
    assert_eq!(t.node_count(), 1);
    // Air has no corners to push.
    let mut air = Octree::new(3);
    assert_eq!(air.push_corner(air.root_addr(), 3, IVec3::ONE), Ok(None));
    assert_eq!(air.push_corner(air.root_addr(), 8, IVec3::ONE), Err(OctreeError::BadCorner(8)));
}

#[test]
fn editing_inside_a_pushed_cube_resets_its_corners() {
    let mut t = Octree::new(4);
    let stone = Cube::solid(MaterialId(2), PhysicsId(1), SoundId(0));
    let big = CubeAddr::new(IVec3::ZERO, 3).unwrap();
    t.set_cube(big, stone.with_corner_pushed(7, [5, 5, 5])).unwrap();
    let backup = t.capture(LatticeBox::new(IVec3::ONE, IVec3::splat(2)));
    assert_eq!(backup.len(), 1);
    assert_eq!(backup[0].addr(), big);
    let before = t.clone();
    let changed = t.clear_cube(CubeAddr::new(IVec3::ONE, 0).unwrap()).unwrap();
    assert_eq!(changed, Some(big.lattice_box()));
    assert_eq!(t.get(IVec3::new(7, 7, 7)).unwrap().0, stone);
    assert_eq!(t.get(IVec3::ONE).unwrap().0, Cube::EMPTY);
    t.replace_region(&backup[0]).unwrap();
    assert_eq!(t, before);
    // Subdividing drops a deformation explicitly.
    assert_eq!(t.subdivide(big).unwrap(), Some(big.lattice_box()));
    assert_eq!(t.get(IVec3::ZERO).unwrap(), (stone, big));
}

#[test]
fn painting_faces() {
    let mut t = Octree::new(3);
    let stone = Cube::solid(MaterialId(1), PhysicsId(0), SoundId(0));
    t.fill_box(t.bounds(), stone);
    let a = CubeAddr::new(IVec3::new(4, 4, 4), 2).unwrap();
    t.paint_face(a, Face::PosY, MaterialId(7)).unwrap();
    let (c, at) = t.get(IVec3::new(5, 5, 5)).unwrap();
    assert_eq!(at, a);
    assert_eq!(c.face_material(Face::PosY), Some(MaterialId(7)));
    assert_eq!(c.face_material(Face::NegY), Some(MaterialId(1)));
    t.paint_cube(t.root_addr(), MaterialId(3)).unwrap();
    assert_eq!(t.node_count(), 1);
    assert_eq!(t.get(IVec3::ZERO).unwrap().0, stone.with_material(MaterialId(3)));
}

#[test]
fn errors_change_nothing() {
    let mut t = Octree::new(3);
    let before = t.clone();
    let bad = CubeAddr { min: IVec3::new(1, 0, 0), size_log2: 1 };
    assert_eq!(t.set_cube(bad, Cube::EMPTY), Err(OctreeError::Misaligned(bad)));
    let out = CubeAddr::new(IVec3::new(8, 0, 0), 3).unwrap();
    assert!(matches!(t.set_cube(out, Cube::EMPTY), Err(OctreeError::OutOfBounds { .. })));
    let big = CubeAddr::new(IVec3::ZERO, 4).unwrap();
    assert!(matches!(t.read_subtree(big), Err(OctreeError::OutOfBounds { .. })));
    assert_eq!(
        t.subdivide(CubeAddr::new(IVec3::ZERO, 0).unwrap()),
        Err(OctreeError::TooSmall(CubeAddr::new(IVec3::ZERO, 0).unwrap()))
    );
    assert_eq!(
        t.fill_box(
            LatticeBox::new(IVec3::splat(8), IVec3::splat(12)),
            Cube::solid(MaterialId(1), PhysicsId(0), SoundId(0))
        ),
        None
    );
    assert_eq!(t, before);
    assert_eq!(t.get(IVec3::new(0, 8, 0)), None);
}

#[test]
fn leaves_in_pmf_pre_order() {
    let mut t = Octree::new(1);
    for i in 0..8 {
        let a = t.root_addr().child(i);
        t.set_cube(a, Cube::solid(MaterialId(i as u16), PhysicsId(0), SoundId(0))).unwrap();
    }
    let leaves: Vec<_> = t.leaves().collect();
    assert_eq!(leaves.len(), 8);
    for (i, (a, c)) in leaves.into_iter().enumerate() {
        assert_eq!(a, t.root_addr().child(i));
        assert_eq!(c.face_material(Face::PosX), Some(MaterialId(i as u16)));
    }
    // Child 0 is (+X, +Y, +Z).
    assert_eq!(t.root_addr().child(0).min, IVec3::ONE);
}

/// A fixed scene with every kind of token: solid, pushed corners, path attributes.
fn stable_scene() -> Octree {
    let mut t = Octree::new(4);
    t.fill_box(
        LatticeBox::new(IVec3::ZERO, IVec3::new(16, 5, 16)),
        Cube::solid(MaterialId(1), PhysicsId(2), SoundId(3)),
    );
    t.push_corner(CubeAddr::new(IVec3::new(2, 2, 2), 1).unwrap(), 1, IVec3::new(1, -2, 3)).unwrap();
    t.set_path_attrs_box(LatticeBox::new(IVec3::new(0, 5, 0), IVec3::new(4, 6, 4)), PathAttrs(1));
    t
}

#[test]
fn content_hash_is_stable() {
    // A fixed scene must always hash to the same value: project files name chunks by it.
    let t = stable_scene();
    assert_eq!(Octree::new(4).content_hash(), Octree::new(4).content_hash());
    assert_ne!(Octree::new(4).content_hash(), Octree::new(5).content_hash());
    assert_eq!(t.content_hash(), 0x7f87_73a2_1c5b_95d8, "{:#018x}", t.content_hash());
}

/// `hash_content` passes a streaming hasher the very bytes `content_hash` hashes, batched or not:
/// FNV-1a over them gives `content_hash`, for a small tree and one whose tokens fill the batch
/// buffer many times over.
#[test]
fn hash_content_feeds_the_bytes_content_hash_hashes() {
    let small = stable_scene();
    let mut big = Octree::new(5);
    for c in all_cells(5) {
        let m = (c.x * 7 + c.y * 3 + c.z) % 5;
        if m > 0 {
            big.set_cube(CubeAddr::new(c, 0).unwrap(), Cube::solid(MaterialId(m as u16), PhysicsId(0), SoundId(0)))
                .unwrap();
        }
    }
    for t in [&small, &big, &Octree::new(3)] {
        let mut h = Fnv64::new();
        t.hash_content(&mut h);
        assert_eq!(h.finish(), t.content_hash());
        let mut bytes = Recorder(0);
        t.hash_content(&mut bytes);
        assert!(t != &big || bytes.0 > 10 * 4096, "the big tree's tokens span many batches: {} bytes", bytes.0);
    }
}

/// Counts the bytes written to it.
struct Recorder(usize);

impl Hasher for Recorder {
    fn finish(&self) -> u64 {
        0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0 += bytes.len();
    }
}

/// A smooth heightmap terrain of 256 × 256 columns in one chunk of 2^8 lattice units (a 32 map
/// unit chunk): measures bytes per solid cube.
#[test]
fn terrain_memory_per_solid_cube() {
    let log2 = 8;
    let e = 1 << log2;
    let mut t = Octree::new(log2);
    let stone = Cube::solid(MaterialId(1), PhysicsId(0), SoundId(0));
    let grass = Cube::solid(MaterialId(2), PhysicsId(0), SoundId(0));
    let mut solid: u64 = 0;
    let started = std::time::Instant::now();
    for x in 0..e {
        for z in 0..e {
            let (fx, fz) = (f64::from(x) / 40.0, f64::from(z) / 55.0);
            let h = (96.0 + 40.0 * fx.sin() * fz.cos() + 12.0 * (fx * 3.1 + fz * 1.7).sin()) as i32;
            t.fill_box(LatticeBox::new(IVec3::new(x, 0, z), IVec3::new(x + 1, h - 2, z + 1)), stone);
            t.fill_box(LatticeBox::new(IVec3::new(x, h - 2, z), IVec3::new(x + 1, h, z + 1)), grass);
            solid += h as u64;
        }
    }
    let build = started.elapsed();
    t.compact();
    assert!(t.check_invariants().is_ok());
    let bytes = t.memory_bytes();
    let per_cube = bytes as f64 / solid as f64;
    eprintln!(
        "terrain 256²: {} solid cubes, {} nodes, {} bytes ({} B/node), {:.4} B per solid cube; \
         {} column fills in {:?}",
        solid,
        t.node_count(),
        bytes,
        Octree::NODE_BYTES,
        per_cube,
        2 * e * e,
        build
    );
    assert_eq!(Octree::NODE_BYTES, 10);
    assert!(per_cube <= 1.0, "{per_cube} bytes per solid cube");
}

/// `from_pre_order` merges eight equal leaves into one (as `set_cube` would), keeps eight equal
/// leaves with pushed corners apart, and refuses a parent of the minimum edge.
#[test]
fn from_pre_order_is_canonical() {
    let stone = Cube::solid(MaterialId(1), PhysicsId(0), SoundId(0));
    let mut nodes = std::iter::once(None).chain(std::iter::repeat_n(Some(stone), 8));
    let t = Octree::from_pre_order(3, |_| -> Result<_, OctreeError> { Ok(nodes.next().unwrap()) }).unwrap();
    assert_eq!(t.node_count(), 1);
    assert_eq!(t.get(IVec3::ZERO).unwrap().0, stone);

    let corner = stone.with_corner_pushed(0, [-1, 0, 0]);
    assert_ne!(corner, stone);
    let mut nodes = std::iter::once(None).chain(std::iter::repeat_n(Some(corner), 8));
    let t = Octree::from_pre_order(3, |_| -> Result<_, OctreeError> { Ok(nodes.next().unwrap()) }).unwrap();
    assert_eq!(t.node_count(), 9, "pushed leaves depend on their size: never merged");
    assert!(t.check_invariants().is_ok());

    let e = Octree::from_pre_order(0, |_| -> Result<Option<Cube>, OctreeError> { Ok(None) }).unwrap_err();
    assert!(matches!(e, OctreeError::TooSmall(_)), "{e:?}");
}
