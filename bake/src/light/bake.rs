//! Baking one chunk: lightmap pages, dynamic light layers, fast light vertex multipliers and cube
//! lighting data.

use glam::DVec3;
use pmfedit_core::format::pmf;
use pmfedit_core::map::Level;
use pmfedit_core::map::coords::ChunkCoord;
use pmfedit_core::map::library::LightId;

use super::{
    BakedMode, LightError, LightMemo, LightScene, Packing, Patch, Placement, SceneLight, SurfaceFace, pack_tight,
    plan_patches,
};

/// One vertex of the chunk's vertex array, for fast lights.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LitVertex {
    /// World position.
    pub position: DVec3,
    /// Unit outward normal of its face.
    pub normal: DVec3,
    /// A point inside its face (its centre): the vertex is lit a little way towards it
    /// ([`LightSettings::edge_inset`](super::LightSettings::edge_inset)), so a corner against a
    /// wall is not in the wall.
    pub inside: DVec3,
}

impl LitVertex {
    /// One vertex per corner of each face, in order: the vertex array of a mesher that writes
    /// each face's corners consecutively (docs/spec/PMF-NOTES.md G2/G3).
    pub fn for_faces(faces: &[SurfaceFace]) -> Vec<LitVertex> {
        faces
            .iter()
            .flat_map(|f| {
                let inside = f.center();
                let normal = f.normal.normalize_or_zero();
                f.corners.iter().map(move |&position| LitVertex { position, normal, inside })
            })
            .collect()
    }

    /// Where the vertex is lit.
    fn sample(&self, inset: f64) -> DVec3 {
        let to = self.inside - self.position;
        let len = to.length();
        if len > 0.0 { self.position + to * (inset.min(0.5 * len) / len) } else { self.position }
    }
}

/// What the lighting stage needs of one chunk.
#[derive(Debug, Clone, Copy)]
pub struct ChunkInput<'a> {
    /// The chunk (decides which lights are considered: [`chunk_light_deps`]).
    pub chunk: ChunkCoord,
    /// The faces that get lightmaps.
    pub faces: &'a [SurfaceFace],
    /// The chunk's vertex array in order (fast light ranges index it); may be empty when the
    /// chunk has no fast light.
    pub vertices: &'a [LitVertex],
    /// World centres of the air cells that may carry cube lighting data (K4), in the order the
    /// writer wants the results.
    pub air_cells: &'a [DVec3],
}

/// A face's lightmap: its patch and where the patch lies.
#[derive(Debug, Clone, PartialEq)]
pub struct FaceLightmap {
    pub patch: Patch,
    pub placement: Placement,
}

impl FaceLightmap {
    /// The lightmap index for the face's cube (`+X lightmap` etc.).
    pub fn page(&self) -> u8 {
        self.placement.page
    }

    /// The lightmap UV of world point `p` of the face (e.g. a vertex).
    pub fn uv_at(&self, p: DVec3) -> [f32; 2] {
        self.placement.uv_at(&self.patch, p)
    }
}

/// Everything the lighting stage produces for one chunk, ready for the PMF chunk records.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChunkLighting {
    /// Client chunk data "Lightmaps": static light + ambient.
    pub lightmaps: Vec<pmf::Lightmap>,
    /// Per input face (same order): patch and placement.
    pub faces: Vec<FaceLightmap>,
    /// Common chunk data "Dynamic lights", in light id order.
    pub dynamic_lights: Vec<pmf::DynamicLight>,
    /// Client-side data of each dynamic light (same order).
    pub client_dynamic_lights: Vec<pmf::ClientDynamicLight>,
    /// The level light of each dynamic light (same order).
    pub dynamic_ids: Vec<LightId>,
    /// Common chunk data "Fast lights", in light id order.
    pub fast_lights: Vec<pmf::FastLight>,
    /// Client-side data of each fast light (same order).
    pub client_fast_lights: Vec<pmf::ClientFastLight>,
    /// The level light of each fast light (same order).
    pub fast_ids: Vec<LightId>,
    /// Per input air cell (same order): its lighting data, `None` where no light (nor ambient)
    /// reaches it.
    pub cells: Vec<Option<pmf::CubeLighting>>,
    /// Chunks of the level, beyond the chunk and its 26 neighbours, that rays entered (sun, sky,
    /// bounce, and shadow rays of the points bounce light comes from), sorted: an edit there can
    /// change this result ([`crate::compile::ChunkBake::reads`]).
    pub reads: Vec<ChunkCoord>,
}

/// Which baked lights can reach `chunk` of `level`: the sphere of each light's reach (range plus
/// half its emitter's diagonal) meets the chunk's box. In light id order. Realtime lights and
/// lights that cannot light anything (zero range, intensity or colour) are left out.
pub fn chunk_light_deps(level: &Level, chunk: ChunkCoord) -> Vec<LightId> {
    let (lo, hi) = level.frame().chunk_world_box(chunk);
    level
        .objects
        .lights()
        .iter()
        .filter_map(|(id, l)| SceneLight::new(id, l, 1))
        .filter(|l| l.reaches_box(lo, hi))
        .map(|l| l.id)
        .collect()
}

fn to_u8(v: f64) -> u8 {
    // `as` saturates and maps NaN to 0.
    v.round() as u8
}

fn rgb(v: DVec3) -> [u8; 3] {
    [to_u8(v.x), to_u8(v.y), to_u8(v.z)]
}

/// Zero gaps of fewer vertices than this are stored inline (a new range costs 8 bytes).
const GAP_MERGE: usize = 8;

/// Run-length encodes per-vertex multipliers as fast light vertex ranges (K3): vertices with
/// multiplier 0 are skipped, except gaps of fewer than 8 zeros between lit runs, which are stored
/// as zeros (cheaper than a new range's 8-byte header, same meaning). Trailing zeros are dropped.
pub fn encode_fast_ranges(multipliers: &[u8]) -> Vec<pmf::FastLightRange> {
    let mut ranges: Vec<pmf::FastLightRange> = Vec::new();
    let mut skip = 0usize;
    let mut i = 0;
    while i < multipliers.len() {
        if multipliers[i] == 0 {
            skip += 1;
            i += 1;
            continue;
        }
        let start = i;
        let mut end = i; // exclusive end of the lit run, merged gaps included
        while i < multipliers.len() {
            if multipliers[i] != 0 {
                i += 1;
                end = i;
            } else {
                let gap = multipliers[i..].iter().take_while(|&&m| m == 0).count();
                if gap < GAP_MERGE && i + gap < multipliers.len() {
                    i += gap;
                } else {
                    break;
                }
            }
        }
        ranges.push(pmf::FastLightRange { skip: skip as u32, multipliers: multipliers[start..end].to_vec() });
        skip = 0;
        i = end;
    }
    ranges
}

/// The per-vertex multipliers of `ranges` over `vertex_count` vertices (0 where skipped);
/// the inverse of [`encode_fast_ranges`]. Ranges running past the end are cut.
pub fn decode_fast_ranges(ranges: &[pmf::FastLightRange], vertex_count: usize) -> Vec<u8> {
    let mut out = vec![0u8; vertex_count];
    let mut at = 0usize;
    for r in ranges {
        at = at.saturating_add(r.skip as usize);
        for &m in &r.multipliers {
            if at < vertex_count {
                out[at] = m;
            }
            at = at.saturating_add(1);
        }
    }
    out
}

/// Whether a light can touch a patch at all: some luxel within reach and some emitter in front
/// of the face's plane.
fn may_light_patch(light: &SceneLight, patch: &Patch, lo: DVec3, hi: DVec3) -> bool {
    let plane = patch.luxels[0].dot(patch.normal);
    light.reaches_box(lo, hi) && light.emitters.iter().any(|e| e.dot(patch.normal) > plane - 1e-9)
}

/// Adds a reference to light `index` to every cell it reaches.
fn add_cell_refs(cells: &mut [Option<pmf::CubeLighting>], amounts: &[u8], index: u8, fast: bool) {
    for (cell, &amount) in cells.iter_mut().zip(amounts) {
        if amount == 0 {
            continue;
        }
        let c = cell.get_or_insert_with(|| pmf::CubeLighting::from_base([0; 3]));
        let r = pmf::LightRef { index, amount };
        if fast { c.push_fast(r) } else { c.push_dynamic(r) }
    }
}

fn patch_bounds(patch: &Patch) -> (DVec3, DVec3) {
    patch.luxels.iter().fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(lo, hi), &p| (lo.min(p), hi.max(p)))
}

/// Bakes one chunk.
///
/// Lights considered: [`chunk_light_deps`] of the chunk, in id order.
/// - **Static lights**, the ambient term and the level's sun, sky, bounced and emitted light
///   ([`LightScene::far_light`]) go into [`ChunkLighting::lightmaps`] (RGB, K2 scale, light
///   colour included) and into every cell's base light.
/// - **Dynamic lights**: one layer per page the light puts a non-zero luxel on, same scale as the
///   lightmaps and *with the light's colour* (the layer is what the engine adds when the light is
///   on); the client record's colour is the light's colour. Nothing of them goes into the static
///   lightmaps.
/// - **Fast lights**: per-vertex multipliers (`0..=255`, the luxel value a *white* light with the
///   light's intensity would give there; the engine applies colour and run-time intensity), run
///   length encoded by [`encode_fast_ranges`]. Vertices get no lightmap contribution either.
/// - **Cells** (K4): base = static lights + ambient + sun, sky and bounce at the cell centre
///   (no cosine term; see [`super::gather`]); a
///   reference to every dynamic / fast light of the chunk that reaches the centre, its amount in
///   the same white-light units as fast multipliers. `None` where the base is black and no light
///   reaches.
///
/// A dynamic or fast light enters the chunk's lists only if it lights at least one luxel,
/// vertex or cell of the chunk. Errors: bad faces, more than 255 pages, dynamic lights or fast
/// lights in the chunk.
pub fn bake_chunk(scene: &LightScene<'_>, input: &ChunkInput<'_>) -> Result<ChunkLighting, LightError> {
    bake_lit(scene, input)
}

/// [`bake_chunk`] taking the sun, sky and bounce light of the luxels and air cells whose rays
/// entered no changed chunk from `prior` (the chunk's last memo; see [`LightMemo`]), and
/// returning the memo of this bake. The same result as [`bake_chunk`], bit for bit: a point's
/// far light is a pure function of its point, normal, the scene's inputs and the cubes its rays
/// entered, and a memo made under other inputs (sun, sky, materials, static lights, settings,
/// the level's top) is not used.
pub fn bake_chunk_memo(
    scene: &LightScene<'_>,
    input: &ChunkInput<'_>,
    prior: Option<&LightMemo>,
) -> Result<(ChunkLighting, LightMemo), LightError> {
    scene.begin_memo(prior);
    let lit = bake_lit(scene, input);
    let memo = scene.end_memo();
    Ok((lit?, memo))
}

/// A draft bake ([`LightSettings::draft`](super::LightSettings::draft) settings in `scene`)
/// that takes the sun, sky and bounce light of the points whose rays passed no changed block
/// from `prior`, a memo of the chunk's exact bakes under `exact` (the same level and inputs with
/// the exact settings): those points get their exact light, the others the draft's
/// approximation. An edit's draft then traces only the points near the edit, and shows the rest
/// of the chunk as its exact bake will. Keeps no memo; `prior` made under other inputs serves
/// nothing.
pub fn bake_chunk_draft(
    scene: &LightScene<'_>,
    exact: &LightScene<'_>,
    input: &ChunkInput<'_>,
    prior: Option<&LightMemo>,
) -> Result<ChunkLighting, LightError> {
    if let Some(prior) = prior {
        scene.begin_serving(prior, exact);
    }
    let lit = bake_lit(scene, input);
    scene.end_serving();
    lit
}

fn bake_lit(scene: &LightScene<'_>, input: &ChunkInput<'_>) -> Result<ChunkLighting, LightError> {
    let settings = scene.settings();
    if u32::try_from(input.vertices.len()).is_err() {
        return Err(LightError::TooManyVertices(input.vertices.len()));
    }
    scene.begin_reads(input.chunk);
    let patches = plan_patches(input.faces, settings)?;
    let Packing { pages, placements } = pack_tight(&patches, settings.max_page_log2)?;
    let deps = chunk_light_deps(scene.level(), input.chunk);
    let lights: Vec<&SceneLight> = deps.iter().filter_map(|&id| scene.light(id)).collect();
    let bounds: Vec<(DVec3, DVec3)> = patches.iter().map(patch_bounds).collect();

    // Static lightmaps.
    let mut lightmaps: Vec<pmf::Lightmap> = pages
        .iter()
        .map(|p| pmf::Lightmap { size_exp: p.size_log2, luxels: vec![0; pmf::Lightmap::byte_len(p.size_log2)] })
        .collect();
    let statics: Vec<&SceneLight> = lights.iter().copied().filter(|l| l.mode == BakedMode::Static).collect();
    for ((patch, place), &(lo, hi)) in patches.iter().zip(&placements).zip(&bounds) {
        let near: Vec<&SceneLight> = statics.iter().copied().filter(|l| may_light_patch(l, patch, lo, hi)).collect();
        let map = &mut lightmaps[usize::from(place.page)];
        let edge = map.edge();
        for j in 0..patch.height {
            for i in 0..patch.width {
                let p = patch.luxel(i, j);
                let mut v = scene.ambient(p, patch.normal) + scene.far_point(p, Some(patch.normal));
                for l in &near {
                    v += scene.irradiance(p, Some(patch.normal), l);
                }
                let at = 3 * ((place.rect.y + j) as usize * edge + (place.rect.x + i) as usize);
                map.luxels[at..at + 3].copy_from_slice(&rgb(v));
            }
        }
    }

    // Cell base light.
    let mut cells: Vec<Option<pmf::CubeLighting>> = input
        .air_cells
        .iter()
        .map(|&c| {
            let mut v = settings.ambient_f() + scene.far_point(c, None);
            for l in &statics {
                v += scene.irradiance(c, None, l);
            }
            let base = rgb(v);
            (base != [0; 3]).then(|| pmf::CubeLighting::from_base(base))
        })
        .collect();
    let cell_amounts =
        |l: &SceneLight| -> Vec<u8> { input.air_cells.iter().map(|&c| to_u8(scene.amount(l, c, None))).collect() };

    let mut out = ChunkLighting::default();
    for l in &lights {
        match l.mode {
            BakedMode::Static => {}
            BakedMode::Dynamic(record) => {
                let mut layers: Vec<Option<Vec<u8>>> = vec![None; pages.len()];
                for ((patch, place), &(lo, hi)) in patches.iter().zip(&placements).zip(&bounds) {
                    if !may_light_patch(l, patch, lo, hi) {
                        continue;
                    }
                    let page = usize::from(place.page);
                    let edge = lightmaps[page].edge();
                    for j in 0..patch.height {
                        for i in 0..patch.width {
                            let v = rgb(scene.irradiance(patch.luxel(i, j), Some(patch.normal), l));
                            if v == [0; 3] {
                                continue;
                            }
                            let buf = layers[page]
                                .get_or_insert_with(|| vec![0; pmf::Lightmap::byte_len(pages[page].size_log2)]);
                            let at = 3 * ((place.rect.y + j) as usize * edge + (place.rect.x + i) as usize);
                            buf[at..at + 3].copy_from_slice(&v);
                        }
                    }
                }
                let amounts = cell_amounts(l);
                let layers: Vec<pmf::LightmapLayer> = layers
                    .into_iter()
                    .enumerate()
                    .filter_map(|(k, b)| b.map(|luxels| pmf::LightmapLayer { lightmap: k as u8, luxels }))
                    .collect();
                if layers.is_empty() && amounts.iter().all(|&a| a == 0) {
                    continue;
                }
                let index = out.dynamic_lights.len();
                if index >= 255 {
                    return Err(LightError::TooManyDynamicLights(index + 1));
                }
                add_cell_refs(&mut cells, &amounts, index as u8, false);
                out.dynamic_lights.push(record);
                out.client_dynamic_lights.push(pmf::ClientDynamicLight { color: l.light.color, layers });
                out.dynamic_ids.push(l.id);
            }
            BakedMode::Fast(record) => {
                let inset = settings.edge_inset;
                let mult: Vec<u8> =
                    input.vertices.iter().map(|v| to_u8(scene.amount(l, v.sample(inset), Some(v.normal)))).collect();
                let amounts = cell_amounts(l);
                let ranges = encode_fast_ranges(&mult);
                if ranges.is_empty() && amounts.iter().all(|&a| a == 0) {
                    continue;
                }
                let index = out.fast_lights.len();
                if index >= 255 {
                    return Err(LightError::TooManyFastLights(index + 1));
                }
                add_cell_refs(&mut cells, &amounts, index as u8, true);
                out.fast_lights.push(record);
                out.client_fast_lights.push(pmf::ClientFastLight { color: l.light.color, ranges });
                out.fast_ids.push(l.id);
            }
        }
    }
    out.lightmaps = lightmaps;
    out.faces =
        patches.into_iter().zip(placements).map(|(patch, placement)| FaceLightmap { patch, placement }).collect();
    out.cells = cells;
    out.reads = scene.take_reads();
    Ok(out)
}
