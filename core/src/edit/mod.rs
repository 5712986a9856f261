//! Every change to a [`Map`] as a value, with undo and redo.
//!
//! # Model
//! - [`Edit`] is what a tool or a form asks for: a cube operation on a level, a library change,
//!   a level object change, a level setting, or the metadata. It is plain data (serialisable once
//!   every record it carries has serde) and says nothing about how to undo it.
//! - Applying an edit ([`apply`], [`History::apply`]) checks it and performs it **before** it
//!   reaches the undo record: a refused edit returns an [`EditError`], changes nothing and leaves
//!   no undo entry; an edit that changes nothing (painting a face its own material) returns an
//!   empty [`ChangeSet`] and leaves no entry either.
//! - A performed edit becomes a [`MapEdit`] (the undo entry, implementing [`undo::Edit`] with
//!   `Target = Map` and `Output = ChangeSet`). It keeps **deltas only**: a cube operation keeps
//!   the forward operation and the [`Backup`](crate::map::level::Backup) of the region it
//!   overwrote (a few subtrees about the size of the region, never whole chunks unless the region
//!   covers them); a library or object change keeps the old and new record; a removal with a
//!   replacement keeps what [`Map::remove_material`] and friends re-pointed. Undo writes the old
//!   state back; redo performs the forward operation again (the map is then exactly as it was
//!   when the edit was first made, so the same backup stays valid).
//! - **Strokes.** While the mouse is held, a tool applies each operation at once (the viewport
//!   updates) under one [`StrokeId`]; consecutive entries of the same stroke merge into one undo
//!   step ([`undo::Merged::Yes`]) whose undo restores every backup in reverse order. A new stroke
//!   id starts a new step; [`undo::Record`] skips merging at the saved point, so a save in the
//!   middle of a stroke splits it.
//! - Every apply, undo and redo returns the [`ChangeSet`] of what it changed: per level the
//!   chunks touched with the lattice box inside each, the objects and settings touched; the
//!   library records touched; whether the metadata or the list of levels changed. The bake
//!   scheduler dirties exactly that.
//!
//! [`History`] is the façade the editor uses: apply, strokes, undo/redo, jump, saved marker and
//! the list of step names ("Fill box 4×4×4", "Paint material stone", "Move light lamp 1").

mod apply;
mod change;
mod error;
mod history;
mod ops;
mod step;
#[cfg(test)]
mod tests;

pub use self::apply::{MapEdit, StrokeId, apply, apply_in_stroke, apply_named};
pub use self::change::{ChangeSet, LevelChanges, StepAction, StepFailure};
pub use self::error::EditError;
pub use self::history::{History, HistoryEntry};
pub use self::ops::{CubeOp, Edit, LibItem, LibRef, ObjItem, ObjRef, WholeMap};
