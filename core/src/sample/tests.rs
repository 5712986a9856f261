use std::collections::{BTreeMap, BTreeSet, VecDeque};

use glam::{IVec3, Vec3};

use super::landmarks::*;
use super::palette::Palette;
use super::site::Site;
use super::*;
use crate::format::pmf::entity::EntityData;
use crate::map::Map;
use crate::map::coords::{ChunkCoord, Face, LATTICE_PER_UNIT};
use crate::map::library::{
    EnvKind, Library, LightMode, LightShape, Material, MaterialId, PhysicsId, SoundId, SwitchKind,
};
use crate::map::octree::{Cube, CubeKind};

/// Every (material, physics, sound) triple painted on a face of a solid cube.
fn painted(level: &Level) -> BTreeSet<(MaterialId, PhysicsId, SoundId)> {
    let mut out = BTreeSet::new();
    for (_, _, c) in level.leaves() {
        match c.kind {
            CubeKind::Empty => {}
            CubeKind::Geometry(g) => {
                out.insert((g.material, g.physics, g.sound));
            }
            CubeKind::Extended(e) => {
                for f in 0..6 {
                    out.insert((e.face_materials[f], e.face_physics[f], e.sound));
                }
            }
        }
    }
    out
}

/// Every (material, physics, sound) triple of a plain geometry cube.
fn level_plain(level: &Level) -> BTreeSet<(MaterialId, PhysicsId, SoundId)> {
    level
        .leaves()
        .filter_map(|(_, _, c)| match c.kind {
            CubeKind::Geometry(g) => Some((g.material, g.physics, g.sound)),
            _ => None,
        })
        .collect()
}

/// Solid at the center of unit cell `u` (level space, whole units).
fn solid_at(level: &Level, u: IVec3) -> bool {
    let site = Site::at_world_origin(&level.frame());
    level.get(site.lattice(u) + IVec3::splat(LATTICE_PER_UNIT / 2)).unwrap().0.is_solid()
}

/// Flood fill of air unit cells from `start` inside `[min, max]`; `true` if it reaches the
/// border of that box (the air is not enclosed).
fn leaks(level: &Level, start: IVec3, min: IVec3, max: IVec3) -> bool {
    let mut seen = BTreeSet::from([start.to_array()]);
    let mut queue = VecDeque::from([start]);
    while let Some(c) = queue.pop_front() {
        if c.cmpeq(min).any() || c.cmpeq(max).any() {
            return true;
        }
        for d in [IVec3::X, IVec3::Y, IVec3::Z, -IVec3::X, -IVec3::Y, -IVec3::Z] {
            let n = c + d;
            if !solid_at(level, n) && seen.insert(n.to_array()) {
                queue.push_back(n);
            }
        }
    }
    false
}

fn unit(v: Vec3) -> IVec3 {
    v.floor().as_ivec3()
}

#[test]
fn demo_has_lights_of_every_shape_and_mode() {
    let map = demo();
    let objects = &map.levels[0].objects;
    let lights: Vec<_> = objects.lights().iter().map(|(_, l)| l).collect();
    let shape = |f: fn(&LightShape) -> bool| lights.iter().filter(|l| f(&l.shape)).count();
    assert_eq!(shape(|s| matches!(s, LightShape::Point)), 2);
    assert_eq!(shape(|s| matches!(s, LightShape::Spot { .. })), 2);
    assert_eq!(shape(|s| matches!(s, LightShape::Area { .. })), 1);
    let mode = |f: fn(&LightMode) -> bool| lights.iter().filter(|l| f(&l.mode)).count();
    assert_eq!(mode(|m| matches!(m, LightMode::Static)), 2);
    assert_eq!(mode(|m| matches!(m, LightMode::Dynamic { global_id: 1, .. })), 1);
    assert_eq!(mode(|m| matches!(m, LightMode::Fast { global_id: 2, .. })), 1);
    assert_eq!(mode(|m| matches!(m, LightMode::Realtime(_))), 1);
    // Every light is inside the demo area.
    for l in &lights {
        assert!(l.position.cmpge(AREA_MIN).all() && l.position.cmplt(AREA_MAX).all(), "{}", l.name);
    }
}

#[test]
fn demo_has_environments_regions_and_entities() {
    let map = demo();
    let lib = &map.library;
    assert_eq!(lib.sound_environments().len(), 1);
    assert_eq!(lib.weather_environments().len(), 1);
    assert_eq!(lib.sky_environments().len(), 1);
    assert_eq!(lib.gravity_environments().len(), 1);
    let objects = &map.levels[0].objects;
    let kinds: BTreeMap<EnvKind, usize> = objects.regions().iter().fold(BTreeMap::new(), |mut m, (_, r)| {
        *m.entry(r.kind()).or_default() += 1;
        m
    });
    assert_eq!(kinds, EnvKind::ALL.into_iter().map(|k| (k, 1)).collect());
    assert_eq!(objects.load_regions().len(), 1);

    let of = |f: fn(&EntityData) -> bool| objects.entities().iter().filter(|(_, e)| f(&e.entity.data)).count();
    assert_eq!(of(|d| matches!(d, EntityData::Prop(_))), 1);
    assert_eq!(of(|d| matches!(d, EntityData::Trigger(_))), 1);
    assert_eq!(of(|d| matches!(d, EntityData::Door(_))), 1);
    assert_eq!(of(|d| matches!(d, EntityData::AudioEmitter(_))), 1);
    assert_eq!(of(|d| matches!(d, EntityData::Text(_))), 1);
    assert_eq!(of(|d| matches!(d, EntityData::DynLightCtl(_))), 1);
    assert_eq!(of(|d| matches!(d, EntityData::FastLightCtl(_))), 1);
    // The dynamic light controller drives the dynamic light.
    let ctl = objects.entities().iter().find_map(|(_, e)| e.light_switch().filter(|s| s.kind == SwitchKind::Dynamic));
    let ctl = ctl.expect("a dynamic light controller");
    assert_eq!(objects.lights_with_global_id(ctl.global_id).len(), 1);

    // Nothing dangling, clashing or invalid anywhere.
    assert_eq!(lib.validate(), vec![]);
    assert_eq!(objects.validate(lib), vec![]);
    map.meta.validate().unwrap();
}

#[test]
fn demo_materials_physics_and_sounds() {
    let map = demo();
    let lib = &map.library;
    let used = painted(&map.levels[0]);
    let materials: BTreeSet<_> = used.iter().map(|t| t.0).collect();
    let physics: BTreeSet<_> = used.iter().map(|t| t.1).collect();
    let sounds: BTreeSet<_> = used.iter().map(|t| t.2).collect();
    assert!(materials.len() >= 4, "{materials:?}");
    assert!(physics.len() >= 4, "{physics:?}");
    assert!(sounds.len() >= 4, "{sounds:?}");
    // Plain cubes carry their material's own physics and sound materials, all in the library.
    let plain = level_plain(&map.levels[0]);
    for &(m, p, s) in &plain {
        let mat = lib.get(m).expect("material exists");
        assert_eq!((mat.physics, mat.sound), (p, s), "{}", mat.name);
        assert!(lib.get(p).is_some() && lib.get(s).is_some());
    }
    let transparent = materials.iter().filter(|&&m| lib.get(m).unwrap().transparent).count();
    assert!(transparent >= 2, "glass and water");
    let liquid: Vec<_> = materials.iter().filter(|&&m| lib.get(m).unwrap().liquid).collect();
    assert_eq!(liquid.len(), 1);
    assert!(lib.get(lib.get(*liquid[0]).unwrap().physics).unwrap().not_solid, "water is not solid");
}

#[test]
fn demo_geometry_building_ramp_pool() {
    let map = demo();
    let level = &map.levels[0];
    let site = Site::at_world_origin(&level.frame());
    // Extended geometry: the ramp (pushed corners), the hills (smoothed) and the painted floor.
    let extended = level.leaves().filter(|(_, _, c)| matches!(c.kind, CubeKind::Extended(_))).count();
    let pushed = level.leaves().filter(|(_, _, c)| c.has_pushed_corners()).count();
    assert!(pushed > 20, "{pushed}");
    assert!(extended > pushed, "painted floor faces");
    for x in [RAMP_MIN.x as i32, RAMP_MIN.x as i32 + 1] {
        let (c, a) = level.get(site.lattice(IVec3::new(x, 0, 0))).unwrap();
        assert!(c.has_pushed_corners());
        assert_eq!(a, site.unit_cube(IVec3::new(x, 0, 0)));
    }
    // Walls, rooms, windows.
    let glass = |u: IVec3| {
        let (c, _) = level.get(site.lattice(u)).unwrap();
        c.face_material(Face::PosX).is_some_and(|m| map.library.get(m).unwrap().transparent)
    };
    assert!(solid_at(level, unit(BUILDING_MIN)));
    assert!(solid_at(level, unit(BUILDING_MAX) - IVec3::ONE));
    assert!(!solid_at(level, unit(HALL_CENTER)));
    assert!(!solid_at(level, unit(VAULT_CENTER)));
    assert!(!solid_at(level, unit(ENTRANCE_MIN)));
    assert!(glass(IVec3::new(4, 3, 7)) && glass(IVec3::new(15, 4, 0)));
    assert!(solid_at(level, IVec3::new(4, 0, 0)), "floor");
    let (floor, _) = level.get(site.lattice(IVec3::new(4, 0, 0))).unwrap();
    let CubeKind::Extended(e) = floor.kind else { panic!("painted floor {floor:?}") };
    let wood = map.library.materials().id_of("wood").unwrap();
    let stone = map.library.materials().id_of("stone").unwrap();
    assert_eq!(e.face_materials[Face::PosY.index()], wood);
    assert_eq!(e.face_materials[Face::NegY.index()], stone);
    assert_eq!(e.face_physics[Face::PosY.index()], map.library.get(wood).unwrap().physics);
    // The vault is an enclosed air cell once its doorway is closed; open, it joins the hall,
    // which opens to the outside through the entrance.
    let (lo, hi) = (unit(BUILDING_MIN) - IVec3::new(2, 1, 2), unit(BUILDING_MAX) + IVec3::splat(2));
    assert!(leaks(level, unit(VAULT_CENTER), lo, hi));
    let mut closed = level.clone();
    closed
        .fill_box(
            site.units(VAULT_DOORWAY_MIN_I, VAULT_DOORWAY_MAX_I),
            Cube::solid(MaterialId(0), PhysicsId(0), SoundId(0)),
        )
        .unwrap();
    assert!(!leaks(&closed, unit(VAULT_CENTER), lo, hi), "the vault is enclosed");
    assert!(leaks(&closed, unit(HALL_CENTER), lo, hi), "the hall opens through the entrance");
    // The pool holds water below the ground.
    let (water, _) = level.get(site.lattice(unit(POOL_MIN)) + IVec3::ONE).unwrap();
    assert!(water.draw_backfaces);
    assert!(map.library.get(Palette::material(water)).unwrap().liquid);
    assert!(!solid_at(level, unit(POOL_MAX) - IVec3::ONE), "surface half a unit below the ground");
    // Everything lies in the chunks around the center.
    let (lo, hi) = level.occupied_bounds().unwrap();
    let c = Level::DEFAULT_CENTER;
    assert_eq!((lo, hi), (ChunkCoord::new(c.x - 2, c.y, c.z - 2), ChunkCoord::new(c.x + 2, c.y, c.z + 2)));
    for (_, ch) in level.chunks() {
        ch.octree().check_invariants().unwrap();
    }
}

#[test]
fn demo_is_deterministic_and_quick() {
    let started = std::time::Instant::now();
    let a = demo();
    let took = started.elapsed();
    let b = demo();
    assert_eq!(a.levels[0].content_hash(), b.levels[0].content_hash());
    assert_eq!(a.library, b.library);
    assert_eq!(a.levels[0].objects, b.levels[0].objects);
    eprintln!(
        "demo(): {took:?}, {} chunks, {} leaves, {} solid cells",
        a.levels[0].chunk_count(),
        a.levels[0].leaves().count(),
        solid_cells(&a.levels[0])
    );
}

fn chunk_hashes(map: &Map) -> Vec<(ChunkCoord, u64)> {
    map.levels[0].chunks().map(|(c, ch)| (*c, ch.octree().content_hash())).collect()
}

#[test]
fn terrain_is_deterministic_per_seed() {
    let a = terrain(3, 2, 2, 1);
    let b = terrain(3, 2, 2, 1);
    let c = terrain(3, 2, 2, 2);
    assert_eq!(chunk_hashes(&a), chunk_hashes(&b));
    assert_eq!(a.levels[0].objects, b.levels[0].objects);
    assert_ne!(chunk_hashes(&a), chunk_hashes(&c));
    assert_ne!(a.levels[0].content_hash(), c.levels[0].content_hash());
}

#[test]
fn terrain_grows_with_its_size() {
    let sizes = [(1, 1, 1), (2, 2, 2), (4, 2, 3), (4, 4, 4)];
    let mut last = 0;
    for (x, y, z) in sizes {
        let map = terrain(x, y, z, 7);
        let level = &map.levels[0];
        let solid = solid_cells(level);
        assert!(solid > last, "{x}×{y}×{z}: {solid} solid cells, not more than {last}");
        last = solid;
        let (lo, hi) = level.occupied_bounds().unwrap();
        assert!((hi.as_ivec3() - lo.as_ivec3() + IVec3::ONE).cmple(IVec3::new(x as i32, y as i32, z as i32)).all());
        assert!(map.library.validate().is_empty());
        assert!(level.objects.validate(&map.library).is_empty(), "{:?}", level.objects.validate(&map.library));
        assert!(level.objects.lights().len() >= 4);
    }
}

#[test]
fn terrain_has_water_smooth_slopes_caves_and_structures() {
    let map = terrain(4, 4, 4, 3);
    let level = &map.levels[0];
    let used = painted(level);
    let names: BTreeSet<&str> = used.iter().map(|t| map.library.get(t.0).unwrap().name.as_str()).collect();
    for n in ["grass", "dirt", "stone", "wood", "glass"] {
        assert!(names.contains(n), "{n} missing from {names:?}");
    }
    assert!(level.leaves().filter(|(_, _, c)| c.has_pushed_corners()).count() > 1000);
    for (_, ch) in level.chunks() {
        ch.octree().check_invariants().unwrap();
    }
}

#[test]
fn the_starter_library_is_valid_and_names_water_water() {
    let lib = starter_library();
    assert!(lib.validate().is_empty(), "{:?}", lib.validate());
    let physics: Vec<&str> = lib.physics_materials().iter().map(|(_, p)| p.name.as_str()).collect();
    assert_eq!(physics, ["default", "soil", "sand", "stone", "wood", "glass", "water", "lava"]);
    let (_, water) = lib.materials().by_name("water").unwrap();
    assert_eq!(lib.physics_materials().get(water.physics).unwrap().name, "water");
    assert!(lib.physics_materials().get(water.physics).unwrap().not_solid);
    let map = empty("x");
    assert!(map.library.content_eq(&lib) && map.levels.len() == 1 && map.meta.name == "x");
    assert!(map.validate().is_empty(), "{:?}", map.validate());
}

/// One material per texture of the asset pack, every texture a starter material names exists,
/// and nothing in the pack is left without a material (its water frames aside, which the water
/// names as extra textures, and the demo's two sky materials, which only its sky uses).
#[test]
fn the_starter_library_and_the_asset_pack_match() {
    let assets = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets");
    let lib = starter_library();
    let mut named = BTreeSet::new();
    for (_, m) in lib.materials().iter().filter(|(_, m)| m.name != "default") {
        assert_eq!(m.texture, format!("textures/{}.png", m.name));
        for t in std::iter::once(&m.texture).chain(&m.extra_textures) {
            assert!(assets.join(t).is_file(), "{}: {t} is not in the asset pack", m.name);
            named.insert(t.clone());
        }
    }
    let demo = demo();
    for (_, m) in demo.library.materials().iter().filter(|(_, m)| ["sky_day", "clouds"].contains(&m.name.as_str())) {
        assert!(assets.join(&m.texture).is_file(), "{}: {} is not in the asset pack", m.name, m.texture);
        named.insert(m.texture.clone());
    }
    let pack: BTreeSet<String> = std::fs::read_dir(assets.join("textures"))
        .unwrap()
        .map(|e| format!("textures/{}", e.unwrap().file_name().to_string_lossy()))
        .filter(|n| n.ends_with(".png"))
        .collect();
    assert_eq!(named, pack);
}

/// The sample maps' materials are the starter's records (same fields, physics and sound
/// materials of the same names), the demo's matcap on glass and its sky materials aside.
#[test]
fn the_samples_take_their_materials_from_the_starter_library() {
    let starter = starter_library();
    for map in [demo(), terrain(1, 1, 1, 1)] {
        let lib = &map.library;
        let mut shared = 0;
        for (_, m) in lib.materials().iter() {
            let Some((_, s)) = starter.materials().by_name(&m.name) else {
                assert!(["sky_day", "clouds"].contains(&m.name.as_str()), "{} is not a starter material", m.name);
                continue;
            };
            let physics = |l: &Library, id| l.physics_materials().get(id).cloned();
            let sound = |l: &Library, id| l.sound_materials().get(id).cloned();
            assert_eq!(physics(lib, m.physics), physics(&starter, s.physics), "{}", m.name);
            assert_eq!(sound(lib, m.sound), sound(&starter, s.sound), "{}", m.name);
            let m = Material { matcap_texture: String::new(), physics: s.physics, sound: s.sound, ..m.clone() };
            assert_eq!(&m, s);
            shared += 1;
        }
        assert_eq!(shared, 8, "default and the seven palette materials");
    }
}
