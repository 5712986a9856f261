//! A chunk's draw data as the GPU takes it, made by the mesh workers ([`super::mesher`]) so that
//! the UI thread only copies bytes into the shared buffers ([`super::regions`]).
//!
//! - **Regions**: chunks are drawn in regions of [`REGION_EDGE`]³ chunks, one draw call per
//!   region and pass ([`super::regions`]). A chunk's place in its region (its *slot*) follows
//!   from its coordinate alone, so a worker writes it into the vertices without asking the GPU
//!   side; the shader reads what varies per chunk (lightmap corner, pending tint, visibility
//!   mode) from the region's chunk table at that slot.
//! - **Positions** are relative to the region's origin (the centre of its first chunk): the
//!   region's offset from the eye is one uniform per draw, so rendering stays camera-relative.
//! - **Indexed**: each pass keeps the mesh's index list (ordered by facing, see
//!   [`super::mesh::TriList::facing_starts`]), local to the chunk; draws add the chunk's first
//!   vertex (base vertex).
//! - **Packed vertices** ([`VERTEX_ATTRIBUTES`], [`VERTEX_STRIDE`] bytes, interleaved): colours
//!   and the face-outline attribute are bytes (both are exact in `u8`), lightmap coordinates are
//!   in texels of the chunk's own atlas plus the slot, the texture layer is resolved.

use glam::{DVec3, Vec3};

use pmfedit_bake::compile::ChunkBake;
use pmfedit_bake::deps::ChunkKey;
use pmfedit_core::map::coords::ChunkCoord;

use super::mesh::{Atlas, ChunkMesh, TriList};

/// Chunks along each side of a region, log 2.
pub const REGION_LOG2: u32 = 4;
/// Chunks along each side of a region.
pub const REGION_EDGE: i32 = 1 << REGION_LOG2;
/// Chunk slots of a region.
pub const REGION_SLOTS: u32 = 1 << (3 * REGION_LOG2);

/// A region of one level: its coordinate is its first chunk's, divided by [`REGION_EDGE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RegionKey {
    pub level: usize,
    pub coord: ChunkCoord,
}

impl RegionKey {
    /// The region's first chunk (its origin is that chunk's centre).
    pub fn first_chunk(self) -> ChunkCoord {
        let c = self.coord;
        ChunkCoord { x: c.x << REGION_LOG2, y: c.y << REGION_LOG2, z: c.z << REGION_LOG2 }
    }
}

/// The region of a chunk and the chunk's slot in it.
pub fn region_of(key: ChunkKey) -> (RegionKey, u32) {
    let c = key.1;
    let coord = ChunkCoord { x: c.x >> REGION_LOG2, y: c.y >> REGION_LOG2, z: c.z >> REGION_LOG2 };
    let m = REGION_EDGE - 1;
    let slot = (c.x & m) | ((c.y & m) << REGION_LOG2) | ((c.z & m) << (2 * REGION_LOG2));
    (RegionKey { level: key.0, coord }, slot as u32)
}

/// How one vertex attribute lies in the packed vertex.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Component {
    F32,
    /// Read as `0..=1`.
    U8Normalized,
    /// Read as an unsigned integer.
    U32,
}

/// One attribute of the packed vertex; `location` is its `layout(location = …)` in
/// `shaders/chunk.vert`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VertexAttribute {
    pub name: &'static str,
    pub location: u32,
    pub component: Component,
    pub components: i32,
    /// Bytes from the vertex start.
    pub offset: i32,
}

/// The packed vertex: position (region-relative), colour, lightmap texel + slot, texture
/// (u, v, layer, material row), face outline, cube index.
pub const VERTEX_ATTRIBUTES: [VertexAttribute; 6] = [
    VertexAttribute { name: "a_pos", location: 0, component: Component::F32, components: 3, offset: 0 },
    VertexAttribute { name: "a_color", location: 1, component: Component::U8Normalized, components: 4, offset: 12 },
    VertexAttribute { name: "a_lm", location: 2, component: Component::F32, components: 3, offset: 16 },
    VertexAttribute { name: "a_uv", location: 3, component: Component::F32, components: 4, offset: 28 },
    VertexAttribute { name: "a_edge", location: 4, component: Component::U8Normalized, components: 4, offset: 44 },
    VertexAttribute { name: "a_cube", location: 5, component: Component::U32, components: 1, offset: 48 },
];

/// Bytes per packed vertex.
pub const VERTEX_STRIDE: usize = 52;

/// One pass (opaque, transparent or additive) of a chunk, packed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GpuPass {
    /// [`VERTEX_STRIDE`] bytes per vertex.
    pub vertices: Vec<u8>,
    /// Chunk-local vertex indices, three per triangle, ordered by facing.
    pub indices: Vec<u32>,
    /// [`TriList::facing_starts`].
    pub facing_starts: [u32; 8],
}

impl GpuPass {
    /// Vertices.
    pub fn vertex_count(&self) -> u32 {
        (self.vertices.len() / VERTEX_STRIDE) as u32
    }

    /// Whether there is no triangle.
    pub fn is_empty(&self) -> bool {
        self.indices.is_empty()
    }
}

/// A chunk ready to be copied into its region's buffers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GpuMesh {
    /// Opaque, transparent, additive ([`ChunkMesh::lists`] order).
    pub passes: [GpuPass; 3],
    /// The chunk's lightmap atlas (lightmap coordinates are texels of it).
    pub atlas: Atlas,
    /// Bounds of the vertices relative to the region origin (`None`: nothing to draw).
    pub bounds: Option<(Vec3, Vec3)>,
    /// The chunk's slot in its region.
    pub slot: u32,
    /// The region origin, world space.
    pub origin: DVec3,
}

/// The vertices and indices a chunk's mesh takes, from its bake alone (before meshing): one
/// vertex per PMF client vertex but two fewer for an extended face of two triangles (its split
/// corners are shared, [`super::mesh`]), three indices per triangle; faces drawn from both sides
/// (a cube's `draw_backfaces`) take more indices.
pub fn expected_size(bake: &ChunkBake) -> (u32, u32) {
    let shared: usize = (bake.pmf.client.cubes.iter())
        .map(|c| match &c.geometry {
            pmfedit_core::format::pmf::ClientGeometry::ExtGeometry(e) => {
                e.triangle_counts.iter().filter(|&&n| n == 2).count()
            }
            _ => 0,
        })
        .sum();
    let vertices = u32::try_from(bake.pmf.client.vertices.len().saturating_sub(2 * shared)).unwrap_or(u32::MAX);
    let indices = u32::try_from(bake.stats.triangles.saturating_mul(3)).unwrap_or(u32::MAX);
    (vertices, indices)
}

impl GpuMesh {
    /// Packs `mesh`, a chunk at `offset` from its region's origin (`origin`), in `slot`;
    /// `layers` is the texture array layer of each of the chunk's used materials (a range of a
    /// material not in it draws layer 0, white).
    pub fn pack(mesh: &ChunkMesh, layers: &[u32], offset: Vec3, slot: u32, origin: DVec3) -> Self {
        let size = [mesh.atlas.width as f32, mesh.atlas.height as f32];
        let pass = |t: &TriList| pack_list(t, layers, offset, slot, size);
        Self {
            passes: [pass(&mesh.opaque), pass(&mesh.transparent), pass(&mesh.additive)],
            atlas: mesh.atlas.clone(),
            bounds: mesh.bounds.map(|(lo, hi)| (lo + offset, hi + offset)),
            slot,
            origin,
        }
    }
}

fn pack_list(t: &TriList, layers: &[u32], offset: Vec3, slot: u32, atlas: [f32; 2]) -> GpuPass {
    let mut vertices = Vec::with_capacity(t.len() * VERTEX_STRIDE);
    let to_u8 = |v: f32| (v.clamp(0.0, 1.0) * 255.0).round() as u8;
    for r in &t.ranges {
        let layer = r.material.and_then(|m| layers.get(usize::from(m))).copied().unwrap_or(0) as f32;
        let row = if r.fx { r.row as f32 } else { 0.0 };
        for i in r.start as usize..(r.start + r.count) as usize {
            let p = Vec3::from_array(t.positions[i]) + offset;
            let [lu, lv] = t.lightmap_uv[i];
            let [u, v] = t.uvs[i];
            for f in [p.x, p.y, p.z] {
                vertices.extend_from_slice(&f.to_ne_bytes());
            }
            vertices.extend(t.colors[i].map(to_u8));
            for f in [lu * atlas[0], lv * atlas[1], slot as f32, u, v, layer, row] {
                vertices.extend_from_slice(&f.to_ne_bytes());
            }
            vertices.extend(t.edges[i].map(to_u8));
            vertices.extend_from_slice(&t.cubes[i].to_ne_bytes());
        }
    }
    GpuPass { vertices, indices: t.indices.clone(), facing_starts: t.facing_starts }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::viewport::mesh::build_chunk_mesh;
    use pmfedit_bake::compile::{CompileSettings, bake_chunk};
    use pmfedit_core::sample;

    fn f32_at(bytes: &[u8], at: usize) -> f32 {
        f32::from_ne_bytes(bytes[at..at + 4].try_into().unwrap())
    }

    #[test]
    fn slots_follow_the_chunk_coordinate_and_regions_tile_the_level() {
        let key = |x, y, z| (2, ChunkCoord { x, y, z });
        let (r, slot) = region_of(key(0, 0, 0));
        assert_eq!((r.coord, slot), (ChunkCoord { x: 0, y: 0, z: 0 }, 0));
        let (r, slot) = region_of(key(17, 3, 31));
        assert_eq!(r, RegionKey { level: 2, coord: ChunkCoord { x: 1, y: 0, z: 1 } });
        assert_eq!(slot, 1 + 3 * 16 + 15 * 256);
        // Negative coordinates round down: chunk −1 is the last of region −1.
        let (r, slot) = region_of(key(-1, -16, -17));
        assert_eq!(r.coord, ChunkCoord { x: -1, y: -1, z: -2 });
        assert_eq!(slot, 15 + 15 * 256);
        assert_eq!(r.first_chunk(), ChunkCoord { x: -16, y: -16, z: -32 });
        // Every chunk of a region has its own slot below REGION_SLOTS.
        let mut seen = std::collections::HashSet::new();
        for x in 0..REGION_EDGE {
            for y in 0..REGION_EDGE {
                for z in 0..REGION_EDGE {
                    let (r, s) = region_of(key(x - 32, y + 16, z));
                    assert_eq!(r.first_chunk(), ChunkCoord { x: -32, y: 16, z: 0 });
                    assert!(s < REGION_SLOTS && seen.insert(s));
                }
            }
        }
    }

    #[test]
    fn packed_vertices_carry_what_the_mesh_has() {
        let map = sample::demo();
        let level = &map.levels[0];
        let c = level.frame().center_chunk;
        let bake = bake_chunk(&map, 0, c, &CompileSettings::default()).expect("bakes");
        let mesh = build_chunk_mesh(&bake, &map.library);
        let layers: Vec<u32> = (0..bake.pmf.common.used_materials.len() as u32).map(|i| 10 + i).collect();
        let offset = Vec3::new(64.0, -32.0, 0.0);
        let gpu = GpuMesh::pack(&mesh, &layers, offset, 77, DVec3::ONE);
        let (lo, hi) = mesh.bounds.unwrap();
        assert_eq!(gpu.bounds, Some((lo + offset, hi + offset)));
        for (list, pass) in mesh.lists().zip(&gpu.passes) {
            assert_eq!(pass.vertex_count() as usize, list.len());
            assert_eq!(pass.vertices.len(), list.len() * VERTEX_STRIDE);
            // Indexed as built: no triangle expanded.
            assert_eq!((&pass.indices, pass.facing_starts), (&list.indices, list.facing_starts));
            for r in &list.ranges {
                for i in r.start as usize..(r.start + r.count) as usize {
                    let v = &pass.vertices[i * VERTEX_STRIDE..(i + 1) * VERTEX_STRIDE];
                    let p = Vec3::from_array(list.positions[i]) + offset;
                    assert_eq!([f32_at(v, 0), f32_at(v, 4), f32_at(v, 8)], p.to_array());
                    let c = list.colors[i].map(|x| (x * 255.0).round() as u8);
                    assert_eq!(&v[12..16], &c);
                    let lm = list.lightmap_uv[i];
                    let (w, h) = (mesh.atlas.width as f32, mesh.atlas.height as f32);
                    assert_eq!([f32_at(v, 16), f32_at(v, 20), f32_at(v, 24)], [lm[0] * w, lm[1] * h, 77.0]);
                    let layer = r.material.map_or(0, |m| 10 + u32::from(m)) as f32;
                    let row = if r.fx { r.row as f32 } else { 0.0 };
                    let uv = list.uvs[i];
                    assert_eq!(
                        [f32_at(v, 28), f32_at(v, 32), f32_at(v, 36), f32_at(v, 40)],
                        [uv[0], uv[1], layer, row]
                    );
                    assert_eq!(&v[44..48], &list.edges[i].map(|x| (x * 255.0) as u8));
                    assert_eq!(u32::from_ne_bytes(v[48..52].try_into().unwrap()), list.cubes[i]);
                }
            }
        }
        assert!(!gpu.passes[0].is_empty());
    }

    /// What an open reserves per chunk is what its packed mesh takes: exactly, for chunks
    /// without double-sided faces (the demo has some: at least as many indices then).
    #[test]
    fn the_expected_size_is_the_packed_meshs() {
        let map = sample::demo();
        let level = &map.levels[0];
        let (mut exact, mut chunks) = (0, 0);
        for (c, _) in level.chunks() {
            let bake = bake_chunk(&map, 0, *c, &CompileSettings::default()).expect("bakes");
            let gpu = GpuMesh::pack(&build_chunk_mesh(&bake, &map.library), &[], Vec3::ZERO, 0, DVec3::ZERO);
            let vertices: u32 = gpu.passes.iter().map(GpuPass::vertex_count).sum();
            let indices: usize = gpu.passes.iter().map(|p| p.indices.len()).sum();
            let (v, i) = expected_size(&bake);
            assert_eq!(v, vertices, "chunk {c:?}");
            let backfaces = bake.pmf.common.cubes.iter().any(|c| c.draw_backfaces);
            if backfaces {
                assert!(indices >= i as usize, "chunk {c:?}: {indices} < {i}");
            } else {
                assert_eq!(i as usize, indices, "chunk {c:?}");
                exact += 1;
            }
            chunks += usize::from(vertices > 0);
        }
        assert!(chunks > 4 && exact > 0, "{chunks} chunks with faces, {exact} exact");
    }
}
