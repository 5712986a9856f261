//! The limits the PMF format puts on what a map holds, checked when a manifest is loaded (and
//! before a map is saved), so that a project that cannot be exported is refused naming
//! `map.ron` instead of failing after a full bake naming the output file.
//!
//! Counts are checked against the widths of the PMF fields that store them
//! (docs/spec/PMF-NOTES.md); entity records are checked by the PMF entity writer itself, so
//! every per-type rule (a light controller's pattern length in 1..=32, …) is the writer's, not
//! a copy of it. What depends on the bake (lights, regions and lightmaps per chunk) is not
//! known here.

use crate::format::bin::Writer;
use crate::format::pmf::entity::write_entity;
use crate::format::pmf::strings::StringTableBuilder;
use crate::map::Library;
use crate::map::library::LevelObjects;

/// Most levels a PMF file holds (`u8` count).
pub const MAX_LEVELS: usize = 255;
/// Most materials, physics or sound materials (`u16` counts).
pub const MAX_MATERIALS: usize = 65535;
/// Most environments of each kind, extra textures of a material and load regions of a level
/// (`u8` counts).
pub const MAX_U8_COUNT: usize = 255;

/// A limit of the format that a map breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitError {
    #[error("{count} levels: a PMF file holds at most {MAX_LEVELS}")]
    Levels { count: usize },
    #[error("library: {count} {what}: a PMF level holds at most {max}")]
    Library { what: &'static str, count: usize, max: usize },
    #[error("library: material {name:?}: {count} extra textures (at most {MAX_U8_COUNT})")]
    ExtraTextures { name: String, count: usize },
    #[error("level {level} ({name:?}): {count} load regions (a PMF level holds at most {MAX_U8_COUNT})")]
    LoadRegions { level: usize, name: String, count: usize },
    #[error("level {level} ({name:?}): entity {id} ({entity:?}): {reason}")]
    Entity { level: usize, name: String, id: u32, entity: String, reason: String },
}

/// Checks the library and the levels (name, objects) against the format's limits.
pub fn check<'a>(
    library: &Library,
    levels: impl ExactSizeIterator<Item = (&'a str, &'a LevelObjects)>,
) -> Result<(), LimitError> {
    if levels.len() > MAX_LEVELS {
        return Err(LimitError::Levels { count: levels.len() });
    }
    let tables = [
        ("materials", library.materials().len(), MAX_MATERIALS),
        ("physics materials", library.physics_materials().len(), MAX_MATERIALS),
        ("sound materials", library.sound_materials().len(), MAX_MATERIALS),
        ("sound environments", library.sound_environments().len(), MAX_U8_COUNT),
        ("weather environments", library.weather_environments().len(), MAX_U8_COUNT),
        ("sky environments", library.sky_environments().len(), MAX_U8_COUNT),
        ("gravity environments", library.gravity_environments().len(), MAX_U8_COUNT),
    ];
    if let Some(&(what, count, max)) = tables.iter().find(|(_, n, max)| n > max) {
        return Err(LimitError::Library { what, count, max });
    }
    if let Some((_, m)) = library.materials().iter().find(|(_, m)| m.extra_textures.len() > MAX_U8_COUNT) {
        return Err(LimitError::ExtraTextures { name: m.name.clone(), count: m.extra_textures.len() });
    }
    for (level, (name, objects)) in levels.enumerate() {
        let count = objects.load_regions().len();
        if count > MAX_U8_COUNT {
            return Err(LimitError::LoadRegions { level, name: name.to_owned(), count });
        }
        for (id, e) in objects.entities().iter() {
            let (mut w, mut strings) = (Writer::new(), StringTableBuilder::new());
            write_entity(&mut w, &mut strings, &e.entity).map_err(|err| LimitError::Entity {
                level,
                name: name.to_owned(),
                id: id.0,
                entity: e.entity.name.clone(),
                reason: err.reason,
            })?;
        }
    }
    Ok(())
}
