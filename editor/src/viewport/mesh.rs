//! CPU side of a chunk's draw data: a baked chunk ([`ChunkBake`]) turned into flat triangle
//! lists (opaque and transparent) plus one lightmap atlas per chunk. Pure, so it is tested
//! without a GPU; [`super::render`] uploads the result.
//!
//! - Vertices are expanded to plain triangles (no index buffer) so each can carry an "edge"
//!   attribute for the wireframe mode: barycentric coordinates (component `i` is 1 at vertex `i`,
//!   0 on the opposite edge), and a quad's internal diagonal is hidden by setting the component
//!   opposite it to 1 at all three vertices.
//! - Lightmap pages (square, various sizes) are shelf-packed into one atlas with a one-luxel
//!   border copied from the page edge, so linear filtering never bleeds between pages; lightmap
//!   UVs are remapped into the atlas.
//! - Faces of cubes flagged "draw backfaces" get a second, reversed copy (back-face culling stays
//!   on for everything else).
//! - Every vertex carries the index of the PMF cube its triangle came from ([`TriList::cubes`]),
//!   so the visibility view can tell visible cubes from hidden ones on the GPU.
//! - Each list is sorted by material: [`TriList::ranges`] says which vertices use which material
//!   (and so which texture), so the renderer binds each texture once and draws each material of a
//!   chunk with one call.

use glam::Vec3;

use pmfedit_bake::compile::ChunkBake;
use pmfedit_core::format::pmf;
use pmfedit_core::map::Library;

/// One face colour as RGBA in `0..=1` (sRGB).
pub type Rgba = [f32; 4];

/// Triangles of one render pass.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TriList {
    /// Relative to the chunk center, map units.
    pub positions: Vec<[f32; 3]>,
    pub colors: Vec<Rgba>,
    /// Atlas coordinates.
    pub lightmap_uv: Vec<[f32; 2]>,
    /// Texture coordinates from the bake (one repeat per texture tile).
    pub uvs: Vec<[f32; 2]>,
    /// Wireframe edge attribute (see the module docs).
    pub edges: Vec<[f32; 3]>,
    /// Per vertex: the index of the cube it belongs to in the chunk's PMF cube array.
    pub cubes: Vec<u32>,
    /// Consecutive vertex ranges, one per material, in the order of the chunk's used-material
    /// list (unknown materials last); together they cover every vertex exactly once.
    pub ranges: Vec<MaterialRange>,
}

/// The vertices of one material within a [`TriList`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MaterialRange {
    /// Index into the chunk's used-material list (`None`: an index the list lacks).
    pub material: Option<u8>,
    /// The material's texture reference as the library has it (empty: untextured).
    pub texture: String,
    /// First vertex.
    pub start: u32,
    /// Vertices (a multiple of three).
    pub count: u32,
}

impl TriList {
    /// Vertices (three per triangle).
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// Whether there is no triangle.
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    fn push_tri(&mut self, v: [&pmf::Vertex; 3], color: Rgba, edges: [[f32; 3]; 3], lm: &AtlasPlacement, cube: u32) {
        for (vert, e) in v.iter().zip(edges) {
            self.positions.push(vert.position);
            self.colors.push(color);
            self.lightmap_uv.push(lm.map(vert.lightmap_uv));
            self.uvs.push(vert.uv);
            self.edges.push(e);
            self.cubes.push(cube);
        }
    }

    /// Appends `other`'s vertices as one range of `material`.
    fn append_range(&mut self, other: &mut TriList, material: Option<u8>, texture: &str) {
        if other.is_empty() {
            return;
        }
        let start = self.len() as u32;
        let count = other.len() as u32;
        self.positions.append(&mut other.positions);
        self.colors.append(&mut other.colors);
        self.lightmap_uv.append(&mut other.lightmap_uv);
        self.uvs.append(&mut other.uvs);
        self.edges.append(&mut other.edges);
        self.cubes.append(&mut other.cubes);
        self.ranges.push(MaterialRange { material, texture: texture.to_owned(), start, count });
    }
}

/// The lightmap atlas of one chunk, RGB rows top to bottom (texture row 0 is `v = 0`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Atlas {
    pub width: u32,
    pub height: u32,
    pub texels: Vec<[u8; 3]>,
}

/// Where one page lies in the atlas.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AtlasPlacement {
    /// Offset of the page's first luxel, in texels.
    pub x: u32,
    pub y: u32,
    pub edge: u32,
    pub atlas: (u32, u32),
}

impl AtlasPlacement {
    /// A page UV in `[0, 1]` → atlas UV.
    pub fn map(&self, uv: [f32; 2]) -> [f32; 2] {
        let (w, h) = (self.atlas.0 as f32, self.atlas.1 as f32);
        let e = self.edge as f32;
        [(self.x as f32 + uv[0] * e) / w, (self.y as f32 + uv[1] * e) / h]
    }
}

/// Packs the pages (shelves, largest first, one-luxel replicated border). A chunk without
/// pages gets a 1×1 white atlas.
pub fn pack_atlas(pages: &[pmf::Lightmap]) -> (Atlas, Vec<AtlasPlacement>) {
    if pages.is_empty() {
        return (Atlas { width: 1, height: 1, texels: vec![[255; 3]] }, Vec::new());
    }
    let padded = |p: &pmf::Lightmap| p.edge() as u32 + 2;
    let area: u64 = pages.iter().map(|p| u64::from(padded(p)).pow(2)).sum();
    let widest = pages.iter().map(padded).max().unwrap_or(1);
    let width = ((area as f64).sqrt().ceil() as u32).max(widest).next_power_of_two();
    let mut order: Vec<usize> = (0..pages.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(pages[i].edge()));
    let mut origin = vec![(0u32, 0u32); pages.len()];
    let (mut x, mut y, mut shelf) = (0u32, 0u32, 0u32);
    for &i in &order {
        let s = padded(&pages[i]);
        if x + s > width {
            x = 0;
            y += shelf;
            shelf = 0;
        }
        origin[i] = (x, y);
        x += s;
        shelf = shelf.max(s);
    }
    let height = (y + shelf).max(1);
    let mut texels = vec![[0u8; 3]; (width * height) as usize];
    let mut placements = Vec::with_capacity(pages.len());
    for (i, p) in pages.iter().enumerate() {
        let e = p.edge() as u32;
        let (ox, oy) = origin[i];
        for ty in 0..e + 2 {
            for tx in 0..e + 2 {
                let sx = tx.saturating_sub(1).min(e - 1) as usize;
                let sy = ty.saturating_sub(1).min(e - 1) as usize;
                let k = 3 * (sy * e as usize + sx);
                let rgb = p.luxels.get(k..k + 3).map_or([255; 3], |s| [s[0], s[1], s[2]]);
                texels[((oy + ty) * width + ox + tx) as usize] = rgb;
            }
        }
        placements.push(AtlasPlacement { x: ox + 1, y: oy + 1, edge: e, atlas: (width, height) });
    }
    (Atlas { width, height, texels }, placements)
}

/// A chunk ready for upload.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChunkMesh {
    pub opaque: TriList,
    /// Transparent and liquid materials, drawn after the opaque pass with blending.
    pub transparent: TriList,
    pub atlas: Atlas,
    /// Bounds of the vertices relative to the chunk center (`None` for an empty chunk).
    pub bounds: Option<(Vec3, Vec3)>,
}

/// What a material looks like in the viewport.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Look {
    pub color: Rgba,
    pub transparent: bool,
}

/// The texture reference of each of the chunk's used materials (empty when untextured or not in
/// the library).
pub fn material_textures(library: &Library, used: &[String]) -> Vec<String> {
    used.iter()
        .map(|name| library.materials().by_name(name).map(|(_, m)| m.texture.clone()).unwrap_or_default())
        .collect()
}

/// The look of each of the chunk's used materials, from the library by name; a name the library
/// lacks is drawn magenta.
pub fn material_looks(library: &Library, used: &[String]) -> Vec<Look> {
    used.iter()
        .map(|name| match library.materials().by_name(name) {
            Some((_, m)) => {
                let transparent = m.transparent || m.liquid;
                let a = if transparent { f32::from(m.alpha) / 255.0 } else { 1.0 };
                let c = m.color;
                Look {
                    color: [f32::from(c[0]) / 255.0, f32::from(c[1]) / 255.0, f32::from(c[2]) / 255.0, a],
                    transparent,
                }
            }
            None => Look { color: [1.0, 0.0, 1.0, 1.0], transparent: false },
        })
        .collect()
}

const QUAD_EDGES: [[[f32; 3]; 3]; 2] = [
    // Triangle (0,1,2): the diagonal 0–2 is opposite local vertex 1 → component 1 stays 1.
    [[1.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.0, 1.0, 1.0]],
    // Triangle (0,2,3): the diagonal 0–2 is opposite local vertex 2 → component 2 stays 1.
    [[1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [0.0, 0.0, 1.0]],
];
const TRI_EDGES: [[f32; 3]; 3] = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

/// Builds the draw data of one baked chunk.
pub fn build_chunk_mesh(bake: &ChunkBake, library: &Library) -> ChunkMesh {
    let pmf = &bake.pmf;
    let looks = material_looks(library, &pmf.common.used_materials);
    let textures = material_textures(library, &pmf.common.used_materials);
    let (atlas, placements) = pack_atlas(&pmf.client.lightmaps);
    let white = AtlasPlacement { x: 0, y: 0, edge: 0, atlas: (atlas.width, atlas.height) };
    let place = |i: u8| placements.get(usize::from(i)).copied().unwrap_or(white);
    let look =
        |i: u8| looks.get(usize::from(i)).copied().unwrap_or(Look { color: [1.0, 0.0, 1.0, 1.0], transparent: false });
    let verts = &pmf.client.vertices;
    let vert = |i: usize| verts.get(i);
    // One bucket per used material (+1 for unknown indices), concatenated at the end.
    let unknown = looks.len();
    let mut buckets = vec![TriList::default(); looks.len() + 1];
    let bucket = |i: u8| usize::from(i).min(unknown);
    for (cube, (common, client)) in pmf.common.cubes.iter().zip(&pmf.client.cubes).enumerate() {
        let cube = cube as u32;
        let backfaces = common.draw_backfaces;
        let emit = |buckets: &mut [TriList],
                    v: [&pmf::Vertex; 3],
                    mat: u8,
                    look: Look,
                    edges: [[f32; 3]; 3],
                    lm: &AtlasPlacement| {
            let list = &mut buckets[bucket(mat)];
            list.push_tri(v, look.color, edges, lm, cube);
            if backfaces {
                list.push_tri([v[0], v[2], v[1]], look.color, [edges[0], edges[2], edges[1]], lm, cube);
            }
        };
        match (&common.kind, &client.geometry) {
            (pmf::CubeKind::Geometry(g), pmf::ClientGeometry::Geometry(cg)) => {
                let lm = place(cg.lightmap);
                let lk = look(g.material);
                let mut k = cg.first_vertex as usize;
                for f in 0..6 {
                    if cg.faces & (1 << f) == 0 {
                        continue;
                    }
                    if let (Some(a), Some(b), Some(c), Some(d)) = (vert(k), vert(k + 1), vert(k + 2), vert(k + 3)) {
                        emit(&mut buckets, [a, b, c], g.material, lk, QUAD_EDGES[0], &lm);
                        emit(&mut buckets, [a, c, d], g.material, lk, QUAD_EDGES[1], &lm);
                    }
                    k += 4;
                }
            }
            (pmf::CubeKind::ExtGeometry(g), pmf::ClientGeometry::ExtGeometry(cg)) => {
                let mut k = cg.first_vertex as usize;
                for f in 0..6 {
                    let lm = place(cg.lightmaps[f]);
                    let lk = look(g.materials[f]);
                    let n = usize::from(cg.triangle_counts[f]);
                    for _ in 0..n {
                        if let (Some(a), Some(b), Some(c)) = (vert(k), vert(k + 1), vert(k + 2)) {
                            emit(&mut buckets, [a, b, c], g.materials[f], lk, TRI_EDGES, &lm);
                        }
                        k += 3;
                    }
                }
            }
            _ => {}
        }
    }
    let mut out = ChunkMesh::default();
    for (i, b) in buckets.iter_mut().enumerate() {
        let (material, look, texture) = match looks.get(i) {
            Some(l) => (Some(i as u8), *l, textures[i].as_str()),
            None => (None, Look { color: [1.0, 0.0, 1.0, 1.0], transparent: false }, ""),
        };
        let list = if look.transparent { &mut out.transparent } else { &mut out.opaque };
        list.append_range(b, material, texture);
    }
    let all = out.opaque.positions.iter().chain(&out.transparent.positions).map(|p| Vec3::from_array(*p));
    out.bounds = all.fold(None, |b: Option<(Vec3, Vec3)>, p| Some(b.map_or((p, p), |(lo, hi)| (lo.min(p), hi.max(p)))));
    out.atlas = atlas;
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pmfedit_bake::compile::{CompileSettings, bake_chunk};
    use pmfedit_core::sample;

    #[test]
    fn atlas_packs_pages_with_borders() {
        let page = |exp: u8, v: u8| pmf::Lightmap { size_exp: exp, luxels: vec![v; pmf::Lightmap::byte_len(exp)] };
        let pages = vec![page(2, 10), page(4, 20), page(0, 30)];
        let (atlas, places) = pack_atlas(&pages);
        assert_eq!(places.len(), 3);
        assert!(atlas.width.is_power_of_two());
        for (p, pl) in pages.iter().zip(&places) {
            let e = p.edge() as u32;
            assert!(pl.x + e < atlas.width + 1 && pl.y + e <= atlas.height);
            // Border and inside carry the page's value.
            for (x, y) in [(pl.x - 1, pl.y - 1), (pl.x, pl.y), (pl.x + e, pl.y + e - 1)] {
                assert_eq!(atlas.texels[(y * atlas.width + x) as usize], [p.luxels[0]; 3]);
            }
        }
        // Pages do not overlap.
        for (i, a) in places.iter().enumerate() {
            for b in &places[i + 1..] {
                let sep = a.x + a.edge < b.x - 1
                    || b.x + b.edge < a.x - 1
                    || a.y + a.edge < b.y - 1
                    || b.y + b.edge < a.y - 1;
                assert!(sep, "{a:?} overlaps {b:?}");
            }
        }
        let (empty, none) = pack_atlas(&[]);
        assert_eq!((empty.width, empty.height, none.len()), (1, 1, 0));
    }

    /// A hand-made chunk: cube 0 (material 1, +Y face), cube 1 (material 0, +X and −X faces),
    /// cube 2 (material 1, one face, drawn both sides), cube 3 (material 7: not in the list).
    fn split_chunk() -> (ChunkBake, Library) {
        use pmfedit_core::map::library::{Material, PhysicsMaterial, SoundMaterial};
        let mut lib = Library::starter();
        let phys = lib.add(PhysicsMaterial::new("p")).unwrap();
        let snd = lib.add(SoundMaterial::new("s")).unwrap();
        lib.add(Material { texture: "textures/a.png".into(), color: [255, 0, 0], ..Material::new("a", phys, snd) })
            .unwrap();
        lib.add(Material { transparent: true, alpha: 128, ..Material::new("b", phys, snd) }).unwrap();
        let mut chunk = pmf::Chunk::default();
        chunk.common.used_materials = vec!["b".into(), "a".into()];
        let mut first = 0u32;
        for (material, faces, backfaces) in
            [(1u8, 0b10u8, false), (0, 0b1001, false), (1, 0b1, true), (7, 0b100, false)]
        {
            chunk.common.cubes.push(pmf::Cube {
                draw_backfaces: backfaces,
                visibility: None,
                kind: pmf::CubeKind::Geometry(pmf::GeometryCube { material, physics_material: 0, sound_material: 0 }),
            });
            chunk.client.cubes.push(pmf::ClientCube {
                lighting: None,
                geometry: pmf::ClientGeometry::Geometry(pmf::ClientGeometryCube {
                    lightmap: 0,
                    first_vertex: first,
                    faces,
                }),
            });
            for f in 0..faces.count_ones() {
                for k in 0..4 {
                    let x = (first + f * 4 + k) as f32;
                    chunk.client.vertices.push(pmf::Vertex {
                        position: [x, 0.0, 0.0],
                        uv: [x, 1.0],
                        lightmap_uv: [0.0; 2],
                    });
                }
            }
            first += faces.count_ones() * 4;
        }
        let bake = ChunkBake {
            level: 0,
            chunk: pmfedit_core::map::coords::ChunkCoord::new(0, 0, 0),
            generation: 0,
            pmf: chunk,
            stats: Default::default(),
        };
        (bake, lib)
    }

    #[test]
    fn triangles_are_split_into_one_range_per_material() {
        let (bake, lib) = split_chunk();
        let mesh = build_chunk_mesh(&bake, &lib);
        let r = |m: Option<u8>, t: &str, start, count| MaterialRange { material: m, texture: t.into(), start, count };
        // "a": 6 vertices from cube 0 and 2 × 6 from cube 2 (both sides); then the unknown one.
        assert_eq!(mesh.opaque.ranges, vec![r(Some(1), "textures/a.png", 0, 18), r(None, "", 18, 6)]);
        // "b" is transparent: its two faces go to the blended list.
        assert_eq!(mesh.transparent.ranges, vec![r(Some(0), "", 0, 12)]);
        for list in [&mesh.opaque, &mesh.transparent] {
            let n = list.len();
            assert_eq!((list.colors.len(), list.uvs.len(), list.lightmap_uv.len(), list.edges.len()), (n, n, n, n));
            assert_eq!(list.cubes.len(), n);
            assert_eq!(list.ranges.iter().map(|r| r.count as usize).sum::<usize>(), n);
            for pair in list.ranges.windows(2) {
                assert_eq!(pair[0].start + pair[0].count, pair[1].start, "contiguous");
            }
        }
        // Colours follow the ranges: red "a", magenta unknown, translucent "b".
        assert!(mesh.opaque.colors[..18].iter().all(|c| *c == [1.0, 0.0, 0.0, 1.0]));
        assert!(mesh.opaque.colors[18..].iter().all(|c| *c == [1.0, 0.0, 1.0, 1.0]));
        assert!(mesh.transparent.colors.iter().all(|c| (c[3] - 128.0 / 255.0).abs() < 1e-6));
        // Texture UVs come from the baked vertices: cube 0's face is vertices 0..4.
        assert_eq!(&mesh.opaque.uvs[..3], &[[0.0, 1.0], [1.0, 1.0], [2.0, 1.0]]);
    }

    #[test]
    fn demo_chunk_ranges_cover_every_vertex_once() {
        let map = sample::demo();
        let level = &map.levels[0];
        let bake = bake_chunk(&map, 0, level.frame().center_chunk, &CompileSettings::default()).expect("bakes");
        let mesh = build_chunk_mesh(&bake, &map.library);
        let used = &bake.pmf.common.used_materials;
        for list in [&mesh.opaque, &mesh.transparent] {
            let mut next = 0;
            for r in &list.ranges {
                assert_eq!(r.start, next);
                assert!(r.count > 0 && r.count % 3 == 0);
                let name = &used[usize::from(r.material.expect("demo materials exist"))];
                let (_, m) = map.library.materials().by_name(name).unwrap();
                assert_eq!(r.texture, m.texture);
                next += r.count;
            }
            assert_eq!(next as usize, list.len());
        }
        assert!(mesh.opaque.ranges.iter().any(|r| !r.texture.is_empty()), "the demo has textured materials");
    }

    #[test]
    fn demo_center_chunk_has_triangles_in_bounds() {
        let map = sample::demo();
        let level = &map.levels[0];
        let c = level.frame().center_chunk;
        let bake = bake_chunk(&map, 0, c, &CompileSettings::default()).expect("bakes");
        let mesh = build_chunk_mesh(&bake, &map.library);
        assert!(mesh.opaque.len() >= 6 && mesh.opaque.len() % 3 == 0);
        assert_eq!(mesh.opaque.len(), mesh.opaque.colors.len());
        let half = (1 << level.chunk_size_log2()) as f32 / 2.0 + 1e-3;
        let (lo, hi) = mesh.bounds.expect("not empty");
        assert!(lo.cmpge(Vec3::splat(-half)).all() && hi.cmple(Vec3::splat(half)).all());
        for uv in mesh.opaque.lightmap_uv.iter().chain(&mesh.transparent.lightmap_uv) {
            assert!((0.0..=1.0).contains(&uv[0]) && (0.0..=1.0).contains(&uv[1]), "{uv:?}");
        }
        assert_eq!(mesh.atlas.texels.len() as u32, mesh.atlas.width * mesh.atlas.height);
    }

    #[test]
    fn every_vertex_carries_the_cube_it_came_from() {
        // In the hand-made chunk vertex `k` sits at x = k, and cube i owns the vertices from its
        // `first_vertex` on (4 per face). Cube 0 is the default chunk's empty root; the four
        // geometry cubes are 1..=4.
        let (bake, lib) = split_chunk();
        let mesh = build_chunk_mesh(&bake, &lib);
        let owner = |k: u32| {
            bake.pmf.client.cubes.iter().position(|c| match &c.geometry {
                pmf::ClientGeometry::Geometry(g) => {
                    (g.first_vertex..g.first_vertex + 4 * g.faces.count_ones()).contains(&k)
                }
                _ => false,
            })
        };
        let mut seen = std::collections::BTreeSet::new();
        for list in [&mesh.opaque, &mesh.transparent] {
            for (p, &cube) in list.positions.iter().zip(&list.cubes) {
                assert_eq!(owner(p[0] as u32), Some(cube as usize), "vertex at x = {}", p[0]);
                seen.insert(cube);
            }
        }
        assert_eq!(seen.into_iter().collect::<Vec<_>>(), vec![1, 2, 3, 4]);
    }

    #[test]
    fn demo_triangles_lie_on_the_cube_their_vertices_name() {
        // Each triangle's centre, nudged a little off the face, falls in the cube its three
        // vertices name (found with the engine's octree walk, `pmf::leaf_at`).
        let map = sample::demo();
        let level = &map.levels[0];
        let c = level.frame().center_chunk;
        let bake = bake_chunk(&map, 0, c, &CompileSettings::default()).expect("bakes");
        let mesh = build_chunk_mesh(&bake, &map.library);
        let cubes = &bake.pmf.common.cubes;
        let mut checked = 0;
        for list in [&mesh.opaque, &mesh.transparent] {
            for (tri, ids) in list.positions.chunks(3).zip(list.cubes.chunks(3)) {
                assert!(ids[0] == ids[1] && ids[1] == ids[2], "one cube per triangle");
                let [a, b, d] = [tri[0], tri[1], tri[2]].map(|p| glam::DVec3::from_array(p.map(f64::from)));
                let n = (b - a).cross(d - a);
                if n.length_squared() < 1e-12 {
                    continue;
                }
                let centre = (a + b + d) / 3.0;
                let step = n.normalize() * 1e-3;
                // Inward for a face (wound counter-clockwise from outside), outward for the
                // reversed copy of a back face.
                let found = [centre - step, centre + step]
                    .map(|p| pmf::leaf_at(cubes, level.chunk_size_log2(), p.to_array()).map(|l| l.index));
                assert!(found.contains(&Some(ids[0])), "triangle {tri:?} names cube {}, found {found:?}", ids[0]);
                checked += 1;
            }
        }
        assert!(checked > 100, "{checked} triangles");
    }
}
