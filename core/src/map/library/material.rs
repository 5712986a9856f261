//! Materials, physics materials and sound materials (PMF "Material", "Client-side material",
//! "Physics material", "Sound material"; docs/spec/PMF-NOTES.md M1–M5).

use glam::{Vec2, Vec3};
use serde::{Deserialize, Serialize};

use super::ids::{PhysicsId, SoundId};
use super::table::named;
use crate::format::pmf;

/// How a material is blended (PMF "Material render mode").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum RenderMode {
    /// `ENTMAT_RENDMODE_NORMAL` (0).
    #[default]
    Normal,
    /// `ENTMAT_RENDMODE_ADD` (1): additive.
    Add,
}

impl RenderMode {
    /// The PMF value.
    pub fn to_pmf(self) -> pmf::RenderMode {
        match self {
            Self::Normal => pmf::RenderMode::Normal,
            Self::Add => pmf::RenderMode::Add,
        }
    }
}

/// Client-side material wave info; used by the engine only when the material is liquid, but kept
/// (and exported, docs/spec/PMF-NOTES.md M4) whatever the flag.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Wave {
    /// XYZ velocity.
    pub velocity: Vec3,
    /// Wind influence.
    pub wind_influence: f32,
    /// Offset.
    pub offset: f32,
    /// Scale.
    pub scale: f32,
}

/// A render material: every field of PMF's Material and Client-side material, plus the physics and
/// sound materials that painting with it puts on cubes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Material {
    /// Unique among materials; what chunks and entities refer to in the PMF.
    pub name: String,
    /// User-defined type (free text for game code).
    pub user_type: String,
    /// "Is transparent" flag: `alpha` is used, faces are kept against other materials (G4).
    pub transparent: bool,
    /// "Is liquid" flag: `wave` is used.
    pub liquid: bool,
    /// Blending.
    pub render_mode: RenderMode,
    /// Texture resource path; empty = untextured.
    pub texture: String,
    /// Extra (animation) textures, at most 255.
    pub extra_textures: Vec<String>,
    /// Time between animation frames, in microseconds.
    pub texture_advance_us: u32,
    /// Texture UV scroll.
    pub uv_scroll: Vec2,
    /// RGB colour.
    pub color: [u8; 3],
    /// Alpha; used only when `transparent`.
    pub alpha: u8,
    /// RGB emission.
    pub emission: [u8; 3],
    /// Shading.
    pub shading: u8,
    /// Shine.
    pub shine: u8,
    /// Matcap texture resource path; empty = none.
    pub matcap_texture: String,
    /// Wave info.
    pub wave: Wave,
    /// Physics material painted along with this material (editor only).
    pub physics: PhysicsId,
    /// Sound material painted along with this material (editor only).
    pub sound: SoundId,
}

impl Default for Material {
    fn default() -> Self {
        Self {
            name: String::new(),
            user_type: String::new(),
            transparent: false,
            liquid: false,
            render_mode: RenderMode::Normal,
            texture: String::new(),
            extra_textures: Vec::new(),
            texture_advance_us: 0,
            uv_scroll: Vec2::ZERO,
            color: [255; 3],
            alpha: 255,
            emission: [0; 3],
            shading: 0,
            shine: 0,
            matcap_texture: String::new(),
            wave: Wave::default(),
            physics: PhysicsId::default(),
            sound: SoundId::default(),
        }
    }
}

impl Material {
    /// A white, untextured material painting `physics` and `sound`.
    pub fn new(name: impl Into<String>, physics: PhysicsId, sound: SoundId) -> Self {
        Self { name: name.into(), physics, sound, ..Self::default() }
    }

    /// The PMF common and client-side records.
    pub fn to_pmf(&self) -> (pmf::Material, pmf::ClientMaterial) {
        let mut flags = 0;
        if self.transparent {
            flags |= pmf::material_flags::TRANSPARENT;
        }
        if self.liquid {
            flags |= pmf::material_flags::LIQUID;
        }
        let common = pmf::Material {
            name: self.name.clone(),
            user_type: self.user_type.clone(),
            flags,
            render_mode: self.render_mode.to_pmf(),
        };
        let client = pmf::ClientMaterial {
            texture: self.texture.clone(),
            extra_textures: self.extra_textures.clone(),
            texture_advance_time_us: self.texture_advance_us,
            uv_scroll: self.uv_scroll.to_array(),
            color: self.color,
            alpha: self.alpha,
            emission: self.emission,
            shading: self.shading,
            shine: self.shine,
            matcap_texture: self.matcap_texture.clone(),
            wave: pmf::WaveInfo {
                velocity: self.wave.velocity.to_array(),
                wind_influence: self.wave.wind_influence,
                offset: self.wave.offset,
                scale: self.wave.scale,
            },
        };
        (common, client)
    }
}

/// A physics material (PMF "Physics material").
///
/// PMF stores one float that is the friction of a solid material or the max speed of a non-solid
/// one; the editor keeps both so that toggling `not_solid` loses nothing, and exports the one the
/// flag selects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PhysicsMaterial {
    /// Unique among physics materials.
    pub name: String,
    /// "Not solid" flag (e.g. water, ladders' volume): things move through it.
    pub not_solid: bool,
    /// Friction; exported when solid.
    pub friction: f32,
    /// Max speed inside; exported when not solid.
    pub max_speed: f32,
    /// Traction (ignored when not solid).
    pub traction: f32,
    /// Bounce (ignored when not solid).
    pub bounce: f32,
    /// Minimum speed to cause damage.
    pub damage_min_speed: f32,
    /// Base damage.
    pub damage_base: f32,
    /// Extra damage per metre per second.
    pub damage_per_mps: f32,
}

impl Default for PhysicsMaterial {
    fn default() -> Self {
        Self {
            name: String::new(),
            not_solid: false,
            friction: 1.0,
            max_speed: 0.0,
            traction: 1.0,
            bounce: 0.0,
            damage_min_speed: 0.0,
            damage_base: 0.0,
            damage_per_mps: 0.0,
        }
    }
}

impl PhysicsMaterial {
    /// A solid material with friction and traction 1, no bounce, no damage.
    pub fn new(name: impl Into<String>) -> Self {
        Self { name: name.into(), ..Self::default() }
    }

    /// The PMF record.
    pub fn to_pmf(&self) -> pmf::PhysicsMaterial {
        pmf::PhysicsMaterial {
            name: self.name.clone(),
            flags: if self.not_solid { pmf::physics_flags::NOT_SOLID } else { 0 },
            friction_or_max_speed: if self.not_solid { self.max_speed } else { self.friction },
            traction: self.traction,
            bounce: self.bounce,
            damage_min_speed: self.damage_min_speed,
            damage_base: self.damage_base,
            damage_per_mps: self.damage_per_mps,
        }
    }
}

/// A sound material. PMF records carry no name (docs/spec/PMF-NOTES.md M2: material `k` is exported as `"k"`);
/// the name is the editor's.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SoundMaterial {
    /// Unique among sound materials (editor only).
    pub name: String,
    /// Volume dampening.
    pub volume_dampening: f32,
    /// Frequency dampening.
    pub frequency_dampening: f32,
}

impl SoundMaterial {
    /// A sound material with no dampening.
    pub fn new(name: impl Into<String>) -> Self {
        Self { name: name.into(), ..Self::default() }
    }

    /// The PMF record.
    pub fn to_pmf(&self) -> pmf::SoundMaterial {
        pmf::SoundMaterial { volume_dampening: self.volume_dampening, frequency_dampening: self.frequency_dampening }
    }
}

named!(Material, PhysicsMaterial, SoundMaterial);
