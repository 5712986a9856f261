//! `pmfc inspect --sizes`: where a `.pmf` file's bytes go, per kind of record, before and after
//! compression.
//!
//! A chunk's three blocks are LZ4-compressed as wholes (PMF-NOTES L5), so a record kind has no
//! compressed size of its own. We measure it by taking the kinds out one after the other
//! (farthest visibility first, pathfinding last) and compressing the chunk's blocks again after
//! each step: a kind's compressed size is what its removal saved. The steps add up exactly to
//! the chunk blocks' compressed size, what is left being the cube records, tables and counts.
//! Raw sizes are the bytes the writer puts in the uncompressed blocks for each kind.

use serde::Serialize;

use pmfedit_core::format::pmf::{self, ClientGeometry, GridSize};

/// Where a file's bytes go.
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct SizeBreakdown {
    /// The whole file.
    pub file: u64,
    /// Header, level blocks, chunk tables and the embedded archive: everything but chunk blocks.
    pub outside_chunks: u64,
    /// The parts of the chunk blocks, in the order they are taken out (see the module doc).
    pub parts: Vec<PartSize>,
    /// How the static lightmaps' luxels are used.
    pub luxels: LuxelUse,
}

/// One kind of record of the chunk blocks, all levels and chunks together.
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct PartSize {
    /// What it is, e.g. `"visibility, far chunks"`.
    pub name: String,
    /// Bytes in the uncompressed blocks.
    pub raw: u64,
    /// Compressed bytes its removal saves (see the module doc); a tiny part can come out
    /// negative, when LZ4 happens to do better with it than without.
    pub compressed: i64,
}

/// How the luxels of the static lightmap pages are used.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Default)]
pub struct LuxelUse {
    /// Pages.
    pub pages: u64,
    /// Luxels of all pages.
    pub total: u64,
    /// The faces' area in luxels (their lightmap UV area times the page's luxel count).
    pub face_area: u64,
    /// Luxels of face patches beyond that area: the half-luxel border each patch carries so that
    /// bilinear filtering stays inside it (PMF-NOTES K1, `light/patch.rs`).
    pub padding: u64,
    /// Luxels no face's patch covers: what is left of a page's power-of-two square.
    pub filler: u64,
    /// Patches whose luxels are all the same colour.
    pub uniform_patches: u64,
    /// Patches (distinct luxel rectangles that faces' UVs span).
    pub patches: u64,
}

/// Part names, in the order they are taken out.
const VIS_FAR: &str = "visibility, far chunks";
const VIS_OWN: &str = "visibility, own chunk";
const LUXELS: &str = "lightmap luxels (static and dynamic)";
const VERTEX_LIGHTMAP_UV: &str = "vertex lightmap UVs";
const VERTEX_TEXTURE_UV: &str = "vertex texture UVs";
const VERTICES: &str = "vertex positions";
const CELL_LIGHT: &str = "air-cell lighting (K4)";
const LIGHTS: &str = "dynamic and fast light records, fast light multipliers";
const PATHS: &str = "pathfinding";
const REST: &str = "cubes, tables, counts (the rest)";

/// The compressed sizes of a chunk's three blocks, exactly as a file holds them.
fn compressed(chunk: &pmf::Chunk, level: usize, index: usize, exp: u8, grid: GridSize) -> pmf::WriteResult<[u64; 3]> {
    let sizes = pmf::encode_chunk(chunk, level, index, exp, grid)?.sizes();
    Ok([u64::from(sizes[0]), u64::from(sizes[1]), u64::from(sizes[2])])
}

/// The bytes a visibility record takes: own list, then per far chunk its index, count and list.
fn vis_raw(v: &pmf::Visibility) -> (u64, u64) {
    let own = 8 + 4 * v.cubes.len() as u64;
    let far = v.chunks.iter().map(|c| 8 + 4 * c.cubes.len() as u64).sum();
    (own, far)
}

/// Measures `file`, whose encoded length is `file_len`.
///
/// Errors: those of [`pmf::encode_chunk`] (a file read by [`pmf::read`] has none).
pub fn size_breakdown(file: &pmf::File, file_len: u64) -> pmf::WriteResult<SizeBreakdown> {
    let names =
        [VIS_FAR, VIS_OWN, LUXELS, VERTEX_LIGHTMAP_UV, VERTEX_TEXTURE_UV, VERTICES, CELL_LIGHT, LIGHTS, PATHS, REST];
    let mut parts: Vec<PartSize> =
        names.iter().map(|n| PartSize { name: (*n).to_owned(), ..PartSize::default() }).collect();
    let mut chunk_bytes = 0;
    let mut luxels = LuxelUse::default();
    for (li, level) in file.levels.iter().enumerate() {
        let (exp, grid) = (level.chunk_size_exp, level.grid);
        for (i, original) in level.chunks.iter().enumerate() {
            luxel_use(original, &mut luxels);
            let mut c = original.clone();
            let mut before = compressed(&c, li, i, exp, grid)?;
            chunk_bytes += before.iter().sum::<u64>();
            let mut step = |part: usize, c: &pmf::Chunk, raw: u64| -> pmf::WriteResult<()> {
                let after = compressed(c, li, i, exp, grid)?;
                let saved: i64 = before.iter().zip(&after).map(|(&b, &a)| b as i64 - a as i64).sum();
                parts[part].raw += raw;
                parts[part].compressed += saved;
                before = after;
                Ok(())
            };
            // Far lists, then own lists.
            let (mut own, mut far) = (0, 0);
            for cube in &mut c.common.cubes {
                if let Some(v) = &mut cube.visibility {
                    let (o, f) = vis_raw(v);
                    (own, far) = (own + o, far + f);
                    v.chunks = Vec::new().into();
                }
            }
            step(0, &c, far)?;
            c.common.cubes.iter_mut().for_each(|cube| cube.visibility = None);
            step(1, &c, own)?;
            // Luxels (zeroed: the pages stay, so the cubes' lightmap indices stay valid).
            let mut raw = 0;
            for map in &mut c.client.lightmaps {
                raw += map.luxels.len() as u64;
                map.luxels.fill(0);
            }
            for layer in c.client.dynamic_lights.iter_mut().flat_map(|l| &mut l.layers) {
                raw += layer.luxels.len() as u64;
                layer.luxels.fill(0);
            }
            step(2, &c, raw)?;
            // Vertices (zeroed field by field: the cubes' vertex indices stay valid).
            let n = c.client.vertices.len() as u64;
            c.client.vertices.iter_mut().for_each(|v| v.lightmap_uv = [0.0; 2]);
            step(3, &c, 8 * n)?;
            c.client.vertices.iter_mut().for_each(|v| v.uv = [0.0; 2]);
            step(4, &c, 8 * n)?;
            c.client.vertices.iter_mut().for_each(|v| v.position = [0.0; 3]);
            step(5, &c, 12 * n)?;
            let mut raw = 0;
            for cube in &mut c.client.cubes {
                if let Some(l) = cube.lighting.take() {
                    raw += 5 + 2 * (l.dynamic().len() + l.fast().len()) as u64;
                }
            }
            step(6, &c, raw)?;
            // Light records go whole (no cell refers to them any more); their layers were counted
            // with the luxels.
            let before_lights = pmf::chunk_blocks(&c, li, i, exp, grid)?.iter().map(|b| b.len() as u64).sum::<u64>();
            let layer_bytes: u64 =
                c.client.dynamic_lights.iter().flat_map(|l| &l.layers).map(|l| l.luxels.len() as u64).sum();
            (c.common.dynamic_lights, c.common.fast_lights) = (Vec::new(), Vec::new());
            (c.client.dynamic_lights, c.client.fast_lights) = (Vec::new(), Vec::new());
            let after_lights = pmf::chunk_blocks(&c, li, i, exp, grid)?.iter().map(|b| b.len() as u64).sum::<u64>();
            step(7, &c, (before_lights - after_lights).saturating_sub(layer_bytes))?;
            // Attribute names are string offsets (4 bytes each) plus their count byte.
            let mut raw = 0;
            for cube in &mut c.server.cubes {
                if let Some(p) = cube.pathfinding.take() {
                    raw += 1 + 4 * p.len() as u64;
                }
            }
            step(8, &c, raw)?;
            let blocks = pmf::chunk_blocks(&c, li, i, exp, grid)?;
            // The zeroed luxels and vertices are still in the blocks.
            let zeroed = 3 * c.client.lightmaps.iter().map(|m| (m.edge() * m.edge()) as u64).sum::<u64>() + 28 * n;
            parts[9].raw += blocks.iter().map(|b| b.len() as u64).sum::<u64>() - zeroed;
            parts[9].compressed += before.iter().sum::<u64>() as i64;
        }
    }
    Ok(SizeBreakdown { file: file_len, outside_chunks: file_len.saturating_sub(chunk_bytes), parts, luxels })
}

/// Adds the luxel use of `chunk`'s static pages to `out`. A face's patch is the luxel rectangle
/// its lightmap UVs span, widened by half a luxel on each side (the UVs run between the centres
/// of the patch's outer luxels).
fn luxel_use(chunk: &pmf::Chunk, out: &mut LuxelUse) {
    let maps = &chunk.client.lightmaps;
    let mut covered: Vec<Vec<bool>> = maps.iter().map(|m| vec![false; m.edge() * m.edge()]).collect();
    let mut rects: Vec<(usize, [usize; 4])> = Vec::new();
    let mut area_sum = 0.0;
    let mut face = |page: u8, verts: &[pmf::Vertex]| {
        let (page, Some(map)) = (usize::from(page), maps.get(usize::from(page))) else { return };
        let edge = map.edge() as f64;
        let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
        for v in verts {
            let uv = v.lightmap_uv.map(|c| f64::from(c) * edge);
            lo = [lo[0].min(uv[0]), lo[1].min(uv[1])];
            hi = [hi[0].max(uv[0]), hi[1].max(uv[1])];
        }
        if !lo[0].is_finite() || !hi[0].is_finite() {
            return;
        }
        // Triangle fan area over the vertices taken in threes (quads as two triangles).
        let uv = |v: &pmf::Vertex| (f64::from(v.lightmap_uv[0]) * edge, f64::from(v.lightmap_uv[1]) * edge);
        let tri = |a: (f64, f64), b: (f64, f64), c: (f64, f64)| {
            ((b.0 - a.0) * (c.1 - a.1) - (c.0 - a.0) * (b.1 - a.1)).abs() / 2.0
        };
        let area = if verts.len() == 4 {
            tri(uv(&verts[0]), uv(&verts[1]), uv(&verts[2])) + tri(uv(&verts[0]), uv(&verts[2]), uv(&verts[3]))
        } else {
            verts.chunks_exact(3).map(|t| tri(uv(&t[0]), uv(&t[1]), uv(&t[2]))).sum()
        };
        area_sum += area;
        let clamp = |v: f64| (v.round().max(0.0) as usize).min(map.edge());
        let r = [clamp(lo[0] - 0.5), clamp(lo[1] - 0.5), clamp(hi[0] + 0.5), clamp(hi[1] + 0.5)];
        if !rects.contains(&(page, r)) {
            rects.push((page, r));
        }
    };
    for client in &chunk.client.cubes {
        match &client.geometry {
            ClientGeometry::None => {}
            ClientGeometry::Geometry(g) => {
                let mut at = g.first_vertex as usize;
                for _ in 0..(g.faces & 0x3F).count_ones() {
                    if let Some(v) = chunk.client.vertices.get(at..at + 4) {
                        face(g.lightmap, v);
                    }
                    at += 4;
                }
            }
            ClientGeometry::ExtGeometry(g) => {
                let mut at = g.first_vertex as usize;
                for (&page, &n) in g.lightmaps.iter().zip(&g.triangle_counts) {
                    let len = 3 * usize::from(n);
                    if let (true, Some(v)) = (n > 0, chunk.client.vertices.get(at..at + len)) {
                        face(page, v);
                    }
                    at += len;
                }
            }
        }
    }
    for &(page, [x0, y0, x1, y1]) in &rects {
        let map = &maps[page];
        let edge = map.edge();
        let first = &map.luxels[3 * (y0 * edge + x0)..][..3];
        let mut uniform = true;
        for y in y0..y1 {
            for x in x0..x1 {
                covered[page][y * edge + x] = true;
                uniform &= &map.luxels[3 * (y * edge + x)..][..3] == first;
            }
        }
        out.uniform_patches += u64::from(uniform && x1 > x0 && y1 > y0);
    }
    out.patches += rects.len() as u64;
    out.pages += maps.len() as u64;
    let area = area_sum.round() as u64;
    let mut used = 0;
    for c in &covered {
        let n = c.iter().filter(|&&b| b).count() as u64;
        used += n;
        out.total += c.len() as u64;
        out.filler += c.len() as u64 - n;
    }
    // Hand-made files may map faces over whole pages: no more area than luxels covered.
    let area = area.min(used);
    out.face_area += area;
    out.padding += used - area;
}
