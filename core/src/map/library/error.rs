//! Errors of library and level-object operations, and the field checks shared by every record.

use std::fmt;

/// The kinds of records this module keeps, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ItemKind {
    /// [`Material`](super::Material).
    Material,
    /// [`PhysicsMaterial`](super::PhysicsMaterial).
    PhysicsMaterial,
    /// [`SoundMaterial`](super::SoundMaterial).
    SoundMaterial,
    /// [`SoundEnvironment`](super::SoundEnvironment).
    SoundEnvironment,
    /// [`WeatherEnvironment`](super::WeatherEnvironment).
    WeatherEnvironment,
    /// [`SkyEnvironment`](super::SkyEnvironment).
    SkyEnvironment,
    /// [`GravityEnvironment`](super::GravityEnvironment).
    GravityEnvironment,
    /// [`Light`](super::Light).
    Light,
    /// [`MapEntity`](super::MapEntity).
    Entity,
    /// [`EnvironmentRegion`](super::EnvironmentRegion).
    EnvironmentRegion,
    /// [`LoadRegion`](super::LoadRegion).
    LoadRegion,
}

impl ItemKind {
    /// Lower-case name, e.g. `"physics material"`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Material => "material",
            Self::PhysicsMaterial => "physics material",
            Self::SoundMaterial => "sound material",
            Self::SoundEnvironment => "sound environment",
            Self::WeatherEnvironment => "weather environment",
            Self::SkyEnvironment => "sky environment",
            Self::GravityEnvironment => "gravity environment",
            Self::Light => "light",
            Self::Entity => "entity",
            Self::EnvironmentRegion => "environment region",
            Self::LoadRegion => "load region",
        }
    }
}

impl fmt::Display for ItemKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a library or level-object operation was refused. The map is unchanged when one is returned.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LibraryError {
    /// No record of this kind has this id.
    #[error("there is no {kind} with id #{id}")]
    NotFound {
        /// Kind looked up.
        kind: ItemKind,
        /// Raw id.
        id: u32,
    },
    /// Library records need a name.
    #[error("a {kind} needs a name")]
    EmptyName {
        /// Kind of the record.
        kind: ItemKind,
    },
    /// Another record of the same kind has this name.
    #[error("there is already a {kind} named {name:?}")]
    DuplicateName {
        /// Kind of the record.
        kind: ItemKind,
        /// The name asked for.
        name: String,
    },
    /// A text field holds a NUL character, which PMF strings (NUL-terminated) cannot carry.
    #[error("{kind} {name:?}: {field} contains a NUL character, which a PMF string cannot hold")]
    Nul {
        /// Kind of the record.
        kind: ItemKind,
        /// Name of the record (may itself be the culprit).
        name: String,
        /// Field holding the NUL.
        field: &'static str,
    },
    /// A number field is NaN or infinite.
    #[error("{kind} {name:?}: {field} must be a finite number, not {value}")]
    NotFinite {
        /// Kind of the record.
        kind: ItemKind,
        /// Name of the record.
        name: String,
        /// Field holding the value.
        field: &'static str,
        /// The value.
        value: f32,
    },
    /// A field is outside what PMF or the record's meaning allows.
    #[error("{kind} {name:?}: {field} {problem}")]
    OutOfRange {
        /// Kind of the record.
        kind: ItemKind,
        /// Name of the record.
        name: String,
        /// Field.
        field: &'static str,
        /// What is wrong, e.g. `"has 300 entries; at most 255"`.
        problem: String,
    },
    /// A field refers to a record that does not exist.
    #[error("{kind} {name:?}: {field} refers to {target_kind} #{target}, which does not exist")]
    Dangling {
        /// Kind of the referring record.
        kind: ItemKind,
        /// Name of the referring record.
        name: String,
        /// Referring field.
        field: &'static str,
        /// Kind of the missing record.
        target_kind: ItemKind,
        /// Raw id of the missing record.
        target: u32,
    },
    /// The record is in use and no replacement was given to remove it.
    #[error("{kind} {name:?} is used by {}; choose a replacement to remove it", list(.users))]
    InUse {
        /// Kind of the record.
        kind: ItemKind,
        /// Name of the record.
        name: String,
        /// Who uses it, in words (`material "stone"`, `cubes in the levels`, …).
        users: Vec<String>,
    },
    /// The replacement given to a removal cannot be used.
    #[error("cannot replace {kind} {name:?}: {reason}")]
    BadReplacement {
        /// Kind of the record being removed.
        kind: ItemKind,
        /// Name of the record being removed.
        name: String,
        /// Why, e.g. `"the replacement is the record itself"`.
        reason: String,
    },
    /// The kind already holds as many records as PMF (or the id space) allows.
    #[error("cannot add another {kind}: a map holds at most {max}")]
    Full {
        /// Kind of the record.
        kind: ItemKind,
        /// The limit.
        max: usize,
    },
    /// [`restore`](super::Library::restore) was given an id that is taken.
    #[error("{kind} id #{id} is already in use")]
    IdTaken {
        /// Kind of the record.
        kind: ItemKind,
        /// Raw id.
        id: u32,
    },
}

/// `a`, `a and b`, `a, b and c`.
fn list(items: &[String]) -> String {
    match items {
        [] => "nothing".to_owned(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// Result of this module's operations.
pub type LibraryResult<T> = Result<T, LibraryError>;

/// Field checks of one record, naming the record in errors.
pub(super) struct Checker<'a> {
    pub kind: ItemKind,
    pub name: &'a str,
}

impl Checker<'_> {
    /// `value` is finite.
    pub fn finite(&self, field: &'static str, value: f32) -> LibraryResult<()> {
        if value.is_finite() {
            Ok(())
        } else {
            Err(LibraryError::NotFinite { kind: self.kind, name: self.name.to_owned(), field, value })
        }
    }

    /// Every value is finite.
    pub fn all_finite(&self, field: &'static str, values: &[f32]) -> LibraryResult<()> {
        values.iter().try_for_each(|&v| self.finite(field, v))
    }

    /// `value` is finite and not negative.
    pub fn non_negative(&self, field: &'static str, value: f32) -> LibraryResult<()> {
        self.finite(field, value)?;
        if value < 0.0 {
            return Err(self.range(field, format!("is {value}; it cannot be negative")));
        }
        Ok(())
    }

    /// `text` holds no NUL.
    pub fn text(&self, field: &'static str, text: &str) -> LibraryResult<()> {
        if text.contains('\0') {
            Err(LibraryError::Nul { kind: self.kind, name: self.name.to_owned(), field })
        } else {
            Ok(())
        }
    }

    /// An [`LibraryError::OutOfRange`] for this record.
    pub fn range(&self, field: &'static str, problem: String) -> LibraryError {
        LibraryError::OutOfRange { kind: self.kind, name: self.name.to_owned(), field, problem }
    }
}
