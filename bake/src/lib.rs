//! `pmfedit-bake`: the map compiler and the `pmfc` command line.

pub mod chunk;
pub mod compile;
pub mod inspect;
pub mod layout;
pub mod light;
pub mod mesh;

pub use layout::BakeSettings;
