//! [`Problem`]s found by [`Library::validate`], [`LevelObjects::validate`],
//! [`Library::validate_level_settings`] and (all of them together)
//! [`Map::validate`](crate::map::Map::validate).

use std::collections::BTreeMap;
use std::fmt;

use super::entity::MapEntity;
use super::environment::{EnvRef, EnvironmentDefaults, SkySlot};
use super::error::{Checker, ItemKind, LibraryError};
use super::ids::{EntityId, LightId, MaterialId, PhysicsId, RegionId, SkyEnvId, SoundId, TableId};
use super::light::{LightMode, SwitchKind};
use super::scene::LevelObjects;
use super::{Library, LibraryItem};
use crate::map::MetaError;

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

pub(super) fn library(lib: &Library) -> Vec<Problem> {
    use super::{
        GravityEnvironment, Material, PhysicsMaterial, SkyEnvironment, SoundEnvironment, SoundMaterial,
        WeatherEnvironment,
    };
    let mut out = Vec::new();
    library_kind::<Material>(lib, Material::MAX_COUNT, &mut out);
    library_kind::<PhysicsMaterial>(lib, PhysicsMaterial::MAX_COUNT, &mut out);
    library_kind::<SoundMaterial>(lib, SoundMaterial::MAX_COUNT, &mut out);
    library_kind::<SoundEnvironment>(lib, SoundEnvironment::MAX_COUNT, &mut out);
    library_kind::<WeatherEnvironment>(lib, WeatherEnvironment::MAX_COUNT, &mut out);
    library_kind::<SkyEnvironment>(lib, SkyEnvironment::MAX_COUNT, &mut out);
    library_kind::<GravityEnvironment>(lib, GravityEnvironment::MAX_COUNT, &mut out);

    for (id, m) in lib.materials().iter() {
        if !lib.physics_materials().contains(m.physics) {
            out.push(Problem::MaterialMissingPhysics { material: id, physics: m.physics });
        }
        if !lib.sound_materials().contains(m.sound) {
            out.push(Problem::MaterialMissingSound { material: id, sound: m.sound });
        }
    }
    for (sky, env) in lib.sky_environments().iter() {
        for (slot, m) in env.slots() {
            if let Some(material) = m
                && !lib.materials().contains(material)
            {
                out.push(Problem::SkyMissingMaterial { sky, slot, material });
            }
        }
    }
    out
}

pub(super) fn level_settings(lib: &Library, defaults: &EnvironmentDefaults, air: Option<PhysicsId>) -> Vec<Problem> {
    let mut out = Vec::new();
    if let Some(physics) = air
        && !lib.physics_materials().contains(physics)
    {
        out.push(Problem::MissingAirPhysics { physics });
    }
    for env in defaults.iter() {
        if !lib.contains_environment(env) {
            out.push(Problem::MissingDefaultEnvironment { env });
        }
    }
    out
}

fn invalid<I: TableId>(id: I, error: LibraryError) -> Problem {
    Problem::Invalid { kind: I::KIND, id: id.raw(), error }
}

pub(super) fn level(objects: &LevelObjects, lib: &Library) -> Vec<Problem> {
    let mut out = Vec::new();
    for (id, l) in objects.lights().iter() {
        if let Err(e) = l.check() {
            out.push(invalid(id, e));
        }
    }
    for (id, e) in objects.entities().iter() {
        if let Err(err) = e.check() {
            out.push(invalid(id, err));
        }
    }
    for (id, r) in objects.regions().iter() {
        if let Err(e) = r.check() {
            out.push(invalid(id, e));
        }
        if !lib.contains_environment(r.environment) {
            out.push(Problem::MissingEnvironment { region: id, env: r.environment });
        }
    }
    for (id, r) in objects.load_regions().iter() {
        if let Err(e) = r.check() {
            out.push(invalid(id, e));
        }
    }

    for (global_id, lights) in objects.global_ids() {
        if lights.len() > 1 {
            out.push(Problem::DuplicateGlobalId { global_id, lights });
        }
    }

    for (id, e) in objects.entities().iter() {
        controller(objects, id, e, &mut out);
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
    for (id, e) in objects.entities().iter() {
        if !e.entity.name.is_empty() {
            names.entry(&e.entity.name).or_default().0.push(id);
        }
    }
    for (id, l) in objects.lights().iter() {
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

fn controller(objects: &LevelObjects, id: EntityId, e: &MapEntity, out: &mut Vec<Problem>) {
    let Some(target) = e.light_switch() else { return };
    let found = objects.lights().iter().any(|(_, l)| l.mode.switch() == Some((target.kind, target.global_id)));
    if !found {
        out.push(Problem::ControllerWithoutLight { entity: id, kind: target.kind, global_id: target.global_id });
    }
}
