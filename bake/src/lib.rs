//! `pmfedit-bake`: the map compiler and the `pmfc` command line.

pub mod inspect;
pub mod path;
pub mod vis;
