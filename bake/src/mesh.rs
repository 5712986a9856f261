//! Meshing: the visible faces of one chunk's geometry as PMF vertices (docs/spec/PMF-NOTES.md G1–G4).
//!
//! [`mesh_chunk`] walks the solid cubes of a [`ChunkLayout`] in array order and emits, per cube,
//! its visible faces in face order (+X, +Y, +Z, −X, −Y, −Z, C5):
//!
//! - **Geometry cubes**: one quad (4 vertices) per visible face (G2). Corners wind
//!   counter-clockwise seen from outside; triangles are `(0,1,2)` and `(0,2,3)`; the first corner
//!   has the smallest texture (u, v) and the order is `(u₀,v₀) (u₀,v₁) (u₁,v₁) (u₁,v₀)`.
//! - **Extended geometry cubes**: per face 0–2 triangles of 3 vertices, counter-clockwise from
//!   outside (G3). A planar face is split along the 0–2 diagonal (or along 1–3 if its outline is
//!   concave at corner 1 or 3); a non-planar face is split along the diagonal that makes it bulge
//!   outward (convex). Degenerate triangles are dropped, so a face collapsed to a line or a point
//!   has no triangles. The arithmetic is exact (integer corner positions in steps of edge/16).
//!
//! # Culling (G4)
//! A face is culled when the space on the other side of its square, across chunk borders too, is
//! covered: every neighbouring leaf touching the square covers its part of it. A neighbour covers
//! when its touching face is flat and full (plain geometry, or extended geometry whose four
//! corners of that face are at rest), or, for an extended face lying in its boundary plane, when a
//! neighbour of the same size touches it with a face of the very same outline (slopes side by
//! side: both faces are hidden inside the solid); other pushed neighbours never cover,
//! conservatively. And:
//! - for an opaque face (material neither transparent nor liquid): the neighbour's touching face
//!   material is opaque;
//! - for a transparent or liquid face: the neighbour's touching face has the **same** material
//!   (G4: such faces are kept against different materials, culled against the same one).
//!
//! So glass next to stone keeps both faces (the stone is seen through the glass; the glass face
//! is kept as G4 says), water next to glass keeps both, glass against glass culls both. A face of
//! an extended cube that does not lie in its cube's boundary plane (a corner pushed along the
//! face normal) is never culled.
//!
//! **Two phases**: [`mesh_chunk`] is [`visible_faces`] then [`mesh_visible_faces`], both public.
//! Phase 1 decides which faces are seen (the step `block-mesh` does) on a padded dense grid of
//! cells over the chunk and a one-cell border from its six neighbours (cell edge: the chunk's
//! smallest solid leaf, at most 32 cells a side), kept as bit rows: an opaque face with an open
//! cell across it (air, or plain geometry of a clear material) is kept, one with only opaque
//! cells across it is culled, a clear face is culled by plain geometry of its own material only;
//! faces looking at mixed cells (pushed corners, leaves smaller than a cell), and those of leaves
//! smaller than a cell, ask the leaves one by one as [`mesh_chunk_reference`] does for every face
//! (see the `faces` module). Its result, [`VisibleFaces`], is per solid cube the faces emitted
//! and the face and vertex counts. Phase 2 writes the records into vectors sized once from those
//! counts, vertex positions and texture coordinates by integers and one exact power-of-two
//! product instead of the reference's `f64` vector arithmetic. Both give the reference's mesh,
//! bit for bit (tested).
//!
//! **Partial coverage**: a face is emitted whole if any part of it is uncovered. PMF draws a
//! geometry cube's face as one quad, so a face cannot be split without changing the octree; the
//! cost is some overdraw (and T-junctions where a big face meets smaller ones).
//!
//! Lattice cells outside the level grid and chunks missing from the level are air.
//! `draw_backfaces` is a cube flag only: it adds no geometry.
//!
//! # Coordinates
//! Vertex positions are relative to the chunk center in map units (G1), exact in `f32`. Texture
//! coordinates are planar projections of the level lattice position (the grid's minimum corner,
//! not the movable world origin, so moving the center chunk does not shift textures) onto the
//! face's tangents, one repeat per `2^texture_repeat_log2` map units, then shifted by a whole
//! number of repeats per face so that the face's smallest (u, v) lies in `[0, 1)`; that keeps
//! `f32` precision anywhere in a huge level and samples the same texels. Tangents are chosen so
//! that textures are upright and unmirrored seen from outside: walls have `v` pointing down (−Y),
//! floors (+Y) have `u` = +X, `v` = +Z, ceilings (−Y) `u` = +X, `v` = −Z.
//!
//! # Lightmaps
//! Lightmap coordinates start at `(0, 0)`. Each emitted face is a [`MeshFace`] with a [`FaceId`],
//! its world-space square (origin, tangents, size) and its vertices; the lighting stage packs the
//! faces into pages and calls [`Mesh::assign_lightmap`], which maps the face square onto a
//! rectangle of a page. A geometry cube has one lightmap index for all its faces in PMF, so all
//! faces of one geometry cube must go to the same page.

use glam::{DVec3, IVec3, Vec3};
use pmfedit_core::format::pmf::Vertex;
use pmfedit_core::map::Level;
use pmfedit_core::map::Library;
use pmfedit_core::map::coords::{
    ChunkCoord, CubeAddr, Face, LATTICE_PER_UNIT, LevelFrame, octant_index, octant_offset,
};
use pmfedit_core::map::octree::{CORNER_STEPS, Cube, CubeKind, ExtGeometry, MaterialId, Octree};

use crate::layout::{BakeSettings, ChunkLayout};

mod faces;
mod records;

pub use faces::{VisibleFaces, visible_faces};
pub use records::{mesh_visible_faces, mesh_visible_faces_into};

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

/// The mesh of one chunk. See the [module documentation](self).
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

/// Whether a material hides what is behind it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Opacity {
    Opaque,
    /// Transparent or liquid (G4).
    Clear,
}

/// Per material id, opaque or clear. Ids missing from the library count as opaque.
#[derive(Debug, Clone)]
struct Materials(Vec<Opacity>);

impl Materials {
    fn new(library: &Library) -> Self {
        let t = library.materials();
        let len = t.ids().next_back().map_or(0, |id| id.index() + 1);
        let mut v = vec![Opacity::Opaque; len];
        for (id, m) in t.iter() {
            if m.transparent || m.liquid {
                v[id.index()] = Opacity::Clear;
            }
        }
        Self(v)
    }

    fn get(&self, m: MaterialId) -> Opacity {
        self.0.get(m.index()).copied().unwrap_or(Opacity::Opaque)
    }
}

/// Texture tangents of each face (axis, sign) for u and v; `u × v = −normal`, which makes
/// `(u₀,v₀) (u₀,v₁) (u₁,v₁) (u₁,v₀)` counter-clockwise seen from outside.
const TANGENTS: [[(usize, i32); 2]; 6] = [
    [(2, -1), (1, -1)], // +X: u = −Z, v = −Y
    [(0, 1), (2, 1)],   // +Y: u = +X, v = +Z
    [(0, 1), (1, -1)],  // +Z: u = +X, v = −Y
    [(2, 1), (1, -1)],  // −X: u = +Z, v = −Y
    [(0, 1), (2, -1)],  // −Y: u = +X, v = −Z
    [(0, -1), (1, -1)], // −Z: u = −X, v = −Y
];

/// The corners (PMF bit order) of each face in vertex order: `(u₀,v₀) (u₀,v₁) (u₁,v₁) (u₁,v₀)`.
pub const FACE_CORNERS: [[usize; 4]; 6] = face_corners();

const fn face_corners() -> [[usize; 4]; 6] {
    let mut out = [[0; 4]; 6];
    let uv = [(0, 0), (0, 1), (1, 1), (1, 0)];
    let mut f = 0;
    while f < 6 {
        let mut k = 0;
        while k < 4 {
            let mut o = [0i32; 3];
            o[f % 3] = if f < 3 { 1 } else { 0 };
            let [(ua, us), (va, vs)] = TANGENTS[f];
            let (su, sv) = uv[k];
            o[ua] = if us > 0 { su } else { 1 - su };
            o[va] = if vs > 0 { sv } else { 1 - sv };
            out[f][k] = octant_index(IVec3::new(o[0], o[1], o[2]));
            k += 1;
        }
        f += 1;
    }
    out
}

fn tangent(face: Face, which: usize) -> IVec3 {
    let (axis, sign) = TANGENTS[face.index()][which];
    let mut v = IVec3::ZERO;
    v[axis] = sign;
    v
}

/// Reads leaves around one chunk: its own octree, then the face-adjacent chunks of the level.
struct Neighbourhood<'a> {
    level: &'a Level,
    frame: LevelFrame,
    /// Level lattice position of the chunk's minimum corner.
    base: IVec3,
    edge: i32,
    own: Option<&'a Octree>,
}

impl<'a> Neighbourhood<'a> {
    /// The neighbourhood of chunk `chunk` of `level`.
    fn new(level: &'a Level, chunk: ChunkCoord) -> Self {
        let frame = level.frame();
        let base = frame.chunk_min_lattice(chunk);
        Neighbourhood { level, frame, base, edge: frame.chunk_edge(), own: level.chunk(chunk).map(|c| c.octree()) }
    }

    /// Whether `face` of the leaf at `addr` (chunk-local; material `mat`; `outline`: the face's
    /// corners when it is an extended face in its plane, see [`Neighbourhood::covered`]) passes
    /// culling, asking the leaves across it (docs/spec/PMF-NOTES.md G4).
    fn face_visible(
        &self,
        addr: CubeAddr,
        face: Face,
        mat: MaterialId,
        mats: &Materials,
        outline: Option<&[IVec3; 4]>,
    ) -> bool {
        let mut min = addr.min;
        let axis = face.axis();
        min[axis] = if face.is_positive() { addr.max()[axis] } else { addr.min[axis] - 1 };
        !self.covered(min, addr.size_log2, face, mat, mats, outline)
    }

    /// The leaf holding chunk-local position `p` (possibly outside this chunk), with its address
    /// in this chunk's local space. Outside the grid and in missing chunks: air.
    fn leaf(&self, p: IVec3) -> (Cube, CubeAddr) {
        if p.cmpge(IVec3::ZERO).all() && p.cmplt(IVec3::splat(self.edge)).all() {
            return match self.own {
                Some(o) => o.get(p).expect("inside the chunk"),
                None => (Cube::EMPTY, CubeAddr { min: IVec3::ZERO, size_log2: self.frame.chunk_lattice_log2() }),
            };
        }
        let q = self.base + p;
        let c = self.frame.chunk_from_lattice(q);
        let base = self.frame.chunk_min_lattice(c);
        let whole = CubeAddr { min: base - self.base, size_log2: self.frame.chunk_lattice_log2() };
        if !c.is_in_grid() {
            return (Cube::EMPTY, whole);
        }
        match self.level.chunk(c) {
            Some(ch) => {
                let (cube, a) = ch.octree().get(q - base).expect("inside the chunk");
                (cube, a.translated(base - self.base))
            }
            None => (Cube::EMPTY, whole),
        }
    }

    /// Whether the square of edge `2^size_log2` at `min` (chunk-local, one cell thick on axis
    /// `face.axis()`) is covered, for a face of material `mat` looking through it. `face` is the
    /// face of the looking cube; the neighbours touch it with `face.opposite()`.
    ///
    /// `outline` is the looking face's corners (chunk-local 1/16 lattice units) when it is an
    /// extended face in its boundary plane: then a neighbour of the same size whose touching face
    /// has the very same outline covers it too (terrain slopes side by side).
    fn covered(
        &self,
        min: IVec3,
        size_log2: u8,
        face: Face,
        mat: MaterialId,
        mats: &Materials,
        outline: Option<&[IVec3; 4]>,
    ) -> bool {
        let (cube, addr) = self.leaf(min);
        if let (CubeKind::Extended(e), Some(outline)) = (&cube.kind, outline)
            && addr.size_log2 == size_log2
            && !face_at_rest(e, face.opposite())
        {
            let touching = face.opposite();
            return same_outline(outline, &ext_face_outline(e, addr, touching))
                && covers_material(e.face_materials[touching.index()], mat, mats);
        }
        if !covers(&cube, face.opposite(), mat, mats) {
            return false;
        }
        if addr.size_log2 >= size_log2 {
            return true;
        }
        let h = 1 << (size_log2 - 1);
        let (a, b) = ((face.axis() + 1) % 3, (face.axis() + 2) % 3);
        [(0, 0), (1, 0), (0, 1), (1, 1)].into_iter().all(|(da, db)| {
            let mut p = min;
            p[a] += da * h;
            p[b] += db * h;
            self.covered(p, size_log2 - 1, face, mat, mats, None)
        })
    }
}

/// Whether `cube`'s face `touching` hides a face of material `mat` lying against it (G4).
fn covers(cube: &Cube, touching: Face, mat: MaterialId, mats: &Materials) -> bool {
    let m = match &cube.kind {
        CubeKind::Empty => return false,
        CubeKind::Geometry(g) => g.material,
        CubeKind::Extended(e) => {
            if !face_at_rest(e, touching) {
                return false;
            }
            e.face_materials[touching.index()]
        }
    };
    covers_material(m, mat, mats)
}

/// Whether a touching face of material `m` that covers the whole of a face of material `mat`
/// hides it (G4).
fn covers_material(m: MaterialId, mat: MaterialId, mats: &Materials) -> bool {
    match mats.get(mat) {
        // An opaque face hides behind opaque geometry only.
        Opacity::Opaque => mats.get(m) == Opacity::Opaque,
        // A transparent or liquid face is kept against anything but its own material.
        Opacity::Clear => m == mat,
    }
}

/// The corners of `face` of the extended cube `e` at `addr`, in chunk-local 1/16 lattice units,
/// in vertex order.
fn ext_face_outline(e: &ExtGeometry, addr: CubeAddr, face: Face) -> [IVec3; 4] {
    FACE_CORNERS[face.index()].map(|c| addr.min * 16 + corner_steps(e, c) * addr.edge())
}

/// Whether two face outlines have the same corners (in any order: two faces touching each other
/// list them in opposite winding).
fn same_outline(a: &[IVec3; 4], b: &[IVec3; 4]) -> bool {
    let key = |p: &IVec3| p.to_array();
    let (mut a, mut b) = (*a, *b);
    a.sort_unstable_by_key(key);
    b.sort_unstable_by_key(key);
    a == b
}

/// Whether the four corners of `face` are at rest (the face is the full flat square).
fn face_at_rest(e: &ExtGeometry, face: Face) -> bool {
    FACE_CORNERS[face.index()].iter().all(|&c| e.corners[c] == [0; 3])
}

/// Whether the four corners of `face` lie in the cube's boundary plane (not pushed along the
/// normal): then the face is inside its rest square and can be culled like a full face.
fn face_in_plane(e: &ExtGeometry, face: Face) -> bool {
    FACE_CORNERS[face.index()].iter().all(|&c| e.corners[c][face.axis()] == 0)
}

/// Corner `c` of an extended cube in steps of edge/16 from the cube's minimum corner (0..=16).
fn corner_steps(e: &ExtGeometry, c: usize) -> IVec3 {
    octant_offset(c) * i32::from(CORNER_STEPS) + IVec3::from_array(e.corners[c].map(i32::from))
}

/// Builds the mesh of one chunk the reference way: every face asks the leaves, vertices in `f64`
/// vectors ([`mesh_chunk_reference`]).
struct Mesher<'a> {
    hood: Neighbourhood<'a>,
    mats: Materials,
    /// Texture repeats per lattice unit.
    uv_scale: f64,
    mesh: Mesh,
}

impl Mesher<'_> {
    /// Chunk-center-relative map-unit position of a position given in 1/16 lattice units.
    fn position(&self, fine: IVec3) -> [f32; 3] {
        let half = IVec3::splat(self.hood.edge * 8);
        ((fine - half).as_dvec3() / f64::from(16 * LATTICE_PER_UNIT)).as_vec3().to_array()
    }

    /// Texture (u, v) of a position in 1/16 chunk-local lattice units, before the per-face shift.
    fn raw_uv(&self, face: Face, fine: IVec3) -> [f64; 2] {
        let p = (self.hood.base.as_dvec3() * 16.0 + fine.as_dvec3()) / 16.0;
        let u = p.dot(tangent(face, 0).as_dvec3()) * self.uv_scale;
        let v = p.dot(tangent(face, 1).as_dvec3()) * self.uv_scale;
        [u, v]
    }

    /// Appends a face record and fills the square data; returns the whole-repeat UV shift.
    fn begin_face(&mut self, cube: u32, addr: CubeAddr, face: Face, material: MaterialId, backfaces: bool) -> [f64; 2] {
        let c0 = octant_offset(FACE_CORNERS[face.index()][0]) * addr.edge() + addr.min;
        let [u, v] = self.raw_uv(face, c0 * 16);
        let origin = self.hood.frame.world_from_lattice(self.hood.base + c0);
        self.mesh.faces.push(MeshFace {
            cube,
            first_vertex: self.mesh.vertices.len() as u32,
            vertex_count: 0,
            face,
            shape: FaceShape::Quad,
            material,
            draw_backfaces: backfaces,
            origin,
            size: f64::from(addr.edge()) / f64::from(LATTICE_PER_UNIT),
            lightmap: None,
        });
        [u.floor(), v.floor()]
    }

    fn vertex(&mut self, face: Face, fine: IVec3, shift: [f64; 2]) {
        let [u, v] = self.raw_uv(face, fine);
        let position = self.position(fine);
        self.mesh.vertices.push(Vertex {
            position,
            uv: [(u - shift[0]) as f32, (v - shift[1]) as f32],
            lightmap_uv: [0.0, 0.0],
        });
    }

    /// Whether `face` of the leaf at `addr` (of material `mat`; `outline`: the face's corners when
    /// it is an extended face in its plane, see [`Neighbourhood::covered`]) passes culling.
    fn visible(&self, addr: CubeAddr, face: Face, mat: MaterialId, outline: Option<&[IVec3; 4]>) -> bool {
        self.hood.face_visible(addr, face, mat, &self.mats, outline)
    }

    /// The faces of `cube` that pass culling (bits in PMF face order), before dropping faces
    /// collapsed to nothing.
    fn visible_faces(&self, addr: CubeAddr, cube: &Cube) -> u8 {
        let mut bits = 0;
        for face in Face::ALL {
            let shown = match &cube.kind {
                CubeKind::Empty => false,
                CubeKind::Geometry(g) => self.visible(addr, face, g.material, None),
                CubeKind::Extended(e) => {
                    !face_in_plane(e, face) || {
                        let outline = (!face_at_rest(e, face)).then(|| ext_face_outline(e, addr, face));
                        self.visible(addr, face, e.face_materials[face.index()], outline.as_ref())
                    }
                }
            };
            bits |= u8::from(shown) << face.index();
        }
        bits
    }

    /// Emits the faces `bits` of `cube` (layout index `index`).
    fn cube(&mut self, index: u32, addr: CubeAddr, cube: &Cube, bits: u8) {
        let mut cm = CubeMesh {
            cube: index,
            extended: false,
            first_vertex: self.mesh.vertices.len() as u32,
            face_bits: 0,
            triangle_counts: [0; 6],
            first_face: self.mesh.faces.len() as u32,
            face_count: 0,
        };
        let faces = Face::ALL.into_iter().filter(|f| bits & (1 << f.index()) != 0);
        match &cube.kind {
            CubeKind::Empty => return,
            CubeKind::Geometry(g) => {
                for face in faces {
                    let shift = self.begin_face(index, addr, face, g.material, cube.draw_backfaces);
                    for c in FACE_CORNERS[face.index()] {
                        let fine = (addr.min + octant_offset(c) * addr.edge()) * 16;
                        self.vertex(face, fine, shift);
                    }
                    self.mesh.faces.last_mut().expect("just pushed").vertex_count = 4;
                    cm.face_bits |= 1 << face.index();
                    cm.triangle_counts[face.index()] = 2;
                    cm.face_count += 1;
                }
            }
            CubeKind::Extended(e) => {
                cm.extended = true;
                for face in faces {
                    let mat = e.face_materials[face.index()];
                    let corners = FACE_CORNERS[face.index()].map(|c| corner_steps(e, c));
                    let (tris, n) = triangulate(&corners);
                    if n == 0 {
                        continue;
                    }
                    let shift = self.begin_face(index, addr, face, mat, cube.draw_backfaces);
                    for t in &tris[..n] {
                        for &k in t {
                            let fine = addr.min * 16 + corners[k] * addr.edge();
                            self.vertex(face, fine, shift);
                        }
                    }
                    let f = self.mesh.faces.last_mut().expect("just pushed");
                    f.shape = FaceShape::Triangles(n as u8);
                    f.vertex_count = 3 * n as u32;
                    cm.face_bits |= 1 << face.index();
                    cm.triangle_counts[face.index()] = n as u8;
                    cm.face_count += 1;
                }
            }
        }
        self.mesh.cubes.push(cm);
    }
}

/// Triangles (indices into `p`, counter-clockwise from outside) for a face whose corners `p`
/// are given in vertex order (integer positions, exact). Degenerate triangles are dropped.
/// Returns the triangles and how many of them are used (0..=2).
pub(crate) fn triangulate(p: &[IVec3; 4]) -> ([[usize; 3]; 2], usize) {
    let cross = |a: usize, b: usize, c: usize| (p[b] - p[a]).cross(p[c] - p[a]);
    let volume = cross(0, 1, 2).dot(p[3] - p[0]);
    // Split along 0–2 (A) or 1–3 (B). Non-planar: the convex fold (vertex 3 below the plane of
    // 0,1,2 for A). Planar: A unless its two triangles face opposite ways (concave outline).
    let use_a = match volume.signum() {
        -1 => true,
        1 => false,
        _ => cross(0, 1, 2).dot(cross(0, 2, 3)) >= 0,
    };
    let tris: [[usize; 3]; 2] = if use_a { [[0, 1, 2], [0, 2, 3]] } else { [[0, 1, 3], [1, 2, 3]] };
    let mut out = [[0; 3]; 2];
    let mut n = 0;
    for [a, b, c] in tris {
        if cross(a, b, c) != IVec3::ZERO {
            out[n] = [a, b, c];
            n += 1;
        }
    }
    (out, n)
}

/// The mesh of chunk `chunk` of `level` over its `layout` (which must be the layout of that
/// chunk's octree, or of an empty octree if the chunk is missing). Neighbouring chunks are read
/// from `level` for culling; materials' transparent/liquid flags from `library`.
/// Pure and deterministic.
///
/// The two phases, [`visible_faces`] (which faces are seen) and [`mesh_visible_faces`] (their
/// PMF records), one after the other.
pub fn mesh_chunk(
    level: &Level,
    library: &Library,
    chunk: ChunkCoord,
    layout: &ChunkLayout,
    settings: &BakeSettings,
) -> Mesh {
    let faces = visible_faces(level, library, chunk, layout);
    mesh_visible_faces(level, chunk, layout, settings, &faces)
}

/// The same mesh as [`mesh_chunk`], every face culled by asking the neighbouring leaves one by
/// one (no cell grid) and every vertex computed in `f64` vectors: the reference both phases are
/// tested against, and the benchmarks' baseline.
pub fn mesh_chunk_reference(
    level: &Level,
    library: &Library,
    chunk: ChunkCoord,
    layout: &ChunkLayout,
    settings: &BakeSettings,
) -> Mesh {
    let hood = Neighbourhood::new(level, chunk);
    let uv_scale = 2f64.powi(-i32::from(settings.texture_repeat_log2)) / f64::from(LATTICE_PER_UNIT);
    let chunk_center = level.frame().chunk_center_world(chunk);
    let mats = Materials::new(library);
    let mut m = Mesher { hood, mats, uv_scale, mesh: Mesh { chunk_center, ..Mesh::default() } };
    // Cull first, then allocate the output once (large chunks spend more time growing vectors
    // than meshing otherwise).
    let solid: Vec<(u32, CubeAddr, &Cube)> = layout
        .solid_cubes()
        .iter()
        .filter_map(|&i| {
            let c = &layout.cubes()[i as usize];
            c.cube.as_ref().map(|cube| (i, c.addr, cube))
        })
        .collect();
    let bits: Vec<u8> = solid.iter().map(|&(_, addr, cube)| m.visible_faces(addr, cube)).collect();
    let (mut faces, mut vertices) = (0, 0);
    for (&(_, _, cube), &b) in solid.iter().zip(&bits) {
        let n = b.count_ones() as usize;
        faces += n;
        vertices += n * if matches!(cube.kind, CubeKind::Extended(_)) { 6 } else { 4 };
    }
    m.mesh.faces.reserve_exact(faces);
    m.mesh.vertices.reserve_exact(vertices);
    m.mesh.cubes.reserve_exact(solid.len());
    for (&(i, addr, cube), &b) in solid.iter().zip(&bits) {
        m.cube(i, addr, cube, b);
    }
    m.mesh
}

/// The `block-mesh` crate's culled unit faces over a chunk of 32³ unit cells, set up once so a
/// benchmark times only the meshing (`pmfc bench` and `cargo bench --bench mesh`, with
/// `--features block-mesh-bench`): the side-by-side figure for our mesher.
#[cfg(feature = "block-mesh-bench")]
pub struct BlockMeshChunk(Vec<BlockMeshVoxel>);

#[cfg(feature = "block-mesh-bench")]
#[derive(Clone, Copy, PartialEq, Eq)]
struct BlockMeshVoxel(bool);

#[cfg(feature = "block-mesh-bench")]
impl block_mesh::Voxel for BlockMeshVoxel {
    fn get_visibility(&self) -> block_mesh::VoxelVisibility {
        if self.0 { block_mesh::VoxelVisibility::Opaque } else { block_mesh::VoxelVisibility::Empty }
    }
}

#[cfg(feature = "block-mesh-bench")]
type BlockMeshShape = block_mesh::ndshape::ConstShape3u32<34, 34, 34>;

#[cfg(feature = "block-mesh-bench")]
impl BlockMeshChunk {
    /// Cell `(x, y, z)` (each `0..32`) is opaque where `solid` says so; a one-cell border of air.
    pub fn new(solid: impl Fn(usize, usize, usize) -> bool) -> Self {
        use block_mesh::ndshape::ConstShape;
        let mut voxels = vec![BlockMeshVoxel(false); BlockMeshShape::SIZE as usize];
        for (i, v) in voxels.iter_mut().enumerate() {
            let [x, y, z] = BlockMeshShape::delinearize(i as u32);
            if (1..33).contains(&x) && (1..33).contains(&y) && (1..33).contains(&z) {
                *v = BlockMeshVoxel(solid(x as usize - 1, y as usize - 1, z as usize - 1));
            }
        }
        Self(voxels)
    }

    /// Meshes the chunk with `block_mesh::visible_block_faces`; returns the quad count.
    pub fn mesh(&self) -> usize {
        let mut buffer = block_mesh::UnitQuadBuffer::new();
        block_mesh::visible_block_faces(
            &self.0,
            &BlockMeshShape {},
            [0; 3],
            [33; 3],
            &block_mesh::RIGHT_HANDED_Y_UP_CONFIG.faces,
            &mut buffer,
        );
        buffer.num_quads()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn face_corner_table_is_on_the_face_ccw_and_starts_at_min_uv() {
        for face in Face::ALL {
            let cs = FACE_CORNERS[face.index()];
            let pos: Vec<IVec3> = cs.iter().map(|&c| octant_offset(c)).collect();
            for p in &pos {
                assert_eq!(p[face.axis()], i32::from(face.is_positive()), "{face:?} corner not on the face");
            }
            let n = (pos[1] - pos[0]).cross(pos[2] - pos[0]);
            assert_eq!(n, face.normal(), "{face:?} winding");
            let n2 = (pos[2] - pos[0]).cross(pos[3] - pos[0]);
            assert_eq!(n2, face.normal(), "{face:?} winding of the second triangle");
            let uv = |p: IVec3| (p.dot(tangent(face, 0)), p.dot(tangent(face, 1)));
            assert!(pos.iter().all(|&p| uv(p).0 >= uv(pos[0]).0 && uv(p).1 >= uv(pos[0]).1));
            let mut sorted = cs.to_vec();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), 4);
        }
    }

    #[test]
    fn triangulation() {
        let q = |v: [[i32; 3]; 4]| v.map(IVec3::from_array);
        // A flat +Y face (corners in vertex order, y = 16).
        let flat = FACE_CORNERS[Face::PosY.index()].map(|c| octant_offset(c) * 16);
        let triangulate = |p: &[IVec3; 4]| {
            let (t, n) = triangulate(p);
            t[..n].to_vec()
        };
        assert_eq!(triangulate(&flat), vec![[0, 1, 2], [0, 2, 3]]);
        // Collapsed to a line (two corners on each end) and to a point.
        assert!(triangulate(&q([[0, 0, 0], [0, 0, 0], [16, 0, 0], [16, 0, 0]])).is_empty());
        assert!(triangulate(&q([[3, 3, 3]; 4])).is_empty());
        // One corner onto its neighbour: one triangle left.
        let mut tri = flat;
        tri[1] = tri[0];
        assert_eq!(triangulate(&tri).len(), 1);
        // Non-planar: the fold bulges outward (+Y) whichever corner is lowered.
        for k in 0..4 {
            let mut p = flat;
            p[k].y -= 8;
            let t = triangulate(&p);
            assert_eq!(t.len(), 2);
            // The lowered corner is not on the diagonal's far side: the other two diagonal
            // corners stay at the top, i.e. the diagonal avoids the lowered corner.
            for tr in &t {
                let n = (p[tr[1]] - p[tr[0]]).cross(p[tr[2]] - p[tr[0]]);
                assert!(n.y > 0, "outward");
                // Every corner lies on or below each triangle's plane: convex.
                for c in &p {
                    assert!(n.dot(*c - p[tr[0]]) <= 0, "convex fold, corner {k}");
                }
            }
        }
    }
}
