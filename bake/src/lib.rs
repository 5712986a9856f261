//! `pmfedit-bake`: the map compiler and the `pmfc` command line.

pub mod cache;
pub mod chunk;
pub mod compile;
pub mod deps;
pub mod digest;
pub mod export;
pub mod file_merge;
pub mod inspect;
pub mod jobs;
pub mod layout;
pub mod light;
pub mod memory;
pub mod mesh;
pub mod path;
pub mod rebuild;
pub mod resources;
pub mod scheduler;
pub mod sizes;
pub mod vis;

pub use layout::BakeSettings;
