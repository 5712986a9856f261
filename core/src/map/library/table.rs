//! [`Table`]: records keyed by stable ids, and the unique-name helper.
//!
//! ## Id design
//! A table is a `BTreeMap<Id, T>` plus a `next_id` counter that only grows. Adding takes
//! `next_id` and bumps it; removing never lowers it, so an id is **never reused** within a
//! project: the counter is saved with the table, and undo re-inserts a removed record under its
//! old id ([`Library::restore`](super::Library::restore)). Only when the counter has passed the
//! kind's largest id (65 534 adds of materials, say) does the table fall back to the smallest free
//! id. A map keyed by id was chosen over a slot vector with tombstones because iteration is in id
//! order (deterministic export, docs/spec/PMF-NOTES.md X1), there are no tombstones to skip or persist, and it
//! serialises as a plain map.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};

use super::ids::TableId;

/// Something with a name.
pub trait Named {
    /// The name.
    fn name(&self) -> &str;
    /// Sets the name.
    fn set_name(&mut self, name: String);
}

/// Implements [`Named`] for record types with a `name: String` field.
macro_rules! named {
    ($($ty:ty),*) => {$(
        impl $crate::map::library::table::Named for $ty {
            fn name(&self) -> &str {
                &self.name
            }
            fn set_name(&mut self, name: String) {
                self.name = name;
            }
        }
    )*};
}
pub(super) use named;

/// Records keyed by stable ids, iterated in id order. Read access is public; changes go through
/// [`Library`](super::Library) or [`LevelObjects`](super::LevelObjects), which keep names and
/// references valid.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Table<I, T> {
    items: BTreeMap<I, T>,
    /// The raw id the next added record gets. Greater than every id in `items` (unless the id
    /// space has been exhausted once).
    next_id: u32,
}

impl<I, T> Default for Table<I, T> {
    fn default() -> Self {
        Self { items: BTreeMap::new(), next_id: 0 }
    }
}

impl<'de, I: TableId + Deserialize<'de>, T: Deserialize<'de>> Deserialize<'de> for Table<I, T> {
    /// Accepts a missing or too small `next_id` (raised past the largest id) and refuses ids above
    /// the kind's maximum.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(bound(deserialize = "I: TableId + Deserialize<'de>, T: Deserialize<'de>"))]
        struct Repr<I, T> {
            #[serde(default = "BTreeMap::new")]
            items: BTreeMap<I, T>,
            #[serde(default)]
            next_id: u32,
        }
        let Repr { items, next_id } = Repr::<I, T>::deserialize(d)?;
        if let Some((&last, _)) = items.last_key_value()
            && last.raw() > I::MAX
        {
            return Err(serde::de::Error::custom(format!(
                "{} id {} is above the largest id {}",
                I::KIND,
                last.raw(),
                I::MAX
            )));
        }
        let floor = items.last_key_value().map_or(0, |(k, _)| k.raw().saturating_add(1));
        Ok(Self { items, next_id: next_id.max(floor) })
    }
}

impl<I: TableId, T> Table<I, T> {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether there are no records.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The record with this id.
    pub fn get(&self, id: I) -> Option<&T> {
        self.items.get(&id)
    }

    /// Whether a record has this id.
    pub fn contains(&self, id: I) -> bool {
        self.items.contains_key(&id)
    }

    /// Records in id order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (I, &T)> + ExactSizeIterator + '_ {
        self.items.iter().map(|(&id, t)| (id, t))
    }

    /// Ids in order.
    pub fn ids(&self) -> impl DoubleEndedIterator<Item = I> + ExactSizeIterator + '_ {
        self.items.keys().copied()
    }

    /// The raw id the next added record will get (before exhaustion).
    pub fn next_id(&self) -> u32 {
        self.next_id
    }

    /// The id the next [`insert_new`](Self::insert_new) would use.
    fn peek_id(&self) -> Option<I> {
        if self.next_id <= I::MAX {
            return Some(I::from_raw(self.next_id));
        }
        (0..=I::MAX).map(I::from_raw).find(|id| !self.items.contains_key(id))
    }

    /// Adds `item` under a fresh id; `None` when every id of the kind is taken.
    pub(super) fn insert_new(&mut self, item: T) -> Option<I> {
        let id = self.peek_id()?;
        if self.next_id <= I::MAX {
            self.next_id += 1;
        }
        self.items.insert(id, item);
        Some(id)
    }

    /// Puts `item` under `id` (undo of a removal), returning what was there.
    pub(super) fn insert_at(&mut self, id: I, item: T) -> Option<T> {
        self.next_id = self.next_id.max(id.raw().saturating_add(1));
        self.items.insert(id, item)
    }

    /// Removes and returns the record.
    pub(super) fn remove(&mut self, id: I) -> Option<T> {
        self.items.remove(&id)
    }

    /// The record, mutably.
    pub(super) fn get_mut(&mut self, id: I) -> Option<&mut T> {
        self.items.get_mut(&id)
    }

    /// All records, mutably, in id order.
    pub(super) fn iter_mut(&mut self) -> impl Iterator<Item = (I, &mut T)> + '_ {
        self.items.iter_mut().map(|(&id, t)| (id, t))
    }
}

impl<I: TableId, T: Named> Table<I, T> {
    /// The first record (in id order) with exactly this name. Names are compared byte for byte,
    /// as the engine compares them.
    pub fn by_name(&self, name: &str) -> Option<(I, &T)> {
        self.iter().find(|(_, t)| t.name() == name)
    }

    /// The id of the first record with exactly this name.
    pub fn id_of(&self, name: &str) -> Option<I> {
        self.by_name(name).map(|(id, _)| id)
    }

    /// Whether a record other than `except` has this name.
    pub fn name_taken(&self, name: &str, except: Option<I>) -> bool {
        self.iter().any(|(id, t)| Some(id) != except && t.name() == name)
    }

    /// `base` if no record has it, else `base 2`, `base 3`, … (see [`unique_name`]).
    pub fn unique_name(&self, base: &str) -> String {
        unique_name(base, |n| self.name_taken(n, None))
    }
}

/// `base` if `taken(base)` is false, else the first free `stem N` for N = 2, 3, …, where `stem`
/// is `base` without a trailing ` N` (so duplicating `"stone 2"` gives `"stone 3"`, not
/// `"stone 2 2"`).
pub fn unique_name(base: &str, taken: impl Fn(&str) -> bool) -> String {
    if !taken(base) {
        return base.to_owned();
    }
    let (stem, start) = split_number_suffix(base);
    (start.max(2)..)
        .map(|n| format!("{stem} {n}"))
        .find(|candidate| !taken(candidate))
        .expect("there is always a free number")
}

/// `"stone 12"` → `("stone", 12)`; `"stone"` → `("stone", 2)`.
fn split_number_suffix(name: &str) -> (&str, u64) {
    if let Some((stem, digits)) = name.rsplit_once(' ')
        && !stem.is_empty()
        && !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && !digits.starts_with('0')
        && let Ok(n) = digits.parse::<u64>()
    {
        return (stem, n.saturating_add(1));
    }
    (name, 2)
}
