//! `pmfedit-core`: the editable map model and the PlatinumSrc file formats.
//!
//! No GUI and no threads live here (see `ARCHITECTURE.md`).

pub mod edit;
pub mod format;
pub mod fuzzing;
pub mod import;
pub mod map;
pub mod project;
pub mod sample;
