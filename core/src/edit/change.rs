//! [`ChangeSet`]: what an edit, undo or redo changed, for the bake scheduler and the panels.

use std::collections::{BTreeMap, BTreeSet};

use super::ops::{LibRef, ObjRef};
use crate::map::level::ChunkChanges;

/// What changed in one level.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LevelChanges {
    /// Per chunk, the chunk-local lattice box of the cubes whose content changed (merged over
    /// every operation of the step).
    pub chunks: ChunkChanges,
    /// Objects added, changed or removed. A light's old range is in the snapshot the scheduler
    /// baked from; its new range in the map.
    pub objects: BTreeSet<ObjRef>,
    /// Whether a level setting changed (flags, default environments, air physics, center chunk,
    /// chunk size, name, sun, sky and bounce).
    pub settings: bool,
}

impl LevelChanges {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty() && self.objects.is_empty() && !self.settings
    }

    /// Adds everything `other` changed.
    pub fn merge(&mut self, other: &LevelChanges) {
        self.chunks.merge(&other.chunks);
        self.objects.extend(other.objects.iter().copied());
        self.settings |= other.settings;
    }
}

/// What an edit, undo or redo changed in a [`Map`](crate::map::Map).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangeSet {
    /// Per level index, what changed there (levels with no change are absent).
    pub levels: BTreeMap<usize, LevelChanges>,
    /// Library records added, changed or removed (including records re-pointed by a removal).
    /// A changed material changes how every cube painted with it looks.
    pub library: BTreeSet<LibRef>,
    /// Whether the metadata changed.
    pub meta: bool,
    /// Whether the path attribute sets changed (what painted path ids export as).
    pub path_sets: bool,
    /// Whether levels were added or removed: indices in [`levels`](Self::levels) and in earlier
    /// change sets may then name other levels, so everything should be re-read.
    pub level_list: bool,
    /// Undo or redo steps that failed and were skipped (the rest of the entry went ahead). Not
    /// a change: [`is_empty`](Self::is_empty) ignores them; callers should show them.
    pub failures: Vec<StepFailure>,
}

/// Whether a step was being undone or redone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepAction {
    Undo,
    Redo,
}

impl std::fmt::Display for StepAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Undo => "undo",
            Self::Redo => "redo",
        })
    }
}

/// An undo or redo step that failed: the map was not in the state the step left it in (a bug,
/// or a change made behind the history's back). It is skipped and reported, not hidden.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{action} of {entry:?} failed: {reason}")]
pub struct StepFailure {
    /// The undo entry's name.
    pub entry: String,
    pub action: StepAction,
    /// Why the step was refused.
    pub reason: String,
}

impl ChangeSet {
    /// No change.
    pub fn new() -> Self {
        Self::default()
    }

    /// Everything may have changed (the whole map was replaced): levels, library and metadata
    /// must all be re-read.
    pub fn everything() -> Self {
        Self { meta: true, level_list: true, ..Self::default() }
    }

    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.levels.values().all(LevelChanges::is_empty)
            && self.library.is_empty()
            && !self.meta
            && !self.path_sets
            && !self.level_list
    }

    /// The changes of level `i`, created empty if missing.
    pub fn level_mut(&mut self, i: usize) -> &mut LevelChanges {
        self.levels.entry(i).or_default()
    }

    /// Records chunk changes of level `i` (nothing if empty).
    pub fn add_chunks(&mut self, i: usize, chunks: &ChunkChanges) {
        if !chunks.is_empty() {
            self.level_mut(i).chunks.merge(chunks);
        }
    }

    /// Adds everything `other` changed.
    pub fn merge(&mut self, other: &ChangeSet) {
        for (i, l) in &other.levels {
            self.level_mut(*i).merge(l);
        }
        self.library.extend(other.library.iter().copied());
        self.meta |= other.meta;
        self.path_sets |= other.path_sets;
        self.level_list |= other.level_list;
        self.failures.extend(other.failures.iter().cloned());
    }

    /// The failures in words, for the user (`None` when every step went through).
    pub fn failure_message(&self) -> Option<String> {
        let first = self.failures.first()?;
        Some(match self.failures.len() {
            1 => format!("Incomplete: {first}"),
            n => format!("Incomplete: {first} (and {} more steps failed)", n - 1),
        })
    }

    /// The union of several change sets (e.g. the outputs of a jump through the history).
    pub fn merged<'a>(sets: impl IntoIterator<Item = &'a ChangeSet>) -> ChangeSet {
        let mut out = ChangeSet::new();
        for s in sets {
            out.merge(s);
        }
        out
    }

    /// Number of chunks touched, over all levels.
    pub fn chunk_count(&self) -> usize {
        self.levels.values().map(|l| l.chunks.len()).sum()
    }
}
