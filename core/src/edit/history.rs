//! [`History`]: the undo façade the editor uses.

use undo::Record;

use super::apply::{MapEdit, StrokeId, apply_named};
use super::change::ChangeSet;
use super::error::EditError;
use super::ops::Edit;
use crate::map::Map;

/// One undo step as the history panel shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryEntry<'a> {
    /// Position: undoing down to `index` leaves this entry undone; [`History::go_to`]`(index + 1)`
    /// makes it the last applied one.
    pub index: usize,
    /// Human-readable name.
    pub name: &'a str,
    /// Whether the entry is applied (at or before the head).
    pub applied: bool,
    /// Number of merged operations (a brush stroke has many).
    pub steps: usize,
    /// Bytes held by its cube backups.
    pub backup_bytes: usize,
}

/// A linear undo history of a [`Map`] ([`undo::Record`] of [`MapEdit`]s) with brush strokes
/// and a saved marker. Every method that changes the map returns the [`ChangeSet`] of what it
/// changed.
///
/// ```
/// # use pmfedit_core::edit::{History, Edit, CubeOp};
/// # use pmfedit_core::map::{Map, coords::LatticeBox, octree::Cube, ids::*};
/// # use glam::IVec3;
/// let mut map = Map::new("demo");
/// let mut history = History::new();
/// let stone = Cube::solid(MaterialId(0), PhysicsId(0), SoundId(0));
/// let region = LatticeBox::new(IVec3::ZERO, IVec3::splat(32));
/// let changed = history.apply(&mut map, Edit::Cubes { level: 0, op: CubeOp::FillBox { region, cube: stone } })?;
/// assert_eq!(changed.chunk_count(), 1);
/// assert_eq!(history.undo_name(), Some("Fill box 4×4×4"));
/// let undone = history.undo(&mut map).unwrap();
/// assert_eq!(undone.chunk_count(), 1);
/// # Ok::<(), pmfedit_core::edit::EditError>(())
/// ```
#[derive(Debug)]
pub struct History {
    record: Record<MapEdit>,
    stroke: Option<StrokeId>,
    /// The open stroke's entry name ([`History::begin_named_stroke`]).
    stroke_name: Option<String>,
    next_stroke: u64,
}

impl Default for History {
    fn default() -> Self {
        Self::new()
    }
}

impl History {
    /// An empty history without a limit, marked saved.
    pub fn new() -> Self {
        Self { record: Record::new(), stroke: None, stroke_name: None, next_stroke: 0 }
    }

    /// An empty history keeping at most `limit` steps (older ones are dropped).
    pub fn with_limit(limit: usize) -> Self {
        Self { record: Record::builder().limit(limit.max(1)).build(), stroke: None, stroke_name: None, next_stroke: 0 }
    }

    /// The underlying record.
    pub fn record(&self) -> &Record<MapEdit> {
        &self.record
    }

    /// Checks and performs `edit`, then records it (merged into the current stroke's entry if a
    /// stroke is open). A refused edit changes nothing and records nothing; an edit that changes
    /// nothing records nothing.
    pub fn apply(&mut self, map: &mut Map, edit: Edit) -> Result<ChangeSet, EditError> {
        apply_named(&mut self.record, map, edit, self.stroke, self.stroke_name.as_deref())
    }

    /// Starts a stroke (mouse down): edits applied until [`end_stroke`](Self::end_stroke) form
    /// one undo step. Ends any open stroke first.
    pub fn begin_stroke(&mut self) -> StrokeId {
        let id = StrokeId(self.next_stroke);
        self.next_stroke += 1;
        self.stroke = Some(id);
        self.stroke_name = None;
        id
    }

    /// [`begin_stroke`](Self::begin_stroke) whose step is named `name` (what the user did:
    /// "Paste 4 cubes", "Fill 12 faces") instead of after its first edit.
    pub fn begin_named_stroke(&mut self, name: impl Into<String>) -> StrokeId {
        let id = self.begin_stroke();
        self.stroke_name = Some(name.into());
        id
    }

    /// Ends the open stroke (mouse up); the next edit starts a new step.
    pub fn end_stroke(&mut self) {
        self.stroke = None;
        self.stroke_name = None;
    }

    /// Cancels the open stroke (Esc during a drag): the step its edits made so far is undone and
    /// the stroke ends, so nothing of it stays applied (the step is left to redo, as any undone
    /// step). Empty when no stroke is open or it recorded nothing.
    pub fn cancel_stroke(&mut self, map: &mut Map) -> ChangeSet {
        let Some(id) = self.stroke.take() else { return ChangeSet::new() };
        let head = self.record.head();
        let ours = head > 0 && self.record.get_entry(head - 1).is_some_and(|e| e.as_ref().stroke() == Some(id));
        if !ours {
            return ChangeSet::new();
        }
        self.record.undo(map).unwrap_or_default()
    }

    /// The open stroke.
    pub fn current_stroke(&self) -> Option<StrokeId> {
        self.stroke
    }

    /// Undoes the last applied step (ending any open stroke). `None` if there is none.
    pub fn undo(&mut self, map: &mut Map) -> Option<ChangeSet> {
        self.end_stroke();
        self.record.undo(map)
    }

    /// Redoes the next undone step (ending any open stroke). `None` if there is none.
    pub fn redo(&mut self, map: &mut Map) -> Option<ChangeSet> {
        self.end_stroke();
        self.record.redo(map)
    }

    /// Undoes or redoes until `head` steps are applied (0: none); the union of what changed.
    /// Out of range: nothing happens.
    pub fn go_to(&mut self, map: &mut Map, head: usize) -> ChangeSet {
        self.end_stroke();
        ChangeSet::merged(&self.record.go_to(map, head))
    }

    /// Goes back to the saved state, if it is still in the history.
    pub fn revert_to_saved(&mut self, map: &mut Map) -> ChangeSet {
        self.end_stroke();
        ChangeSet::merged(&self.record.revert(map))
    }

    /// Whether there is a step to undo.
    pub fn can_undo(&self) -> bool {
        self.record.can_undo()
    }

    /// Whether there is a step to redo.
    pub fn can_redo(&self) -> bool {
        self.record.can_redo()
    }

    /// Whether the map is as it was last saved.
    pub fn is_saved(&self) -> bool {
        self.record.is_saved()
    }

    /// Marks the current state as saved (after writing the project). Ends any open stroke, so
    /// that the next edit does not merge into a saved step.
    pub fn set_saved(&mut self) {
        self.end_stroke();
        self.record.set_saved();
    }

    /// Forgets the saved state (e.g. the file was deleted).
    pub fn clear_saved(&mut self) {
        self.record.clear_saved();
    }

    /// Number of applied steps.
    pub fn head(&self) -> usize {
        self.record.head()
    }

    /// Number of steps, applied or undone.
    pub fn len(&self) -> usize {
        self.record.len()
    }

    /// Whether there are no steps.
    pub fn is_empty(&self) -> bool {
        self.record.is_empty()
    }

    /// Name of the step [`undo`](Self::undo) would undo.
    pub fn undo_name(&self) -> Option<&str> {
        self.record.head().checked_sub(1).and_then(|i| self.record.get_entry(i)).map(|e| e.as_ref().name())
    }

    /// Name of the step [`redo`](Self::redo) would redo.
    pub fn redo_name(&self) -> Option<&str> {
        self.record.get_entry(self.record.head()).map(|e| e.as_ref().name())
    }

    /// Every step, oldest first.
    pub fn entries(&self) -> impl Iterator<Item = HistoryEntry<'_>> + '_ {
        let head = self.record.head();
        self.record.entries().enumerate().map(move |(index, e)| {
            let e = e.as_ref();
            HistoryEntry {
                index,
                name: e.name(),
                applied: index < head,
                steps: e.step_count(),
                backup_bytes: e.backup_bytes(),
            }
        })
    }

    /// The entry at `index`.
    pub fn entry(&self, index: usize) -> Option<&MapEdit> {
        self.record.get_entry(index).map(AsRef::as_ref)
    }

    /// Bytes held by the cube backups of every step.
    pub fn backup_bytes(&self) -> usize {
        self.record.entries().map(|e| e.as_ref().backup_bytes()).sum()
    }

    /// Drops every step (e.g. after loading another map); the current state counts as saved.
    pub fn clear(&mut self) {
        self.end_stroke();
        self.record.clear();
        self.record.set_saved();
    }
}
