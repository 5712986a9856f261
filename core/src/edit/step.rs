//! [`Step`]: one performed change with what undoing and redoing it needs, and the dispatch of
//! [`Edit`]s over library and object kinds.

use crate::map::coords::ChunkCoord;
use crate::map::ids::{MaterialId, PhysicsId, SoundId};
use crate::map::level::{Backup, ChunkChanges, LevelFlags};
use crate::map::library::{
    EnvRef, EnvironmentDefaults, ItemKind, LevelObjects, Library, LibraryError, Referrer, Removed, RemovedEnvironment,
    TableId,
};
use crate::map::lighting::LevelLighting;
use crate::map::octree::{Cube, CubeKind};
use crate::map::path_sets::PathSets;
use crate::map::{Level, Map, MapError, MapMeta, MapRemoval};

use super::change::ChangeSet;
use super::error::EditError;
use super::ops::{CubeOp, Edit, LibItem, LibRef, ObjItem, ObjRef, level_mut, level_ref};

/// The level settings one [`Step::Settings`] swaps.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Settings {
    name: String,
    flags: LevelFlags,
    environments: EnvironmentDefaults,
    air: Option<PhysicsId>,
    center: ChunkCoord,
    chunk_size_log2: u8,
    lighting: LevelLighting,
}

impl Settings {
    fn read(level: &Level) -> Settings {
        Settings {
            name: level.name.clone(),
            flags: level.flags,
            environments: level.environments,
            air: level.air_physics_material,
            center: level.center_chunk(),
            chunk_size_log2: level.chunk_size_log2(),
            lighting: level.lighting,
        }
    }

    /// Writes the settings; the chunk size first, so that a refusal changes nothing.
    fn write(&self, level: &mut Level) -> Result<(), EditError> {
        if !self.center.is_in_grid() {
            return Err(crate::map::level::LevelError::ChunkOutsideGrid(self.center).into());
        }
        if self.chunk_size_log2 != level.chunk_size_log2() {
            level.set_chunk_size_log2(self.chunk_size_log2)?;
        }
        level.set_center_chunk(self.center)?;
        level.name.clone_from(&self.name);
        level.flags = self.flags;
        level.environments = self.environments;
        level.air_physics_material = self.air;
        level.lighting = self.lighting;
        Ok(())
    }
}

/// A library removal of any kind, with what it re-pointed in the levels.
#[derive(Debug, Clone)]
pub(super) enum Removal {
    Material(MapRemoval<Removed<MaterialId>>),
    Physics(MapRemoval<Removed<PhysicsId>>),
    Sound(MapRemoval<Removed<SoundId>>),
    Environment(MapRemoval<RemovedEnvironment>),
}

/// One performed change. Cube steps hold the forward operation and the backup of the region it
/// overwrote; the others hold old and new records.
#[derive(Debug, Clone)]
pub(super) enum Step {
    Cubes {
        level: usize,
        op: CubeOp,
        backup: Backup,
    },
    LibAdd {
        id: LibRef,
        item: Box<LibItem>,
    },
    LibReplace {
        id: LibRef,
        old: Box<LibItem>,
        new: Box<LibItem>,
    },
    LibRemove {
        id: LibRef,
        replacement: Option<LibRef>,
        removal: Box<Removal>,
    },
    ObjAdd {
        level: usize,
        id: ObjRef,
        item: Box<ObjItem>,
    },
    ObjReplace {
        level: usize,
        id: ObjRef,
        old: Box<ObjItem>,
        new: Box<ObjItem>,
    },
    ObjRemove {
        level: usize,
        id: ObjRef,
        item: Box<ObjItem>,
    },
    Settings {
        level: usize,
        old: Box<Settings>,
        new: Box<Settings>,
    },
    Meta {
        old: Box<MapMeta>,
        new: Box<MapMeta>,
    },
    PathSets {
        old: Box<PathSets>,
        new: Box<PathSets>,
    },
    /// `level` holds the level while the step is undone.
    AddLevel {
        index: usize,
        level: Option<Box<Level>>,
    },
    /// `level` holds the level while the step is applied.
    RemoveLevel {
        index: usize,
        level: Option<Box<Level>>,
    },
    /// The map that is not in place: the old one while applied, the new one while undone.
    ReplaceMap {
        other: Box<Map>,
    },
}

// ----- library dispatch ---------------------------------------------------------------------

fn mismatch(expected: ItemKind, found: ItemKind) -> EditError {
    EditError::KindMismatch { expected, found }
}

/// A copy of a library record.
pub(super) fn lib_get(lib: &Library, id: LibRef) -> Option<LibItem> {
    Some(match id {
        LibRef::Material(i) => LibItem::Material(lib.get(i)?.clone()),
        LibRef::Physics(i) => LibItem::Physics(lib.get(i)?.clone()),
        LibRef::Sound(i) => LibItem::Sound(lib.get(i)?.clone()),
        LibRef::Environment(e) => LibItem::Environment(lib.environment(e)?),
    })
}

fn lib_add(lib: &mut Library, item: LibItem) -> Result<LibRef, EditError> {
    Ok(match item {
        LibItem::Material(m) => LibRef::Material(lib.add(m)?),
        LibItem::Physics(m) => LibRef::Physics(lib.add(m)?),
        LibItem::Sound(m) => LibRef::Sound(lib.add(m)?),
        LibItem::Environment(e) => LibRef::Environment(lib.add_environment(e)?),
    })
}

fn lib_replace(lib: &mut Library, id: LibRef, item: LibItem) -> Result<LibItem, EditError> {
    Ok(match (id, item) {
        (LibRef::Material(i), LibItem::Material(m)) => LibItem::Material(lib.replace(i, m)?),
        (LibRef::Physics(i), LibItem::Physics(m)) => LibItem::Physics(lib.replace(i, m)?),
        (LibRef::Sound(i), LibItem::Sound(m)) => LibItem::Sound(lib.replace(i, m)?),
        (LibRef::Environment(e), LibItem::Environment(x)) => {
            if e.kind() != x.kind() {
                return Err(mismatch(id.kind(), x.kind().item_kind()));
            }
            LibItem::Environment(lib.replace_environment(e, x)?)
        }
        (id, item) => return Err(mismatch(id.kind(), item.kind())),
    })
}

fn lib_restore(lib: &mut Library, id: LibRef, item: LibItem) -> Result<(), EditError> {
    match (id, item) {
        (LibRef::Material(i), LibItem::Material(m)) => lib.restore(i, m)?,
        (LibRef::Physics(i), LibItem::Physics(m)) => lib.restore(i, m)?,
        (LibRef::Sound(i), LibItem::Sound(m)) => lib.restore(i, m)?,
        (LibRef::Environment(e), LibItem::Environment(x)) => lib.restore_environment(e, x)?,
        (id, item) => return Err(mismatch(id.kind(), item.kind())),
    }
    Ok(())
}

/// Removes a record that nothing refers to (undo of an add).
fn lib_take(lib: &mut Library, id: LibRef) -> Result<LibItem, EditError> {
    let item = match id {
        LibRef::Material(i) => lib.take(i).map(LibItem::Material),
        LibRef::Physics(i) => lib.take(i).map(LibItem::Physics),
        LibRef::Sound(i) => lib.take(i).map(LibItem::Sound),
        LibRef::Environment(e) => lib.take_environment(e).map(LibItem::Environment),
    };
    item.ok_or(EditError::from(LibraryError::NotFound { kind: id.kind(), id: lib_raw(id) }))
}

fn lib_raw(id: LibRef) -> u32 {
    match id {
        LibRef::Material(i) => i.raw(),
        LibRef::Physics(i) => i.raw(),
        LibRef::Sound(i) => i.raw(),
        LibRef::Environment(e) => e.raw(),
    }
}

fn lib_remove(map: &mut Map, id: LibRef, replacement: Option<LibRef>) -> Result<Removal, EditError> {
    let bad = |r: LibRef| mismatch(id.kind(), r.kind());
    Ok(match id {
        LibRef::Material(i) => {
            let rep = match replacement {
                None => None,
                Some(LibRef::Material(r)) => Some(r),
                Some(r) => return Err(bad(r)),
            };
            Removal::Material(map.remove_material(i, rep)?)
        }
        LibRef::Physics(i) => {
            let rep = match replacement {
                None => None,
                Some(LibRef::Physics(r)) => Some(r),
                Some(r) => return Err(bad(r)),
            };
            Removal::Physics(map.remove_physics_material(i, rep)?)
        }
        LibRef::Sound(i) => {
            let rep = match replacement {
                None => None,
                Some(LibRef::Sound(r)) => Some(r),
                Some(r) => return Err(bad(r)),
            };
            Removal::Sound(map.remove_sound_material(i, rep)?)
        }
        LibRef::Environment(e) => {
            let rep = match replacement {
                None => None,
                Some(LibRef::Environment(r)) => Some(r),
                Some(r) => return Err(bad(r)),
            };
            Removal::Environment(map.remove_environment(e, rep)?)
        }
    })
}

fn referrer_ref(r: &Referrer) -> LibRef {
    match *r {
        Referrer::Material(m) => LibRef::Material(m),
        Referrer::Sky(s, _) => LibRef::Environment(EnvRef::Sky(s)),
    }
}

impl Removal {
    /// What the removal changed besides chunks: the records, the re-pointed regions and settings.
    fn changes(&self, id: LibRef, replacement: Option<LibRef>) -> ChangeSet {
        fn common<R>(out: &mut ChangeSet, r: &MapRemoval<R>, relinked: &[Referrer]) {
            out.library.extend(relinked.iter().map(referrer_ref));
            for (i, regions) in &r.regions {
                out.level_mut(*i).objects.extend(regions.iter().map(|&r| ObjRef::Region(r)));
            }
            for &i in &r.settings {
                out.level_mut(i).settings = true;
            }
        }
        let mut out = ChangeSet::new();
        out.library.insert(id);
        out.library.extend(replacement);
        match self {
            Removal::Material(r) => common(&mut out, r, &r.removed.relinked),
            Removal::Physics(r) => common(&mut out, r, &r.removed.relinked),
            Removal::Sound(r) => common(&mut out, r, &r.removed.relinked),
            Removal::Environment(r) => common(&mut out, r, &r.removed.relinked),
        }
        out
    }

    fn chunk_changes(&self) -> Vec<(usize, &ChunkChanges)> {
        fn of<R>(r: &MapRemoval<R>) -> Vec<(usize, &ChunkChanges)> {
            r.chunks.iter().map(|(i, _, c)| (*i, c)).collect()
        }
        match self {
            Removal::Material(r) => of(r),
            Removal::Physics(r) => of(r),
            Removal::Sound(r) => of(r),
            Removal::Environment(r) => of(r),
        }
    }

    fn undo(&self, map: &mut Map) -> Result<Vec<(usize, ChunkChanges)>, EditError> {
        Ok(match self {
            Removal::Material(r) => map.undo_removal(r)?,
            Removal::Physics(r) => map.undo_removal(r)?,
            Removal::Sound(r) => map.undo_removal(r)?,
            Removal::Environment(r) => map.undo_removal(r)?,
        })
    }

    fn memory_bytes(&self) -> usize {
        match self {
            Removal::Material(r) => r.memory_bytes(),
            Removal::Physics(r) => r.memory_bytes(),
            Removal::Sound(r) => r.memory_bytes(),
            Removal::Environment(r) => r.memory_bytes(),
        }
    }
}

/// Checks that the ids a written cube carries exist.
fn check_cube(lib: &Library, cube: &Cube) -> Result<(), LibraryError> {
    let missing = |kind, id: u32| LibraryError::NotFound { kind, id };
    let (materials, physics, sound): (&[MaterialId], &[PhysicsId], SoundId) = match &cube.kind {
        CubeKind::Empty => return Ok(()),
        CubeKind::Geometry(g) => (std::slice::from_ref(&g.material), std::slice::from_ref(&g.physics), g.sound),
        CubeKind::Extended(e) => (&e.face_materials, &e.face_physics, e.sound),
    };
    if let Some(m) = materials.iter().find(|&&m| lib.get(m).is_none()) {
        return Err(missing(ItemKind::Material, m.raw()));
    }
    if let Some(p) = physics.iter().find(|&&p| lib.get(p).is_none()) {
        return Err(missing(ItemKind::PhysicsMaterial, p.raw()));
    }
    if lib.get(sound).is_none() {
        return Err(missing(ItemKind::SoundMaterial, sound.raw()));
    }
    Ok(())
}

// ----- object dispatch ----------------------------------------------------------------------

fn obj_add(objects: &mut LevelObjects, item: ObjItem) -> Result<ObjRef, EditError> {
    Ok(match item {
        ObjItem::Light(x) => ObjRef::Light(objects.add(x)?),
        ObjItem::Entity(x) => ObjRef::Entity(objects.add(*x)?),
        ObjItem::Region(x) => ObjRef::Region(objects.add(x)?),
        ObjItem::LoadRegion(x) => ObjRef::LoadRegion(objects.add(x)?),
    })
}

fn obj_replace(objects: &mut LevelObjects, id: ObjRef, item: ObjItem) -> Result<ObjItem, EditError> {
    Ok(match (id, item) {
        (ObjRef::Light(i), ObjItem::Light(x)) => ObjItem::Light(objects.replace(i, x)?),
        (ObjRef::Entity(i), ObjItem::Entity(x)) => ObjItem::Entity(Box::new(objects.replace(i, *x)?)),
        (ObjRef::Region(i), ObjItem::Region(x)) => ObjItem::Region(objects.replace(i, x)?),
        (ObjRef::LoadRegion(i), ObjItem::LoadRegion(x)) => ObjItem::LoadRegion(objects.replace(i, x)?),
        (id, item) => return Err(mismatch(id.kind(), item.kind())),
    })
}

fn obj_restore(objects: &mut LevelObjects, id: ObjRef, item: ObjItem) -> Result<(), EditError> {
    match (id, item) {
        (ObjRef::Light(i), ObjItem::Light(x)) => objects.restore(i, x)?,
        (ObjRef::Entity(i), ObjItem::Entity(x)) => objects.restore(i, *x)?,
        (ObjRef::Region(i), ObjItem::Region(x)) => objects.restore(i, x)?,
        (ObjRef::LoadRegion(i), ObjItem::LoadRegion(x)) => objects.restore(i, x)?,
        (id, item) => return Err(mismatch(id.kind(), item.kind())),
    }
    Ok(())
}

fn obj_remove(objects: &mut LevelObjects, id: ObjRef) -> Result<ObjItem, EditError> {
    Ok(match id {
        ObjRef::Light(i) => ObjItem::Light(objects.remove(i)?),
        ObjRef::Entity(i) => ObjItem::Entity(Box::new(objects.remove(i)?)),
        ObjRef::Region(i) => ObjItem::Region(objects.remove(i)?),
        ObjRef::LoadRegion(i) => ObjItem::LoadRegion(objects.remove(i)?),
    })
}

fn obj_not_found(id: ObjRef) -> EditError {
    let raw = match id {
        ObjRef::Light(i) => i.raw(),
        ObjRef::Entity(i) => i.raw(),
        ObjRef::Region(i) => i.raw(),
        ObjRef::LoadRegion(i) => i.raw(),
    };
    EditError::from(LibraryError::NotFound { kind: id.kind(), id: raw })
}

/// An environment region's environment must exist.
fn check_object(lib: &Library, item: &ObjItem) -> Result<(), EditError> {
    if let ObjItem::Region(r) = item
        && !lib.contains_environment(r.environment)
    {
        return Err(LibraryError::NotFound { kind: r.environment.kind().item_kind(), id: r.environment.raw() }.into());
    }
    Ok(())
}

fn object_changes(level: usize, id: ObjRef) -> ChangeSet {
    let mut c = ChangeSet::new();
    c.level_mut(level).objects.insert(id);
    c
}

fn settings_changes(level: usize) -> ChangeSet {
    let mut c = ChangeSet::new();
    c.level_mut(level).settings = true;
    c
}

// ----- perform, undo, redo ------------------------------------------------------------------

impl Step {
    /// Checks and performs `edit` on `map`. `Ok(None)`: valid but nothing changed. On error the
    /// map is unchanged.
    pub(super) fn perform(map: &mut Map, edit: Edit) -> Result<Option<(Step, ChangeSet)>, EditError> {
        let settings_step = |map: &mut Map, level: usize, f: &dyn Fn(&mut Settings)| {
            let l = level_mut(map, level)?;
            let old = Settings::read(l);
            let mut new = old.clone();
            f(&mut new);
            if new == old {
                return Ok(None);
            }
            new.write(l)?;
            Ok(Some((Step::Settings { level, old: Box::new(old), new: Box::new(new) }, settings_changes(level))))
        };
        Ok(match edit {
            Edit::Cubes { level, op } => {
                if let Some(cube) = op.written_cube() {
                    check_cube(&map.library, &cube)?;
                }
                if let Some(m) = op.painted_material()
                    && map.library.get(m).is_none()
                {
                    return Err(LibraryError::NotFound { kind: ItemKind::Material, id: m.raw() }.into());
                }
                let l = level_mut(map, level)?;
                let backup = l.capture(op.region())?;
                let chunks = op.apply_to(l)?;
                if chunks.is_empty() {
                    return Ok(None);
                }
                let mut c = ChangeSet::new();
                c.add_chunks(level, &chunks);
                Some((Step::Cubes { level, op, backup }, c))
            }
            Edit::AddLibraryItem(item) => {
                let id = lib_add(&mut map.library, item.clone())?;
                let mut c = ChangeSet::new();
                c.library.insert(id);
                Some((Step::LibAdd { id, item: Box::new(item) }, c))
            }
            Edit::RenameLibraryItem { id, name } => {
                let mut item = lib_get(&map.library, id).ok_or_else(|| lib_not_found(id))?;
                match &mut item {
                    LibItem::Material(m) => m.name = name,
                    LibItem::Physics(m) => m.name = name,
                    LibItem::Sound(m) => m.name = name,
                    LibItem::Environment(e) => set_env_name(e, name),
                }
                return Step::perform(map, Edit::ReplaceLibraryItem { id, item });
            }
            Edit::ReplaceLibraryItem { id, item } => {
                let current = lib_get(&map.library, id).ok_or_else(|| lib_not_found(id))?;
                if current == item {
                    return Ok(None);
                }
                let old = lib_replace(&mut map.library, id, item.clone())?;
                let mut c = ChangeSet::new();
                c.library.insert(id);
                Some((Step::LibReplace { id, old: Box::new(old), new: Box::new(item) }, c))
            }
            Edit::RemoveLibraryItem { id, replacement } => {
                let removal = lib_remove(map, id, replacement)?;
                let mut c = removal.changes(id, replacement);
                for (i, ch) in removal.chunk_changes() {
                    c.add_chunks(i, ch);
                }
                Some((Step::LibRemove { id, replacement, removal: Box::new(removal) }, c))
            }
            Edit::AddObject { level, item } => {
                check_object(&map.library, &item)?;
                let id = obj_add(&mut level_mut(map, level)?.objects, item.clone())?;
                Some((Step::ObjAdd { level, id, item: Box::new(item) }, object_changes(level, id)))
            }
            Edit::ReplaceObject { level, id, item } => {
                check_object(&map.library, &item)?;
                let objects = &mut level_mut(map, level)?.objects;
                let current = id.get(objects).ok_or_else(|| obj_not_found(id))?;
                if current.kind() != item.kind() {
                    return Err(mismatch(id.kind(), item.kind()));
                }
                if current == item {
                    return Ok(None);
                }
                let old = obj_replace(objects, id, item.clone())?;
                Some((
                    Step::ObjReplace { level, id, old: Box::new(old), new: Box::new(item) },
                    object_changes(level, id),
                ))
            }
            Edit::MoveObject { level, id, position } => {
                let objects = &level_ref(map, level)?.objects;
                let mut item = id.get(objects).ok_or_else(|| obj_not_found(id))?;
                if !item.set_position(position) {
                    return Err(EditError::NoPosition(format!("{} {}", id.kind(), item.name())));
                }
                return Step::perform(map, Edit::ReplaceObject { level, id, item });
            }
            Edit::RemoveObject { level, id } => {
                let item = obj_remove(&mut level_mut(map, level)?.objects, id)?;
                Some((Step::ObjRemove { level, id, item: Box::new(item) }, object_changes(level, id)))
            }
            Edit::SetLevelFlags { level, flags } => return settings_step(map, level, &|s| s.flags = flags),
            Edit::SetDefaultEnvironment { level, kind, env } => {
                if let Some(e) = env {
                    if e.kind() != kind {
                        return Err(mismatch(kind.item_kind(), e.kind().item_kind()));
                    }
                    if !map.library.contains_environment(e) {
                        return Err(lib_not_found(LibRef::Environment(e)));
                    }
                }
                return settings_step(map, level, &|s| match env {
                    Some(e) => s.environments.set(e),
                    None => s.environments.clear(kind),
                });
            }
            Edit::SetAirPhysics { level, physics } => {
                if let Some(p) = physics
                    && map.library.get(p).is_none()
                {
                    return Err(lib_not_found(LibRef::Physics(p)));
                }
                return settings_step(map, level, &|s| s.air = physics);
            }
            Edit::SetCenterChunk { level, chunk } => return settings_step(map, level, &|s| s.center = chunk),
            Edit::SetChunkSize { level, chunk_size_log2 } => {
                return settings_step(map, level, &|s| s.chunk_size_log2 = chunk_size_log2);
            }
            Edit::RenameLevel { level, name } => return settings_step(map, level, &|s| s.name.clone_from(&name)),
            Edit::SetLevelLighting { level, lighting } => {
                lighting.validate()?;
                return settings_step(map, level, &|s| s.lighting = lighting);
            }
            Edit::AddLevel { name, chunk_size_log2 } => {
                let level = Level::new(name, chunk_size_log2)?;
                map.levels.push(level);
                let c = ChangeSet { level_list: true, ..ChangeSet::new() };
                Some((Step::AddLevel { index: map.levels.len() - 1, level: None }, c))
            }
            Edit::RemoveLevel { level } => {
                level_ref(map, level)?;
                if map.levels.len() == 1 {
                    return Err(MapError::LastLevel.into());
                }
                let removed = map.levels.remove(level);
                let c = ChangeSet { level_list: true, ..ChangeSet::new() };
                Some((Step::RemoveLevel { index: level, level: Some(Box::new(removed)) }, c))
            }
            Edit::SetMeta(meta) => {
                meta.validate()?;
                if meta == map.meta {
                    return Ok(None);
                }
                let old = std::mem::replace(&mut map.meta, meta.clone());
                let c = ChangeSet { meta: true, ..ChangeSet::new() };
                Some((Step::Meta { old: Box::new(old), new: Box::new(meta) }, c))
            }
            Edit::SetPathSets(sets) => {
                sets.validate()?;
                if sets == map.path_sets {
                    return Ok(None);
                }
                let old = std::mem::replace(&mut map.path_sets, sets.clone());
                let c = ChangeSet { path_sets: true, ..ChangeSet::new() };
                Some((Step::PathSets { old: Box::new(old), new: Box::new(sets) }, c))
            }
            Edit::ReplaceMap { map: new, .. } => {
                new.0.meta.validate()?;
                if new.0.levels.is_empty() {
                    return Err(MapError::LastLevel.into());
                }
                let old = std::mem::replace(map, *new.0);
                Some((Step::ReplaceMap { other: Box::new(old) }, ChangeSet::everything()))
            }
        })
    }

    /// Reverts the step on the map as the step left it.
    pub(super) fn undo(&mut self, map: &mut Map) -> Result<ChangeSet, EditError> {
        let mut c = ChangeSet::new();
        match self {
            Step::Cubes { level, backup, .. } => {
                let (_, chunks) = level_mut(map, *level)?.restore(backup)?;
                c.add_chunks(*level, &chunks);
            }
            Step::LibAdd { id, .. } => {
                lib_take(&mut map.library, *id)?;
                c.library.insert(*id);
            }
            Step::LibReplace { id, old, .. } => {
                lib_replace(&mut map.library, *id, (**old).clone())?;
                c.library.insert(*id);
            }
            Step::LibRemove { id, replacement, removal } => {
                c = removal.changes(*id, *replacement);
                for (i, ch) in removal.undo(map)? {
                    c.add_chunks(i, &ch);
                }
            }
            Step::ObjAdd { level, id, .. } => {
                obj_remove(&mut level_mut(map, *level)?.objects, *id)?;
                c = object_changes(*level, *id);
            }
            Step::ObjReplace { level, id, old, .. } => {
                obj_replace(&mut level_mut(map, *level)?.objects, *id, (**old).clone())?;
                c = object_changes(*level, *id);
            }
            Step::ObjRemove { level, id, item } => {
                obj_restore(&mut level_mut(map, *level)?.objects, *id, (**item).clone())?;
                c = object_changes(*level, *id);
            }
            Step::Settings { level, old, .. } => {
                old.write(level_mut(map, *level)?)?;
                c = settings_changes(*level);
            }
            Step::Meta { old, .. } => {
                map.meta = (**old).clone();
                c.meta = true;
            }
            Step::PathSets { old, .. } => {
                map.path_sets = (**old).clone();
                c.path_sets = true;
            }
            Step::AddLevel { index, level } => {
                level_ref(map, *index)?;
                *level = Some(Box::new(map.levels.remove(*index)));
                c.level_list = true;
            }
            Step::RemoveLevel { index, level } => {
                let l = level.take().ok_or(MapError::NoLevel(*index))?;
                if *index > map.levels.len() {
                    return Err(MapError::NoLevel(*index).into());
                }
                map.levels.insert(*index, *l);
                c.level_list = true;
            }
            Step::ReplaceMap { other } => {
                std::mem::swap(map, other);
                c = ChangeSet::everything();
            }
        }
        Ok(c)
    }

    /// Performs the step again on the map as its undo left it.
    pub(super) fn redo(&mut self, map: &mut Map) -> Result<ChangeSet, EditError> {
        let mut c = ChangeSet::new();
        match self {
            Step::Cubes { level, op, .. } => {
                let chunks = op.apply_to(level_mut(map, *level)?)?;
                c.add_chunks(*level, &chunks);
            }
            Step::LibAdd { id, item } => {
                lib_restore(&mut map.library, *id, (**item).clone())?;
                c.library.insert(*id);
            }
            Step::LibReplace { id, new, .. } => {
                lib_replace(&mut map.library, *id, (**new).clone())?;
                c.library.insert(*id);
            }
            Step::LibRemove { id, replacement, removal } => {
                **removal = lib_remove(map, *id, *replacement)?;
                c = removal.changes(*id, *replacement);
                for (i, ch) in removal.chunk_changes() {
                    c.add_chunks(i, ch);
                }
            }
            Step::ObjAdd { level, id, item } => {
                obj_restore(&mut level_mut(map, *level)?.objects, *id, (**item).clone())?;
                c = object_changes(*level, *id);
            }
            Step::ObjReplace { level, id, new, .. } => {
                obj_replace(&mut level_mut(map, *level)?.objects, *id, (**new).clone())?;
                c = object_changes(*level, *id);
            }
            Step::ObjRemove { level, id, .. } => {
                obj_remove(&mut level_mut(map, *level)?.objects, *id)?;
                c = object_changes(*level, *id);
            }
            Step::Settings { level, new, .. } => {
                new.write(level_mut(map, *level)?)?;
                c = settings_changes(*level);
            }
            Step::Meta { new, .. } => {
                map.meta = (**new).clone();
                c.meta = true;
            }
            Step::PathSets { new, .. } => {
                map.path_sets = (**new).clone();
                c.path_sets = true;
            }
            Step::AddLevel { index, level } => {
                let l = level.take().ok_or(MapError::NoLevel(*index))?;
                if *index > map.levels.len() {
                    return Err(MapError::NoLevel(*index).into());
                }
                map.levels.insert(*index, *l);
                c.level_list = true;
            }
            Step::RemoveLevel { index, level } => {
                level_ref(map, *index)?;
                *level = Some(Box::new(map.levels.remove(*index)));
                c.level_list = true;
            }
            Step::ReplaceMap { other } => {
                std::mem::swap(map, other);
                c = ChangeSet::everything();
            }
        }
        Ok(c)
    }

    /// Folds `next` into this step when both change the same record (a drag of an object, or
    /// repeated form applies): the old value stays, the new value is `next`'s. Returns `next`
    /// back when it cannot.
    pub(super) fn absorb(&mut self, next: Step) -> Option<Step> {
        match (self, next) {
            (Step::ObjReplace { level, id, new, .. }, Step::ObjReplace { level: l2, id: i2, new: n2, .. })
                if *level == l2 && *id == i2 =>
            {
                *new = n2;
                None
            }
            (Step::LibReplace { id, new, .. }, Step::LibReplace { id: i2, new: n2, .. }) if *id == i2 => {
                *new = n2;
                None
            }
            (Step::Settings { level, new, .. }, Step::Settings { level: l2, new: n2, .. }) if *level == l2 => {
                *new = n2;
                None
            }
            (Step::Meta { new, .. }, Step::Meta { new: n2, .. }) => {
                *new = n2;
                None
            }
            (Step::PathSets { new, .. }, Step::PathSets { new: n2, .. }) => {
                *new = n2;
                None
            }
            (_, next) => Some(next),
        }
    }

    /// Whether the step's old and new values are equal (a drag that came back to where it
    /// started, or was cancelled): undoing or redoing it changes nothing.
    pub(super) fn is_noop(&self) -> bool {
        match self {
            Step::ObjReplace { old, new, .. } => old == new,
            Step::LibReplace { old, new, .. } => old == new,
            Step::Settings { old, new, .. } => old == new,
            Step::Meta { old, new } => old == new,
            Step::PathSets { old, new } => old == new,
            _ => false,
        }
    }

    /// Bytes of RAM held by cube backups (the part of a step that grows with the edit).
    pub(super) fn backup_bytes(&self) -> usize {
        match self {
            Step::Cubes { backup, .. } => backup.memory_bytes(),
            Step::LibRemove { removal, .. } => removal.memory_bytes(),
            _ => 0,
        }
    }
}

fn lib_not_found(id: LibRef) -> EditError {
    EditError::from(LibraryError::NotFound { kind: id.kind(), id: lib_raw(id) })
}

fn set_env_name(e: &mut crate::map::library::Environment, name: String) {
    use crate::map::library::Environment;
    match e {
        Environment::Sound(x) => x.name = name,
        Environment::Weather(x) => x.name = name,
        Environment::Sky(x) => x.name = name,
        Environment::Gravity(x) => x.name = name,
    }
}

// ----- names --------------------------------------------------------------------------------

/// Lattice units as map units: `32` → `"4"`, `4` → `"0.5"`.
fn units(lattice: i32) -> String {
    if lattice % 8 == 0 { (lattice / 8).to_string() } else { (f64::from(lattice) / 8.0).to_string() }
}

fn labelled(kind: ItemKind, name: &str, raw: u32) -> String {
    if name.is_empty() { format!("{kind} #{raw}") } else { format!("{kind} {name}") }
}

fn obj_label(map: &Map, level: usize, id: ObjRef) -> String {
    let raw = match id {
        ObjRef::Light(i) => i.raw(),
        ObjRef::Entity(i) => i.raw(),
        ObjRef::Region(i) => i.raw(),
        ObjRef::LoadRegion(i) => i.raw(),
    };
    let name = map.levels.get(level).and_then(|l| id.get(&l.objects)).map(|o| o.name().to_owned());
    labelled(id.kind(), name.as_deref().unwrap_or(""), raw)
}

fn lib_label(map: &Map, id: LibRef) -> String {
    let name = lib_get(&map.library, id).map(|i| i.name().to_owned());
    labelled(id.kind(), name.as_deref().unwrap_or(""), lib_raw(id))
}

/// The human-readable name of `edit`, as the map is before it.
pub(super) fn describe(map: &Map, edit: &Edit) -> String {
    match edit {
        Edit::Cubes { op, .. } => {
            let size = |r: &crate::map::coords::LatticeBox| {
                let d = r.max - r.min;
                format!("{}×{}×{}", units(d.x), units(d.y), units(d.z))
            };
            let paint = |m: MaterialId| {
                let name = map.library.get(m).map(|x| x.name.clone()).unwrap_or_else(|| format!("#{}", m.0));
                format!("Paint material {name}")
            };
            match op {
                CubeOp::SetCube { cube, .. } if cube.is_solid() => "Set cube".to_owned(),
                CubeOp::SetCube { .. } | CubeOp::ClearCube { .. } => "Clear cube".to_owned(),
                CubeOp::FillBox { region, cube } if cube.is_solid() => format!("Fill box {}", size(region)),
                CubeOp::FillBox { region, .. } | CubeOp::ClearBox { region } => format!("Clear box {}", size(region)),
                CubeOp::PaintFace { material, .. }
                | CubeOp::PaintFaceBox { material, .. }
                | CubeOp::PaintCube { material, .. }
                | CubeOp::PaintBox { material, .. } => paint(*material),
                CubeOp::PushCorner { .. } => "Push corner".to_owned(),
                CubeOp::Subdivide { .. } => "Subdivide cube".to_owned(),
                CubeOp::SetPathAttrs { .. } => "Set path attributes".to_owned(),
                CubeOp::SetDrawBackfaces { on: true, .. } => "Draw backfaces".to_owned(),
                CubeOp::SetDrawBackfaces { on: false, .. } => "Hide backfaces".to_owned(),
            }
        }
        Edit::AddLibraryItem(item) => format!("Add {} {}", item.kind(), item.name()),
        Edit::RenameLibraryItem { id, name } => format!("Rename {} to {name}", lib_label(map, *id)),
        Edit::ReplaceLibraryItem { id, .. } => format!("Edit {}", lib_label(map, *id)),
        Edit::RemoveLibraryItem { id, .. } => format!("Remove {}", lib_label(map, *id)),
        Edit::AddObject { item, .. } => {
            if item.name().is_empty() {
                format!("Add {}", item.kind())
            } else {
                format!("Add {} {}", item.kind(), item.name())
            }
        }
        Edit::ReplaceObject { level, id, .. } => format!("Edit {}", obj_label(map, *level, *id)),
        Edit::MoveObject { level, id, .. } => format!("Move {}", obj_label(map, *level, *id)),
        Edit::RemoveObject { level, id } => format!("Remove {}", obj_label(map, *level, *id)),
        Edit::SetLevelFlags { .. } => "Set level flags".to_owned(),
        Edit::SetDefaultEnvironment { kind, env: Some(_), .. } => format!("Set default {kind} environment"),
        Edit::SetDefaultEnvironment { kind, env: None, .. } => format!("Clear default {kind} environment"),
        Edit::SetAirPhysics { .. } => "Set air physics material".to_owned(),
        Edit::SetCenterChunk { .. } => "Move center chunk".to_owned(),
        Edit::SetChunkSize { .. } => "Set chunk size".to_owned(),
        Edit::SetLevelLighting { .. } => "Set sun, sky and bounce".to_owned(),
        Edit::RenameLevel { level, name } => match map.levels.get(*level) {
            Some(l) => format!("Rename level {} to {name}", l.name),
            None => format!("Rename level to {name}"),
        },
        Edit::AddLevel { name, .. } => format!("Add level {name}"),
        Edit::RemoveLevel { level } => match map.levels.get(*level) {
            Some(l) => format!("Remove level {}", l.name),
            None => "Remove level".to_owned(),
        },
        Edit::ReplaceMap { name, .. } => name.clone(),
        Edit::SetPathSets(_) => "Edit path attribute sets".to_owned(),
        Edit::SetMeta(new) => {
            let old = &map.meta;
            let changed = [
                (old.name != new.name, "Rename map"),
                (old.description != new.description, "Edit description"),
                (old.authors != new.authors, "Edit authors"),
                (old.gamemodes != new.gamemodes, "Edit gamemodes"),
            ];
            let mut which = changed.iter().filter(|(c, _)| *c).map(|(_, n)| *n);
            match (which.next(), which.next()) {
                (Some(one), None) => one.to_owned(),
                _ => "Edit map information".to_owned(),
            }
        }
    }
}
