//! [`Palette`]: the materials the sample maps build with.

use glam::{Vec2, Vec3};

use crate::map::ids::{MaterialId, PhysicsId};
use crate::map::library::{Library, Material, PhysicsMaterial, SoundMaterial, Wave};
use crate::map::octree::{Cube, CubeKind};

/// The materials of the sample maps (ids in the map's library) and the plain cubes painting them
/// with their default physics and sound materials.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Palette {
    pub grass: Cube,
    pub dirt: Cube,
    pub sand: Cube,
    pub stone: Cube,
    pub wood: Cube,
    pub glass: Cube,
    pub water: Cube,
    /// Skybox material (no cube uses it).
    pub sky: MaterialId,
    /// Cloud layer material (no cube uses it).
    pub clouds: MaterialId,
}

impl Palette {
    /// Adds the sample materials, their physics materials and sound materials to `lib` (which
    /// must not have them yet, e.g. [`Library::starter`]).
    ///
    /// | material | physics | sound | notes |
    /// | --- | --- | --- | --- |
    /// | grass, dirt | soil (friction 0.9) | soft | |
    /// | sand | sand (friction 0.6, traction 0.7) | soft | lake shores |
    /// | stone | stone (friction 0.7) | hard | |
    /// | wood | wood (friction 0.8, bounce 0.05) | wooden | |
    /// | glass | glass (friction 0.2, breaks above 12 m/s) | glassy | transparent, alpha 90 |
    /// | water | water (not solid, max speed 3) | water | transparent, liquid, waves |
    /// | sky_day, clouds | default | default | sky environment only |
    pub fn add_to(lib: &mut Library) -> Palette {
        let soil = lib.add(PhysicsMaterial { friction: 0.9, traction: 0.9, ..PhysicsMaterial::new("soil") });
        let sand_p = lib.add(PhysicsMaterial { friction: 0.6, traction: 0.7, ..PhysicsMaterial::new("sand") });
        let stone_p = lib.add(PhysicsMaterial { friction: 0.7, ..PhysicsMaterial::new("stone") });
        let wood_p = lib.add(PhysicsMaterial { friction: 0.8, bounce: 0.05, ..PhysicsMaterial::new("wood") });
        let glass_p = lib.add(PhysicsMaterial {
            friction: 0.2,
            traction: 0.6,
            damage_min_speed: 12.0,
            damage_base: 5.0,
            damage_per_mps: 1.5,
            ..PhysicsMaterial::new("glass")
        });
        let water_p = lib.add(PhysicsMaterial {
            not_solid: true,
            max_speed: 3.0,
            friction: 0.0,
            traction: 0.0,
            ..PhysicsMaterial::new("water")
        });
        let soft =
            lib.add(SoundMaterial { volume_dampening: 0.6, frequency_dampening: 0.5, ..SoundMaterial::new("soft") });
        let hard =
            lib.add(SoundMaterial { volume_dampening: 0.1, frequency_dampening: 0.05, ..SoundMaterial::new("hard") });
        let wooden =
            lib.add(SoundMaterial { volume_dampening: 0.3, frequency_dampening: 0.2, ..SoundMaterial::new("wooden") });
        let glassy =
            lib.add(SoundMaterial { volume_dampening: 0.05, frequency_dampening: 0.0, ..SoundMaterial::new("glassy") });
        let water_s =
            lib.add(SoundMaterial { volume_dampening: 0.7, frequency_dampening: 0.8, ..SoundMaterial::new("water") });
        let (soil, sand_p, stone_p, wood_p, glass_p, water_p) = (
            soil.expect("new name"),
            sand_p.expect("new name"),
            stone_p.expect("new name"),
            wood_p.expect("new name"),
            glass_p.expect("new name"),
            water_p.expect("new name"),
        );
        let (soft, hard, wooden, glassy, water_s) = (
            soft.expect("new name"),
            hard.expect("new name"),
            wooden.expect("new name"),
            glassy.expect("new name"),
            water_s.expect("new name"),
        );
        // The starter library's "default" physics and sound materials (the first ids).
        let default_physics = lib.physics_materials().ids().next().unwrap_or_default();
        let default_sound = lib.sound_materials().ids().next().unwrap_or_default();
        let mut add = |m: Material| {
            let (physics, sound) = (m.physics, m.sound);
            let id = lib.add(m).expect("new name, references exist");
            (id, Cube::solid(id, physics, sound))
        };
        let textured = |name: &str, physics, sound, color: [u8; 3]| Material {
            texture: format!("textures/{name}.png"),
            color,
            shading: 255,
            ..Material::new(name, physics, sound)
        };
        let (_, grass) = add(textured("grass", soil, soft, [110, 170, 80]));
        let (_, dirt) = add(textured("dirt", soil, soft, [130, 95, 60]));
        let (_, sand) = add(textured("sand", sand_p, soft, [220, 200, 150]));
        let (_, stone) = add(Material { shine: 20, ..textured("stone", stone_p, hard, [150, 150, 155]) });
        let (_, wood) = add(Material { user_type: "wood".into(), ..textured("wood", wood_p, wooden, [160, 115, 70]) });
        let (_, glass) = add(Material {
            transparent: true,
            alpha: 90,
            shine: 220,
            matcap_texture: "textures/matcap/glass.png".into(),
            ..textured("glass", glass_p, glassy, [200, 230, 255])
        });
        let (_, water) = add(Material {
            transparent: true,
            liquid: true,
            alpha: 150,
            shine: 160,
            extra_textures: vec!["textures/water_1.png".into(), "textures/water_2.png".into()],
            texture_advance_us: 125_000,
            uv_scroll: Vec2::new(0.02, 0.01),
            wave: Wave { velocity: Vec3::new(0.2, 0.0, 0.1), wind_influence: 0.3, offset: 0.0, scale: 0.15 },
            ..textured("water", water_p, water_s, [60, 120, 200])
        });
        let (sky, _) = add(Material {
            emission: [255; 3],
            ..textured("sky_day", default_physics, default_sound, [150, 200, 255])
        });
        let (clouds, _) = add(Material {
            transparent: true,
            alpha: 180,
            render_mode: crate::map::library::RenderMode::Add,
            uv_scroll: Vec2::new(0.005, 0.0),
            ..textured("clouds", default_physics, default_sound, [255, 255, 255])
        });
        Palette { grass, dirt, sand, stone, wood, glass, water, sky, clouds }
    }

    /// The material of a plain cube of the palette.
    pub fn material(cube: Cube) -> MaterialId {
        match cube.kind {
            CubeKind::Geometry(g) => g.material,
            CubeKind::Extended(e) => e.face_materials[0],
            CubeKind::Empty => MaterialId::default(),
        }
    }

    /// The physics material of a plain cube of the palette.
    pub fn physics(cube: Cube) -> PhysicsId {
        match cube.kind {
            CubeKind::Geometry(g) => g.physics,
            CubeKind::Extended(e) => e.face_physics[0],
            CubeKind::Empty => PhysicsId::default(),
        }
    }
}
