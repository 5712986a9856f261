//! Sound, weather, sky and gravity environments (PMF "Sound environment" … "Gravity environment"),
//! the typed reference [`EnvRef`] regions use, and the default environment of each kind.
//!
//! Environments are map-wide (exported into every level, `map/mod.rs` issue 3). The defaults are
//! per level (PMF level data), kept in [`Level::environments`](crate::map::Level::environments);
//! regions live in a level's [`LevelObjects`](super::LevelObjects).

use std::fmt;

use glam::{IVec3, Vec3};
use serde::{Deserialize, Serialize};

use super::error::ItemKind;
use super::ids::{GravityEnvId, MaterialId, SkyEnvId, SoundEnvId, TableId, WeatherEnvId};
use super::material::Material;
use super::table::{Table, named};
use crate::format::pmf;

/// A sound environment (filters and reverb applied to sounds heard inside its regions).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SoundEnvironment {
    /// Unique among sound environments.
    pub name: String,
    /// Low pass filter amount.
    pub low_pass: f32,
    /// High pass filter amount.
    pub high_pass: f32,
    /// Reverb delay.
    pub reverb_delay: f32,
    /// Reverb feedback.
    pub reverb_feedback: f32,
    /// Reverb mix.
    pub reverb_mix: f32,
    /// Reverb low pass filter amount.
    pub reverb_low_pass: f32,
    /// Reverb high pass filter amount.
    pub reverb_high_pass: f32,
}

impl SoundEnvironment {
    /// The PMF record.
    pub fn to_pmf(&self) -> pmf::SoundEnvironment {
        pmf::SoundEnvironment {
            name: self.name.clone(),
            low_pass: self.low_pass,
            high_pass: self.high_pass,
            reverb_delay: self.reverb_delay,
            reverb_feedback: self.reverb_feedback,
            reverb_mix: self.reverb_mix,
            reverb_low_pass: self.reverb_low_pass,
            reverb_high_pass: self.reverb_high_pass,
        }
    }
}

/// A weather environment (wind).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct WeatherEnvironment {
    /// Unique among weather environments.
    pub name: String,
    /// XYZ wind direction and velocity.
    pub wind: Vec3,
    /// Wind direction random seed.
    pub wind_direction_seed: u32,
    /// XYZ wind direction randomness.
    pub wind_direction_randomness: Vec3,
    /// Wind direction noise speed.
    pub wind_direction_noise_speed: f32,
    /// Wind velocity random seed.
    pub wind_velocity_seed: u32,
    /// Wind velocity randomness.
    pub wind_velocity_randomness: f32,
    /// Wind velocity noise speed.
    pub wind_velocity_noise_speed: f32,
}

impl WeatherEnvironment {
    /// The PMF record.
    pub fn to_pmf(&self) -> pmf::WeatherEnvironment {
        pmf::WeatherEnvironment {
            name: self.name.clone(),
            wind: self.wind.to_array(),
            wind_direction_seed: self.wind_direction_seed,
            wind_direction_randomness: self.wind_direction_randomness.to_array(),
            wind_direction_noise_speed: self.wind_direction_noise_speed,
            wind_velocity_seed: self.wind_velocity_seed,
            wind_velocity_randomness: self.wind_velocity_randomness,
            wind_velocity_noise_speed: self.wind_velocity_noise_speed,
        }
    }
}

/// A material slot of a [`SkyEnvironment`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum SkySlot {
    /// +X skybox face.
    PosX,
    /// +Y skybox face.
    PosY,
    /// +Z skybox face.
    PosZ,
    /// −X skybox face.
    NegX,
    /// −Y skybox face.
    NegY,
    /// −Z skybox face.
    NegZ,
    /// Top cloud layer.
    CloudTop,
    /// Bottom cloud layer.
    CloudBottom,
}

impl SkySlot {
    /// Every slot, in PMF record order.
    pub const ALL: [Self; 8] =
        [Self::PosX, Self::PosY, Self::PosZ, Self::NegX, Self::NegY, Self::NegZ, Self::CloudTop, Self::CloudBottom];

    /// `"+X skybox"`, `"top cloud layer"`, …
    pub fn label(self) -> &'static str {
        match self {
            Self::PosX => "+X skybox",
            Self::PosY => "+Y skybox",
            Self::PosZ => "+Z skybox",
            Self::NegX => "-X skybox",
            Self::NegY => "-Y skybox",
            Self::NegZ => "-Z skybox",
            Self::CloudTop => "top cloud layer",
            Self::CloudBottom => "bottom cloud layer",
        }
    }
}

/// A sky environment. Materials are referenced by id (so renames follow); `None` exports as the
/// empty string.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SkyEnvironment {
    /// Unique among sky environments.
    pub name: String,
    /// Skybox materials in face order +X, +Y, +Z, −X, −Y, −Z.
    pub skybox: [Option<MaterialId>; 6],
    /// Top cloud layer material.
    pub cloud_top: Option<MaterialId>,
    /// Bottom cloud layer material.
    pub cloud_bottom: Option<MaterialId>,
    /// "3D skybox" flag.
    pub skybox_3d: bool,
    /// The 3D skybox chunk, in the chunk coordinates of the level the sky is exported into
    /// (signed, the level's center chunk is `(0, 0, 0)`); kept when the flag is off.
    pub skybox_chunk: IVec3,
}

impl SkyEnvironment {
    /// Every slot with its material, in PMF record order.
    pub fn slots(&self) -> [(SkySlot, Option<MaterialId>); 8] {
        SkySlot::ALL.map(|s| (s, self.slot(s)))
    }

    /// The material of a slot.
    pub fn slot(&self, slot: SkySlot) -> Option<MaterialId> {
        match slot {
            SkySlot::CloudTop => self.cloud_top,
            SkySlot::CloudBottom => self.cloud_bottom,
            face => self.skybox[face as usize],
        }
    }

    /// The material of a slot, mutably.
    pub fn slot_mut(&mut self, slot: SkySlot) -> &mut Option<MaterialId> {
        match slot {
            SkySlot::CloudTop => &mut self.cloud_top,
            SkySlot::CloudBottom => &mut self.cloud_bottom,
            face => &mut self.skybox[face as usize],
        }
    }

    /// The PMF record: material names from `materials` (the library's; a missing material exports
    /// as `""`), and the 3D skybox chunk as the exporter maps it to a chunk index.
    pub fn to_pmf(
        &self,
        materials: &Table<MaterialId, Material>,
        skybox_chunk: pmf::ChunkIndex,
    ) -> pmf::SkyEnvironment {
        let name = |m: Option<MaterialId>| m.and_then(|m| materials.get(m)).map(|m| m.name.clone()).unwrap_or_default();
        pmf::SkyEnvironment {
            name: self.name.clone(),
            flags: if self.skybox_3d { pmf::sky_flags::SKYBOX_3D } else { 0 },
            skybox: self.skybox.map(name),
            cloud_top: name(self.cloud_top),
            cloud_bottom: name(self.cloud_bottom),
            skybox_chunk,
        }
    }
}

/// A gravity environment.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct GravityEnvironment {
    /// Unique among gravity environments.
    pub name: String,
    /// XYZ gravity.
    pub gravity: Vec3,
}

impl GravityEnvironment {
    /// The PMF record.
    pub fn to_pmf(&self) -> pmf::GravityEnvironment {
        pmf::GravityEnvironment { name: self.name.clone(), gravity: self.gravity.to_array() }
    }
}

named!(SoundEnvironment, WeatherEnvironment, SkyEnvironment, GravityEnvironment);

/// The four kinds of environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum EnvKind {
    /// Sound (client side).
    Sound,
    /// Weather (common).
    Weather,
    /// Sky (client side).
    Sky,
    /// Gravity (common).
    Gravity,
}

impl EnvKind {
    /// All kinds.
    pub const ALL: [Self; 4] = [Self::Sound, Self::Weather, Self::Sky, Self::Gravity];

    /// The [`ItemKind`] of environments of this kind.
    pub fn item_kind(self) -> ItemKind {
        match self {
            Self::Sound => ItemKind::SoundEnvironment,
            Self::Weather => ItemKind::WeatherEnvironment,
            Self::Sky => ItemKind::SkyEnvironment,
            Self::Gravity => ItemKind::GravityEnvironment,
        }
    }
}

impl fmt::Display for EnvKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Sound => "sound",
            Self::Weather => "weather",
            Self::Sky => "sky",
            Self::Gravity => "gravity",
        })
    }
}

/// A reference to an environment of any kind: the kind and the id in one value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum EnvRef {
    /// A sound environment.
    Sound(SoundEnvId),
    /// A weather environment.
    Weather(WeatherEnvId),
    /// A sky environment.
    Sky(SkyEnvId),
    /// A gravity environment.
    Gravity(GravityEnvId),
}

impl EnvRef {
    /// The kind.
    pub fn kind(self) -> EnvKind {
        match self {
            Self::Sound(_) => EnvKind::Sound,
            Self::Weather(_) => EnvKind::Weather,
            Self::Sky(_) => EnvKind::Sky,
            Self::Gravity(_) => EnvKind::Gravity,
        }
    }

    /// The raw id.
    pub fn raw(self) -> u32 {
        match self {
            Self::Sound(i) => i.raw(),
            Self::Weather(i) => i.raw(),
            Self::Sky(i) => i.raw(),
            Self::Gravity(i) => i.raw(),
        }
    }
}

impl fmt::Display for EnvRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} environment #{}", self.kind(), self.raw())
    }
}

impl From<SoundEnvId> for EnvRef {
    fn from(id: SoundEnvId) -> Self {
        Self::Sound(id)
    }
}
impl From<WeatherEnvId> for EnvRef {
    fn from(id: WeatherEnvId) -> Self {
        Self::Weather(id)
    }
}
impl From<SkyEnvId> for EnvRef {
    fn from(id: SkyEnvId) -> Self {
        Self::Sky(id)
    }
}
impl From<GravityEnvId> for EnvRef {
    fn from(id: GravityEnvId) -> Self {
        Self::Gravity(id)
    }
}

/// An environment record of any kind (what
/// [`Library::remove_environment`](super::Library::remove_environment) hands back).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Environment {
    /// A sound environment.
    Sound(SoundEnvironment),
    /// A weather environment.
    Weather(WeatherEnvironment),
    /// A sky environment.
    Sky(SkyEnvironment),
    /// A gravity environment.
    Gravity(GravityEnvironment),
}

impl Environment {
    /// The kind.
    pub fn kind(&self) -> EnvKind {
        match self {
            Self::Sound(_) => EnvKind::Sound,
            Self::Weather(_) => EnvKind::Weather,
            Self::Sky(_) => EnvKind::Sky,
            Self::Gravity(_) => EnvKind::Gravity,
        }
    }

    /// The name.
    pub fn name(&self) -> &str {
        match self {
            Self::Sound(e) => &e.name,
            Self::Weather(e) => &e.name,
            Self::Sky(e) => &e.name,
            Self::Gravity(e) => &e.name,
        }
    }
}

/// The default environment of each kind (PMF level data "Default … environment"; `None` exports
/// as the empty string, M5). A level setting: see [`Level::environments`](crate::map::Level).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct EnvironmentDefaults {
    /// Default sound environment.
    pub sound: Option<SoundEnvId>,
    /// Default weather environment.
    pub weather: Option<WeatherEnvId>,
    /// Default sky environment.
    pub sky: Option<SkyEnvId>,
    /// Default gravity environment.
    pub gravity: Option<GravityEnvId>,
}

impl EnvironmentDefaults {
    /// The default of a kind.
    pub fn get(&self, kind: EnvKind) -> Option<EnvRef> {
        match kind {
            EnvKind::Sound => self.sound.map(EnvRef::Sound),
            EnvKind::Weather => self.weather.map(EnvRef::Weather),
            EnvKind::Sky => self.sky.map(EnvRef::Sky),
            EnvKind::Gravity => self.gravity.map(EnvRef::Gravity),
        }
    }

    /// Every default that is set.
    pub fn iter(&self) -> impl Iterator<Item = EnvRef> + '_ {
        EnvKind::ALL.into_iter().filter_map(|k| self.get(k))
    }

    /// Clears the default of `kind`.
    pub fn clear(&mut self, kind: EnvKind) {
        match kind {
            EnvKind::Sound => self.sound = None,
            EnvKind::Weather => self.weather = None,
            EnvKind::Sky => self.sky = None,
            EnvKind::Gravity => self.gravity = None,
        }
    }

    /// Makes `env` the default of its kind.
    pub fn set(&mut self, env: EnvRef) {
        match env {
            EnvRef::Sound(i) => self.sound = Some(i),
            EnvRef::Weather(i) => self.weather = Some(i),
            EnvRef::Sky(i) => self.sky = Some(i),
            EnvRef::Gravity(i) => self.gravity = Some(i),
        }
    }
}
