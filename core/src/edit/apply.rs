//! [`MapEdit`] (the undo entry), strokes, and [`apply`].

use std::fmt;

use undo::{Merged, Record};

use super::change::{ChangeSet, StepAction, StepFailure};
use super::error::EditError;
use super::ops::Edit;
use super::step::{Step, describe};
use crate::map::Map;

/// Identifies one brush stroke (mouse down to mouse up, or one gizmo drag): consecutive edits
/// applied with the same stroke id merge into one undo step. Get fresh ids from
/// [`History::begin_stroke`](super::History::begin_stroke) or [`StrokeId::new`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StrokeId(pub u64);

impl StrokeId {
    /// The stroke with this number (callers keep numbers unique within a record).
    pub const fn new(n: u64) -> Self {
        Self(n)
    }
}

/// One undo entry: one or more performed steps (several for a merged stroke), its name, and the
/// change set of its first application.
///
/// A `MapEdit` only comes from [`apply`] / [`apply_in_stroke`] (or [`History`](super::History)),
/// which perform the edit before pushing it; [`undo::Edit::edit`] then hands back the change set
/// of that application without touching the map again. Later redos perform the steps again.
#[derive(Debug, Clone)]
pub struct MapEdit {
    name: String,
    stroke: Option<StrokeId>,
    steps: Vec<Step>,
    /// The change set of the application done by [`apply`], returned by the first `edit` call.
    pending: Option<ChangeSet>,
}

impl MapEdit {
    /// Human-readable name ("Fill box 4×4×4", "Paint material stone", "Move light lamp 1").
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The stroke it belongs to, if any.
    pub fn stroke(&self) -> Option<StrokeId> {
        self.stroke
    }

    /// Number of performed steps (more than one after stroke merging).
    pub fn step_count(&self) -> usize {
        self.steps.len()
    }

    /// Bytes of RAM held by the cube backups of this entry (the part that grows with the size of
    /// the edit; records of library and object edits are not counted).
    pub fn backup_bytes(&self) -> usize {
        self.steps.iter().map(Step::backup_bytes).sum()
    }

    /// Undoes every step, last first. A failing step (the map is not in the state the step left
    /// it in: a bug, or a change behind the history's back) is skipped and reported in
    /// [`ChangeSet::failures`], in every build.
    fn undo_steps(&mut self, map: &mut Map) -> ChangeSet {
        let mut out = ChangeSet::new();
        for step in self.steps.iter_mut().rev() {
            match step.undo(map) {
                Ok(c) => out.merge(&c),
                Err(e) => out.failures.push(failure(&self.name, StepAction::Undo, &e)),
            }
        }
        out
    }

    /// Performs every step again, first first; failures as for [`undo_steps`](Self::undo_steps).
    fn redo_steps(&mut self, map: &mut Map) -> ChangeSet {
        let mut out = ChangeSet::new();
        for step in &mut self.steps {
            match step.redo(map) {
                Ok(c) => out.merge(&c),
                Err(e) => out.failures.push(failure(&self.name, StepAction::Redo, &e)),
            }
        }
        out
    }
}

fn failure(name: &str, action: StepAction, e: &EditError) -> StepFailure {
    StepFailure { entry: name.to_owned(), action, reason: e.to_string() }
}

impl fmt::Display for MapEdit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

impl undo::Edit for MapEdit {
    type Target = Map;
    type Output = ChangeSet;

    /// The first call returns the change set of the application [`apply`] made; any later call
    /// performs the steps again (as [`redo`](undo::Edit::redo)).
    fn edit(&mut self, target: &mut Map) -> ChangeSet {
        match self.pending.take() {
            Some(c) => c,
            None => self.redo_steps(target),
        }
    }

    fn undo(&mut self, target: &mut Map) -> ChangeSet {
        self.pending = None;
        self.undo_steps(target)
    }

    fn redo(&mut self, target: &mut Map) -> ChangeSet {
        self.pending = None;
        self.redo_steps(target)
    }

    /// Merges consecutive entries of the same stroke; an object or record changed repeatedly in
    /// a stroke (a drag) keeps one step with its first old and last new value. A one-step entry
    /// whose value ends up where it started (a drag brought back, or cancelled with Esc by
    /// re-applying the start value) is annulled: it leaves no undo entry.
    fn merge(&mut self, mut other: Self) -> Merged<Self> {
        if self.stroke.is_none() || self.stroke != other.stroke {
            return Merged::No(other);
        }
        if other.steps.len() == 1
            && let Some(last) = self.steps.last_mut()
        {
            let step = other.steps.pop().expect("one step");
            match last.absorb(step) {
                None if self.steps.len() == 1 && self.steps[0].is_noop() => return Merged::Annul,
                None => return Merged::Yes,
                Some(step) => other.steps.push(step),
            }
        }
        self.steps.append(&mut other.steps);
        Merged::Yes
    }
}

/// Checks and performs `edit` on `map`, then pushes it onto `record` as a new undo entry.
///
/// A refused edit returns the error with `map` and `record` untouched; an edit that changes
/// nothing returns an empty [`ChangeSet`] and pushes nothing.
pub fn apply(record: &mut Record<MapEdit>, map: &mut Map, edit: Edit) -> Result<ChangeSet, EditError> {
    apply_in_stroke(record, map, edit, None)
}

/// [`apply`] as part of a stroke: merged into the previous entry if that entry has the same
/// stroke id (and the record is not at its saved point).
pub fn apply_in_stroke(
    record: &mut Record<MapEdit>,
    map: &mut Map,
    edit: Edit,
    stroke: Option<StrokeId>,
) -> Result<ChangeSet, EditError> {
    apply_named(record, map, edit, stroke, None)
}

/// [`apply_in_stroke`] naming a new entry `name` (what the user did: "Paste 4 cubes") instead
/// of describing `edit`; an edit merged into its stroke's entry keeps that entry's name.
pub fn apply_named(
    record: &mut Record<MapEdit>,
    map: &mut Map,
    edit: Edit,
    stroke: Option<StrokeId>,
    name: Option<&str>,
) -> Result<ChangeSet, EditError> {
    let name = name.map_or_else(|| describe(map, &edit), str::to_owned);
    let Some((step, changes)) = Step::perform(map, edit)? else {
        return Ok(ChangeSet::new());
    };
    let entry = MapEdit { name, stroke, steps: vec![step], pending: Some(changes) };
    Ok(record.edit(map, entry))
}
