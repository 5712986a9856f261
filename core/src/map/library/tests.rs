use glam::{IVec3, Vec3};

use super::*;
use crate::format::pmf::entity::{Counter, Cube, Door, DynLightCtl, EntityData, FastLightCtl, Glow};

/// Library with physics "rock" (0), "metal" (1); sound "thud" (0), "clang" (1); materials
/// "stone" (0: rock, thud), "iron" (1: metal, clang).
fn lib() -> Library {
    let mut lib = Library::new();
    let rock = lib.add(PhysicsMaterial::new("rock")).unwrap();
    let metal = lib.add(PhysicsMaterial::new("metal")).unwrap();
    let thud = lib.add(SoundMaterial::new("thud")).unwrap();
    let clang = lib.add(SoundMaterial::new("clang")).unwrap();
    lib.add(Material::new("stone", rock, thud)).unwrap();
    lib.add(Material::new("iron", metal, clang)).unwrap();
    lib
}

const UNUSED: &dyn Fn(MaterialId) -> bool = &|_| false;

fn names<T: LibraryItem>(lib: &Library) -> Vec<String> {
    lib.table::<T>().iter().map(|(_, t)| t.name().to_owned()).collect()
}

// ---- names ----

#[test]
fn unique_name_suffixes() {
    let taken = ["stone", "stone 2", "a 0", "b 1"];
    let t = |n: &str| taken.contains(&n);
    assert_eq!(unique_name("wood", t), "wood");
    assert_eq!(unique_name("stone", t), "stone 3");
    assert_eq!(unique_name("stone 2", t), "stone 3");
    // "0"-prefixed and "1" suffixes: "a 0" is not a counter, "b 1" counts from 2.
    assert_eq!(unique_name("a 0", t), "a 0 2");
    assert_eq!(unique_name("b 1", t), "b 2");
}

#[test]
fn add_unique_renames_and_add_refuses() {
    let mut lib = lib();
    let p = PhysicsId(0);
    let s = SoundId(0);
    let a = lib.add_unique(Material::new("stone", p, s)).unwrap();
    let b = lib.add_unique(Material::new("stone", p, s)).unwrap();
    assert_eq!(lib.get(a).unwrap().name, "stone 2");
    assert_eq!(lib.get(b).unwrap().name, "stone 3");
    assert_eq!(
        lib.add(Material::new("stone", p, s)),
        Err(LibraryError::DuplicateName { kind: ItemKind::Material, name: "stone".into() })
    );
    // Kinds have separate namespaces.
    lib.add(PhysicsMaterial::new("stone")).unwrap();
    let d = lib.duplicate(a).unwrap();
    assert_eq!(lib.get(d).unwrap().name, "stone 4");
    assert_eq!(lib.get(d).unwrap().physics, p);
}

#[test]
fn rename_refuses_duplicates_and_bad_names() {
    let mut lib = lib();
    let iron = lib.materials().id_of("iron").unwrap();
    let before = lib.clone();
    assert_eq!(
        lib.rename(iron, "stone"),
        Err(LibraryError::DuplicateName { kind: ItemKind::Material, name: "stone".into() })
    );
    assert_eq!(lib.rename(iron, ""), Err(LibraryError::EmptyName { kind: ItemKind::Material }));
    assert!(matches!(lib.rename(iron, "a\0b"), Err(LibraryError::Nul { field: "name", .. })));
    assert_eq!(lib, before, "refused renames change nothing");
    assert_eq!(lib.rename(iron, "iron").unwrap(), "iron", "renaming to its own name is fine");
    assert_eq!(lib.rename(iron, "steel").unwrap(), "iron");
    assert_eq!(lib.materials().id_of("steel"), Some(iron));
    assert_eq!(lib.materials().id_of("iron"), None);
    assert_eq!(lib.rename(MaterialId(77), "x"), Err(LibraryError::NotFound { kind: ItemKind::Material, id: 77 }));
}

#[test]
fn field_checks_and_modify_rolls_back() {
    let mut lib = lib();
    let stone = MaterialId(0);
    let err = lib.modify(stone, |m| m.wave.scale = f32::NAN).unwrap_err();
    assert!(matches!(err, LibraryError::NotFinite { field: "wave scale", .. }), "{err}");
    assert!(lib.get(stone).unwrap().wave.scale == 0.0, "rolled back");
    let err = lib.modify(stone, |m| m.extra_textures = vec!["t".into(); 256]).unwrap_err();
    assert!(matches!(err, LibraryError::OutOfRange { field: "extra textures", .. }), "{err}");
    let err = lib.modify(stone, |m| m.texture = "a\0".into()).unwrap_err();
    assert!(matches!(err, LibraryError::Nul { field: "texture", .. }));
    let mut bad = PhysicsMaterial::new("bouncy");
    bad.bounce = f32::INFINITY;
    assert!(matches!(lib.add(bad), Err(LibraryError::NotFinite { field: "bounce", .. })));
    // References are checked on add and replace.
    let err = lib.add(Material::new("ghost", PhysicsId(9), SoundId(0))).unwrap_err();
    assert!(matches!(err, LibraryError::Dangling { target_kind: ItemKind::PhysicsMaterial, target: 9, .. }));
    let err = lib.modify(stone, |m| m.sound = SoundId(5)).unwrap_err();
    assert!(matches!(err, LibraryError::Dangling { target_kind: ItemKind::SoundMaterial, target: 5, .. }));
    assert_eq!(lib.validate(), vec![]);
}

// ---- ids ----

#[test]
fn ids_are_never_reused_and_restore_puts_back() {
    let mut lib = lib();
    let a = lib.add(SoundMaterial::new("a")).unwrap();
    assert_eq!(a, SoundId(2));
    let removed = lib.remove_sound(a, None, &|_| false).unwrap();
    let b = lib.add(SoundMaterial::new("b")).unwrap();
    assert_eq!(b, SoundId(3), "a removed id is not handed out again");
    lib.restore(a, removed.item.clone()).unwrap();
    assert_eq!(lib.get(a).unwrap().name, "a");
    assert_eq!(lib.restore(a, removed.item), Err(LibraryError::IdTaken { kind: ItemKind::SoundMaterial, id: 2 }));
    assert!(matches!(lib.restore(SoundId(40), SoundMaterial::new("b")), Err(LibraryError::DuplicateName { .. })));
}

#[test]
fn environment_kind_limit() {
    let mut lib = Library::new();
    for i in 0..255 {
        lib.add(GravityEnvironment { name: format!("g{i}"), gravity: Vec3::NEG_Y }).unwrap();
    }
    assert_eq!(
        lib.add(GravityEnvironment { name: "one too many".into(), gravity: Vec3::ZERO }),
        Err(LibraryError::Full { kind: ItemKind::GravityEnvironment, max: 255 })
    );
}

// ---- removal ----

#[test]
fn remove_material_in_use_needs_replacement() {
    let mut lib = lib();
    let (stone, iron) = (MaterialId(0), MaterialId(1));
    let before = lib.clone();
    let in_chunks = |id: MaterialId| id == stone;
    let err = lib.remove_material(stone, None, &in_chunks).unwrap_err();
    assert_eq!(
        err,
        LibraryError::InUse {
            kind: ItemKind::Material,
            name: "stone".into(),
            users: vec!["cubes in the levels".into()]
        }
    );
    assert!(err.to_string().contains("choose a replacement"), "{err}");
    assert_eq!(lib, before);

    let removed = lib.remove_material(stone, Some(iron), &in_chunks).unwrap();
    assert_eq!(removed.remap, Remap::Replace { from: stone, to: iron });
    assert_eq!(removed.remap.apply(stone), iron);
    assert_eq!(removed.remap.apply(MaterialId(5)), MaterialId(5));
    assert_eq!(removed.item.name, "stone");
    assert!(lib.get(stone).is_none());

    // Unused: no replacement needed, nothing to remap.
    let removed = lib.remove_material(iron, None, UNUSED).unwrap();
    assert_eq!(removed.remap, Remap::Nothing);
}

#[test]
fn remove_with_bad_replacement() {
    let mut lib = lib();
    let stone = MaterialId(0);
    let err = lib.remove_material(stone, Some(stone), UNUSED).unwrap_err();
    assert!(matches!(err, LibraryError::BadReplacement { .. }), "{err}");
    let err = lib.remove_material(stone, Some(MaterialId(42)), UNUSED).unwrap_err();
    assert!(err.to_string().contains("does not exist"), "{err}");
    assert!(lib.get(stone).is_some());
}

#[test]
fn remove_material_used_by_sky() {
    let mut lib = lib();
    let (stone, iron) = (MaterialId(0), MaterialId(1));
    let mut sky = SkyEnvironment { name: "day".into(), ..Default::default() };
    sky.skybox[1] = Some(stone);
    sky.cloud_top = Some(stone);
    let day = lib.add(sky).unwrap();
    let err = lib.remove_material(stone, None, UNUSED).unwrap_err();
    let LibraryError::InUse { users, .. } = &err else { panic!("{err}") };
    assert_eq!(
        users,
        &vec!["sky environment \"day\" (+Y skybox)".to_owned(), "sky environment \"day\" (top cloud layer)".to_owned()]
    );
    let removed = lib.remove_material(stone, Some(iron), UNUSED).unwrap();
    assert_eq!(removed.remap, Remap::Nothing, "not used in chunks");
    assert_eq!(removed.relinked, vec![Referrer::Sky(day, SkySlot::PosY), Referrer::Sky(day, SkySlot::CloudTop)]);
    let sky = lib.get(day).unwrap();
    assert_eq!(sky.skybox[1], Some(iron));
    assert_eq!(sky.cloud_top, Some(iron));
    assert_eq!(lib.validate(), vec![]);
}

#[test]
fn remove_physics_remaps_material_defaults() {
    let mut lib = lib();
    let (rock, metal) = (PhysicsId(0), PhysicsId(1));
    let before = lib.clone();
    let err = lib.remove_physics(metal, None, &|_| true).unwrap_err();
    let LibraryError::InUse { users, .. } = &err else { panic!("{err}") };
    assert_eq!(
        users,
        &vec!["material \"iron\"".to_owned(), "cubes or the air physics setting of the levels".to_owned()]
    );
    assert_eq!(lib, before);

    let removed = lib.remove_physics(metal, Some(rock), &|id| id == metal).unwrap();
    assert_eq!(removed.remap, Remap::Replace { from: metal, to: rock });
    assert_eq!(removed.relinked, vec![Referrer::Material(MaterialId(1))]);
    assert_eq!(lib.get(MaterialId(1)).unwrap().physics, rock);
    assert_eq!(lib.validate(), vec![]);

    // Undo: the record is back under its id and the material points at it again.
    lib.unremove(&removed).unwrap();
    assert!(lib.content_eq(&before));
    assert_eq!(lib.get(MaterialId(1)).unwrap().physics, metal);
}

#[test]
fn remove_sound_remaps_material_defaults() {
    let mut lib = lib();
    let (thud, clang) = (SoundId(0), SoundId(1));
    assert!(matches!(lib.remove_sound(thud, None, &|_| false), Err(LibraryError::InUse { .. })));
    let removed = lib.remove_sound(thud, Some(clang), &|_| false).unwrap();
    assert_eq!(removed.remap, Remap::Nothing);
    assert_eq!(removed.relinked, vec![Referrer::Material(MaterialId(0))]);
    assert_eq!(lib.get(MaterialId(0)).unwrap().sound, clang);
}

// ---- environments ----

fn env_lib() -> (Library, SoundEnvId, SoundEnvId, WeatherEnvId) {
    let mut lib = lib();
    let cave = lib.add(SoundEnvironment { name: "cave".into(), reverb_mix: 0.5, ..Default::default() }).unwrap();
    let hall = lib.add(SoundEnvironment { name: "hall".into(), ..Default::default() }).unwrap();
    let storm = lib.add(WeatherEnvironment { name: "storm".into(), wind: Vec3::X, ..Default::default() }).unwrap();
    (lib, cave, hall, storm)
}

#[test]
fn environment_removal_integrity() {
    let (mut lib, cave, hall, storm) = env_lib();
    let mut level = LevelObjects::new();
    let r = level.add(EnvironmentRegion::from_box(cave.into(), Vec3::ZERO, Vec3::ONE)).unwrap();
    let used = |e: EnvRef| level.uses_environment(e);

    // In use by a region.
    let err = lib.remove_environment(cave.into(), None, &used).unwrap_err();
    assert!(
        matches!(&err, LibraryError::InUse { users, .. } if users == &vec!["environment regions or level defaults".to_owned()]),
        "{err}"
    );
    // Replacement of another kind.
    let err = lib.remove_environment(cave.into(), Some(storm.into()), &used).unwrap_err();
    assert!(matches!(err, LibraryError::BadReplacement { .. }), "{err}");
    assert!(lib.contains_environment(cave.into()));

    // Unused: goes without a replacement; restore puts it back under its id.
    let removed = lib.remove_environment(hall.into(), Some(cave.into()), &used).unwrap();
    assert_eq!(removed.remap, Remap::Nothing);
    assert_eq!(removed.relinked, vec![]);
    assert!(matches!(removed.item, Environment::Sound(ref e) if e.name == "hall"));
    lib.restore_environment(hall.into(), removed.item.clone()).unwrap();
    assert_eq!(lib.environment_name(hall.into()), Some("hall"));
    lib.remove_environment(hall.into(), None, &used).unwrap();

    let hall2 = lib.add(SoundEnvironment { name: "hall".into(), ..Default::default() }).unwrap();
    assert_ne!(hall2, hall);
    let used = |e: EnvRef| level.uses_environment(e);
    let removed = lib.remove_environment(cave.into(), Some(hall2.into()), &used).unwrap();
    assert_eq!(removed.remap, Remap::Replace { from: EnvRef::Sound(cave), to: EnvRef::Sound(hall2) });
    assert_eq!(level.remap_environment(&removed.remap), vec![r]);
    assert_eq!(level.get(r).unwrap().environment, EnvRef::Sound(hall2));
    assert_eq!(lib.validate(), vec![]);
    assert_eq!(level.validate(&lib), vec![]);

    // Unused weather environment goes without a replacement.
    assert_eq!(lib.remove_environment(storm.into(), None, &|_| false).unwrap().remap, Remap::Nothing);
    assert!(!lib.contains_environment(storm.into()));
}

#[test]
fn region_corners_follow_pmf_order() {
    let r = EnvironmentRegion::from_box(
        EnvRef::Gravity(GravityEnvId(0)),
        Vec3::new(-1.0, 0.0, 2.0),
        Vec3::new(1.0, 4.0, 6.0),
    );
    assert_eq!(r.corners[0], Vec3::new(1.0, 4.0, 6.0));
    assert_eq!(r.corners[1], Vec3::new(-1.0, 4.0, 6.0));
    assert_eq!(r.corners[2], Vec3::new(1.0, 4.0, 2.0));
    assert_eq!(r.corners[7], Vec3::new(-1.0, 0.0, 2.0));
    assert_eq!(r.bounds(), (Vec3::new(-1.0, 0.0, 2.0), Vec3::new(1.0, 4.0, 6.0)));
    let p = r.to_pmf(Vec3::new(0.0, 2.0, 0.0), "low");
    assert_eq!(p.corners[0], [1.0, 2.0, 6.0]);
    assert_eq!(p.environment, "low");
    let mut level = LevelObjects::new();
    let bad = LoadRegion { min: Vec3::ONE, max: Vec3::ZERO, ..Default::default() };
    assert!(matches!(level.add(bad), Err(LibraryError::OutOfRange { field: "min corner", .. })));
}

// ---- validation ----

/// A library that only deserialization can produce: dangling references and duplicate names.
fn broken_library() -> Library {
    let (mut lib, _, _, _) = env_lib();
    let day = lib.add(SkyEnvironment { name: "day".into(), ..Default::default() }).unwrap();
    lib.modify(day, |s| s.skybox[0] = Some(MaterialId(0))).unwrap();
    let mut v = serde_json::to_value(&lib).unwrap();
    v["sky_envs"]["items"]["0"]["skybox"][0] = 99.into();
    v["materials"]["items"]["1"]["physics"] = 50.into();
    v["materials"]["items"]["1"]["sound"] = 51.into();
    v["materials"]["items"]["1"]["name"] = "stone".into();
    v["weather_envs"]["items"]["0"]["name"] = "".into();
    serde_json::from_value(v).unwrap()
}

#[test]
fn library_validate_finds_each_kind() {
    assert_eq!(lib().validate(), vec![]);
    let lib = broken_library();
    let problems = lib.validate();
    let has = |f: &dyn Fn(&Problem) -> bool| problems.iter().any(f);
    assert!(has(&|p| matches!(p, Problem::SkyMissingMaterial { slot: SkySlot::PosX, material: MaterialId(99), .. })));
    assert!(has(&|p| matches!(p, Problem::MaterialMissingPhysics { material: MaterialId(1), physics: PhysicsId(50) })));
    assert!(has(&|p| matches!(p, Problem::MaterialMissingSound { material: MaterialId(1), sound: SoundId(51) })));
    assert!(has(
        &|p| matches!(p, Problem::DuplicateName { kind: ItemKind::Material, name, ids } if name == "stone" && ids == &[0, 1])
    ));
    assert!(has(&|p| matches!(
        p,
        Problem::Invalid { kind: ItemKind::WeatherEnvironment, id: 0, error: LibraryError::EmptyName { .. } }
    )));
    assert_eq!(problems.len(), 5, "{problems:#?}");
    assert!(problems.iter().all(|p| p.severity() == Severity::Error && !p.to_string().is_empty()));
}

#[test]
fn level_validate_finds_each_kind() {
    let (lib, cave, _, _) = env_lib();
    let mut level = LevelObjects::new();
    let ok = level.add(EnvironmentRegion::from_box(cave.into(), Vec3::ZERO, Vec3::ONE)).unwrap();
    let gone = level.add(EnvironmentRegion::from_box(EnvRef::Sky(SkyEnvId(3)), Vec3::ZERO, Vec3::ONE)).unwrap();
    let dynamic =
        |g| Light { mode: LightMode::Dynamic { global_id: g, enabled: true, preserve: false }, ..Light::default() };
    let fast = |g| Light {
        mode: LightMode::Fast { global_id: g, initial_intensity: 255, enabled: true, preserve: false },
        ..Light::default()
    };
    let a = level.add(dynamic(7)).unwrap();
    let b = level.add(fast(7)).unwrap();
    level.add(dynamic(8)).unwrap();
    let realtime =
        Light { name: "lamp".into(), mode: LightMode::Realtime(RealtimeLight::default()), ..Light::default() };
    let rt = level.add(realtime).unwrap();
    let lamp = level.add(MapEntity::new("lamp", EntityData::Counter(Counter::default()))).unwrap();
    // Controllers: 8 is dynamic (fine), 8 as fast has no light, 9 has none at all.
    let ctl = |g| MapEntity::new("", EntityData::DynLightCtl(DynLightCtl { light_id: g, ..Default::default() }));
    level.add(ctl(8)).unwrap();
    let no9 = level.add(ctl(9)).unwrap();
    let fast8 = level
        .add(MapEntity::new("", EntityData::FastLightCtl(FastLightCtl { light_id: 8, ..Default::default() })))
        .unwrap();
    let mut cube = Cube::default();
    cube.materials[0] = "stone".into();
    cube.materials[3] = "marble".into();
    cube.physics_materials[1] = "jelly".into();
    let c = level.add(MapEntity::new("box", EntityData::Cube(cube))).unwrap();
    let g = level
        .add(MapEntity::new("", EntityData::Glow(Glow { material: "iron".into(), ..Default::default() })))
        .unwrap();

    let problems = level.validate(&lib);
    let expected = vec![
        Problem::MissingEnvironment { region: gone, env: EnvRef::Sky(SkyEnvId(3)) },
        Problem::DuplicateGlobalId { global_id: 7, lights: vec![a, b] },
        Problem::ControllerWithoutLight { entity: no9, kind: SwitchKind::Dynamic, global_id: 9 },
        Problem::ControllerWithoutLight { entity: fast8, kind: SwitchKind::Fast, global_id: 8 },
        Problem::UnknownMaterialName {
            entity: c,
            field: "-X material",
            kind: ItemKind::Material,
            name: "marble".into(),
        },
        Problem::UnknownMaterialName {
            entity: c,
            field: "+Y physics material",
            kind: ItemKind::PhysicsMaterial,
            name: "jelly".into(),
        },
        Problem::SharedEntityName { name: "lamp".into(), entities: vec![lamp], lights: vec![rt] },
    ];
    assert_eq!(problems, expected, "{problems:#?}");
    assert!(problems[..2].iter().all(|p| p.severity() == Severity::Error));
    assert!(problems[2..].iter().all(|p| p.severity() == Severity::Warning));
    let _ = (ok, g);

    // Map-wide global IDs.
    let mut other = LevelObjects::new();
    other.add(fast(8)).unwrap();
    other.add(fast(100)).unwrap();
    assert_eq!(
        cross_level_global_ids(&[&level, &other]),
        vec![Problem::GlobalIdAcrossLevels { global_id: 8, levels: vec![0, 1] }]
    );
}

// ---- lights and entities ----

#[test]
fn lights_checks_duplicate_and_records() {
    let mut level = LevelObjects::new();
    let spot = Light {
        shape: LightShape::Spot { direction: Vec3::ZERO, cone_radius: 30.0 },
        ..Light::point("spot", Vec3::ONE)
    };
    assert!(matches!(level.add(spot.clone()), Err(LibraryError::OutOfRange { field: "spot direction", .. })));
    let mut spot = spot;
    spot.shape = LightShape::Spot { direction: Vec3::NEG_Y, cone_radius: 30.0 };
    spot.mode = LightMode::Fast { global_id: 4, initial_intensity: 128, enabled: true, preserve: true };
    let id = level.add(spot).unwrap();
    assert!(matches!(level.modify(id, |l| l.range = -1.0), Err(LibraryError::OutOfRange { field: "range", .. })));
    assert_eq!(level.get(id).unwrap().range, 16.0);

    let copy = level.duplicate(id).unwrap();
    assert_eq!(level.get(copy).unwrap().mode.switch(), Some((SwitchKind::Fast, 5)), "a copy gets a fresh global ID");
    assert_eq!(level.lights_with_global_id(4), vec![id]);
    assert_eq!(level.unused_global_id(), 6);

    let l = level.get(id).unwrap();
    let fast = l.fast_record().unwrap();
    assert_eq!((fast.flags, fast.initial_intensity, fast.global_id), (0b11, 128, 4));
    assert!(l.dynamic_record().is_none() && l.realtime_entity().is_none());

    let rt = Light {
        mode: LightMode::Realtime(RealtimeLight { inactive: true, gamemodes: 2, ..Default::default() }),
        shape: LightShape::Area { angles: [[0.0, 90.0], [0.0, 45.0], [10.0, 20.0]] },
        ..Light::point("lamp", Vec3::new(1.0, 2.0, 3.0))
    };
    let e = rt.realtime_entity().unwrap();
    assert_eq!((e.name.as_str(), e.gamemodes), ("lamp", 2));
    let EntityData::Light(data) = e.data else { panic!() };
    assert!(data.flags.inactive());
    assert_eq!(data.position, [1.0, 2.0, 3.0]);
    assert_eq!(data.kind.id(), 2);

    let removed = level.remove(copy).unwrap();
    assert!(level.remove(copy).is_err());
    level.restore(copy, removed).unwrap();
    assert_eq!(level.lights().len(), 2);
}

#[test]
fn entity_positions_and_scope() {
    let mut door = MapEntity::new(
        "door",
        EntityData::Door(Door {
            closed_position: [1.0, 0.0, 0.0],
            open_position: [1.0, 3.0, 0.0],
            ..Default::default()
        }),
    );
    assert_eq!(door.position(), Some(Vec3::X));
    assert!(door.is_chunk_entity());
    assert!(door.set_position(Vec3::new(2.0, 0.0, 1.0)));
    let EntityData::Door(d) = &door.entity.data else { panic!() };
    assert_eq!(d.open_position, [2.0, 3.0, 1.0], "the open position moves along");
    door.scope = EntityScope::Level;
    assert!(!door.is_chunk_entity());

    let mut counter = MapEntity::new("count", EntityData::Counter(Counter::default()));
    assert_eq!(counter.position(), None);
    assert!(!counter.set_position(Vec3::ONE));
    assert!(!counter.is_chunk_entity());
    let opaque = MapEntity::new("beam", EntityData::Opaque { type_id: 9, custom_count: 0, payload: vec![1, 2] });
    assert_eq!(opaque.type_name(), "beam");

    let mut level = LevelObjects::new();
    let id = level.add(door).unwrap();
    assert!(level.modify(id, |e| e.set_position(Vec3::NAN)).is_err());
    assert_eq!(level.get(id).unwrap().position(), Some(Vec3::new(2.0, 0.0, 1.0)));
}

// ---- conversions and serde ----

#[test]
fn pmf_records() {
    let mut lib = lib();
    let stone = MaterialId(0);
    lib.modify(stone, |m| {
        m.transparent = true;
        m.liquid = true;
        m.render_mode = RenderMode::Add;
        m.alpha = 10;
    })
    .unwrap();
    let (common, client) = lib.get(stone).unwrap().to_pmf();
    assert_eq!(common.flags, 0b11);
    assert_eq!(common.render_mode, crate::format::pmf::RenderMode::Add);
    assert_eq!((client.alpha, client.color), (10, [255; 3]));

    let water = PhysicsMaterial { not_solid: true, friction: 0.5, max_speed: 3.0, ..PhysicsMaterial::new("water") };
    assert_eq!(water.to_pmf().friction_or_max_speed, 3.0);
    assert_eq!(water.to_pmf().flags, 1);
    let ground = PhysicsMaterial { not_solid: false, ..water };
    assert_eq!(ground.to_pmf().friction_or_max_speed, 0.5);

    let sky = SkyEnvironment { name: "s".into(), cloud_bottom: Some(stone), skybox_3d: true, ..Default::default() };
    let p = sky.to_pmf(lib.materials(), Default::default());
    assert_eq!((p.cloud_bottom.as_str(), p.skybox[0].as_str(), p.flags), ("stone", "", 1));
}

#[test]
fn serde_json_round_trip() {
    let (mut lib, _, _, storm) = env_lib();
    lib.add(SkyEnvironment {
        name: "night".into(),
        skybox: [Some(MaterialId(1)), None, None, None, None, Some(MaterialId(0))],
        skybox_chunk: IVec3::new(-2, 1, 3),
        ..Default::default()
    })
    .unwrap();
    lib.add(GravityEnvironment { name: "moon".into(), gravity: Vec3::new(0.0, -1.6, 0.0) }).unwrap();
    let gone = lib.add(SoundMaterial::new("temp")).unwrap();
    lib.remove_sound(gone, None, &|_| false).unwrap();

    let json = serde_json::to_string_pretty(&lib).unwrap();
    let back: Library = serde_json::from_str(&json).unwrap();
    assert_eq!(back, lib);
    assert_eq!(back.sound_materials().next_id(), 3, "the id counter survives, so removed ids stay unused");

    // A manifest without counters: they are raised past the largest id.
    let mut v = serde_json::to_value(&lib).unwrap();
    v["sounds"].as_object_mut().unwrap().remove("next_id");
    let mut back: Library = serde_json::from_value(v).unwrap();
    assert_eq!(back.add(SoundMaterial::new("new")).unwrap(), SoundId(2));
    // Ids above the kind's maximum are refused.
    let mut v = serde_json::to_value(&lib).unwrap();
    v["materials"]["items"]["65535"] = v["materials"]["items"]["0"].clone();
    assert!(serde_json::from_value::<Library>(v).is_err());
    // Everything may be left out.
    assert_eq!(serde_json::from_str::<Library>("{}").unwrap(), Library::new());

    let lights = [
        Light::point("a", Vec3::ONE),
        Light {
            shape: LightShape::Spot { direction: Vec3::NEG_Y, cone_radius: 20.0 },
            mode: LightMode::Dynamic { global_id: 3, enabled: false, preserve: true },
            ..Light::default()
        },
        Light {
            mode: LightMode::Realtime(RealtimeLight { sig_toggle: "flick".into(), ..Default::default() }),
            ..Light::default()
        },
    ];
    let json = serde_json::to_string(&lights).unwrap();
    assert_eq!(serde_json::from_str::<Vec<Light>>(&json).unwrap(), lights);
    let regions = (
        EnvironmentRegion::from_box(EnvRef::Weather(storm), Vec3::ZERO, Vec3::ONE),
        LoadRegion { name: "hall".into(), min: Vec3::ZERO, max: Vec3::ONE, other_active_chunks: vec![IVec3::X] },
    );
    let json = serde_json::to_string(&regions).unwrap();
    assert_eq!(serde_json::from_str::<(EnvironmentRegion, LoadRegion)>(&json).unwrap(), regions);
}

#[test]
fn level_settings_are_checked_against_the_library() {
    let (lib, cave, _, _) = env_lib();
    let mut defaults = EnvironmentDefaults::default();
    defaults.set(cave.into());
    assert_eq!(lib.validate_level_settings(&defaults, Some(PhysicsId(1))), vec![]);
    defaults.set(EnvRef::Sound(SoundEnvId(61)));
    let problems = lib.validate_level_settings(&defaults, Some(PhysicsId(60)));
    assert_eq!(
        problems,
        vec![
            Problem::MissingAirPhysics { physics: PhysicsId(60) },
            Problem::MissingDefaultEnvironment { env: EnvRef::Sound(SoundEnvId(61)) }
        ]
    );
}

#[test]
fn starter_library_is_valid() {
    let lib = Library::starter();
    assert_eq!(names::<Material>(&lib), ["default"]);
    assert_eq!(names::<PhysicsMaterial>(&lib), ["default"]);
    assert_eq!(names::<SoundMaterial>(&lib), ["default"]);
    assert_eq!(lib.validate(), vec![]);
}
