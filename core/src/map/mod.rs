//! The editable map: metadata, map-wide libraries and environments, and levels made of chunked
//! octrees with their lights, entities and regions.
//!
//! Decisions (issue 3): libraries (materials, physics and sound materials) and environments are
//! map-wide and exported into every level; lights, entities and regions belong to a level, and so
//! do the default environments and the air physics material (PMF has them per level; [`Level`] is
//! their only owner).
//!
//! Removing a library record that the levels use goes through [`Map`]'s wrappers
//! ([`Map::remove_material`], …): they count every use in every level (cubes, regions, level
//! settings) and apply the replacement there, returning a [`MapRemoval`] that
//! [`Map::undo_removal`] reverts exactly.

pub mod library;
pub mod octree;

pub mod coords;
pub mod ids;
pub mod level;
pub mod lighting;
pub mod meta;
pub mod path_sets;

pub use level::Level;
pub use library::Library;
pub use meta::{MAX_GAMEMODE_LEN, MAX_GAMEMODES, MapMeta, MetaError};

use crate::map::level::{Backup, ChunkChanges, IdRemap, LevelError};
use crate::map::library::{
    EnvRef, LibraryError, LibraryId, MaterialId, PhysicsId, Problem, RegionId, Remap, Removed, RemovedEnvironment,
    SoundId, cross_level_global_ids,
};

/// The whole editable map.
#[derive(Debug, Clone)]
pub struct Map {
    pub meta: MapMeta,
    /// Map-wide libraries and environments.
    pub library: Library,
    /// At least one level.
    pub levels: Vec<Level>,
    /// What the path attribute ids painted on cubes mean.
    pub path_sets: path_sets::PathSets,
}

impl Map {
    /// A new map with the starter library and one empty level of 16-unit chunks.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            meta: MapMeta { name: name.into(), ..MapMeta::default() },
            library: Library::starter(),
            levels: vec![Level::new("main", 4).expect("4 is a valid chunk size")],
            path_sets: path_sets::PathSets::new(),
        }
    }

    /// An immutable copy for background work: chunks are shared (`Arc` clones, O(chunks)); an
    /// edit after the snapshot copies only the chunks it touches (copy-on-write).
    pub fn snapshot(&self) -> Map {
        self.clone()
    }
}

/// A [`Problem`] and where it is: `level` is the index of the level it was found in, `None` for
/// the metadata and the library.
#[derive(Debug, Clone, PartialEq)]
pub struct MapProblem {
    /// Index into [`Map::levels`], or `None` for map-wide problems.
    pub level: Option<usize>,
    /// What is wrong.
    pub problem: Problem,
}

/// What a [`Map`] removal wrapper did: the library removal, plus every use in the levels it
/// re-pointed at the replacement. Enough to undo it ([`Map::undo_removal`]).
#[derive(Debug, Clone, PartialEq)]
pub struct MapRemoval<R> {
    /// What the library returned ([`Removed`] or [`RemovedEnvironment`]).
    pub removed: R,
    /// Per level index: a copy of each chunk whose cubes were re-pointed (whole chunks: the
    /// replacement may touch any cube of them) and the changes.
    pub chunks: Vec<(usize, Backup, ChunkChanges)>,
    /// Per level index: the environment regions re-pointed.
    pub regions: Vec<(usize, Vec<RegionId>)>,
    /// Indices of the levels whose air physics material or default environment was re-pointed.
    pub settings: Vec<usize>,
}

impl<R> MapRemoval<R> {
    fn new(removed: R) -> Self {
        Self { removed, chunks: Vec::new(), regions: Vec::new(), settings: Vec::new() }
    }

    /// Bytes of RAM held by the chunk copies.
    pub fn memory_bytes(&self) -> usize {
        self.chunks.iter().map(|(_, b, _)| b.memory_bytes()).sum()
    }
}

/// A library removal whose [`MapRemoval`] [`Map::undo_removal`] can revert.
pub trait RemovalRecord {
    /// Puts the record back into the library (and re-points library records at it).
    fn unremove(&self, library: &mut Library) -> Result<(), LibraryError>;
    /// The remap the removal asked the levels for, as environment and cube remaps.
    fn level_remap(&self) -> (Option<(EnvRef, EnvRef)>, Option<IdRemap>);
}

impl<I: LibraryId + IntoIdRemap> RemovalRecord for Removed<I> {
    fn unremove(&self, library: &mut Library) -> Result<(), LibraryError> {
        library.unremove(self)
    }

    fn level_remap(&self) -> (Option<(EnvRef, EnvRef)>, Option<IdRemap>) {
        match self.remap {
            Remap::Nothing => (None, None),
            Remap::Replace { from, to } => (None, Some(I::id_remap(from, to))),
        }
    }
}

impl RemovalRecord for RemovedEnvironment {
    fn unremove(&self, library: &mut Library) -> Result<(), LibraryError> {
        library.restore_environment(self.env, self.item.clone())
    }

    fn level_remap(&self) -> (Option<(EnvRef, EnvRef)>, Option<IdRemap>) {
        match self.remap {
            Remap::Nothing => (None, None),
            Remap::Replace { from, to } => (Some((from, to)), None),
        }
    }
}

/// Library ids that cubes carry: materials, physics and sound materials.
pub trait IntoIdRemap: Sized {
    /// The cube remap replacing `from` with `to`.
    fn id_remap(from: Self, to: Self) -> IdRemap;
}

impl IntoIdRemap for MaterialId {
    fn id_remap(from: Self, to: Self) -> IdRemap {
        IdRemap::Material { from, to }
    }
}
impl IntoIdRemap for PhysicsId {
    fn id_remap(from: Self, to: Self) -> IdRemap {
        IdRemap::Physics { from, to }
    }
}
impl IntoIdRemap for SoundId {
    fn id_remap(from: Self, to: Self) -> IdRemap {
        IdRemap::Sound { from, to }
    }
}

impl Map {
    /// Whether any cube of any level is painted `material`.
    pub fn material_in_use(&self, material: MaterialId) -> bool {
        self.levels.iter().any(|l| l.uses_id(IdRemap::Material { from: material, to: material }))
    }

    /// Whether any cube or level air setting uses physics material `physics`.
    pub fn physics_material_in_use(&self, physics: PhysicsId) -> bool {
        self.levels.iter().any(|l| {
            l.air_physics_material == Some(physics) || l.uses_id(IdRemap::Physics { from: physics, to: physics })
        })
    }

    /// Whether any cube of any level has sound material `sound`.
    pub fn sound_material_in_use(&self, sound: SoundId) -> bool {
        self.levels.iter().any(|l| l.uses_id(IdRemap::Sound { from: sound, to: sound }))
    }

    /// Whether any region or default environment of any level uses `env`.
    pub fn environment_in_use(&self, env: EnvRef) -> bool {
        self.levels.iter().any(|l| l.objects.uses_environment(env) || l.environments.iter().any(|d| d == env))
    }

    /// Applies a cube remap to every level.
    fn remap_cubes<R>(&mut self, out: &mut MapRemoval<R>, remap: IdRemap) {
        for (i, level) in self.levels.iter_mut().enumerate() {
            let (backup, changes) = level.remap_ids(remap);
            if !changes.is_empty() {
                out.chunks.push((i, backup, changes));
            }
        }
    }

    /// Removes a material ([`Library::remove_material`]); its uses are the cubes of every level.
    /// With a replacement, those cubes are repainted with it.
    pub fn remove_material(
        &mut self,
        id: MaterialId,
        replacement: Option<MaterialId>,
    ) -> Result<MapRemoval<Removed<MaterialId>>, LibraryError> {
        let levels = &self.levels;
        let removed = self.library.remove_material(id, replacement, &|m| {
            levels.iter().any(|l| l.uses_id(IdRemap::Material { from: m, to: m }))
        })?;
        let mut out = MapRemoval::new(removed);
        if let Remap::Replace { from, to } = out.removed.remap {
            self.remap_cubes(&mut out, IdRemap::Material { from, to });
        }
        Ok(out)
    }

    /// Removes a physics material ([`Library::remove_physics`]); its uses are the cubes and the
    /// air physics setting of every level. With a replacement, both are re-pointed.
    pub fn remove_physics_material(
        &mut self,
        id: PhysicsId,
        replacement: Option<PhysicsId>,
    ) -> Result<MapRemoval<Removed<PhysicsId>>, LibraryError> {
        let levels = &self.levels;
        let removed = self.library.remove_physics(id, replacement, &|p| {
            levels.iter().any(|l| l.air_physics_material == Some(p) || l.uses_id(IdRemap::Physics { from: p, to: p }))
        })?;
        let mut out = MapRemoval::new(removed);
        if let Remap::Replace { from, to } = out.removed.remap {
            self.remap_cubes(&mut out, IdRemap::Physics { from, to });
            for (i, level) in self.levels.iter_mut().enumerate() {
                if level.air_physics_material == Some(from) {
                    level.air_physics_material = Some(to);
                    out.settings.push(i);
                }
            }
        }
        Ok(out)
    }

    /// Removes a sound material ([`Library::remove_sound`]); its uses are the cubes of every
    /// level.
    pub fn remove_sound_material(
        &mut self,
        id: SoundId,
        replacement: Option<SoundId>,
    ) -> Result<MapRemoval<Removed<SoundId>>, LibraryError> {
        let levels = &self.levels;
        let removed = self
            .library
            .remove_sound(id, replacement, &|m| levels.iter().any(|l| l.uses_id(IdRemap::Sound { from: m, to: m })))?;
        let mut out = MapRemoval::new(removed);
        if let Remap::Replace { from, to } = out.removed.remap {
            self.remap_cubes(&mut out, IdRemap::Sound { from, to });
        }
        Ok(out)
    }

    /// Removes an environment ([`Library::remove_environment`]); its uses are the regions and
    /// the default environments of every level. With a replacement, both are re-pointed.
    pub fn remove_environment(
        &mut self,
        env: EnvRef,
        replacement: Option<EnvRef>,
    ) -> Result<MapRemoval<RemovedEnvironment>, LibraryError> {
        let levels = &self.levels;
        let removed = self.library.remove_environment(env, replacement, &|e| {
            levels.iter().any(|l| l.objects.uses_environment(e) || l.environments.iter().any(|d| d == e))
        })?;
        let mut out = MapRemoval::new(removed);
        if let Remap::Replace { from, to } = out.removed.remap {
            for (i, level) in self.levels.iter_mut().enumerate() {
                let regions = level.objects.remap_environment(&out.removed.remap);
                if !regions.is_empty() {
                    out.regions.push((i, regions));
                }
                if level.environments.get(from.kind()) == Some(from) {
                    level.environments.set(to);
                    out.settings.push(i);
                }
            }
        }
        Ok(out)
    }

    /// Reverts a removal made by one of the wrappers above, on the map as the removal left it:
    /// the record is back under its id, library records, cubes, regions and level settings point
    /// at it again. Returns the chunk changes per level index.
    pub fn undo_removal<R: RemovalRecord>(
        &mut self,
        removal: &MapRemoval<R>,
    ) -> Result<Vec<(usize, ChunkChanges)>, MapError> {
        removal.removed.unremove(&mut self.library)?;
        let mut changes = Vec::new();
        for (i, backup, _) in &removal.chunks {
            let level = self.levels.get_mut(*i).ok_or(MapError::NoLevel(*i))?;
            changes.push((*i, level.restore(backup)?.1));
        }
        let (env, _) = removal.removed.level_remap();
        if let Some((from, _)) = env {
            for (i, regions) in &removal.regions {
                let level = self.levels.get_mut(*i).ok_or(MapError::NoLevel(*i))?;
                for &r in regions {
                    level.objects.modify(r, |region| region.environment = from)?;
                }
            }
        }
        for &i in &removal.settings {
            let level = self.levels.get_mut(i).ok_or(MapError::NoLevel(i))?;
            match removal.removed.level_remap() {
                (Some((from, _)), _) => level.environments.set(from),
                (_, Some(IdRemap::Physics { from, .. })) => level.air_physics_material = Some(from),
                _ => {}
            }
        }
        Ok(changes)
    }

    /// Everything wrong with the map: metadata, library, each level's settings and objects, and
    /// switchable-light global IDs shared across levels. Empty for a map changed only through
    /// checked operations; a loaded project may not be.
    pub fn validate(&self) -> Vec<MapProblem> {
        let mut out = Vec::new();
        let global = |problem| MapProblem { level: None, problem };
        if let Err(e) = self.meta.validate() {
            out.push(global(Problem::Metadata(e)));
        }
        if self.levels.is_empty() {
            out.push(global(Problem::NoLevels));
        }
        out.extend(self.library.validate().into_iter().map(global));
        for (i, level) in self.levels.iter().enumerate() {
            let problems = self
                .library
                .validate_level_settings(&level.environments, level.air_physics_material)
                .into_iter()
                .chain(level.objects.validate(&self.library));
            out.extend(problems.map(|problem| MapProblem { level: Some(i), problem }));
        }
        let objects: Vec<_> = self.levels.iter().map(|l| &l.objects).collect();
        out.extend(cross_level_global_ids(&objects).into_iter().map(global));
        out.sort_by_key(|p| p.problem.severity());
        out
    }

    /// Whether two maps have the same content: metadata, library records (by id), and per level
    /// its name, frame, settings, objects (by id) and cubes. Id counters, chunk generations and
    /// empty chunks (stored or not) are ignored, so a map after an undo equals the map before the
    /// edit.
    pub fn content_eq(&self, other: &Map) -> bool {
        self.meta == other.meta
            && self.path_sets == other.path_sets
            && self.library.content_eq(&other.library)
            && self.levels.len() == other.levels.len()
            && self.levels.iter().zip(&other.levels).all(|(a, b)| a.content_eq(b))
    }
}

/// Errors of [`Map`] operations that involve levels; the map is unchanged when one is returned
/// by a checked operation.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MapError {
    #[error("there is no level {0}")]
    NoLevel(usize),
    #[error("a map needs at least one level")]
    LastLevel,
    #[error(transparent)]
    Level(#[from] LevelError),
    #[error(transparent)]
    Library(#[from] LibraryError),
    #[error(transparent)]
    Meta(#[from] MetaError),
}

#[cfg(test)]
mod tests {
    use glam::{IVec3, Vec3};

    use super::*;
    use crate::map::coords::LatticeBox;
    use crate::map::library::{EnvironmentRegion, Material, PhysicsMaterial, SoundEnvId, SoundEnvironment};
    use crate::map::octree::Cube;

    /// A starter map with a second physics material "metal" (1) painted by material "iron" (1),
    /// a few cubes of each material in level 0, and a second level.
    fn map() -> Map {
        let mut map = Map::new("test");
        let metal = map.library.add(PhysicsMaterial::new("metal")).unwrap();
        let iron = map.library.add(Material::new("iron", metal, SoundId(0))).unwrap();
        let level = &mut map.levels[0];
        level
            .fill_box(
                LatticeBox::new(IVec3::ZERO, IVec3::new(40, 4, 40)),
                Cube::solid(MaterialId(0), PhysicsId(0), SoundId(0)),
            )
            .unwrap();
        level
            .fill_box(LatticeBox::new(IVec3::new(3, 1, 3), IVec3::new(9, 9, 9)), Cube::solid(iron, metal, SoundId(0)))
            .unwrap();
        map.levels.push(Level::new("second", 2).unwrap());
        map
    }

    #[test]
    fn physics_removal_counts_cubes_and_air_settings_and_undoes_exactly() {
        let mut map = map();
        let (default, metal) = (PhysicsId(0), PhysicsId(1));
        map.levels[1].air_physics_material = Some(metal);
        assert!(map.physics_material_in_use(metal));
        let before = map.clone();
        let err = map.remove_physics_material(metal, None).unwrap_err();
        assert!(matches!(err, LibraryError::InUse { .. }), "{err}");
        assert!(map.content_eq(&before));

        let removal = map.remove_physics_material(metal, Some(default)).unwrap();
        assert_eq!(removal.settings, vec![1]);
        assert_eq!(removal.chunks.len(), 1);
        assert_eq!(removal.chunks[0].0, 0);
        assert!(!map.physics_material_in_use(metal));
        assert_eq!(map.levels[1].air_physics_material, Some(default));
        assert_eq!(map.library.get(MaterialId(1)).unwrap().physics, default);
        assert_eq!(map.levels[0].get(IVec3::new(4, 4, 4)).unwrap().0, Cube::solid(MaterialId(1), default, SoundId(0)));
        assert_eq!(map.validate(), vec![]);

        let changes = map.undo_removal(&removal).unwrap();
        assert_eq!(changes.len(), 1);
        assert!(map.content_eq(&before));
        assert!(!map.content_eq(&Map::new("other")));
    }

    #[test]
    fn material_removal_repaints_cubes() {
        let mut map = map();
        let before = map.clone();
        assert!(map.material_in_use(MaterialId(1)));
        assert!(map.remove_material(MaterialId(1), None).is_err());
        let removal = map.remove_material(MaterialId(1), Some(MaterialId(0))).unwrap();
        assert!(!map.material_in_use(MaterialId(1)));
        assert!(removal.memory_bytes() > 0);
        map.undo_removal(&removal).unwrap();
        assert!(map.content_eq(&before));
        // Sound material 0 is used by the cubes and by both materials.
        assert!(map.sound_material_in_use(SoundId(0)));
        assert!(map.remove_sound_material(SoundId(0), None).is_err());
    }

    #[test]
    fn environment_removal_counts_level_defaults_and_regions() {
        let mut map = map();
        let cave = map.library.add(SoundEnvironment { name: "cave".into(), ..Default::default() }).unwrap();
        let hall = map.library.add(SoundEnvironment { name: "hall".into(), ..Default::default() }).unwrap();
        map.levels[1].environments.set(cave.into());
        let r = map.levels[0].objects.add(EnvironmentRegion::from_box(hall.into(), Vec3::ZERO, Vec3::ONE)).unwrap();
        let before = map.clone();

        let err = map.remove_environment(cave.into(), None).unwrap_err();
        assert!(err.to_string().contains("level defaults"), "{err}");
        let removal = map.remove_environment(cave.into(), Some(hall.into())).unwrap();
        assert_eq!(removal.settings, vec![1]);
        assert!(removal.regions.is_empty());
        assert_eq!(map.levels[1].environments.sound, Some(hall));
        map.undo_removal(&removal).unwrap();
        assert!(map.content_eq(&before));

        let removal = map.remove_environment(hall.into(), Some(cave.into())).unwrap();
        assert_eq!(removal.regions, vec![(0, vec![r])]);
        assert_eq!(map.levels[0].objects.get(r).unwrap().environment, EnvRef::Sound(cave));
        map.undo_removal(&removal).unwrap();
        assert!(map.content_eq(&before));
    }

    #[test]
    fn validate_combines_metadata_library_and_levels() {
        let mut map = map();
        assert_eq!(map.validate(), vec![]);
        map.levels[1].air_physics_material = Some(PhysicsId(77));
        map.levels[0].environments.set(EnvRef::Sound(SoundEnvId(5)));
        map.meta.gamemodes = vec![String::new()];
        let problems = map.validate();
        assert_eq!(problems.len(), 3, "{problems:#?}");
        assert!(problems.contains(&MapProblem { level: None, problem: Problem::Metadata(MetaError::GamemodeEmpty) }));
        assert!(
            problems.contains(&MapProblem {
                level: Some(1),
                problem: Problem::MissingAirPhysics { physics: PhysicsId(77) }
            })
        );
        assert!(problems.contains(&MapProblem {
            level: Some(0),
            problem: Problem::MissingDefaultEnvironment { env: EnvRef::Sound(SoundEnvId(5)) }
        }));
    }
}
