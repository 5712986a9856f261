//! [`Palette`]: the materials the sample maps build with, taken from the starter palette.

use glam::Vec2;

use super::starter;
use crate::map::ids::{MaterialId, PhysicsId};
use crate::map::library::{Library, Material, RenderMode};
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
    /// The starter materials the sample maps build with.
    const STARTER: [&str; 7] = ["grass", "dirt", "sand", "stone", "wood", "glass", "water"];

    /// Adds the palette to `lib`, which must hold [`Library::starter`]'s defaults and nothing of
    /// the starter palette: the starter materials of [`Self::STARTER`] with their physics and
    /// sound materials (see `starter.rs`), a matcap on the glass, and two sky materials (sky_day,
    /// clouds; default physics and sound) that only the sky environment uses.
    pub fn add_to(lib: &mut Library) -> Palette {
        starter::add_materials(lib, |name| Self::STARTER.contains(&name));
        let cube = |lib: &Library, name: &str| {
            let (id, m) = lib.materials().by_name(name).expect("a starter material of the palette");
            Cube::solid(id, m.physics, m.sound)
        };
        let [grass, dirt, sand, stone, wood, glass, water] = Self::STARTER.map(|name| cube(lib, name));
        // The demo shows the matcap look on its glass (the asset pack has no matcap of its own).
        lib.modify(Self::material(glass), |m| m.matcap_texture = "textures/matcap/glass.png".into())
            .expect("the glass exists and stays valid");
        // The starter library's "default" physics and sound materials (the first ids).
        let default_physics = lib.physics_materials().ids().next().unwrap_or_default();
        let default_sound = lib.sound_materials().ids().next().unwrap_or_default();
        let textured = |name: &str, color: [u8; 3]| Material {
            texture: format!("textures/{name}.png"),
            color,
            shading: 255,
            ..Material::new(name, default_physics, default_sound)
        };
        let sky = lib.add(Material { emission: [255; 3], ..textured("sky_day", [150, 200, 255]) }).expect("a new name");
        let clouds = lib
            .add(Material {
                transparent: true,
                alpha: 180,
                render_mode: RenderMode::Add,
                uv_scroll: Vec2::new(0.005, 0.0),
                ..textured("clouds", [255, 255, 255])
            })
            .expect("a new name");
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
