//! A level: a sparse grid of chunk octrees plus level-wide settings.
//!
//! Positions are level lattice positions (see [`coords`](crate::map::coords)): chunk
//! `(0, 0, 0)` starts at lattice `(0, 0, 0)` and the grid is limited to PMF's 12/8/12-bit chunk
//! indices (`x`, `z` in `0..4096`, `y` in `0..256`); edits reaching outside are refused with
//! [`LevelError::OutsideGrid`] and change nothing.
//!
//! Chunks are `Arc<Chunk>`; every mutation goes through `Arc::make_mut`, so [`Level::snapshot`]
//! is a cheap copy that later edits leave untouched (copy-on-write, one chunk at a time). Each
//! change stamps the chunk with a new generation from a level-wide counter, so generations only
//! grow, even across a chunk being dropped and recreated.
//!
//! Every mutating operation returns [`ChunkChanges`]: per touched chunk, the chunk-local lattice
//! box of the cubes whose content changed. For undo, [`Level::capture`] copies what an edit of a
//! region can change (a few [`Subtree`]s, never whole chunks unless the region is that big) and
//! [`Level::restore`] writes it back.

use std::collections::BTreeMap;
use std::collections::btree_map;
use std::sync::Arc;

use glam::{DVec3, IVec3};
use serde::{Deserialize, Serialize};

use crate::format::pmf::types::level_flags;
use crate::map::coords::{ChunkCoord, CubeAddr, Face, LatticeBox, LevelFrame, MAX_CHUNK_SIZE_LOG2, MIN_CUBE_EDGE};
use crate::map::ids::{MaterialId, PathAttrs, PhysicsId, SoundId};
use crate::map::library::EnvironmentDefaults;
use crate::map::lighting::LevelLighting;
use crate::map::octree::raycast::{Hit, Ray};
use crate::map::octree::subtree::Subtree;
use crate::map::octree::{Cube, Octree, OctreeError};

/// One chunk: its octree and the generation of its last change.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    octree: Octree,
    generation: u64,
}

impl Chunk {
    /// The chunk's cubes (chunk-local lattice space).
    pub fn octree(&self) -> &Octree {
        &self.octree
    }

    /// Strictly increases with every change of this chunk (level-wide counter).
    pub fn generation(&self) -> u64 {
        self.generation
    }
}

/// Per changed chunk, the chunk-local lattice box of the cubes whose content changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChunkChanges(BTreeMap<ChunkCoord, LatticeBox>);

impl ChunkChanges {
    /// No change.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Number of changed chunks.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The changed box of `chunk`, if it changed.
    pub fn get(&self, chunk: ChunkCoord) -> Option<LatticeBox> {
        self.0.get(&chunk).copied()
    }

    /// Changed chunks and boxes, in PMF grid order.
    pub fn iter(&self) -> impl Iterator<Item = (ChunkCoord, LatticeBox)> + '_ {
        self.0.iter().map(|(c, b)| (*c, *b))
    }

    /// Changed chunks, in PMF grid order.
    pub fn chunks(&self) -> impl Iterator<Item = ChunkCoord> + '_ {
        self.0.keys().copied()
    }

    /// Records a change of `region` in `chunk` (merged with what is already recorded).
    pub fn insert(&mut self, chunk: ChunkCoord, region: LatticeBox) {
        if region.is_empty() {
            return;
        }
        let e = self.0.entry(chunk).or_insert(region);
        *e = e.union(&region);
    }

    /// Adds every change of `other`.
    pub fn merge(&mut self, other: &ChunkChanges) {
        for (c, b) in other.iter() {
            self.insert(c, b);
        }
    }

    /// The changed boxes in level lattice space.
    pub fn level_boxes(&self, frame: &LevelFrame) -> impl Iterator<Item = (ChunkCoord, LatticeBox)> + '_ {
        let frame = *frame;
        self.iter().map(move |(c, b)| (c, b.translated(frame.chunk_min_lattice(c))))
    }
}

/// The level flags (PMF `level_flags`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LevelFlags {
    pub keep_velocity: bool,
    pub keep_chunk_offset: bool,
    pub keep_in_chunk_offset: bool,
}

impl LevelFlags {
    /// The PMF flag byte.
    pub fn to_bits(self) -> u8 {
        (if self.keep_velocity { level_flags::KEEP_VELOCITY } else { 0 })
            | (if self.keep_chunk_offset { level_flags::KEEP_CHUNK_OFFSET } else { 0 })
            | (if self.keep_in_chunk_offset { level_flags::KEEP_IN_CHUNK_OFFSET } else { 0 })
    }

    /// From the PMF flag byte (unknown bits ignored).
    pub fn from_bits(b: u8) -> Self {
        Self {
            keep_velocity: b & level_flags::KEEP_VELOCITY != 0,
            keep_chunk_offset: b & level_flags::KEEP_CHUNK_OFFSET != 0,
            keep_in_chunk_offset: b & level_flags::KEEP_IN_CHUNK_OFFSET != 0,
        }
    }
}

/// Errors of level operations; nothing is changed when one is returned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LevelError {
    #[error("chunk size exponent {0} is not in 0..=15")]
    ChunkSize(u8),
    #[error("lattice box {min:?}..{max:?} reaches outside the level grid (chunks x and z in 0..4096, y in 0..256)")]
    OutsideGrid { min: IVec3, max: IVec3 },
    #[error("chunk {0:?} is outside the level grid (x and z in 0..4096, y in 0..256)")]
    ChunkOutsideGrid(ChunkCoord),
    #[error("cube {0:?} is not aligned to its edge")]
    Misaligned(CubeAddr),
    #[error("cube {0:?} is bigger than a chunk")]
    BiggerThanChunk(CubeAddr),
    #[error("the chunk size can only change while the level is empty")]
    NotEmpty,
    #[error(transparent)]
    Octree(#[from] OctreeError),
}

/// The first solid cube a ray meets in a level.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LevelHit {
    pub chunk: ChunkCoord,
    /// The leaf hit, chunk-local.
    pub addr: CubeAddr,
    /// The leaf hit, level lattice space.
    pub level_addr: CubeAddr,
    /// The face through which the ray enters the leaf (see [`crate::map::octree::raycast::Hit::face`]).
    pub face: Face,
    /// Distance along the normalized direction, in lattice units.
    pub distance: f64,
    /// The hit point, level lattice space.
    pub point: DVec3,
    pub cube: Cube,
}

impl LevelHit {
    /// The distance in map units.
    pub fn world_distance(&self) -> f64 {
        self.distance * MIN_CUBE_EDGE
    }
}

/// Copies of part of a level, taken by [`Level::capture`] and written back by
/// [`Level::restore`]: chunk-local [`Subtree`]s.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Backup {
    /// Chunk-local copies.
    pub parts: Vec<(ChunkCoord, Subtree)>,
    /// The inclusive chunk range captured; chunks in it without a part were not stored.
    pub chunk_range: Option<(ChunkCoord, ChunkCoord)>,
}

impl Backup {
    /// Bytes of RAM held by the copies.
    pub fn memory_bytes(&self) -> usize {
        self.parts.iter().map(|(_, s)| size_of::<ChunkCoord>() + s.memory_bytes()).sum()
    }
}

/// A library id to re-point in cubes: every use of `from` becomes `to`
/// ([`Level::remap_ids`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IdRemap {
    /// Face materials.
    Material { from: MaterialId, to: MaterialId },
    /// Face physics materials.
    Physics { from: PhysicsId, to: PhysicsId },
    /// Sound materials.
    Sound { from: SoundId, to: SoundId },
}

impl IdRemap {
    /// Whether `cube` uses the `from` id.
    pub fn uses(&self, cube: &Cube) -> bool {
        match *self {
            IdRemap::Material { from, .. } => cube.uses_material(from),
            IdRemap::Physics { from, .. } => cube.uses_physics(from),
            IdRemap::Sound { from, .. } => cube.uses_sound(from),
        }
    }

    /// `cube` with `from` replaced by `to`.
    pub fn apply(&self, cube: Cube) -> Cube {
        fn keep<T>(x: T) -> T {
            x
        }
        match *self {
            IdRemap::Material { from, to } => cube.with_ids_mapped(|m| if m == from { to } else { m }, keep, keep),
            IdRemap::Physics { from, to } => cube.with_ids_mapped(keep, |p| if p == from { to } else { p }, keep),
            IdRemap::Sound { from, to } => cube.with_ids_mapped(keep, keep, |s| if s == from { to } else { s }),
        }
    }
}

/// Every chunk coordinate of the inclusive range, in grid order.
fn chunk_coords_in(lo: ChunkCoord, hi: ChunkCoord) -> Vec<ChunkCoord> {
    (lo.y..=hi.y)
        .flat_map(|y| (lo.x..=hi.x).flat_map(move |x| (lo.z..=hi.z).map(move |z| ChunkCoord::new(x, y, z))))
        .collect()
}

/// A level. See the [module documentation](self).
#[derive(Debug, Clone)]
pub struct Level {
    /// Display name (not exported).
    pub name: String,
    frame: LevelFrame,
    chunks: BTreeMap<ChunkCoord, Arc<Chunk>>,
    pub flags: LevelFlags,
    /// The default environment of each kind (PMF level data), ids into the map's
    /// [`Library`](crate::map::Library). Kept valid by [`Map`](crate::map::Map)'s removal
    /// wrappers and checked by [`Map::validate`](crate::map::Map::validate).
    pub environments: EnvironmentDefaults,
    /// PMF "Air physics material"; `None` exports as the empty string (M5).
    pub air_physics_material: Option<PhysicsId>,
    /// Lights, entities, environment regions and load regions of this level.
    pub objects: crate::map::library::LevelObjects,
    /// Sun, sky and bounced light: compile settings (docs/spec/PMF-NOTES.md K5). Daylight by
    /// default.
    pub lighting: LevelLighting,
    next_generation: u64,
}

impl Level {
    /// The default center chunk: the middle of the grid in X and Z, half way up in Y.
    pub const DEFAULT_CENTER: ChunkCoord = ChunkCoord::new(2048, 128, 2048);

    /// An empty level with chunks of `2^chunk_size_log2` map units, centered on
    /// [`DEFAULT_CENTER`](Level::DEFAULT_CENTER).
    pub fn new(name: impl Into<String>, chunk_size_log2: u8) -> Result<Level, LevelError> {
        if chunk_size_log2 > MAX_CHUNK_SIZE_LOG2 {
            return Err(LevelError::ChunkSize(chunk_size_log2));
        }
        Ok(Level {
            name: name.into(),
            frame: LevelFrame { chunk_size_log2, center_chunk: Self::DEFAULT_CENTER },
            chunks: BTreeMap::new(),
            flags: LevelFlags::default(),
            environments: EnvironmentDefaults::default(),
            air_physics_material: None,
            objects: crate::map::library::LevelObjects::default(),
            lighting: LevelLighting::default(),
            next_generation: 1,
        })
    }

    /// Chunk size and center chunk.
    pub fn frame(&self) -> LevelFrame {
        self.frame
    }

    /// Chunk edge is `2^chunk_size_log2` map units.
    pub fn chunk_size_log2(&self) -> u8 {
        self.frame.chunk_size_log2
    }

    /// Changes the chunk size; only allowed while every chunk is empty.
    pub fn set_chunk_size_log2(&mut self, n: u8) -> Result<(), LevelError> {
        if n > MAX_CHUNK_SIZE_LOG2 {
            return Err(LevelError::ChunkSize(n));
        }
        if self.chunks.values().any(|c| !c.octree.is_empty()) {
            return Err(LevelError::NotEmpty);
        }
        self.chunks.clear();
        self.frame.chunk_size_log2 = n;
        Ok(())
    }

    /// The chunk whose center is the world origin.
    pub fn center_chunk(&self) -> ChunkCoord {
        self.frame.center_chunk
    }

    /// Moves the world origin to the center of `c` (cubes keep their lattice positions).
    pub fn set_center_chunk(&mut self, c: ChunkCoord) -> Result<(), LevelError> {
        if !c.is_in_grid() {
            return Err(LevelError::ChunkOutsideGrid(c));
        }
        self.frame.center_chunk = c;
        Ok(())
    }

    /// A copy for readers (bake workers): `O(chunks)` pointer copies; later edits of `self`
    /// copy the chunks they touch and leave the snapshot as it was.
    pub fn snapshot(&self) -> Level {
        self.clone()
    }

    /// The chunk at `c`, if it was ever written.
    pub fn chunk(&self, c: ChunkCoord) -> Option<&Arc<Chunk>> {
        self.chunks.get(&c)
    }

    /// Every stored chunk, in PMF grid order. Missing chunks are air.
    pub fn chunks(&self) -> btree_map::Iter<'_, ChunkCoord, Arc<Chunk>> {
        self.chunks.iter()
    }

    /// Number of stored chunks.
    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// The inclusive min and max chunk of the non-empty chunks (what the exporter's dense grid
    /// must cover), or `None` for an empty level.
    pub fn occupied_bounds(&self) -> Option<(ChunkCoord, ChunkCoord)> {
        let mut it = self.chunks.iter().filter(|(_, ch)| !ch.octree.is_empty()).map(|(c, _)| c.as_ivec3());
        let first = it.next()?;
        let (lo, hi) = it.fold((first, first), |(lo, hi), c| (lo.min(c), hi.max(c)));
        Some((ChunkCoord::from_ivec3(lo), ChunkCoord::from_ivec3(hi)))
    }

    /// Every leaf of every stored chunk: chunk, chunk-local address, cube.
    pub fn leaves(&self) -> impl Iterator<Item = (ChunkCoord, CubeAddr, Cube)> + '_ {
        self.chunks.iter().flat_map(|(c, ch)| ch.octree.leaves().map(move |(a, cube)| (*c, a, cube)))
    }

    /// Whether two levels have the same content: name, frame, flags, default environments, air
    /// physics, lighting, objects (by id; id counters ignored) and cubes (empty chunks, stored or
    /// not, and generations ignored).
    pub fn content_eq(&self, other: &Level) -> bool {
        let (a, b) = (&self.objects, &other.objects);
        self.name == other.name
            && self.frame == other.frame
            && self.flags == other.flags
            && self.environments == other.environments
            && self.air_physics_material == other.air_physics_material
            && self.lighting == other.lighting
            && a.lights().iter().eq(b.lights().iter())
            && a.entities().iter().eq(b.entities().iter())
            && a.regions().iter().eq(b.regions().iter())
            && a.load_regions().iter().eq(b.load_regions().iter())
            && self.same_cubes(other)
    }

    /// Whether the non-empty chunks of both levels are the same, cube for cube.
    pub fn same_cubes(&self, other: &Level) -> bool {
        fn non_empty(l: &Level) -> impl Iterator<Item = (&ChunkCoord, &Octree)> {
            l.chunks.iter().filter(|(_, ch)| !ch.octree.is_empty()).map(|(c, ch)| (c, &ch.octree))
        }
        self.frame.chunk_size_log2 == other.frame.chunk_size_log2 && non_empty(self).eq(non_empty(other))
    }

    /// A stable hash of the content (non-empty chunks, their coordinates and cubes).
    pub fn content_hash(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |v: u64| {
            for b in v.to_le_bytes() {
                h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
            }
        };
        eat(u64::from(self.frame.chunk_size_log2));
        for (c, ch) in &self.chunks {
            if !ch.octree.is_empty() {
                for v in c.as_ivec3().to_array() {
                    eat(v as u32 as u64);
                }
                eat(ch.octree.content_hash());
            }
        }
        h
    }

    // ----- reading ------------------------------------------------------------------------

    fn check_box(&self, b: &LatticeBox) -> Result<(), LevelError> {
        if b.is_empty() || self.frame.grid_box().contains_box(b) {
            Ok(())
        } else {
            Err(LevelError::OutsideGrid { min: b.min, max: b.max })
        }
    }

    fn check_addr(&self, a: &CubeAddr) -> Result<(), LevelError> {
        if !a.is_aligned() || a.size_log2 > 30 {
            return Err(LevelError::Misaligned(*a));
        }
        self.check_box(&a.lattice_box())
    }

    /// The leaf holding level lattice position `pos` and its level lattice address. A missing
    /// chunk reads as one air leaf.
    pub fn get(&self, pos: IVec3) -> Result<(Cube, CubeAddr), LevelError> {
        self.check_box(&LatticeBox::new(pos, pos + IVec3::ONE))?;
        let c = self.frame.chunk_from_lattice(pos);
        let base = self.frame.chunk_min_lattice(c);
        Ok(match self.chunks.get(&c) {
            Some(ch) => {
                let (cube, a) = ch.octree.get(pos - base).expect("inside the chunk");
                (cube, a.translated(base))
            }
            None => (Cube::EMPTY, self.frame.chunk_addr(c)),
        })
    }

    // ----- editing ------------------------------------------------------------------------

    fn bump(&mut self) -> u64 {
        let g = self.next_generation;
        self.next_generation += 1;
        g
    }

    /// Runs `f` on the octree of every chunk that `region` (level lattice, inside the grid)
    /// touches, with the chunk-local part of `region`.
    fn edit_chunks(
        &mut self,
        region: LatticeBox,
        creates: bool,
        mut f: impl FnMut(&mut Octree, LatticeBox) -> Option<LatticeBox>,
    ) -> ChunkChanges {
        let mut changes = ChunkChanges::new();
        let Some((lo, hi)) = self.chunk_range(&region) else {
            return changes;
        };
        let coords = if creates { chunk_coords_in(lo, hi) } else { self.stored_chunks_in(lo, hi) };
        for c in coords {
            let local = region.translated(-self.frame.chunk_min_lattice(c));
            if let Some(b) = self.edit_chunk(c, |o| f(o, local)) {
                changes.insert(c, b);
            }
        }
        changes
    }

    /// The inclusive chunk range a non-empty level lattice box touches.
    fn chunk_range(&self, region: &LatticeBox) -> Option<(ChunkCoord, ChunkCoord)> {
        (!region.is_empty()).then(|| {
            (self.frame.chunk_from_lattice(region.min), self.frame.chunk_from_lattice(region.max - IVec3::ONE))
        })
    }

    /// The stored chunks in the inclusive range, in grid order, in `O(log n + stored chunks in
    /// the Y range)` (an edit of a huge box of mostly missing chunks stays cheap).
    fn stored_chunks_in(&self, lo: ChunkCoord, hi: ChunkCoord) -> Vec<ChunkCoord> {
        let from = ChunkCoord { y: lo.y, x: i32::MIN, z: i32::MIN };
        let to = ChunkCoord { y: hi.y, x: i32::MAX, z: i32::MAX };
        self.chunks
            .range(from..=to)
            .map(|(c, _)| *c)
            .filter(|c| (lo.x..=hi.x).contains(&c.x) && (lo.z..=hi.z).contains(&c.z))
            .collect()
    }

    /// Runs `f` on chunk `c`'s octree (a new empty one if missing, kept only if `f` changed it);
    /// bumps the generation on change.
    fn edit_chunk<T>(&mut self, c: ChunkCoord, f: impl FnOnce(&mut Octree) -> Option<T>) -> Option<T> {
        let g = self.next_generation;
        let out = match self.chunks.get_mut(&c) {
            Some(arc) => {
                // If a snapshot shares the chunk, keep the shared original so that a no-op edit
                // can put it back instead of leaving a private copy.
                let original = (Arc::strong_count(arc) > 1).then(|| Arc::clone(arc));
                let ch = Arc::make_mut(arc);
                let out = f(&mut ch.octree);
                if out.is_some() {
                    ch.generation = g;
                } else if let Some(o) = original {
                    *arc = o;
                }
                out
            }
            None => {
                let mut octree = Octree::new(self.frame.chunk_lattice_log2());
                let out = f(&mut octree);
                if out.is_some() {
                    self.chunks.insert(c, Arc::new(Chunk { octree, generation: g }));
                }
                out
            }
        };
        if out.is_some() {
            self.bump();
        }
        out
    }

    /// Makes the aligned cube `addr` (level lattice) one `cube`. A cube bigger than a chunk is
    /// filled chunk by chunk (a cube with pushed corners then gets them per chunk).
    pub fn set_cube(&mut self, addr: CubeAddr, cube: Cube) -> Result<ChunkChanges, LevelError> {
        self.check_addr(&addr)?;
        if addr.size_log2 > self.frame.chunk_lattice_log2() {
            return self.fill_box(addr.lattice_box(), cube);
        }
        let c = self.frame.chunk_from_lattice(addr.min);
        let local = addr.translated(-self.frame.chunk_min_lattice(c));
        let mut changes = ChunkChanges::new();
        if let Some(b) = self.edit_chunk(c, |o| o.set_cube(local, cube).expect("checked")) {
            changes.insert(c, b);
        }
        Ok(changes)
    }

    /// Makes the aligned cube `addr` air.
    pub fn clear_cube(&mut self, addr: CubeAddr) -> Result<ChunkChanges, LevelError> {
        self.set_cube(addr, Cube::EMPTY)
    }

    /// Sets every lattice cell of `region` to `cube`, across chunk borders.
    pub fn fill_box(&mut self, region: LatticeBox, cube: Cube) -> Result<ChunkChanges, LevelError> {
        self.check_box(&region)?;
        Ok(self.edit_chunks(region, cube.normalized() != Cube::EMPTY, |o, b| o.fill_box(b, cube)))
    }

    /// Makes every lattice cell of `region` air.
    pub fn clear_box(&mut self, region: LatticeBox) -> Result<ChunkChanges, LevelError> {
        self.fill_box(region, Cube::EMPTY)
    }

    /// Replaces every leaf in `region` by `f(leaf)`; see [`Octree::map_box`].
    pub fn map_box(&mut self, region: LatticeBox, f: &dyn Fn(Cube) -> Cube) -> Result<ChunkChanges, LevelError> {
        self.check_box(&region)?;
        Ok(self.edit_chunks(region, f(Cube::EMPTY).normalized() != Cube::EMPTY, |o, b| o.map_box(b, f)))
    }

    /// Paints `face` of every solid cube in `region`.
    pub fn paint_face_box(
        &mut self,
        region: LatticeBox,
        face: Face,
        material: MaterialId,
    ) -> Result<ChunkChanges, LevelError> {
        self.map_box(region, &|c| c.with_face_material(face, material))
    }

    /// Paints `face` of every solid cube inside `addr`.
    pub fn paint_face(&mut self, addr: CubeAddr, face: Face, material: MaterialId) -> Result<ChunkChanges, LevelError> {
        self.check_addr(&addr)?;
        self.paint_face_box(addr.lattice_box(), face, material)
    }

    /// Paints every face of every solid cube in `region`.
    pub fn paint_box(&mut self, region: LatticeBox, material: MaterialId) -> Result<ChunkChanges, LevelError> {
        self.map_box(region, &|c| c.with_material(material))
    }

    /// Paints every face of every solid cube inside `addr`.
    pub fn paint_cube(&mut self, addr: CubeAddr, material: MaterialId) -> Result<ChunkChanges, LevelError> {
        self.check_addr(&addr)?;
        self.paint_box(addr.lattice_box(), material)
    }

    /// Sets the pathfinding attributes of every leaf in `region`.
    pub fn set_path_attrs_box(&mut self, region: LatticeBox, attrs: PathAttrs) -> Result<ChunkChanges, LevelError> {
        self.map_box(region, &|c| Cube { path: attrs, ..c })
    }

    /// Sets "draw backfaces" on every solid leaf in `region`.
    pub fn set_draw_backfaces_box(&mut self, region: LatticeBox, on: bool) -> Result<ChunkChanges, LevelError> {
        self.map_box(region, &|c| if c.is_solid() { Cube { draw_backfaces: on, ..c } } else { c })
    }

    fn chunk_local(&self, addr: &CubeAddr) -> Result<(ChunkCoord, CubeAddr), LevelError> {
        self.check_addr(addr)?;
        if addr.size_log2 > self.frame.chunk_lattice_log2() {
            return Err(LevelError::BiggerThanChunk(*addr));
        }
        let c = self.frame.chunk_from_lattice(addr.min);
        Ok((c, addr.translated(-self.frame.chunk_min_lattice(c))))
    }

    /// Pushes corner `corner` of the cube at `addr`; see [`Octree::push_corner`].
    pub fn push_corner(&mut self, addr: CubeAddr, corner: usize, delta: IVec3) -> Result<ChunkChanges, LevelError> {
        let (c, local) = self.chunk_local(&addr)?;
        let mut err = None;
        let changed = self.edit_chunk(c, |o| match o.push_corner(local, corner, delta) {
            Ok(b) => b,
            Err(e) => {
                err = Some(e);
                None
            }
        });
        if let Some(e) = err {
            return Err(e.into());
        }
        let mut changes = ChunkChanges::new();
        if let Some(b) = changed {
            changes.insert(c, b);
        }
        Ok(changes)
    }

    /// Subdivides the cube at `addr`; see [`Octree::subdivide`].
    pub fn subdivide(&mut self, addr: CubeAddr) -> Result<ChunkChanges, LevelError> {
        let (c, local) = self.chunk_local(&addr)?;
        if local.size_log2 == 0 {
            return Err(OctreeError::TooSmall(addr).into());
        }
        let mut changes = ChunkChanges::new();
        if let Some(b) = self.edit_chunk(c, |o| o.subdivide(local).expect("checked")) {
            changes.insert(c, b);
        }
        Ok(changes)
    }

    // ----- library ids in cubes -----------------------------------------------------------

    /// Whether any cube of the level uses the `from` id of `remap`.
    pub fn uses_id(&self, remap: IdRemap) -> bool {
        self.chunks.values().any(|ch| ch.octree.any_leaf(|c| remap.uses(c)))
    }

    /// Re-points every use of the `from` id of `remap` at its `to` id (after a library record was
    /// removed with a replacement). Only chunks that use the id are visited further than a scan;
    /// each of them is copied whole into the returned [`Backup`] (the remap can touch any of its
    /// cubes), so [`restore`](Level::restore) undoes it.
    pub fn remap_ids(&mut self, remap: IdRemap) -> (Backup, ChunkChanges) {
        let mut backup = Backup::default();
        let mut changes = ChunkChanges::new();
        let using: Vec<ChunkCoord> =
            self.chunks.iter().filter(|(_, ch)| ch.octree.any_leaf(|c| remap.uses(c))).map(|(c, _)| *c).collect();
        for c in using {
            let octree = &self.chunks[&c].octree;
            backup.parts.push((c, octree.read_subtree(octree.root_addr()).expect("the root is valid")));
            if let Some(b) = self.edit_chunk(c, |o| o.map_box(o.bounds(), &|cube| remap.apply(cube))) {
                changes.insert(c, b);
            }
        }
        (backup, changes)
    }

    // ----- undo ---------------------------------------------------------------------------

    /// A copy of the cubes at `addr` (level lattice, at most a chunk): its chunk and the
    /// chunk-local [`Subtree`] (see [`Octree::read_subtree`]).
    pub fn read_region(&self, addr: CubeAddr) -> Result<(ChunkCoord, Subtree), LevelError> {
        let (c, local) = self.chunk_local(&addr)?;
        let s = match self.chunks.get(&c) {
            Some(ch) => ch.octree.read_subtree(local)?,
            None => Subtree::leaf(local, Cube::EMPTY),
        };
        Ok((c, s))
    }

    /// Makes chunk `c` hold `octree` (whose edge must be the level's chunk edge), moved in
    /// rather than copied: project loading decodes each chunk file straight into the octree the
    /// level keeps. An all-air octree leaves the chunk unstored, like an edit that empties it.
    pub fn insert_chunk(&mut self, c: ChunkCoord, octree: Octree) -> Result<(), LevelError> {
        if !c.is_in_grid() {
            return Err(LevelError::ChunkOutsideGrid(c));
        }
        let root = CubeAddr { min: IVec3::ZERO, size_log2: self.frame.chunk_lattice_log2() };
        if octree.size_log2() != root.size_log2 {
            return Err(OctreeError::OutOfBounds { addr: octree.root_addr(), edge: root.edge() }.into());
        }
        if octree.is_empty() {
            if self.chunks.remove(&c).is_some() {
                self.bump();
            }
            return Ok(());
        }
        let generation = self.bump();
        self.chunks.insert(c, Arc::new(Chunk { octree, generation }));
        Ok(())
    }

    /// Writes the chunk-local `subtree` into chunk `c`, returning what it replaced and the
    /// change; see [`Octree::replace_region`].
    pub fn replace_region(&mut self, c: ChunkCoord, subtree: &Subtree) -> Result<(Subtree, ChunkChanges), LevelError> {
        if !c.is_in_grid() {
            return Err(LevelError::ChunkOutsideGrid(c));
        }
        let root = CubeAddr { min: IVec3::ZERO, size_log2: self.frame.chunk_lattice_log2() };
        if !root.contains_addr(&subtree.addr()) || !subtree.addr().is_aligned() {
            return Err(OctreeError::OutOfBounds { addr: subtree.addr(), edge: root.edge() }.into());
        }
        let mut old = None;
        let changed = self.edit_chunk(c, |o| {
            let (prev, changed) = o.replace_region(subtree).expect("checked");
            old = Some(prev);
            changed
        });
        let mut changes = ChunkChanges::new();
        if let Some(b) = changed {
            changes.insert(c, b);
        }
        Ok((old.expect("ran"), changes))
    }

    /// Copies everything an edit confined to `region` (level lattice) can change: per stored
    /// chunk a few subtrees about the region's size (see [`Octree::capture`]), plus the chunk
    /// range, so that [`restore`](Level::restore) also empties chunks the edit created.
    pub fn capture(&self, region: LatticeBox) -> Result<Backup, LevelError> {
        self.check_box(&region)?;
        let mut backup = Backup::default();
        let Some((lo, hi)) = self.chunk_range(&region) else {
            return Ok(backup);
        };
        backup.chunk_range = Some((lo, hi));
        for c in self.stored_chunks_in(lo, hi) {
            let local = region.translated(-self.frame.chunk_min_lattice(c));
            backup.parts.extend(self.chunks[&c].octree.capture(local).into_iter().map(|s| (c, s)));
        }
        Ok(backup)
    }

    /// Writes a [`Backup`] back: its subtrees, and air over every chunk of its range that was
    /// not stored when it was captured. Returns the backup of what it overwrote (for redo) and
    /// the changes.
    pub fn restore(&mut self, backup: &Backup) -> Result<(Backup, ChunkChanges), LevelError> {
        let mut redo = Backup { parts: Vec::new(), chunk_range: backup.chunk_range };
        let mut changes = ChunkChanges::new();
        let mut write = |level: &mut Level, c: ChunkCoord, s: &Subtree| -> Result<(), LevelError> {
            let (old, ch) = level.replace_region(c, s)?;
            redo.parts.push((c, old));
            changes.merge(&ch);
            Ok(())
        };
        if let Some((lo, hi)) = backup.chunk_range {
            let root =
                Subtree::leaf(CubeAddr { min: IVec3::ZERO, size_log2: self.frame.chunk_lattice_log2() }, Cube::EMPTY);
            for c in self.stored_chunks_in(lo, hi) {
                if !backup.parts.iter().any(|(p, _)| *p == c) && !self.chunks[&c].octree.is_empty() {
                    write(self, c, &root)?;
                }
            }
        }
        for (c, s) in &backup.parts {
            write(self, *c, s)?;
        }
        Ok((redo, changes))
    }

    // ----- ray casting --------------------------------------------------------------------

    /// The first solid cube along the ray from `origin` (level lattice space) in direction `dir`
    /// within `max_dist` lattice units: a DDA over the chunk grid, then an octree ray cast in
    /// each stored chunk.
    pub fn ray_cast(&self, origin: DVec3, dir: DVec3, max_dist: f64) -> Option<LevelHit> {
        self.ray_cast_visiting(origin, dir, max_dist, |_| {})
    }

    /// [`ray_cast`](Level::ray_cast), calling `visit` with every chunk the ray enters, in order,
    /// up to and including the chunk of the hit. The result depends only on the cubes of those
    /// chunks, so a bake that records them knows exactly which edits can change it.
    pub fn ray_cast_visiting(
        &self,
        origin: DVec3,
        dir: DVec3,
        max_dist: f64,
        visit: impl FnMut(ChunkCoord),
    ) -> Option<LevelHit> {
        self.ray_cast_visiting_with(origin, dir, max_dist, visit, |_, octree, ray, max| {
            octree.ray_cast_prepared(ray, max)
        })
    }

    /// [`ray_cast_visiting`](Level::ray_cast_visiting) with the cast into each stored chunk's
    /// octree done by `cast(chunk, octree, chunk-local ray, max_dist)`, which must give what
    /// [`Octree::ray_cast_prepared`] gives (e.g. a cached [`RayGrid`]).
    ///
    /// [`RayGrid`]: crate::map::octree::raycast::RayGrid
    pub fn ray_cast_visiting_with<'l>(
        &'l self,
        origin: DVec3,
        dir: DVec3,
        max_dist: f64,
        mut visit: impl FnMut(ChunkCoord),
        mut cast: impl FnMut(ChunkCoord, &'l Octree, &Ray, f64) -> Option<Hit>,
    ) -> Option<LevelHit> {
        self.ray_cast_chunks(origin, dir, max_dist, |c, ray, max| {
            visit(c);
            self.chunks.get(&c).and_then(|ch| cast(c, &ch.octree, ray, max))
        })
    }

    /// The chunk walk under [`ray_cast_visiting_with`](Level::ray_cast_visiting_with):
    /// `enter(chunk, chunk-local ray, max_dist)` is called for every chunk of the grid the ray
    /// enters, in order, stored or not, and gives the hit in that chunk (the octree's, or
    /// `None` for a chunk that is not stored). For callers that find a chunk's octree faster than
    /// the level's map does (the light bake keeps a dense table of its ray grids).
    pub fn ray_cast_chunks(
        &self,
        origin: DVec3,
        dir: DVec3,
        max_dist: f64,
        mut enter: impl FnMut(ChunkCoord, &Ray, f64) -> Option<Hit>,
    ) -> Option<LevelHit> {
        let ray = Ray::new(origin, dir)?;
        let grid = self.frame.grid_box();
        let (t_in, t_out, _) = ray.slab(grid.min.as_dvec3(), grid.max.as_dvec3())?;
        let t_end = t_out.min(max_dist);
        let t_start = t_in.max(0.0);
        if t_start > t_end {
            return None;
        }
        let edge = f64::from(self.frame.chunk_edge());
        let grid_chunks = grid.max / self.frame.chunk_edge();
        let p = ray.origin + ray.dir * t_start;
        // Truncation rather than `floor` (a library call on baseline x86-64): they differ only
        // below 0, which the clamp maps to 0 either way.
        let mut cell = (p / edge).as_ivec3().clamp(IVec3::ZERO, grid_chunks - IVec3::ONE);
        // The walk's steps, found when the ray leaves its first chunk: many light rays end in it
        // and need none of the six divisions.
        let start = cell;
        let steps = || {
            let mut t_next = DVec3::ZERO;
            let mut t_delta = DVec3::ZERO;
            let mut step = IVec3::ZERO;
            for a in 0..3 {
                let d = ray.dir[a];
                if d > 0.0 {
                    step[a] = 1;
                    t_next[a] = (f64::from(start[a] + 1) * edge - ray.origin[a]) / d;
                    t_delta[a] = edge / d;
                } else if d < 0.0 {
                    step[a] = -1;
                    t_next[a] = (f64::from(start[a]) * edge - ray.origin[a]) / d;
                    t_delta[a] = -edge / d;
                } else {
                    t_next[a] = f64::INFINITY;
                    t_delta[a] = f64::INFINITY;
                }
            }
            (t_next, t_delta, step)
        };
        let mut walk = None;
        let chunk_log2 = i32::from(self.frame.chunk_lattice_log2());
        loop {
            let c = ChunkCoord::from_ivec3(cell);
            let base = cell << chunk_log2;
            let local = ray.translated(base.as_dvec3());
            if let Some(h) = enter(c, &local, max_dist) {
                return Some(LevelHit {
                    chunk: c,
                    addr: h.addr,
                    level_addr: h.addr.translated(base),
                    face: h.face,
                    distance: h.distance,
                    point: ray.origin + ray.dir * h.distance,
                    cube: h.cube,
                });
            }
            let (t_next, t_delta, step) = walk.get_or_insert_with(steps);
            let a = if t_next.x <= t_next.y && t_next.x <= t_next.z {
                0
            } else if t_next.y <= t_next.z {
                1
            } else {
                2
            };
            if t_next[a] > t_end {
                return None;
            }
            cell[a] += step[a];
            if cell[a] < 0 || cell[a] >= grid_chunks[a] {
                return None;
            }
            t_next[a] += t_delta[a];
        }
    }

    /// [`ray_cast`](Level::ray_cast) in world space: `origin` in map units from the center
    /// chunk's center, `max_dist` in map units. Use [`LevelHit::world_distance`] and
    /// [`LevelFrame::world_from_lattice_f`] on the result.
    pub fn ray_cast_world(&self, origin: DVec3, dir: DVec3, max_dist: f64) -> Option<LevelHit> {
        self.ray_cast(self.frame.lattice_from_world_f(origin), dir, max_dist / MIN_CUBE_EDGE)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::map::ids::SoundId;

    fn stone(m: u16) -> Cube {
        Cube::solid(MaterialId(m), PhysicsId(0), SoundId(0))
    }

    fn cells_of(b: LatticeBox) -> impl Iterator<Item = IVec3> {
        (b.min.y..b.max.y).flat_map(move |y| {
            (b.min.x..b.max.x).flat_map(move |x| (b.min.z..b.max.z).map(move |z| IVec3::new(x, y, z)))
        })
    }

    #[test]
    fn cross_chunk_fill_splits_per_chunk() {
        let mut level = Level::new("test", 0).unwrap();
        assert_eq!(level.frame().chunk_edge(), 8);
        let b = LatticeBox::new(IVec3::new(5, 3, 6), IVec3::new(19, 11, 9));
        let changes = level.fill_box(b, stone(1)).unwrap();
        let expected: Vec<ChunkCoord> =
            (0..=1).flat_map(|y| (0..=2).flat_map(move |x| (0..=1).map(move |z| ChunkCoord::new(x, y, z)))).collect();
        assert_eq!(changes.chunks().collect::<Vec<_>>(), expected);
        assert_eq!(
            changes.get(ChunkCoord::new(0, 0, 0)),
            Some(LatticeBox::new(IVec3::new(5, 3, 6), IVec3::new(8, 8, 8)))
        );
        assert_eq!(changes.get(ChunkCoord::new(2, 1, 1)), Some(LatticeBox::new(IVec3::ZERO, IVec3::new(3, 3, 1))));
        let level_boxes: Vec<_> = changes.level_boxes(&level.frame()).collect();
        assert!(level_boxes.iter().all(|(_, lb)| b.contains_box(lb)));
        assert_eq!(level_boxes.iter().map(|(_, lb)| lb.volume()).sum::<u64>(), b.volume());
        for p in cells_of(LatticeBox::new(IVec3::ZERO, IVec3::splat(32))) {
            let (c, a) = level.get(p).unwrap();
            assert!(a.contains(p));
            assert_eq!(c, if b.contains(p) { stone(1) } else { Cube::EMPTY }, "{p:?}");
        }
        // Clearing a part changes only what was solid; clearing air changes nothing.
        assert!(level.clear_box(LatticeBox::new(IVec3::new(24, 0, 0), IVec3::splat(40))).unwrap().is_empty());
        let changes = level.clear_box(LatticeBox::new(IVec3::new(0, 0, 0), IVec3::new(6, 32, 32))).unwrap();
        assert_eq!(changes.len(), 4);
        // Reported at cube granularity: covers the cleared cells, stays inside what was touched.
        let reported = changes.get(ChunkCoord::new(0, 1, 1)).unwrap();
        assert!(reported.contains_box(&LatticeBox::new(IVec3::new(5, 0, 0), IVec3::new(6, 3, 1))));
        assert!(LatticeBox::new(IVec3::ZERO, IVec3::new(6, 8, 8)).contains_box(&reported));
        // A set_cube bigger than a chunk is filled chunk by chunk.
        let big = CubeAddr::new(IVec3::new(32, 0, 0), 5).unwrap();
        assert_eq!(level.set_cube(big, stone(2)).unwrap().len(), 64);
        assert_eq!(level.get(IVec3::new(40, 9, 17)).unwrap().0, stone(2));
        assert_eq!(level.get(IVec3::new(40, 9, 17)).unwrap().1, CubeAddr::new(IVec3::new(40, 8, 16), 3).unwrap());
    }

    #[test]
    fn grid_limits_are_refused() {
        assert_eq!(Level::new("x", 16).unwrap_err(), LevelError::ChunkSize(16));
        let mut level = Level::new("x", 2).unwrap();
        let e = level.frame().chunk_edge();
        assert_eq!(e, 32);
        let before = level.content_hash();
        let top = IVec3::new(4096 * e, 256 * e, 4096 * e);
        // The last cell of the grid is fine.
        assert_eq!(level.fill_box(LatticeBox::new(top - IVec3::ONE, top), stone(1)).unwrap().len(), 1);
        assert_eq!(level.get(top - IVec3::ONE).unwrap().0, stone(1));
        let after_ok = level.content_hash();
        assert_ne!(after_ok, before);
        for b in [
            LatticeBox::new(top - IVec3::ONE, top + IVec3::new(0, 1, 0)),
            LatticeBox::new(IVec3::new(-1, 0, 0), IVec3::ONE),
            LatticeBox::new(IVec3::new(0, 256 * e, 0), IVec3::new(1, 256 * e + 1, 1)),
            LatticeBox::new(IVec3::new(4096 * e, 0, 0), IVec3::new(4096 * e + 8, 8, 8)),
        ] {
            assert!(matches!(level.fill_box(b, stone(1)), Err(LevelError::OutsideGrid { .. })), "{b:?}");
            assert!(matches!(level.paint_box(b, MaterialId(3)), Err(LevelError::OutsideGrid { .. })));
            assert!(matches!(level.capture(b), Err(LevelError::OutsideGrid { .. })));
        }
        assert!(matches!(level.get(IVec3::new(0, -1, 0)), Err(LevelError::OutsideGrid { .. })));
        let out = CubeAddr::new(IVec3::new(0, 256 * e, 0), 5).unwrap();
        assert!(matches!(level.set_cube(out, stone(1)), Err(LevelError::OutsideGrid { .. })));
        let misaligned = CubeAddr { min: IVec3::new(1, 0, 0), size_log2: 2 };
        assert_eq!(level.set_cube(misaligned, stone(1)), Err(LevelError::Misaligned(misaligned)));
        let big = CubeAddr::new(IVec3::ZERO, 6).unwrap();
        assert_eq!(level.push_corner(big, 0, IVec3::ONE), Err(LevelError::BiggerThanChunk(big)));
        assert_eq!(
            level.set_center_chunk(ChunkCoord::new(0, 256, 0)),
            Err(LevelError::ChunkOutsideGrid(ChunkCoord::new(0, 256, 0)))
        );
        assert_eq!(level.set_chunk_size_log2(3), Err(LevelError::NotEmpty));
        assert_eq!(level.content_hash(), after_ok);
        assert_eq!(level.occupied_bounds(), Some((ChunkCoord::new(4095, 255, 4095), ChunkCoord::new(4095, 255, 4095))));
        // Edits of the whole grid that cannot create chunks visit only the stored ones.
        let whole = level.frame().grid_box();
        let backup = level.capture(whole).unwrap();
        assert_eq!(backup.parts.len(), 1);
        assert_eq!(level.paint_box(whole, MaterialId(7)).unwrap().len(), 1);
        assert_eq!(level.clear_box(whole).unwrap().len(), 1);
        assert_eq!(level.occupied_bounds(), None);
        level.restore(&backup).unwrap();
        assert_eq!(level.content_hash(), after_ok);
        // Undo of an edit that created chunks empties them again.
        let region = LatticeBox::new(IVec3::new(40, 40, 40), IVec3::new(100, 50, 60));
        let backup = level.capture(region).unwrap();
        assert_eq!(level.fill_box(region, stone(3)).unwrap().len(), 3);
        level.restore(&backup).unwrap();
        assert_eq!(level.content_hash(), after_ok);
    }

    #[test]
    fn snapshot_is_unchanged_by_later_edits_and_generations_grow() {
        let mut level = Level::new("snap", 0).unwrap();
        let a = ChunkCoord::new(0, 0, 0);
        let b = ChunkCoord::new(1, 0, 0);
        level.fill_box(LatticeBox::new(IVec3::ZERO, IVec3::new(16, 4, 8)), stone(1)).unwrap();
        let gen_a = level.chunk(a).unwrap().generation();
        let gen_b = level.chunk(b).unwrap().generation();
        assert_ne!(gen_a, gen_b);
        let snap = level.snapshot();
        let hash_a = snap.chunk(a).unwrap().octree().content_hash();
        let snap_hash = snap.content_hash();

        let changes = level.set_cube(CubeAddr::new(IVec3::new(2, 6, 2), 1).unwrap(), stone(5)).unwrap();
        assert_eq!(changes.chunks().collect::<Vec<_>>(), vec![a]);
        // The snapshot still sees the old chunk; the untouched chunk is still shared.
        assert_eq!(snap.chunk(a).unwrap().octree().content_hash(), hash_a);
        assert_eq!(snap.chunk(a).unwrap().generation(), gen_a);
        assert_eq!(snap.get(IVec3::new(2, 6, 2)).unwrap().0, Cube::EMPTY);
        assert_eq!(snap.content_hash(), snap_hash);
        assert_ne!(level.content_hash(), snap_hash);
        assert!(Arc::ptr_eq(snap.chunk(b).unwrap(), level.chunk(b).unwrap()));
        assert!(!Arc::ptr_eq(snap.chunk(a).unwrap(), level.chunk(a).unwrap()));
        // The edited chunk's generation grew; the other did not.
        let gen_a2 = level.chunk(a).unwrap().generation();
        assert!(gen_a2 > gen_a && gen_a2 > gen_b);
        assert_eq!(level.chunk(b).unwrap().generation(), gen_b);
        // A no-op edit does not bump, nor unshare a chunk a snapshot holds.
        assert!(level.set_cube(CubeAddr::new(IVec3::new(2, 6, 2), 1).unwrap(), stone(5)).unwrap().is_empty());
        assert_eq!(level.chunk(a).unwrap().generation(), gen_a2);
        assert!(
            level.fill_box(LatticeBox::new(IVec3::new(8, 0, 0), IVec3::new(9, 1, 1)), stone(1)).unwrap().is_empty()
        );
        assert!(Arc::ptr_eq(snap.chunk(b).unwrap(), level.chunk(b).unwrap()));
        // Every change bumps, even a paint.
        level.paint_face(CubeAddr::new(IVec3::new(2, 6, 2), 1).unwrap(), Face::PosY, MaterialId(9)).unwrap();
        assert!(level.chunk(a).unwrap().generation() > gen_a2);
    }

    #[test]
    fn corner_push_and_pull_through_the_level() {
        let mut level = Level::new("corners", 1).unwrap();
        let addr = CubeAddr::new(IVec3::new(16, 0, 16), 2).unwrap();
        level.fill_box(LatticeBox::new(IVec3::ZERO, IVec3::new(32, 8, 32)), stone(1)).unwrap();
        let before = level.content_hash();
        let changes = level.push_corner(addr, 2, IVec3::new(-3, -5, 2)).unwrap();
        assert_eq!(changes.len(), 1);
        assert!(level.get(addr.min).unwrap().0.has_pushed_corners());
        assert_eq!(level.get(addr.min).unwrap().1, addr);
        level.push_corner(addr, 2, IVec3::new(3, 5, -2)).unwrap();
        assert_eq!(level.get(addr.min).unwrap().0, stone(1));
        assert_eq!(level.content_hash(), before);
        let (c, s) = level.read_region(CubeAddr::new(IVec3::new(16, 0, 16), 4).unwrap()).unwrap();
        assert_eq!(c, ChunkCoord::new(1, 0, 1));
        assert_eq!(s.addr(), CubeAddr::new(IVec3::ZERO, 4).unwrap());
        assert_eq!(s.leaves().count(), 8);
    }

    #[test]
    fn ray_cast_crosses_chunks_and_reaches_the_far_grid_corner() {
        let mut level = Level::new("ray", 0).unwrap();
        // A wall in chunk x = 3.
        level.fill_box(LatticeBox::new(IVec3::new(27, 0, 0), IVec3::new(29, 16, 16)), stone(4)).unwrap();
        let h = level.ray_cast(DVec3::new(0.5, 4.5, 4.5), DVec3::X, 100.0).unwrap();
        assert_eq!(h.chunk, ChunkCoord::new(3, 0, 0));
        assert_eq!(h.face, Face::NegX);
        assert!((h.distance - 26.5).abs() < 1e-12);
        assert_eq!(h.point.x, 27.0);
        assert!(h.level_addr.contains(IVec3::new(27, 4, 4)));
        assert!(level.ray_cast(DVec3::new(0.5, 4.5, 4.5), DVec3::X, 26.0).is_none());
        assert!(level.ray_cast(DVec3::new(0.5, 4.5, 4.5), -DVec3::X, 1e6).is_none());
        // Every chunk entered, in order, up to the one hit; a ray that stops short visits fewer.
        let mut seen = Vec::new();
        level.ray_cast_visiting(DVec3::new(0.5, 4.5, 4.5), DVec3::X, 100.0, |c| seen.push(c));
        assert_eq!(seen, (0..4).map(|x| ChunkCoord::new(x, 0, 0)).collect::<Vec<_>>());
        seen.clear();
        level.ray_cast_visiting(DVec3::new(0.5, 4.5, 4.5), DVec3::X, 12.0, |c| seen.push(c));
        assert_eq!(seen, vec![ChunkCoord::new(0, 0, 0), ChunkCoord::new(1, 0, 0)]);
        // From outside the grid, at the far corner.
        let e = level.frame().chunk_edge();
        let top = IVec3::new(4096 * e, 256 * e, 4096 * e);
        level.set_cube(CubeAddr::new(top - IVec3::splat(8), 3).unwrap(), stone(2)).unwrap();
        let origin = top.as_dvec3() + DVec3::new(10.0, 10.0, 10.0);
        let h = level.ray_cast(origin, DVec3::new(-1.0, -1.05, -1.1), 1e3).unwrap();
        assert_eq!(h.chunk, ChunkCoord::new(4095, 255, 4095));
        assert_eq!(h.cube, stone(2));
        assert_eq!(h.face, Face::PosX);
        // World space: the origin is the center of the center chunk.
        let mut level = Level::new("world", 0).unwrap();
        level.set_center_chunk(ChunkCoord::new(0, 0, 0)).unwrap();
        level.fill_box(LatticeBox::new(IVec3::new(0, 0, 0), IVec3::new(16, 1, 16)), stone(1)).unwrap();
        let h = level.ray_cast_world(DVec3::new(0.0, 2.0, 0.0), -DVec3::Y, 10.0).unwrap();
        assert_eq!(h.face, Face::PosY);
        assert!((h.world_distance() - 2.375).abs() < 1e-12, "{}", h.world_distance());
        assert!((level.frame().world_from_lattice_f(h.point).y - -0.375).abs() < 1e-12);
    }

    #[derive(Debug, Clone)]
    enum LOp {
        Fill(LatticeBox, Cube),
        Paint(LatticeBox, Face, MaterialId),
        Push(CubeAddr, usize, IVec3),
    }

    const SPAN: i32 = 24;

    fn lop_strategy() -> impl Strategy<Value = LOp> {
        let boxes = (0..SPAN, 0..SPAN, 0..SPAN, 1..12, 1..12, 1..12).prop_map(|(x, y, z, dx, dy, dz)| {
            let min = IVec3::new(x, y, z);
            LatticeBox::new(min, (min + IVec3::new(dx, dy, dz)).min(IVec3::splat(SPAN)))
        });
        let cube = prop_oneof![Just(Cube::EMPTY), (0u16..3).prop_map(stone)];
        let face = (0usize..6).prop_map(|i| Face::from_index(i).unwrap());
        prop_oneof![
            3 => (boxes.clone(), cube).prop_map(|(b, c)| LOp::Fill(b, c)),
            1 => (boxes, face, 0u16..3).prop_map(|(b, f, m)| LOp::Paint(b, f, MaterialId(m))),
            1 => (0..SPAN, 0..SPAN, 0..SPAN, 0u8..=3, 0usize..8, prop::array::uniform3(-8i32..8)).prop_map(
                |(x, y, z, s, c, d)| LOp::Push(CubeAddr::containing(IVec3::new(x, y, z), s), c, IVec3::from_array(d))
            ),
        ]
    }

    impl LOp {
        fn region(&self) -> LatticeBox {
            match self {
                LOp::Fill(b, _) | LOp::Paint(b, ..) => *b,
                LOp::Push(a, ..) => a.lattice_box(),
            }
        }

        fn apply(&self, level: &mut Level) -> ChunkChanges {
            match *self {
                LOp::Fill(b, c) => level.fill_box(b, c).unwrap(),
                LOp::Paint(b, f, m) => level.paint_face_box(b, f, m).unwrap(),
                LOp::Push(a, c, d) => match level.push_corner(a, c, d) {
                    Ok(ch) => ch,
                    Err(LevelError::Octree(OctreeError::NotALeaf(_))) => ChunkChanges::new(),
                    Err(e) => panic!("{e}"),
                },
            }
        }
    }

    fn same_content(a: &Level, b: &Level) -> bool {
        let empty = |l: &Level, c: &ChunkCoord| l.chunk(*c).is_none_or(|ch| ch.octree().is_empty());
        a.chunks().all(|(c, ch)| match b.chunk(*c) {
            Some(other) => other.octree() == ch.octree(),
            None => ch.octree().is_empty(),
        }) && b.chunks().all(|(c, _)| a.chunk(*c).is_some() || empty(b, c))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        /// Capture before an edit, restore after it: the level is back, chunk by chunk and
        /// structurally; restoring the redo backup gives the edited level again. Change reports
        /// name exactly the chunks whose content changed.
        #[test]
        fn capture_restore_round_trip(ops in prop::collection::vec(lop_strategy(), 1..16)) {
            let mut level = Level::new("undo", 0).unwrap();
            for op in &ops {
                let before = level.snapshot();
                let backup = level.capture(op.region()).unwrap();
                let changes = op.apply(&mut level);
                for (c, ch) in level.chunks() {
                    let old = before.chunk(*c).map(|o| o.octree().clone());
                    let differs = old.as_ref().map_or(!ch.octree().is_empty(), |o| o != ch.octree());
                    prop_assert_eq!(differs, changes.get(*c).is_some(), "chunk {:?} after {:?}", c, op);
                }
                let after = level.snapshot();
                let (redo, _) = level.restore(&backup).unwrap();
                prop_assert!(same_content(&level, &before), "undo of {:?}", op);
                prop_assert_eq!(level.content_hash(), before.content_hash());
                level.restore(&redo).unwrap();
                prop_assert!(same_content(&level, &after), "redo of {:?}", op);
                prop_assert_eq!(level.content_hash(), after.content_hash());
            }
        }

        /// The level ray cast (chunk DDA + octree casts) agrees with a brute-force test of every
        /// solid cell of a 3 × 3 × 3 chunk scene.
        #[test]
        fn level_ray_cast_matches_brute_force(
            ops in prop::collection::vec(lop_strategy(), 1..8),
            origin in prop::array::uniform3(-6.0f64..30.0),
            dir in prop::array::uniform3(-1.0f64..1.0),
            max_dist in 0.0f64..80.0,
        ) {
            let mut level = Level::new("ray", 0).unwrap();
            for op in &ops {
                op.apply(&mut level);
            }
            let origin = DVec3::from_array(origin);
            let dir = DVec3::from_array(dir);
            let hit = level.ray_cast(origin, dir, max_dist);
            let Some(ray) = Ray::new(origin, dir) else {
                prop_assert!(hit.is_none());
                return Ok(());
            };
            let mut best: Option<(f64, Vec<(Face, IVec3)>)> = None;
            for p in cells_of(LatticeBox::new(IVec3::ZERO, IVec3::splat(SPAN))) {
                if !level.get(p).unwrap().0.is_solid() {
                    continue;
                }
                if let Some((d, f)) = ray.enter(&CubeAddr { min: p, size_log2: 0 }, max_dist) {
                    match &mut best {
                        Some((bd, v)) if (d - *bd).abs() < 1e-9 => v.push((f, p)),
                        Some((bd, _)) if d > *bd => {}
                        _ => best = Some((d, vec![(f, p)])),
                    }
                }
            }
            match (hit, best) {
                (None, None) => {}
                (Some(h), Some((d, cands))) => {
                    prop_assert!((h.distance - d).abs() < 1e-9, "{} vs {}", h.distance, d);
                    prop_assert!(cands.iter().any(|&(f, p)| f == h.face && h.level_addr.contains(p)), "{:?} vs {:?}", h, cands);
                    prop_assert_eq!(level.get(h.level_addr.min).unwrap().0, h.cube);
                }
                (h, b) => prop_assert!(false, "hit {:?} vs brute force {:?}", h, b),
            }
        }
    }
}
