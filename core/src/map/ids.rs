//! Small `Copy` ids shared by the octree and the map-wide libraries.
//!
//! Every id is a `u16` index into a map-wide list (materials, physics materials, sound materials,
//! path attribute sets). What index 0 means is up to the list that owns it, except for
//! [`PathAttrs`], where 0 is reserved for "no attributes". At export the compiler maps these ids
//! to the per-chunk `u8` "used …" lists of PMF (docs/spec/PMF-NOTES.md M1).

use serde::{Deserialize, Serialize};

macro_rules! id_type {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub u16);

        impl $name {
            /// The raw index.
            pub const fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl From<u16> for $name {
            fn from(v: u16) -> Self {
                Self(v)
            }
        }
    };
}

id_type!(
    /// A (visual) material of the map-wide material library.
    MaterialId
);
id_type!(
    /// A physics material of the map-wide library.
    PhysicsId
);
id_type!(
    /// A sound material of the map-wide library (docs/spec/PMF-NOTES.md M2: exported by index).
    SoundId
);
id_type!(
    /// A set of pathfinding attributes carried by a leaf cube (usually air), as an index into an
    /// attribute-set list; `PathAttrs::NONE` (0) means "no attributes".
    PathAttrs
);

impl PathAttrs {
    /// No pathfinding attributes.
    pub const NONE: PathAttrs = PathAttrs(0);

    /// Whether this is [`PathAttrs::NONE`].
    pub const fn is_none(self) -> bool {
        self.0 == 0
    }
}
