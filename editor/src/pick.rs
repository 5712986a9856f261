//! What the pointer is over ([`Pick`]) and the modifier keys held ([`Mods`]): plain data the
//! viewport produces, the tools read and [`Command`](crate::command::Command)s carry.

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
