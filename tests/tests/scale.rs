//! The map-scale test (issue 14, item 7): `terrain(16,4,16)` (1 024 chunks) built cold as
//! `pmfc build` does, opened in the editor with its bake cache, edited, exported, saved and
//! reopened. It asserts what is deterministic: every chunk comes from the cache on a warm open
//! (nothing queued, nothing re-baked), the export from cached bakes equals the cold full build
//! byte for byte (and after the edit, the reopened project's export equals the edited one), and
//! an edit re-bakes only the chunks whose inputs it changed. That incremental re-bakes equal full
//! compiles after edits is `invariant.rs`'s and `bake/tests/cache.rs`'s to prove on small maps: a
//! second cold build here would double the test's time. It prints the timings (`--nocapture`);
//! one run took 408 s on a shared 2-core machine at load average 9–11 (each cold build ≈ 190 s).
//!
//! Cheap compile settings keep it within CI's budget (2 cores): the level is lit by the sun
//! alone (no sky, no bounce) and the bake uses a draft's lighting (one emitter sample, no
//! ambient occlusion, the draft's few sun rays); visibility and pathfinding are the defaults.
//! The cache keys on the settings, so nothing here depends on which lighting is used.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use glam::IVec3;

use pmfedit::command::Command;
use pmfedit::state::EditorState;
use pmfedit_bake::cache;
use pmfedit_bake::compile::CompileSettings;
use pmfedit_bake::rebuild::{ChunkState, Plan, Rebuild};
use pmfedit_bake::scheduler::Scheduler;
use pmfedit_core::edit::{CubeOp, Edit};
use pmfedit_core::format::pmf;
use pmfedit_core::map::Level;
use pmfedit_core::map::Map;
use pmfedit_core::map::coords::{ChunkCoord, CubeAddr};
use pmfedit_core::map::lighting::{LevelLighting, Sky};
use pmfedit_core::map::octree::Cube;
use pmfedit_core::project::Project;
use pmfedit_core::sample;

const THREADS: usize = 2;

/// See the module documentation.
fn settings() -> CompileSettings {
    let mut s = CompileSettings { timestamp: 7, ..CompileSettings::default() };
    s.light.emitter_grid = 1;
    s.light.ao = None;
    s.light.gather = s.light.gather.draft();
    s
}

fn terrain() -> Map {
    terrain_of(16)
}

/// `terrain(n,4,n)` lit by the sun alone.
fn terrain_of(n: u32) -> Map {
    let mut map = sample::terrain(n, 4, n, 1);
    map.levels[0].lighting =
        LevelLighting { sky: Sky { intensity: 0.0, ..Sky::default() }, bounces: 0, ..LevelLighting::default() };
    map
}

/// A cold full build of the project in `dir`, as `pmfc build --no-cache` does: its bytes, and
/// the engine (to store the cache from).
fn cold_build(dir: &Path) -> (Vec<u8>, Rebuild) {
    let (_, map) = Project::open(dir).unwrap();
    let mut e = Rebuild::new(Scheduler::new(THREADS, settings(), Arc::new(|| {})), Plan::FinalOnly, Arc::new(map));
    e.wait();
    assert!(e.is_final(), "{:?}", e.errors());
    let bytes = e.assemble(None).unwrap().write(THREADS).unwrap();
    (bytes, e)
}

/// The project in `dir` opened in the editor (with its bake cache), and how long that took.
fn open_in_editor(dir: &Path) -> (EditorState, Duration) {
    let t = Instant::now();
    let (project, map) = Project::open(dir).unwrap();
    let mut state =
        EditorState::with_scheduler(map, Some(project), Scheduler::interactive(THREADS, settings(), Arc::new(|| {})));
    state.export_timestamp = Some(settings().timestamp);
    (state, t.elapsed())
}

/// Polls as the app's frames do until every chunk has its full bake.
fn settle(state: &mut EditorState) {
    let t = Instant::now();
    while !state.bake.is_final() {
        assert!(t.elapsed() < Duration::from_secs(900), "the bakes never finished: {:?}", state.bake.errors());
        assert!(state.bake.count(ChunkState::Failed) == 0, "{:?}", state.bake.errors());
        state.poll_bakes();
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// An edit of one cube in the middle of `chunk` that changes its content: stone, or air where
/// stone already is.
fn changing_edit(level: &Level, chunk: ChunkCoord) -> Command {
    let min = level.frame().chunk_min_lattice(chunk);
    let addr = CubeAddr::containing(min + IVec3::new(64, 64, 64), 3);
    let before = level.chunk(chunk).map(|c| c.octree().content_hash());
    let stone = Cube::solid(Default::default(), Default::default(), Default::default());
    let changes = |cube: Cube| {
        let mut l = level.clone();
        l.set_cube(addr, cube).unwrap();
        l.chunk(chunk).map(|c| c.octree().content_hash()) != before
    };
    let cube = if changes(stone) { stone } else { Cube::EMPTY };
    Command::Edit(Edit::Cubes { level: 0, op: CubeOp::SetCube { addr, cube } })
}

fn export(state: &EditorState) -> Vec<u8> {
    pmf::write(&state.compile().unwrap()).unwrap()
}

#[test]
fn terrain_16_4_16_opens_from_its_bake_cache_edits_and_exports_the_bytes_of_a_cold_build() {
    let dir = tempfile::tempdir().unwrap();
    let mut project = Project::create(dir.path()).unwrap();
    project.save(&terrain()).unwrap();
    drop(project);

    // Cold: every chunk baked, then the cache written (what `pmfc build` does on a new project).
    let t = Instant::now();
    let (cold, engine) = cold_build(dir.path());
    let cold_s = t.elapsed();
    let chunks = engine.slots().len();
    let t = Instant::now();
    let bakes = engine.slots().keys().filter_map(|&k| engine.full(k)).map(|b| &**b);
    let stored = cache::store(dir.path(), engine.map(), engine.settings(), bakes).unwrap();
    let store_s = t.elapsed();
    assert_eq!(stored.written, chunks);
    drop(engine);

    // Warm open in the editor: every chunk on screen at once, nothing queued.
    let (mut state, warm_open) = open_in_editor(dir.path());
    assert_eq!(state.bake.in_flight(), 0, "a warm open re-bakes nothing");
    assert!(state.bake.is_final());
    assert_eq!(state.bake.take_changed().len(), chunks, "every cached bake is handed to the viewport");
    assert_eq!(export(&state), cold, "the export from cached bakes == the cold full build");

    // Edit one cube on the surface in the middle of the terrain; only its dependents re-bake.
    let level = &state.map.levels[0];
    let (lo, hi) = level.occupied_bounds().unwrap();
    let mid = ChunkCoord::from_ivec3((lo.as_ivec3() + hi.as_ivec3()) / 2);
    let before = level.chunk(mid).map(|c| c.octree().content_hash());
    let edit = changing_edit(level, mid);
    let t = Instant::now();
    state.apply(edit).unwrap();
    assert_ne!(state.map.levels[0].chunk(mid).map(|c| c.octree().content_hash()), before, "the edit changed a cube");
    let rebaked = state.bake.in_flight();
    assert!(rebaked > 0 && rebaked < chunks / 4, "an edit re-bakes its neighbourhood, not the map: {rebaked}");
    settle(&mut state);
    let edit_s = t.elapsed();
    let edited = export(&state);
    assert_ne!(edited, cold);

    // Save (the cache follows) and reopen: nothing re-baked, the same export.
    let t = Instant::now();
    state.save().unwrap();
    let save_s = t.elapsed();
    drop(state);
    let (state, reopen) = open_in_editor(dir.path());
    assert_eq!(state.bake.in_flight(), 0, "nothing changed since the save: nothing re-baked");
    assert_eq!(export(&state), edited);
    drop(state);
    let entries = std::fs::read_dir(cache::dir(dir.path())).unwrap().count();
    assert_eq!(entries, chunks, "the save pruned the stale entries");

    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "terrain(16,4,16), {chunks} chunks, {THREADS} threads, load {}: cold build {:.1} s, cache store {:.2} s \
         ({:.1} MiB), warm open {:.2} s, edit -> final {:.1} s ({rebaked} chunks), save {:.2} s, reopen {:.2} s",
        load.split_whitespace().take(3).collect::<Vec<_>>().join(" "),
        cold_s.as_secs_f64(),
        store_s.as_secs_f64(),
        stored.bytes as f64 / f64::from(1 << 20),
        warm_open.as_secs_f64(),
        edit_s.as_secs_f64(),
        save_s.as_secs_f64(),
        reopen.as_secs_f64(),
    );
}

/// A cache the editor cannot use (damaged, or written by another version of `pmfc`: every entry
/// refused) is re-baked in the background once, then written back, so the next open takes every
/// chunk from it. Before, the editor re-baked the whole map on every open until the user saved
/// (terrain(32,4,32): 479 s per open), and said nothing about why.
#[test]
fn an_unusable_bake_cache_is_rebaked_once_then_reopens_with_no_chunk_baked() {
    let dir = tempfile::tempdir().unwrap();
    let mut project = Project::create(dir.path()).unwrap();
    // Small enough for a debug build; the cache does not depend on the size.
    project.save(&terrain_of(3)).unwrap();
    drop(project);
    let (cold, engine) = cold_build(dir.path());
    let chunks = engine.slots().len();
    let bakes = engine.slots().keys().filter_map(|&k| engine.full(k)).map(|b| &**b);
    assert_eq!(cache::store(dir.path(), engine.map(), engine.settings(), bakes).unwrap().written, chunks);
    drop(engine);

    // Every entry unreadable to this build: its format field says 1 (its checksum then fails too).
    for e in std::fs::read_dir(cache::dir(dir.path())).unwrap() {
        let path = e.unwrap().path();
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[8..10].copy_from_slice(&1u16.to_le_bytes());
        std::fs::write(&path, bytes).unwrap();
    }
    let (mut state, _) = open_in_editor(dir.path());
    let report = state.cache_report.clone().expect("a project's open reports its cache");
    assert_eq!((report.reused, report.stale, report.unusable), (0, 0, chunks), "{report}");
    assert!(report.first_unusable.is_some_and(|why| why.contains("checksum")), "the reason is shown");
    assert_eq!(state.bake.in_flight(), chunks, "nothing usable: every chunk is baked");
    let status = state.status.as_ref().map(|(m, _)| m.clone()).unwrap_or_default();
    assert!(status.contains(&format!("re-baking {chunks} chunks")), "the open says why it bakes: {status}");

    // The background bakes finish; the map is the saved one, so they are written back.
    settle(&mut state);
    let status = state.status.as_ref().map(|(m, _)| m.clone()).unwrap_or_default();
    assert!(status.starts_with("Bake cache refreshed"), "{status}");
    assert_eq!(export(&state), cold);
    drop(state);

    // Reopened: every chunk from the cache, none baked, the bytes of the cold build.
    let (state, _) = open_in_editor(dir.path());
    let report = state.cache_report.clone().unwrap();
    assert_eq!((report.reused, report.unusable, report.stale), (chunks, 0, 0), "{report}");
    assert_eq!(state.bake.in_flight(), 0, "a warm open re-bakes nothing");
    assert!(state.bake.is_final());
    assert!(state.status.is_none(), "a clean open says nothing: {:?}", state.status);
    assert_eq!(export(&state), cold, "the export from the refreshed cache == the cold build");
}

/// An edited map's bakes are not written by the refresh (the cache holds the saved map's): they
/// wait for the save.
#[test]
fn the_cache_refresh_waits_for_the_save_after_an_edit() {
    let dir = tempfile::tempdir().unwrap();
    let mut project = Project::create(dir.path()).unwrap();
    project.save(&terrain_of(2)).unwrap();
    drop(project);
    // No cache at all: every chunk is a miss.
    let (mut state, _) = open_in_editor(dir.path());
    assert_eq!(state.cache_report.as_ref().map(|r| r.reused), Some(0));
    let level = &state.map.levels[0];
    let (lo, _) = level.occupied_bounds().unwrap();
    let edit = changing_edit(level, lo);
    state.apply(edit).unwrap();
    settle(&mut state);
    assert!(!cache::dir(dir.path()).exists(), "nothing written for an unsaved map");
    state.save().unwrap();
    let edited = export(&state);
    drop(state);
    let (state, _) = open_in_editor(dir.path());
    assert_eq!(state.bake.in_flight(), 0, "the save wrote every chunk's bake");
    assert_eq!(export(&state), edited);
}
