//! Sample maps: [`demo`], the small hand-built map the editor opens by default (and tests and
//! benchmarks use), [`terrain`], a scalable procedural landscape for benchmarks, [`indoor`], a
//! multi-storey building of rooms and corridors (where most of the level is hidden from most
//! places: the visibility benchmark), and [`empty`], what a new map is. Every one takes its
//! materials from the [`starter_library`], the one definition of the starter palette.
//!
//! All are deterministic: no clock, no thread, no `rand`; the randomness of [`terrain`] and
//! [`indoor`] is a hand-written SplitMix64 stream and hash-based value noise ([`noise`]), seeded
//! by their `seed`.
//!
//! The landscapes build through the public edit API ([`Level::fill_box`], [`Level::set_cube`],
//! [`Level::push_corner`], [`LevelObjects::add`](crate::map::library::LevelObjects::add), …),
//! whole boxes at a time, never cube by cube.

mod demo;
mod indoor;
pub mod noise;
mod palette;
mod site;
mod starter;
mod terrain;

#[cfg(test)]
mod tests;

pub use self::demo::{demo, landmarks};
pub use self::indoor::{INDOOR_CHUNKS, indoor};
pub use self::starter::{empty, starter_library};
pub use self::terrain::{TERRAIN_CHUNK_SIZE_LOG2, terrain};
use crate::map::Level;

/// The number of solid minimum-size cells (lattice cells, 1/8 map unit on a side) of a level:
/// the summed volume of its solid leaves, in minimum-cube units. A cube with pushed corners
/// counts as its whole cell volume.
pub fn solid_cells(level: &Level) -> u64 {
    level.leaves().filter(|(_, _, c)| c.is_solid()).map(|(_, a, _)| 1u64 << (3 * u32::from(a.size_log2))).sum()
}
