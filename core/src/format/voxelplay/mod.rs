//! Voxel Play world saves ("savegame" `.bytes` files), file formats 5 to 14.
//!
//! Voxel Play (a Unity asset) saves the modified chunks of a world, the player transform, torches,
//! dropped items, saved game objects and script-defined custom data into one little-endian binary
//! file written by .NET's `BinaryWriter`. [`read_world`] turns such a file into a typed
//! [`WorldSave`]; `crate::import::voxelplay` places it into a map.
//!
//! # Layouts
//! Every format starts with the format byte. What follows, per format:
//!
//! | format | chunk size byte | item definitions | run tail | "populated" byte | torch item index | items | voxel properties | game objects | custom sections |
//! |---|---|---|---|---|---|---|---|---|---|
//! | 14 | yes | yes | flags | yes | yes | yes | yes | yes | yes |
//! | 13 | yes | yes | flags | – | yes | yes | yes | yes | yes |
//! | 12 | yes | yes | flags | – | yes | yes | – | yes | yes |
//! | 11 | yes | yes | flags + rotation marker (+ angles) | – | yes | yes | – | yes | yes |
//! | 10 | yes | yes | flags + rotation marker (+ angles) | – | yes | yes | – | yes | – |
//! | 9 | – (16) | yes | flags + rotation marker (+ angles) | – | yes | yes | – | yes | – |
//! | 8 | – (16) | yes | flags + rotation marker (+ angles) | – | yes | yes | – | – | – |
//! | 7 | – (16) | yes | flags + rotation marker (+ angles) | – | – | yes | – | – | – |
//! | 6 | – (16) | yes | **depends on the definition** | – | – | yes | – | – | – |
//! | 5 | – (16) | – | **depends on the definition** | – | – | – | – | – | – |
//!
//! Common to all: the character position and euler angles and the camera euler angles (9 `f32`),
//! an `Int16` count of voxel definition names, then an `Int32` chunk count. A chunk is its position
//! (3 `f32`), the "above surface" byte, (14: the "populated" byte), an `Int16` run ("word") count and
//! the runs, an `Int16` torch count and the torches, then (6 and later) an `Int16` item count and the
//! items, then (13 and later) the per-voxel custom properties. A run is the voxel definition index
//! (`Int16`), the tint colour (3 bytes), the start index and the repetition count (`Int16` each) and
//! the run tail of the table. After the chunks: (9 and later) the saved game objects, (11 and later)
//! the custom data sections.
//!
//! # Decisions where the specification is silent or wrong
//! - **Strings** are .NET `BinaryWriter` strings: a 7-bit-encoded (LEB128) byte length, then UTF-8.
//!   A length prefix longer than 5 bytes, a length above `i32::MAX`, a length beyond the end of the
//!   file and invalid UTF-8 are read errors.
//! - **`Int16` counts and indices** are written by Voxel Play as `(Int16)value`, so counts above
//!   32767 wrap negative; they are read as `u16` (a 32³ chunk that is one run has 32768
//!   repetitions). The torch and item *definition* indices stay `i16` (Voxel Play skips negative
//!   ones on load). The `Int32` chunk count must not be negative.
//! - **Run bounds**: a run must satisfy `start + repetitions <= chunk size³` and its definition index
//!   must name a definition; anything else is a read error (Voxel Play would write outside its voxel
//!   array or drop the run).
//! - **Chunk size byte** (10 and later): 16 or 32, as the specification says; anything else is an
//!   error. Formats 5–9 have chunks of 16.
//! - **Custom data section length**: the specification's table says `Int16`, but Voxel Play's own
//!   writer (`SaveGameCustomDataWriter.Flush`) writes the `int` length, 4 bytes, and its reader
//!   reads an `Int32`. Both are accepted: the `Int32` reading is tried first and kept if it consumes
//!   the file exactly, else the `Int16` reading (see [`SectionLength`]). The contents are kept
//!   compressed as they are stored (raw Deflate, .NET `DeflateStream`); [`CustomSection::inflate`]
//!   decompresses them.
//! - **Item field order, formats 11 and 12**: the specification (and Voxel Play's readers of 10,
//!   13 and 14) give an item as definition, position, quantity; Voxel Play's own readers of 11
//!   and 12 read definition, quantity, position. Both are 16 bytes, so the file parses either
//!   way and only the items differ. Items lie in (or next to) the chunk that stores them, so for
//!   11 and 12 the reader takes the order under which more items do, the specification's on a
//!   tie, and says which in [`WorldSave::item_order`].
//! - **Trailing bytes** after the last structure of a format are a read error: a reader that
//!   disagrees with the writer about the layout then says so instead of importing garbage.
//! - **Versions**: below 5 and above 14 are refused with "unsupported version N" (later Voxel Play
//!   releases moved to other, multi-file layouts).
//!
//! # Formats 5 and 6: which runs carry a tail byte
//! In formats 5 and 6 a run's tail depends on its voxel definition's render type, which the file
//! does not store: water and texture-rotating types write a flags byte (**flags**), custom
//! (model) types write a rotation marker byte followed by three `f32` angles when the marker is 1
//! (**custom**), every other type writes nothing (**plain**); see [`RunTail`]. Voxel Play never
//! merges custom voxels into longer runs, so a custom run always has 1 repetition.
//!
//! [`ReadOptions::transparent_voxels`] (plus [`ReadOptions::custom_voxels`]) names the definitions
//! that carry the flags byte (the custom ones); every other definition is plain. When the list is
//! given it is used as is and nothing is searched ([`ResolutionMethod::UserList`]).
//!
//! Without a list the reader searches ([`ResolutionMethod::Search`]): a depth-first backtracking
//! over the definitions **used by the file**, deciding each one the first time a run uses it
//! (trying plain, then flags, then custom) and resuming the parse from that run, so a wrong guess
//! is abandoned as soon as the parse fails. While searching, a parse also fails on what Voxel Play
//! never writes: runs out of order or overlapping, a custom run with more than 1 repetition or a
//! marker other than 0/1, an "above surface" byte other than 0/1, non-integral or non-finite chunk
//! positions, non-finite normals, angles or item positions, torch voxel indices outside the chunk
//! and item definition indices outside the table. The search is bounded by a step budget
//! ([`ReadOptions::search_budget`], bytes parsed in all attempts) and stops after
//! [`MAX_CANDIDATES`] distinct exact parses.
//!
//! Exact parses that differ only by calling a definition custom whose runs never had a rotation
//! (identical bytes to calling it flags) count as one. When more than one distinct assignment
//! consumes the file exactly, the reader picks the one with the **fewest definitions carrying a
//! tail byte**, then the fewest custom ones, then the first found (plain is the most common render
//! type, and it is tried first), and reports the ambiguity in [`Resolution`] so that the user can
//! confirm it or give the list; with [`ReadOptions::reject_ambiguous`] it is an error instead.
//! No exact parse within the budget is an error that asks for the list.

mod layout;
mod read;
mod resolve;

#[cfg(test)]
mod tests;

use std::fmt;

use crate::format::bin::ReadError;

pub use read::read_world;

/// Lowest format version read.
pub const MIN_VERSION: u8 = 5;
/// Highest format version read.
pub const MAX_VERSION: u8 = 14;
/// The format 5/6 search stops after finding this many distinct exact parses.
pub const MAX_CANDIDATES: usize = 8;

/// How to read a file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Formats 5 and 6 only: names of the voxel definitions whose runs carry the flags byte (water
    /// and texture-rotating render types). `Some` switches the search off; definitions in neither
    /// this list nor [`custom_voxels`](Self::custom_voxels) are plain. Ignored by other formats.
    pub transparent_voxels: Option<Vec<String>>,
    /// Formats 5 and 6, with [`transparent_voxels`](Self::transparent_voxels) given: names of the
    /// custom (model) voxel definitions, whose runs carry a rotation marker (and angles).
    pub custom_voxels: Vec<String>,
    /// Formats 5 and 6, searching: fail with [`VoxelPlayError::Ambiguous`] instead of picking one
    /// of several exact parses.
    pub reject_ambiguous: bool,
    /// Formats 5 and 6, searching: the most bytes all parse attempts together may consume. `None`
    /// means `32 × file length + 1 MiB`.
    pub search_budget: Option<u64>,
}

/// Why a file could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum VoxelPlayError {
    /// The format byte is outside 5..=14.
    #[error("unsupported version {0} (Voxel Play save formats 5 to 14 are supported)")]
    UnsupportedVersion(u8),
    /// The file is empty.
    #[error("empty file: no Voxel Play format byte")]
    Empty,
    /// A structural error, with section and absolute byte offset.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// Format 5/6: no assignment of run tails to the used voxel definitions parses the file
    /// exactly (or the search ran out of budget before finding one).
    #[error(
        "format {version}: cannot tell which voxel definitions carry a flags byte: {reason}; \
         name them with ReadOptions::transparent_voxels / custom_voxels"
    )]
    Unresolved {
        version: u8,
        reason: String,
        /// The error of the parse that got furthest, if any.
        furthest: Option<ReadError>,
    },
    /// Format 5/6 with [`ReadOptions::reject_ambiguous`]: several assignments parse the file.
    #[error(
        "format {version}: {count} different assignments of flags bytes to voxel definitions parse \
         the file exactly; name the definitions with ReadOptions::transparent_voxels"
    )]
    Ambiguous {
        version: u8,
        /// Distinct exact parses found.
        count: usize,
        /// Each exact parse: the used definitions and the tail kind it gives them.
        candidates: Vec<Vec<(String, TailKind)>>,
    },
}

/// A whole world save.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WorldSave {
    /// The format byte, 5..=14.
    pub version: u8,
    /// Chunk edge in voxels: the chunk size byte (10 and later), 16 before.
    pub chunk_size: u8,
    /// The character controller's position (Unity world units, Y up).
    pub character_position: [f32; 3],
    /// The character controller's `transform.eulerAngles`, degrees.
    pub character_rotation: [f32; 3],
    /// The camera's (local) `transform.eulerAngles`, degrees.
    pub camera_rotation: [f32; 3],
    /// Voxel definition names, indexed by [`VoxelRun::definition`].
    pub voxel_definitions: Vec<String>,
    /// Item definition names (6 and later; torches' items too from 8), indexed by
    /// [`Item::definition`] and [`LightSource::item_definition`].
    pub item_definitions: Vec<String>,
    /// The saved (modified) chunks, in file order.
    pub chunks: Vec<Chunk>,
    /// Saved game objects (9 and later).
    pub game_objects: Vec<GameObject>,
    /// Custom data sections (11 and later), kept as stored.
    pub custom_sections: Vec<CustomSection>,
    /// How the custom section lengths were stored (11 and later; `None` before).
    pub section_length: Option<SectionLength>,
    /// The field order the item records were read with.
    pub item_order: ItemOrder,
    /// Formats 5 and 6: how the run tails were decided. `None` for other formats.
    pub resolution: Option<Resolution>,
}

/// One saved chunk.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Chunk {
    /// The chunk position as Voxel Play stores it: the chunk's **center** (Unity world units).
    pub position: [f32; 3],
    /// 1 if some voxel is above the terrain surface (sunlight from above), else 0.
    pub above_surface: u8,
    /// Format 14: 1 if the chunk was completely generated, 0 if it was modified before the
    /// terrain generator filled it. `None` in other formats.
    pub populated: Option<u8>,
    /// The RLE runs ("words").
    pub runs: Vec<VoxelRun>,
    /// Torches / light sources.
    pub light_sources: Vec<LightSource>,
    /// Dropped items (6 and later).
    pub items: Vec<Item>,
    /// Per-voxel custom properties (13 and later).
    pub voxel_properties: Vec<VoxelProperties>,
}

/// One RLE run of equal voxels.
///
/// Voxel `i` of a chunk of edge `s` is at `x = i % s`, `z = (i / s) % s`, `y = i / s²` (Voxel Play's
/// `index = y·s² + z·s + x`), relative to the chunk's minimum corner.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VoxelRun {
    /// Index into [`WorldSave::voxel_definitions`].
    pub definition: u16,
    /// Tint colour.
    pub color: [u8; 3],
    /// Index of the first voxel.
    pub start: u16,
    /// Number of voxels (at least 1 when written by Voxel Play).
    pub repetitions: u16,
    /// What followed the run's fixed fields.
    pub tail: RunTail,
}

impl VoxelRun {
    /// One past the index of the last voxel.
    pub fn end(&self) -> u32 {
        u32::from(self.start) + u32::from(self.repetitions)
    }
}

/// What follows a run's fixed fields (the layouts differ per format, and in 5/6 per definition).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RunTail {
    /// Nothing (5/6: a definition of a plain render type).
    Plain,
    /// The flags byte: water level and/or texture rotation (5/6: water and texture-rotating
    /// types; always in 12–14).
    Flags(u8),
    /// 5/6, custom (model) types: the rotation marker byte; the angles follow when it is 1.
    Custom { marker: u8, angles: Option<[f32; 3]> },
    /// 7–11: the flags byte, then the rotation marker; the angles follow when it is 1.
    FlagsAndRotation { flags: u8, marker: u8, angles: Option<[f32; 3]> },
}

impl RunTail {
    /// The flags byte, where there is one.
    pub fn flags(&self) -> Option<u8> {
        match *self {
            Self::Flags(f) | Self::FlagsAndRotation { flags: f, .. } => Some(f),
            Self::Plain | Self::Custom { .. } => None,
        }
    }

    /// The custom rotation angles (degrees), where there are some.
    pub fn angles(&self) -> Option<[f32; 3]> {
        match *self {
            Self::Custom { angles, .. } | Self::FlagsAndRotation { angles, .. } => angles,
            Self::Plain | Self::Flags(_) => None,
        }
    }

    /// The kind of tail, for formats 5 and 6.
    pub fn kind(&self) -> TailKind {
        match self {
            Self::Plain => TailKind::Plain,
            Self::Flags(_) => TailKind::Flags,
            Self::Custom { .. } => TailKind::Custom,
            Self::FlagsAndRotation { .. } => TailKind::FlagsAndRotation,
        }
    }
}

/// The kind of a [`RunTail`] without its values; what formats 5/6 decide per definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TailKind {
    Plain,
    Flags,
    Custom,
    FlagsAndRotation,
}

impl fmt::Display for TailKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Plain => "plain",
            Self::Flags => "flags",
            Self::Custom => "custom",
            Self::FlagsAndRotation => "flags+rotation",
        })
    }
}

/// A torch or other light source attached to a voxel face.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LightSource {
    /// Index (in the chunk) of the voxel the torch is attached to (Voxel Play stores the hit
    /// voxel: the solid one).
    pub voxel_index: u16,
    /// The face normal, pointing from that voxel into the air where the torch is.
    pub normal: [f32; 3],
    /// The torch's item definition (8 and later); `None` before.
    pub item_definition: Option<i16>,
}

/// An item lying in the world.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Item {
    /// Index into [`WorldSave::item_definitions`] (Voxel Play skips invalid ones).
    pub definition: i16,
    /// World position (Unity units).
    pub position: [f32; 3],
    /// Stack size.
    pub quantity: i16,
}

/// The custom properties of one voxel (13 and later).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct VoxelProperties {
    /// Index of the voxel in the chunk.
    pub voxel_index: u16,
    pub properties: Vec<VoxelProperty>,
}

/// One custom voxel property.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct VoxelProperty {
    pub id: i32,
    pub float_value: f32,
    pub string_value: String,
}

/// A saved game object (a prefab instance with a `VoxelPlaySaveThis` component).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GameObject {
    /// Prefab path inside a `Resources` folder.
    pub prefab_path: String,
    pub name: String,
    /// World position (Unity units).
    pub position: [f32; 3],
    /// `transform.eulerAngles`, degrees.
    pub rotation: [f32; 3],
    /// `transform.localScale`.
    pub scale: [f32; 3],
    /// The key/value data the object saved, in file order.
    pub data: Vec<(String, String)>,
}

/// A custom data section: a name and the bytes as stored (raw Deflate).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CustomSection {
    pub name: String,
    /// Compressed contents, as stored.
    pub data: Vec<u8>,
}

impl CustomSection {
    /// The decompressed contents (.NET `DeflateStream` writes raw Deflate, RFC 1951), refusing
    /// more than `limit` bytes of output.
    pub fn inflate(&self, limit: usize) -> Result<Vec<u8>, InflateError> {
        use std::io::Read;
        let mut out = Vec::new();
        let decoder = flate2::read::DeflateDecoder::new(&self.data[..]);
        decoder.take(limit as u64 + 1).read_to_end(&mut out).map_err(|e| InflateError::Corrupt(e.to_string()))?;
        if out.len() > limit {
            return Err(InflateError::TooLarge { limit });
        }
        Ok(out)
    }
}

/// Why [`CustomSection::inflate`] failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InflateError {
    #[error("custom data section is not valid Deflate data: {0}")]
    Corrupt(String),
    #[error("custom data section inflates to more than {limit} bytes")]
    TooLarge { limit: usize },
}

/// The order of an item record's fields after the definition index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ItemOrder {
    /// Position, then quantity: the specification.
    #[default]
    PositionFirst,
    /// Quantity, then position: what Voxel Play's readers of formats 11 and 12 expect.
    QuantityFirst,
}

/// How the custom data section lengths were stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SectionLength {
    /// 4 bytes: what Voxel Play's writer and reader actually do.
    I32,
    /// 2 bytes: what the specification's table says.
    I16,
}

/// Formats 5/6: how each used definition's run tail was decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolution {
    pub method: ResolutionMethod,
    /// Per voxel definition (same order as [`WorldSave::voxel_definitions`]): the kind of tail
    /// its runs have, or `None` for a definition no run uses (searched) / `Plain` (user list).
    pub kinds: Vec<Option<TailKind>>,
    /// Distinct exact parses found (1 = unique). Always 1 for a user list.
    pub candidates: usize,
    /// Whether the search explored every assignment (false: budget or [`MAX_CANDIDATES`] hit,
    /// so more exact parses may exist).
    pub exhaustive: bool,
    /// Bytes consumed by all parse attempts.
    pub steps: u64,
}

impl Resolution {
    /// Whether the choice was a guess among several exact parses (or may have been).
    pub fn is_ambiguous(&self) -> bool {
        self.method == ResolutionMethod::Search && (self.candidates > 1 || !self.exhaustive)
    }
}

/// Where formats 5/6 got their run tails from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResolutionMethod {
    /// [`ReadOptions::transparent_voxels`] / [`ReadOptions::custom_voxels`].
    UserList,
    /// The backtracking search.
    Search,
}
