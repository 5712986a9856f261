//! [`EditError`]: why an edit was refused.

use crate::map::level::LevelError;
use crate::map::library::{ItemKind, LibraryError};
use crate::map::lighting::LightingError;
use crate::map::path_sets::PathSetError;
use crate::map::{MapError, MetaError};

/// Why an edit was refused. Nothing changed and no undo entry was made.
///
/// What the map itself refuses (no such level, the last level, a cube operation, a library or
/// object operation, the metadata) is reported as the map reports it, in [`EditError::Map`];
/// the other variants are refusals only an edit can meet.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EditError {
    /// The map refused the operation.
    #[error(transparent)]
    Map(#[from] MapError),
    /// A reference and a value (or a replacement) are of different kinds.
    #[error("a {expected} cannot be replaced by a {found}")]
    KindMismatch { expected: ItemKind, found: ItemKind },
    /// Sun, sky or bounce settings out of range ([`LevelLighting::validate`]).
    ///
    /// [`LevelLighting::validate`]: crate::map::lighting::LevelLighting::validate
    #[error(transparent)]
    Lighting(#[from] LightingError),
    /// A move of an object that has no position.
    #[error("{0} has no position to move")]
    NoPosition(String),
    /// The path attribute sets are invalid.
    #[error(transparent)]
    PathSets(#[from] PathSetError),
}

/// The map errors' own sources convert through [`MapError`], so that `?` works on every
/// operation an edit performs.
macro_rules! via_map_error {
    ($($e:ty),*) => {$(
        impl From<$e> for EditError {
            fn from(e: $e) -> Self {
                Self::Map(MapError::from(e))
            }
        }
    )*};
}

via_map_error!(LevelError, LibraryError, MetaError);
