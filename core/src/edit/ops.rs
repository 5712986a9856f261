//! What an edit asks for: [`Edit`] and the values it carries ([`CubeOp`], [`LibRef`], [`LibItem`],
//! [`ObjRef`], [`ObjItem`], [`WholeMap`]).

use glam::{IVec3, Vec3};

use super::error::EditError;
use crate::map::coords::{ChunkCoord, CubeAddr, Face, LatticeBox};
use crate::map::ids::{MaterialId, PathAttrs, PhysicsId, SoundId};
use crate::map::level::{ChunkChanges, LevelError, LevelFlags};
use crate::map::library::{
    EntityId, EnvKind, EnvRef, Environment, EnvironmentRegion, Light, LightId, LoadRegion, LoadRegionId, MapEntity,
    Material, PhysicsMaterial, RegionId, SoundMaterial,
};
use crate::map::library::{ItemKind, LevelObjects};
use crate::map::lighting::LevelLighting;
use crate::map::octree::Cube;
use crate::map::path_sets::PathSets;
use crate::map::{Level, Map, MapError, MapMeta};

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
    pub(super) fn written_cube(&self) -> Option<Cube> {
        match *self {
            CubeOp::SetCube { cube, .. } | CubeOp::FillBox { cube, .. } => Some(cube),
            _ => None,
        }
    }

    /// The material the operation paints, if it paints.
    pub(super) fn painted_material(&self) -> Option<MaterialId> {
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

    /// A copy of the object this names in `objects`, if it exists.
    pub fn get(self, objects: &LevelObjects) -> Option<ObjItem> {
        Some(match self {
            ObjRef::Light(i) => ObjItem::Light(objects.get(i)?.clone()),
            ObjRef::Entity(i) => ObjItem::Entity(Box::new(objects.get(i)?.clone())),
            ObjRef::Region(i) => ObjItem::Region(objects.get(i)?.clone()),
            ObjRef::LoadRegion(i) => ObjItem::LoadRegion(objects.get(i)?.clone()),
        })
    }

    /// Where the object is, as [`ObjItem::position`] says (a light's or entity's position, a
    /// region's centre), without copying it; `None` if it does not exist or is an entity without
    /// a position.
    pub fn position(self, objects: &LevelObjects) -> Option<Vec3> {
        match self {
            ObjRef::Light(i) => objects.get(i).map(|l| l.position),
            ObjRef::Entity(i) => objects.get(i)?.position(),
            ObjRef::Region(i) => objects.get(i).map(EnvironmentRegion::center),
            ObjRef::LoadRegion(i) => objects.get(i).map(LoadRegion::center),
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
            ObjItem::Region(r) => Some(r.center()),
            ObjItem::LoadRegion(r) => Some(r.center()),
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

    /// Replaces the path attribute sets, checked with [`PathSets::validate`].
    SetPathSets(PathSets),

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

/// The level at `i`.
pub(super) fn level_mut(map: &mut Map, i: usize) -> Result<&mut Level, EditError> {
    map.levels.get_mut(i).ok_or(EditError::Map(MapError::NoLevel(i)))
}

/// The level at `i`.
pub(super) fn level_ref(map: &Map, i: usize) -> Result<&Level, EditError> {
    map.levels.get(i).ok_or(EditError::Map(MapError::NoLevel(i)))
}
