//! Entities placed in a level: the PMF entity record ([`pmf::entity::Entity`], every type of
//! docs/spec/ENTITIES.md typed, 9–11 opaque) plus what the editor adds.
//!
//! Positions inside the record are in **level space** (relative to the center of the level's
//! center chunk, L4) whatever the [`EntityScope`]; the exporter moves chunk entities into their
//! chunk's space.

use glam::Vec3;
use serde::{Deserialize, Serialize};

use super::error::{Checker, ItemKind, LibraryResult};
use super::light::SwitchKind;
use super::table::Named;
use crate::format::pmf::entity::{Entity, EntityData};

/// Where an entity is exported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum EntityScope {
    /// Chunk entity (in the chunk that holds its position) if the type has a position, otherwise
    /// level-wide.
    #[default]
    Auto,
    /// Level-wide entity (server level data): always active.
    Level,
    /// Chunk entity: active with its chunk. Types without a position go to the center chunk.
    Chunk,
}

/// A light controller's target: the kind of switchable light and its global ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LightSwitchRef {
    /// Dynamic (type 25) or fast (type 26) controller.
    pub kind: SwitchKind,
    /// The light's global ID.
    pub global_id: u32,
}

/// An entity of a level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MapEntity {
    /// The record: gamemodes, name, type data, custom properties.
    pub entity: Entity,
    /// Where it is exported.
    pub scope: EntityScope,
}

impl MapEntity {
    /// An entity for all gamemodes, no custom properties, scope [`EntityScope::Auto`].
    pub fn new(name: impl Into<String>, data: EntityData) -> Self {
        Self { entity: Entity::new(name, data), scope: EntityScope::Auto }
    }

    /// docs/spec/ENTITIES.md's name of the type.
    pub fn type_name(&self) -> &'static str {
        self.entity.data.type_name()
    }

    /// Position in level space, for types that have one (a door's closed position, a decal's
    /// origin).
    pub fn position(&self) -> Option<Vec3> {
        self.entity.data.position().map(Vec3::from_array)
    }

    /// Moves an entity that has a position; `false` (nothing changed) for one that has none. A
    /// door's open position moves along with its closed position.
    pub fn set_position(&mut self, p: Vec3) -> bool {
        let Some(slot) = position_mut(&mut self.entity.data) else { return false };
        let delta = p - Vec3::from_array(*slot);
        *slot = p.to_array();
        if let EntityData::Door(d) = &mut self.entity.data {
            d.open_position = (Vec3::from_array(d.open_position) + delta).to_array();
        }
        true
    }

    /// Whether it is exported as a chunk entity.
    pub fn is_chunk_entity(&self) -> bool {
        match self.scope {
            EntityScope::Auto => self.entity.data.position().is_some(),
            EntityScope::Level => false,
            EntityScope::Chunk => true,
        }
    }

    /// Material names the type data refers to (non-empty ones), with the field.
    pub fn material_refs(&self) -> Vec<(&'static str, &str)> {
        const FACES: [&str; 6] =
            ["+X material", "+Y material", "+Z material", "-X material", "-Y material", "-Z material"];
        let refs: Vec<(&'static str, &str)> = match &self.entity.data {
            EntityData::Cube(c) => FACES.iter().zip(&c.materials).map(|(f, m)| (*f, m.as_str())).collect(),
            EntityData::Glow(g) => vec![("material", g.material.as_str())],
            EntityData::Billboard(b) => vec![("material", b.material.as_str())],
            _ => Vec::new(),
        };
        refs.into_iter().filter(|(_, m)| !m.is_empty()).collect()
    }

    /// Physics material names the type data refers to (non-empty ones), with the field.
    pub fn physics_refs(&self) -> Vec<(&'static str, &str)> {
        const FACES: [&str; 6] = [
            "+X physics material",
            "+Y physics material",
            "+Z physics material",
            "-X physics material",
            "-Y physics material",
            "-Z physics material",
        ];
        let refs: Vec<(&'static str, &str)> = match &self.entity.data {
            EntityData::Cube(c) => FACES.iter().zip(&c.physics_materials).map(|(f, m)| (*f, m.as_str())).collect(),
            EntityData::Door(d) => vec![("physics material", d.physics_material.as_str())],
            _ => Vec::new(),
        };
        refs.into_iter().filter(|(_, m)| !m.is_empty()).collect()
    }

    /// The light a controller (types 25, 26) drives.
    pub fn light_switch(&self) -> Option<LightSwitchRef> {
        match &self.entity.data {
            EntityData::DynLightCtl(c) => Some(LightSwitchRef { kind: SwitchKind::Dynamic, global_id: c.light_id }),
            EntityData::FastLightCtl(c) => Some(LightSwitchRef { kind: SwitchKind::Fast, global_id: c.light_id }),
            _ => None,
        }
    }

    /// Name without NUL, finite position. (The PMF writer checks the rest of the record at export.)
    pub(super) fn check(&self) -> LibraryResult<()> {
        let c = Checker { kind: ItemKind::Entity, name: &self.entity.name };
        c.text("name", &self.entity.name)?;
        if let Some(p) = self.entity.data.position() {
            c.all_finite("position", &p)?;
        }
        Ok(())
    }
}

impl Named for MapEntity {
    fn name(&self) -> &str {
        &self.entity.name
    }
    fn set_name(&mut self, name: String) {
        self.entity.name = name;
    }
}

/// The position field of types that have one (same choice as [`EntityData::position`]).
fn position_mut(data: &mut EntityData) -> Option<&mut [f32; 3]> {
    Some(match data {
        EntityData::Generic(e) => &mut e.position,
        EntityData::Prop(e) => &mut e.position,
        EntityData::Cube(e) => &mut e.position,
        EntityData::Intersectable(e) => &mut e.position,
        EntityData::Door(e) => &mut e.closed_position,
        EntityData::Trigger(e) => &mut e.position,
        EntityData::Light(e) => &mut e.position,
        EntityData::Glow(e) => &mut e.position,
        EntityData::Text(e) => &mut e.position,
        EntityData::Billboard(e) => &mut e.position,
        EntityData::Decal(e) => &mut e.origin,
        EntityData::Projectile(e) => &mut e.position,
        EntityData::Push(e) => &mut e.position,
        EntityData::AudioEmitter(e) => &mut e.position,
        EntityData::Dummy
        | EntityData::Headless(_)
        | EntityData::Broadcaster(_)
        | EntityData::Counter(_)
        | EntityData::ExtCounter(_)
        | EntityData::Timer(_)
        | EntityData::ExtTimer(_)
        | EntityData::Setter(_)
        | EntityData::DynLightCtl(_)
        | EntityData::FastLightCtl(_)
        | EntityData::Opaque { .. } => return None,
    })
}
