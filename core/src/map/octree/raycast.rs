//! Ray casting against one octree.

use glam::DVec3;

use super::{Cube, CubeAddr, Face, Node, Octree};

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

/// A ray with a normalized direction, prepared for slab tests.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ray {
    pub(crate) origin: DVec3,
    pub(crate) dir: DVec3,
    inv: DVec3,
}

impl Ray {
    /// `None` for a zero, infinite or NaN direction or a non-finite origin.
    pub(crate) fn new(origin: DVec3, dir: DVec3) -> Option<Ray> {
        let len = dir.length();
        if !(len > 0.0 && len.is_finite() && origin.is_finite()) {
            return None;
        }
        let dir = dir / len;
        Some(Ray { origin, dir, inv: dir.recip() })
    }

    /// The ray moved by `-offset` (into another lattice space).
    pub(crate) fn translated(&self, offset: DVec3) -> Ray {
        Ray { origin: self.origin - offset, ..*self }
    }

    /// The face a ray starting inside a cube reports: against its dominant axis.
    pub(crate) fn inside_face(&self) -> Face {
        let a = self.dir.abs();
        let axis = if a.x >= a.y && a.x >= a.z {
            0
        } else if a.y >= a.z {
            1
        } else {
            2
        };
        Face::from_axis(axis, self.dir[axis] < 0.0)
    }

    /// Entry and exit distances through the half-open box `[min, max)` and the entry face, or
    /// `None` if the ray's line misses it. The entry distance may be negative (origin inside or
    /// past the box).
    pub(crate) fn slab(&self, min: DVec3, max: DVec3) -> Option<(f64, f64, Face)> {
        let mut t0 = f64::NEG_INFINITY;
        let mut t1 = f64::INFINITY;
        let mut face = self.inside_face();
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
                face = Face::from_axis(axis, d < 0.0);
            }
            t1 = t1.min(far);
        }
        (t0 < t1).then_some((t0, t1, face))
    }

    /// [`slab`](Ray::slab) for a cube; `None` also when the cube lies behind the origin or
    /// beyond `max_dist`.
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

    pub(crate) fn ray_cast_prepared(&self, ray: &Ray, max_dist: f64) -> Option<Hit> {
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
