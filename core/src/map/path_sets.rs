//! Named pathfinding attribute sets (docs/spec/PMF-NOTES.md P1): what the path attribute ids
//! ([`PathAttrs`]) painted on air cubes mean.
//!
//! A set has a name and an optional facing direction; a cell painted with set `n` is exported
//! with one pathfinding attribute of that name, facing that direction (`(0, 0, 0)`: no facing).
//! Id 0 ([`PathAttrs::NONE`]) means "no attributes" and has no set.
//!
//! Projects written before sets existed painted ids without names and exported them as
//! `user_<n>`. They load unchanged (no sets) and export as they did: an id without a set exports
//! as `user_<n>` facing nowhere ([`PathSets::attribute`]). [`PathSets::name_unnamed`] turns the
//! ids in use into sets of those names, ready to be renamed (the editor's form offers it).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::map::ids::PathAttrs;

/// Longest set name, in bytes (the name is a PMF string; this keeps it readable).
pub const MAX_NAME_LEN: usize = 64;

/// One named attribute set.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PathSet {
    /// The attribute name exported for cells of this set (e.g. `guard_post`, `cover`).
    pub name: String,
    /// The direction an agent in such a cell should face; `None` exports `(0, 0, 0)`.
    pub facing: Option<[f32; 3]>,
}

impl PathSet {
    /// A set named `name` without a facing.
    pub fn new(name: impl Into<String>) -> Self {
        Self { name: name.into(), facing: None }
    }

    /// The exported direction: the facing, or `(0, 0, 0)`.
    pub fn direction(&self) -> [f32; 3] {
        self.facing.unwrap_or([0.0; 3])
    }
}

/// Why a set list was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathSetError {
    #[error("path attribute set 0 is reserved for \"no attributes\"")]
    ReservedId,
    #[error("path attribute set {0}: the name is empty")]
    EmptyName(u16),
    #[error("path attribute set {id}: the name {name:?} is longer than {MAX_NAME_LEN} bytes")]
    NameTooLong { id: u16, name: String },
    #[error("path attribute set {0}: the name contains a NUL character")]
    Nul(u16),
    #[error("path attribute set {0}: the facing is not a finite direction")]
    Facing(u16),
}

/// The map's attribute sets, by id.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PathSets(pub BTreeMap<u16, PathSet>);

impl PathSets {
    /// No sets.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether there is no set.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The set of `id`, if there is one.
    pub fn get(&self, id: PathAttrs) -> Option<&PathSet> {
        self.0.get(&id.0)
    }

    /// The attribute a cell painted with `id` exports: `(name, direction)`; none for
    /// [`PathAttrs::NONE`]. An id without a set exports as [`unnamed`](Self::unnamed), facing
    /// nowhere (what every id exported as before sets existed).
    pub fn attribute(&self, id: PathAttrs) -> Option<(String, [f32; 3])> {
        if id.is_none() {
            return None;
        }
        Some(match self.get(id) {
            Some(s) => (s.name.clone(), s.direction()),
            None => (Self::unnamed(id), [0.0; 3]),
        })
    }

    /// The name of an id that has no set: `user_<id>`.
    pub fn unnamed(id: PathAttrs) -> String {
        format!("user_{}", id.0)
    }

    /// The lowest id without a set (1 on an empty list), for a new set.
    pub fn next_id(&self) -> Option<PathAttrs> {
        (1..=u16::MAX).find(|i| !self.0.contains_key(i)).map(PathAttrs)
    }

    /// Gives every id of `used` that has no set a set named `user_<id>` (what such ids exported
    /// as before sets existed); returns how many it added.
    pub fn name_unnamed(&mut self, used: impl IntoIterator<Item = PathAttrs>) -> usize {
        let mut added = 0;
        for id in used {
            if !id.is_none() && !self.0.contains_key(&id.0) {
                self.0.insert(id.0, PathSet::new(Self::unnamed(id)));
                added += 1;
            }
        }
        added
    }

    /// Checks every set: id not 0, a name of 1 to [`MAX_NAME_LEN`] bytes without NUL, a finite
    /// facing.
    pub fn validate(&self) -> Result<(), PathSetError> {
        for (&id, s) in &self.0 {
            if id == 0 {
                return Err(PathSetError::ReservedId);
            }
            if s.name.is_empty() {
                return Err(PathSetError::EmptyName(id));
            }
            if s.name.len() > MAX_NAME_LEN {
                return Err(PathSetError::NameTooLong { id, name: s.name.clone() });
            }
            if s.name.contains('\0') {
                return Err(PathSetError::Nul(id));
            }
            if s.facing.is_some_and(|f| f.iter().any(|v| !v.is_finite())) {
                return Err(PathSetError::Facing(id));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_names_and_validation() {
        let mut sets = PathSets::new();
        assert_eq!(sets.next_id(), Some(PathAttrs(1)));
        sets.0.insert(1, PathSet { name: "guard_post".into(), facing: Some([0.0, 0.0, -1.0]) });
        sets.0.insert(3, PathSet::new("cover"));
        let attr = |id| sets.attribute(PathAttrs(id));
        assert_eq!(attr(1), Some(("guard_post".to_owned(), [0.0, 0.0, -1.0])));
        assert_eq!(attr(3), Some(("cover".to_owned(), [0.0; 3])));
        assert_eq!(attr(0), None);
        assert_eq!(attr(2), Some(("user_2".to_owned(), [0.0; 3])));
        assert_eq!(sets.next_id(), Some(PathAttrs(2)));
        assert_eq!(sets.name_unnamed([PathAttrs(0), PathAttrs(3), PathAttrs(7)]), 1);
        assert_eq!(sets.get(PathAttrs(7)), Some(&PathSet::new("user_7")));
        assert_eq!(sets.validate(), Ok(()));
        for (bad, e) in [
            (PathSet::new(""), PathSetError::EmptyName(9)),
            (PathSet::new("a\0b"), PathSetError::Nul(9)),
            (PathSet { name: "x".into(), facing: Some([f32::NAN, 0.0, 0.0]) }, PathSetError::Facing(9)),
        ] {
            let mut s = sets.clone();
            s.0.insert(9, bad);
            assert_eq!(s.validate(), Err(e));
        }
        let mut s = sets.clone();
        s.0.insert(0, PathSet::new("zero"));
        assert_eq!(s.validate(), Err(PathSetError::ReservedId));
    }
}
