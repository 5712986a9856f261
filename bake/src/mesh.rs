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
//!
//! # Files
//! `mesh/geometry.rs` holds the rules every mesher shares (opacity, face corners and tangents, the
//! leaves around a chunk and whether a face is covered, triangulation), `mesh/model.rs` the output
//! types, `mesh/faces.rs` phase 1 and `mesh/records.rs` phase 2; this file the reference mesher
//! and the two phases together. Each file imports only those before it in that list.

use glam::IVec3;
use pmfedit_core::format::pmf::Vertex;
use pmfedit_core::map::Level;
use pmfedit_core::map::Library;
use pmfedit_core::map::coords::{ChunkCoord, CubeAddr, Face, LATTICE_PER_UNIT, octant_offset};
use pmfedit_core::map::octree::{Cube, CubeKind, MaterialId};

use crate::layout::{BakeSettings, ChunkLayout};

mod faces;
mod geometry;
mod model;
mod records;

pub use faces::{VisibleFaces, visible_faces};
pub use geometry::FACE_CORNERS;
pub(crate) use geometry::triangulate;
use geometry::{Materials, Neighbourhood, corner_steps, ext_face_outline, face_at_rest, face_in_plane, tangent};
pub use model::{CubeMesh, FaceId, FaceShape, LightmapRect, Mesh, MeshFace};
pub use records::{mesh_visible_faces, mesh_visible_faces_into};

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
