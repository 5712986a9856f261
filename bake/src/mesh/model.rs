//! What meshing produces: a chunk's [`Mesh`] (PMF vertices, per-cube face runs) and its
//! [`MeshFace`]s with their world squares, for the lighting stage's lightmap assignment.

use glam::{DVec3, Vec3};
use pmfedit_core::format::pmf::Vertex;
use pmfedit_core::map::coords::Face;
use pmfedit_core::map::octree::MaterialId;

use super::geometry::tangent;

/// Index of a face in [`Mesh::faces`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FaceId(pub u32);

/// A rectangle of a lightmap page, in `[0, 1]` texture coordinates (docs/spec/PMF-NOTES.md G1).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LightmapRect {
    /// Corner for the face square's smallest (u, v).
    pub min: [f32; 2],
    /// Corner for the face square's largest (u, v).
    pub max: [f32; 2],
}

/// How a face's vertices are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaceShape {
    /// Four vertices of a geometry cube face, triangles `(0,1,2)`, `(0,2,3)`.
    Quad,
    /// `n` triangles of three vertices (extended geometry), `n` in 1..=2.
    Triangles(u8),
}

/// One emitted face.
#[derive(Debug, Clone, PartialEq)]
pub struct MeshFace {
    /// The cube's index in the chunk layout.
    pub cube: u32,
    /// First vertex in [`Mesh::vertices`].
    pub first_vertex: u32,
    /// Number of vertices (4 for a quad, 3 per triangle).
    pub vertex_count: u32,
    /// Which face of the cube.
    pub face: Face,
    /// Vertex grouping.
    pub shape: FaceShape,
    /// The face's material (library id).
    pub material: MaterialId,
    /// The cube's "draw backfaces" flag.
    pub draw_backfaces: bool,
    /// World position (map units from the level origin, docs/spec/PMF-NOTES.md L4) of the face square's corner
    /// with the smallest (u, v). For a pushed face, the square is the cube face at rest; the
    /// face's vertices project inside it.
    pub origin: DVec3,
    /// Edge of the face square in map units.
    pub size: f64,
    /// Assigned lightmap page and rectangle, once [`Mesh::assign_lightmap`] ran.
    pub lightmap: Option<(u8, LightmapRect)>,
}

impl MeshFace {
    /// Unit tangent along which texture `u` grows (and lightmap `u`, see
    /// [`Mesh::assign_lightmap`]).
    pub fn u_dir(&self) -> DVec3 {
        tangent(self.face, 0).as_dvec3()
    }

    /// Unit tangent along which texture `v` grows.
    pub fn v_dir(&self) -> DVec3 {
        tangent(self.face, 1).as_dvec3()
    }

    /// Outward unit normal of the face square.
    pub fn normal(&self) -> DVec3 {
        self.face.normal().as_dvec3()
    }

    /// World position of the point at `(s, t)` of the face square, `s` and `t` in `[0, 1]`
    /// along [`u_dir`](Self::u_dir) and [`v_dir`](Self::v_dir): where a luxel of a lightmap rect
    /// lands.
    pub fn square_point(&self, s: f64, t: f64) -> DVec3 {
        self.origin + (self.u_dir() * s + self.v_dir() * t) * self.size
    }
}

/// The geometry of one solid cube of the layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CubeMesh {
    /// The cube's index in the chunk layout.
    pub cube: u32,
    /// Whether the cube is extended geometry (triangles) rather than plain geometry (quads).
    pub extended: bool,
    /// First vertex of its first face (the running vertex count if it has none).
    pub first_vertex: u32,
    /// Visible face bits, bit `i` = face `i` in PMF order.
    pub face_bits: u8,
    /// Triangles per face, PMF face order (2 per visible face for plain geometry).
    pub triangle_counts: [u8; 6],
    /// Its faces in [`Mesh::faces`]: `first_face..first_face + face_count`.
    pub first_face: u32,
    /// Number of emitted faces.
    pub face_count: u8,
}

/// The mesh of one chunk. See the [module documentation](super).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Mesh {
    /// World position of the chunk center (vertex positions are relative to it).
    pub chunk_center: DVec3,
    /// The chunk's vertex array (PMF client chunk data).
    pub vertices: Vec<Vertex>,
    /// Emitted faces, in vertex order.
    pub faces: Vec<MeshFace>,
    /// One per solid cube of the layout, in layout order.
    pub cubes: Vec<CubeMesh>,
}

impl Mesh {
    /// The face with this id.
    pub fn face(&self, id: FaceId) -> &MeshFace {
        &self.faces[id.0 as usize]
    }

    /// The vertices of a face.
    pub fn face_vertices(&self, id: FaceId) -> &[Vertex] {
        let f = self.face(id);
        &self.vertices[f.first_vertex as usize..(f.first_vertex + f.vertex_count) as usize]
    }

    /// World positions of a face's vertices (4 quad corners, or 3 per triangle).
    pub fn world_corners(&self, id: FaceId) -> Vec<DVec3> {
        self.face_vertices(id).iter().map(|v| self.chunk_center + Vec3::from_array(v.position).as_dvec3()).collect()
    }

    /// Every face id, in order.
    pub fn face_ids(&self) -> impl ExactSizeIterator<Item = FaceId> + use<> {
        (0..self.faces.len() as u32).map(FaceId)
    }

    /// The mesh of the layout cube `cube`, if it is solid.
    pub fn cube_mesh(&self, cube: u32) -> Option<&CubeMesh> {
        self.cubes.binary_search_by_key(&cube, |c| c.cube).ok().map(|i| &self.cubes[i])
    }

    /// Number of quads (geometry cube faces).
    pub fn quad_count(&self) -> usize {
        self.faces.iter().filter(|f| f.shape == FaceShape::Quad).count()
    }

    /// Number of triangles drawn (2 per quad).
    pub fn triangle_count(&self) -> usize {
        self.faces
            .iter()
            .map(|f| match f.shape {
                FaceShape::Quad => 2,
                FaceShape::Triangles(n) => usize::from(n),
            })
            .sum()
    }

    /// A triangle index list over [`Mesh::vertices`] (for viewers): quads as `(0,1,2)`,
    /// `(0,2,3)`, triangles as they are.
    pub fn triangle_indices(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.triangle_count() * 3);
        for f in &self.faces {
            let v = f.first_vertex;
            match f.shape {
                FaceShape::Quad => out.extend_from_slice(&[v, v + 1, v + 2, v, v + 2, v + 3]),
                FaceShape::Triangles(_) => out.extend(v..v + f.vertex_count),
            }
        }
        out
    }

    /// Puts face `face` on lightmap page `page`, mapping its square onto `rect` (the square's
    /// smallest (u, v) corner to `rect.min`): fills the lightmap UVs of its vertices.
    pub fn assign_lightmap(&mut self, face: FaceId, page: u8, rect: LightmapRect) {
        let f = &mut self.faces[face.0 as usize];
        f.lightmap = Some((page, rect));
        let (origin, u_dir, v_dir, size) = (f.origin - self.chunk_center, f.u_dir(), f.v_dir(), f.size);
        let range = f.first_vertex as usize..(f.first_vertex + f.vertex_count) as usize;
        for v in &mut self.vertices[range] {
            let d = Vec3::from_array(v.position).as_dvec3() - origin;
            let s = (d.dot(u_dir) / size).clamp(0.0, 1.0) as f32;
            let t = (d.dot(v_dir) / size).clamp(0.0, 1.0) as f32;
            v.lightmap_uv =
                [rect.min[0] + s * (rect.max[0] - rect.min[0]), rect.min[1] + t * (rect.max[1] - rect.min[1])];
        }
    }
}
