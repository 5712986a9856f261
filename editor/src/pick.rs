//! What the pointer is over ([`Pick`]) and the modifier keys held ([`Mods`]): plain data the
//! viewport fills in and commands, tools and drag-and-drop read.

use glam::{DVec3, IVec3};

use pmfedit_core::map::coords::{CubeAddr, Face};
use pmfedit_core::map::level::LevelHit;
use pmfedit_core::map::octree::Cube;

/// Modifier keys held when a tool acts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Mods {
    pub shift: bool,
    pub ctrl: bool,
    pub alt: bool,
}

impl Mods {
    /// Only Shift held.
    pub const SHIFT: Mods = Mods { shift: true, ctrl: false, alt: false };
}

/// Whether a tool acts on the work plane (the grid every map shows, [`Pick::on_plane`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PlaneUse {
    /// Only on faces of the map.
    #[default]
    Never,
    /// On the face under the pointer, else on the work plane (the first click on an empty map
    /// places a cube).
    Fallback,
    /// On the work plane, whatever is in front of it.
    Always,
}

/// What the pointer is over: a solid leaf of a level and the face the view ray entered through.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pick {
    pub level: usize,
    /// The leaf hit (level lattice).
    pub addr: CubeAddr,
    pub face: Face,
    /// The hit point (level lattice, fractional).
    pub point: DVec3,
    pub cube: Cube,
}

impl Pick {
    /// From a ray-cast result.
    pub fn from_hit(level: usize, hit: &LevelHit) -> Self {
        Self { level, addr: hit.level_addr, face: hit.face, point: hit.point, cube: hit.cube }
    }

    /// Where a ray (level lattice origin, unit direction) meets the work plane `axis =
    /// plane` (level lattice), as a pick of the face of the empty cell behind the plane that
    /// looks at the ray: what tools act on where no geometry is ([`PlaneUse`]). `None` when the
    /// ray runs along the plane or away from it.
    pub fn on_plane(level: usize, origin: DVec3, dir: DVec3, axis: usize, plane: i32) -> Option<Self> {
        let d = dir[axis];
        if d.abs() < 1e-9 {
            return None;
        }
        let t = (f64::from(plane) - origin[axis]) / d;
        if t <= 0.0 {
            return None;
        }
        let mut point = origin + dir * t;
        point[axis] = f64::from(plane);
        // Seen from the positive side (the ray goes down the axis): the face of the cell below.
        let positive = d < 0.0;
        let mut min = point.floor().as_ivec3();
        min[axis] = if positive { plane - 1 } else { plane };
        let face = Face::from_index(axis + if positive { 0 } else { 3 })?;
        Some(Self { level, addr: CubeAddr { min, size_log2: 0 }, face, point, cube: Cube::EMPTY })
    }

    /// Outward face normal.
    pub fn normal(&self) -> IVec3 {
        self.face.normal()
    }

    /// The hit point clamped into the hit leaf (half a lattice unit inside every face).
    fn point_in_leaf(&self) -> DVec3 {
        let lo = self.addr.min.as_dvec3() + DVec3::splat(0.5);
        let hi = self.addr.max().as_dvec3() - DVec3::splat(0.5);
        self.point.clamp(lo, hi)
    }

    /// The grid cube (edge `2^size_log2`) just inside the hit face.
    pub fn inside(&self, size_log2: u8) -> CubeAddr {
        CubeAddr::containing(self.point_in_leaf().floor().as_ivec3(), size_log2)
    }

    /// The grid cube (edge `2^size_log2`) just outside the hit face, touching or beyond the face
    /// plane (a plane off the grid leaves a gap, as in Sauerbraten).
    pub fn outside(&self, size_log2: u8) -> CubeAddr {
        let e = 1i32 << size_log2;
        let mut min = CubeAddr::containing(self.point_in_leaf().floor().as_ivec3(), size_log2).min;
        let a = self.face.axis();
        if self.face.is_positive() {
            let plane = self.addr.max()[a];
            min[a] = plane.div_euclid(e) * e + if plane.rem_euclid(e) == 0 { 0 } else { e };
        } else {
            let plane = self.addr.min[a];
            min[a] = plane.div_euclid(e) * e - e;
        }
        CubeAddr { min, size_log2 }
    }
}

/// How far picking looks, map units.
pub const PICK_DISTANCE: f64 = 4000.0;
