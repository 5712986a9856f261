//! The central invariant (docs/spec/PMF-NOTES.md X1) as the editor runs it: random edit
//! sequences sent as the commands the tools, forms and import send — strokes, undo, redo,
//! history jumps, library edits, light moves, imports — applied to `EditorState` while its real
//! scheduler bakes in the background (drafts, previews, full bakes; results arriving between
//! edits or not), then exported through `Command::Export`. The file must equal a full compile of
//! the same map (resources embedded as a build does), with one worker and with two.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use pmfedit::command::Command;
use pmfedit::state::EditorState;
use pmfedit_bake::compile::{CompileSettings, compile_full};
use pmfedit_bake::deps::ChunkKey;
use pmfedit_bake::rebuild::{Plan, Rebuild};
use pmfedit_bake::scheduler::Scheduler;
use pmfedit_core::edit::ChangeSet;
use pmfedit_core::format::pmf;
use pmfedit_core::map::Map;
use pmfedit_tests::edits::{Op, edit_for, op, settings, start_map};

/// One thing the designer's session does.
#[derive(Debug, Clone)]
enum Step {
    /// An edit (or undo / redo) as one command.
    Op(Op),
    /// Edits merged into one undo step, as a drag sends them.
    Stroke(Vec<Op>),
    /// Let the UI run `n` frames: bakes arrive between edits.
    Frames(u8),
    /// A click in the history panel: jump to step `n` (modulo the history's length).
    GoTo(u8),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => op().prop_map(Step::Op),
        1 => prop::collection::vec(op().prop_filter("edits only", |o| !o.is_history()), 2..4).prop_map(Step::Stroke),
        2 => (1u8..30).prop_map(Step::Frames),
        1 => any::<u8>().prop_map(Step::GoTo),
    ]
}

/// The commands for `op` on the state's current map (`None`: nothing to do).
fn command(state: &EditorState, op: &Op) -> Option<Command> {
    match op {
        Op::Undo => Some(Command::Undo),
        Op::Redo => Some(Command::Redo),
        _ => edit_for(&state.map, op).map(Command::Edit),
    }
}

/// Applies `command` as the app does. An edit the map refuses (a box outside the grid, say)
/// changes nothing; the app only reports it, so the session goes on.
fn apply(state: &mut EditorState, command: Command) {
    let _refused_edits_change_nothing = state.apply(command);
}

/// One frame of the app as far as the document is concerned: take the bakes that arrived.
fn frame(state: &mut EditorState) {
    state.poll_bakes();
    std::thread::sleep(Duration::from_millis(1));
}

/// An editor document on the start map baking on `threads` interactive workers, optionally with
/// another dependency spread.
fn document(threads: usize, spread: Option<pmfedit_bake::rebuild::SpreadFn>) -> EditorState {
    let scheduler = || Scheduler::interactive(threads, settings(), Arc::new(|| {}));
    let mut state = EditorState::with_scheduler(start_map(), None, scheduler());
    if let Some(s) = spread {
        state.bake = Rebuild::new(scheduler(), Plan::Interactive, Arc::new(state.map.snapshot())).with_spread(s);
    }
    state
}

/// Plays `steps`, exports, and compares the file with a full compile of the map.
fn check(steps: &[Step], threads: usize, spread: Option<pmfedit_bake::rebuild::SpreadFn>) -> Result<(), String> {
    let mut state = document(threads, spread);
    for s in steps {
        match s {
            Step::Op(op) => {
                if let Some(c) = command(&state, op) {
                    apply(&mut state, c);
                }
            }
            Step::Stroke(ops) => {
                apply(&mut state, Command::BeginStroke);
                for op in ops {
                    if let Some(c) = command(&state, op) {
                        apply(&mut state, c);
                    }
                }
                apply(&mut state, Command::EndStroke);
            }
            Step::Frames(n) => (0..*n).for_each(|_| frame(&mut state)),
            Step::GoTo(n) => {
                let to = usize::from(*n) % (state.history.len() + 1);
                apply(&mut state, Command::GoTo(to));
            }
        }
    }
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let path = dir.path().join("out.pmf");
    apply(&mut state, Command::Export(path.clone()));
    let t = Instant::now();
    while state.exporting() {
        if t.elapsed() > Duration::from_secs(600) {
            return Err("the export never ran".into());
        }
        frame(&mut state);
    }
    let bytes = std::fs::read(&path).map_err(|e| format!("no export ({:?}): {e}", state.status))?;
    let file = pmf::read(&bytes).map_err(|e| e.to_string())?;
    let settings = CompileSettings { timestamp: file.header.creation_time, ..settings() };
    // Export embeds resources as `pmfc build` does (`pmfedit_bake::export`): the same on the full
    // compile.
    let mut full = compile_full(&state.map, &settings).map_err(|e| e.to_string())?;
    pmfedit_bake::resources::embed_resources(&mut full, &state.resource_roots(), &[]).map_err(|e| e.to_string())?;
    let full = pmf::write(&full).map_err(|e| e.to_string())?;
    if bytes != full {
        return Err(format!(
            "the editor's export differs from a full compile ({} vs {} bytes)",
            bytes.len(),
            full.len()
        ));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn the_editors_export_equals_a_full_compile_with_one_worker(steps in prop::collection::vec(step(), 1..10)) {
        if let Err(e) = check(&steps, 1, None) {
            prop_assert!(false, "{}", e);
        }
    }

    #[test]
    fn the_editors_export_equals_a_full_compile_with_two_workers(steps in prop::collection::vec(step(), 1..10)) {
        if let Err(e) = check(&steps, 2, None) {
            prop_assert!(false, "{}", e);
        }
    }
}

/// Only the chunks whose cubes changed.
fn narrow_spread(_: &Map, _: &Map, changes: &ChangeSet, _: &CompileSettings) -> BTreeSet<ChunkKey> {
    changes.levels.iter().flat_map(|(&li, lc)| lc.chunks.iter().map(move |(c, _)| (li, c))).collect()
}

/// The editor-level property catches a broken spread.
#[test]
fn a_narrow_spread_in_the_editor_is_caught() {
    let config = Config { cases: 16, failure_persistence: None, max_shrink_iters: 0, ..Config::default() };
    let result = TestRunner::new(config).run(&prop::collection::vec(step(), 1..10), |steps| {
        check(&steps, 2, Some(narrow_spread)).map_err(TestCaseError::fail)
    });
    assert!(result.is_err(), "the editor-level property did not notice a broken spread");
}
