//! Map + per-chunk bakes → `pmf::File` (issue 4, "Compile").
//!
//! [`bake_chunk`] is the pure per-chunk bake: geometry (layout + mesh), lighting (lightmaps,
//! dynamic layers, fast multipliers, air-cell lighting), regions and chunk entities, as one
//! [`ChunkBake`]. [`compile`] assembles a whole file from bakes (however they were produced:
//! all at once, on several threads, or incrementally), so the bytes depend only on the map
//! (docs/spec/PMF-NOTES.md X1).
//!
//! Spaces: level-space positions of lights, regions and entities are map units from the center
//! of the level's center chunk (docs/spec/PMF-NOTES.md L4); chunk records are relative to their chunk's
//! center (G1, R1). The dense PMF grid is the level's occupied chunks, grown to include the
//! center chunk; PMF chunk indices count from its minimum corner.

use std::collections::BTreeMap;
use std::sync::Arc;

use glam::{DVec3, IVec3, Vec3};

use pmfedit_core::format::bin::{ReadError, Reader, Writer};
use pmfedit_core::format::pmf::{self, Compression};
use pmfedit_core::map::coords::{ChunkCoord, LatticeBox};
use pmfedit_core::map::library::{EntityScope, LightMode};
use pmfedit_core::map::{Level, Map};

use crate::chunk::{BakeError, bake_geometry};
use crate::jobs::{run_jobs, stream_jobs};
use crate::layout::{BakeSettings, ChunkLayout};
use crate::light::{self, ChunkInput, LightCache, LightError, LightScene, LightSettings, LitVertex, SurfaceFace};
use crate::mesh::{FaceShape, LightmapRect};
use crate::path::bake_chunk_paths;
use crate::vis::{
    LevelVis, OwnLists, PathInputs, PathRecords, SummaryGrid, VisCache, VisSettings, bake_chunk_own_vis_in,
};
use pmfedit_core::map::ids::PathAttrs;
use pmfedit_core::map::path_sets::PathSets;

/// Everything that decides the output besides the map.
#[derive(Debug, Clone, PartialEq)]
pub struct CompileSettings {
    pub bake: BakeSettings,
    pub light: LightSettings,
    /// Header creation time (Unix seconds).
    pub timestamp: u64,
    /// Header "compiler info".
    pub compiler_info: String,
    /// Visibility data for air cells (docs/spec/PMF-NOTES.md V1); `None` writes none.
    pub visibility: Option<VisSettings>,
    /// Pathfinding data for air cells (P1).
    pub pathfinding: bool,
}

impl Default for CompileSettings {
    fn default() -> Self {
        Self {
            bake: BakeSettings::default(),
            light: LightSettings::default(),
            timestamp: 0,
            compiler_info: format!("pmfedit {}", env!("CARGO_PKG_VERSION")),
            visibility: Some(default_vis_settings()),
            pathfinding: true,
        }
    }
}

impl CompileSettings {
    /// The settings of a preview bake: the same geometry and lighting (so the same mesh and
    /// lightmaps) without the slow air-cell data — no visibility, no pathfinding. The editor
    /// draws a preview while the full bake finishes; a preview is never exported.
    pub fn preview(&self) -> CompileSettings {
        CompileSettings { visibility: None, pathfinding: false, ..self.clone() }
    }

    /// Whether these settings bake neither visibility nor pathfinding (as [`Self::preview`]'s
    /// and [`Self::draft`]'s).
    pub fn is_preview(&self) -> bool {
        self.visibility.is_none() && !self.pathfinding
    }

    /// The settings of a draft bake: a [`Self::preview`] with cheap lighting — one emitter
    /// sample per light (hard shadows instead of soft ones, the cost of a sized light divided by
    /// up to 27), no ambient occlusion, a hard sun, a few sky rays and no bounce
    /// ([`GatherSettings::draft`](crate::light::GatherSettings::draft)). The same mesh and the
    /// same lightmap layout as the preview (luxel density and page sizes are unchanged); only
    /// luxel values differ. The editor draws an edited chunk's draft first, then its preview
    /// replaces it.
    pub fn draft(&self) -> CompileSettings {
        let mut s = self.preview();
        s.light = s.light.draft();
        s
    }

    /// Whether a draft bake would differ from the preview (it does not when the lighting is
    /// already as cheap as a draft's: one emitter sample, no ambient occlusion, draft sun, sky
    /// and bounce gathering).
    pub fn draft_differs(&self) -> bool {
        self.draft() != self.preview()
    }
}

/// The visibility settings a compile uses by default ([`VisSettings::default`]).
pub fn default_vis_settings() -> VisSettings {
    VisSettings::default()
}

/// The attributes a painted path attribute set exports (docs/spec/PMF-NOTES.md P1): one, named
/// like the map's set, facing its direction ([`PathSets::attribute`]).
fn user_path_attributes(sets: &PathSets, set: PathAttrs) -> Vec<crate::path::PathAttribute> {
    sets.attribute(set).map(|(name, direction)| crate::path::PathAttribute::new(name, direction)).into_iter().collect()
}

/// Why a map could not be compiled.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompileError {
    #[error(transparent)]
    Geometry(#[from] BakeError),
    #[error("level {level}, chunk (x {}, y {}, z {}): lighting: {error}", chunk.x, chunk.y, chunk.z)]
    Light { level: usize, chunk: ChunkCoord, error: LightError },
    /// Visibility or pathfinding.
    #[error("level {level}, chunk (x {}, y {}, z {}): {error}", chunk.x, chunk.y, chunk.z)]
    Air { level: usize, chunk: ChunkCoord, error: crate::vis::BakeInputError },
    /// Something the PMF format cannot hold.
    #[error("{0}")]
    Format(String),
    /// The PMF writer refused a record ([`Assembled::write`]).
    #[error(transparent)]
    Write(#[from] pmf::WriteError),
}

/// Figures of one chunk bake.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ChunkStats {
    pub faces: usize,
    pub triangles: usize,
    pub vertices: usize,
    pub lightmaps: usize,
    pub luxels: usize,
    /// Far sets looked up (one per component of air cells touching a chunk face).
    pub vis_searches: u64,
    /// The chunk's visibility lists went over its budget ([`VisSettings::max_listed`] and its
    /// share of [`crate::vis::LEVEL_LISTED`]) even with every cell naming its own chunk whole:
    /// the air cells whose lists did not fit carry no visibility data.
    pub vis_skipped: bool,
}

/// The baked records of one chunk, ready for [`compile`].
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkBake {
    pub level: usize,
    pub chunk: ChunkCoord,
    /// The chunk's generation when it was baked (0 for a chunk the level does not store).
    pub generation: u64,
    pub pmf: pmf::Chunk,
    pub stats: ChunkStats,
    /// Chunks of the same level, other than this one and its 26 neighbours, whose cubes the bake
    /// read (a ray, a sight line or a search passed through them), sorted. The static spread
    /// ([`crate::deps::dirty_chunks`]) does not know these; the rebuild engine re-bakes this chunk
    /// when one of them changes ([`crate::rebuild`]). Empty for bakes that read only their
    /// neighbourhood and the lights' reach.
    pub reads: Vec<ChunkCoord>,
    /// The level's highest occupied chunk layer (`y`) when the chunk was baked, `None` when no
    /// chunk was occupied. The bake's rays stopped at that layer's top, so [`Self::reads`] names
    /// no chunk above it; a change there is matched against the bake by geometry instead
    /// ([`crate::deps::sky_reaches`]).
    pub top_layer: Option<i32>,
    /// The air cells' visibility lists, kept so that their far part can be written again from
    /// the level's current summaries without baking the chunk again ([`Self::refresh_far`]);
    /// `None` without visibility.
    pub vis: Option<AirVis>,
}

impl ChunkBake {
    /// Writes the air cells' far lists again from `grid`, the summaries of the chunk's level as
    /// they are now, when the bake's lists were taken from another grid. Far lists depend on
    /// the level's summaries only (never on this chunk's cubes beyond its own summary, which must
    /// be the same in `grid`), so the result equals a fresh bake's ([`crate::vis`]). Returns
    /// whether the bake changed: the rebuild engine's re-derivation after an edit that changed
    /// some summary, at a fraction of a chunk bake (no lighting, no meshing).
    pub fn refresh_far(&mut self, grid: &Arc<SummaryGrid>) -> bool {
        let Some(vis) = &mut self.vis else { return false };
        if vis.grid.as_ptr() == Arc::as_ptr(grid) {
            return false;
        }
        let before = self.stats.vis_skipped;
        let old: Vec<Option<Box<pmf::Visibility>>> =
            vis.own.cells.iter().map(|&(k, _)| self.pmf.common.cubes[k as usize].visibility.clone()).collect();
        self.stats.vis_skipped = vis.write(grid, self.chunk, &mut self.pmf);
        before != self.stats.vis_skipped
            || vis.own.cells.iter().zip(old).any(|(&(k, _), o)| self.pmf.common.cubes[k as usize].visibility != o)
    }
}

/// What a [`ChunkBake`] keeps of its air cells' visibility ([`ChunkBake::refresh_far`]).
#[derive(Debug, Clone)]
pub struct AirVis {
    /// The cells' own lists and the components their far parts come from (shared with the
    /// [`VisCache`] that serves them to the chunk's next bake, [`VisCache::own_lists`]).
    own: Arc<OwnLists>,
    /// [`VisSettings::max_listed`].
    max_listed: u64,
    /// The summary grid the far lists were last written from (a `Weak`, so its address is not
    /// reused while this lives, without keeping its far sets in memory).
    grid: std::sync::Weak<SummaryGrid>,
}

impl PartialEq for AirVis {
    /// The same lists for the same cells (where the far lists came from is no part of them).
    fn eq(&self, o: &AirVis) -> bool {
        self.own == o.own && self.max_listed == o.max_listed
    }
}

impl AirVis {
    /// The lists and cells in the bake cache's layout (docs/spec/BAKE-CACHE.md): what a cached
    /// bake needs to have its far lists written again from the level's summaries as they are
    /// when it is loaded ([`ChunkBake::refresh_far`]).
    pub(crate) fn encode(&self, w: &mut Writer) {
        w.u64(self.max_listed);
        w.u32(self.own.lists.len() as u32);
        for (own, comp) in &self.own.lists {
            w.u32(comp.map_or(u32::MAX, u32::from));
            w.u32(own.len() as u32);
            for &k in own.iter() {
                w.u32(k);
            }
        }
        w.u32(self.own.cells.len() as u32);
        for &(k, l) in &self.own.cells {
            w.u32(k);
            w.u32(l);
        }
    }

    /// Reads what [`Self::encode`] wrote, for a chunk of `cubes` cubes: every cell must name one
    /// of those cubes and one of the lists, so a damaged entry is refused here rather than
    /// indexing out of bounds later. The far lists come from no grid yet.
    pub(crate) fn decode(r: &mut Reader<'_>, cubes: usize) -> Result<AirVis, ReadError> {
        let max_listed = r.u64()?;
        let n = r.u32()?;
        let n = r.count(n.into(), 8, "visibility lists")?;
        let mut lists = Vec::with_capacity(n);
        for _ in 0..n {
            let comp = match r.u32()? {
                u32::MAX => None,
                c => Some(u16::try_from(c).map_err(|_| r.invalid(format!("summary component {c} out of range")))?),
            };
            let m = r.u32()?;
            let m = r.count(m.into(), 4, "own visible cubes")?;
            let own: Vec<u32> = (0..m).map(|_| r.u32()).collect::<Result<_, _>>()?;
            lists.push((Arc::from(own), comp));
        }
        let n = r.u32()?;
        let n = r.count(n.into(), 8, "air cells")?;
        let mut cells = Vec::with_capacity(n);
        for _ in 0..n {
            let (k, l) = (r.u32()?, r.u32()?);
            if k as usize >= cubes || l as usize >= lists.len() {
                return Err(r.invalid(format!(
                    "air cell {k} with list {l}: outside the chunk's {cubes} cubes or {} lists",
                    lists.len()
                )));
            }
            cells.push((k, l));
        }
        Ok(AirVis { own: Arc::new(OwnLists { lists, cells }), max_listed, grid: std::sync::Weak::new() })
    }

    /// The cells' own lists and the components their far parts come from.
    pub(crate) fn own(&self) -> &Arc<OwnLists> {
        &self.own
    }

    /// Writes every air cell's own part of its lists into `out`, with no far chunks (unless
    /// `skipped`: the cells then carry none), as a bake cache entry holds them until
    /// [`ChunkBake::refresh_far`] writes the far part and chooses again which cells fit the budget.
    pub(crate) fn write_own(&self, out: &mut pmf::Chunk, skipped: bool) {
        for &(k, l) in &self.own.cells {
            out.common.cubes[k as usize].visibility = (!skipped).then(|| {
                Box::new(pmf::Visibility { cubes: self.own.lists[l as usize].0.clone(), chunks: Arc::from([]) })
            });
        }
    }

    /// Writes every air cell's lists into `out` (chunk `chunk`), the far part from `grid`; cells
    /// that would cull little write none ([`SummaryGrid::culls_little`]). Returns whether other
    /// cells went without too: over the chunk's budget
    /// ([`VisSettings::max_listed`], and the level's [`crate::vis::LEVEL_LISTED`] shared by the
    /// grid's chunks) cells name their own chunk whole instead of its cubes one by one, and the
    /// cells that still do not fit carry none ([`crate::vis::lists_within_budget`]).
    fn write(&mut self, grid: &Arc<SummaryGrid>, chunk: ChunkCoord, out: &mut pmf::Chunk) -> bool {
        use crate::vis::CellLists;
        self.grid = Arc::downgrade(grid);
        let g0 = grid.index(chunk.as_ivec3());
        // Lists of one component (other own cubes) share its far list: on open ground a far
        // list of thousands of chunks is most of a loaded bake's memory.
        let mut by_comp: BTreeMap<u16, Arc<[pmf::VisibleChunk]>> = BTreeMap::new();
        let OwnLists { lists, cells } = &*self.own;
        let far: Vec<Arc<[pmf::VisibleChunk]>> = lists
            .iter()
            .map(|&(_, comp)| match (g0, comp) {
                (Some(g), Some(c)) => by_comp.entry(c).or_insert_with(|| grid.far_list(g, usize::from(c))).clone(),
                _ => Arc::from([]),
            })
            .collect();
        let own: Vec<u64> = cells.iter().map(|&(_, l)| lists[l as usize].0.len() as u64).collect();
        let far_n: Vec<u64> = cells.iter().map(|&(_, l)| far[l as usize].len() as u64).collect();
        let comps: Vec<Option<u16>> = cells.iter().map(|&(_, l)| lists[l as usize].1).collect();
        let budget = self.max_listed.min(crate::vis::LEVEL_LISTED / grid.chunks.len().max(1) as u64);
        let (modes, over) = crate::vis::cell_lists(grid, chunk, &comps, &own, &far_n, budget);
        // Per list, the far list with the chunk itself named whole, in PMF order, made once.
        let mut whole: Vec<Option<Arc<[pmf::VisibleChunk]>>> = vec![None; lists.len()];
        for (&(k, l), &mode) in cells.iter().zip(&modes) {
            let l = l as usize;
            out.common.cubes[k as usize].visibility = match mode {
                CellLists::Exact => {
                    Some(Box::new(pmf::Visibility { cubes: lists[l].0.clone(), chunks: far[l].clone() }))
                }
                CellLists::OwnWhole => {
                    // Made once per grid node (re-bakes of unchanged chunks write it again).
                    let chunks = whole[l].get_or_insert_with(|| {
                        let me = absolute_index(chunk.as_ivec3());
                        match (g0, lists[l].1) {
                            (Some(g), Some(c)) => grid.far_list_whole(g, usize::from(c), me),
                            _ => crate::vis::with_own_chunk(&far[l], me),
                        }
                    });
                    Some(Box::new(pmf::Visibility { cubes: Arc::from([]), chunks: chunks.clone() }))
                }
                CellLists::Nothing => None,
            };
        }
        over
    }
}

/// Whether boxes `[a0, a1]` and `[b0, b1]` overlap with positive volume.
fn boxes_overlap(a0: DVec3, a1: DVec3, b0: DVec3, b1: DVec3) -> bool {
    a0.cmplt(b1).all() && b0.cmplt(a1).all()
}

/// The most chunks a level's dense grid may span. PMF stores the grid densely (every chunk of
/// the box between the occupied chunks and the center chunk); content scattered to the far
/// corners of the 4096 × 256 × 4096 coordinate space would make billions of empty chunks, so the
/// compiler refuses a grid above this ([`compile`]) and [`level_chunks`] then lists only the
/// occupied chunks (the editor keeps working on such a map).
pub const MAX_GRID_CHUNKS: u64 = 1 << 20;

/// The dense PMF grid of a level: occupied chunks plus the center chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grid {
    pub min: ChunkCoord,
    /// Inclusive.
    pub max: ChunkCoord,
}

impl Grid {
    pub fn of(level: &Level) -> Grid {
        let c = level.frame().center_chunk;
        match level.occupied_bounds() {
            Some((lo, hi)) => Grid {
                min: ChunkCoord::from_ivec3(lo.as_ivec3().min(c.as_ivec3())),
                max: ChunkCoord::from_ivec3(hi.as_ivec3().max(c.as_ivec3())),
            },
            None => Grid { min: c, max: c },
        }
    }

    /// Number of chunks in the grid.
    pub fn volume(&self) -> u64 {
        let d = (self.max.as_ivec3() - self.min.as_ivec3() + IVec3::ONE).max(IVec3::ZERO).as_u64vec3();
        d.x * d.y * d.z
    }

    pub fn size(&self) -> pmf::GridSize {
        let d = self.max.as_ivec3() - self.min.as_ivec3() + IVec3::ONE;
        pmf::GridSize { y: d.y as u16, x: d.x as u16, z: d.z as u16 }
    }

    /// Every chunk of the grid in PMF `[Y][X][Z]` order.
    pub fn chunks(&self) -> Vec<ChunkCoord> {
        let mut out = Vec::new();
        for y in self.min.y..=self.max.y {
            for x in self.min.x..=self.max.x {
                for z in self.min.z..=self.max.z {
                    out.push(ChunkCoord::new(x, y, z));
                }
            }
        }
        out
    }

    /// Whether `c` lies in the grid.
    pub fn contains(&self, c: ChunkCoord) -> bool {
        let c = c.as_ivec3();
        c.cmpge(self.min.as_ivec3()).all() && c.cmple(self.max.as_ivec3()).all()
    }

    /// The PMF index of `c`, if it lies in the grid.
    pub fn index(&self, c: ChunkCoord) -> Option<pmf::ChunkIndex> {
        let d = c.as_ivec3() - self.min.as_ivec3();
        let s = self.max.as_ivec3() - self.min.as_ivec3();
        (d.cmpge(IVec3::ZERO).all() && d.cmple(s).all()).then_some(pmf::ChunkIndex {
            y: d.y as u8,
            x: d.x as u16,
            z: d.z as u16,
        })
    }
}

/// The chunks a bake of the whole level must cover, in PMF order. A grid over
/// [`MAX_GRID_CHUNKS`] (which [`compile`] refuses) gives only the occupied chunks and the center
/// chunk, so callers never allocate for billions of chunks.
pub fn level_chunks(level: &Level) -> Vec<ChunkCoord> {
    let grid = Grid::of(level);
    if grid.volume() <= MAX_GRID_CHUNKS {
        return grid.chunks();
    }
    let mut out: Vec<ChunkCoord> = level.chunks().map(|(c, _)| *c).chain([level.frame().center_chunk]).collect();
    out.sort_by_key(|c| (c.y, c.x, c.z));
    out.dedup();
    out
}

/// Where one chunk bake spent its time (not part of the bake: timings differ run to run).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StageTimes {
    /// Layout and meshing.
    pub mesh: std::time::Duration,
    /// Lightmaps, dynamic layers, fast multipliers, air-cell lighting.
    pub light: std::time::Duration,
    /// Visibility and pathfinding of the air cells.
    pub air: std::time::Duration,
    /// The visibility part of [`Self::air`].
    pub vis: std::time::Duration,
    /// Regions, entities and record assembly.
    pub other: std::time::Duration,
}

/// Bakes one chunk: a pure function of the snapshot (docs/spec/PMF-NOTES.md X1). Visibility
/// summarizes every chunk of the level first: to bake many chunks of one map, share a
/// [`VisCache`] ([`bake_chunk_with`]).
pub fn bake_chunk(
    snapshot: &Map,
    level_index: usize,
    chunk: ChunkCoord,
    settings: &CompileSettings,
) -> Result<ChunkBake, CompileError> {
    let cache = VisCache::new(settings.visibility.unwrap_or_default());
    bake_chunk_timed(snapshot, level_index, chunk, settings, &cache).map(|(b, _)| b)
}

/// [`bake_chunk`] with a cache of visibility summaries shared between bakes (the result is the
/// same; the cache must serve `settings.visibility`).
pub fn bake_chunk_with(
    snapshot: &Map,
    level_index: usize,
    chunk: ChunkCoord,
    settings: &CompileSettings,
    cache: &VisCache,
) -> Result<ChunkBake, CompileError> {
    bake_chunk_timed(snapshot, level_index, chunk, settings, cache).map(|(b, _)| b)
}

/// [`bake_chunk_with`], also saying where the time went.
pub fn bake_chunk_timed(
    snapshot: &Map,
    level_index: usize,
    chunk: ChunkCoord,
    settings: &CompileSettings,
    cache: &VisCache,
) -> Result<(ChunkBake, StageTimes), CompileError> {
    bake_chunk_cached(snapshot, level_index, chunk, settings, cache, None)
}

/// [`bake_chunk_timed`] that, when `light` serves these light settings
/// ([`LightCache::serves`]), starts the lighting from the chunk's last [`LightMemo`] there and
/// leaves this bake's: the sun, sky and bounce light of points whose rays passed no changed
/// block is taken, not traced again ([`light::bake_chunk_memo`]). The same bake either way.
/// A draft (settings whose light is the [draft](LightSettings::draft) of the cache's) takes
/// those points' exact light from the memo and keeps none ([`light::bake_chunk_draft`]).
///
/// [`LightMemo`]: crate::light::LightMemo
pub fn bake_chunk_cached(
    snapshot: &Map,
    level_index: usize,
    chunk: ChunkCoord,
    settings: &CompileSettings,
    cache: &VisCache,
    light: Option<&LightCache>,
) -> Result<(ChunkBake, StageTimes), CompileError> {
    let t0 = std::time::Instant::now();
    let mut geometry = bake_geometry(snapshot, level_index, chunk, &settings.bake)?;
    let t_mesh = t0.elapsed();
    let level = &snapshot.levels[level_index];
    let center = level.frame().chunk_center_world(chunk);
    let light_err = |error| CompileError::Light { level: level_index, chunk, error };

    // Faces for the lighting stage; a geometry cube's faces share a page (one group).
    let mut faces = Vec::with_capacity(geometry.mesh.faces.len());
    let mut lit_vertices = vec![LitVertex { position: DVec3::ZERO, normal: DVec3::Y, inside: DVec3::ZERO }; 0];
    for (i, f) in geometry.mesh.faces.iter().enumerate() {
        let range = f.first_vertex as usize..(f.first_vertex + f.vertex_count) as usize;
        let world: Vec<DVec3> =
            geometry.mesh.vertices[range].iter().map(|v| center + Vec3::from_array(v.position).as_dvec3()).collect();
        let (corners, normal) = match f.shape {
            FaceShape::Quad => (world.clone(), f.normal()),
            FaceShape::Triangles(_) => {
                let mut unique: Vec<DVec3> = Vec::with_capacity(4);
                for p in &world {
                    if !unique.contains(p) {
                        unique.push(*p);
                    }
                }
                let n = (world[1] - world[0]).cross(world[2] - world[0]);
                (unique, if n.length_squared() > 0.0 { n } else { f.normal() })
            }
        };
        let inside = corners.iter().copied().sum::<DVec3>() / corners.len() as f64;
        for &p in &world {
            lit_vertices.push(LitVertex { position: p, normal, inside });
        }
        let extended = matches!(f.shape, FaceShape::Triangles(_));
        let group = if extended { 0x8000_0000 | i as u32 } else { f.cube };
        faces.push(SurfaceFace::new(i as u32, corners, normal).in_group(group));
    }
    let air_cells: Vec<DVec3> = geometry
        .layout
        .air_cells()
        .iter()
        .map(|&k| {
            let addr = geometry.layout.cubes()[k as usize].addr;
            let local = addr.min.as_dvec3() + DVec3::splat(f64::from(addr.edge()) / 2.0);
            center + level.frame().chunk_space_from_lattice_in_chunk(local)
        })
        .collect();
    let t1 = std::time::Instant::now();
    let scene = LightScene::with_library(level, &snapshot.library, settings.light.clone());
    let input = ChunkInput { chunk, faces: &faces, vertices: &lit_vertices, air_cells: &air_cells };
    // A memo the cache would not keep (the chunk lies farther from its focus than every kept
    // memo) is not recorded: the same light without its cost.
    let lighting = match light.filter(|l| l.serves(&settings.light) && l.keeps(level_index, chunk, center)) {
        Some(memos) => {
            let prior = memos.get(level_index, chunk);
            let (lighting, memo) = light::bake_chunk_memo(&scene, &input, prior.as_deref()).map_err(light_err)?;
            memos.put(level_index, chunk, center, memo);
            lighting
        }
        None => match light.filter(|l| l.drafts(&settings.light)) {
            // A draft: the exact light of the points the edit did not reach, from the memo.
            Some(memos) => {
                let exact = LightScene::with_library(level, &snapshot.library, memos.settings().clone());
                let prior = memos.get(level_index, chunk);
                light::bake_chunk_draft(&scene, &exact, &input, prior.as_deref()).map_err(light_err)?
            }
            None => light::bake_chunk(&scene, &input).map_err(light_err)?,
        },
    };
    let lighting = light::compact_uniform(lighting, settings.light.max_page_log2);

    // Lightmap UVs and pages.
    for (i, fl) in lighting.faces.iter().enumerate() {
        let f = &mut geometry.mesh.faces[i];
        let [u0, v0, u1, v1] = fl.placement.uv_rect;
        f.lightmap = Some((fl.page(), LightmapRect { min: [u0, v0], max: [u1, v1] }));
        let range = f.first_vertex as usize..(f.first_vertex + f.vertex_count) as usize;
        for v in &mut geometry.mesh.vertices[range] {
            v.lightmap_uv = fl.uv_at(center + Vec3::from_array(v.position).as_dvec3());
        }
    }

    let t_light = t1.elapsed();
    let t2 = std::time::Instant::now();
    let mut chunk_pmf = geometry.to_pmf()?;
    chunk_pmf.common.dynamic_lights = lighting.dynamic_lights;
    chunk_pmf.common.fast_lights = lighting.fast_lights;
    chunk_pmf.client.lightmaps = lighting.lightmaps;
    chunk_pmf.client.dynamic_lights = lighting.client_dynamic_lights;
    chunk_pmf.client.fast_lights = lighting.client_fast_lights;
    for (&k, cell) in geometry.layout.air_cells().iter().zip(lighting.cells) {
        chunk_pmf.client.cubes[k as usize].lighting = cell;
    }

    let t3 = std::time::Instant::now();
    let air = add_air_data(snapshot, level_index, chunk, &geometry.layout, settings, cache, &mut chunk_pmf)?;
    let t_air = t3.elapsed();
    add_regions(snapshot, level, chunk, center, &mut chunk_pmf);
    chunk_pmf.server.entities = chunk_entities(level, chunk, center);

    let stats = ChunkStats {
        faces: geometry.mesh.faces.len(),
        triangles: geometry.mesh.triangle_count(),
        vertices: geometry.mesh.vertices.len(),
        lightmaps: chunk_pmf.client.lightmaps.len(),
        luxels: chunk_pmf.client.lightmaps.iter().map(|l| l.edge() * l.edge()).sum(),
        vis_searches: air.searches,
        vis_skipped: air.skipped,
    };
    let generation = level.chunk(chunk).map_or(0, |c| c.generation());
    let times = StageTimes {
        mesh: t_mesh,
        light: t_light,
        air: t_air,
        vis: air.vis,
        other: t2.elapsed().saturating_sub(t_air),
    };
    // A bake is kept (by the engine, the cache, the editor) until the chunk changes.
    chunk_pmf.shrink_to_fit();
    let bake = ChunkBake {
        level: level_index,
        chunk,
        generation,
        pmf: chunk_pmf,
        stats,
        reads: lighting.reads,
        top_layer: top_layer(level),
        vis: air.lists,
    };
    Ok((bake, times))
}

/// The highest occupied chunk layer of `level` ([`ChunkBake::top_layer`]).
pub fn top_layer(level: &Level) -> Option<i32> {
    level.occupied_bounds().map(|(_, hi)| hi.y)
}

/// What [`add_air_data`] reports besides the records.
#[derive(Debug, Default)]
struct AirData {
    searches: u64,
    skipped: bool,
    lists: Option<AirVis>,
    vis: std::time::Duration,
}

/// The level's visibility summaries for a bake: over the dense PMF grid, or over the chunk alone
/// when the grid is too large to export (nothing beyond it is listed then; [`compile`] refuses
/// such a level anyway).
pub fn level_vis(cache: &VisCache, map: &Map, level_index: usize, chunk: ChunkCoord) -> LevelVis {
    // The rebuild engine looked this snapshot's grid up already ([`snapshot_grid`]): its bakes
    // skip walking every chunk of the level to find it again.
    if let Some(lv) = cache.remembered(map, level_index) {
        return lv;
    }
    let level = &map.levels[level_index];
    let grid = Grid::of(level);
    let (min, max) = if grid.volume() <= MAX_GRID_CHUNKS { (grid.min, grid.max) } else { (chunk, chunk) };
    cache.level(level, &map.library, level_index, min, max)
}

/// The summary grid every bake of level `level_index` lists far chunks from ([`level_vis`]):
/// `None` for a grid too large to export, where each chunk gets a grid of its own.
pub fn level_grid(cache: &VisCache, map: &Map, level_index: usize) -> Option<Arc<SummaryGrid>> {
    let level = &map.levels[level_index];
    let grid = Grid::of(level);
    (grid.volume() <= MAX_GRID_CHUNKS).then(|| cache.level(level, &map.library, level_index, grid.min, grid.max).grid)
}

/// [`level_grid`] of a snapshot whose chunks will be baked with `cache`: the cache remembers the
/// grid for that very snapshot (while it lives), so that those bakes find it without walking the
/// level's chunks again ([`VisCache::remembered`]).
pub fn snapshot_grid(cache: &VisCache, map: &Arc<Map>, level_index: usize) -> Option<Arc<SummaryGrid>> {
    let level = &map.levels[level_index];
    let grid = Grid::of(level);
    if grid.volume() > MAX_GRID_CHUNKS {
        return None;
    }
    let lv = cache.level(level, &map.library, level_index, grid.min, grid.max);
    let g = lv.grid.clone();
    cache.remember(map, level_index, lv);
    Some(g)
}

/// Visibility (V1) and pathfinding (P1) data of the chunk's air cells. Other chunks are named by
/// absolute chunk coordinates for now (see [`absolute_index`]). Air cells that share a visible
/// set share its lists.
fn add_air_data(
    map: &Map,
    level_index: usize,
    chunk: ChunkCoord,
    layout: &ChunkLayout,
    settings: &CompileSettings,
    cache: &VisCache,
    out: &mut pmf::Chunk,
) -> Result<AirData, CompileError> {
    let level = &map.levels[level_index];
    let min = level.frame().chunk_min_lattice(chunk);
    let cells = layout.air_cell_addrs(min);
    let air_err = |error| CompileError::Air { level: level_index, chunk, error };
    let mut air = AirData::default();
    if let Some(vs) = &settings.visibility {
        let t = std::time::Instant::now();
        let lv = if cache.settings() == vs {
            level_vis(cache, map, level_index, chunk)
        } else {
            level_vis(&VisCache::new(*vs), map, level_index, chunk)
        };
        // The own lists depend on the chunk's cubes only (V1): a re-bake of a chunk whose cubes
        // did not change (re-baked for a neighbour's light) takes its last bake's.
        let chunk_log2 = level.frame().chunk_lattice_log2();
        let stored = level.chunk(chunk);
        let make = || -> Result<OwnLists, crate::vis::BakeInputError> {
            let vis = bake_chunk_own_vis_in(&lv, level, chunk, &cells)?;
            let own: Vec<Arc<[u32]>> = vis
                .own
                .iter()
                .map(|addrs| {
                    let mut v: Vec<u32> = addrs.iter().filter_map(|&a| layout.index_of(a)).collect();
                    v.sort_unstable();
                    v.into()
                })
                .collect();
            Ok(OwnLists {
                lists: vis.lists.iter().map(|l| (own[l.own as usize].clone(), l.comp)).collect(),
                cells: layout.air_cells().iter().zip(&vis.cell_list).map(|(&k, &l)| (k, l)).collect(),
            })
        };
        let (own, _) = if cache.settings() == vs {
            cache.own_lists(&map.library, chunk_log2, (level_index, chunk), stored, &settings.bake, make)
        } else {
            make().map(|o| (Arc::new(o), false))
        }
        .map_err(air_err)?;
        // One far set looked up per list naming a component, when the chunk lies in the grid.
        air.searches = match lv.grid.index(chunk.as_ivec3()) {
            Some(_) => own.lists.iter().filter(|(_, c)| c.is_some()).count() as u64,
            None => 0,
        };
        let mut lists = AirVis { own, max_listed: vs.max_listed, grid: std::sync::Weak::new() };
        air.skipped = lists.write(&lv.grid, chunk, out);
        air.lists = Some(lists);
        air.vis = t.elapsed();
    }
    let t = std::time::Instant::now();
    if settings.pathfinding {
        // A cell's data reads its own chunk and, on the chunk's bottom, the chunk below (P1):
        // a re-bake over the same two chunks (and library and attribute sets) takes its last
        // bake's records.
        let make = || -> Result<PathRecords, crate::vis::BakeInputError> {
            let lookup = |set| user_path_attributes(&map.path_sets, set);
            let paths = bake_chunk_paths(level, &map.library, chunk, &cells, &lookup)?;
            Ok(layout
                .air_cells()
                .iter()
                .zip(paths)
                .filter(|(_, cp)| !cp.attributes.is_empty())
                .map(|(&k, cp)| {
                    let attrs =
                        cp.attributes.into_iter().map(|a| pmf::PathAttribute { name: a.name, direction: a.direction });
                    (k, attrs.collect())
                })
                .collect())
        };
        let below = ChunkCoord::new(chunk.x, chunk.y - 1, chunk.z);
        let below = if below.is_in_grid() { level.chunk(below) } else { None };
        let inputs = PathInputs::of(&map.library, &map.path_sets);
        let chunk_log2 = level.frame().chunk_lattice_log2();
        let key = (level_index, chunk);
        let stored = level.chunk(chunk);
        let (records, _) = cache
            .path_records(&map.library, chunk_log2, key, stored, below, &settings.bake, inputs, make)
            .map_err(air_err)?;
        for (k, attrs) in records.iter() {
            out.server.cubes[*k as usize].pathfinding = Some(attrs.clone());
        }
    }
    cache.record(air.vis, t.elapsed());
    Ok(air)
}

/// Keeps in `cache` what `bake`, a full bake of its chunk in `map` made earlier with `settings`
/// (loaded from the bake cache), says of the chunk's air cells: its own visibility lists and its
/// pathfinding records, so that the chunk's next bake takes them as it would a bake's that used
/// `cache` ([`add_air_data`]).
pub(crate) fn keep_air_data(cache: &VisCache, map: &Map, bake: &ChunkBake, settings: &CompileSettings) {
    if !cache.keeps() {
        return;
    }
    let Some(level) = map.levels.get(bake.level) else { return };
    let Some(stored) = level.chunk(bake.chunk) else { return };
    let below = ChunkCoord::new(bake.chunk.x, bake.chunk.y - 1, bake.chunk.z);
    let below = if below.is_in_grid() { level.chunk(below) } else { None };
    let own = match (&settings.visibility, &bake.vis) {
        (Some(vs), Some(vis)) if cache.settings() == vs => Some(vis.own().clone()),
        _ => None,
    };
    let paths = settings.pathfinding.then(|| {
        let records = bake
            .pmf
            .server
            .cubes
            .iter()
            .enumerate()
            .filter_map(|(k, c)| Some((k as u32, c.pathfinding.clone()?)))
            .collect();
        (PathInputs::of(&map.library, &map.path_sets), records)
    });
    let chunk_log2 = level.frame().chunk_lattice_log2();
    let key = (bake.level, bake.chunk);
    cache.keep(&map.library, chunk_log2, key, stored, below, &settings.bake, own, paths);
}

/// Environment regions and load regions whose bounds overlap the chunk, relative to its center.
fn add_regions(map: &Map, level: &Level, chunk: ChunkCoord, center: DVec3, out: &mut pmf::Chunk) {
    use pmfedit_core::map::library::EnvKind;
    let (c0, c1) = level.frame().chunk_world_box(chunk);
    let origin = center.as_vec3();
    for (_, region) in level.objects.regions().iter() {
        let (lo, hi) = region.bounds();
        if !boxes_overlap(lo.as_dvec3(), hi.as_dvec3(), c0, c1) {
            continue;
        }
        let Some(name) = map.library.environment_name(region.environment) else { continue };
        let rec = region.to_pmf(origin, name);
        match region.kind() {
            EnvKind::Weather => out.common.weather_regions.push(rec),
            EnvKind::Gravity => out.common.gravity_regions.push(rec),
            EnvKind::Sound => out.client.sound_regions.push(rec),
            EnvKind::Sky => out.client.sky_regions.push(rec),
        }
    }
    let center_chunk = level.frame().center_chunk.as_ivec3();
    for (_, region) in level.objects.load_regions().iter() {
        if !boxes_overlap(region.min.as_dvec3(), region.max.as_dvec3(), c0, c1) {
            continue;
        }
        // Absolute chunk coordinates for now; `compile` maps them into the grid.
        out.server.load_regions.push(region.to_pmf(origin, |signed| absolute_index(center_chunk + signed)));
    }
}

/// A chunk reference as it is kept in a [`ChunkBake`]: the absolute chunk coordinate in a
/// `pmf::ChunkIndex` (x, z < 4096 and y < 256 fit its fields). Keeping bakes free of the grid's
/// position means growing the grid does not invalidate them; [`compile`] subtracts the grid's
/// minimum corner ([`resolve_chunk_refs`]).
fn absolute_index(c: IVec3) -> Option<pmf::ChunkIndex> {
    ChunkCoord::from_ivec3(c).is_in_grid().then_some(pmf::ChunkIndex { y: c.y as u8, x: c.x as u16, z: c.z as u16 })
}

/// Maps the absolute chunk references of a baked chunk into `grid` (dropping those outside it).
fn resolve_chunk_refs(chunk: &mut pmf::Chunk, grid: &Grid) {
    let to_grid = |i: pmf::ChunkIndex| grid.index(ChunkCoord::new(i.x.into(), i.y.into(), i.z.into()));
    for r in &mut chunk.server.load_regions {
        r.other_chunks = r.other_chunks.iter().filter_map(|&i| to_grid(i)).collect();
    }
    // Lists shared by many air cubes are mapped once: keyed by their address, the original kept
    // alive beside its mapping so that the address stays its own.
    type Shared = Arc<[pmf::VisibleChunk]>;
    let mut mapped: BTreeMap<usize, (Shared, Shared)> = BTreeMap::new();
    for cube in &mut chunk.common.cubes {
        if let Some(v) = &mut cube.visibility {
            let key = v.chunks.as_ptr() as usize;
            let (_, m) = mapped.entry(key).or_insert_with(|| {
                let m = v
                    .chunks
                    .iter()
                    .filter_map(|vc| Some(pmf::VisibleChunk { chunk: to_grid(vc.chunk)?, cubes: vc.cubes.clone() }))
                    .collect();
                (v.chunks.clone(), m)
            });
            v.chunks = m.clone();
        }
    }
}

/// Where an entity is exported: `Some(chunk)` for a chunk entity, `None` for level-wide.
fn entity_chunk(level: &Level, e: &pmfedit_core::map::library::MapEntity) -> Option<ChunkCoord> {
    let pos = e.position().map(|p| p.as_dvec3());
    match (e.scope, pos) {
        (EntityScope::Level, _) => None,
        (EntityScope::Chunk, None) => Some(level.frame().center_chunk),
        (_, Some(p)) => Some(level.frame().chunk_from_world(p)),
        (EntityScope::Auto, None) => None,
    }
}

/// The chunk's entities, positions relative to the chunk center, in id order.
fn chunk_entities(level: &Level, chunk: ChunkCoord, center: DVec3) -> Vec<pmf::entity::Entity> {
    level
        .objects
        .entities()
        .iter()
        .filter(|(_, e)| entity_chunk(level, e) == Some(chunk))
        .map(|(_, e)| {
            let mut m = e.clone();
            if let Some(p) = m.position() {
                m.set_position(p - center.as_vec3());
            }
            m.entity
        })
        .collect()
}

/// Level-wide entities (and realtime lights as light entities), in id order.
fn level_entities(level: &Level) -> Vec<pmf::entity::Entity> {
    let mut out: Vec<pmf::entity::Entity> = level
        .objects
        .entities()
        .iter()
        .filter(|(_, e)| entity_chunk(level, e).is_none())
        .map(|(_, e)| e.entity.clone())
        .collect();
    out.extend(
        level
            .objects
            .lights()
            .iter()
            .filter(|(_, l)| matches!(l.mode, LightMode::Realtime(_)))
            .filter_map(|(_, l)| l.realtime_entity()),
    );
    out
}

/// A compiled map whose chunk records are still in their bakes: [`Assembled::file`] is the whole
/// file except that every level's `chunks` is empty, and each level's grid of bakes is kept by
/// reference. [`Assembled::write`] encodes the chunks straight from the bakes on several
/// threads, so an export never copies the bakes; [`Assembled::into_file`] gives the whole
/// [`pmf::File`]. Both give the same bytes (docs/spec/PMF-NOTES.md X1).
#[derive(Debug)]
pub struct Assembled<'a> {
    /// Everything but the chunk records. (Embedding resources needs the chunks' entities too:
    /// [`crate::resources::embed_resources`] reads them from the chunk records.)
    pub file: pmf::File,
    /// Per level: its grid and the bakes of the grid's chunks in PMF order.
    levels: Vec<(Grid, Vec<&'a ChunkBake>)>,
    /// How the file's LZ4 frames are searched when it is written ([`Compression::Fast`]
    /// unless set): smaller or faster, the same records (PMF-NOTES L1).
    pub compression: Compression,
    /// Frames kept from the last export of the same engine and the bakes' `Arc`s, per level in
    /// PMF order ([`Self::with_frames`]).
    frames: Option<(&'a ExportFrames, Vec<Vec<&'a Arc<ChunkBake>>>)>,
    /// Chunks this assembly encoded and compressed (not taken from [`Self::frames`]).
    encoded: std::sync::atomic::AtomicUsize,
    /// Counts the chunks written so far, for a progress display ([`Self::with_progress`]).
    progress: Option<&'a std::sync::atomic::AtomicUsize>,
}

/// The compressed frames of each chunk from an engine's last export, kept for its next one
/// ([`Assembled::with_frames`]): an export after an edit encodes and compresses only the chunks
/// re-baked since. Frames are a function of the chunk's record, the level's grid and chunk size
/// and the compression alone (PMF-NOTES X1), so kept frames of the same bake are the bytes
/// encoding it again would give.
#[derive(Debug, Default)]
pub struct ExportFrames {
    kept: std::sync::Mutex<std::collections::HashMap<(usize, ChunkCoord), KeptFrames>>,
}

#[derive(Debug)]
struct KeptFrames {
    /// The bake the frames were encoded from, held weakly: its address stays this bake's while
    /// the weak pointer lives (a bake changed through `Arc::make_mut` moves to a new allocation
    /// when a weak pointer is left), and the bake itself can still be dropped.
    bake: std::sync::Weak<ChunkBake>,
    grid: Grid,
    chunk_size_exp: u8,
    compression: Compression,
    frames: pmf::EncodedChunk,
}

impl ExportFrames {
    fn lock(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<(usize, ChunkCoord), KeptFrames>> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many chunks' frames are kept.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no frames are kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<'a> Assembled<'a> {
    /// The record of chunk `i` (grid order) of level `li`, chunk references resolved into the
    /// grid; borrowed when the bake holds no chunk reference.
    fn chunk(&self, li: usize, i: usize) -> std::borrow::Cow<'a, pmf::Chunk> {
        let (grid, bakes) = &self.levels[li];
        file_record(&bakes[i].pmf, grid)
    }

    /// Takes each chunk's frames from `kept` where they were encoded from the same bake (the
    /// same `Arc`), grid, chunk size and compression, and keeps what this assembly writes there
    /// for the next (frames of chunks no longer in the grids are dropped). `arc_of` gives the
    /// `Arc` each bake of the assembly is held in; `None` when one is not the bake assembled.
    pub fn with_frames(
        mut self,
        kept: &'a ExportFrames,
        arc_of: impl Fn((usize, ChunkCoord)) -> Option<&'a Arc<ChunkBake>>,
    ) -> Option<Self> {
        let mut arcs = Vec::with_capacity(self.levels.len());
        let mut keys = std::collections::HashSet::new();
        for (li, (grid, bakes)) in self.levels.iter().enumerate() {
            let mut level = Vec::with_capacity(bakes.len());
            for (c, bake) in grid.chunks().into_iter().zip(bakes) {
                let arc = arc_of((li, c)).filter(|a| std::ptr::eq(Arc::as_ptr(a), *bake))?;
                level.push(arc);
                keys.insert((li, c));
            }
            arcs.push(level);
        }
        kept.lock().retain(|k, _| keys.contains(k));
        self.frames = Some((kept, arcs));
        Some(self)
    }

    /// Adds one to `counter` for each chunk encoded or taken from the kept frames, as it is done
    /// (not in file order): a progress display reads it from another thread.
    pub fn with_progress(mut self, counter: &'a std::sync::atomic::AtomicUsize) -> Self {
        self.progress = Some(counter);
        self
    }

    /// How many chunks the writes so far encoded and compressed rather than took from the kept
    /// frames ([`Self::with_frames`]).
    pub fn encoded(&self) -> usize {
        self.encoded.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Chunk `i` of level `li` encoded and compressed, or its kept frames ([`Self::with_frames`]).
    fn encode_chunk(&self, enc: &mut pmf::ChunkEncoder, li: usize, i: usize) -> pmf::WriteResult<pmf::EncodedChunk> {
        let frames = self.encode_or_keep(enc, li, i);
        if let Some(p) = self.progress {
            p.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        frames
    }

    /// [`Self::encode_chunk`] without the progress count.
    fn encode_or_keep(&self, enc: &mut pmf::ChunkEncoder, li: usize, i: usize) -> pmf::WriteResult<pmf::EncodedChunk> {
        let level = &self.file.levels[li];
        let (exp, grid) = (level.chunk_size_exp, self.levels[li].0);
        let kept = self.frames.as_ref().map(|(kept, arcs)| (*kept, arcs[li][i]));
        if let Some((kept, arc)) = kept
            && let Some(k) = kept.lock().get(&(li, arc.chunk))
            && std::ptr::eq(k.bake.as_ptr(), Arc::as_ptr(arc))
            && (k.grid, k.chunk_size_exp, k.compression) == (grid, exp, self.compression)
        {
            return Ok(k.frames.clone());
        }
        let frames = enc.encode(&self.chunk(li, i), li, i, exp, level.grid)?;
        self.encoded.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if let Some((kept, arc)) = kept {
            let k = KeptFrames {
                bake: Arc::downgrade(arc),
                grid,
                chunk_size_exp: exp,
                compression: self.compression,
                frames: frames.clone(),
            };
            kept.lock().insert((li, arc.chunk), k);
        }
        Ok(frames)
    }

    /// The chunk records, level by level in grid order, as their bakes hold them (chunk
    /// references not resolved: for counting what the file holds, not for writing it).
    pub fn chunks(&self) -> impl Iterator<Item = &'a pmf::Chunk> + '_ {
        self.levels.iter().flat_map(|(_, bakes)| bakes.iter().map(|b| &b.pmf))
    }

    /// The entities of the chunk records ([`crate::resources::embed_resources_with`] embeds
    /// what they reference).
    pub fn chunk_entities(&self) -> Vec<&'a pmf::entity::Entity> {
        self.chunks().flat_map(|c| &c.server.entities).collect()
    }

    /// The whole file: every chunk record copied out of its bake.
    pub fn into_file(mut self) -> pmf::File {
        for li in 0..self.levels.len() {
            let chunks = (0..self.levels[li].1.len()).map(|i| self.chunk(li, i).into_owned()).collect();
            self.file.levels[li].chunks = chunks;
        }
        self.file
    }

    /// The uncompressed chunk blocks that [`Self::write`] compresses, concatenated in file
    /// order: for comparing compressors on the very bytes an export compresses.
    pub fn raw_chunk_bytes(&self) -> Result<Vec<u8>, CompileError> {
        let mut out = Vec::new();
        self.each_chunk_blocks(|blocks| {
            for block in blocks {
                out.extend_from_slice(block);
            }
        })?;
        Ok(out)
    }

    /// The uncompressed common, client and server blocks of each chunk that [`Self::write`]
    /// compresses, one chunk at a time in file order (what [`Self::raw_chunk_bytes`]
    /// concatenates), without holding more than one chunk's.
    pub fn each_chunk_blocks(&self, mut f: impl FnMut(&[Vec<u8>; 3])) -> Result<(), CompileError> {
        for (li, (_, bakes)) in self.levels.iter().enumerate() {
            let level = &self.file.levels[li];
            for i in 0..bakes.len() {
                f(&pmf::chunk_blocks(&self.chunk(li, i), li, i, level.chunk_size_exp, level.grid)?);
            }
        }
        Ok(())
    }

    /// The file's bytes ([`pmf::write`] of [`Self::into_file`]), the chunks encoded and
    /// LZ4-compressed on `threads` threads, each straight from its bake. The same bytes for
    /// any thread count: every chunk's frames are a pure function of its record, and they are
    /// placed in grid order; an error is the first chunk's in that order, as [`pmf::write`]'s.
    pub fn write(&self, threads: usize) -> Result<Vec<u8>, CompileError> {
        let chunks = self.encode(threads)?;
        Ok(pmf::write_with_chunks(&self.file, &chunks, self.compression)?.to_vec())
    }

    /// [`Self::write`] straight into `out` ([`write_file_to`] of the whole file): each chunk's
    /// frames are written in file order as soon as they are ready, so neither the records nor the
    /// file are ever whole in memory beside the bakes. Returns the file's size.
    pub fn write_to<W: std::io::Write + std::io::Seek>(&self, threads: usize, out: W) -> Result<u64, pmf::StreamError> {
        let sizes = self.levels.iter().map(|(_, b)| b.len());
        stream_levels(&self.file, sizes, threads, self.compression, out, |enc, li, i| self.encode_chunk(enc, li, i))
    }

    /// Every level's chunks encoded and compressed on `threads` threads, for
    /// [`pmf::write_with_chunks`] with [`Self::file`] (as [`Self::write`] does).
    pub fn encode(&self, threads: usize) -> Result<Vec<Vec<pmf::EncodedChunk>>, CompileError> {
        let sizes = self.levels.iter().map(|(_, b)| b.len());
        Ok(encode_levels(sizes, threads, self.compression, |enc, li, i| self.encode_chunk(enc, li, i))?)
    }
}

/// [`pmf::write_as`] with the chunks encoded and LZ4-compressed on `threads` threads: the same
/// bytes for any thread count (see [`Assembled::write`]), the first error in file order.
pub fn write_file(file: &pmf::File, threads: usize, compression: Compression) -> pmf::WriteResult<Vec<u8>> {
    Ok(pmf::write_with_chunks(file, &encode_chunks(file, threads, compression)?, compression)?.to_vec())
}

/// [`write_file`] straight into `out`: the chunks encoded on `threads` threads while this one
/// writes each chunk's frames, in file order, as soon as it and those before it are done
/// ([`pmf::ChunkStream`]; a chunk's frames are still in the cache and are dropped once written),
/// then the rest of the file. The same bytes as [`write_file`]; the first error in file order.
/// Returns the file's size.
pub fn write_file_to<W: std::io::Write + std::io::Seek>(
    file: &pmf::File,
    threads: usize,
    compression: Compression,
    out: W,
) -> Result<u64, pmf::StreamError> {
    stream_levels(file, file.levels.iter().map(|l| l.chunks.len()), threads, compression, out, |enc, li, i| {
        let level = &file.levels[li];
        enc.encode(&level.chunks[i], li, i, level.chunk_size_exp, level.grid)
    })
}

/// Streams the file whose every part but the chunks is `skeleton` into `out` ([`pmf::ChunkStream`]),
/// `sizes` chunks per level, chunk `i` of level `li` given by `encode(encoder, li, i)` on
/// `threads` threads and written in file order as it and those before it are done. Returns
/// the file's size.
fn stream_levels<W: std::io::Write + std::io::Seek>(
    skeleton: &pmf::File,
    sizes: impl Iterator<Item = usize>,
    threads: usize,
    compression: Compression,
    out: W,
    encode: impl Fn(&mut pmf::ChunkEncoder, usize, usize) -> pmf::WriteResult<pmf::EncodedChunk> + Sync,
) -> Result<u64, pmf::StreamError> {
    let mut stream = pmf::ChunkStream::new(skeleton, out, compression)?;
    let jobs: Vec<(usize, usize)> = sizes.enumerate().flat_map(|(li, n)| (0..n).map(move |i| (li, i))).collect();
    stream_jobs(
        jobs.len(),
        threads,
        || pmf::ChunkEncoder::with_compression(compression),
        |enc, k| {
            let (li, i) = jobs[k];
            encode(enc, li, i)
        },
        |chunk| stream.push(&chunk?),
    )?;
    Ok(stream.finish()?.1)
}

/// Every level's chunks of `file` encoded and compressed on `threads` threads, for
/// [`pmf::write_with_chunks`] (what [`write_file`] writes; an export streams them to disk
/// instead, [`crate::export::write_map`]).
pub fn encode_chunks(
    file: &pmf::File,
    threads: usize,
    compression: Compression,
) -> pmf::WriteResult<Vec<Vec<pmf::EncodedChunk>>> {
    encode_levels(file.levels.iter().map(|l| l.chunks.len()), threads, compression, |enc, li, i| {
        let level = &file.levels[li];
        enc.encode(&level.chunks[i], li, i, level.chunk_size_exp, level.grid)
    })
}

/// `encode(encoder, level, index)` for every chunk of levels of `sizes` chunks, on `threads`
/// threads, each with one [`pmf::ChunkEncoder`] (its buffers and tables reused from chunk to
/// chunk); the chunks per level in grid order, or the first error in that order.
fn encode_levels(
    sizes: impl Iterator<Item = usize>,
    threads: usize,
    compression: Compression,
    encode: impl Fn(&mut pmf::ChunkEncoder, usize, usize) -> pmf::WriteResult<pmf::EncodedChunk> + Sync,
) -> pmf::WriteResult<Vec<Vec<pmf::EncodedChunk>>> {
    let sizes: Vec<usize> = sizes.collect();
    let jobs: Vec<(usize, usize)> =
        sizes.iter().enumerate().flat_map(|(li, &n)| (0..n).map(move |i| (li, i))).collect();
    let results = run_jobs(
        jobs.len(),
        threads,
        || pmf::ChunkEncoder::with_compression(compression),
        |enc, k| {
            let (li, i) = jobs[k];
            encode(enc, li, i)
        },
    );
    let mut per_level: Vec<Vec<pmf::EncodedChunk>> = sizes.iter().map(|&n| Vec::with_capacity(n)).collect();
    for (&(li, _), r) in jobs.iter().zip(results) {
        per_level[li].push(r?);
    }
    Ok(per_level)
}

/// Moves the chunk records of `bakes` into `file`, the skeleton [`assemble`] made of `map` (its
/// levels' chunks empty): each record as [`Assembled`] gives it, chunk references resolved into
/// the level's grid, copied only from a bake someone else holds too. `take` hands over each
/// chunk's bake once.
pub fn fill_chunks(
    mut file: pmf::File,
    map: &Map,
    mut take: impl FnMut((usize, ChunkCoord)) -> Option<Arc<ChunkBake>>,
) -> Result<pmf::File, CompileError> {
    for (li, level) in map.levels.iter().enumerate() {
        let grid = Grid::of(level);
        let mut chunks = Vec::with_capacity(grid.volume() as usize);
        for c in grid.chunks() {
            let bake = take((li, c))
                .ok_or_else(|| CompileError::Format(format!("level {li}: chunk {c:?} has not been baked")))?;
            chunks.push(Arc::try_unwrap(bake).map_or_else(|b| b.pmf.clone(), |b| b.pmf));
        }
        // Each record made the file's (a pure function of the record: any split of the work
        // gives the same records), on every core: merging air walks every cube.
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let per = chunks.len().div_ceil(threads).max(1);
        std::thread::scope(|s| {
            for part in chunks.chunks_mut(per) {
                let grid = &grid;
                s.spawn(move || part.iter_mut().for_each(|c| make_file_record(c, grid)));
            }
        });
        file.levels.get_mut(li).ok_or_else(|| CompileError::Format(format!("level {li}: not in the file")))?.chunks =
            chunks;
    }
    Ok(file)
}

/// A bake's chunk record as the file holds it: chunk references resolved into `grid`
/// ([`resolve_chunk_refs`]), uniform air and buried geometry merged ([`crate::file_merge`]); borrowed when
/// neither changes anything. Every path from bakes to a file goes through it (or
/// [`make_file_record`]), so incremental and full exports write the same bytes.
fn file_record<'a>(chunk: &'a pmf::Chunk, grid: &Grid) -> std::borrow::Cow<'a, pmf::Chunk> {
    let plan = crate::file_merge::merge_plan(chunk);
    if plan.is_none() && !has_chunk_refs(chunk) {
        return std::borrow::Cow::Borrowed(chunk);
    }
    let mut owned = chunk.clone();
    finish_file_record(&mut owned, plan, grid);
    std::borrow::Cow::Owned(owned)
}

/// [`file_record`] of a record the caller owns, in place (no copy).
fn make_file_record(chunk: &mut pmf::Chunk, grid: &Grid) {
    let plan = crate::file_merge::merge_plan(chunk);
    finish_file_record(chunk, plan, grid);
}

/// The file step itself, with the chunk's merge plan made: air and buried geometry merged,
/// references resolved.
fn finish_file_record(chunk: &mut pmf::Chunk, plan: Option<crate::file_merge::MergePlan>, grid: &Grid) {
    if let Some(plan) = plan {
        plan.apply(chunk);
    }
    if has_chunk_refs(chunk) {
        resolve_chunk_refs(chunk, grid);
    }
}

/// Whether a baked chunk names other chunks (visibility lists, load regions): those references
/// are absolute and must be resolved into the grid ([`resolve_chunk_refs`]).
fn has_chunk_refs(chunk: &pmf::Chunk) -> bool {
    chunk.server.load_regions.iter().any(|r| !r.other_chunks.is_empty())
        || chunk.common.cubes.iter().any(|c| c.visibility.as_ref().is_some_and(|v| !v.chunks.is_empty()))
}

/// Assembles a PMF file from a map and the bakes of every chunk of every level's grid
/// ([`level_chunks`]). Chunks without a bake are an error (the caller bakes them first).
pub fn compile(
    map: &Map,
    bakes: &BTreeMap<(usize, ChunkCoord), ChunkBake>,
    settings: &CompileSettings,
) -> Result<pmf::File, CompileError> {
    Ok(assemble(map, |k| bakes.get(&k), settings)?.into_file())
}

/// [`compile`] without copying the chunk records: `bake_of` lends each chunk's bake (`None` for
/// a chunk not baked, an error). Encode the result with [`Assembled::write`].
pub fn assemble<'a>(
    map: &Map,
    bake_of: impl Fn((usize, ChunkCoord)) -> Option<&'a ChunkBake>,
    settings: &CompileSettings,
) -> Result<Assembled<'a>, CompileError> {
    let (file, grids) = skeleton(map, settings)?;
    let mut bake_levels = Vec::with_capacity(grids.len());
    for (li, grid) in grids.into_iter().enumerate() {
        let mut chunk_bakes = Vec::with_capacity(grid.volume() as usize);
        for c in grid.chunks() {
            let bake = bake_of((li, c))
                .ok_or_else(|| CompileError::Format(format!("level {li}: chunk {c:?} has not been baked")))?;
            chunk_bakes.push(bake);
        }
        bake_levels.push((grid, chunk_bakes));
    }
    Ok(Assembled {
        file,
        levels: bake_levels,
        compression: Compression::Fast,
        frames: None,
        encoded: std::sync::atomic::AtomicUsize::new(0),
        progress: None,
    })
}

/// The file [`assemble`] makes of `map`, every level's `chunks` empty, and each level's grid.
fn skeleton(map: &Map, settings: &CompileSettings) -> Result<(pmf::File, Vec<Grid>), CompileError> {
    let lib = &map.library;
    let mut levels = Vec::with_capacity(map.levels.len());
    let mut grids = Vec::with_capacity(map.levels.len());
    for (li, level) in map.levels.iter().enumerate() {
        let grid = Grid::of(level);
        if grid.volume() > MAX_GRID_CHUNKS {
            let d = grid.max.as_ivec3() - grid.min.as_ivec3() + IVec3::ONE;
            return Err(CompileError::Format(format!(
                "level {li}: its chunks span {}×{}×{} = {} chunks (x×y×z); PMF stores a level's grid densely \
                 and at most {MAX_GRID_CHUNKS} chunks are exported: move the content closer to the center chunk",
                d.x,
                d.y,
                d.z,
                grid.volume()
            )));
        }
        grids.push(grid);
        let (materials, client_materials): (Vec<_>, Vec<_>) = lib.materials().iter().map(|(_, m)| m.to_pmf()).unzip();
        let name_of = |r: Option<pmfedit_core::map::library::EnvRef>| {
            r.and_then(|r| lib.environment_name(r)).unwrap_or_default().to_owned()
        };
        let defaults = &level.environments;
        let center_index = grid
            .index(level.frame().center_chunk)
            .ok_or_else(|| CompileError::Format(format!("level {li}: center chunk outside the grid")))?;
        levels.push(pmf::Level {
            flags: level.flags.to_bits(),
            common: pmf::LevelCommon {
                materials,
                physics_materials: lib.physics_materials().iter().map(|(_, p)| p.to_pmf()).collect(),
                sound_materials: lib.sound_materials().iter().map(|(_, s)| s.to_pmf()).collect(),
                air_physics_material: level
                    .air_physics_material
                    .and_then(|p| lib.physics_materials().get(p))
                    .map(|p| p.name.clone())
                    .unwrap_or_default(),
                weather_environments: lib.weather_environments().iter().map(|(_, e)| e.to_pmf()).collect(),
                gravity_environments: lib.gravity_environments().iter().map(|(_, e)| e.to_pmf()).collect(),
                default_weather: name_of(defaults.weather.map(Into::into)),
                default_gravity: name_of(defaults.gravity.map(Into::into)),
            },
            client: pmf::LevelClient {
                sound_environments: lib.sound_environments().iter().map(|(_, e)| e.to_pmf()).collect(),
                sky_environments: lib
                    .sky_environments()
                    .iter()
                    .map(|(_, e)| {
                        let abs = level.frame().center_chunk.as_ivec3() + e.skybox_chunk;
                        e.to_pmf(lib.materials(), grid.index(ChunkCoord::from_ivec3(abs)).unwrap_or_default())
                    })
                    .collect(),
                default_sound: name_of(defaults.sound.map(Into::into)),
                default_sky: name_of(defaults.sky.map(Into::into)),
                materials: client_materials,
            },
            server: pmf::LevelServer { entities: level_entities(level) },
            chunk_size_exp: level.chunk_size_log2(),
            grid: grid.size(),
            center_chunk: center_index,
            chunks: Vec::new(),
        });
    }
    let file = pmf::File {
        header: pmf::Header {
            creation_time: settings.timestamp,
            name: map.meta.name.clone(),
            description: map.meta.description.clone(),
            authors: map.meta.authors.clone(),
            compiler_info: settings.compiler_info.clone(),
            gamemodes: map.meta.gamemodes.clone(),
        },
        archive: Vec::new(),
        extensions: Vec::new(),
        levels,
        entities: Vec::new(),
    };
    Ok((file, grids))
}

/// Bakes every chunk of every level on this thread and compiles the file.
pub fn compile_full(map: &Map, settings: &CompileSettings) -> Result<pmf::File, CompileError> {
    let cache = VisCache::new(settings.visibility.unwrap_or_default());
    cache.set_keep(false);
    let mut bakes = BTreeMap::new();
    for (li, level) in map.levels.iter().enumerate() {
        for c in level_chunks(level) {
            bakes.insert((li, c), bake_chunk_with(map, li, c, settings, &cache)?);
        }
    }
    compile(map, &bakes, settings)
}

/// [`compile_full`] straight into `out`, as [`Assembled::write_to`] would write it: every chunk
/// baked (on `threads` threads, each with the same summaries cache, as [`compile_full`]'s),
/// encoded and written in file order as soon as it and those before it are done, its bake
/// dropped then; so neither the bakes nor the file are ever whole in memory. The same bytes as
/// [`pmf::write`] of [`compile_full`] (for any thread count); the first error in file order.
/// Returns the file's size.
pub fn write_full_to<W: std::io::Write + std::io::Seek>(
    map: &Map,
    settings: &CompileSettings,
    threads: usize,
    out: W,
) -> Result<u64, CompileError> {
    let (file, grids) = skeleton(map, settings)?;
    let cache = VisCache::new(settings.visibility.unwrap_or_default());
    // Each chunk is baked once and dropped once written: nothing to keep for a next bake.
    cache.set_keep(false);
    let jobs: Vec<(usize, usize, ChunkCoord)> = grids
        .iter()
        .enumerate()
        .flat_map(|(li, grid)| grid.chunks().into_iter().enumerate().map(move |(i, c)| (li, i, c)))
        .collect();
    let stream_error = |e: pmf::StreamError| match e {
        pmf::StreamError::Format(e) => CompileError::Write(e),
        pmf::StreamError::Io(e) => CompileError::Format(format!("writing the file: {e}")),
    };
    let mut stream = pmf::ChunkStream::new(&file, out, Compression::Fast).map_err(stream_error)?;
    stream_jobs(
        jobs.len(),
        threads,
        pmf::ChunkEncoder::new,
        |enc, k| -> Result<pmf::EncodedChunk, CompileError> {
            let (li, i, c) = jobs[k];
            let mut chunk = bake_chunk_with(map, li, c, settings, &cache)?.pmf;
            make_file_record(&mut chunk, &grids[li]);
            let level = &file.levels[li];
            Ok(enc.encode(&chunk, li, i, level.chunk_size_exp, level.grid)?)
        },
        |chunk| stream.push(&chunk?).map_err(stream_error),
    )?;
    Ok(stream.finish().map_err(stream_error)?.1)
}

/// The lattice box of a chunk, for change-set intersection by callers.
pub fn chunk_lattice_box(level: &Level, chunk: ChunkCoord) -> LatticeBox {
    let a = level.frame().chunk_addr(chunk);
    a.lattice_box()
}
