//! Importing a Voxel Play world save ([`WorldSave`]) into a level of a map.
//!
//! # Placement and axes
//! One Voxel Play voxel (one Unity unit) becomes a cube of edge `2^cube_log2` lattice units
//! (`cube_log2 = 3`: one map unit). Voxel Play world position `p` (Unity units) goes to level
//! lattice position `at + p · 2^cube_log2`, so `at` is where the Voxel Play world origin lands.
//! Both Unity and PlatinumSrc levels are Y-up; the axes are kept as they are (Unity X → X, Y → Y,
//! Z → Z). Unity is left-handed: if the engine's level space is right-handed the imported world is
//! the mirror image along Z, which changes no cube adjacency.
//!
//! Voxel `i` of a chunk of edge `s` lies at `x = i % s`, `z = (i / s) % s`, `y = i / s²` from the
//! chunk's minimum corner (Voxel Play's `index = y·s² + z·s + x`; the specification does not say,
//! Voxel Play's `GetVoxelIndex`/`ONE_Y_ROW`/`ONE_Z_ROW` do). Voxel Play stores each chunk's
//! **center**; the minimum corner is `position − s/2`. [`ChunkAnchor`] says which was detected: if
//! every chunk position is a multiple of `s` on every axis (and none is centered), the positions
//! are taken as corners instead.
//!
//! # What becomes what
//! - **Voxels** → solid cubes. Runs are merged (contiguous runs of the same material, which
//!   Voxel Play splits when only the flags byte differs), cut into at most 5 boxes each (partial
//!   row, rows, layers, rows, partial row), and boxes are merged across runs and chunks along X,
//!   then Z, then Y, before one [`Level::fill_box`](crate::map::Level::fill_box) per box. Voxels only
//!   add: air in a saved chunk does not clear what the level already has there.
//! - **Materials**: one per (definition name, tint colour). White-tinted voxels use a material
//!   named like the definition, other tints `"<definition> #rrggbb"`. A material of that name
//!   already in the library is used as is (matched by name); otherwise one is created with the
//!   tint as its client-side colour, painting the physics and sound materials of the library's
//!   `"default"` material (or the first ones; they are created if the library has none).
//! - **Torches / light sources** → static point lights named after the torch's item definition
//!   (`"torch"` when unknown), colour [`TORCH_COLOR`], intensity 1, range [`TORCH_RANGE`] voxels.
//!   Voxel Play stores the voxel the torch is attached to and the face normal: the light goes on
//!   that face, [`TORCH_AIR_OFFSET`] voxels out into the air. If that voxel is air in the save,
//!   the torch is taken to sit in it, on the face of the solid neighbour against the normal.
//! - **Items** → prop entities named after the item definition, with an `i32` scalar custom
//!   property `quantity`.
//! - **Game objects** → generic entities named like the object, positioned, rotation = the euler
//!   angles as Voxel Play stores them (degrees); every key/value pair becomes a `str` scalar custom
//!   property, plus `prefab` (`str`, the Resources path) and `scale` (`f32[3]`) unless a key of
//!   that name exists.
//! - **Custom data sections** → [`VoxelPlayReport::custom_sections`], as stored (compressed):
//!   nothing in the map holds them yet; the project is to persist them later.
//! - **Per-voxel custom properties** (formats 13/14) are not imported; the report counts them.
//! - The **character position** is reported as [`VoxelPlayReport::player_start`] (level space).
//!
//! Text going into the map has NUL characters removed (the map refuses them).
//!
//! # What does not fit
//! Voxels are kept only inside the level grid and, when given, the crop box
//! ([`ImportOptions::crop`], Voxel Play voxel coordinates): everything else is dropped, and each
//! chunk that lost voxels is listed in [`VoxelPlayReport::dropped`] with how many and why, as are
//! torches, items and game objects outside. Only when *nothing* fits is the import refused
//! ([`VoxelPlayImportError::NothingFits`]).
//!
//! Chunks at Voxel Play's **overflow position** are always dropped ([`DropReason::Overflow`]):
//! Voxel Play turns a world position into a chunk index with `(int)(v / s + 10⁶) − 10⁶` (its
//! `FastMath.FloorToInt`; later releases shift by 10⁷). For a NaN, infinite or out-of-`int`-range
//! coordinate that cast yields `int.MinValue` (x86) or 0 (ARM); both end, after the wrapping
//! `chunkIndex · s + s/2` of `CreateChunk`, at the same chunk center `−10⁶·s + s/2` (−15 999 992
//! for chunks of 16). A game that edits voxels at such a coordinate gets a modified chunk there,
//! which the save then holds like any other: one chunk 16 million units from the world.
//!
//! # Errors
//! Everything is checked before the map changes (level index, cube size, something inside the
//! level grid); a library error after that (a full material table) leaves the materials and
//! cubes placed so far.

use std::collections::HashMap;
use std::fmt;

use glam::{DVec3, IVec3, Vec3};

use crate::format::pmf::entity::{CustomProperty, EntityData, Generic, Prop, PropertyData, PropertyValues};
use crate::format::voxelplay::{Chunk, WorldSave};
use crate::map::Map;
use crate::map::coords::{LatticeBox, LevelFrame};
use crate::map::level::{ChunkChanges, LevelError};
use crate::map::library::{
    EntityId, LibraryError, Light, LightId, MapEntity, Material, MaterialId, PhysicsId, PhysicsMaterial, SoundId,
    SoundMaterial,
};
use crate::map::octree::Cube;

/// Colour of imported torches.
pub const TORCH_COLOR: [u8; 3] = [255, 200, 140];
/// Range of imported torches, in voxels.
pub const TORCH_RANGE: f32 = 10.0;
/// How far into the air, in voxels, a torch sits off the face it is attached to.
pub const TORCH_AIR_OFFSET: f64 = 0.25;
/// Largest `cube_log2` accepted (a voxel as big as the biggest chunk).
pub const MAX_CUBE_LOG2: u8 = crate::map::coords::MAX_CHUNK_LATTICE_LOG2;

/// How chunk positions were interpreted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChunkAnchor {
    /// Chunk centers (what Voxel Play writes).
    #[default]
    Center,
    /// Chunk minimum corners (every position a multiple of the chunk size).
    Corner,
}

/// Voxel Play chunk index that `FastMath.FloorToInt` gives a NaN, infinite or out-of-range
/// coordinate, for its two shifts (10⁶, and 10⁷ in later releases). See the module documentation.
pub const OVERFLOW_CHUNK_INDICES: [i64; 2] = [-1_000_000, -10_000_000];

/// A box of Voxel Play voxel coordinates (Unity world units), `min` inclusive, `max` exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VoxelBox {
    pub min: [i64; 3],
    pub max: [i64; 3],
}

impl VoxelBox {
    /// The intersection (possibly empty).
    fn intersect(&self, o: &VoxelBox) -> VoxelBox {
        VoxelBox {
            min: std::array::from_fn(|k| self.min[k].max(o.min[k])),
            max: std::array::from_fn(|k| self.max[k].min(o.max[k])),
        }
    }

    fn is_empty(&self) -> bool {
        (0..3).any(|k| self.min[k] >= self.max[k])
    }

    /// Whether the point (voxel coordinates, fractional) lies inside.
    fn contains_point(&self, p: DVec3) -> bool {
        let p = p.to_array();
        (0..3).all(|k| p[k] >= self.min[k] as f64 && p[k] < self.max[k] as f64)
    }
}

/// Where and how [`import_world`] places a save.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImportOptions {
    /// The level lattice position the Voxel Play world origin lands on.
    pub at: IVec3,
    /// Each voxel is a cube of edge `2^cube_log2` lattice units.
    pub cube_log2: u8,
    /// Keep only voxels (and torches, items, game objects) inside this box of Voxel Play
    /// coordinates.
    pub crop: Option<VoxelBox>,
}

impl ImportOptions {
    /// The whole save at `at`, voxels of `2^cube_log2` lattice units.
    pub fn at(at: IVec3, cube_log2: u8) -> Self {
        Self { at, cube_log2, crop: None }
    }
}

/// Why voxels of a chunk were not imported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// The chunk sits at Voxel Play's overflow position (see the module documentation).
    Overflow,
    /// Outside the level grid at this placement.
    OutsideGrid,
    /// Inside the grid but outside the crop box.
    OutsideCrop,
}

impl fmt::Display for DropReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Overflow => {
                "it sits where Voxel Play puts a chunk asked for at a NaN, infinite or out-of-range \
                 coordinate (chunk index -1000000), not part of the world"
            }
            Self::OutsideGrid => "outside the level grid (move the import origin to bring it in)",
            Self::OutsideCrop => "outside the crop box",
        })
    }
}

/// A chunk that lost voxels to [`DropReason`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DroppedChunk {
    /// Index of the chunk in the save.
    pub index: usize,
    /// Its position as stored.
    pub position: [f32; 3],
    /// Voxels not imported.
    pub voxels: u64,
    /// Voxels of the chunk that were imported.
    pub kept: u64,
    pub reason: DropReason,
}

/// How many chunks [`VoxelPlayReport::warnings`] lists one by one before summing up the rest.
const LISTED_DROPS: usize = 16;

/// What [`import_world`] did.
#[derive(Debug, Clone, Default)]
pub struct VoxelPlayReport {
    /// Voxels placed.
    pub voxels: u64,
    /// Boxes filled (after merging).
    pub boxes: usize,
    /// Materials created, in (definition index, tint) order.
    pub materials_created: Vec<MaterialId>,
    /// Existing materials used because their name matched.
    pub materials_matched: Vec<MaterialId>,
    /// Lights added (one per torch).
    pub lights: Vec<LightId>,
    /// Entities added: items (props), then game objects (generic entities).
    pub entities: Vec<EntityId>,
    /// The custom data sections, name and bytes as stored (raw Deflate). Not kept in the map yet:
    /// the caller has to persist them.
    pub custom_sections: Vec<(String, Vec<u8>)>,
    /// Voxels with per-voxel custom properties (not imported).
    pub voxel_properties_skipped: usize,
    /// How chunk positions were read.
    pub chunk_anchor: ChunkAnchor,
    /// The character controller position, in level space (map units).
    pub player_start: Option<Vec3>,
    /// The chunks whose cubes changed.
    pub changes: ChunkChanges,
    /// Chunks with voxels that were not imported, in save order.
    pub dropped: Vec<DroppedChunk>,
    /// Voxels not imported (the sum over [`dropped`](Self::dropped)).
    pub dropped_voxels: u64,
    /// Torches, items and game objects not imported because they lie outside.
    pub dropped_objects: usize,
    /// What was skipped or adjusted, for the user.
    pub warnings: Vec<String>,
}

/// Why an import was refused or stopped.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum VoxelPlayImportError {
    #[error("the map has no level {0}")]
    NoLevel(usize),
    #[error("cube size exponent {0} is larger than {MAX_CUBE_LOG2}")]
    CubeSize(u8),
    /// Not one voxel lies inside the level grid (and the crop box): nothing would be imported.
    #[error(
        "none of the {voxels} voxels fits: they span lattice {min:?}..{max:?}, outside the level grid{}",
        if *.cropped { " or the crop box" } else { "" }
    )]
    NothingFits { voxels: u64, min: [i64; 3], max: [i64; 3], cropped: bool },
    #[error(transparent)]
    Level(#[from] LevelError),
    #[error(transparent)]
    Library(#[from] LibraryError),
}

/// A material key: voxel definition index and tint.
type Key = (u16, [u8; 3]);

/// A box of voxels in Voxel Play voxel coordinates, `[min, max)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct VBox {
    key: Key,
    min: [i64; 3],
    max: [i64; 3],
}

/// Imports `save` into level `level` of `map`; the Voxel Play origin lands on lattice position
/// `options.at`, each voxel is a cube of edge `2^options.cube_log2` lattice units. What does not
/// fit is dropped and reported. See the [module documentation](self).
pub fn import_world(
    map: &mut Map,
    level: usize,
    save: &WorldSave,
    options: &ImportOptions,
) -> Result<VoxelPlayReport, VoxelPlayImportError> {
    let ImportOptions { at, cube_log2, crop } = *options;
    if level >= map.levels.len() {
        return Err(VoxelPlayImportError::NoLevel(level));
    }
    if cube_log2 > MAX_CUBE_LOG2 {
        return Err(VoxelPlayImportError::CubeSize(cube_log2));
    }
    let mut report = VoxelPlayReport::default();
    let size = i64::from(save.chunk_size.max(1));
    let edge = 1i64 << cube_log2;
    let frame = map.levels[level].frame();
    let place = Placement { at, edge: edge as f64, frame };

    // Chunk origins (voxel coordinates of the minimum corner); a later chunk at the same place
    // replaces an earlier one.
    report.chunk_anchor = detect_anchor(&save.chunks, size);
    let mut origins: Vec<Option<[i64; 3]>> = Vec::with_capacity(save.chunks.len());
    let mut seen: HashMap<[i64; 3], usize> = HashMap::new();
    for (i, c) in save.chunks.iter().enumerate() {
        let o = chunk_origin(c, size, report.chunk_anchor);
        if o.is_none() {
            report.warnings.push(format!("chunk {i}: position {:?} is not a usable number; skipped", c.position));
        }
        if let Some(o) = o
            && let Some(prev) = seen.insert(o, i)
        {
            report.warnings.push(format!("chunk {i} is at the same place as chunk {prev}, which it replaces"));
            origins[prev] = None;
        }
        origins.push(o);
    }

    // What may be imported, in voxel coordinates: whole voxels inside the grid, and the crop.
    let to_lattice = |v: [i64; 3]| -> [i64; 3] {
        let a = at.to_array();
        std::array::from_fn(|k| i64::from(a[k]).saturating_add(v[k].saturating_mul(edge)))
    };
    let grid = frame.grid_box();
    let in_grid = VoxelBox {
        min: std::array::from_fn(|k| ceil_div(i64::from(grid.min[k]) - i64::from(at[k]), edge)),
        max: std::array::from_fn(|k| (i64::from(grid.max[k]) - i64::from(at[k])).div_euclid(edge)),
    };
    let allowed = crop.map_or(in_grid, |c| c.intersect(&in_grid));

    // Voxel boxes per chunk, clipped to what is allowed, then merged.
    let mut boxes = Vec::new();
    let mut chunk_box = Vec::new();
    let mut span: Option<VoxelBox> = None;
    for (i, (c, o)) in save.chunks.iter().zip(&origins).enumerate() {
        let Some(o) = o else { continue };
        chunk_box.clear();
        chunk_boxes(c, *o, size, &mut chunk_box);
        let all: u64 = chunk_box.iter().map(volume).sum();
        if all == 0 {
            continue;
        }
        report.voxel_properties_skipped += c.voxel_properties.len();
        for b in &chunk_box {
            let s = span.get_or_insert(VoxelBox { min: b.min, max: b.max });
            *s = VoxelBox {
                min: std::array::from_fn(|k| s.min[k].min(b.min[k])),
                max: std::array::from_fn(|k| s.max[k].max(b.max[k])),
            };
        }
        let overflow = is_overflow_chunk(c, size);
        let mut kept = 0;
        if !overflow {
            for b in &chunk_box {
                let clipped = VoxelBox { min: b.min, max: b.max }.intersect(&allowed);
                if !clipped.is_empty() {
                    let v = VBox { key: b.key, min: clipped.min, max: clipped.max };
                    kept += volume(&v);
                    boxes.push(v);
                }
            }
        }
        if kept < all {
            let reason = if overflow {
                DropReason::Overflow
            } else if crop.is_some() && chunk_box.iter().all(|b| inside(b, &in_grid)) {
                DropReason::OutsideCrop
            } else {
                DropReason::OutsideGrid
            };
            report.dropped.push(DroppedChunk { index: i, position: c.position, voxels: all - kept, kept, reason });
            report.dropped_voxels += all - kept;
        }
    }
    report.voxels = boxes.iter().map(volume).sum();
    if boxes.is_empty()
        && let Some(s) = span
    {
        let voxels = report.dropped_voxels;
        return Err(VoxelPlayImportError::NothingFits {
            voxels,
            min: to_lattice(s.min),
            max: to_lattice(s.max),
            cropped: crop.is_some(),
        });
    }
    let boxes = merge_boxes(boxes);
    for d in report.dropped.iter().take(LISTED_DROPS) {
        let p = d.position;
        report.warnings.push(format!(
            "chunk {} at ({}, {}, {}): {} of its {} voxels not imported: {}",
            d.index,
            p[0],
            p[1],
            p[2],
            d.voxels,
            d.voxels + d.kept,
            d.reason
        ));
    }
    if report.dropped.len() > LISTED_DROPS {
        let rest = &report.dropped[LISTED_DROPS..];
        report.warnings.push(format!(
            "{} more chunks lost {} voxels outside the level grid or the crop box",
            rest.len(),
            rest.iter().map(|d| d.voxels).sum::<u64>()
        ));
    }
    // Torches, items and game objects go where voxels may go (voxel coordinates).
    let keeps = |p: DVec3| allowed.contains_point(p);

    // Materials, in (definition, tint) order.
    let mut materials = Materials::new(map)?;
    let mut cubes: HashMap<Key, Cube> = HashMap::new();
    for b in &boxes {
        if let std::collections::hash_map::Entry::Vacant(e) = cubes.entry(b.key) {
            let name = material_name(save, b.key);
            e.insert(materials.get(map, &name, b.key.1, &mut report)?);
        }
    }

    // Cubes.
    let lvl = &mut map.levels[level];
    for b in &boxes {
        let (min, max) = (to_lattice(b.min), to_lattice(b.max));
        let region = LatticeBox::new(
            IVec3::new(min[0] as i32, min[1] as i32, min[2] as i32),
            IVec3::new(max[0] as i32, max[1] as i32, max[2] as i32),
        );
        let changes = lvl.fill_box(region, cubes[&b.key])?;
        report.changes.merge(&changes);
    }
    report.boxes = boxes.len();

    // Torches.
    for (ci, (c, o)) in save.chunks.iter().zip(&origins).enumerate() {
        let Some(o) = o else { continue };
        let solid = SolidIndex::new(c);
        for (li, l) in c.light_sources.iter().enumerate() {
            if i64::from(l.voxel_index) >= size * size * size {
                report.warnings.push(format!("chunk {ci} torch {li}: voxel index {} outside the chunk", l.voxel_index));
                continue;
            }
            let local = voxel_local(i64::from(l.voxel_index), size);
            let center = DVec3::new(
                (o[0] + local[0]) as f64 + 0.5,
                (o[1] + local[1]) as f64 + 0.5,
                (o[2] + local[2]) as f64 + 0.5,
            );
            let n = DVec3::from_array(l.normal.map(f64::from));
            let n = if n.is_finite() && n.length_squared() > 1e-12 { n.normalize() } else { DVec3::Y };
            let p = if solid.contains(u32::from(l.voxel_index)) {
                center + n * (0.5 + TORCH_AIR_OFFSET)
            } else {
                center - n * (0.5 - TORCH_AIR_OFFSET)
            };
            if !keeps(p) || is_overflow_chunk(c, size) {
                report.dropped_objects += 1;
                continue;
            }
            let name = l
                .item_definition
                .and_then(|d| usize::try_from(d).ok())
                .and_then(|d| save.item_definitions.get(d))
                .map_or_else(|| "torch".to_owned(), |s| clean(s));
            let mut light = Light::point(name, place.world(p).as_vec3());
            light.color = TORCH_COLOR;
            light.range = TORCH_RANGE * (edge as f32 / crate::map::coords::LATTICE_PER_UNIT as f32);
            let id = map.levels[level].objects.add(light)?;
            report.lights.push(id);
        }
    }

    // Items.
    for (ci, c) in save.chunks.iter().enumerate() {
        for it in &c.items {
            let p = DVec3::from_array(it.position.map(f64::from));
            if !p.is_finite() {
                report.warnings.push(format!("chunk {ci}: item with a non-finite position skipped"));
                continue;
            }
            if !keeps(p) {
                report.dropped_objects += 1;
                continue;
            }
            let name = usize::try_from(it.definition)
                .ok()
                .and_then(|d| save.item_definitions.get(d))
                .map_or_else(|| format!("item {}", it.definition), |s| clean(s));
            let data = EntityData::Prop(Prop { position: place.world(p).as_vec3().to_array(), ..Prop::default() });
            let mut e = MapEntity::new(name, data);
            e.entity.custom.push(CustomProperty {
                name: "quantity".to_owned(),
                value: PropertyData::scalar(PropertyValues::I32(vec![i32::from(it.quantity)])),
            });
            report.entities.push(map.levels[level].objects.add(e)?);
        }
    }

    // Game objects.
    for (gi, g) in save.game_objects.iter().enumerate() {
        let p = DVec3::from_array(g.position.map(f64::from));
        if !p.is_finite() {
            report.warnings.push(format!("game object {gi} ({:?}): non-finite position; skipped", g.name));
            continue;
        }
        if !keeps(p) {
            report.dropped_objects += 1;
            continue;
        }
        let name = if g.name.is_empty() {
            clean(g.prefab_path.rsplit('/').next().unwrap_or_default())
        } else {
            clean(&g.name)
        };
        let data = EntityData::Generic(Generic {
            position: place.world(p).as_vec3().to_array(),
            rotation: g.rotation,
            ..Generic::default()
        });
        let mut e = MapEntity::new(name, data);
        for (k, v) in &g.data {
            e.entity.custom.push(CustomProperty { name: clean(k), value: str_prop(v) });
        }
        let has = |e: &MapEntity, n: &str| e.entity.custom.iter().any(|c| c.name == n);
        if !has(&e, "prefab") {
            e.entity.custom.push(CustomProperty { name: "prefab".to_owned(), value: str_prop(&g.prefab_path) });
        }
        if !has(&e, "scale") {
            e.entity.custom.push(CustomProperty {
                name: "scale".to_owned(),
                value: PropertyData::array(vec![3], PropertyValues::F32(g.scale.to_vec())),
            });
        }
        report.entities.push(map.levels[level].objects.add(e)?);
    }

    report.custom_sections = save.custom_sections.iter().map(|s| (s.name.clone(), s.data.clone())).collect();
    let start = DVec3::from_array(save.character_position.map(f64::from));
    report.player_start = start.is_finite().then(|| place.world(start).as_vec3());
    if report.dropped_objects > 0 {
        report.warnings.push(format!(
            "{} torches, items or game objects outside the level grid or the crop box: not imported",
            report.dropped_objects
        ));
    }
    if report.voxel_properties_skipped > 0 {
        report
            .warnings
            .push(format!("{} voxels with custom properties: not imported", report.voxel_properties_skipped));
    }
    Ok(report)
}

/// Voxel Play world coordinates → level space.
struct Placement {
    at: IVec3,
    edge: f64,
    frame: LevelFrame,
}

impl Placement {
    /// Level-space position (map units) of Voxel Play world position `p`.
    fn world(&self, p: DVec3) -> DVec3 {
        self.frame.world_from_lattice_f(self.at.as_dvec3() + p * self.edge)
    }
}

/// `s` without NUL characters.
fn clean(s: &str) -> String {
    s.replace('\0', "")
}

fn str_prop(s: &str) -> PropertyData {
    PropertyData::scalar(PropertyValues::Str(vec![clean(s)]))
}

/// The material name of a (definition, tint) pair.
fn material_name(save: &WorldSave, (def, color): Key) -> String {
    let base = save.voxel_definitions.get(usize::from(def)).map(|s| clean(s)).unwrap_or_default();
    let base = if base.is_empty() { format!("voxel {def}") } else { base };
    if color == [255; 3] { base } else { format!("{base} #{:02x}{:02x}{:02x}", color[0], color[1], color[2]) }
}

/// Finds or creates the materials of the import.
struct Materials {
    physics: PhysicsId,
    sound: SoundId,
    by_name: HashMap<String, Cube>,
}

impl Materials {
    fn new(map: &mut Map) -> Result<Self, LibraryError> {
        let lib = &mut map.library;
        let default = lib.materials().by_name("default").map(|(_, m)| (m.physics, m.sound));
        let (physics, sound) = match default {
            Some(d) => d,
            None => {
                let first = lib.physics_materials().ids().next();
                let physics = match first {
                    Some(p) => p,
                    None => lib.add_unique(PhysicsMaterial::new("default"))?,
                };
                let first = lib.sound_materials().ids().next();
                let sound = match first {
                    Some(s) => s,
                    None => lib.add_unique(SoundMaterial::new("default"))?,
                };
                (physics, sound)
            }
        };
        Ok(Self { physics, sound, by_name: HashMap::new() })
    }

    /// The cube painting the material named `name`, creating it with `color` if needed.
    fn get(
        &mut self,
        map: &mut Map,
        name: &str,
        color: [u8; 3],
        report: &mut VoxelPlayReport,
    ) -> Result<Cube, LibraryError> {
        if let Some(c) = self.by_name.get(name) {
            return Ok(*c);
        }
        let lib = &mut map.library;
        let existing = lib.materials().by_name(name).map(|(id, m)| (id, m.physics, m.sound));
        let cube = match existing {
            Some((id, physics, sound)) => {
                report.materials_matched.push(id);
                Cube::solid(id, physics, sound)
            }
            None => {
                let m = Material { color, ..Material::new(name, self.physics, self.sound) };
                let id = lib.add_unique(m)?;
                report.materials_created.push(id);
                Cube::solid(id, self.physics, self.sound)
            }
        };
        self.by_name.insert(name.to_owned(), cube);
        Ok(cube)
    }
}

/// Centers if every coordinate is `s/2` modulo `s`, corners if every one is a multiple of `s`,
/// else centers (rounded).
fn detect_anchor(chunks: &[Chunk], size: i64) -> ChunkAnchor {
    let s = size as f32;
    let coords = || chunks.iter().flat_map(|c| c.position).filter(|v| v.is_finite());
    let all_corner = coords().all(|v| v.rem_euclid(s) == 0.0);
    let any = coords().next().is_some();
    if any && all_corner && size > 1 { ChunkAnchor::Corner } else { ChunkAnchor::Center }
}

/// The voxel coordinates of a chunk's minimum corner, or `None` for unusable positions.
fn chunk_origin(c: &Chunk, size: i64, anchor: ChunkAnchor) -> Option<[i64; 3]> {
    let half = match anchor {
        ChunkAnchor::Center => size as f64 / 2.0,
        ChunkAnchor::Corner => 0.0,
    };
    let mut o = [0; 3];
    for (k, v) in c.position.iter().enumerate() {
        let v = (f64::from(*v) - half).round();
        if !v.is_finite() || v.abs() > 1e12 {
            return None;
        }
        o[k] = v as i64;
    }
    Some(o)
}

/// Whether a chunk sits at Voxel Play's overflow position on some axis (see the module
/// documentation): center `i·s + s/2` for an index `i` of [`OVERFLOW_CHUNK_INDICES`].
fn is_overflow_chunk(c: &Chunk, size: i64) -> bool {
    c.position.iter().any(|&v| OVERFLOW_CHUNK_INDICES.iter().any(|i| f64::from(v) == (i * size + size / 2) as f64))
}

/// `a / b` rounded up (`b > 0`).
fn ceil_div(a: i64, b: i64) -> i64 {
    a.div_euclid(b) + i64::from(a.rem_euclid(b) != 0)
}

/// Whether box `b` lies wholly inside `a`.
fn inside(b: &VBox, a: &VoxelBox) -> bool {
    (0..3).all(|k| b.min[k] >= a.min[k] && b.max[k] <= a.max[k])
}

/// Local (x, y, z) of voxel index `i` in a chunk of edge `s`.
fn voxel_local(i: i64, s: i64) -> [i64; 3] {
    [i % s, i / (s * s), (i / s) % s]
}

fn volume(b: &VBox) -> u64 {
    (0..3).map(|k| (b.max[k] - b.min[k]) as u64).product()
}

/// Which voxel indices of a chunk the runs cover: runs sorted by start, with the largest end so
/// far (runs may overlap in hostile files).
struct SolidIndex {
    starts: Vec<u32>,
    max_end: Vec<u32>,
}

impl SolidIndex {
    fn new(c: &Chunk) -> Self {
        let mut v: Vec<(u32, u32)> = c.runs.iter().map(|r| (u32::from(r.start), r.end())).collect();
        v.sort_unstable();
        let mut m = 0;
        let max_end = v
            .iter()
            .map(|&(_, e)| {
                m = m.max(e);
                m
            })
            .collect();
        Self { starts: v.into_iter().map(|(s, _)| s).collect(), max_end }
    }

    /// Whether voxel `i` is in a run: some run starting at or before it ends after it.
    fn contains(&self, i: u32) -> bool {
        let k = self.starts.partition_point(|&s| s <= i);
        k > 0 && self.max_end[k - 1] > i
    }
}

/// The boxes of one chunk's runs (contiguous runs of one material merged first).
fn chunk_boxes(c: &Chunk, origin: [i64; 3], size: i64, out: &mut Vec<VBox>) {
    let mut runs: Vec<(Key, i64, i64)> = c
        .runs
        .iter()
        .filter(|r| r.repetitions > 0)
        .map(|r| ((r.definition, r.color), i64::from(r.start), i64::from(r.end())))
        .collect();
    runs.sort_by_key(|r| r.1);
    let mut i = 0;
    while i < runs.len() {
        let (key, s, mut e) = runs[i];
        i += 1;
        while i < runs.len() && runs[i].0 == key && runs[i].1 == e {
            e = runs[i].2;
            i += 1;
        }
        run_boxes(key, s, e, size, origin, out);
    }
}

/// Cuts the voxel index range `[s, e)` into at most 5 boxes: partial row, rows, layers, rows,
/// partial row.
fn run_boxes(key: Key, s: i64, e: i64, size: i64, o: [i64; 3], out: &mut Vec<VBox>) {
    let layer = size * size;
    let mut i = s;
    let mut push = |x0: i64, x1: i64, y0: i64, y1: i64, z0: i64, z1: i64| {
        out.push(VBox { key, min: [o[0] + x0, o[1] + y0, o[2] + z0], max: [o[0] + x1, o[1] + y1, o[2] + z1] });
    };
    while i < e {
        let [x, y, z] = voxel_local(i, size);
        if x != 0 || e - i < size {
            let len = (size - x).min(e - i);
            push(x, x + len, y, y + 1, z, z + 1);
            i += len;
        } else if z != 0 || e - i < layer {
            let rows = (size - z).min((e - i) / size);
            push(0, size, y, y + 1, z, z + rows);
            i += rows * size;
        } else {
            let layers = (e - i) / layer;
            push(0, size, y, y + layers, 0, size);
            i += layers * layer;
        }
    }
}

/// Merges boxes of one material that touch with identical faces, along X, then Z, then Y.
fn merge_boxes(mut boxes: Vec<VBox>) -> Vec<VBox> {
    for axis in [0usize, 2, 1] {
        let (a, b) = match axis {
            0 => (1, 2),
            1 => (0, 2),
            _ => (0, 1),
        };
        boxes.sort_unstable_by_key(|v| (v.key, v.min[a], v.max[a], v.min[b], v.max[b], v.min[axis]));
        let mut out: Vec<VBox> = Vec::with_capacity(boxes.len());
        for v in boxes {
            if let Some(last) = out.last_mut()
                && last.key == v.key
                && (last.min[a], last.max[a], last.min[b], last.max[b]) == (v.min[a], v.max[a], v.min[b], v.max[b])
                && last.max[axis] == v.min[axis]
            {
                last.max[axis] = v.max[axis];
                continue;
            }
            out.push(v);
        }
        boxes = out;
    }
    boxes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::voxelplay::{CustomSection, GameObject, Item, LightSource, RunTail, VoxelRun};
    use crate::map::octree::CubeKind;

    fn run(definition: u16, color: [u8; 3], start: u16, repetitions: u16) -> VoxelRun {
        VoxelRun { definition, color, start, repetitions, tail: RunTail::Flags(0) }
    }

    /// Two chunks side by side along X whose bottom layers are dirt, one tinted grass voxel at
    /// (1, 1, 1), two torches, an item, a game object and a custom section.
    fn world() -> WorldSave {
        WorldSave {
            version: 14,
            chunk_size: 16,
            character_position: [2.0, 3.0, 4.0],
            voxel_definitions: vec!["Dirt".into(), "Grass".into()],
            item_definitions: vec!["Torch".into(), "Sword".into()],
            chunks: vec![
                Chunk {
                    position: [8.0, 8.0, 8.0],
                    above_surface: 1,
                    populated: Some(1),
                    // The bottom layer split in two runs with different flags.
                    runs: vec![run(0, [255; 3], 0, 100), run(0, [255; 3], 100, 156), run(1, [10, 20, 30], 273, 1)],
                    light_sources: vec![
                        // On top of dirt voxel (0, 0, 0).
                        LightSource { voxel_index: 0, normal: [0.0, 1.0, 0.0], item_definition: Some(0) },
                        // In air voxel (5, 1, 0), against the dirt below.
                        LightSource { voxel_index: 256 + 5, normal: [0.0, 2.0, 0.0], item_definition: Some(-1) },
                    ],
                    items: vec![Item { definition: 1, position: [3.0, 1.0, 4.0], quantity: 5 }],
                    voxel_properties: Vec::new(),
                },
                Chunk {
                    position: [24.0, 8.0, 8.0],
                    above_surface: 1,
                    populated: Some(1),
                    runs: vec![run(0, [255; 3], 0, 256)],
                    ..Chunk::default()
                },
            ],
            game_objects: vec![GameObject {
                prefab_path: "MyPrefabs/chest".into(),
                name: "Chest\0 1".into(),
                position: [6.0, 1.0, 6.0],
                rotation: [0.0, 90.0, 0.0],
                scale: [1.0, 2.0, 1.0],
                data: vec![("hp".into(), "10".into()), ("scale".into(), "big".into())],
            }],
            custom_sections: vec![CustomSection { name: "inventory".into(), data: vec![1, 2, 3] }],
            ..WorldSave::default()
        }
    }

    fn material_at(map: &Map, p: IVec3) -> Option<MaterialId> {
        match map.levels[0].get(p).unwrap().0.kind {
            CubeKind::Geometry(g) => Some(g.material),
            CubeKind::Extended(e) => Some(e.face_materials[0]),
            CubeKind::Empty => None,
        }
    }

    #[test]
    fn places_cubes_lights_and_entities() {
        let mut map = Map::new("t");
        // A material named like a definition is matched, not duplicated.
        let (physics, sound) = {
            let d = map.library.materials().by_name("default").unwrap().1;
            (d.physics, d.sound)
        };
        let dirt = map.library.add(Material { color: [1, 2, 3], ..Material::new("Dirt", physics, sound) }).unwrap();
        let at = map.levels[0].frame().origin_lattice();
        let report = import_world(&mut map, 0, &world(), &ImportOptions::at(at, 3)).unwrap();

        // Voxels: 2 × 256 dirt + 1 grass, in 2 boxes (the two layers merged across the chunks).
        assert_eq!(report.voxels, 513);
        assert_eq!(report.boxes, 2);
        assert_eq!(report.materials_matched, vec![dirt]);
        assert_eq!(report.materials_created.len(), 1);
        let grass = report.materials_created[0];
        let m = map.library.get(grass).unwrap();
        assert_eq!((m.name.as_str(), m.color), ("Grass #0a141e", [10, 20, 30]));

        let v = |x: i32, y: i32, z: i32| at + IVec3::new(x, y, z) * 8;
        assert_eq!(material_at(&map, v(0, 0, 0)), Some(dirt));
        assert_eq!(material_at(&map, v(31, 0, 15) + IVec3::splat(7)), Some(dirt));
        assert_eq!(material_at(&map, v(32, 0, 0)), None);
        assert_eq!(material_at(&map, v(0, 0, 16)), None);
        assert_eq!(material_at(&map, v(0, 1, 0)), None);
        assert_eq!(material_at(&map, v(1, 1, 1)), Some(grass));
        assert_eq!(material_at(&map, v(2, 1, 1)), None);
        assert_eq!(material_at(&map, v(0, -1, 0)), None);

        // Torches: on the dirt face, 0.25 into the air; names from the item definitions.
        let lights: Vec<_> = report.lights.iter().map(|&id| map.levels[0].objects.get(id).unwrap().clone()).collect();
        assert_eq!(lights[0].position, Vec3::new(0.5, 1.25, 0.5));
        assert_eq!(lights[0].name, "Torch");
        assert_eq!(lights[0].color, TORCH_COLOR);
        assert_eq!(lights[0].range, TORCH_RANGE);
        assert_eq!(lights[1].position, Vec3::new(5.5, 1.25, 0.5));
        assert_eq!(lights[1].name, "torch");

        // The item: a prop with its quantity; the game object: a generic entity with its data.
        let item = &map.levels[0].objects.get(report.entities[0]).unwrap().entity;
        assert_eq!(item.name, "Sword");
        assert!(matches!(&item.data, EntityData::Prop(p) if p.position == [3.0, 1.0, 4.0]));
        assert_eq!(item.custom[0].name, "quantity");
        assert_eq!(item.custom[0].value, PropertyData::scalar(PropertyValues::I32(vec![5])));
        let go = &map.levels[0].objects.get(report.entities[1]).unwrap().entity;
        assert_eq!(go.name, "Chest 1");
        assert!(
            matches!(&go.data, EntityData::Generic(g) if g.position == [6.0, 1.0, 6.0] && g.rotation == [0.0, 90.0, 0.0])
        );
        let props: Vec<(&str, &PropertyData)> = go.custom.iter().map(|c| (c.name.as_str(), &c.value)).collect();
        assert_eq!(
            props,
            vec![("hp", &str_prop("10")), ("scale", &str_prop("big")), ("prefab", &str_prop("MyPrefabs/chest")),]
        );

        assert_eq!(report.custom_sections, vec![("inventory".to_owned(), vec![1, 2, 3])]);
        assert_eq!(report.player_start, Some(Vec3::new(2.0, 3.0, 4.0)));
        assert_eq!(report.chunk_anchor, ChunkAnchor::Center);
        assert!(!report.changes.is_empty());
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    }

    #[test]
    fn scale_and_offset() {
        let mut map = Map::new("t");
        let at = map.levels[0].frame().origin_lattice() + IVec3::new(16, 0, 0);
        let report = import_world(&mut map, 0, &world(), &ImportOptions::at(at, 2)).unwrap();
        let v = |x: i32, y: i32, z: i32| at + IVec3::new(x, y, z) * 4;
        assert!(material_at(&map, v(31, 0, 15) + IVec3::splat(3)).is_some());
        assert_eq!(material_at(&map, v(32, 0, 0)), None);
        let l = map.levels[0].objects.get(report.lights[0]).unwrap();
        // Half-size voxels, 2 map units along X.
        assert_eq!(l.position, Vec3::new(2.25, 0.625, 0.25));
        assert_eq!(l.range, TORCH_RANGE / 2.0);
    }

    #[test]
    fn nothing_inside_the_grid_changes_nothing() {
        let mut map = Map::new("t");
        let before = map.library.materials().len();
        // Every voxel lands far below the grid.
        let e = import_world(&mut map, 0, &world(), &ImportOptions::at(IVec3::new(0, -800, 0), 3)).unwrap_err();
        assert!(matches!(e, VoxelPlayImportError::NothingFits { voxels: 513, cropped: false, .. }), "{e}");
        assert_eq!(map.levels[0].chunk_count(), 0);
        assert_eq!(map.library.materials().len(), before);
        assert!(map.levels[0].objects.lights().is_empty());
        assert_eq!(
            import_world(&mut map, 1, &world(), &ImportOptions::at(IVec3::ZERO, 3)).unwrap_err(),
            VoxelPlayImportError::NoLevel(1)
        );
        assert_eq!(
            import_world(&mut map, 0, &world(), &ImportOptions::at(IVec3::ZERO, 40)).unwrap_err(),
            VoxelPlayImportError::CubeSize(40)
        );
    }

    #[test]
    fn what_lies_outside_the_grid_is_dropped_and_reported() {
        let mut map = Map::new("t");
        // The bottom (dirt) layer would land at lattice y = -8, below the grid; the grass voxel
        // at y = 1 fits.
        let r = import_world(&mut map, 0, &world(), &ImportOptions::at(IVec3::new(0, -8, 0), 3)).unwrap();
        assert_eq!(r.voxels, 1);
        assert_eq!(r.dropped_voxels, 512);
        let d: Vec<_> = r.dropped.iter().map(|d| (d.index, d.voxels, d.kept, d.reason)).collect();
        assert_eq!(d, [(0, 256, 1, DropReason::OutsideGrid), (1, 256, 0, DropReason::OutsideGrid)]);
        assert!(material_at(&map, IVec3::new(8, 0, 8)).is_some());
        assert!(
            r.warnings.iter().any(|w| w.contains("chunk 1 at (24, 8, 8): 256 of its 256 voxels")),
            "{:?}",
            r.warnings
        );
        // The torch on the dirt, the item and the game object are above the dirt layer: kept;
        // nothing lies below.
        assert_eq!(r.dropped_objects, 0);
    }

    #[test]
    fn crop_keeps_only_the_box() {
        let mut map = Map::new("t");
        let at = map.levels[0].frame().origin_lattice();
        // The first chunk only (x < 16), and only its bottom layer.
        let crop = VoxelBox { min: [0, 0, 0], max: [16, 1, 16] };
        let r = import_world(&mut map, 0, &world(), &ImportOptions { at, cube_log2: 3, crop: Some(crop) }).unwrap();
        assert_eq!(r.voxels, 256);
        let d: Vec<_> = r.dropped.iter().map(|d| (d.index, d.voxels, d.reason)).collect();
        assert_eq!(d, [(0, 1, DropReason::OutsideCrop), (1, 256, DropReason::OutsideCrop)]);
        assert!(material_at(&map, at).is_some());
        assert_eq!(material_at(&map, at + IVec3::new(16, 0, 0) * 8), None);
        // Torches at y = 1.25 and the item and game object at y = 1 are outside the crop.
        assert!(r.lights.is_empty());
        assert!(r.entities.is_empty());
        assert_eq!(r.dropped_objects, 4);
        // A crop that keeps nothing is refused.
        let crop = VoxelBox { min: [100, 0, 0], max: [116, 1, 16] };
        let e = import_world(&mut map, 0, &world(), &ImportOptions { at, cube_log2: 3, crop: Some(crop) }).unwrap_err();
        assert!(matches!(e, VoxelPlayImportError::NothingFits { cropped: true, .. }), "{e}");
    }

    /// What the real format 11 saves held: a world of ordinary chunks, plus one chunk at
    /// x = −15 999 992 — where Voxel Play's `FastMath.FloorToInt` overflow puts a chunk asked for
    /// at a NaN or infinite X — with its own voxels and a torch.
    #[test]
    fn the_overflow_chunk_is_dropped_and_the_world_imports() {
        let mut w = world();
        let mut far = w.chunks[1].clone();
        far.position = [-15_999_992.0, 8.0, 40.0];
        far.light_sources = vec![LightSource { voxel_index: 0, normal: [0.0, 1.0, 0.0], item_definition: Some(0) }];
        w.chunks.insert(1, far);
        let mut map = Map::new("t");
        let at = map.levels[0].frame().origin_lattice();
        let r = import_world(&mut map, 0, &w, &ImportOptions::at(at, 3)).unwrap();
        assert_eq!(r.voxels, 513);
        let d: Vec<_> = r.dropped.iter().map(|d| (d.index, d.voxels, d.kept, d.reason)).collect();
        assert_eq!(d, [(1, 256, 0, DropReason::Overflow)]);
        assert_eq!(r.lights.len(), 2);
        assert_eq!(r.dropped_objects, 1);
        assert!(r.warnings[0].contains("chunk 1 at (-15999992, 8, 40)"), "{:?}", r.warnings);
        assert!(r.warnings[0].contains("chunk index -1000000"), "{:?}", r.warnings);
        // Even where the grid is big enough to hold it (eighth-size voxels, the largest chunks),
        // the overflow chunk is not part of the world.
        let mut map = Map::new("t");
        map.levels[0].set_chunk_size_log2(15).unwrap();
        let at = map.levels[0].frame().origin_lattice();
        let r = import_world(&mut map, 0, &w, &ImportOptions::at(at, 0)).unwrap();
        assert_eq!((r.voxels, r.dropped_voxels), (513, 256));
    }

    #[test]
    fn corner_anchored_chunks_and_duplicates() {
        let mut w = world();
        w.chunks[0].position = [0.0, 0.0, 0.0];
        w.chunks[1].position = [16.0, 0.0, 0.0];
        assert_eq!(detect_anchor(&w.chunks, 16), ChunkAnchor::Corner);
        let mut map = Map::new("t");
        let at = map.levels[0].frame().origin_lattice();
        let r = import_world(&mut map, 0, &w, &ImportOptions::at(at, 3)).unwrap();
        assert_eq!(r.chunk_anchor, ChunkAnchor::Corner);
        assert!(material_at(&map, at).is_some());
        // The same chunk twice: the later one wins, with a warning.
        let mut w = world();
        w.chunks[1].position = w.chunks[0].position;
        let mut map = Map::new("t");
        let r = import_world(&mut map, 0, &w, &ImportOptions::at(at, 3)).unwrap();
        assert_eq!(r.voxels, 256);
        assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    }

    #[test]
    fn runs_cut_into_boxes_cover_exactly_their_voxels() {
        let size = 8i64;
        let mut seed = 12345u64;
        for _ in 0..2000 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let s = ((seed >> 33) % 512) as i64;
            let e = s + 1 + ((seed >> 13) % (512 - s as u64)) as i64;
            let mut out = Vec::new();
            run_boxes((0, [0; 3]), s, e, size, [0; 3], &mut out);
            assert!(out.len() <= 5, "{s}..{e}: {out:?}");
            let mut covered = vec![false; 512];
            for b in &out {
                for y in b.min[1]..b.max[1] {
                    for z in b.min[2]..b.max[2] {
                        for x in b.min[0]..b.max[0] {
                            let i = (y * size * size + z * size + x) as usize;
                            assert!(!covered[i]);
                            covered[i] = true;
                        }
                    }
                }
            }
            for (i, c) in covered.iter().enumerate() {
                assert_eq!(*c, (s..e).contains(&(i as i64)), "{s}..{e} voxel {i}");
            }
        }
    }

    #[test]
    fn a_full_world_of_chunks_merges_into_few_boxes() {
        // 8 × 8 chunks of solid ground 4 voxels deep: one box.
        let mut w =
            WorldSave { version: 14, chunk_size: 16, voxel_definitions: vec!["Stone".into()], ..WorldSave::default() };
        for cx in 0..8 {
            for cz in 0..8 {
                w.chunks.push(Chunk {
                    position: [cx as f32 * 16.0 + 8.0, 8.0, cz as f32 * 16.0 + 8.0],
                    populated: Some(1),
                    runs: vec![run(0, [255; 3], 0, 4 * 256)],
                    ..Chunk::default()
                });
            }
        }
        let mut map = Map::new("t");
        let at = map.levels[0].frame().origin_lattice();
        let r = import_world(&mut map, 0, &w, &ImportOptions::at(at, 3)).unwrap();
        assert_eq!(r.boxes, 1);
        assert_eq!(r.voxels, 64 * 1024);
    }

    #[test]
    fn hilly_terrain_imports_quickly() {
        // 8 × 8 chunks of a height field (heights 1..=12 varying per column): the runs are row
        // pieces and layers, as Voxel Play writes them.
        let mut w =
            WorldSave { version: 14, chunk_size: 16, voxel_definitions: vec!["Stone".into()], ..WorldSave::default() };
        let height = |x: i64, z: i64| 1 + ((x * 7 + z * 13) / 5 + (x * z) / 9).rem_euclid(12);
        let mut voxels = 0u64;
        for cx in 0..8i64 {
            for cz in 0..8i64 {
                let mut runs = Vec::new();
                for y in 0..16i64 {
                    let mut i = y * 256;
                    while i < (y + 1) * 256 {
                        let (x, z) = (i % 16, (i / 16) % 16);
                        if y < height(cx * 16 + x, cz * 16 + z) {
                            let start = i;
                            while i < (y + 1) * 256 && y < height(cx * 16 + i % 16, cz * 16 + (i / 16) % 16) {
                                i += 1;
                            }
                            runs.push(run(0, [255; 3], start as u16, (i - start) as u16));
                            voxels += (i - start) as u64;
                        } else {
                            i += 1;
                        }
                    }
                }
                w.chunks.push(Chunk {
                    position: [cx as f32 * 16.0 + 8.0, 8.0, cz as f32 * 16.0 + 8.0],
                    populated: Some(1),
                    runs,
                    ..Chunk::default()
                });
            }
        }
        let mut map = Map::new("t");
        let at = map.levels[0].frame().origin_lattice();
        let t = std::time::Instant::now();
        let r = import_world(&mut map, 0, &w, &ImportOptions::at(at, 3)).unwrap();
        let runs: usize = w.chunks.iter().map(|c| c.runs.len()).sum();
        assert_eq!(r.voxels, voxels);
        assert!(r.boxes < runs, "{} boxes for {runs} runs", r.boxes);
        assert!(t.elapsed().as_secs_f64() < 10.0, "{:?}", t.elapsed());
        eprintln!("{voxels} voxels, {runs} runs, {} boxes, {:?}", r.boxes, t.elapsed());
        // Spot checks against the height field.
        for (x, z) in [(0, 0), (5, 9), (100, 33), (127, 127)] {
            let h = height(x, z) as i32;
            assert!(material_at(&map, at + IVec3::new(x as i32, h - 1, z as i32) * 8).is_some());
            assert!(material_at(&map, at + IVec3::new(x as i32, h, z as i32) * 8).is_none());
        }
    }

    #[test]
    fn solid_index() {
        let c = Chunk {
            runs: vec![run(0, [0; 3], 10, 5), run(0, [0; 3], 0, 2), run(0, [0; 3], 12, 10)],
            ..Chunk::default()
        };
        let s = SolidIndex::new(&c);
        let got: Vec<u32> = (0..30).filter(|&i| s.contains(i)).collect();
        assert_eq!(got, [0, 1, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21]);
    }
}
