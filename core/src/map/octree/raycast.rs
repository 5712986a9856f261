//! Ray casting against one octree: a descent from the root per ray ([`Octree::ray_cast`]), or
//! a 3-D DDA over a dense index of the octree's cells ([`RayGrid`]) for callers that cast many
//! rays through the same octree (the light bake). Both give bit-identical hits.

use glam::{DVec3, IVec3};

use super::{Cube, CubeAddr, Face, Node, Octree};
use crate::map::coords::LATTICE_PER_UNIT_LOG2;

/// The first solid cube a ray meets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// The leaf that was hit (chunk-local lattice space).
    pub addr: CubeAddr,
    /// The face through which the ray enters the leaf. A ray starting inside a solid cube hits
    /// it at distance 0, on the face looking against the ray's dominant axis.
    pub face: Face,
    /// Distance from the origin along the normalized direction, in lattice units.
    pub distance: f64,
    pub cube: Cube,
}

/// A ray with a normalized direction, prepared for slab tests (see
/// [`Level::ray_cast_visiting_with`](crate::map::Level::ray_cast_visiting_with)).
#[derive(Debug, Clone, Copy)]
pub struct Ray {
    pub(crate) origin: DVec3,
    pub(crate) dir: DVec3,
    inv: DVec3,
    /// [`Ray::inside_face`], found once: every slab test of the ray may need it.
    inside: Face,
}

impl Ray {
    /// `None` for a zero, infinite or NaN direction or a non-finite origin.
    pub(crate) fn new(origin: DVec3, dir: DVec3) -> Option<Ray> {
        let len = dir.length();
        if !(len > 0.0 && len.is_finite() && origin.is_finite()) {
            return None;
        }
        let dir = dir / len;
        let a = dir.abs();
        let axis = if a.x >= a.y && a.x >= a.z {
            0
        } else if a.y >= a.z {
            1
        } else {
            2
        };
        let inside = Face::from_axis(axis, dir[axis] < 0.0);
        Some(Ray { origin, dir, inv: dir.recip(), inside })
    }

    /// The ray moved by `-offset` (into another lattice space).
    pub(crate) fn translated(&self, offset: DVec3) -> Ray {
        Ray { origin: self.origin - offset, ..*self }
    }

    /// The face a ray starting inside a cube reports: against its dominant axis.
    pub(crate) fn inside_face(&self) -> Face {
        self.inside
    }

    /// Entry and exit distances through the half-open box `[min, max)` and the entry face, or
    /// `None` if the ray's line misses it. The entry distance may be negative (origin inside or
    /// past the box).
    #[inline]
    pub(crate) fn slab(&self, min: DVec3, max: DVec3) -> Option<(f64, f64, Face)> {
        let mut t0 = f64::NEG_INFINITY;
        let mut t1 = f64::INFINITY;
        // The entry face's axis, made a face only once the box is known to be met.
        let mut entry = None;
        for axis in 0..3 {
            let o = self.origin[axis];
            let d = self.dir[axis];
            if d == 0.0 {
                if o < min[axis] || o >= max[axis] {
                    return None;
                }
                continue;
            }
            let inv = self.inv[axis];
            let (near, far) = if d > 0.0 {
                ((min[axis] - o) * inv, (max[axis] - o) * inv)
            } else {
                ((max[axis] - o) * inv, (min[axis] - o) * inv)
            };
            if near > t0 {
                t0 = near;
                entry = Some(axis);
            }
            t1 = t1.min(far);
        }
        (t0 < t1).then(|| {
            let face = match entry {
                Some(axis) => Face::from_axis(axis, self.dir[axis] < 0.0),
                None => self.inside,
            };
            (t0, t1, face)
        })
    }

    /// [`slab`](Ray::slab) for a cube; `None` also when the cube lies behind the origin or
    /// beyond `max_dist`.
    #[inline]
    pub(crate) fn enter(&self, addr: &CubeAddr, max_dist: f64) -> Option<(f64, Face)> {
        let (t0, t1, face) = self.slab(addr.min.as_dvec3(), addr.max().as_dvec3())?;
        if t1 <= 0.0 || t0 > max_dist {
            return None;
        }
        Some(if t0 < 0.0 { (0.0, self.inside_face()) } else { (t0, face) })
    }
}

impl Octree {
    /// The first solid leaf along the ray from `origin` (chunk-local lattice space) in direction
    /// `dir` (any length) within `max_dist` lattice units, or `None`. Cubes with pushed corners
    /// are hit on their full cube (picking granularity); exact shapes are the mesher's business.
    pub fn ray_cast(&self, origin: DVec3, dir: DVec3, max_dist: f64) -> Option<Hit> {
        let ray = Ray::new(origin, dir)?;
        self.ray_cast_prepared(&ray, max_dist)
    }

    /// [`ray_cast`](Octree::ray_cast) of a prepared ray.
    pub fn ray_cast_prepared(&self, ray: &Ray, max_dist: f64) -> Option<Hit> {
        let root = self.root_addr();
        let (t, face) = ray.enter(&root, max_dist)?;
        self.cast(ray, self.root, root, t, face, max_dist)
    }

    fn cast(&self, ray: &Ray, n: Node, addr: CubeAddr, t: f64, face: Face, max_dist: f64) -> Option<Hit> {
        if !n.is_parent() {
            let cube = self.decode(n);
            return cube.is_solid().then_some(Hit { addr, face, distance: t, cube });
        }
        let kids = self.children(n);
        let mut order: [(f64, Face, usize); 8] = [(0.0, Face::PosX, 0); 8];
        let mut count = 0;
        for i in 0..8 {
            let a = addr.child(i);
            if let Some((t, f)) = ray.enter(&a, max_dist) {
                order[count] = (t, f, i);
                count += 1;
            }
        }
        let order = &mut order[..count];
        order.sort_by(|a, b| a.0.total_cmp(&b.0));
        order.iter().find_map(|&(t, f, i)| self.cast(ray, kids[i], addr.child(i), t, f, max_dist))
    }
}

/// Cells per axis of a [`RayGrid`] at most, as a power of two: 32³ cells, 128 KiB.
const MAX_GRID_LOG2: u8 = 5;

/// A dense index of an octree's cells of one edge (one map unit by default), for casting many
/// rays through the same octree: [`cast`](RayGrid::cast) steps through the cells with a 3-D DDA
/// instead of descending from the root at every ray, and gives the same hit as
/// [`Octree::ray_cast`], bit for bit.
///
/// Each cell is air (inside an empty leaf), a solid leaf at least as large as the cell, or a
/// subtree; a subtree is cast into with the octree's own descent from that cell. The hit's
/// distance and face always come from the hit leaf's own slab test, the DDA's cell boundaries
/// use the same expressions as the slab test, and the walk stops only where no later leaf can be
/// entered within the distance: the first leaf entered along the ray is the one the descent
/// finds. (Exact ties, a ray through a shared edge of two solid leaves, may pick the other leaf
/// of the tie; neither the descent's order nor the DDA's is a property of the model.)
#[derive(Debug, Clone)]
pub struct RayGrid<'a> {
    tree: &'a Octree,
    /// Lattice edge of a cell, as a power of two.
    cell_log2: u8,
    /// Cells per axis.
    n: i32,
    /// Per cell (X fastest, then Y, then Z): 0 for air, else 1 + an index into `nodes`.
    cells: Vec<u32>,
    /// Solid leaves (with their address) and subtrees (with their cell's address).
    nodes: Vec<(CubeAddr, Node)>,
    /// Per column of cells (X fastest, then Z): the lattice `y` just above its highest cell
    /// that is not air (0 when all are air), so that a ray rising above it is known to miss.
    tops: Vec<i32>,
    /// The highest of `tops`.
    top: i32,
}

impl<'a> RayGrid<'a> {
    /// The index of `tree`, cells of one map unit (or of the octree's edge / 32 when that is
    /// larger, or of the whole octree when it is smaller).
    pub fn new(tree: &'a Octree) -> RayGrid<'a> {
        let log2 = tree.size_log2;
        let cell = LATTICE_PER_UNIT_LOG2.max(log2.saturating_sub(MAX_GRID_LOG2)).min(log2);
        Self::with_cell_log2(tree, cell)
    }

    /// The index of `tree` with cells of edge `2^cell_log2` lattice units (clamped to the
    /// octree's edge and to at most 32 cells per axis).
    pub fn with_cell_log2(tree: &'a Octree, cell_log2: u8) -> RayGrid<'a> {
        let log2 = tree.size_log2;
        let cell_log2 = cell_log2.max(log2.saturating_sub(MAX_GRID_LOG2)).min(log2);
        let n = 1i32 << (log2 - cell_log2);
        let mut grid = RayGrid { tree, cell_log2, n, cells: Vec::new(), nodes: Vec::new(), tops: Vec::new(), top: 0 };
        if tree.root.is_parent() {
            grid.cells = vec![0; (n * n * n) as usize];
            grid.fill(tree.root, tree.root_addr());
            grid.tops = vec![0; (n * n) as usize];
            for z in 0..n {
                for x in 0..n {
                    if let Some(y) = (0..n).rev().find(|&y| grid.cells[grid.index(IVec3::new(x, y, z))] != 0) {
                        grid.tops[(x + n * z) as usize] = (y + 1) << cell_log2;
                    }
                }
            }
            grid.top = grid.tops.iter().copied().max().unwrap_or(0);
        }
        grid
    }

    fn index(&self, c: IVec3) -> usize {
        (c.x + self.n * (c.y + self.n * c.z)) as usize
    }

    fn fill(&mut self, node: Node, addr: CubeAddr) {
        if node.is_parent() && addr.size_log2 > self.cell_log2 {
            for (i, &kid) in self.tree.children(node).iter().enumerate() {
                self.fill(kid, addr.child(i));
            }
            return;
        }
        if !node.is_parent() && !self.tree.decode(node).is_solid() {
            return;
        }
        self.nodes.push((addr, node));
        let id = self.nodes.len() as u32;
        let lo = addr.min >> i32::from(self.cell_log2);
        let span = 1i32 << (addr.size_log2 - self.cell_log2);
        for z in lo.z..lo.z + span {
            for y in lo.y..lo.y + span {
                for x in lo.x..lo.x + span {
                    let i = self.index(IVec3::new(x, y, z));
                    self.cells[i] = id;
                }
            }
        }
    }

    /// The octree indexed.
    pub fn octree(&self) -> &'a Octree {
        self.tree
    }

    /// The top of the column of cells a vertical ray at chunk-local `(x, z)` walks (the same
    /// truncation and clamp as the DDA's start cell), from `tops`.
    fn column(&self, x: f64, z: f64) -> i32 {
        let col = |o: f64| ((o as i64) >> self.cell_log2).clamp(0, i64::from(self.n - 1)) as i32;
        self.tops[(col(x) + self.n * col(z)) as usize]
    }

    /// The lattice `y` just above the highest cell that is not air in the column a ray straight
    /// up from chunk-local `(x, z)` walks (0 when all are air): [`cast`](Self::cast) of such a ray
    /// from at or above it, or from below the octree when it is 0, gives `None` without a step
    /// (it stops at [`rise_limit`](Self::rise_limit)). `None` for a grid without cells (an octree
    /// of one leaf).
    pub fn column_top(&self, x: f64, z: f64) -> Option<i32> {
        (!self.cells.is_empty()).then(|| self.column(x, z))
    }

    /// The distance along a ray that does not descend beyond which it enters no solid leaf: where
    /// it rises past every cell that is not air (of its own column when it is vertical). Every
    /// leaf's `y` slab ends at or below that height, so the slab test gives it an exit at or
    /// before this distance, and a leaf first met at or after it is never entered; a level ray
    /// at or above that height misses every leaf's slab. Infinite for a descending ray.
    fn rise_limit(&self, ray: &Ray) -> f64 {
        if ray.dir.y < 0.0 {
            return f64::INFINITY;
        }
        let top = if ray.dir.x == 0.0 && ray.dir.z == 0.0 { self.column(ray.origin.x, ray.origin.z) } else { self.top };
        let top = f64::from(top);
        if ray.dir.y > 0.0 {
            // The slab test's expression for an exit through the plane `y = top`.
            (top - ray.origin.y) * ray.inv.y
        } else if ray.origin.y >= top {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        }
    }

    /// [`Octree::ray_cast`] of a prepared ray (chunk-local lattice space), by the grid.
    pub fn cast(&self, ray: &Ray, max_dist: f64) -> Option<Hit> {
        if self.cells.is_empty() {
            return self.tree.ray_cast_prepared(ray, max_dist);
        }
        let root = self.tree.root_addr();
        let (t0, t1, _) = ray.slab(root.min.as_dvec3(), root.max().as_dvec3())?;
        if t1 <= 0.0 || t0 > max_dist {
            return None;
        }
        let t_start = t0.max(0.0);
        let t_top = self.rise_limit(ray);
        if t_start >= t_top {
            return None;
        }
        let edge = self.cell_log2;
        // Cell boundaries as the slab test computes them: `(bound - origin) · inv`.
        let bound = |c: i32| f64::from(c << edge);
        let mut cell = IVec3::ZERO;
        let mut step = IVec3::ZERO;
        let mut t_exit = DVec3::splat(f64::INFINITY);
        for a in 0..3 {
            let (o, d, inv) = (ray.origin[a], ray.dir[a], ray.inv[a]);
            if d == 0.0 {
                // Inside the root's half-open slab on this axis (else the slab test failed).
                // (Truncation, not `floor`, a library call: they differ only below 0, where
                // both clamp to 0.)
                cell[a] = ((o as i64) >> edge).clamp(0, i64::from(self.n - 1)) as i32;
                continue;
            }
            step[a] = if d > 0.0 { 1 } else { -1 };
            let p = o + d * t_start;
            let mut c = ((p as i64) >> edge).clamp(0, i64::from(self.n - 1)) as i32;
            // The cell whose slab on this axis holds `t_start`, by the slab test's arithmetic
            // (the point's rounding may land a cell off).
            let near = |c: i32| (bound(if d > 0.0 { c } else { c + 1 }) - o) * inv;
            let far = |c: i32| (bound(if d > 0.0 { c + 1 } else { c }) - o) * inv;
            while far(c) <= t_start && (0..self.n).contains(&(c + step[a])) {
                c += step[a];
            }
            while near(c) > t_start && (0..self.n).contains(&(c - step[a])) {
                c -= step[a];
            }
            cell[a] = c;
            t_exit[a] = far(c);
        }
        loop {
            let id = self.cells[self.index(cell)];
            if id != 0 {
                let (addr, node) = self.nodes[id as usize - 1];
                if let Some((t, face)) = ray.enter(&addr, max_dist) {
                    if node.is_parent() {
                        if let Some(hit) = self.tree.cast(ray, node, addr, t, face, max_dist) {
                            return Some(hit);
                        }
                    } else {
                        return Some(Hit { addr, face, distance: t, cube: self.tree.decode(node) });
                    }
                }
            }
            let a = if t_exit.x <= t_exit.y && t_exit.x <= t_exit.z {
                0
            } else if t_exit.y <= t_exit.z {
                1
            } else {
                2
            };
            // Every leaf not yet met starts at or beyond this exit.
            if t_exit[a] > max_dist || t_exit[a] >= t_top || t_exit[a].is_nan() {
                return None;
            }
            cell[a] += step[a];
            if !(0..self.n).contains(&cell[a]) {
                return None;
            }
            let c = cell[a];
            let b = if step[a] > 0 { c + 1 } else { c };
            t_exit[a] = (bound(b) - ray.origin[a]) * ray.inv[a];
        }
    }
}
