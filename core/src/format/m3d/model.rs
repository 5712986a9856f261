//! The Model 3D model: what the readers produce and the writer takes, with the format's limits
//! and errors.

use crate::format::bin::ReadError;
use std::fmt;

/// Largest inflated payload, whatever the compressed size.
pub const MAX_INFLATED: usize = 256 << 20;
/// Largest inflated/compressed ratio accepted.
pub const MAX_INFLATE_RATIO: usize = 64;
/// The inflate limit never goes below this, so that tiny files may compress well.
pub const MIN_INFLATE_LIMIT: usize = 1 << 20;
/// Most voxel cells (set or not) all the voxel blocks of one model may hold together.
pub const MAX_VOXEL_CELLS: u64 = 1 << 26;

/// Voxel cell value: unset (keep what the world has there; the format's −1).
pub const VOXEL_UNSET: u16 = 0xFFFF;
/// Voxel cell value: clear the world's voxel to air (the format's −2).
pub const VOXEL_CLEAR: u16 = 0xFFFE;

/// How many bytes a zlib payload of `compressed` bytes may inflate to.
pub fn inflate_limit(compressed: usize) -> usize {
    compressed.saturating_mul(MAX_INFLATE_RATIO).clamp(MIN_INFLATE_LIMIT, MAX_INFLATED)
}

/// Why a model could not be read or written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum M3dError {
    /// A binary read failed: the section (chunk) and absolute byte offset are in the error.
    #[error("{0}")]
    Read(#[from] ReadError),
    /// The zlib payload is corrupt.
    #[error("zlib payload at byte {offset}: {reason}")]
    Inflate { offset: u64, reason: String },
    /// The zlib payload inflates to more than the limit (a zip bomb, or a broken file).
    #[error(
        "zlib payload at byte {offset} inflates to more than {limit} bytes ({compressed} compressed); refused as a \
         probable zip bomb"
    )]
    InflateLimit { offset: u64, compressed: usize, limit: usize },
    /// An ASCII (`.a3d`) model is malformed.
    #[error("a3d line {line}: {reason}")]
    Ascii { line: usize, reason: String },
    /// The model cannot be written (too many types, a block too large, …).
    #[error("cannot write Model 3D: {0}")]
    Write(String),
    /// Voxel blocks without voxel types: m3d.h refuses a `VOXD` chunk with no `VOXT` before it.
    #[error("cannot write Model 3D: voxel data without voxel types (the model holds no voxels)")]
    NoVoxelTypes,
}

/// Which variant a model was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Source {
    /// Binary `.m3d` with a plain payload.
    #[default]
    Binary,
    /// Binary `.m3d` with a zlib-compressed payload.
    BinaryCompressed,
    /// ASCII `.a3d`.
    Ascii,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Binary => "Model 3D (binary)",
            Self::BinaryCompressed => "Model 3D (binary, zlib)",
            Self::Ascii => "Model 3D (ASCII)",
        })
    }
}

/// An RGBA colour as Model 3D stores it: red in the least significant byte, alpha in the most.
/// The ASCII variant writes it as `#aabbggrr` hex.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Rgba(pub u32);

impl Rgba {
    /// From `[r, g, b, a]`.
    pub const fn from_rgba(c: [u8; 4]) -> Rgba {
        Rgba(u32::from_le_bytes(c))
    }
    /// `[r, g, b, a]`.
    pub const fn to_rgba(self) -> [u8; 4] {
        self.0.to_le_bytes()
    }
    /// `[r, g, b]`.
    pub const fn rgb(self) -> [u8; 3] {
        let [r, g, b, _] = self.to_rgba();
        [r, g, b]
    }
    /// Alpha.
    pub const fn alpha(self) -> u8 {
        self.to_rgba()[3]
    }
}

/// The header's `types` bitfield: the width of every index, coordinate and size in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Types(pub u32);

impl Types {
    fn field(self, shift: u32) -> u32 {
        (self.0 >> shift) & 3
    }

    /// Bytes of an optional index type at `shift`; 0 when the type is `11` (not in the file).
    fn index(self, shift: u32) -> usize {
        match self.field(shift) {
            0 => 1,
            1 => 2,
            2 => 4,
            _ => 0,
        }
    }

    /// `vc_t`: bytes per vertex coordinate: 1 (`int8`), 2 (`int16`), 4 (`float`) or 8 (`double`).
    pub fn coord(self) -> usize {
        1 << self.field(0)
    }
    /// `vi_t`: bytes per vertex index (0 = undefined).
    pub fn vertex_index(self) -> usize {
        self.index(2)
    }
    /// `si_t`: bytes per string table offset (0 = undefined).
    pub fn string(self) -> usize {
        self.index(4)
    }
    /// `ci_t`: bytes per colour index (0 = no colours; 4 = colours stored inline).
    pub fn color(self) -> usize {
        self.index(6)
    }
    /// `ti_t`: bytes per texture coordinate index (0 = none).
    pub fn texcoord(self) -> usize {
        self.index(8)
    }
    /// `bi_t`: bytes per bone index (0 = no skeleton).
    pub fn bone(self) -> usize {
        self.index(10)
    }
    /// `nb_t`: bones per skinned vertex: 1, 2, 4 or 8.
    pub fn bones_per_vertex(self) -> usize {
        1 << self.field(12)
    }
    /// `sk_t`: bytes per skin index (0 = no skin).
    pub fn skin(self) -> usize {
        self.index(14)
    }
    /// `fc_t`: bytes per frame bone count (0 = undefined).
    pub fn frame_count(self) -> usize {
        self.index(16)
    }
    /// `hi_t`: bytes per shape index (0 = none).
    pub fn shape(self) -> usize {
        self.index(18)
    }
    /// `fi_t`: bytes per face index (0 = none).
    pub fn face(self) -> usize {
        self.index(20)
    }
    /// `vd_t`: bytes per (signed) voxel block position and size (0 = no voxel data).
    pub fn voxel_dim(self) -> usize {
        self.index(22)
    }
    /// `vp_t` (bits 24–25, as the reference loader reads them): bytes per voxel pixel: 1, 2,
    /// 4 (invalid) or 0 (no voxel data).
    pub fn voxel_pixel(self) -> usize {
        self.index(24)
    }
}

/// A vertex (also normals and bone positions and orientations, which share the list).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Vertex {
    /// x, y, z, w; +Y up, +X right, +Z toward the viewer, normalized to −1..1.
    pub position: [f32; 4],
    /// Vertex colour, if the model has colours.
    pub color: Option<Rgba>,
    /// Skin index; −1 none, −2 marks an orientation quaternion.
    pub skin: i32,
}

impl Default for Vertex {
    fn default() -> Self {
        Self { position: [0.0, 0.0, 0.0, 1.0], color: None, skin: -1 }
    }
}

/// Material property ids (seed, "Materials").
pub mod prop {
    /// Diffuse colour.
    pub const KD: u8 = 0;
    /// Ambient colour.
    pub const KA: u8 = 1;
    /// Specular colour.
    pub const KS: u8 = 2;
    /// Specular exponent.
    pub const NS: u8 = 3;
    /// Emissive colour.
    pub const KE: u8 = 4;
    /// Transmission colour.
    pub const TF: u8 = 5;
    /// Bump strength.
    pub const KM: u8 = 6;
    /// Dissolve.
    pub const D: u8 = 7;
    /// Illumination model.
    pub const IL: u8 = 8;
    /// Roughness.
    pub const PR: u8 = 64;
    /// Metallic.
    pub const PM: u8 = 65;
    /// Sheen.
    pub const PS: u8 = 66;
    /// Index of refraction.
    pub const NI: u8 = 67;
    /// Thickness.
    pub const NT: u8 = 68;
    /// Diffuse texture map (texture maps are `128 + scalar id`).
    pub const MAP_KD: u8 = 128;

    /// The ASCII keyword of a scalar property.
    pub const KEYWORDS: [(&str, u8); 14] = [
        ("Kd", KD),
        ("Ka", KA),
        ("Ks", KS),
        ("Ns", NS),
        ("Ke", KE),
        ("Tf", TF),
        ("Km", KM),
        ("d", D),
        ("il", IL),
        ("Pr", PR),
        ("Pm", PM),
        ("Ps", PS),
        ("Ni", NI),
        ("Nt", NT),
    ];
}

/// How a scalar material property's value is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PropFormat {
    Color,
    Float,
    U8,
}

/// The format of scalar property `id` (< 128), `None` if unknown.
pub(crate) fn prop_format(id: u8) -> Option<PropFormat> {
    use prop::*;
    Some(match id {
        KD | KA | KS | KE | TF => PropFormat::Color,
        NS | KM | D | PR | PM | PS | NI | NT => PropFormat::Float,
        IL => PropFormat::U8,
        _ => return None,
    })
}

/// A material property's value.
#[derive(Debug, Clone, PartialEq)]
pub enum PropertyValue {
    /// A colour.
    Color(Rgba),
    /// A float.
    Float(f32),
    /// An integer.
    Int(u32),
    /// A texture map: the texture's name (an inlined [`Asset`] or an external file).
    Map(String),
}

/// One material property.
#[derive(Debug, Clone, PartialEq)]
pub struct Property {
    /// Property id ([`prop`]); 128 and up are texture maps.
    pub id: u8,
    pub value: PropertyValue,
}

/// A material (`MTRL`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Material {
    pub name: String,
    pub properties: Vec<Property>,
    /// `false` for a material that faces use but no `MTRL` chunk defines (the format allows
    /// material libraries in other files).
    pub defined: bool,
}

impl Material {
    /// The diffuse colour (`Kd`), if set.
    pub fn diffuse(&self) -> Option<Rgba> {
        self.properties.iter().find_map(|p| match p.value {
            PropertyValue::Color(c) if p.id == prop::KD => Some(c),
            _ => None,
        })
    }

    /// The names of every texture map, in property order.
    pub fn texture_maps(&self) -> impl Iterator<Item = &str> + '_ {
        self.properties.iter().filter_map(|p| match &p.value {
            PropertyValue::Map(s) => Some(s.as_str()),
            _ => None,
        })
    }
}

/// A triangle (`MESH` record).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Face {
    /// Index into [`Model::materials`]; `None` = vertex colours.
    pub material: Option<usize>,
    /// Indices into [`Model::vertices`], counter-clockwise.
    pub vertices: [u32; 3],
    /// Indices into [`Model::texcoords`].
    pub texcoords: [Option<u32>; 3],
    /// Indices into [`Model::vertices`] of the normal vectors.
    pub normals: [Option<u32>; 3],
}

/// A voxel sub-item (content of a chest and the like).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VoxelItem {
    pub count: u16,
    pub name: Option<String>,
}

/// A voxel type (`VOXT` record).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VoxelType {
    /// Diffuse colour (0 when the model has no colours).
    pub color: Rgba,
    /// Technical name or material name.
    pub name: Option<String>,
    /// Rotation info byte (bit 6, the shape's high bit, removed).
    pub rotation: u8,
    /// Voxel shape, 0..512 (0 = full cube).
    pub shape: u16,
    /// Skin index, −1 none.
    pub skin: i32,
    pub items: Vec<VoxelItem>,
}

impl Default for VoxelType {
    fn default() -> Self {
        Self { color: Rgba(0), name: None, rotation: 0, shape: 0, skin: -1, items: Vec::new() }
    }
}

/// What one voxel cell holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Voxel {
    /// Unset: keep the world's voxel.
    Unset,
    /// Clear the world's voxel to air.
    Clear,
    /// A voxel of this type (index into [`Model::voxel_types`]).
    Type(u16),
}

impl Voxel {
    /// From a stored cell value.
    pub const fn from_cell(v: u16) -> Voxel {
        match v {
            VOXEL_UNSET => Voxel::Unset,
            VOXEL_CLEAR => Voxel::Clear,
            t => Voxel::Type(t),
        }
    }
    /// The stored cell value.
    pub const fn to_cell(self) -> u16 {
        match self {
            Voxel::Unset => VOXEL_UNSET,
            Voxel::Clear => VOXEL_CLEAR,
            Voxel::Type(t) => t,
        }
    }
}

/// A block of voxels (`VOXD`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VoxelBlock {
    pub name: Option<String>,
    /// Position of the block's (−X, −Y, −Z) cell; Y = 0 is the ground.
    pub position: [i32; 3],
    /// Size in cells along X, Y, Z.
    pub size: [u32; 3],
    /// Reverse probability (0 = always loaded).
    pub uncertainty: u8,
    /// Alternate block group (0 = none).
    pub group: u8,
    /// `size.x · size.y · size.z` cells in Y, Z, X order (a layer of rows per Y, a row per Z, X
    /// fastest); [`VOXEL_UNSET`], [`VOXEL_CLEAR`] or a type index.
    pub data: Vec<u16>,
}

impl VoxelBlock {
    /// Index into [`data`](Self::data) of cell `(x, y, z)` (block-local).
    pub fn index(&self, x: u32, y: u32, z: u32) -> usize {
        let [w, _, d] = self.size;
        ((y as usize * d as usize) + z as usize) * w as usize + x as usize
    }

    /// Cell `(x, y, z)` (block-local), `None` outside the block.
    pub fn get(&self, x: u32, y: u32, z: u32) -> Option<Voxel> {
        let [w, h, d] = self.size;
        (x < w && y < h && z < d).then(|| Voxel::from_cell(self.data[self.index(x, y, z)]))
    }

    /// Number of cells holding a voxel type.
    pub fn solid_count(&self) -> usize {
        self.data.iter().filter(|&&v| v != VOXEL_UNSET && v != VOXEL_CLEAR).count()
    }
}

/// An inlined asset (`ASET`): a PNG texture or a script.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Asset {
    pub name: String,
    pub data: Vec<u8>,
}

impl Asset {
    /// Whether the data is a PNG image.
    pub fn is_png(&self) -> bool {
        self.data.starts_with(b"\x89PNG\r\n\x1a\n")
    }
}

/// A chunk (or ASCII section) the reader did not decode.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SkippedChunk {
    /// The chunk magic (ASCII: the section keyword).
    pub magic: String,
    /// Byte offset of the chunk (in the inflated payload for a compressed file).
    pub offset: u64,
    /// Length in bytes, header included.
    pub length: u64,
}

/// A parsed Model 3D file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Model {
    /// Binary (plain or compressed) or ASCII.
    pub source: Source,
    /// Half the bounding cube's edge in metres (1.0 when the file says 0 or less).
    pub scale: f32,
    /// The header's widths; `None` for an ASCII model.
    pub types: Option<Types>,
    pub name: String,
    pub license: String,
    pub author: String,
    pub description: String,
    /// Every string of the string table, in order (binary models).
    pub strings: Vec<String>,
    /// The `PRVW` PNG, if any.
    pub preview: Option<Vec<u8>>,
    /// `CMAP` colours.
    pub colormap: Vec<Rgba>,
    /// `TMAP` texture coordinates (u, v); −V is up.
    pub texcoords: Vec<[f32; 2]>,
    /// `VRTS`.
    pub vertices: Vec<Vertex>,
    /// Bones in `BONE` (not decoded further).
    pub bone_count: usize,
    /// Skin records in `BONE` (not decoded).
    pub skin_count: usize,
    /// `MTRL`, plus materials that faces name without a definition.
    pub materials: Vec<Material>,
    /// `MESH` triangles.
    pub faces: Vec<Face>,
    /// `VOXT`.
    pub voxel_types: Vec<VoxelType>,
    /// `VOXD`, in file order (later blocks override earlier ones where they overlap).
    pub voxel_blocks: Vec<VoxelBlock>,
    /// `ASET`.
    pub assets: Vec<Asset>,
    /// Chunks not decoded (`ACTN`, `SHPE`, `LBLS`, `PROC`, unknown magics…).
    pub skipped: Vec<SkippedChunk>,
    /// Non-fatal problems.
    pub warnings: Vec<String>,
}

impl Model {
    /// Number of voxel cells holding a voxel type, over every block.
    pub fn voxel_count(&self) -> usize {
        self.voxel_blocks.iter().map(VoxelBlock::solid_count).sum()
    }

    /// Index of the material named `name`.
    pub fn material_index(&self, name: &str) -> Option<usize> {
        self.materials.iter().position(|m| m.name == name)
    }
}

/// A printable form of a chunk magic.
pub(crate) fn magic_name(magic: [u8; 4]) -> String {
    magic.iter().flat_map(|&b| std::ascii::escape_default(b)).map(char::from).collect()
}

/// Replaces what Model 3D identifiers may not contain (space, `/`, `\`, control characters) with
/// `_`, as the reference tools do.
pub fn sanitize_identifier(s: &str) -> String {
    s.chars().map(|c| if c == ' ' || c == '/' || c == '\\' || c.is_control() { '_' } else { c }).collect()
}
