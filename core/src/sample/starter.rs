//! The starter palette: what a new map's library holds (the editor's File → New, `pmfc new
//! --sample empty`) and what the sample maps take their materials from. One material per texture
//! of the default asset pack (`assets/textures/<name>.png`), with physics and sound materials to
//! go with them:
//!
//! | material | physics | sound | notes |
//! | --- | --- | --- | --- |
//! | grass, dirt | soil (friction 0.9) | soft | |
//! | sand | sand (friction 0.6, traction 0.7) | soft | |
//! | stone | stone (friction 0.7) | hard | |
//! | wood | wood (friction 0.8, bounce 0.05) | wooden | |
//! | glass | glass (friction 0.2, breaks above 12 m/s) | glassy | transparent, alpha 90 |
//! | water | water (not solid, max speed 3) | water | transparent, liquid, waves, 3 frames |
//! | brick, tiles, concrete | stone | hard | |
//! | metal | default | hard | shiny |
//! | lava | lava (not solid, max speed 1, damages) | water | liquid, glowing |
//!
//! Names are data in a project: changing this table changes only new maps, never what a saved
//! project loads.

use glam::{Vec2, Vec3};

use crate::map::Map;
use crate::map::ids::{PhysicsId, SoundId};
use crate::map::library::{Library, Material, PhysicsMaterial, SoundMaterial, Wave};

/// The starter physics materials after `"default"`, in id order.
fn physics_materials() -> [PhysicsMaterial; 7] {
    [
        PhysicsMaterial { friction: 0.9, traction: 0.9, ..PhysicsMaterial::new("soil") },
        PhysicsMaterial { friction: 0.6, traction: 0.7, ..PhysicsMaterial::new("sand") },
        PhysicsMaterial { friction: 0.7, ..PhysicsMaterial::new("stone") },
        PhysicsMaterial { friction: 0.8, bounce: 0.05, ..PhysicsMaterial::new("wood") },
        PhysicsMaterial {
            friction: 0.2,
            traction: 0.6,
            damage_min_speed: 12.0,
            damage_base: 5.0,
            damage_per_mps: 1.5,
            ..PhysicsMaterial::new("glass")
        },
        PhysicsMaterial {
            not_solid: true,
            max_speed: 3.0,
            friction: 0.0,
            traction: 0.0,
            ..PhysicsMaterial::new("water")
        },
        PhysicsMaterial { not_solid: true, max_speed: 1.0, damage_base: 20.0, ..PhysicsMaterial::new("lava") },
    ]
}

/// The starter sound materials after `"default"`, in id order.
fn sound_materials() -> [SoundMaterial; 5] {
    [
        SoundMaterial { volume_dampening: 0.6, frequency_dampening: 0.5, ..SoundMaterial::new("soft") },
        SoundMaterial { volume_dampening: 0.1, frequency_dampening: 0.05, ..SoundMaterial::new("hard") },
        SoundMaterial { volume_dampening: 0.3, frequency_dampening: 0.2, ..SoundMaterial::new("wooden") },
        SoundMaterial { volume_dampening: 0.05, frequency_dampening: 0.0, ..SoundMaterial::new("glassy") },
        SoundMaterial { volume_dampening: 0.7, frequency_dampening: 0.8, ..SoundMaterial::new("water") },
    ]
}

/// A material of the asset pack's texture `name`, fully shaded; its physics and sound ids are
/// filled in when it is added.
fn textured(name: &str, color: [u8; 3]) -> Material {
    Material {
        texture: format!("textures/{name}.png"),
        color,
        shading: 255,
        ..Material::new(name, PhysicsId::default(), SoundId::default())
    }
}

/// The starter materials after `"default"`, in id order, with the names of the physics and
/// sound materials they paint.
fn materials() -> Vec<(Material, &'static str, &'static str)> {
    vec![
        (textured("grass", [110, 170, 80]), "soil", "soft"),
        (textured("dirt", [130, 95, 60]), "soil", "soft"),
        (textured("sand", [220, 200, 150]), "sand", "soft"),
        (Material { shine: 20, ..textured("stone", [150, 150, 155]) }, "stone", "hard"),
        (Material { user_type: "wood".into(), ..textured("wood", [160, 115, 70]) }, "wood", "wooden"),
        (
            Material { transparent: true, alpha: 90, shine: 220, ..textured("glass", [200, 230, 255]) },
            "glass",
            "glassy",
        ),
        (
            Material {
                transparent: true,
                liquid: true,
                alpha: 150,
                shine: 160,
                extra_textures: vec!["textures/water_1.png".into(), "textures/water_2.png".into()],
                texture_advance_us: 125_000,
                uv_scroll: Vec2::new(0.02, 0.01),
                wave: Wave { velocity: Vec3::new(0.2, 0.0, 0.1), wind_influence: 0.3, offset: 0.0, scale: 0.15 },
                ..textured("water", [60, 120, 200])
            },
            "water",
            "water",
        ),
        (textured("brick", [170, 90, 70]), "stone", "hard"),
        (Material { shine: 180, ..textured("metal", [170, 175, 185]) }, "default", "hard"),
        (textured("tiles", [210, 210, 200]), "stone", "hard"),
        (textured("concrete", [160, 160, 160]), "stone", "hard"),
        (
            Material {
                liquid: true,
                emission: [200, 70, 10],
                wave: Wave { scale: 0.05, ..Wave::default() },
                uv_scroll: Vec2::new(0.005, 0.002),
                ..textured("lava", [230, 90, 20])
            },
            "lava",
            "water",
        ),
    ]
}

/// Adds the starter materials whose names `keep` accepts to `lib`, which holds
/// [`Library::starter`]'s defaults and nothing else of the starter palette, with exactly the
/// physics and sound materials they paint. Everything is added in starter order, so the sample
/// maps (which keep some) get the same ids for the same records whatever else exists.
pub(super) fn add_materials(lib: &mut Library, keep: impl Fn(&str) -> bool) {
    let kept: Vec<_> = materials().into_iter().filter(|(m, _, _)| keep(&m.name)).collect();
    for p in physics_materials() {
        if kept.iter().any(|&(_, physics, _)| physics == p.name) {
            lib.add(p).expect("a new name");
        }
    }
    for s in sound_materials() {
        if kept.iter().any(|&(_, _, sound)| sound == s.name) {
            lib.add(s).expect("a new name");
        }
    }
    for (mut m, physics, sound) in kept {
        m.physics = lib.physics_materials().id_of(physics).expect("added above or a default");
        m.sound = lib.sound_materials().id_of(sound).expect("added above or a default");
        lib.add(m).expect("a new name, references exist");
    }
}

/// The library a new map starts with: [`Library::starter`]'s defaults and every starter record.
pub fn starter_library() -> Library {
    let mut lib = Library::starter();
    add_materials(&mut lib, |_| true);
    lib
}

/// A new map: one empty level and the [`starter_library`] (the editor's File → New,
/// `pmfc new --sample empty`).
pub fn empty(name: impl Into<String>) -> Map {
    Map { library: starter_library(), ..Map::new(name) }
}
