//! PMF 0.0 writer, the mirror of `read.rs` (record by record, same function names with
//! `write_` for `read_`).
//!
//! # Decisions
//! - **String tables (S1, S3).** Each section's table is built while its content is written:
//!   `""` at offset 0, then every other string once, in order of first use. A section that interns
//!   no string writes a 0-size table (S1 only requires `""` in *non-empty* tables). The common chunk
//!   table is built from the common chunk's strings first, then the client chunk's sound / sky
//!   region names (the client chunk has no table of its own).
//! - **Derived flag bits.** Cube "has visibility" = `visibility.is_some()`, "has lighting" =
//!   the client cube's `lighting.is_some()`, "has pathfinding" = the server cube's
//!   `pathfinding.is_some()`; parent child bits and extended-geometry "point moved" bits = the
//!   `Some` entries. Raw flag bytes of the model (level, material, physics, light, sky flags) are
//!   written as they are.
//! - **Moved points.** A `Some` point is written even if it equals its unmoved corner: dropping such
//!   points (C4) is the compiler's job, not the writer's, so that `write(read(b)) == b` holds.
//! - **Refusals.** The writer refuses everything the reader rejects (sharing the reader's checks:
//!   `validate_octree`, `check_cube`, `check_lighting`, `check_region`) plus what cannot be
//!   encoded (counts over their field width, sizes over `u32`, strings with NUL) and empty
//!   gamemode names. Errors name the place (`level 0 / chunk y0 x1 z2 / cube 3`) and the problem.
//! - **Determinism (X1).** The same [`File`] always gives the same bytes (LZ4 frames from
//!   [`lz4f::compress`], tables in order of first use).

use super::entity::write_entities;
use std::io::{Seek, SeekFrom, Write};

use super::error::{StreamError, WriteError, WriteResult};
use super::read::{
    CubeHeader, FACE_RESERVED, MAX_CHUNK_SIZE_EXP, check_cube, check_lighting, check_region, grid_text, validate_octree,
};
use super::strings::StringTableBuilder;
use super::types::*;
use crate::format::bin::Writer;
use crate::format::lz4_block::{BlockCompressor, Compression};
use crate::format::lz4f;

/// Serialises a whole `.pmf` file.
pub fn write(file: &File) -> WriteResult<Vec<u8>> {
    write_as(file, Compression::Fast)
}

/// [`write`] with every LZ4 frame searched as `compression` says (PMF-NOTES L1): the same
/// records, any decoder reads either; [`Compression::High`] is smaller and several times slower.
pub fn write_as(file: &File, compression: Compression) -> WriteResult<Vec<u8>> {
    Ok(write_file(file, FileChunks::Own, compression)?.to_vec())
}

/// One chunk as [`write`] puts it in a file: its common, client and server blocks, each encoded
/// and compressed into an LZ4 frame, the three frames in one buffer. [`ChunkEncoder::encode`]
/// makes it (a compiler may call it on several threads, this crate has none),
/// [`write_with_chunks`] places it.
#[derive(Debug, Clone)]
pub struct EncodedChunk {
    /// The common, client and server frames, one after the other.
    bytes: Vec<u8>,
    /// The three compressed sizes, then the three decompressed sizes.
    sizes: [u32; 6],
}

impl EncodedChunk {
    /// The bytes the chunk's frames take in the file.
    pub fn compressed_len(&self) -> usize {
        self.bytes.len()
    }

    /// The chunk's entry in its level's chunk table: the three compressed sizes, then the three
    /// decompressed sizes (what [`read::read_chunk_record`](super::read::read_chunk_record)
    /// takes back).
    pub fn sizes(&self) -> [u32; 6] {
        self.sizes
    }

    /// The common, client and server LZ4 frames, in the order a file stores them.
    pub fn frames(&self) -> [&[u8]; 3] {
        let (common, rest) = self.bytes.split_at(self.sizes[0] as usize);
        let (client, server) = rest.split_at(self.sizes[1] as usize);
        [common, client, server]
    }
}

/// Encodes and compresses chunks one after the other, keeping its buffers and LZ4 tables from
/// chunk to chunk: an export's worker encodes thousands, and fresh buffers for each cost more
/// in allocation and the kernel's zeroing of new pages than the encoding itself. The output
/// does not depend on what was encoded before.
#[derive(Debug, Clone)]
pub struct ChunkEncoder {
    lz4: BlockCompressor,
    /// The common, client and server blocks of the last chunk (see [`write_blocks`]).
    blocks: [Vec<u8>; 3],
    /// The last chunk's frames, copied out at their exact size.
    frames: Vec<u8>,
}

impl Default for ChunkEncoder {
    fn default() -> Self {
        Self::new()
    }
}

impl ChunkEncoder {
    /// An encoder with empty buffers; they grow to the largest chunk it meets.
    pub fn new() -> Self {
        Self::with_compression(Compression::Fast)
    }

    /// [`Self::new`] whose frames are searched as `compression` says.
    pub fn with_compression(compression: Compression) -> Self {
        Self { lz4: BlockCompressor::with_compression(0, compression), blocks: Default::default(), frames: Vec::new() }
    }

    /// How this encoder searches its frames.
    pub fn compression(&self) -> Compression {
        self.lz4.compression()
    }

    /// Encodes and compresses chunk `index` (in the grid's `[Y][X][Z]` order) of level
    /// `level_index`, whose chunks are `2^chunk_size_exp` units and whose grid is `grid`:
    /// exactly what [`write`] does for that chunk, errors included. A pure function of its
    /// arguments, so chunks encoded in any order, on any thread, after any others give the
    /// same file.
    pub fn encode(
        &mut self,
        chunk: &Chunk,
        level_index: usize,
        index: usize,
        chunk_size_exp: u8,
        grid: GridSize,
    ) -> WriteResult<EncodedChunk> {
        let cctx = chunk_context(level_index, index, grid);
        let blocks = write_blocks(&mut self.blocks, chunk, chunk_size_exp, grid, &cctx)?;
        let mut sizes = [0; 6];
        for (k, what) in ["common", "client", "server"].into_iter().enumerate() {
            let ctx = format!("{cctx} / {what} data");
            sizes[3 + k] = decompressed_size(blocks[k].len(), &ctx)?;
        }
        self.frames.clear();
        for (k, what) in ["common", "client", "server"].into_iter().enumerate() {
            let n = lz4f::compress_into(&mut self.lz4, blocks[k], &mut self.frames);
            sizes[k] = len_u32(n, &format!("{cctx} / {what} data"), "compressed size")?;
        }
        Ok(EncodedChunk { bytes: self.frames.clone(), sizes })
    }
}

/// [`ChunkEncoder::encode`] with a fresh encoder: for one chunk now and then.
pub fn encode_chunk(
    chunk: &Chunk,
    level_index: usize,
    index: usize,
    chunk_size_exp: u8,
    grid: GridSize,
) -> WriteResult<EncodedChunk> {
    ChunkEncoder::new().encode(chunk, level_index, index, chunk_size_exp, grid)
}

/// The uncompressed common, client and server blocks that [`encode_chunk`] compresses (to
/// measure compressors on the very bytes a file holds).
pub fn chunk_blocks(
    chunk: &Chunk,
    level_index: usize,
    index: usize,
    chunk_size_exp: u8,
    grid: GridSize,
) -> WriteResult<[Vec<u8>; 3]> {
    write_chunk(chunk, chunk_size_exp, grid, &chunk_context(level_index, index, grid))
}

/// Where chunk `index` of level `level_index` is, for errors (`level 0 / chunk y0 x1 z2`).
fn chunk_context(level_index: usize, index: usize, grid: GridSize) -> String {
    format!("level {level_index} / chunk {}", grid.index_of(index))
}

/// [`write`] with every level's chunks already encoded: `chunks[i]` holds level `i`'s, in grid
/// order ([`ChunkEncoder::encode`]), and the levels of `file` hold none (their `chunks` are
/// ignored). Gives the same bytes as [`write_as`] of the file with those chunks in it, as the
/// pieces they are written from: the chunks' frames are borrowed, not copied into one buffer.
/// `compression` is the level blocks' (the chunks were compressed by their encoder; an
/// encoder [`ChunkEncoder::with_compression`] the same makes the bytes [`write_as`]'s).
pub fn write_with_chunks<'a>(
    file: &'a File,
    chunks: &'a [Vec<EncodedChunk>],
    compression: Compression,
) -> WriteResult<FileBytes<'a>> {
    if chunks.len() != file.levels.len() {
        return Err(WriteError::new(
            "data",
            format!("chunks for {} levels, but the file has {} levels", chunks.len(), file.levels.len()),
        ));
    }
    write_file(file, FileChunks::Encoded(chunks), compression)
}

/// A serialised file as the pieces it is made of, in order: the small sections built by the
/// writer, the embedded archive and extensions and the chunks' frames borrowed from where they
/// are. [`Self::write_to`] hands them to the output as they are, so an export copies each
/// compressed byte once (into the file) and never holds the file whole in memory.
#[derive(Debug, Default)]
pub struct FileBytes<'a> {
    /// Never an empty [`Part::Bytes`] (see [`Self::write_to`]).
    parts: Vec<Part<'a>>,
    len: usize,
}

/// A piece of a [`FileBytes`].
#[derive(Debug)]
enum Part<'a> {
    Bytes(std::borrow::Cow<'a, [u8]>),
    /// A level's chunk frames, this many bytes, written elsewhere ([`ChunkStream`]): only in
    /// the layouts a stream makes, never in a [`FileBytes`] handed out.
    Frames(usize),
}

impl<'a> FileBytes<'a> {
    fn push(&mut self, part: impl Into<std::borrow::Cow<'a, [u8]>>) {
        let part = part.into();
        if !part.is_empty() {
            self.len += part.len();
            self.parts.push(Part::Bytes(part));
        }
    }

    fn push_frames(&mut self, len: usize) {
        self.len += len;
        self.parts.push(Part::Frames(len));
    }

    fn append(&mut self, other: FileBytes<'a>) {
        self.len += other.len;
        self.parts.extend(other.parts);
    }

    /// The pieces' bytes; only layouts of a [`ChunkStream`] have frames written elsewhere.
    fn bytes(&self) -> impl Iterator<Item = &[u8]> {
        self.parts.iter().map(|p| match p {
            Part::Bytes(b) => &b[..],
            Part::Frames(_) => unreachable!("a FileBytes handed out holds all of its bytes"),
        })
    }

    /// The file's size, bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the file is empty (never, for a file the writer accepted).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The whole file in one buffer.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len);
        for p in self.bytes() {
            out.extend_from_slice(p);
        }
        out
    }

    /// Writes the file to `w`, up to 1 024 pieces per call (Linux's `IOV_MAX` for `writev`), so
    /// a file of thousands of chunks takes a few system calls and no copy in between.
    pub fn write_to(&self, w: &mut impl Write) -> std::io::Result<()> {
        use std::io::{ErrorKind, IoSlice};
        let mut slices: Vec<IoSlice<'_>> = self.bytes().map(IoSlice::new).collect();
        let mut rest = &mut slices[..];
        while !rest.is_empty() {
            // No piece is empty, so a write of 0 bytes is the writer's refusal, not a no-op.
            match w.write_vectored(&rest[..rest.len().min(1024)]) {
                Ok(0) => return Err(ErrorKind::WriteZero.into()),
                Ok(n) => IoSlice::advance_slices(&mut rest, n),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// Writes a file whose chunks arrive one by one in file order (level by level, each in grid
/// order) as they are encoded: each chunk's frames go to their place in the file at once, while
/// they are still in the cache and while the next chunks are being encoded, and are dropped;
/// everything else (the header, each level's data and chunk table, the entities) is written by
/// [`Self::finish`], once the chunk tables are known. Their lengths do not depend on the chunks,
/// so where every level's frames begin is known from the start. The same bytes as [`write`] of
/// the file with those chunks in it.
#[derive(Debug)]
pub struct ChunkStream<'a, W> {
    file: &'a File,
    w: W,
    /// Per level: where its frames begin when the frames of the levels before it take no room.
    starts: Vec<u64>,
    /// Per level: the sizes of the chunks pushed so far.
    sizes: Vec<Vec<[u32; 6]>>,
    /// The level the next chunk belongs to.
    level: usize,
    /// Frame bytes written so far.
    written: u64,
    /// How the level blocks are compressed (the chunks come compressed).
    compression: Compression,
}

impl<'a, W: Write + Seek> ChunkStream<'a, W> {
    /// A stream of `file`'s chunks into `w` (`file`'s own `chunks` are ignored, as by
    /// [`write_with_chunks`]). Refuses what [`write`] refuses outside the chunks.
    pub fn new(file: &'a File, mut w: W, compression: Compression) -> Result<Self, StreamError> {
        let layout = write_file(file, FileChunks::Placeholder, compression)?;
        let mut starts = Vec::with_capacity(file.levels.len());
        let mut at = 0;
        for p in &layout.parts {
            match p {
                Part::Bytes(b) => at += b.len() as u64,
                Part::Frames(_) => starts.push(at),
            }
        }
        w.seek(SeekFrom::Start(starts[0]))?;
        let sizes = file.levels.iter().map(|l| Vec::with_capacity(l.grid.len())).collect();
        Ok(Self { file, w, starts, sizes, level: 0, written: 0, compression })
    }

    /// Writes the next chunk's frames.
    pub fn push(&mut self, chunk: &EncodedChunk) -> Result<(), StreamError> {
        loop {
            let Some(level) = self.file.levels.get(self.level) else {
                return Err(WriteError::new("data", "more chunks than the levels' grids hold").into());
            };
            if self.sizes[self.level].len() < level.grid.len() {
                break;
            }
            self.level += 1;
            if let Some(start) = self.starts.get(self.level) {
                self.w.seek(SeekFrom::Start(start + self.written))?;
            }
        }
        self.w.write_all(&chunk.bytes)?;
        self.written += chunk.bytes.len() as u64;
        self.sizes[self.level].push(chunk.sizes);
        Ok(())
    }

    /// Writes the rest of the file (refusing it as [`write`] does if a level lacks chunks);
    /// returns the writer and the file's size.
    pub fn finish(mut self) -> Result<(W, u64), StreamError> {
        let layout = write_file(self.file, FileChunks::Sizes(&self.sizes), self.compression)?;
        let mut at = 0;
        for p in &layout.parts {
            match p {
                Part::Bytes(b) => {
                    self.w.seek(SeekFrom::Start(at))?;
                    self.w.write_all(b)?;
                    at += b.len() as u64;
                }
                Part::Frames(n) => at += *n as u64,
            }
        }
        self.w.seek(SeekFrom::Start(at))?;
        Ok((self.w, at))
    }
}

/// Where [`write_file`] takes each level's chunks from.
#[derive(Debug, Clone, Copy)]
enum FileChunks<'a> {
    /// The levels' own `chunks`, encoded there.
    Own,
    /// Encoded already, per level ([`write_with_chunks`]).
    Encoded(&'a [Vec<EncodedChunk>]),
    /// Only their sizes, per level; the frames are written elsewhere ([`ChunkStream::finish`]).
    Sizes(&'a [Vec<[u32; 6]>]),
    /// As many chunks as each grid holds, of no size: a layout for where the frames begin.
    Placeholder,
}

fn write_file<'a>(file: &'a File, chunks: FileChunks<'a>, compression: Compression) -> WriteResult<FileBytes<'a>> {
    let mut out = FileBytes::default();
    let mut w = Writer::new();
    write_header(&mut w, &file.header)?;

    // Data's table is written first but filled by the global entities at the end.
    let mut table = StringTableBuilder::new();
    let mut entities = Writer::new();
    write_entities(&mut entities, &mut table, &file.entities)?;
    write_table(&mut w, &table, "data")?;

    w.u32(len_u32(file.archive.len(), "data", "embedded archive size")?);
    out.push(w.into_inner());
    out.push(&file.archive[..]);

    let mut w = Writer::new();
    let n = file.extensions.len();
    w.u16(u16::try_from(n).map_err(|_| WriteError::new("data", format!("too many extensions: {n} (at most 65535)")))?);
    for (i, e) in file.extensions.iter().enumerate() {
        w.u32(len_u32(e.len(), &format!("extension {i}"), "extension size")?);
    }
    out.push(w.into_inner());
    for e in &file.extensions {
        out.push(&e[..]);
    }

    let n = file.levels.len();
    if n == 0 {
        return Err(WriteError::new("data", "a file needs at least one level"));
    }
    let count = u8::try_from(n).map_err(|_| WriteError::new("data", format!("too many levels: {n} (at most 255)")))?;
    let mut levels = Vec::with_capacity(n);
    for (i, level) in file.levels.iter().enumerate() {
        levels.push(write_level(level, i, chunks, compression)?);
    }
    let mut w = Writer::new();
    w.u8(count);
    for (i, l) in levels.iter().enumerate() {
        w.u32(len_u32(l.len(), &format!("level {i}"), "level data size")?);
    }
    out.push(w.into_inner());
    for l in levels {
        out.append(l);
    }
    out.push(entities.into_inner());
    Ok(out)
}

pub(crate) fn write_header(w: &mut Writer, h: &Header) -> WriteResult<()> {
    w.bytes(b"PMF");
    w.u8(0);
    w.u64(h.creation_time);
    for (s, what) in [
        (&h.name, "name"),
        (&h.description, "description"),
        (&h.authors, "authors"),
        (&h.compiler_info, "compiler info"),
    ] {
        check_no_nul(s, "header", what)?;
        w.cstr(s);
    }
    let n = h.gamemodes.len();
    if n > MAX_GAMEMODES {
        return Err(WriteError::new("header", format!("too many gamemodes: {n} (at most {MAX_GAMEMODES})")));
    }
    w.u8(n as u8);
    for (i, g) in h.gamemodes.iter().enumerate() {
        let ctx = format!("header / gamemode {i}");
        check_no_nul(g, &ctx, "gamemode name")?;
        if g.len() > MAX_GAMEMODE_LEN {
            return Err(WriteError::new(
                ctx,
                format!("gamemode name {g:?} is {} bytes long (at most {MAX_GAMEMODE_LEN})", g.len()),
            ));
        }
        w.cstr(g);
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Helpers

fn check_no_nul(s: &str, ctx: &str, what: &str) -> WriteResult<()> {
    if s.as_bytes().contains(&0) {
        Err(WriteError::new(ctx, format!("{what} {s:?} contains a NUL byte")))
    } else {
        Ok(())
    }
}

/// Writes a `String` field (offset into `b`), refusing strings with NUL.
fn write_str(w: &mut Writer, b: &mut StringTableBuilder, s: &str, ctx: &str) -> WriteResult<()> {
    check_no_nul(s, ctx, "string")?;
    b.write_str(w, s);
    Ok(())
}

/// `e`, raised with an empty context, placed under `ctx()`: the loops over every cube of a chunk
/// name the cube only when it fails (a `format!` per cube was a tenth of the encoding).
fn within(ctx: impl FnOnce() -> String, e: WriteError) -> WriteError {
    WriteError { context: ctx() + &e.context, ..e }
}

fn len_u32(n: usize, ctx: &str, what: &str) -> WriteResult<u32> {
    u32::try_from(n).map_err(|_| WriteError::new(ctx, format!("{what} {n} does not fit in a u32")))
}

fn count_u8(n: usize, ctx: &str, what: &str) -> WriteResult<u8> {
    u8::try_from(n).map_err(|_| WriteError::new(ctx, format!("too many {what}: {n} (at most 255)")))
}

fn count_u16(n: usize, ctx: &str, what: &str) -> WriteResult<u16> {
    u16::try_from(n).map_err(|_| WriteError::new(ctx, format!("too many {what}: {n} (at most 65535)")))
}

fn count_u32(n: usize, ctx: &str, what: &str) -> WriteResult<u32> {
    u32::try_from(n).map_err(|_| WriteError::new(ctx, format!("too many {what}: {n} (at most 4294967295)")))
}

fn write_table(w: &mut Writer, b: &StringTableBuilder, ctx: &str) -> WriteResult<()> {
    len_u32(b.len(), ctx, "string table size")?;
    b.write_table(w);
    Ok(())
}

/// `u32 table size` + table + `content`: a section whose table precedes the strings' uses.
fn with_table(b: &StringTableBuilder, content: Writer, ctx: &str) -> WriteResult<Vec<u8>> {
    let mut out = Writer::with_capacity(4 + b.len() + content.len());
    write_table(&mut out, b, ctx)?;
    out.bytes(content.as_slice());
    Ok(out.into_inner())
}

/// An LZ4 frame and the size of the data it holds, both checked to fit a `u32`.
#[derive(Debug, Clone)]
struct Frame {
    bytes: Vec<u8>,
    compressed: u32,
    decompressed: u32,
}

fn compress(data: &[u8], ctx: &str, compression: Compression) -> WriteResult<Frame> {
    let decompressed = decompressed_size(data.len(), ctx)?;
    let bytes = lz4f::compress_as(data, compression);
    let compressed = len_u32(bytes.len(), ctx, "compressed size")?;
    Ok(Frame { bytes, compressed, decompressed })
}

/// The size of a block to be compressed, checked against what a reader accepts.
fn decompressed_size(n: usize, ctx: &str) -> WriteResult<u32> {
    let decompressed = len_u32(n, ctx, "decompressed size")?;
    if u64::from(decompressed) > lz4f::MAX_DECOMPRESSED {
        return Err(WriteError::new(ctx, format!("decompressed size {decompressed} is over the 1 GiB limit")));
    }
    Ok(decompressed)
}

// ---------------------------------------------------------------------------------------------
// Levels

/// Level `li`'s bytes, its chunks taken from `chunks` ([`FileChunks`]).
fn write_level<'a>(
    level: &Level,
    li: usize,
    chunks: FileChunks<'a>,
    compression: Compression,
) -> WriteResult<FileBytes<'a>> {
    let ctx = format!("level {li}");
    if level.chunk_size_exp > MAX_CHUNK_SIZE_EXP {
        return Err(WriteError::new(
            &ctx,
            format!("chunk size exponent {} is out of range (0..=15)", level.chunk_size_exp),
        ));
    }
    let grid = level.grid;
    if !grid.is_valid() {
        return Err(WriteError::new(
            &ctx,
            format!("grid of {} is out of range (Y 1..=256, X and Z 1..=4096)", grid_text(grid)),
        ));
    }
    let chunk_count = match chunks {
        FileChunks::Own => level.chunks.len(),
        FileChunks::Encoded(e) => e[li].len(),
        FileChunks::Sizes(s) => s[li].len(),
        FileChunks::Placeholder => grid.len(),
    };
    if chunk_count != grid.len() {
        return Err(WriteError::new(
            &ctx,
            format!("{chunk_count} chunks, but the grid of {} needs {}", grid_text(grid), grid.len()),
        ));
    }
    if grid.linear(level.center_chunk).is_none() {
        return Err(WriteError::new(
            &ctx,
            format!("center chunk {} lies outside the grid of {}", level.center_chunk, grid_text(grid)),
        ));
    }

    let common = compress(&write_level_common(&level.common, &ctx)?, &format!("{ctx} / common data"), compression)?;
    let client = compress(
        &write_level_client(&level.client, level.common.materials.len(), &ctx)?,
        &format!("{ctx} / client data"),
        compression,
    )?;
    let server = compress(&write_level_server(&level.server, &ctx)?, &format!("{ctx} / server data"), compression)?;

    let owned = match chunks {
        FileChunks::Own => {
            let mut encoder = ChunkEncoder::with_compression(compression);
            level
                .chunks
                .iter()
                .enumerate()
                .map(|(i, chunk)| encoder.encode(chunk, li, i, level.chunk_size_exp, grid))
                .collect::<WriteResult<Vec<_>>>()?
        }
        _ => Vec::new(),
    };

    let size = 1 + 24 + 9 + common.bytes.len() + client.bytes.len() + server.bytes.len();
    let mut w = Writer::with_capacity(size + 24 * chunk_count);
    w.u8(level.flags);
    write_frame_sizes(&mut w, [&common, &client, &server]);
    for f in [&common, &client, &server] {
        w.bytes(&f.bytes);
    }
    w.u8(level.chunk_size_exp);
    write_grid_size(&mut w, grid, &ctx)?;
    write_chunk_index(&mut w, level.center_chunk);
    let sizes: &mut dyn Iterator<Item = [u32; 6]> = match chunks {
        FileChunks::Own => &mut owned.iter().map(|c| c.sizes),
        FileChunks::Encoded(e) => &mut e[li].iter().map(|c| c.sizes),
        FileChunks::Sizes(s) => &mut s[li].iter().copied(),
        FileChunks::Placeholder => &mut std::iter::repeat_n([0; 6], chunk_count),
    };
    for s in sizes {
        w.u32s(&s);
    }
    let mut out = FileBytes::default();
    out.push(w.into_inner());
    match chunks {
        FileChunks::Own => owned.into_iter().for_each(|c| out.push(c.bytes)),
        FileChunks::Encoded(e) => e[li].iter().for_each(|c| out.push(&c.bytes[..])),
        FileChunks::Sizes(s) => {
            out.push_frames(s[li].iter().map(|s| s[..3].iter().map(|&n| n as usize).sum::<usize>()).sum())
        }
        FileChunks::Placeholder => out.push_frames(0),
    }
    Ok(out)
}

/// Three compressed sizes, then three decompressed sizes.
fn write_frame_sizes(w: &mut Writer, frames: [&Frame; 3]) {
    for f in frames {
        w.u32(f.compressed);
    }
    for f in frames {
        w.u32(f.decompressed);
    }
}

pub(crate) fn write_grid_size(w: &mut Writer, g: GridSize, ctx: &str) -> WriteResult<()> {
    let bits = g.to_bits().ok_or_else(|| {
        WriteError::new(ctx, format!("grid of {} is out of range (Y 1..=256, X and Z 1..=4096)", grid_text(g)))
    })?;
    w.u32(bits);
    Ok(())
}

/// Writes a chunk index. Callers check that it is valid (x, z < 4096) or inside the grid.
pub(crate) fn write_chunk_index(w: &mut Writer, c: ChunkIndex) {
    w.u32(c.to_bits());
}

/// Returns the decompressed common, client and server blocks of one chunk.
pub(crate) fn write_chunk(chunk: &Chunk, exp: u8, grid: GridSize, ctx: &str) -> WriteResult<[Vec<u8>; 3]> {
    Ok(write_blocks(&mut Default::default(), chunk, exp, grid, ctx)?.map(<[u8]>::to_vec))
}

/// Writes the common, client and server blocks of one chunk into `bufs` (cleared first, so an
/// encoder reuses them) and returns them.
fn write_blocks<'b>(
    bufs: &'b mut [Vec<u8>; 3],
    chunk: &Chunk,
    exp: u8,
    grid: GridSize,
    ctx: &str,
) -> WriteResult<[&'b [u8]; 3]> {
    let mut b = StringTableBuilder::new();
    let mut common = tabled_writer(std::mem::take(&mut bufs[0]));
    write_chunk_common(&mut common, &mut b, chunk, exp, grid, ctx)?;
    let mut client = std::mem::take(&mut bufs[1]);
    client.clear();
    let mut client = Writer::from_vec(client);
    write_chunk_client(&mut client, &mut b, &chunk.client, &chunk.common, ctx)?;
    let (common, common_at) = finish_tabled(&b, common, &format!("{ctx} / common data"))?;
    let (server, server_at) =
        write_chunk_server(std::mem::take(&mut bufs[2]), &chunk.server, chunk.common.cubes.len(), grid, ctx)?;
    *bufs = [common, client.into_inner(), server];
    let [c, l, s] = bufs;
    Ok([&c[common_at..], l, &s[server_at..]])
}

/// Room left in front of a chunk block's content for its string table, which is complete only
/// once the content is written: the table then goes into the room, right before the content,
/// instead of both being copied into a new buffer. Chunk tables are a few names; a larger one
/// moves the content once.
const TABLE_ROOM: usize = 1024;

/// A writer over `buf`, cleared, that starts after [`TABLE_ROOM`] bytes: for a block whose
/// table [`finish_tabled`] puts in front.
fn tabled_writer(mut buf: Vec<u8>) -> Writer {
    buf.clear();
    buf.resize(TABLE_ROOM, 0);
    Writer::from_vec(buf)
}

/// `u32 table size` + `b`'s table + the content written after [`tabled_writer`]'s room: the
/// buffer and where the block starts in it (what [`with_table`] gives, without the copy).
fn finish_tabled(b: &StringTableBuilder, w: Writer, ctx: &str) -> WriteResult<(Vec<u8>, usize)> {
    let size = len_u32(b.len(), ctx, "string table size")?;
    let mut buf = w.into_inner();
    let need = 4 + b.len();
    if need > TABLE_ROOM {
        buf.splice(..0, std::iter::repeat_n(0, need - TABLE_ROOM));
    }
    let at = TABLE_ROOM.saturating_sub(need);
    buf[at..at + 4].copy_from_slice(&size.to_le_bytes());
    buf[at + 4..at + need].copy_from_slice(b.bytes());
    Ok((buf, at))
}

// ---------------------------------------------------------------------------------------------
// Level blocks

/// Common level data, with its string table.
pub(crate) fn write_level_common(c: &LevelCommon, ctx: &str) -> WriteResult<Vec<u8>> {
    let ctx = format!("{ctx} / common data");
    let mut b = StringTableBuilder::new();
    let mut w = Writer::new();
    w.u16(count_u16(c.materials.len(), &ctx, "materials")?);
    for (i, m) in c.materials.iter().enumerate() {
        write_material(&mut w, &mut b, m, &format!("{ctx} / material {i}"))?;
    }
    w.u16(count_u16(c.physics_materials.len(), &ctx, "physics materials")?);
    for (i, m) in c.physics_materials.iter().enumerate() {
        write_physics_material(&mut w, &mut b, m, &format!("{ctx} / physics material {i}"))?;
    }
    w.u16(count_u16(c.sound_materials.len(), &ctx, "sound materials")?);
    for m in &c.sound_materials {
        write_sound_material(&mut w, m);
    }
    write_str(&mut w, &mut b, &c.air_physics_material, &format!("{ctx} / air physics material"))?;
    w.u8(count_u8(c.weather_environments.len(), &ctx, "weather environments")?);
    for (i, e) in c.weather_environments.iter().enumerate() {
        write_weather_environment(&mut w, &mut b, e, &format!("{ctx} / weather environment {i}"))?;
    }
    w.u8(count_u8(c.gravity_environments.len(), &ctx, "gravity environments")?);
    for (i, e) in c.gravity_environments.iter().enumerate() {
        write_gravity_environment(&mut w, &mut b, e, &format!("{ctx} / gravity environment {i}"))?;
    }
    write_str(&mut w, &mut b, &c.default_weather, &format!("{ctx} / default weather environment"))?;
    write_str(&mut w, &mut b, &c.default_gravity, &format!("{ctx} / default gravity environment"))?;
    with_table(&b, w, &ctx)
}

/// Client level data, with its string table; `material_count` is the level's material count.
pub(crate) fn write_level_client(c: &LevelClient, material_count: usize, ctx: &str) -> WriteResult<Vec<u8>> {
    let ctx = format!("{ctx} / client data");
    if c.materials.len() != material_count {
        return Err(WriteError::new(
            &ctx,
            format!(
                "{} client-side materials, but the level has {material_count} materials (one each)",
                c.materials.len()
            ),
        ));
    }
    let mut b = StringTableBuilder::new();
    let mut w = Writer::new();
    w.u8(count_u8(c.sound_environments.len(), &ctx, "sound environments")?);
    for (i, e) in c.sound_environments.iter().enumerate() {
        write_sound_environment(&mut w, &mut b, e, &format!("{ctx} / sound environment {i}"))?;
    }
    w.u8(count_u8(c.sky_environments.len(), &ctx, "sky environments")?);
    for (i, e) in c.sky_environments.iter().enumerate() {
        write_sky_environment(&mut w, &mut b, e, &format!("{ctx} / sky environment {i}"))?;
    }
    write_str(&mut w, &mut b, &c.default_sound, &format!("{ctx} / default sound environment"))?;
    write_str(&mut w, &mut b, &c.default_sky, &format!("{ctx} / default sky environment"))?;
    for (i, m) in c.materials.iter().enumerate() {
        write_client_material(&mut w, &mut b, m, &format!("{ctx} / client-side material {i}"))?;
    }
    with_table(&b, w, &ctx)
}

/// Server level data, with its string table.
pub(crate) fn write_level_server(s: &LevelServer, ctx: &str) -> WriteResult<Vec<u8>> {
    let ctx = format!("{ctx} / server data");
    let mut b = StringTableBuilder::new();
    let mut w = Writer::new();
    check_count_u32(s.entities.len(), &ctx, "entities")?;
    write_entities(&mut w, &mut b, &s.entities)?;
    with_table(&b, w, &ctx)
}

fn check_count_u32(n: usize, ctx: &str, what: &str) -> WriteResult<()> {
    count_u32(n, ctx, what).map(|_| ())
}

pub(crate) fn write_sound_environment(
    w: &mut Writer,
    b: &mut StringTableBuilder,
    e: &SoundEnvironment,
    ctx: &str,
) -> WriteResult<()> {
    write_str(w, b, &e.name, ctx)?;
    w.f32s(&[
        e.low_pass,
        e.high_pass,
        e.reverb_delay,
        e.reverb_feedback,
        e.reverb_mix,
        e.reverb_low_pass,
        e.reverb_high_pass,
    ]);
    Ok(())
}

pub(crate) fn write_weather_environment(
    w: &mut Writer,
    b: &mut StringTableBuilder,
    e: &WeatherEnvironment,
    ctx: &str,
) -> WriteResult<()> {
    write_str(w, b, &e.name, ctx)?;
    w.f32s(&e.wind);
    w.u32(e.wind_direction_seed);
    w.f32s(&e.wind_direction_randomness);
    w.f32(e.wind_direction_noise_speed);
    w.u32(e.wind_velocity_seed);
    w.f32(e.wind_velocity_randomness);
    w.f32(e.wind_velocity_noise_speed);
    Ok(())
}

pub(crate) fn write_sky_environment(
    w: &mut Writer,
    b: &mut StringTableBuilder,
    e: &SkyEnvironment,
    ctx: &str,
) -> WriteResult<()> {
    if !e.skybox_chunk.is_valid() {
        return Err(WriteError::new(
            ctx,
            format!("3D skybox chunk {} does not fit a chunk index (x and z < 4096)", e.skybox_chunk),
        ));
    }
    write_str(w, b, &e.name, ctx)?;
    w.u8(e.flags);
    for s in &e.skybox {
        write_str(w, b, s, ctx)?;
    }
    write_str(w, b, &e.cloud_top, ctx)?;
    write_str(w, b, &e.cloud_bottom, ctx)?;
    write_chunk_index(w, e.skybox_chunk);
    Ok(())
}

pub(crate) fn write_gravity_environment(
    w: &mut Writer,
    b: &mut StringTableBuilder,
    e: &GravityEnvironment,
    ctx: &str,
) -> WriteResult<()> {
    write_str(w, b, &e.name, ctx)?;
    w.f32s(&e.gravity);
    Ok(())
}

pub(crate) fn write_material(w: &mut Writer, b: &mut StringTableBuilder, m: &Material, ctx: &str) -> WriteResult<()> {
    write_str(w, b, &m.name, ctx)?;
    write_str(w, b, &m.user_type, ctx)?;
    w.u8(m.flags);
    w.u8(m.render_mode as u8);
    Ok(())
}

pub(crate) fn write_client_material(
    w: &mut Writer,
    b: &mut StringTableBuilder,
    m: &ClientMaterial,
    ctx: &str,
) -> WriteResult<()> {
    write_str(w, b, &m.texture, ctx)?;
    w.u8(count_u8(m.extra_textures.len(), ctx, "extra textures")?);
    for t in &m.extra_textures {
        write_str(w, b, t, ctx)?;
    }
    w.u32(m.texture_advance_time_us);
    w.f32s(&m.uv_scroll);
    w.bytes(&m.color);
    w.u8(m.alpha);
    w.bytes(&m.emission);
    w.u8(m.shading);
    w.u8(m.shine);
    write_str(w, b, &m.matcap_texture, ctx)?;
    w.f32s(&m.wave.velocity);
    w.f32s(&[m.wave.wind_influence, m.wave.offset, m.wave.scale]);
    Ok(())
}

pub(crate) fn write_physics_material(
    w: &mut Writer,
    b: &mut StringTableBuilder,
    m: &PhysicsMaterial,
    ctx: &str,
) -> WriteResult<()> {
    write_str(w, b, &m.name, ctx)?;
    w.u8(m.flags);
    w.f32s(&[m.friction_or_max_speed, m.traction, m.bounce, m.damage_min_speed, m.damage_base, m.damage_per_mps]);
    Ok(())
}

pub(crate) fn write_sound_material(w: &mut Writer, m: &SoundMaterial) {
    w.f32s(&[m.volume_dampening, m.frequency_dampening]);
}

// ---------------------------------------------------------------------------------------------
// Chunk blocks

fn write_names(w: &mut Writer, b: &mut StringTableBuilder, names: &[String], ctx: &str, what: &str) -> WriteResult<()> {
    w.u8(count_u8(names.len(), ctx, what)?);
    for s in names {
        write_str(w, b, s, ctx)?;
    }
    Ok(())
}

fn write_environment_regions(
    w: &mut Writer,
    b: &mut StringTableBuilder,
    regions: &[EnvironmentRegion],
    ctx: &str,
    what: &str,
) -> WriteResult<()> {
    w.u8(count_u8(regions.len(), ctx, what)?);
    for (i, r) in regions.iter().enumerate() {
        write_environment_region(w, b, r, &format!("{ctx} / {what} {i}"))?;
    }
    Ok(())
}

/// Writes common chunk data (without its string table, which the caller emits after the client
/// chunk has added its region names). Cube flag bits come from the client / server cubes.
pub(crate) fn write_chunk_common(
    w: &mut Writer,
    b: &mut StringTableBuilder,
    chunk: &Chunk,
    exp: u8,
    grid: GridSize,
    ctx: &str,
) -> WriteResult<()> {
    let c = &chunk.common;
    let n = c.cubes.len();
    if n == 0 {
        return Err(WriteError::new(ctx, "the chunk has no cubes (it needs at least its root cube)"));
    }
    if chunk.client.cubes.len() != n {
        return Err(WriteError::new(
            ctx,
            format!("{} client cubes, but the chunk has {n} cubes (one each)", chunk.client.cubes.len()),
        ));
    }
    if chunk.server.cubes.len() != n {
        return Err(WriteError::new(
            ctx,
            format!("{} server cubes, but the chunk has {n} cubes (one each)", chunk.server.cubes.len()),
        ));
    }
    let depths = validate_octree(&c.cubes)
        .map_err(|why| WriteError::new(format!("{ctx} / cube {}", why.cube().unwrap_or_default()), why.to_string()))?;
    for (i, (cube, &depth)) in c.cubes.iter().zip(&depths).enumerate() {
        check_cube(c, i, cube, depth, exp, grid)
            .map_err(|why| WriteError::new(format!("{ctx} / cube {i}"), why.to_string()))?;
    }

    write_names(w, b, &c.used_materials, ctx, "used materials")?;
    write_names(w, b, &c.used_physics_materials, ctx, "used physics materials")?;
    write_names(w, b, &c.used_sound_materials, ctx, "used sound materials")?;
    write_environment_regions(w, b, &c.weather_regions, ctx, "weather environment regions")?;
    write_environment_regions(w, b, &c.gravity_regions, ctx, "gravity environment regions")?;
    w.u8(count_u8(c.dynamic_lights.len(), ctx, "dynamic lights")?);
    for l in &c.dynamic_lights {
        write_dynamic_light(w, l);
    }
    w.u8(count_u8(c.fast_lights.len(), ctx, "fast lights")?);
    for l in &c.fast_lights {
        write_fast_light(w, l);
    }
    w.u32(count_u32(n, ctx, "cubes")?);
    for (cube, (cc, sc)) in c.cubes.iter().zip(chunk.client.cubes.iter().zip(&chunk.server.cubes)) {
        let header = CubeHeader { lighting: cc.lighting.is_some(), pathfinding: sc.pathfinding.is_some() };
        write_cube(w, cube, header, ctx)?;
    }
    Ok(())
}

/// Writes client chunk data; region names go into the common chunk's table `b`.
pub(crate) fn write_chunk_client(
    w: &mut Writer,
    b: &mut StringTableBuilder,
    c: &ChunkClient,
    common: &ChunkCommon,
    ctx: &str,
) -> WriteResult<()> {
    let n_dyn = common.dynamic_lights.len();
    let n_fast = common.fast_lights.len();
    if c.dynamic_lights.len() != n_dyn {
        return Err(WriteError::new(
            ctx,
            format!("{} client-side dynamic lights, but the chunk has {n_dyn} dynamic lights", c.dynamic_lights.len()),
        ));
    }
    if c.fast_lights.len() != n_fast {
        return Err(WriteError::new(
            ctx,
            format!("{} client-side fast lights, but the chunk has {n_fast} fast lights", c.fast_lights.len()),
        ));
    }
    write_environment_regions(w, b, &c.sound_regions, ctx, "sound environment regions")?;
    write_environment_regions(w, b, &c.sky_regions, ctx, "sky environment regions")?;
    w.u8(count_u8(c.lightmaps.len(), ctx, "lightmaps")?);
    for (i, l) in c.lightmaps.iter().enumerate() {
        write_lightmap(w, l, &format!("{ctx} / lightmap {i}"))?;
    }
    w.u32(count_u32(c.vertices.len(), ctx, "vertices")?);
    for v in &c.vertices {
        write_vertex(w, v);
    }
    for (i, l) in c.dynamic_lights.iter().enumerate() {
        write_client_dynamic_light(w, l, &c.lightmaps, &format!("{ctx} / client-side dynamic light {i}"))?;
    }
    for (i, l) in c.fast_lights.iter().enumerate() {
        write_client_fast_light(w, l, &format!("{ctx} / client-side fast light {i}"))?;
    }
    for (i, (cc, cube)) in c.cubes.iter().zip(&common.cubes).enumerate() {
        let cctx = || format!("{ctx} / client cube {i}");
        if let Some(l) = &cc.lighting {
            check_lighting(l, n_dyn, n_fast).map_err(|why| WriteError::new(cctx(), why.to_string()))?;
        }
        write_client_cube(w, cc, &cube.kind, "").map_err(|e| within(cctx, e))?;
    }
    Ok(())
}

/// Server chunk data, with its string table; `cube_count` server cubes are expected. Written
/// into `buf` (cleared), which comes back with where the block starts in it ([`finish_tabled`]).
pub(crate) fn write_chunk_server(
    buf: Vec<u8>,
    s: &ChunkServer,
    cube_count: usize,
    grid: GridSize,
    ctx: &str,
) -> WriteResult<(Vec<u8>, usize)> {
    let ctx = format!("{ctx} / server data");
    if s.cubes.len() != cube_count {
        return Err(WriteError::new(
            &ctx,
            format!("{} server cubes, but the chunk has {cube_count} cubes (one each)", s.cubes.len()),
        ));
    }
    let mut b = StringTableBuilder::new();
    let mut w = tabled_writer(buf);
    w.u8(count_u8(s.load_regions.len(), &ctx, "load regions")?);
    for (i, r) in s.load_regions.iter().enumerate() {
        let rctx = format!("{ctx} / load region {i}");
        check_region(r, grid).map_err(|why| WriteError::new(&rctx, why.to_string()))?;
        write_region(&mut w, r, &rctx)?;
    }
    for (i, c) in s.cubes.iter().enumerate() {
        write_server_cube(&mut w, &mut b, c, "").map_err(|e| within(|| format!("{ctx} / server cube {i}"), e))?;
    }
    check_count_u32(s.entities.len(), &ctx, "entities")?;
    write_entities(&mut w, &mut b, &s.entities)?;
    finish_tabled(&b, w, &ctx)
}

pub(crate) fn write_region(w: &mut Writer, r: &Region, ctx: &str) -> WriteResult<()> {
    w.f32s(&r.max);
    w.f32s(&r.min);
    w.u32(count_u32(r.other_chunks.len(), ctx, "other active chunks")?);
    for &c in &r.other_chunks {
        if !c.is_valid() {
            return Err(WriteError::new(ctx, format!("chunk {c} does not fit a chunk index (x and z < 4096)")));
        }
        write_chunk_index(w, c);
    }
    Ok(())
}

pub(crate) fn write_environment_region(
    w: &mut Writer,
    b: &mut StringTableBuilder,
    r: &EnvironmentRegion,
    ctx: &str,
) -> WriteResult<()> {
    for c in &r.corners {
        w.f32s(c);
    }
    write_str(w, b, &r.environment, ctx)
}

pub(crate) fn write_lightmap(w: &mut Writer, l: &Lightmap, ctx: &str) -> WriteResult<()> {
    if l.size_exp > MAX_LIGHTMAP_EXP {
        return Err(WriteError::new(
            ctx,
            format!("lightmap size exponent {} is out of range (0..={MAX_LIGHTMAP_EXP})", l.size_exp),
        ));
    }
    let want = Lightmap::byte_len(l.size_exp);
    if l.luxels.len() != want {
        return Err(WriteError::new(
            ctx,
            format!("lightmap has {} luxel bytes, but size exponent {} needs {want}", l.luxels.len(), l.size_exp),
        ));
    }
    w.u8(l.size_exp);
    w.bytes(&l.luxels);
    Ok(())
}

pub(crate) fn write_vertex(w: &mut Writer, v: &Vertex) {
    w.f32s(&v.position);
    w.f32s(&v.uv);
    w.f32s(&v.lightmap_uv);
}

pub(crate) fn write_dynamic_light(w: &mut Writer, l: &DynamicLight) {
    w.u8(l.flags);
    w.u32(l.global_id);
}

pub(crate) fn write_client_dynamic_light(
    w: &mut Writer,
    l: &ClientDynamicLight,
    lightmaps: &[Lightmap],
    ctx: &str,
) -> WriteResult<()> {
    w.bytes(&l.color);
    w.u8(count_u8(l.layers.len(), ctx, "lightmap layers")?);
    for (i, layer) in l.layers.iter().enumerate() {
        let Some(target) = lightmaps.get(usize::from(layer.lightmap)) else {
            return Err(WriteError::new(
                format!("{ctx} / layer {i}"),
                format!(
                    "lightmap layer targets lightmap {}, but the chunk has {} lightmaps",
                    layer.lightmap,
                    lightmaps.len()
                ),
            ));
        };
        let want = Lightmap::byte_len(target.size_exp);
        if layer.luxels.len() != want {
            return Err(WriteError::new(
                format!("{ctx} / layer {i}"),
                format!(
                    "lightmap layer has {} luxel bytes, but its lightmap {} has {want}",
                    layer.luxels.len(),
                    layer.lightmap
                ),
            ));
        }
        w.u8(layer.lightmap);
        w.bytes(&layer.luxels);
    }
    Ok(())
}

pub(crate) fn write_fast_light(w: &mut Writer, l: &FastLight) {
    w.u8(l.flags);
    w.u8(l.initial_intensity);
    w.u32(l.global_id);
}

pub(crate) fn write_client_fast_light(w: &mut Writer, l: &ClientFastLight, ctx: &str) -> WriteResult<()> {
    w.bytes(&l.color);
    w.u32(count_u32(l.ranges.len(), ctx, "fast light vertex ranges")?);
    for r in &l.ranges {
        w.u32(r.skip);
        w.u32(count_u32(r.multipliers.len(), ctx, "multipliers")?);
        w.bytes(&r.multipliers);
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Cubes

/// Writes one common cube; `header` gives the "has lighting / pathfinding" bits.
pub(crate) fn write_cube(w: &mut Writer, cube: &Cube, header: CubeHeader, ctx: &str) -> WriteResult<()> {
    let mut flags = cube.kind.type_id();
    if cube.visibility.is_some() {
        flags |= cube_flags::HAS_VISIBILITY;
    }
    if header.lighting {
        flags |= cube_flags::HAS_LIGHTING;
    }
    if header.pathfinding {
        flags |= cube_flags::HAS_PATHFINDING;
    }
    if cube.draw_backfaces {
        flags |= cube_flags::DRAW_BACKFACES;
    }
    w.u8(flags);
    if let Some(v) = &cube.visibility {
        write_visibility(w, v, ctx)?;
    }
    match &cube.kind {
        CubeKind::Empty => {}
        CubeKind::Parent(p) => write_parent_cube(w, p),
        CubeKind::Geometry(g) => write_geometry_cube(w, g),
        CubeKind::ExtGeometry(g) => write_ext_geometry_cube(w, g),
    }
    Ok(())
}

pub(crate) fn write_parent_cube(w: &mut Writer, p: &ParentCube) {
    let mut flags = 0u8;
    for (bit, c) in p.children.iter().enumerate() {
        if c.is_some() {
            flags |= 1 << bit;
        }
    }
    w.u8(flags);
    for c in p.present() {
        w.u32(c);
    }
}

pub(crate) fn write_geometry_cube(w: &mut Writer, g: &GeometryCube) {
    w.u8(g.material);
    w.u8(g.physics_material);
    w.u8(g.sound_material);
}

pub(crate) fn write_ext_geometry_cube(w: &mut Writer, g: &ExtGeometryCube) {
    w.bytes(&g.materials);
    w.bytes(&g.physics_materials);
    w.u8(g.sound_material);
    w.u8(g.points.mask());
    for p in g.points.moved() {
        w.f32s(&p);
    }
}

/// Writes a client-side cube; its geometry must match the common cube's `kind`.
pub(crate) fn write_client_cube(w: &mut Writer, c: &ClientCube, kind: &CubeKind, ctx: &str) -> WriteResult<()> {
    if let Some(l) = &c.lighting {
        write_lighting(w, l, ctx)?;
    }
    match (kind, &c.geometry) {
        (CubeKind::Empty | CubeKind::Parent(_), ClientGeometry::None) => Ok(()),
        (CubeKind::Geometry(_), ClientGeometry::Geometry(g)) => write_client_geometry_cube(w, g, ctx),
        (CubeKind::ExtGeometry(_), ClientGeometry::ExtGeometry(g)) => {
            write_client_ext_geometry_cube(w, g);
            Ok(())
        }
        (kind, g) => Err(WriteError::new(
            ctx,
            format!(
                "client-side geometry {} does not match the cube type {}",
                match g {
                    ClientGeometry::None => "none",
                    ClientGeometry::Geometry(_) => "geometry",
                    ClientGeometry::ExtGeometry(_) => "extended geometry",
                },
                match kind {
                    CubeKind::Empty => "empty",
                    CubeKind::Parent(_) => "parent",
                    CubeKind::Geometry(_) => "geometry",
                    CubeKind::ExtGeometry(_) => "extended geometry",
                }
            ),
        )),
    }
}

pub(crate) fn write_client_geometry_cube(w: &mut Writer, g: &ClientGeometryCube, ctx: &str) -> WriteResult<()> {
    if g.faces & FACE_RESERVED != 0 {
        return Err(WriteError::new(ctx, format!("face bits {:#010b} have reserved bits 6–7 set", g.faces)));
    }
    w.u8(g.lightmap);
    w.u32(g.first_vertex);
    w.u8(g.faces);
    Ok(())
}

pub(crate) fn write_client_ext_geometry_cube(w: &mut Writer, g: &ClientExtGeometryCube) {
    w.u32(g.first_vertex);
    w.bytes(&g.lightmaps);
    w.bytes(&g.triangle_counts);
}

pub(crate) fn write_server_cube(
    w: &mut Writer,
    b: &mut StringTableBuilder,
    c: &ServerCube,
    ctx: &str,
) -> WriteResult<()> {
    if let Some(p) = &c.pathfinding {
        write_pathfinding(w, b, p, ctx)?;
    }
    Ok(())
}

pub(crate) fn write_visibility(w: &mut Writer, v: &Visibility, ctx: &str) -> WriteResult<()> {
    write_u32s(w, &v.cubes, ctx, "visible cube indices")?;
    w.u32(count_u32(v.chunks.len(), ctx, "visible chunks")?);
    for c in v.chunks.iter() {
        if !c.chunk.is_valid() {
            return Err(WriteError::new(ctx, format!("visible chunk {} does not fit a chunk index", c.chunk)));
        }
        write_chunk_index(w, c.chunk);
        write_u32s(w, &c.cubes, ctx, "visible cube indices")?;
    }
    Ok(())
}

fn write_u32s(w: &mut Writer, v: &[u32], ctx: &str, what: &str) -> WriteResult<()> {
    w.u32(count_u32(v.len(), ctx, what)?);
    w.u32s(v);
    Ok(())
}

pub(crate) fn write_lighting(w: &mut Writer, l: &CubeLighting, ctx: &str) -> WriteResult<()> {
    w.bytes(&l.base);
    write_light_refs(w, l.dynamic(), ctx, "dynamic light references")?;
    write_light_refs(w, l.fast(), ctx, "fast light references")
}

fn write_light_refs(w: &mut Writer, refs: &[LightRef], ctx: &str, what: &str) -> WriteResult<()> {
    w.u8(count_u8(refs.len(), ctx, what)?);
    for r in refs {
        w.u8(r.index);
        w.u8(r.amount);
    }
    Ok(())
}

pub(crate) fn write_pathfinding(
    w: &mut Writer,
    b: &mut StringTableBuilder,
    attrs: &[PathAttribute],
    ctx: &str,
) -> WriteResult<()> {
    w.u8(count_u8(attrs.len(), ctx, "pathfinding attributes")?);
    for a in attrs {
        write_path_attribute(w, b, a, ctx)?;
    }
    Ok(())
}

pub(crate) fn write_path_attribute(
    w: &mut Writer,
    b: &mut StringTableBuilder,
    a: &PathAttribute,
    ctx: &str,
) -> WriteResult<()> {
    write_str(w, b, &a.name, ctx)?;
    w.f32s(&a.direction);
    Ok(())
}
