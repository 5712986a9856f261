//! `pmfc` as a user runs it: on every golden file, on PAF folders, and on broken input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn pmfc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pmfc")).args(args).output().expect("run pmfc")
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/golden/pmf")
}

fn golden_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(golden_dir())
        .unwrap()
        .map(|e| {
            let dir = e.unwrap().path();
            let name = dir.file_name().unwrap().to_string_lossy().into_owned();
            dir.join(format!("{name}.pmf"))
        })
        .collect();
    files.sort();
    assert!(files.len() >= 10, "golden files missing");
    files
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn inspect_prints_every_golden_file_as_text_and_json() {
    for f in golden_files() {
        let path = f.to_str().unwrap();
        let out = pmfc(&["inspect", path]);
        assert!(out.status.success(), "{path}: {}", stderr(&out));
        let text = stdout(&out);
        for field in [
            "name:",
            "levels:",
            "chunk grid:",
            "cubes:",
            "faces:",
            "lightmaps:",
            "lights:",
            "entities:",
            "embedded archive:",
        ] {
            assert!(text.contains(field), "{path}: no `{field}` in\n{text}");
        }
        let out = pmfc(&["inspect", "--json", path]);
        assert!(out.status.success(), "{path}: {}", stderr(&out));
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(json["levels"].as_array().is_some_and(|l| !l.is_empty()), "{path}");
    }
}

#[test]
fn inspect_reports_figures_of_the_grid_case() {
    let f = golden_dir().join("grid_3x2x4/grid_3x2x4.pmf");
    let out = pmfc(&["inspect", "--json", f.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let level = &json["levels"][0];
    assert_eq!(level["grid"], serde_json::json!([3, 2, 4]));
    assert_eq!(level["chunks"].as_array().unwrap().len(), 24);
    assert_eq!(level["center_chunk"], serde_json::json!([1, 0, 2]));
}

#[test]
fn inspect_sizes_add_up_to_the_file() {
    for name in ["lightmaps", "visibility", "dynamic_fast_lights", "pathfinding"] {
        let f = golden_dir().join(format!("{name}/{name}.pmf"));
        let len = std::fs::metadata(&f).unwrap().len();
        let out = pmfc(&["inspect", "--json", "--sizes", f.to_str().unwrap()]);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let sizes = &json["sizes"];
        assert_eq!(sizes["file"], len, "{name}");
        let parts = sizes["parts"].as_array().unwrap();
        let part = |n: &str| parts.iter().find(|p| p["name"] == n).unwrap_or_else(|| panic!("{name}: no part {n}"));
        // The parts are a partition of the chunk blocks' compressed bytes.
        let compressed: i64 = parts.iter().map(|p| p["compressed"].as_i64().unwrap()).sum();
        assert_eq!(compressed + sizes["outside_chunks"].as_i64().unwrap(), len as i64, "{name}");
        let vertices: u64 =
            json["levels"].as_array().unwrap().iter().map(|l| l["totals"]["vertices"].as_u64().unwrap()).sum();
        assert_eq!(part("vertex positions")["raw"], 12 * vertices, "{name}");
        let luxels = &sizes["luxels"];
        assert_eq!(luxels["total"], json["luxels"]["luxels"], "{name}");
        let total = luxels["total"].as_u64().unwrap();
        let used: u64 = ["face_area", "padding", "filler"].iter().map(|k| luxels[*k].as_u64().unwrap()).sum();
        assert_eq!(used, total, "{name}: {luxels}");
        if name == "visibility" {
            assert!(part("visibility, own chunk")["raw"].as_u64().unwrap() > 0, "{name}");
        }
        let text = stdout(&pmfc(&["inspect", "--sizes", f.to_str().unwrap()]));
        assert!(text.contains("sizes (") && text.contains("vertex lightmap UVs"), "{name}: {text}");
    }
}

#[test]
fn broken_input_exits_nonzero_with_file_section_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let src = golden_dir().join("geometry/geometry.pmf");
    let bytes = std::fs::read(&src).unwrap();
    let bad = dir.path().join("cut.pmf");
    std::fs::write(&bad, &bytes[..bytes.len() / 2]).unwrap();
    let out = pmfc(&["inspect", bad.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.starts_with(&format!("{}: ", bad.display())), "{err}");
    assert!(err.contains(" at byte "), "{err}");

    let missing = dir.path().join("missing.pmf");
    let out = pmfc(&["inspect", missing.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(stderr(&out).starts_with(&format!("{}: ", missing.display())));
}

#[test]
fn paf_pack_list_unpack_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("textures/walls")).unwrap();
    std::fs::write(src.join("textures/walls/brick.ptf"), b"brick bytes").unwrap();
    std::fs::write(src.join("readme.txt"), b"hello").unwrap();
    let archive = dir.path().join("out.paf");
    let out = pmfc(&["paf", "pack", src.to_str().unwrap(), archive.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let first = std::fs::read(&archive).unwrap();
    // Deterministic: packing again gives the same bytes.
    let out = pmfc(&["paf", "pack", src.to_str().unwrap(), archive.to_str().unwrap()]);
    assert!(out.status.success());
    assert_eq!(std::fs::read(&archive).unwrap(), first);

    let out = pmfc(&["paf", "list", archive.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let listing = stdout(&out);
    assert!(listing.contains("textures/walls/brick.ptf"), "{listing}");
    assert!(listing.contains("readme.txt"), "{listing}");

    let dest = dir.path().join("dest");
    let out = pmfc(&["paf", "unpack", archive.to_str().unwrap(), dest.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read(dest.join("textures/walls/brick.ptf")).unwrap(), b"brick bytes");
    assert_eq!(std::fs::read(dest.join("readme.txt")).unwrap(), b"hello");
}

#[test]
fn paf_list_of_garbage_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.paf");
    std::fs::write(&bad, b"PAX\0\0\0\0\0\0\0\0\0").unwrap();
    let out = pmfc(&["paf", "list", bad.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("at byte 0"), "{}", stderr(&out));
}

/// `pmfc new --sample empty` makes what the editor's File → New makes: one empty level and the
/// starter library (`editor/tests/ui.rs` checks the editor's side against the same function).
#[test]
fn new_empty_project_gets_the_starter_library() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("blank");
    let out = pmfc(&["new", project.to_str().unwrap(), "--sample", "empty"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let (_, map) = pmfedit_core::project::Project::open(&project).unwrap();
    let starter = pmfedit_core::sample::starter_library();
    assert!(
        map.library.content_eq(&starter),
        "{:?}",
        map.library.materials().iter().map(|(_, m)| &m.name).collect::<Vec<_>>()
    );
    assert!(
        map.library.physics_materials().id_of("water").is_some()
            && map.library.physics_materials().id_of("liquid").is_none()
    );
    assert_eq!(map.levels.len(), 1);
    assert_eq!(map.levels[0].leaves().filter(|(_, _, c)| c.is_solid()).count(), 0);
}

#[test]
fn new_build_inspect_round_trip_on_the_demo() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("demo");
    let out = pmfc(&["new", project.to_str().unwrap(), "--sample", "demo"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(project.join("map.ron").is_file());
    let pmf_path = dir.path().join("demo.pmf");
    let build = |p: &Path| {
        pmfc(&[
            "build",
            project.to_str().unwrap(),
            "-o",
            p.to_str().unwrap(),
            "--timestamp",
            "1700000000",
            "--threads",
            "2",
            "-q",
        ])
    };
    let out = build(&pmf_path);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("25 chunks"), "{}", stderr(&out));
    // Our reader re-reads it losslessly.
    let bytes = std::fs::read(&pmf_path).unwrap();
    let file = pmfedit_core::format::pmf::read(&bytes).unwrap();
    assert_eq!(pmfedit_core::format::pmf::write(&file).unwrap(), bytes);
    // Reproducible with a fixed timestamp, whatever the thread count.
    let again = dir.path().join("again.pmf");
    let out = pmfc(&[
        "build",
        project.to_str().unwrap(),
        "-o",
        again.to_str().unwrap(),
        "--timestamp",
        "1700000000",
        "--threads",
        "1",
        "-q",
        "--no-cache",
    ]);
    assert!(out.status.success());
    assert!(std::fs::read(&again).unwrap() == bytes);
    // The first build left its bakes in the project's cache: a rebuild bakes nothing and writes
    // the same bytes.
    assert_eq!(std::fs::read_dir(project.join("bakes")).unwrap().count(), 25);
    let cached = dir.path().join("cached.pmf");
    let out = pmfc(&["build", project.to_str().unwrap(), "-o", cached.to_str().unwrap(), "--timestamp", "1700000000"]);
    assert!(out.status.success());
    assert!(stderr(&out).contains("bake cache: 25 chunks reused, 0 stale"), "{}", stderr(&out));
    assert!(stderr(&out).contains("0 entries written, 25 kept, 0 removed"), "{}", stderr(&out));
    assert!(std::fs::read(&cached).unwrap() == bytes, "the build from cached bakes differs");
    let out = pmfc(&["inspect", pmf_path.to_str().unwrap()]);
    assert!(out.status.success());
    assert!(stdout(&out).contains("chunk grid:   5×1×5"), "{}", stdout(&out));
}

#[test]
fn build_warns_about_missing_resources_and_strict_refuses() {
    use pmfedit_core::map::ids::{MaterialId, PhysicsId, SoundId};
    use pmfedit_core::map::octree::Cube;
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("p");
    let mut map = pmfedit_core::map::Map::new("missing");
    let mut m = map.library.materials().get(MaterialId(0)).unwrap().clone();
    m.texture = "map:textures/definitely_missing".into();
    map.library.replace(MaterialId(0), m).unwrap();
    let origin = map.levels[0].frame().origin_lattice();
    let addr = pmfedit_core::map::coords::CubeAddr::containing(origin, 3);
    map.levels[0].set_cube(addr, Cube::solid(MaterialId(0), PhysicsId(0), SoundId(0))).unwrap();
    pmfedit_core::project::Project::create(&project).unwrap().save(&map).unwrap();
    let out_pmf = dir.path().join("x.pmf");
    let out = pmfc(&["build", project.to_str().unwrap(), "-o", out_pmf.to_str().unwrap(), "-q"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("map:textures/definitely_missing"), "{}", stderr(&out));
    let out = pmfc(&["build", project.to_str().unwrap(), "-o", out_pmf.to_str().unwrap(), "-q", "--strict"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("(--strict): map:textures/definitely_missing (missing)"), "{}", stderr(&out));
}

#[test]
fn import_m3d_into_a_project_and_export_it_back() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("vox");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/testdata/m3d/voxel.m3d");
    let out = pmfc(&["import", src.to_str().unwrap(), "-o", project.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("voxels placed: 4"), "{}", stdout(&out));
    let m3d_out = dir.path().join("out.m3d");
    let out = pmfc(&["export-m3d", project.to_str().unwrap(), "-o", m3d_out.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let model = pmfedit_core::format::m3d::read(&std::fs::read(&m3d_out).unwrap()).unwrap();
    assert_eq!(model.voxel_count(), 4);
    let out = pmfc(&["import", dir.path().join("nothing.bin").to_str().unwrap(), "--inspect"]);
    assert!(!out.status.success());
}

/// A format 11 Voxel Play save: one 16-voxel chunk per center in `chunks`, each with its bottom
/// layer of "Камень", and nothing else.
fn voxel_play_11(chunks: &[[f32; 3]]) -> Vec<u8> {
    let mut b = vec![11u8, 16];
    b.extend_from_slice(&[0; 36]);
    let name = "Камень".as_bytes();
    b.extend_from_slice(&1i16.to_le_bytes());
    b.push(name.len() as u8);
    b.extend_from_slice(name);
    b.extend_from_slice(&0i16.to_le_bytes());
    b.extend_from_slice(&(chunks.len() as i32).to_le_bytes());
    for p in chunks {
        for v in p {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.push(1);
        b.extend_from_slice(&1i16.to_le_bytes());
        b.extend_from_slice(&0i16.to_le_bytes());
        b.extend_from_slice(&[255, 255, 255]);
        b.extend_from_slice(&0i16.to_le_bytes());
        b.extend_from_slice(&256i16.to_le_bytes());
        b.extend_from_slice(&[0, 0]);
        b.extend_from_slice(&[0; 4]);
    }
    b.extend_from_slice(&[0; 4]);
    b
}

#[test]
fn import_voxel_play_drops_the_overflow_chunk_and_crops() {
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("world.bytes");
    let chunks = [[8.0, 8.0, 8.0], [-15_999_992.0, 8.0, 8.0], [24.0, 8.0, 8.0]];
    std::fs::write(&save, voxel_play_11(&chunks)).unwrap();
    let out = pmfc(&["import", save.to_str().unwrap(), "--inspect"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("512 voxels"), "{text}");
    assert!(text.contains("not imported: 256 voxels of 1 chunks"), "{text}");
    assert!(text.contains("chunk 1 at (-15999992, 8, 8)"), "{text}");
    // The crop keeps the first chunk only.
    let out = pmfc(&["import", save.to_str().unwrap(), "--inspect", "--crop", "0,0,0,16,16,16"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("Voxel Play format 11: 256 voxels"), "{}", stdout(&out));
    // Moved out of the grid entirely: refused, nothing written.
    let project = dir.path().join("p");
    let args = ["import", save.to_str().unwrap(), "-o", project.to_str().unwrap(), "--at", "0,-100000,0"];
    let out = pmfc(&args);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("none of the 768 voxels fits"), "{}", stderr(&out));
    assert!(!project.exists());
}

/// Two `pmfc import`s into one project at once: one may wait out the other or be refused with
/// "open in another process", never break the project (it lost chunk files in 61 of 200 tries
/// when both wrote without a lock through one `map.ron.tmp`).
#[test]
fn concurrent_imports_never_break_the_project() {
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("world.bytes");
    std::fs::write(&save, voxel_play_11(&[[8.0, 8.0, 8.0], [24.0, 8.0, 8.0], [8.0, 24.0, 8.0]])).unwrap();
    let project = dir.path().join("p");
    let (save, project) = (save.to_str().unwrap(), project.to_str().unwrap());
    assert!(pmfc(&["import", save, "-o", project]).status.success());
    let mut refused = 0;
    for i in 0..16 {
        let spawn = |x: i32| {
            Command::new(env!("CARGO_BIN_EXE_pmfc"))
                .args(["import", save, "-o", project, "--at", &format!("{x},0,{}", 40 * i)])
                .output_async()
        };
        let (a, b) = (spawn(40 + i), spawn(-40 - i));
        for out in [a.wait(), b.wait()] {
            if !out.status.success() {
                assert!(stderr(&out).contains("the project is open in another process"), "{}", stderr(&out));
                refused += 1;
            }
        }
        let (_, map) = pmfedit_core::project::Project::open(project).unwrap_or_else(|e| panic!("try {i}: {e}"));
        assert!(map.levels[0].chunk_count() > 0);
    }
    eprintln!("{refused} of 32 imports refused while the other held the project");
}

/// A child process run in the background, for [`Command`].
trait OutputAsync {
    fn output_async(&mut self) -> Background;
}

struct Background(std::process::Child);

impl OutputAsync for Command {
    fn output_async(&mut self) -> Background {
        Background(
            self.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().expect("run pmfc"),
        )
    }
}

impl Background {
    fn wait(self) -> Output {
        self.0.wait_with_output().expect("wait for pmfc")
    }
}

/// `pmfc paf pack` killed at random moments while it replaces an archive: the archive is always
/// the old one or the new one (a plain write left a 0-byte or partial file).
#[test]
fn a_killed_pack_leaves_the_old_or_the_new_archive() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    let mut x = 0x1234_5678_9abc_def0u64;
    let big: Vec<u8> = (0..24 << 20)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    std::fs::write(src.join("big.bin"), &big).unwrap();
    let out = dir.path().join("out.paf");
    let (src_s, out_s) = (src.to_str().unwrap(), out.to_str().unwrap());
    assert!(pmfc(&["paf", "pack", src_s, out_s]).status.success());
    let old = std::fs::read(&out).unwrap();
    std::fs::write(src.join("new.txt"), b"a second file").unwrap();
    assert!(pmfc(&["paf", "pack", src_s, dir.path().join("new.paf").to_str().unwrap()]).status.success());
    let new = std::fs::read(dir.path().join("new.paf")).unwrap();
    // Kill after 0, 10, 20, … ms: spread over reading, building and writing.
    let mut finished = 0;
    for delay in (0..200).step_by(10) {
        let mut child = Command::new(env!("CARGO_BIN_EXE_pmfc")).args(["paf", "pack", src_s, out_s]).spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay));
        let _ = child.kill();
        finished += usize::from(child.wait().unwrap().success());
        let now = std::fs::read(&out).unwrap();
        assert!(now == old || now == new, "killed after {delay} ms: {} bytes, neither archive", now.len());
        if now == new {
            std::fs::write(&out, &old).unwrap();
        }
    }
    eprintln!("{finished} of 20 packs finished before the kill");
}

/// `paf unpack` counts the files it writes, copies of links included.
#[cfg(unix)]
#[test]
fn unpack_counts_link_copies() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("a.txt"), b"hello").unwrap();
    std::os::unix::fs::symlink("a.txt", src.join("b.txt")).unwrap();
    std::os::unix::fs::symlink("a.txt", src.join("c.txt")).unwrap();
    let paf = dir.path().join("x.paf");
    assert!(pmfc(&["paf", "pack", src.to_str().unwrap(), paf.to_str().unwrap()]).status.success());
    let out = pmfc(&["paf", "unpack", paf.to_str().unwrap(), dir.path().join("dst").to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("extracted 3 files (2 of them copies of links), 15 bytes"), "{}", stderr(&out));
}

#[test]
fn watch_rebuilds_when_the_project_changes() {
    use pmfedit_core::map::ids::{MaterialId, PhysicsId, SoundId};
    use pmfedit_core::map::octree::Cube;
    use pmfedit_core::project::Project;
    use std::time::{Duration, Instant};

    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("p");
    let mut map = pmfedit_core::map::Map::new("watched");
    let origin = map.levels[0].frame().origin_lattice();
    let stone = Cube::solid(MaterialId(0), PhysicsId(0), SoundId(0));
    map.levels[0].set_cube(pmfedit_core::map::coords::CubeAddr::containing(origin, 3), stone).unwrap();
    let mut p = Project::create(&project).unwrap();
    p.save(&map).unwrap();
    let out_pmf = dir.path().join("w.pmf");
    let mut child = Command::new(env!("CARGO_BIN_EXE_pmfc"))
        .args([
            "watch",
            project.to_str().unwrap(),
            "-o",
            out_pmf.to_str().unwrap(),
            "--timestamp",
            "5",
            "--max-builds",
            "2",
        ])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !out_pmf.exists() {
        assert!(Instant::now() < deadline, "first build never appeared");
        std::thread::sleep(Duration::from_millis(50));
    }
    let first = std::fs::read(&out_pmf).unwrap();
    // Give the watcher time to start, then edit and save the project.
    std::thread::sleep(Duration::from_millis(500));
    let edited = |step: i32| {
        let mut m = map.clone();
        let at = origin + glam::IVec3::new(8 * step, 0, 0);
        m.levels[0].set_cube(pmfedit_core::map::coords::CubeAddr::containing(at, 3), stone).unwrap();
        m
    };
    p.save(&edited(1)).unwrap();
    let mut step = 2;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success());
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("watch did not rebuild");
        }
        std::thread::sleep(Duration::from_millis(200));
        // Events can be missed while the watcher starts: touch the project again.
        if step < 10 {
            p.save(&edited(step)).unwrap();
            step += 1;
        }
    }
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(err.contains("re-baked"), "{err}");
    let second = std::fs::read(&out_pmf).unwrap();
    assert!(second != first, "the output did not change");
    let file = pmfedit_core::format::pmf::read(&second).unwrap();
    let faces: usize = file.levels[0]
        .chunks
        .iter()
        .flat_map(|c| &c.client.cubes)
        .map(|c| match &c.geometry {
            pmfedit_core::format::pmf::ClientGeometry::Geometry(g) => g.faces.count_ones() as usize,
            _ => 0,
        })
        .sum();
    assert!(faces > 6, "{faces} faces: the edit is not in the rebuilt file");
}
