//! The central invariant (docs/spec/PMF-NOTES.md X1) on the rebuild engine: a full compile, the
//! engine on one thread and on several, and the engine after any sequence of edits (re-baking
//! only what the dependency spread dirtied) all give the same bytes. The same property through
//! the editor's commands is in `editor_invariant.rs`.

use std::collections::BTreeSet;
use std::sync::Arc;

use glam::IVec3;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use pmfedit_bake::cache;
use pmfedit_bake::compile::{CompileSettings, Grid, compile_full};
use pmfedit_bake::deps::{ChunkKey, dirty_chunks, library_users};
use pmfedit_bake::rebuild::{ChunkState, Plan, Rebuild, SpreadFn};
use pmfedit_bake::scheduler::Scheduler;
use pmfedit_core::edit::{ChangeSet, History};
use pmfedit_core::format::pmf;
use pmfedit_core::map::Map;
use pmfedit_core::map::library::LightId;
use pmfedit_core::map::lighting::{LevelLighting, Sky};
use pmfedit_tests::edits::{EDGE, Op, edit_for, op, settings, start_map};

fn bytes(file: &pmf::File) -> Vec<u8> {
    pmf::write(file).unwrap_or_else(|e| panic!("{e}"))
}

fn engine(map: &Map, threads: usize, plan: Plan) -> Rebuild {
    engine_with(map, threads, plan, settings())
}

fn engine_with(map: &Map, threads: usize, plan: Plan, s: CompileSettings) -> Rebuild {
    Rebuild::new(Scheduler::new(threads, s, Arc::new(|| {})), plan, Arc::new(map.snapshot()))
}

/// Plays `ops` on the start map through a history, telling an engine (using `spread`) about
/// each change and comparing its compile with a full compile after every step. `Err` names the
/// first step where they differ.
fn check(ops: &[Op], threads: usize, plan: Plan, spread: Option<SpreadFn>) -> Result<(), String> {
    check_with(ops, threads, plan, spread, settings())
}

/// [`check`] with other compile settings.
fn check_with(
    ops: &[Op],
    threads: usize,
    plan: Plan,
    spread: Option<SpreadFn>,
    settings: CompileSettings,
) -> Result<(), String> {
    let settings = || settings.clone();
    let mut map = start_map();
    let mut history = History::new();
    let mut inc = engine_with(&map, threads, plan, settings());
    if let Some(s) = spread {
        inc = inc.with_spread(s);
    }
    inc.wait();
    if bytes(&inc.compile(None).unwrap()) != bytes(&compile_full(&map, &settings()).unwrap()) {
        return Err("differs before any edit".into());
    }
    for (i, op) in ops.iter().enumerate() {
        let changes = match (edit_for(&map, op), op) {
            (Some(edit), _) => match history.apply(&mut map, edit) {
                Ok(c) => c,
                Err(_) => continue, // refused edits change nothing
            },
            (None, Op::Undo) => match history.undo(&mut map) {
                Some(c) => c,
                None => continue,
            },
            (None, Op::Redo) => match history.redo(&mut map) {
                Some(c) => c,
                None => continue,
            },
            (None, _) => continue,
        };
        inc.edited(Arc::new(map.snapshot()), &changes);
        inc.wait();
        if !inc.is_final() {
            return Err(format!("step {i} ({op:?}): not final after waiting"));
        }
        let incremental = bytes(&inc.compile(None).map_err(|e| e.to_string())?);
        let full = bytes(&compile_full(&map, &settings()).unwrap());
        if incremental != full {
            return Err(format!("incremental != full after step {i}: {op:?}"));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn incremental_equals_full_after_any_edit_sequence(ops in prop::collection::vec(op(), 1..8)) {
        if let Err(e) = check(&ops, 2, Plan::FinalOnly, None) {
            prop_assert!(false, "{}", e);
        }
    }
}

/// Only the chunks whose cubes changed: no neighbours (face culling), no light reach, no
/// library or object handling.
fn narrow_spread(_: &Map, _: &Map, changes: &ChangeSet, _: &CompileSettings) -> BTreeSet<ChunkKey> {
    changes.levels.iter().flat_map(|(&li, lc)| lc.chunks.iter().map(move |(c, _)| (li, c))).collect()
}

/// The property above catches a broken spread: run with [`narrow_spread`], the same strategy
/// finds a failing sequence.
#[test]
fn a_narrow_spread_is_caught() {
    let config = Config { cases: 24, failure_persistence: None, max_shrink_iters: 0, ..Config::default() };
    let mut runner = TestRunner::new(config);
    let result = runner.run(&prop::collection::vec(op(), 1..8), |ops| {
        match check(&ops, 1, Plan::FinalOnly, Some(narrow_spread)) {
            Ok(()) => Ok(()),
            Err(e) => Err(TestCaseError::fail(e)),
        }
    });
    assert!(result.is_err(), "a spread that ignores neighbours, lights and the library went unnoticed");
}

/// The chunks (x, z grid index) whose air cells' visibility differs between two compiles.
fn visibility_changed(a: &pmf::File, b: &pmf::File) -> Vec<(u16, u16)> {
    let (la, lb) = (&a.levels[0], &b.levels[0]);
    assert_eq!(la.grid, lb.grid);
    (0..la.chunks.len())
        .filter(|&i| {
            let vis =
                |l: &pmf::Level| l.chunks[i].common.cubes.iter().map(|c| c.visibility.clone()).collect::<Vec<_>>();
            vis(la) != vis(lb)
        })
        .map(|i| {
            let c = la.grid.index_of(i);
            (c.x, c.z)
        })
        .collect()
}

/// A window opened and closed in the wall between the two halves changes the lists of cells
/// far from it (beyond any fixed spread around the edit): the engine writes their far lists
/// again from the new summaries (where their sun rays through the wall do not re-bake them
/// anyway), and stays equal to a full compile.
#[test]
fn a_window_between_two_large_spaces_changes_far_cells() {
    let map = start_map();
    let mut open = map.snapshot();
    let window = Op::Window { z: 72, open: true };
    History::new().apply(&mut open, edit_for(&map, &window).unwrap()).unwrap();
    let (before, after) = (compile_full(&map, &settings()).unwrap(), compile_full(&open, &settings()).unwrap());
    // The window is in chunk x 2, z 2 of the grid: chunks two and more away see through it.
    let far: Vec<(u16, u16)> = visibility_changed(&before, &after)
        .into_iter()
        .filter(|&(x, z)| (i32::from(x) - 2).abs() > 1 || (i32::from(z) - 2).abs() > 1)
        .collect();
    assert!(far.len() > 4, "far chunks whose lists changed: {far:?}");
    let ops = [window, Op::Window { z: 72, open: false }, Op::Undo, Op::Window { z: 8, open: true }, Op::Undo];
    check(&ops, 2, Plan::FinalOnly, None).unwrap();
}

/// Over their visibility budget, cells name their own chunk whole and, past that, carry no data
/// (PMF-NOTES V1 *Budget*): a choice made per chunk from its own counts, so the engine after
/// edits that change far lists (a window opened and closed) still equals a full compile.
#[test]
fn a_tight_visibility_budget_keeps_incremental_equal_to_full() {
    let mut tight = settings();
    tight.visibility.as_mut().unwrap().max_listed = 400;
    let file = compile_full(&start_map(), &tight).unwrap();
    let level = &file.levels[0];
    let (mut whole, mut none) = (0, 0);
    for (i, chunk) in level.chunks.iter().enumerate() {
        let own = level.grid.index_of(i);
        for cube in chunk.common.cubes.iter().filter(|c| c.kind == pmf::CubeKind::Empty) {
            match &cube.visibility {
                Some(v) if v.chunks.iter().any(|c| c.chunk == own && c.cubes.is_empty()) => whole += 1,
                Some(_) => {}
                None => none += 1,
            }
        }
    }
    assert!(whole > 0 && none > 0, "the budget does not bite: {whole} cells name their chunk whole, {none} carry none");
    let ops = [Op::Window { z: 72, open: true }, Op::Window { z: 72, open: false }, Op::Undo, Op::Redo];
    check_with(&ops, 2, Plan::FinalOnly, None, tight).unwrap();
}

/// Saved bakes (`bake/src/cache.rs`) are keyed by the chunks a bake reads, not by the far sets
/// of the whole level, so a reused bake's far lists must be written again from the summaries of
/// the map it is loaded into. Baked and saved with the wall closed, reopened with a window in
/// it: the chunks away from the window come from the cache, yet see through it, and the export
/// equals a full compile of the reopened map.
#[test]
fn saved_bakes_reused_after_a_window_opened_list_what_it_shows() {
    let dir = tempfile::tempdir().unwrap();
    // Sun only, no lamps: the static reads of a bake (its neighbours and the chunks in reach of a
    // lamp or a bounce) then stay away from the window for the chunks far from it.
    let mut map = start_map();
    let level = &mut map.levels[0];
    level.lighting =
        LevelLighting { sky: Sky { intensity: 0.0, ..Sky::default() }, bounces: 0, ..LevelLighting::default() };
    let lamps: Vec<LightId> = level.objects.lights().ids().collect();
    for id in lamps {
        level.objects.remove(id).unwrap();
    }
    let mut open = map.snapshot();
    History::new().apply(&mut open, edit_for(&map, &Op::Window { z: 72, open: true }).unwrap()).unwrap();
    let engine = |m: &Map, bakes| {
        Rebuild::with_bakes(Scheduler::new(2, settings(), Arc::new(|| {})), Plan::FinalOnly, Arc::new(m.clone()), bakes)
    };
    let mut closed = engine(&map, Default::default());
    closed.wait();
    assert!(closed.is_final());
    let bakes = closed.slots().keys().filter_map(|&k| closed.full(k)).map(|b| &**b);
    cache::store(dir.path(), closed.map(), closed.settings(), bakes).unwrap();

    let loaded = cache::load(dir.path(), &open, &settings());
    let reused: BTreeSet<ChunkKey> = loaded.bakes.keys().copied().collect();
    let full = compile_full(&open, &settings()).unwrap();
    // Reused bakes whose lists the window changed: the case this test is about.
    let before = compile_full(&map, &settings()).unwrap();
    let changed = visibility_changed(&before, &full);
    let min = Grid::of(&open.levels[0]).min.as_ivec3();
    let stale_far = reused
        .iter()
        .filter(|k| {
            let g = k.1.as_ivec3() - min;
            changed.contains(&(g.x as u16, g.z as u16))
        })
        .count();
    assert!(stale_far > 0, "no reused chunk sees through the window: {reused:?}");
    let mut warm = engine(&open, loaded.bakes);
    warm.wait();
    assert!(warm.is_final());
    let warm_bytes = pmf::write(&warm.compile(None).unwrap()).unwrap();
    assert!(warm_bytes == pmf::write(&full).unwrap(), "the export from saved bakes differs from a full compile");
}

/// Library edits spread only to the chunks whose cubes use the record, like cube edits there.
/// A spread that re-bakes those chunks alone (not their neighbours, whose faces against a glass
/// cube are culled or not by its transparency) is caught.
fn users_only_spread(before: &Map, after: &Map, changes: &ChangeSet, settings: &CompileSettings) -> BTreeSet<ChunkKey> {
    if changes.library.is_empty() {
        dirty_chunks(before, after, changes, settings)
    } else {
        library_users(before, after, changes)
    }
}

/// Glass set into the floor at the last column of a chunk, against the stone of the next
/// chunk, then its transparency and colour changed.
fn glass_ops() -> Vec<Op> {
    vec![
        Op::Fill { at: IVec3::new(EDGE - 8, 0, 8), size: IVec3::new(8, 8, 8), material: 1 },
        Op::ToggleTransparent { material: 1 },
        Op::Recolor { material: 1, color: [200, 40, 40] },
        Op::ToggleTransparent { material: 1 },
    ]
}

#[test]
fn library_edits_rebake_exactly_what_uses_them() {
    check(&glass_ops(), 2, Plan::FinalOnly, None).unwrap();
    let e = check(&glass_ops(), 1, Plan::FinalOnly, Some(users_only_spread)).unwrap_err();
    assert!(e.contains("ToggleTransparent"), "{e}");
}

/// A material no cube uses dirties no chunk: nothing is re-baked, and the export still equals a
/// full compile.
#[test]
fn a_material_no_chunk_uses_dirties_none() {
    let mut map = start_map();
    let mut history = History::new();
    let mut inc = engine(&map, 2, Plan::FinalOnly);
    inc.wait();
    let before_bytes = bytes(&inc.compile(None).unwrap());
    let before = map.snapshot();
    let edit = edit_for(&map, &Op::Recolor { material: 1, color: [1, 2, 3] }).unwrap();
    let changes = history.apply(&mut map, edit).unwrap();
    assert!(!changes.library.is_empty());
    assert!(dirty_chunks(&before, &map, &changes, &settings()).is_empty());
    assert_eq!(inc.edited(Arc::new(map.snapshot()), &changes), 0, "nothing re-baked");
    assert!(inc.is_final());
    // The colour is in the level's material table, which the compile writes from the map: the
    // file changes, no chunk record does.
    let after_bytes = bytes(&inc.compile(None).unwrap());
    assert!(after_bytes != before_bytes);
    assert!(after_bytes == bytes(&compile_full(&map, &settings()).unwrap()));
}

#[test]
fn one_thread_equals_many_threads() {
    let map = start_map();
    let one = bytes(&compile_full(&map, &settings()).unwrap());
    for threads in [1, 3] {
        let mut e = engine(&map, threads, Plan::FinalOnly);
        e.wait();
        assert!(e.is_final());
        assert!(bytes(&e.compile(None).unwrap()) == one, "{threads} threads");
    }
}

/// The interactive plan (drafts, previews, full bakes) compiles from the full results only: the
/// same bytes; what it draws meanwhile (previews: no visibility, no pathfinding) never gets
/// compiled.
#[test]
fn interactive_stages_compile_the_same_from_their_full_results() {
    let map = start_map();
    let one = bytes(&compile_full(&map, &settings()).unwrap());
    let mut e = Rebuild::new(
        Scheduler::interactive(2, settings(), Arc::new(|| {})),
        Plan::Interactive,
        Arc::new(map.snapshot()),
    );
    e.wait();
    assert!(e.is_final());
    assert!(bytes(&e.compile(None).unwrap()) == one);
    assert!(e.slots().values().all(|s| s.state == ChunkState::Done && s.times[2].is_some()));
}

#[test]
fn light_ids_of_the_start_map_are_stable() {
    // The strategy addresses lights by position in id order.
    let map = start_map();
    let ids: Vec<LightId> = map.levels[0].objects.lights().ids().collect();
    assert_eq!(ids.len(), 2);
}
