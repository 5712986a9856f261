//! Phase 2 of [`mesh_chunk`](super::mesh_chunk): the PMF records of the faces phase 1 kept, a
//! [`MeshFace`] and its vertices per face and a [`CubeMesh`] per solid cube
//! (docs/spec/PMF-NOTES.md G1–G3).
//!
//! Phase 1's counts size every vector once. Vertex positions and texture coordinates are
//! computed by integers and one exact power-of-two product instead of the reference's `f64`
//! vector arithmetic: the same bits (tested against
//! [`mesh_chunk_reference`](super::mesh_chunk_reference)). A solid cube with no face costs its
//! `CubeMesh` only: its layout cube is not read.

use glam::{DVec3, IVec3};
use pmfedit_core::format::pmf::Vertex;
use pmfedit_core::map::Level;
use pmfedit_core::map::coords::{
    ChunkCoord, CubeAddr, Face, LATTICE_PER_UNIT, LATTICE_PER_UNIT_LOG2, MIN_CUBE_EDGE, octant_offset,
};
use pmfedit_core::map::octree::{CubeKind, MaterialId};

use super::faces::{EXTENDED, FACE_BITS, VisibleFaces};
use super::geometry::{FACE_CORNERS, TANGENTS, corner_steps, triangulate};
use super::model::{CubeMesh, FaceShape, Mesh, MeshFace};
use crate::layout::{BakeSettings, ChunkLayout};

/// [`FACE_CORNERS`] as offsets (0 or 1 per axis) from the cube's minimum corner.
const CORNER_OFFSETS: [[IVec3; 4]; 6] = corner_offsets();

const fn corner_offsets() -> [[IVec3; 4]; 6] {
    let mut out = [[IVec3::ZERO; 4]; 6];
    let mut f = 0;
    while f < 6 {
        let mut k = 0;
        while k < 4 {
            out[f][k] = octant_offset(FACE_CORNERS[f][k]);
            k += 1;
        }
        f += 1;
    }
    out
}

/// The mesh of the faces `faces` ([`visible_faces`](super::visible_faces) of the same chunk
/// and layout): phase 2 of [`mesh_chunk`](super::mesh_chunk), the same mesh bit for bit.
///
/// # Panics
/// If `faces` does not have one entry per solid cube of `layout`.
pub fn mesh_visible_faces(
    level: &Level,
    chunk: ChunkCoord,
    layout: &ChunkLayout,
    settings: &BakeSettings,
    faces: &VisibleFaces,
) -> Mesh {
    let mut mesh = Mesh::default();
    mesh_visible_faces_into(level, chunk, layout, settings, faces, &mut mesh);
    mesh
}

/// [`mesh_visible_faces`] into `mesh`, reusing its vectors (what it held is dropped): a caller
/// meshing chunk after chunk allocates (and has the kernel zero) its buffers once.
///
/// # Panics
/// If `faces` does not have one entry per solid cube of `layout`.
pub fn mesh_visible_faces_into(
    level: &Level,
    chunk: ChunkCoord,
    layout: &ChunkLayout,
    settings: &BakeSettings,
    faces: &VisibleFaces,
    mesh: &mut Mesh,
) {
    let solid = layout.solid_cubes();
    assert_eq!(faces.len(), solid.len(), "the visible faces of another layout");
    let frame = level.frame();
    let base = frame.chunk_min_lattice(chunk);
    let uv_scale = 2f64.powi(-i32::from(settings.texture_repeat_log2)) / f64::from(LATTICE_PER_UNIT);
    let e = Emitter {
        half: IVec3::splat(frame.chunk_edge() * 8),
        base_fine: (base.as_i64vec3() * 16).to_array(),
        fine_uv_scale: uv_scale / 16.0,
        uv_shift: i32::from(settings.texture_repeat_log2) + 4 + i32::from(LATTICE_PER_UNIT_LOG2),
        base_world: frame.world_from_lattice(base),
    };
    mesh.chunk_center = frame.chunk_center_world(chunk);
    mesh.vertices.clear();
    mesh.faces.clear();
    mesh.cubes.clear();
    mesh.vertices.reserve_exact(faces.vertex_count());
    mesh.faces.reserve_exact(faces.face_count());
    mesh.cubes.reserve_exact(solid.len());
    let Mesh { vertices, faces: out, cubes, .. } = mesh;
    for (&i, &packed) in solid.iter().zip(faces.packed()) {
        let bits = packed & FACE_BITS;
        let mut cm = CubeMesh {
            cube: i,
            extended: packed & EXTENDED != 0,
            first_vertex: vertices.len() as u32,
            face_bits: bits,
            triangle_counts: [0; 6],
            first_face: out.len() as u32,
            face_count: bits.count_ones() as u8,
        };
        if bits != 0 {
            let c = &layout.cubes()[i as usize];
            let cube = c.cube.as_ref().expect("a solid layout cube is a leaf");
            let mut left = bits;
            while left != 0 {
                let f = left.trailing_zeros() as usize;
                left &= left - 1;
                match &cube.kind {
                    CubeKind::Geometry(g) => {
                        let key = FaceKey {
                            cube: i,
                            addr: c.addr,
                            face: f,
                            material: g.material,
                            backfaces: cube.draw_backfaces,
                        };
                        e.quad(vertices, out, key);
                        cm.triangle_counts[f] = 2;
                    }
                    CubeKind::Extended(x) => {
                        let corners = FACE_CORNERS[f].map(|c| corner_steps(x, c));
                        let (tris, n) = triangulate(&corners);
                        debug_assert!(n > 0, "phase 1 drops collapsed faces");
                        let key = FaceKey {
                            cube: i,
                            addr: c.addr,
                            face: f,
                            material: x.face_materials[f],
                            backfaces: cube.draw_backfaces,
                        };
                        let shift = e.face(vertices, out, key);
                        let last = out.last_mut().expect("just pushed");
                        last.shape = FaceShape::Triangles(n as u8);
                        last.vertex_count = 3 * n as u32;
                        for t in &tris[..n] {
                            for &k in t {
                                vertices.push(e.vertex(f, c.addr.min * 16 + corners[k] * c.addr.edge(), shift));
                            }
                        }
                        cm.triangle_counts[f] = n as u8;
                    }
                    CubeKind::Empty => unreachable!("phase 1 gives air no face"),
                }
            }
        }
        cubes.push(cm);
    }
}

/// Which face a record is for: face `face` (index in face order) of the solid layout cube `cube`
/// at `addr`, of material `material`, drawn from both sides when `backfaces`.
#[derive(Debug, Clone, Copy)]
struct FaceKey {
    cube: u32,
    addr: CubeAddr,
    face: usize,
    material: MaterialId,
    backfaces: bool,
}

/// The chunk constants of vertex and face arithmetic.
struct Emitter {
    /// Half the chunk edge in 1/16 lattice units (vertex positions are relative to the center).
    half: IVec3,
    /// The chunk's minimum corner in 1/16 level lattice units (beyond `i32` in a big level).
    base_fine: [i64; 3],
    /// Texture repeats per 1/16 lattice unit (a power of two).
    fine_uv_scale: f64,
    /// `-log2(fine_uv_scale)`.
    uv_shift: i32,
    /// World position of the chunk's minimum corner.
    base_world: DVec3,
}

/// Map units per 1/16 lattice unit (a power of two).
const FINE_TO_UNITS: f32 = 1.0 / (16 * LATTICE_PER_UNIT) as f32;

impl Emitter {
    /// The level position of `fine` (1/16 chunk-local lattice units) along the texture tangent
    /// `which` (0: u, 1: v) of face `face`, in 1/16 lattice units.
    fn along(&self, face: usize, which: usize, fine: IVec3) -> i64 {
        let (axis, sign) = TANGENTS[face][which];
        i64::from(sign) * (self.base_fine[axis] + i64::from(fine[axis]))
    }

    /// Texture coordinate of a level position `along` a tangent (from [`along`](Self::along)),
    /// before the per-face shift. The level position in 1/16 lattice units is an integer, and
    /// scaling it by a power of two is exact, as is every step of the reference's `raw_uv`
    /// (positions below 2^35, zero only as `+0.0` in both), so the `f64`s are the same.
    fn uv(&self, along: i64) -> f64 {
        along as f64 * self.fine_uv_scale
    }

    /// `uv(along).floor()` by integers: for a scale `2^-k`, `k` in `0..63`, the floor of
    /// `along · 2^-k` is `along >> k` (exact in `f64` below 2^53); for `k < 0` the product is
    /// an integer already (and never `-0.0`).
    fn uv_floor(&self, along: i64) -> f64 {
        match self.uv_shift {
            k @ 0..63 => (along >> k) as f64,
            ..0 => self.uv(along),
            _ => self.uv(along).floor(),
        }
    }

    /// Chunk-center-relative position of `fine` (1/16 chunk-local lattice units). Below 2^24
    /// in magnitude (chunks of at most 2^18 lattice units), `fine - half` and its product by
    /// 2^-7 are exact in `f32`: the same value as the reference's `f64` quotient rounded to
    /// `f32`.
    fn position(&self, fine: IVec3) -> [f32; 3] {
        ((fine - self.half).as_vec3() * FINE_TO_UNITS).to_array()
    }

    /// The vertex at `fine` (1/16 chunk-local lattice units) of face `face`, whose texture
    /// shift is `shift`.
    fn vertex(&self, face: usize, fine: IVec3, shift: [f64; 2]) -> Vertex {
        let u = self.uv(self.along(face, 0, fine));
        let v = self.uv(self.along(face, 1, fine));
        Vertex {
            position: self.position(fine),
            uv: [(u - shift[0]) as f32, (v - shift[1]) as f32],
            lightmap_uv: [0.0; 2],
        }
    }

    /// Appends the record of face `key` (a quad; the caller sets the shape of a triangle face)
    /// and returns its whole-repeat texture shift.
    fn face(&self, vertices: &[Vertex], out: &mut Vec<MeshFace>, key: FaceKey) -> [f64; 2] {
        let c0 = CORNER_OFFSETS[key.face][0] * key.addr.edge() + key.addr.min;
        self.push_face(vertices, out, key, c0);
        [self.uv_floor(self.along(key.face, 0, c0 * 16)), self.uv_floor(self.along(key.face, 1, c0 * 16))]
    }

    /// Appends a quad's record; `c0`: its corner with the smallest (u, v), chunk-local lattice.
    #[inline]
    fn push_face(&self, vertices: &[Vertex], out: &mut Vec<MeshFace>, key: FaceKey, c0: IVec3) {
        let FaceKey { cube, addr, face, material, backfaces } = key;
        out.push(MeshFace {
            cube,
            first_vertex: vertices.len() as u32,
            vertex_count: 4,
            face: Face::ALL[face],
            shape: FaceShape::Quad,
            material,
            draw_backfaces: backfaces,
            // Both terms are multiples of 1/8 far below 2^50: the sum is exact, like the
            // reference's `world_from_lattice` (one product).
            origin: self.base_world + c0.as_dvec3() * MIN_CUBE_EDGE,
            size: f64::from(addr.edge()) / f64::from(LATTICE_PER_UNIT),
            lightmap: None,
        });
    }

    /// Appends face `key` of a plain geometry cube: its record and its four vertices
    /// (docs/spec/PMF-NOTES.md G2), corners `(u₀,v₀) (u₀,v₁) (u₁,v₁) (u₁,v₀)`.
    fn quad(&self, vertices: &mut Vec<Vertex>, out: &mut Vec<MeshFace>, key: FaceKey) {
        let FaceKey { addr, face, .. } = key;
        let offsets = &CORNER_OFFSETS[face];
        let c0 = offsets[0] * addr.edge() + addr.min;
        self.push_face(vertices, out, key, c0);
        // Along the tangents the corners are `u₀` or `u₀ + edge` (and `v` alike), exactly.
        let (u0, v0) = (self.along(face, 0, c0 * 16), self.along(face, 1, c0 * 16));
        let (su, sv) = (self.uv_floor(u0), self.uv_floor(v0));
        let e16 = i64::from(addr.edge()) * 16;
        let u = [(self.uv(u0) - su) as f32, (self.uv(u0 + e16) - su) as f32];
        let v = [(self.uv(v0) - sv) as f32, (self.uv(v0 + e16) - sv) as f32];
        let (min, e) = (addr.min * 16, addr.edge() * 16);
        let (lo, hi) = (self.position(min), self.position(min + e));
        let corner = |k: usize, (du, dv): (usize, usize)| {
            let o = offsets[k];
            Vertex {
                position: [
                    if o.x == 0 { lo[0] } else { hi[0] },
                    if o.y == 0 { lo[1] } else { hi[1] },
                    if o.z == 0 { lo[2] } else { hi[2] },
                ],
                uv: [u[du], v[dv]],
                lightmap_uv: [0.0; 2],
            }
        };
        vertices.extend_from_slice(&[corner(0, (0, 0)), corner(1, (0, 1)), corner(2, (1, 1)), corner(3, (1, 0))]);
    }
}
