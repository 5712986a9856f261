//! [`Library`]: the map-wide tables of materials, physics and sound materials and environments,
//! the [`LibraryItem`] kinds it keeps, and what removing a record hands back.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::environment::{
    EnvRef, Environment, GravityEnvironment, SkyEnvironment, SkySlot, SoundEnvironment, WeatherEnvironment,
};
use super::error::{Checker, ItemKind, LibraryError, LibraryResult};
use super::ids::{GravityEnvId, MaterialId, PhysicsId, SkyEnvId, SoundEnvId, SoundId, TableId, WeatherEnvId};
use super::material::{Material, PhysicsMaterial, SoundMaterial};
use super::table::{Named, Table};

/// A record kind kept in a [`Library`].
pub trait LibraryItem: Named + Clone + fmt::Debug + PartialEq + sealed::Access {
    /// Its id.
    type Id: LibraryId<Item = Self>;
    /// Most records of this kind a map can hold (PMF counts).
    const MAX_COUNT: usize;
    /// Checks the fields other than the name and references: finite numbers, NUL-free text, PMF
    /// limits.
    fn check(&self) -> LibraryResult<()>;
}

/// The id of a [`LibraryItem`] kind, so that `library.get(id)` knows the record type.
pub trait LibraryId: TableId {
    /// The record kind.
    type Item: LibraryItem<Id = Self>;
}

impl LibraryId for MaterialId {
    type Item = Material;
}
impl LibraryId for PhysicsId {
    type Item = PhysicsMaterial;
}
impl LibraryId for SoundId {
    type Item = SoundMaterial;
}
impl LibraryId for SoundEnvId {
    type Item = SoundEnvironment;
}
impl LibraryId for WeatherEnvId {
    type Item = WeatherEnvironment;
}
impl LibraryId for SkyEnvId {
    type Item = SkyEnvironment;
}
impl LibraryId for GravityEnvId {
    type Item = GravityEnvironment;
}

pub(super) mod sealed {
    //! Table access and cross-references, callable only inside `library`.
    use super::{Library, LibraryItem, LibraryResult, Referrer, Table};

    /// Implemented by every [`LibraryItem`]; not nameable outside, so its methods cannot be called
    /// there.
    pub trait Access: Sized {
        /// Who can use records of this kind outside the library, in words.
        const OUTSIDE_USERS: &'static str;
        /// The kind's table.
        fn table(lib: &Library) -> &Table<<Self as LibraryItem>::Id, Self>
        where
            Self: LibraryItem;
        /// The kind's table, mutably.
        fn table_mut(lib: &mut Library) -> &mut Table<<Self as LibraryItem>::Id, Self>
        where
            Self: LibraryItem;
        /// The record's references to other library records exist.
        fn check_refs(&self, _lib: &Library) -> LibraryResult<()> {
            Ok(())
        }
        /// Library records that refer to `id`.
        fn referrers(lib: &Library, id: <Self as LibraryItem>::Id) -> Vec<Referrer>
        where
            Self: LibraryItem;
        /// Re-points the references to `from` at `to`; returns what changed.
        fn relink(lib: &mut Library, from: <Self as LibraryItem>::Id, to: <Self as LibraryItem>::Id) -> Vec<Referrer>
        where
            Self: LibraryItem;
    }
}

/// A library record (or setting) that refers to another library record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Referrer {
    /// A material (its default physics or sound material).
    Material(MaterialId),
    /// A slot of a sky environment.
    Sky(SkyEnvId, SkySlot),
}

/// What the caller must do to data outside the library after a removal: nothing, or replace every
/// use of `from` with `to` (in the chunks for materials, in the regions for environments).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Remap<I> {
    /// Nothing outside used the removed record.
    Nothing,
    /// Replace `from` with `to` everywhere outside the library.
    Replace {
        /// The removed record.
        from: I,
        /// Its replacement.
        to: I,
    },
}

impl<I: Copy + PartialEq> Remap<I> {
    /// What `id` becomes.
    pub fn apply(&self, id: I) -> I {
        match *self {
            Self::Replace { from, to } if id == from => to,
            _ => id,
        }
    }
}

/// A removed library record, and what the removal changed or asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct Removed<I: LibraryId> {
    /// Its id (never handed out again; [`Library::restore`] puts it back).
    pub id: I,
    /// The record.
    pub item: I::Item,
    /// What the caller must apply outside the library.
    pub remap: Remap<I>,
    /// Library records re-pointed at the replacement.
    pub relinked: Vec<Referrer>,
}

/// A removed environment (see [`Library::remove_environment`]).
#[derive(Debug, Clone, PartialEq)]
pub struct RemovedEnvironment {
    /// Its reference.
    pub env: EnvRef,
    /// The record.
    pub item: Environment,
    /// What the caller must apply to every level: its regions
    /// ([`LevelObjects::remap_environment`]) and its default environments.
    pub remap: Remap<EnvRef>,
    /// Library records re-pointed at the replacement (none today: nothing in the library refers
    /// to an environment).
    pub relinked: Vec<Referrer>,
}

/// The map-wide libraries and environments. See the module docs.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Library {
    pub(super) materials: Table<MaterialId, Material>,
    pub(super) physics: Table<PhysicsId, PhysicsMaterial>,
    pub(super) sounds: Table<SoundId, SoundMaterial>,
    pub(super) sound_envs: Table<SoundEnvId, SoundEnvironment>,
    pub(super) weather_envs: Table<WeatherEnvId, WeatherEnvironment>,
    pub(super) sky_envs: Table<SkyEnvId, SkyEnvironment>,
    pub(super) gravity_envs: Table<GravityEnvId, GravityEnvironment>,
}

impl Library {
    /// An empty library.
    pub fn new() -> Self {
        Self::default()
    }

    /// What a new map starts with: physics material `"default"`, sound material `"default"` and
    /// material `"default"` painting them (ids 0).
    pub fn starter() -> Self {
        let mut lib = Self::new();
        let physics = lib.add(PhysicsMaterial::new("default")).expect("empty library");
        let sound = lib.add(SoundMaterial::new("default")).expect("empty library");
        lib.add(Material::new("default", physics, sound)).expect("references exist");
        lib
    }

    /// Materials.
    pub fn materials(&self) -> &Table<MaterialId, Material> {
        &self.materials
    }
    /// Physics materials.
    pub fn physics_materials(&self) -> &Table<PhysicsId, PhysicsMaterial> {
        &self.physics
    }
    /// Sound materials.
    pub fn sound_materials(&self) -> &Table<SoundId, SoundMaterial> {
        &self.sounds
    }
    /// Sound environments.
    pub fn sound_environments(&self) -> &Table<SoundEnvId, SoundEnvironment> {
        &self.sound_envs
    }
    /// Weather environments.
    pub fn weather_environments(&self) -> &Table<WeatherEnvId, WeatherEnvironment> {
        &self.weather_envs
    }
    /// Sky environments.
    pub fn sky_environments(&self) -> &Table<SkyEnvId, SkyEnvironment> {
        &self.sky_envs
    }
    /// Gravity environments.
    pub fn gravity_environments(&self) -> &Table<GravityEnvId, GravityEnvironment> {
        &self.gravity_envs
    }

    /// The table of a kind, e.g. `lib.table::<Material>()`.
    pub fn table<T: LibraryItem>(&self) -> &Table<T::Id, T> {
        T::table(self)
    }

    /// The record with this id.
    pub fn get<I: LibraryId>(&self, id: I) -> Option<&I::Item> {
        <I::Item as sealed::Access>::table(self).get(id)
    }

    /// Whether the environment exists.
    pub fn contains_environment(&self, env: EnvRef) -> bool {
        self.environment_name(env).is_some()
    }

    /// The name of an environment of any kind.
    pub fn environment_name(&self, env: EnvRef) -> Option<&str> {
        match env {
            EnvRef::Sound(i) => self.sound_envs.get(i).map(|e| e.name.as_str()),
            EnvRef::Weather(i) => self.weather_envs.get(i).map(|e| e.name.as_str()),
            EnvRef::Sky(i) => self.sky_envs.get(i).map(|e| e.name.as_str()),
            EnvRef::Gravity(i) => self.gravity_envs.get(i).map(|e| e.name.as_str()),
        }
    }

    /// Checks everything about `item` as record `except` (or a new record): name, fields,
    /// references.
    fn check_item<T: LibraryItem>(&self, item: &T, except: Option<T::Id>) -> LibraryResult<()> {
        let kind = T::Id::KIND;
        let name = item.name();
        if name.is_empty() {
            return Err(LibraryError::EmptyName { kind });
        }
        Checker { kind, name }.text("name", name)?;
        if T::table(self).name_taken(name, except) {
            return Err(LibraryError::DuplicateName { kind, name: name.to_owned() });
        }
        item.check()?;
        item.check_refs(self)
    }

    fn not_found<I: TableId>(id: I) -> LibraryError {
        LibraryError::NotFound { kind: I::KIND, id: id.raw() }
    }

    fn insert<T: LibraryItem>(&mut self, item: T) -> LibraryResult<T::Id> {
        if T::table(self).len() >= T::MAX_COUNT {
            return Err(LibraryError::Full { kind: T::Id::KIND, max: T::MAX_COUNT });
        }
        T::table_mut(self).insert_new(item).ok_or(LibraryError::Full { kind: T::Id::KIND, max: T::MAX_COUNT })
    }

    /// Adds a record; refuses a name another record of its kind has.
    pub fn add<T: LibraryItem>(&mut self, item: T) -> LibraryResult<T::Id> {
        self.check_item(&item, None)?;
        self.insert(item)
    }

    /// Adds a record, renaming it `name 2`, `name 3`, … if its name is taken. The name must still
    /// be valid (non-empty, no NUL).
    pub fn add_unique<T: LibraryItem>(&mut self, mut item: T) -> LibraryResult<T::Id> {
        let name = T::table(self).unique_name(item.name());
        item.set_name(name);
        self.add(item)
    }

    /// Adds a copy of a record under a unique name derived from its own (`stone` → `stone 2`).
    pub fn duplicate<I: LibraryId>(&mut self, id: I) -> LibraryResult<I> {
        let item = self.get(id).ok_or_else(|| Self::not_found(id))?.clone();
        self.add_unique(item)
    }

    /// Renames a record; refuses an empty, NUL-holding or taken name. Returns the old name.
    pub fn rename<I: LibraryId>(&mut self, id: I, name: impl Into<String>) -> LibraryResult<String> {
        let name = name.into();
        self.modify(id, |item| {
            let old = item.name().to_owned();
            item.set_name(name);
            old
        })
    }

    /// Replaces a record by a new value (an inspector form's "apply"); checked like
    /// [`add`](Self::add). Returns the old value.
    pub fn replace<I: LibraryId>(&mut self, id: I, item: I::Item) -> LibraryResult<I::Item> {
        let old = self.get(id).ok_or_else(|| Self::not_found(id))?;
        if *old == item {
            return Ok(item);
        }
        self.check_item(&item, Some(id))?;
        let slot = <I::Item as sealed::Access>::table_mut(self).get_mut(id).expect("checked above");
        Ok(std::mem::replace(slot, item))
    }

    /// Changes a record in place; if the result fails the checks of [`replace`](Self::replace) the
    /// record is left as it was and the error returned.
    pub fn modify<I: LibraryId, R>(&mut self, id: I, f: impl FnOnce(&mut I::Item) -> R) -> LibraryResult<R> {
        let mut item = self.get(id).ok_or_else(|| Self::not_found(id))?.clone();
        let r = f(&mut item);
        self.replace(id, item)?;
        Ok(r)
    }

    /// Puts a removed record back under its old id (undo of a removal); checked like
    /// [`add`](Self::add).
    pub fn restore<I: LibraryId>(&mut self, id: I, item: I::Item) -> LibraryResult<()> {
        if self.get(id).is_some() {
            return Err(LibraryError::IdTaken { kind: I::KIND, id: id.raw() });
        }
        if id.raw() > I::MAX {
            return Err(Self::not_found(id));
        }
        if <I::Item as sealed::Access>::table(self).len() >= I::Item::MAX_COUNT {
            return Err(LibraryError::Full { kind: I::KIND, max: I::Item::MAX_COUNT });
        }
        self.check_item(&item, None)?;
        <I::Item as sealed::Access>::table_mut(self).insert_at(id, item);
        Ok(())
    }

    /// Library records and settings that refer to `id`.
    pub fn referrers<I: LibraryId>(&self, id: I) -> Vec<Referrer> {
        <I::Item as sealed::Access>::referrers(self, id)
    }

    /// Describes a referrer in words: `material "stone"`, `sky environment "day" (+X skybox)`, …
    pub fn describe(&self, r: &Referrer) -> String {
        match *r {
            Referrer::Material(id) => match self.materials.get(id) {
                Some(m) => format!("material {:?}", m.name),
                None => format!("material {id}"),
            },
            Referrer::Sky(id, slot) => match self.sky_envs.get(id) {
                Some(s) => format!("sky environment {:?} ({})", s.name, slot.label()),
                None => format!("sky environment {id} ({})", slot.label()),
            },
        }
    }

    /// Removes a record.
    ///
    /// `used_outside(id)` tells whether data outside the library uses it (cubes for materials,
    /// regions for environments). If it is used there or by library records and `replacement` is
    /// `None`, nothing changes and [`LibraryError::InUse`] lists the users. With a replacement,
    /// library records are re-pointed at it here and the returned [`Remap`] says what the caller
    /// must re-point outside. A replacement must exist and differ from `id`.
    pub fn remove<I: LibraryId>(
        &mut self,
        id: I,
        replacement: Option<I>,
        used_outside: &dyn Fn(I) -> bool,
    ) -> LibraryResult<Removed<I>> {
        let name = self.get(id).ok_or_else(|| Self::not_found(id))?.name().to_owned();
        if let Some(r) = replacement {
            let bad = |reason: &str| LibraryError::BadReplacement {
                kind: I::KIND,
                name: name.clone(),
                reason: reason.to_owned(),
            };
            if r == id {
                return Err(bad("the replacement is the record itself"));
            }
            if self.get(r).is_none() {
                return Err(bad(&format!("the replacement {} {r} does not exist", I::KIND)));
            }
        }
        let internal = self.referrers(id);
        let outside = used_outside(id);
        let Some(to) = replacement else {
            if outside || !internal.is_empty() {
                let mut users: Vec<String> = internal.iter().map(|r| self.describe(r)).collect();
                if outside {
                    users.push(<I::Item as sealed::Access>::OUTSIDE_USERS.to_owned());
                }
                return Err(LibraryError::InUse { kind: I::KIND, name, users });
            }
            let item = <I::Item as sealed::Access>::table_mut(self).remove(id).expect("exists");
            return Ok(Removed { id, item, remap: Remap::Nothing, relinked: Vec::new() });
        };
        let relinked = <I::Item as sealed::Access>::relink(self, id, to);
        let item = <I::Item as sealed::Access>::table_mut(self).remove(id).expect("exists");
        let remap = if outside { Remap::Replace { from: id, to } } else { Remap::Nothing };
        Ok(Removed { id, item, remap, relinked })
    }

    /// [`remove`](Self::remove) for a material; `used_in_chunks` asks the octree.
    pub fn remove_material(
        &mut self,
        id: MaterialId,
        replacement: Option<MaterialId>,
        used_in_chunks: &dyn Fn(MaterialId) -> bool,
    ) -> LibraryResult<Removed<MaterialId>> {
        self.remove(id, replacement, used_in_chunks)
    }

    /// [`remove`](Self::remove) for a physics material; materials' defaults are re-pointed here.
    /// `used_in_chunks` should also count the levels' air physics setting (see
    /// [`Map::remove_physics_material`](crate::map::Map::remove_physics_material)).
    pub fn remove_physics(
        &mut self,
        id: PhysicsId,
        replacement: Option<PhysicsId>,
        used_in_chunks: &dyn Fn(PhysicsId) -> bool,
    ) -> LibraryResult<Removed<PhysicsId>> {
        self.remove(id, replacement, used_in_chunks)
    }

    /// [`remove`](Self::remove) for a sound material; materials' defaults are re-pointed here.
    pub fn remove_sound(
        &mut self,
        id: SoundId,
        replacement: Option<SoundId>,
        used_in_chunks: &dyn Fn(SoundId) -> bool,
    ) -> LibraryResult<Removed<SoundId>> {
        self.remove(id, replacement, used_in_chunks)
    }

    /// [`remove`](Self::remove) for an environment of any kind. `used_by_regions` asks every
    /// level: its regions ([`LevelObjects::uses_environment`]) and its default environments (see
    /// [`Map::remove_environment`](crate::map::Map::remove_environment)). The replacement must be
    /// of the same kind.
    pub fn remove_environment(
        &mut self,
        env: EnvRef,
        replacement: Option<EnvRef>,
        used_by_regions: &dyn Fn(EnvRef) -> bool,
    ) -> LibraryResult<RemovedEnvironment> {
        if let Some(r) = replacement
            && r.kind() != env.kind()
        {
            return Err(LibraryError::BadReplacement {
                kind: env.kind().item_kind(),
                name: self.environment_name(env).unwrap_or_default().to_owned(),
                reason: format!("the replacement is a {} environment", r.kind()),
            });
        }
        macro_rules! remove_kind {
            ($variant:ident, $id:expr) => {{
                let rep = replacement.map(|r| match r {
                    EnvRef::$variant(i) => i,
                    _ => unreachable!("kinds checked above"),
                });
                let removed = self.remove($id, rep, &|i| used_by_regions(EnvRef::$variant(i)))?;
                RemovedEnvironment {
                    env,
                    item: Environment::$variant(removed.item),
                    remap: match removed.remap {
                        Remap::Nothing => Remap::Nothing,
                        Remap::Replace { from, to } => {
                            Remap::Replace { from: EnvRef::$variant(from), to: EnvRef::$variant(to) }
                        }
                    },
                    relinked: removed.relinked,
                }
            }};
        }
        Ok(match env {
            EnvRef::Sound(i) => remove_kind!(Sound, i),
            EnvRef::Weather(i) => remove_kind!(Weather, i),
            EnvRef::Sky(i) => remove_kind!(Sky, i),
            EnvRef::Gravity(i) => remove_kind!(Gravity, i),
        })
    }

    /// Undoes a [`remove`](Self::remove): puts the record back under its id and points the
    /// library records it relinked back at it. The caller undoes the outside [`Remap`].
    pub fn unremove<I: LibraryId>(&mut self, removed: &Removed<I>) -> LibraryResult<()> {
        self.restore(removed.id, removed.item.clone())?;
        for r in &removed.relinked {
            self.point_back(*r, I::KIND, removed.id.raw());
        }
        Ok(())
    }

    /// Points referrer `r` back at record `raw` of kind `kind` (undo of a relink).
    fn point_back(&mut self, r: Referrer, kind: ItemKind, raw: u32) {
        match (r, kind) {
            (Referrer::Material(mid), ItemKind::PhysicsMaterial) => {
                if let Some(m) = self.materials.get_mut(mid) {
                    m.physics = PhysicsId::from_raw(raw);
                }
            }
            (Referrer::Material(mid), ItemKind::SoundMaterial) => {
                if let Some(m) = self.materials.get_mut(mid) {
                    m.sound = SoundId::from_raw(raw);
                }
            }
            (Referrer::Sky(sky, slot), ItemKind::Material) => {
                if let Some(e) = self.sky_envs.get_mut(sky) {
                    *e.slot_mut(slot) = Some(MaterialId::from_raw(raw));
                }
            }
            _ => {}
        }
    }

    /// Removes a record without any check and returns it: the undo of an add, when nothing can
    /// refer to the record yet. Elsewhere use [`remove`](Self::remove), which keeps references
    /// valid.
    pub(crate) fn take<I: LibraryId>(&mut self, id: I) -> Option<I::Item> {
        <I::Item as sealed::Access>::table_mut(self).remove(id)
    }

    /// A copy of an environment of any kind.
    pub fn environment(&self, env: EnvRef) -> Option<Environment> {
        Some(match env {
            EnvRef::Sound(i) => Environment::Sound(self.sound_envs.get(i)?.clone()),
            EnvRef::Weather(i) => Environment::Weather(self.weather_envs.get(i)?.clone()),
            EnvRef::Sky(i) => Environment::Sky(self.sky_envs.get(i)?.clone()),
            EnvRef::Gravity(i) => Environment::Gravity(self.gravity_envs.get(i)?.clone()),
        })
    }

    /// [`add`](Self::add) for an environment of any kind.
    pub fn add_environment(&mut self, item: Environment) -> LibraryResult<EnvRef> {
        Ok(match item {
            Environment::Sound(e) => EnvRef::Sound(self.add(e)?),
            Environment::Weather(e) => EnvRef::Weather(self.add(e)?),
            Environment::Sky(e) => EnvRef::Sky(self.add(e)?),
            Environment::Gravity(e) => EnvRef::Gravity(self.add(e)?),
        })
    }

    fn env_kind_mismatch(&self, env: EnvRef, item: &Environment) -> LibraryError {
        LibraryError::BadReplacement {
            kind: env.kind().item_kind(),
            name: self.environment_name(env).unwrap_or_default().to_owned(),
            reason: format!("the new value is a {} environment", item.kind()),
        }
    }

    /// [`replace`](Self::replace) for an environment of any kind; `item` must be of `env`'s kind.
    pub fn replace_environment(&mut self, env: EnvRef, item: Environment) -> LibraryResult<Environment> {
        Ok(match (env, item) {
            (EnvRef::Sound(i), Environment::Sound(e)) => Environment::Sound(self.replace(i, e)?),
            (EnvRef::Weather(i), Environment::Weather(e)) => Environment::Weather(self.replace(i, e)?),
            (EnvRef::Sky(i), Environment::Sky(e)) => Environment::Sky(self.replace(i, e)?),
            (EnvRef::Gravity(i), Environment::Gravity(e)) => Environment::Gravity(self.replace(i, e)?),
            (env, item) => return Err(self.env_kind_mismatch(env, &item)),
        })
    }

    /// [`restore`](Self::restore) for an environment of any kind; `item` must be of `env`'s kind.
    pub fn restore_environment(&mut self, env: EnvRef, item: Environment) -> LibraryResult<()> {
        match (env, item) {
            (EnvRef::Sound(i), Environment::Sound(e)) => self.restore(i, e),
            (EnvRef::Weather(i), Environment::Weather(e)) => self.restore(i, e),
            (EnvRef::Sky(i), Environment::Sky(e)) => self.restore(i, e),
            (EnvRef::Gravity(i), Environment::Gravity(e)) => self.restore(i, e),
            (env, item) => Err(self.env_kind_mismatch(env, &item)),
        }
    }

    /// [`take`](Self::take) for an environment of any kind.
    pub(crate) fn take_environment(&mut self, env: EnvRef) -> Option<Environment> {
        Some(match env {
            EnvRef::Sound(i) => Environment::Sound(self.take(i)?),
            EnvRef::Weather(i) => Environment::Weather(self.take(i)?),
            EnvRef::Sky(i) => Environment::Sky(self.take(i)?),
            EnvRef::Gravity(i) => Environment::Gravity(self.take(i)?),
        })
    }

    /// Whether two libraries hold the same records under the same ids (id counters ignored).
    pub fn content_eq(&self, other: &Library) -> bool {
        self.materials.iter().eq(other.materials.iter())
            && self.physics.iter().eq(other.physics.iter())
            && self.sounds.iter().eq(other.sounds.iter())
            && self.sound_envs.iter().eq(other.sound_envs.iter())
            && self.weather_envs.iter().eq(other.weather_envs.iter())
            && self.sky_envs.iter().eq(other.sky_envs.iter())
            && self.gravity_envs.iter().eq(other.gravity_envs.iter())
    }
}
