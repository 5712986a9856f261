//! Chunk files: one chunk octree, content-addressed, `chunks/<content-hash>.bin`.
//!
//! # Layout (version 1)
//! All integers little-endian.
//!
//! | offset | size | field                                                                     |
//! |-------:|-----:|---------------------------------------------------------------------------|
//! | 0      | 4    | magic `PMFC`                                                              |
//! | 4      | 1    | format version, `1`                                                       |
//! | 5      | 1    | chunk size exponent (map units, `0..=15`; the octree edge is `2^(n+3)`)   |
//! | 6      | 4    | `u32` byte length of the uncompressed payload                             |
//! | 10     | …    | one LZ4 frame ([`lz4f`]) holding the payload; it must end at end of file  |
//!
//! The payload is the octree in pre-order (a parent is followed by its eight children's
//! subtrees, PMF child bit order), one record per node, and nothing after the last one:
//!
//! - a **tag byte**: bits 0–3 the kind (`0` air, `1` parent, `2` geometry, `3` extended
//!   geometry), bit 6 "draw backfaces", bit 7 "path attributes follow"; bits 4–5 are zero, and a
//!   parent has no flag bits.
//! - geometry: material, physics material, sound material (`u16` each).
//! - extended geometry: 6 face materials, 6 face physics materials (PMF face order), the sound
//!   material (`u16` each), a corner mask (`u8`, bit `i` = corner `i` is pushed) and, per set bit
//!   in increasing order, the corner's offset (3 × `i8`, steps of edge/16).
//! - if bit 7: the path attribute set (`u16`, non-zero).
//!
//! The octree is stored in canonical form (see [`Octree`]), so the payload, and with it the whole
//! file, is a function of the chunk's content: the file name is [`Octree::content_hash`] as 16
//! lower-case hex digits, identical chunks share one file, and a file, once written, never
//! changes. Reading checks everything: header, sizes (a forged length cannot make the reader
//! allocate more than 255 times the file size, the LZ4 limit), node shapes, canonical cubes,
//! library ids, trailing bytes; the caller compares the content hash with the file name.

use crate::format::bin::{ReadError, ReadResult, Reader, Writer};
use crate::format::lz4f;
use crate::map::Library;
use crate::map::coords::{CubeAddr, LATTICE_PER_UNIT_LOG2, MAX_CHUNK_SIZE_LOG2};
use crate::map::ids::{MaterialId, PathAttrs, PhysicsId, SoundId};
use crate::map::octree::{ContentHasher, Cube, CubeKind, ExtGeometry, Geometry, Octree, OctreeError};

/// The file magic.
pub const MAGIC: [u8; 4] = *b"PMFC";
/// The version this code writes and reads.
pub const VERSION: u8 = 1;
/// Bytes before the LZ4 frame.
pub const HEADER_LEN: usize = 10;
/// Largest payload accepted (far above any real chunk: a 16-unit chunk of 22 000 leaves takes
/// about 50 KiB). A payload of parent tags costs about 9 bytes of octree memory per byte, so
/// this also bounds what a hostile file can make the reader allocate (about 600 MiB).
pub const MAX_PAYLOAD: u64 = 64 << 20;
/// LZ4 cannot compress better than about 255:1; a declared payload above this many times the
/// frame size (plus slack) is forged.
const MAX_LZ4_RATIO: u64 = 255;

const KIND_AIR: u8 = 0;
const KIND_PARENT: u8 = 1;
const KIND_GEOMETRY: u8 = 2;
const KIND_EXTENDED: u8 = 3;
const KIND_MASK: u8 = 0x0f;
const FLAG_BACKFACES: u8 = 0x40;
const FLAG_PATH: u8 = 0x80;
const RESERVED_BITS: u8 = 0x30;

/// The file name of the chunk with this content hash: 16 lower-case hex digits and `.bin`.
pub fn file_name(hash: u64) -> String {
    format!("{hash:016x}.bin")
}

/// The hash a chunk file name stands for, if it is one (`<16 lower-case hex digits>.bin`).
pub fn parse_file_name(name: &str) -> Option<u64> {
    parse_hash(name.strip_suffix(".bin")?)
}

/// A content hash written as exactly 16 lower-case hex digits.
pub fn parse_hash(s: &str) -> Option<u64> {
    if s.len() != 16 || !s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return None;
    }
    u64::from_str_radix(s, 16).ok()
}

/// The complete chunk file of `octree`, whose level has chunks of `2^chunk_size_log2` map units.
pub fn encode(octree: &Octree, chunk_size_log2: u8) -> Vec<u8> {
    debug_assert_eq!(octree.size_log2(), chunk_size_log2 + LATTICE_PER_UNIT_LOG2);
    let payload = encode_payload(octree);
    let frame = lz4f::compress(&payload);
    let mut w = Writer::with_capacity(HEADER_LEN + frame.len());
    w.bytes(&MAGIC);
    w.u8(VERSION);
    w.u8(chunk_size_log2);
    w.u32(payload.len() as u32);
    w.bytes(&frame);
    w.into_inner()
}

/// The uncompressed pre-order payload.
pub(crate) fn encode_payload(octree: &Octree) -> Vec<u8> {
    let mut w = Writer::with_capacity(64);
    for (_, node) in octree.pre_order() {
        let Some(c) = node else {
            w.u8(KIND_PARENT);
            continue;
        };
        let kind = match c.kind {
            CubeKind::Empty => KIND_AIR,
            CubeKind::Geometry(_) => KIND_GEOMETRY,
            CubeKind::Extended(_) => KIND_EXTENDED,
        };
        let mut tag = kind;
        if c.draw_backfaces {
            tag |= FLAG_BACKFACES;
        }
        if !c.path.is_none() {
            tag |= FLAG_PATH;
        }
        w.u8(tag);
        match &c.kind {
            CubeKind::Empty => {}
            CubeKind::Geometry(g) => {
                w.u16(g.material.0);
                w.u16(g.physics.0);
                w.u16(g.sound.0);
            }
            CubeKind::Extended(e) => {
                for m in e.face_materials {
                    w.u16(m.0);
                }
                for p in e.face_physics {
                    w.u16(p.0);
                }
                w.u16(e.sound.0);
                let mask = (0..8).filter(|&i| e.corners[i] != [0; 3]).fold(0u8, |m, i| m | (1 << i));
                w.u8(mask);
                for corner in e.corners.iter().filter(|c| **c != [0; 3]) {
                    for v in corner {
                        w.i8(*v);
                    }
                }
            }
        }
        if !c.path.is_none() {
            w.u16(c.path.0);
        }
    }
    w.into_inner()
}

/// Which library ids a chunk may use; `None` accepts every id (for tests of the shape alone).
pub type IdCheck<'a> = Option<&'a Library>;

/// Reads a chunk file of a level with chunks of `2^chunk_size_log2` map units, checking every
/// id against `library`. Errors name the part (`header`, `LZ4 frame`, `payload`) and the byte
/// offset (in the file, or in the uncompressed payload).
pub fn decode(data: &[u8], chunk_size_log2: u8, library: IdCheck<'_>) -> ReadResult<Octree> {
    decode_hashed(data, chunk_size_log2, library).map(|(tree, _)| tree)
}

/// [`decode`], also returning the octree's [`Octree::content_hash`] (computed while reading,
/// which costs much less than walking the octree again).
pub fn decode_hashed(data: &[u8], chunk_size_log2: u8, library: IdCheck<'_>) -> ReadResult<(Octree, u64)> {
    let mut r = Reader::new(data, "header");
    let magic = r.array::<4>()?;
    if magic != MAGIC {
        return Err(r.invalid_at(0, format!("not a pmfedit chunk file (magic {magic:02x?}, expected \"PMFC\")")));
    }
    let version = r.u8()?;
    if version != VERSION {
        return Err(
            r.invalid_at(4, format!("chunk file version {version} is not supported (this build reads {VERSION})"))
        );
    }
    let size = r.u8()?;
    if size > MAX_CHUNK_SIZE_LOG2 {
        return Err(r.invalid_at(5, format!("chunk size exponent {size} is not in 0..={MAX_CHUNK_SIZE_LOG2}")));
    }
    if size != chunk_size_log2 {
        return Err(r.invalid_at(5, format!("chunk size exponent {size} differs from the level's {chunk_size_log2}")));
    }
    let len = u64::from(r.u32()?);
    let frame_len = r.remaining() as u64;
    if len > frame_len.saturating_mul(MAX_LZ4_RATIO) + 64 {
        return Err(r.invalid_at(6, format!("payload length {len} is impossible for a {frame_len}-byte LZ4 frame")));
    }
    r.limit(len, MAX_PAYLOAD)?;
    r.set_section("LZ4 frame");
    let payload = lz4f::decompress(&r, len)?;
    let mut p = Reader::new(&payload, "payload (uncompressed)");
    decode_payload(&mut p, size + LATTICE_PER_UNIT_LOG2, library)
}

/// Reads the pre-order payload of an octree of edge `2^size_log2` lattice units (the whole of
/// `r` must be used); returns it with its content hash.
pub(crate) fn decode_payload(r: &mut Reader<'_>, size_log2: u8, library: IdCheck<'_>) -> ReadResult<(Octree, u64)> {
    let mut hasher = ContentHasher::new(size_log2);
    let mut nodes = 0usize;
    let mut ids = IdMemo { library, checked: None };
    // The payload is the pre-order the octree is built from in one pass.
    // (The error is boxed so that the result of each node fits in registers.)
    let tree = Octree::from_pre_order_into(size_log2, |addr, leaf| -> Result<bool, Box<NodeError>> {
        let is_leaf = decode_node(r, addr, &mut ids, leaf).map_err(|e| Box::new(NodeError::Read(e)))?;
        hasher.node(is_leaf.then_some(&*leaf));
        nodes += 1;
        Ok(is_leaf)
    });
    match tree {
        Ok(tree) => {
            r.expect_end()?;
            // The hash of the nodes read is the tree's when they were its canonical pre-order:
            // each became one node (nothing merged; cubes are refused unless normalized). Our
            // writer never leaves anything to merge, so the walk is only for foreign files.
            let hash = if nodes == tree.node_count() { hasher.finish() } else { tree.content_hash() };
            Ok((tree, hash))
        }
        Err(e) => match *e {
            NodeError::Read(e) => Err(e),
            // `decode_node` refuses parents of the minimum edge first.
            NodeError::Tree(e) => Err(r.invalid(e.to_string())),
        },
    }
}

/// Why [`decode_payload`] stopped: bad bytes, or (never, `decode_node` checks it first) a
/// shape the octree refuses.
enum NodeError {
    Read(ReadError),
    Tree(OctreeError),
}

impl From<OctreeError> for Box<NodeError> {
    fn from(e: OctreeError) -> Self {
        Box::new(NodeError::Tree(e))
    }
}

/// The library ids are checked against, and the plain geometry last found in it: terrain
/// repeats a few materials, so most leaves skip the three library look-ups.
struct IdMemo<'a> {
    library: IdCheck<'a>,
    checked: Option<Geometry>,
}

impl IdMemo<'_> {
    /// Whether every id `cube` uses is in the library (always, without one).
    #[inline]
    fn check(&mut self, cube: &Cube) -> Result<(), IdError> {
        let Some(lib) = self.library else { return Ok(()) };
        if let CubeKind::Geometry(g) = cube.kind {
            if self.checked == Some(g) {
                return Ok(());
            }
            check_ids(cube, lib)?;
            self.checked = Some(g);
            return Ok(());
        }
        check_ids(cube, lib)
    }
}

/// Reads the node at `addr`: `false` for a parent (its children follow), else `true` with the
/// leaf's cube, checked against the library, in `leaf`.
fn decode_node(r: &mut Reader<'_>, addr: CubeAddr, ids: &mut IdMemo<'_>, leaf: &mut Cube) -> ReadResult<bool> {
    let at = r.offset();
    let tag = r.u8()?;
    if tag & RESERVED_BITS != 0 {
        return Err(r.invalid_at(at, format!("node tag {tag:#04x} has reserved bits set")));
    }
    let kind = match tag & KIND_MASK {
        KIND_PARENT => {
            if tag != KIND_PARENT {
                return Err(r.invalid_at(at, format!("parent node tag {tag:#04x} has flag bits set")));
            }
            if addr.size_log2 == 0 {
                return Err(r.invalid_at(at, format!("parent node at {addr:?}, which has the minimum edge")));
            }
            return Ok(false);
        }
        KIND_AIR => CubeKind::Empty,
        KIND_GEOMETRY => CubeKind::Geometry(Geometry {
            material: MaterialId(r.u16()?),
            physics: PhysicsId(r.u16()?),
            sound: SoundId(r.u16()?),
        }),
        KIND_EXTENDED => {
            let mut e = ExtGeometry::default();
            for m in &mut e.face_materials {
                *m = MaterialId(r.u16()?);
            }
            for p in &mut e.face_physics {
                *p = PhysicsId(r.u16()?);
            }
            e.sound = SoundId(r.u16()?);
            let mask = r.u8()?;
            for (i, corner) in e.corners.iter_mut().enumerate() {
                if mask & (1 << i) != 0 {
                    let c_at = r.offset();
                    *corner = [r.i8()?, r.i8()?, r.i8()?];
                    if *corner == [0; 3] {
                        return Err(r.invalid_at(c_at, format!("corner {i} is marked pushed but is at rest")));
                    }
                    for (axis, v) in corner.iter().enumerate() {
                        let (lo, hi) = ExtGeometry::corner_range(i, axis);
                        if !(lo..=hi).contains(v) {
                            return Err(r.invalid_at(
                                c_at,
                                format!("corner {i} offset {v} on axis {axis} is outside {lo}..={hi}"),
                            ));
                        }
                    }
                }
            }
            CubeKind::Extended(e)
        }
        k => return Err(r.invalid_at(at, format!("unknown node kind {k}"))),
    };
    let path = if tag & FLAG_PATH != 0 {
        let p = r.u16()?;
        if p == 0 {
            return Err(r.invalid_at(r.offset() - 2, "path attributes flagged but 0 (none)"));
        }
        PathAttrs(p)
    } else {
        PathAttrs::NONE
    };
    let cube = Cube { kind, draw_backfaces: tag & FLAG_BACKFACES != 0, path };
    // (Air and plain geometry are canonical: only extended cubes are worth comparing.)
    if matches!(cube.kind, CubeKind::Extended(_)) && cube.normalized() != cube {
        return Err(r.invalid_at(at, "extended cube without pushed corners and with equal faces (not canonical)"));
    }
    ids.check(&cube).map_err(|why| r.invalid_at(at, why.to_string()))?;
    // Written once, whole: a cube written field by field and then copied whole makes the
    // processor wait for the parts (most of this function's time, before).
    *leaf = cube;
    Ok(true)
}

/// An id a cube uses that the library lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    #[error("material {0} is not in the library")]
    Material(MaterialId),
    #[error("physics material {0} is not in the library")]
    Physics(PhysicsId),
    #[error("sound material {0} is not in the library")]
    Sound(SoundId),
}

/// The first leaf of an octree that uses an id the library lacks ([`check_octree_ids`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("cube at {} (size 2^{}): {error}", .addr.min, .addr.size_log2)]
pub struct LeafIdError {
    /// The leaf.
    pub addr: CubeAddr,
    /// The missing id.
    pub error: IdError,
}

/// Whether every id `cube` uses exists in `lib`.
pub fn check_ids(cube: &Cube, lib: &Library) -> Result<(), IdError> {
    let (materials, physics, sound): (&[MaterialId], &[PhysicsId], SoundId) = match &cube.kind {
        CubeKind::Empty => return Ok(()),
        CubeKind::Geometry(g) => (std::slice::from_ref(&g.material), std::slice::from_ref(&g.physics), g.sound),
        CubeKind::Extended(e) => (&e.face_materials, &e.face_physics, e.sound),
    };
    if let Some(&m) = materials.iter().find(|m| !lib.materials().contains(**m)) {
        return Err(IdError::Material(m));
    }
    if let Some(&p) = physics.iter().find(|p| !lib.physics_materials().contains(**p)) {
        return Err(IdError::Physics(p));
    }
    if !lib.sound_materials().contains(sound) {
        return Err(IdError::Sound(sound));
    }
    Ok(())
}

/// Whether every leaf of `octree` uses only ids of `lib`; the first offender otherwise.
pub fn check_octree_ids(octree: &Octree, lib: &Library) -> Result<(), LeafIdError> {
    for (addr, cube) in octree.leaves() {
        check_ids(&cube, lib).map_err(|error| LeafIdError { addr, error })?;
    }
    Ok(())
}
