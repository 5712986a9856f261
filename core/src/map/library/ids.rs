//! Ids of library records and level objects.
//!
//! [`MaterialId`], [`PhysicsId`] and [`SoundId`] are the octree's ids from `map::ids`, re-exported;
//! the other ids belong to this module.
//!
//! Ids are handed out by a [`Table`](super::Table) counter that only grows (see its docs), so an id
//! names the same record for the whole life of a project, across saves, unless the id space of its
//! kind is exhausted.

use std::fmt;
use std::hash::Hash;

use serde::{Deserialize, Serialize};

use super::error::ItemKind;

/// An id usable as a [`Table`](super::Table) key.
pub trait TableId: 'static + Copy + Ord + Eq + Hash + fmt::Debug + fmt::Display {
    /// What this id names, for messages.
    const KIND: ItemKind;
    /// The largest raw id a table hands out.
    const MAX: u32;
    /// The id with this raw value. `raw` must be at most [`Self::MAX`].
    fn from_raw(raw: u32) -> Self;
    /// The raw value.
    fn raw(self) -> u32;
}

/// Implements [`TableId`] and `Display` for an id type.
macro_rules! table_id {
    ($name:ident($raw:ty) = $kind:ident, max $max:expr) => {
        impl TableId for $name {
            const KIND: ItemKind = ItemKind::$kind;
            const MAX: u32 = $max;
            fn from_raw(raw: u32) -> Self {
                Self(raw as $raw)
            }
            fn raw(self) -> u32 {
                u32::from(self.0)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "#{}", self.0)
            }
        }
    };
}

macro_rules! ids {
    ($( $(#[$m:meta])* $name:ident($raw:ty) = $kind:ident, max $max:expr; )*) => {$(
        $(#[$m])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
        )]
        #[serde(transparent)]
        pub struct $name(pub $raw);

        table_id!($name($raw) = $kind, max $max);
    )*};
}

pub use crate::map::ids::{MaterialId, PhysicsId, SoundId};

// At most 65 535 of each (PMF's `u16` counts), so raw ids stop at 65 534.
table_id!(MaterialId(u16) = Material, max u16::MAX as u32 - 1);
table_id!(PhysicsId(u16) = PhysicsMaterial, max u16::MAX as u32 - 1);
table_id!(SoundId(u16) = SoundMaterial, max u16::MAX as u32 - 1);

ids! {
    /// A [`SoundEnvironment`](super::SoundEnvironment).
    SoundEnvId(u16) = SoundEnvironment, max u16::MAX as u32;
    /// A [`WeatherEnvironment`](super::WeatherEnvironment).
    WeatherEnvId(u16) = WeatherEnvironment, max u16::MAX as u32;
    /// A [`SkyEnvironment`](super::SkyEnvironment).
    SkyEnvId(u16) = SkyEnvironment, max u16::MAX as u32;
    /// A [`GravityEnvironment`](super::GravityEnvironment).
    GravityEnvId(u16) = GravityEnvironment, max u16::MAX as u32;
    /// A [`Light`](super::Light) of a level.
    LightId(u32) = Light, max u32::MAX - 1;
    /// A [`MapEntity`](super::MapEntity) of a level.
    EntityId(u32) = Entity, max u32::MAX - 1;
    /// An [`EnvironmentRegion`](super::EnvironmentRegion) of a level.
    RegionId(u32) = EnvironmentRegion, max u32::MAX - 1;
    /// A [`LoadRegion`](super::LoadRegion) of a level.
    LoadRegionId(u32) = LoadRegion, max u32::MAX - 1;
}
