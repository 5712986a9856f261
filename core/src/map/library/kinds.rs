//! What the [`Library`] needs of each of its seven record kinds: the PMF count limit, the field
//! checks ([`LibraryItem`]), table access and the references between records
//! ([`sealed::Access`]).
//!
//! Kept apart from the record types (`material.rs`, `environment.rs`), which are plain data and do
//! not know the library, so that the library uses the record types and not the other way round.

use super::environment::{GravityEnvironment, SkyEnvironment, SkySlot, SoundEnvironment, WeatherEnvironment};
use super::error::{Checker, ItemKind, LibraryError, LibraryResult};
use super::ids::{GravityEnvId, MaterialId, PhysicsId, SkyEnvId, SoundEnvId, SoundId, TableId, WeatherEnvId};
use super::material::{Material, PhysicsMaterial, SoundMaterial};
use super::store::{Library, LibraryItem, Referrer, sealed};
use super::table::Table;

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

    fn table(lib: &Library) -> &Table<MaterialId, Self> {
        &lib.materials
    }
    fn table_mut(lib: &mut Library) -> &mut Table<MaterialId, Self> {
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
            for slot in SkySlot::ALL {
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

    fn table(lib: &Library) -> &Table<PhysicsId, Self> {
        &lib.physics
    }
    fn table_mut(lib: &mut Library) -> &mut Table<PhysicsId, Self> {
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

    fn table(lib: &Library) -> &Table<SoundId, Self> {
        &lib.sounds
    }
    fn table_mut(lib: &mut Library) -> &mut Table<SoundId, Self> {
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

/// At most 255 environments of each kind (PMF counts them in a `u8`).
const MAX_ENV_COUNT: usize = u8::MAX as usize;

macro_rules! environment_item {
    ($ty:ident, $id:ident, $field:ident, $variant:ident, |$c:ident, $e:ident| $check:block) => {
        impl LibraryItem for $ty {
            type Id = $id;
            const MAX_COUNT: usize = MAX_ENV_COUNT;

            fn check(&self) -> LibraryResult<()> {
                let $c = Checker { kind: <$id as TableId>::KIND, name: &self.name };
                let $e = self;
                $check
            }
        }

        impl sealed::Access for $ty {
            const OUTSIDE_USERS: &'static str = "environment regions or level defaults";

            fn table(lib: &Library) -> &Table<$id, Self> {
                &lib.$field
            }
            fn table_mut(lib: &mut Library) -> &mut Table<$id, Self> {
                &mut lib.$field
            }

            fn check_refs(&self, lib: &Library) -> LibraryResult<()> {
                env_check_refs(self, lib)
            }

            /// Nothing in the library refers to an environment (defaults are level settings).
            fn referrers(_lib: &Library, _id: $id) -> Vec<Referrer> {
                Vec::new()
            }

            fn relink(_lib: &mut Library, _from: $id, _to: $id) -> Vec<Referrer> {
                Vec::new()
            }
        }
    };
}

/// Sky environments refer to materials; the others refer to nothing.
trait EnvRefs {
    fn material_refs(&self) -> Vec<(SkySlot, MaterialId)> {
        Vec::new()
    }
    fn name(&self) -> &str;
}

impl EnvRefs for SoundEnvironment {
    fn name(&self) -> &str {
        &self.name
    }
}
impl EnvRefs for WeatherEnvironment {
    fn name(&self) -> &str {
        &self.name
    }
}
impl EnvRefs for GravityEnvironment {
    fn name(&self) -> &str {
        &self.name
    }
}
impl EnvRefs for SkyEnvironment {
    fn material_refs(&self) -> Vec<(SkySlot, MaterialId)> {
        self.slots().into_iter().filter_map(|(s, m)| Some((s, m?))).collect()
    }
    fn name(&self) -> &str {
        &self.name
    }
}

fn env_check_refs<E: EnvRefs>(env: &E, lib: &Library) -> LibraryResult<()> {
    for (slot, m) in env.material_refs() {
        if !lib.materials.contains(m) {
            return Err(LibraryError::Dangling {
                kind: ItemKind::SkyEnvironment,
                name: EnvRefs::name(env).to_owned(),
                field: slot.label(),
                target_kind: ItemKind::Material,
                target: m.raw(),
            });
        }
    }
    Ok(())
}

environment_item!(SoundEnvironment, SoundEnvId, sound_envs, Sound, |c, e| {
    c.finite("low pass", e.low_pass)?;
    c.finite("high pass", e.high_pass)?;
    c.finite("reverb delay", e.reverb_delay)?;
    c.finite("reverb feedback", e.reverb_feedback)?;
    c.finite("reverb mix", e.reverb_mix)?;
    c.finite("reverb low pass", e.reverb_low_pass)?;
    c.finite("reverb high pass", e.reverb_high_pass)
});

environment_item!(WeatherEnvironment, WeatherEnvId, weather_envs, Weather, |c, e| {
    c.all_finite("wind", &e.wind.to_array())?;
    c.all_finite("wind direction randomness", &e.wind_direction_randomness.to_array())?;
    c.finite("wind direction noise speed", e.wind_direction_noise_speed)?;
    c.finite("wind velocity randomness", e.wind_velocity_randomness)?;
    c.finite("wind velocity noise speed", e.wind_velocity_noise_speed)
});

environment_item!(SkyEnvironment, SkyEnvId, sky_envs, Sky, |c, e| {
    let chunk = e.skybox_chunk;
    // Signed chunk coordinates relative to the center chunk; PMF chunk indices have 8 bits of Y
    // and 12 of X and Z, so no level can reach further than this.
    if chunk.y.abs() > 255 || chunk.x.abs() > 4095 || chunk.z.abs() > 4095 {
        return Err(c.range("3D skybox chunk", format!("{chunk} is further from the center than any level reaches")));
    }
    Ok(())
});

environment_item!(GravityEnvironment, GravityEnvId, gravity_envs, Gravity, |c, e| {
    c.all_finite("gravity", &e.gravity.to_array())
});
