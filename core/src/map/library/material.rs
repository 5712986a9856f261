//! Materials, physics materials and sound materials (PMF "Material", "Client-side material",
//! "Physics material", "Sound material"; docs/spec/PMF-NOTES.md M1–M5).

use glam::{Vec2, Vec3};
use serde::{Deserialize, Serialize};

use super::error::{Checker, ItemKind, LibraryError, LibraryResult};
use super::ids::{MaterialId, PhysicsId, SoundId};
use super::table::Named;
use super::{Library, LibraryItem, Referrer, sealed};
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

macro_rules! named {
    ($($ty:ty),*) => {$(
        impl Named for $ty {
            fn name(&self) -> &str {
                &self.name
            }
            fn set_name(&mut self, name: String) {
                self.name = name;
            }
        }
    )*};
}
pub(super) use named;

named!(Material, PhysicsMaterial, SoundMaterial);

/// Most records of a `u16`-counted PMF kind.
const MAX_U16_COUNT: usize = u16::MAX as usize;

impl LibraryItem for Material {
    type Id = MaterialId;
    const MAX_COUNT: usize = MAX_U16_COUNT;

    fn check(&self) -> LibraryResult<()> {
        let c = Checker { kind: ItemKind::Material, name: &self.name };
        c.text("user type", &self.user_type)?;
        c.text("texture", &self.texture)?;
        for t in &self.extra_textures {
            c.text("extra texture", t)?;
        }
        if self.extra_textures.len() > 255 {
            return Err(c.range("extra textures", format!("has {} entries; at most 255", self.extra_textures.len())));
        }
        c.text("matcap texture", &self.matcap_texture)?;
        c.all_finite("UV scroll", &self.uv_scroll.to_array())?;
        c.all_finite("wave velocity", &self.wave.velocity.to_array())?;
        c.finite("wave wind influence", self.wave.wind_influence)?;
        c.finite("wave offset", self.wave.offset)?;
        c.finite("wave scale", self.wave.scale)
    }
}

impl sealed::Access for Material {
    const OUTSIDE_USERS: &'static str = "cubes in the levels";

    fn table(lib: &Library) -> &super::Table<MaterialId, Self> {
        &lib.materials
    }
    fn table_mut(lib: &mut Library) -> &mut super::Table<MaterialId, Self> {
        &mut lib.materials
    }

    fn check_refs(&self, lib: &Library) -> LibraryResult<()> {
        let dangling = |field, target_kind, target| LibraryError::Dangling {
            kind: ItemKind::Material,
            name: self.name.clone(),
            field,
            target_kind,
            target,
        };
        if !lib.physics.contains(self.physics) {
            return Err(dangling("physics material", ItemKind::PhysicsMaterial, u32::from(self.physics.0)));
        }
        if !lib.sounds.contains(self.sound) {
            return Err(dangling("sound material", ItemKind::SoundMaterial, u32::from(self.sound.0)));
        }
        Ok(())
    }

    fn referrers(lib: &Library, id: MaterialId) -> Vec<Referrer> {
        lib.sky_envs
            .iter()
            .flat_map(|(sky, env)| {
                env.slots()
                    .into_iter()
                    .filter(move |&(_, m)| m == Some(id))
                    .map(move |(slot, _)| Referrer::Sky(sky, slot))
            })
            .collect()
    }

    fn relink(lib: &mut Library, from: MaterialId, to: MaterialId) -> Vec<Referrer> {
        let mut out = Vec::new();
        for (sky, env) in lib.sky_envs.iter_mut() {
            for slot in super::SkySlot::ALL {
                let m = env.slot_mut(slot);
                if *m == Some(from) {
                    *m = Some(to);
                    out.push(Referrer::Sky(sky, slot));
                }
            }
        }
        out
    }
}

impl LibraryItem for PhysicsMaterial {
    type Id = PhysicsId;
    const MAX_COUNT: usize = MAX_U16_COUNT;

    fn check(&self) -> LibraryResult<()> {
        let c = Checker { kind: ItemKind::PhysicsMaterial, name: &self.name };
        c.finite("friction", self.friction)?;
        c.finite("max speed", self.max_speed)?;
        c.finite("traction", self.traction)?;
        c.finite("bounce", self.bounce)?;
        c.finite("damage minimum speed", self.damage_min_speed)?;
        c.finite("base damage", self.damage_base)?;
        c.finite("damage per m/s", self.damage_per_mps)
    }
}

impl sealed::Access for PhysicsMaterial {
    const OUTSIDE_USERS: &'static str = "cubes or the air physics setting of the levels";

    fn table(lib: &Library) -> &super::Table<PhysicsId, Self> {
        &lib.physics
    }
    fn table_mut(lib: &mut Library) -> &mut super::Table<PhysicsId, Self> {
        &mut lib.physics
    }

    fn referrers(lib: &Library, id: PhysicsId) -> Vec<Referrer> {
        lib.materials.iter().filter(|(_, m)| m.physics == id).map(|(mid, _)| Referrer::Material(mid)).collect()
    }

    fn relink(lib: &mut Library, from: PhysicsId, to: PhysicsId) -> Vec<Referrer> {
        let mut out = Vec::new();
        for (mid, m) in lib.materials.iter_mut() {
            if m.physics == from {
                m.physics = to;
                out.push(Referrer::Material(mid));
            }
        }
        out
    }
}

impl LibraryItem for SoundMaterial {
    type Id = SoundId;
    const MAX_COUNT: usize = MAX_U16_COUNT;

    fn check(&self) -> LibraryResult<()> {
        let c = Checker { kind: ItemKind::SoundMaterial, name: &self.name };
        c.finite("volume dampening", self.volume_dampening)?;
        c.finite("frequency dampening", self.frequency_dampening)
    }
}

impl sealed::Access for SoundMaterial {
    const OUTSIDE_USERS: &'static str = "cubes in the levels";

    fn table(lib: &Library) -> &super::Table<SoundId, Self> {
        &lib.sounds
    }
    fn table_mut(lib: &mut Library) -> &mut super::Table<SoundId, Self> {
        &mut lib.sounds
    }

    fn referrers(lib: &Library, id: SoundId) -> Vec<Referrer> {
        lib.materials.iter().filter(|(_, m)| m.sound == id).map(|(mid, _)| Referrer::Material(mid)).collect()
    }

    fn relink(lib: &mut Library, from: SoundId, to: SoundId) -> Vec<Referrer> {
        let mut out = Vec::new();
        for (mid, m) in lib.materials.iter_mut() {
            if m.sound == from {
                m.sound = to;
                out.push(Referrer::Material(mid));
            }
        }
        out
    }
}
