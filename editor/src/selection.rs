//! What is selected ([`Selection`]): plain data that commands carry and the editor state keeps.

use glam::IVec3;

use pmfedit_core::map::coords::CubeAddr;
use pmfedit_core::map::library::{EntityId, LightId, LoadRegionId, RegionId};

/// What is selected.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Selection {
    #[default]
    None,
    /// A box of cubes (level lattice, max exclusive).
    Cubes {
        level: usize,
        min: IVec3,
        max: IVec3,
    },
    Cube {
        level: usize,
        addr: CubeAddr,
    },
    Light {
        level: usize,
        id: LightId,
    },
    Entity {
        level: usize,
        id: EntityId,
    },
    Region {
        level: usize,
        id: RegionId,
    },
    LoadRegion {
        level: usize,
        id: LoadRegionId,
    },
}
