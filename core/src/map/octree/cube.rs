//! The value of one leaf cube.

use glam::Vec3;
use serde::{Deserialize, Serialize};

use crate::map::coords::{Face, octant_offset};
use crate::map::ids::{MaterialId, PathAttrs, PhysicsId, SoundId};

/// Pushed-corner steps per cube edge: a corner offset of `k` on an axis moves the corner by
/// `k · edge / 16` along that axis.
pub const CORNER_STEPS: i8 = 16;

/// A plain geometry cube: one material, physics material and sound material for all faces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Geometry {
    pub material: MaterialId,
    pub physics: PhysicsId,
    pub sound: SoundId,
}

/// An extended geometry cube: per-face materials and optionally pushed corners.
///
/// `corners[i]` is corner `i` (PMF bit order, docs/spec/PMF-NOTES.md C2) as its offset from the corner's rest
/// position, per axis, in steps of `edge / 16` ([`CORNER_STEPS`]), in world axis directions. A
/// corner stays inside its cube: on an axis where the corner rests on the + side the offset is in
/// `-16..=0`, on the − side in `0..=16` (the ends are the opposite face). Values outside are
/// clamped by every operation that stores a cube.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct ExtGeometry {
    /// Per face, PMF face order (+X, +Y, +Z, −X, −Y, −Z).
    pub face_materials: [MaterialId; 6],
    /// Per face, PMF face order.
    pub face_physics: [PhysicsId; 6],
    pub sound: SoundId,
    pub corners: [[i8; 3]; 8],
}

impl ExtGeometry {
    /// A full cube with every face of `g`'s materials and no pushed corner.
    pub fn from_geometry(g: Geometry) -> Self {
        Self { face_materials: [g.material; 6], face_physics: [g.physics; 6], sound: g.sound, corners: [[0; 3]; 8] }
    }

    /// Whether any corner is away from its rest position.
    pub fn has_pushed_corners(&self) -> bool {
        self.corners != [[0; 3]; 8]
    }

    /// The valid offset range of corner `corner` on `axis`.
    pub fn corner_range(corner: usize, axis: usize) -> (i8, i8) {
        if octant_offset(corner)[axis] == 1 { (-CORNER_STEPS, 0) } else { (0, CORNER_STEPS) }
    }

    /// Clamps every corner into its cube.
    pub fn clamp_corners(&mut self) {
        for (i, c) in self.corners.iter_mut().enumerate() {
            for (axis, v) in c.iter_mut().enumerate() {
                let (lo, hi) = Self::corner_range(i, axis);
                *v = (*v).clamp(lo, hi);
            }
        }
    }

    /// Position of corner `corner` relative to the cube center, for a cube of edge `edge` (in any
    /// unit; in map units this is exactly PMF's extended-geometry point, docs/spec/PMF-NOTES.md C4).
    pub fn corner_position(&self, corner: usize, edge: f32) -> Vec3 {
        let rest = (octant_offset(corner).as_vec3() - Vec3::splat(0.5)) * edge;
        let off = Vec3::new(
            f32::from(self.corners[corner][0]),
            f32::from(self.corners[corner][1]),
            f32::from(self.corners[corner][2]),
        );
        rest + off * (edge / f32::from(CORNER_STEPS))
    }
}

/// What a leaf cube is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum CubeKind {
    /// Air.
    #[default]
    Empty,
    /// A full solid cube of one material.
    Geometry(Geometry),
    /// A solid cube with per-face materials and/or pushed corners.
    Extended(ExtGeometry),
}

/// A leaf cube: its kind plus the per-leaf flags.
///
/// Stored cubes are always [normalized](Cube::normalized): an extended cube whose corners are
/// at rest and whose faces all agree is stored (and read back) as plain geometry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Cube {
    pub kind: CubeKind,
    /// PMF "draw backfaces" flag.
    pub draw_backfaces: bool,
    /// Pathfinding attributes (mostly on air cubes, docs/spec/PMF-NOTES.md P1).
    pub path: PathAttrs,
}

impl Cube {
    /// Plain air.
    pub const EMPTY: Cube = Cube { kind: CubeKind::Empty, draw_backfaces: false, path: PathAttrs::NONE };

    /// A plain solid cube.
    pub const fn solid(material: MaterialId, physics: PhysicsId, sound: SoundId) -> Cube {
        Cube {
            kind: CubeKind::Geometry(Geometry { material, physics, sound }),
            draw_backfaces: false,
            path: PathAttrs::NONE,
        }
    }

    /// Whether the cube is geometry (plain or extended).
    pub fn is_solid(&self) -> bool {
        !matches!(self.kind, CubeKind::Empty)
    }

    /// Whether the cube has pushed corners (its shape then depends on its size, so it is never
    /// merged with its siblings).
    pub fn has_pushed_corners(&self) -> bool {
        matches!(&self.kind, CubeKind::Extended(e) if e.has_pushed_corners())
    }

    /// The canonical form: corners clamped, and an extended cube with all corners at rest and
    /// equal faces turned into plain geometry.
    #[inline]
    pub fn normalized(self) -> Cube {
        // Air and plain geometry are always canonical (the common case of a chunk file's load).
        if matches!(self.kind, CubeKind::Extended(_)) { self.normalized_extended() } else { self }
    }

    /// [`Cube::normalized`] of an extended cube.
    fn normalized_extended(mut self) -> Cube {
        if let CubeKind::Extended(e) = &mut self.kind {
            e.clamp_corners();
            let m = e.face_materials[0];
            let p = e.face_physics[0];
            if !e.has_pushed_corners()
                && e.face_materials.iter().all(|&x| x == m)
                && e.face_physics.iter().all(|&x| x == p)
            {
                self.kind = CubeKind::Geometry(Geometry { material: m, physics: p, sound: e.sound });
            }
        }
        self
    }

    /// The same cube with every corner at rest (normalized).
    pub fn flattened(mut self) -> Cube {
        if let CubeKind::Extended(e) = &mut self.kind {
            e.corners = [[0; 3]; 8];
        }
        self.normalized()
    }

    /// Whether any face is painted `material`.
    pub fn uses_material(&self, material: MaterialId) -> bool {
        match &self.kind {
            CubeKind::Empty => false,
            CubeKind::Geometry(g) => g.material == material,
            CubeKind::Extended(e) => e.face_materials.contains(&material),
        }
    }

    /// Whether any face has physics material `physics`.
    pub fn uses_physics(&self, physics: PhysicsId) -> bool {
        match &self.kind {
            CubeKind::Empty => false,
            CubeKind::Geometry(g) => g.physics == physics,
            CubeKind::Extended(e) => e.face_physics.contains(&physics),
        }
    }

    /// Whether the cube has sound material `sound`.
    pub fn uses_sound(&self, sound: SoundId) -> bool {
        match &self.kind {
            CubeKind::Empty => false,
            CubeKind::Geometry(g) => g.sound == sound,
            CubeKind::Extended(e) => e.sound == sound,
        }
    }

    /// The cube with its material, physics and sound ids passed through the maps (air stays
    /// air), normalized.
    pub fn with_ids_mapped(
        self,
        material: impl Fn(MaterialId) -> MaterialId,
        physics: impl Fn(PhysicsId) -> PhysicsId,
        sound: impl Fn(SoundId) -> SoundId,
    ) -> Cube {
        let mut c = self;
        match &mut c.kind {
            CubeKind::Empty => return self,
            CubeKind::Geometry(g) => {
                *g = Geometry { material: material(g.material), physics: physics(g.physics), sound: sound(g.sound) };
            }
            CubeKind::Extended(e) => {
                e.face_materials = e.face_materials.map(&material);
                e.face_physics = e.face_physics.map(&physics);
                e.sound = sound(e.sound);
            }
        }
        c.normalized()
    }

    /// The material of `face`, `None` for air.
    pub fn face_material(&self, face: Face) -> Option<MaterialId> {
        match &self.kind {
            CubeKind::Empty => None,
            CubeKind::Geometry(g) => Some(g.material),
            CubeKind::Extended(e) => Some(e.face_materials[face.index()]),
        }
    }

    /// The cube with `face` painted `material` (air stays air), normalized.
    pub fn with_face_material(self, face: Face, material: MaterialId) -> Cube {
        let mut c = self;
        match &mut c.kind {
            CubeKind::Empty => return self,
            CubeKind::Geometry(g) => {
                if g.material == material {
                    return self;
                }
                let mut e = ExtGeometry::from_geometry(*g);
                e.face_materials[face.index()] = material;
                c.kind = CubeKind::Extended(e);
            }
            CubeKind::Extended(e) => e.face_materials[face.index()] = material,
        }
        c.normalized()
    }

    /// The cube with every face painted `material` (air stays air), normalized.
    pub fn with_material(self, material: MaterialId) -> Cube {
        let mut c = self;
        match &mut c.kind {
            CubeKind::Empty => {}
            CubeKind::Geometry(g) => g.material = material,
            CubeKind::Extended(e) => e.face_materials = [material; 6],
        }
        c.normalized()
    }

    /// The cube with corner `corner` (0..8, PMF bit order) moved by `delta` steps of edge/16 per
    /// axis, clamped inside the cube (air stays air), normalized: pulling every corner back to
    /// rest turns an extended cube with equal faces back into plain geometry.
    pub fn with_corner_pushed(self, corner: usize, delta: [i32; 3]) -> Cube {
        let mut c = self;
        let e = match &mut c.kind {
            CubeKind::Empty => return self,
            CubeKind::Geometry(g) => {
                c.kind = CubeKind::Extended(ExtGeometry::from_geometry(*g));
                match &mut c.kind {
                    CubeKind::Extended(e) => e,
                    _ => unreachable!(),
                }
            }
            CubeKind::Extended(e) => e,
        };
        for (axis, d) in delta.iter().enumerate() {
            let (lo, hi) = ExtGeometry::corner_range(corner, axis);
            let v = i32::from(e.corners[corner][axis]) + d;
            e.corners[corner][axis] = v.clamp(i32::from(lo), i32::from(hi)) as i8;
        }
        c.normalized()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corner_positions_relative_to_center() {
        let e = ExtGeometry::from_geometry(Geometry::default());
        assert_eq!(e.corner_position(0, 2.0), Vec3::new(1.0, 1.0, 1.0));
        assert_eq!(e.corner_position(7, 2.0), Vec3::new(-1.0, -1.0, -1.0));
        assert_eq!(e.corner_position(1, 2.0), Vec3::new(-1.0, 1.0, 1.0));
        let c = Cube::solid(MaterialId(1), PhysicsId(0), SoundId(0)).with_corner_pushed(0, [0, -8, 0]);
        let CubeKind::Extended(e) = c.kind else { panic!("not extended") };
        assert_eq!(e.corner_position(0, 2.0), Vec3::new(1.0, 0.0, 1.0));
        // Clamped inside the cube.
        let c = c.with_corner_pushed(0, [5, -100, 0]);
        let CubeKind::Extended(e) = c.kind else { panic!("not extended") };
        assert_eq!(e.corners[0], [0, -16, 0]);
    }

    #[test]
    fn push_then_pull_restores_plain_geometry() {
        let plain = Cube::solid(MaterialId(3), PhysicsId(1), SoundId(2));
        let pushed = plain.with_corner_pushed(5, [3, 2, -1]);
        assert!(pushed.has_pushed_corners());
        assert_eq!(pushed.with_corner_pushed(5, [-3, -2, 1]), plain);
        // Pulling past rest clamps at rest.
        assert_eq!(pushed.with_corner_pushed(5, [-30, -20, 10]), plain);
    }

    #[test]
    fn painting_normalizes() {
        let plain = Cube::solid(MaterialId(3), PhysicsId(1), SoundId(2));
        let painted = plain.with_face_material(Face::NegZ, MaterialId(4));
        assert!(matches!(painted.kind, CubeKind::Extended(_)));
        assert_eq!(painted.face_material(Face::NegZ), Some(MaterialId(4)));
        assert_eq!(painted.face_material(Face::PosZ), Some(MaterialId(3)));
        assert_eq!(painted.with_face_material(Face::NegZ, MaterialId(3)), plain);
        assert_eq!(painted.with_material(MaterialId(9)), plain.with_material(MaterialId(9)));
        assert_eq!(Cube::EMPTY.with_material(MaterialId(2)), Cube::EMPTY);
    }
}
