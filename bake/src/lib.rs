//! `pmfedit-bake`: the map compiler and the `pmfc` command line.

pub mod inspect;
pub mod light;
