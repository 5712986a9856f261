//! [`demo`]: the editor's default map. See [`landmarks`] for where things are.

use glam::{IVec3, Vec3};

use super::palette::Palette;
use super::site::{Site, smoothed_top};
use crate::format::pmf::entity::{
    AudioEmitter, AudioEmitterFlags, BoxCorners, Door, DoorFlags, DynLightCtl, EntityData, FastLightCtl, Prop,
    PropFlags, Text, TextFlags, Trigger,
};
use crate::map::coords::{Face, LatticeBox, octant_offset};
use crate::map::library::{
    BOX_CORNER_SIGNS, EnvRef, EnvironmentRegion, GravityEnvironment, Library, Light, LightMode, LightShape, LoadRegion,
    MapEntity, RealtimeLight, SkyEnvId, SkyEnvironment, SoundEnvironment, WeatherEnvironment,
};
use crate::map::octree::{Cube, CubeKind};
use crate::map::{Level, Map, MapMeta};

/// Where the notable things of [`demo`] are, in **level space**: map units relative to the
/// center of the level's center chunk (the world origin). Y is up; the flat ground's top is
/// `y = 0`.
///
/// Boxes are `[min, max)`. The editor's camera starts at [`CAMERA_EYE`] looking at
/// [`CAMERA_TARGET`] (the building's entrance side).
pub mod landmarks {
    use glam::Vec3;

    const fn v(a: [i32; 3]) -> Vec3 {
        Vec3::new(a[0] as f32, a[1] as f32, a[2] as f32)
    }

    pub(in crate::sample) const GROUND_MIN: [i32; 3] = [-40, -8, -40];
    pub(in crate::sample) const GROUND_MAX: [i32; 3] = [40, 0, 40];
    pub(in crate::sample) const BUILDING_MIN_I: [i32; 3] = [0, 0, -8];
    pub(in crate::sample) const BUILDING_MAX_I: [i32; 3] = [16, 8, 8];
    pub(in crate::sample) const VAULT_DOORWAY_MIN_I: [i32; 3] = [8, 1, -1];
    pub(in crate::sample) const VAULT_DOORWAY_MAX_I: [i32; 3] = [9, 4, 1];
    pub(in crate::sample) const POOL_MIN_I: [i32; 3] = [-14, -3, 6];
    pub(in crate::sample) const POOL_MAX_I: [i32; 3] = [-6, 0, 14];

    /// The whole demo area: 5 × 5 chunks of ground (`y` from −8 to 0, the center chunk in the
    /// middle), sky up to `y = 24`.
    pub const AREA_MIN: Vec3 = Vec3::new(-40.0, -8.0, -40.0);
    /// See [`AREA_MIN`].
    pub const AREA_MAX: Vec3 = Vec3::new(40.0, 24.0, 40.0);
    /// The building: stone foundation `y` 0..1 (wood-painted floor on top), stone walls `y` 1..7,
    /// wood roof `y` 7..8 overhanging one unit on every side.
    pub const BUILDING_MIN: Vec3 = v(BUILDING_MIN_I);
    /// See [`BUILDING_MIN`].
    pub const BUILDING_MAX: Vec3 = v(BUILDING_MAX_I);
    /// Center of the hall (west room, `x` 1..8, with the entrance and the static lamp).
    pub const HALL_CENTER: Vec3 = Vec3::new(4.5, 3.0, 0.0);
    /// Center of the vault (east room, `x` 9..15): enclosed when its door is closed; dynamic spot
    /// light.
    pub const VAULT_CENTER: Vec3 = Vec3::new(12.0, 3.0, 0.0);
    /// The entrance doorway in the west wall (`x` 0..1, `z` −1..1, `y` 1..4).
    pub const ENTRANCE_MIN: Vec3 = Vec3::new(0.0, 1.0, -1.0);
    /// See [`ENTRANCE_MIN`].
    pub const ENTRANCE_MAX: Vec3 = Vec3::new(1.0, 4.0, 1.0);
    /// The doorway between hall and vault, closed by the door entity `vault_door`.
    pub const VAULT_DOORWAY_MIN: Vec3 = v(VAULT_DOORWAY_MIN_I);
    /// See [`VAULT_DOORWAY_MIN`].
    pub const VAULT_DOORWAY_MAX: Vec3 = v(VAULT_DOORWAY_MAX_I);
    /// The stone ramp up to the entrance: four one-unit cubes with pushed top corners.
    pub const RAMP_MIN: Vec3 = Vec3::new(-2.0, 0.0, -1.0);
    /// See [`RAMP_MIN`].
    pub const RAMP_MAX: Vec3 = Vec3::new(0.0, 1.0, 1.0);
    /// The pool (stone rim around it); water fills it up to `y = -0.5`.
    pub const POOL_MIN: Vec3 = v(POOL_MIN_I);
    /// See [`POOL_MIN`].
    pub const POOL_MAX: Vec3 = v(POOL_MAX_I);
    /// Hills: `(center x, center z, radius, height)`, smoothed with pushed corners. The last one
    /// is inside the low-gravity region.
    pub const HILLS: [(f32, f32, f32, f32); 3] =
        [(-22.0, -20.0, 9.0, 6.0), (-24.0, 24.0, 7.0, 3.5), (22.0, 22.0, 8.0, 4.5)];
    /// Where the editor's camera starts (south-west of the building, above the ground).
    pub const CAMERA_EYE: Vec3 = Vec3::new(-14.0, 9.0, -16.0);
    /// What the camera looks at first: the building's entrance side.
    pub const CAMERA_TARGET: Vec3 = Vec3::new(6.0, 3.0, 0.0);
}

use landmarks::*;

/// The editor's default map: small, but with one of everything. Deterministic. Level `"main"`
/// (chunks of 16 map units, the default center chunk); see [`landmarks`] for coordinates.
///
/// - **Terrain**: 80 × 80 map units (5 × 5 chunks) of ground (stone, dirt, grass; top at `y = 0`), three
///   hills whose surface is smoothed with pushed corners (extended geometry), and a stone-rimmed
///   pool of water (liquid, transparent, drawn with backfaces).
/// - **Building**: stone walls, a wood roof, a foundation whose floor faces are painted wood
///   (per-face materials), two rooms (hall and vault) joined by a doorway, an entrance doorway
///   reached by a pushed-corner ramp, and glass windows (transparent).
/// - **Library**: the starter records plus grass, dirt, sand, stone, wood, glass, water, sky and
///   cloud materials over six physics materials and six sound materials (see `Palette`); one
///   environment of each kind: sound `hall`, weather `breeze`, sky `day`, gravity
///   `low_gravity`.
/// - **Lights**: `hall_lamp` (static point), `vault_spot` (dynamic spot, global ID 1),
///   `pool_glow` (fast area, global ID 2), `porch_lamp` (realtime point, switched by
///   signals), `hill_beacon` (static spot).
/// - **Entities**: prop `crate`, trigger `porch_trigger` (switches the porch lamp), door
///   `vault_door`, audio emitter `pool_ambience`, text `welcome_sign`, dynamic light controller
///   `vault_flicker` (drives global ID 1), fast light controller `pool_pulse` (global ID 2).
/// - **Regions**: one environment region per environment, and one load region.
pub fn demo() -> Map {
    let mut map = Map::new("Demo");
    map.meta = MapMeta {
        name: "Demo".into(),
        description: "pmfedit's sample map: hills, a pool and a two-room building".into(),
        authors: "pmfedit".into(),
        gamemodes: vec!["explore".into()],
    };
    let palette = Palette::add_to(&mut map.library);
    let level = &mut map.levels[0];
    level.name = "main".into();
    let site = Site::at_world_origin(&level.frame());
    build_terrain(level, &site, &palette);
    build_pool(level, &site, &palette);
    build_building(level, &site, &palette);
    add_lights(level);
    add_entities(level);
    let sky = add_environments(&mut map.library, &mut map.levels[0], &palette);
    set_level_defaults(&mut map.levels[0], sky);
    map
}

/// The level's default sky is `day`.
fn set_level_defaults(level: &mut Level, sky: SkyEnvId) {
    level.environments.sky = Some(sky);
}

fn fill(level: &mut Level, b: LatticeBox, cube: Cube) {
    level.fill_box(b, cube).expect("inside the grid");
}

/// Flat ground and the hills.
fn build_terrain(level: &mut Level, site: &Site, p: &Palette) {
    let [x0, y0, z0] = GROUND_MIN;
    let [x1, _, z1] = GROUND_MAX;
    fill(level, site.units([x0, y0, z0], [x1, -4, z1]), p.stone);
    fill(level, site.units([x0, -4, z0], [x1, -1, z1]), p.dirt);
    fill(level, site.units([x0, -1, z0], [x1, 0, z1]), p.grass);
    let height = |x: i32, z: i32| -> f32 {
        HILLS
            .iter()
            .map(|&(cx, cz, r, h)| {
                let d2 = ((x as f32 - cx).powi(2) + (z as f32 - cz).powi(2)) / (r * r);
                if d2 < 1.0 { h * (1.0 - d2) * (1.0 - d2) } else { 0.0 }
            })
            .sum()
    };
    for x in x0..x1 {
        for z in z0..z1 {
            let corners: [f32; 4] = std::array::from_fn(|i| {
                let o = octant_offset(i);
                height(x + o.x, z + o.z)
            });
            let top = (corners.iter().copied().fold(0.0, f32::max) - 0.01).ceil() as i32;
            if top < 1 {
                continue;
            }
            if top > 1 {
                fill(level, site.units([x, 0, z], [x + 1, top - 1, z + 1]), p.dirt);
            }
            match smoothed_top(p.grass, top, corners) {
                Some(c) => level.set_cube(site.unit_cube(IVec3::new(x, top - 1, z)), c),
                None if top > 1 => level.set_cube(site.unit_cube(IVec3::new(x, top - 2, z)), p.grass),
                None => continue,
            }
            .expect("inside the grid");
        }
    }
}

/// The pool: a stone rim, water up to half a unit below the ground.
fn build_pool(level: &mut Level, site: &Site, p: &Palette) {
    let [x0, y0, z0] = POOL_MIN_I;
    let [x1, y1, z1] = POOL_MAX_I;
    fill(level, site.units([x0 - 1, y0 - 1, z0 - 1], [x1 + 1, y1, z1 + 1]), p.stone);
    level.clear_box(site.units(POOL_MIN_I, POOL_MAX_I)).expect("inside the grid");
    let water = LatticeBox::new(
        site.lattice(IVec3::from_array(POOL_MIN_I)),
        site.lattice(IVec3::from_array(POOL_MAX_I)) - IVec3::new(0, 4, 0),
    );
    fill(level, water, p.water);
    level.set_draw_backfaces_box(water, true).expect("inside the grid");
}

/// The two-room building, its windows and the entrance ramp.
fn build_building(level: &mut Level, site: &Site, p: &Palette) {
    let [x0, y0, z0] = BUILDING_MIN_I;
    let [x1, y1, z1] = BUILDING_MAX_I;
    // Foundation with a wood-painted floor.
    fill(level, site.units([x0, y0, z0], [x1, y0 + 1, z1]), p.stone);
    let floor = site.units([x0 + 1, y0, z0 + 1], [x1 - 1, y0 + 1, z1 - 1]);
    level.paint_face_box(floor, Face::PosY, Palette::material(p.wood)).expect("inside the grid");
    // Painting sets the face's render material only; walking on the floor should feel like wood.
    let wood_physics = Palette::physics(p.wood);
    let with_wood_physics = |mut c: Cube| {
        if let CubeKind::Extended(e) = &mut c.kind {
            e.face_physics[Face::PosY.index()] = wood_physics;
        }
        c
    };
    level.map_box(floor, &with_wood_physics).expect("inside the grid");
    // Walls, hollowed out; the wall between hall and vault.
    fill(level, site.units([x0, y0 + 1, z0], [x1, y1 - 1, z1]), p.stone);
    level.clear_box(site.units([x0 + 1, y0 + 1, z0 + 1], [x1 - 1, y1 - 1, z1 - 1])).expect("inside the grid");
    fill(level, site.units([8, y0 + 1, z0 + 1], [9, y1 - 1, z1 - 1]), p.stone);
    // Doorways.
    level.clear_box(site.units(VAULT_DOORWAY_MIN_I, VAULT_DOORWAY_MAX_I)).expect("inside the grid");
    level.clear_box(site.units([x0, 1, -1], [x0 + 1, 4, 1])).expect("inside the grid");
    // Glass windows: two per room in the north and south walls, one in the east wall.
    for (a, b) in [(3, 6), (11, 14)] {
        fill(level, site.units([a, 3, z1 - 1], [b, 5, z1]), p.glass);
        fill(level, site.units([a, 3, z0], [b, 5, z0 + 1]), p.glass);
    }
    fill(level, site.units([x1 - 1, 3, -2], [x1, 5, 2]), p.glass);
    // Roof, overhanging one unit.
    fill(level, site.units([x0 - 1, y1 - 1, z0 - 1], [x1 + 1, y1, z1 + 1]), p.wood);
    // Entrance ramp from the ground (y = 0) up to the floor (y = 1): two cubes along X, the top
    // sloping over both: −X edge of the outer cube at the bottom, half way at the middle.
    for z in [-1, 0] {
        for (x, west, east) in [(x0 - 2, 16, 8), (x0 - 1, 8, 0)] {
            let addr = site.unit_cube(IVec3::new(x, 0, z));
            level.set_cube(addr, p.stone).expect("inside the grid");
            // Top corners: 0 (+X, +Z), 1 (−X, +Z), 2 (+X, −Z), 3 (−X, −Z).
            for (corner, down) in [(0, east), (2, east), (1, west), (3, west)] {
                if down != 0 {
                    level.push_corner(addr, corner, IVec3::new(0, -down, 0)).expect("a leaf inside one chunk");
                }
            }
        }
    }
}

fn add_lights(level: &mut Level) {
    let lights = [
        Light {
            color: [255, 220, 170],
            intensity: 2.0,
            range: 12.0,
            size: Vec3::splat(0.25),
            ..Light::point("hall_lamp", Vec3::new(4.5, 6.5, 0.0))
        },
        Light {
            shape: LightShape::Spot { direction: Vec3::NEG_Y, cone_radius: 40.0 },
            mode: LightMode::Dynamic { global_id: 1, enabled: true, preserve: false },
            color: [180, 200, 255],
            intensity: 3.0,
            range: 10.0,
            ..Light::point("vault_spot", Vec3::new(12.0, 6.5, 0.0))
        },
        Light {
            shape: LightShape::Area { angles: [[-45.0, 45.0], [-90.0, 0.0], [-45.0, 45.0]] },
            mode: LightMode::Fast { global_id: 2, initial_intensity: 200, enabled: true, preserve: true },
            color: [80, 160, 255],
            intensity: 1.5,
            range: 8.0,
            size: Vec3::new(4.0, 0.1, 4.0),
            ..Light::point("pool_glow", Vec3::new(-10.0, 1.5, 10.0))
        },
        Light {
            mode: LightMode::Realtime(RealtimeLight {
                inactive: true,
                sig_activate: "porch_on".into(),
                sig_deactivate: "porch_off".into(),
                sig_toggle: "porch_toggle".into(),
                ..RealtimeLight::default()
            }),
            color: [255, 200, 120],
            intensity: 1.2,
            range: 9.0,
            ..Light::point("porch_lamp", Vec3::new(-1.5, 4.5, 2.5))
        },
        Light {
            shape: LightShape::Spot { direction: Vec3::new(0.0, -1.0, 0.2), cone_radius: 25.0 },
            color: [255, 255, 230],
            intensity: 4.0,
            range: 20.0,
            ..Light::point("hill_beacon", Vec3::new(22.0, 14.0, 18.0))
        },
    ];
    for l in lights {
        level.objects.add(l).expect("valid light");
    }
}

/// An axis-aligned `box` of half extents `half` around the entity's position.
fn box_corners(half: Vec3) -> BoxCorners {
    BOX_CORNER_SIGNS.map(|s| (s * half).to_array())
}

fn add_entities(level: &mut Level) {
    let entities = [
        MapEntity::new(
            "crate",
            EntityData::Prop(Prop {
                flags: PropFlags::PHYSICS,
                position: [3.0, 1.5, -5.0],
                box_pos: [0.5; 3],
                box_neg: [-0.5; 3],
                mass: 20.0,
                drag: 0.1,
                model: "models/crate.p3m".into(),
                shadow_texture: "textures/shadow_round.png".into(),
                shadow_size: [1.2, 1.2],
                ..Prop::default()
            }),
        ),
        MapEntity::new(
            "porch_trigger",
            EntityData::Trigger(Trigger {
                position: [-1.5, 2.0, 0.0],
                bounds: box_corners(Vec3::new(1.5, 2.0, 2.0)),
                out_entered: "porch_on".into(),
                out_exited: "porch_off".into(),
                ..Trigger::default()
            }),
        ),
        MapEntity::new(
            "vault_door",
            EntityData::Door(Door {
                flags: DoorFlags::empty(),
                closed_position: [8.5, 2.5, 0.0],
                closed_scale: [1.0; 3],
                open_position: [8.5, 2.5, 2.0],
                open_scale: [1.0; 3],
                collider: box_corners(Vec3::new(0.5, 1.5, 1.0)),
                model: "models/door_wood.p3m".into(),
                physics_material: "wood".into(),
                open_duration: 800_000,
                close_delay: 3_000_000,
                close_duration: 800_000,
                sig_toggle: "vault_door_toggle".into(),
                ..Door::default()
            }),
        ),
        MapEntity::new(
            "pool_ambience",
            EntityData::AudioEmitter(AudioEmitter {
                flags: AudioEmitterFlags::LOOP,
                position: [-10.0, 0.0, 10.0],
                speed: 1.0,
                volume: [0.6, 0.6],
                range: 14.0,
                radius: [4.0, 1.0, 4.0],
                sound: "sounds/water_lap.ogg".into(),
                ..AudioEmitter::default()
            }),
        ),
        MapEntity::new(
            "welcome_sign",
            EntityData::Text(Text {
                flags: TextFlags::HORIZONTAL_CENTER.with(TextFlags::VERTICAL_CENTER),
                position: [-0.1, 4.6, 0.0],
                view_distance: 24.0,
                offsets: [-1.5, 1.5, 0.4, -0.4],
                font: "fonts/default.ttf".into(),
                size: 0.4,
                color: [255, 255, 255, 255],
                text: "Welcome to pmfedit".into(),
                ..Text::default()
            }),
        ),
        MapEntity::new(
            "vault_flicker",
            EntityData::DynLightCtl(DynLightCtl {
                pattern_len: 8,
                light_id: 1,
                pattern: 0b1011_0111,
                advance_time: 120_000,
                sig_toggle: "vault_light_toggle".into(),
                ..DynLightCtl::default()
            }),
        ),
        MapEntity::new(
            "pool_pulse",
            EntityData::FastLightCtl(FastLightCtl {
                pattern_len: 8,
                light_id: 2,
                pattern: {
                    let mut p = [0; 32];
                    p[..8].copy_from_slice(&[255, 220, 180, 140, 100, 140, 180, 220]);
                    p
                },
                advance_time: 250_000,
                ..FastLightCtl::default()
            }),
        ),
    ];
    for e in entities {
        level.objects.add(e).expect("valid entity");
    }
}

/// One environment of each kind, each with a region; returns the sky (the level default).
fn add_environments(lib: &mut Library, level: &mut Level, p: &Palette) -> SkyEnvId {
    let hall = lib
        .add(SoundEnvironment {
            name: "hall".into(),
            low_pass: 0.1,
            high_pass: 0.0,
            reverb_delay: 0.08,
            reverb_feedback: 0.45,
            reverb_mix: 0.35,
            reverb_low_pass: 0.3,
            reverb_high_pass: 0.05,
        })
        .expect("new name");
    let breeze = lib
        .add(WeatherEnvironment {
            name: "breeze".into(),
            wind: Vec3::new(1.5, 0.0, 0.5),
            wind_direction_seed: 7,
            wind_direction_randomness: Vec3::new(0.2, 0.05, 0.2),
            wind_direction_noise_speed: 0.1,
            wind_velocity_seed: 11,
            wind_velocity_randomness: 0.5,
            wind_velocity_noise_speed: 0.2,
        })
        .expect("new name");
    let day = lib
        .add(SkyEnvironment {
            name: "day".into(),
            skybox: [Some(p.sky); 6],
            cloud_top: Some(p.clouds),
            ..SkyEnvironment::default()
        })
        .expect("new name, materials exist");
    let low = lib
        .add(GravityEnvironment { name: "low_gravity".into(), gravity: Vec3::new(0.0, -3.0, 0.0) })
        .expect("new name");
    let (hill_x, hill_z, hill_r, _) = HILLS[2];
    let regions = [
        ("hall_acoustics", EnvRef::Sound(hall), BUILDING_MIN + Vec3::ONE, BUILDING_MAX - Vec3::ONE),
        ("outdoor_wind", EnvRef::Weather(breeze), AREA_MIN, AREA_MAX),
        ("sky", EnvRef::Sky(day), AREA_MIN, AREA_MAX),
        (
            "moon_hill",
            EnvRef::Gravity(low),
            Vec3::new(hill_x - hill_r, 0.0, hill_z - hill_r),
            Vec3::new(hill_x + hill_r, 16.0, hill_z + hill_r),
        ),
    ];
    for (name, env, min, max) in regions {
        level
            .objects
            .add(EnvironmentRegion { name: name.into(), ..EnvironmentRegion::from_box(env, min, max) })
            .expect("valid region");
    }
    level
        .objects
        .add(LoadRegion {
            name: "building".into(),
            min: BUILDING_MIN - Vec3::ONE,
            max: BUILDING_MAX + Vec3::ONE,
            other_active_chunks: vec![IVec3::new(1, 0, 0), IVec3::new(0, 0, -1)],
        })
        .expect("valid load region");
    day
}
