//! Building helpers of the sample maps: [`Site`] (positions in whole map units) and
//! [`smoothed_top`] (pushed corners that follow a heightfield).

use glam::IVec3;

use crate::map::coords::{CubeAddr, LATTICE_PER_UNIT, LatticeBox, LevelFrame};
use crate::map::octree::{CORNER_STEPS, Cube};

/// Positions in map units relative to a fixed lattice point (the world origin for [`demo`](super::demo)):
/// whole-unit boxes and cubes, so that building code reads in map units.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Site {
    /// Level lattice position of unit `(0, 0, 0)`.
    pub origin: IVec3,
}

impl Site {
    /// The site whose unit `(0, 0, 0)` is the world origin of `frame`.
    pub fn at_world_origin(frame: &LevelFrame) -> Site {
        Site { origin: frame.origin_lattice() }
    }

    /// Level lattice position of unit position `u`.
    pub fn lattice(&self, u: IVec3) -> IVec3 {
        self.origin + u * LATTICE_PER_UNIT
    }

    /// The lattice box of the unit box `[min, max)`.
    pub fn units(&self, min: [i32; 3], max: [i32; 3]) -> LatticeBox {
        LatticeBox::new(self.lattice(IVec3::from_array(min)), self.lattice(IVec3::from_array(max)))
    }

    /// The one-unit cube whose minimum corner is unit position `u`. The origin must be aligned
    /// to whole units.
    pub fn unit_cube(&self, u: IVec3) -> CubeAddr {
        CubeAddr::new(self.lattice(u), crate::map::coords::LATTICE_PER_UNIT_LOG2).expect("unit-aligned site")
    }
}

/// Surface smoothing of a heightfield column: the top cube of a column whose corner heights
/// (`corners[i]` for top corner `i` = 0..4 in PMF bit order, in map units) lie below its top
/// `top` gets those corners pushed down, at most one whole cube edge. Returns the pushed cube, or
/// `None` when every corner would be pushed to the bottom (the cube would be flat; leave it out).
pub(crate) fn smoothed_top(cube: Cube, top: i32, corners: [f32; 4]) -> Option<Cube> {
    let steps = corners.map(|h| {
        let d = ((top as f32 - h) * f32::from(CORNER_STEPS)).round();
        d.clamp(0.0, f32::from(CORNER_STEPS)) as i32
    });
    if steps.iter().all(|&s| s == i32::from(CORNER_STEPS)) {
        return None;
    }
    let mut c = cube;
    for (i, s) in steps.into_iter().enumerate() {
        if s != 0 {
            c = c.with_corner_pushed(i, [0, -s, 0]);
        }
    }
    Some(c)
}
