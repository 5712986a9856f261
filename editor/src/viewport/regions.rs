//! The GPU side of the chunk regions ([`super::gpu_mesh`]): per region and pass one shared
//! vertex buffer, one index buffer and one vertex array object; per region one lightmap atlas
//! texture, one chunk table and one visibility texture. [`super::render`] culls, orders and
//! draws them, one `glMultiDrawElementsBaseVertex` per region and pass.
//!
//! - **Sub-allocated, updated in place**: a chunk's vertices, indices and lightmap atlas take
//!   ranges of its region's buffers and atlas ([`super::arena`]); a re-baked chunk rewrites only
//!   its own ranges (`glBufferSubData`, `glTexSubImage2D`). An open sizes each region's opaque
//!   buffers once for the chunks on their way ([`Region::reserve`]); a buffer that runs out of
//!   room is replaced by one twice as large, the old contents copied on the GPU; an atlas that runs out
//!   of room is made larger and every atlas of the region written again (from the copies kept
//!   here).
//! - **Chunk table**: one RGBA32F texel per slot ([`TABLE_EDGE`]² slots): the chunk's lightmap
//!   corner in the region atlas (texels), flags (pending tint, visibility mode) and where its
//!   cubes start in the region's visibility texture. The vertex shader reads it once per vertex
//!   at the vertex's slot; it is written again only when it changed.
//! - Every GL call here runs in the paint callback, with the context current.

use std::collections::BTreeMap;
use std::ffi::c_void;

use eframe::egui_glow::glow::{self, HasContext};
use glam::{DVec3, Vec3};

use pmfedit_bake::deps::ChunkKey;

use super::arena::{Arena, Shelves};
use super::gpu_mesh::{Component, GpuMesh, GpuPass, REGION_SLOTS, VERTEX_ATTRIBUTES, VERTEX_STRIDE};
use super::mesh::Atlas;

/// `glMultiDrawElementsBaseVertex` (GL 3.2), loaded by name: glow does not wrap it.
pub type MultiDrawFn = unsafe extern "system" fn(
    mode: u32,
    count: *const i32,
    element_type: u32,
    indices: *const *const c_void,
    draw_count: i32,
    base_vertex: *const i32,
);

/// Looks `glMultiDrawElementsBaseVertex` up with the context's loader (`None`: the context lacks
/// it; regions are then drawn one run per call).
#[allow(unsafe_code)] // a function pointer from the GL loader, typed by the GL specification.
pub fn load_multi_draw(get_proc_address: &dyn Fn(&std::ffi::CStr) -> *const c_void) -> Option<MultiDrawFn> {
    let p = get_proc_address(c"glMultiDrawElementsBaseVertex");
    if p.is_null() {
        return None;
    }
    // SAFETY: the loader returned the entry point of this name, whose C signature (GL 3.2:
    // `void (GLenum, const GLsizei *, GLenum, const void *const *, GLsizei, const GLint *)`)
    // `MultiDrawFn` spells out.
    Some(unsafe { std::mem::transmute::<*const c_void, MultiDrawFn>(p) })
}

/// Texels along each side of a chunk table.
pub const TABLE_EDGE: u32 = 64;
const _: () = assert!(TABLE_EDGE * TABLE_EDGE == REGION_SLOTS);

/// Texels per row of a visibility texture (a power of two: rows stay 4-byte aligned).
pub const VIS_WIDTH: u32 = 2048;

/// Width of a new lightmap atlas, texels.
const ATLAS_WIDTH: u32 = 1024;
/// Height of a new lightmap atlas, texels (it doubles as needed).
const ATLAS_HEIGHT: u32 = 256;

/// Where one pass of a chunk lies in its region's buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part {
    pub first_vertex: u32,
    pub vertices: u32,
    pub first_index: u32,
    pub indices: u32,
    /// [`super::mesh::TriList::facing_starts`] (chunk-local indices).
    pub facing_starts: [u32; 8],
}

/// One chunk of a region.
#[derive(Debug, Clone)]
pub struct RegionChunk {
    pub key: ChunkKey,
    /// Opaque, transparent, additive.
    pub parts: [Option<Part>; 3],
    /// Bounds of the vertices relative to the region origin.
    pub bounds: (Vec3, Vec3),
    /// Bounding sphere (centre relative to the region origin, radius; 0 for an empty chunk).
    pub sphere: (Vec3, f32),
    /// The atlas (kept to write it again when the region atlas grows) and its corner there
    /// (`None`: it did not fit; drawn with the white texel at the corner).
    atlas: Atlas,
    lightmap_at: Option<(u32, u32)>,
}

impl RegionChunk {
    /// The chunk's lightmap corner in the region atlas.
    pub fn lightmap_at(&self) -> (u32, u32) {
        self.lightmap_at.unwrap_or((0, 0))
    }
}

/// One pass's shared buffers.
#[derive(Default)]
struct PassBuffers {
    /// `None` until the first chunk with triangles in this pass arrives.
    gl: Option<PassGl>,
    vertices: Arena,
    indices: Arena,
}

struct PassGl {
    vao: glow::VertexArray,
    vbo: glow::Buffer,
    ebo: glow::Buffer,
}

/// The lightmap atlas of a region.
struct Lightmaps {
    texture: glow::Texture,
    shelves: Shelves,
}

/// Multi-draw arguments of one region and pass: per draw its index count, first index (bytes)
/// and base vertex.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DrawList {
    pub counts: Vec<i32>,
    pub offsets: Vec<usize>,
    pub base_vertices: Vec<i32>,
}

impl DrawList {
    /// Adds a chunk's index run `first..first + count` (chunk-local) of `part`.
    pub fn push(&mut self, part: &Part, first: u32, count: u32) {
        self.counts.push(count as i32);
        self.offsets.push((part.first_index + first) as usize * 4);
        self.base_vertices.push(part.first_vertex as i32);
    }

    /// Whether there is nothing to draw.
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// Indices in all.
    pub fn indices(&self) -> usize {
        self.counts.iter().map(|&c| c as usize).sum()
    }
}

/// Bytes of the regions' GPU resources ([`Region::bytes`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GpuBytes {
    /// Vertex and index buffers, as allocated.
    pub buffers: u64,
    /// Of which holding chunks' vertices and indices.
    pub buffers_used: u64,
    /// Lightmap atlas textures (3 bytes a texel; a driver may pad them to 4).
    pub atlases: u64,
    /// The copies of the chunks' atlases kept to place them again when an atlas grows.
    pub atlas_copies: u64,
}

impl std::ops::AddAssign for GpuBytes {
    fn add_assign(&mut self, o: Self) {
        self.buffers += o.buffers;
        self.buffers_used += o.buffers_used;
        self.atlases += o.atlases;
        self.atlas_copies += o.atlas_copies;
    }
}

/// One region's GPU resources and chunks (see the module docs).
pub struct Region {
    /// World position of the region origin (its first chunk's centre).
    pub origin: DVec3,
    pub chunks: BTreeMap<u32, RegionChunk>,
    passes: [PassBuffers; 3],
    lightmaps: Lightmaps,
    table: glow::Texture,
    /// What `table` holds.
    table_texels: Vec<[f32; 4]>,
    vis: glow::Texture,
    /// Where each slot's cubes start in `vis`.
    pub vis_base: BTreeMap<u32, u32>,
    /// Bounding sphere of all chunks (relative to the origin; radius 0 when empty).
    pub sphere: (Vec3, f32),
    /// The box [`Self::sphere`] is made from: the union of the drawn chunks' bounds.
    bounds: Option<(Vec3, Vec3)>,
    max_texture: u32,
}

/// The sphere around a box (radius 0 for none).
fn sphere_of(bounds: Option<(Vec3, Vec3)>) -> (Vec3, f32) {
    bounds.map_or((Vec3::ZERO, 0.0), |(lo, hi)| ((lo + hi) * 0.5, (hi - lo).length() * 0.5))
}

/// Why a GL call failed.
#[derive(Debug, thiserror::Error)]
#[error("OpenGL: {0}")]
pub struct GlError(String);

/// Sets the unpack state our uploads assume (tight rows).
#[allow(unsafe_code)] // glow calls are unsafe; pixel store state only.
fn unpack_tight(gl: &glow::Context) {
    // SAFETY: plain state on the current context.
    unsafe {
        gl.pixel_store_i32(glow::UNPACK_ALIGNMENT, 1);
        gl.pixel_store_i32(glow::UNPACK_ROW_LENGTH, 0);
    }
}

/// A nearest-filtered, clamped 2D texture of `width` × `height` (`internal`, `format`, `ty`),
/// zero-filled.
#[allow(unsafe_code)] // glow calls are unsafe; texture creation with sizes checked here.
fn new_texture(
    gl: &glow::Context,
    (width, height): (u32, u32),
    (internal, format, ty): (u32, u32, u32),
    filter: u32,
    texel_bytes: usize,
) -> Result<glow::Texture, GlError> {
    let zeros = vec![0u8; width as usize * height as usize * texel_bytes];
    // SAFETY: the data holds exactly width × height texels of the format with tight rows
    // (`unpack_tight`); the texture is new.
    unsafe {
        let t = gl.create_texture().map_err(GlError)?;
        gl.bind_texture(glow::TEXTURE_2D, Some(t));
        unpack_tight(gl);
        gl.tex_image_2d(
            glow::TEXTURE_2D,
            0,
            internal as i32,
            width as i32,
            height as i32,
            0,
            format,
            ty,
            glow::PixelUnpackData::Slice(Some(&zeros)),
        );
        for (p, v) in [
            (glow::TEXTURE_MIN_FILTER, filter),
            (glow::TEXTURE_MAG_FILTER, filter),
            (glow::TEXTURE_WRAP_S, glow::CLAMP_TO_EDGE),
            (glow::TEXTURE_WRAP_T, glow::CLAMP_TO_EDGE),
        ] {
            gl.tex_parameter_i32(glow::TEXTURE_2D, p, v as i32);
        }
        gl.bind_texture(glow::TEXTURE_2D, None);
        Ok(t)
    }
}

/// Writes `data` (tight rows of `format`/`ty`) into `texture` at `(x, y)`.
#[allow(unsafe_code)] // glow calls are unsafe; the rectangle is checked against the data.
fn write_texture(
    gl: &glow::Context,
    texture: glow::Texture,
    (x, y, w, h): (u32, u32, u32, u32),
    (format, ty): (u32, u32),
    data: &[u8],
) {
    debug_assert!(w > 0 && h > 0 && data.len().is_multiple_of((w * h) as usize));
    // SAFETY: `data` holds w × h texels with tight rows; the caller keeps the rectangle inside
    // the texture.
    unsafe {
        gl.bind_texture(glow::TEXTURE_2D, Some(texture));
        unpack_tight(gl);
        gl.tex_sub_image_2d(
            glow::TEXTURE_2D,
            0,
            x as i32,
            y as i32,
            w as i32,
            h as i32,
            format,
            ty,
            glow::PixelUnpackData::Slice(Some(data)),
        );
        gl.bind_texture(glow::TEXTURE_2D, None);
    }
}

fn f32_bytes(texels: &[[f32; 4]]) -> Vec<u8> {
    texels.iter().flatten().flat_map(|f| f.to_ne_bytes()).collect()
}

impl Region {
    /// An empty region at `origin`.
    #[allow(unsafe_code)] // glow calls are unsafe; one parameter query.
    pub fn new(gl: &glow::Context, origin: DVec3) -> Result<Self, GlError> {
        // SAFETY: a plain query on the current context.
        let max_texture = unsafe { gl.get_parameter_i32(glow::MAX_TEXTURE_SIZE) }.max(1024) as u32;
        let table =
            new_texture(gl, (TABLE_EDGE, TABLE_EDGE), (glow::RGBA32F, glow::RGBA, glow::FLOAT), glow::NEAREST, 16)?;
        let vis = new_texture(gl, (VIS_WIDTH, 1), (glow::R8, glow::RED, glow::UNSIGNED_BYTE), glow::NEAREST, 1)?;
        let mut region = Self {
            origin,
            chunks: BTreeMap::new(),
            passes: Default::default(),
            lightmaps: Lightmaps {
                texture: Self::atlas_texture(gl, ATLAS_WIDTH, ATLAS_HEIGHT)?,
                shelves: Shelves::new(ATLAS_WIDTH, ATLAS_HEIGHT),
            },
            table,
            table_texels: vec![[0.0; 4]; REGION_SLOTS as usize],
            vis,
            vis_base: BTreeMap::new(),
            sphere: (Vec3::ZERO, 0.0),
            bounds: None,
            max_texture,
        };
        region.place_white(gl);
        Ok(region)
    }

    fn atlas_texture(gl: &glow::Context, w: u32, h: u32) -> Result<glow::Texture, GlError> {
        new_texture(gl, (w, h), LIGHTMAP_FORMAT, glow::LINEAR, 3)
    }

    /// The white texel at (0, 0) of a new atlas: what a chunk whose atlas did not fit reads.
    fn place_white(&mut self, gl: &glow::Context) {
        let at = self.lightmaps.shelves.alloc(1, 1);
        debug_assert_eq!(at, Some((0, 0)));
        write_texture(gl, self.lightmaps.texture, (0, 0, 1, 1), (glow::RGB, glow::UNSIGNED_BYTE), &[255; 3]);
    }

    /// Frees every GL object.
    #[allow(unsafe_code)] // glow calls are unsafe; deleting objects this region created.
    pub fn destroy(self, gl: &glow::Context) {
        // SAFETY: the objects were created by this region on this context and are not used after.
        unsafe {
            for p in self.passes.into_iter().filter_map(|p| p.gl) {
                gl.delete_vertex_array(p.vao);
                gl.delete_buffer(p.vbo);
                gl.delete_buffer(p.ebo);
            }
            gl.delete_texture(self.lightmaps.texture);
            gl.delete_texture(self.table);
            gl.delete_texture(self.vis);
        }
    }

    /// What this region holds on the GPU (in RAM under software GL), for `--bench-frames`.
    pub fn bytes(&self) -> GpuBytes {
        let mut b = GpuBytes::default();
        for p in &self.passes {
            for (arena, unit) in [(&p.vertices, VERTEX_STRIDE as u64), (&p.indices, 4)] {
                b.buffers += u64::from(arena.capacity()) * unit;
                b.buffers_used += u64::from(arena.capacity() - arena.free_units()) * unit;
            }
        }
        let s = &self.lightmaps.shelves;
        b.atlases += u64::from(s.width()) * u64::from(s.height()) * 3;
        b.atlas_copies += self.chunks.values().map(|c| c.atlas.texels.len() as u64 * 3).sum::<u64>();
        b
    }

    /// The lightmap atlas, its size, the chunk table and the visibility texture, for binding.
    pub fn textures(&self) -> (glow::Texture, (u32, u32), glow::Texture, glow::Texture) {
        let s = &self.lightmaps.shelves;
        (self.lightmaps.texture, (s.width(), s.height()), self.table, self.vis)
    }

    /// Makes room in pass `k` for `vertices` and `indices` more than its chunks take now, each
    /// buffer grown at most once, to that plus an eighth (later edits' meshes that grow). The
    /// open announces each region's meshes before they arrive ([`super::render::Upload::Reserve`]):
    /// grown chunk by chunk instead, each buffer doubled a dozen times, and every time software
    /// GL zero-filled the new buffer (fresh pages) and copied the old one — a fifth of the open's
    /// CPU time on terrain(32,4,32) — and left up to half of it unused.
    pub fn reserve(&mut self, gl: &glow::Context, k: usize, vertices: u32, indices: u32) -> Result<(), GlError> {
        for (n, indices) in [(vertices, false), (indices, true)] {
            let pass = &mut self.passes[k];
            let arena = if indices { &pass.indices } else { &pass.vertices };
            let used = arena.capacity() - arena.free_units();
            let want = used.saturating_add(n);
            if n > 0 && want > arena.capacity() {
                let grown = want.saturating_add(want / 8).max(4096);
                Self::grow_buffer(gl, pass, indices, grown)?;
            }
        }
        Ok(())
    }

    /// Puts a chunk's mesh in (replacing its older one).
    pub fn set(&mut self, gl: &glow::Context, key: ChunkKey, mesh: GpuMesh) -> Result<(), GlError> {
        let old = self.chunks.remove(&mesh.slot);
        let mut parts = [None; 3];
        for (k, pass) in mesh.passes.iter().enumerate() {
            if let Some(p) = old.as_ref().and_then(|o| o.parts[k]) {
                self.passes[k].vertices.free(p.first_vertex, p.vertices);
                self.passes[k].indices.free(p.first_index, p.indices);
            }
            if !pass.is_empty() {
                parts[k] = Some(self.write_pass(gl, k, pass)?);
            }
        }
        if let Some(o) = &old
            && let Some(at) = o.lightmap_at
        {
            self.lightmaps.shelves.free(at, o.atlas.width, o.atlas.height);
        }
        let (bounds, sphere) = match mesh.bounds {
            Some((lo, hi)) => ((lo, hi), ((lo + hi) * 0.5, (hi - lo).length() * 0.5)),
            None => ((Vec3::ZERO, Vec3::ZERO), (Vec3::ZERO, 0.0)),
        };
        let mut chunk = RegionChunk { key, parts, bounds, sphere, atlas: mesh.atlas, lightmap_at: None };
        chunk.lightmap_at = self.place_atlas(gl, &chunk.atlas)?;
        let drawn = chunk.sphere.1 > 0.0;
        self.chunks.insert(mesh.slot, chunk);
        if old.is_some() {
            // The replaced chunk's bounds may have been the region's: measure again.
            self.update_sphere();
        } else if drawn {
            // A new chunk only widens the region's bounds (a whole load is one pass, not a
            // walk of the region per chunk).
            self.bounds = Some(self.bounds.map_or(bounds, |(l, h)| (l.min(bounds.0), h.max(bounds.1))));
            self.sphere = sphere_of(self.bounds);
        }
        debug_assert_eq!(self.bounds, self.drawn_bounds(), "the region's bounds are its drawn chunks'");
        Ok(())
    }

    /// Takes a chunk out; `true` when the region is then empty.
    pub fn remove(&mut self, slot: u32) -> bool {
        if let Some(o) = self.chunks.remove(&slot) {
            for (k, p) in o.parts.iter().enumerate() {
                if let Some(p) = p {
                    self.passes[k].vertices.free(p.first_vertex, p.vertices);
                    self.passes[k].indices.free(p.first_index, p.indices);
                }
            }
            if let Some(at) = o.lightmap_at {
                self.lightmaps.shelves.free(at, o.atlas.width, o.atlas.height);
            }
            self.update_sphere();
        }
        self.chunks.is_empty()
    }

    fn update_sphere(&mut self) {
        self.bounds = self.drawn_bounds();
        self.sphere = sphere_of(self.bounds);
    }

    /// The union of the drawn chunks' bounds.
    fn drawn_bounds(&self) -> Option<(Vec3, Vec3)> {
        let mut b: Option<(Vec3, Vec3)> = None;
        for c in self.chunks.values().filter(|c| c.sphere.1 > 0.0) {
            let (lo, hi) = c.bounds;
            b = Some(b.map_or((lo, hi), |(l, h)| (l.min(lo), h.max(hi))));
        }
        b
    }

    /// Copies one pass of a chunk into the pass's buffers (growing them when full).
    #[allow(unsafe_code)] // glow calls are unsafe; sub-data writes inside the allocated ranges.
    fn write_pass(&mut self, gl: &glow::Context, k: usize, pass: &GpuPass) -> Result<Part, GlError> {
        let (nv, ni) = (pass.vertex_count(), pass.indices.len() as u32);
        let first_vertex = self.alloc(gl, k, nv, false)?;
        let first_index = self.alloc(gl, k, ni, true)?;
        let Some(p) = &self.passes[k].gl else { unreachable!("alloc creates the buffers") };
        // SAFETY: the ranges were allocated inside the buffers' sizes (`alloc`); the buffers are
        // bound to ARRAY_BUFFER only for the writes (no vertex array's element binding changes).
        // The indices are read as their native-endian bytes (what GL takes): a `u32` slice is
        // `4 ×` its length of initialized bytes, and `u8` has no alignment to keep.
        unsafe {
            let indices = std::slice::from_raw_parts(pass.indices.as_ptr().cast::<u8>(), pass.indices.len() * 4);
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(p.vbo));
            gl.buffer_sub_data_u8_slice(glow::ARRAY_BUFFER, first_vertex as i32 * VERTEX_STRIDE as i32, &pass.vertices);
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(p.ebo));
            gl.buffer_sub_data_u8_slice(glow::ARRAY_BUFFER, first_index as i32 * 4, indices);
            gl.bind_buffer(glow::ARRAY_BUFFER, None);
        }
        Ok(Part { first_vertex, vertices: nv, first_index, indices: ni, facing_starts: pass.facing_starts })
    }

    /// A range of `n` vertices (or indices) in pass `k`'s buffer, growing it when full.
    fn alloc(&mut self, gl: &glow::Context, k: usize, n: u32, indices: bool) -> Result<u32, GlError> {
        let pass = &mut self.passes[k];
        let arena = if indices { &mut pass.indices } else { &mut pass.vertices };
        if let Some(at) = arena.alloc(n) {
            return Ok(at);
        }
        let capacity = arena.capacity();
        let grown = (capacity * 2).max(capacity + n).max(4096).next_power_of_two();
        Self::grow_buffer(gl, pass, indices, grown)?;
        let arena = if indices { &mut pass.indices } else { &mut pass.vertices };
        Ok(arena.alloc(n).expect("a grown arena has room"))
    }

    /// Replaces a pass's vertex or index buffer by one of `capacity` units holding the old
    /// contents, and points its vertex array at it.
    #[allow(unsafe_code)] // glow calls are unsafe; buffer creation and a GPU-side copy of the old size.
    fn grow_buffer(gl: &glow::Context, pass: &mut PassBuffers, indices: bool, capacity: u32) -> Result<(), GlError> {
        let unit = if indices { 4 } else { VERTEX_STRIDE as i32 };
        let old_capacity = if indices { pass.indices.capacity() } else { pass.vertices.capacity() };
        // SAFETY: the new buffer is allocated before the copy, which reads only the old buffer's
        // size; buffers are bound to the copy targets only (no vertex array changes but ours).
        unsafe {
            let buffer = gl.create_buffer().map_err(GlError)?;
            gl.bind_buffer(glow::COPY_WRITE_BUFFER, Some(buffer));
            gl.buffer_data_size(glow::COPY_WRITE_BUFFER, capacity as i32 * unit, glow::STATIC_DRAW);
            let old = pass.gl.as_ref().map(|p| if indices { p.ebo } else { p.vbo });
            if let Some(old) = old {
                if old_capacity > 0 {
                    gl.bind_buffer(glow::COPY_READ_BUFFER, Some(old));
                    gl.copy_buffer_sub_data(
                        glow::COPY_READ_BUFFER,
                        glow::COPY_WRITE_BUFFER,
                        0,
                        0,
                        old_capacity as i32 * unit,
                    );
                    gl.bind_buffer(glow::COPY_READ_BUFFER, None);
                }
                gl.delete_buffer(old);
            }
            gl.bind_buffer(glow::COPY_WRITE_BUFFER, None);
            let p = match pass.gl.take() {
                Some(mut p) => {
                    if indices {
                        p.ebo = buffer;
                    } else {
                        p.vbo = buffer;
                    }
                    p
                }
                None => {
                    // The other buffer starts empty, sized 0 (it grows on its first use).
                    let other = gl.create_buffer().map_err(GlError)?;
                    let vao = gl.create_vertex_array().map_err(GlError)?;
                    if indices {
                        PassGl { vao, vbo: other, ebo: buffer }
                    } else {
                        PassGl { vao, vbo: buffer, ebo: other }
                    }
                }
            };
            Self::setup_vao(gl, &p);
            pass.gl = Some(p);
        }
        if indices {
            pass.indices.grow(capacity);
        } else {
            pass.vertices.grow(capacity);
        }
        Ok(())
    }

    /// Points a pass's vertex array at its buffers ([`VERTEX_ATTRIBUTES`]).
    #[allow(unsafe_code)] // glow calls are unsafe; attribute pointers into our own buffers.
    fn setup_vao(gl: &glow::Context, p: &PassGl) {
        // SAFETY: the vertex array and buffers are ours; offsets and the stride describe the
        // packed vertex (`gpu_mesh`); the vertex array is unbound after.
        unsafe {
            gl.bind_vertex_array(Some(p.vao));
            gl.bind_buffer(glow::ARRAY_BUFFER, Some(p.vbo));
            for a in VERTEX_ATTRIBUTES {
                gl.enable_vertex_attrib_array(a.location);
                let stride = VERTEX_STRIDE as i32;
                match a.component {
                    Component::F32 => {
                        gl.vertex_attrib_pointer_f32(a.location, a.components, glow::FLOAT, false, stride, a.offset)
                    }
                    Component::U8Normalized => gl.vertex_attrib_pointer_f32(
                        a.location,
                        a.components,
                        glow::UNSIGNED_BYTE,
                        true,
                        stride,
                        a.offset,
                    ),
                    Component::U32 => {
                        gl.vertex_attrib_pointer_i32(a.location, a.components, glow::UNSIGNED_INT, stride, a.offset)
                    }
                }
            }
            gl.bind_buffer(glow::ELEMENT_ARRAY_BUFFER, Some(p.ebo));
            gl.bind_vertex_array(None);
            gl.bind_buffer(glow::ARRAY_BUFFER, None);
        }
    }

    /// Places a chunk's atlas in the region atlas (growing it, and placing every chunk again,
    /// when full); `None` when even the largest atlas has no room.
    #[allow(unsafe_code)] // glow calls are unsafe; deleting the replaced texture.
    fn place_atlas(&mut self, gl: &glow::Context, atlas: &Atlas) -> Result<Option<(u32, u32)>, GlError> {
        if let Some(at) = self.lightmaps.shelves.alloc(atlas.width, atlas.height) {
            write_atlas(gl, self.lightmaps.texture, at, atlas);
            return Ok(Some(at));
        }
        let mut w = self.lightmaps.shelves.width().max(atlas.width.next_power_of_two());
        let mut h = self.lightmaps.shelves.height() * 2;
        if h > self.max_texture {
            (w, h) = ((w * 2).min(self.max_texture), self.max_texture);
        }
        if w > self.max_texture || (w, h) == (self.lightmaps.shelves.width(), self.lightmaps.shelves.height()) {
            return Ok(None);
        }
        // A new texture, every atlas placed again in slot order.
        let texture = Self::atlas_texture(gl, w, h)?;
        let old = std::mem::replace(&mut self.lightmaps, Lightmaps { texture, shelves: Shelves::new(w, h) });
        // SAFETY: the old texture is ours and no longer referenced.
        unsafe {
            gl.delete_texture(old.texture);
        }
        self.place_white(gl);
        let slots: Vec<u32> = self.chunks.keys().copied().collect();
        for s in slots {
            let c = &self.chunks[&s];
            let at = self.lightmaps.shelves.alloc(c.atlas.width, c.atlas.height);
            if let Some(at) = at {
                write_atlas(gl, self.lightmaps.texture, at, &c.atlas);
            }
            self.chunks.get_mut(&s).expect("listed").lightmap_at = at;
        }
        self.place_atlas(gl, atlas)
    }

    /// Writes the chunk table (one texel per slot, [`REGION_SLOTS`] of them) when it changed.
    pub fn update_table(&mut self, gl: &glow::Context, texels: Vec<[f32; 4]>) {
        debug_assert_eq!(texels.len(), REGION_SLOTS as usize);
        if texels != self.table_texels {
            write_texture(
                gl,
                self.table,
                (0, 0, TABLE_EDGE, TABLE_EDGE),
                (glow::RGBA, glow::FLOAT),
                &f32_bytes(&texels),
            );
            self.table_texels = texels;
        }
    }

    /// Replaces the visibility texture: the cubes of each listed slot, one byte each (not 0:
    /// visible), one after the other; [`Region::vis_base`] says where each slot's start.
    #[allow(unsafe_code)] // glow calls are unsafe; deleting the replaced texture.
    pub fn set_vis(&mut self, gl: &glow::Context, bits: &BTreeMap<u32, &[u8]>) -> Result<(), GlError> {
        let total: usize = bits.values().map(|b| b.len()).sum();
        let height = (total as u32).div_ceil(VIS_WIDTH).max(1);
        let mut data = Vec::with_capacity((VIS_WIDTH * height) as usize);
        self.vis_base.clear();
        for (&slot, b) in bits {
            self.vis_base.insert(slot, data.len() as u32);
            data.extend(b.iter().map(|&v| if v != 0 { 255u8 } else { 0 }));
        }
        data.resize((VIS_WIDTH * height) as usize, 0);
        let texture =
            new_texture(gl, (VIS_WIDTH, height), (glow::R8, glow::RED, glow::UNSIGNED_BYTE), glow::NEAREST, 1)?;
        write_texture(gl, texture, (0, 0, VIS_WIDTH, height), (glow::RED, glow::UNSIGNED_BYTE), &data);
        // SAFETY: the old texture is ours and no longer referenced.
        unsafe {
            gl.delete_texture(std::mem::replace(&mut self.vis, texture));
        }
        Ok(())
    }

    /// Draws pass `k`'s runs in `list` with the bound program: one multi-draw call (or one call
    /// per run without `multi`).
    #[allow(unsafe_code)] // glow calls are unsafe; a draw of ranges inside our buffers.
    pub fn draw(&self, gl: &glow::Context, multi: Option<MultiDrawFn>, k: usize, list: &DrawList) {
        let Some(p) = &self.passes[k].gl else { return };
        if list.is_empty() {
            return;
        }
        let offsets: Vec<*const c_void> = list.offsets.iter().map(|&o| o as *const c_void).collect();
        // SAFETY: every run lies inside a chunk's index range and its indices inside the chunk's
        // vertex range (`Region::set`); the arrays are `list.counts.len()` long; the program is
        // in use (`Program::draw_with`). three-d disables the program's attribute arrays after
        // each draw, so ours are enabled again first.
        unsafe {
            gl.bind_vertex_array(Some(p.vao));
            for a in VERTEX_ATTRIBUTES {
                gl.enable_vertex_attrib_array(a.location);
            }
            match multi {
                Some(f) => f(
                    glow::TRIANGLES,
                    list.counts.as_ptr(),
                    glow::UNSIGNED_INT,
                    offsets.as_ptr(),
                    list.counts.len() as i32,
                    list.base_vertices.as_ptr(),
                ),
                None => {
                    for i in 0..list.counts.len() {
                        gl.draw_elements_base_vertex(
                            glow::TRIANGLES,
                            list.counts[i],
                            glow::UNSIGNED_INT,
                            list.offsets[i] as i32,
                            list.base_vertices[i],
                        );
                    }
                }
            }
        }
    }
}

/// Writes a chunk atlas into the region atlas at `at`.
/// How region lightmap atlases are stored (internal format, format, type): 8-bit normalized RGB,
/// no sRGB decode, so the shader reads a luxel of value `v` as `v / 255`, the file's linear scale
/// (docs/spec/PMF-NOTES.md K2, K5). Linear filtering; each chunk atlas's border keeps pages apart.
pub(super) const LIGHTMAP_FORMAT: (u32, u32, u32) = (glow::RGB8, glow::RGB, glow::UNSIGNED_BYTE);

/// The bytes a chunk's atlas uploads: its luxels as they are, row by row.
pub(super) fn lightmap_bytes(atlas: &Atlas) -> Vec<u8> {
    atlas.texels.iter().flatten().copied().collect()
}

fn write_atlas(gl: &glow::Context, texture: glow::Texture, at: (u32, u32), atlas: &Atlas) {
    if atlas.width == 0 || atlas.height == 0 {
        return;
    }
    let (_, format, ty) = LIGHTMAP_FORMAT;
    write_texture(gl, texture, (at.0, at.1, atlas.width, atlas.height), (format, ty), &lightmap_bytes(atlas));
}
