//! One Rust type per table of the PMF 0.0 seed. Strings are resolved (the writer builds the string
//! tables itself, docs/spec/PMF-NOTES.md S1); flag bytes are kept raw with named bit constants so nothing is
//! lost on a round trip; "has X" flag bits that only announce optional data are derived from the
//! presence of that data (`Option`) and are not stored twice.

use std::num::NonZeroU32;
use std::sync::Arc;

use super::entity::Entity;

/// A whole `.pmf` file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct File {
    pub header: Header,
    /// The embedded PAF archive's bytes, empty for none (docs/spec/PMF-NOTES.md T1). Parsed by `format::paf`.
    pub archive: Vec<u8>,
    /// Extension blobs, kept verbatim (docs/spec/PMF-NOTES.md T2).
    pub extensions: Vec<Vec<u8>>,
    /// At least one (docs/spec/PMF-NOTES.md T3).
    pub levels: Vec<Level>,
    /// Global entities (Data's string table).
    pub entities: Vec<Entity>,
}

/// The file header.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Header {
    /// Creation time, UTC Unix seconds.
    pub creation_time: u64,
    pub name: String,
    pub description: String,
    pub authors: String,
    pub compiler_info: String,
    /// At most 32, each at most 15 bytes (docs/spec/PMF-NOTES.md S4).
    pub gamemodes: Vec<String>,
}

/// Most gamemodes a header holds.
pub const MAX_GAMEMODES: usize = 32;
/// Longest gamemode name in bytes (without the NUL).
pub const MAX_GAMEMODE_LEN: usize = 15;

/// Level flags bits.
pub mod level_flags {
    pub const KEEP_IN_CHUNK_OFFSET: u8 = 1 << 0;
    pub const KEEP_CHUNK_OFFSET: u8 = 1 << 1;
    pub const KEEP_VELOCITY: u8 = 1 << 2;
}

/// One level.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Level {
    /// [`level_flags`] bits.
    pub flags: u8,
    pub common: LevelCommon,
    pub client: LevelClient,
    pub server: LevelServer,
    /// Chunk edge is `2^chunk_size_exp` map units, 0..=15 (docs/spec/PMF-NOTES.md L2).
    pub chunk_size_exp: u8,
    pub grid: GridSize,
    pub center_chunk: ChunkIndex,
    /// Dense grid in `[Y][X][Z]` order: `grid.len()` chunks (docs/spec/PMF-NOTES.md L3).
    pub chunks: Vec<Chunk>,
}

/// Chunk counts per axis; `y` in 1..=256, `x` and `z` in 1..=4096.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GridSize {
    pub y: u16,
    pub x: u16,
    pub z: u16,
}

impl Default for GridSize {
    fn default() -> Self {
        Self { y: 1, x: 1, z: 1 }
    }
}

impl GridSize {
    pub const MAX_Y: u16 = 256;
    pub const MAX_XZ: u16 = 4096;

    /// Number of chunks in the grid.
    pub fn len(&self) -> usize {
        usize::from(self.y) * usize::from(self.x) * usize::from(self.z)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether each count is within the bit limits (and at least 1).
    pub fn is_valid(&self) -> bool {
        (1..=Self::MAX_Y).contains(&self.y)
            && (1..=Self::MAX_XZ).contains(&self.x)
            && (1..=Self::MAX_XZ).contains(&self.z)
    }

    /// The "Level chunk count" bits; `None` if out of range.
    pub fn to_bits(&self) -> Option<u32> {
        self.is_valid().then(|| (u32::from(self.y - 1) << 24) | (u32::from(self.x - 1) << 12) | u32::from(self.z - 1))
    }

    pub fn from_bits(bits: u32) -> Self {
        Self { y: (bits >> 24) as u16 + 1, x: ((bits >> 12) & 0xFFF) as u16 + 1, z: (bits & 0xFFF) as u16 + 1 }
    }

    /// Position of chunk `at` in the `[Y][X][Z]` array.
    pub fn linear(&self, at: ChunkIndex) -> Option<usize> {
        (u16::from(at.y) < self.y && at.x < self.x && at.z < self.z).then(|| {
            (usize::from(at.y) * usize::from(self.x) + usize::from(at.x)) * usize::from(self.z) + usize::from(at.z)
        })
    }

    /// Chunk index of position `i` in the `[Y][X][Z]` array.
    pub fn index_of(&self, i: usize) -> ChunkIndex {
        let z = i % usize::from(self.z);
        let x = (i / usize::from(self.z)) % usize::from(self.x);
        let y = i / (usize::from(self.z) * usize::from(self.x));
        ChunkIndex { y: y as u8, x: x as u16, z: z as u16 }
    }
}

/// A chunk index: Y in bits 31..24, X in 23..12, Z in 11..0 (docs/spec/PMF-NOTES.md L4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ChunkIndex {
    pub y: u8,
    /// 0..4096
    pub x: u16,
    /// 0..4096
    pub z: u16,
}

impl ChunkIndex {
    pub fn to_bits(self) -> u32 {
        (u32::from(self.y) << 24) | (u32::from(self.x & 0xFFF) << 12) | u32::from(self.z & 0xFFF)
    }

    pub fn from_bits(bits: u32) -> Self {
        Self { y: (bits >> 24) as u8, x: ((bits >> 12) & 0xFFF) as u16, z: (bits & 0xFFF) as u16 }
    }

    /// Whether x and z fit their 12 bits.
    pub fn is_valid(self) -> bool {
        self.x < 4096 && self.z < 4096
    }
}

impl std::fmt::Display for ChunkIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "y{} x{} z{}", self.y, self.x, self.z)
    }
}

/// Common level data.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LevelCommon {
    pub materials: Vec<Material>,
    pub physics_materials: Vec<PhysicsMaterial>,
    /// Named by their index in decimal (docs/spec/PMF-NOTES.md M2).
    pub sound_materials: Vec<SoundMaterial>,
    /// Empty = none.
    pub air_physics_material: String,
    pub weather_environments: Vec<WeatherEnvironment>,
    pub gravity_environments: Vec<GravityEnvironment>,
    pub default_weather: String,
    pub default_gravity: String,
}

/// Client level data.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LevelClient {
    pub sound_environments: Vec<SoundEnvironment>,
    pub sky_environments: Vec<SkyEnvironment>,
    pub default_sound: String,
    pub default_sky: String,
    /// One per level material, same order (docs/spec/PMF-NOTES.md M4).
    pub materials: Vec<ClientMaterial>,
}

/// Server level data.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LevelServer {
    /// Level-wide entities.
    pub entities: Vec<Entity>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct SoundEnvironment {
    pub name: String,
    pub low_pass: f32,
    pub high_pass: f32,
    pub reverb_delay: f32,
    pub reverb_feedback: f32,
    pub reverb_mix: f32,
    pub reverb_low_pass: f32,
    pub reverb_high_pass: f32,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct WeatherEnvironment {
    pub name: String,
    /// XYZ wind direction and velocity.
    pub wind: [f32; 3],
    pub wind_direction_seed: u32,
    pub wind_direction_randomness: [f32; 3],
    pub wind_direction_noise_speed: f32,
    pub wind_velocity_seed: u32,
    pub wind_velocity_randomness: f32,
    pub wind_velocity_noise_speed: f32,
}

/// Sky environment flag bits.
pub mod sky_flags {
    pub const SKYBOX_3D: u8 = 1 << 0;
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct SkyEnvironment {
    pub name: String,
    /// [`sky_flags`] bits.
    pub flags: u8,
    /// Skybox materials in face order +X, +Y, +Z, −X, −Y, −Z.
    pub skybox: [String; 6],
    pub cloud_top: String,
    pub cloud_bottom: String,
    pub skybox_chunk: ChunkIndex,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct GravityEnvironment {
    pub name: String,
    pub gravity: [f32; 3],
}

/// Material flag bits.
pub mod material_flags {
    pub const TRANSPARENT: u8 = 1 << 0;
    pub const LIQUID: u8 = 1 << 1;
}

/// Material render mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum RenderMode {
    #[default]
    Normal = 0,
    Add = 1,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Material {
    pub name: String,
    pub user_type: String,
    /// [`material_flags`] bits.
    pub flags: u8,
    pub render_mode: RenderMode,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct ClientMaterial {
    /// Empty = untextured.
    pub texture: String,
    pub extra_textures: Vec<String>,
    pub texture_advance_time_us: u32,
    pub uv_scroll: [f32; 2],
    pub color: [u8; 3],
    pub alpha: u8,
    pub emission: [u8; 3],
    pub shading: u8,
    pub shine: u8,
    pub matcap_texture: String,
    pub wave: WaveInfo,
}

/// Client-side material wave info (always present, docs/spec/PMF-NOTES.md M4).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WaveInfo {
    pub velocity: [f32; 3],
    pub wind_influence: f32,
    pub offset: f32,
    pub scale: f32,
}

/// Physics material flag bits.
pub mod physics_flags {
    pub const NOT_SOLID: u8 = 1 << 0;
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct PhysicsMaterial {
    pub name: String,
    /// [`physics_flags`] bits.
    pub flags: u8,
    /// Friction, or max speed when not solid.
    pub friction_or_max_speed: f32,
    pub traction: f32,
    pub bounce: f32,
    pub damage_min_speed: f32,
    pub damage_base: f32,
    pub damage_per_mps: f32,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct SoundMaterial {
    pub volume_dampening: f32,
    pub frequency_dampening: f32,
}

/// One chunk: its common, client and server blocks.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Chunk {
    pub common: ChunkCommon,
    pub client: ChunkClient,
    pub server: ChunkServer,
}

impl Chunk {
    /// Drops the spare capacity of the chunk's long lists (cubes, vertices, luxels), for a record
    /// that is kept: lists built by pushing (the reader past its first few thousand elements, the
    /// mesher) hold up to twice their length, a quarter of a big map's vertex memory.
    pub fn shrink_to_fit(&mut self) {
        self.common.cubes.shrink_to_fit();
        self.client.cubes.shrink_to_fit();
        self.server.cubes.shrink_to_fit();
        self.client.vertices.shrink_to_fit();
        for m in &mut self.client.lightmaps {
            m.luxels.shrink_to_fit();
        }
        for layer in self.client.dynamic_lights.iter_mut().flat_map(|l| &mut l.layers) {
            layer.luxels.shrink_to_fit();
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChunkCommon {
    /// At most 255 of each (u8 counts, docs/spec/PMF-NOTES.md M1).
    pub used_materials: Vec<String>,
    pub used_physics_materials: Vec<String>,
    pub used_sound_materials: Vec<String>,
    pub weather_regions: Vec<EnvironmentRegion>,
    pub gravity_regions: Vec<EnvironmentRegion>,
    pub dynamic_lights: Vec<DynamicLight>,
    pub fast_lights: Vec<FastLight>,
    /// At least one; cube 0 is the root (docs/spec/PMF-NOTES.md C1).
    pub cubes: Vec<Cube>,
}

impl Default for ChunkCommon {
    /// An all-air chunk: one empty root cube.
    fn default() -> Self {
        Self {
            used_materials: Vec::new(),
            used_physics_materials: Vec::new(),
            used_sound_materials: Vec::new(),
            weather_regions: Vec::new(),
            gravity_regions: Vec::new(),
            dynamic_lights: Vec::new(),
            fast_lights: Vec::new(),
            cubes: vec![Cube::default()],
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChunkClient {
    /// Names resolve through the chunk's common table (docs/spec/PMF-NOTES.md S3).
    pub sound_regions: Vec<EnvironmentRegion>,
    pub sky_regions: Vec<EnvironmentRegion>,
    pub lightmaps: Vec<Lightmap>,
    pub vertices: Vec<Vertex>,
    /// One per common dynamic light.
    pub dynamic_lights: Vec<ClientDynamicLight>,
    /// One per common fast light.
    pub fast_lights: Vec<ClientFastLight>,
    /// One per cube.
    pub cubes: Vec<ClientCube>,
}

impl Default for ChunkClient {
    fn default() -> Self {
        Self {
            sound_regions: Vec::new(),
            sky_regions: Vec::new(),
            lightmaps: Vec::new(),
            vertices: Vec::new(),
            dynamic_lights: Vec::new(),
            fast_lights: Vec::new(),
            cubes: vec![ClientCube::default()],
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChunkServer {
    pub load_regions: Vec<Region>,
    /// One per cube.
    pub cubes: Vec<ServerCube>,
    pub entities: Vec<Entity>,
}

impl Default for ChunkServer {
    fn default() -> Self {
        Self { load_regions: Vec::new(), cubes: vec![ServerCube::default()], entities: Vec::new() }
    }
}

/// An axis-aligned load region (docs/spec/PMF-NOTES.md R1).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Region {
    /// (+X, +Y, +Z) corner.
    pub max: [f32; 3],
    /// (−X, −Y, −Z) corner.
    pub min: [f32; 3],
    pub other_chunks: Vec<ChunkIndex>,
}

/// A hexahedral environment region (docs/spec/PMF-NOTES.md R1).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EnvironmentRegion {
    /// Corners in bit order (+X+Y+Z, −X+Y+Z, +X+Y−Z, −X+Y−Z, +X−Y+Z, −X−Y+Z, +X−Y−Z, −X−Y−Z).
    pub corners: [[f32; 3]; 8],
    pub environment: String,
}

/// A square lightmap page (docs/spec/PMF-NOTES.md K1).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Lightmap {
    /// Edge is `2^size_exp` luxels, 0..=12.
    pub size_exp: u8,
    /// `edge²` RGB triples, rows top to bottom: `3·edge²` bytes.
    pub luxels: Vec<u8>,
}

/// Largest lightmap edge exponent.
pub const MAX_LIGHTMAP_EXP: u8 = 12;

impl Lightmap {
    pub fn edge(&self) -> usize {
        1 << self.size_exp
    }

    /// Number of luxel bytes a lightmap of this size holds.
    pub fn byte_len(size_exp: u8) -> usize {
        3 << (2 * u32::from(size_exp))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Vertex {
    /// Relative to the chunk center (docs/spec/PMF-NOTES.md G1).
    pub position: [f32; 3],
    pub uv: [f32; 2],
    pub lightmap_uv: [f32; 2],
}

/// Dynamic and fast light flag bits.
pub mod light_flags {
    pub const ENABLE: u8 = 1 << 0;
    pub const PRESERVE: u8 = 1 << 1;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DynamicLight {
    /// [`light_flags`] bits.
    pub flags: u8,
    pub global_id: u32,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct ClientDynamicLight {
    pub color: [u8; 3],
    pub layers: Vec<LightmapLayer>,
}

/// A dynamic light's contribution to one lightmap: as many luxels as that lightmap (K1).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LightmapLayer {
    pub lightmap: u8,
    pub luxels: Vec<u8>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FastLight {
    /// [`light_flags`] bits.
    pub flags: u8,
    pub initial_intensity: u8,
    pub global_id: u32,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct ClientFastLight {
    pub color: [u8; 3],
    pub ranges: Vec<FastLightRange>,
}

/// Skip `skip` vertices, then one multiplier for each of the following vertices (K3).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FastLightRange {
    pub skip: u32,
    pub multipliers: Vec<u8>,
}

/// Cube flag bits (the low 4 bits are the type).
pub mod cube_flags {
    pub const HAS_VISIBILITY: u8 = 1 << 4;
    pub const HAS_LIGHTING: u8 = 1 << 5;
    pub const HAS_PATHFINDING: u8 = 1 << 6;
    pub const DRAW_BACKFACES: u8 = 1 << 7;
}

/// A cube (common part). "Has lighting/pathfinding" flags are derived from the client/server
/// cube's data; "has visibility" from `visibility`.
///
/// A chunk holds hundreds to thousands of these and a big map millions, so the rare wide parts are
/// boxed (visibility, moved points) and child indices use their niche: see the size test in
/// `format/pmf/tests.rs`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Cube {
    pub draw_backfaces: bool,
    /// Boxed: few air cells carry lists (the compiler leaves them off cells that see too much).
    pub visibility: Option<Box<Visibility>>,
    pub kind: CubeKind,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub enum CubeKind {
    #[default]
    Empty,
    Parent(ParentCube),
    Geometry(GeometryCube),
    ExtGeometry(ExtGeometryCube),
}

impl CubeKind {
    /// The type value (docs/spec/PMF-NOTES.md C3).
    pub fn type_id(&self) -> u8 {
        match self {
            CubeKind::Empty => 0,
            CubeKind::Parent(_) => 1,
            CubeKind::Geometry(_) => 2,
            CubeKind::ExtGeometry(_) => 3,
        }
    }
}

/// The index of a parent's child in the chunk's cube array. Never 0: cube 0 is the root, nobody's
/// child (docs/spec/PMF-NOTES.md C1), which gives `Option<ChildIndex>` a niche (4 bytes, not 8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ChildIndex(NonZeroU32);

impl ChildIndex {
    /// `index` as a child index; `None` for 0, the root.
    pub const fn new(index: u32) -> Option<ChildIndex> {
        match NonZeroU32::new(index) {
            Some(i) => Some(ChildIndex(i)),
            None => None,
        }
    }

    /// The index into the cube array.
    pub const fn get(self) -> u32 {
        self.0.get()
    }
}

/// Children in bit order (docs/spec/PMF-NOTES.md C2): 0 (+X,+Y,+Z), 1 (−X,+Y,+Z), 2 (+X,+Y,−Z), 3 (−X,+Y,−Z),
/// 4 (+X,−Y,+Z), 5 (−X,−Y,+Z), 6 (+X,−Y,−Z), 7 (−X,−Y,−Z). `None` = empty space.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ParentCube {
    pub children: [Option<ChildIndex>; 8],
}

impl ParentCube {
    /// A parent of these children (cube indices in bit order); `None` when one is 0, the root.
    pub fn from_indices(children: [Option<u32>; 8]) -> Option<ParentCube> {
        let mut out = ParentCube::default();
        for (slot, c) in out.children.iter_mut().zip(children) {
            *slot = match c {
                Some(c) => Some(ChildIndex::new(c)?),
                None => None,
            };
        }
        Some(out)
    }

    /// The children's cube indices in bit order, `None` = empty space.
    pub fn indices(&self) -> [Option<u32>; 8] {
        self.children.map(|c| c.map(ChildIndex::get))
    }

    /// The cube indices of the children there are, in bit order.
    pub fn present(&self) -> impl Iterator<Item = u32> + '_ {
        self.children.iter().flatten().map(|c| c.get())
    }
}

/// Indices into the chunk's used material lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GeometryCube {
    pub material: u8,
    pub physics_material: u8,
    pub sound_material: u8,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct ExtGeometryCube {
    /// Face order +X, +Y, +Z, −X, −Y, −Z.
    pub materials: [u8; 6],
    pub physics_materials: [u8; 6],
    pub sound_material: u8,
    /// Moved corners (docs/spec/PMF-NOTES.md C4).
    pub points: MovedPoints,
}

/// The moved corners of an extended geometry cube in bit order, relative to the cube center
/// (docs/spec/PMF-NOTES.md C4); an unmoved corner has none. Stored as the file does, in one boxed
/// slice: the "point moved" bits, then the moved points only (no allocation when none moved). Eight
/// optional points inline would take 128 bytes in every cube record, for the few cubes that move
/// corners (and those mostly move the four top ones); a separate bits byte would widen
/// [`CubeKind`] by 8.
#[derive(Clone, Default)]
pub struct MovedPoints(
    /// Empty when no corner moved; else the bits (bit `i` set = corner `i` moved), then three
    /// `f32` bit patterns per moved corner in bit order.
    Box<[u32]>,
);

impl MovedPoints {
    /// The points of `corners` (in bit order, `None` = unmoved).
    pub fn new(corners: [Option<[f32; 3]>; 8]) -> MovedPoints {
        let mask = corners.iter().enumerate().filter(|(_, p)| p.is_some()).fold(0u32, |m, (bit, _)| m | 1 << bit);
        if mask == 0 {
            return MovedPoints::default();
        }
        let points = corners.into_iter().flatten().flatten().map(f32::to_bits);
        MovedPoints(std::iter::once(mask).chain(points).collect())
    }

    /// Corner `bit`'s moved position, `None` when unmoved (or `bit` is past 7).
    pub fn get(&self, bit: usize) -> Option<[f32; 3]> {
        let bit = u32::try_from(bit).ok().filter(|&b| b < 8)?;
        let mask = self.mask();
        if mask & (1 << bit) == 0 {
            return None;
        }
        // Its place among the moved points: how many lower corners moved.
        let at = 1 + 3 * (mask & ((1 << bit) - 1)).count_ones() as usize;
        let p = self.0.get(at..at + 3)?;
        Some([f32::from_bits(p[0]), f32::from_bits(p[1]), f32::from_bits(p[2])])
    }

    /// All eight corners in bit order, `None` = unmoved.
    pub fn corners(&self) -> [Option<[f32; 3]>; 8] {
        std::array::from_fn(|bit| self.get(bit))
    }

    /// The "point moved" bits (bit `i` = corner `i`), as the file stores them.
    pub fn mask(&self) -> u8 {
        self.0.first().map_or(0, |&m| m as u8)
    }

    /// The moved corners' positions in bit order.
    pub fn moved(&self) -> impl Iterator<Item = [f32; 3]> + '_ {
        let points = self.0.get(1..).unwrap_or_default();
        points.chunks_exact(3).map(|p| [f32::from_bits(p[0]), f32::from_bits(p[1]), f32::from_bits(p[2])])
    }

    /// Moves corner `bit` (0..8) to `point`, or back to unmoved with `None`.
    pub fn set(&mut self, bit: usize, point: Option<[f32; 3]>) {
        let mut corners = self.corners();
        corners[bit] = point;
        *self = MovedPoints::new(corners);
    }

    /// Whether no corner moved.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The bytes it takes on the heap (allocator overhead aside), for memory reports.
    pub fn heap_bytes(&self) -> usize {
        size_of_val(&*self.0)
    }
}

/// Equal when the same corners moved to the same positions (`f32` comparison, as the eight
/// optional points compared).
impl PartialEq for MovedPoints {
    fn eq(&self, other: &MovedPoints) -> bool {
        self.corners() == other.corners()
    }
}

impl std::fmt::Debug for MovedPoints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("MovedPoints").field(&self.corners()).finish()
    }
}

/// Client-side cube data.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ClientCube {
    pub lighting: Option<CubeLighting>,
    /// Must match the common cube's kind.
    pub geometry: ClientGeometry,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub enum ClientGeometry {
    /// For empty and parent cubes.
    #[default]
    None,
    Geometry(ClientGeometryCube),
    ExtGeometry(ClientExtGeometryCube),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ClientGeometryCube {
    pub lightmap: u8,
    pub first_vertex: u32,
    /// Face bits: bit i = face i in order +X, +Y, +Z, −X, −Y, −Z (docs/spec/PMF-NOTES.md C5); bits 6–7 zero.
    pub faces: u8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ClientExtGeometryCube {
    pub first_vertex: u32,
    /// Per face, face order.
    pub lightmaps: [u8; 6],
    pub triangle_counts: [u8; 6],
}

/// Server-side cube data.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ServerCube {
    /// Boxed slice, not a `Vec`: a third less per cube, and no spare capacity.
    pub pathfinding: Option<Box<[PathAttribute]>>,
}

/// Visibility data of an air cube (docs/spec/PMF-NOTES.md V1). The lists are shared (`Arc`):
/// the compiler gives many air cubes the same lists, and a level's lists can run into many
/// times its geometry.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Visibility {
    /// Visible cubes of the same chunk, ascending.
    pub cubes: Arc<[u32]>,
    pub chunks: Arc<[VisibleChunk]>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct VisibleChunk {
    pub chunk: ChunkIndex,
    /// Empty = every cube of that chunk.
    pub cubes: Vec<u32>,
}

/// The light of an air cube (docs/spec/PMF-NOTES.md K4): its base colour and the dynamic and fast
/// lights that reach it. The references are boxed, and only there when there is one: most lit cells
/// have none (a sun-only map none at all), and two inline `Vec`s would add 48 bytes to every cube.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CubeLighting {
    pub base: [u8; 3],
    /// `None` when both lists are empty, so that equal lighting compares equal.
    refs: Option<Box<LightRefs>>,
}

/// The light references of a [`CubeLighting`].
#[derive(Debug, Clone, PartialEq, Default)]
struct LightRefs {
    dynamic: Vec<LightRef>,
    fast: Vec<LightRef>,
}

impl CubeLighting {
    /// Lighting of base colour `base` reached by these dynamic and fast lights.
    pub fn new(base: [u8; 3], dynamic: Vec<LightRef>, fast: Vec<LightRef>) -> CubeLighting {
        let refs = (!dynamic.is_empty() || !fast.is_empty()).then(|| Box::new(LightRefs { dynamic, fast }));
        CubeLighting { base, refs }
    }

    /// Lighting of base colour `base` and no light references.
    pub fn from_base(base: [u8; 3]) -> CubeLighting {
        CubeLighting { base, refs: None }
    }

    /// The dynamic lights that reach the cube.
    pub fn dynamic(&self) -> &[LightRef] {
        self.refs.as_ref().map_or(&[], |r| &r.dynamic)
    }

    /// The fast lights that reach the cube.
    pub fn fast(&self) -> &[LightRef] {
        self.refs.as_ref().map_or(&[], |r| &r.fast)
    }

    /// Adds a reference to a dynamic light.
    pub fn push_dynamic(&mut self, r: LightRef) {
        self.refs.get_or_insert_default().dynamic.push(r);
    }

    /// Adds a reference to a fast light.
    pub fn push_fast(&mut self, r: LightRef) {
        self.refs.get_or_insert_default().fast.push(r);
    }

    /// The bytes its references take on the heap (allocator overhead aside), for memory reports.
    pub fn heap_bytes(&self) -> usize {
        self.refs
            .as_ref()
            .map_or(0, |r| size_of::<LightRefs>() + (r.dynamic.capacity() + r.fast.capacity()) * size_of::<LightRef>())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LightRef {
    pub index: u8,
    pub amount: u8,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct PathAttribute {
    pub name: String,
    pub direction: [f32; 3],
}
