//! CPU side of a chunk's draw data: a baked chunk ([`ChunkBake`]) turned into indexed triangle
//! lists (opaque, transparent) plus one lightmap atlas per chunk. Pure, so it is tested without
//! a GPU; [`super::render`] uploads the result.
//!
//! - **Indexed**: a cube face is 4 vertices and 6 indices (two triangles), and so is an
//!   extended-geometry face split into two triangles (its corners are shared, [`shared_quad`]); a
//!   lone extended triangle is 3 and 3. Software GL runs the vertex shader once per vertex of a
//!   draw, so this is a third fewer vertex runs (and vertex bytes) than plain triangles.
//! - **Edges**: each vertex carries an "edge" attribute whose smallest component is 0 on the
//!   face's outline, for the wireframe mode and the face-edge darkening: a quad's corners get
//!   `(x, 1 − x, y, 1 − y)` of their corner position in the quad (so the diagonal is never an
//!   edge; the same for an extended face of two triangles), a lone triangle's barycentric
//!   coordinates and a 1.
//! - **Directions**: each list's triangles are ordered by facing ([`Facing`], in
//!   [`Facing::DRAW_ORDER`]) and [`TriList::facing_starts`] says where each facing's indices begin,
//!   so the renderer skips whole facings a chunk can only show from behind (all its +X faces when
//!   the camera is on its −X side) before any vertex is shaded.
//! - Lightmap pages (square, various sizes) are shelf-packed into one atlas with a one-luxel
//!   border copied from the page edge, so linear filtering never bleeds between pages; lightmap
//!   UVs are remapped into the atlas.
//! - Faces of cubes flagged "draw backfaces" get a second, reversed set of indices over the same
//!   vertices (back-face culling stays on for everything else).
//! - Every vertex carries the index of the PMF cube its face came from ([`TriList::cubes`]), so
//!   the visibility view can tell visible cubes from hidden ones on the GPU.
//! - Vertices are grouped by material: [`TriList::ranges`] says which vertices use which material
//!   (and so which texture); the renderer writes each range's texture layer into its vertices, so
//!   a list is drawn with one texture array bound, whatever its materials.

use glam::Vec3;

use pmfedit_bake::compile::ChunkBake;
use pmfedit_core::format::pmf;
use pmfedit_core::map::Library;
use pmfedit_core::map::library::RenderMode;

/// One face colour as RGBA in `0..=1` (sRGB).
pub type Rgba = [f32; 4];

/// Which way a triangle faces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Facing {
    NegY,
    PosX,
    NegZ,
    PosY,
    /// Not axis-aligned (pushed corners) or degenerate: always drawn.
    Other,
    PosZ,
    NegX,
}

impl Facing {
    /// The order of the facings in a list. Seen from outside a chunk's slabs, the facings a
    /// camera can see are one of ±X, one of ±Z, +Y or −Y, and `Other`; this order keeps the
    /// common sets (camera above: +Y with one of ±X and one of ±Z) in one or two runs.
    pub const DRAW_ORDER: [Facing; 7] =
        [Facing::NegY, Facing::PosX, Facing::NegZ, Facing::PosY, Facing::Other, Facing::PosZ, Facing::NegX];

    fn index(self) -> usize {
        self as usize
    }

    /// The facing of a triangle from its corners (wound counter-clockwise seen from the front).
    pub fn of_triangle(a: Vec3, b: Vec3, c: Vec3) -> Facing {
        let n = (b - a).cross(c - a);
        let l = n.length();
        if l.is_nan() || l <= 1e-12 {
            return Facing::Other;
        }
        let n = n / l;
        let near = |v: f32| v.abs() > 0.9999;
        match (near(n.x), near(n.y), near(n.z)) {
            (true, _, _) if n.x > 0.0 => Facing::PosX,
            (true, _, _) => Facing::NegX,
            (_, true, _) if n.y > 0.0 => Facing::PosY,
            (_, true, _) => Facing::NegY,
            (_, _, true) if n.z > 0.0 => Facing::PosZ,
            (_, _, true) => Facing::NegZ,
            _ => Facing::Other,
        }
    }

    /// Whether any face of this facing inside the box `lo..hi` can be seen from the front by
    /// an eye at `eye` (all three in the same frame).
    pub fn may_face(self, eye: Vec3, lo: Vec3, hi: Vec3) -> bool {
        match self {
            Facing::PosX => eye.x > lo.x,
            Facing::NegX => eye.x < hi.x,
            Facing::PosY => eye.y > lo.y,
            Facing::NegY => eye.y < hi.y,
            Facing::PosZ => eye.z > lo.z,
            Facing::NegZ => eye.z < hi.z,
            Facing::Other => true,
        }
    }
}

/// Indexed triangles of one render pass.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TriList {
    /// Relative to the chunk center, map units.
    pub positions: Vec<[f32; 3]>,
    pub colors: Vec<Rgba>,
    /// Atlas coordinates.
    pub lightmap_uv: Vec<[f32; 2]>,
    /// Texture coordinates from the bake (one repeat per texture tile).
    pub uvs: Vec<[f32; 2]>,
    /// Face-outline attribute (see the module docs).
    pub edges: Vec<[f32; 4]>,
    /// Per vertex: the index of the cube it belongs to in the chunk's PMF cube array.
    pub cubes: Vec<u32>,
    /// Three per triangle, ordered by facing ([`Facing::DRAW_ORDER`]).
    pub indices: Vec<u32>,
    /// Where each facing's indices start, in [`Facing::DRAW_ORDER`]; the last entry is
    /// `indices.len()`.
    pub facing_starts: [u32; 8],
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
    /// The material's row in the renderer's material table: library id + 1; 0 for a material
    /// the library lacks (see [`Look::row`]).
    pub row: u32,
    /// Whether the material animates or glows ([`Look::fx`]).
    pub fx: bool,
    /// First vertex.
    pub start: u32,
    /// Vertices.
    pub count: u32,
}

/// A list being built: vertices, and triangles per facing (indices local to the list).
#[derive(Debug, Clone, Default)]
struct Builder {
    list: TriList,
    by_facing: [Vec<u32>; 7],
}

impl Builder {
    fn push_vertex(&mut self, v: &pmf::Vertex, color: Rgba, edge: [f32; 4], lm: &AtlasPlacement, cube: u32) -> u32 {
        let l = &mut self.list;
        let i = l.positions.len() as u32;
        l.positions.push(v.position);
        l.colors.push(color);
        l.lightmap_uv.push(lm.map(v.lightmap_uv));
        l.uvs.push(v.uv);
        l.edges.push(edge);
        l.cubes.push(cube);
        i
    }

    /// A triangle over vertices already pushed (and, with `backfaces`, its reverse).
    fn push_triangle(&mut self, t: [u32; 3], backfaces: bool) {
        let p = |i: u32| Vec3::from_array(self.list.positions[i as usize]);
        let facing = Facing::of_triangle(p(t[0]), p(t[1]), p(t[2]));
        self.by_facing[facing.index()].extend(t);
        if backfaces {
            let back = Facing::of_triangle(p(t[0]), p(t[2]), p(t[1]));
            self.by_facing[back.index()].extend([t[0], t[2], t[1]]);
        }
    }

    /// Appends `other`'s vertices as one range of `material`, and its triangles.
    fn append_range(&mut self, other: Builder, material: Option<u8>, texture: &str, look: Look) {
        let mut o = other.list;
        if o.positions.is_empty() {
            return;
        }
        let l = &mut self.list;
        let start = l.positions.len() as u32;
        let count = o.positions.len() as u32;
        l.positions.append(&mut o.positions);
        l.colors.append(&mut o.colors);
        l.lightmap_uv.append(&mut o.lightmap_uv);
        l.uvs.append(&mut o.uvs);
        l.edges.append(&mut o.edges);
        l.cubes.append(&mut o.cubes);
        l.ranges.push(MaterialRange {
            material,
            texture: texture.to_owned(),
            row: look.row,
            fx: look.fx,
            start,
            count,
        });
        for (mine, theirs) in self.by_facing.iter_mut().zip(other.by_facing) {
            mine.extend(theirs.into_iter().map(|i| i + start));
        }
    }

    fn finish(self) -> TriList {
        let mut list = self.list;
        let mut starts = [0u32; 8];
        for (k, f) in Facing::DRAW_ORDER.into_iter().enumerate() {
            starts[k] = list.indices.len() as u32;
            list.indices.extend_from_slice(&self.by_facing[f.index()]);
        }
        starts[7] = list.indices.len() as u32;
        list.facing_starts = starts;
        list
    }
}

impl TriList {
    /// Vertices.
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// Whether there is no triangle.
    pub fn is_empty(&self) -> bool {
        self.indices.is_empty()
    }

    /// Triangles.
    pub fn triangles(&self) -> usize {
        self.indices.len() / 3
    }

    /// The index range of facing `DRAW_ORDER[k]`.
    pub fn facing_range(&self, k: usize) -> std::ops::Range<u32> {
        self.facing_starts[k]..self.facing_starts[k + 1]
    }

    /// [`facing_runs`] of this list.
    pub fn runs_facing(&self, eye: Vec3, lo: Vec3, hi: Vec3) -> Vec<(u32, u32)> {
        facing_runs(&self.facing_starts, eye, lo, hi)
    }
}

/// Index runs (first, count) to draw of a list with these [`TriList::facing_starts`] for an eye
/// at `eye`, given the bounds `lo..hi` of its vertices (all chunk-relative): the facings that may
/// face the eye, consecutive ones merged into one run.
pub fn facing_runs(starts: &[u32; 8], eye: Vec3, lo: Vec3, hi: Vec3) -> Vec<(u32, u32)> {
    let mut runs: Vec<(u32, u32)> = Vec::with_capacity(4);
    for (k, f) in Facing::DRAW_ORDER.into_iter().enumerate() {
        let (start, end) = (starts[k], starts[k + 1]);
        if start >= end || !f.may_face(eye, lo, hi) {
            continue;
        }
        match runs.last_mut() {
            Some(last) if last.0 + last.1 == start => last.1 += end - start,
            _ => runs.push((start, end - start)),
        }
    }
    runs
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
    /// Materials with the additive render mode, drawn last, added to what is behind them.
    pub additive: TriList,
    pub atlas: Atlas,
    /// Bounds of the vertices relative to the chunk center (`None` for an empty chunk).
    pub bounds: Option<(Vec3, Vec3)>,
}

impl ChunkMesh {
    /// The three lists: opaque, transparent, additive.
    pub fn lists(&self) -> impl Iterator<Item = &TriList> {
        [&self.opaque, &self.transparent, &self.additive].into_iter()
    }
}

/// What a material looks like in the viewport.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Look {
    pub color: Rgba,
    pub transparent: bool,
    /// Render mode "add".
    pub additive: bool,
    /// Row in the renderer's material table (texture animation, UV scroll, emission): the
    /// library id + 1, or 0 for a name the library lacks.
    pub row: u32,
    /// Whether the material has texture frames, UV scroll or emission: only then do its
    /// vertices read the material table (a lookup per vertex costs software GL dearly).
    pub fx: bool,
}

impl Look {
    /// How a material the library lacks is drawn: magenta.
    pub const UNKNOWN: Look =
        Look { color: [1.0, 0.0, 1.0, 1.0], transparent: false, additive: false, row: 0, fx: false };
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
            Some((id, m)) => {
                let transparent = m.transparent || m.liquid;
                let a = if transparent { f32::from(m.alpha) / 255.0 } else { 1.0 };
                let c = m.color;
                Look {
                    color: [f32::from(c[0]) / 255.0, f32::from(c[1]) / 255.0, f32::from(c[2]) / 255.0, a],
                    transparent,
                    additive: m.render_mode == RenderMode::Add,
                    row: u32::from(id.0) + 1,
                    fx: m.emission != [0; 3]
                        || (m.texture_advance_us > 0 && !m.extra_textures.is_empty())
                        || m.uv_scroll != glam::Vec2::ZERO,
                }
            }
            None => Look::UNKNOWN,
        })
        .collect()
}

/// The edge attribute of a quad's corners (vertex order around the quad): `(x, 1 − x, y, 1 − y)`
/// of corner `(x, y)` of the unit square.
const QUAD_EDGES: [[f32; 4]; 4] =
    [[0.0, 1.0, 0.0, 1.0], [1.0, 0.0, 0.0, 1.0], [1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 1.0, 0.0]];
/// The edge attribute of a triangle's corners: barycentric coordinates, and a 1 that is never
/// the smallest.
const TRI_EDGES: [[f32; 4]; 3] = [[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 1.0], [0.0, 0.0, 1.0, 1.0]];

/// Two triangles of one face (each wound counter-clockwise from the front) that share an edge,
/// walked the opposite way, with the same vertex at both ends: the face's four corners around the
/// outline (`u₁ s₁ u₂ s₂`, counter-clockwise) and the two triangles as indices into them, in the
/// same order and winding as given. `None` when they are not such a pair.
fn shared_quad<'v>(
    t1: [&'v pmf::Vertex; 3],
    t2: [&'v pmf::Vertex; 3],
) -> Option<([&'v pmf::Vertex; 4], [[usize; 3]; 2])> {
    let same = |a: &pmf::Vertex, b: &pmf::Vertex| {
        a.position.map(f32::to_bits) == b.position.map(f32::to_bits)
            && a.uv.map(f32::to_bits) == b.uv.map(f32::to_bits)
            && a.lightmap_uv.map(f32::to_bits) == b.lightmap_uv.map(f32::to_bits)
    };
    // The corner of the first triangle the second lacks, then the shared edge after it.
    let r = (0..3).find(|&r| !t2.iter().any(|v| same(v, t1[r])))?;
    let (u1, s1, s2) = (t1[r], t1[(r + 1) % 3], t1[(r + 2) % 3]);
    // The second triangle must run s2 → s1 → u2.
    let r2 = (0..3).find(|&j| same(t2[j], s2) && same(t2[(j + 1) % 3], s1))?;
    let u2 = t2[(r2 + 2) % 3];
    if same(u2, u1) || same(u2, s1) || same(u2, s2) || same(u1, s1) || same(u1, s2) || same(s1, s2) {
        return None;
    }
    // Corners 0..4 = u1 s1 u2 s2; each triangle keeps its own vertex order: t1 from `r` is
    // u1 s1 s2, t2 from `r2` is s2 s1 u2.
    let tris =
        [std::array::from_fn(|j| [0, 1, 3][(j + 3 - r) % 3]), std::array::from_fn(|j| [3, 1, 2][(j + 3 - r2) % 3])];
    Some(([u1, s1, u2, s2], tris))
}

/// Builds the draw data of one baked chunk.
pub fn build_chunk_mesh(bake: &ChunkBake, library: &Library) -> ChunkMesh {
    let used = &bake.pmf.common.used_materials;
    build_chunk_mesh_with(bake, &material_looks(library, used), &material_textures(library, used))
}

/// [`build_chunk_mesh`] from the chunk's used materials' looks and texture references, already
/// looked up in the library ([`material_looks`], [`material_textures`]): what a mesh worker gets,
/// so it needs no library of its own.
pub fn build_chunk_mesh_with(bake: &ChunkBake, looks: &[Look], textures: &[String]) -> ChunkMesh {
    let pmf = &bake.pmf;
    let (atlas, placements) = pack_atlas(&pmf.client.lightmaps);
    let white = AtlasPlacement { x: 0, y: 0, edge: 0, atlas: (atlas.width, atlas.height) };
    let place = |i: u8| placements.get(usize::from(i)).copied().unwrap_or(white);
    let look = |i: u8| looks.get(usize::from(i)).copied().unwrap_or(Look::UNKNOWN);
    let verts = &pmf.client.vertices;
    let vert = |i: usize| verts.get(i);
    // One bucket per used material (+1 for unknown indices), concatenated at the end.
    let unknown = looks.len();
    let mut buckets = vec![Builder::default(); looks.len() + 1];
    let bucket = |i: u8| usize::from(i).min(unknown);
    for (cube, (common, client)) in pmf.common.cubes.iter().zip(&pmf.client.cubes).enumerate() {
        let cube = cube as u32;
        let backfaces = common.draw_backfaces;
        match (&common.kind, &client.geometry) {
            (pmf::CubeKind::Geometry(g), pmf::ClientGeometry::Geometry(cg)) => {
                let lm = place(cg.lightmap);
                let color = look(g.material).color;
                let b = &mut buckets[bucket(g.material)];
                let mut k = cg.first_vertex as usize;
                for f in 0..6 {
                    if cg.faces & (1 << f) == 0 {
                        continue;
                    }
                    if let (Some(a), Some(bv), Some(c), Some(d)) = (vert(k), vert(k + 1), vert(k + 2), vert(k + 3)) {
                        let corners = [a, bv, c, d];
                        let i: [u32; 4] =
                            std::array::from_fn(|k| b.push_vertex(corners[k], color, QUAD_EDGES[k], &lm, cube));
                        b.push_triangle([i[0], i[1], i[2]], backfaces);
                        b.push_triangle([i[0], i[2], i[3]], backfaces);
                    }
                    k += 4;
                }
            }
            (pmf::CubeKind::ExtGeometry(g), pmf::ClientGeometry::ExtGeometry(cg)) => {
                let mut k = cg.first_vertex as usize;
                for f in 0..6 {
                    let lm = place(cg.lightmaps[f]);
                    let color = look(g.materials[f]).color;
                    let b = &mut buckets[bucket(g.materials[f])];
                    let n = usize::from(cg.triangle_counts[f]);
                    let tri = |k: usize| Some([vert(k)?, vert(k + 1)?, vert(k + 2)?]);
                    // A face split into two triangles is drawn as the quad it is: its four
                    // corners once, the quad's edge attribute (no outline along the split).
                    if let (2, Some(t1), Some(t2)) = (n, tri(k), tri(k + 3))
                        && let Some((corners, tris)) = shared_quad(t1, t2)
                    {
                        let i: [u32; 4] =
                            std::array::from_fn(|q| b.push_vertex(corners[q], color, QUAD_EDGES[q], &lm, cube));
                        for t in tris {
                            b.push_triangle(t.map(|q| i[q]), backfaces);
                        }
                        k += 6;
                        continue;
                    }
                    for _ in 0..n {
                        if let Some([a, bv, c]) = tri(k) {
                            let i0 = b.push_vertex(a, color, TRI_EDGES[0], &lm, cube);
                            let i1 = b.push_vertex(bv, color, TRI_EDGES[1], &lm, cube);
                            let i2 = b.push_vertex(c, color, TRI_EDGES[2], &lm, cube);
                            b.push_triangle([i0, i1, i2], backfaces);
                        }
                        k += 3;
                    }
                }
            }
            _ => {}
        }
    }
    let (mut opaque, mut transparent, mut additive) = (Builder::default(), Builder::default(), Builder::default());
    for (i, b) in buckets.into_iter().enumerate() {
        let (material, look, texture) = match looks.get(i) {
            Some(l) => (Some(i as u8), *l, textures.get(i).map_or("", String::as_str)),
            None => (None, Look::UNKNOWN, ""),
        };
        let list = if look.additive {
            &mut additive
        } else if look.transparent {
            &mut transparent
        } else {
            &mut opaque
        };
        list.append_range(b, material, texture, look);
    }
    let mut out = ChunkMesh {
        opaque: opaque.finish(),
        transparent: transparent.finish(),
        additive: additive.finish(),
        ..ChunkMesh::default()
    };
    let all = out.lists().flat_map(|l| &l.positions).map(|p| Vec3::from_array(*p));
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
            reads: Vec::new(),
            top_layer: None,
            vis: None,
        };
        (bake, lib)
    }

    #[test]
    fn triangles_are_split_into_one_range_per_material() {
        let (bake, lib) = split_chunk();
        let mesh = build_chunk_mesh(&bake, &lib);
        let row = |name: &str| u32::from(lib.materials().by_name(name).unwrap().0.0) + 1;
        let r = |m: Option<u8>, t: &str, start, count| {
            let row = match m {
                Some(1) => row("a"),
                Some(_) => row("b"),
                None => 0,
            };
            MaterialRange { material: m, texture: t.into(), row, fx: false, start, count }
        };
        // "a": 4 vertices from cube 0 and 4 from cube 2 (its back side reuses them); then the
        // unknown one.
        assert_eq!(mesh.opaque.ranges, vec![r(Some(1), "textures/a.png", 0, 8), r(None, "", 8, 4)]);
        // Two triangles per face, cube 2's twice (both sides).
        assert_eq!(mesh.opaque.triangles(), 2 + 4 + 2);
        // "b" is transparent: its two faces go to the blended list.
        assert_eq!(mesh.transparent.ranges, vec![r(Some(0), "", 0, 8)]);
        assert_eq!(mesh.transparent.triangles(), 4);
        for list in [&mesh.opaque, &mesh.transparent] {
            let n = list.len();
            assert_eq!((list.colors.len(), list.uvs.len(), list.lightmap_uv.len(), list.edges.len()), (n, n, n, n));
            assert_eq!(list.cubes.len(), n);
            assert_eq!(list.ranges.iter().map(|r| r.count as usize).sum::<usize>(), n);
            for pair in list.ranges.windows(2) {
                assert_eq!(pair[0].start + pair[0].count, pair[1].start, "contiguous");
            }
            assert!(list.indices.iter().all(|&i| (i as usize) < n));
            assert_eq!(list.facing_starts[7] as usize, list.indices.len());
        }
        // Cube 2's back side: the same vertices in reverse order.
        let tris: Vec<[u32; 3]> = mesh.opaque.indices.chunks(3).map(|t| [t[0], t[1], t[2]]).collect();
        let front = tris.iter().find(|t| t[0] == 4).expect("cube 2's first triangle");
        assert!(tris.contains(&[front[0], front[2], front[1]]), "{tris:?}");
        // Colours follow the ranges: red "a", magenta unknown, translucent "b".
        assert!(mesh.opaque.colors[..8].iter().all(|c| *c == [1.0, 0.0, 0.0, 1.0]));
        assert!(mesh.opaque.colors[8..].iter().all(|c| *c == [1.0, 0.0, 1.0, 1.0]));
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
                assert!(r.count > 0);
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
        assert!(mesh.opaque.triangles() >= 2 && mesh.opaque.indices.len().is_multiple_of(3));
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
            for t in list.indices.chunks(3) {
                let tri = [0, 1, 2].map(|k| list.positions[t[k] as usize]);
                let ids = [0, 1, 2].map(|k| list.cubes[t[k] as usize]);
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

    /// The demo's chunks, meshed.
    fn demo_meshes() -> Vec<ChunkMesh> {
        let map = sample::demo();
        let level = &map.levels[0];
        level
            .chunks()
            .map(|(c, _)| {
                build_chunk_mesh(&bake_chunk(&map, 0, *c, &CompileSettings::default()).unwrap(), &map.library)
            })
            .collect()
    }

    #[test]
    fn triangles_are_ordered_by_facing_and_no_front_facing_one_is_skipped() {
        let meshes = demo_meshes();
        let mut skipped = 0;
        for mesh in &meshes {
            let Some((lo, hi)) = mesh.bounds else { continue };
            for list in [&mesh.opaque, &mesh.transparent] {
                let corner = |t: &[u32], k: usize| Vec3::from_array(list.positions[t[k] as usize]);
                // Each triangle sits in the range of its own facing.
                for (k, f) in Facing::DRAW_ORDER.into_iter().enumerate() {
                    let r = list.facing_range(k);
                    for t in list.indices[r.start as usize..r.end as usize].chunks(3) {
                        assert_eq!(Facing::of_triangle(corner(t, 0), corner(t, 1), corner(t, 2)), f);
                    }
                }
                // From eyes all around (and inside), every triangle the eye sees from the front
                // is in a run; runs never overlap.
                for eye in [
                    Vec3::new(100.0, 50.0, -80.0),
                    Vec3::new(-100.0, 50.0, 80.0),
                    Vec3::new(3.0, -40.0, 2.0),
                    Vec3::new(0.5, 0.5, 0.5),
                    (lo + hi) * 0.5,
                ] {
                    let runs = list.runs_facing(eye, lo, hi);
                    let drawn = |i: u32| runs.iter().any(|&(first, n)| (first..first + n).contains(&i));
                    for (k, t) in list.indices.chunks(3).enumerate() {
                        let [a, b, c] = [0, 1, 2].map(|j| corner(t, j));
                        let n = (b - a).cross(c - a);
                        if n.dot(eye - a) > 1e-4 && !drawn(3 * k as u32) {
                            skipped += 1;
                        }
                    }
                    let total: u32 = runs.iter().map(|r| r.1).sum();
                    assert!(total as usize <= list.indices.len());
                }
                // A far eye on the +X side skips the −X faces.
                let neg_x = Facing::DRAW_ORDER.iter().position(|f| *f == Facing::NegX).unwrap();
                let r = list.facing_range(neg_x);
                if !r.is_empty() {
                    let runs = list.runs_facing(Vec3::new(1e4, 0.0, 0.0), lo, hi);
                    assert!(runs.iter().all(|&(first, n)| first + n <= r.start || first >= r.end));
                }
            }
        }
        assert_eq!(skipped, 0, "front-facing triangles left out");
        let facings: std::collections::BTreeSet<usize> =
            meshes.iter().flat_map(|m| (0..7).filter(move |&k| !m.opaque.facing_range(k).is_empty())).collect();
        assert_eq!(facings.len(), 7, "the demo has faces of every facing, pushed corners included");
    }

    #[test]
    fn additive_materials_get_their_own_list_and_rows_name_library_ids() {
        let map = sample::demo();
        let (clouds_id, clouds) = map.library.materials().by_name("clouds").expect("the demo has clouds");
        assert_eq!(clouds.render_mode, RenderMode::Add);
        let looks = material_looks(&map.library, &["clouds".into(), "nope".into()]);
        assert!(looks[0].additive);
        assert_eq!(looks[0].row, u32::from(clouds_id.0) + 1);
        assert_eq!(looks[1], Look::UNKNOWN);
        // A chunk painted with clouds: its faces leave the opaque list for the additive one.
        let (mut bake, lib) = split_chunk();
        let mut lib = lib;
        let p = lib.physics_materials().iter().next().unwrap().0;
        let s = lib.sound_materials().iter().next().unwrap().0;
        lib.add(pmfedit_core::map::library::Material {
            render_mode: RenderMode::Add,
            ..pmfedit_core::map::library::Material::new("glow", p, s)
        })
        .unwrap();
        bake.pmf.common.used_materials[0] = "glow".into();
        let mesh = build_chunk_mesh(&bake, &lib);
        assert!(mesh.transparent.is_empty());
        assert_eq!(mesh.additive.triangles(), 4);
        assert_eq!(mesh.additive.ranges.len(), 1);
        assert_eq!(mesh.additive.ranges[0].row, u32::from(lib.materials().by_name("glow").unwrap().0.0) + 1);
    }

    #[test]
    fn edges_are_zero_on_a_face_outline_and_not_on_its_diagonal() {
        let e = |w: [f32; 4]| w.into_iter().fold(f32::INFINITY, f32::min);
        let mix = |a: [f32; 4], b: [f32; 4], t: f32| [0, 1, 2, 3].map(|k| a[k] * (1.0 - t) + b[k] * t);
        let q = QUAD_EDGES;
        // Midpoints of the four sides: on the outline.
        for k in 0..4 {
            assert_eq!(e(mix(q[k], q[(k + 1) % 4], 0.5)), 0.0);
        }
        // The middle of the diagonal 0–2 (shared by the two triangles) is inside the face.
        assert_eq!(e(mix(q[0], q[2], 0.5)), 0.5);
        // A triangle: the middle of each side is on the outline, the centre is not.
        for k in 0..3 {
            assert_eq!(e(mix(TRI_EDGES[k], TRI_EDGES[(k + 1) % 3], 0.5)), 0.0);
        }
        let centre = [0, 1, 2, 3].map(|j| (TRI_EDGES[0][j] + TRI_EDGES[1][j] + TRI_EDGES[2][j]) / 3.0);
        assert!(e(centre) > 0.3);
    }

    #[test]
    fn two_triangles_sharing_an_edge_are_one_quad() {
        let v = |x: f32, y: f32| pmf::Vertex { position: [x, y, 0.0], uv: [x, y], lightmap_uv: [x / 2.0, y / 2.0] };
        let (a, b, c, d) = (v(0.0, 0.0), v(1.0, 0.0), v(1.0, 1.0), v(0.0, 1.0));
        let corners_of = |q: &[&pmf::Vertex; 4], t: [usize; 3]| t.map(|k| q[k].position);
        // Both splits of the square a b c d, each triangle given from any of its corners: the
        // quad is the square (from some corner, counter-clockwise), the triangles are the ones
        // given, vertex for vertex.
        for (t1, t2) in [([&a, &b, &c], [&a, &c, &d]), ([&a, &b, &d], [&b, &c, &d])] {
            for r1 in 0..3 {
                for r2 in 0..3 {
                    let t1 = [t1[r1], t1[(r1 + 1) % 3], t1[(r1 + 2) % 3]];
                    let t2 = [t2[r2], t2[(r2 + 1) % 3], t2[(r2 + 2) % 3]];
                    let (q, tris) = shared_quad(t1, t2).expect("a quad");
                    assert_eq!(corners_of(&q, tris[0]), t1.map(|v| v.position));
                    assert_eq!(corners_of(&q, tris[1]), t2.map(|v| v.position));
                    let square = [a.position, b.position, c.position, d.position];
                    let start = square.iter().position(|p| *p == q[0].position).unwrap();
                    assert_eq!(q.map(|v| v.position), std::array::from_fn(|k| square[(start + k) % 4]));
                }
            }
        }
        // Not a pair: one shared corner only, the shared edge walked the same way, or the same
        // position with another lightmap coordinate (two patches).
        let e = v(2.0, 0.0);
        assert!(shared_quad([&a, &b, &c], [&b, &c, &e]).is_none());
        assert!(shared_quad([&a, &b, &c], [&e, &b, &v(2.0, 2.0)]).is_none());
        assert!(shared_quad([&a, &b, &c], [&a, &b, &d]).is_none());
        let mut c2 = c;
        c2.lightmap_uv = [0.9, 0.9];
        assert!(shared_quad([&a, &b, &c], [&a, &c2, &d]).is_none());
    }

    /// The demo's hills are extended cubes: the triangles drawn are the baked ones, corner for
    /// corner, while a face of two triangles shades four vertices, not six, and its split is
    /// not drawn as an outline.
    #[test]
    fn extended_faces_of_two_triangles_share_their_corners() {
        let map = sample::demo();
        let (mut shared, mut pmf_tris, mut drawn_tris) = (0, Vec::new(), Vec::new());
        for (c, _) in map.levels[0].chunks() {
            let bake = bake_chunk(&map, 0, *c, &CompileSettings::default()).unwrap();
            let mesh = build_chunk_mesh(&bake, &map.library);
            let verts = &bake.pmf.client.vertices;
            let mut vertices = 0;
            for (common, client) in bake.pmf.common.cubes.iter().zip(&bake.pmf.client.cubes) {
                match (&common.kind, &client.geometry) {
                    (pmf::CubeKind::ExtGeometry(_), pmf::ClientGeometry::ExtGeometry(cg)) => {
                        let mut k = cg.first_vertex as usize;
                        for n in cg.triangle_counts {
                            for t in 0..usize::from(n) {
                                pmf_tris.push((*c, [0, 1, 2].map(|j| verts[k + 3 * t + j].position)));
                            }
                            vertices += if n == 2 { 4 } else { 3 * usize::from(n) };
                            shared += usize::from(n == 2);
                            k += 3 * usize::from(n);
                        }
                    }
                    (pmf::CubeKind::Geometry(_), pmf::ClientGeometry::Geometry(cg)) => {
                        let faces = cg.faces.count_ones() as usize;
                        let first = cg.first_vertex as usize;
                        for f in 0..faces {
                            let q = |j: usize| verts[first + 4 * f + j].position;
                            pmf_tris.push((*c, [q(0), q(1), q(2)]));
                            pmf_tris.push((*c, [q(0), q(2), q(3)]));
                        }
                        vertices += 4 * faces;
                    }
                    _ => {}
                }
            }
            let lists = [&mesh.opaque, &mesh.transparent, &mesh.additive];
            assert_eq!(lists.iter().map(|l| l.positions.len()).sum::<usize>(), vertices, "{c:?}");
            for l in lists {
                for t in l.indices.chunks(3) {
                    drawn_tris.push((*c, [0, 1, 2].map(|j| l.positions[t[j] as usize])));
                }
                // No face's split is an outline: the middle of every edge two triangles share
                // (vertices are shared within a face only) lies inside.
                // (A two-sided cube's back triangles are its front ones reversed: counted once.)
                let mut uses = std::collections::HashMap::new();
                let mut sides = std::collections::HashSet::new();
                for t in l.indices.chunks(3) {
                    let mut sorted = [t[0], t[1], t[2]];
                    sorted.sort_unstable();
                    if !sides.insert(sorted) {
                        continue;
                    }
                    for k in 0..3 {
                        let (p, q) = (t[k].min(t[(k + 1) % 3]), t[k].max(t[(k + 1) % 3]));
                        *uses.entry((p, q)).or_insert(0) += 1;
                    }
                }
                for (&(p, q), _) in uses.iter().filter(|(_, n)| **n > 1) {
                    let (ep, eq) = (l.edges[p as usize], l.edges[q as usize]);
                    let mid = [0, 1, 2, 3].map(|k| (ep[k] + eq[k]) / 2.0);
                    assert!(mid.into_iter().fold(f32::INFINITY, f32::min) > 0.0, "{c:?}: a split drawn as an outline");
                }
            }
        }
        assert!(shared > 50, "{shared} extended faces of two triangles in the demo");
        // Drawn triangles (without the back sides of two-sided cubes) are the baked ones.
        let key = |(c, t): &(pmfedit_core::map::coords::ChunkCoord, [[f32; 3]; 3])| {
            let r = (0..3).min_by(|&a, &b| t[a].map(f32::to_bits).cmp(&t[b].map(f32::to_bits))).unwrap();
            ((c.x, c.y, c.z), [0, 1, 2].map(|j| t[(r + j) % 3].map(f32::to_bits)))
        };
        let drawn: std::collections::BTreeSet<_> = drawn_tris.iter().map(key).collect();
        assert!(drawn_tris.len() >= pmf_tris.len());
        assert!(pmf_tris.iter().map(key).all(|t| drawn.contains(&t)), "a baked triangle is not drawn as baked");
    }
}
