//! [`LevelObjects`]: a level's lights, entities, environment regions and load regions, and their
//! checks against the library ([`LevelObjects::validate`]).

use std::collections::BTreeMap;
use std::fmt;

use self::sealed::Access as _;
use super::entity::MapEntity;
use super::environment::EnvRef;
use super::error::{ItemKind, LibraryError, LibraryResult};
use super::ids::{EntityId, LightId, LoadRegionId, RegionId, TableId};
use super::light::{Light, LightMode};
use super::region::{EnvironmentRegion, LoadRegion};
use super::store::{Library, Remap};
use super::table::{Named, Table};
use super::validate::Problem;

/// A record kind kept in [`LevelObjects`].
pub trait SceneItem: Named + Clone + fmt::Debug + PartialEq + sealed::Access {
    /// Its id.
    type Id: SceneId<Item = Self>;
}

/// The id of a [`SceneItem`] kind, so that `objects.get(id)` knows the record type.
pub trait SceneId: TableId {
    /// The record kind.
    type Item: SceneItem<Id = Self>;
}

mod sealed {
    //! Table access, callable only inside `library`.
    use super::{LevelObjects, SceneItem, Table};
    use crate::map::library::LibraryResult;

    /// Implemented by every [`SceneItem`].
    pub trait Access: Sized {
        /// The kind's table.
        fn table(objects: &LevelObjects) -> &Table<<Self as SceneItem>::Id, Self>
        where
            Self: SceneItem;
        /// The kind's table, mutably.
        fn table_mut(objects: &mut LevelObjects) -> &mut Table<<Self as SceneItem>::Id, Self>
        where
            Self: SceneItem;
        /// Field checks.
        fn check_item(&self) -> LibraryResult<()>;
        /// Adjusts a copy made by [`LevelObjects::duplicate`] (fresh global IDs for lights).
        fn on_duplicate(&mut self, _objects: &LevelObjects) {}
    }
}

macro_rules! scene_item {
    ($ty:ty, $id:ty, $field:ident) => {
        impl SceneItem for $ty {
            type Id = $id;
        }
        impl SceneId for $id {
            type Item = $ty;
        }
    };
    ($ty:ty, $id:ty, $field:ident, default_access) => {
        scene_item!($ty, $id, $field);
        impl sealed::Access for $ty {
            fn table(objects: &LevelObjects) -> &Table<$id, Self> {
                &objects.$field
            }
            fn table_mut(objects: &mut LevelObjects) -> &mut Table<$id, Self> {
                &mut objects.$field
            }
            fn check_item(&self) -> LibraryResult<()> {
                self.check()
            }
        }
    };
}

scene_item!(Light, LightId, lights);
scene_item!(MapEntity, EntityId, entities, default_access);
scene_item!(EnvironmentRegion, RegionId, regions, default_access);
scene_item!(LoadRegion, LoadRegionId, load_regions, default_access);

impl sealed::Access for Light {
    fn table(objects: &LevelObjects) -> &Table<LightId, Self> {
        &objects.lights
    }
    fn table_mut(objects: &mut LevelObjects) -> &mut Table<LightId, Self> {
        &mut objects.lights
    }
    fn check_item(&self) -> LibraryResult<()> {
        self.check()
    }
    fn on_duplicate(&mut self, objects: &LevelObjects) {
        if let LightMode::Dynamic { global_id, .. } | LightMode::Fast { global_id, .. } = &mut self.mode {
            *global_id = objects.unused_global_id();
        }
    }
}

/// The objects of one level. Names need not be unique (entities are addressed by name, so
/// duplicates are reported as warnings by [`validate`](Self::validate)); references to the library
/// are checked by `validate`, not on every change, since the library changes separately.
///
/// Serialised (serde) into the project manifest, `map.ron`.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct LevelObjects {
    lights: Table<LightId, Light>,
    entities: Table<EntityId, MapEntity>,
    regions: Table<RegionId, EnvironmentRegion>,
    load_regions: Table<LoadRegionId, LoadRegion>,
}

impl LevelObjects {
    /// No objects.
    pub fn new() -> Self {
        Self::default()
    }

    /// Lights.
    pub fn lights(&self) -> &Table<LightId, Light> {
        &self.lights
    }
    /// Entities.
    pub fn entities(&self) -> &Table<EntityId, MapEntity> {
        &self.entities
    }
    /// Environment regions.
    pub fn regions(&self) -> &Table<RegionId, EnvironmentRegion> {
        &self.regions
    }
    /// Load regions.
    pub fn load_regions(&self) -> &Table<LoadRegionId, LoadRegion> {
        &self.load_regions
    }

    /// The table of a kind, e.g. `objects.table::<Light>()`.
    pub fn table<T: SceneItem>(&self) -> &Table<T::Id, T> {
        T::table(self)
    }

    /// The object with this id.
    pub fn get<I: SceneId>(&self, id: I) -> Option<&I::Item> {
        <I::Item as sealed::Access>::table(self).get(id)
    }

    fn not_found<I: TableId>(id: I) -> LibraryError {
        LibraryError::NotFound { kind: I::KIND, id: id.raw() }
    }

    /// Adds an object (fields checked: finite numbers, NUL-free text).
    pub fn add<T: SceneItem>(&mut self, item: T) -> LibraryResult<T::Id> {
        item.check_item()?;
        let max = T::Id::MAX as usize;
        T::table_mut(self).insert_new(item).ok_or(LibraryError::Full { kind: T::Id::KIND, max })
    }

    /// Adds a copy of an object (same name; a switchable light gets an unused global ID).
    pub fn duplicate<I: SceneId>(&mut self, id: I) -> LibraryResult<I> {
        let mut item = self.get(id).ok_or_else(|| Self::not_found(id))?.clone();
        item.on_duplicate(self);
        self.add(item)
    }

    /// Replaces an object by a new value; returns the old one.
    pub fn replace<I: SceneId>(&mut self, id: I, item: I::Item) -> LibraryResult<I::Item> {
        if self.get(id).is_none() {
            return Err(Self::not_found(id));
        }
        item.check_item()?;
        let slot = <I::Item as sealed::Access>::table_mut(self).get_mut(id).expect("checked above");
        Ok(std::mem::replace(slot, item))
    }

    /// Changes an object in place; left unchanged if the result fails the checks.
    pub fn modify<I: SceneId, R>(&mut self, id: I, f: impl FnOnce(&mut I::Item) -> R) -> LibraryResult<R> {
        let mut item = self.get(id).ok_or_else(|| Self::not_found(id))?.clone();
        let r = f(&mut item);
        self.replace(id, item)?;
        Ok(r)
    }

    /// Removes an object. Nothing in the map refers to lights, regions or entities by id, so this
    /// cannot be refused for being in use (entities refer to each other by name: see
    /// [`validate`](Self::validate)).
    pub fn remove<I: SceneId>(&mut self, id: I) -> LibraryResult<I::Item> {
        <I::Item as sealed::Access>::table_mut(self).remove(id).ok_or_else(|| Self::not_found(id))
    }

    /// Puts a removed object back under its old id (undo).
    pub fn restore<I: SceneId>(&mut self, id: I, item: I::Item) -> LibraryResult<()> {
        if self.get(id).is_some() {
            return Err(LibraryError::IdTaken { kind: I::KIND, id: id.raw() });
        }
        item.check_item()?;
        <I::Item as sealed::Access>::table_mut(self).insert_at(id, item);
        Ok(())
    }

    /// Regions that use `env`.
    pub fn regions_using(&self, env: EnvRef) -> Vec<RegionId> {
        self.regions.iter().filter(|(_, r)| r.environment == env).map(|(id, _)| id).collect()
    }

    /// Whether a region uses `env` (the `used_by_regions` of
    /// [`Library::remove_environment`], or'ed over the levels).
    pub fn uses_environment(&self, env: EnvRef) -> bool {
        self.regions.iter().any(|(_, r)| r.environment == env)
    }

    /// Applies a removal's [`Remap`] to the regions; returns the regions changed.
    pub fn remap_environment(&mut self, remap: &Remap<EnvRef>) -> Vec<RegionId> {
        let mut changed = Vec::new();
        for (id, r) in self.regions.iter_mut() {
            let new = remap.apply(r.environment);
            if new != r.environment {
                r.environment = new;
                changed.push(id);
            }
        }
        changed
    }

    /// Lights with this global ID (dynamic or fast).
    pub fn lights_with_global_id(&self, global_id: u32) -> Vec<LightId> {
        self.lights
            .iter()
            .filter(|(_, l)| l.mode.switch().is_some_and(|(_, g)| g == global_id))
            .map(|(id, _)| id)
            .collect()
    }

    /// A global ID no light of this level uses: one past the largest in use (so that controllers
    /// of a deleted light do not silently drive a new one), or the smallest free one if that
    /// overflows.
    pub fn unused_global_id(&self) -> u32 {
        let used: Vec<u32> = self.lights.iter().filter_map(|(_, l)| Some(l.mode.switch()?.1)).collect();
        match used.iter().max() {
            None => 0,
            Some(&max) if max < u32::MAX => max + 1,
            Some(_) => (0..=u32::MAX).find(|g| !used.contains(g)).unwrap_or(0),
        }
    }

    /// Global IDs in use, with their lights.
    fn global_ids(&self) -> BTreeMap<u32, Vec<LightId>> {
        let mut out: BTreeMap<u32, Vec<LightId>> = BTreeMap::new();
        for (id, l) in self.lights.iter() {
            if let Some((_, g)) = l.mode.switch() {
                out.entry(g).or_default().push(id);
            }
        }
        out
    }

    /// Everything wrong with the level's objects given the map's library: invalid objects, regions
    /// whose environment is missing, switchable lights sharing a global ID, controllers with no
    /// light, entity names shared (warning) and material names entities use that the library
    /// lacks (warning). Sorted errors first.
    pub fn validate(&self, lib: &Library) -> Vec<Problem> {
        let mut out = Vec::new();
        for (id, l) in self.lights().iter() {
            if let Err(e) = l.check() {
                out.push(invalid(id, e));
            }
        }
        for (id, e) in self.entities().iter() {
            if let Err(err) = e.check() {
                out.push(invalid(id, err));
            }
        }
        for (id, r) in self.regions().iter() {
            if let Err(e) = r.check() {
                out.push(invalid(id, e));
            }
            if !lib.contains_environment(r.environment) {
                out.push(Problem::MissingEnvironment { region: id, env: r.environment });
            }
        }
        for (id, r) in self.load_regions().iter() {
            if let Err(e) = r.check() {
                out.push(invalid(id, e));
            }
        }

        for (global_id, lights) in self.global_ids() {
            if lights.len() > 1 {
                out.push(Problem::DuplicateGlobalId { global_id, lights });
            }
        }

        for (id, e) in self.entities().iter() {
            self.check_controller(id, e, &mut out);
            for (field, name) in e.material_refs() {
                if lib.materials().id_of(name).is_none() {
                    out.push(Problem::UnknownMaterialName {
                        entity: id,
                        field,
                        kind: ItemKind::Material,
                        name: name.to_owned(),
                    });
                }
            }
            for (field, name) in e.physics_refs() {
                if lib.physics_materials().id_of(name).is_none() {
                    out.push(Problem::UnknownMaterialName {
                        entity: id,
                        field,
                        kind: ItemKind::PhysicsMaterial,
                        name: name.to_owned(),
                    });
                }
            }
        }

        let mut names: BTreeMap<&str, (Vec<EntityId>, Vec<LightId>)> = BTreeMap::new();
        for (id, e) in self.entities().iter() {
            if !e.entity.name.is_empty() {
                names.entry(&e.entity.name).or_default().0.push(id);
            }
        }
        for (id, l) in self.lights().iter() {
            if matches!(l.mode, LightMode::Realtime(_)) && !l.name.is_empty() {
                names.entry(&l.name).or_default().1.push(id);
            }
        }
        for (name, (entities, lights)) in names {
            if entities.len() + lights.len() > 1 {
                out.push(Problem::SharedEntityName { name: name.to_owned(), entities, lights });
            }
        }

        out.sort_by_key(Problem::severity);
        out
    }

    /// A light controller drives a global ID no light of its kind has (warning).
    fn check_controller(&self, id: EntityId, e: &MapEntity, out: &mut Vec<Problem>) {
        let Some(target) = e.light_switch() else { return };
        let found = self.lights.iter().any(|(_, l)| l.mode.switch() == Some((target.kind, target.global_id)));
        if !found {
            out.push(Problem::ControllerWithoutLight { entity: id, kind: target.kind, global_id: target.global_id });
        }
    }
}

/// Global IDs used by switchable lights of more than one level (map-wide uniqueness; duplicates
/// inside one level are reported by [`LevelObjects::validate`]). Levels are given by index.
pub fn cross_level_global_ids(levels: &[&LevelObjects]) -> Vec<Problem> {
    let mut by_id: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (i, level) in levels.iter().enumerate() {
        for g in level.global_ids().into_keys() {
            by_id.entry(g).or_default().push(i);
        }
    }
    by_id
        .into_iter()
        .filter(|(_, levels)| levels.len() > 1)
        .map(|(global_id, levels)| Problem::GlobalIdAcrossLevels { global_id, levels })
        .collect()
}

/// A record that fails its own checks.
fn invalid<I: TableId>(id: I, error: LibraryError) -> Problem {
    Problem::Invalid { kind: I::KIND, id: id.raw(), error }
}
