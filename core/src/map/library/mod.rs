//! The map's libraries and a level's objects.
//!
//! - [`Library`] (map-wide): materials, physics materials, sound materials and the four kinds of
//!   environments. Names are unique per kind; references between records (a material's default
//!   physics and sound materials, a sky's materials) are always valid: every change is checked,
//!   and a record in use can only be removed with a replacement. The default environments and the
//!   air physics material are level settings (PMF has them per level): they live in
//!   [`Level`](crate::map::Level), and [`Map`](crate::map::Map)'s removal wrappers count them as
//!   uses.
//! - [`LevelObjects`] (per level): lights, entities, environment regions and load regions, with
//!   [`LevelObjects::validate`] listing dangling references and clashes as [`Problem`]s.
//!
//! Usage that lives outside this module (cubes in the octree, regions in each level) is passed in
//! as a closure, and removals return a [`Remap`] that the caller applies there.
//!
//! Ids: see [`table`] (stable, never reused). Records are changed as whole values
//! ([`Library::replace`], [`Library::modify`]) so that an undo step is "old value, new value".

mod entity;
mod environment;
mod error;
pub mod ids;
mod kinds;
mod light;
mod material;
mod region;
mod scene;
mod store;
pub mod table;
mod validate;

#[cfg(test)]
mod tests;

pub use self::entity::{EntityScope, LightSwitchRef, MapEntity};
pub use self::environment::{
    EnvKind, EnvRef, Environment, EnvironmentDefaults, GravityEnvironment, SkyEnvironment, SkySlot, SoundEnvironment,
    WeatherEnvironment,
};
pub use self::error::{ItemKind, LibraryError, LibraryResult};
pub use self::ids::{
    EntityId, GravityEnvId, LightId, LoadRegionId, MaterialId, PhysicsId, RegionId, SkyEnvId, SoundEnvId, SoundId,
    TableId, WeatherEnvId,
};
pub use self::light::{Light, LightMode, LightShape, RealtimeLight, SwitchKind};
pub use self::material::{Material, PhysicsMaterial, RenderMode, SoundMaterial, Wave};
pub use self::region::{BOX_CORNER_SIGNS, EnvironmentRegion, LoadRegion};
pub use self::scene::{LevelObjects, SceneId, SceneItem, cross_level_global_ids};
pub use self::store::{Library, LibraryId, LibraryItem, Referrer, Remap, Removed, RemovedEnvironment};
pub use self::table::{Named, Table, unique_name};
pub use self::validate::{Problem, Severity};
