//! [`Problem`]s, and the library's checks: [`Library::validate`] and
//! [`Library::validate_level_settings`]. A level's objects are checked where they live
//! ([`LevelObjects::validate`](super::LevelObjects::validate)); [`Map::validate`](crate::map::Map::validate)
//! gathers all of them.

use std::collections::BTreeMap;
use std::fmt;

use super::environment::{
    EnvRef, EnvironmentDefaults, GravityEnvironment, SkyEnvironment, SkySlot, SoundEnvironment, WeatherEnvironment,
};
use super::error::{Checker, ItemKind, LibraryError};
use super::ids::{EntityId, LightId, MaterialId, PhysicsId, RegionId, SkyEnvId, SoundId, TableId};
use super::light::SwitchKind;
use super::material::{Material, PhysicsMaterial, SoundMaterial};
use super::store::{Library, LibraryItem};
use crate::map::meta::MetaError;

/// How bad a [`Problem`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    /// The map cannot be exported as it is (or would export wrongly).
    Error,
    /// Allowed, but probably not what the designer wants.
    Warning,
}

/// Something wrong in a library or a level.
#[derive(Debug, Clone, PartialEq)]
pub enum Problem {
    /// A record fails its own checks (name, numbers, text, PMF limits).
    Invalid {
        /// Kind of the record.
        kind: ItemKind,
        /// Raw id.
        id: u32,
        /// What is wrong.
        error: LibraryError,
    },
    /// Library records of one kind share a name.
    DuplicateName {
        /// Kind.
        kind: ItemKind,
        /// The name.
        name: String,
        /// Raw ids of the records.
        ids: Vec<u32>,
    },
    /// More records of a kind than PMF can count.
    TooMany {
        /// Kind.
        kind: ItemKind,
        /// How many there are.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// A material's default physics material is missing.
    MaterialMissingPhysics {
        /// The material.
        material: MaterialId,
        /// The missing physics material.
        physics: PhysicsId,
    },
    /// A material's default sound material is missing.
    MaterialMissingSound {
        /// The material.
        material: MaterialId,
        /// The missing sound material.
        sound: SoundId,
    },
    /// A sky environment's slot names a missing material.
    SkyMissingMaterial {
        /// The sky environment.
        sky: SkyEnvId,
        /// The slot.
        slot: SkySlot,
        /// The missing material.
        material: MaterialId,
    },
    /// A level's air physics material is missing.
    MissingAirPhysics {
        /// The missing physics material.
        physics: PhysicsId,
    },
    /// A level's default environment is missing.
    MissingDefaultEnvironment {
        /// The missing environment.
        env: EnvRef,
    },
    /// The map metadata breaks a PMF limit.
    Metadata(MetaError),
    /// The map has no level.
    NoLevels,
    /// An environment region's environment is missing.
    MissingEnvironment {
        /// The region.
        region: RegionId,
        /// The missing environment.
        env: EnvRef,
    },
    /// Switchable lights of one level share a global ID.
    DuplicateGlobalId {
        /// The global ID.
        global_id: u32,
        /// The lights.
        lights: Vec<LightId>,
    },
    /// Switchable lights of different levels share a global ID ([`super::cross_level_global_ids`]).
    GlobalIdAcrossLevels {
        /// The global ID.
        global_id: u32,
        /// Indices of the levels.
        levels: Vec<usize>,
    },
    /// A light controller drives a global ID no light of its kind has (warning).
    ControllerWithoutLight {
        /// The controller.
        entity: EntityId,
        /// Dynamic or fast controller.
        kind: SwitchKind,
        /// The global ID.
        global_id: u32,
    },
    /// Entities (and realtime lights, which become entities) share a name, so signals addressed
    /// to it reach all of them (warning).
    SharedEntityName {
        /// The name.
        name: String,
        /// Entities with it.
        entities: Vec<EntityId>,
        /// Realtime lights with it.
        lights: Vec<LightId>,
    },
    /// An entity names a material or physics material the library does not have (warning).
    UnknownMaterialName {
        /// The entity.
        entity: EntityId,
        /// The field.
        field: &'static str,
        /// [`ItemKind::Material`] or [`ItemKind::PhysicsMaterial`].
        kind: ItemKind,
        /// The name.
        name: String,
    },
}

impl Problem {
    /// How bad it is.
    pub fn severity(&self) -> Severity {
        match self {
            Self::ControllerWithoutLight { .. } | Self::SharedEntityName { .. } | Self::UnknownMaterialName { .. } => {
                Severity::Warning
            }
            _ => Severity::Error,
        }
    }
}

fn ids_text<T: fmt::Display>(ids: &[T]) -> String {
    ids.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Invalid { kind, id, error } => write!(f, "{kind} #{id}: {error}"),
            Self::DuplicateName { kind, name, ids } => {
                write!(
                    f,
                    "{kind}s #{} share the name {name:?}",
                    ids.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", #")
                )
            }
            Self::TooMany { kind, count, max } => write!(f, "{count} {kind} records; a PMF level holds at most {max}"),
            Self::MaterialMissingPhysics { material, physics } => {
                write!(f, "material {material} paints physics material {physics}, which does not exist")
            }
            Self::MaterialMissingSound { material, sound } => {
                write!(f, "material {material} paints sound material {sound}, which does not exist")
            }
            Self::SkyMissingMaterial { sky, slot, material } => {
                write!(f, "sky environment {sky}: {} material {material} does not exist", slot.label())
            }
            Self::MissingAirPhysics { physics } => write!(f, "air physics material {physics} does not exist"),
            Self::MissingDefaultEnvironment { env } => write!(f, "default {env} does not exist"),
            Self::Metadata(e) => write!(f, "map metadata: {e}"),
            Self::NoLevels => f.write_str("the map has no level"),
            Self::MissingEnvironment { region, env } => write!(f, "environment region {region}: {env} does not exist"),
            Self::DuplicateGlobalId { global_id, lights } => {
                write!(f, "lights {} share global ID {global_id}", ids_text(lights))
            }
            Self::GlobalIdAcrossLevels { global_id, levels } => {
                write!(f, "global ID {global_id} is used by lights of levels {}", ids_text(levels))
            }
            Self::ControllerWithoutLight { entity, kind, global_id } => {
                write!(f, "entity {entity} controls {kind:?} light {global_id}, which no {kind:?} light has")
            }
            Self::SharedEntityName { name, entities, lights } => {
                write!(
                    f,
                    "name {name:?} is shared by entities [{}] and realtime lights [{}]",
                    ids_text(entities),
                    ids_text(lights)
                )
            }
            Self::UnknownMaterialName { entity, field, kind, name } => {
                write!(f, "entity {entity}: {field} {name:?} is not a {kind} of the library")
            }
        }
    }
}

/// Item checks, names and counts of one library kind.
fn library_kind<T: LibraryItem>(lib: &Library, max_count: usize, out: &mut Vec<Problem>) {
    let kind = T::Id::KIND;
    let table = lib.table::<T>();
    if table.len() > max_count {
        out.push(Problem::TooMany { kind, count: table.len(), max: max_count });
    }
    let mut names: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    for (id, item) in table.iter() {
        let name = item.name();
        names.entry(name).or_default().push(id.raw());
        let checked = if name.is_empty() {
            Err(LibraryError::EmptyName { kind })
        } else {
            Checker { kind, name }.text("name", name).and_then(|()| item.check())
        };
        if let Err(error) = checked {
            out.push(Problem::Invalid { kind, id: id.raw(), error });
        }
    }
    for (name, ids) in names {
        if ids.len() > 1 {
            out.push(Problem::DuplicateName { kind, name: name.to_owned(), ids });
        }
    }
}

impl Library {
    /// Everything wrong with the library: invalid records, duplicate names, dangling references,
    /// too many records. Empty for a library only changed through its methods; a loaded manifest
    /// may not be.
    pub fn validate(&self) -> Vec<Problem> {
        let mut out = Vec::new();
        library_kind::<Material>(self, Material::MAX_COUNT, &mut out);
        library_kind::<PhysicsMaterial>(self, PhysicsMaterial::MAX_COUNT, &mut out);
        library_kind::<SoundMaterial>(self, SoundMaterial::MAX_COUNT, &mut out);
        library_kind::<SoundEnvironment>(self, SoundEnvironment::MAX_COUNT, &mut out);
        library_kind::<WeatherEnvironment>(self, WeatherEnvironment::MAX_COUNT, &mut out);
        library_kind::<SkyEnvironment>(self, SkyEnvironment::MAX_COUNT, &mut out);
        library_kind::<GravityEnvironment>(self, GravityEnvironment::MAX_COUNT, &mut out);

        for (id, m) in self.materials().iter() {
            if !self.physics_materials().contains(m.physics) {
                out.push(Problem::MaterialMissingPhysics { material: id, physics: m.physics });
            }
            if !self.sound_materials().contains(m.sound) {
                out.push(Problem::MaterialMissingSound { material: id, sound: m.sound });
            }
        }
        for (sky, env) in self.sky_environments().iter() {
            for (slot, m) in env.slots() {
                if let Some(material) = m
                    && !self.materials().contains(material)
                {
                    out.push(Problem::SkyMissingMaterial { sky, slot, material });
                }
            }
        }
        out
    }

    /// Problems of a level's settings against this library: a default environment or an air
    /// physics material it lacks.
    pub fn validate_level_settings(&self, defaults: &EnvironmentDefaults, air: Option<PhysicsId>) -> Vec<Problem> {
        let mut out = Vec::new();
        if let Some(physics) = air
            && !self.physics_materials().contains(physics)
        {
            out.push(Problem::MissingAirPhysics { physics });
        }
        for env in defaults.iter() {
            if !self.contains_environment(env) {
                out.push(Problem::MissingDefaultEnvironment { env });
            }
        }
        out
    }
}
