//! GPU side: three-d `Program`s with our own small shaders; chunk meshes in shared per-region
//! buffers ([`super::regions`]), drawn camera-relative inside egui's paint callback with one
//! multi-draw call per region and pass (opaque, transparent, additive), whatever the chunk count.
//!
//! Uploads happen inside the callback too (the only place the GL context is guaranteed to be
//! current): the mesh workers ([`super::mesher`]) build GPU-ready [`GpuMesh`]es, the UI thread
//! queues them here, and the next paint copies their bytes into their region's buffers and
//! records when, for the `--bench-frames` latency figure.
//!
//! Material textures: one `Texture2DArray` (repeat wrap, mipmaps, linear filtering), one layer
//! per texture reference ("slot", layer 0 white; [`TextureSlots`], shared with the viewport so
//! the workers write each vertex's layer), every layer resized to the largest texture's size (a
//! power of two, at most [`MAX_LAYER_EDGE`]); decoded on the UI thread by
//! [`super::textures::TextureStore`] and queued here as [`Upload::Texture`]; a reference not
//! loaded yet, missing or undecodable draws white. A region's pass is drawn with one texture
//! array bound, whatever its materials, and only the facings the camera may see of each chunk
//! ([`super::mesh::facing_runs`]) go into its multi-draw.
//!
//! Per chunk the shader reads its region's chunk table (see [`super::regions`]): the lightmap
//! corner in the region's atlas, the pending tint and the visibility view's mode ([`VisMode`]:
//! hidden, all visible, per-cube lookup, waiting for its full bake). For the lookup, the
//! region's R8 texture has one texel per PMF cube of its listed chunks (1 = visible), read with
//! the per-vertex cube index; it is replaced by [`Upload::Visibility`] only when the hovered air
//! cube or the bakes change.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use eframe::egui_glow;
use eframe::egui_glow::glow::{self, HasContext};
use glam::{DVec3, Mat4, Vec3, Vec4};
use three_d::{
    Blend, ClearState, Context, Cull, DepthTest, Interpolation, Program, RenderStates, RenderTarget, ScissorBox,
    Texture2D, Texture2DArray, TextureData, VertexBuffer, Viewport as TdViewport, Wrapping, WriteMask,
};

use pmfedit_bake::deps::ChunkKey;

use super::gpu_mesh::{GpuMesh, RegionKey, region_of};
use super::mesh::facing_runs;
use super::regions::{DrawList, MultiDrawFn, Region, RegionChunk};
use super::sky::SkyColors;
use super::textures::{TextureImage, TextureSlots};
use super::visibility::ChunkVis;

// The shading modes are plain data (the command line names one); what each draws is here.
pub use crate::shading::Shading;

impl Shading {
    /// The constant the mesh shader compares `u_mode` with ([`glsl_defines`]).
    pub const fn glsl_name(self) -> &'static str {
        match self {
            Shading::Lit => "SHADING_LIT",
            Shading::Fullbright => "SHADING_FULLBRIGHT",
            Shading::Wireframe => "SHADING_WIREFRAME",
            Shading::Lightmap => "SHADING_LIGHTMAP",
            Shading::Visibility => "SHADING_VISIBILITY",
        }
    }

    /// The value of `u_mode` (and of its [`Shading::glsl_name`] constant).
    fn index(self) -> i32 {
        self as i32
    }
}

/// What a material does over time and on its own, for the viewport's material table.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MaterialFx {
    /// The texture, then the extra animation frames (empty references draw white).
    pub frames: Vec<String>,
    /// Time per animation frame, microseconds (0: no animation).
    pub frame_us: u32,
    /// UV scroll, texture repeats per second.
    pub scroll: [f32; 2],
    /// Emission, sRGB in `0..=1`.
    pub emission: [f32; 3],
}

impl MaterialFx {
    /// Whether drawing it changes over time.
    pub fn animated(&self) -> bool {
        (self.frame_us > 0 && self.frames.len() > 1) || self.scroll != [0.0; 2]
    }

    /// The frame shown at `time_s`.
    pub fn frame_at(&self, time_s: f64) -> usize {
        if self.frame_us == 0 || self.frames.len() < 2 {
            return 0;
        }
        ((time_s * 1e6 / f64::from(self.frame_us)) as u64 % self.frames.len() as u64) as usize
    }

    /// The UV offset at `time_s`, wrapped into `[0, 1)` (textures repeat).
    pub fn scroll_at(&self, time_s: f64) -> [f32; 2] {
        self.scroll.map(|v| (f64::from(v) * time_s).rem_euclid(1.0) as f32)
    }
}

/// Materials per row of the material table texture (two texels each).
const FX_PER_ROW: usize = 256;

/// The material table's texels: per row (row 0 for unknown materials, then `materials`), texel
/// `(layer, u offset, v offset, 0)` then `(emission, 0)`; `layer` maps a texture reference to its
/// texture array layer. Rows fill `FX_PER_ROW` materials per texture row.
fn fx_texels(materials: &[MaterialFx], time_s: f64, mut layer: impl FnMut(&str) -> usize) -> Vec<[f32; 4]> {
    let rows = materials.len() + 1;
    let height = rows.div_ceil(FX_PER_ROW);
    let mut texels = vec![[0.0f32; 4]; height * FX_PER_ROW * 2];
    for (i, m) in materials.iter().enumerate() {
        let row = i + 1;
        let at = 2 * ((row / FX_PER_ROW) * FX_PER_ROW + row % FX_PER_ROW);
        let l = m.frames.get(m.frame_at(time_s)).map_or(0, |r| layer(r));
        let [u, v] = m.scroll_at(time_s);
        texels[at] = [l as f32, u, v, 0.0];
        texels[at + 1] = [m.emission[0], m.emission[1], m.emission[2], 0.0];
    }
    texels
}

/// The material table texture from [`fx_texels`] (`2 × FX_PER_ROW` texels wide).
fn fx_texture(ctx: &Context, texels: &[[f32; 4]]) -> Texture2D {
    let width = (2 * FX_PER_ROW) as u32;
    let mut data = texels.to_vec();
    if data.is_empty() {
        data = vec![[0.0; 4]; width as usize];
    }
    let height = (data.len() / width as usize) as u32;
    Texture2D::new(
        ctx,
        &three_d::CpuTexture {
            name: String::new(),
            data: TextureData::RgbaF32(data),
            width,
            height,
            min_filter: Interpolation::Nearest,
            mag_filter: Interpolation::Nearest,
            mipmap: None,
            wrap_s: Wrapping::ClampToEdge,
            wrap_t: Wrapping::ClampToEdge,
        },
    )
}

/// A line segment of the overlay (world space).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    pub a: DVec3,
    pub b: DVec3,
    pub color: [f32; 4],
    /// Opacity of the parts hidden behind geometry, as a factor of `color`'s alpha (x-ray);
    /// 0: drawn only where visible.
    pub xray: f32,
}

/// A filled triangle of the overlay (world space).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tri {
    pub p: [DVec3; 3],
    pub color: [f32; 4],
}

/// Everything one paint needs besides the uploaded chunks.
#[derive(Debug, Clone, Default)]
pub struct FrameParams {
    pub eye: DVec3,
    pub forward: DVec3,
    /// Projection × camera-relative view.
    pub view_proj: Mat4,
    pub shading: Shading,
    pub level: usize,
    /// Chunks waiting for a re-bake (tinted).
    pub pending: Vec<ChunkKey>,
    pub segments: Vec<Segment>,
    /// Translucent fills (regions, icons), drawn after the chunks without depth writes.
    pub fills: Vec<Tri>,
    pub clear_color: [f32; 4],
    /// The sky gradient drawn behind everything (`None`: `clear_color`).
    pub sky: Option<SkyColors>,
    /// Draw material textures (lit and fullbright views).
    pub textured: bool,
    /// Darken face edges a little in the lit and fullbright views (depth cues on flat lighting).
    pub edges: bool,
    /// Lightmap multiplier of the lit mode (a view setting; 1 = as the game draws).
    pub exposure: f32,
    /// Editor-only light added everywhere in lit mode, linear (0 = exactly the bake).
    pub ambient: f32,
    /// The clip plane's world height: cube faces above it are not drawn (`None`: no clip).
    pub clip: Option<f64>,
    /// A box of cubes hidden, or the only one shown (`None`: everything shows).
    pub filter: Option<super::ShowFilter>,
    /// Chunks whose bounding sphere lies wholly farther than this are not drawn, map units
    /// (0: no limit).
    pub view_distance: f64,
    /// Per material table row − 1 ([`super::mesh::Look::row`]): texture frames, UV scroll,
    /// emission. Rows beyond it draw plain white.
    pub materials: Arc<Vec<MaterialFx>>,
    /// Seconds on the animation clock (texture frames, UV scroll).
    pub time_s: f64,
    /// Chunks whose full bake is not in (hatched in the visibility view).
    pub waiting: Vec<ChunkKey>,
}

/// The edge of every layer of the texture array: the largest loaded texture's longest side,
/// rounded up to a power of two, at most [`MAX_LAYER_EDGE`]; other textures are resized to it.
fn layer_edge(images: &[Option<TextureImage>]) -> u32 {
    let longest = images.iter().flatten().map(|i| i.width.max(i.height)).max().unwrap_or(1);
    longest.clamp(1, MAX_LAYER_EDGE).next_power_of_two()
}

/// Largest texture array layer edge, texels.
pub const MAX_LAYER_EDGE: u32 = 512;

/// One layer's pixels: the image resized to `edge` × `edge` (white for none or a broken one).
fn layer_pixels(image: Option<&TextureImage>, edge: u32) -> Vec<[u8; 4]> {
    let n = (edge * edge) as usize;
    let Some(i) = image.filter(|i| i.width > 0 && i.rgba.len() == (i.width * i.height) as usize) else {
        return vec![[255; 4]; n];
    };
    if i.width == edge && i.height == edge {
        return i.rgba.clone();
    }
    let raw: Vec<u8> = i.rgba.iter().flatten().copied().collect();
    let Some(img) = image::RgbaImage::from_raw(i.width, i.height, raw) else {
        return vec![[255; 4]; n];
    };
    let resized = image::imageops::resize(&img, edge, edge, image::imageops::FilterType::Triangle);
    resized.pixels().map(|p| p.0).collect()
}

/// The material textures as one array (repeat wrap, mipmaps, linear filtering): layer `k` is
/// texture slot `k`, layer 0 white.
fn texture_array(ctx: &Context, images: &[Option<TextureImage>]) -> Texture2DArray {
    let edge = layer_edge(images);
    let layers: Vec<three_d::CpuTexture> = std::iter::once(None)
        .chain(images.iter().map(Option::as_ref))
        .map(|image| three_d::CpuTexture {
            name: String::new(),
            data: TextureData::RgbaU8(layer_pixels(image, edge)),
            width: edge,
            height: edge,
            min_filter: Interpolation::Linear,
            mag_filter: Interpolation::Linear,
            mipmap: Some(three_d::Mipmap { filter: Interpolation::Linear, max_levels: 12, max_ratio: 1 }),
            wrap_s: Wrapping::Repeat,
            wrap_t: Wrapping::Repeat,
        })
        .collect();
    let refs: Vec<&three_d::CpuTexture> = layers.iter().collect();
    Texture2DArray::new(ctx, &refs)
}

/// The visibility view's data of one chunk.
enum GpuVis {
    All,
    /// One byte per cube (in its region's visibility texture).
    Bits(Vec<u8>),
}

/// Per-chunk mode of the visibility view (the shader's `v_vis`, from the chunk table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
enum VisMode {
    /// Not visible from the air cube.
    Hidden = 0,
    /// Every cube visible.
    All = 1,
    /// Look each cube up in the chunk's visibility texture.
    Lookup = 2,
    /// Waiting for the chunk's full bake.
    Waiting = 3,
}

impl VisMode {
    /// Every mode with the constant the mesh shader compares `v_vis` with ([`glsl_defines`]).
    const GLSL: [(VisMode, &'static str); 4] = [
        (VisMode::Hidden, "VIS_HIDDEN"),
        (VisMode::All, "VIS_ALL"),
        (VisMode::Lookup, "VIS_LOOKUP"),
        (VisMode::Waiting, "VIS_WAITING"),
    ];
}

/// The region `rk` (at `origin`), made when it does not exist yet (its visibility texture is
/// then written before the next visibility view draw).
fn region_or_new<'a>(
    regions: &'a mut BTreeMap<RegionKey, Region>,
    vis_dirty: &mut std::collections::BTreeSet<RegionKey>,
    gl: &glow::Context,
    rk: RegionKey,
    origin: DVec3,
) -> Result<&'a mut Region, super::regions::GlError> {
    match regions.entry(rk) {
        std::collections::btree_map::Entry::Occupied(e) => Ok(e.into_mut()),
        std::collections::btree_map::Entry::Vacant(e) => {
            let r = Region::new(gl, origin)?;
            vis_dirty.insert(rk);
            Ok(e.insert(r))
        }
    }
}

/// CPU time of the paint callbacks so far (GL calls return before software GL has drawn; a
/// later call that needs the result waits for it and counts it).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PaintTime {
    /// Paint callbacks run.
    pub paints: u64,
    /// Their time in all.
    pub total: Duration,
    /// Of which copying queued meshes into the region buffers ([`Upload`]).
    pub uploads: Duration,
    /// The last paint's time.
    pub last: Duration,
    /// The GPU's time for the chunk passes of the latest paint whose timer query has its
    /// result (a frame or two behind; `None`: no result yet, or the context has no timer
    /// queries: [`GpuTimer`]).
    pub gpu_chunks: Option<Duration>,
}

/// `GL_TIME_ELAPSED` queries around the chunk passes (desktop GL 3.3 or `GL_ARB_timer_query`):
/// the GPU's own time for them, which the paint's CPU time does not show on a real GPU (its
/// calls return before it draws). Results are read only when available, never waited for.
struct GpuTimer {
    /// Queries not in use.
    free: Vec<glow::Query>,
    /// Queries ended, oldest first, results not read yet.
    pending: std::collections::VecDeque<glow::Query>,
}

impl GpuTimer {
    /// Queries in flight at most (a result is a frame or two late).
    const QUERIES: usize = 4;

    /// A timer, where the context has timer queries.
    #[allow(unsafe_code)] // glow calls are unsafe
    fn new(gl: &glow::Context) -> Option<Self> {
        let v = gl.version();
        let core = !v.is_embedded && (v.major, v.minor) >= (3, 3);
        if !core && !gl.supported_extensions().contains("GL_ARB_timer_query") {
            return None;
        }
        // SAFETY: plain object creation on the current context.
        let free = (0..Self::QUERIES).filter_map(|_| unsafe { gl.create_query() }.ok()).collect::<Vec<_>>();
        (!free.is_empty()).then(|| Self { free, pending: Default::default() })
    }

    /// The GPU time of the newest query that has finished, if any has (the finished ones are
    /// free again).
    #[allow(unsafe_code)] // glow calls are unsafe
    fn poll(&mut self, gl: &glow::Context) -> Option<Duration> {
        let mut latest = None;
        while let Some(&q) = self.pending.front() {
            // SAFETY: `q` is a query of this context that was begun and ended.
            let ready = unsafe { gl.get_query_parameter_u32(q, glow::QUERY_RESULT_AVAILABLE) } != 0;
            if !ready {
                break;
            }
            // SAFETY: as above; the result is available, so this does not wait.
            let ns = unsafe { gl.get_query_parameter_u32(q, glow::QUERY_RESULT) };
            latest = Some(Duration::from_nanos(u64::from(ns)));
            self.pending.pop_front();
            self.free.push(q);
        }
        latest
    }

    /// Starts timing (`false`: every query is still in flight; this paint is not timed).
    #[allow(unsafe_code)] // glow calls are unsafe
    fn begin(&mut self, gl: &glow::Context) -> bool {
        let Some(q) = self.free.pop() else { return false };
        // SAFETY: `q` is a free query of this context; no other timer query is active.
        unsafe { gl.begin_query(glow::TIME_ELAPSED, q) };
        self.pending.push_back(q);
        true
    }

    /// Ends the timing [`Self::begin`] started.
    #[allow(unsafe_code)] // glow calls are unsafe
    fn end(&self, gl: &glow::Context) {
        // SAFETY: a TIME_ELAPSED query is active (begin returned true).
        unsafe { gl.end_query(glow::TIME_ELAPSED) };
    }
}

/// One queued change of the GPU chunk set.
pub enum Upload {
    Set {
        key: ChunkKey,
        mesh: Box<GpuMesh>,
    },
    /// Chunks on their way to a region for the first time (an open): room for this many more
    /// vertices and indices in its opaque pass ([`Region::reserve`]); `origin` is the region's,
    /// for a region not made yet.
    Reserve {
        region: RegionKey,
        origin: DVec3,
        vertices: u32,
        indices: u32,
    },
    Remove(ChunkKey),
    Clear,
    /// A material texture (re)loaded: its reference and pixels (`None`: draw it white).
    Texture {
        reference: String,
        image: Option<TextureImage>,
    },
    /// The visibility view's data: the chunks with something visible; every other chunk is
    /// hidden, or drawn normally when `rest_visible` (no air cube to show).
    Visibility {
        chunks: BTreeMap<ChunkKey, ChunkVis>,
        rest_visible: bool,
    },
}

/// The GPU renderer (lives behind an `Arc<Mutex<_>>` shared with the paint callback).
pub struct Renderer {
    ctx: Context,
    /// The chunk programs compiled so far, one per [`MeshKey`] (a view setting met for the
    /// first time compiles its program then).
    mesh_programs: HashMap<MeshKey, Program>,
    line_program: Program,
    fill_program: Program,
    sky_program: Program,
    sky_corners: VertexBuffer<[f32; 2]>,
    /// `glMultiDrawElementsBaseVertex`, when the context has it (else one draw per run).
    multi_draw: Option<MultiDrawFn>,
    /// The chunk meshes, by region (ordered: draws are deterministic).
    regions: BTreeMap<RegionKey, Region>,
    /// Chunks on the GPU.
    chunk_count: usize,
    /// Material textures, one layer per slot; slot 0 is white (untextured materials).
    textures: Texture2DArray,
    /// The pixels of slots 1.. (`None`: not loaded, missing or broken; drawn white).
    texture_images: Vec<Option<TextureImage>>,
    /// Whether `textures` must be rebuilt from `texture_images` before the next draw.
    textures_dirty: bool,
    /// The material table ([`fx_texels`]).
    fx_table: Texture2D,
    /// The materials `fx_table` was made from.
    fx_source: Option<Arc<Vec<MaterialFx>>>,
    /// Texture reference → slot (layer of `textures`), shared with the viewport.
    texture_slots: Arc<Mutex<TextureSlots>>,
    /// Uploads for the next paint.
    pub queue: Vec<Upload>,
    /// When each chunk was last uploaded.
    pub uploaded_at: HashMap<ChunkKey, Instant>,
    /// Time spent in the paints so far, and in their uploads (`--bench-frames` prints them).
    pub paint_time: PaintTime,
    /// What the last paint drew.
    pub stats: DrawStats,
    /// Visibility view: per chunk with something visible.
    vis: BTreeMap<ChunkKey, GpuVis>,
    /// Visibility view: whether chunks not in `vis` are drawn normally (no air cube) or hidden.
    vis_rest_visible: bool,
    /// Regions whose visibility texture must be written again from `vis` before the next
    /// visibility view draw.
    vis_dirty: std::collections::BTreeSet<RegionKey>,
    /// The last GL failure of an upload (a chunk then stays as it was).
    pub error: Option<String>,
    /// Times the chunk passes on the GPU ([`PaintTime::gpu_chunks`]; `None`: no timer queries).
    gpu_timer: Option<GpuTimer>,
}

/// What one paint drew (chunk meshes only).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DrawStats {
    /// Chunks drawn.
    pub chunks: usize,
    /// Chunks outside the view frustum or beyond the view distance.
    pub culled: usize,
    /// Draw calls (a multi-draw is one).
    pub draws: usize,
    /// Chunk index runs drawn (the parts of the multi-draws).
    pub runs: usize,
    /// Indices submitted (three per triangle).
    pub indices: usize,
}

/// The shaders, one file each in `shaders/`. Mode uniforms are compared with the names
/// [`glsl_defines`] puts before each source, never with bare numbers.
const MESH_VS: &str = include_str!("shaders/chunk.vert");
pub(super) const MESH_FS: &str = include_str!("shaders/chunk.frag");
const LINE_VS: &str = include_str!("shaders/line.vert");
const FLAT_FS: &str = include_str!("shaders/flat.frag");
const FILL_VS: &str = include_str!("shaders/fill.vert");
const SKY_VS: &str = include_str!("shaders/sky.vert");
const SKY_FS: &str = include_str!("shaders/sky.frag");

/// `#define`s of every mode constant the shaders compare uniforms with: `SHADING_*` for
/// `u_mode` ([`Shading::glsl_name`]), `VIS_*` for `v_vis` ([`VisMode::GLSL`]), and the chunk
/// table's width `TABLE_EDGE` ([`super::regions::TABLE_EDGE`]). Generated from
/// the Rust enums, so the two sides cannot drift apart.
pub fn glsl_defines() -> String {
    let mut s = String::new();
    for sh in Shading::ALL {
        s.push_str(&format!("#define {} {}\n", sh.glsl_name(), sh.index()));
    }
    for (mode, name) in VisMode::GLSL {
        s.push_str(&format!("#define {name} {}\n", mode as i32));
    }
    s.push_str(&format!("#define TABLE_EDGE {}\n", super::regions::TABLE_EDGE));
    s
}

/// A shader source with [`glsl_defines`] before it (three-d puts the `#version` line first).
fn with_defines(source: &str) -> String {
    format!("{}{source}", glsl_defines())
}

/// What a chunk program is compiled for: the view settings the mesh fragment shader branches on,
/// as constants ([`MeshKey::prelude`]). Software GL (llvmpipe) runs both sides of a branch for
/// every fragment, and interpolates every varying the shader reads anywhere, so one program with
/// them as uniforms paid for every view's code and inputs on every fragment; the compiler folds
/// the constants and drops the rest. The picture is the same: each view's expressions are
/// unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct MeshKey {
    shading: Shading,
    /// Material textures sampled (`u_textured`).
    textured: bool,
    /// Face outlines darkened (`u_edges`).
    edges: bool,
    /// `u_box_mode`: 0 no box filter, 1 only the box shows, 2 the box is hidden.
    box_mode: i32,
    /// A clip plane is set (`u_clipped`): without one the shader has no `discard` at all, so
    /// the GPU may test depth before shading (hidden fragments of the front-to-back opaque pass
    /// are then never shaded).
    clipped: bool,
}

impl MeshKey {
    /// The key of a frame: textures only in the views that draw them; the box mode from the
    /// filter.
    fn of(f: &FrameParams) -> Self {
        let textured = f.textured && matches!(f.shading, Shading::Lit | Shading::Fullbright | Shading::Visibility);
        let box_mode = match f.filter {
            Some(b) if b.isolate => 1,
            Some(_) => 2,
            None => 0,
        };
        Self { shading: f.shading, textured, edges: f.edges, box_mode, clipped: f.clip.is_some() }
    }

    /// The constants the mesh fragment shader reads instead of uniforms, declared before its
    /// source (after [`glsl_defines`], which names the shading).
    fn prelude(self) -> String {
        format!(
            "const int u_mode = {};\nconst int u_textured = {};\nconst int u_edges = {};\nconst int u_box_mode = {};\nconst int u_clipped = {};\n",
            self.shading.glsl_name(),
            i32::from(self.textured),
            i32::from(self.edges),
            self.box_mode,
            i32::from(self.clipped)
        )
    }

    /// The mesh program's fragment source for this key.
    fn fragment_source(self) -> String {
        format!("{}{}{MESH_FS}", glsl_defines(), self.prelude())
    }
}

/// The key the renderer compiles before the first frame (the editor's default view).
const DEFAULT_MESH_KEY: MeshKey =
    MeshKey { shading: Shading::Lit, textured: true, edges: true, box_mode: 0, clipped: false };
fn td_mat(m: Mat4) -> three_d::Mat4 {
    three_d::Mat4::from(m.to_cols_array_2d())
}

/// The key range of a level's regions.
fn level_regions(level: usize) -> std::ops::RangeInclusive<RegionKey> {
    let at = |v: i32| pmfedit_core::map::coords::ChunkCoord { x: v, y: v, z: v };
    RegionKey { level, coord: at(i32::MIN) }..=RegionKey { level, coord: at(i32::MAX) }
}

/// The six frustum planes (a, b, c, d with the normal pointing inside) of a view-projection.
fn frustum_planes(vp: Mat4) -> [Vec4; 6] {
    let r = [vp.row(0), vp.row(1), vp.row(2), vp.row(3)];
    let mut p = [r[3] + r[0], r[3] - r[0], r[3] + r[1], r[3] - r[1], r[3] + r[2], r[3] - r[2]];
    for q in &mut p {
        let l = q.truncate().length().max(1e-12);
        *q /= l;
    }
    p
}

/// Whether a sphere (center relative to the eye) is inside the frustum `planes` (partly is
/// enough) and not wholly beyond `view_distance` (0: no limit).
fn sphere_in_view(planes: &[Vec4; 6], center: Vec3, radius: f32, view_distance: f64) -> bool {
    let too_far = view_distance > 0.0 && f64::from(center.length() - radius) > view_distance;
    !too_far && planes.iter().all(|p| p.dot(center.extend(1.0)) >= -radius)
}

impl Renderer {
    /// Compiles the shaders. Fails only on a GL without GLSL 3.30 / ES 3.00. `multi_draw` is
    /// `glMultiDrawElementsBaseVertex` where the context has it ([`load_multi_draw`]);
    /// `texture_slots` is the viewport's.
    pub fn new(
        gl: Arc<glow::Context>,
        multi_draw: Option<MultiDrawFn>,
        texture_slots: Arc<Mutex<TextureSlots>>,
    ) -> Result<Self, three_d::CoreError> {
        let ctx = Context::from_gl_context(gl)?;
        let program = |vs: &str, fs: &str| Program::from_source(&ctx, &with_defines(vs), &with_defines(fs));
        let mesh_program = Program::from_source(&ctx, &with_defines(MESH_VS), &DEFAULT_MESH_KEY.fragment_source())?;
        let line_program = program(LINE_VS, FLAT_FS)?;
        let fill_program = program(FILL_VS, FLAT_FS)?;
        let sky_program = program(SKY_VS, SKY_FS)?;
        // One triangle covering the viewport.
        let sky_corners = VertexBuffer::new_with_data(&ctx, &[[-1.0f32, -1.0], [3.0, -1.0], [-1.0, 3.0]]);
        let textures = texture_array(&ctx, &[]);
        let fx_table = fx_texture(&ctx, &[]);
        let gpu_timer = GpuTimer::new(&ctx);
        Ok(Self {
            ctx,
            mesh_programs: HashMap::from([(DEFAULT_MESH_KEY, mesh_program)]),
            line_program,
            fill_program,
            sky_program,
            sky_corners,
            multi_draw,
            regions: BTreeMap::new(),
            chunk_count: 0,
            textures,
            texture_images: Vec::new(),
            textures_dirty: false,
            fx_table,
            fx_source: None,
            texture_slots,
            queue: Vec::new(),
            uploaded_at: HashMap::new(),
            paint_time: PaintTime::default(),
            stats: DrawStats::default(),
            vis: BTreeMap::new(),
            vis_rest_visible: true,
            vis_dirty: Default::default(),
            error: None,
            gpu_timer,
        })
    }

    /// Chunks on the GPU.
    pub fn chunk_count(&self) -> usize {
        self.chunk_count
    }

    /// Material textures on the GPU (not counting the white one).
    pub fn texture_count(&self) -> usize {
        self.texture_images.len()
    }

    /// The texture slot of a reference, making a white placeholder for a new one.
    fn texture_slot(&mut self, reference: &str) -> usize {
        let slot = self.texture_slots.lock().expect("texture slots").slot(reference);
        self.cover_slots();
        slot
    }

    /// Gives every slot handed out so far (here or by the viewport) a layer, white until its
    /// pixels arrive.
    fn cover_slots(&mut self) {
        let n = self.texture_slots.lock().expect("texture slots").len();
        if n > self.texture_images.len() {
            self.texture_images.resize(n, None);
            self.textures_dirty = true;
        }
    }

    /// What the regions hold on the GPU.
    pub fn gpu_bytes(&self) -> super::regions::GpuBytes {
        let mut b = super::regions::GpuBytes::default();
        for r in self.regions.values() {
            b += r.bytes();
        }
        b
    }

    fn upload(&mut self) {
        let now = Instant::now();
        let gl = self.ctx.clone();
        for u in std::mem::take(&mut self.queue) {
            match u {
                Upload::Clear => {
                    for (_, r) in std::mem::take(&mut self.regions) {
                        r.destroy(&gl);
                    }
                    self.chunk_count = 0;
                    self.vis.clear();
                    self.vis_dirty.clear();
                    self.vis_rest_visible = true;
                }
                Upload::Visibility { chunks, rest_visible } => {
                    self.vis_dirty.extend(self.vis.keys().chain(chunks.keys()).map(|k| region_of(*k).0));
                    self.vis = chunks
                        .into_iter()
                        .map(|(k, v)| {
                            let g = match v {
                                ChunkVis::All => GpuVis::All,
                                ChunkVis::Listed(bits) => GpuVis::Bits(bits),
                            };
                            (k, g)
                        })
                        .collect();
                    self.vis_rest_visible = rest_visible;
                }
                Upload::Remove(k) => {
                    let (rk, slot) = region_of(k);
                    if let Some(r) = self.regions.get_mut(&rk) {
                        let had = r.chunks.contains_key(&slot);
                        self.chunk_count -= usize::from(had);
                        if r.remove(slot) {
                            self.regions.remove(&rk).expect("present").destroy(&gl);
                        }
                    }
                }
                Upload::Texture { reference, image } => {
                    let slot = self.texture_slot(&reference);
                    if slot != 0 {
                        self.texture_images[slot - 1] = image;
                        self.textures_dirty = true;
                    }
                }
                Upload::Reserve { region, origin, vertices, indices } => {
                    let reserved = region_or_new(&mut self.regions, &mut self.vis_dirty, &gl, region, origin)
                        .and_then(|r| r.reserve(&gl, 0, vertices, indices));
                    if let Err(err) = reserved {
                        self.error = Some(err.to_string());
                    }
                }
                Upload::Set { key, mesh } => {
                    let (rk, slot) = region_of(key);
                    debug_assert_eq!(slot, mesh.slot);
                    let region = match region_or_new(&mut self.regions, &mut self.vis_dirty, &gl, rk, mesh.origin) {
                        Ok(r) => r,
                        Err(err) => {
                            self.error = Some(err.to_string());
                            continue;
                        }
                    };
                    let had = region.chunks.contains_key(&slot);
                    match region.set(&gl, key, *mesh) {
                        Ok(()) => {
                            self.chunk_count += usize::from(!had);
                            self.uploaded_at.insert(key, now);
                        }
                        Err(err) => {
                            self.chunk_count -= usize::from(had);
                            self.error = Some(format!("chunk {key:?}: {err}"));
                        }
                    }
                }
            }
        }
        self.cover_slots();
    }

    /// Refreshes the material table (new materials, or animation) and then the texture array
    /// (new or reloaded textures).
    fn update_materials(&mut self, f: &FrameParams) {
        let changed = self.fx_source.as_ref().is_none_or(|m| !Arc::ptr_eq(m, &f.materials));
        if changed || f.materials.iter().any(MaterialFx::animated) {
            let materials = f.materials.clone();
            let texels = fx_texels(&materials, f.time_s, |r| self.texture_slot(r));
            self.fx_table = fx_texture(&self.ctx, &texels);
            self.fx_source = Some(materials);
        }
        if self.textures_dirty {
            self.textures = texture_array(&self.ctx, &self.texture_images);
            self.textures_dirty = false;
        }
    }

    /// Draws pass `k` of a region: one multi-draw of `list`, with the region's textures and
    /// offset from the eye.
    #[allow(clippy::too_many_arguments)]
    fn draw_region(
        &self,
        p: &Program,
        region: &Region,
        k: usize,
        list: &DrawList,
        states: RenderStates,
        vp: TdViewport,
        eye: DVec3,
    ) {
        if list.is_empty() {
            return;
        }
        let offset = (region.origin - eye).as_vec3();
        p.use_uniform_if_required("u_offset", three_d::vec3(offset.x, offset.y, offset.z));
        let (lightmaps, (w, h), table, vis) = region.textures();
        p.use_uniform_if_required("u_lm_size", three_d::vec2(w as f32, h as f32));
        // Our own textures on units past three-d's (it numbers the textures it binds from 0).
        for (name, unit, texture) in [("u_lightmaps", 4u32, lightmaps), ("u_chunks", 5, table), ("u_vis_bits", 6, vis)]
        {
            if p.requires_uniform(name) {
                p.use_uniform(name, unit as i32);
                gl_state::bind_texture(&self.ctx, unit, texture);
            }
        }
        if p.requires_uniform("u_textures") {
            p.use_texture_array("u_textures", &self.textures);
        }
        if p.requires_uniform("u_fx") {
            p.use_texture("u_fx", &self.fx_table);
        }
        p.draw_with(states, vp, || region.draw(&self.ctx, self.multi_draw, k, list));
    }

    /// The chunk table texel of a chunk (see [`super::regions`]): lightmap corner, flags
    /// (1: pending; 2 × [`VisMode`]) and where its cubes start in the visibility texture.
    fn table_texel(
        &self,
        region: &Region,
        c: &RegionChunk,
        f: &FrameParams,
        pending: &std::collections::HashSet<ChunkKey>,
        waiting: &std::collections::HashSet<ChunkKey>,
    ) -> [f32; 4] {
        let (x, y) = c.lightmap_at();
        let (_, slot) = region_of(c.key);
        let (mode, base) = if f.shading != Shading::Visibility {
            (VisMode::All, 0)
        } else if waiting.contains(&c.key) {
            (VisMode::Waiting, 0)
        } else {
            match (self.vis.get(&c.key), region.vis_base.get(&slot)) {
                (Some(GpuVis::All), _) => (VisMode::All, 0),
                (Some(GpuVis::Bits(_)), Some(&base)) => (VisMode::Lookup, base),
                (Some(GpuVis::Bits(_)), None) => (VisMode::Hidden, 0),
                (None, _) if self.vis_rest_visible => (VisMode::All, 0),
                (None, _) => (VisMode::Hidden, 0),
            }
        };
        let flags = i32::from(pending.contains(&c.key)) + 2 * mode as i32;
        [x as f32, y as f32, flags as f32, base as f32]
    }

    /// Writes the visibility textures of the regions of the level whose data changed.
    fn update_vis(&mut self, level: usize) {
        let dirty: Vec<RegionKey> = self.vis_dirty.iter().filter(|r| r.level == level).copied().collect();
        for rk in dirty {
            self.vis_dirty.remove(&rk);
            let Some(region) = self.regions.get_mut(&rk) else { continue };
            let bits: BTreeMap<u32, &[u8]> = region
                .chunks
                .values()
                .filter_map(|c| match self.vis.get(&c.key) {
                    Some(GpuVis::Bits(b)) => Some((region_of(c.key).1, b.as_slice())),
                    _ => None,
                })
                .collect();
            if let Err(e) = region.set_vis(&self.ctx, &bits) {
                self.error = Some(e.to_string());
            }
        }
    }

    /// The sky gradient over the whole viewport (no depth writes).
    fn draw_sky(&self, sky: &SkyColors, view_proj: Mat4, viewport: TdViewport) {
        let p = &self.sky_program;
        let v3 = |c: [f32; 3]| three_d::vec3(c[0], c[1], c[2]);
        p.use_uniform_if_required("u_inv_vp", td_mat(view_proj.inverse()));
        p.use_uniform_if_required("u_bottom", v3(sky.bottom));
        p.use_uniform_if_required("u_side", v3(sky.side));
        p.use_uniform_if_required("u_top", v3(sky.top));
        p.use_vertex_attribute("a_corner", &self.sky_corners);
        let states = RenderStates {
            cull: Cull::None,
            depth_test: DepthTest::Always,
            write_mask: WriteMask::COLOR,
            blend: Blend::Disabled,
        };
        p.draw_arrays(states, viewport, 3);
    }

    /// Draws a frame into the current framebuffer region (`viewport`, `scissor` in GL pixels).
    pub fn paint(&mut self, painter: &egui_glow::Painter, viewport: TdViewport, scissor: ScissorBox, f: &FrameParams) {
        let started = Instant::now();
        gl_state::before(&self.ctx);
        self.upload();
        self.paint_time.uploads += started.elapsed();
        self.update_materials(f);
        let (w, h) = (viewport.width.max(1), viewport.height.max(1));
        let target = match painter.intermediate_fbo() {
            Some(fbo) => RenderTarget::from_framebuffer(&self.ctx, w, h, fbo),
            None => RenderTarget::screen(&self.ctx, w, h),
        };
        let c = f.clear_color;
        target.clear_partially(scissor, ClearState::color_and_depth(c[0], c[1], c[2], 1.0, 1.0));
        self.ctx.set_scissor(scissor);
        if let Some(sky) = &f.sky {
            self.draw_sky(sky, f.view_proj, viewport);
        }

        let vp = td_mat(f.view_proj);
        let key = MeshKey::of(f);
        if let std::collections::hash_map::Entry::Vacant(e) = self.mesh_programs.entry(key) {
            match Program::from_source(&self.ctx, &with_defines(MESH_VS), &key.fragment_source()) {
                Ok(p) => {
                    e.insert(p);
                }
                Err(err) => self.error = Some(format!("chunk shader for {key:?}: {err}")),
            }
        }
        if let Some(p) = self.mesh_programs.get(&key) {
            p.use_uniform_if_required("u_vp", vp);
            p.use_uniform_if_required("u_exposure", f.exposure);
            p.use_uniform_if_required("u_ambient", f.ambient);
            let clip = f.clip.map_or(f32::MAX, |y| (y - f.eye.y) as f32);
            p.use_uniform_if_required("u_clip", clip);
            let (lo, hi) = match f.filter {
                Some(b) => ((b.min - f.eye).as_vec3(), (b.max - f.eye).as_vec3()),
                None => (Vec3::ZERO, Vec3::ZERO),
            };
            p.use_uniform_if_required("u_box_min", three_d::vec3(lo.x, lo.y, lo.z));
            p.use_uniform_if_required("u_box_max", three_d::vec3(hi.x, hi.y, hi.z));
            p.use_uniform_if_required("u_tint", three_d::vec4(0.35, 0.55, 1.0, 0.18));
        }
        if f.shading == Shading::Visibility {
            self.update_vis(f.level);
        }
        let planes = frustum_planes(f.view_proj);
        let pending: std::collections::HashSet<ChunkKey> = f.pending.iter().copied().collect();
        let waiting: std::collections::HashSet<ChunkKey> = f.waiting.iter().copied().collect();
        // Per region of the level in view: its visible chunks (slot, distance² from the eye).
        let mut stats = DrawStats::default();
        let mut in_view: Vec<(RegionKey, Vec<(u32, f32)>)> = Vec::new();
        let keys: Vec<RegionKey> = self.regions.range(level_regions(f.level)).map(|(k, _)| *k).collect();
        for rk in keys {
            let region = &self.regions[&rk];
            let offset = (region.origin - f.eye).as_vec3();
            let drawn = region.chunks.values().filter(|c| c.sphere.1 > 0.0).count();
            if drawn == 0 {
                continue;
            }
            if !sphere_in_view(&planes, offset + region.sphere.0, region.sphere.1, f.view_distance) {
                stats.culled += drawn;
                continue;
            }
            let mut visible = Vec::new();
            for (&slot, c) in &region.chunks {
                if c.sphere.1 <= 0.0 {
                    continue;
                }
                let centre = offset + c.sphere.0;
                if sphere_in_view(&planes, centre, c.sphere.1, f.view_distance) {
                    visible.push((slot, centre.length_squared()));
                } else {
                    stats.culled += 1;
                }
            }
            // The table changes with the pending set and the visibility view only.
            let mut texels = vec![[0.0f32; 4]; super::gpu_mesh::REGION_SLOTS as usize];
            for (&slot, c) in &region.chunks {
                texels[slot as usize] = self.table_texel(region, c, f, &pending, &waiting);
            }
            self.regions.get_mut(&rk).expect("listed").update_table(&self.ctx, texels);
            if !visible.is_empty() {
                stats.chunks += visible.len();
                in_view.push((rk, visible));
            }
        }
        let opaque = RenderStates {
            cull: Cull::Back,
            depth_test: DepthTest::LessOrEqual,
            write_mask: WriteMask::COLOR_AND_DEPTH,
            blend: Blend::Disabled,
        };
        let blended = RenderStates {
            cull: if f.shading == Shading::Wireframe { Cull::None } else { Cull::Back },
            depth_test: DepthTest::LessOrEqual,
            write_mask: WriteMask::COLOR,
            blend: Blend::TRANSPARENCY,
        };
        let added = RenderStates { blend: Blend::ADD, ..blended };
        if let Some(t) = &mut self.gpu_timer
            && let Some(d) = t.poll(&self.ctx)
        {
            self.paint_time.gpu_chunks = Some(d);
        }
        let timed = self.gpu_timer.as_mut().is_some_and(|t| t.begin(&self.ctx));
        // Opaque near first (hidden fragments fail the depth test before shading), regions by
        // their nearest chunk; transparent far to near, regions by their farthest chunk (blending
        // is ordered within a region, and between regions by that order); additive in any order
        // (a sum).
        let nearest = |v: &[(u32, f32)]| v.iter().map(|c| c.1).fold(f32::INFINITY, f32::min);
        let farthest = |v: &[(u32, f32)]| v.iter().map(|c| c.1).fold(0.0, f32::max);
        for (k, states) in [(0usize, opaque), (1, blended), (2, added)] {
            let mut order: Vec<&(RegionKey, Vec<(u32, f32)>)> = in_view.iter().collect();
            match k {
                0 => order.sort_by(|a, b| nearest(&a.1).total_cmp(&nearest(&b.1))),
                1 => order.sort_by(|a, b| farthest(&b.1).total_cmp(&farthest(&a.1))),
                _ => {}
            }
            for (rk, visible) in order {
                let region = &self.regions[rk];
                let mut chunks = visible.clone();
                match k {
                    0 => chunks.sort_by(|a, b| a.1.total_cmp(&b.1)),
                    1 => chunks.sort_by(|a, b| b.1.total_cmp(&a.1)),
                    _ => {}
                }
                let eye = (f.eye - region.origin).as_vec3();
                let mut list = DrawList::default();
                for (slot, _) in chunks {
                    let c = &region.chunks[&slot];
                    let Some(part) = &c.parts[k] else { continue };
                    for (first, count) in facing_runs(&part.facing_starts, eye, c.bounds.0, c.bounds.1) {
                        list.push(part, first, count);
                    }
                }
                if list.is_empty() {
                    continue;
                }
                // Without the multi-draw entry point each run is a call of its own.
                stats.draws += if self.multi_draw.is_some() { 1 } else { list.counts.len() };
                stats.runs += list.counts.len();
                stats.indices += list.indices();
                if let Some(p) = self.mesh_programs.get(&key) {
                    self.draw_region(p, region, k, &list, states, viewport, f.eye);
                }
            }
        }

        if timed && let Some(t) = &self.gpu_timer {
            t.end(&self.ctx);
        }
        self.stats = stats;
        self.draw_fills(f, vp, viewport);
        self.draw_lines(f, vp, viewport);
        // Hand egui's framebuffer back (three-d would delete one it owns).
        let _ = target.into_framebuffer();
        gl_state::after(&self.ctx);
        self.paint_time.paints += 1;
        self.paint_time.last = started.elapsed();
        self.paint_time.total += self.paint_time.last;
    }

    fn draw_fills(&self, f: &FrameParams, vp: three_d::Mat4, viewport: TdViewport) {
        if f.fills.is_empty() {
            return;
        }
        let mut pos = Vec::with_capacity(f.fills.len() * 3);
        let mut col = Vec::with_capacity(f.fills.len() * 3);
        for t in &f.fills {
            for p in t.p {
                pos.push((p - f.eye).as_vec3().to_array());
                col.push(t.color);
            }
        }
        let p = &self.fill_program;
        let pb = VertexBuffer::new_with_data(&self.ctx, &pos);
        let cb = VertexBuffer::new_with_data(&self.ctx, &col);
        p.use_uniform_if_required("u_vp", vp);
        p.use_uniform_if_required("u_alpha", 1.0f32);
        p.use_vertex_attribute("a_pos", &pb);
        p.use_vertex_attribute("a_color", &cb);
        let states = RenderStates {
            cull: Cull::None,
            depth_test: DepthTest::LessOrEqual,
            write_mask: WriteMask::COLOR,
            blend: Blend::TRANSPARENCY,
        };
        p.draw_arrays(states, viewport, pos.len() as u32);
    }

    /// The overlay lines: first the hidden parts of the segments with an x-ray opacity (depth
    /// test "greater", alpha × [`Segment::xray`]), then every segment where it is visible.
    fn draw_lines(&self, f: &FrameParams, vp: three_d::Mat4, viewport: TdViewport) {
        let hidden = LineVertices::new(f, |s| (s.xray > 0.0).then_some(s.xray));
        let visible = LineVertices::new(f, |_| Some(1.0));
        let p = &self.line_program;
        p.use_uniform_if_required("u_vp", vp);
        p.use_uniform_if_required("u_viewport", three_d::vec2(viewport.width as f32, viewport.height as f32));
        p.use_uniform_if_required("u_width", 2.0f32);
        p.use_uniform_if_required("u_alpha", 1.0f32);
        for (lines, depth_test) in [(hidden, DepthTest::Greater), (visible, DepthTest::LessOrEqual)] {
            if lines.pos.is_empty() {
                continue;
            }
            // The buffers must outlive the draw (dropping one deletes it).
            let pb = VertexBuffer::new_with_data(&self.ctx, &lines.pos);
            let ob = VertexBuffer::new_with_data(&self.ctx, &lines.other);
            let sb = VertexBuffer::new_with_data(&self.ctx, &lines.side);
            let cb = VertexBuffer::new_with_data(&self.ctx, &lines.color);
            p.use_vertex_attribute("a_pos", &pb);
            p.use_vertex_attribute("a_other", &ob);
            p.use_vertex_attribute("a_side", &sb);
            p.use_vertex_attribute("a_color", &cb);
            let states =
                RenderStates { cull: Cull::None, depth_test, write_mask: WriteMask::COLOR, blend: Blend::TRANSPARENCY };
            p.draw_arrays(states, viewport, lines.pos.len() as u32);
        }
    }
}

/// Vertices of overlay lines as screen-space quads (two triangles per segment), camera-relative
/// and clipped at the near plane.
#[derive(Debug, Default)]
struct LineVertices {
    pos: Vec<[f32; 3]>,
    /// The segment's other end (the vertex shader widens the line across it).
    other: Vec<[f32; 3]>,
    /// Which side of the line the vertex goes to.
    side: Vec<f32>,
    color: Vec<[f32; 4]>,
}

impl LineVertices {
    /// The segments of `f` for which `alpha` gives an opacity factor, with their colour's alpha
    /// multiplied by it.
    fn new(f: &FrameParams, alpha: impl Fn(&Segment) -> Option<f32>) -> Self {
        let near = super::camera::NEAR as f64 * 2.0;
        let mut out = Self::default();
        for s in &f.segments {
            let Some(factor) = alpha(s) else { continue };
            let (mut a, mut b) = (s.a - f.eye, s.b - f.eye);
            let (da, db) = (a.dot(f.forward), b.dot(f.forward));
            if da < near && db < near {
                continue;
            }
            if da < near {
                a = a + (b - a) * ((near - da) / (db - da));
            } else if db < near {
                b = b + (a - b) * ((near - db) / (da - db));
            }
            let (a, b) = (a.as_vec3().to_array(), b.as_vec3().to_array());
            let [r, g, bl, al] = s.color;
            for (p, o, sd) in [(a, b, 1.0f32), (a, b, -1.0), (b, a, -1.0), (a, b, -1.0), (b, a, 1.0), (b, a, -1.0)] {
                out.pos.push(p);
                out.other.push(o);
                out.side.push(sd);
                out.color.push([r, g, bl, al * factor]);
            }
        }
        out
    }
}

/// The raw GL state changes three-d does not cover.
mod gl_state {
    use eframe::egui_glow::glow::{self, HasContext};

    /// egui's framebuffer may be sRGB-encoding; our shaders write display values.
    #[allow(unsafe_code)] // glow calls are unsafe; these two only toggle fixed-function state.
    pub fn before(gl: &glow::Context) {
        // SAFETY: plain state toggles on the current context, called from the paint callback.
        unsafe {
            gl.disable(glow::FRAMEBUFFER_SRGB);
        }
    }

    /// Binds a texture of ours to texture unit `unit`.
    #[allow(unsafe_code)] // glow calls are unsafe; a plain binding.
    pub fn bind_texture(gl: &glow::Context, unit: u32, texture: glow::Texture) {
        // SAFETY: a texture this renderer created, bound on the current context.
        unsafe {
            gl.active_texture(glow::TEXTURE0 + unit);
            gl.bind_texture(glow::TEXTURE_2D, Some(texture));
        }
    }

    /// Leaves what egui expects: texture unit 0, depth test off, depth writes on, no culling.
    #[allow(unsafe_code)] // glow calls are unsafe; state resets only.
    pub fn after(gl: &glow::Context) {
        // SAFETY: plain state resets on the current context, called from the paint callback.
        unsafe {
            gl.active_texture(glow::TEXTURE0);
            gl.disable(glow::DEPTH_TEST);
            gl.disable(glow::CULL_FACE);
            gl.depth_mask(true);
            gl.color_mask(true, true, true, true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn water() -> MaterialFx {
        MaterialFx {
            frames: vec!["w0".into(), "w1".into(), "w2".into()],
            frame_us: 125_000,
            scroll: [0.25, -0.5],
            emission: [0.0; 3],
        }
    }

    #[test]
    fn texture_frames_and_uv_scroll_follow_the_clock() {
        let w = water();
        assert!(w.animated());
        let frames: Vec<usize> = [0.0, 0.124, 0.125, 0.3, 0.375, 1.0].map(|t| w.frame_at(t)).to_vec();
        assert_eq!(frames, [0, 0, 1, 2, 0, 2]);
        assert_eq!(w.scroll_at(1.0), [0.25, 0.5], "wrapped into [0, 1)");
        assert_eq!(w.scroll_at(4.0), [0.0, 0.0]);
        // No frame time or one frame: no animation; no scroll either: still.
        let still = MaterialFx { frame_us: 0, scroll: [0.0; 2], ..water() };
        assert!(!still.animated());
        assert_eq!(still.frame_at(0.3), 0);
        let single = MaterialFx { frames: vec!["w0".into()], scroll: [0.0; 2], ..water() };
        assert!(!single.animated());
    }

    #[test]
    fn the_material_table_puts_each_material_at_its_row() {
        let lava = MaterialFx { frames: vec!["lava".into()], emission: [1.0, 0.5, 0.0], ..MaterialFx::default() };
        let mut materials = vec![MaterialFx::default(); 300];
        materials[0] = water();
        materials[299] = lava;
        let layers = ["", "w0", "w1", "w2", "lava"];
        let layer = |r: &str| layers.iter().position(|l| *l == r).unwrap();
        let texels = fx_texels(&materials, 0.3, layer);
        // 301 rows (row 0: unknown materials): two texel rows of 256 materials.
        assert_eq!(texels.len(), 2 * FX_PER_ROW * 2);
        // Row 0 draws layer 0 (white), no scroll, no emission.
        assert_eq!(texels[0..2], [[0.0; 4]; 2]);
        // Row 1 (material 0): frame 2 at 0.3 s → layer 3; scroll at 0.3 s.
        let [u, v] = water().scroll_at(0.3);
        assert_eq!(texels[2], [3.0, u, v, 0.0]);
        // Row 300 (material 299) sits at (44, 1) of the table.
        let at = 2 * (FX_PER_ROW + 300 - FX_PER_ROW);
        assert_eq!(texels[at], [4.0, 0.0, 0.0, 0.0]);
        assert_eq!(texels[at + 1], [1.0, 0.5, 0.0, 0.0]);
    }

    #[test]
    fn layers_are_resized_to_the_largest_texture() {
        let img =
            |w: u32, h: u32| TextureImage { width: w, height: h, rgba: vec![[10, 20, 30, 255]; (w * h) as usize] };
        let images = vec![Some(img(64, 64)), None, Some(img(100, 20))];
        assert_eq!(layer_edge(&images), 128);
        assert_eq!(layer_edge(&[]), 1);
        assert_eq!(layer_edge(&[Some(img(4096, 8))]), MAX_LAYER_EDGE);
        let resized = layer_pixels(images[2].as_ref(), 128);
        assert_eq!(resized.len(), 128 * 128);
        assert!(resized.iter().all(|p| *p == [10, 20, 30, 255]));
        // Missing or broken: white.
        let broken = TextureImage { width: 4, height: 4, rgba: vec![[0; 4]; 3] };
        assert!(layer_pixels(Some(&broken), 8).iter().all(|p| *p == [255; 4]));
        assert!(layer_pixels(None, 2).iter().all(|p| *p == [255; 4]));
    }

    #[test]
    fn the_view_distance_drops_spheres_wholly_beyond_it() {
        let cam = super::super::camera::Camera::default();
        let planes = frustum_planes(cam.projection(1.5) * cam.view());
        let ahead = |d: f32| cam.forward().as_vec3() * d;
        assert!(sphere_in_view(&planes, ahead(500.0), 8.0, 0.0), "no limit");
        assert!(sphere_in_view(&planes, ahead(500.0), 8.0, 495.0), "partly within");
        assert!(!sphere_in_view(&planes, ahead(500.0), 8.0, 490.0));
        assert!(!sphere_in_view(&planes, -ahead(50.0), 8.0, 0.0), "behind the camera");
    }

    /// Every `u_mode` / `v_vis` comparison in `source`: the token compared with.
    fn compared_with(source: &str, uniform: &str) -> Vec<String> {
        let mut out = Vec::new();
        for (i, _) in source.match_indices(uniform) {
            let rest = &source[i + uniform.len()..];
            if rest.starts_with(|c: char| c.is_alphanumeric() || c == '_') {
                continue; // v_vis_base
            }
            let rest = rest.trim_start();
            let Some(rest) = rest.strip_prefix("==").or_else(|| rest.strip_prefix("!=")) else { continue };
            let token: String = rest.trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            out.push(token);
        }
        out
    }

    #[test]
    fn shading_modes_are_named_constants_shared_with_the_shaders() {
        let defines = glsl_defines();
        let names: std::collections::HashSet<&str> = Shading::ALL.iter().map(|s| s.glsl_name()).collect();
        let values: std::collections::HashSet<i32> = Shading::ALL.iter().map(|s| s.index()).collect();
        assert_eq!((names.len(), values.len()), (Shading::ALL.len(), Shading::ALL.len()), "distinct");
        for s in Shading::ALL {
            assert!(defines.contains(&format!("#define {} {}\n", s.glsl_name(), s.index())), "{defines}");
        }
        for (mode, name) in VisMode::GLSL {
            assert!(defines.contains(&format!("#define {name} {}\n", mode as i32)), "{defines}");
        }
        // The mesh shader names every shading, and no mode is ever a bare number.
        let modes = compared_with(MESH_FS, "u_mode");
        for s in Shading::ALL {
            assert!(modes.iter().any(|m| m == s.glsl_name()), "{} not used: {modes:?}", s.glsl_name());
        }
        let vis = compared_with(MESH_FS, "v_vis");
        assert!(!vis.is_empty());
        let vis_names: Vec<&str> = VisMode::GLSL.iter().map(|(_, n)| *n).collect();
        for token in modes.iter().chain(&vis) {
            assert!(names.contains(token.as_str()) || vis_names.contains(&token.as_str()), "bare mode {token}");
        }
        for source in [MESH_VS, LINE_VS, FLAT_FS, FILL_VS, SKY_VS, SKY_FS] {
            assert!(compared_with(source, "u_mode").is_empty() && !source.contains("#version"));
        }
        assert!(with_defines(MESH_FS).starts_with("#define SHADING_LIT 0\n"));
    }

    /// Every key the renderer can meet.
    fn all_mesh_keys() -> Vec<MeshKey> {
        let mut keys = Vec::new();
        for shading in Shading::ALL {
            for textured in [false, true] {
                for edges in [false, true] {
                    for box_mode in 0..3 {
                        for clipped in [false, true] {
                            keys.push(MeshKey { shading, textured, edges, box_mode, clipped });
                        }
                    }
                }
            }
        }
        keys
    }

    #[test]
    fn each_chunk_program_declares_the_view_constants_once_and_by_name() {
        const NAMES: [&str; 5] = ["u_mode", "u_textured", "u_edges", "u_box_mode", "u_clipped"];
        for name in NAMES {
            // A uniform of the same name would clash with the constant (a compile error that only a
            // GL context would show); one the shader never reads would compile programs for nothing.
            assert!(!MESH_FS.contains(&format!("uniform int {name};")), "{name} declared as a uniform");
            assert!(MESH_FS.matches(name).count() > 1, "{name} not read by chunk.frag");
        }
        let mut sources = std::collections::HashSet::new();
        for key in all_mesh_keys() {
            let source = key.fragment_source();
            for name in NAMES {
                assert_eq!(source.matches(&format!("const int {name} = ")).count(), 1, "{key:?}: {name}");
            }
            // The shading by its name (glsl_defines comes first and defines it), never a number.
            assert!(source.contains(&format!("const int u_mode = {};\n", key.shading.glsl_name())), "{key:?}");
            assert!(source.find("#define SHADING_LIT").unwrap() < source.find("const int u_mode").unwrap());
            assert!(source.contains(&format!("const int u_box_mode = {};\n", key.box_mode)));
            assert!(source.contains(&format!("const int u_textured = {};\n", i32::from(key.textured))));
            assert!(source.contains(&format!("const int u_edges = {};\n", i32::from(key.edges))));
            assert!(source.contains(&format!("const int u_clipped = {};\n", i32::from(key.clipped))));
            assert!(sources.insert(source), "{key:?}: the same program as another key");
        }
        assert!(all_mesh_keys().contains(&DEFAULT_MESH_KEY));
    }

    #[test]
    fn the_chunk_program_follows_the_view_settings() {
        let f = FrameParams { shading: Shading::Lit, textured: true, edges: true, ..FrameParams::default() };
        assert_eq!(MeshKey::of(&f), DEFAULT_MESH_KEY, "the editor's default view is compiled up front");
        // Textures only where the view draws them.
        for (shading, textured) in [
            (Shading::Lit, true),
            (Shading::Fullbright, true),
            (Shading::Visibility, true),
            (Shading::Wireframe, false),
            (Shading::Lightmap, false),
        ] {
            let k = MeshKey::of(&FrameParams { shading, ..f.clone() });
            assert_eq!((k.shading, k.textured), (shading, textured));
            assert!(!MeshKey::of(&FrameParams { shading, textured: false, ..f.clone() }).textured);
        }
        assert!(!MeshKey::of(&FrameParams { edges: false, ..f.clone() }).edges);
        let filter = |isolate| Some(super::super::ShowFilter { min: DVec3::ZERO, max: DVec3::ONE, isolate });
        assert_eq!(MeshKey::of(&FrameParams { filter: filter(true), ..f.clone() }).box_mode, 1);
        assert_eq!(MeshKey::of(&FrameParams { filter: filter(false), ..f.clone() }).box_mode, 2);
        assert_eq!(MeshKey::of(&f).box_mode, 0);
        // The clip plane's discard is compiled in only with a plane (else early depth tests).
        assert!(MeshKey::of(&FrameParams { clip: Some(2.0), ..f.clone() }).clipped);
        assert!(!MeshKey::of(&f).clipped);
        assert!(MESH_FS.contains("if (u_clipped != 0 && v_rel.y > u_clip) {\n        discard;"));
    }

    #[test]
    fn packed_vertex_attributes_tile_the_stride_and_match_the_shader() {
        use super::super::gpu_mesh::{Component, VERTEX_ATTRIBUTES, VERTEX_STRIDE};
        let mut at = 0;
        for (i, a) in VERTEX_ATTRIBUTES.iter().enumerate() {
            assert_eq!((a.offset as usize, a.location as usize), (at, i));
            let bytes = match a.component {
                Component::U8Normalized => 1,
                Component::F32 | Component::U32 => 4,
            };
            at += a.components as usize * bytes;
            let decl = format!("layout(location = {}) in ", a.location);
            let line = MESH_VS.lines().find(|l| l.starts_with(&decl)).unwrap_or_default();
            assert!(line.ends_with(&format!(" {};", a.name)), "chunk.vert: {} at location {}", a.name, a.location);
        }
        assert_eq!(at, VERTEX_STRIDE);
        assert!(glsl_defines().contains(&format!("#define TABLE_EDGE {}\n", super::super::regions::TABLE_EDGE)));
    }

    #[test]
    fn frustum_keeps_what_is_in_front() {
        let cam = super::super::camera::Camera::default();
        let vp = cam.projection(1.5) * cam.view();
        let planes = frustum_planes(vp);
        let ahead = (cam.forward() * 10.0).as_vec3().extend(1.0);
        let behind = (-cam.forward() * 10.0).as_vec3().extend(1.0);
        assert!(planes.iter().all(|p| p.dot(ahead) >= 0.0));
        assert!(planes.iter().any(|p| p.dot(behind) < -1.0));
    }
}
