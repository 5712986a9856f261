//! The cube clipboard of the select tool: the leaves of a box (clipped to it), relative to its
//! minimum corner, with mirror and 90° rotation.

use glam::IVec3;

use pmfedit_core::edit::CubeOp;
use pmfedit_core::map::Level;
use pmfedit_core::map::coords::{CubeAddr, Face, LatticeBox, octant_index, octant_offset};
use pmfedit_core::map::octree::{Cube, CubeKind};

use super::cube_edit;
use crate::command::Command;

/// Copied cubes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Clipboard {
    /// Extent in lattice units.
    pub size: IVec3,
    /// Solid pieces, boxes relative to the copied box's minimum corner. A leaf cut by the box
    /// edge loses its pushed corners (only its inside part is copied).
    pub pieces: Vec<(LatticeBox, Cube)>,
}

impl Clipboard {
    /// Copies the solid cubes of `region`.
    pub fn copy(level: &Level, region: LatticeBox) -> Clipboard {
        let frame = level.frame();
        let mut pieces = Vec::new();
        if !region.is_empty() {
            let lo = frame.chunk_from_lattice(region.min).as_ivec3();
            let hi = frame.chunk_from_lattice(region.max - IVec3::ONE).as_ivec3();
            for (c, chunk) in level.chunks() {
                let ci = c.as_ivec3();
                if ci.cmplt(lo).any() || ci.cmpgt(hi).any() {
                    continue;
                }
                let base = frame.chunk_min_lattice(*c);
                for (addr, cube) in chunk.octree().leaves() {
                    if !cube.is_solid() {
                        continue;
                    }
                    let b = addr.lattice_box().translated(base);
                    let inside = b.intersection(&region);
                    if inside.is_empty() {
                        continue;
                    }
                    let cube = if inside == b { cube } else { cube.flattened() };
                    pieces.push((inside.translated(-region.min), cube));
                }
            }
        }
        Clipboard { size: region.max - region.min, pieces }
    }

    /// Whether nothing was copied (not even air).
    pub fn is_empty(&self) -> bool {
        self.size.cmple(IVec3::ZERO).any()
    }

    /// The edits that write the clipboard with its minimum corner at `dest` (level lattice): the
    /// destination box is cleared, then every piece filled. Cubes with pushed corners keep them
    /// when they land aligned to their edge.
    pub fn paste(&self, level: usize, dest: IVec3) -> Vec<Command> {
        if self.is_empty() {
            return Vec::new();
        }
        let mut out = vec![cube_edit(level, CubeOp::ClearBox { region: LatticeBox::new(dest, dest + self.size) })];
        for (b, cube) in &self.pieces {
            let b = b.translated(dest);
            let d = b.max - b.min;
            let aligned = (d.x == d.y && d.y == d.z && d.x.count_ones() == 1)
                .then(|| CubeAddr::new(b.min, d.x.trailing_zeros() as u8))
                .flatten();
            let op = match aligned {
                Some(addr) if cube.has_pushed_corners() => CubeOp::SetCube { addr, cube: *cube },
                _ => CubeOp::FillBox { region: b, cube: cube.flattened() },
            };
            out.push(cube_edit(level, op));
        }
        out
    }

    /// Mirrored along `axis` (0 = X, 1 = Y, 2 = Z).
    pub fn mirrored(&self, axis: usize) -> Clipboard {
        let f = move |v: IVec3| {
            let mut v = v;
            v[axis] = -v[axis];
            v
        };
        let size = self.size;
        let boxes = move |b: LatticeBox| {
            let mut n = b;
            n.min[axis] = size[axis] - b.max[axis];
            n.max[axis] = size[axis] - b.min[axis];
            n
        };
        self.transformed(size, boxes, f)
    }

    /// Rotated 90° about +Y (X becomes −Z, Z becomes X).
    pub fn rotated(&self) -> Clipboard {
        let f = |v: IVec3| IVec3::new(v.z, v.y, -v.x);
        let size = self.size;
        let boxes = move |b: LatticeBox| {
            LatticeBox::new(
                IVec3::new(b.min.z, b.min.y, size.x - b.max.x),
                IVec3::new(b.max.z, b.max.y, size.x - b.min.x),
            )
        };
        self.transformed(IVec3::new(size.z, size.y, size.x), boxes, f)
    }

    fn transformed(
        &self,
        size: IVec3,
        boxes: impl Fn(LatticeBox) -> LatticeBox,
        f: impl Fn(IVec3) -> IVec3 + Copy,
    ) -> Clipboard {
        Clipboard { size, pieces: self.pieces.iter().map(|(b, c)| (boxes(*b), transform_cube(*c, f))).collect() }
    }
}

/// A cube under a signed axis permutation `f` (a mirror or a rotation of the lattice): face
/// materials and pushed corners move with it.
pub fn transform_cube(cube: Cube, f: impl Fn(IVec3) -> IVec3) -> Cube {
    let mut out = cube;
    if let CubeKind::Extended(e) = &cube.kind {
        let mut n = *e;
        for face in Face::ALL {
            let to = face_of(f(face.normal()));
            n.face_materials[to.index()] = e.face_materials[face.index()];
            n.face_physics[to.index()] = e.face_physics[face.index()];
        }
        for i in 0..8 {
            let signs = octant_offset(i) * 2 - IVec3::ONE;
            let j = octant_index((f(signs) + IVec3::ONE) / 2);
            let c = e.corners[i];
            let v = f(IVec3::new(i32::from(c[0]), i32::from(c[1]), i32::from(c[2])));
            n.corners[j] = [v.x as i8, v.y as i8, v.z as i8];
        }
        out.kind = CubeKind::Extended(n);
    }
    out.normalized()
}

fn face_of(n: IVec3) -> Face {
    let axis = if n.x != 0 {
        0
    } else if n.y != 0 {
        1
    } else {
        2
    };
    Face::from_axis(axis, n[axis] > 0)
}
