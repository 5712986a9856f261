//! Lights of a level, with everything the bake needs (docs/spec/PMF-NOTES.md K1–K4) and, for realtime lights,
//! everything the light entity (type 8, docs/spec/ENTITIES.md) needs.
//!
//! | mode | what the bake makes |
//! | --- | --- |
//! | [`LightMode::Static`] | light baked into the lightmaps and cube base light |
//! | [`LightMode::Dynamic`] | a "Dynamic light" record + lightmap layers per chunk it reaches, switchable by global ID |
//! | [`LightMode::Fast`] | a "Fast light" record + per-vertex multipliers per chunk it reaches |
//! | [`LightMode::Realtime`] | nothing baked: a light entity, lit by the engine at run time |

use glam::Vec3;
use serde::{Deserialize, Serialize};

use super::error::{Checker, ItemKind, LibraryResult};
use super::table::named;
use crate::format::pmf;
use crate::format::pmf::entity::{Entity, EntityData, LightFlags, LightKind};

/// The shape of a light.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub enum LightShape {
    /// Light in every direction from a point (or from a box of [`Light::size`]).
    #[default]
    Point,
    /// A cone.
    Spot {
        /// Direction of the cone's axis (level space; need not be unit length, must not be zero).
        /// Editor and bake only: the light entity has no rotation, so a realtime spot light
        /// loses it (see the report on PMF gaps).
        direction: Vec3,
        /// The entity's "cone radius", read as the cone's half-angle in degrees (0 < r ≤ 180).
        cone_radius: f32,
    },
    /// An area light: `[[start X, end X], [start Y, end Y], [start Z, end Z]]` angles in degrees
    /// (the entity's 6 floats, same reading as `pmf::entity::LightKind::Area`).
    Area {
        /// Start/end angles per axis, degrees.
        angles: [[f32; 2]; 3],
    },
}

impl LightShape {
    /// The light entity's kind.
    pub fn to_pmf(self) -> LightKind {
        match self {
            Self::Point => LightKind::Point,
            Self::Spot { cone_radius, .. } => LightKind::Spot { cone_radius },
            Self::Area { angles } => LightKind::Area { angles },
        }
    }
}

/// Which switchable-light list (and controller entity type) a global ID belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SwitchKind {
    /// Dynamic lights, driven by dynamic light controllers (type 25).
    Dynamic,
    /// Fast lights, driven by fast light controllers (type 26).
    Fast,
}

/// The entity-only fields of a realtime light (type 8).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RealtimeLight {
    /// Bit i = header gamemode i; 0 = all.
    pub gamemodes: u32,
    /// "Inactive" flag: starts switched off.
    pub inactive: bool,
    /// Name of the entity to follow; empty = none.
    pub follow_entity: String,
    /// Bone of the followed entity; empty = none.
    pub follow_bone: String,
    /// "Follow bone tail" flag.
    pub follow_bone_tail: bool,
    /// Signal that activates the light.
    pub sig_activate: String,
    /// Signal that deactivates the light.
    pub sig_deactivate: String,
    /// Signal that toggles the light.
    pub sig_toggle: String,
}

/// How a light is compiled (docs/spec/PMF-NOTES.md K3).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub enum LightMode {
    /// Baked into the lightmaps; cannot change at run time.
    #[default]
    Static,
    /// Baked into separate lightmap layers the engine switches by `global_id`.
    Dynamic {
        /// ID the controllers use; unique among the map's switchable lights.
        global_id: u32,
        /// "Enable" flag: on at start.
        enabled: bool,
        /// "Preserve" flag.
        preserve: bool,
    },
    /// Baked as per-vertex multipliers the engine scales by `global_id`'s intensity.
    Fast {
        /// ID the controllers use; unique among the map's switchable lights.
        global_id: u32,
        /// Intensity at start, 0..=255.
        initial_intensity: u8,
        /// "Enable" flag: on at start.
        enabled: bool,
        /// "Preserve" flag.
        preserve: bool,
    },
    /// Not baked: exported as a light entity.
    Realtime(RealtimeLight),
}

impl LightMode {
    /// The global ID of a switchable light, with its kind.
    pub fn switch(&self) -> Option<(SwitchKind, u32)> {
        match *self {
            Self::Dynamic { global_id, .. } => Some((SwitchKind::Dynamic, global_id)),
            Self::Fast { global_id, .. } => Some((SwitchKind::Fast, global_id)),
            Self::Static | Self::Realtime(_) => None,
        }
    }

    /// Whether the bake handles this light (everything but realtime).
    pub fn is_baked(&self) -> bool {
        !matches!(self, Self::Realtime(_))
    }
}

/// A light placed in a level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Light {
    /// Editor label; for a realtime light also the entity name signals address. May be empty or
    /// shared (duplicates among realtime lights and entities are warned about).
    pub name: String,
    /// Position in level space (map units).
    pub position: Vec3,
    /// Shape.
    pub shape: LightShape,
    /// How it is compiled.
    pub mode: LightMode,
    /// RGB colour (the dynamic/fast light records and the entity store `u8[3]`).
    pub color: [u8; 3],
    /// Intensity: 1 = a luxel value of 255 for a white light at unit distance (K2).
    pub intensity: f32,
    /// Range in map units; nothing beyond it is lit (bounds the chunks a light dirties).
    pub range: f32,
    /// Size of the emitter (soft shadows; the entity's `f32x3 size`).
    pub size: Vec3,
}

impl Default for Light {
    fn default() -> Self {
        Self {
            name: String::new(),
            position: Vec3::ZERO,
            shape: LightShape::Point,
            mode: LightMode::Static,
            color: [255; 3],
            intensity: 1.0,
            range: 16.0,
            size: Vec3::ZERO,
        }
    }
}

impl Light {
    /// A white static point light of intensity 1 and range 16 at `position`.
    pub fn point(name: impl Into<String>, position: Vec3) -> Self {
        Self { name: name.into(), position, ..Self::default() }
    }

    /// The "Dynamic light" record of a dynamic light.
    pub fn dynamic_record(&self) -> Option<pmf::DynamicLight> {
        match self.mode {
            LightMode::Dynamic { global_id, enabled, preserve } => {
                Some(pmf::DynamicLight { flags: switch_flags(enabled, preserve), global_id })
            }
            _ => None,
        }
    }

    /// The "Fast light" record of a fast light.
    pub fn fast_record(&self) -> Option<pmf::FastLight> {
        match self.mode {
            LightMode::Fast { global_id, initial_intensity, enabled, preserve } => {
                Some(pmf::FastLight { flags: switch_flags(enabled, preserve), initial_intensity, global_id })
            }
            _ => None,
        }
    }

    /// The light entity of a realtime light, position in level space (the exporter moves it into
    /// a chunk's space for chunk entities).
    pub fn realtime_entity(&self) -> Option<Entity> {
        let LightMode::Realtime(rt) = &self.mode else { return None };
        let mut flags = LightFlags::empty();
        flags.set(LightFlags::INACTIVE, rt.inactive);
        flags.set(LightFlags::FOLLOW_BONE_TAIL, rt.follow_bone_tail);
        let data = pmf::entity::Light {
            flags,
            position: self.position.to_array(),
            follow_entity: rt.follow_entity.clone(),
            follow_bone: rt.follow_bone.clone(),
            color: self.color,
            intensity: self.intensity,
            size: self.size.to_array(),
            range: self.range,
            kind: self.shape.to_pmf(),
            sig_activate: rt.sig_activate.clone(),
            sig_deactivate: rt.sig_deactivate.clone(),
            sig_toggle: rt.sig_toggle.clone(),
        };
        let mut e = Entity::new(self.name.clone(), EntityData::Light(data));
        e.gamemodes = rt.gamemodes;
        Some(e)
    }

    pub(super) fn check(&self) -> LibraryResult<()> {
        let c = Checker { kind: ItemKind::Light, name: &self.name };
        c.text("name", &self.name)?;
        c.all_finite("position", &self.position.to_array())?;
        c.finite("intensity", self.intensity)?;
        c.non_negative("range", self.range)?;
        for v in self.size.to_array() {
            c.non_negative("size", v)?;
        }
        match self.shape {
            LightShape::Point => {}
            LightShape::Spot { direction, cone_radius } => {
                c.all_finite("spot direction", &direction.to_array())?;
                if direction == Vec3::ZERO {
                    return Err(c.range("spot direction", "is zero; it needs a direction".to_owned()));
                }
                c.finite("cone radius", cone_radius)?;
                if !(cone_radius > 0.0 && cone_radius <= 180.0) {
                    return Err(c.range("cone radius", format!("is {cone_radius}°; it must be in (0, 180]")));
                }
            }
            LightShape::Area { angles } => c.all_finite("area angles", angles.as_flattened())?,
        }
        if let LightMode::Realtime(rt) = &self.mode {
            c.text("follow entity", &rt.follow_entity)?;
            c.text("follow bone", &rt.follow_bone)?;
            c.text("activate signal", &rt.sig_activate)?;
            c.text("deactivate signal", &rt.sig_deactivate)?;
            c.text("toggle signal", &rt.sig_toggle)?;
        }
        Ok(())
    }
}

fn switch_flags(enabled: bool, preserve: bool) -> u8 {
    let mut f = 0;
    if enabled {
        f |= pmf::light_flags::ENABLE;
    }
    if preserve {
        f |= pmf::light_flags::PRESERVE;
    }
    f
}

named!(Light);
