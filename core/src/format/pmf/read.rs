//! PMF 0.0 reader (seed 000 + `docs/spec/PMF-NOTES.md`).
//!
//! [`read`] turns a whole file into a [`File`]. Every function here has a mirror in `write.rs`
//! (`read_material` ↔ `write_material`, …); the two are kept record by record in the same order.
//!
//! # Robustness
//! - Every read is bounds-checked by [`Reader`]; every level is parsed inside a sub-reader of exactly
//!   its declared size and must consume it exactly; so must every decompressed block.
//! - Every count is checked with [`Reader::count`] against the bytes that are left, using the
//!   smallest encoding of one element, before anything is allocated. Forged counts fail fast, and
//!   no list is given more than a few thousand elements of capacity up front (records in memory are
//!   larger than their encoding), so memory grows only with what is actually parsed.
//! - LZ4 blocks go through [`lz4f::decompress`]: declared sizes are capped at 1 GiB and the output
//!   must be exactly the declared size (docs/spec/PMF-NOTES.md L1, L5).
//! - A whole file is held to a budget ([`ReadLimits`]): the bytes all its blocks decompress to
//!   together, and the cubes all its chunks hold together, are checked before each block is
//!   decompressed and before each chunk's cubes are read, so a few MB of LZ4 cannot make the
//!   reader hold gigabytes. The error names the section where the budget ran out.
//! - Blocks are decompressed one at a time, each right before it is parsed and dropped after:
//!   a level or chunk never holds its three decompressed blocks at once.
//! - No input can make this module panic: no unchecked indexing, no unchecked arithmetic on values
//!   read from the file.
//!
//! # Error locations
//! Errors carry a section name and a byte offset (`level 0 / chunk y0 x1 z2 / common data (LZ4
//! frame at byte 1234), decompressed at byte 57: cube 3 is the child of two parents`).
//! - Outside LZ4 blocks the offset is absolute in the file.
//! - Inside a decompressed block the section names the file offset of the block's LZ4 frame, and the
//!   offset is counted from the first byte of the **decompressed** data.
//! - Checks that span a whole block (octree, material indices, visibility references) are reported
//!   at the offending cube record.
//!
//! # What is validated
//! Structure (sizes, counts, string offsets per S2, cube types C3, face bits 6–7, lightmap size K1,
//! chunk size L2, center chunk inside the grid), the octree (C1, see [`validate_octree`]), per-cube
//! material / physics / sound indices into the chunk's used lists (M1), moved points inside their
//! cube (C4), visibility cube indices of the same chunk and other-chunk indices inside the grid
//! (V1), load-region chunk indices inside the grid, light references (K4) and lightmap layers (K1).
//!
//! Not validated (the data is kept as is): reserved bits of level / material / physics / light /
//! sky flags (kept raw so a round trip is exact), vertex ranges of geometry cubes and fast lights,
//! geometry lightmap indices, cube indices of *other* chunks in visibility lists, names of used
//! materials against the level libraries.
//!
//! # The draft layout (docs/spec/PMF-NOTES.md D1)
//! When the current layout fails, [`read`] tries the older draft layout (seed 003) as far as the
//! first level's common block: a well-formed LZ4 frame whose declared content size (when the
//! frame states one) is the block's declared size and whose first 64 KiB decode. Nothing more
//! is decompressed just to word an error. If that works the file is reported as `PMF draft
//! layout, unsupported (…)`, quoting where and why the current layout failed; otherwise the
//! current layout's error is returned unchanged.

use std::cell::Cell;
use std::sync::Arc;

use super::entity::read_entities;
use super::strings::StringTable;
use super::types::*;
use crate::format::bin::{ReadError, ReadErrorKind, ReadResult, Reader};
use crate::format::lz4f;

/// Largest chunk size exponent (docs/spec/PMF-NOTES.md L2).
pub(crate) const MAX_CHUNK_SIZE_EXP: u8 = 15;
/// Type bits of the cube flags byte.
pub(crate) const CUBE_TYPE_MASK: u8 = 0x0F;
/// Reserved face bits of client-side geometry cubes.
pub(crate) const FACE_RESERVED: u8 = 0xC0;

/// Minimum encoded sizes of records, for [`Reader::count`].
mod min {
    pub const MATERIAL: usize = 10;
    pub const PHYSICS_MATERIAL: usize = 29;
    pub const SOUND_MATERIAL: usize = 8;
    pub const WEATHER_ENV: usize = 48;
    pub const GRAVITY_ENV: usize = 16;
    pub const SOUND_ENV: usize = 32;
    pub const SKY_ENV: usize = 41;
    pub const CLIENT_MATERIAL: usize = 54;
    pub const STRING: usize = 4;
    pub const ENV_REGION: usize = 100;
    pub const REGION: usize = 28;
    pub const CHUNK_INDEX: usize = 4;
    pub const DYNAMIC_LIGHT: usize = 5;
    pub const FAST_LIGHT: usize = 6;
    pub const CUBE: usize = 1;
    pub const LIGHTMAP: usize = 4;
    pub const VERTEX: usize = 28;
    pub const LIGHTMAP_LAYER: usize = 4;
    pub const FAST_LIGHT_RANGE: usize = 8;
    pub const VISIBLE_CHUNK: usize = 8;
    pub const LIGHT_REF: usize = 2;
    pub const PATH_ATTRIBUTE: usize = 16;
    pub const CHUNK_SIZES: usize = 24;
    pub const U32: usize = 4;
}

/// Most elements any list gets allocated up front. [`Reader::count`] bounds a count by the bytes
/// left, but a record in memory can be much larger than its smallest encoding (a 1-byte empty cube
/// becomes a ~200-byte [`Cube`]), so capacity beyond this grows only with records actually parsed.
const MAX_PREALLOC: usize = 4096;

/// An empty vector with room for `n` elements, at most [`MAX_PREALLOC`].
fn alloc<T>(n: usize) -> Vec<T> {
    Vec::with_capacity(n.min(MAX_PREALLOC))
}

/// The "has lighting / pathfinding data" bits of a common cube: they announce data stored in the
/// client and server chunk blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct CubeHeader {
    pub lighting: bool,
    pub pathfinding: bool,
}

/// How much one file may make the reader hold (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadLimits {
    /// Most bytes the LZ4 blocks of the file may decompress to, all together.
    pub max_decompressed: u64,
    /// Most cubes the chunks of the file may hold, all together.
    pub max_cubes: u64,
}

impl ReadLimits {
    /// 2 GiB decompressed and 16 M cubes: far above what real maps need (a fully subdivided
    /// 16-unit chunk of the finest cubes is 2.4 M cubes), and bounded (a parsed cube with its
    /// client and server records takes a few hundred bytes).
    pub const DEFAULT: ReadLimits = ReadLimits { max_decompressed: 2 << 30, max_cubes: 16 << 20 };
}

impl Default for ReadLimits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// What is left of a file's [`ReadLimits`] while it is read.
pub(crate) struct Budget {
    limits: ReadLimits,
    decompressed: Cell<u64>,
    cubes: Cell<u64>,
}

impl Budget {
    fn new(limits: ReadLimits) -> Self {
        Self { limits, decompressed: Cell::new(0), cubes: Cell::new(0) }
    }

    /// Takes `n` bytes of decompressed output for the block at `r` (its frame).
    fn take_bytes(&self, r: &Reader<'_>, n: u64) -> ReadResult<()> {
        let total = self.decompressed.get().saturating_add(n);
        if total > self.limits.max_decompressed {
            return Err(r.invalid(format!(
                "the file's blocks decompress to more than {} bytes together (this block: {n}, before it: {}); \
                 refused (ReadLimits::max_decompressed)",
                self.limits.max_decompressed,
                self.decompressed.get()
            )));
        }
        self.decompressed.set(total);
        Ok(())
    }

    /// Takes `n` cubes for the chunk whose cube count was read at `at`.
    fn take_cubes(&self, r: &Reader<'_>, at: u64, n: u64) -> ReadResult<()> {
        let total = self.cubes.get().saturating_add(n);
        if total > self.limits.max_cubes {
            return Err(r.invalid_at(
                at,
                format!(
                    "the file's chunks hold more than {} cubes together (this chunk: {n}, before it: {}); refused \
                     (ReadLimits::max_cubes)",
                    self.limits.max_cubes,
                    self.cubes.get()
                ),
            ));
        }
        self.cubes.set(total);
        Ok(())
    }
}

/// Parses a whole `.pmf` file within [`ReadLimits::DEFAULT`].
pub fn read(bytes: &[u8]) -> ReadResult<File> {
    read_with(bytes, &ReadLimits::DEFAULT)
}

/// Parses a whole `.pmf` file within `limits`.
pub fn read_with(bytes: &[u8], limits: &ReadLimits) -> ReadResult<File> {
    match read_current(bytes, &Budget::new(*limits)) {
        Ok(file) => Ok(file),
        Err(e) if draft_first_level(bytes).is_ok() => Err(ReadError {
            section: Arc::from("PMF"),
            offset: e.offset,
            kind: ReadErrorKind::Invalid(
                format!(
                    "PMF draft layout, unsupported (the current layout failed at byte {} of {}: {})",
                    e.offset, e.section, e.kind
                )
                .into(),
            ),
        }),
        Err(e) => Err(e),
    }
}

fn read_current(bytes: &[u8], budget: &Budget) -> ReadResult<File> {
    let mut r = Reader::new(bytes, "header");
    let header = read_header(&mut r)?;

    r.set_section("data");
    let table = StringTable::read(&mut r)?;
    let archive_len = r.u32()?;
    let archive = r.bytes(archive_len as usize)?.to_vec();

    let ext_count = r.u16()?;
    let n = r.count(ext_count.into(), min::U32, "extension sizes")?;
    let mut ext_sizes = alloc(n);
    for _ in 0..n {
        ext_sizes.push(r.u32()?);
    }
    let mut extensions = alloc(n);
    for size in ext_sizes {
        extensions.push(r.bytes(size as usize)?.to_vec());
    }

    let at = r.offset();
    let level_count = r.u8()?;
    if level_count == 0 {
        return Err(r.invalid_at(at, "level count is 0 (a file has at least one level)"));
    }
    let n = r.count(level_count.into(), min::U32, "level sizes")?;
    let mut level_sizes = alloc(n);
    for _ in 0..n {
        level_sizes.push(r.u32()?);
    }
    let mut levels = alloc(n);
    for (i, size) in level_sizes.into_iter().enumerate() {
        let mut lr = r.sub(size as usize, format!("level {i}"))?;
        levels.push(read_level(&mut lr, i, budget)?);
        lr.expect_end()?;
    }

    r.set_section("global entities");
    let entities = read_entities(&mut r, &table)?;
    r.set_section("data");
    r.expect_end()?;
    Ok(File { header, archive, extensions, levels, entities })
}

pub(crate) fn read_header(r: &mut Reader<'_>) -> ReadResult<Header> {
    if r.array::<3>()? != *b"PMF" {
        return Err(r.invalid_at(0, "not a PMF file (the magic is not \"PMF\")"));
    }
    let at = r.offset();
    let version = r.u8()?;
    if version != 0 {
        return Err(r.invalid_at(at, format!("unsupported PMF major version {version} (only 0 is supported)")));
    }
    let creation_time = r.u64()?;
    let name = r.cstr()?.to_owned();
    let description = r.cstr()?.to_owned();
    let authors = r.cstr()?.to_owned();
    let compiler_info = r.cstr()?.to_owned();
    let at = r.offset();
    let count = r.u8()?;
    if usize::from(count) > MAX_GAMEMODES {
        return Err(r.invalid_at(at, format!("{count} gamemodes (at most {MAX_GAMEMODES})")));
    }
    let mut gamemodes = alloc(count.into());
    for i in 0..count {
        let at = r.offset();
        let g = r.cstr()?;
        if g.len() > MAX_GAMEMODE_LEN {
            return Err(
                r.invalid_at(at, format!("gamemode {i} name is {} bytes long (at most {MAX_GAMEMODE_LEN})", g.len()))
            );
        }
        gamemodes.push(g.to_owned());
    }
    Ok(Header { creation_time, name, description, authors, compiler_info, gamemodes })
}

/// An LZ4 block not decompressed yet: its frame and what it decompresses to.
struct Block<'a> {
    frame: Reader<'a>,
    decompressed: u32,
    section: String,
}

impl<'a> Block<'a> {
    /// Takes the next `compressed` bytes of `r` as the frame of a block that decompresses to
    /// exactly `decompressed` bytes; nothing is decompressed yet.
    fn take(r: &mut Reader<'a>, compressed: u32, decompressed: u32, prefix: &str, what: &str) -> ReadResult<Self> {
        let at = r.offset();
        let frame = r.sub(compressed as usize, format!("{prefix} / {what} (LZ4 frame at byte {at})"))?;
        Ok(Block { frame, decompressed, section: format!("{prefix} / {what} (LZ4 frame at byte {at}), decompressed") })
    }

    /// Decompresses the block (within the budget) and parses it with `parse`, which must consume
    /// it exactly; the decompressed bytes are dropped before this returns.
    fn parse<T>(self, budget: &Budget, parse: impl FnOnce(&mut Reader<'_>) -> ReadResult<T>) -> ReadResult<T> {
        // The per-block limit first (docs/spec/PMF-NOTES.md L1), then the file's budget.
        self.frame.limit(self.decompressed.into(), lz4f::MAX_DECOMPRESSED)?;
        budget.take_bytes(&self.frame, self.decompressed.into())?;
        let data = lz4f::decompress(&self.frame, self.decompressed.into())?;
        let mut r = Reader::new(&data, self.section.as_str());
        let out = parse(&mut r)?;
        r.expect_end()?;
        Ok(out)
    }
}

pub(crate) fn read_level(r: &mut Reader<'_>, li: usize, budget: &Budget) -> ReadResult<Level> {
    let prefix = format!("level {li}");
    let flags = r.u8()?;
    let mut sizes = [0u32; 6];
    for s in &mut sizes {
        *s = r.u32()?;
    }
    let [cc, lc, sc, cd, ld, sd] = sizes;
    let common_block = Block::take(r, cc, cd, &prefix, "common data")?;
    let client_block = Block::take(r, lc, ld, &prefix, "client data")?;
    let server_block = Block::take(r, sc, sd, &prefix, "server data")?;
    let common = common_block.parse(budget, read_level_common)?;
    let client = client_block.parse(budget, |br| read_level_client(br, common.materials.len()))?;
    let server = server_block.parse(budget, read_level_server)?;

    let at = r.offset();
    let chunk_size_exp = r.u8()?;
    if chunk_size_exp > MAX_CHUNK_SIZE_EXP {
        return Err(r.invalid_at(at, format!("chunk size exponent {chunk_size_exp} is out of range (0..=15)")));
    }
    let grid = read_grid_size(r)?;
    let at = r.offset();
    let center_chunk = read_chunk_index(r)?;
    if grid.linear(center_chunk).is_none() {
        return Err(
            r.invalid_at(at, format!("center chunk {center_chunk} lies outside the grid of {}", grid_text(grid)))
        );
    }

    let total = u64::from(grid.y) * u64::from(grid.x) * u64::from(grid.z);
    let n = r.count(total, min::CHUNK_SIZES, "chunk size records")?;
    let mut records = alloc(n);
    for _ in 0..n {
        let mut rec = [0u32; 6];
        for s in &mut rec {
            *s = r.u32()?;
        }
        records.push(rec);
    }
    let mut chunks = alloc(n);
    for (i, rec) in records.iter().enumerate() {
        let at = grid.index_of(i);
        chunks.push(read_chunk(r, &format!("{prefix} / chunk {at}"), rec, chunk_size_exp, grid, budget)?);
    }
    Ok(Level { flags, common, client, server, chunk_size_exp, grid, center_chunk, chunks })
}

/// `Y×X×Z` for messages.
pub(crate) fn grid_text(g: GridSize) -> String {
    format!("{}×{}×{} (Y×X×Z) chunks", g.y, g.x, g.z)
}

pub(crate) fn read_grid_size(r: &mut Reader<'_>) -> ReadResult<GridSize> {
    // Every bit pattern is a valid grid (1..=256 × 1..=4096 × 1..=4096).
    Ok(GridSize::from_bits(r.u32()?))
}

pub(crate) fn read_chunk_index(r: &mut Reader<'_>) -> ReadResult<ChunkIndex> {
    Ok(ChunkIndex::from_bits(r.u32()?))
}

/// Reads one chunk record outside a file: the three LZ4 frames at `r` whose sizes are `sizes`
/// ([`EncodedChunk::sizes`](super::write::EncodedChunk::sizes)), of a level whose chunks are
/// `2^chunk_size_exp` units and whose grid is `grid`, within `limits`. The same checks as a
/// chunk read from a file; errors name `prefix` and the absolute offset. For stores that keep
/// encoded chunks on their own (the bake cache, `bake/src/cache.rs`).
pub fn read_chunk_record(
    r: &mut Reader<'_>,
    prefix: &str,
    sizes: &[u32; 6],
    chunk_size_exp: u8,
    grid: GridSize,
    limits: &ReadLimits,
) -> ReadResult<Chunk> {
    if chunk_size_exp > MAX_CHUNK_SIZE_EXP {
        return Err(r.invalid(format!("{prefix}: chunk size exponent {chunk_size_exp} is over {MAX_CHUNK_SIZE_EXP}")));
    }
    read_chunk(r, prefix, sizes, chunk_size_exp, grid, &Budget::new(*limits))
}

/// Reads one chunk's three LZ4 blocks and parses them, one block at a time.
fn read_chunk(
    r: &mut Reader<'_>,
    prefix: &str,
    rec: &[u32; 6],
    exp: u8,
    grid: GridSize,
    budget: &Budget,
) -> ReadResult<Chunk> {
    let [cc, lc, sc, cd, ld, sd] = *rec;
    let common_block = Block::take(r, cc, cd, prefix, "common data")?;
    let client_block = Block::take(r, lc, ld, prefix, "client data")?;
    let server_block = Block::take(r, sc, sd, prefix, "server data")?;

    // The common chunk table also serves the client chunk (docs/spec/PMF-NOTES.md S3); it
    // borrows the common block, so the table's strings are copied out for the client block.
    let (common, headers, table) = common_block.parse(budget, |cr| {
        let table = StringTable::read(cr)?;
        let (common, headers) = read_chunk_common(cr, &table, exp, grid, budget)?;
        Ok((common, headers, table.to_owned_table()))
    })?;
    let client = client_block.parse(budget, |lr| read_chunk_client(lr, &table.borrow(), &common, &headers))?;
    let server = server_block.parse(budget, |sr| read_chunk_server(sr, &headers, grid))?;
    Ok(Chunk { common, client, server })
}

// ---------------------------------------------------------------------------------------------
// Level blocks

pub(crate) fn read_level_common(r: &mut Reader<'_>) -> ReadResult<LevelCommon> {
    let table = StringTable::read(r)?;
    let n = r.u16()?;
    let n = r.count(n.into(), min::MATERIAL, "materials")?;
    let mut materials = alloc(n);
    for _ in 0..n {
        materials.push(read_material(r, &table)?);
    }
    let n = r.u16()?;
    let n = r.count(n.into(), min::PHYSICS_MATERIAL, "physics materials")?;
    let mut physics_materials = alloc(n);
    for _ in 0..n {
        physics_materials.push(read_physics_material(r, &table)?);
    }
    let n = r.u16()?;
    let n = r.count(n.into(), min::SOUND_MATERIAL, "sound materials")?;
    let mut sound_materials = alloc(n);
    for _ in 0..n {
        sound_materials.push(read_sound_material(r)?);
    }
    let air_physics_material = table.read_str(r)?;
    let n = r.u8()?;
    let n = r.count(n.into(), min::WEATHER_ENV, "weather environments")?;
    let mut weather_environments = alloc(n);
    for _ in 0..n {
        weather_environments.push(read_weather_environment(r, &table)?);
    }
    let n = r.u8()?;
    let n = r.count(n.into(), min::GRAVITY_ENV, "gravity environments")?;
    let mut gravity_environments = alloc(n);
    for _ in 0..n {
        gravity_environments.push(read_gravity_environment(r, &table)?);
    }
    let default_weather = table.read_str(r)?;
    let default_gravity = table.read_str(r)?;
    Ok(LevelCommon {
        materials,
        physics_materials,
        sound_materials,
        air_physics_material,
        weather_environments,
        gravity_environments,
        default_weather,
        default_gravity,
    })
}

/// `material_count` client-side materials follow, one per level material (docs/spec/PMF-NOTES.md M4).
pub(crate) fn read_level_client(r: &mut Reader<'_>, material_count: usize) -> ReadResult<LevelClient> {
    let table = StringTable::read(r)?;
    let n = r.u8()?;
    let n = r.count(n.into(), min::SOUND_ENV, "sound environments")?;
    let mut sound_environments = alloc(n);
    for _ in 0..n {
        sound_environments.push(read_sound_environment(r, &table)?);
    }
    let n = r.u8()?;
    let n = r.count(n.into(), min::SKY_ENV, "sky environments")?;
    let mut sky_environments = alloc(n);
    for _ in 0..n {
        sky_environments.push(read_sky_environment(r, &table)?);
    }
    let default_sound = table.read_str(r)?;
    let default_sky = table.read_str(r)?;
    let n = r.count(material_count as u64, min::CLIENT_MATERIAL, "client-side materials")?;
    let mut materials = alloc(n);
    for _ in 0..n {
        materials.push(read_client_material(r, &table)?);
    }
    Ok(LevelClient { sound_environments, sky_environments, default_sound, default_sky, materials })
}

pub(crate) fn read_level_server(r: &mut Reader<'_>) -> ReadResult<LevelServer> {
    let table = StringTable::read(r)?;
    let entities = read_entities(r, &table)?;
    Ok(LevelServer { entities })
}

pub(crate) fn read_sound_environment(r: &mut Reader<'_>, t: &StringTable<'_>) -> ReadResult<SoundEnvironment> {
    Ok(SoundEnvironment {
        name: t.read_str(r)?,
        low_pass: r.f32()?,
        high_pass: r.f32()?,
        reverb_delay: r.f32()?,
        reverb_feedback: r.f32()?,
        reverb_mix: r.f32()?,
        reverb_low_pass: r.f32()?,
        reverb_high_pass: r.f32()?,
    })
}

pub(crate) fn read_weather_environment(r: &mut Reader<'_>, t: &StringTable<'_>) -> ReadResult<WeatherEnvironment> {
    Ok(WeatherEnvironment {
        name: t.read_str(r)?,
        wind: r.f32s()?,
        wind_direction_seed: r.u32()?,
        wind_direction_randomness: r.f32s()?,
        wind_direction_noise_speed: r.f32()?,
        wind_velocity_seed: r.u32()?,
        wind_velocity_randomness: r.f32()?,
        wind_velocity_noise_speed: r.f32()?,
    })
}

pub(crate) fn read_sky_environment(r: &mut Reader<'_>, t: &StringTable<'_>) -> ReadResult<SkyEnvironment> {
    let name = t.read_str(r)?;
    let flags = r.u8()?;
    let mut skybox: [String; 6] = Default::default();
    for s in &mut skybox {
        *s = t.read_str(r)?;
    }
    let cloud_top = t.read_str(r)?;
    let cloud_bottom = t.read_str(r)?;
    let skybox_chunk = read_chunk_index(r)?;
    Ok(SkyEnvironment { name, flags, skybox, cloud_top, cloud_bottom, skybox_chunk })
}

pub(crate) fn read_gravity_environment(r: &mut Reader<'_>, t: &StringTable<'_>) -> ReadResult<GravityEnvironment> {
    Ok(GravityEnvironment { name: t.read_str(r)?, gravity: r.f32s()? })
}

pub(crate) fn read_material(r: &mut Reader<'_>, t: &StringTable<'_>) -> ReadResult<Material> {
    let name = t.read_str(r)?;
    let user_type = t.read_str(r)?;
    let flags = r.u8()?;
    let at = r.offset();
    let render_mode = match r.u8()? {
        0 => RenderMode::Normal,
        1 => RenderMode::Add,
        m => return Err(r.invalid_at(at, format!("material render mode {m} is not defined (0 normal, 1 add)"))),
    };
    Ok(Material { name, user_type, flags, render_mode })
}

pub(crate) fn read_client_material(r: &mut Reader<'_>, t: &StringTable<'_>) -> ReadResult<ClientMaterial> {
    let texture = t.read_str(r)?;
    let n = r.u8()?;
    let n = r.count(n.into(), min::STRING, "extra textures")?;
    let mut extra_textures = alloc(n);
    for _ in 0..n {
        extra_textures.push(t.read_str(r)?);
    }
    Ok(ClientMaterial {
        texture,
        extra_textures,
        texture_advance_time_us: r.u32()?,
        uv_scroll: r.f32s()?,
        color: r.array()?,
        alpha: r.u8()?,
        emission: r.array()?,
        shading: r.u8()?,
        shine: r.u8()?,
        matcap_texture: t.read_str(r)?,
        wave: WaveInfo { velocity: r.f32s()?, wind_influence: r.f32()?, offset: r.f32()?, scale: r.f32()? },
    })
}

pub(crate) fn read_physics_material(r: &mut Reader<'_>, t: &StringTable<'_>) -> ReadResult<PhysicsMaterial> {
    Ok(PhysicsMaterial {
        name: t.read_str(r)?,
        flags: r.u8()?,
        friction_or_max_speed: r.f32()?,
        traction: r.f32()?,
        bounce: r.f32()?,
        damage_min_speed: r.f32()?,
        damage_base: r.f32()?,
        damage_per_mps: r.f32()?,
    })
}

pub(crate) fn read_sound_material(r: &mut Reader<'_>) -> ReadResult<SoundMaterial> {
    Ok(SoundMaterial { volume_dampening: r.f32()?, frequency_dampening: r.f32()? })
}

// ---------------------------------------------------------------------------------------------
// Chunk blocks

fn read_names(r: &mut Reader<'_>, t: &StringTable<'_>, what: &'static str) -> ReadResult<Vec<String>> {
    let n = r.u8()?;
    let n = r.count(n.into(), min::STRING, what)?;
    let mut out = alloc(n);
    for _ in 0..n {
        out.push(t.read_str(r)?);
    }
    Ok(out)
}

fn read_environment_regions(
    r: &mut Reader<'_>,
    t: &StringTable<'_>,
    what: &'static str,
) -> ReadResult<Vec<EnvironmentRegion>> {
    let n = r.u8()?;
    let n = r.count(n.into(), min::ENV_REGION, what)?;
    let mut out = alloc(n);
    for _ in 0..n {
        out.push(read_environment_region(r, t)?);
    }
    Ok(out)
}

/// Reads common chunk data after its string table (read by the caller, since the client chunk
/// uses it too) and validates the octree and every cube's references.
pub(crate) fn read_chunk_common(
    r: &mut Reader<'_>,
    t: &StringTable<'_>,
    chunk_size_exp: u8,
    grid: GridSize,
    budget: &Budget,
) -> ReadResult<(ChunkCommon, Vec<CubeHeader>)> {
    let used_materials = read_names(r, t, "used material names")?;
    let used_physics_materials = read_names(r, t, "used physics material names")?;
    let used_sound_materials = read_names(r, t, "used sound material names")?;
    let weather_regions = read_environment_regions(r, t, "weather environment regions")?;
    let gravity_regions = read_environment_regions(r, t, "gravity environment regions")?;
    let n = r.u8()?;
    let n = r.count(n.into(), min::DYNAMIC_LIGHT, "dynamic lights")?;
    let mut dynamic_lights = alloc(n);
    for _ in 0..n {
        dynamic_lights.push(read_dynamic_light(r)?);
    }
    let n = r.u8()?;
    let n = r.count(n.into(), min::FAST_LIGHT, "fast lights")?;
    let mut fast_lights = alloc(n);
    for _ in 0..n {
        fast_lights.push(read_fast_light(r)?);
    }
    let at = r.offset();
    let n = r.u32()?;
    if n == 0 {
        return Err(r.invalid_at(at, "cube count is 0 (a chunk has at least its root cube)"));
    }
    let n = r.count(n.into(), min::CUBE, "cubes")?;
    budget.take_cubes(r, at, n as u64)?;
    let mut cubes = alloc(n);
    let mut headers = alloc(n);
    let mut offsets = alloc(n);
    // Air cubes often carry the same lists as the one before: share them.
    let mut last = LastVisibility::default();
    for _ in 0..n {
        offsets.push(r.offset());
        let (cube, header) = read_cube(r, &mut last)?;
        cubes.push(cube);
        headers.push(header);
    }
    let common = ChunkCommon {
        used_materials,
        used_physics_materials,
        used_sound_materials,
        weather_regions,
        gravity_regions,
        dynamic_lights,
        fast_lights,
        cubes,
    };
    let at_cube = |i: usize| offsets.get(i).copied().unwrap_or(at);
    let depths = validate_octree(&common.cubes)
        .map_err(|why| r.invalid_at(at_cube(why.cube().unwrap_or_default()), why.to_string()))?;
    for (i, (cube, &depth)) in common.cubes.iter().zip(&depths).enumerate() {
        check_cube(&common, i, cube, depth, chunk_size_exp, grid)
            .map_err(|why| r.invalid_at(at_cube(i), why.to_string()))?;
    }
    Ok((common, headers))
}

/// Reads client chunk data. It has no string table: region names use the common chunk's `t`.
pub(crate) fn read_chunk_client(
    r: &mut Reader<'_>,
    t: &StringTable<'_>,
    common: &ChunkCommon,
    headers: &[CubeHeader],
) -> ReadResult<ChunkClient> {
    let sound_regions = read_environment_regions(r, t, "sound environment regions")?;
    let sky_regions = read_environment_regions(r, t, "sky environment regions")?;
    let n = r.u8()?;
    let n = r.count(n.into(), min::LIGHTMAP, "lightmaps")?;
    let mut lightmaps = alloc(n);
    for _ in 0..n {
        lightmaps.push(read_lightmap(r)?);
    }
    let n = r.u32()?;
    let n = r.count(n.into(), min::VERTEX, "vertices")?;
    let mut vertices = alloc(n);
    for _ in 0..n {
        vertices.push(read_vertex(r)?);
    }
    let mut dynamic_lights = alloc(common.dynamic_lights.len());
    for _ in &common.dynamic_lights {
        dynamic_lights.push(read_client_dynamic_light(r, &lightmaps)?);
    }
    let mut fast_lights = alloc(common.fast_lights.len());
    for _ in &common.fast_lights {
        fast_lights.push(read_client_fast_light(r)?);
    }
    let mut cubes = alloc(common.cubes.len());
    for (i, (cube, header)) in common.cubes.iter().zip(headers).enumerate() {
        let at = r.offset();
        let c = read_client_cube(r, &cube.kind, *header)?;
        if let Some(l) = &c.lighting {
            check_lighting(l, common.dynamic_lights.len(), common.fast_lights.len())
                .map_err(|why| r.invalid_at(at, format!("client cube {i}: {why}")))?;
        }
        cubes.push(c);
    }
    Ok(ChunkClient { sound_regions, sky_regions, lightmaps, vertices, dynamic_lights, fast_lights, cubes })
}

/// Reads server chunk data (with its own string table).
pub(crate) fn read_chunk_server(r: &mut Reader<'_>, headers: &[CubeHeader], grid: GridSize) -> ReadResult<ChunkServer> {
    let table = StringTable::read(r)?;
    let n = r.u8()?;
    let n = r.count(n.into(), min::REGION, "load regions")?;
    let mut load_regions = alloc(n);
    for i in 0..n {
        let at = r.offset();
        let region = read_region(r)?;
        check_region(&region, grid).map_err(|why| r.invalid_at(at, format!("load region {i}: {why}")))?;
        load_regions.push(region);
    }
    let mut cubes = alloc(headers.len());
    for h in headers {
        cubes.push(read_server_cube(r, &table, *h)?);
    }
    let entities = read_entities(r, &table)?;
    Ok(ChunkServer { load_regions, cubes, entities })
}

pub(crate) fn read_region(r: &mut Reader<'_>) -> ReadResult<Region> {
    let max = r.f32s()?;
    let min = r.f32s()?;
    let n = r.u32()?;
    let n = r.count(n.into(), min::CHUNK_INDEX, "other active chunks")?;
    let mut other_chunks = alloc(n);
    for _ in 0..n {
        other_chunks.push(read_chunk_index(r)?);
    }
    Ok(Region { max, min, other_chunks })
}

pub(crate) fn read_environment_region(r: &mut Reader<'_>, t: &StringTable<'_>) -> ReadResult<EnvironmentRegion> {
    let mut corners = [[0.0; 3]; 8];
    for c in &mut corners {
        *c = r.f32s()?;
    }
    Ok(EnvironmentRegion { corners, environment: t.read_str(r)? })
}

pub(crate) fn read_lightmap(r: &mut Reader<'_>) -> ReadResult<Lightmap> {
    let at = r.offset();
    let size_exp = r.u8()?;
    if size_exp > MAX_LIGHTMAP_EXP {
        return Err(
            r.invalid_at(at, format!("lightmap size exponent {size_exp} is out of range (0..={MAX_LIGHTMAP_EXP})"))
        );
    }
    let luxels = r.bytes(Lightmap::byte_len(size_exp))?.to_vec();
    Ok(Lightmap { size_exp, luxels })
}

pub(crate) fn read_vertex(r: &mut Reader<'_>) -> ReadResult<Vertex> {
    Ok(Vertex { position: r.f32s()?, uv: r.f32s()?, lightmap_uv: r.f32s()? })
}

pub(crate) fn read_dynamic_light(r: &mut Reader<'_>) -> ReadResult<DynamicLight> {
    Ok(DynamicLight { flags: r.u8()?, global_id: r.u32()? })
}

/// Each layer targets one of `lightmaps` and has exactly its luxel count (docs/spec/PMF-NOTES.md K1).
pub(crate) fn read_client_dynamic_light(r: &mut Reader<'_>, lightmaps: &[Lightmap]) -> ReadResult<ClientDynamicLight> {
    let color = r.array()?;
    let n = r.u8()?;
    let n = r.count(n.into(), min::LIGHTMAP_LAYER, "lightmap layers")?;
    let mut layers = alloc(n);
    for _ in 0..n {
        let at = r.offset();
        let lightmap = r.u8()?;
        let Some(target) = lightmaps.get(usize::from(lightmap)) else {
            return Err(r.invalid_at(
                at,
                format!("lightmap layer targets lightmap {lightmap}, but the chunk has {} lightmaps", lightmaps.len()),
            ));
        };
        let luxels = r.bytes(Lightmap::byte_len(target.size_exp))?.to_vec();
        layers.push(LightmapLayer { lightmap, luxels });
    }
    Ok(ClientDynamicLight { color, layers })
}

pub(crate) fn read_fast_light(r: &mut Reader<'_>) -> ReadResult<FastLight> {
    Ok(FastLight { flags: r.u8()?, initial_intensity: r.u8()?, global_id: r.u32()? })
}

pub(crate) fn read_client_fast_light(r: &mut Reader<'_>) -> ReadResult<ClientFastLight> {
    let color = r.array()?;
    let n = r.u32()?;
    let n = r.count(n.into(), min::FAST_LIGHT_RANGE, "fast light vertex ranges")?;
    let mut ranges = alloc(n);
    for _ in 0..n {
        let skip = r.u32()?;
        let m = r.u32()?;
        let multipliers = r.bytes(m as usize)?.to_vec();
        ranges.push(FastLightRange { skip, multipliers });
    }
    Ok(ClientFastLight { color, ranges })
}

// ---------------------------------------------------------------------------------------------
// Cubes

/// Reads one common cube; the header says whether its client / server parts carry lighting /
/// pathfinding data. `last` holds the visibility lists read last among the chunk's cubes, shared
/// when equal ([`read_visibility`]).
pub(crate) fn read_cube<'a>(r: &mut Reader<'a>, last: &mut LastVisibility<'a>) -> ReadResult<(Cube, CubeHeader)> {
    let at = r.offset();
    let flags = r.u8()?;
    let ty = flags & CUBE_TYPE_MASK;
    if ty > 3 {
        return Err(r.invalid_at(
            at,
            format!("cube type {ty} is not defined (0 empty, 1 parent, 2 geometry, 3 extended geometry)"),
        ));
    }
    let visibility =
        if flags & cube_flags::HAS_VISIBILITY != 0 { Some(Box::new(read_visibility(r, last)?)) } else { None };
    let kind = match ty {
        0 => CubeKind::Empty,
        1 => CubeKind::Parent(read_parent_cube(r)?),
        2 => CubeKind::Geometry(read_geometry_cube(r)?),
        _ => CubeKind::ExtGeometry(read_ext_geometry_cube(r)?),
    };
    let header = CubeHeader {
        lighting: flags & cube_flags::HAS_LIGHTING != 0,
        pathfinding: flags & cube_flags::HAS_PATHFINDING != 0,
    };
    Ok((Cube { draw_backfaces: flags & cube_flags::DRAW_BACKFACES != 0, visibility, kind }, header))
}

pub(crate) fn read_parent_cube(r: &mut Reader<'_>) -> ReadResult<ParentCube> {
    let flags = r.u8()?;
    let mut children = [None; 8];
    for (bit, child) in children.iter_mut().enumerate() {
        if flags & (1 << bit) != 0 {
            let at = r.offset();
            // `ChildIndex` has no 0 (its niche): the root is nobody's child (C1), refused here
            // rather than by `validate_octree`.
            let index = r.u32()?;
            *child = Some(ChildIndex::new(index).ok_or_else(|| r.invalid_at(at, "the root cube 0 cannot be a child"))?);
        }
    }
    Ok(ParentCube { children })
}

pub(crate) fn read_geometry_cube(r: &mut Reader<'_>) -> ReadResult<GeometryCube> {
    Ok(GeometryCube { material: r.u8()?, physics_material: r.u8()?, sound_material: r.u8()? })
}

pub(crate) fn read_ext_geometry_cube(r: &mut Reader<'_>) -> ReadResult<ExtGeometryCube> {
    let materials = r.array()?;
    let physics_materials = r.array()?;
    let sound_material = r.u8()?;
    let moved = r.u8()?;
    let mut points = [None; 8];
    for (bit, p) in points.iter_mut().enumerate() {
        if moved & (1 << bit) != 0 {
            *p = Some(r.f32s()?);
        }
    }
    Ok(ExtGeometryCube { materials, physics_materials, sound_material, points: MovedPoints::new(points) })
}

/// Reads a client-side cube; what it holds depends on the common cube (`kind`, `header`).
pub(crate) fn read_client_cube(r: &mut Reader<'_>, kind: &CubeKind, header: CubeHeader) -> ReadResult<ClientCube> {
    let lighting = if header.lighting { Some(read_lighting(r)?) } else { None };
    let geometry = match kind {
        CubeKind::Empty | CubeKind::Parent(_) => ClientGeometry::None,
        CubeKind::Geometry(_) => ClientGeometry::Geometry(read_client_geometry_cube(r)?),
        CubeKind::ExtGeometry(_) => ClientGeometry::ExtGeometry(read_client_ext_geometry_cube(r)?),
    };
    Ok(ClientCube { lighting, geometry })
}

pub(crate) fn read_client_geometry_cube(r: &mut Reader<'_>) -> ReadResult<ClientGeometryCube> {
    let lightmap = r.u8()?;
    let first_vertex = r.u32()?;
    let at = r.offset();
    let faces = r.u8()?;
    if faces & FACE_RESERVED != 0 {
        return Err(r.invalid_at(at, format!("face bits {faces:#010b} have reserved bits 6–7 set")));
    }
    Ok(ClientGeometryCube { lightmap, first_vertex, faces })
}

pub(crate) fn read_client_ext_geometry_cube(r: &mut Reader<'_>) -> ReadResult<ClientExtGeometryCube> {
    Ok(ClientExtGeometryCube { first_vertex: r.u32()?, lightmaps: r.array()?, triangle_counts: r.array()? })
}

pub(crate) fn read_server_cube(r: &mut Reader<'_>, t: &StringTable<'_>, header: CubeHeader) -> ReadResult<ServerCube> {
    let pathfinding = if header.pathfinding { Some(read_pathfinding(r, t)?.into_boxed_slice()) } else { None };
    Ok(ServerCube { pathfinding })
}

/// The last visibility lists read among a chunk's cubes and the bytes each part was read from.
#[derive(Default)]
pub(crate) struct LastVisibility<'a> {
    cubes: Option<(Arc<[u32]>, &'a [u8])>,
    chunks: Option<(Arc<[VisibleChunk]>, &'a [u8])>,
}

/// Reads a visibility record, sharing each part with `last`'s when it is the same. The test is on the
/// encoded bytes, one comparison per part: the encoding is self-delimiting and its parse depends
/// on nothing but those bytes, so bytes that begin with the last part's bytes hold that very part
/// (and would parse without error to an equal value). Comparing parsed far lists element by
/// element instead cost most of the time of reading a big open level (one call per visible chunk).
pub(crate) fn read_visibility<'a>(r: &mut Reader<'a>, last: &mut LastVisibility<'a>) -> ReadResult<Visibility> {
    let cubes = shared_part(r, &mut last.cubes, |r| Ok(read_u32s(r, "visible cube indices")?.into()))?;
    let chunks = shared_part(r, &mut last.chunks, |r| {
        let n = r.u32()?;
        let n = r.count(n.into(), min::VISIBLE_CHUNK, "visible chunks")?;
        let mut chunks = alloc(n);
        for _ in 0..n {
            let chunk = read_chunk_index(r)?;
            chunks.push(VisibleChunk { chunk, cubes: read_u32s(r, "visible cube indices")? });
        }
        Ok(chunks.into())
    })?;
    Ok(Visibility { cubes, chunks })
}

/// The part at `r`: `last`'s value when the bytes there begin with the bytes it was read from,
/// else what `read` makes of them (which becomes `last`).
fn shared_part<'a, T: ?Sized>(
    r: &mut Reader<'a>,
    last: &mut Option<(Arc<T>, &'a [u8])>,
    read: impl FnOnce(&mut Reader<'a>) -> ReadResult<Arc<T>>,
) -> ReadResult<Arc<T>> {
    let (data, at) = (r.data(), r.position());
    if let Some((value, bytes)) = last.as_ref()
        && data.get(at..).is_some_and(|rest| rest.starts_with(bytes))
    {
        r.skip(bytes.len())?;
        return Ok(value.clone());
    }
    let value = read(r)?;
    // A part is at least its 4-byte count, so `bytes` is never empty (which would match anything).
    *last = data.get(at..r.position()).filter(|b| !b.is_empty()).map(|bytes| (value.clone(), bytes));
    Ok(value)
}

fn read_u32s(r: &mut Reader<'_>, what: &'static str) -> ReadResult<Vec<u32>> {
    let n = r.u32()?;
    let n = r.count(n.into(), min::U32, what)?;
    let mut out = alloc(n);
    for _ in 0..n {
        out.push(r.u32()?);
    }
    Ok(out)
}

pub(crate) fn read_lighting(r: &mut Reader<'_>) -> ReadResult<CubeLighting> {
    let base = r.array()?;
    let dynamic = read_light_refs(r, "dynamic light references")?;
    let fast = read_light_refs(r, "fast light references")?;
    Ok(CubeLighting::new(base, dynamic, fast))
}

fn read_light_refs(r: &mut Reader<'_>, what: &'static str) -> ReadResult<Vec<LightRef>> {
    let n = r.u8()?;
    let n = r.count(n.into(), min::LIGHT_REF, what)?;
    let mut out = alloc(n);
    for _ in 0..n {
        out.push(LightRef { index: r.u8()?, amount: r.u8()? });
    }
    Ok(out)
}

pub(crate) fn read_pathfinding(r: &mut Reader<'_>, t: &StringTable<'_>) -> ReadResult<Vec<PathAttribute>> {
    let n = r.u8()?;
    let n = r.count(n.into(), min::PATH_ATTRIBUTE, "pathfinding attributes")?;
    let mut out = alloc(n);
    for _ in 0..n {
        out.push(read_path_attribute(r, t)?);
    }
    Ok(out)
}

pub(crate) fn read_path_attribute(r: &mut Reader<'_>, t: &StringTable<'_>) -> ReadResult<PathAttribute> {
    Ok(PathAttribute { name: t.read_str(r)?, direction: r.f32s()? })
}

// ---------------------------------------------------------------------------------------------
// Checks shared with the writer (so both refuse exactly the same things)

/// What the chunk checks shared by the reader and the writer refuse (so both refuse exactly the
/// same things). The reader reports it at the faulting record's byte offset, the writer under
/// the record's context.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum ChunkCheckError {
    #[error("the chunk has no cubes (it needs at least its root cube)")]
    NoCubes,
    #[error("cube {cube}: child index {child} is out of range (the chunk has {count} cubes)")]
    ChildOutOfRange { cube: usize, child: u32, count: usize },
    #[error("cube {cube} lists cube {child} as its child twice")]
    ChildTwice { cube: usize, child: u32 },
    #[error("cube {child} is the child of two parents (cubes {first} and {second})")]
    TwoParents { child: u32, first: usize, second: usize },
    #[error("cube {cube} is nobody's child (every cube but the root 0 needs one parent)")]
    Orphan { cube: usize },
    #[error("cube {cube} is not reachable from the root cube 0 (its parents form a cycle)")]
    Unreachable { cube: usize },
    #[error("cube {cube}: {what} index {index} is out of range (the chunk uses {count} {what}s)")]
    IndexOutOfRange { cube: usize, what: &'static str, index: u8, count: usize },
    #[error("cube {cube}: moved point {point} {position:?} lies outside the cube (depth {depth}, half edge {half})")]
    PointOutsideCube { cube: usize, point: usize, position: [f32; 3], depth: u32, half: f64 },
    #[error("cube {cube}: visible cube {target} is out of range (the chunk has {count} cubes)")]
    VisibleCubeOutOfRange { cube: usize, target: u32, count: usize },
    #[error("cube {cube}: visible chunk {chunk} lies outside the grid of {}", grid_text(*.grid))]
    VisibleChunkOutsideGrid { cube: usize, chunk: ChunkIndex, grid: GridSize },
    #[error("dynamic light reference {index} is out of range (the chunk has {count} dynamic lights)")]
    DynamicLightOutOfRange { index: u8, count: usize },
    #[error("fast light reference {index} is out of range (the chunk has {count} fast lights)")]
    FastLightOutOfRange { index: u8, count: usize },
    #[error("other active chunk {chunk} lies outside the grid of {}", grid_text(*.grid))]
    RegionChunkOutsideGrid { chunk: ChunkIndex, grid: GridSize },
}

impl ChunkCheckError {
    /// The cube whose record is at fault (where the reader reports the error), for the octree
    /// and cube checks.
    pub(crate) fn cube(&self) -> Option<usize> {
        match *self {
            Self::NoCubes => Some(0),
            Self::ChildOutOfRange { cube, .. }
            | Self::ChildTwice { cube, .. }
            | Self::TwoParents { second: cube, .. }
            | Self::Orphan { cube }
            | Self::Unreachable { cube }
            | Self::IndexOutOfRange { cube, .. }
            | Self::PointOutsideCube { cube, .. }
            | Self::VisibleCubeOutOfRange { cube, .. }
            | Self::VisibleChunkOutsideGrid { cube, .. } => Some(cube),
            Self::DynamicLightOutOfRange { .. }
            | Self::FastLightOutOfRange { .. }
            | Self::RegionChunkOutsideGrid { .. } => None,
        }
    }
}

/// Validates a chunk's octree (docs/spec/PMF-NOTES.md C1): cube 0 is the root; child indices are in range;
/// every other cube is the child of exactly one parent; the root is nobody's child (by type:
/// [`ChildIndex`] has no 0); every cube is
/// reachable from the root (no cycles). Any order of the array is accepted.
///
/// Returns each cube's depth (root 0). On error, [`ChunkCheckError::cube`] is the cube whose
/// record is at fault.
pub(crate) fn validate_octree(cubes: &[Cube]) -> Result<Vec<u32>, ChunkCheckError> {
    let n = cubes.len();
    if n == 0 {
        return Err(ChunkCheckError::NoCubes);
    }
    // Each cube's parent, `NO_PARENT` for none (a `u32` a cube: half the bytes of an
    // `Option<usize>`, and this table is written for every chunk of every export and read).
    const NO_PARENT: u32 = u32::MAX;
    let mut parent: Vec<u32> = vec![NO_PARENT; n];
    for (i, cube) in cubes.iter().enumerate() {
        let CubeKind::Parent(p) = &cube.kind else { continue };
        // No child is 0, the root: `ChildIndex` cannot hold it.
        for c in p.present() {
            let ci = c as usize;
            let Some(slot) = parent.get_mut(ci) else {
                return Err(ChunkCheckError::ChildOutOfRange { cube: i, child: c, count: n });
            };
            if *slot != NO_PARENT {
                let first = *slot as usize;
                return Err(if first == i {
                    ChunkCheckError::ChildTwice { cube: i, child: c }
                } else {
                    ChunkCheckError::TwoParents { child: c, first, second: i }
                });
            }
            // A chunk's cube count is a `u32` field (and a cube is far bigger than a byte), so
            // `i` fits and is below `u32::MAX`.
            *slot = i as u32;
        }
    }
    // Every cube has at most one parent and the root none, so a walk from the root is a tree walk.
    let mut depth = vec![u32::MAX; n];
    depth[0] = 0;
    let mut stack = vec![0usize];
    let mut seen = 1usize;
    while let Some(i) = stack.pop() {
        let d = depth[i];
        if let Some(CubeKind::Parent(p)) = cubes.get(i).map(|c| &c.kind) {
            for c in p.present() {
                if let Some(slot) = depth.get_mut(c as usize)
                    && *slot == u32::MAX
                {
                    *slot = d.saturating_add(1);
                    seen += 1;
                    stack.push(c as usize);
                }
            }
        }
    }
    if seen < n
        && let Some(c) = depth.iter().position(|&d| d == u32::MAX)
    {
        return Err(if parent[c] == NO_PARENT {
            ChunkCheckError::Orphan { cube: c }
        } else {
            ChunkCheckError::Unreachable { cube: c }
        });
    }
    Ok(depth)
}

/// Checks one common cube of `common` (index `i`, at octree depth `depth`): material, physics and
/// sound indices within the chunk's used lists (M1), moved points inside the cube (C4),
/// visibility references (V1).
pub(crate) fn check_cube(
    common: &ChunkCommon,
    i: usize,
    cube: &Cube,
    depth: u32,
    chunk_size_exp: u8,
    grid: GridSize,
) -> Result<(), ChunkCheckError> {
    let check = |list: &[String], index: u8, what: &'static str| {
        if usize::from(index) < list.len() {
            Ok(())
        } else {
            Err(ChunkCheckError::IndexOutOfRange { cube: i, what, index, count: list.len() })
        }
    };
    match &cube.kind {
        CubeKind::Empty | CubeKind::Parent(_) => {}
        CubeKind::Geometry(g) => {
            check(&common.used_materials, g.material, "material")?;
            check(&common.used_physics_materials, g.physics_material, "physics material")?;
            check(&common.used_sound_materials, g.sound_material, "sound material")?;
        }
        CubeKind::ExtGeometry(g) => {
            for &m in &g.materials {
                check(&common.used_materials, m, "material")?;
            }
            for &m in &g.physics_materials {
                check(&common.used_physics_materials, m, "physics material")?;
            }
            check(&common.used_sound_materials, g.sound_material, "sound material")?;
            // Edge of a cube at `depth` is 2^(exp - depth); points lie within ±edge/2 of its center.
            let e =
                i32::from(chunk_size_exp).saturating_sub(i32::try_from(depth).unwrap_or(i32::MAX)).saturating_sub(1);
            let half = 2f64.powi(e);
            for (bit, p) in g.points.corners().iter().enumerate() {
                if let Some(p) = p
                    && !p.iter().all(|&v| f64::from(v).abs() <= half)
                {
                    return Err(ChunkCheckError::PointOutsideCube { cube: i, point: bit, position: *p, depth, half });
                }
            }
        }
    }
    if let Some(v) = &cube.visibility {
        let n = common.cubes.len();
        if let Some(&c) = v.cubes.iter().find(|&&c| c as usize >= n) {
            return Err(ChunkCheckError::VisibleCubeOutOfRange { cube: i, target: c, count: n });
        }
        if let Some(vc) = v.chunks.iter().find(|vc| grid.linear(vc.chunk).is_none()) {
            return Err(ChunkCheckError::VisibleChunkOutsideGrid { cube: i, chunk: vc.chunk, grid });
        }
    }
    Ok(())
}

/// Light references must index the chunk's dynamic / fast lights (docs/spec/PMF-NOTES.md K4).
pub(crate) fn check_lighting(l: &CubeLighting, dynamic: usize, fast: usize) -> Result<(), ChunkCheckError> {
    if let Some(d) = l.dynamic().iter().find(|d| usize::from(d.index) >= dynamic) {
        return Err(ChunkCheckError::DynamicLightOutOfRange { index: d.index, count: dynamic });
    }
    if let Some(f) = l.fast().iter().find(|f| usize::from(f.index) >= fast) {
        return Err(ChunkCheckError::FastLightOutOfRange { index: f.index, count: fast });
    }
    Ok(())
}

/// Load-region chunk indices must lie inside the grid.
pub(crate) fn check_region(region: &Region, grid: GridSize) -> Result<(), ChunkCheckError> {
    match region.other_chunks.iter().find(|c| grid.linear(**c).is_none()) {
        Some(&chunk) => Err(ChunkCheckError::RegionChunkOutsideGrid { chunk, grid }),
        None => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------------
// The draft layout (docs/spec/PMF-NOTES.md D1, seed 003)

/// Parses the draft layout as far as the first level's common block, an LZ4 frame of its
/// declared size ([`lz4f::probe`]). `Ok` means the file is most likely a draft-layout PMF.
fn draft_first_level(bytes: &[u8]) -> ReadResult<()> {
    let mut r = Reader::new(bytes, "draft layout");
    if r.array::<3>()? != *b"PMF" || r.u8()? != 0 {
        return Err(r.invalid("not a PMF 0.x file"));
    }
    r.u64()?;
    for _ in 0..4 {
        r.cstr()?;
    }
    // Gamemodes, then difficulties.
    for _ in 0..2 {
        let n = r.u8()?;
        for _ in 0..n {
            r.cstr()?;
        }
    }
    let table = r.u32()?;
    r.skip(table as usize)?;
    let archive = r.u32()?;
    r.skip(archive as usize)?;
    let n = r.u16()?;
    let n = r.count(n.into(), min::U32, "extension sizes")?;
    let mut sizes = alloc(n);
    for _ in 0..n {
        sizes.push(r.u32()?);
    }
    for s in sizes {
        r.skip(s as usize)?;
    }
    let levels = r.u8()?;
    if levels == 0 {
        return Err(r.invalid("no levels"));
    }
    let first_size = r.u32()?;
    r.skip((usize::from(levels) - 1).saturating_mul(4))?;
    let mut lr = r.sub(first_size as usize, "draft level 0")?;
    let compressed = lr.u32()?;
    let decompressed = lr.u32()?;
    let frame = lr.sub(compressed as usize, "draft level 0 common data")?;
    // Only to word an error: check the frame, decode its first 64 KiB (not up to 1 GiB).
    lz4f::probe(&frame, decompressed.into(), 64 << 10)
}
