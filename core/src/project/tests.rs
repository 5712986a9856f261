use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use glam::{IVec3, Vec3};

use super::chunk_file::{self, IdCheck};
use super::*;
use crate::format::bin::{Reader, Writer};
use crate::format::lz4f;
use crate::format::pmf::entity::{Counter, EntityData, Glow};
use crate::map::coords::{CubeAddr, Face, LatticeBox};
use crate::map::ids::PathAttrs;
use crate::map::library::{
    EnvRef, EnvironmentRegion, Light, LightMode, LoadRegion, MapEntity, Material, PhysicsMaterial, SoundEnvironment,
    SoundMaterial, WeatherEnvId, WeatherEnvironment,
};
use crate::map::lighting::LevelLighting;
use crate::map::octree::{Cube, CubeKind, Octree};

// ----- fixtures --------------------------------------------------------------------------------

/// Physics "rock" (0), "metal" (1); sounds "thud" (0), "clang" (1); materials "stone" (0),
/// "iron" (1), "grass" (2); sound environment "cave", weather "windy".
fn library() -> Library {
    let mut lib = Library::new();
    let rock = lib.add(PhysicsMaterial::new("rock")).unwrap();
    let metal = lib.add(PhysicsMaterial::new("metal")).unwrap();
    let thud = lib.add(SoundMaterial::new("thud")).unwrap();
    let clang = lib.add(SoundMaterial::new("clang")).unwrap();
    lib.add(Material::new("stone", rock, thud)).unwrap();
    lib.add(Material::new("iron", metal, clang)).unwrap();
    lib.add(Material::new("grass", rock, thud)).unwrap();
    lib.add(SoundEnvironment { name: "cave".into(), reverb_mix: 0.25, ..Default::default() }).unwrap();
    lib.add(WeatherEnvironment { name: "windy".into(), wind: Vec3::new(1.5, 0.0, -0.1), ..Default::default() })
        .unwrap();
    lib
}

fn stone(m: u16) -> Cube {
    Cube::solid(MaterialId(m), PhysicsId(m % 2), SoundId(m % 2))
}

/// Terrain over `nx × nz` chunks of 16 units (128 lattice), every chunk different.
fn terrain(level: &mut Level, nx: i32, nz: i32) {
    for x in 0..nx {
        for z in 0..nz {
            let base = IVec3::new(x * 128, 0, z * 128);
            let h = 8 * (1 + (x * 7 + z * 13) % 5);
            level.fill_box(LatticeBox::new(base, base + IVec3::new(128, h, 128)), stone(0)).unwrap();
            // A unique marker per chunk so that no two chunks share content.
            let i = x * nz + z;
            let marker = base + IVec3::new(i % 64 * 2, h, i / 64 % 64 * 2);
            level.set_cube(CubeAddr::new(marker, 1).unwrap(), stone(1 + (i % 2) as u16)).unwrap();
        }
    }
}

/// A map with everything the manifest holds and every kind of cube.
fn sample_map() -> Map {
    let mut map = Map::new("sample");
    map.meta.description = "a \"quoted\" description\nover two lines".into();
    map.meta.authors = "me, you".into();
    map.meta.gamemodes = vec!["ctf".into(), "dm".into()];
    map.library = library();
    let mut level = Level::new("main", 4).unwrap();
    level.set_center_chunk(ChunkCoord::new(1, 0, 1)).unwrap();
    terrain(&mut level, 3, 2);
    // Extended geometry: painted face, pushed corners; backfaces; path attributes on air.
    let a = CubeAddr::new(IVec3::new(16, 64, 16), 3).unwrap();
    level.set_cube(a, stone(0)).unwrap();
    level.paint_face(a, Face::PosY, MaterialId(2)).unwrap();
    level.push_corner(a, 0, IVec3::new(-3, -5, 0)).unwrap();
    level.push_corner(a, 7, IVec3::new(2, 0, 16)).unwrap();
    level.set_draw_backfaces_box(LatticeBox::new(IVec3::new(0, 0, 0), IVec3::new(4, 4, 4)), true).unwrap();
    level.set_path_attrs_box(LatticeBox::new(IVec3::new(40, 100, 40), IVec3::new(48, 104, 48)), PathAttrs(3)).unwrap();
    level.flags.keep_velocity = true;
    level.environments.sound = map.library.sound_environments().id_of("cave");
    assert!(level.environments.sound.is_some());
    level.air_physics_material = Some(PhysicsId(1));
    let o = &mut level.objects;
    o.add(Light::point("sun", Vec3::new(1.0, 20.5, -3.25))).unwrap();
    o.add(Light {
        mode: LightMode::Dynamic { global_id: 4, enabled: true, preserve: false },
        ..Light::point("flicker", Vec3::ZERO)
    })
    .unwrap();
    o.add(MapEntity::new("counter", EntityData::Counter(Counter::default()))).unwrap();
    o.add(MapEntity::new("glow", EntityData::Glow(Glow { material: "iron".into(), ..Default::default() }))).unwrap();
    let cave = map.library.sound_environments().id_of("cave").unwrap();
    o.add(EnvironmentRegion::from_box(EnvRef::Sound(cave), Vec3::ZERO, Vec3::splat(4.0))).unwrap();
    o.add(LoadRegion {
        name: "spawn".into(),
        min: Vec3::splat(-1.0),
        max: Vec3::splat(1.0),
        other_active_chunks: vec![IVec3::new(1, 0, 0)],
    })
    .unwrap();
    level.lighting.sun.azimuth = 45.5;
    level.lighting.sky.color = [10, 20, 30];
    level.lighting.bounces = 2;
    let mut second = Level::new("basement", 2).unwrap();
    second.lighting = LevelLighting::none();
    second.fill_box(LatticeBox::new(IVec3::ZERO, IVec3::new(64, 8, 32)), stone(1)).unwrap();
    map.levels = vec![level, second];
    map
}

fn chunk_hashes(level: &Level) -> Vec<(ChunkCoord, u64)> {
    level.chunks().filter(|(_, ch)| !ch.octree().is_empty()).map(|(c, ch)| (*c, ch.octree().content_hash())).collect()
}

/// Everything a project stores, compared.
fn assert_same(a: &Map, b: &Map) {
    assert_eq!(a.meta, b.meta);
    assert_eq!(a.library, b.library);
    assert_eq!(a.levels.len(), b.levels.len());
    for (la, lb) in a.levels.iter().zip(&b.levels) {
        assert_eq!(la.name, lb.name);
        assert_eq!(la.frame(), lb.frame());
        assert_eq!(la.flags, lb.flags);
        assert_eq!(la.environments, lb.environments);
        assert_eq!(la.air_physics_material, lb.air_physics_material);
        assert_eq!(la.objects, lb.objects);
        assert_eq!(la.lighting, lb.lighting);
        assert_eq!(chunk_hashes(la), chunk_hashes(lb), "chunks of level {:?}", la.name);
        assert_eq!(la.content_hash(), lb.content_hash());
    }
}

fn same(a: &Map, b: &Map) -> bool {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| assert_same(a, b))).is_ok()
}

fn chunk_files(dir: &Path) -> BTreeSet<String> {
    fs::read_dir(dir.join(CHUNKS_DIR))
        .map_or_else(|_| BTreeSet::new(), |rd| rd.map(|e| e.unwrap().file_name().into_string().unwrap()).collect())
}

fn referenced(dir: &Path) -> BTreeSet<String> {
    let text = fs::read_to_string(dir.join(MANIFEST)).unwrap();
    manifest::referenced_hashes(&manifest::read(&text).unwrap()).into_iter().map(chunk_file::file_name).collect()
}

/// The size of the manifest's temporary file in `dir`, if there is one.
fn manifest_temp(dir: &Path) -> Option<usize> {
    let temps: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| atomic::is_temp_of(e.file_name().to_str().unwrap(), MANIFEST))
        .collect();
    assert!(temps.len() <= 1, "{} manifest temporaries", temps.len());
    temps.first().map(|e| fs::read(e.path()).unwrap().len())
}

fn saved(map: &Map) -> (tempfile::TempDir, Project) {
    let dir = tempfile::tempdir().unwrap();
    let mut p = Project::create(dir.path()).unwrap();
    p.save(map).unwrap();
    (dir, p)
}

// ----- round trips -----------------------------------------------------------------------------

#[test]
fn round_trip_equals_the_original() {
    let map = sample_map();
    let (dir, _) = saved(&map);
    let (_, loaded) = Project::open(dir.path()).unwrap();
    assert_same(&map, &loaded);
    // Every cube kind made it (not just equal hashes of two empty maps).
    let level = &loaded.levels[0];
    assert!(level.leaves().any(|(_, _, c)| c.has_pushed_corners()));
    assert!(level.leaves().any(|(_, _, c)| matches!(c.kind, CubeKind::Extended(_))));
    assert!(level.leaves().any(|(_, _, c)| c.draw_backfaces));
    assert!(level.leaves().any(|(_, _, c)| c.path == PathAttrs(3)));
    assert_eq!(level.chunk_count(), 6);
    assert_eq!(level.objects.entities().len(), 2);
    assert_eq!(referenced(dir.path()), chunk_files(dir.path()));
    // The comparison itself can fail.
    let mut other = loaded.clone();
    other.levels[0].set_cube(CubeAddr::new(IVec3::new(0, 120, 0), 0).unwrap(), stone(1)).unwrap();
    assert!(!same(&map, &other));
}

#[test]
fn manifest_is_readable_and_ordered() {
    let map = sample_map();
    let (dir, _) = saved(&map);
    let text = fs::read_to_string(dir.path().join(MANIFEST)).unwrap();
    assert!(text.starts_with("(\n    format_version: 2,\n    meta: (\n"), "{text}");
    assert!(!text.contains("recovery"));
    assert!(text.contains("name: \"stone\""));
    // One line per chunk, `(x, y, z, "hash")`, in grid order.
    let lines: Vec<&str> = text.lines().filter(|l| l.trim_start().starts_with('(') && l.contains(", \"")).collect();
    assert_eq!(lines.len(), 6 + 2, "{text}");
    let first = lines[0].trim();
    let hash = chunk_file::file_name(map.levels[0].chunk(ChunkCoord::new(0, 0, 0)).unwrap().octree().content_hash());
    assert_eq!(first, format!("(0, 0, 0, \"{}\"),", hash.strip_suffix(".bin").unwrap()));
    // Hand-editable: a parse of the text gives the same manifest back.
    let m = manifest::read(&text).unwrap();
    assert_eq!(manifest::write(&m), text);
}

#[test]
fn lighting_round_trips_and_old_manifests_get_daylight() {
    let map = sample_map();
    let (dir, _) = saved(&map);
    let text = fs::read_to_string(dir.path().join(MANIFEST)).unwrap();
    assert!(text.contains("azimuth: 45.5"), "{text}");
    let (_, loaded) = Project::open(dir.path()).unwrap();
    assert_eq!(loaded.levels[0].lighting, map.levels[0].lighting);
    assert_eq!(loaded.levels[1].lighting, LevelLighting::none());

    // A manifest written before lighting existed: no `lighting` blocks.
    let mut old = text.clone();
    while let Some(start) = old.find("lighting: (") {
        // From the field's line to the end of the line that closes its bracket.
        let line_start = old[..start].rfind('\n').map_or(0, |i| i + 1);
        let mut depth = 0i32;
        let mut end = start;
        for (i, ch) in old[start..].char_indices() {
            depth += i32::from(ch == '(') - i32::from(ch == ')');
            if depth == 0 && ch == ')' {
                end = start + i;
                break;
            }
        }
        let line_end = old[end..].find('\n').map_or(old.len(), |i| end + i + 1);
        old.replace_range(line_start..line_end, "");
    }
    assert!(!old.contains("lighting"), "{old}");
    fs::write(dir.path().join(MANIFEST), &old).unwrap();
    let (_, loaded) = Project::open(dir.path()).unwrap();
    assert!(loaded.levels.iter().all(|l| l.lighting == LevelLighting::default()));
}

#[test]
fn saving_twice_into_two_folders_gives_identical_bytes() {
    let map = sample_map();
    let (a, _) = saved(&map);
    let (b, _) = saved(&map.snapshot());
    let read = |d: &Path, f: &str| fs::read(d.join(f)).unwrap();
    assert_eq!(read(a.path(), MANIFEST), read(b.path(), MANIFEST));
    let files = chunk_files(a.path());
    assert_eq!(files, chunk_files(b.path()));
    assert_eq!(files.len(), 7, "the basement's two chunks are equal");
    for f in &files {
        let p = format!("{CHUNKS_DIR}/{f}");
        assert_eq!(read(a.path(), &p), read(b.path(), &p), "{f}");
    }
    // Loading and saving again elsewhere is stable too.
    let (_, loaded) = Project::open(a.path()).unwrap();
    let (c, _) = saved(&loaded);
    assert_eq!(read(a.path(), MANIFEST), read(c.path(), MANIFEST));
}

#[test]
fn identical_chunks_share_one_file() {
    let mut map = Map::new("flat");
    let level = &mut map.levels[0];
    level.fill_box(LatticeBox::new(IVec3::ZERO, IVec3::new(128 * 4, 16, 128 * 3)), stone(0)).unwrap();
    assert_eq!(level.chunk_count(), 12);
    let (dir, _) = saved(&map);
    assert_eq!(chunk_files(dir.path()).len(), 1);
    let (_, loaded) = Project::open(dir.path()).unwrap();
    assert_same(&map, &loaded);
}

// ----- incremental saves -----------------------------------------------------------------------

#[test]
fn one_cube_edit_writes_exactly_one_chunk_file() {
    let mut map = Map::new("big");
    map.library = library();
    terrain(&mut map.levels[0], 10, 10);
    let dir = tempfile::tempdir().unwrap();
    let mut p = Project::create(dir.path()).unwrap();
    let r = p.save(&map).unwrap();
    assert_eq!((r.chunk_files_written, r.chunk_files_deleted, r.chunks_hashed), (100, 0, 100));
    let r = p.save(&map).unwrap();
    assert_eq!((r.chunk_files_written, r.chunk_files_deleted, r.chunks_hashed), (0, 0, 0));
    let snapshot = map.snapshot();
    map.levels[0].set_cube(CubeAddr::new(IVec3::new(300, 100, 500), 2).unwrap(), stone(2)).unwrap();
    let r = p.save(&map).unwrap();
    assert_eq!((r.chunk_files_written, r.chunk_files_deleted, r.chunks_hashed), (1, 1, 1));
    assert!(r.bytes_written > 0);
    assert_eq!(chunk_files(dir.path()).len(), 100);
    // The next session (the writer lock goes with the first).
    drop(p);
    let (mut p2, loaded) = Project::open(dir.path()).unwrap();
    assert_same(&map, &loaded);
    // Undo back to the snapshot: its chunk is back to the old content (a new file again).
    let r = p2.save(&snapshot).unwrap();
    assert_eq!((r.chunk_files_written, r.chunk_files_deleted), (1, 1));
    // After an open nothing is rehashed.
    drop(p2);
    let (mut p3, loaded) = Project::open(dir.path()).unwrap();
    let r = p3.save(&loaded).unwrap();
    assert_eq!((r.chunk_files_written, r.chunks_hashed), (0, 0));
}

#[test]
fn a_different_map_with_equal_generations_is_still_saved_correctly() {
    // Two maps built the same way have the same chunk generations; the project must not take one
    // for the other.
    let mut a = Map::new("a");
    let mut b = Map::new("a");
    a.levels[0].fill_box(LatticeBox::new(IVec3::ZERO, IVec3::new(8, 8, 8)), stone(0)).unwrap();
    b.levels[0].fill_box(LatticeBox::new(IVec3::ZERO, IVec3::new(8, 4, 8)), stone(0)).unwrap();
    assert_eq!(a.levels[0].chunk(ChunkCoord::new(0, 0, 0)).unwrap().generation(), 1);
    assert_eq!(b.levels[0].chunk(ChunkCoord::new(0, 0, 0)).unwrap().generation(), 1);
    let (dir, mut p) = saved(&a);
    let r = p.save(&b).unwrap();
    assert_eq!(r.chunk_files_written, 1);
    assert_same(&b, &Project::open(dir.path()).unwrap().1);
}

#[test]
fn deleted_chunk_files_are_written_again() {
    let map = sample_map();
    let (dir, mut p) = saved(&map);
    let victim = chunk_files(dir.path()).into_iter().next().unwrap();
    fs::remove_file(dir.path().join(CHUNKS_DIR).join(&victim)).unwrap();
    assert!(Project::open(dir.path()).unwrap_err().to_string().contains(&victim));
    assert_eq!(p.save(&map).unwrap().chunk_files_written, 1);
    assert_same(&map, &Project::open(dir.path()).unwrap().1);
}

#[test]
fn removing_a_used_library_record_is_caught_at_save() {
    let mut map = sample_map();
    let (dir, mut p) = saved(&map);
    // A buggy caller removes "grass" without remapping the chunks that use it.
    let grass = map.library.materials().id_of("grass").unwrap();
    map.library.remove_material(grass, None, &|_| false).unwrap();
    let before = fs::read(dir.path().join(MANIFEST)).unwrap();
    let e = p.save(&map).unwrap_err();
    assert!(matches!(e, ProjectError::InvalidMap(_)), "{e}");
    assert!(e.to_string().contains("material #2 is not in the library"), "{e}");
    assert_eq!(fs::read(dir.path().join(MANIFEST)).unwrap(), before, "nothing written");
}

#[test]
fn invalid_maps_are_refused_before_writing() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = Project::create(dir.path()).unwrap();
    let mut map = sample_map();
    map.levels[1].name = "main".into();
    assert!(p.save(&map).unwrap_err().to_string().contains("two levels are named \"main\""));
    let mut map = sample_map();
    map.levels.clear();
    assert!(p.save(&map).unwrap_err().to_string().contains("no level"));
    let mut map = sample_map();
    map.levels[0].air_physics_material = Some(PhysicsId(40));
    assert!(p.save(&map).unwrap_err().to_string().contains("air_physics_material #40"));
    let mut map = sample_map();
    map.levels[0].environments.weather = Some(WeatherEnvId(77));
    assert!(p.save(&map).unwrap_err().to_string().contains("weather environment #77"), "{}", p.save(&map).unwrap_err());
    let mut map = sample_map();
    map.levels[0].set_cube(CubeAddr::new(IVec3::ZERO, 0).unwrap(), stone(9)).unwrap();
    assert!(p.save(&map).unwrap_err().to_string().contains("material #9"));
    assert!(!dir.path().join(MANIFEST).exists());
    assert!(chunk_files(dir.path()).is_empty());
    assert!(matches!(Project::create(saved(&sample_map()).0.path()), Err(ProjectError::AlreadyExists(_))));
}

// ----- crash safety ----------------------------------------------------------------------------

/// `old` edited: chunks changed, added (several new files) and removed (files to delete).
fn edited(old: &Map) -> Map {
    let mut map = old.clone();
    let level = &mut map.levels[0];
    level.set_cube(CubeAddr::new(IVec3::new(8, 88, 8), 3).unwrap(), stone(2)).unwrap();
    level.fill_box(LatticeBox::new(IVec3::new(0, 0, 256), IVec3::new(384, 8, 384)), stone(1)).unwrap();
    level.clear_box(LatticeBox::new(IVec3::new(256, 0, 128), IVec3::new(384, 128, 256))).unwrap();
    map.levels[1].objects.add(Light::point("new", Vec3::ONE)).unwrap();
    map.meta.name = "edited".into();
    map
}

#[test]
fn a_save_stopped_after_any_step_leaves_the_old_or_the_new_map() {
    let old = sample_map();
    let new = edited(&old);
    for step in SaveStep::ALL {
        for reopen in [false, true] {
            let (dir, mut p) = saved(&old);
            // Files of an earlier crash mid-chunk-write must not matter either.
            fs::write(dir.path().join(CHUNKS_DIR).join("0123456789abcdef.bin.tmp"), b"half").unwrap();
            let e = p.save_with(&new, &SaveOptions { fail_at: Some(step) }).unwrap_err();
            assert!(matches!(e, ProjectError::Injected(s) if s == step), "{e}");
            let (p2, loaded) = Project::open(dir.path()).unwrap_or_else(|e| panic!("after {step:?}: {e}"));
            let expected = if step.manifest_replaced() { &new } else { &old };
            assert!(same(expected, &loaded), "after {step:?} the project is not the expected map");
            // The next save (same project, or after a restart: the crashed writer's lock is
            // gone with it) completes and tidies up.
            let mut p = if reopen {
                drop(p);
                p2
            } else {
                p
            };
            p.save(&new).unwrap();
            assert_same(&new, &Project::open(dir.path()).unwrap().1);
            assert_eq!(chunk_files(dir.path()), referenced(dir.path()), "after {step:?}: leftovers");
            assert_eq!(manifest_temp(dir.path()), None, "after {step:?}: manifest temporaries left");
        }
    }
}

#[test]
fn steps_really_happen_in_order() {
    // Each injection point leaves the disk in a different state, so the test above covers every
    // step (and the steps are where they claim to be).
    let old = sample_map();
    let new = edited(&old);
    let mut states = Vec::new();
    for step in SaveStep::ALL {
        let (dir, mut p) = saved(&old);
        let mut renamed = old.clone();
        renamed.meta.name = "renamed".into();
        p.write_recovery(&renamed).unwrap();
        p.save_with(&new, &SaveOptions { fail_at: Some(step) }).unwrap_err();
        let files = chunk_files(dir.path());
        let tmp = manifest_temp(dir.path());
        let recovery = dir.path().join(RECOVERY_DIR).exists();
        states.push((files, tmp, recovery, fs::read(dir.path().join(MANIFEST)).unwrap()));
    }
    for (i, w) in states.windows(2).enumerate() {
        assert_ne!(w[0], w[1], "{:?} and {:?} leave the same state", SaveStep::ALL[i], SaveStep::ALL[i + 1]);
    }
}

// ----- hostile manifests -----------------------------------------------------------------------

/// A saved sample project whose manifest is then replaced by `edit(text)`.
fn with_manifest(edit: impl Fn(&str) -> String) -> (tempfile::TempDir, Result<(Project, Map), ProjectError>) {
    let (dir, _) = saved(&sample_map());
    let text = fs::read_to_string(dir.path().join(MANIFEST)).unwrap();
    let edited = edit(&text);
    assert_ne!(edited, text, "the edit changed nothing");
    fs::write(dir.path().join(MANIFEST), edited).unwrap();
    let r = Project::open(dir.path());
    (dir, r)
}

fn replace_once(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "{from:?} not in the manifest");
    text.replacen(from, to, 1)
}

#[test]
fn hostile_manifests_are_refused_with_file_and_reason() {
    let first_hash = |t: &str| {
        let i = t.find("(0, 0, 0, \"").unwrap() + 11;
        t[i..i + 16].to_owned()
    };
    type Edit = Box<dyn Fn(&str) -> String>;
    let cases: Vec<(&str, Edit, &str)> = vec![
        ("not RON", Box::new(|_| "this is { not ron".into()), "map.ron:1:"),
        ("empty", Box::new(|_| String::new()), "map.ron:"),
        ("binary", Box::new(|_| "\u{0}\u{1}(".into()), "map.ron:1:"),
        ("no version", Box::new(|t| replace_once(t, "format_version: 2,", "")), "no format_version"),
        (
            "future version",
            Box::new(|t| replace_once(t, "format_version: 2,", "format_version: 7,")),
            "format_version 7",
        ),
        (
            "version of wrong type",
            Box::new(|t| replace_once(t, "format_version: 2", "format_version: \"2\"")),
            "map.ron:2:",
        ),
        ("wrong type", Box::new(|t| replace_once(t, "chunk_size_log2: 4", "chunk_size_log2: \"big\"")), "map.ron:"),
        ("negative size", Box::new(|t| replace_once(t, "chunk_size_log2: 4", "chunk_size_log2: -4")), "map.ron:"),
        ("missing field", Box::new(|t| replace_once(t, "            flags: (", "            flagz: (")), "flagz"),
        ("unknown field", Box::new(|t| replace_once(t, "    levels: [", "    colour: 3,\n    levels: [")), "colour"),
        ("missing levels", Box::new(|t| t[..t.find("    levels: [").unwrap()].to_owned() + ")"), "levels"),
        (
            "no levels",
            Box::new(|t| t[..t.find("    levels: [").unwrap()].to_owned() + "    levels: [],\n)"),
            "at least one level",
        ),
        (
            "missing chunk file",
            Box::new(move |t| replace_once(t, &first_hash(t), "0000000000000000")),
            "missing (level \"main\", chunk (0, 0, 0) names it",
        ),
        ("bad hash", Box::new(|t| replace_once(t, "(0, 0, 0, \"", "(0, 0, 0, \"x")), "not a content hash"),
        (
            "upper-case hash",
            Box::new(move |t| {
                let h = first_hash(t);
                replace_once(t, &h, &h.to_uppercase().replace(|c: char| c.is_ascii_digit(), "A"))
            }),
            "not a content hash",
        ),
        ("duplicate chunk", Box::new(|t| replace_once(t, "(1, 0, 0, \"", "(0, 0, 0, \"")), "listed twice"),
        (
            "sun below the ground",
            Box::new(|t| replace_once(t, "elevation: 50.0", "elevation: -120.0")),
            "lighting: sun elevation is -120",
        ),
        ("too many bounces", Box::new(|t| replace_once(t, "bounces: 2", "bounces: 77")), "bounces is 77"),
        ("chunk outside the grid", Box::new(|t| replace_once(t, "(1, 0, 0, \"", "(1, 300, 0, \"")), "outside the grid"),
        (
            "chunk size too big",
            Box::new(|t| replace_once(t, "chunk_size_log2: 4", "chunk_size_log2: 40")),
            "not in 0..=15",
        ),
        (
            "chunk size differs from its files",
            Box::new(|t| replace_once(t, "chunk_size_log2: 4", "chunk_size_log2: 5")),
            "differs from the level's 5",
        ),
        (
            "center outside",
            Box::new(|t| replace_once(t, "y: 0,\n                x: 1,", "y: 999,\n                x: 1,")),
            "center_chunk",
        ),
        (
            "duplicate level name",
            Box::new(|t| replace_once(t, "name: \"basement\"", "name: \"main\"")),
            "another level has this name",
        ),
        (
            "duplicate material name",
            Box::new(|t| replace_once(t, "name: \"iron\"", "name: \"stone\"")),
            "share the name \"stone\"",
        ),
        ("empty material name", Box::new(|t| replace_once(t, "name: \"iron\"", "name: \"\"")), "library"),
        (
            "material id above max",
            Box::new(|t| {
                replace_once(
                    t,
                    "                1: (\n                    name: \"iron\"",
                    "                70000: (\n                    name: \"iron\"",
                )
            }),
            "map.ron:",
        ),
        (
            "material with missing physics",
            Box::new(|t| replace_once(t, "physics: 1,", "physics: 77,")),
            "physics material #77",
        ),
        (
            "air physics out of range",
            Box::new(|t| replace_once(t, "air_physics_material: Some(1)", "air_physics_material: Some(9)")),
            "air_physics_material #9",
        ),
        (
            "unknown default env",
            Box::new(|t| replace_once(t, "sound: Some(0)", "sound: Some(9)")),
            "sound environment #9",
        ),
        (
            "region with missing env",
            Box::new(|t| replace_once(t, "environment: Sound(0)", "environment: Sound(5)")),
            "objects",
        ),
        ("NaN light", Box::new(|t| replace_once(t, "intensity: 1.0", "intensity: NaN")), "objects"),
        ("gamemode too long", Box::new(|t| replace_once(t, "\"ctf\"", "\"capture-the-flag-long\"")), "meta"),
        (
            "deep nesting",
            Box::new(|t| replace_once(t, "gamemodes: [", &format!("gamemodes: {}[", "[".repeat(10_000)))),
            "map.ron:",
        ),
    ];
    for (what, edit, expected) in cases {
        let (dir, r) = with_manifest(edit);
        let e = match r {
            Ok(_) => panic!("{what}: accepted"),
            Err(e) => e.to_string(),
        };
        let file_named = e.starts_with(&dir.path().join(MANIFEST).display().to_string())
            || e.starts_with(&dir.path().join(CHUNKS_DIR).display().to_string());
        assert!(file_named, "{what}: {e}");
        assert!(e.contains(expected), "{what}: {e:?} lacks {expected:?}");
    }
}

#[test]
fn swapped_chunk_file_is_a_hash_mismatch() {
    let (dir, _) = saved(&sample_map());
    let c = dir.path().join(CHUNKS_DIR);
    let files: Vec<String> =
        chunk_files(dir.path()).into_iter().filter(|f| fs::read(c.join(f)).unwrap()[5] == 4).collect();
    fs::copy(c.join(&files[1]), c.join(&files[0])).unwrap();
    let e = Project::open(dir.path()).unwrap_err().to_string();
    assert!(e.contains(&files[0]) && e.contains("content hash is"), "{e}");
}

#[test]
fn chunk_ids_are_checked_against_the_library() {
    let map = sample_map();
    let (dir, _) = saved(&map);
    // A valid chunk file using material 2 ("grass"), listed under a library without it.
    let text = fs::read_to_string(dir.path().join(MANIFEST)).unwrap();
    let text = replace_once(&text, "name: \"grass\"", "name: \"grass2\"");
    fs::write(dir.path().join(MANIFEST), &text).unwrap();
    Project::open(dir.path()).unwrap();
    let i = text.find("                2: (\n                    name: \"grass2\"").unwrap();
    let j = i + text[i..].find("\n                ),\n").unwrap() + "\n                ),\n".len();
    let without = format!("{}{}", &text[..i], &text[j..]);
    fs::write(dir.path().join(MANIFEST), without).unwrap();
    let e = Project::open(dir.path()).unwrap_err().to_string();
    assert!(e.contains("material #2 is not in the library") && e.contains(CHUNKS_DIR), "{e}");
}

// ----- loading as parallel jobs ------------------------------------------------------------------

/// Runs jobs last to first: later chunk files are decoded (and fail) before earlier ones.
struct Backwards;

impl Jobs for Backwards {
    fn run(&self, n: usize, job: &(dyn Fn(usize) + Sync)) {
        (0..n).rev().for_each(job);
    }
}

/// Runs jobs on scoped threads, each taking the next job (what the editor and `pmfc` pass).
struct Threads(usize);

impl Jobs for Threads {
    fn run(&self, n: usize, job: &(dyn Fn(usize) + Sync)) {
        let next = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..self.0 {
                s.spawn(|| {
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        if k >= n {
                            break;
                        }
                        job(k);
                    }
                });
            }
        });
    }
}

/// Every way of running the jobs the tests compare with [`Sequential`].
fn runners() -> Vec<(&'static str, Box<dyn Jobs>)> {
    vec![("backwards", Box::new(Backwards)), ("2 threads", Box::new(Threads(2))), ("5 threads", Box::new(Threads(5)))]
}

/// [`sample_map`] plus a level of twelve identical chunks (one file, used twelve times).
fn sample_map_with_shared_chunks() -> Map {
    let mut map = sample_map();
    let mut flat = Level::new("flat", 4).unwrap();
    flat.fill_box(LatticeBox::new(IVec3::ZERO, IVec3::new(128 * 4, 24, 128 * 3)), stone(2)).unwrap();
    assert_eq!(flat.chunk_count(), 12);
    map.levels.push(flat);
    map
}

/// [`load`] of the project in `dir` with `jobs`.
fn load_with(dir: &Path, jobs: &dyn Jobs) -> Result<(Map, Vec<BTreeMap<ChunkCoord, u64>>), ProjectError> {
    let path = dir.join(MANIFEST);
    load(dir, &path, &fs::read(&path).unwrap(), jobs)
}

#[test]
fn parallel_loads_equal_the_sequential_load() {
    let map = sample_map_with_shared_chunks();
    let (dir, _) = saved(&map);
    let (want, want_hashes) = load_with(dir.path(), &Sequential).unwrap();
    assert_same(&map, &want);
    // The hashes load returns are the chunks' content hashes, shared chunks included.
    let expected: Vec<BTreeMap<ChunkCoord, u64>> =
        map.levels.iter().map(|l| chunk_hashes(l).into_iter().collect()).collect();
    assert_eq!(want_hashes, expected);
    assert_eq!(want_hashes[2].len(), 12);
    for (name, jobs) in runners() {
        let (got, hashes) = load_with(dir.path(), jobs.as_ref()).unwrap();
        assert_same(&want, &got);
        assert_eq!(hashes, want_hashes, "{name}");
        for (a, b) in want.levels.iter().zip(&got.levels) {
            for ((ca, cha), (cb, chb)) in a.chunks().zip(b.chunks()) {
                assert_eq!(ca, cb, "{name}");
                assert_eq!(cha.octree(), chb.octree(), "{name}: chunk {ca:?}");
                assert_eq!(cha.octree().node_count(), chb.octree().node_count(), "{name}: chunk {ca:?}");
            }
        }
    }
    // A project opened in parallel remembers every chunk's hash: saving it unchanged hashes and
    // writes nothing.
    let (mut p, loaded) = Project::open_with(dir.path(), &Threads(3)).unwrap();
    assert_same(&map, &loaded);
    let r = p.save(&loaded).unwrap();
    assert_eq!((r.chunks_hashed, r.chunk_files_written), (0, 0));
}

#[test]
fn a_damaged_chunk_file_gives_the_same_error_whatever_runs_the_jobs() {
    let map = sample_map_with_shared_chunks();
    let (dir, _) = saved(&map);
    let c = dir.path().join(CHUNKS_DIR);
    // The first and the last chunk file in manifest order.
    let first = chunk_file::file_name(map.levels[0].chunks().next().unwrap().1.octree().content_hash());
    let last = chunk_file::file_name(map.levels[2].chunks().next().unwrap().1.octree().content_hash());
    let errors = |what: &str| -> String {
        let want = load_with(dir.path(), &Sequential).map(|_| ()).unwrap_err().to_string();
        for (name, jobs) in runners() {
            let got = load_with(dir.path(), jobs.as_ref()).map(|_| ()).unwrap_err().to_string();
            assert_eq!(got, want, "{what}, {name}");
        }
        want
    };
    // The last file missing: named with the first chunk that uses it.
    fs::rename(c.join(&last), c.join("aside")).unwrap();
    let e = errors("last missing");
    assert!(e.contains(&last) && e.contains("missing (level \"flat\", chunk (0, 0, 0)"), "{e}");
    // The first file truncated too: its error comes first, with its offset, even when the last
    // file's job ran (and failed) before it.
    let bytes = fs::read(c.join(&first)).unwrap();
    fs::write(c.join(&first), &bytes[..bytes.len() - 3]).unwrap();
    let e = errors("first truncated, last missing");
    assert!(e.contains(&first) && e.contains("at byte"), "{e}");
    // The first file back, the last one's content swapped for another's: a hash mismatch.
    fs::write(c.join(&first), &bytes).unwrap();
    fs::copy(c.join(&first), c.join(&last)).unwrap();
    let e = errors("last swapped");
    assert!(e.contains(&last) && e.contains("content hash is"), "{e}");
}

// ----- hostile chunk files ---------------------------------------------------------------------

fn sample_chunk() -> (Octree, Vec<u8>) {
    let map = sample_map();
    let ch = map.levels[0].chunk(ChunkCoord::new(0, 0, 0)).unwrap();
    (ch.octree().clone(), chunk_file::encode(ch.octree(), 4))
}

#[test]
fn chunk_file_round_trip_and_layout() {
    let (tree, bytes) = sample_chunk();
    assert_eq!(&bytes[..4], b"PMFC");
    assert_eq!(bytes[4], 1);
    assert_eq!(bytes[5], 4);
    let lib = library();
    let back = chunk_file::decode(&bytes, 4, Some(&lib)).unwrap();
    assert_eq!(back, tree);
    assert_eq!(back.content_hash(), tree.content_hash());
    // The hash computed while decoding is the content hash.
    let (_, hash) = chunk_file::decode_hashed(&bytes, 4, Some(&lib)).unwrap();
    assert_eq!(hash, tree.content_hash());
    back.check_invariants().unwrap();
    let empty = Octree::new(7);
    assert_eq!(chunk_file::decode(&chunk_file::encode(&empty, 4), 4, None).unwrap(), empty);
    assert_eq!(chunk_file::encode_payload(&empty), vec![0]);
}

#[test]
fn truncated_chunk_files_are_errors() {
    let (_, bytes) = sample_chunk();
    for len in 0..bytes.len() {
        assert!(chunk_file::decode(&bytes[..len], 4, None).is_err(), "truncated to {len}");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(chunk_file::decode(&longer, 4, None).is_err());
}

#[test]
fn corrupted_chunk_files_never_panic() {
    let (tree, bytes) = sample_chunk();
    let lib = library();
    for i in 0..bytes.len() {
        for bit in [0x01u8, 0x80] {
            let mut b = bytes.clone();
            b[i] ^= bit;
            // Either refused, or (a flip the LZ4 checksum cannot see, like in an unused header
            // field) loaded as a different tree that the content hash check then refuses.
            if let Ok(t) = chunk_file::decode(&b, 4, Some(&lib)) {
                assert!(t == tree || t.content_hash() != tree.content_hash(), "byte {i}");
            }
        }
    }
}

#[test]
fn forged_headers_are_errors() {
    let (_, bytes) = sample_chunk();
    let set = |at: usize, v: &[u8]| {
        let mut b = bytes.clone();
        b[at..at + v.len()].copy_from_slice(v);
        chunk_file::decode(&b, 4, None).unwrap_err().to_string()
    };
    assert!(set(0, b"PMFX").contains("not a pmfedit chunk file"));
    assert!(set(4, &[2]).contains("version 2"));
    assert!(set(5, &[3]).contains("differs from the level's 4"));
    assert!(set(5, &[200]).contains("not in 0..=15"));
    assert!(set(6, &u32::MAX.to_le_bytes()).contains("impossible"));
    assert!(set(6, &0u32.to_le_bytes()).contains("LZ4 frame"));
    let n = u32::from_le_bytes(bytes[6..10].try_into().unwrap());
    assert!(set(6, &(n + 1).to_le_bytes()).contains("declared"));
    assert!(set(6, &(n - 1).to_le_bytes()).contains("more than"));
}

/// A chunk file around a hand-made payload.
fn file_with_payload(payload: &[u8], size: u8) -> Vec<u8> {
    let mut w = Writer::new();
    w.bytes(b"PMFC");
    w.u8(1);
    w.u8(size);
    w.u32(payload.len() as u32);
    w.bytes(&lz4f::compress(payload));
    w.into_inner()
}

#[test]
fn forged_payloads_are_errors() {
    let lib = library();
    let geometry = |m: u16| {
        let mut v = vec![2u8];
        for x in [m, 0, 0] {
            v.extend(x.to_le_bytes());
        }
        v
    };
    let extended = |mask: u8, corner: [i8; 3], faces_equal: bool| {
        let mut v = vec![3u8];
        for i in 0..6u16 {
            v.extend((if faces_equal { 0 } else { i % 2 }).to_le_bytes());
        }
        v.extend([0u8; 12]);
        v.extend([0u8; 2]);
        v.push(mask);
        for _ in 0..mask.count_ones() {
            v.extend(corner.map(|c| c as u8));
        }
        v
    };
    let parent_of = |kids: &[Vec<u8>]| {
        let mut v = vec![1u8];
        for k in kids {
            v.extend(k);
        }
        v
    };
    let air = vec![0u8];
    let ok_kids: Vec<Vec<u8>> = (0..8).map(|i| if i == 0 { geometry(1) } else { air.clone() }).collect();
    let check = |payload: Vec<u8>, size: u8, lib: IdCheck<'_>| {
        let mut r = Reader::new(&payload, "payload");
        chunk_file::decode_payload(&mut r, size, lib).map(|_| ()).map_err(|e| e.to_string())
    };
    // The well-formed baseline passes, so each failure below is due to its one defect.
    assert_eq!(check(parent_of(&ok_kids), 3, Some(&lib)), Ok(()));
    assert_eq!(check(extended(0b1, [-2, -1, 0], false), 3, Some(&lib)), Ok(()));
    let cases: Vec<(&str, Vec<u8>, u8, &str)> = vec![
        ("parent of edge 1", parent_of(&ok_kids), 0, "minimum edge"),
        ("missing children", parent_of(&ok_kids[..5]), 3, "unexpected end"),
        ("trailing bytes", [parent_of(&ok_kids), vec![0]].concat(), 3, "trailing"),
        ("reserved bits", vec![0x10], 3, "reserved bits"),
        ("unknown kind", vec![0x07], 3, "unknown node kind 7"),
        ("parent with flags", [vec![0x41], parent_of(&ok_kids)[1..].to_vec()].concat(), 3, "flag bits"),
        ("corner at rest flagged", extended(0b1, [0, 0, 0], false), 3, "at rest"),
        ("corner outside", extended(0b1, [5, 0, 0], false), 3, "outside -16..=0"),
        ("non-canonical extended", extended(0, [0, 0, 0], true), 3, "not canonical"),
        ("zero path attrs", vec![0x80, 0, 0], 3, "path attributes"),
        ("unknown material", geometry(9), 3, "material #9 is not in the library"),
        ("empty", vec![], 3, "unexpected end"),
    ];
    for (what, payload, size, expected) in cases {
        let e = check(payload, size, Some(&lib)).expect_err(what);
        assert!(e.contains(expected), "{what}: {e}");
    }
    // A merged-able parent is accepted by the reader but canonicalized, so its hash differs from
    // what a writer would name it: the loader's hash check refuses it.
    let mergeable = parent_of(&vec![geometry(1); 8]);
    let (t, hash) = chunk_file::decode_hashed(&file_with_payload(&mergeable, 0), 0, Some(&lib)).unwrap();
    assert_eq!(t.node_count(), 1);
    // The hash a load compares with the file name is the merged tree's, not that of the nine
    // nodes read.
    assert_eq!(hash, t.content_hash());
}

// ----- recovery --------------------------------------------------------------------------------

#[test]
fn recovery_round_trip() {
    let old = sample_map();
    let new = edited(&old);
    let (dir, p) = saved(&old);
    assert_eq!(Project::recovery_available(dir.path()), None);
    let manifest_before = fs::read(dir.path().join(MANIFEST)).unwrap();
    let r = p.write_recovery(&new).unwrap();
    assert!(r.chunk_files_written >= 2);
    assert_eq!(fs::read(dir.path().join(MANIFEST)).unwrap(), manifest_before, "map.ron untouched");
    // A second autosave without edits writes no chunk file and hashes nothing.
    let r = p.write_recovery(&new).unwrap();
    assert_eq!((r.chunk_files_written, r.chunks_hashed), (0, 0));
    let info = Project::recovery_available(dir.path()).unwrap();
    assert!(info.newer_than_manifest && info.based_on_current_manifest);
    assert!(info.saved_at <= SystemTime::now());
    // The real manifest still opens as the old map; the recovery as the new one.
    assert_same(&old, &Project::open(dir.path()).unwrap().1);
    // The editor restarts (its lock goes with it) and recovers.
    drop(p);
    let (mut rp, recovered) = Project::open_recovery(dir.path()).unwrap();
    assert_same(&new, &recovered);
    // Saving the recovered map: its chunk files are already there; the recovery goes away.
    let r = rp.save(&recovered).unwrap();
    assert_eq!(r.chunk_files_written, 0);
    assert!(r.chunk_files_deleted >= 1);
    assert_eq!(Project::recovery_available(dir.path()), None);
    assert!(!dir.path().join(RECOVERY_DIR).exists());
    assert_same(&new, &Project::open(dir.path()).unwrap().1);
    assert_eq!(chunk_files(dir.path()), referenced(dir.path()));
}

#[test]
fn discarding_the_recovery_removes_its_chunk_files() {
    let old = sample_map();
    let (dir, p) = saved(&old);
    let files = chunk_files(dir.path());
    p.write_recovery(&edited(&old)).unwrap();
    assert!(chunk_files(dir.path()).len() > files.len());
    // Not while a writer holds the project.
    assert!(matches!(Project::discard_recovery(dir.path()), Err(ProjectError::Locked { .. })));
    drop(p);
    Project::discard_recovery(dir.path()).unwrap();
    assert_eq!(Project::recovery_available(dir.path()), None);
    assert_eq!(chunk_files(dir.path()), files);
    assert_same(&old, &Project::open(dir.path()).unwrap().1);
    // Nothing to discard is fine.
    Project::discard_recovery(dir.path()).unwrap();
}

#[test]
fn recovery_survives_an_interrupted_save_and_is_then_older() {
    let old = sample_map();
    let new = edited(&old);
    let (dir, mut p) = saved(&old);
    let mut newer = new.clone();
    newer.meta.name = "newer".into();
    p.write_recovery(&newer).unwrap();
    std::thread::sleep(Duration::from_millis(30));
    // The save replaced map.ron, then "crashed" before removing the recovery.
    p.save_with(&new, &SaveOptions { fail_at: Some(SaveStep::Renamed) }).unwrap_err();
    let info = Project::recovery_available(dir.path()).unwrap();
    assert!(!info.based_on_current_manifest);
    assert!(!info.newer_than_manifest, "{info:?}");
    // Its chunk files are all still there.
    assert_same(&newer, &Project::open_recovery(dir.path()).unwrap().1);
    assert_same(&new, &Project::open(dir.path()).unwrap().1);
}

#[test]
fn cleanup_keeps_the_chunk_files_of_a_recovery() {
    // A save removes the recovery before cleaning up; should that removal fail, the cleanup
    // must still not delete the files the recovery names.
    let old = sample_map();
    let new = edited(&old);
    let (dir, p) = saved(&old);
    p.write_recovery(&new).unwrap();
    let listing = list_chunks(&dir.path().join(CHUNKS_DIR)).unwrap();
    let keep: BTreeSet<u64> =
        manifest::referenced_hashes(&manifest::read(&fs::read_to_string(dir.path().join(MANIFEST)).unwrap()).unwrap());
    assert!(listing.files.len() > keep.len());
    let mut report = SaveReport::default();
    delete_unreferenced(dir.path(), keep.clone(), &listing.files, &[], &mut report, &|| Ok(())).unwrap();
    assert_eq!(report.chunk_files_deleted, 0);
    assert_same(&new, &Project::open_recovery(dir.path()).unwrap().1);
    // Without the recovery they go.
    fs::remove_dir_all(dir.path().join(RECOVERY_DIR)).unwrap();
    delete_unreferenced(dir.path(), keep, &listing.files, &[], &mut report, &|| Ok(())).unwrap();
    assert!(report.chunk_files_deleted > 0);
    assert_eq!(chunk_files(dir.path()), referenced(dir.path()));
    // An unreadable recovery manifest stops deletion.
    let (dir, p) = saved(&old);
    p.write_recovery(&new).unwrap();
    fs::write(dir.path().join(RECOVERY_DIR).join(MANIFEST), "garbage(").unwrap();
    let listing = list_chunks(&dir.path().join(CHUNKS_DIR)).unwrap();
    let mut report = SaveReport::default();
    delete_unreferenced(dir.path(), BTreeSet::new(), &listing.files, &[], &mut report, &|| Ok(())).unwrap();
    assert_eq!(report.chunk_files_deleted, 0);
    assert_eq!(report.cleanup_warnings.len(), 1);
}

#[test]
fn temporary_leftovers_do_not_confuse_open_and_are_removed() {
    let map = sample_map();
    let (dir, mut p) = saved(&map);
    let stale = dir.path().join(CHUNKS_DIR).join("fedcba9876543210.bin.tmp");
    fs::write(&stale, b"partial").unwrap();
    fs::write(dir.path().join("map.ron.tmp"), b"(format_ver").unwrap();
    fs::write(dir.path().join(CHUNKS_DIR).join("README"), b"not ours").unwrap();
    assert_same(&map, &Project::open(dir.path()).unwrap().1);
    p.save(&map).unwrap();
    assert!(!stale.exists());
    assert!(dir.path().join(CHUNKS_DIR).join("README").exists(), "foreign files are left alone");
}

// ----- one writer at a time --------------------------------------------------------------------

/// A second writer is refused with a clear error while the first holds the project; readers are
/// not; the lock goes with the writer.
#[test]
fn a_second_writer_is_refused_while_the_first_holds_the_project() {
    let map = sample_map();
    let (dir, p) = saved(&map);
    let e = Project::open_locked(dir.path()).unwrap_err();
    assert!(matches!(&e, ProjectError::Locked { holder: Some(pid), .. } if *pid == std::process::id()), "{e}");
    assert!(e.to_string().contains("the project is open in another window of this process"), "{e}");
    // Reading is fine, writing through it is not.
    let (mut reader, loaded) = Project::open(dir.path()).unwrap();
    assert_same(&map, &loaded);
    assert!(matches!(reader.save(&edited(&map)), Err(ProjectError::Locked { .. })));
    assert!(matches!(reader.write_recovery(&edited(&map)), Err(ProjectError::Locked { .. })));
    assert!(matches!(reader.lock(), Err(ProjectError::Locked { .. })));
    assert_same(&map, &Project::open(dir.path()).unwrap().1);
    drop(p);
    reader.save(&edited(&map)).unwrap();
    assert_same(&edited(&map), &Project::open(dir.path()).unwrap().1);
    // A new project in a folder someone is creating one in.
    let other = tempfile::tempdir().unwrap();
    let first = Project::create(other.path()).unwrap();
    assert!(matches!(Project::create(other.path()), Err(ProjectError::Locked { .. })));
    drop(first);
}

// ----- manifest checks: duplicate keys and the format's limits ---------------------------------

/// Two records with one id in a `map.ron` table: refused with line and column (deserialising kept
/// the second and dropped the first without a word; the next save made it permanent).
#[test]
fn a_duplicate_id_in_a_table_is_refused_with_line_and_column() {
    let (dir, r) = with_manifest(|t| replace_once(t, "                1: (\n", "                0: (\n"));
    let e = r.unwrap_err();
    let text = fs::read_to_string(dir.path().join(MANIFEST)).unwrap();
    let second = text.match_indices("                0: (\n").nth(1).unwrap().0;
    let line = text[..second].matches('\n').count() + 1;
    assert!(matches!(&e, ProjectError::File { position: Some((l, 17)), .. } if *l == line), "{e:?}");
    let msg = e.to_string();
    assert!(msg.contains(&format!("map.ron:{line}:17: id 0 appears twice in one table")), "{msg}");
}

/// A light controller's pattern of 255 steps (PMF holds 1..=32) passed the manifest check and
/// failed only at export, naming the output file: now loading refuses it naming `map.ron` and the
/// entity, and saving refuses to write it.
#[test]
fn an_entity_the_format_cannot_hold_is_refused_at_load_and_save() {
    use crate::format::pmf::entity::DynLightCtl;
    let mut map = sample_map();
    let ctl = DynLightCtl { pattern_len: 8, ..DynLightCtl::default() };
    map.levels[0].objects.add(MapEntity::new("blinker", EntityData::DynLightCtl(ctl))).unwrap();
    let (dir, p) = saved(&map);
    drop(p);
    let text = fs::read_to_string(dir.path().join(MANIFEST)).unwrap();
    fs::write(dir.path().join(MANIFEST), replace_once(&text, "pattern_len: 8,", "pattern_len: 255,")).unwrap();
    let e = Project::open(dir.path()).unwrap_err().to_string();
    assert!(e.starts_with(&format!("{}: level 0 (\"", dir.path().join(MANIFEST).display())), "{e}");
    assert!(e.contains("(\"blinker\")") && e.contains("pattern length 255 is not in 1..=32"), "{e}");

    let MapEntity { entity, .. } = map.levels[0].objects.entities().iter().last().unwrap().1.clone();
    let EntityData::DynLightCtl(mut bad) = entity.data else { panic!("the controller") };
    bad.pattern_len = 255;
    let mut bad_map = map.clone();
    bad_map.levels[0].objects.add(MapEntity::new("bad", EntityData::DynLightCtl(bad))).unwrap();
    let other = tempfile::tempdir().unwrap();
    let e = Project::create(other.path()).unwrap().save(&bad_map).unwrap_err();
    assert!(matches!(e, ProjectError::InvalidMap(_)), "{e}");
    assert!(e.to_string().contains("pattern length 255"), "{e}");
}

/// 256 levels do not fit a PMF file's `u8` level count: refused at load and at save.
#[test]
fn too_many_levels_are_refused_at_load_and_save() {
    let mut map = Map::new("many");
    let (dir, p) = saved(&map);
    drop(p);
    for i in 1..256 {
        map.levels.push(Level::new(format!("level {i}"), 4).unwrap());
    }
    let e = Project::open_locked(dir.path()).unwrap().0.save(&map).unwrap_err();
    assert!(e.to_string().contains("256 levels: a PMF file holds at most 255"), "{e}");
    // The same map written by hand (or by an older build).
    let text = fs::read_to_string(dir.path().join(MANIFEST)).unwrap();
    let start = text.find("    levels: [\n").unwrap() + "    levels: [\n".len();
    let end = text.rfind("    ],\n").unwrap();
    let level = &text[start..end];
    let levels: String = (0..256).map(|i| level.replacen("name: \"main\"", &format!("name: \"l{i}\""), 1)).collect();
    fs::write(dir.path().join(MANIFEST), format!("{}{levels}{}", &text[..start], &text[end..])).unwrap();
    let e = Project::open(dir.path()).unwrap_err().to_string();
    assert!(e.starts_with(&format!("{}: 256 levels", dir.path().join(MANIFEST).display())), "{e}");
}

// ----- path attribute sets ---------------------------------------------------------------------

/// Sets (name, facing) are saved in `map.ron` and load back; a project without them (written
/// before they existed) loads with none, its painted ids intact, and saves back unchanged.
#[test]
fn path_attribute_sets_are_saved_and_old_projects_load() {
    use crate::map::path_sets::PathSet;
    let old = sample_map();
    let (dir, p) = saved(&old);
    drop(p);
    let text = fs::read_to_string(dir.path().join(MANIFEST)).unwrap();
    assert!(!text.contains("path_sets"), "no sets, no field: old projects and new ones look alike");
    let (mut p, loaded) = Project::open(dir.path()).unwrap();
    assert!(loaded.path_sets.0.is_empty());
    assert!(loaded.levels[0].leaves().any(|(_, _, c)| c.path == PathAttrs(3)));
    let mut named = loaded.clone();
    assert_eq!(named.path_sets.name_unnamed(named.levels[0].leaves().map(|(_, _, c)| c.path)), 1);
    named.path_sets.0.insert(3, PathSet { name: "cover".into(), facing: Some([1.0, 0.0, 0.0]) });
    p.save(&named).unwrap();
    let text = fs::read_to_string(dir.path().join(MANIFEST)).unwrap();
    assert!(
        text.contains(
            "path_sets: {\n        3: (\n            name: \"cover\",\n            facing: Some((1.0, 0.0, 0.0)),"
        ),
        "{text}"
    );
    drop(p);
    let (_, back) = Project::open(dir.path()).unwrap();
    assert_eq!(back.path_sets, named.path_sets);
    // An invalid set is refused at load, naming the file.
    let bad = text.replace("name: \"cover\"", "name: \"\"");
    fs::write(dir.path().join(MANIFEST), bad).unwrap();
    let e = Project::open(dir.path()).unwrap_err().to_string();
    assert!(e.contains("map.ron: path attribute set 3: the name is empty"), "{e}");
}
