//! The central invariant (docs/spec/PMF-NOTES.md X1) on the rebuild engine: a full compile, the
//! engine on one thread and on several, and the engine after any sequence of edits (re-baking
//! only what the dependency spread dirtied) all give the same bytes. The same property through
//! the editor's commands is in `editor_invariant.rs`.

use std::collections::BTreeSet;
use std::sync::Arc;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use pmfedit_bake::compile::{CompileSettings, compile_full};
use pmfedit_bake::deps::ChunkKey;
use pmfedit_bake::rebuild::{ChunkState, Plan, Rebuild, SpreadFn};
use pmfedit_bake::scheduler::Scheduler;
use pmfedit_core::edit::{ChangeSet, History};
use pmfedit_core::format::pmf;
use pmfedit_core::map::Map;
use pmfedit_core::map::library::LightId;
use pmfedit_tests::edits::{Op, edit_for, op, settings, start_map};

fn bytes(file: &pmf::File) -> Vec<u8> {
    pmf::write(file).unwrap_or_else(|e| panic!("{e}"))
}

fn engine(map: &Map, threads: usize, plan: Plan) -> Rebuild {
    Rebuild::new(Scheduler::new(threads, settings(), Arc::new(|| {})), plan, Arc::new(map.snapshot()))
}

/// Plays `ops` on the start map through a history, telling an engine (using `spread`) about
/// each change and comparing its compile with a full compile after every step. `Err` names the
/// first step where they differ.
fn check(ops: &[Op], threads: usize, plan: Plan, spread: Option<SpreadFn>) -> Result<(), String> {
    let mut map = start_map();
    let mut history = History::new();
    let mut inc = engine(&map, threads, plan);
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
