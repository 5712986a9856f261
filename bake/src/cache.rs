//! The bake cache: full chunk bakes saved beside a project, so that reopening it (in the editor,
//! `pmfc build` or `pmfc watch`) bakes only the chunks whose inputs changed.
//!
//! # Where
//! `<project>/bakes/<level>.<x>.<y>.<z>.<digest>.bake`, one file per chunk bake, apart from
//! `map.ron` and `chunks/` (the project reads and writes nothing here; deleting the folder only
//! costs a re-bake). The file format is docs/spec/BAKE-CACHE.md.
//!
//! # The key
//! An entry records what its bake was made from ([`Inputs`]), and is used only when all of it
//! still holds:
//! - a hash of everything level-wide a bake can read ([`Hashes::level`]): the [`COMPILER`]
//!   version, the compile settings (less the header's timestamp and compiler text), the level's
//!   frame, flags, environments, lighting, lights, entities and regions, its dense grid and
//!   occupied bounds (sun, sky and bounce rays stop at the top layer, `deps.rs`), the library
//!   and the path attribute sets;
//! - the content hash of every chunk the bake may have read ([`Hashes::chunk`], 128-bit xxh3 of
//!   the octree's canonical encoding, absent chunks included): the chunk itself, its neighbours
//!   (the 3 × 3 × 3 block), every chunk within reach (plus bounce reach) of a light
//!   that reaches it, and the chunks its rays and searches entered ([`ChunkBake::reads`]).
//!
//! Why that proves the entry current: a bake is a pure function of the map snapshot
//! (docs/spec/PMF-NOTES.md X1), and it reads chunks beyond the static set only along rays and
//! searches that are decided by the cubes they visit; those cubes are in recorded chunks, so if
//! none of them changed, every ray goes where it went and reads what it read. Level-wide data is
//! hashed whole: a light or setting changed outside the editor re-bakes the level, which is rare
//! (the editor re-bakes live and saves fresh entries). [`COMPILER`] must be bumped whenever the
//! bakes made from the same inputs change.
//!
//! # Trust
//! A cache file is input like any other: it is read by a bounded reader (sizes checked against
//! the bytes left, chunk records by the PMF chunk reader within [`ReadLimits::DEFAULT`]) and its
//! last 16 bytes are a checksum of the rest, so a truncated, corrupt or hostile file is rejected
//! ([`CacheError`]) and its chunk simply re-baked, never a panic and never a wrong bake.
//!
//! # Writing
//! [`store`] writes an entry per full bake of the current map whose file does not exist yet
//! (file names carry the digest of the inputs, so an unchanged bake is not rewritten), each to a
//! temporary file renamed into place ([`atomic::create_temp`]), then deletes every other entry:
//! the folder holds exactly the bakes of the saved map. Entries are not fsynced: a file a crash
//! left partial fails its checksum and is re-baked, which costs less than an fsync per chunk on
//! every save. Such a file keeps its name, the name of the chunk's next bake: readers delete the
//! entries they refuse as unreadable ([`Loaded::discard_unusable`]) so that [`store`] writes it.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;
use std::fs;
use std::hash::Hasher;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use glam::IVec3;
use twox_hash::XxHash3_128;

use pmfedit_core::format::bin::{ReadError, Reader, Writer};
use pmfedit_core::format::pmf::{self, read::ReadLimits};
use pmfedit_core::map::Map;
use pmfedit_core::map::coords::ChunkCoord;
use pmfedit_core::project::atomic;

use crate::compile::{AirVis, ChunkBake, ChunkStats, CompileSettings, Grid};
use crate::deps::{ChunkKey, bounce_reach, chunks_near_light, scene_lights};
use crate::light::BakedMode;

/// The compiler's version for cache keys: bump it whenever the bakes made for the same map and
/// settings change (a lighting or meshing change), so older entries are not used. A change after
/// the bakes (the file merges, the LZ4 parse) needs no bump: saved bakes stay valid.
/// `bake/tests/cache.rs::the_compiler_version_names_what_the_bake_writes` pins a digest of a
/// small map's bakes ([`bake_digest`]) per version and fails until a change of them comes with a
/// bump.
pub const COMPILER: u32 = 5;

/// The cache folder's name inside a project.
pub const DIR: &str = "bakes";

/// Entry files' extension.
const EXT: &str = "bake";

/// First bytes of an entry.
const MAGIC: &[u8; 8] = b"PMFBAKE\0";

/// The entry layout's version (docs/spec/BAKE-CACHE.md); 1 kept the air cells' lists in the
/// chunk record too.
const FORMAT: u16 = 3;
/// The format before [`FORMAT`]: the same less the top layer ([`Entry::top_from_level`]).
const FORMAT_WITHOUT_TOP: u16 = 2;

/// The largest entry file read (a chunk's records are far smaller; a bigger file is refused
/// before it is read).
pub const MAX_ENTRY_BYTES: u64 = 256 << 20;

/// The grid chunk records are encoded against in an entry: the whole PMF coordinate space, as
/// a bake's chunk references are absolute until assembly resolves them into the level's grid.
const ABSOLUTE_GRID: pmf::GridSize = pmf::GridSize { y: 256, x: 4096, z: 4096 };

/// The content hash of a chunk the level does not store.
const ABSENT: u128 = 0;

/// Why an entry was not used.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("{path}: {size} bytes, over the {MAX_ENTRY_BYTES}-byte limit for a cache entry")]
    TooLarge { path: PathBuf, size: u64 },
    #[error("{path}: {source}")]
    Format { path: PathBuf, source: ReadError },
    /// A well-formed entry whose inputs no longer hold (a changed chunk, light or setting), or
    /// one for a level the map does not have.
    #[error("{path}: made from other inputs")]
    Stale { path: PathBuf },
    /// A well-formed entry for another chunk than its file name says, or for another chunk size
    /// than its level's (copied or renamed by hand).
    #[error("{path}: the entry is for another chunk or chunk size than its name says")]
    Misnamed { path: PathBuf },
    /// The chunk record could not be encoded (what the PMF writer refuses).
    #[error("level {}, chunk (x {}, y {}, z {}): {source}", key.0, key.1.x, key.1.y, key.1.z)]
    Encode { key: ChunkKey, source: pmf::WriteError },
}

/// What a bake was made from (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inputs {
    /// [`Hashes::level`] of the bake's level.
    pub level: u128,
    /// Every chunk the bake may have read and its content hash then, in coordinate order.
    pub chunks: Vec<(ChunkCoord, u128)>,
}

impl Inputs {
    /// The digest entry files are named by.
    pub fn digest(&self) -> u128 {
        let mut w = Writer::new();
        write_inputs(&mut w, self);
        XxHash3_128::oneshot(w.as_slice())
    }
}

/// xxh3-128 behind [`Hasher`] (for [`pmfedit_core::map::octree::Octree::hash_content`]).
struct Xxh(XxHash3_128);

impl Xxh {
    fn new() -> Self {
        Xxh(XxHash3_128::new())
    }

    fn finish_128(&self) -> u128 {
        self.0.finish_128()
    }

    /// Hashes `value`'s debug form as one length-prefixed field. The derived debug forms of the
    /// map's records are complete and ordered (tables are B-trees); a release that prints them
    /// differently only misses the cache once.
    fn field(&mut self, value: &impl Debug) {
        let text = format!("{value:?}");
        self.0.write(&(text.len() as u64).to_le_bytes());
        self.0.write(text.as_bytes());
    }
}

impl Hasher for Xxh {
    fn finish(&self) -> u64 {
        self.0.finish_128() as u64
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0.write(bytes);
    }
}

/// The hashes of one map for one set of settings, computed when first asked and kept.
pub struct Hashes<'a> {
    map: &'a Map,
    settings: u128,
    levels: BTreeMap<usize, LevelHashes>,
    chunks: BTreeMap<ChunkKey, u128>,
    /// Chunks whose content was hashed here (not given by [`Hashes::with_known`]).
    hashed: usize,
}

/// Content hashes of a map's chunks ([`Hashes::chunk`]) as a [`load`] computed them:
/// [`store_known`] of the same map, unchanged since, takes them instead of walking every chunk's
/// cubes again (a third of a warm `pmfc build`'s cache write).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChunkHashes(BTreeMap<ChunkKey, u128>);

impl ChunkHashes {
    /// Chunks hashed.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A level's hash and its lights' reaches.
struct LevelHashes {
    hash: u128,
    /// Per baked light: the chunks within its reach (plus bounce reach for static lights).
    lights: Vec<BTreeSet<ChunkCoord>>,
}

impl<'a> Hashes<'a> {
    /// Hashes of `map` for bakes made with `settings`.
    pub fn new(map: &'a Map, settings: &CompileSettings) -> Self {
        // The header's fields do not reach a chunk bake.
        let settings = CompileSettings { timestamp: 0, compiler_info: String::new(), ..settings.clone() };
        let mut h = Xxh::new();
        h.write_u32(COMPILER);
        h.field(&env!("CARGO_PKG_VERSION"));
        h.field(&settings);
        let lib = &map.library;
        h.field(&lib.materials().iter().collect::<Vec<_>>());
        h.field(&lib.physics_materials().iter().collect::<Vec<_>>());
        h.field(&lib.sound_materials().iter().collect::<Vec<_>>());
        h.field(&lib.sound_environments().iter().collect::<Vec<_>>());
        h.field(&lib.weather_environments().iter().collect::<Vec<_>>());
        h.field(&lib.sky_environments().iter().collect::<Vec<_>>());
        h.field(&lib.gravity_environments().iter().collect::<Vec<_>>());
        h.field(&map.path_sets);
        Self { map, settings: h.finish_128(), levels: BTreeMap::new(), chunks: BTreeMap::new(), hashed: 0 }
    }

    /// [`Hashes::new`] starting from `known`, content hashes of this same map's chunks (see
    /// [`ChunkHashes`]; hashes of another map or an older state of it would make entries of
    /// stale bakes look current).
    pub fn with_known(map: &'a Map, settings: &CompileSettings, known: &ChunkHashes) -> Self {
        Self { chunks: known.0.clone(), ..Self::new(map, settings) }
    }

    /// Chunks whose content was hashed so far (not given by [`Hashes::with_known`]).
    pub fn hashed(&self) -> usize {
        self.hashed
    }

    /// The hash of everything level-wide a bake of level `li` reads, settings and library
    /// included.
    pub fn level(&mut self, li: usize) -> u128 {
        self.level_hashes(li).hash
    }

    fn level_hashes(&mut self, li: usize) -> &LevelHashes {
        let (map, settings) = (self.map, self.settings);
        self.levels.entry(li).or_insert_with(|| {
            let level = &map.levels[li];
            let mut h = Xxh::new();
            h.write(&settings.to_le_bytes());
            h.write_u64(li as u64);
            h.field(&level.frame());
            h.field(&level.flags);
            h.field(&level.environments);
            h.field(&level.air_physics_material);
            h.field(&level.lighting);
            let o = &level.objects;
            h.field(&o.lights().iter().collect::<Vec<_>>());
            h.field(&o.entities().iter().collect::<Vec<_>>());
            h.field(&o.regions().iter().collect::<Vec<_>>());
            h.field(&o.load_regions().iter().collect::<Vec<_>>());
            h.field(&Grid::of(level));
            h.field(&level.occupied_bounds());
            LevelHashes { hash: h.finish_128(), lights: Vec::new() }
        })
    }

    /// The content hash of a chunk ([`ABSENT`] for one the level does not store).
    pub fn chunk(&mut self, key: ChunkKey) -> u128 {
        if let Some(&h) = self.chunks.get(&key) {
            return h;
        }
        let map = self.map;
        let hash = map.levels.get(key.0).and_then(|l| l.chunk(key.1)).map_or(ABSENT, |c| {
            self.hashed += 1;
            let mut h = Xxh::new();
            c.octree().hash_content(&mut h);
            // Never ABSENT: a stored chunk and no chunk are different inputs.
            h.finish_128().max(1)
        });
        self.chunks.insert(key, hash);
        hash
    }

    /// The chunks a bake of `key` reads besides its recorded `reads`: the chunk, its neighbours
    /// (the 3 × 3 × 3 block) and every chunk within reach of a light reaching it.
    fn static_reads(&mut self, key: ChunkKey, settings: &CompileSettings) -> BTreeSet<ChunkCoord> {
        let (li, c) = key;
        // Visibility reads the neighbours' faces (their far part is written again on load from
        // the summaries as they are then, [`ChunkBake::refresh_far`]), meshing and culling the
        // face neighbours: the 3 × 3 × 3 block.
        let radius = 1;
        let mut out = BTreeSet::new();
        for dy in -radius..=radius {
            for dx in -radius..=radius {
                for dz in -radius..=radius {
                    let n = ChunkCoord::from_ivec3(c.as_ivec3() + IVec3::new(dx, dy, dz));
                    if n.is_in_grid() {
                        out.insert(n);
                    }
                }
            }
        }
        let map = self.map;
        self.level_hashes(li);
        let entry = self.levels.get_mut(&li).expect("computed above");
        if entry.lights.is_empty() {
            let level = &map.levels[li];
            let bounce = bounce_reach(level, settings);
            entry.lights = scene_lights(level)
                .iter()
                .map(|l| {
                    let extra = if l.mode == BakedMode::Static { bounce } else { 0.0 };
                    chunks_near_light(level, l, extra).into_iter().collect()
                })
                .collect();
        }
        for lit in &entry.lights {
            if lit.contains(&c) {
                out.extend(lit.iter().copied());
            }
        }
        out
    }

    /// What a bake of `key` that recorded `reads` was made from, in this map.
    pub fn inputs(&mut self, key: ChunkKey, reads: &[ChunkCoord], settings: &CompileSettings) -> Inputs {
        let mut coords = self.static_reads(key, settings);
        coords.extend(reads.iter().copied());
        let chunks = coords.into_iter().map(|c| (c, self.chunk((key.0, c)))).collect();
        Inputs { level: self.level(key.0), chunks }
    }

    /// Whether an entry for `key` made from `inputs` is current in this map: every input it
    /// recorded still holds, and its recorded chunks cover what a bake of `key` reads now
    /// (which the level hash already implies; checked so a forged entry cannot skip a
    /// neighbour).
    pub fn current(&mut self, key: ChunkKey, inputs: &Inputs, settings: &CompileSettings) -> bool {
        if key.0 >= self.map.levels.len() || inputs.level != self.level(key.0) {
            return false;
        }
        if !inputs.chunks.iter().all(|&(c, h)| self.chunk((key.0, c)) == h) {
            return false;
        }
        let recorded: BTreeSet<ChunkCoord> = inputs.chunks.iter().map(|(c, _)| *c).collect();
        self.static_reads(key, settings).is_subset(&recorded)
    }
}

/// The cache folder of the project in `project`.
pub fn dir(project: &Path) -> PathBuf {
    project.join(DIR)
}

/// An entry file's name.
fn file_name(key: ChunkKey, digest: u128) -> String {
    let (li, c) = key;
    format!("{li}.{}.{}.{}.{digest:032x}.{EXT}", c.x, c.y, c.z)
}

/// The chunk an entry file's name is for (`None`: not an entry file).
fn parse_file_name(name: &str) -> Option<ChunkKey> {
    let stem = name.strip_suffix(EXT)?.strip_suffix('.')?;
    let parts: Vec<&str> = stem.split('.').collect();
    let [li, x, y, z, digest] = parts[..] else { return None };
    if digest.len() != 32 || !digest.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    Some((li.parse().ok()?, ChunkCoord::new(x.parse().ok()?, y.parse().ok()?, z.parse().ok()?)))
}

fn write_coord(w: &mut Writer, c: ChunkCoord) {
    w.i32(c.x);
    w.i32(c.y);
    w.i32(c.z);
}

fn read_coord(r: &mut Reader<'_>) -> Result<ChunkCoord, ReadError> {
    Ok(ChunkCoord::new(r.i32()?, r.i32()?, r.i32()?))
}

fn write_inputs(w: &mut Writer, inputs: &Inputs) {
    w.bytes(&inputs.level.to_le_bytes());
    w.u32(inputs.chunks.len() as u32);
    for &(c, h) in &inputs.chunks {
        write_coord(w, c);
        w.bytes(&h.to_le_bytes());
    }
}

fn read_inputs(r: &mut Reader<'_>) -> Result<Inputs, ReadError> {
    let level = u128::from_le_bytes(r.array()?);
    let n = r.u32()?;
    let n = r.count(n.into(), 28, "input chunks")?;
    let mut chunks = Vec::with_capacity(n);
    for _ in 0..n {
        chunks.push((read_coord(r)?, u128::from_le_bytes(r.array()?)));
    }
    Ok(Inputs { level, chunks })
}

/// The record an entry stores for `bake`: the air cells' lists are written again on load from
/// `vis` (B5), so with `vis` they are left out; storing them too would repeat every far list
/// once per air cell, most of an entry's decoded bytes on an open map, only to be overwritten.
fn stored_record(bake: &ChunkBake) -> std::borrow::Cow<'_, pmf::Chunk> {
    match &bake.vis {
        Some(_) => {
            let mut pmf = bake.pmf.clone();
            for cube in &mut pmf.common.cubes {
                cube.visibility = None;
            }
            std::borrow::Cow::Owned(pmf)
        }
        None => std::borrow::Cow::Borrowed(&bake.pmf),
    }
}

/// What an entry stores of `bake` besides its record: the chunks it read, its top layer, its
/// statistics.
fn write_bake_meta(w: &mut Writer, bake: &ChunkBake) {
    w.u32(bake.reads.len() as u32);
    for &c in &bake.reads {
        write_coord(w, c);
    }
    w.u8(u8::from(bake.top_layer.is_some()));
    w.i32(bake.top_layer.unwrap_or(0));
    let s = &bake.stats;
    for v in [s.faces, s.triangles, s.vertices, s.lightmaps, s.luxels] {
        w.u64(v as u64);
    }
    w.u64(s.vis_searches);
    w.bool(s.vis_skipped);
}

/// What an entry stores of `bake` after its record: the air cells' visibility, if any.
fn write_bake_vis(w: &mut Writer, bake: &ChunkBake) {
    match &bake.vis {
        Some(vis) => {
            w.u8(1);
            vis.encode(w);
        }
        None => w.u8(0),
    }
}

/// One entry's bytes (docs/spec/BAKE-CACHE.md): header, inputs, the bake, checksum.
pub fn encode_entry(bake: &ChunkBake, inputs: &Inputs, chunk_size_exp: u8) -> Result<Vec<u8>, CacheError> {
    let key = (bake.level, bake.chunk);
    let record = stored_record(bake);
    let encoded = pmf::encode_chunk(&record, bake.level, 0, chunk_size_exp, ABSOLUTE_GRID)
        .map_err(|source| CacheError::Encode { key, source })?;
    let mut w = Writer::with_capacity(256 + 28 * inputs.chunks.len() + encoded.compressed_len());
    w.bytes(MAGIC);
    w.u16(FORMAT);
    w.u32(COMPILER);
    w.u32(bake.level as u32);
    write_coord(&mut w, bake.chunk);
    write_inputs(&mut w, inputs);
    write_bake_meta(&mut w, bake);
    w.u8(chunk_size_exp);
    for v in encoded.sizes() {
        w.u32(v);
    }
    for f in encoded.frames() {
        w.bytes(f);
    }
    write_bake_vis(&mut w, bake);
    let sum = XxHash3_128::oneshot(w.as_slice());
    w.bytes(&sum.to_le_bytes());
    Ok(w.into_inner())
}

/// A digest of everything an entry stores of `bake` (its record's uncompressed blocks, the
/// chunks it read, its top layer, statistics and visibility), but not what made it (inputs,
/// [`COMPILER`]) nor how the record is compressed: two bakes with the same digest give the same
/// entry's bake and the same exported bytes. What pins [`COMPILER`] to the bake's output (the
/// cache test `the_compiler_version_names_what_the_bake_writes`): a change to the file step
/// after the bakes (the merges of docs/spec/PMF-NOTES.md C4b/C4c, the LZ4 parse) leaves saved
/// bakes valid and needs no new version.
pub fn bake_digest(bake: &ChunkBake, chunk_size_exp: u8) -> Result<u128, CacheError> {
    let key = (bake.level, bake.chunk);
    let record = stored_record(bake);
    let blocks = pmf::chunk_blocks(&record, bake.level, 0, chunk_size_exp, ABSOLUTE_GRID)
        .map_err(|source| CacheError::Encode { key, source })?;
    let mut w = Writer::with_capacity(256 + blocks.iter().map(Vec::len).sum::<usize>());
    w.u32(bake.level as u32);
    write_coord(&mut w, bake.chunk);
    write_bake_meta(&mut w, bake);
    w.u8(chunk_size_exp);
    for b in &blocks {
        w.u64(b.len() as u64);
        w.bytes(b);
    }
    write_bake_vis(&mut w, bake);
    Ok(XxHash3_128::oneshot(w.as_slice()))
}

/// A decoded entry: the chunk it is for, what it was made from and the bake (its
/// [`ChunkBake::generation`] is 0: the caller sets the chunk's current one).
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub inputs: Inputs,
    /// The chunk size (a power of two) the record was encoded for.
    pub chunk_size_exp: u8,
    /// The bake; its [`ChunkBake::top_layer`] is `None` when [`Self::top_from_level`].
    pub bake: ChunkBake,
    /// The entry is of format 2, which kept no top layer: every bake then was made under the
    /// level's top of the map it was stored with (a rise re-baked the level), which the level
    /// hash holds, so a current entry's top is the level's top now ([`load`] sets it).
    pub top_from_level: bool,
}

/// Reads one entry's bytes; `section` names it in errors. Bounded and checked: any flaw is an
/// error, never a panic.
pub fn decode_entry(bytes: &[u8], section: &str) -> Result<Entry, ReadError> {
    let r = Reader::new(bytes, section.to_owned());
    let Some(body_len) = bytes.len().checked_sub(16) else {
        return Err(r.invalid(format!("{} bytes: shorter than a checksum", bytes.len())));
    };
    let (body, sum) = bytes.split_at(body_len);
    if XxHash3_128::oneshot(body).to_le_bytes() != sum {
        return Err(r.invalid_at(body_len as u64, "checksum mismatch: the entry is damaged"));
    }
    let mut r = Reader::new(body, section.to_owned());
    if r.array::<8>()? != *MAGIC {
        return Err(r.invalid_at(0, "not a bake cache entry (bad magic)"));
    }
    let format = r.u16()?;
    if format != FORMAT && format != FORMAT_WITHOUT_TOP {
        return Err(r.invalid(format!("entry format {format}, this build reads {FORMAT_WITHOUT_TOP} and {FORMAT}")));
    }
    let compiler = r.u32()?;
    if compiler != COMPILER {
        return Err(r.invalid(format!("made by compiler version {compiler}, this is {COMPILER}")));
    }
    let level = r.u32()? as usize;
    let chunk = read_coord(&mut r)?;
    if !chunk.is_in_grid() {
        return Err(r.invalid(format!("chunk {chunk:?} is outside the coordinate space")));
    }
    let inputs = read_inputs(&mut r)?;
    let n = r.u32()?;
    let n = r.count(n.into(), 12, "read chunks")?;
    let mut reads = Vec::with_capacity(n);
    for _ in 0..n {
        reads.push(read_coord(&mut r)?);
    }
    let top_from_level = format == FORMAT_WITHOUT_TOP;
    let top_layer = if top_from_level {
        None
    } else {
        match (r.u8()?, r.i32()?) {
            (0, _) => None,
            (1, y) => Some(y),
            (flag, _) => return Err(r.invalid(format!("top layer flag {flag}, expected 0 or 1"))),
        }
    };
    let mut v = [0u64; 5];
    for x in &mut v {
        *x = r.u64()?;
    }
    let too_big = |x: u64| usize::try_from(x).map_err(|_| r.invalid(format!("count {x} does not fit")));
    let [faces, triangles, vertices, lightmaps, luxels] = v;
    let mut stats = ChunkStats {
        faces: too_big(faces)?,
        triangles: too_big(triangles)?,
        vertices: too_big(vertices)?,
        lightmaps: too_big(lightmaps)?,
        luxels: too_big(luxels)?,
        ..ChunkStats::default()
    };
    stats.vis_searches = r.u64()?;
    stats.vis_skipped = r.bool()?;
    let exp = r.u8()?;
    let mut sizes = [0u32; 6];
    for s in &mut sizes {
        *s = r.u32()?;
    }
    let prefix = format!("{section} / chunk record");
    let mut pmf = pmf::read::read_chunk_record(&mut r, &prefix, &sizes, exp, ABSOLUTE_GRID, &ReadLimits::DEFAULT)?;
    // The entry becomes a kept bake: no spare capacity from the reader's growing lists.
    pmf.shrink_to_fit();
    if pmf.common.cubes.iter().any(|c| c.visibility.is_some()) {
        return Err(r.invalid("the chunk record carries visibility lists (an entry keeps them apart, B5)"));
    }
    let vis = match r.u8()? {
        0 => None,
        1 => {
            let vis = AirVis::decode(&mut r, pmf.common.cubes.len())?;
            // The lists as far as the entry knows them: the chunk's own cubes, no far chunks
            // until `ChunkBake::refresh_far` writes them from the level the bake is loaded into.
            vis.write_own(&mut pmf, stats.vis_skipped);
            Some(vis)
        }
        v => return Err(r.invalid(format!("visibility flag {v}, expected 0 or 1"))),
    };
    r.expect_end()?;
    Ok(Entry {
        inputs,
        chunk_size_exp: exp,
        bake: ChunkBake { level, chunk, generation: 0, pmf, stats, reads, top_layer, vis },
        top_from_level,
    })
}

/// What [`load`] found.
#[derive(Debug, Default)]
pub struct Loaded {
    /// The usable bakes, their generations set from the map.
    pub bakes: BTreeMap<ChunkKey, ChunkBake>,
    /// Entries not used and why (stale, damaged, unreadable), in file-name order.
    pub rejected: Vec<CacheError>,
    /// The content hashes of the map's chunks this load computed ([`store_known`]).
    pub hashes: ChunkHashes,
}

impl Loaded {
    /// Entries found stale (made from other inputs).
    pub fn stale(&self) -> usize {
        self.rejected.iter().filter(|e| matches!(e, CacheError::Stale { .. })).count()
    }

    /// Deletes the files of the entries refused as unreadable (damaged, misnamed, too large, or
    /// of another entry format or compiler version); returns how many went. Such a file may
    /// carry the very name the chunk's fresh bake gets (the name is the digest of the inputs,
    /// not of the bytes), and [`store`] keeps a file whose name exists: left there, it would be
    /// refused and the chunk re-baked on every open. Stale entries stay: their names differ
    /// from any current bake's, and [`store`] removes them.
    pub fn discard_unusable(&self) -> usize {
        let paths = self.rejected.iter().filter_map(|e| match e {
            CacheError::Io { path, .. }
            | CacheError::TooLarge { path, .. }
            | CacheError::Format { path, .. }
            | CacheError::Misnamed { path } => Some(path),
            CacheError::Stale { .. } | CacheError::Encode { .. } => None,
        });
        paths.filter(|p| fs::remove_file(p).is_ok()).count()
    }

    /// What this load reused and refused, for the line `pmfc build` prints and the editor shows.
    pub fn report(&self) -> Report {
        let unusable = self.rejected.iter().filter(|e| !matches!(e, CacheError::Stale { .. }));
        Report {
            reused: self.bakes.len(),
            stale: self.stale(),
            unusable: unusable.clone().count(),
            first_unusable: unusable.into_iter().next().map(ToString::to_string),
        }
    }
}

/// How an open used the cache: [`Loaded::report`]. Its display is the one line `pmfc build` and
/// the editor print ("bake cache: 25 chunks reused, 0 stale").
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Chunks whose cached bake is used.
    pub reused: usize,
    /// Well-formed entries made from other inputs (an edit outside this program, a setting).
    pub stale: usize,
    /// Entries that could not be read or are not this build's: damaged, misnamed, or written
    /// by another entry format or compiler version (a `pmfc` or editor of another release).
    pub unusable: usize,
    /// Why the first unusable entry was refused: a whole cache refused at once is nearly always
    /// one reason (another version), and the user should see it rather than a silent re-bake.
    pub first_unusable: Option<String>,
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "bake cache: {} chunks reused, {} stale", self.reused, self.stale)?;
        if self.unusable > 0 {
            write!(f, ", {} damaged, misnamed or of another version (re-baked)", self.unusable)?;
        }
        if let Some(why) = &self.first_unusable {
            write!(f, "; first: {why}")?;
        }
        Ok(())
    }
}

/// Reads the cache of the project in `project` for `map` baked with `settings`: every entry
/// whose inputs still hold. A missing folder is an empty cache; nothing here fails, an entry that
/// cannot be used is listed in [`Loaded::rejected`] and its chunk is baked again. Entries are read
/// on as many threads as the machine has ([`load_on`]).
pub fn load(project: &Path, map: &Map, settings: &CompileSettings) -> Loaded {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    load_on(project, map, settings, threads)
}

/// [`load`] on `threads` scoped threads (at least one). Each takes a run of chunks in file-name
/// order and decides each entry alone (reading, checking and decoding it, then comparing its
/// inputs with hashes of the map), so the result is the same whatever the thread count.
pub fn load_on(project: &Path, map: &Map, settings: &CompileSettings, threads: usize) -> Loaded {
    let mut out = Loaded::default();
    let folder = dir(project);
    let Ok(list) = fs::read_dir(&folder) else { return out };
    let mut files: Vec<(ChunkKey, PathBuf)> = list
        .filter_map(|e| {
            let e = e.ok()?;
            let key = parse_file_name(e.file_name().to_str()?)?;
            Some((key, e.path()))
        })
        .collect();
    files.sort();
    // Several entries may name one chunk: they are tried in name order by one thread.
    let mut chunks: Vec<(ChunkKey, Vec<PathBuf>)> = Vec::new();
    for (key, path) in files {
        match chunks.last_mut() {
            Some((k, paths)) if *k == key => paths.push(path),
            _ => chunks.push((key, vec![path])),
        }
    }
    let per_thread = chunks.len().div_ceil(threads.max(1)).max(1);
    let found: Vec<(Vec<Found>, ChunkHashes)> = std::thread::scope(|s| {
        let workers: Vec<_> =
            chunks.chunks(per_thread).map(|run| s.spawn(move || load_run(run, map, settings))).collect();
        workers.into_iter().map(|w| w.join().expect("a cache reader panicked")).collect()
    });
    for (run, hashes) in found {
        // Runs share neighbours: a chunk hashed by two threads has the one hash.
        out.hashes.0.extend(hashes.0);
        for (key, bake, rejected) in run {
            out.rejected.extend(rejected);
            if let Some(bake) = bake {
                out.bakes.insert(key, bake);
            }
        }
    }
    out
}

/// One chunk's outcome in [`load_on`]: the bake used, if any, and the entries refused before it.
type Found = (ChunkKey, Option<ChunkBake>, Vec<CacheError>);

/// Decides the entries of a run of chunks, each chunk's in name order; also returns the
/// chunk hashes it computed.
fn load_run(run: &[(ChunkKey, Vec<PathBuf>)], map: &Map, settings: &CompileSettings) -> (Vec<Found>, ChunkHashes) {
    let mut hashes = Hashes::new(map, settings);
    let found = run
        .iter()
        .map(|(key, paths)| {
            let key = *key;
            let mut rejected = Vec::new();
            let Some(level) = map.levels.get(key.0) else {
                rejected.extend(paths.iter().map(|path| CacheError::Stale { path: path.clone() }));
                return (key, None, rejected);
            };
            for path in paths {
                match read_entry(path, key, level.chunk_size_log2()) {
                    Ok(entry) if hashes.current(key, &entry.inputs, settings) => {
                        let mut bake = entry.bake;
                        bake.generation = level.chunk(key.1).map_or(0, |c| c.generation());
                        if entry.top_from_level {
                            bake.top_layer = crate::compile::top_layer(level);
                        }
                        return (key, Some(bake), rejected);
                    }
                    Ok(_) => rejected.push(CacheError::Stale { path: path.clone() }),
                    Err(e) => rejected.push(e),
                }
            }
            (key, None, rejected)
        })
        .collect();
    (found, ChunkHashes(hashes.chunks))
}

/// Reads and decodes one entry file for `key` (named so) of a level with chunks of
/// `2^chunk_size_exp` units.
fn read_entry(path: &Path, key: ChunkKey, chunk_size_exp: u8) -> Result<Entry, CacheError> {
    let io = |source| CacheError::Io { path: path.to_owned(), source };
    let size = fs::metadata(path).map_err(io)?.len();
    if size > MAX_ENTRY_BYTES {
        return Err(CacheError::TooLarge { path: path.to_owned(), size });
    }
    let bytes = fs::read(path).map_err(io)?;
    let name = path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let entry = decode_entry(&bytes, &format!("{DIR}/{name}"))
        .map_err(|source| CacheError::Format { path: path.to_owned(), source })?;
    // An entry copied under another chunk's name, or made for another chunk size, is not this
    // chunk's bake.
    if (entry.bake.level, entry.bake.chunk) != key || entry.chunk_size_exp != chunk_size_exp {
        return Err(CacheError::Misnamed { path: path.to_owned() });
    }
    Ok(entry)
}

/// What [`store`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stored {
    /// Entries written.
    pub written: usize,
    /// Entries already there (an unchanged bake).
    pub kept: usize,
    /// Files deleted (entries of older maps, leftovers).
    pub removed: usize,
    /// Bytes of the entries the folder holds now.
    pub bytes: u64,
    /// Chunks whose content was hashed for the entries' keys (those not given to
    /// [`store_known`]).
    pub hashed: usize,
}

/// Writes the cache of the project in `project`: an entry for each of `bakes` (full bakes of
/// `map` made with `settings`) that is not on disk yet, then deletes every other file of the
/// folder that looks like an entry or a temporary file. See the module documentation.
pub fn store<'b>(
    project: &Path,
    map: &Map,
    settings: &CompileSettings,
    bakes: impl IntoIterator<Item = &'b ChunkBake>,
) -> Result<Stored, CacheError> {
    store_known(project, map, settings, bakes, &ChunkHashes::default())
}

/// [`store`] taking the content hashes in `known` as they are: the [`Loaded::hashes`] of a load
/// of this same map, which has not changed since (a build that only baked what the load did
/// not give). The entries written and their names are [`store`]'s.
pub fn store_known<'b>(
    project: &Path,
    map: &Map,
    settings: &CompileSettings,
    bakes: impl IntoIterator<Item = &'b ChunkBake>,
    known: &ChunkHashes,
) -> Result<Stored, CacheError> {
    let folder = dir(project);
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| CacheError::Io { path, source }
    };
    fs::create_dir_all(&folder).map_err(io(&folder))?;
    let mut hashes = Hashes::with_known(map, settings, known);
    let mut stored = Stored::default();
    let mut keep = BTreeSet::new();
    for bake in bakes {
        let key = (bake.level, bake.chunk);
        let Some(level) = map.levels.get(key.0) else { continue };
        let inputs = hashes.inputs(key, &bake.reads, settings);
        let name = file_name(key, inputs.digest());
        let path = folder.join(&name);
        if let Ok(meta) = fs::metadata(&path) {
            stored.kept += 1;
            stored.bytes += meta.len();
        } else {
            let bytes = encode_entry(bake, &inputs, level.chunk_size_log2())?;
            let (tmp, mut file) = atomic::create_temp(&path).map_err(io(&path))?;
            let written = file.write_all(&bytes).and_then(|()| {
                drop(file);
                fs::rename(&tmp, &path)
            });
            if let Err(e) = written {
                let _ = fs::remove_file(&tmp);
                return Err(io(&path)(e));
            }
            stored.written += 1;
            stored.bytes += bytes.len() as u64;
        }
        keep.insert(name);
    }
    for e in fs::read_dir(&folder).map_err(io(&folder))?.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let ours = name.ends_with(&format!(".{EXT}")) || name.ends_with(".tmp");
        if ours && !keep.contains(&name) && fs::remove_file(e.path()).is_ok() {
            stored.removed += 1;
        }
    }
    stored.hashed = hashes.hashed();
    Ok(stored)
}
