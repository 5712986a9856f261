//! Every change to a [`Map`] as a value, with undo and redo.
//!
//! # Model
//! - [`Edit`] is what a tool or a form asks for: a cube operation on a level, a library change,
//!   a level object change, a level setting, or the metadata. It is plain data (serialisable once
//!   every record it carries has serde) and says nothing about how to undo it.
//! - Applying an edit ([`apply`], [`History::apply`]) checks it and performs it **before** it
//!   reaches the undo record: a refused edit returns an [`EditError`], changes nothing and leaves
//!   no undo entry; an edit that changes nothing (painting a face its own material) returns an
//!   empty [`ChangeSet`] and leaves no entry either.
//! - A performed edit becomes a [`MapEdit`] (the undo entry, implementing [`undo::Edit`] with
//!   `Target = Map` and `Output = ChangeSet`). It keeps **deltas only**: a cube operation keeps
//!   the forward operation and the [`Backup`](crate::map::level::Backup) of the region it
//!   overwrote (a few subtrees about the size of the region, never whole chunks unless the region
//!   covers them); a library or object change keeps the old and new record; a removal with a
//!   replacement keeps what [`Map::remove_material`] and friends re-pointed. Undo writes the old
//!   state back; redo performs the forward operation again (the map is then exactly as it was
//!   when the edit was first made, so the same backup stays valid).
//! - **Strokes.** While the mouse is held, a tool applies each operation at once (the viewport
//!   updates) under one [`StrokeId`]; consecutive entries of the same stroke merge into one undo
//!   step ([`undo::Merged::Yes`]) whose undo restores every backup in reverse order. A new stroke
//!   id starts a new step; [`undo::Record`] skips merging at the saved point, so a save in the
//!   middle of a stroke splits it.
//! - Every apply, undo and redo returns the [`ChangeSet`] of what it changed: per level the
//!   chunks touched with the lattice box inside each, the objects and settings touched; the
//!   library records touched; whether the metadata or the list of levels changed. The bake
//!   scheduler dirties exactly that.
//!
//! [`History`] is the façade the editor uses: apply, strokes, undo/redo, jump, saved marker and
//! the list of step names ("Fill box 4×4×4", "Paint material stone", "Move light lamp 1").

mod apply;
mod change;
mod history;
mod step;
#[cfg(test)]
mod tests;

use glam::{IVec3, Vec3};

pub use self::apply::{MapEdit, StrokeId, apply, apply_in_stroke};
pub use self::change::{ChangeSet, LevelChanges};
pub use self::history::{History, HistoryEntry};
use crate::map::coords::{ChunkCoord, CubeAddr, Face, LatticeBox};
use crate::map::ids::{MaterialId, PathAttrs, PhysicsId, SoundId};
use crate::map::level::{ChunkChanges, LevelError, LevelFlags};
use crate::map::library::{
    EntityId, EnvKind, EnvRef, Environment, EnvironmentRegion, Light, LightId, LoadRegion, LoadRegionId, MapEntity,
    Material, PhysicsMaterial, RegionId, SoundMaterial,
};
use crate::map::library::{ItemKind, LibraryError};
use crate::map::lighting::{LevelLighting, LightingError};
use crate::map::octree::Cube;
use crate::map::{Level, Map, MapError, MapMeta, MetaError};

/// A cube operation on one level; positions are level lattice positions (see
/// [`Level`]). Each maps to the [`Level`] method of the same name.
#[derive(Debug, Clone, PartialEq)]
pub enum CubeOp {
    /// [`Level::set_cube`].
    SetCube { addr: CubeAddr, cube: Cube },
    /// [`Level::clear_cube`].
    ClearCube { addr: CubeAddr },
    /// [`Level::fill_box`].
    FillBox { region: LatticeBox, cube: Cube },
    /// [`Level::clear_box`].
    ClearBox { region: LatticeBox },
    /// [`Level::paint_face`].
    PaintFace { addr: CubeAddr, face: Face, material: MaterialId },
    /// [`Level::paint_face_box`].
    PaintFaceBox { region: LatticeBox, face: Face, material: MaterialId },
    /// [`Level::paint_cube`].
    PaintCube { addr: CubeAddr, material: MaterialId },
    /// [`Level::paint_box`].
    PaintBox { region: LatticeBox, material: MaterialId },
    /// [`Level::push_corner`].
    PushCorner { addr: CubeAddr, corner: usize, delta: IVec3 },
    /// [`Level::subdivide`].
    Subdivide { addr: CubeAddr },
    /// [`Level::set_path_attrs_box`].
    SetPathAttrs { region: LatticeBox, attrs: PathAttrs },
    /// [`Level::set_draw_backfaces_box`].
    SetDrawBackfaces { region: LatticeBox, on: bool },
}

impl CubeOp {
    /// The level lattice box the operation can change (what its undo backup covers).
    pub fn region(&self) -> LatticeBox {
        match *self {
            CubeOp::SetCube { addr, .. }
            | CubeOp::ClearCube { addr }
            | CubeOp::PaintFace { addr, .. }
            | CubeOp::PaintCube { addr, .. }
            | CubeOp::PushCorner { addr, .. }
            | CubeOp::Subdivide { addr } => addr.lattice_box(),
            CubeOp::FillBox { region, .. }
            | CubeOp::ClearBox { region }
            | CubeOp::PaintFaceBox { region, .. }
            | CubeOp::PaintBox { region, .. }
            | CubeOp::SetPathAttrs { region, .. }
            | CubeOp::SetDrawBackfaces { region, .. } => region,
        }
    }

    /// Performs the operation on `level`; on error nothing changed.
    pub fn apply_to(&self, level: &mut Level) -> Result<ChunkChanges, LevelError> {
        match *self {
            CubeOp::SetCube { addr, cube } => level.set_cube(addr, cube),
            CubeOp::ClearCube { addr } => level.clear_cube(addr),
            CubeOp::FillBox { region, cube } => level.fill_box(region, cube),
            CubeOp::ClearBox { region } => level.clear_box(region),
            CubeOp::PaintFace { addr, face, material } => level.paint_face(addr, face, material),
            CubeOp::PaintFaceBox { region, face, material } => level.paint_face_box(region, face, material),
            CubeOp::PaintCube { addr, material } => level.paint_cube(addr, material),
            CubeOp::PaintBox { region, material } => level.paint_box(region, material),
            CubeOp::PushCorner { addr, corner, delta } => level.push_corner(addr, corner, delta),
            CubeOp::Subdivide { addr } => level.subdivide(addr),
            CubeOp::SetPathAttrs { region, attrs } => level.set_path_attrs_box(region, attrs),
            CubeOp::SetDrawBackfaces { region, on } => level.set_draw_backfaces_box(region, on),
        }
    }

    /// The cube the operation writes, if it writes one (its ids must exist in the library).
    fn written_cube(&self) -> Option<Cube> {
        match *self {
            CubeOp::SetCube { cube, .. } | CubeOp::FillBox { cube, .. } => Some(cube),
            _ => None,
        }
    }

    /// The material the operation paints, if it paints.
    fn painted_material(&self) -> Option<MaterialId> {
        match *self {
            CubeOp::PaintFace { material, .. }
            | CubeOp::PaintFaceBox { material, .. }
            | CubeOp::PaintCube { material, .. }
            | CubeOp::PaintBox { material, .. } => Some(material),
            _ => None,
        }
    }
}

/// A reference to a library record of any kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LibRef {
    /// A material.
    Material(MaterialId),
    /// A physics material.
    Physics(PhysicsId),
    /// A sound material.
    Sound(SoundId),
    /// An environment of any kind.
    Environment(EnvRef),
}

impl LibRef {
    /// The kind, for messages.
    pub fn kind(self) -> ItemKind {
        match self {
            LibRef::Material(_) => ItemKind::Material,
            LibRef::Physics(_) => ItemKind::PhysicsMaterial,
            LibRef::Sound(_) => ItemKind::SoundMaterial,
            LibRef::Environment(e) => e.kind().item_kind(),
        }
    }
}

/// A library record of any kind.
#[derive(Debug, Clone, PartialEq)]
pub enum LibItem {
    /// A material.
    Material(Material),
    /// A physics material.
    Physics(PhysicsMaterial),
    /// A sound material.
    Sound(SoundMaterial),
    /// An environment of any kind.
    Environment(Environment),
}

impl LibItem {
    /// The record's name.
    pub fn name(&self) -> &str {
        match self {
            LibItem::Material(m) => &m.name,
            LibItem::Physics(m) => &m.name,
            LibItem::Sound(m) => &m.name,
            LibItem::Environment(e) => e.name(),
        }
    }

    /// The kind, for messages.
    pub fn kind(&self) -> ItemKind {
        match self {
            LibItem::Material(_) => ItemKind::Material,
            LibItem::Physics(_) => ItemKind::PhysicsMaterial,
            LibItem::Sound(_) => ItemKind::SoundMaterial,
            LibItem::Environment(e) => e.kind().item_kind(),
        }
    }
}

/// A reference to a level object of any kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ObjRef {
    /// A light.
    Light(LightId),
    /// An entity.
    Entity(EntityId),
    /// An environment region.
    Region(RegionId),
    /// A load region.
    LoadRegion(LoadRegionId),
}

impl ObjRef {
    /// The kind, for messages.
    pub fn kind(self) -> ItemKind {
        match self {
            ObjRef::Light(_) => ItemKind::Light,
            ObjRef::Entity(_) => ItemKind::Entity,
            ObjRef::Region(_) => ItemKind::EnvironmentRegion,
            ObjRef::LoadRegion(_) => ItemKind::LoadRegion,
        }
    }
}

/// A level object of any kind.
#[derive(Debug, Clone, PartialEq)]
pub enum ObjItem {
    /// A light.
    Light(Light),
    /// An entity (boxed: the PMF record is large).
    Entity(Box<MapEntity>),
    /// An environment region.
    Region(EnvironmentRegion),
    /// A load region.
    LoadRegion(LoadRegion),
}

impl ObjItem {
    /// The object's label (may be empty).
    pub fn name(&self) -> &str {
        match self {
            ObjItem::Light(l) => &l.name,
            ObjItem::Entity(e) => &e.entity.name,
            ObjItem::Region(r) => &r.name,
            ObjItem::LoadRegion(r) => &r.name,
        }
    }

    /// The kind, for messages.
    pub fn kind(&self) -> ItemKind {
        match self {
            ObjItem::Light(_) => ItemKind::Light,
            ObjItem::Entity(_) => ItemKind::Entity,
            ObjItem::Region(_) => ItemKind::EnvironmentRegion,
            ObjItem::LoadRegion(_) => ItemKind::LoadRegion,
        }
    }

    /// The point a move gizmo drags: a light's or entity's position, a region's center.
    pub fn position(&self) -> Option<Vec3> {
        match self {
            ObjItem::Light(l) => Some(l.position),
            ObjItem::Entity(e) => e.position(),
            ObjItem::Region(r) => {
                let (lo, hi) = r.bounds();
                Some((lo + hi) * 0.5)
            }
            ObjItem::LoadRegion(r) => Some((r.min + r.max) * 0.5),
        }
    }

    /// Moves the object so that [`position`](Self::position) becomes `p` (regions are
    /// translated); `false` for an entity without a position.
    pub fn set_position(&mut self, p: Vec3) -> bool {
        let Some(old) = self.position() else { return false };
        let delta = p - old;
        match self {
            ObjItem::Light(l) => l.position = p,
            ObjItem::Entity(e) => return e.set_position(p),
            ObjItem::Region(r) => r.corners = r.corners.map(|c| c + delta),
            ObjItem::LoadRegion(r) => {
                r.min += delta;
                r.max += delta;
            }
        }
        true
    }
}

/// Every change to a [`Map`]. Levels are named by their index in [`Map::levels`].
#[derive(Debug, Clone, PartialEq)]
pub enum Edit {
    /// A cube operation on a level. Cubes written must use materials, physics and sound
    /// materials the library has; a painted material must exist.
    Cubes { level: usize, op: CubeOp },

    /// Adds a library record (checked like [`Library::add`](crate::map::Library::add)).
    AddLibraryItem(LibItem),
    /// Renames a library record.
    RenameLibraryItem { id: LibRef, name: String },
    /// Replaces a library record by a new value of the same kind (an inspector form's "apply").
    ReplaceLibraryItem { id: LibRef, item: LibItem },
    /// Removes a library record; one in use needs a replacement of the same kind, which takes
    /// its place everywhere (see [`Map::remove_material`] and friends).
    RemoveLibraryItem { id: LibRef, replacement: Option<LibRef> },

    /// Adds an object to a level. An environment region's environment must exist.
    AddObject { level: usize, item: ObjItem },
    /// Replaces an object by a new value of the same kind.
    ReplaceObject { level: usize, id: ObjRef, item: ObjItem },
    /// Moves an object (see [`ObjItem::set_position`]).
    MoveObject { level: usize, id: ObjRef, position: Vec3 },
    /// Removes an object.
    RemoveObject { level: usize, id: ObjRef },

    /// Sets a level's flags.
    SetLevelFlags { level: usize, flags: LevelFlags },
    /// Sets or clears a level's default environment of `kind` (`env` must be of that kind and
    /// exist).
    SetDefaultEnvironment { level: usize, kind: EnvKind, env: Option<EnvRef> },
    /// Sets a level's air physics material (it must exist).
    SetAirPhysics { level: usize, physics: Option<PhysicsId> },
    /// Moves a level's world origin ([`Level::set_center_chunk`]).
    SetCenterChunk { level: usize, chunk: ChunkCoord },
    /// Changes a level's chunk size; only while it has no cube ([`Level::set_chunk_size_log2`]).
    SetChunkSize { level: usize, chunk_size_log2: u8 },
    /// Renames a level (display name, not exported).
    RenameLevel { level: usize, name: String },
    /// Sets a level's sun, sky and bounce settings (checked with [`LevelLighting::validate`]).
    SetLevelLighting { level: usize, lighting: LevelLighting },
    /// Appends an empty level.
    AddLevel { name: String, chunk_size_log2: u8 },
    /// Removes a level (not the last one); later levels move down one index.
    RemoveLevel { level: usize },

    /// Replaces the metadata (name, description, authors, gamemodes), checked with
    /// [`MapMeta::validate`].
    SetMeta(MapMeta),

    /// Replaces the whole map by another (an import applied to a copy of the map). The map must
    /// have a level and valid metadata. Undo swaps the old map back; both are kept in the undo
    /// entry, which is cheap because unchanged chunks are shared (`Arc`) between the two.
    ReplaceMap { map: WholeMap, name: String },
}

/// A whole map carried by [`Edit::ReplaceMap`]; equality is [`Map::content_eq`].
#[derive(Debug, Clone)]
pub struct WholeMap(pub Box<Map>);

impl PartialEq for WholeMap {
    fn eq(&self, other: &Self) -> bool {
        self.0.content_eq(&other.0)
    }
}

/// Why an edit was refused. Nothing changed and no undo entry was made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EditError {
    /// The level index is out of range.
    #[error("there is no level {0}")]
    NoLevel(usize),
    /// The last level cannot be removed.
    #[error("a map needs at least one level")]
    LastLevel,
    /// A cube operation or level setting was refused.
    #[error(transparent)]
    Level(#[from] LevelError),
    /// A library or object operation was refused.
    #[error(transparent)]
    Library(#[from] LibraryError),
    /// Lighting settings out of range.
    #[error(transparent)]
    Lighting(#[from] LightingError),
    /// The metadata breaks a PMF limit.
    #[error(transparent)]
    Meta(#[from] MetaError),
    /// A reference and a value (or a replacement) are of different kinds.
    #[error("a {expected} cannot be replaced by a {found}")]
    KindMismatch { expected: ItemKind, found: ItemKind },
    /// A move of an object that has no position.
    #[error("{0} has no position to move")]
    NoPosition(String),
}

impl From<MapError> for EditError {
    fn from(e: MapError) -> Self {
        match e {
            MapError::NoLevel(i) => EditError::NoLevel(i),
            MapError::LastLevel => EditError::LastLevel,
            MapError::Level(e) => EditError::Level(e),
            MapError::Library(e) => EditError::Library(e),
            MapError::Meta(e) => EditError::Meta(e),
        }
    }
}

/// The level at `i`.
fn level_mut(map: &mut Map, i: usize) -> Result<&mut Level, EditError> {
    map.levels.get_mut(i).ok_or(EditError::NoLevel(i))
}

/// The level at `i`.
fn level_ref(map: &Map, i: usize) -> Result<&Level, EditError> {
    map.levels.get(i).ok_or(EditError::NoLevel(i))
}
